/* The Channel object of HAProxy 2.6's Lua API (txn.req, txn.res) on TCP
 * streams: the bytes the client sent and sluice has not forwarded yet
 * (request channel), and what goes back to the client (response channel).
 *
 * As in HAProxy, the contents of a channel may only be read or changed
 * outside HTTP: in HTTP mode only input(), output(), is_full(), is_resp()
 * and may_recv() answer, the others fail. Everything in the request
 * buffer is "incoming data" here (sluice forwards nothing before the
 * tcp-request content rules are done), so output() is 0.
 *
 * Owner thread of the stream only, through the current run (lua_cur).
 */
#include <stdlib.h>
#include <string.h>
#include <sluice/core/buf.h>
#include <sluice/core/clock.h>
#include <sluice/expr/sample.h>
#include <sluice/net/conn.h>
#include <sluice/proxy/stream.h>
#include "lua_int.h"

#define CHN_MT "sluice.Channel"

static struct buffer *chn_buf(lua_State *L, int *is_res, int alter)
{
	struct lua_run *r = lua_cur;
	int res;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "__res");
	res = lua_toboolean(L, -1);
	lua_pop(L, 1);
	if (is_res)
		*is_res = res;
	if (!r || !r->s)
		luaL_error(L, "Channel: only available in a stream's context");
	if (alter && r->s->txn)
		luaL_error(L, "Channel: the contents of a channel cannot be used in HTTP mode");
	buf_realign(res ? &r->s->res : &r->s->req);
	return res ? &r->s->res : &r->s->req;
}

/* After a change of the request buffer: fetches of the same run see it. */
static void chn_changed(struct buffer *b, int is_res)
{
	struct lua_run *r = lua_cur;

	if (is_res || !r->smp)
		return;
	r->smp->req_data.ptr = buf_head(b);
	r->smp->req_data.len = b->data;
	r->smp->req_len = b->data;
}

/* offset/length arguments (negative offset from the end), clipped. */
static void chn_range(lua_State *L, const struct buffer *b, int oi, int li, size_t *off,
                      size_t *len)
{
	lua_Integer o = luaL_optinteger(L, oi, 0);
	lua_Integer l = luaL_optinteger(L, li, -1);

	if (o < 0)
		o += (lua_Integer)b->data;
	if (o < 0)
		o = 0;
	if ((size_t)o > b->data)
		o = (lua_Integer)b->data;
	if (l < 0 || (size_t)(o + l) > b->data)
		l = (lua_Integer)b->data - o;
	*off = (size_t)o;
	*len = (size_t)l;
}

static int may_recv(const struct buffer *b, int is_res)
{
	const struct stream *s = lua_cur->s;

	if (is_res)
		return !(s->sc.flags & CONN_F_RD_SHUT);
	return buf_room(b) && !(s->cli.flags & (CONN_F_RD_SHUT | CONN_F_ERROR | CONN_F_HUP));
}

static int c_data(lua_State *L)
{
	int is_res;
	struct buffer *b = chn_buf(L, &is_res, 1);
	size_t off, len;

	if (!b->data && !may_recv(b, is_res)) {
		lua_pushnil(L);
		return 1;
	}
	chn_range(L, b, 2, 3, &off, &len);
	lua_pushlstring(L, buf_head(b) + off, len);
	return 1;
}

static int c_line(lua_State *L)
{
	int is_res;
	struct buffer *b = chn_buf(L, &is_res, 1);
	size_t off, len;
	const char *nl;

	if (!b->data && !may_recv(b, is_res)) {
		lua_pushnil(L);
		return 1;
	}
	chn_range(L, b, 2, 3, &off, &len);
	nl = memchr(buf_head(b) + off, '\n', len);
	lua_pushlstring(L, buf_head(b) + off, nl ? (size_t)(nl - (buf_head(b) + off)) + 1 : len);
	return 1;
}

static int c_remove(lua_State *L)
{
	int is_res;
	struct buffer *b = chn_buf(L, &is_res, 1);
	size_t off, len;

	chn_range(L, b, 2, 3, &off, &len);
	memmove(buf_head(b) + off, buf_head(b) + off + len, b->data - off - len);
	b->data -= len;
	chn_changed(b, is_res);
	lua_pushinteger(L, (lua_Integer)len);
	return 1;
}

static int c_insert(lua_State *L)
{
	int is_res;
	struct buffer *b = chn_buf(L, &is_res, 1);
	size_t len, off;
	const char *p = luaL_checklstring(L, 2, &len);
	lua_Integer o = luaL_optinteger(L, 3, 0);

	if (o < 0)
		o += (lua_Integer)b->data;
	if (o < 0 || (size_t)o > b->data || len > buf_room(b)) {
		lua_pushinteger(L, -1);
		return 1;
	}
	off = (size_t)o;
	memmove(buf_head(b) + off + len, buf_head(b) + off, b->data - off);
	memcpy(buf_head(b) + off, p, len);
	b->data += len;
	chn_changed(b, is_res);
	lua_pushinteger(L, (lua_Integer)len);
	return 1;
}

static int c_append(lua_State *L)
{
	int is_res;
	struct buffer *b = chn_buf(L, &is_res, 1);

	lua_settop(L, 2);
	lua_pushinteger(L, (lua_Integer)b->data);
	return c_insert(L);
}

/* set(string[, offset[, length]]): replaces that part of incoming data. */
static int c_set(lua_State *L)
{
	int is_res;
	struct buffer *b = chn_buf(L, &is_res, 1);
	size_t off, len, nl;
	const char *p = luaL_checklstring(L, 2, &nl);

	chn_range(L, b, 3, 4, &off, &len);
	if (nl > len && nl - len > buf_room(b)) {
		lua_pushinteger(L, -1);
		return 1;
	}
	memmove(buf_head(b) + off + nl, buf_head(b) + off + len, b->data - off - len);
	memcpy(buf_head(b) + off, p, nl);
	b->data = b->data - len + nl;
	chn_changed(b, is_res);
	lua_pushinteger(L, (lua_Integer)nl);
	return 1;
}

/* send(string): on the response channel, straight to the client; on the
 * request channel, in front of what goes to the server. */
static int c_send(lua_State *L)
{
	int is_res;
	struct buffer *b = chn_buf(L, &is_res, 1);
	size_t len, done = 0;
	const char *p = luaL_checklstring(L, 2, &len);
	struct stream *s = lua_cur->s;

	if (!is_res) {
		lua_settop(L, 2);
		lua_pushinteger(L, 0);
		return c_insert(L);
	}
	(void)b;
	while (done < len) {
		ssize_t n = conn_send_bytes(&s->cli, p + done, len - done);

		if (n <= 0)
			break;
		done += (size_t)n;
		s->bytes_out += (uint64_t)n;
	}
	lua_pushinteger(L, done == len ? (lua_Integer)len : -1);
	return 1;
}

static int c_forward(lua_State *L)
{
	int is_res;
	struct buffer *b = chn_buf(L, &is_res, 1);
	lua_Integer n = luaL_checkinteger(L, 2);

	/* sluice forwards the request buffer once the rules are done */
	lua_pushinteger(L, n < 0 ? 0 : (size_t)n > b->data ? (lua_Integer)b->data : n);
	return 1;
}

static int c_input(lua_State *L)
{
	struct buffer *b = chn_buf(L, NULL, 0);

	lua_pushinteger(L, (lua_Integer)b->data);
	return 1;
}

static int c_output(lua_State *L)
{
	chn_buf(L, NULL, 0);
	lua_pushinteger(L, 0);
	return 1;
}

static int c_is_full(lua_State *L)
{
	struct buffer *b = chn_buf(L, NULL, 0);

	lua_pushboolean(L, b->area && !buf_room(b));
	return 1;
}

static int c_is_resp(lua_State *L)
{
	int is_res;

	chn_buf(L, &is_res, 0);
	lua_pushboolean(L, is_res);
	return 1;
}

static int c_may_recv(lua_State *L)
{
	int is_res;
	struct buffer *b = chn_buf(L, &is_res, 0);

	lua_pushboolean(L, may_recv(b, is_res));
	return 1;
}

static int wait_k(lua_State *L, int status, lua_KContext ctx)
{
	lua_deadline_check(L);
	(void)status;
	(void)ctx;
	lua_pushboolean(L, 1);
	return 1;
}

/* Waits for the stream's next event (new bytes from the client), or a
 * second at most: true after a wait, false where the script cannot yield
 * (the caller then takes what is there). */
static int c_wait(lua_State *L)
{
	struct lua_run *r = lua_cur;

	if (!r || !r->yieldable || !lua_isyieldable(L)) {
		lua_pushboolean(L, 0);
		return 1;
	}
	r->wake_ms = clock_mono_ms() + 1000;
	return lua_yieldk(L, 0, 0, wait_k);
}

/* The deprecated ones, as HAProxy's documentation defines them; getline()
 * waits for a whole line while the client may send more. */
static const char chn_prelude[] =
	"local C = ...\n"
	"function C.dup(c) return c:data() end\n"
	"function C.get(c) local d = c:data() if d then c:remove(0, #d) end return d end\n"
	"function C.getline(c)\n"
	"  while true do\n"
	"    local l = c:line()\n"
	"    if l == nil then return nil end\n"
	"    if l:sub(-1) == '\\n' or not c:may_recv() or not C._wait() then\n"
	"      c:remove(0, #l)\n"
	"      return l\n"
	"    end\n"
	"  end\n"
	"end\n"
	"function C.prepend(c, s) return c:insert(s, 0) end\n"
	"C.get_in_len = C.input\n"
	"C.get_out_len = C.output\n";

void lua_push_channels(lua_State *L)
{
	/* on the TXN table at the top */
	lua_createtable(L, 0, 1);
	luaL_setmetatable(L, CHN_MT);
	lua_setfield(L, -2, "req");
	lua_createtable(L, 0, 1);
	lua_pushboolean(L, 1);
	lua_setfield(L, -2, "__res");
	luaL_setmetatable(L, CHN_MT);
	lua_setfield(L, -2, "res");
}

void lua_api_chn(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "data", c_data }, { "line", c_line }, { "remove", c_remove },
		{ "insert", c_insert }, { "append", c_append }, { "set", c_set },
		{ "send", c_send }, { "forward", c_forward }, { "input", c_input },
		{ "output", c_output }, { "is_full", c_is_full }, { "is_resp", c_is_resp },
		{ "may_recv", c_may_recv }, { "_wait", c_wait },
		{ NULL, NULL }
	};

	luaL_newmetatable(L, CHN_MT);
	luaL_newlib(L, fns);
	if (luaL_loadstring(L, chn_prelude) == LUA_OK) {
		lua_pushvalue(L, -2);
		if (lua_pcall(L, 1, 0, 0) != LUA_OK)
			lua_pop(L, 1);
	} else {
		lua_pop(L, 1);
	}
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}
