/* The "acl" configuration keyword (manual section 4.2 "acl", and 7.1):
 *
 *   acl <name> <criterion> [flags] [operator] [<value>] ...
 *
 * valid in frontend, backend and listen sections, and in named defaults
 * sections (whose ACLs only serve that section's own rules, as in HAProxy;
 * anonymous defaults refuse it). Each line adds one term to the proxy's
 * ACL <name> (px->acls, created on the first line); the rules that follow
 * in the section resolve names against it with acl_cond_parse().
 *
 * Configuration time only, one thread: nothing here is shared at run time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/expr/acl.h>
#include <sluice/proxy/proxy.h>

/* referenced by the registry module: see its anchor list */
const int expr_acl_cfg_anchor;

static int kw_acl(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen);

static const struct cfg_kw acl_cfg_kws[] = {
	{ "acl", NULL, CFG_SEC_PROXY, kw_acl },
	{ NULL }
};
CFG_REGISTER(acl_cfg_kws)

/* The first character HAProxy refuses in an ACL name, or 0 if none. */
static char bad_name_char(const char *n)
{
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9') || *n == '-' || *n == '_' || *n == '.' ||
		      *n == ':'))
			return *n;
	return 0;
}

static int kw_acl(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	struct proxy *px = ctx->px;
	char sub[512];
	char bad;
	int ret;

	if (ctx->section == CFG_SEC_DEFAULTS && !px->name) {
		/* HAProxy's wording: nothing could ever use such an ACL, since
		 * proxies do not inherit ACLs */
		snprintf(err, errlen, "not allowed in anonymous 'defaults' section.");
		return -1;
	}
	if (nargs < 2) {
		snprintf(err, errlen, "expects an ACL name, a criterion and patterns.");
		return -1;
	}
	if ((bad = bad_name_char(args[1]))) {
		snprintf(err, errlen, "character '%c' is not permitted in acl name '%s'.", bad,
		         args[1]);
		return -1;
	}
	if (!px->acls) {
		px->acls = malloc(sizeof(*px->acls));
		if (!px->acls) {
			snprintf(err, errlen, "out of memory.");
			return -1;
		}
		acl_list_init(px->acls);
	}
	ret = acl_parse(px->acls, args + 1, nargs - 1, ctx->file, ctx->line, sub, sizeof(sub));
	if (ret < 0) {
		snprintf(err, errlen, "error detected while parsing ACL '%s' : %s.", args[1], sub);
		return -1;
	}
	if (ret > 0)
		cfg_warning(ctx->file, ctx->line, "%s.", sub);
	return 0;
}
