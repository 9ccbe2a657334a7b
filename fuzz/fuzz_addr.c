/* libFuzzer target: addr_parse() on a NUL-terminated copy of the input.
 *
 * DNS: every call passes ADDR_O_NUMERIC, a real option of addr_parse() that
 * turns a would-be hostname into an error before getaddrinfo() is reached,
 * so the fuzzer never blocks on or talks to a resolver. Everything else
 * (prefixes, brackets, ports, UNIX/abstract paths, fd@) is exercised.
 *
 * Checked on every input, beyond the sanitizers' own checks:
 * - the result is 0 or -1; an error always leaves a message;
 * - an accepted address is coherent (kind, family, length, flags, fd);
 * - addr_full_str() of it parses back to the very same address;
 * - the printing and hashing helpers survive any buffer size.
 */
#include <assert.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <sluice/net/addr.h>

static const unsigned int fuzz_opts[] = {
	ADDR_O_NUMERIC,
	ADDR_O_NUMERIC | ADDR_O_PORT_REQUIRED,
	ADDR_O_NUMERIC | ADDR_O_PORT_OPTIONAL,
	ADDR_O_NUMERIC | ADDR_O_NO_FD | ADDR_O_NO_UNIX,
};

static void check_coherent(const struct sl_addr *a, unsigned int opts)
{
	int port = addr_port(&a->ss);

	assert(a->len <= sizeof(a->ss));
	switch (a->kind) {
	case ADDR_INET:
		assert(a->fd == -1);
		assert((a->ss.ss_family == AF_INET && a->len == sizeof(struct sockaddr_in)) ||
		       (a->ss.ss_family == AF_INET6 && a->len == sizeof(struct sockaddr_in6)));
		assert(port >= 0 && port <= 65535);
		assert(!!(a->flags & ADDR_F_NO_PORT) == (port == 0));
		assert(!((a->flags & ADDR_F_NO_PORT) && (opts & ADDR_O_PORT_REQUIRED)));
		break;
	case ADDR_UNIX:
	case ADDR_ABNS:
		assert(!(opts & ADDR_O_NO_UNIX));
		assert(a->fd == -1 && a->flags == 0 && a->ss.ss_family == AF_UNIX);
		assert(a->len > offsetof(struct sockaddr_un, sun_path) + 1);
		assert(a->len <= sizeof(struct sockaddr_un));
		assert((a->kind == ADDR_ABNS) == (((const struct sockaddr_un *)&a->ss)->sun_path[0] == '\0'));
		break;
	case ADDR_FD:
		assert(!(opts & ADDR_O_NO_FD));
		assert(a->fd >= 0 && a->len == 0 && a->ss.ss_family == AF_UNSPEC);
		break;
	default:
		assert(0);
	}
}

static void check_round_trip(const struct sl_addr *a, unsigned int opts)
{
	struct sl_addr b;
	char text[256], err[256];

	addr_full_str(a, text, sizeof(text));
	/* a missing port prints as no port, which PORT_REQUIRED would refuse */
	assert(addr_parse(text, &b, opts & ~ADDR_O_PORT_REQUIRED, err, sizeof(err)) == 0);
	assert(b.kind == a->kind && b.len == a->len && b.fd == a->fd);
	assert((b.flags & ADDR_F_NO_PORT) == (a->flags & ADDR_F_NO_PORT));
	assert(memcmp(&b.ss, &a->ss, sizeof(a->ss)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *str = malloc(size + 1);
	char err[256], small[16];
	struct sl_addr a;
	size_t i, k;
	int rc;

	memcpy(str, data, size);
	str[size] = '\0';
	for (i = 0; i < sizeof(fuzz_opts) / sizeof(fuzz_opts[0]); i++) {
		err[0] = '\0';
		rc = addr_parse(str, &a, fuzz_opts[i], err, sizeof(err));
		assert(rc == 0 || rc == -1);
		if (rc < 0) {
			assert(err[0] != '\0');
			continue;
		}
		check_coherent(&a, fuzz_opts[i]);
		check_round_trip(&a, fuzz_opts[i]);
		for (k = 0; k <= sizeof(small); k++) {
			addr_full_str(&a, small, k);
			addr_host_str(&a.ss, small, k);
		}
		(void)addr_hash_host(&a.ss);
	}
	free(str);
	return 0;
}
