/* Proxies: frontends, backends, listen sections and defaults. Settings are
 * written while parsing and read-only afterwards; runtime fields say what
 * protects them. */
#ifndef SLUICE_PROXY_PROXY_H
#define SLUICE_PROXY_PROXY_H

#include <stdatomic.h>
#include <stdint.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/freq.h>
#include <sluice/core/list.h>
#include <sluice/core/lock.h>
#include <sluice/core/log.h>
#include <sluice/net/addr.h>
#include <sluice/net/conn.h>
#include <sluice/proxy/counters.h>
#include <sluice/proxy/queue.h>

struct acl_list;
struct http_errors;
struct stats_page;
struct persist_rule {
	struct acl_cond *cond;
	int force;                  /* 1 force-persist, 0 ignore-persist */
};
struct hchk_rules;
struct tchk_rules;

struct server;
struct listener;

enum px_mode { PX_MODE_TCP = 0, PX_MODE_HTTP };

#define PX_CAP_FE   0x01
#define PX_CAP_BE   0x02
#define PX_CAP_DEF  0x04

#define PX_O_REDISPATCH   0x0001
#define PX_O_TCPLOG       0x0002
#define PX_O_DONTLOGNULL  0x0004
#define PX_O_ALLBACKUPS   0x0008
#define PX_O_LOG_GLOBAL   0x0010   /* `log global` */
#define PX_O_HTTPLOG      0x0020
#define PX_O_HTTP_BUFFER_REQ   0x0040  /* option http-buffer-request */
#define PX_O_ACCEPT_INV_REQ    0x0080  /* option accept-invalid-http-request */
#define PX_O_ACCEPT_INV_RES    0x0100  /* option accept-invalid-http-response */
#define PX_O_DONTLOG_NORMAL    0x0200  /* option dontlog-normal */
#define PX_O_LOG_SEP_ERRORS    0x0400  /* option log-separate-errors */
#define PX_O_HTTP_IGN_PROBES   0x0800  /* option http-ignore-probes */
#define PX_O_HTTPLOG_CLF       0x1000  /* option httplog clf */
#define PX_O_FORWARDFOR        0x2000  /* option forwardfor (see fwdfor) */
#define PX_O_ORIGINALTO        0x4000  /* option originalto (see origto) */
#define PX_O_LOGASAP           0x8000  /* option logasap */
#define PX_O_HTTPSLOG          0x10000 /* option httpslog (with PX_O_HTTPLOG) */
#define PX_O_LOG_HCHK          0x20000 /* option log-health-checks */
#define PX_O_HTTPCHK           0x40000 /* option httpchk (rules: px->hchk) */
#define PX_O_DISABLE404        0x80000 /* http-check disable-on-404 */
#define PX_O_TCPCHK            0x100000 /* option tcp-check or a protocol check
                                         * (rules: px->tchk) */
#define PX_O_PERSIST           0x200000 /* option persist */
#define PX_O_PREFER_LAST       0x400000 /* option prefer-last-server */
#define PX_O_ABORTONCLOSE      0x800000 /* option abortonclose */
#define PX_O_H1_CASE_CLI       0x1000000 /* option h1-case-adjust-bogus-client */
#define PX_O_H1_CASE_SRV       0x2000000 /* option h1-case-adjust-bogus-server */

/* HTTP connection mode, from option http-keep-alive (default),
 * http-server-close, httpclose. The frontend's and the backend's combine:
 * the stronger closing mode wins, as in HAProxy. */
enum px_http_conn { PX_HTTP_KAL = 0, PX_HTTP_SCL, PX_HTTP_CLO };

/* http-reuse */
enum px_http_reuse { PX_REUSE_SAFE = 0, PX_REUSE_NEVER, PX_REUSE_AGGRESSIVE, PX_REUSE_ALWAYS };

/* retry-on: what a request may be retried on (0: not configured, i.e.
 * conn-failure only, HAProxy's default) */
#define RETRY_ON_CONN_FAILURE   0x0001
#define RETRY_ON_EMPTY_RESPONSE 0x0002
#define RETRY_ON_JUNK_RESPONSE  0x0004
#define RETRY_ON_RESP_TIMEOUT   0x0008
#define RETRY_ON_0RTT_REJECTED  0x0010
#define RETRY_ON_404            0x0020
#define RETRY_ON_408            0x0040
#define RETRY_ON_425            0x0080
#define RETRY_ON_500            0x0100
#define RETRY_ON_501            0x0200
#define RETRY_ON_502            0x0400
#define RETRY_ON_503            0x0800
#define RETRY_ON_504            0x1000
#define RETRY_ON_NONE           0x8000   /* "retry-on none": never */
#define RETRY_ON_L7  (RETRY_ON_EMPTY_RESPONSE | RETRY_ON_JUNK_RESPONSE | RETRY_ON_RESP_TIMEOUT | \
                      RETRY_ON_404 | RETRY_ON_408 | RETRY_ON_425 | RETRY_ON_500 | \
                      RETRY_ON_501 | RETRY_ON_502 | RETRY_ON_503 | RETRY_ON_504)

/* option forwardfor / originalto settings */
struct px_fwd_hdr {
	char *hdr;                 /* header name; NULL: the default one */
	int has_except;
	struct sockaddr_storage except_net;   /* except <net>: address */
	int except_plen;           /* ... and prefix length */
	int if_none;               /* forwardfor only: keep an existing header */
};

/* capture request|response header <name> len <n> */
struct px_capture {
	char *name;
	int len;
};
#define PX_MAX_CAPTURES 16

enum lb_algo {
	LB_ROUNDROBIN = 0,
	LB_STATIC_RR,
	LB_LEASTCONN,
	LB_FIRST,
	LB_SOURCE,
	LB_RANDOM,
	LB_URI,          /* balance uri [len N] [depth N] [whole] [path-only] */
	LB_URL_PARAM,    /* balance url_param <param> */
	LB_HDR,          /* balance hdr(<name>) [use_domain_only] */
};

enum lb_hash_type { LB_HASH_MAP = 0, LB_HASH_CONSISTENT };

struct ssl_bind_conf;

struct bind_conf {
	struct list list;           /* in proxy->binds */
	struct proxy *fe;
	char *file;
	int line;
	char *addr_str;
	struct sl_addr addr;
	char *name;
	int backlog;
	int tfo;                    /* TCP fast open accepted (queue: the backlog) */
	int defer_accept;           /* TCP_DEFER_ACCEPT */
	int mss;                    /* TCP_MAXSEG, 0: the kernel's */
	int tcp_ut_ms;              /* TCP_USER_TIMEOUT of accepted connections */
	int maxconn;                /* 0 = frontend's */
	int accept_proxy;
	int v4v6;                   /* IPv6 socket also accepts IPv4 */
	int v6only;                 /* IPv6 only (wins over v4v6) */
	uint64_t thread_mask;       /* bit i: thread i+1 may accept; 0 = all */
	struct listener *lst;
	/* stats socket binds: the CLI takes the connections */
	int is_cli;
	int cli_level;
	int mode_perm;              /* `mode 600` for unix sockets, -1 if unset */
	long unix_uid, unix_gid;    /* `user`/`uid`, `group`/`gid` of unix sockets, -1 */
	int sevfmt;                 /* `severity-output` (CLI_SEVFMT_*), -1 if unset */
	int expose_fd;              /* `expose-fd listeners`: _getsocks hands the
	                             * listening sockets over (-x) */
	struct ssl_bind_conf *ssl;  /* ssl options (src/net/ssl_conf.c), or NULL */
	int proto;                  /* BIND_PROTO_*: `proto h1|h2` */
	/* binds of other modules (peers): who takes the connections, and
	 * what an error names; NULL: a frontend's or the CLI's */
	int (*on_accept)(struct listener *l, int fd, const struct sockaddr_storage *from);
	const char *owner;
};

#define BIND_PROTO_AUTO  0      /* HTTP/1, or HTTP/2 by ALPN or preface */
#define BIND_PROTO_H1    1
#define BIND_PROTO_H2    2

struct acl_cond;
struct lf_expr;

/* use-server <server> [{if | unless} <condition>] (src/proxy/use_server.c) */
struct use_server_rule {
	struct list list;
	char *name;
	struct server *srv;         /* resolved after parsing */
	struct acl_cond *cond;      /* NULL: always */
	char *file;
	int line;
};

struct use_backend_rule {
	struct list list;
	char *name;
	struct proxy *be;           /* NULL when the name is dynamic */
	struct lf_expr *dyn;        /* name with %[...]: rendered per request */
	struct acl_cond *cond;      /* NULL: always */
	char *file;
	int line;
};

#define PX_FE_READY    0   /* accepting */
#define PX_FE_PAUSED   1   /* `disable frontend`: not listening, may resume */
#define PX_FE_STOPPED  2   /* `shutdown frontend`: sockets closed for good */

struct proxy {
	struct list list;           /* all proxies, in declaration order */
	char *name;
	int uuid;
	unsigned int cap;           /* PX_CAP_* */
	enum px_mode mode;
	int srv_state_load;      /* load-server-state-from-file: SRV_STATE_LOAD_* */
	int chk_send_state;      /* http-check send-state */
	char *log_tag;           /* log-tag: its logs' syslog tag, NULL: global's */
	char *srv_state_file_name;   /* server-state-file-name, NULL: its name */
	char *conf_file;
	int conf_line;
	int disabled;
	int custom_id;              /* `id`: uuid set by the configuration */
	/* socket options (px_sock.c): client side (frontend), server side
	 * (backend), and the listen backlog of bind lines without their own */
	struct conn_sockopts cli_so, srv_so;
	int backlog;
	/* sessions accepted per second (show stat rate, fe_sess_rate), and the
	 * `rate-limit sessions` limit (0: none); any thread adds */
	struct freq_ctr fe_sess_rate;
	_Atomic uint32_t fe_sess_rate_max;
	int fe_rate_lim;

	/* settings inherited from a defaults section */
	int timeout_client, timeout_server, timeout_connect, timeout_queue;
	int timeout_tunnel, timeout_client_fin, timeout_server_fin;
	int timeout_check;          /* 0: the whole check is bounded by inter */
	int retries;
	int redispatch_interval;    /* option redispatch <interval>, default -1 */
	unsigned int options;       /* PX_O_* */
	int max_ka_queue;           /* max-keep-alive-queue, -1: none */
	int maxconn;                /* frontend: max concurrent sessions */
	int fullconn;
	enum lb_algo lb_algo;
	int random_draws;
	struct list logs;           /* struct log_target */
	char *error_log_format;     /* error-log-format: connection errors (handshakes) */
	char *error_log_format_file;
	int error_log_format_line;
	struct lf_expr *error_logfmt;   /* compiled (frontends), NULL: the built-in line */
	char *log_format;           /* NULL: built-in for the mode/options */
	char *log_format_file;      /* where log_format was written (own copy) */
	int log_format_line;
	struct lf_expr logfmt;
	struct server *defsrv;      /* default-server settings */

	/* frontend */
	struct list binds;          /* struct bind_conf */
	char *defbe_name;
	char *defbe_file;
	int defbe_line;
	struct proxy *defbe;
	struct list use_backends;   /* struct use_backend_rule */
	_Atomic int feconn;
	_Atomic int fe_maxconn_rt;  /* runtime: set maxconn frontend */
	_Atomic int fe_state;       /* PX_FE_*: disable/enable/shutdown frontend
	                             * (the CLI writes it, listener.c applies it) */
	struct counters fe_cnt;
	struct mux_counters fe_mux; /* ssl/h2/h1 of its client connections */

	/* backend */
	struct server **srv;
	int nsrv;                /* changed at run time by add/del server only
	                          * (src/proxy/srv_dyn.c) */
	int srv_cap;             /* room of srv[]: it never moves once threads run */
	struct sl_lock lb_lock;     /* protects servers' lb_* fields (kind lb) */
	struct queue queue;         /* backend queue: any server may serve */
	_Atomic int beconn;
	struct counters be_cnt;
	struct mux_counters be_mux; /* ssl/h2/h1 of its server connections */
	struct time_avgs be_times;  /* qtime/ctime/ttime of its sessions (atomics) */
	uint32_t lb_rr_static_next; /* static-rr position (lb_lock) */
	struct server *lb_last;     /* leastconn tie rotation (lb_lock) */
	/* server state changes (src/proxy/srv_state.c): state_lock serialises
	 * them for the servers of this backend (checks on any thread, the
	 * CLI), and protects the check results of its servers and be_up;
	 * the atomics below are written under it and read racily */
	struct sl_lock state_lock;
	/* show errors: the last invalid request and response (errcap.c),
	 * allocated by the first error (compare-and-swap), then under its
	 * own lock */
	struct errcap_slots *_Atomic errcap;
	int be_up;                  /* had a usable server at the last change */
	_Atomic int64_t be_last_change_ms; /* monotonic ms, 0: the start */
	_Atomic int64_t be_down_ms; /* time without usable server before it */
	_Atomic uint64_t be_down_trans; /* times it lost its last usable server */
	/* option httpchk and http-check rules (check_http.c); may be those of
	 * the defaults section until the proxy has a rule of its own */
	struct hchk_rules *hchk;
	int hchk_owned;
	struct tchk_rules *tchk;    /* tcp-check rules (check_tcp.c), maybe the defaults' */
	int tchk_owned;

	struct proxy *defaults;     /* the defaults it inherited */

	/* HTTP and rules (configuration; read-only at run time) */
	int timeout_http_request, timeout_http_keep_alive, timeout_tarpit;
	enum px_http_conn http_conn;
	enum px_http_reuse http_reuse;
	int pool_max_conn;          /* server idle connections per thread, -1 unlimited */
	int pool_purge_delay;       /* ms an idle server connection is kept */
	unsigned int retry_on;      /* RETRY_ON_* */
	int max_keep_alive_queue;   /* unused, parsed for compatibility */
	struct acl_list *acls;      /* named ACLs (acl keyword); NULL until the first */
	struct list http_req_rules;     /* struct act_rule, http-request */
	struct list http_res_rules;     /* http-response */
	struct list http_after_rules;   /* http-after-response */
	struct list tcp_req_conn_rules; /* tcp-request connection */
	struct list tcp_req_sess_rules; /* tcp-request session */
	struct list tcp_req_cont_rules; /* tcp-request content */
	struct list use_servers;        /* struct use_server_rule */
	struct list stick_rules;        /* struct stick_rule (stick_rules.c) */
	struct list tcp_res_cont_rules; /* tcp-response content */
	int tcp_inspect_delay;      /* tcp-request inspect-delay (ms) */
	int tcp_res_inspect_delay;  /* tcp-response inspect-delay (ms) */
	struct http_errors *errors; /* errorfile & co (NULL: built-in pages only) */
	char *monitor_uri;
	struct acl_cond **monitor_fail; /* `monitor fail` conditions (any: 503) */
	int nmonitor_fail;
	char *send_name_hdr;        /* http-send-name-header, or NULL */
	char *capture_cookie;       /* capture cookie <name> (a prefix), or NULL */
	int capture_cookie_len;
	struct persist_rule *persist_rules;  /* force-persist, ignore-persist, in
	                                      * order: the first match decides */
	int npersist_rules;
	struct stats_page *stats;   /* stats enable/uri/auth...: the HTTP stats page
	                             * (src/mgmt/stats_page.c), or NULL */
	struct px_fwd_hdr fwdfor, origto;
	char *unique_id_fmt_str;
	char *unique_id_fmt_file;   /* where unique_id_fmt_str was written (own copy) */
	int unique_id_fmt_line;
	struct lf_expr *unique_id_fmt;
	char *unique_id_hdr;
	struct px_capture req_cap[PX_MAX_CAPTURES], res_cap[PX_MAX_CAPTURES];
	int nreq_cap, nres_cap;
	/* cookie persistence (cookie keyword) */
	char *cookie_name;
	unsigned int cookie_opts;   /* PX_CK_* */
	char *cookie_domain;
	int cookie_maxidle, cookie_maxlife;
	/* hash balancing */
	enum lb_hash_type hash_type;
	char *lb_arg;               /* url_param name, hdr name */
	int lb_uri_len, lb_uri_depth, lb_uri_whole, lb_uri_path_only, lb_hdr_domain;
	/* compression (src/http/comp.c), NULL without any compression line */
	struct comp_cfg *comp;
};

/* cookie options */
#define PX_CK_INSERT    0x01
#define PX_CK_REWRITE   0x02
#define PX_CK_PREFIX    0x04
#define PX_CK_INDIRECT  0x08
#define PX_CK_NOCACHE   0x10
#define PX_CK_HTTPONLY  0x20
#define PX_CK_SECURE    0x40
#define PX_CK_POSTONLY  0x80
#define PX_CK_PRESERVE  0x100

extern struct list proxies;     /* every proxy, defaults excluded */

struct cfg_ctx;
/* The optional "{if | unless} <condition>" at args[2] of a switching rule
 * (use_backend, use-server): 0 with *cond (NULL without a condition), or -1
 * with <err> set. */
int proxy_parse_switch_cond(struct cfg_ctx *ctx, char **args, int nargs,
                            struct acl_cond **cond, char *err, size_t errlen);

/* Called by the parser on a section line. Returns the proxy, or NULL with
 * a message in <err>. */
struct proxy *proxy_cfg_begin(struct cfg_ctx *ctx, enum cfg_section sec,
                              char **args, int nargs, char *err, size_t errlen);
void proxy_cfg_end(struct cfg_ctx *ctx);

/* Creates one bind_conf per comma-separated address of <addrs> into <out>
 * (for `bind` lines and `stats socket`), then parses the options of such a
 * line from args[first]. Both return 0 or -1 with a message. */
int bind_conf_create(struct proxy *fe, const char *addrs, const char *file, int line,
                     int is_cli, struct list *out, char *err, size_t errlen);
/* 1 if <s> (<len> bytes) is a process set of one process: all, odd, 1, 1-1 */
int px_process_set_ok(const char *s, size_t len);

int bind_parse_options(struct bind_conf *bc, char **args, int nargs, int first,
                       char *err, size_t errlen);
/* Frees (and unlinks) every bind_conf of <l> (a failed line's). */
void bind_conf_list_free(struct list *l);

struct proxy *proxy_find(const char *name, unsigned int cap);
struct server *server_find(const struct proxy *be, const char *name);

/* Current frontend limit (runtime value if set). */
int  proxy_fe_maxconn(const struct proxy *fe);
const char *proxy_mode_name(enum px_mode m);

#endif
