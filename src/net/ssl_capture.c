/* ClientHello capture for the JA3-style sample fetches (see
 * include/sluice/net/ssl_capture.h).
 *
 * OpenSSL's client-hello callback API loses the extensions it does not
 * know (GREASE values among them, RFC 8701), which a fingerprint needs, so
 * the raw message is read instead: a message callback, installed on a bind
 * line's contexts only when `tune.ssl.capture-buffer-size` is set, sees
 * every handshake message once reassembled, and parses the first
 * ClientHello of the connection. The capture lives in the SSL's ex_data
 * (freed with it). It costs a malloc per handshake, next to the many that
 * OpenSSL makes for the SSL object itself, and only when enabled.
 *
 * The callback runs inside SSL_do_handshake(), on the connection's owner
 * thread; the capture is read by the same thread afterwards.
 */
#include <stdlib.h>
#include <string.h>
#include <sluice/expr/hash.h>
#include <sluice/net/ssl_capture.h>

static int ssl_ex_idx_capture = -1;

#define EXT_SUPPORTED_GROUPS   10   /* RFC 8422 5.1.1, RFC 8446 4.2.7 */
#define EXT_EC_POINT_FORMATS   11   /* RFC 8422 5.1.2 */

struct rd {
	const unsigned char *p, *end;
};

static int rd_u8(struct rd *r, size_t *v)
{
	if (r->end - r->p < 1)
		return -1;
	*v = r->p[0];
	r->p += 1;
	return 0;
}

static int rd_u16(struct rd *r, size_t *v)
{
	if (r->end - r->p < 2)
		return -1;
	*v = (size_t)r->p[0] << 8 | r->p[1];
	r->p += 2;
	return 0;
}

/* <len> bytes into <sub>, skipped in <r>. */
static int rd_sub(struct rd *r, size_t len, struct rd *sub)
{
	if ((size_t)(r->end - r->p) < len)
		return -1;
	sub->p = r->p;
	sub->end = r->p + len;
	r->p += len;
	return 0;
}

/* Appends what fits of <len> bytes; returns the length kept. */
static uint16_t keep(struct ssl_capture *cap, size_t *used, size_t room,
                     const unsigned char *p, size_t len)
{
	if (len > room - *used)
		len = room - *used;
	if (len > UINT16_MAX)
		len = UINT16_MAX;
	memcpy(cap->data + *used, p, len);
	*used += len;
	return (uint16_t)len;
}

int ssl_capture_parse(const unsigned char *msg, size_t len, struct ssl_capture *cap,
                      size_t room)
{
	struct rd r = { msg, msg + len }, body, sid, ciphers, comp, exts, groups = { 0 }, fmts = { 0 };
	size_t type, blen, v, n, used = 0;

	memset(cap, 0, sizeof(*cap));
	if (rd_u8(&r, &type) < 0 || type != SSL3_MT_CLIENT_HELLO || r.end - r.p < 3)
		return -1;
	blen = (size_t)r.p[0] << 16 | (size_t)r.p[1] << 8 | r.p[2];
	r.p += 3;
	if (rd_sub(&r, blen, &body) < 0)
		return -1;
	if (rd_u16(&body, &v) < 0 || body.end - body.p < 32)
		return -1;
	cap->hello_version = (uint16_t)v;
	body.p += 32;                                  /* random */
	if (rd_u8(&body, &n) < 0 || n > 32 || rd_sub(&body, n, &sid) < 0)
		return -1;
	if (rd_u16(&body, &n) < 0 || (n & 1) || rd_sub(&body, n, &ciphers) < 0)
		return -1;
	if (rd_u8(&body, &n) < 0 || rd_sub(&body, n, &comp) < 0)
		return -1;
	cap->ciphers_xxh64 = hash_xxh64(ciphers.p, (size_t)(ciphers.end - ciphers.p), 0);
	cap->ciphers_len = keep(cap, &used, room, ciphers.p, (size_t)(ciphers.end - ciphers.p));
	if (body.p == body.end)
		return 0;                              /* no extensions (TLS 1.2 allows it) */
	if (rd_u16(&body, &n) < 0 || rd_sub(&body, n, &exts) < 0)
		return -1;
	while (exts.p < exts.end) {
		const unsigned char *tp = exts.p;
		struct rd data;

		if (rd_u16(&exts, &type) < 0 || rd_u16(&exts, &n) < 0 || rd_sub(&exts, n, &data) < 0)
			return -1;
		cap->ext_len += keep(cap, &used, room, tp, 2);
		if (type == EXT_SUPPORTED_GROUPS && !groups.p) {
			if (rd_u16(&data, &n) < 0 || rd_sub(&data, n, &groups) < 0)
				return -1;
		} else if (type == EXT_EC_POINT_FORMATS && !fmts.p) {
			if (rd_u8(&data, &n) < 0 || rd_sub(&data, n, &fmts) < 0)
				return -1;
		}
	}
	if (groups.p)
		cap->groups_len = keep(cap, &used, room, groups.p, (size_t)(groups.end - groups.p));
	if (fmts.p)
		cap->formats_len = keep(cap, &used, room, fmts.p, (size_t)(fmts.end - fmts.p));
	return 0;
}

size_t ssl_capture_no_grease(const unsigned char *in, size_t inlen, unsigned char *out)
{
	size_t i, o = 0;

	for (i = 0; i + 1 < inlen; i += 2) {
		if (in[i] == in[i + 1] && (in[i] & 0x0f) == 0x0a)
			continue;
		out[o++] = in[i];
		out[o++] = in[i + 1];
	}
	if (i < inlen)
		out[o++] = in[i];
	return o;
}

/* ------------------------------------------------------------ run time */

static void capture_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                         void *argp)
{
	free(ptr);
}

static void capture_msg_cb(int write_p, int version, int content_type, const void *buf,
                           size_t len, SSL *ssl, void *arg)
{
	size_t room = (size_t)(uintptr_t)arg;
	struct ssl_capture *cap;

	if (write_p || content_type != SSL3_RT_HANDSHAKE || len < 4 ||
	    ((const unsigned char *)buf)[0] != SSL3_MT_CLIENT_HELLO)
		return;
	if (SSL_get_ex_data(ssl, ssl_ex_idx_capture))
		return;                /* a second ClientHello (after a HelloRetryRequest) */
	cap = malloc(sizeof(*cap) + room);
	if (!cap)
		return;
	if (ssl_capture_parse(buf, len, cap, room) < 0 ||
	    !SSL_set_ex_data(ssl, ssl_ex_idx_capture, cap))
		free(cap);
}

int ssl_capture_enable(SSL_CTX *ctx, size_t size)
{
	if (ssl_ex_idx_capture < 0)
		ssl_ex_idx_capture = SSL_get_ex_new_index(0, NULL, NULL, NULL, capture_free);
	if (ssl_ex_idx_capture < 0)
		return -1;
	SSL_CTX_set_msg_callback(ctx, capture_msg_cb);
	SSL_CTX_set_msg_callback_arg(ctx, (void *)(uintptr_t)size);
	return 0;
}

const struct ssl_capture *ssl_capture_get(const SSL *ssl)
{
	return ssl_ex_idx_capture < 0 ? NULL : SSL_get_ex_data(ssl, ssl_ex_idx_capture);
}
