/* HTTP proxy keywords around the request's way to the server:
 * `http-send-name-header <name>` (the chosen server's name in a header,
 * set as the request leaves, so that a retry on another server updates
 * it) and `monitor fail if|unless <cond>` (the monitor-uri answers 503
 * while a condition holds). Configuration time; the stream reads the
 * results (stream_req.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/acl.h>
#include <sluice/proxy/proxy.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_send_name_header(KW_ARGS);
static int kw_monitor_fail(KW_ARGS);

static const struct cfg_kw http_px_kws[] = {
	{ "http-send-name-header", NULL, CFG_SEC_BE,      kw_send_name_header },
	{ "monitor",               "fail", CFG_SEC_FE_ONLY, kw_monitor_fail },
	{ NULL }
};
CFG_REGISTER(http_px_kws)

/* referenced by proxy.c: see its anchor */
const int http_px_cfg_anchor;

static int kw_send_name_header(KW_ARGS)
{
	char *n;

	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "'%s' requires a header string.", args[0]);
	n = strdup(args[1]);
	if (!n)
		return errmsg_set(err, errlen, "out of memory");
	free(ctx->px->send_name_hdr);
	ctx->px->send_name_hdr = n;
	return 0;
}

static int kw_monitor_fail(KW_ARGS)
{
	struct proxy *px = ctx->px;
	struct acl_cond *c, **n;
	char sub[512];

	if (nargs < 3 || (strcmp(args[2], "if") && strcmp(args[2], "unless")))
		return errmsg_set(err, errlen, "'monitor fail' expects 'if' or 'unless' followed by "
		                  "a condition.");
	c = acl_cond_parse(args + 2, nargs - 2, px->acls, ctx->file, ctx->line, sub, sizeof(sub));
	if (!c)
		return errmsg_set(err, errlen, "error detected while parsing a 'monitor fail' "
		                  "condition : %s.", sub);
	n = realloc(px->monitor_fail, sizeof(*n) * (size_t)(px->nmonitor_fail + 1));
	if (!n) {
		acl_cond_free(c);
		return errmsg_set(err, errlen, "out of memory");
	}
	px->monitor_fail = n;
	n[px->nmonitor_fail++] = c;
	return 0;
}
