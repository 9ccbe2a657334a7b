/* HTTP/1 streams: request and response analysis on top of the stream's
 * connection handling (stream.c).
 *
 * A stream in HTTP mode runs one transaction (struct http_txn) at a time:
 *
 *   WAIT_REQ   read and parse a request head (timeout http-request, or
 *              http-keep-alive between requests); errors answer 400/408/414/431
 *   analysis   tcp-request content, monitor-uri, frontend http-request rules,
 *              backend choice, backend rules, headers sluice adds; then the
 *              head is serialised (parsed once, edited, written once)
 *   ASSIGN..CONNECTING   as in TCP mode (balancing, queue, connect, retries),
 *              or an idle server connection is reused (http-reuse)
 *   XFER       request body out, response head in (1xx forwarded), response
 *              rules, response body out; bodies are forwarded as they come,
 *              delimited by Content-Length, chunked framing (re-framed by the
 *              sending mux), or the server's close
 *   end        log line, counters, server slot released (the queue hands it
 *              over at once), server connection kept idle, next request
 *
 * Connections: the client's and the server's are each read and written
 * by an HTTP/1 mux (mux_h1.h); the stream sees the message model in its
 * channels (s->req, s->res): a parsed head at the start, the payload
 * without framing after it. The head is parsed once by the receiving mux,
 * edited by the rules in place (msgedit.h) and serialised once by the
 * sending mux; bodies move as they come, in channel-sized pieces.
 *
 * The request analysis is in stream_req.c; the log line and the replies
 * sluice makes itself in stream_reply.c; the sample context, log fields
 * and TCP rules in stream_smp.c; the server connection between requests
 * (reuse, pool, retry-on) in stream_srvconn.c. Everything here runs on the
 * stream's owner thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include <sluice/http/act.h>
#include <sluice/http/cache_txn.h>
#include <sluice/http/comp.h>
#include <sluice/http/h1.h>
#include <sluice/http/h1_out.h>
#include <sluice/http/msgedit.h>
#include <openssl/ssl.h>
#include <sluice/http/mux_h2.h>
#include <sluice/http/mux_h2_back.h>
#include <sluice/http/txn.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/errcap.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_idle.h>
#include <sluice/proxy/stream_int.h>
#include <sluice/lua/lua.h>

/* kept out of a head as HAProxy keeps tune.maxrewrite: the longest head is
 * tune.bufsize minus this, so 414 and 431 come at the same sizes */
#define HTTP_RESERVE     (TXN_ARENA_SIZE + HTTP_EDIT_EXTRA_HDRS * 4 + 512)
#define HTTP_FWD_ROUNDS  4
#define LINGER_MS        1000

static POOL_DECLARE(pool_txn, "http_txn", struct http_txn)
static __thread struct buffer thr_spare;

/* The spare buffer is the thread's own: given back when the thread ends. */
static void http_thread_deinit(int tid)
{
	buf_release(&thr_spare);
}

static struct thread_init_hook http_thread_hook = { .deinit = http_thread_deinit };

__attribute__((constructor)) static void http_thread_hook_register(void)
{
	thread_register_init(&http_thread_hook);
}

/* ---- small helpers ---- */

static uint64_t now_ms(void)
{
	return th_ctx->now_ms;
}

/* ---- transactions ---- */

/* A transaction is numbered when its request starts (or fails), not when
 * the connection starts waiting for it: an idle keep-alive wait that ends
 * with the connection takes no number, as in HAProxy. */
void http_txn_take_id(struct stream *s)
{
	if (!s->txn->id_set) {
		s->txn->id = stream_next_id();
		s->txn->id_set = 1;
		s->uniq_id = s->txn->id;
	}
}

static void txn_init_msgs(struct http_txn *t)
{
	memset(&t->req, 0, sizeof(t->req));
	memset(&t->res, 0, sizeof(t->res));
	t->req.hdrs = t->req_hdrs;
	t->req.maxhdrs = global.http_maxhdr - 1;   /* the start line counts */
	t->req.is_request = 1;
	t->res.hdrs = t->res_hdrs;
	t->res.maxhdrs = global.http_maxhdr - 1;
}

static void txn_start(struct stream *s)
{
	struct http_txn *t = s->txn;

	memset(t, 0, offsetof(struct http_txn, req_hdrs));
	memset(&t->req_body, 0, sizeof(*t) - offsetof(struct http_txn, req_body));
	txn_init_msgs(t);
	t->status = t->srv_status = -1;
	t->log_level = -1;
	t->Ti = t->TR = t->Tq = t->Tr = t->Ta = -1;
	if (!s->txn_count)
		t->flags |= TX_F_FIRST_REQ;
	vars_init(&t->vars_txn, VAR_SCOPE_TXN);
	vars_init(&t->vars_req, VAR_SCOPE_REQ);
	vars_init(&t->vars_res, VAR_SCOPE_RES);
	t->idle_start_ms = now_ms();
}

static void txn_cleanup(struct stream *s, struct http_txn *t)
{
	cache_txn_release(&t->cache);
	/* comp_on stays for the log line of a transaction already logged:
	 * the next txn_start() clears it */
	comp_ctx_free(t->comp);
	t->comp = NULL;
	if (s->lua_run || s->lua_priv)
		lua_stream_release(s);
	free(t->retry_copy);
	t->retry_copy = NULL;
	vars_prune(&t->vars_txn);
	vars_prune(&t->vars_req);
	vars_prune(&t->vars_res);
	free(t->unique_id);
	t->unique_id = NULL;
	if (t->cookie_cap_cli) {
		free(t->cookie_cap_cli);
		t->cookie_cap_cli = NULL;
	}
	if (t->cookie_cap_srv) {
		free(t->cookie_cap_srv);
		t->cookie_cap_srv = NULL;
	}
	/* most transactions capture nothing: no call per empty slot */
	for (int i = 0; i < TXN_MAX_CAPTURES; i++) {
		if (t->req_cap[i]) {
			free(t->req_cap[i]);
			t->req_cap[i] = NULL;
		}
		if (t->res_cap[i]) {
			free(t->res_cap[i]);
			t->res_cap[i] = NULL;
		}
		if (t->capture_slots[i]) {
			free(t->capture_slots[i]);
			t->capture_slots[i] = NULL;
		}
	}
}

int http_stream_start(struct stream *s)
{
	/* not zeroed: txn_start() clears everything but the header arrays
	 * and arenas, which are written before being read */
	s->txn = pool_alloc(&pool_txn);
	if (!s->txn)
		return -1;
	s->http_flags |= SF_HTTP;
	txn_start(s);
	if (s->st == SST_ASSIGN)
		s->st = SST_HTTP_WAIT_REQ;
	s->http_exp = tick_add_ifset(now_ms(), http_first_set(s->fe->timeout_http_request,
	                                                      s->fe->timeout_client));
	return 0;
}

/* ---- the client's input ---- */

/* The head limit, as HAProxy's tune.bufsize minus tune.maxrewrite: the
 * reserve above matches HAProxy's sizes at its default maxrewrite (1024),
 * a larger or smaller one moves the limit as much. */
static size_t max_head(const struct stream *s)
{
	long lim = (long)global.bufsize - HTTP_RESERVE - (global.maxrewrite - 1024);

	return lim > 1024 ? (size_t)lim : 1024;
}

/* ---- the client side's mux: HTTP/1 (s->cli_m) or an HTTP/2 stream ---- */

int http_cli_rcv_body(struct stream *s, const char **why)
{
	if (s->h2s)
		return h2s_rcv_body(s->h2s, &s->req);
	return h1m_rcv_body(&s->cli_m, &s->req, why);
}

const char *http_cli_trailers(const struct stream *s, size_t *len)
{
	if (s->h2s)
		return h2s_rx_trailers(s->h2s, len);
	*len = s->cli_m.tlr_len;
	return s->cli_m.tlr;
}

int http_cli_rx_done(const struct stream *s)
{
	return s->h2s ? h2s_rx_done(s->h2s) : h1m_rx_done(&s->cli_m);
}

/* A failed HTTP/2 stream shows on the stream's copy of the connection, as
 * a reset connection would: every check of the HTTP/1 path applies. */
static void cli_sync(struct stream *s)
{
	if (s->h2s && h2s_failed(s->h2s))
		s->cli.flags |= CONN_F_ERROR | CONN_F_HUP;
}

static int cli_snd_head(struct stream *s, const struct http_msg *m, unsigned int fl, int interim)
{
	if (s->h2s)
		return h2s_snd_head(s->h2s, m, interim);
	if (s->fe->options & PX_O_H1_CASE_CLI)
		fl |= H1O_F_CASE_ADJUST;
	return h1m_snd_head(&s->cli_m, m, fl, interim ? H1M_SND_INTERIM : 0);
}

/* Whether the response's end went to the client's mux (all of it: a
 * bodyless head counts at once). */
static int cli_tx_finished(const struct stream *s)
{
	return s->h2s ? h2s_tx_finished(s->h2s) : h1m_tx_finished(&s->cli_m);
}

/* ---- the server side's mux: HTTP/1 (s->srv_m) or an HTTP/2 stream ---- */

/* Response bytes received and not in the channel yet. */
static size_t srv_rx_pending(const struct stream *s)
{
	return s->h2bs ? h2bs_rx_pending(s->h2bs) : s->srv_m.rx.data;
}

int http_srv_rx_done(const struct stream *s)
{
	return s->h2bs ? h2bs_rx_done(s->h2bs) : h1m_rx_done(&s->srv_m);
}

static const char *srv_trailers(const struct stream *s, size_t *len)
{
	if (s->h2bs)
		return h2bs_rx_trailers(s->h2bs, len);
	*len = s->srv_m.tlr_len;
	return s->srv_m.tlr;
}

/* A failed HTTP/2 stream toward the server shows on the stream's copy of
 * the server connection as a reset connection would. */
static void srv_sync(struct stream *s)
{
	if (s->h2bs && h2bs_failed(s->h2bs))
		s->sc.flags |= CONN_F_ERROR | CONN_F_HUP | CONN_F_RD_SHUT;
}

/* Reads the client into its mux while a head is pending. Returns -1 on a
 * connection error. */
static int read_client_head(struct stream *s)
{
	h1m_read(&s->cli_m, max_head(s));
	return (s->cli.flags & CONN_F_ERROR) ? -1 : 0;
}

/* Decodes the request body into the request channel as far as it has
 * room. Returns 1 on progress, 0, or -1 on a framing error (err_reason
 * set). */
static int read_request_body(struct stream *s)
{
	struct http_txn *t = s->txn;
	const char *why = NULL;
	int rc = http_cli_rcv_body(s, &why);

	if (rc < 0)
		t->err_reason = why ? why : "invalid chunked request body";
	if (http_cli_rx_done(s))
		t->req_body.done = 1;
	return rc;
}

int http_read_client(struct stream *s)
{
	struct http_txn *t = s->txn;

	cli_sync(s);
	if (t && t->req.head_len && !t->req_body.done) {
		if (read_request_body(s) < 0)
			return 0;   /* reported when the body is forwarded */
	} else if (!s->h2s && s->cli_m.rx.data < max_head(s)) {
		h1m_read(&s->cli_m, max_head(s));
	}
	if (s->cli.flags & CONN_F_ERROR) {
		CNT_INC(s->fe->fe_cnt.cli_aborts);
		return -1;
	}
	return 0;
}

/* ---- idle keep-alive connections ---- */

/* A server connection kept between transactions is checked while idle:
 * the server closing it (or sending anything) ends it. */
static void check_kept_server_conn(struct stream *s)
{
	char c;
	ssize_t n;

	if (!conn_is_open(&s->sc) || !(s->sc.flags & (CONN_F_RD_READY | CONN_F_HUP | CONN_F_ERROR)))
		return;
	n = recv(s->sc.ph.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !(s->sc.flags & CONN_F_HUP)) {
		s->sc.flags &= ~CONN_F_RD_READY;
		return;
	}
	if (s->sc_srv)
		atomic_fetch_sub(&s->sc_srv->used_conns, 1);
	conn_close(&s->sc);
	conn_init(&s->sc, s->task);
	h1m_reset(&s->srv_m);
	s->sc_srv = NULL;
}

/* A connection waiting for its next request holds no buffer and, after
 * its first transaction, no transaction either, as HAProxy frees the
 * buffers of an idle connection: with thousands of idle keep-alive
 * clients, the channels, the muxes' buffers and a 14.7 KB transaction
 * each would be most of the memory. txn_end() gives the transaction back
 * at once (the next one is started when its first byte comes); the
 * buffers go when the stream finds nothing to read. They come back from
 * the thread's pool caches (LIFO: the ones just released, still warm)
 * when the client has something to say, or when the wait times out.
 * Nothing buffered is ever dropped: a pipelined request, or bytes a
 * server sent, keep their buffer. The first transaction's txn stays until
 * it ends: the connection's tcp-request session rules may have set txn
 * variables in it. */
static void http_idle_release(struct stream *s)
{
	if (!s->req.data)
		buf_release(&s->req);
	if (!s->res.data)
		buf_release(&s->res);
	h1m_release(&s->cli_m);
	h1m_release(&s->srv_m);
}

/* Gets back what an idle stream gave away. Returns 0 or -1 (no memory). */
static int http_idle_acquire(struct stream *s)
{
	if (!s->txn) {
		s->txn = pool_alloc(&pool_txn);
		if (!s->txn)
			return -1;
		txn_start(s);
		/* the idle time (%Ti) began with the wait: stream_next_txn()
		 * dated it in accept_ms */
		s->txn->idle_start_ms = s->accept_ms;
	}
	if (!s->req.area && buf_alloc(&s->req) < 0)
		return -1;
	if (!s->res.area && buf_alloc(&s->res) < 0)
		return -1;
	return 0;
}

/* Whether a stream waiting for a request has anything to do: bytes
 * buffered or readable, the client gone, or its timeout struck. */
static int http_wait_req_due(const struct stream *s)
{
	return s->cli_m.rx.data || (s->cli.flags & (CONN_F_RD_READY | CONN_F_RD_SHUT | CONN_F_HUP |
	                                            CONN_F_ERROR)) ||
	       (s->http_exp && now_ms() >= s->http_exp);
}

/* Whether the client connection is HTTP/2 from the start: `proto h2` on
 * its bind, or ALPN h2. */
static int cli_is_h2(const struct stream *s)
{
	const unsigned char *alpn = NULL;
	unsigned int alpn_len = 0;

	if (s->lst->bc->proto != BIND_PROTO_AUTO)
		return s->lst->bc->proto == BIND_PROTO_H2;
	if (!s->cli.ssl)
		return 0;
	SSL_get0_alpn_selected(s->cli.ssl, &alpn, &alpn_len);
	return alpn_len == 2 && !memcmp(alpn, "h2", 2);
}

/* The client connection counts as an HTTP/1 one of the frontend (show
 * stat h1_*) from the first wait for a request, unless it is HTTP/2 from
 * the start. A clear one that turns out to be HTTP/2 by its preface was an
 * HTTP/1 one until then, as in HAProxy, whose HTTP/1 mux finds it. */
static void h1_fe_conn_count(struct stream *s)
{
	if (s->txn_count || s->cli.cnt || (s->http_flags & SF_H2) || !conn_is_open(&s->cli) ||
	    cli_is_h2(s))
		return;
	conn_count_start(&s->cli, &s->fe->fe_mux.h1.conn);
	CNT_INC(s->fe->fe_mux.h1.total_conns);
}

/* The first request of a connection: HTTP/2 by the bind's `proto h2`, by
 * ALPN, or by its preface on a clear HTTP listener takes the connection
 * to the HTTP/2 mux, and this stream ends without a log line. Returns 1
 * when the stream is done (taken over, or waiting for more bytes to
 * tell). */
static int http_h2_detect(struct stream *s)
{
	int h2 = cli_is_h2(s);

	if (s->lst->bc->proto == BIND_PROTO_H1)
		return 0;
	if (!h2 && !s->cli.ssl) {
		int m;

		h1m_read(&s->cli_m, max_head(s));
		if (!s->cli_m.rx.data)
			return 0;
		m = h2_preface_match(buf_head(&s->cli_m.rx), s->cli_m.rx.data);
		if (m < 0 || (!m && (s->cli.flags & (CONN_F_RD_SHUT | CONN_F_ERROR | CONN_F_HUP))))
			return 0;
		if (!m)   /* a beginning of the preface: wait for the rest, within timeout http-request */
			return !(s->http_exp && now_ms() >= s->http_exp);
		h2 = 1;
	}
	if (!h2)
		return 0;
	s->txn->flags |= TX_F_LOGGED;
	if (h2_front_takeover(s) < 0) {
		s->st = SST_CLOSED;
		return 1;
	}
	s->http_flags |= SF_CONN_GIVEN;
	s->st = SST_CLOSED;
	return 1;
}

static void http_wait_req_run(struct stream *s)
{
	struct http_txn *t = s->txn;
	struct proxy *fe = s->fe;
	struct h1_error err;
	enum h1_result r;
	int failed;

	check_kept_server_conn(s);
	if (!s->txn_count && http_h2_detect(s))
		return;
	/* a request head goes in an empty channel; without a buffer, the
	 * mux may hand its own over (no copy) */
	buf_release(&s->req);
	r = h1m_rcv_head(&s->cli_m, &s->req, 1, HTTP_METH_OTHER, max_head(s),
	                 H1_O_BARE_LF | H1_O_HOST_OPTIONAL | H1_O_ANY_VERSION |
	                 ((fe->options & PX_O_ACCEPT_INV_REQ) ? H1_O_ACCEPT_INVALID : 0),
	                 &t->req, &err);
	failed = !!(s->cli.flags & CONN_F_ERROR);
	if ((r != H1_INCOMPLETE || s->cli_m.rx.data) && !t->req_first_ms) {
		t->req_first_ms = now_ms();
		http_txn_take_id(s);
		/* the request's first byte: an HTTP/1 stream opens */
		if (!s->h2s && !(s->http_flags & SF_H1_FE_STRM)) {
			s->http_flags |= SF_H1_FE_STRM;
			CNT_INC(fe->fe_mux.h1.total_streams);
			CNT_INC(fe->fe_mux.h1.open_streams);
		}
		if (s->txn_count)
			s->http_exp = tick_add_ifset(t->req_first_ms,
			                             http_first_set(fe->timeout_http_request,
			                                            fe->timeout_client));
	}
	if (r == H1_OK) {
		http_request_parsed(s);
		return;
	}
	if (r == H1_ERROR) {
		t->err_reason = err.reason;
		if (s->cli_m.rx.data)   /* the bytes refused (show errors) */
			errcap_record(fe, 0, NULL, NULL, &s->cli.src, buf_head(&s->cli_m.rx),
			              s->cli_m.rx.data, err.offset, err.reason);
		stkctr_http_request(s, 1);
		CNT_INC(fe->fe_cnt.failed_req);
		cnt_fe_req(&fe->fe_cnt, th_ctx->now_ms);   /* HAProxy counts it too */
		t->req.head_len = 0;
		t->uri_copy_len = 0;
		/* HAProxy 2.6 answers every invalid request with 400 (too
		 * long lines and unknown versions included); the reason
		 * stays in the log. The connection cannot be resumed. */
		t->flags |= TX_F_CLI_CLOSE;
		http_reply_start(s, 400, NULL, 'P', 'R');
		return;
	}
	if (failed || (s->cli.flags & (CONN_F_RD_SHUT | CONN_F_HUP))) {
		if (!s->cli_m.rx.data && (s->txn_count || (fe->options & PX_O_HTTP_IGN_PROBES))) {
			t->flags |= TX_F_LOGGED;   /* a keep-alive or probe connection ends */
			s->st = SST_CLOSED;
			return;
		}
		/* HAProxy 2.6 counts and logs an aborted request as a 400
		 * (option dontlognull aside); a reset client gets nothing */
		CNT_INC(fe->fe_cnt.failed_req);
		CNT_INC(fe->fe_cnt.cli_aborts);
		cnt_fe_req(&fe->fe_cnt, th_ctx->now_ms);
		if (failed) {
			stream_abort(s, 'C', 'R');
			t->status = 400;
			http_count_status(s, 400);
			return;
		}
		http_reply_start(s, 400, NULL, 'C', 'R');
		return;
	}
	if (s->http_exp && now_ms() >= s->http_exp) {
		if (!s->cli_m.rx.data && (s->txn_count || (fe->options & PX_O_HTTP_IGN_PROBES))) {
			t->flags |= TX_F_LOGGED;
			s->st = SST_CLOSED;
			return;
		}
		CNT_INC(fe->fe_cnt.failed_req);
		t->flags |= TX_F_CLI_CLOSE;
		http_reply_start(s, 408, NULL, 'c', 'R');
	}
}

/* How long an idle keep-alive connection stays open after a soft stop
 * began (see http_wait_req()). */
#define STOP_IDLE_CLOSE_MS 1000

static void http_wait_req(struct stream *s)
{
	h1_fe_conn_count(s);
	if (atomic_load(&global.stopping) && s->txn_count && !s->cli_m.rx.data &&
	    !(s->cli.flags & CONN_F_RD_READY)) {
		/* soft stop: an idle keep-alive connection closes, but not at
		 * once. A client may be sending its next request right now,
		 * and would see the connection close under it (HTTP's
		 * keep-alive race: with a reload every few seconds, busy
		 * clients hit it). For STOP_IDLE_CLOSE_MS, a request that
		 * comes gets its response with "Connection: close" instead;
		 * what is still idle then has been idle that long, and goes. */
		uint64_t close_at = atomic_load(&global.stop_ms) + STOP_IDLE_CLOSE_MS;

		if (now_ms() >= close_at) {
			if (s->txn)
				s->txn->flags |= TX_F_LOGGED;
			s->st = SST_CLOSED;
			return;
		}
		if (!s->http_exp || s->http_exp > close_at)
			s->http_exp = close_at;
	}
	if (!http_wait_req_due(s)) {
		check_kept_server_conn(s);
		http_idle_release(s);
		return;
	}
	if (http_idle_acquire(s) < 0) {
		/* no memory to read the request with: nothing can be answered
		 * either (the connection is closed, as on a failed accept) */
		s->st = SST_CLOSED;
		return;
	}
	http_wait_req_run(s);
	if (s->st == SST_HTTP_WAIT_REQ)
		http_idle_release(s);
}

/* Waiting for the request body (http-buffer-request, wait-for-body): the
 * analysis resumes once the body is complete, the channel full, the client
 * done sending, or the request timeout struck. */
static void http_body_wait(struct stream *s)
{
	if (read_request_body(s) < 0) {
		CNT_INC(s->fe->fe_cnt.failed_req);
		s->txn->flags |= TX_F_CLI_CLOSE;
		http_reply_start(s, 400, NULL, 'P', 'R');
		return;
	}
	if ((s->cli.flags & (CONN_F_ERROR | CONN_F_HUP))) {
		stream_abort(s, 'C', 'R');
		return;
	}
	buf_realign(&s->req);
	/* a suspended action (Lua) is resumed at each wake-up: it may wait
	 * for a socket of its own */
	if (!s->txn->req_body.done && buf_room(&s->req) && !s->txn->rule_busy &&
	    !(s->cli.flags & CONN_F_RD_SHUT) && !(s->http_exp && now_ms() >= s->http_exp))
		return;
	if (!s->txn->req_body.done && !s->txn->resume && s->http_exp && now_ms() >= s->http_exp &&
	    buf_room(&s->req)) {
		/* http-buffer-request: the body did not come within timeout
		 * http-request (wait-for-body goes on with what it has) */
		CNT_INC(s->fe->fe_cnt.failed_req);
		s->txn->flags |= TX_F_CLI_CLOSE;
		http_reply_start(s, 408, NULL, 'c', 'R');
		return;
	}
	s->st = SST_HTTP_WAIT_REQ;   /* the analysis sets the next state */
	http_analyze(s, 1);
	/* a second wait is a rule that waits without end, unless an action
	 * suspended itself (Lua) and asked to be called again */
	if (s->st == SST_HTTP_BODY_WAIT && !s->txn->rule_busy)
		http_reply_start(s, 500, NULL, 'P', 'R');
}

/* ---- transfer ---- */

void http_body_init(struct txn_body *b, const struct http_msg *m, int is_req)
{
	memset(b, 0, sizeof(*b));
	if (m->flags & HTTP_F_BODYLESS) {
		b->done = 1;
	} else if (m->flags & HTTP_F_CHUNKED) {
		b->chunked = 1;
	} else if (m->flags & HTTP_F_HAS_CL) {
		b->left = m->content_length;
		b->done = !b->left;
	} else if (is_req || (m->flags & HTTP_F_XFER_LEN)) {
		b->done = 1;
	} else {
		b->until_close = 1;
	}
}

static void count_failed_resp(struct stream *s, enum hana_status hana);
static int response_started(const struct stream *s);

/* The request head leaves the request channel once it goes out (the
 * server's mux has its serialised copy): its spans are dropped. */
static void request_head_gone(struct stream *s)
{
	struct http_txn *t = s->txn;

	if (t->flags & TX_F_REQ_GONE)
		return;
	t->flags |= TX_F_REQ_GONE;
	if (s->h2bs && !(t->flags & TX_F_REPLIED) && h2bs_tx_finished(s->h2bs) &&
	    !h2bs_failed(s->h2bs) && s->req.data == t->req.head_len) {
		/* sent whole, with END_STREAM on its HEADERS */
		/* a refused HTTP/2 stream (RFC 9113 section 8.7) is sent again:
		 * see h2_refused_retry() */
		t->flags |= TX_F_REQ_KEPT;
		return;
	}
	if (t->req.head_len <= s->req.data)
		buf_consume(&s->req, t->req.head_len);
	t->req.head_len = 0;
	t->req.nhdrs = 0;
}

/* The request head kept for a retry is dropped once a response comes. */
static void request_kept_drop(struct stream *s)
{
	struct http_txn *t = s->txn;

	if (!(t->flags & TX_F_REQ_KEPT))
		return;
	t->flags &= ~TX_F_REQ_KEPT;
	if (t->req.head_len <= s->req.data)
		buf_consume(&s->req, t->req.head_len);
	t->req.head_len = 0;
	t->req.nhdrs = 0;
}

/* The HTTP/2 server refused the stream before processing it (REFUSED_STREAM,
 * or a GOAWAY that came while the request was on its way): a bodyless
 * request, kept whole, goes again on another connection, as a connection
 * retry (RFC 9113 section 8.7: the request is known not to be processed).
 * Returns 1 if it does. */
static int h2_refused_retry(struct stream *s)
{
	struct http_txn *t = s->txn;

	if (!s->h2bs || !h2bs_refused(s->h2bs) || !(t->flags & TX_F_REQ_KEPT) ||
	    response_started(s) || s->retries_left <= 0)
		return 0;
	h2bs_detach(s->h2bs);
	s->h2bs = NULL;
	conn_init(&s->sc, s->task);
	t->flags &= ~(TX_F_REQ_GONE | TX_F_REQ_KEPT);
	t->req_sent_ms = 0;
	s->srv_exp = 0;
	stream_retry(s);
	task_wakeup(s->task, TASK_WOKEN_OTHER);
	return 1;
}


/* Moves the request toward the server (or drops it when sluice answered
 * itself). Returns 1 on progress, -1 on error (term set). */
static int xfer_request(struct stream *s)
{
	struct http_txn *t = s->txn;
	int progress = 0, rc;

	if (!(t->flags & (TX_F_REPLIED | TX_F_REQ_GONE))) {
		rc = http_request_emit(s);
		if (rc == -2)
			return 1;   /* back to connecting: see http_request_emit() */
		if (rc == 1)
			return 0;   /* the HTTP/2 server's SETTINGS first */
		if (rc == -3) {
			/* HTTP/2 toward the server cannot carry it */
			t->flags |= TX_F_SRV_CLOSE;
			count_failed_resp(s, HANA_HTTP_RSP);
			http_reply_start(s, 502, NULL, 'P', 'H');
		} else if (rc < 0) {
			CNT_INC(s->fe->fe_cnt.failed_rewrites);
			t->flags |= TX_F_SRV_CLOSE;
			http_reply_start(s, 500, NULL, 'P', 'R');
		}
	}
	if (t->req.head_len || (t->flags & TX_F_REPLIED))
		request_head_gone(s);
	if (!t->req_body.done) {
		rc = read_request_body(s);
		if (rc < 0) {
			CNT_INC(s->fe->fe_cnt.failed_req);
			t->req_body.done = 1;        /* nothing more of it is read */
			t->flags |= TX_F_CLI_CLOSE;
			s->req.head = s->req.data = 0;
			return -1;
		}
		if (rc > 0) {
			s->cli_exp = tick_add_ifset(now_ms(), s->fe->timeout_client);
			progress = 1;
		}
	}
	if (t->flags & TX_F_REPLIED) {
		/* the request sluice answered is read and dropped, unless the
		 * service answering it reads it (it wakes on its arrival) */
		if (s->svc_reads_body)
			return progress;
		if (s->req.data) {
			s->req.head = s->req.data = 0;
			progress = 1;
		}
		if (!t->req_body.done &&
		    ((s->cli_m.rx_mode == H1M_B_LEN && s->cli_m.rx_left > s->req.size) ||
		     s->cli_m.rx_mode == H1M_B_CHUNKED))
			t->flags |= TX_F_CLI_CLOSE;   /* too much to drain: close after */
		return progress;
	}
	if (s->h2bs && !(s->sc.flags & CONN_F_ERROR) && !h2bs_tx_finished(s->h2bs)) {
		/* the HTTP/2 connection pulls the payload (and wakes us) */
		size_t tlen;
		const char *tlr = http_cli_trailers(s, &tlen);

		/* a request opening a tunnel (CONNECT, websocket) keeps its
		 * stream open for the tunnel's bytes */
		int tun = t->meth == HTTP_METH_CONNECT ||
		          ((t->req.flags & HTTP_F_UPGRADE) && (t->req.flags & HTTP_F_CONN_UPGRADE));

		h2bs_snd_body(s->h2bs, t->req_body.done && !tun, tlr, tlen);
	} else if (s->h2bs) {
		if (!t->req_sent_ms)
			t->req_sent_ms = now_ms();
	} else if (!(s->sc.flags & CONN_F_ERROR) && !h1m_tx_finished(&s->srv_m)) {
		size_t tlen;
		const char *tlr = http_cli_trailers(s, &tlen);

		rc = h1m_snd_body(&s->srv_m, &s->req, t->req_body.done, tlr, tlen);
		if (rc > 0) {
			s->srv_exp = tick_add_ifset(now_ms(), s->txn->srv_timeout_ms ?
			                            s->txn->srv_timeout_ms : s->be->timeout_server);
			progress = 1;
			if (h1m_tx_finished(&s->srv_m) && !t->req_sent_ms)
				t->req_sent_ms = now_ms();
		}
	}
	return progress;
}
/* Response rules of <px> (http-response or http-after-response). Returns 0
 * to go on, -1 when the response was replaced or the stream must close. */
static int run_res_rules(struct stream *s, struct proxy *px, struct list *rules,
                         enum act_ruleset set)
{
	struct http_txn *t = s->txn;
	struct smp_ctx c;
	struct act_env env;
	enum act_verdict v;

	if (list_empty(rules))
		return 0;
	stream_smp_ctx_init(s, &c, SMP_DIR_RES);
	memset(&env, 0, sizeof(env));
	env.s = s;
	env.px = px;
	env.set = set;
	env.smp = &c;
	env.msg = &t->res;
	env.edit = &t->res_edit;
	env.buf_full = 1;   /* response bodies are not buffered: wait-for-body
	                     * there works on what already arrived */
	env.resume = t->resume;
	env.rule_busy = t->rule_busy;
	if (set == ACT_HTTP_RES && !(t->flags & TX_F_REPLIED) &&
	    (thr_spare.area || buf_alloc(&thr_spare) == 0)) {
		thr_spare.head = thr_spare.data = 0;
		env.reply = &thr_spare;
	}
	v = act_exec(rules, &env);
	t->resume = NULL;
	t->rule_busy = 0;
	if (v == ACT_V_YIELD && env.rule_busy) {
		/* an action suspended itself (Lua): this list resumes at the
		 * same rule at env.wait_exp_ms (now for a forced yield) */
		t->resume = env.resume;
		t->rule_busy = 1;
		t->res_wake_ms = env.wait_exp_ms;
		return -3;
	}
	switch (v) {
	case ACT_V_REPLY: {
		/* return/redirect: the server's response is dropped, the
		 * reply takes its place (its connection cannot be reused) */
		struct buffer tmp = s->res;

		if (!env.reply)
			return 0;
		s->res = thr_spare;
		thr_spare = tmp;
		t->flags |= TX_F_SRV_CLOSE | TX_F_REPLIED;
		if (env.close)
			t->flags |= TX_F_CLI_CLOSE;
		return -1;
	}
	case ACT_V_DENY:
		if (set != ACT_HTTP_RES)
			return 0;
		CNT_INC(px->fe_cnt.denied_resp);
		if (px != s->fe)
			CNT_INC(s->fe->fe_cnt.denied_resp);
		t->flags |= TX_F_SRV_CLOSE;
		http_reply_prepare(s, env.status ? env.status : 502, env.deny_reply);
		if (s->term[0] == '-') {
			s->term[0] = 'P';
			s->term[1] = 'H';
		}
		return -1;
	case ACT_V_ERROR:
		CNT_INC(px->fe_cnt.failed_rewrites);
		if (set != ACT_HTTP_RES)
			return 0;
		t->flags |= TX_F_SRV_CLOSE;
		http_reply_prepare(s, 502, NULL);
		if (s->term[0] == '-') {
			s->term[0] = 'P';
			s->term[1] = 'H';
		}
		return -1;
	case ACT_V_REJECT:
		s->term[0] = 'P';
		s->term[1] = 'H';
		return -2;
	default:
		return 0;
	}
}

/* The response is compressed: its stream state, then its head. A state
 * that cannot be had leaves the response as it is (HAProxy does the same
 * when its compression cannot start); a head that cannot be edited fails
 * the response. Returns 0 or -1. */
static int response_comp_start(struct stream *s)
{
	struct http_txn *t = s->txn;

	t->comp = comp_ctx_new(t->comp_algo, global.comp_maxlevel);
	if (!t->comp) {
		t->comp_on = 0;
		return 0;
	}
	if (comp_response_edit(&t->res_edit, t->comp_algo) < 0) {
		comp_ctx_free(t->comp);
		t->comp = NULL;
		t->comp_on = 0;
		return -1;
	}
	CNT_INC(s->fe->fe_cnt.comp_rsp);
	if (s->be)
		CNT_INC(s->be->be_cnt.comp_rsp);
	return 0;
}

/* Compresses what waits in the staging buffer into the response channel
 * (comp_ctx_feed()), counting the input for maxcomprate when it is set. */
static int response_comp_feed(struct stream *s, int mode)
{
	struct comp_ctx *c = s->txn->comp;
	uint64_t in0, in1, out;
	int rc;

	if (!global.comp_maxrate)
		return comp_ctx_feed(c, &s->res, mode);
	comp_ctx_counts(c, &in0, &out);
	rc = comp_ctx_feed(c, &s->res, mode);
	comp_ctx_counts(c, &in1, &out);
	if (in1 > in0)
		comp_rate_add(now_ms(), in1 - in0);
	return rc;
}

/* The bytes a compressed response gave to the compressor and got from it,
 * for `show stat` (comp_in, comp_out), once, before the context goes. */
static void response_comp_account(struct stream *s)
{
	struct http_txn *t = s->txn;
	uint64_t in, out;

	if (!t || !t->comp)
		return;
	comp_ctx_counts(t->comp, &in, &out);
	CNT_ADD(s->fe->fe_cnt.comp_in, in);
	CNT_ADD(s->fe->fe_cnt.comp_out, out);
	if (s->be) {
		CNT_ADD(s->be->be_cnt.comp_in, in);
		CNT_ADD(s->be->be_cnt.comp_out, out);
	}
	comp_ctx_free(t->comp);
	t->comp = NULL;
}

static int response_rules(struct stream *s);

/* A final response head is parsed at the start of the response channel:
 * rules, then serialisation into the client's mux. Returns 0, 1 or 2 (go
 * on), 3 (a rule waits: see response_rules()), or -1 to close. */
static int response_parsed(struct stream *s)
{
	struct http_txn *t = s->txn;
	struct http_msg *m = &t->res;
	unsigned int fl = H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED;
	int from_server = !(t->flags & TX_F_REPLIED);

	if (from_server && http_l7_retry(s, http_retry_bit_of_status(m->status)))
		return 2;
	if (from_server) {
		/* observe layer7: HAProxy's good codes are 100-499, 501, 505 */
		if (s->srv && s->srv->observe)
			srv_observe(s->srv, (m->status >= 100 && m->status < 500) || m->status == 501 ||
			                    m->status == 505 ? HANA_HTTP_OK : HANA_HTTP_STS);
		t->res_head_ms = now_ms();
		t->Tr = (int)(t->res_head_ms - (t->req_sent_ms ? t->req_sent_ms : t->req_head_ms));
		t->srv_status = m->status;
		/* decided before the rules, as HAProxy 2.6 (res.comp is true in
		 * http-response rules); the head changes after them */
		if (t->comp_algo)
			t->comp_on = comp_response_ok(s->fe->comp, s->be ? s->be->comp : NULL,
			                              t->comp_algo, !!(t->req.flags & HTTP_F_VER_11),
			                              t->meth, s->h2bs && h2bs_rx_done(s->h2bs), m) &&
			             !comp_rate_exceeded(now_ms());
	} else {
		/* of sluice's own replies, only a service's may be compressed
		 * (HAProxy filters its applets' responses, not its errors) */
		t->comp_on = http_service_pending(s) && t->comp_algo &&
		             comp_response_ok(s->fe->comp, s->be && s->be != s->fe ? s->be->comp : NULL,
		                              t->comp_algo, !!(t->req.flags & HTTP_F_VER_11),
		                              t->meth, 0, m);
	}
	http_edit_init(&t->res_edit, m, t->res_arena, sizeof(t->res_arena), TXN_HDRS_CAP);
	/* capture response header: as received, before any rule */
	for (int i = 0; i < s->fe->nres_cap && i < TXN_MAX_CAPTURES; i++) {
		const struct px_capture *cap = &s->fe->res_cap[i];
		struct ist v;

		if (http_hdr_occ(m, (struct ist){ cap->name, strlen(cap->name) }, -1, 0, &v)) {
			size_t l = v.len < (size_t)cap->len ? v.len : (size_t)cap->len;

			free(t->res_cap[i]);
			t->res_cap[i] = malloc(l + 1);
			if (t->res_cap[i]) {
				memcpy(t->res_cap[i], v.ptr, l);
				t->res_cap[i][l] = '\0';
			}
		}
	}
	if (s->fe->capture_cookie && !t->cookie_cap_srv)
		t->cookie_cap_srv = http_cookie_capture(m, 1, s->fe->capture_cookie,
		                                        s->fe->capture_cookie_len);
	if (m->flags & HTTP_F_TUNNEL)
		fl |= H1O_F_TUNNEL;
	if (from_server) {
		/* "req" variables live during request processing only (HAProxy
		 * 2.6: empty in http-response rules and in the log line) */
		vars_prune(&t->vars_req);
		if ((m->flags & HTTP_F_CONN_CLOSE) || !(m->flags & HTTP_F_XFER_LEN) ||
		    (!(m->flags & HTTP_F_VER_11) && !(m->flags & HTTP_F_CONN_KA)))
			t->flags |= TX_F_SRV_CLOSE;
		http_hdr_del_conn_named(&t->res_edit, !!(m->flags & HTTP_F_TUNNEL));
		/* tracked entries count the server's 4xx and 5xx before the
		 * response rules read them, as in HAProxy */
		if (m->status >= 200) {
			stkctr_http_status(s, m->status);
			stick_rules_commit(s);
			stick_rules_response(s);
		}
	}
	t->res_out_flags = fl;
	t->res_rules_step = 0;
	return response_rules(s);
}

/* The response rules of a parsed head (http-response of the backend then
 * the frontend, the persistence cookie, http-after-response), then its
 * serialisation. A rule that suspends itself (Lua) leaves the head in the
 * channel with TX_F_RES_RULES_WAIT: xfer_response_head() calls again, and
 * the rules resume at res_rules_step. Returns 0, 1 (replaced: go on with
 * the reply), 3 (waiting), or -1 to close. */
static int response_rules(struct stream *s)
{
	struct http_txn *t = s->txn;
	struct http_msg *m = &t->res;
	unsigned int fl = t->res_out_flags;
	int from_server = !(t->flags & TX_F_REPLIED);
	int rc = 0;

	t->flags &= ~TX_F_RES_RULES_WAIT;
	if (from_server && t->res_rules_step <= 1) {
		if (t->res_rules_step == 0) {
			rc = run_res_rules(s, s->be, &s->be->http_res_rules, ACT_HTTP_RES);
			if (rc == -3)
				goto wait;
			t->res_rules_step = 1;
		}
		if (!rc && s->be != s->fe) {
			rc = run_res_rules(s, s->fe, &s->fe->http_res_rules, ACT_HTTP_RES);
			if (rc == -3)
				goto wait;
		}
		t->res_rules_step = 2;
		if (rc == -2)
			return -1;
		if (rc == -1)
			return 1;   /* replaced by a local reply: parse it instead */
		if (s->be->cookie_name &&
		    (s->be->cookie_opts & (PX_CK_INSERT | PX_CK_REWRITE | PX_CK_PREFIX)) &&
		    http_cookie_response_ex(s->be, s->srv, t->srv_from_cookie, m, &t->res_edit,
		                            t->cookie_term, &t->ck) < 0) {
			CNT_INC(s->be->be_cnt.failed_rewrites);
			t->flags |= TX_F_SRV_CLOSE;
			http_reply_prepare(s, 502, NULL);
			return 1;
		}
	}
	if (t->res_rules_step < 2)
		t->res_rules_step = 2;
	if (t->res_rules_step == 2) {
		rc = s->be ? run_res_rules(s, s->be, &s->be->http_after_rules, ACT_HTTP_AFTER) : 0;
		if (rc == -3)
			goto wait;
		if (rc == -2)
			return -1;
		t->res_rules_step = 3;
	}
	if (t->res_rules_step == 3) {
		rc = s->be != s->fe ? run_res_rules(s, s->fe, &s->fe->http_after_rules,
		                                    ACT_HTTP_AFTER) : 0;
		if (rc == -3)
			goto wait;
		if (rc == -2)
			return -1;
		t->res_rules_step = 4;
	}
	t->status = m->status;
	if (!from_server && (m->flags & HTTP_F_CONN_CLOSE))
		t->flags |= TX_F_CLI_CLOSE;
	if (atomic_load(&global.stopping))
		t->flags |= TX_F_CLI_CLOSE;   /* soft stop: the last response, "Connection: close" */
	http_body_init(&t->res_body, m, 0);
	if (from_server && s->h2bs) {
		/* HTTP/2 frames the body: it ends with the stream */
		t->res_body.until_close = 0;
		/* a tunnel's bytes come after the switch, not as a body */
		t->res_body.done = (m->flags & HTTP_F_TUNNEL) || h2bs_rx_done(s->h2bs);
		if (!s->h2s && !(m->flags & (HTTP_F_HAS_CL | HTTP_F_BODYLESS))) {
			if (t->res_body.done) {
				m->flags |= HTTP_F_HAS_CL;
				m->content_length = 0;
				fl |= H1O_F_ADD_CL;
			} else if (t->req.flags & HTTP_F_VER_11) {
				fl |= H1O_F_ADD_CHUNKED;
			} else {
				/* an HTTP/1.0 client: the body ends with the connection */
				m->flags &= ~HTTP_F_XFER_LEN;
				t->flags |= TX_F_CLI_CLOSE;
			}
		}
	}
	if (t->comp_on) {
		if (response_comp_start(s) < 0) {
			CNT_INC(s->fe->fe_cnt.failed_rewrites);
			return -1;
		}
		if (t->comp_on) {
			/* the length changes: chunked to HTTP/1, DATA frames until
			 * END_STREAM to HTTP/2 */
			fl &= ~H1O_F_ADD_CL;
			if (!s->h2s)
				fl |= H1O_F_ADD_CHUNKED;
		}
	}
	if (t->res_body.until_close)
		t->flags |= TX_F_CLI_CLOSE;   /* the body ends with the connection */
	if (m->flags & HTTP_F_TUNNEL) {
		t->flags |= TX_F_TUNNEL;
	} else if (t->flags & TX_F_CLI_CLOSE) {
		fl |= H1O_F_CONN_CLOSE;
	} else if (!(m->flags & HTTP_F_VER_11) || !(t->req.flags & HTTP_F_VER_11)) {
		/* with HTTP/1.0 on either side, persistence must be explicit */
		fl |= H1O_F_CONN_KA;
	} else {
		fl |= H1O_F_CONN_SCRUB;
	}
	if (cli_snd_head(s, m, fl, 0) < 0) {
		CNT_INC(s->fe->fe_cnt.failed_rewrites);
		return -1;
	}
	buf_consume(&s->res, m->head_len);
	m->head_len = 0;
	t->flags |= TX_F_RES_GONE;
	if (cache_txn_storing(&t->cache)) {
		/* what arrived of the body with the head, then maybe all of it */
		cache_store_data(&t->cache, buf_head(&s->res), s->res.data);
		if (http_srv_rx_done(s))
			cache_store_end(&t->cache, now_ms());
	}
	if (t->comp && s->res.data) {
		/* body bytes an http-response wait-for-body kept: compressed
		 * first (the staging buffer is as large as the channel) */
		struct buffer *in = comp_ctx_input(t->comp);

		memcpy(buf_tail(in), buf_head(&s->res), s->res.data);
		in->data += s->res.data;
		s->res.head = s->res.data = 0;
	}
	if (s->h2s ? h2s_tx_finished(s->h2s) : (h1m_tx_finished(&s->cli_m) || s->cli_m.tx_done)) {
		/* bodyless (HEAD, 204, 304): a local reply's body stays here */
		s->res.head = s->res.data = 0;
		if (!from_server)
			http_service_release(s);
	}
	m->nhdrs = 0;
	http_count_status(s, t->status);
	return 0;
wait:
	t->flags |= TX_F_RES_RULES_WAIT;
	return 3;
}

/* A response that failed (invalid, missing, timed out, cut short) counts
 * in eresp of the backend and of the server, as in HAProxy, and tells
 * `observe layer7` how (<hana>). */
static void count_failed_resp(struct stream *s, enum hana_status hana)
{
	if (s->be)
		CNT_INC(s->be->be_cnt.failed_resp);
	if (s->srv) {
		CNT_INC(s->srv->cnt.failed_resp);
		if (s->srv->observe)
			srv_observe(s->srv, hana);
	}
}

/* Whether anything of a response went toward the client already (a 1xx
 * head counts). */
static int response_started(const struct stream *s)
{
	return (s->txn->flags & TX_F_RES_STARTED) || s->txn->resp_interim;
}

/* Receives and parses the response head: the server's through its mux, or
 * sluice's own, put whole in the response channel. Returns 1 on progress,
 * 0 when waiting, -1 on error (term and reply decided). */
static int xfer_response_head(struct stream *s)
{
	struct http_txn *t = s->txn;
	int replied = !!(t->flags & TX_F_REPLIED);
	size_t before = srv_rx_pending(s);
	struct h1_error err;
	enum h1_result r;

	if (t->flags & TX_F_RES_RULES_WAIT) {
		/* the head is parsed, a rule of it waits (Lua): when its date
		 * came, or at any wake-up (it checks its own conditions) */
		int rc = response_rules(s);

		if (rc == 3)
			return 0;
		if (rc < 0) {
			if (s->term[0] == '-') {
				s->term[0] = 'P';
				s->term[1] = 'H';
			}
			return -1;
		}
		return 1;
	}
	if (replied) {
		/* a local reply is parsed in place: its head storage is where
		 * the model wants it, its body follows as payload */
		if (!s->res.data && !http_service_head(s))
			return 0;   /* a service that has not made its head yet */
		buf_realign(&s->res);
		if (s->res.head) {
			memmove(s->res.area, buf_head(&s->res), s->res.data);
			s->res.head = 0;
		}
		r = h1_parse_head(buf_head(&s->res), s->res.data, 0, t->meth, s->res.size, H1_O_BARE_LF,
		                  &t->res, &err);
		if (r != H1_OK)
			return -1;   /* sluice's own reply is always whole and valid */
	} else {
		if (s->res.data)
			return 0;    /* the previous 1xx is still on its way */
		if (s->res.area && !s->h2bs)
			buf_release(&s->res);   /* see http_wait_req_run() */
		if (s->h2bs)
			r = h2bs_rcv_head(s->h2bs, &s->res, max_head(s), &t->res, &err);
		else
			r = h1m_rcv_head(&s->srv_m, &s->res, 0, t->meth, max_head(s),
		                 H1_O_BARE_LF |
		                 ((s->be && (s->be->options & PX_O_ACCEPT_INV_RES)) ?
		                  H1_O_ACCEPT_INVALID : 0),
		                 &t->res, &err);
	}
	if (r == H1_ERROR) {
		t->err_reason = err.reason;
		if (!s->h2bs && s->srv_m.rx.data && s->be)   /* show errors */
			errcap_record(s->be, 1, s->fe, s->srv, &s->cli.src, buf_head(&s->srv_m.rx),
			              s->srv_m.rx.data, err.offset, err.reason);
		if (http_l7_retry(s, RETRY_ON_JUNK_RESPONSE))
			return 1;
		count_failed_resp(s, HANA_HTTP_HDRRSP);
		t->flags |= TX_F_SRV_CLOSE;
		if (response_started(s))
			return -1;
		http_reply_start(s, 502, NULL, 'P', 'H');
		return 1;
	}
	if (r == H1_OK) {
		if (!replied)
			request_kept_drop(s);
		if (t->res.status < 200 && t->res.status != 101) {
			/* interim response: forwarded at once */
			if (cli_snd_head(s, &t->res, 0, 1) < 0)
				return -1;
			buf_consume(&s->res, t->res.head_len);
			t->res.head_len = 0;
			t->res.nhdrs = 0;
			t->resp_interim++;
			return 1;
		}
		int rc = response_parsed(s);

		if (rc == 3)
			return 0;   /* a response rule waits (Lua) */
		if (rc > 0)
			return 1;   /* a deny replaced it, or a retry: go on */
		if (rc < 0) {
			if (s->term[0] == '-') {
				s->term[0] = 'P';
				s->term[1] = 'H';
			}
			return -1;
		}
		return 1;
	}
	if (replied)
		return 0;
	if ((s->sc.flags & (CONN_F_RD_SHUT | CONN_F_ERROR | CONN_F_HUP))) {
		if (h2_refused_retry(s))
			return 1;
		if (!srv_rx_pending(s) && !t->resp_interim &&
		    http_l7_retry(s, RETRY_ON_EMPTY_RESPONSE))
			return 1;
		if (!srv_rx_pending(s) && http_reuse_retry(s))
			return 1;
		t->flags |= TX_F_SRV_CLOSE;
		count_failed_resp(s, HANA_HTTP_BROKEN_PIPE);
		if (response_started(s))
			return -1;
		if (!(t->flags & TX_F_FIRST_REQ) && !srv_rx_pending(s) && !s->h2bs) {
			/* as HAProxy: on a later request of a keep-alive client, a
			 * server that closes without a byte gets the client closed
			 * silently, so that the client can retry the request */
			return -1;
		}
		http_reply_start(s, 502, NULL, 'S', 'H');
		return 1;
	}
	return srv_rx_pending(s) != before;
}

/* The server closed (FIN or reset) before the end of its response body:
 * what arrived still goes to the client, then the client connection is
 * closed, the only way HTTP/1.1 has to say "truncated" (RFC 9112 section
 * 8), and the transaction is logged SD, as HAProxy does. Nothing more will
 * come from the server, so its timeout no longer applies. */
static void response_truncated(struct stream *s)
{
	struct http_txn *t = s->txn;

	t->flags |= TX_F_RES_TRUNC | TX_F_SRV_CLOSE | TX_F_CLI_CLOSE;
	t->err_reason = "server closed during the response body";
	s->srv_exp = 0;
	count_failed_resp(s, HANA_HTTP_BROKEN_PIPE);
	if (s->be)
		CNT_INC(s->be->be_cnt.srv_aborts);
	if (s->srv)
		CNT_INC(s->srv->cnt.srv_aborts);
}

static int xfer_response_body(struct stream *s)
{
	struct http_txn *t = s->txn;
	int progress = 0;

	if (t->flags & TX_F_REPLIED) {
		/* a local reply's payload is all in the channel, or comes
		 * from the service's body (through the compressor, maybe) */
		if (http_service_feed(s, t->comp ? comp_ctx_input(t->comp) : &s->res))
			progress = 1;
		if (t->comp) {
			int fr = response_comp_feed(s, http_service_pending(s) ? COMP_FEED_MORE :
			                                                         COMP_FEED_FINISH);

			if (fr < 0) {
				t->err_reason = "compression failed";
				return -1;
			}
			progress |= fr;
			if (comp_ctx_finished(t->comp))
				t->res_body.done = 1;
		} else if (!http_service_pending(s)) {
			t->res_body.done = 1;
		}
		return progress;
	}
	if (!t->res_body.done) {
		const char *why = NULL;
		/* a compressed body goes through the compressor's staging
		 * buffer on its way to the channel */
		struct buffer *dst = t->comp ? comp_ctx_input(t->comp) : &s->res;
		size_t before = dst->data;
		int rc = s->h2bs ? h2bs_rcv_body(s->h2bs, dst) :
		                   h1m_rcv_body(&s->srv_m, dst, &why);

		if (cache_txn_storing(&t->cache)) {
			/* the cache sees the payload before the compressor: what
			 * came in is the tail of <dst> (nothing left it meanwhile) */
			if (rc > 0 && dst->data > before)
				cache_store_data(&t->cache, buf_head(dst) + before, dst->data - before);
			if (rc >= 0 && http_srv_rx_done(s))
				cache_store_end(&t->cache, now_ms());
		}

		if (rc < 0) {
			t->err_reason = why ? why : "invalid chunked response body";
			return -1;
		}
		if (rc > 0) {
			progress = 1;
			s->srv_exp = tick_add_ifset(now_ms(), t->srv_timeout_ms ?
			                            t->srv_timeout_ms : s->be->timeout_server);
		}
		if (t->comp) {
			/* flushed whenever the server has nothing more for now, so
			 * that the client sees what came before a pause */
			int mode = http_srv_rx_done(s) ? COMP_FEED_FINISH :
			           (rc > 0 && srv_rx_pending(s)) ? COMP_FEED_MORE : COMP_FEED_SYNC;
			int fr = response_comp_feed(s, mode);

			if (fr < 0) {
				t->err_reason = "compression failed";
				return -1;
			}
			progress |= fr;
			if (comp_ctx_finished(t->comp))
				t->res_body.done = 1;
		} else if (http_srv_rx_done(s)) {
			t->res_body.done = 1;
		}
	}
	if (!(t->flags & TX_F_RES_TRUNC) && !t->res_body.done && !http_srv_rx_done(s) &&
	    !srv_rx_pending(s) && (s->sc.flags & (CONN_F_RD_SHUT | CONN_F_ERROR)))
		response_truncated(s);
	return progress;
}

static int xfer_to_client(struct stream *s)
{
	struct http_txn *t = s->txn;
	const char *tlr = NULL;
	size_t tlen = 0;
	int rc;

	if (s->cli.flags & CONN_F_ERROR)
		return 0;
	if (!(t->flags & TX_F_REPLIED))
		tlr = srv_trailers(s, &tlen);
	if (s->h2s) {
		/* the HTTP/2 connection pulls the payload (and wakes us) */
		if (t->flags & TX_F_RES_GONE) {
			t->flags |= TX_F_RES_STARTED;
			/* a tunnel's response has no body, but its stream stays
			 * open for the tunnel (http_h2_tunnel()) */
			h2s_snd_body(s->h2s, t->res_body.done && !(t->flags & TX_F_TUNNEL), tlr, tlen);
		}
		return 0;
	}
	if (!(t->flags & TX_F_RES_GONE))
		rc = h1m_flush(&s->cli_m);   /* 1xx heads */
	else
		rc = h1m_snd_body(&s->cli_m, &s->res, t->res_body.done, tlr, tlen);
	if (rc > 0) {
		t->flags |= TX_F_RES_STARTED;
		s->cli_exp = tick_add_ifset(now_ms(), s->fe->timeout_client);
		return 1;
	}
	return 0;
}

/* Whether nothing of the response waits to go to the client. */
static int response_flushed(const struct stream *s)
{
	if (s->txn->comp && comp_ctx_pending(s->txn->comp))
		return 0;
	return !s->res.data && (s->h2s || h1m_tx_empty(&s->cli_m));
}

static void txn_end(struct stream *s);

/* The client reset the connection, or shut its side before the end of the
 * request body, which therefore can never complete: the transaction ends at
 * once (no answer, both connections closed, the server slot released), as
 * HAProxy does without `option abortonclose`. A client that leaves in the
 * middle of its upload is in the data phase (CD), not waiting for the
 * response head (CH). */
static void client_aborted(struct stream *s)
{
	struct http_txn *t = s->txn;

	CNT_INC(s->fe->fe_cnt.cli_aborts);
	if (s->be)
		CNT_INC(s->be->be_cnt.cli_aborts);
	if (s->srv)
		CNT_INC(s->srv->cnt.cli_aborts);
	stream_abort(s, 'C', ((t->flags & TX_F_RES_GONE) || !t->req_body.done) ? 'D' : 'H');
}

static void switch_to_tunnel(struct stream *s)
{
	struct http_txn *t = s->txn;

	/* what is left goes through raw: what the muxes read past the heads
	 * moves into the channels, bytes from now on */
	if ((!s->h2bs && h1m_rx_to_chan(&s->srv_m, &s->res) < 0) ||
	    (!s->h2s && h1m_rx_to_chan(&s->cli_m, &s->req) < 0)) {
		stream_abort(s, 'P', 'D');
		return;
	}
	t->status = t->res.status;
	http_log(s);
	s->st = SST_ESTABLISHED;
	s->cli_exp = tick_add_ifset(now_ms(), side_timeout(s, 1));
	s->srv_exp = tick_add_ifset(now_ms(), side_timeout(s, 0));
}

/* ---- tunnels with an HTTP/2 side ---- */

/* Input of a tunnel's side into <b>: an HTTP/2 stream's DATA payload, or
 * raw bytes. Returns 1 on progress. */
static int tun_recv(struct stream *s, int client, struct buffer *b)
{
	struct conn *c = client ? &s->cli : &s->sc;

	if (client && s->h2s)
		return h2s_rcv_body(s->h2s, b);
	if (!client && s->h2bs)
		return h2bs_rcv_body(s->h2bs, b);
	if (!(c->flags & CONN_F_RD_READY) || (c->flags & CONN_F_RD_SHUT) ||
	    (!b->area && buf_alloc(b) < 0) || !buf_room(b))
		return 0;
	return conn_recv(c, b) > 0;
}

/* Whether a tunnel's side sent everything it will (END_STREAM, FIN). */
static int tun_in_done(const struct stream *s, int client)
{
	if (client && s->h2s)
		return h2s_rx_done(s->h2s);
	if (!client && s->h2bs)
		return h2bs_rx_done(s->h2bs);
	return !!((client ? &s->cli : &s->sc)->flags & CONN_F_RD_SHUT);
}

/* Output of <b> toward a tunnel's side; <eom>: the other side is done and
 * <b> holds the last of it. An HTTP/2 side pulls from <b> (and gets its
 * END_STREAM after it); a raw one is written, then shut. Returns 1 on
 * progress. */
static int tun_send(struct stream *s, int client, struct buffer *b, int eom)
{
	struct conn *c = client ? &s->cli : &s->sc;
	int p = 0;

	if (client && s->h2s) {
		if (b->data || eom)
			h2s_snd_body(s->h2s, eom, NULL, 0);
		return 0;
	}
	if (!client && s->h2bs) {
		if (b->data || eom)
			h2bs_snd_body(s->h2bs, eom, NULL, 0);
		return 0;
	}
	if (b->data && (c->flags & CONN_F_WR_READY) && !(c->flags & CONN_F_ERROR))
		p = conn_send(c, b) > 0;
	if (eom && !b->data && !(c->flags & CONN_F_WR_SHUT))
		conn_shutw(c);
	return p;
}

/* Whether a tunnel's side took everything toward it, its end included. */
static int tun_out_done(const struct stream *s, int client, const struct buffer *b)
{
	if (client && s->h2s)
		return h2s_tx_finished(s->h2s);
	if (!client && s->h2bs)
		return h2bs_tx_finished(s->h2bs);
	return !b->data;
}

void http_h2_tunnel(struct stream *s)
{
	uint64_t now = now_ms();
	int more = 0;

	cli_sync(s);
	srv_sync(s);
	for (int round = 0; round < HTTP_FWD_ROUNDS; round++) {
		int p = 0;

		if (tun_recv(s, 1, &s->req)) {
			s->cli_exp = tick_add_ifset(now, side_timeout(s, 1));
			p = 1;
		}
		if (tun_send(s, 0, &s->req, tun_in_done(s, 1))) {
			s->srv_exp = tick_add_ifset(now, side_timeout(s, 0));
			p = 1;
		}
		if (tun_recv(s, 0, &s->res)) {
			s->srv_exp = tick_add_ifset(now, side_timeout(s, 0));
			p = 1;
		}
		if (tun_send(s, 1, &s->res, tun_in_done(s, 0))) {
			s->cli_exp = tick_add_ifset(now, side_timeout(s, 1));
			p = 1;
		}
		if (!p)
			break;
		more = round == HTTP_FWD_ROUNDS - 1;
	}
	if (s->cli.flags & CONN_F_ERROR) {
		CNT_INC(s->fe->fe_cnt.cli_aborts);
		stream_abort(s, 'C', 'D');
		return;
	}
	if (s->sc.flags & CONN_F_ERROR) {
		if (s->be)
			CNT_INC(s->be->be_cnt.srv_aborts);
		if (s->srv)
			CNT_INC(s->srv->cnt.srv_aborts);
		stream_abort(s, 'S', 'D');
		return;
	}
	if (tun_in_done(s, 1) && tun_in_done(s, 0) && tun_out_done(s, 0, &s->req) &&
	    tun_out_done(s, 1, &s->res) && !s->req.data && !s->res.data) {
		s->st = SST_CLOSED;   /* both directions done */
		return;
	}
	if ((s->cli_exp && now >= s->cli_exp) || (s->srv_exp && now >= s->srv_exp)) {
		stream_abort(s, (s->cli_exp && now >= s->cli_exp) ? 'c' : 's', 'D');
		return;
	}
	if (more)
		task_wakeup(s->task, TASK_WOKEN_OTHER);
}

static void http_xfer(struct stream *s)
{
	struct http_txn *t = s->txn;
	int more = 0;

	for (int round = 0; round < HTTP_FWD_ROUNDS; round++) {
		int p = 0, rc;

		rc = xfer_request(s);
		if (s->st != SST_HTTP_XFER)
			return;   /* back to connecting (an HTTP/2 connection full) */
		if (rc < 0) {
			if (!(t->flags & (TX_F_RES_STARTED | TX_F_REPLIED))) {
				t->flags |= TX_F_SRV_CLOSE;
				http_reply_start(s, 400, NULL, 'P', 'R');
				return;
			}
			stream_abort(s, 'P', 'D');
			return;
		}
		p |= rc;
		if (!(t->flags & TX_F_RES_GONE)) {
			rc = xfer_response_head(s);
			if (rc < 0) {
				if (s->term[0] == '-') {
					s->term[0] = 'S';
					s->term[1] = 'H';
				}
				s->st = SST_CLOSED;
				return;
			}
			if (s->st != SST_HTTP_XFER)
				return;
			p |= rc;
		}
		if (t->flags & TX_F_RES_GONE) {
			rc = xfer_response_body(s);
			if (rc < 0) {
				stream_abort(s, 'S', 'D');
				return;
			}
			p |= rc;
		}
		p |= xfer_to_client(s);
		if ((t->flags & TX_F_RES_TRUNC) && response_flushed(s)) {
			stream_abort(s, 'S', 'D');
			return;
		}
		if ((t->flags & TX_F_TUNNEL) && response_flushed(s)) {
			switch_to_tunnel(s);
			return;
		}
		if ((t->flags & TX_F_RES_GONE) && t->res_body.done && response_flushed(s) &&
		    cli_tx_finished(s)) {
			/* the response ended before the request body (a server or
			 * sluice answered early): what is left of the body must
			 * never be read as a next request, nor the server
			 * connection reused in the middle of it. Both close; the
			 * client's input is drained while lingering. */
			if (!t->req_body.done)
				t->flags |= TX_F_CLI_CLOSE | TX_F_SRV_CLOSE;
			txn_end(s);
			return;
		}
		if (!p)
			break;
		more = round == HTTP_FWD_ROUNDS - 1;
	}
	if ((s->cli.flags & CONN_F_ERROR) ||
	    (!(t->flags & TX_F_REPLIED) && !t->req_body.done && (s->cli.flags & CONN_F_RD_SHUT) &&
	     !s->cli_m.rx.data)) {
		client_aborted(s);
		return;
	}
	if (s->cli_exp && now_ms() >= s->cli_exp && (!response_flushed(s) || !t->req_body.done)) {
		stream_abort(s, 'c', (t->flags & TX_F_RES_GONE) ? 'D' : 'H');
		return;
	}
	if (!(t->flags & TX_F_REPLIED) && s->srv_exp && now_ms() >= s->srv_exp) {
		t->flags |= TX_F_SRV_CLOSE;
		if (!(t->flags & TX_F_RES_GONE) && !response_started(s)) {
			if (http_l7_retry(s, RETRY_ON_RESP_TIMEOUT))
				return;
			count_failed_resp(s, HANA_HTTP_READ_TIMEOUT);
			http_reply_start(s, 504, NULL, 's', 'H');
			return;
		}
		stream_abort(s, 's', 'D');
		return;
	}
	if (more)
		task_wakeup(s->task, TASK_WOKEN_OTHER);
}

/* ---- end of a transaction ---- */

/* Resets what is per transaction in the stream for the next request. */
static void stream_next_txn(struct stream *s)
{
	s->bytes_in = s->bytes_out = 0;
	s->srv = NULL;
	s->prev_srv = NULL;
	s->has_slot = 0;
	s->retries_done = s->redispatched = 0;
	strcpy(s->term, "--");
	s->Tw = s->Tc = -1;
	s->qtime_us = s->ctime_us = 0;
	s->srv_queue_len = s->be_queue_len = 0;
	s->has_hkey = 0;
	s->persist_srv = NULL;
	s->force_persist = 0;
	s->svc_log_name = NULL;
	s->accept_us = stream_wall_us();
	s->accept_ms = now_ms();
	s->accept_ns = sched_now_ns();
	s->cli_exp = s->srv_exp = s->conn_exp = s->queue_exp = 0;
	memset(&s->pend, 0, sizeof(s->pend));
	pendconn_init(&s->pend, s->task);
}

static void txn_end(struct stream *s)
{
	struct http_txn *t = s->txn;
	uint64_t now = now_ms();
	enum sc_plan plan;

	t->Ta = (int)(now - s->accept_ms) - (t->Ti > 0 ? t->Ti : 0);
	response_comp_account(s);
	if (t->status < 0 && t->res.status)
		t->status = t->res.status;
	stream_account_bytes(s);
	if (s->srv && !(t->flags & TX_F_REPLIED))
		CNT_INC(s->srv->cnt.cum_req);   /* forwarded to it (server req_tot) */
	if (s->Tc >= 0 && s->srv && s->be)
		stream_record_times(s);
	if (!(t->flags & TX_F_REPLIED) && !s->h2bs &&
	    (s->srv_m.rx.data || !h1m_tx_finished(&s->srv_m)))
		t->flags |= TX_F_SRV_CLOSE;   /* the server sent more than its response */
	plan = http_server_conn_plan(s);
	http_service_release(s);   /* what a HEAD response did not send */
	s->res.head = s->res.data = 0;
	/* as HAProxy, the log line no longer counts this stream in %bc and
	 * %sc: its slot is released first (a slot offered with the connection
	 * is handed over after the log, but its count moves with it: %sc is
	 * the same). The server connection leaves the stream after the log,
	 * which may read it (ssl_bc, ssl_s_*). */
	if (plan != SC_PLAN_OFFER)
		stream_release_server(s);
	if (s->be)
		atomic_fetch_sub(&s->be->beconn, 1);
	http_h1_strm_end(s);
	http_log(s);
	/* the counters tracked by this transaction's rules go with it, as
	 * HAProxy's stream does; those of the connection stay */
	stick_rules_release(s);
	stkctr_release(s, 1);
	http_server_conn_apply(s, plan);
	s->be = NULL;
	s->txn_count++;
	if (s->h2s) {
		/* one transaction per HTTP/2 stream */
		txn_cleanup(s, t);
		t->flags |= TX_F_LOGGED;
		s->st = SST_CLOSED;
		return;
	}
	if ((t->flags & TX_F_CLI_CLOSE) || (s->cli.flags & (CONN_F_RD_SHUT | CONN_F_ERROR))) {
		txn_cleanup(s, t);
		t->flags |= TX_F_LOGGED;
		conn_shutw(&s->cli);
		s->st = SST_HTTP_LINGER;
		s->http_exp = now + (s->fe->timeout_client_fin && s->fe->timeout_client_fin < LINGER_MS ?
		                     (uint64_t)s->fe->timeout_client_fin : LINGER_MS);
		s->req.head = s->req.data = 0;
		h1m_reset(&s->cli_m);
		return;
	}
	txn_cleanup(s, t);
	stream_next_txn(s);
	s->req.head = s->req.data = 0;
	if (s->cli_m.rx.data) {
		txn_start(s);   /* a pipelined request: parsed right away */
	} else {
		/* idle: see http_idle_release() */
		pool_free(&pool_txn, t);
		s->txn = NULL;
	}
	s->st = SST_HTTP_WAIT_REQ;
	s->http_exp = tick_add_ifset(now, http_first_set(s->fe->timeout_http_keep_alive,
	                             http_first_set(s->fe->timeout_http_request,
	                                            s->fe->timeout_client)));
	if (s->cli_m.rx.data)
		task_wakeup(s->task, TASK_WOKEN_OTHER);   /* a pipelined request */
}

static void http_linger(struct stream *s)
{
	char tmp[4096];

	while ((s->cli.flags & CONN_F_RD_READY) && !(s->cli.flags & CONN_F_RD_SHUT)) {
		ssize_t n = recv(s->cli.ph.fd, tmp, sizeof(tmp), MSG_DONTWAIT);

		if (n > 0)
			continue;
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			s->cli.flags |= CONN_F_RD_SHUT;
		s->cli.flags &= ~CONN_F_RD_READY;
	}
	if ((s->cli.flags & (CONN_F_RD_SHUT | CONN_F_HUP | CONN_F_ERROR)) || now_ms() >= s->http_exp)
		s->st = SST_CLOSED;
}

static void http_tarpit(struct stream *s)
{
	struct http_txn *t = s->txn;

	if (read_client_head(s) < 0 || (s->cli.flags & (CONN_F_HUP | CONN_F_RD_SHUT))) {
		stream_abort(s, 'C', 'T');
		return;
	}
	if (now_ms() < s->http_exp)
		return;
	t->flags |= TX_F_CLI_CLOSE;
	http_reply_start(s, t->status > 0 ? t->status : 500, t->tarpit_reply, 'P', 'T');
}
void http_stream_step(struct stream *s)
{
	cli_sync(s);
	srv_sync(s);
	switch (s->st) {
	case SST_HTTP_WAIT_REQ:
		http_wait_req(s);
		break;
	case SST_HTTP_BODY_WAIT:
		http_body_wait(s);
		break;
	case SST_HTTP_XFER:
		http_xfer(s);
		break;
	case SST_HTTP_TARPIT:
		http_tarpit(s);
		break;
	case SST_HTTP_LINGER:
		http_linger(s);
		break;
	default:
		break;
	}
}

uint64_t http_stream_expiry(const struct stream *s)
{
	switch (s->st) {
	case SST_HTTP_WAIT_REQ:
	case SST_HTTP_BODY_WAIT:
	case SST_HTTP_TARPIT:
	case SST_HTTP_LINGER:
		return s->http_exp;
	case SST_HTTP_XFER:
		if (s->txn->flags & TX_F_RES_RULES_WAIT)
			return tick_first(s->cli_exp, s->txn->res_wake_ms);
		return tick_first(s->cli_exp, (s->txn->flags & TX_F_REPLIED) ? s->svc_wake_ms :
		                                                                s->srv_exp);
	default:
		return 0;
	}
}

/* ---- release ---- */

void http_stream_release(struct stream *s)
{
	struct http_txn *t = s->txn;

	/* no txn: the connection ended while idle (see http_idle_release()),
	 * nothing to log, but its kept server connection goes to the pool */
	if (t && !(t->flags & TX_F_LOGGED) && !s->hs_failed &&
	    (t->req_first_ms || s->term[0] != '-')) {
		if (s->be)
			atomic_fetch_sub(&s->be->beconn, 1);
		http_log(s);
		if (s->be)
			atomic_fetch_add(&s->be->beconn, 1);
		stream_account_bytes(s);
		s->bytes_in = s->bytes_out = 0;
	}
	response_comp_account(s);
	http_h1_strm_end(s);
	http_service_release(s);
	if (conn_is_open(&s->sc) && s->sc_srv) {
		/* idle between requests: give it to the server's pool */
		struct server *sv = s->sc_srv;

		atomic_fetch_sub(&sv->used_conns, 1);
		/* http-reuse never: connections stay private to their client */
		if (sv->be->http_reuse == PX_REUSE_NEVER || srv_idle_put(sv, &s->sc, s->sc_reqs) < 0)
			conn_close(&s->sc);
		conn_init(&s->sc, s->task);
		s->sc_srv = NULL;
	}
	if (!t)
		return;
	txn_cleanup(s, t);
	pool_free(&pool_txn, t);
	s->txn = NULL;
}


void http_stream_h2_request(struct stream *s, const struct http_msg *msg)
{
	struct http_txn *t = s->txn;
	ssize_t n;

	t->req_first_ms = now_ms();
	http_txn_take_id(s);
	s->req.head = 0;
	n = http_msg_copy(&t->req, msg, s->req.area, s->req.size - HTTP_RESERVE);
	if (n < 0) {
		t->err_reason = "request head too large";
		CNT_INC(s->fe->fe_cnt.failed_req);
		cnt_fe_req(&s->fe->fe_cnt, th_ctx->now_ms);
		t->req.head_len = 0;
		http_reply_start(s, 431, NULL, 'P', 'R');
		return;
	}
	s->req.data = (size_t)n;
	t->req.head_len = (size_t)n;
	s->st = SST_HTTP_WAIT_REQ;
	http_request_parsed(s);
}
