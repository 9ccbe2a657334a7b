/* CLI commands on pattern references: the contents of ACLs and maps
 * (management manual 9.3: show/get/add/del/set/clear map|acl).
 *
 * <map> or <acl> is a file name or "#<id>", the unique id "show map" and
 * "show acl" list. Map commands see the references holding values (map
 * files, also those an "acl -M" reads); ACL commands see those an ACL uses
 * (pattern files, inline patterns, and map files an "acl -M" reads). An
 * entry may be named "#<ref>", the address "show" prints in front of it.
 *
 * Locking: the list of references and the indexes of each are built at
 * configuration time and only read here, without a lock. Every entry
 * access goes through pattern.c, which takes the reference's rwlock (read
 * for show and get, write for an edit); an edit is applied to all the
 * indexes of its reference at once, so it is visible to every ACL and map
 * converter using it when the command returns. "show" holds the read lock
 * for the whole dump of one reference: its output grows with the map, not
 * with traffic.
 *
 * Versions (HAProxy's atomic replacement): `prepare map|acl` opens a new
 * version number; `add`, `show` and `clear` with "@<ver>" work on that
 * version's entries, which only this module holds (a list per reference,
 * unseen by lookups, under ver_lock: CLI sessions run on several
 * threads); `commit` replaces the live entries with them in one edit
 * (pat_ref_replace(): lookups see the old set or the new one) and drops
 * the versions up to it. Entries of a pending version are checked against
 * every index of the reference when added, as HAProxy parses them then.
 * The current version is 0 until the first commit.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/expr/pattern.h>
#include <sluice/expr/sample.h>
#include <sluice/mgmt/cli.h>

static int cli_show(char **args, int nargs, struct cli_out *out, int level);
static int cli_get(char **args, int nargs, struct cli_out *out, int level);
static int cli_add(char **args, int nargs, struct cli_out *out, int level);
static int cli_add_map(char **args, int nargs, const char *payload, struct cli_out *out,
                       int level);
static int cli_del(char **args, int nargs, struct cli_out *out, int level);
static int cli_set(char **args, int nargs, struct cli_out *out, int level);
static int cli_clear(char **args, int nargs, struct cli_out *out, int level);
static int cli_prepare(char **args, int nargs, struct cli_out *out, int level);
static int cli_commit(char **args, int nargs, struct cli_out *out, int level);

/* Reading is for everyone, as in HAProxy; editing needs "operator" (the
 * default level of a stats socket), where HAProxy 2.6 lets "user" edit. */
static const struct cli_kw map_kws[] = {
	{ { "show", "map" }, CLI_LEVEL_USER, cli_show,
	  "show map [<map>]                        : list the maps, or dump one's entries" },
	{ { "show", "acl" }, CLI_LEVEL_USER, cli_show,
	  "show acl [<acl>]                        : list the ACL patterns, or dump one's entries" },
	{ { "get", "map" }, CLI_LEVEL_USER, cli_get,
	  "get map <map> <value>                   : look a sample up in every index of a map" },
	{ { "get", "acl" }, CLI_LEVEL_USER, cli_get,
	  "get acl <acl> <value>                   : match a sample against every index of an ACL" },
	{ { "add", "map" }, CLI_LEVEL_OPERATOR, NULL,
	  "add map <map> <key> <value>             : add a map entry (or '<key> <value>' lines as a payload)",
	  cli_add_map },
	{ { "add", "acl" }, CLI_LEVEL_OPERATOR, cli_add,
	  "add acl <acl> <pattern>                 : add an ACL pattern" },
	{ { "del", "map" }, CLI_LEVEL_OPERATOR, cli_del,
	  "del map <map> <key>|#<ref>              : delete map entries by key, or one by ref" },
	{ { "del", "acl" }, CLI_LEVEL_OPERATOR, cli_del,
	  "del acl <acl> <key>|#<ref>              : delete ACL patterns by key, or one by ref" },
	{ { "set", "map" }, CLI_LEVEL_OPERATOR, cli_set,
	  "set map <map> <key>|#<ref> <value>      : change the value of map entries" },
	{ { "clear", "map" }, CLI_LEVEL_OPERATOR, cli_clear,
	  "clear map <map>                         : delete every entry of a map" },
	{ { "clear", "acl" }, CLI_LEVEL_OPERATOR, cli_clear,
	  "clear acl <acl>                         : delete every pattern of an ACL" },
	{ { "prepare", "map" }, CLI_LEVEL_OPERATOR, cli_prepare,
	  "prepare map <map>                       : prepare a new version for atomic map replacement" },
	{ { "prepare", "acl" }, CLI_LEVEL_OPERATOR, cli_prepare,
	  "prepare acl <acl>                       : prepare a new version for atomic ACL replacement" },
	{ { "commit", "map" }, CLI_LEVEL_OPERATOR, cli_commit,
	  "commit map @<ver> <map>                 : commit the map at this version" },
	{ { "commit", "acl" }, CLI_LEVEL_OPERATOR, cli_commit,
	  "commit acl @<ver> <acl>                 : commit the ACL at this version" },
	{ { NULL } }
};
CLI_REGISTER(map_kws)

/* What args[1] ("map" or "acl") designates: the reference flag, and the
 * word HAProxy's messages use. */
static unsigned int kind_flag(char **args)
{
	return strcmp(args[1], "map") == 0 ? PAT_REF_MAP : PAT_REF_ACL;
}

static const char *kind_word(char **args)
{
	return kind_flag(args) == PAT_REF_MAP ? "map" : "ACL";
}

/* The reference named <name> ("#<id>" or a file) of the right kind, or
 * NULL after printing HAProxy's message. */
static struct pat_ref *ref_find(char **args, const char *name, struct cli_out *out)
{
	struct pat_ref *ref = pat_ref_lookup(name);

	if (ref && (ref->flags & kind_flag(args)))
		return ref;
	cli_printf(out, "Unknown %s identifier. Please use #<id> or <file>.\n", kind_word(args));
	return NULL;
}

/* ---- versions ---- */

struct ver_entry {
	struct ver_entry *next;
	unsigned int ver;
	char *key, *value;
};

/* The versions of one reference (ver_lock) */
struct ref_vers {
	struct ref_vers *next;
	const struct pat_ref *ref;
	unsigned int curr, next_ver;
	struct ver_entry *head, **tail;   /* pending entries, in order of addition */
};

static pthread_mutex_t ver_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ref_vers *all_vers;

/* The versions of <ref>, created if <create>; NULL if none (or no memory).
 * Under ver_lock. */
static struct ref_vers *vers_of(const struct pat_ref *ref, int create)
{
	struct ref_vers *rv;

	for (rv = all_vers; rv; rv = rv->next)
		if (rv->ref == ref)
			return rv;
	if (!create || !(rv = calloc(1, sizeof(*rv))))
		return NULL;
	rv->ref = ref;
	rv->tail = &rv->head;
	rv->next = all_vers;
	all_vers = rv;
	return rv;
}

static void vers_drop(struct ref_vers *rv, unsigned int upto, int only)
{
	struct ver_entry **pp = &rv->head, *e;

	while ((e = *pp)) {
		if (only ? e->ver == upto : e->ver <= upto) {
			*pp = e->next;
			free(e->key);
			free(e->value);
			free(e);
		} else {
			pp = &e->next;
		}
	}
	for (rv->tail = &rv->head; *rv->tail; rv->tail = &(*rv->tail)->next)
		;
}

__attribute__((destructor)) static void vers_free_all(void)
{
	while (all_vers) {
		struct ref_vers *rv = all_vers;

		all_vers = rv->next;
		vers_drop(rv, ~0u, 0);
		free(rv);
	}
}

/* The current and next version numbers of <ref>. */
static void vers_numbers(const struct pat_ref *ref, unsigned int *curr, unsigned int *next)
{
	struct ref_vers *rv;

	pthread_mutex_lock(&ver_lock);
	rv = vers_of(ref, 0);
	*curr = rv ? rv->curr : 0;
	*next = rv ? rv->next_ver : 0;
	pthread_mutex_unlock(&ver_lock);
}

/* Reads an optional "@<ver>" at args[*i], moving past it. Returns 0 and
 * *ver (*has set if one was given), or -1 if malformed. */
static int parse_version(char **args, int nargs, int *i, unsigned int *ver, int *has)
{
	const char *w = *i < nargs ? args[*i] : "";
	char *end;
	unsigned long v;

	*has = 0;
	*ver = 0;
	if (w[0] != '@')
		return 0;
	(*i)++;
	v = strtoul(w + 1, &end, 10);
	if (*end || end == w + 1 || v > 0xffffffffUL)
		return -1;
	*ver = (unsigned int)v;
	*has = 1;
	return 0;
}

/* Whether an edit with @<ver> goes to the live entries (1), to a pending
 * version (0), or is refused (-1, message printed). */
static int version_target(char **args, const struct pat_ref *ref, int has, unsigned int ver,
                          struct cli_out *out)
{
	unsigned int curr, next;

	if (!has)
		return 1;
	vers_numbers(ref, &curr, &next);
	if (ver == curr)
		return 1;
	if (ver > next) {
		cli_printf(out, "Version number in the future, please use 'prepare %s' before.\n",
		           args[1]);
		return -1;
	}
	if (ver < curr) {
		cli_printf(out, "Version number out of range.\n");
		return -1;
	}
	return 0;
}

static int check_one_expr(struct pat_expr *x, void *arg)
{
	const char **kv = arg;

	return pat_check(x->match, x->flags, x->val_type, kv[0], kv[1], (char *)kv[2],
	                 512) < 0;
}

/* Adds an entry to pending version <ver> of <ref> after checking it
 * against every index. Returns 0, or -1 with a message in <err> (512). */
static int version_add(struct pat_ref *ref, unsigned int ver, const char *key,
                       const char *value, char *err)
{
	const char *kv[3] = { key, value, err };
	struct ref_vers *rv;
	struct ver_entry *e;

	err[0] = '\0';
	pat_ref_foreach_expr(ref, check_one_expr, kv);
	if (err[0])
		return -1;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->key = strdup(key)) || (value && !(e->value = strdup(value)))) {
		if (e)
			free(e->key);
		free(e);
		snprintf(err, 512, "out of memory");
		return -1;
	}
	e->ver = ver;
	pthread_mutex_lock(&ver_lock);
	rv = vers_of(ref, 1);
	if (!rv) {
		pthread_mutex_unlock(&ver_lock);
		free(e->key);
		free(e->value);
		free(e);
		snprintf(err, 512, "out of memory");
		return -1;
	}
	*rv->tail = e;
	rv->tail = &e->next;
	pthread_mutex_unlock(&ver_lock);
	return 0;
}

static int cli_prepare(char **args, int nargs, struct cli_out *out, int level)
{
	struct pat_ref *ref;
	struct ref_vers *rv;
	unsigned int v;

	if (nargs < 3 || !(ref = ref_find(args, args[2], out))) {
		if (nargs < 3)
			cli_printf(out, "Unknown %s identifier. Please use #<id> or <file>.\n",
			           kind_word(args));
		return -1;
	}
	pthread_mutex_lock(&ver_lock);
	rv = vers_of(ref, 1);
	v = rv ? ++rv->next_ver : 0;
	pthread_mutex_unlock(&ver_lock);
	if (!rv) {
		cli_printf(out, "Out of memory.\n");
		return -1;
	}
	cli_printf(out, "New version created: %u\n", v);
	return 0;
}

static int cli_commit(char **args, int nargs, struct cli_out *out, int level)
{
	unsigned int ver, n = 0;
	struct pat_ref *ref;
	struct ref_vers *rv;
	struct ver_entry *e;
	const char **keys = NULL, **values = NULL;
	char err[512];
	int i = 2, has, ret = 0;

	if (parse_version(args, nargs, &i, &ver, &has) < 0 || (has && i >= nargs)) {
		cli_printf(out, has ? "Missing %s identifier.\n" : "Version number out of range.\n",
		           kind_word(args));
		return -1;
	}
	if (!has) {
		cli_printf(out, "Missing version number.\n");
		return -1;
	}
	if (!(ref = ref_find(args, args[i], out)))
		return -1;
	/* the whole commit under ver_lock: two commits of one reference
	 * cannot interleave (the reference's own lock is taken inside) */
	pthread_mutex_lock(&ver_lock);
	rv = vers_of(ref, 0);
	if (!rv || ver <= rv->curr || ver > rv->next_ver) {
		pthread_mutex_unlock(&ver_lock);
		cli_printf(out, "Version number out of range.\n");
		return -1;
	}
	for (e = rv->head; e; e = e->next)
		n += e->ver == ver;
	keys = calloc(n + 1, sizeof(*keys));
	values = calloc(n + 1, sizeof(*values));
	if (!keys || !values) {
		pthread_mutex_unlock(&ver_lock);
		free(keys);
		free(values);
		cli_printf(out, "Out of memory.\n");
		return -1;
	}
	n = 0;
	for (e = rv->head; e; e = e->next)
		if (e->ver == ver) {
			keys[n] = e->key;
			values[n++] = e->value;
		}
	if (pat_ref_replace(ref, n, keys, values, err, sizeof(err)) < 0) {
		cli_printf(out, "%s.\n", err);
		ret = -1;
	} else {
		rv->curr = ver;
		vers_drop(rv, ver, 0);
	}
	pthread_mutex_unlock(&ver_lock);
	free(keys);
	free(values);
	return ret;
}

/* "#<ref>": the entry address printed by "show". Returns 1 and sets *id,
 * or 0 when <word> is a key. A "#" word that is no address names no
 * entry (*id NULL): HAProxy never reads such a word as a key either. */
static int parse_elt_ref(const char *word, const void **id)
{
	char *end;
	unsigned long long v;

	if (word[0] != '#')
		return 0;
	v = strtoull(word + 1, &end, 16);
	*id = (*end || end == word + 1) ? NULL : (const void *)(uintptr_t)v;
	return 1;
}

/* ---- show ---- */

/* The references of one kind, gathered to be listed by id as HAProxy
 * lists them. */
struct ref_set {
	unsigned int kind;
	struct pat_ref **refs;
	size_t n, cap;
	int failed;
};

static int gather_ref(struct pat_ref *ref, void *arg)
{
	struct ref_set *rs = arg;

	if (!(ref->flags & rs->kind))
		return 0;
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 32;
		struct pat_ref **r = realloc(rs->refs, cap * sizeof(*r));

		if (!r) {
			rs->failed = 1;
			return 1;
		}
		rs->refs = r;
		rs->cap = cap;
	}
	rs->refs[rs->n++] = ref;
	return 0;
}

static int cmp_ref_id(const void *a, const void *b)
{
	int x = (*(struct pat_ref *const *)a)->unique_id;
	int y = (*(struct pat_ref *const *)b)->unique_id;

	return (x > y) - (x < y);
}

static int show_list(char **args, struct cli_out *out)
{
	struct ref_set rs = { .kind = kind_flag(args) };

	pat_refs_foreach(gather_ref, &rs);
	if (rs.failed) {
		free(rs.refs);
		cli_printf(out, "Out of memory.\n");
		return -1;
	}
	if (rs.n)
		qsort(rs.refs, rs.n, sizeof(*rs.refs), cmp_ref_id);
	cli_printf(out, "# id (file) description\n");
	for (size_t i = 0; i < rs.n; i++) {
		struct pat_ref *ref = rs.refs[i];

		if (ref->flags & PAT_REF_FILE)
			cli_printf(out, "%d (%s) pattern loaded from file '%s'.", ref->unique_id,
			           ref->name, ref->name);
		else
			cli_printf(out, "%d () %s.", ref->unique_id, ref->display);
		{
			unsigned int curr, next;

			vers_numbers(ref, &curr, &next);
			cli_printf(out, " curr_ver=%u next_ver=%u entry_cnt=%u\n", curr, next,
			           pat_ref_entries(ref));
		}
	}
	free(rs.refs);
	return 0;
}

static int show_elt(const struct pat_ref_elt *e, void *arg)
{
	struct cli_out *out = arg;

	if (e->value)
		cli_printf(out, "%p %s %s\n", (const void *)e, e->key, e->value);
	else
		cli_printf(out, "%p %s\n", (const void *)e, e->key);
	return out->failed;
}

static int cli_show(char **args, int nargs, struct cli_out *out, int level)
{
	struct pat_ref *ref;
	unsigned int ver, curr, next;
	int i = 2, has;

	if (parse_version(args, nargs, &i, &ver, &has) < 0) {
		cli_printf(out, "Invalid version number.\n");
		return -1;
	}
	if (i >= nargs)
		return show_list(args, out);
	if (!(ref = ref_find(args, args[i], out)))
		return -1;
	vers_numbers(ref, &curr, &next);
	if (!has || ver == curr) {
		pat_ref_foreach(ref, show_elt, out);
	} else {
		/* a pending version: its entries, named by their address as
		 * the live ones are (the output is bounded by what the CLI
		 * added to it) */
		struct ref_vers *rv;

		pthread_mutex_lock(&ver_lock);
		rv = vers_of(ref, 0);
		for (struct ver_entry *e = rv ? rv->head : NULL; e; e = e->next) {
			if (e->ver != ver)
				continue;
			if (e->value)
				cli_printf(out, "%p %s %s\n", (void *)e, e->key, e->value);
			else
				cli_printf(out, "%p %s\n", (void *)e, e->key);
		}
		pthread_mutex_unlock(&ver_lock);
	}
	return 0;
}

/* ---- get ---- */

struct get_ctx {
	struct cli_out *out;
	const struct sample *smp;
	int map;
	const struct pat_expr *x;
};

/* Called under the reference's read lock: prints, copies nothing. */
static void get_found(const struct pat_ref_elt *elt, const struct sample *value, void *arg)
{
	struct get_ctx *gc = arg;
	char text[1024];

	cli_printf(gc->out, "%s, idx=%s, %s=\"%s\"", gc->map ? "found=yes" : "match=yes",
	           pat_expr_indexed(gc->x) ? "tree" : "list", gc->map ? "key" : "pattern",
	           elt->key);
	if (!gc->map)
		return;
	if (!value) {
		cli_printf(gc->out, ", value=none");
		return;
	}
	smp_to_text(value, text, sizeof(text));
	cli_printf(gc->out, ", value=\"%s\", type=\"%s\"", text, smp_type_name(value->type));
}

static int get_one_expr(struct pat_expr *x, void *arg)
{
	struct get_ctx *gc = arg;

	gc->x = x;
	cli_printf(gc->out, "type=%s, case=%s, ", pat_match_name(x->match),
	           (x->flags & PAT_F_ICASE) ? "insensitive" : "sensitive");
	if (!pat_expr_lookup(x, gc->smp, get_found, gc))
		cli_printf(gc->out, "%s", gc->map ? "found=no" : "match=no");
	else if (x->match == PAT_MATCH_FOUND || x->match == PAT_MATCH_BOOL)
		cli_printf(gc->out, "%s", gc->map ? "found=yes" : "match=yes");
	cli_printf(gc->out, "\n");
	return 0;
}

static int cli_get(char **args, int nargs, struct cli_out *out, int level)
{
	struct get_ctx gc = { out, NULL, kind_flag(args) == PAT_REF_MAP, NULL };
	struct sample smp;
	struct pat_ref *ref;

	if (nargs < 4) {
		cli_printf(out, "Missing %s identifier and/or key.\n", kind_word(args));
		return -1;
	}
	if (!(ref = ref_find(args, args[2], out)))
		return -1;
	/* the value is a string, cast by each index to what it matches */
	memset(&smp, 0, sizeof(smp));
	smp_set_const_str(&smp, SMP_T_STR, args[3], strlen(args[3]));
	gc.smp = &smp;
	pat_ref_foreach_expr(ref, get_one_expr, &gc);
	return 0;
}

/* ---- edits ---- */

static int cli_add(char **args, int nargs, struct cli_out *out, int level)
{
	int map = kind_flag(args) == PAT_REF_MAP, i = 2, has, live;
	struct pat_ref *ref;
	unsigned int ver;
	char err[512];

	if (parse_version(args, nargs, &i, &ver, &has) < 0) {
		cli_printf(out, "Invalid version number.\n");
		return -1;
	}
	if (nargs - i < (map ? 3 : 2)) {
		cli_printf(out, map ? "'add map' expects three parameters: map identifier, key and "
		           "value.\n" : "'add acl' expects two parameters: ACL identifier and "
		           "pattern.\n");
		return -1;
	}
	if (!(ref = ref_find(args, args[i], out)))
		return -1;
	if (!map && (ref->flags & PAT_REF_MAP)) {
		cli_printf(out, "This ACL is shared with a map containing samples. You must use the "
		           "command 'add map' to add values.\n");
		return -1;
	}
	if ((live = version_target(args, ref, has, ver, out)) < 0)
		return -1;
	if (!live) {
		if (version_add(ref, ver, args[i + 1], map ? args[i + 2] : NULL, err) < 0) {
			cli_printf(out, "%s.\n", err);
			return -1;
		}
		return 0;
	}
	if (pat_ref_add(ref, args[i + 1], map ? args[i + 2] : NULL, err, sizeof(err)) < 0) {
		cli_printf(out, "%s.\n", err);
		return -1;
	}
	return 0;
}

/* "add map <map> <<" and one "<key> <value>" per payload line (the value
 * is the rest of the line), as HAProxy 2.6: the lines are added in order
 * and the first bad one stops the command, keeping those before it. With a
 * payload, key and value arguments are ignored. */
static int cli_add_map(char **args, int nargs, const char *payload, struct cli_out *out,
                       int level)
{
	int i = 2, has, live;
	struct pat_ref *ref;
	unsigned int ver;
	char err[512];

	if (!payload)
		return cli_add(args, nargs, out, level);
	if (parse_version(args, nargs, &i, &ver, &has) < 0) {
		cli_printf(out, "Invalid version number.\n");
		return -1;
	}
	if (i >= nargs) {
		cli_printf(out, "'add map' expects three parameters: map identifier, key and "
		           "value.\n");
		return -1;
	}
	if (!(ref = ref_find(args, args[i], out)))
		return -1;
	if ((live = version_target(args, ref, has, ver, out)) < 0)
		return -1;
	while (*payload) {
		const char *eol = strchr(payload, '\n'), *k, *v;
		size_t len = eol ? (size_t)(eol - payload) : strlen(payload);
		char *line = strndup(payload, len), *ke;

		if (!line)
			return -1;
		payload += len + (eol ? 1 : 0);
		for (k = line; *k == ' ' || *k == '\t'; k++)
			;
		if (!*k) {
			free(line);
			continue;
		}
		for (ke = (char *)k; *ke && *ke != ' ' && *ke != '\t'; ke++)
			;
		for (v = ke; *v == ' ' || *v == '\t'; v++)
			;
		if (!*v) {
			*ke = '\0';
			cli_printf(out, "Missing value for key '%s'.\n", k);
			free(line);
			return -1;
		}
		*ke = '\0';
		if (live ? pat_ref_add(ref, k, v, err, sizeof(err)) < 0 :
		           version_add(ref, ver, k, v, err) < 0) {
			cli_printf(out, "%s.\n", err);
			free(line);
			return -1;
		}
		free(line);
	}
	return 0;
}

static int cli_del(char **args, int nargs, struct cli_out *out, int level)
{
	struct pat_ref *ref;
	const void *id;
	int n;

	if (nargs < 4) {
		cli_printf(out, "This command expects two parameters: %s identifier and key.\n",
		           kind_word(args));
		return -1;
	}
	if (!(ref = ref_find(args, args[2], out)))
		return -1;
	if (parse_elt_ref(args[3], &id))
		n = id ? pat_ref_delete_elt(ref, id) : 0;
	else
		n = pat_ref_delete(ref, args[3]);
	if (!n) {
		cli_printf(out, "Key not found.\n");
		return -1;
	}
	return 0;
}

static int cli_set(char **args, int nargs, struct cli_out *out, int level)
{
	struct pat_ref *ref;
	const void *id;
	char err[512];
	int n, by_ref;

	if (nargs < 5) {
		cli_printf(out, "'set map' expects three parameters: map identifier, key and "
		           "value.\n");
		return -1;
	}
	if (!(ref = ref_find(args, args[2], out)))
		return -1;
	by_ref = parse_elt_ref(args[3], &id);
	if (by_ref)
		n = id ? pat_ref_set_elt(ref, id, args[4], err, sizeof(err)) : 0;
	else
		n = pat_ref_set(ref, args[3], args[4], err, sizeof(err));
	if (n < 0) {
		cli_printf(out, "%s.\n", err);
		return -1;
	}
	if (!n) {
		cli_printf(out, by_ref ? "key or pattern not found.\n" : "entry not found.\n");
		return -1;
	}
	return 0;
}

static int cli_clear(char **args, int nargs, struct cli_out *out, int level)
{
	int i = 2, has;
	unsigned int ver, curr, next;
	struct pat_ref *ref;

	if (parse_version(args, nargs, &i, &ver, &has) < 0) {
		cli_printf(out, "Invalid version number.\n");
		return -1;
	}
	if (i >= nargs) {
		cli_printf(out, "Missing %s identifier.\n", kind_word(args));
		return -1;
	}
	if (!(ref = ref_find(args, args[i], out)))
		return -1;
	vers_numbers(ref, &curr, &next);
	if (!has || ver == curr) {
		pat_ref_clear(ref);
	} else {
		/* a pending version (a future one is empty: nothing to do) */
		struct ref_vers *rv;

		pthread_mutex_lock(&ver_lock);
		rv = vers_of(ref, 0);
		if (rv)
			vers_drop(rv, ver, 1);
		pthread_mutex_unlock(&ver_lock);
	}
	return 0;
}
