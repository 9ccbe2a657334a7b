/* Unit tests of the rules engine (src/http/act*.c): rule lines parsed into
 * a proxy, run with act_exec() on messages parsed by h1_parse_head(), the
 * edited heads serialised by h1_out_head() and compared byte for byte;
 * verdicts, statuses and reply bytes; configuration errors and their
 * texts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sluice/cfg/tokenize.h>
#include <sluice/core/clock.h>
#include <sluice/core/log.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/pattern.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include <sluice/http/act.h>
#include <sluice/http/errors.h>
#include <sluice/http/h1.h>
#include <sluice/http/h1_out.h>
#include <sluice/http/msgedit.h>
#include <sluice/http/txn.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stream.h>
#include "t.h"

#define NHDRS 64

static struct proxy *px;
static char err[2048];
static int lineno;

static struct http_hdr hdrs[NHDRS];
static struct http_msg msg;
static struct http_edit ed;
static char arena[TXN_ARENA_SIZE];
static char input[8192];
static struct smp_ctx ctx;
static struct var_store vsess, vtxn, vreq, vres;
static char reply_area[16384];
static struct buffer reply;
static struct act_env env;
static struct stream strm;
static struct http_txn txn;

/* Formats render against the test's sample context: there is no stream. */
static size_t test_render(struct stream *s, const struct lf_expr *e, char *out, size_t room)
{
	struct log_fields f;

	memset(&f, 0, sizeof(f));
	f.status = -1;
	f.smp = &ctx;
	return lf_render(e, &f, out, room);
}

static struct proxy *proxy_new(const char *name, unsigned int cap)
{
	struct proxy *p = calloc(1, sizeof(*p));

	p->name = strdup(name);
	p->cap = cap;
	p->mode = PX_MODE_HTTP;
	list_init(&p->http_req_rules);
	list_init(&p->http_res_rules);
	list_init(&p->http_after_rules);
	list_init(&p->tcp_req_conn_rules);
	list_init(&p->tcp_req_sess_rules);
	list_init(&p->tcp_req_cont_rules);
	list_init(&p->tcp_res_cont_rules);
	return p;
}

static void proxy_drop(struct proxy *p)
{
	for (int s = 0; s < ACT_RULESETS; s++)
		act_free_rules(act_rules_of(p, (enum act_ruleset)s));
	for (int i = 0; i < p->nreq_cap; i++)
		free(p->req_cap[i].name);
	for (int i = 0; i < p->nres_cap; i++)
		free(p->res_cap[i].name);
	free(p->name);
	free(p);
}

/* A fresh frontend+backend proxy for each group of tests. */
static void reset(void)
{
	if (px)
		proxy_drop(px);
	px = proxy_new("px", PX_CAP_FE | PX_CAP_BE);
}

/* Parses one rule line of rule set <set>: 0, or -1 with err set. */
static int rule(enum act_ruleset set, const char *line)
{
	static struct cfg_tokens tok;

	err[0] = '\0';
	if (cfg_tokenize(line, &tok, err, sizeof(err)) < 0)
		return -2;
	return act_rule_parse(px, set, tok.args, tok.nargs, "t.cfg", ++lineno, err, sizeof(err));
}

#define RULE_OK(set, line) do { \
	int rc_ = rule(set, line); \
	CHECK(rc_ == 0); \
	if (rc_) \
		fprintf(stderr, "  rule \"%s\": %s\n", line, err); \
} while (0)

/* Refused with a message containing <part>. */
static int refused(enum act_ruleset set, const char *line, const char *part)
{
	if (rule(set, line) == 0) {
		fprintf(stderr, "  \"%s\" was accepted\n", line);
		return 0;
	}
	if (!strstr(err, part)) {
		fprintf(stderr, "  \"%s\": message \"%s\" lacks \"%s\"\n", line, err, part);
		return 0;
	}
	return 1;
}

#define REFUSED(set, line, part) CHECK(refused(set, line, part))

static void env_init(enum act_ruleset set)
{
	memset(&ctx, 0, sizeof(ctx));
	ctx.final = 1;
	ctx.vars[VAR_SCOPE_SESS] = &vsess;
	ctx.vars[VAR_SCOPE_TXN] = &vtxn;
	ctx.vars[VAR_SCOPE_REQ] = &vreq;
	ctx.vars[VAR_SCOPE_RES] = &vres;
	reply = (struct buffer){ reply_area, sizeof(reply_area), 0, 0 };
	memset(&env, 0, sizeof(env));
	env.px = px;
	env.set = set;
	env.smp = &ctx;
	env.reply = &reply;
}

/* HTTP/1.1 requests need a Host field: "Host: t" is inserted after the
 * request line of a request that has none (in expected heads too). */
static const char *with_host(const char *raw, char *buf, size_t size)
{
	const char *eol = strstr(raw, "\r\n");

	if (!eol || strncmp(raw, "HTTP/", 5) == 0 || strcasestr(raw, "\r\nHost:"))
		return raw;
	snprintf(buf, size, "%.*sHost: t\r\n%s", (int)(eol + 2 - raw), raw, eol + 2);
	return buf;
}

/* Parses <raw> as the message the rules of <set> see. */
static int message(enum act_ruleset set, const char *raw)
{
	struct h1_error perr;
	int is_req = set == ACT_HTTP_REQ || set == ACT_TCP_REQ_CONT;
	char buf[8192];

	snprintf(input, sizeof(input), "%s", with_host(raw, buf, sizeof(buf)));
	memset(&msg, 0, sizeof(msg));
	msg.hdrs = hdrs;
	msg.maxhdrs = NHDRS - HTTP_EDIT_EXTRA_HDRS;
	if (h1_parse_head(input, strlen(input), is_req, HTTP_METH_GET, sizeof(input), 0, &msg,
	                  &perr) != H1_OK) {
		fprintf(stderr, "  cannot parse \"%s\": %s\n", raw, perr.reason);
		return 0;
	}
	http_edit_init(&ed, &msg, arena, sizeof(arena), NHDRS);
	env_init(set);
	env.msg = &msg;
	env.edit = &ed;
	if (is_req)
		ctx.req = &msg;
	else
		ctx.res = &msg;
	ctx.dir = is_req ? SMP_DIR_REQ : SMP_DIR_RES;
	return 1;
}

static enum act_verdict run(enum act_ruleset set)
{
	env.set = set;
	return act_exec(act_rules_of(px, set), &env);
}

/* The edited head as HTTP/1 bytes. */
static const char *head(void)
{
	static char out[8192];
	ssize_t n = h1_out_head(&msg, 0, out, sizeof(out) - 1);

	out[n < 0 ? 0 : n] = '\0';
	return out;
}

static const char *reply_text(void)
{
	reply_area[reply.data < sizeof(reply_area) ? reply.data : sizeof(reply_area) - 1] = '\0';
	return reply_area;
}

/* Runs request rules on <raw>; the verdict must be <v>, the head <want>. */
static int req_gives(const char *raw, enum act_verdict v, const char *want)
{
	enum act_verdict got;
	char buf[8192];

	if (want)
		want = with_host(want, buf, sizeof(buf));
	if (!message(ACT_HTTP_REQ, raw))
		return 0;
	got = run(ACT_HTTP_REQ);
	if (got != v) {
		fprintf(stderr, "  verdict %d instead of %d for \"%s\"\n", got, v, raw);
		return 0;
	}
	if (want && strcmp(head(), want) != 0) {
		fprintf(stderr, "  head:\n%s\n  instead of:\n%s\n", head(), want);
		return 0;
	}
	return 1;
}

#define REQ_GIVES(raw, v, want) CHECK(req_gives(raw, v, want))

static void prune_vars(void)
{
	vars_prune(&vsess);
	vars_prune(&vtxn);
	vars_prune(&vreq);
	vars_prune(&vres);
}

/* ------------------------------------------------------------------------ */

static void test_headers(void)
{
	reset();
	RULE_OK(ACT_HTTP_REQ, "set-header X-A one");
	RULE_OK(ACT_HTTP_REQ, "add-header X-B two");
	RULE_OK(ACT_HTTP_REQ, "add-header X-B three");
	RULE_OK(ACT_HTTP_REQ, "del-header X-Del");
	RULE_OK(ACT_HTTP_REQ, "del-header x-pre- -m beg");
	RULE_OK(ACT_HTTP_REQ, "del-header ^x-re[0-9]$ -m reg");
	RULE_OK(ACT_HTTP_REQ, "set-header X-Copy %[req.hdr(x-a)]-%[req.hdr(x-b,1)]");
	REQ_GIVES("GET / HTTP/1.1\r\nHost: h\r\nX-A: old\r\nX-Del: 1\r\nx-pre-a: 1\r\n"
	          "X-Pre-B: 2\r\nX-Re1: 1\r\nX-Re10: 2\r\nX-del: 2\r\n\r\n", ACT_V_CONTINUE,
	          "GET / HTTP/1.1\r\nHost: h\r\nX-Re10: 2\r\nX-A: one\r\nX-B: two\r\n"
	          "X-B: three\r\nX-Copy: one-two\r\n\r\n");

	/* set-header computes the value before removing the field */
	reset();
	RULE_OK(ACT_HTTP_REQ, "set-header X-A %[req.hdr(x-a)],new");
	RULE_OK(ACT_HTTP_REQ, "set-header X-Missing \"[%[req.hdr(nope)]]\"");
	REQ_GIVES("GET / HTTP/1.1\r\nX-A: old\r\n\r\n", ACT_V_CONTINUE,
	          "GET / HTTP/1.1\r\nX-A: old,new\r\nX-Missing: []\r\n\r\n");

	/* replace-header: the whole value becomes the expansion. replace-value
	 * replaces a rewritten element's whole segment, blanks included: the
	 * bytes HAProxy 2.6 sends (its manual shows a space after the comma) */
	reset();
	RULE_OK(ACT_HTTP_REQ, "replace-header User-Agent curl foo");
	RULE_OK(ACT_HTTP_REQ, "replace-header X-M (a+)(b*) [\\2-\\1-%[path]]");
	RULE_OK(ACT_HTTP_REQ, "replace-value X-V ^a(.*)$ A\\1");
	RULE_OK(ACT_HTTP_REQ, "replace-value X-Forwarded-For ^192\\.168\\.(.*)$ 172.16.\\1");
	REQ_GIVES("GET /c HTTP/1.1\r\nUser-Agent: curl/7.1\r\nX-M: xaabbz\r\nX-V: ab , b,a\r\n"
	          "X-Forwarded-For: 192.168.10.1, 192.168.13.24, 10.0.0.37\r\n\r\n",
	          ACT_V_CONTINUE,
	          "GET /c HTTP/1.1\r\nUser-Agent: foo\r\nX-M: [bb-aa-/c]\r\nX-V: Ab, b,A\r\n"
	          "X-Forwarded-For: 172.16.10.1,172.16.13.24, 10.0.0.37\r\n\r\n");

	/* response side */
	reset();
	RULE_OK(ACT_HTTP_RES, "set-header Cache-Control no-store");
	RULE_OK(ACT_HTTP_RES, "del-header Server");
	RULE_OK(ACT_HTTP_RES, "set-status 503 reason \"Slow Down\"");
	CHECK(message(ACT_HTTP_RES, "HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 0\r\n\r\n"));
	CHECK(run(ACT_HTTP_RES) == ACT_V_CONTINUE);
	CHECK_STR(head(), "HTTP/1.1 503 Slow Down\r\nContent-Length: 0\r\n"
	          "Cache-Control: no-store\r\n\r\n");
	reset();
	RULE_OK(ACT_HTTP_AFTER, "set-status 431");
	CHECK(message(ACT_HTTP_AFTER, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
	CHECK(run(ACT_HTTP_AFTER) == ACT_V_CONTINUE);
	CHECK_STR(head(), "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\r\n");
}

static void test_request_line(void)
{
	reset();
	RULE_OK(ACT_HTTP_REQ, "set-path /p%[path]");
	RULE_OK(ACT_HTTP_REQ, "set-query a=1");
	RULE_OK(ACT_HTTP_REQ, "set-method POST");
	REQ_GIVES("GET /x?q HTTP/1.1\r\n\r\n", ACT_V_CONTINUE, "POST /p/x?a=1 HTTP/1.1\r\n\r\n");

	reset();
	RULE_OK(ACT_HTTP_REQ, "set-uri http://h/u");
	REQ_GIVES("GET /x HTTP/1.1\r\n\r\n", ACT_V_CONTINUE, "GET http://h/u HTTP/1.1\r\n\r\n");

	reset();
	RULE_OK(ACT_HTTP_REQ, "set-pathq /new");
	REQ_GIVES("GET http://h/x?q=1 HTTP/1.1\r\n\r\n", ACT_V_CONTINUE,
	          "GET http://h/new HTTP/1.1\r\n\r\n");

	/* set-query never removes the '?', adds none for an empty value (an
	 * empty word would end the arguments: see test_empty_word()) */
	reset();
	RULE_OK(ACT_HTTP_REQ, "set-query %[req.hdr(nope)]");
	REQ_GIVES("GET /x?q HTTP/1.1\r\n\r\n", ACT_V_CONTINUE, "GET /x? HTTP/1.1\r\n\r\n");
	REQ_GIVES("GET /x HTTP/1.1\r\n\r\n", ACT_V_CONTINUE, "GET /x HTTP/1.1\r\n\r\n");

	reset();
	RULE_OK(ACT_HTTP_REQ, "replace-path /foo/(.*) /\\1");
	REQ_GIVES("GET /foo/bar?q=/foo/x HTTP/1.1\r\n\r\n", ACT_V_CONTINUE,
	          "GET /bar?q=/foo/x HTTP/1.1\r\n\r\n");
	REQ_GIVES("GET /other HTTP/1.1\r\n\r\n", ACT_V_CONTINUE, "GET /other HTTP/1.1\r\n\r\n");

	reset();
	RULE_OK(ACT_HTTP_REQ, "replace-pathq ([^?]*)(\\?(.*))? \\1/foo\\2");
	REQ_GIVES("GET /bar?q=1 HTTP/1.1\r\n\r\n", ACT_V_CONTINUE,
	          "GET /bar/foo?q=1 HTTP/1.1\r\n\r\n");

	reset();
	RULE_OK(ACT_HTTP_REQ, "replace-uri ^http://(.*) https://\\1");
	REQ_GIVES("GET http://h/x HTTP/1.1\r\n\r\n", ACT_V_CONTINUE,
	          "GET https://h/x HTTP/1.1\r\n\r\n");
}

/* One normalize-uri rule on <uri>: the target becomes <want> (NULL: 400). */
static int normalizes(const char *args, const char *uri, const char *want)
{
	char line[256], raw[512], exp[512];
	enum act_verdict v;

	reset();
	snprintf(line, sizeof(line), "normalize-uri %s", args);
	if (rule(ACT_HTTP_REQ, line) < 0) {
		fprintf(stderr, "  %s: %s\n", line, err);
		return 0;
	}
	snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\n\r\n", uri);
	if (!message(ACT_HTTP_REQ, raw))
		return 0;
	v = run(ACT_HTTP_REQ);
	if (!want) {
		if (v == ACT_V_DENY && env.status == 400)
			return 1;
		fprintf(stderr, "  %s on %s: verdict %d, not a 400\n", args, uri, v);
		return 0;
	}
	snprintf(exp, sizeof(exp), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", want);
	if (v != ACT_V_CONTINUE || strcmp(head(), exp) != 0) {
		fprintf(stderr, "  %s on %s: verdict %d, %s", args, uri, v, head());
		return 0;
	}
	return 1;
}

#define NORM(args, uri, want) CHECK(normalizes(args, uri, want))

/* Expected results checked against HAProxy 2.6's own normalizers. */
static void test_normalize_uri(void)
{
	NORM("path-merge-slashes", "//a//b?x=//y", "/a/b?x=//y");
	NORM("path-merge-slashes", "http://h//a//b", "http://h/a/b");
	NORM("path-merge-slashes", "/a///", "/a/");
	NORM("path-strip-dot", "/a/./b?./x", "/a/b?./x");
	NORM("path-strip-dot", "/.", "/");
	NORM("path-strip-dot", "/./", "/");
	NORM("path-strip-dot", "/a/.", "/a/");
	NORM("path-strip-dot", "/./a/./", "/a/");
	NORM("path-strip-dot", "/.well-known/", "/.well-known/");
	NORM("path-strip-dot", "/a/..", "/a/..");
	NORM("path-strip-dotdot", "/foo/..", "/");
	NORM("path-strip-dotdot", "/a/b/..?x=/../", "/a/?x=/../");
	NORM("path-strip-dotdot", "/foo/../", "/");
	NORM("path-strip-dotdot", "/foo/../bar/", "/bar/");
	NORM("path-strip-dotdot", "/foo/bar/../", "/foo/");
	NORM("path-strip-dotdot", "/../bar/", "/../bar/");
	NORM("path-strip-dotdot", "/bar/../../", "/../");
	NORM("path-strip-dotdot", "/a/../../b", "/../b");
	NORM("path-strip-dotdot", "/..", "/../");
	NORM("path-strip-dotdot", "/foo//../", "/foo/");
	NORM("path-strip-dotdot", "/foo/%2E%2E/", "/foo/%2E%2E/");
	NORM("path-strip-dotdot", "/a/b/../c/./../d", "/a/c/d");
	NORM("path-strip-dotdot full", "/../bar/", "/bar/");
	NORM("path-strip-dotdot full", "/bar/../../", "/");
	NORM("percent-decode-unreserved", "/%61%2f%7e?%61", "/a%2f~?a");
	NORM("percent-decode-unreserved", "/%zz%4", "/%zz%4");
	NORM("percent-decode-unreserved", "/%41%2e", "/A.");
	NORM("percent-decode-unreserved", "/%2D%5f%30", "/-_0");
	NORM("percent-decode-unreserved strict", "/%zz", NULL);
	NORM("percent-decode-unreserved strict", "/a?%zz", NULL);
	NORM("percent-to-uppercase", "/%6f%zz?%6f", "/%6F%zz?%6F");
	NORM("percent-to-uppercase", "/%6f%2e%a", "/%6F%2E%a");
	NORM("percent-to-uppercase strict", "/%zz", NULL);
	NORM("query-sort-by-name", "/?c=3&a=1&b=2", "/?a=1&b=2&c=3");
	NORM("query-sort-by-name", "/?aaa=3&a=1&aa=2", "/?a=1&aa=2&aaa=3");
	NORM("query-sort-by-name", "/?a=3&b=4&a=1&b=5&a=2", "/?a=3&a=1&a=2&b=4&b=5");
	NORM("query-sort-by-name", "/?b&a=&&c", "/?&a=&b&c");
	NORM("query-sort-by-name", "/x?", "/x?");
	NORM("query-sort-by-name", "/x", "/x");
	NORM("fragment-strip", "/a?c", "/a?c");
	NORM("fragment-encode", "/a?x", "/a?x");

	reset();
	REFUSED(ACT_HTTP_REQ, "normalize-uri foo", "unknown normalizer 'foo'");
	REFUSED(ACT_HTTP_REQ, "normalize-uri path-merge-slashes full",
	        "unexpected argument 'full' after 'path-merge-slashes'");
	REFUSED(ACT_HTTP_REQ, "normalize-uri path-strip-dotdot strict",
	        "only 'full' may follow");
}

static void test_verdicts(void)
{
	reset();
	RULE_OK(ACT_HTTP_REQ, "set-header X-1 1");
	RULE_OK(ACT_HTTP_REQ, "allow if { path /allow }");
	RULE_OK(ACT_HTTP_REQ, "deny if { path /deny }");
	RULE_OK(ACT_HTTP_REQ, "deny deny_status 404 if { path /deny404 }");
	RULE_OK(ACT_HTTP_REQ, "tarpit if { path /tarpit }");
	RULE_OK(ACT_HTTP_REQ, "reject if { path /reject }");
	RULE_OK(ACT_HTTP_REQ, "silent-drop if { path /drop }");
	RULE_OK(ACT_HTTP_REQ, "set-header X-2 2 unless { path /nope }");
	REQ_GIVES("GET /allow HTTP/1.1\r\n\r\n", ACT_V_STOP, "GET /allow HTTP/1.1\r\nX-1: 1\r\n\r\n");
	REQ_GIVES("GET /deny HTTP/1.1\r\n\r\n", ACT_V_DENY, NULL);
	CHECK(env.status == 403 && env.deny_reply == NULL);
	REQ_GIVES("GET /deny404 HTTP/1.1\r\n\r\n", ACT_V_DENY, NULL);
	CHECK(env.status == 404 && env.deny_reply == NULL);
	REQ_GIVES("GET /tarpit HTTP/1.1\r\n\r\n", ACT_V_TARPIT, NULL);
	CHECK(env.status == 500);
	REQ_GIVES("GET /reject HTTP/1.1\r\n\r\n", ACT_V_REJECT, NULL);
	CHECK(!env.silent);
	REQ_GIVES("GET /drop HTTP/1.1\r\n\r\n", ACT_V_REJECT, NULL);
	CHECK(env.silent);
	REQ_GIVES("GET /x HTTP/1.1\r\n\r\n", ACT_V_CONTINUE,
	          "GET /x HTTP/1.1\r\nX-1: 1\r\nX-2: 2\r\n\r\n");
	REQ_GIVES("GET /nope HTTP/1.1\r\n\r\n", ACT_V_CONTINUE,
	          "GET /nope HTTP/1.1\r\nX-1: 1\r\n\r\n");

	/* a named ACL from the proxy's list (predefined here) */
	reset();
	RULE_OK(ACT_HTTP_REQ, "deny if METH_POST");
	REQ_GIVES("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", ACT_V_DENY, NULL);
	REQ_GIVES("GET / HTTP/1.1\r\n\r\n", ACT_V_CONTINUE, NULL);

	/* http-response deny answers 502 by default */
	reset();
	RULE_OK(ACT_HTTP_RES, "deny if { status 500 }");
	CHECK(message(ACT_HTTP_RES, "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n"));
	CHECK(run(ACT_HTTP_RES) == ACT_V_DENY && env.status == 502);

	/* tcp rule sets */
	reset();
	RULE_OK(ACT_TCP_REQ_CONN, "expect-proxy layer4 if { src 127.0.0.0/8 }");
	RULE_OK(ACT_TCP_REQ_CONN, "accept");
	RULE_OK(ACT_TCP_REQ_CONN, "reject");
	env_init(ACT_TCP_REQ_CONN);
	CHECK(run(ACT_TCP_REQ_CONN) == ACT_V_STOP);
	CHECK(env.expect_proxy == 0);   /* no address: the condition fails */
	RULE_OK(ACT_TCP_RES_CONT, "close");
	env_init(ACT_TCP_RES_CONT);
	CHECK(run(ACT_TCP_RES_CONT) == ACT_V_CLOSE);
	RULE_OK(ACT_TCP_REQ_CONT, "switch-mode http proto h2");
	env_init(ACT_TCP_REQ_CONT);
	CHECK(run(ACT_TCP_REQ_CONT) == ACT_V_SWITCH_HTTP);
	CHECK_STR(env.switch_proto, "h2");
}

static void test_strict_mode(void)
{
	char big[1500];

	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	reset();
	{
		char line[1600];

		snprintf(line, sizeof(line), "set-header X-Big %s", big);
		RULE_OK(ACT_HTTP_REQ, line);
		RULE_OK(ACT_HTTP_REQ, line);   /* the second does not fit the arena */
		RULE_OK(ACT_HTTP_REQ, "set-header X-After 1");
	}
	REQ_GIVES("GET / HTTP/1.1\r\n\r\n", ACT_V_ERROR, NULL);

	/* strict-mode off: the failure is ignored, the rules go on */
	reset();
	RULE_OK(ACT_HTTP_REQ, "strict-mode off");
	{
		char line[1600];

		snprintf(line, sizeof(line), "add-header X-Big %s", big);
		RULE_OK(ACT_HTTP_REQ, line);
		RULE_OK(ACT_HTTP_REQ, line);
	}
	RULE_OK(ACT_HTTP_REQ, "set-header X-After 1");
	CHECK(message(ACT_HTTP_REQ, "GET / HTTP/1.1\r\n\r\n"));
	CHECK(run(ACT_HTTP_REQ) == ACT_V_CONTINUE);
	CHECK(strstr(head(), "X-After: 1\r\n") != NULL);

	/* an invalid value is a failed rewrite too */
	reset();
	RULE_OK(ACT_HTTP_REQ, "set-method \"BAD METHOD\"");
	REQ_GIVES("GET / HTTP/1.1\r\n\r\n", ACT_V_ERROR, NULL);
}

static void test_replies(void)
{
	reset();
	RULE_OK(ACT_HTTP_REQ, "return status 201 if { path /ret0 }");
	RULE_OK(ACT_HTTP_REQ, "return status 200 content-type text/plain string hello "
	        "hdr X-A \"%[path]\" if { path /ret1 }");
	RULE_OK(ACT_HTTP_REQ, "return content-type text/plain lf-string \"p=%[path]\" "
	        "if { path /ret2 }");
	RULE_OK(ACT_HTTP_REQ, "return content-type text/plain string hi hdr X-K v "
	        "if { path /ret3 }");
	RULE_OK(ACT_HTTP_REQ, "return status 503 default-errorfiles if { path /ret4 }");
	RULE_OK(ACT_HTTP_REQ, "deny status 403 content-type text/plain string nope "
	        "if { path /deny2 }");
	RULE_OK(ACT_HTTP_REQ, "deny status 429 content-type text/plain lf-string \"slow %[path]\" "
	        "if { path /deny3 }");

	REQ_GIVES("GET /ret0 HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK(env.status == 201);
	CHECK_STR(reply_text(), "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
	REQ_GIVES("GET /ret1 HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-A: /ret1\r\n"
	          "Content-Length: 5\r\n\r\nhello");
	REQ_GIVES("GET /ret2 HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	          "Content-Length: 7\r\n\r\np=/ret2");
	REQ_GIVES("GET /ret3 HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-K: v\r\n"
	          "Content-Length: 2\r\n\r\nhi");
	REQ_GIVES("GET /ret4 HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK(env.status == 503);
	CHECK(strncmp(reply_text(), "HTTP/1.1 503 Service Unavailable\r\n", 34) == 0);

	RULE_OK(ACT_HTTP_REQ, "deny status 404 hdr X-A b if { path /deny4 }");
	REQ_GIVES("GET /deny4 HTTP/1.1\r\n\r\n", ACT_V_DENY, NULL);
	CHECK(env.status == 404 && env.deny_reply != NULL);
	if (env.deny_reply) {
		char out[512];
		ssize_t n = http_reply_render(env.deny_reply, NULL, out, sizeof(out) - 1);

		out[n < 0 ? 0 : n] = '\0';
		CHECK_STR(out, "HTTP/1.1 404 Not Found\r\nX-A: b\r\nContent-Length: 0\r\n\r\n");
	}
	REQ_GIVES("GET /deny2 HTTP/1.1\r\n\r\n", ACT_V_DENY, NULL);
	CHECK(env.status == 403 && env.deny_reply != NULL);
	if (env.deny_reply) {
		char out[512];
		ssize_t n = http_reply_render(env.deny_reply, NULL, out, sizeof(out) - 1);

		out[n < 0 ? 0 : n] = '\0';
		CHECK_STR(out, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
		          "Content-Length: 4\r\n\r\nnope");
	}
	REQ_GIVES("GET /deny3 HTTP/1.1\r\n\r\n", ACT_V_DENY, NULL);
	CHECK(env.status == 429 && env.deny_reply && (env.deny_reply->flags & HTTP_REPLY_F_DYNAMIC));
	if (env.deny_reply) {
		char out[512];
		ssize_t n = http_reply_render(env.deny_reply, NULL, out, sizeof(out) - 1);

		out[n < 0 ? 0 : n] = '\0';
		CHECK_STR(out, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\n"
		          "Content-Length: 11\r\n\r\nslow /deny3");
	}

	/* without a reply buffer (response rules), return goes the deny way */
	reset();
	RULE_OK(ACT_HTTP_RES, "return status 200 content-type text/plain string x");
	CHECK(message(ACT_HTTP_RES, "HTTP/1.1 500 x\r\nContent-Length: 0\r\n\r\n"));
	env.reply = NULL;
	CHECK(run(ACT_HTTP_RES) == ACT_V_DENY && env.status == 200 && env.deny_reply);
}

static void test_redirect(void)
{
	reset();
	RULE_OK(ACT_HTTP_REQ, "redirect location /new code 301 set-cookie A=1 if { path /r1 }");
	RULE_OK(ACT_HTTP_REQ, "redirect prefix /pfx drop-query append-slash if { path_beg /r2 }");
	RULE_OK(ACT_HTTP_REQ, "redirect scheme https if { path_beg /r3 }");
	RULE_OK(ACT_HTTP_REQ, "redirect prefix / clear-cookie B if { path_beg /r4 }");
	RULE_OK(ACT_HTTP_REQ, "redirect location %[req.hdr(x-to)] ignore-empty if { path /r5 }");
	RULE_OK(ACT_HTTP_REQ, "redirect code 308 prefix https://x.example if { path /r6 }");

	REQ_GIVES("GET /r1 HTTP/1.1\r\nHost: ex.com\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK(env.status == 301);
	CHECK_STR(reply_text(), "HTTP/1.1 301 Moved Permanently\r\nContent-Length: 0\r\n"
	          "Location: /new\r\nSet-Cookie: A=1; path=/;\r\n\r\n");
	REQ_GIVES("GET /r2?x=1 HTTP/1.1\r\nHost: ex.com\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 302 Found\r\nContent-Length: 0\r\n"
	          "Location: /pfx/r2/\r\nCache-Control: no-cache\r\n\r\n");
	REQ_GIVES("GET /r3/a?q HTTP/1.1\r\nHost: ex.com\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 302 Found\r\nContent-Length: 0\r\n"
	          "Location: https://ex.com/r3/a?q\r\nCache-Control: no-cache\r\n\r\n");
	REQ_GIVES("GET /r4 HTTP/1.1\r\nHost: ex.com\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 302 Found\r\nContent-Length: 0\r\nLocation: /r4\r\n"
	          "Cache-Control: no-cache\r\nSet-Cookie: B; path=/; Max-Age=0;\r\n\r\n");
	REQ_GIVES("GET /r5 HTTP/1.1\r\n\r\n", ACT_V_CONTINUE, NULL);   /* ignore-empty */
	REQ_GIVES("GET /r5 HTTP/1.1\r\nX-To: /there\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK(strstr(reply_text(), "\r\nLocation: /there\r\n") != NULL);
	REQ_GIVES("GET /r6 HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 308 Permanent Redirect\r\nContent-Length: 0\r\n"
	          "Location: https://x.example/r6\r\n\r\n");

	/* responses: location only, through deny_reply when there is no buffer */
	reset();
	RULE_OK(ACT_HTTP_RES, "redirect location /moved");
	REFUSED(ACT_HTTP_RES, "redirect prefix /b", "response only supports redirect type "
	        "'location'");
	CHECK(message(ACT_HTTP_RES, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
	env.reply = NULL;
	CHECK(run(ACT_HTTP_RES) == ACT_V_DENY && env.status == 302 && env.deny_reply);
	if (env.deny_reply) {
		char out[512];
		ssize_t n = http_reply_render(env.deny_reply, NULL, out, sizeof(out) - 1);

		out[n < 0 ? 0 : n] = '\0';
		CHECK_STR(out, "HTTP/1.1 302 Found\r\nCache-Control: no-cache\r\n"
		          "Location: /moved\r\nContent-Length: 0\r\n\r\n");
	}
}

static void test_variables(void)
{
	struct var_ref ref;
	struct sample smp;

	reset();
	RULE_OK(ACT_HTTP_REQ, "set-var(txn.a) req.hdr(x-a)");
	RULE_OK(ACT_HTTP_REQ, "set-var(txn.a,ifnotexists) str(second)");
	RULE_OK(ACT_HTTP_REQ, "set-var-fmt(req.f) %[var(txn.a)]:%[path]");
	RULE_OK(ACT_HTTP_REQ, "set-var(sess.n) int(42)");
	RULE_OK(ACT_HTTP_REQ, "unset-var(sess.n) if { path /unset }");
	RULE_OK(ACT_HTTP_REQ, "set-header X-F %[var(req.f)]");
	REQ_GIVES("GET /p HTTP/1.1\r\nX-A: first\r\n\r\n", ACT_V_CONTINUE,
	          "GET /p HTTP/1.1\r\nX-A: first\r\nX-F: first:/p\r\n\r\n");
	CHECK(vars_parse_ref("sess.n", 6, &ref, err, sizeof(err)) == 0);
	CHECK(vars_get(&ctx, &ref, &smp) == 1 && smp.type == SMP_T_SINT && smp.data.sint == 42);
	REQ_GIVES("GET /unset HTTP/1.1\r\n\r\n", ACT_V_CONTINUE, NULL);
	CHECK(vars_get(&ctx, &ref, &smp) == 0);
	prune_vars();

	REFUSED(ACT_HTTP_REQ, "set-var(foo.bar) src", "foo.bar");
	REFUSED(ACT_HTTP_REQ, "set-var(txn.bar,ifxx) src", "unknown condition \"ifxx\"");
	REFUSED(ACT_HTTP_REQ, "set-var(txn.bar) nope", "nope");
	REFUSED(ACT_HTTP_REQ, "set-var(txn.bar)", "expects exactly 1 argument <expr>");
	REFUSED(ACT_HTTP_REQ, "set-var(txn.bar) src foo", "expects exactly 1 argument");
	REFUSED(ACT_HTTP_REQ, "unset-var(txn.bar,ifexists)", "takes no condition");
	REFUSED(ACT_HTTP_REQ, "set-var() src", "expects a variable name between parentheses");
	REFUSED(ACT_TCP_REQ_CONN, "set-var(sess.x) req.len", "'req.len' may not be reliably "
	        "used here because it needs the request contents");
}

static void test_stream_actions(void)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&strm.cli.src;

	reset();
	memset(&strm, 0, sizeof(strm));
	memset(&txn, 0, sizeof(txn));
	strm.txn = &txn;
	strm.fe = strm.be = px;
	strm.cli.ph.fd = -1;
	txn.log_level = -1;
	in->sin_family = AF_INET;
	in->sin_port = htons(4321);
	RULE_OK(ACT_HTTP_REQ, "set-src str(10.1.2.3)");
	RULE_OK(ACT_HTTP_REQ, "set-priority-class int(5000)");
	RULE_OK(ACT_HTTP_REQ, "set-priority-offset int(-20)");
	RULE_OK(ACT_HTTP_REQ, "set-timeout server 5s");
	RULE_OK(ACT_HTTP_REQ, "set-timeout tunnel req.hdr(x-t)");
	RULE_OK(ACT_HTTP_REQ, "set-log-level silent");
	RULE_OK(ACT_HTTP_REQ, "capture req.hdr(host) len 3");
	RULE_OK(ACT_HTTP_REQ, "capture path id 0");
	CHECK(px->nreq_cap == 1 && px->req_cap[0].len == 3);
	CHECK(message(ACT_HTTP_REQ, "GET /path HTTP/1.1\r\nHost: example\r\nX-T: 250\r\n\r\n"));
	env.s = &strm;
	CHECK(run(ACT_HTTP_REQ) == ACT_V_CONTINUE);
	CHECK(in->sin_family == AF_INET && in->sin_addr.s_addr == inet_addr("10.1.2.3") &&
	      ntohs(in->sin_port) == 4321);
	CHECK(strm.prio_class == 2047 && strm.prio_offset_ms == -20);
	CHECK(txn.srv_timeout_ms == 5000 && txn.tunnel_timeout_ms == 250);
	CHECK(txn.log_level == ACT_LOG_LEVEL_SILENT);
	CHECK_STR(txn.req_cap[0], "/pa");   /* the id rule ran last, cut to len 3 */
	free(txn.req_cap[0]);
	txn.req_cap[0] = NULL;

	reset();
	strm.fe = strm.be = px;
	RULE_OK(ACT_HTTP_REQ, "set-src ipv6(::1)");
	RULE_OK(ACT_HTTP_REQ, "set-src-port int(80)");
	CHECK(message(ACT_HTTP_REQ, "GET / HTTP/1.1\r\n\r\n"));
	env.s = &strm;
	CHECK(run(ACT_HTTP_REQ) == ACT_V_CONTINUE);
	CHECK(strm.cli.src.ss_family == AF_INET6 &&
	      ntohs(((struct sockaddr_in6 *)&strm.cli.src)->sin6_port) == 80);

	REFUSED(ACT_HTTP_REQ, "set-timeout client 5s", "supports 'server' and 'tunnel' "
	        "(got 'client')");
	REFUSED(ACT_HTTP_REQ, "set-timeout server", "expects exactly 2 arguments");
	REFUSED(ACT_HTTP_REQ, "set-log-level foo", "unknown log level 'foo'");
	REFUSED(ACT_HTTP_RES, "capture res.hdr(x) len 3", "expects 'id', found 'len'");
	REFUSED(ACT_TCP_REQ_CONT, "capture req.len id 3", "expects 'len', found 'id'");

	/* frontend-only and backend-only actions */
	proxy_drop(px);
	px = proxy_new("fe", PX_CAP_FE);
	REFUSED(ACT_HTTP_REQ, "set-timeout server 5s", "proxy 'fe' has no backend capability");
	proxy_drop(px);
	px = proxy_new("be", PX_CAP_BE);
	REFUSED(ACT_HTTP_REQ, "capture req.hdr(x) len 10", "proxy 'be' has no frontend "
	        "capability");
	REFUSED(ACT_TCP_REQ_CONT, "switch-mode http", "no frontend capability");
	proxy_drop(px);
	px = NULL;
	reset();
}

static void test_wait_for_body(void)
{
	reset();
	RULE_OK(ACT_HTTP_REQ, "wait-for-body time 1s at-least 4");
	RULE_OK(ACT_HTTP_REQ, "set-header X-Body %[req.body]");
	CHECK(message(ACT_HTTP_REQ, "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n"));
	ctx.req_body = (struct ist){ "ab", 2 };
	CHECK(run(ACT_HTTP_REQ) == ACT_V_YIELD);
	CHECK(env.resume != NULL && env.wait_exp_ms >= clock_mono_ms());
	ctx.req_body = (struct ist){ "abcd", 4 };
	CHECK(run(ACT_HTTP_REQ) == ACT_V_CONTINUE);
	CHECK(env.resume == NULL && env.wait_exp_ms == 0);
	CHECK(strstr(head(), "X-Body: abcd\r\n") != NULL);

	/* the deadline passed: go on with what is there */
	CHECK(message(ACT_HTTP_REQ, "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n"));
	CHECK(run(ACT_HTTP_REQ) == ACT_V_YIELD);
	env.wait_exp_ms = clock_mono_ms() - 1;
	CHECK(run(ACT_HTTP_REQ) == ACT_V_CONTINUE);

	/* with a transaction, the deadline counts from the head's arrival,
	 * whatever the caller kept of the environment */
	memset(&strm, 0, sizeof(strm));
	memset(&txn, 0, sizeof(txn));
	strm.txn = &txn;
	strm.fe = strm.be = px;
	strm.cli.ph.fd = -1;
	CHECK(message(ACT_HTTP_REQ, "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n"));
	env.s = &strm;
	txn.req_head_ms = clock_mono_ms();
	CHECK(run(ACT_HTTP_REQ) == ACT_V_YIELD);
	CHECK(env.wait_exp_ms == txn.req_head_ms + 1000 && (txn.flags & TX_F_WAIT_BODY));
	env.resume = NULL;
	env.wait_exp_ms = 0;
	txn.req_head_ms = clock_mono_ms() - 1500;
	CHECK(run(ACT_HTTP_REQ) == ACT_V_CONTINUE && !(txn.flags & TX_F_WAIT_BODY));

	/* no body to wait for */
	REQ_GIVES("GET / HTTP/1.1\r\n\r\n", ACT_V_CONTINUE, NULL);

	REFUSED(ACT_HTTP_REQ, "wait-for-body", "expects time <time> [ at-least <bytes> ]");
	REFUSED(ACT_HTTP_REQ, "wait-for-body time", "missing argument for 'time'");
	REFUSED(ACT_HTTP_REQ, "wait-for-body time 1s at-least", "missing argument for "
	        "'at-least'");
}

/* A condition that cannot conclude yet makes the rule set yield at that
 * rule, and the next call resumes there. */
static void test_yield_resume(void)
{
	struct list *first;

	reset();
	RULE_OK(ACT_TCP_REQ_CONT, "set-var(txn.n) int(1)");
	RULE_OK(ACT_TCP_REQ_CONT, "accept if { req.len ge 4 }");
	RULE_OK(ACT_TCP_REQ_CONT, "reject");
	first = px->tcp_req_cont_rules.next;
	env_init(ACT_TCP_REQ_CONT);
	ctx.final = 0;
	ctx.req_data = (struct ist){ "ab", 2 };
	/* 2 bytes, more may come: "ge 4" cannot conclude yet */
	CHECK(run(ACT_TCP_REQ_CONT) == ACT_V_YIELD);
	CHECK(env.resume == first->next);
	ctx.req_data = (struct ist){ "abcde", 5 };
	CHECK(run(ACT_TCP_REQ_CONT) == ACT_V_STOP);
	CHECK(env.resume == NULL);
	/* the inspect delay ended: the miss is a failure, the reject applies */
	env_init(ACT_TCP_REQ_CONT);
	ctx.final = 0;
	ctx.req_data = (struct ist){ "ab", 2 };
	CHECK(run(ACT_TCP_REQ_CONT) == ACT_V_YIELD);
	ctx.final = 1;
	CHECK(run(ACT_TCP_REQ_CONT) == ACT_V_REJECT);
	prune_vars();
}

static void test_config_errors(void)
{
	reset();
	REFUSED(ACT_HTTP_REQ, "foo", "unknown action 'foo'; 'http-request' expects");
	REFUSED(ACT_HTTP_REQ, "set-heade X y", "unknown action 'set-heade' (did you mean "
	        "'set-header'?)");
	REFUSED(ACT_HTTP_REQ, "set-status 200", "action 'set-status' is not allowed in "
	        "'http-request' rules");
	REFUSED(ACT_HTTP_AFTER, "deny", "action 'deny' is not allowed in 'http-after-response'");
	REFUSED(ACT_HTTP_RES, "bar", "unknown action 'bar'; 'http-response' expects add-acl(*), "
	        "add-header, allow, cache-store, capture, del-acl(*), del-header, del-map(*), deny, redirect, "
	        "replace-header, replace-value, return, sc-inc-gpc(*), sc-inc-gpc0, sc-inc-gpc0(*), "
	        "sc-inc-gpc1, sc-inc-gpc1(*), sc-set-gpt(*), sc-set-gpt0, sc-set-gpt0(*), "
	        "set-header, set-log-level, "
	        "set-map(*), set-mark, set-nice, set-status, set-tos, set-var(*), set-var-fmt(*), "
	        "silent-drop, strict-mode, track-sc0, track-sc1, track-sc2, unset-var(*), "
	        "wait-for-body");
	REFUSED(ACT_TCP_REQ_CONN, "baz", "'tcp-request connection' expects");
	REFUSED(ACT_HTTP_REQ, "", "missing action");
	REFUSED(ACT_HTTP_REQ, "allow foo", "action 'allow': unexpected argument 'foo'");
	REFUSED(ACT_HTTP_REQ, "set-header", "action 'set-header': expects exactly 2 arguments");
	REFUSED(ACT_HTTP_REQ, "set-header X", "expects exactly 2 arguments <name> <fmt>");
	REFUSED(ACT_HTTP_REQ, "set-header X\"(\" v", "invalid character in header name");
	REFUSED(ACT_HTTP_REQ, "del-header x -m foo", "-m with unsupported matching method 'foo'");
	REFUSED(ACT_HTTP_REQ, "replace-header x ([ y", "invalid regex '(['");
	REFUSED(ACT_HTTP_REQ, "replace-value x", "expects exactly 3 arguments");
	REFUSED(ACT_HTTP_REQ, "set-method", "expects exactly 1 argument <fmt>");
	REFUSED(ACT_HTTP_RES, "set-status 99", "between 100 and 999");
	REFUSED(ACT_HTTP_RES, "set-status 200 because x", "expects 'reason'");
	REFUSED(ACT_HTTP_REQ, "set-priority-class", "missing fetch method");
	REFUSED(ACT_HTTP_REQ, "set-priority-class int(1) foo", "unexpected argument 'foo'");
	REFUSED(ACT_HTTP_REQ, "strict-mode foo", "unexpected value 'foo'");
	REFUSED(ACT_HTTP_REQ, "use-service foo", "'foo' unknown service name");
	REFUSED(ACT_HTTP_REQ, "track-sc0", "missing fetch method");
	REFUSED(ACT_HTTP_REQ, "track-sc0 src table", "missing table name");
	REFUSED(ACT_HTTP_REQ, "sc-inc-gpc0(3)", "invalid stick table track ID");
	REFUSED(ACT_HTTP_REQ, "sc-inc-gpc(1)", "Missing gpc ID");
	REFUSED(ACT_HTTP_REQ, "cache-use", "expects a cache name.");
	REFUSED(ACT_TCP_REQ_CONN, "expect-proxy layer7", "only 'layer4' is supported");
	REFUSED(ACT_TCP_REQ_CONT, "switch-mode tcp", "expects 'http'");
	REFUSED(ACT_TCP_REQ_CONT, "switch-mode http proto h3", "unknown protocol 'h3'");

	/* data a rule set never has: refused in values (a condition is only
	 * warned about, see test_cond_unusable()) */
	REFUSED(ACT_HTTP_REQ, "set-header x %[res.hdr(x)]", "'res.hdr(x)' may not be reliably "
	        "used here");
	REFUSED(ACT_HTTP_RES, "set-header X %[req.hdr(host)]", "'req.hdr(host)' may not be");
	REFUSED(ACT_HTTP_REQ, "set-var(txn.x) res.hdr(x)", "'res.hdr(x)' may not be reliably");
	REFUSED(ACT_HTTP_REQ, "deny if nosuchacl", "nosuchacl");
	REFUSED(ACT_HTTP_REQ, "set-header x %[nosuchfetch]", "nosuchfetch");

	/* reply arguments */
	REFUSED(ACT_HTTP_REQ, "return status 999", "unexpected status code '999'");
	REFUSED(ACT_HTTP_REQ, "return status 100", "unexpected status code '100'");
	REFUSED(ACT_HTTP_REQ, "return status", "'status' expects <status_code> as argument");
	REFUSED(ACT_HTTP_REQ, "deny deny_status 999", "unexpected status code '999'");
	REFUSED(ACT_HTTP_REQ, "deny deny_status 201", "status code '201' not handled by default "
	        "with 'default-errorfiles' argument");
	REFUSED(ACT_HTTP_REQ, "return status 201 default-errorfiles", "status code '201' not "
	        "handled");
	REFUSED(ACT_HTTP_REQ, "return string foo", "a content type must be defined when "
	        "non-empty payload is configured");
	REFUSED(ACT_HTTP_REQ, "return string x content-type t string y", "unexpected 'string' "
	        "argument, 'string' already defined");
	REFUSED(ACT_HTTP_REQ, "return status 204 content-type t string x", "no body expected "
	        "for 204 responses");
	REFUSED(ACT_HTTP_REQ, "return file /nonexistent/x", "error opening file "
	        "'/nonexistent/x'");
	REFUSED(ACT_HTTP_REQ, "return errorfile /nonexistent/x", "/nonexistent/x");
	REFUSED(ACT_HTTP_REQ, "return deny_status 200", "unexpected argument 'deny_status'");
	REFUSED(ACT_HTTP_REQ, "deny hdr x", "'hdr' expects <name> and <value> as arguments");
	REFUSED(ACT_HTTP_REQ, "return foo", "unexpected argument 'foo'");

	/* redirect */
	REFUSED(ACT_HTTP_REQ, "redirect location", "missing argument for 'location'");
	REFUSED(ACT_HTTP_REQ, "redirect location /x code", "missing argument for 'code'");
	REFUSED(ACT_HTTP_REQ, "redirect location /x code 304", "'code': unsupported HTTP code "
	        "'304' (must be one of 301, 302, 303, 307 or 308)");
	REFUSED(ACT_HTTP_REQ, "redirect foo /x", "expects 'code', 'prefix', 'location', "
	        "'scheme', 'set-cookie', 'clear-cookie', 'drop-query', 'ignore-empty' or "
	        "'append-slash' (was 'foo')");
	REFUSED(ACT_HTTP_REQ, "redirect code 301", "redirection type expected");
	REFUSED(ACT_HTTP_REQ, "redirect set-cookie", "missing argument for 'set-cookie'");

	/* no rule was added by a refused line */
	CHECK(list_empty(&px->http_req_rules));
	CHECK(list_empty(&px->http_res_rules));
}

/* set-map / add-acl edit the pattern reference of a loaded file. */
static void test_pattern_actions(void)
{
	struct pat_ref *ref;

	reset();
	ref = pat_ref_new("/t/test.map", "test.map", -1, PAT_REF_MAP | PAT_REF_FILE, err,
	                  sizeof(err));
	CHECK(ref != NULL);
	if (!ref)
		return;
	RULE_OK(ACT_HTTP_REQ, "set-map(/t/test.map) %[path] %[req.hdr(x-v)]");
	RULE_OK(ACT_HTTP_REQ, "del-map(/t/test.map) %[req.hdr(x-del)]");
	REFUSED(ACT_HTTP_REQ, "set-map(/t/test.map) %[path]", "expects exactly 2 arguments");
	REFUSED(ACT_HTTP_REQ, "del-acl(x) a b", "expects exactly 1 argument");
	REFUSED(ACT_HTTP_REQ, "set-map() a b", "expects a file name between parentheses");
	/* resolved by the post-parse hook in sluice; by hand here */
	for (struct list *l = px->http_req_rules.next; l != &px->http_req_rules; l = l->next) {
		struct act_rule *r = list_elem(l, struct act_rule, list);
		struct { int op; char *file; struct pat_ref *ref; } *p = r->arg;

		p->ref = ref;
	}
	REQ_GIVES("GET /k HTTP/1.1\r\nX-V: v1\r\n\r\n", ACT_V_CONTINUE, NULL);
	CHECK(pat_ref_entries(ref) == 1);
	REQ_GIVES("GET /k HTTP/1.1\r\nX-V: v2\r\n\r\n", ACT_V_CONTINUE, NULL);
	CHECK(pat_ref_entries(ref) == 1);   /* changed, not added */
	REQ_GIVES("GET /j HTTP/1.1\r\nX-V: v3\r\nX-Del: /k\r\n\r\n", ACT_V_CONTINUE, NULL);
	CHECK(pat_ref_entries(ref) == 1);   /* /j added, /k deleted */
	reset();
}

/* Parses <text> as a configuration file; returns the error count and
 * leaves what the parser printed in <out>. */
static int parse_cfg(const char *text, int postparse, char *out, size_t outsz)
{
	char path[] = "/tmp/test_act_XXXXXX", logp[] = "/tmp/test_act_log_XXXXXX";
	int fd = mkstemp(path), lfd = mkstemp(logp), saved = dup(2), errors;
	ssize_t n;

	if (fd < 0 || lfd < 0 || write(fd, text, strlen(text)) < 0)
		return -1;
	close(fd);
	fflush(stderr);
	dup2(lfd, 2);
	errors = cfg_parse_path(path);
	if (postparse)
		errors += cfg_postparse();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(lfd, out, outsz - 1, 0);
	out[n < 0 ? 0 : n] = '\0';
	close(lfd);
	unlink(path);
	unlink(logp);
	return errors;
}

static void test_config_keywords(void)
{
	static char out[8192];
	struct proxy *fe;
	const struct act_rule *r;
	int errors;

	errors = parse_cfg("defaults\n"
	                   "  http-request deny\n"
	                   "  tcp-request inspect-delay 5s\n"
	                   "  redirect location /x\n"
	                   "frontend cfgfe\n"
	                   "  http-request set-header X-A 1\n"
	                   "  redirect location /lit%41 code 301\n"
	                   "  http-request set-header X-B 2\n"
	                   "  tcp-request content accept\n"
	                   "  tcp-request inspect-delay 3s\n"
	                   "  declare capture request len 8\n"
	                   "  http-request capture path id 0\n"
	                   "  http-response capture res.hdr(x) id 2\n"
	                   "  tcp-response content accept\n"
	                   "  http-request nosuch\n"
	                   "backend cfgbe\n"
	                   "  tcp-request connection accept\n"
	                   "  tcp-response inspect-delay 2s\n", 1, out, sizeof(out));
	CHECK(errors >= 7);
	CHECK(strstr(out, ":2: 'http-request': 'http-request' rules are not supported in a "
	             "'defaults' section") != NULL);
	CHECK(strstr(out, ":3: 'tcp-request inspect-delay': 'tcp-request inspect-delay' rules "
	             "are not supported in a 'defaults' section") != NULL);
	CHECK(strstr(out, ":4: 'redirect': not allowed in a 'defaults' section") != NULL);
	CHECK(strstr(out, ":8: a 'http-request' rule placed after a 'redirect' rule will "
	             "still be processed before.") != NULL);
	CHECK(strstr(out, ":9: a 'tcp-request' rule placed after an 'http-request' rule will "
	             "still be processed before.") != NULL);
	CHECK(strstr(out, ":13: Proxy 'cfgfe': unable to find capture id '2' referenced by "
	             "http-response capture rule.") != NULL);
	CHECK(strstr(out, ":14: 'tcp-response content' is not allowed in 'frontend' section")
	      != NULL);
	CHECK(strstr(out, ":15: 'http-request': unknown action 'nosuch'") != NULL);
	CHECK(strstr(out, ":17: 'tcp-request connection' is not allowed in 'backend' section")
	      != NULL);
	if (errors < 7)
		fprintf(stderr, "%s", out);

	fe = proxy_find("cfgfe", PX_CAP_FE);
	CHECK(fe != NULL);
	if (!fe)
		return;
	CHECK(fe->tcp_inspect_delay == 3000);
	CHECK(fe->nreq_cap == 1 && fe->req_cap[0].len == 8);
	/* the legacy redirect went after the http-request rules, its target
	 * taken literally */
	r = list_elem(fe->http_req_rules.prev, struct act_rule, list);
	CHECK_STR(r->kw->kw, "redirect");
	CHECK(r->flags & ACT_RULE_F_LEGACY);
	CHECK(message(ACT_HTTP_REQ, "GET / HTTP/1.1\r\n\r\n"));
	CHECK(r->kw->exec(r, &env) == ACT_V_REPLY);
	CHECK(strstr(reply_text(), "\r\nLocation: /lit%41\r\n") != NULL);
	r = list_elem(fe->http_req_rules.prev->prev, struct act_rule, list);
	CHECK_STR(r->kw->kw, "capture");
	r = list_elem(fe->http_req_rules.next->next, struct act_rule, list);
	CHECK_STR(r->kw->kw, "set-header");
	CHECK(proxy_find("cfgbe", PX_CAP_BE) &&
	      proxy_find("cfgbe", PX_CAP_BE)->tcp_res_inspect_delay == 2000);
}


/* ------------------------------------------------------------------------ */
/* Differences from HAProxy 2.6 found by the reg-tests/rules tests           */
/* ------------------------------------------------------------------------ */

static char warn_out[4096];

/* Parses one rule with stderr captured into warn_out (the warnings). */
static int rule_captured(enum act_ruleset set, const char *line)
{
	char logp[] = "/tmp/test_act_warn_XXXXXX";
	int lfd = mkstemp(logp), saved = dup(2), rc;
	ssize_t n;

	fflush(stderr);
	dup2(lfd, 2);
	rc = rule(set, line);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(lfd, warn_out, sizeof(warn_out) - 1, 0);
	warn_out[n < 0 ? 0 : n] = '\0';
	close(lfd);
	unlink(logp);
	return rc;
}

/* Accepted, with a warning containing <part>. */
static int warned(enum act_ruleset set, const char *line, const char *part)
{
	if (rule_captured(set, line) != 0) {
		fprintf(stderr, "  \"%s\" was refused: %s\n", line, err);
		return 0;
	}
	if (!strstr(warn_out, part)) {
		fprintf(stderr, "  \"%s\": warnings \"%s\" lack \"%s\"\n", line, warn_out, part);
		return 0;
	}
	return 1;
}

#define WARNED(set, line, part) CHECK(warned(set, line, part))

/* An empty word ends a rule's arguments, as HAProxy's parser does: what
 * follows it, a condition too, is not read. */
static void test_empty_word(void)
{
	reset();
	REFUSED(ACT_HTTP_REQ, "set-header X-A \"\"", "expects exactly 2 arguments");
	REFUSED(ACT_HTTP_REQ, "set-header X-A '' if TRUE", "expects exactly 2 arguments");
	REFUSED(ACT_HTTP_REQ, "set-query \"\"", "expects exactly 1 argument");
	REFUSED(ACT_HTTP_REQ, "return status 200 content-type t string \"\"", "'string' expects");
	REFUSED(ACT_HTTP_REQ, "del-header \"\"", "expects <name>");
	REFUSED(ACT_HTTP_REQ, "deny if { req.hdr(x) -m str \"\" }", "missing closing '}'");
	CHECK(list_empty(&px->http_req_rules));
	/* HAProxy accepts the rest silently; sluice says it was ignored */
	WARNED(ACT_HTTP_REQ, "deny \"\" if FALSE", "'if' and what follows it are ignored");
	REQ_GIVES("GET / HTTP/1.1\r\n\r\n", ACT_V_DENY, NULL);
	/* inside a word, an empty string is a value like another */
	reset();
	RULE_OK(ACT_HTTP_REQ, "set-header X-E \"[%[str(),concat(\"\",,)]]\"");
	REQ_GIVES("GET / HTTP/1.1\r\n\r\n", ACT_V_CONTINUE, "GET / HTTP/1.1\r\nX-E: []\r\n\r\n");
}

/* A condition on data the rule set never has is a warning (the ACL never
 * matches there); its fetches fail at run time. */
static void test_cond_unusable(void)
{
	static struct acl_list acls;

	reset();
	acl_list_init(&acls);
	WARNED(ACT_HTTP_RES, "set-status 299 if { path /a }", "anonymous acl will never match "
	       "because it uses keyword 'path' which is incompatible with 'backend "
	       "http-response header rule'");
	WARNED(ACT_HTTP_RES, "set-header X-U 1 unless { req.hdr(x),lower -m found }",
	       "uses keyword 'req.hdr' which is incompatible");
	WARNED(ACT_HTTP_REQ, "deny if { res.hdr(x) -m found }", "anonymous acl will never match "
	       "because it uses keyword 'res.hdr' which is incompatible with 'frontend "
	       "http-request header rule'");
	WARNED(ACT_TCP_REQ_CONN, "reject if { req.hdr(x) -m found }", "anonymous acl will never "
	       "match in 'tcp-request connection' because it uses keyword 'req.hdr' which is "
	       "incompatible with 'frontend tcp-request connection rule'");
	CHECK(acl_parse(&acls, (char *[]){ "x", "req.hdr(x-t)", "a" }, 3, "t.cfg", 1, err,
	                sizeof(err)) == 0);
	px->acls = &acls;
	WARNED(ACT_HTTP_RES, "set-status 298 if TRUE x", "acl 'x' involves keywords which are "
	       "incompatible with 'backend http-response header rule'");
	/* a compatible condition says nothing */
	CHECK(rule_captured(ACT_HTTP_RES, "set-status 297 if { status 500 }") == 0 &&
	      warn_out[0] == '\0');

	/* run time: the request side is not there for response rules */
	CHECK(message(ACT_HTTP_RES, "HTTP/1.1 200 OK\r\nX-T: a\r\nContent-Length: 0\r\n\r\n"));
	ctx.req = ctx.res;   /* even when a request is at hand, they do not see it */
	CHECK(run(ACT_HTTP_RES) == ACT_V_CONTINUE);
	CHECK(msg.status == 200);
	CHECK_STR(head(), "HTTP/1.1 200 OK\r\nX-T: a\r\nContent-Length: 0\r\nX-U: 1\r\n\r\n");
	CHECK(ctx.avail == 0);   /* given back as it was */
	CHECK(message(ACT_HTTP_REQ, "GET / HTTP/1.1\r\nX: 1\r\n\r\n"));
	ctx.res = ctx.req;
	CHECK(run(ACT_HTTP_REQ) == ACT_V_CONTINUE);
	px->acls = NULL;
	reset();   /* the rules go before the ACLs they use */
	acl_list_free(&acls);
	reset();
}

/* What a %[sample] gives has its control characters written %XX in rule
 * formats (HAProxy's HTTP formats); set-var-fmt keeps them, cut at NUL. */
static void test_fmt_escape(void)
{
	reset();
	RULE_OK(ACT_HTTP_REQ, "set-var-fmt(txn.raw) \"%[path,url_dec]\"");
	RULE_OK(ACT_HTTP_REQ, "set-header X-P \"%[path,url_dec]\"");
	RULE_OK(ACT_HTTP_REQ, "set-header X-Q \"%{+Q}[path,url_dec]|%[str(a\\tb)]\"");
	RULE_OK(ACT_HTTP_REQ, "set-header X-Raw-Len %[var(txn.raw),length]");
	REQ_GIVES("GET /c%0D%0AX-Inj:%20y%00z%01%7F%C3%A9%25%22 HTTP/1.1\r\n\r\n",
	          ACT_V_CONTINUE, "GET /c%0D%0AX-Inj:%20y%00z%01%7F%C3%A9%25%22 HTTP/1.1\r\n"
	          "X-P: /c%0D%0AX-Inj: y%00z%01%7F\xc3\xa9%\"\r\n"
	          "X-Q: \"/c%0D%0AX-Inj: y%00z%01%7F\xc3\xa9%\"\"|a\tb\r\n"
	          "X-Raw-Len: 12\r\n\r\n");

	reset();
	RULE_OK(ACT_HTTP_REQ, "return status 200 content-type text/plain lf-string "
	        "\"[%[path,url_dec]]\" hdr X-R \"%[path,url_dec]\"");
	REQ_GIVES("GET /r%0D%0AX:%20y%00z HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	          "X-R: /r%0D%0AX: y%00z\r\nContent-Length: 18\r\n\r\n[/r%0D%0AX: y%00z]");

	reset();
	RULE_OK(ACT_HTTP_REQ, "redirect location \"%[path,url_dec]\" code 301");
	REQ_GIVES("GET /l%0D%0A HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK(strstr(reply_text(), "\r\nLocation: /l%0D%0A\r\n") != NULL);

	/* a message quotes what was written, not the compiled format */
	REFUSED(ACT_HTTP_REQ, "set-header X %[path,nosuchconv]", "nosuchconv");
	CHECK(strstr(err, "_rule_fmt_escape") == NULL);
	reset();
}

/* 1xx, 204 and 304 replies carry no Content-Length. */
static void test_reply_no_body(void)
{
	reset();
	RULE_OK(ACT_HTTP_REQ, "return status 204 if { path /e }");
	RULE_OK(ACT_HTTP_REQ, "return status 204 hdr X-P %[path] if { path /d }");
	RULE_OK(ACT_HTTP_REQ, "return status 304 hdr X-A a if { path /n }");
	RULE_OK(ACT_HTTP_REQ, "return status 200");
	REQ_GIVES("GET /e HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 204 No Content\r\n\r\n");
	REQ_GIVES("GET /d HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 204 No Content\r\nX-P: /d\r\n\r\n");
	REQ_GIVES("GET /n HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 304 Not Modified\r\nX-A: a\r\n\r\n");
	REQ_GIVES("GET /o HTTP/1.1\r\n\r\n", ACT_V_REPLY, NULL);
	CHECK_STR(reply_text(), "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	reset();
}

/* del-header -m reg sees the lower-case name, case-sensitively, as
 * HAProxy; the other methods ignore case. */
static void test_del_header_reg(void)
{
	reset();
	RULE_OK(ACT_HTTP_REQ, "del-header ^X-.*-R$ -m reg");
	RULE_OK(ACT_HTTP_REQ, "del-header ^x-.*-q$ -m reg");
	RULE_OK(ACT_HTTP_REQ, "del-header X-BEG -m beg");
	REQ_GIVES("GET / HTTP/1.1\r\nX-a-r: 1\r\nX-A-R: 2\r\nX-A-Q: 1\r\nx-bEG-A: 2\r\n\r\n",
	          ACT_V_CONTINUE, "GET / HTTP/1.1\r\nX-a-r: 1\r\nX-A-R: 2\r\n\r\n");
	reset();
}

/* var() has no type an ACL could take its method from: -m is required. */
static void test_var_match_method(void)
{
	reset();
	REFUSED(ACT_HTTP_REQ, "deny if { var(txn.t) a }", "matching method must be specified "
	        "first (using '-m') when using a sample fetch of this type ('var')");
	REFUSED(ACT_HTTP_REQ, "deny if { str(a),set-var(txn.x) a }", "('str')");
	RULE_OK(ACT_HTTP_REQ, "deny if { var(txn.t) -m str a }");
	RULE_OK(ACT_HTTP_REQ, "deny if { var(txn.t),lower a }");
	reset();
}

int main(void)
{
	act_lf_render = test_render;
	vars_init(&vsess, VAR_SCOPE_SESS);
	vars_init(&vtxn, VAR_SCOPE_TXN);
	vars_init(&vreq, VAR_SCOPE_REQ);
	vars_init(&vres, VAR_SCOPE_RES);
	test_headers();
	test_request_line();
	test_normalize_uri();
	test_verdicts();
	test_strict_mode();
	test_replies();
	test_redirect();
	test_variables();
	test_stream_actions();
	test_wait_for_body();
	test_yield_resume();
	test_config_errors();
	test_pattern_actions();
	test_config_keywords();
	test_empty_word();
	test_cond_unusable();
	test_fmt_escape();
	test_reply_no_body();
	test_del_header_reg();
	test_var_match_method();
	prune_vars();
	proxy_drop(px);
	return t_done("test_act");
}
