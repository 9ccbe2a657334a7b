/* Error replies: every built-in page parses back as a valid response with
 * the right status, length and fields; errorfile validation (each problem
 * with its message, what HAProxy accepts too), canonical storage, loading
 * from files, errorloc redirects, http-error bodies and formats, and the
 * per-proxy tables: inheritance, directive order, imports of named sets,
 * lookups backend -> frontend -> built-in. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sluice/http/errors.h>
#include <sluice/http/h1.h>
#include <sluice/http/msgedit.h>
#include "t.h"

#define BUFSIZE 16384

static char err[512];
static char dir[] = "/tmp/sluice-test-errors-XXXXXX";
static char path[256];

static struct ist I(const char *s)
{
	return (struct ist){ s, strlen(s) };
}

static const char *write_file(const char *name, const char *data, size_t len)
{
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		return NULL;
	fwrite(data, 1, len, f);
	fclose(f);
	return path;
}

static const char *write_str(const char *name, const char *data)
{
	return write_file(name, data, strlen(data));
}

/* Parses a stored reply as a client would and checks its framing. */
static int reply_is_valid(const struct http_reply *r, int status)
{
	struct http_hdr hdrs[32];
	struct http_msg m = { .hdrs = hdrs, .maxhdrs = 32 };
	struct h1_error perr;

	if (h1_parse_head(r->raw, r->raw_len, 0, HTTP_METH_GET, r->raw_len + 1, 0, &m,
	                  &perr) != H1_OK) {
		fprintf(stderr, "  reply does not parse: %s\n", perr.reason);
		return 0;
	}
	if (m.status != status || r->status != status || m.head_len != r->head_len)
		return 0;
	if (!(m.flags & HTTP_F_HAS_CL) || m.content_length != r->raw_len - m.head_len) {
		fprintf(stderr, "  Content-Length does not match the body\n");
		return 0;
	}
	return r->msg.nhdrs == m.nhdrs && r->msg.status == status;
}

static const char *field(const struct http_reply *r, const char *name)
{
	static char v[256];
	struct ist val;

	if (!http_hdr_occ(&r->msg, I(name), -1, 0, &val))
		return "(none)";
	snprintf(v, sizeof(v), "%.*s", (int)val.len, val.ptr);
	return v;
}

static void test_builtin(void)
{
	int i;

	for (i = 0; i < HTTP_ERR_NCODES; i++) {
		int st = http_err_codes[i];
		const struct http_reply *r = http_reply_builtin(st);
		char h1[64];

		CHECK(r != NULL);
		if (!r)
			continue;
		CHECK(reply_is_valid(r, st));
		CHECK(r->flags & HTTP_REPLY_F_BUILTIN);
		CHECK_STR(field(r, "content-type"), "text/html");
		CHECK_STR(field(r, "cache-control"), "no-cache");
		/* the request stream cannot go on after these two */
		CHECK_STR(field(r, "connection"), (st == 400 || st == 408) ? "close" : "(none)");
		CHECK(!!(r->flags & HTTP_REPLY_F_CLOSE) == (st == 400 || st == 408));
		snprintf(h1, sizeof(h1), "<h1>%d ", st);
		CHECK(memmem(r->raw + r->head_len, r->raw_len - r->head_len, h1, strlen(h1)) != NULL);
		CHECK(memcmp(r->raw, "HTTP/1.1 ", 9) == 0);
		CHECK(http_reply_builtin(st) == r);
	}
	CHECK(http_reply_builtin(418) == NULL);
	CHECK(http_reply_builtin(0) == NULL);
	CHECK(http_err_slot(503) == HTTP_ERR_NCODES - 2);
	CHECK(http_err_slot(302) == -1);
	{
		char out[2048];
		const struct http_reply *r = http_reply_builtin(503);

		CHECK(http_reply_render(r, NULL, out, sizeof(out)) == (ssize_t)r->raw_len);
		CHECK(memcmp(out, r->raw, r->raw_len) == 0);
		CHECK(http_reply_render(r, NULL, out, r->raw_len - 1) == -1);
	}
}

/* http_reply_parse() must refuse <data> with a message holding <want>. */
static int refused(const char *data, size_t len, const char *want)
{
	struct http_reply *r;

	err[0] = 0;
	r = http_reply_parse(data, len, "f.http", BUFSIZE, err, sizeof(err));
	if (r) {
		http_reply_release(r);
		fprintf(stderr, "  accepted: \"%.*s\"\n", (int)len, data);
		return 0;
	}
	if (!strstr(err, want) || !strstr(err, "'f.http'")) {
		fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", err, want);
		return 0;
	}
	return 1;
}

#define REFUSED(lit, want) refused((lit), sizeof(lit) - 1, (want))

static struct http_reply *accepted(const char *data, size_t len)
{
	struct http_reply *r = http_reply_parse(data, len, "f.http", BUFSIZE, err, sizeof(err));

	if (!r)
		fprintf(stderr, "  refused: %s\n", err);
	return r;
}

#define ACCEPTED(lit) accepted((lit), sizeof(lit) - 1)

static int raw_is(const struct http_reply *r, const char *want)
{
	if (r && r->raw_len == strlen(want) && memcmp(r->raw, want, r->raw_len) == 0)
		return 1;
	if (r)
		fprintf(stderr, "  stored \"%.*s\"\n", (int)r->raw_len, r->raw);
	return 0;
}

static void test_errorfile_checks(void)
{
	struct http_reply *r;
	char *big;

	CHECK(REFUSED("garbage\r\n\r\n", "not an HTTP response"));
	CHECK(REFUSED("GET / HTTP/1.1\r\nHost: a\r\n\r\n", "not an HTTP response"));
	CHECK(REFUSED("HTTP/1.1 503 X\r\nContent-Length: 2\r\n", "incomplete HTTP response"));
	CHECK(REFUSED("HTTP/1.1 503 X", "incomplete"));
	CHECK(REFUSED("HTTP/1.1 503 X\r\nContent-Length: 10\r\n\r\nabc",
	              "the body is 3 bytes but Content-Length announces 10"));
	CHECK(REFUSED("HTTP/1.1 503 X\r\nContent-Length: 2\r\n\r\nabc",
	              "the body is 3 bytes but Content-Length announces 2"));
	CHECK(REFUSED("HTTP/1.1 100 Continue\r\n\r\n", "100 is an interim status"));
	CHECK(REFUSED("HTTP/1.1 101 Switching\r\n\r\n", "interim"));
	CHECK(REFUSED("HTTP/1.1 503 X\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	              "Transfer-Encoding is not supported"));
	CHECK(REFUSED("HTTP/1.1 503 X\r\nTransfer-Encoding: gzip\r\n\r\nabc", "Transfer-Encoding"));
	CHECK(REFUSED("HTTP/1.1 503 X\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\na",
	              "conflicting Content-Length"));
	CHECK(REFUSED("HTTP/1.1 503 X\r\nX: a\r\n b\r\n\r\n", "obsolete line folding"));
	CHECK(REFUSED("HTTP/2.0 503 X\r\n\r\n", "invalid HTTP response at byte"));
	CHECK(REFUSED("HTTP/1.1 204 No Content\r\n\r\nbody", "a 204 response has no body"));
	CHECK(REFUSED("HTTP/1.1 503 X\r\nBad Name: 1\r\n\r\n", "whitespace before colon"));

	big = malloc(BUFSIZE + 100);
	memset(big, 'a', BUFSIZE + 100);
	memcpy(big, "HTTP/1.1 200 OK\r\n\r\n", 19);
	CHECK(refused(big, BUFSIZE + 1, "more than tune.bufsize (16384)"));
	/* the Connection: close a close-delimited body needs counts too */
	r = accepted(big, BUFSIZE - 19);
	CHECK(r && r->raw_len == BUFSIZE);
	http_reply_release(r);
	CHECK(refused(big, BUFSIZE - 18, "once its head is written"));
	free(big);

	/* the added Connection: close must not push the head past the field
	 * limit its readers apply */
	{
		char many[4096];
		size_t n = 0;
		int i;

		n += (size_t)sprintf(many, "HTTP/1.1 503 X\r\n");
		for (i = 0; i < HTTP_MAX_HDRS_DEFAULT - 1; i++)
			n += (size_t)sprintf(many + n, "X-%d: y\r\n", i);
		n += (size_t)sprintf(many + n, "\r\nbody");
		CHECK(refused(many, n, "too many header fields once Connection: close is added"));
		n = (size_t)sprintf(many + n - 6, "Content-Length: 4\r\n\r\nbody") + n - 6;
		CHECK(refused(many, n, "too many header fields"));
		/* a Connection: close among them is moved, not added */
		n = (size_t)sprintf(many, "HTTP/1.1 503 X\r\nConnection: close\r\n");
		for (i = 1; i < HTTP_MAX_HDRS_DEFAULT - 1; i++)
			n += (size_t)sprintf(many + n, "X-%d: y\r\n", i);
		n += (size_t)sprintf(many + n, "\r\nbody");
		r = accepted(many, n);
		CHECK(r && r->msg.nhdrs == HTTP_MAX_HDRS_DEFAULT - 1 && (r->flags & HTTP_REPLY_F_CLOSE));
		CHECK(r && http_hdr_find(&r->msg, I("connection"), 0) == r->msg.nhdrs - 1);
		http_reply_release(r);
	}

	/* what HAProxy accepts too */
	r = ACCEPTED("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");   /* another code */
	CHECK(r && r->status == 200 && r->flags == 0);
	CHECK(r && r->raw_len == 41 && memcmp(r->raw + r->head_len, "abc", 3) == 0);
	http_reply_release(r);
	r = ACCEPTED("");                                                  /* /dev/null */
	CHECK(r && r->flags == HTTP_REPLY_F_EMPTY);
	{
		char out[16];

		CHECK(r && http_reply_render(r, NULL, out, 0) == 0);
	}
	http_reply_release(r);
	r = ACCEPTED("HTTP/1.1 304 Not Modified\r\n\r\n");
	CHECK(r && r->status == 304 && !(r->flags & HTTP_REPLY_F_CLOSE));
	http_reply_release(r);

	/* the body ends with the connection: say so */
	r = ACCEPTED("HTTP/1.1 503 X\r\nConnection: keep-alive\r\n\r\nbody without cl");
	CHECK(r && (r->flags & HTTP_REPLY_F_CLOSE));
	CHECK(raw_is(r, "HTTP/1.1 503 X\r\nConnection: close\r\n\r\nbody without cl"));
	http_reply_release(r);

	/* bare LF line ends and merged lengths come out canonical */
	r = ACCEPTED("HTTP/1.0 503 Busy\nContent-Length: 2\ncontent-length: 2, 2\nX:  y \n\nok");
	CHECK(raw_is(r, "HTTP/1.0 503 Busy\r\nContent-Length: 2\r\nX: y\r\n\r\nok"));
	CHECK(r && (r->flags & HTTP_REPLY_F_CLOSE));   /* 1.0 without keep-alive */
	CHECK(r && r->msg.nhdrs == 2);
	http_reply_release(r);
	r = ACCEPTED("HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
	CHECK(r && (r->flags & HTTP_REPLY_F_CLOSE));
	http_reply_release(r);
}

static void test_errorfile_files(void)
{
	struct http_reply *r;
	const char *p;

	snprintf(path, sizeof(path), "%s/missing.http", dir);
	r = http_reply_load_file(path, BUFSIZE, err, sizeof(err));
	CHECK(!r && strstr(err, "missing.http': cannot open: No such file or directory"));
	r = http_reply_load_file(dir, BUFSIZE, err, sizeof(err));
	CHECK(!r && strstr(err, "cannot read"));
	r = http_reply_load_file("/dev/null", BUFSIZE, err, sizeof(err));
	CHECK(r && (r->flags & HTTP_REPLY_F_EMPTY));
	http_reply_release(r);

	p = write_str("ok.http", "HTTP/1.1 503 Sorry\r\nContent-Length: 5\r\n\r\nlater");
	r = http_reply_load_file(p, BUFSIZE, err, sizeof(err));
	CHECK(r && reply_is_valid(r, 503));
	http_reply_release(r);
	p = write_str("short.http", "HTTP/1.1 503 Sorry\r\nContent-Length: 9\r\n\r\nlater");
	r = http_reply_load_file(p, BUFSIZE, err, sizeof(err));
	CHECK(!r && strstr(err, "short.http': the body is 5 bytes but Content-Length announces 9"));
	{
		char *big = calloc(1, 70000);

		p = write_file("big.http", big, 70000);
		free(big);
		r = http_reply_load_file(p, BUFSIZE, err, sizeof(err));
		CHECK(!r && strstr(err, "big.http': larger than tune.bufsize (16384 bytes)"));
	}
}

static void test_redirect(void)
{
	struct http_reply *r;

	r = http_reply_redirect(302, "http://example.com/err?x=1", BUFSIZE, err, sizeof(err));
	CHECK(r && reply_is_valid(r, 302));
	CHECK(r && r->raw_len == r->head_len);
	CHECK_STR(r ? field(r, "location") : "", "http://example.com/err?x=1");
	CHECK_STR(r ? field(r, "cache-control") : "", "no-cache");
	CHECK(r && memcmp(r->raw, "HTTP/1.1 302 Found\r\n", 20) == 0);
	http_reply_release(r);
	r = http_reply_redirect(303, "/e404", BUFSIZE, err, sizeof(err));
	CHECK(r && reply_is_valid(r, 303) && memcmp(r->raw, "HTTP/1.1 303 See Other\r\n", 24) == 0);
	http_reply_release(r);
	CHECK(!http_reply_redirect(301, "/x", BUFSIZE, err, sizeof(err)));
	CHECK(!http_reply_redirect(302, "", BUFSIZE, err, sizeof(err)) && strstr(err, "missing URL"));
	CHECK(!http_reply_redirect(302, "/x\r\nSet-Cookie: a=b", BUFSIZE, err, sizeof(err)) &&
	      strstr(err, "control character"));
	CHECK(!http_reply_redirect(302, "/x", 20, err, sizeof(err)) && strstr(err, "tune.bufsize"));
}

static void test_build(void)
{
	struct http_hdr extra[2] = { { I("X-Why"), I("maintenance") }, { I("Retry-After"), I("30") } };
	struct http_hdr bad_name[1] = { { I("X Y"), I("1") } };
	struct http_hdr bad_value[1] = { { I("X"), I("1\r\nEvil: 1") } };
	struct http_reply *r;
	const char *p;

	r = http_reply_build(429, "text/plain", "slow down", 9, extra, 2, BUFSIZE, err, sizeof(err));
	CHECK(r && reply_is_valid(r, 429));
	CHECK_STR(r ? field(r, "content-type") : "", "text/plain");
	CHECK_STR(r ? field(r, "retry-after") : "", "30");
	CHECK(r && memcmp(r->raw + r->head_len, "slow down", 9) == 0);
	CHECK(r && memcmp(r->raw, "HTTP/1.1 429 Too Many Requests\r\n", 32) == 0);
	http_reply_release(r);

	/* no payload: no content-type needed, and none written */
	r = http_reply_build(403, "text/plain", "", 0, NULL, 0, BUFSIZE, err, sizeof(err));
	CHECK(r && reply_is_valid(r, 403));
	CHECK_STR(r ? field(r, "content-type") : "", "(none)");
	http_reply_release(r);

	CHECK(!http_reply_build(503, NULL, "x", 1, NULL, 0, BUFSIZE, err, sizeof(err)) &&
	      strstr(err, "content-type is required"));
	CHECK(!http_reply_build(503, "text/html\r\nX: 1", "x", 1, NULL, 0, BUFSIZE, err,
	                        sizeof(err)) && strstr(err, "control character in content-type"));
	CHECK(!http_reply_build(503, "t/p", "x", 1, bad_name, 1, BUFSIZE, err, sizeof(err)) &&
	      strstr(err, "invalid field name"));
	CHECK(!http_reply_build(503, "t/p", "x", 1, bad_value, 1, BUFSIZE, err, sizeof(err)) &&
	      strstr(err, "control character in the value of 'X'"));
	CHECK(!http_reply_build(99, "t/p", "x", 1, NULL, 0, BUFSIZE, err, sizeof(err)) &&
	      strstr(err, "out of range"));
	CHECK(!http_reply_build(503, "t/p", "x", 1, NULL, 0, 40, err, sizeof(err)) &&
	      strstr(err, "tune.bufsize"));

	p = write_file("body.txt", "from a file\n", 12);
	r = http_reply_build_file(503, "text/plain", p, NULL, 0, BUFSIZE, err, sizeof(err));
	CHECK(r && reply_is_valid(r, 503) && memcmp(r->raw + r->head_len, "from a file\n", 12) == 0);
	http_reply_release(r);
	p = write_file("empty.txt", "", 0);
	r = http_reply_build_file(503, NULL, p, NULL, 0, BUFSIZE, err, sizeof(err));
	CHECK(r && reply_is_valid(r, 503));
	http_reply_release(r);
	snprintf(path, sizeof(path), "%s/nope.txt", dir);
	CHECK(!http_reply_build_file(503, "t/p", path, NULL, 0, BUFSIZE, err, sizeof(err)) &&
	      strstr(err, "nope.txt': cannot open"));
}

/* A stand-in for the log-format layer: the "format" is a string where '$'
 * stands for the context string. */
static ssize_t fake_fmt(const void *fmt, void *ctx, char *out, size_t room)
{
	const char *f = fmt, *c = ctx ? ctx : "";
	size_t n = 0;

	for (; *f; f++) {
		const char *s = *f == '$' ? c : f;
		size_t l = *f == '$' ? strlen(c) : 1;

		if (n + l > room)
			return -1;
		memcpy(out + n, s, l);
		n += l;
	}
	return (ssize_t)n;
}

static void test_dynamic(void)
{
	struct http_reply_dyn_hdr dyn[2] = { { I("X-Id"), "id-$" }, { I("X-Evil"), " $ " } };
	struct http_hdr fixed[1] = { { I("Cache-Control"), I("no-store") } };
	struct http_hdr hdrs[16];
	struct http_msg m = { .hdrs = hdrs, .maxhdrs = 16 };
	struct h1_error perr;
	struct http_reply *r;
	char out[512];
	ssize_t n;

	r = http_reply_build_dynamic(503, "text/plain", fake_fmt, "busy: $\n", dyn, 2, fixed, 1,
	                             err, sizeof(err));
	CHECK(r && (r->flags & HTTP_REPLY_F_DYNAMIC));
	n = r ? http_reply_render(r, "42\r\nSet-Cookie: x", out, sizeof(out)) : -1;
	CHECK(n > 0);
	CHECK(n > 0 && h1_parse_head(out, (size_t)n, 0, HTTP_METH_GET, (size_t)n + 1, 0, &m,
	                             &perr) == H1_OK);
	CHECK(m.status == 503 && m.nhdrs == 5);
	CHECK(m.content_length == (uint64_t)n - m.head_len);
	CHECK(memcmp(out + m.head_len, "busy: 42\r\nSet-Cookie: x\n", 24) == 0);
	CHECK(http_hdr_count(&m, I("set-cookie"), 0) == 0);
	{
		struct ist v;

		CHECK(http_hdr_occ(&m, I("x-id"), 1, 0, &v) && v.len == 5 &&
		      memcmp(v.ptr, "id-42", 5) == 0);
		CHECK(http_hdr_occ(&m, I("x-evil"), 1, 0, &v) && v.len == 2 &&
		      memcmp(v.ptr, "42", 2) == 0);
	}
	/* every room short of the full length fails */
	{
		ssize_t k, bad = 0;

		for (k = 0; k < n; k++)
			if (http_reply_render(r, "42\r\nSet-Cookie: x", out, (size_t)k) != -1)
				bad++;
		CHECK(bad == 0);
	}
	http_reply_release(r);

	r = http_reply_build_dynamic(200, NULL, fake_fmt, NULL, NULL, 0, NULL, 0, err, sizeof(err));
	CHECK(r != NULL);
	n = r ? http_reply_render(r, NULL, out, sizeof(out)) : -1;
	CHECK(n == 38 && memcmp(out, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 38) == 0);
	http_reply_release(r);
	CHECK(!http_reply_build_dynamic(200, NULL, fake_fmt, "$", NULL, 0, NULL, 0, err,
	                                sizeof(err)) && strstr(err, "content-type is required"));
	dyn[0].name = I("Bad Name");
	CHECK(!http_reply_build_dynamic(200, "t/p", fake_fmt, "$", dyn, 1, NULL, 0, err,
	                                sizeof(err)) && strstr(err, "invalid field name"));
	CHECK(!http_reply_build_dynamic(200, "t/p", NULL, "$", NULL, 0, NULL, 0, err, sizeof(err)));
}

static int warnings;
static char last_warning[256];

static void count_warning(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	warnings++;
	n = snprintf(last_warning, sizeof(last_warning), "%s:%d: ", file, line);
	va_start(ap, fmt);
	vsnprintf(last_warning + n, sizeof(last_warning) - (size_t)n, fmt, ap);
	va_end(ap);
}

static struct http_reply *text_reply(int status, const char *body)
{
	return http_reply_build(status, "text/plain", body, strlen(body), NULL, 0, BUFSIZE,
	                        err, sizeof(err));
}

static const char *body_of(const struct http_reply *r)
{
	static char b[64];

	if (!r)
		return "(null)";
	snprintf(b, sizeof(b), "%.*s", (int)(r->raw_len - r->head_len), r->raw + r->head_len);
	return b;
}

static void test_tables(void)
{
	struct http_errors defaults, fe, be, tmp;
	struct http_errors_sets sets = { NULL };
	struct http_errors_set *s1, *s2;
	struct http_reply *d403 = text_reply(403, "defaults 403");
	struct http_reply *f404 = text_reply(404, "fe 404");
	struct http_reply *f403 = text_reply(403, "fe 403 after import");
	struct http_reply *s404 = text_reply(404, "site1 404");
	struct http_reply *s503 = text_reply(503, "site1 503");
	struct http_reply *s403 = text_reply(403, "site1 403");
	struct http_reply *b503 = text_reply(503, "be 503");
	int codes[3] = { 404, 403, 503 };

	http_errors_init(&defaults);
	http_errors_init(&fe);
	http_errors_init(&be);

	CHECK(http_errors_set(&defaults, 403, d403, err, sizeof(err)) == 0);
	CHECK(http_errors_set(&defaults, 418, d403, err, sizeof(err)) == -1 &&
	      strstr(err, "status code '418' not handled"));
	CHECK(http_errors_import(&defaults, "site1", codes + 2, 1, "c.cfg", 3, err, sizeof(err)) == 0);

	/* frontend: inherits, then errorfile 404, errorfiles site1 404 403,
	 * errorfile 403 (wins over the import), errorfiles site2 */
	CHECK(http_errors_copy(&fe, &defaults, err, sizeof(err)) == 0);
	CHECK(http_errors_set(&fe, 404, f404, err, sizeof(err)) == 0);
	CHECK(http_errors_import(&fe, "site1", codes, 2, "c.cfg", 10, err, sizeof(err)) == 0);
	CHECK(http_errors_set(&fe, 403, f403, err, sizeof(err)) == 0);
	CHECK(http_errors_import(&fe, "site1", codes, 0, "c.cfg", 12, err, sizeof(err)) == 0);
	CHECK(http_errors_import(&fe, "site1", (int[]){ 418 }, 1, "c.cfg", 13, err,
	                         sizeof(err)) == -1 && strstr(err, "'418' not handled"));
	CHECK(http_errors_import(&fe, "", NULL, 0, "c.cfg", 13, err, sizeof(err)) == -1);

	/* the sets come after the proxies in the file */
	s1 = http_errors_set_new(&sets, "site1", "c.cfg", 20, err, sizeof(err));
	CHECK(s1 != NULL);
	CHECK(!http_errors_set_new(&sets, "site1", "c.cfg", 30, err, sizeof(err)) &&
	      strstr(err, "'site1' already declared at c.cfg:20"));
	s2 = http_errors_set_new(&sets, "site2", "c.cfg", 31, err, sizeof(err));
	CHECK(s2 && http_errors_set_find(&sets, "site2") == s2 && !http_errors_set_find(&sets, "x"));
	CHECK(http_errors_set(&s1->errors, 404, s404, err, sizeof(err)) == 0);
	CHECK(http_errors_set(&s1->errors, 503, s503, err, sizeof(err)) == 0);

	warnings = 0;
	CHECK(http_errors_resolve(&fe, &sets, count_warning, err, sizeof(err)) == 0);
	CHECK(warnings == 1 && strstr(last_warning, "c.cfg:10: status '403' not declared in "
	                              "http-errors section 'site1'"));
	/* errorfile 404 came before the import: the import wins; errorfile
	 * 403 came after: it stays; the last import (all codes) brings 503 */
	CHECK_STR(body_of(fe.reply[http_err_slot(404)]), "site1 404");
	CHECK_STR(body_of(fe.reply[http_err_slot(403)]), "fe 403 after import");
	CHECK_STR(body_of(fe.reply[http_err_slot(503)]), "site1 503");
	CHECK(fe.imports == NULL);

	/* a backend that inherits, overrides 503 and resets 403 */
	CHECK(http_errors_copy(&be, &defaults, err, sizeof(err)) == 0);
	CHECK(http_errors_set(&be, 503, b503, err, sizeof(err)) == 0);
	CHECK(http_errors_reset(&be, 403, err, sizeof(err)) == 0);
	CHECK(http_errors_reset(&be, 302, err, sizeof(err)) == -1);
	CHECK(http_errors_resolve(&be, &sets, count_warning, err, sizeof(err)) == 0);
	/* the defaults' import of site1 503 was older than be's errorfile 503 */
	CHECK_STR(body_of(be.reply[http_err_slot(503)]), "be 503");

	CHECK_STR(body_of(http_errors_find(&be, &fe, 503)), "be 503");
	CHECK_STR(body_of(http_errors_find(&be, &fe, 403)), "fe 403 after import");
	CHECK_STR(body_of(http_errors_find(&be, &fe, 404)), "site1 404");
	CHECK(http_errors_find(&be, &fe, 502) == http_reply_builtin(502));
	CHECK(http_errors_find(NULL, NULL, 400) == http_reply_builtin(400));
	CHECK(http_errors_find(&be, &fe, 414) == NULL);
	CHECK_STR(body_of(http_errors_find(&defaults, NULL, 403)), "defaults 403");

	/* unknown set: an error naming the line */
	http_errors_init(&tmp);
	CHECK(http_errors_import(&tmp, "nosuch", NULL, 0, "c.cfg", 40, err, sizeof(err)) == 0);
	CHECK(http_errors_resolve(&tmp, &sets, NULL, err, sizeof(err)) == -1 &&
	      strstr(err, "unknown http-errors section 'nosuch' (at c.cfg:40)"));
	http_errors_deinit(&tmp);

	/* references: the tables hold them, the builders' are dropped here */
	CHECK(s404->refcnt == 3);   /* builder, set, fe */
	http_reply_release(d403);
	http_reply_release(f404);
	http_reply_release(f403);
	http_reply_release(s404);
	http_reply_release(s503);
	http_reply_release(s403);
	http_reply_release(b503);
	http_errors_deinit(&defaults);
	CHECK(http_errors_find(&be, NULL, 404) == http_reply_builtin(404));
	http_errors_sets_free(&sets);
	CHECK_STR(body_of(fe.reply[http_err_slot(404)]), "site1 404");   /* still held by fe */
	http_errors_deinit(&fe);
	http_errors_deinit(&be);
	CHECK(sets.head == NULL);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_builtin();
	test_errorfile_checks();
	test_errorfile_files();
	test_redirect();
	test_build();
	test_dynamic();
	test_tables();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return t_done("test_http_errors");
}
