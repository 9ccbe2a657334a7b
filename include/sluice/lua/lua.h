/* Lua scripting (src/lua/): what the rest of sluice calls. */
#ifndef SLUICE_LUA_LUA_H
#define SLUICE_LUA_LUA_H

struct stream;

/* Drops the stream's Lua state: a suspended http-request action and the
 * transaction's private value (end of transaction, end of stream). Owner
 * thread. */
void lua_stream_release(struct stream *s);

#endif
