/* The process-wide `global` structure and build facts. */
#include <limits.h>
#include <string.h>
#include <sluice/core/global.h>

struct global global = {
	.nbthread = 0,            /* 0: the CPUs the process may run on */
	.maxconn = 0,             /* 0: derived from the file-descriptor limit */
	.strict_limits = 1,
	.stats_maxconn = 10,      /* HAProxy's default */
	.pool_low_ratio = 20,
	.pool_high_ratio = 25,
	/* until setup_limits() computes them (never, in unit tests): no mark */
	.pool_low_count = INT_MAX,
	.pool_high_count = INT_MAX,
	.bufsize = 16384,
	.maxrewrite = 1024,
	.http_maxhdr = 101,
	.http_cookielen = 63,
	.http_logurilen = 1024,
	.maxpollevents = 200,
	.runqueue_depth = 200,
	.maxaccept = 64,
	.stats_timeout_ms = 10000,
	.comp_maxlevel = 1,       /* HAProxy's default */
	.comp_maxcpu = 100,
	.mworker_max_reloads = -1,
	.logs = LIST_HEAD_INIT(global.logs),
};

const char sluice_build_features[] =
	"+EPOLL +THREAD +LINUX_SPLICE +REUSEPORT +ACCEPT4 +GETADDRINFO "
	"+OPENSSL +PCRE2 +PCRE2_JIT +LUA +NGHTTP2 +ZLIB";

/* Non-zero if <name> is one of the build features (case-sensitive, as in
 * HAProxy's feature() predicate). */
int build_has_feature(const char *name)
{
	size_t n = strlen(name);
	const char *p = sluice_build_features;

	if (!n)
		return 0;
	while ((p = strstr(p, name)) != NULL) {
		if (p > sluice_build_features && p[-1] == '+' &&
		    (p[n] == ' ' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}
