/* Servers of a backend. */
#ifndef SLUICE_PROXY_SERVER_H
#define SLUICE_PROXY_SERVER_H

#include <stdatomic.h>
#include <sluice/net/addr.h>
#include <sluice/net/conn.h>
#include <sluice/proxy/check.h>
#include <sluice/proxy/counters.h>
#include <sluice/proxy/queue.h>

struct srv_idle_list;
struct srv_redir;

/* proxy-v2-options: the TLVs added to a v2 PROXY header */
enum {
	SRV_PP_SSL        = 0x01,   /* the SSL TLV: client flags, verify, version */
	SRV_PP_SSL_CN     = 0x02,   /* ... with the client certificate's CN */
	SRV_PP_SSL_CIPHER = 0x04,
	SRV_PP_CERT_SIG   = 0x08,   /* the frontend certificate's signature algorithm */
	SRV_PP_CERT_KEY   = 0x10,   /* its key algorithm and size */
	SRV_PP_AUTHORITY  = 0x20,   /* the client's SNI */
	SRV_PP_CRC32C     = 0x40,
	SRV_PP_UNIQUE_ID  = 0x80,   /* the frontend's unique-id-format */
};

enum { SRV_WS_AUTO = 0, SRV_WS_H1, SRV_WS_H2 };

enum srv_admin {
	SRV_ADMIN_READY = 0,
	SRV_ADMIN_DRAIN,         /* no new sessions from the balancer */
	SRV_ADMIN_MAINT,         /* out of service */
};

/* Operational state: what health checks say, apart from the admin state
 * (a server without checks is always UP; UP is 0 so that a server built
 * by hand, in tests, is). */
enum srv_op {
	SRV_OP_UP = 0,
	SRV_OP_DOWN,
	SRV_OP_NOLB,             /* stopping (http-check disable-on-404): no new
	                          * session from the balancers, persistence still */
};

#define SRV_WEIGHT_MAX 256

struct ssl_srv_conf;

struct server {
	struct proxy *be;
	char *name;
	int puid;                /* id within the backend, from 1 */
	char *conf_file;
	int conf_line;
	struct sl_addr addr;
	char *addr_str;
	int iweight;             /* configured weight */
	_Atomic int uweight;     /* runtime weight (set server weight) */
	_Atomic int admin;       /* enum srv_admin; written under be->state_lock */
	int tfo;                 /* `tfo` (-1: `no-tfo`, 0: unset) */
	int tcp_ut_ms;           /* `tcp-ut`, 0: the backend's */
	struct sl_addr source;   /* `source`, kind ADDR_FD (unused) if none */
	int has_source;
	struct conn_sockopts so; /* the backend's socket options with these (post-parse) */
	_Atomic int op_state;    /* enum srv_op; written under be->state_lock.
	                          * Both are read without lock on the request
	                          * path (srv_is_usable()) */
	_Atomic int maxconn;     /* 0 = unlimited; runtime: set maxconn server */
	int minconn;
	int maxqueue;            /* 0 = unlimited */
	int backup;
	int send_proxy;          /* 0, 1 or 2 */
	int pp_opts;             /* SRV_PP_*: the TLVs of a v2 PROXY header */
	struct srv_redir *redir; /* `redir <prefix>`: GET/HEAD answered with a 302 */
	int non_stick;           /* `non-stick`: never stored in a stick table */
	int ws;                  /* `ws`: SRV_WS_AUTO, _H1, _H2 */
	int disabled_at_start;
	_Atomic int served;      /* slots in use: streams connected or connecting */
	_Atomic int used_conns;  /* live server connections */
	_Atomic int used_max;    /* the most used_conns has been (display) */
	struct queue queue;      /* its own waiters (assigned to it) */
	struct counters cnt;
	struct ssl_counters ssl_cnt;  /* handshakes toward it (show stat ssl_*) */
	struct time_avgs times;  /* qtime/ctime/ttime of its sessions (atomics) */
	/* log2 histograms (us, atomic adds) of the sessions it served: */
	struct hist qtime_hist;  /* wait in a queue (its own or the backend's);
	                          * sessions that did not queue add nothing */
	struct hist ctime_hist;  /* from the slot to the established connection */
	struct hist ttime_hist;  /* from accept to the end of the session */
	/* load balancing state, protected by be->lb_lock */
	int lb_cur;              /* smooth weighted round-robin accumulator */
	/* HTTP */
	char *cookie;            /* `cookie <value>` for persistence */
	int pool_max_conn;       /* idle connections kept, -1 unlimited (per thread) */
	int pool_purge_delay;    /* ms an idle connection is kept */
	struct srv_idle_list *idle;   /* per-thread idle connections (srv_idle.c) */
	_Atomic int idle_conns;  /* pooled connections that carried one request */
	_Atomic int safe_conns;  /* pooled connections that carried more (display) */
	int rr_static_pos;
	struct ssl_srv_conf *ssl;  /* ssl options (src/net/ssl_conf.c), or NULL */
	int proto;               /* SRV_PROTO_*: `proto h1|h2`, or by ALPN */
	int max_reuse;           /* `max-reuse`: requests after the first on one
	                          * connection, -1 unlimited */
	/* health checks (check.h) */
	struct check_conf chk;   /* settings, read-only after parsing */
	struct srv_check *check; /* the running check (check.c), NULL: none */
	_Atomic int chk_disabled; /* `disable health`: no check runs, a result in
	                          * flight is ignored, the server shows as
	                          * unchecked (written by the CLI) */
	struct check_state chk_st; /* last result and health (be->state_lock) */
	int chk_op;              /* the op state its health checks call for
	                          * (be->state_lock); op_state is that unless
	                          * the agent says down */
	struct srv_check *agent; /* its agent check (check.c), NULL: none */
	_Atomic int agent_disabled;  /* `disable agent` (CLI) */
	struct check_state agent_st; /* the agent's last result and health
	                          * (rise 1, fall 1; be->state_lock) */
	_Atomic int admin_by_agent;  /* the agent set the admin state (display) */
	int slowstart;               /* `slowstart`, ms; 0: none */
	/* observe: the traffic judges the server too */
	int observe;                 /* SRV_OBS_* */
	int error_limit;             /* `error-limit`, default 10 */
	int on_error;                /* SRV_ONERR_* */
	_Atomic int consec_errors;   /* errors in a row seen by observe */
	_Atomic uint64_t hana_fail;  /* times error-limit was reached (hanafail) */
	_Atomic int64_t warm_since_ms;  /* monotonic ms it came back up after
	                             * being stopped (slowstart), 0: not warming */
	/* track: its states follow another server's */
	char *track_name;            /* `track [<backend>/]<server>` as written */
	struct server *track;        /* the server it tracks, NULL: none */
	struct server *trackers;     /* the servers that track it (a list) */
	struct server *track_next;   /* the next one tracking its tracked server */
	int fadmin;                  /* admin state forced (CLI, agent, config, state file) */
	int iadmin;                  /* admin state inherited from its tracked server;
	                              * admin is the higher of both (state_lock) */
	/* DNS: `resolvers` (names resolved at start-up only), `init-addr` */
	char *resolvers_name;
	int init_addr[8];            /* INIT_ADDR_* in order, 0-terminated */
	struct sockaddr_storage init_ip;   /* for INIT_ADDR_IP */
	int no_addr;                 /* init-addr none and the name did not resolve:
	                              * in maintenance, "MAINT (resolution)" */
	int dynamic;                 /* added by `add server` */
	_Atomic int deleted;         /* removed by `del server`: kept until exit */
	int non_purgeable;           /* referenced by the configuration (use-server,
	                              * track): `del server` refuses it */
	struct server *grave_next;   /* the deleted servers, freed at exit */
	int on_marked_down_kill;     /* on-marked-down shutdown-sessions */
	int on_marked_up_kill_backups;  /* on-marked-up shutdown-backup-sessions */
	/* state history, written under be->state_lock, read racily for
	 * display: monotonic ms of the last op/admin change (0: the start),
	 * time spent stopped (DOWN or MAINT) before it (ms, counted in whole
	 * seconds of the clock as HAProxy counts it), changes to stopped,
	 * checks that failed while the server was not fully down */
	_Atomic int64_t last_change_ms;
	_Atomic int64_t down_ms;
	_Atomic uint64_t down_trans;
	_Atomic uint64_t chk_fail;
};

/* `observe` modes and `on-error` actions */
enum { SRV_OBS_NONE = 0, SRV_OBS_LAYER4, SRV_OBS_LAYER7 };
enum { SRV_ONERR_FAILCHK = 0, SRV_ONERR_FASTINTER, SRV_ONERR_SUDDTH, SRV_ONERR_MARKDWN };

/* What the traffic tells of a server (HAProxy's health analysis
 * statuses): each is a success, an error or nothing for each mode. */
enum hana_status {
	HANA_L4_OK, HANA_L4_ERR, HANA_HTTP_OK, HANA_HTTP_STS, HANA_HTTP_HDRRSP,
	HANA_HTTP_RSP, HANA_HTTP_READ_ERROR, HANA_HTTP_READ_TIMEOUT, HANA_HTTP_BROKEN_PIPE,
};

/* One observation of the traffic to <s> under `observe`: a success clears
 * its count of errors in a row, an error adds one, and the one that
 * reaches `error-limit` runs `on-error` (src/proxy/srv_state.c). Any
 * thread; a few atomics unless the limit is reached. */
void srv_observe(struct server *s, enum hana_status st);

#define SRV_PROTO_AUTO  0    /* HTTP/1.1, or what ALPN chooses */
#define SRV_PROTO_H1    1
#define SRV_PROTO_H2    2

/* One more connection in use toward <s> (a new one or one taken back from
 * the idle pool); keeps the high-water mark `show servers conn` prints. */
static inline void srv_used_conns_inc(struct server *s)
{
	int cur = atomic_fetch_add(&s->used_conns, 1) + 1;
	int max = atomic_load_explicit(&s->used_max, memory_order_relaxed);

	while (cur > max && !atomic_compare_exchange_weak(&s->used_max, &max, cur))
		;
}

struct server *server_new_default(void);
/* The parameters of a server line from args[first] on (also add server). */
struct cfg_ctx;
int srv_parse_params(struct cfg_ctx *ctx, struct server *s, char **args, int nargs,
                     int first, char *err, size_t errlen);
void server_copy_settings(struct server *dst, const struct server *src);

/* Weight used by the balancer now: 0 if not usable for new sessions. */
int  srv_lb_weight(const struct server *srv);
/* slowstart: the percentage (1..100) of its weight and maxconn a server
 * coming back up gets, growing linearly over `slowstart` ms; 100 when it
 * is not warming up. */
int  srv_throttle(const struct server *srv);
/* 1 when the weights of <be>'s algorithm change with the load (slowstart
 * applies to them): roundrobin, leastconn, random. */
int  be_dynamic_weights(const struct proxy *be);
/* Usable for new sessions by the balancers: admin state ready, UP, weight
 * above 0. Lock-free (relaxed loads: a decision may use a state a moment
 * old, never a torn one). */
int  srv_is_usable(const struct server *srv);
/* Stopped: in maintenance or DOWN (HAProxy's "cur_state STOPPED"): takes
 * nothing new, not even by persistence; its queue is redispatched. */
static inline int srv_is_stopped(const struct server *srv)
{
	return atomic_load(&((struct server *)srv)->admin) == SRV_ADMIN_MAINT ||
	       atomic_load(&((struct server *)srv)->op_state) == SRV_OP_DOWN;
}
const char *srv_admin_name(int admin);

#endif
