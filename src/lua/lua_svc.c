/* Lua services (`core.register_service`): HTTP ones (`http-request
 * use-service lua.<name>`, the AppletHTTP object) and TCP ones
 * (`tcp-request content use-service lua.<name>` in TCP mode, the
 * AppletTCP object, SST_APPLET), and the AppletTCP object the CLI
 * commands of core.register_cli write through.
 *
 * A service starts when the request's head (and the part of its body
 * already received) is there, and may yield at any time (core.msleep,
 * core.yield, a socket, a forced yield, a send that filled a 16 kB
 * block). If it yields before applet:start_response(), the stream waits
 * for its head (svc_live_ops.head, asked from the response path); if it
 * ends without having yielded since its head, its whole response goes out
 * with a content-length; otherwise the head goes out with chunked
 * framing, the body so far follows, and the stream asks the service for
 * more each time the client drained what it had (svc_live_ops.more,
 * stream_reply.c), waking on the service's sleep date or at once after a
 * forced yield; memory per response is one block. The request body stays
 * in the request channel for the service (s->svc_reads_body): receive()
 * and getline() read it there and wait for more as it arrives (the
 * client's events wake the stream, which resumes the service). See
 * doc/configuration.md, "Lua".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/buf.h>
#include <sluice/core/clock.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/sched.h>
#include <sluice/net/conn.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include <sluice/http/act.h>
#include <sluice/http/msgedit.h>
#include <sluice/http/txn.h>
#include <sluice/mgmt/cli.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stream.h>
#include <sluice/proxy/stream_int.h>
#include "lua_int.h"

struct growbuf {
	char *p;
	size_t len, cap;
	int failed;
};

static void gb_add(struct growbuf *g, const char *p, size_t len)
{
	if (g->failed)
		return;
	if (g->len + len + 1 > g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 1024;
		char *n;

		while (cap < g->len + len + 1)
			cap *= 2;
		n = realloc(g->p, cap);
		if (!n) {
			g->failed = 1;
			return;
		}
		g->p = n;
		g->cap = cap;
	}
	memcpy(g->p + g->len, p, len);
	g->len += len;
	g->p[g->len] = 0;
}

/* A TCP service's state (AppletTCP): what it sent and the client has not
 * taken yet. The client's bytes wait in the stream's request buffer. */
struct lua_tcpapp {
	struct lua_run *run;
	struct smp_ctx c;
	struct growbuf out;
	size_t out_off;
	int finished;
};

struct lua_applet {
	int status;
	char reason[64];
	int started;                 /* start_response() was called */
	struct growbuf hdrs;         /* "name: value\r\n"... */
	struct growbuf body;
};

#define APPLET_HTTP_MT "sluice.AppletHTTP"
#define APPLET_TCP_MT  "sluice.AppletTCP"

static struct lua_applet *cur_applet(lua_State *L)
{
	if (!lua_cur || !lua_cur->svc)
		luaL_error(L, "this function is only available in a service");
	return lua_cur->svc;
}

static int l_set_status(lua_State *L)
{
	struct lua_applet *a = cur_applet(L);
	lua_Integer st = luaL_checkinteger(L, 2);
	const char *reason = luaL_optstring(L, 3, NULL);

	if (st < 100 || st > 999)
		return luaL_argerror(L, 2, "invalid status code");
	a->status = (int)st;
	snprintf(a->reason, sizeof(a->reason), "%s", reason ? reason : "");
	return 0;
}

static int l_add_header(lua_State *L)
{
	struct lua_applet *a = cur_applet(L);
	size_t nl, vl;
	const char *n = luaL_checklstring(L, 2, &nl);
	const char *v = luaL_checklstring(L, 3, &vl);

	if (memchr(n, '\r', nl) || memchr(n, '\n', nl) || memchr(v, '\r', vl) || memchr(v, '\n', vl))
		return luaL_argerror(L, 3, "invalid header");
	/* the body's length is sluice's to announce */
	if ((nl == 14 && strncasecmp(n, "content-length", nl) == 0) ||
	    (nl == 17 && strncasecmp(n, "transfer-encoding", nl) == 0))
		return 0;
	gb_add(&a->hdrs, n, nl);
	gb_add(&a->hdrs, ": ", 2);
	gb_add(&a->hdrs, v, vl);
	gb_add(&a->hdrs, "\r\n", 2);
	return 0;
}

static int l_start_response(lua_State *L)
{
	cur_applet(L)->started = 1;
	/* from now on the head is complete: the service may yield */
	lua_cur->yieldable = 1;
	return 0;
}

/* A block this large goes to the client before the service goes on. */
#define LIVE_BLOCK 16384

static int send_k(lua_State *L, int status, lua_KContext ctx)
{
	lua_deadline_check(L);
	(void)L;
	(void)status;
	(void)ctx;
	return 0;
}

/* ---- AppletTCP on a TCP stream ---- */

static struct lua_tcpapp *cur_tcpapp(void)
{
	return lua_cur && lua_cur->s && lua_cur->s->tcp_svc ? lua_cur->s->tcp_svc_ctx : NULL;
}

/* Moves what the client sent into the request buffer. */
static void tcp_pull(struct stream *s)
{
	while ((s->cli.flags & CONN_F_RD_READY) && !(s->cli.flags & CONN_F_RD_SHUT) &&
	       buf_room(&s->req)) {
		ssize_t n = conn_recv(&s->cli, &s->req);

		if (n <= 0)
			break;
		s->bytes_in += (uint64_t)n;
		s->cli_exp = tick_add_ifset(th_ctx->now_ms, s->fe->timeout_client);
	}
}

/* Sends what the service wrote. Returns 1 when all of it went. */
static int tcp_flush(struct stream *s, struct lua_tcpapp *ta)
{
	while (ta->out_off < ta->out.len) {
		ssize_t n = conn_send_bytes(&s->cli, ta->out.p + ta->out_off, ta->out.len - ta->out_off);

		if (n <= 0)
			return 0;
		ta->out_off += (size_t)n;
		s->bytes_out += (uint64_t)n;
		s->cli_exp = tick_add_ifset(th_ctx->now_ms, s->fe->timeout_client);
	}
	ta->out.len = ta->out_off = 0;
	return 1;
}

/* Waits for the client: resumed by its next event. */
static int tcp_wait(lua_State *L, lua_KFunction k)
{
	if (!lua_cur->yieldable || !lua_isyieldable(L))
		return luaL_error(L, "yield not allowed");
	lua_cur->io_wait = 1;
	return lua_yieldk(L, 0, 0, k);
}

/* receive([size]): <size> bytes, or everything up to the end of the
 * client's input; what is left (maybe "") at the end of input. */
static int tcp_receive_k(lua_State *L, int status, lua_KContext ctx)
{
	lua_deadline_check(L);
	struct stream *s = lua_cur->s;
	lua_Integer want = luaL_optinteger(L, 2, -1);
	size_t n;

	(void)status;
	(void)ctx;
	tcp_pull(s);
	n = s->req.data;
	if (want >= 0 && (size_t)want <= n) {
		n = (size_t)want;
	} else if (!(s->cli.flags & (CONN_F_RD_SHUT | CONN_F_ERROR | CONN_F_HUP)) &&
	           buf_room(&s->req)) {
		return tcp_wait(L, tcp_receive_k);
	}
	lua_pushlstring(L, buf_head(&s->req), n);
	buf_consume(&s->req, n);
	return 1;
}

static int tcp_getline_k(lua_State *L, int status, lua_KContext ctx)
{
	lua_deadline_check(L);
	struct stream *s = lua_cur->s;
	const char *nl;
	size_t n;

	(void)status;
	(void)ctx;
	tcp_pull(s);
	buf_realign(&s->req);
	nl = memchr(buf_head(&s->req), '\n', s->req.data);
	if (nl) {
		n = (size_t)(nl - buf_head(&s->req)) + 1;
	} else if (!(s->cli.flags & (CONN_F_RD_SHUT | CONN_F_ERROR | CONN_F_HUP)) &&
	           buf_room(&s->req)) {
		return tcp_wait(L, tcp_getline_k);
	} else {
		n = s->req.data;
	}
	lua_pushlstring(L, buf_head(&s->req), n);
	buf_consume(&s->req, n);
	return 1;
}

static int tcp_send_k(lua_State *L, int status, lua_KContext ctx)
{
	lua_deadline_check(L);
	struct lua_tcpapp *ta = cur_tcpapp();

	(void)status;
	(void)ctx;
	if (!tcp_flush(lua_cur->s, ta) && ta->out.len - ta->out_off >= 16384)
		return tcp_wait(L, tcp_send_k);
	return 0;
}

static int l_send(lua_State *L)
{
	size_t len;
	const char *p = luaL_checklstring(L, 2, &len);
	struct lua_tcpapp *ta = cur_tcpapp();

	if (ta) {
		gb_add(&ta->out, p, len);
		if (ta->out.failed)
			return luaL_error(L, "out of memory");
		return tcp_send_k(L, LUA_OK, 0);
	}

	if (lua_cur && lua_cur->cli) {
		struct cli_out *o = lua_cur->cli;

		cli_printf(o, "%.*s", (int)len, p);
		return 0;
	}
	gb_add(&cur_applet(L)->body, p, len);
	if (cur_applet(L)->body.len >= LIVE_BLOCK && lua_cur->yieldable && lua_isyieldable(L)) {
		lua_cur->wake_ms = 0;
		return lua_yieldk(L, 0, 0, send_k);
	}
	return 0;
}

/* ---- the request body, for an HTTP service ---- */

/* The body bytes the stream holds for the service: in the request
 * channel, after the head while it is still there. */
static void http_rx_view(struct stream *s, const char **p, size_t *len)
{
	struct http_txn *t = s->txn;
	size_t off = (t->flags & TX_F_REQ_GONE) ? 0 : t->req.head_len;

	if ((t->flags & TX_F_REQ_GONE) && s->req.head)
		buf_realign(&s->req);   /* no head spans point into it any more */
	*p = buf_head(&s->req) + off;
	*len = s->req.data > off ? s->req.data - off : 0;
}

static void http_rx_consume(struct stream *s, size_t n)
{
	struct http_txn *t = s->txn;
	size_t off = (t->flags & TX_F_REQ_GONE) ? 0 : t->req.head_len;
	char *p = buf_head(&s->req) + off;

	memmove(p, p + n, s->req.data - off - n);
	s->req.data -= n;
}

/* Whether more of the body may come. */
static int http_rx_more(struct stream *s)
{
	return !s->txn->req_body.done && buf_room(&s->req) &&
	       !(s->cli.flags & (CONN_F_RD_SHUT | CONN_F_ERROR | CONN_F_HUP));
}

static int http_wait(lua_State *L, lua_KFunction k)
{
	if (!lua_cur->yieldable || !lua_isyieldable(L))
		return 0;
	lua_cur->io_wait = 1;
	lua_cur->wake_ms = 0;
	return lua_yieldk(L, 0, 0, k);
}

/* receive([size]): <size> bytes of the body, or all of it (waiting for
 * its end); what is left at the end ("" when nothing). */
static int http_receive_k(lua_State *L, int status, lua_KContext ctx)
{
	struct stream *s = lua_cur->s;
	lua_Integer want = luaL_optinteger(L, 2, -1);
	const char *p;
	size_t len;

	lua_deadline_check(L);
	(void)status;
	(void)ctx;
	http_rx_view(s, &p, &len);
	if ((want < 0 || (size_t)want > len) && http_rx_more(s) && http_wait(L, http_receive_k))
		return 0;   /* not reached: the yield does not return */
	if (want >= 0 && (size_t)want < len)
		len = (size_t)want;
	lua_pushlstring(L, p, len);
	http_rx_consume(s, len);
	return 1;
}

static int http_getline_k(lua_State *L, int status, lua_KContext ctx)
{
	struct stream *s = lua_cur->s;
	const char *p, *nl;
	size_t len;

	lua_deadline_check(L);
	(void)status;
	(void)ctx;
	http_rx_view(s, &p, &len);
	nl = memchr(p, '\n', len);
	if (!nl && http_rx_more(s) && http_wait(L, http_getline_k))
		return 0;
	if (nl)
		len = (size_t)(nl - p) + 1;
	lua_pushlstring(L, p, len);
	http_rx_consume(s, len);
	return 1;
}

static int l_receive(lua_State *L)
{
	if (cur_tcpapp()) {
		lua_settop(L, 2);
		return tcp_receive_k(L, LUA_OK, 0);
	}
	if (lua_cur && lua_cur->cli) {
		lua_pushstring(L, "");
		return 1;
	}
	cur_applet(L);
	lua_settop(L, 2);
	return http_receive_k(L, LUA_OK, 0);
}

static int l_getline(lua_State *L)
{
	if (cur_tcpapp())
		return tcp_getline_k(L, LUA_OK, 0);
	if (lua_cur && lua_cur->cli) {
		lua_pushstring(L, "");
		return 1;
	}
	cur_applet(L);
	return http_getline_k(L, LUA_OK, 0);
}

/* applet:set_var / get_var / unset_var: the TXN ones (same argument
 * order: self, name, value) */
static int l_txn_method(lua_State *L)
{
	const char *m = lua_tostring(L, lua_upvalueindex(1));

	luaL_getmetatable(L, "sluice.TXN");
	lua_getfield(L, -1, "__index");
	lua_getfield(L, -1, m);
	lua_insert(L, 1);
	lua_pop(L, 2);
	lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
	return lua_gettop(L);
}

static void push_applet_http(lua_State *L, struct stream *s)
{
	struct http_txn *t = s->txn;
	struct ist path = http_uri_path(t->req.uri);
	struct ist q = http_uri_query(t->req.uri);
	const char *ver = t->req.version.ptr;

	lua_createtable(L, 0, 8);
	lua_pushlstring(L, t->req.method.ptr, t->req.method.len);
	lua_setfield(L, -2, "method");
	lua_pushlstring(L, path.ptr, path.len);
	lua_setfield(L, -2, "path");
	if (q.len && q.ptr[0] == '?') {
		q.ptr++;
		q.len--;
	}
	lua_pushlstring(L, q.ptr ? q.ptr : "", q.ptr ? q.len : 0);
	lua_setfield(L, -2, "qs");
	/* "HTTP/1.1" -> "1.1" */
	if (ver && t->req.version.len > 5)
		lua_pushlstring(L, ver + 5, t->req.version.len - 5);
	else
		lua_pushstring(L, "1.1");
	lua_setfield(L, -2, "version");
	lua_pushinteger(L, t->req_body.done ? (lua_Integer)t->req.content_length : 0);
	lua_setfield(L, -2, "length");
	/* headers: as txn.http:req_get_headers() */
	lua_getfield(L, LUA_REGISTRYINDEX, "sluice.f");
	lua_getfield(L, -1, "http");
	lua_getfield(L, -1, "req_get_headers");
	lua_pushvalue(L, -2);
	lua_call(L, 1, 1);
	lua_setfield(L, -4, "headers");
	lua_getfield(L, -2, "f");
	lua_setfield(L, -4, "f");
	lua_getfield(L, -2, "sf");
	lua_setfield(L, -4, "sf");
	lua_getfield(L, -2, "c");
	lua_setfield(L, -4, "c");
	lua_getfield(L, -2, "sc");
	lua_setfield(L, -4, "sc");
	lua_pop(L, 2);
	luaL_setmetatable(L, APPLET_HTTP_MT);
}

void lua_push_cli_applet(lua_State *L)
{
	lua_newtable(L);
	luaL_setmetatable(L, APPLET_TCP_MT);
}

/* A service whose response started and which yielded: it goes on as the
 * client drains its body (svc_live_ops). */
struct lua_live {
	struct lua_run *run;
	struct lua_applet a;
	struct smp_ctx c;
	int finished;
};

static void live_free(struct lua_live *lv)
{
	if (!lv)
		return;
	lua_run_free(lv->run);
	free(lv->a.hdrs.p);
	free(lv->a.body.p);
	free(lv);
}

static void live_release(void *p)
{
	live_free(p);
}

/* After a yield: when to call again. */
static void live_wake(struct stream *s, struct lua_live *lv)
{
	s->svc_wake_ms = lv->run->wake_ms;
	if (lv->run->io_wait)
		s->svc_wake_ms = lv->run->timeout_ms ? lv->run->start_ms + lv->run->timeout_ms : 0;
	else if (!s->svc_wake_ms)
		task_wakeup(s->task, TASK_WOKEN_OTHER);   /* forced yield, or a full send */
}

/* Runs the service on until it yields or ends. Returns the resume code. */
static int live_resume(struct stream *s, struct lua_live *lv)
{
	stream_smp_ctx_init(s, &lv->c, SMP_DIR_REQ);
	lv->run->s = s;
	lv->run->smp = &lv->c;
	lv->run->px = s->fe;
	lv->run->svc = &lv->a;
	lv->run->io_wait = 0;
	return lua_run_resume(lv->run);
}

static int live_more(struct stream *s, char **body, size_t *len)
{
	struct lua_live *lv = s->svc_live;
	int rc;

	if (lv->finished)
		return -1;
	if (!lv->run->io_wait && lv->run->wake_ms && clock_mono_ms() < lv->run->wake_ms &&
	    !lv->run->socks) {
		s->svc_wake_ms = lv->run->wake_ms;
		return 0;
	}
	s->svc_wake_ms = 0;
	rc = live_resume(s, lv);
	if (rc != LUA_YIELD) {
		/* ended (an error after the head went out ends the body
		 * where it is: logged by lua_run_resume()) */
		lua_run_free(lv->run);
		lv->run = NULL;
		lv->finished = 1;
	} else {
		live_wake(s, lv);
	}
	if (lv->a.body.failed)
		return -1;
	if (!lv->a.body.len)
		return lv->finished ? -1 : 0;
	*body = lv->a.body.p;
	*len = lv->a.body.len;
	memset(&lv->a.body, 0, sizeof(lv->a.body));
	return 1;
}

/* After a run of the service: its head (and body so far) into <out>
 * once it has one. Returns 1 (out filled), 0 (no head yet: it yielded
 * before start_response()), -1 (it failed before its head). */
static int live_outcome(struct stream *s, struct lua_live *lv, int rc, struct svc_reply *out);

static int live_head(struct stream *s, struct svc_reply *out)
{
	struct lua_live *lv = s->svc_live;
	int rc;

	if (!lv->run->io_wait && lv->run->wake_ms && clock_mono_ms() < lv->run->wake_ms &&
	    !lv->run->socks) {
		s->svc_wake_ms = lv->run->wake_ms;
		return 0;
	}
	s->svc_wake_ms = 0;
	rc = live_resume(s, lv);
	return live_outcome(s, lv, rc, out);
}

static const struct svc_live_ops live_ops = { live_more, live_release, live_head };

static int live_outcome(struct stream *s, struct lua_live *lv, int rc, struct svc_reply *out)
{
	if ((rc != LUA_OK && rc != LUA_YIELD) || lv->a.hdrs.failed || lv->a.body.failed)
		return -1;
	if (rc == LUA_YIELD && !lv->a.started) {
		live_wake(s, lv);
		return 0;
	}
	out->status = lv->a.status;
	snprintf(out->reason, sizeof(out->reason), "%s", lv->a.reason);
	out->raw_hdrs = lv->a.hdrs.p ? lv->a.hdrs.p : strdup("");
	lv->a.hdrs.p = NULL;
	out->body = lv->a.body.p;
	out->len = lv->a.body.len;
	memset(&lv->a.body, 0, sizeof(lv->a.body));
	if (rc == LUA_YIELD) {
		out->live = lv;
		out->live_ops = &live_ops;
		live_wake(s, lv);
	} else {
		lua_run_free(lv->run);
		lv->run = NULL;
		lv->finished = 1;
	}
	return 1;
}

static int svc_produce(struct stream *s, struct svc_reply *out, const struct lua_fn *fn)
{
	struct lua_live *lv = calloc(1, sizeof(*lv));
	int rc;

	if (!lv)
		return -1;
	lv->a.status = 200;
	/* the request body stays in the request channel for the service
	 * (applet:receive()), instead of being drained */
	s->svc_reads_body = 1;
	stream_smp_ctx_init(s, &lv->c, SMP_DIR_REQ);
	lv->run = lua_run_new(fn, "applet", 1, (uint64_t)lua_cfg.service_timeout_ms);
	if (!lv->run) {
		free(lv);
		return -1;
	}
	lv->run->s = s;
	lv->run->smp = &lv->c;
	lv->run->px = s->fe;
	lv->run->svc = &lv->a;
	lv->run->task = s->task;
	{
		/* the headers table is made by the HTTP object's function,
		 * which reads the current run */
		struct lua_run *saved = lua_cur;

		lua_cur = lv->run;
		push_applet_http(lv->run->co, s);
		lua_cur = saved;
	}
	lv->run->nargs = 1;
	rc = lua_run_resume(lv->run);
	switch (live_outcome(s, lv, rc, out)) {
	case 1:
		if (!out->live)
			live_free(lv);
		return 0;
	case 0:
		/* no head yet: the stream asks again (live_head) */
		out->live = lv;
		out->live_ops = &live_ops;
		out->head_pending = 1;
		return 0;
	default:
		live_free(lv);
		return -1;
	}
}

/* One http_service per registered name; its produce() finds the name. */
struct lua_service {
	struct http_service svc;
	const struct lua_fn *fn;
};

static int produce_any(struct stream *s, struct svc_reply *out)
{
	const struct lua_service *ls = (const struct lua_service *)out->svc;

	return ls ? svc_produce(s, out, ls->fn) : -1;
}

/* ---- TCP services ---- */

struct lua_tcp_service {
	struct tcp_service svc;
	const struct lua_fn *fn;
};

static void tcpapp_release(struct stream *s)
{
	struct lua_tcpapp *ta = s->tcp_svc_ctx;

	if (!ta)
		return;
	lua_run_free(ta->run);
	free(ta->out.p);
	free(ta);
	s->tcp_svc_ctx = NULL;
}

static void tcpapp_run(struct stream *s, struct lua_tcpapp *ta);

static void tcpapp_step(struct stream *s)
{
	struct lua_tcpapp *ta = s->tcp_svc_ctx;
	struct lua_run *run = ta->run;

	if (s->cli.flags & CONN_F_ERROR) {
		CNT_INC(s->fe->fe_cnt.cli_aborts);
		stream_abort(s, 'C', 'D');
		return;
	}
	if (ta->finished) {
		/* the service ended: what it sent goes, then the FIN */
		if (tcp_flush(s, ta)) {
			conn_shutw(&s->cli);
			s->st = SST_CLOSED;
		}
		return;
	}
	if (s->cli_exp && th_ctx->now_ms >= s->cli_exp) {
		stream_abort(s, 'c', 'D');
		return;
	}
	if (!run->io_wait && run->wake_ms && clock_mono_ms() < run->wake_ms && !run->socks) {
		s->tcp_svc_wake = run->wake_ms;
		return;
	}
	tcpapp_run(s, ta);
}

/* Resumes the service, then sends what it wrote. */
static void tcpapp_run(struct stream *s, struct lua_tcpapp *ta)
{
	struct lua_run *run = ta->run;
	int rc;

	s->tcp_svc_wake = 0;
	stream_smp_ctx_init(s, &ta->c, SMP_DIR_REQ);
	run->smp = &ta->c;
	run->io_wait = 0;
	rc = lua_run_resume(run);
	tcp_flush(s, ta);
	if (rc == LUA_YIELD) {
		if (run->wake_ms)
			s->tcp_svc_wake = run->wake_ms;
		else if (!run->io_wait)
			task_wakeup(s->task, TASK_WOKEN_OTHER);   /* forced yield */
		else if (run->timeout_ms)
			s->tcp_svc_wake = run->start_ms + run->timeout_ms;   /* see the limit */
		return;
	}
	/* ended (an error was logged by lua_run_resume()) */
	lua_run_free(run);
	ta->run = NULL;
	ta->finished = 1;
	if (tcp_flush(s, ta)) {
		conn_shutw(&s->cli);
		s->st = SST_CLOSED;
	}
}

static int tcpapp_start(struct stream *s, const struct tcp_service *svc)
{
	const struct lua_tcp_service *ls = (const struct lua_tcp_service *)svc;
	struct lua_tcpapp *ta = calloc(1, sizeof(*ta));

	if (!ta)
		return -1;
	ta->run = lua_run_new(ls->fn, "applet", 1, (uint64_t)lua_cfg.service_timeout_ms);
	if (!ta->run) {
		free(ta);
		return -1;
	}
	ta->run->s = s;
	ta->run->px = s->fe;
	ta->run->task = s->task;
	stream_smp_ctx_init(s, &ta->c, SMP_DIR_REQ);
	ta->run->smp = &ta->c;
	/* the AppletTCP object, with the fetch and converter objects */
	lua_newtable(ta->run->co);
	lua_getfield(ta->run->co, LUA_REGISTRYINDEX, "sluice.f");
	for (int i = 0; i < 4; i++) {
		static const char *const f[] = { "f", "sf", "c", "sc" };

		lua_getfield(ta->run->co, -1, f[i]);
		lua_setfield(ta->run->co, -3, f[i]);
	}
	lua_pop(ta->run->co, 1);
	luaL_setmetatable(ta->run->co, APPLET_TCP_MT);
	ta->run->nargs = 1;
	/* the state stays entered after lua_run_new() until the first
	 * resume leaves it: resume now, unconditionally */
	s->tcp_svc = svc;
	s->tcp_svc_ctx = ta;
	s->tcp_svc_wake = 0;
	s->st = SST_APPLET;
	s->cli_exp = tick_add_ifset(th_ctx->now_ms, s->fe->timeout_client);
	tcpapp_run(s, ta);
	return 0;
}

int lua_reg_service(struct lua_fn *fn, char *err, size_t errlen)
{
	struct lua_service *ls = calloc(1, sizeof(*ls));
	char *name = malloc(strlen(fn->name) + 5);

	if (!ls || !name) {
		free(ls);
		free(name);
		return errmsg_set(err, errlen, "out of memory");
	}
	if (fn->svc_tcp) {
		struct lua_tcp_service *ts = calloc(1, sizeof(*ts));

		free(ls);
		if (!ts) {
			free(name);
			return errmsg_set(err, errlen, "out of memory");
		}
		sprintf(name, "lua.%s", fn->name);
		ts->svc.as.name = name;
		ts->svc.start = tcpapp_start;
		ts->svc.step = tcpapp_step;
		ts->svc.release = tcpapp_release;
		ts->fn = fn;
		tcp_service_register(&ts->svc);
		fn->reg = ts;
		return 0;
	}
	sprintf(name, "lua.%s", fn->name);
	ls->svc.as.name = name;
	ls->svc.log_name = "<LUA>";
	ls->svc.produce = produce_any;
	ls->fn = fn;
	http_service_register(&ls->svc);
	fn->reg = ls;
	return 0;
}

void lua_api_applet(lua_State *L)
{
	static const luaL_Reg http_fns[] = {
		{ "set_status", l_set_status }, { "add_header", l_add_header },
		{ "start_response", l_start_response }, { "send", l_send },
		{ "receive", l_receive }, { "getline", l_getline },
		{ NULL, NULL }
	};
	static const luaL_Reg tcp_fns[] = {
		{ "send", l_send }, { "receive", l_receive }, { "getline", l_getline },
		{ NULL, NULL }
	};
	static const char *const var_fns[] = { "set_var", "get_var", "unset_var",
	                                       "set_priv", "get_priv" };

	luaL_newmetatable(L, APPLET_HTTP_MT);
	luaL_newlib(L, http_fns);
	for (size_t i = 0; i < sizeof(var_fns) / sizeof(var_fns[0]); i++) {
		lua_pushstring(L, var_fns[i]);
		lua_pushcclosure(L, l_txn_method, 1);
		lua_setfield(L, -2, var_fns[i]);
	}
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	luaL_newmetatable(L, APPLET_TCP_MT);
	luaL_newlib(L, tcp_fns);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}
