/* `show peers [<peers section>]` (HAProxy 2.6 management guide, section
 * 9.3), in HAProxy's layout: a line per section, then per peer its name,
 * role, address, last handshake status and counters, and the tables it
 * shares. Only the peers' atomics are read: a session belongs to its
 * thread and is never looked into from here.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sluice/core/global.h>
#include <sluice/mgmt/cli.h>
#include <sluice/net/addr.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/peers.h>
#include <sluice/proxy/stktable.h>

static int cli_show_peers(char **args, int nargs, struct cli_out *out, int level);

static const struct cli_kw peers_cli_kws[] = {
	{ { "show", "peers" }, CLI_LEVEL_OPERATOR, cli_show_peers,
	  "show peers [dict|-] [<section>]         : dump some information about all the peers or this peers section" },
	{ { NULL } }
};
CLI_REGISTER(peers_cli_kws)

static void print_age(struct cli_out *out, const char *label, uint64_t date_ms, uint64_t now)
{
	if (!date_ms)
		cli_printf(out, " %s=<NEVER>", label);
	else
		cli_printf(out, " %s=%llus", label, (unsigned long long)((now - date_ms) / 1000));
}

/* The local peer's listening address, as the socket says (fd@ binds). */
static void local_addr(const struct peers *s, char *buf, size_t len)
{
	const struct bind_conf *bc;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[128];

	if (list_empty(&s->binds))
		return;
	bc = list_elem(s->binds.next, struct bind_conf, list);
	if (bc->lst && bc->lst->shared_fd >= 0 &&
	    !getsockname(bc->lst->shared_fd, (struct sockaddr *)&ss, &sl) &&
	    (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)) {
		snprintf(buf, len, "%s:%d", addr_host_str(&ss, host, sizeof(host)), addr_port(&ss));
		return;
	}
	addr_full_str(&bc->addr, buf, len);
}

static void show_peer(struct cli_out *out, const struct peers *s, struct peer *p, uint64_t now)
{
	char addr[300] = "";
	int app = atomic_load_explicit(&p->appstate, memory_order_relaxed);

	if (p->has_addr)
		addr_full_str(&p->addr, addr, sizeof(addr));
	else if (p->local)
		local_addr(s, addr, sizeof(addr));
	cli_printf(out, "  %p: id=%s(%s,%s) addr=%s last_status=%s", (void *)p, p->name,
	           p->local ? "local" : "remote", app == 2 ? "active" : "inactive", addr,
	           peer_status_str(atomic_load_explicit(&p->status, memory_order_relaxed)));
	print_age(out, "last_hdshk", atomic_load_explicit(&p->last_change_ms,
	                                                  memory_order_relaxed), now);
	cli_printf(out, "\n        reconnect=%s heartbeat=%s confirm=0 tx_hbt=0 rx_hbt=0 no_hbt=0 "
	           "new_conn=%u proto_err=0 coll=0\n",
	           p->local ? "<NEVER>" : "3s", app == 2 ? "3s" : "<NEVER>",
	           atomic_load_explicit(&p->new_conn, memory_order_relaxed));
	cli_printf(out, "        flags=0x0%s\n", app == 2 ? " state=EST" : "");
	cli_printf(out, "        updates sent=%u received=%u\n",
	           atomic_load_explicit(&p->updates_sent, memory_order_relaxed),
	           atomic_load_explicit(&p->updates_rcvd, memory_order_relaxed));
	cli_printf(out, "        shared tables:\n");
	for (struct stktable *t = stktable_first(); t; t = stktable_next(t))
		if (t->peers == s)
			cli_printf(out, "          %p id=%s nid=%s\n", (void *)t, t->name, t->nid);
}

static void show_section(struct cli_out *out, struct peers *s, uint64_t now)
{
	char date[64] = "";
	time_t w = (time_t)global.start_wall;
	struct tm tm;

	localtime_r(&w, &tm);
	strftime(date, sizeof(date), "%d/%b/%Y:%H:%M:%S", &tm);
	cli_printf(out, "%p: [%s] id=%s disabled=%d flags=0x0 resync_timeout=<PAST> "
	           "task_calls=0\n", (void *)s, date, s->name, s->disabled);

	struct peer *list[PEERS_MAX_REMOTE + 2];
	int n = 0;

	/* HAProxy lists them last declared first */
	for (struct peer *p = s->peers; p && n < PEERS_MAX_REMOTE + 2; p = p->next)
		list[n++] = p;
	while (n--)
		show_peer(out, s, list[n], now);
	cli_printf(out, "\n");
}

static int cli_show_peers(char **args, int nargs, struct cli_out *out, int level)
{
	uint64_t now = peers_now_ms();
	int i = 2;
	const char *name;

	(void)level;
	if (i < nargs && (!strcmp(args[i], "dict") || !strcmp(args[i], "-")))
		i++;
	name = i < nargs && *args[i] ? args[i] : NULL;
	if (name && !peers_find(name)) {
		cli_printf(out, "No such peers\n");
		return -1;
	}
	/* sections too, last declared first */
	{
		struct peers *secs[256];
		int n = 0;

		for (struct peers *s = peers_first(); s && n < 256; s = s->next)
			secs[n++] = s;
		while (n--)
			if (!name || !strcmp(secs[n]->name, name))
				show_section(out, secs[n], now);
	}
	return 0;
}
