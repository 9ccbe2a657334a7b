/* Idle server connections: per-thread lists, no lock (see srv_idle.h).
 *
 * A connection moves between its stream and the pool by value; the poller's
 * descriptor table follows it (conn_move(), no syscall). A pooled connection has a small task of
 * its own, woken by any event on the socket (the server closed it, or sent
 * bytes no request asked for: both end it) and by its purge timer.
 */
#include <stdlib.h>
#include <sys/socket.h>
#include <sluice/core/global.h>
#include <sluice/core/list.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_idle.h>

struct srv_idle_list {
	struct list head;   /* struct idle_conn, most recent first */
	int count;
};

struct idle_conn {
	struct list list;
	struct conn c;
	struct task *task;
	struct server *srv;
	int reqs;            /* requests it carried: 2 or more makes it "safe" */
};

/* from a pool: after a flood, thousands of them go at once when their
 * purge delay ends, and the pools return that memory (pool.c) */
static POOL_DECLARE(pool_idle_conn, "idle_conn", struct idle_conn)

static struct srv_idle_list *idle_list(struct server *srv)
{
	if (!srv->idle) {
		/* configuration is over; the first thread to pool a connection
		 * of this server allocates the lists of every thread */
		struct srv_idle_list *l = calloc(MAX_THREADS, sizeof(*l)), *exp = NULL;

		if (!l)
			return NULL;
		for (int i = 0; i < MAX_THREADS; i++)
			list_init(&l[i].head);
		if (!__atomic_compare_exchange_n(&srv->idle, &exp, l, 0, __ATOMIC_ACQ_REL,
		                                 __ATOMIC_ACQUIRE))
			free(l);
	}
	return &__atomic_load_n(&srv->idle, __ATOMIC_ACQUIRE)[th_ctx->tid];
}

static void idle_conn_free(struct idle_conn *ic, int close_it)
{
	struct srv_idle_list *l = &ic->srv->idle[th_ctx->tid];

	list_del_init(&ic->list);
	l->count--;
	atomic_fetch_sub(ic->reqs >= 2 ? &ic->srv->safe_conns : &ic->srv->idle_conns, 1);
	if (close_it)
		conn_close(&ic->c);
	task_destroy(ic->task);
	pool_free(&pool_idle_conn, ic);
}

static struct task *idle_conn_task(struct task *t, void *ctx, unsigned int state)
{
	struct idle_conn *ic = ctx;

	/* input, a hang-up or the purge timer: the connection is no longer
	 * usable. It stays registered for output too (moving it in and out
	 * of the pool costs no syscall that way): room to write is no news */
	if (!(state & TASK_WOKEN_TIMER) &&
	    !(ic->c.flags & (CONN_F_RD_READY | CONN_F_RDHUP | CONN_F_HUP | CONN_F_ERROR)))
		return t;
	idle_conn_free(ic, 1);
	return NULL;
}

/* How many idle connections of <srv> the calling thread may keep: its share
 * of `pool-max-conn`, or by default its share of the connections in use
 * toward the server now plus a few. An idle connection that no request
 * will ever take only holds a local port (connect() then searches longer
 * for a free one) and a descriptor: clients that close after each request
 * (so never reuse under http-reuse safe) must not make the pool grow with
 * the request rate. */
static int idle_cap(const struct server *srv)
{
	int nbt = global.nbthread > 0 ? global.nbthread : 1;

	if (srv->pool_max_conn >= 0)
		return (srv->pool_max_conn + nbt - 1) / nbt;
	return (atomic_load(&((struct server *)srv)->used_conns) + nbt - 1) / nbt + 4;
}

int srv_idle_put(struct server *srv, struct conn *c, int reqs)
{
	struct srv_idle_list *l;
	struct idle_conn *ic;

	/* a connection that began with a PROXY header names its client: it
	 * is private to that client, as in HAProxy */
	if (srv->pool_max_conn == 0 || srv->send_proxy || !conn_is_open(c) ||
	    (c->flags & (CONN_F_ERROR | CONN_F_HUP | CONN_F_RD_SHUT | CONN_F_WR_SHUT)))
		return -1;
	l = idle_list(srv);
	if (!l || l->count >= idle_cap(srv))
		return -1;
	ic = pool_zalloc(&pool_idle_conn);
	if (!ic)
		return -1;
	ic->task = task_new(idle_conn_task, ic, th_ctx->tid, TC_BULK, "idle_conn");
	if (!ic->task) {
		pool_free(&pool_idle_conn, ic);
		return -1;
	}
	conn_move(&ic->c, c, ic->task);
	/* input may be waiting whose edge was already reported (a response
	 * that filled the buffer exactly): no event would come for it, and
	 * srv_idle_take() skips such a connection; let its task end it */
	if (ic->c.flags & CONN_F_RD_READY)
		task_wakeup(ic->task, TASK_WOKEN_IO);
	ic->srv = srv;
	ic->reqs = reqs;
	list_insert(&l->head, &ic->list);
	l->count++;
	atomic_fetch_add(reqs >= 2 ? &srv->safe_conns : &srv->idle_conns, 1);
	task_set_expire(ic->task, th_ctx->now_ms + (uint64_t)(srv->pool_purge_delay > 0 ?
	                                                      srv->pool_purge_delay : 1));
	return 0;
}

int srv_idle_take(struct server *srv, struct conn *dst, struct task *t, int only_safe,
                  int *reqs)
{
	struct srv_idle_list *l;
	struct list *pos;

	if (!__atomic_load_n(&srv->idle, __ATOMIC_ACQUIRE))
		return 0;
	l = &srv->idle[th_ctx->tid];
	for (pos = l->head.next; pos != &l->head; pos = pos->next) {
		struct idle_conn *ic = list_elem(pos, struct idle_conn, list);

		if (only_safe && ic->reqs < 2)
			continue;
		if (ic->c.flags & (CONN_F_RD_READY | CONN_F_HUP | CONN_F_ERROR)) {
			/* its task will close it */
			continue;
		}
		conn_move(dst, &ic->c, t);
		*reqs = ic->reqs;
		idle_conn_free(ic, 0);
		return 1;
	}
	return 0;
}

int srv_idle_count(const struct server *srv)
{
	struct server *sv = (struct server *)srv;

	return atomic_load(&sv->idle_conns) + atomic_load(&sv->safe_conns);
}

void srv_idle_per_thread(const struct server *srv, int *counts, int n)
{
	struct srv_idle_list *l = __atomic_load_n(&((struct server *)srv)->idle, __ATOMIC_ACQUIRE);

	for (int i = 0; i < n; i++)
		counts[i] = l && i < global.nbthread ?
		            __atomic_load_n(&l[i].count, __ATOMIC_RELAXED) : 0;
}
