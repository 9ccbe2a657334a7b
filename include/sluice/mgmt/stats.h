/* The counters of `show stat`, one row of text fields per frontend, backend
 * and server, in HAProxy 2.6's column order: its 104 columns, "-", the 24
 * of its stats modules (ssl, h2, h1), then sluice's own. The CLI prints
 * them as CSV; the Prometheus exporter (src/mgmt/promex.c) reads the same
 * rows, so that both report the same values. Reads are racy snapshots
 * (display only).
 */
#ifndef SLUICE_MGMT_STATS_H
#define SLUICE_MGMT_STATS_H

#include <stdint.h>

struct proxy;
struct server;

enum stat_col {
	ST_PXNAME, ST_SVNAME, ST_QCUR, ST_QMAX, ST_SCUR, ST_SMAX, ST_SLIM, ST_STOT, ST_BIN,
	ST_BOUT, ST_DREQ, ST_DRESP, ST_EREQ, ST_ECON, ST_ERESP, ST_WRETR, ST_WREDIS, ST_STATUS,
	ST_WEIGHT, ST_ACT, ST_BCK, ST_CHKFAIL, ST_CHKDOWN, ST_LASTCHG, ST_DOWNTIME, ST_QLIMIT,
	ST_PID, ST_IID, ST_SID, ST_THROTTLE, ST_LBTOT, ST_TRACKED, ST_TYPE, ST_RATE,
	ST_RATE_LIM, ST_RATE_MAX, ST_CHECK_STATUS, ST_CHECK_CODE, ST_CHECK_DURATION,
	ST_HRSP_1XX, ST_HRSP_2XX, ST_HRSP_3XX, ST_HRSP_4XX, ST_HRSP_5XX, ST_HRSP_OTHER,
	ST_HANAFAIL, ST_REQ_RATE, ST_REQ_RATE_MAX, ST_REQ_TOT, ST_CLI_ABRT, ST_SRV_ABRT,
	ST_COMP_IN, ST_COMP_OUT, ST_COMP_BYP, ST_COMP_RSP, ST_LASTSESS, ST_LAST_CHK,
	ST_LAST_AGT, ST_QTIME, ST_CTIME, ST_RTIME, ST_TTIME, ST_AGENT_STATUS, ST_AGENT_CODE,
	ST_AGENT_DURATION, ST_CHECK_DESC, ST_AGENT_DESC, ST_CHECK_RISE, ST_CHECK_FALL,
	ST_CHECK_HEALTH, ST_AGENT_RISE, ST_AGENT_FALL, ST_AGENT_HEALTH, ST_ADDR, ST_COOKIE,
	ST_MODE, ST_ALGO, ST_CONN_RATE, ST_CONN_RATE_MAX, ST_CONN_TOT, ST_INTERCEPTED,
	ST_DCON, ST_DSES, ST_WREW, ST_CONNECT, ST_REUSE, ST_CACHE_LOOKUPS, ST_CACHE_HITS,
	ST_SRV_ICUR, ST_SRC_ILIM, ST_QTIME_MAX, ST_CTIME_MAX, ST_RTIME_MAX, ST_TTIME_MAX,
	ST_EINT, ST_IDLE_CONN_CUR, ST_SAFE_CONN_CUR, ST_USED_CONN_CUR, ST_NEED_CONN_EST,
	ST_UWEIGHT, ST_AGG_SERVER_STATUS, ST_AGG_SERVER_CHECK_STATUS, ST_AGG_CHECK_STATUS,
	ST_MARKER,
	/* HAProxy 2.6's stats modules: ssl, h2, h1 */
	ST_SSL_SESS, ST_SSL_REUSED_SESS, ST_SSL_FAILED_HANDSHAKE, ST_H2_HEADERS_RCVD,
	ST_H2_DATA_RCVD, ST_H2_SETTINGS_RCVD, ST_H2_RST_STREAM_RCVD, ST_H2_GOAWAY_RCVD,
	ST_H2_CONN_PROTO_ERR, ST_H2_STRM_PROTO_ERR, ST_H2_RST_STREAM_RESP, ST_H2_GOAWAY_RESP,
	ST_H2_OPEN_CONNS, ST_H2_OPEN_STREAMS, ST_H2_TOTAL_CONNS, ST_H2_TOTAL_STREAMS,
	ST_H1_OPEN_CONNS, ST_H1_OPEN_STREAMS, ST_H1_TOTAL_CONNS, ST_H1_TOTAL_STREAMS,
	ST_H1_BYTES_IN, ST_H1_BYTES_OUT, ST_H1_SPLICED_IN, ST_H1_SPLICED_OUT,
	/* sluice's own */
	ST_QTIME_P50, ST_QTIME_P99, ST_CTIME_P50, ST_CTIME_P99, ST_TTIME_P50,
	ST_TTIME_P99, ST_QUEUED_TOT,
	ST_COUNT
};

/* Fields as text (NULL: empty, as HAProxy leaves a column that does not
 * apply); heap strings, freed by stats_row_free(). */
struct stat_row {
	char *f[ST_COUNT];
};

/* Fill <r> (zeroed by the caller) for a frontend, a backend or one of its
 * servers. <level> is the CLI level: server addresses need operator. */
void stats_row_frontend(struct stat_row *r, struct proxy *px);
void stats_row_backend(struct stat_row *r, struct proxy *be);
void stats_row_server(struct stat_row *r, struct proxy *be, struct server *s, int level);
void stats_row_free(struct stat_row *r);

/* CSV as `show stat` prints it: the header line, and one row (freed). */
struct cli_out;
void stats_csv_header(struct cli_out *out);

/* Output forms of show stat / show info: HAProxy's CSV (or "Name: value"
 * lines), `typed`, `json` (src/mgmt/stats_typed.c). */
enum { STATS_FMT_TEXT = 0, STATS_FMT_TYPED, STATS_FMT_JSON };
/* One row in typed or JSON form (<json>); <first_row>: no comma before it.
 * Frees the row. */
void stats_typed_row(struct cli_out *out, struct stat_row *r, int json, int first_row);
/* One field of show info in <format>; *first: no comma before it (JSON). */
void stats_info_field(struct cli_out *out, int format, int *first, const char *name,
                      const char *value);
void stats_csv_row(struct cli_out *out, struct stat_row *r);

/* Process figures of `show info`: seconds since start, and the tasks
 * waiting in every thread's run queues. */
uint64_t stats_uptime_sec(void);

/* `clear counters`: show activity counts from now on. The threads' own
 * counters are not written (they are thread-local): a baseline is taken. */
void stats_activity_clear(void);

/* A proxy named by <arg>: its name, or "#<id>" (its iid), with one of the
 * capabilities <cap>; NULL if none. */
struct proxy *stats_find_proxy_arg(const char *arg, unsigned int cap);
/* The server of a "<backend>/<server>" argument (each a name or "#<id>"),
 * or NULL after writing HAProxy's error message into <out>. */
struct server *stats_find_server_arg(const char *arg, struct cli_out *out);
/* Sets the weight of <s> from <arg> ("<n>" or "<n>%" of its configured
 * weight), as `set weight` and `set server ... weight` do. Returns 0, or
 * -1 after writing HAProxy's error message into <out>. */
int stats_set_weight(struct server *s, const char *arg, struct cli_out *out);
int stats_run_queue(void);

#endif
