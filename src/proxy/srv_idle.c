/* Idle server connections: per-thread lists, no lock (see srv_idle.h).
 *
 * A connection moves between its stream and the pool by value; the poller's
 * descriptor table follows it (conn_move(), no syscall). A pooled connection has a small task of
 * its own, woken by any event on the socket (the server closed it, or sent
 * bytes no request asked for: both end it) and by its purge timer.
 *
 * The descriptor budget (fd_budget.h): an idle connection holds a
 * descriptor that no session owns, so the pools live on what the sessions
 * leave. Above tune.pool-high-fd-ratio nothing is pooled, and above
 * tune.pool-low-fd-ratio a thread keeps one connection per server (as
 * HAProxy 2.6). Each thread also keeps all its idle connections, whatever
 * their server, in one list by age: when descriptors run short, it closes
 * its oldest (fd_budget_reclaim() calls srv_idle_trim()); when it has
 * none, it wakes the trim task of the threads that hold some, which close
 * theirs: a thread never touches another thread's connection.
 */
#include <stdlib.h>
#include <sys/socket.h>
#include <sluice/core/fd_budget.h>
#include <sluice/core/global.h>
#include <sluice/core/list.h>
#include <sluice/core/pool.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_idle.h>

struct srv_idle_list {
	struct list head;   /* struct idle_conn, most recent first */
	int count;
	struct list h2;     /* the thread's HTTP/2 connections to the server
	                     * (mux_h2_back.c), busy or not */
};

struct idle_conn {
	struct list list;    /* in its server's list of the thread */
	struct list by_age;  /* in its thread's list of all idle connections */
	struct conn c;
	struct task *task;
	struct server *srv;
	int reqs;            /* requests it carried: 2 or more makes it "safe" */
	uint64_t pooled_ms;  /* when it entered the pool */
};

/* A thread's idle connections of every server, oldest last. Owner thread
 * only; <count> is stored by the owner and read racily by other threads
 * deciding whom to ask for a trim. */
struct idle_thread {
	struct list by_age;
	_Atomic int count;
	struct task *trim;   /* woken by other threads short of descriptors */
} __attribute__((aligned(64)));

static struct idle_thread idle_thr[MAX_THREADS];

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
		for (int i = 0; i < MAX_THREADS; i++) {
			list_init(&l[i].head);
			list_init(&l[i].h2);
		}
		if (!__atomic_compare_exchange_n(&srv->idle, &exp, l, 0, __ATOMIC_ACQ_REL,
		                                 __ATOMIC_ACQUIRE))
			free(l);
	}
	return &__atomic_load_n(&srv->idle, __ATOMIC_ACQUIRE)[th_ctx->tid];
}

struct list *srv_h2_conns(struct server *srv)
{
	struct srv_idle_list *l = idle_list(srv);

	return l ? &l->h2 : NULL;
}

static void idle_conn_free(struct idle_conn *ic, int close_it)
{
	struct srv_idle_list *l = &ic->srv->idle[th_ctx->tid];
	struct idle_thread *it = &idle_thr[th_ctx->tid];

	list_del_init(&ic->list);
	l->count--;
	list_del_init(&ic->by_age);
	atomic_store_explicit(&it->count, atomic_load_explicit(&it->count, memory_order_relaxed) - 1,
	                      memory_order_relaxed);
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
 * of `pool-max-conn`, or by default its share of the most connections ever
 * in use toward the server at once, plus a few. An idle connection that no
 * request will ever take only holds a local port (connect() then searches
 * longer for a free one) and a descriptor: clients that close after each
 * request (so never reuse under http-reuse safe) must not make the pool
 * grow with the request rate, only up to the concurrency the server saw;
 * and a load that comes in bursts (HTTP/2 clients sending ten requests at
 * once) must find its connections again at the next burst, instead of
 * closing them as the burst ends. The purge delay empties what stays. */
static int idle_cap(const struct server *srv)
{
	int nbt = global.nbthread > 0 ? global.nbthread : 1;
	int peak;

	if (srv->pool_max_conn >= 0)
		return (srv->pool_max_conn + nbt - 1) / nbt;
	peak = atomic_load_explicit(&((struct server *)srv)->used_max, memory_order_relaxed);
	return (peak + nbt - 1) / nbt + 4;
}

/* Whether the descriptor budget leaves room for one more idle connection
 * in <l> (HAProxy 2.6's marks; plus the hard limit, which a high mark set
 * to 100% or a maxconn beyond the limit would not protect). */
static int budget_allows_idle(const struct srv_idle_list *l)
{
	if (fd_budget_above_high() || fd_budget_room() <= 0)
		return 0;
	return !fd_budget_above_low() || l->count == 0;
}

int srv_idle_put(struct server *srv, struct conn *c, int reqs)
{
	struct srv_idle_list *l;
	struct idle_conn *ic;
	struct idle_thread *it = &idle_thr[th_ctx->tid];

	/* a connection that began with a PROXY header names its client: it
	 * is private to that client, as in HAProxy */
	if (srv->pool_max_conn == 0 || srv->send_proxy || !conn_is_open(c) ||
	    (c->flags & (CONN_F_ERROR | CONN_F_HUP | CONN_F_RD_SHUT | CONN_F_WR_SHUT)))
		return -1;
	l = idle_list(srv);
	if (!l || l->count >= idle_cap(srv) || !budget_allows_idle(l))
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
	ic->pooled_ms = th_ctx->now_ms;
	list_insert(&l->head, &ic->list);
	l->count++;
	list_insert(&it->by_age, &ic->by_age);
	atomic_store_explicit(&it->count, atomic_load_explicit(&it->count, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
	atomic_fetch_add(reqs >= 2 ? &srv->safe_conns : &srv->idle_conns, 1);
	task_set_expire(ic->task, th_ctx->now_ms + (uint64_t)(srv->pool_purge_delay > 0 ?
	                                                      srv->pool_purge_delay : 1));
	return 0;
}

int srv_idle_take(struct server *srv, struct conn *dst, struct task *t, int only_safe,
                  int *reqs, uint64_t *idle_ms)
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
		*idle_ms = th_ctx->now_ms - ic->pooled_ms;
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

/* ---- the descriptor budget ---- */

int srv_idle_trim(int n)
{
	struct idle_thread *it = &idle_thr[th_ctx->tid];
	int done = 0;

	while (done < n && !list_empty(&it->by_age)) {
		idle_conn_free(list_elem(it->by_age.prev, struct idle_conn, by_age), 1);
		done++;
	}
	th_ctx->act.fd_trims += (uint64_t)done;
	return done;
}

static int idle_trim_remote(void)
{
	int held = 0;

	for (int i = 0; i < global.nbthread; i++) {
		int n = atomic_load_explicit(&idle_thr[i].count, memory_order_relaxed);

		if (i == th_ctx->tid || n <= 0 || !idle_thr[i].trim)
			continue;
		task_wakeup(idle_thr[i].trim, TASK_WOKEN_OTHER);
		held += n;
	}
	return held;
}

/* What a trim leaves free: more than the one descriptor asked for, so that
 * a burst of connects on the asking thread does not ask again for each. */
static int trim_headroom(void)
{
	return 16 + global.maxsock / 64;
}

/* Another thread is short of descriptors and holds no idle connection. */
static struct task *idle_trim_task(struct task *t, void *ctx, unsigned int state)
{
	while (fd_budget_room() < trim_headroom() && srv_idle_trim(1))
		;
	/* a listener paused on EMFILE waits for this */
	listeners_resume_all();
	return t;
}

static int idle_thread_init(int tid)
{
	struct idle_thread *it = &idle_thr[tid];

	list_init(&it->by_age);
	it->trim = task_new(idle_trim_task, NULL, tid, TC_NORMAL, "idle_trim");
	return it->trim ? 0 : -1;
}

static struct thread_init_hook idle_hook = { .fn = idle_thread_init };

static const struct fd_reclaimer idle_reclaimer = {
	.local = srv_idle_trim,
	.remote = idle_trim_remote,
};

__attribute__((constructor)) static void srv_idle_register(void)
{
	thread_register_init(&idle_hook);
	fd_budget_set_reclaimer(&idle_reclaimer);
}
