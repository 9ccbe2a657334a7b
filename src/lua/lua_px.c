/* core.proxies, core.frontends, core.backends and the Proxy and Server
 * objects of HAProxy 2.6's Lua API (the part of them this release has:
 * names and ids, statistics as `show stat` has them, weights and the
 * administrative state of servers).
 *
 * The tables are built once the configuration is read (lua_px_publish(),
 * from lua_core.c's post-parse hook, one thread); proxies and servers live
 * as long as the process, so the objects hold plain pointers. Changing a
 * server goes through the same functions as the CLI (stats_set_weight(),
 * srv_set_admin()), with their locking.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/stats.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/stktable.h>
#include <sluice/proxy/stream_int.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_state.h>
#include "lua_int.h"

#define PROXY_MT  "sluice.Proxy"
#define SERVER_MT "sluice.Server"
#define TABLE_MT  "sluice.StickTable"

/* The column names of `show stat`, in order (its CSV header). */
static char *col_names[ST_COUNT];

static void load_col_names(void)
{
	struct cli_out o = { 0 };
	char *p, *save = NULL;
	int i = 0;

	if (col_names[0])
		return;
	stats_csv_header(&o);
	if (!o.buf)
		return;
	p = o.buf;
	if (*p == '#')
		p++;
	while (*p == ' ')
		p++;
	for (char *w = strtok_r(p, ",\n", &save); w && i < ST_COUNT; w = strtok_r(NULL, ",\n", &save))
		col_names[i++] = strdup(w);
	free(o.buf);
}

/* A stats row as a table of column name -> value (numbers as integers). */
static void push_row(lua_State *L, struct stat_row *r)
{
	load_col_names();
	lua_createtable(L, 0, ST_COUNT);
	for (int i = 0; i < ST_COUNT; i++) {
		const char *v = r->f[i];
		char *end;
		long long n;

		if (!v || !col_names[i])
			continue;
		n = strtoll(v, &end, 10);
		if (*v && !*end)
			lua_pushinteger(L, (lua_Integer)n);
		else
			lua_pushstring(L, v);
		lua_setfield(L, -2, col_names[i]);
	}
	stats_row_free(r);
}

/* ------------------------------------------------------------------ Server */

static struct server *srv_arg(lua_State *L)
{
	struct server *s;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "__srv");
	s = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (!s)
		luaL_argerror(L, 1, "Server object expected");
	return s;
}

static int s_get_name(lua_State *L)
{
	lua_pushstring(L, srv_arg(L)->name);
	return 1;
}

static int s_get_puid(lua_State *L)
{
	lua_pushinteger(L, srv_arg(L)->puid);
	return 1;
}

static int s_get_addr(lua_State *L)
{
	struct server *s = srv_arg(L);

	lua_pushstring(L, s->addr_str ? s->addr_str : "");
	return 1;
}

static int s_get_stats(lua_State *L)
{
	struct server *s = srv_arg(L);
	struct stat_row r;

	memset(&r, 0, sizeof(r));
	stats_row_server(&r, s->be, s, CLI_LEVEL_ADMIN);
	push_row(L, &r);
	return 1;
}

static int s_get_weight(lua_State *L)
{
	lua_pushinteger(L, atomic_load(&srv_arg(L)->uweight));
	return 1;
}

/* set_weight("50") or set_weight("50%"): nil, or the error message. */
static int s_set_weight(lua_State *L)
{
	struct server *s = srv_arg(L);
	const char *w = luaL_checkstring(L, 2);
	struct cli_out o = { 0 };
	int rc = stats_set_weight(s, w, &o);

	if (rc < 0 && o.buf)
		lua_pushstring(L, o.buf);
	else
		lua_pushnil(L);
	free(o.buf);
	return 1;
}

static int s_get_maxconn(lua_State *L)
{
	lua_pushinteger(L, atomic_load(&srv_arg(L)->maxconn));
	return 1;
}

/* set_maxconn(n or "n"), as `set maxconn server`: waiters may go at once */
static int s_set_maxconn(lua_State *L)
{
	struct server *s = srv_arg(L);
	lua_Integer v;

	if (lua_type(L, 2) == LUA_TSTRING) {
		char *end;
		const char *t = lua_tostring(L, 2);

		v = strtoll(t, &end, 10);
		if (*end || end == t)
			return luaL_argerror(L, 2, "integer expected");
	} else {
		v = luaL_checkinteger(L, 2);
	}
	if (v < 0 || v > 1000000000)
		return luaL_argerror(L, 2, "value out of range");
	atomic_store(&s->maxconn, (int)v);
	queue_kick(s);
	return 0;
}

static int s_is_draining(lua_State *L)
{
	lua_pushboolean(L, atomic_load(&srv_arg(L)->admin) == SRV_ADMIN_DRAIN);
	return 1;
}

static int set_admin(lua_State *L, int admin)
{
	srv_set_admin(srv_arg(L), admin);
	return 0;
}
static int s_set_maint(lua_State *L) { return set_admin(L, SRV_ADMIN_MAINT); }
static int s_set_drain(lua_State *L) { return set_admin(L, SRV_ADMIN_DRAIN); }
static int s_set_ready(lua_State *L) { return set_admin(L, SRV_ADMIN_READY); }

static int set_health(lua_State *L, int op)
{
	srv_set_health(srv_arg(L), op);
	return 0;
}
static int s_force_up(lua_State *L)   { return set_health(L, SRV_OP_UP); }
static int s_force_nolb(lua_State *L) { return set_health(L, SRV_OP_NOLB); }
static int s_force_down(lua_State *L) { return set_health(L, SRV_OP_DOWN); }

/* check_enable/check_disable, as `enable/disable health` */
static int s_check_enable(lua_State *L)
{
	atomic_store(&srv_arg(L)->chk_disabled, 0);
	return 0;
}

static int s_check_disable(lua_State *L)
{
	atomic_store(&srv_arg(L)->chk_disabled, 1);
	return 0;
}

/* sluice has no agent checks: as a server without one in HAProxy */
static int s_agent_noop(lua_State *L)
{
	srv_arg(L);
	return 0;
}

static void push_server(lua_State *L, struct server *s)
{
	lua_createtable(L, 0, 3);
	lua_pushlightuserdata(L, s);
	lua_setfield(L, -2, "__srv");
	lua_pushstring(L, s->name);
	lua_setfield(L, -2, "name");
	lua_pushinteger(L, s->puid);
	lua_setfield(L, -2, "puid");
	luaL_setmetatable(L, SERVER_MT);
}

/* ------------------------------------------------------------------ Proxy */

static struct proxy *px_arg(lua_State *L)
{
	struct proxy *px;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "__px");
	px = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (!px)
		luaL_argerror(L, 1, "Proxy object expected");
	return px;
}

static int p_get_stats(lua_State *L)
{
	struct proxy *px = px_arg(L);
	struct stat_row r;

	memset(&r, 0, sizeof(r));
	if (px->cap & PX_CAP_BE)
		stats_row_backend(&r, px);
	else
		stats_row_frontend(&r, px);
	push_row(L, &r);
	return 1;
}

static int p_get_cap(lua_State *L)
{
	struct proxy *px = px_arg(L);

	lua_pushstring(L, (px->cap & PX_CAP_FE) && (px->cap & PX_CAP_BE) ? "frontend,backend" :
	                  (px->cap & PX_CAP_FE) ? "frontend" : "backend");
	return 1;
}

static int p_get_mode(lua_State *L)
{
	lua_pushstring(L, proxy_mode_name(px_arg(L)->mode));
	return 1;
}

/* pause / resume / stop: `disable / enable / shutdown frontend` (a
 * frontend; nothing for a backend). Nothing returned, as in HAProxy; a
 * refused change (already in that state) does nothing. */
static int px_set_state(lua_State *L, int to)
{
	struct proxy *px = px_arg(L);
	char err[128];
	int cur;

	if (!(px->cap & PX_CAP_FE))
		return 0;
	cur = px->disabled ? PX_FE_STOPPED : atomic_load(&px->fe_state);
	if (cur == PX_FE_STOPPED || cur == to)
		return 0;
	listeners_fe_set_state(px, to, err, sizeof(err));
	return 0;
}
static int p_pause(lua_State *L)  { return px_set_state(L, PX_FE_PAUSED); }
static int p_resume(lua_State *L) { return px_set_state(L, PX_FE_READY); }
static int p_stop(lua_State *L)   { return px_set_state(L, PX_FE_STOPPED); }

static int s_shut_sess(lua_State *L)
{
	stream_shutdown_server(srv_arg(L), 'K');
	return 0;
}

/* ------------------------------------------------------------------ StickTable */

static struct stktable *tbl_arg(lua_State *L)
{
	struct stktable *t;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "__tbl");
	t = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (!t)
		luaL_argerror(L, 1, "StickTable object expected");
	return t;
}

static int t_info(lua_State *L)
{
	static const char *const types[] = {
		[STKT_T_IP] = "ip", [STKT_T_IPV6] = "ipv6", [STKT_T_INTEGER] = "integer",
		[STKT_T_STRING] = "string", [STKT_T_BINARY] = "binary",
	};
	struct stktable *t = tbl_arg(L);

	lua_createtable(L, 0, 8);
	lua_pushstring(L, types[t->type]);
	lua_setfield(L, -2, "type");
	lua_pushinteger(L, t->key_size);
	lua_setfield(L, -2, "length");
	lua_pushinteger(L, t->size);
	lua_setfield(L, -2, "size");
	lua_pushinteger(L, atomic_load_explicit(&t->used, memory_order_relaxed));
	lua_setfield(L, -2, "used");
	lua_pushinteger(L, t->nopurge);
	lua_setfield(L, -2, "nopurge");
	lua_pushinteger(L, t->expire_ms);
	lua_setfield(L, -2, "expire");
	lua_newtable(L);
	for (int i = 0; i < STKT_DT_COUNT; i++) {
		if (!stkt_stores(t, (enum stkt_dt)i))
			continue;
		lua_pushstring(L, stkt_dt_defs[i].kind == STKT_K_FRQ ? "rate" : "value");
		lua_setfield(L, -2, stkt_dt_defs[i].name);
	}
	lua_setfield(L, -2, "data");
	return 1;
}

/* lookup(key): the entry's data as a table (name = value, "use",
 * "expire"), or nil. The shard stays locked only while the values are
 * copied (a few dozen at most). */
static int t_lookup(lua_State *L)
{
	struct stktable *t = tbl_arg(L);
	const char *key = luaL_checkstring(L, 2);
	struct stkt_key k;
	struct stksess *ts;
	int64_t vals[STKT_DT_COUNT];
	int have[STKT_DT_COUNT];
	char names[STKT_DT_COUNT][32];
	uint64_t exp, now = stkt_now_ms();
	unsigned int use;

	if (t->type == STKT_T_BINARY || !stktable_key_from_text(t, key, &k)) {
		lua_pushnil(L);
		return 1;
	}
	lua_checkstack(L, 8);
	ts = stktable_lookup_lock(t, &k);
	if (!ts) {
		lua_pushnil(L);
		return 1;
	}
	use = atomic_load_explicit(&ts->ref, memory_order_relaxed);
	exp = atomic_load_explicit(&ts->expire, memory_order_relaxed);
	for (int i = 0; i < STKT_DT_COUNT; i++) {
		have[i] = 0;
		if (stkt_dt_defs[i].kind == STKT_K_NAME || stkt_dt_defs[i].array ||
		    t->data_ofs[i] < 0 || !stkt_get(t, ts, (enum stkt_dt)i, &vals[i]))
			continue;
		have[i] = 1;
		snprintf(names[i], sizeof(names[i]), "%s", stkt_dt_defs[i].name);
	}
	stktable_unlock(t, ts);
	/* Lua allocates only now, with no lock held */
	lua_createtable(L, 0, 8);
	lua_pushinteger(L, use);
	lua_setfield(L, -2, "use");
	lua_pushinteger(L, exp > now ? (lua_Integer)(exp - now) : 0);
	lua_setfield(L, -2, "expire");
	for (int i = 0; i < STKT_DT_COUNT; i++) {
		if (!have[i])
			continue;
		lua_pushinteger(L, (lua_Integer)vals[i]);
		lua_setfield(L, -2, names[i]);
	}
	return 1;
}

static void push_stktable(lua_State *L, struct proxy *px)
{
	for (struct stktable *t = stktable_first(); t; t = stktable_next(t)) {
		if (t->px != px)
			continue;
		lua_createtable(L, 0, 1);
		lua_pushlightuserdata(L, t);
		lua_setfield(L, -2, "__tbl");
		luaL_setmetatable(L, TABLE_MT);
		lua_setfield(L, -2, "stktable");
		return;
	}
}

static void push_proxy(lua_State *L, struct proxy *px)
{
	lua_createtable(L, 0, 4);
	lua_pushlightuserdata(L, px);
	lua_setfield(L, -2, "__px");
	lua_pushstring(L, px->name);
	lua_setfield(L, -2, "name");
	lua_pushinteger(L, px->uuid);
	lua_setfield(L, -2, "uuid");
	lua_createtable(L, 0, px->nsrv);
	for (int i = 0; i < px->nsrv; i++) {
		push_server(L, px->srv[i]);
		lua_setfield(L, -2, px->srv[i]->name);
	}
	lua_setfield(L, -2, "servers");
	push_stktable(L, px);
	luaL_setmetatable(L, PROXY_MT);
}

/* core.proxies, core.frontends, core.backends in state <L>. */
void lua_px_publish(lua_State *L)
{
	struct list *pos;

	lua_getglobal(L, "core");
	lua_newtable(L);   /* proxies */
	lua_newtable(L);   /* frontends */
	lua_newtable(L);   /* backends */
	for (pos = proxies.next; pos != &proxies; pos = pos->next) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!px->name)
			continue;
		push_proxy(L, px);
		lua_pushvalue(L, -1);
		lua_setfield(L, -5, px->name);
		if (px->cap & PX_CAP_FE) {
			lua_pushvalue(L, -1);
			lua_setfield(L, -4, px->name);
		}
		if (px->cap & PX_CAP_BE) {
			lua_pushvalue(L, -1);
			lua_setfield(L, -3, px->name);
		}
		lua_pop(L, 1);
	}
	lua_setfield(L, -4, "backends");
	lua_setfield(L, -3, "frontends");
	lua_setfield(L, -2, "proxies");
	lua_pop(L, 1);
}

void lua_api_px(lua_State *L)
{
	static const luaL_Reg srv_fns[] = {
		{ "get_name", s_get_name }, { "get_puid", s_get_puid },
		{ "get_addr", s_get_addr }, { "get_stats", s_get_stats },
		{ "get_weight", s_get_weight }, { "set_weight", s_set_weight },
		{ "get_maxconn", s_get_maxconn }, { "set_maxconn", s_set_maxconn },
		{ "is_draining", s_is_draining },
		{ "set_maint", s_set_maint }, { "set_drain", s_set_drain },
		{ "set_ready", s_set_ready }, { "check_force_up", s_force_up },
		{ "check_force_nolb", s_force_nolb }, { "check_force_down", s_force_down },
		{ "check_enable", s_check_enable }, { "check_disable", s_check_disable },
		{ "shut_sess", s_shut_sess },
		{ "agent_enable", s_agent_noop }, { "agent_disable", s_agent_noop },
		{ "agent_force_up", s_agent_noop }, { "agent_force_down", s_agent_noop },
		{ NULL, NULL }
	};
	static const luaL_Reg px_fns[] = {
		{ "get_stats", p_get_stats }, { "get_cap", p_get_cap }, { "get_mode", p_get_mode },
		{ "pause", p_pause }, { "resume", p_resume }, { "stop", p_stop },
		{ NULL, NULL }
	};

	luaL_newmetatable(L, SERVER_MT);
	luaL_newlib(L, srv_fns);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	luaL_newmetatable(L, PROXY_MT);
	luaL_newlib(L, px_fns);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	luaL_newmetatable(L, TABLE_MT);
	lua_createtable(L, 0, 2);
	lua_pushcfunction(L, t_info);
	lua_setfield(L, -2, "info");
	lua_pushcfunction(L, t_lookup);
	lua_setfield(L, -2, "lookup");
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}
