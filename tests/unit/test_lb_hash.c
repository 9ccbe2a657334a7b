/* Hash-based balancing: the key of each `balance` option on parsed
 * requests (uri with len/depth/whole/path-only, url_param, hdr with
 * use_domain_only), the hash functions of hash-type, and the server chosen
 * by lb_pick(), map-based and consistent. The expected servers of the
 * tables were obtained from HAProxy 2.6 with the same configuration
 * (backend of N servers "s1".."sN" with the weights shown, the request
 * path sent with curl), so these tests pin sluice's choices to HAProxy's.
 * The consistent ring is also checked for its defining property: taking a
 * server out moves only the keys it had. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/expr/hash.h>
#include <sluice/http/h1.h>
#include <sluice/proxy/lb.h>
#include <sluice/proxy/lb_hash.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>
#include "t.h"

static char reqbuf[4096];
static struct http_hdr hdrs[32];
static struct http_msg req;

/* Parses "GET <path> HTTP/1.1" with the fields <extra> ("Name: v\r\n"...). */
static struct http_msg *parse_req(const char *path, const char *extra)
{
	struct h1_error e;
	int n = snprintf(reqbuf, sizeof(reqbuf), "GET %s HTTP/1.1\r\nHost: test\r\n%s\r\n", path,
	                 extra ? extra : "");

	memset(&req, 0, sizeof(req));
	req.hdrs = hdrs;
	req.maxhdrs = 32;
	if (h1_parse_head(reqbuf, (size_t)n, 1, HTTP_METH_GET, sizeof(reqbuf), 0, &req, &e) != H1_OK) {
		fprintf(stderr, "  cannot parse request for %s: %s\n", path, e.reason);
		return NULL;
	}
	return &req;
}

static struct proxy *made[32];
static int nmade;

static struct proxy *be_new(int n, const int *weights, enum lb_algo algo)
{
	struct proxy *be = calloc(1, sizeof(*be));

	made[nmade++] = be;
	be->name = "be";
	be->cap = PX_CAP_BE;
	be->mode = PX_MODE_HTTP;
	be->lb_algo = algo;
	lock_init(&be->lb_lock, LK_LB, "be");
	queue_init(&be->queue);
	be->nsrv = n;
	be->srv = calloc((size_t)n, sizeof(*be->srv));
	for (int i = 0; i < n; i++) {
		struct server *s = server_new_default();
		char name[16];

		snprintf(name, sizeof(name), "s%d", i + 1);
		s->name = strdup(name);
		s->be = be;
		s->puid = i + 1;
		s->iweight = weights ? weights[i] : 1;
		atomic_store(&s->uweight, s->iweight);
		be->srv[i] = s;
	}
	return be;
}

/* Frees what be_new() made (lb_arg is set from literals by the tests). */
static void be_free_all(void)
{
	for (int k = 0; k < nmade; k++) {
		struct proxy *be = made[k];

		lb_hash_forget(be);
		for (int i = 0; i < be->nsrv; i++) {
			free(be->srv[i]->name);
			lock_destroy(&be->srv[i]->queue.lock);
			free(be->srv[i]);
		}
		free(be->srv);
		lock_destroy(&be->lb_lock);
		lock_destroy(&be->queue.lock);
		free(be);
	}
	nmade = 0;
}

static void set_hash(struct proxy *be, enum lb_hash_type t, enum lb_hash_fn fn, int aval)
{
	be->hash_type = t;
	CHECK(lb_hash_conf_set(be, fn, aval) == 0);
	if (t == LB_HASH_CONSISTENT)
		CHECK(lb_chash_init(be) == 0);
}

/* The server lb_pick() gives for <path>, or "rr" when the request has no
 * key (the caller would balance round robin). */
static const char *pick(struct proxy *be, const char *path, const char *extra)
{
	struct http_msg *m = parse_req(path, extra);
	struct server *s = NULL;
	uint32_t key;

	if (!m)
		return "?";
	if (!lb_hash_request(be, m, &key))
		return "rr";
	if (lb_pick(be, NULL, &key, NULL, &s) != LB_OK || !s)
		return "none";
	atomic_fetch_sub(&s->served, 1);
	return s->name;
}

/* The key bytes: the hash of <expect> must be the request's key. */
static void check_key(struct proxy *be, const char *path, const char *extra, const char *expect)
{
	struct http_msg *m = parse_req(path, extra);
	uint32_t key = 0;
	int got = m && lb_hash_request(be, m, &key);

	if (!expect) {
		CHECK(m && !got);
		return;
	}
	CHECK(got);
	if (got && key != lb_hash_bytes(be, expect, strlen(expect))) {
		fprintf(stderr, "  key of '%s' is not the hash of '%s'\n", path, expect);
		CHECK(0);
	}
}

static void test_uri_keys(void)
{
	struct proxy *be = be_new(3, NULL, LB_URI);

	check_key(be, "/a/b/c?x=1", NULL, "/a/b/c");
	be->lb_uri_whole = 1;
	check_key(be, "/a/b/c?x=1", NULL, "/a/b/c?x=1");
	be->lb_uri_whole = 0;
	be->lb_uri_len = 4;
	check_key(be, "/a/b/c?x=1", NULL, "/a/b");
	check_key(be, "/a?xyz", NULL, "/a");
	be->lb_uri_len = 0;
	be->lb_uri_depth = 1;
	check_key(be, "/a/b/c?x=1", NULL, "/a");
	check_key(be, "/abc", NULL, "/abc");
	be->lb_uri_depth = 2;
	check_key(be, "/a/b/c?x=1", NULL, "/a/b");
	check_key(be, "/a/b?x=/y/z", NULL, "/a/b");
	be->lb_uri_whole = 1;
	check_key(be, "/a?x=/y/z", NULL, "/a?x=/y");
	be->lb_uri_whole = 0;
	be->lb_uri_depth = 0;
	/* absolute-form: the whole target, unless path-only */
	check_key(be, "http://example.com/p/q?r", NULL, "http://example.com/p/q");
	be->lb_uri_path_only = 1;
	check_key(be, "http://example.com/p/q?r", NULL, "/p/q");
	check_key(be, "/p/q?r", NULL, "/p/q");
	be->lb_uri_whole = 1;
	check_key(be, "http://example.com/p/q?r", NULL, "/p/q?r");
	be->lb_uri_len = 3;
	check_key(be, "http://example.com/p/q?r", NULL, "/p/");
}

static void test_url_param_keys(void)
{
	struct proxy *be = be_new(3, NULL, LB_URL_PARAM);

	be->lb_arg = "id";
	check_key(be, "/x?id=42", NULL, "42");
	check_key(be, "/x?a=1&id=42&b=2", NULL, "42");
	check_key(be, "/x?a=1&id=", NULL, "");
	check_key(be, "/x?uid=7&id=8", NULL, "8");
	check_key(be, "/x?ID=8", NULL, NULL);          /* names are case-sensitive */
	check_key(be, "/x?id", NULL, NULL);
	check_key(be, "/x?a=1&b=2", NULL, NULL);
	check_key(be, "/x", NULL, NULL);
	check_key(be, "/id=3", NULL, NULL);            /* not in a query */
	check_key(be, "/x?id=1&id=2", NULL, "1");      /* the first one */
}

static void test_hdr_keys(void)
{
	struct proxy *be = be_new(3, NULL, LB_HDR);

	be->lb_arg = "X-User";
	check_key(be, "/", "x-user: alice\r\n", "alice");
	check_key(be, "/", "X-User: bob, carol\r\n", "bob");   /* first value */
	check_key(be, "/", "X-User:\r\n", NULL);               /* empty: no key */
	check_key(be, "/", NULL, NULL);
	be->lb_arg = "Host";
	be->lb_hdr_domain = 1;
	check_key(be, "/", NULL, "test");
	be->lb_arg = "X-Host";
	check_key(be, "/", "X-Host: www.example.com\r\n", "example");
	check_key(be, "/", "X-Host: haproxy.1wt.eu\r\n", "1wt");
	check_key(be, "/", "X-Host: example.com\r\n", "example");
	check_key(be, "/", "X-Host: localhost\r\n", "localhost");
	check_key(be, "/", "X-Host: a.b.example.com:8080\r\n", "example");
}

static void test_hash_functions(void)
{
	struct proxy *be = be_new(1, NULL, LB_URI);

	CHECK(lb_hash_bytes(be, "abc", 3) == hash_sdbm("abc", 3));
	set_hash(be, LB_HASH_MAP, LB_HFN_DJB2, 0);
	CHECK(lb_hash_bytes(be, "abc", 3) == hash_djb2("abc", 3));
	set_hash(be, LB_HASH_MAP, LB_HFN_WT6, 1);
	CHECK(lb_hash_bytes(be, "abc", 3) == hash_avalanche(hash_wt6("abc", 3)));
	set_hash(be, LB_HASH_MAP, LB_HFN_CRC32, 0);
	CHECK(lb_hash_bytes(be, "abc", 3) == hash_crc32("abc", 3));
	CHECK(lb_hash_finish(be, 1234) == 1234);
	set_hash(be, LB_HASH_MAP, LB_HFN_SDBM, 1);
	CHECK(lb_hash_finish(be, 1234) == hash_avalanche(1234));
	/* algorithms that hash no request data have no key */
	be->lb_algo = LB_ROUNDROBIN;
	check_key(be, "/a", NULL, NULL);
	be->lb_algo = LB_SOURCE;
	check_key(be, "/a", NULL, NULL);
}

/* Path -> server, from HAProxy 2.6 (balance uri). */
static const struct { const char *path, *map111, *cons111, *cons123, *cons1111djb2; } haproxy_uri[] = {
	{ "/",                    "s3", "s2", "s2", "s4" },
	{ "/a",                   "s1", "s2", "s2", "s4" },
	{ "/a/b",                 "s3", "s2", "s2", "s2" },
	{ "/a/b/c?x=1",           "s3", "s1", "s1", "s2" },
	{ "/index.html",          "s1", "s3", "s3", "s1" },
	{ "/img/logo.png",        "s1", "s2", "s2", "s1" },
	{ "/api/v1/users?id=42",  "s3", "s3", "s2", "s4" },
	{ "/api/v1/users?id=43",  "s3", "s3", "s2", "s4" },
	{ "/static/css/site.css", "s3", "s1", "s3", "s4" },
	{ "/x",                   "s3", "s2", "s3", "s4" },
	{ "/y",                   "s1", "s1", "s1", "s4" },
	{ "/z",                   "s2", "s3", "s3", "s4" },
	{ "/hello/world",         "s1", "s3", "s2", "s3" },
	{ "/foo?bar",             "s2", "s2", "s3", "s2" },
	{ "/foo?baz",             "s2", "s2", "s3", "s2" },
	{ "/1",                   "s1", "s3", "s3", "s4" },
	{ "/2",                   "s2", "s2", "s2", "s4" },
	{ "/3",                   "s3", "s1", "s1", "s4" },
	{ "/4",                   "s1", "s1", "s3", "s4" },
	{ "/5",                   "s2", "s2", "s2", "s4" },
};

static void test_same_as_haproxy(void)
{
	static const int w111[] = { 1, 1, 1 }, w123[] = { 1, 2, 3 };
	struct proxy *map111 = be_new(3, w111, LB_URI);
	struct proxy *c111 = be_new(3, w111, LB_URI);
	struct proxy *c123 = be_new(3, w123, LB_URI);
	struct proxy *c1111 = be_new(4, NULL, LB_URI);

	set_hash(c111, LB_HASH_CONSISTENT, LB_HFN_SDBM, 1);   /* consistent's defaults */
	set_hash(c123, LB_HASH_CONSISTENT, LB_HFN_SDBM, 1);
	set_hash(c1111, LB_HASH_CONSISTENT, LB_HFN_DJB2, 0);
	for (size_t i = 0; i < sizeof(haproxy_uri) / sizeof(haproxy_uri[0]); i++) {
		const char *p = haproxy_uri[i].path;

		CHECK_STR(pick(map111, p, NULL), haproxy_uri[i].map111);
		CHECK_STR(pick(c111, p, NULL), haproxy_uri[i].cons111);
		CHECK_STR(pick(c123, p, NULL), haproxy_uri[i].cons123);
		CHECK_STR(pick(c1111, p, NULL), haproxy_uri[i].cons1111djb2);
	}
}

/* url_param (map-based) and hdr() (map-based with use_domain_only,
 * consistent wt6 without), from HAProxy 2.6. HAProxy's use_domain_only
 * looks at the byte that follows the value, so a '.' left there by an
 * earlier request changes its key ("x.d.e" hashed "e" after a request for
 * "a.b.c.d.e"): the hosts below were sent where that could not happen, and
 * sluice never reads past the value. */
static const struct { const char *path, *srv; } haproxy_param[] = {
	{ "/x?id=42", "s1" }, { "/x?a=1&id=43", "s2" }, { "/x?id=", "s1" },
	{ "/x?uid=7&id=8", "s3" }, { "/x?id=alice", "s3" }, { "/x?id=bob", "s3" },
	{ "/x?id=carol", "s2" }, { "/x?id=dave", "s1" }, { "/x?id=1&id=2", "s2" },
};

static const struct { const char *host, *domain_map, *cons_wt6; } haproxy_hdr[] = {
	{ "www.example.com", "s2", "s3" }, { "haproxy.1wt.eu", "s2", "s3" },
	{ "alpha.org", "s1", "s3" }, { "beta.org", "s1", "s3" },
	{ "gamma.net", "s3", "s3" }, { "delta", "s1", "s3" }, { "eps.x.y", "s1", "s2" },
};

/* 97 servers: few keys share a server, so the key itself is pinned. */
static const struct { const char *host, *srv; } haproxy_domain97[] = {
	{ "a.b.c.d.e", "s4" }, { "d.e", "s4" }, { "zz.dd.e", "s85" }, { "zz.d.ee", "s4" },
	{ "www.example.com", "s22" }, { "q.rs.t", "s90" },
};

static void test_same_as_haproxy_param_hdr(void)
{
	struct proxy *dom97 = be_new(97, NULL, LB_HDR);
	struct proxy *param = be_new(3, NULL, LB_URL_PARAM);
	struct proxy *dom = be_new(3, NULL, LB_HDR);
	struct proxy *cons = be_new(3, NULL, LB_HDR);
	char field[128];

	param->lb_arg = "id";
	dom->lb_arg = cons->lb_arg = "X-Host";
	dom->lb_hdr_domain = 1;
	set_hash(cons, LB_HASH_CONSISTENT, LB_HFN_WT6, 0);
	for (size_t i = 0; i < sizeof(haproxy_param) / sizeof(haproxy_param[0]); i++)
		CHECK_STR(pick(param, haproxy_param[i].path, NULL), haproxy_param[i].srv);
	for (size_t i = 0; i < sizeof(haproxy_hdr) / sizeof(haproxy_hdr[0]); i++) {
		snprintf(field, sizeof(field), "X-Host: %s\r\n", haproxy_hdr[i].host);
		CHECK_STR(pick(dom, "/", field), haproxy_hdr[i].domain_map);
		CHECK_STR(pick(cons, "/", field), haproxy_hdr[i].cons_wt6);
	}
	dom97->lb_arg = "X-Host";
	dom97->lb_hdr_domain = 1;
	for (size_t i = 0; i < sizeof(haproxy_domain97) / sizeof(haproxy_domain97[0]); i++) {
		snprintf(field, sizeof(field), "X-Host: %s\r\n", haproxy_domain97[i].host);
		CHECK_STR(pick(dom97, "/", field), haproxy_domain97[i].srv);
	}
}

/* Consistent hashing: a key keeps its server; removing a server moves only
 * the keys it had, and they come back when it returns. */
static void test_consistent_moves(void)
{
	static const int w[] = { 1, 2, 1, 3, 1 };
	struct proxy *be = be_new(5, w, LB_URI);
	const char *before[400];
	char path[32];
	int moved = 0, lost = 0, count[5] = { 0 };

	set_hash(be, LB_HASH_CONSISTENT, LB_HFN_SDBM, 1);
	for (int i = 0; i < 400; i++) {
		snprintf(path, sizeof(path), "/obj/%d", i);
		before[i] = pick(be, path, NULL);
		CHECK(strcmp(before[i], pick(be, path, NULL)) == 0);
		count[before[i][1] - '1']++;
	}
	for (int i = 0; i < 5; i++)
		CHECK(count[i] > 0);              /* every server gets keys */
	CHECK(count[3] > count[0]);          /* weight 3 more than weight 1 */
	atomic_store(&be->srv[1]->admin, SRV_ADMIN_MAINT);
	for (int i = 0; i < 400; i++) {
		const char *now;

		snprintf(path, sizeof(path), "/obj/%d", i);
		now = pick(be, path, NULL);
		CHECK(strcmp(now, "s2") != 0);
		if (strcmp(before[i], "s2") == 0)
			lost++;
		else if (strcmp(now, before[i]) != 0)
			moved++;
	}
	CHECK(lost == count[1]);
	CHECK(moved == 0);
	atomic_store(&be->srv[1]->admin, SRV_ADMIN_READY);
	for (int i = 0; i < 400; i++) {
		snprintf(path, sizeof(path), "/obj/%d", i);
		CHECK(strcmp(pick(be, path, NULL), before[i]) == 0);
	}
	/* a weight change rebuilds the ring too: s5 gains keys, none moves
	 * between the other servers */
	atomic_store(&be->srv[4]->uweight, 4);
	for (int i = 0; i < 400; i++) {
		const char *now;

		snprintf(path, sizeof(path), "/obj/%d", i);
		now = pick(be, path, NULL);
		CHECK(strcmp(now, before[i]) == 0 || strcmp(now, "s5") == 0);
	}
}

/* A redispatch avoids the server it failed on, and the ring skips it. */
static void test_avoid(void)
{
	struct proxy *be = be_new(3, NULL, LB_URI);
	struct server *s = NULL, *s2 = NULL;
	uint32_t key;

	set_hash(be, LB_HASH_CONSISTENT, LB_HFN_SDBM, 1);
	CHECK(lb_hash_request(be, parse_req("/avoid", NULL), &key));
	CHECK(lb_pick(be, NULL, &key, NULL, &s) == LB_OK && s);
	CHECK(lb_pick(be, NULL, &key, s, &s2) == LB_OK && s2 && s2 != s);
	/* map-based as well */
	be->hash_type = LB_HASH_MAP;
	CHECK(lb_pick(be, NULL, &key, NULL, &s) == LB_OK && s);
	CHECK(lb_pick(be, NULL, &key, s, &s2) == LB_OK && s2 && s2 != s);
}

int main(void)
{
	test_uri_keys();
	test_url_param_keys();
	test_hdr_keys();
	test_hash_functions();
	test_same_as_haproxy();
	test_same_as_haproxy_param_hdr();
	test_consistent_moves();
	test_avoid();
	be_free_all();
	lb_hash_free_all();
	return t_done("lb_hash");
}
