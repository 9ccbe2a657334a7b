/* Per-thread pools of fixed-size objects (tasks, streams...). See
 * src/core/pool.c. */
#ifndef SLUICE_CORE_POOL_H
#define SLUICE_CORE_POOL_H

#include <stddef.h>
#include <stdint.h>

#define POOL_MAX 16

struct pool {
	const char *name;
	size_t size;
	int id;                 /* index of the per-thread caches, from 0 */
};

/* Declares a pool of objects of <type>; it registers itself at start-up. */
#define POOL_DECLARE(var, pname, type) \
	struct pool var = { .name = (pname), .size = sizeof(type), .id = -1 }; \
	__attribute__((constructor)) static void var##_register(void) \
	{ pool_register(&var); }

void  pool_register(struct pool *p);
/* A zeroed object, from the calling thread's cache when it has one. */
void *pool_zalloc(struct pool *p);
/* The same without zeroing: for large objects whose users initialise what
 * they use (an HTTP transaction's header arrays and arenas). */
void *pool_alloc(struct pool *p);
/* Returns memory to the system once the caches hold more than the load
 * needs (after a peak): called about every 250 ms by one thread (see
 * pool.c). */
void pool_maybe_trim(uint64_t now_ms);
/* Creates the calling thread's trim task (a thread init hook). 0 or -1. */
int  pool_init_thread(int tid);
/* Trims done so far (show pools). */
uint64_t pool_trim_count(void);
/* Back to the calling thread's cache (or to the allocator past its bound). */
void  pool_free(struct pool *p, void *obj);
/* Frees every object of the calling thread's caches: a thread that leaves
 * its loop for good calls it last (its thread-local caches are unreachable
 * once it exits). */
void  pool_release_thread(void);

/* Counters for `show pools`: objects obtained from the system and objects
 * in use, summed over threads (racy reads, display only). */
struct pool_stats {
	const char *name;
	size_t size;
	int64_t allocated;
	int64_t used;
};
int pool_get_stats(struct pool_stats *out, int max);

#endif
