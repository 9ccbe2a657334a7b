/* The HTTP cache's store: objects shared by every thread, a sharded index,
 * a byte budget, LRU eviction. See include/sluice/http/cache.h for the life
 * of an object.
 *
 * Concurrency.
 *  - The index is 2^shard_bits shards (the top bits of the primary hash),
 *    each with its own lock (kind `cache` in `show locks`), bucket array,
 *    LRU list (head: least recently used) and count. All the variants of a
 *    key (secondary keys, process-vary) fall in the same bucket, so counting
 *    them walks one chain. Under a shard lock: finding, linking, unlinking,
 *    moving to the LRU tail, taking a reference: O(chain) work, a chain
 *    holding about one key (buckets are sized for the store's capacity).
 *  - An object is written by one thread and is in no index while it is
 *    written: nobody else can see it. cache_obj_commit() links it; from then
 *    on its bytes never change, so readers copy them out with no lock.
 *  - refs: the index holds one reference while the object is linked, each
 *    reader one more (taken under the shard lock, dropped with an atomic
 *    decrement). The one that drops the last frees the object.
 *  - Bytes: `used` counts the memory every object holds (header, key,
 *    chunks), reserved with a compare-and-swap before each allocation, so
 *    that the store never holds more than `max` bytes whatever the threads
 *    do. With no room, a writer evicts: the least recently used object
 *    among the heads of up to EVICT_SAMPLE shards (one lock at a time, never
 *    two), at most EVICT_TRIES times per reservation, then gives up (its
 *    object is aborted: the response still goes to the client, uncached).
 *    An evicted object still being read gives its bytes back when its last
 *    reader is done.
 *  - Expiry: an expired object is unlinked by the lookup that meets it, and
 *    cache_store_purge() (a periodic task) looks at a bounded number of
 *    objects per call.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sluice/core/lock.h>
#include <sluice/http/cache.h>

#define CHUNK_MIN     1024u
#define CHUNK_MAX     32768u
#define EVICT_SAMPLE  8
#define EVICT_TRIES   16

struct cache_chunk {
	struct cache_chunk *next;
	size_t len;                  /* bytes used */
	size_t cap;                  /* bytes of data[] */
	char data[];
};

struct cache_obj {
	/* shard lock */
	struct cache_obj *hnext;
	struct cache_obj *lru_prev, *lru_next;
	int linked;
	uint64_t stamp_us;           /* last use, for the LRU choice across shards */
	/* set before commit, then read-only */
	uint64_t hash, secondary;
	uint32_t expire_s;
	uint64_t size;               /* bytes appended */
	uint64_t reserved;           /* bytes accounted in the store's `used` */
	struct cache_chunk *first, *last;
	struct cache_chunk **last_link; /* the pointer to <last> (first or a next) */
	uint64_t meta[CACHE_OBJ_META];
	_Atomic uint32_t refs;
	size_t klen;
	char key[];
};

struct cache_shard {
	struct sl_lock lock;
	struct cache_obj **buckets;  /* nbuckets chains */
	struct cache_obj *lru_head, *lru_tail;
	unsigned int count;
	unsigned int purge_pos;      /* not used across calls yet */
} __attribute__((aligned(64)));

struct cache_store {
	uint64_t max;
	_Atomic uint64_t used;
	_Atomic uint64_t objects;
	_Atomic uint64_t evictions;
	_Atomic uint64_t store_fails;
	_Atomic unsigned int evict_cursor;
	unsigned int purge_cursor;   /* the purge task's thread only */
	unsigned int shard_bits;
	unsigned int nbuckets;       /* per shard, a power of two */
	struct cache_shard *shards;
};

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static unsigned int nshards(const struct cache_store *cs)
{
	return 1u << cs->shard_bits;
}

static struct cache_shard *shard_of(struct cache_store *cs, uint64_t hash)
{
	return &cs->shards[cs->shard_bits ? hash >> (64 - cs->shard_bits) : 0];
}

static struct cache_obj **bucket_of(struct cache_store *cs, struct cache_shard *sh, uint64_t hash)
{
	return &sh->buckets[hash & (cs->nbuckets - 1)];
}

struct cache_store *cache_store_new(uint64_t max_bytes, unsigned int shard_bits)
{
	struct cache_store *cs = calloc(1, sizeof(*cs));
	uint64_t want;

	if (!cs)
		return NULL;
	if (shard_bits > 8)
		shard_bits = 8;
	cs->max = max_bytes;
	cs->shard_bits = shard_bits;
	/* about one object of 1 kB or more per chain when the store is full */
	want = max_bytes / 1024 / nshards(cs);
	cs->nbuckets = 16;
	while (cs->nbuckets < want && cs->nbuckets < 65536)
		cs->nbuckets <<= 1;
	cs->shards = aligned_alloc(64, sizeof(*cs->shards) * nshards(cs));
	if (!cs->shards) {
		free(cs);
		return NULL;
	}
	memset(cs->shards, 0, sizeof(*cs->shards) * nshards(cs));
	for (unsigned int i = 0; i < nshards(cs); i++) {
		struct cache_shard *sh = &cs->shards[i];

		lock_init(&sh->lock, LK_CACHE, "cache");
		sh->buckets = calloc(cs->nbuckets, sizeof(*sh->buckets));
		if (!sh->buckets) {
			cache_store_free(cs);
			return NULL;
		}
	}
	return cs;
}

static void obj_free(struct cache_store *cs, struct cache_obj *o)
{
	struct cache_chunk *c = o->first;

	while (c) {
		struct cache_chunk *n = c->next;

		free(c);
		c = n;
	}
	atomic_fetch_sub(&cs->used, o->reserved);
	free(o);
}

void cache_store_free(struct cache_store *cs)
{
	if (!cs)
		return;
	for (unsigned int i = 0; cs->shards && i < nshards(cs); i++) {
		struct cache_shard *sh = &cs->shards[i];

		for (struct cache_obj *o = sh->lru_head; o;) {
			struct cache_obj *n = o->lru_next;

			obj_free(cs, o);
			o = n;
		}
		free(sh->buckets);
		lock_destroy(&sh->lock);
	}
	free(cs->shards);
	free(cs);
}

/* ---- index, under the shard lock ---- */

static void lru_unlink(struct cache_shard *sh, struct cache_obj *o)
{
	if (o->lru_prev)
		o->lru_prev->lru_next = o->lru_next;
	else
		sh->lru_head = o->lru_next;
	if (o->lru_next)
		o->lru_next->lru_prev = o->lru_prev;
	else
		sh->lru_tail = o->lru_prev;
	o->lru_prev = o->lru_next = NULL;
}

static void lru_append(struct cache_shard *sh, struct cache_obj *o)
{
	o->lru_next = NULL;
	o->lru_prev = sh->lru_tail;
	if (sh->lru_tail)
		sh->lru_tail->lru_next = o;
	else
		sh->lru_head = o;
	sh->lru_tail = o;
}

/* Takes <o> out of the index. Returns 1 when the index's reference was the
 * last one: the caller frees <o> once the lock is released. */
static int index_unlink(struct cache_store *cs, struct cache_shard *sh, struct cache_obj *o)
{
	struct cache_obj **pp = bucket_of(cs, sh, o->hash);

	while (*pp && *pp != o)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = o->hnext;
	o->hnext = NULL;
	lru_unlink(sh, o);
	o->linked = 0;
	sh->count--;
	atomic_fetch_sub(&cs->objects, 1);
	return atomic_fetch_sub(&o->refs, 1) == 1;
}

static int same_key(const struct cache_obj *o, uint64_t hash, const void *key, size_t klen)
{
	return o->hash == hash && o->klen == klen && memcmp(o->key, key, klen) == 0;
}

/* ---- memory ---- */

/* Evicts one object: the least recently used among the LRU heads of a few
 * shards. Returns 1 if one left the index, 0 if the store is empty. */
static int evict_one(struct cache_store *cs)
{
	unsigned int n = nshards(cs), start, best = n, looked = 0;
	uint64_t best_stamp = UINT64_MAX;

	start = atomic_fetch_add_explicit(&cs->evict_cursor, 1, memory_order_relaxed);
	for (unsigned int i = 0; i < n && looked < EVICT_SAMPLE; i++) {
		struct cache_shard *sh = &cs->shards[(start + i) & (n - 1)];

		lock_take(&sh->lock);
		if (sh->lru_head) {
			looked++;
			if (sh->lru_head->stamp_us < best_stamp) {
				best_stamp = sh->lru_head->stamp_us;
				best = (start + i) & (n - 1);
			}
		}
		lock_release(&sh->lock);
	}
	if (best == n)
		return 0;
	{
		struct cache_shard *sh = &cs->shards[best];
		struct cache_obj *victim;
		int last = 0;

		lock_take(&sh->lock);
		victim = sh->lru_head;   /* it may have changed: any head will do */
		if (victim)
			last = index_unlink(cs, sh, victim);
		lock_release(&sh->lock);
		if (!victim)
			return 1;   /* someone else made room: try again */
		atomic_fetch_add(&cs->evictions, 1);
		if (last)
			obj_free(cs, victim);
	}
	return 1;
}

/* Reserves <n> bytes of the budget. Returns 0 or -1. */
static int reserve(struct cache_store *cs, uint64_t n)
{
	for (int tries = 0; tries <= EVICT_TRIES; tries++) {
		uint64_t cur = atomic_load(&cs->used);

		while (cur + n <= cs->max) {
			if (atomic_compare_exchange_weak(&cs->used, &cur, cur + n))
				return 0;
		}
		if (tries == EVICT_TRIES || !evict_one(cs))
			break;
	}
	atomic_fetch_add(&cs->store_fails, 1);
	return -1;
}

/* ---- writers ---- */

struct cache_obj *cache_obj_new(struct cache_store *cs, uint64_t hash, uint64_t secondary,
                                const void *key, size_t klen)
{
	uint64_t sz = sizeof(struct cache_obj) + klen;
	struct cache_obj *o;

	if (reserve(cs, sz) < 0)
		return NULL;
	o = calloc(1, sz);
	if (!o) {
		atomic_fetch_sub(&cs->used, sz);
		return NULL;
	}
	o->reserved = sz;
	o->hash = hash;
	o->secondary = secondary;
	o->klen = klen;
	memcpy(o->key, key, klen);
	atomic_init(&o->refs, 1);   /* the writer's, handed to the index at commit */
	return o;
}

int cache_obj_append(struct cache_store *cs, struct cache_obj *o, const void *p, size_t len)
{
	const char *src = p;

	while (len) {
		struct cache_chunk *c = o->last;
		size_t n;

		if (!c || c->len == c->cap) {
			size_t cap = c ? c->cap * 2 : CHUNK_MIN;

			if (cap > CHUNK_MAX)
				cap = CHUNK_MAX;
			while (cap < len && cap < CHUNK_MAX)
				cap *= 2;
			/* no object may take more than half the store (HAProxy's
			 * bound on max-object-size): one that would is given up
			 * before it evicts the others for nothing */
			if (o->reserved + sizeof(*c) + cap > cs->max / 2) {
				atomic_fetch_add(&cs->store_fails, 1);
				return -1;
			}
			if (reserve(cs, sizeof(*c) + cap) < 0)
				return -1;
			c = malloc(sizeof(*c) + cap);
			if (!c) {
				atomic_fetch_sub(&cs->used, sizeof(*c) + cap);
				return -1;
			}
			o->reserved += sizeof(*c) + cap;
			c->next = NULL;
			c->len = 0;
			c->cap = cap;
			o->last_link = o->last ? &o->last->next : &o->first;
			*o->last_link = c;
			o->last = c;
		}
		n = c->cap - c->len;
		if (n > len)
			n = len;
		memcpy(c->data + c->len, src, n);
		c->len += n;
		o->size += n;
		src += n;
		len -= n;
	}
	return 0;
}

void cache_obj_abort(struct cache_store *cs, struct cache_obj *o)
{
	if (o)
		obj_free(cs, o);
}

int cache_obj_commit(struct cache_store *cs, struct cache_obj *o, uint32_t now_s,
                     uint32_t expire_s, unsigned int max_secondary)
{
	struct cache_shard *sh = shard_of(cs, o->hash);
	struct cache_obj **pp, *old = NULL, *doomed[2] = { NULL, NULL };
	unsigned int variants = 0;
	int rc = 0;

	o->expire_s = expire_s;
	o->stamp_us = mono_us();
	if (o->last && o->last->len < o->last->cap) {
		/* the last chunk gives back what it did not use: an object
		 * costs its bytes, not its chunks' capacity */
		struct cache_chunk *c = realloc(o->last, sizeof(*c) + o->last->len);

		if (c) {
			uint64_t spare = c->cap - c->len;

			c->cap = c->len;
			*o->last_link = c;
			o->last = c;
			o->reserved -= spare;
			atomic_fetch_sub(&cs->used, spare);
		}
	}
	lock_take(&sh->lock);
	for (pp = bucket_of(cs, sh, o->hash); *pp; pp = &(*pp)->hnext) {
		struct cache_obj *e = *pp;

		if (!same_key(e, o->hash, o->key, o->klen))
			continue;
		if (e->secondary == o->secondary)
			old = e;
		else if (e->expire_s > now_s)
			variants++;
	}
	if (o->secondary && max_secondary && variants >= max_secondary) {
		rc = -1;
		doomed[0] = o;
	} else {
		if (old && index_unlink(cs, sh, old))
			doomed[1] = old;
		pp = bucket_of(cs, sh, o->hash);
		o->hnext = *pp;
		*pp = o;
		lru_append(sh, o);
		o->linked = 1;
		sh->count++;
		atomic_fetch_add(&cs->objects, 1);
	}
	lock_release(&sh->lock);
	if (doomed[0])
		obj_free(cs, doomed[0]);
	if (doomed[1])
		obj_free(cs, doomed[1]);
	return rc;
}

/* ---- readers ---- */

struct cache_obj *cache_lookup(struct cache_store *cs, uint64_t hash, const void *key,
                               size_t klen, uint32_t now_s, cache_match_fn match,
                               const void *arg)
{
	struct cache_shard *sh = shard_of(cs, hash);
	struct cache_obj *o, *expired = NULL, *dead = NULL;

	lock_take(&sh->lock);
	for (o = *bucket_of(cs, sh, hash); o; o = o->hnext) {
		if (!same_key(o, hash, key, klen))
			continue;
		if (o->expire_s <= now_s) {
			if (!expired)
				expired = o;   /* leaves the index below */
			continue;
		}
		if (match ? match(o, arg) : !o->secondary)
			break;
	}
	if (o) {
		atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
		o->stamp_us = mono_us();
		lru_unlink(sh, o);
		lru_append(sh, o);
	}
	/* one expired variant per look-up goes: bounded work, and the purge
	 * task takes the others */
	if (expired && index_unlink(cs, sh, expired))
		dead = expired;
	lock_release(&sh->lock);
	if (dead)
		obj_free(cs, dead);
	return o;
}

void cache_obj_release(struct cache_store *cs, struct cache_obj *o)
{
	if (o && atomic_fetch_sub(&o->refs, 1) == 1)
		obj_free(cs, o);
}

size_t cache_obj_read_from(const struct cache_obj *o, const void **chunk, uint64_t *chunk_off,
                           uint64_t off, void *dst, size_t len)
{
	const struct cache_chunk *c = o->first;
	uint64_t base = 0;   /* offset of c's first byte */
	char *out = dst;
	size_t done = 0;

	if (*chunk && *chunk_off <= off) {
		c = *chunk;
		base = *chunk_off;
	}
	while (c && off >= base + c->len) {
		base += c->len;
		c = c->next;
	}
	off -= base;
	while (c && done < len) {
		size_t n = c->len - (size_t)off;

		if (n > len - done)
			n = len - done;
		memcpy(out + done, c->data + off, n);
		done += n;
		if (done < len || off + n == c->len) {
			/* this chunk is used up: the next read starts after it */
			base += c->len;
			c = c->next;
			off = 0;
		}
	}
	*chunk = c;
	*chunk_off = base;
	if (!c) {
		/* past the end: the next read (if any) starts over */
		*chunk = NULL;
		*chunk_off = 0;
	}
	return done;
}

size_t cache_obj_read(const struct cache_obj *o, uint64_t off, void *dst, size_t len)
{
	const void *chunk = NULL;
	uint64_t chunk_off = 0;

	return cache_obj_read_from(o, &chunk, &chunk_off, off, dst, len);
}

uint64_t cache_obj_size(const struct cache_obj *o)
{
	return o->size;
}

uint64_t *cache_obj_meta(struct cache_obj *o)
{
	return o->meta;
}

const uint64_t *cache_obj_meta_ro(const struct cache_obj *o)
{
	return o->meta;
}

uint64_t cache_obj_secondary(const struct cache_obj *o)
{
	return o->secondary;
}

/* ---- maintenance and displays ---- */

unsigned int cache_store_purge(struct cache_store *cs, uint32_t now_s, unsigned int budget)
{
	struct cache_shard *sh = &cs->shards[cs->purge_cursor++ & (nshards(cs) - 1)];
	struct cache_obj *dead[64];
	unsigned int ndead = 0, seen = 0;

	if (budget > 64)
		budget = 64;
	lock_take(&sh->lock);
	for (struct cache_obj *o = sh->lru_head; o && seen < budget; seen++) {
		struct cache_obj *n = o->lru_next;

		if (o->expire_s <= now_s) {
			if (index_unlink(cs, sh, o))
				dead[ndead++] = o;
		}
		o = n;
	}
	lock_release(&sh->lock);
	for (unsigned int i = 0; i < ndead; i++)
		obj_free(cs, dead[i]);
	return ndead;
}

void cache_store_stats(const struct cache_store *cs, struct cache_store_stats *st)
{
	st->max_bytes = cs->max;
	st->used_bytes = atomic_load_explicit(&((struct cache_store *)cs)->used,
	                                      memory_order_relaxed);
	st->objects = atomic_load_explicit(&((struct cache_store *)cs)->objects,
	                                   memory_order_relaxed);
	st->evictions = atomic_load_explicit(&((struct cache_store *)cs)->evictions,
	                                     memory_order_relaxed);
	st->store_fails = atomic_load_explicit(&((struct cache_store *)cs)->store_fails,
	                                       memory_order_relaxed);
}

int cache_store_walk(struct cache_store *cs, uint64_t *pos, unsigned int budget,
                     void (*fn)(void *arg, const struct cache_obj *o, uint64_t hash,
                                uint32_t expire_s, unsigned int refs),
                     void *arg)
{
	uint64_t total = (uint64_t)nshards(cs) * cs->nbuckets;
	unsigned int seen = 0;

	while (*pos < total && seen < budget) {
		struct cache_shard *sh = &cs->shards[*pos / cs->nbuckets];
		unsigned int b = (unsigned int)(*pos % cs->nbuckets);

		/* whole buckets (about one object each) under one lock hold */
		lock_take(&sh->lock);
		for (; b < cs->nbuckets && seen < budget; b++, (*pos)++) {
			for (const struct cache_obj *o = sh->buckets[b]; o; o = o->hnext, seen++)
				fn(arg, o, o->hash, o->expire_s,
				   atomic_load_explicit(&((struct cache_obj *)o)->refs,
				                        memory_order_relaxed) - 1);
		}
		lock_release(&sh->lock);
	}
	return *pos < total;
}
