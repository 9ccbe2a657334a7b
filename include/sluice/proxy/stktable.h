/* Stick tables: per-key counters shared by every thread (HAProxy 2.6
 * manual, "stick-table" in section 4.2, and the sc_*, src_*, table_*
 * fetches of section 7.3).
 *
 * A table maps a key (an IPv4 or IPv6 address, a 32-bit integer, a string
 * or a binary block) to an entry holding the data types the configuration
 * asked to store: counters, tags, and frequency counters (rates over a
 * period). Streams track entries (track-sc0/1/2) and update their
 * counters; rules read them back (sc_http_req_rate(0) and friends).
 *
 * Concurrency (see src/proxy/stktable.c for the details):
 *  - A table is split into STKT_SHARDS shards by the hash of the key. Each
 *    shard has its own lock, hash buckets and LRU list; no lock is common
 *    to all requests.
 *  - The lock of an entry's shard is taken to find, create, reference,
 *    release, expire or evict it. Counters are updated with atomics,
 *    without any lock, by whoever holds a reference (a tracking stream).
 *  - An entry with references is never freed: expiry and eviction skip it.
 *  - Expiry runs in bounded batches from a per-table task.
 */
#ifndef SLUICE_PROXY_STKTABLE_H
#define SLUICE_PROXY_STKTABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sluice/core/freq.h>
#include <sluice/core/list.h>
#include <sluice/core/lock.h>

#define STKT_SHARDS      64     /* power of two */
#define STKT_MAX_CTR     3      /* sc0, sc1, sc2 */
#define STKT_DEF_KEYLEN  32     /* string and binary keys */

enum stkt_type {
	STKT_T_IP = 0,       /* IPv4 address, 4 bytes */
	STKT_T_IPV6,         /* IPv6 address, 16 bytes */
	STKT_T_INTEGER,      /* 32-bit unsigned integer */
	STKT_T_STRING,       /* up to <len> characters */
	STKT_T_BINARY,       /* exactly <len> bytes (padded with zeroes) */
};

/* Data types, in HAProxy 2.6's order (the order of `show table`). */
enum stkt_dt {
	STKT_DT_SERVER_ID = 0,
	STKT_DT_GPT0,
	STKT_DT_GPC0,
	STKT_DT_GPC0_RATE,
	STKT_DT_CONN_CNT,
	STKT_DT_CONN_RATE,
	STKT_DT_CONN_CUR,
	STKT_DT_SESS_CNT,
	STKT_DT_SESS_RATE,
	STKT_DT_HTTP_REQ_CNT,
	STKT_DT_HTTP_REQ_RATE,
	STKT_DT_HTTP_ERR_CNT,
	STKT_DT_HTTP_ERR_RATE,
	STKT_DT_BYTES_IN_CNT,
	STKT_DT_BYTES_IN_RATE,
	STKT_DT_BYTES_OUT_CNT,
	STKT_DT_BYTES_OUT_RATE,
	STKT_DT_GPC1,
	STKT_DT_GPC1_RATE,
	STKT_DT_SERVER_KEY,
	STKT_DT_HTTP_FAIL_CNT,
	STKT_DT_HTTP_FAIL_RATE,
	STKT_DT_GPT,         /* gpt(<n>): array of tags, replaces gpt0 */
	STKT_DT_GPC,         /* gpc(<n>): array of counters, replaces gpc0/gpc1 */
	STKT_DT_GPC_RATE,    /* gpc_rate(<n>,<period>): replaces gpc0/1_rate */
	STKT_DT_COUNT
};

#define STKT_MAX_ELEMS 100   /* elements of an array data type */

enum stkt_kind {
	STKT_K_SINT,         /* signed 32-bit value (server_id) */
	STKT_K_U32,          /* unsigned 32-bit counter or tag */
	STKT_K_U64,          /* unsigned 64-bit counter (bytes) */
	STKT_K_FRQ,          /* frequency counter over a period */
	STKT_K_NAME,         /* a server's name (server_key: a pointer to a name
	                      * that lives as long as the configuration) */
};

struct stkt_dt_def {
	const char *name;
	enum stkt_kind kind;
	int array;           /* gpt, gpc, gpc_rate: <n> elements */
};
extern const struct stkt_dt_def stkt_dt_defs[STKT_DT_COUNT];
/* The data type called <name> (<len> bytes), or -1. */
int stkt_dt_lookup(const char *name, size_t len);


/* An entry. <hnext>, <lru>, <expire> are protected by its shard's lock;
 * <ref> is taken under it and dropped under it; the data are atomics
 * anyone holding a reference (or the shard's lock) may update. */
struct stksess {
	struct stksess *hnext;       /* hash chain */
	struct list lru;             /* shard's list, least recently used first */
	_Atomic uint32_t ref;        /* trackers */
	uint32_t hash;
	_Atomic uint64_t expire;     /* loop-clock ms, 0: never (read racily by dumps) */
	uint64_t touched;            /* loop-clock ns of the last touch (eviction order) */
	uint32_t key_len;
	uint32_t pad;
	unsigned char data[];        /* table->data_size bytes, then the key */
};

struct stkt_shard {
	struct sl_lock lock;
	struct stksess **buckets;    /* mask + 1 chains */
	uint32_t mask;
	struct list lru;             /* oldest touch first: also expiry order */
	long count;
	struct list upd;             /* entries with updates peers have not sent
	                              * (tables with peers), oldest first */
} __attribute__((aligned(64)));

/* Tables shared with peers: each entry starts its data with this (at
 * data_ofs upd_ofs), under its shard's lock. <pend> has bit i set while
 * the remote peer of bit i has not been sent the entry's last local
 * update; the entry is on its shard's upd list while <pend> is not 0. */
struct stkt_upd {
	struct list link;
	uint64_t pend;
};

struct stktable {
	struct list list;            /* all tables (configuration time only) */
	char *name;                  /* the proxy's name */
	char *file;
	int line;
	void *px;                    /* the proxy it belongs to (opaque) */
	enum stkt_type type;
	uint32_t key_size;           /* bytes of a key (string: max characters) */
	long size;                   /* entries at most */
	int expire_ms;               /* 0: entries never expire */
	int nopurge;                 /* refuse new entries when full */
	int data_ofs[STKT_DT_COUNT]; /* offset in data[], -1 when not stored */
	uint32_t data_period[STKT_DT_COUNT];   /* ms, for STKT_K_FRQ */
	uint32_t data_nbelem[STKT_DT_COUNT];   /* elements (1 but for arrays) */
	uint32_t data_size;
	uint32_t entry_size;
	_Atomic long used;           /* entries, bounded by size */
	/* expiry task (thread exp_tid); its cursor belongs to that thread */
	struct task *exp_task;
	int exp_tid;
	int exp_cursor;
	/* statistics, relaxed atomics */
	_Atomic uint64_t n_expired, n_evicted, n_refused;
	struct stkt_shard *shards;   /* STKT_SHARDS */
	/* peers (src/proxy/peers.c); set at configuration time */
	char *peers_name;            /* `peers <name>`, or the section's */
	void *peers;                 /* struct peers *, resolved after parsing */
	char *nid;                   /* name on the wire: the proxy's, "/<table>" */
	int upd_ofs;                 /* struct stkt_upd in data[], -1: no peers */
	/* remote peers with an established session (bit per peer): a local
	 * update marks the entry pending for them */
	_Atomic uint64_t peers_live;
	_Atomic uint64_t n_pushed, n_learned;   /* statistics, relaxed */
};

/* A key ready to look up: normalised to the table's type. <ptr> may point
 * into <buf>: fill a key in place, never copy one by value. */
struct stkt_key {
	const unsigned char *ptr;
	uint32_t len;
	unsigned char buf[16];
};

/* ---- configuration ---- */

/* What a `stick-table` line says (stktable_parse_args()). */
struct stkt_conf {
	enum stkt_type type;
	uint32_t key_size;
	long size;
	int expire_ms;
	int nopurge;
	int stored[STKT_DT_COUNT];
	uint32_t period[STKT_DT_COUNT];
	uint32_t nbelem[STKT_DT_COUNT];   /* arrays: their size */
	char peers[128];             /* `peers <name>`, or empty */
	char warn[256];              /* a warning to print, or empty */
};

/* Parses the words after "stick-table". Returns 0, or -1 with a message
 * (HAProxy 2.6's wording, without the "stick-table: " prefix the caller
 * adds). No allocation: for the configuration and the fuzzer. */
int stktable_parse_args(char **args, int nargs, struct stkt_conf *c, char *err, size_t errlen);

/* Creates the table of <px> named <name>. NULL when memory is short. */
struct stktable *stktable_new(const char *name, const char *file, int line, void *px,
                              const struct stkt_conf *c);
/* The table called <name>, or NULL. */
struct stktable *stktable_find(const char *name);
struct stktable *stktable_first(void);
struct stktable *stktable_next(struct stktable *t);
/* Frees every table and its entries (exit, the configuration fuzzer). No
 * thread may run. */
void stktable_free_all(void);

/* Resolves a table argument (ARGT_TAB) of fetch or converter <kw> at
 * configuration time: the table it names, or, omitted, the table of the
 * expression's proxy (sc_* fetches: none, the tracked entry's table is
 * used). Returns an error count (the alert is printed). */
struct smp_arg;
struct smp_origin;
int stktable_resolve_arg(struct smp_arg *a, int i, const char *kw, int conv,
                         const struct smp_origin *o);

/* ---- keys and entries ---- */

struct sample;
/* Turns a sample into a key of <t> (cast, truncated, padded). 1, or 0 when
 * the sample cannot be one. <smp> may be modified (cast). */
int stktable_key_from_smp(const struct stktable *t, struct sample *smp, struct stkt_key *k);
/* Parses the text of a key (CLI). 1 or 0. */
int stktable_key_from_text(const struct stktable *t, const char *s, struct stkt_key *k);
/* Writes the key of <ts> as `show table` prints it. */
size_t stktable_key_text(const struct stktable *t, const struct stksess *ts, char *out,
                         size_t room);

/* The entry of <k>, created if missing, with one more reference and its
 * expiry pushed back. NULL when it cannot be created (table full of
 * referenced entries, nopurge, no memory). */
struct stksess *stktable_get_ref(struct stktable *t, const struct stkt_key *k);
/* Drops a reference taken by stktable_get_ref(), pushing the expiry back. */
void stktable_release(struct stktable *t, struct stksess *ts);

/* The entry of <k> with its shard locked, or NULL (nothing locked).
 * Release with stktable_unlock(). Read-only lookups (src_*, table_*). */
struct stksess *stktable_lookup_lock(struct stktable *t, const struct stkt_key *k);
void stktable_unlock(struct stktable *t, const struct stksess *ts);
/* Pushes back the expiry of an entry found by stktable_lookup_lock(), its
 * shard still locked (a stick match refreshes what it finds). */
void stktable_touch(struct stktable *t, struct stksess *ts);
/* Stores <dt> in every entry from now on (the stick rules' server_id):
 * configuration time only, while the table is empty. 0, or -1. */
int stktable_enable_dt(struct stktable *t, enum stkt_dt dt);
/* Removes the entry of <k> if nothing references it. 1 removed, 0 not
 * found, -1 in use. */
int stktable_remove(struct stktable *t, const struct stkt_key *k);

/* Calls <fn> for every entry, one shard at a time under its lock; stops
 * when <fn> returns non-zero. <fn> must not take another shard lock. */
void stktable_walk(struct stktable *t, int (*fn)(struct stktable *t, struct stksess *ts,
                                                void *arg), void *arg);
/* Removes every unreferenced entry for which <fn> returns non-zero (NULL:
 * every one). Returns how many were removed. */
long stktable_purge(struct stktable *t, int (*fn)(struct stktable *t, struct stksess *ts,
                                                  void *arg), void *arg);

/* ---- peers (src/proxy/peers.c) ---- */

/* The entry of <k>, created if missing, with a reference: an update
 * learned from a peer, which marks nothing pending. NULL as
 * stktable_get_ref(). */
struct stksess *stktable_get_ref_remote(struct stktable *t, const struct stkt_key *k);
/* Drops that reference; <expire_ms> (>= 0): the entry expires in that
 * many ms (timed update), else after the table's delay. */
void stktable_release_remote(struct stktable *t, struct stksess *ts, int expire_ms);
/* Calls <fn> under the lock of shard <shard> for at most <max> entries of
 * its upd list pending for <bit>, clearing the bit of each one <fn>
 * accepted (returned 0; non-zero stops the walk, the entry kept).
 * Returns the entries examined; *more is set when some may remain. */
int stktable_upd_collect(struct stktable *t, int shard, int bit, int max,
                         int (*fn)(struct stktable *t, struct stksess *ts, void *arg),
                         void *arg, int *more);
/* Walks at most <max> buckets of shard <shard> from *<bucket> under its
 * lock, calling <fn> on each entry; stops before a bucket whose entries
 * <fn> refuses (non-zero). *<bucket> moves on; returns 1 when the shard is
 * done. A full push to a new peer session. */
int stktable_teach_walk(struct stktable *t, int shard, uint32_t *bucket, int max,
                        int (*fn)(struct stktable *t, struct stksess *ts, void *arg),
                        void *arg);
/* The key of an entry and its expiry (ms from now, 0: none). */
const unsigned char *stktable_entry_key(const struct stktable *t, const struct stksess *ts);

/* ---- data ---- */

/* Element <idx> of <dt> in <ts> (0 for a plain data type), or NULL when
 * the table does not store it. gpc0/gpc1, their rates and gpt0 are the
 * first elements of gpc, gpc_rate and gpt when the table stores those
 * arrays (HAProxy 2.6: the arrays replace them); *real (may be NULL) is
 * the data type actually used (its kind and period apply). */
void *stkt_elem_ptr(const struct stktable *t, struct stksess *ts, enum stkt_dt dt,
                    unsigned int idx, enum stkt_dt *real);

static inline void *stkt_data_ptr(const struct stktable *t, struct stksess *ts, enum stkt_dt dt)
{
	return stkt_elem_ptr(t, ts, dt, 0, NULL);
}

/* Whether element <idx> of <dt> is stored (see stkt_elem_ptr()). */
int stkt_stores_elem(const struct stktable *t, enum stkt_dt dt, unsigned int idx);

static inline int stkt_stores(const struct stktable *t, enum stkt_dt dt)
{
	return stkt_stores_elem(t, dt, 0);
}

/* The loop clock of the calling thread (ms). */
uint64_t stkt_now_ms(void);

/* Adds <n> to a counter or rate (nothing when the table does not store it). */
void stkt_add(struct stktable *t, struct stksess *ts, enum stkt_dt dt, uint64_t n);
/* The same on element <idx> of an array (gpc, gpc_rate, gpt). */
void stkt_add_idx(struct stktable *t, struct stksess *ts, enum stkt_dt dt, unsigned int idx,
                  uint64_t n);
int stkt_get_idx(const struct stktable *t, struct stksess *ts, enum stkt_dt dt,
                 unsigned int idx, int64_t *out);
int stkt_set_idx(struct stktable *t, struct stksess *ts, enum stkt_dt dt, unsigned int idx,
                 int64_t v);
/* Decrements a counter that stays at or above zero (conn_cur). */
void stkt_dec(struct stktable *t, struct stksess *ts, enum stkt_dt dt);
/* server_key: the name stored, or NULL (not stored, or not set). */
const char *stkt_get_name(const struct stktable *t, struct stksess *ts, enum stkt_dt dt);
void stkt_set_name(struct stktable *t, struct stksess *ts, enum stkt_dt dt, const char *name);
/* The value (a rate is read at the current date). 1, or 0 when not stored
 * or not a number (server_key). */
int stkt_get(const struct stktable *t, struct stksess *ts, enum stkt_dt dt, int64_t *out);
/* Sets a value (a rate: the current period's count). 1, or 0 when not stored. */
int stkt_set(struct stktable *t, struct stksess *ts, enum stkt_dt dt, int64_t v);

/* ---- tracking by streams (src/proxy/stktable_act.c) ---- */

/* A stream's tracked counter (sc0, sc1, sc2): the entry it holds a
 * reference on. Owner thread only. <sess>: tracked by a tcp-request
 * connection or session rule, kept for the whole connection; otherwise
 * released at the end of each HTTP transaction, as HAProxy releases a
 * stream's counters. */
struct stkctr {
	struct stktable *table;
	struct stksess *entry;
	int sess;
	int shared;   /* an HTTP/2 stream's reference to its connection's
	               * entry: conn_cur belongs to the connection */
};

struct stream;
/* The session passed the tcp-request connection and session rules:
 * sess_cnt and sess_rate of what they track. */
void stkctr_session_new(struct stream *s);
/* A new HTTP request (http_req_cnt/rate of every tracked entry); <error>:
 * it was invalid (http_err too). */
void stkctr_http_request(struct stream *s, int error);
/* The request was denied or tarpitted: http_err of every tracked entry. */
void stkctr_http_error(struct stream *s);
/* A response status from a server: 4xx counts as http_err, 5xx but 501
 * and 505 as http_fail. */
void stkctr_http_status(struct stream *s, int status);
/* Bytes exchanged since the last call. */
void stkctr_bytes(struct stream *s, uint64_t in, uint64_t out);
/* Releases the counters (<content_only>: those of the transaction). */
void stkctr_release(struct stream *s, int content_only);
/* HTTP/2: the connection (<dst>, an array of STKT_MAX_CTR) takes over the
 * connection-level counters of the stream that read its preface; each of
 * its streams then gets a reference of its own to them (shared: its
 * requests count there, conn_cur stays the connection's); the connection
 * releases them when it ends. */
void stkctr_take_session(struct stream *s, struct stkctr *dst);
void stkctr_share_session(struct stream *s, const struct stkctr *src);
void stkctr_release_array(struct stkctr *c);
/* One more reference on an entry someone already holds one on. */
void stktable_ref(struct stksess *ts);

#endif
