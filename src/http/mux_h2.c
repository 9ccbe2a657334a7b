/* The HTTP/2 mux on the client side (see mux_h2.h): a connection task that
 * moves bytes between the socket and the h2c engine, and the HTTP/2
 * streams that sluice streams read requests from and write responses to.
 * Owner thread only.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/list.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/http/h2c.h>
#include <sluice/http/mux_h2.h>
#include <sluice/http/txn.h>
#include <sluice/net/conn.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/counters.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stream.h>
#include <sluice/proxy/stream_int.h>
#include "mux_h2_int.h"

/* rounds of read/parse/write per run of the connection task: each reads at
 * most one buffer, so a run is bounded whatever the client sends */
#define H2F_ROUNDS  4
/* a closing connection without timeout client(-fin) waits this long for
 * its last frames to leave */
#define H2_CLOSE_GRACE_MS  1000
/* HTTP/2 settings from the global section (tune.h2.*); zero: the
 * defaults (h2c.h), but the stream window, one buffer (tune.bufsize) */
static struct h2c_settings h2_tune;

/* The thread's HTTP/2 connections, for the soft stop: h2f_live holds those
 * not told yet; the stop task moves them to h2f_told a batch at a time, so
 * that no run of it goes over them all. */
static __thread struct list h2f_live, h2f_told;
static struct task *h2_stop_task[MAX_THREADS];

#define H2_STOP_BATCH  256

struct h2f {
	struct list list;           /* in the thread's h2f_live (or h2f_told) */
	struct conn c;
	struct task *task;
	struct h2c *h2;
	struct buffer rx, tx;
	struct listener *lst;
	struct proxy *fe;
	struct list streams;        /* struct h2s, by list */
	int nstreams;
	uint64_t idle_exp;          /* no stream: timeout http-keep-alive / client */
	uint64_t close_exp;         /* shut: closed then, whether the GOAWAY left or
	                             * not (a client that stopped reading) */
	int shut;                   /* GOAWAY queued: closing once it is out */
	size_t preface_seen;        /* bytes of the client preface checked */
	int stopping;               /* soft stop: GOAWAY sent */
	uint64_t served;            /* streams given to sluice streams */
	struct stkctr stkctr[STKT_MAX_CTR]; /* tracked by tcp-request connection and
	                            * session rules: the connection's, shared
	                            * by its streams (stktable_trk.c) */
};

struct h2s {
	struct list list;           /* in h2f->streams */
	struct h2f *f;              /* NULL once the connection is gone */
	int32_t sid;
	struct stream *s;           /* NULL once the sluice stream is gone */
	struct buffer rx;           /* DATA payload not in the channel yet */
	int rx_eom;                 /* END_STREAM received */
	int failed;                 /* reset, or the connection is gone */
	int forgotten;              /* h2c forgot it (closed, reset) */
	int tx_eom;                 /* the stream gave the end of the response */
	int tx_done;                /* the end went to h2c */
	char *tlr;                  /* response trailers, field lines (malloc) */
	size_t tlr_len;
	char *rx_tlr;               /* request trailers, field lines (malloc) */
	size_t rx_tlr_len;
};

/* most trailer fields sent in one HEADERS frame */
#define H2S_TLR_MAX  32

static uint64_t now_ms(void)
{
	return th_ctx->now_ms;
}

int h2_preface_match(const char *p, size_t len)
{
	size_t n = len < H2_PREFACE_LEN ? len : H2_PREFACE_LEN;

	if (memcmp(p, H2_PREFACE, n) != 0)
		return -1;
	return n == H2_PREFACE_LEN ? 1 : 0;
}

/* ---- streams ---- */

static void h2s_wake(struct h2s *h)
{
	if (h->s)
		task_wakeup(h->s->task, TASK_WOKEN_IO);
}

/* h2c no longer knows the stream: it leaves the connection's list. */
static void h2s_unlink(struct h2s *h)
{
	if (h->f) {
		list_del_init(&h->list);
		h->f->nstreams--;
		CNT_DEC(h->f->fe->fe_mux.h2.open_streams);
		if (!h->f->nstreams)
			h->f->idle_exp = tick_add_ifset(now_ms(), http_first_set(
			        h->f->fe->timeout_http_keep_alive, h->f->fe->timeout_client));
	}
	h->forgotten = 1;
}

static void h2s_free(struct h2s *h)
{
	free(h->rx.area);
	free(h->rx_tlr);
	free(h->tlr);
	free(h);
}

/* ---- h2c callbacks ---- */

static void *cb_stream_new(void *owner, int32_t sid)
{
	struct h2f *f = owner;
	struct h2s *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->f = f;
	h->sid = sid;
	list_append(&f->streams, &h->list);
	f->nstreams++;
	f->idle_exp = 0;
	CNT_INC(f->fe->fe_mux.h2.total_streams);
	CNT_INC(f->fe->fe_mux.h2.open_streams);
	return h;
}

static int cb_head(void *owner, void *sctx, const struct http_msg *msg, int is_trailers,
                   int end_stream)
{
	struct h2f *f = owner;
	struct h2s *h = sctx;

	if (is_trailers) {
		/* request trailers: field lines, as the HTTP/1 mux keeps them */
		if (h2m_fields_to_lines(msg, &h->rx_tlr, &h->rx_tlr_len) < 0)
			return -1;
		if (end_stream)
			h->rx_eom = 1;
		h2s_wake(h);
		return 0;
	}
	h->rx_eom = end_stream;
	h->s = stream_new_h2(f->lst, &f->c, h, msg, !f->served++);
	if (!h->s) {
		/* h2c resets it and forgets it */
		h2s_unlink(h);
		h2s_free(h);
		return -1;
	}
	return 0;
}

static int cb_data(void *owner, void *sctx, const char *p, size_t len, int end_stream)
{
	struct h2s *h = sctx;

	if (!h->s) {
		/* answered already (see h2s_detach()): what the client still
		 * sends is read and dropped */
		if (len && h->f)
			h2c_consumed(h->f->h2, h->sid, len);
		return 0;
	}
	/* the stream window is one buffer, but a client may send the default
	 * 65535 bytes before it takes our SETTINGS into account */
	if (len && h2m_rx_put(&h->rx, p, len, h2_tune.initial_window_size ?
	                      h2_tune.initial_window_size : (size_t)global.bufsize) < 0)
		return -1;
	if (end_stream)
		h->rx_eom = 1;
	h2s_wake(h);
	return 0;
}

static void cb_reset(void *owner, void *sctx, uint32_t err)
{
	struct h2s *h = sctx;

	h->failed = 1;
	h2s_unlink(h);
	h->f = NULL;
	if (!h->s) {
		h2s_free(h);
		return;
	}
	h2s_wake(h);
}

static void cb_closed(void *owner, void *sctx)
{
	struct h2s *h = sctx;

	h2s_unlink(h);
	h->f = NULL;
	if (!h->s)
		h2s_free(h);
}

static ssize_t cb_data_out(void *owner, void *sctx, char *dst, size_t max, int *eom)
{
	struct h2s *h = sctx;
	struct stream *s = h->s;
	size_t n = 0;

	if (!s) {
		*eom = H2C_EOM_END;
		return 0;
	}
	if (s->res.data) {
		n = s->res.data < max ? s->res.data : max;
		memcpy(dst, buf_head(&s->res), n);
		buf_consume(&s->res, n);
		s->bytes_out += n;
		task_wakeup(s->task, TASK_WOKEN_IO);   /* room for more */
	}
	if (h->tx_eom && !s->res.data) {
		*eom = H2C_EOM_END;
		if (h->tlr_len && h->f) {
			struct http_hdr t[H2S_TLR_MAX];
			int nt = h2m_lines_to_fields(h->tlr, h->tlr_len, t, H2S_TLR_MAX);

			if (nt) {
				*eom = H2C_EOM_TRAILERS;
				h2c_submit_trailers(h->f->h2, h->sid, t, nt);
			}
		}
		h->tx_done = 1;
		task_wakeup(s->task, TASK_WOKEN_IO);
	}
	return (ssize_t)n;
}

static const struct h2c_ops h2f_ops = {
	.stream_new = cb_stream_new,
	.head = cb_head,
	.data = cb_data,
	.reset = cb_reset,
	.closed = cb_closed,
	.data_out = cb_data_out,
};

/* ---- the connection ---- */

void h2_stats_flush(struct h2c *h2, struct h2_counters *px)
{
	struct h2c_stats d;

	if (!h2c_stats_take(h2, &d))
		return;
	if (d.headers)
		CNT_ADD(px->headers_rcvd, d.headers);
	if (d.data)
		CNT_ADD(px->data_rcvd, d.data);
	if (d.settings)
		CNT_ADD(px->settings_rcvd, d.settings);
	if (d.rst_recv)
		CNT_ADD(px->rst_stream_rcvd, d.rst_recv);
	if (d.goaway_recv)
		CNT_ADD(px->goaway_rcvd, d.goaway_recv);
	if (d.conn_errors)
		CNT_ADD(px->conn_proto_err, d.conn_errors);
	if (d.stream_errors)
		CNT_ADD(px->strm_proto_err, d.stream_errors);
	if (d.rst_on_error)
		CNT_ADD(px->rst_stream_resp, d.rst_on_error);
	if (d.goaway_on_error)
		CNT_ADD(px->goaway_resp, d.goaway_on_error);
}

static void h2f_free(struct h2f *f)
{
	struct list *pos, *tmp;

	h2_stats_flush(f->h2, &f->fe->fe_mux.h2);
	CNT_DEC(f->fe->fe_mux.h2.open_conns);
	atomic_fetch_sub_explicit(&f->fe->fe_mux.h2.open_streams, f->nstreams,
	                          memory_order_relaxed);
	/* the streams still running see their HTTP/2 stream fail */
	list_for_each_safe(pos, tmp, &f->streams) {
		struct h2s *h = list_elem(pos, struct h2s, list);

		list_del_init(&h->list);
		h->f = NULL;
		h->failed = 1;
		h->forgotten = 1;
		if (h->s) {
			h->s->cli.ssl = NULL;   /* borrowed from f->c */
			h2s_wake(h);
		} else {
			h2s_free(h);
		}
	}
	list_del_init(&f->list);
	h2c_free(f->h2);
	conn_close(&f->c);
	if (f->rx.area)
		buf_release(&f->rx);
	if (f->tx.area)
		buf_release(&f->tx);
	stkctr_release_array(f->stkctr);
	stream_session_closed(f->lst, f->fe);
	task_destroy(f->task);
	free(f);
}

/* Until the whole preface came, anything else closes the connection
 * without a byte (an HTTP/1 client on a `proto h2` listener), as HAProxy
 * does. Returns 0 or -1. */
static int preface_check(struct h2f *f)
{
	size_t n;

	if (f->preface_seen >= H2_PREFACE_LEN)
		return 0;
	n = f->rx.data < H2_PREFACE_LEN - f->preface_seen ? f->rx.data :
	    H2_PREFACE_LEN - f->preface_seen;
	if (memcmp(buf_head(&f->rx), H2_PREFACE + f->preface_seen, n) != 0)
		return -1;
	f->preface_seen += n;
	return 0;
}

/* Reads what the socket has (one buffer at most) and feeds h2c. Returns 1
 * on progress, 0, -1 when the connection is over. */
static int h2f_read(struct h2f *f)
{
	ssize_t n;

	if (!(f->c.flags & CONN_F_RD_READY) || (f->c.flags & (CONN_F_RD_SHUT | CONN_F_ERROR)))
		return 0;
	if (!f->rx.area && buf_alloc(&f->rx) < 0)
		return 0;
	n = conn_recv(&f->c, &f->rx);
	if (n < 0)
		return (f->c.flags & CONN_F_ERROR) ? -1 : 0;
	if (n == 0)
		return -1;   /* the client closed */
	if (preface_check(f) < 0) {
		/* not HTTP/2: a connection error HAProxy counts (no GOAWAY) */
		CNT_INC(f->fe->fe_mux.h2.conn_proto_err);
		return -1;
	}
	if (h2c_recv(f->h2, buf_head(&f->rx), f->rx.data) < 0)
		f->shut = 1;
	buf_release(&f->rx);   /* h2c took everything: an idle connection holds none */
	return 1;
}

static int h2f_write(struct h2f *f)
{
	return h2m_write(&f->c, f->h2, &f->tx, 1);
}

static struct task *h2f_process(struct task *t, void *ctx, unsigned int state)
{
	struct h2f *f = ctx;
	int more = 0;

	for (int round = 0; round < H2F_ROUNDS; round++) {
		int p = 0, r;

		r = h2f_read(f);
		if (r < 0)
			goto dead;
		p |= r;
		r = h2f_write(f);
		if (r < 0)
			goto dead;
		p |= r;
		if (!p)
			break;
		more = round == H2F_ROUNDS - 1;
	}
	if (atomic_load(&global.stopping) && !f->shut && !f->stopping) {
		/* soft stop: GOAWAY (in two steps, RFC 9113 section 6.8); the
		 * streams below the last id finish, then the connection ends */
		f->stopping = 1;
		h2c_shutdown(f->h2);
		h2f_write(f);
	}
	if (!h2c_want_read(f->h2) && !h2c_want_write(f->h2) && !f->tx.data)
		goto dead;
	if (f->shut && !h2c_want_write(f->h2) && !f->tx.data)
		goto dead;
	if (!f->nstreams && f->idle_exp && now_ms() >= f->idle_exp && !f->shut) {
		/* idle too long: GOAWAY, then close once it is out */
		h2c_goaway_now(f->h2);
		f->shut = 1;
		h2f_write(f);
		if (!h2c_want_write(f->h2) && !f->tx.data)
			goto dead;
	}
	if (f->shut && !f->close_exp) {
		f->close_exp = tick_add_ifset(now_ms(), http_first_set(f->fe->timeout_client_fin,
		                                                       f->fe->timeout_client));
		if (!f->close_exp)
			f->close_exp = now_ms() + H2_CLOSE_GRACE_MS;
	}
	if (f->shut && now_ms() >= f->close_exp)
		goto dead;
	h2_stats_flush(f->h2, &f->fe->fe_mux.h2);
	if (more)
		task_wakeup(t, TASK_WOKEN_OTHER);
	task_set_expire(t, f->shut ? f->close_exp : f->nstreams ? 0 : f->idle_exp);
	return t;
dead:
	h2f_free(f);
	return NULL;
}

int h2_front_takeover(struct stream *s)
{
	struct h2f *f = calloc(1, sizeof(*f));
	struct h2c_settings set = h2_tune;

	if (!f)
		return -1;
	list_init(&f->list);
	f->task = task_new(h2f_process, f, th_ctx->tid, TC_NORMAL, "h2 conn");
	if (!set.initial_window_size)
		set.initial_window_size = (uint32_t)global.bufsize;
	set.max_header_list = (uint32_t)global.bufsize;
	f->h2 = h2c_new(1, &set, &h2f_ops, f);
	if (!f->task || !f->h2)
		goto fail;
	list_init(&f->streams);
	list_append(&h2f_live, &f->list);
	f->lst = s->lst;
	f->fe = s->fe;
	conn_init(&f->c, f->task);
	conn_move(&f->c, &s->cli, f->task);
	/* what the HTTP/1 mux read already is the start of the HTTP/2 stream */
	if (s->cli_m.rx.data) {
		if (buf_alloc(&f->rx) < 0)
			goto fail_conn;
		memcpy(f->rx.area, buf_head(&s->cli_m.rx), s->cli_m.rx.data);
		f->rx.data = s->cli_m.rx.data;
		s->cli_m.rx.head = s->cli_m.rx.data = 0;
		if (preface_check(f) < 0) {
			/* an HTTP/2 connection that failed at once */
			CNT_INC(f->fe->fe_mux.h2.total_conns);
			CNT_INC(f->fe->fe_mux.h2.conn_proto_err);
			conn_move(&s->cli, &f->c, s->task);
			goto fail;
		}
	}
	/* no longer an HTTP/1 connection (show stat h1_*): an HTTP/2 one */
	conn_count_stop(&f->c);
	CNT_INC(f->fe->fe_mux.h2.total_conns);
	CNT_INC(f->fe->fe_mux.h2.open_conns);
	if (f->rx.data) {
		if (h2c_recv(f->h2, f->rx.area, f->rx.data) < 0)
			f->shut = 1;
		buf_release(&f->rx);
	}
	f->idle_exp = tick_add_ifset(now_ms(), http_first_set(f->fe->timeout_http_request,
	                                                      f->fe->timeout_client));
	stkctr_take_session(s, f->stkctr);
	task_wakeup(f->task, TASK_WOKEN_OTHER);
	return 0;
fail_conn:
	conn_move(&s->cli, &f->c, s->task);
fail:
	list_del_init(&f->list);
	buf_release(&f->rx);
	if (f->h2)
		h2c_free(f->h2);
	if (f->task)
		task_destroy(f->task);
	free(f);
	return -1;
}

/* ---- the stream's side ---- */

static void h2f_wake(struct h2f *f)
{
	if (f)
		task_wakeup(f->task, TASK_WOKEN_MSG);
}

int h2s_rcv_body(struct h2s *h, struct buffer *chan)
{
	size_t n = h2m_rx_move(&h->rx, chan);

	if (!n)
		return 0;
	if (h->s)
		h->s->bytes_in += n;
	if (h->f && !h->forgotten) {
		h2c_consumed(h->f->h2, h->sid, n);
		h2f_wake(h->f);
	}
	return 1;
}

int h2s_rx_done(const struct h2s *h)
{
	return h->rx_eom && !h->rx.data;
}

int h2s_failed(const struct h2s *h)
{
	return h->failed;
}

int h2s_snd_head(struct h2s *h, const struct http_msg *msg, int interim)
{
	/* a tunnel's 2xx (or the 101 to an extended CONNECT) opens it */
	int end = !interim && (msg->flags & HTTP_F_BODYLESS) && !(msg->flags & HTTP_F_TUNNEL);

	if (!h->f || h->forgotten)
		return -1;
	if (h2c_submit_response(h->f->h2, h->sid, msg, end) < 0)
		return -1;
	if (end)
		h->tx_eom = h->tx_done = 1;
	h2f_wake(h->f);
	return 0;
}

void h2s_snd_body(struct h2s *h, int eom, const char *tlr, size_t tlr_len)
{
	if (eom && !h->tx_eom) {
		h->tx_eom = 1;
		if (tlr_len && (h->tlr = malloc(tlr_len))) {
			memcpy(h->tlr, tlr, tlr_len);
			h->tlr_len = tlr_len;
		}
	}
	if (h->f && !h->forgotten && !h->tx_done) {
		h2c_resume(h->f->h2, h->sid);
		h2f_wake(h->f);
	}
}

int h2s_tx_finished(const struct h2s *h)
{
	return h->tx_done || h->failed;
}

void h2s_detach(struct h2s *h)
{
	h->s = NULL;
	if (h->f && !h->forgotten && h->tx_done) {
		/* the whole response is queued: resetting now would drop what
		 * is not sent yet. The stream stays with the connection until
		 * it closes; if the request is not over (a server answered
		 * early), the rest of it is read and dropped (RFC 9113
		 * section 8.1) */
		h2c_consumed(h->f->h2, h->sid, h->rx.data);
		free(h->rx.area);
		h->rx.area = NULL;
		h->rx.size = h->rx.head = h->rx.data = 0;
		h2f_wake(h->f);
		return;
	}
	if (h->f && !h->forgotten) {
		struct h2f *f = h->f;

		h2s_unlink(h);
		h2c_detach(f->h2, h->sid);
		h2f_wake(f);
	}
	h2s_free(h);
}

int32_t h2s_id(const struct h2s *h)
{
	return h->sid;
}

const struct stkctr *h2s_session_counters(const struct h2s *h)
{
	return h->f ? h->f->stkctr : NULL;
}

const char *h2s_rx_trailers(const struct h2s *h, size_t *len)
{
	*len = h->rx_tlr_len;
	return h->rx_tlr;
}

/* ---- tune.h2.* ---- */

void h2_tune_get(struct h2c_settings *out)
{
	*out = h2_tune;
}

/* tune.h2.header-table-size <n> (at most 65536), tune.h2.initial-window-size
 * <n> (at most 2^31-1), tune.h2.max-concurrent-streams <n>,
 * tune.h2.max-frame-size <n> (16384 to 16777215), as HAProxy 2.6 bounds
 * them. */
static int kw_tune_h2(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	long v, lo = 0, hi = 2147483647;
	uint32_t *dst;

	if (!strcmp(args[0], "tune.h2.header-table-size")) {
		dst = &h2_tune.header_table_size;
		hi = 65536;
	} else if (!strcmp(args[0], "tune.h2.initial-window-size")) {
		dst = &h2_tune.initial_window_size;
	} else if (!strcmp(args[0], "tune.h2.max-concurrent-streams")) {
		dst = &h2_tune.max_concurrent_streams;
	} else {
		dst = &h2_tune.max_frame_size;
		lo = 16384;
		hi = 16777215;
	}
	if (nargs != 2) {
		snprintf(err, errlen, "'%s' expects a numeric value.", args[0]);
		return -1;
	}
	if (cfg_parse_uint(args[1], hi, &v, err, errlen) < 0)
		return -1;
	if (v < lo) {
		snprintf(err, errlen, "'%s' expects a value between %ld and %ld.", args[0], lo, hi);
		return -1;
	}
	*dst = (uint32_t)v;
	return 0;
}

/* h2-workaround-bogus-websocket-clients: HTTP/2 clients are not told that
 * websockets may go over HTTP/2 (RFC 8441). HAProxy 2.6 refuses `no` in
 * front, which its manual documents. */
static int kw_h2_ws_workaround(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                               size_t errlen)
{
	if (nargs > 1) {
		snprintf(err, errlen, "'%s' cannot handle unexpected argument '%s'.", args[0],
		         args[1]);
		return -1;
	}
	h2_tune.no_ext_connect = 1;
	return 0;
}

static const struct cfg_kw h2_kws[] = {
	{ "h2-workaround-bogus-websocket-clients", NULL, CFG_SEC_GLOBAL, kw_h2_ws_workaround },
	{ "tune.h2.header-table-size",      NULL, CFG_SEC_GLOBAL, kw_tune_h2 },
	{ "tune.h2.initial-window-size",    NULL, CFG_SEC_GLOBAL, kw_tune_h2 },
	{ "tune.h2.max-concurrent-streams", NULL, CFG_SEC_GLOBAL, kw_tune_h2 },
	{ "tune.h2.max-frame-size",         NULL, CFG_SEC_GLOBAL, kw_tune_h2 },
	{ NULL }
};
CFG_REGISTER(h2_kws)

/* ---- soft stop ---- */

static struct task *h2_stop_process(struct task *t, void *ctx, unsigned int state)
{
	for (int n = 0; n < H2_STOP_BATCH && !list_empty(&h2f_live); n++) {
		struct h2f *f = list_elem(h2f_live.next, struct h2f, list);

		list_del_init(&f->list);
		list_append(&h2f_told, &f->list);
		task_wakeup(f->task, TASK_WOKEN_MSG);
	}
	if (!list_empty(&h2f_live))
		task_wakeup(t, TASK_WOKEN_OTHER);
	return t;
}

static void h2_soft_stop(int tid)
{
	if (h2_stop_task[tid])
		task_wakeup(h2_stop_task[tid], TASK_WOKEN_OTHER);
}

static int h2_thread_init(int tid)
{
	list_init(&h2f_live);
	list_init(&h2f_told);
	h2_stop_task[tid] = task_new(h2_stop_process, NULL, tid, TC_BULK, "h2_stop");
	return h2_stop_task[tid] ? 0 : -1;
}

static void h2_thread_deinit(int tid)
{
	if (h2_stop_task[tid])
		task_destroy(h2_stop_task[tid]);
	h2_stop_task[tid] = NULL;
}

static struct thread_init_hook h2_thread_hook = { .fn = h2_thread_init,
                                                  .deinit = h2_thread_deinit };
static struct listener_stop_hook h2_stop_hook = { .fn = h2_soft_stop };

__attribute__((constructor)) static void h2_register(void)
{
	thread_register_init(&h2_thread_hook);
	listener_register_stop(&h2_stop_hook);
}
