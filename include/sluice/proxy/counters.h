/* Traffic counters shared by frontends, backends and servers (the columns of
 * `show stat`). Updated by any thread with relaxed atomics; read racily by
 * the CLI. */
#ifndef SLUICE_PROXY_COUNTERS_H
#define SLUICE_PROXY_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>
#include <sluice/core/freq.h>
#include <sluice/net/conn_counters.h>

struct counters {
	_Atomic uint64_t cum_sess;       /* stot */
	_Atomic uint64_t cum_conn;       /* conn_tot (frontends) */
	_Atomic uint64_t bytes_in;       /* bin */
	_Atomic uint64_t bytes_out;      /* bout */
	_Atomic uint64_t denied_req;     /* dreq */
	_Atomic uint64_t failed_req;     /* ereq */
	_Atomic uint64_t failed_conns;   /* econ */
	_Atomic uint64_t failed_resp;    /* eresp */
	_Atomic uint64_t retries;        /* wretr */
	_Atomic uint64_t redispatches;   /* wredis */
	_Atomic uint64_t cli_aborts;     /* cli_abrt */
	_Atomic uint64_t srv_aborts;     /* srv_abrt */
	_Atomic uint64_t cum_req;        /* req_tot: HTTP requests */
	_Atomic uint64_t hrsp[6];        /* hrsp_1xx..hrsp_5xx, hrsp_other */
	_Atomic uint64_t intercepted;    /* intercepted: answered by sluice itself */
	_Atomic uint64_t denied_resp;    /* dresp */
	_Atomic uint64_t failed_rewrites; /* wrew */
	_Atomic uint64_t internal_errors; /* eint */
	_Atomic uint64_t reuse;          /* reuse: requests sent on a reused connection */
	_Atomic uint64_t connect;        /* connect: new server connections */
	_Atomic uint64_t comp_in;        /* comp_in: response bytes given to the compressor */
	_Atomic uint64_t comp_out;       /* comp_out: bytes it gave out */
	_Atomic uint64_t comp_byp;       /* comp_byp: always 0, as HAProxy 2.6 shows it */
	_Atomic uint64_t comp_rsp;       /* comp_rsp: responses compressed */
	_Atomic uint64_t cache_lookups;  /* cache_lookups: cache-use rules run */
	_Atomic uint64_t cache_hits;     /* cache_hits: of which served from the cache */
	/* per second, on the loop clock (src/core/freq.c): sessions of a
	 * backend or a server (rate, be_sess_rate, srv_sess_rate), HTTP
	 * requests of a frontend (req_rate, fe_req_rate), and their maxima */
	struct freq_ctr sess_rate;
	struct freq_ctr req_rate;
	_Atomic uint32_t sess_rate_max;
	_Atomic uint32_t req_rate_max;
	_Atomic int cur_max;             /* smax */
	_Atomic int queue_max;           /* qmax */
	_Atomic int64_t last_sess;       /* wall-clock seconds, lastsess */
};

/* HAProxy 2.6's stats modules ssl, h2 and h1: the `show stat` columns
 * after "-". A proxy has a set for its frontend side (client connections)
 * and one for its backend side (server connections); a server has the ssl
 * counters only. Same rules as struct counters; the open_* fields are
 * gauges, up when a connection or stream opens, down when it ends. */
struct ssl_counters {
	_Atomic uint64_t sess;             /* ssl_sess: full handshakes */
	_Atomic uint64_t reused_sess;      /* ssl_reused_sess: resumed ones */
	_Atomic uint64_t failed_handshake; /* ssl_failed_handshake */
};

struct h2_counters {
	/* frames received, and errors found in them: added from each
	 * connection's h2c counters (h2c_stats_take()) after each of its runs */
	_Atomic uint64_t headers_rcvd;     /* HEADERS frames */
	_Atomic uint64_t data_rcvd;        /* DATA frames */
	_Atomic uint64_t settings_rcvd;    /* SETTINGS frames, ACKs included */
	_Atomic uint64_t rst_stream_rcvd;
	_Atomic uint64_t goaway_rcvd;
	_Atomic uint64_t conn_proto_err;   /* connection errors found */
	_Atomic uint64_t strm_proto_err;   /* stream errors found */
	_Atomic uint64_t rst_stream_resp;  /* RST_STREAM sent for an error found */
	_Atomic uint64_t goaway_resp;      /* GOAWAY sent with an error code */
	_Atomic int64_t open_conns;
	_Atomic int64_t open_streams;
	_Atomic uint64_t total_conns;
	_Atomic uint64_t total_streams;
};

struct h1_counters {
	struct conn_counters conn;         /* open connections, bytes in and out
	                                    * (kept by the connection layer) */
	_Atomic int64_t open_streams;      /* requests (transactions) under way */
	_Atomic uint64_t total_conns;
	_Atomic uint64_t total_streams;
};

struct mux_counters {
	struct ssl_counters ssl;
	struct h2_counters h2;
	struct h1_counters h1;
};

#define CNT_ADD(field, n) atomic_fetch_add_explicit(&(field), (n), memory_order_relaxed)
#define CNT_INC(field)    CNT_ADD(field, 1)
#define CNT_DEC(field)    atomic_fetch_sub_explicit(&(field), 1, memory_order_relaxed)

/* One event in the per-second counter <f> at <now> (ms of the loop clock),
 * keeping in <max> the highest rate seen. */
static inline void cnt_rate_add(struct freq_ctr *f, _Atomic uint32_t *max, uint64_t now)
{
	uint32_t r, m;

	freq_ctr_add(f, 1000, (uint32_t)now, 1);
	r = freq_ctr_read(f, 1000, (uint32_t)now);
	m = atomic_load_explicit(max, memory_order_relaxed);
	while (r > m && !atomic_compare_exchange_weak_explicit(max, &m, r, memory_order_relaxed,
	                                                       memory_order_relaxed))
		;
}

/* An HTTP request of a frontend: req_tot and req_rate. */
static inline void cnt_fe_req(struct counters *c, uint64_t now)
{
	CNT_INC(c->cum_req);
	cnt_rate_add(&c->req_rate, &c->req_rate_max, now);
}

/* Raises *max to <v> if larger. */
static inline void cnt_update_max(_Atomic int *max, int v)
{
	int cur = atomic_load_explicit(max, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak(max, &cur, v))
		;
}

#endif
