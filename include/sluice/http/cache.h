/* The HTTP cache (HAProxy 2.6's `cache` sections, cache-use, cache-store).
 *
 * Two layers:
 *  - the store (src/http/cache_store.c): objects shared by all threads,
 *    indexed by a sharded hash table, bounded in bytes, evicted in LRU
 *    order. It knows nothing of HTTP: an object is bytes (a head then a
 *    body) under a key, with an expiry date. Unit-tested on its own.
 *  - the HTTP side (src/http/cache.c): the configuration, the rules of
 *    what may be stored and served (src/http/cache_rules.c, fuzzed), the
 *    actions, fetches and `show cache`, and the hooks the stream calls.
 *
 * Life of an object: a writer creates it (cache_obj_new()), appends its
 * bytes as the response streams through (cache_obj_append()), then either
 * commits it (cache_obj_commit(): from then on it is in the index, whole
 * and immutable) or aborts it. Readers find committed objects only, take a
 * reference (cache_lookup()), copy bytes out at their own pace
 * (cache_obj_read(), no lock: the object does not change any more) and
 * drop the reference (cache_obj_release()). An object evicted or replaced
 * while read leaves the index at once and is freed by its last reader.
 */
#ifndef SLUICE_HTTP_CACHE_H
#define SLUICE_HTTP_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cache_store;
struct cache_obj;

/* ---- the store ---- */

/* A store of at most <max_bytes> bytes (objects' data and headers
 * counted), indexed over 2^<shard_bits> shards. NULL without memory. */
struct cache_store *cache_store_new(uint64_t max_bytes, unsigned int shard_bits);
/* Frees the store and every object (no reader may remain). */
void cache_store_free(struct cache_store *cs);

/* A new object for <key> (any bytes) with primary hash <hash> and
 * secondary key <secondary> (0: the response does not vary). Its memory
 * is reserved now, evicting others if needed. NULL if none can be had. */
struct cache_obj *cache_obj_new(struct cache_store *cs, uint64_t hash, uint64_t secondary,
                                const void *key, size_t klen);
/* Appends bytes; returns 0, or -1 when the store cannot hold them (the
 * caller then aborts). */
int cache_obj_append(struct cache_store *cs, struct cache_obj *o, const void *p, size_t len);
/* Makes a complete object visible until <expire_s> (seconds of the caller's
 * clock), replacing any object under the same key and secondary key. When
 * <max_secondary> is non-zero and the key already has that many variants,
 * the object is dropped instead (returns -1). The writer's handle is given
 * up in every case. */
int cache_obj_commit(struct cache_store *cs, struct cache_obj *o, uint32_t now_s,
                     uint32_t expire_s, unsigned int max_secondary);
/* Gives up an object being written. */
void cache_obj_abort(struct cache_store *cs, struct cache_obj *o);

/* The first committed, unexpired object for (<hash>, <key>) that <match>
 * accepts (called under the shard lock, on objects whose meta slots and
 * secondary key it may read; NULL: only an object whose secondary key is
 * 0), with a reference taken, or NULL. */
typedef int (*cache_match_fn)(const struct cache_obj *o, const void *arg);
struct cache_obj *cache_lookup(struct cache_store *cs, uint64_t hash, const void *key,
                               size_t klen, uint32_t now_s, cache_match_fn match,
                               const void *arg);
/* Drops a reference taken by cache_lookup(). */
void cache_obj_release(struct cache_store *cs, struct cache_obj *o);
/* Copies up to <len> bytes from offset <off> of a committed object. */
size_t cache_obj_read(const struct cache_obj *o, uint64_t off, void *dst, size_t len);
/* The same for a reader that goes forward: *<chunk> and *<chunk_off>
 * (NULL and 0 at first) remember where the last read ended, so that each
 * read starts there instead of walking the chunks from the first one. */
size_t cache_obj_read_from(const struct cache_obj *o, const void **chunk, uint64_t *chunk_off,
                           uint64_t off, void *dst, size_t len);
/* The object's size in bytes (what was appended). */
uint64_t cache_obj_size(const struct cache_obj *o);
/* Small per-object values the HTTP side keeps (head length, offsets of
 * validators, dates...): CACHE_OBJ_META slots, set before commit. */
#define CACHE_OBJ_META 8
uint64_t *cache_obj_meta(struct cache_obj *o);
const uint64_t *cache_obj_meta_ro(const struct cache_obj *o);
uint64_t cache_obj_secondary(const struct cache_obj *o);

/* Removes every expired object of one shard (the next one at each call,
 * at most <budget> objects). Returns the number removed. */
unsigned int cache_store_purge(struct cache_store *cs, uint32_t now_s, unsigned int budget);

/* Counters, read racily. */
struct cache_store_stats {
	uint64_t max_bytes;
	uint64_t used_bytes;       /* reserved by objects (committed or written) */
	uint64_t objects;          /* in the index */
	uint64_t evictions;
	uint64_t store_fails;      /* writes abandoned for lack of room */
};
void cache_store_stats(const struct cache_store *cs, struct cache_store_stats *st);

/* Walks the index for `show cache`, from position *pos (0 at first),
 * calling <fn> for about <budget> objects (whole buckets), each under its
 * shard's lock: <fn> must be quick and must not call back into the store.
 * Returns 1 while objects may remain (call again), 0 at the end. */
int cache_store_walk(struct cache_store *cs, uint64_t *pos, unsigned int budget,
                     void (*fn)(void *arg, const struct cache_obj *o, uint64_t hash,
                                uint32_t expire_s, unsigned int refs),
                     void *arg);

/* ---- configuration (src/http/cache.c) ---- */

struct cfg_ctx;
/* `filter cache <name>` of a proxy (called by the `filter` keyword). */
int cache_filter_kw(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen);
/* Frees every cache section and its store (cfg_free_all()). */
void caches_free_all(void);

/* ---- the rules (src/http/cache_rules.c) ---- */

/* What a Cache-Control (or Pragma) field value says, directive by
 * directive (RFC 9111 section 5.2), as far as HAProxy 2.6 reads it. */
struct cache_cc {
	unsigned int no_cache : 1;   /* no-cache, with or without field names */
	unsigned int no_store : 1;
	unsigned int private_ : 1;
	unsigned int public_ : 1;
	unsigned int has_max_age : 1;
	unsigned int has_s_maxage : 1;
	unsigned int fresh_ctl : 1;  /* max-age, max-stale or min-fresh, whatever
	                              * their value (a request's freshness wishes,
	                              * which HAProxy 2.6 does not honour: it
	                              * bypasses the cache) */
	long max_age;                /* seconds, when has_max_age */
	long s_maxage;
};
/* Reads one field value (a comma-separated list) into <cc> (accumulating:
 * call once per field line). */
void cache_cc_parse(const char *v, size_t len, struct cache_cc *cc);

/* Parses an HTTP-date (IMF-fixdate, RFC 850 or asctime, RFC 9110 section
 * 5.6.7). Returns the time in seconds since the epoch, or -1. */
int64_t cache_http_date(const char *v, size_t len);

/* The Accept-Encoding value reduced to sets of known codings: the bits of
 * those accepted (q > 0) are returned, those refused (q=0) added to
 * *refused (aliases count as their coding: x-gzip is gzip). */
uint32_t cache_accept_encoding(const char *v, size_t len, uint32_t *refused);
/* The bit of one content-coding, 0 if unknown. */
uint32_t cache_coding_bit(const char *v, size_t len);
#define CACHE_CODING_IDENTITY 0x1u
#define CACHE_CODING_ANY      (1u << 11)   /* "*" */

/* Whether entity tag list <inm> (If-None-Match) matches <etag>, by the weak
 * comparison (RFC 9110 section 13.1.2). */
int cache_etag_match(const char *inm, size_t ilen, const char *etag, size_t elen);

#endif
