/* Persistence settings of backends: `option persist`, `force-persist`,
 * `ignore-persist`, `option prefer-last-server` and its
 * `max-keep-alive-queue`; and `option
 * abortonclose` (a queued request whose client closed is dropped)
 * (HAProxy 2.6 manual, section 4.2). Configuration time; the stream reads them when it looks at
 * a persistence cookie and when it picks a server (stream_req.c,
 * stream.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/acl.h>
#include <sluice/proxy/proxy.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_option(KW_ARGS);
static int kw_persist_cond(KW_ARGS);
static int kw_max_ka_queue(KW_ARGS);

static const struct cfg_kw persist_kws[] = {
	{ "option", "persist",            CFG_SEC_BE, kw_option, 1 },
	{ "option", "prefer-last-server", CFG_SEC_BE, kw_option, 1 },
	{ "option", "abortonclose",       CFG_SEC_BE, kw_option, 1 },
	{ "force-persist",  NULL,         CFG_SEC_BE_ONLY, kw_persist_cond },
	{ "ignore-persist", NULL,         CFG_SEC_BE_ONLY, kw_persist_cond },
	{ "max-keep-alive-queue", NULL,   CFG_SEC_BE, kw_max_ka_queue },
	{ NULL }
};
CFG_REGISTER(persist_kws)

/* referenced by proxy.c: see its anchor */
const int proxy_persist_cfg_anchor;

static int kw_option(KW_ARGS)
{
	unsigned int f = !strcmp(args[1], "persist") ? PX_O_PERSIST :
	                 !strcmp(args[1], "abortonclose") ? PX_O_ABORTONCLOSE : PX_O_PREFER_LAST;

	if (nargs > 2)
		return errmsg_set(err, errlen, "'option %s' cannot handle unexpected argument '%s'.",
		                  args[1], args[2]);
	if (ctx->negate)
		ctx->px->options &= ~f;
	else
		ctx->px->options |= f;
	return 0;
}

static int kw_persist_cond(KW_ARGS)
{
	struct proxy *px = ctx->px;
	struct persist_rule *grown;
	struct acl_cond *c;
	char sub[512];

	if (nargs < 2 || (strcmp(args[1], "if") && strcmp(args[1], "unless")))
		return errmsg_set(err, errlen, "'%s' requires either 'if' or 'unless' followed by a "
		                  "condition.", args[0]);
	c = acl_cond_parse(args + 1, nargs - 1, px->acls, ctx->file, ctx->line, sub, sizeof(sub));
	if (!c)
		return errmsg_set(err, errlen, "error detected while parsing a '%s' rule : %s.",
		                  args[0], sub);
	grown = realloc(px->persist_rules, sizeof(*grown) * (size_t)(px->npersist_rules + 1));
	if (!grown) {
		acl_cond_free(c);
		return errmsg_set(err, errlen, "out of memory");
	}
	px->persist_rules = grown;
	grown[px->npersist_rules].cond = c;
	grown[px->npersist_rules++].force = args[0][0] == 'f';
	return 0;
}

/* max-keep-alive-queue <n>: how long the queue of the server a keep-alive
 * connection used may be for its next request to wait there rather than
 * go to another server (prefer-last-server); -1 (default): no limit, 0:
 * never wait. */
static int kw_max_ka_queue(KW_ARGS)
{
	char *end;
	long v;

	if (nargs != 2)
		return errmsg_set(err, errlen, "'%s' expects an integer argument.", args[0]);
	v = strtol(args[1], &end, 10);
	if (!*args[1] || *end)
		return errmsg_set(err, errlen, "'%s' : unexpected character '%c' in integer value "
		                  "'%s'", args[0], *end ? *end : ' ', args[1]);
	ctx->px->max_ka_queue = v < -1 ? -1 : v > 1000000 ? 1000000 : (int)v;
	return 0;
}
