/* Certificates: the store of certificate files, the SNI tables of bind
 * lines built from it, and their replacement at run time.
 *
 * The store. Every file a `crt` argument names (directly, or as a file of
 * a directory) is loaded once into an entry named by its path, with the
 * bind lines and servers that use it; `show ssl cert` lists them, `set` and
 * `commit ssl cert` (src/mgmt/cli_ssl.c) replace their content. An entry's
 * content (struct ssl_cert_data: certificate, chain, key) is never changed
 * in place: a commit installs a new one. The store, its entries, the
 * directories and the bind lines' certificate lists are only touched at
 * configuration time and by CLI commands, all under ssl_store_lock (CLI
 * commands run on whichever thread accepted their session).
 *
 * SNI tables. A bind line serves its certificates through one SSL_CTX per
 * set of certificates for the same names (an RSA and an ECDSA certificate
 * for one name share a context, and OpenSSL picks by the client's signature
 * algorithms). The contexts and their names form a table, published through
 * an atomic pointer of the bind line: a new connection starts with the
 * table's first context (ssl_bind_default_ctx()), and the servername
 * callback switches to the one whose names match (exact, then one wildcard
 * level; a linear search, fine for the handful of certificates a bind line
 * usually has). A table is never changed once published.
 *
 * Replacing a certificate (ssl_crt_commit(), CLI thread, under the lock):
 *   1. build, for every bind line using the entry, a whole new table: a
 *      context whose certificates did not change is shared with the old
 *      table (SSL_CTX_up_ref(): its session cache survives), the others are
 *      new; and a new context for every server presenting the certificate.
 *      Any failure frees what was built and changes nothing.
 *   2. publish each with an atomic exchange: handshakes that start from then
 *      on use the new certificate on every bind line at once;
 *   3. hand each old table (or server context) to grace_defer(): it is freed
 *      once every thread has left the loop iteration it was in, so no
 *      handshake can still be reading its names. Connections already made,
 *      or whose handshake got past the servername callback, hold their own
 *      reference on their SSL_CTX (SSL_new() and SSL_set_SSL_CTX() take
 *      one): freeing the table only drops the table's reference, and the
 *      context lives until its last connection ends. Established
 *      connections are not touched.
 * Readers take no lock: a sequentially consistent load of the table
 * pointer (a plain load on x86), and nothing derived from it is kept past
 * the callback that loaded it (see include/sluice/core/grace.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sluice/core/grace.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/net/ssl_crt.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>

#define CRT_FILE_MAX (16 << 20)   /* a certificate file larger than this is refused */

struct sl_lock ssl_store_lock = SL_LOCK_INIT(LK_OTHER, "ssl_store");
struct list ssl_store = LIST_HEAD_INIT(ssl_store);
struct list ssl_crt_dirs = LIST_HEAD_INIT(ssl_crt_dirs);
static uint64_t cert_data_last_id;   /* ssl_store_lock */

/* ------------------------------------------------------ certificate data */

/* Encrypted keys are not supported: never prompt on a terminal. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	return -1;
}

void ssl_cert_data_free(struct ssl_cert_data *d)
{
	if (!d)
		return;
	X509_free(d->cert);
	sk_X509_pop_free(d->chain, X509_free);
	EVP_PKEY_free(d->key);
	free(d);
}

struct ssl_cert_data *ssl_cert_parse(const char *pem, size_t len, char *err, size_t errlen)
{
	struct ssl_cert_data *d = calloc(1, sizeof(*d));
	BIO *b = NULL;
	X509 *x;

	if (!d || len > CRT_FILE_MAX) {
		snprintf(err, errlen, "out of memory");
		free(d);
		return NULL;
	}
	d->id = ++cert_data_last_id;
	/* the key may be anywhere: a first pass skips the other blocks */
	if (!(b = BIO_new_mem_buf(pem, (int)len)))
		goto oom;
	d->key = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
	BIO_free(b);
	ERR_clear_error();
	if (!(b = BIO_new_mem_buf(pem, (int)len)))
		goto oom;
	d->cert = PEM_read_bio_X509_AUX(b, NULL, no_passphrase, NULL);
	if (!d->cert) {
		unsigned long e = ERR_peek_last_error();
		const char *r = e ? ERR_reason_error_string(e) : NULL;

		snprintf(err, errlen, "%s", r ? r : "no certificate");
		ERR_clear_error();
		goto fail;
	}
	while ((x = PEM_read_bio_X509(b, NULL, no_passphrase, NULL))) {
		if (!d->chain && !(d->chain = sk_X509_new_null())) {
			X509_free(x);
			goto oom;
		}
		if (!sk_X509_push(d->chain, x)) {
			X509_free(x);
			goto oom;
		}
	}
	ERR_clear_error();   /* the end of the text */
	BIO_free(b);
	return d;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	BIO_free(b);
	ssl_cert_data_free(d);
	return NULL;
}

/* Reads a whole file. NULL with errno set. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			char *nb = cap < CRT_FILE_MAX ? realloc(buf, cap ? cap * 2 : 8192) : NULL;

			if (!nb) {
				free(buf);
				fclose(f);
				errno = cap < CRT_FILE_MAX ? ENOMEM : EFBIG;
				return NULL;
			}
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		size_t r = fread(buf + n, 1, cap - n, f);

		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* A certificate file at configuration time: its key in the file, or in
 * "<path>.key" next to it. The messages are those of the configuration. */
static struct ssl_cert_data *cert_load_file(const char *path, char *err, size_t errlen)
{
	char what[4200], keypath[4096];
	struct ssl_cert_data *d;
	size_t len;
	char *buf = read_file(path, &len);

	/* the messages are HAProxy 2.6's, so that scripts grepping for them
	 * keep working */
	if (!buf) {
		snprintf(err, errlen, "unable to stat SSL certificate from file '%s' : %s.",
		         path, strerror(errno));
		return NULL;
	}
	d = ssl_cert_parse(buf, len, what, sizeof(what));
	free(buf);
	if (!d) {
		snprintf(err, errlen, "unable to load certificate from file '%s': %s.",
		         path, what);
		return NULL;
	}
	if (!d->key) {
		snprintf(keypath, sizeof(keypath), "%s.key", path);
		if ((buf = read_file(keypath, &len))) {
			BIO *b = BIO_new_mem_buf(buf, (int)len);

			d->key = b ? PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL) : NULL;
			BIO_free(b);
			free(buf);
		}
		if (!d->key) {
			snprintf(what, sizeof(what), "No Private Key found in '%s' nor in '%s'",
			         path, keypath);
			ssl_err(err, errlen, what);
			ssl_cert_data_free(d);
			return NULL;
		}
	}
	if (!X509_check_private_key(d->cert, d->key)) {
		ERR_clear_error();
		snprintf(err, errlen, "inconsistencies between private key and certificate "
		         "loaded '%s'.", path);
		ssl_cert_data_free(d);
		return NULL;
	}
	return d;
}

/* ----------------------------------------------------------------- store */

struct ssl_crt_entry *ssl_store_lookup(const char *path)
{
	struct list *pos;

	for (pos = ssl_store.next; pos != &ssl_store; pos = pos->next) {
		struct ssl_crt_entry *e = list_elem(pos, struct ssl_crt_entry, list);

		if (!strcmp(e->path, path))
			return e;
	}
	return NULL;
}

struct ssl_crt_entry *ssl_store_add_empty(const char *path)
{
	struct ssl_crt_entry *e = calloc(1, sizeof(*e));
	struct list *pos;

	if (!e || !(e->path = strdup(path))) {
		free(e);
		return NULL;
	}
	for (pos = ssl_store.next; pos != &ssl_store; pos = pos->next)
		if (strcmp(list_elem(pos, struct ssl_crt_entry, list)->path, path) > 0)
			break;
	list_append(pos, &e->list);   /* before the first greater one */
	return e;
}

void ssl_store_remove(struct ssl_crt_entry *e)
{
	list_del_init(&e->list);
	ssl_cert_data_free(e->data);
	free(e->binds);
	free(e->srvs);
	free(e->path);
	free(e);
}

/* The entry of <path>, loaded from the file if the store has none. */
static struct ssl_crt_entry *store_get_loaded(const char *path, char *err, size_t errlen)
{
	struct ssl_crt_entry *e = ssl_store_lookup(path);
	struct ssl_cert_data *d;

	if (e)
		return e;
	if (!(d = cert_load_file(path, err, errlen)))
		return NULL;
	if (!(e = ssl_store_add_empty(path))) {
		ssl_cert_data_free(d);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->data = d;
	return e;
}

/* <name>(&array, &count, p): appends <p> to an array of pointers to
 * <type> unless it is there already. 0, or -1 if out of memory. */
#define DEFINE_ADD_ONCE(name, type) \
static int name(type ***arr, int *n, type *p) \
{ \
	type **na; \
 \
	for (int i = 0; i < *n; i++) \
		if ((*arr)[i] == p) \
			return 0; \
	if (!(na = realloc(*arr, sizeof(*na) * (size_t)(*n + 1)))) \
		return -1; \
	na[(*n)++] = p; \
	*arr = na; \
	return 0; \
}

DEFINE_ADD_ONCE(crts_add_once, struct ssl_crt_entry)
DEFINE_ADD_ONCE(binds_add_once, struct bind_conf)
DEFINE_ADD_ONCE(srvs_add_once, struct server)

static struct ssl_crt_dir *dir_lookup(const char *path)
{
	struct list *pos;

	for (pos = ssl_crt_dirs.next; pos != &ssl_crt_dirs; pos = pos->next) {
		struct ssl_crt_dir *d = list_elem(pos, struct ssl_crt_dir, list);

		if (!strcmp(d->path, path))
			return d;
	}
	return NULL;
}

static void dir_free(struct ssl_crt_dir *d)
{
	list_del_init(&d->list);
	free(d->entries);
	free(d->path);
	free(d);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The certificate files of a directory, by name (key and companion files
 * left out). Returns their number, or -1 with a message. */
static int dir_list(const char *path, char ***out, char *err, size_t errlen)
{
	static const char *const skip[] = { ".key", ".ocsp", ".issuer", ".sctl", ".crt-list", NULL };
	struct dirent *de;
	char **files = NULL;
	int n = 0;
	DIR *d = opendir(path);

	if (!d) {
		snprintf(err, errlen, "unable to read directory '%s': %s.", path, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char **nf;
		int k;

		if (de->d_name[0] == '.')
			continue;
		for (k = 0; skip[k]; k++) {
			size_t sl = strlen(skip[k]);

			if (l > sl && !strcmp(de->d_name + l - sl, skip[k]))
				break;
		}
		if (skip[k])
			continue;
		if (!(nf = realloc(files, sizeof(*files) * (size_t)(n + 1))) ||
		    !(nf[n] = strdup(de->d_name))) {
			files = nf ? nf : files;
			for (int i = 0; i < n; i++)
				free(files[i]);
			free(files);
			closedir(d);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		files = nf;
		n++;
	}
	closedir(d);
	if (n)
		qsort(files, (size_t)n, sizeof(*files), cmp_str);
	*out = files;
	return n;
}

/* A directory named by `crt`: its record (the first bind line naming it
 * loads its files). NULL with a message. */
static struct ssl_crt_dir *dir_get_loaded(const char *path, char *err, size_t errlen)
{
	struct ssl_crt_dir *d = dir_lookup(path);
	char **files = NULL, full[4096];
	struct list *pos;
	int n, rc = 0;

	if (d)
		return d;
	if ((n = dir_list(path, &files, err, errlen)) < 0)
		return NULL;
	if (!n) {
		snprintf(err, errlen, "no certificate found in directory '%s'.", path);
		return NULL;
	}
	if (!(d = calloc(1, sizeof(*d))) || !(d->path = strdup(path)) ||
	    !(d->entries = calloc((size_t)n, sizeof(*d->entries)))) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	for (int i = 0; i < n; i++) {
		if (!rc) {
			snprintf(full, sizeof(full), "%s/%s", path, files[i]);
			if (!(d->entries[d->nentries] = store_get_loaded(full, err, errlen)))
				rc = -1;
			else
				d->nentries++;
		}
		free(files[i]);
	}
	free(files);
	if (rc) {
		if (d) {
			free(d->entries);
			free(d->path);
			free(d);
		}
		return NULL;
	}
	for (pos = ssl_crt_dirs.next; pos != &ssl_crt_dirs; pos = pos->next)
		if (strcmp(list_elem(pos, struct ssl_crt_dir, list)->path, path) > 0)
			break;
	list_append(pos, &d->list);
	return d;
}

void ssl_store_free_all(void)
{
	while (!list_empty(&ssl_crt_dirs))
		dir_free(list_elem(ssl_crt_dirs.next, struct ssl_crt_dir, list));
	while (!list_empty(&ssl_store))
		ssl_store_remove(list_elem(ssl_store.next, struct ssl_crt_entry, list));
}

/* ------------------------------------------------------------ SNI tables */

/* The names a certificate serves: its CN and its DNS subject alternative
 * names, lower case. Returns their number, -1 if out of memory. */
static int cert_names(X509 *x, char ***out)
{
	GENERAL_NAMES *sans = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	char buf[256], **names = NULL, **nn;
	int n = 0, len, total = 1 + (sans ? sk_GENERAL_NAME_num(sans) : 0);

	if (!(names = calloc((size_t)total, sizeof(*names))))
		goto oom;
	len = X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, buf, sizeof(buf));
	if (len > 0 && !(names[n++] = strdup(buf)))
		goto oom;
	for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans); i++) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);
		const unsigned char *p;

		if (g->type != GEN_DNS)
			continue;
		p = ASN1_STRING_get0_data(g->d.dNSName);
		len = ASN1_STRING_length(g->d.dNSName);
		if (len <= 0 || len >= (int)sizeof(buf))
			continue;
		if (!(names[n] = strndup((const char *)p, (size_t)len)))
			goto oom;
		n++;
	}
	GENERAL_NAMES_free(sans);
	for (int i = 0; i < n; i++)
		for (char *q = names[i]; *q; q++)
			*q = (char)tolower((unsigned char)*q);
	if (n && (nn = realloc(names, sizeof(*names) * (size_t)n)))
		names = nn;
	*out = names;
	return n;
oom:
	GENERAL_NAMES_free(sans);
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	return -1;
}

static void names_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int same_names(char **a, int na, char **b, int nb)
{
	if (na != nb)
		return 0;
	for (int i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return 0;
	return 1;
}

/* The key-type slot of a certificate in a context: ECDSA, or the other. */
static int copy_names(char **src, int n, char ***out)
{
	char **a = calloc((size_t)(n ? n : 1), sizeof(*a));

	if (!a)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!(a[i] = strdup(src[i]))) {
			names_free(a, i);
			return -1;
		}
	}
	*out = a;
	return n;
}

/* The names a crt-list line with filters serves its certificate under, as
 * HAProxy 2.6 does: its positive filters only (negative ones alone leave
 * none), and, for the first certificate of the bind line (<first>), its
 * own names too unless "!*". Returns their count, or -1. */
static int filter_names(X509 *x, const struct ssl_crt_filters *f, int first, char ***out)
{
	char **own = NULL, **all;
	int nown = 0;

	if (first && !f->none && (nown = cert_names(x, &own)) < 0)
		return -1;
	all = calloc((size_t)(nown + f->npos + 1), sizeof(*all));
	if (!all) {
		names_free(own, nown);
		return -1;
	}
	for (int i = 0; i < nown; i++)
		all[i] = own[i];
	free(own);
	for (int i = 0; i < f->npos; i++) {
		if (!(all[nown + i] = strdup(f->pos[i]))) {
			names_free(all, nown + i);
			return -1;
		}
	}
	*out = all;
	return nown + f->npos;
}

static int key_bit(const struct ssl_cert_data *d)
{
	return EVP_PKEY_get_base_id(X509_get0_pubkey(d->cert)) == EVP_PKEY_EC ? 2 : 1;
}

void ssl_sni_table_free(struct ssl_sni_table *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nsni; i++) {
		SSL_CTX_free(t->sni[i].ctx);
		names_free(t->sni[i].names, t->sni[i].nnames);
		names_free(t->sni[i].excl, t->sni[i].nexcl);
	}
	free(t);
}

static void sni_table_retire(void *t)
{
	ssl_sni_table_free(t);
}

static void srv_ctx_retire(void *ctx)
{
	SSL_CTX_free(ctx);
}

/* Installs a certificate, its chain and its key in the context's slot for
 * the key type. */
static int ctx_add_cert(SSL_CTX *ctx, const struct ssl_cert_data *d, const char *path,
                        char *err, size_t errlen)
{
	char what[4200];

	if (!SSL_CTX_use_certificate(ctx, d->cert) ||
	    (d->chain && !SSL_CTX_set1_chain(ctx, d->chain)) ||
	    !SSL_CTX_use_PrivateKey(ctx, d->key) || !SSL_CTX_check_private_key(ctx)) {
		snprintf(what, sizeof(what), "unable to load SSL certificate from PEM file '%s'", path);
		return ssl_err(err, errlen, what);
	}
	return 0;
}

/* The context of <old> holding exactly the certificates <ids>, if any. */
static SSL_CTX *sni_reusable_ctx(const struct ssl_sni_table *old, const uint64_t ids[2])
{
	for (int i = 0; old && i < old->nsni; i++)
		if (old->sni[i].ids[0] == ids[0] && old->sni[i].ids[1] == ids[1])
			return old->sni[i].ctx;
	return NULL;
}

/* A new SNI table for <bc>, from its certificates, <repl> holding <repl_d>
 * instead of its content. Contexts of <old> whose certificates are all
 * unchanged are shared. NULL with a message. */
static struct ssl_sni_table *sni_table_build(struct bind_conf *bc,
                                             const struct ssl_crt_entry *repl,
                                             const struct ssl_cert_data *repl_d,
                                             const struct ssl_sni_table *old,
                                             char *err, size_t errlen)
{
	struct ssl_bind_conf *c = bc->ssl;
	const struct ssl_cert_data *(*mem)[2] = calloc((size_t)c->ncrts + 1, sizeof(*mem));
	const char *(*mem_path)[2] = calloc((size_t)c->ncrts + 1, sizeof(*mem_path));
	struct ssl_sni_table *t = calloc(1, sizeof(*t) + sizeof(t->sni[0]) * (size_t)(c->ncrts + 1));

	if (!mem || !mem_path || !t) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* group the certificates by names, one per key type in a group */
	for (int i = 0; i < c->ncrts; i++) {
		const struct ssl_crt_entry *e = c->crts[i];
		const struct ssl_cert_data *d = e == repl ? repl_d : e->data;
		const struct ssl_crt_filters *f;
		struct ssl_sni_ctx *sc = NULL;
		char **names;
		int nnames, kbit, g;

		if (!d)
			continue;
		f = c->crts_filters ? c->crts_filters[i] : NULL;
		if ((nnames = f ? filter_names(d->cert, f, i == 0, &names) :
		              cert_names(d->cert, &names)) < 0) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		kbit = key_bit(d);
		for (g = 0; g < t->nsni; g++) {
			if (!(t->sni[g].key_types & kbit) &&
			    same_names(t->sni[g].names, t->sni[g].nnames, names, nnames)) {
				sc = &t->sni[g];
				break;
			}
		}
		if (sc) {
			names_free(names, nnames);
		} else {
			g = t->nsni++;
			sc = &t->sni[g];
			sc->names = names;
			sc->nnames = nnames;
			if (f && f->nneg && copy_names(f->neg, f->nneg, &sc->excl) < 0) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			sc->nexcl = f ? f->nneg : 0;
		}
		sc->key_types |= kbit;
		mem[g][sc->ids[0] ? 1 : 0] = d;
		mem_path[g][sc->ids[0] ? 1 : 0] = e->path;
		sc->ids[sc->ids[0] ? 1 : 0] = d->id;
	}
	if (!t->nsni) {
		snprintf(err, errlen, "no certificate to serve.");
		goto fail;
	}
	for (int g = 0; g < t->nsni; g++) {
		struct ssl_sni_ctx *sc = &t->sni[g];

		if ((sc->ctx = sni_reusable_ctx(old, sc->ids))) {
			SSL_CTX_up_ref(sc->ctx);
			continue;
		}
		if (!(sc->ctx = ssl_bind_ctx_new(bc, err, errlen)))
			goto fail;
		for (int k = 0; k < 2 && mem[g][k]; k++)
			if (ctx_add_cert(sc->ctx, mem[g][k], mem_path[g][k], err, errlen) < 0)
				goto fail;
	}
	free(mem);
	free(mem_path);
	return t;
fail:
	free(mem);
	free(mem_path);
	ssl_sni_table_free(t);
	return NULL;
}

/* One `crt` argument of a bind line: a file, or a directory's files;
 * <f>, the SNI filters of its crt-list line, or NULL. */
static int bind_add_crt_arg(struct bind_conf *bc, const char *path, struct ssl_crt_filters *f,
                            char *err, size_t errlen)
{
	struct ssl_bind_conf *c = bc->ssl;
	struct ssl_crt_entry *single, **list;
	struct ssl_crt_dir *dir = NULL;
	struct stat st;
	int n;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (!(dir = dir_get_loaded(path, err, errlen)))
			return -1;
		list = dir->entries;
		n = dir->nentries;
	} else {
		if (!(single = store_get_loaded(path, err, errlen)))
			return -1;
		list = &single;
		n = 1;
	}
	for (int i = 0; i < n; i++) {
		int before = c->ncrts;

		if (crts_add_once(&c->crts, &c->ncrts, list[i]) < 0 ||
		    binds_add_once(&list[i]->binds, &list[i]->nbinds, bc) < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (c->ncrts > before) {
			struct ssl_crt_filters **nf = realloc(c->crts_filters,
			                                      sizeof(*nf) * (size_t)c->ncrts);

			if (!nf) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			c->crts_filters = nf;
			nf[c->ncrts - 1] = f;
		}
	}
	return 0;
}

int ssl_crt_bind_load(struct bind_conf *bc, char *err, size_t errlen)
{
	struct ssl_bind_conf *c = bc->ssl;
	struct ssl_sni_table *t;

	lock_take(&ssl_store_lock);
	for (int i = 0; i < c->ncrt; i++) {
		if (bind_add_crt_arg(bc, c->crt[i], c->crt_filters ? c->crt_filters[i] : NULL, err,
		                     errlen) < 0) {
			lock_release(&ssl_store_lock);
			return -1;
		}
	}
	t = sni_table_build(bc, NULL, NULL, NULL, err, errlen);
	lock_release(&ssl_store_lock);
	if (!t)
		return -1;
	ssl_sni_table_free(atomic_exchange(&c->sni_tab, t));
	return 0;
}

struct ssl_crt_entry *ssl_crt_srv_load(struct server *srv, const char *path,
                                       char *err, size_t errlen)
{
	struct ssl_crt_entry *e;

	lock_take(&ssl_store_lock);
	e = store_get_loaded(path, err, errlen);
	if (e && srvs_add_once(&e->srvs, &e->nsrvs, srv) < 0) {
		snprintf(err, errlen, "out of memory");
		e = NULL;
	}
	lock_release(&ssl_store_lock);
	return e;
}

/* ------------------------------------------------------------ handshakes */

SSL_CTX *ssl_bind_default_ctx(const struct ssl_bind_conf *c)
{
	return atomic_load(&c->sni_tab)->sni[0].ctx;
}

/* Whether <sni> is one a crt-list line refuses ("!name", "!*.name"). */
static int sni_excluded(const struct ssl_sni_ctx *sc, const char *sni)
{
	const char *dot = strchr(sni, '.');

	for (int k = 0; k < sc->nexcl; k++) {
		const char *x = sc->excl[k];

		if (!strcasecmp(x, sni) || (x[0] == '*' && dot && !strcasecmp(x + 1, dot)))
			return 1;
	}
	return 0;
}

/* The group serving <name> (an SNI or its wildcard form), unless it
 * refuses <sni>. */
static const struct ssl_sni_ctx *sni_find(const struct ssl_sni_table *t, const char *name,
                                          const char *sni)
{
	for (int i = 0; i < t->nsni; i++)
		for (int j = 0; j < t->sni[i].nnames; j++)
			if (!strcasecmp(t->sni[i].names[j], name) && !sni_excluded(&t->sni[i], sni))
				return &t->sni[i];
	return NULL;
}

/* Servername callback: the context matching the SNI, exact name first,
 * then a wildcard one level up. The table is read only here, during this
 * call; the SSL keeps its own reference on the context it switches to. */
int ssl_crt_sni_cb(SSL *ssl, int *al, void *arg)
{
	const struct ssl_bind_conf *c = arg;
	const struct ssl_sni_table *t = atomic_load(&c->sni_tab);
	const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	const struct ssl_sni_ctx *sc = NULL;
	char wild[256];

	if (name && *name) {
		sc = sni_find(t, name, name);
		if (!sc) {
			const char *dot = strchr(name, '.');

			if (dot && snprintf(wild, sizeof(wild), "*%s", dot) < (int)sizeof(wild))
				sc = sni_find(t, wild, name);
		}
	}
	if (!sc) {
		if (c->strict_sni) {
			*al = SSL_AD_UNRECOGNIZED_NAME;
			return SSL_TLSEXT_ERR_ALERT_FATAL;
		}
		/* the default certificate: the current table's, which may be
		 * newer than the context the connection started with */
		sc = &t->sni[0];
	}
	if (sc->ctx != SSL_get_SSL_CTX(ssl))
		SSL_set_SSL_CTX(ssl, sc->ctx);
	return SSL_TLSEXT_ERR_OK;
}

/* ---------------------------------------------------------------- commit */

/* Publishes <nt> as <bc>'s table and retires the old one. */
static void bind_publish(struct bind_conf *bc, struct ssl_sni_table *nt)
{
	struct ssl_sni_table *old = atomic_exchange(&bc->ssl->sni_tab, nt);

	/* out of memory: better keep the old table forever than free it
	 * under a handshake */
	if (grace_defer(sni_table_retire, old) < 0)
		fprintf(stderr, "[WARNING] ssl: out of memory: an old certificate table is kept.\n");
}

static void srv_publish(struct server *srv, SSL_CTX *nctx)
{
	SSL_CTX *old = atomic_exchange(&srv->ssl->ctx, nctx);

	if (grace_defer(srv_ctx_retire, old) < 0)
		fprintf(stderr, "[WARNING] ssl: out of memory: an old server context is kept.\n");
}

int ssl_crt_commit(struct ssl_crt_entry *e, struct ssl_cert_data *d, char *err, size_t errlen)
{
	struct ssl_sni_table **tabs = calloc((size_t)e->nbinds + 1, sizeof(*tabs));
	SSL_CTX **ctxs = calloc((size_t)e->nsrvs + 1, sizeof(*ctxs));
	int i, j;

	if (!tabs || !ctxs) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < e->nbinds; i++) {
		struct bind_conf *bc = e->binds[i];

		tabs[i] = sni_table_build(bc, e, d, atomic_load(&bc->ssl->sni_tab), err, errlen);
		if (!tabs[i])
			goto fail;
	}
	for (j = 0; j < e->nsrvs; j++)
		if (!(ctxs[j] = ssl_srv_ctx_new(e->srvs[j], d, err, errlen)))
			goto fail;
	/* everything is built: nothing can fail from here */
	for (i = 0; i < e->nbinds; i++)
		bind_publish(e->binds[i], tabs[i]);
	for (j = 0; j < e->nsrvs; j++)
		srv_publish(e->srvs[j], ctxs[j]);
	free(tabs);
	free(ctxs);
	/* nothing points to the old content: tables keep only its id */
	ssl_cert_data_free(e->data);
	e->data = d;
	return e->nbinds + e->nsrvs;
fail:
	for (i = 0; tabs && i < e->nbinds; i++)
		ssl_sni_table_free(tabs[i]);   /* never published */
	for (j = 0; ctxs && j < e->nsrvs; j++)
		SSL_CTX_free(ctxs[j]);
	free(tabs);
	free(ctxs);
	return -1;
}
