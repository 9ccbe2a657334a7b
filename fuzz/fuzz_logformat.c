/* libFuzzer target: lf_compile() on a NUL-terminated copy of the input, then
 * lf_render() of what compiled.
 *
 * Checked on every input, beyond the sanitizers' own checks:
 * - lf_compile() returns 0 or -1; an error always leaves a message and an
 *   empty expression; lf_check_mode() returns 0, or -1 with a message;
 * - lf_render() of a compiled expression, with three sets of fields (an HTTP
 *   request over IPv4 with every name, captures with bytes to encode and a
 *   sample context over a parsed request; a TCP stream over IPv6 with
 *   logasap, TLS and HTTP fields that must be ignored; an HTTP stream with no
 *   request line over a unix socket, unset addresses, NULL names and no
 *   sample context), returns the length of a NUL-terminated string that
 *   fits the buffer;
 * - rendering into any smaller buffer gives a prefix of the full rendering,
 *   of length size - 1 at most (unless the format may draw random numbers:
 *   %[rand], %[uuid]).
 */
#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sluice/core/log.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include <sluice/http/h1.h>

#define FUZZ_MAX_FMT  4096
#define FUZZ_OUT      8192

static struct log_fields fields[3];

/* the line %r logs has bytes to encode; the head %[sample] reads is one
 * the HTTP/1 parser accepts */
static const char req_line[] = "POST http://h:8080/a%20b/c.php?x=1&y=\"#2\" HTTP/1.1";
static const char req_raw[] =
	"POST http://www.example.com:8080/a%20b/c.php?x=1&y=2 HTTP/1.1\r\n"
	"Host: www.example.com:8080\r\nUser-Agent: Moz \"x\" #1|{a}\r\n"
	"Cookie: SRV=s1; a=\\]\r\nContent-Length: 0\r\n\r\n";
static const char *const req_caps[] = { "www.example.com:8080", NULL, "a\"#{|}\x01\xff\\]", "" };
static const char *const res_caps[] = { NULL };
static struct http_hdr req_hdrs[8];
static struct http_msg req = { .hdrs = req_hdrs, .maxhdrs = 8 };
static struct var_store vars[VAR_SCOPES];
static struct smp_ctx ctx;

static void set_ip(struct sockaddr_storage *ss, int family, const char *ip, int port)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, ip, &sin->sin_addr);
	} else if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, ip, &sin6->sin6_addr);
	}
}

static int ops_addr(const struct smp_ctx *c, enum smp_addr_kind k, struct sockaddr_storage *out)
{
	set_ip(out, k == SMP_ADDR_CLI_SRC ? AF_INET : AF_INET6,
	       k == SMP_ADDR_CLI_SRC ? "192.0.2.1" : "2001:db8::2", 8080);
	return k != SMP_ADDR_SRV_SRC;
}

static const struct smp_ops ops = { .addr = ops_addr };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct log_fields *f = &fields[0];

	(void)argc;
	(void)argv;
	setenv("TZ", "UTC", 1);
	tzset();

	set_ip(&f->cli, AF_INET, "127.0.0.1", 56122);
	set_ip(&f->fe, AF_INET, "10.0.0.1", 80);
	set_ip(&f->be_src, AF_INET, "10.0.0.2", 40000);
	set_ip(&f->srv, AF_INET, "10.0.0.3", 8080);
	f->fe_name = "fe1";
	f->be_name = "be\"1]\\";
	f->srv_name = "srv1";
	f->hostname = "host";
	f->unique_id = "id-1";
	f->accept_us = 1795321500123456LL;
	f->Tt = 5007;
	f->bytes_out = 212;
	f->bytes_in = UINT64_MAX;
	memcpy(f->term, "--", 3);
	f->actconn = f->feconn = 1;
	f->pid = 1234;
	/* HTTP: a parsed request for %[sample], its line for %r and co */
	f->is_http = 1;
	f->status = 200;
	f->req_line = req_line;
	f->req_line_len = sizeof(req_line) - 1;
	f->Tq = 12;
	f->TR = 2;
	f->Ti = 10;
	f->Tr = 30;
	f->Ta = 40;
	f->req_caps = req_caps;
	f->nreq_caps = 4;
	f->res_caps = res_caps;
	f->nres_caps = 1;
	memcpy(f->cookie_term, "NI", 3);
	f->cookie_cli = "SRV=s1";
	f->req_counter64 = 1ULL << 40;
	assert(h1_parse_head(req_raw, sizeof(req_raw) - 1, 1, HTTP_METH_OTHER, 8192, 0,
	                     &req, NULL) == H1_OK);
	for (int i = 1; i < VAR_SCOPES; i++) {
		vars_init(&vars[i], (enum var_scope)i);
		ctx.vars[i] = &vars[i];
	}
	ctx.ops = &ops;
	ctx.req = &req;
	ctx.final = 1;
	ctx.now_us = 1795321500123456LL;     /* dates must not move between renders */
	ctx.txn_id = 7;
	f->smp = &ctx;

	f = &fields[1];
	fields[1] = fields[0];
	set_ip(&f->cli, AF_INET6, "2001:db8::1", 443);
	set_ip(&f->srv, AF_INET6, "::ffff:192.0.2.1", 65535);
	f->logasap = f->fe_ssl = f->redispatched = 1;
	f->ssl_version = "TLSv1.3";
	f->ssl_cipher = "TLS_AES_256_GCM_SHA384";
	f->Th = f->Tw = f->Tc = -1;
	f->Tt = -2147483647 - 1;
	f->retries = 2147483647;
	f->req_counter = 0xffffffffu;
	f->accept_us = -1;
	memcpy(f->term, "C", 2);
	f->is_http = 0;                          /* the HTTP fields must not show */
	f->Ti = -7;
	f->smp = NULL;

	f = &fields[2];
	memset(f, 0, sizeof(*f));
	f->cli.ss_family = AF_UNIX;
	f->fe.ss_family = AF_UNIX;
	f->listener_id = 7;
	f->fe_name = "";
	f->accept_us = 253402300799999999LL;        /* 9999-12-31T23:59:59.999999 */
	f->is_http = 1;                             /* a bad request: no line */
	f->status = 400;
	f->Ti = f->Tq = f->TR = f->Tr = -1;
	f->Ta = 2147483647;
	return 0;
}

static void check_render(const struct lf_expr *e, const struct log_fields *f, size_t cut,
                         int random)
{
	static char full[FUZZ_OUT], part[FUZZ_OUT];
	size_t n = lf_render(e, f, full, sizeof(full)), m;

	assert(n < sizeof(full) && full[n] == '\0' && strlen(full) == n);
	cut %= n + 2;                               /* 0 .. n + 1 */
	memset(part, 'Z', cut + 1 < sizeof(part) ? cut + 1 : sizeof(part));
	m = lf_render(e, f, part, cut);
	if (!cut) {
		assert(m == 0 && part[0] == 'Z');   /* nothing written at all */
		return;
	}
	assert(m <= cut - 1 && part[m] == '\0' && strlen(part) == m);
	if (random)
		return;
	assert(m == (n < cut - 1 ? n : cut - 1));
	assert(memcmp(part, full, m) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char fmt[FUZZ_MAX_FMT + 1], err[256];
	struct lf_expr e;
	int rc, random;

	if (size > FUZZ_MAX_FMT)
		size = FUZZ_MAX_FMT;
	memcpy(fmt, data, size);
	fmt[size] = '\0';

	err[0] = '\0';
	rc = lf_compile(fmt, &e, err, sizeof(err));
	assert(rc == 0 || rc == -1);
	if (rc < 0) {
		assert(err[0] != '\0');
		assert(e.nodes == NULL && e.count == 0);
		return 0;
	}
	assert(e.count >= 0 && (e.count == 0 || e.nodes));
	err[0] = '\0';
	rc = lf_check_mode(&e, 0, err, sizeof(err));
	assert(rc == 0 || (rc == -1 && err[0] != '\0'));
	assert(lf_check_mode(&e, 1, err, sizeof(err)) == 0);
	random = strstr(fmt, "rand") || strstr(fmt, "uuid");
	for (int i = 0; i < 3; i++)
		check_render(&e, &fields[i], size ? data[size / (i + 2)] * 7u + size : 0, random);
	lf_free(&e);
	assert(e.nodes == NULL && e.count == 0);
	return 0;
}
