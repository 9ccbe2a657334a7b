/* CLI commands that report and change the running state: show info, show
 * stat (HAProxy's CSV columns, in HAProxy's order, so that existing tools
 * parse it: its 104 columns, a "-" marker, the 24 of its stats modules ssl,
 * h2 and h1, then sluice's own columns), show servers state, show activity,
 * show sess, show env, and the server/maxconn setters.
 *
 * Reads are racy snapshots of atomics and per-thread counters (display
 * only). Changes go through atomics; queue hand-overs they make possible are
 * done by queue_kick() and queue_redistribute(), under the queue locks.
 */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/grace.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/stats.h>
#include <sluice/net/addr.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/lb.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_idle.h>
#include <sluice/proxy/srv_state.h>
#include <sluice/proxy/stream.h>

extern char **environ;

static int cli_show_info(char **, int, struct cli_out *, int);
static int cli_show_stat(char **, int, struct cli_out *, int);
static int cli_show_servers_state(char **, int, struct cli_out *, int);
static int cli_show_activity(char **, int, struct cli_out *, int);
static int cli_show_sess(char **, int, struct cli_out *, int);
static int cli_show_env(char **, int, struct cli_out *, int);
static int cli_set_server(char **, int, struct cli_out *, int);
static int cli_enable_disable_server(char **, int, struct cli_out *, int);
static int cli_set_maxconn(char **, int, struct cli_out *, int);
static int cli_show_version(char **, int, struct cli_out *, int);
static int cli_show_pools(char **, int, struct cli_out *, int);

static const struct cli_kw stats_kws[] = {
	{ { "show", "info" }, CLI_LEVEL_USER, cli_show_info,
	  "show info [json|typed] [desc]           : report information about the running process" },
	{ { "show", "stat" }, CLI_LEVEL_USER, cli_show_stat,
	  "show stat [json|typed] [desc] [up|no-maint] : report counters for each proxy and server" },
	{ { "show", "servers", "state" }, CLI_LEVEL_USER, cli_show_servers_state,
	  "show servers state [<backend>]          : dump volatile server information" },
	{ { "show", "activity" }, CLI_LEVEL_USER, cli_show_activity,
	  "show activity                           : show per-thread activity counters" },
	{ { "show", "sess" }, CLI_LEVEL_OPERATOR, cli_show_sess,
	  "show sess                               : report the list of current sessions" },
	{ { "show", "env" }, CLI_LEVEL_OPERATOR, cli_show_env,
	  "show env [<var>]                        : dump environment variables known to the process" },
	{ { "show", "pools" }, CLI_LEVEL_USER, cli_show_pools,
	  "show pools                              : per-pool objects allocated and in use" },
	{ { "show", "version" }, CLI_LEVEL_USER, cli_show_version,
	  "show version                            : show version of the current process" },
	{ { "set", "server" }, CLI_LEVEL_ADMIN, cli_set_server,
	  "set server <bk>/<srv> [opts]            : change a server's state, weight or health" },
	{ { "enable", "server" }, CLI_LEVEL_ADMIN, cli_enable_disable_server,
	  "enable server <bk>/<srv>                : enable a disabled server (set state ready)" },
	{ { "disable", "server" }, CLI_LEVEL_ADMIN, cli_enable_disable_server,
	  "disable server <bk>/<srv>               : disable a server (set state maint)" },
	{ { "set", "maxconn" }, CLI_LEVEL_ADMIN, cli_set_maxconn,
	  "set maxconn [global|frontend|server] ...: change a maxconn setting" },
	{ { NULL } }
};
CLI_REGISTER(stats_kws)

uint64_t stats_uptime_sec(void)
{
	return (clock_mono_ms() - global.start_ms) / 1000;
}

int stats_run_queue(void)
{
	int run_queue = 0;

	for (int i = 0; i < global.nbthread; i++)
		for (int c = 0; c < TC_COUNT; c++)
			run_queue += thread_ctx[i].runq_len[c];
	return run_queue;
}

static int cli_show_pools(char **args, int nargs, struct cli_out *out, int level)
{
	struct pool_stats st[POOL_MAX + 1];
	int n = pool_get_stats(st, POOL_MAX + 1);
	int64_t total = 0;
	struct mallinfo2 mi;

	cli_printf(out, "Dumping pools usage.\n");
	for (int i = 0; i < n; i++) {
		cli_printf(out, "  - Pool %s (%zu bytes) : %lld allocated (%lld bytes), %lld used\n",
		           st[i].name, st[i].size, (long long)st[i].allocated,
		           (long long)(st[i].allocated * (int64_t)st[i].size), (long long)st[i].used);
		total += st[i].allocated * (int64_t)st[i].size;
	}
	cli_printf(out, "Total: %d pools, %lld bytes allocated.\n", n, (long long)total);
	/* what the allocator holds beyond the pools (every arena), and how
	 * often memory went back to the system after a peak (pool.c) */
	mi = mallinfo2();
	cli_printf(out, "Allocator: %zu bytes in use (pools included), %llu trims after peaks.\n",
	           mi.uordblks + mi.hblkhd, (unsigned long long)pool_trim_count());
	return 0;
}

static int cli_show_version(char **args, int nargs, struct cli_out *out, int level)
{
	cli_printf(out, "%s\n", SLUICE_VERSION);
	return 0;
}

#define INFO(name, ...) do { \
		char v_[256]; \
		snprintf(v_, sizeof(v_), __VA_ARGS__); \
		stats_info_field(out, fmt, &first, name, v_); \
	} while (0)

/* show info [typed|json] [desc] */
static int cli_show_info(char **args, int nargs, struct cli_out *out, int level)
{
	uint64_t up = stats_uptime_sec();
	int run_queue = stats_run_queue();
	int tasks = stream_count() + run_queue;
	int fmt = STATS_FMT_TEXT, first = 1;
	uint32_t now = (uint32_t)clock_mono_ms();

	for (int i = 2; i < nargs; i++) {
		if (!strcmp(args[i], "typed"))
			fmt = STATS_FMT_TYPED;
		else if (!strcmp(args[i], "json"))
			fmt = STATS_FMT_JSON;
	}
	if (fmt == STATS_FMT_JSON)
		cli_printf(out, "[");
	INFO("Name", "sluice");
	INFO("Version", "%s", SLUICE_VERSION);
	INFO("Release_date", "2026/11/22");
	INFO("Nbthread", "%d", global.nbthread);
	INFO("Nbproc", "1");
	INFO("Process_num", "1");
	INFO("Pid", "%d", global.pid);
	INFO("Uptime", "%llud %lluh%02llum%02llus", (unsigned long long)(up / 86400),
	     (unsigned long long)(up / 3600 % 24), (unsigned long long)(up / 60 % 60),
	     (unsigned long long)(up % 60));
	INFO("Uptime_sec", "%llu", (unsigned long long)up);
	INFO("Ulimit-n", "%ld", global.rlimit_nofile);
	INFO("Maxsock", "%d", global.maxsock);
	INFO("Maxconn", "%d", atomic_load(&global.maxconn_rt));
	INFO("Hard_maxconn", "%d", global.maxconn);
	INFO("CurrConns", "%d", atomic_load(&global.actconn));
	INFO("CumConns", "%llu", (unsigned long long)atomic_load(&global.cum_conns));
	INFO("CumReq", "%llu", (unsigned long long)atomic_load(&global.cum_req));
	INFO("ConnRate", "%u", freq_ctr_read(&global.conn_rate, 1000, now));
	INFO("ConnRateLimit", "%d", global.maxconnrate);
	INFO("MaxConnRate", "%u", atomic_load(&global.conn_rate_max));
	INFO("SessRate", "%u", freq_ctr_read(&global.conn_rate, 1000, now));
	INFO("SessRateLimit", "%d", global.maxsessrate);
	INFO("MaxSessRate", "%u", atomic_load(&global.conn_rate_max));
	INFO("Tasks", "%d", tasks);
	INFO("Run_queue", "%d", run_queue);
	INFO("node", "%s", global.node ? global.node : "");
	INFO("description", "%s", global.desc ? global.desc : "");
	INFO("Stopping", "%d", atomic_load(&global.stopping));
	INFO("Jobs", "%d", stream_count());
	INFO("Listeners", "%d", 0 + (int)(!list_empty(&listeners)));
	INFO("DroppedLogs", "%llu", (unsigned long long)atomic_load(&global.dropped_logs));
	if (fmt == STATS_FMT_JSON)
		cli_printf(out, "]\n");
	return 0;
}

/* ---- show stat ---- */

/* HAProxy 2.6's column names, in order: tools index columns by position. */
static const char stat_header[] =
	"# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,"
	"wretr,wredis,status,weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,"
	"sid,throttle,lbtot,tracked,type,rate,rate_lim,rate_max,check_status,check_code,"
	"check_duration,hrsp_1xx,hrsp_2xx,hrsp_3xx,hrsp_4xx,hrsp_5xx,hrsp_other,hanafail,"
	"req_rate,req_rate_max,req_tot,cli_abrt,srv_abrt,comp_in,comp_out,comp_byp,comp_rsp,"
	"lastsess,last_chk,last_agt,qtime,ctime,rtime,ttime,agent_status,agent_code,"
	"agent_duration,check_desc,agent_desc,check_rise,check_fall,check_health,agent_rise,"
	"agent_fall,agent_health,addr,cookie,mode,algo,conn_rate,conn_rate_max,conn_tot,"
	"intercepted,dcon,dses,wrew,connect,reuse,cache_lookups,cache_hits,srv_icur,src_ilim,"
	"qtime_max,ctime_max,rtime_max,ttime_max,eint,idle_conn_cur,safe_conn_cur,"
	"used_conn_cur,need_conn_est,uweight,agg_server_status,agg_server_check_status,"
	"agg_check_status,"
	/* HAProxy's stats modules, after its "-" marker */
	"-,ssl_sess,ssl_reused_sess,ssl_failed_handshake,h2_headers_rcvd,h2_data_rcvd,"
	"h2_settings_rcvd,h2_rst_stream_rcvd,h2_goaway_rcvd,h2_detected_conn_protocol_errors,"
	"h2_detected_strm_protocol_errors,h2_rst_stream_resp,h2_goaway_resp,h2_open_connections,"
	"h2_backend_open_streams,h2_total_connections,h2_backend_total_streams,"
	"h1_open_connections,h1_open_streams,h1_total_connections,h1_total_streams,h1_bytes_in,"
	"h1_bytes_out,h1_spliced_bytes_in,h1_spliced_bytes_out,"
	/* sluice's columns: after HAProxy's, so that positions do not move */
	"qtime_p50_us,qtime_p99_us,ctime_p50_us,ctime_p99_us,ttime_p50_us,ttime_p99_us,"
	"queued_tot,\n";

static void row_set(struct stat_row *r, enum stat_col c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void row_set(struct stat_row *r, enum stat_col c, const char *fmt, ...)
{
	va_list ap;

	free(r->f[c]);   /* a later value overrides (HTTP columns) */
	va_start(ap, fmt);
	if (vasprintf(&r->f[c], fmt, ap) < 0)
		r->f[c] = NULL;
	va_end(ap);
}

static void row_u64(struct stat_row *r, enum stat_col c, uint64_t v)
{
	row_set(r, c, "%llu", (unsigned long long)v);
}

void stats_row_free(struct stat_row *r)
{
	for (int i = 0; i < ST_COUNT; i++) {
		free(r->f[i]);
		r->f[i] = NULL;
	}
}

void stats_csv_header(struct cli_out *out)
{
	cli_printf(out, "%s", stat_header);
}

void stats_csv_row(struct cli_out *out, struct stat_row *r)
{
	for (int i = 0; i < ST_COUNT; i++) {
		const char *f = r->f[i] ? r->f[i] : "";

		/* a text with a comma, a quote or a line break is quoted, its
		 * quotes doubled, as HAProxy writes it (a check's info text:
		 * "Detected 2 consecutive errors, last one was: ...") */
		if (!f[strcspn(f, ",\"\r\n")]) {
			cli_printf(out, "%s,", f);
			continue;
		}
		cli_printf(out, "\"");
		for (const char *q; (q = strchr(f, '"')); f = q + 1)
			cli_printf(out, "%.*s\"\"", (int)(q - f), f);
		cli_printf(out, "%s\",", f);
	}
	cli_printf(out, "\n");
	stats_row_free(r);
}

static void row_common(struct stat_row *r, const struct proxy *px, const char *svname,
                       const struct counters *c, int type, int sid)
{
	row_set(r, ST_PXNAME, "%s", px->name);
	row_set(r, ST_SVNAME, "%s", svname);
	row_u64(r, ST_SMAX, (uint64_t)atomic_load(&((struct counters *)c)->cur_max));
	row_u64(r, ST_STOT, atomic_load(&((struct counters *)c)->cum_sess));
	row_u64(r, ST_BIN, atomic_load(&((struct counters *)c)->bytes_in));
	row_u64(r, ST_BOUT, atomic_load(&((struct counters *)c)->bytes_out));
	row_set(r, ST_PID, "1");
	row_set(r, ST_IID, "%d", px->uuid);
	row_set(r, ST_SID, "%d", sid);
	row_set(r, ST_TYPE, "%d", type);
	row_set(r, ST_MODE, "%s", proxy_mode_name(px->mode));
	row_set(r, ST_MARKER, "-");
}

/* HAProxy's ssl stats module: frontends, backends and servers. */
static void row_ssl(struct stat_row *r, const struct ssl_counters *c)
{
	struct ssl_counters *m = (struct ssl_counters *)c;

	row_u64(r, ST_SSL_SESS, atomic_load(&m->sess));
	row_u64(r, ST_SSL_REUSED_SESS, atomic_load(&m->reused_sess));
	row_u64(r, ST_SSL_FAILED_HANDSHAKE, atomic_load(&m->failed_handshake));
}

/* A gauge: every connection or stream adds 1 and takes it back from the
 * same thread, so it never reads below 0 (a negative value would show an
 * accounting bug: printed as it is). */
static void row_gauge(struct stat_row *r, enum stat_col c, _Atomic int64_t *g)
{
	row_set(r, c, "%lld", (long long)atomic_load_explicit(g, memory_order_relaxed));
}

/* HAProxy's three stats modules, for a frontend or a backend (whatever the
 * mode: 0s in TCP mode, as HAProxy shows); a server row has the ssl ones
 * only, the h2 and h1 columns stay empty there. sluice does not splice:
 * the spliced byte counts are 0. */
static void row_mux(struct stat_row *r, const struct mux_counters *c)
{
	struct mux_counters *m = (struct mux_counters *)c;
	struct h2_counters *h2 = &m->h2;
	struct h1_counters *h1 = &m->h1;

	row_ssl(r, &m->ssl);
	row_u64(r, ST_H2_HEADERS_RCVD, atomic_load(&h2->headers_rcvd));
	row_u64(r, ST_H2_DATA_RCVD, atomic_load(&h2->data_rcvd));
	row_u64(r, ST_H2_SETTINGS_RCVD, atomic_load(&h2->settings_rcvd));
	row_u64(r, ST_H2_RST_STREAM_RCVD, atomic_load(&h2->rst_stream_rcvd));
	row_u64(r, ST_H2_GOAWAY_RCVD, atomic_load(&h2->goaway_rcvd));
	row_u64(r, ST_H2_CONN_PROTO_ERR, atomic_load(&h2->conn_proto_err));
	row_u64(r, ST_H2_STRM_PROTO_ERR, atomic_load(&h2->strm_proto_err));
	row_u64(r, ST_H2_RST_STREAM_RESP, atomic_load(&h2->rst_stream_resp));
	row_u64(r, ST_H2_GOAWAY_RESP, atomic_load(&h2->goaway_resp));
	row_gauge(r, ST_H2_OPEN_CONNS, &h2->open_conns);
	row_gauge(r, ST_H2_OPEN_STREAMS, &h2->open_streams);
	row_u64(r, ST_H2_TOTAL_CONNS, atomic_load(&h2->total_conns));
	row_u64(r, ST_H2_TOTAL_STREAMS, atomic_load(&h2->total_streams));
	row_gauge(r, ST_H1_OPEN_CONNS, &h1->conn.open);
	row_gauge(r, ST_H1_OPEN_STREAMS, &h1->open_streams);
	row_u64(r, ST_H1_TOTAL_CONNS, atomic_load(&h1->total_conns));
	row_u64(r, ST_H1_TOTAL_STREAMS, atomic_load(&h1->total_streams));
	row_u64(r, ST_H1_BYTES_IN, atomic_load(&h1->conn.bytes_in));
	row_u64(r, ST_H1_BYTES_OUT, atomic_load(&h1->conn.bytes_out));
	row_set(r, ST_H1_SPLICED_IN, "0");
	row_set(r, ST_H1_SPLICED_OUT, "0");
}

static uint64_t us_to_ms(uint64_t us)
{
	return (us + 500) / 1000;
}

/* HAProxy's averages over the last 1024 sessions and maxima, in ms (rtime:
 * no response time in TCP, 0 as HAProxy shows). */
static void row_times(struct stat_row *r, const struct time_avgs *t)
{
	row_u64(r, ST_QTIME, us_to_ms(swrate_avg(&t->qtime)));
	row_u64(r, ST_CTIME, us_to_ms(swrate_avg(&t->ctime)));
	row_set(r, ST_RTIME, "0");
	row_u64(r, ST_TTIME, us_to_ms(swrate_avg(&t->ttime)));
	row_u64(r, ST_QTIME_MAX, us_to_ms(swrate_max(&t->qtime)));
	row_u64(r, ST_CTIME_MAX, us_to_ms(swrate_max(&t->ctime)));
	row_set(r, ST_RTIME_MAX, "0");
	row_u64(r, ST_TTIME_MAX, us_to_ms(swrate_max(&t->ttime)));
}

/* sluice's percentile columns, estimated from the log2 histograms (us). */
static void row_percentiles(struct stat_row *r, const struct hist_snap *q,
                            const struct hist_snap *c, const struct hist_snap *t,
                            uint64_t queued)
{
	row_u64(r, ST_QTIME_P50, hist_percentile(q, 0.50));
	row_u64(r, ST_QTIME_P99, hist_percentile(q, 0.99));
	row_u64(r, ST_CTIME_P50, hist_percentile(c, 0.50));
	row_u64(r, ST_CTIME_P99, hist_percentile(c, 0.99));
	row_u64(r, ST_TTIME_P50, hist_percentile(t, 0.50));
	row_u64(r, ST_TTIME_P99, hist_percentile(t, 0.99));
	row_u64(r, ST_QUEUED_TOT, queued);
}

/* The compression columns of frontends and backends (HAProxy 2.6 fills
 * them in TCP mode too). */
static void row_comp(struct stat_row *r, const struct counters *c)
{
	row_u64(r, ST_COMP_IN, atomic_load(&c->comp_in));
	row_u64(r, ST_COMP_OUT, atomic_load(&c->comp_out));
	row_u64(r, ST_COMP_BYP, atomic_load(&c->comp_byp));
	row_u64(r, ST_COMP_RSP, atomic_load(&c->comp_rsp));
}

/* The HTTP columns, for proxies in mode http (empty in TCP mode, as in
 * HAProxy). <kind>: 0 frontend, 1 backend, 2 server. */
static void row_http(struct stat_row *r, const struct proxy *px, const struct counters *c,
                     int kind)
{
	static const int hrsp[6] = { ST_HRSP_1XX, ST_HRSP_2XX, ST_HRSP_3XX, ST_HRSP_4XX,
	                             ST_HRSP_5XX, ST_HRSP_OTHER };

	if (px->mode != PX_MODE_HTTP)
		return;
	for (int i = 0; i < 6; i++)
		row_u64(r, hrsp[i], atomic_load(&c->hrsp[i]));
	row_u64(r, ST_DRESP, atomic_load(&c->denied_resp));
	row_u64(r, ST_WREW, atomic_load(&c->failed_rewrites));
	row_u64(r, ST_EINT, atomic_load(&c->internal_errors));
	row_u64(r, ST_REQ_TOT, atomic_load(&c->cum_req));
	if (kind == 0) {
		row_set(r, ST_REQ_RATE, "%u", freq_ctr_read((struct freq_ctr *)&c->req_rate, 1000,
		                                            (uint32_t)clock_mono_ms()));
		row_set(r, ST_REQ_RATE_MAX, "%u", atomic_load(&c->req_rate_max));
	}
	if (kind < 2) {
		row_u64(r, ST_CACHE_LOOKUPS, atomic_load(&c->cache_lookups));
		row_u64(r, ST_CACHE_HITS, atomic_load(&c->cache_hits));
	}
	if (kind == 0) {
		row_u64(r, ST_INTERCEPTED, atomic_load(&c->intercepted));
	} else {
		row_u64(r, ST_CONNECT, atomic_load(&c->connect));
		row_u64(r, ST_REUSE, atomic_load(&c->reuse));
	}
}

void stats_row_frontend(struct stat_row *r, struct proxy *px)
{
	const struct counters *c = &px->fe_cnt;

	row_common(r, px, "FRONTEND", c, 0, 0);
	row_set(r, ST_SCUR, "%d", atomic_load(&px->feconn));
	row_set(r, ST_SLIM, "%d", proxy_fe_maxconn(px) ? proxy_fe_maxconn(px) :
	        atomic_load(&global.maxconn_rt));
	row_u64(r, ST_DREQ, atomic_load(&px->fe_cnt.denied_req));
	row_set(r, ST_DRESP, "0");
	row_u64(r, ST_EREQ, atomic_load(&px->fe_cnt.failed_req));
	{
		int st = atomic_load(&px->fe_state);

		row_set(r, ST_STATUS, "%s", px->disabled || st == PX_FE_STOPPED ||
		        atomic_load(&global.stopping) ? "STOP" : st == PX_FE_PAUSED ? "PAUSED" : "OPEN");
	}
	{
		/* sessions and connections per second: one counter for both
		 * (sluice starts a session with each accepted connection) */
		uint32_t rate = freq_ctr_read(&px->fe_sess_rate, 1000, (uint32_t)clock_mono_ms());
		uint32_t max = atomic_load(&px->fe_sess_rate_max);

		row_set(r, ST_RATE, "%u", rate);
		row_set(r, ST_RATE_LIM, "%d", px->fe_rate_lim);
		row_set(r, ST_RATE_MAX, "%u", max);
		row_set(r, ST_CONN_RATE, "%u", rate);
		row_set(r, ST_CONN_RATE_MAX, "%u", max);
	}
	row_u64(r, ST_CONN_TOT, atomic_load(&px->fe_cnt.cum_conn));
	row_set(r, ST_DCON, "0");
	row_set(r, ST_DSES, "0");
	row_comp(r, c);
	row_http(r, px, c, 0);
	row_mux(r, &px->fe_mux);
}

/* The columns of a check's or an agent's last result. */
struct check_cols {
	enum stat_col status, code, duration, last, desc, rise, fall, health;
};
static const struct check_cols check_cols = {
	ST_CHECK_STATUS, ST_CHECK_CODE, ST_CHECK_DURATION, ST_LAST_CHK, ST_CHECK_DESC,
	ST_CHECK_RISE, ST_CHECK_FALL, ST_CHECK_HEALTH,
};
static const struct check_cols agent_cols = {
	ST_AGENT_STATUS, ST_AGENT_CODE, ST_AGENT_DURATION, ST_LAST_AGT, ST_AGENT_DESC,
	ST_AGENT_RISE, ST_AGENT_FALL, ST_AGENT_HEALTH,
};

static void row_check_cols(struct stat_row *r, const struct check_state *st, int running,
                           const struct check_cols *c)
{
	row_set(r, c->status, "%s%s", running ? "* " : "", chk_status_info(st->status));
	if (st->status >= CHK_ST_L57DATA)
		row_set(r, c->code, "%d", st->code);
	if (st->status >= CHK_ST_CHECKED && st->duration_ms >= 0)
		row_set(r, c->duration, "%d", st->duration_ms);
	row_set(r, c->last, "%s", st->desc);
	row_set(r, c->desc, "%s", chk_status_desc(st->status));
	row_set(r, c->rise, "%d", st->h.rise);
	row_set(r, c->fall, "%d", st->h.fall);
	row_set(r, c->health, "%d", st->h.health);
}

/* The status, check and history columns of a server, as HAProxy 2.6
 * fills them: the check's columns only for a checked server, and its
 * result only while it is not in maintenance (its checks pause there). */
static void row_srv_state(struct stat_row *r, struct server *s, uint64_t now)
{
	struct check_state st;
	int admin = atomic_load(&s->admin);
	int checked = s->check != NULL && !atomic_load(&s->chk_disabled);
	char status[320];

	int op = atomic_load(&s->op_state);
	int agent = s->agent != NULL && !atomic_load(&s->agent_disabled);
	struct check_state ag;

	if (s->track) {
		/* a tracking server shows the health of the server checked
		 * at the end of its chain, and where a maintenance comes from */
		struct server *root = s->track;

		while (root->track)
			root = root->track;
		srv_check_snapshot(root, &st);
		chk_status_column(status, sizeof(status), admin,
		                  root->check != NULL && !atomic_load(&root->chk_disabled), op, &st.h);
		if (admin == SRV_ADMIN_MAINT && srv_admin_inherited(s))
			snprintf(status, sizeof(status), "MAINT (via %s/%s)", s->track->be->name,
			         s->track->name);
		row_set(r, ST_TRACKED, "%s/%s", s->track->be->name, s->track->name);
		row_set(r, ST_STATUS, "%s", status);
		row_set(r, ST_LASTCHG, "%lld", (long long)srv_lastchg_sec(s, now));
		return;
	}
	srv_check_snapshot(s, &st);
	chk_status_column(status, sizeof(status), admin, checked, op, &st.h);
	if (agent) {
		srv_agent_snapshot(s, &ag);
		/* what the agent did shows (HAProxy 2.6) */
		if (op == SRV_OP_DOWN && ag.h.health == 0 && admin != SRV_ADMIN_MAINT)
			snprintf(status, sizeof(status), "DOWN (agent)");
		else if (admin == SRV_ADMIN_DRAIN && atomic_load(&s->admin_by_agent) &&
		         op != SRV_OP_DOWN)
			snprintf(status + strlen(status), sizeof(status) - strlen(status), " (agent)");
		row_check_cols(r, &ag, check_agent_in_progress(s), &agent_cols);
	}
	row_set(r, ST_STATUS, "%s", status);
	row_set(r, ST_LASTCHG, "%lld", (long long)srv_lastchg_sec(s, now));
	if (!checked)
		return;
	row_u64(r, ST_CHKFAIL, atomic_load(&s->chk_fail));
	row_u64(r, ST_CHKDOWN, atomic_load(&s->down_trans));
	row_set(r, ST_DOWNTIME, "%lld", (long long)srv_downtime_sec(s, now));
	if (admin == SRV_ADMIN_MAINT)
		return;
	row_check_cols(r, &st, check_in_progress(s), &check_cols);
	if (s->observe)
		row_u64(r, ST_HANAFAIL, atomic_load(&s->hana_fail));
}

/* As HAProxy does, server addresses are shown from level operator up only. */
void stats_row_server(struct stat_row *r, struct proxy *be, struct server *s, int level)
{
	char addr[128];
	int maxc = atomic_load(&s->maxconn);

	row_common(r, be, s->name, &s->cnt, 2, s->puid);
	row_set(r, ST_QCUR, "%d", atomic_load(&s->queue.len));
	row_set(r, ST_QMAX, "%d", atomic_load(&s->cnt.queue_max));
	row_set(r, ST_SCUR, "%d", atomic_load(&s->served));
	if (maxc)
		row_set(r, ST_SLIM, "%d", maxc);
	row_set(r, ST_DRESP, "0");
	row_u64(r, ST_ECON, atomic_load(&s->cnt.failed_conns));
	row_u64(r, ST_ERESP, atomic_load(&s->cnt.failed_resp));
	row_u64(r, ST_WRETR, atomic_load(&s->cnt.retries));
	row_u64(r, ST_WREDIS, atomic_load(&s->cnt.redispatches));
	row_srv_state(r, s, clock_mono_ms());
	/* HAProxy reports the server's own weight here, also when its admin
	 * state keeps it out of load balancing (DRAIN, MAINT) */
	/* the weight it works with: slowstart's share of it while warming up */
	row_set(r, ST_WEIGHT, "%d", s->slowstart && be_dynamic_weights(be) && srv_throttle(s) < 100 ?
	        srv_lb_weight(s) : atomic_load(&s->uweight));
	if (s->slowstart && srv_throttle(s) < 100)
		row_set(r, ST_THROTTLE, "%d", be_dynamic_weights(be) ? srv_throttle(s) : 100);
	row_set(r, ST_ACT, "%d", s->backup ? 0 : 1);
	row_set(r, ST_BCK, "%d", s->backup ? 1 : 0);
	if (s->maxqueue)
		row_set(r, ST_QLIMIT, "%d", s->maxqueue);
	row_u64(r, ST_LBTOT, atomic_load(&s->cnt.cum_sess));
	row_set(r, ST_RATE, "%u", freq_ctr_read(&s->cnt.sess_rate, 1000, (uint32_t)clock_mono_ms()));
	row_set(r, ST_RATE_MAX, "%u", atomic_load(&s->cnt.sess_rate_max));
	row_u64(r, ST_CLI_ABRT, atomic_load(&s->cnt.cli_aborts));
	row_u64(r, ST_SRV_ABRT, atomic_load(&s->cnt.srv_aborts));
	{
		int64_t last = atomic_load(&s->cnt.last_sess);

		row_set(r, ST_LASTSESS, "%lld", last ? (long long)(time(NULL) - last) : -1LL);
	}
	row_times(r, &s->times);
	{
		struct hist_snap q, c, t;

		hist_snapshot(&s->qtime_hist, &q);
		hist_snapshot(&s->ctime_hist, &c);
		hist_snapshot(&s->ttime_hist, &t);
		row_percentiles(r, &q, &c, &t, atomic_load(&s->queue.cum));
	}
	if (level >= CLI_LEVEL_OPERATOR)
		row_set(r, ST_ADDR, "%s", addr_full_str(&s->addr, addr, sizeof(addr)));
	row_set(r, ST_SRV_ICUR, "%d", srv_idle_count(s));
	row_set(r, ST_USED_CONN_CUR, "%d", atomic_load(&s->used_conns));
	row_set(r, ST_IDLE_CONN_CUR, "%d", atomic_load(&s->idle_conns));
	row_set(r, ST_SAFE_CONN_CUR, "%d", atomic_load(&s->safe_conns));
	row_set(r, ST_NEED_CONN_EST, "0");
	row_set(r, ST_UWEIGHT, "%d", atomic_load(&s->uweight));
	row_http(r, be, &s->cnt, 2);
	row_ssl(r, &s->ssl_cnt);
}

void stats_row_backend(struct stat_row *r, struct proxy *be)
{
	int act = 0, bck = 0, wact = 0, wbck = 0, uact = 0, ubck = 0;

	for (int i = 0; i < be->nsrv; i++) {
		struct server *s = be->srv[i];
		int w = srv_lb_weight(s), uw = atomic_load(&s->uweight);

		if (!srv_is_usable(s))
			continue;
		if (s->backup) {
			bck++;
			wbck += w;
			ubck += uw;
		} else {
			act++;
			wact += w;
			uact += uw;
		}
	}
	row_common(r, be, "BACKEND", &be->be_cnt, 1, 0);
	row_set(r, ST_QCUR, "%d", atomic_load(&be->queue.len));
	row_set(r, ST_QMAX, "%d", atomic_load(&be->be_cnt.queue_max));
	row_set(r, ST_SCUR, "%d", atomic_load(&be->beconn));
	row_set(r, ST_SLIM, "%d", be->fullconn ? be->fullconn : 0);
	row_u64(r, ST_DREQ, atomic_load(&be->be_cnt.denied_req));
	row_set(r, ST_DRESP, "0");
	row_u64(r, ST_ECON, atomic_load(&be->be_cnt.failed_conns));
	row_u64(r, ST_ERESP, atomic_load(&be->be_cnt.failed_resp));
	row_u64(r, ST_WRETR, atomic_load(&be->be_cnt.retries));
	row_u64(r, ST_WREDIS, atomic_load(&be->be_cnt.redispatches));
	/* a backend without servers (a stats page, a service) is UP, as in HAProxy */
	row_set(r, ST_STATUS, "%s", act || bck || !be->nsrv ? "UP" : "DOWN");
	row_set(r, ST_WEIGHT, "%d", act ? wact : wbck);
	row_set(r, ST_ACT, "%d", act);
	row_set(r, ST_BCK, "%d", bck);
	row_u64(r, ST_CHKDOWN, atomic_load(&be->be_down_trans));
	row_set(r, ST_LASTCHG, "%lld", (long long)be_lastchg_sec(be, clock_mono_ms()));
	row_set(r, ST_DOWNTIME, "%lld", (long long)be_downtime_sec(be, clock_mono_ms()));
	row_u64(r, ST_LBTOT, atomic_load(&be->be_cnt.cum_sess));
	row_set(r, ST_RATE, "%u", freq_ctr_read(&be->be_cnt.sess_rate, 1000,
	                                        (uint32_t)clock_mono_ms()));
	row_set(r, ST_RATE_MAX, "%u", atomic_load(&be->be_cnt.sess_rate_max));
	row_u64(r, ST_CLI_ABRT, atomic_load(&be->be_cnt.cli_aborts));
	row_u64(r, ST_SRV_ABRT, atomic_load(&be->be_cnt.srv_aborts));
	row_set(r, ST_LASTSESS, "-1");
	row_times(r, &be->be_times);
	{
		struct hist_snap q, c, t;
		uint64_t queued = atomic_load(&be->queue.cum);

		/* the backend's waits: in its queue and in its servers' */
		for (int i = 0; i < be->nsrv; i++)
			queued += atomic_load(&be->srv[i]->queue.cum);
		be_time_hists(be, &q, &c, &t);
		row_percentiles(r, &q, &c, &t, queued);
	}
	row_set(r, ST_ALGO, "%s", lb_algo_name(be->lb_algo));
	/* HAProxy 2.6's CSV shows these as 0 (its exporter expands them,
	 * per state: promex.c) */
	row_set(r, ST_AGG_SERVER_STATUS, "0");
	row_set(r, ST_AGG_SERVER_CHECK_STATUS, "0");
	row_set(r, ST_AGG_CHECK_STATUS, "0");
	/* the weights set, slowstart aside (weight: those worked with) */
	row_set(r, ST_UWEIGHT, "%d", act ? uact : ubck);
	row_comp(r, &be->be_cnt);
	row_http(r, be, &be->be_cnt, 1);
	row_mux(r, &be->be_mux);
}

/* One row in the form asked for. */
static void stat_emit(struct cli_out *out, struct stat_row *r, int fmt, int *first)
{
	if (fmt == STATS_FMT_TEXT)
		stats_csv_row(out, r);
	else
		stats_typed_row(out, r, fmt == STATS_FMT_JSON, *first);
	*first = 0;
}

/* show stat [domain proxy] [{<iid>|<proxy>} <type> <sid>] [typed|json] [desc]
 * [up|no-maint], as HAProxy 2.6 reads it: <type> is a mask (1 frontends, 2
 * backends, 4 servers, -1 all), <sid> a server id or -1. */
static int cli_show_stat(char **args, int nargs, struct cli_out *out, int level)
{
	struct list *pos, *tmp;
	int i = 2, fmt = STATS_FMT_TEXT, first = 1, types = -1, sid = -1, iid = -1;
	int hide_down = 0, hide_maint = 0;
	const struct proxy *only = NULL;

	if (i + 1 < nargs && !strcmp(args[i], "domain")) {
		if (strcmp(args[i + 1], "proxy") != 0) {
			cli_printf(out, "Unknown domain '%s'. Only 'proxy' is available in this version "
			           "of sluice.\n", args[i + 1]);
			return -1;
		}
		i += 2;
	}
	if (i + 2 < nargs && strcmp(args[i], "typed") && strcmp(args[i], "json") &&
	    strcmp(args[i], "desc") && strcmp(args[i], "up") && strcmp(args[i], "no-maint")) {
		char *end;
		long v = strtol(args[i], &end, 10);

		if (*end || end == args[i]) {
			only = proxy_find(args[i], PX_CAP_FE | PX_CAP_BE);
			if (!only) {
				cli_printf(out, "No such proxy.\n");
				return -1;
			}
		} else {
			iid = (int)v;
		}
		types = atoi(args[i + 1]);
		sid = atoi(args[i + 2]);
		i += 3;
	}
	for (; i < nargs; i++) {
		if (!strcmp(args[i], "typed"))
			fmt = STATS_FMT_TYPED;
		else if (!strcmp(args[i], "json"))
			fmt = STATS_FMT_JSON;
		else if (!strcmp(args[i], "up"))
			hide_down = 1;
		else if (!strcmp(args[i], "no-maint"))
			hide_maint = 1;
	}
	if (fmt == STATS_FMT_TEXT)
		stats_csv_header(out);
	else if (fmt == STATS_FMT_JSON)
		cli_printf(out, "[");
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);
		struct stat_row r = { 0 };

		if ((only && px != only) || (iid >= 0 && iid != -1 && px->uuid != iid))
			continue;
		if ((px->cap & PX_CAP_FE) && (types & 1)) {
			stats_row_frontend(&r, px);
			stat_emit(out, &r, fmt, &first);
		}
		if (!(px->cap & PX_CAP_BE))
			continue;
		for (int k = 0; (types & 4) && k < px->nsrv; k++) {
			struct server *s = px->srv[k];

			if (sid != -1 && s->puid != sid)
				continue;
			if ((hide_down && srv_is_stopped(s)) ||
			    (hide_maint && atomic_load(&s->admin) == SRV_ADMIN_MAINT))
				continue;
			stats_row_server(&r, px, s, level);
			stat_emit(out, &r, fmt, &first);
		}
		if (types & 2) {
			stats_row_backend(&r, px);
			stat_emit(out, &r, fmt, &first);
		}
	}
	if (fmt == STATS_FMT_JSON)
		cli_printf(out, "]\n");
	return 0;
}

/* ---- show servers state ---- */

/* One server, HAProxy's way: op state 0 stopped (DOWN or MAINT), 2
 * running, 3 stopping (NOLB); admin bits 0x01 forced maintenance, 0x08
 * drain; the check's status, result (unknown while a check runs), health
 * (0 in maintenance) and state bits; `addr` is also the agent's. */
static void servers_state_line(struct cli_out *out, struct proxy *px, struct server *s)
{
	int admin = atomic_load(&s->admin);
	struct check_state st;
	char host[64], caddr[64] = "-", aaddr[64] = "-";
	int astate = 0;

	srv_check_snapshot(s, &st);
	if (admin == SRV_ADMIN_MAINT && (s->check || s->track || s->dynamic))
		st.h.health = 0;
	if (s->chk.has_addr)
		addr_host_str(&s->chk.addr, caddr, sizeof(caddr));
	if (s->agent && s->chk.agent_has_addr)
		addr_host_str(&s->chk.agent_addr, aaddr, sizeof(aaddr));
	/* the agent's state bits: HAProxy's CHK_ST_AGENT | CONFIGURED,
	 * ENABLED unless disabled, INPROGRESS */
	if (s->agent)
		astate = 0x12 | (atomic_load(&s->agent_disabled) ? 0 : 0x04) |
		         (check_agent_in_progress(s) ? 0x01 : 0);
	/* the agent port follows `port` in HAProxy */
	cli_printf(out, "%d %s %d %s %s %d %d %d %d %lld %d %d %d %d %d 0 0 - %d - %d %d %s %s %d\n",
	           px->uuid, px->name, s->puid, s->name,
	           addr_host_str(&s->addr.ss, host, sizeof(host)),
	           srv_is_stopped(s) ? 0 : atomic_load(&s->op_state) == SRV_OP_NOLB ? 3 : 2,
	           srv_admin_bits(s),
	           atomic_load(&s->uweight), s->iweight,
	           (long long)srv_lastchg_sec(s, clock_mono_ms()), st.status,
	           check_in_progress(s) ? CHK_RES_UNKNOWN : chk_status_result(st.status),
	           st.h.health, check_state_bits(s), astate, addr_port(&s->addr.ss),
	           s->ssl && s->ssl->enabled, s->chk.port, caddr, s->agent ? aaddr : caddr,
	           s->agent ? s->chk.agent_port : s->chk.port);
}

static int cli_show_servers_state(char **args, int nargs, struct cli_out *out, int level)
{
	struct list *pos, *tmp;
	const char *only = nargs > 3 ? args[3] : NULL;

	if (only && !proxy_find(only, PX_CAP_BE)) {
		cli_printf(out, "Can't find backend.\n");
		return -1;
	}
	cli_printf(out, "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state "
	           "srv_admin_state srv_uweight srv_iweight srv_time_since_last_change "
	           "srv_check_status srv_check_result srv_check_health srv_check_state "
	           "srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord "
	           "srv_use_ssl srv_check_port srv_check_addr srv_agent_addr srv_agent_port\n");
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!(px->cap & PX_CAP_BE) || (only && strcmp(px->name, only) != 0))
			continue;
		for (int i = 0; i < px->nsrv; i++)
			servers_state_line(out, px, px->srv[i]);
	}
	return 0;
}

/* ---- show activity ---- */

/* The counters at the last `clear counters`: each thread's act is written
 * by that thread only, so the CLI subtracts a baseline instead of writing
 * it. act_base_lock serialises CLI sessions of several threads. */
static struct activity act_base[MAX_THREADS];
static pthread_mutex_t act_base_lock = PTHREAD_MUTEX_INITIALIZER;

void stats_activity_clear(void)
{
	pthread_mutex_lock(&act_base_lock);
	for (int i = 0; i < global.nbthread; i++)
		act_base[i] = thread_ctx[i].act;
	pthread_mutex_unlock(&act_base_lock);
}

static int cli_show_activity(char **args, int nargs, struct cli_out *out, int level)
{
#define ACT_ROW(label, field) do { \
		uint64_t tot = 0; \
		for (int i = 0; i < global.nbthread; i++) \
			tot += thread_ctx[i].act.field - base[i].field; \
		cli_printf(out, "%-16s %llu [", label ":", (unsigned long long)tot); \
		for (int i = 0; i < global.nbthread; i++) \
			cli_printf(out, " %llu", \
			           (unsigned long long)(thread_ctx[i].act.field - base[i].field)); \
		cli_printf(out, " ]\n"); \
	} while (0)

	struct activity base[MAX_THREADS];   /* a copy, taken under the lock */

	pthread_mutex_lock(&act_base_lock);
	memcpy(base, act_base, sizeof(base));
	pthread_mutex_unlock(&act_base_lock);
	cli_printf(out, "thread_id: %d (1..%d)\n", th_ctx ? th_ctx->tid + 1 : 0, global.nbthread);
	cli_printf(out, "queue_wakeup: %s\n", sched_shared_runqueue ? "shared-runqueue" : "instant");
	ACT_ROW("loops", loops);
	ACT_ROW("tasks_run", tasks_run);
	ACT_ROW("wake_local", wake_local);
	ACT_ROW("wake_remote", wake_remote);
	ACT_ROW("wake_elided", wake_elided);
	ACT_ROW("wake_instant", wake_instant);
	ACT_ROW("signals_sent", signals_sent);
	ACT_ROW("signals_rcvd", signals_rcvd);
	ACT_ROW("sleeps", sleeps);
	ACT_ROW("poll_events", poll_events);
	ACT_ROW("timers_fired", timers_fired);
	ACT_ROW("accepted", accepts);
	ACT_ROW("budget_left", budget_exhausted);
	ACT_ROW("wdt_warnings", wdt_warnings);
	ACT_ROW("fd_trims", fd_trims);
	ACT_ROW("fd_waits", fd_waits);
	cli_printf(out, "%-16s %d of %ld\n", "fd_used:", atomic_load(&global.fd_used),
	           global.rlimit_nofile);
	{
		cli_printf(out, "%-16s", "conns:");
		for (int i = 0; i < global.nbthread; i++)
			cli_printf(out, " %d", thread_ctx[i].conns);
		cli_printf(out, "\n");
	}
	{
		int pending;
		uint64_t done;

		grace_stats(&pending, &done);
		cli_printf(out, "%-16s %d\n%-16s %llu\n", "grace_pending:", pending, "grace_done:",
		           (unsigned long long)done);
	}
#undef ACT_ROW
	return 0;
}

static int cli_show_sess(char **args, int nargs, struct cli_out *out, int level)
{
	stream_dump_all(out, 10000);
	return 0;
}

static int cli_show_env(char **args, int nargs, struct cli_out *out, int level)
{
	if (nargs > 2) {
		const char *v = getenv(args[2]);

		if (!v) {
			cli_printf(out, "Variable not found\n");
			return -1;
		}
		cli_printf(out, "%s=%s\n", args[2], v);
		return 0;
	}
	for (char **e = environ; *e; e++)
		cli_printf(out, "%s\n", *e);
	return 0;
}

/* ---- setters ---- */

/* "#<id>" names a proxy by its id (iid), as HAProxy allows. */
struct proxy *stats_find_proxy_arg(const char *arg, unsigned int cap)
{
	struct list *pos, *nxt;
	char *end;
	long id;

	if (arg[0] != '#')
		return proxy_find(arg, cap);
	id = strtol(arg + 1, &end, 10);
	if (end == arg + 1 || *end)
		return NULL;
	list_for_each_safe(pos, nxt, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (px->uuid == id && (px->cap & cap))
			return px;
	}
	return NULL;
}

struct server *stats_find_server_arg(const char *arg, struct cli_out *out)
{
	char name[256];
	const char *slash = strchr(arg, '/');
	struct proxy *be;
	struct server *s = NULL;

	if (!slash || (size_t)(slash - arg) >= sizeof(name)) {
		cli_printf(out, "Require 'backend/server'.\n");
		return NULL;
	}
	memcpy(name, arg, (size_t)(slash - arg));
	name[slash - arg] = '\0';
	be = stats_find_proxy_arg(name, PX_CAP_BE);
	if (!be) {
		cli_printf(out, "No such backend.\n");
		return NULL;
	}
	if (slash[1] == '#') {
		char *end;
		long id = strtol(slash + 2, &end, 10);

		for (int i = 0; end != slash + 2 && !*end && i < be->nsrv; i++)
			if (be->srv[i]->puid == id)
				s = be->srv[i];
	} else {
		s = server_find(be, slash + 1);
	}
	if (!s)
		cli_printf(out, "No such server.\n");
	return s;
}


/* HAProxy's messages, two of them without their LF (as HAProxy 2.6 prints
 * them: the answer then lacks its empty line). */
int stats_set_weight(struct server *s, const char *arg, struct cli_out *out)
{
	char *end;
	long w;

	if (!arg || !*arg) {
		cli_printf(out, "Require <weight> or <weight%%>.\n");
		return -1;
	}
	w = strtol(arg, &end, 10);
	if (end == arg) {
		cli_printf(out, "Empty weight string empty or preceded by garbage");
		return -1;
	}
	if (*end == '%') {
		if (end[1]) {
			cli_printf(out, "Trailing garbage in weight string");
			return -1;
		}
		if (w < 0) {
			cli_printf(out, "Relative weight must be positive.\n");
			return -1;
		}
		w = (long)s->iweight * (w > 100000 ? 100000 : w) / 100;
		if (w > SRV_WEIGHT_MAX)
			w = SRV_WEIGHT_MAX;
	} else if (*end) {
		cli_printf(out, "Trailing garbage in weight string");
		return -1;
	} else if (w < 0 || w > SRV_WEIGHT_MAX) {
		cli_printf(out, "Absolute weight can only be between 0 and %d inclusive.\n",
		           SRV_WEIGHT_MAX);
		return -1;
	}
	if (s->be->lb_algo == LB_STATIC_RR && w != 0 && w != s->iweight) {
		cli_printf(out, "Backend is using a static LB algorithm and only accepts "
		           "weights '0%%' and '100%%'.\n");
		return -1;
	}
	atomic_store(&s->uweight, (int)w);
	if (w)
		queue_kick(s);
	return 0;
}

static int cli_set_server(char **args, int nargs, struct cli_out *out, int level)
{
	struct server *s;
	const char *val;

	if (nargs < 4) {
		cli_printf(out, "usage: set server <backend>/<server> state ready|drain|maint | "
		           "weight <0-256>[%%] | health up|stopping|down\n");
		return -1;
	}
	s = stats_find_server_arg(args[2], out);
	if (!s)
		return -1;
	val = nargs > 4 ? args[4] : "";
	if (strcmp(args[3], "state") == 0) {
		if (!strcmp(val, "ready"))
			srv_set_admin(s, SRV_ADMIN_READY);
		else if (!strcmp(val, "drain"))
			srv_set_admin(s, SRV_ADMIN_DRAIN);
		else if (!strcmp(val, "maint"))
			srv_set_admin(s, SRV_ADMIN_MAINT);
		else {
			cli_printf(out, "'set server <srv> state' expects 'ready', 'drain' and 'maint'.\n");
			return -1;
		}
		return 0;
	}
	if (strcmp(args[3], "weight") == 0)
		return stats_set_weight(s, val, out);
	if (strcmp(args[3], "health") == 0) {
		if (s->track) {
			cli_printf(out, "cannot change health on a tracking server.\n");
			return -1;
		}
		static const char *const ops[] = { [SRV_OP_UP] = "up", [SRV_OP_DOWN] = "down",
		                                   [SRV_OP_NOLB] = "stopping" };

		for (int op = 0; op < 3; op++)
			if (strcmp(val, ops[op]) == 0) {
				srv_set_health(s, op);
				return 0;
			}
		cli_printf(out, "'set server <srv> health' expects 'up', 'stopping', or 'down'.\n");
		return -1;
	}
	if (strcmp(args[3], "agent") == 0) {
		if (!s->agent) {
			cli_printf(out, "agent checks are not enabled on this server.\n");
			return -1;
		}
		if (strcmp(val, "up") && strcmp(val, "down")) {
			cli_printf(out, "'set server <srv> agent' expects 'up' or 'down'.\n");
			return -1;
		}
		srv_set_agent_health(s, val[0] == 'u');
		return 0;
	}
	cli_printf(out, "'set server <srv>' only supports 'state' and 'weight' in this "
	           "version of sluice.\n");
	return -1;
}

static int cli_enable_disable_server(char **args, int nargs, struct cli_out *out, int level)
{
	struct server *s;

	if (nargs < 3) {
		cli_printf(out, "Require 'backend/server'.\n");
		return -1;
	}
	s = stats_find_server_arg(args[2], out);
	if (!s)
		return -1;
	srv_set_admin(s, strcmp(args[0], "enable") == 0 ? SRV_ADMIN_READY : SRV_ADMIN_MAINT);
	return 0;
}

static int cli_set_maxconn(char **args, int nargs, struct cli_out *out, int level)
{
	long v;
	char *end;

	if (nargs < 4 || (strcmp(args[2], "global") != 0 && nargs < 5)) {
		cli_printf(out, "usage: set maxconn global <value> | frontend <fe> <value> | "
		           "server <bk>/<srv> <value>\n");
		return -1;
	}
	v = strtol(args[nargs - 1], &end, 10);
	if (*end || v < 0 || end == args[nargs - 1]) {
		cli_printf(out, "Value out of range.\n");
		return -1;
	}
	if (strcmp(args[2], "global") == 0) {
		if (v > global.maxconn) {
			cli_printf(out, "Value out of range (max %d).\n", global.maxconn);
			return -1;
		}
		atomic_store(&global.maxconn_rt, v ? (int)v : global.maxconn);
		listeners_resume_all();
		return 0;
	}
	if (strcmp(args[2], "frontend") == 0) {
		struct proxy *fe = stats_find_proxy_arg(args[3], PX_CAP_FE);

		if (!fe) {
			cli_printf(out, "No such frontend.\n");
			return -1;
		}
		atomic_store(&fe->fe_maxconn_rt, (int)v);
		listeners_resume_all();
		return 0;
	}
	if (strcmp(args[2], "server") == 0) {
		struct server *s = stats_find_server_arg(args[3], out);

		if (!s)
			return -1;
		atomic_store(&s->maxconn, (int)v);
		queue_kick(s);
		return 0;
	}
	cli_printf(out, "'set maxconn' only supports 'global', 'frontend' and 'server'.\n");
	return -1;
}
