/* Server and backend queues. See src/proxy/queue.c for the locking rules. */
#ifndef SLUICE_PROXY_QUEUE_H
#define SLUICE_PROXY_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sluice/core/list.h>

struct server;
struct proxy;
struct task;

struct queue {
	pthread_mutex_t lock;
	struct list head;        /* struct pendconn, oldest first (lock) */
	_Atomic int len;         /* written under lock, read racily */
	_Atomic uint64_t cum;    /* streams that ever queued here */
};

/* A stream's place in a queue. Lives inside the stream. */
struct pendconn {
	struct list link;        /* in queue->head while waiting (queue lock) */
	_Atomic(struct queue *) q; /* queue it waits in; NULL once dequeued (lock) */
	struct server *srv;      /* server whose slot was handed over (lock) */
	struct task *task;       /* stream task to wake */
	uint64_t enq_ms;
};

void queue_init(struct queue *q);

/* Takes a slot on <srv> if it has one free. Returns 1 on success. */
int  srv_take_slot(struct server *srv);

/* Releases the slot held on <srv>: hands it to the oldest waiter of the
 * server's or backend's queue (waking it instantly), or frees it. */
void srv_release_slot(struct server *srv);

/* Queues <p> on <srv> (srv != NULL) or on the backend <be>. May hand a slot
 * over at once when one freed meanwhile: check p->srv afterwards.
 * Returns 0, or -1 if the queue is full (maxqueue). */
int  queue_add(struct pendconn *p, struct proxy *be, struct server *srv);

/* Leaves the queue. Returns the server whose slot was already handed over
 * (the caller owns that slot and must use or release it), or NULL. */
struct server *queue_remove(struct pendconn *p);

/* Hands free slots of <srv> to waiters (after a release, a maxconn raise or
 * a state change). Bounded per call. */
void queue_process(struct server *srv);

/* Effective maxconn of a server (0 = unlimited). */
int  srv_dynamic_maxconn(const struct server *srv);

#endif
