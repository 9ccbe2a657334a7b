/* Map converters: map(<file>[,<default>]), map_<match>(...) and
 * map_<match>_<output>(...) (manual section 7.3.1, "map").
 *
 * A map file becomes a pattern reference with values (PAT_REF_MAP), shared
 * by every map converter and "acl -M" naming the same file, and indexed
 * once per match method and output type (pattern.c). Lookups take the
 * reference's read lock and copy the value out (pattern.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/pattern.h>
#include <sluice/expr/sample.h>

const int expr_map_anchor;

struct map_kind {
	enum pat_match match;
	enum smp_type out;
	int regm;                  /* map_regm: \N in values refer to groups */
};

static int smp_conv_map(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx);
static int check_map(struct smp_args *args, char *err, size_t errlen);

#define MK(m, o, r) (&(const struct map_kind){ PAT_MATCH_##m, SMP_T_##o, r })
#define MAP(name, m, in, out, r) \
	{ name, smp_conv_map, { ARGT_STR, ARGT_STR }, 1, check_map, SMP_T_##in, \
	  SMP_T_##out, MK(m, out, r) }

static const struct smp_conv_kw map_convs[] = {
	MAP("map",         STR, STR, STR, 0),
	MAP("map_str",     STR, STR, STR, 0),
	MAP("map_str_int", STR, STR, SINT, 0),
	MAP("map_str_ip",  STR, STR, ADDR, 0),
	MAP("map_beg",     BEG, STR, STR, 0),
	MAP("map_beg_int", BEG, STR, SINT, 0),
	MAP("map_beg_ip",  BEG, STR, ADDR, 0),
	MAP("map_sub",     SUB, STR, STR, 0),
	MAP("map_sub_int", SUB, STR, SINT, 0),
	MAP("map_sub_ip",  SUB, STR, ADDR, 0),
	MAP("map_dir",     DIR, STR, STR, 0),
	MAP("map_dir_int", DIR, STR, SINT, 0),
	MAP("map_dir_ip",  DIR, STR, ADDR, 0),
	MAP("map_dom",     DOM, STR, STR, 0),
	MAP("map_dom_int", DOM, STR, SINT, 0),
	MAP("map_dom_ip",  DOM, STR, ADDR, 0),
	MAP("map_end",     END, STR, STR, 0),
	MAP("map_end_int", END, STR, SINT, 0),
	MAP("map_end_ip",  END, STR, ADDR, 0),
	MAP("map_reg",     REG, STR, STR, 0),
	MAP("map_reg_int", REG, STR, SINT, 0),
	MAP("map_reg_ip",  REG, STR, ADDR, 0),
	MAP("map_regm",    REG, STR, STR, 1),
	MAP("map_int",     INT, SINT, STR, 0),
	MAP("map_int_int", INT, SINT, SINT, 0),
	MAP("map_int_ip",  INT, SINT, ADDR, 0),
	MAP("map_ip",      IP, ADDR, STR, 0),
	MAP("map_ip_int",  IP, ADDR, SINT, 0),
	MAP("map_ip_ip",   IP, ADDR, ADDR, 0),
	{ NULL }
};
SMP_REGISTER_CONVS(map_convs)

struct map_conf {
	struct pat_expr *expr;
	int regm;
	int has_default;
	struct sample def;         /* the default, parsed for the output type */
	char *def_text;
};

static void free_map(void *p)
{
	struct map_conf *m = p;

	pat_expr_put(m->expr);
	free(m->def_text);
	free(m);
}

/* The reference of a map file: shared with earlier users, else loaded. */
struct pat_ref *map_ref_get(const char *path, char *err, size_t errlen)
{
	struct pat_ref *ref = pat_ref_lookup(path);

	if (ref) {
		if (!(ref->flags & PAT_REF_MAP)) {
			errmsg_set(err, errlen, "file '%s' is already used as a pattern file (not "
			           "a map)", path);
			return NULL;
		}
		return ref;
	}
	ref = pat_ref_new(path, path, -1, PAT_REF_MAP | PAT_REF_FILE, err, errlen);
	if (ref && pat_ref_load_file(ref, path, err, errlen) < 0) {
		pat_ref_release(ref);
		return NULL;
	}
	return ref;
}

static int check_map(struct smp_args *args, char *err, size_t errlen)
{
	const struct map_kind *k = args->kw_priv;
	struct map_conf *m;
	struct pat_ref *ref;
	char sub[512];

	if (!args->a[0].data.str.len)
		return errmsg_set(err, errlen, "missing map file name");
	m = calloc(1, sizeof(*m));
	if (!m)
		return errmsg_set(err, errlen, "out of memory");
	args->priv = m;
	args->free_priv = free_map;
	m->regm = k->regm;
	ref = map_ref_get(args->a[0].data.str.ptr, sub, sizeof(sub));
	if (!ref)
		return errmsg_set(err, errlen, "%s", sub);
	m->expr = pat_expr_get(ref, k->match, 0, k->out, sub, sizeof(sub));
	if (!m->expr) {
		pat_ref_release(ref);
		return errmsg_set(err, errlen, "map '%s': %s", args->a[0].data.str.ptr, sub);
	}
	if (args->n > 1) {
		m->def_text = strdup(args->a[1].text);
		if (!m->def_text)
			return errmsg_set(err, errlen, "out of memory");
		if (pat_check(PAT_MATCH_FOUND, 0, k->out, "", m->def_text, sub, sizeof(sub)) < 0)
			return errmsg_set(err, errlen, "default value: %s", sub);
		m->has_default = 1;
	}
	return 0;
}

static int set_default(const struct map_conf *m, enum smp_type out, struct sample *smp)
{
	if (out == SMP_T_STR) {
		smp_set_const_str(smp, SMP_T_STR, m->def_text, strlen(m->def_text));
		return 1;
	}
	smp_set_const_str(smp, SMP_T_STR, m->def_text, strlen(m->def_text));
	return smp_cast(smp, out == SMP_T_ADDR ? SMP_T_ADDR : out);
}

static int smp_conv_map(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct map_conf *m = args->priv;
	const struct map_kind *k = args->kw_priv;
	struct sample v = { 0 };

	if (pat_expr_match(m->expr, smp, &v, m->regm)) {
		smp->type = v.type;
		smp->data = v.data;
		smp->flags &= ~SMP_F_CONST;
		return 1;
	}
	if (m->has_default)
		return set_default(m, k->out, smp);
	return 0;
}
