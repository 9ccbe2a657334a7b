/* Poller descriptor table: events reach the connection that owns the
 * descriptor now (after conn_move), a parked descriptor keeps its events for
 * the next owner (conn_adopt on the same thread), and a descriptor that left
 * another thread's poller is registered afresh (conn_adopt across threads).
 * Driven by hand on socket pairs: poller_poll_once() dispatches, no task
 * runs, so the checks read which task was woken and which flags were set. */
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sluice/core/global.h>
#include <sluice/core/poller.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/net/conn.h>
#include "t.h"

static struct task *noop(struct task *t, void *ctx, unsigned int state)
{
	return t;
}

static int woken_io(struct task *t)
{
	return (atomic_load(&t->state) & TASK_WOKEN_IO) != 0;
}

/* Runs and so clears the woken tasks of the current thread. */
static void drain(void)
{
	sched_run(th_ctx);
}

/* Polls until no event comes for a short while. */
static void poll_all(void)
{
	while (poller_poll_once(20) > 0)
		;
}

static void poke(int peer)
{
	CHECK(write(peer, "x", 1) == 1);
}

static void test_move_and_park(void)
{
	int sp[2];
	struct task *ta = task_new(noop, NULL, 0, TC_NORMAL, "a");
	struct task *tb = task_new(noop, NULL, 0, TC_NORMAL, "b");
	struct task *tc = task_new(noop, NULL, 0, TC_NORMAL, "c");
	struct conn a, b, c;
	char ch;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp) == 0);
	conn_init(&a, ta);
	conn_init(&b, tb);
	conn_init(&c, tc);
	CHECK(conn_attach(&a, sp[0]) == 0);
	CHECK(poller_fd_is_local(sp[0]));
	poll_all();                       /* the initial "writable" edge */
	CHECK(woken_io(ta));
	CHECK(a.flags & CONN_F_WR_READY);
	drain();

	/* moved: input wakes b, not a */
	conn_move(&b, &a, tb);
	CHECK(!conn_is_open(&a));
	CHECK(b.ph.fd == sp[0]);
	poke(sp[1]);
	poll_all();
	CHECK(woken_io(tb));
	CHECK(!woken_io(ta));
	CHECK(b.flags & CONN_F_RD_READY);
	CHECK(read(sp[0], &ch, 1) == 1);
	b.flags &= ~CONN_F_RD_READY;
	drain();

	/* parked: the event is kept, nobody is woken */
	poller_fd_set_owner(sp[0], NULL);
	b.ph.fd = -1;
	poke(sp[1]);
	poll_all();
	CHECK(!woken_io(ta));
	CHECK(!woken_io(tb));
	CHECK(!woken_io(tc));

	/* adopted on the same thread: no new registration, the kept event
	 * reaches c at once, and c starts from the giver's flags */
	CHECK(conn_adopt(&c, sp[0], CONN_F_WR_READY, NULL) == 0);
	CHECK(woken_io(tc));
	CHECK(c.flags & CONN_F_RD_READY);
	CHECK(c.flags & CONN_F_WR_READY);
	CHECK(!woken_io(tb));
	CHECK(read(sp[0], &ch, 1) == 1);
	drain();

	/* after a close, the number reused by another socket belongs to the
	 * new connection only */
	conn_close(&c);
	CHECK(!poller_fd_is_local(sp[0]));
	close(sp[1]);
	task_destroy(ta);
	task_destroy(tb);
	task_destroy(tc);
	drain();
}

static void test_cross_thread(void)
{
	int sp[2];
	struct task *t1 = task_new(noop, NULL, 1, TC_NORMAL, "giver");
	struct task *t0 = task_new(noop, NULL, 0, TC_NORMAL, "taker");
	struct conn giver, taker;
	char ch;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp) == 0);
	conn_init(&giver, t1);
	conn_init(&taker, t0);

	/* registered by thread 1 */
	th_ctx = &thread_ctx[1];
	CHECK(conn_attach(&giver, sp[0]) == 0);
	poll_all();
	atomic_fetch_and(&t1->state, ~TASK_WOKEN_ANY);

	/* handed to thread 0: thread 1 takes it out of its poller */
	poller_fd_del(sp[0]);
	giver.ph.fd = -1;

	th_ctx = &thread_ctx[0];
	CHECK(!poller_fd_is_local(sp[0]));
	CHECK(conn_adopt(&taker, sp[0], CONN_F_WR_READY, NULL) == 0);
	CHECK(poller_fd_is_local(sp[0]));
	poke(sp[1]);
	poll_all();
	CHECK(woken_io(t0));
	CHECK(taker.flags & CONN_F_RD_READY);
	CHECK(read(sp[0], &ch, 1) == 1);

	/* thread 1's poller no longer reports it */
	th_ctx = &thread_ctx[1];
	CHECK(poller_poll_once(20) == 0);
	CHECK(!woken_io(t1));

	th_ctx = &thread_ctx[0];
	drain();
	conn_close(&taker);
	close(sp[1]);
	task_destroy(t0);
	task_destroy(t1);
	drain();
}

int main(void)
{
	global.nbthread = 2;
	if (threads_prepare() < 0) {
		perror("threads_prepare");
		return 1;
	}
	th_ctx = &thread_ctx[0];
	test_move_and_park();
	test_cross_thread();
	return t_done("test_poller");
}
