/* Named locks with statistics: an uncontended acquisition is counted and
 * records no wait; a lock held by one thread while others ask for it is
 * counted as contended, with a wait close to the time it was held; the
 * lock's own counters agree with its kind's; try-lock counts only
 * successes; the sums cover every thread; reader-writer locks are counted
 * the same way. */
#include <pthread.h>
#include <unistd.h>
#include <sluice/core/clock.h>
#include <sluice/core/lock.h>
#include "t.h"

static struct totals {
	struct lock_kind_total k[LK_KINDS];
} before, after;

static void snap(struct totals *t)
{
	lock_stats_sum(t->k);
}

static uint64_t delta(enum lock_kind k, int field)
{
	const struct lock_kind_total *a = &after.k[k], *b = &before.k[k];

	switch (field) {
	case 0: return a->acquired - b->acquired;
	case 1: return a->contended - b->contended;
	case 2: return a->wait_ns - b->wait_ns;
	default: return a->max_wait_ns;
	}
}

static void test_uncontended(void)
{
	struct sl_lock l;

	lock_init(&l, LK_OTHER, "solo");
	snap(&before);
	for (int i = 0; i < 1000; i++) {
		lock_take(&l);
		lock_release(&l);
	}
	CHECK(lock_try(&l));
	lock_release(&l);
	snap(&after);
	CHECK(delta(LK_OTHER, 0) == 1001);
	CHECK(delta(LK_OTHER, 1) == 0);
	CHECK(delta(LK_OTHER, 2) == 0);
	CHECK(atomic_load(&l.contended) == 0 && atomic_load(&l.wait_ns) == 0);
	/* other kinds untouched */
	CHECK(after.k[LK_POOL].acquired == before.k[LK_POOL].acquired);
	lock_destroy(&l);
}

/* One thread holds the lock for HOLD_MS while NWAITERS others ask for it:
 * each of them waits, contended, about that long. */
#define NWAITERS 3
#define HOLD_MS  50

static struct sl_lock shared = SL_LOCK_INIT(LK_POOL, "shared");
static _Atomic int asking;

static void *waiter(void *arg)
{
	atomic_fetch_add(&asking, 1);
	lock_take(&shared);
	lock_release(&shared);
	return NULL;
}

static void test_contended(void)
{
	pthread_t th[NWAITERS];
	uint64_t t0;
	int held;

	snap(&before);
	lock_take(&shared);
	t0 = clock_mono_ns();
	for (int i = 0; i < NWAITERS; i++)
		pthread_create(&th[i], NULL, waiter, NULL);
	while (atomic_load(&asking) < NWAITERS)
		usleep(1000);
	/* the waiters are blocked (or about to be): they cannot get it */
	usleep(HOLD_MS * 1000);
	held = lock_try(&shared);   /* held by us: a normal mutex refuses */
	CHECK(!held);
	lock_release(&shared);
	for (int i = 0; i < NWAITERS; i++)
		pthread_join(th[i], NULL);
	snap(&after);

	CHECK(delta(LK_POOL, 0) == NWAITERS + 1);   /* ours + theirs */
	CHECK(delta(LK_POOL, 1) == NWAITERS);       /* all of theirs waited */
	/* each waited at least most of the hold, at most the whole test */
	CHECK(delta(LK_POOL, 2) >= (uint64_t)NWAITERS * (HOLD_MS - 10) * 1000000ull);
	CHECK(delta(LK_POOL, 2) <= (uint64_t)NWAITERS * (clock_mono_ns() - t0));
	CHECK(delta(LK_POOL, 3) >= (uint64_t)(HOLD_MS - 10) * 1000000ull);
	CHECK(atomic_load(&shared.contended) == NWAITERS);
	CHECK(atomic_load(&shared.wait_ns) == delta(LK_POOL, 2));
	printf("contended: %d waiters, %llu us waited in total, max %llu us\n", NWAITERS,
	       (unsigned long long)(delta(LK_POOL, 2) / 1000),
	       (unsigned long long)(delta(LK_POOL, 3) / 1000));
}

/* Many threads hammering one lock: every acquisition is counted once, on
 * one of the two paths, whatever the interleaving. */
#define NHAMMER  4
#define ROUNDS   100000

static struct sl_lock hammer = SL_LOCK_INIT(LK_OTHER, "hammer");
static uint64_t protected_counter;   /* under <hammer> */

static void *hammer_run(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		lock_take(&hammer);
		protected_counter++;
		lock_release(&hammer);
	}
	return NULL;
}

static void test_hammer(void)
{
	pthread_t th[NHAMMER];

	snap(&before);
	for (int i = 0; i < NHAMMER; i++)
		pthread_create(&th[i], NULL, hammer_run, NULL);
	for (int i = 0; i < NHAMMER; i++)
		pthread_join(th[i], NULL);
	snap(&after);
	CHECK(protected_counter == (uint64_t)NHAMMER * ROUNDS);
	CHECK(delta(LK_OTHER, 0) == (uint64_t)NHAMMER * ROUNDS);
	CHECK(delta(LK_OTHER, 1) == atomic_load(&hammer.contended));
	CHECK(delta(LK_OTHER, 1) <= delta(LK_OTHER, 0));
	printf("hammer: %d threads, %llu acquisitions, %llu contended (%.2f%%)\n", NHAMMER,
	       (unsigned long long)delta(LK_OTHER, 0), (unsigned long long)delta(LK_OTHER, 1),
	       100.0 * (double)delta(LK_OTHER, 1) / (double)delta(LK_OTHER, 0));
}

/* A reader-writer lock: readers share it without contention; a reader
 * that arrives while a writer holds it waits and is counted. */
static struct sl_rwlock rw;

static void *reader(void *arg)
{
	rwlock_read(&rw);
	rwlock_release(&rw);
	return NULL;
}

static void test_rwlock(void)
{
	pthread_t th;

	rwlock_init(&rw, LK_PATTERN, "rw", 1);
	snap(&before);
	rwlock_read(&rw);
	rwlock_read(&rw);          /* a second reader gets in at once */
	rwlock_release(&rw);
	rwlock_release(&rw);
	rwlock_write(&rw);
	pthread_create(&th, NULL, reader, NULL);
	usleep(HOLD_MS * 1000);
	rwlock_release(&rw);
	pthread_join(th, NULL);
	snap(&after);
	CHECK(delta(LK_PATTERN, 0) == 4);
	CHECK(delta(LK_PATTERN, 1) == 1);
	CHECK(delta(LK_PATTERN, 2) >= (uint64_t)(HOLD_MS - 10) * 1000000ull);
	CHECK(atomic_load(&rw.contended) == 1);
	rwlock_destroy(&rw);
}

static void test_names(void)
{
	CHECK_STR(lock_kind_name(LK_SRV_QUEUE), "srv_queue");
	CHECK_STR(lock_kind_name(LK_BE_QUEUE), "be_queue");
	CHECK_STR(lock_kind_name(LK_LB), "lb");
	CHECK_STR(lock_kind_name(LK_INBOX), "inbox");
	CHECK_STR(lock_kind_name(LK_SHARED_RQ), "shared_rq");
	CHECK_STR(lock_kind_name(LK_STREAM_LIST), "stream_list");
	CHECK_STR(lock_kind_name(LK_PATTERN), "pattern");
	CHECK_STR(lock_kind_name(LK_VARS), "vars");
	CHECK_STR(lock_kind_name(LK_KINDS), "?");
}

/* The held-lock notes the watchdog prints: pushed on take/try, removed on
 * release in any order. */
static void test_held_notes(void)
{
	struct sl_lock a, b, c;
	struct lock_thread_stats *st;

	lock_init(&a, LK_OTHER, "a");
	lock_init(&b, LK_OTHER, "b");
	lock_init(&c, LK_OTHER, "c");
	lock_take(&a);
	st = lock_my_stats;
	CHECK(st != NULL);
	CHECK(atomic_load(&st->nheld) == 1 && atomic_load(&st->held[0]) == &a);
	CHECK(lock_try(&b));
	lock_take(&c);
	CHECK(atomic_load(&st->nheld) == 3 && atomic_load(&st->held[2]) == &c);
	lock_release(&b);   /* out of order */
	CHECK(atomic_load(&st->nheld) == 2);
	CHECK(atomic_load(&st->held[0]) == &a && atomic_load(&st->held[1]) == &c);
	lock_release(&c);
	lock_release(&a);
	CHECK(atomic_load(&st->nheld) == 0);
	CHECK(atomic_load(&st->waiting) == NULL);
	lock_destroy(&a);
	lock_destroy(&b);
	lock_destroy(&c);
}

int main(void)
{
	test_names();
	test_held_notes();
	test_uncontended();
	test_contended();
	test_hammer();
	test_rwlock();
	return t_done("test_lock");
}
