/* What registered Lua functions become for the engine: actions
 * (`http-request lua.<name>`...), sample fetches and converters
 * (`lua.<name>`), services (`use-service lua.<name>`), background tasks
 * and CLI commands; and how each one runs its function.
 *
 * Keyword tables are built at configuration time (one thread) while the
 * scripts load and are read-only afterwards.
 *
 * http-request and tcp-request content actions may yield (forced yields,
 * core.yield, core.msleep): the rule set pauses (ACT_V_YIELD with
 * env->rule_busy) and the stream comes back to the same rule through its
 * ordinary timer, on the same thread; the suspended coroutine waits in
 * s->lua_run. Elsewhere (other rule sets, fetches, converters, CLI
 * commands) a run goes to its end in one call and a yield is an error,
 * the run's time being bounded (lua_core.c); services are in lua_svc.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/buf.h>
#include <sluice/core/clock.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/sched.h>
#include <sluice/expr/sample.h>
#include <sluice/http/act.h>
#include <sluice/http/txn.h>
#include <sluice/mgmt/cli.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stream.h>
#include <sluice/proxy/stream_int.h>
#include "lua_int.h"

static uint64_t loop_ms(void)
{
	return th_ctx ? th_ctx->now_ms : clock_mono_ms();
}

/* ------------------------------------------------------------------ actions */

struct lua_act_arg {
	struct lua_fn *fn;
	int nargs;
	char **args;
};

static void act_arg_free(void *p)
{
	struct lua_act_arg *a = p;

	if (!a)
		return;
	for (int i = 0; i < a->nargs; i++)
		free(a->args[i]);
	free(a->args);
	free(a);
}

static int act_parse(struct act_rule *r, struct proxy *px, char **args, int nargs, char *err,
                     size_t errlen)
{
	const char *word = args[-1];
	struct lua_fn *fn = lua_fn_find(LFN_ACTION, word + 4);
	struct lua_act_arg *a;

	if (!fn)
		return errmsg_set(err, errlen, "unknown Lua action '%s'", word);
	if (!(fn->sets & (1u << r->set)))
		return errmsg_set(err, errlen, "Lua action '%s' is not registered for '%s'", word,
		                  act_ruleset_name(r->set));
	if (nargs < fn->nargs)
		return errmsg_set(err, errlen, "'%s' expects %d arguments", word, fn->nargs);
	if (nargs > fn->nargs)
		return errmsg_set(err, errlen, "'%s' expects %d arguments, got unexpected '%s'",
		                  word, fn->nargs, args[fn->nargs]);
	a = calloc(1, sizeof(*a));
	if (!a || !(a->args = calloc((size_t)nargs + 1, sizeof(char *)))) {
		free(a);
		return errmsg_set(err, errlen, "out of memory");
	}
	a->fn = fn;
	a->nargs = nargs;
	for (int i = 0; i < nargs; i++)
		if (!(a->args[i] = strdup(args[i]))) {
			act_arg_free(a);
			return errmsg_set(err, errlen, "out of memory");
		}
	r->arg = a;
	return 0;
}

static enum act_verdict act_result(struct lua_run *run, struct act_env *env)
{
	lua_Integer ret = 0;

	if (run->done) {
		if (run->replied)
			return ACT_V_REPLY;
		return ACT_V_REJECT;
	}
	if (lua_gettop(run->co) > 0 && lua_isinteger(run->co, -1))
		ret = lua_tointeger(run->co, -1);
	switch (ret) {
	case 1: return ACT_V_STOP;
	case 3: return ACT_V_ERROR;
	case 4: return ACT_V_REJECT;    /* DONE without a reply: nothing to send */
	case 5: return ACT_V_DENY;
	case 6: return ACT_V_REJECT;    /* ABORT */
	default: return ACT_V_CONTINUE;
	}
}

static enum act_verdict act_exec_lua(const struct act_rule *r, struct act_env *env)
{
	const struct lua_act_arg *a = r->arg;
	struct stream *s = env->s;
	struct lua_run *run = s->lua_run;
	enum act_verdict v;
	/* the rule sets whose callers can pause and call again (stream_req.c,
	 * stream_smp.c) */
	int yieldable = ((r->set == ACT_HTTP_REQ || r->set == ACT_HTTP_RES ||
	                  r->set == ACT_HTTP_AFTER) && s->txn) || r->set == ACT_TCP_REQ_CONT;
	int rc;

	if (run && run->rule != r) {
		/* a run of another rule left over (its rule set was cut short) */
		lua_run_free(run);
		s->lua_run = run = NULL;
	}
	if (!run) {
		run = lua_run_new(a->fn, "function", yieldable, (uint64_t)lua_cfg.session_timeout_ms);
		if (!run) {
			lua_report(env->px, "Lua function '%s': cannot start (no state or out of "
			           "memory).", a->fn->name);
			return ACT_V_ERROR;
		}
		run->rule = r;
		lua_push_txn(run->co, s->txn != NULL);
		for (int i = 0; i < a->nargs; i++)
			lua_pushstring(run->co, a->args[i]);
		run->nargs = 1 + a->nargs;
	}
	run->s = s;
	run->env = env;
	run->smp = env->smp;
	run->px = env->px;
	run->task = yieldable ? s->task : NULL;
	rc = lua_run_resume(run);
	if (rc == LUA_YIELD) {
		if (!yieldable) {
			/* cannot happen: the hook and core.* do not yield then */
			lua_run_free(run);
			s->lua_run = NULL;
			return ACT_V_ERROR;
		}
		s->lua_run = run;
		env->rule_busy = 1;
		env->wait_exp_ms = run->wake_ms ? run->wake_ms : loop_ms();
		if (!env->wait_exp_ms)
			env->wait_exp_ms = 1;
		return ACT_V_YIELD;
	}
	/* a runtime error is logged and the rules go on, as in HAProxy; a
	 * script that ran out of time did not do what it was there for (an
	 * access check, say): the request ends with an error (500 for a
	 * request) rather than pass unchecked, where HAProxy 2.6 goes on */
	if (rc == LUA_OK)
		v = act_result(run, env);
	else
		v = run->timed_out ? ACT_V_ERROR : ACT_V_CONTINUE;
	if (v == ACT_V_REPLY && !env->reply)
		v = ACT_V_REJECT;
	lua_run_free(run);
	s->lua_run = NULL;
	return v;
}

/* One table per action name: act_kw_find() matches "lua.<name>". */
int lua_reg_action(struct lua_fn *fn, char *err, size_t errlen)
{
	struct act_kw *kw = calloc(2, sizeof(*kw));
	struct act_kw_table *t = calloc(1, sizeof(*t));
	char *name = malloc(strlen(fn->name) + 5);

	if (!kw || !t || !name) {
		free(kw);
		free(t);
		free(name);
		return errmsg_set(err, errlen, "out of memory");
	}
	sprintf(name, "lua.%s", fn->name);
	/* every rule set: act_parse() checks the ones registered, so that
	 * the message names the Lua action */
	kw->kw = name;
	kw->sets = ACT_F_HTTP_ALL | ACT_F_TCP_REQ_CONT | ACT_F_TCP_RES_CONT;
	kw->parse = act_parse;
	kw->exec = act_exec_lua;
	kw->free = act_arg_free;
	t->kws = kw;
	act_register(t);
	fn->reg = t;
	return 0;
}

/* ------------------------------------------------------------------ fetches, converters */

/* Runs a fetch or converter function: <smp> holds the converter's input,
 * or nothing for a fetch; the result replaces it. */
static int smp_run(const struct lua_fn *fn, const struct smp_args *args, struct sample *smp,
                   struct smp_ctx *ctx, int conv)
{
	struct stream *s = stream_of_smp(ctx);
	struct lua_run *run;
	int rc, ok = 0;

	run = lua_run_new(fn, conv ? "converter" : "sample-fetch", 0,
	                  (uint64_t)lua_cfg.session_timeout_ms);
	if (!run)
		return 0;
	run->s = s;
	run->smp = ctx;
	run->px = s ? s->fe : NULL;
	run->dir = ctx->dir;
	/* a fetch gets the TXN object, a converter its input as a string */
	if (conv)
		lua_push_sample(run->co, smp, 1);
	else
		lua_push_txn(run->co, s && s->txn);
	run->nargs = 1;
	for (int i = 0; i < args->n && i < SMP_MAX_ARGS; i++) {
		if (args->a[i].type == ARGT_SINT)
			lua_pushinteger(run->co, (lua_Integer)args->a[i].data.sint);
		else
			lua_pushstring(run->co, args->a[i].text ? args->a[i].text : "");
		run->nargs++;
	}
	rc = lua_run_resume(run);
	if (rc == LUA_YIELD) {
		lua_report(run->px, "Lua %s '%s': yield not allowed.", run->what, fn->name);
	} else if (rc == LUA_OK && lua_gettop(run->co) > 0) {
		lua_State *co = run->co;
		struct sample out;

		/* strings go into a scratch buffer: the coroutine is freed below */
		if (lua_to_sample(co, -1, &out, NULL, 0)) {
			if (out.type == SMP_T_STR) {
				size_t size;
				char *p = smp_trash_get(&size);

				if (out.data.str.len <= size) {
					memcpy(p, out.data.str.ptr, out.data.str.len);
					memset(smp, 0, sizeof(*smp));
					smp->type = SMP_T_STR;
					smp->data.str.ptr = p;
					smp->data.str.len = out.data.str.len;
					smp->data.str.size = size;
					ok = 1;
				}
			} else {
				unsigned int opt = smp->opt;

				*smp = out;
				smp->opt = opt;
				ok = 1;
			}
		} else {
			/* nil, a table...: the boolean false, as in HAProxy (a
			 * value all the same: "-m found" matches) */
			unsigned int opt = smp->opt;

			memset(smp, 0, sizeof(*smp));
			smp->type = SMP_T_BOOL;
			smp->opt = opt;
			ok = 1;
		}
	}
	lua_run_free(run);
	return ok;
}

static int fetch_fn(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return smp_run(args->kw_priv, args, smp, ctx, 0);
}

static int conv_fn(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return smp_run(args->kw_priv, args, smp, ctx, 1);
}

int lua_reg_fetch(struct lua_fn *fn, char *err, size_t errlen)
{
	struct smp_fetch_kw *kw = calloc(2, sizeof(*kw));
	struct smp_fetch_table *t = calloc(1, sizeof(*t));
	char *name = malloc(strlen(fn->name) + 5);

	if (!kw || !t || !name) {
		free(kw);
		free(t);
		free(name);
		return errmsg_set(err, errlen, "out of memory");
	}
	sprintf(name, "lua.%s", fn->name);
	kw->kw = name;
	kw->fn = fetch_fn;
	for (int i = 0; i < 5; i++)
		kw->args[i] = ARGT_STR;
	kw->min_args = 0;
	kw->out_type = SMP_T_STR;
	kw->use = SMP_USE_INTRN;
	kw->priv = fn;
	t->kws = kw;
	smp_register_fetches(t);
	fn->reg = t;
	return 0;
}

int lua_reg_conv(struct lua_fn *fn, char *err, size_t errlen)
{
	struct smp_conv_kw *kw = calloc(2, sizeof(*kw));
	struct smp_conv_table *t = calloc(1, sizeof(*t));
	char *name = malloc(strlen(fn->name) + 5);

	if (!kw || !t || !name) {
		free(kw);
		free(t);
		free(name);
		return errmsg_set(err, errlen, "out of memory");
	}
	sprintf(name, "lua.%s", fn->name);
	kw->kw = name;
	kw->fn = conv_fn;
	for (int i = 0; i < 5; i++)
		kw->args[i] = ARGT_STR;
	kw->min_args = 0;
	kw->in_type = SMP_T_STR;
	kw->out_type = SMP_T_STR;
	kw->priv = fn;
	t->kws = kw;
	smp_register_convs(t);
	fn->reg = t;
	return 0;
}

/* ------------------------------------------------------------------ tasks */

struct lua_task {
	const struct lua_fn *fn;
	struct lua_run *run;
};

static struct task *lua_task_cb(struct task *t, void *ctx, unsigned int state)
{
	struct lua_task *lt = ctx;
	int rc;

	if (!lt->run) {
		lt->run = lua_run_new(lt->fn, "task", 1, (uint64_t)lua_cfg.task_timeout_ms);
		if (!lt->run)
			goto end;
		lt->run->nargs = 0;
		lt->run->task = t;
	}
	/* a sleep waits for its date; a socket's event resumes at once (the
	 * operation tries again and yields if it still cannot go on) */
	if (lt->run->wake_ms && clock_mono_ms() < lt->run->wake_ms &&
	    !(lt->run->socks && (state & TASK_WOKEN_IO))) {
		task_set_expire(t, lt->run->wake_ms);
		return t;
	}
	rc = lua_run_resume(lt->run);
	if (rc == LUA_YIELD) {
		if (lt->run->wake_ms)
			task_set_expire(t, lt->run->wake_ms);
		else
			task_wakeup(t, TASK_WOKEN_OTHER);
		return t;
	}
end:
	lua_run_free(lt->run);
	free(lt);
	task_destroy(t);
	return NULL;
}

void lua_tasks_start(int tid)
{
	for (struct lua_fn *f = lua_fns; f; f = f->next) {
		struct lua_task *lt;
		struct task *t;

		if (f->kind != LFN_TASK)
			continue;
		if (f->shared_ref != LUA_NOREF ? tid != 0 : !f->thread_ref[tid])
			continue;
		lt = calloc(1, sizeof(*lt));
		if (!lt)
			continue;
		lt->fn = f;
		t = task_new(lua_task_cb, lt, tid, TC_NORMAL, "lua-task");
		if (!t) {
			free(lt);
			continue;
		}
		task_wakeup(t, TASK_WOKEN_OTHER);
	}
}

/* ------------------------------------------------------------------ CLI */

static int cli_lua(char **args, int nargs, struct cli_out *out, int level)
{
	struct lua_fn *best = NULL;
	size_t best_len = 0;
	struct lua_run *run;
	char line[256];
	int rc;

	(void)level;
	/* the command whose words start the line */
	for (struct lua_fn *f = lua_fns; f; f = f->next) {
		size_t n = 0;
		int ok = 1;

		if (f->kind != LFN_CLI)
			continue;
		line[0] = 0;
		for (int i = 0; i < nargs; i++) {
			if (i)
				strncat(line, " ", sizeof(line) - strlen(line) - 1);
			strncat(line, args[i], sizeof(line) - strlen(line) - 1);
			if (strcmp(line, f->name) == 0) {
				n = strlen(line);
				break;
			}
		}
		if (!n)
			ok = 0;
		if (ok && n > best_len) {
			best = f;
			best_len = n;
		}
	}
	if (!best)
		return -1;
	run = lua_run_new(best, "cli", 0, (uint64_t)lua_cfg.session_timeout_ms);
	if (!run) {
		cli_printf(out, "Lua cli '%s': cannot start.\n", best->name);
		return -1;
	}
	run->cli = out;
	lua_push_cli_applet(run->co);
	run->nargs = 1;
	for (int i = 0; i < nargs; i++) {
		lua_pushstring(run->co, args[i]);
		run->nargs++;
	}
	rc = lua_run_resume(run);
	lua_run_free(run);
	return rc == LUA_OK ? 0 : -1;
}

int lua_reg_cli(struct lua_fn *fn, char *err, size_t errlen)
{
	struct cli_kw *kw = calloc(2, sizeof(*kw));
	struct cli_kw_table *t = calloc(1, sizeof(*t));
	char *words = strdup(fn->name);
	int n = 0;

	if (!kw || !t || !words) {
		free(kw);
		free(t);
		free(words);
		return errmsg_set(err, errlen, "out of memory");
	}
	for (char *p = strtok(words, " "); p && n < 4; p = strtok(NULL, " "))
		kw->words[n++] = p;
	kw->level = 0;
	kw->fn = cli_lua;
	kw->usage = fn->cli_usage;
	t->kws = kw;
	cli_register(t);
	fn->reg = t;
	return 0;
}
