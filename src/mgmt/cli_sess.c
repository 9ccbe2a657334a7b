/* CLI commands that end client sessions: shutdown session <id> and
 * shutdown sessions server <b>/<s>.
 *
 * A stream belongs to the thread that accepted it, which alone may touch
 * it. These commands never end a stream themselves: they set its kill flag
 * and wake its task (stream_shutdown_by_id(), stream_shutdown_server() in
 * src/proxy/stream.c, under the owner's stream-list lock), and the owner
 * ends it at its next run with termination state 'K' (killed), as
 * HAProxy's logs say. The answer therefore comes before the stream is
 * gone; a `show sess` right after may still list it for a moment.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/stats.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/stream.h>

static int cli_shutdown_session(char **, int, struct cli_out *, int);
static int cli_shutdown_sessions_server(char **, int, struct cli_out *, int);

static const struct cli_kw sess_kws[] = {
	{ { "shutdown", "session" }, CLI_LEVEL_ADMIN, cli_shutdown_session,
	  "shutdown session [id]                   : kill a specific session" },
	{ { "shutdown", "sessions", "server" }, CLI_LEVEL_ADMIN, cli_shutdown_sessions_server,
	  "shutdown sessions server <bk>/<srv>     : kill sessions on a server" },
	{ { NULL } }
};
CLI_REGISTER(sess_kws)

/* <id> is the pointer `show sess` prints ("0x..."; read with strtoul's
 * base 0 as HAProxy does); 0 or unreadable asks for one. */
static int cli_shutdown_session(char **args, int nargs, struct cli_out *out, int level)
{
	uintptr_t id = nargs > 2 ? (uintptr_t)strtoull(args[2], NULL, 0) : 0;

	if (!id) {
		cli_printf(out, "Session pointer expected (use 'show sess').\n");
		return -1;
	}
	if (stream_shutdown_by_id(id) < 0) {
		cli_printf(out, "No such session (use 'show sess').\n");
		return -1;
	}
	return 0;
}

static int cli_shutdown_sessions_server(char **args, int nargs, struct cli_out *out, int level)
{
	struct server *s;

	if (nargs < 4) {
		cli_printf(out, "Require 'backend/server'.\n");
		return -1;
	}
	s = stats_find_server_arg(args[3], out);
	if (!s)
		return -1;
	stream_shutdown_server(s, 'K');
	return 0;
}
