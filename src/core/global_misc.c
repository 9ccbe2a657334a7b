/* Global keywords of HAProxy 2.6 that need little code: the PROXY v2
 * header of checks (pp2-never-send-local), OpenSSL's provider path
 * (ssl-provider-path), the QUIC cluster secret (stored: no QUIC here), and
 * the TLS and resolver settings of Lua's core.httpclient() (checked; the
 * client speaks clear HTTP to IP addresses, see doc/configuration.md).
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/provider.h>
#include <unistd.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/net/resolvers.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static char *httpclient_resolvers;      /* checked once every section is read */
static char *httpclient_resolvers_file;
static int httpclient_resolvers_line;

static int no_arg(KW_ARGS)
{
	if (nargs > 1)
		return errmsg_set(err, errlen, "'%s' cannot handle unexpected argument '%s'.",
		                  args[0], args[1]);
	return 0;
}

static int kw_pp2_never_send_local(KW_ARGS)
{
	if (no_arg(ctx, args, nargs, err, errlen) < 0)
		return -1;
	global.pp2_never_send_local = 1;
	return 0;
}

static int kw_ssl_provider_path(KW_ARGS)
{
	if (nargs != 2 || !*args[1])
		return errmsg_set(err, errlen, "global statement '%s' expects a directory path as "
		                  "an argument.", args[0]);
	if (!OSSL_PROVIDER_set_default_search_path(NULL, args[1]))
		return errmsg_set(err, errlen, "'%s': OpenSSL refused the path '%s'.", args[0],
		                  args[1]);
	return 0;
}

static int kw_cluster_secret(KW_ARGS)
{
	if (nargs != 2 || !*args[1])
		return errmsg_set(err, errlen, "expects an ASCII string argument.");
	cfg_warning(ctx->file, ctx->line, "'%s' is ignored by sluice: it has no QUIC "
	            "listeners to derive keys for.", args[0]);
	return 0;
}

static int kw_httpclient(KW_ARGS)
{
	const char *v = nargs > 1 ? args[1] : "";

	if (!strcmp(args[0], "httpclient.ssl.verify")) {
		if (nargs != 2 || (strcmp(v, "none") && strcmp(v, "required")))
			return errmsg_set(err, errlen, "'%s' expects 'none' or 'required' as argument.",
			                  args[0]);
	} else if (!strcmp(args[0], "httpclient.ssl.ca-file")) {
		if (nargs != 2 || access(v, R_OK) < 0)
			return errmsg_set(err, errlen, "'%s' : unable to load '%s'.", args[0], v);
	} else if (!strcmp(args[0], "httpclient.resolvers.prefer")) {
		if (nargs != 2 || (strcmp(v, "ipv4") && strcmp(v, "ipv6")))
			return errmsg_set(err, errlen, "'%s' expects 'ipv4' or 'ipv6' as argument.",
			                  args[0]);
		return 0;
	} else {
		if (nargs != 2 || !*v)
			return errmsg_set(err, errlen, "'%s' expects a resolvers section name.",
			                  args[0]);
		free(httpclient_resolvers);
		free(httpclient_resolvers_file);
		httpclient_resolvers = strdup(v);
		httpclient_resolvers_file = strdup(ctx->file);
		httpclient_resolvers_line = ctx->line;
		return 0;
	}
	cfg_warning(ctx->file, ctx->line, "'%s' is ignored by sluice: core.httpclient() speaks "
	            "clear HTTP only.", args[0]);
	return 0;
}

/* httpclient.resolvers.id names an existing section (HAProxy's words) */
static int httpclient_postparse(void)
{
	int bad = httpclient_resolvers && !resolvers_exist(httpclient_resolvers);

	if (bad)
		cfg_alert(httpclient_resolvers_file, httpclient_resolvers_line, "Proxy "
		          "'<HTTPCLIENT>': Can't find resolvers section '%s' for do-resolve action.",
		          httpclient_resolvers);
	free(httpclient_resolvers);
	free(httpclient_resolvers_file);
	httpclient_resolvers = httpclient_resolvers_file = NULL;
	return bad;
}

static struct cfg_post_hook httpclient_post = { .fn = httpclient_postparse, .order = 33 };

static const struct cfg_kw misc_kws[] = {
	{ "pp2-never-send-local", NULL, CFG_SEC_GLOBAL, kw_pp2_never_send_local },
	{ "ssl-provider-path", NULL, CFG_SEC_GLOBAL, kw_ssl_provider_path },
	{ "cluster-secret", NULL, CFG_SEC_GLOBAL, kw_cluster_secret },
	{ "httpclient.ssl.verify", NULL, CFG_SEC_GLOBAL, kw_httpclient },
	{ "httpclient.ssl.ca-file", NULL, CFG_SEC_GLOBAL, kw_httpclient },
	{ "httpclient.resolvers.prefer", NULL, CFG_SEC_GLOBAL, kw_httpclient },
	{ "httpclient.resolvers.id", NULL, CFG_SEC_GLOBAL, kw_httpclient },
	{ NULL }
};
CFG_REGISTER(misc_kws)

__attribute__((constructor)) static void global_misc_register(void)
{
	cfg_register_post(&httpclient_post);
}
