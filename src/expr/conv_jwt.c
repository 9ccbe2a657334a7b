/* jwt_verify(<alg>,<key>): the signature of a JWS in compact serialization
 * (three base64url parts), as HAProxy 2.6 checks it ("none": verified when
 * the signature part is empty, as 2.6 does): 1 verified, 0 not,
 * -1 unknown algorithm, -2 an algorithm not handled (PS256...), -3 invalid
 * token, -4 out of memory, -5 unknown certificate. HMAC algorithms take
 * the secret as <key>; the others a certificate (or public key) file,
 * loaded at configuration time into a cache so that no file is read while
 * traffic runs. Either argument may be a variable ("txn.alg").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>

const int expr_conv_jwt_anchor;

enum { JWT_OK = 1, JWT_FAIL = 0, JWT_UNKNOWN_ALG = -1, JWT_UNMANAGED_ALG = -2,
       JWT_INVALID = -3, JWT_NOMEM = -4, JWT_UNKNOWN_CERT = -5 };

enum jwt_kind { JWT_HMAC, JWT_RSA, JWT_EC, JWT_PS, JWT_NONE_ALG };

struct jwt_alg {
	const char *name;
	enum jwt_kind kind;
	int bits;                    /* digest size */
};

static const struct jwt_alg algs[] = {
	{ "HS256", JWT_HMAC, 256 }, { "HS384", JWT_HMAC, 384 }, { "HS512", JWT_HMAC, 512 },
	{ "RS256", JWT_RSA, 256 }, { "RS384", JWT_RSA, 384 }, { "RS512", JWT_RSA, 512 },
	{ "ES256", JWT_EC, 256 }, { "ES384", JWT_EC, 384 }, { "ES512", JWT_EC, 512 },
	{ "PS256", JWT_PS, 256 }, { "PS384", JWT_PS, 384 }, { "PS512", JWT_PS, 512 },
	{ "none", JWT_NONE_ALG, 0 },
};

/* the certificates named by jwt_verify arguments, read at start-up */
struct jwt_cert {
	struct jwt_cert *next;
	char *path;
	EVP_PKEY *key;
};
static struct jwt_cert *certs;

static const struct jwt_alg *alg_find(const char *p, size_t len)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (strlen(algs[i].name) == len && !memcmp(algs[i].name, p, len))
			return &algs[i];
	return NULL;
}

static const EVP_MD *alg_md(const struct jwt_alg *a)
{
	return a->bits == 256 ? EVP_sha256() : a->bits == 384 ? EVP_sha384() : EVP_sha512();
}

static EVP_PKEY *cert_find(const char *path, size_t len)
{
	for (struct jwt_cert *c = certs; c; c = c->next)
		if (strlen(c->path) == len && !memcmp(c->path, path, len))
			return c->key;
	return NULL;
}

/* A PEM certificate, or a PEM public key, into the cache. */
static int cert_load(const char *path, char *err, size_t errlen)
{
	struct jwt_cert *c;
	EVP_PKEY *k = NULL;
	X509 *x;
	FILE *f;

	if (cert_find(path, strlen(path)))
		return 0;
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "failed to load certificate '%s'", path);
		return -1;
	}
	x = PEM_read_X509(f, NULL, NULL, NULL);
	if (x) {
		k = X509_get_pubkey(x);
		X509_free(x);
	} else {
		rewind(f);
		k = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	}
	fclose(f);
	c = k ? calloc(1, sizeof(*c)) : NULL;
	if (!c || !(c->path = strdup(path))) {
		EVP_PKEY_free(k);
		free(c);
		snprintf(err, errlen, "failed to load certificate '%s'", path);
		return -1;
	}
	c->key = k;
	c->next = certs;
	certs = c;
	return 0;
}

/* An argument is a variable when it names one ("txn.x"), else literal. */
static int arg_var_or_str(struct smp_arg *a)
{
	char sub[128];

	if (!a->text || !strchr(a->text, '.') ||
	    vars_parse_ref(a->text, strlen(a->text), &a->data.var, sub, sizeof(sub)) < 0)
		return 0;
	a->type = ARGT_VAR;
	return 1;
}

static int check_jwt_verify(struct smp_args *args, char *err, size_t errlen)
{
	int alg_var = arg_var_or_str(&args->a[0]);
	int key_var = arg_var_or_str(&args->a[1]);
	const struct jwt_alg *a;

	if (alg_var)
		return 0;
	a = alg_find(args->a[0].data.str.ptr, args->a[0].data.str.len);
	if (!a) {
		snprintf(err, errlen, "unknown JWT algorithm: %s", args->a[0].text);
		return -1;
	}
	if (a->kind == JWT_PS) {
		snprintf(err, errlen, "RSASSA-PSS JWS signing not managed yet.");
		return -1;
	}
	if ((a->kind == JWT_RSA || a->kind == JWT_EC) && !key_var)
		return cert_load(args->a[1].data.str.ptr, err, errlen);
	return 0;
}

/* The argument's string: literal, or the variable's value as a string. */
static int arg_str(const struct smp_arg *a, struct smp_ctx *ctx, struct sample *tmp,
                   const char **p, size_t *len)
{
	if (a->type != ARGT_VAR) {
		*p = a->data.str.ptr;
		*len = a->data.str.len;
		return 1;
	}
	memset(tmp, 0, sizeof(*tmp));
	if (!vars_get(ctx, &a->data.var, tmp) || !smp_cast(tmp, SMP_T_STR))
		return 0;
	*p = tmp->data.str.ptr;
	*len = tmp->data.str.len;
	return 1;
}

static int verify_hmac(const struct jwt_alg *a, const char *key, size_t klen,
                       const char *in, size_t inlen, const unsigned char *sig, size_t slen)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int mlen = 0;

	if (!HMAC(alg_md(a), key, (int)klen, (const unsigned char *)in, inlen, mac, &mlen))
		return JWT_NOMEM;
	return mlen == slen && !CRYPTO_memcmp(mac, sig, slen) ? JWT_OK : JWT_FAIL;
}

/* JWS ECDSA signatures are R || S of the curve's size; OpenSSL wants DER. */
static int ec_sig_der(const unsigned char *sig, size_t slen, unsigned char **der, int *dlen)
{
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *r, *s;

	if (!es)
		return -1;
	r = BN_bin2bn(sig, (int)(slen / 2), NULL);
	s = BN_bin2bn(sig + slen / 2, (int)(slen / 2), NULL);
	if (!r || !s || !ECDSA_SIG_set0(es, r, s)) {
		BN_free(r);
		BN_free(s);
		ECDSA_SIG_free(es);
		return -1;
	}
	*der = NULL;
	*dlen = i2d_ECDSA_SIG(es, der);
	ECDSA_SIG_free(es);
	return *dlen > 0 ? 0 : -1;
}

static int verify_pkey(const struct jwt_alg *a, EVP_PKEY *k, const char *in, size_t inlen,
                       const unsigned char *sig, size_t slen)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char *der = NULL;
	int dlen = (int)slen, r;

	if (!md)
		return JWT_NOMEM;
	if (a->kind == JWT_EC) {
		size_t want = a->bits == 256 ? 64 : a->bits == 384 ? 96 : 132;

		if (slen != want || ec_sig_der(sig, slen, &der, &dlen) < 0) {
			EVP_MD_CTX_free(md);
			return JWT_FAIL;
		}
	}
	r = EVP_DigestVerifyInit(md, NULL, alg_md(a), NULL, k) == 1 &&
	    EVP_DigestVerify(md, der ? der : sig, (size_t)dlen, (const unsigned char *)in,
	                     inlen) == 1;
	OPENSSL_free(der);
	EVP_MD_CTX_free(md);
	return r ? JWT_OK : JWT_FAIL;
}

static int smp_conv_jwt_verify(const struct smp_args *args, struct sample *smp,
                               struct smp_ctx *ctx)
{
	const char *tok = smp->data.str.ptr, *d1, *d2, *ap, *kp;
	size_t len = smp->data.str.len, al, kl;
	unsigned char sig[1024];
	struct sample ta, tk;
	const struct jwt_alg *a;
	long slen;
	int r;

	if (!arg_str(&args->a[0], ctx, &ta, &ap, &al) || !arg_str(&args->a[1], ctx, &tk, &kp, &kl))
		return 0;
	a = alg_find(ap, al);
	d1 = memchr(tok, '.', len);
	d2 = d1 ? memchr(d1 + 1, '.', (size_t)(tok + len - d1 - 1)) : NULL;
	if (!a)
		r = JWT_UNKNOWN_ALG;
	else if (a->kind == JWT_PS)
		r = JWT_UNMANAGED_ALG;
	else if (a->kind == JWT_NONE_ALG && d1)   /* as HAProxy 2.6: no signature, verified */
		r = !d2 || d2 + 1 == tok + len ? JWT_OK : JWT_FAIL;
	else if (!d1 || !d2 || memchr(d2 + 1, '.', (size_t)(tok + len - d2 - 1)))
		r = JWT_INVALID;
	else if ((slen = smp_base64_decode(d2 + 1, (size_t)(tok + len - d2 - 1), 1, sig,
	                                   sizeof(sig))) <= 0)
		r = JWT_INVALID;
	else if (a->kind == JWT_HMAC)
		r = verify_hmac(a, kp, kl, tok, (size_t)(d2 - tok), sig, (size_t)slen);
	else if (!cert_find(kp, kl))
		r = JWT_UNKNOWN_CERT;
	else
		r = verify_pkey(a, cert_find(kp, kl), tok, (size_t)(d2 - tok), sig, (size_t)slen);
	smp_set_sint(smp, r);
	return 1;
}

static const struct smp_conv_kw jwt_convs[] = {
	{ "jwt_verify", smp_conv_jwt_verify, { ARGT_STR, ARGT_STR }, 2, check_jwt_verify,
	  SMP_T_STR, SMP_T_SINT },
	{ NULL }
};
SMP_REGISTER_CONVS(jwt_convs)
