/* The HTTP cache's state in a transaction, and the hooks the stream calls
 * (src/http/cache.c). Owner thread only, like the transaction. */
#ifndef SLUICE_HTTP_CACHE_TXN_H
#define SLUICE_HTTP_CACHE_TXN_H

#include <stddef.h>
#include <stdint.h>

struct cache_cfg;
struct cache_obj;
struct stream;
struct http_txn;

/* cache_txn.req_flags: what the request allows (HAProxy 2.6's rules) */
#define CACHE_RQ_NO_SERVE  0x01   /* not answered from the cache */
#define CACHE_RQ_NO_STORE  0x02   /* its response is not stored */

struct cache_txn {
	const struct cache_cfg *key_cache;   /* a cache-use ran: the key is set */
	uint64_t hash;                /* primary key: 128 bits of hash of the
	                               * authority and the target */
	uint64_t hash2;
	unsigned int req_flags;       /* CACHE_RQ_* */
	/* the request's side of a secondary key (process-vary) */
	uint32_t ae_bits;             /* Accept-Encoding: codings accepted */
	uint32_t ae_refused;          /* codings refused (q=0) */
	int has_ae;                   /* an Accept-Encoding field was there */
	uint64_t referer_hash;        /* 0: no Referer */
	/* a hit found by cache-use, served once the request rules are done */
	struct cache_obj *hit;
	const struct cache_cfg *hit_cache;
	const char *hit_name;         /* res.cache_name, when served from the cache */
	/* an object being stored while the response streams */
	struct cache_obj *w;
	const struct cache_cfg *w_cache;
	uint32_t w_expire_s;          /* loop clock seconds */
	uint64_t w_limit;             /* max-object-size */
};

/* Drops whatever the transaction holds (txn_cleanup()). */
void cache_txn_release(struct cache_txn *c);
/* A hit is waiting to be served (cache-use found one). */
static inline int cache_txn_has_hit(const struct cache_txn *c)
{
	return c->hit != NULL;
}
/* Serves the hit found by cache-use as the response (the request rules are
 * done). Returns 0, or -1 when it could not (the request then goes on to a
 * server as if there had been no hit). */
int cache_serve(struct stream *s);
/* Body bytes of a response being stored, as they go toward the client. */
void cache_store_data(struct cache_txn *c, const char *p, size_t n);
/* The response being stored is complete: it becomes visible. */
void cache_store_end(struct cache_txn *c, uint64_t now_ms);
static inline int cache_txn_storing(const struct cache_txn *c)
{
	return c->w != NULL;
}
/* The part of a hit's object from <off>: copies what fits into <dst>
 * (<room> bytes); <chunk>, <chunk_off>: the reader's place in the object
 * (cache_obj_read_from()). */
size_t cache_hit_read(const struct cache_obj *o, const void **chunk, uint64_t *chunk_off,
                      uint64_t off, char *dst, size_t room);
void cache_hit_release(struct cache_obj *o, const struct cache_cfg *cc);

#endif
