/* CLI commands on proxies and servers that HAProxy 2.6 operators' scripts
 * use: show backend, get/set weight, clear counters [all], disable/enable/
 * shutdown frontend, disable/enable health and agent, and show libs.
 *
 * Concurrency
 * -----------
 * - Weights, server states and check switches are atomics written through
 *   the functions of stats.c and srv_state.c (under the backend's
 *   state_lock where a state changes).
 * - Frontend states: listeners_fe_set_state() (src/net/listener.c) acts on
 *   the sockets at the kernel level and lets each thread unregister its
 *   own; nothing here touches another thread's poller.
 * - clear counters: every counter is a relaxed atomic that any thread may
 *   increment at any time; it is reset by an atomic store, one field after
 *   the other. A concurrent increment lands either before the store (and
 *   is lost with the rest) or after it (and counts from zero), so a field
 *   is never torn nor garbage, but a row read during a reset may mix old
 *   and new fields for a moment (hrsp_2xx already 0, req_tot not yet). A
 *   maximum raised concurrently may survive the reset. The sliding
 *   averages of the queue, connect and total times (swrate) are three
 *   fields: an update that read the old sum before the reset and adds its
 *   decay after it leaves an offset of one old average at most, which
 *   swrate_avg() clamps at 0 and the window then absorbs.
 */
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sluice/core/global.h>
#include <sluice/core/hist.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/stats.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/check.h>
#include <sluice/proxy/counters.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_state.h>

static int cli_show_backend(char **, int, struct cli_out *, int);
static int cli_get_weight(char **, int, struct cli_out *, int);
static int cli_set_weight(char **, int, struct cli_out *, int);
static int cli_clear_counters(char **, int, struct cli_out *, int);
static int cli_frontend_state(char **, int, struct cli_out *, int);
static int cli_health(char **, int, struct cli_out *, int);
static int cli_agent(char **, int, struct cli_out *, int);
static int cli_show_libs(char **, int, struct cli_out *, int);

static const struct cli_kw proxy_kws[] = {
	{ { "show", "backend" }, CLI_LEVEL_USER, cli_show_backend,
	  "show backend                            : list backends in the current running config" },
	{ { "get", "weight" }, CLI_LEVEL_USER, cli_get_weight,
	  "get weight <bk>/<srv>                   : report a server's current weight" },
	{ { "set", "weight" }, CLI_LEVEL_ADMIN, cli_set_weight,
	  "set weight <bk>/<srv>  (DEPRECATED)     : change a server's weight (use 'set server' instead)" },
	{ { "clear", "counters" }, CLI_LEVEL_OPERATOR, cli_clear_counters,
	  "clear counters [all]                    : clear max statistics counters (or all counters)" },
	{ { "clear", "counters", "all" }, CLI_LEVEL_ADMIN, cli_clear_counters, NULL },
	{ { "disable", "frontend" }, CLI_LEVEL_ADMIN, cli_frontend_state,
	  "disable frontend <frontend>             : temporarily disable specific frontend" },
	{ { "enable", "frontend" }, CLI_LEVEL_ADMIN, cli_frontend_state,
	  "enable frontend <frontend>              : re-enable specific frontend" },
	{ { "shutdown", "frontend" }, CLI_LEVEL_ADMIN, cli_frontend_state,
	  "shutdown frontend <frontend>            : stop a specific frontend" },
	{ { "disable", "health" }, CLI_LEVEL_ADMIN, cli_health,
	  "disable health                          : disable health checks" },
	{ { "enable", "health" }, CLI_LEVEL_ADMIN, cli_health,
	  "enable health                           : enable health checks" },
	{ { "disable", "agent" }, CLI_LEVEL_ADMIN, cli_agent,
	  "disable agent                           : disable agent checks" },
	{ { "enable", "agent" }, CLI_LEVEL_ADMIN, cli_agent,
	  "enable agent                            : enable agent checks" },
	{ { "show", "libs" }, CLI_LEVEL_OPERATOR, cli_show_libs,
	  "show libs                               : show loaded object files and libraries" },
	{ { NULL } }
};
CLI_REGISTER(proxy_kws)

/* ---- show backend, get/set weight ---- */

static int cli_show_backend(char **args, int nargs, struct cli_out *out, int level)
{
	struct list *pos, *nxt;

	cli_printf(out, "# name\n");
	list_for_each_safe(pos, nxt, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (px->cap & PX_CAP_BE)
			cli_printf(out, "%s\n", px->name);
	}
	return 0;
}

static int cli_get_weight(char **args, int nargs, struct cli_out *out, int level)
{
	struct server *s;

	if (nargs < 3) {
		cli_printf(out, "Require 'backend/server'.\n");
		return -1;
	}
	s = stats_find_server_arg(args[2], out);
	if (!s)
		return -1;
	cli_printf(out, "%d (initial %d)\n", atomic_load(&s->uweight), s->iweight);
	return 0;
}

static int cli_set_weight(char **args, int nargs, struct cli_out *out, int level)
{
	struct server *s;

	if (nargs < 3) {
		cli_printf(out, "Require 'backend/server'.\n");
		return -1;
	}
	s = stats_find_server_arg(args[2], out);
	if (!s)
		return -1;
	return stats_set_weight(s, nargs > 3 ? args[3] : "", out);
}

/* ---- clear counters ---- */

#define ZERO(field) atomic_store_explicit(&(field), 0, memory_order_relaxed)

static void swrate_clear(struct swrate *r, int all)
{
	ZERO(r->max);
	if (all) {
		ZERO(r->n);
		ZERO(r->sum);
	}
}

static void times_clear(struct time_avgs *t, int all)
{
	swrate_clear(&t->qtime, all);
	swrate_clear(&t->ctime, all);
	swrate_clear(&t->ttime, all);
}

/* The maxima only, or (<all>) every counter; last_sess goes back to
 * "never" (lastsess -1), as after a restart. */
static void counters_clear(struct counters *c, int all)
{
	ZERO(c->cur_max);
	ZERO(c->queue_max);
	ZERO(c->sess_rate_max);
	ZERO(c->req_rate_max);
	if (!all)
		return;
	ZERO(c->cum_sess);
	ZERO(c->cum_conn);
	ZERO(c->bytes_in);
	ZERO(c->bytes_out);
	ZERO(c->denied_req);
	ZERO(c->failed_req);
	ZERO(c->failed_conns);
	ZERO(c->failed_resp);
	ZERO(c->retries);
	ZERO(c->redispatches);
	ZERO(c->cli_aborts);
	ZERO(c->srv_aborts);
	ZERO(c->cum_req);
	for (int i = 0; i < 6; i++)
		ZERO(c->hrsp[i]);
	ZERO(c->intercepted);
	ZERO(c->denied_resp);
	ZERO(c->failed_rewrites);
	ZERO(c->internal_errors);
	ZERO(c->reuse);
	ZERO(c->connect);
	ZERO(c->last_sess);
}

static void ssl_counters_clear(struct ssl_counters *c)
{
	ZERO(c->sess);
	ZERO(c->reused_sess);
	ZERO(c->failed_handshake);
}

/* The stats modules' counters (HAProxy clears them with `all`), except
 * the gauges of open connections and streams: they go down as those end,
 * and a reset would make them negative. */
static void mux_counters_clear(struct mux_counters *m)
{
	ssl_counters_clear(&m->ssl);
	ZERO(m->h2.headers_rcvd);
	ZERO(m->h2.data_rcvd);
	ZERO(m->h2.settings_rcvd);
	ZERO(m->h2.rst_stream_rcvd);
	ZERO(m->h2.goaway_rcvd);
	ZERO(m->h2.conn_proto_err);
	ZERO(m->h2.strm_proto_err);
	ZERO(m->h2.rst_stream_resp);
	ZERO(m->h2.goaway_resp);
	ZERO(m->h2.total_conns);
	ZERO(m->h2.total_streams);
	ZERO(m->h1.conn.bytes_in);
	ZERO(m->h1.conn.bytes_out);
	ZERO(m->h1.total_conns);
	ZERO(m->h1.total_streams);
}

static void hist_clear(struct hist *h)
{
	for (int i = 0; i < HIST_BUCKETS; i++)
		ZERO(h->b[i]);
}

static void server_counters_clear(struct server *s, int all)
{
	counters_clear(&s->cnt, all);
	times_clear(&s->times, all);
	ZERO(s->used_max);
	if (!all)
		return;
	ssl_counters_clear(&s->ssl_cnt);
	hist_clear(&s->qtime_hist);
	hist_clear(&s->ctime_hist);
	hist_clear(&s->ttime_hist);
	ZERO(s->queue.cum);
	hist_clear(&s->queue.wait_hist);
	ZERO(s->chk_fail);
	ZERO(s->down_trans);
}

static int cli_clear_counters(char **args, int nargs, struct cli_out *out, int level)
{
	int all = nargs > 2 && strcmp(args[2], "all") == 0;
	struct list *pos, *nxt;

	list_for_each_safe(pos, nxt, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		counters_clear(&px->fe_cnt, all);
		counters_clear(&px->be_cnt, all);
		times_clear(&px->be_times, all);
		if (all) {
			mux_counters_clear(&px->fe_mux);
			mux_counters_clear(&px->be_mux);
			ZERO(px->queue.cum);
			hist_clear(&px->queue.wait_hist);
			ZERO(px->be_down_trans);
		}
		for (int i = 0; i < px->nsrv; i++)
			server_counters_clear(px->srv[i], all);
	}
	stats_activity_clear();
	return 0;
}

/* ---- disable / enable / shutdown frontend ---- */

static int cli_frontend_state(char **args, int nargs, struct cli_out *out, int level)
{
	struct proxy *fe;
	char err[128];
	int cur, to;

	if (nargs < 3) {
		cli_printf(out, "A frontend name is expected.\n");
		return -1;
	}
	fe = stats_find_proxy_arg(args[2], PX_CAP_FE);
	if (!fe) {
		cli_printf(out, "No such frontend.\n");
		return -1;
	}
	cur = fe->disabled ? PX_FE_STOPPED : atomic_load(&fe->fe_state);
	if (strcmp(args[0], "shutdown") == 0) {
		if (cur == PX_FE_STOPPED) {
			cli_printf(out, "Frontend was already shut down.\n");
			return -1;
		}
		to = PX_FE_STOPPED;
	} else if (strcmp(args[0], "disable") == 0) {
		if (cur == PX_FE_STOPPED) {
			cli_printf(out, "Frontend was previously shut down, cannot disable.\n");
			return -1;
		}
		if (cur == PX_FE_PAUSED) {
			cli_printf(out, "All sockets are already disabled.\n");
			return -1;
		}
		to = PX_FE_PAUSED;
	} else {
		if (cur == PX_FE_STOPPED) {
			cli_printf(out, "Frontend was previously shut down, cannot enable.\n");
			return -1;
		}
		if (cur == PX_FE_READY) {
			cli_printf(out, "All sockets are already enabled.\n");
			return -1;
		}
		to = PX_FE_READY;
	}
	if (listeners_fe_set_state(fe, to, err, sizeof(err)) < 0) {
		cli_printf(out, "Failed to resume frontend, check logs for precise cause (%s).\n",
		           err);
		return -1;
	}
	return 0;
}

/* ---- health and agent checks ---- */

/* A server without checks accepts both silently, as in HAProxy. */
static int cli_health(char **args, int nargs, struct cli_out *out, int level)
{
	struct server *s;

	if (nargs < 3) {
		cli_printf(out, "Require 'backend/server'.\n");
		return -1;
	}
	s = stats_find_server_arg(args[2], out);
	if (!s)
		return -1;
	atomic_store(&s->chk_disabled, strcmp(args[0], "disable") == 0);
	return 0;
}

/* A server without an agent answers as in HAProxy 2.6: disabling is
 * accepted, enabling refused. An agent enabled again checks at once. */
static int cli_agent(char **args, int nargs, struct cli_out *out, int level)
{
	struct server *s;
	int enable;

	if (nargs < 3) {
		cli_printf(out, "Require 'backend/server'.\n");
		return -1;
	}
	s = stats_find_server_arg(args[2], out);
	if (!s)
		return -1;
	enable = strcmp(args[0], "enable") == 0;
	if (!s->agent) {
		if (!enable)
			return 0;
		cli_printf(out, "Agent was not configured on this server, cannot enable.\n");
		return -1;
	}
	atomic_store(&s->agent_disabled, !enable);
	if (enable)
		check_agent_wake_now(s);
	return 0;
}

/* ---- show libs ---- */

/* One line per loaded object, HAProxy's format: the address range of its
 * loaded segments, their size, and its path (the executable's full path,
 * objects without a file name such as the vDSO left out). */
static int show_libs_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct cli_out *out = data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const char *name = info->dlpi_name;
	char exe[PATH_MAX];

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (!name || !*name) {   /* the executable itself */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n <= 0)
			return 0;
		exe[n] = '\0';
		name = exe;
	}
	if (strncmp(name, "linux-vdso", 10) == 0 || hi <= lo)
		return 0;
	cli_printf(out, "%#014lx-%#014lx (%#09lx) %s\n", (unsigned long)lo, (unsigned long)(hi - 1),
	           (unsigned long)(hi - lo), name);
	return 0;
}

static int cli_show_libs(char **args, int nargs, struct cli_out *out, int level)
{
	dl_iterate_phdr(show_libs_one, out);
	return 0;
}
