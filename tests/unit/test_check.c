/* Health checks, the pure parts: the rise/fall health counter and the
 * status column it gives, the status table, `http-check expect` parsing,
 * the request an HTTP check sends, and the verdict on a reply, whole or
 * cut at every byte. The expected texts and verdicts are HAProxy 2.6's,
 * seen on its `show stat` and logs with the same replies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/proxy/check.h>
#include <sluice/proxy/check_http.h>
#include <sluice/proxy/server.h>
#include "t.h"

/* ---- health ---- */

/* <op_up>: 1 UP, 0 DOWN, 2 NOLB */
static const char *column(int admin, int checked, int op_up, const struct chk_health *h)
{
	static char buf[32];

	chk_status_column(buf, sizeof(buf), admin, checked,
	                  op_up == 2 ? SRV_OP_NOLB : op_up ? SRV_OP_UP : SRV_OP_DOWN, h);
	return buf;
}

static void test_health(void)
{
	struct chk_health h;

	/* rise 2 fall 3: starts UP, one failure from DOWN */
	chk_health_init(&h, 2, 3);
	CHECK(h.health == 2 && chk_health_up(&h) && !chk_health_full(&h));
	CHECK_STR(column(SRV_ADMIN_READY, 1, 1, &h), "UP 1/3");
	CHECK(chk_health_apply(&h, CHK_RES_FAILED) == 1);
	CHECK(h.health == 0 && !chk_health_up(&h));
	CHECK_STR(column(SRV_ADMIN_READY, 1, 0, &h), "DOWN");
	/* a failure while fully down changes nothing */
	CHECK(chk_health_apply(&h, CHK_RES_FAILED) == 0 && h.health == 0);
	/* rise successes in a row: DOWN 1/2, then full health at once */
	CHECK(chk_health_apply(&h, CHK_RES_PASSED) == 1 && h.health == 1);
	CHECK_STR(column(SRV_ADMIN_READY, 1, 0, &h), "DOWN 1/2");
	CHECK(chk_health_apply(&h, CHK_RES_PASSED) == 1 && h.health == 4);
	CHECK(chk_health_full(&h));
	CHECK_STR(column(SRV_ADMIN_READY, 1, 1, &h), "UP");
	CHECK(chk_health_apply(&h, CHK_RES_PASSED) == 0);
	/* fall failures in a row from full health: UP 2/3, UP 1/3, DOWN */
	CHECK(chk_health_apply(&h, CHK_RES_FAILED) == 1 && h.health == 3);
	CHECK_STR(column(SRV_ADMIN_READY, 1, 1, &h), "UP 2/3");
	CHECK_STR(column(SRV_ADMIN_DRAIN, 1, 1, &h), "DRAIN 2/3");
	CHECK(chk_health_apply(&h, CHK_RES_FAILED) == 1 && h.health == 2);
	CHECK_STR(column(SRV_ADMIN_READY, 1, 1, &h), "UP 1/3");
	CHECK(chk_health_apply(&h, CHK_RES_FAILED) == 1 && h.health == 0);
	/* a success in the middle of failures brings full health back */
	chk_health_init(&h, 2, 3);
	h.health = 3;
	CHECK(chk_health_apply(&h, CHK_RES_PASSED) == 1 && h.health == 4);
	/* neutral results do nothing; conditional passes count as passes */
	CHECK(chk_health_apply(&h, CHK_RES_NEUTRAL) == 0);
	chk_health_init(&h, 1, 1);
	CHECK(chk_health_full(&h));
	CHECK(chk_health_apply(&h, CHK_RES_CONDPASS) == 0);
	CHECK(chk_health_apply(&h, CHK_RES_FAILED) == 1 && h.health == 0);
	CHECK(chk_health_apply(&h, CHK_RES_CONDPASS) == 1 && h.health == 1);
	/* maintenance wins; no check, drain */
	CHECK_STR(column(SRV_ADMIN_MAINT, 1, 1, &h), "MAINT");
	CHECK_STR(column(SRV_ADMIN_READY, 0, 1, &h), "no check");
	CHECK_STR(column(SRV_ADMIN_DRAIN, 0, 1, &h), "DRAIN");
	CHECK_STR(column(SRV_ADMIN_DRAIN, 1, 1, &h), "DRAIN");
	/* soft-stopped (disable-on-404) */
	chk_health_init(&h, 2, 3);
	h.health = 4;
	CHECK_STR(column(SRV_ADMIN_READY, 1, 2, &h), "NOLB");
	h.health = 3;
	CHECK_STR(column(SRV_ADMIN_READY, 1, 2, &h), "NOLB 2/3");
	CHECK_STR(column(SRV_ADMIN_DRAIN, 1, 2, &h), "NOLB 2/3");
}

static void test_statuses(void)
{
	CHECK_STR(chk_status_info(CHK_ST_L4CON), "L4CON");
	CHECK_STR(chk_status_desc(CHK_ST_L4CON), "Layer4 connection problem");
	CHECK_STR(chk_status_info(CHK_ST_L7OK), "L7OK");
	CHECK_STR(chk_status_desc(CHK_ST_L7STS), "Layer7 wrong status");
	CHECK_STR(chk_status_desc(CHK_ST_INI), "Initializing");
	CHECK_STR(chk_status_info(CHK_ST_L57DATA), "UNK");
	CHECK_STR(chk_status_info(-1), "UNK");
	CHECK_STR(chk_status_info(CHK_ST_COUNT), "UNK");
	CHECK(chk_status_result(CHK_ST_L4OK) == CHK_RES_PASSED);
	CHECK(chk_status_result(CHK_ST_SOCKERR) == CHK_RES_FAILED);
	CHECK(chk_status_result(CHK_ST_INI) == CHK_RES_UNKNOWN);
	/* show servers state prints these numbers */
	CHECK(CHK_ST_L4OK == 6 && CHK_ST_L4CON == 8 && CHK_ST_L7OK == 15 && CHK_ST_L7STS == 17);
}

/* ---- expect rules ---- */

static int parse(const char *line, struct hchk_expect *e, char *err, size_t errlen)
{
	char buf[256], *args[8];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && n < 8; t = strtok(NULL, " "))
		args[n++] = t;
	return hchk_parse_expect(args, n, e, err, errlen);
}

static void test_expect_parse(void)
{
	struct hchk_expect e;
	char err[512];

	CHECK(parse("status 200,201,300-310", &e, err, sizeof(err)) == 0);
	CHECK(e.match == HCHK_M_STATUS && !e.negate && e.nranges == 3);
	CHECK(e.ranges[2].lo == 300 && e.ranges[2].hi == 310);
	hchk_expect_free(&e);
	CHECK(parse("! string SQL", &e, err, sizeof(err)) == 0);
	CHECK(e.match == HCHK_M_STRING && e.negate && e.len == 3);
	hchk_expect_free(&e);
	CHECK(parse("!rstatus ^5", &e, err, sizeof(err)) == 0);
	CHECK(e.match == HCHK_M_RSTATUS && e.negate && e.re);
	hchk_expect_free(&e);
	CHECK(parse("status abc", &e, err, sizeof(err)) < 0);
	CHECK_STR(err, "'http-check expect' : invalid character 'a' in the list of status codes.");
	hchk_expect_free(&e);
	CHECK(parse("status", &e, err, sizeof(err)) < 0);
	CHECK_STR(err, "'http-check expect' : 'status' expects a <pattern> as argument.");
	hchk_expect_free(&e);
	CHECK(parse("rstring (", &e, err, sizeof(err)) < 0);
	hchk_expect_free(&e);
	CHECK(parse("foo bar", &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, "but got 'foo' as argument") != NULL);
	hchk_expect_free(&e);
	CHECK(parse("hdr name x", &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, "not supported yet") != NULL);
	hchk_expect_free(&e);
	CHECK(parse("status 200 extra", &e, err, sizeof(err)) < 0);
	hchk_expect_free(&e);
}

/* ---- the request ---- */

static void test_request(void)
{
	struct hchk_rules r;
	char err[256];
	struct hchk_hdr h[2] = { { "Host", "www" }, { "Content-Length", "9" } };

	memset(&r, 0, sizeof(r));
	r.has_send = 1;
	CHECK(hchk_prepare(&r, 16384, err, sizeof(err)) == 0);
	CHECK_STR(r.req, "OPTIONS / HTTP/1.0\r\n\r\n");
	free(r.req);

	/* option httpchk GET /health HTTP/1.1: connection close added */
	memset(&r, 0, sizeof(r));
	r.has_send = 1;
	r.meth = "GET";
	r.uri = "/health";
	r.ver = "HTTP/1.1";
	CHECK(hchk_prepare(&r, 16384, err, sizeof(err)) == 0);
	CHECK_STR(r.req, "GET /health HTTP/1.1\r\nconnection: close\r\n\r\n");
	free(r.req);

	/* http-check send over it: its fields win, names in lower case, the
	 * body's length replaces a given one */
	memset(&r, 0, sizeof(r));
	r.has_send = r.has_send_rule = 1;
	r.meth = "GET";
	r.uri = "/i";
	r.s_meth = "POST";
	r.s_ver = "HTTP/1.1";
	r.s_body = "hello";
	r.hdrs = h;
	r.nhdrs = 2;
	CHECK(hchk_prepare(&r, 16384, err, sizeof(err)) == 0);
	CHECK_STR(r.req, "POST /i HTTP/1.1\r\nhost: www\r\ncontent-length: 5\r\n"
	          "connection: close\r\n\r\nhello");
	free(r.req);

	/* no send rule (only expect rules in the backend): nothing is sent */
	memset(&r, 0, sizeof(r));
	CHECK(hchk_prepare(&r, 16384, err, sizeof(err)) == 0 && !r.req);

	/* a request larger than a buffer is refused */
	memset(&r, 0, sizeof(r));
	r.has_send = 1;
	r.uri = "/a-rather-long-uri";
	CHECK(hchk_prepare(&r, 16, err, sizeof(err)) < 0);
}

/* ---- the reply ---- */

#define CAP 256

/* Feeds <reply> in pieces of <step> bytes (0: whole), <eof> after the last
 * one; returns the verdict's status (0: none) and fills <v>. */
static int feed(struct hchk_rules *r, const char *reply, size_t step, int eof,
                struct hchk_verdict *v)
{
	char buf[CAP];
	size_t len = 0, total = strlen(reply), off = 0;
	struct hchk_reply st;

	hchk_reply_init(&st);
	memset(v, 0, sizeof(*v));
	while (off < total) {
		size_t n = step && step < total - off ? step : total - off;

		if (len + n > CAP)
			n = CAP - len;
		memcpy(buf + len, reply + off, n);
		len += n;
		off += n;
		if (hchk_reply_eval(r, &st, buf, &len, CAP, eof && off == total, v))
			return v->status;
		if (len == CAP)
			break;
	}
	if (!total && hchk_reply_eval(r, &st, buf, &len, CAP, eof, v))
		return v->status;
	return 0;
}

/* The same verdict whatever the cuts. */
static int feed_all_cuts(struct hchk_rules *r, const char *reply, int eof,
                         struct hchk_verdict *v)
{
	struct hchk_verdict w;
	int st = feed(r, reply, 0, eof, v);

	for (size_t step = 1; step < strlen(reply); step++) {
		if (feed(r, reply, step, eof, &w) != st || w.code != v->code ||
		    strcmp(w.desc, v->desc) != 0) {
			fprintf(stderr, "cut every %zu bytes: %d %d '%s' against %d %d '%s'\n", step,
			        w.status, w.code, w.desc, st, v->code, v->desc);
			return -1;
		}
	}
	return st;
}

static void rules(struct hchk_rules *r, const char *expect)
{
	char err[256];

	memset(r, 0, sizeof(r[0]));
	r->has_send = 1;
	if (expect) {
		r->expects = calloc(1, sizeof(*r->expects));
		CHECK(parse(expect, &r->expects[0], err, sizeof(err)) == 0);
		r->nexpects = 1;
	}
	CHECK(hchk_prepare(r, 16384, err, sizeof(err)) == 0);
}

static void rules_free(struct hchk_rules *r)
{
	for (int i = 0; i < r->nexpects; i++)
		hchk_expect_free(&r->expects[i]);
	free(r->expects);
	free(r->req);
}

static void test_reply_default(void)
{
	struct hchk_rules r;
	struct hchk_verdict v;

	rules(&r, NULL);
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 1, &v) ==
	      CHK_ST_L7OK);
	CHECK(v.code == 200 && !v.desc[0]);
	/* 2xx and 3xx pass, decided by the head alone (no EOF needed) */
	CHECK(feed_all_cuts(&r, "HTTP/1.0 301 Moved\r\nLocation: /\r\n\r\n", 0, &v) == CHK_ST_L7OK);
	CHECK(v.code == 301);
	/* others fail with the reason phrase as info */
	CHECK(feed_all_cuts(&r, "HTTP/1.0 503 Busy\r\n\r\n", 0, &v) == CHK_ST_L7STS);
	CHECK(v.code == 503);
	CHECK_STR(v.desc, "Busy");
	CHECK(feed_all_cuts(&r, "HTTP/1.1 503\r\nContent-Length: 0\r\n\r\n", 0, &v) == CHK_ST_L7STS);
	CHECK_STR(v.desc, "");
	/* an interim response is the response, as in HAProxy 2.6 */
	CHECK(feed_all_cuts(&r, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", 0, &v) ==
	      CHK_ST_L7STS);
	CHECK(v.code == 100);
	/* bare LF, and a later version read as 1.1 */
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\nContent-Length: 0\n\n", 0, &v) == CHK_ST_L7OK);
	CHECK(feed_all_cuts(&r, "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", 0, &v) ==
	      CHK_ST_L7OK);
	/* not HTTP: at the end of the head, or at the server's close */
	CHECK(feed_all_cuts(&r, "hello there\r\n\r\n", 0, &v) == CHK_ST_L7RSP && !v.desc[0]);
	CHECK(feed_all_cuts(&r, "hello world", 1, &v) == CHK_ST_L7RSP);
	CHECK(feed_all_cuts(&r, "", 1, &v) == CHK_ST_L7RSP);
	/* an incomplete head waits; a head larger than the buffer fails */
	CHECK(feed(&r, "HTTP/1.1 200 OK\r\n", 0, 0, &v) == 0);
	{
		char big[CAP + 64];

		memset(big, 'a', sizeof(big) - 1);
		memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
		big[sizeof(big) - 1] = '\0';
		CHECK(feed(&r, big, 0, 0, &v) == CHK_ST_L7RSP);
	}
	rules_free(&r);
}

static void test_reply_status_rules(void)
{
	struct hchk_rules r;
	struct hchk_verdict v;

	rules(&r, "status 500");
	CHECK(feed_all_cuts(&r, "HTTP/1.0 500 Whatever\r\n\r\n", 0, &v) == CHK_ST_L7OK);
	CHECK(v.code == 500);
	CHECK(feed_all_cuts(&r, "HTTP/1.0 200 OK\r\n\r\n", 0, &v) == CHK_ST_L7STS);
	CHECK_STR(v.desc, "OK");
	rules_free(&r);
	rules(&r, "! status 500");
	CHECK(feed_all_cuts(&r, "HTTP/1.0 500 Whatever\r\n\r\n", 0, &v) == CHK_ST_L7STS);
	CHECK_STR(v.desc, "Whatever");
	/* any status but 500 passes, 404 included */
	CHECK(feed_all_cuts(&r, "HTTP/1.0 404 Nope\r\n\r\n", 0, &v) == CHK_ST_L7OK);
	rules_free(&r);
	rules(&r, "rstatus ^5");
	CHECK(feed_all_cuts(&r, "HTTP/1.0 503 X\r\n\r\n", 0, &v) == CHK_ST_L7OK);
	CHECK(feed_all_cuts(&r, "HTTP/1.0 200 OK\r\n\r\n", 0, &v) == CHK_ST_L7STS);
	rules_free(&r);
	/* a status rule does not wait for the body */
	rules(&r, "status 200");
	CHECK(feed(&r, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc", 0, 0, &v) ==
	      CHK_ST_L7OK);
	rules_free(&r);
}

static void test_reply_body_rules(void)
{
	struct hchk_rules r;
	struct hchk_verdict v;

	rules(&r, "string hello");
	/* found: decided at once, before the body ends */
	CHECK(feed(&r, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsay hello", 0, 0, &v) ==
	      CHK_ST_L7OK);
	CHECK(v.code == 200);
	/* not found yet: waits for the rest of the body */
	CHECK(feed(&r, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsay hell", 0, 0, &v) == 0);
	/* the whole body without it: fails */
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", 0, &v) ==
	      CHK_ST_L7RSP);
	CHECK_STR(v.desc, "HTTP content check did not match");
	/* the server closed in the middle of the body: decided on what came */
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc", 1, &v) ==
	      CHK_ST_L7RSP);
	/* a body delimited by the close */
	CHECK(feed_all_cuts(&r, "HTTP/1.0 200 OK\r\n\r\nsay hello!", 1, &v) == CHK_ST_L7OK);
	/* past the Content-Length does not count */
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabchello", 0, &v) ==
	      CHK_ST_L7RSP);
	/* chunked: the text may straddle chunks, the framing is gone */
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	                    "3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", 0, &v) == CHK_ST_L7OK);
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	                    "3\r\nhel\r\n2\r\nxo\r\n0\r\n\r\n", 0, &v) == CHK_ST_L7RSP);
	/* bad framing ends the body: judged on what came before it */
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	                    "zz\r\n", 0, &v) == CHK_ST_L7RSP);
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	                    "5\r\nhello\r\n2\r\nxyz\r\n", 0, &v) == CHK_ST_L7OK);
	/* no body for a 204 */
	CHECK(feed_all_cuts(&r, "HTTP/1.1 204 No Content\r\n\r\n", 0, &v) == CHK_ST_L7RSP);
	/* a body that fills the buffer is judged on what it holds */
	{
		char big[CAP * 2];
		int n = snprintf(big, sizeof(big), "HTTP/1.1 200 OK\r\n\r\n");

		memset(big + n, 'x', sizeof(big) - (size_t)n - 1);
		big[sizeof(big) - 1] = '\0';
		CHECK(feed(&r, big, 0, 0, &v) == CHK_ST_L7RSP);
		CHECK_STR(v.desc, "HTTP content check did not match");
	}
	rules_free(&r);

	rules(&r, "! string SQL");
	CHECK(feed(&r, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nSQL Error", 0, 0, &v) ==
	      CHK_ST_L7RSP);
	CHECK_STR(v.desc, "HTTP check matched unwanted content");
	CHECK(feed(&r, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfine", 0, 0, &v) == 0);
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfine", 0, &v) ==
	      CHK_ST_L7OK);
	rules_free(&r);

	rules(&r, "rstring hel+o-w");
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello-world", 0,
	                    &v) == CHK_ST_L7OK);
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello_world", 0,
	                    &v) == CHK_ST_L7RSP);
	rules_free(&r);
}

/* Several rules: all must pass, in order; the first failure decides. */
static void test_reply_sequence(void)
{
	struct hchk_rules r;
	struct hchk_verdict v;
	char err[256];

	memset(&r, 0, sizeof(r));
	r.has_send = 1;
	r.expects = calloc(2, sizeof(*r.expects));
	CHECK(parse("status 200", &r.expects[0], err, sizeof(err)) == 0);
	CHECK(parse("string ok", &r.expects[1], err, sizeof(err)) == 0);
	r.nexpects = 2;
	CHECK(hchk_prepare(&r, 16384, err, sizeof(err)) == 0);
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0, &v) ==
	      CHK_ST_L7OK);
	CHECK(feed_all_cuts(&r, "HTTP/1.1 500 KO\r\nContent-Length: 2\r\n\r\nok", 0, &v) ==
	      CHK_ST_L7STS);
	CHECK(feed_all_cuts(&r, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nko", 0, &v) ==
	      CHK_ST_L7RSP);
	rules_free(&r);
}

/* disable-on-404: the caller says a 404 soft-stops the server; it then
 * wins over the rules (a status rule here) */
static void test_reply_404(void)
{
	static const char reply[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
	struct hchk_rules r;
	struct hchk_reply st;
	struct hchk_verdict v;
	char buf[CAP];
	size_t len;

	rules(&r, "status 200");
	for (int stop = 0; stop < 2; stop++) {
		hchk_reply_init(&st);
		st.stop_on_404 = stop;
		len = sizeof(reply) - 1;
		memcpy(buf, reply, len);
		CHECK(hchk_reply_eval(&r, &st, buf, &len, CAP, 0, &v) == 1);
		CHECK(v.status == (stop ? CHK_ST_L7OKC : CHK_ST_L7STS) && v.code == 404);
		CHECK(chk_status_result(v.status) == (stop ? CHK_RES_CONDPASS : CHK_RES_FAILED));
	}
	rules_free(&r);
}

int main(void)
{
	test_health();
	test_statuses();
	test_expect_parse();
	test_request();
	test_reply_default();
	test_reply_status_rules();
	test_reply_body_rules();
	test_reply_sequence();
	test_reply_404();
	return t_done("test_check");
}
