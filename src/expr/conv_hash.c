/* Hash, digest and base64 converters (manual section 7.3.1).
 *
 * Cryptographic digests and HMAC use OpenSSL 3's EVP interface (algorithms
 * are looked up once, at configuration time; the EVP objects are
 * thread-safe to use concurrently for one-shot calls). Base64 encoding uses
 * EVP_EncodeBlock; decoding is strict (length a multiple of 4 for base64,
 * padding optional for base64url, no stray characters). The 32-bit hashes
 * are HAProxy's own definitions (hash.c).
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/hash.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>

const int expr_conv_hash_anchor;

#define C(name) static int smp_conv_##name(const struct smp_args *args, \
	struct sample *smp, struct smp_ctx *ctx)

C(sha1); C(sha2); C(digest); C(hmac); C(crc32); C(crc32c); C(djb2); C(sdbm);
C(wt6); C(xxh3); C(xxh32); C(xxh64); C(secure_memcmp); C(base64); C(b64dec);
C(ub64enc); C(ub64dec);
#undef C

static int check_sha2(struct smp_args *args, char *err, size_t errlen);
static int check_digest(struct smp_args *args, char *err, size_t errlen);
static int check_hmac(struct smp_args *args, char *err, size_t errlen);
static int check_avalanche(struct smp_args *args, char *err, size_t errlen);
static int check_memcmp(struct smp_args *args, char *err, size_t errlen);

static const struct smp_conv_kw hash_convs[] = {
	{ "sha1",    smp_conv_sha1,    { 0 }, 0, NULL, SMP_T_BIN, SMP_T_BIN },
	{ "sha2",    smp_conv_sha2,    { ARGT_SINT }, 0, check_sha2, SMP_T_BIN, SMP_T_BIN },
	{ "digest",  smp_conv_digest,  { ARGT_STR }, 1, check_digest, SMP_T_BIN, SMP_T_BIN },
	{ "hmac",    smp_conv_hmac,    { ARGT_STR, ARGT_STR }, 2, check_hmac, SMP_T_BIN, SMP_T_BIN },
	{ "crc32",   smp_conv_crc32,   { ARGT_SINT }, 0, check_avalanche, SMP_T_BIN, SMP_T_SINT },
	{ "crc32c",  smp_conv_crc32c,  { ARGT_SINT }, 0, check_avalanche, SMP_T_BIN, SMP_T_SINT },
	{ "djb2",    smp_conv_djb2,    { ARGT_SINT }, 0, check_avalanche, SMP_T_BIN, SMP_T_SINT },
	{ "sdbm",    smp_conv_sdbm,    { ARGT_SINT }, 0, check_avalanche, SMP_T_BIN, SMP_T_SINT },
	{ "wt6",     smp_conv_wt6,     { ARGT_SINT }, 0, check_avalanche, SMP_T_BIN, SMP_T_SINT },
	{ "xxh3",    smp_conv_xxh3,    { ARGT_SINT }, 0, NULL, SMP_T_BIN, SMP_T_SINT },
	{ "xxh32",   smp_conv_xxh32,   { ARGT_SINT }, 0, NULL, SMP_T_BIN, SMP_T_SINT },
	{ "xxh64",   smp_conv_xxh64,   { ARGT_SINT }, 0, NULL, SMP_T_BIN, SMP_T_SINT },
	{ "secure_memcmp", smp_conv_secure_memcmp, { ARGT_STR }, 1, check_memcmp, SMP_T_BIN, SMP_T_BOOL },
	{ "base64",  smp_conv_base64,  { 0 }, 0, NULL, SMP_T_BIN, SMP_T_STR },
	{ "b64dec",  smp_conv_b64dec,  { 0 }, 0, NULL, SMP_T_STR, SMP_T_BIN },
	{ "ub64enc", smp_conv_ub64enc, { 0 }, 0, NULL, SMP_T_BIN, SMP_T_STR },
	{ "ub64dec", smp_conv_ub64dec, { 0 }, 0, NULL, SMP_T_STR, SMP_T_BIN },
	{ NULL }
};
SMP_REGISTER_CONVS(hash_convs)

static int has_arg(const struct smp_args *args, int i)
{
	return args->n > i && args->a[i].type != ARGT_STOP;
}

/* ------------------------------------------------------------------ base64 */

/* Decodes base64 (or base64url) <in> into <out>. Padding is required for
 * base64 (length a multiple of 4), optional for base64url. Returns the
 * length, or -1 if invalid or too long. */
long smp_base64_decode(const char *in, size_t len, int url, unsigned char *out, size_t cap)
{
	unsigned int acc = 0, bits = 0;
	size_t n = 0, pad = 0;

	if (!url && len % 4)
		return -1;
	while (len && in[len - 1] == '=' && pad < 2) {
		len--;
		pad++;
	}
	if (url && (len + pad) % 4 == 1)
		return -1;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		int v;

		if (c >= 'A' && c <= 'Z') v = c - 'A';
		else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
		else if (c >= '0' && c <= '9') v = c - '0' + 52;
		else if (c == (url ? '-' : '+')) v = 62;
		else if (c == (url ? '_' : '/')) v = 63;
		else
			return -1;
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n >= cap)
				return -1;
			out[n++] = (unsigned char)(acc >> bits);
		}
	}
	if (len % 4 == 1)
		return -1;
	return (long)n;
}

static int encode(struct sample *smp, int url)
{
	struct smp_str in = smp->data.str;
	size_t olen;

	smp_set_trash(smp, SMP_T_STR);
	if ((in.len + 2) / 3 * 4 + 1 > smp->data.str.size || in.len > INT32_MAX)
		return 0;
	olen = (size_t)EVP_EncodeBlock((unsigned char *)smp->data.str.ptr,
	                               (const unsigned char *)in.ptr, (int)in.len);
	if (url) {
		while (olen && smp->data.str.ptr[olen - 1] == '=')
			olen--;
		for (size_t i = 0; i < olen; i++) {
			if (smp->data.str.ptr[i] == '+')
				smp->data.str.ptr[i] = '-';
			else if (smp->data.str.ptr[i] == '/')
				smp->data.str.ptr[i] = '_';
		}
	}
	smp->data.str.len = olen;
	return 1;
}

static int decode(struct sample *smp, int url)
{
	struct smp_str in = smp->data.str;
	long n;

	smp_set_trash(smp, SMP_T_BIN);
	n = smp_base64_decode(in.ptr, in.len, url, (unsigned char *)smp->data.str.ptr,
	               smp->data.str.size);
	if (n < 0)
		return 0;
	smp->data.str.len = (size_t)n;
	return 1;
}

static int smp_conv_base64(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return encode(smp, 0);
}

static int smp_conv_ub64enc(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return encode(smp, 1);
}

static int smp_conv_b64dec(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return decode(smp, 0);
}

static int smp_conv_ub64dec(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return decode(smp, 1);
}

/* ------------------------------------------------------------------ digests */

static int check_sha2(struct smp_args *args, char *err, size_t errlen)
{
	int64_t bits = has_arg(args, 0) ? args->a[0].data.sint : 256;
	const EVP_MD *md;

	switch (bits) {
	case 224: md = EVP_sha224(); break;
	case 256: md = EVP_sha256(); break;
	case 384: md = EVP_sha384(); break;
	case 512: md = EVP_sha512(); break;
	default:
		return errmsg_set(err, errlen, "Unsupported number of bits: '%lld'", (long long)bits);
	}
	args->priv = (void *)md;
	return 0;
}

static int check_digest(struct smp_args *args, char *err, size_t errlen)
{
	const EVP_MD *md = EVP_get_digestbyname(args->a[0].data.str.ptr);

	if (!md)
		return errmsg_set(err, errlen, "algorithm must be a valid OpenSSL message digest "
		                  "name, not '%s'", args->a[0].data.str.ptr);
	args->priv = (void *)md;
	return 0;
}

static int run_digest(const EVP_MD *md, struct sample *smp)
{
	struct smp_str in = smp->data.str;
	unsigned int len = 0;

	smp_set_trash(smp, SMP_T_BIN);
	if ((size_t)EVP_MD_get_size(md) > smp->data.str.size ||
	    !EVP_Digest(in.ptr, in.len, (unsigned char *)smp->data.str.ptr, &len, md, NULL))
		return 0;
	smp->data.str.len = len;
	return 1;
}

static int smp_conv_sha1(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return run_digest(EVP_sha1(), smp);
}

static int smp_conv_sha2(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return run_digest(args->priv, smp);
}

static int smp_conv_digest(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return run_digest(args->priv, smp);
}

/* hmac(<alg>,<key>): <key> is base64, or the name of a variable holding
 * base64. priv: the digest; a[1] stays a variable or gets the decoded key. */
struct hmac_conf {
	const EVP_MD *md;
	size_t keylen;
	unsigned char key[];
};

static int check_hmac(struct smp_args *args, char *err, size_t errlen)
{
	const EVP_MD *md = EVP_get_digestbyname(args->a[0].data.str.ptr);
	const char *k = args->a[1].data.str.ptr;
	size_t klen = args->a[1].data.str.len;
	struct hmac_conf *h;
	struct var_ref ref;
	char sub[128];
	long n;

	if (!md)
		return errmsg_set(err, errlen, "algorithm must be a valid OpenSSL message digest "
		                  "name, not '%s'", args->a[0].data.str.ptr);
	h = calloc(1, sizeof(*h) + klen + 1);
	if (!h)
		return errmsg_set(err, errlen, "out of memory");
	h->md = md;
	if (memchr(k, '.', klen) && vars_parse_ref(k, klen, &ref, sub, sizeof(sub)) == 0) {
		args->a[1].type = ARGT_VAR;
		args->a[1].data.var = ref;
	} else {
		n = smp_base64_decode(k, klen, 0, h->key, klen + 1);
		if (n < 0) {
			free(h);
			return errmsg_set(err, errlen, "key '%s' is neither base64 nor a variable", k);
		}
		h->keylen = (size_t)n;
	}
	args->priv = h;
	args->free_priv = free;
	return 0;
}

static int smp_conv_hmac(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct hmac_conf *h = args->priv;
	const unsigned char *key = h->key;
	unsigned char kbuf[1024];
	size_t klen = h->keylen;
	struct smp_str in;
	unsigned int len = 0;

	if (args->a[1].type == ARGT_VAR) {
		struct sample v = { 0 };
		long n;

		if (!vars_get(ctx, &args->a[1].data.var, &v) || !smp_cast(&v, SMP_T_STR))
			return 0;
		n = smp_base64_decode(v.data.str.ptr, v.data.str.len, 0, kbuf, sizeof(kbuf));
		if (n < 0)
			return 0;
		key = kbuf;
		klen = (size_t)n;
	}
	in = smp->data.str;
	smp_set_trash(smp, SMP_T_BIN);
	if (!HMAC(h->md, key, (int)klen, (const unsigned char *)in.ptr, in.len,
	          (unsigned char *)smp->data.str.ptr, &len))
		return 0;
	smp->data.str.len = len;
	return 1;
}

/* ------------------------------------------------------------------ 32/64-bit hashes */

static int check_avalanche(struct smp_args *args, char *err, size_t errlen)
{
	if (has_arg(args, 0) && args->a[0].data.sint != 0 && args->a[0].data.sint != 1)
		return errmsg_set(err, errlen, "avalanche must be 0 or 1");
	return 0;
}

static int hash32(const struct smp_args *args, struct sample *smp, uint32_t h)
{
	if (has_arg(args, 0) && args->a[0].data.sint)
		h = hash_avalanche(h);
	smp_set_sint(smp, h);
	return 1;
}

static int smp_conv_crc32(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return hash32(args, smp, hash_crc32(smp->data.str.ptr, smp->data.str.len));
}

static int smp_conv_crc32c(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return hash32(args, smp, hash_crc32c(smp->data.str.ptr, smp->data.str.len));
}

static int smp_conv_djb2(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return hash32(args, smp, hash_djb2(smp->data.str.ptr, smp->data.str.len));
}

static int smp_conv_sdbm(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return hash32(args, smp, hash_sdbm(smp->data.str.ptr, smp->data.str.len));
}

static int smp_conv_wt6(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return hash32(args, smp, hash_wt6(smp->data.str.ptr, smp->data.str.len));
}

static uint64_t seed_of(const struct smp_args *args)
{
	return has_arg(args, 0) ? (uint64_t)args->a[0].data.sint : 0;
}

static int smp_conv_xxh3(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, (int64_t)hash_xxh3_64(smp->data.str.ptr, smp->data.str.len, seed_of(args)));
	return 1;
}

static int smp_conv_xxh32(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, hash_xxh32(smp->data.str.ptr, smp->data.str.len, (uint32_t)seed_of(args)));
	return 1;
}

static int smp_conv_xxh64(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, (int64_t)hash_xxh64(smp->data.str.ptr, smp->data.str.len, seed_of(args)));
	return 1;
}

/* ------------------------------------------------------------------ comparison */

static int check_memcmp(struct smp_args *args, char *err, size_t errlen)
{
	if (vars_parse_ref(args->a[0].data.str.ptr, args->a[0].data.str.len,
	                   &args->a[0].data.var, err, errlen) < 0)
		return -1;
	args->a[0].type = ARGT_VAR;
	return 0;
}

/* Constant time when the lengths are equal. */
static int smp_conv_secure_memcmp(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct sample v = { 0 };
	int eq;

	if (!vars_get(ctx, &args->a[0].data.var, &v) || !smp_cast(&v, SMP_T_BIN))
		return 0;
	eq = v.data.str.len == smp->data.str.len &&
	     CRYPTO_memcmp(v.data.str.ptr, smp->data.str.ptr, v.data.str.len) == 0;
	smp_set_bool(smp, eq);
	return 1;
}
