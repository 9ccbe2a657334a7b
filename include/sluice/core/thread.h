/* Worker threads: start, stop, per-thread hooks. */
#ifndef SLUICE_CORE_THREAD_H
#define SLUICE_CORE_THREAD_H

/* Functions each worker thread runs in its own context: <fn> once before its
 * loop starts (binding its listeners, creating its housekeeping tasks),
 * <deinit> once after it left its loop, to give back what it kept for
 * itself in thread-local storage, which nothing can reach once the thread
 * is gone. Either may be NULL. The deinit hooks run in the reverse order of
 * the init ones; then the thread's pool caches are emptied (what the hooks
 * give back lands there first). */
struct thread_init_hook {
	int (*fn)(int tid);
	void (*deinit)(int tid);
	struct thread_init_hook *next;
};

void thread_register_init(struct thread_init_hook *h);

/* Creates the per-thread contexts (epoll, eventfd) for global.nbthread
 * threads. Returns 0 or -1. */
int threads_prepare(void);

/* Starts threads 1..n-1 and runs thread 0 in the caller; returns when all
 * threads have left their loops. */
void threads_run(void);

/* Asks every thread to leave its loop at once. Async-signal-safe. */
void threads_wake_all(void);

#endif
