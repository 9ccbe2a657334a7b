/* Userlists: the `userlist` section (group, user), the fetches that check
 * HTTP Basic credentials against one (http_auth, http_auth_group), and
 * password verification.
 *
 * Configuration time (one thread): sections are parsed into struct
 * userlist, group memberships written on either side (`user x groups g`,
 * `group g users x`) are resolved after parsing, and the fetches' userlist
 * arguments, which may name a section written further down, are resolved
 * then too (ul_ref below).
 *
 * Run time (any worker thread): userlists are read-only, so lookups take
 * no lock. crypt_r() works on a struct crypt_data on the caller's stack.
 * Each thread keeps a small cache of credentials it verified: the user and
 * a SHA-256 of the password that matched its hash. Only successes are
 * cached (a failure always costs a crypt, as in HAProxy, which slows
 * guessing down), and userlists never change while running, so an entry
 * never goes stale.
 */
#include <crypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/list.h>
#include <sluice/expr/sample.h>
#include <sluice/http/userlist.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int userlist_begin(KW_ARGS);
static int kw_group(KW_ARGS);
static int kw_user(KW_ARGS);

static const struct cfg_kw userlist_kws[] = {
	{ "group", NULL, CFG_SEC_USERLIST, kw_group },
	{ "user",  NULL, CFG_SEC_USERLIST, kw_user },
	{ NULL }
};
CFG_REGISTER(userlist_kws)

static struct cfg_section_def userlist_section = {
	.name = "userlist", .sec = CFG_SEC_USERLIST, .begin = userlist_begin,
};

static int smp_fetch_http_auth(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_http_auth_grp(const struct smp_args *, struct sample *, struct smp_ctx *);
static int ul_arg_check(struct smp_args *args, char *err, size_t errlen);

#define HRQ (SMP_USE_HRQHV | SMP_USE_TXN)

static const struct smp_fetch_kw userlist_fetches[] = {
	{ "http_auth", smp_fetch_http_auth, { ARGT_STR }, 1, ul_arg_check, SMP_T_BOOL, HRQ,
	  "http_auth" },
	/* a string (the user) in expressions; in an ACL, the groups of the
	 * user, matched against the group names written as patterns */
	{ "http_auth_group", smp_fetch_http_auth_grp, { ARGT_STR }, 1, ul_arg_check, SMP_T_STR,
	  HRQ, "http_auth_group" },
	{ NULL }
};
SMP_REGISTER_FETCHES(userlist_fetches)

/* every userlist section, in the order of the file; the one being read */
static struct userlist *sections;
static struct userlist *cur;
static int cur_skip;              /* a duplicated section: its lines are ignored */

/* ---- building ---- */

struct userlist *userlist_new(const char *name, const char *file, int line)
{
	struct userlist *ul = calloc(1, sizeof(*ul));

	if (!ul)
		return NULL;
	ul->line = line;
	if ((name && !(ul->name = strdup(name))) || (file && !(ul->file = strdup(file)))) {
		userlist_free(ul);
		return NULL;
	}
	return ul;
}

void userlist_free(struct userlist *ul)
{
	if (!ul)
		return;
	for (int i = 0; i < ul->nusers; i++) {
		free(ul->users[i].name);
		free(ul->users[i].pass);
		free(ul->users[i].group_names);
	}
	free(ul->users);
	for (int i = 0; i < ul->ngroups; i++) {
		free(ul->groups[i].name);
		free(ul->groups[i].user_names);
	}
	free(ul->name);
	free(ul->file);
	free(ul);
}

static struct ul_user *find_user(const struct userlist *ul, const char *name, size_t len)
{
	for (int i = 0; i < ul->nusers; i++)
		if (strlen(ul->users[i].name) == len && memcmp(ul->users[i].name, name, len) == 0)
			return &ul->users[i];
	return NULL;
}

static int find_group(const struct userlist *ul, const char *name, size_t len)
{
	for (int i = 0; i < ul->ngroups; i++)
		if (strlen(ul->groups[i].name) == len && memcmp(ul->groups[i].name, name, len) == 0)
			return i;
	return -1;
}

int userlist_add_user(struct userlist *ul, const char *name, size_t nlen, const char *pass,
                      int insecure)
{
	struct ul_user *u;

	if (find_user(ul, name, nlen))
		return 0;
	u = realloc(ul->users, sizeof(*u) * (size_t)(ul->nusers + 1));
	if (!u)
		return -1;
	ul->users = u;
	u = &ul->users[ul->nusers];
	memset(u, 0, sizeof(*u));
	u->insecure = insecure;
	if (!(u->name = strndup(name, nlen)) || (pass && !(u->pass = strdup(pass)))) {
		free(u->name);
		return -1;
	}
	ul->nusers++;
	return 0;
}

struct userlist *userlist_find(const char *name)
{
	for (struct userlist *ul = sections; ul; ul = ul->next)
		if (strcmp(ul->name, name) == 0)
			return ul;
	return NULL;
}

void userlists_free_all(void)
{
	while (sections) {
		struct userlist *next = sections->next;

		userlist_free(sections);
		sections = next;
	}
	cur = NULL;
}

/* ---- the section ---- */

static int userlist_begin(KW_ARGS)
{
	struct userlist *ul, **tail;

	cur = NULL;
	cur_skip = 0;
	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "'userlist' expects <name> as arguments.");
	if (nargs > 2)
		return errmsg_set(err, errlen, "'userlist' cannot handle unexpected argument '%s'.",
		                  args[2]);
	if (userlist_find(args[1])) {
		cfg_warning(ctx->file, ctx->line, "ignoring duplicated userlist '%s'.", args[1]);
		cur_skip = 1;
		return 0;
	}
	ul = userlist_new(args[1], ctx->file, ctx->line);
	if (!ul)
		return errmsg_set(err, errlen, "out of memory");
	for (tail = &sections; *tail; tail = &(*tail)->next)
		;
	*tail = ul;
	cur = ul;
	return 0;
}

static int kw_group(KW_ARGS)
{
	struct ul_group *g;

	if (cur_skip)
		return 0;
	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "'group' expects <name> as arguments.");
	if (find_group(cur, args[1], strlen(args[1])) >= 0) {
		cfg_warning(ctx->file, ctx->line, "ignoring duplicated group '%s' in userlist '%s'.",
		            args[1], cur->name);
		return 0;
	}
	if (cur->ngroups == UL_MAX_GROUPS)
		return errmsg_set(err, errlen, "too many groups in userlist '%s' (%d at most).",
		                  cur->name, UL_MAX_GROUPS);
	g = &cur->groups[cur->ngroups];
	memset(g, 0, sizeof(*g));
	for (int i = 2; i < nargs; i += 2) {
		if (strcmp(args[i], "users") != 0)
			return errmsg_set(err, errlen, "'group' only supports 'users' option.");
		if (i + 1 < nargs) {
			free(g->user_names);
			if (!(g->user_names = strdup(args[i + 1])))
				return errmsg_set(err, errlen, "out of memory");
		}
	}
	if (!(g->name = strdup(args[1]))) {
		free(g->user_names);
		return errmsg_set(err, errlen, "out of memory");
	}
	cur->ngroups++;
	return 0;
}

static int kw_user(KW_ARGS)
{
	const char *pass = NULL, *groups = NULL;
	int insecure = 0;
	struct ul_user *u;

	if (cur_skip)
		return 0;
	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "'user' expects <name> as arguments.");
	if (find_user(cur, args[1], strlen(args[1]))) {
		cfg_warning(ctx->file, ctx->line, "ignoring duplicated user '%s' in userlist '%s'.",
		            args[1], cur->name);
		return 0;
	}
	for (int i = 2; i < nargs; i += 2) {
		const char *v = i + 1 < nargs ? args[i + 1] : "";

		if (strcmp(args[i], "password") == 0) {
			pass = v;
			insecure = 0;
		} else if (strcmp(args[i], "insecure-password") == 0) {
			pass = v;
			insecure = 1;
		} else if (strcmp(args[i], "groups") == 0)
			groups = v;
		else
			return errmsg_set(err, errlen, "'user' only supports 'password', "
			                  "'insecure-password' and 'groups' options.");
	}
	if (userlist_add_user(cur, args[1], strlen(args[1]), pass, insecure) < 0)
		return errmsg_set(err, errlen, "out of memory");
	u = &cur->users[cur->nusers - 1];
	if (groups && *groups && !(u->group_names = strdup(groups)))
		return errmsg_set(err, errlen, "out of memory");
	return 0;
}

/* Calls <fn> on each non-empty name of the comma-separated <list>. */
static int for_each_name(const char *list, int (*fn)(struct userlist *, void *, const char *,
                                                    size_t), struct userlist *ul, void *arg)
{
	int errors = 0;

	while (list && *list) {
		size_t n = strcspn(list, ",");

		if (n)
			errors += fn(ul, arg, list, n);
		list += n;
		if (*list == ',')
			list++;
	}
	return errors;
}

static int user_joins(struct userlist *ul, void *arg, const char *name, size_t len)
{
	struct ul_user *u = arg;
	int g = find_group(ul, name, len);

	if (g < 0) {
		cfg_alert(NULL, 0, "userlist '%s': no such group '%.*s' specified in user '%s'",
		          ul->name, (int)len, name, u->name);
		return 1;
	}
	u->groups |= 1ull << g;
	return 0;
}

static int group_takes(struct userlist *ul, void *arg, const char *name, size_t len)
{
	struct ul_group *g = arg;
	struct ul_user *u = find_user(ul, name, len);

	if (!u) {
		cfg_alert(NULL, 0, "userlist '%s': no such user '%.*s' specified in group '%s'",
		          ul->name, (int)len, name, g->name);
		return 1;
	}
	u->groups |= 1ull << (g - ul->groups);
	return 0;
}

static int userlists_resolve(void)
{
	int errors = 0;

	for (struct userlist *ul = sections; ul; ul = ul->next) {
		for (int i = 0; i < ul->nusers; i++)
			errors += for_each_name(ul->users[i].group_names, user_joins, ul,
			                        &ul->users[i]);
		for (int i = 0; i < ul->ngroups; i++)
			errors += for_each_name(ul->groups[i].user_names, group_takes, ul,
			                        &ul->groups[i]);
	}
	return errors;
}

/* ---- checking ---- */

#define UL_CACHE 16

struct ul_cache_ent {
	const struct ul_user *user;
	unsigned char digest[SHA256_DIGEST_LENGTH];
};

static __thread struct ul_cache_ent ul_cache[UL_CACHE];
static __thread unsigned int ul_cache_next;

static int hashed_ok(const struct ul_user *u, const char *pass, size_t plen)
{
	unsigned char d[SHA256_DIGEST_LENGTH];
	struct crypt_data cd;
	char clear[1024];
	const char *h;

	if (plen >= sizeof(clear))
		return 0;
	SHA256((const unsigned char *)pass, plen, d);
	for (int i = 0; i < UL_CACHE; i++)
		if (ul_cache[i].user == u && CRYPTO_memcmp(ul_cache[i].digest, d, sizeof(d)) == 0)
			return 1;
	memcpy(clear, pass, plen);
	clear[plen] = '\0';
	cd.initialized = 0;
	h = crypt_r(clear, u->pass, &cd);
	OPENSSL_cleanse(clear, plen);
	/* crypt_r() may return "*0"-style failure tokens: they never equal a
	 * stored hash that is a valid one */
	if (!h || strlen(h) != strlen(u->pass) || CRYPTO_memcmp(h, u->pass, strlen(h)) != 0)
		return 0;
	ul_cache[ul_cache_next % UL_CACHE].user = u;
	memcpy(ul_cache[ul_cache_next % UL_CACHE].digest, d, sizeof(d));
	ul_cache_next++;
	return 1;
}

const struct ul_user *userlist_check(const struct userlist *ul, const char *user, size_t ulen,
                                     const char *pass, size_t plen)
{
	const struct ul_user *u = find_user(ul, user, ulen);

	if (!u || !u->pass)
		return NULL;
	if (u->insecure) {
		if (strlen(u->pass) != plen || CRYPTO_memcmp(u->pass, pass, plen) != 0)
			return NULL;
		return u;
	}
	return hashed_ok(u, pass, plen) ? u : NULL;
}

int userlist_in_group(const struct userlist *ul, const struct ul_user *u, const char *group,
                      size_t glen)
{
	int g = find_group(ul, group, glen);

	return g >= 0 && (u->groups & (1ull << g));
}

/* ---- the fetches ---- */

/* A fetch's userlist argument, resolved once every section is read. */
struct ul_ref {
	struct list list;
	const struct userlist *ul;
	char *name;
	const char *kw;
	struct smp_origin origin;
	char *file;
};

static struct list ul_refs = LIST_HEAD_INIT(ul_refs);

static void ul_ref_free(void *p)
{
	struct ul_ref *r = p;

	if (r->list.next)
		list_del_init(&r->list);
	free(r->name);
	free(r->file);
	free(r);
}

static int ul_arg_check(struct smp_args *args, char *err, size_t errlen)
{
	struct ul_ref *r = calloc(1, sizeof(*r));

	if (!r || !(r->name = strdup(args->a[0].data.str.ptr))) {
		free(r);
		return errmsg_set(err, errlen, "out of memory");
	}
	r->kw = args->kw_priv;
	smp_cfg_origin_get(&r->origin);
	if (r->origin.file && !(r->file = strdup(r->origin.file))) {
		ul_ref_free(r);
		return errmsg_set(err, errlen, "out of memory");
	}
	list_append(&ul_refs, &r->list);
	args->priv = r;
	args->free_priv = ul_ref_free;
	return 0;
}

static int ul_refs_resolve(void)
{
	int errors = 0;

	while (!list_empty(&ul_refs)) {
		struct ul_ref *r = list_elem(ul_refs.next, struct ul_ref, list);

		list_del_init(&r->list);
		r->ul = userlist_find(r->name);
		if (!r->ul) {
			cfg_alert(r->file, r->origin.line, "unable to find userlist '%s' referenced in "
			          "arg 1 of sample fetch keyword '%s'.", r->name, r->kw);
			errors++;
		}
	}
	return errors;
}

/* The user of the request's Basic credentials if they are valid, or NULL. */
static const struct ul_user *auth_user(const struct smp_args *args, struct sample *smp,
                                       struct smp_ctx *ctx, const struct userlist **ulp)
{
	const struct ul_ref *r = args->priv;
	struct ist user, pass;

	*ulp = r ? r->ul : NULL;
	if (!*ulp || !smp_http_basic_creds(ctx, smp, &user, &pass))
		return NULL;
	return userlist_check(*ulp, user.ptr, user.len, pass.ptr, pass.len);
}

static int smp_fetch_http_auth(const struct smp_args *args, struct sample *smp,
                               struct smp_ctx *ctx)
{
	const struct userlist *ul;
	const struct ul_user *u = auth_user(args, smp, ctx, &ul);

	if (smp->flags & SMP_F_MAY_CHANGE)
		return 0;
	smp->type = SMP_T_BOOL;
	smp->data.sint = u != NULL;
	return 1;
}

/* As a sample: the user's name. In an ACL (SMP_OPT_ITERATE): each group
 * the user belongs to, so that the ACL's patterns, group names, match when
 * the user is in any of them (HAProxy's http_auth_group ACL). */
static int smp_fetch_http_auth_grp(const struct smp_args *args, struct sample *smp,
                                   struct smp_ctx *ctx)
{
	const struct userlist *ul;
	const struct ul_user *u;
	int64_t next = smp->iter.i[1];

	if (smp->iter.i[0]) {
		u = (const struct ul_user *)(uintptr_t)smp->iter.i[2];
		ul = (const struct userlist *)(uintptr_t)smp->iter.i[3];
	} else {
		u = auth_user(args, smp, ctx, &ul);
		if (!u)
			return 0;
		if (!(smp->opt & SMP_OPT_ITERATE)) {
			smp_set_const_str(smp, SMP_T_STR, u->name, strlen(u->name));
			return 1;
		}
		smp->iter.i[0] = 1;
		smp->iter.i[2] = (int64_t)(uintptr_t)u;
		smp->iter.i[3] = (int64_t)(uintptr_t)ul;
		next = 0;
	}
	while (next < ul->ngroups && !(u->groups & (1ull << next)))
		next++;
	if (next >= ul->ngroups)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, ul->groups[next].name, strlen(ul->groups[next].name));
	next++;
	while (next < ul->ngroups && !(u->groups & (1ull << next)))
		next++;
	smp->iter.i[1] = next;
	if (next < ul->ngroups)
		smp->flags |= SMP_F_NOT_LAST;
	else
		smp->flags &= ~SMP_F_NOT_LAST;
	return 1;
}

/* ---- registration ---- */

static struct cfg_post_hook userlist_post = { .fn = userlists_resolve, .order = 5 };
static struct cfg_post_hook ul_refs_post = { .fn = ul_refs_resolve, .order = 41 };

__attribute__((constructor)) static void userlist_register(void)
{
	cfg_register_section(&userlist_section);
	cfg_register_post(&userlist_post);
	cfg_register_post(&ul_refs_post);
}
