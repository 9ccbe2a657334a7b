/* The HTTP/2 mux on the server side (see mux_h2_back.h): a connection task
 * that moves bytes between the server socket and the h2c engine (client
 * role), and the HTTP/2 streams that sluice streams write requests to and
 * read responses from. Owner thread only: a connection, its list entry in
 * the server's per-thread list and its streams belong to the thread that
 * connected it.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/list.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/http/h2c.h>
#include <sluice/http/mux_h2.h>
#include <sluice/http/mux_h2_back.h>
#include <sluice/http/txn.h>
#include <sluice/net/conn.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/proxy/counters.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_idle.h>
#include <sluice/proxy/stream.h>
#include <openssl/ssl.h>
#include "mux_h2_int.h"

/* rounds of read/parse/write per run of the connection task */
#define H2B_ROUNDS      4
/* streams per connection before the server's SETTINGS say otherwise, and
 * at most whatever they say (HAProxy's default limit) */
#define H2B_MAX_STREAMS 100
/* most trailer fields sent in one HEADERS frame */
#define H2B_TLR_MAX     32
/* a closing connection without timeout server(-fin) waits this long for
 * its last frames to leave */
#define H2B_CLOSE_GRACE_MS 1000
/* connections of a server's list looked at for a free stream */
#define H2B_ATTACH_LOOKS 8

/* one response head waiting for the stream (1xx heads come before the
 * final one): the message and its strings in one heap block */
struct h2b_head {
	struct h2b_head *next;
	struct http_msg m;
	struct http_hdr hdrs[];    /* then the strings */
};

struct h2b {
	struct list by_srv;         /* in the server's list of this thread */
	struct list by_thr;         /* in the thread's list of all of them */
	struct conn c;
	struct task *task;
	struct h2c *h2;
	struct buffer rx, tx;
	struct server *srv;
	struct list streams;        /* struct h2bs, attached */
	int nstreams;
	uint64_t served;            /* streams it carried (max-reuse) */
	uint64_t idle_exp;          /* no stream: pool-purge-delay */
	uint64_t close_exp;         /* shut: closed then, whether the GOAWAY left or
	                             * not (a server that stopped reading) */
	int shut;                   /* GOAWAY queued or no new stream: closing */
	int noroom;                 /* a request was refused for the server's
	                             * limit: no new stream until one ends */
	int private;                /* http-reuse never or PROXY header: the
	                             * stream that opened it only */
	int settings_seen;          /* the server's SETTINGS came: streams
	                             * waiting for them were woken */
};

struct h2bs {
	struct list list;           /* in b->streams */
	struct h2b *b;              /* NULL once the connection is gone */
	struct stream *s;
	int32_t sid;                /* 0 until the request head went */
	struct h2b_head *heads;     /* response heads not taken yet */
	struct buffer rx;           /* DATA payload not in the channel yet */
	int rx_eom;                 /* END_STREAM received */
	int failed;                 /* error code + 1 */
	int refused;                /* REFUSED_STREAM: never processed */
	int forgotten;              /* h2c no longer knows it */
	int tx_eom;                 /* the stream gave the end of the request */
	int tx_done;                /* the end went to h2c */
	int tx_blocked;             /* data_out found nothing: resume on news */
	char *tlr;                  /* request trailers, field lines (malloc) */
	size_t tlr_len;
	char *rx_tlr;               /* response trailers, field lines (malloc) */
	size_t rx_tlr_len;
};

static __thread struct list h2b_all;
static _Atomic int h2b_live;

static uint64_t now_ms(void)
{
	return th_ctx->now_ms;
}

int h2b_conn_count(void)
{
	return atomic_load(&h2b_live);
}

/* ---- which servers ---- */

/* Whether the ALPN list of <srv> (wire format) offers "h2". */
static int alpn_offers_h2(const struct server *srv)
{
	const unsigned char *p;
	size_t len;

	if (!srv->ssl || !srv->ssl->enabled || !srv->ssl->alpn)
		return 0;
	p = (const unsigned char *)srv->ssl->alpn;
	len = srv->ssl->alpn_len;
	for (size_t i = 0; i < len; i += 1 + p[i])
		if (p[i] == 2 && i + 3 <= len && p[i + 1] == 'h' && p[i + 2] == '2')
			return 1;
	return 0;
}

int h2b_srv_may_h2(const struct server *srv)
{
	if (srv->proto == SRV_PROTO_H2)
		return 1;
	return srv->proto == SRV_PROTO_AUTO && alpn_offers_h2(srv);
}

int h2b_conn_is_h2(const struct server *srv, const struct conn *c)
{
	const unsigned char *p = NULL;
	unsigned int len = 0;

	if (srv->proto != SRV_PROTO_AUTO)
		return srv->proto == SRV_PROTO_H2;
	if (!c->ssl || !alpn_offers_h2(srv))
		return 0;
	SSL_get0_alpn_selected(c->ssl, &p, &len);
	return len == 2 && !memcmp(p, "h2", 2);
}

/* ---- streams ---- */

static void h2bs_wake(struct h2bs *h)
{
	if (h->s)
		task_wakeup(h->s->task, TASK_WOKEN_IO);
}

static void h2b_wake(struct h2b *b)
{
	if (b)
		task_wakeup(b->task, TASK_WOKEN_MSG);
}

static void h2bs_free(struct h2bs *h)
{
	while (h->heads) {
		struct h2b_head *n = h->heads->next;

		free(h->heads);
		h->heads = n;
	}
	free(h->rx.area);
	free(h->rx_tlr);
	free(h->tlr);
	free(h);
}

/* How long an idle connection stays: the server's pool-purge-delay; at once
 * when it may carry no other stream. */
static void h2b_went_idle(struct h2b *b)
{
	int reuse_over = b->srv->max_reuse >= 0 && b->served > (uint64_t)b->srv->max_reuse;

	if (b->private || reuse_over || b->srv->pool_max_conn == 0 ||
	    atomic_load(&global.stopping))
		b->idle_exp = now_ms();
	else
		b->idle_exp = tick_add_ifset(now_ms(), b->srv->pool_purge_delay);
	if (!b->idle_exp)
		b->idle_exp = now_ms();
}

/* The server's time for the stream (set-timeout server, or the backend's). */
static void touch_server_timer(struct stream *s)
{
	int to = s->txn && s->txn->srv_timeout_ms ? s->txn->srv_timeout_ms :
	         s->be ? s->be->timeout_server : 0;

	s->srv_exp = tick_add_ifset(now_ms(), to);
}

/* ---- h2c callbacks (client role) ---- */

/* A copy of <msg> in one heap block, queued after the stream's heads. */
static int head_queue(struct h2bs *h, const struct http_msg *msg)
{
	size_t strs = msg->method.len + msg->uri.len + msg->reason.len + msg->version.len;
	struct h2b_head *hd, **tail;
	int n = 0;

	for (int i = 0; i < msg->nhdrs; i++) {
		if (msg->hdrs[i].name.len) {
			strs += msg->hdrs[i].name.len + msg->hdrs[i].value.len;
			n++;
		}
	}
	hd = malloc(sizeof(*hd) + (size_t)n * sizeof(struct http_hdr) + strs + 1);
	if (!hd)
		return -1;
	hd->next = NULL;
	hd->m.hdrs = hd->hdrs;
	hd->m.maxhdrs = n;
	if (http_msg_copy(&hd->m, msg, (char *)&hd->hdrs[n], strs + 1) < 0) {
		free(hd);
		return -1;
	}
	for (tail = &h->heads; *tail; tail = &(*tail)->next)
		;
	*tail = hd;
	return 0;
}

static int cb_head(void *owner, void *sctx, const struct http_msg *msg, int is_trailers,
                   int end_stream)
{
	struct h2bs *h = sctx;

	if (!h->s)
		return 0;
	if (is_trailers) {
		if (h2m_fields_to_lines(msg, &h->rx_tlr, &h->rx_tlr_len) < 0)
			return -1;
	} else if (head_queue(h, msg) < 0) {
		return -1;
	}
	if (end_stream)
		h->rx_eom = 1;
	touch_server_timer(h->s);
	h2bs_wake(h);
	return 0;
}

/* The stream window we give servers: tune.h2.initial-window-size, else
 * HAProxy's 65535 (a response is read ahead of a slow client by that much
 * per stream; the front side keeps one buffer instead, see mux_h2.c). */
static uint32_t back_window(void)
{
	struct h2c_settings t;

	h2_tune_get(&t);
	return t.initial_window_size ? t.initial_window_size : 65535;
}

static int cb_data(void *owner, void *sctx, const char *p, size_t len, int end_stream)
{
	struct h2bs *h = sctx;

	if (!h->s) {
		if (len && h->b)
			h2c_consumed(h->b->h2, h->sid, len);
		return 0;
	}
	if (len) {
		if (h2m_rx_put(&h->rx, p, len, back_window()) < 0)
			return -1;
		touch_server_timer(h->s);
	}
	if (end_stream)
		h->rx_eom = 1;
	h2bs_wake(h);
	return 0;
}

static void cb_reset(void *owner, void *sctx, uint32_t err)
{
	struct h2bs *h = sctx;

	h->failed = (int)err + 1;
	h->refused = err == H2C_REFUSED_STREAM;
	h->forgotten = 1;
	h2bs_wake(h);
}

static void cb_closed(void *owner, void *sctx)
{
	struct h2bs *h = sctx;

	h->forgotten = 1;
	h2bs_wake(h);
}

static ssize_t cb_data_out(void *owner, void *sctx, char *dst, size_t max, int *eom)
{
	struct h2bs *h = sctx;
	struct stream *s = h->s;
	size_t n = 0;

	if (!s) {
		*eom = H2C_EOM_END;
		return 0;
	}
	if (s->req.data) {
		n = s->req.data < max ? s->req.data : max;
		memcpy(dst, buf_head(&s->req), n);
		buf_consume(&s->req, n);
		touch_server_timer(s);
		task_wakeup(s->task, TASK_WOKEN_IO);   /* room for more */
	}
	if (h->tx_eom && !s->req.data) {
		*eom = H2C_EOM_END;
		if (h->tlr_len && h->b) {
			struct http_hdr t[H2B_TLR_MAX];
			int nt = h2m_lines_to_fields(h->tlr, h->tlr_len, t, H2B_TLR_MAX);

			if (nt) {
				*eom = H2C_EOM_TRAILERS;
				h2c_submit_trailers(h->b->h2, h->sid, t, nt);
			}
		}
		h->tx_done = 1;
		task_wakeup(s->task, TASK_WOKEN_IO);
	} else if (!n) {
		h->tx_blocked = 1;
	}
	return (ssize_t)n;
}

static const struct h2c_ops h2b_ops = {
	.head = cb_head,
	.data = cb_data,
	.reset = cb_reset,
	.closed = cb_closed,
	.data_out = cb_data_out,
};

/* ---- the connection ---- */

/* <wake>: the streams still attached are told (not at thread exit). */
static void h2b_free(struct h2b *b, int wake)
{
	struct list *pos, *tmp;
	/* before the server's SETTINGS, no request left (h2b_write()) */
	int none_sent = !h2c_peer_settings_known(b->h2);

	list_for_each_safe(pos, tmp, &b->streams) {
		struct h2bs *h = list_elem(pos, struct h2bs, list);

		list_del_init(&h->list);
		h->b = NULL;
		if (h->s)
			h->s->sc.ssl = NULL;   /* borrowed from b->c */
		if (!h->failed) {
			h->failed = H2C_INTERNAL_ERROR + 1;
			h->refused = none_sent;
		}
		h->forgotten = 1;
		if (wake)
			h2bs_wake(h);
	}
	h2_stats_flush(b->h2, &b->srv->be->be_mux.h2);
	CNT_DEC(b->srv->be->be_mux.h2.open_conns);
	atomic_fetch_sub_explicit(&b->srv->be->be_mux.h2.open_streams, b->nstreams,
	                          memory_order_relaxed);
	list_del_init(&b->by_srv);
	list_del_init(&b->by_thr);
	atomic_fetch_sub(&b->srv->used_conns, 1);
	atomic_fetch_sub(&h2b_live, 1);
	h2c_free(b->h2);
	conn_close(&b->c);
	if (b->rx.area)
		buf_release(&b->rx);
	if (b->tx.area)
		buf_release(&b->tx);
	task_destroy(b->task);
	free(b);
}

/* Reads what the socket has (one buffer at most) and feeds h2c. Returns 1
 * on progress, 0, -1 when the connection is over. */
static int h2b_read(struct h2b *b)
{
	ssize_t n;

	if (!(b->c.flags & CONN_F_RD_READY) || (b->c.flags & (CONN_F_RD_SHUT | CONN_F_ERROR)))
		return 0;
	if (!b->rx.area && buf_alloc(&b->rx) < 0)
		return 0;
	n = conn_recv(&b->c, &b->rx);
	if (n < 0)
		return (b->c.flags & CONN_F_ERROR) ? -1 : 0;
	if (n == 0)
		return -1;   /* the server closed */
	if (h2c_recv(b->h2, buf_head(&b->rx), b->rx.data) < 0)
		b->shut = 1;
	buf_release(&b->rx);   /* h2c took everything: an idle connection holds none */
	return 1;
}

/* Before the server's SETTINGS, only the preface and ours go (taken at
 * h2b_adopt()): requests wait for the server's limits. */
static int h2b_write(struct h2b *b)
{
	return h2m_write(&b->c, b->h2, &b->tx, h2c_peer_settings_known(b->h2));
}

static struct task *h2b_process(struct task *t, void *ctx, unsigned int state)
{
	struct h2b *b = ctx;
	int more = 0;

	for (int round = 0; round < H2B_ROUNDS; round++) {
		int p = 0, r;

		r = h2b_read(b);
		if (r < 0)
			goto dead;
		p |= r;
		r = h2b_write(b);
		if (r < 0)
			goto dead;
		p |= r;
		if (!p)
			break;
		more = round == H2B_ROUNDS - 1;
	}
	if (b->c.flags & (CONN_F_ERROR | CONN_F_HUP))
		goto dead;
	if (!b->settings_seen && h2c_peer_settings_known(b->h2)) {
		/* a websocket request waits for them (RFC 8441 allowed?) */
		struct list *pos;

		b->settings_seen = 1;
		for (pos = b->streams.next; pos != &b->streams; pos = pos->next)
			h2bs_wake(list_elem(pos, struct h2bs, list));
	}
	if (h2c_counters(b->h2)->goaway_recv)
		b->shut = 1;   /* the server goes away: no new stream */
	if (!h2c_want_read(b->h2) && !h2c_want_write(b->h2) && !b->tx.data)
		goto dead;
	if (b->shut && !b->nstreams && !h2c_want_write(b->h2) && !b->tx.data)
		goto dead;
	if (!b->nstreams && atomic_load(&global.stopping) && !b->shut)
		b->idle_exp = now_ms();   /* soft stop: idle connections go */
	if (!b->nstreams && b->idle_exp && now_ms() >= b->idle_exp && !b->shut) {
		/* idle too long: GOAWAY, then close once it is out */
		h2c_goaway_now(b->h2);
		b->shut = 1;
		h2b_write(b);
		if (!h2c_want_write(b->h2) && !b->tx.data)
			goto dead;
	}
	h2_stats_flush(b->h2, &b->srv->be->be_mux.h2);
	if (b->shut && !b->close_exp) {
		int to = b->srv->be->timeout_server_fin ? b->srv->be->timeout_server_fin :
		         b->srv->be->timeout_server;

		b->close_exp = tick_add_ifset(now_ms(), to);
		if (!b->close_exp)
			b->close_exp = now_ms() + H2B_CLOSE_GRACE_MS;
	}
	/* the streams still on it got their own timeouts; the connection
	 * itself goes at the deadline */
	if (b->shut && !b->nstreams && now_ms() >= b->close_exp)
		goto dead;
	if (more)
		task_wakeup(t, TASK_WOKEN_OTHER);
	task_set_expire(t, b->shut ? (b->nstreams ? 0 : b->close_exp) :
	                   b->nstreams ? 0 : b->idle_exp);
	return t;
dead:
	h2b_free(b, 1);
	return NULL;
}

static void attach_stream(struct h2b *b, struct h2bs *h, struct stream *s)
{
	h->b = b;
	h->s = s;
	list_append(&b->streams, &h->list);
	b->nstreams++;
	b->served++;
	CNT_INC(b->srv->be->be_mux.h2.total_streams);
	CNT_INC(b->srv->be->be_mux.h2.open_streams);
	b->idle_exp = 0;
	s->h2bs = h;
	/* the stream's view of its server connection: its addresses, for
	 * the log (%bi, %bp) and the fetches */
	s->sc.src = *conn_src(&b->c);
	s->sc.dst = *conn_dst(&b->c);
	s->sc.flags |= CONN_F_SRC_SET | CONN_F_DST_SET;
	s->sc.ssl = b->c.ssl;   /* borrowed (ssl_bc_*): given back at detach */
	s->h2_sfd = b->c.ph.fd;
	s->h2_ssid = 0;
}

static int h2b_has_room(struct h2b *b);

/* Moves <b> in its server's list: to the front when it has room (the most
 * recently used first, so that a connection carrying few streams empties
 * and goes), to the back when it has none. */
static void h2b_reorder(struct h2b *b)
{
	struct list *l = srv_h2_conns(b->srv);

	if (!l || !list_inlist(&b->by_srv))
		return;   /* private: in no list */
	list_del_init(&b->by_srv);
	if (h2b_has_room(b))
		list_insert(l, &b->by_srv);
	else
		list_append(l, &b->by_srv);
}

/* Whether <b> takes one more stream of <s>. */
static int h2b_has_room(struct h2b *b)
{
	int lim = h2c_peer_max_streams(b->h2);

	if (lim > H2B_MAX_STREAMS)
		lim = H2B_MAX_STREAMS;
	if (b->shut || b->noroom || b->private || h2c_counters(b->h2)->goaway_recv)
		return 0;
	if (b->srv->max_reuse >= 0 && b->served > (uint64_t)b->srv->max_reuse)
		return 0;
	return b->nstreams < lim;
}

int h2b_attach(struct stream *s)
{
	struct server *srv = s->srv;
	struct list *l, *pos;
	struct h2bs *h;

	if (!srv || !h2b_srv_may_h2(srv) || !srv->idle || s->be->http_reuse == PX_REUSE_NEVER)
		return 0;
	l = srv_h2_conns(srv);
	if (!l)
		return 0;
	/* connections with room come first (see h2b_reorder()): a few looks
	 * find one if there is one, however many are full */
	pos = l->next;
	for (int n = 0; n < H2B_ATTACH_LOOKS && pos != l; n++, pos = pos->next) {
		struct h2b *b = list_elem(pos, struct h2b, by_srv);

		if (!h2b_has_room(b))
			continue;
		h = calloc(1, sizeof(*h));
		if (!h)
			return 0;
		attach_stream(b, h, s);
		h2b_reorder(b);
		return 1;
	}
	return 0;
}

int h2b_adopt(struct stream *s)
{
	struct server *srv = s->srv;
	struct list *l = srv_h2_conns(srv);
	struct h2b *b;
	struct h2bs *h;
	struct h2c_settings set;
	ssize_t n;

	if (!l)
		return -1;
	b = calloc(1, sizeof(*b));
	h = calloc(1, sizeof(*h));
	if (!b || !h)
		goto fail;
	h2_tune_get(&set);
	set.initial_window_size = back_window();
	set.max_header_list = (uint32_t)global.bufsize;
	b->task = task_new(h2b_process, b, th_ctx->tid, TC_NORMAL, "h2 srv conn");
	b->h2 = h2c_new(0, &set, &h2b_ops, b);
	if (!b->task || !b->h2)
		goto fail;
	/* what the stream queued for the connection (a PROXY header) goes
	 * before the preface */
	if (s->srv_m.tx.data) {
		if (buf_alloc(&b->tx) < 0 || s->srv_m.tx.data > b->tx.size)
			goto fail;
		memcpy(b->tx.area, buf_head(&s->srv_m.tx), s->srv_m.tx.data);
		b->tx.data = s->srv_m.tx.data;
		h1m_reset(&s->srv_m);
	}
	/* the preface and our SETTINGS, before any stream's frame (see
	 * h2b_write()) */
	if (!b->tx.area && buf_alloc(&b->tx) < 0)
		goto fail;
	n = h2c_send(b->h2, buf_tail(&b->tx), buf_room(&b->tx));
	if (n > 0)
		b->tx.data += (size_t)n;
	list_init(&b->streams);
	b->srv = srv;
	b->private = s->be->http_reuse == PX_REUSE_NEVER || srv->send_proxy;
	conn_init(&b->c, b->task);
	conn_move(&b->c, &s->sc, b->task);
	conn_init(&s->sc, s->task);
	/* a private connection is nobody else's: out of the list that
	 * h2b_attach() walks, which then holds only shared ones (at most one
	 * per 100 streams in flight) */
	if (b->private)
		list_init(&b->by_srv);
	else
		list_insert(l, &b->by_srv);
	if (!h2b_all.next)
		list_init(&h2b_all);
	list_append(&h2b_all, &b->by_thr);
	atomic_fetch_add(&h2b_live, 1);
	CNT_INC(srv->be->be_mux.h2.total_conns);
	CNT_INC(srv->be->be_mux.h2.open_conns);
	attach_stream(b, h, s);
	task_wakeup(b->task, TASK_WOKEN_OTHER);
	return 0;
fail:
	if (b) {
		if (b->tx.area)
			buf_release(&b->tx);
		if (b->h2)
			h2c_free(b->h2);
		if (b->task)
			task_destroy(b->task);
		free(b);
	}
	free(h);
	return -1;
}

/* ---- the stream's side ---- */

int h2bs_snd_head(struct h2bs *h, const struct http_msg *msg, int end)
{
	struct h2b *b = h->b;
	int32_t sid;

	if (!b || h->failed)
		return -2;
	sid = h2c_submit_request(b->h2, msg, h, end);
	if (sid > 0) {
		h->sid = sid;
		if (h->s)
			h->s->h2_ssid = sid;
		if (end)
			h->tx_eom = h->tx_done = 1;
		h2b_wake(b);
		return 0;
	}
	switch (sid) {
	case H2C_E_AGAIN:
		return 1;   /* woken when the server's SETTINGS come */
	case H2C_E_NOSTREAM:
		b->noroom = 1;
		h2b_reorder(b);
		return -2;
	case H2C_E_CLOSED:
		b->shut = 1;
		h2b_reorder(b);
		return -2;
	default:
		return -1;
	}
}

void h2bs_snd_body(struct h2bs *h, int eom, const char *tlr, size_t tlr_len)
{
	int news = 0;

	if (eom && !h->tx_eom) {
		h->tx_eom = 1;
		news = 1;
		if (tlr_len && (h->tlr = malloc(tlr_len))) {
			memcpy(h->tlr, tlr, tlr_len);
			h->tlr_len = tlr_len;
		}
	}
	if (h->s && h->s->req.data)
		news = 1;
	if (h->b && !h->forgotten && h->sid && !h->tx_done && h->tx_blocked && news) {
		h->tx_blocked = 0;
		h2c_resume(h->b->h2, h->sid);
		h2b_wake(h->b);
	}
}

int h2bs_tx_finished(const struct h2bs *h)
{
	return h->tx_done || h->failed;
}

enum h1_result h2bs_rcv_head(struct h2bs *h, struct buffer *chan, size_t max,
                             struct http_msg *m, struct h1_error *err)
{
	struct h2b_head *hd = h->heads;
	ssize_t n;

	if (!hd)
		return H1_INCOMPLETE;
	if (!chan->area && buf_alloc(chan) < 0)
		return H1_INCOMPLETE;
	chan->head = chan->data = 0;
	if (max > chan->size)
		max = chan->size;
	n = http_msg_copy(m, &hd->m, chan->area, max);
	if (n < 0) {
		err->status = 502;
		err->reason = "response head too large";
		err->offset = 0;
		return H1_ERROR;
	}
	chan->data = (size_t)n;
	m->head_len = (size_t)n;
	h->heads = hd->next;
	free(hd);
	return H1_OK;
}

int h2bs_rcv_body(struct h2bs *h, struct buffer *chan)
{
	size_t n = h2m_rx_move(&h->rx, chan);

	if (!n)
		return 0;
	if (h->s)
		h->s->bytes_out += n;
	if (h->b && !h->forgotten) {
		h2c_consumed(h->b->h2, h->sid, n);
		h2b_wake(h->b);
	}
	return 1;
}

int h2bs_rx_done(const struct h2bs *h)
{
	return h->rx_eom && !h->rx.data && !h->heads;
}

size_t h2bs_rx_pending(const struct h2bs *h)
{
	return h->rx.data + (h->heads ? 1 : 0);
}

const char *h2bs_rx_trailers(const struct h2bs *h, size_t *len)
{
	*len = h->rx_tlr_len;
	return h->rx_tlr;
}

int h2bs_failed(const struct h2bs *h)
{
	return h->failed;
}

int h2bs_refused(const struct h2bs *h)
{
	return h->refused;
}

void h2bs_detach(struct h2bs *h)
{
	struct h2b *b = h->b;

	if (h->s)
		h->s->sc.ssl = NULL;   /* borrowed from b->c */
	h->s = NULL;
	if (b) {
		list_del_init(&h->list);
		b->nstreams--;
		CNT_DEC(b->srv->be->be_mux.h2.open_streams);
		if (h->sid)
			b->noroom = 0;   /* a stream of the server's count ended */
		if (h->sid && !h->forgotten)
			h2c_detach(b->h2, h->sid);
		if (!b->nstreams)
			h2b_went_idle(b);
		h2b_reorder(b);
		h2b_wake(b);
	}
	h2bs_free(h);
}

/* ---- thread exit ---- */

static void h2b_thread_deinit(int tid)
{
	if (!h2b_all.next)
		return;
	while (!list_empty(&h2b_all))
		h2b_free(list_elem(h2b_all.next, struct h2b, by_thr), 0);
}

static struct thread_init_hook h2b_thread_hook = { .deinit = h2b_thread_deinit };

__attribute__((constructor)) static void h2b_register(void)
{
	thread_register_init(&h2b_thread_hook);
}
