/* Traffic counters shared by frontends, backends and servers (the columns of
 * `show stat`). Updated by any thread with relaxed atomics; read racily by
 * the CLI. */
#ifndef SLUICE_PROXY_COUNTERS_H
#define SLUICE_PROXY_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

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
	_Atomic int cur_max;             /* smax */
	_Atomic int queue_max;           /* qmax */
	_Atomic int64_t last_sess;       /* wall-clock seconds, lastsess */
};

#define CNT_ADD(field, n) atomic_fetch_add_explicit(&(field), (n), memory_order_relaxed)
#define CNT_INC(field)    CNT_ADD(field, 1)

/* Raises *max to <v> if larger. */
static inline void cnt_update_max(_Atomic int *max, int v)
{
	int cur = atomic_load_explicit(max, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak(max, &cur, v))
		;
}

#endif
