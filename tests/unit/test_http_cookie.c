/* Cookie persistence: the server a request's cookie designates and the
 * %tsc characters, the cleaning of the request (prefix stripped, insert +
 * indirect cookie removed), the response edits of every mode (insert with
 * its attributes and dates, rewrite, prefix, preserve, indirect, postonly,
 * nocache), maxidle/maxlife expiry and refresh, and the date encoding. The
 * expected Set-Cookie values and the Cookie fields the server receives
 * were checked against HAProxy 2.6 with the same settings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/http/h1.h>
#include <sluice/http/http_cookie.h>
#include <sluice/http/msgedit.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include "t.h"

#define NOW 1795331589u     /* the date of the HAProxy runs */

static struct proxy be;
static struct server *srv[3];

static char inbuf[4096];
static struct http_hdr hdrs[48];
static struct http_msg msg;
static struct http_edit ed;
static char arena[2048];
static char term[2];

static void backend(const char *name, unsigned int opts)
{
	static const char *const cookies[] = { "A", "B", NULL };

	memset(&be, 0, sizeof(be));
	be.name = "be";
	be.mode = PX_MODE_HTTP;
	be.cookie_name = (char *)name;
	be.cookie_opts = opts;
	be.nsrv = 3;
	be.srv = srv;
	for (int i = 0; i < 3; i++) {
		if (!srv[i])
			srv[i] = server_new_default();
		srv[i]->be = &be;
		srv[i]->name = i == 0 ? "s1" : i == 1 ? "s2" : "s3";
		srv[i]->cookie = (char *)cookies[i];   /* s3 has none */
		atomic_store(&srv[i]->admin, SRV_ADMIN_READY);
	}
}

/* Parses a request with the given Cookie fields ("a=1" or "a=1\0b=2"...)
 * or a response with the given extra fields. */
static int parse(const char *head, int is_req, enum http_meth meth)
{
	struct h1_error e;
	size_t n = strlen(head);

	memcpy(inbuf, head, n);
	memset(&msg, 0, sizeof(msg));
	msg.hdrs = hdrs;
	msg.maxhdrs = 40;
	if (h1_parse_head(inbuf, n, is_req, meth, sizeof(inbuf), 0, &msg, &e) != H1_OK) {
		fprintf(stderr, "  cannot parse: %s\n", e.reason);
		return 0;
	}
	http_edit_init(&ed, &msg, arena, sizeof(arena), 48);
	return 1;
}

/* The live values of the fields named <name>, joined with " || ". */
static const char *values(const char *name)
{
	static char out[1024];
	size_t pos = 0;

	out[0] = '\0';
	for (int i = http_hdr_find(&msg, (struct ist){ name, strlen(name) }, 0); i >= 0;
	     i = http_hdr_find(&msg, (struct ist){ name, strlen(name) }, i + 1))
		pos += (size_t)snprintf(out + pos, sizeof(out) - pos, "%s%.*s", pos ? " || " : "",
		                        (int)msg.hdrs[i].value.len, msg.hdrs[i].value.ptr);
	return out;
}

/* Request with <cookie> (NULL: no Cookie field): the server's name or "-",
 * with the %tsc characters in term[]. */
static const char *request(const char *cookie, struct http_cookie_state *st)
{
	char head[1024];
	struct server *s;

	snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nHost: x\r\n%s%s%s\r\n",
	         cookie ? "Cookie: " : "", cookie ? cookie : "", cookie ? "\r\n" : "");
	if (!parse(head, 1, HTTP_METH_GET))
		return "?";
	s = http_cookie_server_ex(&be, &msg, &ed, term, st);
	return s ? s->name : "-";
}

/* Response of <s> with <fields> ("Name: v\r\n"...): returns its Set-Cookie
 * values; term[1] set. */
static const char *response(struct server *s, int from_cookie, enum http_meth meth,
                            const char *fields, const struct http_cookie_state *st)
{
	char head[1024];

	snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n%s\r\n",
	         fields ? fields : "");
	if (!parse(head, 0, meth))
		return "?";
	CHECK(http_cookie_response_ex(&be, s, from_cookie, &msg, &ed, term, st) == 0);
	return values("set-cookie");
}

static void test_dates(void)
{
	char b[6] = { 0 };

	http_cookie_date_enc((NOW + 3) >> 2, b);
	CHECK_STR(b, "awKWC");                  /* what HAProxy sent at NOW */
	CHECK(http_cookie_date_dec("awKWC") == (int)((NOW + 3) >> 2));
	CHECK(http_cookie_date_dec("aw*WC") == -1);
	http_cookie_date_enc(0, b);
	CHECK_STR(b, "AAAAA");
}

static void test_no_cookie_setting(void)
{
	backend(NULL, 0);
	CHECK_STR(request("SRV=A", NULL), "-");
	CHECK(term[0] == '-' && term[1] == '-');
	CHECK_STR(response(srv[0], 0, HTTP_METH_GET, "Set-Cookie: SRV=x\r\n", NULL), "SRV=x");
	CHECK(term[1] == '-');
}

/* cookie SRV insert indirect nocache */
static void test_insert_indirect(void)
{
	backend("SRV", PX_CK_INSERT | PX_CK_INDIRECT | PX_CK_NOCACHE);
	CHECK_STR(request(NULL, NULL), "-");
	CHECK(term[0] == 'N' && term[1] == 'N');
	CHECK_STR(response(srv[0], 0, HTTP_METH_GET, NULL, NULL), "SRV=A; path=/");
	CHECK(term[1] == 'I');
	CHECK_STR(values("cache-control"), "");    /* no freshness: not cacheable */

	CHECK_STR(request("SRV=A", NULL), "s1");
	CHECK(term[0] == 'V');
	CHECK_STR(values("cookie"), "");            /* the server never sees it */
	CHECK_STR(response(srv[0], 1, HTTP_METH_GET, NULL, NULL), "");
	CHECK(term[1] == 'N');

	CHECK_STR(request("SRV=B; x=1", NULL), "s2");
	CHECK_STR(values("cookie"), "x=1");
	CHECK_STR(request("x=1; SRV=A; y=2", NULL), "s1");
	CHECK_STR(values("cookie"), "x=1; y=2");
	CHECK_STR(request("SRV=C", NULL), "-");
	CHECK(term[0] == 'I');
	CHECK_STR(values("cookie"), "");
	CHECK_STR(request("SRV=", NULL), "-");      /* empty: never a server */
	CHECK(term[0] == 'I');
	CHECK_STR(request("SRVX=A; XSRV=B", NULL), "-");
	CHECK(term[0] == 'N');
	CHECK_STR(values("cookie"), "SRVX=A; XSRV=B");

	/* a server in maintenance is not chosen; one draining is */
	atomic_store(&srv[0]->admin, SRV_ADMIN_MAINT);
	CHECK_STR(request("SRV=A", NULL), "-");
	CHECK(term[0] == 'D');
	atomic_store(&srv[0]->admin, SRV_ADMIN_DRAIN);
	CHECK_STR(request("SRV=A", NULL), "s1");
	CHECK(term[0] == 'V');
	atomic_store(&srv[0]->admin, SRV_ADMIN_READY);

	/* the first occurrence decides; a later one is 'U'nused */
	CHECK_STR(request("SRV=B; SRV=A", NULL), "s2");
	CHECK(term[0] == 'U');

	/* nocache: a response a cache could keep gets Cache-control: private */
	CHECK_STR(response(srv[1], 0, HTTP_METH_GET, "Cache-Control: max-age=60\r\n", NULL),
	          "SRV=B; path=/");
	CHECK_STR(values("cache-control"), "max-age=60 || private");
	response(srv[1], 0, HTTP_METH_HEAD, "Expires: Thu, 01 Jan 2037 00:00:00 GMT\r\n", NULL);
	CHECK_STR(values("cache-control"), "private");
	response(srv[1], 0, HTTP_METH_GET, "Last-Modified: Thu, 01 Jan 2015 00:00:00 GMT\r\n",
	         NULL);
	CHECK_STR(values("cache-control"), "private");
	response(srv[1], 0, HTTP_METH_POST, "Cache-Control: max-age=60\r\n", NULL);
	CHECK_STR(values("cache-control"), "max-age=60");
	response(srv[1], 0, HTTP_METH_GET, "Cache-Control: public\r\n", NULL);
	CHECK_STR(values("cache-control"), "public");
	response(srv[1], 0, HTTP_METH_GET, "Cache-Control: max-age=60, private\r\n", NULL);
	CHECK_STR(values("cache-control"), "max-age=60, private");

	/* a server without a cookie value: the client forgets its cookie */
	CHECK_STR(response(srv[2], 0, HTTP_METH_GET, NULL, NULL),
	          "SRV=; Expires=Thu, 01-Jan-1970 00:00:01 GMT; path=/");
	CHECK(term[1] == 'I');
}

/* cookie SRV insert (without indirect): the server sees the cookie, and a
 * cookie of the same name set by the server is replaced. */
static void test_insert(void)
{
	backend("SRV", PX_CK_INSERT);
	CHECK_STR(request("SRV=B; x=1", NULL), "s2");
	CHECK_STR(values("cookie"), "SRV=B; x=1");
	CHECK_STR(response(srv[0], 0, HTTP_METH_GET, "Set-Cookie: SRV=xyz; path=/\r\n", NULL),
	          "SRV=A; path=/");
	CHECK(term[1] == 'I');
	CHECK_STR(response(srv[0], 1, HTTP_METH_GET, "Set-Cookie: SRV=xyz; path=/\r\n", NULL), "");
	CHECK(term[1] == 'D');
	CHECK_STR(response(srv[0], 1, HTTP_METH_GET, "Set-Cookie: other=1\r\n", NULL), "other=1");
	CHECK(term[1] == 'N');

	/* preserve: the server's own cookie stays, and none is added */
	backend("SRV", PX_CK_INSERT | PX_CK_PRESERVE);
	CHECK_STR(response(srv[0], 0, HTTP_METH_GET, "Set-Cookie: SRV=; Max-Age=0\r\n", NULL),
	          "SRV=; Max-Age=0");
	CHECK(term[1] == 'P');

	/* postonly */
	backend("SRV", PX_CK_INSERT | PX_CK_POSTONLY);
	CHECK_STR(response(srv[0], 0, HTTP_METH_GET, NULL, NULL), "");
	CHECK_STR(response(srv[1], 0, HTTP_METH_POST, NULL, NULL), "SRV=B; path=/");
}

/* cookie JS prefix; cookie SRV rewrite; passive mode */
static void test_prefix_rewrite(void)
{
	backend("JS", PX_CK_PREFIX);
	CHECK_STR(response(srv[0], 0, HTTP_METH_GET, "Set-Cookie: JS=sess42; path=/; HttpOnly\r\n",
	                   NULL), "JS=A~sess42; path=/; HttpOnly");
	CHECK(term[1] == 'R');
	CHECK_STR(request("JS=A~abc", NULL), "s1");
	CHECK_STR(values("cookie"), "JS=abc");
	CHECK_STR(request("JS=B~abc; o=1", NULL), "s2");
	CHECK_STR(values("cookie"), "JS=abc; o=1");
	CHECK_STR(request("JS=abc", NULL), "-");   /* no prefix: no server, left alone */
	CHECK(term[0] == 'I');
	CHECK_STR(values("cookie"), "JS=abc");
	CHECK_STR(request("JS=A", NULL), "s1");     /* the whole value without '~' */

	backend("SRV", PX_CK_REWRITE);
	CHECK_STR(response(srv[1], 0, HTTP_METH_GET, "Set-Cookie: SRV=anything; path=/\r\n",
	                   NULL), "SRV=B; path=/");
	CHECK(term[1] == 'R');
	CHECK_STR(request("SRV=A", NULL), "s1");
	CHECK_STR(values("cookie"), "SRV=A");

	backend("SRV", 0);                          /* passive: only read */
	CHECK_STR(request("SRV=B", NULL), "s2");
	CHECK_STR(response(srv[1], 1, HTTP_METH_GET, "Set-Cookie: SRV=B\r\n", NULL), "SRV=B");
	CHECK(term[1] == 'P');
	CHECK_STR(response(srv[1], 1, HTTP_METH_GET, NULL, NULL), "");
	CHECK(term[1] == 'N');
}

/* attributes and dates, as HAProxy wrote them at NOW */
static void test_attributes_dates(void)
{
	struct http_cookie_state st = { .now = NOW };
	char c[64], last[6] = { 0 }, first[6] = { 0 };

	backend("SRV", PX_CK_INSERT | PX_CK_POSTONLY | PX_CK_HTTPONLY | PX_CK_SECURE);
	be.cookie_domain = ".a.com; domain=.b.org";
	be.cookie_maxidle = 1800;
	be.cookie_maxlife = 8 * 3600;
	CHECK_STR(response(srv[1], 0, HTTP_METH_POST, NULL, &st),
	          "SRV=B|awKWC|awKWC; path=/; domain=.a.com; domain=.b.org; HttpOnly; Secure");

	be.cookie_opts = PX_CK_INSERT | PX_CK_INDIRECT;
	be.cookie_domain = NULL;
	/* a fresh cookie: valid, and only re-dated once its last date passed */
	http_cookie_date_enc((NOW - 60) >> 2, first);
	http_cookie_date_enc((NOW + 3) >> 2, last);
	snprintf(c, sizeof(c), "SRV=A|%s|%s", last, first);
	CHECK_STR(request(c, &st), "s1");
	CHECK(term[0] == 'V');
	CHECK(st.first_date == ((NOW - 60) >> 2) << 2);
	CHECK_STR(response(srv[0], 1, HTTP_METH_GET, NULL, &st), "");
	CHECK(term[1] == 'N');
	http_cookie_date_enc((NOW - 100) >> 2, last);
	snprintf(c, sizeof(c), "SRV=A|%s|%s", last, first);
	CHECK_STR(request(c, &st), "s1");
	snprintf(c, sizeof(c), "SRV=A|awKWC|%s; path=/", first);   /* first date kept */
	CHECK_STR(response(srv[0], 1, HTTP_METH_GET, NULL, &st), c);
	CHECK(term[1] == 'U');
	/* idle too long: expired */
	http_cookie_date_enc((NOW - 3600) >> 2, last);
	snprintf(c, sizeof(c), "SRV=A|%s|%s", last, first);
	CHECK_STR(request(c, &st), "-");
	CHECK(term[0] == 'E');
	/* alive too long: old */
	http_cookie_date_enc((NOW - 9 * 3600) >> 2, first);
	http_cookie_date_enc((NOW - 10) >> 2, last);
	snprintf(c, sizeof(c), "SRV=A|%s|%s", last, first);
	CHECK_STR(request(c, &st), "-");
	CHECK(term[0] == 'O');
	/* from the future beyond a day: not trusted */
	http_cookie_date_enc((NOW + 2 * 86400) >> 2, last);
	snprintf(c, sizeof(c), "SRV=A|%s", last);
	CHECK_STR(request(c, &st), "-");
	CHECK(term[0] == 'E');
	/* no date: accepted, and one is set */
	CHECK_STR(request("SRV=A", &st), "s1");
	CHECK(term[0] == 'V');
	CHECK_STR(response(srv[0], 1, HTTP_METH_GET, NULL, &st), "SRV=A|awKWC|awKWC; path=/");
	CHECK(term[1] == 'U');
}

/* An edit that does not fit is reported, not half done. */
static void test_no_room(void)
{
	char head[512];

	backend("SRV", PX_CK_INSERT);
	snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	CHECK(parse(head, 0, HTTP_METH_GET));
	http_edit_init(&ed, &msg, arena, 4, 48);
	CHECK(http_cookie_response(&be, srv[0], 0, &msg, &ed, term) < 0);
	CHECK_STR(values("set-cookie"), "");
}

int main(void)
{
	test_dates();
	test_no_cookie_setting();
	test_insert_indirect();
	test_insert();
	test_prefix_rewrite();
	test_attributes_dates();
	test_no_room();
	return t_done("http_cookie");
}
