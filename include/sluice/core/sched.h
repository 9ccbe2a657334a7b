/* Per-thread scheduler: tasks, tasklets, run classes, timers, cross-thread
 * inbox. See src/core/sched.c for the concurrency rules.
 */
#ifndef SLUICE_CORE_SCHED_H
#define SLUICE_CORE_SCHED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sluice/core/clock.h>
#include <sluice/core/list.h>
#include <sluice/core/lock.h>
#include <sluice/core/global.h>

/* Task state bits (task->state, atomic). */
#define TASK_QUEUED        0x0001u  /* in a run list or in the owner's inbox */
#define TASK_RUNNING       0x0002u
#define TASK_KILLED        0x0004u  /* free it instead of running it */
#define TASK_WOKEN_IO      0x0100u
#define TASK_WOKEN_TIMER   0x0200u
#define TASK_WOKEN_MSG     0x0400u  /* another stream / thread has news */
#define TASK_WOKEN_QUEUE   0x0800u  /* a server slot was handed over */
#define TASK_WOKEN_OTHER   0x1000u
#define TASK_WOKEN_ANY     0xff00u

enum task_class {
	TC_URGENT = 0,   /* instant wake-ups, I/O completions */
	TC_NORMAL,       /* timers, ordinary wake-ups */
	TC_BULK,         /* background work: resume listeners, housekeeping */
	TC_COUNT
};

struct task;

/* Runs the task. Returns the task, or NULL if it freed itself. <state> holds
 * the wake-up reasons accumulated since the last run. */
typedef struct task *(*task_fn)(struct task *t, void *ctx, unsigned int state);

struct task {
	struct list run;          /* run list / inbox link; owner only, or inbox lock */
	_Atomic unsigned int state;
	uint8_t tid;              /* owner thread, fixed at creation */
	uint8_t klass;            /* enum task_class used on wake-up */
	int heap_idx;             /* timer heap slot, -1 if none; owner only */
	uint64_t expire;          /* ms, 0 = never; owner only. The heap slot's
	                           * key may be earlier (see task_set_expire) */
	task_fn process;
	void *ctx;
	const char *name;         /* for dumps */
};

/* Per-thread activity counters: thread-local, plain integers, read racily by
 * the CLI (values are monotonic and only displayed). */
struct activity {
	uint64_t loops;
	uint64_t tasks_run;
	uint64_t wake_local;      /* woken by the owner thread itself */
	uint64_t wake_remote;     /* woken by another thread (via the inbox) */
	uint64_t wake_elided;     /* queue hand-over done locally, no signal */
	uint64_t wake_instant;    /* queue hand-over to another thread's urgent list */
	uint64_t signals_sent;    /* eventfd writes to a sleeping thread */
	uint64_t signals_rcvd;
	uint64_t sleeps;
	uint64_t poll_events;
	uint64_t timers_fired;
	uint64_t accepts;
	uint64_t wdt_warnings;
	uint64_t budget_exhausted; /* loops that left work for the next one */
	uint64_t fd_trims;        /* idle server connections closed for descriptors */
	uint64_t fd_waits;        /* connects delayed until another thread closed some */
};

struct timer_ent {
	uint64_t key;             /* the date this slot is ordered by */
	struct task *task;
};

struct timer_heap {
	struct timer_ent *slots;
	int count;
	int cap;
};

struct thread_ctx {
	int tid;
	pthread_t pth;
	int epfd;                 /* this thread's epoll */
	int evfd;                 /* eventfd: inbox signal */
	uint64_t now_ms;          /* monotonic, refreshed each loop */
	uint64_t now_ns;          /* monotonic ns, read at the first sched_now_ns()
	                           * of the loop iteration, 0 before; owner only */
	struct list runq[TC_COUNT];
	int runq_len[TC_COUNT];
	struct timer_heap timers;
	struct task *current;     /* task being run, for dumps */

	/* inbox: remote wake-ups land here. Protected by inbox_lock. */
	struct sl_lock inbox_lock;
	struct list inbox[TC_COUNT];
	_Atomic int inbox_len[TC_COUNT]; /* written under inbox_lock, peeked without */
	int sleeping;             /* announced "going to sleep" (inbox_lock) */

	struct activity act;
	_Atomic uint64_t loop_seq; /* watchdog, grace periods: moves every loop */
	_Atomic int in_poll;       /* watchdog, grace periods: idle in epoll_wait */
	int wdt_stuck;
	void *wdt_timer;          /* timer_t */
	int conns;                /* connections owned (for show activity) */
	uint64_t fd_warn_ms;      /* last "no descriptor" warning (stream.c) */
	void *pools;              /* per-thread pool caches (pool.c) */
};

extern struct thread_ctx thread_ctx[MAX_THREADS];
extern __thread struct thread_ctx *th_ctx;

int  sched_init_thread(struct thread_ctx *tc, int tid);
void sched_deinit_thread(struct thread_ctx *tc);

struct task *task_new(task_fn fn, void *ctx, int tid, enum task_class klass,
                      const char *name);
/* Frees the task now, or when it is next dequeued if it is queued. Owner only. */
void task_destroy(struct task *t);

/* Wakes <t> with <reason>. From the owner: direct insertion into its run list.
 * From another thread: into the owner's inbox, with an eventfd signal only if
 * the owner announced that it sleeps. */
void task_wakeup(struct task *t, unsigned int reason);

/* Queue hand-over wake-up (DESIGN: "instant"): onto the owner's urgent list,
 * never a shared run queue; elided to a local insertion on the owner. */
void task_instant_wakeup(struct task *t, unsigned int reason);

/* The same, for a caller holding locks: an owner that must be signalled
 * (it announced sleep) gets its bit (1 << tid) set in *<to_signal> instead
 * of an eventfd write now. The caller passes the mask to
 * sched_signal_threads() once it has released its locks, so that no system
 * call is made under them. The task is already in the owner's inbox, and
 * the owner's sleep announcement consumed: the signal cannot be lost, only
 * sent a little later. */
void task_instant_wakeup_defer(struct task *t, unsigned int reason, uint64_t *to_signal);
void sched_signal_threads(uint64_t mask);

/* Sets the expiry (0 = none). Owner only. A later expiry (the usual case:
 * a timeout pushed back by I/O) only records the date; the heap slot keeps
 * its earlier key and is re-filed when that key comes due. An earlier one
 * moves the slot up at once. So the common call is O(1), and a task never
 * fires before its expiry. */
void task_set_expire(struct task *t, uint64_t expire);

/* Runs expired timers, then the run lists in bounded batches. Returns
 * non-zero if work remains for the next iteration. */
int  sched_run(struct thread_ctx *tc);

/* The loop date in ns: the clock is read at the first call of each loop
 * iteration (sched_run() forgets the date), and that date serves every
 * later call of the iteration. Queue waits and session times are measured
 * with it: at most one clock read per loop, none in a loop that measures
 * nothing, precise to the length of one iteration. Outside a thread's
 * loop, the clock. */
static inline uint64_t sched_now_ns(void)
{
	if (!th_ctx)
		return clock_mono_ns();
	if (!th_ctx->now_ns)
		th_ctx->now_ns = clock_mono_ns();
	return th_ctx->now_ns;
}

/* Earliest timer key of the thread (0 = none): a date at which the thread
 * must look at its timers, possibly before any of them is really due. */
uint64_t sched_next_expiry(struct thread_ctx *tc);

/* Sleep protocol: returns 1 if the thread may sleep (inbox empty, sleeping
 * announced), 0 if work arrived. sched_woke() ends the announcement. */
int  sched_prepare_sleep(struct thread_ctx *tc);
void sched_woke(struct thread_ctx *tc);
/* Moves inbox content to the run lists. */
void sched_drain_inbox(struct thread_ctx *tc);

/* Classic design for A/B measurement (tune.queue.wakeup shared-runqueue). */
extern int sched_shared_runqueue;

#endif
