/* core.tcp(): the Socket object of HAProxy 2.6's Lua API (connect, send,
 * receive, settimeout, close), on sluice's non-blocking connections.
 *
 * A socket belongs to the run that created it (an action, a service or a
 * task: something that can yield) and to its thread. Its connection is
 * registered in that thread's poller with the run's task (the stream's,
 * or the Lua task's) as the one to wake: an operation that would block
 * yields with its deadline as the wake-up date, and is tried again when
 * the coroutine is resumed, by an I/O event or by the timer. The run
 * keeps every socket it made alive (a registry reference) and closes them
 * when it ends (lua_run_free() -> lua_socks_close()), on its own thread:
 * a socket never outlives its run, so the garbage collector of a shared
 * state, which may run on any thread, never closes a descriptor.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sluice/core/clock.h>
#include <sluice/core/sched.h>
#include <sluice/net/conn.h>
#include "lua_int.h"

#define SOCK_MT "sluice.Socket"
#define SOCK_DEFAULT_TIMEOUT_MS 5000
#define SOCK_RX_CHUNK 4096

struct lua_sock {
	struct conn c;
	struct lua_run *run;          /* owner, NULL once closed by it */
	struct lua_sock *next;        /* in the run's list */
	int ref;                      /* keeps the userdata alive while open */
	uint64_t timeout_ms;
	char *rx;                     /* bytes received, not returned yet */
	size_t rx_len, rx_cap;
	int tid;
};

static struct lua_sock *sock_arg(lua_State *L)
{
	struct lua_sock *k = luaL_checkudata(L, 1, SOCK_MT);

	if (k->c.ph.fd >= 0 && (!th_ctx || th_ctx->tid != k->tid))
		luaL_error(L, "socket used from another thread than its own");
	return k;
}

static void sock_close(struct lua_sock *k)
{
	conn_close(&k->c);
	free(k->rx);
	k->rx = NULL;
	k->rx_len = k->rx_cap = 0;
}

void lua_socks_close(struct lua_run *run)
{
	struct lua_sock *k, *next;

	for (k = run->socks; k; k = next) {
		next = k->next;
		sock_close(k);
		k->run = NULL;
		luaL_unref(run->vm->L, LUA_REGISTRYINDEX, k->ref);
	}
	run->socks = NULL;
}

static int l_tcp(lua_State *L)
{
	struct lua_run *r = lua_cur;
	struct lua_sock *k;

	if (!r || !r->task || !th_ctx)
		return luaL_error(L, "core.tcp() is only available in actions, services and tasks");
	k = lua_newuserdatauv(L, sizeof(*k), 0);
	memset(k, 0, sizeof(*k));
	conn_init(&k->c, r->task);
	k->timeout_ms = SOCK_DEFAULT_TIMEOUT_MS;
	k->tid = th_ctx->tid;
	k->run = r;
	luaL_setmetatable(L, SOCK_MT);
	lua_pushvalue(L, -1);
	k->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	k->next = r->socks;
	r->socks = k;
	return 1;
}

/* Waits for the socket: yields until an event or <deadline>; the
 * continuation <k> then tries again. */
static int sock_wait(lua_State *L, uint64_t deadline, lua_KFunction k, lua_KContext ctx)
{
	struct lua_run *r = lua_cur;

	if (!r->yieldable || !lua_isyieldable(L))
		return luaL_error(L, "yield not allowed");
	r->wake_ms = deadline;
	return lua_yieldk(L, 0, ctx, k);
}

static int sock_fail(lua_State *L, const char *why)
{
	lua_pushnil(L);
	lua_pushstring(L, why);
	return 2;
}

/* ---- connect(address[, port]) ---- */

static int connect_k(lua_State *L, int status, lua_KContext ctx)
{
	lua_deadline_check(L);
	struct lua_sock *k = sock_arg(L);
	int err;

	(void)status;
	err = conn_connect_status(&k->c);
	if (err == 0) {
		lua_cur->wake_ms = 0;
		lua_pushinteger(L, 1);
		return 1;
	}
	if (err != EINPROGRESS) {
		sock_close(k);
		return sock_fail(L, strerror(err));
	}
	if (clock_mono_ms() >= (uint64_t)ctx) {
		sock_close(k);
		return sock_fail(L, "timeout");
	}
	return sock_wait(L, (uint64_t)ctx, connect_k, ctx);
}

static int l_connect(lua_State *L)
{
	struct lua_sock *k = sock_arg(L);
	const char *addr = luaL_checkstring(L, 2);
	struct sockaddr_storage ss;
	socklen_t len;
	char host[128];
	const char *colon;
	lua_Integer port = -1;

	memset(&ss, 0, sizeof(ss));
	if (k->c.ph.fd >= 0)
		return sock_fail(L, "already connected");
	/* "ip", "ip:port", "[ip6]:port", or the port as second argument */
	if (!lua_isnoneornil(L, 3)) {
		port = luaL_checkinteger(L, 3);
		snprintf(host, sizeof(host), "%s", addr);
	} else if (addr[0] == '[' && (colon = strstr(addr, "]:"))) {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - addr - 1), addr + 1);
		port = strtol(colon + 2, NULL, 10);
	} else if ((colon = strrchr(addr, ':')) && !strchr(colon + 1, ':') &&
	           memchr(addr, ':', (size_t)(colon - addr)) == NULL) {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
		port = strtol(colon + 1, NULL, 10);
	} else {
		return sock_fail(L, "missing port");
	}
	if (port <= 0 || port > 65535)
		return sock_fail(L, "invalid port");
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
		len = sizeof(struct sockaddr_in6);
	} else {
		return sock_fail(L, "can't parse the address (IPv4 or IPv6 only, no name resolution)");
	}
	if (conn_connect(&k->c, &ss, len) < 0)
		return sock_fail(L, strerror(errno));
	lua_settop(L, 1);
	return connect_k(L, LUA_OK, (lua_KContext)(clock_mono_ms() + k->timeout_ms));
}

/* ---- send(data[, i[, j]]) ---- */

static int send_k(lua_State *L, int status, lua_KContext ctx)
{
	lua_deadline_check(L);
	struct lua_sock *k = sock_arg(L);
	size_t len;
	const char *p = lua_tolstring(L, 2, &len);
	lua_Integer from = lua_tointeger(L, 3);   /* 0-based bytes done */
	lua_Integer end = lua_tointeger(L, 4);

	(void)status;
	if (k->c.ph.fd < 0)
		return sock_fail(L, "closed");
	while (from < end) {
		ssize_t n = conn_send_bytes(&k->c, p + from, (size_t)(end - from));

		if (n > 0) {
			from += n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (clock_mono_ms() >= (uint64_t)ctx) {
				lua_pushnil(L);
				lua_pushstring(L, "timeout");
				lua_pushinteger(L, from);
				return 3;
			}
			lua_pushinteger(L, from);
			lua_replace(L, 3);
			return sock_wait(L, (uint64_t)ctx, send_k, ctx);
		}
		lua_pushnil(L);
		lua_pushstring(L, "closed");
		lua_pushinteger(L, from);
		return 3;
	}
	lua_cur->wake_ms = 0;
	lua_pushinteger(L, end);
	return 1;
}

static int l_send(lua_State *L)
{
	struct lua_sock *k = sock_arg(L);
	size_t len;
	lua_Integer i, j;

	luaL_checklstring(L, 2, &len);
	i = luaL_optinteger(L, 3, 1);
	j = luaL_optinteger(L, 4, (lua_Integer)len);
	if (i < 1)
		i = 1;
	if (j > (lua_Integer)len)
		j = (lua_Integer)len;
	lua_settop(L, 2);
	lua_pushinteger(L, i - 1);
	lua_pushinteger(L, j < i - 1 ? i - 1 : j);
	return send_k(L, LUA_OK, (lua_KContext)(clock_mono_ms() + k->timeout_ms));
}

/* ---- receive([pattern[, prefix]]) ---- */

/* Reads what is there into the socket's buffer. Returns >0 read, 0 at the
 * end of input, -1 when nothing is there now, -2 on error. */
static int sock_fill(struct lua_sock *k)
{
	ssize_t n;

	if (k->rx_cap - k->rx_len < SOCK_RX_CHUNK) {
		char *nb = realloc(k->rx, k->rx_cap + SOCK_RX_CHUNK * 4);

		if (!nb)
			return -2;
		k->rx = nb;
		k->rx_cap += SOCK_RX_CHUNK * 4;
	}
	do {
		n = recv(k->c.ph.fd, k->rx + k->rx_len, k->rx_cap - k->rx_len, 0);
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		k->rx_len += (size_t)n;
		return 1;
	}
	if (n == 0)
		return 0;
	return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2;
}

static void rx_take(lua_State *L, struct lua_sock *k, size_t n, size_t skip)
{
	size_t plen = 0;
	const char *prefix = lua_isstring(L, 3) ? lua_tolstring(L, 3, &plen) : NULL;

	if (prefix) {
		luaL_Buffer b;

		luaL_buffinit(L, &b);
		luaL_addlstring(&b, prefix, plen);
		luaL_addlstring(&b, k->rx, n);
		luaL_pushresult(&b);
	} else {
		lua_pushlstring(L, k->rx, n);
	}
	memmove(k->rx, k->rx + n + skip, k->rx_len - n - skip);
	k->rx_len -= n + skip;
}

static int receive_k(lua_State *L, int status, lua_KContext ctx)
{
	lua_deadline_check(L);
	struct lua_sock *k = sock_arg(L);
	int line = 0, all = 0;
	lua_Integer want = 0;

	(void)status;
	if (lua_type(L, 2) == LUA_TNUMBER) {
		want = lua_tointeger(L, 2);
	} else {
		const char *pat = luaL_optstring(L, 2, "*l");

		if (strcmp(pat, "*a") == 0)
			all = 1;
		else if (strcmp(pat, "*l") == 0)
			line = 1;
		else
			return luaL_argerror(L, 2, "invalid pattern");
	}
	for (;;) {
		int rc;

		if (line) {
			char *nl = k->rx ? memchr(k->rx, '\n', k->rx_len) : NULL;

			if (nl) {
				size_t n = (size_t)(nl - k->rx);
				size_t keep = n && k->rx[n - 1] == '\r' ? n - 1 : n;

				rx_take(L, k, keep, n - keep + 1);
				break;
			}
		} else if (!all && want >= 0 && k->rx_len >= (size_t)want) {
			rx_take(L, k, (size_t)want, 0);
			break;
		}
		if (k->c.ph.fd < 0)
			return sock_fail(L, "closed");
		rc = sock_fill(k);
		if (rc > 0)
			continue;
		if (rc == 0 || rc == -2) {
			/* end of input: "*a" returns it all, the others fail
			 * with what came as a partial result */
			if (all) {
				rx_take(L, k, k->rx_len, 0);
				break;
			}
			lua_pushnil(L);
			lua_pushstring(L, "closed");
			lua_pushlstring(L, k->rx ? k->rx : "", k->rx_len);
			k->rx_len = 0;
			return 3;
		}
		if (clock_mono_ms() >= (uint64_t)ctx) {
			lua_pushnil(L);
			lua_pushstring(L, "timeout");
			lua_pushlstring(L, k->rx ? k->rx : "", k->rx_len);
			k->rx_len = 0;
			return 3;
		}
		return sock_wait(L, (uint64_t)ctx, receive_k, ctx);
	}
	lua_cur->wake_ms = 0;
	return 1;
}

static int l_receive(lua_State *L)
{
	struct lua_sock *k = sock_arg(L);

	lua_settop(L, 3);
	return receive_k(L, LUA_OK, (lua_KContext)(clock_mono_ms() + k->timeout_ms));
}

static int l_settimeout(lua_State *L)
{
	struct lua_sock *k = sock_arg(L);
	lua_Number t = luaL_checknumber(L, 2);

	k->timeout_ms = t > 0 ? (uint64_t)(t * 1000.0) : 0;
	if (!k->timeout_ms)
		k->timeout_ms = 1;
	lua_pushinteger(L, 1);
	return 1;
}

static int l_close(lua_State *L)
{
	struct lua_sock *k = sock_arg(L);

	sock_close(k);
	lua_pushinteger(L, 1);
	return 1;
}

/* core.httpclient(): HTTP/1.1 over core.tcp(), in Lua (plain HTTP, one
 * request per connection, Content-Length, chunked or close-delimited
 * responses). */
static const char httpclient_lua[] =
	"local core = core\n"
	"local HC = {}\n"
	"HC.__index = HC\n"
	"local function add_hdr(t, n, v)\n"
	"  n = string.lower(n)\n"
	"  local l = t[n]\n"
	"  if not l then l = {} t[n] = l end\n"
	"  l[#l + (l[0] and 1 or 0)] = v\n"
	"end\n"
	"local function request(self, meth, r)\n"
	"  if type(r) ~= 'table' or type(r.url) ~= 'string' then error('httpclient: request.url expected', 3) end\n"
	"  local host, port, path = r.url:match('^http://([^/:]+):?(%d*)(.*)$')\n"
	"  if not host then error('httpclient: only http://ip[:port]/path URLs are supported', 3) end\n"
	"  if path == '' then path = '/' end\n"
	"  port = tonumber(port) or 80\n"
	"  local dst = r.dst\n"
	"  local s = core.tcp()\n"
	"  s:settimeout((r.timeout or 5000) / 1000)\n"
	"  local ok, err\n"
	"  if dst then ok, err = s:connect(dst) else ok, err = s:connect(host, port) end\n"
	"  if not ok then return nil, err end\n"
	"  local body = r.body or ''\n"
	"  local req = { meth .. ' ' .. path .. ' HTTP/1.1\\r\\n' }\n"
	"  local has_host = false\n"
	"  for n, vs in pairs(r.headers or {}) do\n"
	"    if string.lower(n) == 'host' then has_host = true end\n"
	"    if type(vs) ~= 'table' then vs = { vs } end\n"
	"    for _, v in pairs(vs) do req[#req + 1] = n .. ': ' .. tostring(v) .. '\\r\\n' end\n"
	"  end\n"
	"  if not has_host then req[#req + 1] = 'host: ' .. host .. '\\r\\n' end\n"
	"  if #body > 0 or meth == 'POST' or meth == 'PUT' then\n"
	"    req[#req + 1] = 'content-length: ' .. #body .. '\\r\\n'\n"
	"  end\n"
	"  req[#req + 1] = 'connection: close\\r\\n\\r\\n'\n"
	"  if not s:send(table.concat(req) .. body) then s:close() return nil, 'send failed' end\n"
	"  local line = s:receive('*l')\n"
	"  if not line then s:close() return nil, 'no response' end\n"
	"  local status, reason = line:match('^HTTP/%d%.%d (%d+) ?(.*)$')\n"
	"  local res = { status = tonumber(status), reason = reason, headers = {}, body = '' }\n"
	"  local clen, chunked\n"
	"  while true do\n"
	"    local h = s:receive('*l')\n"
	"    if not h or h == '' then break end\n"
	"    local n, v = h:match('^([^:]+):%s*(.-)%s*$')\n"
	"    if n then\n"
	"      add_hdr(res.headers, n, v)\n"
	"      n = string.lower(n)\n"
	"      if n == 'content-length' then clen = tonumber(v) end\n"
	"      if n == 'transfer-encoding' and v:lower():find('chunked') then chunked = true end\n"
	"    end\n"
	"  end\n"
	"  if meth == 'HEAD' or res.status == 204 or res.status == 304 then\n"
	"  elseif chunked then\n"
	"    local parts = {}\n"
	"    while true do\n"
	"      local sz = s:receive('*l')\n"
	"      sz = sz and tonumber(sz:match('^%x+'), 16)\n"
	"      if not sz or sz == 0 then break end\n"
	"      parts[#parts + 1] = s:receive(sz)\n"
	"      s:receive('*l')\n"
	"    end\n"
	"    res.body = table.concat(parts)\n"
	"  elseif clen then\n"
	"    res.body = clen > 0 and (s:receive(clen) or '') or ''\n"
	"  else\n"
	"    res.body = s:receive('*a') or ''\n"
	"  end\n"
	"  s:close()\n"
	"  return res\n"
	"end\n"
	"function HC:get(r) return request(self, 'GET', r) end\n"
	"function HC:head(r) return request(self, 'HEAD', r) end\n"
	"function HC:put(r) return request(self, 'PUT', r) end\n"
	"function HC:post(r) return request(self, 'POST', r) end\n"
	"function HC:delete(r) return request(self, 'DELETE', r) end\n"
	"function core.httpclient() return setmetatable({}, HC) end\n";

void lua_api_sock(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "connect", l_connect }, { "send", l_send }, { "receive", l_receive },
		{ "settimeout", l_settimeout }, { "close", l_close },
		{ NULL, NULL }
	};

	luaL_newmetatable(L, SOCK_MT);
	luaL_newlib(L, fns);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	lua_getglobal(L, "core");
	lua_pushcfunction(L, l_tcp);
	lua_setfield(L, -2, "tcp");
	lua_pop(L, 1);
	if (luaL_dostring(L, httpclient_lua) != LUA_OK)
		lua_pop(L, 1);
}
