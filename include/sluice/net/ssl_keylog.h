/* tune.ssl.keylog: the TLS 1.3 secrets of frontend connections, kept per
 * connection for the ssl_fc_*_secret fetches (an SSLKEYLOGFILE written
 * with log-format). Off by default: it costs a small allocation per
 * handshake (src/net/ssl_keylog.c). */
#ifndef SLUICE_NET_SSL_KEYLOG_H
#define SLUICE_NET_SSL_KEYLOG_H

#include <openssl/ssl.h>

enum ssl_keylog_secret {
	KEYLOG_CLIENT_EARLY, KEYLOG_CLIENT_HS, KEYLOG_SERVER_HS, KEYLOG_CLIENT_TRAFFIC,
	KEYLOG_SERVER_TRAFFIC, KEYLOG_EXPORTER, KEYLOG_EARLY_EXPORTER, KEYLOG_COUNT
};

/* 1 when tune.ssl.keylog is on. */
int ssl_keylog_on(void);

/* Installs the callback on a frontend context. 0, or -1. */
int ssl_keylog_enable(SSL_CTX *ctx);

/* The secret of that kind as hexadecimal text, NULL if none was logged. */
const char *ssl_keylog_get(const SSL *ssl, enum ssl_keylog_secret which);

/* One line of OpenSSL's key log ("<label> <random> <secret>"): the kind of
 * secret (-1: a label not kept) and the secret's span. Pure; exported for
 * the unit test. */
int ssl_keylog_parse(const char *line, const char **secret, size_t *len);

#endif
