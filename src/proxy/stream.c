/* TCP streams: accept, backend and server choice, queueing, connection with
 * retries, bidirectional forwarding with half-close, timeouts, logging.
 *
 * A stream belongs to the thread that accepted its client connection; only
 * that thread runs its task and touches its connections and buffers. Other
 * threads reach it only through the server queue hand-over (queue.c), which
 * wakes its task. The per-thread list of streams (for `show sess`), its
 * links (s->list) and its count are protected by that thread's stream-list
 * lock (struct sl_lock, kind "stream_list"), taken by the owner only at
 * creation and release, and by `show sess` for one bounded batch at a time
 * (a cursor node it leaves in the list marks where the next batch starts).
 *
 * Times: a stream that waited in a queue records its wait (from queue_add()
 * to the hand-over of its slot) in the histogram of the queue it left; one
 * that reached a server records its connect time in the server's histogram
 * when the connection is established, and at its end its session time in
 * the server's histogram and its queue, connect and session times in the
 * server's and backend's sliding averages (show stat qtime, ctime, ttime).
 * Dates are the thread's loop date in ns (sched_now_ns(): no clock read per
 * event, precise to one loop iteration); the log's %Tw/%Tc keep using the
 * loop's ms.
 *
 * Forwarding is bounded per wake-up: at most FWD_MAX_ROUNDS reads and writes
 * per direction; if more could be done, the task wakes itself again and goes
 * to the tail of its run list, so one busy stream cannot hold a loop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include <openssl/ssl.h>
#include <sluice/core/clock.h>
#include <sluice/core/fd_budget.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>
#include <sluice/mgmt/cli.h>
#include <sluice/net/addr.h>
#include <sluice/http/h1.h>
#include <sluice/http/mux_h2.h>
#include <sluice/http/mux_h2_back.h>
#include <sluice/http/txn.h>
#include <sluice/core/thread.h>
#include <sluice/net/listener.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/net/ssl_crt.h>
#include <sluice/net/tls.h>
#include <sluice/net/conn_err.h>
#include <sluice/net/proxy_proto.h>
#include <sluice/proxy/lb.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_opts.h>
#include <sluice/proxy/srv_idle.h>
#include <sluice/proxy/stream.h>
#include <sluice/lua/lua.h>
#include <sluice/proxy/stream_int.h>

#define FWD_MAX_ROUNDS 4

struct stream_list thr_streams[MAX_THREADS];

static _Atomic uint64_t next_uniq_id;

uint64_t stream_next_id(void)
{
	return atomic_fetch_add(&next_uniq_id, 1);
}
static POOL_DECLARE(pool_stream, "stream", struct stream)

__attribute__((constructor)) static void stream_lists_init(void)
{
	for (int i = 0; i < MAX_THREADS; i++) {
		lock_init(&thr_streams[i].lock, LK_STREAM_LIST, "streams");
		list_init(&thr_streams[i].head);
	}
}

static struct task *stream_process(struct task *t, void *ctx, unsigned int state);

int64_t stream_wall_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* ---- logging ---- */

void stream_log_fields_tcp(struct stream *s, struct log_fields *f)
{
	memset(f, 0, sizeof(*f));
	f->cli = s->cli.src;
	f->fe = *conn_dst(&s->cli);
	if (conn_is_open(&s->sc) || (s->sc.flags & CONN_F_SRC_SET))
		f->be_src = *conn_src(&s->sc);
	if (s->srv)
		f->srv = s->srv->addr.ss;
	f->fe_name = s->fe->name;
	if (s->cli.ssl) {
		f->fe_ssl = 1;
		f->ssl_version = SSL_get_version(s->cli.ssl);
		f->ssl_cipher = SSL_get_cipher_name(s->cli.ssl);
	}
	f->be_name = s->be ? s->be->name : s->fe->name;
	f->srv_name = s->srv ? s->srv->name : NULL;
	f->accept_us = s->accept_us;
	f->Tw = s->Tw;
	f->Tc = s->Tc;
	f->Tt = (int)(th_ctx->now_ms - s->accept_ms);
	f->bytes_in = s->bytes_in;
	f->bytes_out = s->bytes_out;
	memcpy(f->term, s->term, sizeof(f->term));
	f->actconn = atomic_load(&global.actconn);
	f->feconn = atomic_load(&s->fe->feconn);
	f->beconn = s->be ? atomic_load(&s->be->beconn) : 0;
	f->srv_conn = s->srv ? atomic_load(&s->srv->served) : 0;
	f->retries = s->retries_done;
	f->redispatched = s->redispatched;
	f->srv_queue = s->srv_queue_len;
	f->be_queue = s->be_queue_len;
	f->pid = global.pid;
	f->thread = th_ctx->tid;
}

void stream_send_log(struct stream *s, const struct lf_expr *fmt)
{
	char line[2048];
	size_t len;
	int lg = s->fe->options & PX_O_LOG_GLOBAL;

	if (list_empty(&s->fe->logs) && !(lg && !list_empty(&global.logs)))
		return;
	len = stream_lf_render(s, fmt, line, sizeof(line));   /* %[...] too */
	if (!list_empty(&s->fe->logs))
		log_send(&s->fe->logs, 6, s->fe->log_tag, global.pid, line, len);
	if (lg)
		log_send(&global.logs, 6, s->fe->log_tag, global.pid, line, len);
}

/* Without `option tcplog` or `log-format`, HAProxy logs one line per
 * connection when it is accepted. */
static struct lf_expr connect_fmt, connect_fmt_http, hs_err_fmt;
static int connect_fmt_ready;

static void stream_log_connect(struct stream *s)
{
	if (s->fe->logfmt.count)
		return;
	if (!connect_fmt_ready)
		return;
	stream_send_log(s, s->fe->mode == PX_MODE_HTTP ? &connect_fmt_http : &connect_fmt);
}

static void stream_log_end(struct stream *s)
{
	if (!s->fe->logfmt.count)
		return;
	if ((s->fe->options & PX_O_DONTLOGNULL) && !s->bytes_in && !s->bytes_out)
		return;
	stream_send_log(s, &s->fe->logfmt);
}

static int stream_cli_xprt_start(struct stream *s, const void *early, size_t len);

/* ---- life cycle ---- */

/* The session is established: PROXY header read, TLS handshake done. The
 * tcp-request session rules run now, as in HAProxy (they may read the
 * addresses a PROXY header gave, and the TLS session). Returns 0, or -1
 * when they refused it (stream closed, nothing logged: no session). */
static int stream_session_ready(struct stream *s)
{
	if (stream_tcp_sess_rules(s) == 0) {
		stkctr_session_new(s);
		return 0;
	}
	s->term[0] = 'P';
	s->term[1] = 'R';
	s->st = SST_CLOSED;
	return -1;
}

int stream_accept(struct listener *l, int fd, const struct sockaddr_storage *from)
{
	struct stream *s = pool_zalloc(&pool_stream);
	struct proxy *fe = l->fe;
	int tid = th_ctx->tid;

	if (!s)
		goto fail;
	s->task = task_new(stream_process, s, tid, TC_NORMAL, "stream");
	if (!s->task || buf_alloc(&s->req) < 0 || buf_alloc(&s->res) < 0)
		goto fail;
	if (fe->mode != PX_MODE_HTTP)
		s->uniq_id = stream_next_id();   /* HTTP numbers each request */
	s->lst = l;
	s->fe = fe;
	pendconn_init(&s->pend, s->task);
	vars_init(&s->vars_sess, VAR_SCOPE_SESS);
	vars_init(&s->vars_txn, VAR_SCOPE_TXN);
	conn_init(&s->cli, s->task);
	conn_init(&s->sc, s->task);
	h1m_init(&s->cli_m, &s->cli, &s->bytes_in, &s->bytes_out);
	h1m_init(&s->srv_m, &s->sc, NULL, NULL);
	s->cli.src = *from;
	s->cli.flags |= CONN_F_SRC_SET;   /* dst: looked up when needed */
	if (conn_attach(&s->cli, fd) < 0)
		goto fail;
	strcpy(s->term, "--");
	s->Tw = s->Tc = -1;
	s->accept_us = stream_wall_us();
	s->accept_ms = th_ctx->now_ms;
	s->accept_ns = sched_now_ns();
	s->st = l->bc->accept_proxy ? SST_PROXY_HDR : SST_ASSIGN;
	if (fe->mode == PX_MODE_HTTP && http_stream_start(s) < 0)
		goto fail;
	s->cli_exp = tick_add_ifset(th_ctx->now_ms, fe->timeout_client);

	atomic_fetch_add(&fe->feconn, 1);
	cnt_update_max(&fe->fe_cnt.cur_max, atomic_load(&fe->feconn));
	CNT_INC(fe->fe_cnt.cum_conn);
	CNT_INC(fe->fe_cnt.cum_sess);
	atomic_fetch_add(&global.cum_sess, 1);
	if (fe->mode != PX_MODE_HTTP)
		atomic_fetch_add(&global.cum_req, 1);   /* HTTP counts its requests */

	lock_take(&thr_streams[tid].lock);
	list_append(&thr_streams[tid].head, &s->list);
	thr_streams[tid].count++;
	lock_release(&thr_streams[tid].lock);
	th_ctx->conns++;

	if (stream_tcp_conn_rules(s) < 0) {
		/* refused before anything else: no log, as HAProxy */
		s->term[0] = 'P';
		s->term[1] = 'R';
		s->st = SST_CLOSED;
	} else if (s->st != SST_PROXY_HDR) {
		/* with a PROXY header, TLS starts after it */
		if (stream_cli_xprt_start(s, NULL, 0) < 0) {
			s->term[0] = 'R';
			s->term[1] = 'R';
			s->st = SST_CLOSED;
		}
		/* without TLS the session is there at once (refused: no log);
		 * with TLS, once the handshake is done, as HAProxy */
		if (s->st == SST_CLOSED ||
		    (s->st != SST_CLI_HANDSHAKE && stream_session_ready(s) == 0))
			stream_log_connect(s);
	}
	task_wakeup(s->task, TASK_WOKEN_OTHER);
	return 0;
fail:
	if (s) {
		if (conn_is_open(&s->cli))
			conn_close(&s->cli);
		else
			conn_fd_close(fd);
		buf_release(&s->req);
		buf_release(&s->res);
		task_destroy(s->task);
		pool_free(&pool_stream, s);
	} else {
		conn_fd_close(fd);
	}
	return -1;
}

struct stream *stream_new_h2(struct listener *l, const struct conn *cli, struct h2s *h,
                             const struct http_msg *msg, int first)
{
	struct stream *s = pool_zalloc(&pool_stream);
	struct proxy *fe = l->fe;
	int tid = th_ctx->tid;

	if (!s)
		return NULL;
	s->task = task_new(stream_process, s, tid, TC_NORMAL, "stream");
	if (!s->task || buf_alloc(&s->req) < 0 || buf_alloc(&s->res) < 0)
		goto fail;
	s->lst = l;
	s->fe = fe;
	s->h2s = h;
	s->h2_cfd = cli->ph.fd;
	s->h2_csid = h2s_id(h);
	pendconn_init(&s->pend, s->task);
	vars_init(&s->vars_sess, VAR_SCOPE_SESS);
	vars_init(&s->vars_txn, VAR_SCOPE_TXN);
	/* the connection's addresses and TLS session, no descriptor */
	conn_init(&s->cli, s->task);
	conn_init(&s->sc, s->task);
	s->cli.src = cli->src;
	s->cli.dst = *conn_dst((struct conn *)cli);
	s->cli.flags |= CONN_F_SRC_SET | CONN_F_DST_SET;
	s->cli.ssl = cli->ssl;
	h1m_init(&s->cli_m, &s->cli, &s->bytes_in, &s->bytes_out);
	h1m_init(&s->srv_m, &s->sc, NULL, NULL);
	strcpy(s->term, "--");
	s->Tw = s->Tc = -1;
	s->accept_us = stream_wall_us();
	s->accept_ms = th_ctx->now_ms;
	s->accept_ns = sched_now_ns();
	s->st = SST_ASSIGN;
	/* the connection's first request is its first stream's (http-reuse) */
	s->txn_count = first ? 0 : 1;
	if (http_stream_start(s) < 0)
		goto fail;
	s->http_flags |= SF_H2;
	s->cli_exp = tick_add_ifset(th_ctx->now_ms, fe->timeout_client);
	lock_take(&thr_streams[tid].lock);
	list_append(&thr_streams[tid].head, &s->list);
	thr_streams[tid].count++;
	lock_release(&thr_streams[tid].lock);
	/* the connection's tracked counters, before its rules run */
	if (h2s_session_counters(h))
		stkctr_share_session(s, h2s_session_counters(h));
	http_stream_h2_request(s, msg);
	task_wakeup(s->task, TASK_WOKEN_OTHER);
	return s;
fail:
	if (s->txn)
		http_stream_release(s);
	buf_release(&s->req);
	buf_release(&s->res);
	if (s->task)
		task_destroy(s->task);
	s->cli.ssl = NULL;
	pool_free(&pool_stream, s);
	return NULL;
}

void stream_session_closed(struct listener *l, struct proxy *fe)
{
	atomic_fetch_sub(&fe->feconn, 1);
	th_ctx->conns--;
	listener_conn_closed(l);
}

/* ---- times ---- */

/* The stream got a slot from the queue it waited in: its wait, from
 * queue_add() to the hand-over (both stamped by queue.c), goes into that
 * queue's histogram and the server's. Streams that never queued record
 * nothing there. */
/* %sq / %bq: the stream's position when it left its queue. */
static void stream_record_queue_pos(struct stream *s)
{
	const struct pendconn *p = &s->pend;

	if (!p->pos_from)
		return;
	if (s->srv && p->pos_from == &s->srv->queue)
		s->srv_queue_len = p->pos;
	else
		s->be_queue_len = p->pos;
}

static void stream_record_queue_wait(struct stream *s)
{
	const struct pendconn *p = &s->pend;
	uint64_t wait_us;

	if (!p->left_from)
		return;
	/* two threads' loop dates: the hand-over's may be a bit older */
	wait_us = p->slot_ns > p->enq_ns ? (p->slot_ns - p->enq_ns) / 1000 : 0;
	hist_record(&p->left_from->wait_hist, wait_us);
	hist_record(&p->srv->qtime_hist, wait_us);
	s->qtime_us += wait_us;
}

/* At the end of a session that reached a server: HAProxy's time averages
 * (queue, connect, total) for the server and the backend, and the session
 * time histogram of the server. */
void stream_record_times(struct stream *s)
{
	uint64_t now = sched_now_ns();
	uint64_t tt_us = now > s->accept_ns ? (now - s->accept_ns) / 1000 : 0;
	struct time_avgs *ta[2] = { &s->srv->times, &s->be->be_times };

	hist_record(&s->srv->ttime_hist, tt_us);
	for (int i = 0; i < 2; i++) {
		swrate_add(&ta[i]->qtime, s->qtime_us);
		swrate_add(&ta[i]->ctime, s->ctime_us);
		swrate_add(&ta[i]->ttime, tt_us);
	}
}

void stream_release_server(struct stream *s)
{
	if (s->has_slot) {
		s->has_slot = 0;
		srv_release_slot(s->srv);
	}
}

/* Leaves the queue; returns the server whose slot was handed over meanwhile
 * (now the stream's to use or release), or NULL. */
static struct server *stream_leave_queue(struct stream *s)
{
	struct server *srv;

	s->queued = 0;
	srv = queue_remove(&s->pend);
	/* the releaser's connection came with the slot: this stream keeps
	 * it, as if from its own previous request (pooled if it ends now) */
	if (srv && s->pend.hfd >= 0)
		http_adopt_handed_conn(s, srv);
	return srv;
}

void stream_free(struct stream *s)
{
	int tid = th_ctx->tid;
	struct server *handed;

	if (s->queued) {
		handed = stream_leave_queue(s);
		if (handed)
			srv_release_slot(handed);
	}
	if (s->http_flags & SF_HTTP)
		http_stream_release(s);
	if (s->lua_run || s->lua_priv)
		lua_stream_release(s);
	if (s->tcp_svc) {
		s->tcp_svc->release(s);
		s->tcp_svc = NULL;
	}
	if (s->Tc >= 0 && s->srv && s->be)
		stream_record_times(s);
	stream_release_server(s);
	if (conn_is_open(&s->sc) && s->srv)
		atomic_fetch_sub(&s->srv->used_conns, 1);
	/* as HAProxy does, the backend no longer counts this stream in the
	 * %bc of its own log line */
	if (s->be)
		atomic_fetch_sub(&s->be->beconn, 1);
	/* while the connections exist: the line may print their local
	 * addresses (looked up lazily) and read their TLS sessions */
	if (!(s->http_flags & SF_HTTP) && !s->hs_failed)
		stream_log_end(s);
	if (s->h2bs) {
		h2bs_detach(s->h2bs);
		s->h2bs = NULL;
	}
	conn_close(&s->sc);
	if (s->h2s) {
		s->cli.ssl = NULL;   /* the HTTP/2 connection's */
		h2s_detach(s->h2s);
		s->h2s = NULL;
	}
	conn_close(&s->cli);

	if (!(s->http_flags & SF_CONN_GIVEN))
		stream_account_bytes(s);
	stick_rules_release(s);
	stkctr_release(s, 0);
	buf_release(&s->req);
	buf_release(&s->res);
	h1m_reset(&s->cli_m);
	h1m_reset(&s->srv_m);
	vars_prune(&s->vars_sess);
	vars_prune(&s->vars_txn);

	lock_take(&thr_streams[tid].lock);
	list_del_init(&s->list);
	thr_streams[tid].count--;
	lock_release(&thr_streams[tid].lock);
	/* a stream of an HTTP/2 connection, or one that gave its connection
	 * to one, is not the client connection: that one is counted until
	 * the HTTP/2 connection ends */
	if (!(s->http_flags & (SF_H2 | SF_CONN_GIVEN)))
		stream_session_closed(s->lst, s->fe);
	task_destroy(s->task);
	pool_free(&pool_stream, s);
}

/* Adds the stream's byte counts to its server, backend and frontend. */
void stream_account_bytes(struct stream *s)
{
	stkctr_bytes(s, s->bytes_in, s->bytes_out);
	if (s->srv) {
		CNT_ADD(s->srv->cnt.bytes_in, s->bytes_in);
		CNT_ADD(s->srv->cnt.bytes_out, s->bytes_out);
	}
	if (s->be) {
		CNT_ADD(s->be->be_cnt.bytes_in, s->bytes_in);
		CNT_ADD(s->be->be_cnt.bytes_out, s->bytes_out);
	}
	CNT_ADD(s->fe->fe_cnt.bytes_in, s->bytes_in);
	CNT_ADD(s->fe->fe_cnt.bytes_out, s->bytes_out);
}

/* Ends the stream with termination state <a><b> unless one is already set. */
void stream_abort(struct stream *s, char a, char b)
{
	if (s->txn && http_stream_abort(s, a, b))
		return;
	if (s->term[0] == '-') {
		s->term[0] = a;
		s->term[1] = b;
	}
	s->st = SST_CLOSED;
}

/* ---- the client connection's transport ---- */

/* Puts the client connection under its listener's TLS, if any, and makes
 * the stream wait for the handshake: nothing is analysed, no server is
 * chosen before it completes. <early>: bytes already read that belong to
 * the TLS stream. Returns 0, or -1 (no memory). */
static int stream_cli_xprt_start(struct stream *s, const void *early, size_t len)
{
	const struct ssl_bind_conf *c = s->lst->bc->ssl;

	if (!c || !c->enabled)
		return 0;
	if (tls_conn_accept(&s->cli, ssl_bind_default_ctx(c), early, len) < 0)
		return -1;
	s->after_hs = s->st;
	s->st = SST_CLI_HANDSHAKE;
	return 0;
}

/* A failed handshake is not a session: HAProxy logs one line of its own,
 * "<client> [<date>] <frontend>/<bind>: <reason>", and nothing else. */
static void stream_log_hs_error(struct stream *s, const char *reason, int nothing_done)
{
	char line[1024], bind[32];
	const char *bname = s->lst->bc->name;
	size_t len;

	/* dontlognull: as HAProxy, a client that closed or stalled before
	 * it spoke TLS is not logged; a failed handshake is */
	if ((s->fe->options & PX_O_DONTLOGNULL) && nothing_done)
		return;
	if (!bname) {
		int n = 0;
		struct list *pos, *tmp;

		list_for_each_safe(pos, tmp, &s->fe->binds) {
			n++;
			if (list_elem(pos, struct bind_conf, list) == s->lst->bc)
				break;
		}
		snprintf(bind, sizeof(bind), "%d", n);
		bname = bind;
	}
	if (list_empty(&s->fe->logs) &&
	    !((s->fe->options & PX_O_LOG_GLOBAL) && !list_empty(&global.logs)))
		return;
	if (s->fe->error_logfmt) {
		len = stream_lf_render(s, s->fe->error_logfmt, line, sizeof(line));
	} else {
		len = stream_lf_render(s, &hs_err_fmt, line, sizeof(line));
		len += (size_t)snprintf(line + len, sizeof(line) - len, "/%s: %s", bname, reason);
	}
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	if (!list_empty(&s->fe->logs))
		log_send(&s->fe->logs, 6, s->fe->log_tag, global.pid, line, len);
	if (s->fe->options & PX_O_LOG_GLOBAL)
		log_send(&global.logs, 6, s->fe->log_tag, global.pid, line, len);
}

/* A TLS handshake completed on <ssl>: a new session or a resumed one for
 * HAProxy's ssl stats module, in <a> and <b> (may be NULL). */
static void stream_count_handshake(struct ssl_st *ssl, struct ssl_counters *a,
                                   struct ssl_counters *b)
{
	int reused = SSL_session_reused(ssl);

	CNT_INC(*(reused ? &a->reused_sess : &a->sess));
	if (b)
		CNT_INC(*(reused ? &b->reused_sess : &b->sess));
}

static void do_cli_handshake(struct stream *s)
{
	int rc = conn_handshake(&s->cli);
	const char *why = NULL;
	int nothing_done = 0;

	if (rc == 0) {
		if (s->cli.ssl)
			stream_count_handshake(s->cli.ssl, &s->fe->fe_mux.ssl, NULL);
		s->st = s->after_hs;
		if (stream_session_ready(s) == 0)
			stream_log_connect(s);
		return;
	}
	/* HAProxy's reasons: a socket error (a reset) is a handshake
	 * failure too, whatever the stage */
	if (rc == EINPROGRESS) {
		if (!s->cli_exp || th_ctx->now_ms < s->cli_exp)
			return;
		why = "Timeout during SSL handshake";
		nothing_done = 1;
	} else if (rc == ENODATA) {
		why = "Connection closed during SSL handshake";
		nothing_done = 1;
	} else if (rc == EPROTO) {
		why = ssl_bind_verify_failure(s->cli.ssl);
	}
	/* HAProxy counts every failure but a timeout, a client that left
	 * before it spoke TLS included */
	if (rc != EINPROGRESS)
		CNT_INC(s->fe->fe_mux.ssl.failed_handshake);
	s->fc_err = conn_err_code(why ? why : "SSL handshake failure");
	s->hs_failed = 1;
	stream_log_hs_error(s, why ? why : "SSL handshake failure", nothing_done);
	s->st = SST_CLOSED;
}

/* ---- before the server connection ---- */

/* Reads what the client sends while no server is connected yet. Returns -1
 * if the client connection failed. */
static int read_client_early(struct stream *s)
{
	if (s->txn && s->st != SST_PROXY_HDR)
		return http_read_client(s);
	while ((s->cli.flags & CONN_F_RD_READY) && !(s->cli.flags & CONN_F_RD_SHUT)) {
		ssize_t n = conn_recv(&s->cli, &s->req);

		if (n <= 0)
			break;
		s->bytes_in += (uint64_t)n;
		s->cli_exp = tick_add_ifset(th_ctx->now_ms, s->fe->timeout_client);
	}
	if (s->cli.flags & CONN_F_ERROR) {
		CNT_INC(s->fe->fe_cnt.cli_aborts);
		return -1;
	}
	return 0;
}

static void do_proxy_hdr(struct stream *s)
{
	struct pp_info pp;
	int n;

	if (read_client_early(s) < 0) {
		stream_abort(s, 'C', 'R');
		return;
	}
	n = pp_parse((const uint8_t *)buf_head(&s->req), s->req.data, &pp);
	if (n == 0) {
		if ((s->cli.flags & CONN_F_RD_SHUT) || !buf_room(&s->req)) {
			CNT_INC(s->fe->fe_cnt.failed_req);
			s->fc_err = s->req.data ? CO_ER_PRX_TRUNCATED : CO_ER_PRX_EMPTY;
			stream_abort(s, 'C', 'R');
		} else if (s->cli_exp && th_ctx->now_ms >= s->cli_exp) {
			s->fc_err = CO_ER_PRX_TIMEOUT;
			stream_abort(s, 'c', 'R');
		}
		return;
	}
	if (n < 0) {
		CNT_INC(s->fe->fe_cnt.failed_req);
		/* a header of the right kind that is wrong, or something else */
		s->fc_err = s->req.data >= 5 && (!memcmp(buf_head(&s->req), "PROXY", 5) ||
		                                 !memcmp(buf_head(&s->req), "\r\n\r\n\0", 5)) ?
		            CO_ER_PRX_BAD_HDR : CO_ER_PRX_NOT_HDR;
		stream_abort(s, 'P', 'R');
		return;
	}
	buf_consume(&s->req, (size_t)n);
	s->bytes_in -= (uint64_t)n;
	s->st = (s->http_flags & SF_HTTP) ? SST_HTTP_WAIT_REQ : SST_ASSIGN;
	if (s->lst->bc->ssl && s->lst->bc->ssl->enabled) {
		/* what came after the header is the start of the TLS stream */
		if (stream_cli_xprt_start(s, buf_head(&s->req), s->req.data) < 0) {
			stream_abort(s, 'R', 'R');
			return;
		}
		s->bytes_in -= s->req.data;
		s->req.head = s->req.data = 0;
	}
	if (s->txn && s->req.data) {
		/* the start of the first request: the HTTP mux reads it */
		if (h1m_take_rx(&s->cli_m, &s->req) < 0) {
			stream_abort(s, 'P', 'R');
			return;
		}
	}
	if (!pp.local) {
		s->cli.src = pp.src;
		s->cli.dst = pp.dst;
		s->cli.flags |= CONN_F_SRC_SET | CONN_F_DST_SET;
	}
	if (s->st != SST_CLI_HANDSHAKE && stream_session_ready(s) == 0)
		stream_log_connect(s);
}

void stream_set_backend(struct stream *s, struct proxy *be)
{
	s->be = be;
	atomic_fetch_add(&be->beconn, 1);
	cnt_update_max(&be->be_cnt.cur_max, atomic_load(&be->beconn));
	CNT_INC(be->be_cnt.cum_sess);
	cnt_rate_add(&be->be_cnt.sess_rate, &be->be_cnt.sess_rate_max, th_ctx->now_ms);
	s->retries_left = be->retries;
}

static void got_server(struct stream *s, struct server *srv)
{
	if (s->Tw < 0)
		s->Tw = 0;   /* not queued: %Tw is 0, -1 only if never assigned */
	s->srv = srv;
	s->has_slot = 1;
	s->slot_ns = sched_now_ns();
	CNT_INC(srv->cnt.cum_sess);
	cnt_rate_add(&srv->cnt.sess_rate, &srv->cnt.sess_rate_max, th_ctx->now_ms);
	cnt_update_max(&srv->cnt.cur_max, atomic_load(&srv->served));
	atomic_store_explicit(&srv->cnt.last_sess, (int64_t)(s->accept_us / 1000000),
	                      memory_order_relaxed);
	s->st = SST_CONNECT;
	/* an HTTP stream gives its (empty) response buffer back while it
	 * waits in a queue (do_assign()) */
	if (!s->res.area && buf_alloc(&s->res) < 0)
		stream_abort(s, 'R', 'C');
}

/* Persistence to a server that is not usable: with force-persist or
 * `option persist` (as HAProxy: its cookie designates it whatever its
 * state). */
static int persist_forced(const struct stream *s)
{
	return s->force_persist || (s->be->options & PX_O_PERSIST);
}

/* option prefer-last-server: the server the kept connection goes to, when
 * usable, rather than a new choice of the balancer. */
static int last_server_preferred(const struct stream *s)
{
	return (s->be->options & PX_O_PREFER_LAST) && s->sc_srv && s->sc_srv->be == s->be &&
	       s->sc_srv != s->prev_srv && srv_is_usable(s->sc_srv);
}

void do_assign(struct stream *s)
{
	struct server *srv;
	enum lb_result r;

	if (!s->be) {
		struct proxy *be;

		/* tcp-request content rules judge what the client sent so far:
		 * read it before, so that each arrival (the read event wakes
		 * the stream) is judged at once rather than at the end of the
		 * inspect-delay, and so that the end of the input is known */
		if (!list_empty(&s->fe->tcp_req_cont_rules) && read_client_early(s) < 0) {
			stream_abort(s, 'C', 'R');
			return;
		}
		if (stream_tcp_content_rules(s) <= 0)
			return;
		be = stream_choose_backend(s);

		if (!be) {
			stream_abort(s, 'P', 'R');
			return;
		}
		stream_set_backend(s, be);
	}
	if (!s->redispatched) {
		struct server *u = stream_use_server(s);

		if (u)
			s->persist_srv = u;   /* use-server: before persistence */
	}
	if (!s->redispatched) {
		/* stick rules: after use-server and cookies; their store keys
		 * are taken now in any case */
		struct server *st = stick_rules_request(s);

		/* a cookie naming a server down is ignored, unless persistence
		 * is forced */
		if (st && (!s->persist_srv ||
		           (!srv_is_usable(s->persist_srv) && !persist_forced(s))))
			s->persist_srv = st;
	}
	if (s->persist_srv && s->persist_srv != s->prev_srv &&
	    (srv_is_usable(s->persist_srv) || persist_forced(s))) {
		/* cookie persistence: that server, or its queue */
		srv = s->persist_srv;
		r = srv_take_slot(srv) ? LB_OK : LB_QUEUE_SRV;
	} else if (last_server_preferred(s)) {
		/* option prefer-last-server: the server of the kept connection */
		srv = s->sc_srv;
		r = srv_take_slot(srv) ? LB_OK : LB_QUEUE_SRV;
	} else {
		r = lb_pick(s->be, &s->cli.src, s->has_hkey ? &s->hkey : NULL, s->prev_srv, &srv);
	}
	switch (r) {
	case LB_OK:
		got_server(s, srv);
		return;
	case LB_NOSRV:
		CNT_INC(s->be->be_cnt.failed_conns);
		stream_abort(s, 'S', 'C');
		return;
	case LB_QUEUE_SRV:
	case LB_QUEUE_BE:
		/* a queued request must not keep an idle server connection to
		 * itself: 4000 waiting keep-alive clients would hold 4000; nor
		 * its response buffer, empty until the server answers (got back
		 * in got_server(), or by the error reply) */
		if (s->txn) {
			http_release_kept_conn(s);
			if (!s->res.data)
				buf_release(&s->res);
		}
		s->srv_queue_len = s->be_queue_len = 0;   /* set when it leaves */
		s->pend.pos_from = NULL;
		s->queue_ms = th_ctx->now_ms;
		s->st = SST_QUEUED;
		/* read by other threads while it waits: set before queueing */
		s->pend.prio_class = s->prio_class;
		s->pend.prio_offset_ms = s->prio_offset_ms;
		s->pend.take_conn = http_take_conn_mode(s);
		if (queue_add(&s->pend, s->be, r == LB_QUEUE_SRV ? srv : NULL) < 0) {
			stream_abort(s, 's', 'Q');
			return;
		}
		s->queued = 1;
		/* assigned, not served yet: its log names the server, as
		 * HAProxy's does (s->has_slot stays 0) */
		if (r == LB_QUEUE_SRV)
			s->srv = srv;
		s->queue_exp = tick_add_ifset(th_ctx->now_ms, s->be->timeout_queue ?
		                              s->be->timeout_queue : s->be->timeout_connect);
		return;
	}
}

void do_queued(struct stream *s)
{
	struct server *srv = NULL;

	if (atomic_load_explicit(&s->pend.q, memory_order_acquire) == NULL) {
		srv = stream_leave_queue(s);   /* already out: collects the server */
	} else if (read_client_early(s) < 0 || (s->cli.flags & CONN_F_HUP) ||
	           ((s->be->options & PX_O_ABORTONCLOSE) && (s->cli.flags & CONN_F_RD_SHUT))) {
		/* gone, or (option abortonclose) done sending: nobody would
		 * read the answer, the slot goes to someone who would */
		srv = stream_leave_queue(s);
		if (srv)
			srv_release_slot(srv);
		stream_record_queue_pos(s);
		stream_abort(s, 'C', 'Q');
		return;
	} else if (s->queue_exp && th_ctx->now_ms >= s->queue_exp) {
		/* moved from its server's queue to the backend's (the server
		 * went into maintenance): no longer assigned */
		if (s->srv && atomic_load(&s->pend.q) != &s->srv->queue)
			s->srv = NULL;
		srv = stream_leave_queue(s);
		if (!srv) {
			s->Tw = (int)(th_ctx->now_ms - s->queue_ms);
			CNT_INC(s->be->be_cnt.failed_conns);
			stream_record_queue_pos(s);
			stream_abort(s, 's', 'Q');
			return;
		}
	} else {
		return;
	}
	stream_record_queue_wait(s);
	stream_record_queue_pos(s);
	/* served by another server than the one it waited for (that one
	 * stopped and gave its queue away): a redispatch, counted where
	 * HAProxy counts it */
	if (s->srv && srv != s->srv) {
		CNT_INC(s->srv->cnt.redispatches);
		CNT_INC(s->be->be_cnt.redispatches);
		s->redispatched = 1;
	}
	s->Tw = (int)(th_ctx->now_ms - s->queue_ms);
	s->queue_exp = 0;
	got_server(s, srv);
}

/* ---- connecting ---- */

/* Whether the retry about to be made (number s->retries_done, from 1) goes
 * to another server: `option redispatch <interval>` with P > 0 means every
 * Pth retry, N < 0 the Nth retry before the last (-1, the default: the
 * last one), 0 never. */
static int redispatch_now(const struct stream *s)
{
	int iv = s->be->redispatch_interval, k = s->retries_done;

	if (!(s->be->options & PX_O_REDISPATCH) || !iv || s->be->nsrv < 2)
		return 0;
	if (iv > 0)
		return k % iv == 0;
	return k == s->be->retries + iv + 1;
}

/* Counts one retry and decides where it goes: another server (redispatch,
 * state ASSIGN) or the same one (CONNECT). Returns 1 if it went to
 * another server. */
int stream_retry(struct stream *s)
{
	s->retries_left--;
	s->retries_done++;
	CNT_INC(s->srv->cnt.retries);
	CNT_INC(s->be->be_cnt.retries);
	if (redispatch_now(s)) {
		/* let the balancer pick another server for this retry */
		CNT_INC(s->srv->cnt.redispatches);
		CNT_INC(s->be->be_cnt.redispatches);
		s->redispatched = 1;
		s->prev_srv = s->srv;
		stream_release_server(s);
		s->srv = NULL;
		s->st = SST_ASSIGN;
		return 1;
	}
	s->st = SST_CONNECT;
	return 0;
}

static void connect_failed(struct stream *s, int timeout)
{
	if (s->srv->observe)
		srv_observe(s->srv, HANA_L4_ERR);
	atomic_fetch_sub(&s->srv->used_conns, 1);
	conn_close(&s->sc);
	if (s->retries_left <= 0 || (s->be->retry_on && !(s->be->retry_on & RETRY_ON_CONN_FAILURE))) {
		/* econ counts sessions that failed to connect, not attempts */
		CNT_INC(s->srv->cnt.failed_conns);
		CNT_INC(s->be->be_cnt.failed_conns);
		stream_abort(s, timeout ? 's' : 'S', 'C');
		return;
	}
	if (stream_retry(s) || timeout)
		return;
	/* a refused connection waits min(timeout connect, 1s) before retrying */
	s->st = SST_TURNAROUND;
	s->conn_exp = th_ctx->now_ms + (s->be->timeout_connect && s->be->timeout_connect < 1000 ?
	                                (uint64_t)s->be->timeout_connect : 1000);
}

static int srv_uses_tls(const struct server *srv)
{
	return srv->ssl && srv->ssl->enabled;
}

/* Puts the new server connection under TLS: the SNI expression evaluated
 * on this stream, the thread's last session with this server offered for
 * resumption. Returns 0 or -1. */
static int stream_srv_tls_start(struct stream *s, struct server *srv, const void *pre,
                                size_t prelen)
{
	struct ssl_srv_conf *c = srv->ssl;
	SSL_CTX *sctx = atomic_load(&c->ctx);   /* a commit may replace it */
	char sni[256] = "";

	if (c->sni) {
		struct smp_ctx ctx;
		struct sample smp;
		struct http_msg saved;
		struct h1_error herr;
		int reparsed = 0;

		stream_smp_ctx_init(s, &ctx, SMP_DIR_REQ);
		/* a retried request was sent already, and the transaction's
		 * message emptied: read the head the server mux keeps again
		 * into that message (and its header array) for the
		 * expression, then put the message back as it was. One parse per
		 * new server connection, beside a TLS handshake. */
		if (s->txn && !ctx.req && s->srv_m.tx.data) {
			saved = s->txn->req;
			reparsed = 1;
			if (h1_parse_head(buf_head(&s->srv_m.tx), s->srv_m.tx.data, 1, HTTP_METH_OTHER,
			                  s->srv_m.tx.size, H1_O_BARE_LF | H1_O_HOST_OPTIONAL |
			                  H1_O_ANY_VERSION | H1_O_ACCEPT_INVALID, &s->txn->req,
			                  &herr) == H1_OK)
				ctx.req = &s->txn->req;
		}
		memset(&smp, 0, sizeof(smp));
		if (sample_expr_eval_as(c->sni, &ctx, SMP_T_STR, &smp) &&
		    smp.data.str.len < sizeof(sni)) {
			memcpy(sni, smp.data.str.ptr, smp.data.str.len);
			sni[smp.data.str.len] = 0;
		}
		if (reparsed)
			s->txn->req = saved;
	}
	if (tls_conn_connect(&s->sc, sctx, sni, ssl_srv_session(c, sctx, th_ctx->tid, sni),
	                     pre, prelen) < 0)
		return -1;
	return ssl_srv_prepare(srv, s->sc.ssl, sni);
}

/* ---- descriptors for server connections ---- */

#define FD_WAIT_STEP_MS   2      /* between two tries while other threads trim */
#define FD_WAIT_MAX_MS    1000   /* without timeout connect */

/* At most one line per second per thread: the budget is meant to make
 * this impossible, so each one tells of a descriptor sluice does not count. */
static void warn_out_of_fds(const struct server *srv, int err)
{
	if (th_ctx->fd_warn_ms && th_ctx->now_ms - th_ctx->fd_warn_ms < 1000)
		return;
	th_ctx->fd_warn_ms = th_ctx->now_ms;
	fprintf(stderr, "[WARNING] (%d) : server %s/%s: no descriptor for a new connection "
	        "(%s), %d held of %ld.\n", global.pid, srv->be->name, srv->name, strerror(err),
	        atomic_load(&global.fd_used), global.rlimit_nofile);
}

/* Before a new server socket. Returns 0 to go on, or -1 when the stream
 * must wait for other threads to close idle connections. */
static int connect_fd_room(void)
{
	/* HAProxy's rule: above the high mark, a connection that could not
	 * reuse one costs an idle one, so the pools shrink as the load grows */
	if (fd_budget_above_high())
		srv_idle_trim(1);
	if (fd_budget_room() >= 1)
		return 0;
	/* -1 (nothing left to close anywhere): try; EMFILE then fails it */
	return fd_budget_reclaim(1) == 0 ? -1 : 0;
}

/* Opens the server socket; on EMFILE closes an idle connection of this
 * thread and tries again. Returns 0, -1 (errno set), or -2 when the stream
 * must wait for other threads to close idle connections. */
static int connect_with_budget(struct stream *s, struct server *srv)
{
	int r;

	if (connect_fd_room() < 0)
		return -2;
	for (int tries = 0; tries < 2; tries++) {
		if (conn_connect_opts(&s->sc, &srv->addr.ss, srv->addr.len, &srv->so) == 0)
			return 0;
		if (errno != EMFILE && errno != ENFILE)
			return -1;
		warn_out_of_fds(srv, errno);
		r = fd_budget_reclaim(1);
		if (r == 0)
			return -2;
		if (r < 0)
			break;
	}
	errno = EMFILE;
	return -1;
}

/* Other threads are closing idle connections for this stream: it tries
 * again shortly (TURNAROUND, no retry spent), up to timeout connect. */
static int connect_wait_fds(struct stream *s)
{
	uint64_t now = th_ctx->now_ms;

	if (!s->fd_wait_end)
		s->fd_wait_end = now + (uint64_t)(s->be->timeout_connect > 0 ?
		                                  s->be->timeout_connect : FD_WAIT_MAX_MS);
	if (now >= s->fd_wait_end)
		return -1;
	th_ctx->act.fd_waits++;
	s->st = SST_TURNAROUND;
	s->conn_exp = now + FD_WAIT_STEP_MS;
	return 0;
}

void do_connect(struct stream *s)
{
	struct server *srv = s->srv;
	int r;

	s->connect_ms = th_ctx->now_ms;
	if (srv->redir && srv_redirect(s, srv)) {
		stream_release_server(s);   /* answered here: the slot goes back */
		return;
	}
	if (s->txn && http_reuse_conn(s))
		return;
	s->sc_reqs = 1;
	r = connect_with_budget(s, srv);
	if (r == -2 && connect_wait_fds(s) == 0)
		return;
	s->fd_wait_end = 0;
	srv_used_conns_inc(srv);
	CNT_INC(srv->cnt.connect);
	CNT_INC(s->be->be_cnt.connect);
	if (r < 0) {
		conn_init(&s->sc, s->task);
		connect_failed(s, 0);
		return;
	}
	if (srv->send_proxy || srv_uses_tls(srv)) {
		uint8_t hdr[2048];
		size_t len = !srv->send_proxy ? 0 : srv->send_proxy == 2 ?
		             srv_pp_v2_build(s, srv, hdr, sizeof(hdr)) :
		             pp_build_v1((char *)hdr, sizeof(hdr), &s->cli.src, conn_dst(&s->cli));

		if (srv->send_proxy && !len) {
			stream_abort(s, 'P', 'C');
			return;
		}
		if (srv_uses_tls(srv)) {
			/* the PROXY header goes in clear, before the handshake */
			if (stream_srv_tls_start(s, srv, hdr, len) < 0) {
				connect_failed(s, 0);
				return;
			}
		} else if (s->txn ? h1m_prepend_raw(&s->srv_m, hdr, len) < 0 :
		                    buf_prepend(&s->req, hdr, len) < 0) {
			stream_abort(s, 'P', 'C');
			return;
		}
	}
	s->conn_exp = tick_add_ifset(th_ctx->now_ms, s->be->timeout_connect);
	s->st = SST_CONNECTING;
}

void do_connecting(struct stream *s)
{
	int status;

	if (read_client_early(s) < 0) {
		stream_abort(s, 'C', 'C');
		return;
	}
	status = conn_connect_status(&s->sc);
	if (status == 0) {
		uint64_t now = sched_now_ns();

		if (s->sc.ssl)
			stream_count_handshake(s->sc.ssl, &s->srv->ssl_cnt, &s->be->be_mux.ssl);
		s->ctime_us = now > s->slot_ns ? (now - s->slot_ns) / 1000 : 0;
		hist_record(&s->srv->ctime_hist, s->ctime_us);
		s->Tc = (int)(th_ctx->now_ms - s->connect_ms);
		s->conn_exp = 0;
		if (s->srv->observe)
			srv_observe(s->srv, HANA_L4_OK);
		s->st = s->txn ? SST_HTTP_XFER : SST_ESTABLISHED;
		s->srv_exp = tick_add_ifset(th_ctx->now_ms, s->be->timeout_server);
		if (!s->txn)
			stick_rules_commit(s);   /* TCP: the server is the one */
		/* `proto h2`, or ALPN h2: the connection becomes a multiplexed
		 * HTTP/2 one, this stream its first (a request already sent
		 * as HTTP/1, retried, cannot go there) */
		if (s->txn && h2b_conn_is_h2(s->srv, &s->sc)) {
			if ((s->txn->flags & TX_F_REQ_GONE) || h2b_adopt(s) < 0)
				connect_failed(s, 0);
		} else if (s->txn) {
			http_h1_srv_conn_new(s);
		}
		return;
	}
	if (status != EINPROGRESS) {
		/* connected, but the TLS handshake failed */
		if (s->sc.ssl && (s->sc.flags & CONN_F_CONNECTED)) {
			CNT_INC(s->srv->ssl_cnt.failed_handshake);
			CNT_INC(s->be->be_mux.ssl.failed_handshake);
		}
		connect_failed(s, 0);
		return;
	}
	if (s->conn_exp && th_ctx->now_ms >= s->conn_exp)
		connect_failed(s, 1);
}

/* ---- established ---- */

int side_timeout(const struct stream *s, int client)
{
	const struct proxy *fe = s->fe, *be = s->be;
	int fin = client ? fe->timeout_client_fin : be->timeout_server_fin;
	const struct conn *c = client ? &s->cli : &s->sc;

	if ((c->flags & CONN_F_WR_SHUT) && fin)
		return fin;
	if (be->timeout_tunnel)
		return be->timeout_tunnel;
	return client ? fe->timeout_client : be->timeout_server;
}

/* Bytes still buffered toward <c>'s peer... from <c>: the data <c> sent that
 * has not been forwarded yet. */
static size_t other_dir_data(const struct stream *s, const struct conn *c)
{
	return c == &s->cli ? s->req.data : s->res.data;
}

/* Moves data <from> -> <b> -> <to>. Returns non-zero if more could be done
 * right away. Updates the activity dates and byte counters. */
static int forward(struct stream *s, struct conn *from, struct buffer *b, struct conn *to,
                   uint64_t *rx, uint64_t *tx)
{
	int rounds = FWD_MAX_ROUNDS;
	int from_cli = from == &s->cli;
	uint64_t now = th_ctx->now_ms;

	while (rounds-- > 0) {
		int progress = 0;

		if ((from->flags & CONN_F_RD_READY) && !(from->flags & CONN_F_RD_SHUT) &&
		    buf_room(b)) {
			ssize_t n = conn_recv(from, b);

			if (n > 0) {
				if (rx)
					*rx += (uint64_t)n;
				progress = 1;
			}
			if (n >= 0) {
				uint64_t exp = tick_add_ifset(now, side_timeout(s, from_cli));

				if (from_cli)
					s->cli_exp = exp;
				else
					s->srv_exp = exp;
			}
		}
		if (b->data && (to->flags & CONN_F_WR_READY) && !(to->flags & CONN_F_ERROR)) {
			ssize_t n = conn_send(to, b);

			if (n > 0) {
				uint64_t exp = tick_add_ifset(now, side_timeout(s, !from_cli));

				if (tx)
					*tx += (uint64_t)n;
				if (from_cli)
					s->srv_exp = exp;
				else
					s->cli_exp = exp;
				progress = 1;
			}
		}
		if (!progress)
			break;
	}
	/* forward the end of input; when the other direction is over too, the
	 * stream closes right away and close() sends that FIN itself */
	if ((from->flags & CONN_F_RD_SHUT) && !b->data && !(to->flags & CONN_F_WR_SHUT) &&
	    !((to->flags & CONN_F_RD_SHUT) && !other_dir_data(s, to)))
		conn_shutw(to);
	return rounds < 0 &&
	       (((from->flags & CONN_F_RD_READY) && !(from->flags & CONN_F_RD_SHUT) &&
	         buf_room(b)) || (b->data && (to->flags & CONN_F_WR_READY)));
}

void do_established(struct stream *s)
{
	int more;
	uint64_t now = th_ctx->now_ms;

	if (s->h2s || s->h2bs) {
		http_h2_tunnel(s);   /* a side is an HTTP/2 stream */
		return;
	}
	more = forward(s, &s->cli, &s->req, &s->sc, &s->bytes_in, NULL);
	more |= forward(s, &s->sc, &s->res, &s->cli, NULL, &s->bytes_out);

	if (s->cli.flags & CONN_F_ERROR) {
		CNT_INC(s->fe->fe_cnt.cli_aborts);
		CNT_INC(s->be->be_cnt.cli_aborts);
		CNT_INC(s->srv->cnt.cli_aborts);
		stream_abort(s, 'C', 'D');
		return;
	}
	if (s->sc.flags & CONN_F_ERROR) {
		CNT_INC(s->be->be_cnt.srv_aborts);
		CNT_INC(s->srv->cnt.srv_aborts);
		stream_abort(s, 'S', 'D');
		return;
	}
	if ((s->cli.flags & CONN_F_RD_SHUT) && (s->sc.flags & CONN_F_RD_SHUT) &&
	    !s->req.data && !s->res.data) {
		/* both directions done: a normal end; close() sends the FINs
		 * not sent yet (all input was read, so no RST) */
		s->st = SST_CLOSED;   /* both directions done: a normal end */
		return;
	}
	if (s->cli_exp && now >= s->cli_exp) {
		stream_abort(s, 'c', 'D');
		return;
	}
	if (s->srv_exp && now >= s->srv_exp) {
		stream_abort(s, 's', 'D');
		return;
	}
	if (more)
		task_wakeup(s->task, TASK_WOKEN_OTHER);
}

static uint64_t stream_expiry(const struct stream *s)
{
	switch (s->st) {
	case SST_PROXY_HDR:
	case SST_CLI_HANDSHAKE:
		return s->cli_exp;
	case SST_ASSIGN:
		return s->conn_exp;   /* tcp-request inspect-delay */
	case SST_APPLET:
		return tick_first(s->cli_exp, s->tcp_svc_wake);
	case SST_QUEUED:
		return s->queue_exp;
	case SST_TURNAROUND:
	case SST_CONNECTING:
		return s->conn_exp;
	case SST_ESTABLISHED:
		return tick_first(s->cli_exp, s->srv_exp);
	case SST_HTTP_WAIT_REQ:
	case SST_HTTP_BODY_WAIT:
	case SST_HTTP_XFER:
	case SST_HTTP_TARPIT:
	case SST_HTTP_LINGER:
		return http_stream_expiry(s);
	default:
		return 0;
	}
}

/* The second letter of a killed stream's termination state: where it
 * was (HAProxy's session states; HAProxy 2.6 logs an established TCP
 * stream killed from the CLI as "K-"). */
static char stream_state_char(const struct stream *s)
{
	switch (s->st) {
	case SST_QUEUED:
		return 'Q';
	case SST_TURNAROUND:
	case SST_CONNECT:
	case SST_CONNECTING:
		return 'C';
	case SST_ESTABLISHED:
		return '-';
	case SST_HTTP_XFER:
		return 'D';
	case SST_HTTP_TARPIT:
		return 'T';
	case SST_HTTP_LINGER:
		return 'L';
	default:
		return 'R';
	}
}

/* `shutdown session`: ends the stream now. An HTTP request still waiting
 * for its response is answered 502 and logged "KH" as HAProxy does, and
 * both connections close after it; anything else closes at once. */
static void stream_kill_now(struct stream *s, char why)
{
	struct http_txn *t = s->txn;

	if (t && s->st == SST_HTTP_XFER && !(t->flags & (TX_F_RES_STARTED | TX_F_REPLIED)) &&
	    !t->resp_interim) {
		t->flags |= TX_F_SRV_CLOSE | TX_F_CLI_CLOSE;
		http_reply_start(s, 502, NULL, why, 'H');
		return;
	}
	if (s->term[0] == '-') {
		s->term[1] = stream_state_char(s);
		s->term[0] = why;
	}
	s->st = SST_CLOSED;
}

static struct task *stream_process(struct task *t, void *ctx, unsigned int state)
{
	struct stream *s = ctx;

	/* killed from the CLI, or by its server's state change */
	if (atomic_load_explicit(&s->kill_req, memory_order_relaxed)) {
		int why = atomic_exchange(&s->kill_req, 0);

		if (why && s->st != SST_CLOSED)
			stream_kill_now(s, (char)why);
	}

	for (int step = 0; step < 8; step++) {
		enum stream_state prev = s->st;

		switch (s->st) {
		case SST_PROXY_HDR:
			do_proxy_hdr(s);
			break;
		case SST_CLI_HANDSHAKE:
			do_cli_handshake(s);
			break;
		case SST_ASSIGN:
			do_assign(s);
			break;
		case SST_QUEUED:
			do_queued(s);
			break;
		case SST_TURNAROUND:
			if (th_ctx->now_ms >= s->conn_exp)
				s->st = SST_CONNECT;
			else if (read_client_early(s) < 0)
				stream_abort(s, 'C', 'C');
			break;
		case SST_CONNECT:
			do_connect(s);
			break;
		case SST_CONNECTING:
			do_connecting(s);
			break;
		case SST_ESTABLISHED:
			do_established(s);
			break;
		case SST_APPLET:
			s->tcp_svc->step(s);
			break;
		case SST_HTTP_WAIT_REQ:
		case SST_HTTP_BODY_WAIT:
		case SST_HTTP_XFER:
		case SST_HTTP_TARPIT:
		case SST_HTTP_LINGER:
			http_stream_step(s);
			break;
		case SST_CLOSED:
			break;
		}
		if (s->st == SST_CLOSED) {
			stream_free(s);
			return NULL;
		}
		if (s->st == prev)
			break;
	}
	task_set_expire(t, stream_expiry(s));
	return t;
}

static int stream_postparse(void)
{
	char err[256];

	if (connect_fmt_ready)
		return 0;   /* compiled once (a configuration may be parsed again) */
	if (lf_compile("Connect from %ci:%cp to %fi:%fp (%f/TCP)", &connect_fmt,
	               err, sizeof(err)) < 0 ||
	    lf_compile("Connect from %ci:%cp to %fi:%fp (%f/HTTP)", &connect_fmt_http,
	               err, sizeof(err)) < 0 ||
	    lf_compile("%ci:%cp [%tr] %f", &hs_err_fmt, err, sizeof(err)) < 0) {
		fprintf(stderr, "[ALERT] internal: connect log format: %s\n", err);
		return 1;
	}
	connect_fmt_ready = 1;
	return 0;
}

static struct cfg_post_hook stream_post = { .fn = stream_postparse, .order = 5 };

/* ---- soft stop ---- */

/* On a soft stop every stream of the thread is woken once, so that the
 * idle keep-alive ones close at once (http_wait_req()) instead of at their
 * timeout. A batch per run: each woken stream moves to the end of the
 * list, and the walk covers as many streams as the thread had when the
 * stop began. */
#define STREAMS_STOP_BATCH  256

static struct task *streams_stop_task[MAX_THREADS];
static int streams_stop_left[MAX_THREADS];

static struct task *streams_stop_process(struct task *t, void *ctx, unsigned int state)
{
	int tid = th_ctx->tid;

	lock_take(&thr_streams[tid].lock);
	if (streams_stop_left[tid] < 0)
		streams_stop_left[tid] = thr_streams[tid].count;
	for (int n = 0; n < STREAMS_STOP_BATCH && streams_stop_left[tid] > 0 &&
	     !list_empty(&thr_streams[tid].head); n++) {
		struct stream *s = list_elem(thr_streams[tid].head.next, struct stream, list);

		list_del_init(&s->list);
		list_append(&thr_streams[tid].head, &s->list);
		task_wakeup(s->task, TASK_WOKEN_MSG);
		streams_stop_left[tid]--;
	}
	if (streams_stop_left[tid] > 0 && !list_empty(&thr_streams[tid].head))
		task_wakeup(t, TASK_WOKEN_OTHER);
	lock_release(&thr_streams[tid].lock);
	return t;
}

static void streams_soft_stop(int tid)
{
	streams_stop_left[tid] = -1;
	if (streams_stop_task[tid])
		task_wakeup(streams_stop_task[tid], TASK_WOKEN_OTHER);
}

static int streams_thread_init(int tid)
{
	streams_stop_task[tid] = task_new(streams_stop_process, NULL, tid, TC_BULK, "streams_stop");
	return streams_stop_task[tid] ? 0 : -1;
}

static void streams_thread_deinit(int tid)
{
	if (streams_stop_task[tid])
		task_destroy(streams_stop_task[tid]);
	streams_stop_task[tid] = NULL;
}

static struct thread_init_hook streams_thread_hook = { .fn = streams_thread_init,
                                                       .deinit = streams_thread_deinit };
static struct listener_stop_hook streams_stop_hook = { .fn = streams_soft_stop };

__attribute__((constructor)) static void streams_stop_register(void)
{
	thread_register_init(&streams_thread_hook);
	listener_register_stop(&streams_stop_hook);
}

__attribute__((constructor)) static void stream_register_post(void)
{
	cfg_register_post(&stream_post);
}
