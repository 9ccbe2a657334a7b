/* Stick tables without network: the frequency counter's arithmetic
 * (HAProxy's sliding estimate, rotation, a period of 0, a clock that
 * wraps), the size bound with LRU eviction of unreferenced entries,
 * references that protect an entry, nopurge, removal, keys of every type,
 * and counters from several threads at once. */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/expr/sample.h>
#include <sluice/proxy/stktable.h>
#include "t.h"

static struct stktable *table(const char *name, const char *line)
{
	char buf[256], *words[32], err[256];
	struct stkt_conf c;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *p = strtok(buf, " "); p && n < 32; p = strtok(NULL, " "))
		words[n++] = p;
	if (stktable_parse_args(words, n, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", line, err);
		return NULL;
	}
	return stktable_new(name, "t.cfg", 1, NULL, &c);
}

static void test_frq(void)
{
	struct freq_ctr f;

	memset(&f, 0, sizeof(f));
	f.tick = 1000;
	for (int i = 0; i < 10; i++)
		freq_ctr_add(&f, 1000, 1200, 1);
	CHECK(freq_ctr_read(&f, 1000, 1200) == 10);
	CHECK(freq_ctr_read(&f, 1000, 1998) == 10);
	/* one period later: the 10 are the previous period, weighted by what
	 * is left of the current one */
	CHECK(freq_ctr_read(&f, 1000, 2000) == 10);
	CHECK(freq_ctr_read(&f, 1000, 2500) == 5);
	CHECK(freq_ctr_read(&f, 1000, 2900) == 1);
	CHECK(freq_ctr_read(&f, 1000, 3000) == 0);
	/* an event in the next period rotates the counter */
	freq_ctr_add(&f, 1000, 2500, 4);
	CHECK(f.prev == 10 && f.curr == 4 && f.tick == 2000);
	CHECK(freq_ctr_read(&f, 1000, 2500) == 9);
	/* two periods without events: nothing is left of them */
	freq_ctr_add(&f, 1000, 5100, 1);
	CHECK(f.prev == 0 && f.curr == 1 && f.tick == 5000);
	/* a reader whose clock is a little behind the writer's */
	CHECK(freq_ctr_read(&f, 1000, 4990) == 1);
	/* period 0: a plain count, never rotated */
	memset(&f, 0, sizeof(f));
	freq_ctr_add(&f, 0, 100, 3);
	freq_ctr_add(&f, 0, 100000, 3);
	CHECK(freq_ctr_read(&f, 0, 200000) == 6);
	/* the 32-bit clock wraps */
	memset(&f, 0, sizeof(f));
	f.tick = 0xfffffc18u;   /* 1000 ms before the wrap */
	freq_ctr_add(&f, 10000, 0xfffffff0u, 2);
	freq_ctr_add(&f, 10000, 100, 2);
	CHECK(freq_ctr_read(&f, 10000, 200) == 4);
}

/* A key points into its own buffer: it is filled in place, never copied. */
static struct stkt_key *int_key(struct stkt_key *k, uint32_t v)
{
	memcpy(k->buf, &v, 4);
	k->ptr = k->buf;
	k->len = 4;
	return k;
}

static void test_bound(void)
{
	struct stktable *t = table("bound", "type integer size 4 store gpc0,conn_cur");
	struct stksess *held[4], *ts;
	struct stkt_key k;
	int64_t v;

	CHECK(t != NULL);
	if (!t)
		return;
	for (uint32_t i = 1; i <= 4; i++) {
		int_key(&k, i);
		ts = stktable_get_ref(t, &k);
		CHECK(ts != NULL);
		if (ts) {
			stkt_add(t, ts, STKT_DT_GPC0, i);
			stktable_release(t, ts);
		}
	}
	CHECK(t->used == 4);
	/* key 1 touched again: key 2 is the least recently used */
	int_key(&k, 1);
	ts = stktable_get_ref(t, &k);
	CHECK(ts && stkt_get(t, ts, STKT_DT_GPC0, &v) && v == 1);
	if (ts)
		stktable_release(t, ts);
	int_key(&k, 5);
	ts = stktable_get_ref(t, &k);
	CHECK(ts != NULL && t->used == 4 && t->n_evicted == 1);
	if (ts)
		stktable_release(t, ts);
	int_key(&k, 2);
	CHECK(stktable_lookup_lock(t, &k) == NULL);
	int_key(&k, 1);
	ts = stktable_lookup_lock(t, &k);
	CHECK(ts != NULL);
	if (ts)
		stktable_unlock(t, ts);

	/* every entry referenced: a new key is refused, nothing is freed */
	for (uint32_t i = 0; i < 4; i++) {
		int_key(&k, i == 0 ? 1 : i + 2);
		held[i] = stktable_get_ref(t, &k);
		CHECK(held[i] != NULL);
	}
	int_key(&k, 9);
	CHECK(stktable_get_ref(t, &k) == NULL && t->used == 4);
	int_key(&k, 3);
	CHECK(stktable_remove(t, &k) == -1);
	CHECK(stktable_purge(t, NULL, NULL) == 0);
	for (int i = 0; i < 4; i++)
		if (held[i])
			stktable_release(t, held[i]);
	CHECK(stktable_remove(t, &k) == 1 && t->used == 3);
	CHECK(stktable_remove(t, &k) == 0);
	CHECK(stktable_purge(t, NULL, NULL) == 3 && t->used == 0);

	/* conn_cur never goes below 0 */
	int_key(&k, 7);
	ts = stktable_get_ref(t, &k);
	if (ts) {
		stkt_add(t, ts, STKT_DT_CONN_CUR, 1);
		stkt_dec(t, ts, STKT_DT_CONN_CUR);
		stkt_dec(t, ts, STKT_DT_CONN_CUR);
		CHECK(stkt_get(t, ts, STKT_DT_CONN_CUR, &v) && v == 0);
		CHECK(!stkt_get(t, ts, STKT_DT_HTTP_REQ_CNT, &v));
		stktable_release(t, ts);
	}
}

static void test_nopurge(void)
{
	struct stktable *t = table("np", "type integer size 2 nopurge");
	struct stkt_key k;

	CHECK(t != NULL);
	if (!t)
		return;
	for (uint32_t i = 1; i <= 3; i++) {
		struct stksess *ts;

		int_key(&k, i);
		ts = stktable_get_ref(t, &k);
		CHECK((ts != NULL) == (i <= 2));
		if (ts)
			stktable_release(t, ts);
	}
	CHECK(t->used == 2 && t->n_refused == 1);
}

static void test_keys(void)
{
	struct stktable *ts = table("s", "type string len 4 size 10");
	struct stktable *tb = table("b", "type binary len 4 size 10");
	struct stktable *t6 = table("v6", "type ipv6 size 10");
	struct stktable *t4 = table("v4", "type ip size 10");
	struct stkt_key k;
	struct sample smp;
	struct stksess *e;
	char text[64];

	CHECK(ts && tb && t6 && t4);
	if (!ts || !tb || !t6 || !t4)
		return;
	memset(&smp, 0, sizeof(smp));
	smp_set_const_str(&smp, SMP_T_STR, "abcdefgh", 8);
	CHECK(stktable_key_from_smp(ts, &smp, &k) && k.len == 4 && !memcmp(k.ptr, "abcd", 4));
	/* a short binary block is padded with zeroes */
	memset(&smp, 0, sizeof(smp));
	smp_set_const_str(&smp, SMP_T_BIN, "\x01\x02", 2);
	CHECK(stktable_key_from_smp(tb, &smp, &k) && k.len == 4 && !memcmp(k.ptr, "\x01\x02\0\0", 4));
	e = stktable_get_ref(tb, &k);
	CHECK(e != NULL);
	if (e) {
		stktable_key_text(tb, e, text, sizeof(text));
		CHECK_STR(text, "01020000");
		stktable_release(tb, e);
	}
	CHECK(stktable_key_from_text(t6, "2001:db8::1", &k) && k.len == 16);
	e = stktable_get_ref(t6, &k);
	if (e) {
		stktable_key_text(t6, e, text, sizeof(text));
		CHECK_STR(text, "2001:db8::1");
		stktable_release(t6, e);
	}
	CHECK(!stktable_key_from_text(t4, "2001:db8::1", &k));
	CHECK(!stktable_key_from_text(t4, "1.2.3", &k));
	/* an IPv4-mapped IPv6 source fits an ip table, another does not */
	memset(&smp, 0, sizeof(smp));
	smp.type = SMP_T_IPV6;
	inet_pton(AF_INET6, "::ffff:10.1.2.3", &smp.data.ipv6);
	CHECK(stktable_key_from_smp(t4, &smp, &k) && !memcmp(k.ptr, "\x0a\x01\x02\x03", 4));
	smp.type = SMP_T_IPV6;
	inet_pton(AF_INET6, "2001:db8::2", &smp.data.ipv6);
	CHECK(!stktable_key_from_smp(t4, &smp, &k));
}

/* Two threads hammer the same entries: counts are exact, the size bound
 * holds, conn_cur comes back to 0. */
static struct stktable *shared;

static void *worker(void *arg)
{
	for (int i = 0; i < 20000; i++) {
		struct stkt_key k;
		struct stksess *ts;

		int_key(&k, (uint32_t)(i % 50));
		ts = stktable_get_ref(shared, &k);
		if (!ts)
			continue;
		stkt_add(shared, ts, STKT_DT_CONN_CUR, 1);
		stkt_add(shared, ts, STKT_DT_HTTP_REQ_CNT, 1);
		stkt_add(shared, ts, STKT_DT_HTTP_REQ_RATE, 1);
		stkt_dec(shared, ts, STKT_DT_CONN_CUR);
		stktable_release(shared, ts);
	}
	return arg;
}

static int sum_cnt(struct stktable *t, struct stksess *ts, void *arg)
{
	int64_t v = 0, c = 0;

	stkt_get(t, ts, STKT_DT_HTTP_REQ_CNT, &v);
	stkt_get(t, ts, STKT_DT_CONN_CUR, &c);
	((int64_t *)arg)[0] += v;
	((int64_t *)arg)[1] += c;
	return 0;
}

static void test_threads(void)
{
	pthread_t th[4];
	int64_t sums[2] = { 0, 0 };

	shared = table("mt", "type integer size 100 store conn_cur,http_req_cnt,http_req_rate(1m)");
	CHECK(shared != NULL);
	if (!shared)
		return;
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	stktable_walk(shared, sum_cnt, sums);
	CHECK(shared->used == 50);
	CHECK(sums[0] == 80000 && sums[1] == 0);
}

static int count_fn(struct stktable *t, struct stksess *ts, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static int refuse_fn(struct stktable *t, struct stksess *ts, void *arg)
{
	return 1;
}

static int collect_all(struct stktable *t, int bit)
{
	int n = 0, more = 0;

	for (int sh = 0; sh < STKT_SHARDS; sh++)
		stktable_upd_collect(t, sh, bit, 1000, count_fn, &n, &more);
	return n;
}

/* Tables shared with peers: a local update is pending for the peers with
 * a session, once; an update learned from a peer is not; a refused entry
 * stays pending; the full push walks every entry. */
static void test_peers_pending(void)
{
	struct stktable *t = table("peered", "type integer size 100 store gpc0 peers p");
	struct stkt_key k;
	struct stksess *ts;
	int n = 0, more = 0;
	uint32_t bucket;

	CHECK(t && t->upd_ofs == 0);
	if (!t)
		return;
	/* no peer with a session: nothing is kept */
	CHECK(stktable_key_from_text(t, "1", &k));
	ts = stktable_get_ref(t, &k);
	stktable_release(t, ts);
	CHECK(collect_all(t, 0) == 0);
	/* peers 0 and 2 are connected */
	atomic_store(&t->peers_live, 5);
	for (int i = 1; i <= 10; i++) {
		char key[8];

		snprintf(key, sizeof(key), "%d", i);
		CHECK(stktable_key_from_text(t, key, &k));
		ts = stktable_get_ref(t, &k);
		stkt_add(t, ts, STKT_DT_GPC0, 1);
		stktable_release(t, ts);
	}
	CHECK(collect_all(t, 1) == 0);
	CHECK(collect_all(t, 0) == 10);
	CHECK(collect_all(t, 0) == 0);
	/* a refused entry is kept for the next run */
	for (int sh = 0; sh < STKT_SHARDS; sh++)
		stktable_upd_collect(t, sh, 2, 1000, refuse_fn, NULL, &more);
	CHECK(more == 1);
	/* peer 2 went away: its bits go, nothing is left */
	atomic_store(&t->peers_live, 1);
	CHECK(collect_all(t, 2) == 0);
	atomic_store(&t->peers_live, 5);
	CHECK(collect_all(t, 2) == 0);
	/* learned from a peer: not pending */
	CHECK(stktable_key_from_text(t, "42", &k));
	ts = stktable_get_ref_remote(t, &k);
	CHECK(ts != NULL);
	stkt_set(t, ts, STKT_DT_GPC0, 7);
	stktable_release_remote(t, ts, -1);
	CHECK(collect_all(t, 0) == 0);
	/* the full push sees the 11 entries, a few buckets at a time */
	for (int sh = 0; sh < STKT_SHARDS; sh++) {
		bucket = 0;
		for (int runs = 0; runs < 100 && !stktable_teach_walk(t, sh, &bucket, 1, count_fn, &n);
		     runs++)
			;
	}
	CHECK(n == 11);
	/* an entry removed while pending leaves the list with it */
	CHECK(stktable_key_from_text(t, "3", &k));
	ts = stktable_get_ref(t, &k);
	stktable_release(t, ts);
	CHECK(stktable_remove(t, &k) == 1);
	CHECK(collect_all(t, 0) == 0);
}

int main(void)
{
	test_peers_pending();
	test_frq();
	test_bound();
	test_nopurge();
	test_keys();
	test_threads();
	stktable_free_all();
	return t_done("test_stktable");
}
