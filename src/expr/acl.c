/* ACLs, the ACL keywords, the predefined ACLs, and conditions (see acl.h).
 *
 * Everything here is built at configuration time (one thread) and
 * read-only afterwards; evaluation may run on every thread at once. The
 * predefined ACLs are parsed on first use, at configuration time too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/acl.h>

/* The `acl` configuration keyword registers from a constructor in
 * acl_cfg.c; this reference links it wherever conditions are parsed, even
 * from a static archive (the configuration fuzzer). */
extern const int expr_acl_cfg_anchor;
__attribute__((used)) static const int *const acl_cfg_anchor = &expr_acl_cfg_anchor;

/* ACL keywords that are not plain fetches: "<base>_<method>" derivatives
 * (hdr_beg, path_end, urlp_reg...) and names with an implied method. When
 * converters follow, the implied method is ignored (manual 7.1). */
#define DERIV_ALL 0x7f          /* _beg _dir _dom _end _len _reg _sub */
#define DERIV_END 0x08
#define DERIV_REG 0x20

static const struct acl_base {
	const char *acl;           /* name as written in an ACL */
	const char *fetch;         /* fetch it stands for */
	unsigned int derivable;    /* the suffixes it accepts: bits of acl_suffixes[] */
	enum pat_match match;      /* method of the name alone */
	unsigned int pat_flags;    /* PAT_F_* its patterns are read with */
} acl_bases[] = {
	{ "base",      "base",      DERIV_ALL, PAT_MATCH_STR },
	{ "cook",      "req.cook",  DERIV_ALL, PAT_MATCH_STR },
	{ "req.cook",  "req.cook",  DERIV_ALL, PAT_MATCH_STR },
	{ "hdr",       "req.hdr",   DERIV_ALL, PAT_MATCH_STR },   /* hdr* ACLs are about the request */
	{ "req.hdr",   "req.hdr",   DERIV_ALL, PAT_MATCH_STR },
	{ "res.hdr",   "res.hdr",   DERIV_ALL, PAT_MATCH_STR },
	{ "shdr",      "res.hdr",   DERIV_ALL, PAT_MATCH_STR },
	{ "scook",     "res.cook",  DERIV_ALL, PAT_MATCH_STR },
	{ "path",      "path",      DERIV_ALL, PAT_MATCH_STR },
	{ "url",       "url",       DERIV_ALL, PAT_MATCH_STR },
	{ "urlp",      "urlp",      DERIV_ALL, PAT_MATCH_STR },   /* url_param's alias, named as HAProxy */
	{ "url_param", "url_param", DERIV_ALL, PAT_MATCH_STR },
	{ "ssl_fc_sni", "ssl_fc_sni", DERIV_END | DERIV_REG, PAT_MATCH_STR },   /* only these two */
	/* versions written MAJOR.MINOR ("3.1" for TLS 1.0), matched as the
	 * integers the fetch returns */
	{ "req.ssl_ver", "req.ssl_ver", 0, PAT_MATCH_INT, PAT_F_DOTTED_VER },
	{ "req_ssl_ver", "req.ssl_ver", 0, PAT_MATCH_INT, PAT_F_DOTTED_VER },
	{ NULL }
};

/* in the order of the DERIV_* bits */
static const struct { const char *suffix; enum pat_match match; } acl_suffixes[] = {
	{ "_beg", PAT_MATCH_BEG }, { "_dir", PAT_MATCH_DIR }, { "_dom", PAT_MATCH_DOM },
	{ "_end", PAT_MATCH_END }, { "_len", PAT_MATCH_LEN }, { "_reg", PAT_MATCH_REG },
	{ "_sub", PAT_MATCH_SUB },
};

/* The predefined ACLs (manual 7.4). */
static const struct { const char *name; const char *def; } acl_predefined[] = {
	{ "FALSE",          "always_false" },
	{ "HTTP",           "req.proto_http" },
	{ "HTTP_1.0",       "req.ver 1.0" },
	{ "HTTP_1.1",       "req.ver 1.1" },
	{ "HTTP_2.0",       "req.ver 2.0" },
	{ "HTTP_CONTENT",   "req.hdr_val(content-length) gt 0" },
	{ "HTTP_URL_ABS",   "url_reg ^[^/:]*://" },
	{ "HTTP_URL_SLASH", "url_beg /" },
	{ "HTTP_URL_STAR",  "url *" },
	{ "LOCALHOST",      "src 127.0.0.1/8 ::1" },
	{ "METH_CONNECT",   "method CONNECT" },
	{ "METH_DELETE",    "method DELETE" },
	{ "METH_GET",       "method GET HEAD" },
	{ "METH_HEAD",      "method HEAD" },
	{ "METH_OPTIONS",   "method OPTIONS" },
	{ "METH_POST",      "method POST" },
	{ "METH_PUT",       "method PUT" },
	{ "METH_TRACE",     "method TRACE" },
	{ "RDP_COOKIE",     "req.rdp_cookie_cnt gt 0" },
	{ "REQ_CONTENT",    "req.len gt 0" },
	{ "TRUE",           "always_true" },
	{ "WAIT_END",       "wait_end" },
};

/* One "acl" line or one anonymous block: a sample expression matched
 * against pattern sets (one per file, and per run of inline values with
 * the same case policy). */
struct acl_term {
	struct acl_term *next;
	struct sample_expr *smp;
	enum pat_match match;
	int nsets;
	struct pat_expr **sets;
};

struct acl {
	struct list list;
	char *name;
	struct acl_term *terms;        /* ORed */
	unsigned int use;
};

struct cond_term {
	struct acl *acl;
	int neg;
	int anonymous;                 /* owned by the condition */
};

struct cond_suite {                /* ANDed terms */
	int n;
	struct cond_term *t;
};

struct acl_cond {
	int unless;
	int nsuites;                   /* ORed */
	struct cond_suite *suites;
	unsigned int use;
};

static struct acl_list predef;
static int predef_ready;

/* ------------------------------------------------------------------ lists */

void acl_list_init(struct acl_list *l)
{
	list_init(&l->acls);
}

static void term_free(struct acl_term *t)
{
	sample_expr_free(t->smp);
	for (int i = 0; i < t->nsets; i++)
		pat_expr_put(t->sets[i]);
	free(t->sets);
	free(t);
}

static void acl_free(struct acl *a)
{
	struct acl_term *t, *next;

	for (t = a->terms; t; t = next) {
		next = t->next;
		term_free(t);
	}
	free(a->name);
	free(a);
}

void acl_list_free(struct acl_list *l)
{
	while (!list_empty(&l->acls)) {
		struct acl *a = list_elem(l->acls.next, struct acl, list);

		list_del_init(&a->list);
		acl_free(a);
	}
}

struct acl *acl_find(struct acl_list *l, const char *name)
{
	if (!l || !l->acls.next)
		return NULL;
	for (struct list *p = l->acls.next; p != &l->acls; p = p->next) {
		struct acl *a = list_elem(p, struct acl, list);

		if (strcmp(a->name, name) == 0)
			return a;
	}
	return NULL;
}

/* ------------------------------------------------------------------ criterion */

/* Compiles the criterion: an ACL keyword becomes its fetch, with an implied
 * method (*implied, -1 if none) and the pattern flags that go with it
 * (*pat_flags). <kw> receives the keyword that names the
 * criterion in "show acl", as HAProxy words it: the ACL keyword as written
 * ("hdr_beg"), or, once converters follow one, the fetch it stands for
 * ("hdr_beg(host),lower" is "req.hdr"). */
static struct sample_expr *parse_criterion(const char *crit, int *implied,
                                           unsigned int *pat_flags, char *kw,
                                           size_t kwlen, char *err, size_t errlen)
{
	size_t klen = strcspn(crit, "(,");
	const char *base_fetch = NULL;
	char *text = NULL;
	struct sample_expr *expr;

	*implied = -1;
	*pat_flags = 0;
	for (const struct acl_base *b = acl_bases; b->acl && !text; b++) {
		size_t blen = strlen(b->acl);
		int m = -1;

		if (klen == blen && strncmp(crit, b->acl, blen) == 0)
			m = (int)b->match;
		else if (b->derivable && klen == blen + 4 && strncmp(crit, b->acl, blen) == 0)
			for (size_t i = 0; i < sizeof(acl_suffixes) / sizeof(acl_suffixes[0]); i++)
				if ((b->derivable & (1u << i)) &&
				    strncmp(crit + blen, acl_suffixes[i].suffix, 4) == 0)
					m = (int)acl_suffixes[i].match;
		if (m < 0)
			continue;
		if (asprintf(&text, "%s%s", b->fetch, crit + klen) < 0) {
			errmsg_set(err, errlen, "out of memory");
			return NULL;
		}
		*implied = m;
		if (m == (int)b->match)
			*pat_flags = b->pat_flags;
		base_fetch = b->fetch;
	}
	expr = sample_expr_parse(text ? text : crit, NULL, err, errlen);
	free(text);
	if (expr && expr->nconv) {
		*implied = -1;         /* converters: the output type decides */
		*pat_flags = 0;
	}
	if (expr && expr->nconv && base_fetch)
		snprintf(kw, kwlen, "%s", base_fetch);
	else
		snprintf(kw, kwlen, "%.*s", (int)klen, crit);
	return expr;
}

static int valid_acl_name(const char *n)
{
	if (!*n)
		return 0;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9') || *n == '-' || *n == '_' || *n == '.' || *n == ':'))
			return 0;
	return 1;
}

static int term_add_set(struct acl_term *t, struct pat_expr *x, char *err, size_t errlen)
{
	struct pat_expr **s = realloc(t->sets, sizeof(*s) * (size_t)(t->nsets + 1));

	if (!s) {
		pat_expr_put(x);
		return errmsg_set(err, errlen, "out of memory");
	}
	t->sets = s;
	t->sets[t->nsets++] = x;
	return 0;
}

/* A pattern file named with -f: shared by every user of the same file. */
static struct pat_expr *file_set(const char *path, int map, enum pat_match match,
                                 unsigned int flags, char *err, size_t errlen)
{
	struct pat_ref *ref;
	char sub[512];
	struct pat_expr *x;

	if (map) {
		ref = map_ref_get(path, sub, sizeof(sub));
		if (!ref)
			return errmsg_set(err, errlen, "%s", sub), NULL;
	} else {
		ref = pat_ref_lookup(path);
		if (ref && (ref->flags & PAT_REF_MAP)) {
			errmsg_set(err, errlen, "file '%s' is a map here: use -M to read it as one",
			           path);
			return NULL;
		}
		if (!ref) {
			ref = pat_ref_new(path, path, -1, PAT_REF_ACL | PAT_REF_FILE, sub, sizeof(sub));
			if (!ref)
				return errmsg_set(err, errlen, "%s", sub), NULL;
			if (pat_ref_load_file(ref, path, sub, sizeof(sub)) < 0) {
				pat_ref_release(ref);
				return errmsg_set(err, errlen, "%s", sub), NULL;
			}
		}
	}
	ref->flags |= PAT_REF_ACL;
	x = pat_expr_get(ref, match, flags, SMP_T_ANY, sub, sizeof(sub));
	if (!x) {
		pat_ref_release(ref);
		errmsg_set(err, errlen, "%s", sub);
	}
	return x;
}

/* ------------------------------------------------------------------ acl lines */

struct acl_opts {
	int match;                 /* -m, or -1 */
	unsigned int flags;        /* current PAT_F_* */
	int map;                   /* -M */
	int unique_id;             /* -u, or -1 */
	int end_of_flags;          /* "--" was given: no pattern is intended */
	const char *files[16];
	unsigned int file_flags[16];
	int nfiles;
};

/* Reads the flags; returns the index of the first other word, or -1. */
static int parse_flags(char **args, int nargs, int i, struct acl_opts *o, char *err,
                       size_t errlen)
{
	for (; i < nargs && args[i][0] == '-'; i++) {
		const char *f = args[i];

		if (strcmp(f, "--") == 0) {
			o->end_of_flags = 1;
			return i + 1;
		}
		if (strcmp(f, "-i") == 0)
			o->flags |= PAT_F_ICASE;
		else if (strcmp(f, "-n") == 0)
			o->flags |= PAT_F_NO_DNS;
		else if (strcmp(f, "-M") == 0)
			o->map = 1;
		else if (strcmp(f, "-m") == 0 || strcmp(f, "-f") == 0 || strcmp(f, "-u") == 0) {
			if (i + 1 >= nargs)
				return errmsg_set(err, errlen, "'%s' expects an argument", f);
			i++;
			if (f[1] == 'm') {
				if (o->nfiles)
					return errmsg_set(err, errlen, "'-m' must be placed before '-f'");
				if ((o->match = pat_match_by_name(args[i])) < 0 ||
				    o->match == PAT_MATCH_METH)
					return errmsg_set(err, errlen, "unknown matching method '%s' (found, "
					                  "bool, int, ip, bin, len, str, beg, sub, dir, dom, "
					                  "end, reg)", args[i]);
			} else if (f[1] == 'f') {
				if (o->nfiles == 16)
					return errmsg_set(err, errlen, "too many '-f' files");
				o->file_flags[o->nfiles] = o->flags;
				o->files[o->nfiles++] = args[i];
			} else {
				int64_t id;

				if (!smp_str_to_sint(args[i], strlen(args[i]), &id) || id < 0 ||
				    id > 0x7fffffff)
					return errmsg_set(err, errlen, "'-u' expects a positive integer, "
					                  "not '%s'", args[i]);
				o->unique_id = (int)id;
			}
		} else
			return errmsg_set(err, errlen, "'%s' is not a valid ACL option. Please use "
			                  "'--' before any pattern beginning with a '-'", f);
	}
	return i;
}

/* The reference holding a term's inline values (named by -u if given),
 * and its index, added to the term. */
static struct pat_ref *inline_set(struct acl_term *t, const char *where,
                                  const struct acl_opts *o, char *err, size_t errlen)
{
	struct pat_ref *ref = pat_ref_new(NULL, where, o->unique_id, PAT_REF_ACL, err, errlen);
	struct pat_expr *x;

	if (!ref)
		return NULL;
	x = pat_expr_get(ref, t->match, o->flags, SMP_T_ANY, err, errlen);
	if (!x) {
		pat_ref_release(ref);
		return NULL;
	}
	if (term_add_set(t, x, err, errlen) < 0)
		return NULL;
	return ref;
}

/* The values of an acl line: [operator] value... (flags cannot follow a
 * value, so all of them share one case policy and one reference). A -u
 * without values still creates the (empty) list for the CLI. */
static int add_values(struct acl_term *t, char **args, int nargs, const char *where,
                      const struct acl_opts *o, char *err, size_t errlen)
{
	enum pat_int_op op = PAT_OP_NONE;
	struct pat_ref *ref;
	char sub[512], key[64];
	int i = 0;

	if (!nargs && (o->unique_id < 0 || t->match == PAT_MATCH_FOUND ||
	               t->match == PAT_MATCH_BOOL))
		return 0;
	if (nargs && (t->match == PAT_MATCH_INT || t->match == PAT_MATCH_LEN) &&
	    (op = (enum pat_int_op)pat_int_op_by_name(args[0])) != PAT_OP_NONE)
		i++;
	ref = inline_set(t, where, o, err, errlen);
	if (!ref)
		return -1;
	for (; i < nargs; i++) {
		const char *val = args[i];

		if (op != PAT_OP_NONE) {
			if (((o->flags & PAT_F_DOTTED_VER) ? pat_dotted_op_key : pat_int_op_key)
			    (op, val, key, sizeof(key), sub, sizeof(sub)) < 0)
				return errmsg_set(err, errlen, "%s", sub);
			val = key;
		}
		if (pat_ref_append(ref, val, NULL, 0, o->flags & PAT_F_NO_DNS, sub, sizeof(sub)) < 0)
			return errmsg_set(err, errlen, "%s", sub);
	}
	return 0;
}

/* The method of a term: -m, else the ACL keyword's, else the default of
 * the output type; it must accept that type. */
static int term_match(const struct acl_term *t, const char *kw, int opt_match, int implied,
                      char *err, size_t errlen)
{
	enum smp_type type = t->smp->out_type;
	int match = opt_match >= 0 ? opt_match : implied >= 0 ? implied : pat_match_default(type);

	/* var() (or set-var() last) tells no type: HAProxy wants -m there */
	if (opt_match < 0 && implied < 0 && type == SMP_T_ANY)
		return errmsg_set(err, errlen, "matching method must be specified first (using "
		                  "'-m') when using a sample fetch of this type ('%s')",
		                  t->smp->fetch->kw);
	if (match < 0)
		return errmsg_set(err, errlen, "ACL keyword '%s' returns type '%s' which needs a "
		                  "matching method: use '-m'", kw, smp_type_name(type));
	if (!pat_match_accepts((enum pat_match)match, type))
		return errmsg_set(err, errlen, "matching method '%s' cannot be used with ACL "
		                  "keyword '%s' of type '%s'", pat_match_name((enum pat_match)match),
		                  kw, smp_type_name(type));
	return match;
}

/* Builds one term from the words <args>[0..nargs): criterion, flags,
 * operator, values. <file>/<line> locate the inline patterns for "show
 * acl". *<no_pattern_ok> tells whether "--" ended the flags: a term
 * without pattern is then what the user meant. */
static struct acl_term *term_parse(char **args, int nargs, const char *file, int line,
                                   int *no_pattern_ok, char *err, size_t errlen)
{
	struct acl_opts o = { .match = -1, .unique_id = -1 };
	struct acl_term *t = calloc(1, sizeof(*t));
	char sub[512], kw[128], where[512];
	unsigned int implied_flags;
	int implied, i, match;

	if (!t)
		return errmsg_set(err, errlen, "out of memory"), NULL;
	if (nargs < 1) {
		errmsg_set(err, errlen, "missing fetch method");
		goto fail;
	}
	t->smp = parse_criterion(args[0], &implied, &implied_flags, kw, sizeof(kw), sub,
	                         sizeof(sub));
	if (!t->smp) {
		errmsg_set(err, errlen, "%s", sub);
		goto fail;
	}
	/* HAProxy names inline patterns after the criterion, not the ACL */
	snprintf(where, sizeof(where), "acl '%s' file '%s' line %d", kw, file ? file : "-", line);
	i = parse_flags(args, nargs, 1, &o, err, errlen);
	if (i < 0 || (match = term_match(t, args[0], o.match, implied, err, errlen)) < 0)
		goto fail;
	t->match = (enum pat_match)match;
	if (o.match < 0 && implied >= 0) {
		/* the keyword's own way of reading patterns, unless -m chose
		 * another method (req.ssl_ver -m int reads plain integers) */
		o.flags |= implied_flags;
		for (int f = 0; f < o.nfiles; f++)
			o.file_flags[f] |= implied_flags;
	}
	for (int f = 0; f < o.nfiles; f++) {
		struct pat_expr *x = file_set(o.files[f], o.map, t->match, o.file_flags[f], err, errlen);

		if (!x || term_add_set(t, x, err, errlen) < 0)
			goto fail;
	}
	if (add_values(t, args + i, nargs - i, where, &o, err, errlen) < 0)
		goto fail;
	*no_pattern_ok = o.end_of_flags;
	return t;
fail:
	term_free(t);
	return NULL;
}

int acl_parse(struct acl_list *l, char **args, int nargs, const char *file, int line,
              char *err, size_t errlen)
{
	struct acl *a;
	struct acl_term *t, **tp;
	int warned = 0, no_pattern_ok = 0;

	if (nargs < 2)
		return errmsg_set(err, errlen, "expects an ACL name and a criterion");
	if (!valid_acl_name(args[0]))
		return errmsg_set(err, errlen, "invalid character in ACL name '%s' (letters, "
		                  "digits, '-', '_', '.' and ':' only)", args[0]);
	t = term_parse(args + 1, nargs - 1, file, line, &no_pattern_ok, err, errlen);
	if (!t)
		return -1;
	if (!t->nsets && !no_pattern_ok && t->match != PAT_MATCH_FOUND &&
	    t->match != PAT_MATCH_BOOL) {
		errmsg_set(err, errlen, "ACL '%s': no pattern to match against, it will never "
		           "match (add '--' if this is intended, or use '-m found' to test for "
		           "presence)", args[0]);
		warned = 1;
	}
	a = acl_find(l, args[0]);
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a || !(a->name = strdup(args[0]))) {
			free(a);
			term_free(t);
			return errmsg_set(err, errlen, "out of memory");
		}
		list_append(&l->acls, &a->list);
	}
	for (tp = &a->terms; *tp; tp = &(*tp)->next)
		;
	*tp = t;
	a->use |= t->smp->use;
	return warned;
}

struct acl *acl_find_predefined(const char *name)
{
	if (!predef_ready) {
		acl_list_init(&predef);
		predef_ready = 1;
		for (size_t i = 0; i < sizeof(acl_predefined) / sizeof(acl_predefined[0]); i++) {
			char buf[256], *words[8], err[256], *save = NULL;
			int n = 0;

			snprintf(buf, sizeof(buf), "%s %s", acl_predefined[i].name, acl_predefined[i].def);
			for (char *w = strtok_r(buf, " ", &save); w && n < 8; w = strtok_r(NULL, " ", &save))
				words[n++] = w;
			if (acl_parse(&predef, words, n, "<predefined>", 0, err, sizeof(err)) != 0) {
				fprintf(stderr, "predefined ACL %s: %s\n", acl_predefined[i].name, err);
				abort();    /* a bug in the table above */
			}
		}
	}
	return acl_find(&predef, name);
}

/* ------------------------------------------------------------------ evaluation */

static enum acl_test_res term_eval(const struct acl_term *t, struct smp_ctx *ctx)
{
	enum acl_test_res res = ACL_TEST_FAIL;
	struct sample smp;

	memset(&smp, 0, sizeof(smp));
	smp.opt = SMP_OPT_ITERATE;
	do {
		int ok = sample_expr_eval(t->smp, ctx, &smp), hit = 0;

		if (ok) {
			if (t->match == PAT_MATCH_FOUND || t->match == PAT_MATCH_BOOL)
				hit = pat_match_novalue(t->match, &smp);
			for (int i = 0; !hit && i < t->nsets; i++)
				hit = pat_expr_match(t->sets[i], &smp, NULL, 0);
			if (hit)
				return ACL_TEST_PASS;
		}
		if (smp.flags & SMP_F_MAY_CHANGE)
			res = ACL_TEST_MISS;
		smp.opt = SMP_OPT_ITERATE;
	} while (smp.flags & SMP_F_NOT_LAST);
	return res;
}

enum acl_test_res acl_eval(const struct acl *a, struct smp_ctx *ctx)
{
	enum acl_test_res res = ACL_TEST_FAIL;

	for (const struct acl_term *t = a->terms; t; t = t->next) {
		enum acl_test_res r = term_eval(t, ctx);

		if (r == ACL_TEST_PASS)
			return r;
		if (r == ACL_TEST_MISS)
			res = r;
	}
	return res;
}

enum acl_test_res acl_cond_eval(const struct acl_cond *c, struct smp_ctx *ctx)
{
	enum acl_test_res res = ACL_TEST_FAIL;

	for (int s = 0; s < c->nsuites && res != ACL_TEST_PASS; s++) {
		const struct cond_suite *su = &c->suites[s];
		enum acl_test_res sres = ACL_TEST_PASS;

		for (int i = 0; i < su->n; i++) {
			enum acl_test_res r = acl_eval(su->t[i].acl, ctx);

			if (su->t[i].neg && r != ACL_TEST_MISS)
				r = r == ACL_TEST_PASS ? ACL_TEST_FAIL : ACL_TEST_PASS;
			if (r == ACL_TEST_FAIL) {
				sres = r;
				break;
			}
			if (r == ACL_TEST_MISS)
				sres = r;
		}
		if (sres == ACL_TEST_PASS || sres == ACL_TEST_MISS)
			res = sres;
	}
	if (c->unless && res != ACL_TEST_MISS)
		res = res == ACL_TEST_PASS ? ACL_TEST_FAIL : ACL_TEST_PASS;
	return res;
}

unsigned int acl_cond_use(const struct acl_cond *c)
{
	return c->use;
}

/* ------------------------------------------------------------------ conditions */

void acl_cond_free(struct acl_cond *c)
{
	if (!c)
		return;
	for (int s = 0; s < c->nsuites; s++) {
		for (int i = 0; i < c->suites[s].n; i++)
			if (c->suites[s].t[i].anonymous)
				acl_free(c->suites[s].t[i].acl);
		free(c->suites[s].t);
	}
	free(c->suites);
	free(c);
}

static int cond_new_suite(struct acl_cond *c)
{
	struct cond_suite *s = realloc(c->suites, sizeof(*s) * (size_t)(c->nsuites + 1));

	if (!s)
		return -1;
	c->suites = s;
	memset(&s[c->nsuites++], 0, sizeof(*s));
	return 0;
}

static int cond_add(struct acl_cond *c, struct acl *a, int neg, int anonymous)
{
	struct cond_suite *s = &c->suites[c->nsuites - 1];
	struct cond_term *t = realloc(s->t, sizeof(*t) * (size_t)(s->n + 1));

	if (!t)
		return -1;
	s->t = t;
	t[s->n].acl = a;
	t[s->n].neg = neg;
	t[s->n].anonymous = anonymous;
	s->n++;
	c->use |= a->use;
	return 0;
}

/* An anonymous ACL from the words between braces. */
static struct acl *anon_acl(char **args, int nargs, const char *file, int line, char *err,
                            size_t errlen)
{
	struct acl *a = calloc(1, sizeof(*a));
	struct acl_term *t;
	int no_pattern_ok;

	if (!a || !(a->name = strdup("anonymous"))) {
		free(a);
		return errmsg_set(err, errlen, "out of memory"), NULL;
	}
	list_init(&a->list);
	t = term_parse(args, nargs, file, line, &no_pattern_ok, err, errlen);
	if (!t) {
		acl_free(a);
		return NULL;
	}
	a->terms = t;
	a->use = t->smp->use;
	return a;
}

/* Adds the anonymous ACL whose words start at <args>[start], up to the
 * closing brace. Returns the index of that brace, or -1. */
static int cond_add_anon(struct acl_cond *c, char **args, int nargs, int start, int neg,
                         const char *file, int line, char *err, size_t errlen)
{
	int end = start;
	struct acl *a;

	while (end < nargs && strcmp(args[end], "}") != 0)
		end++;
	if (end >= nargs)
		return errmsg_set(err, errlen, "missing closing '}' in condition");
	if (end == start)
		return errmsg_set(err, errlen, "empty anonymous ACL '{ }'");
	a = anon_acl(args + start, end - start, file, line, err, errlen);
	if (!a)
		return -1;
	if (cond_add(c, a, neg, 1) < 0) {
		acl_free(a);
		return errmsg_set(err, errlen, "out of memory");
	}
	return end;
}

struct acl_cond *acl_cond_parse(char **args, int nargs, struct acl_list *l, const char *file,
                                int line, char *err, size_t errlen)
{
	struct acl_cond *c;
	int i = 1;

	if (nargs < 1 || (strcmp(args[0], "if") != 0 && strcmp(args[0], "unless") != 0))
		return errmsg_set(err, errlen, "a condition starts with 'if' or 'unless'"), NULL;
	if (nargs < 2)
		return errmsg_set(err, errlen, "missing condition after '%s'", args[0]), NULL;
	c = calloc(1, sizeof(*c));
	if (!c || cond_new_suite(c) < 0) {
		free(c);
		return errmsg_set(err, errlen, "out of memory"), NULL;
	}
	c->unless = args[0][0] == 'u';
	for (; i < nargs; i++) {
		const char *w = args[i];
		int neg = 0;
		struct acl *a;

		if (strcmp(w, "or") == 0 || strcmp(w, "||") == 0) {
			if (!c->suites[c->nsuites - 1].n || i + 1 >= nargs) {
				errmsg_set(err, errlen, "'%s' must be placed between two terms", w);
				goto fail;
			}
			if (cond_new_suite(c) < 0)
				goto nomem;
			continue;
		}
		if (w[0] == '!') {
			neg = 1;
			w++;
			if (!*w) {
				if (++i >= nargs) {
					errmsg_set(err, errlen, "'!' must be followed by an ACL");
					goto fail;
				}
				w = args[i];
			}
		}
		if (strcmp(w, "{") == 0) {
			i = cond_add_anon(c, args, nargs, i + 1, neg, file, line, err, errlen);
			if (i < 0)
				goto fail;
			continue;
		}
		if (strcmp(w, "}") == 0) {
			errmsg_set(err, errlen, "unexpected '}' in condition");
			goto fail;
		}
		a = acl_find(l, w);
		if (!a)
			a = acl_find_predefined(w);
		if (!a) {
			errmsg_set(err, errlen, "no such ACL : '%s'", w);
			goto fail;
		}
		if (cond_add(c, a, neg, 0) < 0)
			goto nomem;
	}
	return c;
nomem:
	errmsg_set(err, errlen, "out of memory");
fail:
	acl_cond_free(c);
	return NULL;
}
