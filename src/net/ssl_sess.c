/* The TLS session cache of the frontends: TLS 1.2 session IDs, and TLS 1.3
 * tickets when they are stateful (`no-tls-tickets`), shared by all threads
 * and all bind lines, bounded by tune.ssl.cachesize entries in all.
 *
 * OpenSSL's own cache is one table per SSL_CTX under one lock that every
 * handshake takes to insert and every resumption to look up. This one is
 * split in SSL_SESS_SHARDS shards by a hash of the session ID; each shard
 * has its own lock (kind "ssl_sess" in `show locks`), a fixed array of
 * entries replaced in FIFO order when full (no allocation under the lock
 * beyond OpenSSL's reference count), and hash chains of entry indexes.
 * Work under a lock is one chain walk (chains average under one entry) and
 * one replacement: O(1) whatever the load.
 *
 * Entries hold SSL_SESSION references (as OpenSSL's internal cache does):
 * nothing is encoded or decoded. A session is only resumed on a context
 * with the same session ID context (OpenSSL checks it), and each bind line
 * has its own (ssl_conf.c), so a session never crosses bind lines.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/ssl.h>
#include <sluice/core/lock.h>
#include <sluice/net/ssl_sess.h>

#define SSL_SESS_SHARDS 32

struct sess_entry {
	SSL_SESSION *sess;           /* NULL: free */
	int next;                    /* next index in its hash chain, -1 */
	unsigned int idlen;
	unsigned char id[SSL_MAX_SSL_SESSION_ID_LENGTH];
};

struct sess_shard {
	struct sl_lock lock;         /* everything below */
	struct sess_entry *e;
	int *bucket;                 /* chain heads, -1 */
	int cap;                     /* entries and buckets */
	int next_victim;             /* FIFO replacement position */
} __attribute__((aligned(64)));

static struct sess_shard shards[SSL_SESS_SHARDS];
static int cache_ready;

static uint32_t id_hash(const unsigned char *id, unsigned int len)
{
	uint32_t h = 2166136261u;   /* FNV-1a: session IDs are random already */

	for (unsigned int i = 0; i < len; i++)
		h = (h ^ id[i]) * 16777619u;
	return h;
}

int ssl_sess_cache_init(long entries)
{
	int per = (int)((entries + SSL_SESS_SHARDS - 1) / SSL_SESS_SHARDS);

	if (cache_ready)
		return 0;
	if (per < 1)
		per = 1;
	for (int s = 0; s < SSL_SESS_SHARDS; s++) {
		struct sess_shard *sh = &shards[s];

		lock_init(&sh->lock, LK_SSL_SESS, "ssl session cache");
		sh->e = calloc((size_t)per, sizeof(*sh->e));
		sh->bucket = malloc(sizeof(*sh->bucket) * (size_t)per);
		if (!sh->e || !sh->bucket)
			return -1;
		for (int i = 0; i < per; i++)
			sh->bucket[i] = -1;
		sh->cap = per;
	}
	cache_ready = 1;
	return 0;
}

/* The shard of a session ID, NULL for an ID no cache entry can hold. */
static struct sess_shard *shard_of(const unsigned char *id, unsigned int len, uint32_t *h)
{
	if (!len || len > SSL_MAX_SSL_SESSION_ID_LENGTH)
		return NULL;
	*h = id_hash(id, len);
	return &shards[*h % SSL_SESS_SHARDS];
}

/* The head of the hash chain of <h> in <sh> (the low bits chose the shard). */
static int *bucket_of(struct sess_shard *sh, uint32_t h)
{
	return &sh->bucket[(h / SSL_SESS_SHARDS) % (uint32_t)sh->cap];
}

/* Unlinks entry <i> from its chain; the caller holds the lock. */
static void unlink_entry(struct sess_shard *sh, int i)
{
	struct sess_entry *e = &sh->e[i];
	int *pp = bucket_of(sh, id_hash(e->id, e->idlen));

	while (*pp != -1 && *pp != i)
		pp = &sh->e[*pp].next;
	if (*pp == i)
		*pp = e->next;
}

static int find(struct sess_shard *sh, uint32_t h, const unsigned char *id, unsigned int len)
{
	for (int i = *bucket_of(sh, h); i != -1; i = sh->e[i].next)
		if (sh->e[i].idlen == len && !memcmp(sh->e[i].id, id, len))
			return i;
	return -1;
}

/* new-session callback: keeps a reference. Returns 1 (OpenSSL must not
 * free the one it gave). */
static int sess_new(SSL *ssl, SSL_SESSION *sess)
{
	unsigned int len;
	const unsigned char *id = SSL_SESSION_get_id(sess, &len);
	SSL_SESSION *old = NULL;
	struct sess_shard *sh;
	uint32_t h;
	int i;

	/* a TLS 1.3 session sent as a stateless ticket is never looked up by
	 * its ID (OpenSSL calls this for it anyway): keeping it would only
	 * fill the cache */
	if (SSL_version(ssl) == TLS1_3_VERSION && !(SSL_get_options(ssl) & SSL_OP_NO_TICKET))
		return 0;
	if (!(sh = shard_of(id, len, &h)))
		return 0;
	lock_take(&sh->lock);
	i = find(sh, h, id, len);
	if (i < 0) {
		i = sh->next_victim;
		sh->next_victim = (i + 1) % sh->cap;
		if (sh->e[i].sess)
			unlink_entry(sh, i);
		old = sh->e[i].sess;
		memcpy(sh->e[i].id, id, len);
		sh->e[i].idlen = len;
		sh->e[i].next = *bucket_of(sh, h);
		*bucket_of(sh, h) = i;
	} else {
		old = sh->e[i].sess;
	}
	sh->e[i].sess = sess;
	lock_release(&sh->lock);
	SSL_SESSION_free(old);   /* outside the lock: it may free memory */
	return 1;
}

static SSL_SESSION *sess_get(SSL *ssl, const unsigned char *id, int len, int *copy)
{
	SSL_SESSION *sess = NULL;
	struct sess_shard *sh;
	uint32_t h;
	int i;

	*copy = 0;
	if (len <= 0 || !(sh = shard_of(id, (unsigned int)len, &h)))
		return NULL;
	lock_take(&sh->lock);
	i = find(sh, h, id, (unsigned int)len);
	if (i >= 0) {
		sess = sh->e[i].sess;
		SSL_SESSION_up_ref(sess);   /* the caller's reference */
	}
	lock_release(&sh->lock);
	return sess;
}

static void sess_remove(SSL_CTX *ctx, SSL_SESSION *sess)
{
	unsigned int len;
	const unsigned char *id = SSL_SESSION_get_id(sess, &len);
	SSL_SESSION *old = NULL;
	struct sess_shard *sh;
	uint32_t h;
	int i;

	if (!(sh = shard_of(id, len, &h)))
		return;
	lock_take(&sh->lock);
	i = find(sh, h, id, len);
	if (i >= 0 && sh->e[i].sess == sess) {
		unlink_entry(sh, i);
		old = sh->e[i].sess;
		sh->e[i].sess = NULL;
		sh->e[i].idlen = 0;
	}
	lock_release(&sh->lock);
	SSL_SESSION_free(old);
}

void ssl_sess_cache_attach(SSL_CTX *ctx)
{
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER | SSL_SESS_CACHE_NO_INTERNAL);
	SSL_CTX_sess_set_new_cb(ctx, sess_new);
	SSL_CTX_sess_set_get_cb(ctx, sess_get);
	SSL_CTX_sess_set_remove_cb(ctx, sess_remove);
}

void ssl_sess_cache_free(void)
{
	if (!cache_ready)
		return;
	for (int s = 0; s < SSL_SESS_SHARDS; s++) {
		for (int i = 0; i < shards[s].cap; i++)
			SSL_SESSION_free(shards[s].e[i].sess);
		free(shards[s].e);
		free(shards[s].bucket);
		lock_destroy(&shards[s].lock);
	}
	memset(shards, 0, sizeof(shards));
	cache_ready = 0;
}
