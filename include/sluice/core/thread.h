/* Worker threads: start, stop, per-thread hooks. */
#ifndef SLUICE_CORE_THREAD_H
#define SLUICE_CORE_THREAD_H

/* A function each worker thread runs once in its own context before its loop
 * starts (binding its listeners, creating its housekeeping tasks). */
struct thread_init_hook {
	int (*fn)(int tid);
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
