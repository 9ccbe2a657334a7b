/* Server and backend queues: handing server slots to waiting streams.
 *
 * Locking and ownership
 * ---------------------
 * - srv->served counts the slots in use on a server. It is only increased by
 *   a compare-and-swap that keeps it <= the server's effective maxconn.
 * - Each queue (server or backend) has its own mutex protecting its list and
 *   the `q`/`srv` fields of the pendconns in it. Lock order: server queue
 *   first, then backend queue. Nothing under a queue lock scales with the
 *   number of queued streams: O(1) list operations and one wake-up.
 * - A pendconn lives in its stream; only the stream's owner thread frees it,
 *   after queue_remove(), which takes the queue lock. The releasing thread
 *   wakes the waiter while still holding that lock, so the waiter cannot be
 *   freed under it.
 *
 * The race between a releaser and a new waiter: the releaser first drops its
 * slot, then looks at the queue lengths; the waiter first makes itself
 * visible in the queue, then tries to take a slot (queue_process). With
 * sequentially consistent atomics, at least one of them sees the other, so a
 * free slot and a waiter never stay apart.
 *
 * Hand-over: the slot moves with the stream. The releaser re-takes the slot
 * by CAS under the locks and gives it to the oldest waiter of the server's
 * or the backend's queue, then wakes that waiter's task with an instant
 * wake-up (elided when the waiter belongs to the releasing thread).
 */
#include <stdlib.h>
#include <sluice/core/sched.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>

/* Slots handed over per call: bounds the work of one release. Streams woken
 * this way release their own slots later, which continues the work. */
#define QUEUE_HANDOVER_BATCH 32

void queue_init(struct queue *q)
{
	pthread_mutex_init(&q->lock, NULL);
	list_init(&q->head);
	atomic_init(&q->len, 0);
}

/* Effective maxconn: with minconn and a backend fullconn, the limit grows
 * with the backend's load, as HAProxy's dynamic limit does. */
int srv_dynamic_maxconn(const struct server *srv)
{
	int maxc = atomic_load_explicit(&((struct server *)srv)->maxconn, memory_order_relaxed);
	const struct proxy *be = srv->be;
	int beconn, dyn;

	if (!srv->minconn || !maxc || !be->fullconn)
		return maxc;
	beconn = atomic_load_explicit(&((struct proxy *)be)->beconn, memory_order_relaxed);
	if (beconn >= be->fullconn)
		return maxc;
	dyn = (int)((long long)maxc * beconn / be->fullconn);
	return dyn < srv->minconn ? srv->minconn : dyn;
}

int srv_take_slot(struct server *srv)
{
	int maxc = srv_dynamic_maxconn(srv);
	int cur = atomic_load(&srv->served);

	if (!maxc) {
		atomic_fetch_add(&srv->served, 1);
		return 1;
	}
	while (cur < maxc) {
		if (atomic_compare_exchange_weak(&srv->served, &cur, cur + 1))
			return 1;
	}
	return 0;
}

static struct pendconn *oldest_waiter(struct queue *a, struct queue *b)
{
	struct pendconn *pa = NULL, *pb = NULL;

	if (!list_empty(&a->head))
		pa = list_elem(a->head.next, struct pendconn, link);
	if (!list_empty(&b->head))
		pb = list_elem(b->head.next, struct pendconn, link);
	if (!pa)
		return pb;
	if (!pb)
		return pa;
	return pb->enq_ms < pa->enq_ms ? pb : pa;
}

void queue_process(struct server *srv)
{
	struct proxy *be = srv->be;
	int handed = 0;

	if (!atomic_load(&srv->queue.len) && !atomic_load(&be->queue.len))
		return;
	pthread_mutex_lock(&srv->queue.lock);
	pthread_mutex_lock(&be->queue.lock);
	while (handed < QUEUE_HANDOVER_BATCH) {
		struct pendconn *p;
		struct queue *from;

		/* the backend queue is for usable servers only; a server in
		 * drain or maint only serves its own queue */
		if (srv_is_usable(srv))
			p = oldest_waiter(&srv->queue, &be->queue);
		else
			p = list_empty(&srv->queue.head) ? NULL :
			    list_elem(srv->queue.head.next, struct pendconn, link);
		if (!p || !srv_take_slot(srv))
			break;
		from = p->q;
		list_del_init(&p->link);
		atomic_fetch_sub(&from->len, 1);
		p->srv = srv;    /* published by the store of q below */
		atomic_store_explicit(&p->q, NULL, memory_order_release);
		task_instant_wakeup(p->task, TASK_WOKEN_QUEUE);
		handed++;
	}
	pthread_mutex_unlock(&be->queue.lock);
	pthread_mutex_unlock(&srv->queue.lock);
}

void srv_release_slot(struct server *srv)
{
	atomic_fetch_sub(&srv->served, 1);
	queue_process(srv);
}

int queue_add(struct pendconn *p, struct proxy *be, struct server *srv)
{
	struct queue *q = srv ? &srv->queue : &be->queue;
	int len;

	pthread_mutex_lock(&q->lock);
	if (srv && srv->maxqueue && atomic_load(&q->len) >= srv->maxqueue) {
		pthread_mutex_unlock(&q->lock);
		return -1;
	}
	p->q = q;
	p->srv = NULL;
	list_append(&q->head, &p->link);
	len = atomic_fetch_add(&q->len, 1) + 1;
	atomic_fetch_add(&q->cum, 1);
	pthread_mutex_unlock(&q->lock);

	cnt_update_max(srv ? &srv->cnt.queue_max : &be->be_cnt.queue_max, len);
	/* a slot may have been freed before we became visible */
	if (srv) {
		queue_process(srv);
	} else {
		for (int i = 0; i < be->nsrv && p->q; i++)
			queue_process(be->srv[i]);
	}
	return 0;
}

struct server *queue_remove(struct pendconn *p)
{
	struct queue *q;
	struct server *srv;

	for (;;) {
		q = atomic_load_explicit(&p->q, memory_order_acquire);
		if (!q)
			break;
		pthread_mutex_lock(&q->lock);
		if (p->q == q) {
			list_del_init(&p->link);
			atomic_fetch_sub(&q->len, 1);
			p->q = NULL;
			pthread_mutex_unlock(&q->lock);
			return NULL;
		}
		/* dequeued or moved meanwhile: look again */
		pthread_mutex_unlock(&q->lock);
	}
	/* dequeued: the hand-over happened under the lock, which we must
	 * pass through once so that the releaser is done with <p> */
	srv = p->srv;
	if (srv) {
		pthread_mutex_lock(&srv->queue.lock);
		pthread_mutex_unlock(&srv->queue.lock);
	}
	return srv;
}
