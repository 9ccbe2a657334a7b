/* CLI commands on certificates (management manual 9.3 of HAProxy 2.6):
 * show/set/commit/abort/new/del ssl cert, show ssl crt-list.
 *
 * A certificate is named by its path as `crt` gives it (crt-base applied,
 * "<dir>/<file>" for the files of a directory), as `show ssl cert` lists
 * it. Replacing one is a transaction, as in HAProxy: `set ssl cert` parses
 * a PEM payload into a pending copy (one at a time, process-wide), `commit`
 * builds the new contexts and publishes them to every bind line and server
 * using the file (src/net/ssl_crt.c: handshakes take no lock, old contexts
 * are freed after a grace period), `abort` drops it.
 *
 * Locking: everything here runs under ssl_store_lock, which only the CLI
 * and configuration code take: the store, its entries and the pending
 * transaction. A commit holds it while it builds the new SSL_CTXs (about a
 * millisecond each); other CLI sessions asking for certificates wait that
 * long, handshakes never do.
 *
 * Messages are HAProxy 2.6's, quirks included ("'set ssl cert expects...",
 * "No ongoing transaction! !"), so that scripts written for it work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>
#include <sluice/mgmt/cli.h>
#include <sluice/net/ssl_crt.h>
#include <sluice/net/ssl_tkeys.h>

static int cli_show_cert(char **args, int nargs, struct cli_out *out, int level);
static int cli_set_cert(char **args, int nargs, const char *payload, struct cli_out *out,
                        int level);
static int cli_commit_cert(char **args, int nargs, struct cli_out *out, int level);
static int cli_abort_cert(char **args, int nargs, struct cli_out *out, int level);
static int cli_new_cert(char **args, int nargs, struct cli_out *out, int level);
static int cli_del_cert(char **args, int nargs, struct cli_out *out, int level);
static int cli_show_crtlist(char **args, int nargs, struct cli_out *out, int level);
static int cli_show_tls_keys(char **args, int nargs, struct cli_out *out, int level);
static int cli_set_tls_key(char **args, int nargs, struct cli_out *out, int level);

/* Levels as HAProxy 2.6: reading certificates needs operator, the rest
 * admin (including `show ssl crt-list`). */
static const struct cli_kw ssl_kws[] = {
	{ { "show", "ssl", "cert" }, CLI_LEVEL_OPERATOR, cli_show_cert,
	  "show ssl cert [<certfile>]              : display the SSL certificates used in memory, or the details of a file" },
	{ { "set", "ssl", "cert" }, CLI_LEVEL_ADMIN, NULL,
	  "set ssl cert <certfile> <payload>       : replace a certificate file", cli_set_cert },
	{ { "commit", "ssl", "cert" }, CLI_LEVEL_ADMIN, cli_commit_cert,
	  "commit ssl cert <certfile>              : commit a certificate file" },
	{ { "abort", "ssl", "cert" }, CLI_LEVEL_ADMIN, cli_abort_cert,
	  "abort ssl cert <certfile>               : abort a transaction for a certificate file" },
	{ { "new", "ssl", "cert" }, CLI_LEVEL_ADMIN, cli_new_cert,
	  "new ssl cert <certfile>                 : create a new empty certificate file (not served)" },
	{ { "del", "ssl", "cert" }, CLI_LEVEL_ADMIN, cli_del_cert,
	  "del ssl cert <certfile>                 : delete an unused certificate file" },
	{ { "show", "ssl", "crt-list" }, CLI_LEVEL_ADMIN, cli_show_crtlist,
	  "show ssl crt-list [-n] [<list>]         : show the list of crt-lists or the content of a crt-list file <list>" },
	{ { "show", "tls-keys" }, CLI_LEVEL_ADMIN, cli_show_tls_keys,
	  "show tls-keys [id|*]                    : show tls keys references or dump tls ticket keys when id specified" },
	{ { "set", "ssl", "tls-key" }, CLI_LEVEL_ADMIN, cli_set_tls_key,
	  "set ssl tls-key [id|file] <key>         : set the next TLS key for the <id> or <file> listener to <key>" },
	{ { NULL } }
};
CLI_REGISTER(ssl_kws)

/* The pending transaction: one at a time, as HAProxy (ssl_store_lock). */
static struct {
	char *path;                    /* NULL: none */
	struct ssl_crt_entry *entry;   /* the entry it will replace */
	struct ssl_cert_data *data;
} txn;

static void txn_clear(void)
{
	free(txn.path);
	ssl_cert_data_free(txn.data);
	txn.path = NULL;
	txn.entry = NULL;
	txn.data = NULL;
}

/* ------------------------------------------------------ show ssl cert */

static void print_hex(struct cli_out *out, const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		cli_printf(out, "%02X", p[i]);
}

static void print_time(struct cli_out *out, const ASN1_TIME *t)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p;
	long n;

	if (!b)
		return;
	if (ASN1_TIME_print(b, t) && (n = BIO_get_mem_data(b, &p)) > 0)
		cli_printf(out, "%.*s", (int)n, p);
	BIO_free(b);
}

/* A name as HAProxy writes it: "/<short name>=<value>" per entry, values
 * as their bytes. */
static void print_dn(struct cli_out *out, const X509_NAME *name)
{
	for (int i = 0; i < X509_NAME_entry_count(name); i++) {
		const X509_NAME_ENTRY *ne = X509_NAME_get_entry(name, i);
		const ASN1_OBJECT *obj = X509_NAME_ENTRY_get_object(ne);
		const ASN1_STRING *v = X509_NAME_ENTRY_get_data(ne);
		int nid = OBJ_obj2nid(obj);
		char oid[80];

		if (nid != NID_undef && OBJ_nid2sn(nid))
			snprintf(oid, sizeof(oid), "%s", OBJ_nid2sn(nid));
		else
			OBJ_obj2txt(oid, sizeof(oid), obj, 1);
		cli_printf(out, "/%s=%.*s", oid, ASN1_STRING_length(v),
		           (const char *)ASN1_STRING_get0_data(v));
	}
}

/* HAProxy prints only the DNS names, but a separator for every entry. */
static void print_san(struct cli_out *out, X509 *x)
{
	GENERAL_NAMES *sans = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);

	for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans); i++) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);

		if (i)
			cli_printf(out, ", ");
		if (g->type == GEN_DNS)
			cli_printf(out, "DNS:%.*s", ASN1_STRING_length(g->d.dNSName),
			           (const char *)ASN1_STRING_get0_data(g->d.dNSName));
	}
	GENERAL_NAMES_free(sans);
}

static void print_algo(struct cli_out *out, X509 *x)
{
	EVP_PKEY *pk = X509_get0_pubkey(x);
	int id = pk ? EVP_PKEY_get_base_id(pk) : NID_undef;

	if (id == EVP_PKEY_RSA)
		cli_printf(out, "RSA%d", EVP_PKEY_get_bits(pk));
	else if (id == EVP_PKEY_EC)
		cli_printf(out, "EC%d", EVP_PKEY_get_bits(pk));
	else if (id == EVP_PKEY_DSA)
		cli_printf(out, "DSA%d", EVP_PKEY_get_bits(pk));
	else if (id != NID_undef && OBJ_nid2sn(id))
		cli_printf(out, "%s", OBJ_nid2sn(id));   /* HAProxy 2.6 stops the dump here */
}

static void dump_cert(struct cli_out *out, const char *prefix, const char *path,
                      const char *status, const struct ssl_cert_data *d)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	cli_printf(out, "Filename: %s%s\nStatus: %s\n", prefix, path, status);
	if (d) {
		const ASN1_INTEGER *serial = X509_get0_serialNumber(d->cert);

		cli_printf(out, "Serial: ");
		print_hex(out, ASN1_STRING_get0_data(serial), (size_t)ASN1_STRING_length(serial));
		cli_printf(out, "\nnotBefore: ");
		print_time(out, X509_get0_notBefore(d->cert));
		cli_printf(out, "\nnotAfter: ");
		print_time(out, X509_get0_notAfter(d->cert));
		cli_printf(out, "\nSubject Alternative Name: ");
		print_san(out, d->cert);
		cli_printf(out, "\nAlgorithm: ");
		print_algo(out, d->cert);
		cli_printf(out, "\nSHA1 FingerPrint: ");
		if (X509_digest(d->cert, EVP_sha1(), md, &mdlen))
			print_hex(out, md, mdlen);
		cli_printf(out, "\nSubject: ");
		print_dn(out, X509_get_subject_name(d->cert));
		cli_printf(out, "\nIssuer: ");
		print_dn(out, X509_get_issuer_name(d->cert));
		cli_printf(out, "\n");
		for (int i = 0; d->chain && i < sk_X509_num(d->chain); i++) {
			X509 *c = sk_X509_value(d->chain, i);

			cli_printf(out, "Chain Subject: ");
			print_dn(out, X509_get_subject_name(c));
			cli_printf(out, "\nChain Issuer: ");
			print_dn(out, X509_get_issuer_name(c));
			cli_printf(out, "\n");
		}
	}
	/* no OCSP stapling: the line is there, empty, as in HAProxy without a
	 * response */
	cli_printf(out, "OCSP Response Key: \n");
}

static const char *entry_status(const struct ssl_crt_entry *e)
{
	return !e->data ? "Empty" : (e->nbinds || e->nsrvs) ? "Used" : "Unused";
}

static int cli_show_cert(char **args, int nargs, struct cli_out *out, int level)
{
	const char *name = nargs > 3 ? args[3] : NULL;
	struct ssl_crt_entry *e;
	struct list *pos;
	int rc = 0;

	lock_take(&ssl_store_lock);
	if (!name) {
		if (txn.path)
			cli_printf(out, "# transaction\n*%s\n", txn.path);
		cli_printf(out, "# filename\n");
		for (pos = ssl_store.next; pos != &ssl_store; pos = pos->next)
			cli_printf(out, "%s\n", list_elem(pos, struct ssl_crt_entry, list)->path);
	} else if (name[0] == '*' && txn.path && !strcmp(name + 1, txn.path)) {
		dump_cert(out, "*", txn.path, "Unused", txn.data);
	} else if (name[0] != '*' && (e = ssl_store_lookup(name))) {
		dump_cert(out, "", e->path, entry_status(e), e->data);
	} else {
		cli_printf(out, "Can't display the certificate: Not found or the certificate is a "
		           "bundle!\n");
		rc = -1;
	}
	lock_release(&ssl_store_lock);
	return rc;
}

/* ------------------------------------------------- the transaction */

static int cli_set_cert(char **args, int nargs, const char *payload, struct cli_out *out,
                        int level)
{
	struct ssl_crt_entry *e;
	struct ssl_cert_data *d;
	const char *path = args[3];
	char why[256];

	if (nargs < 4 || !payload) {
		cli_printf(out, "'set ssl cert expects a filename and a certificate as a payload\n");
		return -1;
	}
	lock_take(&ssl_store_lock);
	if (txn.path && strcmp(txn.path, path)) {
		/* HAProxy 2.6.12 puts the payload into the other transaction */
		cli_printf(out, "The ongoing transaction is about '%s' but you are trying to set "
		           "'%s'\nCan't update %s!\n", txn.path, path, path);
		goto fail;
	}
	if (!(e = ssl_store_lookup(path))) {
		cli_printf(out, "Can't replace a certificate which is not referenced by the "
		           "configuration!\nCan't update %s!\n", path);
		goto fail;
	}
	if (!(d = ssl_cert_parse(payload, strlen(payload), why, sizeof(why)))) {
		cli_printf(out, "unable to load certificate from file '%s'.\nCan't load the "
		           "payload\nCan't update %s!\n", path, path);
		goto fail;
	}
	if (txn.path) {
		ssl_cert_data_free(txn.data);
		txn.data = d;
		cli_printf(out, "Transaction updated for certificate %s!\n", path);
	} else {
		if (!(txn.path = strdup(path))) {
			ssl_cert_data_free(d);
			cli_printf(out, "Can't update %s!\n", path);
			goto fail;
		}
		txn.entry = e;
		txn.data = d;
		cli_printf(out, "Transaction created for certificate %s!\n", path);
	}
	lock_release(&ssl_store_lock);
	return 0;
fail:
	lock_release(&ssl_store_lock);
	return -1;
}

static int cli_commit_cert(char **args, int nargs, struct cli_out *out, int level)
{
	const char *path = args[3];
	char err[4400];
	int n;

	if (nargs < 4) {
		cli_printf(out, "'commit ssl cert expects a filename\n");
		return -1;
	}
	lock_take(&ssl_store_lock);
	if (!txn.path) {
		cli_printf(out, "No ongoing transaction! !\nCan't commit %s!\n", path);
		goto fail;
	}
	if (strcmp(txn.path, path)) {
		cli_printf(out, "The ongoing transaction is about '%s' but you are trying to set "
		           "'%s'\nCan't commit %s!\n", txn.path, path, path);
		goto fail;
	}
	if (!txn.data->key) {
		cli_printf(out, "The transaction must contain at least a certificate and a private "
		           "key!\nCan't commit %s!\n", path);
		goto fail;
	}
	if (!X509_check_private_key(txn.data->cert, txn.data->key)) {
		cli_printf(out, "inconsistencies between private key and certificate loaded '%s'.\n"
		           "Can't commit %s!\n", path, path);
		goto fail;
	}
	if ((n = ssl_crt_commit(txn.entry, txn.data, err, sizeof(err))) < 0) {
		cli_printf(out, "%s\nCan't commit %s!\n", err, path);
		goto fail;
	}
	txn.data = NULL;   /* the entry's now */
	txn_clear();
	/* one dot per bind line and server rebuilt, as HAProxy's per instance */
	cli_printf(out, "Committing %s", path);
	while (n--)
		cli_printf(out, ".");
	cli_printf(out, "\nSuccess!\n");
	lock_release(&ssl_store_lock);
	return 0;
fail:
	lock_release(&ssl_store_lock);
	return -1;
}

static int cli_abort_cert(char **args, int nargs, struct cli_out *out, int level)
{
	const char *path = args[3];
	int rc = -1;

	if (nargs < 4) {
		cli_printf(out, "'abort ssl cert' expects a filename\n");
		return -1;
	}
	lock_take(&ssl_store_lock);
	if (!txn.path) {
		cli_printf(out, "No ongoing transaction!\n");
	} else if (strcmp(txn.path, path)) {
		cli_printf(out, "The ongoing transaction is about '%s' but you are trying to abort "
		           "a transaction for '%s'\n", txn.path, path);
	} else {
		txn_clear();
		cli_printf(out, "Transaction aborted for certificate '%s'!\n", path);
		rc = 0;
	}
	lock_release(&ssl_store_lock);
	return rc;
}

/* ------------------------------------------------------- new, del */

static int cli_new_cert(char **args, int nargs, struct cli_out *out, int level)
{
	const char *path = args[3];
	int rc = -1;

	if (nargs < 4) {
		cli_printf(out, "'new ssl cert' expects a filename\n");
		return -1;
	}
	lock_take(&ssl_store_lock);
	if (ssl_store_lookup(path)) {
		cli_printf(out, "Certificate '%s' already exists!\n", path);
	} else if (!ssl_store_add_empty(path)) {
		cli_printf(out, "Can't allocate memory!\n");
	} else {
		cli_printf(out, "New empty certificate store '%s'!\n", path);
		rc = 0;
	}
	lock_release(&ssl_store_lock);
	return rc;
}

static int cli_del_cert(char **args, int nargs, struct cli_out *out, int level)
{
	const char *path = args[3];
	struct ssl_crt_entry *e;
	int rc = -1;

	if (nargs < 4) {
		cli_printf(out, "'del ssl cert' expects a certificate name\n");
		return -1;
	}
	lock_take(&ssl_store_lock);
	if (txn.path && !strcmp(txn.path, path)) {
		cli_printf(out, "Can't remove the certificate: ongoing transaction for the "
		           "certificate '%s'\n", path);
	} else if (!(e = ssl_store_lookup(path))) {
		cli_printf(out, "Can't remove the certificate: certificate '%s' doesn't exist!\n\n",
		           path);
	} else if (e->nbinds || e->nsrvs) {
		cli_printf(out, "Can't remove the certificate: certificate '%s' in use, can't be "
		           "deleted!\n\n", path);
	} else {
		ssl_store_remove(e);
		cli_printf(out, "Certificate '%s' deleted!\n", path);
		rc = 0;
	}
	lock_release(&ssl_store_lock);
	return rc;
}

/* ------------------------------------------------- show ssl crt-list */

/* sluice has no crt-list files: the lists are the directories `crt`
 * names, each line one of their files (":0" with -n: no line number). */
static int cli_show_crtlist(char **args, int nargs, struct cli_out *out, int level)
{
	int i = 3, numbered = 0, rc = 0;
	const char *name = NULL;
	struct list *pos;

	if (i < nargs && !strcmp(args[i], "-n")) {
		numbered = 1;
		i++;
	}
	if (i < nargs)
		name = args[i];
	lock_take(&ssl_store_lock);
	for (pos = ssl_crt_dirs.next; pos != &ssl_crt_dirs; pos = pos->next) {
		struct ssl_crt_dir *d = list_elem(pos, struct ssl_crt_dir, list);

		if (!name) {
			cli_printf(out, "%s\n", d->path);
			continue;
		}
		if (strcmp(d->path, name))
			continue;
		cli_printf(out, "# %s\n", d->path);
		for (int k = 0; k < d->nentries; k++)
			cli_printf(out, "%s%s\n", d->entries[k]->path, numbered ? ":0" : "");
		break;
	}
	if (name && pos == &ssl_crt_dirs) {
		cli_printf(out, "didn't find the specified filename\n");
		rc = -1;
	}
	lock_release(&ssl_store_lock);
	return rc;
}

/* ---- session ticket keys (src/net/ssl_tkeys.c) ---- */

static int cli_show_tls_keys(char **args, int nargs, struct cli_out *out, int level)
{
	return ssl_tkeys_show(nargs > 2 ? args[2] : NULL, out);
}

static int cli_set_tls_key(char **args, int nargs, struct cli_out *out, int level)
{
	return ssl_tkeys_set(nargs > 3 ? args[3] : NULL, nargs > 4 ? args[4] : NULL, out);
}
