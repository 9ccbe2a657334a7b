/* epoll-based event loop, one per thread.
 *
 * Each thread owns one epoll instance (thread_ctx.epfd) and only registers
 * the descriptors it owns; the one exception is an inherited listening socket
 * (fd@N, unix sockets), registered by every thread with EPOLLEXCLUSIVE so that
 * one connection wakes one thread. A loop iteration: run timers and tasks in
 * bounded batches, pick a timeout (0 if work remains), announce sleep, wait,
 * dispatch I/O callbacks, pick up remote wake-ups.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/poller.h>
#include <sluice/core/sched.h>

/* The descriptor table. An event's data holds either a handle pointer
 * (always 8-aligned, low bit clear) or (fd << 1) | 1. */
struct fd_ent {
	struct poll_handle *h;   /* current owner; NULL while parked */
	uint32_t parked;         /* events that arrived while parked */
	int tid1;                /* 1 + thread whose epoll holds it, 0: none */
};

static struct fd_ent *fdtab;
static int fdtab_size;

int poller_init(void)
{
	struct rlimit rl;
	rlim_t n = 1024;

	if (fdtab)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur;
	if (n > 16u << 20)
		n = 16u << 20;
	/* calloc: pages of descriptors never opened are never touched */
	fdtab = calloc(n, sizeof(*fdtab));
	if (!fdtab)
		return -1;
	fdtab_size = (int)n;
	return 0;
}

int poller_fd_add(struct poll_handle *h, uint32_t events)
{
	struct epoll_event ev = { .events = events };
	int fd = h->fd;

	if (fd < 0 || fd >= fdtab_size) {
		errno = EMFILE;
		return -1;
	}
	ev.data.u64 = ((uint64_t)fd << 1) | 1;
	fdtab[fd].h = h;
	fdtab[fd].parked = 0;
	fdtab[fd].tid1 = th_ctx->tid + 1;
	if (epoll_ctl(th_ctx->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = errno;

		fdtab[fd].h = NULL;
		fdtab[fd].tid1 = 0;
		errno = e;
		return -1;
	}
	return 0;
}

void poller_fd_set_owner(int fd, struct poll_handle *h)
{
	struct fd_ent *e = &fdtab[fd];

	e->h = h;
	if (h && e->parked) {
		uint32_t ev = e->parked;

		e->parked = 0;
		h->cb(h, ev);
	}
}

int poller_fd_is_local(int fd)
{
	return fd >= 0 && fd < fdtab_size && fdtab[fd].tid1 == th_ctx->tid + 1;
}

void poller_fd_del(int fd)
{
	struct epoll_event ev = { 0 };

	epoll_ctl(th_ctx->epfd, EPOLL_CTL_DEL, fd, &ev);
}

void poller_fd_forget(int fd)
{
	if (fd >= 0 && fd < fdtab_size) {
		fdtab[fd].h = NULL;
		fdtab[fd].parked = 0;
		fdtab[fd].tid1 = 0;
	}
}

int poller_add(struct poll_handle *h, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = h };

	return epoll_ctl(th_ctx->epfd, EPOLL_CTL_ADD, h->fd, &ev);
}

int poller_mod(struct poll_handle *h, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = h };

	return epoll_ctl(th_ctx->epfd, EPOLL_CTL_MOD, h->fd, &ev);
}

void poller_del(struct poll_handle *h)
{
	struct epoll_event ev = { 0 };

	epoll_ctl(th_ctx->epfd, EPOLL_CTL_DEL, h->fd, &ev);
}

static void evfd_cb(struct poll_handle *h, uint32_t events)
{
	uint64_t v;

	if (read(h->fd, &v, sizeof(v)) == sizeof(v))
		th_ctx->act.signals_rcvd++;
}

/* Milliseconds to wait: 0 when work is pending, until the next timer
 * otherwise, forever (-1) without timers. There is deliberately no cap:
 * stop requests and remote wake-ups arrive through the eventfd, so a lost
 * wake-up shows as a hang that tests catch, not as hidden latency. */
static int poll_timeout(struct thread_ctx *tc, int busy)
{
	uint64_t next;

	if (busy)
		return 0;
	next = sched_next_expiry(tc);
	if (!next)
		return -1;
	if (next <= tc->now_ms)
		return 0;
	return next - tc->now_ms > 86400000 ? 86400000 : (int)(next - tc->now_ms);
}

static void dispatch(const struct epoll_event *evs, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t d = evs[i].data.u64;
		struct poll_handle *h;

		if (d & 1) {
			struct fd_ent *e = &fdtab[d >> 1];

			h = e->h;
			if (!h) {
				e->parked |= evs[i].events;
				continue;
			}
		} else {
			h = evs[i].data.ptr;
		}
		h->cb(h, evs[i].events);
	}
}

int poller_poll_once(int timeout_ms)
{
	struct epoll_event evs[64];
	int n = epoll_wait(th_ctx->epfd, evs, 64, timeout_ms);

	if (n > 0)
		dispatch(evs, n);
	return n;
}

void poller_loop(void)
{
	struct thread_ctx *tc = th_ctx;
	int maxev = global.maxpollevents > 0 ? global.maxpollevents : 200;
	struct epoll_event *evs = calloc(maxev, sizeof(*evs));
	struct poll_handle evh = { .fd = tc->evfd, .cb = evfd_cb };
	int busy = 1;

	if (!evs || poller_add(&evh, EPOLLIN) < 0)
		abort();

	while (!atomic_load(&global.hard_stop)) {
		int timeout, n;

		tc->now_ms = clock_mono_ms();
		busy = sched_run(tc);
		timeout = poll_timeout(tc, busy);
		if (timeout != 0 && !sched_prepare_sleep(tc))
			timeout = 0;
		if (timeout != 0)
			tc->act.sleeps++;
		atomic_store(&tc->in_poll, 1);
		n = epoll_wait(tc->epfd, evs, maxev, timeout);
		atomic_store(&tc->in_poll, 0);
		if (timeout != 0)
			sched_woke(tc);
		tc->now_ms = clock_mono_ms();
		dispatch(evs, n);
		if (n > 0)
			tc->act.poll_events += n;
		tc->act.loops++;
		/* sequentially consistent, like the in_poll stores: the grace
		 * period of src/core/grace.c relies on both (the same locked
		 * instruction as a relaxed one on x86) */
		atomic_fetch_add(&tc->loop_seq, 1);
	}
	poller_del(&evh);
	free(evs);
}
