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
#include <stdlib.h>
#include <unistd.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/poller.h>
#include <sluice/core/sched.h>

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
		for (int i = 0; i < n; i++) {
			struct poll_handle *h = evs[i].data.ptr;

			h->cb(h, evs[i].events);
		}
		if (n > 0)
			tc->act.poll_events += n;
		tc->act.loops++;
		atomic_fetch_add_explicit(&tc->loop_seq, 1, memory_order_relaxed);
	}
	poller_del(&evh);
	free(evs);
}
