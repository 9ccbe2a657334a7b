/* The HTTP cache's store and parsers without network: objects visible
 * only once committed, replacement, variants and their bound, expiry, the
 * byte budget (never exceeded, LRU eviction, evicted objects still
 * readable by their readers), shards, reads across chunks, the purge, and
 * several threads storing, reading and evicting at once; Cache-Control,
 * HTTP dates, Accept-Encoding and entity tags. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/http/cache.h>
#include "t.h"

static struct cache_obj *put(struct cache_store *cs, uint64_t hash, uint64_t sec, const char *key,
                             size_t bodylen, uint32_t now, uint32_t expire)
{
	struct cache_obj *o = cache_obj_new(cs, hash, sec, key, strlen(key));
	char buf[4096];

	if (!o)
		return NULL;
	memset(buf, 'a' + (int)(hash % 26), sizeof(buf));
	while (bodylen) {
		size_t n = bodylen < sizeof(buf) ? bodylen : sizeof(buf);

		if (cache_obj_append(cs, o, buf, n) < 0) {
			cache_obj_abort(cs, o);
			return NULL;
		}
		bodylen -= n;
	}
	if (cache_obj_commit(cs, o, now, expire, 0) < 0)
		return NULL;
	return o;
}

static struct cache_obj *get(struct cache_store *cs, uint64_t hash, const char *key, uint32_t now)
{
	return cache_lookup(cs, hash, key, strlen(key), now, NULL, NULL);
}

static void test_visibility(void)
{
	struct cache_store *cs = cache_store_new(1 << 20, 4);
	struct cache_obj *w, *r;
	char out[64];

	CHECK(cs != NULL);
	w = cache_obj_new(cs, 42, 0, "k", 1);
	CHECK(w != NULL);
	CHECK(cache_obj_append(cs, w, "hello ", 6) == 0);
	/* being written: nobody sees it */
	CHECK(get(cs, 42, "k", 10) == NULL);
	CHECK(cache_obj_append(cs, w, "world", 5) == 0);
	CHECK(cache_obj_commit(cs, w, 10, 20, 0) == 0);
	r = get(cs, 42, "k", 10);
	CHECK(r != NULL);
	CHECK(cache_obj_size(r) == 11);
	memset(out, 0, sizeof(out));
	CHECK(cache_obj_read(r, 0, out, sizeof(out)) == 11);
	CHECK_STR(out, "hello world");
	memset(out, 0, sizeof(out));
	CHECK(cache_obj_read(r, 6, out, 3) == 3);
	CHECK_STR(out, "wor");
	/* another key with the same hash is another object */
	CHECK(get(cs, 42, "x", 10) == NULL);
	/* an aborted writer leaves nothing */
	w = cache_obj_new(cs, 43, 0, "a", 1);
	CHECK(cache_obj_append(cs, w, "zz", 2) == 0);
	cache_obj_abort(cs, w);
	CHECK(get(cs, 43, "a", 10) == NULL);
	/* replaced while read: the reader keeps its bytes */
	CHECK(put(cs, 42, 0, "k", 3, 10, 20) != NULL);
	memset(out, 0, sizeof(out));
	CHECK(cache_obj_read(r, 0, out, sizeof(out)) == 11);
	CHECK_STR(out, "hello world");
	cache_obj_release(cs, r);
	r = get(cs, 42, "k", 10);
	CHECK(r && cache_obj_size(r) == 3);
	cache_obj_release(cs, r);
	/* expiry: at its date, it is gone (and leaves the index) */
	r = get(cs, 42, "k", 19);
	CHECK(r != NULL);
	cache_obj_release(cs, r);
	CHECK(get(cs, 42, "k", 20) == NULL);
	{
		struct cache_store_stats st;

		cache_store_stats(cs, &st);
		CHECK(st.objects == 0);
	}
	cache_store_free(cs);
}

/* A reader going forward in slices of every size, with its cursor, sees
 * the bytes a plain read sees, across chunk boundaries. */
static void test_cursor(void)
{
	struct cache_store *cs = cache_store_new(4 << 20, 0);
	struct cache_obj *w = cache_obj_new(cs, 9, 0, "c", 1), *r;
	static char in[300000], out[300000];
	unsigned int seed = 3;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7 + i / 251);
	for (size_t off = 0; off < sizeof(in);) {
		size_t n = 1 + rand_r(&seed) % 9000;

		if (n > sizeof(in) - off)
			n = sizeof(in) - off;
		CHECK(cache_obj_append(cs, w, in + off, n) == 0);
		off += n;
	}
	CHECK(cache_obj_commit(cs, w, 1, 10, 0) == 0);
	r = cache_lookup(cs, 9, "c", 1, 1, NULL, NULL);
	CHECK(r != NULL);
	for (int round = 0; round < 3; round++) {
		const void *chunk = NULL;
		uint64_t chunk_off = 0;
		size_t off = 0;

		memset(out, 0, sizeof(out));
		while (off < sizeof(out)) {
			size_t n = round == 0 ? 1 : round == 1 ? 16384 : 1 + rand_r(&seed) % 40000;
			size_t got;

			if (n > sizeof(out) - off)
				n = sizeof(out) - off;
			got = cache_obj_read_from(r, &chunk, &chunk_off, off, out + off, n);
			CHECK(got == n);
			if (got != n)
				break;
			off += n;
		}
		CHECK(memcmp(in, out, sizeof(in)) == 0);
	}
	{
		char b[10];

		CHECK(cache_obj_read(r, 123457, b, 10) == 10);
		CHECK(memcmp(b, in + 123457, 10) == 0);
		CHECK(cache_obj_read(r, sizeof(in) - 3, b, 10) == 3);
	}
	cache_obj_release(cs, r);
	cache_store_free(cs);
}

static int match_sec(const struct cache_obj *o, const void *arg)
{
	return cache_obj_secondary(o) == *(const uint64_t *)arg;
}

static void test_variants(void)
{
	struct cache_store *cs = cache_store_new(1 << 20, 2);
	struct cache_obj *o;
	uint64_t want;

	for (uint64_t v = 1; v <= 3; v++) {
		o = cache_obj_new(cs, 7, v, "u", 1);
		CHECK(cache_obj_append(cs, o, "v", 1) == 0);
		/* two variants at most */
		CHECK(cache_obj_commit(cs, o, 1, 100, 2) == (v <= 2 ? 0 : -1));
	}
	for (want = 1; want <= 3; want++) {
		o = cache_lookup(cs, 7, "u", 1, 1, match_sec, &want);
		CHECK((o != NULL) == (want <= 2));
		if (o)
			cache_obj_release(cs, o);
	}
	/* a variant replaces the one with its own secondary key */
	o = cache_obj_new(cs, 7, 2, "u", 1);
	CHECK(cache_obj_append(cs, o, "new", 3) == 0);
	CHECK(cache_obj_commit(cs, o, 1, 100, 2) == 0);
	want = 2;
	o = cache_lookup(cs, 7, "u", 1, 1, match_sec, &want);
	CHECK(o && cache_obj_size(o) == 3);
	cache_obj_release(cs, o);
	/* without a match function, only an object that does not vary */
	CHECK(get(cs, 7, "u", 1) == NULL);
	cache_store_free(cs);
}

static void test_budget(void)
{
	const uint64_t max = 256 * 1024;
	struct cache_store *cs = cache_store_new(max, 3);
	struct cache_store_stats st;
	struct cache_obj *held, *o;
	char key[32];
	int hits = 0;

	/* 100 objects of 10 kB in 256 kB: the oldest go, the budget holds */
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "obj%d", i);
		CHECK(put(cs, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1), 0, key, 10000, 1, 100) != NULL);
		cache_store_stats(cs, &st);
		CHECK(st.used_bytes <= max);
	}
	cache_store_stats(cs, &st);
	CHECK(st.evictions > 70);
	CHECK(st.objects >= 20 && st.objects <= 25);
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "obj%d", i);
		o = get(cs, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1), key, 1);
		if (o) {
			hits++;
			CHECK(i >= 70);   /* only recent ones survive */
			cache_obj_release(cs, o);
		}
	}
	CHECK(hits >= 20);
	/* LRU: the oldest survivor, touched, outlives the next one */
	{
		int oldest = -1, next = -1, i = 0;

		for (int k = 0; k < 100 && next < 0; k++) {
			snprintf(key, sizeof(key), "obj%d", k);
			o = get(cs, 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1), key, 1);
			if (!o)
				continue;
			cache_obj_release(cs, o);   /* touched: survivors keep their order */
			if (oldest < 0)
				oldest = k;
			else
				next = k;
		}
		CHECK(oldest >= 0 && next > oldest);
		/* now <oldest> was used after every other survivor but <next>:
		 * touch <next> first, then <oldest> again */
		snprintf(key, sizeof(key), "obj%d", oldest);
		o = get(cs, 0x9e3779b97f4a7c15ull * (uint64_t)(oldest + 1), key, 1);
		cache_obj_release(cs, o);
		for (i = 100; i < 200; i++) {
			snprintf(key, sizeof(key), "obj%d", i);
			CHECK(put(cs, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1), 0, key, 10000, 1,
			          100) != NULL);
			snprintf(key, sizeof(key), "obj%d", next);
			o = get(cs, 0x9e3779b97f4a7c15ull * (uint64_t)(next + 1), key, 1);
			if (!o)
				break;
			cache_obj_release(cs, o);   /* keeps <next> more recent than <oldest> */
			o = NULL;
		}
		/* <next> was used last each time: <oldest> went first */
		snprintf(key, sizeof(key), "obj%d", oldest);
		o = get(cs, 0x9e3779b97f4a7c15ull * (uint64_t)(oldest + 1), key, 1);
		CHECK(o == NULL);
		if (o)
			cache_obj_release(cs, o);
	}
	/* an object larger than half the budget cannot be stored */
	CHECK(put(cs, 5, 0, "huge", max / 2 + 1, 1, 100) == NULL);
	cache_store_stats(cs, &st);
	CHECK(st.store_fails >= 1);
	CHECK(st.used_bytes <= max);
	/* an evicted object held by a reader stays readable, and its bytes
	 * count until the reader lets it go */
	CHECK(put(cs, 0x9e3779b97f4a7c15ull * 1000, 0, "held", 10000, 1, 100) != NULL);
	held = get(cs, 0x9e3779b97f4a7c15ull * 1000, "held", 1);
	CHECK(held != NULL);
	for (int i = 300; i < 340; i++) {
		snprintf(key, sizeof(key), "obj%d", i);
		put(cs, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1), 0, key, 10000, 1, 100);
		cache_store_stats(cs, &st);
		CHECK(st.used_bytes <= max);
	}
	{
		char c = 0;

		CHECK(get(cs, 0x9e3779b97f4a7c15ull * 1000, "held", 1) == NULL);
		CHECK(cache_obj_read(held, 9999, &c, 1) == 1);
		CHECK(c == 'a' + (int)((0x9e3779b97f4a7c15ull * 1000) % 26));
	}
	cache_obj_release(cs, held);
	cache_store_free(cs);
}

static void count(void *arg, const struct cache_obj *o, uint64_t h, uint32_t e, unsigned int r)
{
	(void)o;
	(void)h;
	(void)r;
	*(unsigned int *)arg += 1;
	CHECK(e == 50);
}

static void test_purge_and_walk(void)
{
	struct cache_store *cs = cache_store_new(1 << 20, 1);
	struct cache_store_stats st;
	unsigned int n = 0;
	char key[16];
	uint64_t pos = 0;
	int rounds = 0;

	for (int i = 0; i < 40; i++) {
		snprintf(key, sizeof(key), "p%d", i);
		put(cs, (uint64_t)i << 60 | (uint64_t)i, 0, key, 10, 1, i < 30 ? 5 : 50);
	}
	for (int i = 0; i < 4; i++)
		n += cache_store_purge(cs, 10, 64);
	CHECK(n == 30);
	cache_store_stats(cs, &st);
	CHECK(st.objects == 10);
	/* the walk sees each object once, a few buckets at a time */
	n = 0;
	while (cache_store_walk(cs, &pos, 2, count, &n))
		rounds++;
	CHECK(n == 10);
	CHECK(rounds > 1);
	cache_store_free(cs);
}

/* Threads storing, reading and evicting the same keys at once: every read
 * sees a whole object (every byte what its writer wrote), the budget
 * holds. */
struct mt_arg {
	struct cache_store *cs;
	int id;
	int bad;
};

static void *mt_run(void *p)
{
	struct mt_arg *a = p;
	unsigned int seed = (unsigned int)a->id * 7919u + 1;
	char key[16], buf[3000];

	for (int i = 0; i < 20000; i++) {
		int k = (int)(rand_r(&seed) % 64);
		uint64_t h = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
		struct cache_obj *o;

		snprintf(key, sizeof(key), "k%d", k);
		if (rand_r(&seed) % 4 == 0) {
			size_t len = 100 + rand_r(&seed) % 2900;

			o = cache_obj_new(a->cs, h, 0, key, strlen(key));
			if (!o)
				continue;
			memset(buf, 'A' + k % 26, len);
			buf[0] = (char)(len & 0xff);
			buf[1] = (char)(len >> 8);
			if (cache_obj_append(a->cs, o, buf, len) < 0) {
				cache_obj_abort(a->cs, o);
				continue;
			}
			cache_obj_commit(a->cs, o, 1, 1000, 0);
		} else if ((o = get(a->cs, h, key, 1))) {
			size_t len = (size_t)cache_obj_size(o);

			if (cache_obj_read(o, 0, buf, len) != len ||
			    (size_t)((unsigned char)buf[0] | (unsigned char)buf[1] << 8) != len)
				a->bad++;
			for (size_t j = 2; j < len; j++)
				if (buf[j] != 'A' + k % 26) {
					a->bad++;
					break;
				}
			cache_obj_release(a->cs, o);
		}
	}
	return NULL;
}

static void test_threads(void)
{
	const uint64_t max = 64 * 1024;
	struct cache_store *cs = cache_store_new(max, 3);
	struct mt_arg args[4];
	pthread_t th[4];
	struct cache_store_stats st;

	for (int i = 0; i < 4; i++) {
		args[i] = (struct mt_arg){ cs, i, 0 };
		pthread_create(&th[i], NULL, mt_run, &args[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(args[i].bad == 0);
	}
	cache_store_stats(cs, &st);
	CHECK(st.used_bytes <= max);
	CHECK(st.evictions > 0);
	cache_store_free(cs);
}

#define CC(str) cache_cc_parse(str, strlen(str), &cc)

static void test_parsers(void)
{
	struct cache_cc cc = { 0 };
	uint32_t refused = 0, bits;

	CC("public, max-age=30, s-maxage=\"10\"");
	CHECK(cc.public_ && cc.has_max_age && cc.max_age == 30 && cc.has_s_maxage &&
	      cc.s_maxage == 10 && !cc.no_cache);
	memset(&cc, 0, sizeof(cc));
	CC("No-Cache=\"set-cookie, x\", PRIVATE");
	CHECK(cc.no_cache && cc.private_ && !cc.public_);
	memset(&cc, 0, sizeof(cc));
	CC("max-age=abc, max-stale");
	CHECK(!cc.has_max_age && cc.fresh_ctl);
	memset(&cc, 0, sizeof(cc));
	CC("max-age=99999999999999");
	CHECK(cc.has_max_age && cc.max_age > 0);

	CHECK(cache_http_date("Sun, 06 Nov 1994 08:49:37 GMT", 29) == 784111777);
	CHECK(cache_http_date("Sunday, 06-Nov-94 08:49:37 GMT", 30) == 784111777);
	CHECK(cache_http_date("Sun Nov  6 08:49:37 1994", 24) == 784111777);
	CHECK(cache_http_date("Sun, 06 Nov 1994 08:49:37 UTC", 29) == -1);
	CHECK(cache_http_date("garbage", 7) == -1);

	bits = cache_accept_encoding("gzip;q=0.5, x-gzip, br;q=0, *", 29, &refused);
	CHECK(bits == (cache_coding_bit("gzip", 4) | CACHE_CODING_ANY));
	CHECK(refused == cache_coding_bit("br", 2));
	CHECK(cache_coding_bit("identity", 8) == CACHE_CODING_IDENTITY);
	CHECK(cache_coding_bit("foo", 3) == 0);

	CHECK(cache_etag_match("\"a\", W/\"b\"", 10, "\"b\"", 3));
	CHECK(cache_etag_match("*", 1, "\"z\"", 3));
	CHECK(!cache_etag_match("\"a\"", 3, "\"b\"", 3));
	CHECK(cache_etag_match("\"a\"", 3, "W/\"a\"", 5));
}

int main(void)
{
	test_visibility();
	test_cursor();
	test_variants();
	test_budget();
	test_purge_and_walk();
	test_threads();
	test_parsers();
	return t_done("test_cache");
}
