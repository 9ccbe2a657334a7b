/* Message edit layer: lookups with hdr()/fhdr() semantics (checked against
 * what HAProxy 2.6 answers for the same fields), every field and start-line
 * edit, the arena and header-slot limits, forbidden bytes, and the flags
 * the layer keeps in step. Round trips through the serialiser are in
 * test_h1_out.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/http/h1.h>
#include <sluice/http/msgedit.h>
#include "t.h"

#define CAP 16

static struct http_hdr hdrs[CAP];
static struct http_msg msg;
static struct http_edit ed;
static char arena[4096];
static char input[8192];

/* Parses <s> (request or response) and binds the edit layer with an arena
 * of <arena_size> bytes and <cap> header slots. */
static int setup(const char *s, int is_req, size_t arena_size, int cap)
{
	struct h1_error err;
	size_t n = strlen(s);

	memcpy(input, s, n);
	memset(&msg, 0, sizeof(msg));
	msg.hdrs = hdrs;
	msg.maxhdrs = cap;
	if (h1_parse_head(input, n, is_req, HTTP_METH_GET, sizeof(input), 0, &msg, &err) != H1_OK) {
		fprintf(stderr, "  setup: %s at %zu\n", err.reason, err.offset);
		return 0;
	}
	http_edit_init(&ed, &msg, arena, arena_size, cap);
	return 1;
}

static char strbuf[8][512];
static int strbuf_i;

/* A NUL-terminated copy of a span, "(none)" for a NULL span. */
static const char *S(struct ist s)
{
	char *b = strbuf[strbuf_i++ % 8];

	if (!s.ptr)
		return "(none)";
	snprintf(b, 512, "%.*s", (int)s.len, s.ptr);
	return b;
}

/* The live fields as "name: value|name: value". */
static const char *fields(void)
{
	char *b = strbuf[strbuf_i++ % 8];
	size_t pos = 0;
	int i;

	b[0] = 0;
	for (i = 0; i < msg.nhdrs; i++) {
		if (http_hdr_is_deleted(&msg.hdrs[i]))
			continue;
		pos += (size_t)snprintf(b + pos, 512 - pos, "%s%.*s: %.*s", pos ? "|" : "",
		                        (int)msg.hdrs[i].name.len, msg.hdrs[i].name.ptr,
		                        (int)msg.hdrs[i].value.len, msg.hdrs[i].value.ptr);
	}
	return b;
}

static const char *occ(const char *name, int n, int split)
{
	struct ist v;

	if (!http_hdr_occ(&msg, (struct ist){ name, strlen(name) }, n, split, &v))
		return "(none)";
	return S(v);
}

static int cnt(const char *name, int split)
{
	return http_hdr_count(&msg, name ? (struct ist){ name, strlen(name) } : (struct ist){ 0 },
	                      split);
}

static struct ist I(const char *s)
{
	return (struct ist){ s, strlen(s) };
}

/* The requests HAProxy 2.6 was asked, and its answers. */
static void test_lookups(void)
{
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nx: a,,b\r\nX:  c , \"d,e\" \r\nY: 1\r\n\r\n",
	            1, 256, CAP));
	CHECK(cnt("x", 1) == 5);
	CHECK(cnt("X", 0) == 2);
	CHECK(cnt(NULL, 1) == 7);
	CHECK(cnt(NULL, 0) == 4);
	CHECK_STR(occ("x", 1, 1), "a");
	CHECK_STR(occ("x", 2, 1), "");
	CHECK_STR(occ("x", 3, 1), "b");
	CHECK_STR(occ("x", 4, 1), "c");
	CHECK_STR(occ("x", -1, 1), "\"d,e\"");
	CHECK_STR(occ("x", -2, 1), "c");
	CHECK_STR(occ("x", 0, 1), "\"d,e\"");
	CHECK_STR(occ("x", 6, 1), "(none)");
	CHECK_STR(occ("x", -6, 1), "(none)");
	CHECK_STR(occ("x", 1, 0), "a,,b");
	CHECK_STR(occ("x", -1, 0), "c , \"d,e\"");
	CHECK_STR(occ("z", -1, 0), "(none)");
	CHECK(http_hdr_find(&msg, I("x"), 0) == 1);
	CHECK(http_hdr_find(&msg, I("x"), 2) == 2);
	CHECK(http_hdr_find(&msg, I("x"), 3) == -1);
	CHECK(http_hdr_find(&msg, I("host"), 0) == 0);

	/* a trailing comma is one more empty value, an empty field is one */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nx: a,\r\ny: ,\r\nz:\r\n\r\n", 1, 256, CAP));
	CHECK(cnt("x", 1) == 2);
	CHECK_STR(occ("x", -1, 1), "");
	CHECK(cnt("y", 1) == 2);
	CHECK(cnt("z", 1) == 1);
	CHECK(cnt("z", 0) == 1);
	CHECK_STR(occ("z", 1, 1), "");

	/* quoted-strings: backslash escapes, an unclosed quote runs to the end */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nx:\r\nx: \"a\\\"b,c\" , d\r\n"
	            "q: \"abc, e\r\n\r\n", 1, 256, CAP));
	CHECK(cnt("x", 1) == 3);
	CHECK_STR(occ("x", 2, 1), "\"a\\\"b,c\"");
	CHECK_STR(occ("x", 3, 1), "d");
	CHECK(cnt("q", 1) == 1);

	/* the iterator names the field of each value */
	{
		struct http_hdr_iter it;
		struct ist v;
		int fields_seen[8], n = 0;

		CHECK(setup("GET / HTTP/1.1\r\nA: 1, 2\r\nHost: a\r\na: 3\r\n\r\n", 1, 256, CAP));
		http_hdr_iter_init(&it);
		while (n < 8 && http_hdr_next(&msg, I("a"), 1, &it, &v))
			fields_seen[n++] = it.idx;
		CHECK(n == 3 && fields_seen[0] == 0 && fields_seen[1] == 0 && fields_seen[2] == 2);
		CHECK(!http_hdr_next(&msg, I("a"), 1, &it, &v));
	}
}

static void test_uri_parts(void)
{
	CHECK_STR(S(http_uri_path(I("/a/b?x=1"))), "/a/b");
	CHECK_STR(S(http_uri_query(I("/a/b?x=1"))), "x=1");
	CHECK_STR(S(http_uri_query(I("/a/b"))), "(none)");
	CHECK_STR(S(http_uri_query(I("/a?"))), "");
	CHECK_STR(S(http_uri_path(I("http://h:8/p/q?z"))), "/p/q");
	CHECK_STR(S(http_uri_path(I("https://h"))), "");
	CHECK_STR(S(http_uri_path(I("http://h?q"))), "");
	CHECK_STR(S(http_uri_path(I("*"))), "");
	CHECK_STR(S(http_uri_path(I("example.com:443"))), "");
	CHECK_STR(http_status_reason(503), "Service Unavailable");
	CHECK_STR(http_status_reason(299), "Success");
	CHECK_STR(http_status_reason(599), "Server Error");
	CHECK_STR(http_status_reason(504), "Gateway Time-out");
}

static int match_x_dash(void *arg, struct ist name)
{
	(*(int *)arg)++;
	return name.len > 2 && (name.ptr[0] == 'x' || name.ptr[0] == 'X') && name.ptr[1] == '-';
}

static int match_fail(void *arg, struct ist name)
{
	return -7;
}

static void test_add_set_del(void)
{
	int calls = 0;

	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nAccept: */*\r\nx-a: 2\r\n\r\n",
	            1, 256, CAP));
	CHECK(http_hdr_add(&ed, I("X-New"), I("  v  ")) == 0);
	CHECK_STR(fields(), "Host: a|X-A: 1|Accept: */*|x-a: 2|X-New: v");
	CHECK(ed.flags & HTTP_EDIT_F_HEADERS);
	CHECK(!(ed.flags & HTTP_EDIT_F_START_LINE));

	/* set-header removes every occurrence and appends, as HAProxy */
	CHECK(http_hdr_set(&ed, I("x-A"), I("3")) == 0);
	CHECK_STR(fields(), "Host: a|Accept: */*|X-New: v|x-A: 3");
	CHECK(ed.ndeleted == 2);
	CHECK(cnt("x-a", 0) == 1);

	CHECK(http_hdr_del(&ed, I("accept"), HTTP_MATCH_STR, NULL, NULL) == 1);
	CHECK(http_hdr_del(&ed, I("accept"), HTTP_MATCH_STR, NULL, NULL) == 0);
	CHECK_STR(fields(), "Host: a|X-New: v|x-A: 3");

	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nX-Foo-Id: 1\r\nX-Bar: 2\r\nFoo-X: 3\r\n"
	            "Cookie: c\r\n\r\n", 1, 256, CAP));
	CHECK(http_hdr_del(&ed, I("x-"), HTTP_MATCH_BEG, NULL, NULL) == 2);
	CHECK_STR(fields(), "Host: a|Foo-X: 3|Cookie: c");
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nX-Foo-Id: 1\r\nX-Bar: 2\r\nFoo-X: 3\r\n"
	            "Cookie: c\r\n\r\n", 1, 256, CAP));
	CHECK(http_hdr_del(&ed, I("-X"), HTTP_MATCH_END, NULL, NULL) == 1);
	CHECK(http_hdr_del(&ed, I("OO"), HTTP_MATCH_SUB, NULL, NULL) == 2);   /* X-Foo-Id, Cookie */
	CHECK_STR(fields(), "Host: a|X-Bar: 2");
	CHECK(http_hdr_del(&ed, I("a-very-long-name"), HTTP_MATCH_END, NULL, NULL) == 0);
	CHECK(http_hdr_del(&ed, I(""), HTTP_MATCH_SUB, NULL, NULL) == 2);
	CHECK_STR(fields(), "");

	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nX-Foo-Id: 1\r\nX-Bar: 2\r\nFoo-X: 3\r\n\r\n",
	            1, 256, CAP));
	CHECK(http_hdr_del(&ed, I(""), HTTP_MATCH_CB, match_x_dash, &calls) == 2);
	CHECK(calls == 4);
	CHECK_STR(fields(), "Host: a|Foo-X: 3");
	CHECK(http_hdr_del(&ed, I(""), HTTP_MATCH_CB, match_fail, NULL) == -7);
	CHECK(http_hdr_del(&ed, I(""), HTTP_MATCH_CB, NULL, NULL) == HTTP_EDIT_EINVAL);

	CHECK(http_hdr_del_idx(&ed, 0) == 0);
	CHECK(http_hdr_del_idx(&ed, 0) == HTTP_EDIT_EINVAL);
	CHECK(http_hdr_del_idx(&ed, 99) == HTTP_EDIT_EINVAL);
	CHECK_STR(fields(), "Foo-X: 3");
	CHECK(http_hdr_replace_idx(&ed, 3, I("  new value ")) == 0);
	CHECK_STR(fields(), "Foo-X: new value");
	CHECK(http_hdr_replace_idx(&ed, 0, I("x")) == HTTP_EDIT_EINVAL);

	/* forbidden bytes */
	CHECK(http_hdr_add(&ed, I("X Y"), I("1")) == HTTP_EDIT_EINVAL);
	CHECK(http_hdr_add(&ed, I(""), I("1")) == HTTP_EDIT_EINVAL);
	CHECK(http_hdr_add(&ed, I("X:"), I("1")) == HTTP_EDIT_EINVAL);
	CHECK(http_hdr_add(&ed, I("X"), I("1\r\nEvil: 1")) == HTTP_EDIT_EINVAL);
	CHECK(http_hdr_add(&ed, I("X"), (struct ist){ "a\0b", 3 }) == HTTP_EDIT_EINVAL);
	CHECK(http_hdr_set(&ed, I("X"), I("\n")) == HTTP_EDIT_EINVAL);
	CHECK(http_hdr_replace_idx(&ed, 3, I("a\rb")) == HTTP_EDIT_EINVAL);
	CHECK_STR(fields(), "Foo-X: new value");
	/* empty values are fine */
	CHECK(http_hdr_add(&ed, I("E"), I("")) == 0);
	CHECK(cnt("e", 0) == 1 && cnt("e", 1) == 1);
}

/* Regex stand-ins: a prefix rewrite "^<from>(.*)" -> "<to>\1". */
struct prefix_rw {
	const char *from, *to;
	int calls;
	int fail_at;      /* call number that fails, 0: never */
};

static int prefix_rewrite(void *arg, struct http_edit *e, struct ist in, struct ist *out)
{
	struct prefix_rw *rw = arg;
	size_t fl = strlen(rw->from), tl = strlen(rw->to);
	char *p;

	if (++rw->calls == rw->fail_at)
		return -9;
	if (in.len < fl || memcmp(in.ptr, rw->from, fl) != 0)
		return 0;
	/* scratch the layer must give back */
	if (!http_edit_alloc(e, 3))
		return HTTP_EDIT_ENOROOM;
	p = http_edit_alloc(e, tl + in.len - fl);
	if (!p)
		return HTTP_EDIT_ENOROOM;
	memcpy(p, rw->to, tl);
	memcpy(p + tl, in.ptr + fl, in.len - fl);
	*out = (struct ist){ p, tl + in.len - fl };
	return 1;
}

/* Answers with configuration memory rather than the arena. */
static int const_rewrite(void *arg, struct http_edit *e, struct ist in, struct ist *out)
{
	if (in.len != 1 || in.ptr[0] != 'k')
		return 0;
	*out = I((const char *)arg);
	return 1;
}

static int empty_rewrite(void *arg, struct http_edit *e, struct ist in, struct ist *out)
{
	if (in.len)
		return 0;
	*out = I("E");
	return 1;
}

static void test_replace(void)
{
	struct prefix_rw rw = { "b", "B", 0, 0 };

	/* HAProxy 2.6 turns "ba , c,bb,  b" into "Ba, c,Bb,B" */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\ny: ba , c,bb,  b\r\nz: 1\r\ny: b\r\n\r\n",
	            1, 256, CAP));
	CHECK(http_hdr_replace_value(&ed, I("Y"), prefix_rewrite, &rw) == 2);
	CHECK_STR(fields(), "Host: a|y: Ba, c,Bb,B|z: 1|y: B");
	CHECK(rw.calls == 5);

	/* and "a,,b" with ^$ -> E into "a,E,b"; quotes keep commas */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nx: a,,b\r\nx: \"b,c\", bq\r\n\r\n", 1, 256, CAP));
	CHECK(http_hdr_replace_value(&ed, I("x"), empty_rewrite, NULL) == 1);
	rw.calls = 0;
	CHECK(http_hdr_replace_value(&ed, I("x"), prefix_rewrite, &rw) == 2);
	CHECK_STR(fields(), "Host: a|x: a,E,B|x: \"b,c\",Bq");

	/* HAProxy's manual example; 2.6.12 answers this, the manual shows the
	 * second comma followed by a space */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\n"
	            "X-Forwarded-For: 192.168.10.1, 192.168.13.24, 10.0.0.37\r\n\r\n",
	            1, 256, CAP));
	rw = (struct prefix_rw){ "192.168.", "172.16.", 0, 0 };
	CHECK(http_hdr_replace_value(&ed, I("x-forwarded-for"), prefix_rewrite, &rw) == 1);
	CHECK_STR(occ("x-forwarded-for", 1, 0), "172.16.10.1,172.16.13.24, 10.0.0.37");

	/* nothing matched: nothing changed, nothing consumed */
	{
		size_t used = ed.arena_used;

		rw = (struct prefix_rw){ "zz", "y", 0, 0 };
		CHECK(http_hdr_replace_value(&ed, I("x-forwarded-for"), prefix_rewrite, &rw) == 0);
		CHECK(ed.arena_used == used);
		CHECK(http_hdr_replace_header(&ed, I("x-forwarded-for"), prefix_rewrite, &rw) == 0);
		CHECK(ed.arena_used == used);
	}

	/* replace-header works on whole values and keeps places */
	CHECK(setup("GET / HTTP/1.1\r\nUser-Agent: curl/7.47.0\r\nHost: a\r\n"
	            "user-agent: wget, curl\r\n\r\n", 1, 256, CAP));
	rw = (struct prefix_rw){ "curl", "foo", 0, 0 };
	CHECK(http_hdr_replace_header(&ed, I("user-agent"), prefix_rewrite, &rw) == 1);
	CHECK_STR(fields(), "User-Agent: foo/7.47.0|Host: a|user-agent: wget, curl");
	rw.fail_at = rw.calls + 1;
	CHECK(http_hdr_replace_header(&ed, I("user-agent"), prefix_rewrite, &rw) == -9);

	/* a rewriter may answer with memory of its own */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nk: k, j,k\r\n\r\n", 1, 256, CAP));
	CHECK(http_hdr_replace_value(&ed, I("k"), const_rewrite, "K2") == 1);
	CHECK_STR(occ("k", 1, 0), "K2, j,K2");
	CHECK(http_hdr_replace_value(&ed, I("k"), const_rewrite, "bad\r\n") == 0);
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nk: k\r\n\r\n", 1, 256, CAP));
	CHECK(http_hdr_replace_value(&ed, I("k"), const_rewrite, "bad\r\n") == HTTP_EDIT_EINVAL);
	CHECK(http_hdr_replace_header(&ed, I("k"), const_rewrite, "bad\n") == HTTP_EDIT_EINVAL);
	CHECK_STR(fields(), "Host: a|k: k");
	CHECK(ed.arena_used == 0);
	CHECK(http_hdr_replace_header(&ed, I("k"), const_rewrite, " K3 ") == 1);
	CHECK_STR(fields(), "Host: a|k: K3");
	CHECK(ed.arena_used == 2);   /* memory outside the arena is copied */

	/* a failing rewriter leaves the field as it was */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\ny: b1, b2, b3\r\n\r\n", 1, 256, CAP));
	rw = (struct prefix_rw){ "b", "B", 0, 2 };
	CHECK(http_hdr_replace_value(&ed, I("y"), prefix_rewrite, &rw) == -9);
	CHECK_STR(fields(), "Host: a|y: b1, b2, b3");
	CHECK(ed.arena_used == 0);
}

static void test_start_line(void)
{
	CHECK(setup("GET /a/b?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", 1, 256, CAP));
	CHECK(http_set_method(&ed, I("POST")) == 0);
	CHECK(msg.meth == HTTP_METH_POST);
	CHECK_STR(S(msg.method), "POST");
	CHECK(ed.flags & HTTP_EDIT_F_START_LINE);
	CHECK(http_set_method(&ed, I("PURGE")) == 0);
	CHECK(msg.meth == HTTP_METH_OTHER);
	CHECK(http_set_method(&ed, I("get")) == 0);
	CHECK(msg.meth == HTTP_METH_OTHER);   /* methods are case-sensitive */
	CHECK(http_set_method(&ed, I("G T")) == HTTP_EDIT_EINVAL);
	CHECK(http_set_method(&ed, I("")) == HTTP_EDIT_EINVAL);

	CHECK(http_set_path(&ed, I("/new")) == 0);
	CHECK_STR(S(msg.uri), "/new?x=1");
	CHECK(http_set_query(&ed, I("y=2&z")) == 0);
	CHECK_STR(S(msg.uri), "/new?y=2&z");
	CHECK(http_set_query(&ed, I("")) == 0);
	CHECK_STR(S(msg.uri), "/new?");          /* the '?' stays */
	CHECK(http_set_pathq(&ed, I("/p")) == 0);
	CHECK_STR(S(msg.uri), "/p");
	CHECK(http_set_query(&ed, I("")) == 0);
	CHECK_STR(S(msg.uri), "/p");
	CHECK(http_set_query(&ed, I("q")) == 0);
	CHECK_STR(S(msg.uri), "/p?q");
	CHECK(http_set_uri(&ed, I("http://h:81/x?y")) == 0);
	CHECK(http_set_path(&ed, I("/z/")) == 0);
	CHECK_STR(S(msg.uri), "http://h:81/z/?y");
	CHECK(http_set_pathq(&ed, I("/w")) == 0);
	CHECK_STR(S(msg.uri), "http://h:81/w");
	CHECK(http_set_uri(&ed, I("http://h")) == 0);
	CHECK(http_set_path(&ed, I("/p")) == 0);
	CHECK_STR(S(msg.uri), "http://h/p");
	CHECK(http_set_uri(&ed, I("*")) == 0);
	CHECK(http_set_path(&ed, I("/star")) == 0);
	CHECK_STR(S(msg.uri), "/star");
	CHECK(http_set_uri(&ed, I("/a b")) == HTTP_EDIT_EINVAL);
	CHECK(http_set_uri(&ed, I("")) == HTTP_EDIT_EINVAL);
	CHECK(http_set_path(&ed, I("/a\r\n")) == HTTP_EDIT_EINVAL);
	CHECK(http_set_query(&ed, I("a b")) == HTTP_EDIT_EINVAL);
	CHECK_STR(S(msg.uri), "/star");
	CHECK(http_set_status(&ed, 200, I("")) == HTTP_EDIT_EINVAL);   /* a request */

	CHECK(setup("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, 256, CAP));
	CHECK(http_set_status(&ed, 503, (struct ist){ 0 }) == 0);
	CHECK(msg.status == 503);
	CHECK_STR(S(msg.reason), "Service Unavailable");
	CHECK(ed.arena_used == 0);
	CHECK(http_set_status(&ed, 299, I("Fine")) == 0);
	CHECK_STR(S(msg.reason), "Fine");
	CHECK(http_set_status(&ed, 99, I("")) == HTTP_EDIT_EINVAL);
	CHECK(http_set_status(&ed, 1000, I("")) == HTTP_EDIT_EINVAL);
	CHECK(http_set_status(&ed, 500, I("a\r\nb")) == HTTP_EDIT_EINVAL);
	CHECK(msg.status == 299);
	CHECK(http_set_method(&ed, I("GET")) == HTTP_EDIT_EINVAL);
	CHECK(http_set_uri(&ed, I("/")) == HTTP_EDIT_EINVAL);
}

static void test_limits(void)
{
	int rc;

	/* arena exhaustion: the failing edit changes nothing */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\r\n", 1, 10, CAP));
	CHECK(http_hdr_add(&ed, I("Ab"), I("cdef")) == 0);          /* 6 bytes */
	CHECK(http_hdr_add(&ed, I("Ab"), I("cdef")) == HTTP_EDIT_ENOROOM);
	CHECK(ed.arena_used == 6);
	CHECK(http_hdr_set(&ed, I("X"), I("123456")) == HTTP_EDIT_ENOROOM);
	CHECK_STR(fields(), "Host: a|X: 1|Ab: cdef");
	CHECK(http_set_uri(&ed, I("/12345")) == HTTP_EDIT_ENOROOM);
	CHECK(http_set_method(&ed, I("OPTIONS")) == HTTP_EDIT_ENOROOM);
	CHECK_STR(S(msg.uri), "/");
	CHECK(http_hdr_replace_idx(&ed, 1, I("12345")) == HTTP_EDIT_ENOROOM);
	CHECK(http_hdr_set(&ed, I("X"), I("123")) == 0);            /* 4 more: full */
	CHECK(ed.arena_used == 10);
	CHECK(http_hdr_del(&ed, I("ab"), HTTP_MATCH_STR, NULL, NULL) == 1);   /* deleting is free */
	CHECK(http_hdr_add(&ed, I("Z"), I("")) == HTTP_EDIT_ENOROOM);
	CHECK(http_set_status(&ed, 200, I("")) == HTTP_EDIT_EINVAL);
	CHECK(http_hdr_replace_idx(&ed, 1, I("")) == HTTP_EDIT_EINVAL);   /* X was deleted */

	/* no arena at all */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\n\r\n", 1, 0, CAP));
	http_edit_init(&ed, &msg, NULL, 100, CAP);
	CHECK(http_hdr_add(&ed, I("A"), I("b")) == HTTP_EDIT_ENOROOM);
	CHECK(http_hdr_del(&ed, I("host"), HTTP_MATCH_STR, NULL, NULL) == 1);

	/* replace-value running out part way through a field */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\ny: b1, b2, b3\r\n\r\n", 1, 12, CAP));
	{
		struct prefix_rw rw = { "b", "BBBB", 0, 0 };

		rc = http_hdr_replace_value(&ed, I("y"), prefix_rewrite, &rw);
		CHECK(rc == HTTP_EDIT_ENOROOM);
		CHECK_STR(fields(), "Host: a|y: b1, b2, b3");
		CHECK(ed.arena_used == 0);
	}

	/* header slots: additions reclaim deleted slots by packing */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n", 1, 512, 4));
	CHECK(http_hdr_add(&ed, I("C"), I("3")) == 0);
	CHECK(http_hdr_add(&ed, I("D"), I("4")) == HTTP_EDIT_ENOROOM);
	CHECK(http_hdr_del(&ed, I("a"), HTTP_MATCH_STR, NULL, NULL) == 1);
	CHECK(msg.nhdrs == 4 && ed.ndeleted == 1);
	CHECK(http_hdr_add(&ed, I("D"), I("4")) == 0);
	CHECK(msg.nhdrs == 4 && ed.ndeleted == 0);
	CHECK_STR(fields(), "Host: a|B: 2|C: 3|D: 4");
	/* set-header on a full array: the slot it frees is the one it takes */
	CHECK(http_hdr_set(&ed, I("b"), I("22")) == 0);
	CHECK_STR(fields(), "Host: a|C: 3|D: 4|b: 22");
	CHECK(http_hdr_set(&ed, I("E"), I("5")) == HTTP_EDIT_ENOROOM);
	CHECK_STR(fields(), "Host: a|C: 3|D: 4|b: 22");

	/* hdrs_cap below nhdrs is raised; counts are O(fields) and exact */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\n\r\n", 1, 512, CAP));
	http_edit_init(&ed, &msg, arena, 512, 0);
	CHECK(ed.hdrs_cap == 2);
	CHECK(http_hdr_add(&ed, I("N"), I("x")) == HTTP_EDIT_ENOROOM);
	CHECK(http_hdr_del_idx(&ed, 1) == 0);
	CHECK(http_hdr_add(&ed, I("N"), I("x")) == 0);
	CHECK_STR(fields(), "Host: a|N: x");

	/* an arena already holding deleted marks is counted at bind time */
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\n\r\n", 1, 512, CAP));
	CHECK(http_hdr_del_idx(&ed, 1) == 0);
	http_edit_init(&ed, &msg, arena, 512, CAP);
	CHECK(ed.ndeleted == 1);
}

static void test_flags(void)
{
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Length: 3\r\n"
	            "content-length: 3\r\n\r\n", 1, 512, CAP));
	CHECK(msg.flags & HTTP_F_CONN_CLOSE);
	CHECK(msg.flags & HTTP_F_CL_MERGED);
	CHECK(http_hdr_set(&ed, I("connection"), I("keep-alive, Upgrade")) == 0);
	CHECK(!(msg.flags & HTTP_F_CONN_CLOSE));
	CHECK(msg.flags & HTTP_F_CONN_KA);
	CHECK(msg.flags & HTTP_F_CONN_UPGRADE);
	CHECK(!(ed.flags & HTTP_EDIT_F_FRAMING));
	CHECK(http_hdr_del(&ed, I("connection"), HTTP_MATCH_STR, NULL, NULL) == 1);
	CHECK(!(msg.flags & (HTTP_F_CONN_KA | HTTP_F_CONN_UPGRADE | HTTP_F_CONN_CLOSE)));
	CHECK(http_hdr_add(&ed, I("Upgrade"), I("websocket")) == 0);
	CHECK(msg.flags & HTTP_F_UPGRADE);
	CHECK(http_hdr_del(&ed, I("upgrade"), HTTP_MATCH_STR, NULL, NULL) == 1);
	CHECK(!(msg.flags & HTTP_F_UPGRADE));
	CHECK(http_hdr_del(&ed, I("content-length"), HTTP_MATCH_STR, NULL, NULL) == 2);
	CHECK(ed.flags & HTTP_EDIT_F_FRAMING);
	CHECK(!(msg.flags & HTTP_F_CL_MERGED));
}

static void test_conn_named(void)
{
	CHECK(setup("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, X-Bar, Host, "
	            "Content-Length, upgrade\r\nX-Bar: 1\r\nx-bar: 2\r\nContent-Length: 0\r\n"
	            "Upgrade: websocket\r\nX-Keep: 1\r\n\r\n", 1, 512, CAP));
	CHECK(http_hdr_del_conn_named(&ed, 1) == 2);
	CHECK_STR(fields(), "Host: a|Connection: keep-alive, X-Bar, Host, Content-Length, upgrade|"
	          "Content-Length: 0|Upgrade: websocket|X-Keep: 1");
	CHECK(http_hdr_del_conn_named(&ed, 0) == 1);
	CHECK(!(msg.flags & HTTP_F_UPGRADE));
	CHECK(http_hdr_del_conn_named(&ed, 0) == 0);
}

int main(void)
{
	test_lookups();
	test_uri_parts();
	test_add_set_del();
	test_replace();
	test_start_line();
	test_limits();
	test_flags();
	test_conn_named();
	return t_done("test_http_msg");
}
