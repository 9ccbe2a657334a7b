/* Idle server connections (HTTP keep-alive toward servers, http-reuse).
 *
 * Each thread keeps its own list of idle connections per server: only that
 * thread adds, takes or closes them, so no lock is needed (DESIGN: "each
 * thread owns the connections it accepted"; server connections follow the
 * stream that opened them). An idle connection is closed when the server
 * closes it or sends anything, after the server's pool-purge-delay, or when
 * the descriptor budget needs its descriptor (fd_budget.h).
 */
#ifndef SLUICE_PROXY_SRV_IDLE_H
#define SLUICE_PROXY_SRV_IDLE_H

#include <stdint.h>
#include <sluice/net/conn.h>

struct server;
struct task;

/* Moves the open connection <c> into <srv>'s idle list of the calling
 * thread (<c> is left closed, without closing the socket). <reqs>: the
 * requests it carried; from 2 on it is "safe" (proved it can be reused:
 * http-reuse aggressive, show stat safe_conn_cur), else "idle". Returns 0,
 * or -1 when the pool is full or disabled: <c> is untouched and the caller
 * closes it. */
int  srv_idle_put(struct server *srv, struct conn *c, int reqs);
/* Takes an idle connection of <srv> for the calling thread into <dst>,
 * whose I/O events will wake <t>. <only_safe>: only a safe one. Returns 1
 * with *reqs (requests it carried) and *idle_ms (how long it was pooled)
 * set if one was taken, 0 otherwise. */
int  srv_idle_take(struct server *srv, struct conn *dst, struct task *t, int only_safe,
                   int *reqs, uint64_t *idle_ms);
/* Closes up to <n> idle connections of the calling thread, oldest first,
 * whatever their server (the descriptor budget is short). Returns how many
 * it closed. */
int  srv_idle_trim(int n);
/* The calling thread's list of HTTP/2 connections to <srv> (owned by
 * mux_h2_back.c), or NULL when memory is short. */
struct list *srv_h2_conns(struct server *srv);
/* Idle and safe connections of <srv>, all threads (racy read, display). */
int  srv_idle_count(const struct server *srv);
/* Idle connections of <srv> in each thread's pool, into counts[0..n-1]
 * (threads beyond nbthread get 0). A racy snapshot, for display. */
void srv_idle_per_thread(const struct server *srv, int *counts, int n);

#endif
