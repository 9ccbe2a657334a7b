/* Stick-table actions: track-sc0/1/2, sc-inc-gpc0/1, sc-set-gpt0 (HAProxy
 * 2.6 manual, sections 4.2 "http-request" and 4.3 "tcp-request").
 *
 * track-scN evaluates its key, finds or creates the entry in the table and
 * keeps a reference in the stream's counter N (src/proxy/stktable_trk.c
 * updates and releases it). The table is named by "table <name>" or is the
 * proxy's own; names are resolved once every section was read.
 *
 * Concurrency: rules are read-only after configuration; exec runs on the
 * stream's owner thread and touches the entries through stktable.h (shard
 * lock for the reference, atomics for the counters).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/list.h>
#include <sluice/expr/sample.h>
#include <sluice/http/txn.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stktable.h>
#include <sluice/proxy/stream.h>
#include "act_int.h"

struct trk_arg {
	struct list pending;         /* waiting for its table (configuration) */
	int ctr;
	struct sample_expr *key;
	char *table_name;            /* NULL: the proxy's own */
	char *px_name;
	char *file;
	int line;
	struct stktable *table;      /* resolved */
};

struct gpc_arg {
	int ctr;
	int idx;                     /* sc-inc-gpc(<idx>,<ctr>), sc-set-gpt(<idx>,<ctr>);
	                              * -1 for the gpc0/gpc1/gpt0 forms */
	int64_t value;               /* sc-set-gpt0 <int> */
	struct sample_expr *expr;    /* sc-set-gpt0 <expr> */
};

static int parse_track(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_sc_gpc(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static enum act_verdict exec_track(const struct act_rule *, struct act_env *);
static enum act_verdict exec_inc_gpc(const struct act_rule *, struct act_env *);
static enum act_verdict exec_set_gpt0(const struct act_rule *, struct act_env *);
static void free_track(void *);
static void free_gpc(void *);

#define REQ   ACT_F_HTTP_REQ
#define RES   ACT_F_HTTP_RES
#define CON   ACT_F_TCP_REQ_CONN
#define SES   ACT_F_TCP_REQ_SESS
#define CNT   ACT_F_TCP_REQ_CONT
#define TRS   ACT_F_TCP_RES_CONT

static const struct act_kw stk_kws[] = {
	{ "track-sc0",    REQ | RES | CON | SES | CNT, parse_track, exec_track, free_track },
	{ "track-sc1",    REQ | RES | CON | SES | CNT, parse_track, exec_track, free_track },
	{ "track-sc2",    REQ | RES | CON | SES | CNT, parse_track, exec_track, free_track },
	{ "sc-inc-gpc0",  REQ | RES | CON | SES | CNT | TRS, parse_sc_gpc, exec_inc_gpc, free_gpc },
	{ "sc-inc-gpc0(", REQ | RES | CON | SES | CNT | TRS, parse_sc_gpc, exec_inc_gpc, free_gpc },
	{ "sc-inc-gpc1",  REQ | RES | CON | SES | CNT | TRS, parse_sc_gpc, exec_inc_gpc, free_gpc },
	{ "sc-inc-gpc1(", REQ | RES | CON | SES | CNT | TRS, parse_sc_gpc, exec_inc_gpc, free_gpc },
	{ "sc-set-gpt0",  REQ | RES | CON | SES | CNT | TRS, parse_sc_gpc, exec_set_gpt0, free_gpc },
	{ "sc-set-gpt0(", REQ | RES | CON | SES | CNT | TRS, parse_sc_gpc, exec_set_gpt0, free_gpc },
	{ "sc-inc-gpc(",  REQ | RES | CON | SES | CNT | TRS, parse_sc_gpc, exec_inc_gpc, free_gpc },
	{ "sc-set-gpt(",  REQ | RES | CON | SES | CNT | TRS, parse_sc_gpc, exec_set_gpt0, free_gpc },
	{ NULL }
};
ACT_REGISTER(stk_kws)

/* track-sc rules whose table is not resolved yet (configuration time) */
static struct list trk_pending = LIST_HEAD_INIT(trk_pending);

/* ------------------------------------------------------------------ parse */

static int parse_track(struct act_rule *r, struct proxy *px, char **args, int nargs,
                       char *err, size_t errlen)
{
	const char *word = args[-1];
	struct trk_arg *a;

	if (nargs < 1 || !*args[0])
		return errmsg_set(err, errlen, "missing fetch method.");
	if (nargs >= 2 && strcmp(args[1], "table"))
		return errmsg_set(err, errlen, "unexpected argument '%s' (expects 'table <name>' "
		                  "or 'if'/'unless' followed by a condition).", args[1]);
	if (nargs == 2)
		return errmsg_set(err, errlen, "missing table name.");
	if (nargs > 3)
		return errmsg_set(err, errlen, "unexpected argument '%s' (expects 'if' or "
		                  "'unless' followed by a condition).", args[3]);
	a = calloc(1, sizeof(*a));
	if (!a)
		return errmsg_set(err, errlen, "out of memory.");
	list_init(&a->pending);
	a->ctr = word[8] - '0';
	a->key = act_expr_parse(args[0], r, err, errlen);
	a->px_name = strdup(px->name);
	a->file = strdup(r->file ? r->file : "");
	a->table_name = nargs == 3 ? strdup(args[2]) : NULL;
	a->line = r->line;
	if (!a->key || !a->px_name || !a->file || (nargs == 3 && !a->table_name)) {
		if (a->key)
			errmsg_set(err, errlen, "out of memory.");
		free_track(a);
		return -1;
	}
	list_append(&trk_pending, &a->pending);
	r->arg = a;
	return 0;
}

/* "sc-inc-gpc0", "sc-inc-gpc0(<n>)": the counter number (0 without one). */
static int parse_ctr_suffix(const char *word, const char *base, int *ctr, char *err,
                            size_t errlen)
{
	const char *p = word + strlen(base);
	char *end;
	long n;

	*ctr = 0;
	if (!*p)
		return 0;
	n = strtol(p + 1, &end, 10);
	if (*p != '(' || end == p + 1 || strcmp(end, ")") || n < 0 || n >= STKT_MAX_CTR)
		return errmsg_set(err, errlen, "invalid stick table track ID. The max allowed ID "
		                  "is %d.", STKT_MAX_CTR - 1);
	*ctr = (int)n;
	return 0;
}

/* "sc-inc-gpc(<idx>,<ctr>)", "sc-set-gpt(<idx>,<ctr>)": both numbers. */
static int parse_idx_ctr(const char *word, size_t base, int *idx, int *ctr, char *err,
                         size_t errlen)
{
	const char *p = word + base;
	const char *kind = word[3] == 's' ? "gpt" : "gpc";
	char *end;
	long i, c;

	i = strtol(p, &end, 10);
	if (end == p || *end != ',' || i < 0)
		return errmsg_set(err, errlen, "Missing %s ID '%s'. Expects %.*s(<%s ID>,<Track "
		                  "ID>).", kind, word, (int)base - 1, word, kind[2] == 't' ?
		                  "GPT" : "GPC");
	p = end + 1;
	c = strtol(p, &end, 10);
	if (end == p || strcmp(end, ")") || c < 0 || c >= STKT_MAX_CTR)
		return errmsg_set(err, errlen, "invalid stick table track ID '%s'. The max allowed "
		                  "ID is %d.", word, STKT_MAX_CTR - 1);
	*idx = (int)i;
	*ctr = (int)c;
	return 0;
}

static int parse_sc_gpc(struct act_rule *r, struct proxy *px, char **args, int nargs,
                        char *err, size_t errlen)
{
	const char *word = args[-1];
	int set = !strncmp(word, "sc-set-gpt", 10);
	int array = word[10] == '(';
	struct gpc_arg *a;
	int ctr, idx = -1;

	if (array ? parse_idx_ctr(word, 11, &idx, &ctr, err, errlen) < 0 :
	    parse_ctr_suffix(word, set ? "sc-set-gpt0" : "sc-inc-gpc0", &ctr, err, errlen) < 0)
		return -1;
	if (!set && nargs)
		return errmsg_set(err, errlen, "unexpected argument '%s'.", args[0]);
	if (set && nargs != 1)
		return errmsg_set(err, errlen, "expects exactly one argument: an integer or a "
		                  "sample expression.");
	a = calloc(1, sizeof(*a));
	if (!a)
		return errmsg_set(err, errlen, "out of memory.");
	a->ctr = ctr;
	a->idx = idx;
	if (set) {
		char *end;
		long long v = strtoll(args[0], &end, 10);

		/* an integer, else a sample expression, as HAProxy reads it */
		if (*args[0] && !*end) {
			a->value = v;
		} else if (!(a->expr = act_expr_parse(args[0], r, err, errlen))) {
			free(a);
			return -1;
		}
	}
	r->arg = a;
	return 0;
}

static void free_track(void *arg)
{
	struct trk_arg *a = arg;

	if (!a)
		return;
	list_del_init(&a->pending);
	sample_expr_free(a->key);
	free(a->table_name);
	free(a->px_name);
	free(a->file);
	free(a);
}

static void free_gpc(void *arg)
{
	struct gpc_arg *a = arg;

	if (!a)
		return;
	sample_expr_free(a->expr);
	free(a);
}

/* Once every section was read: each track-sc rule finds its table. */
static int trk_resolve(void)
{
	struct list *pos, *tmp;
	int errors = 0;

	list_for_each_safe(pos, tmp, &trk_pending) {
		struct trk_arg *a = list_elem(pos, struct trk_arg, pending);
		const char *name = a->table_name ? a->table_name : a->px_name;

		list_del_init(&a->pending);
		a->table = stktable_find(name);
		if (!a->table) {
			cfg_alert(a->file, a->line, "Proxy '%s': unable to find table '%s' referenced "
			          "by track-sc%d.", a->px_name, name, a->ctr);
			errors++;
		}
	}
	return errors;
}

static struct cfg_post_hook trk_post = { .fn = trk_resolve, .order = 20 };

__attribute__((constructor)) static void act_stk_register(void)
{
	cfg_register_post(&trk_post);
}

/* ------------------------------------------------------------------ exec */

static enum act_verdict exec_track(const struct act_rule *r, struct act_env *env)
{
	const struct trk_arg *a = r->arg;
	struct stream *s = env->s;
	struct stkctr *ctr = &s->stkctr[a->ctr];
	struct sample smp;
	struct stkt_key key;
	struct stksess *ts;

	/* a counter already tracked (by this rule set or an earlier one)
	 * stays as it is */
	if (ctr->entry || !a->table)
		return ACT_V_CONTINUE;
	if (!act_expr_eval(a->key, env, SMP_T_ANY, &smp) ||
	    !stktable_key_from_smp(a->table, &smp, &key))
		return ACT_V_CONTINUE;
	ts = stktable_get_ref(a->table, &key);
	if (!ts)
		return ACT_V_CONTINUE;
	ctr->table = a->table;
	ctr->entry = ts;
	ctr->sess = r->set == ACT_TCP_REQ_CONN || r->set == ACT_TCP_REQ_SESS;
	stkt_add(a->table, ts, STKT_DT_CONN_CUR, 1);
	stkt_add(a->table, ts, STKT_DT_CONN_CNT, 1);
	stkt_add(a->table, ts, STKT_DT_CONN_RATE, 1);
	if (r->set == ACT_HTTP_REQ || r->set == ACT_HTTP_RES) {
		/* the request being analysed counts at once, and, on the
		 * response side, its status as well */
		int status = s->txn ? s->txn->status : -1;

		stkt_add(a->table, ts, STKT_DT_HTTP_REQ_CNT, 1);
		stkt_add(a->table, ts, STKT_DT_HTTP_REQ_RATE, 1);
		if (r->set == ACT_HTTP_RES && s->txn && s->txn->res.status)
			status = s->txn->res.status;
		if (status >= 400 && status < 500) {
			stkt_add(a->table, ts, STKT_DT_HTTP_ERR_CNT, 1);
			stkt_add(a->table, ts, STKT_DT_HTTP_ERR_RATE, 1);
		} else if (status >= 500 && status < 600 && status != 501 && status != 505) {
			stkt_add(a->table, ts, STKT_DT_HTTP_FAIL_CNT, 1);
			stkt_add(a->table, ts, STKT_DT_HTTP_FAIL_RATE, 1);
		}
	}
	return ACT_V_CONTINUE;
}

static enum act_verdict exec_inc_gpc(const struct act_rule *r, struct act_env *env)
{
	const struct gpc_arg *a = r->arg;
	struct stkctr *ctr = &env->s->stkctr[a->ctr];
	int one = r->kw->kw[10] == '1';

	if (!ctr->entry)
		return ACT_V_CONTINUE;
	if (a->idx >= 0) {
		stkt_add_idx(ctr->table, ctr->entry, STKT_DT_GPC, (unsigned int)a->idx, 1);
		stkt_add_idx(ctr->table, ctr->entry, STKT_DT_GPC_RATE, (unsigned int)a->idx, 1);
		return ACT_V_CONTINUE;
	}
	stkt_add(ctr->table, ctr->entry, one ? STKT_DT_GPC1 : STKT_DT_GPC0, 1);
	stkt_add(ctr->table, ctr->entry, one ? STKT_DT_GPC1_RATE : STKT_DT_GPC0_RATE, 1);
	return ACT_V_CONTINUE;
}

static enum act_verdict exec_set_gpt0(const struct act_rule *r, struct act_env *env)
{
	const struct gpc_arg *a = r->arg;
	struct stkctr *ctr = &env->s->stkctr[a->ctr];
	int64_t v = a->value;

	if (!ctr->entry)
		return ACT_V_CONTINUE;
	if (a->expr) {
		struct sample smp;

		if (!act_expr_eval(a->expr, env, SMP_T_SINT, &smp))
			return ACT_V_CONTINUE;
		v = smp.data.sint;
	}
	if (a->idx >= 0)
		stkt_set_idx(ctr->table, ctr->entry, STKT_DT_GPT, (unsigned int)a->idx, v);
	else
		stkt_set(ctr->table, ctr->entry, STKT_DT_GPT0, v);
	return ACT_V_CONTINUE;
}
