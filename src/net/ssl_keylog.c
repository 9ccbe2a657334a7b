/* tune.ssl.keylog: see ssl_keylog.h. OpenSSL hands each secret to the
 * context's keylog callback as an NSS key log line during the handshake;
 * the secret's hexadecimal text is kept in the connection's ex_data,
 * freed with it.
 */
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/net/ssl_keylog.h>

#define KEYLOG_SECRET_MAX 128     /* hex digits: SHA-384 secrets take 96 */

struct keylog {
	char secret[KEYLOG_COUNT][KEYLOG_SECRET_MAX + 1];
};

static int keylog_on;
static int ex_idx = -1;

static const char *const labels[KEYLOG_COUNT] = {
	[KEYLOG_CLIENT_EARLY] = "CLIENT_EARLY_TRAFFIC_SECRET",
	[KEYLOG_CLIENT_HS] = "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
	[KEYLOG_SERVER_HS] = "SERVER_HANDSHAKE_TRAFFIC_SECRET",
	[KEYLOG_CLIENT_TRAFFIC] = "CLIENT_TRAFFIC_SECRET_0",
	[KEYLOG_SERVER_TRAFFIC] = "SERVER_TRAFFIC_SECRET_0",
	[KEYLOG_EXPORTER] = "EXPORTER_SECRET",
	[KEYLOG_EARLY_EXPORTER] = "EARLY_EXPORTER_SECRET",
};

int ssl_keylog_on(void)
{
	return keylog_on;
}

int ssl_keylog_parse(const char *line, const char **secret, size_t *len)
{
	const char *sp1 = strchr(line, ' '), *sp2;
	int k;

	if (!sp1 || !(sp2 = strchr(sp1 + 1, ' ')))
		return -1;
	for (k = 0; k < KEYLOG_COUNT; k++)
		if (strlen(labels[k]) == (size_t)(sp1 - line) &&
		    !strncmp(line, labels[k], (size_t)(sp1 - line)))
			break;
	if (k == KEYLOG_COUNT)
		return -1;
	*secret = sp2 + 1;
	*len = strcspn(sp2 + 1, " \r\n");
	if (!*len || *len > KEYLOG_SECRET_MAX)
		return -1;
	return k;
}

static void keylog_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                        void *argp)
{
	free(ptr);
}

static void keylog_cb(const SSL *ssl, const char *line)
{
	struct keylog *kl = SSL_get_ex_data(ssl, ex_idx);
	const char *secret;
	size_t len;
	int k = ssl_keylog_parse(line, &secret, &len);

	if (k < 0)
		return;
	if (!kl) {
		kl = calloc(1, sizeof(*kl));
		if (!kl || !SSL_set_ex_data((SSL *)ssl, ex_idx, kl)) {
			free(kl);
			return;
		}
	}
	memcpy(kl->secret[k], secret, len);
	kl->secret[k][len] = 0;
}

int ssl_keylog_enable(SSL_CTX *ctx)
{
	if (ex_idx < 0)
		ex_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, keylog_free);
	if (ex_idx < 0)
		return -1;
	SSL_CTX_set_keylog_callback(ctx, keylog_cb);
	return 0;
}

const char *ssl_keylog_get(const SSL *ssl, enum ssl_keylog_secret which)
{
	const struct keylog *kl = ex_idx < 0 ? NULL : SSL_get_ex_data(ssl, ex_idx);

	return kl && kl->secret[which][0] ? kl->secret[which] : NULL;
}

static int kw_keylog(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (nargs != 2 || (strcmp(args[1], "on") && strcmp(args[1], "off")))
		return errmsg_set(err, errlen, "expects either 'on' or 'off' but got '%s'.",
		                  nargs > 1 ? args[1] : "");
	keylog_on = !strcmp(args[1], "on");
	return 0;
}

static const struct cfg_kw keylog_kws[] = {
	{ "tune.ssl.keylog", NULL, CFG_SEC_GLOBAL, kw_keylog },
	{ NULL }
};
CFG_REGISTER(keylog_kws)
