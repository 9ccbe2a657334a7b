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
 * Versions ("@<ver>", prepare/commit) are not implemented: the current
 * version is always 0; "@0" is accepted where HAProxy accepts a version.
 */
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

/* Skips an optional "@<ver>" at args[*i]. Returns 0 for the current
 * version (none given, or "@0"), 1 for another one, -1 if malformed. */
static int skip_version(char **args, int nargs, int *i)
{
	const char *w = *i < nargs ? args[*i] : "";
	char *end;
	unsigned long v;

	if (w[0] != '@')
		return 0;
	(*i)++;
	v = strtoul(w + 1, &end, 10);
	if (*end || end == w + 1)
		return -1;
	return v != 0;
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
		cli_printf(out, " curr_ver=0 next_ver=0 entry_cnt=%u\n", pat_ref_entries(ref));
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
	int i = 2, ver = skip_version(args, nargs, &i);

	if (ver < 0) {
		cli_printf(out, "Invalid version number.\n");
		return -1;
	}
	if (i >= nargs)
		return show_list(args, out);
	if (!(ref = ref_find(args, args[i], out)))
		return -1;
	if (ver == 0)
		pat_ref_foreach(ref, show_elt, out);   /* other versions are empty */
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
	int map = kind_flag(args) == PAT_REF_MAP, i = 2, ver = skip_version(args, nargs, &i);
	struct pat_ref *ref;
	char err[512];

	if (ver != 0) {
		cli_printf(out, ver < 0 ? "Invalid version number.\n" :
		           "Version number in the future, please use 'prepare %s' before.\n", args[1]);
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
	int i = 2, ver;
	struct pat_ref *ref;
	char err[512];

	if (!payload)
		return cli_add(args, nargs, out, level);
	ver = skip_version(args, nargs, &i);
	if (ver != 0) {
		cli_printf(out, ver < 0 ? "Invalid version number.\n" :
		           "Version number in the future, please use 'prepare map' before.\n");
		return -1;
	}
	if (i >= nargs) {
		cli_printf(out, "'add map' expects three parameters: map identifier, key and "
		           "value.\n");
		return -1;
	}
	if (!(ref = ref_find(args, args[i], out)))
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
		if (pat_ref_add(ref, k, v, err, sizeof(err)) < 0) {
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
	int i = 2, ver = skip_version(args, nargs, &i);
	struct pat_ref *ref;

	if (ver < 0) {
		cli_printf(out, "Invalid version number.\n");
		return -1;
	}
	if (i >= nargs) {
		cli_printf(out, "Missing %s identifier.\n", kind_word(args));
		return -1;
	}
	if (!(ref = ref_find(args, args[i], out)))
		return -1;
	if (ver == 0)
		pat_ref_clear(ref);   /* other versions are empty already */
	return 0;
}
