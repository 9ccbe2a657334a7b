/* The HTTP/2 mux on the server side (DESIGN: "Connection layers"): server
 * connections that carry many streams of their owner thread, framed by the
 * h2c engine in its client role (h2c.h).
 *
 * A server speaks HTTP/2 by `proto h2` on its line, or by ALPN "h2" chosen
 * in the TLS handshake of a server with `alpn`. A stream with a server slot
 * first looks for a connection of its thread to that server with a free
 * stream (h2b_attach()); if none, it connects as for HTTP/1 (retries,
 * timeout connect, TLS, PROXY header), and once connected the connection
 * becomes a new HTTP/2 connection with the stream as its first stream
 * (h2b_adopt()). The connection then has its own task: it reads, writes,
 * answers the server's frames, and ends when idle longer than the server's
 * pool-purge-delay, after max-reuse streams, or when the server goes away.
 *
 * Slots (maxconn) stay per stream: a connection carries as many streams as
 * the server's SETTINGS_MAX_CONCURRENT_STREAMS allows (at most 100, as
 * HAProxy), each holding its own slot; the queue works unchanged.
 *
 * Between the stream and its HTTP/2 stream the message model flows as with
 * the HTTP/1 mux: the request head is handed over once edited, the payload
 * after it is pulled from the request channel as the server's window
 * allows; the response head is copied into the response channel as a
 * parsed head, its DATA follows as payload.
 *
 * Owner thread only.
 */
#ifndef SLUICE_HTTP_MUX_H2_BACK_H
#define SLUICE_HTTP_MUX_H2_BACK_H

#include <stddef.h>
#include <sluice/core/buf.h>
#include <sluice/http/h1.h>
#include <sluice/http/msg.h>

struct stream;
struct server;
struct conn;
struct h2bs;

/* Whether streams to <srv> look for an HTTP/2 connection first: `proto h2`,
 * or ALPN with "h2" offered (the handshake decides). */
int h2b_srv_may_h2(const struct server *srv);

/* Whether <c>, a connection to <srv> just established (handshake done),
 * speaks HTTP/2: `proto h2`, or ALPN "h2" selected. */
int h2b_conn_is_h2(const struct server *srv, const struct conn *c);

/* Stream <s> (slot held on s->srv) takes a stream of an HTTP/2 connection
 * of this thread to s->srv that has room: s->h2bs is set, s->sc carries the
 * connection's addresses (no descriptor). Returns 1, or 0 when none. */
int h2b_attach(struct stream *s);

/* s->sc, just connected to s->srv, becomes an HTTP/2 connection whose first
 * stream is s's (s->h2bs set). Bytes queued in the stream's server mux
 * (a PROXY header) go first. Returns 0 or -1 (no memory: s->sc untouched). */
int h2b_adopt(struct stream *s);

/* ---- what the stream calls (stream_http.c, stream_req.c) ---- */

/* Sends the request head <msg>; <end>: no body follows. Returns 0; 1 when
 * it must wait for the server's SETTINGS (a websocket request: RFC 8441
 * allowed or not), the stream being woken when they come; -2 when this
 * connection can take no new stream (the server's limit, a GOAWAY): the
 * stream detaches and looks again; -1 when HTTP/2 cannot carry the request
 * (a websocket upgrade to a server without RFC 8441: a 502). A CONNECT or
 * a websocket upgrade keeps its stream open as a tunnel. */
int  h2bs_snd_head(struct h2bs *h, const struct http_msg *msg, int end);
/* The request payload waits in <chan> (after the head, which is gone);
 * <eom>: its end is there (trailers <tlr>, field lines, may be NULL). The
 * connection pulls it. */
void h2bs_snd_body(struct h2bs *h, int eom, const char *tlr, size_t tlr_len);
/* The whole request went to HTTP/2 (END_STREAM queued). */
int  h2bs_tx_finished(const struct h2bs *h);
/* The next response head (1xx first) into the empty channel <chan>, parsed
 * into <m> (its hdrs array is the caller's), at most <max> bytes. H1_OK,
 * H1_INCOMPLETE (none yet), H1_ERROR (too large: err set). */
enum h1_result h2bs_rcv_head(struct h2bs *h, struct buffer *chan, size_t max,
                             struct http_msg *m, struct h1_error *err);
/* Moves received payload into <chan>. Returns 1 on progress, 0. */
int  h2bs_rcv_body(struct h2bs *h, struct buffer *chan);
/* The response is complete in the channel (END_STREAM seen, all moved). */
int  h2bs_rx_done(const struct h2bs *h);
/* Bytes of the response received and not taken yet (heads, payload). */
size_t h2bs_rx_pending(const struct h2bs *h);
/* The response's trailers as field lines (NULL, 0 when none). */
const char *h2bs_rx_trailers(const struct h2bs *h, size_t *len);
/* The HTTP/2 stream failed (reset, connection lost): its error code + 1
 * (RST_STREAM NO_ERROR gives 1), or 0. */
int  h2bs_failed(const struct h2bs *h);
/* Whether the server refused the stream before processing it
 * (REFUSED_STREAM, or a GOAWAY below its id): safe to send again. */
int  h2bs_refused(const struct h2bs *h);
/* The stream ends: its HTTP/2 stream is reset (CANCEL) if still open. */
void h2bs_detach(struct h2bs *h);

/* HTTP/2 connections to servers open now (all threads, racy read). */
int  h2b_conn_count(void);

#endif
