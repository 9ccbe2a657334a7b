/* TLS configuration: the ssl options of `bind` and `server` lines, the
 * ssl-default-* globals, and the SSL_CTX built from them once the whole
 * configuration is read (src/net/ssl_conf.c). SSL_CTXs are built before
 * the threads start and then only read (OpenSSL shares them safely). */
#ifndef SLUICE_NET_SSL_CONF_H
#define SLUICE_NET_SSL_CONF_H

#include <stdint.h>
#include <stddef.h>
#include <openssl/ssl.h>
#include <sluice/core/global.h>

struct bind_conf;
struct server;
struct sample_expr;
struct cfg_ctx;

enum ssl_verify { SSL_VFY_UNSET = 0, SSL_VFY_NONE, SSL_VFY_OPTIONAL, SSL_VFY_REQUIRED };

/* Options that ssl-default-{bind,server}-options set and lines override. */
struct ssl_methods {
	int min_ver, max_ver;        /* TLS1_VERSION.. TLS1_3_VERSION, 0 = unset */
	int no_tickets;
	int prefer_client_ciphers;
	unsigned int no_mask;        /* bit v-SSL3_VERSION: no-sslv3, no-tlsv1x */
};

/* One certificate context of a bind line: the names it serves. */
struct ssl_sni_ctx {
	SSL_CTX *ctx;
	char **names;                /* lower case; "*.example.com" wildcards */
	int nnames;
	int key_types;               /* bit EVP_PKEY_RSA / EC loaded (1, 2) */
};

struct ssl_bind_conf {
	int enabled;                 /* `ssl` */
	char **crt;                  /* crt arguments, crt-base applied */
	int ncrt;
	char *ca_file, *crl_file;
	enum ssl_verify verify;
	unsigned char *alpn;         /* wire format (length-prefixed) */
	size_t alpn_len;
	char *ciphers, *ciphersuites, *curves, *ecdhe;
	struct ssl_methods m;
	int strict_sni;
	uint64_t ca_ignore[2], crt_ignore[2];   /* X509_V_ERR_* bits */
	/* built at start-up */
	struct ssl_sni_ctx *sni;     /* one per certificate (set) */
	int nsni;
	SSL_CTX *def_ctx;            /* the first certificate's */
};

struct ssl_srv_conf {
	int enabled;                 /* `ssl` */
	enum ssl_verify verify;      /* UNSET: ssl-server-verify */
	char *ca_file, *crl_file, *crt, *verifyhost;
	char *ciphers, *ciphersuites;
	unsigned char *alpn;
	size_t alpn_len;
	char *sni_text;              /* `sni <expr>` as written */
	struct sample_expr *sni;
	int no_reuse;                /* no-ssl-reuse */
	struct ssl_methods m;
	/* built at start-up */
	SSL_CTX *ctx;
	/* the last session per thread, for resumption (owner thread only) */
	SSL_SESSION *sess[MAX_THREADS];
};

/* bind/server line option parsers. Return 1 if args[*i] was an ssl
 * option (consumed with its arguments, *i on the last one), 0 if it is
 * not one, -1 with a message. */
int ssl_bind_parse_opt(struct bind_conf *bc, char **args, int nargs, int *i,
                       char *err, size_t errlen);
int ssl_srv_parse_opt(struct server *srv, char **args, int nargs, int *i,
                      char *err, size_t errlen);

/* default-server settings copied to a server. */
void ssl_srv_conf_copy(struct server *dst, const struct server *src);
void ssl_bind_conf_free(struct ssl_bind_conf *c);
void ssl_srv_conf_free(struct ssl_srv_conf *c);

/* Before a connection to <srv> starts its handshake: names the server
 * (for the new-session callback) and sets the host name to verify
 * (the SNI sent, else verifyhost) when verification is required. 0 or -1. */
int ssl_srv_prepare(struct server *srv, SSL *ssl, const char *sni);

/* Stores a session for resumption of the next connection of this thread
 * (new-session callback). */
void ssl_srv_keep_session(struct server *srv, SSL *ssl, int tid);

/* Why a client's certificate failed a bind line's verification, in
 * HAProxy's log words ("SSL client certificate not trusted", "SSL client
 * CA chain cannot be verified"), or NULL if it did not. */
const char *ssl_bind_verify_failure(SSL *ssl);

/* Fetch helpers: the index of the server/bind line in SSL ex_data. */
extern int ssl_ex_idx_srv;
extern int ssl_ex_idx_verr;

#endif
