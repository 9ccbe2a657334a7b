/* The TLS transport: OpenSSL under a connection, so that everything above
 * conn_recv()/conn_send() sees bytes. Owner thread only, like the
 * connection. See src/net/tls.c for how OpenSSL's "want read / want write"
 * is mapped onto the poller's edge-triggered readiness. */
#ifndef SLUICE_NET_TLS_H
#define SLUICE_NET_TLS_H

#include <stddef.h>
#include <sys/types.h>
#include <openssl/ssl.h>

struct conn;
struct buffer;

/* Puts an accepted connection under TLS (server side of the handshake).
 * <early> holds bytes already read from the socket that belong to the TLS
 * stream (what followed a PROXY header), given to OpenSSL first. Returns
 * 0, or -1 (no memory). */
int tls_conn_accept(struct conn *c, SSL_CTX *ctx, const void *early, size_t early_len);

/* Puts a connection being established under TLS (client side). <sni> may
 * be NULL; <sess>, if not NULL, is offered for resumption. <preface> is
 * sent in clear before the handshake (a PROXY header). Returns 0 or -1. */
int tls_conn_connect(struct conn *c, SSL_CTX *ctx, const char *sni, SSL_SESSION *sess,
                     const void *preface, size_t preface_len);

/* Advances the handshake. Returns 0 when it is complete, EINPROGRESS while
 * it waits for the socket, ENODATA when the peer closed cleanly before its
 * first handshake message was complete (HAProxy's "Connection closed during
 * SSL handshake"), EPROTO on a TLS failure or a clean close later in the
 * handshake, or the errno of a socket error (ECONNRESET...). */
int tls_handshake(struct conn *c, int for_write);

ssize_t tls_recv(struct conn *c, struct buffer *b, size_t max);
ssize_t tls_send(struct conn *c, struct buffer *b, size_t max);
/* One write of <len> bytes (see conn_send_bytes()). */
ssize_t tls_send_bytes(struct conn *c, const void *p, size_t len);
/* Sends close_notify (once the handshake is over). */
void tls_shutw(struct conn *c);
/* Frees the TLS state; <clean>: send close_notify first if not yet sent. */
void tls_free(struct conn *c, int clean);

/* The OpenSSL error code that failed the connection of <ssl> (its first
 * failure, handshake or later), 0 if none: ssl_fc_err, ssl_bc_err. */
unsigned long tls_error_code(const struct ssl_st *ssl);

/* The reason of the TLS failure on <c>, for logs ("" if none). */
const char *tls_error_str(const struct conn *c);

#endif
