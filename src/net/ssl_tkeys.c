/* TLS session ticket keys (tls-ticket-keys).
 *
 * A key file is read once, whatever the number of bind lines naming it,
 * into a reference with an id (0, 1, ... in the order files are first
 * named, as HAProxy numbers them for `show tls-keys`). A reference holds
 * its current key set through an atomic pointer: the last three keys, the
 * middle one encrypting new tickets, all three decrypting. The ticket
 * callback runs on any thread and only loads that pointer; `set ssl
 * tls-key` (a CLI session, under ssl_store_lock) builds a new
 * set (the oldest key dropped, the new one last), publishes it with an
 * atomic exchange and frees the old one after a grace period (grace.c):
 * no lock on the handshake path.
 *
 * A key is 48 bytes (AES-128) or 80 (AES-256): a 16-byte name, the AES
 * key, the HMAC-SHA256 key. The first key of a file sets the size for the
 * file, and for the keys the CLI adds to it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sluice/core/grace.h>
#include <sluice/core/lock.h>
#include <sluice/mgmt/cli.h>
#include <sluice/net/ssl_crt.h>
#include <sluice/net/ssl_tkeys.h>

#define TKEYS 3
#define TKEY_MAX 80

struct tkey_set {
	unsigned char raw[TKEYS][TKEY_MAX];   /* as in the file, oldest first */
	int raw_len;                          /* 48 or 80 */
};

struct ssl_tkeys_ref {
	struct ssl_tkeys_ref *next;
	char *path;
	int id;
	EVP_CIPHER *cipher;                   /* AES-128-CBC or AES-256-CBC */
	struct tkey_set *_Atomic cur;         /* see the file's comment */
};

/* References in creation order; written at configuration time only. */
static struct ssl_tkeys_ref *refs;
static int refs_count;
/* SSL_CTX ex_data: the reference the context's tickets use */
static int ctx_idx = -1;

/* One base64 key: its size in bytes, -1 if it is not a key's size, -2 if
 * it is not base64. */
static int decode_key(const char *b64, size_t len, unsigned char out[TKEY_MAX])
{
	unsigned char raw[(TKEY_MAX + 2) / 3 * 3 + 3];
	int k;

	if (!len || len % 4)
		return -2;
	if (len > (TKEY_MAX + 2) / 3 * 4)
		return -1;
	k = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)len);
	if (k < 0)
		return -2;
	/* EVP_DecodeBlock counts the padding: take it off */
	if (b64[len - 1] == '=')
		k -= (len > 1 && b64[len - 2] == '=') ? 2 : 1;
	if (k != 48 && k != 80)
		return -1;
	memcpy(out, raw, (size_t)k);
	return k;
}

static int load_file(struct ssl_tkeys_ref *r, char *err, size_t errlen)
{
	unsigned char (*keys)[TKEY_MAX] = NULL;
	int n = 0, len = 0, rc = -1;
	char line[512];
	FILE *f = fopen(r->path, "r");

	if (!f) {
		snprintf(err, errlen, "unable to read tls-ticket-keys file '%s': %s.",
		         r->path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t l = strcspn(line, "\r\n");
		unsigned char raw[TKEY_MAX];
		int k;

		if (!l)
			continue;
		k = decode_key(line, l, raw);
		if (k < 0 || (len && k != len)) {
			snprintf(err, errlen, "tls-ticket-keys file '%s': key %d is not a base64 "
			         "key of %d bytes.", r->path, n + 1, len ? len : 48);
			goto out;
		}
		len = k;
		keys = realloc(keys, sizeof(*keys) * (size_t)(n + 1));
		memcpy(keys[n++], raw, (size_t)k);
	}
	if (n < TKEYS) {
		snprintf(err, errlen, "tls-ticket-keys file '%s' has %d keys, at least %d are "
		         "needed.", r->path, n, TKEYS);
		goto out;
	}
	r->cur = calloc(1, sizeof(*r->cur));
	if (!r->cur)
		goto out;
	r->cur->raw_len = len;
	for (int i = 0; i < TKEYS; i++)
		memcpy(r->cur->raw[i], keys[n - TKEYS + i], (size_t)len);
	r->cipher = EVP_CIPHER_fetch(NULL, len == 48 ? "AES-128-CBC" : "AES-256-CBC", NULL);
	if (!r->cipher) {
		snprintf(err, errlen, "cannot fetch the ticket cipher.");
		goto out;
	}
	rc = 0;
out:
	if (keys)
		OPENSSL_cleanse(keys, sizeof(*keys) * (size_t)n);
	free(keys);
	fclose(f);
	return rc;
}

struct ssl_tkeys_ref *ssl_tkeys_load(const char *path, char *err, size_t errlen)
{
	struct ssl_tkeys_ref *r, **tail = &refs;

	for (r = refs; r; tail = &r->next, r = r->next)
		if (!strcmp(r->path, path))
			return r;
	if (ctx_idx < 0)
		ctx_idx = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		snprintf(err, errlen, "out of memory.");
		return NULL;
	}
	if (load_file(r, err, errlen) < 0) {
		free(r->cur);
		EVP_CIPHER_free(r->cipher);
		free(r->path);
		free(r);
		return NULL;
	}
	r->id = refs_count++;
	*tail = r;
	return r;
}

/* Encrypts new tickets with the middle key, decrypts with any of the three
 * (asking for a new ticket when it was not the current one). */
static int ticket_key_cb(SSL *ssl, unsigned char name[16], unsigned char iv[16],
                         EVP_CIPHER_CTX *cctx, EVP_MAC_CTX *hctx, int enc)
{
	const struct ssl_tkeys_ref *r = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ctx_idx);
	const struct tkey_set *set = atomic_load(&r->cur);
	int kl = set->raw_len == 48 ? 16 : 32, i = 1;
	const unsigned char *k;
	OSSL_PARAM params[3];

	if (enc) {
		k = set->raw[1];
		memcpy(name, k, 16);
		if (RAND_bytes(iv, 16) <= 0 || !EVP_EncryptInit_ex(cctx, r->cipher, NULL, k + 16, iv))
			return -1;
	} else {
		for (i = 0; i < TKEYS && memcmp(set->raw[i], name, 16); i++)
			;
		if (i == TKEYS)
			return 0;   /* unknown key: a full handshake */
		k = set->raw[i];
		if (!EVP_DecryptInit_ex(cctx, r->cipher, NULL, k + 16, iv))
			return -1;
	}
	params[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, (void *)(k + 16 + kl),
	                                              (size_t)kl);
	params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0);
	params[2] = OSSL_PARAM_construct_end();
	if (!EVP_MAC_CTX_set_params(hctx, params))
		return -1;
	return enc || i == 1 ? 1 : 2;
}

void ssl_tkeys_attach(SSL_CTX *ctx, struct ssl_tkeys_ref *ref)
{
	SSL_CTX_set_ex_data(ctx, ctx_idx, ref);
	SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_key_cb);
}

/* "#<id>" or a file name. */
static struct ssl_tkeys_ref *find_ref(const char *id)
{
	for (struct ssl_tkeys_ref *r = refs; r; r = r->next) {
		if (id[0] == '#' && id[1] && strtol(id + 1, NULL, 10) == r->id &&
		    strspn(id + 1, "0123456789") == strlen(id + 1))
			return r;
		if (!strcmp(r->path, id))
			return r;
	}
	return NULL;
}

static void show_keys(const struct ssl_tkeys_ref *r, struct cli_out *out)
{
	const struct tkey_set *set = atomic_load(&r->cur);
	unsigned char b64[(TKEY_MAX + 2) / 3 * 4 + 1];

	cli_printf(out, "# %d (%s)\n", r->id, r->path);
	for (int i = 0; i < TKEYS; i++) {
		EVP_EncodeBlock(b64, set->raw[i], set->raw_len);
		cli_printf(out, "%d.%d %s\n", r->id, i, b64);
	}
}

int ssl_tkeys_show(const char *id, struct cli_out *out)
{
	const struct ssl_tkeys_ref *one = NULL;

	if (id && strcmp(id, "*") && !(one = find_ref(id))) {
		cli_printf(out, "'show tls-keys' unable to locate referenced filename\n");
		return -1;
	}
	if (!id) {
		cli_printf(out, "# id (file)\n");
		for (const struct ssl_tkeys_ref *r = refs; r; r = r->next)
			cli_printf(out, "%d (%s)\n", r->id, r->path);
		return 0;
	}
	cli_printf(out, "# id secret\n");
	for (const struct ssl_tkeys_ref *r = refs; r; r = r->next)
		if (!one || r == one)
			show_keys(r, out);
	return 0;
}

static void free_set(void *p)
{
	OPENSSL_cleanse(p, sizeof(struct tkey_set));
	free(p);
}

int ssl_tkeys_set(const char *id, const char *b64, struct cli_out *out)
{
	struct ssl_tkeys_ref *r = id ? find_ref(id) : NULL;
	struct tkey_set *set, *old;
	unsigned char key[TKEY_MAX];
	int k;

	if (!id || !b64) {
		cli_printf(out, "'set ssl tls-key' expects a filename and the new TLS key in "
		           "base64 encoding.\n");
		return -1;
	}
	if (!r) {
		cli_printf(out, "'set ssl tls-key' unable to locate referenced filename\n");
		return -1;
	}
	if ((k = decode_key(b64, strlen(b64), key)) == -2) {
		cli_printf(out, "'set ssl tls-key' received invalid base64 encoded TLS key.\n");
		return -1;
	}
	/* two CLI sessions (on two threads) must not rotate from the same set:
	 * one key would be lost */
	lock_take(&ssl_store_lock);
	old = atomic_load(&r->cur);
	if (k != old->raw_len || !(set = malloc(sizeof(*set)))) {
		lock_release(&ssl_store_lock);
		cli_printf(out, k != old->raw_len ? "'set ssl tls-key' received a key of wrong "
		           "size.\n" : "out of memory.\n");
		return -1;
	}
	set->raw_len = k;
	memcpy(set->raw[0], old->raw[1], (size_t)k);
	memcpy(set->raw[1], old->raw[2], (size_t)k);
	memcpy(set->raw[2], key, (size_t)k);
	OPENSSL_cleanse(key, sizeof(key));
	old = atomic_exchange(&r->cur, set);
	lock_release(&ssl_store_lock);
	if (grace_defer(free_set, old) < 0)
		cli_printf(out, "out of memory: the old keys stay allocated.\n");
	cli_printf(out, "TLS ticket key updated!\n");
	return 0;
}
