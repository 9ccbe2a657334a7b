/* Lua states, their limits and the configuration keywords that load
 * scripts: lua-load, lua-load-per-thread, lua-prepend-path and the
 * tune.lua.* settings (HAProxy 2.6 manual, section 3.2 and 3.3; Lua API
 * reference for the semantics).
 *
 * Locking and ownership (see lua_int.h for the two kinds of state):
 * - lua_fns and the settings: written at configuration time (one thread),
 *   read-only afterwards.
 * - the shared state: its lua_State, its memory counter and every
 *   reference into its registry are touched only under lua_shared->lock.
 *   A thread enters the state through lua_vm_enter() (which counts
 *   nesting: a Lua fetch called from a Lua action re-enters the state it
 *   already holds) and leaves it at each yield, so a suspended coroutine
 *   never keeps the lock.
 * - a per-thread state is touched by its owner thread only (and by the
 *   main thread at start-up, before the workers run).
 *
 * Fairness: every coroutine runs with a count hook (tune.lua.forced-yield
 * instructions). The hook ends the run with "execution timeout" once its
 * time budget is spent, and otherwise makes a yieldable run yield, so the
 * thread goes back to its event loop. Code that cannot yield there (sample
 * fetches, converters, rule sets that cannot wait, or a yieldable run
 * inside a C function that calls Lua back) gets at most
 * LUA_NOYIELD_MAX_MS per slice (since its last resume) whatever the
 * timeout says: the watchdog must never see a thread stuck in Lua.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lualib.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/clock.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/expr/vars.h>
#include <sluice/proxy/proxy.h>
#include "lua_int.h"

/* The most a run that cannot yield may take, whatever its timeout: half
 * the watchdog's first warning. */
#define LUA_NOYIELD_MAX_MS 500

struct lua_settings lua_cfg = {
	.forced_yield = 10000,
	.session_timeout_ms = 4000,
	.task_timeout_ms = 0,
	.service_timeout_ms = 4000,
};
struct lua_vm *lua_shared;
struct lua_vm *lua_thread_vm[MAX_THREADS];
struct lua_fn *lua_fns;
__thread struct lua_run *lua_cur;
char lua_done_marker;

/* Per-thread nesting of lua_vm_enter() on the shared state. */
static __thread int shared_depth;

/* Scripts for lua-load-per-thread, loaded again in each thread's state
 * once nbthread is known; and the prepended paths, replayed there too. */
struct lua_file {
	struct lua_file *next;
	char *path;
	char **args;
	int nargs;
	char *cfg_file;
	int cfg_line;
	int per_thread;
	int is_path;                 /* lua-prepend-path: path = pattern, args[0] = type */
};
static struct lua_file *lua_files, **lua_files_tail = &lua_files;

/* ------------------------------------------------------------------ memory */

static void *lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct lua_vm *vm = ud;

	if (!ptr)
		osize = 0;
	if (nsize == 0) {
		free(ptr);
		vm->mem -= osize;
		return NULL;
	}
	/* the limit applies while a script runs (lua_cur is one of this
	 * state's runs): a memory error is then caught by its resume; the
	 * set-up around a run (coroutine, arguments) is not protected and
	 * must not fail that way */
	if (lua_cfg.maxmem && nsize > osize && vm->mem + (nsize - osize) > lua_cfg.maxmem &&
	    lua_cur && lua_cur->vm == vm)
		return NULL;
	ptr = realloc(ptr, nsize);
	if (ptr)
		vm->mem += nsize - osize;
	return ptr;
}

/* ------------------------------------------------------------------ errors */

void lua_report(struct proxy *px, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = 0;
	if (px && !list_empty(&px->logs))
		log_send(&px->logs, 3, NULL, global.pid, msg, (size_t)n);
	else
		log_send(&global.logs, 3, NULL, global.pid, msg, (size_t)n);
	if (!global.quiet)
		fprintf(stderr, "[ALERT] %s\n", msg);
}

int lua_raise_done(lua_State *L)
{
	lua_pushlightuserdata(L, &lua_done_marker);
	return lua_error(L);
}

/* ------------------------------------------------------------------ states */

void lua_vm_enter(struct lua_vm *vm)
{
	if (vm->tid >= 0)
		return;
	if (shared_depth++ == 0)
		lock_take(&vm->lock);
}

void lua_vm_leave(struct lua_vm *vm)
{
	if (vm->tid >= 0)
		return;
	if (--shared_depth == 0)
		lock_release(&vm->lock);
}

/* The paths of lua-prepend-path, in front of package.path/cpath. */
static int vm_prepend_path(lua_State *L, const char *pattern, const char *type, char *err,
                           size_t errlen)
{
	const char *field = strcmp(type, "cpath") == 0 ? "cpath" : "path";

	lua_getglobal(L, "package");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		return errmsg_set(err, errlen, "no 'package' table in the Lua state");
	}
	lua_getfield(L, -1, field);
	lua_pushfstring(L, "%s;%s", pattern, lua_tostring(L, -1) ? lua_tostring(L, -1) : "");
	lua_setfield(L, -3, field);
	lua_pop(L, 2);
	return 0;
}

static struct lua_vm *vm_new(int tid)
{
	struct lua_vm *vm = calloc(1, sizeof(*vm));

	if (!vm)
		return NULL;
	vm->tid = tid;
	if (tid < 0)
		lock_init(&vm->lock, LK_LUA, "lua");
	vm->L = lua_newstate(lua_alloc, vm);
	if (!vm->L) {
		free(vm);
		return NULL;
	}
	*(struct lua_vm **)lua_getextraspace(vm->L) = vm;
	luaL_openlibs(vm->L);
	lua_api_core(vm->L);
	lua_api_txn(vm->L);
	lua_api_applet(vm->L);
	lua_api_px(vm->L);
	lua_api_sock(vm->L);
	lua_api_chn(vm->L);
	/* core.thread: 0 in the shared state, as HAProxy's manual says, else
	 * the thread's number (from 1) */
	lua_getglobal(vm->L, "core");
	lua_pushinteger(vm->L, tid < 0 ? 0 : tid + 1);
	lua_setfield(vm->L, -2, "thread");
	lua_pop(vm->L, 1);
	/* the prepended paths so far (lua-prepend-path applies to the states
	 * that load scripts after it, as in HAProxy) */
	for (struct lua_file *f = lua_files; f; f = f->next)
		if (f->is_path)
			vm_prepend_path(vm->L, f->path, f->args[0], NULL, 0);
	return vm;
}

/* Variable names are interned at configuration time only (vars.c): the
 * names a script writes as string literals ("txn.foo", 'sess.bar') are
 * interned when it loads, so that txn:set_var() and txn:get_var() find
 * them at run time. A name built at run time that neither the
 * configuration nor a literal mentions is not found (set_var fails). */
static void intern_var_names(const char *path)
{
	static const char *const scopes[] = { "proc.", "sess.", "txn.", "req.", "res." };
	FILE *f = fopen(path, "r");
	char *text;
	long len;

	if (!f)
		return;
	if (fseek(f, 0, SEEK_END) < 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(text = malloc((size_t)len + 1))) {
		fclose(f);
		return;
	}
	len = (long)fread(text, 1, (size_t)len, f);
	fclose(f);
	text[len] = 0;
	for (long i = 0; i < len; i++) {
		char q = text[i];
		long j;

		if (q != '"' && q != '\'')
			continue;
		for (j = i + 1; j < len && text[j] != q && text[j] != '\n' && j - i < 200; j++)
			;
		if (j >= len || text[j] != q)
			continue;
		for (size_t k = 0; k < sizeof(scopes) / sizeof(scopes[0]); k++) {
			size_t sl = strlen(scopes[k]);
			struct var_ref ref;

			if ((size_t)(j - i - 1) > sl && strncmp(text + i + 1, scopes[k], sl) == 0)
				vars_parse_ref(text + i + 1, (size_t)(j - i - 1), &ref, NULL, 0);
		}
		i = j;
	}
	free(text);
}

/* Loads and runs <path> in <vm> with <args> as `...`. Returns 0, or -1 with
 * the script's error (file and line included by Lua) in <err>. */
static int vm_load_file(struct lua_vm *vm, const char *path, char **args, int nargs,
                        char *err, size_t errlen)
{
	lua_State *L = vm->L;
	struct lua_run *saved = lua_cur;
	int rc;

	lua_cur = NULL;
	intern_var_names(path);
	if (luaL_loadfile(L, path) != LUA_OK) {
		errmsg_set(err, errlen, "error in Lua file '%s': %s", path, lua_tostring(L, -1));
		lua_pop(L, 1);
		lua_cur = saved;
		return -1;
	}
	for (int i = 0; i < nargs; i++)
		lua_pushstring(L, args[i]);
	rc = lua_pcall(L, nargs, 0, 0);
	lua_cur = saved;
	if (rc != LUA_OK) {
		errmsg_set(err, errlen, "Lua runtime error: %s",
		           lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "unknown error");
		lua_pop(L, 1);
		return -1;
	}
	return 0;
}

struct lua_fn *lua_fn_find(enum lua_fn_kind kind, const char *name)
{
	for (struct lua_fn *f = lua_fns; f; f = f->next)
		if (f->kind == kind && strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

struct lua_vm *lua_fn_target(const struct lua_fn *fn, int *ref)
{
	int tid = th_ctx ? th_ctx->tid : 0;

	if (fn->shared_ref != LUA_NOREF && lua_shared) {
		*ref = fn->shared_ref;
		return lua_shared;
	}
	if (!lua_thread_vm[tid] || !fn->thread_ref[tid])
		return NULL;
	*ref = fn->thread_ref[tid];
	return lua_thread_vm[tid];
}

/* ------------------------------------------------------------------ runs */

static void lua_hook(lua_State *L, lua_Debug *ar)
{
	struct lua_run *r = lua_cur;
	uint64_t now, limit;

	(void)ar;
	if (!r)
		return;
	now = clock_mono_ms();
	limit = r->timeout_ms;
	if (limit && now - r->start_ms >= limit) {
		lua_pushstring(L, "execution timeout");
		lua_error(L);
	}
	if (r->yieldable && lua_isyieldable(L)) {
		r->wake_ms = 0;
		lua_yield(L, 0);
	}
	/* here the code cannot yield (not a yieldable run, or inside a C
	 * function that calls Lua back: table.sort's comparator, a gsub
	 * callback...): however long its timeout, a slice of it never runs
	 * long enough for the watchdog to see a stuck thread */
	if (now - r->slice_ms >= LUA_NOYIELD_MAX_MS) {
		lua_pushstring(L, "execution timeout");
		lua_error(L);
	}
}

void lua_deadline_check(lua_State *L)
{
	struct lua_run *r = lua_cur;

	if (r && r->timeout_ms && clock_mono_ms() - r->start_ms >= r->timeout_ms) {
		lua_pushstring(L, "execution timeout");
		lua_error(L);
	}
}

struct lua_run *lua_run_new(const struct lua_fn *fn, const char *what, int yieldable,
                            uint64_t timeout_ms)
{
	struct lua_run *run;
	struct lua_vm *vm;
	int ref;

	vm = lua_fn_target(fn, &ref);
	if (!vm)
		return NULL;
	run = calloc(1, sizeof(*run));
	if (!run)
		return NULL;
	run->vm = vm;
	run->fn = fn;
	run->what = what;
	run->yieldable = yieldable;
	run->timeout_ms = timeout_ms;
	run->co_ref = LUA_NOREF;
	lua_vm_enter(vm);
	if (!lua_checkstack(vm->L, 4) || !(run->co = lua_newthread(vm->L))) {
		lua_vm_leave(vm);
		free(run);
		return NULL;
	}
	run->co_ref = luaL_ref(vm->L, LUA_REGISTRYINDEX);
	lua_sethook(run->co, lua_hook, LUA_MASKCOUNT, lua_cfg.forced_yield > 0 ?
	            lua_cfg.forced_yield : 10000);
	lua_rawgeti(run->co, LUA_REGISTRYINDEX, ref);
	/* the VM stays entered: the caller pushes the arguments, then
	 * lua_run_resume() leaves it */
	return run;
}

int lua_run_resume(struct lua_run *run)
{
	struct lua_run *saved = lua_cur;
	lua_State *co = run->co;
	int nres = 0, rc, nargs;

	if (run->started)
		lua_vm_enter(run->vm);
	if (!run->started) {
		run->started = 1;
		run->start_ms = clock_mono_ms();
	}
	nargs = run->nargs;
	run->nargs = 0;
	run->slice_ms = clock_mono_ms();
	lua_cur = run;
	rc = lua_resume(co, NULL, nargs, &nres);
	lua_cur = saved;
	if (rc == LUA_YIELD) {
		lua_pop(co, nres);
		/* a wait never outlasts the run's time limit: it is resumed
		 * then, and its continuation ends it (lua_deadline_check()) */
		if (run->timeout_ms && run->wake_ms && run->wake_ms > run->start_ms + run->timeout_ms)
			run->wake_ms = run->start_ms + run->timeout_ms;
		lua_vm_leave(run->vm);
		return LUA_YIELD;
	}
	run->entered = 1;
	if (rc == LUA_OK)
		return LUA_OK;   /* the results stay on the coroutine's stack */
	if (lua_touserdata(co, -1) == &lua_done_marker) {
		run->done = 1;
		lua_settop(co, 0);
		return LUA_OK;
	}
	if (rc == LUA_ERRMEM) {
		lua_report(run->px, "Lua %s '%s': out of memory error.", run->what, run->fn->name);
	} else if (lua_type(co, -1) == LUA_TSTRING) {
		const char *msg = lua_tostring(co, -1);

		if (strcmp(msg, "execution timeout") == 0)
			run->timed_out = 1;
		if (run->timed_out)
			lua_report(run->px, "Lua %s '%s': execution timeout.", run->what, run->fn->name);
		else
			lua_report(run->px, "Lua %s '%s': runtime error: %s.", run->what, run->fn->name, msg);
	} else {
		lua_report(run->px, "Lua %s '%s' returned an unknown error.", run->what, run->fn->name);
	}
	lua_settop(co, 0);
	return rc;
}

void lua_run_free(struct lua_run *run)
{
	if (!run)
		return;
	if (!run->entered)
		lua_vm_enter(run->vm);
	if (run->socks)
		lua_socks_close(run);
	luaL_unref(run->vm->L, LUA_REGISTRYINDEX, run->co_ref);
	lua_vm_leave(run->vm);
	free(run);
}
/* ------------------------------------------------------------------ configuration */

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static struct lua_file *file_note(struct cfg_ctx *ctx, char **args, int nargs, int per_thread)
{
	struct lua_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->path = strdup(args[1]);
	f->nargs = nargs - 2;
	f->args = calloc((size_t)(f->nargs + 1), sizeof(char *));
	f->cfg_file = strdup(ctx->file);
	f->cfg_line = ctx->line;
	f->per_thread = per_thread;
	for (int i = 0; f->args && i < f->nargs; i++)
		f->args[i] = strdup(args[2 + i]);
	*lua_files_tail = f;
	lua_files_tail = &f->next;
	return f;
}

static int kw_lua_load(KW_ARGS)
{
	int per_thread = strcmp(args[0], "lua-load-per-thread") == 0;
	struct lua_vm **vmp = per_thread ? &lua_thread_vm[0] : &lua_shared;

	if (nargs < 2)
		return errmsg_set(err, errlen, "'%s' expects a path to a Lua file as argument.",
		                  args[0]);
	if (!*vmp && !(*vmp = vm_new(per_thread ? 0 : -1)))
		return errmsg_set(err, errlen, "cannot create the Lua state (out of memory)");
	if (!file_note(ctx, args, nargs, per_thread))
		return errmsg_set(err, errlen, "out of memory");
	lua_cfg.loaded = 1;
	/* the script runs now, so that what it registers is known to the
	 * lines that follow (actions, fetches, services) */
	lua_vm_enter(*vmp);
	int rc = vm_load_file(*vmp, args[1], args + 2, nargs - 2, err, errlen);
	lua_vm_leave(*vmp);
	return rc;
}

static int kw_lua_prepend_path(KW_ARGS)
{
	struct lua_file *f;
	const char *type = nargs > 2 ? args[2] : "path";

	if (nargs < 2 || nargs > 3)
		return errmsg_set(err, errlen, "'%s' expects a path and an optional type ('path' "
		                  "or 'cpath').", args[0]);
	if (strcmp(type, "path") && strcmp(type, "cpath"))
		return errmsg_set(err, errlen, "'%s': unknown type '%s' (expects 'path' or "
		                  "'cpath').", args[0], type);
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(args[1])) || !(f->args = calloc(2, sizeof(char *))) ||
	    !(f->args[0] = strdup(type)))
		return errmsg_set(err, errlen, "out of memory");
	f->is_path = 1;
	f->nargs = 1;
	*lua_files_tail = f;
	lua_files_tail = &f->next;
	if (lua_shared)
		vm_prepend_path(lua_shared->L, f->path, type, NULL, 0);
	if (lua_thread_vm[0])
		vm_prepend_path(lua_thread_vm[0]->L, f->path, type, NULL, 0);
	return 0;
}

static int kw_lua_tune(KW_ARGS)
{
	if (nargs != 2)
		return errmsg_set(err, errlen, "'%s' expects exactly one argument.", args[0]);
	if (strcmp(args[0], "tune.lua.forced-yield") == 0) {
		long v;

		if (cfg_parse_uint(args[1], 1000000000L, &v, err, errlen) < 0)
			return -1;
		if (v <= 0)
			return errmsg_set(err, errlen, "'%s' expects a positive number.", args[0]);
		lua_cfg.forced_yield = (int)v;
		return 0;
	}
	if (strcmp(args[0], "tune.lua.maxmem") == 0) {
		long v;

		/* megabytes, as HAProxy */
		if (cfg_parse_uint(args[1], 1L << 30, &v, err, errlen) < 0)
			return -1;
		lua_cfg.maxmem = (size_t)v * 1024 * 1024;
		return 0;
	}
	if (strcmp(args[0], "tune.lua.session-timeout") == 0)
		return cfg_parse_time_ms(args[1], &lua_cfg.session_timeout_ms, err, errlen);
	if (strcmp(args[0], "tune.lua.task-timeout") == 0)
		return cfg_parse_time_ms(args[1], &lua_cfg.task_timeout_ms, err, errlen);
	if (strcmp(args[0], "tune.lua.service-timeout") == 0)
		return cfg_parse_time_ms(args[1], &lua_cfg.service_timeout_ms, err, errlen);
	return errmsg_set(err, errlen, "unknown keyword '%s'", args[0]);
}

static const struct cfg_kw lua_kws[] = {
	{ "lua-load",                 NULL, CFG_SEC_GLOBAL, kw_lua_load },
	{ "lua-load-per-thread",      NULL, CFG_SEC_GLOBAL, kw_lua_load },
	{ "lua-prepend-path",         NULL, CFG_SEC_GLOBAL, kw_lua_prepend_path },
	{ "tune.lua.forced-yield",    NULL, CFG_SEC_GLOBAL, kw_lua_tune },
	{ "tune.lua.maxmem",          NULL, CFG_SEC_GLOBAL, kw_lua_tune },
	{ "tune.lua.session-timeout", NULL, CFG_SEC_GLOBAL, kw_lua_tune },
	{ "tune.lua.task-timeout",    NULL, CFG_SEC_GLOBAL, kw_lua_tune },
	{ "tune.lua.service-timeout", NULL, CFG_SEC_GLOBAL, kw_lua_tune },
	{ NULL }
};
CFG_REGISTER(lua_kws)

/* The scripts to load in each thread's state are loaded: forget them. */
static void files_free(void)
{
	struct lua_file *f, *next;

	for (f = lua_files; f; f = next) {
		next = f->next;
		for (int i = 0; f->args && i < f->nargs; i++)
			free(f->args[i]);
		free(f->args);
		free(f->path);
		free(f->cfg_file);
		free(f);
	}
	lua_files = NULL;
	lua_files_tail = &lua_files;
}

/* Runs the functions registered with core.register_init in <vm> (in
 * registration order). Returns the number of errors. */
static int run_inits(struct lua_vm *vm)
{
	int errors = 0;
	int tid = vm->tid;

	/* lua_fns is in reverse registration order: walk it backwards */
	struct lua_fn *list[256];
	int n = 0;

	for (struct lua_fn *f = lua_fns; f && n < 256; f = f->next)
		if (f->kind == LFN_INIT)
			list[n++] = f;
	while (n-- > 0) {
		struct lua_fn *f = list[n];
		int ref = tid < 0 ? f->shared_ref : f->thread_ref[tid];

		if (ref == LUA_NOREF || ref == 0)
			continue;
		lua_vm_enter(vm);
		lua_rawgeti(vm->L, LUA_REGISTRYINDEX, ref);
		if (lua_pcall(vm->L, 0, 0, 0) != LUA_OK) {
			if (lua_touserdata(vm->L, -1) != &lua_done_marker) {
				fprintf(stderr, "[ALERT] Lua init: %s.\n",
				        lua_tostring(vm->L, -1) ? lua_tostring(vm->L, -1) : "unknown error");
				errors++;
			}
			lua_pop(vm->L, 1);
		}
		lua_vm_leave(vm);
	}
	return errors;
}

/* Once nbthread is known: every thread gets its own state with the
 * lua-load-per-thread scripts; then the init functions run. */
static int lua_post(void)
{
	char err[1024];
	int errors = 0;

	if (!lua_cfg.loaded)
		return 0;
	if (lua_thread_vm[0]) {
		for (int t = 1; t < global.nbthread && t < MAX_THREADS; t++) {
			struct lua_vm *vm;

			/* a configuration parsed again in the same process (the
			 * configuration fuzzer) keeps the states it has */
			if (lua_thread_vm[t])
				continue;
			vm = vm_new(t);
			if (!vm) {
				cfg_alert(NULL, 0, "cannot create the Lua state of thread %d", t + 1);
				return 1;
			}
			lua_thread_vm[t] = vm;
			for (struct lua_file *f = lua_files; f; f = f->next) {
				if (!f->per_thread || f->is_path)
					continue;
				if (vm_load_file(vm, f->path, f->args, f->nargs, err, sizeof(err)) < 0) {
					cfg_alert(f->cfg_file, f->cfg_line, "%s", err);
					return 1;
				}
			}
		}
	}
	/* the proxies exist now: core.proxies & co in every state */
	if (lua_shared) {
		lua_px_publish(lua_shared->L);
	}
	for (int t = 0; t < global.nbthread && t < MAX_THREADS; t++)
		if (lua_thread_vm[t])
			lua_px_publish(lua_thread_vm[t]->L);
	if (lua_shared)
		errors += run_inits(lua_shared);
	for (int t = 0; t < global.nbthread && t < MAX_THREADS; t++)
		if (lua_thread_vm[t])
			errors += run_inits(lua_thread_vm[t]);
	files_free();
	return errors;
}

static struct cfg_post_hook lua_post_hook = { .fn = lua_post, .order = 50 };

static int lua_thread_init(int tid)
{
	lua_tasks_start(tid);
	return 0;
}

static struct thread_init_hook lua_thread_hook = { .fn = lua_thread_init };

__attribute__((constructor)) static void lua_core_register(void)
{
	cfg_register_post(&lua_post_hook);
	thread_register_init(&lua_thread_hook);
}
