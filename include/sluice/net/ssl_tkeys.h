/* TLS session ticket keys (tls-ticket-keys): one reference per key file,
 * shared by the bind lines that name it, rotated at run time by the CLI
 * (src/net/ssl_tkeys.c). */
#ifndef SLUICE_NET_SSL_TKEYS_H
#define SLUICE_NET_SSL_TKEYS_H

#include <stddef.h>
#include <openssl/ssl.h>

struct ssl_tkeys_ref;
struct cli_out;

/* The reference of key file <path>, loaded on first use (configuration
 * time). NULL with a message in <err>. */
struct ssl_tkeys_ref *ssl_tkeys_load(const char *path, char *err, size_t errlen);
/* Makes <ctx> encrypt and decrypt its tickets with <ref>'s keys. */
void ssl_tkeys_attach(SSL_CTX *ctx, struct ssl_tkeys_ref *ref);

/* CLI: `show tls-keys [<id>|*]`, `set ssl tls-key <id> <key>` (HAProxy
 * 2.6's output and messages). <id> is "#<n>" or the file's name. Return 0,
 * or -1 after writing an error. */
int ssl_tkeys_show(const char *id, struct cli_out *out);
int ssl_tkeys_set(const char *id, const char *b64, struct cli_out *out);

#endif
