/* The descriptor budget: how many descriptors sluice may hold, and how many
 * it holds now.
 *
 * At start-up (HAProxy 2.6's rules): every descriptor the configuration
 * may need is counted in `maxsock`: a reserve of FD_RESERVED, the listening
 * sockets, the log sockets, the CLI connections (`stats maxconn`), three
 * per thread (HAProxy counts a poller and a wake-up pipe; sluice uses an
 * epoll and an eventfd, and keeps the third as a spare), and two per
 * connection (client and server side) up to `maxconn`. Without `maxconn`,
 * maxconn is derived from the descriptor limit sluice may raise itself to
 * (the hard RLIMIT_NOFILE, capped by `fd-hard-limit`); the soft limit is
 * then set to `ulimit-n`, maxsock by default.
 *
 * At run time: global.fd_used counts the descriptors held now (those open
 * when the threads started, plus every connection accepted or opened,
 * minus every one closed): one atomic add per descriptor opened or closed,
 * nothing on the I/O paths. Idle server connections are not owed to any
 * session: they live on what the sessions leave, and must go before a
 * session is refused a descriptor. The idle pools (src/proxy/srv_idle.c)
 * register the reclaimer that closes them; the listeners and the connect
 * path call fd_budget_reclaim() when the budget is short.
 */
#ifndef SLUICE_CORE_FD_BUDGET_H
#define SLUICE_CORE_FD_BUDGET_H

#include <limits.h>
#include <stdatomic.h>
#include <sluice/core/global.h>

#define FD_RESERVED       10       /* stdio and what libraries open (as HAProxy) */
#define FD_PER_THREAD     3        /* counted per thread (as HAProxy) */
#define FD_MIN_MAXCONN    100      /* a derived maxconn is never lower (as HAProxy) */
#define FD_MAX_LIMIT      (1L << 24)   /* the poller's table stops there */
/* descriptors left alone by the connection budget: what the process may
 * open outside connections (a file read on a CLI command) */
#define FD_BUDGET_SPARE   2

/* Inputs and results of fd_limits_compute(): pure arithmetic, no syscall. */
struct fd_limits {
	/* in */
	long boot_cur, boot_max;   /* RLIMIT_NOFILE at start-up */
	long fd_hard_limit;        /* fd-hard-limit, 0 = none */
	long ulimit_n;             /* ulimit-n, 0 = derived */
	int maxconn;               /* global maxconn, 0 = derived */
	int nbthread;
	int listen_fds;            /* listening sockets */
	int log_fds;               /* log sockets */
	int check_fds;             /* health checks: one each while it runs */
	int stats_maxconn;         /* CLI connections at once */
	int pool_low_ratio, pool_high_ratio;
	/* out */
	int maxconn_derived;       /* maxconn was computed here */
	int maxsock;
	long nofile;               /* the soft limit wanted (ulimit-n) */
	int pool_low_count, pool_high_count;
};

/* The descriptors counted before any connection: reserve, listeners, logs,
 * checks, CLI, threads. */
int  fd_limits_fixed(const struct fd_limits *l);
/* The limit that a derived maxconn is computed from: the larger of the boot
 * soft and hard limits, capped by fd-hard-limit and FD_MAX_LIMIT. */
long fd_limits_usable(const struct fd_limits *l);
/* Fills the results from the inputs. */
void fd_limits_compute(struct fd_limits *l);

/* Sets RLIMIT_NOFILE to l->nofile and fills global.rlimit_nofile with the
 * soft limit in force. Returns 0, or -1 (message printed) when the limit
 * cannot be set and strict-limits is on: the process must not start. */
int  fd_limits_apply(const struct fd_limits *l);

/* Run time. Called once before the threads start: global.fd_used becomes
 * the number of descriptors open now (<fallback> if it cannot be counted). */
void fd_budget_start(int fallback);

static inline void fd_budget_opened(void)
{
	atomic_fetch_add_explicit(&global.fd_used, 1, memory_order_relaxed);
}

static inline void fd_budget_closed(void)
{
	atomic_fetch_sub_explicit(&global.fd_used, 1, memory_order_relaxed);
}

/* Descriptors that can still be opened before the limit (minus the spare);
 * may be negative. A racy read: callers act on it as a hint, and handle
 * EMFILE anyway. */
static inline int fd_budget_room(void)
{
	if (!global.maxsock)
		return INT_MAX;   /* no limit computed: a unit test */
	return (int)(global.rlimit_nofile - FD_BUDGET_SPARE -
	             atomic_load_explicit(&global.fd_used, memory_order_relaxed));
}

/* Above tune.pool-high-fd-ratio: a new server connection first closes an
 * idle one; nothing is pooled. */
static inline int fd_budget_above_high(void)
{
	return atomic_load_explicit(&global.fd_used, memory_order_relaxed) >=
	       global.pool_high_count;
}

/* Above tune.pool-low-fd-ratio: a thread pools at most one connection per
 * server. */
static inline int fd_budget_above_low(void)
{
	return atomic_load_explicit(&global.fd_used, memory_order_relaxed) >=
	       global.pool_low_count;
}

/* What the idle pools give: <local> closes up to n idle connections of the
 * calling thread and returns how many it closed; <remote> asks the other
 * threads holding some to close theirs, and returns how many connections
 * they hold (0: nothing to wait for). */
struct fd_reclaimer {
	int (*local)(int n);
	int (*remote)(void);
};

void fd_budget_set_reclaimer(const struct fd_reclaimer *r);

/* Makes room for <n> descriptors by closing idle connections: the calling
 * thread's first; if it has too few, other threads are asked to close
 * theirs. Returns 1 if there is room now, 0 if the caller must wait for
 * other threads (they hold idle connections and were asked), -1 if no idle
 * connection is left anywhere. */
int  fd_budget_reclaim(int n);

#endif
