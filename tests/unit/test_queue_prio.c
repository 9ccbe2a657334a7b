/* Priority-ordered queues: waiters are served by priority class (lower
 * first), then arrival date plus priority offset, then arrival; the tree
 * stays valid through random insertions and removals (single thread,
 * driving slots by hand); a waiter of a server in maintenance moves to the
 * backend queue with `option redispatch` and stays without it; then a
 * 4-thread stress with random priorities, server queues, aborts and moves:
 * no waiter lost (a deadline turns a lost one into a failure), maxconn
 * never exceeded, every queue valid and empty at the end. */
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

static struct proxy be;
static struct server srv[2];
static struct server *srv_ptrs[2];

static struct task *noop_run(struct task *t, void *ctx, unsigned int state)
{
	return t;
}

static void setup(int nsrv, int maxconn)
{
	memset(&be, 0, sizeof(be));
	memset(srv, 0, sizeof(srv));
	lock_init(&be.lb_lock, LK_LB, "be");
	queue_init(&be.queue);
	be.name = "be";
	be.nsrv = nsrv;
	be.srv = srv_ptrs;
	for (int i = 0; i < nsrv; i++) {
		queue_init(&srv[i].queue);
		queue_set_lock_name(&srv[i].queue, LK_SRV_QUEUE, i ? "s2" : "s1");
		srv[i].be = &be;
		srv[i].name = i ? "s2" : "s1";
		atomic_store(&srv[i].maxconn, maxconn);
		atomic_store(&srv[i].uweight, 1);
		be.srv[i] = &srv[i];
	}
}

/* The waiter among <p>[0..n) that was handed a slot and not yet seen. */
static int handed_one(struct pendconn *p, int n, char *seen)
{
	int found = -1;

	for (int i = 0; i < n; i++) {
		if (!seen[i] && !atomic_load(&p[i].q)) {
			CHECK(found < 0);   /* one slot, one waiter */
			found = i;
		}
	}
	return found;
}

static int served_before(const struct pendconn *a, const struct pendconn *b)
{
	if (a->prio_class != b->prio_class)
		return a->prio_class < b->prio_class;
	if (a->key_ms != b->key_ms)
		return a->key_ms < b->key_ms;
	return a->seq < b->seq;
}

/* Named cases: class beats arrival; a positive offset delays, a negative
 * one advances; equal keys keep arrival order. */
static void test_semantics(void)
{
	struct pendconn p[6];
	char seen[6] = { 0 };
	int order[6], n = 0;
	/* arrival order 0..5 */
	const int klass[6] = { 0, 0, 0, -1, 0, 5 };
	const int offset[6] = { 0, 1000, 0, 0, -1000, -100000 };
	const int expect[6] = { 3, 4, 0, 2, 1, 5 };

	setup(1, 1);
	CHECK(srv_take_slot(&srv[0]));
	for (int i = 0; i < 6; i++) {
		pendconn_init(&p[i], task_new(noop_run, NULL, 0, TC_NORMAL, "w"));
		p[i].prio_class = klass[i];
		p[i].prio_offset_ms = offset[i];
		th_ctx->now_ms++;   /* arrival dates are loop dates */
		CHECK(queue_add(&p[i], &be, NULL) == 0);
	}
	CHECK(queue_check(&be.queue) == 6);
	for (int i = 0; i < 6; i++) {
		int w;

		srv_release_slot(&srv[0]);
		w = handed_one(p, 6, seen);
		CHECK(w >= 0);
		if (w < 0)
			break;
		seen[w] = 1;
		order[n++] = w;
		CHECK(queue_remove(&p[w]) == &srv[0]);
		CHECK(p[w].left_from == &be.queue && p[w].slot_ns >= p[w].enq_ns);
	}
	for (int i = 0; i < n; i++)
		CHECK(order[i] == expect[i]);
	srv_release_slot(&srv[0]);
	CHECK(atomic_load(&srv[0].served) == 0);
	CHECK(queue_check(&be.queue) == 0);
	for (int i = 0; i < 6; i++)
		task_destroy(p[i].task);

	/* clamping to HAProxy's ranges */
	CHECK(queue_clamp_class(5000) == 2047 && queue_clamp_class(-5000) == -2047);
	CHECK(queue_clamp_offset(600000) == 524287 && queue_clamp_offset(-600000) == -524287);
	CHECK(queue_clamp_class(7) == 7 && queue_clamp_offset(-7) == -7);
}

/* Random classes and offsets, random removals, random slot releases: the
 * tree stays valid and every hand-over goes to the best waiter left. */
#define RN 2000

static void test_random_order(void)
{
	static struct pendconn p[RN];
	static char seen[RN], in[RN];
	int queued = 0, served = 0, removed = 0;

	setup(1, 1);
	srand(7);
	CHECK(srv_take_slot(&srv[0]));
	for (int i = 0; i < RN; i++)
		pendconn_init(&p[i], task_new(noop_run, NULL, 0, TC_NORMAL, "w"));
	for (int step = 0, next = 0; step < 4 * RN; step++) {
		int r = rand() % 10;

		if (r < 5 && next < RN) {
			p[next].prio_class = rand() % 2 ? 0 : rand() % 5 - 2;
			p[next].prio_offset_ms = rand() % 3 ? 0 : rand() % 2001 - 1000;
			if (rand() % 4 == 0)
				th_ctx->now_ms += (uint64_t)(rand() % 3);
			CHECK(queue_add(&p[next], &be, NULL) == 0);
			in[next++] = 1;
			queued++;
		} else if (r < 7 && queued) {
			/* a random waiter gives up */
			int k = rand() % next;

			if (in[k]) {
				CHECK(queue_remove(&p[k]) == NULL);
				in[k] = 0;
				seen[k] = 1;
				queued--;
				removed++;
			}
		} else if (queued) {
			int w, best = -1;

			for (int i = 0; i < next; i++)
				if (in[i] && (best < 0 || served_before(&p[i], &p[best])))
					best = i;
			srv_release_slot(&srv[0]);
			w = handed_one(p, next, seen);
			CHECK(w == best);
			if (w < 0)
				break;
			CHECK(queue_remove(&p[w]) == &srv[0]);
			seen[w] = 1;
			in[w] = 0;
			queued--;
			served++;
		}
		if (step % 97 == 0)
			CHECK(queue_check(&be.queue) == queued);
	}
	CHECK(queue_check(&be.queue) == queued);
	CHECK(served > RN / 4 && removed > RN / 10);
	printf("random order: %d served in order, %d removed, %d left\n", served, removed, queued);
	for (int i = 0; i < RN; i++) {
		if (in[i])
			queue_remove(&p[i]);
		task_destroy(p[i].task);
	}
	CHECK(queue_check(&be.queue) == 0);
}

/* A server going into maintenance: its waiters move to the backend queue
 * with `option redispatch` and keep their rank; without it they stay. */
static void test_redistribute(void)
{
	struct pendconn p[4];

	for (int redisp = 0; redisp < 2; redisp++) {
		setup(2, 1);
		be.options = redisp ? PX_O_REDISPATCH : 0;
		CHECK(srv_take_slot(&srv[0]) && srv_take_slot(&srv[1]));
		for (int i = 0; i < 4; i++) {
			pendconn_init(&p[i], task_new(noop_run, NULL, 0, TC_NORMAL, "w"));
			th_ctx->now_ms++;
			CHECK(queue_add(&p[i], &be, i < 3 ? &srv[0] : NULL) == 0);
		}
		CHECK(atomic_load(&srv[0].queue.len) == 3 && atomic_load(&be.queue.len) == 1);
		atomic_store(&srv[0].admin, SRV_ADMIN_MAINT);
		queue_redistribute(&srv[0]);
		if (!redisp) {
			CHECK(queue_check(&srv[0].queue) == 3);
			CHECK(queue_check(&be.queue) == 1);
		} else {
			CHECK(queue_check(&srv[0].queue) == 0);
			CHECK(queue_check(&be.queue) == 4);
			/* s2 frees its slot: the earliest arrival gets it */
			srv_release_slot(&srv[1]);
			CHECK(atomic_load(&p[0].q) == NULL && p[0].srv == &srv[1]);
			CHECK(p[0].left_from == &be.queue);
			CHECK(queue_remove(&p[0]) == &srv[1]);
			/* a late waiter of the server in maintenance moves too */
			{
				struct pendconn late;

				pendconn_init(&late, task_new(noop_run, NULL, 0, TC_NORMAL, "w"));
				CHECK(queue_add(&late, &be, &srv[0]) == 0);
				CHECK(atomic_load(&late.q) == &be.queue);
				CHECK(queue_remove(&late) == NULL);
				task_destroy(late.task);
			}
		}
		for (int i = 0; i < 4; i++) {
			struct server *s = queue_remove(&p[i]);

			if (s)
				srv_release_slot(s);
			task_destroy(p[i].task);
		}
		CHECK(queue_check(&be.queue) == 0 && queue_check(&srv[0].queue) == 0);
	}
}

/* ---- multi-thread stress ---- */

#define NTHREADS      4
#define WORKERS       64     /* per thread */
#define ITERATIONS    200
#define MAXCONN       3

static _Atomic int finished, over_limit, moves_done;
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

static struct worker workers[NTHREADS][WORKERS];

static unsigned int next_rnd(struct worker *w)
{
	w->rnd = w->rnd * 1103515245u + 12345u;
	return w->rnd >> 16;
}

static struct task *worker_run(struct task *t, void *ctx, unsigned int state)
{
	struct worker *w = ctx;

	for (;;) {
		switch (w->st) {
		case W_IDLE: {
			struct server *s;

			if (w->iter == ITERATIONS) {
				atomic_fetch_add(&finished, 1);
				w->st = W_DONE;
				return t;
			}
			s = &srv[next_rnd(w) & 1];
			if (srv_take_slot(s)) {
				w->held = s;
				atomic_fetch_add(&direct, 1);
				w->st = W_HOLD;
				w->hold_loops = 1 + (int)(next_rnd(w) & 3);
				break;
			}
			w->pend.prio_class = (int)(next_rnd(w) % 7) - 3;
			w->pend.prio_offset_ms = (int)(next_rnd(w) % 21) - 10;
			w->st = W_QUEUED;
			/* one in four waits for a given server (as balance source) */
			if (queue_add(&w->pend, &be, next_rnd(w) % 4 ? NULL : s) < 0)
				w->st = W_IDLE;
			break;
		}
		case W_QUEUED:
			if (atomic_load(&w->pend.q) == NULL) {
				task_set_expire(t, 0);
				w->held = queue_remove(&w->pend);
				atomic_fetch_add(&handed_over, 1);
				w->st = W_HOLD;
				w->hold_loops = 1;
				break;
			}
			if (next_rnd(w) % 5 == 0 && (state & TASK_WOKEN_TIMER)) {
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
			if (atomic_load(&w->held->served) > MAXCONN)
				atomic_store(&over_limit, 1);
			if (--w->hold_loops > 0) {
				task_wakeup(t, TASK_WOKEN_OTHER);
				return t;
			}
			/* now and then, server 1 blinks into maintenance */
			if (w->held == &srv[0] && next_rnd(w) % 50 == 0) {
				atomic_store(&srv[0].admin, SRV_ADMIN_MAINT);
				queue_redistribute(&srv[0]);
				atomic_store(&srv[0].admin, SRV_ADMIN_READY);
				queue_kick(&srv[0]);
				atomic_fetch_add(&moves_done, 1);
			}
			srv_release_slot(w->held);
			w->held = NULL;
			w->iter++;
			w->st = W_IDLE;
			task_wakeup(t, TASK_WOKEN_OTHER);
			return t;
		}
	}
}

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

static void test_stress(void)
{
	pthread_t wt;

	setup(2, MAXCONN);
	be.options = PX_O_REDISPATCH;
	global.nbthread = NTHREADS;
	if (threads_prepare() < 0) {
		perror("threads_prepare");
		CHECK(0);
		return;
	}
	thread_register_init(&workers_hook);
	pthread_create(&wt, NULL, watcher, NULL);
	threads_run();
	pthread_join(wt, NULL);

	CHECK(!atomic_load(&deadline_hit));
	CHECK(atomic_load(&finished) == NTHREADS * WORKERS);
	CHECK(!atomic_load(&over_limit));
	CHECK(atomic_load(&srv[0].served) == 0 && atomic_load(&srv[1].served) == 0);
	CHECK(queue_check(&be.queue) == 0);
	CHECK(queue_check(&srv[0].queue) == 0 && queue_check(&srv[1].queue) == 0);
	CHECK(atomic_load(&handed_over) > 1000);
	CHECK(atomic_load(&aborted) > 0);
	printf("priority stress: %llu direct, %llu handed over, %llu aborted, %d maint blinks\n",
	       (unsigned long long)direct, (unsigned long long)handed_over,
	       (unsigned long long)aborted, atomic_load(&moves_done));
}

int main(void)
{
	global.nbthread = 1;
	if (threads_prepare() < 0) {
		perror("threads_prepare");
		return 1;
	}
	test_semantics();
	test_random_order();
	test_redistribute();
	test_stress();
	return t_done("test_queue_prio");
}
