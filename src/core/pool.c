/* Per-thread pools: buffers of tune.bufsize bytes, and fixed-size objects
 * (tasks, streams) declared with POOL_DECLARE.
 *
 * Each thread keeps a bounded cache of free objects per pool; allocation and
 * release touch only the calling thread's cache (thread-local, no lock, no
 * atomic), so a hot path never calls malloc once its thread's cache is
 * warm. An object released by another thread than the one that allocated it
 * simply joins the releasing thread's cache. Past the bound, objects go back
 * to the allocator.
 *
 * Counters are per thread too: <allocated> (obtained from the system, minus
 * returned) and <used> (handed out, minus released) may go negative on one
 * thread when objects migrate; only their sums mean something.
 *
 * Returning memory after a peak (pool_maybe_trim()): freeing objects is not
 * enough. glibc keeps freed chunks in its arenas, and a page goes back to
 * the system only when no live chunk touches it; the objects the caches
 * keep are scattered over the whole peak's heap (a 64-byte task per page is
 * enough to pin hundreds of megabytes' worth of pages). So once the caches
 * hold, unused for a whole second, as much as is in use, every thread
 * frees its own unneeded objects (a task per thread, woken for it: caches
 * are thread-local), and the last one to finish calls malloc_trim(), which
 * hands every arena's free pages back. In steady state this costs one
 * comparison per allocation (the cache's low-water mark) and a few
 * additions per second on thread 0.
 */
#include <limits.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/buf.h>
#include <sluice/core/global.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>

/* Free objects kept per pool and thread: at most POOL_CACHE_MAX. A cache
 * fills only from releases, so it holds what the load used before and no
 * longer uses: the swing of a steady load (a keep-alive connection gives
 * its buffers and transaction back between requests and takes them again),
 * or the rest of a peak until the trim below empties it. Smaller bounds
 * made the caches overflow under a flood's swings, and the allocator's
 * churn then spread the same objects over ever more pages (the flood's
 * RSS kept growing). The bound matters only if objects keep migrating
 * from one thread to another. None under AddressSanitizer: a reused
 * object would hide a use-after-free from it. */
#if defined(__SANITIZE_ADDRESS__)
#define POOL_CACHE_MAX 0
#else
#define POOL_CACHE_MAX 4096
#endif

struct free_obj {
	struct free_obj *next;
};

struct pool_cache {
	struct free_obj *head;
	int count;
	int64_t allocated;
	int64_t used;
	/* lowest <count> since the window began: that many objects were not
	 * needed during the window (see "returning memory" below). Lowered by
	 * the owner; thread 0 starts windows. Relaxed atomics: a value read
	 * or written across a window's start is as good as any. */
	_Atomic int count_min;
};

static struct pool *pools[POOL_MAX + 1];   /* the last one: buffers */
static int npools;
static __thread struct pool_cache caches[POOL_MAX + 1];

/* per-thread cache lists, so that `show pools` can sum every thread's
 * counters: registered on a thread's first use of any pool */
static struct pool_cache *all_caches[MAX_THREADS];
static _Atomic int nb_all_caches;
static __thread int caches_registered;

static struct pool buf_pool = { .name = "buffer", .size = 0, .id = POOL_MAX };

void pool_register(struct pool *p)
{
	if (npools < POOL_MAX) {
		p->id = npools;
		pools[npools++] = p;
	}
}

static struct pool_cache *cache_of(struct pool *p)
{
	if (!caches_registered) {
		int n = atomic_fetch_add(&nb_all_caches, 1);

		if (n < MAX_THREADS)
			all_caches[n] = caches;
		caches_registered = 1;
	}
	return &caches[p->id];
}

static void *cache_get(struct pool *p, size_t size)
{
	struct pool_cache *c = cache_of(p);
	struct free_obj *f = c->head;

	c->used++;
	if (f) {
		c->head = f->next;
		if (--c->count < atomic_load_explicit(&c->count_min, memory_order_relaxed))
			atomic_store_explicit(&c->count_min, c->count, memory_order_relaxed);
		return f;
	}
	c->allocated++;
	f = malloc(size);
	if (!f) {
		c->used--;
		c->allocated--;
	}
	return f;
}

static void cache_put(struct pool *p, void *obj)
{
	struct pool_cache *c = cache_of(p);
	struct free_obj *f = obj;

	c->used--;
	if (c->count < POOL_CACHE_MAX) {
		f->next = c->head;
		c->head = f;
		c->count++;
		return;
	}
	c->allocated--;
	free(obj);
}

void *pool_alloc(struct pool *p)
{
	if (p->id < 0)
		return malloc(p->size);   /* not registered: plain memory */
	return cache_get(p, p->size < sizeof(struct free_obj) ? sizeof(struct free_obj) : p->size);
}

void *pool_zalloc(struct pool *p)
{
	void *obj = pool_alloc(p);

	if (obj)
		memset(obj, 0, p->size);
	return obj;
}

void pool_free(struct pool *p, void *obj)
{
	if (!obj)
		return;
	if (p->id < 0) {
		free(obj);
		return;
	}
	cache_put(p, obj);
}

int buf_alloc(struct buffer *b)
{
	b->size = (size_t)global.bufsize;
	b->head = b->data = 0;
	buf_pool.size = b->size;
	b->area = cache_get(&buf_pool, b->size);
	return b->area ? 0 : -1;
}

void buf_release(struct buffer *b)
{
	if (!b->area)
		return;
	cache_put(&buf_pool, b->area);
	b->area = NULL;
	b->size = b->head = b->data = 0;
}

int pool_get_stats(struct pool_stats *out, int max)
{
	int n = 0, nc = atomic_load(&nb_all_caches);

	if (nc > MAX_THREADS)
		nc = MAX_THREADS;
	for (int i = 0; i <= npools && n < max; i++) {
		struct pool *p = i < npools ? pools[i] : &buf_pool;

		out[n].name = p->name;
		out[n].size = p->size;
		out[n].allocated = out[n].used = 0;
		for (int t = 0; t < nc; t++) {
			out[n].allocated += all_caches[t][p->id].allocated;
			out[n].used += all_caches[t][p->id].used;
		}
		n++;
	}
	return n;
}

/* ---- returning memory after a peak ---- */

/* Every TRIM_WINDOW_MS, thread 0 looks at what the caches did not need
 * during the window: the lowest count each cache reached. When freeing
 * those objects could return TRIM_MIN_BYTES or more, and at least the
 * bytes of the objects in use (an unneeded object smaller than a page
 * counts as a page: scattered, each one keeps its page resident), every
 * thread frees its own unneeded objects but TRIM_KEEP per pool (the
 * coldest ones: the list is LIFO), and the last one to finish calls
 * malloc_trim(). After a flood the caches are full and untouched: the
 * window after the load went down trims them. A load that swings by less
 * than half never trims (a trim costs the allocator's walk over its whole
 * heap, and the objects freed would be allocated again). */
#define TRIM_WINDOW_MS 1000
#define TRIM_MIN_BYTES (4 << 20)
#define TRIM_KEEP      16
#define TRIM_PAGE      4096

static _Atomic(struct task *) trim_tasks[MAX_THREADS];
static _Atomic int trim_pending;     /* threads that have not trimmed yet */
static _Atomic uint64_t trims_done;  /* for `show pools` */

static size_t obj_size(int id)
{
	if (id == POOL_MAX)
		return (size_t)global.bufsize;
	return id < npools ? pools[id]->size : 0;
}

/* Objects of cache <c> not needed since its window began. */
static int cache_unneeded(struct pool_cache *c)
{
	int low = atomic_load_explicit(&c->count_min, memory_order_relaxed);

	if (low > c->count)   /* racy read of another thread's count: fine */
		low = c->count;
	return low > TRIM_KEEP ? low - TRIM_KEEP : 0;
}

static void cache_new_window(struct pool_cache *c)
{
	atomic_store_explicit(&c->count_min, INT_MAX, memory_order_relaxed);
}

/* Frees the <n> coldest objects of the calling thread's cache <c>. */
static void cache_free_cold(struct pool_cache *c, int n)
{
	struct free_obj **link = &c->head, *f;

	for (int keep = c->count - n; keep > 0 && *link; keep--)
		link = &(*link)->next;
	f = *link;
	*link = NULL;
	while (f) {
		struct free_obj *next = f->next;

		free(f);
		c->count--;
		c->allocated--;
		f = next;
	}
}

void pool_release_thread(void)
{
	for (int i = 0; i <= POOL_MAX; i++)
		cache_free_cold(&caches[i], caches[i].count);
}

static struct task *trim_run(struct task *t, void *ctx, unsigned int state)
{
	for (int i = 0; i <= POOL_MAX; i++) {
		struct pool_cache *c = &caches[i];
		int n = cache_unneeded(c);

		if (n)
			cache_free_cold(c, n);
		cache_new_window(c);
	}
	/* the last thread to shrink its caches returns the pages of all */
	if (atomic_fetch_sub(&trim_pending, 1) == 1) {
		malloc_trim(0);
		atomic_fetch_add(&trims_done, 1);
	}
	return t;
}

int pool_init_thread(int tid)
{
	struct task *t = task_new(trim_run, NULL, tid, TC_BULK, "pool_trim");

	if (!t)
		return -1;
	atomic_store(&trim_tasks[tid], t);
	return 0;
}

/* Wakes every thread's trim task; returns 0 if none exists (no threads). */
static int trim_start(void)
{
	struct task *t[MAX_THREADS];
	int n = 0;

	for (int i = 0; i < MAX_THREADS; i++) {
		t[n] = atomic_load(&trim_tasks[i]);
		if (t[n])
			n++;
	}
	if (!n)
		return 0;
	atomic_store(&trim_pending, n);
	for (int i = 0; i < n; i++)
		task_wakeup(t[i], TASK_WOKEN_OTHER);
	return 1;
}

/* What freeing <n> objects of pool <id> could return: whole pages. */
static uint64_t obj_weight(int id, int64_t n)
{
	size_t sz = obj_size(id);

	return n > 0 ? (uint64_t)n * (sz > TRIM_PAGE ? sz : TRIM_PAGE) : 0;
}

void pool_maybe_trim(uint64_t now_ms)
{
	static uint64_t window_ms;
	int nc = atomic_load(&nb_all_caches);
	uint64_t unneeded = 0, used = 0;

	/* a thread leaves its loop only on hard stop: past that, its caches
	 * (thread-local storage) may be gone */
	if (now_ms - window_ms < TRIM_WINDOW_MS || atomic_load(&trim_pending) ||
	    atomic_load(&global.hard_stop) || global.no_memory_trimming)
		return;
	window_ms = now_ms;
	if (nc > MAX_THREADS)
		nc = MAX_THREADS;
	for (int t = 0; t < nc; t++) {
		for (int i = 0; i <= POOL_MAX; i++) {
			int64_t n = all_caches[t][i].used;

			unneeded += obj_weight(i, cache_unneeded(&all_caches[t][i]));
			used += n > 0 ? (uint64_t)n * obj_size(i) : 0;
		}
	}
	/* the trim tasks start their own new windows */
	if (unneeded >= TRIM_MIN_BYTES && unneeded >= used && trim_start())
		return;
	for (int t = 0; t < nc; t++)
		for (int i = 0; i <= POOL_MAX; i++)
			cache_new_window(&all_caches[t][i]);
}

uint64_t pool_trim_count(void)
{
	return atomic_load(&trims_done);
}
