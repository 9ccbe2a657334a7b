/* libFuzzer target: the HTTP/1 mux receiving messages (h1m_rcv_head(),
 * h1m_rcv_body()) from a socketpair, as a stream drives it.
 *
 * Input: one control byte, four piece-size bytes, then the wire bytes.
 * Control byte: bit 0 a request (else a response, answering the method
 * bits 1-2 pick: GET, HEAD, CONNECT, POST); bits 3-5 the payload channel's
 * size; bit 6 the payload lands behind the head in the head's channel
 * (as in the stream) instead of a small channel of its own; bit 7
 * H1_O_ACCEPT_INVALID. The wire bytes are written into the peer's end in
 * pieces whose sizes cycle through the four size bytes (1 to 32 bytes, or
 * all that is left for a value >= 224); after each piece the harness
 * calls the mux until it stops moving, draining the channel, and parses
 * pipelined messages one after the other. At the end the peer shuts its
 * side.
 *
 * Checked, beyond the sanitizers' own checks:
 * - a head is what h1_parse_head() says of the same bytes parsed at once
 *   (verdict, length, flags, error status and reason); it is copied into
 *   the channel byte for byte and every span of the model lies in the
 *   channel's head storage (but the parser's constant "HTTP/1.1" for a
 *   version it reads as such);
 * - payload delivered so far is always a prefix of the reference payload:
 *   the bytes after the head up to Content-Length, or what h1_chunk_feed()
 *   decodes from them at once, or everything up to the close; never more
 *   than Content-Length;
 * - a chunked body ends (rx_done) exactly when the reference decode does,
 *   with the same payload and trailers (field lines, the final empty line
 *   dropped); a framing error is the reference's (same reason), or
 *   trailers too large for a buffer; a close-delimited body ends at EOF;
 * - the next message starts where the reference says this one ended;
 * - the channel never holds more than its size.
 */
#include <assert.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sluice/core/global.h>
#include <sluice/http/h1.h>
#include <sluice/http/mux_h1.h>
#include <sluice/net/conn.h>

#define BUFSIZE   1024   /* small: heads, trailers and rx hit their limits */
#define MAX_HEAD  (BUFSIZE - 256)
#define MAXHDRS   32
#define MAX_MSGS  8

static const size_t chan_sizes[8] = { 1, 2, 3, 7, 16, 100, 1000, BUFSIZE };

struct ref {
	enum h1m_body mode;
	uint8_t *payload;          /* what the body decodes to (as far as known) */
	size_t payload_len;
	int complete;              /* the body ends within the input */
	size_t end;                /* input offset after the body, when complete */
	enum h1_chunk_state st;
	const char *reason;
	size_t tlr_total;          /* chunked: trailer bytes, final CRLF included */
	const uint8_t *tlr;
};

struct run {
	const uint8_t *in;         /* the wire bytes */
	size_t len;
	size_t sent;               /* written to the peer so far */
	int fd[2];
	struct conn c;
	struct h1m m;
	int is_req;
	enum http_meth rm;
	unsigned int opts;
	int same_chan;
	struct buffer head_chan, body_chan;
	struct http_msg msg;
	struct http_hdr hdrs[MAXHDRS];
	/* the current message */
	int in_body, done;
	size_t msg_start, body_start, head_len;
	struct ref ref;
	size_t got;                /* payload delivered */
	int nmsgs;
};

static void ref_free(struct ref *r)
{
	free(r->payload);
	memset(r, 0, sizeof(*r));
}

/* What the body starting at <off> is, from the whole input. */
static void ref_body(struct run *u, size_t off)
{
	struct ref *r = &u->ref;
	const uint8_t *p = u->in + off;
	size_t left = u->len - off;

	ref_free(r);
	r->mode = u->m.rx_mode;
	r->payload = malloc(left ? left : 1);
	if (u->m.rx_done) {
		r->mode = H1M_B_NONE;
		r->complete = 1;
		r->end = off;
		return;
	}
	if (r->mode == H1M_B_LEN) {
		uint64_t cl = u->m.rx_left;

		r->payload_len = cl < left ? (size_t)cl : left;
		memcpy(r->payload, p, r->payload_len);
		r->complete = cl <= left;
		r->end = off + r->payload_len;
	} else if (r->mode == H1M_B_CLOSE) {
		r->payload_len = left;
		memcpy(r->payload, p, left);
	} else if (r->mode == H1M_B_CHUNKED) {
		struct h1_chunk c;
		size_t pos = 0;

		h1_chunk_init(&c);
		c.opts = H1C_O_STOP_AFTER_DATA;
		while (pos < left && c.st != H1C_DONE && c.st != H1C_ERROR) {
			size_t doff, dlen, n = h1_chunk_feed(&c, (const char *)p + pos, left - pos,
			                                     &doff, &dlen);

			memcpy(r->payload + r->payload_len, p + pos + doff, dlen);
			r->payload_len += dlen;
			pos += n;
			if (!n)
				break;
		}
		r->st = c.st;
		r->reason = c.reason;
		r->complete = c.st == H1C_DONE;
		r->end = off + pos;
		if (c.st == H1C_DONE) {
			r->tlr_total = c.trailer_len;
			r->tlr = p + pos - c.trailer_len;
		} else {
			r->tlr_total = c.trailer_len;   /* so far */
		}
	}
}

static void check_spans(struct run *u)
{
	const struct http_msg *m = &u->msg;
	const char *lo = u->head_chan.area, *hi = lo + m->head_len;
	const struct ist *spans[] = { &m->method, &m->uri, &m->reason, &m->version };

	assert(u->head_chan.head == 0 && u->head_chan.data == m->head_len);
	assert(memcmp(lo, u->in + u->msg_start, m->head_len) == 0);
	for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		/* a version read as HTTP/1.1 (H1_O_ANY_VERSION) is the
		 * parser's constant, never a pointer into rx */
		if (spans[i] == &m->version && spans[i]->len == 8 &&
		    (spans[i]->ptr < u->m.rx.area || spans[i]->ptr >= u->m.rx.area + u->m.rx.size) &&
		    (spans[i]->ptr < lo || spans[i]->ptr >= hi)) {
			assert(memcmp(spans[i]->ptr, "HTTP/1.1", 8) == 0);
			continue;
		}
		assert(!spans[i]->ptr ? !spans[i]->len :
		       spans[i]->ptr >= lo && spans[i]->ptr + spans[i]->len <= hi);
	}
	for (int h = 0; h < m->nhdrs; h++) {
		assert(m->hdrs[h].name.ptr >= lo && m->hdrs[h].name.ptr + m->hdrs[h].name.len <= hi);
		assert(m->hdrs[h].value.ptr >= lo &&
		       m->hdrs[h].value.ptr + m->hdrs[h].value.len <= hi);
	}
}

/* The mux's verdict on a head equals a parse of the same bytes at once. */
static void check_head(struct run *u, enum h1_result r, const struct h1_error *err)
{
	static struct http_hdr hd[MAXHDRS];
	struct http_msg ref = { .hdrs = hd, .maxhdrs = MAXHDRS };
	struct h1_error rerr = { 0 };
	size_t left = u->len - u->msg_start;
	char *copy = malloc(left ? left : 1);
	enum h1_result rr;

	memcpy(copy, u->in + u->msg_start, left);
	rr = h1_parse_head(copy, left, u->is_req, u->rm, MAX_HEAD, u->opts, &ref, &rerr);
	if (r == H1_INCOMPLETE) {
		/* everything sent: the reference needs more too */
		if (u->sent == u->len)
			assert(rr == H1_INCOMPLETE);
	} else {
		assert(rr == r);
		if (r == H1_OK) {
			assert(ref.head_len == u->msg.head_len);
			assert(ref.flags == u->msg.flags);
			assert(ref.nhdrs == u->msg.nhdrs);
			assert(ref.content_length == u->msg.content_length);
			assert(ref.status == u->msg.status);
		} else {
			assert(rerr.status == err->status);
			assert(rerr.reason == err->reason);
		}
	}
	free(copy);
}

static void drain(struct run *u, struct buffer *b, size_t from)
{
	size_t n = b->data - from;

	assert(b->data <= b->size);
	if (!n)
		return;
	assert(u->got + n <= u->ref.payload_len);
	assert(memcmp(u->ref.payload + u->got, buf_head(b) + from, n) == 0);
	u->got += n;
	if (u->ref.mode == H1M_B_LEN)
		assert(u->got <= u->msg.content_length);
	b->data -= n;
	if (!b->data)
		b->head = 0;
}

static void message_done(struct run *u)
{
	assert(u->ref.complete || u->ref.mode == H1M_B_CLOSE);
	assert(u->got == u->ref.payload_len);
	if (u->ref.mode == H1M_B_CHUNKED) {
		size_t want = u->ref.tlr_total >= 2 ? u->ref.tlr_total - 2 : 0;

		assert(u->m.tlr_len == want);
		assert(!want || memcmp(u->m.tlr, u->ref.tlr, want) == 0);
	}
	if (u->ref.mode == H1M_B_CLOSE) {
		assert(u->sent == u->len);
		u->done = 1;
		return;
	}
	u->msg_start = u->ref.end;
	u->in_body = 0;
	if (++u->nmsgs >= MAX_MSGS || u->m.rx_mode == H1M_B_TUNNEL)
		u->done = 1;
}

/* Calls the mux until it stops moving. */
static void step(struct run *u)
{
	for (int guard = 0; guard < (1 << 20) && !u->done; guard++) {
		int progress = 0;

		if (!u->in_body) {
			struct h1_error err = { 0 };
			enum h1_result r;

			u->head_chan.head = u->head_chan.data = 0;
			memset(&u->msg, 0, sizeof(u->msg));
			u->msg.hdrs = u->hdrs;
			u->msg.maxhdrs = MAXHDRS;
			r = h1m_rcv_head(&u->m, &u->head_chan, u->is_req, u->rm, MAX_HEAD, u->opts,
			                 &u->msg, &err);
			check_head(u, r, &err);
			if (r == H1_ERROR) {
				u->done = 1;
				return;
			}
			if (r == H1_INCOMPLETE)
				return;
			check_spans(u);
			u->head_len = u->msg.head_len;
			u->body_start = u->msg_start + u->head_len;
			u->got = 0;
			u->in_body = 1;
			ref_body(u, u->body_start);
			if (!u->same_chan)
				u->head_chan.data = 0;
			progress = 1;
		} else if (!h1m_rx_done(&u->m)) {
			struct buffer *b = u->same_chan ? &u->head_chan : &u->body_chan;
			size_t keep = u->same_chan ? u->head_len : 0;
			const char *why = NULL;
			int r;

			/* the payload behind the head in the stream's layout */
			r = h1m_rcv_body(&u->m, b, &why);
			assert(b->data <= b->size);
			if (u->same_chan)
				assert(b->head == 0 && b->data >= keep);
			drain(u, b, keep);
			if (r < 0) {
				assert(why);
				assert(u->ref.mode == H1M_B_CHUNKED);
				if (why == u->ref.reason) {
					assert(u->ref.st == H1C_ERROR);
					/* everything before the offending byte was delivered */
					assert(u->got == u->ref.payload_len);
				} else {
					/* refused: too large to be sent again */
					assert(strstr(why, "trailer"));
					assert(u->ref.tlr_total + 3 > BUFSIZE);
				}
				u->done = 1;
				return;
			}
			progress = r > 0;
		}
		if (u->in_body && h1m_rx_done(&u->m)) {
			message_done(u);
			progress = 1;
		}
		if (!progress)
			return;
	}
}

/* MUX_H1_SIDE=req or res fuzzes one side only (bit 0 of the control
 * byte forced). */
static int side = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *e = getenv("MUX_H1_SIDE");

	(void)argc;
	(void)argv;
	if (e)
		side = strcmp(e, "req") == 0 ? 1 : strcmp(e, "res") == 0 ? 0 : -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum http_meth meths[] = {
		HTTP_METH_GET, HTTP_METH_HEAD, HTTP_METH_CONNECT, HTTP_METH_POST,
	};
	static struct run u;
	uint8_t ctl;
	const uint8_t *sizes;
	int piece = 0;

	if (size < 5)
		return 0;
	global.bufsize = BUFSIZE;
	memset(&u, 0, sizeof(u));
	ctl = data[0];
	sizes = data + 1;
	u.in = data + 5;
	u.len = size - 5;
	u.is_req = side >= 0 ? side : ctl & 1;
	u.rm = meths[(ctl >> 1) & 3];
	u.same_chan = !!(ctl & 0x40);
	u.opts = H1_O_BARE_LF | H1_O_HOST_OPTIONAL | H1_O_ANY_VERSION |
	         ((ctl & 0x80) ? H1_O_ACCEPT_INVALID : 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, u.fd) < 0)
		return 0;
	for (int i = 0; i < 2; i++)
		fcntl(u.fd[i], F_SETFL, fcntl(u.fd[i], F_GETFL) | O_NONBLOCK);
	u.c.ph.fd = u.fd[0];
	u.c.flags = CONN_F_RD_READY | CONN_F_WR_READY;
	h1m_init(&u.m, &u.c, NULL, NULL);
	/* exact sizes, so that ASan sees a byte written past a channel */
	u.head_chan.size = BUFSIZE;
	u.head_chan.area = malloc(u.head_chan.size);
	u.body_chan.size = chan_sizes[(ctl >> 3) & 7];
	u.body_chan.area = malloc(u.body_chan.size);

	while (u.sent < u.len && !u.done) {
		uint8_t s = sizes[piece++ & 3];
		size_t n = s >= 224 ? u.len - u.sent : 1 + s % 32;
		ssize_t w;

		if (n > u.len - u.sent)
			n = u.len - u.sent;
		w = write(u.fd[1], u.in + u.sent, n);
		assert(w == (ssize_t)n);
		u.sent += n;
		u.c.flags |= CONN_F_RD_READY;
		step(&u);
	}
	if (!u.done) {
		shutdown(u.fd[1], SHUT_WR);
		u.c.flags |= CONN_F_RD_READY;
		step(&u);
		if (u.in_body && !u.done) {
			/* the input ended inside a body: it did not end for the
			 * reference either, and nothing of it is missing */
			assert(!h1m_rx_done(&u.m));
			assert(u.ref.mode != H1M_B_CLOSE);
			assert(!u.ref.complete);
			assert(u.got == u.ref.payload_len);
		}
	}
	ref_free(&u.ref);
	h1m_reset(&u.m);
	free(u.head_chan.area);
	free(u.body_chan.area);
	close(u.fd[0]);
	close(u.fd[1]);
	return 0;
}
