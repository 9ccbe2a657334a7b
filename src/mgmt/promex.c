/* Prometheus exporter: `http-request use-service prometheus-exporter`.
 *
 * Answers a scrape with the text exposition format 0.0.4, under HAProxy
 * 2.6's metric names and labels (haproxy_process_*, haproxy_frontend_*,
 * haproxy_backend_*, haproxy_server_*), so that dashboards and alerts
 * written for HAProxy work unchanged; then sluice's own metrics, named
 * sluice_* (log2 latency histograms, per-thread wake-ups).
 *
 * Values come from the rows of `show stat` (src/mgmt/stats.c), read once
 * per scrape for every proxy and server: both interfaces report the same
 * figures. As in HAProxy, metrics are grouped by name (one HELP and TYPE,
 * then a line per object); a field `show stat` leaves empty is NaN, and the
 * HTTP metrics are left out for proxies not in HTTP mode.
 *
 * The whole body is built in one heap block (its size follows the number
 * of proxies and servers, not the traffic), then handed to the stream,
 * which sends it as the client drains (see stream_reply.c). Everything here
 * runs on the scraping stream's thread and reads racy snapshots of
 * counters other threads update (display only).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/global.h>
#include <sluice/core/hist.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>
#include <sluice/http/txn.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/promex.h>
#include <sluice/mgmt/stats.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_state.h>
#include <sluice/proxy/stream.h>

static int promex_produce(struct stream *s, struct svc_reply *out);

static struct http_service promex_service = {
	.as = { .name = "prometheus-exporter" },
	.log_name = "<PROMEX>",
	.produce = promex_produce,
};

__attribute__((constructor)) static void promex_register(void)
{
	http_service_register(&promex_service);
}

/* ---- exposition format ---- */

enum pm_type { PM_GAUGE, PM_COUNTER, PM_HISTOGRAM };

static const char *const pm_type_name[] = { "gauge", "counter", "histogram" };

static void put_header(struct cli_out *o, const char *name, const char *help, enum pm_type t)
{
	cli_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, pm_type_name[t]);
}

void promex_put_label_value(struct cli_out *o, const char *v)
{
	const char *run = v;

	/* proxy and server names cannot hold these today, but a label value
	 * that breaks the line would break the whole scrape */
	for (; *v; v++) {
		const char *esc = *v == '\\' ? "\\\\" : *v == '"' ? "\\\"" : *v == '\n' ? "\\n" : NULL;

		if (!esc)
			continue;
		cli_printf(o, "%.*s%s", (int)(v - run), run, esc);
		run = v + 1;
	}
	cli_printf(o, "%s", run);
}

/* `name{proxy="px"[,server="sv"]` without the closing brace, so that the
 * caller may add labels. */
static void put_labels(struct cli_out *o, const char *name, const char *px, const char *sv)
{
	cli_printf(o, "%s{proxy=\"", name);
	promex_put_label_value(o, px);
	if (sv) {
		cli_printf(o, "\",server=\"");
		promex_put_label_value(o, sv);
	}
	cli_printf(o, "\"");
}

/* ---- process ---- */

enum pm_proc {
	PP_NBTHREAD, PP_NBPROC, PP_RELATIVE_PROCESS_ID, PP_UPTIME, PP_MAX_CONN, PP_HARD_MAX_CONN,
	PP_CUR_CONN, PP_CONN_TOTAL, PP_REQ_TOTAL, PP_TASKS, PP_RUN_QUEUE, PP_STOPPING, PP_JOBS,
	PP_DROPPED_LOGS, PP_BUILD_INFO, PP_POOL_ALLOC, PP_POOL_USED, PP_START_TIME,
};

static const struct {
	const char *name;
	enum pm_type type;
	const char *help;
} proc_metrics[] = {
	[PP_NBTHREAD] = { "nbthread", PM_GAUGE, "Number of worker threads." },
	[PP_NBPROC] = { "nbproc", PM_GAUGE, "Number of processes (always 1)." },
	[PP_RELATIVE_PROCESS_ID] = { "relative_process_id", PM_GAUGE,
	                             "Relative process number (always 1)." },
	[PP_UPTIME] = { "uptime_seconds", PM_GAUGE, "Seconds since the process started." },
	[PP_MAX_CONN] = { "max_connections", PM_GAUGE,
	                  "Connection limit of the process (maxconn, as changed at run time)." },
	[PP_HARD_MAX_CONN] = { "hard_max_connections", PM_GAUGE,
	                       "Connection limit of the process as configured." },
	[PP_CUR_CONN] = { "current_connections", PM_GAUGE, "Client connections open now." },
	[PP_CONN_TOTAL] = { "connections_total", PM_COUNTER,
	                    "Client connections accepted since start." },
	[PP_REQ_TOTAL] = { "requests_total", PM_COUNTER, "HTTP requests received since start." },
	[PP_TASKS] = { "current_tasks", PM_GAUGE, "Streams plus tasks waiting to run." },
	[PP_RUN_QUEUE] = { "current_run_queue", PM_GAUGE, "Tasks waiting to run, all threads." },
	[PP_STOPPING] = { "stopping", PM_GAUGE, "1 while the process is stopping." },
	[PP_JOBS] = { "jobs", PM_GAUGE, "Streams alive." },
	[PP_DROPPED_LOGS] = { "dropped_logs_total", PM_COUNTER,
	                      "Log messages that could not be sent." },
	[PP_BUILD_INFO] = { "build_info", PM_GAUGE, "Version of the program, as a label." },
	[PP_POOL_ALLOC] = { "pool_allocated_bytes", PM_GAUGE, "Bytes allocated in the pools." },
	[PP_POOL_USED] = { "pool_used_bytes", PM_GAUGE, "Bytes of the pools in use." },
	[PP_START_TIME] = { "start_time_seconds", PM_GAUGE,
	                    "Start time of the process, in seconds since the epoch." },
};

static void pool_bytes(uint64_t *allocated, uint64_t *used)
{
	struct pool_stats st[POOL_MAX + 1];
	int n = pool_get_stats(st, POOL_MAX + 1);

	*allocated = *used = 0;
	for (int i = 0; i < n; i++) {
		*allocated += (uint64_t)st[i].allocated * st[i].size;
		*used += (uint64_t)st[i].used * st[i].size;
	}
}

static uint64_t proc_value(enum pm_proc m, uint64_t pool_alloc, uint64_t pool_used)
{
	switch (m) {
	case PP_NBTHREAD:       return (uint64_t)global.nbthread;
	case PP_UPTIME:         return stats_uptime_sec();
	case PP_MAX_CONN:       return (uint64_t)atomic_load(&global.maxconn_rt);
	case PP_HARD_MAX_CONN:  return (uint64_t)global.maxconn;
	case PP_CUR_CONN:       return (uint64_t)atomic_load(&global.actconn);
	case PP_CONN_TOTAL:     return atomic_load(&global.cum_conns);
	case PP_REQ_TOTAL:      return atomic_load(&global.cum_req);
	case PP_TASKS:          return (uint64_t)(stream_count() + stats_run_queue());
	case PP_RUN_QUEUE:      return (uint64_t)stats_run_queue();
	case PP_STOPPING:       return (uint64_t)atomic_load(&global.stopping);
	case PP_JOBS:           return (uint64_t)stream_count();
	case PP_DROPPED_LOGS:   return atomic_load(&global.dropped_logs);
	case PP_POOL_ALLOC:     return pool_alloc;
	case PP_POOL_USED:      return pool_used;
	case PP_START_TIME:     return (uint64_t)global.start_wall;
	default:                return 1;   /* nbproc, process id, build_info */
	}
}

static void put_process(struct cli_out *o)
{
	uint64_t pool_alloc, pool_used;
	char name[96];

	pool_bytes(&pool_alloc, &pool_used);
	for (size_t i = 0; i < sizeof(proc_metrics) / sizeof(proc_metrics[0]); i++) {
		snprintf(name, sizeof(name), "haproxy_process_%s", proc_metrics[i].name);
		put_header(o, name, proc_metrics[i].help, proc_metrics[i].type);
		if (i == PP_BUILD_INFO) {
			cli_printf(o, "%s{version=\"%s\"} 1\n", name, SLUICE_VERSION);
			continue;
		}
		cli_printf(o, "%s %llu\n", name,
		           (unsigned long long)proc_value((enum pm_proc)i, pool_alloc, pool_used));
	}
}

/* ---- frontends, backends, servers: the rows of `show stat` ---- */

/* How a metric reads its field. */
enum pm_fmt {
	PMF_NUM,     /* the field as it is */
	PMF_MS,      /* milliseconds, shown in seconds */
	PMF_STATE,   /* the status column, one line per possible state */
	PMF_HRSP,    /* hrsp_1xx..hrsp_other, one line per class (code label) */
	PMF_AGG,     /* backend: its servers counted per state */
	PMF_CHK,     /* server: its check status, one line per possible status */
	PMF_CHK_CODE, /* server: the HTTP code of its check (0 below layer 7) */
	PMF_CHK_DUR, /* server: the duration of its last check, in seconds */
	PMF_AGG_CHK, /* backend: its servers counted per check status */
};

#define PMF_HTTP 0x10   /* left out for proxies not in HTTP mode */

struct pm_stat {
	const char *name;    /* after "haproxy_<kind>_" */
	enum stat_col col;
	enum pm_type type;
	unsigned char fmt;   /* enum pm_fmt, | PMF_HTTP */
	const char *help;
};

#define G PM_GAUGE
#define C PM_COUNTER

static const struct pm_stat fe_metrics[] = {
	{ "current_sessions", ST_SCUR, G, PMF_NUM, "Sessions open now." },
	{ "max_sessions", ST_SMAX, G, PMF_NUM, "Highest number of sessions open at once." },
	{ "limit_sessions", ST_SLIM, G, PMF_NUM, "Session limit (maxconn)." },
	{ "sessions_total", ST_STOT, C, PMF_NUM, "Sessions since start." },
	{ "bytes_in_total", ST_BIN, C, PMF_NUM, "Bytes received from clients." },
	{ "bytes_out_total", ST_BOUT, C, PMF_NUM, "Bytes sent to clients." },
	{ "requests_denied_total", ST_DREQ, C, PMF_NUM, "Requests denied by rules." },
	{ "responses_denied_total", ST_DRESP, C, PMF_NUM, "Responses denied by rules." },
	{ "request_errors_total", ST_EREQ, C, PMF_NUM, "Invalid or failed requests." },
	{ "status", ST_STATUS, G, PMF_STATE, "Current state, one line per state." },
	{ "limit_session_rate", ST_RATE_LIM, G, PMF_NUM, "Session rate limit per second." },
	{ "max_session_rate", ST_RATE_MAX, G, PMF_NUM, "Highest session rate per second seen." },
	{ "http_responses_total", ST_HRSP_1XX, C, PMF_HRSP | PMF_HTTP,
	  "HTTP responses by status class." },
	{ "http_requests_rate_max", ST_REQ_RATE_MAX, G, PMF_NUM | PMF_HTTP,
	  "Highest HTTP request rate per second seen." },
	{ "http_requests_total", ST_REQ_TOT, C, PMF_NUM | PMF_HTTP, "HTTP requests since start." },
	{ "http_comp_bytes_in_total", ST_COMP_IN, C, PMF_NUM | PMF_HTTP,
	  "Response bytes given to the compressor." },
	{ "http_comp_bytes_out_total", ST_COMP_OUT, C, PMF_NUM | PMF_HTTP,
	  "Bytes the compressor gave out." },
	{ "http_comp_bytes_bypassed_total", ST_COMP_BYP, C, PMF_NUM | PMF_HTTP,
	  "Response bytes that bypassed the compressor (always 0)." },
	{ "http_comp_responses_total", ST_COMP_RSP, C, PMF_NUM | PMF_HTTP,
	  "Responses compressed." },
	{ "connections_rate_max", ST_CONN_RATE_MAX, G, PMF_NUM,
	  "Highest connection rate per second seen." },
	{ "connections_total", ST_CONN_TOT, C, PMF_NUM, "Connections accepted since start." },
	{ "intercepted_requests_total", ST_INTERCEPTED, C, PMF_NUM | PMF_HTTP,
	  "Requests answered by the proxy itself (redirects, returns, services)." },
	{ "denied_connections_total", ST_DCON, C, PMF_NUM,
	  "Connections rejected by tcp-request connection rules." },
	{ "denied_sessions_total", ST_DSES, C, PMF_NUM,
	  "Sessions rejected by tcp-request session rules." },
	{ "failed_header_rewriting_total", ST_WREW, C, PMF_NUM | PMF_HTTP,
	  "Header rewrites that failed." },
	{ "internal_errors_total", ST_EINT, C, PMF_NUM | PMF_HTTP, "Internal errors." },
};

/* The metrics backends and servers share, in HAProxy's order; <be> and
 * <srv> say which of the two has each. */
static const struct pm_stat_both {
	struct pm_stat m;
	unsigned char be, srv;
} be_srv_metrics[] = {
	{ { "current_queue", ST_QCUR, G, PMF_NUM, "Requests waiting in the queue now." }, 1, 1 },
	{ { "max_queue", ST_QMAX, G, PMF_NUM, "Longest queue seen." }, 1, 1 },
	{ { "current_sessions", ST_SCUR, G, PMF_NUM, "Sessions open now." }, 1, 1 },
	{ { "max_sessions", ST_SMAX, G, PMF_NUM, "Highest number of sessions open at once." }, 1, 1 },
	{ { "limit_sessions", ST_SLIM, G, PMF_NUM, "Session limit (server maxconn, backend "
	    "fullconn)." }, 1, 1 },
	{ { "sessions_total", ST_STOT, C, PMF_NUM, "Sessions since start." }, 1, 1 },
	{ { "bytes_in_total", ST_BIN, C, PMF_NUM, "Bytes received from clients." }, 1, 1 },
	{ { "bytes_out_total", ST_BOUT, C, PMF_NUM, "Bytes sent to clients." }, 1, 1 },
	{ { "requests_denied_total", ST_DREQ, C, PMF_NUM, "Requests denied by rules." }, 1, 0 },
	{ { "responses_denied_total", ST_DRESP, C, PMF_NUM, "Responses denied by rules." }, 1, 1 },
	{ { "connection_errors_total", ST_ECON, C, PMF_NUM, "Failed connections to servers." },
	  1, 1 },
	{ { "response_errors_total", ST_ERESP, C, PMF_NUM, "Invalid or aborted responses." },
	  1, 1 },
	{ { "retry_warnings_total", ST_WRETR, C, PMF_NUM, "Connection retries." }, 1, 1 },
	{ { "redispatch_warnings_total", ST_WREDIS, C, PMF_NUM, "Redispatches to another "
	    "server." }, 1, 1 },
	{ { "status", ST_STATUS, G, PMF_STATE, "Current state, one line per state." }, 1, 1 },
	{ { "weight", ST_WEIGHT, G, PMF_NUM, "Effective weight (backend: of its usable "
	    "servers)." }, 1, 1 },
	{ { "active_servers", ST_ACT, G, PMF_NUM, "Usable active servers." }, 1, 0 },
	{ { "backup_servers", ST_BCK, G, PMF_NUM, "Usable backup servers." }, 1, 0 },
	{ { "check_failures_total", ST_CHKFAIL, C, PMF_NUM, "Failed health checks." }, 0, 1 },
	{ { "check_up_down_total", ST_CHKDOWN, C, PMF_NUM, "Transitions from UP to DOWN." }, 1, 1 },
	{ { "check_last_change_seconds", ST_LASTCHG, G, PMF_NUM, "Seconds since the last state "
	    "change." }, 1, 1 },
	{ { "downtime_seconds_total", ST_DOWNTIME, C, PMF_NUM, "Seconds spent DOWN." }, 1, 1 },
	{ { "queue_limit", ST_QLIMIT, G, PMF_NUM, "Queue limit (maxqueue)." }, 0, 1 },
	{ { "current_throttle", ST_THROTTLE, G, PMF_NUM, "Slow-start throttle, percent." }, 0, 1 },
	{ { "loadbalanced_total", ST_LBTOT, C, PMF_NUM, "Times picked by load balancing." }, 1, 1 },
	{ { "max_session_rate", ST_RATE_MAX, G, PMF_NUM, "Highest session rate per second seen." },
	  1, 1 },
	{ { "check_status", ST_CHECK_STATUS, G, PMF_CHK, "Status of the last health check, one "
	    "line per status." }, 0, 1 },
	{ { "check_code", ST_CHECK_CODE, G, PMF_CHK_CODE, "HTTP status of the last health "
	    "check (0 below layer 7)." }, 0, 1 },
	{ { "check_duration_seconds", ST_CHECK_DURATION, G, PMF_CHK_DUR, "Duration of the last "
	    "health check." }, 0, 1 },
	{ { "http_responses_total", ST_HRSP_1XX, C, PMF_HRSP | PMF_HTTP, "HTTP responses by "
	    "status class." }, 1, 1 },
	{ { "http_requests_total", ST_REQ_TOT, C, PMF_NUM | PMF_HTTP, "HTTP requests since "
	    "start." }, 1, 0 },
	{ { "client_aborts_total", ST_CLI_ABRT, C, PMF_NUM, "Transfers aborted by the client." },
	  1, 1 },
	{ { "server_aborts_total", ST_SRV_ABRT, C, PMF_NUM, "Transfers aborted by the server." },
	  1, 1 },
	{ { "http_comp_bytes_in_total", ST_COMP_IN, C, PMF_NUM | PMF_HTTP, "Response bytes "
	    "given to the compressor." }, 1, 0 },
	{ { "http_comp_bytes_out_total", ST_COMP_OUT, C, PMF_NUM | PMF_HTTP, "Bytes the "
	    "compressor gave out." }, 1, 0 },
	{ { "http_comp_bytes_bypassed_total", ST_COMP_BYP, C, PMF_NUM | PMF_HTTP, "Response "
	    "bytes that bypassed the compressor (always 0)." }, 1, 0 },
	{ { "http_comp_responses_total", ST_COMP_RSP, C, PMF_NUM | PMF_HTTP, "Responses "
	    "compressed." }, 1, 0 },
	{ { "last_session_seconds", ST_LASTSESS, G, PMF_NUM, "Seconds since the last session "
	    "(-1: none yet)." }, 1, 1 },
	{ { "queue_time_average_seconds", ST_QTIME, G, PMF_MS, "Average queue wait over the "
	    "last 1024 sessions." }, 1, 1 },
	{ { "connect_time_average_seconds", ST_CTIME, G, PMF_MS, "Average connect time over "
	    "the last 1024 sessions." }, 1, 1 },
	{ { "response_time_average_seconds", ST_RTIME, G, PMF_MS, "Average response time over "
	    "the last 1024 sessions." }, 1, 1 },
	{ { "total_time_average_seconds", ST_TTIME, G, PMF_MS, "Average session time over the "
	    "last 1024 sessions." }, 1, 1 },
	{ { "failed_header_rewriting_total", ST_WREW, C, PMF_NUM | PMF_HTTP, "Header rewrites "
	    "that failed." }, 1, 1 },
	{ { "connection_attempts_total", ST_CONNECT, C, PMF_NUM | PMF_HTTP, "New connections "
	    "to servers." }, 1, 1 },
	{ { "connection_reuses_total", ST_REUSE, C, PMF_NUM | PMF_HTTP, "Server connections "
	    "reused." }, 1, 1 },
	{ { "idle_connections_current", ST_SRV_ICUR, G, PMF_NUM, "Idle server connections "
	    "now." }, 0, 1 },
	{ { "idle_connections_limit", ST_SRC_ILIM, G, PMF_NUM, "Idle server connections "
	    "limit." }, 0, 1 },
	{ { "max_queue_time_seconds", ST_QTIME_MAX, G, PMF_MS, "Longest queue wait seen." },
	  1, 1 },
	{ { "max_connect_time_seconds", ST_CTIME_MAX, G, PMF_MS, "Longest connect time seen." },
	  1, 1 },
	{ { "max_response_time_seconds", ST_RTIME_MAX, G, PMF_MS, "Longest response time "
	    "seen." }, 1, 1 },
	{ { "max_total_time_seconds", ST_TTIME_MAX, G, PMF_MS, "Longest session time seen." },
	  1, 1 },
	{ { "internal_errors_total", ST_EINT, C, PMF_NUM | PMF_HTTP, "Internal errors." }, 1, 1 },
	{ { "unsafe_idle_connections_current", ST_IDLE_CONN_CUR, G, PMF_NUM, "Idle server "
	    "connections not safe to reuse for a first request." }, 0, 1 },
	{ { "safe_idle_connections_current", ST_SAFE_CONN_CUR, G, PMF_NUM, "Idle server "
	    "connections safe to reuse." }, 0, 1 },
	{ { "used_connections_current", ST_USED_CONN_CUR, G, PMF_NUM, "Server connections in "
	    "use." }, 0, 1 },
	{ { "need_connections_current", ST_NEED_CONN_EST, G, PMF_NUM, "Estimate of the server "
	    "connections needed." }, 0, 1 },
	{ { "uweight", ST_UWEIGHT, G, PMF_NUM, "Weight set by the user (backend: sum over its "
	    "usable servers)." }, 1, 1 },
	{ { "agg_server_status", ST_STATUS, G, PMF_AGG, "Servers of the backend per state." },
	  1, 0 },
	/* HAProxy 2.6 keeps the older name of the same figures */
	{ { "agg_server_check_status", ST_STATUS, G, PMF_AGG, "Servers of the backend per "
	    "state (deprecated name of agg_server_status)." }, 1, 0 },
	{ { "agg_check_status", ST_CHECK_STATUS, G, PMF_AGG_CHK, "Checked servers of the "
	    "backend per status of their last health check." }, 1, 0 },
};

/* The check statuses HAProxy's exporter labels, in its order (its external
 * check statuses included, which sluice never has). */
static const char *const pm_chk_states[] = {
	"HANA", "SOCKERR", "L4OK", "L4TOUT", "L4CON", "L6OK", "L6TOUT", "L6RSP", "L7TOUT",
	"L7RSP", "L7OK", "L7OKC", "L7STS", "PROCERR", "PROCTOUT", "PROCOK",
};
#define PM_NCHK (int)(sizeof(pm_chk_states) / sizeof(pm_chk_states[0]))

/* The check status of a server's row ("" when it has none shown: not
 * checked, or in maintenance), without the "* " of a check in progress. */
static const char *row_chk_status(const struct stat_row *r)
{
	const char *f = r->f[ST_CHECK_STATUS];

	if (!f)
		return "";
	return strncmp(f, "* ", 2) ? f : f + 2;
}

#undef G
#undef C

/* States as HAProxy's exporter labels them; the first two serve frontends
 * and backends (DOWN, UP), all five servers. */
static const char *const pm_states[] = { "DOWN", "UP", "MAINT", "DRAIN", "NOLB" };

/* Index in pm_states[] of a `show stat` status column. */
static int state_index(const char *status)
{
	if (!status)
		return 0;
	/* "DRAIN 2/3", "NOLB 2/3": checked servers in transition */
	if (!strcmp(status, "MAINT"))
		return 2;
	if (!strncmp(status, "DRAIN", 5))
		return 3;
	if (!strncmp(status, "NOLB", 4))
		return 4;
	if (!strncmp(status, "DOWN", 4) || !strcmp(status, "STOP"))
		return 0;
	return 1;   /* UP, OPEN, "no check" */
}

/* One frontend, backend or server and its row. */
struct pm_obj {
	struct proxy *px;
	struct server *sv;
	struct stat_row row;
};

struct pm_objs {
	struct pm_obj *fe, *be, *srv;
	int nfe, nbe, nsrv;
};

static void objs_free(struct pm_objs *a)
{
	for (int i = 0; i < a->nfe; i++)
		stats_row_free(&a->fe[i].row);
	for (int i = 0; i < a->nbe; i++)
		stats_row_free(&a->be[i].row);
	for (int i = 0; i < a->nsrv; i++)
		stats_row_free(&a->srv[i].row);
	free(a->fe);
	free(a->be);
	free(a->srv);
}

/* Reads the rows of every frontend, backend and server once. Returns 0, or
 * -1 when out of memory. */
static int objs_collect(struct pm_objs *a, const struct promex_query *q)
{
	struct list *pos, *tmp;
	int nfe = 0, nbe = 0, nsrv = 0;

	memset(a, 0, sizeof(*a));
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		nfe += !!(px->cap & PX_CAP_FE);
		if (px->cap & PX_CAP_BE) {
			nbe++;
			nsrv += px->nsrv;
		}
	}
	a->fe = calloc((size_t)nfe + 1, sizeof(*a->fe));
	a->be = calloc((size_t)nbe + 1, sizeof(*a->be));
	a->srv = calloc((size_t)nsrv + 1, sizeof(*a->srv));
	if (!a->fe || !a->be || !a->srv)
		return -1;
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if ((px->cap & PX_CAP_FE) && (q->scope & PROMEX_SC_FRONTEND)) {
			a->fe[a->nfe].px = px;
			stats_row_frontend(&a->fe[a->nfe++].row, px);
		}
		if (!(px->cap & PX_CAP_BE))
			continue;
		if (q->scope & PROMEX_SC_BACKEND) {
			a->be[a->nbe].px = px;
			stats_row_backend(&a->be[a->nbe++].row, px);
		}
		for (int i = 0; i < px->nsrv; i++) {
			struct pm_obj *o = &a->srv[a->nsrv];

			/* the backends' per-state counts need the servers too */
			if (!(q->scope & (PROMEX_SC_SERVER | PROMEX_SC_BACKEND)))
				break;
			o->px = px;
			o->sv = px->srv[i];
			stats_row_server(&o->row, px, px->srv[i], CLI_LEVEL_USER);
			if (q->no_maint && state_index(o->row.f[ST_STATUS]) == 2) {
				stats_row_free(&o->row);
				continue;
			}
			a->nsrv++;
		}
	}
	return 0;
}

static void put_number(struct cli_out *o, const char *field, int ms)
{
	if (!field || !*field)
		cli_printf(o, "} NaN\n");
	else if (ms)
		cli_printf(o, "} %.6f\n", strtod(field, NULL) / 1000.0);
	else
		cli_printf(o, "} %s\n", field);
}

/* Servers of backend <be> in state <k> (for agg_server_status). */
static int count_servers(const struct pm_objs *a, const struct proxy *be, int k)
{
	int n = 0;

	for (int i = 0; i < a->nsrv; i++)
		n += a->srv[i].px == be && state_index(a->srv[i].row.f[ST_STATUS]) == k;
	return n;
}

/* Checked servers of backend <be> whose last check says <st>. */
static int count_checks(const struct pm_objs *a, const struct proxy *be, const char *st)
{
	int n = 0;

	for (int i = 0; i < a->nsrv; i++)
		n += a->srv[i].px == be && !strcmp(row_chk_status(&a->srv[i].row), st);
	return n;
}

/* The check metrics of a server: none while its checks do not run (as
 * HAProxy: not checked, or paused in maintenance), except the duration,
 * shown once a check ended. */
static void put_check_metric(struct cli_out *o, const char *name, int fmt,
                             const struct pm_obj *ob)
{
	const char *st = row_chk_status(&ob->row), *code = ob->row.f[ST_CHECK_CODE];

	if (fmt == PMF_CHK_DUR) {
		struct check_state cs;

		if (!ob->sv->check)
			return;
		srv_check_snapshot(ob->sv, &cs);
		if (cs.status < CHK_ST_CHECKED || cs.duration_ms < 0)
			return;
		put_labels(o, name, ob->px->name, ob->sv->name);
		cli_printf(o, "} %.6f\n", cs.duration_ms / 1000.0);
		return;
	}
	if (!*st)
		return;
	if (fmt == PMF_CHK_CODE) {
		put_labels(o, name, ob->px->name, ob->sv->name);
		cli_printf(o, "} %s\n", code && *code ? code : "0");
		return;
	}
	for (int k = 0; k < PM_NCHK; k++) {
		put_labels(o, name, ob->px->name, ob->sv->name);
		cli_printf(o, ",state=\"%s\"} %d\n", pm_chk_states[k], !strcmp(st, pm_chk_states[k]));
	}
}

/* The lines of metric <m> for object <ob> (<nstates>: labels of status). */
static void put_obj_metric(struct cli_out *o, const struct pm_objs *a, const char *name,
                           const struct pm_stat *m, const struct pm_obj *ob, int nstates)
{
	static const char *const codes[6] = { "1xx", "2xx", "3xx", "4xx", "5xx", "other" };
	const char *sv = ob->sv ? ob->sv->name : NULL;
	int fmt = m->fmt & ~PMF_HTTP;

	if ((m->fmt & PMF_HTTP) && ob->px->mode != PX_MODE_HTTP)
		return;
	switch (fmt) {
	case PMF_STATE:
	case PMF_AGG:
		/* a backend's servers may be in any of the five states */
		if (fmt == PMF_AGG)
			nstates = 5;
		for (int k = 0; k < nstates; k++) {
			put_labels(o, name, ob->px->name, sv);
			cli_printf(o, ",state=\"%s\"} %d\n", pm_states[k],
			           fmt == PMF_AGG ? count_servers(a, ob->px, k) :
			           state_index(ob->row.f[m->col]) == k);
		}
		break;
	case PMF_CHK:
	case PMF_CHK_CODE:
	case PMF_CHK_DUR:
		put_check_metric(o, name, fmt, ob);
		break;
	case PMF_AGG_CHK:
		for (int k = 0; k < PM_NCHK; k++) {
			put_labels(o, name, ob->px->name, NULL);
			cli_printf(o, ",state=\"%s\"} %d\n", pm_chk_states[k],
			           count_checks(a, ob->px, pm_chk_states[k]));
		}
		break;
	case PMF_HRSP:
		for (int k = 0; k < 6; k++) {
			put_labels(o, name, ob->px->name, sv);
			cli_printf(o, ",code=\"%s\"", codes[k]);
			put_number(o, ob->row.f[ST_HRSP_1XX + k], 0);
		}
		break;
	default:
		put_labels(o, name, ob->px->name, sv);
		put_number(o, ob->row.f[m->col], fmt == PMF_MS);
	}
}

/* Metric <m> of kind <kind> ("frontend"...) for every object of <objs>:
 * its header, then its lines (none at all: no header either). */
static void put_stat_metric(struct cli_out *o, const struct pm_objs *a, const char *kind,
                            const struct pm_stat *m, const struct pm_obj *objs, int n,
                            int nstates)
{
	struct cli_out lines = { 0 };
	char name[128];

	snprintf(name, sizeof(name), "haproxy_%s_%s", kind, m->name);
	for (int i = 0; i < n; i++)
		put_obj_metric(&lines, a, name, m, &objs[i], nstates);
	if (lines.failed)
		o->failed = 1;
	if (lines.len) {
		put_header(o, name, m->help, m->type);
		cli_printf(o, "%.*s", (int)lines.len, lines.buf);
	}
	free(lines.buf);
}

static void put_stats(struct cli_out *o, const struct pm_objs *a, const struct promex_query *q)
{
	const size_t nbs = sizeof(be_srv_metrics) / sizeof(be_srv_metrics[0]);

	if (q->scope & PROMEX_SC_FRONTEND)
		for (size_t i = 0; i < sizeof(fe_metrics) / sizeof(fe_metrics[0]); i++)
			put_stat_metric(o, a, "frontend", &fe_metrics[i], a->fe, a->nfe, 2);
	if (q->scope & PROMEX_SC_BACKEND)
		for (size_t i = 0; i < nbs; i++)
			if (be_srv_metrics[i].be)
				put_stat_metric(o, a, "backend", &be_srv_metrics[i].m, a->be, a->nbe, 2);
	if (q->scope & PROMEX_SC_SERVER)
		for (size_t i = 0; i < nbs; i++)
			if (be_srv_metrics[i].srv)
				put_stat_metric(o, a, "server", &be_srv_metrics[i].m, a->srv, a->nsrv, 5);
}

/* ---- sluice's own metrics ---- */

/* Histogram buckets shown: le = 2^i microseconds for i in this range
 * (16 us to 4.8 hours); the log2 buckets below and above are folded into
 * the first one and into +Inf. */
#define PM_HIST_FIRST  4
#define PM_HIST_LAST   34

/* <us> microseconds as decimal seconds, without trailing zeros. */
static void fmt_seconds(char *buf, size_t len, uint64_t us)
{
	size_t n = (size_t)snprintf(buf, len, "%llu.%06llu", (unsigned long long)(us / 1000000),
	                            (unsigned long long)(us % 1000000));

	while (n > 1 && n < len && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 1 && n < len && buf[n - 1] == '.')
		buf[--n] = '\0';
}

/* A log2 histogram of microseconds as a Prometheus histogram in seconds.
 * The log2 buckets keep no sum: _sum is estimated with each sample at the
 * middle of its bucket. */
static void put_histogram(struct cli_out *o, const char *name, const char *px,
                          const struct hist_snap *h)
{
	char series[128], le[32];
	uint64_t cum = 0;
	double sum_us = 0;

	snprintf(series, sizeof(series), "%s_bucket", name);
	for (int i = 0; i < HIST_BUCKETS; i++) {
		cum += h->b[i];
		if (i)
			sum_us += (double)h->b[i] * 1.5 * (double)hist_bucket_low(i);
		if (i < PM_HIST_FIRST || i > PM_HIST_LAST)
			continue;
		fmt_seconds(le, sizeof(le), 1ull << i);
		put_labels(o, series, px, NULL);
		cli_printf(o, ",le=\"%s\"} %llu\n", le, (unsigned long long)cum);
	}
	put_labels(o, series, px, NULL);
	cli_printf(o, ",le=\"+Inf\"} %llu\n", (unsigned long long)h->total);
	snprintf(series, sizeof(series), "%s_sum", name);
	put_labels(o, series, px, NULL);
	cli_printf(o, "} %.6f\n", sum_us / 1e6);
	snprintf(series, sizeof(series), "%s_count", name);
	put_labels(o, series, px, NULL);
	cli_printf(o, "} %llu\n", (unsigned long long)h->total);
}

static void put_histograms(struct cli_out *o, const struct pm_objs *a)
{
	static const struct {
		const char *name, *help;
	} hists[3] = {
		{ "sluice_backend_queue_time_seconds",
		  "Time sessions waited in a queue (sluice; log2 buckets, _sum estimated)." },
		{ "sluice_backend_connect_time_seconds",
		  "Time from a server slot to the established connection (sluice; log2 buckets, "
		  "_sum estimated)." },
		{ "sluice_backend_total_time_seconds",
		  "Time from accept to the end of the session (sluice; log2 buckets, _sum "
		  "estimated)." },
	};
	struct hist_snap *snaps;

	if (!a->nbe)
		return;
	snaps = calloc((size_t)a->nbe * 3, sizeof(*snaps));
	if (!snaps) {
		o->failed = 1;
		return;
	}
	for (int i = 0; i < a->nbe; i++)
		be_time_hists(a->be[i].px, &snaps[i * 3], &snaps[i * 3 + 1], &snaps[i * 3 + 2]);
	for (int k = 0; k < 3; k++) {
		put_header(o, hists[k].name, hists[k].help, PM_HISTOGRAM);
		for (int i = 0; i < a->nbe; i++)
			put_histogram(o, hists[k].name, a->be[i].px->name, &snaps[i * 3 + k]);
	}
	free(snaps);
}

static void put_thread_wakeups(struct cli_out *o)
{
	static const char name[] = "sluice_thread_wakeups_total";

	put_header(o, name, "Task wake-ups per thread (sluice): local (by the thread itself), "
	           "remote (by another thread), elided and instant (queue hand-overs).",
	           PM_COUNTER);
	for (int i = 0; i < global.nbthread; i++) {
		const struct activity *act = &thread_ctx[i].act;

		cli_printf(o, "%s{thread=\"%d\",kind=\"local\"} %llu\n", name, i + 1,
		           (unsigned long long)act->wake_local);
		cli_printf(o, "%s{thread=\"%d\",kind=\"remote\"} %llu\n", name, i + 1,
		           (unsigned long long)act->wake_remote);
		cli_printf(o, "%s{thread=\"%d\",kind=\"elided\"} %llu\n", name, i + 1,
		           (unsigned long long)act->wake_elided);
		cli_printf(o, "%s{thread=\"%d\",kind=\"instant\"} %llu\n", name, i + 1,
		           (unsigned long long)act->wake_instant);
	}
}

/* ---- the query string ---- */

/* Percent-decodes <len> bytes of <in> into <out> (room <size>). Returns the
 * length, or -1 when invalid or too long. */
static int pct_decode(const char *in, size_t len, char *out, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)in[i];

		if (c == '%') {
			unsigned int v;
			char hex[3];

			if (len - i < 3)
				return -1;
			hex[0] = in[i + 1];
			hex[1] = in[i + 2];
			hex[2] = '\0';
			if (!isxdigit((unsigned char)hex[0]) || !isxdigit((unsigned char)hex[1]) ||
			    sscanf(hex, "%2x", &v) != 1)
				return -1;
			c = (int)v;
			i += 2;
		}
		if (n + 1 >= size)
			return -1;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return (int)n;
}

/* A `scope=` value: adds to (or, empty, clears) <scope>. Returns -1 if it
 * names no scope. "sticktable" is accepted and shows nothing: sluice has
 * no stick tables. */
static int apply_scope(const char *v, unsigned int *scope)
{
	static const struct {
		const char *name;
		unsigned int bits;
	} scopes[] = {
		{ "global", PROMEX_SC_GLOBAL }, { "frontend", PROMEX_SC_FRONTEND },
		{ "backend", PROMEX_SC_BACKEND }, { "server", PROMEX_SC_SERVER },
		{ "*", PROMEX_SC_ALL }, { "sticktable", 0 },
	};

	if (!*v) {
		*scope = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		if (!strcmp(v, scopes[i].name)) {
			*scope |= scopes[i].bits;
			return 0;
		}
	}
	return -1;
}

int promex_parse_query(const char *q, size_t len, struct promex_query *out)
{
	const char *end = q + len;
	int seen_scope = 0;

	out->scope = PROMEX_SC_ALL;
	out->no_maint = 0;
	while (q < end) {
		const char *amp = memchr(q, '&', (size_t)(end - q));
		const char *pend = amp ? amp : end;
		size_t plen = (size_t)(pend - q);
		char val[32];

		if (plen >= 6 && !memcmp(q, "scope=", 6)) {
			if (!seen_scope)
				out->scope = 0;   /* the first scope replaces "all" */
			seen_scope = 1;
			if (pct_decode(q + 6, plen - 6, val, sizeof(val)) < 0 ||
			    apply_scope(val, &out->scope) < 0)
				return -1;
		} else if ((plen == 8 && !memcmp(q, "no-maint", 8)) ||
		           (plen > 8 && !memcmp(q, "no-maint=", 9))) {
			out->no_maint = 1;
		}
		q = pend + (amp ? 1 : 0);
	}
	return 0;
}

/* ---- the service ---- */

static int promex_produce(struct stream *s, struct svc_reply *out)
{
	struct ist uri = s->txn->req.uri;
	const char *qs = uri.len ? memchr(uri.ptr, '?', uri.len) : NULL;
	struct promex_query q;
	struct cli_out o = { 0 };
	struct pm_objs objs;

	if (promex_parse_query(qs ? qs + 1 : "", qs ? uri.len - (size_t)(qs + 1 - uri.ptr) : 0,
	                       &q) < 0)
		return 400;
	if (objs_collect(&objs, &q) < 0) {
		objs_free(&objs);
		return -1;
	}
	if (q.scope & PROMEX_SC_GLOBAL)
		put_process(&o);
	put_stats(&o, &objs, &q);
	if (q.scope & PROMEX_SC_BACKEND)
		put_histograms(&o, &objs);
	if (q.scope & PROMEX_SC_GLOBAL)
		put_thread_wakeups(&o);
	objs_free(&objs);
	if (o.failed) {
		free(o.buf);
		return -1;
	}
	out->status = 200;
	out->content_type = "text/plain; version=0.0.4";
	out->body = o.buf;
	out->len = o.len;
	return 0;
}
