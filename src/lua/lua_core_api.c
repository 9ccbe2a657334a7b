/* The `core` and `act` tables of HAProxy 2.6's Lua API: logging, time,
 * sleeping and yielding, ACL and map edits, Map and regex objects, and the
 * register_* functions through which scripts extend the configuration.
 *
 * Every function here runs on the thread that runs the script, inside the
 * state's lock when the state is shared (lua_core.c). The register_*
 * functions are only valid while scripts load (configuration time, one
 * thread) and fail at run time, as in HAProxy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/core/sched.h>
#include <sluice/expr/pattern.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/stats.h>
#include <sluice/expr/regex.h>
#include <sluice/http/act.h>
#include <sluice/proxy/proxy.h>
#include "lua_int.h"

/* set once the workers run: register_* are refused from then on */
static int lua_started(void)
{
	return th_ctx != NULL;
}

/* ------------------------------------------------------------------ logs */

static const char *const lvl_tag[8] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"
};

static void send_lua_log(int level, const char *msg, size_t len)
{
	struct lua_run *r = lua_cur;
	struct proxy *px = r ? r->px : NULL;

	if (level < 0 || level > 7)
		level = 7;
	if (px && !list_empty(&px->logs))
		log_send(&px->logs, level, NULL, global.pid, msg, len);
	else
		log_send(&global.logs, level, NULL, global.pid, msg, len);
	if (!global.quiet)
		fprintf(stderr, "[%s] (%d) : %.*s\n", lvl_tag[level], (int)global.pid, (int)len, msg);
}

static int l_log(lua_State *L)
{
	lua_Integer lvl = luaL_checkinteger(L, 1);
	size_t len;
	const char *msg = luaL_checklstring(L, 2, &len);

	if (lvl < 0 || lvl > 7)
		return luaL_argerror(L, 1, "Invalid loglevel.");
	send_lua_log((int)lvl, msg, len);
	return 0;
}

static int l_log_at(lua_State *L, int lvl)
{
	size_t len;
	const char *msg = luaL_checklstring(L, 1, &len);

	send_lua_log(lvl, msg, len);
	return 0;
}
static int l_debug(lua_State *L)   { return l_log_at(L, 7); }
static int l_info(lua_State *L)    { return l_log_at(L, 6); }
static int l_warning(lua_State *L) { return l_log_at(L, 4); }
static int l_alert(lua_State *L)   { return l_log_at(L, 1); }

/* ------------------------------------------------------------------ time, yield */

static int l_now(lua_State *L)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	lua_createtable(L, 0, 2);
	lua_pushinteger(L, tv.tv_sec);
	lua_setfield(L, -2, "sec");
	lua_pushinteger(L, tv.tv_usec);
	lua_setfield(L, -2, "usec");
	return 1;
}

/* Continuation of a sleep: the coroutine comes back here each time it is
 * resumed, and yields again until its wake-up date. */
static int sleep_k(lua_State *L, int status, lua_KContext ctx)
{
	lua_deadline_check(L);
	struct lua_run *r = lua_cur;

	(void)status;
	if (r && clock_mono_ms() < (uint64_t)ctx) {
		r->wake_ms = (uint64_t)ctx;
		return lua_yieldk(L, 0, ctx, sleep_k);
	}
	if (r)
		r->wake_ms = 0;
	return 0;
}

static int do_sleep(lua_State *L, uint64_t ms)
{
	struct lua_run *r = lua_cur;

	if (!r || !r->yieldable || !lua_isyieldable(L)) {
		if (r && r->fn && (r->fn->kind == LFN_FETCH || r->fn->kind == LFN_CONV))
			return luaL_error(L, "yield not allowed");
		/* init functions and other places that cannot yield: block,
		 * as HAProxy's start-up does */
		if (!lua_started() || !r) {
			usleep((useconds_t)(ms * 1000));
			return 0;
		}
		return luaL_error(L, "yield not allowed");
	}
	return sleep_k(L, LUA_OK, (lua_KContext)(clock_mono_ms() + ms));
}

static int l_msleep(lua_State *L)
{
	lua_Integer ms = luaL_checkinteger(L, 1);

	return do_sleep(L, ms > 0 ? (uint64_t)ms : 0);
}

static int l_sleep(lua_State *L)
{
	lua_Integer s = luaL_checkinteger(L, 1);

	return do_sleep(L, s > 0 ? (uint64_t)s * 1000 : 0);
}

static int yield_k(lua_State *L, int status, lua_KContext ctx)
{
	lua_deadline_check(L);
	(void)status;
	(void)ctx;
	return 0;
}

static int l_yield(lua_State *L)
{
	struct lua_run *r = lua_cur;

	if (!r || !r->yieldable || !lua_isyieldable(L)) {
		if (r && r->fn && (r->fn->kind == LFN_FETCH || r->fn->kind == LFN_CONV))
			return luaL_error(L, "yield not allowed");
		return 0;
	}
	r->wake_ms = 0;
	return lua_yieldk(L, 0, 0, yield_k);
}

static int l_done(lua_State *L)
{
	return lua_raise_done(L);
}

static int l_set_nice(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 1);

	(void)n;   /* sluice's scheduler has no nice values: accepted, no effect */
	return 0;
}

/* core.get_info(): the fields of `show info`, by name (numbers as
 * integers), as HAProxy returns them. */
static int l_get_info(lua_State *L)
{
	struct cli_out o = { 0 };
	char *line, *save = NULL;

	lua_newtable(L);
	stats_info_text(&o);
	if (!o.buf)
		return 1;
	for (line = strtok_r(o.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *v, *end;
		long long n;

		if (!colon)
			continue;
		*colon = 0;
		v = colon + 1;
		while (*v == ' ')
			v++;
		n = strtoll(v, &end, 10);
		if (*v && !*end)
			lua_pushinteger(L, (lua_Integer)n);
		else
			lua_pushstring(L, v);
		lua_setfield(L, -2, line);
	}
	free(o.buf);
	return 1;
}

static int l_thread(lua_State *L)
{
	lua_pushinteger(L, th_ctx ? th_ctx->tid + 1 : 0);
	return 1;
}

/* ------------------------------------------------------------------ ACLs, maps */

static struct pat_ref *ref_arg(lua_State *L, int idx)
{
	const char *name = luaL_checkstring(L, idx);
	struct pat_ref *ref = pat_ref_lookup(name);

	return ref;
}

static int l_add_acl(lua_State *L)
{
	struct pat_ref *ref = ref_arg(L, 1);
	const char *key = luaL_checkstring(L, 2);
	char err[256];

	if (ref && pat_ref_add(ref, key, NULL, err, sizeof(err)) < 0)
		return luaL_error(L, "%s", err);
	return 0;
}

static int l_del_acl(lua_State *L)
{
	struct pat_ref *ref = ref_arg(L, 1);
	const char *key = luaL_checkstring(L, 2);

	if (ref)
		pat_ref_delete(ref, key);
	return 0;
}

static int l_set_map(lua_State *L)
{
	struct pat_ref *ref = ref_arg(L, 1);
	const char *key = luaL_checkstring(L, 2);
	const char *val = luaL_checkstring(L, 3);
	char err[256];
	int n;

	if (!ref)
		return 0;
	n = pat_ref_set(ref, key, val, err, sizeof(err));
	if (n < 0)
		return luaL_error(L, "%s", err);
	if (n == 0 && pat_ref_add(ref, key, val, err, sizeof(err)) < 0)
		return luaL_error(L, "%s", err);
	return 0;
}

/* core.Map: a map file looked up from Lua. The object holds an index of
 * the reference (shared with the configuration's own lookups when the
 * method matches). */
struct lua_map {
	struct pat_expr *expr;
};

#define MAP_MT "sluice.Map"

static int l_map_new(lua_State *L)
{
	const char *file = luaL_checkstring(L, 1);
	lua_Integer method = luaL_optinteger(L, 2, PAT_MATCH_STR);
	struct lua_map *m;
	struct pat_ref *ref;
	char err[256];

	if (lua_started())
		return luaL_error(L, "core.Map: maps can only be loaded at start-up");
	if (method < PAT_MATCH_INT || method > PAT_MATCH_REG)
		return luaL_argerror(L, 2, "unknown match method");
	ref = map_ref_get(file, err, sizeof(err));
	if (!ref)
		return luaL_error(L, "%s", err);
	m = lua_newuserdatauv(L, sizeof(*m), 0);
	m->expr = pat_expr_get(ref, (enum pat_match)method, 0, SMP_T_STR, err, sizeof(err));
	if (!m->expr)
		return luaL_error(L, "map '%s': %s", file, err);
	luaL_setmetatable(L, MAP_MT);
	return 1;
}

static int map_lookup(lua_State *L, int safe)
{
	struct lua_map *m = luaL_checkudata(L, 1, MAP_MT);
	size_t len;
	const char *key = luaL_checklstring(L, 2, &len);
	struct sample smp, val;

	memset(&smp, 0, sizeof(smp));
	memset(&val, 0, sizeof(val));
	smp.type = SMP_T_STR;
	smp.data.str.ptr = (char *)key;
	smp.data.str.len = len;
	if (pat_expr_match(m->expr, &smp, &val, 1) && (val.type == SMP_T_STR || val.type == SMP_T_BIN)) {
		lua_pushlstring(L, val.data.str.ptr, val.data.str.len);
		return 1;
	}
	if (safe)
		lua_pushstring(L, "");
	else
		lua_pushnil(L);
	return 1;
}
static int l_map_lookup(lua_State *L)  { return map_lookup(L, 0); }
static int l_map_slookup(lua_State *L) { return map_lookup(L, 1); }

/* ------------------------------------------------------------------ regex */

#define REGEX_MT "sluice.Regex"

static int l_regex_new(lua_State *L)
{
	const char *src = luaL_checkstring(L, 1);
	int icase = !lua_toboolean(L, 2);   /* the argument says case-sensitive */
	struct regex **re;
	char err[256];

	re = lua_newuserdatauv(L, sizeof(*re), 0);
	*re = regex_compile(src, icase, err, sizeof(err));
	if (!*re) {
		lua_pushboolean(L, 0);
		lua_pushstring(L, err);
		return 2;
	}
	luaL_setmetatable(L, REGEX_MT);
	lua_pushboolean(L, 1);
	lua_insert(L, -2);
	return 2;
}

static int l_regex_gc(lua_State *L)
{
	struct regex **re = luaL_checkudata(L, 1, REGEX_MT);

	if (*re)
		regex_free(*re);
	*re = NULL;
	return 0;
}

static int l_regex_exec(lua_State *L)
{
	struct regex **re = luaL_checkudata(L, 1, REGEX_MT);
	size_t len;
	const char *s = luaL_checklstring(L, 2, &len);

	lua_pushboolean(L, *re && regex_match(*re, s, len));
	return 1;
}

static int l_regex_match(lua_State *L)
{
	struct regex **re = luaL_checkudata(L, 1, REGEX_MT);
	size_t len;
	const char *s = luaL_checklstring(L, 2, &len);
	long ovec[20];
	int n = *re ? regex_match_groups(*re, s, len, 0, ovec, 10) : 0;

	if (n <= 0) {
		lua_pushboolean(L, 0);
		return 1;
	}
	lua_pushboolean(L, 1);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		if (ovec[2 * i] < 0)
			lua_pushstring(L, "");
		else
			lua_pushlstring(L, s + ovec[2 * i], (size_t)(ovec[2 * i + 1] - ovec[2 * i]));
		lua_rawseti(L, -2, i + 1);
	}
	return 2;
}

/* ------------------------------------------------------------------ registration */

static struct lua_fn *fn_register(lua_State *L, enum lua_fn_kind kind, const char *name,
                                  int fidx)
{
	struct lua_vm *vm = lua_vm_of(L);
	struct lua_fn *fn;

	if (lua_started())
		luaL_error(L, "functions can only be registered while the scripts load");
	luaL_checktype(L, fidx, LUA_TFUNCTION);
	fn = name ? lua_fn_find(kind, name) : NULL;
	if (fn) {
		if (vm->tid < 0 ? fn->shared_ref != LUA_NOREF : fn->thread_ref[vm->tid] != 0) {
			luaL_error(L, "Lua function '%s' already registered", name);
			return NULL;
		}
		if ((vm->tid < 0) != (fn->shared_ref != LUA_NOREF)) {
			luaL_error(L, "Lua function '%s' registered by both lua-load and "
			           "lua-load-per-thread", name);
			return NULL;
		}
	} else {
		fn = calloc(1, sizeof(*fn));
		if (!fn || !(fn->name = strdup(name ? name : ""))) {
			free(fn);
			luaL_error(L, "out of memory");
			return NULL;
		}
		fn->kind = kind;
		fn->shared_ref = LUA_NOREF;
		fn->next = lua_fns;
		lua_fns = fn;
		fn->reg = NULL;
	}
	lua_pushvalue(L, fidx);
	if (vm->tid < 0)
		fn->shared_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	else
		fn->thread_ref[vm->tid] = luaL_ref(L, LUA_REGISTRYINDEX);
	return fn;
}

/* Engine registration happens once per name (the first state that
 * registers it); the other thread states only add their reference. */
static void fn_engine(lua_State *L, struct lua_fn *fn,
                      int (*reg)(struct lua_fn *, char *, size_t))
{
	char err[256];

	if (fn->reg)
		return;
	if (reg(fn, err, sizeof(err)) < 0)
		luaL_error(L, "%s", err);
}

static int l_register_action(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	unsigned int sets = 0;
	lua_Integer nargs = luaL_optinteger(L, 4, 0);
	struct lua_fn *fn;

	luaL_checktype(L, 2, LUA_TTABLE);
	luaL_checktype(L, 3, LUA_TFUNCTION);
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		const char *w = lua_tostring(L, -1);

		if (!w)
			return luaL_error(L, "register_action: action types must be strings");
		if (strcmp(w, "http-req") == 0)
			sets |= ACT_F_HTTP_REQ;
		else if (strcmp(w, "http-res") == 0)
			sets |= ACT_F_HTTP_RES;
		else if (strcmp(w, "http-after-res") == 0)
			sets |= ACT_F_HTTP_AFTER;
		else if (strcmp(w, "tcp-req") == 0)
			sets |= ACT_F_TCP_REQ_CONT;
		else if (strcmp(w, "tcp-res") == 0)
			sets |= ACT_F_TCP_RES_CONT;
		else
			return luaL_error(L, "Lua action environment '%s' is unknown. 'tcp-req', "
			                  "'tcp-res', 'http-req', 'http-res' or 'http-after-res' "
			                  "expected.", w);
		lua_pop(L, 1);
	}
	if (nargs < 0 || nargs > 16)
		return luaL_argerror(L, 4, "invalid number of arguments");
	fn = fn_register(L, LFN_ACTION, name, 3);
	fn->nargs = (int)nargs;
	fn->sets |= sets;
	fn_engine(L, fn, lua_reg_action);
	return 0;
}

static int l_register_fetches(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	struct lua_fn *fn = fn_register(L, LFN_FETCH, name, 2);

	fn_engine(L, fn, lua_reg_fetch);
	return 0;
}

static int l_register_converters(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	struct lua_fn *fn = fn_register(L, LFN_CONV, name, 2);

	fn_engine(L, fn, lua_reg_conv);
	return 0;
}

static int l_register_service(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	const char *mode = luaL_checkstring(L, 2);
	struct lua_fn *fn;

	if (strcmp(mode, "http") && strcmp(mode, "tcp"))
		return luaL_error(L, "Lua service environment '%s' is unknown. 'tcp' or 'http' "
		                  "are expected.", mode);
	fn = fn_register(L, LFN_SERVICE, name, 3);
	fn->svc_tcp = strcmp(mode, "tcp") == 0;
	fn_engine(L, fn, lua_reg_service);
	return 0;
}

/* Init functions and tasks have no name: each registration (in each
 * state that loads the script) is an entry of its own. */
static int l_register_init(lua_State *L)
{
	fn_register(L, LFN_INIT, NULL, 1);
	return 0;
}

static int l_register_task(lua_State *L)
{
	fn_register(L, LFN_TASK, NULL, 1);
	return 0;
}

static int l_register_cli(lua_State *L)
{
	luaL_Buffer b;
	struct lua_fn *fn;
	int n = 0;

	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checkstring(L, 2);
	luaL_checktype(L, 3, LUA_TFUNCTION);
	luaL_buffinit(L, &b);
	for (int i = 1; i <= 5; i++) {
		lua_rawgeti(L, 1, i);
		if (lua_isnil(L, -1)) {
			lua_pop(L, 1);
			break;
		}
		if (!lua_isstring(L, -1))
			return luaL_error(L, "register_cli: words must be strings");
		if (n++)
			luaL_addchar(&b, ' ');
		luaL_addvalue(&b);
	}
	if (!n)
		return luaL_error(L, "register_cli: no command words");
	luaL_pushresult(&b);
	fn = fn_register(L, LFN_CLI, lua_tostring(L, -1), 3);
	if (!fn->cli_usage)
		fn->cli_usage = strdup(lua_tostring(L, 2));
	fn_engine(L, fn, lua_reg_cli);
	return 0;
}

/* ------------------------------------------------------------------ tables */

/* Parts of the API written in Lua: plain data handling that gains
 * nothing from C. */
static const char lua_prelude[] =
	"local core = core\n"
	"function core.concat()\n"
	"  local b = { parts = {} }\n"
	"  function b:add(s) self.parts[#self.parts + 1] = tostring(s) end\n"
	"  function b:dump() return table.concat(self.parts) end\n"
	"  return b\n"
	"end\n"
	"function core.tokenize(str, seps, noblank)\n"
	"  local t, cur = {}, {}\n"
	"  for i = 1, #str do\n"
	"    local c = str:sub(i, i)\n"
	"    if seps:find(c, 1, true) then\n"
	"      if not noblank or #cur > 0 then t[#t + 1] = table.concat(cur) end\n"
	"      cur = {}\n"
	"    else cur[#cur + 1] = c end\n"
	"  end\n"
	"  if not noblank or #cur > 0 then t[#t + 1] = table.concat(cur) end\n"
	"  return t\n"
	"end\n"
	"Regex = { new = core._regex_new }\n"
	"core._regex_new = nil\n"
	"Map = { new = core._map_new }\n"
	"for _, m in ipairs({ 'int', 'ip', 'bin', 'len', 'str', 'beg', 'sub', 'dir', 'dom',\n"
	"                     'end', 'reg' }) do\n"
	"  Map['_' .. m] = core['map_' .. m]\n"
	"  Map[m] = core['map_' .. m]\n"
	"end\n"
	"core._map_new = nil\n";

void lua_api_core(lua_State *L)
{
	static const luaL_Reg core_fns[] = {
		{ "log", l_log }, { "Debug", l_debug }, { "Info", l_info },
		{ "Warning", l_warning }, { "Alert", l_alert },
		{ "now", l_now }, { "msleep", l_msleep }, { "sleep", l_sleep },
		{ "yield", l_yield }, { "done", l_done }, { "set_nice", l_set_nice },
		{ "get_info", l_get_info }, { "thread_id", l_thread },
		{ "add_acl", l_add_acl }, { "del_acl", l_del_acl },
		{ "set_map", l_set_map }, { "del_map", l_del_acl },
		{ "_map_new", l_map_new }, { "_regex_new", l_regex_new },
		{ "register_action", l_register_action },
		{ "register_fetches", l_register_fetches },
		{ "register_converters", l_register_converters },
		{ "register_service", l_register_service },
		{ "register_init", l_register_init },
		{ "register_task", l_register_task },
		{ "register_cli", l_register_cli },
		{ NULL, NULL }
	};
	static const char *const acts[] = {
		"CONTINUE", "STOP", "YIELD", "ERROR", "DONE", "DENY", "ABORT", "INVALID"
	};
	static const char *const meths[] = {
		[PAT_MATCH_INT] = "map_int", [PAT_MATCH_IP] = "map_ip", [PAT_MATCH_BIN] = "map_bin",
		[PAT_MATCH_LEN] = "map_len", [PAT_MATCH_STR] = "map_str", [PAT_MATCH_BEG] = "map_beg",
		[PAT_MATCH_SUB] = "map_sub", [PAT_MATCH_DIR] = "map_dir", [PAT_MATCH_DOM] = "map_dom",
		[PAT_MATCH_END] = "map_end", [PAT_MATCH_REG] = "map_reg",
	};

	luaL_newlib(L, core_fns);
	for (int i = 0; i < 8; i++) {
		lua_pushinteger(L, i);
		lua_setfield(L, -2, lvl_tag[i]);
	}
	for (int i = PAT_MATCH_INT; i <= PAT_MATCH_REG; i++) {
		lua_pushinteger(L, i);
		lua_setfield(L, -2, meths[i]);
		lua_pushinteger(L, i);
		lua_setfield(L, -2, meths[i] + 4);   /* core.str, core.beg... */
	}
	lua_setglobal(L, "core");

	lua_createtable(L, 0, 8);
	for (int i = 0; i < 8; i++) {
		lua_pushinteger(L, i);
		lua_setfield(L, -2, acts[i]);
	}
	lua_setglobal(L, "act");

	luaL_newmetatable(L, MAP_MT);
	lua_newtable(L);
	lua_pushcfunction(L, l_map_lookup);
	lua_setfield(L, -2, "lookup");
	lua_pushcfunction(L, l_map_slookup);
	lua_setfield(L, -2, "slookup");
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);

	luaL_newmetatable(L, REGEX_MT);
	lua_newtable(L);
	lua_pushcfunction(L, l_regex_exec);
	lua_setfield(L, -2, "exec");
	lua_pushcfunction(L, l_regex_match);
	lua_setfield(L, -2, "match");
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, l_regex_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);

	if (luaL_dostring(L, lua_prelude) != LUA_OK)
		lua_pop(L, 1);
}
