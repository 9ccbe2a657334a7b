/* Server and backend queues: handing server slots to waiting streams.
 *
 * Locking and ownership
 * ---------------------
 * - srv->served counts the slots in use on a server. It is only increased by
 *   a compare-and-swap that keeps it <= the server's effective maxconn.
 * - Each queue (server or backend) has its own lock (struct sl_lock, kind
 *   srv_queue or be_queue) protecting its FIFO, tree and lists, its seq
 *   and clock_ms counters, and the `q`, `srv`, `left_from`, `slot_ns`,
 *   `key_ms`, `seq`, `in_tree`, `link` and `node` fields of the pendconns
 *   in it. `len` is written under the lock and read without it; `cum` and
 *   `wait_hist` are atomic counters. Lock order:
 *   server queue first, then backend queue. Nothing under a queue lock
 *   scales with the number of queued streams: O(log n) tree operations,
 *   O(1) list operations and one wake-up per waiter served, at most
 *   QUEUE_HANDOVER_BATCH of them per acquisition.
 * - A pendconn lives in its stream; only the stream's owner thread frees it,
 *   after queue_remove(), which takes the queue lock. The releasing thread
 *   wakes the waiter while still holding the server queue's lock, so the
 *   waiter cannot be freed under it.
 *
 * Order: a queue serves its waiters by priority class (lower first), then by
 * arrival date plus priority offset (a positive offset delays), then by
 * order of entry (seq). The arrival date is the queueing thread's loop date
 * in ms, as HAProxy's is, raised if needed so that dates never go back in
 * a queue: waiters of the same millisecond keep the order in which they
 * took the lock, which is also the order in which a thread that queues a
 * burst of its own streams gets its own slots back (elided wake-ups); a
 * finer date would interleave threads and turn those hand-overs into
 * cross-thread wake-ups.
 * Waiters of default priority (class 0, offset 0: all of them until rules
 * set one) enter a FIFO list, in key order by construction, at O(1). The
 * others, and waiters moved from a server queue, enter a red-black tree
 * keyed by (class, key_ms, seq): O(log n) insertion and removal, and its
 * best node is cached (`first`). The next waiter is the better of the
 * FIFO's head and the tree's first: O(1). Keeping the common case out of
 * the tree matters: rebalancing writes into several other streams' memory,
 * cache misses under the lock (in tests/unit/test_queue.c, sending every
 * waiter through the tree cost a quarter of the elided hand-overs). The
 * FIFO and a list of the tree's waiters in entry order give the oldest wait
 * in O(1).
 *
 * The race between a releaser and a new waiter: the releaser first drops its
 * slot, then looks at the queue lengths; the waiter first makes itself
 * visible in the queue, then tries to take a slot (queue_process). With
 * sequentially consistent atomics, at least one of them sees the other, so a
 * free slot and a waiter never stay apart. A waiter moved to the backend
 * queue (queue_redistribute) follows the same rule: once it is visible
 * there, every server of the backend is asked to take it.
 *
 * Hand-over: the slot moves with the stream. The releaser re-takes the slot
 * by CAS under the locks and gives it to the best waiter among the heads of
 * the server's and the backend's queues, then wakes that waiter's task with
 * an instant wake-up (elided when the waiter belongs to the releasing
 * thread). The waiter finds p->q == NULL and its server in p->srv. The
 * eventfd signals that sleeping owner threads need are sent after the queue
 * locks are released (task_instant_wakeup_defer()): the task is in its
 * owner's inbox by then, so only the system call waits.
 *
 * The connection moves with the slot: a releaser whose server connection
 * is idle and reusable offers it (srv_release_slot_offer()), and the first
 * waiter served takes it if its reuse mode allows (pend.take_conn), so it
 * neither connects nor searches its own thread's idle pool, which under a
 * queue is often empty while the releasing thread's overflows. Under the
 * lock only the descriptor changes hands. After unlocking, the releaser
 * deletes the descriptor from its poller (before it polls again, so no
 * event of it reaches the old owner, which may end meanwhile); the waiter
 * registers it with its own.
 *
 * Moving: a waiter may change queues only under both locks (server, then
 * backend); queue_remove() re-reads p->q after locking and retries if the
 * waiter moved meanwhile.
 */
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/clock.h>
#include <sluice/core/sched.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>

/* Slots handed over per call: bounds the work of one release. Streams woken
 * this way release their own slots later, which continues the work. */
#define QUEUE_HANDOVER_BATCH 32
/* Waiters moved from a server queue to the backend queue per acquisition. */
#define QUEUE_MOVE_BATCH 32

void queue_init(struct queue *q)
{
	lock_init(&q->lock, LK_BE_QUEUE, NULL);
	list_init(&q->fifo);
	q->root = q->first = q->last = NULL;
	list_init(&q->tree_arrivals);
	q->clock_ms = 0;
	q->seq = 0;
	atomic_init(&q->len, 0);
	atomic_init(&q->cum, 0);
	memset(&q->wait_hist, 0, sizeof(q->wait_hist));
}

void queue_set_lock_name(struct queue *q, enum lock_kind kind, const char *name)
{
	q->lock.kind = (uint8_t)kind;
	q->lock.name = name;
}

void pendconn_init(struct pendconn *p, struct task *t)
{
	memset(p, 0, sizeof(*p));
	list_init(&p->link);
	p->task = t;
	p->hfd = -1;
	p->hssl = NULL;
}

/* ---- priority tree (red-black, intrusive; queue lock held) ---- */

static inline struct pendconn *node_pend(struct pq_node *n)
{
	return n ? (struct pendconn *)((char *)n - offsetof(struct pendconn, node)) : NULL;
}

/* Whether <a> is served before <b>. */
static inline int pend_before(const struct pendconn *a, const struct pendconn *b)
{
	if (a->prio_class != b->prio_class)
		return a->prio_class < b->prio_class;
	if (a->key_ms != b->key_ms)
		return a->key_ms < b->key_ms;
	return a->seq < b->seq;
}

static void rb_replace_child(struct pq_node **root, struct pq_node *parent,
                             struct pq_node *old, struct pq_node *new)
{
	if (!parent)
		*root = new;
	else if (parent->left == old)
		parent->left = new;
	else
		parent->right = new;
	if (new)
		new->parent = parent;
}

static void rb_rotate_left(struct pq_node **root, struct pq_node *x)
{
	struct pq_node *y = x->right;

	x->right = y->left;
	if (y->left)
		y->left->parent = x;
	rb_replace_child(root, x->parent, x, y);
	y->left = x;
	x->parent = y;
}

static void rb_rotate_right(struct pq_node **root, struct pq_node *x)
{
	struct pq_node *y = x->left;

	x->left = y->right;
	if (y->right)
		y->right->parent = x;
	rb_replace_child(root, x->parent, x, y);
	y->right = x;
	x->parent = y;
}

static void rb_insert_fixup(struct pq_node **root, struct pq_node *z)
{
	while (z->parent && z->parent->red) {
		struct pq_node *p = z->parent, *g = p->parent;   /* red p: not the root */

		if (p == g->left) {
			struct pq_node *u = g->right;

			if (u && u->red) {
				p->red = u->red = 0;
				g->red = 1;
				z = g;
				continue;
			}
			if (z == p->right) {
				rb_rotate_left(root, p);
				z = p;
				p = z->parent;
			}
			p->red = 0;
			g->red = 1;
			rb_rotate_right(root, g);
		} else {
			struct pq_node *u = g->left;

			if (u && u->red) {
				p->red = u->red = 0;
				g->red = 1;
				z = g;
				continue;
			}
			if (z == p->left) {
				rb_rotate_right(root, p);
				z = p;
				p = z->parent;
			}
			p->red = 0;
			g->red = 1;
			rb_rotate_left(root, g);
		}
	}
	(*root)->red = 0;
}

/* Restores the black heights after removing a black node, whose place is
 * now taken by <x> (maybe NULL) under <xp>. */
static void rb_erase_fixup(struct pq_node **root, struct pq_node *x, struct pq_node *xp)
{
	while (x != *root && (!x || !x->red)) {
		if (x == xp->left) {
			struct pq_node *w = xp->right;   /* exists: xp's right side is black-heavier */

			if (w->red) {
				w->red = 0;
				xp->red = 1;
				rb_rotate_left(root, xp);
				w = xp->right;
			}
			if ((!w->left || !w->left->red) && (!w->right || !w->right->red)) {
				w->red = 1;
				x = xp;
				xp = x->parent;
				continue;
			}
			if (!w->right || !w->right->red) {
				w->left->red = 0;
				w->red = 1;
				rb_rotate_right(root, w);
				w = xp->right;
			}
			w->red = xp->red;
			xp->red = 0;
			w->right->red = 0;
			rb_rotate_left(root, xp);
			x = *root;
			break;
		} else {
			struct pq_node *w = xp->left;

			if (w->red) {
				w->red = 0;
				xp->red = 1;
				rb_rotate_right(root, xp);
				w = xp->left;
			}
			if ((!w->left || !w->left->red) && (!w->right || !w->right->red)) {
				w->red = 1;
				x = xp;
				xp = x->parent;
				continue;
			}
			if (!w->left || !w->left->red) {
				w->right->red = 0;
				w->red = 1;
				rb_rotate_left(root, w);
				w = xp->left;
			}
			w->red = xp->red;
			xp->red = 0;
			w->left->red = 0;
			rb_rotate_right(root, xp);
			x = *root;
			break;
		}
	}
	if (x)
		x->red = 0;
}

static void rb_erase(struct pq_node **root, struct pq_node *z)
{
	struct pq_node *x, *xp;
	int removed_red;

	if (!z->left || !z->right) {
		x = z->left ? z->left : z->right;
		xp = z->parent;
		removed_red = z->red;
		rb_replace_child(root, z->parent, z, x);
	} else {
		struct pq_node *y = z->right;   /* z's successor takes its place */

		while (y->left)
			y = y->left;
		removed_red = y->red;
		x = y->right;
		if (y->parent == z) {
			xp = y;
		} else {
			xp = y->parent;
			rb_replace_child(root, y->parent, y, y->right);
			y->right = z->right;
			y->right->parent = y;
		}
		rb_replace_child(root, z->parent, z, y);
		y->left = z->left;
		y->left->parent = y;
		y->red = z->red;
	}
	if (!removed_red)
		rb_erase_fixup(root, x, xp);
}

static struct pq_node *rb_next(struct pq_node *n)
{
	if (n->right) {
		n = n->right;
		while (n->left)
			n = n->left;
		return n;
	}
	while (n->parent && n == n->parent->right)
		n = n->parent;
	return n->parent;
}

static struct pq_node *rb_prev(struct pq_node *n)
{
	if (n->left) {
		n = n->left;
		while (n->right)
			n = n->right;
		return n;
	}
	while (n->parent && n == n->parent->left)
		n = n->parent;
	return n->parent;
}

/* Inserts <p> into <q>'s tree: O(log n), O(1) plus the rebalancing when
 * it goes last. */
static void tree_insert(struct queue *q, struct pendconn *p)
{
	struct pq_node **link = &q->root, *parent = NULL;
	int leftmost = 1, rightmost = 1;

	if (q->last && !pend_before(p, node_pend(q->last))) {
		/* it goes after the rightmost node, which has no right child */
		parent = q->last;
		link = &parent->right;
		leftmost = 0;
	} else {
		while (*link) {
			parent = *link;
			if (pend_before(p, node_pend(parent))) {
				link = &parent->left;
				rightmost = 0;
			} else {
				link = &parent->right;
				leftmost = 0;
			}
		}
	}
	p->node.parent = parent;
	p->node.left = p->node.right = NULL;
	p->node.red = 1;
	*link = &p->node;
	if (leftmost)
		q->first = &p->node;
	if (rightmost)
		q->last = &p->node;
	rb_insert_fixup(&q->root, &p->node);
}

static void tree_remove(struct queue *q, struct pendconn *p)
{
	if (q->first == &p->node)
		q->first = rb_next(&p->node);
	if (q->last == &p->node)
		q->last = rb_prev(&p->node);
	rb_erase(&q->root, &p->node);
	p->node.parent = p->node.left = p->node.right = NULL;
}

/* Makes <p> a waiter of <q>, its key already set. A waiter of default
 * priority entering afresh goes to the tail of the FIFO list: its key is
 * the largest (dates never go back in a queue, and seq grows), so the list
 * stays in key order at O(1) and touches no other waiter but its
 * neighbour. Any other goes into the tree. Lock held; the caller sets p->q. */
static void queue_link(struct queue *q, struct pendconn *p, int fresh)
{
	p->seq = q->seq++;
	p->enq_idx = q->idx;
	if (fresh && !p->prio_class && !p->prio_offset_ms) {
		p->in_tree = 0;
		list_append(&q->fifo, &p->link);
	} else {
		p->in_tree = 1;
		tree_insert(q, p);
		list_append(&q->tree_arrivals, &p->link);
	}
	atomic_fetch_add(&q->len, 1);
}

/* Removes <p> from <q>. Lock held; the caller updates p->q. */
/* Every departure (hand-over, abort, timeout, move) counts in q->idx, so
 * that a waiter's position is the number of departures from its queue
 * while it waited, its own included: HAProxy's %sq / %bq. */
static void queue_unlink(struct queue *q, struct pendconn *p)
{
	if (p->in_tree)
		tree_remove(q, p);
	list_del_init(&p->link);
	atomic_fetch_sub(&q->len, 1);
	q->idx++;
	if (p->keep_pos)
		return;
	p->pos = (int)(q->idx - p->enq_idx);
	p->pos_from = q;
}

/* The waiter <q> serves next: the better of the FIFO's head and the
 * tree's first. O(1). Lock held. */
static inline struct pendconn *queue_head(struct queue *q)
{
	struct pendconn *f = list_empty(&q->fifo) ? NULL :
	                     list_elem(q->fifo.next, struct pendconn, link);
	struct pendconn *t = node_pend(q->first);

	if (!t)
		return f;
	return f && !pend_before(t, f) ? f : t;
}

/* ---- slots ---- */

/* Effective maxconn: with minconn and a backend fullconn, the limit grows
 * with the backend's load, as HAProxy's dynamic limit does. */
int srv_dynamic_maxconn(const struct server *srv)
{
	int maxc = atomic_load_explicit(&((struct server *)srv)->maxconn, memory_order_relaxed);
	const struct proxy *be = srv->be;
	int beconn, dyn, t;

	/* slowstart: from 1 to the whole limit while it warms up */
	if (srv->slowstart && maxc && (t = srv_throttle(srv)) < 100) {
		dyn = (int)((long long)maxc * t / 100);
		maxc = dyn > 0 ? dyn : 1;
	}
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

static int queue_handover(struct server *srv, struct conn_offer *o)
{
	struct proxy *be = srv->be;
	int handed = 0, usable;
	uint64_t now, to_signal = 0;

	/* the backend queue is for usable servers only; a server in drain or
	 * maint only serves its own queue (and then needs no backend lock) */
	usable = srv_is_usable(srv);
	if (!atomic_load(&srv->queue.len) && (!usable || !atomic_load(&be->queue.len)))
		return 0;
	now = sched_now_ns();
	lock_take(&srv->queue.lock);
	if (usable)
		lock_take(&be->queue.lock);
	while (handed < QUEUE_HANDOVER_BATCH) {
		struct pendconn *p = queue_head(&srv->queue);
		struct queue *from;

		if (usable) {
			struct pendconn *pb = queue_head(&be->queue);

			/* on a tie, the server's own waiter goes first */
			if (pb && (!p || pend_before(pb, p)))
				p = pb;
		}
		if (!p || !srv_take_slot(srv))
			break;
		from = atomic_load_explicit(&p->q, memory_order_relaxed);
		queue_unlink(from, p);
		p->srv = srv;    /* published by the store of q below */
		p->left_from = from;
		p->slot_ns = now;
		if (o && !o->taken && p->take_conn && (p->take_conn == 1 || o->reqs >= 2)) {
			p->hfd = o->fd;
			p->hreqs = o->reqs;
			p->hflags = o->flags;
			p->hssl = o->ssl;
			o->taken = 1;
			o->taker_tid = p->task->tid;
		}
		atomic_store_explicit(&p->q, NULL, memory_order_release);
		task_instant_wakeup_defer(p->task, TASK_WOKEN_QUEUE, &to_signal);
		handed++;
	}
	if (usable)
		lock_release(&be->queue.lock);
	lock_release(&srv->queue.lock);
	/* the eventfd writes to sleeping owners: no system call under the
	 * queue locks */
	sched_signal_threads(to_signal);
	return handed;
}

int queue_process(struct server *srv)
{
	return queue_handover(srv, NULL);
}

void srv_release_slot(struct server *srv)
{
	atomic_fetch_sub(&srv->served, 1);
	queue_handover(srv, NULL);
}

void srv_release_slot_offer(struct server *srv, struct conn_offer *o)
{
	atomic_fetch_sub(&srv->served, 1);
	queue_handover(srv, o);
}

int queue_kick(struct server *srv)
{
	int maxc = atomic_load(&srv->maxconn);
	int rounds = maxc ? maxc / QUEUE_HANDOVER_BATCH + 1 : 64;
	int handed = 0, n;

	while (rounds-- > 0 &&
	       (atomic_load(&srv->queue.len) || atomic_load(&srv->be->queue.len))) {
		if (!(n = queue_process(srv)))
			break;
		handed += n;
	}
	return handed;
}

/* ---- waiters ---- */

int queue_add(struct pendconn *p, struct proxy *be, struct server *srv)
{
	struct queue *q = srv ? &srv->queue : &be->queue;
	int64_t now_ms = (int64_t)(th_ctx ? th_ctx->now_ms : clock_mono_ms());
	int len;

	p->srv = NULL;
	p->left_from = NULL;
	p->slot_ns = 0;
	p->hfd = -1;
	p->hssl = NULL;
	p->keep_pos = 0;
	p->enq_ns = sched_now_ns();
	lock_take(&q->lock);
	if (srv && srv->maxqueue && atomic_load(&q->len) >= srv->maxqueue) {
		lock_release(&q->lock);
		return -1;
	}
	/* the arrival date is the thread's loop date, never earlier than
	 * the last one given in this queue (threads' loop dates differ) */
	if (now_ms < q->clock_ms)
		now_ms = q->clock_ms;
	q->clock_ms = now_ms;
	p->key_ms = now_ms + p->prio_offset_ms;
	atomic_store(&p->q, q);
	queue_link(q, p, 1);
	len = atomic_load(&q->len);
	atomic_fetch_add(&q->cum, 1);
	lock_release(&q->lock);

	cnt_update_max(srv ? &srv->cnt.queue_max : &be->be_cnt.queue_max, len);
	/* a slot may have been freed before we became visible */
	if (srv) {
		queue_process(srv);
		/* queued on a server that stopped meanwhile (maintenance,
		 * or DOWN): the state was stored before the stopping thread
		 * looked at the queue, or it saw us */
		if (atomic_load(&p->q) && srv_is_stopped(srv))
			queue_redistribute(srv);
	} else {
		for (int i = 0; i < be->nsrv && atomic_load(&p->q); i++)
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
		lock_take(&q->lock);
		if (atomic_load_explicit(&p->q, memory_order_relaxed) == q) {
			queue_unlink(q, p);
			atomic_store(&p->q, NULL);
			lock_release(&q->lock);
			return NULL;
		}
		/* dequeued or moved meanwhile: look again */
		lock_release(&q->lock);
	}
	/* dequeued: the hand-over happened under the server queue's lock,
	 * which we must pass through once so that the releaser is done with
	 * <p> */
	srv = p->srv;
	if (srv) {
		lock_take(&srv->queue.lock);
		lock_release(&srv->queue.lock);
	}
	return srv;
}

int queue_redistribute(struct server *srv)
{
	struct proxy *be = srv->be;
	int total = 0;

	if (!(be->options & PX_O_REDISPATCH))
		return 0;
	while (atomic_load(&srv->queue.len) && srv_is_stopped(srv)) {
		int moved = 0;

		lock_take(&srv->queue.lock);
		lock_take(&be->queue.lock);
		while (moved < QUEUE_MOVE_BATCH && atomic_load(&srv->queue.len)) {
			struct pendconn *p = queue_head(&srv->queue);

			/* keeps its key: it does not lose its rank for having
			 * been assigned (into the tree, which takes any key) */
			queue_unlink(&srv->queue, p);
			p->keep_pos = 1;
			queue_link(&be->queue, p, 0);
			atomic_store_explicit(&p->q, &be->queue, memory_order_release);
			moved++;
		}
		lock_release(&be->queue.lock);
		lock_release(&srv->queue.lock);
		if (!moved)
			break;
		total += moved;
	}
	/* the moved waiters are visible: let every server take them */
	for (int i = 0; i < be->nsrv; i++)
		if (be->srv[i] != srv)
			queue_kick(be->srv[i]);
	return total;
}

/* ---- inspection ---- */

uint64_t queue_oldest_wait_ns(struct queue *q, uint64_t now_ns)
{
	uint64_t wait = 0;

	struct list *heads[2] = { &q->fifo, &q->tree_arrivals };

	lock_take(&q->lock);
	for (int i = 0; i < 2; i++) {
		struct pendconn *p;

		if (list_empty(heads[i]))
			continue;
		p = list_elem(heads[i]->next, struct pendconn, link);
		if (now_ns > p->enq_ns && now_ns - p->enq_ns > wait)
			wait = now_ns - p->enq_ns;
	}
	lock_release(&q->lock);
	return wait;
}

void be_time_hists(const struct proxy *be, struct hist_snap *q, struct hist_snap *c,
                   struct hist_snap *t)
{
	memset(q, 0, sizeof(*q));
	memset(c, 0, sizeof(*c));
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < be->nsrv; i++) {
		hist_accumulate(q, &be->srv[i]->qtime_hist);
		hist_accumulate(c, &be->srv[i]->ctime_hist);
		hist_accumulate(t, &be->srv[i]->ttime_hist);
	}
}

/* Checks the subtree of <n>: order, parents, colours. Returns its black
 * height, or -1. Counts its nodes into <count>. */
static int check_subtree(struct queue *q, struct pq_node *n, struct pq_node *parent,
                         struct pendconn **prev, int *count)
{
	int lh, rh;

	if (!n)
		return 1;
	if (n->parent != parent || (n->red && parent && parent->red))
		return -1;
	lh = check_subtree(q, n->left, n, prev, count);
	if (lh < 0)
		return -1;
	if (*prev && !pend_before(*prev, node_pend(n)))
		return -1;
	if (atomic_load(&node_pend(n)->q) != q)
		return -1;
	*prev = node_pend(n);
	(*count)++;
	rh = check_subtree(q, n->right, n, prev, count);
	if (rh < 0 || rh != lh)
		return -1;
	return lh + !n->red;
}

int queue_check(struct queue *q)
{
	struct pendconn *prev = NULL;
	struct pq_node *leftmost = q->root, *rightmost = q->root;
	struct list *pos, *tmp;
	int count = 0, listed = 0, fifo = 0, ok;

	lock_take(&q->lock);
	while (leftmost && leftmost->left)
		leftmost = leftmost->left;
	while (rightmost && rightmost->right)
		rightmost = rightmost->right;
	ok = (!q->root || !q->root->red) && q->first == leftmost && q->last == rightmost &&
	     check_subtree(q, q->root, NULL, &prev, &count) > 0;
	list_for_each_safe(pos, tmp, &q->tree_arrivals)
		ok &= list_elem(pos, struct pendconn, link)->in_tree, listed++;
	prev = NULL;
	list_for_each_safe(pos, tmp, &q->fifo) {
		struct pendconn *p = list_elem(pos, struct pendconn, link);

		ok &= !p->in_tree && !p->prio_class && !p->prio_offset_ms &&
		      atomic_load(&p->q) == q && (!prev || pend_before(prev, p));
		prev = p;
		fifo++;
	}
	ok = ok && listed == count && atomic_load(&q->len) == count + fifo;
	lock_release(&q->lock);
	return ok ? count + fifo : -1;
}

/* ---- configuration: name the backends' locks after their owners ---- */

static int queue_postparse(void)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!(px->cap & PX_CAP_BE))
			continue;
		queue_set_lock_name(&px->queue, LK_BE_QUEUE, px->name);
		px->lb_lock.name = px->name;
		for (int i = 0; i < px->nsrv; i++)
			queue_set_lock_name(&px->srv[i]->queue, LK_SRV_QUEUE, px->srv[i]->name);
	}
	return 0;
}

static struct cfg_post_hook queue_post = { .fn = queue_postparse, .order = 20 };

__attribute__((constructor)) static void queue_register_post(void)
{
	cfg_register_post(&queue_post);
}
