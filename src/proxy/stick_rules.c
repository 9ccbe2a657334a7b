/* stick match|on|store-request|store-response: persistence through stick
 * tables. See include/sluice/proxy/stick_rules.h for when each rule runs.
 *
 * Rules are read-only after configuration. At run time everything happens
 * on the stream's owner thread; entries are taken with stktable_get_ref()
 * (shard lock) and their server_id set with an atomic store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/sample.h>
#include <sluice/http/txn.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/stick_rules.h>
#include <sluice/proxy/stktable.h>
#include <sluice/proxy/stream.h>
#include <sluice/proxy/stream_int.h>

#define STICK_MATCH     0x1
#define STICK_STORE_REQ 0x2
#define STICK_STORE_RES 0x4

struct stick_rule {
	struct list list;            /* in the proxy's stick_rules */
	unsigned int flags;          /* STICK_* */
	struct sample_expr *expr;
	struct acl_cond *cond;       /* NULL: always */
	char *table_name;            /* NULL: the backend's own */
	struct stktable *table;      /* resolved after parsing */
	char *file;
	int line;
};

static int kw_stick(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen);

static const struct cfg_kw stick_kws[] = {
	{ "stick", NULL, CFG_SEC_BE_ONLY, kw_stick },
	{ NULL }
};
CFG_REGISTER(stick_kws)

static void rule_free(struct stick_rule *r)
{
	sample_expr_free(r->expr);
	acl_cond_free(r->cond);
	free(r->table_name);
	free(r->file);
	free(r);
}

void stick_rules_free(struct list *rules)
{
	struct list *pos, *tmp;

	if (!rules->next)
		return;
	list_for_each_safe(pos, tmp, rules) {
		list_del_init(pos);
		rule_free(list_elem(pos, struct stick_rule, list));
	}
}

/* stick {match|on|store-request|store-response} <pattern> [table <t>]
 *       [{if|unless} <cond>] */
static int kw_stick(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	const char *what = nargs > 1 ? args[1] : "";
	unsigned int flags, avail;
	struct stick_rule *r;
	struct smp_origin saved;
	char sub[512];
	int i;

	flags = !strcmp(what, "match") ? STICK_MATCH :
	        !strcmp(what, "on") ? STICK_MATCH | STICK_STORE_REQ :
	        !strcmp(what, "store-request") ? STICK_STORE_REQ :
	        !strcmp(what, "store-response") ? STICK_STORE_RES : 0;
	if (!flags)
		return errmsg_set(err, errlen, "expects 'on', 'match', or 'store'.");
	if (nargs < 3 || !*args[2])
		return errmsg_set(err, errlen, "expects a fetch method.");
	r = calloc(1, sizeof(*r));
	if (!r || !(r->file = strdup(ctx->file))) {
		free(r);
		return errmsg_set(err, errlen, "out of memory.");
	}
	list_init(&r->list);
	r->flags = flags;
	r->line = ctx->line;
	smp_cfg_origin_get(&saved);
	smp_cfg_origin_set(ctx->file, ctx->line, ctx->px);
	r->expr = sample_expr_parse(args[2], NULL, sub, sizeof(sub));
	smp_cfg_origin_set(saved.file, saved.line, saved.px);
	if (!r->expr) {
		rule_free(r);
		return errmsg_set(err, errlen, "%s", sub);
	}
	/* what the key may use: the request, or the response as well */
	avail = (flags & STICK_STORE_RES) ? SMP_AVAIL_HTTP_RES : SMP_AVAIL_HTTP_REQ | SMP_USE_BE;
	if (smp_check_use(r->expr->use, avail, args[2], sub, sizeof(sub)) < 0) {
		rule_free(r);
		return errmsg_set(err, errlen, "%s", sub);
	}
	for (i = 3; i < nargs; i++) {
		if (!strcmp(args[i], "table")) {
			free(r->table_name);
			r->table_name = strdup(i + 1 < nargs ? args[i + 1] : "");
			if (!r->table_name) {
				rule_free(r);
				return errmsg_set(err, errlen, "out of memory.");
			}
			i++;
		} else if (!strcmp(args[i], "if") || !strcmp(args[i], "unless")) {
			r->cond = acl_cond_parse(args + i, nargs - i, ctx->px->acls, ctx->file,
			                         ctx->line, sub, sizeof(sub));
			if (!r->cond) {
				rule_free(r);
				return errmsg_set(err, errlen, "error detected while parsing sticking "
				                  "condition : %s.", sub);
			}
			break;
		} else {
			rule_free(r);
			return errmsg_set(err, errlen, "unknown keyword '%s'.", args[i]);
		}
	}
	if ((flags & STICK_STORE_RES) && ctx->px->mode != PX_MODE_HTTP)
		cfg_warning(ctx->file, ctx->line, "'stick store-response' is only run on HTTP "
		            "responses by this version of sluice: this rule has no effect in TCP "
		            "mode.");
	list_append(&ctx->px->stick_rules, &r->list);
	return 0;
}

/* Once every section was read: each rule finds its table, which stores
 * server_id from now on. */
static int stick_resolve(void)
{
	struct list *pos, *tmp, *rp, *tmp2;
	int errors = 0;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!px->stick_rules.next)
			continue;
		list_for_each_safe(rp, tmp2, &px->stick_rules) {
			struct stick_rule *r = list_elem(rp, struct stick_rule, list);
			const char *name = r->table_name ? r->table_name : px->name;

			r->table = stktable_find(name);
			if (!r->table) {
				cfg_alert(r->file, r->line, "Proxy '%s': unable to find stick-table '%s'.",
				          px->name, name);
				errors++;
				continue;
			}
			if (stktable_enable_dt(r->table, STKT_DT_SERVER_ID) < 0 ||
			    stktable_enable_dt(r->table, STKT_DT_SERVER_KEY) < 0) {
				cfg_alert(r->file, r->line, "Proxy '%s': out of memory.", px->name);
				errors++;
			}
		}
	}
	return errors;
}

static struct cfg_post_hook stick_post = { .fn = stick_resolve, .order = 20 };

__attribute__((constructor)) static void stick_register(void)
{
	cfg_register_post(&stick_post);
}

/* ------------------------------------------------------------------ run */

static int cond_ok(const struct stick_rule *r, struct smp_ctx *c)
{
	return !r->cond || acl_cond_eval(r->cond, c) == ACL_TEST_PASS;
}

static int rule_key(const struct stick_rule *r, struct smp_ctx *c, struct stkt_key *k)
{
	struct sample smp;

	memset(&smp, 0, sizeof(smp));
	smp.opt = SMP_OPT_FINAL;
	return sample_expr_eval(r->expr, c, &smp) && stktable_key_from_smp(r->table, &smp, k);
}

/* The server of the backend whose id an entry of <t> holds, if usable. */
static struct server *entry_server(struct proxy *be, struct stktable *t, const struct stkt_key *k)
{
	struct stksess *ts = stktable_lookup_lock(t, k);
	int64_t id = 0;

	if (!ts)
		return NULL;
	stkt_get(t, ts, STKT_DT_SERVER_ID, &id);
	stktable_touch(t, ts);
	stktable_unlock(t, ts);
	for (int i = 0; i < be->nsrv; i++)
		if (be->srv[i]->puid == id && id > 0)
			return srv_is_usable(be->srv[i]) ? be->srv[i] : NULL;
	return NULL;
}

static int store_has_table(const struct stream *s, const struct stktable *t)
{
	for (int i = 0; i < s->stick_nstore; i++)
		if (s->stick_store[i].table == t)
			return 1;
	return 0;
}

struct server *stick_rules_request(struct stream *s)
{
	struct server *found = NULL;
	struct list *pos, *tmp;
	struct smp_ctx c;

	if (s->stick_done || !s->be || !s->be->stick_rules.next ||
	    list_empty(&s->be->stick_rules))
		return NULL;
	s->stick_done = 1;
	stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
	list_for_each_safe(pos, tmp, &s->be->stick_rules) {
		struct stick_rule *r = list_elem(pos, struct stick_rule, list);
		struct stkt_key k;

		if (!r->table || !(r->flags & (STICK_MATCH | STICK_STORE_REQ)) || !cond_ok(r, &c))
			continue;
		if (!rule_key(r, &c, &k))
			continue;
		if ((r->flags & STICK_MATCH) && !found)
			found = entry_server(s->be, r->table, &k);
		if ((r->flags & STICK_STORE_REQ) && s->stick_nstore < STICK_MAX_STORE &&
		    !store_has_table(s, r->table)) {
			struct stksess *ts = stktable_get_ref(r->table, &k);

			if (ts) {
				s->stick_store[s->stick_nstore].table = r->table;
				s->stick_store[s->stick_nstore++].entry = ts;
			}
		}
	}
	return found;
}

void stick_rules_commit(struct stream *s)
{
	for (int i = 0; i < s->stick_nstore; i++) {
		struct stick_store *st = &s->stick_store[i];

		if (s->srv && !s->srv->non_stick) {
			stkt_set(st->table, st->entry, STKT_DT_SERVER_ID, s->srv->puid);
			stkt_set_name(st->table, st->entry, STKT_DT_SERVER_KEY, s->srv->name);
		}
		stktable_release(st->table, st->entry);
	}
	s->stick_nstore = 0;
}

void stick_rules_response(struct stream *s)
{
	struct stktable *done[STICK_MAX_STORE];
	int ndone = 0;
	struct list *pos, *tmp;
	struct smp_ctx c;

	if (!s->srv || s->srv->non_stick || !s->be || !s->be->stick_rules.next)
		return;
	stream_smp_ctx_init(s, &c, SMP_DIR_RES);
	list_for_each_safe(pos, tmp, &s->be->stick_rules) {
		struct stick_rule *r = list_elem(pos, struct stick_rule, list);
		struct stksess *ts;
		struct stkt_key k;
		int seen = 0;

		if (!r->table || !(r->flags & STICK_STORE_RES) || ndone == STICK_MAX_STORE)
			continue;
		for (int i = 0; i < ndone; i++)
			seen |= done[i] == r->table;
		if (seen || !cond_ok(r, &c) || !rule_key(r, &c, &k))
			continue;
		ts = stktable_get_ref(r->table, &k);
		if (!ts)
			continue;
		stkt_set(r->table, ts, STKT_DT_SERVER_ID, s->srv->puid);
		stkt_set_name(r->table, ts, STKT_DT_SERVER_KEY, s->srv->name);
		stktable_release(r->table, ts);
		done[ndone++] = r->table;
	}
}

void stick_rules_release(struct stream *s)
{
	for (int i = 0; i < s->stick_nstore; i++)
		stktable_release(s->stick_store[i].table, s->stick_store[i].entry);
	s->stick_nstore = 0;
	s->stick_done = 0;
}
