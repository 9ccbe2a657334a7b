/* `show servers conn [<backend>]`: the connections of each server, in use
 * and idle, in HAProxy 2.6's layout (one header line naming the columns,
 * one line per server, one idle count per thread at the end), so that the
 * scripts written for HAProxy read it.
 *
 * Columns sluice fills from its own state: used_cur (connections carrying
 * a request now), used_max (the most there ever were), need_est (what the
 * idle pool sizes itself on: the connections in use, see srv_idle.c),
 * unsafe_nb / safe_nb (idle connections that carried one request / more),
 * idle_lim (`pool-max-conn`, -1 unlimited), idle_cur and each thread's
 * count. A racy snapshot, as in HAProxy: display only.
 */
#include <stdio.h>
#include <string.h>
#include <sluice/core/global.h>
#include <sluice/mgmt/cli.h>
#include <sluice/net/addr.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_idle.h>

static int cli_show_servers_conn(char **, int, struct cli_out *, int);

static const struct cli_kw srvconn_kws[] = {
	{ { "show", "servers", "conn" }, CLI_LEVEL_USER, cli_show_servers_conn,
	  "show servers conn [<backend>]           : dump server connections, used and idle" },
	{ { NULL } }
};
CLI_REGISTER(srvconn_kws)

static void srvconn_row(struct cli_out *out, const struct proxy *be, struct server *s)
{
	int per[MAX_THREADS], unsafe = atomic_load(&s->idle_conns);
	int safe = atomic_load(&s->safe_conns), used = atomic_load(&s->used_conns);
	char host[64];

	srv_idle_per_thread(s, per, global.nbthread);
	cli_printf(out, "%s/%s %d/%d %s %d - %d %d %d %d %d %d %d %d", be->name, s->name,
	           be->uuid, s->puid, addr_host_str(&s->addr.ss, host, sizeof(host)),
	           addr_port(&s->addr.ss), s->pool_purge_delay, used,
	           atomic_load(&s->used_max), used, unsafe, safe, s->pool_max_conn,
	           unsafe + safe);
	for (int i = 0; i < global.nbthread; i++)
		cli_printf(out, " %d", per[i]);
	cli_printf(out, "\n");
}

static int cli_show_servers_conn(char **args, int nargs, struct cli_out *out, int level)
{
	const char *only = nargs > 3 ? args[3] : NULL;
	struct list *pos, *tmp;

	if (only && !proxy_find(only, PX_CAP_BE)) {
		cli_printf(out, "Can't find backend.\n");
		return -1;
	}
	cli_printf(out, "# bkname/svname bkid/svid addr port - purge_delay used_cur used_max "
	           "need_est unsafe_nb safe_nb idle_lim idle_cur idle_per_thr[%d]\n",
	           global.nbthread);
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!(px->cap & PX_CAP_BE) || (only && strcmp(px->name, only) != 0))
			continue;
		for (int i = 0; i < px->nsrv; i++)
			srvconn_row(out, px, px->srv[i]);
	}
	return 0;
}
