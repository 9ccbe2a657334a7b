/* Global keywords of HTTP limits and process behaviour that HAProxy 2.6
 * has and sluice maps onto its own structures: tune.maxrewrite,
 * tune.http.maxhdr, tune.http.cookielen, tune.http.logurilen, quiet,
 * uid, gid, noreuseport, noepoll. Configuration time only.
 *
 * Where sluice's structures are sized at build time (the header slots of
 * a transaction, the request line kept for logs), a value beyond them is
 * refused, or capped with a warning, rather than silently ignored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/http/msg.h>
#include <sluice/http/txn.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_tune_int(KW_ARGS);
static int kw_flag(KW_ARGS);
static int kw_ids(KW_ARGS);
static int kw_log_send_hostname(KW_ARGS);
static int kw_grace(KW_ARGS);

static const struct cfg_kw global_tune_kws[] = {
	{ "tune.maxrewrite",     NULL, CFG_SEC_GLOBAL, kw_tune_int },
	{ "tune.http.maxhdr",    NULL, CFG_SEC_GLOBAL, kw_tune_int },
	{ "tune.http.cookielen", NULL, CFG_SEC_GLOBAL, kw_tune_int },
	{ "tune.http.logurilen", NULL, CFG_SEC_GLOBAL, kw_tune_int },
	{ "quiet",               NULL, CFG_SEC_GLOBAL, kw_flag },
	{ "noreuseport",         NULL, CFG_SEC_GLOBAL, kw_flag },
	{ "noepoll",             NULL, CFG_SEC_GLOBAL, kw_flag },
	{ "zero-warning",        NULL, CFG_SEC_GLOBAL, kw_flag },
	{ "set-dumpable",        NULL, CFG_SEC_GLOBAL, kw_flag },
	{ "no-memory-trimming",  NULL, CFG_SEC_GLOBAL, kw_flag },
	{ "uid",                 NULL, CFG_SEC_GLOBAL, kw_ids },
	{ "log-send-hostname",   NULL, CFG_SEC_GLOBAL, kw_log_send_hostname },
	{ "grace",               NULL, CFG_SEC_GLOBAL, kw_grace },
	{ "maxconnrate",         NULL, CFG_SEC_GLOBAL, kw_tune_int },
	{ "maxsessrate",         NULL, CFG_SEC_GLOBAL, kw_tune_int },
	{ "gid",                 NULL, CFG_SEC_GLOBAL, kw_ids },
	{ NULL }
};
CFG_REGISTER(global_tune_kws)

/* referenced by parse.c: see its anchor; and it links cpu-map in */
const int core_global_tune_anchor;
extern const int core_cpu_map_anchor;
__attribute__((used)) static const int *const cpu_map_anchor = &core_cpu_map_anchor;
extern const int global_compat_anchor;
__attribute__((used)) static const int *const global_compat_anchor_ref = &global_compat_anchor;

static int kw_tune_int(KW_ARGS)
{
	long v;

	if (nargs != 2)
		return errmsg_set(err, errlen, "'%s' expects an integer argument.", args[0]);
	if (cfg_parse_uint(args[1], 0x7fffffff, &v, err, errlen) < 0)
		return -1;
	if (!strcmp(args[0], "tune.maxrewrite")) {
		/* as HAProxy: more than half a buffer is brought back to half */
		global.maxrewrite = (int)v;
		return 0;
	}
	if (!strcmp(args[0], "tune.http.maxhdr")) {
		if (v < 1 || v > 32767)
			return errmsg_set(err, errlen, "'%s' expects a numeric value between 1 and "
			                  "32767", args[0]);
		if (v > HTTP_MAX_HDRS_DEFAULT)
			return errmsg_set(err, errlen, "sluice supports at most %d headers per message "
			                  "(its transactions' header slots are sized at build time), "
			                  "not %ld", HTTP_MAX_HDRS_DEFAULT, v);
		global.http_maxhdr = (int)v;
		return 0;
	}
	if (!strcmp(args[0], "maxconnrate") || !strcmp(args[0], "maxsessrate")) {
		*(args[0][3] == 'c' ? &global.maxconnrate : &global.maxsessrate) = (int)v;
		return 0;
	}
	if (!strcmp(args[0], "tune.http.cookielen")) {
		global.http_cookielen = (int)v;
		return 0;
	}
	if (v < 1)
		return errmsg_set(err, errlen, "'%s' expects a positive value.", args[0]);
	if (v > TXN_URI_MAX) {
		cfg_warning(ctx->file, ctx->line, "'%s %ld': sluice keeps at most %d bytes of the "
		            "request line for its logs.", args[0], v, TXN_URI_MAX);
		v = TXN_URI_MAX;
	}
	global.http_logurilen = (int)v;
	return 0;
}

static int kw_flag(KW_ARGS)
{
	if (cfg_no_more_args(args, nargs, 1, err, errlen) < 0)
		return -1;
	if (!strcmp(args[0], "quiet"))
		global.quiet = 1;
	else if (!strcmp(args[0], "noreuseport"))
		global.noreuseport = 1;
	else if (!strcmp(args[0], "zero-warning"))
		global.zero_warning = 1;
	else if (!strcmp(args[0], "no-memory-trimming"))
		global.no_memory_trimming = 1;
	else if (!strcmp(args[0], "set-dumpable"))
		(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);   /* core dumps allowed, as HAProxy */
	else {
		/* epoll is sluice's only poller */
		cfg_warning(ctx->file, ctx->line, "'noepoll' is ignored: epoll is the only polling "
		            "system of sluice.");
	}
	return 0;
}

/* uid/gid: as `user` and `group`, privileges are not changed by sluice */
static int kw_ids(KW_ARGS)
{
	long v;

	if (nargs != 2)
		return errmsg_set(err, errlen, "'%s' expects an integer argument.", args[0]);
	if (cfg_parse_uint(args[1], 0x7fffffff, &v, err, errlen) < 0)
		return -1;
	cfg_warning(ctx->file, ctx->line, "'%s' is ignored by sluice.", args[0]);
	return 0;
}

/* log-send-hostname [<name>]: the syslog header carries a host name (the
 * system's by default) */
static int kw_log_send_hostname(KW_ARGS)
{
	char host[256] = "";
	char *v;

	if (nargs > 2)
		return errmsg_set(err, errlen, "'%s' expects at most one argument.", args[0]);
	if (nargs == 2)
		snprintf(host, sizeof(host), "%s", args[1]);
	else if (gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "localhost");
	v = strdup(host);
	if (!v)
		return errmsg_set(err, errlen, "out of memory");
	free(global.log_send_hostname);
	global.log_send_hostname = v;
	return 0;
}

static int kw_grace(KW_ARGS)
{
	if (nargs != 2)
		return errmsg_set(err, errlen, "'%s' expects <time> as argument.", args[0]);
	return cfg_parse_time_ms(args[1], &global.grace_ms, err, errlen);
}

/* tune.maxrewrite is bounded by half a buffer once tune.bufsize is known */
static int global_tune_post(void)
{
	if (global.maxrewrite > global.bufsize / 2)
		global.maxrewrite = global.bufsize / 2;
	return 0;
}

static struct cfg_post_hook global_tune_hook = { .fn = global_tune_post, .order = 0 };

__attribute__((constructor)) static void global_tune_register(void)
{
	cfg_register_post(&global_tune_hook);
}
