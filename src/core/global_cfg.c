/* The global section's own keywords: threads, limits, tunables, process
 * settings, and the ones accepted only so that HAProxy configurations load.
 * (Keywords that configure a module live with it: `log` in log.c, `stats`
 * in cli.c...) Kept out of main.c so that every program that parses a
 * configuration has them, the configuration fuzzer included: src/cfg/parse.c
 * references the anchor below. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/fd_budget.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>

const int core_global_cfg_anchor;

static int kw_global_int(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	static const struct { const char *name; int *field; long min, max; } tab[] = {
		{ "nbthread",            &global.nbthread,       1, MAX_THREADS },
		{ "maxconn",             &global.maxconn,        1, 10000000 },
		{ "tune.maxpollevents",  &global.maxpollevents,  1, 100000 },
		{ "tune.runqueue-depth", &global.runqueue_depth, 1, 100000 },
		{ "tune.maxaccept",      &global.maxaccept,      -1, 100000 },
		{ "tune.rcvbuf.client",  &global.rcvbuf_cli,     1, 1 << 30 },
		{ "tune.sndbuf.client",  &global.sndbuf_cli,     1, 1 << 30 },
		{ "tune.rcvbuf.server",  &global.rcvbuf_srv,     1, 1 << 30 },
		{ "tune.sndbuf.server",  &global.sndbuf_srv,     1, 1 << 30 },
	};
	long v;

	if (nargs != 2) {
		snprintf(err, errlen, "expects one integer.");
		return -1;
	}
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(args[0], tab[i].name) != 0)
			continue;
		if (strcmp(args[1], "-1") == 0 && tab[i].min < 0) {
			*tab[i].field = 100000;   /* tune.maxaccept -1: "no limit" */
			return 0;
		}
		if (tab[i].min < 0 && strcmp(args[1], "0") == 0) {
			snprintf(err, errlen, "value must be -1 (no limit) or at least 1.");
			return -1;
		}
		if (cfg_parse_uint(args[1], tab[i].max, &v, err, errlen) < 0)
			return -1;
		if (v < tab[i].min && tab[i].min > 0) {
			snprintf(err, errlen, "value must be at least %ld.", tab[i].min);
			return -1;
		}
		if (tab[i].field == &global.maxconn && global.maxconn) {
			/* as HAProxy: the first one stays */
			cfg_warning(ctx->file, ctx->line, "'maxconn' already specified; the first "
			            "value (%d) is kept.", global.maxconn);
			return 0;
		}
		*tab[i].field = (int)v;
		return 0;
	}
	snprintf(err, errlen, "internal: unknown integer keyword.");
	return -1;
}

/* ulimit-n, fd-hard-limit: a number of descriptors, 0 meaning "derived".
 * As HAProxy: a second one is reported and the first one kept. */
static int kw_fd_limit(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	long *field = strcmp(args[0], "ulimit-n") == 0 ? &global.rlimit_nofile :
	              &global.fd_hard_limit;
	long v;

	if (nargs != 2) {
		snprintf(err, errlen, "expects one integer argument.");
		return -1;
	}
	if (cfg_parse_uint(args[1], FD_MAX_LIMIT, &v, err, errlen) < 0)
		return -1;
	if (*field) {
		cfg_warning(ctx->file, ctx->line, "'%s' already specified; the first value (%ld) "
		            "is kept.", args[0], *field);
		return 0;
	}
	*field = v;
	return 0;
}

static int kw_strict_limits(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (cfg_no_more_args(args, nargs, 1, err, errlen) < 0)
		return -1;
	global.strict_limits = !ctx->negate;
	return 0;
}

/* tune.pool-low-fd-ratio, tune.pool-high-fd-ratio: percent of maxsock */
static int kw_pool_fd_ratio(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	long v;

	if (nargs > 2) {
		snprintf(err, errlen, "cannot handle unexpected argument '%s'.", args[2]);
		return -1;
	}
	if (nargs != 2 || cfg_parse_uint(args[1], 100, &v, err, errlen) < 0) {
		snprintf(err, errlen, "expects an integer argument between 0 and 100.");
		return -1;
	}
	if (strcmp(args[0], "tune.pool-high-fd-ratio") == 0)
		global.pool_high_ratio = (int)v;
	else
		global.pool_low_ratio = (int)v;
	return 0;
}

static int kw_bufsize(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	long v;

	if (nargs != 2) {
		snprintf(err, errlen, "expects a size.");
		return -1;
	}
	if (cfg_parse_size(args[1], &v, err, errlen) < 0)
		return -1;
	if (v < 1024 || v > (1L << 30)) {
		snprintf(err, errlen, "size must be between 1024 and 1073741824 bytes.");
		return -1;
	}
	global.bufsize = (int)v;
	return 0;
}

static int kw_daemon(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (cfg_no_more_args(args, nargs, 1, err, errlen) < 0)
		return -1;
	global.daemon = 1;
	return 0;
}

/* master-worker [no-exit-on-failure]: as -W (src/mgmt/master.c). */
static int kw_master_worker(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (nargs > 2) {
		snprintf(err, errlen, "only supports 'no-exit-on-failure' option.");
		return -1;
	}
	if (nargs == 2) {
		if (strcmp(args[1], "no-exit-on-failure") != 0) {
			snprintf(err, errlen, "only supports 'no-exit-on-failure' option.");
			return -1;
		}
		global.mworker_no_exit_on_failure = 1;
	}
	global.master_worker = 1;
	return 0;
}

/* mworker-max-reloads <n>: an old worker that went through more reloads
 * than that is stopped with SIGTERM. */
static int kw_mworker_max_reloads(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                                  size_t errlen)
{
	long v;

	if (nargs != 2) {
		snprintf(err, errlen, "expects an integer argument.");
		return -1;
	}
	if (cfg_parse_uint(args[1], 1 << 30, &v, err, errlen) < 0)
		return -1;
	global.mworker_max_reloads = (int)v;
	return 0;
}

static int kw_string(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	char **field = strcmp(args[0], "pidfile") == 0 ? &global.pidfile :
	               strcmp(args[0], "localpeer") == 0 ? &global.localpeer :
	               strcmp(args[0], "log-tag") == 0 ? &global.log_tag : &global.node;

	if (nargs != 2) {
		snprintf(err, errlen, "expects one argument.");
		return -1;
	}
	if (field == &global.localpeer && global.localpeer_cmdline)
		return 0;   /* -L wins (HAProxy 2.6's manual) */
	free(*field);
	*field = strdup(args[1]);
	return 0;
}

static int kw_wakeup_mode(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (nargs == 2 && strcmp(args[1], "instant") == 0)
		sched_shared_runqueue = 0;
	else if (nargs == 2 && strcmp(args[1], "shared-runqueue") == 0)
		sched_shared_runqueue = 1;
	else {
		snprintf(err, errlen, "expects 'instant' or 'shared-runqueue'.");
		return -1;
	}
	return 0;
}

/* Keywords whose effect sluice does not need (it never changes user, runs
 * chrooted, or forks processes): accepted so that existing configurations
 * load, each with a warning naming what is ignored. */
static int kw_ignored_warn(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	cfg_warning(ctx->file, ctx->line, "'%s' is ignored by sluice.", args[0]);
	return 0;
}

static int kw_noop(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	return 0;
}

/* nokqueue, noevports, nopoll, nosplice: what they turn off, sluice never
 * uses (epoll is its poller, it does not splice): nothing to do but check
 * that no argument follows, as HAProxy does. */
static int kw_no_feature(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                         size_t errlen)
{
	if (nargs > 1) {
		snprintf(err, errlen, "cannot handle unexpected argument '%s'.", args[1]);
		return -1;
	}
	return 0;
}

/* tune.idle-pool.shared on|off: sluice's idle server connections are always
 * its threads' own (DESIGN: a thread owns its connections); "on" is
 * accepted and behaves as "off" (doc/configuration.md). */
static int kw_idle_pool_shared(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                               size_t errlen)
{
	if (nargs != 2 || (strcmp(args[1], "on") && strcmp(args[1], "off"))) {
		snprintf(err, errlen, "expects either 'on' or 'off' but got '%s'.",
		         nargs > 1 ? args[1] : "");
		return -1;
	}
	return 0;
}

/* hard-stop-after <time>: the longest a soft stop may last (main.c). */
static int kw_hard_stop_after(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                              size_t errlen)
{
	if (nargs != 2) {
		snprintf(err, errlen, "expects <time> as argument.");
		return -1;
	}
	return cfg_parse_time_ms(args[1], &global.hard_stop_after, err, errlen);
}

/* description <text...>: the words joined by spaces, shown by show info. */
static int kw_description(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                          size_t errlen)
{
	size_t len = 0, w = 0;
	char *d;

	if (nargs < 2) {
		snprintf(err, errlen, "expects a string argument.");
		return -1;
	}
	for (int i = 1; i < nargs; i++)
		len += strlen(args[i]) + 1;
	d = malloc(len);
	if (!d) {
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	for (int i = 1; i < nargs; i++) {
		size_t l = strlen(args[i]);

		if (w)
			d[w++] = ' ';
		memcpy(d + w, args[i], l);
		w += l;
	}
	d[w] = '\0';
	free(global.desc);
	global.desc = d;
	return 0;
}

/* setenv / presetenv <name> <value>, unsetenv <name>..., resetenv
 * [<name>...]: the process environment, from the next line on (each line's
 * "${VAR}" is expanded when it is read), as HAProxy 2.6 does. */
static int kw_env(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (!strcmp(args[0], "setenv") || !strcmp(args[0], "presetenv")) {
		if (nargs != 3) {
			snprintf(err, errlen, "expects a name and a value.");
			return -1;
		}
		if (setenv(args[1], args[2], !strcmp(args[0], "setenv")) < 0) {
			snprintf(err, errlen, "%s.", strerror(errno));
			return -1;
		}
		return 0;
	}
	if (!strcmp(args[0], "unsetenv")) {
		if (nargs < 2) {
			snprintf(err, errlen, "expects at least one variable name.");
			return -1;
		}
		for (int i = 1; i < nargs; i++)
			unsetenv(args[i]);
		return 0;
	}
	/* resetenv: all but the names listed; one removal per round, since
	 * each changes environ under us */
	for (;;) {
		char name[256];
		int found = 0;

		for (char **e = environ; *e && !found; e++) {
			const char *eq = strchr(*e, '=');
			size_t l = eq ? (size_t)(eq - *e) : strlen(*e);
			int keep = 0;

			for (int i = 1; i < nargs && !keep; i++)
				keep = strlen(args[i]) == l && !strncmp(args[i], *e, l);
			if (keep || l >= sizeof(name))
				continue;
			memcpy(name, *e, l);
			name[l] = '\0';
			found = 1;
		}
		if (!found)
			break;
		unsetenv(name);
	}
	return 0;
}

static const struct cfg_kw global_kws[] = {
	{ "nbthread",            NULL, CFG_SEC_GLOBAL, kw_global_int },
	{ "maxconn",             NULL, CFG_SEC_GLOBAL, kw_global_int },
	{ "tune.maxpollevents",  NULL, CFG_SEC_GLOBAL, kw_global_int },
	{ "tune.runqueue-depth", NULL, CFG_SEC_GLOBAL, kw_global_int },
	{ "tune.maxaccept",      NULL, CFG_SEC_GLOBAL, kw_global_int },
	{ "tune.bufsize",        NULL, CFG_SEC_GLOBAL, kw_bufsize },
	{ "tune.rcvbuf.client",  NULL, CFG_SEC_GLOBAL, kw_global_int },
	{ "tune.sndbuf.client",  NULL, CFG_SEC_GLOBAL, kw_global_int },
	{ "tune.rcvbuf.server",  NULL, CFG_SEC_GLOBAL, kw_global_int },
	{ "tune.sndbuf.server",  NULL, CFG_SEC_GLOBAL, kw_global_int },
	{ "tune.queue.wakeup",   NULL, CFG_SEC_GLOBAL, kw_wakeup_mode },
	{ "daemon",              NULL, CFG_SEC_GLOBAL, kw_daemon },
	{ "pidfile",             NULL, CFG_SEC_GLOBAL, kw_string },
	{ "master-worker",       NULL, CFG_SEC_GLOBAL, kw_master_worker },
	{ "mworker-max-reloads", NULL, CFG_SEC_GLOBAL, kw_mworker_max_reloads },
	{ "node",                NULL, CFG_SEC_GLOBAL, kw_string },
	{ "localpeer",           NULL, CFG_SEC_GLOBAL, kw_string },
	{ "log-tag",             NULL, CFG_SEC_GLOBAL, kw_string },
	{ "user",                NULL, CFG_SEC_GLOBAL, kw_ignored_warn },
	{ "group",               NULL, CFG_SEC_GLOBAL, kw_ignored_warn },
	{ "chroot",              NULL, CFG_SEC_GLOBAL, kw_ignored_warn },
	{ "ulimit-n",            NULL, CFG_SEC_GLOBAL, kw_fd_limit },
	{ "fd-hard-limit",       NULL, CFG_SEC_GLOBAL, kw_fd_limit },
	{ "strict-limits",       NULL, CFG_SEC_GLOBAL, kw_strict_limits, 1 },
	{ "tune.pool-low-fd-ratio",  NULL, CFG_SEC_GLOBAL, kw_pool_fd_ratio },
	{ "tune.pool-high-fd-ratio", NULL, CFG_SEC_GLOBAL, kw_pool_fd_ratio },
	{ "description",         NULL, CFG_SEC_GLOBAL, kw_description },
	{ "hard-stop-after",     NULL, CFG_SEC_GLOBAL, kw_hard_stop_after },
	{ "setenv",              NULL, CFG_SEC_GLOBAL, kw_env },
	{ "presetenv",           NULL, CFG_SEC_GLOBAL, kw_env },
	{ "unsetenv",            NULL, CFG_SEC_GLOBAL, kw_env },
	{ "resetenv",            NULL, CFG_SEC_GLOBAL, kw_env },
	{ "nokqueue",            NULL, CFG_SEC_GLOBAL, kw_no_feature },
	{ "noevports",           NULL, CFG_SEC_GLOBAL, kw_no_feature },
	{ "nopoll",              NULL, CFG_SEC_GLOBAL, kw_no_feature },
	{ "nosplice",            NULL, CFG_SEC_GLOBAL, kw_no_feature },
	{ "tune.idle-pool.shared", NULL, CFG_SEC_GLOBAL, kw_idle_pool_shared },
	{ "expose-experimental-directives", NULL, CFG_SEC_GLOBAL, kw_noop },
	{ "insecure-fork-wanted", NULL, CFG_SEC_GLOBAL, kw_noop },
	{ NULL }
};
CFG_REGISTER(global_kws)
