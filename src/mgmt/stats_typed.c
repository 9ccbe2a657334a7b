/* The typed and JSON forms of `show stat` and `show info` (HAProxy 2.6's
 * `show stat typed|json`, `show info typed|json`): each non-empty field with
 * its position, name, tags (origin, nature, scope) and type, as HAProxy
 * describes its fields, the values being the CSV's. The tables below hold
 * HAProxy's descriptions of its fields (read from its own output), and
 * sluice's for the columns it adds after HAProxy's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/stats.h>

/* per column, in the order of enum stat_col: its name, its tags for a
 * frontend, a backend and a server (origin, nature, scope letters), and
 * its type */
static const struct col_meta {
	const char *name;
	char tags[3][4];
	char type[4];
} col_meta[ST_COUNT] = {
	{ "pxname", { "KNS", "KNS", "KNS" }, "str" },
	{ "svname", { "KNS", "KNS", "KNS" }, "str" },
	{ "qcur", { "MGP", "MGP", "MGP" }, "u32" },
	{ "qmax", { "MMP", "MMP", "MMP" }, "u32" },
	{ "scur", { "MGP", "MGP", "MGP" }, "u32" },
	{ "smax", { "MMP", "MMP", "MMP" }, "u32" },
	{ "slim", { "CLP", "CLP", "CLP" }, "u32" },
	{ "stot", { "MCP", "MCP", "MCP" }, "u64" },
	{ "bin", { "MCP", "MCP", "MCP" }, "u64" },
	{ "bout", { "MCP", "MCP", "MCP" }, "u64" },
	{ "dreq", { "MCP", "MCP", "MCP" }, "u64" },
	{ "dresp", { "MCP", "MCP", "MCP" }, "u64" },
	{ "ereq", { "MCP", "MCP", "MCP" }, "u64" },
	{ "econ", { "MCP", "MCP", "MCP" }, "u64" },
	{ "eresp", { "MCP", "MCP", "MCP" }, "u64" },
	{ "wretr", { "MCP", "MCP", "MCP" }, "u64" },
	{ "wredis", { "MCP", "MCP", "MCP" }, "u64" },
	{ "status", { "SGP", "SGP", "SGP" }, "str" },
	{ "weight", { "MaP", "MaP", "MaP" }, "u32" },
	{ "act", { "SGP", "MGP", "SGP" }, "u32" },
	{ "bck", { "SGP", "MGP", "SGP" }, "u32" },
	{ "chkfail", { "MCP", "MCP", "MCP" }, "u64" },
	{ "chkdown", { "MCP", "MCP", "MCP" }, "u64" },
	{ "lastchg", { "MAP", "MAP", "MAP" }, "u32" },
	{ "downtime", { "MCP", "MCP", "MCP" }, "u32" },
	{ "qlimit", { "CGS", "CGS", "CGS" }, "u32" },
	{ "pid", { "KGP", "KGP", "KGP" }, "u32" },
	{ "iid", { "KGS", "KGS", "KGS" }, "u32" },
	{ "sid", { "KGS", "KGS", "KGS" }, "u32" },
	{ "throttle", { "MaP", "MaP", "MaP" }, "u32" },
	{ "lbtot", { "MCP", "MCP", "MCP" }, "u64" },
	{ "tracked", { "CNS", "CNS", "CNS" }, "str" },
	{ "type", { "CGS", "CGS", "CGS" }, "u32" },
	{ "rate", { "MRP", "MGP", "MRP" }, "u32" },
	{ "rate_lim", { "CLP", "CLP", "CLP" }, "u32" },
	{ "rate_max", { "MMP", "MGP", "MMP" }, "u32" },
	{ "check_status", { "MOP", "MOP", "MOP" }, "str" },
	{ "check_code", { "MOP", "MOP", "MOP" }, "u32" },
	{ "check_duration", { "MDP", "MDP", "MDP" }, "u64" },
	{ "hrsp_1xx", { "MCP", "MCP", "MCP" }, "u64" },
	{ "hrsp_2xx", { "MCP", "MCP", "MCP" }, "u64" },
	{ "hrsp_3xx", { "MCP", "MCP", "MCP" }, "u64" },
	{ "hrsp_4xx", { "MCP", "MCP", "MCP" }, "u64" },
	{ "hrsp_5xx", { "MCP", "MCP", "MCP" }, "u64" },
	{ "hrsp_other", { "MCP", "MCP", "MCP" }, "u64" },
	{ "hanafail", { "MCP", "MCP", "MCP" }, "u64" },
	{ "req_rate", { "MRP", "MRP", "MRP" }, "u32" },
	{ "req_rate_max", { "MMP", "MMP", "MMP" }, "u32" },
	{ "req_tot", { "MCP", "MCP", "MCP" }, "u64" },
	{ "cli_abrt", { "MCP", "MCP", "MCP" }, "u64" },
	{ "srv_abrt", { "MCP", "MCP", "MCP" }, "u64" },
	{ "comp_in", { "MCP", "MCP", "MCP" }, "u64" },
	{ "comp_out", { "MCP", "MCP", "MCP" }, "u64" },
	{ "comp_byp", { "MCP", "MCP", "MCP" }, "u64" },
	{ "comp_rsp", { "MCP", "MCP", "MCP" }, "u64" },
	{ "lastsess", { "MAP", "MAP", "MAP" }, "s32" },
	{ "last_chk", { "MOP", "MOP", "MOP" }, "str" },
	{ "last_agt", { "MOP", "MOP", "MOP" }, "str" },
	{ "qtime", { "MaP", "MaP", "MaP" }, "u32" },
	{ "ctime", { "MaP", "MaP", "MaP" }, "u32" },
	{ "rtime", { "MaP", "MaP", "MaP" }, "u32" },
	{ "ttime", { "MaP", "MaP", "MaP" }, "u32" },
	{ "agent_status", { "MOP", "MOP", "MOP" }, "str" },
	{ "agent_code", { "MOP", "MOP", "MOP" }, "u32" },
	{ "agent_duration", { "MDP", "MDP", "MDP" }, "u64" },
	{ "check_desc", { "MOP", "MOP", "MOP" }, "str" },
	{ "agent_desc", { "MOP", "MOP", "MOP" }, "str" },
	{ "check_rise", { "CGS", "CGS", "CGS" }, "u32" },
	{ "check_fall", { "CGS", "CGS", "CGS" }, "u32" },
	{ "check_health", { "CGS", "CGS", "CGS" }, "u32" },
	{ "agent_rise", { "CGS", "CGS", "CGS" }, "u32" },
	{ "agent_fall", { "CGS", "CGS", "CGS" }, "u32" },
	{ "agent_health", { "CGS", "CGS", "CGS" }, "u32" },
	{ "addr", { "CGS", "CGS", "CGS" }, "str" },
	{ "cookie", { "CNS", "CNS", "CNS" }, "str" },
	{ "mode", { "CGS", "CGS", "CGS" }, "str" },
	{ "algo", { "CGS", "CGS", "CGS" }, "str" },
	{ "conn_rate", { "MRP", "MRP", "MRP" }, "u32" },
	{ "conn_rate_max", { "MMP", "MMP", "MMP" }, "u32" },
	{ "conn_tot", { "MCP", "MCP", "MCP" }, "u64" },
	{ "intercepted", { "MCP", "MCP", "MCP" }, "u64" },
	{ "dcon", { "MCP", "MCP", "MCP" }, "u64" },
	{ "dses", { "MCP", "MCP", "MCP" }, "u64" },
	{ "wrew", { "MCP", "MCP", "MCP" }, "u64" },
	{ "connect", { "MCP", "MCP", "MCP" }, "u64" },
	{ "reuse", { "MCP", "MCP", "MCP" }, "u64" },
	{ "cache_lookups", { "MCP", "MCP", "MCP" }, "u64" },
	{ "cache_hits", { "MCP", "MCP", "MCP" }, "u64" },
	{ "srv_icur", { "MGP", "MGP", "MGP" }, "u32" },
	{ "src_ilim", { "MGP", "MGP", "MGP" }, "u32" },
	{ "qtime_max", { "MMP", "MMP", "MMP" }, "u32" },
	{ "ctime_max", { "MMP", "MMP", "MMP" }, "u32" },
	{ "rtime_max", { "MMP", "MMP", "MMP" }, "u32" },
	{ "ttime_max", { "MMP", "MMP", "MMP" }, "u32" },
	{ "eint", { "MCP", "MCP", "MCP" }, "u64" },
	{ "idle_conn_cur", { "MGP", "MGP", "MGP" }, "u32" },
	{ "safe_conn_cur", { "MGP", "MGP", "MGP" }, "u32" },
	{ "used_conn_cur", { "MGP", "MGP", "MGP" }, "u32" },
	{ "need_conn_est", { "MGP", "MGP", "MGP" }, "u32" },
	{ "uweight", { "MaP", "MaP", "MaP" }, "u32" },
	{ "agg_server_status", { "MGP", "MGP", "MGP" }, "u32" },
	{ "agg_server_check_status", { "MGP", "MGP", "MGP" }, "u32" },
	{ "agg_check_status", { "MGP", "MGP", "MGP" }, "u32" },
	{ NULL, { "", "", "" }, "" },   /* the "-" marker of the CSV header */
	{ "ssl_sess", { "MCP", "MCP", "MCP" }, "u64" },
	{ "ssl_reused_sess", { "MCP", "MCP", "MCP" }, "u64" },
	{ "ssl_failed_handshake", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_headers_rcvd", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_data_rcvd", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_settings_rcvd", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_rst_stream_rcvd", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_goaway_rcvd", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_detected_conn_protocol_errors", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_detected_strm_protocol_errors", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_rst_stream_resp", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_goaway_resp", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_open_connections", { "MGP", "MGP", "MGP" }, "u64" },
	{ "h2_backend_open_streams", { "MGP", "MGP", "MGP" }, "u64" },
	{ "h2_total_connections", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h2_backend_total_streams", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h1_open_connections", { "MGP", "MGP", "MGP" }, "u64" },
	{ "h1_open_streams", { "MGP", "MGP", "MGP" }, "u64" },
	{ "h1_total_connections", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h1_total_streams", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h1_bytes_in", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h1_bytes_out", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h1_spliced_bytes_in", { "MCP", "MCP", "MCP" }, "u64" },
	{ "h1_spliced_bytes_out", { "MCP", "MCP", "MCP" }, "u64" },
	{ "qtime_p50_us", { "MaP", "MaP", "MaP" }, "u32" },
	{ "qtime_p99_us", { "MaP", "MaP", "MaP" }, "u32" },
	{ "ctime_p50_us", { "MaP", "MaP", "MaP" }, "u32" },
	{ "ctime_p99_us", { "MaP", "MaP", "MaP" }, "u32" },
	{ "ttime_p50_us", { "MaP", "MaP", "MaP" }, "u32" },
	{ "ttime_p99_us", { "MaP", "MaP", "MaP" }, "u32" },
	{ "queued_tot", { "MCP", "MCP", "MCP" }, "u64" },
};

/* What the letters stand for in JSON. */
static const char *origin_word(char c)
{
	switch (c) {
	case 'K': return "Key";
	case 'C': return "Config";
	case 'P': return "Product";
	case 'S': return "Status";
	default:  return "Metric";
	}
}

static const char *nature_word(char c)
{
	switch (c) {
	case 'A': return "Age";
	case 'a': return "Avg";
	case 'C': return "Counter";
	case 'D': return "Duration";
	case 'L': return "Limit";
	case 'M': return "Max";
	case 'm': return "Min";
	case 'N': return "Name";
	case 'O': return "Output";
	case 'R': return "Rate";
	case 'T': return "Time";
	default:  return "Gauge";
	}
}

static const char *scope_word(char c)
{
	switch (c) {
	case 'S': return "Service";
	case 's': return "System";
	case 'C': return "Cluster";
	default:  return "Process";
	}
}

/* A string as a JSON string's contents. */
static void put_json_str(struct cli_out *o, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			cli_printf(o, "\\%c", c);
		else if (c < 0x20)
			cli_printf(o, "\\u%04x", c);
		else
			cli_printf(o, "%c", c);
	}
}

/* A value of a numeric type as JSON wants it: the CSV's digits when they
 * are a number, else 0. */
static int is_number(const char *v)
{
	if (*v == '-')
		v++;
	if (!*v)
		return 0;
	for (; *v; v++)
		if (*v < '0' || *v > '9')
			return 0;
	return 1;
}

static void put_field(struct cli_out *o, int json, int first, const char *prefix, int pos,
                      const char *name, const char *tags, const char *type, const char *v)
{
	if (!json) {
		cli_printf(o, "%s%d.%s.1:%s:%s:%s\n", prefix, pos, name, tags, type, v);
		return;
	}
	cli_printf(o, "%s{%s\"field\":{\"pos\":%d,\"name\":\"%s\"},\"processNum\":1,"
	           "\"tags\":{\"origin\":\"%s\",\"nature\":\"%s\",\"scope\":\"%s\"},"
	           "\"value\":{\"type\":\"%s\",\"value\":", first ? "" : ",", prefix, pos, name,
	           origin_word(tags[0]), nature_word(tags[1]), scope_word(tags[2]), type);
	if (!strcmp(type, "str")) {
		cli_printf(o, "\"");
		put_json_str(o, v);
		cli_printf(o, "\"}}");
	} else {
		cli_printf(o, "%s}}", is_number(v) ? v : "0");
	}
}

void stats_typed_row(struct cli_out *o, struct stat_row *r, int json, int first_row)
{
	const char *type = r->f[ST_TYPE] ? r->f[ST_TYPE] : "0";
	int kind = atoi(type);   /* 0 frontend, 1 backend, 2 server */
	int pxid = r->f[ST_IID] ? atoi(r->f[ST_IID]) : 0;
	int sid = kind == 2 && r->f[ST_SID] ? atoi(r->f[ST_SID]) : 0;
	static const char letters[] = "FBS";
	static const char *const words[] = { "Frontend", "Backend", "Server" };
	char prefix[128];
	int first = 1;

	if (kind < 0 || kind > 2)
		kind = 0;
	if (json) {
		snprintf(prefix, sizeof(prefix), "\"objType\":\"%s\",\"proxyId\":%d,\"id\":%d,",
		         words[kind], pxid, sid);
		cli_printf(o, "%s[", first_row ? "" : ",");
	} else {
		snprintf(prefix, sizeof(prefix), "%c.%d.%d.", letters[kind], pxid, sid);
	}
	for (int i = 0; i < ST_COUNT; i++) {
		const char *v = r->f[i];

		if (!col_meta[i].name || !v || !*v)
			continue;
		/* HAProxy numbers its module columns as if the "-" marker
		 * were not there */
		put_field(o, json, first, prefix, i < ST_MARKER ? i : i - 1, col_meta[i].name,
		          col_meta[i].tags[kind], col_meta[i].type, v);
		first = 0;
	}
	if (json)
		cli_printf(o, "]");
	stats_row_free(r);
}

/* `show info`'s fields: HAProxy's positions and descriptions of those
 * sluice reports. */
static const struct info_meta {
	const char *name;
	int pos;
	char tags[4];
	char type[4];
} info_meta[] = {
	{ "Name", 0, "POS", "str" },
	{ "Version", 1, "POS", "str" },
	{ "Release_date", 2, "POS", "str" },
	{ "Nbthread", 3, "CGS", "u32" },
	{ "Nbproc", 4, "CGS", "u32" },
	{ "Process_num", 5, "KGP", "u32" },
	{ "Pid", 6, "SGP", "u32" },
	{ "Uptime", 7, "MDP", "str" },
	{ "Uptime_sec", 8, "MDP", "u32" },
	{ "Memmax_MB", 9, "CLP", "u32" },
	{ "PoolAlloc_MB", 10, "MGP", "u32" },
	{ "PoolUsed_MB", 11, "MGP", "u32" },
	{ "PoolFailed", 12, "MCP", "u32" },
	{ "Ulimit-n", 13, "CLP", "u32" },
	{ "Maxsock", 14, "CLP", "u32" },
	{ "Maxconn", 15, "CLP", "u32" },
	{ "Hard_maxconn", 16, "CLP", "u32" },
	{ "CurrConns", 17, "MGP", "u32" },
	{ "CumConns", 18, "MCP", "u32" },
	{ "CumReq", 19, "MCP", "u32" },
	{ "MaxSslConns", 20, "MMP", "u32" },
	{ "CurrSslConns", 21, "MGP", "u32" },
	{ "CumSslConns", 22, "MCP", "u32" },
	{ "Maxpipes", 23, "CLP", "u32" },
	{ "PipesUsed", 24, "MGP", "u32" },
	{ "PipesFree", 25, "MGP", "u32" },
	{ "ConnRate", 26, "MRP", "u32" },
	{ "ConnRateLimit", 27, "CLP", "u32" },
	{ "MaxConnRate", 28, "MMP", "u32" },
	{ "SessRate", 29, "MRP", "u32" },
	{ "SessRateLimit", 30, "CLP", "u32" },
	{ "MaxSessRate", 31, "MRP", "u32" },
	{ "SslRate", 32, "MRP", "u32" },
	{ "SslRateLimit", 33, "CLP", "u32" },
	{ "MaxSslRate", 34, "MMP", "u32" },
	{ "SslFrontendKeyRate", 35, "MGP", "u32" },
	{ "SslFrontendMaxKeyRate", 36, "MMP", "u32" },
	{ "SslFrontendSessionReuse_pct", 37, "MGP", "u32" },
	{ "SslBackendKeyRate", 38, "MRP", "u32" },
	{ "SslBackendMaxKeyRate", 39, "MMP", "u32" },
	{ "SslCacheLookups", 40, "MCP", "u32" },
	{ "SslCacheMisses", 41, "MCP", "u32" },
	{ "CompressBpsIn", 42, "MRP", "u32" },
	{ "CompressBpsOut", 43, "MRP", "u32" },
	{ "CompressBpsRateLim", 44, "CLP", "u32" },
	{ "Tasks", 47, "MGP", "u32" },
	{ "Run_queue", 48, "MGP", "u32" },
	{ "Idle_pct", 49, "MaP", "u32" },
	{ "node", 50, "COS", "str" },
	{ "description", 51, "COS", "str" },
	{ "Stopping", 52, "MGP", "u32" },
	{ "Jobs", 53, "MGP", "u32" },
	{ "Unstoppable Jobs", 54, "MGP", "u32" },
	{ "Listeners", 55, "MGP", "u32" },
	{ "ActivePeers", 56, "MGP", "u32" },
	{ "ConnectedPeers", 57, "MGP", "u32" },
	{ "DroppedLogs", 58, "MGP", "u32" },
	{ "BusyPolling", 59, "MGP", "u32" },
	{ "FailedResolutions", 60, "MGP", "u32" },
	{ "TotalBytesOut", 61, "MGP", "u64" },
	{ "TotalSplicdedBytesOut", 62, "MGP", "u64" },
	{ "BytesOutRate", 63, "MRP", "u64" },
	{ "DebugCommandsIssued", 64, "MGP", "u32" },
	{ "CumRecvLogs", 65, "MCP", "u32" },
	{ "Build info", 66, "POS", "str" },
	{ "Memmax_bytes", 67, "CLP", "u32" },
	{ "PoolAlloc_bytes", 68, "MGP", "u64" },
	{ "PoolUsed_bytes", 69, "MGP", "u64" },
	{ "Start_time_sec", 70, "MDP", "u32" },
	{ "Tainted", 71, "SGP", "str" },
	{ NULL, 0, "", "" }
};

void stats_info_field(struct cli_out *o, int format, int *first, const char *name,
                      const char *value)
{
	const struct info_meta *m = info_meta;

	if (format == STATS_FMT_TEXT) {
		cli_printf(o, "%s: %s\n", name, value);
		return;
	}
	while (m->name && strcmp(m->name, name) != 0)
		m++;
	if (!m->name || !*value)
		return;
	put_field(o, format == STATS_FMT_JSON, *first, "", m->pos, name, m->tags, m->type, value);
	*first = 0;
}
