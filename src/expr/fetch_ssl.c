/* TLS sample fetches (HAProxy 2.6 configuration manual, 7.3.4): the
 * client connection's TLS session (ssl_fc_*), the client certificate
 * (ssl_c_*), the certificate the frontend presented (ssl_f_*), the server
 * connection's TLS session (ssl_bc_*) and the server's certificate
 * (ssl_s_*).
 *
 * They read OpenSSL's SSL object of a connection, which the integrator
 * gives through smp_ops->ssl() once the handshake is complete; nothing
 * here knows a stream. Names, types and results are HAProxy's: on a
 * connection that is not under TLS, ssl_fc, ssl_bc, ssl_fc_has_sni and
 * the *_is_resumed fetches are false, every other one has no value.
 *
 * Where they may be used (SMP_USE_L5CLI, SMP_USE_L5SRV): the client side
 * from tcp-request session rules on (connection rules run before the
 * handshake), the server side in response rules and logs; as in HAProxy
 * 2.6, ssl_s_* are accepted wherever the client side is.
 *
 * Evaluation reads the SSL object only (owner thread of the connection);
 * results go to the thread's scratch buffers.
 */
#include <stdio.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/sample.h>
#include <sluice/net/ssl_capture.h>
#include <sluice/net/ssl_keylog.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/net/ssl_x509.h>
#include <sluice/net/tls.h>

const int expr_fetch_ssl_anchor;

/* kw->priv of the shared functions: which connection, which certificate */
#define FRONT      ((const void *)0)
#define BACK       ((const void *)1)
#define CRT_PEER_FRONT ((const void *)0)   /* ssl_c_*: the client's */
#define CRT_OWN_FRONT  ((const void *)1)   /* ssl_f_*: the frontend's */
#define CRT_PEER_BACK  ((const void *)2)   /* ssl_s_*: the server's */

static SSL *ctx_ssl(const struct smp_ctx *ctx, enum smp_conn_side side)
{
	if (!ctx->ops || !ctx->ops->ssl)
		return NULL;
	return ctx->ops->ssl(ctx, side);
}

static SSL *kw_ssl(const struct smp_args *args, const struct smp_ctx *ctx)
{
	return ctx_ssl(ctx, args->kw_priv == BACK ? SMP_CONN_BACK : SMP_CONN_FRONT);
}

/* Copies <len> bytes into a scratch buffer as a sample of type <t>. */
static int set_copy(struct sample *smp, enum smp_type t, const void *p, size_t len)
{
	smp_set_trash(smp, t);
	if (len > smp->data.str.size)
		return 0;
	memcpy(smp->data.str.ptr, p, len);
	smp->data.str.len = len;
	return 1;
}

static int set_name(struct sample *smp, const char *name)
{
	if (!name)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, name, strlen(name));
	return 1;
}

/* ------------------------------------------------------------ sessions */

static int fetch_is_ssl(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, kw_ssl(args, ctx) != NULL);
	return 1;
}

static int fetch_is_resumed(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);

	smp_set_bool(smp, ssl && SSL_session_reused(ssl));
	return 1;
}

static int fetch_protocol(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);

	return ssl && set_name(smp, SSL_get_version(ssl));
}

static int fetch_cipher(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);

	return ssl && SSL_get_current_cipher(ssl) && set_name(smp, SSL_get_cipher_name(ssl));
}

/* ssl_*_use_keysize: the key size in use; ssl_*_alg_keysize (priv | 2):
 * the algorithm's. */
static int fetch_keysize(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                         int alg)
{
	SSL *ssl = kw_ssl(args, ctx);
	int alg_bits = 0, use_bits;

	if (!ssl || !SSL_get_current_cipher(ssl))
		return 0;
	use_bits = SSL_get_cipher_bits(ssl, &alg_bits);
	smp_set_sint(smp, alg ? alg_bits : use_bits);
	return 1;
}

static int fetch_use_keysize(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_keysize(args, smp, ctx, 0);
}

static int fetch_alg_keysize(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_keysize(args, smp, ctx, 1);
}

static int fetch_alpn(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);
	const unsigned char *p = NULL;
	unsigned int len = 0;

	if (!ssl)
		return 0;
	SSL_get0_alpn_selected(ssl, &p, &len);
	if (!p || !len)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, (const char *)p, len);
	return 1;
}

/* NPN is not offered by sluice (the `npn` bind and server options are
 * refused): never a value, as HAProxy without `npn`. */
static int fetch_npn(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);
	const unsigned char *p = NULL;
	unsigned int len = 0;

	if (!ssl)
		return 0;
	SSL_get0_next_proto_negotiated(ssl, &p, &len);
	if (!p || !len)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, (const char *)p, len);
	return 1;
}

static int fetch_session_id(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);
	SSL_SESSION *sess = ssl ? SSL_get_session(ssl) : NULL;
	const unsigned char *id;
	unsigned int len = 0;

	if (!sess)
		return 0;
	id = SSL_SESSION_get_id(sess, &len);
	if (!id || !len)
		return 0;
	return set_copy(smp, SMP_T_BIN, id, len);
}

static int fetch_session_key(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);
	SSL_SESSION *sess = ssl ? SSL_get_session(ssl) : NULL;

	if (!sess)
		return 0;
	smp_set_trash(smp, SMP_T_BIN);
	smp->data.str.len = SSL_SESSION_get_master_key(sess, (unsigned char *)smp->data.str.ptr,
	                                               smp->data.str.size);
	return smp->data.str.len > 0;
}

/* ssl_*_client_random, ssl_*_server_random */
static int fetch_random(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                        int server)
{
	SSL *ssl = kw_ssl(args, ctx);
	unsigned char *p;

	if (!ssl)
		return 0;
	smp_set_trash(smp, SMP_T_BIN);
	p = (unsigned char *)smp->data.str.ptr;
	smp->data.str.len = server ? SSL_get_server_random(ssl, p, smp->data.str.size) :
	                             SSL_get_client_random(ssl, p, smp->data.str.size);
	return smp->data.str.len > 0;
}

static int fetch_client_random(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_random(args, smp, ctx, 0);
}

static int fetch_server_random(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_random(args, smp, ctx, 1);
}

/* tls-unique (RFC 5929 section 3): the first Finished message of the
 * handshake, the client's on a full handshake, the server's on a resumed
 * one. Both sides read it as a server would, as HAProxy does. */
static int fetch_unique_id(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);

	if (!ssl)
		return 0;
	smp_set_trash(smp, SMP_T_BIN);
	smp->data.str.len = SSL_session_reused(ssl) ?
		SSL_get_finished(ssl, smp->data.str.ptr, smp->data.str.size) :
		SSL_get_peer_finished(ssl, smp->data.str.ptr, smp->data.str.size);
	return smp->data.str.len > 0;
}

/* The OpenSSL error that failed the connection, 0 if none. */
static int fetch_err(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);

	if (!ssl)
		return 0;
	smp_set_sint(smp, (int64_t)tls_error_code(ssl));
	return 1;
}

static int fetch_err_str(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);
	unsigned long e = ssl ? tls_error_code(ssl) : 0;

	return e && set_name(smp, ERR_reason_error_string(e));
}

/* ------------------------------------------------------------ client side only */

/* ssl_fc_*_secret: the TLS 1.3 secrets kept with tune.ssl.keylog on */
static int fetch_keylog(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = ctx_ssl(ctx, SMP_CONN_FRONT);
	const char *s = ssl ? ssl_keylog_get(ssl, (enum ssl_keylog_secret)(intptr_t)
	                                     args->kw_priv) : NULL;

	return s && set_copy(smp, SMP_T_STR, s, strlen(s));
}

static int fetch_fc_sni(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = ctx_ssl(ctx, SMP_CONN_FRONT);

	return ssl && set_name(smp, SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name));
}

static int fetch_fc_has_sni(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = ctx_ssl(ctx, SMP_CONN_FRONT);

	smp_set_bool(smp, ssl && SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) != NULL);
	return 1;
}

/* No TLS 1.3 early data is accepted: never true. */
static int fetch_fc_has_early(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	if (!ctx_ssl(ctx, SMP_CONN_FRONT))
		return 0;
	smp_set_bool(smp, 0);
	return 1;
}

/* A certificate came with this handshake: not on a resumed session,
 * where ssl_c_used still tells whether the session had one. */
static int fetch_fc_has_crt(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = ctx_ssl(ctx, SMP_CONN_FRONT);

	if (!ssl)
		return 0;
	smp_set_bool(smp, !SSL_session_reused(ssl) && SSL_get0_peer_certificate(ssl));
	return 1;
}

static int fetch_c_used(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = ctx_ssl(ctx, SMP_CONN_FRONT);

	if (!ssl)
		return 0;
	smp_set_bool(smp, SSL_get0_peer_certificate(ssl) != NULL);
	return 1;
}

static int fetch_c_verify(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = ctx_ssl(ctx, SMP_CONN_FRONT);

	if (!ssl)
		return 0;
	smp_set_sint(smp, SSL_get_verify_result(ssl));
	return 1;
}

/* ssl_c_err (priv 0), ssl_c_ca_err (1), ssl_c_ca_err_depth (2) */
static int fetch_c_errors(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = ctx_ssl(ctx, SMP_CONN_FRONT);
	int v[3];

	if (!ssl)
		return 0;
	ssl_verify_errors(ssl, &v[0], &v[1], &v[2]);
	smp_set_sint(smp, v[(intptr_t)args->kw_priv]);
	return 1;
}

/* ------------------------------------------------------------ ClientHello capture */

static const struct ssl_capture *fc_capture(const struct smp_ctx *ctx)
{
	SSL *ssl = ctx_ssl(ctx, SMP_CONN_FRONT);

	return ssl ? ssl_capture_get(ssl) : NULL;
}

/* A captured list of 2-byte values, without the GREASE ones if the first
 * argument is not 0. */
static int set_capture_list(const struct smp_args *args, struct sample *smp,
                            const unsigned char *p, size_t len)
{
	if (args->n > 0 && args->a[0].type == ARGT_SINT && args->a[0].data.sint) {
		smp_set_trash(smp, SMP_T_BIN);
		/* the output is never longer than the input: cut the input to
		 * the scratch buffer (a capture may be up to 64 KB, a buffer
		 * is tune.bufsize) */
		if (len > smp->data.str.size)
			len = smp->data.str.size & ~(size_t)1;
		smp->data.str.len = ssl_capture_no_grease(p, len, (unsigned char *)smp->data.str.ptr);
		return 1;
	}
	smp_set_const_str(smp, SMP_T_BIN, (const char *)p, len);
	return 1;
}

static int fetch_cipherlist_bin(const struct smp_args *args, struct sample *smp,
                                struct smp_ctx *ctx)
{
	const struct ssl_capture *c = fc_capture(ctx);

	return c && set_capture_list(args, smp, ssl_capture_ciphers(c), c->ciphers_len);
}

static int fetch_cipherlist_hex(const struct smp_args *args, struct sample *smp,
                                struct smp_ctx *ctx)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	size_t len;
	char *o;

	if (!fetch_cipherlist_bin(args, smp, ctx))
		return 0;
	p = (const unsigned char *)smp->data.str.ptr;
	len = smp->data.str.len;
	smp_set_trash(smp, SMP_T_STR);   /* another buffer than the list's */
	if (len * 2 > smp->data.str.size)
		len = smp->data.str.size / 2;
	o = smp->data.str.ptr;
	for (size_t i = 0; i < len; i++) {
		*o++ = hex[p[i] >> 4];
		*o++ = hex[p[i] & 15];
	}
	smp->data.str.len = len * 2;
	return 1;
}

/* The ciphers' OpenSSL names, comma-separated; "UNKNOWN(xxxx)" for one
 * OpenSSL does not know (a GREASE value...). */
static int fetch_cipherlist_str(const struct smp_args *args, struct sample *smp,
                                struct smp_ctx *ctx)
{
	SSL *ssl = ctx_ssl(ctx, SMP_CONN_FRONT);
	const unsigned char *p;
	size_t len, w = 0;
	char *o;

	if (!fetch_cipherlist_bin(args, smp, ctx))
		return 0;
	p = (const unsigned char *)smp->data.str.ptr;
	len = smp->data.str.len;
	smp_set_trash(smp, SMP_T_STR);
	o = smp->data.str.ptr;
	for (size_t i = 0; i + 1 < len; i += 2) {
		const SSL_CIPHER *c = SSL_CIPHER_find(ssl, p + i);
		const char *name = c ? SSL_CIPHER_get_name(c) : NULL;
		int n;

		if (name && strcmp(name, "(NONE)") != 0)
			n = snprintf(o + w, smp->data.str.size - w, "%s%s", i ? "," : "", name);
		else
			n = snprintf(o + w, smp->data.str.size - w, "%sUNKNOWN(%02x%02x)",
			             i ? "," : "", p[i], p[i + 1]);
		if (n < 0 || (size_t)n >= smp->data.str.size - w)
			break;                 /* what fits */
		w += (size_t)n;
	}
	smp->data.str.len = w;
	return 1;
}

static int fetch_cipherlist_xxh(const struct smp_args *args, struct sample *smp,
                                struct smp_ctx *ctx)
{
	const struct ssl_capture *c = fc_capture(ctx);

	if (!c)
		return 0;
	smp_set_sint(smp, (int64_t)c->ciphers_xxh64);
	return 1;
}

static int fetch_extlist_bin(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct ssl_capture *c = fc_capture(ctx);

	return c && set_capture_list(args, smp, ssl_capture_ext(c), c->ext_len);
}

static int fetch_eclist_bin(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct ssl_capture *c = fc_capture(ctx);

	return c && set_capture_list(args, smp, ssl_capture_groups(c), c->groups_len);
}

static int fetch_ecformats_bin(const struct smp_args *args, struct sample *smp,
                               struct smp_ctx *ctx)
{
	const struct ssl_capture *c = fc_capture(ctx);

	if (!c)
		return 0;
	smp_set_const_str(smp, SMP_T_BIN, (const char *)ssl_capture_formats(c), c->formats_len);
	return 1;
}

static int fetch_hello_id(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct ssl_capture *c = fc_capture(ctx);

	if (!c)
		return 0;
	smp_set_sint(smp, c->hello_version);
	return 1;
}

/* ------------------------------------------------------------ certificates */

static X509 *kw_cert(const struct smp_args *args, const struct smp_ctx *ctx)
{
	SSL *ssl;

	if (args->kw_priv == CRT_PEER_BACK) {
		ssl = ctx_ssl(ctx, SMP_CONN_BACK);
		return ssl ? SSL_get0_peer_certificate(ssl) : NULL;
	}
	ssl = ctx_ssl(ctx, SMP_CONN_FRONT);
	if (!ssl)
		return NULL;
	return args->kw_priv == CRT_OWN_FRONT ? SSL_get_certificate(ssl) :
	       SSL_get0_peer_certificate(ssl);
}

/* The <format> argument of the *_dn fetches: "rfc2253" or empty. */
static int check_dn(struct smp_args *args, char *err, size_t errlen)
{
	if (args->n > 2 && args->a[2].data.str.len && strcmp(args->a[2].data.str.ptr, "rfc2253"))
		return errmsg_set(err, errlen, "only rfc2253 or a blank value are currently "
		                  "supported as the format argument.");
	return 0;
}

/* ssl_*_s_dn, ssl_*_i_dn ([<entry>[,<occ>[,<format>]]]): an entry's value
 * when <entry> is given, else the whole name, in <format>. */
static int fetch_dn(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                    int issuer)
{
	X509 *crt = kw_cert(args, ctx);
	const X509_NAME *name;
	int n;

	if (!crt)
		return 0;
	name = issuer ? X509_get_issuer_name(crt) : X509_get_subject_name(crt);
	smp_set_trash(smp, SMP_T_STR);
	if (args->n > 0 && args->a[0].data.str.len) {
		int pos = args->n > 1 ? (int)args->a[1].data.sint : 1;

		n = ssl_x509_dn_entry(name, args->a[0].data.str.ptr, args->a[0].data.str.len, pos,
		                      smp->data.str.ptr, smp->data.str.size);
	} else if (args->n > 2 && args->a[2].data.str.len) {
		n = ssl_x509_dn_rfc2253(name, smp->data.str.ptr, smp->data.str.size);
	} else {
		n = ssl_x509_dn_oneline(name, smp->data.str.ptr, smp->data.str.size);
	}
	if (n <= 0)
		return 0;
	smp->data.str.len = (size_t)n;
	return 1;
}

static int fetch_s_dn(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_dn(args, smp, ctx, 0);
}

static int fetch_i_dn(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_dn(args, smp, ctx, 1);
}

/* The serial number's bytes, as encoded (big-endian, no sign byte added). */
static int fetch_serial(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	X509 *crt = kw_cert(args, ctx);
	const ASN1_INTEGER *serial = crt ? X509_get0_serialNumber(crt) : NULL;

	if (!serial)
		return 0;
	return set_copy(smp, SMP_T_BIN, ASN1_STRING_get0_data(serial),
	                (size_t)ASN1_STRING_length(serial));
}

static int crt_der(X509 *crt, struct sample *smp)
{
	unsigned char *p = (unsigned char *)smp->data.str.ptr + smp->data.str.len;
	int len = i2d_X509(crt, NULL);

	if (len <= 0 || (size_t)len > smp->data.str.size - smp->data.str.len)
		return 0;
	i2d_X509(crt, &p);
	smp->data.str.len += (size_t)len;
	return 1;
}

static int fetch_der(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	X509 *crt = kw_cert(args, ctx);

	if (!crt)
		return 0;
	smp_set_trash(smp, SMP_T_BIN);
	return crt_der(crt, smp);
}

/* The chain the peer sent after its certificate (a client's is not kept
 * in a resumed session: no value then). */
static int fetch_chain_der(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	SSL *ssl = kw_ssl(args, ctx);
	STACK_OF(X509) *chain = ssl ? SSL_get_peer_cert_chain(ssl) : NULL;

	if (!chain)
		return 0;
	smp_set_trash(smp, SMP_T_BIN);
	for (int i = 0; i < sk_X509_num(chain); i++)
		if (!crt_der(sk_X509_value(chain, i), smp))
			return 0;
	return 1;
}

static int fetch_sha1(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	X509 *crt = kw_cert(args, ctx);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (!crt || !X509_digest(crt, EVP_sha1(), md, &len))
		return 0;
	return set_copy(smp, SMP_T_BIN, md, len);
}

/* OpenSSL's short names: "RSA-SHA256", "ecdsa-with-SHA256"... */
static int fetch_sig_alg(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	X509 *crt = kw_cert(args, ctx);
	const ASN1_OBJECT *alg = NULL;
	int nid;

	if (!crt)
		return 0;
	X509_ALGOR_get0(&alg, NULL, NULL, X509_get0_tbs_sigalg(crt));
	nid = alg ? OBJ_obj2nid(alg) : NID_undef;
	return nid != NID_undef && set_name(smp, OBJ_nid2sn(nid));
}

/* "rsaEncryption", "id-ecPublicKey"... */
static int fetch_key_alg(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	X509 *crt = kw_cert(args, ctx);
	ASN1_OBJECT *alg = NULL;
	int nid;

	if (!crt || !X509_PUBKEY_get0_param(&alg, NULL, NULL, NULL, X509_get_X509_PUBKEY(crt)))
		return 0;
	nid = alg ? OBJ_obj2nid(alg) : NID_undef;
	return nid != NID_undef && set_name(smp, OBJ_nid2sn(nid));
}

static int fetch_time(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                      int after)
{
	X509 *crt = kw_cert(args, ctx);
	int n;

	if (!crt)
		return 0;
	smp_set_trash(smp, SMP_T_STR);
	n = ssl_x509_time(after ? X509_get0_notAfter(crt) : X509_get0_notBefore(crt),
	                  smp->data.str.ptr, smp->data.str.size);
	if (n <= 0)
		return 0;
	smp->data.str.len = (size_t)n;
	return 1;
}

static int fetch_notbefore(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_time(args, smp, ctx, 0);
}

static int fetch_notafter(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_time(args, smp, ctx, 1);
}

/* 1 for v1... 3 for an X.509 v3 certificate */
static int fetch_version(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	X509 *crt = kw_cert(args, ctx);

	if (!crt)
		return 0;
	smp_set_sint(smp, X509_get_version(crt) + 1);
	return 1;
}

/* ------------------------------------------------------------ table */

#define FC  SMP_USE_L5CLI
#define BC  SMP_USE_L5SRV
/* HAProxy 2.6 declares the ssl_s_* fetches with the client side's validity:
 * they are accepted in request rules too, where no server connection
 * exists yet (no value there) */
#define SC  SMP_USE_L5CLI
static const struct smp_fetch_kw ssl_fetches[] = {
	/* the client connection */
	{ "ssl_fc",                   fetch_is_ssl,         { 0 }, 0, NULL, SMP_T_BOOL, FC, FRONT },
	{ "ssl_fc_alg_keysize",       fetch_alg_keysize,    { 0 }, 0, NULL, SMP_T_SINT, FC, FRONT },
	{ "ssl_fc_alpn",              fetch_alpn,           { 0 }, 0, NULL, SMP_T_STR,  FC, FRONT },
	{ "ssl_fc_cipher",            fetch_cipher,         { 0 }, 0, NULL, SMP_T_STR,  FC, FRONT },
	{ "ssl_fc_cipherlist_bin",    fetch_cipherlist_bin, { ARGT_SINT }, 0, NULL, SMP_T_BIN, FC },
	{ "ssl_fc_cipherlist_hex",    fetch_cipherlist_hex, { ARGT_SINT }, 0, NULL, SMP_T_STR, FC },
	{ "ssl_fc_cipherlist_str",    fetch_cipherlist_str, { ARGT_SINT }, 0, NULL, SMP_T_STR, FC },
	{ "ssl_fc_cipherlist_xxh",    fetch_cipherlist_xxh, { 0 }, 0, NULL, SMP_T_SINT, FC },
	{ "ssl_fc_client_random",     fetch_client_random,  { 0 }, 0, NULL, SMP_T_BIN,  FC, FRONT },
	{ "ssl_fc_ecformats_bin",     fetch_ecformats_bin,  { 0 }, 0, NULL, SMP_T_BIN,  FC },
	{ "ssl_fc_eclist_bin",        fetch_eclist_bin,     { ARGT_SINT }, 0, NULL, SMP_T_BIN, FC },
	{ "ssl_fc_err",               fetch_err,            { 0 }, 0, NULL, SMP_T_SINT, FC, FRONT },
	{ "ssl_fc_err_str",           fetch_err_str,        { 0 }, 0, NULL, SMP_T_STR,  FC, FRONT },
	{ "ssl_fc_extlist_bin",       fetch_extlist_bin,    { ARGT_SINT }, 0, NULL, SMP_T_BIN, FC },
	{ "ssl_fc_has_crt",           fetch_fc_has_crt,     { 0 }, 0, NULL, SMP_T_BOOL, FC },
	{ "ssl_fc_has_early",         fetch_fc_has_early,   { 0 }, 0, NULL, SMP_T_BOOL, FC },
	{ "ssl_fc_has_sni",           fetch_fc_has_sni,     { 0 }, 0, NULL, SMP_T_BOOL, FC },
	{ "ssl_fc_is_resumed",        fetch_is_resumed,     { 0 }, 0, NULL, SMP_T_BOOL, FC, FRONT },
	{ "ssl_fc_npn",               fetch_npn,            { 0 }, 0, NULL, SMP_T_STR,  FC, FRONT },
	{ "ssl_fc_protocol",          fetch_protocol,       { 0 }, 0, NULL, SMP_T_STR,  FC, FRONT },
	{ "ssl_fc_protocol_hello_id", fetch_hello_id,       { 0 }, 0, NULL, SMP_T_SINT, FC },
	{ "ssl_fc_server_random",     fetch_server_random,  { 0 }, 0, NULL, SMP_T_BIN,  FC, FRONT },
	{ "ssl_fc_session_id",        fetch_session_id,     { 0 }, 0, NULL, SMP_T_BIN,  FC, FRONT },
	{ "ssl_fc_session_key",       fetch_session_key,    { 0 }, 0, NULL, SMP_T_BIN,  FC, FRONT },
	{ "ssl_fc_client_early_traffic_secret", fetch_keylog, { 0 }, 0, NULL, SMP_T_STR, FC,
	  (const void *)KEYLOG_CLIENT_EARLY },
	{ "ssl_fc_client_handshake_traffic_secret", fetch_keylog, { 0 }, 0, NULL, SMP_T_STR, FC,
	  (const void *)KEYLOG_CLIENT_HS },
	{ "ssl_fc_server_handshake_traffic_secret", fetch_keylog, { 0 }, 0, NULL, SMP_T_STR, FC,
	  (const void *)KEYLOG_SERVER_HS },
	{ "ssl_fc_client_traffic_secret_0", fetch_keylog, { 0 }, 0, NULL, SMP_T_STR, FC,
	  (const void *)KEYLOG_CLIENT_TRAFFIC },
	{ "ssl_fc_server_traffic_secret_0", fetch_keylog, { 0 }, 0, NULL, SMP_T_STR, FC,
	  (const void *)KEYLOG_SERVER_TRAFFIC },
	{ "ssl_fc_exporter_secret", fetch_keylog, { 0 }, 0, NULL, SMP_T_STR, FC,
	  (const void *)KEYLOG_EXPORTER },
	{ "ssl_fc_early_exporter_secret", fetch_keylog, { 0 }, 0, NULL, SMP_T_STR, FC,
	  (const void *)KEYLOG_EARLY_EXPORTER },
	{ "ssl_fc_sni",               fetch_fc_sni,         { 0 }, 0, NULL, SMP_T_STR,  FC },
	{ "ssl_fc_unique_id",         fetch_unique_id,      { 0 }, 0, NULL, SMP_T_BIN,  FC, FRONT },
	{ "ssl_fc_use_keysize",       fetch_use_keysize,    { 0 }, 0, NULL, SMP_T_SINT, FC, FRONT },
	/* the client's certificate, and its verification */
	{ "ssl_c_ca_err",             fetch_c_errors,       { 0 }, 0, NULL, SMP_T_SINT, FC,
	  (const void *)1 },
	{ "ssl_c_ca_err_depth",       fetch_c_errors,       { 0 }, 0, NULL, SMP_T_SINT, FC,
	  (const void *)2 },
	{ "ssl_c_chain_der",          fetch_chain_der,      { 0 }, 0, NULL, SMP_T_BIN,  FC, FRONT },
	{ "ssl_c_err",                fetch_c_errors,       { 0 }, 0, NULL, SMP_T_SINT, FC,
	  (const void *)0 },
	{ "ssl_c_used",               fetch_c_used,         { 0 }, 0, NULL, SMP_T_BOOL, FC },
	{ "ssl_c_verify",             fetch_c_verify,       { 0 }, 0, NULL, SMP_T_SINT, FC },
	{ "ssl_c_der",                fetch_der,            { 0 }, 0, NULL, SMP_T_BIN, FC,
	  CRT_PEER_FRONT },
	{ "ssl_c_i_dn", fetch_i_dn, { ARGT_STR, ARGT_SINT, ARGT_STR }, 0, check_dn,
	  SMP_T_STR, FC, CRT_PEER_FRONT },
	{ "ssl_c_key_alg",            fetch_key_alg,        { 0 }, 0, NULL, SMP_T_STR, FC,
	  CRT_PEER_FRONT },
	{ "ssl_c_notafter",           fetch_notafter,       { 0 }, 0, NULL, SMP_T_STR, FC,
	  CRT_PEER_FRONT },
	{ "ssl_c_notbefore",          fetch_notbefore,      { 0 }, 0, NULL, SMP_T_STR, FC,
	  CRT_PEER_FRONT },
	{ "ssl_c_s_dn", fetch_s_dn, { ARGT_STR, ARGT_SINT, ARGT_STR }, 0, check_dn,
	  SMP_T_STR, FC, CRT_PEER_FRONT },
	{ "ssl_c_serial",             fetch_serial,         { 0 }, 0, NULL, SMP_T_BIN, FC,
	  CRT_PEER_FRONT },
	{ "ssl_c_sha1",               fetch_sha1,           { 0 }, 0, NULL, SMP_T_BIN, FC,
	  CRT_PEER_FRONT },
	{ "ssl_c_sig_alg",            fetch_sig_alg,        { 0 }, 0, NULL, SMP_T_STR, FC,
	  CRT_PEER_FRONT },
	{ "ssl_c_version",            fetch_version,        { 0 }, 0, NULL, SMP_T_SINT, FC,
	  CRT_PEER_FRONT },
	/* the certificate the frontend presented */
	{ "ssl_f_der",                fetch_der,            { 0 }, 0, NULL, SMP_T_BIN, FC,
	  CRT_OWN_FRONT },
	{ "ssl_f_i_dn", fetch_i_dn, { ARGT_STR, ARGT_SINT, ARGT_STR }, 0, check_dn,
	  SMP_T_STR, FC, CRT_OWN_FRONT },
	{ "ssl_f_key_alg",            fetch_key_alg,        { 0 }, 0, NULL, SMP_T_STR, FC,
	  CRT_OWN_FRONT },
	{ "ssl_f_notafter",           fetch_notafter,       { 0 }, 0, NULL, SMP_T_STR, FC,
	  CRT_OWN_FRONT },
	{ "ssl_f_notbefore",          fetch_notbefore,      { 0 }, 0, NULL, SMP_T_STR, FC,
	  CRT_OWN_FRONT },
	{ "ssl_f_s_dn", fetch_s_dn, { ARGT_STR, ARGT_SINT, ARGT_STR }, 0, check_dn,
	  SMP_T_STR, FC, CRT_OWN_FRONT },
	{ "ssl_f_serial",             fetch_serial,         { 0 }, 0, NULL, SMP_T_BIN, FC,
	  CRT_OWN_FRONT },
	{ "ssl_f_sha1",               fetch_sha1,           { 0 }, 0, NULL, SMP_T_BIN, FC,
	  CRT_OWN_FRONT },
	{ "ssl_f_sig_alg",            fetch_sig_alg,        { 0 }, 0, NULL, SMP_T_STR, FC,
	  CRT_OWN_FRONT },
	{ "ssl_f_version",            fetch_version,        { 0 }, 0, NULL, SMP_T_SINT, FC,
	  CRT_OWN_FRONT },
	/* the server connection */
	{ "ssl_bc",                   fetch_is_ssl,         { 0 }, 0, NULL, SMP_T_BOOL, BC, BACK },
	{ "ssl_bc_alg_keysize",       fetch_alg_keysize,    { 0 }, 0, NULL, SMP_T_SINT, BC, BACK },
	{ "ssl_bc_alpn",              fetch_alpn,           { 0 }, 0, NULL, SMP_T_STR,  BC, BACK },
	{ "ssl_bc_cipher",            fetch_cipher,         { 0 }, 0, NULL, SMP_T_STR,  BC, BACK },
	{ "ssl_bc_client_random",     fetch_client_random,  { 0 }, 0, NULL, SMP_T_BIN,  BC, BACK },
	{ "ssl_bc_err",               fetch_err,            { 0 }, 0, NULL, SMP_T_SINT, BC, BACK },
	{ "ssl_bc_err_str",           fetch_err_str,        { 0 }, 0, NULL, SMP_T_STR,  BC, BACK },
	{ "ssl_bc_is_resumed",        fetch_is_resumed,     { 0 }, 0, NULL, SMP_T_BOOL, BC, BACK },
	{ "ssl_bc_npn",               fetch_npn,            { 0 }, 0, NULL, SMP_T_STR,  BC, BACK },
	{ "ssl_bc_protocol",          fetch_protocol,       { 0 }, 0, NULL, SMP_T_STR,  BC, BACK },
	{ "ssl_bc_server_random",     fetch_server_random,  { 0 }, 0, NULL, SMP_T_BIN,  BC, BACK },
	{ "ssl_bc_session_id",        fetch_session_id,     { 0 }, 0, NULL, SMP_T_BIN,  BC, BACK },
	{ "ssl_bc_session_key",       fetch_session_key,    { 0 }, 0, NULL, SMP_T_BIN,  BC, BACK },
	{ "ssl_bc_unique_id",         fetch_unique_id,      { 0 }, 0, NULL, SMP_T_BIN,  BC, BACK },
	{ "ssl_bc_use_keysize",       fetch_use_keysize,    { 0 }, 0, NULL, SMP_T_SINT, BC, BACK },
	/* the server's certificate */
	{ "ssl_s_chain_der",          fetch_chain_der,      { 0 }, 0, NULL, SMP_T_BIN,  SC, BACK },
	{ "ssl_s_der",                fetch_der,            { 0 }, 0, NULL, SMP_T_BIN, SC,
	  CRT_PEER_BACK },
	{ "ssl_s_i_dn", fetch_i_dn, { ARGT_STR, ARGT_SINT, ARGT_STR }, 0, check_dn,
	  SMP_T_STR, SC, CRT_PEER_BACK },
	{ "ssl_s_key_alg",            fetch_key_alg,        { 0 }, 0, NULL, SMP_T_STR, SC,
	  CRT_PEER_BACK },
	{ "ssl_s_notafter",           fetch_notafter,       { 0 }, 0, NULL, SMP_T_STR, SC,
	  CRT_PEER_BACK },
	{ "ssl_s_notbefore",          fetch_notbefore,      { 0 }, 0, NULL, SMP_T_STR, SC,
	  CRT_PEER_BACK },
	{ "ssl_s_s_dn", fetch_s_dn, { ARGT_STR, ARGT_SINT, ARGT_STR }, 0, check_dn,
	  SMP_T_STR, SC, CRT_PEER_BACK },
	{ "ssl_s_serial",             fetch_serial,         { 0 }, 0, NULL, SMP_T_BIN, SC,
	  CRT_PEER_BACK },
	{ "ssl_s_sha1",               fetch_sha1,           { 0 }, 0, NULL, SMP_T_BIN, SC,
	  CRT_PEER_BACK },
	{ "ssl_s_sig_alg",            fetch_sig_alg,        { 0 }, 0, NULL, SMP_T_STR, SC,
	  CRT_PEER_BACK },
	{ "ssl_s_version",            fetch_version,        { 0 }, 0, NULL, SMP_T_SINT, SC,
	  CRT_PEER_BACK },
	{ NULL }
};

SMP_REGISTER_FETCHES(ssl_fetches)
