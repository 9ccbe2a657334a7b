/* TLS configuration: the ssl options of `bind` and `server` lines, the
 * ssl-default-* globals, and the SSL_CTX built from them once the whole
 * configuration is read (src/net/ssl_conf.c). SSL_CTXs are built before
 * the threads start and then only read (OpenSSL shares them safely); a
 * certificate committed on the CLI replaces them whole (src/net/ssl_crt.c). */
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
struct ssl_cert_data;
struct ssl_crt_entry;
struct ssl_sni_table;

enum ssl_verify { SSL_VFY_UNSET = 0, SSL_VFY_NONE, SSL_VFY_OPTIONAL, SSL_VFY_REQUIRED };

/* Options that ssl-default-{bind,server}-options set and lines override. */
struct ssl_methods {
	int min_ver, max_ver;        /* TLS1_VERSION.. TLS1_3_VERSION, 0 = unset */
	int no_tickets;
	int prefer_client_ciphers;
	unsigned int no_mask;        /* bit v-SSL3_VERSION: no-sslv3, no-tlsv1x */
};

struct ssl_tkeys_ref;

/* The SNI filters of a crt-list line: names served instead of the
 * certificate's own (lower case, wildcards allowed), and names refused
 * ("!name"; "!*": none of its names, a fallback only). */
struct ssl_crt_filters {
	char **pos;
	int npos;
	char **neg;
	int nneg;
	int none;                    /* "!*" */
};

struct ssl_bind_conf {
	int enabled;                 /* `ssl` */
	char **crt;                  /* crt arguments, crt-base applied */
	int ncrt;
	struct ssl_crt_filters **crt_filters;  /* per crt argument: the SNI
	                              * filters of its crt-list line, or NULL */
	struct ssl_crt_filters **crts_filters; /* the same, per entry of crts */
	char *ca_file, *crl_file;
	char *ca_verify_file;        /* trusted, not named in CertificateRequest */
	int no_ca_names;             /* no CA names sent to clients */
	enum ssl_verify verify;
	unsigned char *alpn;         /* wire format (length-prefixed) */
	size_t alpn_len;
	char *ciphers, *ciphersuites, *curves, *ecdhe;
	struct ssl_methods m;
	int strict_sni;
	char *tls_ticket_keys;       /* tls-ticket-keys file */
	struct ssl_tkeys_ref *tkeys; /* its keys (src/net/ssl_tkeys.c), or NULL */
	uint64_t ca_ignore[2], crt_ignore[2];   /* X509_V_ERR_* bits */
	unsigned char sid_ctx[32];   /* session ID context (bind_sid_ctx()) */
	/* built at start-up (src/net/ssl_crt.c) */
	struct ssl_crt_entry **crts; /* the certificate files, in order
	                              * (ssl_store_lock) */
	int ncrts;
	/* the contexts handshakes use: replaced whole by a commit, read with
	 * an atomic load (see ssl_bind_default_ctx(), ssl_crt_sni_cb()) */
	struct ssl_sni_table *_Atomic sni_tab;
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
	/* health checks: `check-ssl` 1, `no-check-ssl` -1, 0 unset (they
	 * follow `ssl` unless checked elsewhere); `check-sni` (a string, no
	 * SNI without it); `check-alpn`, NULL: `alpn` */
	int check_ssl;
	char *check_sni;
	unsigned char *check_alpn;
	size_t check_alpn_len;
	struct ssl_crt_entry *crt_entry;   /* `crt` in the store, or NULL */
	/* built at start-up; replaced whole by a commit of its certificate,
	 * read with an atomic load */
	SSL_CTX *_Atomic ctx;
	unsigned int ctx_gen;        /* generation of the last ctx built
	                              * (ssl_store_lock), in its app data */
	/* the last session per thread, for resumption (owner thread only),
	 * and the generation of the context it was made with */
	SSL_SESSION *sess[MAX_THREADS];
	unsigned int sess_gen[MAX_THREADS];
};

/* bind/server line option parsers. Return 1 if args[*i] was an ssl
 * option (consumed with its arguments, *i on the last one), 0 if it is
 * not one, -1 with a message. */
int ssl_bind_parse_opt(struct bind_conf *bc, char **args, int nargs, int *i,
                       char *err, size_t errlen);
int ssl_srv_parse_opt(struct server *srv, char **args, int nargs, int *i,
                      char *err, size_t errlen);

void ssl_crt_filters_free(struct ssl_crt_filters *f);

/* One line of a crt-list (modified in place): 1 with the certificate's path
 * (crt-base applied, heap) in *crt and its filters (heap, or NULL), 0 for
 * an empty or comment line, -1 with a message. */
int ssl_crt_list_line(char *line, char **crt, struct ssl_crt_filters **filters, char *err,
                      size_t errlen);

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

/* A new server-side context for a bind line (ciphers, versions, verify,
 * ALPN, servername callback), without certificate. NULL with a message. */
SSL_CTX *ssl_bind_ctx_new(struct bind_conf *bc, char *err, size_t errlen);

/* A new client context for a server, presenting <crt> if not NULL. NULL
 * with a message. Under ssl_store_lock once the threads run. */
SSL_CTX *ssl_srv_ctx_new(struct server *srv, const struct ssl_cert_data *crt,
                         char *err, size_t errlen);

/* The session to offer on a new connection to a server made with <ctx> on
 * thread <tid>: the thread's last one, unless it came from another context
 * (a committed certificate: the server must see the new one) or was made
 * for another SNI than <sni>. */
SSL_SESSION *ssl_srv_session(struct ssl_srv_conf *c, SSL_CTX *ctx, int tid, const char *sni);

/* Writes "<what>: <OpenSSL's last reason>." into <err>, clears OpenSSL's
 * error queue, returns -1. */
int ssl_err(char *err, size_t errlen, const char *what);

/* Why a client's certificate failed a bind line's verification, in
 * HAProxy's log words ("SSL client certificate not trusted", "SSL client
 * CA chain cannot be verified"), or NULL if it did not. */
const char *ssl_bind_verify_failure(SSL *ssl);

/* Fetch helpers: the index of the server/bind line in SSL ex_data. */
extern int ssl_ex_idx_srv;
extern int ssl_ex_idx_verr;

/* The first errors met while verifying the client certificate of <ssl>
 * (an accepted connection with `verify optional|required`), X509_V_ERR_*
 * codes, 0 when none: at depth 0 (*crt_err), at a greater depth (*ca_err)
 * and that depth (*ca_depth). Ignored errors (ca-ignore-err,
 * crt-ignore-err) are reported too. */
void ssl_verify_errors(const SSL *ssl, int *crt_err, int *ca_err, int *ca_depth);

#endif
