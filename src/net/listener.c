/* Listeners.
 *
 * Addresses that sluice binds itself get one SO_REUSEPORT socket per thread
 * allowed by the bind line's `thread` set: the kernel spreads connections
 * over them and each thread accepts only on its own socket. Inherited
 * sockets (fd@N) and unix sockets get one shared socket, registered by each
 * allowed thread with EPOLLEXCLUSIVE so that a connection wakes one thread.
 *
 * Ownership: l->ph[i], l->active[i], l->paused[i] and l->fds[i] belong to
 * thread i. nbconn is atomic. A thread that hits a limit (global, frontend
 * or bind maxconn) unregisters its socket and marks it paused; when a
 * connection ends, listener_conn_closed() wakes every thread's resume task
 * (bulk class) if some listener is paused, and each thread re-registers its
 * own sockets once limits allow. Accepts per wake-up are capped by
 * tune.maxaccept, so a flood of connections never makes a loop unbounded.
 *
 * Descriptors: global.actconn is taken by compare-and-swap before accept(),
 * so that threads accepting at once never exceed maxconn (each connection
 * may need two descriptors, counted in maxsock); the CLI counts its own
 * connections against `stats maxconn` the same way. An accept() that finds
 * no descriptor left (EMFILE: idle server connections took the room that
 * maxconn leaves) closes an idle connection of this thread and tries again,
 * or pauses until other threads closed theirs (fd_budget_reclaim()).
 *
 * Frontend admin state (disable/enable/shutdown frontend): the CLI writes
 * fe->fe_state and acts on sockets at the kernel level only (shutdown() to
 * stop listening, listen() to start again: system calls on a descriptor
 * that stays open), under fd_lock, which also covers every close of a
 * per-thread socket and its fds[i] = -1, so that the CLI never acts on a
 * descriptor number being closed and reused. It then wakes every thread's
 * admin task, which unregisters (disabled[i]) or re-registers its own
 * sockets, and closes them after a shutdown. accept_cb() checks the state
 * first, so a socket reported readable meanwhile unregisters itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/fd_budget.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/mworker.h>
#include <sluice/net/addr.h>
#include <sluice/net/listener.h>
#include <sluice/net/unix_sock.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stream.h>

struct list listeners = LIST_HEAD_INIT(listeners);
static _Atomic int nb_paused;                 /* listener/thread pairs paused */
static struct task *resume_task[MAX_THREADS];
static struct task *stop_task[MAX_THREADS];
static struct task *admin_task[MAX_THREADS];
static struct sl_lock fd_lock = SL_LOCK_INIT(LK_OTHER, "listener_fds");
static _Atomic int stop_done;                 /* threads whose soft stop ran */
static _Atomic int sockets_exposed;           /* _getsocks handed them over (-x) */

static int fe_state(const struct listener *l)
{
	return l->fe ? atomic_load_explicit(&l->fe->fe_state, memory_order_relaxed) : PX_FE_READY;
}

/* Closes this thread's own socket of <l>. Owner only. */
static void listener_close_own(struct listener *l, int tid)
{
	if (l->shared_fd >= 0 || l->fds[tid] < 0)
		return;
	lock_take(&fd_lock);
	close(l->fds[tid]);
	l->fds[tid] = -1;
	lock_release(&fd_lock);
	fd_budget_closed();
}

/* Unregisters <l> on this thread because its frontend is disabled or shut
 * down. Owner only. */
static void listener_disable_here(struct listener *l, int tid)
{
	if (l->active[tid])
		poller_del(&l->ph[tid]);
	if (l->paused[tid])
		atomic_fetch_sub(&nb_paused, 1);
	if (l->active[tid] || l->paused[tid])
		l->disabled[tid] = 1;
	l->active[tid] = l->paused[tid] = 0;
	if (fe_state(l) == PX_FE_STOPPED) {
		l->disabled[tid] = 0;   /* for good */
		listener_close_own(l, tid);
	}
}

static int thread_allowed(const struct bind_conf *bc, int tid)
{
	return !bc->thread_mask || (bc->thread_mask & (1ull << tid));
}

static int global_rate_lim(void)
{
	int glim = global.maxconnrate;

	if (global.maxsessrate && (!glim || global.maxsessrate < glim))
		glim = global.maxsessrate;
	return glim;
}

/* Milliseconds until the accept rates (maxconnrate, maxsessrate, the
 * frontend's rate-limit sessions) let <l> accept again: 0 when they do now.
 * Only read when a limit is set: no shared cache line per accept else. */
static uint32_t rate_wait(const struct listener *l)
{
	uint32_t now = (uint32_t)th_ctx->now_ms, w = 0, v;
	int glim = global_rate_lim();

	if (!l->fe)
		return 0;
	if (glim && (v = freq_ctr_wait(&global.conn_rate, 1000, now, (uint32_t)glim)) > w)
		w = v;
	if (l->fe->fe_rate_lim &&
	    (v = freq_ctr_wait(&l->fe->fe_sess_rate, 1000, now, (uint32_t)l->fe->fe_rate_lim)) > w)
		w = v;
	return w;
}


/* With a rate limit: counts the connection about to be accepted in the
 * rates if each stays within its limit (1), else counts nothing (0). A
 * compare-and-swap per counter keeps the limits exact whatever the number
 * of threads accepting. */
static int rate_take(struct listener *l)
{
	uint32_t now = (uint32_t)th_ctx->now_ms;
	int glim = global_rate_lim();

	if (glim && !freq_ctr_try_add(&global.conn_rate, 1000, now, (uint32_t)glim))
		return 0;
	if (!glim)
		freq_ctr_add(&global.conn_rate, 1000, now, 1);
	if (l->fe->fe_rate_lim &&
	    !freq_ctr_try_add(&l->fe->fe_sess_rate, 1000, now, (uint32_t)l->fe->fe_rate_lim)) {
		freq_ctr_undo(&global.conn_rate);
		return 0;
	}
	if (!l->fe->fe_rate_lim)
		freq_ctr_add(&l->fe->fe_sess_rate, 1000, now, 1);
	return 1;
}

static void rate_undo(struct listener *l)
{
	freq_ctr_undo(&global.conn_rate);
	freq_ctr_undo(&l->fe->fe_sess_rate);
}

static int rate_limited(const struct listener *l)
{
	return l->fe && (global.maxconnrate || global.maxsessrate || l->fe->fe_rate_lim);
}

/* One more accepted connection in the rates (<counted>: already, by
 * rate_take()), and the peaks. */
static void rate_count(struct listener *l, int counted)
{
	uint32_t now = (uint32_t)th_ctx->now_ms, r, m;

	if (!l->fe)
		return;
	if (!counted) {
		freq_ctr_add(&global.conn_rate, 1000, now, 1);
		freq_ctr_add(&l->fe->fe_sess_rate, 1000, now, 1);
	}
	/* the peaks of show stat and show info: a read and, rarely, a CAS */
	r = freq_ctr_read(&l->fe->fe_sess_rate, 1000, now);
	m = atomic_load_explicit(&l->fe->fe_sess_rate_max, memory_order_relaxed);
	while (r > m && !atomic_compare_exchange_weak(&l->fe->fe_sess_rate_max, &m, r))
		;
	r = freq_ctr_read(&global.conn_rate, 1000, now);
	m = atomic_load_explicit(&global.conn_rate_max, memory_order_relaxed);
	while (r > m && !atomic_compare_exchange_weak(&global.conn_rate_max, &m, r))
		;
}

static int limits_reached(struct listener *l)
{
	int gmax = atomic_load_explicit(&global.maxconn_rt, memory_order_relaxed);

	if (l->fe) {
		int femax = proxy_fe_maxconn(l->fe);

		if (atomic_load(&global.actconn) >= gmax)
			return 1;
		if (atomic_load(&l->fe->feconn) >= femax)
			return 1;
		if ((global.maxconnrate || global.maxsessrate || l->fe->fe_rate_lim) && rate_wait(l))
			return 1;
	} else if (atomic_load(&global.cli_conns) >= global.stats_maxconn) {
		return 1;
	}
	return l->maxconn && atomic_load(&l->nbconn) >= l->maxconn;
}

/* Takes one of the process's connection slots (actconn for frontends,
 * cli_conns for the CLI) unless all are in use. Returns 1 if taken. */
static int conn_slot_take(const struct listener *l)
{
	_Atomic int *cnt = l->fe ? &global.actconn : &global.cli_conns;
	int max = l->fe ? atomic_load_explicit(&global.maxconn_rt, memory_order_relaxed) :
	          global.stats_maxconn;
	int cur = atomic_load(cnt);

	do {
		if (cur >= max)
			return 0;
	} while (!atomic_compare_exchange_weak(cnt, &cur, cur + 1));
	return 1;
}

static void conn_slot_release(const struct listener *l)
{
	atomic_fetch_sub(l->fe ? &global.actconn : &global.cli_conns, 1);
}

static uint32_t listen_events(const struct listener *l)
{
	return l->shared_fd >= 0 ? EPOLLIN | EPOLLEXCLUSIVE : EPOLLIN;
}

static void listener_pause(struct listener *l, int tid)
{
	if (!l->active[tid])
		return;
	poller_del(&l->ph[tid]);
	l->active[tid] = 0;
	l->paused[tid] = 1;
	atomic_fetch_add(&nb_paused, 1);
}

/* accept() failed for want of a descriptor or of memory. Returns 1 if an
 * idle server connection of this thread was closed (try again), else
 * pauses <l> on this thread: a connection that ends, or another thread
 * done closing idle connections, resumes it. */
static int accept_short_of_fds(struct listener *l, int tid, int err)
{
	if ((err == EMFILE || err == ENFILE) && fd_budget_reclaim(1) == 1)
		return 1;
	listener_pause(l, tid);
	return 0;
}

static void accept_cb(struct poll_handle *h, uint32_t ev)
{
	struct listener *l = h->owner;
	int tid = th_ctx->tid;
	int budget = global.maxaccept > 0 ? global.maxaccept : 64;

	if (fe_state(l) != PX_FE_READY) {
		listener_disable_here(l, tid);
		return;
	}
	while (budget-- > 0) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		int fd, counted;

		if (limits_reached(l) || !conn_slot_take(l)) {
			listener_pause(l, tid);
			/* a connection that ended between the check and the
			 * pause found no listener paused, and woke nobody:
			 * the pause is announced now (nb_paused), so check
			 * again. Either this sees the slot released, or the
			 * closer sees the pause (both sides sequentially
			 * consistent) */
			if (!limits_reached(l))
				task_wakeup(resume_task[tid], TASK_WOKEN_OTHER);
			else if (rate_wait(l))   /* a rate limit: nothing ends it but time */
				task_set_expire(resume_task[tid], th_ctx->now_ms + rate_wait(l));
			return;
		}
		counted = 0;
		if (rate_limited(l)) {
			if (!rate_take(l)) {
				/* the rate is at a limit: nothing ends it but time */
				conn_slot_release(l);
				listener_pause(l, tid);
				task_set_expire(resume_task[tid], th_ctx->now_ms +
				                (rate_wait(l) ? rate_wait(l) : 1));
				return;
			}
			counted = 1;
		}
		fd = accept4(h->fd, (struct sockaddr *)&from, &fl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			int err = errno;

			if (counted)
				rate_undo(l);
			conn_slot_release(l);
			if (err == EINTR || err == ECONNABORTED)
				continue;
			if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
				if (accept_short_of_fds(l, tid, err))
					continue;
			}
			return;
		}
		fd_budget_opened();
		if (fl == 0 || from.ss_family == AF_UNSPEC)
			from.ss_family = AF_UNIX;
		/* as HAProxy: what sluice writes is whole messages or as much as
		 * it has; Nagle would hold a response's last piece until the
		 * client's (delayed) ACK of the previous one */
		if (from.ss_family == AF_INET || from.ss_family == AF_INET6) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
			if (l->bc->tcp_ut_ms)
				setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &l->bc->tcp_ut_ms,
				           sizeof(int));
			if (l->fe) {
				conn_apply_sockopts(fd, &l->fe->cli_so);
				if (l->fe->cli_so.smart)
					setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &(int){ 0 },
					           sizeof(int));
			}
		}
		conn_set_bufs(fd, global.rcvbuf_cli, global.sndbuf_cli);
		th_ctx->act.accepts++;
		atomic_fetch_add(&l->nbconn, 1);
		atomic_fetch_add(&global.cum_conns, 1);
		rate_count(l, counted);
		if (l->on_accept(l, fd, &from) < 0)
			listener_conn_closed(l);
	}
}

/* Bulk task of each thread: re-registers its paused listeners. */
static struct task *resume_process(struct task *t, void *ctx, unsigned int state)
{
	int tid = th_ctx->tid;
	struct list *pos, *tmp;
	uint32_t next = 0;

	list_for_each_safe(pos, tmp, &listeners) {
		struct listener *l = list_elem(pos, struct listener, list);

		if (!l->paused[tid] || l->closed || fe_state(l) != PX_FE_READY)
			continue;
		if (limits_reached(l)) {
			uint32_t w = rate_wait(l);

			/* paused for a rate: try again when it has fallen */
			if (w && (!next || w < next))
				next = w;
			continue;
		}
		if (poller_add(&l->ph[tid], listen_events(l)) == 0) {
			l->paused[tid] = 0;
			l->active[tid] = 1;
			atomic_fetch_sub(&nb_paused, 1);
		}
	}
	task_set_expire(t, next ? th_ctx->now_ms + next : 0);
	return t;
}

void listeners_resume_all(void)
{
	if (atomic_load(&nb_paused) > 0) {
		for (int i = 0; i < global.nbthread; i++)
			if (resume_task[i])
				task_wakeup(resume_task[i], TASK_WOKEN_OTHER);
	}
}

void listener_conn_closed(struct listener *l)
{
	atomic_fetch_sub(&l->nbconn, 1);
	conn_slot_release(l);
	listeners_resume_all();
}

/* A shared socket (inherited, or handed over to the next worker of a
 * master) was just unregistered from this thread's epoll on soft stop.
 * With EPOLLEXCLUSIVE a connection wakes one waiter only: if that waiter
 * was this thread, no other process's epoll was told, and the connection
 * would wait in the queue for the next one. So the queue is emptied here,
 * after the unregistration: a connection that arrives later wakes the
 * processes still polling the socket. Connections taken here are served
 * as usual (up to tune.maxaccept, then the rest is left to the others). */
static void listener_drain_shared(struct listener *l, int tid)
{
	if (fe_state(l) != PX_FE_READY)
		return;
	l->active[tid] = 1;   /* as accept_cb() expects; pausing unregisters */
	l->ph[tid].fd = l->shared_fd;
	accept_cb(&l->ph[tid], EPOLLIN);
	if (l->paused[tid])
		atomic_fetch_sub(&nb_paused, 1);
	l->active[tid] = l->paused[tid] = 0;
}

/* Bulk task of each thread: closes its listening sockets on soft stop. */
static struct listener_stop_hook *stop_hooks;

void listener_register_stop(struct listener_stop_hook *h)
{
	h->next = stop_hooks;
	stop_hooks = h;
}

static struct task *stop_process(struct task *t, void *ctx, unsigned int state)
{
	int tid = th_ctx->tid;
	struct list *pos, *tmp;

	for (struct listener_stop_hook *h = stop_hooks; h; h = h->next)
		h->fn(tid);

	list_for_each_safe(pos, tmp, &listeners) {
		struct listener *l = list_elem(pos, struct listener, list);
		int was_active = l->active[tid];

		/* the CLI stays available while draining, except in a worker
		 * of a master: the new worker answers on the same sockets, and
		 * the master CLI reaches this one (@!pid) */
		if (!l->fe && !global.mworker_child && !atomic_load(&sockets_exposed))
			continue;
		if (l->active[tid])
			poller_del(&l->ph[tid]);
		if (l->paused[tid])
			atomic_fetch_sub(&nb_paused, 1);
		l->active[tid] = l->paused[tid] = l->disabled[tid] = 0;
		if (was_active && l->shared_fd >= 0)
			listener_drain_shared(l, tid);
		listener_close_own(l, tid);
		l->closed = 1;
	}
	atomic_fetch_add(&stop_done, 1);
	return t;
}

void listeners_mark_exposed(void)
{
	atomic_store(&sockets_exposed, 1);
}

int listeners_soft_stop_done(void)
{
	return atomic_load(&stop_done) >= global.nbthread;
}

void listeners_soft_stop(void)
{
	for (int i = 0; i < global.nbthread; i++)
		if (stop_task[i])
			task_wakeup(stop_task[i], TASK_WOKEN_OTHER);
}

/* Bulk task of each thread: applies the frontends' admin states to its
 * own listeners. */
static struct task *admin_process(struct task *t, void *ctx, unsigned int state)
{
	int tid = th_ctx->tid;
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &listeners) {
		struct listener *l = list_elem(pos, struct listener, list);

		if (!l->fe || l->closed)
			continue;
		if (fe_state(l) != PX_FE_READY) {
			listener_disable_here(l, tid);
			continue;
		}
		if (!l->disabled[tid])
			continue;
		l->disabled[tid] = 0;
		if (limits_reached(l) || poller_add(&l->ph[tid], listen_events(l)) < 0) {
			/* a limit (or no room in epoll): the resume task retries */
			l->paused[tid] = 1;
			atomic_fetch_add(&nb_paused, 1);
			task_wakeup(resume_task[tid], TASK_WOKEN_OTHER);
			continue;
		}
		l->active[tid] = 1;
	}
	return t;
}

static int listener_backlog(const struct bind_conf *bc)
{
	return bc->backlog > 0 ? bc->backlog : (bc->maxconn > 0 ? bc->maxconn : 1024);
}

int listeners_fe_set_state(struct proxy *fe, int state, char *err, size_t errlen)
{
	struct list *pos, *tmp;
	int failed = 0;

	/* stopping: the state first, so that a thread woken by a socket shut
	 * down below unregisters it at once (accept_cb()) instead of failing
	 * accept() in a loop; resuming: the state once the sockets listen */
	if (state != PX_FE_READY)
		atomic_store(&fe->fe_state, state);
	lock_take(&fd_lock);
	list_for_each_safe(pos, tmp, &listeners) {
		struct listener *l = list_elem(pos, struct listener, list);

		/* Only the SO_REUSEPORT TCP sockets sluice bound itself stop
		 * listening (a TCP socket without SO_REUSEPORT cannot listen
		 * again). An inherited socket (fd@) is shared with the process
		 * that passed it, and a UNIX socket cannot be made to refuse:
		 * both are only unregistered, their clients wait in the backlog
		 * until the frontend is enabled, as with HAProxy. */
		if (l->fe != fe || l->closed || l->bc->addr.kind != ADDR_INET || l->shared_fd >= 0)
			continue;
		for (int i = 0; i < global.nbthread; i++) {
			int fd = l->fds[i];

			if (fd < 0)
				continue;
			if (state == PX_FE_READY) {
				if (listen(fd, listener_backlog(l->bc)) < 0)
					failed = errno;
			} else {
				shutdown(fd, SHUT_RD);
			}
		}
	}
	lock_release(&fd_lock);
	if (state == PX_FE_READY)
		atomic_store(&fe->fe_state, state);
	for (int i = 0; i < global.nbthread; i++)
		if (admin_task[i])
			task_wakeup(admin_task[i], TASK_WOKEN_OTHER);
	if (failed) {
		snprintf(err, errlen, "%s", strerror(failed));
		return -1;
	}
	return 0;
}

/* Per-thread start-up: create the thread's tasks, register its sockets. */
static int listeners_thread_init(int tid)
{
	struct list *pos, *tmp;

	resume_task[tid] = task_new(resume_process, NULL, tid, TC_BULK, "listener_resume");
	stop_task[tid] = task_new(stop_process, NULL, tid, TC_BULK, "listener_stop");
	admin_task[tid] = task_new(admin_process, NULL, tid, TC_BULK, "listener_admin");
	if (!resume_task[tid] || !stop_task[tid] || !admin_task[tid])
		return -1;
	list_for_each_safe(pos, tmp, &listeners) {
		struct listener *l = list_elem(pos, struct listener, list);
		int fd = l->shared_fd >= 0 ? l->shared_fd : l->fds[tid];

		if (fd < 0 || !thread_allowed(l->bc, tid))
			continue;
		l->ph[tid].fd = fd;
		l->ph[tid].cb = accept_cb;
		l->ph[tid].owner = l;
		if (poller_add(&l->ph[tid], listen_events(l)) < 0)
			return -1;
		l->active[tid] = 1;
	}
	return 0;
}

static struct thread_init_hook listeners_hook = { .fn = listeners_thread_init };

__attribute__((constructor)) static void listeners_register(void)
{
	thread_register_init(&listeners_hook);
}

/* ---- binding ---- */

static int bind_one_socket(const struct bind_conf *bc, int reuseport, char *err, size_t errlen)
{
	const struct sl_addr *a = &bc->addr;
	int fd, one = 1;
	int backlog = bc->backlog > 0 ? bc->backlog :
	              bc->fe && bc->fe->backlog > 0 ? bc->fe->backlog :
	              (bc->maxconn > 0 ? bc->maxconn : 1024);

	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create socket: %s", strerror(errno));
		return -1;
	}
	if (a->kind == ADDR_INET) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (reuseport)
			setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
		/* as HAProxy: the system's default unless v6only / v4v6 */
		if (a->ss.ss_family == AF_INET6 && (bc->v6only || bc->v4v6)) {
			int v6only = bc->v6only;

			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
		}
	}
	if (a->kind == ADDR_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *)&a->ss;

		struct stat st;

		/* a stale socket from a previous run goes; anything else at that
		 * path stays, and bind() reports it */
		if (lstat(un->sun_path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(un->sun_path);
	}
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0) {
		snprintf(err, errlen, "cannot bind socket (%s) for [%s]", strerror(errno),
		         bc->addr_str);
		close(fd);
		return -1;
	}
	if (a->kind == ADDR_UNIX &&
	    unix_sock_apply(bc, ((const struct sockaddr_un *)&a->ss)->sun_path, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	if (a->kind == ADDR_INET) {
		if (bc->tfo)
			setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN, &backlog, sizeof(backlog));
		if (bc->defer_accept)
			setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof(one));
		if (bc->mss)
			setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &bc->mss, sizeof(bc->mss));
	}
	if (listen(fd, backlog) < 0) {
		snprintf(err, errlen, "cannot listen on [%s]: %s", bc->addr_str, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int adopt_inherited(const struct bind_conf *bc, char *err, size_t errlen)
{
	int fd = bc->addr.fd, acc = 0;
	socklen_t l = sizeof(acc);

	if (fcntl(fd, F_GETFD) < 0) {
		snprintf(err, errlen, "inherited descriptor fd@%d is not open", fd);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) < 0 || !acc) {
		snprintf(err, errlen, "inherited descriptor fd@%d is not a listening socket", fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

void listener_key(const struct bind_conf *bc, char *buf, size_t len)
{
	char a[300];

	addr_full_str(&bc->addr, a, sizeof(a));
	snprintf(buf, len, "%s|%s|v6only=%d|v4v6=%d", bc->is_cli ? "cli" : bc->on_accept ? "peers" :
	         "fe", a,
	         bc->v6only, bc->v4v6);
}

/* A worker of a master: the socket the master holds for <bc>'s address,
 * as the previous worker left it. What may differ between the two
 * configurations is applied again (backlog, permissions, TCP options);
 * what cannot (the address, v6only) is in the key. Returns the socket,
 * or -1 to bind a new one. */
static int adopt_handed_over(const struct bind_conf *bc)
{
	char key[400];
	int fd;

	if (bc->addr.kind == ADDR_FD)
		return -1;
	listener_key(bc, key, sizeof(key));
	fd = mworker_take_listener(key);
	if (fd < 0)
		return -1;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (bc->addr.kind == ADDR_UNIX)
		unix_sock_apply(bc, ((const struct sockaddr_un *)&bc->addr.ss)->sun_path, NULL, 0);
	if (bc->addr.kind == ADDR_INET) {
		setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &(int){ bc->defer_accept ? 1 : 0 },
		           sizeof(int));
		if (bc->mss)
			setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &bc->mss, sizeof(bc->mss));
	}
	/* listen() again on a listening socket only sets its backlog: the
	 * queue and the connections in it stay */
	listen(fd, bc->backlog > 0 ? bc->backlog : bc->fe && bc->fe->backlog > 0 ?
	       bc->fe->backlog : (bc->maxconn > 0 ? bc->maxconn : 1024));
	return fd;
}

int listeners_for_each_socket(int (*fn)(const char *key, int fd, void *arg), void *arg)
{
	struct list *pos, *tmp;
	char key[400];
	int ret = 0;

	/* fd_lock: a per-thread socket is not closed meanwhile (soft stop) */
	lock_take(&fd_lock);
	list_for_each_safe(pos, tmp, &listeners) {
		struct listener *l = list_elem(pos, struct listener, list);

		if (l->bc->addr.kind == ADDR_FD || l->closed)
			continue;
		listener_key(l->bc, key, sizeof(key));
		if (l->shared_fd >= 0) {
			if (fn(key, l->shared_fd, arg) < 0)
				ret = -1;
			continue;
		}
		for (int i = 0; i < global.nbthread && !ret; i++)
			if (l->fds[i] >= 0 && fn(key, l->fds[i], arg) < 0)
				ret = -1;
	}
	lock_release(&fd_lock);
	return ret;
}

static int listener_create(struct bind_conf *bc)
{
	char err[256] = "";
	int failed = 0;
	struct listener *l = calloc(1, sizeof(*l));

	if (!l)
		return 1;
	l->bc = bc;
	l->fe = bc->is_cli ? NULL : bc->fe;
	l->on_accept = bc->on_accept ? bc->on_accept : bc->is_cli ? cli_accept : stream_accept;
	l->maxconn = bc->maxconn;
	l->shared_fd = -1;
	for (int i = 0; i < MAX_THREADS; i++)
		l->fds[i] = -1;
	bc->lst = l;

	if (bc->addr.kind == ADDR_FD) {
		l->shared_fd = adopt_inherited(bc, err, sizeof(err));
	} else if ((bc->addr.kind != ADDR_INET || global.noreuseport || global.mworker_child) &&
	           (l->shared_fd = adopt_handed_over(bc)) >= 0) {
		/* the socket the previous worker listened on, from the master,
		 * or from the old process (-x) */
	} else if (bc->addr.kind != ADDR_INET || global.noreuseport || global.mworker_child) {
		/* one socket that every thread polls (EPOLLEXCLUSIVE) */
		l->shared_fd = bind_one_socket(bc, 0, err, sizeof(err));
	} else {
		for (int i = 0; i < global.nbthread; i++) {
			if (!thread_allowed(bc, i))
				continue;
			/* -x: the old process's sockets of this address first */
			l->fds[i] = adopt_handed_over(bc);
			if (l->fds[i] >= 0)
				continue;
			l->fds[i] = bind_one_socket(bc, 1, err, sizeof(err));
			if (l->fds[i] < 0) {
				failed = 1;
				break;
			}
		}
	}
	if ((bc->addr.kind != ADDR_INET || global.noreuseport || global.mworker_child) &&
	    l->shared_fd < 0)
		failed = 1;
	if (failed) {
		cfg_alert(bc->file, bc->line, "%s '%s': %s.",
		          bc->owner ? bc->owner : bc->is_cli ? "stats socket" : "proxy",
		          bc->is_cli || !bc->fe ? bc->addr_str : bc->fe->name, err);
		return 1;
	}
	list_append(&listeners, &l->list);
	return 0;
}

/* The sockets listener_create() will open (or adopt) for <bc>: one per
 * allowed thread for an address sluice binds (SO_REUSEPORT), else one. */
static int bind_conf_sockets(const struct bind_conf *bc)
{
	int n = 0;

	if (bc->addr.kind != ADDR_INET || global.noreuseport || global.mworker_child)
		return 1;
	for (int i = 0; i < global.nbthread; i++)
		n += thread_allowed(bc, i);
	return n;
}

#define MAX_EXTRA_BINDS 64
static struct list *extra_binds[MAX_EXTRA_BINDS];
static int nb_extra_binds;

void listener_register_binds(struct list *binds)
{
	if (nb_extra_binds < MAX_EXTRA_BINDS)
		extra_binds[nb_extra_binds++] = binds;
}

void listener_unregister_binds(struct list *binds)
{
	for (int i = 0; i < nb_extra_binds; i++) {
		if (extra_binds[i] == binds) {
			extra_binds[i] = extra_binds[--nb_extra_binds];
			return;
		}
	}
}

int listeners_count_sockets(void)
{
	struct list *pos, *tmp, *bpos, *btmp;
	int n = 0;

	for (int i = 0; i < nb_extra_binds; i++)
		list_for_each_safe(bpos, btmp, extra_binds[i])
			n += bind_conf_sockets(list_elem(bpos, struct bind_conf, list));
	list_for_each_safe(bpos, btmp, &cli_binds)
		n += bind_conf_sockets(list_elem(bpos, struct bind_conf, list));
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!(px->cap & PX_CAP_FE) || px->disabled)
			continue;
		list_for_each_safe(bpos, btmp, &px->binds)
			n += bind_conf_sockets(list_elem(bpos, struct bind_conf, list));
	}
	return n;
}

int listeners_bind_all(void)
{
	struct list *pos, *tmp, *bpos, *btmp;
	int errors = 0;

	list_for_each_safe(bpos, btmp, &cli_binds)
		errors += listener_create(list_elem(bpos, struct bind_conf, list));
	for (int i = 0; i < nb_extra_binds; i++)
		list_for_each_safe(bpos, btmp, extra_binds[i])
			errors += listener_create(list_elem(bpos, struct bind_conf, list));
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!(px->cap & PX_CAP_FE) || px->disabled)
			continue;
		list_for_each_safe(bpos, btmp, &px->binds) {
			struct bind_conf *bc = list_elem(bpos, struct bind_conf, list);
			uint64_t all = global.nbthread >= 64 ? ~0ull : (1ull << global.nbthread) - 1;

			if (bc->thread_mask && !(bc->thread_mask & all)) {
				cfg_alert(bc->file, bc->line, "'bind %s': 'thread' names no thread "
				          "among the %d started (nbthread).", bc->addr_str,
				          global.nbthread);
				errors++;
				continue;
			}
			errors += listener_create(bc);
		}
	}
	return errors;
}
