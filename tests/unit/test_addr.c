/* addr_parse() and friends: every accepted form, every refusal, printing and
 * reading back, hashing. No network: only "localhost" is resolved. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <sluice/net/addr.h>
#include "t.h"

static char err[256];

/* Parses <str> and compares with the expected INET result; reports why. */
static int inet_is(const char *str, unsigned int opts, int family, const char *host,
                   int port, unsigned int flags)
{
	struct sl_addr a;
	char h[INET6_ADDRSTRLEN];

	if (addr_parse(str, &a, opts, err, sizeof(err)) != 0) {
		fprintf(stderr, "  '%s': unexpected error: %s\n", str, err);
		return 0;
	}
	addr_host_str(&a.ss, h, sizeof(h));
	if (a.kind != ADDR_INET || a.ss.ss_family != family || strcmp(h, host) != 0 ||
	    addr_port(&a.ss) != port || a.flags != flags || a.fd != -1 ||
	    a.len != (family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6))) {
		fprintf(stderr, "  '%s': got kind %d family %d host %s port %d flags %#x len %u\n",
		        str, a.kind, a.ss.ss_family, h, addr_port(&a.ss), a.flags, (unsigned)a.len);
		return 0;
	}
	return 1;
}

/* Expects a refusal whose message contains <needle> (and names the input). */
static int refused(const char *str, unsigned int opts, const char *needle)
{
	struct sl_addr a;

	err[0] = '\0';
	if (addr_parse(str, &a, opts, err, sizeof(err)) != -1) {
		fprintf(stderr, "  '%s': accepted, expected an error\n", str ? str : "(null)");
		return 0;
	}
	if (!err[0] || (needle && !strstr(err, needle)) || (str && *str && !strstr(err, str))) {
		fprintf(stderr, "  '%s': message \"%s\" lacks \"%s\" or the input\n",
		        str ? str : "(null)", err, needle ? needle : "");
		return 0;
	}
	return 1;
}

static void test_inet_forms(void)
{
	CHECK(inet_is("1.2.3.4:80", 0, AF_INET, "1.2.3.4", 80, 0));
	CHECK(inet_is("255.255.255.255:65535", 0, AF_INET, "255.255.255.255", 65535, 0));
	CHECK(inet_is("0.0.0.0:1", 0, AF_INET, "0.0.0.0", 1, 0));
	CHECK(inet_is("[::1]:8080", 0, AF_INET6, "::1", 8080, 0));
	CHECK(inet_is("[2001:db8::1]:443", 0, AF_INET6, "2001:db8::1", 443, 0));
	CHECK(inet_is("[::ffff:1.2.3.4]:80", 0, AF_INET6, "::ffff:1.2.3.4", 80, 0));
	/* bare IPv6: the port follows the last colon */
	CHECK(inet_is("::1:8080", 0, AF_INET6, "::1", 8080, 0));
	CHECK(inet_is(":::80", 0, AF_INET6, "::", 80, 0));
	CHECK(inet_is("2001:db8::1:443", 0, AF_INET6, "2001:db8::1", 443, 0));
	CHECK(inet_is("fe80::1:2:3", 0, AF_INET6, "fe80::1:2", 3, 0));
	/* any address */
	CHECK(inet_is(":80", 0, AF_INET, "0.0.0.0", 80, ADDR_F_ANY));
	CHECK(inet_is("*:80", 0, AF_INET, "0.0.0.0", 80, ADDR_F_ANY));
	CHECK(inet_is("*", 0, AF_INET, "0.0.0.0", 0, ADDR_F_ANY | ADDR_F_NO_PORT));
}

static void test_family_prefixes(void)
{
	CHECK(inet_is("ipv4@1.2.3.4:1", 0, AF_INET, "1.2.3.4", 1, 0));
	CHECK(inet_is("ipv4@:80", 0, AF_INET, "0.0.0.0", 80, ADDR_F_ANY));
	CHECK(inet_is("ipv4@*:80", 0, AF_INET, "0.0.0.0", 80, ADDR_F_ANY));
	CHECK(inet_is("ipv6@:80", 0, AF_INET6, "::", 80, ADDR_F_ANY));
	CHECK(inet_is("ipv6@*:443", 0, AF_INET6, "::", 443, ADDR_F_ANY));
	CHECK(inet_is("ipv6@::1:65535", 0, AF_INET6, "::1", 65535, 0));
	CHECK(inet_is("ipv6@[::1]:1", 0, AF_INET6, "::1", 1, 0));
	CHECK(inet_is("tcp4@10.0.0.1:22", 0, AF_INET, "10.0.0.1", 22, 0));
	CHECK(inet_is("tcp6@[::2]:22", 0, AF_INET6, "::2", 22, 0));
	CHECK(inet_is("ip@10.0.0.1:22", 0, AF_INET, "10.0.0.1", 22, 0));
	CHECK(inet_is("tcp@[::2]:22", 0, AF_INET6, "::2", 22, 0));
	CHECK(inet_is("tcp@:22", 0, AF_INET, "0.0.0.0", 22, ADDR_F_ANY));

	CHECK(refused("ipv6@1.2.3.4:80", 0, "requires IPv6"));
	CHECK(refused("ipv4@::1:80", 0, "requires IPv4"));
	CHECK(refused("ipv4@[::1]:80", 0, "ipv4@"));
	CHECK(refused("ipv4@", 0, "missing address"));
	CHECK(refused("ipv6@", 0, "missing address"));
}

static void test_ports(void)
{
	/* no port: allowed unless required, flagged */
	CHECK(inet_is("1.2.3.4", 0, AF_INET, "1.2.3.4", 0, ADDR_F_NO_PORT));
	CHECK(inet_is("1.2.3.4", ADDR_O_PORT_OPTIONAL, AF_INET, "1.2.3.4", 0, ADDR_F_NO_PORT));
	CHECK(inet_is("[::1]", ADDR_O_PORT_OPTIONAL, AF_INET6, "::1", 0, ADDR_F_NO_PORT));
	CHECK(refused("1.2.3.4", ADDR_O_PORT_REQUIRED, "missing port"));
	CHECK(refused("[::1]", ADDR_O_PORT_REQUIRED, "missing port"));
	CHECK(refused("*", ADDR_O_PORT_REQUIRED, "missing port"));
	/* port 0 means "no port" only where a port is optional */
	CHECK(inet_is("1.2.3.4:0", ADDR_O_PORT_OPTIONAL, AF_INET, "1.2.3.4", 0, ADDR_F_NO_PORT));
	CHECK(refused("1.2.3.4:0", 0, "port 0"));
	CHECK(refused("1.2.3.4:0", ADDR_O_PORT_REQUIRED, "port 0"));
	CHECK(inet_is("1.2.3.4:080", 0, AF_INET, "1.2.3.4", 80, 0));

	CHECK(refused("1.2.3.4:", 0, "missing port"));
	CHECK(refused("[::1]:", 0, "missing port"));
	CHECK(refused("1.2.3.4:65536", 0, "out of range"));
	CHECK(refused("1.2.3.4:99999999999999999999", 0, "out of range"));
	CHECK(refused("1.2.3.4:80x", 0, "invalid port"));
	CHECK(refused("1.2.3.4:http", 0, "invalid port"));
	CHECK(refused("1.2.3.4: 80", 0, "invalid port"));
	CHECK(refused("1.2.3.4:80-90", 0, "port ranges"));
	CHECK(refused(":80-90", 0, "not supported"));
	CHECK(refused("1.2.3.4:+1", 0, "port offsets"));
	CHECK(refused("1.2.3.4:-1", 0, "port offsets"));
}

static void test_bad_hosts(void)
{
	CHECK(refused("", 0, "empty"));
	CHECK(refused(NULL, 0, "empty"));
	CHECK(refused("[::1", 0, "missing ']'"));
	CHECK(refused("[::1:80", 0, "missing ']'"));
	CHECK(refused("[::1]x", 0, "after ']'"));
	CHECK(refused("[::1]80", 0, "after ']'"));
	CHECK(refused("[]:80", 0, "empty address"));
	CHECK(refused("[1.2.3.4]:80", 0, "invalid IPv6"));
	CHECK(refused("[::g]:80", 0, "invalid IPv6"));
	CHECK(refused("1.2.3:80", 0, "invalid IPv4"));
	CHECK(refused("1.2.3.4.5:80", 0, "invalid IPv4"));
	CHECK(refused("256.1.1.1:80", 0, "invalid IPv4"));
	CHECK(refused("127.1:80", 0, "invalid IPv4"));
	CHECK(refused("1.2.3.4x:80", ADDR_O_NUMERIC, NULL));
	CHECK(refused("::1", 0, "[addr]"));          /* host ':' port 1 */
	CHECK(refused("1:2:3", 0, "invalid IPv6"));
	CHECK(refused("host name:80", 0, "invalid address"));
	CHECK(refused("-host:80", 0, "invalid address"));
	CHECK(refused("ho$t:80", 0, "invalid address"));
	CHECK(refused("example.org:80", ADDR_O_NUMERIC, "numeric address required"));
	CHECK(refused("localhost", ADDR_O_NUMERIC, "numeric address required"));
}

static void test_prefix_refusals(void)
{
	CHECK(refused("sockpair@3", 0, "not supported"));
	CHECK(refused("udp@1.2.3.4:53", 0, "not supported"));
	CHECK(refused("udp6@[::1]:53", 0, "not supported"));
	CHECK(refused("quic4@:443", 0, "not supported"));
	CHECK(refused("uxdg@/dev/log", 0, "not supported"));
	CHECK(refused("foo@bar", 0, "unknown address prefix"));
	CHECK(refused("IPV4@1.2.3.4:80", 0, "invalid address"));
}

static void test_unix(void)
{
	struct sl_addr a;
	struct sockaddr_un *sun = (struct sockaddr_un *)&a.ss;
	char path[sizeof(sun->sun_path) + 16];
	char str[sizeof(path) + 8];

	CHECK(addr_parse("/tmp/s.sock", &a, 0, err, sizeof(err)) == 0);
	CHECK(a.kind == ADDR_UNIX && sun->sun_family == AF_UNIX && a.fd == -1 && a.flags == 0);
	CHECK_STR(sun->sun_path, "/tmp/s.sock");
	CHECK(a.len == offsetof(struct sockaddr_un, sun_path) + strlen("/tmp/s.sock") + 1);

	CHECK(addr_parse("unix@/run/x", &a, ADDR_O_PORT_REQUIRED, err, sizeof(err)) == 0);
	CHECK(a.kind == ADDR_UNIX);
	CHECK_STR(sun->sun_path, "/run/x");
	CHECK(addr_parse("uxst@rel/path:with@odd", &a, 0, err, sizeof(err)) == 0);
	CHECK(a.kind == ADDR_UNIX);
	CHECK_STR(sun->sun_path, "rel/path:with@odd");
	/* a '@' inside a path is not a prefix */
	CHECK(addr_parse("/tmp/a@b", &a, 0, err, sizeof(err)) == 0);
	CHECK(a.kind == ADDR_UNIX);
	CHECK_STR(sun->sun_path, "/tmp/a@b");

	/* the longest path leaves room for the NUL */
	memset(path, 'p', sizeof(path));
	path[0] = '/';
	path[sizeof(sun->sun_path) - 1] = '\0';
	CHECK(addr_parse(path, &a, 0, err, sizeof(err)) == 0);
	CHECK(a.len == sizeof(struct sockaddr_un));
	path[sizeof(sun->sun_path) - 1] = 'p';
	path[sizeof(sun->sun_path)] = '\0';
	CHECK(refused(path, 0, "too long"));
	snprintf(str, sizeof(str), "unix@%s", path);
	CHECK(refused(str, 0, "too long"));

	CHECK(refused("unix@", 0, "missing socket path"));
	CHECK(refused("/tmp/x", ADDR_O_NO_UNIX, "not allowed"));
	CHECK(refused("unix@/tmp/x", ADDR_O_NO_UNIX, "not allowed"));
}

static void test_abns(void)
{
	struct sl_addr a;
	struct sockaddr_un *sun = (struct sockaddr_un *)&a.ss;
	char str[160];

	CHECK(addr_parse("abns@haproxy-peers", &a, 0, err, sizeof(err)) == 0);
	CHECK(a.kind == ADDR_ABNS && sun->sun_family == AF_UNIX);
	CHECK(sun->sun_path[0] == '\0');
	CHECK(memcmp(sun->sun_path + 1, "haproxy-peers", 13) == 0);
	/* abns@: zero-padded to the whole sun_path, as HAProxy's */
	CHECK(a.len == sizeof(struct sockaddr_un));
	CHECK(sun->sun_path[14] == '\0' && sun->sun_path[sizeof(sun->sun_path) - 1] == '\0');

	/* abnsz@: exactly the name */
	CHECK(addr_parse("abnsz@a:b/c", &a, 0, err, sizeof(err)) == 0);
	CHECK(a.len == offsetof(struct sockaddr_un, sun_path) + 1 + 5);

	memcpy(str, "abns@", 5);
	memset(str + 5, 'n', sizeof(sun->sun_path) - 1);
	str[5 + sizeof(sun->sun_path) - 1] = '\0';
	CHECK(addr_parse(str, &a, 0, err, sizeof(err)) == 0);
	CHECK(a.len == sizeof(struct sockaddr_un));
	str[5 + sizeof(sun->sun_path) - 1] = 'n';
	str[5 + sizeof(sun->sun_path)] = '\0';
	CHECK(refused(str, 0, "too long"));

	CHECK(refused("abns@", 0, "missing abstract"));
	CHECK(refused("abns@x", ADDR_O_NO_UNIX, "not allowed"));
}

static void test_fd(void)
{
	struct sl_addr a;

	CHECK(addr_parse("fd@3", &a, 0, err, sizeof(err)) == 0);
	CHECK(a.kind == ADDR_FD && a.fd == 3 && a.len == 0 && a.ss.ss_family == AF_UNSPEC);
	CHECK(addr_parse("fd@0", &a, ADDR_O_PORT_REQUIRED, err, sizeof(err)) == 0);
	CHECK(a.kind == ADDR_FD && a.fd == 0);
	CHECK(addr_parse("fd@2147483647", &a, 0, err, sizeof(err)) == 0);
	CHECK(a.fd == 2147483647);
	CHECK(refused("fd@2147483648", 0, "out of range"));
	CHECK(refused("fd@", 0, "missing file descriptor"));
	CHECK(refused("fd@x", 0, "invalid file descriptor"));
	CHECK(refused("fd@-1", 0, "invalid file descriptor"));
	CHECK(refused("fd@3x", 0, "invalid file descriptor"));
	CHECK(refused("fd@ 3", 0, "invalid file descriptor"));
	CHECK(refused("fd@${LISTEN}", 0, "invalid file descriptor"));
	CHECK(refused("fd@3", ADDR_O_NO_FD, "not allowed"));
}

static void test_hostnames(void)
{
	struct sl_addr a;
	char h[64];
	int rc;

	CHECK(inet_is("ipv4@localhost:80", 0, AF_INET, "127.0.0.1", 80, 0));
	CHECK(inet_is("tcp4@localhost", ADDR_O_PORT_OPTIONAL, AF_INET, "127.0.0.1", 0, ADDR_F_NO_PORT));
	/* unforced: whichever loopback the resolver lists first */
	CHECK(addr_parse("localhost:8080", &a, 0, err, sizeof(err)) == 0);
	addr_host_str(&a.ss, h, sizeof(h));
	CHECK(strcmp(h, "127.0.0.1") == 0 || strcmp(h, "::1") == 0);
	CHECK(addr_port(&a.ss) == 8080);
	/* forced IPv6: a host without an IPv6 localhost entry may refuse */
	rc = addr_parse("ipv6@localhost:80", &a, 0, err, sizeof(err));
	if (rc == 0)
		CHECK(a.ss.ss_family == AF_INET6 && strcmp(addr_host_str(&a.ss, h, sizeof(h)), "::1") == 0);
	else
		CHECK(strstr(err, "cannot resolve") != NULL);
}

static void test_printing(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	char buf[64];

	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(8080);
	inet_pton(AF_INET, "10.1.2.3", &sin->sin_addr);
	CHECK_STR(addr_host_str(&ss, buf, sizeof(buf)), "10.1.2.3");
	CHECK(addr_port(&ss) == 8080);
	CHECK_STR(addr_host_str(&ss, buf, 6), "10.1.");        /* truncated, terminated */

	memset(&ss, 0, sizeof(ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(443);
	inet_pton(AF_INET6, "2001:db8::5", &sin6->sin6_addr);
	CHECK_STR(addr_host_str(&ss, buf, sizeof(buf)), "2001:db8::5");
	CHECK(addr_port(&ss) == 443);

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	CHECK_STR(addr_host_str(&ss, buf, sizeof(buf)), "unix");
	CHECK(addr_port(&ss) == 0);
	ss.ss_family = AF_UNSPEC;
	CHECK_STR(addr_host_str(&ss, buf, sizeof(buf)), "-");
	CHECK_STR(addr_host_str(NULL, buf, sizeof(buf)), "-");
	CHECK(addr_port(&ss) == 0);
}

/* full_str() output for <in>, and parsing it back gives the same address. */
static int full_str_is(const char *in, unsigned int opts, const char *expect)
{
	struct sl_addr a, b;
	char buf[256];

	if (addr_parse(in, &a, opts, err, sizeof(err)) != 0) {
		fprintf(stderr, "  '%s': %s\n", in, err);
		return 0;
	}
	addr_full_str(&a, buf, sizeof(buf));
	if (strcmp(buf, expect) != 0) {
		fprintf(stderr, "  '%s': full_str \"%s\", expected \"%s\"\n", in, buf, expect);
		return 0;
	}
	if (addr_parse(buf, &b, opts, err, sizeof(err)) != 0) {
		fprintf(stderr, "  '%s': reading back \"%s\": %s\n", in, buf, err);
		return 0;
	}
	if (a.kind != b.kind || a.len != b.len || a.fd != b.fd ||
	    (a.flags & ADDR_F_NO_PORT) != (b.flags & ADDR_F_NO_PORT) ||
	    memcmp(&a.ss, &b.ss, sizeof(a.ss)) != 0) {
		fprintf(stderr, "  '%s': \"%s\" reads back differently\n", in, buf);
		return 0;
	}
	return 1;
}

static void test_full_str_round_trip(void)
{
	struct sl_addr a;
	char small[8];

	CHECK(full_str_is("1.2.3.4:80", 0, "1.2.3.4:80"));
	CHECK(full_str_is("ipv4@1.2.3.4:80", 0, "1.2.3.4:80"));
	CHECK(full_str_is("[::1]:8080", 0, "[::1]:8080"));
	CHECK(full_str_is("::1:8080", 0, "[::1]:8080"));
	CHECK(full_str_is("2001:db8::1:443", 0, "[2001:db8::1]:443"));
	CHECK(full_str_is("1.2.3.4", ADDR_O_PORT_OPTIONAL, "1.2.3.4"));
	CHECK(full_str_is("[2001:db8::1]", ADDR_O_PORT_OPTIONAL, "[2001:db8::1]"));
	CHECK(full_str_is(":80", 0, "0.0.0.0:80"));
	CHECK(full_str_is("ipv6@:80", 0, "[::]:80"));
	CHECK(full_str_is("/tmp/sock", 0, "unix@/tmp/sock"));
	CHECK(full_str_is("uxst@/tmp/sock", 0, "unix@/tmp/sock"));
	CHECK(full_str_is("abns@name", 0, "abns@name"));
	CHECK(full_str_is("abnsz@a:b/c", 0, "abnsz@a:b/c"));
	CHECK(full_str_is("fd@7", 0, "fd@7"));

	CHECK(addr_parse("abns@longer-name", &a, 0, err, sizeof(err)) == 0);
	CHECK_STR(addr_full_str(&a, small, sizeof(small)), "abns@lo");
}

static void test_hash(void)
{
	struct sl_addr a, b;
	unsigned int buckets[4] = { 0 };
	char str[32];
	int i, distinct = 0;

	CHECK(addr_parse("10.0.0.1:80", &a, 0, err, sizeof(err)) == 0);
	CHECK(addr_parse("10.0.0.1:9999", &b, 0, err, sizeof(err)) == 0);
	CHECK(addr_hash_host(&a.ss) == addr_hash_host(&b.ss));        /* port ignored */
	CHECK(addr_parse("[::ffff:10.0.0.1]:80", &b, 0, err, sizeof(err)) == 0);
	CHECK(addr_hash_host(&a.ss) == addr_hash_host(&b.ss));        /* mapped == IPv4 */
	CHECK(addr_parse("10.0.0.2:80", &b, 0, err, sizeof(err)) == 0);
	CHECK(addr_hash_host(&a.ss) != addr_hash_host(&b.ss));
	CHECK(addr_parse("[2001:db8::1]:80", &a, 0, err, sizeof(err)) == 0);
	CHECK(addr_parse("[2001:db8::2]:80", &b, 0, err, sizeof(err)) == 0);
	CHECK(addr_hash_host(&a.ss) != addr_hash_host(&b.ss));
	CHECK(addr_parse("/tmp/x", &a, 0, err, sizeof(err)) == 0);
	CHECK(addr_hash_host(&a.ss) == 0);
	CHECK(addr_hash_host(NULL) == 0);

	/* consecutive clients spread over 4 servers (expected 64 each) */
	for (i = 0; i < 256; i++) {
		snprintf(str, sizeof(str), "192.168.1.%d:1", i);
		if (addr_parse(str, &a, 0, err, sizeof(err)) == 0) {
			buckets[addr_hash_host(&a.ss) % 4]++;
			distinct++;
		}
	}
	CHECK(distinct == 256);
	for (i = 0; i < 4; i++)
		CHECK(buckets[i] >= 40 && buckets[i] <= 90);
}

static void test_err_buffer(void)
{
	struct sl_addr a;
	char tiny[4];

	CHECK(addr_parse("", &a, 0, NULL, 0) == -1);
	CHECK(addr_parse("1.2.3.4:99999", &a, 0, tiny, sizeof(tiny)) == -1);
	CHECK(strlen(tiny) == 3);
	/* success leaves an empty message */
	strcpy(err, "stale");
	CHECK(addr_parse("1.2.3.4:1", &a, 0, err, sizeof(err)) == 0);
	CHECK_STR(err, "");
}

int main(void)
{
	test_inet_forms();
	test_family_prefixes();
	test_ports();
	test_bad_hosts();
	test_prefix_refusals();
	test_unix();
	test_abns();
	test_fd();
	test_hostnames();
	test_printing();
	test_full_str_round_trip();
	test_hash();
	test_err_buffer();
	return t_done("addr");
}
