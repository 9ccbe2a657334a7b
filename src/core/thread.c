/* Worker threads. Thread 0 is the main thread; threads 1..n-1 are created
 * with every signal blocked, so that signals reach the main thread only. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sluice/core/global.h>
#include <sluice/core/poller.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/core/wdt.h>

static struct thread_init_hook *init_hooks;

void thread_register_init(struct thread_init_hook *h)
{
	h->next = init_hooks;
	init_hooks = h;
}

int threads_prepare(void)
{
	if (poller_init() < 0)
		return -1;
	for (int i = 0; i < global.nbthread; i++) {
		struct thread_ctx *tc = &thread_ctx[i];

		if (sched_init_thread(tc, i) < 0)
			return -1;
		tc->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (tc->epfd < 0)
			return -1;
	}
	th_ctx = &thread_ctx[0];
	return 0;
}

/* Runs the deinit hooks of <h> and of the hooks after it, in reverse order
 * (the init order is the list order). */
static void run_deinit_hooks(struct thread_init_hook *h, int tid)
{
	if (!h)
		return;
	run_deinit_hooks(h->next, tid);
	if (h->deinit)
		h->deinit(tid);
}

static void *thread_main(void *arg)
{
	struct thread_ctx *tc = arg;

	th_ctx = tc;
	if (wdt_init_thread() < 0)
		fprintf(stderr, "[WARNING] thread %d: cannot arm the watchdog.\n", tc->tid + 1);
	for (struct thread_init_hook *h = init_hooks; h; h = h->next) {
		if (h->fn && h->fn(tc->tid) < 0) {
			fprintf(stderr, "[ALERT] thread %d failed to initialise\n", tc->tid + 1);
			atomic_store(&global.hard_stop, 1);
			threads_wake_all();
			return NULL;
		}
	}
	poller_loop();
	run_deinit_hooks(init_hooks, tc->tid);
	pool_release_thread();
	wdt_deinit_thread();
	return NULL;
}

void threads_run(void)
{
	sigset_t all, old;

	/* known before any other thread runs: they may show it (show threads) */
	thread_ctx[0].pth = pthread_self();
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int i = 1; i < global.nbthread; i++)
		pthread_create(&thread_ctx[i].pth, NULL, thread_main, &thread_ctx[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	thread_main(&thread_ctx[0]);
	for (int i = 1; i < global.nbthread; i++)
		pthread_join(thread_ctx[i].pth, NULL);
}

void threads_wake_all(void)
{
	uint64_t one = 1;

	for (int i = 0; i < global.nbthread; i++) {
		ssize_t r = write(thread_ctx[i].evfd, &one, sizeof(one));

		(void)r;
	}
}
