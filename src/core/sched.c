/* Per-thread scheduler: tasks, run classes, timers, cross-thread inbox.
 *
 * Ownership and locking rules
 * ---------------------------
 * - A task belongs to one thread (t->tid) for its whole life. Only the owner
 *   runs it, sets its expiry, moves it between its run lists and frees it.
 * - t->state is atomic: any thread may OR wake-up reasons into it. Whoever
 *   flips TASK_QUEUED from 0 to 1 queues the task: the owner into its own run
 *   list (no lock), another thread into the owner's inbox (inbox_lock).
 * - A remote waker must itself guarantee that the task is alive while it
 *   wakes it. The server queue does so by waking under the queue lock, which
 *   an owner takes before dropping its queue entry.
 * - task_destroy() of a queued task only marks it TASK_KILLED; the owner frees
 *   it when it dequeues it, so a task sitting in the inbox is never freed
 *   under a producer's feet.
 * - inbox[], inbox_len[] and `sleeping` are protected by inbox_lock (a
 *   struct sl_lock of kind "inbox": `show locks` tells how often producers
 *   and the owner meet on it). Draining is O(1) under the lock: each
 *   class's inbox is spliced onto its run list.
 * - In the opt-in shared-runqueue mode, shared_rq and the `run` links of the
 *   tasks in it are protected by shared_rq_lock (kind "shared_rq");
 *   shared_rq_for[] (its tasks per thread) is atomic, written under it and
 *   peeked without it.
 *
 * Sleep protocol (no lost wake-up, signals only to sleepers)
 * ----------------------------------------------------------
 * The owner, under inbox_lock, checks that its inbox is empty and sets
 * `sleeping`, then blocks in epoll_wait(). A producer, under the same lock,
 * appends to the inbox and, if `sleeping` is set, clears it and writes the
 * eventfd once after unlocking. Either the owner saw the task in its inbox
 * and did not sleep, or the producer saw `sleeping` and signalled. A
 * producer that holds other locks (the server queue's hand-over) may write
 * the eventfd after releasing those too (task_instant_wakeup_defer()): the
 * signal is owed from the moment it cleared `sleeping`, and only it may
 * send it, so it is late but never lost.
 *
 * Run classes and batches
 * -----------------------
 * Each loop runs at most tune.runqueue-depth tasks of the urgent class, as
 * many of the normal class, and a quarter of that of the bulk class; tasks
 * woken meanwhile go to the tail and wait for the next loop. Expired timers
 * are also handled in bounded batches. No loop iteration is unbounded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sluice/core/clock.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>

struct thread_ctx thread_ctx[MAX_THREADS];
static POOL_DECLARE(pool_task, "task", struct task)
__thread struct thread_ctx *th_ctx;
int sched_shared_runqueue;

/* Opt-in classic design (tune.queue.wakeup shared-runqueue): every remote
 * wake-up goes through one global list and one lock, which every thread
 * polls. Kept only to reproduce the difference on demand. */
static struct sl_lock shared_rq_lock = SL_LOCK_INIT(LK_SHARED_RQ, "shared_rq");
static struct list shared_rq = LIST_HEAD_INIT(shared_rq);
/* tasks of each thread in shared_rq: a thread with none neither takes the
 * lock to look nor stays awake for the others' (as the classic design's
 * mask of threads with active tasks) */
static _Atomic int shared_rq_for[MAX_THREADS];

#define TASK_URGENT 0x0008u   /* instant wake-up: next run goes to TC_URGENT */

/* ---- timer heap (owner only) ----
 * Slots hold their key inline so that sifting reads one array. A slot's key
 * is never later than its task's expire (0 = the timer was cancelled):
 * run_timers() re-files or drops a slot whose key came due early. */

static void heap_set(struct timer_heap *h, int i, struct timer_ent e)
{
	h->slots[i] = e;
	e.task->heap_idx = i;
}

static void heap_up(struct timer_heap *h, int i)
{
	struct timer_ent e = h->slots[i];

	while (i > 0) {
		int parent = (i - 1) / 2;

		if (h->slots[parent].key <= e.key)
			break;
		heap_set(h, i, h->slots[parent]);
		i = parent;
	}
	heap_set(h, i, e);
}

static void heap_down(struct timer_heap *h, int i)
{
	struct timer_ent e = h->slots[i];

	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = l;

		if (l >= h->count)
			break;
		if (r < h->count && h->slots[r].key < h->slots[l].key)
			m = r;
		if (e.key <= h->slots[m].key)
			break;
		heap_set(h, i, h->slots[m]);
		i = m;
	}
	heap_set(h, i, e);
}

static int heap_insert(struct timer_heap *h, struct task *t, uint64_t key)
{
	if (h->count == h->cap) {
		int ncap = h->cap ? h->cap * 2 : 256;
		struct timer_ent *n = realloc(h->slots, ncap * sizeof(*n));

		if (!n)
			return -1;
		h->slots = n;
		h->cap = ncap;
	}
	heap_set(h, h->count++, (struct timer_ent){ key, t });
	heap_up(h, t->heap_idx);
	return 0;
}

static void heap_remove(struct timer_heap *h, struct task *t)
{
	int i = t->heap_idx;

	if (i < 0)
		return;
	t->heap_idx = -1;
	h->count--;
	if (i != h->count) {
		heap_set(h, i, h->slots[h->count]);
		heap_down(h, i);
		heap_up(h, i);   /* no-op if heap_down moved it */
	}
}

/* ---- thread set-up ---- */

int sched_init_thread(struct thread_ctx *tc, int tid)
{
	memset(tc, 0, sizeof(*tc));
	tc->tid = tid;
	for (int c = 0; c < TC_COUNT; c++) {
		list_init(&tc->runq[c]);
		list_init(&tc->inbox[c]);
	}
	lock_init(&tc->inbox_lock, LK_INBOX, "inbox");
	tc->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (tc->evfd < 0)
		return -1;
	tc->now_ms = clock_mono_ms();
	return 0;
}

void sched_deinit_thread(struct thread_ctx *tc)
{
	if (tc->evfd >= 0)
		close(tc->evfd);
	tc->evfd = -1;
	free(tc->timers.slots);
	tc->timers.slots = NULL;
	tc->timers.count = tc->timers.cap = 0;
}

/* ---- tasks ---- */

struct task *task_new(task_fn fn, void *ctx, int tid, enum task_class klass,
                      const char *name)
{
	struct task *t = pool_zalloc(&pool_task);

	if (!t)
		return NULL;
	list_init(&t->run);
	t->tid = (uint8_t)tid;
	t->klass = (uint8_t)klass;
	t->heap_idx = -1;
	t->process = fn;
	t->ctx = ctx;
	t->name = name;
	return t;
}

void task_destroy(struct task *t)
{
	if (!t)
		return;
	heap_remove(&thread_ctx[t->tid].timers, t);
	if (atomic_load(&t->state) & TASK_QUEUED) {
		atomic_fetch_or(&t->state, TASK_KILLED);
		return;
	}
	pool_free(&pool_task, t);
}

void task_set_expire(struct task *t, uint64_t expire)
{
	struct timer_heap *h = &thread_ctx[t->tid].timers;

	t->expire = expire;
	if (!expire)
		return;                 /* the slot, if any, is dropped when due */
	if (t->heap_idx < 0) {
		if (heap_insert(h, t, expire) < 0)
			t->expire = 0;   /* out of memory: the task keeps no timer */
		return;
	}
	if (expire < h->slots[t->heap_idx].key) {
		h->slots[t->heap_idx].key = expire;
		heap_up(h, t->heap_idx);
	}
}

static void local_enqueue(struct thread_ctx *tc, struct task *t, int klass)
{
	list_append(&tc->runq[klass], &t->run);
	tc->runq_len[klass]++;
}

static void signal_owner(struct thread_ctx *owner)
{
	uint64_t one = 1;
	ssize_t ret = write(owner->evfd, &one, sizeof(one));

	(void)ret;   /* EAGAIN: counter saturated, the owner wakes anyway */
	if (th_ctx)
		th_ctx->act.signals_sent++;
}

/* Appends <t> to its owner's inbox (NULL: only announce news). Returns 1 if
 * the owner announced that it sleeps: the caller must then signal it (the
 * announcement is consumed here, so exactly one producer does). */
static int remote_enqueue_nosignal(struct task *t, struct thread_ctx *owner, int klass)
{
	int signal;

	lock_take(&owner->inbox_lock);
	if (t) {
		list_append(&owner->inbox[klass], &t->run);
		atomic_fetch_add_explicit(&owner->inbox_len[klass], 1, memory_order_relaxed);
	}
	signal = owner->sleeping;
	owner->sleeping = 0;
	lock_release(&owner->inbox_lock);
	return signal;
}

/* The same, and signals the owner only if it announced that it sleeps. */
static void remote_enqueue(struct task *t, struct thread_ctx *owner, int klass)
{
	if (remote_enqueue_nosignal(t, owner, klass))
		signal_owner(owner);
}

static int shared_enqueue_nosignal(struct task *t)
{
	lock_take(&shared_rq_lock);
	list_append(&shared_rq, &t->run);
	atomic_fetch_add(&shared_rq_for[t->tid], 1);
	lock_release(&shared_rq_lock);
	/* the classic design still has to wake a sleeping owner */
	return remote_enqueue_nosignal(NULL, &thread_ctx[t->tid], TC_URGENT);
}

void task_wakeup(struct task *t, unsigned int reason)
{
	unsigned int old = atomic_fetch_or(&t->state, reason | TASK_QUEUED);

	if (old & TASK_QUEUED)
		return;
	if (th_ctx && t->tid == th_ctx->tid) {
		local_enqueue(th_ctx, t, t->klass);
		th_ctx->act.wake_local++;
		return;
	}
	remote_enqueue(t, &thread_ctx[t->tid], t->klass);
	if (th_ctx)
		th_ctx->act.wake_remote++;
}

void task_instant_wakeup_defer(struct task *t, unsigned int reason, uint64_t *to_signal)
{
	unsigned int old = atomic_fetch_or(&t->state, reason | TASK_QUEUED | TASK_URGENT);
	int signal;

	if (old & TASK_QUEUED)
		return;
	if (th_ctx && t->tid == th_ctx->tid) {
		/* wake-up elision: the freeing thread owns the waiter */
		local_enqueue(th_ctx, t, TC_URGENT);
		th_ctx->act.wake_elided++;
		return;
	}
	if (th_ctx)
		th_ctx->act.wake_instant++;
	if (sched_shared_runqueue)
		signal = shared_enqueue_nosignal(t);
	else
		signal = remote_enqueue_nosignal(t, &thread_ctx[t->tid], TC_URGENT);
	if (signal)
		*to_signal |= 1ull << t->tid;
}

void task_instant_wakeup(struct task *t, unsigned int reason)
{
	uint64_t to_signal = 0;

	task_instant_wakeup_defer(t, reason, &to_signal);
	sched_signal_threads(to_signal);
}

void sched_signal_threads(uint64_t mask)
{
	while (mask) {
		int tid = __builtin_ctzll(mask);

		mask &= mask - 1;
		signal_owner(&thread_ctx[tid]);
	}
}

/* ---- running ---- */

void sched_drain_inbox(struct thread_ctx *tc)
{
	int any = 0;

	/* A stale zero only delays the drain: sched_prepare_sleep() looks
	 * again under the lock before the thread may sleep. */
	for (int c = 0; c < TC_COUNT; c++)
		any |= atomic_load_explicit(&tc->inbox_len[c], memory_order_relaxed);
	if (!any)
		return;
	lock_take(&tc->inbox_lock);
	for (int c = 0; c < TC_COUNT; c++) {
		list_splice_tail(&tc->runq[c], &tc->inbox[c]);
		tc->runq_len[c] += atomic_exchange_explicit(&tc->inbox_len[c], 0,
		                                            memory_order_relaxed);
	}
	lock_release(&tc->inbox_lock);
}

/* Classic mode: pick up to <budget> tasks of this thread from the shared run
 * queue. The scan is what makes the classic design expensive; it is bounded
 * by the budget plus the tasks of other threads it skips, capped as well. */
static void shared_rq_pull(struct thread_ctx *tc, int budget)
{
	struct list *pos, *tmp;
	int scanned = 0;

	if (!atomic_load(&shared_rq_for[tc->tid]))
		return;
	lock_take(&shared_rq_lock);
	list_for_each_safe(pos, tmp, &shared_rq) {
		struct task *t = list_elem(pos, struct task, run);

		if (++scanned > 4 * budget || !budget)
			break;
		if (t->tid != tc->tid)
			continue;
		list_del_init(&t->run);
		atomic_fetch_sub(&shared_rq_for[tc->tid], 1);
		local_enqueue(tc, t, TC_URGENT);
		budget--;
	}
	lock_release(&shared_rq_lock);
}

/* Fires due timers. A slot whose key came due before its task's expiry was
 * pushed back is re-filed under the new date; one whose timer was cancelled
 * is dropped. Each counts against the budget. */
static int run_timers(struct thread_ctx *tc, int budget)
{
	struct timer_heap *h = &tc->timers;

	while (h->count && budget--) {
		struct task *t = h->slots[0].task;

		if (h->slots[0].key > tc->now_ms)
			return 0;
		if (t->expire > tc->now_ms) {
			h->slots[0].key = t->expire;
			heap_down(h, 0);
			continue;
		}
		heap_remove(h, t);
		if (!t->expire)
			continue;
		t->expire = 0;
		tc->act.timers_fired++;
		task_wakeup(t, TASK_WOKEN_TIMER);
	}
	return h->count && h->slots[0].key <= tc->now_ms;
}

static void run_one(struct thread_ctx *tc, struct task *t)
{
	unsigned int state;

	if (atomic_load(&t->state) & TASK_KILLED) {
		pool_free(&pool_task, t);
		return;
	}
	state = atomic_exchange(&t->state, TASK_RUNNING);
	tc->current = t;
	tc->act.tasks_run++;
	t = t->process(t, t->ctx, state);
	tc->current = NULL;
	if (t)
		atomic_fetch_and(&t->state, ~TASK_RUNNING);
}

/* Runs at most <budget> tasks of class <c> among those queued when it
 * starts: a task woken meanwhile (even by itself) waits for the next loop,
 * so that I/O is polled between two runs of a busy task. */
static void run_class(struct thread_ctx *tc, int c, int budget)
{
	struct list batch = LIST_HEAD_INIT(batch);

	list_splice_tail(&batch, &tc->runq[c]);
	while (budget-- > 0 && !list_empty(&batch)) {
		struct task *t = list_elem(batch.next, struct task, run);

		list_del_init(&t->run);
		tc->runq_len[c]--;
		run_one(tc, t);
	}
	list_splice_head(&tc->runq[c], &batch);
}

int sched_run(struct thread_ctx *tc)
{
	int depth = global.runqueue_depth > 0 ? global.runqueue_depth : 200;
	int bulk = depth / 4 ? depth / 4 : 1;
	int more;

	tc->now_ns = 0;   /* a new loop date at the next sched_now_ns() */
	more = run_timers(tc, depth * 4);
	sched_drain_inbox(tc);
	if (sched_shared_runqueue)
		shared_rq_pull(tc, depth);
	run_class(tc, TC_URGENT, depth);
	run_class(tc, TC_NORMAL, depth);
	run_class(tc, TC_BULK, bulk);
	for (int c = 0; c < TC_COUNT; c++)
		more |= !list_empty(&tc->runq[c]);
	if (more)
		tc->act.budget_exhausted++;
	return more;
}

uint64_t sched_next_expiry(struct thread_ctx *tc)
{
	return tc->timers.count ? tc->timers.slots[0].key : 0;
}

int sched_prepare_sleep(struct thread_ctx *tc)
{
	int empty = 1;

	lock_take(&tc->inbox_lock);
	for (int c = 0; c < TC_COUNT; c++)
		empty &= list_empty(&tc->inbox[c]);
	if (empty)
		tc->sleeping = 1;
	lock_release(&tc->inbox_lock);
	if (empty && sched_shared_runqueue && atomic_load(&shared_rq_for[tc->tid])) {
		sched_woke(tc);
		return 0;
	}
	return empty;
}

void sched_woke(struct thread_ctx *tc)
{
	lock_take(&tc->inbox_lock);
	tc->sleeping = 0;
	lock_release(&tc->inbox_lock);
}
