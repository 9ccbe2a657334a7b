/* Stick tables: the sharded store of entries, their data, expiry and
 * eviction.
 *
 * Concurrency rules
 * -----------------
 * A table is STKT_SHARDS shards; the shard of a key is given by the top
 * bits of its hash. A shard's lock (kind "stktable" in `show locks`)
 * protects its buckets, its LRU list, its count, and the <hnext>, <lru>
 * and <expire> fields of its entries. It is held for O(1) work (a chain
 * walk of about one entry: the buckets are sized for the table) except by
 * the expiry task, which handles at most STKT_EXP_BATCH entries per lock
 * hold, by the CLI dumps (one shard at a time), and by eviction, which
 * looks at no more than STKT_EVICT_SCAN entries of a list.
 *
 * References: a stream tracking an entry holds a reference, taken and
 * dropped under the shard's lock. Expiry and eviction free only entries
 * without references, under the same lock, so an entry never goes away
 * under its tracker. Between taking and dropping, the tracker updates the
 * counters with relaxed atomics and no lock; readers (sc_* fetches) read
 * them the same way. Lookups that do not take a reference (src_*, table_*,
 * the CLI) read the data while holding the shard's lock.
 *
 * Size: <used> counts the entries of the table. A creation reserves its
 * place with an atomic increment first; over <size>, it gives it back,
 * evicts the least recently used unreferenced entry of some shard (one
 * shard lock at a time, never two) and tries again, a bounded number of
 * times. So the table never holds more than <size> entries.
 *
 * Expiry: every touch sets expire = now + table expire and moves the entry
 * to the tail of its shard's list, so each list is in expiry order. The
 * table's task (on one thread) visits the shards in turn and frees expired
 * unreferenced heads, STKT_EXP_BATCH at most per shard and STKT_EXP_BUDGET
 * per run; when work is left it runs again at once (the scheduler's next
 * loop), otherwise at the next period. No run scans the whole table.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/expr/hash.h>
#include <sluice/expr/sample.h>
#include <sluice/proxy/stktable.h>

#define STKT_EXP_BATCH   64     /* entries examined per shard lock hold */
#define STKT_EXP_BUDGET  1024   /* entries examined per task run */
#define STKT_EVICT_SCAN  32     /* referenced heads skipped looking for a victim */
#define STKT_EVICT_SHARDS 8     /* shards whose oldest entries compete for eviction */
#define STKT_GET_TRIES   4      /* evictions tried before refusing an entry */

const struct stkt_dt_def stkt_dt_defs[STKT_DT_COUNT] = {
	[STKT_DT_SERVER_ID]      = { "server_id",      STKT_K_SINT },
	[STKT_DT_GPT0]           = { "gpt0",           STKT_K_U32 },
	[STKT_DT_GPC0]           = { "gpc0",           STKT_K_U32 },
	[STKT_DT_GPC0_RATE]      = { "gpc0_rate",      STKT_K_FRQ },
	[STKT_DT_CONN_CNT]       = { "conn_cnt",       STKT_K_U32 },
	[STKT_DT_CONN_RATE]      = { "conn_rate",      STKT_K_FRQ },
	[STKT_DT_CONN_CUR]       = { "conn_cur",       STKT_K_U32 },
	[STKT_DT_SESS_CNT]       = { "sess_cnt",       STKT_K_U32 },
	[STKT_DT_SESS_RATE]      = { "sess_rate",      STKT_K_FRQ },
	[STKT_DT_HTTP_REQ_CNT]   = { "http_req_cnt",   STKT_K_U32 },
	[STKT_DT_HTTP_REQ_RATE]  = { "http_req_rate",  STKT_K_FRQ },
	[STKT_DT_HTTP_ERR_CNT]   = { "http_err_cnt",   STKT_K_U32 },
	[STKT_DT_HTTP_ERR_RATE]  = { "http_err_rate",  STKT_K_FRQ },
	[STKT_DT_BYTES_IN_CNT]   = { "bytes_in_cnt",   STKT_K_U64 },
	[STKT_DT_BYTES_IN_RATE]  = { "bytes_in_rate",  STKT_K_FRQ },
	[STKT_DT_BYTES_OUT_CNT]  = { "bytes_out_cnt",  STKT_K_U64 },
	[STKT_DT_BYTES_OUT_RATE] = { "bytes_out_rate", STKT_K_FRQ },
	[STKT_DT_GPC1]           = { "gpc1",           STKT_K_U32 },
	[STKT_DT_GPC1_RATE]      = { "gpc1_rate",      STKT_K_FRQ },
	[STKT_DT_SERVER_KEY]     = { "server_key",     STKT_K_NAME },
	[STKT_DT_HTTP_FAIL_CNT]  = { "http_fail_cnt",  STKT_K_U32 },
	[STKT_DT_HTTP_FAIL_RATE] = { "http_fail_rate", STKT_K_FRQ },
	[STKT_DT_GPT]            = { "gpt",            STKT_K_U32, 1 },
	[STKT_DT_GPC]            = { "gpc",            STKT_K_U32, 1 },
	[STKT_DT_GPC_RATE]       = { "gpc_rate",       STKT_K_FRQ, 1 },
};

static struct list tables = LIST_HEAD_INIT(tables);

int stkt_dt_lookup(const char *name, size_t len)
{
	for (int i = 0; i < STKT_DT_COUNT; i++)
		if (strlen(stkt_dt_defs[i].name) == len && !memcmp(stkt_dt_defs[i].name, name, len))
			return i;
	return -1;
}

uint64_t stkt_now_ms(void)
{
	return th_ctx ? th_ctx->now_ms : clock_mono_ms();
}

/* ------------------------------------------------------------------ data */

static size_t dt_size(enum stkt_kind k);

/* gpc0, gpc1, their rates and gpt0 as elements of the arrays that replace
 * them; -1 for the other data types. */
static int legacy_alias(enum stkt_dt dt, enum stkt_dt *arr)
{
	switch (dt) {
	case STKT_DT_GPC0: *arr = STKT_DT_GPC; return 0;
	case STKT_DT_GPC1: *arr = STKT_DT_GPC; return 1;
	case STKT_DT_GPC0_RATE: *arr = STKT_DT_GPC_RATE; return 0;
	case STKT_DT_GPC1_RATE: *arr = STKT_DT_GPC_RATE; return 1;
	case STKT_DT_GPT0: *arr = STKT_DT_GPT; return 0;
	default: return -1;
	}
}

/* The data type and element where <dt>[<idx>] lives, or -1. */
static int locate(const struct stktable *t, enum stkt_dt dt, unsigned int idx, enum stkt_dt *real)
{
	if (t->data_ofs[dt] < 0) {
		enum stkt_dt arr;
		int first = legacy_alias(dt, &arr);

		if (first < 0 || idx || t->data_ofs[arr] < 0)
			return -1;
		dt = arr;
		idx = (unsigned int)first;
	}
	if (idx >= t->data_nbelem[dt])
		return -1;
	*real = dt;
	return (int)idx;
}

void *stkt_elem_ptr(const struct stktable *t, struct stksess *ts, enum stkt_dt dt,
                    unsigned int idx, enum stkt_dt *real)
{
	enum stkt_dt r;
	int i = locate(t, dt, idx, &r);

	if (i < 0)
		return NULL;
	if (real)
		*real = r;
	return ts->data + t->data_ofs[r] + (size_t)i * dt_size(stkt_dt_defs[r].kind);
}

int stkt_stores_elem(const struct stktable *t, enum stkt_dt dt, unsigned int idx)
{
	enum stkt_dt r;

	return locate(t, dt, idx, &r) >= 0;
}

void stkt_add_idx(struct stktable *t, struct stksess *ts, enum stkt_dt dt, unsigned int idx,
                  uint64_t n)
{
	enum stkt_dt r;
	void *p = stkt_elem_ptr(t, ts, dt, idx, &r);

	if (!p)
		return;
	switch (stkt_dt_defs[r].kind) {
	case STKT_K_U32:
		atomic_fetch_add_explicit((_Atomic uint32_t *)p, (uint32_t)n, memory_order_relaxed);
		break;
	case STKT_K_U64:
		atomic_fetch_add_explicit((_Atomic uint64_t *)p, n, memory_order_relaxed);
		break;
	case STKT_K_FRQ:
		freq_ctr_add(p, t->data_period[r], (uint32_t)stkt_now_ms(), (uint32_t)n);
		break;
	case STKT_K_SINT:
	case STKT_K_NAME:
		break;
	}
}

void stkt_add(struct stktable *t, struct stksess *ts, enum stkt_dt dt, uint64_t n)
{
	stkt_add_idx(t, ts, dt, 0, n);
}

void stkt_dec(struct stktable *t, struct stksess *ts, enum stkt_dt dt)
{
	enum stkt_dt r;
	_Atomic uint32_t *p = stkt_elem_ptr(t, ts, dt, 0, &r);
	uint32_t v;

	if (!p || stkt_dt_defs[r].kind != STKT_K_U32)
		return;
	v = atomic_load_explicit(p, memory_order_relaxed);
	while (v && !atomic_compare_exchange_weak_explicit(p, &v, v - 1, memory_order_relaxed,
	                                                   memory_order_relaxed))
		;
}

int stkt_get_idx(const struct stktable *t, struct stksess *ts, enum stkt_dt dt,
                 unsigned int idx, int64_t *out)
{
	enum stkt_dt r;
	void *p = stkt_elem_ptr(t, ts, dt, idx, &r);

	if (!p)
		return 0;
	switch (stkt_dt_defs[r].kind) {
	case STKT_K_SINT:
		*out = atomic_load_explicit((_Atomic int32_t *)p, memory_order_relaxed);
		break;
	case STKT_K_U32:
		*out = atomic_load_explicit((_Atomic uint32_t *)p, memory_order_relaxed);
		break;
	case STKT_K_U64:
		*out = (int64_t)atomic_load_explicit((_Atomic uint64_t *)p, memory_order_relaxed);
		break;
	case STKT_K_FRQ:
		*out = freq_ctr_read(p, t->data_period[r], (uint32_t)stkt_now_ms());
		break;
	case STKT_K_NAME:
		return 0;
	}
	return 1;
}

int stkt_get(const struct stktable *t, struct stksess *ts, enum stkt_dt dt, int64_t *out)
{
	return stkt_get_idx(t, ts, dt, 0, out);
}

const char *stkt_get_name(const struct stktable *t, struct stksess *ts, enum stkt_dt dt)
{
	void *p = stkt_data_ptr(t, ts, dt);

	if (!p || stkt_dt_defs[dt].kind != STKT_K_NAME)
		return NULL;
	return atomic_load_explicit((const char *_Atomic *)p, memory_order_relaxed);
}

void stkt_set_name(struct stktable *t, struct stksess *ts, enum stkt_dt dt, const char *name)
{
	void *p = stkt_data_ptr(t, ts, dt);

	if (p && stkt_dt_defs[dt].kind == STKT_K_NAME)
		atomic_store_explicit((const char *_Atomic *)p, name, memory_order_relaxed);
}

int stkt_set_idx(struct stktable *t, struct stksess *ts, enum stkt_dt dt, unsigned int idx,
                 int64_t v)
{
	enum stkt_dt r;
	void *p = stkt_elem_ptr(t, ts, dt, idx, &r);

	if (!p)
		return 0;
	switch (stkt_dt_defs[r].kind) {
	case STKT_K_SINT:
		atomic_store_explicit((_Atomic int32_t *)p, (int32_t)v, memory_order_relaxed);
		break;
	case STKT_K_U32:
		atomic_store_explicit((_Atomic uint32_t *)p, (uint32_t)v, memory_order_relaxed);
		break;
	case STKT_K_U64:
		atomic_store_explicit((_Atomic uint64_t *)p, (uint64_t)v, memory_order_relaxed);
		break;
	case STKT_K_FRQ:
		freq_ctr_set(p, (uint32_t)stkt_now_ms(), (uint32_t)v);
		break;
	case STKT_K_NAME:
		return 0;
	}
	return 1;
}

int stkt_set(struct stktable *t, struct stksess *ts, enum stkt_dt dt, int64_t v)
{
	return stkt_set_idx(t, ts, dt, 0, v);
}

static size_t dt_size(enum stkt_kind k)
{
	switch (k) {
	case STKT_K_SINT: case STKT_K_U32: return 4;
	case STKT_K_U64: case STKT_K_NAME: return 8;
	case STKT_K_FRQ: return sizeof(struct freq_ctr);
	}
	return 0;
}

/* ------------------------------------------------------------------ keys */

int stktable_key_from_smp(const struct stktable *t, struct sample *smp, struct stkt_key *k)
{
	size_t len;

	switch (t->type) {
	case STKT_T_IP:
		if (!smp_cast(smp, SMP_T_IPV4))
			return 0;
		memcpy(k->buf, &smp->data.ipv4, 4);
		k->ptr = k->buf;
		k->len = 4;
		return 1;
	case STKT_T_IPV6:
		if (!smp_cast(smp, SMP_T_IPV6))
			return 0;
		memcpy(k->buf, &smp->data.ipv6, 16);
		k->ptr = k->buf;
		k->len = 16;
		return 1;
	case STKT_T_INTEGER: {
		uint32_t v;

		if (!smp_cast(smp, SMP_T_SINT))
			return 0;
		v = (uint32_t)smp->data.sint;
		memcpy(k->buf, &v, 4);
		k->ptr = k->buf;
		k->len = 4;
		return 1;
	}
	case STKT_T_STRING:
		if (!smp_cast(smp, SMP_T_STR))
			return 0;
		len = smp->data.str.len;
		if (len > t->key_size)
			len = t->key_size;
		k->ptr = (const unsigned char *)smp->data.str.ptr;
		k->len = (uint32_t)len;
		return 1;
	case STKT_T_BINARY:
		if (!smp_cast(smp, SMP_T_BIN))
			return 0;
		len = smp->data.str.len;
		if (len >= t->key_size) {
			k->ptr = (const unsigned char *)smp->data.str.ptr;
			k->len = t->key_size;
			return 1;
		}
		/* shorter blocks are padded with zeroes to the key's size */
		if (!smp_make_rw(smp, t->key_size - len))
			return 0;
		memset(smp->data.str.ptr + len, 0, t->key_size - len);
		smp->data.str.len = t->key_size;
		k->ptr = (const unsigned char *)smp->data.str.ptr;
		k->len = t->key_size;
		return 1;
	}
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The CLI's key: an address, a decimal integer, a string, or hex digits
 * for a binary key (as `show table` prints them). Binary keys are decoded
 * into the static buffer of the CLI thread... so they are limited to the
 * 16 bytes of <k->buf> plus a thread-local scratch buffer. */
int stktable_key_from_text(const struct stktable *t, const char *s, struct stkt_key *k)
{
	switch (t->type) {
	case STKT_T_IP:
		if (inet_pton(AF_INET, s, k->buf) != 1)
			return 0;
		k->ptr = k->buf;
		k->len = 4;
		return 1;
	case STKT_T_IPV6:
		if (inet_pton(AF_INET6, s, k->buf) != 1)
			return 0;
		k->ptr = k->buf;
		k->len = 16;
		return 1;
	case STKT_T_INTEGER: {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);
		uint32_t v32 = (uint32_t)v;

		if (!*s || *end)
			return 0;
		memcpy(k->buf, &v32, 4);
		k->ptr = k->buf;
		k->len = 4;
		return 1;
	}
	case STKT_T_STRING: {
		size_t len = strlen(s);

		k->ptr = (const unsigned char *)s;
		k->len = (uint32_t)(len > t->key_size ? t->key_size : len);
		return 1;
	}
	case STKT_T_BINARY: {
		size_t cap, n = strlen(s);
		unsigned char *b = (unsigned char *)smp_trash_get(&cap);

		if (n % 2 || t->key_size > cap)
			return 0;
		memset(b, 0, t->key_size);
		for (size_t i = 0; i < n / 2; i++) {
			int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

			if (hi < 0 || lo < 0)
				return 0;
			if (i < t->key_size)
				b[i] = (unsigned char)(hi << 4 | lo);
		}
		k->ptr = b;
		k->len = t->key_size;
		return 1;
	}
	}
	return 0;
}

static const unsigned char *entry_key(const struct stktable *t, const struct stksess *ts)
{
	return ts->data + t->data_size;
}

const unsigned char *stktable_entry_key(const struct stktable *t, const struct stksess *ts)
{
	return entry_key(t, ts);
}

static struct stkt_upd *upd_of(const struct stktable *t, struct stksess *ts)
{
	return (struct stkt_upd *)(void *)(ts->data + t->upd_ofs);
}

static void touch_quiet_locked(struct stktable *t, struct stkt_shard *sh, struct stksess *ts);

size_t stktable_key_text(const struct stktable *t, const struct stksess *ts, char *out,
                         size_t room)
{
	const unsigned char *key = entry_key(t, ts);
	size_t n = 0;

	if (!room)
		return 0;
	out[0] = 0;
	switch (t->type) {
	case STKT_T_IP:
		inet_ntop(AF_INET, key, out, (socklen_t)room);
		return strlen(out);
	case STKT_T_IPV6:
		inet_ntop(AF_INET6, key, out, (socklen_t)room);
		return strlen(out);
	case STKT_T_INTEGER: {
		uint32_t v;

		memcpy(&v, key, 4);
		return (size_t)snprintf(out, room, "%u", v);
	}
	case STKT_T_STRING:
		n = ts->key_len < room - 1 ? ts->key_len : room - 1;
		memcpy(out, key, n);
		out[n] = 0;
		return n;
	case STKT_T_BINARY:
		for (uint32_t i = 0; i < ts->key_len && n + 3 <= room; i++)
			n += (size_t)snprintf(out + n, room - n, "%02x", key[i]);
		return n;
	}
	return 0;
}

static uint32_t key_hash(const struct stkt_key *k)
{
	return (uint32_t)hash_xxh64(k->ptr, k->len, 0x5354);
}

static struct stkt_shard *shard_of(const struct stktable *t, uint32_t hash)
{
	return &t->shards[hash >> (32 - 6)];
}

/* ------------------------------------------------------------------ tables */

static uint32_t pow2_at_least(long n)
{
	uint32_t v = 1;

	while (v < (uint64_t)n && v < (1u << 30))
		v <<= 1;
	return v;
}

/* Places the stored data types in an entry: 8-byte counters first, for
 * their alignment, then the others in HAProxy's order; the key follows. */
static void layout(struct stktable *t, const int *stored, const uint32_t *period,
                   const uint32_t *nbelem)
{
	/* a table shared with peers keeps its pending-update link first */
	uint32_t ofs = t->upd_ofs >= 0 ? (uint32_t)sizeof(struct stkt_upd) : 0;

	for (int i = 0; i < STKT_DT_COUNT; i++) {
		t->data_ofs[i] = -1;
		t->data_nbelem[i] = nbelem && nbelem[i] ? nbelem[i] : 1;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < STKT_DT_COUNT; i++) {
			size_t sz = dt_size(stkt_dt_defs[i].kind);

			if (!stored[i] || (pass == 0) != (sz == 8))
				continue;
			t->data_ofs[i] = (int)ofs;
			t->data_period[i] = period[i];
			ofs += (uint32_t)(sz * t->data_nbelem[i]);
		}
	}
	t->data_size = (ofs + 7) & ~7u;
	t->entry_size = (uint32_t)sizeof(struct stksess) + t->data_size + t->key_size;
}

int stktable_enable_dt(struct stktable *t, enum stkt_dt dt)
{
	int stored[STKT_DT_COUNT];

	if (t->data_ofs[dt] >= 0)
		return 0;
	if (atomic_load(&t->used))
		return -1;   /* configuration time only: no entry yet */
	for (int i = 0; i < STKT_DT_COUNT; i++)
		stored[i] = t->data_ofs[i] >= 0 || i == (int)dt;
	layout(t, stored, t->data_period, t->data_nbelem);
	return 0;
}

struct stktable *stktable_new(const char *name, const char *file, int line, void *px,
                              const struct stkt_conf *c)
{
	struct stktable *t = calloc(1, sizeof(*t));
	uint32_t nb;

	if (!t)
		return NULL;
	t->name = strdup(name);
	t->file = strdup(file ? file : "");
	t->shards = aligned_alloc(64, sizeof(*t->shards) * STKT_SHARDS);
	if (!t->name || !t->file || !t->shards)
		goto fail;
	t->line = line;
	t->px = px;
	t->type = c->type;
	t->key_size = c->key_size;
	t->size = c->size;
	t->expire_ms = c->expire_ms;
	t->nopurge = c->nopurge;
	t->upd_ofs = c->peers[0] ? 0 : -1;
	if (c->peers[0] && !(t->peers_name = strdup(c->peers)))
		goto fail;
	layout(t, c->stored, c->period, c->nbelem);
	/* about one entry per chain when the table is full */
	nb = pow2_at_least(t->size / STKT_SHARDS);
	if (nb < 4)
		nb = 4;
	if (nb > 16384)
		nb = 16384;
	memset(t->shards, 0, sizeof(*t->shards) * STKT_SHARDS);
	for (int i = 0; i < STKT_SHARDS; i++) {
		struct stkt_shard *sh = &t->shards[i];

		lock_init(&sh->lock, LK_STKTABLE, t->name);
		list_init(&sh->lru);
		list_init(&sh->upd);
		sh->mask = nb - 1;
		sh->buckets = calloc(nb, sizeof(*sh->buckets));
		if (!sh->buckets) {
			for (int j = 0; j <= i; j++) {
				free(t->shards[j].buckets);
				lock_destroy(&t->shards[j].lock);
			}
			goto fail;
		}
	}
	t->exp_tid = -1;
	list_append(&tables, &t->list);
	return t;
fail:
	free(t->peers_name);
	free(t->shards);
	free(t->file);
	free(t->name);
	free(t);
	return NULL;
}

struct stktable *stktable_find(const char *name)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &tables) {
		struct stktable *t = list_elem(pos, struct stktable, list);

		if (!strcmp(t->name, name))
			return t;
	}
	return NULL;
}

struct stktable *stktable_first(void)
{
	return list_empty(&tables) ? NULL : list_elem(tables.next, struct stktable, list);
}

struct stktable *stktable_next(struct stktable *t)
{
	return t->list.next == &tables ? NULL : list_elem(t->list.next, struct stktable, list);
}

void stktable_free_all(void)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &tables) {
		struct stktable *t = list_elem(pos, struct stktable, list);

		for (int i = 0; i < STKT_SHARDS; i++) {
			struct stkt_shard *sh = &t->shards[i];
			struct list *e, *n;

			list_for_each_safe(e, n, &sh->lru)
				free(list_elem(e, struct stksess, lru));
			free(sh->buckets);
			lock_destroy(&sh->lock);
		}
		list_del_init(&t->list);
		free(t->peers_name);
		free(t->nid);
		free(t->shards);
		free(t->file);
		free(t->name);
		free(t);
	}
}

/* ------------------------------------------------------------------ entries */

/* Under the shard's lock. */
static struct stksess *chain_find(const struct stktable *t, struct stkt_shard *sh,
                                  const struct stkt_key *k, uint32_t hash)
{
	struct stksess *ts = sh->buckets[hash & sh->mask];

	for (; ts; ts = ts->hnext)
		if (ts->hash == hash && ts->key_len == k->len &&
		    !memcmp(entry_key(t, ts), k->ptr, k->len))
			return ts;
	return NULL;
}

/* Unlinks and frees <ts> (unreferenced) under the shard's lock. */
static void entry_free_locked(struct stktable *t, struct stkt_shard *sh, struct stksess *ts)
{
	struct stksess **pp = &sh->buckets[ts->hash & sh->mask];

	while (*pp && *pp != ts)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = ts->hnext;
	list_del_init(&ts->lru);
	if (t->upd_ofs >= 0)
		list_del_init(&upd_of(t, ts)->link);
	sh->count--;
	atomic_fetch_sub_explicit(&t->used, 1, memory_order_relaxed);
	free(ts);
}

/* A local update: the entry becomes pending for every remote peer with a
 * session, and goes to the tail of its shard's upd list (O(1)). */
static void upd_mark_locked(struct stktable *t, struct stkt_shard *sh, struct stksess *ts)
{
	struct stkt_upd *u = upd_of(t, ts);
	uint64_t live = atomic_load_explicit(&t->peers_live, memory_order_relaxed);

	if (!live)
		return;
	u->pend |= live;
	list_del_init(&u->link);
	list_append(&sh->upd, &u->link);
}

static void touch_locked(struct stktable *t, struct stkt_shard *sh, struct stksess *ts)
{
	if (t->upd_ofs >= 0)
		upd_mark_locked(t, sh, ts);
	touch_quiet_locked(t, sh, ts);
}

static void touch_quiet_locked(struct stktable *t, struct stkt_shard *sh, struct stksess *ts)
{
	if (t->expire_ms)
		atomic_store_explicit(&ts->expire, stkt_now_ms() + (uint64_t)t->expire_ms,
		                      memory_order_relaxed);
	ts->touched = sched_now_ns();
	list_del_init(&ts->lru);
	list_append(&sh->lru, &ts->lru);
}

/* The least recently used unreferenced entry among the first
 * STKT_EVICT_SCAN of a shard's list, or NULL. Under the shard's lock. */
static struct stksess *shard_victim(struct stkt_shard *sh)
{
	struct list *pos, *tmp;
	int scanned = 0;

	list_for_each_safe(pos, tmp, &sh->lru) {
		struct stksess *ts = list_elem(pos, struct stksess, lru);

		if (++scanned > STKT_EVICT_SCAN)
			break;
		if (!atomic_load_explicit(&ts->ref, memory_order_relaxed))
			return ts;
	}
	return NULL;
}

/* Frees the least recently used unreferenced entry among those heading
 * the lists of up to STKT_EVICT_SHARDS non-empty shards, from <start> on:
 * an exact LRU for small tables, a sampled one (as Redis does) for large
 * ones. One shard lock at a time. 1 if an entry was freed. */
static int evict_one(struct stktable *t, uint32_t start)
{
	uint64_t best_touch = UINT64_MAX;
	int best = -1, seen = 0;
	struct stkt_shard *sh;
	struct stksess *ts;

	for (int n = 0; n < STKT_SHARDS && seen < STKT_EVICT_SHARDS; n++) {
		int i = (int)((start + (uint32_t)n) % STKT_SHARDS);

		sh = &t->shards[i];
		if (!sh->count)   /* racy peek: an empty shard is skipped unlocked */
			continue;
		seen++;
		lock_take(&sh->lock);
		ts = shard_victim(sh);
		if (ts && ts->touched < best_touch) {
			best_touch = ts->touched;
			best = i;
		}
		lock_release(&sh->lock);
	}
	if (best < 0)
		return 0;
	/* the chosen shard may have changed meanwhile: take its victim of now */
	sh = &t->shards[best];
	lock_take(&sh->lock);
	ts = shard_victim(sh);
	if (ts)
		entry_free_locked(t, sh, ts);
	lock_release(&sh->lock);
	if (ts)
		atomic_fetch_add_explicit(&t->n_evicted, 1, memory_order_relaxed);
	return ts != NULL;
}

/* Reserves a place for a new entry: 1, or 0 when the table is full and
 * nothing can be evicted. */
static int reserve_place(struct stktable *t, uint32_t hash)
{
	for (int tries = 0; tries < STKT_GET_TRIES; tries++) {
		long used = atomic_fetch_add_explicit(&t->used, 1, memory_order_relaxed);

		if (used < t->size)
			return 1;
		atomic_fetch_sub_explicit(&t->used, 1, memory_order_relaxed);
		if (t->nopurge || !evict_one(t, hash >> (32 - 6)))
			break;
	}
	atomic_fetch_add_explicit(&t->n_refused, 1, memory_order_relaxed);
	return 0;
}

static struct stksess *entry_new(struct stktable *t, const struct stkt_key *k, uint32_t hash)
{
	struct stksess *ts = malloc(t->entry_size);

	if (!ts)
		return NULL;
	memset(ts, 0, sizeof(*ts) + t->data_size);
	ts->hash = hash;
	ts->key_len = k->len;
	list_init(&ts->lru);
	memcpy(ts->data + t->data_size, k->ptr, k->len);
	if (t->upd_ofs >= 0)
		list_init(&upd_of(t, ts)->link);
	/* rates start their first period now */
	for (int i = 0; i < STKT_DT_COUNT; i++)
		if (t->data_ofs[i] >= 0 && stkt_dt_defs[i].kind == STKT_K_FRQ)
			for (uint32_t e = 0; e < t->data_nbelem[i]; e++)
				freq_ctr_set((struct freq_ctr *)(ts->data + t->data_ofs[i]) + e,
				        (uint32_t)stkt_now_ms(), 0);
	return ts;
}

static void touch_how(struct stktable *t, struct stkt_shard *sh, struct stksess *ts, int quiet)
{
	if (quiet)
		touch_quiet_locked(t, sh, ts);
	else
		touch_locked(t, sh, ts);
}

static struct stksess *get_ref(struct stktable *t, const struct stkt_key *k, int quiet);

struct stksess *stktable_get_ref(struct stktable *t, const struct stkt_key *k)
{
	return get_ref(t, k, 0);
}

struct stksess *stktable_get_ref_remote(struct stktable *t, const struct stkt_key *k)
{
	return get_ref(t, k, 1);
}

static struct stksess *get_ref(struct stktable *t, const struct stkt_key *k, int quiet)
{
	uint32_t hash = key_hash(k);
	struct stkt_shard *sh = shard_of(t, hash);
	struct stksess *ts, *fresh;

	lock_take(&sh->lock);
	ts = chain_find(t, sh, k, hash);
	if (ts) {
		atomic_fetch_add_explicit(&ts->ref, 1, memory_order_relaxed);
		touch_how(t, sh, ts, quiet);
		lock_release(&sh->lock);
		return ts;
	}
	lock_release(&sh->lock);

	/* a new entry: its place and memory are found without the lock */
	if (!reserve_place(t, hash))
		return NULL;
	fresh = entry_new(t, k, hash);
	if (!fresh) {
		atomic_fetch_sub_explicit(&t->used, 1, memory_order_relaxed);
		return NULL;
	}
	lock_take(&sh->lock);
	ts = chain_find(t, sh, k, hash);
	if (ts) {
		/* another thread created it meanwhile */
		atomic_fetch_add_explicit(&ts->ref, 1, memory_order_relaxed);
		touch_how(t, sh, ts, quiet);
		lock_release(&sh->lock);
		atomic_fetch_sub_explicit(&t->used, 1, memory_order_relaxed);
		free(fresh);
		return ts;
	}
	fresh->hnext = sh->buckets[hash & sh->mask];
	sh->buckets[hash & sh->mask] = fresh;
	sh->count++;
	fresh->ref = 1;
	touch_how(t, sh, fresh, quiet);
	lock_release(&sh->lock);
	return fresh;
}

void stktable_ref(struct stksess *ts)
{
	/* the caller's own reference keeps the entry alive: no lock needed */
	atomic_fetch_add_explicit(&ts->ref, 1, memory_order_relaxed);
}

void stktable_release(struct stktable *t, struct stksess *ts)
{
	struct stkt_shard *sh = shard_of(t, ts->hash);

	lock_take(&sh->lock);
	touch_locked(t, sh, ts);
	atomic_fetch_sub_explicit(&ts->ref, 1, memory_order_relaxed);
	lock_release(&sh->lock);
}

void stktable_release_remote(struct stktable *t, struct stksess *ts, int expire_ms)
{
	struct stkt_shard *sh = shard_of(t, ts->hash);

	lock_take(&sh->lock);
	touch_quiet_locked(t, sh, ts);
	/* a timed update brings the remote expiry: keep the LRU order (the
	 * list is in touch order) and only shorten this entry's date */
	if (expire_ms >= 0 && t->expire_ms && expire_ms < t->expire_ms)
		atomic_store_explicit(&ts->expire, stkt_now_ms() + (uint64_t)(expire_ms ? expire_ms : 1),
		                      memory_order_relaxed);
	atomic_fetch_sub_explicit(&ts->ref, 1, memory_order_relaxed);
	lock_release(&sh->lock);
}

int stktable_upd_collect(struct stktable *t, int shard, int bit, int max,
                         int (*fn)(struct stktable *t, struct stksess *ts, void *arg),
                         void *arg, int *more)
{
	struct stkt_shard *sh = &t->shards[shard];
	uint64_t mask = 1ull << bit;
	uint64_t live = atomic_load_explicit(&t->peers_live, memory_order_relaxed);
	struct list *pos, *tmp;
	int n = 0, skipped = 0;

	if (t->upd_ofs < 0 || list_empty(&sh->upd))   /* racy peek: re-checked next run */
		return 0;
	lock_take(&sh->lock);
	list_for_each_safe(pos, tmp, &sh->upd) {
		struct stkt_upd *u = list_elem(pos, struct stkt_upd, link);
		struct stksess *ts = (struct stksess *)(void *)((char *)u - t->upd_ofs -
		                                                 offsetof(struct stksess, data));

		if (n >= max || skipped >= 8 * max) {
			*more = 1;
			break;
		}
		/* a peer whose session ended gets everything again with its
		 * next session: its bits are dropped here */
		u->pend &= live;
		if (!u->pend) {
			list_del_init(&u->link);
			skipped++;
			continue;
		}
		if (!(u->pend & mask)) {
			/* pending for another peer only: cheaper than our own, but
			 * bounded too */
			skipped++;
			continue;
		}
		n++;
		if (fn(t, ts, arg)) {
			*more = 1;
			break;
		}
		u->pend &= ~mask;
		if (!u->pend)
			list_del_init(&u->link);
	}
	lock_release(&sh->lock);
	return n;
}

int stktable_teach_walk(struct stktable *t, int shard, uint32_t *bucket, int max,
                        int (*fn)(struct stktable *t, struct stksess *ts, void *arg),
                        void *arg)
{
	struct stkt_shard *sh = &t->shards[shard];
	int done = 0;

	lock_take(&sh->lock);
	for (int n = 0; n < max; n++) {
		struct stksess *ts;

		if (*bucket > sh->mask) {
			done = 1;
			break;
		}
		for (ts = sh->buckets[*bucket]; ts; ts = ts->hnext)
			if (fn(t, ts, arg))
				break;
		if (ts)
			break;   /* no room: this bucket again next time */
		(*bucket)++;
	}
	if (*bucket > sh->mask)
		done = 1;
	lock_release(&sh->lock);
	return done;
}

void stktable_touch(struct stktable *t, struct stksess *ts)
{
	touch_locked(t, shard_of(t, ts->hash), ts);
}

struct stksess *stktable_lookup_lock(struct stktable *t, const struct stkt_key *k)
{
	uint32_t hash = key_hash(k);
	struct stkt_shard *sh = shard_of(t, hash);
	struct stksess *ts;

	lock_take(&sh->lock);
	ts = chain_find(t, sh, k, hash);
	if (!ts)
		lock_release(&sh->lock);
	return ts;
}

void stktable_unlock(struct stktable *t, const struct stksess *ts)
{
	lock_release(&shard_of(t, ts->hash)->lock);
}

int stktable_remove(struct stktable *t, const struct stkt_key *k)
{
	struct stksess *ts = stktable_lookup_lock(t, k);
	struct stkt_shard *sh;

	if (!ts)
		return 0;
	sh = shard_of(t, ts->hash);
	if (atomic_load_explicit(&ts->ref, memory_order_relaxed)) {
		lock_release(&sh->lock);
		return -1;
	}
	entry_free_locked(t, sh, ts);
	lock_release(&sh->lock);
	return 1;
}

void stktable_walk(struct stktable *t, int (*fn)(struct stktable *t, struct stksess *ts,
                                                void *arg), void *arg)
{
	for (int i = 0; i < STKT_SHARDS; i++) {
		struct stkt_shard *sh = &t->shards[i];
		struct list *pos, *tmp;
		int stop = 0;

		lock_take(&sh->lock);
		list_for_each_safe(pos, tmp, &sh->lru) {
			if (fn(t, list_elem(pos, struct stksess, lru), arg)) {
				stop = 1;
				break;
			}
		}
		lock_release(&sh->lock);
		if (stop)
			return;
	}
}

long stktable_purge(struct stktable *t, int (*fn)(struct stktable *t, struct stksess *ts,
                                                  void *arg), void *arg)
{
	long n = 0;

	for (int i = 0; i < STKT_SHARDS; i++) {
		struct stkt_shard *sh = &t->shards[i];
		struct list *pos, *tmp;

		lock_take(&sh->lock);
		list_for_each_safe(pos, tmp, &sh->lru) {
			struct stksess *ts = list_elem(pos, struct stksess, lru);

			if (atomic_load_explicit(&ts->ref, memory_order_relaxed))
				continue;
			if (fn && !fn(t, ts, arg))
				continue;
			entry_free_locked(t, sh, ts);
			n++;
		}
		lock_release(&sh->lock);
	}
	return n;
}

/* ------------------------------------------------------------------ expiry */

/* Frees the expired unreferenced entries at the head of one shard's list,
 * at most STKT_EXP_BATCH examined. A referenced head is moved to the tail
 * (its tracker pushes its expiry back when it releases it). Returns the
 * number examined; *more is set when expired entries may remain. */
static int expire_shard(struct stktable *t, struct stkt_shard *sh, uint64_t now, int *more)
{
	int n = 0;

	lock_take(&sh->lock);
	while (!list_empty(&sh->lru) && n < STKT_EXP_BATCH) {
		struct stksess *ts = list_elem(sh->lru.next, struct stksess, lru);
		uint64_t exp = atomic_load_explicit(&ts->expire, memory_order_relaxed);

		if (!exp || exp > now)
			break;
		n++;
		if (atomic_load_explicit(&ts->ref, memory_order_relaxed)) {
			atomic_store_explicit(&ts->expire, now + (uint64_t)t->expire_ms,
			                      memory_order_relaxed);
			list_del_init(&ts->lru);
			list_append(&sh->lru, &ts->lru);
			continue;
		}
		entry_free_locked(t, sh, ts);
		atomic_fetch_add_explicit(&t->n_expired, 1, memory_order_relaxed);
	}
	if (n == STKT_EXP_BATCH)
		*more = 1;
	lock_release(&sh->lock);
	return n;
}

static struct task *expire_task(struct task *task, void *ctx, unsigned int state)
{
	struct stktable *t = ctx;
	uint64_t now = stkt_now_ms();
	int budget = STKT_EXP_BUDGET, more = 0, period;

	for (int n = 0; n < STKT_SHARDS && budget > 0; n++) {
		struct stkt_shard *sh = &t->shards[t->exp_cursor];

		t->exp_cursor = (t->exp_cursor + 1) % STKT_SHARDS;
		if (!sh->count)
			continue;
		budget -= expire_shard(t, sh, now, &more) + 1;
	}
	if (budget <= 0)
		more = 1;
	/* expiry is precise to a tenth of the delay, between 10 ms and 1 s */
	period = t->expire_ms / 10;
	if (period < 10)
		period = 10;
	if (period > 1000)
		period = 1000;
	task_set_expire(task, more ? now + 1 : now + (uint64_t)period);
	return task;
}

/* One expiry task per table that has an expire delay, spread over the
 * threads. */
static int stktable_thread_init(int tid)
{
	int i = 0;

	for (struct stktable *t = stktable_first(); t; t = stktable_next(t), i++) {
		if (!t->expire_ms || i % global.nbthread != tid)
			continue;
		t->exp_task = task_new(expire_task, t, tid, TC_BULK, "stktable_expire");
		if (!t->exp_task)
			return -1;
		t->exp_tid = tid;
		task_set_expire(t->exp_task, stkt_now_ms() + 10);
	}
	return 0;
}

static void stktable_thread_deinit(int tid)
{
	for (struct stktable *t = stktable_first(); t; t = stktable_next(t)) {
		if (t->exp_task && t->exp_tid == tid) {
			task_destroy(t->exp_task);
			t->exp_task = NULL;
		}
	}
}

static struct thread_init_hook stktable_hook = {
	.fn = stktable_thread_init,
	.deinit = stktable_thread_deinit,
};

__attribute__((constructor)) static void stktable_register(void)
{
	thread_register_init(&stktable_hook);
}
