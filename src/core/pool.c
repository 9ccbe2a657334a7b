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
 * enough to pin hundreds of megabytes' worth of pages). So once the objects
 * in use have fallen well below their peak, every thread empties its own
 * caches down to a few objects (a task per thread, woken for it: caches are
 * thread-local), and the last one to finish calls malloc_trim(), which
 * hands every arena's free pages back. Nothing of this runs in steady
 * state: the decision is a few additions every 250 ms on thread 0.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/buf.h>
#include <sluice/core/global.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>

/* Free objects kept per pool and thread: about POOL_CACHE_BYTES worth,
 * between 16 and 4096 objects, so that a flood of connections does not
 * leave hundreds of megabytes cached once it is over (64 buffers, 4096
 * tasks). None under AddressSanitizer: a reused object would hide a
 * use-after-free from it. */
#if defined(__SANITIZE_ADDRESS__)
#define POOL_CACHE_BYTES 0
#else
#define POOL_CACHE_BYTES (1024 * 1024)
#endif

static int cache_bound(size_t size)
{
	size_t n;

	if (!POOL_CACHE_BYTES)
		return 0;
	n = POOL_CACHE_BYTES / (size ? size : 1);
	return n < 16 ? 16 : n > 4096 ? 4096 : (int)n;
}

struct free_obj {
	struct free_obj *next;
};

struct pool_cache {
	struct free_obj *head;
	int count;
	int64_t allocated;
	int64_t used;
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
		c->count--;
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
	if (c->count < cache_bound(p->size ? p->size : (size_t)global.bufsize)) {
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

/* A trim is considered once the pooled objects in use (a stream holds
 * about five: stream, task, transaction, two buffers; an idle server
 * connection one, its task) peaked at TRIM_MIN_PEAK or more and then fell
 * to half. While the load keeps going down, each further halving trims
 * again (down to TRIM_QUIET objects), so that what the last connections
 * leave is returned too; the descent is over once the load doubles again.
 * Each thread keeps TRIM_KEEP objects per pool; at most one trim every
 * TRIM_EVERY_MS. */
#define TRIM_MIN_PEAK  1024
#define TRIM_QUIET     64
#define TRIM_KEEP      16
#define TRIM_EVERY_MS  2000

static _Atomic(struct task *) trim_tasks[MAX_THREADS];
static _Atomic int trim_pending;     /* threads that have not trimmed yet */
static _Atomic uint64_t trims_done;  /* for `show pools` */

/* Gives the calling thread's cached objects beyond <keep> per pool back to
 * the allocator. */
static void cache_shrink(int keep)
{
	for (int i = 0; i <= POOL_MAX; i++) {
		struct pool_cache *c = &caches[i];

		while (c->count > keep) {
			struct free_obj *f = c->head;

			c->head = f->next;
			c->count--;
			c->allocated--;
			free(f);
		}
	}
}

static struct task *trim_run(struct task *t, void *ctx, unsigned int state)
{
	cache_shrink(TRIM_KEEP);
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

/* Pooled objects in use, all threads (racy sums: a heuristic). */
static int64_t objects_in_use(void)
{
	int nc = atomic_load(&nb_all_caches);
	int64_t used = 0;

	if (nc > MAX_THREADS)
		nc = MAX_THREADS;
	for (int t = 0; t < nc; t++)
		for (int i = 0; i <= POOL_MAX; i++)
			used += all_caches[t][i].used;
	return used;
}

void pool_maybe_trim(uint64_t now_ms)
{
	static int64_t peak;        /* objects in use: highest since the last trim */
	static int64_t trim_level;  /* objects in use at the last trim */
	static int descending;      /* the load went down since the last trim */
	static uint64_t last_ms;
	int64_t used = objects_in_use();

	if (used > peak)
		peak = used;
	if (descending && used > 2 * trim_level)
		descending = 0;
	if (now_ms - last_ms < TRIM_EVERY_MS || atomic_load(&trim_pending) || used * 2 > peak)
		return;
	if (peak < TRIM_MIN_PEAK && !(descending && peak > TRIM_QUIET))
		return;
	if (!trim_start())
		return;
	descending = 1;
	trim_level = peak = used;
	last_ms = now_ms;
}

uint64_t pool_trim_count(void)
{
	return atomic_load(&trims_done);
}
