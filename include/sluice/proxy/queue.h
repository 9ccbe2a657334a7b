/* Server and backend queues. See src/proxy/queue.c for the locking rules. */
#ifndef SLUICE_PROXY_QUEUE_H
#define SLUICE_PROXY_QUEUE_H

#include <stdatomic.h>
#include <stdint.h>
#include <sluice/core/hist.h>
#include <sluice/core/list.h>
#include <sluice/core/lock.h>

struct server;
struct proxy;
struct task;

/* Priority range of `set-priority-class` and `set-priority-offset` (ms). */
#define QUEUE_PRIO_CLASS_MAX   2047
#define QUEUE_PRIO_OFFSET_MAX  524287

/* Node of a queue's priority tree (red-black, intrusive). */
struct pq_node {
	struct pq_node *parent, *left, *right;
	int red;
};

struct queue {
	struct sl_lock lock;
	struct list fifo;        /* waiters of default priority, by key (lock) */
	struct pq_node *root;    /* other waiters, by (class, key_ms, seq) (lock) */
	struct pq_node *first;   /* the tree's best, NULL if empty (lock) */
	struct pq_node *last;    /* the tree's last (lock) */
	struct list tree_arrivals; /* the tree's waiters, by entry (lock) */
	int64_t clock_ms;        /* latest arrival date given (lock) */
	uint64_t seq;            /* next entry number (lock) */
	uint64_t idx;            /* departures so far (lock) */
	_Atomic int len;         /* written under lock, read racily */
	_Atomic uint64_t cum;    /* streams that ever queued here */
	struct hist wait_hist;   /* us from queueing to a slot, of the streams
	                          * that left this queue with one (atomic adds) */
};

/* Times of the sessions a server or backend served, for `show stat`: the
 * averages over the last 1024 sessions and the maxima of HAProxy's qtime,
 * ctime and ttime, kept in microseconds (shown in ms). Recorded by the
 * stream's owner at the end of every session that reached a server. */
struct time_avgs {
	struct swrate qtime;     /* queue wait, 0 for sessions that did not queue */
	struct swrate ctime;     /* from the slot to the established connection */
	struct swrate ttime;     /* from accept to the end of the session */
};

/* A stream's place in a queue. Lives inside the stream. */
struct pendconn {
	struct list link;        /* in q->fifo or q->tree_arrivals (queue lock) */
	struct pq_node node;     /* in q's tree if in_tree (queue lock) */
	int in_tree;             /* (queue lock) */
	_Atomic(struct queue *) q; /* queue it waits in; NULL once dequeued (lock) */
	struct server *srv;      /* server whose slot was handed over (lock) */
	struct queue *left_from; /* queue it left with that slot (lock) */
	struct task *task;       /* stream task to wake */
	/* set by the stream's owner before queue_add(), read-only while queued
	 * (the stream keeps its own copy, which rules may change any time) */
	int prio_class;          /* -2047..2047, lower is served first */
	int take_conn;           /* may take the releaser's idle server connection
	                          * with the slot: 0 no, 1 yes, 2 only a "safe" one
	                          * (that carried 2 requests or more) */
	int prio_offset_ms;      /* -524287..524287, added to the arrival date */
	/* written by queue_add() and the hand-over, under the queue lock */
	int64_t key_ms;          /* arrival (loop date, ms) + offset */
	uint64_t seq;            /* arrival order among equal keys */
	uint64_t enq_ns;         /* first entered a queue (monotonic ns) */
	uint64_t slot_ns;        /* was handed a slot */
	uint64_t enq_idx;        /* q->idx when it entered its queue (lock) */
	int pos;                 /* departures while it waited, own included (lock) */
	struct queue *pos_from;  /* the queue <pos> is about (lock) */
	int keep_pos;            /* moved from its server's queue to the backend's
	                          * (the server stopped): <pos> stays its rank in
	                          * the server's queue, as HAProxy logs it (lock) */
	/* a server connection handed over with the slot (lock, then the
	 * owner once dequeued): descriptor or -1, requests it carried, the
	 * releaser's readiness flags. Parked in the owner thread's poller
	 * when the releaser ran there, in no poller otherwise, until the
	 * owner adopts it (conn_adopt()) */
	int hfd;
	int hreqs;
	unsigned int hflags;
	struct ssl_st *hssl;     /* its TLS state, NULL if raw */
};

/* An idle server connection offered with a released slot: the releaser
 * fills fd, reqs, flags and ssl; the hand-over sets taken and taker_tid once a
 * waiter took it. */
struct conn_offer {
	int fd;
	int reqs;
	unsigned int flags;
	struct ssl_st *ssl;
	int taken;
	int taker_tid;
};

void queue_init(struct queue *q);
/* Sets the kind and name shown by `show locks`/`show queue` (config time). */
void queue_set_lock_name(struct queue *q, enum lock_kind kind, const char *name);

void pendconn_init(struct pendconn *p, struct task *t);

/* Takes a slot on <srv> if it has one free. Returns 1 on success. */
int  srv_take_slot(struct server *srv);

/* Releases the slot held on <srv>: hands it to the best waiter of the
 * server's or backend's queue (waking it instantly), or frees it. */
void srv_release_slot(struct server *srv);

/* Same, offering an idle connection to <srv> with the slot: the waiter that
 * gets the slot takes the connection too if its pend.take_conn allows. */
void srv_release_slot_offer(struct server *srv, struct conn_offer *o);

/* Queues <p> on <srv> (srv != NULL) or on the backend <be>, ordered by its
 * priority class, then its arrival date plus its priority offset. May hand
 * a slot over at once when one freed meanwhile: check p->q afterwards.
 * Returns 0, or -1 if the queue is full (maxqueue). */
int  queue_add(struct pendconn *p, struct proxy *be, struct server *srv);

/* Leaves the queue. Returns the server whose slot was already handed over
 * (the caller owns that slot and must use or release it), or NULL. */
struct server *queue_remove(struct pendconn *p);

/* Hands free slots of <srv> to waiters (after a release, a maxconn raise or
 * a state change). Bounded per call. */
int  queue_process(struct server *srv);

/* After a state, weight or limit change of <srv>: hands it every slot that
 * waiters can use now, in bounded rounds (bounded by the server's limit,
 * never by the number of waiters). Returns the number of slots handed. */
int  queue_kick(struct server *srv);

/* <srv> stopped (maintenance, or DOWN by its checks): with `option
 * redispatch`, the waiters of its own queue move to the backend queue (any
 * server may serve them), in bounded batches; without it they stay. Then
 * every server of the backend is kicked. Returns the number moved. */
int  queue_redistribute(struct server *srv);

/* Effective maxconn of a server (0 = unlimited). */
int  srv_dynamic_maxconn(const struct server *srv);

/* For `show queue`: the wait of the oldest waiter in ns (0 if empty), read
 * under the queue lock in O(1). */
uint64_t queue_oldest_wait_ns(struct queue *q, uint64_t now_ns);

/* A backend's histograms (us): the sums of its servers' (every session
 * that got a slot got it from one of them). Racy sums, display only. */
void be_time_hists(const struct proxy *be, struct hist_snap *q, struct hist_snap *c,
                   struct hist_snap *t);

/* Checks the queue's tree and lists (tests): returns the number of waiters,
 * or -1 if an invariant is broken. Takes the lock. */
int  queue_check(struct queue *q);

static inline int queue_clamp_class(long v)
{
	return v < -QUEUE_PRIO_CLASS_MAX ? -QUEUE_PRIO_CLASS_MAX :
	       v > QUEUE_PRIO_CLASS_MAX ? QUEUE_PRIO_CLASS_MAX : (int)v;
}

static inline int queue_clamp_offset(long v)
{
	return v < -QUEUE_PRIO_OFFSET_MAX ? -QUEUE_PRIO_OFFSET_MAX :
	       v > QUEUE_PRIO_OFFSET_MAX ? QUEUE_PRIO_OFFSET_MAX : (int)v;
}

#endif
