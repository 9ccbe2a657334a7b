/* CLI commands that add and delete servers at run time: add server and
 * del server (src/proxy/srv_dyn.c does the work), with HAProxy 2.6's
 * messages.
 */
#include <stdio.h>
#include <string.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/stats.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_dyn.h>

static int cli_add_server(char **, int, struct cli_out *, int);
static int cli_del_server(char **, int, struct cli_out *, int);

static const struct cli_kw dynsrv_kws[] = {
	{ { "add", "server" }, CLI_LEVEL_ADMIN, cli_add_server,
	  "add server <bk>/<srv>                   : create a new server" },
	{ { "del", "server" }, CLI_LEVEL_ADMIN, cli_del_server,
	  "del server <bk>/<srv>                   : remove a dynamically added server" },
	{ { NULL } }
};
CLI_REGISTER(dynsrv_kws)

/* "backend/server" split into <be> (found) and the name's position. */
static struct proxy *split_be(const char *arg, const char **name, struct cli_out *out)
{
	const char *slash = arg ? strchr(arg, '/') : NULL;
	char bname[256];
	struct proxy *be;

	if (!slash || (size_t)(slash - arg) >= sizeof(bname)) {
		cli_printf(out, "Require 'backend/server'.\n");
		return NULL;
	}
	snprintf(bname, sizeof(bname), "%.*s", (int)(slash - arg), arg);
	be = stats_find_proxy_arg(bname, PX_CAP_BE);
	if (!be) {
		cli_printf(out, "No such backend.\n");
		return NULL;
	}
	*name = slash + 1;
	return be;
}

static int cli_add_server(char **args, int nargs, struct cli_out *out, int level)
{
	const char *name;
	struct proxy *be = split_be(nargs > 2 ? args[2] : NULL, &name, out);
	char msg[600];

	if (!be)
		return -1;
	/* args[2] becomes the name alone for the server line */
	args[2] = (char *)name;
	if (srv_dyn_add(be, args + 2, nargs - 2, msg, sizeof(msg)) < 0) {
		cli_printf(out, "%s", msg);
		return -1;
	}
	cli_printf(out, "%s", msg);
	return 0;
}

static int cli_del_server(char **args, int nargs, struct cli_out *out, int level)
{
	struct server *s;
	char msg[300];

	if (nargs < 3) {
		cli_printf(out, "Require 'backend/server'.\n");
		return -1;
	}
	s = stats_find_server_arg(args[2], out);
	if (!s)
		return -1;
	if (srv_dyn_del(s, msg, sizeof(msg)) < 0) {
		cli_printf(out, "%s", msg);
		return -1;
	}
	cli_printf(out, "%s", msg);
	return 0;
}
