/* Per-thread pools: buffers of tune.bufsize bytes, and fixed-size objects
 * (tasks, streams) declared with POOL_DECLARE.
 *
 * Each thread keeps a bounded cache of free objects per pool; allocation and
 * release touch only the calling thread's cache (thread-local, no lock, no
 * atomic), so a hot path never calls malloc once its thread's cache is
 * warm. An object released by another thread than the one that allocated it
 * simply joins the releasing thread's cache. Past the bound, objects go back
 * to the system, so memory returns after a peak.
 *
 * Counters are per thread too: <allocated> (obtained from the system, minus
 * returned) and <used> (handed out, minus released) may go negative on one
 * thread when objects migrate; only their sums mean something.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/buf.h>
#include <sluice/core/global.h>
#include <sluice/core/pool.h>

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

/* After a peak of connections (a flood) is over, gives the freed memory
 * back to the system: the caches are bounded, but the allocator keeps
 * freed blocks in its arenas until asked (malloc_trim). Called about every
 * 250 ms by thread 0 with the current number of connections; trims at most
 * every 2 s, and only once the count fell below half of its peak. */
void pool_maybe_trim(int actconn, uint64_t now_ms)
{
	static int peak;
	static uint64_t last_ms;

	if (actconn > peak)
		peak = actconn;
	if (peak < 256 || actconn * 2 > peak || now_ms - last_ms < 2000)
		return;
	malloc_trim(0);
	peak = actconn;
	last_ms = now_ms;
}
