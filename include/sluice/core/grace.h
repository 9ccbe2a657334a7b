/* Deferred freeing after a grace period (src/core/grace.c).
 *
 * An object that worker threads read without a lock, through an atomic
 * pointer, is replaced by publishing a new one (atomic exchange) and
 * handing the old one to grace_defer(): it is freed once every thread has
 * been seen out of the loop iteration it was in at that moment (its loop
 * counter moved, or it was waiting in epoll_wait), so that no reader can
 * still hold it. The rule for readers: load the pointer with a sequentially
 * consistent atomic load (atomic_load(), a plain load on x86) and keep
 * nothing derived from it past the callback or task that loaded it.
 */
#ifndef SLUICE_CORE_GRACE_H
#define SLUICE_CORE_GRACE_H

#include <stdint.h>

/* Calls fn(arg) on thread 1 once every thread has left the loop iteration
 * it was in when this was called, a few milliseconds later at most while
 * the threads run normally. Called outside the worker threads (start-up,
 * exit), runs fn(arg) at once: no reader exists then. Call it after the
 * atomic exchange that unpublished <arg>. Returns 0, or -1 if out of memory
 * (then nothing is deferred and <arg> must be kept). */
int grace_defer(void (*fn)(void *), void *arg);

/* Runs the callbacks whose grace period is over, on the calling worker
 * thread (thread 1's task does it; tests call it directly). Returns the
 * number still waiting. */
int grace_reclaim(void);

/* Runs every callback still waiting. Only once the threads have stopped. */
void grace_flush(void);

/* Callbacks waiting for their grace period, and those run since start
 * (`show activity`). */
void grace_stats(int *pending, uint64_t *done);

#endif
