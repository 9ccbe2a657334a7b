/* The sample context of a stream (what fetches see of it: addresses,
 * names, backend and server figures, messages, bodies, variables), the
 * log fields and log-format rendering, the capture.* fetches, and the TCP
 * rule sets (tcp-request connection, session, content) that run on it in
 * both modes. Split from stream_http.c; owner thread only, like the
 * stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
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
#include <sluice/http/comp.h>
#include <sluice/http/txn.h>
#include <sluice/net/addr.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/lb_hash.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_idle.h>
#include <sluice/proxy/stream_int.h>


static uint64_t now_ms(void)
{
	return th_ctx->now_ms;
}

/* ---- sample context ---- */

/* The backend of the moment: the chosen one, else a listen section itself
 * (HAProxy's stream starts with its frontend as backend; a frontend alone
 * has none: HAProxy refuses be_name & co in its request rules). */
static struct proxy *cur_backend(const struct stream *s)
{
	if (s->be)
		return s->be;
	return (s->fe->cap & PX_CAP_BE) ? s->fe : NULL;
}

static struct proxy *arg_backend(const struct smp_ctx *ctx, const struct smp_arg *a)
{
	struct stream *s = ctx->owner;

	if (!a)
		return cur_backend(s);
	if (a->resolved)
		return a->resolved;
	return a->text ? proxy_find(a->text, PX_CAP_BE) : NULL;
}

static int ops_addr(const struct smp_ctx *ctx, enum smp_addr_kind which,
                    struct sockaddr_storage *out)
{
	struct stream *s = ctx->owner;

	switch (which) {
	case SMP_ADDR_CLI_SRC:
		*out = s->cli.src;
		break;
	case SMP_ADDR_CLI_DST:
		*out = *conn_dst(&s->cli);
		break;
	case SMP_ADDR_SRV_SRC:
		if (!conn_is_open(&s->sc))
			return 0;
		*out = *conn_src(&s->sc);
		break;
	case SMP_ADDR_SRV_DST:
		if (!s->srv)
			return 0;
		*out = s->srv->addr.ss;
		break;
	}
	return out->ss_family != AF_UNSPEC;
}

static int ops_name(const struct smp_ctx *ctx, enum smp_name_kind which, const char **out)
{
	struct stream *s = ctx->owner;

	switch (which) {
	case SMP_NAME_FE:
		*out = s->fe->name;
		return 1;
	case SMP_NAME_BE:
		*out = cur_backend(s) ? cur_backend(s)->name : NULL;
		return *out != NULL;
	case SMP_NAME_SRV:
		*out = s->srv ? s->srv->name : NULL;
		return *out != NULL;
	case SMP_NAME_LISTENER:
		*out = s->lst && s->lst->bc->name ? s->lst->bc->name : NULL;
		return *out != NULL;
	case SMP_NAME_FE_DEFBE:
		*out = s->fe->defbe ? s->fe->defbe->name : NULL;
		return *out != NULL;
	}
	return 0;
}

static int ops_id(const struct smp_ctx *ctx, enum smp_id_kind which, int64_t *out)
{
	struct stream *s = ctx->owner;

	switch (which) {
	case SMP_ID_FE:
		*out = s->fe->uuid;
		return 1;
	case SMP_ID_BE:
		if (!cur_backend(s))
			return 0;
		*out = cur_backend(s)->uuid;
		return 1;
	case SMP_ID_SRV:
		if (!s->srv)
			return 0;
		*out = s->srv->puid;
		return 1;
	case SMP_ID_LISTENER: {
		/* its position among the frontend's bind lines, from 1 */
		struct list *pos;
		int64_t n = 0;

		if (!s->lst)
			return 0;
		for (pos = s->fe->binds.next; pos != &s->fe->binds; pos = pos->next) {
			n++;
			if (list_elem(pos, struct bind_conf, list) == s->lst->bc) {
				*out = n;
				return 1;
			}
		}
		return 0;
	}
	}
	return 0;
}

static int ops_be_metric(const struct smp_ctx *ctx, const struct smp_arg *arg,
                         enum smp_be_metric m, int64_t *out)
{
	struct proxy *be = arg_backend(ctx, arg);
	int64_t n = 0, q;

	if (!be)
		return 0;
	switch (m) {
	case SMP_BE_NBSRV:
		for (int i = 0; i < be->nsrv; i++)
			n += srv_is_usable(be->srv[i]) ? 1 : 0;
		break;
	case SMP_BE_CONN:
		n = atomic_load(&be->beconn);
		break;
	case SMP_BE_QUEUE:
	case SMP_BE_AVG_QUEUE:
		q = atomic_load(&be->queue.len);
		for (int i = 0; i < be->nsrv; i++) {
			q += atomic_load(&be->srv[i]->queue.len);
			n += srv_is_usable(be->srv[i]) ? 1 : 0;
		}
		n = m == SMP_BE_QUEUE ? q : (n ? (q + n - 1) / n : q);
		break;
	case SMP_BE_CONN_FREE: {
		/* free slots of the usable active servers (the backup ones when
		 * no active one is usable); -1 when one has no limit */
		int act = 0;

		for (int i = 0; i < be->nsrv; i++)
			act |= !be->srv[i]->backup && srv_is_usable(be->srv[i]);
		for (int i = 0; i < be->nsrv; i++) {
			struct server *sv = be->srv[i];
			int mc = atomic_load(&sv->maxconn);

			if (!srv_is_usable(sv) || (sv->backup && act))
				continue;
			if (!mc) {
				*out = -1;
				return 1;
			}
			if (mc > atomic_load(&sv->served))
				n += mc - atomic_load(&sv->served);
		}
		break;
	}
	case SMP_BE_SESS_RATE:
		n = freq_ctr_read(&be->be_cnt.sess_rate, 1000, (uint32_t)th_ctx->now_ms);
		break;
	case SMP_BE_CONNSLOTS:
		for (int i = 0; i < be->nsrv; i++) {
			struct server *sv = be->srv[i];
			int mc = atomic_load(&sv->maxconn);

			if (!srv_is_usable(sv))
				continue;
			if (!mc) {
				*out = -1;   /* unlimited */
				return 1;
			}
			n += mc - atomic_load(&sv->served) +
			     (sv->maxqueue ? sv->maxqueue - atomic_load(&sv->queue.len) : 0);
		}
		break;
	}
	*out = n;
	return 1;
}

static int ops_srv_metric(const struct smp_ctx *ctx, const struct smp_arg *be_arg,
                          const struct smp_arg *srv_arg, enum smp_srv_metric m, int64_t *out)
{
	struct stream *s = ctx->owner;
	struct server *sv = s->srv;

	if (srv_arg) {
		struct proxy *be = arg_backend(ctx, be_arg);

		sv = srv_arg->resolved ? srv_arg->resolved :
		     (be && srv_arg->text ? server_find(be, srv_arg->text) : NULL);
	}
	if (!sv)
		return 0;
	switch (m) {
	case SMP_SRV_CONN:
		*out = atomic_load(&sv->served);
		break;
	case SMP_SRV_QUEUE:
		*out = atomic_load(&sv->queue.len);
		break;
	case SMP_SRV_IS_UP:
		*out = srv_is_usable(sv);
		break;
	case SMP_SRV_CONN_FREE: {
		int mc = atomic_load(&sv->maxconn), cur = atomic_load(&sv->served);

		*out = !mc ? -1 : mc > cur ? mc - cur : 0;
		break;
	}
	case SMP_SRV_WEIGHT:
		*out = srv_lb_weight(sv);
		break;
	case SMP_SRV_IWEIGHT:
		*out = sv->iweight;
		break;
	case SMP_SRV_UWEIGHT:
		*out = atomic_load(&sv->uweight);
		break;
	case SMP_SRV_SESS_RATE:
		*out = freq_ctr_read(&sv->cnt.sess_rate, 1000, (uint32_t)th_ctx->now_ms);
		break;
	}
	return 1;
}

static int ops_fe_metric(const struct smp_ctx *ctx, const struct smp_arg *arg,
                         enum smp_fe_metric m, int64_t *out)
{
	struct stream *s = ctx->owner;
	struct proxy *fe = !arg ? s->fe : arg->resolved ? arg->resolved :
	                   arg->text ? proxy_find(arg->text, PX_CAP_FE) : NULL;
	uint32_t now = (uint32_t)th_ctx->now_ms;

	if (!fe)
		return 0;
	switch (m) {
	case SMP_FE_CONN:
		*out = atomic_load(&fe->feconn);
		break;
	case SMP_FE_REQ_RATE:
		*out = freq_ctr_read(&fe->fe_cnt.req_rate, 1000, now);
		break;
	case SMP_FE_SESS_RATE:
		*out = freq_ctr_read(&fe->fe_sess_rate, 1000, now);
		break;
	}
	return 1;
}

static int ops_stream_int(const struct smp_ctx *ctx, enum smp_stream_int which, int64_t *out)
{
	struct stream *s = ctx->owner;
	const struct proxy *be = cur_backend(s);

	switch (which) {
	case SMP_SI_FC_ERR:
		*out = s->fc_err;
		return 1;
	case SMP_SI_DST_CONN:
		if (!s->lst)
			return 0;
		*out = atomic_load(&s->lst->nbconn);
		return 1;
	case SMP_SI_FE_CLIENT_TIMEOUT:
		*out = s->fe->timeout_client;
		return 1;
	case SMP_SI_BE_SERVER_TIMEOUT:
	case SMP_SI_CUR_SERVER_TIMEOUT:
		if (!be)
			return 0;
		*out = which == SMP_SI_CUR_SERVER_TIMEOUT && s->txn && s->txn->srv_timeout_ms ?
		       s->txn->srv_timeout_ms : be->timeout_server;
		return 1;
	case SMP_SI_BE_TUNNEL_TIMEOUT:
	case SMP_SI_CUR_TUNNEL_TIMEOUT:
		if (!be)
			return 0;
		/* the current one is set-timeout's only, 0 otherwise (HAProxy) */
		*out = which == SMP_SI_CUR_TUNNEL_TIMEOUT ?
		       (s->txn ? s->txn->tunnel_timeout_ms : 0) : be->timeout_tunnel;
		return 1;
	case SMP_SI_PRIO_CLASS:
		*out = s->prio_class;
		return 1;
	case SMP_SI_PRIO_OFFSET:
		*out = s->prio_offset_ms;
		return 1;
	case SMP_SI_FC_HTTP_MAJOR:
		if (!s->txn)
			return 0;
		*out = s->h2s ? 2 : 1;
		return 1;
	case SMP_SI_BC_HTTP_MAJOR:
		if (!s->txn || !s->srv)
			return 0;
		*out = s->h2bs ? 2 : 1;
		return 1;
	}
	return 0;
}

int stream_unique_id(struct smp_ctx *ctx, struct ist *out)
{
	struct stream *s = ctx->owner;
	struct http_txn *t = s->txn;
	char buf[1024];

	if (!t || !s->fe->unique_id_fmt)
		return 0;
	if (!t->unique_id) {
		size_t n = stream_lf_render(s, s->fe->unique_id_fmt, buf, sizeof(buf));

		t->unique_id = malloc(n + 1);
		if (!t->unique_id)
			return 0;
		memcpy(t->unique_id, buf, n + 1);
	}
	out->ptr = t->unique_id;
	out->len = strlen(t->unique_id);
	return 1;
}

/* The client connection, or the server connection of the server this
 * stream (transaction) uses: a connection kept from a previous request
 * is not this one's when no server was chosen (a `return`). Both belong
 * to the stream's thread. A stream of an HTTP/2 connection (either side)
 * holds a copy of that connection, without descriptor, that borrows its
 * TLS session: the session is what counts. */
static struct ssl_st *ops_ssl(const struct smp_ctx *ctx, enum smp_conn_side side)
{
	struct stream *s = ctx->owner;
	const struct conn *c = side == SMP_CONN_BACK ? &s->sc : &s->cli;

	if (side == SMP_CONN_BACK && !s->srv)
		return NULL;
	/* a client handshake that failed still tells its error (the error
	 * log's ssl_fc_err) */
	if (!c->ssl || ((c->flags & CONN_F_TLS_HS) && !(side == SMP_CONN_FRONT && s->hs_failed)))
		return NULL;
	return c->ssl;
}

static const struct smp_ops stream_smp_ops = {
	.addr = ops_addr, .name = ops_name, .id = ops_id, .be_metric = ops_be_metric,
	.fe_metric = ops_fe_metric,
	.srv_metric = ops_srv_metric, .unique_id = stream_unique_id, .ssl = ops_ssl,
	.stream_int = ops_stream_int,
};

/* What req.body / res.body see of a message whose head is parsed: the
 * payload in the channel after the head (framing removed by the mux that
 * received it), and whether it is all there (<done>). */
static void body_view(const struct http_msg *m, const char *p, size_t avail, int done,
                      struct ist *out, int *complete)
{
	*out = (struct ist){ p, avail };
	*complete = done;
	if (m->flags & HTTP_F_BODYLESS) {
		out->len = 0;
		*complete = 1;
	}
}

/* Prepares <c> for evaluations on <s>. */
void stream_smp_ctx_init(struct stream *s, struct smp_ctx *c, int dir)
{
	struct http_txn *t = s->txn;

	memset(c, 0, sizeof(*c));
	c->ops = &stream_smp_ops;
	c->owner = s;
	c->dir = dir;
	c->final = 1;
	c->thread = th_ctx->tid;
	c->vars[VAR_SCOPE_SESS] = &s->vars_sess;
	c->vars[VAR_SCOPE_TXN] = &s->vars_txn;   /* TCP mode; HTTP: the txn's */
	c->req_len = s->req.data;
	if (!t) {
		/* the raw request, for the layer-6 fetches: a TCP stream's only
		 * (HAProxy's req.payload sees nothing of an HTTP request) */
		c->req_data.ptr = buf_head(&s->req);
		c->req_data.len = s->req.data;
		return;
	}
	if (t->req.head_len && !(t->flags & TX_F_REQ_GONE))
		c->req = &t->req;
	if (t->req.head_len && !(t->flags & TX_F_REQ_GONE))
		body_view(&t->req, buf_head(&s->req) + t->req.head_len,
		          s->req.data > t->req.head_len ? s->req.data - t->req.head_len : 0,
		          t->req_body.done, &c->req_body, &c->req_body_complete);
	if (t->res.head_len && !(t->flags & TX_F_RES_GONE)) {
		size_t off = t->res.head_len;

		c->res = &t->res;
		body_view(&t->res, buf_head(&s->res) + off, s->res.data > off ? s->res.data - off : 0,
		          (t->flags & TX_F_REPLIED) ? !http_service_pending(s) : http_srv_rx_done(s),
		          &c->res_body, &c->res_body_complete);
	}
	c->first_req = !!(t->flags & TX_F_FIRST_REQ);
	if (t->comp_on)
		c->res_comp_algo = comp_algo_name(t->comp_algo);
	c->res_cache_name = t->cache.hit_name;
	c->txn_id = t->id;
	if (t->uri_copy_len) {
		const char *sp = memchr(t->uri_copy, ' ', t->uri_copy_len);

		c->txn_method.ptr = t->uri_copy;
		c->txn_method.len = sp ? (size_t)(sp - t->uri_copy) : t->uri_copy_len;
		c->txn_meth = t->req.meth;
	}
	c->txn_status = t->status > 0 ? t->status : 0;
	c->vars[VAR_SCOPE_TXN] = &t->vars_txn;
	c->vars[VAR_SCOPE_REQ] = &t->vars_req;
	c->vars[VAR_SCOPE_RES] = &t->vars_res;
}

void stream_log_fields(struct stream *s, struct log_fields *f)
{
	struct http_txn *t = s->txn;

	stream_log_fields_tcp(s, f);
	if (!t)
		return;
	f->is_http = 1;
	f->status = t->status;
	f->req_line = t->uri_copy_len ? t->uri_copy : NULL;
	f->req_line_len = t->uri_copy_len;
	f->Tq = t->Tq;
	f->TR = t->TR;
	f->Ti = t->Ti;
	f->Tr = t->Tr;
	f->Ta = t->Ta;
	if (f->Ta < 0) {
		/* logged before the transaction's end (an abort): the time
		 * so far, as HAProxy's Ta = Tt - Ti */
		f->Ta = (int)(th_ctx->now_ms - s->accept_ms) - (t->Ti > 0 ? t->Ti : 0);
	}
	f->req_caps = (const char *const *)t->req_cap;
	f->nreq_caps = s->fe->nreq_cap;
	f->res_caps = (const char *const *)t->res_cap;
	f->nres_caps = s->fe->nres_cap;
	f->cookie_cli = t->cookie_cap_cli;
	f->cookie_srv = t->cookie_cap_srv;
	memcpy(f->cookie_term, t->cookie_term[0] ? t->cookie_term : "--", 3);
	f->req_counter = (unsigned int)t->id;
	f->req_counter64 = t->id;
	f->unique_id = t->unique_id;
}

size_t stream_lf_render(struct stream *s, const struct lf_expr *e, char *out, size_t room)
{
	struct log_fields f;
	struct smp_ctx c;
	struct http_txn *t = s->txn;

	stream_smp_ctx_init(s, &c, t && t->res.head_len && !(t->flags & TX_F_RES_GONE) ?
	                    SMP_DIR_RES : SMP_DIR_REQ);
	stream_log_fields(s, &f);
	f.smp = &c;
	return lf_render(e, &f, out, room);
}

/* ---- TCP rules (both modes) ---- */

static enum act_verdict run_tcp_rules(struct stream *s, struct list *rules, enum act_ruleset set,
                                      int final, struct act_env *env)
{
	struct smp_ctx c;

	stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
	c.final = final;
	/* no transaction yet on connection and session (unique-id has no
	 * value there, as in HAProxy) */
	if (set == ACT_TCP_REQ_CONN)
		c.avail = SMP_AVAIL_TCP_CONN;
	else if (set == ACT_TCP_REQ_SESS)
		c.avail = SMP_AVAIL_TCP_SESS;
	if (set == ACT_TCP_REQ_CONT) {
		c.req_data.ptr = buf_head(&s->req);
		c.req_data.len = s->req.data;
	}
	memset(env, 0, sizeof(*env));
	env->s = s;
	env->px = s->fe;
	env->set = set;
	env->smp = &c;
	if (set == ACT_TCP_REQ_CONT) {
		env->resume = s->tcp_resume;
		env->rule_busy = s->tcp_rule_busy;
	}
	return act_exec(rules, env);
}

int stream_tcp_conn_rules(struct stream *s)
{
	struct act_env env;
	enum act_verdict v;
	struct list *rules = &s->fe->tcp_req_conn_rules;

	if (list_empty(rules))
		return 0;
	v = run_tcp_rules(s, rules, ACT_TCP_REQ_CONN, 1, &env);
	if (v == ACT_V_REJECT || v == ACT_V_DENY || v == ACT_V_ERROR) {
		CNT_INC(s->fe->fe_cnt.denied_req);
		return -1;
	}
	if (env.expect_proxy && s->st != SST_PROXY_HDR)
		s->st = SST_PROXY_HDR;
	return 0;
}

int stream_tcp_sess_rules(struct stream *s)
{
	struct act_env env;
	enum act_verdict v;
	struct list *rules = &s->fe->tcp_req_sess_rules;

	if (list_empty(rules))
		return 0;
	v = run_tcp_rules(s, rules, ACT_TCP_REQ_SESS, 1, &env);
	if (v == ACT_V_REJECT || v == ACT_V_DENY || v == ACT_V_ERROR) {
		CNT_INC(s->fe->fe_cnt.denied_req);
		return -1;
	}
	return 0;
}

int stream_tcp_content_rules(struct stream *s)
{
	struct act_env env;
	enum act_verdict v;
	struct list *rules = &s->fe->tcp_req_cont_rules;
	uint64_t limit;
	int final;

	if (list_empty(rules))
		return 1;
	limit = s->fe->tcp_inspect_delay ? s->accept_ms + (uint64_t)s->fe->tcp_inspect_delay : 0;
	final = !limit || now_ms() >= limit || !buf_room(&s->req) ||
	        (s->cli.flags & (CONN_F_RD_SHUT | CONN_F_HUP | CONN_F_ERROR));
	v = run_tcp_rules(s, rules, ACT_TCP_REQ_CONT, final, &env);
	switch (v) {
	case ACT_V_YIELD:
		s->tcp_resume = env.resume;
		s->tcp_rule_busy = env.rule_busy;
		if (env.rule_busy) {
			/* an action suspended itself (Lua): called again at its
			 * date, whatever the inspect-delay */
			s->conn_exp = env.wait_exp_ms;
			return 0;
		}
		if (final)
			return 1;
		s->conn_exp = limit;
		return 0;
	case ACT_V_REJECT:
	case ACT_V_DENY:
	case ACT_V_ERROR:
		CNT_INC(s->fe->fe_cnt.denied_req);
		s->term[0] = 'P';
		s->term[1] = 'R';
		s->st = SST_CLOSED;
		return -1;
	case ACT_V_USE_SERVICE: {
		const struct act_service *as = act_service_find(env.service);
		const struct tcp_service *svc = as && as->kind == ACT_SVC_TCP ?
			(const struct tcp_service *)((const char *)as -
			                             offsetof(struct tcp_service, as)) : NULL;

		s->tcp_resume = NULL;
		s->tcp_rule_busy = 0;
		s->conn_exp = 0;
		if (!svc || svc->start(s, svc) < 0) {
			s->term[0] = 'P';
			s->term[1] = 'R';
			s->st = SST_CLOSED;
			return -1;
		}
		CNT_INC(s->fe->fe_cnt.intercepted);
		return 0;
	}
	default:
		s->tcp_resume = NULL;
		s->tcp_rule_busy = 0;
		s->conn_exp = 0;
		return 1;
	}
}

/* ---- capture.* fetches: what the transaction captured ---- */

/* The stream behind a context, if it is one of ours. */
static struct stream *ctx_stream(const struct smp_ctx *ctx)
{
	return ctx->ops == &stream_smp_ops ? ctx->owner : NULL;
}

struct stream *stream_of_smp(const struct smp_ctx *ctx)
{
	return ctx_stream(ctx);
}

/* Word <n> (0-based) of the captured request line. */
static int reqline_word(const struct http_txn *t, int n, struct sample *smp)
{
	const char *p = t->uri_copy, *end = t->uri_copy + t->uri_copy_len, *w;

	if (!t->uri_copy_len)
		return 0;
	for (;;) {
		w = p;
		while (p < end && *p != ' ')
			p++;
		if (!n--)
			break;
		if (p == end)
			return 0;
		p++;
	}
	smp_set_const_str(smp, SMP_T_STR, w, (size_t)(p - w));
	return 1;
}

static int fetch_cap_hdr(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct stream *s = ctx_stream(ctx);
	int64_t idx = args->n > 0 ? args->a[0].data.sint : 0;
	char *const *caps;
	int ncap;

	if (!s || !s->txn || idx < 0)
		return 0;
	if (args->kw_priv) {   /* response */
		caps = s->txn->res_cap;
		ncap = s->fe->nres_cap;
	} else {
		caps = s->txn->req_cap;
		ncap = s->fe->nreq_cap;
	}
	if (idx >= ncap || idx >= TXN_MAX_CAPTURES || !caps[idx])
		return 0;
	smp_set_const_str(smp, SMP_T_STR, caps[idx], strlen(caps[idx]));
	return 1;
}

static int fetch_cap_reqline(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct stream *s = ctx_stream(ctx);

	if (!s || !s->txn)
		return 0;
	return reqline_word(s->txn, (int)(intptr_t)args->kw_priv, smp);
}

static int fetch_cap_res_ver(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct stream *s = ctx_stream(ctx);

	if (!s || !s->txn || s->txn->srv_status < 0)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, (s->txn->res.flags & HTTP_F_VER_11) ? "HTTP/1.1" :
	                  "HTTP/1.0", 8);
	return 1;
}

static const struct smp_fetch_kw capture_fetches[] = {
	{ "capture.req.hdr", fetch_cap_hdr, { ARGT_SINT }, 1, NULL, SMP_T_STR, SMP_USE_TXN },
	/* response captures exist once a response came (HAProxy refuses them
	 * in request rules) */
	{ "capture.res.hdr", fetch_cap_hdr, { ARGT_SINT }, 1, NULL, SMP_T_STR, SMP_USE_HRSHP,
	  (const void *)1 },
	{ "capture.req.method", fetch_cap_reqline, { 0 }, 0, NULL, SMP_T_STR, SMP_USE_TXN,
	  (const void *)0 },
	{ "capture.req.uri", fetch_cap_reqline, { 0 }, 0, NULL, SMP_T_STR, SMP_USE_TXN,
	  (const void *)1 },
	{ "capture.req.ver", fetch_cap_reqline, { 0 }, 0, NULL, SMP_T_STR, SMP_USE_TXN,
	  (const void *)2 },
	{ "capture.res.ver", fetch_cap_res_ver, { 0 }, 0, NULL, SMP_T_STR, SMP_USE_TXN },
	{ NULL }
};

SMP_REGISTER_FETCHES(capture_fetches)
