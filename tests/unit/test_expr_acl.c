/* Unit tests of ACLs, pattern sets, conditions and maps: every match
 * method and flag, integer operators and ranges, IP networks of both
 * families, pattern and map files, the runtime edits the CLI will use,
 * predefined ACLs, and three-valued conditions. */
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/pattern.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include "t.h"

static char err[512];
static char tmpdir[] = "/tmp/sluice-acl-XXXXXX";

static struct http_hdr hdrs[] = {
	{ IST("Host"), IST("WWW.Example.com") },
	{ IST("User-Agent"), IST("Mozilla/5.0 (X11; Linux)") },
	{ IST("Cookie"), IST("JSESSIONID=abc; lang=fr") },
	{ IST("X-Forwarded-For"), IST("10.0.0.1, 192.168.7.9") },
	{ IST("Content-Length"), IST("12") },
};

static struct http_msg req;
static struct smp_ctx ctx;
static struct acl_list acls;
static const char *cli_ip = "192.168.1.10";

static int ops_addr(const struct smp_ctx *c, enum smp_addr_kind k, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	if (strchr(cli_ip, ':')) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)out;

		s->sin6_family = AF_INET6;
		inet_pton(AF_INET6, cli_ip, &s->sin6_addr);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)out;

		s->sin_family = AF_INET;
		s->sin_port = htons(k == SMP_ADDR_CLI_SRC ? 40000 : 80);
		inet_pton(AF_INET, cli_ip, &s->sin_addr);
	}
	return 1;
}

static int ops_be(const struct smp_ctx *c, const struct smp_arg *be, enum smp_be_metric m,
                  int64_t *out)
{
	*out = be && strcmp(be->text, "dynamic") == 0 ? 1 : 5;
	return 1;
}

static const struct smp_ops ops = { .addr = ops_addr, .be_metric = ops_be };

static void setup(void)
{
	req.is_request = 1;
	req.meth = HTTP_METH_POST;
	req.method = IST("POST");
	req.uri = IST("/static/img/logo.PNG?x=1&lang=en");
	req.version = IST("HTTP/1.1");
	req.hdrs = hdrs;
	req.nhdrs = (int)(sizeof(hdrs) / sizeof(hdrs[0]));
	ctx.ops = &ops;
	ctx.req = &req;
	ctx.req_body = IST("hello world!");
	ctx.req_body_complete = 1;
	acl_list_init(&acls);
	if (!mkdtemp(tmpdir))
		abort();
}

static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
	return path;
}

/* Splits <line> on spaces into words (in place). */
static int split(char *line, char **w, int max)
{
	int n = 0;

	for (char *save = NULL, *t = strtok_r(line, " ", &save); t && n < max;
	     t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	return n;
}

/* Declares "acl <line>"; returns 0 or -1 (message on stderr if <quiet> is 0). */
static int acl_line(const char *line, int quiet)
{
	char buf[1024], *w[64];
	int n;

	snprintf(buf, sizeof(buf), "%s", line);
	n = split(buf, w, 64);
	n = acl_parse(&acls, w, n, "test.cfg", 1, err, sizeof(err));
	if (n < 0 && !quiet)
		fprintf(stderr, "  acl [%s]: %s\n", line, err);
	return n;
}

/* Evaluates the condition "if|unless ...": 'P', 'F', 'M', or 'E' (error). */
static char cond(const char *line)
{
	char buf[1024], *w[64];
	int n;
	struct acl_cond *c;
	enum acl_test_res r;

	snprintf(buf, sizeof(buf), "%s", line);
	n = split(buf, w, 64);
	c = acl_cond_parse(w, n, &acls, "test.cfg", 2, err, sizeof(err));
	if (!c)
		return 'E';
	r = acl_cond_eval(c, &ctx);
	acl_cond_free(c);
	return r == ACL_TEST_PASS ? 'P' : r == ACL_TEST_MISS ? 'M' : 'F';
}

/* An anonymous ACL: "{ <words> }" as a condition. */
static char anon(const char *words)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "if { %s }", words);
	return cond(buf);
}

#define PASS(words)  CHECK(anon(words) == 'P' || (fprintf(stderr, "  { %s } does not pass %s\n", words, err), 0))
#define FAIL(words)  CHECK(anon(words) == 'F' || (fprintf(stderr, "  { %s } does not fail %s\n", words, err), 0))
#define COND(line, r) CHECK(cond(line) == (r) || (fprintf(stderr, "  [%s] != %c %s\n", line, r, err), 0))

static int refused(const char *line, const char *part)
{
	if (acl_line(line, 1) >= 0 || !strstr(err, part)) {
		fprintf(stderr, "  acl [%s]: message \"%s\" lacks \"%s\"\n", line, err, part);
		return 0;
	}
	return 1;
}

#define REFUSED(line, part) CHECK(refused(line, part))

/* ------------------------------------------------------------------ tests */

static void test_methods(void)
{
	/* str, implicit for strings; -i */
	PASS("req.hdr(host) WWW.Example.com");
	FAIL("req.hdr(host) www.example.com");
	PASS("req.hdr(host) -i www.example.com");
	FAIL("req.hdr(host) nope -i WWW.EXAMPLE.COM");      /* "-i" second: a pattern */
	FAIL("req.hdr(host) -- -i");
	PASS("str(-i) -- -i");
	/* beg, end, sub, dir, dom (ACL keywords and -m) */
	PASS("path_beg /static /images");
	FAIL("path_beg /images");
	FAIL("path_end .png -i");
	FAIL("path_end .png");
	PASS("path_end -i .png");
	PASS("path_sub img/");
	FAIL("path_sub IMG/");
	PASS("path_dir img");
	PASS("path_dir static/img");
	PASS("path_dir /static/img/");
	PASS("path_dir logo.PNG");
	FAIL("path_dir logo");
	FAIL("path_dir stat");
	PASS("hdr_dom(host) -i example");
	PASS("hdr_dom(host) Example.com");
	FAIL("hdr_dom(host) Exam");
	PASS("hdr(host) -m dom -i .www.");
	/* the manual's subdir example, as HAProxy 2.6 matches it ("png" does,
	 * although the manual says it does not) */
	PASS("str(/images/png/logo/32x32.png) -m dir png");
	FAIL("str(/images/png/logo/32x32.png) -m dir 32x32");
	PASS("str(/images/png/logo/32x32.png) -m dir logo/32x32.png");
	PASS("str(/images/png/logo/32x32.png) -m dir /png/logo");
	PASS("str(/images/png/logo/32x32.png) -m dir images/");
	PASS("str(/images/png/logo/32x32.png) -m dir /images");
	PASS("str(/images/png/logo/32x32.png) -m dir 32x32.png");
	FAIL("str(/images/png/logo/32x32.png) -m dir mages");
	/* the manual's domain example, as HAProxy 2.6 matches it */
	{
		static const struct { const char *pat; int ok; } dom[] = {
			{ "http", 1 }, { "www1", 1 }, { ".www1", 1 }, { "dc-eu", 1 },
			{ "example", 1 }, { "com", 1 }, { "80", 1 }, { "dc-eu.example", 1 },
			{ "blah", 1 }, { ":www1:", 1 }, { "dc-eu.example:80", 0 }, { "eu", 0 },
			{ "dc", 0 }, { "www1.dc", 0 }, { "ample", 0 }, { "example.com:80/blah", 1 },
			{ "/blah", 1 }, { "dc-", 0 },
		};
		char w[256];

		for (size_t i = 0; i < sizeof(dom) / sizeof(dom[0]); i++) {
			snprintf(w, sizeof(w), "str(http://www1.dc-eu.example.com:80/blah) -m dom %s",
			         dom[i].pat);
			CHECK(anon(w) == (dom[i].ok ? 'P' : 'F') ||
			      (fprintf(stderr, "  dom %s\n", dom[i].pat), 0));
		}
	}
	PASS("hdr_beg(host) -i www.");
	PASS("hdr_end(host) .com");
	PASS("hdr_sub(user-agent) Linux");
	PASS("hdr_reg(user-agent) ^Mozilla/[0-9]");
	FAIL("hdr_reg(user-agent) ^mozilla");
	PASS("hdr_reg(user-agent) -i ^mozilla");
	PASS("hdr_len(host) 15");
	PASS("hdr_len(host) 10:20");
	FAIL("hdr_len(host) 16:");
	PASS("hdr(host) -m len le 15");
	PASS("url_beg /static");
	PASS("url_reg \\?x=1");
	PASS("url_sub lang=en");
	PASS("urlp(lang) en");
	PASS("urlp_reg(x) ^1$");
	PASS("cook(lang) fr");
	PASS("req.cook(JSESSIONID) -m found");
	FAIL("req.cook(nope) -m found");
	PASS("cook_beg(JSESSIONID) ab");
	PASS("base_beg WWW.Example.com/static");
	PASS("base_end .PNG");
	/* an ACL keyword with converters: the output type decides */
	PASS("hdr_beg(host),lower www.example.com");
	FAIL("hdr_beg(host),lower www.");
	PASS("hdr_beg(host),lower -m beg www.");
	/* manual 7.1: all equivalent */
	PASS("hdr_beg(host) WWW.");
	PASS("hdr_beg(host) -m beg WWW.");
	PASS("hdr_dom(host) -m beg WWW.");
	PASS("hdr(host) -m beg WWW.");
	/* iterating over every value (hdr in ACL context) */
	PASS("req.hdr(x-forwarded-for) 10.0.0.1");
	PASS("req.hdr(x-forwarded-for) 192.168.7.9");
	FAIL("req.hdr(x-forwarded-for,1) 192.168.7.9");
	PASS("req.hdr(x-forwarded-for,-1) 192.168.7.9");
	PASS("req.hdr_ip(x-forwarded-for) 192.168.0.0/16");
	PASS("req.hdr_cnt(x-forwarded-for) 2");
	/* int, implicit for integers; operators and ranges */
	PASS("req.hdr_val(content-length) 12");
	PASS("req.hdr_val(content-length) gt 11");
	FAIL("req.hdr_val(content-length) gt 12");
	PASS("req.hdr_val(content-length) ge 12");
	PASS("req.hdr_val(content-length) lt 13");
	FAIL("req.hdr_val(content-length) lt 12");
	PASS("req.hdr_val(content-length) le 12");
	PASS("req.hdr_val(content-length) eq 5 12");
	PASS("req.hdr_val(content-length) 1:12");
	PASS("req.hdr_val(content-length) :12");
	PASS("req.hdr_val(content-length) 12:");
	FAIL("req.hdr_val(content-length) 13:");
	FAIL("req.hdr_val(content-length) 1:11 13:20");
	PASS("int(-5) lt 0");
	PASS("int(-5) -- -5");
	PASS("int(-5) -- -10:-1");
	PASS("bool(true) -m int 1");
	FAIL("bool(false) -m int 1");
	/* bool, implicit for booleans; found */
	PASS("always_true");
	FAIL("always_false");
	PASS("int(3) -m bool");
	FAIL("int(0) -m bool");
	PASS("int(0) -m found");
	PASS("str() -m found");
	FAIL("req.hdr(nope) -m found");
	PASS("str(x) -m found ignored-pattern");
	/* bin: exact binary from hex */
	PASS("req.body -m bin 68656c6c6f20776f726c6421");
	FAIL("req.body -m bin 68656c6c6f");
	PASS("req.body -m sub world");
	PASS("req.body,hex -m sub 776F726C64");
	PASS("req.body -m len 12");
	/* ip, implicit for addresses; both families (manual 7.1.6) */
	PASS("src 192.168.1.10");
	PASS("src 192.168.0.0/16");
	PASS("src 192.168.1.0/255.255.255.0");
	FAIL("src 192.168.2.0/24 10.0.0.0/8");
	PASS("src 10.0.0.0/8 192.168.1.0/24");
	PASS("src ::ffff:192.168.1.10");
	PASS("src ::ffff:192.168.0.0/112");
	FAIL("src 2001:db8::/32");
	FAIL("src 192.168.1");                  /* that is 192.168.0.1 (manual 7.1.6) */
	PASS("str(192.168.1.10) -m ip 192.168.1.10");
	PASS("int(3232235786) -m ip 192.168.1.0/24");             /* HAProxy 2.6 accepts */
	PASS("src -m beg 192.168.");
	PASS("str(1) -m bool");
	FAIL("str(0) -m bool");
	PASS("src,ipmask(24) 192.168.1.0");
	cli_ip = "::ffff:192.168.1.10";
	PASS("src 192.168.1.0/24");
	cli_ip = "2002:c0a8:10a::1";
	PASS("src 192.168.1.10");
	cli_ip = "::192.168.1.10";
	PASS("src 192.168.1.10");
	cli_ip = "2001:db8::5";
	FAIL("src 192.168.1.10");
	PASS("src 2001:db8::/32");
	PASS("src 2001:db8::5");
	FAIL("src 2001:db8::6");
	PASS("src 2001:db8::4/127");
	cli_ip = "10.1.2.3";
	FAIL("src 10.1");                        /* 10.1 is 10.0.0.1... */
	cli_ip = "10.0.0.1";
	PASS("src 10.1");                        /* ...as the manual's table says */
	PASS("src 127.0.0.0/8 10.0.0.1/32");
	cli_ip = "192.168.1.10";
	/* method, as HAProxy 2.6: a known method by its code (exact upper
	 * case), another one as a token, case-sensitive unless -i */
	PASS("method POST");
	FAIL("method post");
	FAIL("method GET HEAD");
	req.meth = HTTP_METH_OTHER;
	req.method = IST("PURGE");
	PASS("method PURGE");
	FAIL("method purge");
	PASS("method -i purge");
	FAIL("method GET");
	req.meth = HTTP_METH_POST;
	req.method = IST("POST");
	/* other fetches */
	PASS("nbsrv(dynamic) lt 2");
	FAIL("nbsrv(static) lt 2");
	PASS("req.ver 1.1");
	PASS("str(abc) -m str abc");
	PASS("int(12),mul(2) 24");
}

static void test_errors(void)
{
	REFUSED("x nope_fetch(a) 1", "unknown fetch method 'nope_fetch'");
	REFUSED("x req.hdr(host) -z foo", "'-z' is not a valid ACL option");
	REFUSED("x req.hdr(host) -m nope foo", "unknown matching method 'nope'");
	REFUSED("x req.hdr(host) -m", "'-m' expects an argument");
	REFUSED("x req.body foo", "needs a matching method: use '-m'");
	REFUSED("x ipv6(::1) -m int 1", "cannot be used with ACL keyword");   /* HAProxy 2.6 */
	REFUSED("x bool(1) -m ip 1.2.3.4", "cannot be used with ACL keyword");
	REFUSED("x src 300.1.1.1", "is not a valid IPv4 or IPv6 address");
	REFUSED("x src -n host.invalid", "is not a valid IPv4 or IPv6 address");
	REFUSED("x src 2001:db8::/129", "invalid IPv6 prefix length");
	REFUSED("x src 10.0.0.0/255.0.255.0", "invalid IPv4 mask");
	REFUSED("x int(1) abc", "'abc' is not a number");
	REFUSED("x int(1) 1:x", "is not a valid integer range");
	REFUSED("x int(1) gt x", "'x' is not a number");
	REFUSED("x req.hdr(host) -m reg (", "invalid regex '(': missing closing parenthesis");
	REFUSED("x req.body -m bin 6", "even number of hex digits");
	REFUSED("x req.body -m bin zz", "is not a hex string");
	REFUSED("x str(a) -f /nonexistent/patterns.lst", "failed to open pattern file </nonexistent/patterns.lst>");
	REFUSED("x str(a) -f a.lst -m str", "'-m' must be placed before '-f'");
	REFUSED("x str(a) -u x", "'-u' expects a positive integer");
	REFUSED("b@d str(a) a", "invalid character in ACL name");
	REFUSED("onlyname", "expects an ACL name and a criterion");
	CHECK(acl_line("nopat req.hdr(host)", 0) == 1 && strstr(err, "never match") &&
	      strstr(err, "'--'"));
	/* "--" says that no pattern is intended: no warning (HAProxy) */
	CHECK(acl_line("nopat3 src --", 0) == 0);
	CHECK(acl_line("nopat4 req.hdr(host) -i --", 0) == 0);
	CHECK(acl_line("nopat2 req.hdr(host) -m found", 0) == 0);
	COND("if nosuchacl", 'E');
	CHECK(strstr(err, "no such ACL : 'nosuchacl'") != NULL);
	COND("if", 'E');
	COND("if or TRUE", 'E');
	COND("if TRUE or", 'E');
	COND("if { always_true", 'E');
	CHECK(strstr(err, "missing closing '}'") != NULL);
	COND("if }", 'E');
	COND("if { }", 'E');
	COND("if !", 'E');
	COND("when TRUE", 'E');
	COND("if { nope_fetch }", 'E');
	CHECK(strstr(err, "unknown fetch method 'nope_fetch'") != NULL);
}

static void test_conditions(void)
{
	CHECK(acl_line("is_post method POST", 0) == 0);
	CHECK(acl_line("is_get method GET", 0) == 0);
	CHECK(acl_line("static path_beg /static", 0) == 0);
	CHECK(acl_line("static path_end .css", 0) == 0);     /* ORed with the above */
	CHECK(acl_line("css path_end .css", 0) == 0);
	CHECK(acl_find(&acls, "static") && acl_eval(acl_find(&acls, "static"), &ctx) == ACL_TEST_PASS);
	CHECK(acl_find(&acls, "css") && acl_eval(acl_find(&acls, "css"), &ctx) == ACL_TEST_FAIL);
	CHECK(acl_find(&acls, "nope") == NULL);
	COND("if is_post", 'P');
	COND("unless is_post", 'F');
	COND("if is_get", 'F');
	COND("unless is_get", 'P');
	COND("if is_post static", 'P');
	COND("if is_post css", 'F');
	COND("if is_post !css", 'P');
	COND("if ! css", 'P');
	COND("if is_get or static", 'P');
	COND("if is_get || css", 'F');
	COND("if is_get css or is_post static", 'P');
	COND("if is_get or css or !is_post", 'F');
	COND("if is_post { path_end .PNG }", 'P');
	COND("if is_post !{ path_end .PNG }", 'F');
	COND("if { nbsrv(dynamic) lt 2 } || { nbsrv(static) lt 2 }", 'P');
	COND("if !{ req.cook(SESSIONID) -m found } { req.hdr(host) -m found }", 'P');
	/* predefined ACLs (manual 7.4) */
	COND("if TRUE", 'P');
	COND("if FALSE", 'F');
	COND("if HTTP", 'P');
	COND("if HTTP_1.1", 'P');
	COND("if HTTP_1.0", 'F');
	COND("if HTTP_CONTENT", 'P');
	COND("if METH_POST", 'P');
	COND("if METH_GET", 'F');
	COND("if HTTP_URL_SLASH", 'P');
	COND("if HTTP_URL_ABS", 'F');
	COND("if HTTP_URL_STAR", 'F');
	COND("if LOCALHOST", 'F');
	COND("if REQ_CONTENT", 'M');            /* req.len 0, may grow */
	COND("if RDP_COOKIE", 'F');             /* a parsed HTTP request has no raw
	                                         * bytes: nothing to wait for */
	ctx.req = NULL;
	COND("if RDP_COOKIE", 'M');             /* raw bytes may still come */
	ctx.req = &req;
	COND("if WAIT_END", 'M');
	ctx.final = 1;
	COND("if WAIT_END", 'P');
	COND("if REQ_CONTENT", 'F');
	COND("if RDP_COOKIE", 'F');
	ctx.final = 0;
	cli_ip = "127.0.0.2";
	COND("if LOCALHOST", 'P');
	cli_ip = "::1";
	COND("if LOCALHOST", 'P');
	cli_ip = "192.168.1.10";
	req.meth = HTTP_METH_HEAD;
	COND("if METH_GET", 'P');
	req.meth = HTTP_METH_POST;
	req.uri = IST("http://h/x");
	COND("if HTTP_URL_ABS", 'P');
	req.uri = IST("*");
	COND("if HTTP_URL_STAR", 'P');
	req.uri = IST("/static/img/logo.PNG?x=1&lang=en");
	CHECK(acl_find_predefined("METH_PUT") != NULL && acl_find_predefined("nope") == NULL);
	/* a named ACL shadows a predefined one in the proxy */
	CHECK(acl_line("TRUE always_false", 0) == 0);
	COND("if TRUE", 'F');

	/* three-valued logic: a body not complete yet */
	ctx.req_body_complete = 0;
	COND("if { req.body -m sub nothere }", 'M');
	COND("if { req.body -m sub world }", 'P');
	COND("if !{ req.body -m sub nothere }", 'M');
	COND("if is_get { req.body -m sub nothere }", 'F');   /* AND: fail wins */
	COND("if is_post { req.body -m sub nothere }", 'M');
	COND("if { req.body -m sub nothere } or is_post", 'P');  /* OR: pass wins */
	COND("if { req.body -m sub nothere } or is_get", 'M');
	COND("unless { req.body -m sub nothere }", 'M');
	ctx.final = 1;
	COND("if { req.body -m sub nothere }", 'F');
	ctx.final = 0;
	ctx.req_body_complete = 1;
	/* headers not parsed yet */
	ctx.req = NULL;
	COND("if { req.hdr(host) -m found }", 'M');
	COND("if is_post", 'M');
	ctx.req = &req;

	/* what a condition needs */
	{
		char buf[] = "if is_post { res.hdr(x) -m found }";
		char *w[16];
		int n = split(buf, w, 16);
		struct acl_cond *c = acl_cond_parse(w, n, &acls, "t", 1, err, sizeof(err));

		CHECK(c && (acl_cond_use(c) & SMP_USE_HRSHV) && (acl_cond_use(c) & SMP_USE_HRQHP));
		acl_cond_free(c);
	}
}

static int collect(const struct pat_ref_elt *e, void *arg)
{
	char *out = arg;

	strcat(out, e->key);
	if (e->value) {
		strcat(out, "=");
		strcat(out, e->value);
	}
	strcat(out, ";");
	return 0;
}

static void test_files(void)
{
	char line[512], shown[1024];
	const char *p;
	struct pat_ref *ref;

	p = write_file("ua.lst", "# user agents\n\n  Mozilla/5.0 (X11; Linux)\ncurl/8\r\n #not a comment\n");
	snprintf(line, sizeof(line), "ua req.fhdr(user-agent) -f %s", p);
	CHECK(acl_line(line, 0) == 0);
	COND("if ua", 'P');
	ref = pat_ref_lookup(p);
	CHECK(ref && ref->count == 3);
	shown[0] = '\0';
	if (ref)
		pat_ref_foreach(ref, collect, shown);
	CHECK_STR(shown, "Mozilla/5.0 (X11; Linux);curl/8;#not a comment;");

	/* -i applies to the files and values after it only (manual 7.1) */
	p = write_file("hosts.lst", "www.example.com\n");
	snprintf(line, sizeof(line), "h1 req.hdr(host) -f %s", p);
	CHECK(acl_line(line, 0) == 0);
	COND("if h1", 'F');
	snprintf(line, sizeof(line), "h2 req.hdr(host) -i -f %s", p);
	CHECK(acl_line(line, 0) == 0);
	COND("if h2", 'P');
	snprintf(line, sizeof(line), "h3 req.hdr(host) -f %s -i WWW.EXAMPLE.COM", p);
	CHECK(acl_line(line, 0) == 0);
	COND("if h3", 'P');

	/* the same file under two methods: one reference, two indexes */
	p = write_file("nets.lst", "10.0.0.0/8\n192.168.1.0/24\n");
	snprintf(line, sizeof(line), "n1 src -f %s", p);
	CHECK(acl_line(line, 0) == 0);
	snprintf(line, sizeof(line), "n2 req.hdr(host) -m beg -f %s", p);
	CHECK(acl_line(line, 0) == 0);
	COND("if n1", 'P');
	COND("if n2", 'F');

	/* a bad line names the file and the line */
	p = write_file("bad.lst", "10.0.0.1\n\nnot-an-ip!\n");
	snprintf(line, sizeof(line), "bad src -n -f %s", p);
	CHECK(acl_line(line, 1) < 0 && strstr(err, "bad.lst' line 3"));

	/* -M: a map read as a pattern list (first column) */
	p = write_file("map.map", "/static  backend_static\n/api backend_api\n");
	snprintf(line, sizeof(line), "inmap path_beg -M -f %s", p);
	CHECK(acl_line(line, 0) == 0);
	COND("if inmap", 'P');
	snprintf(line, sizeof(line), "x path -f %s", p);
	CHECK(acl_line(line, 1) < 0 && strstr(err, "use -M"));

	/* runtime edits through the reference (CLI add/del acl) */
	CHECK(acl_line("dyn req.hdr(host) -u 4242 nothing", 0) == 0);
	COND("if dyn", 'F');
	ref = pat_ref_lookup("#4242");
	CHECK(ref != NULL);
	if (ref) {
		CHECK(pat_ref_add(ref, "WWW.Example.com", NULL, err, sizeof(err)) == 0);
		COND("if dyn", 'P');
		CHECK(pat_ref_delete(ref, "WWW.Example.com") == 1);
		COND("if dyn", 'F');
		CHECK(pat_ref_delete(ref, "WWW.Example.com") == 0);
		CHECK(pat_ref_add(ref, "a", NULL, err, sizeof(err)) == 0);
		pat_ref_clear(ref);
		CHECK(ref->count == 0);
		/* named after the criterion, as HAProxy's "show acl" does */
		CHECK_STR(ref->display, "acl 'req.hdr' file 'test.cfg' line 1");
	}
	REFUSED("dyn2 req.hdr(host) -u 4242 x", "unique id 4242 is already used");
	ref = pat_ref_lookup(write_file("unused", ""));
	CHECK(ref == NULL);
	/* a runtime IP pattern never resolves names */
	ref = pat_ref_lookup(p = write_file("nets.lst", ""));
	CHECK(ref != NULL);
	if (ref) {
		CHECK(pat_ref_add(ref, "localhost", NULL, err, sizeof(err)) < 0);
		CHECK(ref->count == 2);
		CHECK(pat_ref_add(ref, "192.168.1.10", NULL, err, sizeof(err)) == 0);
		CHECK(pat_ref_delete(ref, "192.168.1.0/24") == 1);
		COND("if n1", 'P');
		CHECK(pat_ref_delete(ref, "192.168.1.10") == 1);
		COND("if n1", 'F');
	}
}

static int quiet;       /* a parse error is what the test expects */

static const char *map_run(const char *expr_text)
{
	static char out[512];
	struct sample_expr *e = sample_expr_parse(expr_text, NULL, err, sizeof(err));
	struct sample s;

	if (!e) {
		if (!quiet)
			fprintf(stderr, "  [%s]: %s\n", expr_text, err);
		return "<parse error>";
	}
	memset(&s, 0, sizeof(s));
	if (!sample_expr_eval(e, &ctx, &s))
		snprintf(out, sizeof(out), "<fail>");
	else
		smp_to_text(&s, out, sizeof(out));
	sample_expr_free(e);
	return out;
}

#define MAP(expr, want) do { \
	quiet = strcmp(want, "<parse error>") == 0; \
	CHECK_STR(map_run(expr), want); \
	quiet = 0; \
} while (0)

static void test_maps(void)
{
	char e[1024];
	const char *p;
	struct pat_ref *ref;
	struct sample_expr *keep;

#define M(fmt, want) do { snprintf(e, sizeof(e), fmt, p); MAP(e, want); } while (0)
	p = write_file("str.map", "# comment\n  www.example.com   site one  \nfoo bar\nfoo second\n"
	               "10 ten\n");
	M("str(www.example.com),map(%s)", "site one");
	M("str(www.example.com),map_str(%s)", "site one");
	M("str(foo),map(%s)", "bar");                       /* first of equal keys */
	M("str(nope),map(%s)", "<fail>");
	M("str(nope),map(%s,dflt)", "dflt");
	M("req.hdr(host),lower,map(%s,none)", "site one");
	M("str(10),map_str_int(%s)", "<parse error>");      /* values must all be ints */
	CHECK(strstr(err, "str.map' line 2: unable to parse value 'site one' as an integer") != NULL);

	p = write_file("beg.map", "/ root\n/static static\n/static/img images\n/api api\n");
	M("path,map_beg(%s)", "images");                    /* longest prefix */
	M("str(/static/css/x),map_beg(%s)", "static");
	M("str(/other),map_beg(%s)", "root");
	M("str(other),map_beg(%s,none)", "none");

	p = write_file("end.map", ".png image\n.PNG upper\n.css style\n");
	M("path,map_end(%s)", "upper");
	M("path,lower,map_end(%s)", "image");
	p = write_file("sub.map", "img 1\nstatic 2\n");
	M("path,map_sub(%s)", "1");                          /* first in file order */
	M("path,map_sub_int(%s),add(1)", "2");
	p = write_file("dir.map", "logo 1\nimg 2\n");
	M("path,map_dir(%s)", "2");
	p = write_file("dom.map", "example 1\nwww 2\n");
	M("req.hdr(host),lower,map_dom(%s)", "1");
	p = write_file("reg.map", "^/api/ api\n^/static/(img)/(.*)$ \\2-\\1\n");
	M("path,map_reg(%s)", "\\2-\\1");
	M("path,map_regm(%s)", "logo.PNG-img");
	M("str(/api/v1),map_regm(%s)", "api");
	p = write_file("int.map", "1:99 small\n100: big\n-5 neg\n");
	M("int(42),map_int(%s)", "small");
	M("int(4200),map_int(%s)", "big");
	M("int(-5),map_int(%s)", "neg");
	M("int(-6),map_int(%s,x)", "x");
	M("str(150),map_int(%s)", "big");                   /* cast to integer */
	p = write_file("ip.map", "10.0.0.0/8 lan\n10.1.0.0/16 lan1\n2001:db8::/32 v6\n"
	               "0.0.0.0/0 any\n");
	M("src,map_ip(%s)", "any");
	M("str(10.1.2.3),map_ip(%s)", "lan1");              /* longest prefix */
	M("str(10.2.2.3),map_ip(%s)", "lan");
	M("str(2001:db8::1),map_ip(%s)", "v6");
	M("str(::ffff:10.1.0.1),map_ip(%s)", "lan1");
	M("str(2002::1),map_ip(%s,none)", "any");           /* 2002:0000:0001:: holds 0.0.0.1 */
	M("str(2003::1),map_ip(%s,none)", "none");
	p = write_file("ipval.map", "a 10.0.0.1\nb 2001:db8::2\nc 7\n");
	M("str(a),map_str_ip(%s),ipmask(8)", "<parse error>");
	M("str(b),map_str_ip(%s)", "<parse error>");
	p = write_file("ipval2.map", "a 10.0.0.1\nb 2001:db8::2\n");
	M("str(b),map_str_ip(%s)", "2001:db8::2");
	M("str(z),map_str_ip(%s,192.0.2.1)", "192.0.2.1");
	M("str(z),map_str_ip(%s,notip)", "<parse error>");
	p = write_file("intval.map", "a 5\n");
	M("str(a),map_str_int(%s),mul(2)", "10");
	M("str(z),map_str_int(%s,7)", "7");
	M("str(z),map_str_int(%s,x)", "<parse error>");
	M("int(1),map_int_int(%s)", "<parse error>");      /* key "a" */
	CHECK(strstr(err, "'a' is not a number") != NULL);

	/* runtime edits (CLI add/del/set map), visible to every index */
	p = write_file("rt.map", "k1 v1\n");
	M("str(k1),map(%s)", "v1");
	ref = pat_ref_lookup(p);
	CHECK(ref == NULL);                 /* freed with its last user */
	snprintf(e, sizeof(e), "str(k1),map_beg(%s)", p);
	keep = sample_expr_parse(e, NULL, err, sizeof(err));
	M("str(k1),map_beg(%s)", "v1");
	ref = pat_ref_lookup(p);
	CHECK(ref && (ref->flags & PAT_REF_MAP));
	if (ref) {
		CHECK(pat_ref_add(ref, "k2", "v2", err, sizeof(err)) == 0);
		CHECK(pat_ref_add(ref, "k3", NULL, err, sizeof(err)) < 0);
		M("str(k2),map(%s)", "v2");
		M("str(k2xx),map_beg(%s)", "v2");
		CHECK(pat_ref_set(ref, "k1", "changed", err, sizeof(err)) == 1);
		M("str(k1),map(%s)", "changed");
		M("str(k1),map_beg(%s)", "changed");
		CHECK(pat_ref_delete(ref, "k1") == 1);
		M("str(k1),map(%s,gone)", "gone");
		M("str(k1),map_beg(%s,gone)", "gone");
		/* a value that does not fit one index is refused as a whole */
		M("str(k2),map_str_int(%s,0)", "<parse error>");
		CHECK(pat_ref_set(ref, "k2", "v3", err, sizeof(err)) == 1);
		M("str(k2),map(%s)", "v3");
	}
	sample_expr_free(keep);
	p = write_file("rtint.map", "k 1\n");
	M("str(k),map_str_int(%s)", "1");
	ref = pat_ref_lookup(p);
	snprintf(e, sizeof(e), "str(k),map_str_int(%s)", p);
	keep = sample_expr_parse(e, NULL, err, sizeof(err));  /* keeps the index alive */
	CHECK(keep != NULL);
	if (ref) {
		CHECK(pat_ref_set(ref, "k", "x", err, sizeof(err)) < 0);
		CHECK(pat_ref_add(ref, "j", "y", err, sizeof(err)) < 0);
		CHECK(ref->count == 1);
		CHECK(pat_ref_set(ref, "k", "41", err, sizeof(err)) == 1);
		M("str(k),map_str_int(%s),add(1)", "42");
		/* commit map: the whole set at once; a value that does not fit
		 * an index refuses it all and leaves the old entries */
		{
			const char *keys[] = { "a", "b" }, *vals[] = { "1", "2" };
			const char *bad_vals[] = { "3", "x" };

			CHECK(pat_ref_replace(ref, 2, keys, vals, err, sizeof(err)) == 0);
			CHECK(ref->count == 2);
			M("str(k),map_str_int(%s,0)", "0");
			M("str(b),map_str_int(%s)", "2");
			CHECK(pat_ref_replace(ref, 2, keys, bad_vals, err, sizeof(err)) < 0);
			CHECK(ref->count == 2);
			M("str(a),map_str_int(%s)", "1");
			M("str(b),map_str_int(%s)", "2");
			CHECK(pat_ref_replace(ref, 0, keys, vals, err, sizeof(err)) == 0);
			CHECK(ref->count == 0);
			M("str(a),map_str_int(%s,0)", "0");
		}
	}
	sample_expr_free(keep);
#undef M
	/* many entries: the hash grows */
	{
		char *text = malloc(20000 * 16), *q = text;

		for (int i = 0; i < 20000; i++)
			q += sprintf(q, "key%d %d\n", i, i);
		p = write_file("big.map", text);
		free(text);
		snprintf(e, sizeof(e), "str(key12345),map_str_int(%s)", p);
		MAP(e, "12345");
		snprintf(e, sizeof(e), "str(key19999),map(%s)", p);
		MAP(e, "19999");
		snprintf(e, sizeof(e), "str(key),map_beg(%s,x)", p);
		MAP(e, "x");
		snprintf(e, sizeof(e), "str(key1999999),map_beg(%s,x)", p);
		MAP(e, "19999");                    /* longest: key19999 */
	}
}

static void test_pattern_api(void)
{
	CHECK(pat_match_by_name("dom") == PAT_MATCH_DOM && pat_match_by_name("x") == -1);
	CHECK(strcmp(pat_match_name(PAT_MATCH_REG), "reg") == 0);
	CHECK(pat_match_default(SMP_T_BIN) == -1);
	CHECK(pat_match_default(SMP_T_IPV6) == PAT_MATCH_IP);
	CHECK(pat_match_accepts(PAT_MATCH_IP, SMP_T_STR) && pat_match_accepts(PAT_MATCH_IP, SMP_T_SINT));
	CHECK(!pat_match_accepts(PAT_MATCH_INT, SMP_T_IPV6) && !pat_match_accepts(PAT_MATCH_IP, SMP_T_BOOL));
	CHECK(pat_match_accepts(PAT_MATCH_SUB, SMP_T_BIN) && !pat_match_accepts(PAT_MATCH_INT, SMP_T_BIN));
	CHECK(pat_check(PAT_MATCH_IP, 0, SMP_T_ANY, "10.0.0.0/8", NULL, err, sizeof(err)) == 0);
	CHECK(pat_check(PAT_MATCH_IP, 0, SMP_T_ANY, "localhost", NULL, err, sizeof(err)) < 0);
	CHECK(pat_check(PAT_MATCH_INT, 0, SMP_T_SINT, "1:2", "3", err, sizeof(err)) == 0);
	CHECK(pat_check(PAT_MATCH_STR, 0, SMP_T_SINT, "a", "b", err, sizeof(err)) < 0);
	{
		char k[32];

		CHECK(pat_int_op_key(PAT_OP_GT, "5", k, sizeof(k), err, sizeof(err)) == 0 &&
		      strcmp(k, "6:") == 0);
		CHECK(pat_int_op_key(PAT_OP_LT, "5", k, sizeof(k), err, sizeof(err)) == 0 &&
		      strcmp(k, ":4") == 0);
		CHECK(pat_int_op_key(PAT_OP_GT, "9223372036854775807", k, sizeof(k), err,
		                     sizeof(err)) < 0);
		CHECK(pat_int_op_by_name("ge") == PAT_OP_GE && pat_int_op_by_name("x") == PAT_OP_NONE);
	}
	/* an index built directly, with many prefixes */
	{
		struct pat_ref *r = pat_ref_new(NULL, "api test", -1, 0, err, sizeof(err));
		struct pat_expr *x = r ? pat_expr_get(r, PAT_MATCH_BEG, PAT_F_ICASE, SMP_T_ANY, err,
		                                      sizeof(err)) : NULL;
		struct sample s;

		CHECK(x != NULL);
		if (x) {
			CHECK(pat_ref_append(r, "/A", NULL, 0, 1, err, sizeof(err)) == 0);
			CHECK(pat_ref_append(r, "/a/b", NULL, 0, 1, err, sizeof(err)) == 0);
			CHECK(pat_expr_count(x) == 2);
			memset(&s, 0, sizeof(s));
			smp_set_const_str(&s, SMP_T_STR, "/a/B/c", 6);
			CHECK(pat_expr_match(x, &s, NULL, 0) == 1);
			smp_set_const_str(&s, SMP_T_STR, "/", 1);
			CHECK(pat_expr_match(x, &s, NULL, 0) == 0);
			CHECK(pat_ref_delete(r, "/A") == 1);
			smp_set_const_str(&s, SMP_T_STR, "/a/x", 4);
			CHECK(pat_expr_match(x, &s, NULL, 0) == 0);
			smp_set_const_str(&s, SMP_T_STR, "/A/b", 4);
			CHECK(pat_expr_match(x, &s, NULL, 0) == 1);
			pat_expr_put(x);
		}
	}
}

/* Readers on four threads while the "CLI" adds and deletes entries: every
 * lookup sees either the old or the new state, never a torn one (run it
 * under ASan/TSan to see the locking at work). */
struct reader_arg {
	struct sample_expr *expr;
	int stop;
	long lookups, bad;
};

static void *reader(void *p)
{
	struct reader_arg *a = p;
	struct smp_ctx c = { 0 };

	while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
		struct sample s;

		memset(&s, 0, sizeof(s));
		if (!sample_expr_eval(a->expr, &c, &s) || s.type != SMP_T_STR ||
		    !(s.data.str.len == 4 && (memcmp(s.data.str.ptr, "miss", 4) == 0 ||
		                              memcmp(s.data.str.ptr, "val1", 4) == 0)))
			__atomic_fetch_add(&a->bad, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&a->lookups, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_concurrency(void)
{
	const char *p = write_file("conc.map", "other x\n");
	char e[512];
	struct reader_arg a = { 0 };
	pthread_t th[4];
	struct pat_ref *ref;

	snprintf(e, sizeof(e), "str(key1),map(%s,miss)", p);
	a.expr = sample_expr_parse(e, NULL, err, sizeof(err));
	ref = pat_ref_lookup(p);
	CHECK(a.expr && ref);
	if (!a.expr || !ref)
		return;
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, reader, &a);
	for (int i = 0; i < 2000; i++) {
		char k[32];

		/* let the readers in now and then: the lock prefers writers, and
		 * a writer looping without pause would starve them (the CLI
		 * does not) */
		if (i % 50 == 0) {
			long seen = __atomic_load_n(&a.lookups, __ATOMIC_RELAXED);

			while (__atomic_load_n(&a.lookups, __ATOMIC_RELAXED) < seen + 20)
				sched_yield();
		}
		snprintf(k, sizeof(k), "filler%d", i);
		pat_ref_add(ref, "key1", "val1", err, sizeof(err));
		pat_ref_add(ref, k, "y", err, sizeof(err));
		pat_ref_delete(ref, "key1");
		if (i % 100 == 0)
			pat_ref_clear(ref);
	}
	__atomic_store_n(&a.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK((a.lookups > 0 && a.bad == 0) || (fprintf(stderr, "  lookups %ld bad %ld\n", a.lookups, a.bad), 0));
	sample_expr_free(a.expr);
}

/* What the CLI's map/acl commands use: entries named by address, lookups
 * that report the matching entry, the list of indexes, and unique ids
 * given up to a later -u as HAProxy numbers them. */
struct found {
	const char *key;
	char value[64];
	enum smp_type type;
	int calls;
};

static void on_found(const struct pat_ref_elt *elt, const struct sample *v, void *arg)
{
	struct found *f = arg;

	f->calls++;
	f->key = elt->key;
	f->type = v ? v->type : SMP_T_ANY;
	f->value[0] = '\0';
	if (v)
		smp_to_text(v, f->value, sizeof(f->value));
}

static int lookup(struct pat_expr *x, const char *text, struct found *f)
{
	struct sample s;

	memset(f, 0, sizeof(*f));
	memset(&s, 0, sizeof(s));
	smp_set_const_str(&s, SMP_T_STR, text, strlen(text));
	return pat_expr_lookup(x, &s, on_found, f);
}

static int count_expr(struct pat_expr *x, void *arg)
{
	struct pat_expr **seen = arg;

	while (*seen)
		seen++;
	*seen = x;
	return 0;
}

static const void *elt_id;
static int find_elt(const struct pat_ref_elt *e, void *arg)
{
	if (strcmp(e->key, arg) != 0)
		return 0;
	elt_id = e;
	return 1;
}

static void test_cli_api(void)
{
	const char *p = write_file("cli.map", "abc 1\nab 2\n");
	struct pat_ref *ref = map_ref_get(p, err, sizeof(err));
	struct pat_expr *x1, *x2, *x3, *seen[4] = { NULL };
	struct found f;

	CHECK(ref != NULL);
	if (!ref)
		return;
	x1 = pat_expr_get(ref, PAT_MATCH_STR, 0, SMP_T_STR, err, sizeof(err));
	x2 = pat_expr_get(ref, PAT_MATCH_BEG, 0, SMP_T_SINT, err, sizeof(err));
	x3 = pat_expr_get(ref, PAT_MATCH_SUB, 0, SMP_T_ANY, err, sizeof(err));
	CHECK(x1 && x2 && x3);
	if (!x1 || !x2 || !x3)
		return;
	pat_ref_foreach_expr(ref, count_expr, seen);
	CHECK(seen[0] == x1 && seen[1] == x2 && seen[2] == x3);
	CHECK(pat_expr_indexed(x1) && pat_expr_indexed(x2) && !pat_expr_indexed(x3));
	CHECK(pat_ref_entries(ref) == 2);

	CHECK(lookup(x1, "abc", &f) == 1 && f.calls == 1);
	CHECK_STR(f.key, "abc");
	CHECK_STR(f.value, "1");
	CHECK(f.type == SMP_T_STR);
	CHECK(lookup(x2, "abx", &f) == 1 && f.type == SMP_T_SINT);
	CHECK_STR(f.key, "ab");
	CHECK_STR(f.value, "2");
	CHECK(lookup(x3, "zabcz", &f) == 1 && f.type == SMP_T_ANY);   /* no value */
	CHECK_STR(f.key, "abc");
	CHECK(lookup(x1, "zz", &f) == 0 && f.calls == 0);

	/* one entry by its address */
	elt_id = NULL;
	pat_ref_foreach(ref, find_elt, "ab");
	CHECK(elt_id != NULL);
	CHECK(pat_ref_set_elt(ref, elt_id, "7", err, sizeof(err)) == 1);
	CHECK(lookup(x2, "abx", &f) == 1);
	CHECK_STR(f.value, "7");
	CHECK(pat_ref_set_elt(ref, elt_id, "seven", err, sizeof(err)) < 0);  /* x2 wants ints */
	CHECK(lookup(x1, "ab", &f) == 1);
	CHECK_STR(f.value, "7");
	CHECK(pat_ref_set_elt(ref, (const void *)0x1234, "5", err, sizeof(err)) == 0);
	CHECK(pat_ref_delete_elt(ref, (const void *)0x1234) == 0);
	CHECK(pat_ref_delete_elt(ref, elt_id) == 1);
	CHECK(pat_ref_delete_elt(ref, elt_id) == 0);
	CHECK(pat_ref_entries(ref) == 1);
	CHECK(lookup(x2, "abx", &f) == 0);
	/* equal keys: one goes, the other stays */
	CHECK(pat_ref_add(ref, "abc", "9", err, sizeof(err)) == 0);
	elt_id = NULL;
	pat_ref_foreach(ref, find_elt, "abc");
	CHECK(pat_ref_delete_elt(ref, elt_id) == 1);
	CHECK(lookup(x1, "abc", &f) == 1);
	CHECK_STR(f.value, "9");
	/* cleared indexes stay usable */
	pat_ref_clear(ref);
	CHECK(pat_ref_entries(ref) == 0 && pat_expr_count(x1) == 0 && pat_expr_count(x2) == 0);
	CHECK(lookup(x1, "abc", &f) == 0 && lookup(x2, "abc", &f) == 0);
	CHECK(pat_ref_add(ref, "q", "3", err, sizeof(err)) == 0);
	CHECK(lookup(x1, "q", &f) == 1 && lookup(x2, "qq", &f) == 1 && lookup(x3, "aqa", &f) == 1);
	pat_expr_put(x1);
	pat_expr_put(x2);
	pat_expr_put(x3);
	CHECK(pat_ref_lookup(p) == NULL);
}

/* What "show acl" lists for inline patterns: "acl '<kw>' file ... line N"
 * where <kw> is the criterion, as HAProxy 2.6 names it (checked against
 * its "show acl"): the ACL keyword as written, or the fetch it stands for
 * when converters follow it. */
static void test_descriptions(void)
{
	static const struct { const char *line; const char *kw; } tab[] = {
		{ "d1 src -u 9001 1.2.3.4", "src" },
		{ "d2 hdr_beg(host) -u 9002 x", "hdr_beg" },
		{ "d3 hdr_beg(host),lower -u 9003 x", "req.hdr" },
		{ "d4 hdr(host),lower -u 9004 x", "req.hdr" },
		{ "d5 urlp_reg(x),lower -u 9005 x", "urlp" },
		{ "d6 path_end,lower -u 9006 x", "path" },
		{ "d7 cook_sub(a),lower -u 9007 x", "req.cook" },
		{ "d8 shdr_end(a) -u 9008 x", "shdr_end" },
		{ "d9 src,ipmask(8) -u 9009 10.0.0.0", "src" },
		{ "d10 url_param(a) -u 9010 x", "url_param" },
		{ "d11 base_reg,lower -u 9011 x", "base" },
	};
	char want[256], buf[128], *w[16];
	struct acl_cond *c;
	struct pat_ref *ref;

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		CHECK(acl_line(tab[i].line, 0) == 0);
		ref = pat_ref_lookup_id(9001 + (int)i);
		snprintf(want, sizeof(want), "acl '%s' file 'test.cfg' line 1", tab[i].kw);
		CHECK(ref != NULL);
		if (ref)
			CHECK_STR(ref->display, want);
	}
	/* anonymous ACLs too */
	snprintf(buf, sizeof(buf), "if { path_end,lower -u 9100 x } || { hdr_sub(x) -u 9101 y }");
	c = acl_cond_parse(w, split(buf, w, 16), &acls, "test.cfg", 7, err, sizeof(err));
	CHECK(c != NULL);
	ref = pat_ref_lookup_id(9100);
	CHECK(ref && strcmp(ref->display, "acl 'path' file 'test.cfg' line 7") == 0);
	ref = pat_ref_lookup_id(9101);
	CHECK(ref && strcmp(ref->display, "acl 'hdr_sub' file 'test.cfg' line 7") == 0);
	acl_cond_free(c);
}

static void test_unique_ids(void)
{
	struct pat_ref *a = pat_ref_new(NULL, "a", -1, PAT_REF_ACL, err, sizeof(err));
	struct pat_ref *b = pat_ref_new(NULL, "b", -1, PAT_REF_ACL, err, sizeof(err));
	struct pat_ref *c, *d;
	int ida, idb;

	CHECK(a && b);
	if (!a || !b)
		return;
	ida = a->unique_id;
	idb = b->unique_id;
	CHECK(ida < idb);
	/* a -u claims an allocated id: the allocated ones move, in order */
	c = pat_ref_new(NULL, "c", ida, PAT_REF_ACL, err, sizeof(err));
	CHECK(c && c->unique_id == ida);
	CHECK(a->unique_id != ida && b->unique_id != ida && a->unique_id < b->unique_id);
	CHECK(pat_ref_lookup_id(ida) == c && pat_ref_lookup_id(a->unique_id) == a);
	/* but not an id another -u holds */
	CHECK(pat_ref_new(NULL, "d", ida, PAT_REF_ACL, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "already used") != NULL);
	d = pat_ref_new(NULL, "d", -1, PAT_REF_ACL, err, sizeof(err));
	CHECK(d && d->unique_id > b->unique_id);
	pat_ref_release(a);
	pat_ref_release(b);
	pat_ref_release(c);
	pat_ref_release(d);
}

/* Clearing a large reference must not walk an index per entry. */
static void test_clear_big(void)
{
	char *text = malloc(100000 * 16), *q = text, e[512];
	struct pat_ref *ref;
	struct pat_expr *x1, *x2;
	struct timespec t0, t1;
	const char *p;

	for (int i = 0; i < 100000; i++)
		q += sprintf(q, "key%d %d\n", i, i);
	p = write_file("clear.map", text);
	free(text);
	ref = map_ref_get(p, e, sizeof(e));
	CHECK(ref != NULL);
	if (!ref)
		return;
	x1 = pat_expr_get(ref, PAT_MATCH_STR, 0, SMP_T_STR, err, sizeof(err));
	x2 = pat_expr_get(ref, PAT_MATCH_END, 0, SMP_T_STR, err, sizeof(err));
	CHECK(x1 && x2 && pat_expr_count(x2) == 100000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pat_ref_clear(ref);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(pat_ref_entries(ref) == 0 && pat_expr_count(x1) == 0 && pat_expr_count(x2) == 0);
	CHECK(t1.tv_sec - t0.tv_sec < 2);
	pat_expr_put(x1);
	pat_expr_put(x2);
}

/* The "method" match as HAProxy 2.6 does it (checked against it with
 * GET/get/POST/post/PATCH/patch/PURGE/purge requests): a pattern naming one
 * of its eight known methods, spelt exactly, matches that method's code;
 * any other pattern is a token compared with the request's, with case
 * unless -i. PATCH is no known method there. */
static void test_method_match(void)
{
	static const struct {
		enum http_meth meth;
		const char *token;
		const char *pass, *fail;    /* ';'-separated patterns */
	} tab[] = {
		{ HTTP_METH_GET,   "GET",   "GET;GET HEAD;-i GET", "get;-i get;POST" },
		{ HTTP_METH_OTHER, "get",   "get;-i get", "GET;GET HEAD;-i GET" },
		{ HTTP_METH_POST,  "POST",  "POST", "post;-i post" },
		{ HTTP_METH_PATCH, "PATCH", "PATCH;-i patch", "patch" },
		{ HTTP_METH_OTHER, "patch", "patch;-i patch;-i PATCH", "PATCH" },
		{ HTTP_METH_OTHER, "PURGE", "PURGE;-i purge", "purge;GET;-i PURGEX" },
		{ HTTP_METH_OTHER, "purge", "purge;-i PURGE", "PURGE" },
	};
	char list[128], words[160];

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		req.meth = tab[i].meth;
		req.method = (struct ist){ tab[i].token, strlen(tab[i].token) };
		for (int want = 1; want >= 0; want--) {
			snprintf(list, sizeof(list), "%s", want ? tab[i].pass : tab[i].fail);
			for (char *save = NULL, *w = strtok_r(list, ";", &save); w;
			     w = strtok_r(NULL, ";", &save)) {
				int failed = t_failed;

				snprintf(words, sizeof(words), "method %s", w);
				if (want)
					PASS(words);
				else
					FAIL(words);
				if (t_failed != failed)
					fprintf(stderr, "  (request method %s)\n", tab[i].token);
			}
		}
	}
	req.meth = HTTP_METH_POST;
	req.method = IST("POST");
}

int main(void)
{
	setup();
	test_methods();
	test_method_match();
	test_errors();
	test_conditions();
	test_files();
	test_maps();
	test_pattern_api();
	test_cli_api();
	test_descriptions();
	test_unique_ids();
	test_clear_big();
	test_concurrency();
	acl_list_free(&acls);
	pat_refs_free_all();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return t_done("test_expr_acl");
}
