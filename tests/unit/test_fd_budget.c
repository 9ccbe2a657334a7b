/* The descriptor budget: maxconn, maxsock, ulimit-n and the pool marks as
 * HAProxy 2.6 derives them (each expected value below was read from
 * HAProxy 2.6's `show info` with the same limit and configuration), and
 * fd_budget_reclaim()'s answers with a fake idle pool. */
#include <sluice/core/fd_budget.h>
#include "t.h"

/* a configuration with <listen> listening sockets, the default stats
 * maxconn and no log socket, under a limit of <cur>/<max> */
static struct fd_limits limits(long cur, long max, int nbthread, int listen)
{
	struct fd_limits l = {
		.boot_cur = cur, .boot_max = max, .nbthread = nbthread, .listen_fds = listen,
		.stats_maxconn = 10, .pool_low_ratio = 20, .pool_high_ratio = 25,
	};
	return l;
}

static void test_derived(void)
{
	struct fd_limits l;

	/* nbthread 2, one bind line and one stats socket */
	l = limits(1000, 1000, 2, 2);
	fd_limits_compute(&l);
	CHECK(l.maxconn_derived && l.maxconn == 486 && l.maxsock == 1000 && l.nofile == 1000);
	l = limits(20000, 20000, 2, 2);
	fd_limits_compute(&l);
	CHECK(l.maxconn == 9986 && l.maxsock == 20000 && l.nofile == 20000);
	/* threads: three descriptors each */
	l = limits(1000, 1000, 1, 2);
	fd_limits_compute(&l);
	CHECK(l.maxconn == 487 && l.maxsock == 999);
	l = limits(1000, 1000, 4, 2);
	fd_limits_compute(&l);
	CHECK(l.maxconn == 483 && l.maxsock == 1000);
	/* two more bind lines */
	l = limits(1000, 1000, 2, 4);
	fd_limits_compute(&l);
	CHECK(l.maxconn == 485 && l.maxsock == 1000);
	/* only a stats socket, one thread */
	l = limits(1000, 1000, 1, 1);
	fd_limits_compute(&l);
	CHECK(l.maxconn == 488 && l.maxsock == 1000);
	/* stats maxconn 30 */
	l = limits(1000, 1000, 1, 1);
	l.stats_maxconn = 30;
	fd_limits_compute(&l);
	CHECK(l.maxconn == 478 && l.maxsock == 1000);
	/* the hard limit counts, not the soft one sluice may raise */
	l = limits(1000, 20000, 1, 1);
	fd_limits_compute(&l);
	CHECK(l.maxconn == 9988 && l.maxsock == 20000 && l.nofile == 20000);
	/* log sockets are counted too (HAProxy does not: sluice opens one
	 * per target) */
	l = limits(1000, 1000, 1, 1);
	l.log_fds = 2;
	fd_limits_compute(&l);
	CHECK(l.maxconn == 487 && l.maxsock == 1000);
}

static void test_limits_set(void)
{
	struct fd_limits l;

	/* fd-hard-limit caps what maxconn is derived from */
	l = limits(20000, 20000, 1, 1);
	l.fd_hard_limit = 500;
	fd_limits_compute(&l);
	CHECK(fd_limits_usable(&l) == 500);
	CHECK(l.maxconn == 238 && l.maxsock == 500 && l.nofile == 500);
	/* a fd-hard-limit above the system's changes nothing */
	l = limits(1000, 1000, 1, 1);
	l.fd_hard_limit = 50000;
	fd_limits_compute(&l);
	CHECK(l.maxconn == 488 && l.maxsock == 1000);
	/* maxconn set: maxsock and ulimit-n follow it, whatever the limit */
	l = limits(1000, 1000, 1, 1);
	l.maxconn = 100;
	fd_limits_compute(&l);
	CHECK(!l.maxconn_derived && l.maxconn == 100 && l.maxsock == 224 && l.nofile == 224);
	l = limits(1000, 1000, 1, 1);
	l.maxconn = 5000;
	fd_limits_compute(&l);
	CHECK(l.maxsock == 10024 && l.nofile == 10024);
	/* ulimit-n set: the soft limit wanted, maxconn still derived from
	 * the system's limit */
	l = limits(1000, 1000, 1, 1);
	l.ulimit_n = 700;
	fd_limits_compute(&l);
	CHECK(l.maxconn == 488 && l.maxsock == 1000 && l.nofile == 700);
	/* too few descriptors: maxconn does not go below 100 */
	l = limits(150, 150, 1, 1);
	fd_limits_compute(&l);
	CHECK(l.maxconn == 100 && l.maxsock == 224 && l.nofile == 224);
	/* no limit at all (RLIM_INFINITY reads as -1): the poller's cap */
	l = limits(-1, -1, 1, 1);
	fd_limits_compute(&l);
	CHECK(fd_limits_usable(&l) == FD_MAX_LIMIT);
	CHECK(l.maxconn == (FD_MAX_LIMIT - 24) / 2);
}

static void test_marks(void)
{
	struct fd_limits l = limits(1000, 1000, 2, 2);

	fd_limits_compute(&l);
	CHECK(l.pool_low_count == 200 && l.pool_high_count == 250);
	l = limits(1000, 1000, 1, 2);   /* maxsock 999: rounded up */
	fd_limits_compute(&l);
	CHECK(l.pool_low_count == 200 && l.pool_high_count == 250);
	l = limits(1000, 1000, 2, 2);
	l.pool_low_ratio = 0;
	l.pool_high_ratio = 100;
	fd_limits_compute(&l);
	CHECK(l.pool_low_count == 0 && l.pool_high_count == 1000);
}

/* ---- fd_budget_reclaim() with a fake pool ---- */

static int idle_here, idle_there, remote_calls;

static int fake_local(int n)
{
	int k = n < idle_here ? n : idle_here;

	idle_here -= k;
	atomic_fetch_sub(&global.fd_used, k);
	return k;
}

static int fake_remote(void)
{
	remote_calls++;
	return idle_there;
}

static void test_reclaim(void)
{
	static const struct fd_reclaimer r = { fake_local, fake_remote };

	global.maxsock = 1000;
	global.rlimit_nofile = 1000;
	global.pool_low_count = 200;
	global.pool_high_count = 250;
	fd_budget_set_reclaimer(&r);

	/* room left: fd_budget_room() counts the spare out */
	atomic_store(&global.fd_used, 1000 - FD_BUDGET_SPARE - 5);
	CHECK(fd_budget_room() == 5 && fd_budget_above_high() && fd_budget_above_low());

	/* short by 3, 10 idle here: 3 closed, nobody else asked */
	atomic_store(&global.fd_used, 1000 - FD_BUDGET_SPARE + 2);
	idle_here = 10, idle_there = 7, remote_calls = 0;
	CHECK(fd_budget_reclaim(1) == 1);
	CHECK(idle_here == 7 && remote_calls == 0 && fd_budget_room() == 1);

	/* EMFILE although the count says there is room: one is closed */
	CHECK(fd_budget_reclaim(1) == 1 && idle_here == 6 && remote_calls == 0);

	/* short by 5, 2 idle here: both closed, the others asked too */
	atomic_store(&global.fd_used, 1000 - FD_BUDGET_SPARE + 4);
	idle_here = 2, remote_calls = 0;
	CHECK(fd_budget_reclaim(1) == 1 && idle_here == 0 && remote_calls == 1);

	/* none here: wait for the others (0), or give up (-1) */
	CHECK(fd_budget_reclaim(1) == 0 && remote_calls == 2);
	idle_there = 0;
	CHECK(fd_budget_reclaim(1) == -1);

	/* below the marks */
	atomic_store(&global.fd_used, 199);
	CHECK(!fd_budget_above_low() && !fd_budget_above_high());
	atomic_store(&global.fd_used, 249);
	CHECK(fd_budget_above_low() && !fd_budget_above_high());
}

int main(void)
{
	test_derived();
	test_limits_set();
	test_marks();
	test_reclaim();
	return t_done("test_fd_budget");
}
