/* The HTTP cache, HTTP side: `cache` sections, `http-request cache-use`,
 * `http-response cache-store`, `filter cache`, the fetches res.cache_hit
 * and res.cache_name, `show cache`, and the hooks through which a stream
 * stores a response while it streams and serves a hit.
 *
 * Configuration time (one thread): sections become struct cache_cfg; the
 * actions and filters name a cache that may be declared further down, so
 * they are resolved by a post-parse hook, which also checks the order of
 * the cache and compression filters as HAProxy 2.6 does, and creates each
 * cache's store (src/http/cache_store.c).
 *
 * Run time (each stream's owner thread): the store is the only shared
 * state; what a transaction holds (its key, the hit it will serve, the
 * object it writes) is in its struct cache_txn. A hit is served like a
 * service (stream_reply.c): its head is put in the response buffer and
 * parsed back, its body copied from the object as the client drains the
 * buffer; the object stays referenced until then.
 *
 * What may be stored or served follows HAProxy 2.6 (checked against it by
 * reg-tests/cache/): only GET (HEAD is answered from a stored GET) over
 * HTTP/1.1 or later, no Authorization; a 200 with an explicit lifetime or
 * a validator; the request's and response's Cache-Control and Pragma as in
 * cache_request_flags() and response_lifetime().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/random.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/expr/hash.h>
#include <sluice/expr/sample.h>
#include <sluice/http/act.h>
#include <sluice/http/cache.h>
#include <sluice/http/cache_txn.h>
#include <sluice/http/comp.h>
#include <sluice/http/h1_out.h>
#include <sluice/http/msgedit.h>
#include <sluice/http/txn.h>
#include <sluice/mgmt/cli.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stream.h>
#include <sluice/proxy/stream_int.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

struct cache_cfg {
	struct cache_cfg *next;
	char *name;
	char *file;
	int line;
	long total_mb;               /* total-max-size */
	long max_object;             /* max-object-size, bytes (0: a 256th) */
	long max_age;                /* seconds */
	int process_vary;
	long max_secondary;
	struct cache_store *store;
	struct task *purge_task;     /* on thread purge_tid (cache_thread_init()) */
	int purge_tid;
};

/* A proxy's use of caches: its `filter cache` line and the names its
 * rules give, checked after parsing. */
struct cache_px {
	struct cache_px *next;
	struct proxy *px;
	int filter_line;             /* `filter cache`, 0: implicit */
	char *filter_name;
	char *filter_file;
	int rule_line;               /* first cache-use / cache-store rule */
	char *rule_file;
	char *rule_name;
};

/* The argument of a cache-use / cache-store rule. */
struct cache_rule_arg {
	char *name;
	struct cache_cfg *cache;     /* resolved after parsing */
	struct cache_rule_arg *next_ref;
	char *file;
	int line;
	struct proxy *px;
};

static struct cache_cfg *cur_cache;
/* drawn at start-up: nobody outside can aim requests at one shard or
 * chain (the keys live in memory only, so they need not be stable) */
static uint64_t key_seed;
static struct cache_px *cache_pxs;
static struct cache_rule_arg *rule_refs;

/* the meta slots of an object (cache_obj_meta()) */
enum {
	META_HEAD_LEN = 0,   /* bytes of the stored head */
	META_ETAG,           /* offset << 32 | length of the ETag value in the head, 0: none */
	META_LAST_MOD,       /* Last-Modified (else Date, else storage) in epoch seconds */
	META_AGE,            /* the Age the server gave, seconds */
	META_STORED_S,       /* loop clock seconds at storage */
	META_VARY,           /* VARY_* the response varies on (0: none) */
	META_ENCODING,       /* its content-coding's bit (VARY_AE) */
	META_REFERER,        /* the hash of the Referer it was stored for (VARY_REF) */
};

static int cache_begin(KW_ARGS);
static int kw_total(KW_ARGS);
static int kw_max_object(KW_ARGS);
static int kw_max_age(KW_ARGS);
static int kw_process_vary(KW_ARGS);
static int kw_max_secondary(KW_ARGS);

static const struct cfg_kw cache_kws[] = {
	{ "total-max-size",        NULL, CFG_SEC_CACHE, kw_total },
	{ "max-object-size",       NULL, CFG_SEC_CACHE, kw_max_object },
	{ "max-age",               NULL, CFG_SEC_CACHE, kw_max_age },
	{ "process-vary",          NULL, CFG_SEC_CACHE, kw_process_vary },
	{ "max-secondary-entries", NULL, CFG_SEC_CACHE, kw_max_secondary },
	{ NULL }
};
CFG_REGISTER(cache_kws)

static struct cfg_section_def cache_section = {
	.name = "cache", .sec = CFG_SEC_CACHE, .begin = cache_begin,
};

static int parse_cache_rule(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static enum act_verdict exec_cache_use(const struct act_rule *, struct act_env *);
static enum act_verdict exec_cache_store(const struct act_rule *, struct act_env *);
static void free_cache_rule(void *arg);

static const struct act_kw cache_act_kws[] = {
	{ "cache-use",   ACT_F_HTTP_REQ, parse_cache_rule, exec_cache_use, free_cache_rule },
	{ "cache-store", ACT_F_HTTP_RES, parse_cache_rule, exec_cache_store, free_cache_rule },
	{ NULL }
};
ACT_REGISTER(cache_act_kws)

static int smp_fetch_cache_hit(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_cache_name(const struct smp_args *, struct sample *, struct smp_ctx *);

static const struct smp_fetch_kw cache_fetches[] = {
	{ "res.cache_hit",  smp_fetch_cache_hit,  { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_HRSHP },
	{ "res.cache_name", smp_fetch_cache_name, { 0 }, 0, NULL, SMP_T_STR,  SMP_USE_HRSHP },
	{ NULL }
};
SMP_REGISTER_FETCHES(cache_fetches)

static int cli_show_cache(char **args, int nargs, struct cli_out *out, int level);

static const struct cli_kw cache_cli_kws[] = {
	{ { "show", "cache" }, CLI_LEVEL_OPERATOR, cli_show_cache,
	  "show cache                              : show cache status" },
	{ { NULL } }
};
CLI_REGISTER(cache_cli_kws)

/* where cache-store renders a head: the thread's own, given back when the
 * thread ends */
static __thread char *head_scratch;

static struct cache_cfg *caches;

/* Each cache has a task that takes expired objects out, a few shards per
 * run (at most 64 objects each), on thread (i % nbthread) for the i-th
 * cache: every shard is visited about once a second, and no run is long. */
#define PURGE_SHARDS_PER_RUN 8
#define PURGE_PERIOD_MS      250

static struct task *purge_task(struct task *task, void *ctx, unsigned int state)
{
	struct cache_cfg *c = ctx;
	uint32_t now = (uint32_t)time(NULL);

	for (int i = 0; i < PURGE_SHARDS_PER_RUN; i++)
		cache_store_purge(c->store, now, 64);
	task_set_expire(task, th_ctx->now_ms + PURGE_PERIOD_MS);
	return task;
}

static int cache_thread_init(int tid)
{
	int i = 0;

	for (struct cache_cfg *c = caches; c; c = c->next, i++) {
		if (!c->store || i % global.nbthread != tid)
			continue;
		c->purge_task = task_new(purge_task, c, tid, TC_BULK, "cache_purge");
		if (!c->purge_task)
			return -1;
		c->purge_tid = tid;
		task_set_expire(c->purge_task, th_ctx->now_ms + PURGE_PERIOD_MS);
	}
	return 0;
}

static void cache_thread_deinit(int tid)
{
	for (struct cache_cfg *c = caches; c; c = c->next) {
		if (c->purge_task && c->purge_tid == tid) {
			task_destroy(c->purge_task);
			c->purge_task = NULL;
		}
	}
	free(head_scratch);
	head_scratch = NULL;
}

static struct thread_init_hook cache_thread_hook = {
	.fn = cache_thread_init,
	.deinit = cache_thread_deinit,
};

static uint32_t now_s(void)
{
	/* wall-clock seconds, as HAProxy dates its objects: Age and expiry
	 * tick when the clients' clocks do (time() is a vDSO read) */
	return (uint32_t)time(NULL);
}

static struct cache_cfg *cache_find(const char *name)
{
	for (struct cache_cfg *c = caches; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* ---- the section ---- */

static int cache_begin(KW_ARGS)
{
	struct cache_cfg *c, **tail;

	cur_cache = NULL;
	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "'cache' expects a <name> argument");
	if (cache_find(args[1]))
		return errmsg_set(err, errlen, "Duplicate cache name '%s'.", args[1]);
	c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(args[1])) || !(c->file = strdup(ctx->file))) {
		if (c)
			free(c->name);
		free(c);
		return errmsg_set(err, errlen, "out of memory");
	}
	c->line = ctx->line;
	c->max_age = 60;
	c->max_secondary = 10;
	for (tail = &caches; *tail; tail = &(*tail)->next)
		;
	*tail = c;
	cur_cache = c;
	return 0;
}

/* A whole non-negative decimal number, or -1. */
static long whole_number(const char *s)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	v = strtol(s, &end, 10);
	return *end ? -1 : v;
}

static int kw_total(KW_ARGS)
{
	long v;

	if (!cur_cache)
		return 0;
	v = whole_number(nargs > 1 ? args[1] : NULL);
	if (v < 0)
		return errmsg_set(err, errlen, "total-max-size wrong value '%s'",
		                  nargs > 1 ? args[1] : "");
	if (v > 4095)
		return errmsg_set(err, errlen, "\"total-max-size\" (%ld) must not be greater than "
		                  "4095", v);
	cur_cache->total_mb = v;
	return 0;
}

static int kw_max_object(KW_ARGS)
{
	long v;

	if (!cur_cache)
		return 0;
	v = whole_number(nargs > 1 ? args[1] : NULL);
	if (v < 0 || v > 0x7fffffffL)
		return errmsg_set(err, errlen, "max-object-size wrong value '%s'",
		                  nargs > 1 ? args[1] : "");
	cur_cache->max_object = v;
	return 0;
}

static int kw_max_age(KW_ARGS)
{
	long v;

	if (!cur_cache)
		return 0;
	if (nargs < 2)
		return errmsg_set(err, errlen, "max-age expects a number of seconds");
	/* HAProxy reads it with atoi(): "abc" is 0 */
	v = atol(args[1]);
	cur_cache->max_age = v < 0 ? 0 : v;
	return 0;
}

static int kw_process_vary(KW_ARGS)
{
	if (!cur_cache)
		return 0;
	if (nargs > 1 && strcmp(args[1], "on") == 0)
		cur_cache->process_vary = 1;
	else if (nargs > 1 && strcmp(args[1], "off") == 0)
		cur_cache->process_vary = 0;
	else
		/* a warning in HAProxy 2.6, which leaves the setting as it was */
		cfg_warning(ctx->file, ctx->line, "'process-vary' expects \"on\" or \"off\" "
		            "(enable or disable vary processing).");
	return 0;
}

static int kw_max_secondary(KW_ARGS)
{
	long v;

	if (!cur_cache)
		return 0;
	v = whole_number(nargs > 1 ? args[1] : NULL);
	if (v <= 0 || v > 0xffff)
		return errmsg_set(err, errlen, "max-secondary-entries wrong value '%s'",
		                  nargs > 1 ? args[1] : "");
	cur_cache->max_secondary = v;
	return 0;
}

/* ---- proxies: filter cache, cache-use, cache-store ---- */

static struct cache_px *px_entry(struct proxy *px)
{
	struct cache_px *p;

	for (p = cache_pxs; p; p = p->next)
		if (p->px == px)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->px = px;
	p->next = cache_pxs;
	cache_pxs = p;
	return p;
}

int cache_filter_kw(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	struct cache_px *p;

	if (nargs < 3 || !*args[2])
		return errmsg_set(err, errlen, "'cache : expects a <name> argument'");
	if (nargs > 3)
		return errmsg_set(err, errlen, "'cache' : unknown keyword '%s'.", args[3]);
	if (!(p = px_entry(ctx->px)))
		return errmsg_set(err, errlen, "out of memory");
	if (p->filter_line)
		return errmsg_set(err, errlen, "only one 'filter cache' per proxy (the first one "
		                  "is at line %d)", p->filter_line);
	free(p->filter_name);
	free(p->filter_file);
	p->filter_name = strdup(args[2]);
	p->filter_file = strdup(ctx->file);
	if (!p->filter_name || !p->filter_file)
		return errmsg_set(err, errlen, "out of memory");
	p->filter_line = ctx->line;
	return 0;
}

static int parse_cache_rule(struct act_rule *r, struct proxy *px, char **args, int nargs,
                            char *err, size_t errlen)
{
	struct cache_rule_arg *a;
	struct cache_px *p;

	if (nargs < 1 || !*args[0])
		return errmsg_set(err, errlen, "expects a cache name.");
	if (nargs > 1)
		return errmsg_set(err, errlen, "expects only one cache name, not '%s'.", args[1]);
	a = calloc(1, sizeof(*a));
	if (!a || !(a->name = strdup(args[0])) || !(a->file = strdup(r->file ? r->file : ""))) {
		if (a) {
			free(a->name);
			free(a);
		}
		return errmsg_set(err, errlen, "out of memory");
	}
	a->line = r->line;
	a->px = px;
	r->arg = a;
	a->next_ref = rule_refs;
	rule_refs = a;
	if ((p = px_entry(px)) && !p->rule_line) {
		p->rule_line = r->line;
		p->rule_file = strdup(r->file ? r->file : "");
		p->rule_name = strdup(args[0]);
	}
	return 0;
}

static void free_cache_rule(void *arg)
{
	struct cache_rule_arg *a = arg, **pp;

	if (!a)
		return;
	for (pp = &rule_refs; *pp; pp = &(*pp)->next_ref)
		if (*pp == a) {
			*pp = a->next_ref;
			break;
		}
	free(a->name);
	free(a->file);
	free(a);
}

/* ---- after parsing ---- */

static int caches_finish(void)
{
	int errors = 0;

	if (!key_seed && getrandom(&key_seed, sizeof(key_seed), 0) != sizeof(key_seed))
		key_seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;

	for (struct cache_cfg *c = caches; c; c = c->next) {
		uint64_t total = (uint64_t)c->total_mb << 20;

		if (!c->total_mb) {
			cfg_alert(c->file, c->line, "Size not specified for cache '%s'", c->name);
			errors++;
			continue;
		}
		if (!c->max_object)
			c->max_object = (long)(total / 256);
		if ((uint64_t)c->max_object > total / 2) {
			cfg_alert(c->file, c->line, "\"max-object-size\" is limited to an half of "
			          "\"total-max-size\" => %llu", (unsigned long long)(total / 2));
			errors++;
			continue;
		}
		if (!c->store && !(c->store = cache_store_new(total, 5))) {
			cfg_alert(c->file, c->line, "cache '%s': out of memory", c->name);
			errors++;
		}
	}
	for (struct cache_rule_arg *a = rule_refs; a; a = a->next_ref) {
		a->cache = cache_find(a->name);
		if (!a->cache) {
			cfg_alert(a->file, a->line, "proxy '%s': unable to find the cache '%s' "
			          "referenced by the filter 'cache'.", a->px->name ? a->px->name : "",
			          a->name);
			errors++;
		}
	}
	for (struct cache_px *p = cache_pxs; p; p = p->next) {
		int comp_line = p->px->comp ? p->px->comp->filter_line : 0;
		const char *name = p->filter_line ? p->filter_name : p->rule_name;
		const char *file = p->filter_line ? p->filter_file : p->rule_file;
		int line = p->filter_line ? p->filter_line : p->rule_line;

		if (p->filter_line && !cache_find(p->filter_name)) {
			cfg_alert(file, line, "proxy '%s': unable to find the cache '%s' referenced "
			          "by the filter 'cache'.", p->px->name ? p->px->name : "",
			          p->filter_name);
			errors++;
			continue;
		}
		/* explicit filters run in their order: the cache must see the
		 * response before the compression (HAProxy 2.6) */
		if (comp_line && (!p->filter_line || comp_line < p->filter_line)) {
			cfg_alert(file, line, "proxy '%s': unable to enable the compression filter "
			          "before the cache '%s'.", p->px->name ? p->px->name : "",
			          name ? name : "");
			errors++;
		}
	}
	return errors;
}

static struct cfg_post_hook cache_post = { .fn = caches_finish, .order = 42 };

void caches_free_all(void)
{
	while (caches) {
		struct cache_cfg *n = caches->next;

		cache_store_free(caches->store);
		free(caches->name);
		free(caches->file);
		free(caches);
		caches = n;
	}
	while (cache_pxs) {
		struct cache_px *n = cache_pxs->next;

		free(cache_pxs->filter_name);
		free(cache_pxs->filter_file);
		free(cache_pxs->rule_file);
		free(cache_pxs->rule_name);
		free(cache_pxs);
		cache_pxs = n;
	}
	cur_cache = NULL;
}

__attribute__((constructor)) static void cache_register(void)
{
	thread_register_init(&cache_thread_hook);
	cfg_register_section(&cache_section);
	cfg_register_post(&cache_post);
}

/* ---- the request: key, what it allows, look-up ---- */

static int has_hdr(const struct http_msg *m, struct ist name)
{
	return http_hdr_find(m, name, 0) >= 0;
}

/* HAProxy 2.6's reading of a request: what it lets the cache do. */
static unsigned int cache_request_flags(const struct stream *s, const struct http_msg *m)
{
	struct http_hdr_iter it;
	struct cache_cc cc = { 0 };
	unsigned int f = 0;
	int cc_found = 0, pragma = 0;
	struct ist v;

	if (m->meth != HTTP_METH_GET && m->meth != HTTP_METH_HEAD)
		return CACHE_RQ_NO_SERVE | CACHE_RQ_NO_STORE;
	if (m->meth == HTTP_METH_HEAD)
		f |= CACHE_RQ_NO_STORE;   /* a HEAD is answered from a GET, never stored */
	/* HTTP/1.0 clients are neither served nor stored for (an HTTP/2
	 * request counts as 1.1) */
	if (!(m->flags & HTTP_F_VER_11) && !s->h2s)
		return CACHE_RQ_NO_SERVE | CACHE_RQ_NO_STORE;
	if (has_hdr(m, IST("authorization")))
		return CACHE_RQ_NO_SERVE | CACHE_RQ_NO_STORE;
	http_hdr_iter_init(&it);
	while (http_hdr_next(m, IST("pragma"), 1, &it, &v))
		if (v.len >= 8 && strncasecmp(v.ptr, "no-cache", 8) == 0)
			pragma = 1;
	http_hdr_iter_init(&it);
	while (http_hdr_next(m, IST("cache-control"), 0, &it, &v)) {
		cc_found = 1;
		cache_cc_parse(v.ptr, v.len, &cc);
	}
	/* RFC 9111 section 5.4 has Pragma count only without Cache-Control;
	 * HAProxy 2.6 bypasses the cache for a Pragma next to one too, and
	 * for freshness wishes it does not implement (max-age, max-stale,
	 * min-fresh) */
	if (cc.no_cache || pragma || cc.fresh_ctl)
		f |= CACHE_RQ_NO_SERVE;
	(void)cc_found;
	if (cc.no_store)
		f |= CACHE_RQ_NO_STORE;
	return f;
}

/* The primary key: the authority and the target, so that a request over
 * HTTP/1 and the same over HTTP/2 share their objects. */
static void request_key(const struct http_msg *m, uint64_t *h1, uint64_t *h2)
{
	struct ist host = { "", 0 }, target = m->uri;
	const char *p = m->uri.ptr, *end = m->uri.ptr + m->uri.len;

	if (target.len && target.ptr[0] != '/' && target.ptr[0] != '*') {
		/* absolute form: scheme "://" authority path */
		const char *a = memchr(p, ':', (size_t)(end - p));

		if (a && end - a >= 3 && a[1] == '/' && a[2] == '/') {
			const char *q;

			a += 3;
			for (q = a; q < end && *q != '/' && *q != '?'; q++)
				;
			host = (struct ist){ a, (size_t)(q - a) };
			target = (struct ist){ q, (size_t)(end - q) };
		}
	} else {
		http_hdr_occ(m, IST("host"), 1, 0, &host);
	}
	*h1 = hash_xxh64(host.ptr, host.len, key_seed ^ 0x5c);
	*h1 = hash_xxh64(target.ptr, target.len, *h1);
	*h2 = hash_xxh3_64(target.ptr, target.len, hash_xxh3_64(host.ptr, host.len, key_seed ^ 0x17));
	if (!*h1)
		*h1 = 1;
}

/* Vary on these request fields only (HAProxy 2.6) */
#define VARY_AE   0x1
#define VARY_REF  0x2

/* The secondary key of a variant: what it varies on and the values it was
 * stored for (the response's coding, the request's Referer). Never 0 (0:
 * the response does not vary). Two variants with the same key replace
 * each other. */
static uint64_t secondary_of(unsigned int mask, uint64_t coding, uint64_t referer)
{
	uint64_t parts[3] = { mask, mask & VARY_AE ? coding : 0, mask & VARY_REF ? referer : 0 };
	uint64_t h = hash_xxh64(parts, sizeof(parts), 0x77);

	return h ? h : 1;
}

/* Whether the variant <o> fits the request (cache_match_fn): as HAProxy
 * 2.6, a stored coding fits a request that sent no Accept-Encoding, or
 * one that accepts it ("*" accepts any coding it does not refuse); the
 * identity fits unless refused. The same Referer, byte for byte. */
static int variant_match(const struct cache_obj *o, const void *arg)
{
	const struct cache_txn *c = arg;
	const uint64_t *meta = cache_obj_meta_ro(o);
	uint32_t enc = (uint32_t)meta[META_ENCODING];

	if (!meta[META_VARY])
		return 1;
	if ((meta[META_VARY] & VARY_REF) && meta[META_REFERER] != c->referer_hash)
		return 0;
	if (!(meta[META_VARY] & VARY_AE) || !c->has_ae)
		return 1;
	if (c->ae_refused & enc)
		return 0;
	if (enc == CACHE_CODING_IDENTITY)
		return 1;
	return (c->ae_bits & enc) || (c->ae_bits & CACHE_CODING_ANY);
}

static enum act_verdict exec_cache_use(const struct act_rule *r, struct act_env *env)
{
	const struct cache_rule_arg *a = r->arg;
	const struct cache_cfg *cc = a->cache;
	struct stream *s = env->s;
	struct cache_txn *c = &s->txn->cache;
	const struct http_msg *m = env->msg;
	uint8_t key[16];
	struct ist v;

	if (!cc || !cc->store)
		return ACT_V_CONTINUE;
	c->req_flags = cache_request_flags(s, m);
	request_key(m, &c->hash, &c->hash2);
	c->key_cache = cc;
	c->ae_bits = c->ae_refused = 0;
	c->has_ae = 0;
	c->referer_hash = 0;
	if (cc->process_vary) {
		struct http_hdr_iter it;

		http_hdr_iter_init(&it);
		while (http_hdr_next(m, IST("accept-encoding"), 0, &it, &v)) {
			c->has_ae = 1;
			c->ae_bits |= cache_accept_encoding(v.ptr, v.len, &c->ae_refused);
		}
		if (http_hdr_occ(m, IST("referer"), 1, 0, &v))
			c->referer_hash = hash_xxh64(v.ptr, v.len, 0x33) | 1;
	}
	/* counted where the rule is: a frontend's or a backend's lookups */
	if (env->px == s->fe)
		CNT_INC(env->px->fe_cnt.cache_lookups);
	else
		CNT_INC(env->px->be_cnt.cache_lookups);
	if (c->hit || (c->req_flags & CACHE_RQ_NO_SERVE))
		return ACT_V_CONTINUE;
	memcpy(key, &c->hash, 8);
	memcpy(key + 8, &c->hash2, 8);
	c->hit = cache_lookup(cc->store, c->hash, key, sizeof(key), now_s(),
	                      cc->process_vary ? variant_match : NULL, c);
	if (c->hit) {
		c->hit_cache = cc;
		if (env->px == s->fe)
			CNT_INC(env->px->fe_cnt.cache_hits);
		else
			CNT_INC(env->px->be_cnt.cache_hits);
	}
	return ACT_V_CONTINUE;
}

/* ---- the response: may it be stored, for how long ---- */

/* The Vary fields of <m>: a VARY_* mask, or -1 when one cannot be handled. */
static int response_vary(const struct http_msg *m)
{
	struct http_hdr_iter it;
	struct ist v;
	int mask = 0;

	http_hdr_iter_init(&it);
	while (http_hdr_next(m, IST("vary"), 1, &it, &v)) {
		if (v.len == 15 && strncasecmp(v.ptr, "accept-encoding", 15) == 0)
			mask |= VARY_AE;
		else if (v.len == 7 && strncasecmp(v.ptr, "referer", 7) == 0)
			mask |= VARY_REF;
		else
			return -1;
	}
	return mask;
}

/* How long the response may be served, in seconds, or -1 when it must not
 * be stored. HAProxy 2.6: only a 200; no Pragma no-cache, Cache-Control
 * no-cache (any form), no-store or private; a lifetime from s-maxage,
 * max-age or Expires, else the cache's max-age if there is a validator
 * (ETag, Last-Modified); never more than the cache's max-age; what the
 * server's Age says has passed already is taken off. */
static long response_lifetime(const struct http_msg *m, long cache_max_age, long *age_out)
{
	struct http_hdr_iter it;
	struct cache_cc cc = { 0 };
	struct ist v;
	long life = -1, age = 0;

	if (m->status != 200)
		return -1;
	http_hdr_iter_init(&it);
	while (http_hdr_next(m, IST("pragma"), 1, &it, &v))
		if (v.len >= 8 && strncasecmp(v.ptr, "no-cache", 8) == 0)
			return -1;
	http_hdr_iter_init(&it);
	while (http_hdr_next(m, IST("cache-control"), 0, &it, &v))
		cache_cc_parse(v.ptr, v.len, &cc);
	if (cc.no_cache || cc.no_store || cc.private_)
		return -1;
	if (cc.has_s_maxage) {
		life = cc.s_maxage;
	} else if (cc.has_max_age) {
		life = cc.max_age;
	} else if (http_hdr_occ(m, IST("expires"), -1, 0, &v)) {
		int64_t exp = cache_http_date(v.ptr, v.len), date = -1;

		if (http_hdr_occ(m, IST("date"), -1, 0, &v))
			date = cache_http_date(v.ptr, v.len);
		if (date < 0)
			date = (int64_t)time(NULL);
		life = exp < 0 || exp <= date ? 0 : (long)(exp - date > 0x7fffffff ? 0x7fffffff :
		                                           exp - date);
	} else if (has_hdr(m, IST("etag")) || has_hdr(m, IST("last-modified"))) {
		life = cache_max_age;
	} else {
		return -1;
	}
	if (life > cache_max_age)
		life = cache_max_age;
	if (http_hdr_occ(m, IST("age"), -1, 0, &v)) {
		char b[16];
		size_t n = v.len < sizeof(b) - 1 ? v.len : sizeof(b) - 1;

		memcpy(b, v.ptr, n);
		b[n] = '\0';
		age = atol(b);
		if (age < 0)
			age = 0;
	}
	life -= age;
	*age_out = age;
	return life > 0 ? life : -1;
}

/* The value of field <name> in the HTTP/1 head text h[0..len): its offset
 * and length, or 0 when absent. */
static int head_field(const char *h, size_t len, const char *name, size_t *off, size_t *vlen)
{
	size_t nl = strlen(name);
	const char *p = memchr(h, '\n', len), *end = h + len;

	while (p && ++p < end && *p != '\r' && *p != '\n') {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			return 0;
		if ((size_t)(eol - p) > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
			const char *v = p + nl + 1, *e = eol;

			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
				e--;
			*off = (size_t)(v - h);
			*vlen = (size_t)(e - v);
			return 1;
		}
		p = eol;
	}
	return 0;
}

/* Removes every <name> field line from the head text; returns the new
 * length. */
static size_t head_drop_field(char *h, size_t len, const char *name)
{
	size_t nl = strlen(name);
	char *p = memchr(h, '\n', len), *end = h + len;

	while (p && ++p < end && *p != '\r' && *p != '\n') {
		char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			break;
		if ((size_t)(eol - p) > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
			size_t cut = (size_t)(eol + 1 - p);

			memmove(p, eol + 1, (size_t)(end - eol - 1));
			end -= cut;
			len -= cut;
			p--;
			continue;
		}
		p = eol;
	}
	return len;
}


static enum act_verdict exec_cache_store(const struct act_rule *r, struct act_env *env)
{
	const struct cache_rule_arg *a = r->arg;
	const struct cache_cfg *cc = a->cache;
	struct stream *s = env->s;
	struct http_txn *t = s->txn;
	struct cache_txn *c = &t->cache;
	const struct http_msg *m = env->msg;
	unsigned int flags = H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED | H1O_F_VERSION_11;
	long life, age = 0;
	int vary = 0;
	uint64_t secondary = 0, coding = CACHE_CODING_IDENTITY, *meta;
	uint8_t key[16];
	size_t room = (size_t)global.bufsize, off, vlen;
	ssize_t hl;
	struct ist v;

	if (!cc || !cc->store || !c->key_cache || c->w || (c->req_flags & CACHE_RQ_NO_STORE) ||
	    (t->flags & TX_F_REPLIED) || t->meth != HTTP_METH_GET)
		return ACT_V_CONTINUE;
	life = response_lifetime(m, cc->max_age, &age);
	if (life < 0)
		return ACT_V_CONTINUE;
	if (has_hdr(m, IST("vary"))) {
		if (!cc->process_vary || (vary = response_vary(m)) < 0)
			return ACT_V_CONTINUE;
		if (vary & VARY_AE) {
			/* the coding a client's Accept-Encoding is matched against
			 * (the last one applied); an unknown one: not stored */
			struct http_hdr_iter it;

			http_hdr_iter_init(&it);
			while (http_hdr_next(m, IST("content-encoding"), 1, &it, &v))
				if (!(coding = cache_coding_bit(v.ptr, v.len)))
					return ACT_V_CONTINUE;
		}
		if (vary)
			secondary = secondary_of((unsigned int)vary, coding, c->referer_hash);
	}
	if ((m->flags & HTTP_F_HAS_CL) && !(m->flags & HTTP_F_BODYLESS) &&
	    m->content_length > (uint64_t)cc->max_object)
		return ACT_V_CONTINUE;
	if (!head_scratch && !(head_scratch = malloc(room)))
		return ACT_V_CONTINUE;
	/* a body whose end the client's side cannot know from the head (an
	 * HTTP/2 server's, one until the close) is stored chunked */
	if (!(m->flags & (HTTP_F_HAS_CL | HTTP_F_CHUNKED | HTTP_F_BODYLESS)))
		flags |= H1O_F_ADD_CHUNKED;
	hl = h1_out_head(m, flags, head_scratch, room);
	if (hl <= 0 || (size_t)hl > room / 2)
		return ACT_V_CONTINUE;
	hl = (ssize_t)head_drop_field(head_scratch, (size_t)hl, "age");
	if ((uint64_t)hl > (uint64_t)cc->max_object)
		return ACT_V_CONTINUE;
	memcpy(key, &c->hash, 8);
	memcpy(key + 8, &c->hash2, 8);
	c->w = cache_obj_new(cc->store, c->hash, secondary, key, sizeof(key));
	if (!c->w)
		return ACT_V_CONTINUE;
	if (cache_obj_append(cc->store, c->w, head_scratch, (size_t)hl) < 0) {
		cache_obj_abort(cc->store, c->w);
		c->w = NULL;
		return ACT_V_CONTINUE;
	}
	meta = cache_obj_meta(c->w);
	meta[META_HEAD_LEN] = (uint64_t)hl;
	if (head_field(head_scratch, (size_t)hl, "etag", &off, &vlen) && vlen)
		meta[META_ETAG] = (uint64_t)off << 32 | vlen;
	{
		int64_t lm = -1;

		if (head_field(head_scratch, (size_t)hl, "last-modified", &off, &vlen))
			lm = cache_http_date(head_scratch + off, vlen);
		if (lm < 0 && head_field(head_scratch, (size_t)hl, "date", &off, &vlen))
			lm = cache_http_date(head_scratch + off, vlen);
		if (lm < 0)
			lm = (int64_t)time(NULL);
		meta[META_LAST_MOD] = (uint64_t)lm;
	}
	meta[META_AGE] = (uint64_t)age;
	meta[META_VARY] = (uint64_t)vary;
	meta[META_ENCODING] = coding;
	meta[META_REFERER] = c->referer_hash;
	meta[META_STORED_S] = now_s();
	c->w_cache = cc;
	c->w_expire_s = now_s() + (uint32_t)life;
	c->w_limit = (uint64_t)cc->max_object;
	if (m->flags & HTTP_F_BODYLESS)
		cache_store_end(c, 0);
	return ACT_V_CONTINUE;
}

void cache_store_data(struct cache_txn *c, const char *p, size_t n)
{
	if (!c->w || !n)
		return;
	if (cache_obj_size(c->w) + n > c->w_limit ||
	    cache_obj_append(c->w_cache->store, c->w, p, n) < 0) {
		/* too large, or no room: the response goes on, uncached */
		cache_obj_abort(c->w_cache->store, c->w);
		c->w = NULL;
	}
}

void cache_store_end(struct cache_txn *c, uint64_t now_ms)
{
	(void)now_ms;
	if (!c->w)
		return;
	cache_obj_commit(c->w_cache->store, c->w, now_s(), c->w_expire_s,
	                 c->w_cache->process_vary ? (unsigned int)c->w_cache->max_secondary : 0);
	c->w = NULL;
}

void cache_txn_release(struct cache_txn *c)
{
	if (c->w) {
		/* the response did not end well: nothing of it is kept */
		cache_obj_abort(c->w_cache->store, c->w);
		c->w = NULL;
	}
	if (c->hit) {
		cache_obj_release(c->hit_cache->store, c->hit);
		c->hit = NULL;
	}
}

/* ---- serving a hit ---- */

size_t cache_hit_read(const struct cache_obj *o, const void **chunk, uint64_t *chunk_off,
                      uint64_t off, char *dst, size_t room)
{
	return cache_obj_read_from(o, chunk, chunk_off, off, dst, room);
}

void cache_hit_release(struct cache_obj *o, const struct cache_cfg *cc)
{
	cache_obj_release(cc->store, o);
}

/* Whether a conditional request is satisfied by the object: a 304 instead
 * of the object (RFC 9110 section 13.2.2: If-None-Match first, else
 * If-Modified-Since against Last-Modified, or Date, or the storage date). */
static int not_modified(const struct http_msg *req, const struct cache_obj *o, const char *head)
{
	const uint64_t *meta = cache_obj_meta_ro(o);
	struct ist v;

	if (http_hdr_find(req, IST("if-none-match"), 0) >= 0) {
		struct http_hdr_iter it;
		size_t eoff = (size_t)(meta[META_ETAG] >> 32), elen = meta[META_ETAG] & 0xffffffff;

		http_hdr_iter_init(&it);
		while (http_hdr_next(req, IST("if-none-match"), 0, &it, &v)) {
			if (v.len == 1 && v.ptr[0] == '*')
				return 1;
			if (elen && cache_etag_match(v.ptr, v.len, head + eoff, elen))
				return 1;
		}
		return 0;
	}
	if (http_hdr_occ(req, IST("if-modified-since"), -1, 0, &v)) {
		int64_t ims = cache_http_date(v.ptr, v.len);

		return ims >= 0 && (int64_t)meta[META_LAST_MOD] <= ims;
	}
	return 0;
}

static int serve_hit(struct stream *s);

int cache_serve(struct stream *s)
{
	struct cache_txn *c = &s->txn->cache;

	if (serve_hit(s) == 0)
		return 0;
	/* no room for its head: the server answers instead */
	s->res.head = s->res.data = 0;
	if (c->hit) {
		cache_obj_release(c->hit_cache->store, c->hit);
		c->hit = NULL;
	}
	return -1;
}

static int serve_hit(struct stream *s)
{
	struct http_txn *t = s->txn;
	struct cache_txn *c = &t->cache;
	struct cache_obj *o = c->hit;
	const uint64_t *meta = cache_obj_meta_ro(o);
	size_t hl = (size_t)meta[META_HEAD_LEN];
	uint64_t age = meta[META_AGE] + (now_s() - meta[META_STORED_S]);
	char *h;
	int n304;

	if (!s->res.area && buf_alloc(&s->res) < 0)
		return -1;
	http_service_release(s);
	s->res.head = s->res.data = 0;
	if (hl + 64 > s->res.size)
		return -1;
	h = s->res.area;
	if (cache_obj_read(o, 0, h, hl) != hl)
		return -1;
	n304 = not_modified(&t->req, o, h);
	/* Age before the final CRLF (RFC 9111 section 5.1) */
	hl -= 2;
	hl += (size_t)snprintf(h + hl, s->res.size - hl, "age: %llu\r\n\r\n",
	                       (unsigned long long)age);
	if (n304) {
		/* the status line becomes a 304; the fields stay, as HAProxy */
		char *eol = memchr(h, '\n', hl);
		static const char sl[] = "HTTP/1.1 304 Not Modified\r\n";
		size_t old = eol ? (size_t)(eol + 1 - h) : 0;

		if (!old || hl - old + sizeof(sl) - 1 > s->res.size)
			return -1;
		memmove(h + sizeof(sl) - 1, h + old, hl - old);
		memcpy(h, sl, sizeof(sl) - 1);
		hl = hl - old + sizeof(sl) - 1;
	}
	s->res.data = hl;
	if (!n304 && t->meth != HTTP_METH_HEAD && cache_obj_size(o) > meta[META_HEAD_LEN]) {
		/* the body follows from the object as the client drains */
		s->svc_cache = o;
		s->svc_cache_cfg = c->hit_cache;
		s->svc_cache_chunk = NULL;
		s->svc_cache_chunk_off = 0;
		s->svc_off = (size_t)meta[META_HEAD_LEN];
		s->svc_len = (size_t)cache_obj_size(o);
	} else {
		cache_obj_release(c->hit_cache->store, o);
	}
	c->hit = NULL;
	c->hit_name = c->hit_cache->name;
	if (!s->be)
		CNT_INC(s->fe->fe_cnt.intercepted);   /* answered in the frontend's rules */
	if (s->term[0] == '-') {
		/* answered locally, as HAProxy logs its cache's applet */
		s->term[0] = 'L';
		s->term[1] = 'R';
	}
	s->Tw = s->Tc = 0;
	t->Tr = 0;
	s->svc_log_name = "<CACHE>";
	t->flags |= TX_F_REPLIED;
	t->flags &= ~TX_F_RES_GONE;
	t->res.head_len = 0;
	s->st = SST_HTTP_XFER;
	task_wakeup(s->task, TASK_WOKEN_OTHER);
	return 0;
}

/* ---- fetches ---- */

static int smp_fetch_cache_hit(const struct smp_args *args, struct sample *smp,
                               struct smp_ctx *ctx)
{
	smp_set_bool(smp, ctx->res_cache_name != NULL);
	return 1;
}

static int smp_fetch_cache_name(const struct smp_args *args, struct sample *smp,
                                struct smp_ctx *ctx)
{
	const char *n = ctx->res_cache_name ? ctx->res_cache_name : "";

	smp_set_const_str(smp, SMP_T_STR, n, strlen(n));
	return 1;
}

/* ---- show cache ---- */

struct show_ctx {
	struct cli_out *out;
	uint32_t now;
	unsigned int listed;
};

static void show_one(void *arg, const struct cache_obj *o, uint64_t hash, uint32_t expire_s,
                     unsigned int refs)
{
	struct show_ctx *sc = arg;
	uint64_t size = cache_obj_size(o);

	sc->listed++;
	cli_printf(sc->out, "%p hash:%u vary:0x%016llx size:%llu (%llu blocks), refcount:%u, "
	           "expire:%d\n", (const void *)o, (unsigned int)(hash >> 32),
	           (unsigned long long)cache_obj_secondary(o), (unsigned long long)size,
	           (unsigned long long)((size + 1023) / 1024), refs,
	           (int)((int64_t)expire_s - (int64_t)sc->now));
}

/* At most this many objects per cache are listed: the command runs in one
 * loop iteration (each shard lock is held for a bucket range only). */
#define SHOW_CACHE_MAX 100000

static int cli_show_cache(char **args, int nargs, struct cli_out *out, int level)
{
	for (const struct cache_cfg *c = caches; c; c = c->next) {
		struct cache_store_stats st;
		struct show_ctx sc = { out, now_s(), 0 };
		uint64_t pos = 0;

		if (!c->store)
			continue;
		cache_store_stats(c->store, &st);
		cli_printf(out, "%p: %s (shctx:%p, available blocks:%llu)\n", (const void *)c,
		           c->name, (const void *)c->store,
		           (unsigned long long)((st.max_bytes - st.used_bytes) / 1024));
		while (sc.listed < SHOW_CACHE_MAX &&
		       cache_store_walk(c->store, &pos, 256, show_one, &sc))
			;
	}
	return 0;
}
