/* The TXN object of HAProxy 2.6's Lua API and what hangs off it: the
 * sample fetches (txn.f, txn.sf), the converters (txn.c, txn.sc), the HTTP
 * object (txn.http: headers, start line), variables, the private value,
 * the log level and txn:done() / txn:reply().
 *
 * Every function acts on the thread's current run (lua_cur): the stream,
 * rule environment and sample context of the action, fetch or converter
 * being executed. The objects themselves are plain tables shared by every
 * run of a state, so making one costs no allocation per call beyond the
 * TXN table.
 *
 * Fetches and converters are found by name at run time and compiled for
 * each call (sample_expr_parse()), with their arguments quoted: the same
 * parser, the same checks and the same error messages as the
 * configuration's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sluice/core/buf.h>
#include <sluice/core/log.h>
#include <sluice/core/sched.h>
#include <sluice/expr/regex.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include <sluice/http/act.h>
#include <sluice/http/msgedit.h>
#include <sluice/http/txn.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stream.h>
#include "lua_int.h"

/* ------------------------------------------------------------------ samples */

void lua_push_sample(lua_State *L, const struct sample *smp, int as_string)
{
	char buf[64];

	switch (smp->type) {
	case SMP_T_BOOL:
		if (as_string)
			lua_pushstring(L, smp->data.sint ? "1" : "0");
		else
			lua_pushboolean(L, smp->data.sint != 0);
		return;
	case SMP_T_SINT:
		if (as_string)
			lua_pushfstring(L, "%I", (LUAI_UACINT)smp->data.sint);
		else
			lua_pushinteger(L, (lua_Integer)smp->data.sint);
		return;
	case SMP_T_IPV4:
		inet_ntop(AF_INET, &smp->data.ipv4, buf, sizeof(buf));
		lua_pushstring(L, buf);
		return;
	case SMP_T_IPV6:
		inet_ntop(AF_INET6, &smp->data.ipv6, buf, sizeof(buf));
		lua_pushstring(L, buf);
		return;
	case SMP_T_STR:
	case SMP_T_BIN:
		lua_pushlstring(L, smp->data.str.ptr, smp->data.str.len);
		return;
	case SMP_T_METH:
		if (smp->data.meth.meth == HTTP_METH_OTHER)
			lua_pushlstring(L, smp->data.meth.str.ptr, smp->data.meth.str.len);
		else
			lua_pushstring(L, smp_meth_name(smp->data.meth.meth));
		return;
	default:
		lua_pushnil(L);
	}
}

/* The Lua value at <idx> as a sample (strings are borrowed from Lua, valid
 * while the value is on the stack). Returns 1, or 0 for nil / a type with
 * no sample form. */
int lua_to_sample(lua_State *L, int idx, struct sample *smp, char *buf, size_t bufsz)
{
	size_t len;
	const char *p;

	(void)buf;
	(void)bufsz;
	memset(smp, 0, sizeof(*smp));
	switch (lua_type(L, idx)) {
	case LUA_TBOOLEAN:
		smp->type = SMP_T_BOOL;
		smp->data.sint = lua_toboolean(L, idx);
		return 1;
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx)) {
			smp->type = SMP_T_SINT;
			smp->data.sint = lua_tointeger(L, idx);
			return 1;
		}
		/* floats are strings, as in HAProxy */
		/* fall through */
	case LUA_TSTRING:
		p = lua_tolstring(L, idx, &len);
		smp->type = SMP_T_STR;
		smp->data.str.ptr = (char *)p;
		smp->data.str.len = len;
		smp->data.str.size = 0;
		return 1;
	default:
		return 0;
	}
}

static struct lua_run *cur_run(lua_State *L)
{
	if (!lua_cur || !lua_cur->smp)
		luaL_error(L, "this function is only available in a transaction");
	return lua_cur;
}

/* ------------------------------------------------------------------ fetches */

/* The fetch or converter whose Lua name (dots written '_') is <lname>:
 * the real name into <out>. Tries each way of reading the underscores. */
static int resolve_kw(const char *lname, int conv, char *out, size_t outsz)
{
	size_t len = strlen(lname);
	int pos[8], n = 0;

	if (len >= outsz)
		return 0;
	for (size_t i = 0; i < len && n < 8; i++)
		if (lname[i] == '_')
			pos[n++] = (int)i;
	for (unsigned int mask = 0; mask < (1u << n); mask++) {
		memcpy(out, lname, len + 1);
		for (int b = 0; b < n; b++)
			if (mask & (1u << b))
				out[pos[b]] = '.';
		if (conv ? smp_find_conv(out, len) != NULL : smp_find_fetch(out, len) != NULL)
			return 1;
	}
	return 0;
}

/* Appends the call's arguments (from stack index <first>) to <b> as
 * "(a,b,...)", each double-quoted, up to index <top> (taken before the
 * buffer was initialised: it may sit on the stack). */
static void add_args(lua_State *L, luaL_Buffer *b, int first, int top)
{
	if (first > top)
		return;
	luaL_addchar(b, '(');
	for (int i = first; i <= top; i++) {
		size_t len;
		const char *s;

		if (i > first)
			luaL_addchar(b, ',');
		if (lua_type(L, i) == LUA_TNUMBER || lua_type(L, i) == LUA_TSTRING) {
			s = lua_tolstring(L, i, &len);
		} else if (lua_type(L, i) == LUA_TBOOLEAN) {
			s = lua_toboolean(L, i) ? "1" : "0";
			len = 1;
		} else {
			luaL_argerror(L, i, "string or number expected");
			return;
		}
		luaL_addchar(b, '"');
		for (size_t k = 0; k < len; k++) {
			if (s[k] == '"' || s[k] == '\\')
				luaL_addchar(b, '\\');
			luaL_addchar(b, s[k]);
		}
		luaL_addchar(b, '"');
	}
	luaL_addchar(b, ')');
}

/* txn.f:<name>(args...), upvalues: real name, string mode. */
static int l_fetch_call(lua_State *L)
{
	struct lua_run *r = cur_run(L);
	const char *name = lua_tostring(L, lua_upvalueindex(1));
	int as_string = lua_toboolean(L, lua_upvalueindex(2));
	struct sample_expr *expr;
	struct sample smp;
	luaL_Buffer b;
	char err[256];
	int ok;

	int top = lua_gettop(L);

	luaL_buffinit(L, &b);
	luaL_addstring(&b, name);
	add_args(L, &b, 2, top);
	luaL_pushresult(&b);
	expr = sample_expr_parse(lua_tostring(L, -1), NULL, err, sizeof(err));
	if (!expr)
		return luaL_error(L, "%s", err);
	memset(&smp, 0, sizeof(smp));
	smp.opt = r->smp->final ? SMP_OPT_FINAL : 0;
	ok = sample_expr_eval(expr, r->smp, &smp);
	if (ok)
		lua_push_sample(L, &smp, as_string);
	sample_expr_free(expr);
	if (!ok) {
		if (as_string)
			lua_pushstring(L, "");
		else
			lua_pushnil(L);
	}
	return 1;
}

/* txn.c:<name>(input, args...) */
static int l_conv_call(lua_State *L)
{
	struct lua_run *r = cur_run(L);
	const char *name = lua_tostring(L, lua_upvalueindex(1));
	int as_string = lua_toboolean(L, lua_upvalueindex(2));
	struct sample smp;
	luaL_Buffer b;
	char err[256];
	int rc;

	int top = lua_gettop(L);

	/* the map converters load their file when they are compiled, into
	 * structures only configuration time may extend: not from a running
	 * script (Map.new() at load time does it) */
	if (th_ctx && strncmp(name, "map", 3) == 0)
		return luaL_error(L, "converter '%s' cannot be used from Lua at run time: load the "
		                  "map with Map.new() when the script loads", name);
	if (!lua_to_sample(L, 2, &smp, NULL, 0))
		return luaL_argerror(L, 2, "string or number expected");
	luaL_buffinit(L, &b);
	luaL_addstring(&b, name);
	add_args(L, &b, 3, top);
	luaL_pushresult(&b);
	rc = smp_apply_convs(&smp, lua_tostring(L, -1), r->smp, err, sizeof(err));
	if (rc < 0)
		return luaL_error(L, "%s", err);
	if (rc)
		lua_push_sample(L, &smp, as_string);
	else if (as_string)
		lua_pushstring(L, "");
	else
		lua_pushnil(L);
	return 1;
}

/* __index of the Fetches / Converters objects: a function for the name,
 * cached in the object. Upvalues: is_conv, as_string. */
static int l_kw_index(lua_State *L)
{
	const char *lname = luaL_checkstring(L, 2);
	int conv = lua_toboolean(L, lua_upvalueindex(1));
	int as_string = lua_toboolean(L, lua_upvalueindex(2));
	char real[128];

	if (!resolve_kw(lname, conv, real, sizeof(real))) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushstring(L, real);
	lua_pushboolean(L, as_string);
	lua_pushcclosure(L, conv ? l_conv_call : l_fetch_call, 2);
	lua_pushvalue(L, 2);
	lua_pushvalue(L, -2);
	lua_rawset(L, 1);
	return 1;
}

static void new_kw_object(lua_State *L, int conv, int as_string)
{
	lua_newtable(L);
	lua_createtable(L, 0, 1);
	lua_pushboolean(L, conv);
	lua_pushboolean(L, as_string);
	lua_pushcclosure(L, l_kw_index, 2);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
}

/* ------------------------------------------------------------------ HTTP */

static struct http_txn *http_of(lua_State *L)
{
	struct lua_run *r = cur_run(L);

	if (!r->s || !r->s->txn)
		luaL_error(L, "HTTP functions are only available in HTTP mode");
	return r->s->txn;
}

/* The message and edit context of a side, if its head is there. */
static int http_side(lua_State *L, int res, struct http_msg **m, struct http_edit **e)
{
	struct http_txn *t = http_of(L);

	if (res) {
		if (!t->res.head_len || (t->flags & TX_F_RES_GONE))
			return 0;
		*m = &t->res;
		*e = &t->res_edit;
	} else {
		if (!t->req.head_len || (t->flags & TX_F_REQ_GONE))
			return 0;
		*m = &t->req;
		*e = &t->req_edit;
	}
	return 1;
}

static int get_headers(lua_State *L, int res)
{
	struct http_msg *m;
	struct http_edit *e;

	lua_newtable(L);
	if (!http_side(L, res, &m, &e))
		return 1;
	for (int i = 0; i < m->nhdrs; i++) {
		const struct http_hdr *h = &m->hdrs[i];
		lua_Integer n;

		if (http_hdr_is_deleted(h))
			continue;
		/* names are lowercase keys; values indexed from 0, as HAProxy */
		luaL_Buffer b;

		luaL_buffinit(L, &b);
		for (size_t k = 0; k < h->name.len; k++) {
			char c = h->name.ptr[k];

			luaL_addchar(&b, (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c);
		}
		luaL_pushresult(&b);
		lua_pushvalue(L, -1);
		if (lua_rawget(L, -3) != LUA_TTABLE) {
			lua_pop(L, 1);
			lua_newtable(L);
			lua_pushvalue(L, -2);
			lua_pushvalue(L, -2);
			lua_rawset(L, -5);
		}
		n = (lua_Integer)lua_rawlen(L, -1);
		lua_rawgeti(L, -1, 0);
		if (!lua_isnil(L, -1))
			n++;
		lua_pop(L, 1);
		lua_pushlstring(L, h->value.ptr, h->value.len);
		lua_rawseti(L, -2, n);
		lua_pop(L, 2);
	}
	return 1;
}

static int edit_failed(lua_State *L, int rc)
{
	if (rc < 0)
		return luaL_error(L, "failed to edit the HTTP message (no room)");
	return 0;
}

static int hdr_op(lua_State *L, int res, int op)
{
	struct http_msg *m;
	struct http_edit *e;
	size_t nl, vl = 0;
	const char *name = luaL_checklstring(L, 2, &nl);
	const char *val = op != 2 ? luaL_checklstring(L, 3, &vl) : NULL;

	if (!http_side(L, res, &m, &e))
		return 0;
	switch (op) {
	case 0: /* set */
		return edit_failed(L, http_hdr_set(e, (struct ist){ name, nl }, (struct ist){ val, vl }));
	case 1: /* add */
		return edit_failed(L, http_hdr_add(e, (struct ist){ name, nl }, (struct ist){ val, vl }));
	default: /* del */
		http_hdr_del(e, (struct ist){ name, nl }, HTTP_MATCH_STR, NULL, NULL);
		return 0;
	}
}

/* req_rep_header(name, regex, replace): each value of the header is
 * replaced as a whole by the substitution when the regex matches it. */
static int rep_header(lua_State *L, int res)
{
	struct http_msg *m;
	struct http_edit *e;
	size_t nl, rl;
	const char *name = luaL_checklstring(L, 2, &nl);
	const char *re_src = luaL_checkstring(L, 3);
	const char *rep = luaL_checklstring(L, 4, &rl);
	struct regex *re;
	char err[256];
	char out[4096];

	if (!http_side(L, res, &m, &e))
		return 0;
	re = regex_compile(re_src, 0, err, sizeof(err));
	if (!re)
		return luaL_error(L, "%s", err);
	for (int i = 0; i < m->nhdrs; i++) {
		struct http_hdr *h = &m->hdrs[i];
		long ovec[20];
		int n;
		long ol;

		if (http_hdr_is_deleted(h) || !http_name_eq(h->name, (struct ist){ name, nl }))
			continue;
		n = regex_match_groups(re, h->value.ptr, h->value.len, 0, ovec, 10);
		if (n <= 0)
			continue;
		ol = regex_expand(rep, rl, h->value.ptr, ovec, n, out, sizeof(out));
		if (ol < 0 || http_hdr_replace_idx(e, i, (struct ist){ out, (size_t)ol }) < 0) {
			regex_free(re);
			return luaL_error(L, "failed to edit the HTTP message (no room)");
		}
	}
	regex_free(re);
	return 0;
}

static int req_get_headers(lua_State *L) { return get_headers(L, 0); }
static int res_get_headers(lua_State *L) { return get_headers(L, 1); }
static int req_set_header(lua_State *L)  { return hdr_op(L, 0, 0); }
static int res_set_header(lua_State *L)  { return hdr_op(L, 1, 0); }
static int req_add_header(lua_State *L)  { return hdr_op(L, 0, 1); }
static int res_add_header(lua_State *L)  { return hdr_op(L, 1, 1); }
static int req_del_header(lua_State *L)  { return hdr_op(L, 0, 2); }
static int res_del_header(lua_State *L)  { return hdr_op(L, 1, 2); }
static int req_rep_header(lua_State *L)  { return rep_header(L, 0); }
static int res_rep_header(lua_State *L)  { return rep_header(L, 1); }

static int start_line_op(lua_State *L, int (*fn)(struct http_edit *, struct ist))
{
	struct http_msg *m;
	struct http_edit *e;
	size_t len;
	const char *v = luaL_checklstring(L, 2, &len);

	if (!http_side(L, 0, &m, &e)) {
		lua_pushboolean(L, 0);
		return 1;
	}
	lua_pushboolean(L, fn(e, (struct ist){ v, len }) >= 0);
	return 1;
}

static int req_set_method(lua_State *L) { return start_line_op(L, http_set_method); }
static int req_set_path(lua_State *L)   { return start_line_op(L, http_set_path); }
static int req_set_query(lua_State *L)  { return start_line_op(L, http_set_query); }
static int req_set_uri(lua_State *L)    { return start_line_op(L, http_set_uri); }

static int res_set_status(lua_State *L)
{
	struct http_msg *m;
	struct http_edit *e;
	lua_Integer st = luaL_checkinteger(L, 2);
	size_t rl = 0;
	const char *reason = luaL_optlstring(L, 3, NULL, &rl);

	if (st < 100 || st > 999)
		return luaL_argerror(L, 2, "invalid status code");
	if (!http_side(L, 1, &m, &e))
		return 0;
	m->status = (int)st;
	if (!reason) {
		reason = http_status_reason((int)st);
		rl = strlen(reason);
	}
	if (http_edit_dup(e, (struct ist){ reason, rl }, &m->reason) < 0)
		return luaL_error(L, "failed to edit the HTTP message (no room)");
	e->flags |= HTTP_EDIT_F_START_LINE;
	return 0;
}

/* ------------------------------------------------------------------ TXN */

static int var_ref_arg(lua_State *L, int idx, struct var_ref *ref)
{
	const char *name = luaL_checkstring(L, idx);

	if (vars_find_ref(name, ref) < 0)
		return 0;
	return 1;
}

static int l_set_var(lua_State *L)
{
	struct lua_run *r = cur_run(L);
	struct var_ref ref;
	struct sample smp;
	const char *name = luaL_checkstring(L, 2);
	/* "ifexist": a proc variable is only updated, never created (the
	 * other scopes are created anyway, as in HAProxy 2.6) */
	int only_update = lua_toboolean(L, 4) && strncmp(name, "proc.", 5) == 0;

	if (only_update ? !var_ref_arg(L, 2, &ref) : vars_intern_runtime(name, &ref) < 0) {
		lua_pushboolean(L, 0);
		return 1;
	}
	if (!lua_to_sample(L, 3, &smp, NULL, 0)) {
		lua_pushboolean(L, 0);
		return 1;
	}
	lua_pushboolean(L, vars_set(r->smp, &ref, &smp, only_update ? VAR_C_IFEXISTS : 0) > 0);
	return 1;
}

static int l_unset_var(lua_State *L)
{
	struct lua_run *r = cur_run(L);
	struct var_ref ref;

	if (!var_ref_arg(L, 2, &ref)) {
		lua_pushboolean(L, 0);
		return 1;
	}
	lua_pushboolean(L, vars_unset(r->smp, &ref) > 0);
	return 1;
}

static int l_get_var(lua_State *L)
{
	struct lua_run *r = cur_run(L);
	struct var_ref ref;
	struct sample smp;

	memset(&smp, 0, sizeof(smp));
	if (!var_ref_arg(L, 2, &ref) || vars_get(r->smp, &ref, &smp) <= 0) {
		lua_pushnil(L);
		return 1;
	}
	lua_push_sample(L, &smp, 0);
	return 1;
}

/* The private value of the transaction: a registry reference kept in the
 * transaction's Lua slot, per state (a value of the shared state is not
 * visible to a per-thread state's script, nor the reverse). */
struct lua_txn_slot {
	struct lua_vm *vm;
	int ref;
};

static struct lua_txn_slot *priv_slot(lua_State *L, struct lua_run *r, int create)
{
	struct lua_txn_slot **sp, *sl;

	if (!r->s)
		return NULL;
	sp = (struct lua_txn_slot **)&r->s->lua_priv;
	if (*sp && (*sp)->vm == r->vm)
		return *sp;
	if (!create)
		return NULL;
	if (*sp) {
		/* another state's value: replaced (one slot per stream) */
		lua_vm_enter((*sp)->vm);
		luaL_unref((*sp)->vm->L, LUA_REGISTRYINDEX, (*sp)->ref);
		lua_vm_leave((*sp)->vm);
		free(*sp);
		*sp = NULL;
	}
	sl = calloc(1, sizeof(*sl));
	if (!sl)
		luaL_error(L, "out of memory");
	sl->vm = r->vm;
	sl->ref = LUA_NOREF;
	*sp = sl;
	return sl;
}

void lua_stream_release(struct stream *s)
{
	struct lua_txn_slot *sl = s->lua_priv;

	if (s->lua_run) {
		lua_run_free(s->lua_run);
		s->lua_run = NULL;
	}
	if (!sl)
		return;
	lua_vm_enter(sl->vm);
	luaL_unref(sl->vm->L, LUA_REGISTRYINDEX, sl->ref);
	lua_vm_leave(sl->vm);
	free(sl);
	s->lua_priv = NULL;
}

static int l_set_priv(lua_State *L)
{
	struct lua_run *r = cur_run(L);
	struct lua_txn_slot *sl = priv_slot(L, r, 1);

	if (!sl)
		return 0;
	luaL_unref(L, LUA_REGISTRYINDEX, sl->ref);
	lua_settop(L, 2);
	sl->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	return 0;
}

static int l_get_priv(lua_State *L)
{
	struct lua_run *r = cur_run(L);
	struct lua_txn_slot *sl = priv_slot(L, r, 0);

	if (!sl || sl->ref == LUA_NOREF)
		lua_pushnil(L);
	else
		lua_rawgeti(L, LUA_REGISTRYINDEX, sl->ref);
	return 1;
}

static int l_set_loglevel(lua_State *L)
{
	struct lua_run *r = cur_run(L);
	lua_Integer lvl = luaL_checkinteger(L, 2);

	if (lvl < 0 || lvl > 8)
		return luaL_argerror(L, 2, "Invalid loglevel.");
	if (r->s && r->s->txn)
		r->s->txn->log_level = (int)lvl;
	return 0;
}

static int l_noop_int(lua_State *L)
{
	luaL_checkinteger(L, 2);
	return 0;
}

/* Appends to the reply; returns 0, or -1 (nothing more fits). */
static int reply_put(struct buffer *out, const char *p, size_t len)
{
	if (len > buf_room(out))
		return -1;
	memcpy(buf_tail(out), p, len);
	out->data += len;
	return 0;
}

static int reply_hdr(struct buffer *out, const char *name, const char *val)
{
	return reply_put(out, name, strlen(name)) | reply_put(out, ": ", 2) |
	       reply_put(out, val, strlen(val)) | reply_put(out, "\r\n", 2);
}

/* Renders the reply table at <idx> (made by txn:reply()) as an HTTP/1.1
 * response into <out>. Returns 0 or -1 (too large). */
static int render_reply(lua_State *L, int idx, struct buffer *out)
{
	lua_Integer status;
	const char *reason, *body;
	size_t blen = 0;
	char line[128];
	int rc = 0;

	out->head = out->data = 0;
	lua_getfield(L, idx, "status");
	status = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 200;
	lua_getfield(L, idx, "reason");
	reason = lua_isstring(L, -1) ? lua_tostring(L, -1) : http_status_reason((int)status);
	lua_getfield(L, idx, "body");
	body = lua_isstring(L, -1) ? lua_tolstring(L, -1, &blen) : NULL;
	snprintf(line, sizeof(line), "HTTP/1.1 %d ", (int)status);
	rc |= reply_put(out, line, strlen(line)) | reply_put(out, reason, strlen(reason)) |
	      reply_put(out, "\r\n", 2);
	lua_getfield(L, idx, "headers");
	if (lua_istable(L, -1)) {
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			const char *hn = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;

			if (!hn || strcasecmp(hn, "content-length") == 0 ||
			    strcasecmp(hn, "transfer-encoding") == 0) {
				lua_pop(L, 1);
				continue;
			}
			if (lua_istable(L, -1)) {
				for (lua_Integer i = 0; i < 1000; i++) {
					lua_rawgeti(L, -1, i);
					if (lua_isstring(L, -1))
						rc |= reply_hdr(out, hn, lua_tostring(L, -1));
					else if (i > 0) {
						lua_pop(L, 1);
						break;
					}
					lua_pop(L, 1);
				}
			} else if (lua_isstring(L, -1)) {
				rc |= reply_hdr(out, hn, lua_tostring(L, -1));
			}
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	snprintf(line, sizeof(line), "content-length: %zu\r\n\r\n", blen);
	rc |= reply_put(out, line, strlen(line));
	if (body)
		rc |= reply_put(out, body, blen);
	lua_pop(L, 3);
	return rc ? -1 : 0;
}

/* txn:done([reply]): renders the reply into the rule environment's reply
 * buffer, then stops the script. */
static int l_txn_done(lua_State *L)
{
	struct lua_run *r = cur_run(L);

	r->done = 1;
	if (lua_istable(L, 2) && r->env && r->env->reply) {
		if (render_reply(L, 2, r->env->reply) == 0)
			r->replied = 1;
		else
			r->env->reply->head = r->env->reply->data = 0;
	}
	return lua_raise_done(L);
}

static const char txn_prelude[] =
	"local Reply = {}\n"
	"Reply.__index = Reply\n"
	"function Reply:set_status(status, reason)\n"
	"  self.status = math.tointeger(status) or error('bad argument #1 to set_status')\n"
	"  self.reason = reason\n"
	"end\n"
	"function Reply:add_header(name, value)\n"
	"  name = string.lower(name)\n"
	"  local h = self.headers[name]\n"
	"  if not h then h = {} self.headers[name] = h end\n"
	"  h[#h + (h[0] and 1 or 0)] = value\n"
	"end\n"
	"function Reply:del_header(name) self.headers[string.lower(name)] = nil end\n"
	"function Reply:set_body(body) self.body = body end\n"
	"local mt = ...\n"
	"function mt.__index.reply(txn, t)\n"
	"  local r = setmetatable({ status = 200, headers = {}, body = '' }, Reply)\n"
	"  if type(t) == 'table' then\n"
	"    if t.status then r.status = t.status end\n"
	"    r.reason = t.reason\n"
	"    if t.body then r.body = t.body end\n"
	"    if type(t.headers) == 'table' then\n"
	"      for k, v in pairs(t.headers) do\n"
	"        if type(v) == 'table' then for _, x in pairs(v) do r:add_header(k, x) end\n"
	"        else r:add_header(k, v) end\n"
	"      end\n"
	"    end\n"
	"  end\n"
	"  return r\n"
	"end\n";

static int txn_log(lua_State *L)
{
	/* txn:log(level, msg) is core.log with the transaction's proxy */
	lua_getglobal(L, "core");
	lua_getfield(L, -1, "log");
	lua_pushvalue(L, 2);
	lua_pushvalue(L, 3);
	lua_call(L, 2, 0);
	return 0;
}

static int txn_log_at(lua_State *L, const char *fn)
{
	lua_getglobal(L, "core");
	lua_getfield(L, -1, fn);
	lua_pushvalue(L, 2);
	lua_call(L, 1, 0);
	return 0;
}
static int txn_debug(lua_State *L)   { return txn_log_at(L, "Debug"); }
static int txn_info(lua_State *L)    { return txn_log_at(L, "Info"); }
static int txn_warning(lua_State *L) { return txn_log_at(L, "Warning"); }
static int txn_alert(lua_State *L)   { return txn_log_at(L, "Alert"); }

#define TXN_MT "sluice.TXN"
#define REG_F  "sluice.f"

/* Pushes a TXN object for the current run: {f, sf, c, sc, http}. */
int lua_push_txn(lua_State *L, int http)
{
	lua_createtable(L, 0, 5);
	lua_getfield(L, LUA_REGISTRYINDEX, REG_F);
	lua_getfield(L, -1, "f");
	lua_setfield(L, -3, "f");
	lua_getfield(L, -1, "sf");
	lua_setfield(L, -3, "sf");
	lua_getfield(L, -1, "c");
	lua_setfield(L, -3, "c");
	lua_getfield(L, -1, "sc");
	lua_setfield(L, -3, "sc");
	if (http) {
		lua_getfield(L, -1, "http");
		lua_setfield(L, -3, "http");
	}
	lua_pop(L, 1);
	lua_push_channels(L);
	luaL_setmetatable(L, TXN_MT);
	return 1;
}

void lua_api_txn(lua_State *L)
{
	static const luaL_Reg txn_fns[] = {
		{ "set_var", l_set_var }, { "get_var", l_get_var }, { "unset_var", l_unset_var },
		{ "set_priv", l_set_priv }, { "get_priv", l_get_priv },
		{ "set_loglevel", l_set_loglevel }, { "done", l_txn_done },
		{ "set_tos", l_noop_int }, { "set_mark", l_noop_int },
		{ "set_priority_class", l_noop_int }, { "set_priority_offset", l_noop_int },
		{ "log", txn_log }, { "Debug", txn_debug }, { "Info", txn_info },
		{ "Warning", txn_warning }, { "Alert", txn_alert },
		{ NULL, NULL }
	};
	static const luaL_Reg http_fns[] = {
		{ "req_get_headers", req_get_headers }, { "res_get_headers", res_get_headers },
		{ "req_set_header", req_set_header }, { "res_set_header", res_set_header },
		{ "req_add_header", req_add_header }, { "res_add_header", res_add_header },
		{ "req_del_header", req_del_header }, { "res_del_header", res_del_header },
		{ "req_rep_header", req_rep_header }, { "res_rep_header", res_rep_header },
		{ "req_rep_value", req_rep_header }, { "res_rep_value", res_rep_header },
		{ "req_set_method", req_set_method }, { "req_set_path", req_set_path },
		{ "req_set_query", req_set_query }, { "req_set_uri", req_set_uri },
		{ "res_set_status", res_set_status },
		{ NULL, NULL }
	};

	luaL_newmetatable(L, TXN_MT);
	luaL_newlib(L, txn_fns);
	lua_setfield(L, -2, "__index");
	if (luaL_loadstring(L, txn_prelude) == LUA_OK) {
		lua_pushvalue(L, -2);
		if (lua_pcall(L, 1, 0, 0) != LUA_OK)
			lua_pop(L, 1);
	} else {
		lua_pop(L, 1);
	}
	lua_pop(L, 1);

	lua_createtable(L, 0, 5);
	new_kw_object(L, 0, 0);
	lua_setfield(L, -2, "f");
	new_kw_object(L, 0, 1);
	lua_setfield(L, -2, "sf");
	new_kw_object(L, 1, 0);
	lua_setfield(L, -2, "c");
	new_kw_object(L, 1, 1);
	lua_setfield(L, -2, "sc");
	luaL_newlib(L, http_fns);
	lua_setfield(L, -2, "http");
	lua_setfield(L, LUA_REGISTRYINDEX, REG_F);
}
