/* Actions that edit maps and ACL pattern files at run time, as the CLI's
 * "set map" / "add acl" do: set-map(<file>), del-map(<file>),
 * add-acl(<file>), del-acl(<file>) (HAProxy 2.6 manual, "http-request
 * set-map").
 *
 * The file names a pattern reference (pattern.h) that some ACL or map
 * converter loaded. References are only created at configuration time, so
 * the rules find theirs once every section was read (post-parse hook); a
 * file nobody loads makes the rule a no-op, as in HAProxy. Each edit takes
 * the reference's write lock for its own duration and allocates the new
 * entry: these actions are the exception to allocation-free exec paths.
 */
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/pattern.h>
#include <sluice/proxy/proxy.h>
#include "act_int.h"

/* referenced by the registry module: see its anchor list */
const int http_act_pat_anchor;

static int parse_pat(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static enum act_verdict exec_pat(const struct act_rule *, struct act_env *);
static void free_pat(void *);

#define PAT_SETS (ACT_F_HTTP_REQ | ACT_F_HTTP_RES)

static const struct act_kw pat_kws[] = {
	{ "set-map(", PAT_SETS, parse_pat, exec_pat, free_pat },
	{ "del-map(", PAT_SETS, parse_pat, exec_pat, free_pat },
	{ "add-acl(", PAT_SETS, parse_pat, exec_pat, free_pat },
	{ "del-acl(", PAT_SETS, parse_pat, exec_pat, free_pat },
	{ NULL }
};
ACT_REGISTER(pat_kws)

enum pat_op { PO_SET_MAP, PO_DEL_MAP, PO_ADD_ACL, PO_DEL_ACL };

struct act_pat {
	enum pat_op op;
	char *file;
	struct pat_ref *ref;         /* resolved after parsing; NULL: no-op */
	struct act_fmt key, value;
};

static void free_pat(void *arg)
{
	struct act_pat *p = arg;

	free(p->file);
	act_fmt_free(&p->key);
	act_fmt_free(&p->value);
	free(p);
}

static int parse_pat(struct act_rule *r, struct proxy *px, char **args, int nargs,
                     char *err, size_t errlen)
{
	struct act_pat *p = calloc(1, sizeof(*p));
	const char *word = args[-1], *open = strchr(word, '(');
	size_t len = strlen(word);
	int want;

	if (!p)
		return errmsg_set(err, errlen, "out of memory");
	r->arg = p;
	p->op = !strncmp(word, "set-map", 7) ? PO_SET_MAP : !strncmp(word, "del-map", 7) ?
	        PO_DEL_MAP : !strncmp(word, "add-acl", 7) ? PO_ADD_ACL : PO_DEL_ACL;
	if (word[len - 1] != ')' || open + 1 == word + len - 1)
		return errmsg_set(err, errlen, "expects a file name between parentheses");
	p->file = strndup(open + 1, (size_t)(word + len - 1 - open - 1));
	if (!p->file)
		return errmsg_set(err, errlen, "out of memory");
	want = p->op == PO_SET_MAP ? 2 : 1;
	if (nargs != want)
		return act_err_nargs(err, errlen, want, want == 2 ? "<key fmt> <value fmt>" :
		                     "<key fmt>");
	if (act_fmt_parse(&p->key, args[0], r, err, errlen) < 0)
		return -1;
	return want == 2 ? act_fmt_parse(&p->value, args[1], r, err, errlen) : 0;
}

struct key_search {
	const char *key;
	int found;
};

static int key_found(const struct pat_ref_elt *e, void *arg)
{
	struct key_search *ks = arg;

	ks->found = strcmp(e->key, ks->key) == 0;
	return ks->found;
}

/* Whether <key> is an entry of <ref> (its read lock is taken inside). */
static int has_key(struct pat_ref *ref, const char *key)
{
	struct key_search ks = { key, 0 };

	pat_ref_foreach(ref, key_found, &ks);
	return ks.found;
}

static enum act_verdict exec_pat(const struct act_rule *r, struct act_env *env)
{
	const struct act_pat *p = r->arg;
	char key[ACT_FMT_MAX], value[ACT_FMT_MAX], err[128];

	if (!p->ref)
		return ACT_V_CONTINUE;
	act_fmt_render(&p->key, env, key, sizeof(key));
	switch (p->op) {
	case PO_SET_MAP:
		act_fmt_render(&p->value, env, value, sizeof(value));
		/* HAProxy looks the key up first: change it, or add it */
		if (pat_ref_set(p->ref, key, value, err, sizeof(err)) == 0)
			pat_ref_add(p->ref, key, value, err, sizeof(err));
		break;
	case PO_ADD_ACL:
		/* no duplicates, as HAProxy (a linear search, as there) */
		if (!has_key(p->ref, key))
			pat_ref_add(p->ref, key, NULL, err, sizeof(err));
		break;
	default:
		pat_ref_delete(p->ref, key);
	}
	return ACT_V_CONTINUE;
}

/* Finds the references once every ACL and map of the configuration exists. */
static void resolve_list(struct list *rules)
{
	for (struct list *pos = rules->next; pos != rules; pos = pos->next) {
		struct act_rule *r = list_elem(pos, struct act_rule, list);
		struct act_pat *p = r->arg;

		if (r->kw->parse != parse_pat)
			continue;
		p->ref = pat_ref_lookup(p->file);
		if (!p->ref)
			cfg_warning(r->file, r->line, "'%s(%s)': no ACL or map uses this file: the "
			            "rule does nothing.", r->kw->kw[0] == 's' ? "set-map" :
			            r->kw->kw[0] == 'a' ? "add-acl" : r->kw->kw[4] == 'm' ?
			            "del-map" : "del-acl", p->file);
	}
}

static int resolve_refs(void)
{
	for (struct list *pos = proxies.next; pos != &proxies; pos = pos->next) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		resolve_list(&px->http_req_rules);
		resolve_list(&px->http_res_rules);
	}
	return 0;
}

static struct cfg_post_hook pat_post_hook = { resolve_refs, NULL, 50 };

__attribute__((constructor)) static void pat_post_register(void)
{
	cfg_register_post(&pat_post_hook);
}
