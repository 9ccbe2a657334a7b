/* Streams: one per TCP session, from accept to log. Owner thread only,
 * except `pend`, governed by queue.c. */
#ifndef SLUICE_PROXY_STREAM_H
#define SLUICE_PROXY_STREAM_H

#include <stdint.h>
#include <sys/socket.h>
#include <sluice/core/buf.h>
#include <sluice/core/list.h>
#include <sluice/expr/vars.h>
#include <sluice/http/act.h>
#include <sluice/http/mux_h1.h>
#include <sluice/net/conn.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/stick_rules.h>
#include <sluice/proxy/stktable.h>

struct listener;
struct proxy;
struct server;
struct task;
struct cli_out;
struct http_txn;
struct var_store;

enum stream_state {
	SST_PROXY_HDR = 0,   /* waiting for the PROXY header (accept-proxy) */
	SST_ASSIGN,          /* choosing backend and server */
	SST_QUEUED,          /* waiting for a server slot */
	SST_TURNAROUND,      /* pause before a connect retry */
	SST_CONNECT,         /* about to connect */
	SST_CONNECTING,
	SST_ESTABLISHED,     /* TCP forwarding (or an HTTP tunnel) */
	SST_HTTP_WAIT_REQ,   /* HTTP: waiting for a request head */
	SST_HTTP_BODY_WAIT,  /* HTTP: request analysed up to a rule waiting for the body */
	SST_HTTP_XFER,       /* HTTP: request and response moving */
	SST_HTTP_TARPIT,     /* HTTP: tarpitted, answer at expiry */
	SST_HTTP_LINGER,     /* HTTP: response sent, our FIN sent, draining input */
	SST_CLI_HANDSHAKE,   /* client connection's transport handshake (TLS) */
	SST_APPLET,          /* TCP: a service (tcp-request content use-service)
	                      * talks to the client, no server */
	SST_CLOSED,
};

struct h1_counters;

struct stream {
	struct list list;          /* per-thread list (thread's stream lock) */
	uint64_t uniq_id;
	struct task *task;
	struct listener *lst;
	struct proxy *fe, *be;
	struct server *srv;
	int has_slot;              /* holds one of srv's slots */
	int queued;                /* pend is in a queue (or was handed a slot
	                            * not collected yet): leave it before freeing */
	struct server *prev_srv;   /* avoided on redispatch */
	struct pendconn pend;
	int prio_class;            /* queue priority, copied into pend when queueing */
	int prio_offset_ms;
	struct conn cli;
	struct conn sc;            /* server side */
	struct buffer req;         /* client -> server (HTTP: the message model) */
	struct buffer res;         /* server -> client (HTTP: the message model) */
	struct h1m cli_m;          /* HTTP: the client connection's mux */
	struct h1m srv_m;          /* HTTP: the server connection's mux */
	struct h2s *h2s;           /* a stream of an HTTP/2 connection: its HTTP/2
	                            * stream (then cli is a copy of the
	                            * connection's addresses, without descriptor,
	                            * and cli_m is not used) */
	struct h2bs *h2bs;         /* on a multiplexed HTTP/2 server connection: its
	                            * HTTP/2 stream (then sc is a copy of that
	                            * connection's addresses, without descriptor,
	                            * and srv_m only carries what goes before the
	                            * connection's preface) */
	/* what `show sess` prints of a stream's HTTP/2 connections (their
	 * descriptors and the stream ids; 0 when there is none), stored by
	 * the owner thread, read racily by the dump */
	int h2_cfd, h2_sfd;
	int32_t h2_csid, h2_ssid;
	enum stream_state st;
	int retries_left;
	int retries_done;
	int redispatched;
	char term[3];
	_Atomic int kill_req;      /* `shutdown session(s)`, on-marked-*: the
	                            * termination char ('K', 'D', 'U'); set by any thread
	                            * (under the owner's stream-list lock, which
	                            * keeps the stream alive), acted on by the
	                            * owner when its task runs */
	int64_t accept_us;         /* wall clock */
	uint64_t accept_ms;        /* monotonic */
	uint64_t queue_ms;         /* entered the queue */
	uint64_t connect_ms;       /* connect started */
	uint64_t accept_ns;        /* monotonic ns: accepted */
	uint64_t slot_ns;          /* got its server slot (last one) */
	uint64_t qtime_us;         /* waited in queues, 0 if never queued */
	uint64_t ctime_us;         /* slot to established connection */
	int Tw, Tc;
	uint64_t bytes_in, bytes_out;
	uint64_t cli_exp, srv_exp, conn_exp, queue_exp;
	uint64_t fd_wait_end;      /* a connect waiting for descriptors gives up
	                            * then (ms, 0: not waiting) */
	int srv_queue_len, be_queue_len;   /* queue lengths seen (%sq %bq) */
	/* HTTP mode */
	struct http_txn *txn;      /* current transaction; NULL in TCP mode */
	struct var_store vars_sess;    /* sess.* variables */
	struct var_store vars_txn;     /* txn.* variables of a TCP stream (HTTP: the txn's) */
	unsigned int http_flags;   /* SF_* below */
	enum stream_state after_hs; /* state once the client handshake is done */
	int hs_failed;             /* the client handshake failed: logged already */
	int fc_err;                /* the client connection's error (conn_err.h), 0 */
	int sc_reqs;               /* requests carried by the server connection */
	struct h1_counters *h1_be_strm; /* the backend's HTTP/1 counters where the
	                            * request counts as an open stream, or NULL */
	struct server *sc_srv;     /* server of the kept server connection (idle
	                            * between transactions), or NULL */
	uint64_t txn_count;        /* transactions run on this connection */
	uint32_t hkey;             /* hash key for balance uri|url_param|hdr */
	int has_hkey;
	struct server *persist_srv; /* server designated by a persistence cookie */
	int force_persist;         /* force-persist matched: persist_srv even DOWN */
	struct list *tcp_resume;   /* tcp-request content rule to resume at */
	int tcp_rule_busy;         /* act_env.rule_busy, kept across its yield */
	uint64_t http_exp;         /* HTTP: request/keep-alive/tarpit/linger timer */
	/* use-service (HTTP): the body a service produced, sent from this
	 * heap block as the client drains the response buffer; its size is
	 * bounded by the configuration, never by traffic */
	char *svc_body;
	size_t svc_len, svc_off;
	/* a service that produces its body as it goes (Lua): asked for the
	 * next block once svc_body is drained; svc_wake_ms is when to ask
	 * again when it had nothing (0: it woke the task itself) */
	const struct svc_live_ops *svc_live_ops;
	void *svc_live;
	uint64_t svc_wake_ms;
	int svc_reads_body;        /* the service reads the request body: it is
	                            * kept in the request channel, not dropped */
	const char *svc_log_name;  /* server name in the log ("<PROMEX>") */
	/* or a cache hit: the object (referenced) whose bytes svc_off to
	 * svc_len are the body still to send (src/http/cache.c) */
	struct cache_obj *svc_cache;
	const struct cache_cfg *svc_cache_cfg;
	const void *svc_cache_chunk;   /* where the last copy ended (its chunk, */
	uint64_t svc_cache_chunk_off;  /* and that chunk's offset in the object) */
	struct stkctr stkctr[STKT_MAX_CTR];   /* track-sc0..2 (stktable_act.c) */
	/* stick store-request keys waiting for the server (stick_rules.c) */
	struct stick_store stick_store[STICK_MAX_STORE];
	int stick_nstore;
	int stick_done;            /* the request's stick rules ran */
	/* Lua (src/lua/): an http-request action suspended in its coroutine
	 * (struct lua_run), and the transaction's private value (txn:set_priv);
	 * released with the transaction (lua_stream_release()) */
	void *lua_run;
	void *lua_priv;
	/* a TCP service (SST_APPLET): its code, its state, when to run it
	 * again (0: on I/O or when it woke the task) */
	const struct tcp_service *tcp_svc;
	void *tcp_svc_ctx;
	uint64_t tcp_svc_wake;
};

#define SF_HTTP          0x0001   /* HTTP mode stream */
#define SF_H2            0x0004   /* a stream of an HTTP/2 connection */
#define SF_H1_FE_STRM    0x0008   /* its request counts as an open HTTP/1
                                   * stream of the frontend (h1_open_streams) */
#define SF_CONN_GIVEN    0x0002   /* its client connection went to an HTTP/2
                                   * connection: no log, no accounting */



/* Services for `http-request use-service`. A service answers the request
 * itself: no server is chosen, the response it produces goes through the
 * response path like a server's (http-after-response rules, counters, log).
 * Register with http_service_register() (a constructor is fine: before the
 * configuration is parsed); the name is then accepted by use-service. */
struct svc_reply {
	int status;
	const char *content_type;
	char *body;                /* malloc'ed, handed over to the stream */
	size_t len;
	char extra_hdrs[512];      /* more header lines ("name: value\r\n"...) */
	/* a service that writes its own head (Lua): every header line (malloc,
	 * freed by the stream), instead of cache-control/content-type/extra_hdrs;
	 * <reason> empty: the status's usual one */
	char *raw_hdrs;
	char reason[64];
	const struct http_service *svc;  /* set by the stream: the service called */
	/* a body that goes on after <body> (sent chunked): see svc_live_ops */
	void *live;
	const struct svc_live_ops *live_ops;
	int head_pending;          /* with <live>: no head yet, asked with ->head() */
};

/* A body that comes as the service produces it (chunked to the client).
 * more() returns 1 with the next block (malloc, may be empty) in
 * *body and *len, 0 when it has nothing yet (it set s->svc_wake_ms or woke
 * the stream's task), -1 when the body is complete. release() drops the
 * producer (end of transaction, whether complete or not). Owner thread. */
struct svc_reply;
struct svc_live_ops {
	int (*more)(struct stream *s, char **body, size_t *len);
	void (*release)(void *live);
	/* A service that had no head yet (svc_reply.head_pending): fills <out>
	 * once it has one (1; out->live NULL when the service has ended
	 * meanwhile, the body then being whole), 0 while it has not (it set
	 * s->svc_wake_ms or woke the task), -1 when it failed (a 500 goes). */
	int (*head)(struct stream *s, struct svc_reply *out);
};

struct http_service {
	struct act_service as;     /* the name use-service accepts */
	const char *log_name;      /* server name in the log, e.g. "<PROMEX>" */
	/* Fills <out> for the stream's request (s->txn). Returns 0; or an HTTP
	 * status (400...) for the error page sluice sends instead; or -1 when
	 * it cannot answer (no memory): a 500. Owner thread. */
	int (*produce)(struct stream *s, struct svc_reply *out);
};

void http_service_register(struct http_service *svc);

/* Services of TCP streams (`tcp-request content use-service`, TCP mode):
 * start() takes the stream over (it enters SST_APPLET, no server is
 * chosen) and returns 0, or -1 to close it; step() runs at each wake-up
 * (I/O on the client connection, s->tcp_svc_wake, a self wake-up) and
 * sets s->st = SST_CLOSED once done; release() frees s->tcp_svc_ctx
 * (end of stream, whatever the state). Owner thread. */
struct tcp_service {
	struct act_service as;       /* kind ACT_SVC_TCP */
	int (*start)(struct stream *s, const struct tcp_service *svc);
	void (*step)(struct stream *s);
	void (*release)(struct stream *s);
};
void tcp_service_register(struct tcp_service *svc);

struct lf_expr;
struct log_fields;
/* Renders log-format <e> for the stream (what set-header values, return
 * lf-string and log lines use) into <out> (NUL-terminated). Returns the
 * length, cut to fit. Owner thread only. */
size_t stream_lf_render(struct stream *s, const struct lf_expr *e, char *out, size_t room);
/* Fills the log fields (and s's sample context, for %[...]) of the stream. */
void stream_log_fields(struct stream *s, struct log_fields *f);

int  stream_accept(struct listener *l, int fd, const struct sockaddr_storage *from);

struct h2s;
struct h2bs;
struct http_msg;
/* A stream for HTTP/2 stream <h> of client connection <cli> (accepted by
 * <l>), its request head <msg> (copied): the analysis starts at once.
 * <first>: the connection's first request. NULL when memory is short.
 * Owner thread. */
struct stream *stream_new_h2(struct listener *l, const struct conn *cli, struct h2s *h,
                             const struct http_msg *msg, int first);
/* A client connection that is not a stream's any more (an HTTP/2
 * connection) ends: the frontend and listener counts. */
void stream_session_closed(struct listener *l, struct proxy *fe);

/* Queue priority (`set-priority-class`, `set-priority-offset`): values are
 * truncated to HAProxy's ranges, -2047..2047 and -524287..524287 ms, and
 * apply when the stream next enters a queue (a waiting stream keeps its
 * rank). Default 0 and 0. Owner thread only. */
static inline void stream_set_priority_class(struct stream *s, long v)
{
	s->prio_class = queue_clamp_class(v);
}

static inline void stream_set_priority_offset(struct stream *s, long ms)
{
	s->prio_offset_ms = queue_clamp_offset(ms);
}

/* `show sess`: one line per stream of every thread, at most <max>. */
void stream_dump_all(struct cli_out *out, int max);
/* Number of live streams. */
int  stream_count(void);

/* `shutdown session <id>`: asks the stream whose `show sess` id is <id> to
 * end. Any thread: it sets the stream's kill flag and wakes its task, and
 * the owner thread ends it (termination state 'K'). Returns 0, or -1 if
 * no stream has that id. */
int  stream_shutdown_by_id(uintptr_t id);
/* `shutdown sessions server`: the same for every stream using <srv>,
 * ended with termination state <why>: 'K' (killed), 'D' (its server went
 * down, on-marked-down shutdown-sessions), 'U' (an active server came up,
 * on-marked-up shutdown-backup-sessions). Returns how many were asked. */
int  stream_shutdown_server(const struct server *srv, char why);

#endif
