/* Server parameters: the TLVs of v2 PROXY headers (send-proxy-v2-ssl,
 * send-proxy-v2-ssl-cn, proxy-v2-options), redir, non-stick/stick and ws,
 * as HAProxy 2.6 reads them; and the v2 header a stream sends with its
 * TLVs. See srv_opts.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sluice/cfg/cfg.h>
#include <sluice/http/errors.h>
#include <sluice/http/msgedit.h>
#include <sluice/http/txn.h>
#include <sluice/net/conn.h>
#include <sluice/net/proxy_proto.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_opts.h>
#include <sluice/proxy/stream.h>
#include <sluice/proxy/stream_int.h>

static const struct { const char *name; int bits; } pp_names[] = {
	{ "ssl", SRV_PP_SSL }, { "cert-cn", SRV_PP_SSL | SRV_PP_SSL_CN },
	{ "ssl-cipher", SRV_PP_SSL | SRV_PP_SSL_CIPHER },
	{ "cert-sig", SRV_PP_SSL | SRV_PP_CERT_SIG },
	{ "cert-key", SRV_PP_SSL | SRV_PP_CERT_KEY },
	{ "authority", SRV_PP_AUTHORITY }, { "crc32c", SRV_PP_CRC32C },
	{ "unique-id", SRV_PP_UNIQUE_ID },
};

/* proxy-v2-options <opt>[,<opt>]* (HAProxy's words for an unknown one) */
static int parse_pp_options(struct server *s, const char *list, char *err, size_t errlen)
{
	const char *p = list;

	do {
		size_t n = strcspn(p, ",");
		size_t k;

		for (k = 0; k < sizeof(pp_names) / sizeof(pp_names[0]); k++)
			if (strlen(pp_names[k].name) == n && !strncmp(p, pp_names[k].name, n))
				break;
		if (k == sizeof(pp_names) / sizeof(pp_names[0])) {
			snprintf(err, errlen, "'%.*s' : proxy v2 option not implemented.", (int)n, p);
			return -1;
		}
		s->pp_opts |= pp_names[k].bits;
		p += n;
	} while (*p++ == ',');
	return 0;
}

/* ---- redir ---- */

struct srv_redir {
	char *prefix;
	struct http_reply_dyn_hdr loc;   /* Location, rendered by redir_location() */
	struct http_reply *reply;
};

static void redir_free(struct srv_redir *r)
{
	if (!r)
		return;
	http_reply_release(r->reply);
	free(r->prefix);
	free(r);
}

/* The request-target from the leading '/' of its path to its end. */
static struct ist redir_path(struct ist uri)
{
	struct ist path = http_uri_path(uri);

	if (!path.ptr)
		return (struct ist){ uri.ptr + uri.len, 0 };
	return (struct ist){ path.ptr, (size_t)(uri.ptr + uri.len - path.ptr) };
}

/* Location: the prefix, then the path of the request of stream <ctx>. */
static ssize_t redir_location(const void *fmt, void *ctx, char *out, size_t room)
{
	const struct srv_redir *r = fmt;
	struct stream *s = ctx;
	struct ist path = redir_path(s->txn->req.uri);
	size_t plen = strlen(r->prefix);

	if (plen + path.len >= room)
		return -1;
	memcpy(out, r->prefix, plen);
	memcpy(out + plen, path.ptr, path.len);
	return (ssize_t)(plen + path.len);
}

static int redir_set(struct server *s, const char *prefix, char *err, size_t errlen)
{
	static const struct http_hdr fixed[] = {
		{ IST("Cache-Control"), IST("no-cache") },
		{ IST("Content-Length"), IST("0") },
		{ IST("Connection"), IST("close") },
	};
	struct srv_redir *r = calloc(1, sizeof(*r));

	if (!r || !(r->prefix = strdup(prefix))) {
		free(r);
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	r->loc = (struct http_reply_dyn_hdr){ IST("Location"), r };
	r->reply = http_reply_build_dynamic(302, NULL, redir_location, NULL, &r->loc, 1,
	                                    fixed, 3, err, errlen);
	if (!r->reply) {
		redir_free(r);
		return -1;
	}
	r->reply->refcnt = 1;
	redir_free(s->redir);
	s->redir = r;
	return 0;
}

int srv_redirect(struct stream *s, struct server *srv)
{
	struct http_txn *t = s->txn;

	if (!t || (t->req.meth != HTTP_METH_GET && t->req.meth != HTTP_METH_HEAD))
		return 0;
	http_reply_start(s, 302, srv->redir->reply, 'L', 'C');
	return 1;
}

static int parse_ws(struct server *s, const char *v, char *err, size_t errlen)
{
	if (v && !strcmp(v, "auto"))
		s->ws = SRV_WS_AUTO;
	else if (v && !strcmp(v, "h1"))
		s->ws = SRV_WS_H1;
	else if (v && !strcmp(v, "h2"))
		s->ws = SRV_WS_H2;
	else {
		snprintf(err, errlen, "'ws' has to be 'auto', 'h1' or 'h2'.");
		return -1;
	}
	return 0;
}

int srv_opts_parse(struct cfg_ctx *ctx, struct server *s, char **args, int nargs, int *i,
                   char *err, size_t errlen)
{
	const char *o = args[*i];
	const char *v = *i + 1 < nargs ? args[*i + 1] : NULL;

	if (!strcmp(o, "send-proxy-v2-ssl") || !strcmp(o, "send-proxy-v2-ssl-cn")) {
		s->send_proxy = 2;
		s->pp_opts |= SRV_PP_SSL | (o[17] ? SRV_PP_SSL_CN : 0);
		return 1;
	}
	if (!strcmp(o, "no-send-proxy-v2-ssl") || !strcmp(o, "no-send-proxy-v2-ssl-cn")) {
		s->send_proxy = 0;
		s->pp_opts &= ~(SRV_PP_SSL | (o[20] ? SRV_PP_SSL_CN : 0));
		return 1;
	}
	if (!strcmp(o, "non-stick") || !strcmp(o, "stick")) {
		s->non_stick = o[0] == 'n';
		return 1;
	}
	if (!strcmp(o, "proxy-v2-options")) {
		if (parse_pp_options(s, v ? v : "", err, errlen) < 0)
			return -1;
		*i += v != NULL;
		return 1;
	}
	if (!strcmp(o, "redir")) {
		if (!v || !*v) {
			snprintf(err, errlen, "'redir' expects <prefix> as argument..");
			return -1;
		}
		(*i)++;
		return redir_set(s, v, err, errlen) < 0 ? -1 : 1;
	}
	if (!strcmp(o, "ws")) {
		if (parse_ws(s, v, err, errlen) < 0)
			return -1;
		(*i)++;
		if (s->ws == SRV_WS_H1 && ctx)
			cfg_warning(ctx->file, ctx->line, "server '%s': 'ws h1' is ignored: "
			            "websocket streams use the server's protocol, HTTP/2 "
			            "(RFC 8441) when it speaks it.", s->name ? s->name : "");
		return 1;
	}
	return 0;
}

void srv_opts_copy(struct server *dst, const struct server *src)
{
	char err[256];

	dst->pp_opts = src->pp_opts;
	dst->non_stick = src->non_stick;
	dst->ws = src->ws;
	if (src->redir && redir_set(dst, src->redir->prefix, err, sizeof(err)) < 0)
		dst->redir = NULL;   /* out of memory: the server line fails later */
}

void srv_opts_free(struct server *s)
{
	redir_free(s->redir);
	s->redir = NULL;
}

/* ---- the v2 header with its TLVs ---- */

/* "RSA2048", "EC256"...: the type and size of the key of <crt>. */
static int key_alg_name(X509 *crt, char *out, size_t len)
{
	EVP_PKEY *k = X509_get0_pubkey(crt);
	const char *type;

	if (!k)
		return 0;
	switch (EVP_PKEY_get_base_id(k)) {
	case EVP_PKEY_RSA: type = "RSA"; break;
	case EVP_PKEY_EC: type = "EC"; break;
	case EVP_PKEY_DSA: type = "DSA"; break;
	default: type = OBJ_nid2sn(EVP_PKEY_get_base_id(k)); break;
	}
	return snprintf(out, len, "%s%d", type, EVP_PKEY_get_bits(k)) > 0;
}

static int sig_alg_name(X509 *crt, char *out, size_t len)
{
	int nid = X509_get_signature_nid(crt);

	return nid != NID_undef && snprintf(out, len, "%s", OBJ_nid2sn(nid)) > 0;
}

static int cert_cn(X509 *crt, char *out, size_t len)
{
	return crt && X509_NAME_get_text_by_NID(X509_get_subject_name(crt), NID_commonName,
	                                        out, (int)len) > 0;
}

/* One sub-TLV of the SSL TLV from a string, skipped when empty. */
static size_t add_str(uint8_t *buf, size_t len, size_t used, uint8_t type, const char *v)
{
	if (!v || !*v)
		return used;
	return pp_v2_add_tlv(buf, len, used, type, v, strlen(v));
}

/* The SSL TLV: the client byte, the verify result (0: a certificate that
 * verified), then the version and whatever the server asked for. */
static size_t add_ssl_tlv(SSL *ssl, int opts, uint8_t *buf, size_t len, size_t used)
{
	uint8_t head[5] = { 0 };
	X509 *peer = ssl ? SSL_get0_peer_certificate(ssl) : NULL;
	X509 *own = ssl ? SSL_get_certificate(ssl) : NULL;
	size_t off = used;
	char v[256];

	if (ssl) {
		long vr = SSL_get_verify_result(ssl);

		head[0] = PP2_CLIENT_SSL;
		if (peer) {
			head[0] |= PP2_CLIENT_CERT_SESS | (SSL_session_reused(ssl) ? 0 :
			                                   PP2_CLIENT_CERT_CONN);
			head[1] = (uint8_t)(vr >> 24);
			head[2] = (uint8_t)(vr >> 16);
			head[3] = (uint8_t)(vr >> 8);
			head[4] = (uint8_t)vr;
		}
	}
	if (!(used = pp_v2_add_tlv(buf, len, used, PP2_TYPE_SSL, head, sizeof(head))))
		return 0;
	if (!ssl)
		return used;
	used = add_str(buf, len, used, PP2_SUBTYPE_SSL_VERSION, SSL_get_version(ssl));
	if (used && (opts & SRV_PP_SSL_CN) && cert_cn(peer, v, sizeof(v)))
		used = add_str(buf, len, used, PP2_SUBTYPE_SSL_CN, v);
	if (used && (opts & SRV_PP_CERT_KEY) && own && key_alg_name(own, v, sizeof(v)))
		used = add_str(buf, len, used, PP2_SUBTYPE_SSL_KEY_ALG, v);
	if (used && (opts & SRV_PP_CERT_SIG) && own && sig_alg_name(own, v, sizeof(v)))
		used = add_str(buf, len, used, PP2_SUBTYPE_SSL_SIG_ALG, v);
	if (used && (opts & SRV_PP_SSL_CIPHER))
		used = add_str(buf, len, used, PP2_SUBTYPE_SSL_CIPHER, SSL_get_cipher_name(ssl));
	if (used)
		pp_v2_tlv_len(buf, off, used);
	return used;
}

/* The frontend's unique-id-format, rendered once per transaction (the
 * same value as the unique-id fetch), or for the TCP stream. */
static size_t add_unique_id(struct stream *s, uint8_t *buf, size_t len, size_t used)
{
	char id[1024];
	size_t n;

	if (!s->fe->unique_id_fmt)
		return used;
	if (s->txn && s->txn->unique_id) {
		n = strlen(s->txn->unique_id);
		memcpy(id, s->txn->unique_id, n < sizeof(id) ? n : sizeof(id));
	} else {
		n = stream_lf_render(s, s->fe->unique_id_fmt, id, sizeof(id));
	}
	if (n > sizeof(id))
		n = sizeof(id);
	return n ? pp_v2_add_tlv(buf, len, used, PP2_TYPE_UNIQUE_ID, id, n) : used;
}

size_t srv_pp_v2_build(struct stream *s, const struct server *srv, uint8_t *buf, size_t len)
{
	SSL *ssl = s->cli.ssl && !(s->cli.flags & CONN_F_TLS_HS) ? s->cli.ssl : NULL;
	size_t used = pp_build_v2(buf, len, &s->cli.src, conn_dst(&s->cli));
	size_t crc_off = 0;
	int opts = srv->pp_opts;

	if (!used || !opts)
		return used;
	if (opts & SRV_PP_CRC32C) {
		static const uint8_t zero[4];

		crc_off = used + 3;
		used = pp_v2_add_tlv(buf, len, used, PP2_TYPE_CRC32C, zero, sizeof(zero));
	}
	if (used && (opts & SRV_PP_AUTHORITY) && ssl)
		used = add_str(buf, len, used, PP2_TYPE_AUTHORITY,
		               SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name));
	if (used && (opts & SRV_PP_UNIQUE_ID))
		used = add_unique_id(s, buf, len, used);
	if (used && (opts & SRV_PP_SSL))
		used = add_ssl_tlv(ssl, opts, buf, len, used);
	if (used && crc_off)
		pp_v2_crc32c(buf, used, crc_off);
	return used;
}
