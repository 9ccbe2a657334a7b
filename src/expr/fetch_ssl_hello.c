/* Sample fetches over a TLS ClientHello waiting in the request buffer,
 * read without terminating TLS (manual section 7.3.5): req.ssl_hello_type,
 * req.ssl_ver, req.ssl_sni, req.ssl_alpn, req.ssl_ec_ext, req.ssl_st_ext
 * and the deprecated req_ssl_* names. The parsing is src/net/ssl_hello.c.
 *
 * They see the raw request buffer (ctx->req_data), as req.payload does:
 * in TCP mode, and in tcp-request content rules of HTTP frontends; nothing
 * once a request was parsed as HTTP. While the bytes there are a prefix of
 * what the fetch looks for, it fails with SMP_F_MAY_CHANGE, so that a
 * `tcp-request content` rule waits for more data (up to
 * `tcp-request inspect-delay`); as soon as the bytes rule it out, it fails
 * without it, and the rule goes on at once.
 *
 * A ClientHello split over several records is gathered into one of the
 * thread's sample scratch buffers, which a string result may then point
 * to. No shared state.
 */
#include <string.h>
#include <sluice/expr/sample.h>
#include <sluice/net/ssl_hello.h>

const int expr_fetch_ssl_hello_anchor;

#define F(name) static int smp_fetch_##name(const struct smp_args *args, \
	struct sample *smp, struct smp_ctx *ctx)
F(hello_type); F(ver); F(sni); F(alpn); F(ec_ext); F(st_ext);
#undef F

static const struct smp_fetch_kw ssl_hello_fetches[] = {
	{ "req.ssl_hello_type", smp_fetch_hello_type, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L6REQ },
	{ "req_ssl_hello_type", smp_fetch_hello_type, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L6REQ },
	{ "req.ssl_ver",        smp_fetch_ver,        { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L6REQ },
	{ "req_ssl_ver",        smp_fetch_ver,        { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L6REQ },
	{ "req.ssl_sni",        smp_fetch_sni,        { 0 }, 0, NULL, SMP_T_STR,  SMP_USE_L6REQ },
	{ "req_ssl_sni",        smp_fetch_sni,        { 0 }, 0, NULL, SMP_T_STR,  SMP_USE_L6REQ },
	{ "req.ssl_alpn",       smp_fetch_alpn,       { 0 }, 0, NULL, SMP_T_STR,  SMP_USE_L6REQ },
	{ "req.ssl_ec_ext",     smp_fetch_ec_ext,     { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_L6REQ },
	{ "req.ssl_st_ext",     smp_fetch_st_ext,     { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L6REQ },
	{ NULL }
};
SMP_REGISTER_FETCHES(ssl_hello_fetches)

/* The status of the request buffer: 0 with MAY_CHANGE set when more data
 * may change the answer, 0 when no hello is there, 1 when one is. */
static int status_result(enum ssl_hello_status st, struct sample *smp)
{
	if (st == SSL_HELLO_INCOMPLETE)
		smp->flags |= SMP_F_MAY_CHANGE;
	return st == SSL_HELLO_OK;
}

/* The type of the first handshake message, once it is whole. */
static int smp_fetch_hello_type(const struct smp_args *args, struct sample *smp,
                                struct smp_ctx *ctx)
{
	const unsigned char *p = (const unsigned char *)ctx->req_data.ptr;
	struct ssl_hs_msg msg;

	if (!p || !status_result(ssl_hs_first_msg(p, ctx->req_data.len, NULL, 0, &msg), smp))
		return 0;
	smp_set_sint(smp, msg.type);
	return 1;
}

/* The version a ClientHello offers (legacy_version, as HAProxy 2.6 reads
 * it: 3.3 for TLS 1.3 too), or an SSLv2 CLIENT-HELLO's, as
 * major << 16 | minor. */
static int smp_fetch_ver(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const unsigned char *p = (const unsigned char *)ctx->req_data.ptr;
	unsigned char *scratch;
	unsigned int v;
	size_t size;

	if (!p)
		return 0;
	scratch = (unsigned char *)smp_trash_get(&size);
	if (!status_result(ssl_hello_version(p, ctx->req_data.len, scratch, size, &v), smp))
		return 0;
	smp_set_sint(smp, (int64_t)((v >> 8) << 16 | (v & 0xff)));
	return 1;
}

/* Parses the ClientHello of the request buffer into <ch>: 1 if there is
 * one, of TLS 1.0 or later (the extension fetches of HAProxy 2.6 ignore
 * older hellos), else 0 (with MAY_CHANGE if it may still come). A hello
 * split over records is gathered into a scratch buffer. */
static int get_client_hello(struct smp_ctx *ctx, struct sample *smp,
                            struct ssl_client_hello *ch)
{
	const unsigned char *p = (const unsigned char *)ctx->req_data.ptr;
	size_t len = ctx->req_data.len, size;
	struct ssl_hs_msg msg;
	enum ssl_hello_status st;

	if (!p)
		return 0;
	st = ssl_hs_first_msg(p, len, NULL, 0, &msg);
	if (st == SSL_HELLO_OK && !msg.body) {
		/* split over records: gather it */
		unsigned char *scratch = (unsigned char *)smp_trash_get(&size);

		st = ssl_hs_first_msg(p, len, scratch, size, &msg);
	}
	if (!status_result(st, smp) || msg.type != SSL_HS_CLIENT_HELLO || !msg.body)
		return 0;
	if (ssl_client_hello_parse_body(msg.body, msg.len, ch) != SSL_HELLO_OK)
		return 0;
	return ch->version >= 0x0301;
}

static int smp_fetch_sni(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct ssl_client_hello ch;

	if (!get_client_hello(ctx, smp, &ch) || !ch.sni)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, (const char *)ch.sni, ch.sni_len);
	return 1;
}

/* Each protocol name in turn when an ACL iterates (iter.i[0]: offset of
 * the next one in the list), else the first, the client's preferred. */
static int smp_fetch_alpn(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct ssl_client_hello ch;
	const unsigned char *name;
	size_t pos, name_len;

	smp->flags &= ~SMP_F_NOT_LAST;
	if (!get_client_hello(ctx, smp, &ch))
		return 0;
	pos = (smp->opt & SMP_OPT_ITERATE) ? (size_t)smp->iter.i[0] : 0;
	if (!ssl_alpn_next(&ch, &pos, &name, &name_len))
		return 0;
	if (smp->opt & SMP_OPT_ITERATE) {
		smp->iter.i[0] = (int64_t)pos;
		if (pos < ch.alpn_len)
			smp->flags |= SMP_F_NOT_LAST;
	}
	smp_set_const_str(smp, SMP_T_STR, (const char *)name, name_len);
	return 1;
}

/* Whether the hello carries supported_groups, the "Supported Elliptic
 * Curves" extension of RFC 4492 5.1.1. */
static int smp_fetch_ec_ext(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct ssl_client_hello ch;

	if (!get_client_hello(ctx, smp, &ch))
		return 0;
	smp_set_bool(smp, !!(ch.flags & SSL_CH_F_GROUPS));
	return 1;
}

/* 0: no SessionTicket extension (RFC 5077), 1: an empty one, 2: one
 * carrying a ticket. */
static int smp_fetch_st_ext(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct ssl_client_hello ch;

	if (!get_client_hello(ctx, smp, &ch))
		return 0;
	smp_set_sint(smp, !(ch.flags & SSL_CH_F_TICKET) ? 0 : ch.ticket_len ? 2 : 1);
	return 1;
}
