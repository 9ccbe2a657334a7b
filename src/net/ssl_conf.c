/* TLS configuration: the ssl options of `bind` and `server` lines, the
 * global ssl-default-* settings, crt-base/ca-base, and the SSL_CTXs built
 * from them once the whole configuration is read (a post-parse hook, so
 * that errors name the bind or server line, and defaults given later in
 * the global section still apply).
 *
 * Contexts. A bind line gets one SSL_CTX per certificate set, built by
 * src/net/ssl_crt.c from the certificate store (which also owns the
 * servername callback); this file makes the context itself (versions,
 * ciphers, verification, ALPN). A server gets one client SSL_CTX; its last
 * session per thread is kept for resumption (new-session callback, owner
 * thread only, no lock), with the generation of the context it came from.
 * Everything here is built before the threads start and then only read,
 * except the contexts a CLI commit replaces whole (src/net/ssl_crt.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>
#include <sluice/expr/sample.h>
#include <sluice/net/ssl_capture.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/net/ssl_keylog.h>
#include <sluice/net/ssl_crt.h>
#include <sluice/net/ssl_sess.h>
#include <sluice/net/ssl_tkeys.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>

int ssl_ex_idx_srv = -1;     /* SSL ex_data: the struct server */
int ssl_ex_idx_verr = -1;    /* SSL ex_data: first verify errors (see below) */
static int ssl_ex_idx_vfail = -1;   /* SSL ex_data: 1 + depth>0 of the error that
                                     * failed a client's verification */

/* Process-wide settings of the global section (configuration time). */
static struct {
	char *crt_base, *ca_base;
	char *bind_ciphers, *bind_ciphersuites, *bind_curves;
	char *srv_ciphers, *srv_ciphersuites;
	struct ssl_methods bind_m, srv_m;
	int srv_verify_none;         /* ssl-server-verify none */
	long cachesize, lifetime_s;
	int maxrecord;
	size_t capture_size;         /* tune.ssl.capture-buffer-size, 0: off */
} sslg = { .cachesize = 20000 };   /* lifetime_s 0: OpenSSL's (7200 s), as HAProxy */

/* ---------------------------------------------------------------- helpers */

static char *path_with_base(const char *base, const char *p)
{
	char *out;

	if (!base || p[0] == '/' || (p[0] == '@'))
		return strdup(p);
	if (asprintf(&out, "%s/%s", base, p) < 0)
		return NULL;
	return out;
}

static int parse_tls_ver(const char *s, int *v)
{
	static const struct { const char *name; int v; } tab[] = {
		{ "SSLv3", SSL3_VERSION }, { "TLSv1.0", TLS1_VERSION },
		{ "TLSv1.1", TLS1_1_VERSION }, { "TLSv1.2", TLS1_2_VERSION },
		{ "TLSv1.3", TLS1_3_VERSION },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(s, tab[i].name) == 0) {
			*v = tab[i].v;
			return 0;
		}
	}
	return -1;
}

/* no-sslv3, no-tlsv10..no-tlsv13, force-*, ssl-min-ver, ssl-max-ver,
 * no-tls-tickets, prefer-client-ciphers: shared by bind, server and the
 * ssl-default-*-options globals. Returns 1, 0 (not one), -1. */
static int parse_method_opt(struct ssl_methods *m, char **args, int nargs, int *i,
                            char *err, size_t errlen)
{
	static const struct { const char *suffix; int v; } vers[] = {
		{ "sslv3", SSL3_VERSION }, { "tlsv10", TLS1_VERSION }, { "tlsv11", TLS1_1_VERSION },
		{ "tlsv12", TLS1_2_VERSION }, { "tlsv13", TLS1_3_VERSION },
	};
	const char *o = args[*i];

	if (!strcmp(o, "ssl-min-ver") || !strcmp(o, "ssl-max-ver")) {
		int v;

		if (*i + 1 >= nargs) {
			snprintf(err, errlen, "'%s' : missing the ssl/tls version (SSLv3, TLSv1.0, "
			         "TLSv1.1, TLSv1.2 or TLSv1.3).", o);
			return -1;
		}
		if (parse_tls_ver(args[*i + 1], &v) < 0) {
			/* HAProxy's words, "'<v>' : unknown ssl/tls version" */
			snprintf(err, errlen, "'%s': '%s' : unknown ssl/tls version (expects SSLv3, "
			         "TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3).", o, args[*i + 1]);
			return -1;
		}
		(*i)++;
		*(!strcmp(o, "ssl-min-ver") ? &m->min_ver : &m->max_ver) = v;
		return 1;
	}
	if (!strcmp(o, "no-tls-tickets")) {
		m->no_tickets = 1;
		return 1;
	}
	if (!strcmp(o, "prefer-client-ciphers")) {
		m->prefer_client_ciphers = 1;
		return 1;
	}
	for (size_t k = 0; k < sizeof(vers) / sizeof(vers[0]); k++) {
		if (!strncmp(o, "no-", 3) && !strcmp(o + 3, vers[k].suffix)) {
			m->no_mask |= 1u << (vers[k].v - SSL3_VERSION);
			return 1;
		}
		if (!strncmp(o, "force-", 6) && !strcmp(o + 6, vers[k].suffix)) {
			m->min_ver = m->max_ver = vers[k].v;
			return 1;
		}
	}
	return 0;
}

/* "h2,http/1.1" to ALPN's wire format. */
static int parse_alpn(const char *list, unsigned char **out, size_t *outlen, char *err,
                      size_t errlen)
{
	size_t len = strlen(list), w = 0;
	unsigned char *buf = malloc(len + 1);
	const char *p = list;

	if (!buf)
		return -1;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (!l || l > 255) {
			free(buf);
			snprintf(err, errlen, "invalid ALPN protocol list '%s'.", list);
			return -1;
		}
		buf[w++] = (unsigned char)l;
		memcpy(buf + w, p, l);
		w += l;
		p += l + (e ? 1 : 0);
	}
	free(*out);
	*out = w ? buf : NULL;
	*outlen = w;
	if (!w)
		free(buf);
	return 0;
}

/* "all" or a comma-separated list of X509_V_ERR_* numbers. */
static int parse_ignore_err(const char *s, uint64_t bits[2], char *err, size_t errlen)
{
	if (!strcmp(s, "all")) {
		bits[0] = bits[1] = ~0ULL;
		return 0;
	}
	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v > 127 || (*end && *end != ',')) {
			snprintf(err, errlen, "expects 'all' or a comma-separated list of "
			         "error IDs (0 to 127).");
			return -1;
		}
		bits[v / 64] |= 1ULL << (v % 64);
		s = *end ? end + 1 : end;
	}
	return 0;
}

static int take_arg(char **args, int nargs, int *i, char **dst, const char *base,
                    char *err, size_t errlen)
{
	if (*i + 1 >= nargs) {
		snprintf(err, errlen, "'%s' expects an argument.", args[*i]);
		return -1;
	}
	(*i)++;
	free(*dst);
	*dst = base ? path_with_base(base, args[*i]) : strdup(args[*i]);
	return *dst ? 1 : -1;
}

/* ---------------------------------------------------------------- bind */

/* One more crt argument, with its crt-list filters (taken) or NULL. */
static int bind_add_crt(struct ssl_bind_conf *c, char *path, struct ssl_crt_filters *f,
                        char *err, size_t errlen)
{
	char **np = realloc(c->crt, sizeof(*np) * (size_t)(c->ncrt + 1));
	struct ssl_crt_filters **nf;

	if (np)
		c->crt = np;
	nf = np ? realloc(c->crt_filters, sizeof(*nf) * (size_t)(c->ncrt + 1)) : NULL;
	if (!np || !nf) {
		free(path);
		ssl_crt_filters_free(f);
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	c->crt_filters = nf;
	c->crt[c->ncrt] = path;
	c->crt_filters[c->ncrt++] = f;
	return 0;
}

static int filters_add(char ***arr, int *n, const char *name)
{
	char **na = realloc(*arr, sizeof(*na) * (size_t)(*n + 1));
	char *d = strdup(name);

	if (!na || !d) {
		free(na == *arr ? NULL : na);
		free(d);
		return -1;
	}
	for (char *q = d; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	na[(*n)++] = d;
	*arr = na;
	return 0;
}

int ssl_crt_list_line(char *line, char **crt, struct ssl_crt_filters **filters, char *err,
                      size_t errlen)
{
	struct ssl_crt_filters *flt = NULL;
	char *w[64], *p = line;
	int n = 0;

	*crt = NULL;
	*filters = NULL;
	while (*p && n < 64) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			*p++ = '\0';
		if (!*p)
			break;
		w[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			p++;
	}
	if (*p) {
		snprintf(err, errlen, "too many words.");
		return -1;
	}
	if (!n || w[0][0] == '#')
		return 0;
	for (int k = 1; k < n; k++) {
		if (w[k][0] == '[') {
			snprintf(err, errlen, "per-certificate SSL options ('[...]') are not "
			         "supported by this version of sluice.");
			ssl_crt_filters_free(flt);
			return -1;
		}
		if (!flt && !(flt = calloc(1, sizeof(*flt))))
			goto oom;
		if (!strcmp(w[k], "!*"))
			flt->none = 1;
		else if (w[k][0] == '!' ? filters_add(&flt->neg, &flt->nneg, w[k] + 1) < 0 :
		         filters_add(&flt->pos, &flt->npos, w[k]) < 0)
			goto oom;
	}
	*crt = sslg.crt_base && w[0][0] != '/' ? path_with_base(sslg.crt_base, w[0]) : strdup(w[0]);
	if (!*crt)
		goto oom;
	*filters = flt;
	return 1;
oom:
	ssl_crt_filters_free(flt);
	snprintf(err, errlen, "out of memory.");
	return -1;
}

/* `crt-list <file>`: one certificate per line, "<crtfile> [[<options>]]
 * [[!]<snifilter> ...]", '#' comments and empty lines ignored. The
 * per-certificate options are refused (not in this version). */
static int bind_read_crt_list(struct ssl_bind_conf *c, const char *path, char *err,
                              size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[4096], why[256];
	int lineno = 0, ok = 1;

	if (!f) {
		snprintf(err, errlen, "cannot open crt-list '%s': %s.", path, strerror(errno));
		return -1;
	}
	while (ok && fgets(line, sizeof(line), f)) {
		struct ssl_crt_filters *flt;
		char *crt;
		int r;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "crt-list '%s', line %d: line too long.", path, lineno);
			ok = 0;
			break;
		}
		r = ssl_crt_list_line(line, &crt, &flt, why, sizeof(why));
		if (r < 0) {
			snprintf(err, errlen, "crt-list '%s', line %d: %s", path, lineno, why);
			ok = 0;
		} else if (r > 0 && bind_add_crt(c, crt, flt, err, errlen) < 0) {
			ok = 0;
		}
	}
	if (ok && ferror(f)) {
		snprintf(err, errlen, "cannot read crt-list '%s'.", path);
		ok = 0;
	}
	fclose(f);
	return ok ? 0 : -1;
}

void ssl_crt_filters_free(struct ssl_crt_filters *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->npos; i++)
		free(f->pos[i]);
	for (int i = 0; i < f->nneg; i++)
		free(f->neg[i]);
	free(f->pos);
	free(f->neg);
	free(f);
}

static struct ssl_bind_conf *bind_ssl(struct bind_conf *bc)
{
	if (!bc->ssl)
		bc->ssl = calloc(1, sizeof(*bc->ssl));
	return bc->ssl;
}

int ssl_bind_parse_opt(struct bind_conf *bc, char **args, int nargs, int *i,
                       char *err, size_t errlen)
{
	static const char *const known[] = {
		"ssl", "crt", "crt-list", "ca-file", "crl-file", "verify", "alpn", "npn",
		"ciphers", "ciphersuites", "curves", "ecdhe", "strict-sni", "ca-ignore-err",
		"crt-ignore-err", "allow-0rtt", "ssl-min-ver", "ssl-max-ver", "no-tls-tickets",
		"prefer-client-ciphers", "no-sslv3", "no-tlsv10", "no-tlsv11", "no-tlsv12",
		"no-tlsv13", "force-sslv3", "force-tlsv10", "force-tlsv11", "force-tlsv12",
		"force-tlsv13", "generate-certificates", "ca-sign-file", "ca-sign-pass",
		"ca-verify-file", "no-ca-names", "tls-ticket-keys", "ssl_c_ca_dn", NULL
	};
	const char *o = args[*i];
	struct ssl_bind_conf *c;
	int k, rc;

	for (k = 0; known[k] && strcmp(known[k], o); k++)
		;
	if (!known[k])
		return 0;
	if (bc->is_cli) {
		snprintf(err, errlen, "'%s' is not supported on a stats socket yet.", o);
		return -1;
	}
	if (!(c = bind_ssl(bc)))
		return -1;
	if (!strcmp(o, "ssl")) {
		c->enabled = 1;
		return 1;
	}
	if (!strcmp(o, "crt")) {
		char *p = NULL;

		if (take_arg(args, nargs, i, &p, sslg.crt_base, err, errlen) < 0)
			return -1;
		return bind_add_crt(c, p, NULL, err, errlen) < 0 ? -1 : 1;
	}
	if (!strcmp(o, "crt-list")) {
		char *p = NULL;
		int r;

		if (take_arg(args, nargs, i, &p, sslg.crt_base, err, errlen) < 0)
			return -1;
		r = bind_read_crt_list(c, p, err, errlen);
		free(p);
		return r < 0 ? -1 : 1;
	}
	if (!strcmp(o, "ca-file"))
		return take_arg(args, nargs, i, &c->ca_file, sslg.ca_base, err, errlen);
	if (!strcmp(o, "crl-file"))
		return take_arg(args, nargs, i, &c->crl_file, sslg.ca_base, err, errlen);
	if (!strcmp(o, "ca-verify-file"))
		return take_arg(args, nargs, i, &c->ca_verify_file, sslg.ca_base, err, errlen);
	if (!strcmp(o, "no-ca-names")) {
		c->no_ca_names = 1;
		return 1;
	}
	if (!strcmp(o, "tls-ticket-keys"))
		return take_arg(args, nargs, i, &c->tls_ticket_keys, NULL, err, errlen);
	if (!strcmp(o, "ciphers"))
		return take_arg(args, nargs, i, &c->ciphers, NULL, err, errlen);
	if (!strcmp(o, "ciphersuites"))
		return take_arg(args, nargs, i, &c->ciphersuites, NULL, err, errlen);
	if (!strcmp(o, "curves"))
		return take_arg(args, nargs, i, &c->curves, NULL, err, errlen);
	if (!strcmp(o, "ecdhe"))
		return take_arg(args, nargs, i, &c->ecdhe, NULL, err, errlen);
	if (!strcmp(o, "strict-sni")) {
		c->strict_sni = 1;
		return 1;
	}
	if (!strcmp(o, "allow-0rtt")) {
		/* early data is refused: a client retries it in the handshake */
		return 1;
	}
	if (!strcmp(o, "verify")) {
		if (*i + 1 >= nargs) {
			snprintf(err, errlen, "'verify' : missing verify method.");
			return -1;
		}
		o = args[++*i];
		if (!strcmp(o, "none"))
			c->verify = SSL_VFY_NONE;
		else if (!strcmp(o, "optional"))
			c->verify = SSL_VFY_OPTIONAL;
		else if (!strcmp(o, "required"))
			c->verify = SSL_VFY_REQUIRED;
		else {
			snprintf(err, errlen, "'verify' : unknown verify method '%s', only 'none', "
			         "'optional', and 'required' are supported.", o);
			return -1;
		}
		return 1;
	}
	if (!strcmp(o, "alpn")) {
		if (*i + 1 >= nargs) {
			snprintf(err, errlen, "'alpn' expects a comma-separated list of protocols.");
			return -1;
		}
		++*i;
		return parse_alpn(args[*i], &c->alpn, &c->alpn_len,
		                  err, errlen) < 0 ? -1 : 1;
	}
	if (!strcmp(o, "ca-ignore-err") || !strcmp(o, "crt-ignore-err")) {
		if (*i + 1 >= nargs) {
			snprintf(err, errlen, "'%s' expects 'all' or a list of error IDs.", o);
			return -1;
		}
		++*i;
		return parse_ignore_err(args[*i], o[1] == 'a' ? c->ca_ignore : c->crt_ignore,
		                        err, errlen) < 0 ? -1 : 1;
	}
	rc = parse_method_opt(&c->m, args, nargs, i, err, errlen);
	if (rc)
		return rc;
	snprintf(err, errlen, "option '%s' is not supported by this version of sluice.", o);
	return -1;
}

void ssl_bind_conf_free(struct ssl_bind_conf *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->ncrt; i++) {
		free(c->crt[i]);
		ssl_crt_filters_free(c->crt_filters[i]);
	}
	free(c->crt);
	free(c->crt_filters);
	free(c->crts);   /* the entries belong to the store */
	free(c->crts_filters);   /* they point into crt_filters */
	ssl_sni_table_free(atomic_load(&c->sni_tab));
	free(c->tls_ticket_keys);   /* the keys belong to ssl_tkeys.c */
	free(c->ca_file);
	free(c->crl_file);
	free(c->ca_verify_file);
	free(c->alpn);
	free(c->ciphers);
	free(c->ciphersuites);
	free(c->curves);
	free(c->ecdhe);
	free(c);
}

/* ---------------------------------------------------------------- server */

static struct ssl_srv_conf *srv_ssl(struct server *s)
{
	if (!s->ssl)
		s->ssl = calloc(1, sizeof(*s->ssl));
	return s->ssl;
}

int ssl_srv_parse_opt(struct server *srv, char **args, int nargs, int *i,
                      char *err, size_t errlen)
{
	static const char *const known[] = {
		"ssl", "no-ssl", "verify", "ca-file", "crl-file", "crt", "sni", "alpn", "npn",
		"ciphers", "ciphersuites", "ssl-min-ver", "ssl-max-ver", "no-ssl-reuse",
		"ssl-reuse", "verifyhost", "no-tls-tickets", "tls-tickets", "no-sslv3",
		"no-tlsv10", "no-tlsv11", "no-tlsv12", "no-tlsv13", "force-sslv3",
		"force-tlsv10", "force-tlsv11", "force-tlsv12", "force-tlsv13",
		"allow-0rtt", "send-proxy-v2-ssl", "send-proxy-v2-ssl-cn", "curves", "sigalgs",
		"client-sigalgs", "check-ssl", "no-check-ssl", "check-sni", "check-alpn", NULL
	};
	const char *o = args[*i];
	struct ssl_srv_conf *c;
	int k, rc;

	for (k = 0; known[k] && strcmp(known[k], o); k++)
		;
	if (!known[k])
		return 0;
	if (!(c = srv_ssl(srv)))
		return -1;
	if (!strcmp(o, "ssl") || !strcmp(o, "no-ssl")) {
		c->enabled = o[0] == 's';
		return 1;
	}
	if (!strcmp(o, "check-ssl") || !strcmp(o, "no-check-ssl")) {
		c->check_ssl = o[0] == 'c' ? 1 : -1;
		return 1;
	}
	if (!strcmp(o, "check-sni")) {
		if (*i + 1 >= nargs) {
			snprintf(err, errlen, "'check-sni' : missing SNI.");
			return -1;
		}
		return take_arg(args, nargs, i, &c->check_sni, NULL, err, errlen);
	}
	if (!strcmp(o, "check-alpn")) {
		if (*i + 1 >= nargs) {
			snprintf(err, errlen, "'check-alpn' : missing the comma-delimited ALPN protocol "
			         "suite.");
			return -1;
		}
		++*i;
		return parse_alpn(args[*i], &c->check_alpn, &c->check_alpn_len, err,
		                  errlen) < 0 ? -1 : 1;
	}
	if (!strcmp(o, "verify")) {
		if (*i + 1 >= nargs) {
			snprintf(err, errlen, "'verify' : missing verify method.");
			return -1;
		}
		if (strcmp(args[*i + 1], "none") && strcmp(args[*i + 1], "required")) {
			snprintf(err, errlen, "'verify' : unknown verify method '%s', only 'none' "
			         "and 'required' are supported.", args[*i + 1]);
			return -1;
		}
		c->verify = args[++*i][0] == 'n' ? SSL_VFY_NONE : SSL_VFY_REQUIRED;
		return 1;
	}
	if (!strcmp(o, "ca-file"))
		return take_arg(args, nargs, i, &c->ca_file, sslg.ca_base, err, errlen);
	if (!strcmp(o, "crl-file"))
		return take_arg(args, nargs, i, &c->crl_file, sslg.ca_base, err, errlen);
	if (!strcmp(o, "crt"))
		return take_arg(args, nargs, i, &c->crt, sslg.crt_base, err, errlen);
	if (!strcmp(o, "ciphers"))
		return take_arg(args, nargs, i, &c->ciphers, NULL, err, errlen);
	if (!strcmp(o, "ciphersuites"))
		return take_arg(args, nargs, i, &c->ciphersuites, NULL, err, errlen);
	if (!strcmp(o, "verifyhost"))
		return take_arg(args, nargs, i, &c->verifyhost, NULL, err, errlen);
	if (!strcmp(o, "no-ssl-reuse") || !strcmp(o, "ssl-reuse")) {
		c->no_reuse = o[0] == 'n';
		return 1;
	}
	if (!strcmp(o, "tls-tickets")) {
		c->m.no_tickets = 0;
		return 1;
	}
	if (!strcmp(o, "sni")) {
		char perr[256];

		if (*i + 1 >= nargs) {
			snprintf(err, errlen, "'sni' : missing sni expression.");
			return -1;
		}
		if (take_arg(args, nargs, i, &c->sni_text, NULL, err, errlen) < 0)
			return -1;
		sample_expr_free(c->sni);
		c->sni = sample_expr_parse(c->sni_text, NULL, perr, sizeof(perr));
		if (!c->sni)
			snprintf(err, errlen, "error detected while parsing sni expression : %s", perr);
		return c->sni ? 1 : -1;
	}
	if (!strcmp(o, "alpn")) {
		if (*i + 1 >= nargs) {
			snprintf(err, errlen, "'alpn' expects a comma-separated list of protocols.");
			return -1;
		}
		++*i;
		return parse_alpn(args[*i], &c->alpn, &c->alpn_len, err, errlen) < 0 ? -1 : 1;
	}
	rc = parse_method_opt(&c->m, args, nargs, i, err, errlen);
	if (rc)
		return rc;
	snprintf(err, errlen, "'%s' is not supported by this version of sluice.", o);
	return -1;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

void ssl_srv_conf_copy(struct server *dst, const struct server *src)
{
	const struct ssl_srv_conf *s = src->ssl;
	struct ssl_srv_conf *d;
	char err[256];

	if (!s || !(d = srv_ssl(dst)))
		return;
	d->enabled = s->enabled;
	d->verify = s->verify;
	d->ca_file = dup_or_null(s->ca_file);
	d->crl_file = dup_or_null(s->crl_file);
	d->crt = dup_or_null(s->crt);
	d->verifyhost = dup_or_null(s->verifyhost);
	d->ciphers = dup_or_null(s->ciphers);
	d->ciphersuites = dup_or_null(s->ciphersuites);
	d->sni_text = dup_or_null(s->sni_text);
	if (d->sni_text)
		d->sni = sample_expr_parse(d->sni_text, NULL, err, sizeof(err));
	if (s->alpn && (d->alpn = malloc(s->alpn_len))) {
		memcpy(d->alpn, s->alpn, s->alpn_len);
		d->alpn_len = s->alpn_len;
	}
	if (s->check_alpn && (d->check_alpn = malloc(s->check_alpn_len))) {
		memcpy(d->check_alpn, s->check_alpn, s->check_alpn_len);
		d->check_alpn_len = s->check_alpn_len;
	}
	d->check_ssl = s->check_ssl;
	d->check_sni = dup_or_null(s->check_sni);
	d->no_reuse = s->no_reuse;
	d->m = s->m;
}

void ssl_srv_conf_free(struct ssl_srv_conf *c)
{
	if (!c)
		return;
	for (int i = 0; i < MAX_THREADS; i++)
		SSL_SESSION_free(c->sess[i]);
	SSL_CTX_free(c->ctx);
	sample_expr_free(c->sni);
	free(c->sni_text);
	free(c->ca_file);
	free(c->crl_file);
	free(c->crt);
	free(c->verifyhost);
	free(c->ciphers);
	free(c->ciphersuites);
	free(c->alpn);
	free(c->check_sni);
	free(c->check_alpn);
	free(c);
}

/* --------------------------------------------------------------- globals */

static int kw_ssl_string(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	static const struct { const char *kw; char **dst; } tab[] = {
		{ "crt-base", &sslg.crt_base }, { "ca-base", &sslg.ca_base },
		{ "ssl-default-bind-ciphers", &sslg.bind_ciphers },
		{ "ssl-default-bind-ciphersuites", &sslg.bind_ciphersuites },
		{ "ssl-default-bind-curves", &sslg.bind_curves },
		{ "ssl-default-server-ciphers", &sslg.srv_ciphers },
		{ "ssl-default-server-ciphersuites", &sslg.srv_ciphersuites },
	};

	if (nargs != 2) {
		snprintf(err, errlen, "'%s' expects one argument.", args[0]);
		return -1;
	}
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (!strcmp(args[0], tab[i].kw)) {
			free(*tab[i].dst);
			*tab[i].dst = strdup(args[1]);
			return 0;
		}
	}
	return -1;
}

static int kw_ssl_default_options(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                                  size_t errlen)
{
	struct ssl_methods *m = strstr(args[0], "bind") ? &sslg.bind_m : &sslg.srv_m;

	for (int i = 1; i < nargs; i++) {
		int rc = parse_method_opt(m, args, nargs, &i, err, errlen);

		if (rc < 0)
			return -1;
		if (!rc) {
			snprintf(err, errlen, "unknown option '%s'.", args[i]);
			return -1;
		}
	}
	return 0;
}

static int kw_ssl_server_verify(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                                size_t errlen)
{
	if (nargs != 2 || (strcmp(args[1], "none") && strcmp(args[1], "required"))) {
		snprintf(err, errlen, "'ssl-server-verify' expects 'none' or 'required'.");
		return -1;
	}
	sslg.srv_verify_none = args[1][0] == 'n';
	return 0;
}

static int kw_ssl_tune_int(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	long v;
	int ms;

	if (nargs != 2) {
		snprintf(err, errlen, "'%s' expects one argument.", args[0]);
		return -1;
	}
	if (!strcmp(args[0], "tune.ssl.lifetime")) {
		if (cfg_parse_time_ms(args[1], &ms, err, errlen) < 0)
			return -1;
		sslg.lifetime_s = ms / 1000;
		return 0;
	}
	if (cfg_parse_uint(args[1], 1L << 30, &v, err, errlen) < 0)
		return -1;
	if (!strcmp(args[0], "tune.ssl.cachesize"))
		sslg.cachesize = v;
	else if (!strcmp(args[0], "tune.ssl.maxrecord"))
		sslg.maxrecord = (int)v;
	else if (!strncmp(args[0], "tune.ssl.capture-", 17))
		/* capture-buffer-size, and its older name capture-cipherlist-size;
		 * beyond 64 kB it could not hold more (16-bit list lengths) */
		sslg.capture_size = v > 65535 ? 65535 : (size_t)v;
	/* tune.ssl.default-dh-param: OpenSSL 3 picks DH parameters matching
	 * the certificate (SSL_CTX_set_dh_auto) */
	return 0;
}

static int kw_ssl_ignored(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	return 0;
}

static const struct cfg_kw ssl_cfg_kws[] = {
	{ "crt-base",                        NULL, CFG_SEC_GLOBAL, kw_ssl_string },
	{ "ca-base",                         NULL, CFG_SEC_GLOBAL, kw_ssl_string },
	{ "ssl-default-bind-ciphers",        NULL, CFG_SEC_GLOBAL, kw_ssl_string },
	{ "ssl-default-bind-ciphersuites",   NULL, CFG_SEC_GLOBAL, kw_ssl_string },
	{ "ssl-default-bind-curves",         NULL, CFG_SEC_GLOBAL, kw_ssl_string },
	{ "ssl-default-server-ciphers",      NULL, CFG_SEC_GLOBAL, kw_ssl_string },
	{ "ssl-default-server-ciphersuites", NULL, CFG_SEC_GLOBAL, kw_ssl_string },
	{ "ssl-default-bind-options",        NULL, CFG_SEC_GLOBAL, kw_ssl_default_options },
	{ "ssl-default-server-options",      NULL, CFG_SEC_GLOBAL, kw_ssl_default_options },
	{ "ssl-server-verify",               NULL, CFG_SEC_GLOBAL, kw_ssl_server_verify },
	{ "tune.ssl.cachesize",              NULL, CFG_SEC_GLOBAL, kw_ssl_tune_int },
	{ "tune.ssl.lifetime",               NULL, CFG_SEC_GLOBAL, kw_ssl_tune_int },
	{ "tune.ssl.maxrecord",              NULL, CFG_SEC_GLOBAL, kw_ssl_tune_int },
	{ "tune.ssl.default-dh-param",       NULL, CFG_SEC_GLOBAL, kw_ssl_tune_int },
	{ "tune.ssl.capture-buffer-size",    NULL, CFG_SEC_GLOBAL, kw_ssl_tune_int },
	{ "tune.ssl.capture-cipherlist-size", NULL, CFG_SEC_GLOBAL, kw_ssl_tune_int },
	{ "ssl-load-extra-files",            NULL, CFG_SEC_GLOBAL, kw_ssl_ignored },
	{ NULL }
};
CFG_REGISTER(ssl_cfg_kws)

/* ---------------------------------------------------------- SSL_CTX set-up */

int ssl_err(char *err, size_t errlen, const char *what)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	int n = snprintf(err, errlen, "%.*s", (int)(errlen > 1 ? errlen - 1 : 0), what);

	if (n >= 0 && (size_t)n < errlen)
		snprintf(err + n, errlen - (size_t)n, "%s%s.", r ? ": " : "", r ? r : "");
	ERR_clear_error();
	return -1;
}

/* The versions a bind line or server allows, by HAProxy's rules: an
 * ssl-min-ver/ssl-max-ver/force-* (its own, else the global default one)
 * wins over the no-* options, which are then ignored; a bind line without
 * a minimum gets TLS 1.2, or its maximum if that is lower. */
struct ver_range {
	int min, max;                /* 0: OpenSSL's own bound */
	unsigned int no_mask;        /* no-* options that apply */
	int no_ignored;              /* no-* options given, but ignored */
	int min_from_max;            /* bind: the default minimum was above the maximum */
};

/* Returns 0, or -1 when no version is left. */
static int ver_range_resolve(const struct ssl_methods *own, const struct ssl_methods *def,
                             int is_bind, struct ver_range *r)
{
	int lo, hi;

	r->min = own->min_ver ? own->min_ver : def->min_ver;
	r->max = own->max_ver ? own->max_ver : def->max_ver;
	r->no_mask = own->no_mask | def->no_mask;
	r->no_ignored = r->no_mask && (r->min || r->max);
	r->min_from_max = 0;
	if (r->no_ignored)
		r->no_mask = 0;
	if (is_bind && !r->min) {
		r->min = TLS1_2_VERSION;   /* HAProxy's default since 2.2 */
		if (r->max && r->max < r->min) {
			r->min = r->max;
			r->min_from_max = 1;
		}
	}
	/* SSLv3 is not in OpenSSL 3: the lowest version is TLS 1.0 */
	lo = r->min > TLS1_VERSION ? r->min : TLS1_VERSION;
	hi = r->max ? r->max : TLS1_3_VERSION;
	for (int v = lo; v <= hi; v++)
		if (!(r->no_mask & (1u << (v - SSL3_VERSION))))
			return 0;
	return -1;
}

static const char *ver_name(int v)
{
	static const char *const names[] = { "SSLv3", "TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3" };

	return v >= SSL3_VERSION && v <= TLS1_3_VERSION ? names[v - SSL3_VERSION] : "?";
}

/* Warnings and errors about the versions of a bind line or server, at
 * start-up, as HAProxy words them. Returns 0 or 1 (an error). */
static int ver_range_check(const struct ssl_methods *own, const struct ssl_methods *def,
                           int is_bind, const char *file, int line, const char *what)
{
	struct ver_range r;
	int rc = ver_range_resolve(own, def, is_bind, &r);

	if (r.no_ignored)
		cfg_warning(file, line, "%s: no-sslv3/no-tlsv1x are ignored. Use only 'ssl-min-ver' "
		            "and 'ssl-max-ver' to fix.", what);
	if (r.min_from_max)
		cfg_warning(file, line, "%s: the ssl-min-ver value is not configured and the "
		            "ssl-max-ver value is lower than the default ssl-min-ver value (TLSv1.2). "
		            "Setting the ssl-min-ver to %s. Use 'ssl-min-ver' to fix this.",
		            what, ver_name(r.min));
	if (rc < 0) {
		cfg_alert(file, line, "%s: all SSL/TLS versions are disabled.", what);
		return 1;
	}
	return 0;
}

/* What binds and servers share: versions, ciphers, modes, options. */
static int ctx_common(SSL_CTX *ctx, const struct ssl_methods *own, const struct ssl_methods *def,
                      const char *ciphers, const char *suites, const char *curves,
                      int is_bind, char *err, size_t errlen)
{
	static const long no_opt[] = { SSL_OP_NO_SSLv3, SSL_OP_NO_TLSv1, SSL_OP_NO_TLSv1_1,
	                               SSL_OP_NO_TLSv1_2, SSL_OP_NO_TLSv1_3 };
	struct ver_range r;
	char what[512];
	int min, max;
	uint64_t opts = SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF |
	                SSL_OP_NO_COMPRESSION;

	ver_range_resolve(own, def, is_bind, &r);   /* checked by ver_range_check() */
	min = r.min;
	max = r.max;
	if (own->no_tickets || def->no_tickets)
		opts |= SSL_OP_NO_TICKET;
	if (is_bind && !own->prefer_client_ciphers && !def->prefer_client_ciphers)
		opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
	for (int v = 0; v < 5; v++)
		if (r.no_mask & (1u << v))
			opts |= (uint64_t)no_opt[v];
	SSL_CTX_set_options(ctx, opts);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
	                      SSL_MODE_RELEASE_BUFFERS);
	if ((min && !SSL_CTX_set_min_proto_version(ctx, min)) ||
	    (max && !SSL_CTX_set_max_proto_version(ctx, max)))
		return ssl_err(err, errlen, "unsupported TLS version range");
	/* HAProxy's words, with the value */
	if (ciphers && !SSL_CTX_set_cipher_list(ctx, ciphers)) {
		snprintf(what, sizeof(what), "unable to set SSL cipher list to '%s'", ciphers);
		return ssl_err(err, errlen, what);
	}
	if (suites && !SSL_CTX_set_ciphersuites(ctx, suites)) {
		snprintf(what, sizeof(what), "unable to set TLS 1.3 cipher suites to '%s'", suites);
		return ssl_err(err, errlen, what);
	}
	if (curves && !SSL_CTX_set1_groups_list(ctx, curves)) {
		snprintf(what, sizeof(what), "unable to set SSL curves list to '%s'", curves);
		return ssl_err(err, errlen, what);
	}
	if (sslg.maxrecord)
		SSL_CTX_set_max_send_fragment(ctx, sslg.maxrecord < 512 ? 512 :
		                              sslg.maxrecord > 16384 ? 16384 : sslg.maxrecord);
	return 0;
}

/* 1 if a line of <path> starts with <prefix> (or the file cannot be read) */
static int file_has_line(const char *path, const char *prefix)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 1;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, prefix, strlen(prefix));
	fclose(f);
	return found;
}

static int load_verify(SSL_CTX *ctx, const char *ca_file, const char *crl_file,
                       char *err, size_t errlen)
{
	char what[512];

	if (ca_file && !strcmp(ca_file, "@system-ca")) {
		if (!SSL_CTX_set_default_verify_paths(ctx))
			return ssl_err(err, errlen, "unable to load the system CA certificates");
	} else if (ca_file && access(ca_file, R_OK) < 0) {
		snprintf(err, errlen, "'ca-file' : unable to load %s (%s).", ca_file, strerror(errno));
		return -1;
	} else if (ca_file && !SSL_CTX_load_verify_locations(ctx, ca_file, NULL)) {
		snprintf(what, sizeof(what), "'ca-file' : unable to load %s", ca_file);
		return ssl_err(err, errlen, what);
	}
	if (crl_file) {
		X509_STORE *st = SSL_CTX_get_cert_store(ctx);
		X509_LOOKUP *lk = X509_STORE_add_lookup(st, X509_LOOKUP_file());

		/* a readable file holding no CRL is accepted, as HAProxy 2.6
		 * does: every certificate then fails with "unable to get CRL" */
		if (!lk || access(crl_file, R_OK) < 0 ||
		    (X509_load_crl_file(lk, crl_file, X509_FILETYPE_PEM) <= 0 &&
		     file_has_line(crl_file, "-----BEGIN X509 CRL-----"))) {
			snprintf(what, sizeof(what), "unable to load CRL file '%s'", crl_file);
			return ssl_err(err, errlen, what);
		}
		ERR_clear_error();
		X509_STORE_set_flags(st, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
	}
	return 0;
}

/* The first verification errors of a connection, kept in SSL ex_data as
 * (depth << 24 | (ca_err + 1) << 12 | (crt_err + 1)): the first error at
 * depth 0 (ssl_c_err), the first at a greater depth (ssl_c_ca_err) and
 * that depth (ssl_c_ca_err_depth, at most 255). X509_V_ERR_* codes fit
 * in 12 bits (OpenSSL 3.0 has fewer than 100). */
#define VERR_MASK 0xfffu

static void note_verify_err(SSL *ssl, int depth, int e)
{
	uintptr_t v = (uintptr_t)SSL_get_ex_data(ssl, ssl_ex_idx_verr);
	uintptr_t code = (uintptr_t)(e + 1) & VERR_MASK;

	if (depth && !((v >> 12) & VERR_MASK))
		v |= code << 12 | (uintptr_t)(depth > 255 ? 255 : depth) << 24;
	else if (!depth && !(v & VERR_MASK))
		v |= code;
	SSL_set_ex_data(ssl, ssl_ex_idx_verr, (void *)v);
}

void ssl_verify_errors(const SSL *ssl, int *crt_err, int *ca_err, int *ca_depth)
{
	uintptr_t v = ssl_ex_idx_verr < 0 ? 0 : (uintptr_t)SSL_get_ex_data(ssl, ssl_ex_idx_verr);

	*crt_err = (v & VERR_MASK) ? (int)(v & VERR_MASK) - 1 : 0;
	*ca_err = ((v >> 12) & VERR_MASK) ? (int)((v >> 12) & VERR_MASK) - 1 : 0;
	*ca_depth = (int)((v >> 24) & 0xff);
}

static int bind_verify_cb(int ok, X509_STORE_CTX *xs)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(xs, SSL_get_ex_data_X509_STORE_CTX_idx());
	const struct ssl_bind_conf *c = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
	int e = X509_STORE_CTX_get_error(xs), depth = X509_STORE_CTX_get_error_depth(xs);
	const uint64_t *ign;

	if (ok)
		return 1;
	note_verify_err(ssl, depth, e);
	ign = depth ? c->ca_ignore : c->crt_ignore;
	if (e >= 0 && e < 128 && (ign[e / 64] & (1ULL << (e % 64)))) {
		ERR_clear_error();
		return 1;
	}
	SSL_set_ex_data(ssl, ssl_ex_idx_vfail, (void *)(uintptr_t)(depth ? 2 : 1));
	return 0;
}

const char *ssl_bind_verify_failure(SSL *ssl)
{
	switch ((uintptr_t)SSL_get_ex_data(ssl, ssl_ex_idx_vfail)) {
	case 1:  return "SSL client certificate not trusted";
	case 2:  return "SSL client CA chain cannot be verified";
	default: return NULL;
	}
}

static int bind_alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                        const unsigned char *in, unsigned int inlen, void *arg)
{
	const struct ssl_bind_conf *c = arg;
	unsigned char *o;

	if (!c->alpn ||
	    SSL_select_next_proto(&o, outlen, c->alpn, (unsigned int)c->alpn_len, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

SSL_CTX *ssl_bind_ctx_new(struct bind_conf *bc, char *err, size_t errlen)
{
	struct ssl_bind_conf *c = bc->ssl;
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx) {
		ssl_err(err, errlen, "cannot create a TLS context");
		return NULL;
	}
	if (ctx_common(ctx, &c->m, &sslg.bind_m, c->ciphers ? c->ciphers : sslg.bind_ciphers,
	               c->ciphersuites ? c->ciphersuites : sslg.bind_ciphersuites,
	               c->ecdhe ? c->ecdhe : c->curves ? c->curves : sslg.bind_curves, 1,
	               err, errlen) < 0)
		goto fail;
	SSL_CTX_set_dh_auto(ctx, 1);
	/* one TLS 1.3 ticket per handshake instead of OpenSSL's two: each
	 * costs about 6% of an ECDSA handshake (callgrind, bench/tls_locks.py
	 * notes in doc/benchmarks.md), and a client that opens several
	 * connections gets one from each */
	SSL_CTX_set_num_tickets(ctx, 1);
	/* sessions are shared by every context of this bind line (SNI
	 * switches between them), and by lines that authenticate clients the
	 * same way (bind_sid_ctx()) */
	SSL_CTX_set_session_id_context(ctx, c->sid_ctx, sizeof(c->sid_ctx));
	if (sslg.cachesize)
		ssl_sess_cache_attach(ctx);
	else
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (sslg.lifetime_s)
		SSL_CTX_set_timeout(ctx, sslg.lifetime_s);
	SSL_CTX_set_app_data(ctx, c);
	if (load_verify(ctx, c->ca_file, c->crl_file, err, errlen) < 0)
		goto fail;
	/* ca-verify-file: trusted too, but not named to clients */
	if (c->ca_verify_file && load_verify(ctx, c->ca_verify_file, NULL, err, errlen) < 0)
		goto fail;
	if (c->verify == SSL_VFY_OPTIONAL || c->verify == SSL_VFY_REQUIRED) {
		if (!c->ca_file && !c->ca_verify_file) {
			snprintf(err, errlen, "verify is enabled but no CA file specified.");
			goto fail;
		}
		if (c->ca_file && !c->no_ca_names && strcmp(c->ca_file, "@system-ca")) {
			STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(c->ca_file);

			if (names)
				SSL_CTX_set_client_CA_list(ctx, names);
		}
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (c->verify == SSL_VFY_REQUIRED ?
		                   SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), bind_verify_cb);
	}
	if (c->tkeys)
		ssl_tkeys_attach(ctx, c->tkeys);
	SSL_CTX_set_alpn_select_cb(ctx, bind_alpn_cb, c);
	if (sslg.capture_size && ssl_capture_enable(ctx, sslg.capture_size) < 0) {
		snprintf(err, errlen, "cannot set up the ClientHello capture.");
		goto fail;
	}
	if (ssl_keylog_on() && ssl_keylog_enable(ctx) < 0) {
		snprintf(err, errlen, "cannot set up the TLS key log.");
		goto fail;
	}
	SSL_CTX_set_tlsext_servername_callback(ctx, ssl_crt_sni_cb);
	SSL_CTX_set_tlsext_servername_arg(ctx, c);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

/* The session ID context of a bind line: a digest of what decides whether
 * a client was authenticated (verify, its CA and CRL files, the errors
 * ignored). OpenSSL resumes a session only where the context matches, so a
 * session made where no client certificate was asked is never resumed on
 * a line that requires one, while lines (and processes sharing
 * tls-ticket-keys) with the same settings resume each other's sessions. */
static void bind_sid_ctx(struct ssl_bind_conf *c)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int len = sizeof(c->sid_ctx);
	const char *parts[2] = { c->ca_file ? c->ca_file : "", c->crl_file ? c->crl_file : "" };

	if (md && EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		EVP_DigestUpdate(md, "sluice", 6);
		EVP_DigestUpdate(md, &c->verify, sizeof(c->verify));
		for (int i = 0; i < 2; i++)
			EVP_DigestUpdate(md, parts[i], strlen(parts[i]) + 1);
		EVP_DigestUpdate(md, c->ca_ignore, sizeof(c->ca_ignore));
		EVP_DigestUpdate(md, c->crt_ignore, sizeof(c->crt_ignore));
		EVP_DigestFinal_ex(md, c->sid_ctx, &len);
	}
	EVP_MD_CTX_free(md);
}

static int bind_ssl_build(struct bind_conf *bc)
{
	struct ssl_bind_conf *c = bc->ssl;
	char err[1024];

	if (!c->enabled) {
		cfg_warning(bc->file, bc->line, "ssl options given without 'ssl': ignored.");
		return 0;
	}
	if (!c->ncrt) {
		cfg_alert(bc->file, bc->line, "proxy '%s': no SSL certificate specified for "
		          "bind '%s' (use 'crt').", bc->fe->name, bc->addr_str);
		return 1;
	}
	if (sslg.cachesize && ssl_sess_cache_init(sslg.cachesize) < 0) {
		cfg_alert(bc->file, bc->line, "no memory for the TLS session cache.");
		return 1;
	}
	snprintf(err, sizeof(err), "bind '%s' in proxy '%s'", bc->addr_str, bc->fe->name);
	if (ver_range_check(&c->m, &sslg.bind_m, 1, bc->file, bc->line, err))
		return 1;
	bind_sid_ctx(c);
	if ((c->tls_ticket_keys && !c->tkeys &&
	     !(c->tkeys = ssl_tkeys_load(c->tls_ticket_keys, err, sizeof(err)))) ||
	    ssl_crt_bind_load(bc, err, sizeof(err)) < 0) {
		cfg_alert(bc->file, bc->line, "bind '%s' in proxy '%s': %s", bc->addr_str,
		          bc->fe->name, err);
		return 1;
	}
	return 0;
}

static int srv_new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct server *srv = SSL_get_ex_data(ssl, ssl_ex_idx_srv);

	if (!srv || !th_ctx)
		return 0;
	ssl_srv_keep_session(srv, NULL, th_ctx->tid);
	srv->ssl->sess[th_ctx->tid] = sess;
	srv->ssl->sess_gen[th_ctx->tid] =
		(unsigned int)(uintptr_t)SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
	return 1;   /* the reference is ours */
}

SSL_SESSION *ssl_srv_session(struct ssl_srv_conf *c, SSL_CTX *ctx, int tid, const char *sni)
{
	const char *was;

	if (c->no_reuse || !c->sess[tid] ||
	    c->sess_gen[tid] != (unsigned int)(uintptr_t)SSL_CTX_get_app_data(ctx))
		return NULL;
	/* a session resumed skips the certificate check: it may only be
	 * offered for the name it was verified for (RFC 8446 section 4.6.1;
	 * HAProxy drops it too when the SNI changed) */
	was = SSL_SESSION_get0_hostname(c->sess[tid]);
	if (strcmp(was ? was : "", sni ? sni : ""))
		return NULL;
	return c->sess[tid];
}

void ssl_srv_keep_session(struct server *srv, SSL *ssl, int tid)
{
	SSL_SESSION_free(srv->ssl->sess[tid]);
	srv->ssl->sess[tid] = ssl ? SSL_get1_session(ssl) : NULL;
}

SSL_CTX *ssl_srv_ctx_new(struct server *srv, const struct ssl_cert_data *crt,
                         char *err, size_t errlen)
{
	struct ssl_srv_conf *c = srv->ssl;
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	if (!ctx) {
		ssl_err(err, errlen, "cannot create a TLS context");
		return NULL;
	}
	if (ctx_common(ctx, &c->m, &sslg.srv_m, c->ciphers ? c->ciphers : sslg.srv_ciphers,
	               c->ciphersuites ? c->ciphersuites : sslg.srv_ciphersuites, NULL, 0,
	               err, errlen) < 0 ||
	    load_verify(ctx, c->ca_file, c->crl_file, err, errlen) < 0)
		goto fail;
	SSL_CTX_set_verify(ctx, c->verify == SSL_VFY_REQUIRED ? SSL_VERIFY_PEER : SSL_VERIFY_NONE,
	                   NULL);
	if (crt) {
		if (!SSL_CTX_use_certificate(ctx, crt->cert) ||
		    (crt->chain && !SSL_CTX_set1_chain(ctx, crt->chain)) ||
		    !crt->key || !SSL_CTX_use_PrivateKey(ctx, crt->key) ||
		    !SSL_CTX_check_private_key(ctx)) {
			char what[4200];

			snprintf(what, sizeof(what), "unable to load client certificate '%s'", c->crt);
			ssl_err(err, errlen, what);
			goto fail;
		}
	}
	if (c->alpn && SSL_CTX_set_alpn_protos(ctx, c->alpn, (unsigned int)c->alpn_len)) {
		ssl_err(err, errlen, "unable to set ALPN");
		goto fail;
	}
	if (!c->no_reuse) {
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT |
		                               SSL_SESS_CACHE_NO_INTERNAL_STORE);
		SSL_CTX_sess_set_new_cb(ctx, srv_new_session);
	}
	/* sessions remember the generation of the context they came from */
	SSL_CTX_set_app_data(ctx, (void *)(uintptr_t)++c->ctx_gen);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

static int srv_ssl_build(struct server *srv)
{
	struct ssl_srv_conf *c = srv->ssl;
	char err[4400];
	enum ssl_verify v = c->verify != SSL_VFY_UNSET ? c->verify :
	                    sslg.srv_verify_none ? SSL_VFY_NONE : SSL_VFY_REQUIRED;

	/* a context for the traffic, or for health checks alone */
	if (!c->enabled && c->check_ssl != 1)
		return 0;
	if (v == SSL_VFY_REQUIRED && !c->ca_file) {
		/* HAProxy 2.6 refuses it too */
		cfg_alert(srv->conf_file, srv->conf_line, "server '%s' in backend '%s': verify is "
		          "enabled by default but no CA file specified. If you're running on a "
		          "LAN where you're certain to trust the server's certificate, please "
		          "set an explicit 'verify none' statement on the 'server' line, or use "
		          "'ssl-server-verify none' in the global section to disable server-side "
		          "verifications by default.", srv->name, srv->be->name);
		return 1;
	}
	c->verify = v;
	snprintf(err, sizeof(err), "server '%s' in backend '%s'", srv->name, srv->be->name);
	if (ver_range_check(&c->m, &sslg.srv_m, 0, srv->conf_file, srv->conf_line, err))
		return 1;
	if (c->crt) {
		char why[4096];

		c->crt_entry = ssl_crt_srv_load(srv, c->crt, why, sizeof(why));
		if (!c->crt_entry) {
			snprintf(err, sizeof(err), "unable to load client certificate '%s': %s",
			         c->crt, why);
			goto fail;
		}
	}
	c->ctx = ssl_srv_ctx_new(srv, c->crt_entry ? c->crt_entry->data : NULL, err, sizeof(err));
	if (!c->ctx)
		goto fail;
	return 0;
fail:
	cfg_alert(srv->conf_file, srv->conf_line, "server '%s' in backend '%s': %s",
	          srv->name, srv->be->name, err);
	return 1;
}

int ssl_srv_prepare(struct server *srv, SSL *ssl, const char *sni)
{
	struct ssl_srv_conf *c = srv->ssl;
	/* the name checked is the SNI sent; verifyhost only when none is
	 * (HAProxy: "a default static hostname ... when no SNI was used") */
	const char *host = sni && *sni ? sni : c->verifyhost;

	SSL_set_ex_data(ssl, ssl_ex_idx_srv, srv);
	if (c->verify == SSL_VFY_REQUIRED && host && *host && !SSL_set1_host(ssl, host))
		return -1;
	return 0;
}

static int ssl_post(void)
{
	struct list *pos, *tmp, *bpos, *btmp;
	int errors = 0;

	if (ssl_ex_idx_srv < 0) {
		ssl_ex_idx_srv = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
		ssl_ex_idx_verr = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
		ssl_ex_idx_vfail = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	}
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		list_for_each_safe(bpos, btmp, &px->binds) {
			struct bind_conf *bc = list_elem(bpos, struct bind_conf, list);

			if (bc->ssl)
				errors += bind_ssl_build(bc);
		}
		for (int i = 0; i < px->nsrv; i++)
			if (px->srv[i]->ssl)
				errors += srv_ssl_build(px->srv[i]);
	}
	return errors;
}

static struct cfg_post_hook ssl_post_hook = { ssl_post, NULL, 50 };

__attribute__((constructor)) static void ssl_conf_register(void)
{
	cfg_register_post(&ssl_post_hook);
}
