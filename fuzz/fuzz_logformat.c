/* libFuzzer target: lf_compile() on a NUL-terminated copy of the input, then
 * lf_render() of what compiled.
 *
 * Checked on every input, beyond the sanitizers' own checks:
 * - lf_compile() returns 0 or -1; an error always leaves a message and an
 *   empty expression;
 * - lf_render() of a compiled expression, with three sets of fields (IPv4
 *   with every name set, IPv6 with logasap and TLS, unix socket and unset
 *   addresses with NULL names), returns the length of a NUL-terminated
 *   string that fits the buffer;
 * - rendering into any smaller buffer gives a prefix of the full rendering,
 *   of length size - 1 at most.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sluice/core/log.h>

#define FUZZ_MAX_FMT  4096
#define FUZZ_OUT      8192

static struct log_fields fields[3];

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

	f = &fields[2];
	memset(f, 0, sizeof(*f));
	f->cli.ss_family = AF_UNIX;
	f->fe.ss_family = AF_UNIX;
	f->listener_id = 7;
	f->fe_name = "";
	f->accept_us = 253402300799999999LL;        /* 9999-12-31T23:59:59.999999 */
	return 0;
}

static void check_render(const struct lf_expr *e, const struct log_fields *f, size_t cut)
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
	assert(m == (n < cut - 1 ? n : cut - 1));
	assert(memcmp(part, full, m) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char fmt[FUZZ_MAX_FMT + 1], err[256];
	struct lf_expr e;
	int rc;

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
	for (int i = 0; i < 3; i++)
		check_render(&e, &fields[i], size ? data[size / (i + 2)] * 7u + size : 0);
	lf_free(&e);
	assert(e.nodes == NULL && e.count == 0);
	return 0;
}
