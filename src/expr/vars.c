/* Variables: stores, the var() fetch, the set-var and unset-var converters.
 *
 * Locking: interned names are written at configuration time (one thread)
 * and, for names a Lua script makes up while running, by
 * vars_intern_runtime() under names_lock. They live in fixed chunks that
 * never move, and the count is published (release) after the entry is
 * written, so readers take no lock: an id below the count they read
 * names a complete entry. The proc store is shared by all threads
 * and protected by vars_proc_rwlock (values are copied out under the read
 * lock). Every other store belongs to the thread owning its session or
 * stream and takes no lock (see vars.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/vars.h>

/* the global section's set-var keywords (vars_cfg.c) register from a
 * constructor: referencing them links them wherever variables are */
extern const int expr_vars_cfg_anchor;
__attribute__((used)) static const int *const vars_cfg_anchor = &expr_vars_cfg_anchor;

const int expr_vars_anchor;

static int smp_fetch_var(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx);
static int smp_conv_set_var(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx);
static int smp_conv_unset_var(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx);
static int check_set_var(struct smp_args *args, char *err, size_t errlen);

static const struct smp_fetch_kw vars_fetches[] = {
	{ "var", smp_fetch_var, { ARGT_VAR, ARGT_STR }, 1, NULL, SMP_T_ANY, SMP_USE_INTRN },
	{ NULL }
};
SMP_REGISTER_FETCHES(vars_fetches)

static const struct smp_conv_kw vars_convs[] = {
	{ "set-var", smp_conv_set_var, { ARGT_VAR, ARGT_STR, ARGT_STR, ARGT_STR, ARGT_STR }, 1,
	  check_set_var, SMP_T_ANY, SMP_T_ANY },
	{ "unset-var", smp_conv_unset_var, { ARGT_VAR }, 1, NULL, SMP_T_ANY, SMP_T_ANY },
	{ NULL }
};
SMP_REGISTER_CONVS(vars_convs)

struct var {
	struct var *next;
	uint32_t id;
	int set;
	struct sample smp;
	char *buf;                 /* owned copy of a string/binary value */
	size_t bufsize;
};

struct var_store vars_proc = { VAR_SCOPE_PROC, NULL, 0 };
static pthread_rwlock_t vars_proc_rwlock = PTHREAD_RWLOCK_INITIALIZER;

/* interned names, by id: chunks of NAMES_CHUNK, allocated once each */
#define NAMES_CHUNK     256
#define NAMES_CHUNKS    64
#define NAMES_RUNTIME_MAX 1024   /* names vars_intern_runtime() may add */
static char **name_chunks[NAMES_CHUNKS];
static _Atomic uint32_t nb_names;
static uint32_t nb_runtime_names;   /* under names_lock */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *name_at(uint32_t id)
{
	return name_chunks[id / NAMES_CHUNK][id % NAMES_CHUNK];
}

static uint32_t names_count(void)
{
	return atomic_load_explicit(&nb_names, memory_order_acquire);
}

static const char *const scope_names[VAR_SCOPES] = {
	[VAR_SCOPE_PROC] = "proc", [VAR_SCOPE_SESS] = "sess", [VAR_SCOPE_TXN] = "txn",
	[VAR_SCOPE_REQ] = "req", [VAR_SCOPE_RES] = "res",
};

const char *vars_scope_name(enum var_scope s)
{
	return (unsigned int)s < VAR_SCOPES ? scope_names[s] : "?";
}

const char *vars_name(uint32_t id)
{
	return id < names_count() ? name_at(id) : "?";
}

void vars_proc_lock(int write)
{
	if (write)
		pthread_rwlock_wrlock(&vars_proc_rwlock);
	else
		pthread_rwlock_rdlock(&vars_proc_rwlock);
}

void vars_proc_unlock(void)
{
	pthread_rwlock_unlock(&vars_proc_rwlock);
}

void vars_init(struct var_store *s, enum var_scope scope)
{
	s->scope = scope;
	s->head = NULL;
	s->bytes = 0;
}

void vars_prune(struct var_store *s)
{
	struct var *v, *next;

	for (v = s->head; v; v = next) {
		next = v->next;
		free(v->buf);
		free(v);
	}
	s->head = NULL;
	s->bytes = 0;
}

static int lookup(const char *name, size_t len, uint32_t *id)
{
	uint32_t n = names_count();

	for (uint32_t i = 0; i < n; i++) {
		const char *s = name_at(i);

		if (strlen(s) == len && memcmp(s, name, len) == 0) {
			*id = i;
			return 0;
		}
	}
	return -1;
}

/* Adds a name. Writers take names_lock (configuration time has one
 * writer, run time may have several: expressions compiled by scripts). */
static int intern(const char *name, size_t len, uint32_t *id)
{
	uint32_t n;
	char *copy;
	int rc = -1;

	if (lookup(name, len, id) == 0)
		return 0;
	pthread_mutex_lock(&names_lock);
	n = names_count();
	if (lookup(name, len, id) == 0) {
		rc = 0;
	} else if (n < NAMES_CHUNK * NAMES_CHUNKS &&
	           (name_chunks[n / NAMES_CHUNK] ||
	            (name_chunks[n / NAMES_CHUNK] = calloc(NAMES_CHUNK, sizeof(char *)))) &&
	           (copy = strndup(name, len))) {
		name_chunks[n / NAMES_CHUNK][n % NAMES_CHUNK] = copy;
		atomic_store_explicit(&nb_names, n + 1, memory_order_release);
		*id = n;
		rc = 0;
	}
	pthread_mutex_unlock(&names_lock);
	return rc;
}

int vars_parse_ref(const char *text, size_t len, struct var_ref *ref,
                   char *err, size_t errlen)
{
	const char *dot = memchr(text, '.', len);
	size_t slen, nlen;
	int scope = -1;

	if (!dot)
		return errmsg_set(err, errlen, "invalid variable name '%.*s': expects "
		                  "'scope.name' with scope proc, sess, txn, req or res",
		                  (int)len, text);
	slen = (size_t)(dot - text);
	for (int i = 0; i < VAR_SCOPES; i++)
		if (strlen(scope_names[i]) == slen && memcmp(scope_names[i], text, slen) == 0)
			scope = i;
	if (scope < 0)
		return errmsg_set(err, errlen, "invalid variable scope '%.*s' in '%.*s': "
		                  "expects proc, sess, txn, req or res", (int)slen, text,
		                  (int)len, text);
	nlen = len - slen - 1;
	if (!nlen)
		return errmsg_set(err, errlen, "empty variable name in '%.*s'", (int)len, text);
	for (size_t i = 0; i < nlen; i++) {
		char c = dot[1 + i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_'))
			return errmsg_set(err, errlen, "invalid character '%c' in variable name "
			                  "'%.*s' (a-z A-Z 0-9 . _ only)", c, (int)len, text);
	}
	ref->scope = (enum var_scope)scope;
	if (intern(dot + 1, nlen, &ref->id) < 0)
		return errmsg_set(err, errlen, "out of memory");
	return 0;
}

int vars_find_ref(const char *text, struct var_ref *ref)
{
	const char *dot = strchr(text, '.');
	int scope = -1;

	if (!dot || !dot[1])
		return -1;
	for (int i = 0; i < VAR_SCOPES; i++)
		if (strlen(scope_names[i]) == (size_t)(dot - text) &&
		    memcmp(scope_names[i], text, (size_t)(dot - text)) == 0)
			scope = i;
	if (scope < 0)
		return -1;
	if (lookup(dot + 1, strlen(dot + 1), &ref->id) < 0)
		return -1;
	ref->scope = scope;
	return 0;
}

int vars_intern_runtime(const char *text, struct var_ref *ref)
{
	struct var_ref tmp;
	int rc;

	if (vars_find_ref(text, ref) == 0)
		return 0;
	uint32_t before;

	pthread_mutex_lock(&names_lock);
	rc = nb_runtime_names >= NAMES_RUNTIME_MAX ? -1 : 0;
	pthread_mutex_unlock(&names_lock);
	if (rc < 0)
		return -1;
	before = names_count();
	rc = vars_parse_ref(text, strlen(text), &tmp, NULL, 0);
	if (rc < 0)
		return -1;
	if (names_count() != before) {
		/* roughly counted: two threads may add at once */
		pthread_mutex_lock(&names_lock);
		nb_runtime_names++;
		pthread_mutex_unlock(&names_lock);
	}
	*ref = tmp;
	return 0;
}

unsigned int vars_cond_parse(const char *w)
{
	static const struct { const char *name; unsigned int bit; } conds[] = {
		{ "ifexists", VAR_C_IFEXISTS }, { "ifnotexists", VAR_C_IFNOTEXISTS },
		{ "ifempty", VAR_C_IFEMPTY }, { "ifnotempty", VAR_C_IFNOTEMPTY },
		{ "ifset", VAR_C_IFSET }, { "ifnotset", VAR_C_IFNOTSET },
		{ "ifgt", VAR_C_IFGT }, { "iflt", VAR_C_IFLT },
	};

	for (size_t i = 0; i < sizeof(conds) / sizeof(conds[0]); i++)
		if (strcmp(w, conds[i].name) == 0)
			return conds[i].bit;
	return 0;
}

static struct var_store *store_of(struct smp_ctx *ctx, enum var_scope scope)
{
	if (scope == VAR_SCOPE_PROC)
		return &vars_proc;
	if ((unsigned int)scope >= VAR_SCOPES || !ctx)
		return NULL;
	return ctx->vars[scope];
}

static struct var *find_var(struct var_store *s, uint32_t id)
{
	for (struct var *v = s->head; v; v = v->next)
		if (v->id == id)
			return v;
	return NULL;
}

static int is_str_type(enum smp_type t)
{
	return t == SMP_T_STR || t == SMP_T_BIN;
}

static int conds_hold(const struct var *v, const struct sample *smp, unsigned int c)
{
	/* scalars (integers, addresses, methods) are never empty */
	int empty = is_str_type(smp->type) && smp->data.str.len == 0;
	int both_int = v && v->set && v->smp.type == SMP_T_SINT && smp->type == SMP_T_SINT;

	if ((c & VAR_C_IFEXISTS) && !v)
		return 0;
	if ((c & VAR_C_IFNOTEXISTS) && v)
		return 0;
	if ((c & VAR_C_IFEMPTY) && !empty)
		return 0;
	if ((c & VAR_C_IFNOTEMPTY) && empty)
		return 0;
	if ((c & VAR_C_IFSET) && !(v && v->set))
		return 0;
	if ((c & VAR_C_IFNOTSET) && v && v->set)
		return 0;
	if ((c & VAR_C_IFGT) && both_int && !(v->smp.data.sint > smp->data.sint))
		return 0;
	if ((c & VAR_C_IFLT) && both_int && !(v->smp.data.sint < smp->data.sint))
		return 0;
	return 1;
}

/* Stores a copy of <smp> in <v>. */
static int var_store_value(struct var_store *s, struct var *v, const struct sample *smp)
{
	const struct smp_str *src;

	v->smp = *smp;
	v->smp.flags = 0;
	v->smp.opt = 0;
	memset(&v->smp.iter, 0, sizeof(v->smp.iter));
	if (!is_str_type(smp->type) && smp->type != SMP_T_METH) {
		v->set = 1;
		return 1;
	}
	src = smp->type == SMP_T_METH ? &smp->data.meth.str : &smp->data.str;
	if (src->len > v->bufsize || !v->buf) {
		char *b = realloc(v->buf, src->len ? src->len : 1);

		if (!b)
			return -1;
		s->bytes += (src->len ? src->len : 1) - v->bufsize;
		v->buf = b;
		v->bufsize = src->len ? src->len : 1;
	}
	if (src->len)
		memcpy(v->buf, src->ptr, src->len);
	if (smp->type == SMP_T_METH) {
		v->smp.data.meth.str.ptr = v->buf;
		v->smp.data.meth.str.size = 0;
	} else {
		v->smp.data.str.ptr = v->buf;
		v->smp.data.str.size = 0;
	}
	v->smp.flags = SMP_F_CONST;
	v->set = 1;
	return 1;
}

static int set_in_store(struct var_store *s, uint32_t id, const struct sample *smp,
                        unsigned int conds)
{
	struct var *v = find_var(s, id);

	if (!conds_hold(v, smp, conds))
		return 0;
	if (!v) {
		v = calloc(1, sizeof(*v));
		if (!v)
			return -1;
		v->id = id;
		v->next = s->head;
		s->head = v;
	}
	return var_store_value(s, v, smp);
}

int vars_set(struct smp_ctx *ctx, const struct var_ref *ref,
             const struct sample *smp, unsigned int conds)
{
	struct var_store *s = store_of(ctx, ref->scope);
	int ret;

	if (!s)
		return 0;
	if (s == &vars_proc) {
		vars_proc_lock(1);
		ret = set_in_store(s, ref->id, smp, conds);
		vars_proc_unlock();
		return ret;
	}
	return set_in_store(s, ref->id, smp, conds);
}

int vars_unset(struct smp_ctx *ctx, const struct var_ref *ref)
{
	struct var_store *s = store_of(ctx, ref->scope);
	struct var *v;
	int was = 0;

	if (!s)
		return 0;
	if (s == &vars_proc)
		vars_proc_lock(1);
	v = find_var(s, ref->id);
	if (v) {
		was = v->set;
		v->set = 0;
	}
	if (s == &vars_proc)
		vars_proc_unlock();
	return was;
}

int vars_get(struct smp_ctx *ctx, const struct var_ref *ref, struct sample *out)
{
	struct var_store *s = store_of(ctx, ref->scope);
	struct var *v;
	int ret = 0;

	if (!s)
		return 0;
	if (s != &vars_proc) {
		v = find_var(s, ref->id);
		if (!v || !v->set)
			return 0;
		out->type = v->smp.type;
		out->data = v->smp.data;
		out->flags |= v->smp.flags;
		return 1;
	}
	vars_proc_lock(0);
	v = find_var(s, ref->id);
	if (v && v->set) {
		out->type = v->smp.type;
		out->data = v->smp.data;
		if (is_str_type(v->smp.type) || v->smp.type == SMP_T_METH) {
			struct smp_str *d = v->smp.type == SMP_T_METH ?
			                    &out->data.meth.str : &out->data.str;
			size_t size;
			char *p = smp_trash_get(&size);

			if (d->len <= size) {
				memcpy(p, d->ptr, d->len);
				d->ptr = p;
				d->size = v->smp.type == SMP_T_METH ? 0 : size;
				out->flags &= ~SMP_F_CONST;
				ret = 1;
			}
		} else
			ret = 1;
	}
	vars_proc_unlock();
	return ret;
}

/* ------------------------------------------------------------------ keywords */

static int smp_fetch_var(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	if (vars_get(ctx, &args->a[0].data.var, smp))
		return 1;
	if (args->n > 1) {
		smp_set_const_str(smp, SMP_T_STR, args->a[1].data.str.ptr, args->a[1].data.str.len);
		return 1;
	}
	return 0;
}

static int check_set_var(struct smp_args *args, char *err, size_t errlen)
{
	unsigned int conds = 0;

	for (int i = 1; i < args->n; i++) {
		unsigned int c = vars_cond_parse(args->a[i].text);

		if (!c)
			return errmsg_set(err, errlen, "unknown condition '%s' (ifexists, "
			                  "ifnotexists, ifempty, ifnotempty, ifset, ifnotset, ifgt, "
			                  "iflt)", args->a[i].text);
		conds |= c;
	}
	args->priv = (void *)(uintptr_t)conds;
	return 0;
}

static int smp_conv_set_var(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	vars_set(ctx, &args->a[0].data.var, smp, (unsigned int)(uintptr_t)args->priv);
	return 1;
}

static int smp_conv_unset_var(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	vars_unset(ctx, &args->a[0].data.var);
	(void)smp;
	return 1;
}
