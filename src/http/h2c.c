/* The HTTP/2 connection engine: libnghttp2 driven through its memory API
 * (mem_recv/mem_send), with the protections sluice adds on top. The API
 * and the conversion rules are described in include/sluice/http/h2c.h;
 * conversions live in h2c_conv.c.
 *
 * Life of a stream: an h2c_stream is created when its first head begins
 * (server role) or when the owner submits a request (client role), and is
 * the nghttp2 stream user data. It ends at the first of: nghttp2 closing
 * the stream (reset() or closed() to the owner), the owner detaching or
 * resetting it, a connection error (reset() to every stream). Once ended,
 * the window its unconsumed bytes held goes back to the connection, and
 * nothing reaches the owner for that id again.
 *
 * Flow control: nghttp2's automatic WINDOW_UPDATE is off. Every DATA byte
 * given to the owner stays counted against both windows until the owner
 * calls h2c_consumed(), so a slow reader bounds what a peer may send: one
 * stream window per stream, and a connection window of (stream window x
 * concurrent streams), which spares streams from waiting on each other.
 *
 * Protections (RFC 9113 section 10.5: "an endpoint MAY treat activity that
 * is suspicious as a connection error of type ENHANCE_YOUR_CALM"). Budgets
 * refilled by work rather than by time, so that no clock is needed and a
 * peer gets as much slack as the useful traffic it brings:
 *  - rapid reset (CVE-2023-44487): RST_STREAM from the client before our
 *    final head costs one token of a budget of 2 x max streams, and every
 *    stream that completes gives one back. nghttp2's own time-based limit
 *    (backported to Debian's 1.52.0-1+deb12u3) is set as well;
 *  - glitches: DATA frames without payload nor END_STREAM, PRIORITY
 *    frames, malformed heads and other invalid frames cost one token of
 *    H2C_GLITCH_BURST; a head or a DATA frame with payload gives one back;
 *  - WINDOW_UPDATE: each costs one token of H2C_WU_BURST; a DATA frame
 *    sent gives two (one per window), a head received one;
 *  - refused streams (beyond our SETTINGS, or refused by the owner): a
 *    budget of 2 x max streams, one back per completed stream;
 *  - CONTINUATION floods: nghttp2's max_continuations, set from the list
 *    limit; HPACK bombs: the decoded list is cut at max_header_list (the
 *    stream is refused, as HAProxy 2.6 does) and more than max_hdrs fields
 *    is a COMPRESSION_ERROR (HAProxy 2.6 again); the decoder table is our
 *    SETTINGS_HEADER_TABLE_SIZE, the encoder's at most 4096;
 *  - SETTINGS and PING floods: nghttp2's max_outbound_ack and max_settings.
 * nghttp2's fatal verdicts (flood, continuation, bad preface) leave the
 * session unusable: h2c then writes the GOAWAY itself (RFC 9113 6.8).
 *
 * Concurrency: none; a connection belongs to one thread.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/pool.h>
#include "h2c_int.h"

#define H2C_GLITCH_BURST   128
#define H2C_WU_BURST       256
#define H2C_MAX_ACKS       64      /* SETTINGS/PING ACKs queued before a flood */
#define H2C_MAX_SETTINGS   32      /* entries of one SETTINGS frame */
/* nghttp2's time-based RST_STREAM limit (tokens, tokens per second) */
#define H2C_NG_RST_BURST   1000
#define H2C_NG_RST_RATE    33

/* shutdown states (RFC 9113 section 6.8, two steps in server role) */
enum { SHUT_NONE = 0, SHUT_NOTICE, SHUT_FINAL };

#define H2C_RST_RING  64   /* streams we reset lately: their late frames are ignored */
#define H2C_BAD_REQ_RING 8 /* streams refused lately for a malformed request head */

struct h2c {
	int conn_win_set;            /* the connection window was grown (first DATA) */
	int32_t rst_ring[H2C_RST_RING];
	unsigned int rst_pos;
	int32_t bad_req_ring[H2C_BAD_REQ_RING];
	unsigned int bad_req_pos;
	nghttp2_session *ng;
	int server_role;
	const struct h2c_ops *ops;
	void *owner;
	struct h2c_settings set;
	struct h2c_counters cnt;
	struct h2c_stats taken;      /* cnt's figures at the last h2c_stats_take() */
	struct h2c_head head;
	struct h2c_out out;
	struct list streams;       /* struct h2c_stream, the ones h2c still tracks */
	int nstreams;
	const uint8_t *pend;       /* bytes from mem_send() not written yet */
	size_t pend_len;
	uint8_t own_goaway[17];    /* after a fatal error: our GOAWAY frame */
	size_t own_goaway_len;
	size_t own_goaway_off;
	int fatal;                 /* nghttp2 must not be called again */
	int dying;                 /* connection error decided: owner hears no more */
	int shutdown;              /* SHUT_* */
	int peer_goaway;
	int peer_settings;         /* the peer's first SETTINGS arrived */
	int settings_seen;         /* the peer's first SETTINGS frame began */
	int last_lib_err;          /* nghttp2's last connection-level verdict */
	uint32_t calm_err;         /* error code of h2c_calm()'s GOAWAY */
	int64_t reset_budget;
	int64_t refuse_budget;
	int64_t glitch_budget;
	int64_t wu_budget;
};

POOL_DECLARE(h2c_stream_pool, "h2c_stream", struct h2c_stream);

/* ------------------------------------------------------------------------ */
/* Streams                                                                   */
/* ------------------------------------------------------------------------ */

static struct h2c_stream *stream_of(struct h2c *c, int32_t sid)
{
	if (c->fatal || sid <= 0)
		return NULL;
	return nghttp2_session_get_stream_user_data(c->ng, sid);
}

static struct h2c_stream *stream_create(struct h2c *c, int32_t sid)
{
	struct h2c_stream *s = pool_zalloc(&h2c_stream_pool);

	if (!s)
		return NULL;
	s->sid = sid;
	list_append(&c->streams, &s->link);
	c->nstreams++;
	c->cnt.streams++;
	return s;
}

/* h2c forgets <s>: the window its unconsumed bytes hold reopens, nghttp2
 * no longer points to it. The owner is not told (callers do it). */
static void stream_forget(struct h2c *c, struct h2c_stream *s)
{
	if (!c->fatal) {
		if (s->unconsumed && nghttp2_session_consume(c->ng, s->sid, s->unconsumed) != 0)
			nghttp2_session_consume_connection(c->ng, s->unconsumed);
		if (s->sid > 0)
			nghttp2_session_set_stream_user_data(c->ng, s->sid, NULL);
	}
	list_del_init(&s->link);
	c->nstreams--;
	pool_free(&h2c_stream_pool, s);
}

/* The owner refused something about <s> (a callback returned < 0): the
 * stream is reset and forgotten without a reset() callback. */
static void stream_abort(struct h2c *c, struct h2c_stream *s, uint32_t err)
{
	nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, s->sid, err);
	stream_forget(c, s);
}

/* Tells every stream the owner knows that the connection failed. */
static void streams_fail_all(struct h2c *c, uint32_t err)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &c->streams) {
		struct h2c_stream *s = list_elem(pos, struct h2c_stream, link);
		void *sctx = s->sctx;
		int notified = s->flags & H2S_F_NOTIFIED;

		stream_forget(c, s);
		if (notified)
			c->ops->reset(c->owner, sctx, err);
	}
}

/* Whether <s> is still the stream h2c tracks for its id after a callback
 * (the owner may detach or reset it from inside). */
static int stream_alive(struct h2c *c, int32_t sid, struct h2c_stream *s)
{
	return !c->fatal && nghttp2_session_get_stream_user_data(c->ng, sid) == s;
}

/* ------------------------------------------------------------------------ */
/* Protections                                                               */
/* ------------------------------------------------------------------------ */

/* Ends the connection for <cause>: GOAWAY <err> queued, nothing more read
 * (nghttp2 stops accepting streams at once; the rest of the buffer only
 * finishes frames already started). */
static void h2c_calm(struct h2c *c, enum h2c_cause cause, uint32_t err)
{
	if (c->dying)
		return;
	c->dying = 1;
	c->cnt.calm_cause = cause;
	c->calm_err = err;
	nghttp2_session_terminate_session(c->ng, err);
}

static void budget_earn(int64_t *budget, int64_t n, int64_t burst)
{
	*budget += n;
	if (*budget > burst)
		*budget = burst;
}

static int64_t reset_burst(const struct h2c *c)
{
	return 2 * (int64_t)c->set.max_concurrent_streams;
}

static void glitch(struct h2c *c)
{
	if (--c->glitch_budget < 0)
		h2c_calm(c, H2C_CAUSE_GLITCH, NGHTTP2_ENHANCE_YOUR_CALM);
}

static void refused(struct h2c *c)
{
	c->cnt.refused++;
	if (--c->refuse_budget < 0)
		h2c_calm(c, H2C_CAUSE_REFUSED, NGHTTP2_ENHANCE_YOUR_CALM);
}

/* Work done: budgets refill. */
static void productive(struct h2c *c)
{
	budget_earn(&c->glitch_budget, 1, H2C_GLITCH_BURST);
	budget_earn(&c->wu_budget, 1, H2C_WU_BURST);
}

/* Server role: stream <sid>'s request head was malformed. Its RST_STREAM
 * (PROTOCOL_ERROR) is not one of the stream errors HAProxy's h2 module
 * counts: HAProxy refuses such a stream without counting it there. */
static void bad_request_head(struct h2c *c, int32_t sid)
{
	if (c->server_role)
		c->bad_req_ring[c->bad_req_pos++ % H2C_BAD_REQ_RING] = sid;
}

static int bad_request_head_lately(const struct h2c *c, int32_t sid)
{
	for (int i = 0; i < H2C_BAD_REQ_RING; i++)
		if (c->bad_req_ring[i] == sid)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* nghttp2 callbacks: heads                                                  */
/* ------------------------------------------------------------------------ */

static int cb_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *arg)
{
	struct h2c *c = arg;
	struct h2c_stream *s;

	h2c_head_begin(&c->head, f->hd.stream_id);
	if (c->dying) {
		c->head.discard = 1;
		return 0;
	}
	if (f->headers.cat == NGHTTP2_HCAT_REQUEST) {
		s = stream_create(c, f->hd.stream_id);
		if (!s)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		nghttp2_session_set_stream_user_data(ng, f->hd.stream_id, s);
	} else if (!stream_of(c, f->hd.stream_id)) {
		c->head.discard = 1;   /* forgotten stream: decode only (HPACK state) */
	}
	return 0;
}

static int cb_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name,
                     size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags,
                     void *arg)
{
	struct h2c *c = arg;
	int rc;

	if (c->head.discard || f->hd.stream_id != c->head.sid)
		return 0;
	rc = h2c_head_add(&c->head, name, nlen, value, vlen);
	if (rc < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	if (rc == 1) {
		/* HAProxy 2.6 refuses a request whose head does not fit its
		 * buffer; a response that large is the server's error */
		c->head.discard = 1;
		c->cnt.heads_too_big++;
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, f->hd.stream_id,
		                          c->server_role ? NGHTTP2_REFUSED_STREAM :
		                          NGHTTP2_PROTOCOL_ERROR);
	} else if (rc == 2) {
		/* more fields than tune.http.maxhdr: HAProxy 2.6 fails HPACK
		 * decoding, a connection error */
		c->head.discard = 1;
		c->cnt.too_many_fields++;
		h2c_calm(c, H2C_CAUSE_TOO_MANY_FIELDS, NGHTTP2_COMPRESSION_ERROR);
	}
	return 0;
}

static enum h2c_head_kind head_kind(const struct h2c *c, const nghttp2_frame *f,
                                    const struct h2c_stream *s)
{
	if (f->headers.cat == NGHTTP2_HCAT_REQUEST)
		return H2C_KIND_REQUEST;
	if (f->headers.cat == NGHTTP2_HCAT_RESPONSE)
		return H2C_KIND_RESPONSE;
	if (!c->server_role && !(s->flags & H2S_F_FINAL_IN))
		return H2C_KIND_RESPONSE;   /* the final head after 1xx ones */
	return H2C_KIND_TRAILERS;
}

/* A server-role stream becomes the owner's, or is refused. 0 if kept. */
static int head_open_stream(struct h2c *c, struct h2c_stream *s)
{
	s->sctx = c->ops->stream_new(c->owner, s->sid);
	if (!s->sctx) {
		refused(c);
		stream_abort(c, s, NGHTTP2_REFUSED_STREAM);
		return -1;
	}
	s->flags |= H2S_F_NOTIFIED;
	return 0;
}

static int on_headers_do(struct h2c *c, const nghttp2_frame *f);

/* A head is complete: given to the owner, then its memory goes back, so
 * that a connection between requests holds no head arena (tens of KB). */
static int on_headers(struct h2c *c, const nghttp2_frame *f)
{
	int rc = on_headers_do(c, f);

	h2c_head_release(&c->head);
	return rc;
}

static int on_headers_do(struct h2c *c, const nghttp2_frame *f)
{
	int32_t sid = f->hd.stream_id;
	struct h2c_stream *s = stream_of(c, sid);
	int es = (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0, rc;
	enum h2c_head_kind kind;
	struct http_msg msg;

	c->head.active = 0;
	if (!s || c->head.discard || c->dying)
		return 0;
	kind = head_kind(c, f, s);
	rc = h2c_head_build(&c->head, kind, s, es, &msg);
	if (rc != H2C_HEAD_OK) {
		/* RFC 9113 section 8.1.1: malformed, a stream error; a stream the
		 * owner knows hears of it through the close */
		if (rc == H2C_HEAD_MALFORMED) {
			c->cnt.malformed++;
			bad_request_head(c, sid);
			glitch(c);
		}
		nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, sid,
		                          rc == H2C_HEAD_MALFORMED ? NGHTTP2_PROTOCOL_ERROR :
		                          NGHTTP2_INTERNAL_ERROR);
		return 0;
	}
	productive(c);
	if (kind == H2C_KIND_REQUEST && head_open_stream(c, s) < 0)
		return 0;
	if (kind != H2C_KIND_TRAILERS && (kind == H2C_KIND_REQUEST || msg.status >= 200))
		s->flags |= H2S_F_FINAL_IN;
	if (es)
		s->flags |= H2S_F_ES_IN;
	if (c->ops->head(c->owner, s->sctx, &msg, kind == H2C_KIND_TRAILERS, es) < 0 &&
	    stream_alive(c, sid, s))
		stream_abort(c, s, NGHTTP2_INTERNAL_ERROR);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* nghttp2 callbacks: data, frames, closes                                   */
/* ------------------------------------------------------------------------ */

/* The connection window: one stream window per concurrent stream. */
static int grow_conn_window(struct h2c *c)
{
	int64_t w = (int64_t)c->set.initial_window_size * c->set.max_concurrent_streams;
	int32_t conn_win = w > NGHTTP2_MAX_WINDOW_SIZE ? NGHTTP2_MAX_WINDOW_SIZE : (int32_t)w;

	if (conn_win <= NGHTTP2_INITIAL_CONNECTION_WINDOW_SIZE)
		return 0;
	return nghttp2_session_set_local_window_size(c->ng, NGHTTP2_FLAG_NONE, 0, conn_win);
}

static int cb_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t sid,
                         const uint8_t *data, size_t len, void *arg)
{
	struct h2c *c = arg;
	struct h2c_stream *s = stream_of(c, sid);

	if (!s || !(s->flags & H2S_F_NOTIFIED) || c->dying) {
		/* nobody will consume it: the window reopens now */
		nghttp2_session_consume(ng, sid, len);
		return 0;
	}
	if (!c->conn_win_set) {
		/* the connection window grows with the first payload, not
		 * before: a connection that carries no body sends no
		 * WINDOW_UPDATE, as HAProxy's (peers and tests expect the
		 * opening exchange and a GOAWAY with nothing in between) */
		c->conn_win_set = 1;
		if (grow_conn_window(c) != 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	s->unconsumed += len;
	if (c->ops->data(c->owner, s->sctx, (const char *)data, len, 0) < 0 &&
	    stream_alive(c, sid, s))
		stream_abort(c, s, NGHTTP2_INTERNAL_ERROR);
	return 0;
}

static void on_data_frame(struct h2c *c, const nghttp2_frame *f)
{
	int32_t sid = f->hd.stream_id;
	struct h2c_stream *s;

	if (f->hd.length == 0 && !(f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		c->cnt.empty_data++;
		glitch(c);
		return;
	}
	if (f->hd.length)
		productive(c);
	s = stream_of(c, sid);
	if (!(f->hd.flags & NGHTTP2_FLAG_END_STREAM) || !s || !(s->flags & H2S_F_NOTIFIED) ||
	    c->dying)
		return;
	s->flags |= H2S_F_ES_IN;
	if (c->ops->data(c->owner, s->sctx, NULL, 0, 1) < 0 && stream_alive(c, sid, s))
		stream_abort(c, s, NGHTTP2_INTERNAL_ERROR);
}

static void on_rst_stream(struct h2c *c, const nghttp2_frame *f)
{
	struct h2c_stream *s = stream_of(c, f->hd.stream_id);

	c->cnt.rst_recv++;
	if (!c->server_role || !s || (s->flags & H2S_F_FINAL_OUT))
		return;
	c->cnt.early_resets++;
	if (--c->reset_budget < 0)
		h2c_calm(c, H2C_CAUSE_RAPID_RESET, NGHTTP2_ENHANCE_YOUR_CALM);
}

static int cb_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *arg)
{
	struct h2c *c = arg;

	switch (f->hd.type) {
	case NGHTTP2_HEADERS:
		return on_headers(c, f);
	case NGHTTP2_DATA:
		on_data_frame(c, f);
		break;
	case NGHTTP2_RST_STREAM:
		on_rst_stream(c, f);
		break;
	case NGHTTP2_SETTINGS:
		if (!(f->hd.flags & NGHTTP2_FLAG_ACK)) {
			c->cnt.settings++;
			c->peer_settings = 1;
		}
		break;
	case NGHTTP2_PING:
		if (!(f->hd.flags & NGHTTP2_FLAG_ACK))
			c->cnt.pings++;
		break;
	case NGHTTP2_WINDOW_UPDATE:
		c->cnt.window_updates++;
		if (--c->wu_budget < 0)
			h2c_calm(c, H2C_CAUSE_WINDOW_UPDATE, NGHTTP2_ENHANCE_YOUR_CALM);
		break;
	case NGHTTP2_GOAWAY:
		c->cnt.goaway_recv++;
		c->peer_goaway = 1;
		break;
	}
	return 0;
}

static int cb_invalid_frame(nghttp2_session *ng, const nghttp2_frame *f, int lib_err,
                            void *arg)
{
	struct h2c *c = arg;

	if (f->hd.type == NGHTTP2_HEADERS && lib_err == NGHTTP2_ERR_REFUSED_STREAM) {
		refused(c);   /* over our SETTINGS_MAX_CONCURRENT_STREAMS */
		return 0;
	}
	if (f->hd.type == NGHTTP2_HEADERS) {
		struct h2c_stream *s = stream_of(c, f->hd.stream_id);

		c->cnt.malformed++;
		bad_request_head(c, f->hd.stream_id);
		/* nghttp2 resets the stream without closing it here: forget
		 * it now, telling the owner if it knew it (bad trailers) */
		if (s) {
			void *sctx = s->sctx;
			int notified = s->flags & H2S_F_NOTIFIED;

			stream_forget(c, s);
			if (notified)
				c->ops->reset(c->owner, sctx, NGHTTP2_PROTOCOL_ERROR);
		}
	}
	glitch(c);
	return 0;
}

static int reset_lately(const struct h2c *c, int32_t sid)
{
	for (int i = 0; i < H2C_RST_RING; i++)
		if (c->rst_ring[i] == sid)
			return 1;
	return 0;
}

static int cb_begin_frame(nghttp2_session *ng, const nghttp2_frame_hd *hd, void *arg)
{
	struct h2c *c = arg;

	switch (hd->type) {
	case NGHTTP2_CONTINUATION:
		c->cnt.continuations++;
		break;
	case NGHTTP2_HEADERS:
		c->cnt.headers_frames++;
		break;
	case NGHTTP2_DATA:
		c->cnt.data_frames++;
		break;
	case NGHTTP2_SETTINGS:
		/* HAProxy 2.6 counts the peer's first SETTINGS twice (once when
		 * it checks the frame after the preface, once when it processes
		 * it): the same figure here, so that both read alike */
		c->cnt.settings_frames++;
		if (!(hd->flags & NGHTTP2_FLAG_ACK) && !c->settings_seen) {
			c->settings_seen = 1;
			c->cnt.settings_frames++;
		}
		break;
	}
	/* counted here: with SETTINGS_NO_RFC7540_PRIORITIES, nghttp2 drops
	 * PRIORITY frames without a callback, but they still cost parsing */
	if (hd->type == NGHTTP2_PRIORITY) {
		c->cnt.priorities++;
		glitch(c);
	}
	/* a client's HEADERS or DATA on a stream that was closed (its id
	 * below one already used, the stream gone, not one we reset lately:
	 * frames may still be on their way after our RST_STREAM, section
	 * 5.4.2): RFC 9113 sections 5.1 and 5.1.1 want a connection error,
	 * which nghttp2 1.52 leaves out (it ignores the frame). STREAM_CLOSED,
	 * as HAProxy 2.6 answers */
	if (c->server_role && (hd->type == NGHTTP2_HEADERS || hd->type == NGHTTP2_DATA) &&
	    (hd->stream_id & 1) && hd->stream_id <= nghttp2_session_get_last_proc_stream_id(ng) &&
	    !nghttp2_session_find_stream(ng, hd->stream_id) && !reset_lately(c, hd->stream_id)) {
		c->cnt.malformed++;
		h2c_calm(c, H2C_CAUSE_PROTOCOL, NGHTTP2_STREAM_CLOSED);
	}
	return 0;
}

static int cb_stream_close(nghttp2_session *ng, int32_t sid, uint32_t err, void *arg)
{
	struct h2c *c = arg;
	struct h2c_stream *s = stream_of(c, sid);
	void *sctx;
	int notified, complete;

	if (!err) {
		/* a stream completed: the work that refills these budgets */
		budget_earn(&c->reset_budget, 1, reset_burst(c));
		budget_earn(&c->refuse_budget, 1, reset_burst(c));
	}
	if (!s)
		return 0;
	sctx = s->sctx;
	notified = s->flags & H2S_F_NOTIFIED;
	complete = !err && (s->flags & H2S_F_ES_IN);
	stream_forget(c, s);
	if (!notified)
		return 0;
	if (complete) {
		if (c->ops->closed)
			c->ops->closed(c->owner, sctx);
	} else {
		c->ops->reset(c->owner, sctx, err);
	}
	return 0;
}

/* An RST_STREAM with <err> goes out on <sid>: counted as HAProxy's h2
 * module counts it (struct h2c_stats). Stream errors are known here, as
 * nghttp2 resets some streams without a callback (DATA against the
 * content-length). */
static void rst_sent_stats(struct h2c *c, int32_t sid, uint32_t err)
{
	if (err == NGHTTP2_NO_ERROR || err == NGHTTP2_CANCEL)
		return;
	c->cnt.rst_on_error++;
	if ((err == NGHTTP2_PROTOCOL_ERROR || err == NGHTTP2_FLOW_CONTROL_ERROR) &&
	    !bad_request_head_lately(c, sid))
		c->cnt.stream_errors++;
}

/* A GOAWAY with <err> goes out: counted as HAProxy's h2 module counts it
 * (struct h2c_stats). */
static void goaway_sent(struct h2c *c, uint32_t err)
{
	c->cnt.goaway_sent++;
	c->cnt.goaway_err = err;
	switch (err) {
	case NGHTTP2_NO_ERROR:
	case NGHTTP2_ENHANCE_YOUR_CALM:
	case NGHTTP2_REFUSED_STREAM:
	case NGHTTP2_CANCEL:
		return;
	case NGHTTP2_INTERNAL_ERROR:
		break;   /* our failure, not the peer's */
	default:
		c->cnt.conn_errors++;
		break;
	}
	c->cnt.goaway_on_error++;
}

static int cb_frame_send(nghttp2_session *ng, const nghttp2_frame *f, void *arg)
{
	struct h2c *c = arg;
	struct h2c_stream *s;

	switch (f->hd.type) {
	case NGHTTP2_DATA:
		budget_earn(&c->wu_budget, 2, H2C_WU_BURST);
		/* fall through */
	case NGHTTP2_HEADERS:
		s = stream_of(c, f->hd.stream_id);
		if (s && (f->hd.flags & NGHTTP2_FLAG_END_STREAM))
			s->flags |= H2S_F_ES_OUT;
		break;
	case NGHTTP2_RST_STREAM:
		c->cnt.rst_sent++;
		rst_sent_stats(c, f->hd.stream_id, f->rst_stream.error_code);
		c->rst_ring[c->rst_pos++ % H2C_RST_RING] = f->hd.stream_id;
		break;
	case NGHTTP2_GOAWAY:
		goaway_sent(c, f->goaway.error_code);
		break;
	}
	return 0;
}

static int cb_error(nghttp2_session *ng, int lib_err, const char *msg, size_t len, void *arg)
{
	struct h2c *c = arg;

	c->last_lib_err = lib_err;
	return 0;
}

/* Outgoing DATA: the owner's body. */
static ssize_t cb_data_source(nghttp2_session *ng, int32_t sid, uint8_t *buf, size_t len,
                              uint32_t *data_flags, nghttp2_data_source *src, void *arg)
{
	struct h2c *c = arg;
	struct h2c_stream *s = stream_of(c, sid);
	int eom = 0;
	ssize_t n;

	if (!s || !(s->flags & H2S_F_NOTIFIED) || c->dying)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	n = c->ops->data_out(c->owner, s->sctx, (char *)buf, len, &eom);
	if (!stream_alive(c, sid, s))
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (n < 0 || (size_t)n > len) {
		stream_forget(c, s);   /* nghttp2 resets it: INTERNAL_ERROR */
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	if (eom) {
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
		if (eom == H2C_EOM_TRAILERS)
			*data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
		return n;
	}
	if (!n) {
		s->flags |= H2S_F_DEFERRED;
		return NGHTTP2_ERR_DEFERRED;
	}
	return n;
}

/* ------------------------------------------------------------------------ */
/* Set-up                                                                    */
/* ------------------------------------------------------------------------ */

static void settings_defaults(struct h2c_settings *set)
{
	if (!set->header_table_size)
		set->header_table_size = 4096;
	if (!set->initial_window_size)
		set->initial_window_size = 65535;
	if (set->initial_window_size > NGHTTP2_MAX_WINDOW_SIZE)
		set->initial_window_size = NGHTTP2_MAX_WINDOW_SIZE;
	if (!set->max_concurrent_streams)
		set->max_concurrent_streams = 100;
	if (set->max_frame_size < 16384)
		set->max_frame_size = 16384;
	if (set->max_frame_size > 16777215)
		set->max_frame_size = 16777215;
	if (!set->max_header_list)
		set->max_header_list = 16384;
	if (!set->max_hdrs)
		set->max_hdrs = HTTP_MAX_HDRS_DEFAULT;
}

static nghttp2_session_callbacks *h2c_callbacks(void)
{
	nghttp2_session_callbacks *cb;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return NULL;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, cb_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, cb_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, cb_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, cb_data_chunk);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, cb_stream_close);
	nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, cb_invalid_frame);
	nghttp2_session_callbacks_set_on_begin_frame_callback(cb, cb_begin_frame);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, cb_frame_send);
	nghttp2_session_callbacks_set_error_callback2(cb, cb_error);
	return cb;
}

static nghttp2_option *h2c_options(const struct h2c *c)
{
	nghttp2_option *opt;
	size_t conts = 2 * (c->set.max_header_list / c->set.max_frame_size + 1);

	if (nghttp2_option_new(&opt) != 0)
		return NULL;
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_option_set_max_outbound_ack(opt, H2C_MAX_ACKS);
	nghttp2_option_set_max_settings(opt, H2C_MAX_SETTINGS);
	/* a head needs ceil(list / frame) frames; nghttp2's default is 8 */
	nghttp2_option_set_max_continuations(opt, conts < 8 ? 8 : conts);
	nghttp2_option_set_max_deflate_dynamic_table_size(opt, 4096);
	/* nghttp2 keeps a bounded number of closed streams (its default),
	 * which lets it answer a frame on a recently closed stream with
	 * STREAM_CLOSED as RFC 9113 section 5.1 wants */
	if (c->server_role)
		nghttp2_option_set_stream_reset_rate_limit(opt, H2C_NG_RST_BURST,
		                                           H2C_NG_RST_RATE);
	return opt;
}

static int h2c_submit_settings(struct h2c *c)
{
	nghttp2_settings_entry iv[8];
	size_t n = 0;

	iv[n++] = (nghttp2_settings_entry){ NGHTTP2_SETTINGS_HEADER_TABLE_SIZE,
	                                    c->set.header_table_size };
	iv[n++] = (nghttp2_settings_entry){ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
	                                    c->set.max_concurrent_streams };
	iv[n++] = (nghttp2_settings_entry){ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE,
	                                    c->set.initial_window_size };
	iv[n++] = (nghttp2_settings_entry){ NGHTTP2_SETTINGS_MAX_FRAME_SIZE,
	                                    c->set.max_frame_size };
	iv[n++] = (nghttp2_settings_entry){ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE,
	                                    c->set.max_header_list };
	if (c->server_role) {
		if (!c->set.no_ext_connect)
			iv[n++] = (nghttp2_settings_entry){ NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL,
			                                    1 };
	} else
		iv[n++] = (nghttp2_settings_entry){ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 };
	if (nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, n) != 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* nghttp2's memory                                                          */
/* ------------------------------------------------------------------------ */

/* nghttp2 allocates and frees several small blocks per stream (the stream,
 * its outbound items, header buffers): through glibc's malloc that was a
 * tenth of the cost of an HTTP/2 request. Each thread keeps the blocks its
 * sessions free, by size class, for its next ones: no lock, since a
 * session and its blocks live on one thread (a block freed by another
 * thread, at exit, merely goes to that thread's cache). At most H2M_KEEP
 * blocks per class and thread stay cached; larger blocks go to malloc.
 * Sanitizer builds cache nothing, so that ASan keeps seeing every block. */
#define H2M_HDR     16          /* before each block: class, size */
#define H2M_NCLASS  6           /* 64, 128, ..., 2048 bytes */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define H2M_ASAN    1            /* clang */
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(H2M_ASAN)
#define H2M_KEEP    0
#else
#define H2M_KEEP    256
#endif

struct h2m_hdr {
	int cls;                    /* size class, -1 for a large block */
	size_t size;                /* usable bytes */
};

struct h2m_cache {
	void *head[H2M_NCLASS];     /* blocks (at their header), linked through
	                             * their first payload bytes */
	int n[H2M_NCLASS];
};

static __thread struct h2m_cache *h2m_tc;
static pthread_key_t h2m_key;
static pthread_once_t h2m_once = PTHREAD_ONCE_INIT;

static void h2m_cache_free(void *p)
{
	struct h2m_cache *tc = p;

	for (int c = 0; c < H2M_NCLASS; c++) {
		while (tc->head[c]) {
			void *b = tc->head[c];

			tc->head[c] = *(void **)((char *)b + H2M_HDR);
			free(b);
		}
	}
	free(tc);
}

static void h2m_key_init(void)
{
	pthread_key_create(&h2m_key, h2m_cache_free);
}

static struct h2m_cache *h2m_cache(void)
{
	if (!h2m_tc && H2M_KEEP) {
		pthread_once(&h2m_once, h2m_key_init);
		h2m_tc = calloc(1, sizeof(*h2m_tc));
		if (h2m_tc && pthread_setspecific(h2m_key, h2m_tc) != 0) {
			free(h2m_tc);
			h2m_tc = NULL;
		}
	}
	return h2m_tc;
}

static int h2m_class(size_t size)
{
	int c = 0;

	while (c < H2M_NCLASS && size > ((size_t)64 << c))
		c++;
	return c < H2M_NCLASS ? c : -1;
}

static void *h2m_malloc(size_t size, void *ud)
{
	int cls = h2m_class(size);
	struct h2m_cache *tc = h2m_tc;
	struct h2m_hdr *h;

	if (cls >= 0 && tc && tc->head[cls]) {
		h = tc->head[cls];
		tc->head[cls] = *(void **)((char *)h + H2M_HDR);
		tc->n[cls]--;
		return (char *)h + H2M_HDR;
	}
	if (cls >= 0)
		size = (size_t)64 << cls;
	if (size > SIZE_MAX - H2M_HDR)
		return NULL;
	h = malloc(H2M_HDR + size);
	if (!h)
		return NULL;
	h->cls = cls;
	h->size = size;
	return (char *)h + H2M_HDR;
}

static void h2m_free(void *ptr, void *ud)
{
	struct h2m_hdr *h;
	struct h2m_cache *tc;

	if (!ptr)
		return;
	h = (struct h2m_hdr *)((char *)ptr - H2M_HDR);
	tc = h->cls >= 0 ? h2m_cache() : NULL;
	if (tc && tc->n[h->cls] < H2M_KEEP) {
		*(void **)ptr = tc->head[h->cls];
		tc->head[h->cls] = h;
		tc->n[h->cls]++;
		return;
	}
	free(h);
}

static void *h2m_calloc(size_t n, size_t size, void *ud)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = h2m_malloc(n * size, ud);
	if (p)
		memset(p, 0, n * size);
	return p;
}

static void *h2m_realloc(void *ptr, size_t size, void *ud)
{
	struct h2m_hdr *h;
	void *n;

	if (!ptr)
		return h2m_malloc(size, ud);
	h = (struct h2m_hdr *)((char *)ptr - H2M_HDR);
	if (size <= h->size)
		return ptr;
	n = h2m_malloc(size, ud);
	if (!n)
		return NULL;
	memcpy(n, ptr, h->size);
	h2m_free(ptr, ud);
	return n;
}

static nghttp2_mem h2m_mem = {
	.malloc = h2m_malloc, .free = h2m_free, .calloc = h2m_calloc, .realloc = h2m_realloc,
};

struct h2c *h2c_new(int server_role, const struct h2c_settings *set,
                    const struct h2c_ops *ops, void *owner)
{
	struct h2c *c = calloc(1, sizeof(*c));
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	int rc;

	if (!c)
		return NULL;
	c->server_role = server_role;
	c->ops = ops;
	c->owner = owner;
	if (set)
		c->set = *set;
	settings_defaults(&c->set);
	list_init(&c->streams);
	h2c_head_init(&c->head, &c->set);
	c->reset_budget = c->refuse_budget = reset_burst(c);
	c->glitch_budget = H2C_GLITCH_BURST;
	c->wu_budget = H2C_WU_BURST;
	cb = h2c_callbacks();
	opt = h2c_options(c);
	rc = -1;
	if (cb && opt)
		rc = server_role ? nghttp2_session_server_new3(&c->ng, cb, c, opt, &h2m_mem) :
		                   nghttp2_session_client_new3(&c->ng, cb, c, opt, &h2m_mem);
	nghttp2_session_callbacks_del(cb);
	nghttp2_option_del(opt);
	if (rc != 0 || h2c_submit_settings(c) != 0) {
		if (rc == 0)
			nghttp2_session_del(c->ng);
		h2c_head_release(&c->head);
		free(c);
		return NULL;
	}
	return c;
}

void h2c_free(struct h2c *c)
{
	struct list *pos, *tmp;

	if (!c)
		return;
	c->fatal = 1;   /* stream_forget() must not call nghttp2 */
	list_for_each_safe(pos, tmp, &c->streams)
		stream_forget(c, list_elem(pos, struct h2c_stream, link));
	nghttp2_session_del(c->ng);
	h2c_head_release(&c->head);
	h2c_out_release(&c->out);
	free(c);
}

/* ------------------------------------------------------------------------ */
/* Wire                                                                      */
/* ------------------------------------------------------------------------ */

/* HTTP/2 error code for nghttp2's verdict <lib_err>. */
static uint32_t h2c_err_of(int lib_err)
{
	switch (lib_err) {
	case NGHTTP2_ERR_HEADER_COMP:
		return NGHTTP2_COMPRESSION_ERROR;
	case NGHTTP2_ERR_FLOW_CONTROL:
		return NGHTTP2_FLOW_CONTROL_ERROR;
	case NGHTTP2_ERR_FRAME_SIZE_ERROR:
		return NGHTTP2_FRAME_SIZE_ERROR;
	case NGHTTP2_ERR_FLOODED:
	case NGHTTP2_ERR_TOO_MANY_CONTINUATIONS:
	case NGHTTP2_ERR_TOO_MANY_SETTINGS:
		return NGHTTP2_ENHANCE_YOUR_CALM;
	case NGHTTP2_ERR_NOMEM:
	case NGHTTP2_ERR_CALLBACK_FAILURE:
		return NGHTTP2_INTERNAL_ERROR;
	default:
		return NGHTTP2_PROTOCOL_ERROR;
	}
}

/* nghttp2 gave up on the session: it must not be used again. Our own
 * GOAWAY (RFC 9113 section 6.8) follows what mem_send already gave. */
static void h2c_fatal(struct h2c *c, int lib_err)
{
	uint32_t last = (uint32_t)nghttp2_session_get_last_proc_stream_id(c->ng);
	uint32_t err = h2c_err_of(lib_err);
	uint8_t *g = c->own_goaway;

	streams_fail_all(c, err);
	c->fatal = 1;
	c->dying = 1;
	if (lib_err == NGHTTP2_ERR_FLOODED)
		c->cnt.calm_cause = H2C_CAUSE_ACK_FLOOD;
	else if (lib_err == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS)
		c->cnt.calm_cause = H2C_CAUSE_CONTINUATION;
	else if (!c->cnt.calm_cause)
		c->cnt.calm_cause = H2C_CAUSE_PROTOCOL;
	/* frame header: length 8, type GOAWAY (0x7), no flag, stream 0 */
	memset(g, 0, 9);
	g[2] = 8;
	g[3] = NGHTTP2_GOAWAY;
	g[9] = (uint8_t)(last >> 24 & 0x7f);
	g[10] = (uint8_t)(last >> 16);
	g[11] = (uint8_t)(last >> 8);
	g[12] = (uint8_t)last;
	g[13] = (uint8_t)(err >> 24);
	g[14] = (uint8_t)(err >> 16);
	g[15] = (uint8_t)(err >> 8);
	g[16] = (uint8_t)err;
	c->own_goaway_len = 17;
	c->own_goaway_off = 0;
	goaway_sent(c, err);
}

ssize_t h2c_recv(struct h2c *c, const char *p, size_t len)
{
	ssize_t rv;

	if (c->fatal)
		return -1;
	rv = nghttp2_session_mem_recv(c->ng, (const uint8_t *)p, len);
	if (rv < 0) {
		h2c_fatal(c, (int)rv);
		return -1;
	}
	/* one of our protections ended the connection: its GOAWAY is queued */
	if (c->dying) {
		streams_fail_all(c, c->calm_err);
		return -1;
	}
	return rv;
}

/* A connection error nghttp2 decided by itself (a protocol violation, an
 * HPACK error) only shows once its GOAWAY is out: nghttp2 no longer wants
 * to read although nobody asked for the end. The streams hear of it now. */
static void h2c_check_closed(struct h2c *c)
{
	if (c->fatal || c->dying || c->peer_goaway || c->shutdown ||
	    nghttp2_session_want_read(c->ng))
		return;
	c->dying = 1;
	if (!c->cnt.calm_cause)
		c->cnt.calm_cause = H2C_CAUSE_PROTOCOL;
	streams_fail_all(c, c->cnt.goaway_sent ? c->cnt.goaway_err :
	                 h2c_err_of(c->last_lib_err));
}

/* Copies what fits of <src>/<*len> to <out>; returns the bytes copied. */
static size_t copy_out(char *out, size_t room, const uint8_t **src, size_t *len)
{
	size_t n = *len < room ? *len : room;

	memcpy(out, *src, n);
	*src += n;
	*len -= n;
	return n;
}

/* The final GOAWAY of a graceful shutdown, once no stream is left. */
static void shutdown_final(struct h2c *c)
{
	if (c->shutdown != SHUT_NOTICE || c->nstreams || c->fatal)
		return;
	c->shutdown = SHUT_FINAL;
	nghttp2_submit_goaway(c->ng, NGHTTP2_FLAG_NONE,
	                      nghttp2_session_get_last_proc_stream_id(c->ng),
	                      NGHTTP2_NO_ERROR, NULL, 0);
}

ssize_t h2c_send(struct h2c *c, char *out, size_t room)
{
	size_t done = 0;

	shutdown_final(c);

	while (done < room) {
		if (c->pend_len) {
			done += copy_out(out + done, room - done, &c->pend, &c->pend_len);
			continue;
		}
		if (c->fatal) {
			const uint8_t *g = c->own_goaway + c->own_goaway_off;
			size_t left = c->own_goaway_len - c->own_goaway_off, n;

			n = copy_out(out + done, room - done, &g, &left);
			c->own_goaway_off += n;
			done += n;
			break;
		} else {
			const uint8_t *data;
			ssize_t n = nghttp2_session_mem_send(c->ng, &data);

			if (n < 0) {
				h2c_fatal(c, (int)n);
				continue;
			}
			if (n == 0) {
				h2c_check_closed(c);
				break;
			}
			c->pend = data;
			c->pend_len = (size_t)n;
		}
	}
	return (ssize_t)done;
}

int h2c_want_write(const struct h2c *c)
{
	if (c->pend_len)
		return 1;
	if (c->shutdown == SHUT_NOTICE && !c->nstreams && !c->fatal)
		return 1;   /* the final GOAWAY (shutdown_final()) */
	if (c->fatal)
		return c->own_goaway_off < c->own_goaway_len;
	return nghttp2_session_want_write(c->ng);
}

int h2c_want_read(const struct h2c *c)
{
	return !c->fatal && !c->dying && nghttp2_session_want_read(c->ng);
}

/* ------------------------------------------------------------------------ */
/* Owner's requests                                                          */
/* ------------------------------------------------------------------------ */

static nghttp2_data_provider h2c_body_provider(struct h2c_stream *s)
{
	nghttp2_data_provider prd;

	prd.source.ptr = s;
	prd.read_callback = cb_data_source;
	return prd;
}

int h2c_submit_response(struct h2c *c, int32_t sid, const struct http_msg *msg,
                        int end_stream)
{
	struct h2c_stream *s = stream_of(c, sid);
	nghttp2_data_provider prd;
	int rc;

	if (!c->server_role || !s || !(s->flags & H2S_F_NOTIFIED) || (s->flags & H2S_F_FINAL_OUT))
		return H2C_E_INVAL;
	rc = h2c_out_response(&c->out, msg, s);
	if (rc)
		return rc;
	if (msg->status < 200 && msg->status != 101) {
		rc = nghttp2_submit_headers(c->ng, NGHTTP2_FLAG_NONE, sid, NULL, c->out.nv,
		                            (size_t)c->out.n, NULL);
		return rc ? H2C_E_INVAL : 0;
	}
	prd = h2c_body_provider(s);
	rc = nghttp2_submit_response(c->ng, sid, c->out.nv, (size_t)c->out.n,
	                             end_stream ? NULL : &prd);
	if (rc)
		return rc == NGHTTP2_ERR_NOMEM ? H2C_E_NOMEM : H2C_E_INVAL;
	s->flags |= H2S_F_FINAL_OUT;
	return 0;
}

int32_t h2c_submit_request(struct h2c *c, const struct http_msg *msg, void *sctx,
                           int end_stream)
{
	struct h2c_stream *s;
	nghttp2_data_provider prd;
	int ext_ok = -1, rc;
	int32_t sid;

	if (c->server_role || c->fatal)
		return H2C_E_INVAL;
	if (c->peer_goaway || c->shutdown || c->dying)
		return H2C_E_CLOSED;
	if (c->nstreams >= h2c_peer_max_streams(c))
		return H2C_E_NOSTREAM;
	if (c->peer_settings)
		ext_ok = nghttp2_session_get_remote_settings(
			c->ng, NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL) == 1;
	s = stream_create(c, 0);
	if (!s)
		return H2C_E_NOMEM;
	rc = h2c_out_request(&c->out, msg, s, ext_ok);
	if (rc) {
		c->cnt.streams--;
		stream_forget(c, s);
		return rc;
	}
	prd = h2c_body_provider(s);
	sid = nghttp2_submit_request(c->ng, NULL, c->out.nv, (size_t)c->out.n,
	                             end_stream ? NULL : &prd, s);
	if (sid < 0) {
		c->cnt.streams--;
		stream_forget(c, s);
		return sid == NGHTTP2_ERR_NOMEM ? H2C_E_NOMEM : H2C_E_CLOSED;
	}
	s->sid = sid;
	s->sctx = sctx;
	s->flags |= H2S_F_NOTIFIED | H2S_F_FINAL_OUT;
	return sid;
}

int h2c_submit_trailers(struct h2c *c, int32_t sid, const struct http_hdr *h, int n)
{
	struct h2c_stream *s = stream_of(c, sid);
	int rc;

	if (!s || !(s->flags & H2S_F_NOTIFIED))
		return H2C_E_INVAL;
	rc = h2c_out_trailers(&c->out, h, n);
	if (rc)
		return rc;
	rc = nghttp2_submit_trailer(c->ng, sid, c->out.nv, (size_t)c->out.n);
	return rc ? H2C_E_INVAL : 0;
}

int h2c_resume(struct h2c *c, int32_t sid)
{
	struct h2c_stream *s = stream_of(c, sid);

	if (!s)
		return H2C_E_INVAL;
	if (s->flags & H2S_F_DEFERRED) {
		s->flags &= ~H2S_F_DEFERRED;
		nghttp2_session_resume_data(c->ng, sid);
	}
	return 0;
}

void h2c_consumed(struct h2c *c, int32_t sid, size_t n)
{
	struct h2c_stream *s = stream_of(c, sid);

	if (!s)
		return;
	if (n > s->unconsumed)
		n = s->unconsumed;
	s->unconsumed -= n;
	nghttp2_session_consume(c->ng, sid, n);
}

int h2c_reset_stream(struct h2c *c, int32_t sid, uint32_t err)
{
	struct h2c_stream *s = stream_of(c, sid);

	if (!s)
		return H2C_E_INVAL;
	stream_abort(c, s, err);
	return 0;
}

void h2c_detach(struct h2c *c, int32_t sid)
{
	struct h2c_stream *s = stream_of(c, sid);

	if (!s)
		return;
	if (!(s->flags & H2S_F_ES_IN) || !(s->flags & H2S_F_ES_OUT))
		nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, sid, NGHTTP2_CANCEL);
	stream_forget(c, s);
}

void h2c_shutdown(struct h2c *c)
{
	if (c->fatal || c->shutdown)
		return;
	if (!c->cnt.calm_cause)
		c->cnt.calm_cause = H2C_CAUSE_SHUTDOWN;
	if (c->server_role) {
		/* RFC 9113 section 6.8: announce (GOAWAY with the largest id),
		 * then, once the streams in flight are done, the last stream
		 * id (shutdown_final()). HAProxy 2.6 does the same, without the
		 * PING round trip the RFC suggests: peers and tests expect the
		 * second GOAWAY with nothing in between */
		c->shutdown = SHUT_NOTICE;
		nghttp2_submit_shutdown_notice(c->ng);
		return;
	}
	c->shutdown = SHUT_FINAL;
	nghttp2_submit_goaway(c->ng, NGHTTP2_FLAG_NONE,
	                      nghttp2_session_get_last_proc_stream_id(c->ng),
	                      NGHTTP2_NO_ERROR, NULL, 0);
}

void h2c_goaway_now(struct h2c *c)
{
	if (c->fatal || c->shutdown == SHUT_FINAL)
		return;
	if (!c->cnt.calm_cause)
		c->cnt.calm_cause = H2C_CAUSE_SHUTDOWN;
	c->shutdown = SHUT_FINAL;
	nghttp2_submit_goaway(c->ng, NGHTTP2_FLAG_NONE,
	                      nghttp2_session_get_last_proc_stream_id(c->ng),
	                      NGHTTP2_NO_ERROR, NULL, 0);
}

int h2c_streams(const struct h2c *c)
{
	return c->nstreams;
}

int h2c_peer_settings_known(const struct h2c *c)
{
	return c->peer_settings;
}

int h2c_peer_max_streams(const struct h2c *c)
{
	uint32_t v;

	if (c->fatal)
		return 0;
	v = nghttp2_session_get_remote_settings(c->ng, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
	return v > INT_MAX ? INT_MAX : (int)v;
}

const struct h2c_counters *h2c_counters(const struct h2c *c)
{
	return &c->cnt;
}

int h2c_stats_take(struct h2c *c, struct h2c_stats *d)
{
	const struct h2c_counters *n = &c->cnt;
	struct h2c_stats now = {
		.headers = n->headers_frames, .data = n->data_frames,
		.settings = n->settings_frames, .rst_recv = n->rst_recv,
		.goaway_recv = n->goaway_recv, .conn_errors = n->conn_errors,
		.stream_errors = n->stream_errors, .rst_on_error = n->rst_on_error,
		.goaway_on_error = n->goaway_on_error,
	};

	d->headers = now.headers - c->taken.headers;
	d->data = now.data - c->taken.data;
	d->settings = now.settings - c->taken.settings;
	d->rst_recv = now.rst_recv - c->taken.rst_recv;
	d->goaway_recv = now.goaway_recv - c->taken.goaway_recv;
	d->conn_errors = now.conn_errors - c->taken.conn_errors;
	d->stream_errors = now.stream_errors - c->taken.stream_errors;
	d->rst_on_error = now.rst_on_error - c->taken.rst_on_error;
	d->goaway_on_error = now.goaway_on_error - c->taken.goaway_on_error;
	c->taken = now;
	return (d->headers | d->data | d->settings | d->rst_recv | d->goaway_recv |
	        d->conn_errors | d->stream_errors | d->rst_on_error | d->goaway_on_error) != 0;
}
