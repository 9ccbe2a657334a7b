/* The frontends' TLS session cache, shared by all threads, sharded (see
 * src/net/ssl_sess.c). */
#ifndef SLUICE_NET_SSL_SESS_H
#define SLUICE_NET_SSL_SESS_H

#include <openssl/ssl.h>

/* Sizes the cache for <entries> sessions in all (tune.ssl.cachesize).
 * Configuration time; 0 or -1 (no memory). */
int  ssl_sess_cache_init(long entries);
/* Makes <ctx> store and look sessions up there instead of its own cache. */
void ssl_sess_cache_attach(SSL_CTX *ctx);
void ssl_sess_cache_free(void);

#endif
