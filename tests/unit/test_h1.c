/* HTTP/1 head parser and chunked decoder: every shape of valid request and
 * response with all model fields checked, each strictness rule with the
 * exact status, smuggling vectors, bounds, incremental arrival (every prefix
 * of a valid head needs more bytes, every prefix of an invalid one needs
 * more or fails the same way), and chunked bodies split at every byte.
 *
 * Every parse goes through a heap copy of exactly the given length, so that
 * the sanitizer build catches a read past <len>. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/http/h1.h>
#include "t.h"

#define MAX_HEAD 16384

static struct http_hdr hdrs[128];
static struct http_msg msg;
static struct h1_error err;
static char *cur;          /* copy the spans of <msg> point into */
static size_t cur_len;

static enum h1_result parse_n(const char *s, size_t n, int is_req, enum http_meth req_meth,
                              size_t max_head, unsigned int opts, int maxhdrs)
{
	free(cur);
	cur = malloc(n ? n : 1);
	memcpy(cur, s, n);
	cur_len = n;
	memset(&msg, 0x55, sizeof(msg));
	msg.hdrs = hdrs;
	msg.maxhdrs = maxhdrs;
	memset(&err, 0, sizeof(err));
	return h1_parse_head(cur, n, is_req, req_meth, max_head, opts, &msg, &err);
}

static int ist_is(struct ist s, const char *want)
{
	if (s.len == strlen(want) && (s.len == 0 || memcmp(s.ptr, want, s.len) == 0))
		return 1;
	fprintf(stderr, "  span \"%.*s\" != \"%s\"\n", (int)s.len, s.ptr ? s.ptr : "", want);
	return 0;
}

static int hdr_is(int i, const char *name, const char *value)
{
	return i < msg.nhdrs && ist_is(msg.hdrs[i].name, name) && ist_is(msg.hdrs[i].value, value);
}

/* A valid head: complete parse consumes exactly <head> bytes even with a
 * body after it, and every strict prefix of it needs more bytes. Leaves
 * <msg> describing the full parse. */
static int valid_head(const char *head, const char *after, int is_req,
                      enum http_meth rm, unsigned int opts)
{
	size_t hl = strlen(head), al = strlen(after), i;
	char *full = malloc(hl + al + 1);
	enum h1_result rc;
	unsigned int flags;

	memcpy(full, head, hl);
	memcpy(full + hl, after, al);
	for (i = 0; i < hl; i++) {
		rc = parse_n(full, i, is_req, rm, MAX_HEAD, opts, 101);
		if (rc != H1_INCOMPLETE) {
			fprintf(stderr, "  prefix %zu/%zu of \"%s\" gave %d (%s)\n", i, hl, head,
			        rc, rc == H1_ERROR ? err.reason : "ok");
			free(full);
			return 0;
		}
	}
	rc = parse_n(full, hl, is_req, rm, MAX_HEAD, opts, 101);
	if (rc != H1_OK || msg.head_len != hl) {
		fprintf(stderr, "  \"%s\": rc %d head_len %zu (%d %s at %zu)\n", head, rc,
		        msg.head_len, err.status, err.reason ? err.reason : "", err.offset);
		free(full);
		return 0;
	}
	flags = msg.flags;
	rc = parse_n(full, hl + al, is_req, rm, MAX_HEAD, opts, 101);
	free(full);
	if (rc != H1_OK || msg.head_len != hl || msg.flags != flags) {
		fprintf(stderr, "  \"%s\" + body: rc %d head_len %zu\n", head, rc, msg.head_len);
		return 0;
	}
	return 1;
}

static int req_ok(const char *head)
{
	return valid_head(head, "", 1, HTTP_METH_OTHER, 0);
}

static int res_ok(const char *head, enum http_meth rm)
{
	return valid_head(head, "", 0, rm, 0);
}

/* An invalid head: the full input fails with <status>, and every prefix
 * either needs more bytes or already fails identically. */
static int invalid(const char *s, int is_req, enum http_meth rm, unsigned int opts,
                   int status)
{
	size_t n = strlen(s), i;
	struct h1_error full;
	enum h1_result rc;

	rc = parse_n(s, n, is_req, rm, MAX_HEAD, opts, 101);
	if (rc != H1_ERROR || err.status != status || !err.reason || err.offset > n) {
		fprintf(stderr, "  \"%s\": rc %d status %d (want %d) %s\n", s, rc,
		        rc == H1_ERROR ? err.status : 0, status, rc == H1_ERROR ? err.reason : "");
		return 0;
	}
	full = err;
	for (i = 0; i < n; i++) {
		rc = parse_n(s, i, is_req, rm, MAX_HEAD, opts, 101);
		if (rc == H1_OK || (rc == H1_ERROR && (err.status != full.status ||
		    err.reason != full.reason || err.offset != full.offset))) {
			fprintf(stderr, "  prefix %zu of \"%s\": rc %d %s\n", i, s, rc,
			        rc == H1_ERROR ? err.reason : "ok");
			return 0;
		}
	}
	parse_n(s, n, is_req, rm, MAX_HEAD, opts, 101);   /* leave err set for the caller */
	return 1;
}

static int req_bad(const char *s, int status)
{
	return invalid(s, 1, HTTP_METH_OTHER, 0, status);
}

static int res_bad(const char *s)
{
	return invalid(s, 0, HTTP_METH_GET, 0, 502);
}

/* ------------------------------------------------------------------------ */

static void test_helpers(void)
{
	CHECK(h1_meth_from_token("GET", 3) == HTTP_METH_GET);
	CHECK(h1_meth_from_token("HEAD", 4) == HTTP_METH_HEAD);
	CHECK(h1_meth_from_token("POST", 4) == HTTP_METH_POST);
	CHECK(h1_meth_from_token("PUT", 3) == HTTP_METH_PUT);
	CHECK(h1_meth_from_token("DELETE", 6) == HTTP_METH_DELETE);
	CHECK(h1_meth_from_token("CONNECT", 7) == HTTP_METH_CONNECT);
	CHECK(h1_meth_from_token("OPTIONS", 7) == HTTP_METH_OPTIONS);
	CHECK(h1_meth_from_token("TRACE", 5) == HTTP_METH_TRACE);
	CHECK(h1_meth_from_token("PATCH", 5) == HTTP_METH_PATCH);
	CHECK(h1_meth_from_token("get", 3) == HTTP_METH_OTHER);   /* case-sensitive */
	CHECK(h1_meth_from_token("GETS", 4) == HTTP_METH_OTHER);
	CHECK(h1_meth_from_token("PUX", 3) == HTTP_METH_OTHER);
	CHECK(h1_meth_from_token("PATCX", 5) == HTTP_METH_OTHER);
	CHECK(h1_meth_from_token("DELETX", 6) == HTTP_METH_OTHER);
	CHECK(h1_meth_from_token("OPTIONX", 7) == HTTP_METH_OTHER);
	CHECK(h1_meth_from_token("GET", 2) == HTTP_METH_OTHER);
	CHECK(h1_meth_from_token("", 0) == HTTP_METH_OTHER);

	CHECK(h1_name_eq(IST("Content-Length"), "content-length"));
	CHECK(h1_name_eq(IST("HOST"), "host"));
	CHECK(!h1_name_eq(IST("Hos"), "host"));
	CHECK(!h1_name_eq(IST("Hosts"), "host"));
	CHECK(!h1_name_eq(IST("H0st"), "host"));
	CHECK(h1_name_eq(IST(""), ""));
	/* only ASCII letters fold: '@' (0x40) is not '`' (0x60) */
	CHECK(!h1_name_eq(IST("@"), "`"));
}

static void test_requests(void)
{
	CHECK(req_ok("GET /index.html?x=1&y HTTP/1.1\r\nHost: example.com\r\n"
	             "User-Agent: t/1.0\r\n\r\n"));
	CHECK(msg.is_request == 1);
	CHECK(msg.meth == HTTP_METH_GET);
	CHECK(ist_is(msg.method, "GET"));
	CHECK(ist_is(msg.uri, "/index.html?x=1&y"));
	CHECK(ist_is(msg.version, "HTTP/1.1"));
	CHECK(msg.status == 0);
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_BODYLESS | HTTP_F_XFER_LEN));
	CHECK(msg.content_length == 0);
	CHECK(msg.nhdrs == 2);
	CHECK(hdr_is(0, "Host", "example.com"));
	CHECK(hdr_is(1, "User-Agent", "t/1.0"));
	CHECK(msg.hdrs == hdrs);
	CHECK(msg.maxhdrs == 101);

	/* Content-Length body: head_len stops before it */
	CHECK(valid_head("POST /form HTTP/1.1\r\nhost: a\r\nContent-Length: 5\r\n\r\n",
	                 "hello", 1, HTTP_METH_OTHER, 0));
	CHECK(msg.meth == HTTP_METH_POST);
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_CL | HTTP_F_XFER_LEN));
	CHECK(msg.content_length == 5);

	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_CL | HTTP_F_XFER_LEN));
	CHECK(msg.content_length == 0);

	CHECK(valid_head("PUT /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
	                 "5\r\nhello\r\n0\r\n\r\n", 1, HTTP_METH_OTHER, 0));
	CHECK(msg.meth == HTTP_METH_PUT);
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_TE | HTTP_F_CHUNKED | HTTP_F_XFER_LEN));

	/* codings before chunked are the origin's business; case-insensitive */
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip;level=\"1\" , CHUNKED\r\n\r\n"));
	CHECK(msg.flags & HTTP_F_CHUNKED);
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: x-a ; p = v ;q=\"a;\\\"b\" , chunked\r\n\r\n"));
	CHECK(msg.flags & HTTP_F_CHUNKED);
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n"
	             "Transfer-Encoding: chunked\r\n\r\n"));
	CHECK(msg.flags & HTTP_F_CHUNKED);

	/* HTTP/1.0: Host optional */
	CHECK(req_ok("GET / HTTP/1.0\r\n\r\n"));
	CHECK(ist_is(msg.version, "HTTP/1.0"));
	CHECK(msg.flags == (HTTP_F_BODYLESS | HTTP_F_XFER_LEN));
	CHECK(msg.nhdrs == 0);

	CHECK(req_ok("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n"));
	CHECK(msg.meth == HTTP_METH_OPTIONS);
	CHECK(ist_is(msg.uri, "*"));
	CHECK(req_ok("OPTIONS /x HTTP/1.1\r\nHost: a\r\n\r\n"));

	CHECK(req_ok("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"));
	CHECK(msg.meth == HTTP_METH_CONNECT);
	CHECK(ist_is(msg.uri, "example.com:443"));
	CHECK(req_ok("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\nHost: [2001:db8::1]:8443\r\n\r\n"));
	CHECK(ist_is(msg.uri, "[2001:db8::1]:8443"));
	CHECK(req_ok("CONNECT 192.0.2.1:25 HTTP/1.1\r\nHost: 192.0.2.1:25\r\n\r\n"));

	CHECK(req_ok("GET http://example.com:8080/a?b HTTP/1.1\r\nHost: example.com:8080\r\n\r\n"));
	CHECK(ist_is(msg.uri, "http://example.com:8080/a?b"));

	CHECK(req_ok("PURGE /cache HTTP/1.1\r\nHost: a\r\n\r\n"));
	CHECK(msg.meth == HTTP_METH_OTHER);
	CHECK(ist_is(msg.method, "PURGE"));
	CHECK(req_ok("get / HTTP/1.1\r\nHost: a\r\n\r\n"));
	CHECK(msg.meth == HTTP_METH_OTHER);
	CHECK(req_ok("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n"));
	CHECK(msg.meth == HTTP_METH_HEAD);
	CHECK(req_ok("DELETE /x HTTP/1.1\r\nHost: a\r\n\r\n"));
	CHECK(msg.meth == HTTP_METH_DELETE);
	CHECK(req_ok("TRACE / HTTP/1.1\r\nHost: a\r\n\r\n"));
	CHECK(msg.meth == HTTP_METH_TRACE);
	CHECK(req_ok("PATCH / HTTP/1.1\r\nHost: a\r\n\r\n"));
	CHECK(msg.meth == HTTP_METH_PATCH);

	/* OWS around values is not part of them; empty values are fine */
	CHECK(req_ok("GET / HTTP/1.1\r\nHost:a\r\nX-A:   a  b \t\r\nX-Empty:\r\nX-Sp:   \r\n"
	             "X-Obs: caf\xc3\xa9\r\n\r\n"));
	CHECK(msg.nhdrs == 5);
	CHECK(hdr_is(0, "Host", "a"));
	CHECK(hdr_is(1, "X-A", "a  b"));
	CHECK(hdr_is(2, "X-Empty", ""));
	CHECK(hdr_is(3, "X-Sp", ""));
	CHECK(hdr_is(4, "X-Obs", "caf\xc3\xa9"));

	/* look-alike names are ordinary fields (HAProxy forwards them; the
	 * origin must not read them as framing either) */
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nTransfer_Encoding: chunked\r\n"
	             "Content_Length: 5\r\n\r\n"));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_BODYLESS | HTTP_F_XFER_LEN));
	CHECK(msg.nhdrs == 3);

	/* empty lines before the request line are skipped, and counted */
	CHECK(req_ok("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"));
	CHECK(msg.head_len == 31);
	CHECK(ist_is(msg.method, "GET"));
	CHECK(msg.method.ptr == cur + 4);
	/* an empty Host is allowed (RFC 9110 section 7.2) */
	CHECK(req_ok("GET / HTTP/1.1\r\nHost:\r\n\r\n"));
	CHECK(hdr_is(0, "Host", ""));
}

static void test_request_flags(void)
{
	CHECK(req_ok("GET /chat HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\n"
	             "Upgrade: websocket\r\n\r\n"));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_CONN_KA | HTTP_F_CONN_UPGRADE |
	                    HTTP_F_UPGRADE | HTTP_F_BODYLESS | HTTP_F_XFER_LEN));
	CHECK(req_ok("GET / HTTP/1.1\r\nHost: a\r\nconnection: ,CLOSE ,, x-foo\r\n\r\n"));
	CHECK((msg.flags & (HTTP_F_CONN_CLOSE | HTTP_F_CONN_KA | HTTP_F_CONN_UPGRADE)) ==
	      HTTP_F_CONN_CLOSE);
	CHECK(req_ok("GET / HTTP/1.1\r\nHost: a\r\nConnection: closed\r\n\r\n"));
	CHECK(!(msg.flags & HTTP_F_CONN_CLOSE));
	CHECK(req_ok("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n"));
	CHECK((msg.flags & (HTTP_F_CONN_CLOSE | HTTP_F_CONN_KA)) ==
	      (HTTP_F_CONN_CLOSE | HTTP_F_CONN_KA));
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n"));
	CHECK(msg.flags & HTTP_F_EXPECT_100);
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue, x\r\nContent-Length: 3\r\n\r\n"));
	CHECK(!(msg.flags & HTTP_F_EXPECT_100));
	/* RFC 9110 section 10.1.1: ignored in HTTP/1.0 */
	CHECK(req_ok("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"));
	CHECK(!(msg.flags & HTTP_F_EXPECT_100));
	CHECK(req_ok("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
	CHECK(msg.flags == (HTTP_F_CONN_KA | HTTP_F_BODYLESS | HTTP_F_XFER_LEN));
}

static void test_content_length(void)
{
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n"));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_CL | HTTP_F_XFER_LEN | HTTP_F_CL_MERGED));
	CHECK(msg.content_length == 5);
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\ncontent-length:5\r\n\r\n"));
	CHECK(msg.flags & HTTP_F_CL_MERGED);
	CHECK(msg.content_length == 5);
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 007\r\n\r\n"));
	CHECK(msg.content_length == 7);
	CHECK(!(msg.flags & HTTP_F_CL_MERGED));
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9223372036854775807\r\n\r\n"));
	CHECK(msg.content_length == 9223372036854775807ULL);
	CHECK(req_ok("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 000000000000000000000000000042\r\n\r\n"));
	CHECK(msg.content_length == 42);

	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9223372036854775808\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551621\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 6\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400));
	CHECK_STR(err.reason, "conflicting Content-Length values");
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5,\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ,5\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5 5\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x5\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5.0\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \"5\"\r\n\r\n", 400));
	/* error offset is the start of the offending line */
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n", 400));
	CHECK(err.offset == 26);
}

/* Request smuggling vectors: each must be refused with 400. */
static void test_smuggling(void)
{
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
	              "Transfer-Encoding: chunked\r\n\r\n", 400));
	CHECK_STR(err.reason, "both Content-Length and Transfer-Encoding");
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
	              "Content-Length: 5\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400));
	CHECK_STR(err.reason, "chunked applied twice");
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
	              "Transfer-Encoding: chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n", 400));
	CHECK_STR(err.reason, "chunked is not the final coding");
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
	              "Transfer-Encoding: gzip\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ,chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked,\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \"chunked\"\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chun ked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip;x, chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip;=1, chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip;x=, chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip;x=\"a, chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip;x=\"a\\\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip x, chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip;x=y z, chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n", 400));
	CHECK_STR(err.reason, "whitespace before colon");
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding\t: chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding\x0b: chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \x0b" "chunked\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\x0b\r\n\r\n", 400));
	CHECK(req_bad("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400));
	CHECK_STR(err.reason, "Transfer-Encoding in HTTP/1.0");
	/* obs-fold hides a second value from agents that fold */
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n , chunked\r\n\r\n", 400));
	CHECK_STR(err.reason, "obsolete line folding");
	CHECK(req_bad("POST / HTTP/1.1\r\nHost: a\r\nX: a\r\n\tb\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400));
	/* bare CR: some agents end the line there */
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nX: a\rTransfer-Encoding: chunked\r\n\r\n", 400));
	CHECK_STR(err.reason, "bare CR");
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nX: a\r\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\rHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\n\r\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\n\rX", 400));
	CHECK(invalid("GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", 1, 0, H1_O_ACCEPT_INVALID, 400));
	/* NUL and other controls in values */
	{
		static const char nul[] = "GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n";

		CHECK(parse_n(nul, sizeof(nul) - 1, 1, 0, MAX_HEAD, 0, 101) == H1_ERROR);
		CHECK(err.status == 400);
		CHECK(err.offset == 29);
		CHECK(parse_n(nul, sizeof(nul) - 1, 1, 0, MAX_HEAD, H1_O_ACCEPT_INVALID, 101) == H1_ERROR);
		CHECK(err.status == 400);
	}
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nX: a\x01" "b\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nX: a\x7f" "b\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nX: a\x1b[0m\r\n\r\n", 400));
	/* several Host fields, or one with a bad value */
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400));
	CHECK_STR(err.reason, "several Host fields");
	CHECK(req_bad("GET / HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: user@a\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nX: y\r\n\r\n", 400));
	CHECK_STR(err.reason, "missing Host");
}

static void test_request_line_errors(void)
{
	CHECK(req_bad("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /  HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /\tHTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad(" GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("G:T / HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("\x16\x03\x01\x02\x00", 400));
	CHECK(req_bad("GET /\r\n\r\n", 400));            /* HTTP/0.9 */
	CHECK(req_bad("GET\r\n\r\n", 400));
	CHECK(req_bad("GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	/* versions */
	CHECK(req_bad("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505));
	CHECK_STR(err.reason, "unsupported HTTP version");
	CHECK(req_bad("GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505));
	CHECK(req_bad("GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505));
	CHECK(req_bad("GET / HTTP/3.1\r\nHost: a\r\n\r\n", 505));
	CHECK(req_bad("GET / HTTP/1.10\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/11.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / http/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTPS/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / RTSP/1.0\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1x\r\nHost: a\r\n\r\n", 400));
	/* request-target characters */
	CHECK(req_bad("GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /{x} HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /a\"b HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /a<b> HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /a\\b HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /a|b HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /a^b HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET /a`b HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(valid_head("GET /caf\xc3\xa9#x{|}^`\\\"<> HTTP/1.1\r\nHost: a\r\n\r\n", "", 1, 0,
	                 H1_O_ACCEPT_INVALID));
	CHECK(ist_is(msg.uri, "/caf\xc3\xa9#x{|}^`\\\"<>"));
	CHECK(invalid("GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", 1, 0, H1_O_ACCEPT_INVALID, 400));
	CHECK(invalid("GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n", 1, 0, H1_O_ACCEPT_INVALID, 400));
	/* request-target forms */
	CHECK(req_bad("GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK_STR(err.reason, "asterisk target outside OPTIONS");
	CHECK(req_bad("OPTIONS *x HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET foo HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET :80 HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET 1http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET h_ttp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_ok("GET svn+ssh.x-y://a/ HTTP/1.1\r\nHost: a\r\n\r\n"));
	CHECK(req_bad("CONNECT /x HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK_STR(err.reason, "CONNECT target is not host:port");
	CHECK(req_bad("CONNECT example.com HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("CONNECT example.com: HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("CONNECT :443 HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("CONNECT user@host:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("CONNECT http://host:443/ HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("CONNECT host:443x HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("CONNECT host:1234567 HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("CONNECT a:b:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("CONNECT [::1:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("CONNECT * HTTP/1.1\r\nHost: a\r\n\r\n", 400));
}

static void test_field_errors(void)
{
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nX\r\n\r\n", 400));
	CHECK_STR(err.reason, "field line without colon");
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\n: v\r\n\r\n", 400));
	CHECK_STR(err.reason, "empty field name");
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nX@Y: v\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nX\xc3\xa9: v\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nX Y: v\r\n\r\n", 400));
	/* accept-invalid relaxes name characters, never whitespace or colon */
	CHECK(valid_head("GET / HTTP/1.1\r\nHost: a\r\nX@Y\xc3\xa9: v\r\n\r\n", "", 1, 0,
	                 H1_O_ACCEPT_INVALID));
	CHECK(hdr_is(1, "X@Y\xc3\xa9", "v"));
	CHECK(invalid("GET / HTTP/1.1\r\nHost: a\r\nX Y: v\r\n\r\n", 1, 0, H1_O_ACCEPT_INVALID, 400));
	CHECK(invalid("GET / HTTP/1.1\r\nHost: a\r\nX : v\r\n\r\n", 1, 0, H1_O_ACCEPT_INVALID, 400));
	CHECK(invalid("GET / HTTP/1.1\r\nHost: a\r\n\x01X: v\r\n\r\n", 1, 0, H1_O_ACCEPT_INVALID, 400));
	CHECK(invalid("GET / HTTP/1.1\r\nHost: a\r\n x: v\r\n\r\n", 1, 0, H1_O_ACCEPT_INVALID, 400));
	/* ... and value controls other than NUL, CR and LF */
	CHECK(valid_head("GET / HTTP/1.1\r\nHost: a\r\nX: a\x01\x7f" "b\r\n\r\n", "", 1, 0,
	                 H1_O_ACCEPT_INVALID));
	CHECK(hdr_is(1, "X", "a\x01\x7f" "b"));

	/* bare LF: strict by default, a line ending with accept-invalid */
	CHECK(req_bad("GET / HTTP/1.1\nHost: a\n\n", 400));
	CHECK_STR(err.reason, "bare LF line ending");
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\n\n", 400));
	CHECK(req_bad("\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400));
	CHECK(req_bad("GET / HTTP/1.1\r\nHost: a\r\nX: a\nb\r\n\r\n", 400));
	CHECK(valid_head("GET / HTTP/1.1\nHost: a\nX: b \n\n", "", 1, 0, H1_O_ACCEPT_INVALID));
	CHECK(msg.nhdrs == 2);
	CHECK(hdr_is(1, "X", "b"));
	CHECK(ist_is(msg.version, "HTTP/1.1"));
	CHECK(valid_head("\n\r\nGET / HTTP/1.1\r\nHost: a\n\r\n", "", 1, 0, H1_O_ACCEPT_INVALID));
	CHECK(valid_head("HTTP/1.1 200 OK\nContent-Length: 1\n\n", "x", 0, HTTP_METH_GET,
	                 H1_O_ACCEPT_INVALID));
	CHECK(msg.content_length == 1);
	CHECK(ist_is(msg.reason, "OK"));
	/* H1_O_BARE_LF alone (the streams' default) accepts the line ending and
	 * nothing else accept-invalid would */
	CHECK(valid_head("GET / HTTP/1.1\nHost: a\nX: b \n\n", "", 1, 0, H1_O_BARE_LF));
	CHECK(hdr_is(1, "X", "b"));
	CHECK(invalid("GET / HTTP/1.1\nHost: a\nX: a\x01b\n\n", 1, 0, H1_O_BARE_LF, 400));
	CHECK(invalid("GET / HTTP/1.1\nHost: a\nX: a\rb\n\n", 1, 0, H1_O_BARE_LF, 400));
	/* H1_O_ANY_VERSION: 1.2 and 2.0 read as 1.1, 0.9 still refused */
	CHECK(valid_head("GET / HTTP/1.2\r\nHost: a\r\n\r\n", "", 1, 0, H1_O_ANY_VERSION));
	CHECK(ist_is(msg.version, "HTTP/1.1") && (msg.flags & HTTP_F_VER_11));
	CHECK(valid_head("GET / HTTP/2.0\r\nHost: a\r\n\r\n", "", 1, 0, H1_O_ANY_VERSION));
	CHECK(invalid("GET / HTTP/0.9\r\nHost: a\r\n\r\n", 1, 0, H1_O_ANY_VERSION, 505));
	/* the same for a response (health checks): HTTP/2.0 200 is a 200 */
	CHECK(valid_head("HTTP/2.0 200 OK\r\n\r\n", "", 0, HTTP_METH_GET, H1_O_ANY_VERSION));
	CHECK(ist_is(msg.version, "HTTP/1.1") && msg.status == 200);
	CHECK(invalid("HTTP/0.9 200 OK\r\n\r\n", 0, HTTP_METH_GET, H1_O_ANY_VERSION, 502));
	/* H1_O_HOST_OPTIONAL: a missing Host passes, a doubled one does not */
	CHECK(valid_head("GET / HTTP/1.1\r\nX: b\r\n\r\n", "", 1, 0, H1_O_HOST_OPTIONAL));
	CHECK(invalid("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 1, 0, H1_O_HOST_OPTIONAL, 400));
}

/* Values are scanned a word at a time: a control byte at any position of a
 * long value, and at any alignment, is still found. */
static void test_value_scan(void)
{
	static const char bytes[] = { '\x7f', '\x1f', '\x01', '\0', '\t', '\x80', '\xff', ' ' };
	char req[256], want[64];
	size_t b, pos, lead;

	for (b = 0; b < sizeof(bytes); b++) {
		for (lead = 0; lead < 8; lead++) {
			for (pos = 0; pos < 40; pos++) {
				size_t n = (size_t)sprintf(req, "GET / HTTP/1.1\r\nHost: a\r\nX%.*s: ",
				                           (int)lead, "yyyyyyyy");
				size_t v = n, i;
				int ok = bytes[b] == '\t' || bytes[b] == ' ' || (uint8_t)bytes[b] >= 0x80;
				enum h1_result rc;

				for (i = 0; i < 40; i++)
					req[n++] = i == pos ? bytes[b] : (char)('a' + i % 26);
				memcpy(want, req + v, 40);
				n += (size_t)sprintf(req + n, "\r\n\r\n");
				rc = parse_n(req, n, 1, 0, MAX_HEAD, 0, 101);
				if (ok) {
					size_t s0 = 0, e0 = 40;

					while (s0 < e0 && (want[s0] == ' ' || want[s0] == '\t'))
						s0++;
					while (e0 > s0 && (want[e0 - 1] == ' ' || want[e0 - 1] == '\t'))
						e0--;
					want[e0] = '\0';
					CHECK(rc == H1_OK && msg.nhdrs == 2 && ist_is(msg.hdrs[1].value, want + s0));
				} else {
					CHECK(rc == H1_ERROR && err.status == 400 && err.offset == v + pos);
				}
			}
		}
	}
}

static void test_responses(void)
{
	CHECK(valid_head("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\n",
	                 "abc", 0, HTTP_METH_GET, 0));
	CHECK(msg.is_request == 0);
	CHECK(msg.status == 200);
	CHECK(ist_is(msg.reason, "OK"));
	CHECK(ist_is(msg.version, "HTTP/1.1"));
	CHECK(msg.meth == HTTP_METH_GET);
	CHECK(msg.method.len == 0 && msg.uri.len == 0);
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_CL | HTTP_F_XFER_LEN));
	CHECK(msg.content_length == 3);
	CHECK(msg.nhdrs == 2);
	CHECK(hdr_is(1, "Content-Type", "text/plain"));

	CHECK(res_ok("HTTP/1.0 404 Not Found Here\r\nServer: x\r\n\r\n", HTTP_METH_GET));
	CHECK(msg.status == 404);
	CHECK(ist_is(msg.reason, "Not Found Here"));
	CHECK(ist_is(msg.version, "HTTP/1.0"));
	CHECK(msg.flags == 0);   /* body until close */

	/* reason-less status lines, with and without the SP */
	CHECK(res_ok("HTTP/1.1 200\r\n\r\n", HTTP_METH_GET));
	CHECK(msg.status == 200);
	CHECK(ist_is(msg.reason, ""));
	CHECK(msg.flags == HTTP_F_VER_11);
	CHECK(res_ok("HTTP/1.1 200 \r\n\r\n", HTTP_METH_GET));
	CHECK(ist_is(msg.reason, ""));
	CHECK(res_ok("HTTP/1.1 503  Busy\t \xc3\xa9\r\n\r\n", HTTP_METH_GET));
	CHECK(ist_is(msg.reason, " Busy\t \xc3\xa9"));
	CHECK(msg.status == 503);
	CHECK(res_ok("HTTP/1.1 599 X\r\n\r\n", HTTP_METH_GET));

	CHECK(valid_head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
	                 "0\r\n\r\n", 0, HTTP_METH_POST, 0));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_TE | HTTP_F_CHUNKED | HTTP_F_XFER_LEN));
	/* TE wins over CL, which must be dropped */
	CHECK(res_ok("HTTP/1.1 200 OK\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n",
	             HTTP_METH_GET));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_TE | HTTP_F_CHUNKED | HTTP_F_XFER_LEN |
	                    HTTP_F_CL_DROP));
	CHECK(msg.content_length == 0);
	/* TE not ending in chunked: until close (RFC 9112 section 6.3) */
	CHECK(res_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 10\r\n\r\n",
	             HTTP_METH_GET));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_TE | HTTP_F_CL_DROP));
	CHECK(res_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", HTTP_METH_GET));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_TE));

	/* bodyless responses */
	CHECK(res_ok("HTTP/1.1 204 No Content\r\n\r\n", HTTP_METH_GET));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_BODYLESS | HTTP_F_XFER_LEN));
	CHECK(res_ok("HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n", HTTP_METH_GET));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_CL | HTTP_F_BODYLESS | HTTP_F_XFER_LEN));
	CHECK(msg.content_length == 1234);
	CHECK(res_ok("HTTP/1.1 100 Continue\r\n\r\n", HTTP_METH_POST));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_BODYLESS | HTTP_F_XFER_LEN));
	CHECK(res_ok("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n", HTTP_METH_GET));
	CHECK(msg.flags & HTTP_F_BODYLESS);
	CHECK(res_ok("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
	             "Upgrade: websocket\r\n\r\n", HTTP_METH_GET));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_CONN_UPGRADE | HTTP_F_UPGRADE |
	                    HTTP_F_BODYLESS | HTTP_F_XFER_LEN | HTTP_F_TUNNEL));
	CHECK(res_ok("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", HTTP_METH_HEAD));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_CL | HTTP_F_BODYLESS | HTTP_F_XFER_LEN));
	CHECK(msg.meth == HTTP_METH_HEAD);
	CHECK(res_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", HTTP_METH_HEAD));
	CHECK(msg.flags & HTTP_F_BODYLESS);
	CHECK(res_ok("HTTP/1.1 200 Connection established\r\n\r\n", HTTP_METH_CONNECT));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_BODYLESS | HTTP_F_XFER_LEN | HTTP_F_TUNNEL));
	CHECK(res_ok("HTTP/1.1 407 Proxy Auth\r\nContent-Length: 0\r\n\r\n", HTTP_METH_CONNECT));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_CL | HTTP_F_XFER_LEN));
	CHECK(res_ok("HTTP/1.1 200 OK\r\nContent-Length: 4, 4\r\nConnection: close\r\n\r\n",
	             HTTP_METH_GET));
	CHECK(msg.flags == (HTTP_F_VER_11 | HTTP_F_HAS_CL | HTTP_F_CL_MERGED | HTTP_F_XFER_LEN |
	                    HTTP_F_CONN_CLOSE));
	/* responses need no Host and may have several */
	CHECK(res_ok("HTTP/1.1 200 OK\r\nHost: a\r\nHost: b c\r\nExpect: 100-continue\r\n\r\n",
	              HTTP_METH_GET));
	CHECK(!(msg.flags & HTTP_F_EXPECT_100));

	/* every invalid response is a 502 */
	CHECK(res_bad("HTTP/1.1 20 OK\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 2000 OK\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 099 X\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 600 X\r\n\r\n"));
	CHECK_STR(err.reason, "status code out of range");
	CHECK(res_bad("HTTP/1.1 2x0 OK\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1  200 OK\r\n\r\n"));
	CHECK(res_bad("HTTP/2.0 200 OK\r\n\r\n"));
	CHECK(res_bad("HTTP/1.2 200 OK\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1\t200 OK\r\n\r\n"));
	CHECK(res_bad("ICY 200 OK\r\n\r\n"));
	CHECK(res_bad("\r\nHTTP/1.1 200 OK\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 200 O\x01K\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 200 OK\rX\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 200 OK\nX: y\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 200 OK\r\nX : y\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 200 OK\r\nX: y\r\n z\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"));
	CHECK(res_bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;a=b\r\n\r\n"));
	CHECK(res_bad("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"));
	{
		static const char nul[] = "HTTP/1.1 200 OK\r\nX: \0\r\n\r\n";

		CHECK(parse_n(nul, sizeof(nul) - 1, 0, HTTP_METH_GET, MAX_HEAD, 0, 101) == H1_ERROR);
		CHECK(err.status == 502 && err.offset == 20);
	}
}

/* max_head and maxhdrs */
static void test_bounds(void)
{
	const char *req = "GET /abcdef HTTP/1.1\r\nHost: a\r\nX-Long: 0123456789\r\n\r\n";
	const char *res = "HTTP/1.1 200 OK\r\nX-Long: 0123456789\r\n\r\n";
	size_t n = strlen(req), rl = strlen("GET /abcdef HTTP/1.1\r\n");
	size_t max;

	/* a head of exactly max_head bytes fits, whatever follows */
	CHECK(parse_n(req, n, 1, 0, n, 0, 101) == H1_OK && msg.head_len == n);
	CHECK(parse_n(req, n, 1, 0, n + 1, 0, 101) == H1_OK);
	/* one byte less: 431 once past the request line, 414 inside it, and
	 * never "incomplete" once max_head bytes are there */
	for (max = 0; max < n; max++) {
		enum h1_result rc = parse_n(req, n, 1, 0, max, 0, 101);
		int want = max < rl ? 414 : 431;

		CHECK(rc == H1_ERROR && err.status == want);
		if (rc != H1_ERROR || err.status != want)
			fprintf(stderr, "  max_head %zu: rc %d status %d\n", max, rc, err.status);
		CHECK(parse_n(req, max, 1, 0, max, 0, 101) == H1_ERROR && err.status == want);
		if (max)
			CHECK(parse_n(req, max - 1, 1, 0, max, 0, 101) == H1_INCOMPLETE);
	}
	CHECK(parse_n(req, rl - 1, 1, 0, rl - 1, 0, 101) == H1_ERROR && err.status == 414);
	CHECK_STR(err.reason, "request line too long");
	CHECK(parse_n(req, n, 1, 0, rl, 0, 101) == H1_ERROR && err.status == 431);
	CHECK_STR(err.reason, "header section too long");
	/* leading empty lines belong to the request line */
	CHECK(parse_n("\r\n\r\n\r\n", 6, 1, 0, 6, 0, 101) == H1_ERROR && err.status == 414);
	CHECK(parse_n("\r\n\r\n\r\n", 6, 1, 0, 7, 0, 101) == H1_INCOMPLETE);
	/* responses: 502 */
	CHECK(parse_n(res, strlen(res), 0, HTTP_METH_GET, 10, 0, 101) == H1_ERROR && err.status == 502);
	CHECK(parse_n(res, strlen(res), 0, HTTP_METH_GET, 30, 0, 101) == H1_ERROR && err.status == 502);
	CHECK(parse_n(res, strlen(res), 0, HTTP_METH_GET, strlen(res), 0, 101) == H1_OK);

	/* maxhdrs: exactly that many fields pass, one more is a 400 */
	{
		const char *three = "GET / HTTP/1.1\r\nHost: a\r\nB: 1\r\nC: 2\r\n\r\n";
		const char *four = "GET / HTTP/1.1\r\nHost: a\r\nB: 1\r\nC: 2\r\nD: 3\r\n\r\n";
		const char *r4 = "HTTP/1.1 204 No\r\nA: 1\r\nB: 1\r\nC: 2\r\nD: 3\r\n\r\n";

		CHECK(parse_n(three, strlen(three), 1, 0, MAX_HEAD, 0, 3) == H1_OK && msg.nhdrs == 3);
		CHECK(parse_n(four, strlen(four), 1, 0, MAX_HEAD, 0, 3) == H1_ERROR && err.status == 400);
		CHECK_STR(err.reason, "too many header fields");
		CHECK(err.offset == strlen(three) - 2);
		CHECK(parse_n(four, strlen(four), 1, 0, MAX_HEAD, 0, 4) == H1_OK && msg.nhdrs == 4);
		CHECK(parse_n(r4, strlen(r4), 0, HTTP_METH_GET, MAX_HEAD, 0, 3) == H1_ERROR &&
		      err.status == 502);
		CHECK(parse_n(three, strlen(three), 1, 0, MAX_HEAD, 0, 0) == H1_ERROR && err.status == 400);
		CHECK(parse_n("GET / HTTP/1.0\r\n\r\n", 18, 1, 0, MAX_HEAD, 0, 0) == H1_OK);
	}
	{
		/* HTTP_MAX_HDRS_DEFAULT fields */
		char big[8192];
		size_t off = (size_t)sprintf(big, "GET / HTTP/1.1\r\nHost: a\r\n");
		int i;

		for (i = 1; i < 128; i++)
			off += (size_t)sprintf(big + off, "X-%d: %d\r\n", i, i);
		off += (size_t)sprintf(big + off, "\r\n");
		CHECK(parse_n(big, off, 1, 0, MAX_HEAD, 0, 128) == H1_OK && msg.nhdrs == 128);
		CHECK(hdr_is(127, "X-127", "127"));
		CHECK(parse_n(big, off, 1, 0, MAX_HEAD, 0, HTTP_MAX_HDRS_DEFAULT) == H1_ERROR);
	}
	/* NULL err is allowed */
	CHECK(h1_parse_head("GET", 3, 1, 0, MAX_HEAD, 0, &msg, NULL) == H1_INCOMPLETE);
	CHECK(h1_parse_head("GET\r", 4, 1, 0, MAX_HEAD, 0, &msg, NULL) == H1_ERROR);
	CHECK(h1_parse_head("", 0, 1, 0, MAX_HEAD, 0, &msg, NULL) == H1_INCOMPLETE);
	CHECK(h1_parse_head("", 0, 0, 0, MAX_HEAD, 0, &msg, NULL) == H1_INCOMPLETE);
}

/* ------------------------------------------------------------------------ */
/* Chunked bodies                                                            */
/* ------------------------------------------------------------------------ */

struct dec_out {
	enum h1_chunk_state st;
	const char *reason;
	size_t consumed;        /* total bytes consumed */
	char data[4096];
	size_t data_len;
	uint64_t body_len;
};

/* Decodes <s> fed in slices whose sizes come from <cuts> (cycled; 0 means
 * "all the rest"), each slice an exact heap copy, with H1C_O_STOP_AFTER_DATA
 * so every data span is collected; once the body ends or fails, nothing more
 * is fed. */
static void decode(const char *s, size_t n, const size_t *cuts, size_t ncuts,
                   struct dec_out *o)
{
	struct h1_chunk c;
	size_t pos = 0, k = 0;

	h1_chunk_init(&c);
	c.opts = H1C_O_STOP_AFTER_DATA;
	memset(o, 0, sizeof(*o));
	while (pos < n && c.st != H1C_DONE && c.st != H1C_ERROR) {
		size_t sl = cuts[k++ % ncuts], done = 0;
		char *slice;

		if (!sl || sl > n - pos)
			sl = n - pos;
		slice = malloc(sl);
		memcpy(slice, s + pos, sl);
		while (done < sl && c.st != H1C_DONE && c.st != H1C_ERROR) {
			size_t doff, dlen, used;

			used = h1_chunk_feed(&c, slice + done, sl - done, &doff, &dlen);
			if (dlen && o->data_len + dlen <= sizeof(o->data)) {
				memcpy(o->data + o->data_len, slice + done + doff, dlen);
				o->data_len += dlen;
			}
			done += used;
			if (!used)
				break;
		}
		free(slice);
		pos += done;
		if (done < sl)
			break;
	}
	o->st = c.st;
	o->reason = c.reason;
	o->consumed = pos;
	o->body_len = c.body_len;
}

static int same_dec(const struct dec_out *a, const struct dec_out *b)
{
	return a->st == b->st && a->reason == b->reason && a->consumed == b->consumed &&
	       a->data_len == b->data_len && a->body_len == b->body_len &&
	       memcmp(a->data, b->data, a->data_len) == 0;
}

/* One-shot, every two-way split, byte by byte and a few uneven patterns all
 * give the same outcome, which is returned in <o>. */
static int decode_all_splits(const char *s, size_t n, struct dec_out *o)
{
	static const size_t all[] = { 0 }, one[] = { 1 }, odd[] = { 2, 1, 3, 7 };
	struct dec_out alt;
	size_t k;
	int ok = 1;

	decode(s, n, all, 1, o);
	decode(s, n, one, 1, &alt);
	ok &= same_dec(o, &alt);
	decode(s, n, odd, 4, &alt);
	ok &= same_dec(o, &alt);
	for (k = 1; k < n; k++) {
		size_t cuts[2] = { k, 0 };

		decode(s, n, cuts, 2, &alt);
		if (!same_dec(o, &alt)) {
			fprintf(stderr, "  split at %zu differs: st %d/%d consumed %zu/%zu\n", k,
			        o->st, alt.st, o->consumed, alt.consumed);
			ok = 0;
		}
	}
	return ok;
}

static int chunked_ok(const char *s, const char *data, size_t consumed)
{
	struct dec_out o;

	if (!decode_all_splits(s, strlen(s), &o))
		return 0;
	if (o.st != H1C_DONE || o.consumed != consumed || o.data_len != strlen(data) ||
	    o.body_len != o.data_len || memcmp(o.data, data, o.data_len) != 0) {
		fprintf(stderr, "  \"%s\": st %d (%s) consumed %zu data \"%.*s\"\n", s, o.st,
		        o.reason ? o.reason : "", o.consumed, (int)o.data_len, o.data);
		return 0;
	}
	return 1;
}

/* The body fails at byte <at> with <reason> however it is split. */
static int chunked_bad(const char *s, size_t n, size_t at, const char *reason)
{
	struct dec_out o;

	if (!decode_all_splits(s, n, &o))
		return 0;
	if (o.st != H1C_ERROR || o.consumed != at || !o.reason || strcmp(o.reason, reason) != 0) {
		fprintf(stderr, "  \"%s\": st %d consumed %zu reason %s\n", s, o.st, o.consumed,
		        o.reason ? o.reason : "(none)");
		return 0;
	}
	return 1;
}

#define CHUNKED_BAD(s, at, reason) chunked_bad((s), sizeof(s) - 1, (at), (reason))

static void test_chunked(void)
{
	struct h1_chunk c;
	size_t off, len, n;
	const char *w = "4\r\nWiki\r\n5;name=val\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n"
	                "0\r\nExpires: Wed, 21 Oct 2015 07:28:00 GMT\r\nX:\r\n\r\n";

	CHECK(chunked_ok("5\r\nhello\r\n0\r\n\r\n", "hello", 15));
	CHECK(chunked_ok("0\r\n\r\n", "", 5));
	CHECK(chunked_ok("0\r\n\r\nGET / HTTP/1.1\r\n", "", 5));
	CHECK(chunked_ok(w, "Wikipedia in\r\n\r\nchunks.", strlen(w)));
	CHECK(chunked_ok("1;a=\"b;c\\\"d\\\\\" ; e ;f = g\r\nX\r\n0;last\r\n\r\n", "X", 40));
	CHECK(chunked_ok("A\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n", "0123456789abcdefghij", 35));
	CHECK(chunked_ok("0005\r\nhello\r\n000\r\n\r\n", "hello", 20));
	CHECK(chunked_ok("3\r\n\r\n\r\r\n0\r\n\r\n", "\r\n\r", 13));
	CHECK(chunked_ok("1;x=\"\xc3\xa9\"\r\n\xff\r\n0\r\nT: caf\xc3\xa9\t\r\n\r\n", "\xff", 29));

	/* one call without STOP_AFTER_DATA: all consumed, first span reported */
	h1_chunk_init(&c);
	n = h1_chunk_feed(&c, w, strlen(w), &off, &len);
	CHECK(n == strlen(w) && c.st == H1C_DONE);
	CHECK(off == 3 && len == 4);
	CHECK(c.body_len == 23);
	CHECK(h1_chunk_feed(&c, "0\r\n", 3, &off, &len) == 0 && c.st == H1C_DONE && len == 0);
	/* with it: stops after the first span */
	h1_chunk_init(&c);
	c.opts = H1C_O_STOP_AFTER_DATA;
	CHECK(h1_chunk_feed(&c, w, strlen(w), &off, &len) == 7 && off == 3 && len == 4);
	CHECK(c.st == H1C_DATA_CR);
	CHECK(h1_chunk_feed(&c, w + 7, strlen(w) - 7, &off, &len) == 26 - 7 && len == 5);
	/* large sizes do not overflow */
	h1_chunk_init(&c);
	CHECK(h1_chunk_feed(&c, "FFFFFFFFFFFFFFF\r\nab", 19, &off, &len) == 19);
	CHECK(c.st == H1C_DATA && c.remaining == 0xFFFFFFFFFFFFFFFULL - 2 && len == 2);
	CHECK(h1_chunk_feed(&c, NULL, 0, NULL, NULL) == 0 && c.st == H1C_DATA);

	CHECK(CHUNKED_BAD("G\r\n", 0, "invalid chunk size"));
	CHECK(CHUNKED_BAD("\r\n", 0, "invalid chunk size"));
	CHECK(CHUNKED_BAD(";a\r\n", 0, "invalid chunk size"));
	CHECK(CHUNKED_BAD("-5\r\n", 0, "invalid chunk size"));
	CHECK(CHUNKED_BAD("+5\r\n", 0, "invalid chunk size"));
	CHECK(CHUNKED_BAD(" 5\r\n", 0, "invalid chunk size"));
	CHECK(CHUNKED_BAD("0x5\r\n", 1, "invalid chunk size line"));
	CHECK(CHUNKED_BAD("5 \r\nhello\r\n", 2, "invalid chunk size line"));
	CHECK(CHUNKED_BAD("5\t\r\nhello\r\n", 2, "invalid chunk size line"));
	CHECK(CHUNKED_BAD("5\nhello\r\n", 1, "invalid chunk size line"));
	CHECK(CHUNKED_BAD("5\rhello\r\n", 2, "bare CR in chunk size line"));
	CHECK(CHUNKED_BAD("0000000000000001\r\nx\r\n", 15, "chunk size too large"));
	CHECK(CHUNKED_BAD("10000000000000000\r\n", 15, "chunk size too large"));
	CHECK(CHUNKED_BAD("5\r\nhelloX\r\n", 8, "missing CRLF after chunk data"));
	CHECK(CHUNKED_BAD("5\r\nhello\n0\r\n\r\n", 8, "missing CRLF after chunk data"));
	CHECK(CHUNKED_BAD("5\r\nhello\rX", 9, "missing CRLF after chunk data"));
	CHECK(CHUNKED_BAD("5\r\nhello world\r\n", 8, "missing CRLF after chunk data"));
	/* extensions */
	CHECK(CHUNKED_BAD("5;\r\n", 2, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;a=\r\n", 4, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;a \r\n", 4, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;a=b \r\n", 6, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;a=\"x\r\n", 6, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;a=\"x\"y\r\n", 7, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;a\nhello\r\n", 3, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;a=b\nhello\r\n", 5, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;a\0\r\n", 3, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;@\r\n", 2, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;a=\"\\\r\n", 6, "invalid chunk extension"));
	CHECK(CHUNKED_BAD("5;a\rb", 4, "bare CR in chunk size line"));
	/* trailers */
	CHECK(CHUNKED_BAD("0\r\nX : y\r\n\r\n", 4, "whitespace before colon in trailer"));
	CHECK(CHUNKED_BAD("0\r\n X: y\r\n\r\n", 3, "obsolete line folding in trailer"));
	CHECK(CHUNKED_BAD("0\r\nX: y\r\n z\r\n\r\n", 9, "obsolete line folding in trailer"));
	CHECK(CHUNKED_BAD("0\r\nX: a\0b\r\n\r\n", 7, "invalid trailer field value"));
	CHECK(CHUNKED_BAD("0\r\nX: a\x01\r\n\r\n", 7, "invalid trailer field value"));
	CHECK(CHUNKED_BAD("0\r\nX: a\nY: b\r\n\r\n", 7, "invalid trailer field value"));
	CHECK(CHUNKED_BAD("0\r\nX: a\rY: b\r\n\r\n", 8, "bare CR in trailer"));
	CHECK(CHUNKED_BAD("0\r\nX\r\n\r\n", 4, "invalid trailer field name"));
	CHECK(CHUNKED_BAD("0\r\n: y\r\n\r\n", 3, "invalid trailer field name"));
	CHECK(CHUNKED_BAD("0\r\n\n", 3, "invalid trailer field name"));
	CHECK(CHUNKED_BAD("0\r\n\rX", 4, "bare CR in trailer"));
	{
		/* bounded extensions and trailers */
		static char big[H1_CHUNK_TRAILERS_MAX + 64];
		struct dec_out o;
		static const size_t all[] = { 0 }, one[] = { 1 };
		size_t i, m;

		m = (size_t)sprintf(big, "1;a=");
		for (i = 0; i < H1_CHUNK_EXT_MAX; i++)
			big[m++] = 'x';
		decode(big, m, all, 1, &o);
		CHECK(o.st == H1C_ERROR && o.consumed == 2 + H1_CHUNK_EXT_MAX);
		CHECK_STR(o.reason, "chunk extensions too long");
		decode(big, m, one, 1, &o);
		CHECK(o.st == H1C_ERROR && o.consumed == 2 + H1_CHUNK_EXT_MAX);
		/* exactly the bound passes */
		m = (size_t)sprintf(big, "1;a=");
		for (i = 3; i < H1_CHUNK_EXT_MAX; i++)
			big[m++] = 'x';
		m += (size_t)sprintf(big + m, "\r\nZ\r\n0\r\n\r\n");
		decode(big, m, all, 1, &o);
		CHECK(o.st == H1C_DONE && o.consumed == m && o.data_len == 1 && o.data[0] == 'Z');

		/* "X: " + k bytes + CRLF CRLF is exactly the bound */
		m = (size_t)sprintf(big, "0\r\nX: ");
		for (i = 0; i < H1_CHUNK_TRAILERS_MAX - 7; i++)
			big[m++] = 'y';
		m += (size_t)sprintf(big + m, "\r\n\r\n");
		decode(big, m, all, 1, &o);
		CHECK(o.st == H1C_DONE && o.consumed == m);
		m = (size_t)sprintf(big, "0\r\nX: ");
		for (i = 0; i < H1_CHUNK_TRAILERS_MAX - 6; i++)
			big[m++] = 'y';
		m += (size_t)sprintf(big + m, "\r\n\r\n");
		decode(big, m, all, 1, &o);
		CHECK(o.st == H1C_ERROR && o.consumed == 3 + H1_CHUNK_TRAILERS_MAX);
		CHECK_STR(o.reason, "trailer section too long");
	}
	/* errors are final */
	h1_chunk_init(&c);
	CHECK(h1_chunk_feed(&c, "Z", 1, NULL, NULL) == 0 && c.st == H1C_ERROR);
	CHECK(h1_chunk_feed(&c, "0\r\n\r\n", 5, NULL, NULL) == 0 && c.st == H1C_ERROR);
}

int main(void)
{
	test_helpers();
	test_requests();
	test_request_flags();
	test_content_length();
	test_smuggling();
	test_request_line_errors();
	test_field_errors();
	test_value_scan();
	test_responses();
	test_bounds();
	test_chunked();
	free(cur);
	return t_done("test_h1");
}
