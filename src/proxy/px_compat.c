/* Proxy options of HAProxy 2.6 that configurations carry and that have
 * nothing to act on in sluice, or are not implemented: accepted so that
 * the configuration loads, each with a warning saying what sluice does
 * instead (doc/configuration.md, "Accepted but ignored"); and those whose
 * behaviour is sluice's anyway, accepted silently.
 */
#include <stdio.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/proxy/proxy.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_compat_option(KW_ARGS);

/* bind-process (deprecated in 2.6): one process, so it means nothing */
static int kw_bind_process(KW_ARGS)
{
	for (int i = 1; i < nargs; i++) {
		if (!px_process_set_ok(args[i], strlen(args[i])) && strcmp(args[i], "even"))
			return errmsg_set(err, errlen, "bind-process : '%s' is not a valid "
			                  "number/range.%s", args[i], strchr(args[i], '/') ? "" :
			                  " It supports numbers from 1 to 1.");
	}
	cfg_warning(ctx->file, ctx->line, "'bind-process' has no effect, is deprecated, and "
	            "will be removed in version 2.7.");
	return 0;
}

static const struct cfg_kw px_compat_kws[] = {
	{ "bind-process", NULL, CFG_SEC_PROXY, kw_bind_process },
	{ "option", "splice-auto",             CFG_SEC_PROXY, kw_compat_option, 1 },
	{ "option", "splice-request",          CFG_SEC_PROXY, kw_compat_option, 1 },
	{ "option", "splice-response",         CFG_SEC_PROXY, kw_compat_option, 1 },
	{ "option", "contstats",               CFG_SEC_FE,    kw_compat_option, 1 },
	{ "option", "independent-streams",     CFG_SEC_PROXY, kw_compat_option, 1 },
	{ "option", "http-pretend-keepalive",  CFG_SEC_BE,    kw_compat_option, 1 },
	{ "option", "disable-h2-upgrade",      CFG_SEC_FE,    kw_compat_option, 1 },
	{ "option", "socket-stats",            CFG_SEC_FE,    kw_compat_option, 1 },
	{ "option", "http-use-proxy-header",   CFG_SEC_FE,    kw_compat_option, 1 },
	{ "option", "idle-close-on-response",  CFG_SEC_FE,    kw_compat_option, 1 },
	{ "option", "checkcache",              CFG_SEC_BE,    kw_compat_option, 1 },
	{ NULL }
};
CFG_REGISTER(px_compat_kws)

/* referenced by proxy.c: see its anchor */
const int proxy_px_compat_anchor;

/* NULL: sluice behaves so anyway (silently accepted) */
static const struct { const char *name, *why; } compat[] = {
	{ "splice-auto", "sluice does not splice: data are copied through its buffers" },
	{ "splice-request", "sluice does not splice: data are copied through its buffers" },
	{ "splice-response", "sluice does not splice: data are copied through its buffers" },
	{ "contstats", "byte counters are updated when a transfer ends" },
	{ "independent-streams", "not implemented" },
	{ "http-pretend-keepalive", "not implemented" },
	{ "disable-h2-upgrade", NULL },       /* sluice never upgrades to h2c */
	{ "socket-stats", "per-listener statistics rows are not implemented" },
	{ "http-use-proxy-header", "Proxy-Connection is not read in place of Connection" },
	{ "idle-close-on-response", NULL },   /* idle connections close on soft stop */
	{ "checkcache", "cacheable responses with cookies are not checked" },
};

static int kw_compat_option(KW_ARGS)
{
	if (nargs > 2)
		return errmsg_set(err, errlen, "'option %s' cannot handle unexpected argument '%s'.",
		                  args[1], args[2]);
	for (size_t i = 0; i < sizeof(compat) / sizeof(compat[0]); i++) {
		if (strcmp(args[1], compat[i].name) != 0)
			continue;
		if (compat[i].why && !ctx->negate)
			cfg_warning(ctx->file, ctx->line, "'option %s' is ignored by sluice: %s.",
			            args[1], compat[i].why);
		return 0;
	}
	return 0;
}
