/* PROXY protocol v1/v2: parsing valid and invalid headers, incremental
 * arrival (every truncation of a valid header asks for more), early refusal,
 * exact build output, and build-then-parse round trips.
 *
 * Every parse goes through a heap copy of exactly the given length, so that
 * the sanitizer build catches a read past <len>. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <sluice/expr/hash.h>
#include <sluice/net/proxy_proto.h>
#include "t.h"

static int parse_exact(const void *bytes, size_t n, struct pp_info *out)
{
	uint8_t *copy = malloc(n ? n : 1);
	int rc;

	memcpy(copy, bytes, n);
	rc = pp_parse(copy, n, out);
	free(copy);
	return rc;
}

static int parse_str(const char *s, struct pp_info *out)
{
	return parse_exact(s, strlen(s), out);
}

/* Every strict prefix of a valid header needs more bytes. */
static int prefixes_need_more(const void *bytes, size_t n)
{
	struct pp_info pi;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = parse_exact(bytes, i, &pi);
		if (rc != 0) {
			fprintf(stderr, "  prefix of %zu/%zu bytes gave %d\n", i, n, rc);
			return 0;
		}
	}
	return 1;
}

static void set4(struct sockaddr_storage *ss, const char *ip, int port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &sin->sin_addr);
}

static void set6(struct sockaddr_storage *ss, const char *ip, int port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons((uint16_t)port);
	inet_pton(AF_INET6, ip, &sin6->sin6_addr);
}

static void setun(struct sockaddr_storage *ss, const char *path)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)ss;

	memset(ss, 0, sizeof(*ss));
	sun->sun_family = AF_UNIX;
	strncpy(sun->sun_path, path, sizeof(sun->sun_path) - 1);
}

/* <ss> is <family> <ip> port <port>. */
static int addr_is(const struct sockaddr_storage *ss, int family, const char *ip, int port)
{
	struct sockaddr_storage want;
	char got[INET6_ADDRSTRLEN] = "?";

	if (family == AF_INET)
		set4(&want, ip, port);
	else
		set6(&want, ip, port);
	if (ss->ss_family == family &&
	    memcmp(ss, &want, family == AF_INET ? sizeof(struct sockaddr_in)
	                                        : sizeof(struct sockaddr_in6)) == 0)
		return 1;
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, got, sizeof(got));
	else if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, got, sizeof(got));
	fprintf(stderr, "  got family %d %s, expected %d %s port %d\n",
	        ss->ss_family, got, family, ip, port);
	return 0;
}

/* ---- v1 ---- */

static void test_v1_valid(void)
{
	static const char tcp4[] = "PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n";
	static const char tcp6_max[] =
		"PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n";
	static const char unk_max[] =
		"PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n";
	struct pp_info pi;
	char buf[256];

	snprintf(buf, sizeof(buf), "%sGET / HTTP/1.1\r\n\r\n", tcp4);
	CHECK(parse_str(buf, &pi) == (int)strlen(tcp4));
	CHECK(pi.version == 1 && pi.local == 0);
	CHECK(addr_is(&pi.src, AF_INET, "192.168.0.1", 56324));
	CHECK(addr_is(&pi.dst, AF_INET, "192.168.0.11", 443));
	CHECK(prefixes_need_more(tcp4, strlen(tcp4)));

	CHECK(parse_str("PROXY TCP4 0.0.0.0 255.255.255.255 0 65535\r\n", &pi) == 44);
	CHECK(addr_is(&pi.src, AF_INET, "0.0.0.0", 0));
	CHECK(addr_is(&pi.dst, AF_INET, "255.255.255.255", 65535));

	CHECK(strlen(tcp6_max) == 104);
	CHECK(parse_str(tcp6_max, &pi) == 104);
	CHECK(addr_is(&pi.src, AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535));
	CHECK(prefixes_need_more(tcp6_max, strlen(tcp6_max)));

	CHECK(parse_str("PROXY TCP6 2001:DB8::1 ::1 1 2\r\nxyz", &pi) == 32);
	CHECK(addr_is(&pi.src, AF_INET6, "2001:db8::1", 1));
	CHECK(addr_is(&pi.dst, AF_INET6, "::1", 2));
	/* a "::" standing for a single zero group, at either end */
	CHECK(parse_str("PROXY TCP6 1:2:3:4:5:6:7:: ::1:2:3:4:5:6:7 1 2\r\n", &pi) == 48);
	CHECK(addr_is(&pi.src, AF_INET6, "1:2:3:4:5:6:7:0", 1));
	CHECK(addr_is(&pi.dst, AF_INET6, "0:1:2:3:4:5:6:7", 2));
	CHECK(prefixes_need_more("PROXY TCP6 1:2:3:4:5:6:7:: ::1:2:3:4:5:6:7 1 2\r\n", 48));
	/* the dotted tail some senders produce with inet_ntop() */
	CHECK(parse_str("PROXY TCP6 ::ffff:1.2.3.4 :: 80 81\r\n", &pi) == 36);
	CHECK(addr_is(&pi.src, AF_INET6, "::ffff:1.2.3.4", 80));
	CHECK(addr_is(&pi.dst, AF_INET6, "::", 81));

	CHECK(parse_str("PROXY UNKNOWN\r\n", &pi) == 15);
	CHECK(pi.version == 1 && pi.local == 1 && pi.src.ss_family == AF_UNSPEC);
	CHECK(prefixes_need_more("PROXY UNKNOWN\r\n", 15));
	CHECK(strlen(unk_max) == PP_V1_MAX);
	CHECK(parse_str(unk_max, &pi) == PP_V1_MAX);
	CHECK(pi.local == 1);
	CHECK(prefixes_need_more(unk_max, strlen(unk_max)));
	/* after UNKNOWN, anything is ignored up to the CRLF */
	CHECK(parse_str("PROXY UNKNOWN whatever  you\tlike\r\n", &pi) == 34);
}

static void test_v1_invalid(void)
{
	static const char *const bad[] = {
		"proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n",
		"PROXY  TCP4 1.2.3.4 5.6.7.8 1 2\r\n",
		"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n",
		"PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n",          /* LF alone */
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\r\n",      /* CR alone */
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX\n",
		"PROXY TCP4 1.2.3.4\n 5.6.7.8 1 2\r\n",
		"PROXY TCP4 01.2.3.4 5.6.7.8 1 2\r\n",       /* heading zero */
		"PROXY TCP4 1.2.3.4 5.6.7.08 1 2\r\n",
		"PROXY TCP4 1.2.3.256 5.6.7.8 1 2\r\n",
		"PROXY TCP4 1.2.3 5.6.7.8 1 2\r\n",
		"PROXY TCP4 1.2.3.4.5 5.6.7.8 1 2\r\n",
		"PROXY TCP4 1.2.3. 5.6.7.8 1 2\r\n",
		"PROXY TCP4 1..3.4 5.6.7.8 1 2\r\n",
		"PROXY TCP4 ::1 5.6.7.8 1 2\r\n",            /* family mismatch */
		"PROXY TCP6 1.2.3.4 ::1 1 2\r\n",
		"PROXY TCP6 ::1 ::g 1 2\r\n",
		"PROXY TCP6 1:2:3:4:5:6:7:8:9 ::1 1 2\r\n",
		"PROXY TCP6 1::2::3 ::1 1 2\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 080 2\r\n",      /* heading zero */
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 65536\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 123456\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 +1 2\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n",          /* missing field */
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",      /* extra field */
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n",       /* trailing space */
		"PROXY TCP4 1.2.3.4 5.6.7.8 1  2\r\n",       /* two spaces */
		"PROXY TCP4 1.2.3.4 5.6.7.8  1 2\r\n",
		"PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n",
		"PROXY TCP4\r\n",
		"PROXY TCP4 \r\n",
		"PROXY\r\n",
		"PROXY \r\n",
		"PROXY UNKNOWNX\r\n",
		"PROXY UNKNOWN\n",
		"PROXY UNKNOWN\rx",
		"GET / HTTP/1.1\r\n",
		"\r\n\r\n\r",
	};
	char line[200];
	struct pp_info pi;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse_str(bad[i], &pi);

		if (rc != -1)
			fprintf(stderr, "  accepted (%d): %s\n", rc, bad[i]);
		CHECK(rc == -1);
	}

	/* no CRLF within the first 107 bytes */
	memset(line, 'a', sizeof(line));
	memcpy(line, "PROXY UNKNOWN ", 14);
	CHECK(parse_exact(line, 106, &pi) == 0);
	CHECK(parse_exact(line, 107, &pi) == -1);
	CHECK(parse_exact(line, sizeof(line), &pi) == -1);
	/* a CRLF ending at byte 108 is one byte too far; at 107 it fits */
	line[105] = '\r';
	line[106] = '\n';
	CHECK(parse_exact(line, 107, &pi) == 107);
	line[105] = 'a';
	line[106] = '\r';
	line[107] = '\n';
	CHECK(parse_exact(line, 107, &pi) == -1);
	CHECK(parse_exact(line, 108, &pi) == -1);
}

/* A prefix that can no longer become a header is refused before its CRLF. */
static void test_v1_early_refusal(void)
{
	static const char *const doomed[] = {
		"G", "PX", "PROXY_", "PROXY X", "PROXY TCP4X", "PROXY UNKNOWNX", "PROXY U ",
		"PROXY TCP4 1.2.3.400", "PROXY TCP4 01", "PROXY TCP4 1.2.3.4.", "PROXY TCP4 a",
		"PROXY TCP4 1.2.3.4 5.6.7.8 01", "PROXY TCP4 1.2.3.4 5.6.7.8 99999",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 ", "PROXY TCP4  ",
		"PROXY TCP6 12345", "PROXY TCP6 1:::", "PROXY TCP6 ::1::", "PROXY TCP6 fg",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r",      /* judged while the LF is awaited */
	};
	static const char *const hopeful[] = {
		"P", "PROXY", "PROXY ", "PROXY T", "PROXY TCP", "\r\n", "\r\n\r\n\0\r\nQUIT", "PROXY TCP4 ", "PROXY TCP4 1.2.3.",
		"PROXY TCP6 ::", "PROXY TCP6 ::ffff:1.2", "PROXY UNKNOWN", "PROXY UNKNOWN ",
		"PROXY UNKNOWN\r", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r", "PROXY TCP4 1.2.3.4 5.6.7.8 0",
	};
	struct pp_info pi;
	size_t i;

	for (i = 0; i < sizeof(doomed) / sizeof(doomed[0]); i++) {
		int rc = parse_str(doomed[i], &pi);

		if (rc != -1)
			fprintf(stderr, "  not refused (%d): \"%s\"\n", rc, doomed[i]);
		CHECK(rc == -1);
	}
	for (i = 0; i < sizeof(hopeful) / sizeof(hopeful[0]); i++) {
		int rc = parse_str(hopeful[i], &pi);

		if (rc != 0)
			fprintf(stderr, "  not waiting (%d): \"%s\"\n", rc, hopeful[i]);
		CHECK(rc == 0);
	}
	CHECK(parse_exact("", 0, &pi) == 0);
}

/* ---- v2 ---- */

static const uint8_t sig[12] = {
	0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A
};

/* Header with <ver_cmd>, <fam>, a length field of <len_field> and <n> body bytes. */
static size_t v2_hdr(uint8_t *buf, uint8_t ver_cmd, uint8_t fam, unsigned int len_field,
                     const void *body, size_t n)
{
	memcpy(buf, sig, 12);
	buf[12] = ver_cmd;
	buf[13] = fam;
	buf[14] = (uint8_t)(len_field >> 8);
	buf[15] = (uint8_t)len_field;
	if (n)
		memcpy(buf + 16, body, n);
	return 16 + n;
}

static void test_v2_valid(void)
{
	static const uint8_t b4[12] = { 10, 0, 0, 1, 192, 168, 1, 2, 0x1F, 0x90, 0x01, 0xBB };
	uint8_t b6[36], bu[216], body[300], buf[600];
	struct sockaddr_un *su;
	struct pp_info pi;
	size_t n;

	n = v2_hdr(buf, 0x21, 0x11, 12, b4, 12);
	memcpy(buf + n, "payload", 7);
	CHECK(parse_exact(buf, n + 7, &pi) == 28);
	CHECK(pi.version == 2 && pi.local == 0 && pi.tlv_len == 0);
	CHECK(addr_is(&pi.src, AF_INET, "10.0.0.1", 8080));
	CHECK(addr_is(&pi.dst, AF_INET, "192.168.1.2", 443));
	CHECK(prefixes_need_more(buf, n));

	memset(b6, 0, sizeof(b6));
	b6[0] = 0x20; b6[1] = 0x01; b6[2] = 0x0d; b6[3] = 0xb8; b6[15] = 1;
	b6[31] = 1;
	b6[32] = 0xFF; b6[33] = 0xFF; b6[34] = 0; b6[35] = 0;
	n = v2_hdr(buf, 0x21, 0x21, 36, b6, 36);
	CHECK(parse_exact(buf, n, &pi) == 52);
	CHECK(addr_is(&pi.src, AF_INET6, "2001:db8::1", 65535));
	CHECK(addr_is(&pi.dst, AF_INET6, "::1", 0));
	CHECK(prefixes_need_more(buf, n));

	memset(bu, 0, sizeof(bu));
	memcpy(bu, "/run/client", 11);
	memcpy(bu + 108, "/run/server.sock", 16);
	n = v2_hdr(buf, 0x21, 0x31, 216, bu, 216);
	CHECK(parse_exact(buf, n, &pi) == 232);
	CHECK(pi.local == 0 && pi.src.ss_family == AF_UNIX && pi.dst.ss_family == AF_UNIX);
	su = (struct sockaddr_un *)&pi.src;
	CHECK_STR(su->sun_path, "/run/client");
	su = (struct sockaddr_un *)&pi.dst;
	CHECK_STR(su->sun_path, "/run/server.sock");
	CHECK(prefixes_need_more(buf, n));

	/* TLVs after the addresses: counted in the length, skipped, reported */
	memcpy(body, b4, 12);
	memcpy(body + 12, "\x02\x00\x0b" "example.com" "\x04\x00\x00", 17);
	n = v2_hdr(buf, 0x21, 0x11, 29, body, 29);
	CHECK(parse_exact(buf, n, &pi) == 45);
	CHECK(pi.tlv_off == 28 && pi.tlv_len == 17);
	CHECK(addr_is(&pi.src, AF_INET, "10.0.0.1", 8080));
	CHECK(prefixes_need_more(buf, n));

	/* LOCAL: block skipped whatever the family byte says */
	n = v2_hdr(buf, 0x20, 0x00, 0, NULL, 0);
	CHECK(parse_exact(buf, n, &pi) == 16);
	CHECK(pi.version == 2 && pi.local == 1 && pi.src.ss_family == AF_UNSPEC);
	CHECK(prefixes_need_more(buf, n));
	n = v2_hdr(buf, 0x20, 0x11, 12, b4, 12);
	CHECK(parse_exact(buf, n, &pi) == 28 && pi.local == 1);
	n = v2_hdr(buf, 0x20, 0x7F, 3, "abc", 3);
	CHECK(parse_exact(buf, n, &pi) == 19 && pi.local == 1);

	/* PROXY with AF_UNSPEC, UDP or UNIX datagram: real endpoints are used */
	n = v2_hdr(buf, 0x21, 0x00, 5, "\x01\x02\x03\x04\x05", 5);
	CHECK(parse_exact(buf, n, &pi) == 21 && pi.local == 1);
	n = v2_hdr(buf, 0x21, 0x12, 12, b4, 12);
	CHECK(parse_exact(buf, n, &pi) == 28 && pi.local == 1);
	n = v2_hdr(buf, 0x21, 0x22, 36, b6, 36);
	CHECK(parse_exact(buf, n, &pi) == 52 && pi.local == 1);
	n = v2_hdr(buf, 0x21, 0x32, 216, bu, 216);
	CHECK(parse_exact(buf, n, &pi) == 232 && pi.local == 1);

	/* largest header: 65535 bytes of TLVs and addresses */
	{
		uint8_t *big = calloc(1, PP_V2_MAX);
		size_t off = 16 + 12;

		memcpy(big, sig, 12);
		big[12] = 0x21;
		big[13] = 0x11;
		big[14] = big[15] = 0xFF;
		while (off < PP_V2_MAX) {
			size_t v = PP_V2_MAX - off - 3;

			if (v > 60000)
				v = 60000;
			big[off] = 0x04;
			big[off + 1] = (uint8_t)(v >> 8);
			big[off + 2] = (uint8_t)v;
			off += 3 + v;
		}
		CHECK(off == PP_V2_MAX);
		CHECK(parse_exact(big, PP_V2_MAX, &pi) == PP_V2_MAX);
		CHECK(parse_exact(big, PP_V2_MAX - 1, &pi) == 0);
		free(big);
	}
}

static void test_v2_invalid(void)
{
	static const uint8_t b4[12] = { 10, 0, 0, 1, 192, 168, 1, 2, 0, 80, 0, 81 };
	static const uint8_t bad_fams[] = { 0x01, 0x02, 0x10, 0x13, 0x20, 0x23, 0x30, 0x33,
	                                    0x41, 0x44, 0xF1, 0xFF };
	uint8_t buf[600], body[64];
	struct pp_info pi;
	size_t n, i;

	/* any corrupted signature byte is refused as soon as it is seen */
	for (i = 0; i < 12; i++) {
		n = v2_hdr(buf, 0x21, 0x11, 12, b4, 12);
		buf[i] ^= 0x40;
		CHECK(parse_exact(buf, i + 1, &pi) == -1);
		CHECK(parse_exact(buf, n, &pi) == -1);
	}
	/* version must be 2, command LOCAL or PROXY */
	n = v2_hdr(buf, 0x11, 0x11, 12, b4, 12);
	CHECK(parse_exact(buf, 13, &pi) == -1);
	CHECK(parse_exact(buf, n, &pi) == -1);
	n = v2_hdr(buf, 0x31, 0x11, 12, b4, 12);
	CHECK(parse_exact(buf, n, &pi) == -1);
	n = v2_hdr(buf, 0x22, 0x11, 12, b4, 12);
	CHECK(parse_exact(buf, 13, &pi) == -1);
	n = v2_hdr(buf, 0x2F, 0x11, 12, b4, 12);
	CHECK(parse_exact(buf, n, &pi) == -1);
	/* PROXY with a family/transport byte outside spec 2.2's list */
	for (i = 0; i < sizeof(bad_fams); i++) {
		n = v2_hdr(buf, 0x21, bad_fams[i], 12, b4, 12);
		CHECK(parse_exact(buf, 14, &pi) == -1);
		CHECK(parse_exact(buf, n, &pi) == -1);
	}
	/* length shorter than the family's block: refused once the length is known */
	n = v2_hdr(buf, 0x21, 0x11, 11, b4, 11);
	CHECK(parse_exact(buf, 15, &pi) == 0);
	CHECK(parse_exact(buf, 16, &pi) == -1);
	CHECK(parse_exact(buf, n, &pi) == -1);
	n = v2_hdr(buf, 0x21, 0x21, 35, body, 0);
	CHECK(parse_exact(buf, n, &pi) == -1);
	n = v2_hdr(buf, 0x21, 0x31, 215, body, 0);
	CHECK(parse_exact(buf, n, &pi) == -1);
	n = v2_hdr(buf, 0x21, 0x12, 0, body, 0);
	CHECK(parse_exact(buf, n, &pi) == -1);
	/* malformed TLV areas */
	memcpy(body, b4, 12);
	memcpy(body + 12, "\x04\x00", 2);                     /* short TLV header */
	n = v2_hdr(buf, 0x21, 0x11, 14, body, 14);
	CHECK(parse_exact(buf, n, &pi) == -1);
	memcpy(body + 12, "\x04\x00\x05" "abcd", 7);          /* value overruns */
	n = v2_hdr(buf, 0x21, 0x11, 19, body, 19);
	CHECK(parse_exact(buf, n, &pi) == -1);
	memcpy(body + 12, "\x04\x00\x01" "a" "\x04", 5);      /* trailing byte */
	n = v2_hdr(buf, 0x21, 0x11, 17, body, 17);
	CHECK(parse_exact(buf, n, &pi) == -1);
	memcpy(body + 12, "\x04\x00\x01" "a", 4);             /* and the fixed one */
	n = v2_hdr(buf, 0x21, 0x11, 16, body, 16);
	CHECK(parse_exact(buf, n, &pi) == 32);
}

/* ---- building ---- */

static int line_is(const char *buf, size_t n, const char *want)
{
	if (n == strlen(want) && memcmp(buf, want, n) == 0)
		return 1;
	fprintf(stderr, "  built %zu bytes \"%.*s\", expected \"%s\"\n", n, (int)n, buf, want);
	return 0;
}

static void test_build_v1(void)
{
	struct sockaddr_storage s, d;
	char buf[PP_V1_MAX + 16];
	size_t n;

	set4(&s, "192.168.0.1", 56324);
	set4(&d, "192.168.0.11", 443);
	n = pp_build_v1(buf, sizeof(buf), &s, &d);
	CHECK(line_is(buf, n, "PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n"));
	CHECK(pp_build_v1(buf, n - 1, &s, &d) == 0);
	CHECK(pp_build_v1(buf, n, &s, &d) == n);

	set6(&s, "2001:db8:0:0:1:0:0:1", 1);
	set6(&d, "::1", 65535);
	n = pp_build_v1(buf, sizeof(buf), &s, &d);
	CHECK(line_is(buf, n, "PROXY TCP6 2001:db8::1:0:0:1 ::1 1 65535\r\n"));

	/* zero runs: the longest, the first on a tie, never a single group */
	set6(&s, "1:0:0:2:3:0:0:4", 0);
	set6(&d, "1:0:1:0:1:0:1:0", 0);
	n = pp_build_v1(buf, sizeof(buf), &s, &d);
	CHECK(line_is(buf, n, "PROXY TCP6 1::2:3:0:0:4 1:0:1:0:1:0:1:0 0 0\r\n"));
	set6(&s, "::", 1);
	set6(&d, "1::", 2);
	n = pp_build_v1(buf, sizeof(buf), &s, &d);
	CHECK(line_is(buf, n, "PROXY TCP6 :: 1:: 1 2\r\n"));

	/* IPv4-mapped on both sides goes as TCP4 */
	set6(&s, "::ffff:10.0.0.1", 1000);
	set6(&d, "::ffff:10.0.0.2", 80);
	n = pp_build_v1(buf, sizeof(buf), &s, &d);
	CHECK(line_is(buf, n, "PROXY TCP4 10.0.0.1 10.0.0.2 1000 80\r\n"));
	/* IPv4 and IPv6: TCP6, the IPv4 side mapped, in hex groups */
	set4(&s, "1.2.3.4", 1000);
	set6(&d, "2001:db8::2", 80);
	n = pp_build_v1(buf, sizeof(buf), &s, &d);
	CHECK(line_is(buf, n, "PROXY TCP6 ::ffff:102:304 2001:db8::2 1000 80\r\n"));

	/* nothing INET: UNKNOWN */
	setun(&s, "/a");
	setun(&d, "/b");
	n = pp_build_v1(buf, sizeof(buf), &s, &d);
	CHECK(line_is(buf, n, "PROXY UNKNOWN\r\n"));
	set4(&s, "1.2.3.4", 1);
	CHECK(pp_build_v1(buf, sizeof(buf), &s, &d) == 15);
	CHECK(pp_build_v1(buf, sizeof(buf), NULL, NULL) == 15);
	CHECK(pp_build_v1(buf, sizeof(buf), &s, NULL) == 15);
	CHECK(pp_build_v1(buf, 14, NULL, NULL) == 0);
}

static void test_build_v2(void)
{
	static const uint8_t want4[28] = {
		0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A,
		0x21, 0x11, 0x00, 0x0C, 172, 19, 0, 1, 172, 19, 0, 3, 0xA6, 0x52, 0x00, 0x50
	};
	static const uint8_t want_local[16] = {
		0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A,
		0x20, 0x00, 0x00, 0x00
	};
	struct sockaddr_storage s, d;
	uint8_t buf[300];
	size_t n;

	set4(&s, "172.19.0.1", 42578);
	set4(&d, "172.19.0.3", 80);
	n = pp_build_v2(buf, sizeof(buf), &s, &d);
	CHECK(n == 28 && memcmp(buf, want4, 28) == 0);
	CHECK(pp_build_v2(buf, 27, &s, &d) == 0);
	CHECK(pp_build_v2(buf, 28, &s, &d) == 28);

	set6(&s, "2001:db8::1", 1);
	set6(&d, "::1", 2);
	n = pp_build_v2(buf, sizeof(buf), &s, &d);
	CHECK(n == 52 && buf[12] == 0x21 && buf[13] == 0x21 && buf[14] == 0 && buf[15] == 36);
	CHECK(buf[16] == 0x20 && buf[17] == 0x01 && buf[31] == 1 && buf[47] == 1);
	CHECK(buf[48] == 0 && buf[49] == 1 && buf[50] == 0 && buf[51] == 2);
	CHECK(pp_build_v2(buf, 51, &s, &d) == 0);

	/* mixed families: IPv6 with the IPv4 side mapped */
	set4(&s, "1.2.3.4", 5);
	n = pp_build_v2(buf, sizeof(buf), &s, &d);
	CHECK(n == 52 && buf[13] == 0x21);
	CHECK(buf[26] == 0xFF && buf[27] == 0xFF && buf[28] == 1 && buf[31] == 4);

	setun(&s, "/c");
	setun(&d, "/srv.sock");
	n = pp_build_v2(buf, sizeof(buf), &s, &d);
	CHECK(n == 232 && buf[12] == 0x21 && buf[13] == 0x31 && buf[14] == 0 && buf[15] == 216);
	CHECK(memcmp(buf + 16, "/c\0", 3) == 0 && memcmp(buf + 124, "/srv.sock\0", 10) == 0);
	CHECK(pp_build_v2(buf, 231, &s, &d) == 0);

	/* no client, or families that cannot be told: LOCAL, empty block */
	n = pp_build_v2(buf, sizeof(buf), NULL, NULL);
	CHECK(n == 16 && memcmp(buf, want_local, 16) == 0);
	set4(&s, "1.2.3.4", 5);
	CHECK(pp_build_v2(buf, sizeof(buf), &s, &d) == 16 && buf[12] == 0x20);
	CHECK(pp_build_v2(buf, 15, NULL, NULL) == 0);
}

/* ---- round trips ---- */

/* The address <ss> as the header carries it: IPv4-mapped becomes IPv4 when
 * <as4>, IPv4 becomes mapped IPv6 otherwise. */
static void expect_as(const struct sockaddr_storage *in, int as4, struct sockaddr_storage *out)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)in;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)in;
	struct sockaddr_in *o4 = (struct sockaddr_in *)out;
	struct sockaddr_in6 *o6 = (struct sockaddr_in6 *)out;

	memset(out, 0, sizeof(*out));
	if (as4) {
		o4->sin_family = AF_INET;
		if (in->ss_family == AF_INET) {
			o4->sin_addr = s4->sin_addr;
			o4->sin_port = s4->sin_port;
		} else {
			memcpy(&o4->sin_addr, s6->sin6_addr.s6_addr + 12, 4);
			o4->sin_port = s6->sin6_port;
		}
	} else {
		o6->sin6_family = AF_INET6;
		if (in->ss_family == AF_INET6) {
			o6->sin6_addr = s6->sin6_addr;
			o6->sin6_port = s6->sin6_port;
		} else {
			o6->sin6_addr.s6_addr[10] = o6->sin6_addr.s6_addr[11] = 0xFF;
			memcpy(o6->sin6_addr.s6_addr + 12, &s4->sin_addr, 4);
			o6->sin6_port = s4->sin_port;
		}
	}
}

static int is4(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ||
	       IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* Builds v1 and v2 for (s, d), parses both back and compares. */
static int round_trip(const struct sockaddr_storage *s, const struct sockaddr_storage *d)
{
	struct sockaddr_storage ws, wd;
	struct pp_info pi;
	char line[PP_V1_MAX];
	uint8_t bin[64];
	int as4 = is4(s) && is4(d);
	size_t n, alen = as4 ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int rc;

	expect_as(s, as4, &ws);
	expect_as(d, as4, &wd);

	n = pp_build_v1(line, sizeof(line), s, d);
	rc = parse_exact(line, n, &pi);
	if (n == 0 || rc != (int)n || pi.version != 1 || pi.local ||
	    memcmp(&pi.src, &ws, alen) != 0 || memcmp(&pi.dst, &wd, alen) != 0 ||
	    !prefixes_need_more(line, n)) {
		fprintf(stderr, "  v1 round trip failed (rc %d): %.*s\n", rc, (int)n, line);
		return 0;
	}
	n = pp_build_v2(bin, sizeof(bin), s, d);
	rc = parse_exact(bin, n, &pi);
	if (n == 0 || rc != (int)n || pi.version != 2 || pi.local ||
	    memcmp(&pi.src, &ws, alen) != 0 || memcmp(&pi.dst, &wd, alen) != 0 ||
	    !prefixes_need_more(bin, n)) {
		fprintf(stderr, "  v2 round trip failed (rc %d)\n", rc);
		return 0;
	}
	return 1;
}

static uint32_t lcg_state = 12345;

static uint32_t lcg(void)
{
	lcg_state = lcg_state * 1103515245u + 12345u;
	return lcg_state >> 8;
}

/* A random IPv6 address with random zero groups (exercises "::" placement). */
static void random6(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	int i;

	memset(ss, 0, sizeof(*ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons((uint16_t)lcg());
	for (i = 0; i < 8; i++) {
		uint32_t r = lcg();
		uint16_t w = (r & 3) ? 0 : (uint16_t)(r >> 4);

		if ((r & 0x30) == 0x30)
			w = (uint16_t)(r >> 8) & 0xF;
		sin6->sin6_addr.s6_addr[2 * i] = (uint8_t)(w >> 8);
		sin6->sin6_addr.s6_addr[2 * i + 1] = (uint8_t)w;
	}
}

static void random4(struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	uint32_t r = lcg() ^ (lcg() << 16);

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)lcg());
	memcpy(&sin->sin_addr, &r, 4);
}

static void test_round_trips(void)
{
	struct sockaddr_storage s, d;
	struct pp_info pi;
	uint8_t bin[300];
	int i, ok = 1;

	set4(&s, "127.0.0.1", 1);
	set4(&d, "10.20.30.40", 65535);
	CHECK(round_trip(&s, &d));
	set4(&s, "0.0.0.0", 0);
	set4(&d, "255.255.255.255", 0);
	CHECK(round_trip(&s, &d));
	set6(&s, "2001:db8::1", 443);
	set6(&d, "fe80::1:2:3:4", 8443);
	CHECK(round_trip(&s, &d));
	set6(&s, "::", 0);
	set6(&d, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535);
	CHECK(round_trip(&s, &d));
	set6(&s, "::ffff:1.2.3.4", 1);        /* both mapped: comes back as IPv4 */
	set6(&d, "::ffff:5.6.7.8", 2);
	CHECK(round_trip(&s, &d));
	set4(&s, "1.2.3.4", 1);               /* mixed: comes back as mapped IPv6 */
	set6(&d, "2001:db8::9", 2);
	CHECK(round_trip(&s, &d));
	CHECK(round_trip(&d, &s));
	set6(&s, "::1.2.3.4", 3);             /* IPv4-compatible: stays IPv6 */
	set6(&d, "::", 4);
	CHECK(round_trip(&s, &d));

	for (i = 0; i < 2000; i++) {
		if (i % 3 == 0) {
			random4(&s);
			random4(&d);
		} else if (i % 3 == 1) {
			random6(&s);
			random6(&d);
		} else {
			random4(&s);
			random6(&d);
		}
		if (!round_trip(&s, &d))
			ok = 0;
	}
	CHECK(ok);

	/* UNIX stream round trip through v2 */
	setun(&s, "/tmp/client.sock");
	setun(&d, "/tmp/server.sock");
	CHECK(parse_exact(bin, pp_build_v2(bin, sizeof(bin), &s, &d), &pi) == 232);
	CHECK(pi.local == 0 && memcmp(&pi.src, &s, sizeof(struct sockaddr_un)) == 0 &&
	      memcmp(&pi.dst, &d, sizeof(struct sockaddr_un)) == 0);
	/* LOCAL round trip */
	CHECK(parse_exact(bin, pp_build_v2(bin, sizeof(bin), NULL, NULL), &pi) == 16);
	CHECK(pi.local == 1 && pi.version == 2);
}

/* TLVs appended after the addresses, a nested one, the header's length
 * following, the CRC32C over the whole header; the parser accepts it. */
static void test_build_v2_tlvs(void)
{
	static const uint8_t zero[4];
	struct sockaddr_storage s, d;
	struct pp_info pi;
	uint8_t buf[256], whole[256];
	size_t n, ssl_off, crc_off;
	uint32_t crc;

	set4(&s, "10.0.0.1", 1000);
	set4(&d, "10.0.0.2", 80);
	n = pp_build_v2(buf, sizeof(buf), &s, &d);
	CHECK(n == 28);
	crc_off = n + 3;
	n = pp_v2_add_tlv(buf, sizeof(buf), n, PP2_TYPE_CRC32C, zero, 4);
	CHECK(n == 35 && buf[28] == 0x03 && buf[29] == 0 && buf[30] == 4);
	n = pp_v2_add_tlv(buf, sizeof(buf), n, PP2_TYPE_AUTHORITY, "a.b", 3);
	CHECK(n == 41 && buf[14] == 0 && buf[15] == 41 - 16);
	ssl_off = n;
	n = pp_v2_add_tlv(buf, sizeof(buf), n, PP2_TYPE_SSL, "\x01\0\0\0\0", 5);
	n = pp_v2_add_tlv(buf, sizeof(buf), n, PP2_SUBTYPE_SSL_VERSION, "TLSv1.3", 7);
	pp_v2_tlv_len(buf, ssl_off, n);
	CHECK(n == 41 + 8 + 10 && buf[ssl_off + 1] == 0 && buf[ssl_off + 2] == 15);
	CHECK(buf[15] == n - 16);
	pp_v2_crc32c(buf, n, crc_off);
	memcpy(whole, buf, n);
	memset(whole + crc_off, 0, 4);
	crc = hash_crc32c(whole, n);
	CHECK(buf[crc_off] == (uint8_t)(crc >> 24) && buf[crc_off + 3] == (uint8_t)crc);
	CHECK(pp_parse(buf, n, &pi) == (int)n);
	CHECK(pi.tlv_off == 28 && pi.tlv_len == n - 28);
	/* no room: nothing written, the length unchanged */
	CHECK(pp_v2_add_tlv(buf, n + 5, n, PP2_TYPE_NOOP, "abc", 3) == 0);
	CHECK(buf[15] == n - 16);
}

int main(void)
{
	test_build_v2_tlvs();
	test_v1_valid();
	test_v1_invalid();
	test_v1_early_refusal();
	test_v2_valid();
	test_v2_invalid();
	test_build_v1();
	test_build_v2();
	test_round_trips();
	return t_done("proxy_proto");
}
