/* The global section's `set-var` and `set-var-fmt`: process-wide (proc.*)
 * variables set while the configuration is read, from expressions that
 * only use internal data (int(), str(), env(), other proc variables...),
 * as HAProxy 2.6 does. Configuration time, one thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/log.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_set_var(KW_ARGS);

static const struct cfg_kw vars_cfg_kws[] = {
	{ "set-var",     NULL, CFG_SEC_GLOBAL, kw_set_var },
	{ "set-var-fmt", NULL, CFG_SEC_GLOBAL, kw_set_var },
	{ NULL }
};
CFG_REGISTER(vars_cfg_kws)

/* referenced by sample.c's anchor list: the keywords are linked in */
const int expr_vars_cfg_anchor;

/* A context that offers internal data only. */
static void ctx_internal(struct smp_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->avail = SMP_USE_INTRN;
	c->final = 1;
}

static int set_from_expr(const struct var_ref *ref, const char *name, const char *text,
                         char *err, size_t errlen)
{
	struct sample_expr *e;
	struct smp_ctx c;
	struct sample smp;
	char sub[512], what[128];
	int rc;

	e = sample_expr_parse(text, NULL, sub, sizeof(sub));
	if (!e)
		return errmsg_set(err, errlen, "%s", sub);
	snprintf(what, sizeof(what), "set-var(%s)", name);
	if (smp_check_use(e->use, SMP_USE_INTRN, what, sub, sizeof(sub)) < 0) {
		sample_expr_free(e);
		/* HAProxy's wording, then why */
		return errmsg_set(err, errlen, "fetch method '%s' extracts information from a "
		                  "connection or a request, none of which is available here (%s)",
		                  what, sub);
	}
	ctx_internal(&c);
	memset(&smp, 0, sizeof(smp));
	rc = sample_expr_eval(e, &c, &smp) ? vars_set(&c, ref, &smp, 0) : 0;
	sample_expr_free(e);
	return rc < 0 ? errmsg_set(err, errlen, "out of memory") : 0;
}

static int set_from_fmt(const struct var_ref *ref, const char *text, char *err, size_t errlen)
{
	struct lf_expr e = { 0 };
	struct log_fields f;
	struct smp_ctx c;
	struct sample smp;
	char out[4096], sub[512];
	size_t n;
	int rc;

	if (lf_compile(text, &e, sub, sizeof(sub)) < 0)
		return errmsg_set(err, errlen, "%s", sub);
	if (lf_check_use(&e, SMP_USE_INTRN, sub, sizeof(sub)) < 0) {
		lf_free(&e);
		return errmsg_set(err, errlen, "%s", sub);
	}
	ctx_internal(&c);
	memset(&f, 0, sizeof(f));
	f.smp = &c;
	n = lf_render(&e, &f, out, sizeof(out));
	lf_free(&e);
	memset(&smp, 0, sizeof(smp));
	smp_set_const_str(&smp, SMP_T_STR, out, n);
	rc = vars_set(&c, ref, &smp, 0);
	return rc < 0 ? errmsg_set(err, errlen, "out of memory") : 0;
}

static int kw_set_var(KW_ARGS)
{
	struct var_ref ref;
	char sub[256];

	if (nargs != 3)
		return errmsg_set(err, errlen, "'%s' requires a process-wide variable name "
		                  "('proc.<name>') and a %s.", args[0],
		                  strcmp(args[0], "set-var") ? "format string" : "sample expression");
	if (vars_parse_ref(args[1], strlen(args[1]), &ref, sub, sizeof(sub)) < 0)
		return errmsg_set(err, errlen, "%s", sub);
	if (ref.scope != VAR_SCOPE_PROC)
		return errmsg_set(err, errlen, "cannot set variable '%s', only scope 'proc' is "
		                  "permitted in the global section.", args[1]);
	if (!strcmp(args[0], "set-var"))
		return set_from_expr(&ref, args[1], args[2], err, errlen);
	return set_from_fmt(&ref, args[2], err, errlen);
}
