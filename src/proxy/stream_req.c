/* Request analysis of HTTP streams: what happens between a parsed request
 * head and the balancer. Checks HAProxy makes before any rule, tcp-request
 * content, monitor-uri, the frontend's http-request rules, the backend
 * choice, the backend's rules (resumable when a rule yields), then the
 * headers sluice adds, the balance key, the persistence cookie and the
 * serialised head. Split from stream_http.c, which runs the states around
 * it (reading the head, waiting for a body, forwarding); owner thread only,
 * like the stream.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/sample.h>
#include <sluice/http/act.h>
#include <sluice/http/h1.h>
#include <sluice/http/cache_txn.h>
#include <sluice/http/comp.h>
#include <sluice/http/h1_out.h>
#include <sluice/http/http_cookie.h>
#include <sluice/http/msgedit.h>
#include <sluice/http/mux_h2.h>
#include <sluice/http/mux_h2_back.h>
#include <sluice/http/txn.h>
#include <sluice/mgmt/stats_page.h>
#include <sluice/net/addr.h>
#include <sluice/proxy/lb_hash.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/stream_int.h>

static uint64_t now_ms(void)
{
	return th_ctx->now_ms;
}

static void copy_request_line(struct http_txn *t)
{
	const struct http_msg *m = &t->req;
	size_t n = 0, max = (size_t)global.http_logurilen;   /* <= TXN_URI_MAX */
	const struct ist parts[3] = { m->method, m->uri, m->version };

	for (int i = 0; i < 3 && n < max; i++) {
		size_t l = parts[i].len < max - n ? parts[i].len : max - n;

		if (i && n < max)
			t->uri_copy[n++] = ' ';
		l = parts[i].len < max - n ? parts[i].len : max - n;
		memcpy(t->uri_copy + n, parts[i].ptr, l);
		n += l;
	}
	t->uri_copy[n] = '\0';
	t->uri_copy_len = n;
}

/* The connection modes: the frontend's for the client side, the stronger
 * of both for the server side, as HAProxy combines them. */
static enum px_http_conn srv_conn_mode(const struct stream *s)
{
	enum px_http_conn a = s->fe->http_conn, b = s->be ? s->be->http_conn : a;

	return a > b ? a : b;
}

static void add_fwd_header(struct stream *s, const struct px_fwd_hdr *cfg, const char *def,
                           const struct sockaddr_storage *addr, int if_none)
{
	struct http_txn *t = s->txn;
	struct ist name;
	char ip[64];

	name.ptr = cfg->hdr ? cfg->hdr : def;
	name.len = strlen(name.ptr);
	if (addr->ss_family != AF_INET && addr->ss_family != AF_INET6)
		return;
	if (cfg->has_except && addr_in_net(addr, &cfg->except_net, cfg->except_plen))
		return;
	if (if_none && http_hdr_find(&t->req, name, 0) >= 0)
		return;
	addr_host_str(addr, ip, sizeof(ip));
	if (http_hdr_add(&t->req_edit, name, (struct ist){ ip, strlen(ip) }) < 0)
		CNT_INC(s->fe->fe_cnt.failed_rewrites);
}

/* Headers sluice adds once the rules ran: unique-id, X-Forwarded-For,
 * X-Original-To, captures. */
static void request_final_edits(struct stream *s)
{
	struct http_txn *t = s->txn;
	const struct proxy *fe = s->fe, *be = s->be;
	struct smp_ctx c;
	struct ist v;

	if (fe->unique_id_hdr && fe->unique_id_fmt) {
		stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
		if (stream_unique_id(&c, &v))
			http_hdr_add(&t->req_edit, (struct ist){ fe->unique_id_hdr,
			             strlen(fe->unique_id_hdr) }, v);
	}
	if ((fe->options | be->options) & PX_O_FORWARDFOR) {
		const struct px_fwd_hdr *cfg = (be->options & PX_O_FORWARDFOR) ? &be->fwdfor : &fe->fwdfor;

		add_fwd_header(s, cfg, "x-forwarded-for", &s->cli.src, cfg->if_none);
	}
	if ((fe->options | be->options) & PX_O_ORIGINALTO) {
		const struct px_fwd_hdr *cfg = (be->options & PX_O_ORIGINALTO) ? &be->origto : &fe->origto;

		add_fwd_header(s, cfg, "x-original-to", conn_dst(&s->cli), 0);
	}
	if (fe->capture_cookie && !t->cookie_cap_cli)
		t->cookie_cap_cli = http_cookie_capture(&t->req, 0, fe->capture_cookie,
		                                        fe->capture_cookie_len);
	for (int i = 0; i < fe->nreq_cap && i < TXN_MAX_CAPTURES; i++) {
		const struct px_capture *cap = &fe->req_cap[i];

		if (http_hdr_occ(&t->req, (struct ist){ cap->name, strlen(cap->name) }, -1, 0, &v)) {
			size_t l = v.len < (size_t)cap->len ? v.len : (size_t)cap->len;

			t->req_cap[i] = malloc(l + 1);
			if (t->req_cap[i]) {
				memcpy(t->req_cap[i], v.ptr, l);
				t->req_cap[i][l] = '\0';
			}
		}
	}
}

/* The request head to an HTTP/2 server (see http_request_emit()). */
static int request_emit_h2(struct stream *s)
{
	struct http_txn *t = s->txn;
	struct http_msg *m = &t->req;
	size_t tlen;
	int end, rc;

	/* a CONNECT, and a websocket upgrade (an extended CONNECT, RFC 8441),
	 * open a tunnel: their stream stays open for its bytes. Other
	 * upgrades are dropped by the conversion (HAProxy 2.6) */
	http_cli_trailers(s, &tlen);
	end = t->req_body.done && s->req.data <= m->head_len && !tlen &&
	      m->meth != HTTP_METH_CONNECT &&
	      !((m->flags & HTTP_F_UPGRADE) && (m->flags & HTTP_F_CONN_UPGRADE));
	rc = h2bs_snd_head(s->h2bs, m, end);
	if (rc == 1)
		return 1;   /* the server's SETTINGS first: the head waits */
	if (rc != -2)
		return rc < 0 ? -3 : 0;
	/* the connection takes no new stream (the server's limit, a GOAWAY
	 * that came in between): the request looks for another one, as a
	 * connection retry */
	h2bs_detach(s->h2bs);
	s->h2bs = NULL;
	conn_init(&s->sc, s->task);
	if (s->retries_left <= 0)
		return -3;
	stream_retry(s);
	task_wakeup(s->task, TASK_WOKEN_OTHER);
	return -2;
}

int http_request_emit(struct stream *s)
{
	struct http_txn *t = s->txn;
	struct http_msg *m = &t->req;
	unsigned int fl = H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED;

	/* http-send-name-header: the server of this attempt, set as the
	 * request leaves (a retry elsewhere sets it again) */
	if (s->be->send_name_hdr && s->srv &&
	    http_hdr_set(&t->req_edit, (struct ist){ s->be->send_name_hdr,
	                                             strlen(s->be->send_name_hdr) },
	                 (struct ist){ s->srv->name, strlen(s->srv->name) }) < 0)
		return -1;
	if (s->h2bs)
		return request_emit_h2(s);   /* 0, 1 (not yet), -2, -3 */

	if ((m->flags & HTTP_F_UPGRADE) && (m->flags & HTTP_F_CONN_UPGRADE))
		fl |= H1O_F_TUNNEL;
	if (srv_conn_mode(s) != PX_HTTP_KAL)
		fl |= H1O_F_CONN_CLOSE;
	else if (!(m->flags & HTTP_F_VER_11))
		fl |= H1O_F_CONN_KA;
	if (!(fl & H1O_F_TUNNEL) && (fl & H1O_F_CONN_CLOSE))
		t->flags |= TX_F_SRV_CLOSE;
	/* an HTTP/2 body without content-length ends with its stream: chunked
	 * on HTTP/1 */
	if (s->h2s && !(m->flags & (HTTP_F_HAS_CL | HTTP_F_CHUNKED | HTTP_F_BODYLESS)))
		fl |= H1O_F_ADD_CHUNKED;
	if (s->be->options & PX_O_H1_CASE_SRV)
		fl |= H1O_F_CASE_ADJUST;
	if (h1m_snd_head(&s->srv_m, m, fl, 0) < 0)
		return -1;
	/* an HTTP/2 client cannot be closed silently to retry by itself, as
	 * an HTTP/1 one is when a reused connection turns out closed: its
	 * request is kept to go again (http_reuse_retry()) */
	if ((s->be->retry_on & RETRY_ON_L7) || (s->h2s && s->sc_reqs > 1))
		http_retry_snapshot(s);
	return 0;
}

/* A client that sent "Expect: 100-continue" waits for it before sending
 * the body sluice is about to wait for: answer it now, and drop the
 * expectation from the request (it has been met). */
static void send_100_continue(struct stream *s)
{
	struct http_txn *t = s->txn;
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

	if (!(t->req.flags & HTTP_F_EXPECT_100) || (t->flags & TX_F_CONT_SENT))
		return;
	t->flags |= TX_F_CONT_SENT;
	if (s->h2s) {
		/* HTTP/2: an interim HEADERS frame with :status 100 */
		struct http_msg m;

		memset(&m, 0, sizeof(m));
		m.status = 100;
		m.reason = IST("Continue");
		m.version = IST("HTTP/2.0");
		h2s_snd_head(s->h2s, &m, 1);
	} else if (conn_send_bytes(&s->cli, cont, sizeof(cont) - 1) > 0)
		s->bytes_out += sizeof(cont) - 1;
	http_hdr_del(&t->req_edit, IST("expect"), HTTP_MATCH_STR, NULL, NULL);
}

/* Runs the rules of <list> for the request. Returns 1 to go on, 0 when the
 * stream must wait (yield) or the request was answered. */
static int run_req_rules(struct stream *s, struct proxy *px, struct list *rules,
                         enum act_ruleset set, int final)
{
	struct http_txn *t = s->txn;
	struct smp_ctx c;
	struct act_env env;
	enum act_verdict v;

	if (list_empty(rules))
		return 1;
	stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
	c.final = final;
	memset(&env, 0, sizeof(env));
	env.s = s;
	env.px = px;
	env.set = set;
	env.smp = &c;
	env.msg = &t->req;
	env.edit = &t->req_edit;
	env.reply = &s->res;
	env.resume = t->resume;
	env.strict_off = t->act_strict_off;
	env.rule_busy = t->rule_busy;
	s->res.head = s->res.data = 0;
	v = act_exec(rules, &env);
	t->resume = NULL;
	t->act_strict_off = env.strict_off;
	t->rule_busy = v == ACT_V_YIELD ? env.rule_busy : 0;
	switch (v) {
	case ACT_V_CONTINUE:
	case ACT_V_STOP:
		return 1;
	case ACT_V_YIELD:
		t->resume = env.resume;
		s->st = SST_HTTP_BODY_WAIT;
		s->http_exp = tick_add_ifset(now_ms(), http_first_set(s->fe->timeout_http_request,
		                                                      s->fe->timeout_client));
		if (env.wait_exp_ms && (!s->http_exp || env.wait_exp_ms < s->http_exp))
			s->http_exp = env.wait_exp_ms;
		send_100_continue(s);
		return 0;
	case ACT_V_DENY:
		if (env.auth) {
			/* the default realm: the proxy's name, or the stats page's */
			http_reply_auth(s, env.auth_realm ? env.auth_realm :
			                px->stats && rules == &px->stats->rules ? STATS_DEFAULT_REALM :
			                px->name);
			return 0;
		}
		CNT_INC(s->fe->fe_cnt.denied_req);
		if (s->be && s->be != s->fe)
			CNT_INC(s->be->be_cnt.denied_req);
		stkctr_http_error(s);
		http_reply_start(s, env.status ? env.status : 403, env.deny_reply, 'P', 'R');
		return 0;
	case ACT_V_TARPIT:
		CNT_INC(s->fe->fe_cnt.denied_req);
		stkctr_http_error(s);
		t->flags |= TX_F_TARPIT;
		t->status = env.status ? env.status : 500;
		t->tarpit_reply = env.deny_reply;
		s->st = SST_HTTP_TARPIT;
		s->http_exp = tick_add_ifset(now_ms(), http_first_set(px->timeout_tarpit,
		                             px->timeout_connect));
		if (!s->http_exp)
			s->http_exp = now_ms();
		return 0;
	case ACT_V_REPLY:
		if (s->term[0] == '-') {
			s->term[0] = 'L';
			s->term[1] = 'R';
		}
		if (env.close)
			t->flags |= TX_F_CLI_CLOSE;
		t->flags |= TX_F_REPLIED;
		CNT_INC(s->fe->fe_cnt.intercepted);
		s->st = SST_HTTP_XFER;
		return 0;
	case ACT_V_REJECT:
		CNT_INC(s->fe->fe_cnt.denied_req);
		s->term[0] = 'P';
		s->term[1] = 'R';
		s->st = SST_CLOSED;
		return 0;
	case ACT_V_ERROR:
		CNT_INC(px->fe_cnt.failed_rewrites);
		http_reply_start(s, 500, NULL, 'P', 'R');
		return 0;
	case ACT_V_USE_SERVICE:
		http_service_start(s, env.service);
		return 0;
	case ACT_V_CLOSE:
	case ACT_V_SWITCH_HTTP:
		return 1;   /* not meaningful on an HTTP request */
	}
	return 1;
}

struct proxy *stream_choose_backend(struct stream *s)
{
	struct proxy *fe = s->fe;
	struct list *pos;

	for (pos = fe->use_backends.next; pos != &fe->use_backends; pos = pos->next) {
		struct use_backend_rule *r = list_elem(pos, struct use_backend_rule, list);

		if (r->cond) {
			struct smp_ctx c;

			stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
			if (acl_cond_eval(r->cond, &c) != ACL_TEST_PASS)
				continue;
		}
		if (r->dyn) {
			char name[256];
			struct proxy *be;

			stream_lf_render(s, r->dyn, name, sizeof(name));
			be = proxy_find(name, PX_CAP_BE);
			if (be)
				return be;
			break;   /* no such backend: the default one, as HAProxy */
		}
		if (r->be)
			return r->be;
	}
	if (fe->defbe)
		return fe->defbe;
	return (fe->cap & PX_CAP_BE) ? fe : NULL;
}

enum { ANA_TCP = 0, ANA_MONITOR, ANA_FE_RULES, ANA_FE_STATS, ANA_BACKEND, ANA_BE_RULES,
       ANA_BE_STATS, ANA_DONE };

static struct http_service stats_service = {
	.as = { .name = "<stats page>" },
	.log_name = "<STATS>",
	.produce = stats_page_produce,
};

/* Whether a `stats admin` condition of <sp> grants the admin level. */
static int stats_admin_granted(struct stream *s, const struct stats_page *sp)
{
	struct smp_ctx c;

	stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
	c.final = 1;
	for (const struct stats_admin_rule *r = sp->admin; r; r = r->next)
		if (acl_cond_eval(r->cond, &c) == ACL_TEST_PASS)
			return 1;
	return 0;
}

/* After <px>'s http-request rules, as HAProxy: a request for its stats page
 * goes through the page's own rules (stats http-request, stats auth), gets
 * the admin level if a `stats admin` condition matches, and the page
 * answers it; an admin POST waits for its body first. Returns 1 when the
 * request is not for the page, 0 when it was answered or waits. */
static int stats_step(struct stream *s, struct proxy *px, int final)
{
	struct http_txn *t = s->txn;
	struct stats_page *sp = px->stats;

	if (t->stats_px != px) {
		if (!sp || !stats_page_match(sp, &t->req))
			return 1;
		t->stats_px = px;
	}
	if (!t->stats_rules_done) {
		if (!run_req_rules(s, px, &sp->rules, ACT_HTTP_REQ, final))
			return 0;
		t->stats_rules_done = 1;
		t->stats_admin = stats_admin_granted(s, sp);
	}
	if (t->req.meth == HTTP_METH_POST && t->stats_admin && !final && !t->req_body.done &&
	    buf_room(&s->req)) {
		s->st = SST_HTTP_BODY_WAIT;
		s->http_exp = tick_add_ifset(now_ms(), http_first_set(s->fe->timeout_http_request,
		                                                      s->fe->timeout_client));
		return 0;
	}
	http_service_run(s, &stats_service);
	return 0;
}

static int monitor_hit(const struct stream *s)
{
	const char *mu = s->fe->monitor_uri;
	struct ist target = s->txn->req.uri;
	size_t l;

	if (!mu)
		return 0;
	l = strlen(mu);
	if (mu[0] == '/' && target.len && target.ptr[0] != '/') {
		/* an absolute-form target: compare what follows its authority
		 * (HAProxy 2.6 compares an origin-form target whole, query
		 * included) */
		struct ist path = http_uri_path(target);

		target.len -= (size_t)(path.ptr - target.ptr);
		target.ptr = path.ptr;
	}
	return target.len == l && memcmp(target.ptr, mu, l) == 0;
}

/* Whether one of the conditions <conds> holds for the request. */
static int any_cond(struct stream *s, struct acl_cond **conds, int n)
{
	struct smp_ctx c;

	if (!n)
		return 0;
	stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
	c.final = 1;
	for (int i = 0; i < n; i++)
		if (acl_cond_eval(conds[i], &c) == ACL_TEST_PASS)
			return 1;
	return 0;
}

/* The first force-persist or ignore-persist rule of the backend that
 * matches: 1 force, -1 ignore, 0 none. */
static int persist_rule(struct stream *s)
{
	const struct proxy *be = s->be;
	struct smp_ctx c;

	if (!be->npersist_rules)
		return 0;
	stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
	c.final = 1;
	for (int i = 0; i < be->npersist_rules; i++)
		if (acl_cond_eval(be->persist_rules[i].cond, &c) == ACL_TEST_PASS)
			return be->persist_rules[i].force ? 1 : -1;
	return 0;
}

/* Whether a `monitor fail` condition of the frontend holds. */
static int monitor_failed(struct stream *s)
{
	return any_cond(s, s->fe->monitor_fail, s->fe->nmonitor_fail);
}

/* The object cache-use found answers (src/http/cache.c), compressed when
 * the client and the configuration want it, like a service's response.
 * Returns 1 when it does. */
static int cache_hit_step(struct stream *s)
{
	struct http_txn *t = s->txn;
	const struct comp_cfg *bec = s->be && s->be != s->fe ? s->be->comp : NULL;

	if (!cache_txn_has_hit(&t->cache))
		return 0;
	if (s->fe->comp || bec)
		t->comp_algo = comp_request(s->fe->comp, bec, &t->req, &t->req_edit);
	return cache_serve(s) == 0;
}

/* The request analysis steps, resumable after a rule yielded. */
void http_analyze(struct stream *s, int final)
{
	struct http_txn *t = s->txn;
	int persist;

	switch (t->ana_step) {
	case ANA_TCP:
		if (!run_req_rules(s, s->fe, &s->fe->tcp_req_cont_rules, ACT_TCP_REQ_CONT, final))
			return;
		t->ana_step = ANA_MONITOR;
		/* fall through */
	case ANA_MONITOR:
		if (monitor_hit(s)) {
			t->flags |= TX_F_MONITOR;
			http_reply_start(s, monitor_failed(s) ? 503 : 200, NULL, '-', '-');
			return;
		}
		t->ana_step = ANA_FE_RULES;
		/* fall through */
	case ANA_FE_RULES:
		if (!run_req_rules(s, s->fe, &s->fe->http_req_rules, ACT_HTTP_REQ, final))
			return;
		/* a hit in the frontend's rules answers before any backend is
		 * chosen, as in HAProxy (the backend does not count it) */
		if (cache_hit_step(s))
			return;
		t->ana_step = ANA_FE_STATS;
		/* fall through */
	case ANA_FE_STATS:
		if (!stats_step(s, s->fe, final))
			return;
		t->ana_step = ANA_BACKEND;
		/* fall through */
	case ANA_BACKEND: {
		struct proxy *be = stream_choose_backend(s);

		if (!be) {
			http_reply_start(s, 503, NULL, 'P', 'R');
			return;
		}
		stream_set_backend(s, be);
		if (be != s->fe)
			CNT_INC(be->be_cnt.cum_req);
		t->ana_step = ANA_BE_RULES;
	}
		/* fall through */
	case ANA_BE_RULES:
		if (s->be != s->fe &&
		    !run_req_rules(s, s->be, &s->be->http_req_rules, ACT_HTTP_REQ, final))
			return;
		t->ana_step = ANA_BE_STATS;
		/* fall through */
	case ANA_BE_STATS:
		if (s->be != s->fe && !stats_step(s, s->be, final))
			return;
		t->ana_step = ANA_DONE;
		/* fall through */
	default:
		break;
	}
	/* the algorithm, once every rule ran (a rule may set or remove
	 * Accept-Encoding), as HAProxy's filter sees the request */
	if (s->fe->comp || s->be->comp)
		t->comp_algo = comp_request(s->fe->comp, s->be->comp, &t->req, &t->req_edit);
	/* cache-use found the object in the backend's rules */
	if (cache_hit_step(s))
		return;
	request_final_edits(s);
	if (s->be->lb_algo == LB_URI || s->be->lb_algo == LB_URL_PARAM || s->be->lb_algo == LB_HDR)
		s->has_hkey = lb_hash_request(s->be, &t->req, &s->hkey);
	persist = persist_rule(s);
	s->force_persist = persist > 0;
	if (s->be->cookie_name && persist < 0) {
		/* ignore-persist: the cookie is read (and kept), not followed */
		http_cookie_server_ex(s->be, &t->req, &t->req_edit, t->cookie_term, &t->ck);
		t->cookie_term[0] = 0;
	} else if (s->be->cookie_name) {
		t->ck.force = s->force_persist || (s->be->options & PX_O_PERSIST);
		s->persist_srv = http_cookie_server_ex(s->be, &t->req, &t->req_edit, t->cookie_term,
		                                       &t->ck);
		t->srv_from_cookie = s->persist_srv != NULL;
		if (!(s->be->cookie_opts & (PX_CK_INSERT | PX_CK_REWRITE | PX_CK_PREFIX)))
			t->cookie_term[0] = 0;   /* passive cookie: %tsc shows nothing, as HAProxy */
	}
	s->st = SST_ASSIGN;
}

/* The authority of an absolute-form target, or an empty span. */
static struct ist uri_authority(struct ist uri)
{
	const char *p = uri.ptr, *end = uri.ptr + uri.len, *a;

	while (p < end && *p != ':' && *p != '/')
		p++;
	if (end - p < 3 || memcmp(p, "://", 3) != 0)
		return (struct ist){ uri.ptr, 0 };
	a = p + 3;
	for (p = a; p < end && *p != '/' && *p != '?' && *p != '#'; p++)
		;
	return (struct ist){ a, (size_t)(p - a) };
}

/* What HAProxy refuses once the head is read, before any rule: an
 * absolute-form target whose authority differs from Host, and a chunked
 * body whose first bytes are already invalid. Returns 0 or -1 (400). */
static int request_precheck(struct stream *s)
{
	struct http_txn *t = s->txn;
	struct http_msg *m = &t->req;
	struct ist auth = uri_authority(m->uri), host;

	if (auth.len && http_hdr_occ(m, IST("host"), 1, 0, &host) &&
	    (host.len != auth.len || strncasecmp(host.ptr, auth.ptr, auth.len) != 0)) {
		t->err_reason = "Host differs from the request-target authority";
		return -1;
	}
	/* what arrived of the body with the head is decoded now: a broken
	 * chunked body is refused before anything is forwarded */
	if (!t->req_body.done) {
		const char *why = NULL;

		if (http_cli_rcv_body(s, &why) < 0) {
			t->err_reason = why ? why : "invalid chunked request body";
			return -1;
		}
		if (http_cli_rx_done(s))
			t->req_body.done = 1;
	}
	return 0;
}

/* A complete request head was parsed. */
void http_request_parsed(struct stream *s)
{
	struct http_txn *t = s->txn;
	struct http_msg *m = &t->req;
	uint64_t now = now_ms();

	t->req_head_ms = now;
	t->TR = (int)(now - t->req_first_ms);
	t->Ti = (int)(t->req_first_ms - t->idle_start_ms);
	t->Tq = t->Ti + t->TR;
	t->meth = m->meth;
	copy_request_line(t);
	http_edit_init(&t->req_edit, m, t->req_arena, sizeof(t->req_arena), TXN_HDRS_CAP);
	http_hdr_del_conn_named(&t->req_edit, (m->flags & HTTP_F_UPGRADE) &&
	                                      (m->flags & HTTP_F_CONN_UPGRADE));
	http_body_init(&t->req_body, m, 1);
	t->req_body.done = http_cli_rx_done(s);   /* the mux knows the framing */
	cnt_fe_req(&s->fe->fe_cnt, th_ctx->now_ms);
	if (request_precheck(s) < 0) {
		stkctr_http_request(s, 1);
		CNT_INC(s->fe->fe_cnt.failed_req);
		t->flags |= TX_F_CLI_CLOSE;
		t->req_body.done = 1;
		http_reply_start(s, 400, NULL, 'P', 'R');
		return;
	}
	stkctr_http_request(s, 0);
	if (s->fe->cap & PX_CAP_BE)
		CNT_INC(s->fe->be_cnt.cum_req);   /* a listen section is both */
	atomic_fetch_add(&global.cum_req, 1);
	if (s->fe->http_conn == PX_HTTP_CLO || (m->flags & HTTP_F_CONN_CLOSE) ||
	    (!(m->flags & HTTP_F_VER_11) && !(m->flags & HTTP_F_CONN_KA)))
		t->flags |= TX_F_CLI_CLOSE;
	s->http_exp = 0;
	s->cli_exp = tick_add_ifset(now, s->fe->timeout_client);
	if ((s->fe->options & PX_O_HTTP_BUFFER_REQ) && !t->req_body.done) {
		/* http-buffer-request: the body (what fits) before the rules */
		s->st = SST_HTTP_BODY_WAIT;
		s->http_exp = tick_add_ifset(now, http_first_set(s->fe->timeout_http_request,
		                                                 s->fe->timeout_client));
		send_100_continue(s);
		return;
	}
	http_analyze(s, 1);
}
