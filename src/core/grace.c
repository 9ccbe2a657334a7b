/* Deferred freeing after a grace period: a quiescent-state scheme built
 * on the counters the watchdog already reads (see include/sluice/core/grace.h
 * for the reader's rule).
 *
 * The writer publishes a new object with an atomic exchange, then calls
 * grace_defer(), which notes every thread's loop counter (loop_seq). The
 * old object may be freed once each thread T is known to have left the
 * loop iteration it was in at that moment:
 *   - T's loop counter moved since it was noted: T ended that iteration;
 *   - or T is seen in epoll_wait (in_poll): no callback or task runs there;
 *   - or T is the thread that called grace_defer() (it was running the
 *     writer, not a reader) or the thread now checking (thread 1, which is
 *     running this check, not a reader).
 * Why this is enough: the exchange, the readers' loads of the pointer, the
 * in_poll stores and the loop_seq increments are all sequentially
 * consistent atomics (src/core/poller.c), so they fall in one total order.
 * A reader that loaded the old pointer did so before the exchange, hence
 * after its thread's last `in_poll = 0` and its last increment, and it is
 * done with the object before its next `in_poll = 1` or increment. A check
 * that sees either of those later stores therefore synchronizes with the
 * end of every such reader, and a value noted after the exchange cannot
 * predate that reader's iteration. Readers pay nothing: a plain load on
 * x86, and the counters exist for the watchdog anyway.
 *
 * Callbacks wait in one list (grace_lock, taken only by writers, the CLI,
 * and by the check). The check is a task of thread 1, woken by each
 * grace_defer() and every 10 ms while callbacks wait. A loop iteration is
 * bounded (the watchdog guarantees it), so the wait is a few milliseconds.
 */
#include <stdlib.h>
#include <stdatomic.h>
#include <sluice/core/grace.h>
#include <sluice/core/lock.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>

#define GRACE_RECHECK_MS 10

struct grace_item {
	struct grace_item *next;
	void (*fn)(void *);
	void *arg;
	int writer_tid;                 /* thread that called grace_defer() */
	uint64_t seq[MAX_THREADS];      /* each thread's loop_seq then */
};

static struct sl_lock grace_lock = SL_LOCK_INIT(LK_OTHER, "grace");
static struct grace_item *grace_list;      /* grace_lock */
static int grace_count;                    /* grace_lock */
static uint64_t grace_done;                /* grace_lock */
static struct task *_Atomic grace_task;    /* thread 1's, set once it runs */

/* Whether every thread has left the iteration it was in when <it> was
 * queued. <self> is the checking thread: it is running the check, not a
 * reader. */
static int grace_elapsed(const struct grace_item *it, int self)
{
	for (int i = 0; i < global.nbthread; i++) {
		struct thread_ctx *tc = &thread_ctx[i];

		if (i == self || i == it->writer_tid)
			continue;
		if (atomic_load(&tc->in_poll) || atomic_load(&tc->loop_seq) != it->seq[i])
			continue;
		return 0;
	}
	return 1;
}

/* Runs and frees the items of <list>, taken off grace_list already. Called
 * and returns with grace_lock held; the callbacks run without it. */
static void run_items(struct grace_item *list)
{
	struct grace_item *it;

	while ((it = list)) {
		list = it->next;
		grace_count--;
		grace_done++;
		lock_release(&grace_lock);
		it->fn(it->arg);
		free(it);
		lock_take(&grace_lock);
	}
}

int grace_reclaim(void)
{
	struct grace_item *todo, *ready = NULL, *wait = NULL, *it;
	int left;

	lock_take(&grace_lock);
	todo = grace_list;
	grace_list = NULL;
	lock_release(&grace_lock);
	while ((it = todo)) {
		todo = it->next;
		if (grace_elapsed(it, th_ctx->tid)) {
			it->next = ready;
			ready = it;
		} else {
			it->next = wait;
			wait = it;
		}
	}
	lock_take(&grace_lock);
	while ((it = wait)) {
		wait = it->next;
		it->next = grace_list;
		grace_list = it;
	}
	run_items(ready);
	left = grace_count;
	lock_release(&grace_lock);
	return left;
}

static struct task *grace_check(struct task *t, void *ctx, unsigned int state)
{
	task_set_expire(t, grace_reclaim() ? th_ctx->now_ms + GRACE_RECHECK_MS : 0);
	return t;
}

int grace_defer(void (*fn)(void *), void *arg)
{
	struct grace_item *it;
	struct task *t;

	if (!th_ctx) {
		fn(arg);   /* no worker thread runs: nobody can read it */
		return 0;
	}
	if (!(it = calloc(1, sizeof(*it))))
		return -1;
	it->fn = fn;
	it->arg = arg;
	it->writer_tid = th_ctx->tid;
	for (int i = 0; i < global.nbthread; i++)
		it->seq[i] = atomic_load(&thread_ctx[i].loop_seq);
	lock_take(&grace_lock);
	it->next = grace_list;
	grace_list = it;
	grace_count++;
	lock_release(&grace_lock);
	/* not created yet: thread 1 looks at the list once it is */
	if ((t = atomic_load(&grace_task)))
		task_wakeup(t, TASK_WOKEN_MSG);
	return 0;
}

void grace_flush(void)
{
	struct grace_item *all;

	lock_take(&grace_lock);
	all = grace_list;
	grace_list = NULL;
	run_items(all);
	lock_release(&grace_lock);
}

void grace_stats(int *pending, uint64_t *done)
{
	lock_take(&grace_lock);
	*pending = grace_count;
	*done = grace_done;
	lock_release(&grace_lock);
}

static int grace_init_thread(int tid)
{
	struct task *t;

	if (tid != 0)
		return 0;
	if (!(t = task_new(grace_check, NULL, 0, TC_BULK, "grace")))
		return -1;
	atomic_store(&grace_task, t);
	task_wakeup(t, TASK_WOKEN_MSG);   /* callbacks queued before it existed */
	return 0;
}

static struct thread_init_hook grace_hook = { .fn = grace_init_thread };

__attribute__((constructor)) static void grace_register(void)
{
	thread_register_init(&grace_hook);
}
