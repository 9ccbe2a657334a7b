/* Grace periods (src/core/grace.c): an object unpublished by an atomic
 * exchange is freed only once every thread has left the loop iteration it
 * was in, and then it is freed.
 *
 * Two reader threads play worker loops: each iteration loads the published
 * object and reads it for a while (its marker must say "alive"), then
 * counts the iteration (loop_seq), and now and then "sleeps in epoll"
 * (in_poll). The main thread plays thread 1: it publishes new objects,
 * hands the old ones to grace_defer(), and calls grace_reclaim(), whose
 * callback marks an object dead before freeing it. A reader that ever sees
 * a dead or freed object (ASan: a use after free) fails the test. A reader
 * that stops looping holds back every object retired after it stopped. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sluice/core/global.h>
#include <sluice/core/grace.h>
#include <sluice/core/sched.h>
#include "t.h"

#define ALIVE 0x600dcafeu
#define DEAD  0xdeadbeefu
#define NREADERS 2

struct obj {
	_Atomic unsigned int marker;
	unsigned int payload[64];
};

static struct obj *_Atomic published;
static _Atomic int stop, bad_reads, frozen_reader = -1;
static _Atomic long freed, reads;

static void obj_free(void *p)
{
	struct obj *o = p;

	atomic_store(&o->marker, DEAD);
	free(o);
	atomic_fetch_add(&freed, 1);
}

static struct obj *obj_new(void)
{
	struct obj *o = calloc(1, sizeof(*o));

	atomic_store(&o->marker, ALIVE);
	return o;
}

static void *reader(void *arg)
{
	struct thread_ctx *tc = arg;
	unsigned int n = 0;

	while (!atomic_load(&stop)) {
		if (atomic_load(&frozen_reader) == tc->tid) {
			usleep(100);   /* stuck "inside an iteration": no progress */
			continue;
		}
		struct obj *o = atomic_load(&published);

		/* read it for a while, as a handshake reads a table */
		for (int i = 0; i < 200; i++) {
			if (atomic_load(&o->marker) != ALIVE)
				atomic_fetch_add(&bad_reads, 1);
			n += o->payload[i % 64];
		}
		atomic_fetch_add(&reads, 1);
		if ((n++ & 63) == 0) {
			atomic_store(&tc->in_poll, 1);
			usleep(50);
			atomic_store(&tc->in_poll, 0);
		}
		atomic_fetch_add(&tc->loop_seq, 1);
	}
	return NULL;
}

static void swap_once(void)
{
	struct obj *old = atomic_exchange(&published, obj_new());

	CHECK(grace_defer(obj_free, old) == 0);
}

int main(void)
{
	pthread_t th[NREADERS];
	long retired = 0;
	int left;

	/* outside the worker threads, the callback runs at once */
	{
		struct obj *o = obj_new();

		grace_defer(obj_free, o);
		CHECK(atomic_load(&freed) == 1);
	}

	global.nbthread = 1 + NREADERS;
	for (int i = 0; i < global.nbthread; i++)
		thread_ctx[i].tid = i;
	th_ctx = &thread_ctx[0];
	atomic_store(&published, obj_new());
	for (int i = 0; i < NREADERS; i++)
		pthread_create(&th[i], NULL, reader, &thread_ctx[1 + i]);

	/* swaps while the readers run: everything is freed, no dead read */
	while (atomic_load(&reads) < 100)
		usleep(100);
	for (int i = 0; i < 3000; i++) {
		swap_once();
		retired++;
		if (i % 10 == 0)
			grace_reclaim();
		if (i % 100 == 0)
			usleep(1000);   /* the readers get the CPU on a small host */
	}
	for (int i = 0; i < 2000 && grace_reclaim(); i++)
		usleep(1000);
	CHECK(grace_reclaim() == 0);
	CHECK(atomic_load(&freed) == retired + 1);

	/* a reader stuck in one iteration holds everything back... */
	atomic_store(&frozen_reader, 1);
	usleep(10000);
	for (int i = 0; i < 20; i++) {
		swap_once();
		retired++;
	}
	usleep(20000);
	left = grace_reclaim();
	CHECK(left == 20);
	{
		int pending;
		uint64_t done;

		grace_stats(&pending, &done);
		CHECK(pending == 20);
		CHECK(done == (uint64_t)retired - 20);
	}
	/* ...until it moves again */
	atomic_store(&frozen_reader, -1);
	for (int i = 0; i < 2000 && grace_reclaim(); i++)
		usleep(1000);
	CHECK(grace_reclaim() == 0);
	CHECK(atomic_load(&freed) == retired + 1);

	atomic_store(&stop, 1);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(th[i], NULL);
	CHECK(atomic_load(&bad_reads) == 0);
	CHECK(atomic_load(&reads) > 1000);

	/* at exit, whatever waits is run */
	swap_once();
	retired++;
	grace_flush();
	CHECK(atomic_load(&freed) == retired + 1);
	free(atomic_load(&published));
	return t_done("test_grace");
}
