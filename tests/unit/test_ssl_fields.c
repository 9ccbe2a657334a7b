/* The pure helpers behind the TLS sample fetches: distinguished names and
 * dates as HAProxy 2.6 prints them (src/net/ssl_x509.c), and the
 * ClientHello capture (src/net/ssl_capture.c): lists, truncation to the
 * capture size, GREASE filtering, malformed messages.
 *
 * Every parse goes through a heap copy of exactly the given length, so that
 * the sanitizer build catches a read past the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/asn1.h>
#include <openssl/x509.h>
#include <sluice/expr/hash.h>
#include <sluice/net/ssl_capture.h>
#include <sluice/net/ssl_x509.h>
#include "t.h"

/* ------------------------------------------------------------ names */

static X509_NAME *name_of(const char *const *pairs)
{
	X509_NAME *n = X509_NAME_new();

	for (; pairs[0]; pairs += 2)
		X509_NAME_add_entry_by_txt(n, pairs[0], MBSTRING_UTF8,
		                           (const unsigned char *)pairs[1], -1, -1, 0);
	return n;
}

/* Runs <fn>-like helpers through a NUL-terminated buffer. */
static const char *oneline(const X509_NAME *n, size_t size)
{
	static char buf[512];
	int r = ssl_x509_dn_oneline(n, buf, size);

	if (r < 0)
		return "<nospace>";
	buf[r] = '\0';
	return buf;
}

static const char *entry(const X509_NAME *n, const char *e, int pos)
{
	static char buf[512];
	int r = ssl_x509_dn_entry(n, e, strlen(e), pos, buf, sizeof(buf));

	if (r < 0)
		return "<nospace>";
	if (r == 0)
		return "<none>";
	buf[r] = '\0';
	return buf;
}

static const char *rfc2253(const X509_NAME *n)
{
	static char buf[512];
	int r = ssl_x509_dn_rfc2253(n, buf, sizeof(buf));

	if (r < 0)
		return "<nospace>";
	buf[r] = '\0';
	return buf;
}

static void test_names(void)
{
	static const char *const pairs[] = {
		"C", "FR", "O", "Example, Inc.", "OU", "web", "OU", "ops",
		"CN", "www.example.com", "1.2.3.4", "custom", NULL
	};
	X509_NAME *n = name_of(pairs);
	X509_NAME *empty = X509_NAME_new();

	CHECK_STR(oneline(n, 512),
	          "/C=FR/O=Example, Inc./OU=web/OU=ops/CN=www.example.com/1.2.3.4=custom");
	/* the exact size fits, one byte less does not */
	CHECK_STR(oneline(n, 69),
	          "/C=FR/O=Example, Inc./OU=web/OU=ops/CN=www.example.com/1.2.3.4=custom");
	CHECK_STR(oneline(n, 68), "<nospace>");
	CHECK(ssl_x509_dn_oneline(empty, (char[4]){ 0 }, 4) == 0);

	CHECK_STR(entry(n, "CN", 1), "www.example.com");
	CHECK_STR(entry(n, "cn", 1), "www.example.com");   /* without case */
	CHECK_STR(entry(n, "OU", 1), "web");
	CHECK_STR(entry(n, "OU", 2), "ops");
	CHECK_STR(entry(n, "OU", 3), "<none>");
	CHECK_STR(entry(n, "OU", -1), "ops");
	CHECK_STR(entry(n, "OU", -2), "web");
	CHECK_STR(entry(n, "OU", -3), "<none>");
	CHECK_STR(entry(n, "OU", 0), "<none>");
	CHECK_STR(entry(n, "1.2.3.4", 1), "custom");
	CHECK_STR(entry(n, "L", 1), "<none>");
	CHECK_STR(entry(n, "C", 1), "FR");
	CHECK_STR(entry(n, "CNX", 1), "<none>");
	CHECK(ssl_x509_dn_entry(n, "CN", 2, 1, (char[4]){ 0 }, 4) == -1);

	CHECK_STR(rfc2253(n),
	          "1.2.3.4=#0C06637573746F6D,CN=www.example.com,OU=ops,OU=web,"
	          "O=Example\\, Inc.,C=FR");
	X509_NAME_free(n);
	X509_NAME_free(empty);
}

/* ------------------------------------------------------------ dates */

static const char *date(int type, const char *text)
{
	static char buf[64];
	ASN1_STRING *s = ASN1_STRING_type_new(type);
	int r;

	ASN1_STRING_set(s, text, -1);
	r = ssl_x509_time(s, buf, sizeof(buf));
	ASN1_STRING_free(s);
	if (r < 0)
		return "<nospace>";
	if (r == 0)
		return "<none>";
	buf[r] = '\0';
	return buf;
}

static void test_dates(void)
{
	CHECK_STR(date(V_ASN1_UTCTIME, "261125182734Z"), "261125182734Z");
	CHECK_STR(date(V_ASN1_UTCTIME, "491231235959Z"), "491231235959Z");
	CHECK_STR(date(V_ASN1_UTCTIME, "991231235959Z"), "<none>");    /* 1999 */
	CHECK_STR(date(V_ASN1_UTCTIME, "2611251827"), "2611251827");
	CHECK_STR(date(V_ASN1_UTCTIME, "261125"), "<none>");
	CHECK_STR(date(V_ASN1_GENERALIZEDTIME, "20501231235959Z"), "501231235959Z");
	CHECK_STR(date(V_ASN1_GENERALIZEDTIME, "21251101182734Z"), "<none>");  /* 2125 */
	CHECK_STR(date(V_ASN1_GENERALIZEDTIME, "2050123123"), "<none>");
	CHECK_STR(date(V_ASN1_OCTET_STRING, "261125182734Z"), "<none>");
}

/* ------------------------------------------------------------ ClientHello */

struct msg {
	unsigned char b[1024];
	size_t len;
};

static void put(struct msg *m, const void *p, size_t n)
{
	memcpy(m->b + m->len, p, n);
	m->len += n;
}

static void put16(struct msg *m, unsigned v)
{
	put(m, (unsigned char[]){ (unsigned char)(v >> 8), (unsigned char)v }, 2);
}

/* A ClientHello with the given ciphers and extensions (already encoded:
 * type, length, data each), and no extension block at all if <ext> is
 * NULL. */
static void hello(struct msg *m, const unsigned char *ciphers, size_t nc,
                  const unsigned char *ext, size_t ne)
{
	size_t body;

	m->len = 0;
	put(m, (unsigned char[]){ 1, 0, 0, 0 }, 4);       /* length patched below */
	put16(m, 0x0303);
	for (int i = 0; i < 32; i++)
		put(m, (unsigned char[]){ (unsigned char)i }, 1);
	put(m, (unsigned char[]){ 3, 0xaa, 0xbb, 0xcc }, 4);   /* session id */
	put16(m, (unsigned)nc);
	put(m, ciphers, nc);
	put(m, (unsigned char[]){ 1, 0 }, 2);                 /* null compression */
	if (ext) {
		put16(m, (unsigned)ne);
		put(m, ext, ne);
	}
	body = m->len - 4;
	m->b[1] = (unsigned char)(body >> 16);
	m->b[2] = (unsigned char)(body >> 8);
	m->b[3] = (unsigned char)body;
}

static int parse(const struct msg *m, size_t len, struct ssl_capture **cap, size_t room)
{
	unsigned char *copy = malloc(len ? len : 1);
	int rc;

	memcpy(copy, m->b, len);
	*cap = malloc(sizeof(**cap) + room);
	rc = ssl_capture_parse(copy, len, *cap, room);
	free(copy);
	return rc;
}

static const unsigned char ciphers[] = {
	0x2a, 0x2a,  0x13, 0x01,  0x13, 0x02,  0xc0, 0x2b,  0x00, 0xff,
};

static const unsigned char exts[] = {
	0x0a, 0x0a, 0x00, 0x00,                              /* GREASE, empty */
	0x00, 0x00, 0x00, 0x05, 0x00, 0x03, 0x00, 0x00, 0x00, /* server_name (short) */
	0x00, 0x0a, 0x00, 0x08, 0x00, 0x06, 0x3a, 0x3a, 0x00, 0x1d, 0x00, 0x17, /* groups */
	0x00, 0x0b, 0x00, 0x02, 0x01, 0x00,                  /* ec_point_formats */
	0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04,            /* supported_versions */
};

static void test_capture(void)
{
	struct ssl_capture *cap;
	struct msg m;
	unsigned char out[64];
	size_t n;

	hello(&m, ciphers, sizeof(ciphers), exts, sizeof(exts));
	CHECK(parse(&m, m.len, &cap, 256) == 0);
	CHECK(cap->hello_version == 0x0303);
	CHECK(cap->ciphers_len == sizeof(ciphers));
	CHECK(memcmp(ssl_capture_ciphers(cap), ciphers, sizeof(ciphers)) == 0);
	CHECK(cap->ciphers_xxh64 == hash_xxh64(ciphers, sizeof(ciphers), 0));
	CHECK(cap->ext_len == 10);
	CHECK(memcmp(ssl_capture_ext(cap), "\x0a\x0a\x00\x00\x00\x0a\x00\x0b\x00\x2b", 10) == 0);
	CHECK(cap->groups_len == 6);
	CHECK(memcmp(ssl_capture_groups(cap), "\x3a\x3a\x00\x1d\x00\x17", 6) == 0);
	CHECK(cap->formats_len == 1);
	CHECK(ssl_capture_formats(cap)[0] == 0);

	n = ssl_capture_no_grease(ssl_capture_ciphers(cap), cap->ciphers_len, out);
	CHECK(n == 8 && memcmp(out, ciphers + 2, 8) == 0);
	n = ssl_capture_no_grease(ssl_capture_groups(cap), cap->groups_len, out);
	CHECK(n == 4 && memcmp(out, "\x00\x1d\x00\x17", 4) == 0);
	n = ssl_capture_no_grease((const unsigned char *)"\x0a\x0a\x01", 3, out);
	CHECK(n == 1 && out[0] == 1);
	/* 0x0a1a is not GREASE: both bytes must be equal */
	n = ssl_capture_no_grease((const unsigned char *)"\x0a\x1a", 2, out);
	CHECK(n == 2);
	free(cap);

	/* the lists share the room, in order; the hash still covers all */
	CHECK(parse(&m, m.len, &cap, 13) == 0);
	CHECK(cap->ciphers_len == 10 && cap->ext_len == 3 && cap->groups_len == 0 &&
	      cap->formats_len == 0);
	CHECK(cap->ciphers_xxh64 == hash_xxh64(ciphers, sizeof(ciphers), 0));
	free(cap);
	CHECK(parse(&m, m.len, &cap, 4) == 0);
	CHECK(cap->ciphers_len == 4 && cap->ext_len == 0);
	free(cap);
	CHECK(parse(&m, m.len, &cap, 0) == 0);
	CHECK(cap->ciphers_len == 0 && cap->hello_version == 0x0303);
	free(cap);

	/* no extension block at all */
	hello(&m, ciphers, sizeof(ciphers), NULL, 0);
	CHECK(parse(&m, m.len, &cap, 64) == 0);
	CHECK(cap->ciphers_len == 10 && cap->ext_len == 0 && cap->groups_len == 0);
	free(cap);

	/* every truncation of a valid message is refused */
	hello(&m, ciphers, sizeof(ciphers), exts, sizeof(exts));
	for (size_t i = 0; i < m.len; i++) {
		int rc = parse(&m, i, &cap, 64);

		free(cap);
		if (rc != -1) {
			CHECK(rc == -1);
			fprintf(stderr, "  prefix of %zu bytes accepted\n", i);
			break;
		}
	}
	/* not a ClientHello; an odd cipher list; an extension past its block */
	m.b[0] = 2;
	CHECK(parse(&m, m.len, &cap, 64) == -1);
	free(cap);
	hello(&m, ciphers, sizeof(ciphers) - 1, NULL, 0);
	CHECK(parse(&m, m.len, &cap, 64) == -1);
	free(cap);
	hello(&m, ciphers, sizeof(ciphers), exts, sizeof(exts));
	m.b[m.len - 4] = 0x09;     /* supported_versions claims 9 bytes */
	CHECK(parse(&m, m.len, &cap, 64) == -1);
	free(cap);
}

int main(void)
{
	test_names();
	test_dates();
	test_capture();
	return t_done("test_ssl_fields");
}
