/* Named locks with statistics. See src/core/lock.c for the design and the
 * cost of the accounting.
 *
 * Every lock shared between threads is a struct sl_lock of one kind. Taking
 * it counts one acquisition for its kind on the calling thread; only when the
 * lock is already held (the try fails) are timestamps taken around the
 * blocking wait, which is then counted as a contended acquisition with its
 * wait time. `show locks` sums the per-thread counters by kind.
 */
#ifndef SLUICE_CORE_LOCK_H
#define SLUICE_CORE_LOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

enum lock_kind {
	LK_SRV_QUEUE = 0,   /* a server's queue (src/proxy/queue.c) */
	LK_BE_QUEUE,        /* a backend's queue (src/proxy/queue.c) */
	LK_LB,              /* a backend's balancer state (src/proxy/lb.c) */
	LK_INBOX,           /* a thread's wake-up inbox (src/core/sched.c) */
	LK_SHARED_RQ,       /* the opt-in shared run queue (src/core/sched.c) */
	LK_STREAM_LIST,     /* a thread's list of streams (src/proxy/stream.c) */
	LK_POOL,            /* shared pools */
	LK_PATTERN,         /* pattern lists and maps (sl_rwlock) */
	LK_VARS,            /* process-wide variables (sl_rwlock) */
	LK_SSL_SESS,        /* a shard of the TLS session cache (src/net/ssl_sess.c) */
	LK_SRV_STATE,       /* a backend's server state changes (src/proxy/srv_state.c) */
	LK_STKTABLE,        /* a shard of a stick table (src/proxy/stktable.c) */
	LK_CACHE,           /* a shard of an HTTP cache's index (src/http/cache_store.c) */
	LK_OTHER,
	LK_KINDS
};

struct sl_lock {
	pthread_mutex_t m;
	uint8_t kind;               /* enum lock_kind */
	const char *name;           /* owner, for displays; may be NULL */
	/* this lock's own contention, written by the thread that just got it
	 * after waiting (so under the lock), read racily by the CLI */
	_Atomic uint64_t contended;
	_Atomic uint64_t wait_ns;
};

#define SL_LOCK_INIT(k, n) { .m = PTHREAD_MUTEX_INITIALIZER, .kind = (k), .name = (n) }

/* Per-thread counters of one kind. Each thread writes only its own slot,
 * with relaxed loads and stores (plain moves on x86, no locked
 * instruction). Threads beyond the number of slots share the last one,
 * whose counts may then lose updates (never happens with sluice's at most
 * MAX_THREADS workers). */
struct lock_kind_stats {
	_Atomic uint64_t acquired;
	_Atomic uint64_t contended;
	_Atomic uint64_t wait_ns;
	_Atomic uint64_t max_wait_ns;
};

/* Locks a thread holds (innermost last) and the one it waits for, kept
 * for the watchdog's dump: written by the owning thread only, read racily
 * by the dumping thread. More than LOCK_HELD_MAX nested locks are counted
 * but not named (sluice never nests more than two). */
#define LOCK_HELD_MAX 4

struct lock_thread_stats {
	struct lock_kind_stats k[LK_KINDS];
	struct sl_lock *_Atomic held[LOCK_HELD_MAX];
	_Atomic int nheld;
	struct sl_lock *_Atomic waiting;
} __attribute__((aligned(64)));

extern __thread struct lock_thread_stats *lock_my_stats;
struct lock_thread_stats *lock_stats_attach(void);
/* The slot of worker thread <tid> (0-based), NULL if it took no lock yet. */
struct lock_thread_stats *lock_stats_of_thread(int tid);

static inline void lock_note_held(struct lock_thread_stats *st, struct sl_lock *l)
{
	int n = atomic_load_explicit(&st->nheld, memory_order_relaxed);

	if (n < LOCK_HELD_MAX)
		atomic_store_explicit(&st->held[n], l, memory_order_relaxed);
	atomic_store_explicit(&st->nheld, n + 1, memory_order_relaxed);
}

static inline void lock_note_released(struct sl_lock *l)
{
	struct lock_thread_stats *st = lock_my_stats;
	int n, i;

	if (!st)
		return;
	n = atomic_load_explicit(&st->nheld, memory_order_relaxed);
	if (n <= 0)
		return;
	i = (n < LOCK_HELD_MAX ? n : LOCK_HELD_MAX) - 1;
	for (; i >= 0; i--) {
		if (atomic_load_explicit(&st->held[i], memory_order_relaxed) != l)
			continue;
		for (; i + 1 < n && i + 1 < LOCK_HELD_MAX; i++)
			atomic_store_explicit(&st->held[i],
			                      atomic_load_explicit(&st->held[i + 1], memory_order_relaxed),
			                      memory_order_relaxed);
		break;
	}
	atomic_store_explicit(&st->nheld, n - 1, memory_order_relaxed);
}

/* Adds <v> to a counter of the calling thread's slot: single writer. */
static inline void lock_stat_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
	                      memory_order_relaxed);
}

void lock_init(struct sl_lock *l, enum lock_kind kind, const char *name);
void lock_destroy(struct sl_lock *l);
/* The contended path: waits for the lock and records the wait. */
void lock_take_slow(struct sl_lock *l);

static inline void lock_take(struct sl_lock *l)
{
	struct lock_thread_stats *st;

	if (__builtin_expect(pthread_mutex_trylock(&l->m) != 0, 0)) {
		lock_take_slow(l);
		return;
	}
	st = lock_my_stats;
	if (__builtin_expect(!st, 0))
		st = lock_stats_attach();
	lock_stat_add(&st->k[l->kind].acquired, 1);
	lock_note_held(st, l);
}

/* Returns 1 if the lock was taken (counted as an uncontended acquisition),
 * 0 if it is held elsewhere (nothing counted). */
static inline int lock_try(struct sl_lock *l)
{
	struct lock_thread_stats *st;

	if (pthread_mutex_trylock(&l->m) != 0)
		return 0;
	st = lock_my_stats;
	if (__builtin_expect(!st, 0))
		st = lock_stats_attach();
	lock_stat_add(&st->k[l->kind].acquired, 1);
	lock_note_held(st, l);
	return 1;
}

static inline void lock_release(struct sl_lock *l)
{
	lock_note_released(l);
	pthread_mutex_unlock(&l->m);
}

/* A reader-writer lock with the same accounting: both sides count as
 * acquisitions of its kind; a side that finds the lock unavailable waits
 * on the slow path and is counted as contended. */
struct sl_rwlock {
	pthread_rwlock_t rw;
	uint8_t kind;
	const char *name;
	_Atomic uint64_t contended;  /* written with atomic adds: readers are many */
	_Atomic uint64_t wait_ns;
};

/* <prefer_writers>: a waiting writer blocks new readers (glibc's
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: no recursive read lock). */
void rwlock_init(struct sl_rwlock *l, enum lock_kind kind, const char *name, int prefer_writers);
void rwlock_destroy(struct sl_rwlock *l);
void rwlock_take_slow(struct sl_rwlock *l, int write);

static inline void rwlock_count(const struct sl_rwlock *l)
{
	struct lock_thread_stats *st = lock_my_stats;

	if (__builtin_expect(!st, 0))
		st = lock_stats_attach();
	lock_stat_add(&st->k[l->kind].acquired, 1);
}

static inline void rwlock_read(struct sl_rwlock *l)
{
	if (__builtin_expect(pthread_rwlock_tryrdlock(&l->rw) != 0, 0)) {
		rwlock_take_slow(l, 0);
		return;
	}
	rwlock_count(l);
}

static inline void rwlock_write(struct sl_rwlock *l)
{
	if (__builtin_expect(pthread_rwlock_trywrlock(&l->rw) != 0, 0)) {
		rwlock_take_slow(l, 1);
		return;
	}
	rwlock_count(l);
}

static inline void rwlock_release(struct sl_rwlock *l)
{
	pthread_rwlock_unlock(&l->rw);
}

/* Totals of one kind over every thread (racy snapshot, display only). */
struct lock_kind_total {
	uint64_t acquired;
	uint64_t contended;
	uint64_t wait_ns;
	uint64_t max_wait_ns;
};

const char *lock_kind_name(int kind);
void lock_stats_sum(struct lock_kind_total out[LK_KINDS]);
/* Zeroes the counters of every thread (tests; racy while threads run). */
void lock_stats_reset(void);

#endif
