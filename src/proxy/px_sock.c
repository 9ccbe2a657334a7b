/* Socket settings of proxies, HAProxy 2.6's keywords: `option tcpka`,
 * `clitcpka`, `srvtcpka` and their `*-cnt`, `*-idle`, `*-intvl` tunings,
 * `option nolinger`, `option tcp-smart-accept|connect`, `option
 * http-no-delay`, `backlog`, `source`, and the proxy's `id`.
 *
 * Configuration time only: the values land in struct proxy (cli_so for
 * accepted connections, srv_so for server connections, backlog, uuid);
 * the listener and the server connect apply them (conn_apply_sockopts(),
 * conn_connect_opts()). A proxy copies its defaults section's values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/net/addr.h>
#include <sluice/mgmt/cli.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_tcpka(KW_ARGS);
static int kw_ka_tune(KW_ARGS);
static int kw_nolinger(KW_ARGS);
static int kw_smart(KW_ARGS);
static int kw_no_delay(KW_ARGS);
static int kw_backlog(KW_ARGS);
static int kw_source(KW_ARGS);
static int kw_id(KW_ARGS);
static int kw_rate_limit(KW_ARGS);

static const struct cfg_kw px_sock_kws[] = {
	{ "option", "tcpka",             CFG_SEC_PROXY, kw_tcpka, 1 },
	{ "option", "clitcpka",          CFG_SEC_FE,    kw_tcpka, 1 },
	{ "option", "srvtcpka",          CFG_SEC_BE,    kw_tcpka, 1 },
	{ "clitcpka-cnt",   NULL,        CFG_SEC_FE,    kw_ka_tune },
	{ "clitcpka-idle",  NULL,        CFG_SEC_FE,    kw_ka_tune },
	{ "clitcpka-intvl", NULL,        CFG_SEC_FE,    kw_ka_tune },
	{ "srvtcpka-cnt",   NULL,        CFG_SEC_BE,    kw_ka_tune },
	{ "srvtcpka-idle",  NULL,        CFG_SEC_BE,    kw_ka_tune },
	{ "srvtcpka-intvl", NULL,        CFG_SEC_BE,    kw_ka_tune },
	{ "option", "nolinger",          CFG_SEC_PROXY, kw_nolinger, 1 },
	{ "option", "tcp-smart-accept",  CFG_SEC_FE,    kw_smart, 1 },
	{ "option", "tcp-smart-connect", CFG_SEC_BE,    kw_smart, 1 },
	{ "option", "http-no-delay",     CFG_SEC_PROXY, kw_no_delay, 1 },
	{ "backlog", NULL,               CFG_SEC_FE,    kw_backlog },
	{ "source",  NULL,               CFG_SEC_BE,    kw_source },
	{ "id",      NULL,               CFG_SEC_FRONTEND | CFG_SEC_BACKEND | CFG_SEC_LISTEN, kw_id },
	{ "rate-limit", "sessions",      CFG_SEC_FE,    kw_rate_limit },
	{ NULL }
};
CFG_REGISTER(px_sock_kws)

/* referenced by proxy.c: see its anchor */
const int proxy_px_sock_anchor;

static int no_args(char **args, int nargs, int first, char *err, size_t errlen)
{
	if (nargs > first)
		return errmsg_set(err, errlen, "'%s %s' cannot handle unexpected argument '%s'.",
		                  args[0], args[1], args[first]);
	return 0;
}

/* option tcpka: both sides, each where the proxy has it (in a defaults
 * section, both, for what inherits) */
static int kw_tcpka(KW_ARGS)
{
	struct proxy *px = ctx->px;
	int on = !ctx->negate;

	if (no_args(args, nargs, 2, err, errlen) < 0)
		return -1;
	if (strcmp(args[1], "srvtcpka") != 0)
		px->cli_so.keepalive = on;
	if (strcmp(args[1], "clitcpka") != 0)
		px->srv_so.keepalive = on;
	return 0;
}

static int kw_ka_tune(KW_ARGS)
{
	struct conn_sockopts *o = args[0][0] == 'c' ? &ctx->px->cli_so : &ctx->px->srv_so;
	const char *what = strchr(args[0], '-') + 1;
	int ms;

	if (nargs != 2)
		return errmsg_set(err, errlen, "'%s' expects an integer value", args[0]);
	if (!strcmp(what, "cnt")) {
		long v;

		if (cfg_parse_uint(args[1], 0x7fffffff, &v, err, errlen) < 0)
			return -1;
		o->ka_cnt = (int)v;
		return 0;
	}
	if (cfg_parse_time_ms(args[1], &ms, err, errlen) < 0)
		return -1;
	/* the kernel counts whole seconds; a shorter delay is one second */
	ms = ms ? (ms + 999) / 1000 : 0;
	if (!strcmp(what, "idle"))
		o->ka_idle = ms;
	else
		o->ka_intvl = ms;
	return 0;
}

static int kw_nolinger(KW_ARGS)
{
	if (no_args(args, nargs, 2, err, errlen) < 0)
		return -1;
	if (ctx->px->cap & PX_CAP_FE || ctx->section == CFG_SEC_DEFAULTS)
		ctx->px->cli_so.nolinger = !ctx->negate;
	if (ctx->px->cap & PX_CAP_BE || ctx->section == CFG_SEC_DEFAULTS)
		ctx->px->srv_so.nolinger = !ctx->negate;
	return 0;
}

static int kw_smart(KW_ARGS)
{
	if (no_args(args, nargs, 2, err, errlen) < 0)
		return -1;
	if (!strcmp(args[1], "tcp-smart-accept"))
		ctx->px->cli_so.smart = !ctx->negate;
	else
		ctx->px->srv_so.smart = !ctx->negate;
	return 0;
}

/* sluice sets TCP_NODELAY on every TCP socket (see listener.c): the option
 * asks for what is already done */
static int kw_no_delay(KW_ARGS)
{
	return no_args(args, nargs, 2, err, errlen);
}

static int kw_backlog(KW_ARGS)
{
	long v;

	if (nargs != 2)
		return errmsg_set(err, errlen, "'backlog' expects an integer argument.");
	if (cfg_parse_uint(args[1], 0x7fffffff, &v, err, errlen) < 0)
		return -1;
	ctx->px->backlog = (int)v;
	return 0;
}

/* source <addr>[:<port>] [usesrc ...] [interface <name>] */
static int kw_source(KW_ARGS)
{
	struct sl_addr a;
	char sub[256];

	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "'source' expects <addr>[:<port>], and optionally "
		                  "'usesrc' <addr>, and 'interface' <name>.");
	if (addr_parse(args[1], &a, ADDR_O_PORT_OPTIONAL | ADDR_O_NO_FD | ADDR_O_NO_UNIX, sub,
	               sizeof(sub)) < 0)
		return errmsg_set(err, errlen, "'source %s' : invalid address: %s", args[1], sub);
	for (int i = 2; i < nargs; i++) {
		if (!strcmp(args[i], "usesrc") || !strcmp(args[i], "interface"))
			return errmsg_set(err, errlen, "'source ... %s' is not supported by sluice "
			                  "(transparent proxying and binding to an interface need "
			                  "privileges sluice does not take).", args[i]);
		return errmsg_set(err, errlen, "'source' only supports optional keywords 'usesrc' "
		                  "and 'interface', not '%s'.", args[i]);
	}
	ctx->px->srv_so.src = a.ss;
	ctx->px->srv_so.srclen = a.len;
	return 0;
}

/* rate-limit sessions <n>: the frontend accepts at most <n> new sessions
 * per second; beyond, its listeners pause until the rate falls */
static int kw_rate_limit(KW_ARGS)
{
	long v;

	if (nargs != 3)
		return errmsg_set(err, errlen, "'rate-limit sessions' expects expects an integer "
		                  "value (in sessions/second)");   /* sic, HAProxy's words */
	if (cfg_parse_uint(args[2], 0x7fffffff, &v, err, errlen) < 0)
		return -1;
	ctx->px->fe_rate_lim = (int)v;
	return 0;
}

static const char *cap_name(const struct proxy *px)
{
	return (px->cap & PX_CAP_FE) && (px->cap & PX_CAP_BE) ? "proxy" :
	       (px->cap & PX_CAP_FE) ? "frontend" : "backend";
}

static int kw_id(KW_ARGS)
{
	struct proxy *px = ctx->px;
	char *end;
	long v;

	if (nargs < 2)
		return errmsg_set(err, errlen, "'id' expects an integer argument.");
	v = strtol(args[1], &end, 10);
	if (*end || v <= 0 || v > 0x7fffffff)
		return errmsg_set(err, errlen, "custom id has to be > 0.");
	for (struct list *p = proxies.next; p != &proxies; p = p->next) {
		struct proxy *o = list_elem(p, struct proxy, list);

		if (o != px && o->custom_id && o->uuid == v)
			return errmsg_set(err, errlen, "%s %s reuses same custom id as %s %s (declared "
			                  "at %s:%d).", cap_name(px), px->name,
			                  cap_name(o), o->name, o->conf_file, o->conf_line);
	}
	px->uuid = (int)v;
	px->custom_id = 1;
	return 0;
}

/* Proxies without an `id` are numbered as HAProxy 2.6 numbers them: in
 * declaration order from 1 (from 2 when a stats socket exists: HAProxy's
 * CLI is a proxy of its own, made first), each taking the first id free
 * from a counter that every proxy, with an `id` or not, moves past. */
static int id_used(int id)
{
	for (struct list *q = proxies.next; q != &proxies; q = q->next) {
		const struct proxy *o = list_elem(q, struct proxy, list);

		if (o->custom_id && o->uuid == id)
			return 1;
	}
	return 0;
}

/* Each server's socket options: its backend's, with its own `source`,
 * `tfo` and `tcp-ut` over them. */
static void server_sockopts(void)
{
	for (struct list *p = proxies.next; p != &proxies; p = p->next) {
		struct proxy *px = list_elem(p, struct proxy, list);

		for (int i = 0; (px->cap & PX_CAP_BE) && i < px->nsrv; i++) {
			struct server *sv = px->srv[i];

			sv->so = px->srv_so;
			if (sv->has_source) {
				sv->so.src = sv->source.ss;
				sv->so.srclen = sv->source.len;
			}
			if (sv->tfo > 0)
				sv->so.tfo = 1;
			if (sv->tcp_ut_ms)
				sv->so.user_timeout_ms = sv->tcp_ut_ms;
		}
	}
}

static int number_proxies(void)
{
	int next = list_empty(&cli_binds) ? 1 : 2;

	for (struct list *p = proxies.next; p != &proxies; p = p->next) {
		struct proxy *px = list_elem(p, struct proxy, list);

		if (px->custom_id) {
			next++;
			continue;
		}
		while (id_used(next))
			next++;
		px->uuid = next++;
	}
	server_sockopts();
	return 0;
}

static struct cfg_post_hook px_sock_post = { .fn = number_proxies, .order = 1 };

__attribute__((constructor)) static void px_sock_register(void)
{
	cfg_register_post(&px_sock_post);
}
