/* Unit tests of the ClientHello parser (src/net/ssl_hello.c), of the
 * req.ssl_* fetches over it (src/expr/fetch_ssl_hello.c) and of the
 * version patterns of the req.ssl_ver ACL.
 *
 * The real hellos below were sent by `openssl s_client` (OpenSSL 3.0.19) to
 * a listener that recorded the first bytes it received:
 *   tls13_sni_alpn  -servername b.example -alpn h2,http/1.1 (TLS 1.3)
 *   tls12_ticket    -tls1_2 -servername a.example -sess_in <a saved session>
 *                   (a 176-byte session ticket)
 *   tls13_nosni     -noservername
 *   tls10           -tls1 -servername old.example
 * The others are built here, field by field (see hello_build()).
 * Expected answers marked "HAProxy 2.6" were checked against Debian's
 * haproxy 2.6.12 (tests/compat/ssl_hello_diff.py).
 */
#include <stdlib.h>
#include <string.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/pattern.h>
#include <sluice/expr/sample.h>
#include <sluice/net/ssl_hello.h>
#include "t.h"

static const unsigned char tls13_sni_alpn[] = {
	0x16, 0x03, 0x01, 0x01, 0x48, 0x01, 0x00, 0x01, 0x44, 0x03, 0x03, 0x7e,
	0x5c, 0x74, 0x61, 0xc3, 0x09, 0xc2, 0xfb, 0x28, 0x7b, 0xe8, 0x79, 0x44,
	0xc9, 0xb1, 0x81, 0x3b, 0x9c, 0x16, 0x1e, 0xcc, 0xc7, 0xf3, 0x99, 0xc3,
	0x9b, 0xf2, 0xc4, 0x49, 0xf2, 0x7b, 0x3a, 0x20, 0xcf, 0x56, 0x99, 0x94,
	0xc4, 0x75, 0x6e, 0xc0, 0x3d, 0xbb, 0xc1, 0xd3, 0xf3, 0x70, 0xdd, 0x92,
	0x6f, 0x0b, 0xc7, 0x6d, 0xdf, 0x89, 0xf9, 0x4f, 0x61, 0x99, 0xca, 0x29,
	0x08, 0xf1, 0xd5, 0x16, 0x00, 0x3e, 0x13, 0x02, 0x13, 0x03, 0x13, 0x01,
	0xc0, 0x2c, 0xc0, 0x30, 0x00, 0x9f, 0xcc, 0xa9, 0xcc, 0xa8, 0xcc, 0xaa,
	0xc0, 0x2b, 0xc0, 0x2f, 0x00, 0x9e, 0xc0, 0x24, 0xc0, 0x28, 0x00, 0x6b,
	0xc0, 0x23, 0xc0, 0x27, 0x00, 0x67, 0xc0, 0x0a, 0xc0, 0x14, 0x00, 0x39,
	0xc0, 0x09, 0xc0, 0x13, 0x00, 0x33, 0x00, 0x9d, 0x00, 0x9c, 0x00, 0x3d,
	0x00, 0x3c, 0x00, 0x35, 0x00, 0x2f, 0x00, 0xff, 0x01, 0x00, 0x00, 0xbd,
	0x00, 0x00, 0x00, 0x0e, 0x00, 0x0c, 0x00, 0x00, 0x09, 0x62, 0x2e, 0x65,
	0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x00, 0x0b, 0x00, 0x04, 0x03, 0x00,
	0x01, 0x02, 0x00, 0x0a, 0x00, 0x16, 0x00, 0x14, 0x00, 0x1d, 0x00, 0x17,
	0x00, 0x1e, 0x00, 0x19, 0x00, 0x18, 0x01, 0x00, 0x01, 0x01, 0x01, 0x02,
	0x01, 0x03, 0x01, 0x04, 0x00, 0x23, 0x00, 0x00, 0x00, 0x10, 0x00, 0x0e,
	0x00, 0x0c, 0x02, 0x68, 0x32, 0x08, 0x68, 0x74, 0x74, 0x70, 0x2f, 0x31,
	0x2e, 0x31, 0x00, 0x16, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00, 0x00, 0x0d,
	0x00, 0x2a, 0x00, 0x28, 0x04, 0x03, 0x05, 0x03, 0x06, 0x03, 0x08, 0x07,
	0x08, 0x08, 0x08, 0x09, 0x08, 0x0a, 0x08, 0x0b, 0x08, 0x04, 0x08, 0x05,
	0x08, 0x06, 0x04, 0x01, 0x05, 0x01, 0x06, 0x01, 0x03, 0x03, 0x03, 0x01,
	0x03, 0x02, 0x04, 0x02, 0x05, 0x02, 0x06, 0x02, 0x00, 0x2b, 0x00, 0x09,
	0x08, 0x03, 0x04, 0x03, 0x03, 0x03, 0x02, 0x03, 0x01, 0x00, 0x2d, 0x00,
	0x02, 0x01, 0x01, 0x00, 0x33, 0x00, 0x26, 0x00, 0x24, 0x00, 0x1d, 0x00,
	0x20, 0x77, 0xc2, 0x73, 0x89, 0xa4, 0x5d, 0xd8, 0x2c, 0xd1, 0x35, 0xa6,
	0xc3, 0x26, 0x0c, 0x21, 0x4c, 0x23, 0x4f, 0x6d, 0x68, 0x63, 0xde, 0x6f,
	0x58, 0x70, 0xd8, 0x34, 0x28, 0x0b, 0xec, 0x87, 0x7b,
};

static const unsigned char tls12_ticket[] = {
	0x16, 0x03, 0x01, 0x01, 0x99, 0x01, 0x00, 0x01, 0x95, 0x03, 0x03, 0x98,
	0x2c, 0xa7, 0x31, 0x7c, 0xa7, 0x6c, 0x40, 0x63, 0x33, 0xc5, 0x7d, 0xcf,
	0x7d, 0xc3, 0xda, 0x75, 0xa3, 0xea, 0x51, 0x63, 0x61, 0xa8, 0xa4, 0xa7,
	0xa1, 0x84, 0x02, 0x63, 0x52, 0xff, 0xce, 0x20, 0x4d, 0x81, 0x53, 0x48,
	0x7e, 0xde, 0x1b, 0x76, 0x62, 0xda, 0x8d, 0x82, 0x7c, 0x8a, 0x97, 0x6c,
	0x66, 0x92, 0xbe, 0x32, 0x17, 0xa7, 0xf6, 0xeb, 0x2b, 0xaa, 0xea, 0x13,
	0xc9, 0x99, 0x68, 0xb6, 0x00, 0x38, 0xc0, 0x2c, 0xc0, 0x30, 0x00, 0x9f,
	0xcc, 0xa9, 0xcc, 0xa8, 0xcc, 0xaa, 0xc0, 0x2b, 0xc0, 0x2f, 0x00, 0x9e,
	0xc0, 0x24, 0xc0, 0x28, 0x00, 0x6b, 0xc0, 0x23, 0xc0, 0x27, 0x00, 0x67,
	0xc0, 0x0a, 0xc0, 0x14, 0x00, 0x39, 0xc0, 0x09, 0xc0, 0x13, 0x00, 0x33,
	0x00, 0x9d, 0x00, 0x9c, 0x00, 0x3d, 0x00, 0x3c, 0x00, 0x35, 0x00, 0x2f,
	0x00, 0xff, 0x01, 0x00, 0x01, 0x14, 0x00, 0x00, 0x00, 0x0e, 0x00, 0x0c,
	0x00, 0x00, 0x09, 0x61, 0x2e, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65,
	0x00, 0x0b, 0x00, 0x04, 0x03, 0x00, 0x01, 0x02, 0x00, 0x0a, 0x00, 0x0c,
	0x00, 0x0a, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x1e, 0x00, 0x19, 0x00, 0x18,
	0x00, 0x23, 0x00, 0xb0, 0xc8, 0x66, 0x1e, 0xee, 0xe9, 0x5e, 0xbd, 0xda,
	0x23, 0x02, 0xbd, 0x95, 0x2a, 0xd5, 0x01, 0xb3, 0x2f, 0xae, 0x71, 0x74,
	0xb4, 0xed, 0x5e, 0x75, 0x49, 0x9c, 0xad, 0x57, 0x06, 0xef, 0x0f, 0x50,
	0x84, 0x25, 0x33, 0x72, 0x24, 0x6b, 0xa6, 0x15, 0x1f, 0xfd, 0x67, 0x81,
	0x08, 0xac, 0x1d, 0xf2, 0x7f, 0xd9, 0x8a, 0xe4, 0x09, 0xd1, 0x9b, 0x6c,
	0x36, 0x51, 0x65, 0x33, 0x63, 0x34, 0x19, 0x76, 0xb6, 0xf0, 0x65, 0x12,
	0xbc, 0xf5, 0x45, 0xac, 0x14, 0xaf, 0x61, 0x30, 0xff, 0x9b, 0x5e, 0x7e,
	0x29, 0xe9, 0xba, 0xdb, 0x9a, 0x25, 0x9f, 0x84, 0x5b, 0xc1, 0xc8, 0x16,
	0x79, 0x28, 0x60, 0xd7, 0x09, 0x8b, 0x6f, 0x05, 0xbe, 0x8e, 0x45, 0xe3,
	0xc2, 0xf8, 0xf3, 0x32, 0xfa, 0x7c, 0xd4, 0xd5, 0xcf, 0x56, 0xe2, 0x93,
	0xa0, 0x65, 0x37, 0x88, 0x89, 0x17, 0x34, 0xf1, 0x33, 0x93, 0x1a, 0x0e,
	0x26, 0xec, 0x38, 0x1d, 0x57, 0xe3, 0x90, 0xa1, 0x35, 0x2b, 0xf6, 0x37,
	0xc5, 0xa4, 0xe2, 0x92, 0x09, 0x89, 0x3c, 0x3e, 0x6f, 0x20, 0xb8, 0x26,
	0x16, 0x18, 0x4a, 0xf1, 0xb8, 0xc7, 0x58, 0x07, 0x13, 0x05, 0xb9, 0x83,
	0x6e, 0xea, 0x52, 0x70, 0x98, 0x87, 0xb1, 0x8a, 0x0e, 0x9e, 0x93, 0x9d,
	0x00, 0x16, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x2a,
	0x00, 0x28, 0x04, 0x03, 0x05, 0x03, 0x06, 0x03, 0x08, 0x07, 0x08, 0x08,
	0x08, 0x09, 0x08, 0x0a, 0x08, 0x0b, 0x08, 0x04, 0x08, 0x05, 0x08, 0x06,
	0x04, 0x01, 0x05, 0x01, 0x06, 0x01, 0x03, 0x03, 0x03, 0x01, 0x03, 0x02,
	0x04, 0x02, 0x05, 0x02, 0x06, 0x02,
};

static const unsigned char tls13_nosni[] = {
	0x16, 0x03, 0x01, 0x01, 0x24, 0x01, 0x00, 0x01, 0x20, 0x03, 0x03, 0x0f,
	0x48, 0xfe, 0xbf, 0x9d, 0x0d, 0x51, 0x25, 0xfa, 0xcb, 0x3d, 0xee, 0x75,
	0x96, 0xbc, 0xcb, 0x49, 0x19, 0x5f, 0xd7, 0x6d, 0x3c, 0x17, 0xe7, 0xa0,
	0x59, 0x47, 0x57, 0xaf, 0x57, 0x67, 0xe1, 0x20, 0xd2, 0x2a, 0x9e, 0x08,
	0xde, 0x37, 0x8a, 0x3a, 0x30, 0xc2, 0xac, 0xcd, 0x3b, 0x02, 0xd8, 0x74,
	0xaf, 0xe1, 0xa7, 0x80, 0xe5, 0x68, 0xc2, 0x2c, 0x23, 0xe1, 0xce, 0xa2,
	0xb9, 0x41, 0x2c, 0xf2, 0x00, 0x3e, 0x13, 0x02, 0x13, 0x03, 0x13, 0x01,
	0xc0, 0x2c, 0xc0, 0x30, 0x00, 0x9f, 0xcc, 0xa9, 0xcc, 0xa8, 0xcc, 0xaa,
	0xc0, 0x2b, 0xc0, 0x2f, 0x00, 0x9e, 0xc0, 0x24, 0xc0, 0x28, 0x00, 0x6b,
	0xc0, 0x23, 0xc0, 0x27, 0x00, 0x67, 0xc0, 0x0a, 0xc0, 0x14, 0x00, 0x39,
	0xc0, 0x09, 0xc0, 0x13, 0x00, 0x33, 0x00, 0x9d, 0x00, 0x9c, 0x00, 0x3d,
	0x00, 0x3c, 0x00, 0x35, 0x00, 0x2f, 0x00, 0xff, 0x01, 0x00, 0x00, 0x99,
	0x00, 0x0b, 0x00, 0x04, 0x03, 0x00, 0x01, 0x02, 0x00, 0x0a, 0x00, 0x16,
	0x00, 0x14, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x1e, 0x00, 0x19, 0x00, 0x18,
	0x01, 0x00, 0x01, 0x01, 0x01, 0x02, 0x01, 0x03, 0x01, 0x04, 0x00, 0x23,
	0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00, 0x00, 0x0d,
	0x00, 0x2a, 0x00, 0x28, 0x04, 0x03, 0x05, 0x03, 0x06, 0x03, 0x08, 0x07,
	0x08, 0x08, 0x08, 0x09, 0x08, 0x0a, 0x08, 0x0b, 0x08, 0x04, 0x08, 0x05,
	0x08, 0x06, 0x04, 0x01, 0x05, 0x01, 0x06, 0x01, 0x03, 0x03, 0x03, 0x01,
	0x03, 0x02, 0x04, 0x02, 0x05, 0x02, 0x06, 0x02, 0x00, 0x2b, 0x00, 0x09,
	0x08, 0x03, 0x04, 0x03, 0x03, 0x03, 0x02, 0x03, 0x01, 0x00, 0x2d, 0x00,
	0x02, 0x01, 0x01, 0x00, 0x33, 0x00, 0x26, 0x00, 0x24, 0x00, 0x1d, 0x00,
	0x20, 0xee, 0xeb, 0x4d, 0xff, 0xc5, 0x16, 0xb0, 0x60, 0x25, 0x53, 0xcc,
	0x03, 0x16, 0xcd, 0x64, 0xf3, 0x6b, 0x03, 0x1f, 0x59, 0xef, 0x7e, 0xc0,
	0x72, 0x4d, 0x54, 0xeb, 0x12, 0x5b, 0x4d, 0x82, 0x7d,
};

static const unsigned char tls10[] = {
	0x16, 0x03, 0x01, 0x00, 0x77, 0x01, 0x00, 0x00, 0x73, 0x03, 0x01, 0xe7,
	0x86, 0x04, 0x3d, 0x6b, 0xc5, 0x8f, 0x94, 0x20, 0x00, 0x41, 0xfa, 0xb5,
	0x0f, 0x4f, 0x2c, 0x0d, 0x17, 0x74, 0xc1, 0xb7, 0xbe, 0x6e, 0x35, 0x10,
	0x78, 0x30, 0xe9, 0x1d, 0xd9, 0x10, 0xd0, 0x00, 0x00, 0x12, 0xc0, 0x0a,
	0xc0, 0x14, 0x00, 0x39, 0xc0, 0x09, 0xc0, 0x13, 0x00, 0x33, 0x00, 0x35,
	0x00, 0x2f, 0x00, 0xff, 0x01, 0x00, 0x00, 0x38, 0x00, 0x00, 0x00, 0x10,
	0x00, 0x0e, 0x00, 0x00, 0x0b, 0x6f, 0x6c, 0x64, 0x2e, 0x65, 0x78, 0x61,
	0x6d, 0x70, 0x6c, 0x65, 0x00, 0x0b, 0x00, 0x04, 0x03, 0x00, 0x01, 0x02,
	0x00, 0x0a, 0x00, 0x0c, 0x00, 0x0a, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x1e,
	0x00, 0x19, 0x00, 0x18, 0x00, 0x23, 0x00, 0x00, 0x00, 0x16, 0x00, 0x00,
	0x00, 0x17, 0x00, 0x00,
};

struct sample_hello {
	const char *name;
	const unsigned char *p;
	size_t len;
	unsigned int version, max_version;
	const char *sni;            /* NULL: none */
	const char *alpn;           /* names separated by ',', NULL: none */
	size_t ticket_len;
	unsigned int flags;
};

#define ALL_EXT (SSL_CH_F_EXTENSIONS | SSL_CH_F_GROUPS | SSL_CH_F_POINT_FORMATS | SSL_CH_F_TICKET)

static const struct sample_hello samples[] = {
	{ "tls13_sni_alpn", tls13_sni_alpn, sizeof(tls13_sni_alpn), 0x0303, 0x0304, "b.example",
	  "h2,http/1.1", 0, ALL_EXT | SSL_CH_F_SNI | SSL_CH_F_ALPN | SSL_CH_F_VERSIONS },
	{ "tls12_ticket", tls12_ticket, sizeof(tls12_ticket), 0x0303, 0x0303, "a.example", NULL,
	  176, ALL_EXT | SSL_CH_F_SNI },
	{ "tls13_nosni", tls13_nosni, sizeof(tls13_nosni), 0x0303, 0x0304, NULL, NULL, 0,
	  ALL_EXT | SSL_CH_F_VERSIONS },
	{ "tls10", tls10, sizeof(tls10), 0x0301, 0x0301, "old.example", NULL, 0,
	  ALL_EXT | SSL_CH_F_SNI },
};
#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

static unsigned char scratch[65536];

/* ------------------------------------------------------------------ a builder */

/* A byte buffer the tests compose hellos in. */
struct hb {
	unsigned char b[70000];
	size_t len;
};

static void put(struct hb *h, const void *p, size_t n)
{
	memcpy(h->b + h->len, p, n);
	h->len += n;
}

static void put8(struct hb *h, unsigned int v)
{
	h->b[h->len++] = (unsigned char)v;
}

static void put16(struct hb *h, unsigned int v)
{
	put8(h, v >> 8);
	put8(h, v);
}

static void put24(struct hb *h, unsigned int v)
{
	put8(h, v >> 16);
	put16(h, v & 0xffff);
}

/* One extension: type(2) length(2) data. */
static void ext(struct hb *h, unsigned int type, const void *data, size_t len)
{
	put16(h, type);
	put16(h, (unsigned int)len);
	put(h, data, len);
}

/* server_name with one host_name entry */
static void ext_sni(struct hb *h, const char *name)
{
	struct hb d = { .len = 0 };
	size_t n = strlen(name);

	put16(&d, (unsigned int)(n + 3));   /* ServerNameList length */
	put8(&d, 0);                        /* NameType host_name */
	put16(&d, (unsigned int)n);         /* HostName length */
	put(&d, name, n);
	ext(h, SSL_EXT_SERVER_NAME, d.b, d.len);
}

/* ALPN from "a,b,c" */
static void ext_alpn(struct hb *h, const char *names)
{
	struct hb d = { .len = 2 };

	for (const char *p = names; *p;) {
		size_t n = strcspn(p, ",");

		put8(&d, (unsigned int)n);
		put(&d, p, n);
		p += n + (p[n] == ',');
	}
	d.b[0] = (unsigned char)((d.len - 2) >> 8);
	d.b[1] = (unsigned char)(d.len - 2);
	ext(h, SSL_EXT_ALPN, d.b, d.len);
}

/* The body of a ClientHello: legacy_version, a random of 32 'R', a session
 * id of <sid_len> 'S', <nciphers> cipher suites, the null compression
 * method, then the extensions block <exts> (omitted when NULL). */
static void hello_body(struct hb *h, unsigned int version, size_t sid_len, size_t nciphers,
                       const struct hb *exts)
{
	unsigned char r[32];

	memset(r, 'R', sizeof(r));
	put16(h, version);
	put(h, r, sizeof(r));
	put8(h, (unsigned int)sid_len);
	for (size_t i = 0; i < sid_len; i++)
		put8(h, 'S');
	put16(h, (unsigned int)(2 * nciphers));
	for (size_t i = 0; i < nciphers; i++)
		put16(h, 0x1301 + (unsigned int)i);   /* TLS_AES_128_GCM_SHA256... */
	put8(h, 1);                                 /* one compression method: */
	put8(h, 0);                                 /* null */
	if (exts) {
		put16(h, (unsigned int)exts->len);
		put(h, exts->b, exts->len);
	}
}

/* A handshake message of <type> around <body>, in one record, or cut in
 * records of at most <frag> bytes of payload (0: one record). */
static void records(struct hb *out, unsigned int type, const struct hb *body, size_t frag)
{
	struct hb msg = { .len = 0 };
	size_t off = 0;

	put8(&msg, type);
	put24(&msg, (unsigned int)body->len);
	put(&msg, body->b, body->len);
	if (!frag)
		frag = msg.len;
	while (off < msg.len) {
		size_t n = msg.len - off < frag ? msg.len - off : frag;

		put8(out, SSL_REC_HANDSHAKE);
		put16(out, 0x0301);
		put16(out, (unsigned int)n);
		put(out, msg.b + off, n);
		off += n;
	}
}

/* The usual hello of these tests: TLS 1.3 offered, SNI, ALPN, groups,
 * point formats, an empty session ticket; <extra> (may be NULL) appended
 * to its extensions. */
static void hello_build(struct hb *out, const struct hb *extra, size_t frag)
{
	static const unsigned char groups[] = { 0x00, 0x04, 0x00, 0x1d, 0x00, 0x17 };
	static const unsigned char formats[] = { 0x01, 0x00 };
	static const unsigned char versions[] = { 0x04, 0x03, 0x04, 0x03, 0x03 };
	struct hb exts = { .len = 0 }, body = { .len = 0 };

	ext_sni(&exts, "www.example.com");
	ext_alpn(&exts, "h2,http/1.1");
	ext(&exts, SSL_EXT_SUPPORTED_GROUPS, groups, sizeof(groups));
	ext(&exts, SSL_EXT_EC_POINT_FORMATS, formats, sizeof(formats));
	ext(&exts, SSL_EXT_SESSION_TICKET, "", 0);
	ext(&exts, SSL_EXT_SUPPORTED_VERSIONS, versions, sizeof(versions));
	if (extra)
		put(&exts, extra->b, extra->len);
	hello_body(&body, 0x0303, 32, 3, &exts);
	records(out, SSL_HS_CLIENT_HELLO, &body, frag);
}

/* Parses a built body (no record): the status. */
static enum ssl_hello_status body_status(const struct hb *body)
{
	struct ssl_client_hello ch;

	return ssl_client_hello_parse_body(body->b, body->len, &ch);
}

/* A hello whose extensions are exactly <exts>: the status of its body. */
static enum ssl_hello_status exts_status(const struct hb *exts, struct ssl_client_hello *ch)
{
	struct hb body = { .len = 0 };

	hello_body(&body, 0x0303, 0, 1, exts);
	return ssl_client_hello_parse_body(body.b, body.len, ch);
}

static int span_is(const unsigned char *p, size_t len, const char *s)
{
	return p && len == strlen(s) && memcmp(p, s, len) == 0;
}

/* The ALPN names of <ch> joined with ',' */
static const char *alpn_list(const struct ssl_client_hello *ch)
{
	static char out[512];
	const unsigned char *name;
	size_t pos = 0, n, o = 0;

	out[0] = 0;
	while (ssl_alpn_next(ch, &pos, &name, &n) && o + n + 2 < sizeof(out)) {
		if (o)
			out[o++] = ',';
		memcpy(out + o, name, n);
		o += n;
		out[o] = 0;
	}
	return ch->alpn ? out : NULL;
}

/* ------------------------------------------------------------------ real hellos */

static void check_sample(const struct sample_hello *s, const struct ssl_client_hello *ch)
{
	const char *alpn = alpn_list(ch);

	CHECK(ch->version == s->version);
	CHECK(ch->max_version == s->max_version);
	CHECK(s->sni ? span_is(ch->sni, ch->sni_len, s->sni) : ch->sni == NULL);
	CHECK(s->alpn ? (alpn && strcmp(alpn, s->alpn) == 0) : alpn == NULL);
	CHECK(ch->ticket_len == s->ticket_len);
	CHECK(ch->flags == s->flags || (fprintf(stderr, "  %s: flags %#x\n", s->name, ch->flags), 0));
}

static void test_real_hellos(void)
{
	for (size_t i = 0; i < NSAMPLES; i++) {
		const struct sample_hello *s = &samples[i];
		struct ssl_client_hello ch;
		struct ssl_hs_msg msg;
		unsigned int v = 0;

		CHECK(ssl_hs_first_msg(s->p, s->len, NULL, 0, &msg) == SSL_HELLO_OK);
		CHECK(msg.type == SSL_HS_CLIENT_HELLO && msg.nrecords == 1);
		CHECK(msg.body == s->p + 9 && msg.len == s->len - 9);
		CHECK(ssl_client_hello_parse(s->p, s->len, NULL, 0, &ch) == SSL_HELLO_OK);
		check_sample(s, &ch);
		/* pointers into the input */
		CHECK(ch.random == s->p + 11);
		CHECK(ch.ciphers > ch.random && ch.extensions > ch.ciphers);
		CHECK(ch.extensions + ch.extensions_len == s->p + s->len);
		CHECK(ssl_hello_version(s->p, s->len, scratch, sizeof(scratch), &v) == SSL_HELLO_OK);
		CHECK(v == s->version);
	}
	{
		struct ssl_client_hello ch;

		CHECK(ssl_client_hello_parse(tls13_sni_alpn, sizeof(tls13_sni_alpn), NULL, 0, &ch) == 0);
		CHECK(ch.session_id_len == 32 && ch.ciphers_len == 62 && ch.compression_len == 1);
		CHECK(ch.nextensions == 11);
	}
}

/* Every proper prefix may still become the hello; the hello followed by
 * anything is the hello. */
static void test_truncation(void)
{
	for (size_t i = 0; i < NSAMPLES; i++) {
		const struct sample_hello *s = &samples[i];
		struct ssl_client_hello ch;
		struct ssl_hs_msg msg;
		unsigned char more[1024];
		unsigned int v;
		int bad = 0;

		for (size_t l = 0; l < s->len; l++) {
			/* a copy of exactly <l> bytes: a read past them is seen by ASan */
			unsigned char *p = malloc(l ? l : 1);

			memcpy(p, s->p, l);
			bad += ssl_hs_first_msg(p, l, scratch, sizeof(scratch), &msg) != SSL_HELLO_INCOMPLETE;
			bad += ssl_client_hello_parse(p, l, scratch, sizeof(scratch), &ch) != SSL_HELLO_INCOMPLETE;
			bad += ssl_hello_version(p, l, scratch, sizeof(scratch), &v) != SSL_HELLO_INCOMPLETE;
			free(p);
		}
		CHECK(bad == 0 || (fprintf(stderr, "  %s: %d prefixes not incomplete\n", s->name, bad), 0));

		/* application data after it (a client does not wait) */
		memcpy(more, s->p, s->len);
		memcpy(more + s->len, "\x17\x03\x03\x00\x05hello", 10);
		CHECK(ssl_client_hello_parse(more, s->len + 10, NULL, 0, &ch) == SSL_HELLO_OK);
		check_sample(s, &ch);
		/* a record longer than the message: the message is enough */
		more[3] = (unsigned char)((s->len - 5 + 10) >> 8);
		more[4] = (unsigned char)(s->len - 5 + 10);
		CHECK(ssl_client_hello_parse(more, s->len, NULL, 0, &ch) == SSL_HELLO_OK);
	}
}

/* The handshake bytes of a one-record sample (its message), re-cut into
 * records at <cuts> (offsets in the message, increasing, 0-terminated). */
static void recut(const struct sample_hello *s, const size_t *cuts, struct hb *out)
{
	const unsigned char *m = s->p + 5;
	size_t mlen = s->len - 5, from = 0;

	out->len = 0;
	for (int i = 0;; i++) {
		size_t to = cuts[i] ? cuts[i] : mlen;

		put8(out, SSL_REC_HANDSHAKE);
		put16(out, 0x0303);
		put16(out, (unsigned int)(to - from));
		put(out, m + from, to - from);
		if (!cuts[i])
			break;
		from = to;
	}
}

/* RFC 8446 5.1: a handshake message may be split over several records. */
static void test_fragmentation(void)
{
	static struct hb h;

	for (size_t i = 0; i < NSAMPLES; i++) {
		const struct sample_hello *s = &samples[i];
		size_t mlen = s->len - 5;
		int bad = 0;

		for (size_t cut = 1; cut < mlen; cut++) {
			size_t cuts[] = { cut, 0 };
			struct ssl_client_hello ch;
			struct ssl_hs_msg msg;

			recut(s, cuts, &h);
			if (ssl_client_hello_parse(h.b, h.len, scratch, sizeof(scratch), &ch) != SSL_HELLO_OK) {
				bad++;
				continue;
			}
			check_sample(s, &ch);
			/* without a scratch buffer (or too small a one): known,
			 * but not readable */
			bad += ssl_hs_first_msg(h.b, h.len, NULL, 0, &msg) != SSL_HELLO_OK ||
			       msg.body || msg.nrecords != 2 || msg.type != 1;
			bad += ssl_client_hello_parse(h.b, h.len, NULL, 0, &ch) != SSL_HELLO_INVALID;
			bad += ssl_client_hello_parse(h.b, h.len, scratch, mlen - 5, &ch) !=
			       SSL_HELLO_INVALID;
			/* every prefix of the two records is incomplete */
			for (size_t l = 0; l < h.len; l += 7)
				bad += ssl_client_hello_parse(h.b, l, scratch, sizeof(scratch), &ch) !=
				       SSL_HELLO_INCOMPLETE;
		}
		CHECK(bad == 0 || (fprintf(stderr, "  %s: %d bad splits\n", s->name, bad), 0));
	}
	{
		/* one record per byte of the message */
		const struct sample_hello *s = &samples[0];
		size_t cuts[400], n = 0;
		struct ssl_client_hello ch;
		struct ssl_hs_msg msg;
		unsigned int v;

		for (size_t c = 1; c < s->len - 5; c++)
			cuts[n++] = c;
		cuts[n] = 0;
		recut(s, cuts, &h);
		CHECK(h.len == (s->len - 5) * 6);
		CHECK(ssl_client_hello_parse(h.b, h.len, scratch, sizeof(scratch), &ch) == SSL_HELLO_OK);
		check_sample(s, &ch);
		CHECK(ssl_hs_first_msg(h.b, h.len, scratch, sizeof(scratch), &msg) == SSL_HELLO_OK &&
		      msg.nrecords == s->len - 5);
		CHECK(ssl_hello_version(h.b, h.len, scratch, sizeof(scratch), &v) == SSL_HELLO_OK &&
		      v == 0x0303);
		/* the header alone over two records */
		{
			size_t c2[] = { 2, 0 };
			unsigned char *p;

			recut(s, c2, &h);
			p = h.b + 7;               /* the second record */
			CHECK(ssl_client_hello_parse(h.b, h.len, scratch, sizeof(scratch), &ch) == 0);
			p[0] = 23;                 /* application data in the middle */
			CHECK(ssl_client_hello_parse(h.b, h.len, scratch, sizeof(scratch), &ch) ==
			      SSL_HELLO_INVALID);
			CHECK(ssl_client_hello_parse(h.b, 8, scratch, sizeof(scratch), &ch) ==
			      SSL_HELLO_INVALID);
			p[0] = 22;
			p[1] = 2;                  /* SSL 2 record version */
			CHECK(ssl_client_hello_parse(h.b, h.len, scratch, sizeof(scratch), &ch) ==
			      SSL_HELLO_INVALID);
			p[1] = 3;
			p[3] = p[4] = 0;           /* empty record */
			CHECK(ssl_client_hello_parse(h.b, h.len, scratch, sizeof(scratch), &ch) ==
			      SSL_HELLO_INVALID);
		}
	}
	{
		/* built hellos of 3 records, and a message just over a record */
		struct hb b = { .len = 0 };
		struct ssl_client_hello ch;

		hello_build(&b, NULL, 40);
		CHECK(ssl_client_hello_parse(b.b, b.len, scratch, sizeof(scratch), &ch) == SSL_HELLO_OK);
		CHECK(span_is(ch.sni, ch.sni_len, "www.example.com"));
		CHECK(ch.sni >= scratch && ch.sni < scratch + sizeof(scratch));
	}
}

/* ------------------------------------------------------------------ records */

static void test_records(void)
{
	struct ssl_hs_msg msg;
	struct ssl_client_hello ch;
	unsigned int v;
	unsigned char b[64];

	/* judged on the first byte: not a handshake record */
	for (unsigned int t = 0; t < 256; t++) {
		b[0] = (unsigned char)t;
		if (t == 22)
			CHECK(ssl_hs_first_msg(b, 1, NULL, 0, &msg) == SSL_HELLO_INCOMPLETE);
		else
			CHECK(ssl_hs_first_msg(b, 1, NULL, 0, &msg) == SSL_HELLO_INVALID);
	}
	/* record version: major 3 and above */
	CHECK(ssl_hs_first_msg((const unsigned char *)"\x16\x02", 2, NULL, 0, &msg) ==
	      SSL_HELLO_INVALID);
	CHECK(ssl_hs_first_msg((const unsigned char *)"\x16\x03", 2, NULL, 0, &msg) ==
	      SSL_HELLO_INCOMPLETE);
	CHECK(ssl_hs_first_msg((const unsigned char *)"\x16\x04\x00\x00", 4, NULL, 0, &msg) ==
	      SSL_HELLO_INCOMPLETE);
	/* an empty record */
	CHECK(ssl_hs_first_msg((const unsigned char *)"\x16\x03\x01\x00\x00", 5, NULL, 0, &msg) ==
	      SSL_HELLO_INVALID);
	/* an empty ClientHello: a complete message that does not parse */
	memcpy(b, "\x16\x03\x01\x00\x04\x01\x00\x00\x00", 9);
	CHECK(ssl_hs_first_msg(b, 9, NULL, 0, &msg) == SSL_HELLO_OK && msg.type == 1 && !msg.len);
	CHECK(ssl_client_hello_parse(b, 9, NULL, 0, &ch) == SSL_HELLO_INVALID);
	CHECK(ssl_hello_version(b, 9, NULL, 0, &v) == SSL_HELLO_INVALID);
	{
		/* another handshake type (ServerHello): its type, but no
		 * ClientHello */
		unsigned char t[sizeof(tls10)];

		memcpy(t, tls10, sizeof(t));
		t[5] = 2;
		CHECK(ssl_hs_first_msg(t, sizeof(t), NULL, 0, &msg) == SSL_HELLO_OK && msg.type == 2);
		CHECK(ssl_client_hello_parse(t, sizeof(t), NULL, 0, &ch) == SSL_HELLO_INVALID);
		CHECK(ssl_hello_version(t, sizeof(t), NULL, 0, &v) == SSL_HELLO_INVALID);
		/* a message length over the record: the rest must come in
		 * another record */
		memcpy(t, tls10, sizeof(t));
		t[8]++;
		CHECK(ssl_client_hello_parse(t, sizeof(t), scratch, sizeof(scratch), &ch) ==
		      SSL_HELLO_INCOMPLETE);
		/* a record length short of the message: what follows the
		 * record is not a record */
		memcpy(t, tls10, sizeof(t));
		t[4]--;
		CHECK(ssl_client_hello_parse(t, sizeof(t), scratch, sizeof(scratch), &ch) ==
		      SSL_HELLO_INVALID);
	}
}

/* ------------------------------------------------------------------ ClientHello body */

static void test_body(void)
{
	struct ssl_client_hello ch;
	struct hb exts, body, h;

	/* the built hello */
	h.len = 0;
	hello_build(&h, NULL, 0);
	CHECK(ssl_client_hello_parse(h.b, h.len, NULL, 0, &ch) == SSL_HELLO_OK);
	CHECK(span_is(ch.sni, ch.sni_len, "www.example.com"));
	CHECK(strcmp(alpn_list(&ch), "h2,http/1.1") == 0);
	CHECK(ch.max_version == 0x0304 && ch.version == 0x0303);
	CHECK(ch.session_id_len == 32 && ch.ciphers_len == 6 && ch.nextensions == 6);

	/* session id: 0 to 32 bytes */
	body.len = 0;
	hello_body(&body, 0x0303, 32, 1, NULL);
	CHECK(body_status(&body) == SSL_HELLO_OK);
	body.len = 0;
	hello_body(&body, 0x0303, 33, 1, NULL);
	CHECK(body_status(&body) == SSL_HELLO_INVALID);
	/* cipher suites: at least one, 2 bytes each */
	body.len = 0;
	hello_body(&body, 0x0303, 0, 0, NULL);
	CHECK(body_status(&body) == SSL_HELLO_INVALID);
	body.len = 0;
	hello_body(&body, 0x0303, 0, 2, NULL);
	body.b[35] = 3;                               /* cipher_suites length 3 */
	CHECK(body_status(&body) == SSL_HELLO_INVALID);
	body.b[35] = 0xff;                            /* past the end */
	CHECK(body_status(&body) == SSL_HELLO_INVALID);
	/* compression methods: at least one */
	body.len = 0;
	hello_body(&body, 0x0303, 0, 1, NULL);
	body.b[body.len - 2] = 0;
	body.len--;
	CHECK(body_status(&body) == SSL_HELLO_INVALID);
	/* no extensions block: a valid (old) hello without extensions */
	body.len = 0;
	hello_body(&body, 0x0301, 0, 1, NULL);
	CHECK(ssl_client_hello_parse_body(body.b, body.len, &ch) == SSL_HELLO_OK);
	CHECK(ch.flags == 0 && !ch.extensions && ch.max_version == 0x0301);
	/* one byte where the extensions length should be */
	body.b[body.len++] = 0;
	CHECK(body_status(&body) == SSL_HELLO_INVALID);
	/* an empty extensions block */
	body.b[body.len++] = 0;
	CHECK(ssl_client_hello_parse_body(body.b, body.len, &ch) == SSL_HELLO_OK);
	CHECK(ch.flags == SSL_CH_F_EXTENSIONS && ch.nextensions == 0);
	/* an SSLv3 hello parses (the fetches ignore it, as HAProxy 2.6) */
	body.len = 0;
	hello_body(&body, 0x0300, 0, 1, NULL);
	CHECK(ssl_client_hello_parse_body(body.b, body.len, &ch) == SSL_HELLO_OK &&
	      ch.version == 0x0300);

	/* the extensions block must be filled exactly */
	exts.len = 0;
	ext_sni(&exts, "a.example");
	body.len = 0;
	hello_body(&body, 0x0303, 0, 1, &exts);
	CHECK(body_status(&body) == SSL_HELLO_OK);
	body.b[body.len++] = 0;                       /* a byte after the block */
	CHECK(body_status(&body) == SSL_HELLO_INVALID);
	body.len -= 2;                                /* the block one byte short */
	CHECK(body_status(&body) == SSL_HELLO_INVALID);
	exts.len = 0;                                 /* an extension past the block */
	ext_sni(&exts, "a.example");
	put16(&exts, 0x1234);
	put16(&exts, 10);
	put(&exts, "abc", 3);
	CHECK(exts_status(&exts, &ch) == SSL_HELLO_INVALID);
	exts.len = 0;                                 /* a truncated extension header */
	put16(&exts, 0x1234);
	put8(&exts, 0);
	CHECK(exts_status(&exts, &ch) == SSL_HELLO_INVALID);
	/* unknown extensions are skipped, even twice (GREASE, padding) */
	exts.len = 0;
	ext(&exts, 0x0a0a, "", 0);
	ext(&exts, 0x0a0a, "\0", 1);
	ext(&exts, 21, "\0\0\0\0", 4);
	ext_sni(&exts, "a.example");
	CHECK(exts_status(&exts, &ch) == SSL_HELLO_OK && ch.nextensions == 4);
	CHECK(span_is(ch.sni, ch.sni_len, "a.example"));
	/* an interpreted extension twice */
	ext_sni(&exts, "b.example");
	CHECK(exts_status(&exts, &ch) == SSL_HELLO_INVALID);
	exts.len = 0;
	ext(&exts, SSL_EXT_SESSION_TICKET, "", 0);
	ext(&exts, SSL_EXT_SESSION_TICKET, "T", 1);
	CHECK(exts_status(&exts, &ch) == SSL_HELLO_INVALID);
}

static void test_sni(void)
{
	struct ssl_client_hello ch;
	struct hb exts;

#define SNI_RAW(bytes, status) do { \
		exts.len = 0; \
		ext(&exts, SSL_EXT_SERVER_NAME, bytes, sizeof(bytes) - 1); \
		CHECK(exts_status(&exts, &ch) == (status)); \
	} while (0)

	SNI_RAW("\x00\x0c\x00\x00\x09" "a.example", SSL_HELLO_OK);
	CHECK(span_is(ch.sni, ch.sni_len, "a.example") && (ch.flags & SSL_CH_F_SNI));
	SNI_RAW("", SSL_HELLO_INVALID);                               /* no list */
	SNI_RAW("\x00\x00", SSL_HELLO_INVALID);                       /* empty list */
	SNI_RAW("\x00\x03\x00\x00\x00", SSL_HELLO_INVALID);           /* empty name */
	SNI_RAW("\x00\x0c\x00\x00\x20" "a.example", SSL_HELLO_INVALID); /* name past the list */
	SNI_RAW("\x00\x40\x00\x00\x09" "a.example", SSL_HELLO_INVALID); /* list past the extension */
	SNI_RAW("\x00\x0a\x00\x00\x09" "a.example", SSL_HELLO_INVALID); /* list short of it */
	SNI_RAW("\x00\x0c\x00\x00\x09" "a.example" "\x00", SSL_HELLO_INVALID); /* extra byte */
	/* two host names: the first one */
	SNI_RAW("\x00\x18\x00\x00\x09" "a.example" "\x00\x00\x09" "b.example", SSL_HELLO_OK);
	CHECK(span_is(ch.sni, ch.sni_len, "a.example"));
	/* the first entry of another type: no name (as OpenSSL and HAProxy 2.6) */
	SNI_RAW("\x00\x12\x01\x00\x03" "abc" "\x00\x00\x09" "a.example", SSL_HELLO_OK);
	CHECK(!ch.sni && (ch.flags & SSL_CH_F_SNI));
	/* a name is given as sent */
	SNI_RAW("\x00\x0d\x00\x00\x0a" "A.Ex\0ample", SSL_HELLO_OK);
	CHECK(ch.sni_len == 10 && memcmp(ch.sni, "A.Ex\0ample", 10) == 0);
	{
		/* the longest name that fits an extension */
		static char name[65536 - 4 - 3 - 2];

		memset(name, 'x', sizeof(name) - 1);
		exts.len = 0;
		ext_sni(&exts, name);
		CHECK(exts_status(&exts, &ch) == SSL_HELLO_OK && ch.sni_len == sizeof(name) - 1);
	}
#undef SNI_RAW
}

static void test_alpn(void)
{
	struct ssl_client_hello ch;
	struct hb exts;

#define ALPN_RAW(bytes, status) do { \
		exts.len = 0; \
		ext(&exts, SSL_EXT_ALPN, bytes, sizeof(bytes) - 1); \
		CHECK(exts_status(&exts, &ch) == (status)); \
	} while (0)

	exts.len = 0;
	ext_alpn(&exts, "h3,h2,http/1.1,acme-tls/1");
	CHECK(exts_status(&exts, &ch) == SSL_HELLO_OK);
	CHECK(strcmp(alpn_list(&ch), "h3,h2,http/1.1,acme-tls/1") == 0);
	ALPN_RAW("\x00\x03\x02h2", SSL_HELLO_OK);
	CHECK(strcmp(alpn_list(&ch), "h2") == 0);
	ALPN_RAW("", SSL_HELLO_INVALID);                 /* no list */
	ALPN_RAW("\x00\x00", SSL_HELLO_INVALID);         /* empty list */
	ALPN_RAW("\x00\x01\x00", SSL_HELLO_INVALID);     /* one empty name */
	ALPN_RAW("\x00\x04\x02h2\x00", SSL_HELLO_INVALID); /* an empty name after one */
	ALPN_RAW("\x00\x03\x05h2", SSL_HELLO_INVALID);   /* name past the list */
	ALPN_RAW("\x00\x03\x02h2junk", SSL_HELLO_INVALID); /* list short of the extension */
	ALPN_RAW("\x00\x09\x02h2junk", SSL_HELLO_INVALID); /* list past it */
	/* no extension: nothing to walk */
	exts.len = 0;
	CHECK(exts_status(&exts, &ch) == SSL_HELLO_OK && alpn_list(&ch) == NULL);
#undef ALPN_RAW
}

static void test_versions_ext(void)
{
	struct ssl_client_hello ch;
	struct hb exts;

#define SV(bytes, status, max) do { \
		exts.len = 0; \
		ext(&exts, SSL_EXT_SUPPORTED_VERSIONS, bytes, sizeof(bytes) - 1); \
		CHECK(exts_status(&exts, &ch) == (status)); \
		if ((status) == SSL_HELLO_OK) \
			CHECK(ch.max_version == (max)); \
	} while (0)

	SV("\x02\x03\x04", SSL_HELLO_OK, 0x0304);
	SV("\x06\x7a\x7a\x03\x04\x03\x03", SSL_HELLO_OK, 0x0304);  /* GREASE first */
	SV("\x02\xfa\xfa", SSL_HELLO_OK, 0x0303);                  /* only GREASE: legacy_version */
	SV("\x04\x03\x03\x03\x02", SSL_HELLO_OK, 0x0303);
	SV("\x00", SSL_HELLO_INVALID, 0);
	SV("\x03\x03\x04\x03", SSL_HELLO_INVALID, 0);              /* odd */
	SV("\x02\x03\x04\x00", SSL_HELLO_INVALID, 0);              /* extra byte */
	SV("", SSL_HELLO_INVALID, 0);
	/* the other interpreted ones only tell they are there */
	exts.len = 0;
	ext(&exts, SSL_EXT_SUPPORTED_GROUPS, "", 0);
	ext(&exts, SSL_EXT_SESSION_TICKET, "ticket", 6);
	CHECK(exts_status(&exts, &ch) == SSL_HELLO_OK);
	CHECK(ch.flags == (SSL_CH_F_EXTENSIONS | SSL_CH_F_GROUPS | SSL_CH_F_TICKET));
	CHECK(ch.ticket_len == 6);
#undef SV
}

/* ------------------------------------------------------------------ SSLv2 */

/* An SSLv2-compatible CLIENT-HELLO: 3 cipher specs, no session id, a
 * 16-byte challenge; a 2-byte header, or a 3-byte one with <pad> bytes of
 * padding. */
static void sslv2_build(struct hb *h, unsigned int version, int three, unsigned int pad)
{
	static const unsigned char specs[] = { 0x00, 0x00, 0x04, 0x00, 0x00, 0x05, 0x00, 0x00, 0x0a };
	size_t rlen = 9 + sizeof(specs) + 16;

	h->len = 0;
	if (three) {
		put16(h, (unsigned int)rlen);
		put8(h, pad);
	} else {
		put16(h, 0x8000 | (unsigned int)rlen);
	}
	put8(h, 1);                      /* CLIENT-HELLO */
	put16(h, version);
	put16(h, sizeof(specs));         /* cipher_spec_length */
	put16(h, 0);                     /* session_id_length */
	put16(h, 16);                    /* challenge_length */
	put(h, specs, sizeof(specs));
	put(h, "CCCCCCCCCCCCCCCC", 16);
	for (unsigned int i = 0; i < pad; i++)
		put8(h, 'P');
}

static void test_sslv2(void)
{
	struct hb h;
	unsigned int v = 0;
	int bad = 0;

	sslv2_build(&h, 0x0301, 0, 0);
	CHECK(ssl_hello_version(h.b, h.len, NULL, 0, &v) == SSL_HELLO_OK && v == 0x0301);
	for (size_t l = 0; l < h.len; l++)
		bad += ssl_hello_version(h.b, l, NULL, 0, &v) != SSL_HELLO_INCOMPLETE;
	sslv2_build(&h, 0x0002, 1, 2);
	CHECK(ssl_hello_version(h.b, h.len, NULL, 0, &v) == SSL_HELLO_OK && v == 0x0002);
	for (size_t l = 0; l < h.len; l++)
		bad += ssl_hello_version(h.b, l, NULL, 0, &v) != SSL_HELLO_INCOMPLETE;
	CHECK(bad == 0);
	/* no ClientHello over an SSLv2 header for the other fetches */
	{
		struct ssl_client_hello ch;
		struct ssl_hs_msg msg;

		CHECK(ssl_client_hello_parse(h.b, h.len, NULL, 0, &ch) == SSL_HELLO_INVALID);
		CHECK(ssl_hs_first_msg(h.b, h.len, NULL, 0, &msg) == SSL_HELLO_INVALID);
	}
	sslv2_build(&h, 0x0301, 0, 0);
	h.b[2] = 4;                                     /* not a CLIENT-HELLO */
	CHECK(ssl_hello_version(h.b, 3, NULL, 0, &v) == SSL_HELLO_INVALID);
	sslv2_build(&h, 0x0301, 0, 0);
	h.b[6] = 8;                                     /* cipher specs: 8 bytes */
	CHECK(ssl_hello_version(h.b, h.len, NULL, 0, &v) == SSL_HELLO_INVALID);
	sslv2_build(&h, 0x0301, 0, 0);
	h.b[8] = 8;                                     /* an 8-byte session id */
	CHECK(ssl_hello_version(h.b, h.len, NULL, 0, &v) == SSL_HELLO_INVALID);
	sslv2_build(&h, 0x0301, 0, 0);
	h.b[10] = 15;                                   /* a 15-byte challenge */
	CHECK(ssl_hello_version(h.b, h.len, NULL, 0, &v) == SSL_HELLO_INVALID);
	h.b[10] = 33;
	CHECK(ssl_hello_version(h.b, h.len, NULL, 0, &v) == SSL_HELLO_INVALID);
	sslv2_build(&h, 0x0301, 0, 0);
	h.b[1]++;                                       /* record length off */
	CHECK(ssl_hello_version(h.b, h.len, NULL, 0, &v) == SSL_HELLO_INVALID);
	/* other records are no hello; text is none either (HAProxy 2.6 reads
	 * a first byte without the high bit as a 3-byte header: "G" may
	 * still be one) */
	CHECK(ssl_hello_version((const unsigned char *)"\x17\x03\x03\x00\x10", 5, NULL, 0, &v) ==
	      SSL_HELLO_INVALID);
	CHECK(ssl_hello_version((const unsigned char *)"\x15", 1, NULL, 0, &v) == SSL_HELLO_INVALID);
	CHECK(ssl_hello_version((const unsigned char *)"\xff", 1, NULL, 0, &v) == SSL_HELLO_INVALID);
	CHECK(ssl_hello_version((const unsigned char *)"GET / HTTP/1.0\r\n", 16, NULL, 0, &v) ==
	      SSL_HELLO_INVALID);
	CHECK(ssl_hello_version((const unsigned char *)"G", 1, NULL, 0, &v) == SSL_HELLO_INCOMPLETE);
	CHECK(ssl_hello_version((const unsigned char *)"", 0, NULL, 0, &v) == SSL_HELLO_INCOMPLETE);
}

/* ------------------------------------------------------------------ fetches */

static struct smp_ctx ctx;
static struct acl_list acls;
static char err[512];

/* Evaluates <expr> over <data>: its value as text, "<fail>" or "<wait>"
 * (no value, and SMP_F_MAY_CHANGE). */
static const char *eval(const char *expr, const void *data, size_t len, int final)
{
	static char out[512];
	struct sample_expr *e = sample_expr_parse(expr, NULL, err, sizeof(err));
	struct sample smp;

	if (!e)
		return err;
	ctx.req_data = (struct ist){ (const char *)data, len };
	ctx.final = final;
	memset(&smp, 0, sizeof(smp));
	if (!sample_expr_eval(e, &ctx, &smp))
		snprintf(out, sizeof(out), "%s", (smp.flags & SMP_F_MAY_CHANGE) ? "<wait>" : "<fail>");
	else
		out[smp_to_text(&smp, out, sizeof(out) - 1)] = 0;
	sample_expr_free(e);
	return out;
}

#define EXPECT(expr, data, len, want) do { \
		const char *got_ = eval(expr, data, len, 0); \
		CHECK(strcmp(got_, want) == 0 || \
		      (fprintf(stderr, "  %s: \"%s\", not \"%s\"\n", expr, got_, want), 0)); \
	} while (0)

static void test_fetches(void)
{
	static struct hb h, b;
	static const char *const all[] = {
		"req.ssl_hello_type", "req_ssl_hello_type", "req.ssl_ver", "req_ssl_ver",
		"req.ssl_sni", "req_ssl_sni", "req.ssl_alpn", "req.ssl_ec_ext", "req.ssl_st_ext",
	};
	const unsigned char *p = tls13_sni_alpn;
	size_t n = sizeof(tls13_sni_alpn);

	EXPECT("req.ssl_hello_type", p, n, "1");
	EXPECT("req_ssl_hello_type", p, n, "1");
	EXPECT("req.ssl_ver", p, n, "196611");               /* 3.3, legacy_version */
	EXPECT("req_ssl_ver", p, n, "196611");
	EXPECT("req.ssl_sni", p, n, "b.example");
	EXPECT("req_ssl_sni", p, n, "b.example");
	EXPECT("req.ssl_alpn", p, n, "h2");                  /* the first */
	EXPECT("req.ssl_ec_ext", p, n, "1");
	EXPECT("req.ssl_st_ext", p, n, "1");
	EXPECT("req.ssl_sni,upper", p, n, "B.EXAMPLE");
	EXPECT("req.ssl_st_ext", tls12_ticket, sizeof(tls12_ticket), "2");
	EXPECT("req.ssl_alpn", tls12_ticket, sizeof(tls12_ticket), "<fail>");
	EXPECT("req.ssl_sni", tls13_nosni, sizeof(tls13_nosni), "<fail>");
	EXPECT("req.ssl_ver", tls10, sizeof(tls10), "196609");  /* 3.1 */
	EXPECT("req.ssl_sni", tls10, sizeof(tls10), "old.example");

	/* while the hello is incomplete every fetch waits, and fails once no
	 * more data will come */
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		EXPECT(all[i], p, 0, "<wait>");
		EXPECT(all[i], p, 1, "<wait>");
		EXPECT(all[i], p, n - 1, "<wait>");
		CHECK(strcmp(eval(all[i], p, n - 1, 1), "<fail>") == 0);
		/* bytes that are no TLS: at once */
		EXPECT(all[i], "\x17\x03\x03\x00\x01", 5, "<fail>");
		EXPECT(all[i], "GET / HTTP/1.1\r\n", 16, "<fail>");
		/* an HTTP stream: no raw request */
		EXPECT(all[i], NULL, 0, "<fail>");
	}
	/* HAProxy 2.6 reads a first byte without the high bit as an SSLv2
	 * 3-byte header: req.ssl_ver waits for a fourth byte */
	EXPECT("req.ssl_ver", "GE", 2, "<wait>");
	EXPECT("req.ssl_sni", "GE", 2, "<fail>");
	EXPECT("req.ssl_hello_type", "GE", 2, "<fail>");

	/* SSLv2 CLIENT-HELLO: a version only */
	sslv2_build(&h, 0x0301, 0, 0);
	EXPECT("req.ssl_ver", h.b, h.len, "196609");
	EXPECT("req.ssl_ver", h.b, h.len - 1, "<wait>");
	EXPECT("req.ssl_hello_type", h.b, h.len, "<fail>");
	EXPECT("req.ssl_sni", h.b, h.len, "<fail>");

	/* a hello split over records: gathered */
	h.len = 0;
	hello_build(&h, NULL, 50);
	EXPECT("req.ssl_sni", h.b, h.len, "www.example.com");
	EXPECT("req.ssl_alpn", h.b, h.len, "h2");
	EXPECT("req.ssl_hello_type", h.b, h.len, "1");
	EXPECT("req.ssl_ver", h.b, h.len, "196611");
	EXPECT("req.ssl_sni", h.b, h.len - 1, "<wait>");
	EXPECT("req.ssl_hello_type", h.b, h.len - 1, "<wait>");

	/* no supported_groups: false; no session_ticket: 0 (HAProxy 2.6 has
	 * no value for ec_ext there, see doc/configuration.md) */
	b.len = 0;
	hello_body(&b, 0x0303, 0, 1, NULL);
	h.len = 0;
	records(&h, SSL_HS_CLIENT_HELLO, &b, 0);
	EXPECT("req.ssl_ec_ext", h.b, h.len, "0");
	EXPECT("req.ssl_st_ext", h.b, h.len, "0");
	EXPECT("req.ssl_sni", h.b, h.len, "<fail>");
	EXPECT("req.ssl_hello_type", h.b, h.len, "1");
	/* an SSLv3 hello: its version, no extension fetch (HAProxy 2.6) */
	b.len = 0;
	hello_body(&b, 0x0300, 0, 1, NULL);
	h.len = 0;
	records(&h, SSL_HS_CLIENT_HELLO, &b, 0);
	EXPECT("req.ssl_ver", h.b, h.len, "196608");
	EXPECT("req.ssl_st_ext", h.b, h.len, "<fail>");
	/* a malformed hello: its type and version, no extension */
	h.len = 0;
	hello_build(&h, NULL, 0);
	h.b[h.len++] = 0;
	h.b[4]++;
	h.b[8]++;
	EXPECT("req.ssl_hello_type", h.b, h.len, "1");
	EXPECT("req.ssl_ver", h.b, h.len, "196611");
	EXPECT("req.ssl_sni", h.b, h.len, "<fail>");
	EXPECT("req.ssl_ec_ext", h.b, h.len, "<fail>");
	/* a ServerHello-typed message: its type only */
	h.len = 0;
	hello_body(&b, 0x0303, 0, 1, NULL);
	records(&h, 2, &b, 0);
	EXPECT("req.ssl_hello_type", h.b, h.len, "2");
	EXPECT("req.ssl_ver", h.b, h.len, "<fail>");
}

/* Evaluates the condition "if { <words> }" over <data>: 'P', 'F', 'M' or
 * 'E' (does not parse). */
static char cond(const char *words, const void *data, size_t len)
{
	char buf[1024], *w[64];
	struct acl_cond *c;
	enum acl_test_res r;
	int n = 0;

	snprintf(buf, sizeof(buf), "if { %s }", words);
	for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < 64;
	     t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	c = acl_cond_parse(w, n, &acls, "test.cfg", 1, err, sizeof(err));
	if (!c)
		return 'E';
	ctx.req_data = (struct ist){ (const char *)data, len };
	ctx.final = 0;
	r = acl_cond_eval(c, &ctx);
	acl_cond_free(c);
	return r == ACL_TEST_PASS ? 'P' : r == ACL_TEST_MISS ? 'M' : 'F';
}

#define COND(words, data, len, want) do { \
		char got_ = cond(words, data, len); \
		CHECK(got_ == (want) || \
		      (fprintf(stderr, "  { %s }: %c, not %c (%s)\n", words, got_, want, err), 0)); \
	} while (0)

static void test_acls(void)
{
	const unsigned char *p = tls13_sni_alpn, *q = tls10;
	size_t n = sizeof(tls13_sni_alpn), m = sizeof(tls10);

	/* req.ssl_sni and req_ssl_sni: exact string, -i folds case */
	COND("req.ssl_sni b.example", p, n, 'P');
	COND("req_ssl_sni -i B.EXAMPLE", p, n, 'P');
	COND("req_ssl_sni B.EXAMPLE", p, n, 'F');
	COND("req.ssl_sni -m end .example", p, n, 'P');
	COND("req.ssl_sni b.example", p, n - 1, 'M');
	COND("req.ssl_sni b.example", "GET /", 5, 'F');
	/* every ALPN name is tried */
	COND("req.ssl_alpn http/1.1", p, n, 'P');
	COND("req.ssl_alpn h2", p, n, 'P');
	COND("req.ssl_alpn h3", p, n, 'F');
	COND("req.ssl_alpn -m found", tls12_ticket, sizeof(tls12_ticket), 'F');
	/* the hello type, the booleans */
	COND("req.ssl_hello_type 1", p, n, 'P');
	COND("req_ssl_hello_type 1", p, 3, 'M');
	COND("req.ssl_ec_ext", p, n, 'P');
	COND("req.ssl_st_ext 1", p, n, 'P');
	COND("req.ssl_st_ext 2", tls12_ticket, sizeof(tls12_ticket), 'P');
	/* versions, written MAJOR.MINOR */
	COND("req.ssl_ver 3.3", p, n, 'P');
	COND("req_ssl_ver 3.3", p, n, 'P');
	COND("req.ssl_ver 3:3.1", p, n, 'F');
	COND("req.ssl_ver 3:3.1", q, m, 'P');
	COND("req.ssl_ver 3.2:", p, n, 'P');
	COND("req.ssl_ver :3.2", q, m, 'P');
	COND("req.ssl_ver gt 3.1", p, n, 'P');
	COND("req.ssl_ver gt 3.1", q, m, 'F');
	COND("req.ssl_ver ge 3.1", q, m, 'P');
	COND("req.ssl_ver lt 3.3", q, m, 'P');
	COND("req.ssl_ver lt 3.3", p, n, 'F');
	COND("req.ssl_ver le 3.1", q, m, 'P');
	COND("req.ssl_ver eq 3.3", p, n, 'P');
	COND("req.ssl_ver 3.01", q, m, 'P');
	/* -m int, or converters: plain integers (HAProxy 2.6) */
	COND("req.ssl_ver -m int 196611", p, n, 'P');
	COND("req.ssl_ver -m int 3.3", p, n, 'E');
	COND("req.ssl_ver,add(1) 196612", p, n, 'P');
	COND("req.ssl_ver,add(1) 3.3", p, n, 'E');
	/* what HAProxy 2.6 refuses */
	COND("req.ssl_ver 3.1.2", p, n, 'E');
	CHECK(strstr(err, "'3.1.2' is not a dotted number"));
	COND("req.ssl_ver 65536.1", p, n, 'E');
	COND("req.ssl_ver 3.", p, n, 'E');
	COND("req.ssl_ver .1", p, n, 'E');
	COND("req.ssl_ver +3.1", p, n, 'E');
	COND("req.ssl_ver 3.2:3.1", p, n, 'E');
	CHECK(strstr(err, "'3.2:3.1' is not a valid dotted number range"));
	COND("req.ssl_ver :", p, n, 'E');
	COND("req.ssl_ver gt x", p, n, 'E');
	COND("req.ssl_ver 65535.65535", p, n, 'F');
}

static void test_dotted_patterns(void)
{
	char key[64];

	CHECK(pat_check(PAT_MATCH_INT, PAT_F_DOTTED_VER, SMP_T_ANY, "3.1", NULL, err,
	                sizeof(err)) == 0);
	CHECK(pat_check(PAT_MATCH_INT, PAT_F_DOTTED_VER, SMP_T_ANY, "3:4.2", NULL, err,
	                sizeof(err)) == 0);
	CHECK(pat_check(PAT_MATCH_INT, PAT_F_DOTTED_VER, SMP_T_ANY, "-3", NULL, err,
	                sizeof(err)) < 0);
	CHECK(pat_check(PAT_MATCH_INT, 0, SMP_T_ANY, "3.1", NULL, err, sizeof(err)) < 0);
	CHECK(pat_dotted_op_key(PAT_OP_GT, "3.1", key, sizeof(key), err, sizeof(err)) == 0 &&
	      strcmp(key, "3.2:") == 0);
	CHECK(pat_dotted_op_key(PAT_OP_GT, "3.65535", key, sizeof(key), err, sizeof(err)) == 0 &&
	      strcmp(key, "4.0:") == 0);
	CHECK(pat_dotted_op_key(PAT_OP_LT, "3.0", key, sizeof(key), err, sizeof(err)) == 0 &&
	      strcmp(key, ":2.65535") == 0);
	CHECK(pat_dotted_op_key(PAT_OP_LE, "3", key, sizeof(key), err, sizeof(err)) == 0 &&
	      strcmp(key, ":3.0") == 0);
	CHECK(pat_dotted_op_key(PAT_OP_GE, "3.3", key, sizeof(key), err, sizeof(err)) == 0 &&
	      strcmp(key, "3.3:") == 0);
	CHECK(pat_dotted_op_key(PAT_OP_EQ, "3.3", key, sizeof(key), err, sizeof(err)) == 0 &&
	      strcmp(key, "3.3") == 0);
	CHECK(pat_dotted_op_key(PAT_OP_GT, "65535.65535", key, sizeof(key), err, sizeof(err)) < 0);
	CHECK(pat_dotted_op_key(PAT_OP_LT, "0.0", key, sizeof(key), err, sizeof(err)) < 0);
	CHECK(pat_dotted_op_key(PAT_OP_GT, "x", key, sizeof(key), err, sizeof(err)) < 0);
}

int main(void)
{
	acl_list_init(&acls);
	test_real_hellos();
	test_truncation();
	test_fragmentation();
	test_records();
	test_body();
	test_sni();
	test_alpn();
	test_versions_ext();
	test_sslv2();
	test_fetches();
	test_acls();
	test_dotted_patterns();
	acl_list_free(&acls);
	pat_refs_free_all();
	return t_done("test_ssl_hello");
}
