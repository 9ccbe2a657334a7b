/* show threads: one block per thread, in HAProxy 2.6's shape (a line
 * starting with "* Thread N :" for the thread running the command, "  Thread
 * N :" for the others) with sluice's own fields, documented in
 * doc/management.md.
 *
 * Every figure is a racy read of the owner thread's state (plain counters
 * and queue lengths that only the owner writes, or atomics), for display:
 * nothing here writes to another thread or follows a pointer it owns (the
 * task a thread is running may be freed at any time, so only whether it
 * runs one is shown). CPU time comes from the thread's CPU clock.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>
#include <sluice/mgmt/cli.h>

static int cli_show_threads(char **, int, struct cli_out *, int);

static const struct cli_kw threads_kws[] = {
	{ { "show", "threads" }, CLI_LEVEL_USER, cli_show_threads,
	  "show threads                            : show some threads debugging information" },
	{ { NULL } }
};
CLI_REGISTER(threads_kws)

static unsigned long long thread_cpu_ns(pthread_t pth)
{
	clockid_t cid;
	struct timespec ts;

	if (pthread_getcpuclockid(pth, &cid) != 0 || clock_gettime(cid, &ts) != 0)
		return 0;
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int cli_show_threads(char **args, int nargs, struct cli_out *out, int level)
{
	int me = th_ctx ? th_ctx->tid : -1;

	for (int i = 0; i < global.nbthread; i++) {
		const struct thread_ctx *tc = &thread_ctx[i];
		int rq = 0, inbox = 0, idle = atomic_load(&tc->in_poll);

		for (int k = 0; k < TC_COUNT; k++) {
			rq += *(const volatile int *)&tc->runq_len[k];
			inbox += atomic_load(&tc->inbox_len[k]);
		}
		cli_printf(out, "%c Thread %d : id=%#lx act=%d wq=%d rq=%d inbox=%d idle=%d\n",
		           i == me ? '*' : ' ', i + 1, (unsigned long)tc->pth,
		           !idle || rq || inbox, *(const volatile int *)&tc->timers.count, rq,
		           inbox, idle);
		cli_printf(out, "      %d/%d    stuck=%d conns=%d loops=%llu tasks_run=%llu\n",
		           i + 1, global.nbthread, *(const volatile int *)&tc->wdt_stuck,
		           *(const volatile int *)&tc->conns,
		           (unsigned long long)*(const volatile uint64_t *)&tc->act.loops,
		           (unsigned long long)*(const volatile uint64_t *)&tc->act.tasks_run);
		cli_printf(out, "             cpu_ns: now=%llu\n", thread_cpu_ns(tc->pth));
		cli_printf(out, "             curr_task=%s\n",
		           i == me ? "cli" : idle ? "0" : "running");
	}
	return 0;
}
