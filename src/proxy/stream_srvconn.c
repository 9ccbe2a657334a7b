/* Server connections of HTTP streams: keeping one for the client's next
 * request, handing it to the server's idle pool (srv_idle.c) or closing
 * it at the end of a transaction, taking one per http-reuse, and retrying
 * a request on a new connection (retry-on). Split from stream_http.c;
 * owner thread only, like the stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/socket.h>
#include <openssl/ssl.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/core/poller.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include <sluice/http/act.h>
#include <sluice/http/errors.h>
#include <sluice/http/h1.h>
#include <sluice/http/h1_out.h>
#include <sluice/http/msgedit.h>
#include <sluice/http/mux_h2_back.h>
#include <sluice/http/txn.h>
#include <sluice/net/addr.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/lb_hash.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_idle.h>
#include <sluice/proxy/stream_int.h>


static uint64_t now_ms(void)
{
	return th_ctx->now_ms;
}

/* ---- layer-7 retries (retry-on) ---- */

/* Keeps a copy of the serialised request when it is whole (head in the
 * server's mux, body complete in the request channel), as HAProxy retries
 * only requests it still has entirely. The body moves into the server's
 * mux right away, framed: the copy is what the mux will send. */
void http_retry_snapshot(struct stream *s)
{
	struct http_txn *t = s->txn;
	struct buffer body = s->req;

	if (!t->req_body.done || t->req.head_len > s->req.data)
		return;
	body.head += t->req.head_len;
	body.data -= t->req.head_len;
	const char *tlr;
	size_t tlen;

	tlr = http_cli_trailers(s, &tlen);
	if (h1m_put_body(&s->srv_m, &body, 1, tlr, tlen) < 0)
		return;   /* nothing moved: too big to keep */
	s->req.data = t->req.head_len;
	t->retry_copy = malloc(s->srv_m.tx.data);
	if (!t->retry_copy)
		return;
	memcpy(t->retry_copy, buf_head(&s->srv_m.tx), s->srv_m.tx.data);
	t->retry_len = s->srv_m.tx.data;
}

/* Retries the request when <why> is one of the backend's retry-on
 * conditions, a copy of the request exists, retries are left and nothing
 * of a response went to the client. The server connection is dropped, the
 * copy put back in the server's mux, and the stream goes back to
 * connecting (or to the balancer on redispatch). Returns 1 if it did. */
static int l7_retry(struct stream *s)
{
	struct http_txn *t = s->txn;

	if (!t->retry_copy || s->retries_left <= 0 || !s->srv ||
	    (t->flags & TX_F_RES_STARTED) || t->resp_interim)
		return 0;
	if (conn_is_open(&s->sc)) {
		atomic_fetch_sub(&s->srv->used_conns, 1);
		conn_close(&s->sc);
	}
	if (s->h1_be_strm) {
		/* the request's HTTP/1 stream ends with its connection */
		CNT_DEC(s->h1_be_strm->open_streams);
		s->h1_be_strm = NULL;
	}
	if (s->h2bs) {
		h2bs_detach(s->h2bs);
		s->h2bs = NULL;
	}
	conn_init(&s->sc, s->task);
	s->sc_srv = NULL;
	h1m_reset(&s->srv_m);
	if (h1m_put_raw(&s->srv_m, t->retry_copy, t->retry_len) < 0)
		return 0;
	s->srv_m.tx_mode = H1M_B_NONE;
	s->srv_m.tx_done = 1;
	s->res.head = s->res.data = 0;
	t->flags &= ~(TX_F_RES_GONE | TX_F_SRV_CLOSE);
	t->res.head_len = 0;
	t->res.nhdrs = 0;
	t->resp_interim = 0;
	t->srv_status = -1;
	t->req_sent_ms = 0;
	s->srv_exp = 0;
	stream_retry(s);
	task_wakeup(s->task, TASK_WOKEN_OTHER);
	return 1;
}

int http_l7_retry(struct stream *s, unsigned int why)
{
	return (s->be->retry_on & why) && l7_retry(s);
}

int http_reuse_retry(struct stream *s)
{
	return s->sc_reqs > 1 && l7_retry(s);
}

unsigned int http_retry_bit_of_status(int status)
{
	switch (status) {
	case 404: return RETRY_ON_404;
	case 408: return RETRY_ON_408;
	case 425: return RETRY_ON_425;
	case 500: return RETRY_ON_500;
	case 501: return RETRY_ON_501;
	case 502: return RETRY_ON_502;
	case 503: return RETRY_ON_503;
	case 504: return RETRY_ON_504;
	default:  return 0;
	}
}

/* ---- HTTP/1 connections and streams (show stat h1_*) ---- */

void http_h1_srv_conn_new(struct stream *s)
{
	struct h1_counters *h1 = &s->be->be_mux.h1;

	conn_count_start(&s->sc, &h1->conn);
	CNT_INC(h1->total_conns);
	http_h1_be_strm_begin(s);
}

void http_h1_be_strm_begin(struct stream *s)
{
	if (s->h1_be_strm || s->h2bs)
		return;
	s->h1_be_strm = &s->be->be_mux.h1;
	CNT_INC(s->h1_be_strm->total_streams);
	CNT_INC(s->h1_be_strm->open_streams);
}

void http_h1_strm_end(struct stream *s)
{
	if (s->http_flags & SF_H1_FE_STRM) {
		s->http_flags &= ~SF_H1_FE_STRM;
		CNT_DEC(s->fe->fe_mux.h1.open_streams);
	}
	if (s->h1_be_strm) {
		CNT_DEC(s->h1_be_strm->open_streams);
		s->h1_be_strm = NULL;
	}
}

/* ---- end of a transaction ---- */

enum sc_plan http_server_conn_plan(struct stream *s)
{
	struct http_txn *t = s->txn;
	int reusable = conn_is_open(&s->sc) && s->srv &&
	               !(t->flags & (TX_F_SRV_CLOSE | TX_F_REPLIED)) && t->req_body.done &&
	               h1m_tx_finished(&s->srv_m) && !s->srv_m.rx.data && s->res.data == 0 &&
	               !(s->sc.flags & (CONN_F_ERROR | CONN_F_HUP | CONN_F_RD_SHUT));
	int waiters;

	if (t->flags & TX_F_REPLIED && conn_is_open(&s->sc) && s->sc_srv &&
	    !(t->flags & TX_F_SRV_CLOSE))
		return SC_PLAN_NONE;   /* untouched kept connection: stays */
	if (!conn_is_open(&s->sc))
		return SC_PLAN_NONE;
	if (s->srv && s->srv->pool_max_conn == 0)
		reusable = 0;   /* pool-max-conn 0: never kept, even for this client */
	if (s->srv && s->srv->max_reuse >= 0 && s->sc_reqs > s->srv->max_reuse)
		reusable = 0;   /* max-reuse: reused as many times as allowed */
	/* the client leaves, or requests wait for this server: the connection
	 * goes where they can take it, instead of staying with this client:
	 * with the slot to the next waiter, else to the pool */
	waiters = reusable && (atomic_load(&s->srv->queue.len) || atomic_load(&s->be->queue.len));
	if (reusable && ((t->flags & TX_F_CLI_CLOSE) || waiters) &&
	    s->be->http_reuse != PX_REUSE_NEVER && !s->srv->send_proxy)
		return s->has_slot && waiters ? SC_PLAN_OFFER : SC_PLAN_POOL;
	if (reusable && !(t->flags & TX_F_CLI_CLOSE))
		return SC_PLAN_STAY;
	return SC_PLAN_CLOSE;
}

void http_server_conn_apply(struct stream *s, enum sc_plan plan)
{
	h1m_end_msgs(&s->srv_m);   /* the transaction's messages are over */
	if (s->h2bs) {
		/* the HTTP/2 connection stays with its other streams */
		h2bs_detach(s->h2bs);
		s->h2bs = NULL;
		conn_init(&s->sc, s->task);
		return;
	}
	switch (plan) {
	case SC_PLAN_NONE:
		return;
	case SC_PLAN_OFFER:
		s->sc_srv = NULL;
		http_release_slot_offer(s);
		return;
	case SC_PLAN_POOL:
		if (srv_idle_put(s->srv, &s->sc, s->sc_reqs) == 0) {
			atomic_fetch_sub(&s->srv->used_conns, 1);
			conn_init(&s->sc, s->task);
			s->sc_srv = NULL;
			return;
		}
		if (!(s->txn->flags & TX_F_CLI_CLOSE)) {
			s->sc_srv = s->srv;   /* the pool is full: kept for this client */
			return;
		}
		break;
	case SC_PLAN_STAY:
		s->sc_srv = s->srv;   /* kept for the next request of this client */
		return;
	case SC_PLAN_CLOSE:
		break;
	}
	atomic_fetch_sub(&(s->sc_srv ? s->sc_srv : s->srv)->used_conns, 1);
	conn_close(&s->sc);
	conn_init(&s->sc, s->task);
	s->sc_srv = NULL;
}

void http_release_slot_offer(struct stream *s)
{
	struct server *srv = s->srv;
	/* an idle connection has room to write; if not, the taker's send
	 * says EAGAIN and waits for the edge like any other */
	struct conn_offer o = { .fd = s->sc.ph.fd, .reqs = s->sc_reqs, .ssl = s->sc.ssl,
	                        .flags = CONN_F_WR_READY | CONN_F_CONNECTED |
	                                 (s->sc.flags & (CONN_F_RD_READY | CONN_F_RDHUP | CONN_F_HUP)) };

	s->has_slot = 0;
	srv_release_slot_offer(srv, &o);
	if (o.taken) {
		/* the waiter owns it now, and it still counts in used_conns.
		 * Before polling again, no event may reach this stream, which
		 * may be gone by then: a waiter of this thread finds it parked
		 * in the poller (events kept for it, no syscall); one of
		 * another thread registers it with its own poller */
		if (o.taker_tid == th_ctx->tid)
			poller_fd_set_owner(o.fd, NULL);
		else
			poller_fd_del(o.fd);
		conn_init(&s->sc, s->task);   /* the SSL went with it */
		return;
	}
	atomic_fetch_sub(&srv->used_conns, 1);
	if (srv_idle_put(srv, &s->sc, s->sc_reqs) < 0)
		conn_close(&s->sc);
	conn_init(&s->sc, s->task);
}

int http_take_conn_mode(const struct stream *s)
{
	enum px_http_reuse mode = s->be->http_reuse;

	if (!s->txn || mode == PX_REUSE_NEVER)
		return 0;
	if (mode == PX_REUSE_ALWAYS || !(s->txn->flags & TX_F_FIRST_REQ))
		return 1;
	return mode == PX_REUSE_AGGRESSIVE ? 2 : 0;
}

void http_adopt_handed_conn(struct stream *s, struct server *srv)
{
	int fd = s->pend.hfd;
	struct ssl_st *ssl = s->pend.hssl;

	s->pend.hfd = -1;
	s->pend.hssl = NULL;
	if (conn_is_open(&s->sc) || conn_adopt(&s->sc, fd, s->pend.hflags, ssl) < 0) {
		/* cannot happen (a queued stream keeps no connection), or the
		 * poller refused it: the connection ends here */
		SSL_free(ssl);
		conn_fd_close(fd);
		atomic_fetch_sub(&srv->used_conns, 1);
		CNT_DEC(srv->be->be_mux.h1.conn.open);
		return;
	}
	/* an HTTP/1 connection of srv's backend, counted open all along */
	conn_count_resume(&s->sc, &srv->be->be_mux.h1.conn);
	s->sc_srv = srv;
	s->sc_reqs = s->pend.hreqs;
}


/* ---- connection reuse ---- */

/* Pooled for less than this, an idle connection is taken without a peek. */
#define IDLE_PEEK_MS  1000

/* Whether an idle server connection was closed (or spoke) while idle. */
static int idle_conn_dead(const struct conn *c)
{
	char b;
	ssize_t n;

	if (c->flags & (CONN_F_HUP | CONN_F_ERROR | CONN_F_RD_SHUT | CONN_F_RDHUP))
		return 1;
	if (c->ssl)
		return 0;   /* a TLS record (a ticket) may legitimately wait there */
	n = recv(c->ph.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

/* The stream goes on a connection it did not open: no connect time, the
 * request leaves at once. */
static void reused(struct stream *s)
{
	CNT_INC(s->srv->cnt.reuse);
	CNT_INC(s->be->be_cnt.reuse);
	s->Tc = 0;
	s->ctime_us = 0;
	s->srv_exp = tick_add_ifset(now_ms(), s->be->timeout_server);
	s->st = SST_HTTP_XFER;
}

int http_reuse_conn(struct stream *s)
{
	struct http_txn *t = s->txn;
	enum px_http_reuse mode = s->be->http_reuse;
	int got = 0, reqs = 0;
	uint64_t idle_ms = 0;

	if (conn_is_open(&s->sc)) {
		if (s->sc_srv == s->srv) {
			got = 1;
			reqs = s->sc_reqs;
		} else {
			/* kept for another server: pool it, or close it */
			if (mode == PX_REUSE_NEVER || srv_idle_put(s->sc_srv, &s->sc, s->sc_reqs) < 0)
				conn_close(&s->sc);
			atomic_fetch_sub(&s->sc_srv->used_conns, 1);
			conn_init(&s->sc, s->task);
			s->sc_srv = NULL;
		}
	}
	/* an HTTP/2 connection of this thread with a free stream */
	if (!got && h2b_attach(s)) {
		reused(s);
		return 1;
	}
	/* an idle connection the server closed a moment ago (its FIN not
	 * seen by the poller yet) would fail the request: a peek tells, and
	 * the next idle one, or a new connection, is taken instead. Not for
	 * one pooled a moment ago (under load, every one): servers close
	 * idle connections after seconds, and the poller has told of any
	 * close older than its last wait; the rare miss is retried (HTTP/2
	 * clients, http_reuse_retry()) or closes the client silently, as in
	 * HAProxy, which never peeks */
	for (int tries = 0; !got && tries < 4 && mode != PX_REUSE_NEVER &&
	     (mode == PX_REUSE_ALWAYS || !(t->flags & TX_F_FIRST_REQ) || mode == PX_REUSE_AGGRESSIVE) &&
	     srv_idle_take(s->srv, &s->sc, s->task,
	                   mode == PX_REUSE_AGGRESSIVE && (t->flags & TX_F_FIRST_REQ), &reqs,
	                   &idle_ms); tries++) {
		if (idle_ms >= IDLE_PEEK_MS && idle_conn_dead(&s->sc)) {
			conn_close(&s->sc);
			conn_init(&s->sc, s->task);
			continue;
		}
		srv_used_conns_inc(s->srv);
		got = 1;
	}
	if (!got)
		return 0;
	s->sc_reqs = reqs + 1;
	s->sc_srv = NULL;
	http_h1_be_strm_begin(s);
	reused(s);
	return 1;
}


void http_release_kept_conn(struct stream *s)
{
	struct server *sv = s->sc_srv;

	if (!conn_is_open(&s->sc) || !sv)
		return;
	atomic_fetch_sub(&sv->used_conns, 1);
	if (sv->be->http_reuse == PX_REUSE_NEVER || srv_idle_put(sv, &s->sc, s->sc_reqs) < 0)
		conn_close(&s->sc);
	conn_init(&s->sc, s->task);
	s->sc_srv = NULL;
}
