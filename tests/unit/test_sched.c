/* Scheduler: timer ordering, bounded batches, run classes, deferred free of
 * killed tasks, instant wake-up elision, and a cross-thread stress test that
 * a remote wake-up is never lost (a lost one hangs the ping-pong, which the
 * deadline turns into a failure). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/poller.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include "t.h"

/* ---- single-thread checks, driving sched_run() by hand ---- */

static uint64_t fired_at[1000];
static int fired_order[1000];
static int nfired;

static struct task *record_fire(struct task *t, void *ctx, unsigned int state)
{
	int id = (int)(intptr_t)ctx;

	fired_order[nfired++] = id;
	fired_at[id] = th_ctx->now_ms;
	return t;
}

static void test_timer_order(void)
{
	struct thread_ctx *tc = &thread_ctx[0];
	struct task *tasks[1000];
	uint64_t base = tc->now_ms;

	nfired = 0;
	srand(42);
	for (int i = 0; i < 1000; i++) {
		tasks[i] = task_new(record_fire, (void *)(intptr_t)i, 0, TC_NORMAL, "t");
		task_set_expire(tasks[i], base + 1 + (uint64_t)(rand() % 5000));
	}
	/* re-schedule some, cancel some: the heap must stay ordered */
	for (int i = 0; i < 1000; i += 7)
		task_set_expire(tasks[i], base + 1 + (uint64_t)(rand() % 5000));
	for (int i = 3; i < 1000; i += 10)
		task_set_expire(tasks[i], 0);
	/* push some later and pull some earlier, as I/O does: a task must fire
	 * at its last expiry, never at a date it had before */
	for (int i = 1; i < 1000; i += 5)
		task_set_expire(tasks[i], tasks[i]->expire ? tasks[i]->expire + 1000 : 0);
	for (int i = 2; i < 1000; i += 9)
		if (tasks[i]->expire > base + 100)
			task_set_expire(tasks[i], tasks[i]->expire - 100);
	/* cancelled, then armed again later than the slot it left behind */
	for (int i = 13; i < 1000; i += 50)
		if (tasks[i]->expire) {
			uint64_t e = tasks[i]->expire;

			task_set_expire(tasks[i], 0);
			task_set_expire(tasks[i], e + 300);
		}
	uint64_t want[1000];

	for (int i = 0; i < 1000; i++)
		want[i] = tasks[i]->expire;

	CHECK(sched_next_expiry(tc) > base);
	/* advance time in steps; each step fires only what is due */
	for (uint64_t now = base; now <= base + 6401; now += 50) {
		tc->now_ms = now;
		while (sched_run(tc))
			;
	}
	CHECK(nfired == 900);
	for (int i = 1; i < nfired; i++) {
		int a = fired_order[i - 1], b = fired_order[i];

		/* each task fired once, no earlier than its expiry step */
		CHECK(tasks[a]->expire == 0 && tasks[b]->expire == 0);
		if (fired_at[a] > fired_at[b])
			CHECK(!"fired out of order");
	}
	for (int i = 0; i < 1000; i++)
		if (want[i] && (fired_at[i] < want[i] || fired_at[i] >= want[i] + 50))
			CHECK(!"fired before its expiry or a step late");
	for (int i = 3; i < 1000; i += 10)
		CHECK(fired_at[i] == 0);
	for (int i = 0; i < 1000; i++)
		task_destroy(tasks[i]);
	CHECK(sched_next_expiry(tc) == 0);
}

static int runs;

static struct task *count_run(struct task *t, void *ctx, unsigned int state)
{
	runs++;
	return t;
}

static struct task *rewake_self(struct task *t, void *ctx, unsigned int state)
{
	runs++;
	task_wakeup(t, TASK_WOKEN_OTHER);   /* must wait for the next batch */
	return t;
}

static void test_bounded_batches(void)
{
	struct thread_ctx *tc = &thread_ctx[0];
	struct task *tasks[1000];
	int more;

	global.runqueue_depth = 200;
	runs = 0;
	for (int i = 0; i < 1000; i++) {
		tasks[i] = task_new(count_run, NULL, 0, TC_NORMAL, "t");
		task_wakeup(tasks[i], TASK_WOKEN_OTHER);
	}
	more = sched_run(tc);
	CHECK(runs == 200);
	CHECK(more);
	while (sched_run(tc))
		;
	CHECK(runs == 1000);

	/* a task waking itself runs once per loop, not forever */
	struct task *selfw = task_new(rewake_self, NULL, 0, TC_NORMAL, "self");

	runs = 0;
	task_wakeup(selfw, TASK_WOKEN_OTHER);
	sched_run(tc);
	CHECK(runs == 1);
	sched_run(tc);
	CHECK(runs == 2);
	task_destroy(selfw);          /* queued: freed when dequeued */
	sched_run(tc);
	CHECK(runs == 2);
	for (int i = 0; i < 1000; i++)
		task_destroy(tasks[i]);
}

static char order_log[16];
static int order_len;

static struct task *log_class(struct task *t, void *ctx, unsigned int state)
{
	order_log[order_len++] = (char)(intptr_t)ctx;
	return t;
}

static void test_classes_and_instant(void)
{
	struct thread_ctx *tc = &thread_ctx[0];
	struct task *n = task_new(log_class, (void *)(intptr_t)'n', 0, TC_NORMAL, "n");
	struct task *b = task_new(log_class, (void *)(intptr_t)'b', 0, TC_BULK, "b");
	struct task *q = task_new(log_class, (void *)(intptr_t)'q', 0, TC_NORMAL, "q");
	uint64_t elided = tc->act.wake_elided;

	order_len = 0;
	task_wakeup(b, TASK_WOKEN_OTHER);
	task_wakeup(n, TASK_WOKEN_OTHER);
	task_instant_wakeup(q, TASK_WOKEN_QUEUE);   /* owner == us: elided, urgent */
	while (sched_run(tc))
		;
	sched_run(tc);
	order_log[order_len] = '\0';
	CHECK_STR(order_log, "qnb");
	CHECK(tc->act.wake_elided == elided + 1);

	/* a normal wake-up after an instant one goes back to its own class */
	order_len = 0;
	task_wakeup(n, TASK_WOKEN_OTHER);
	task_wakeup(q, TASK_WOKEN_OTHER);
	sched_run(tc);
	order_log[order_len] = '\0';
	CHECK_STR(order_log, "nq");
	task_destroy(n);
	task_destroy(b);
	task_destroy(q);
}

/* ---- cross-thread: no lost wake-up ---- */

#define PINGS_PER_PRODUCER 20000
#define PRODUCERS 3

static _Atomic uint64_t posted;     /* highest sequence number published */
static _Atomic uint64_t seen;       /* highest the consumer task observed */
static struct task *consumer_task;
static _Atomic int failed_deadline;

static struct task *consume(struct task *t, void *ctx, unsigned int state)
{
	uint64_t p = atomic_load(&posted);

	if (p > atomic_load(&seen))
		atomic_store(&seen, p);
	return t;
}

static void *consumer_main(void *arg)
{
	th_ctx = &thread_ctx[1];
	poller_loop();
	return NULL;
}

static pthread_mutex_t post_lock = PTHREAD_MUTEX_INITIALIZER;

/* Each ping publishes a sequence number, wakes the consumer, and waits until
 * the consumer has seen it: the consumer goes back to sleep between pings,
 * so every ping goes through the sleep/signal path. */
static void *producer_main(void *arg)
{
	for (int i = 0; i < PINGS_PER_PRODUCER && !atomic_load(&failed_deadline); i++) {
		uint64_t mine, deadline;

		pthread_mutex_lock(&post_lock);
		mine = atomic_fetch_add(&posted, 1) + 1;
		pthread_mutex_unlock(&post_lock);
		task_wakeup(consumer_task, TASK_WOKEN_MSG);
		deadline = clock_mono_ms() + 20000;
		while (atomic_load(&seen) < mine) {
			if (clock_mono_ms() > deadline) {
				atomic_store(&failed_deadline, 1);
				break;
			}
			if (i % 3 == 0)
				sched_yield();
		}
	}
	return NULL;
}

static void test_no_lost_wakeup(void)
{
	pthread_t cons, prod[PRODUCERS];
	uint64_t sent, sleeps;

	consumer_task = task_new(consume, NULL, 1, TC_NORMAL, "consumer");
	pthread_create(&cons, NULL, consumer_main, NULL);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_create(&prod[i], NULL, producer_main, NULL);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(prod[i], NULL);
	CHECK(!atomic_load(&failed_deadline));
	CHECK(atomic_load(&seen) == (uint64_t)PINGS_PER_PRODUCER * PRODUCERS);

	atomic_store(&global.hard_stop, 1);
	threads_wake_all();
	pthread_join(cons, NULL);

	/* signals went only to a sleeping consumer: never more than its sleeps */
	sent = thread_ctx[1].act.signals_rcvd;
	sleeps = thread_ctx[1].act.sleeps;
	CHECK(sleeps > 0);
	CHECK(sent <= sleeps + 1);
	printf("no-lost-wakeup: %d pings, consumer slept %llu times, %llu signals\n",
	       PINGS_PER_PRODUCER * PRODUCERS, (unsigned long long)sleeps,
	       (unsigned long long)sent);
}

int main(void)
{
	global.nbthread = 2;
	if (threads_prepare() < 0) {
		perror("threads_prepare");
		return 1;
	}
	th_ctx = &thread_ctx[0];
	th_ctx->now_ms = 1000;
	test_timer_order();
	test_bounded_batches();
	test_classes_and_instant();
	test_no_lost_wakeup();
	return t_done("test_sched");
}
