/* Actions that end a rule set or change the stream rather than the message:
 * allow/accept, reject, silent-drop, close, expect-proxy, switch-mode,
 * use-service, strict-mode, variables, log level, captures, addresses,
 * queue priority, timeouts, wait-for-body, socket marks, and the HAProxy
 * actions sluice knows but does not implement (explained, not guessed).
 *
 * Parse functions run at configuration time; exec functions on the
 * stream's owner thread, without allocating (captures excepted: see
 * exec_capture()).
 */
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/clock.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/log.h>
#include <sluice/core/sched.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include <sluice/http/txn.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stream.h>
#include "act_int.h"

/* referenced by the registry module: see its anchor list */
const int http_act_misc_anchor;

static int parse_none(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_expect_proxy(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_switch_mode(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_use_service(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_strict_mode(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_set_var(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_unset_var(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_log_level(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_capture(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_expr_arg(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_set_timeout(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_wait_body(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_int_arg(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_set_nice(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_unsupported(struct act_rule *, struct proxy *, char **, int, char *, size_t);

static enum act_verdict exec_stop(const struct act_rule *, struct act_env *);
static enum act_verdict exec_reject(const struct act_rule *, struct act_env *);
static enum act_verdict exec_silent_drop(const struct act_rule *, struct act_env *);
static enum act_verdict exec_close(const struct act_rule *, struct act_env *);
static enum act_verdict exec_noop(const struct act_rule *, struct act_env *);
static enum act_verdict exec_expect_proxy(const struct act_rule *, struct act_env *);
static enum act_verdict exec_switch_mode(const struct act_rule *, struct act_env *);
static enum act_verdict exec_use_service(const struct act_rule *, struct act_env *);
static enum act_verdict exec_strict_mode(const struct act_rule *, struct act_env *);
static enum act_verdict exec_set_var(const struct act_rule *, struct act_env *);
static enum act_verdict exec_unset_var(const struct act_rule *, struct act_env *);
static enum act_verdict exec_log_level(const struct act_rule *, struct act_env *);
static enum act_verdict exec_capture(const struct act_rule *, struct act_env *);
static enum act_verdict exec_set_addr(const struct act_rule *, struct act_env *);
static enum act_verdict exec_set_port(const struct act_rule *, struct act_env *);
static enum act_verdict exec_set_prio(const struct act_rule *, struct act_env *);
static enum act_verdict exec_set_timeout(const struct act_rule *, struct act_env *);
static enum act_verdict exec_wait_body(const struct act_rule *, struct act_env *);
static enum act_verdict exec_sockopt(const struct act_rule *, struct act_env *);

static void free_var(void *);
static void free_expr_arg(void *);
static void free_capture(void *);
static void free_timeout(void *);

#define REQ   ACT_F_HTTP_REQ
#define RES   ACT_F_HTTP_RES
#define AFT   ACT_F_HTTP_AFTER
#define CON   ACT_F_TCP_REQ_CONN
#define SES   ACT_F_TCP_REQ_SESS
#define CNT   ACT_F_TCP_REQ_CONT
#define TRS   ACT_F_TCP_RES_CONT
#define UNSUP ACT_KW_F_UNSUPPORTED

/* Which rule sets take which action follows HAProxy 2.6 (the lists its
 * parser prints for an unknown action). */
static const struct act_kw misc_kws[] = {
	{ "allow",        REQ | RES | AFT, parse_none, exec_stop },
	{ "accept",       CON | SES | CNT | TRS, parse_none, exec_stop },
	{ "reject",       REQ | CON | SES | CNT | TRS, parse_none, exec_reject },
	{ "silent-drop",  REQ | RES | CON | SES | CNT | TRS, parse_none, exec_silent_drop },
	{ "close",        TRS, parse_none, exec_close },
	{ "expect-proxy", CON, parse_expect_proxy, exec_expect_proxy },
	{ "switch-mode",  CNT, parse_switch_mode, exec_switch_mode },
	{ "use-service",  REQ | CNT, parse_use_service, exec_use_service },
	{ "strict-mode",  REQ | RES | AFT, parse_strict_mode, exec_strict_mode },
	{ "set-var(",     ACT_F_HTTP_ALL | ACT_F_TCP_ALL, parse_set_var, exec_set_var, free_var },
	{ "set-var-fmt(", ACT_F_HTTP_ALL | ACT_F_TCP_ALL, parse_set_var, exec_set_var, free_var },
	{ "unset-var(",   ACT_F_HTTP_ALL | ACT_F_TCP_ALL, parse_unset_var, exec_unset_var,
	  free_var },
	{ "set-log-level", REQ | RES | CNT | TRS, parse_log_level, exec_log_level },
	{ "capture",      REQ | RES | AFT | CNT, parse_capture, exec_capture, free_capture },
	{ "set-src",      REQ | CON | SES | CNT, parse_expr_arg, exec_set_addr, free_expr_arg },
	{ "set-src-port", REQ | CON | SES | CNT, parse_expr_arg, exec_set_port, free_expr_arg },
	{ "set-dst",      REQ | CON | SES | CNT, parse_expr_arg, exec_set_addr, free_expr_arg },
	{ "set-dst-port", REQ | CON | SES | CNT, parse_expr_arg, exec_set_port, free_expr_arg },
	{ "set-priority-class",  REQ | CNT, parse_expr_arg, exec_set_prio, free_expr_arg },
	{ "set-priority-offset", REQ | CNT, parse_expr_arg, exec_set_prio, free_expr_arg },
	{ "set-timeout",  REQ, parse_set_timeout, exec_set_timeout, free_timeout },
	{ "wait-for-body", REQ | RES, parse_wait_body, exec_wait_body, free },
	{ "set-mark",     REQ | RES | CON | SES | CNT | TRS, parse_int_arg, exec_sockopt, free },
	{ "set-tos",      REQ | RES | CON | SES | CNT | TRS, parse_int_arg, exec_sockopt, free },
	{ "set-nice",     REQ | RES | CNT | TRS, parse_set_nice, exec_noop },
	{ "disable-l7-retry", REQ, parse_none, exec_noop },
	/* sluice accepts no early data: a request is never read before the
	 * handshake is done, which is what this waits for */
	{ "wait-for-handshake", REQ, parse_none, exec_noop },
	/* known to HAProxy 2.6, refused with a reason */
	{ "do-resolve(",  REQ | CNT, parse_unsupported, NULL, NULL, UNSUP },
	{ "early-hint",   REQ, parse_unsupported, NULL, NULL, UNSUP },
	{ "send-spoe-group", REQ | RES | CNT | TRS, parse_unsupported, NULL, NULL, UNSUP },

	{ "expect-netscaler-cip", CON, parse_unsupported, NULL, NULL, UNSUP },
	{ NULL }
};
ACT_REGISTER(misc_kws)

static const char *word_of(char **args)
{
	return args[-1];
}

/* ------------------------------------------------------------------------ */
/* Verdicts                                                                  */
/* ------------------------------------------------------------------------ */

static int parse_none(struct act_rule *r, struct proxy *px, char **args, int nargs,
                      char *err, size_t errlen)
{
	if (nargs > 0)
		return errmsg_set(err, errlen, "unexpected argument '%s' (only 'if' or 'unless' "
		                  "and a condition may follow)", args[0]);
	return 0;
}

static enum act_verdict exec_stop(const struct act_rule *r, struct act_env *env)
{
	return ACT_V_STOP;
}

static enum act_verdict exec_reject(const struct act_rule *r, struct act_env *env)
{
	return ACT_V_REJECT;
}

static enum act_verdict exec_silent_drop(const struct act_rule *r, struct act_env *env)
{
	env->silent = 1;
	return ACT_V_REJECT;
}

static enum act_verdict exec_close(const struct act_rule *r, struct act_env *env)
{
	return ACT_V_CLOSE;
}

static enum act_verdict exec_noop(const struct act_rule *r, struct act_env *env)
{
	return ACT_V_CONTINUE;
}

static int parse_expect_proxy(struct act_rule *r, struct proxy *px, char **args, int nargs,
                              char *err, size_t errlen)
{
	if (nargs != 1 || strcmp(args[0], "layer4") != 0)
		return errmsg_set(err, errlen, "only 'layer4' is supported (expect-proxy layer4)");
	return 0;
}

static enum act_verdict exec_expect_proxy(const struct act_rule *r, struct act_env *env)
{
	env->expect_proxy = 1;
	return ACT_V_CONTINUE;
}

/* switch-mode http [proto h1|h2]: arg holds the protocol name or NULL. */
static int parse_switch_mode(struct act_rule *r, struct proxy *px, char **args, int nargs,
                             char *err, size_t errlen)
{
	if (!(px->cap & PX_CAP_FE))
		return errmsg_set(err, errlen, "not allowed because '%s' has no frontend "
		                  "capability", px->name ? px->name : "");
	if (nargs < 1 || strcmp(args[0], "http") != 0)
		return errmsg_set(err, errlen, "expects 'http' (the only mode it switches to)");
	if (nargs == 1)
		return 0;
	if (strcmp(args[1], "proto") != 0 || nargs != 3)
		return errmsg_set(err, errlen, "expects 'http' [ proto <name> ], found '%s'",
		                  args[1]);
	if (!strcmp(args[2], "h1"))
		r->arg = "h1";
	else if (!strcmp(args[2], "h2"))
		r->arg = "h2";
	else
		return errmsg_set(err, errlen, "unknown protocol '%s' (expects 'h1' or 'h2')",
		                  args[2]);
	return 0;
}

static enum act_verdict exec_switch_mode(const struct act_rule *r, struct act_env *env)
{
	env->switch_proto = r->arg;
	return ACT_V_SWITCH_HTTP;
}

static int parse_use_service(struct act_rule *r, struct proxy *px, char **args, int nargs,
                             char *err, size_t errlen)
{
	const struct act_service *svc;

	if (nargs != 1)
		return act_err_nargs(err, errlen, 1, "<service-name>");
	svc = act_service_find(args[0]);
	if (!svc)
		return errmsg_set(err, errlen, "'%s' unknown service name", args[0]);
	/* HTTP services answer HTTP requests (stream_reply.c): a TCP stream,
	 * or the request's tcp-request content phase, has none to hand over;
	 * TCP services (Lua) take over a TCP stream in its tcp-request
	 * content phase */
	if (svc->kind == ACT_SVC_HTTP && r->set != ACT_HTTP_REQ)
		return errmsg_set(err, errlen, "service '%s' is only available in 'http-request' "
		                  "rules", args[0]);
	if (svc->kind == ACT_SVC_TCP && r->set != ACT_TCP_REQ_CONT)
		return errmsg_set(err, errlen, "TCP service '%s' is only available in "
		                  "'tcp-request content' rules", args[0]);
	r->arg = (void *)svc;
	return 0;
}

static enum act_verdict exec_use_service(const struct act_rule *r, struct act_env *env)
{
	env->service = ((const struct act_service *)r->arg)->name;
	return ACT_V_USE_SERVICE;
}

static int parse_strict_mode(struct act_rule *r, struct proxy *px, char **args, int nargs,
                             char *err, size_t errlen)
{
	if (nargs != 1)
		return act_err_nargs(err, errlen, 1, "'on' or 'off'");
	if (!strcmp(args[0], "on"))
		r->arg = NULL;
	else if (!strcmp(args[0], "off"))
		r->arg = (void *)1;
	else
		return errmsg_set(err, errlen, "unexpected value '%s'; only 'on' and 'off' are "
		                  "supported", args[0]);
	return 0;
}

static enum act_verdict exec_strict_mode(const struct act_rule *r, struct act_env *env)
{
	env->strict_off = r->arg != NULL;
	return ACT_V_CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* Variables                                                                 */
/* ------------------------------------------------------------------------ */

struct act_var {
	struct var_ref ref;
	unsigned int conds;          /* VAR_C_* */
	struct sample_expr *expr;    /* set-var */
	struct act_fmt fmt;          /* set-var-fmt */
	int is_fmt;
};

static void free_var(void *arg)
{
	struct act_var *v = arg;

	sample_expr_free(v->expr);
	act_fmt_free(&v->fmt);
	free(v);
}

/* "set-var(txn.name[,cond...])": the variable and its conditions. */
static int parse_var_word(const char *word, struct act_var *v, int conds_ok, char *err,
                          size_t errlen)
{
	const char *open = strchr(word, '('), *p, *end;
	size_t len = strlen(word);

	if (!open || len < 2 || word[len - 1] != ')' || open + 1 >= word + len - 1)
		return errmsg_set(err, errlen, "expects a variable name between parentheses, "
		                  "as in %.*s(txn.name)", open ? (int)(open - word) : (int)len, word);
	p = open + 1;
	end = word + len - 1;
	for (const char *comma = memchr(p, ',', (size_t)(end - p)); ; ) {
		const char *stop = comma ? comma : end;

		if (p == open + 1) {
			if (vars_parse_ref(p, (size_t)(stop - p), &v->ref, err, errlen) < 0)
				return -1;
		} else {
			char cond[32];
			unsigned int bit;

			snprintf(cond, sizeof(cond), "%.*s", (int)(stop - p), p);
			bit = vars_cond_parse(cond);
			if (!conds_ok)
				return errmsg_set(err, errlen, "takes no condition ('%s')", cond);
			if (!bit)
				return errmsg_set(err, errlen, "unknown condition \"%s\"", cond);
			v->conds |= bit;
		}
		if (!comma)
			break;
		p = comma + 1;
		comma = memchr(p, ',', (size_t)(end - p));
	}
	return 0;
}

static int parse_set_var(struct act_rule *r, struct proxy *px, char **args, int nargs,
                         char *err, size_t errlen)
{
	struct act_var *v = calloc(1, sizeof(*v));
	const char *word = word_of(args);

	if (!v)
		return errmsg_set(err, errlen, "out of memory");
	r->arg = v;
	v->is_fmt = strncmp(word, "set-var-fmt(", 12) == 0;
	if (parse_var_word(word, v, 1, err, errlen) < 0)
		return -1;
	if (nargs != 1)
		return act_err_nargs(err, errlen, 1, v->is_fmt ? "<fmt>" : "<expr>");
	/* HAProxy renders set-var-fmt without the HTTP escaping of the
	 * other rule formats */
	if (v->is_fmt)
		return act_fmt_parse_opt(&v->fmt, args[0], r, 0, err, errlen);
	v->expr = act_expr_parse(args[0], r, err, errlen);
	return v->expr ? 0 : -1;
}

static int parse_unset_var(struct act_rule *r, struct proxy *px, char **args, int nargs,
                           char *err, size_t errlen)
{
	struct act_var *v = calloc(1, sizeof(*v));

	if (!v)
		return errmsg_set(err, errlen, "out of memory");
	r->arg = v;
	if (parse_var_word(word_of(args), v, 0, err, errlen) < 0)
		return -1;
	return parse_none(r, px, args, nargs, err, errlen);
}

static enum act_verdict exec_set_var(const struct act_rule *r, struct act_env *env)
{
	const struct act_var *v = r->arg;
	struct sample smp;

	if (!env->smp)
		return ACT_V_CONTINUE;
	if (v->is_fmt) {
		char buf[ACT_FMT_MAX];
		size_t n = act_fmt_render(&v->fmt, env, buf, sizeof(buf));

		memset(&smp, 0, sizeof(smp));
		smp_set_const_str(&smp, SMP_T_STR, buf, n);
		vars_set(env->smp, &v->ref, &smp, v->conds);   /* copies the value */
		return ACT_V_CONTINUE;
	}
	if (act_expr_eval(v->expr, env, SMP_T_ANY, &smp))
		vars_set(env->smp, &v->ref, &smp, v->conds);
	return ACT_V_CONTINUE;
}

static enum act_verdict exec_unset_var(const struct act_rule *r, struct act_env *env)
{
	const struct act_var *v = r->arg;

	if (env->smp)
		vars_unset(env->smp, &v->ref);
	return ACT_V_CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* Log level, captures                                                       */
/* ------------------------------------------------------------------------ */

static int parse_log_level(struct act_rule *r, struct proxy *px, char **args, int nargs,
                           char *err, size_t errlen)
{
	int level;

	if (nargs != 1)
		return act_err_nargs(err, errlen, 1, "(log level name or 'silent')");
	level = !strcmp(args[0], "silent") ? ACT_LOG_LEVEL_SILENT : log_level_from_name(args[0]);
	if (level < 0)
		return errmsg_set(err, errlen, "unknown log level '%s' (expects emerg, alert, "
		                  "crit, err, warning, notice, info, debug or silent)", args[0]);
	r->arg = (void *)(long)level;
	return 0;
}

static enum act_verdict exec_log_level(const struct act_rule *r, struct act_env *env)
{
	if (env->s && env->s->txn)
		env->s->txn->log_level = (int)(long)r->arg;
	return ACT_V_CONTINUE;
}

/* capture <sample> len <n> takes a new slot of the frontend's request
 * captures, as HAProxy does, so that %hr and capture.req.hdr(<idx>) show it
 * next to the captured headers; capture ... id <n> writes an existing slot
 * (declare capture, or an earlier capture ... len). */
struct act_capture {
	struct sample_expr *expr;
	int idx;
	int len;                     /* len form; 0 for the id form */
};

static void free_capture(void *arg)
{
	struct act_capture *c = arg;

	sample_expr_free(c->expr);
	free(c);
}

static int capture_len(struct act_capture *c, struct proxy *px, const char *val,
                       char *err, size_t errlen)
{
	long len;

	if (!(px->cap & PX_CAP_FE))
		return errmsg_set(err, errlen, "proxy '%s' has no frontend capability",
		                  px->name ? px->name : "");
	if (cfg_parse_uint(val, 65535, &len, err, errlen) < 0)
		return -1;
	if (len < 1)
		return errmsg_set(err, errlen, "'len' must be > 0");
	if (px->nreq_cap >= PX_MAX_CAPTURES)
		return errmsg_set(err, errlen, "too many captures (at most %d)", PX_MAX_CAPTURES);
	/* an empty name never matches a header: the slot is ours alone */
	px->req_cap[px->nreq_cap].name = strdup("");
	px->req_cap[px->nreq_cap].len = (int)len;
	c->idx = px->nreq_cap++;
	c->len = (int)len;
	return 0;
}

static int parse_capture(struct act_rule *r, struct proxy *px, char **args, int nargs,
                         char *err, size_t errlen)
{
	struct act_capture *c = calloc(1, sizeof(*c));
	int id_ok = r->set != ACT_TCP_REQ_CONT;
	int len_ok = r->set == ACT_HTTP_REQ || r->set == ACT_TCP_REQ_CONT;
	long id;

	if (!c)
		return errmsg_set(err, errlen, "out of memory");
	r->arg = c;
	if (nargs != 3)
		return errmsg_set(err, errlen, "expects <sample> %s <n>", !id_ok ? "len" :
		                  !len_ok ? "id" : "len|id");
	c->expr = act_expr_parse(args[0], r, err, errlen);
	if (!c->expr)
		return -1;
	if (len_ok && !strcmp(args[1], "len"))
		return capture_len(c, px, args[2], err, errlen);
	if (!id_ok || strcmp(args[1], "id") != 0)
		return errmsg_set(err, errlen, "expects '%s', found '%s'",
		                  !id_ok ? "len" : !len_ok ? "id" : "len' or 'id", args[1]);
	if (cfg_parse_uint(args[2], PX_MAX_CAPTURES - 1, &id, err, errlen) < 0)
		return -1;
	c->idx = (int)id;
	return 0;
}

/* The slot's value is a malloc'ed string of the txn (as the header
 * captures, freed with the txn): the only allocation of an exec path,
 * once per slot and transaction, then reused. */
static enum act_verdict exec_capture(const struct act_rule *r, struct act_env *env)
{
	const struct act_capture *c = r->arg;
	int req = r->set == ACT_HTTP_REQ || r->set == ACT_TCP_REQ_CONT;
	struct proxy *fe = env->s ? env->s->fe : NULL;
	struct http_txn *txn = env->s ? env->s->txn : NULL;
	const struct px_capture *slots;
	char **vals;
	struct sample smp;
	size_t n;

	if (!fe || !txn || c->idx >= (req ? fe->nreq_cap : fe->nres_cap) ||
	    c->idx >= TXN_MAX_CAPTURES)
		return ACT_V_CONTINUE;   /* no such slot in this frontend: ignored */
	slots = req ? fe->req_cap : fe->res_cap;
	vals = req ? txn->req_cap : txn->res_cap;
	if (!act_expr_eval(c->expr, env, SMP_T_STR, &smp))
		return ACT_V_CONTINUE;
	if (!vals[c->idx] && !(vals[c->idx] = malloc((size_t)slots[c->idx].len + 1)))
		return ACT_V_CONTINUE;
	n = smp.data.str.len < (size_t)slots[c->idx].len ? smp.data.str.len :
	    (size_t)slots[c->idx].len;
	memcpy(vals[c->idx], smp.data.str.ptr, n);
	vals[c->idx][n] = '\0';
	return ACT_V_CONTINUE;
}

/* A frontend's "capture ... id" rules must name one of its slots (a
 * backend's cannot be checked: any frontend may use it). */
static int check_capture_list(struct proxy *px, struct list *rules, const char *set)
{
	int errors = 0;

	for (struct list *pos = rules->next; pos != rules; pos = pos->next) {
		struct act_rule *r = list_elem(pos, struct act_rule, list);
		const struct act_capture *c = r->arg;
		int req = r->set == ACT_HTTP_REQ || r->set == ACT_TCP_REQ_CONT;

		if (r->kw->parse != parse_capture || c->len ||
		    c->idx < (req ? px->nreq_cap : px->nres_cap))
			continue;
		cfg_alert(r->file, r->line, "Proxy '%s': unable to find capture id '%d' "
		          "referenced by %s capture rule.", px->name ? px->name : "", c->idx, set);
		errors++;
	}
	return errors;
}

static int check_capture_ids(void)
{
	int errors = 0;

	for (struct list *pos = proxies.next; pos != &proxies; pos = pos->next) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!(px->cap & PX_CAP_FE))
			continue;
		errors += check_capture_list(px, &px->http_req_rules, "http-request");
		errors += check_capture_list(px, &px->http_res_rules, "http-response");
		errors += check_capture_list(px, &px->http_after_rules, "http-after-response");
	}
	return errors;
}

static struct cfg_post_hook capture_post_hook = { check_capture_ids, NULL, 50 };

__attribute__((constructor)) static void capture_post_register(void)
{
	cfg_register_post(&capture_post_hook);
}

/* ------------------------------------------------------------------------ */
/* Addresses, priority, timeouts                                             */
/* ------------------------------------------------------------------------ */

static void free_expr_arg(void *arg)
{
	sample_expr_free(arg);
}

static int parse_expr_arg(struct act_rule *r, struct proxy *px, char **args, int nargs,
                          char *err, size_t errlen)
{
	if (nargs > 1)
		return errmsg_set(err, errlen, "unexpected argument '%s' after the expression "
		                  "(only 'if' or 'unless' and a condition may follow)", args[1]);
	r->arg = act_expr_parse(nargs ? args[0] : NULL, r, err, errlen);
	return r->arg ? 0 : -1;
}

static int is_dst_action(const struct act_rule *r)
{
	return !strncmp(r->kw->kw, "set-dst", 7);
}

/* The client connection's address that the rule changes; the destination
 * (looked up lazily) is read first so that the kernel's value does not
 * replace ours later. */
static struct sockaddr_storage *rule_addr(const struct act_rule *r, struct act_env *env)
{
	struct conn *c;

	if (!env->s)
		return NULL;
	c = &env->s->cli;
	if (is_dst_action(r)) {
		conn_dst(c);
		return &c->dst;
	}
	return &c->src;   /* the peer's, set at accept */
}

static int sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

/* set-src / set-dst: an IPv4 or IPv6 sample (a string is parsed); the
 * port stays when the old address had one, else it becomes 0. */
static enum act_verdict exec_set_addr(const struct act_rule *r, struct act_env *env)
{
	struct sockaddr_storage *ss = rule_addr(r, env);
	struct sample smp, copy;
	int port;

	if (!ss || !act_expr_eval(r->arg, env, SMP_T_ANY, &smp))
		return ACT_V_CONTINUE;
	copy = smp;
	if (smp.type != SMP_T_IPV4 && smp.type != SMP_T_IPV6 && !smp_cast(&smp, SMP_T_IPV4)) {
		smp = copy;
		if (!smp_cast(&smp, SMP_T_IPV6))
			return ACT_V_CONTINUE;
	}
	port = sa_port(ss);
	memset(ss, 0, sizeof(*ss));
	if (smp.type == SMP_T_IPV4) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_addr = smp.data.ipv4;
		in->sin_port = htons((uint16_t)port);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = smp.data.ipv6;
		in6->sin6_port = htons((uint16_t)port);
	}
	return ACT_V_CONTINUE;
}

/* set-src-port / set-dst-port: an address without port becomes 0.0.0.0. */
static enum act_verdict exec_set_port(const struct act_rule *r, struct act_env *env)
{
	struct sockaddr_storage *ss = rule_addr(r, env);
	struct sample smp;
	uint16_t port;

	if (!ss || !act_expr_eval(r->arg, env, SMP_T_SINT, &smp))
		return ACT_V_CONTINUE;
	port = htons((uint16_t)smp.data.sint);
	if (ss->ss_family == AF_INET6) {
		((struct sockaddr_in6 *)ss)->sin6_port = port;
		return ACT_V_CONTINUE;
	}
	if (ss->ss_family != AF_INET) {
		memset(ss, 0, sizeof(*ss));
		ss->ss_family = AF_INET;
	}
	((struct sockaddr_in *)ss)->sin_port = port;
	return ACT_V_CONTINUE;
}

static enum act_verdict exec_set_prio(const struct act_rule *r, struct act_env *env)
{
	struct sample smp;

	if (!env->s || !act_expr_eval(r->arg, env, SMP_T_SINT, &smp))
		return ACT_V_CONTINUE;
	if (!strcmp(r->kw->kw, "set-priority-class"))
		stream_set_priority_class(env->s, (long)smp.data.sint);
	else
		stream_set_priority_offset(env->s, (long)smp.data.sint);
	return ACT_V_CONTINUE;
}

struct act_timeout {
	int tunnel;                  /* else server */
	int ms;                      /* constant, or 0 with <expr> */
	struct sample_expr *expr;    /* milliseconds */
};

static void free_timeout(void *arg)
{
	struct act_timeout *t = arg;

	sample_expr_free(t->expr);
	free(t);
}

/* set-timeout server|tunnel <time>|<expr>: a word that reads as a time is
 * one; anything else is a sample expression giving milliseconds. */
static int parse_set_timeout(struct act_rule *r, struct proxy *px, char **args, int nargs,
                             char *err, size_t errlen)
{
	struct act_timeout *t = calloc(1, sizeof(*t));
	char sub[256];

	if (!t)
		return errmsg_set(err, errlen, "out of memory");
	r->arg = t;
	if (nargs != 2)
		return act_err_nargs(err, errlen, 2, "('server' or 'tunnel', then a time or an "
		                     "expression)");
	if (!(px->cap & PX_CAP_BE))
		return errmsg_set(err, errlen, "proxy '%s' has no backend capability",
		                  px->name ? px->name : "");
	if (strcmp(args[0], "server") && strcmp(args[0], "tunnel"))
		return errmsg_set(err, errlen, "supports 'server' and 'tunnel' (got '%s')", args[0]);
	t->tunnel = !strcmp(args[0], "tunnel");
	if (args[1][0] >= '0' && args[1][0] <= '9' &&
	    cfg_parse_time_ms(args[1], &t->ms, sub, sizeof(sub)) == 0)
		return 0;
	t->expr = act_expr_parse(args[1], r, err, errlen);
	return t->expr ? 0 : -1;
}

static enum act_verdict exec_set_timeout(const struct act_rule *r, struct act_env *env)
{
	const struct act_timeout *t = r->arg;
	struct http_txn *txn = env->s ? env->s->txn : NULL;
	int64_t ms = t->ms;
	struct sample smp;

	if (!txn)
		return ACT_V_CONTINUE;
	if (t->expr) {
		if (!act_expr_eval(t->expr, env, SMP_T_SINT, &smp))
			return ACT_V_CONTINUE;
		ms = smp.data.sint;
	}
	if (ms <= 0 || ms > INT32_MAX)
		return ACT_V_CONTINUE;   /* a null timeout would mean none: ignored */
	if (t->tunnel)
		txn->tunnel_timeout_ms = (int)ms;
	else
		txn->srv_timeout_ms = (int)ms;
	return ACT_V_CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* wait-for-body                                                             */
/* ------------------------------------------------------------------------ */

struct act_wait_body {
	int time_ms;
	long at_least;               /* bytes; 0: the whole body */
};

static int parse_wait_body(struct act_rule *r, struct proxy *px, char **args, int nargs,
                           char *err, size_t errlen)
{
	struct act_wait_body *w = calloc(1, sizeof(*w));
	int i;

	if (!w)
		return errmsg_set(err, errlen, "out of memory");
	r->arg = w;
	if (nargs < 1 || strcmp(args[0], "time") != 0)
		return errmsg_set(err, errlen, "expects time <time> [ at-least <bytes> ]");
	if (act_parse_time(nargs > 1 ? args[1] : NULL, "time", &w->time_ms, err, errlen) < 0)
		return -1;
	for (i = 2; i < nargs; i += 2) {
		char sub[256];

		if (strcmp(args[i], "at-least") != 0)
			return errmsg_set(err, errlen, "unexpected argument '%s' (expects "
			                  "'at-least' <bytes>)", args[i]);
		if (i + 1 >= nargs)
			return errmsg_set(err, errlen, "missing argument for 'at-least'");
		if (cfg_parse_size(args[i + 1], &w->at_least, sub, sizeof(sub)) < 0)
			return errmsg_set(err, errlen, "'at-least': %s", sub);
	}
	return 0;
}

/* The loop clock of the calling thread (clock_mono_ms() outside the
 * workers: configuration checks, tests). */
static uint64_t loop_now_ms(void)
{
	return th_ctx ? th_ctx->now_ms : clock_mono_ms();
}

/* Waits until the body is complete, <at_least> bytes came, the buffer is
 * full, or <time> passed since the head was received. The deadline comes
 * from the transaction when there is one, so that it holds whatever the
 * caller keeps of the environment between calls; else from the first
 * yield (env->wait_exp_ms). */
static enum act_verdict exec_wait_body(const struct act_rule *r, struct act_env *env)
{
	const struct act_wait_body *w = r->arg;
	int req = r->set == ACT_HTTP_REQ;
	const struct http_msg *m = env->msg;
	struct http_txn *txn = env->s ? env->s->txn : NULL;
	uint64_t now, start = 0, deadline;
	size_t have;
	int complete;

	if (!env->smp || !m || (m->flags & HTTP_F_BODYLESS) ||
	    ((m->flags & HTTP_F_HAS_CL) && !m->content_length))
		goto done;
	complete = req ? env->smp->req_body_complete : env->smp->res_body_complete;
	have = req ? env->smp->req_body.len : env->smp->res_body.len;
	if (complete || env->buf_full || (w->at_least && have >= (size_t)w->at_least))
		goto done;
	now = loop_now_ms();
	if (txn)
		start = req ? txn->req_head_ms : txn->res_head_ms;
	if (start)
		deadline = start + (uint64_t)w->time_ms;
	else if (env->wait_exp_ms)
		deadline = env->wait_exp_ms;
	else
		deadline = now + (uint64_t)(w->time_ms > 0 ? w->time_ms : 1);
	if (now >= deadline)
		goto done;
	env->wait_exp_ms = deadline;
	if (req && txn)
		txn->flags |= TX_F_WAIT_BODY;
	return ACT_V_YIELD;
done:
	env->wait_exp_ms = 0;
	if (req && txn)
		txn->flags &= ~TX_F_WAIT_BODY;
	return ACT_V_CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* Socket options, no-ops, unsupported actions                               */
/* ------------------------------------------------------------------------ */

/* set-mark <mark> / set-tos <tos>: decimal or 0x hexadecimal. */
static int parse_int_arg(struct act_rule *r, struct proxy *px, char **args, int nargs,
                         char *err, size_t errlen)
{
	unsigned long *v;
	char *end;

	if (nargs != 1)
		return act_err_nargs(err, errlen, 1, "(an integer, decimal or 0x hexadecimal)");
	v = calloc(1, sizeof(*v));
	if (!v)
		return errmsg_set(err, errlen, "out of memory");
	r->arg = v;
	*v = strtoul(args[0], &end, 0);
	if (!*args[0] || *end || args[0][0] == '-')
		return errmsg_set(err, errlen, "invalid number '%s'", args[0]);
	if (!strcmp(r->kw->kw, "set-tos") && *v > 255)
		return errmsg_set(err, errlen, "TOS value '%s' out of range (0 to 255)", args[0]);
	if (*v > 0xffffffffUL)
		return errmsg_set(err, errlen, "mark '%s' out of range (32 bits)", args[0]);
	return 0;
}

/* Best effort, as in HAProxy: a failing setsockopt() (no privilege for
 * SO_MARK) changes nothing and the rules go on. */
static enum act_verdict exec_sockopt(const struct act_rule *r, struct act_env *env)
{
	int v = (int)*(const unsigned long *)r->arg;
	int fd = env->s ? env->s->cli.ph.fd : -1;

	if (fd < 0)
		return ACT_V_CONTINUE;
	if (!strcmp(r->kw->kw, "set-mark")) {
#ifdef SO_MARK
		(void)!setsockopt(fd, SOL_SOCKET, SO_MARK, &v, sizeof(v));
#endif
	} else if (env->s->cli.src.ss_family == AF_INET6) {
		(void)!setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &v, sizeof(v));
	} else {
		(void)!setsockopt(fd, IPPROTO_IP, IP_TOS, &v, sizeof(v));
	}
	return ACT_V_CONTINUE;
}

/* sluice's scheduler has no per-task nice: accepted for compatibility. */
static int parse_set_nice(struct act_rule *r, struct proxy *px, char **args, int nargs,
                          char *err, size_t errlen)
{
	long v;
	char *end;

	if (nargs != 1)
		return act_err_nargs(err, errlen, 1, "(-1024 to 1024)");
	v = strtol(args[0], &end, 10);
	if (!*args[0] || *end)
		return errmsg_set(err, errlen, "invalid number '%s'", args[0]);
	(void)v;
	cfg_warning(r->file, r->line, "'set-nice' has no effect in sluice (its scheduler has "
	            "no per-request priority); use set-priority-class for queues.");
	return 0;
}

static int parse_unsupported(struct act_rule *r, struct proxy *px, char **args, int nargs,
                             char *err, size_t errlen)
{
	const char *w = word_of(args);
	const char *why;

	if (!strncmp(w, "do-resolve", 10))
		why = "resolvers sections are not implemented";
	else if (!strcmp(w, "send-spoe-group"))
		why = "SPOE is not implemented";
	else
		why = "sluice does not implement it";
	return errmsg_set(err, errlen, "not supported by sluice: %s", why);
}
