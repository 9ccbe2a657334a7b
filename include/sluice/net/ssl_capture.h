/* What a client offered in its ClientHello, kept for the sample fetches
 * ssl_fc_cipherlist_*, ssl_fc_extlist_bin, ssl_fc_eclist_bin,
 * ssl_fc_ecformats_bin and ssl_fc_protocol_hello_id (JA3 fingerprints),
 * when `tune.ssl.capture-buffer-size` is above 0, as in HAProxy 2.6
 * (src/net/ssl_capture.c). */
#ifndef SLUICE_NET_SSL_CAPTURE_H
#define SLUICE_NET_SSL_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>

/* The lists as they came, two bytes per cipher, extension type and group,
 * one per point format, one after the other in data[]: ciphers, extension
 * types, groups, point formats. Together they are cut to the capture size
 * (in that order, each getting what the previous left); the hash is of
 * the whole cipher list. */
struct ssl_capture {
	uint64_t ciphers_xxh64;      /* XXH64, seed 0, of the cipher list */
	uint16_t hello_version;      /* legacy_version (0x0303 for TLS 1.2 and 1.3) */
	uint16_t ciphers_len;        /* bytes kept of each list */
	uint16_t ext_len;
	uint16_t groups_len;
	uint16_t formats_len;
	unsigned char data[];
};

static inline const unsigned char *ssl_capture_ciphers(const struct ssl_capture *c)
{
	return c->data;
}

static inline const unsigned char *ssl_capture_ext(const struct ssl_capture *c)
{
	return c->data + c->ciphers_len;
}

static inline const unsigned char *ssl_capture_groups(const struct ssl_capture *c)
{
	return c->data + c->ciphers_len + c->ext_len;
}

static inline const unsigned char *ssl_capture_formats(const struct ssl_capture *c)
{
	return c->data + c->ciphers_len + c->ext_len + c->groups_len;
}

/* Reads a ClientHello handshake message (RFC 8446 4.1.2: the 4-byte
 * handshake header, then the body) into <cap>, keeping at most <room>
 * bytes of lists in cap->data. Returns 0, or -1 if the message is not a
 * well-formed ClientHello. Pure. */
int ssl_capture_parse(const unsigned char *msg, size_t len, struct ssl_capture *cap,
                      size_t room);

/* Captures the ClientHello of every connection of <ctx> (a bind line's
 * context), keeping <size> bytes. Configuration time. 0 or -1. */
int ssl_capture_enable(SSL_CTX *ctx, size_t size);

/* The capture of a connection, or NULL (capture off, or none made). */
const struct ssl_capture *ssl_capture_get(const SSL *ssl);

/* Copies the 2-byte values of <in> that are not GREASE values (RFC 8701:
 * 0x0A0A, 0x1A1A... 0xFAFA) to <out>, which has room for <inlen> bytes.
 * An odd last byte is kept. Returns the length written. */
size_t ssl_capture_no_grease(const unsigned char *in, size_t inlen, unsigned char *out);

#endif
