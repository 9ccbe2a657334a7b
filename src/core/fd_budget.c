/* The descriptor budget (see fd_budget.h): maxconn, maxsock and ulimit-n at
 * start-up, by HAProxy 2.6's rules; the count of descriptors held at run
 * time, and the call into the idle pools when it runs short.
 *
 * Shared state: global.fd_used is atomic (relaxed: it is a count, nothing
 * is published through it). The reclaimer is set before the threads start
 * and read-only afterwards.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sluice/core/fd_budget.h>

static struct fd_reclaimer reclaimer;

/* ---- start-up arithmetic (pure) ---- */

int fd_limits_fixed(const struct fd_limits *l)
{
	return FD_RESERVED + l->listen_fds + l->log_fds + l->check_fds + l->stats_maxconn +
	       FD_PER_THREAD * l->nbthread;
}

long fd_limits_usable(const struct fd_limits *l)
{
	long lim = l->boot_cur > l->boot_max ? l->boot_cur : l->boot_max;

	if (lim < 0 || lim > FD_MAX_LIMIT)   /* RLIM_INFINITY reads as -1 */
		lim = FD_MAX_LIMIT;
	if (l->fd_hard_limit > 0 && lim > l->fd_hard_limit)
		lim = l->fd_hard_limit;
	return lim;
}

static int pool_count(int maxsock, int ratio)
{
	return (int)(((long long)maxsock * ratio + 99) / 100);
}

void fd_limits_compute(struct fd_limits *l)
{
	int fixed = fd_limits_fixed(l);

	l->maxconn_derived = !l->maxconn;
	if (l->maxconn_derived) {
		long remain = fd_limits_usable(l) - fixed;

		/* two descriptors per connection; a tight limit still gets
		 * HAProxy's default, and a warning when it is applied */
		l->maxconn = remain / 2 > FD_MIN_MAXCONN ? (int)(remain / 2) : FD_MIN_MAXCONN;
	}
	l->maxsock = fixed + 2 * l->maxconn;
	l->nofile = l->ulimit_n > 0 ? l->ulimit_n : l->maxsock;
	l->pool_low_count = pool_count(l->maxsock, l->pool_low_ratio);
	l->pool_high_count = pool_count(l->maxsock, l->pool_high_ratio);
}

/* ---- start-up: setting the limit ---- */

/* The soft limit sluice can reach on its own: the hard one, capped. */
static long reachable(const struct fd_limits *l)
{
	long max = l->boot_max < 0 || l->boot_max > FD_MAX_LIMIT ? FD_MAX_LIMIT : l->boot_max;

	if (l->fd_hard_limit > 0 && max > l->fd_hard_limit)
		max = l->fd_hard_limit;
	return max;
}

static int set_nofile(long cur, long max)
{
	struct rlimit rl = { .rlim_cur = (rlim_t)cur, .rlim_max = (rlim_t)max };

	return setrlimit(RLIMIT_NOFILE, &rl);
}

static long current_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return FD_MAX_LIMIT;
	return (long)rl.rlim_cur;
}

int fd_limits_apply(const struct fd_limits *l)
{
	long max = l->boot_max < 0 || l->boot_max > l->nofile ? l->boot_max : l->nofile;

	/* the hard limit is kept (or raised, as root), never lowered: the
	 * soft one is what bounds the process */
	if ((l->fd_hard_limit <= 0 || l->nofile <= l->fd_hard_limit) &&
	    set_nofile(l->nofile, max < 0 ? (long)RLIM_INFINITY : max) == 0) {
		global.rlimit_nofile = current_nofile();
		return 0;
	}
	if (global.strict_limits) {
		fprintf(stderr, "[ALERT] Cannot raise FD limit to %ld, limit is %ld.\n",
		        l->nofile, reachable(l));
		return -1;
	}
	set_nofile(reachable(l), l->boot_max < 0 ? (long)RLIM_INFINITY : l->boot_max);
	global.rlimit_nofile = current_nofile();
	if (!global.quiet)
		fprintf(stderr, "[WARNING] Cannot raise FD limit to %ld, limit is %ld.\n",
		        l->nofile, global.rlimit_nofile);
	if (l->maxsock > global.rlimit_nofile)
		fprintf(stderr, "[ALERT] FD limit (%ld) too low for maxconn=%d/maxsock=%d. "
		        "Please raise 'ulimit-n' to %d or more to avoid any trouble.\n",
		        global.rlimit_nofile, l->maxconn, l->maxsock, l->maxsock);
	return 0;
}

/* ---- run time ---- */

/* Descriptors open now, or -1 (no /proc). */
static int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;   /* the directory's own descriptor */
}

void fd_budget_start(int fallback)
{
	int n = count_open_fds();

	atomic_store(&global.fd_used, n > 0 ? n : fallback);
}

void fd_budget_set_reclaimer(const struct fd_reclaimer *r)
{
	reclaimer = *r;
}

int fd_budget_reclaim(int n)
{
	int freed = 0, held;

	if (!reclaimer.local)
		return -1;
	/* at least one: a caller that got EMFILE needs one whatever the count
	 * says (a library may hold descriptors sluice does not know of) */
	while (reclaimer.local(1) == 1) {
		freed++;
		if (fd_budget_room() >= n)
			return 1;
	}
	held = reclaimer.remote();
	if (freed)
		return 1;
	return held > 0 ? 0 : -1;
}
