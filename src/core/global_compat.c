/* Global keywords of HAProxy 2.6 that tune its own internals (buffer
 * pools, pipes, its scheduler, its polling, its TLS context caches...):
 * sluice has none of those mechanisms, so a configuration that sets them
 * is accepted, its arguments checked as HAProxy checks them, with one
 * warning each saying why the setting has no effect. Keywords with an
 * effect that sluice would change are not here: they are implemented or
 * refused by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

enum arg_kind { ARG_NONE, ARG_UINT, ARG_TIME, ARG_ONOFF, ARG_ONOFFAUTO };

static const struct compat_kw {
	const char *name;
	enum arg_kind arg;
	const char *why;
} compat_kws[] = {
	{ "busy-polling", ARG_NONE, "its threads sleep in epoll_wait() when idle" },
	{ "tune.idletimer", ARG_TIME, "it does not splice, so has no idle timer for pipes" },
	{ "tune.recv_enough", ARG_UINT, "its reads fill the buffer's room" },
	{ "tune.buffers.limit", ARG_UINT, "buffers come from per-thread pools without a count limit" },
	{ "tune.buffers.reserve", ARG_UINT, "buffers come from per-thread pools without a reserve" },
	{ "tune.pipesize", ARG_UINT, "it does not splice" },
	{ "maxpipes", ARG_UINT, "it does not splice" },
	{ "tune.sched.low-latency", ARG_ONOFF, "its scheduler has its own urgent list for wake-ups" },
	{ "tune.pattern.cache-size", ARG_UINT, "pattern lookups are not cached (maps are indexed)" },
	{ "tune.peers.max-updates-at-once", ARG_UINT, "its peers push fixed batches (512 entries per table and run)" },
	{ "tune.ssl.force-private-cache", ARG_NONE, "its TLS session cache is always its own" },
	{ "tune.ssl.ssl-ctx-cache-size", ARG_UINT, "it does not generate certificates" },
	{ "tune.ssl.hard-maxrecord", ARG_UINT, "OpenSSL chooses the record sizes" },
	{ "numa-cpu-mapping", ARG_NONE, "threads are placed by cpu-map or the kernel" },
	{ "profiling.tasks", ARG_ONOFFAUTO, "its latency statistics are always on (show latency)" },
	{ "ssl-mode-async", ARG_NONE, "it does not use asynchronous OpenSSL engines" },
	{ "nogetaddrinfo", ARG_NONE, "names are resolved once at start-up with getaddrinfo()" },
	{ "insecure-setuid-wanted", ARG_NONE, "it does not change user" },
	{ "tune.fail-alloc", ARG_UINT, "it has no allocation failure injection" },
	{ NULL }
};

static int kw_compat(KW_ARGS)
{
	const struct compat_kw *k = compat_kws;
	const char *v = nargs > 1 ? args[1] : "";

	while (strcmp(k->name, args[0]) != 0)
		k++;
	switch (k->arg) {
	case ARG_NONE:
		if (nargs > 1)
			return errmsg_set(err, errlen, "'%s' cannot handle unexpected argument '%s'.",
			                  args[0], args[1]);
		break;
	case ARG_UINT: {
		char *end;

		if (nargs != 2 || !*v || strtol(v, &end, 10) < 0 || *end)
			return errmsg_set(err, errlen, "'%s' expects a positive integer argument.",
			                  args[0]);
		break;
	}
	case ARG_TIME: {
		int ms;

		if (nargs != 2 || cfg_parse_time_ms(v, &ms, err, errlen) < 0 || ms > 65535)
			return errmsg_set(err, errlen, "'%s' expects a timer value between 0 and "
			                  "65535 ms.", args[0]);
		break;
	}
	case ARG_ONOFF:
		if (strcmp(v, "on") && strcmp(v, "off"))
			return errmsg_set(err, errlen, "'%s' expects either 'on' or 'off' but got '%s'.",
			                  args[0], v);
		break;
	case ARG_ONOFFAUTO:
		if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "auto"))
			return errmsg_set(err, errlen, "'%s' expects either 'on', 'auto', or 'off' but "
			                  "got '%s'.", args[0], v);
		break;
	}
	cfg_warning(ctx->file, ctx->line, "'%s' is ignored by sluice: %s.", args[0], k->why);
	return 0;
}

static const struct cfg_kw global_compat_kws[] = {
	{ "busy-polling", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.idletimer", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.recv_enough", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.buffers.limit", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.buffers.reserve", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.pipesize", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "maxpipes", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.sched.low-latency", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.pattern.cache-size", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.peers.max-updates-at-once", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.ssl.force-private-cache", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.ssl.ssl-ctx-cache-size", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.ssl.hard-maxrecord", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "numa-cpu-mapping", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "profiling.tasks", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "ssl-mode-async", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "nogetaddrinfo", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "insecure-setuid-wanted", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ "tune.fail-alloc", NULL, CFG_SEC_GLOBAL, kw_compat },
	{ NULL }
};
CFG_REGISTER(global_compat_kws)

/* referenced by global_tune.c: see its anchor */
const int global_compat_anchor;
