/* Certificates (src/net/ssl_crt.c): the store of the certificate files that
 * `crt` arguments name, as `show ssl cert` lists them; the SNI table each
 * TLS bind line builds from them; and their replacement at run time (`set`
 * and `commit ssl cert`, src/mgmt/cli_ssl.c).
 *
 * The store, its entries and directories, and the certificate lists of bind
 * lines are only used by configuration code and by CLI commands, under
 * ssl_store_lock. Handshakes never take it: they read the SNI table of their
 * bind line (and a server its SSL_CTX) through an atomic pointer that a
 * commit replaces, the old one being freed after a grace period
 * (src/core/grace.c).
 */
#ifndef SLUICE_NET_SSL_CRT_H
#define SLUICE_NET_SSL_CRT_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>
#include <sluice/core/list.h>
#include <sluice/core/lock.h>

struct bind_conf;
struct server;
struct ssl_bind_conf;

/* A parsed certificate file: the certificate, its chain, its key. Never
 * changed once built: a new version is a new object. */
struct ssl_cert_data {
	uint64_t id;                 /* unique: tells versions apart */
	X509 *cert;
	STACK_OF(X509) *chain;       /* the certificates after the first, or NULL */
	EVP_PKEY *key;               /* NULL if the file has none */
};

/* A certificate file of the store, named by its path as `crt` gives it
 * (crt-base applied; a directory's files as "<dir>/<name>"). */
struct ssl_crt_entry {
	struct list list;            /* in ssl_store, sorted by path */
	char *path;
	struct ssl_cert_data *data;  /* NULL: empty (`new ssl cert`) */
	struct bind_conf **binds;    /* bind lines serving it, each once */
	int nbinds;
	struct server **srvs;        /* servers presenting it */
	int nsrvs;
};

/* A directory named by `crt` (`show ssl crt-list`). */
struct ssl_crt_dir {
	struct list list;            /* in ssl_crt_dirs, sorted by path */
	char *path;
	struct ssl_crt_entry **entries;   /* its files, by name */
	int nentries;
};

/* One certificate context of a bind line and the names it serves. */
struct ssl_sni_ctx {
	SSL_CTX *ctx;
	char **names;                /* lower case; "*.example.com" wildcards */
	int nnames;
	char **excl;                 /* crt-list "!name" filters: SNIs it refuses */
	int nexcl;
	int key_types;               /* bit 1: RSA (or other), bit 2: ECDSA */
	uint64_t ids[2];             /* ssl_cert_data ids it holds (0: none) */
};

/* What a bind line's handshakes read: replaced whole, never changed. */
struct ssl_sni_table {
	int nsni;
	struct ssl_sni_ctx sni[];    /* sni[0]: for clients no name matches */
};

extern struct sl_lock ssl_store_lock;
extern struct list ssl_store;        /* struct ssl_crt_entry */
extern struct list ssl_crt_dirs;     /* struct ssl_crt_dir */

/* ---- configuration time (single thread) ---- */

/* Loads the `crt` arguments of a bind line into the store (files, or the
 * files of directories) and publishes its first SNI table. 0, or -1 with
 * a message. */
int ssl_crt_bind_load(struct bind_conf *bc, char *err, size_t errlen);

/* The store entry of a server's `crt` file, loaded if needed, with <srv>
 * recorded as a user. NULL with a message. */
struct ssl_crt_entry *ssl_crt_srv_load(struct server *srv, const char *path,
                                       char *err, size_t errlen);

/* Frees the store (after every thread ended, or before any started). */
void ssl_store_free_all(void);

/* Frees a table no thread can read any more (NULL is fine). */
void ssl_sni_table_free(struct ssl_sni_table *t);

/* ---- handshakes (any thread, no lock) ---- */

/* The context new connections of a bind line start with. */
SSL_CTX *ssl_bind_default_ctx(const struct ssl_bind_conf *c);

/* Servername callback of bind contexts: switches to the context serving
 * the name the client asked for. <arg> is the struct ssl_bind_conf. */
int ssl_crt_sni_cb(SSL *ssl, int *al, void *arg);

/* ---- CLI (under ssl_store_lock) ---- */

struct ssl_crt_entry *ssl_store_lookup(const char *path);
/* A new empty entry (`new ssl cert`), or NULL if out of memory. */
struct ssl_crt_entry *ssl_store_add_empty(const char *path);
/* Removes an entry that nothing uses. */
void ssl_store_remove(struct ssl_crt_entry *e);

/* Parses a PEM text: a certificate, then its chain, and a private key
 * anywhere (none is not an error here). NULL with the reason. */
struct ssl_cert_data *ssl_cert_parse(const char *pem, size_t len, char *err, size_t errlen);
void ssl_cert_data_free(struct ssl_cert_data *d);

/* Makes <d> the content of <e>: builds the SNI tables of every bind line
 * and the context of every server using it, then publishes them all and
 * retires the old ones (grace period). Nothing is changed on failure.
 * On success <d> belongs to the entry. Returns the number of bind lines
 * and servers rebuilt, or -1 with a message. */
int ssl_crt_commit(struct ssl_crt_entry *e, struct ssl_cert_data *d, char *err, size_t errlen);

#endif
