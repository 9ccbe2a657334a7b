/* Server queue stress: worker tasks on 4 scheduler threads compete for the
 * slots of two servers with maxconn 3, queueing in the backend queue when
 * both are full, and releasing their slots from whichever thread they run
 * on; one in five waiters gives up while queued (sometimes after it was
 * already handed a slot). Checks: every worker finishes (no waiter lost, a
 * deadline turns a lost hand-over into a failure), a server never serves
 * more than its maxconn, and every slot and queue entry is returned. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>
#include "t.h"

#define NTHREADS      4
#define WORKERS       64     /* per thread */
#define ITERATIONS    300    /* slot acquisitions per worker */
#define MAXCONN       3

static struct proxy be;
static struct server srv[2];
static _Atomic int finished;
static _Atomic int over_limit;
static _Atomic int max_seen;
static _Atomic uint64_t handed_over, aborted, direct;

enum wstate { W_IDLE, W_QUEUED, W_HOLD, W_DONE };

struct worker {
	struct task *task;
	struct pendconn pend;
	enum wstate st;
	struct server *held;
	int iter;
	int hold_loops;
	unsigned int rnd;
};

static void check_limit(struct server *s)
{
	int cur = atomic_load(&s->served);
	int m = atomic_load(&max_seen);

	if (cur > MAXCONN)
		atomic_store(&over_limit, 1);
	while (cur > m && !atomic_compare_exchange_weak(&max_seen, &m, cur))
		;
}

static struct task *worker_run(struct task *t, void *ctx, unsigned int state)
{
	struct worker *w = ctx;

	for (;;) {
		switch (w->st) {
		case W_IDLE:
			if (w->iter == ITERATIONS) {
				atomic_fetch_add(&finished, 1);
				w->st = W_DONE;
				return t;
			}
			w->rnd = w->rnd * 1103515245u + 12345u;
			if (srv_take_slot(&srv[w->rnd >> 16 & 1])) {
				w->held = &srv[w->rnd >> 16 & 1];
				atomic_fetch_add(&direct, 1);
				w->st = W_HOLD;
				w->hold_loops = 1 + (int)(w->rnd >> 20 & 3);
				break;
			}
			w->st = W_QUEUED;
			queue_add(&w->pend, &be, NULL);
			break;
		case W_QUEUED:
			if (atomic_load(&w->pend.q) == NULL) {
				task_set_expire(t, 0);
				w->held = queue_remove(&w->pend);
				atomic_fetch_add(&handed_over, 1);
				w->st = W_HOLD;
				w->hold_loops = 1;
				break;
			}
			w->rnd = w->rnd * 1103515245u + 12345u;
			if ((w->rnd >> 16) % 5 == 0 && (state & TASK_WOKEN_TIMER)) {
				/* give up waiting, maybe just after a hand-over */
				struct server *s = queue_remove(&w->pend);

				if (s)
					srv_release_slot(s);
				task_set_expire(t, 0);
				atomic_fetch_add(&aborted, 1);
				w->iter++;
				w->st = W_IDLE;
				break;
			}
			task_set_expire(t, th_ctx->now_ms + 1);
			return t;
		case W_DONE:
			return t;
		case W_HOLD:
			check_limit(w->held);
			if (--w->hold_loops > 0) {
				task_wakeup(t, TASK_WOKEN_OTHER);
				return t;
			}
			srv_release_slot(w->held);
			w->held = NULL;
			w->iter++;
			w->st = W_IDLE;
			task_wakeup(t, TASK_WOKEN_OTHER);   /* next round in a later loop */
			return t;
		}
	}
}

static struct worker workers[NTHREADS][WORKERS];

static int start_workers(int tid)
{
	for (int i = 0; i < WORKERS; i++) {
		struct worker *w = &workers[tid][i];

		w->task = task_new(worker_run, w, tid, TC_NORMAL, "worker");
		if (!w->task)
			return -1;
		pendconn_init(&w->pend, w->task);
		w->rnd = (unsigned int)(tid * 1000 + i);
		task_wakeup(w->task, TASK_WOKEN_OTHER);
	}
	return 0;
}

static struct thread_init_hook workers_hook = { .fn = start_workers };

static _Atomic int deadline_hit;

static void *watcher(void *arg)
{
	uint64_t deadline = clock_mono_ms() + 60000;

	while (atomic_load(&finished) < NTHREADS * WORKERS) {
		if (clock_mono_ms() > deadline) {
			atomic_store(&deadline_hit, 1);
			break;
		}
		usleep(10000);
	}
	atomic_store(&global.hard_stop, 1);
	threads_wake_all();
	return NULL;
}

int main(void)
{
	pthread_t wt;

	global.nbthread = NTHREADS;
	lock_init(&be.lb_lock, LK_LB, "be");
	queue_init(&be.queue);
	be.name = "be";
	be.nsrv = 2;
	be.srv = calloc(2, sizeof(*be.srv));
	for (int i = 0; i < 2; i++) {
		queue_init(&srv[i].queue);
		srv[i].be = &be;
		srv[i].name = i ? "s2" : "s1";
		atomic_store(&srv[i].maxconn, MAXCONN);
		atomic_store(&srv[i].uweight, 1);
		be.srv[i] = &srv[i];
	}
	if (threads_prepare() < 0) {
		perror("threads_prepare");
		return 1;
	}
	thread_register_init(&workers_hook);
	pthread_create(&wt, NULL, watcher, NULL);
	threads_run();
	pthread_join(wt, NULL);

	CHECK(!atomic_load(&deadline_hit));
	CHECK(atomic_load(&finished) == NTHREADS * WORKERS);
	CHECK(!atomic_load(&over_limit));
	CHECK(atomic_load(&max_seen) <= MAXCONN);
	CHECK(atomic_load(&srv[0].served) == 0);
	CHECK(atomic_load(&srv[1].served) == 0);
	CHECK(atomic_load(&be.queue.len) == 0);
	CHECK(queue_check(&be.queue) == 0);
	CHECK(atomic_load(&handed_over) > 1000);   /* the queue path was exercised */
	CHECK(atomic_load(&aborted) > 0);
	printf("queue stress: %llu direct, %llu handed over, %llu aborted, max served %d\n",
	       (unsigned long long)direct, (unsigned long long)handed_over,
	       (unsigned long long)aborted, atomic_load(&max_seen));
	{
		uint64_t el = 0, in = 0;

		for (int i = 0; i < NTHREADS; i++) {
			el += thread_ctx[i].act.wake_elided;
			in += thread_ctx[i].act.wake_instant;
		}
		printf("queue stress: %llu elided wake-ups, %llu instant (cross-thread)\n",
		       (unsigned long long)el, (unsigned long long)in);
		CHECK(el > 0 && in > 0);
	}
	return t_done("test_queue");
}
