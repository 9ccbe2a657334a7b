/* The HTTP/1 mux (DESIGN: "Connection layers"): one side of an HTTP/1
 * connection, client or server, turned into the message model and back.
 *
 * A stream never sees HTTP/1 wire syntax. What it exchanges with a mux,
 * one message per direction at a time, is the message model in a channel
 * buffer:
 *
 *   [head storage][payload ...]
 *
 * The head is a struct http_msg whose spans point into the head storage at
 * the start of the channel (msg->head_len bytes, at offset 0 of the buffer
 * area, where buf_realign() never moves it); the payload that follows
 * is the body without any framing (chunk sizes, extensions and the last
 * chunk are the mux's business); the end of the message is a flag of the
 * receiving mux (h1m_rx_done()); trailers are kept by the receiving mux as
 * field lines ("name: value" CRLF each) and handed to the sending one.
 *
 * Receiving: wire bytes are read into the mux's own rx buffer (what
 * follows the current message, a pipelined request or bytes a server sent
 * too early, stays there for the next one); a head is parsed there and
 * copied into the empty channel; payload is decoded into the channel.
 * Sending: a head is serialised into the tx buffer with the framing the
 * caller chose, and payload leaves the channel framed accordingly (as it
 * is for a Content-Length or a close-delimited body, sent straight from the
 * channel when nothing is waiting in tx).
 *
 * Buffers come from the thread's pool when needed and go back when empty
 * (h1m_release()), so that an idle connection holds none.
 *
 * Owner thread only; the struct conn belongs to the caller.
 */
#ifndef SLUICE_HTTP_MUX_H1_H
#define SLUICE_HTTP_MUX_H1_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sluice/core/buf.h>
#include <sluice/http/h1.h>
#include <sluice/http/msg.h>

struct conn;

/* how a body is delimited, received or sent */
enum h1m_body {
	H1M_B_NONE = 0,      /* no body, or the whole of it is done */
	H1M_B_LEN,           /* Content-Length: <left> bytes to go */
	H1M_B_CHUNKED,       /* chunked framing */
	H1M_B_CLOSE,         /* until the connection closes (responses) */
	H1M_B_TUNNEL,        /* no more HTTP: bytes through (101, CONNECT) */
};

struct h1m {
	struct conn *c;
	struct buffer rx;            /* received, not delivered yet */
	struct buffer tx;            /* to send: heads, framing, copied payload */
	/* receiving */
	enum h1m_body rx_mode;
	int rx_done;                 /* the current message is wholly in its channel */
	uint64_t rx_left;
	struct h1_chunk rx_chunk;
	char *tlr;                   /* received trailers, field lines (malloc) */
	size_t tlr_len;
	/* sending */
	enum h1m_body tx_mode;
	int tx_done;                 /* the whole message is in tx or sent */
	uint64_t tx_left;
	/* byte counters: the caller's, or bytes_in/bytes_out */
	uint64_t *cnt_in, *cnt_out;
	uint64_t bytes_in, bytes_out;
};

/* <cnt_in>/<cnt_out>: where the bytes read and sent are counted (NULL:
 * the mux's own bytes_in/bytes_out). */
void h1m_init(struct h1m *m, struct conn *c, uint64_t *cnt_in, uint64_t *cnt_out);
/* Gives the buffers back when empty (idle connection). */
void h1m_release(struct h1m *m);
/* Ends the message states and drops what is buffered, keeping the buffers
 * (the connection carries on with the next messages). */
void h1m_end_msgs(struct h1m *m);
/* Drops everything buffered and the message states (the connection is
 * closed or changes hands). */
void h1m_reset(struct h1m *m);

/* Reads the connection into rx while it is readable, at most up to <limit>
 * bytes held in rx. Returns the bytes read; -1 on a connection error with
 * nothing read. */
ssize_t h1m_read(struct h1m *m, size_t limit);

/* Parses a head from rx (read first if it is incomplete). On H1_OK the head
 * is copied into <chan>, which must be empty, <msg> points there and the
 * body state is set from it. A channel without a buffer (area NULL) may
 * receive rx's own buffer instead of a copy, when it holds nothing but
 * this message (<is_req>: a request; a response answers
 * <req_meth>). <max_head> bounds the head as h1_parse_head() does. */
enum h1_result h1m_rcv_head(struct h1m *m, struct buffer *chan, int is_req,
                            enum http_meth req_meth, size_t max_head, unsigned int opts,
                            struct http_msg *msg, struct h1_error *err);

/* Decodes the current message's payload into <chan> (reading the
 * connection when rx holds nothing useful), as far as <chan> has room.
 * Returns 1 on progress, 0 when nothing moved, -1 on a framing error
 * (<*reason> says which). A close-delimited body ends when the
 * connection's input does. */
int h1m_rcv_body(struct h1m *m, struct buffer *chan, const char **reason);

/* Whether the current received message is complete in its channel. */
static inline int h1m_rx_done(const struct h1m *m)
{
	return m->rx_done;
}

/* h1m_snd_head() framing */
#define H1M_SND_INTERIM  0x01    /* a 1xx head: the message goes on */

/* Serialises <msg> into tx with h1_out_head() <h1o_flags> and sets the
 * body's framing: none for a bodyless message, chunked when the head says
 * Transfer-Encoding chunked (the payload is re-framed), Content-Length,
 * else until the close (a response) or none (a request). Returns 0, or -1
 * when the head does not fit. */
int h1m_snd_head(struct h1m *m, const struct http_msg *msg, unsigned int h1o_flags,
                 unsigned int snd_flags);

/* Sends the payload at the start of <chan> (consumed as it goes),
 * framed as the head said; with <eom>, once <chan> is empty the message is
 * ended (last chunk with the trailers <tlr>, <tlr_len> bytes of field
 * lines, may be NULL). Flushes tx first. Returns 1 on progress, 0 when
 * blocked or idle, -1 on a connection error. */
int h1m_snd_body(struct h1m *m, struct buffer *chan, int eom, const char *tlr, size_t tlr_len);

/* Moves what <chan> holds into tx framed (no sending), up to tx's room;
 * <eom> as above. Returns 0 if all of it moved (and the message ended with
 * <eom>), -1 otherwise. Used to keep a whole request for a retry. */
int h1m_put_body(struct h1m *m, struct buffer *chan, int eom, const char *tlr, size_t tlr_len);

/* Sends tx. Returns 1 if bytes left, 0 if none could, -1 on error. */
int h1m_flush(struct h1m *m);

/* Puts raw bytes in tx (an interim "100 Continue", a retried request).
 * Returns 0, or -1 without room. */
int h1m_put_raw(struct h1m *m, const void *p, size_t len);

/* Puts raw bytes in front of tx (a PROXY header before the request). */
int h1m_prepend_raw(struct h1m *m, const void *p, size_t len);

static inline int h1m_tx_empty(const struct h1m *m)
{
	return !m->tx.data;
}

/* Whether the message being sent is complete and flushed. */
static inline int h1m_tx_finished(const struct h1m *m)
{
	return m->tx_done && !m->tx.data;
}

/* Moves what rx holds after the current message into <chan> (a tunnel
 * starts: bytes go through from now on). Returns 0, -1 if it does not fit. */
int h1m_rx_to_chan(struct h1m *m, struct buffer *chan);

/* Appends the bytes of <b> to rx and empties <b> (bytes read before the
 * mux took the connection, after a PROXY header). Returns 0 or -1. */
int h1m_take_rx(struct h1m *m, struct buffer *b);

#endif
