/* Streams: one per TCP session, from accept to log. Owner thread only,
 * except `pend`, governed by queue.c. */
#ifndef SLUICE_PROXY_STREAM_H
#define SLUICE_PROXY_STREAM_H

#include <stdint.h>
#include <sys/socket.h>
#include <sluice/core/buf.h>
#include <sluice/core/list.h>
#include <sluice/net/conn.h>
#include <sluice/proxy/queue.h>

struct listener;
struct proxy;
struct server;
struct task;
struct cli_out;

enum stream_state {
	SST_PROXY_HDR = 0,   /* waiting for the PROXY header (accept-proxy) */
	SST_ASSIGN,          /* choosing backend and server */
	SST_QUEUED,          /* waiting for a server slot */
	SST_TURNAROUND,      /* pause before a connect retry */
	SST_CONNECT,         /* about to connect */
	SST_CONNECTING,
	SST_ESTABLISHED,
	SST_CLOSED,
};

struct stream {
	struct list list;          /* per-thread list (thread's stream lock) */
	uint64_t uniq_id;
	struct task *task;
	struct listener *lst;
	struct proxy *fe, *be;
	struct server *srv;
	int has_slot;              /* holds one of srv's slots */
	struct server *prev_srv;   /* avoided on redispatch */
	struct pendconn pend;
	struct conn cli;
	struct conn sc;            /* server side */
	struct buffer req;         /* client -> server */
	struct buffer res;         /* server -> client */
	enum stream_state st;
	int retries_left;
	int retries_done;
	int redispatched;
	char term[3];
	int64_t accept_us;         /* wall clock */
	uint64_t accept_ms;        /* monotonic */
	uint64_t queue_ms;         /* entered the queue */
	uint64_t connect_ms;       /* connect started */
	int Tw, Tc;
	uint64_t bytes_in, bytes_out;
	uint64_t cli_exp, srv_exp, conn_exp, queue_exp;
	int srv_queue_len, be_queue_len;   /* queue lengths seen (%sq %bq) */
};

int  stream_accept(struct listener *l, int fd, const struct sockaddr_storage *from);

/* `show sess`: one line per stream of every thread, at most <max>. */
void stream_dump_all(struct cli_out *out, int max);
/* Number of live streams. */
int  stream_count(void);

#endif
