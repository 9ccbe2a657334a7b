/* Peer sessions: HAProxy's peers protocol 2.1 over TCP (see peers.h and
 * peers_proto.c for the encodings).
 *
 * Threads and ownership
 * ---------------------
 * A session (struct peer_sess) is a connection and a task owned by one
 * thread: the thread of its remote peer's connector for an outgoing one,
 * the accepting thread for an incoming one. Only that thread touches it,
 * but for <kill>, which another thread sets (then wakes the task) when a
 * newer session with the same peer wins (the protocol keeps the last one
 * connected). A peer's <lock> protects which session is its active one;
 * no request ever takes it.
 *
 * Tables: a local update marks the entry pending for every remote peer
 * with an established session (the table's <peers_live> bits), under the
 * entry's shard lock, which the request holds anyway (stktable.c). A
 * session collects what is pending for its peer every PEERS_TICK_MS, shard
 * by shard under each shard's lock, at most PEERS_BATCH entries and one
 * output buffer per run. A new session first pushes every table whole
 * (bucket by bucket, bounded the same way), since updates made while no
 * session was up were not kept for the peer. Updates received are applied
 * with a reference on the entry, taken and dropped under its shard lock as
 * a tracking request does, and mark nothing pending (no echo).
 *
 * Every run is bounded: PEERS_BATCH entries, one buffer of output, one
 * buffer of input, so a big table never holds a thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/net/conn.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/peers.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stktable.h>

#define PEERS_BUFSZ        65536
#define PEERS_BATCH        512     /* entries examined per table per run */
#define PEERS_TICK_MS      50      /* pending updates are collected so often */
#define PEERS_HB_MS        3000    /* heartbeat after that much silence */
#define PEERS_DEAD_MS      5000    /* nothing received for that long: dead */
#define PEERS_HELLO_MS     5000    /* handshake deadline */
#define PEERS_MAX_RTBL     64      /* remote table definitions kept */

enum ps_state { PS_CONNECTING, PS_WAIT_STATUS, PS_WAIT_HELLO, PS_ESTAB };

struct ps_tbl {                  /* a local table, as this session sends it */
	struct stktable *t;
	uint32_t id;                 /* our id for it on the wire */
	uint32_t upd_id;             /* last update id sent */
	int teach_shard;             /* full push: next shard, STKT_SHARDS: done */
	uint32_t teach_bucket;
};

struct ps_rtbl {                 /* a table the peer defined */
	uint64_t rid;
	struct stktable *t;          /* NULL: none of ours matches, ignored */
	struct peers_def def;
	uint32_t last_id;
	int unacked;
};

struct peer_sess {
	struct conn c;
	struct task *task;
	struct peers *section;
	struct peer *peer;           /* NULL until the hello names it (incoming) */
	struct listener *lst;        /* incoming */
	enum ps_state state;
	uint8_t *in, *out;
	size_t in_len, out_len, out_sent;
	uint64_t last_rx, last_tx, deadline;
	int ntbl;
	struct ps_tbl *tbl;
	int tx_cur;                  /* table the last definition sent was for, -1 */
	int teach_pending;           /* a full push is in progress */
	int finish_after_teach;      /* the peer asked for a resync */
	int nrt;
	struct ps_rtbl rt[PEERS_MAX_RTBL];
	struct ps_rtbl *cur_rt;
	char (*dict_rx)[PEERS_DICT_STRMAX + 1];
	const char *dict_tx[PEERS_DICT_SIZE];
	int dict_tx_next;
	int dict_undo;               /* slot the update being encoded took, -1 */
	const char *dict_undo_prev;  /* what that slot held */
	int rd_more;                 /* stopped reading before the socket was drained */
	int local_teach;             /* reload: 1 the old process teaching, 2 the new
	                              * one learning (a session with our own name) */
	int done;                    /* the teaching was confirmed: close */
	uint64_t teach_deadline;
	_Atomic int kill;
};

uint64_t peers_now_ms(void)
{
	return stkt_now_ms();
}

const char *peer_status_str(int st)
{
	static const char *const names[] = {
		"NONE", "ESTA", "ESTA", "CONN", "BADV", "BADP", "PROT", "TRYA",
	};

	return st >= 0 && st < (int)(sizeof(names) / sizeof(names[0])) ? names[st] : "UNKN";
}

static const char *local_name(const struct peers *s)
{
	return s->local ? s->local->name : "";
}

static void peer_set_status(struct peer *p, int st)
{
	atomic_store_explicit(&p->status, st, memory_order_relaxed);
	atomic_store_explicit(&p->last_change_ms, peers_now_ms(), memory_order_relaxed);
}

/* ------------------------------------------------------------------ sessions */

static struct task *ps_process(struct task *t, void *ctx, unsigned int state);

static int ps_tables_init(struct peer_sess *ps)
{
	int n = 0;

	for (struct stktable *t = stktable_first(); t; t = stktable_next(t))
		n += t->peers == ps->section;
	ps->tbl = calloc((size_t)(n ? n : 1), sizeof(*ps->tbl));
	if (!ps->tbl)
		return -1;
	for (struct stktable *t = stktable_first(); t; t = stktable_next(t)) {
		if (t->peers != ps->section)
			continue;
		ps->tbl[ps->ntbl].t = t;
		ps->tbl[ps->ntbl].id = (uint32_t)ps->ntbl + 1;
		ps->tbl[ps->ntbl].teach_shard = STKT_SHARDS;
		ps->ntbl++;
	}
	ps->tx_cur = -1;
	return 0;
}

static struct peer_sess *ps_new(struct peers *s, int tid)
{
	struct peer_sess *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->section = s;
	ps->in = malloc(PEERS_BUFSZ);
	ps->out = malloc(PEERS_BUFSZ);
	ps->dict_rx = calloc(PEERS_DICT_SIZE, sizeof(*ps->dict_rx));
	ps->task = task_new(ps_process, ps, tid, TC_NORMAL, "peer_sess");
	if (!ps->in || !ps->out || !ps->dict_rx || !ps->task || ps_tables_init(ps) < 0) {
		if (ps->task)
			task_destroy(ps->task);
		free(ps->in);
		free(ps->out);
		free(ps->dict_rx);
		free(ps->tbl);
		free(ps);
		return NULL;
	}
	conn_init(&ps->c, ps->task);
	ps->last_rx = ps->last_tx = peers_now_ms();
	return ps;
}

/* Ends a session: it stops being its peer's active one (the tables stop
 * marking updates for the peer), its connector may try again. */
static void ps_free(struct peer_sess *ps)
{
	struct peer *p = ps->local_teach ? NULL : ps->peer;

	if (ps->local_teach == 1)
		atomic_fetch_sub(&global.actconn, 1);
	if (p) {
		int was_active = 0;

		lock_take(&p->lock);
		if (p->active == ps) {
			p->active = NULL;
			was_active = 1;
		}
		lock_release(&p->lock);
		if (was_active) {
			for (int i = 0; i < ps->ntbl; i++)
				atomic_fetch_and_explicit(&ps->tbl[i].t->peers_live, ~(1ull << p->bit),
				                          memory_order_relaxed);
			atomic_store_explicit(&p->appstate, 0, memory_order_relaxed);
			/* only the active session's end says something of the peer */
			peer_set_status(p, PEER_ST_CONNREFUSED);
		}
		if (p->out == ps) {
			p->out = NULL;
			if (p->task)
				task_wakeup(p->task, TASK_WOKEN_OTHER);
		}
	}
	if (conn_is_open(&ps->c))
		conn_close(&ps->c);
	if (ps->lst)
		listener_conn_closed(ps->lst);
	task_destroy(ps->task);
	free(ps->in);
	free(ps->out);
	free(ps->dict_rx);
	free(ps->tbl);
	free(ps);
}

static int ps_out_put(struct peer_sess *ps, const void *p, size_t n)
{
	if (PEERS_BUFSZ - ps->out_len < n)
		return -1;
	memcpy(ps->out + ps->out_len, p, n);
	ps->out_len += n;
	return 0;
}

static int ps_ctrl(struct peer_sess *ps, uint8_t cls, uint8_t type)
{
	uint8_t m[2] = { cls, type };

	return ps_out_put(ps, m, 2);
}

/* The session becomes its peer's active one; an older one is told to go. */
static void ps_establish(struct peer_sess *ps)
{
	struct peer *p = ps->peer;
	struct peer_sess *old;

	lock_take(&p->lock);
	old = p->active;
	p->active = ps;
	if (old)
		atomic_store_explicit(&old->kill, 1, memory_order_relaxed);
	lock_release(&p->lock);
	if (old)
		task_wakeup(old->task, TASK_WOKEN_MSG);
	ps->state = PS_ESTAB;
	atomic_store_explicit(&p->appstate, 2, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->conn_ok, 1, memory_order_relaxed);
	for (int i = 0; i < ps->ntbl; i++) {
		/* from now on local updates are kept for the peer; what came
		 * before goes with the full push */
		atomic_fetch_or_explicit(&ps->tbl[i].t->peers_live, 1ull << p->bit,
		                         memory_order_relaxed);
		ps->tbl[i].teach_shard = 0;
		ps->tbl[i].teach_bucket = 0;
	}
	ps->teach_pending = ps->ntbl > 0;
	/* learn what the peer has: ask it for a full resync */
	if (ps->ntbl && !atomic_load_explicit(&ps->section->resync_done, memory_order_relaxed))
		ps_ctrl(ps, PEERS_CLASS_CTRL, PEERS_CTRL_RESYNCREQ);
}

/* ------------------------------------------------------------------ sending */

static uint64_t table_data_types(const struct stktable *t)
{
	uint64_t bits = 0;

	for (int dt = 0; dt < STKT_DT_COUNT && dt < PEERS_NB_DT; dt++)
		if (t->data_ofs[dt] >= 0)
			bits |= 1ull << dt;
	return bits;
}

static void table_def(const struct stktable *t, uint32_t id, struct peers_def *d)
{
	static const uint64_t kt[] = {
		[STKT_T_IP] = PEERS_KT_IPV4, [STKT_T_IPV6] = PEERS_KT_IPV6,
		[STKT_T_INTEGER] = PEERS_KT_SINT, [STKT_T_STRING] = PEERS_KT_STR,
		[STKT_T_BINARY] = PEERS_KT_BIN,
	};

	memset(d, 0, sizeof(*d));
	d->id = id;
	d->name = (const uint8_t *)t->nid;
	d->name_len = strlen(t->nid);
	d->key_type = kt[t->type];
	/* HAProxy counts a string key's trailing zero */
	d->key_len = t->type == STKT_T_STRING ? t->key_size + 1 : t->key_size;
	d->data_types = table_data_types(t);
	d->expire = (uint64_t)t->expire_ms;
	for (int dt = 0; dt < STKT_DT_COUNT && dt < PEERS_NB_DT; dt++) {
		d->nbelem[dt] = t->data_nbelem[dt];
		d->period[dt] = t->data_period[dt];
	}
}

struct enc_ctx {
	struct peer_sess *ps;
	struct ps_tbl *pt;
	int count;
};

static void enc_key(struct peers_wr *w, const struct stktable *t, const struct stksess *ts)
{
	const unsigned char *key = stktable_entry_key(t, ts);
	uint32_t v;

	switch (t->type) {
	case STKT_T_INTEGER:
		memcpy(&v, key, 4);
		peers_wr_u32(w, v);
		break;
	case STKT_T_STRING:
		peers_wr_varint(w, ts->key_len);
		peers_wr_bytes(w, key, ts->key_len);
		break;
	default:
		peers_wr_bytes(w, key, t->key_size);
		break;
	}
}

static void enc_dict(struct peers_wr *w, struct peer_sess *ps, const char *name)
{
	uint8_t tmp[300];
	struct peers_wr v = { tmp, 0, sizeof(tmp), 0 };
	int id = -1;

	if (!name) {
		peers_wr_varint(w, 0);
		return;
	}
	for (int i = 0; i < PEERS_DICT_SIZE; i++)
		if (ps->dict_tx[i] == name)
			id = i;
	if (id >= 0) {
		peers_wr_varint(&v, (uint64_t)id + 1);
	} else {
		size_t len = strlen(name);

		id = ps->dict_tx_next;
		/* an update that does not fit gives its slot back (enc_update):
		 * the peer must learn every name it is sent an id of */
		ps->dict_undo = id;
		ps->dict_undo_prev = ps->dict_tx[id];
		ps->dict_tx_next = (ps->dict_tx_next + 1) % PEERS_DICT_SIZE;
		ps->dict_tx[id] = name;
		peers_wr_varint(&v, (uint64_t)id + 1);
		peers_wr_varint(&v, len > PEERS_DICT_STRMAX ? PEERS_DICT_STRMAX : len);
		peers_wr_bytes(&v, name, len > PEERS_DICT_STRMAX ? PEERS_DICT_STRMAX : len);
	}
	peers_wr_varint(w, v.len);
	peers_wr_bytes(w, tmp, v.len);
}

static void enc_value(struct peers_wr *w, struct peer_sess *ps, struct stktable *t,
                      struct stksess *ts, int dt, unsigned int idx)
{
	void *p = stkt_elem_ptr(t, ts, (enum stkt_dt)dt, idx, NULL);
	int64_t v = 0;

	switch (stkt_dt_defs[dt].kind) {
	case STKT_K_FRQ: {
		struct freq_ctr *f = p;
		uint32_t tick = atomic_load_explicit(&f->tick, memory_order_relaxed) & ~1u;

		peers_wr_varint(w, (uint32_t)((uint32_t)peers_now_ms() - tick));
		peers_wr_varint(w, atomic_load_explicit(&f->curr, memory_order_relaxed));
		peers_wr_varint(w, atomic_load_explicit(&f->prev, memory_order_relaxed));
		return;
	}
	case STKT_K_NAME:
		enc_dict(w, ps, stkt_get_name(t, ts, (enum stkt_dt)dt));
		return;
	case STKT_K_SINT:
		stkt_get_idx(t, ts, (enum stkt_dt)dt, idx, &v);
		peers_wr_varint(w, (uint32_t)(int32_t)v);
		return;
	default:
		stkt_get_idx(t, ts, (enum stkt_dt)dt, idx, &v);
		peers_wr_varint(w, (uint64_t)v);
		return;
	}
}

/* Appends one update for <ts>, after a definition if the last one sent
 * was for another table. Called under the entry's shard lock. 0, or -1
 * when the output buffer is full (nothing appended). */
static int enc_update(struct stktable *t, struct stksess *ts, void *arg)
{
	struct enc_ctx *ec = arg;
	struct peer_sess *ps = ec->ps;
	struct ps_tbl *pt = ec->pt;
	int idx = (int)(pt - ps->tbl);
	struct peers_wr w = { ps->out + ps->out_len, 0, PEERS_BUFSZ - ps->out_len, 0 };
	size_t start;

	if (ps->tx_cur != idx) {
		struct peers_def d;
		int n;

		table_def(t, pt->id, &d);
		n = peers_def_encode(w.p, w.room, &d);
		if (n < 0)
			return -1;
		w.len = (size_t)n;
	}
	ps->dict_undo = -1;
	start = peers_wr_msg_begin(&w);
	peers_wr_u32(&w, pt->upd_id + 1);
	enc_key(&w, t, ts);
	for (int dt = 0; dt < STKT_DT_COUNT && dt < PEERS_NB_DT; dt++) {
		if (t->data_ofs[dt] < 0)
			continue;
		for (unsigned int i = 0; i < t->data_nbelem[dt]; i++)
			enc_value(&w, ps, t, ts, dt, i);
	}
	if (peers_wr_msg_end(&w, start, PEERS_CLASS_STKT, PEERS_STKT_UPDATE) < 0) {
		if (ps->dict_undo >= 0) {
			ps->dict_tx[ps->dict_undo] = ps->dict_undo_prev;
			ps->dict_tx_next = ps->dict_undo;
		}
		return -1;
	}
	ps->tx_cur = idx;
	ps->out_len += w.len;
	pt->upd_id++;
	ec->count++;
	return 0;
}

/* Full push of one table, bounded. 1 when it is complete. */
static int ps_teach_table(struct peer_sess *ps, struct ps_tbl *pt, int *budget)
{
	struct enc_ctx ec = { ps, pt, 0 };

	while (pt->teach_shard < STKT_SHARDS && *budget > 0) {
		if (PEERS_BUFSZ - ps->out_len < 4096)
			return 0;
		if (stktable_teach_walk(pt->t, pt->teach_shard, &pt->teach_bucket, 64, enc_update,
		                        &ec)) {
			pt->teach_shard++;
			pt->teach_bucket = 0;
		}
		*budget -= 64;
	}
	atomic_fetch_add_explicit(&pt->t->n_pushed, (uint64_t)ec.count, memory_order_relaxed);
	if (ps->peer)
		atomic_fetch_add_explicit(&ps->peer->updates_sent, (uint32_t)ec.count,
		                          memory_order_relaxed);
	return pt->teach_shard >= STKT_SHARDS;
}

/* Sends what is pending for the peer, bounded. Returns non-zero when work
 * is left. */
static int ps_push(struct peer_sess *ps)
{
	int more = 0;

	if (ps->teach_pending) {
		int budget = PEERS_BATCH * 4, done = 1;

		for (int i = 0; i < ps->ntbl; i++)
			done &= ps_teach_table(ps, &ps->tbl[i], &budget);
		if (!done)
			return 1;
		ps->teach_pending = 0;
		if (ps->finish_after_teach) {
			ps_ctrl(ps, PEERS_CLASS_CTRL, PEERS_CTRL_RESYNCFINISHED);
			ps->finish_after_teach = 0;
		}
	}
	if (ps->local_teach)
		return 0;   /* no updates go to our own successor or predecessor */
	for (int i = 0; i < ps->ntbl; i++) {
		struct ps_tbl *pt = &ps->tbl[i];
		struct enc_ctx ec = { ps, pt, 0 };
		int budget = PEERS_BATCH;

		for (int sh = 0; sh < STKT_SHARDS && budget > 0; sh++) {
			if (PEERS_BUFSZ - ps->out_len < 4096) {
				more = 1;
				break;
			}
			budget -= stktable_upd_collect(pt->t, sh, ps->peer->bit, budget, enc_update,
			                               &ec, &more);
		}
		if (budget <= 0)
			more = 1;
		atomic_fetch_add_explicit(&pt->t->n_pushed, (uint64_t)ec.count,
		                          memory_order_relaxed);
		atomic_fetch_add_explicit(&ps->peer->updates_sent, (uint32_t)ec.count,
		                          memory_order_relaxed);
	}
	return more;
}

/* ------------------------------------------------------------------ receiving */

struct apply_ctx {
	struct stktable *t;
	struct stksess *ts;
};

static const char *intern_name(const char *s, size_t len)
{
	/* server names learned from peers live as long as the process: a
	 * few distinct ones (servers of the configurations) */
	static struct sl_lock lock;
	static int init;
	static char *names[1024];
	static int n;
	const char *found = NULL;

	if (!init) {
		lock_init(&lock, LK_OTHER, "peers_names");
		init = 1;
	}
	lock_take(&lock);
	for (int i = 0; i < n && !found; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], s, len))
			found = names[i];
	if (!found && n < 1024 && (names[n] = strndup(s, len)))
		found = names[n++];
	lock_release(&lock);
	return found;
}

static int apply_value(void *arg, const struct peers_val *v)
{
	struct apply_ctx *ac = arg;
	enum stkt_dt real;
	void *p;

	/* conn_cur is never learned: it counts local connections */
	if (v->dt == STKT_DT_CONN_CUR || v->dt >= STKT_DT_COUNT)
		return 0;
	p = stkt_elem_ptr(ac->t, ac->ts, (enum stkt_dt)v->dt, v->idx, &real);
	if (!p || real != (enum stkt_dt)v->dt)
		return 0;
	switch (v->kind) {
	case PEERS_V_FRQ: {
		struct freq_ctr *f = p;
		uint32_t tick = ((uint32_t)peers_now_ms() - (uint32_t)v->v[0]) & ~1u;

		if (stkt_dt_defs[v->dt].kind != STKT_K_FRQ)
			return 0;
		atomic_store_explicit(&f->curr, (uint32_t)v->v[1], memory_order_relaxed);
		atomic_store_explicit(&f->prev, (uint32_t)v->v[2], memory_order_relaxed);
		atomic_store_explicit(&f->tick, tick, memory_order_relaxed);
		return 0;
	}
	case PEERS_V_DICT:
		if (v->str)
			stkt_set_name(ac->t, ac->ts, (enum stkt_dt)v->dt, intern_name(v->str, v->str_len));
		return 0;
	case PEERS_V_INT:
		stkt_set_idx(ac->t, ac->ts, (enum stkt_dt)v->dt, v->idx, (int64_t)v->v[0]);
		return 0;
	}
	return 0;
}

/* The key of an update as the local table keeps it. 0, or -1. */
static int wire_key(const struct stktable *t, const struct peers_upd *u, struct stkt_key *k)
{
	uint32_t v;

	switch (t->type) {
	case STKT_T_INTEGER:
		if (u->key_len != 4)
			return -1;
		memcpy(&v, u->key, 4);
		v = ntohl(v);
		memcpy(k->buf, &v, 4);
		k->ptr = k->buf;
		k->len = 4;
		return 0;
	case STKT_T_STRING:
		k->ptr = u->key;
		k->len = (uint32_t)(u->key_len > t->key_size ? t->key_size : u->key_len);
		return 0;
	default:
		if (u->key_len != t->key_size)
			return -1;
		k->ptr = u->key;
		k->len = t->key_size;
		return 0;
	}
}

static int ps_rx_update(struct peer_sess *ps, const struct peers_msg *m)
{
	struct ps_rtbl *rt = ps->cur_rt;
	struct apply_ctx ac;
	struct peers_upd u;
	struct stkt_key k;
	int rc;

	if (!rt)
		return -1;   /* an update before any definition */
	if (!rt->t) {
		/* a table we do not share: still check the message */
		return peers_upd_decode(m->type, m->data, m->len, &rt->def, ps->dict_rx, &u, NULL,
		                        NULL);
	}
	/* first the key (no callback), then the values into the entry */
	if (peers_upd_decode(m->type, m->data, m->len, &rt->def, ps->dict_rx, &u, NULL, NULL) < 0)
		return -1;
	if (wire_key(rt->t, &u, &k) < 0)
		return -1;
	ac.t = rt->t;
	ac.ts = stktable_get_ref_remote(rt->t, &k);
	if (!ac.ts)
		return 0;   /* table full: dropped, as a local creation would be */
	rc = peers_upd_decode(m->type, m->data, m->len, &rt->def, ps->dict_rx, &u, apply_value,
	                      &ac);
	stktable_release_remote(rt->t, ac.ts, u.timed ? (int)(u.expire > INT32_MAX ? INT32_MAX :
	                                                      u.expire) : -1);
	rt->last_id = u.has_id ? u.id : rt->last_id + 1;
	rt->unacked = 1;
	atomic_fetch_add_explicit(&rt->t->n_learned, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&ps->peer->updates_rcvd, 1, memory_order_relaxed);
	return rc;
}

static struct stktable *match_table(struct peer_sess *ps, const struct peers_def *d)
{
	for (int i = 0; i < ps->ntbl; i++) {
		struct stktable *t = ps->tbl[i].t;
		struct peers_def mine;

		if (strlen(t->nid) != d->name_len || memcmp(t->nid, d->name, d->name_len))
			continue;
		table_def(t, 0, &mine);
		/* a table of another shape is ignored, as HAProxy does */
		if (mine.key_type != d->key_type || mine.key_len != d->key_len)
			return NULL;
		return t;
	}
	return NULL;
}

static int ps_rx_define(struct peer_sess *ps, const struct peers_msg *m)
{
	struct peers_def d;
	struct ps_rtbl *rt = NULL;

	if (peers_def_decode(m->data, m->len, &d) < 0)
		return -1;
	for (int i = 0; i < ps->nrt; i++)
		if (ps->rt[i].rid == d.id)
			rt = &ps->rt[i];
	if (!rt) {
		if (ps->nrt >= PEERS_MAX_RTBL)
			return -1;
		rt = &ps->rt[ps->nrt++];
	}
	rt->rid = d.id;
	rt->def = d;
	rt->def.name = NULL;   /* points into the input buffer */
	rt->t = match_table(ps, &d);
	ps->cur_rt = rt;
	return 0;
}

static int ps_rx_switch(struct peer_sess *ps, const struct peers_msg *m)
{
	uint64_t id;

	if (peers_varint_get(m->data, m->len, &id) < 0)
		return -1;
	for (int i = 0; i < ps->nrt; i++) {
		if (ps->rt[i].rid == id) {
			ps->cur_rt = &ps->rt[i];
			return 0;
		}
	}
	return -1;
}

static int ps_rx_ctrl(struct peer_sess *ps, uint8_t type)
{
	switch (type) {
	case PEERS_CTRL_RESYNCREQ:
		/* push everything again, then say so */
		for (int i = 0; i < ps->ntbl; i++) {
			ps->tbl[i].teach_shard = 0;
			ps->tbl[i].teach_bucket = 0;
		}
		ps->teach_pending = ps->ntbl > 0;
		ps->finish_after_teach = 1;
		if (!ps->ntbl)
			ps_ctrl(ps, PEERS_CLASS_CTRL, PEERS_CTRL_RESYNCFINISHED);
		return 0;
	case PEERS_CTRL_RESYNCFINISHED:
	case PEERS_CTRL_RESYNCPARTIAL:
		if (type == PEERS_CTRL_RESYNCFINISHED)
			atomic_store_explicit(&ps->section->resync_done, 1, memory_order_relaxed);
		ps_ctrl(ps, PEERS_CLASS_CTRL, PEERS_CTRL_RESYNCCONFIRM);
		return 0;
	case PEERS_CTRL_RESYNCCONFIRM:
		if (ps->local_teach == 1)
			ps->done = 1;
		return 0;
	case PEERS_CTRL_HEARTBEAT:
		return 0;
	}
	return -1;
}

/* One message. 0, or -1: protocol error. */
static int ps_rx_msg(struct peer_sess *ps, const struct peers_msg *m)
{
	switch (m->cls) {
	case PEERS_CLASS_CTRL:
		return ps_rx_ctrl(ps, m->type);
	case PEERS_CLASS_ERROR:
		return -1;
	case PEERS_CLASS_STKT:
		switch (m->type) {
		case PEERS_STKT_DEFINE:
			return ps_rx_define(ps, m);
		case PEERS_STKT_SWITCH:
			return ps_rx_switch(ps, m);
		case PEERS_STKT_ACK:
			return 0;
		case PEERS_STKT_UPDATE: case PEERS_STKT_INCUPDATE:
		case PEERS_STKT_UPDATE_TIMED: case PEERS_STKT_INCUPDATE_TIMED:
			return ps_rx_update(ps, m);
		}
		return -1;
	}
	return m->type >= 128 ? 0 : -1;   /* unknown classes with a length are skipped */
}

/* Acknowledges the updates received, one message per table. */
static void ps_send_acks(struct peer_sess *ps)
{
	for (int i = 0; i < ps->nrt; i++) {
		struct ps_rtbl *rt = &ps->rt[i];
		uint8_t buf[32];
		struct peers_wr w = { buf, 0, sizeof(buf), 0 };
		size_t start;

		if (!rt->unacked)
			continue;
		start = peers_wr_msg_begin(&w);
		peers_wr_varint(&w, rt->rid);
		peers_wr_u32(&w, rt->last_id);
		if (peers_wr_msg_end(&w, start, PEERS_CLASS_STKT, PEERS_STKT_ACK) < 0 ||
		    ps_out_put(ps, buf, w.len) < 0)
			return;
		rt->unacked = 0;
	}
}

/* Handles the complete messages of the input buffer. -1 on error. */
static int ps_rx_messages(struct peer_sess *ps)
{
	size_t pos = 0;
	int rc = 0;

	while (pos < ps->in_len) {
		struct peers_msg m;
		long n = peers_msg_cut(ps->in + pos, ps->in_len - pos, &m);

		if (n == 0)
			break;
		if (n < 0 || ps_rx_msg(ps, &m) < 0) {
			ps_ctrl(ps, PEERS_CLASS_ERROR, n == -2 ? PEERS_ERR_SIZELIMIT : PEERS_ERR_PROTO);
			rc = -1;
			break;
		}
		pos += (size_t)n;
	}
	memmove(ps->in, ps->in + pos, ps->in_len - pos);
	ps->in_len -= pos;
	if (!rc && ps->in_len == PEERS_BUFSZ)
		rc = -1;   /* a message larger than the buffer */
	ps_send_acks(ps);
	return rc;
}

/* ------------------------------------------------------------------ handshake */

static int ps_send_hello(struct peer_sess *ps)
{
	char hello[600];
	int n = snprintf(hello, sizeof(hello), "%s %s\n%s\n%s %d 1\n", PEERS_PROTO_ID,
	                 PEERS_PROTO_VER, ps->peer->name, local_name(ps->section), global.pid);

	return n > 0 && (size_t)n < sizeof(hello) ? ps_out_put(ps, hello, (size_t)n) : -1;
}

/* The status line of an outgoing handshake. 1 done, 0 more needed, -1 bad. */
static int ps_rx_status(struct peer_sess *ps)
{
	uint8_t *nl = memchr(ps->in, '\n', ps->in_len);
	int code;

	if (!nl)
		return ps->in_len > 16 ? -1 : 0;
	code = atoi((const char *)ps->in);
	memmove(ps->in, nl + 1, ps->in_len - (size_t)(nl + 1 - ps->in));
	ps->in_len -= (size_t)(nl + 1 - ps->in);
	if (code == 200 && ps->local_teach) {
		/* teach everything, say so, wait for the confirmation */
		ps->state = PS_ESTAB;
		for (int i = 0; i < ps->ntbl; i++) {
			ps->tbl[i].teach_shard = 0;
			ps->tbl[i].teach_bucket = 0;
		}
		ps->teach_pending = ps->ntbl > 0;
		ps->finish_after_teach = 1;
		if (!ps->ntbl)
			ps_ctrl(ps, PEERS_CLASS_CTRL, PEERS_CTRL_RESYNCFINISHED);
		return 1;
	}
	if (code == 200) {
		peer_set_status(ps->peer, PEER_ST_CONNECTED);
		ps_establish(ps);
		return 1;
	}
	peer_set_status(ps->peer, code == 502 ? PEER_ST_BADVERSION : code == 503 ||
	                code == 504 ? PEER_ST_BADPEER : code == 300 ? PEER_ST_TRYAGAIN :
	                PEER_ST_PROTOERR);
	return -1;
}

static struct peer *find_remote(struct peers *s, const char *name)
{
	for (struct peer *p = s->peers; p; p = p->next)
		if (!p->local && !strcmp(p->name, name))
			return p;
	return NULL;
}

/* The three lines of an incoming hello: the status code to answer, 0
 * while incomplete. */
static int ps_check_hello(struct peer_sess *ps, size_t *used)
{
	char lines[3][300];
	size_t pos = 0;
	char *sp;

	for (int i = 0; i < 3; i++) {
		uint8_t *nl = memchr(ps->in + pos, '\n', ps->in_len - pos);
		size_t l;

		if (!nl)
			return ps->in_len > 900 ? 501 : 0;
		l = (size_t)(nl - (ps->in + pos));
		if (l >= sizeof(lines[i]))
			return 501;
		memcpy(lines[i], ps->in + pos, l);
		lines[i][l] = 0;
		pos += l + 1;
	}
	*used = pos;
	sp = strchr(lines[0], ' ');
	if (!sp || (size_t)(sp - lines[0]) != strlen(PEERS_PROTO_ID) ||
	    memcmp(lines[0], PEERS_PROTO_ID, strlen(PEERS_PROTO_ID)))
		return 501;
	if (strncmp(sp + 1, "2.", 2))
		return 502;
	if (strcmp(lines[1], local_name(ps->section)))
		return 503;
	sp = strchr(lines[2], ' ');
	if (sp)
		*sp = 0;
	if (ps->section->local && !strcmp(lines[2], ps->section->local->name)) {
		/* our own name: the old process of a reload, come to teach */
		ps->peer = ps->section->local;
		ps->local_teach = 2;
		return 200;
	}
	ps->peer = find_remote(ps->section, lines[2]);
	if (!ps->peer)
		return 504;
	atomic_fetch_add_explicit(&ps->peer->hello_rcvd, 1, memory_order_relaxed);
	return 200;
}

static int ps_rx_hello(struct peer_sess *ps)
{
	size_t used = 0;
	int code = ps_check_hello(ps, &used);
	char st[8];

	if (!code)
		return 0;
	snprintf(st, sizeof(st), "%d\n", code);
	ps_out_put(ps, st, strlen(st));
	if (code != 200)
		return -1;
	memmove(ps->in, ps->in + used, ps->in_len - used);
	ps->in_len -= used;
	if (ps->local_teach) {
		ps->state = PS_ESTAB;
		return 1;
	}
	peer_set_status(ps->peer, PEER_ST_ACCEPTED);
	ps_establish(ps);
	return 1;
}

/* ------------------------------------------------------------------ I/O */

static int ps_read(struct peer_sess *ps)
{
	/* edge-triggered: whoever stops before EAGAIN must come back itself */
	ps->rd_more = 1;
	for (int reads = 0; reads < 4 && ps->in_len < PEERS_BUFSZ; reads++) {
		ssize_t n = recv(ps->c.ph.fd, ps->in + ps->in_len, PEERS_BUFSZ - ps->in_len,
		                 MSG_DONTWAIT);

		if (n > 0) {
			ps->in_len += (size_t)n;
			ps->last_rx = peers_now_ms();
			continue;
		}
		if (n == 0)
			return -1;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			ps->rd_more = 0;
			break;
		}
		return -1;
	}
	return 0;
}

static int ps_write(struct peer_sess *ps)
{
	while (ps->out_sent < ps->out_len) {
		ssize_t n = send(ps->c.ph.fd, ps->out + ps->out_sent, ps->out_len - ps->out_sent,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			ps->out_sent += (size_t)n;
			ps->last_tx = peers_now_ms();
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		return -1;
	}
	if (ps->out_sent) {
		memmove(ps->out, ps->out + ps->out_sent, ps->out_len - ps->out_sent);
		ps->out_len -= ps->out_sent;
		ps->out_sent = 0;
	}
	return 0;
}

/* One step of the handshake or of the established session. -1: close. */
static int ps_step(struct peer_sess *ps, uint64_t now, int *more)
{
	int rc;

	if (ps->state == PS_CONNECTING) {
		rc = conn_connect_status(&ps->c);
		if (rc == EINPROGRESS)
			return now >= ps->deadline ? -1 : 0;
		if (rc) {
			peer_set_status(ps->peer, PEER_ST_CONNREFUSED);
			return -1;
		}
		ps->state = PS_WAIT_STATUS;
		if (ps_send_hello(ps) < 0)
			return -1;
	}
	if (ps->local_teach == 1 && now >= ps->teach_deadline)
		return -1;   /* the successor did not take it in time: give up */
	if (!ps->local_teach && atomic_load_explicit(&global.stopping, memory_order_relaxed))
		return -1;   /* stopping: the sessions with remote peers go */
	if (ps_read(ps) < 0)
		return -1;
	if (ps->state == PS_WAIT_STATUS && (rc = ps_rx_status(ps)) <= 0)
		return rc < 0 || now >= ps->deadline ? -1 : 0;
	if (ps->state == PS_WAIT_HELLO && (rc = ps_rx_hello(ps)) <= 0)
		return rc < 0 || now >= ps->deadline ? -1 : 0;
	if (ps_rx_messages(ps) < 0)
		return -1;
	*more = ps_push(ps);
	if (now - ps->last_tx >= PEERS_HB_MS && !ps->out_len)
		ps_ctrl(ps, PEERS_CLASS_CTRL, PEERS_CTRL_HEARTBEAT);
	if (now - ps->last_rx >= PEERS_DEAD_MS)
		return -1;
	if (ps->done && !ps->out_len)
		return -1;
	return 0;
}

static struct task *ps_process(struct task *t, void *ctx, unsigned int state)
{
	struct peer_sess *ps = ctx;
	uint64_t now = peers_now_ms();
	int more = 0;

	(void)state;
	if (atomic_load_explicit(&ps->kill, memory_order_relaxed) || ps_step(ps, now, &more) < 0 ||
	    ps_write(ps) < 0) {
		/* flush what is pending (a status, an error) then go */
		if (conn_is_open(&ps->c) && ps->out_len)
			(void)!send(ps->c.ph.fd, ps->out, ps->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
		ps_free(ps);
		return NULL;
	}
	/* more to push: again at once, unless the output waits for the
	 * socket (its EPOLLOUT wakes the task) */
	if ((more && PEERS_BUFSZ - ps->out_len >= 4096) || ps->rd_more)
		task_wakeup(t, TASK_WOKEN_OTHER);
	task_set_expire(t, ps->state == PS_ESTAB ? now + PEERS_TICK_MS : ps->deadline);
	return t;
}

/* ------------------------------------------------------------------ connections */

static struct peers *section_of_listener(const struct listener *l)
{
	for (struct peers *s = peers_first(); s; s = s->next) {
		struct list *pos, *tmp;

		list_for_each_safe(pos, tmp, &s->binds)
			if (list_elem(pos, struct bind_conf, list) == l->bc)
				return s;
	}
	return NULL;
}

int peers_accept(struct listener *l, int fd, const struct sockaddr_storage *from)
{
	struct peers *s = section_of_listener(l);
	struct peer_sess *ps = s ? ps_new(s, th_ctx->tid) : NULL;

	if (!ps) {
		conn_fd_close(fd);
		return -1;
	}
	ps->c.src = *from;
	if (conn_attach(&ps->c, fd) < 0) {
		conn_fd_close(fd);
		task_destroy(ps->task);
		ps->task = NULL;
		free(ps->in);
		free(ps->out);
		free(ps->dict_rx);
		free(ps->tbl);
		free(ps);
		return -1;
	}
	ps->lst = l;
	ps->state = PS_WAIT_HELLO;
	ps->deadline = peers_now_ms() + PEERS_HELLO_MS;
	task_set_expire(ps->task, ps->deadline);
	return 0;
}

/* The connector of a remote peer: connects when no session is up, with a
 * delay that grows from 500 ms to 5 s plus up to 2 s of jitter (HAProxy
 * waits 50 to 2050 ms so that two peers do not connect at once again). */
static struct task *peer_connector(struct task *t, void *ctx, unsigned int state)
{
	struct peer *p = ctx;
	uint64_t now = peers_now_ms();
	struct peer_sess *ps;
	int busy;

	(void)state;
	if (atomic_load_explicit(&global.stopping, memory_order_relaxed)) {
		task_set_expire(t, now + 1000);   /* stopping: no new session */
		return t;
	}
	lock_take(&p->lock);
	busy = p->active != NULL;
	lock_release(&p->lock);
	if (busy)
		p->backoff_ms = 0;
	if (busy || p->out || now < p->next_try_ms) {
		task_set_expire(t, busy || p->out ? now + 1000 : p->next_try_ms);
		return t;
	}
	p->backoff_ms = p->backoff_ms ? (p->backoff_ms * 2 > 5000 ? 5000 : p->backoff_ms * 2) : 500;
	p->next_try_ms = now + (uint64_t)p->backoff_ms + (uint64_t)(rand() % 2000);
	ps = ps_new(p->section, p->tid);
	if (!ps) {
		task_set_expire(t, p->next_try_ms);
		return t;
	}
	ps->peer = p;
	atomic_fetch_add_explicit(&p->new_conn, 1, memory_order_relaxed);
	atomic_store_explicit(&p->appstate, 1, memory_order_relaxed);
	if (conn_connect(&ps->c, &p->addr.ss, p->addr.len) < 0) {
		peer_set_status(p, PEER_ST_CONNREFUSED);
		ps->peer = NULL;
		ps_free(ps);
		task_set_expire(t, p->next_try_ms);
		return t;
	}
	p->out = ps;
	ps->state = PS_CONNECTING;
	ps->deadline = now + PEERS_HELLO_MS;
	task_set_expire(ps->task, ps->deadline);
	task_wakeup(ps->task, TASK_WOKEN_OTHER);
	task_set_expire(t, now + 1000);
	return t;
}

/* ------------------------------------------------------------------ reload */

/* Where the local peer listens, as a connectable address (an address
 * bound to any interface is reached on the loopback). */
static void local_address(struct peers *s)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const struct bind_conf *bc;
	int fd = -1;

	if (list_empty(&s->binds))
		return;
	bc = list_elem(s->binds.next, struct bind_conf, list);
	if (!bc->lst)
		return;
	fd = bc->lst->shared_fd;
	for (int i = 0; fd < 0 && i < global.nbthread; i++)
		fd = bc->lst->fds[i];
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		if (in->sin_addr.s_addr == htonl(INADDR_ANY))
			in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr))
			in6->sin6_addr = in6addr_loopback;
	} else if (ss.ss_family != AF_UNIX) {
		return;
	}
	s->local_ss = ss;
	s->local_sslen = sl;
}

/* The old process of a reload connects to its own peer address, where its
 * successor now listens, and teaches it every table (HAProxy's local
 * resync). It counts as an active connection meanwhile, so that the soft
 * stop waits for it, 10 s at most. */
static struct task *local_teach_start(struct task *t, void *ctx, unsigned int state)
{
	uint64_t now = peers_now_ms();

	(void)ctx;
	(void)state;
	for (struct peers *s = peers_first(); s; s = s->next) {
		struct peer_sess *ps;

		if (s->disabled || !s->local || !s->local_sslen)
			continue;
		ps = ps_new(s, th_ctx->tid);
		if (!ps)
			continue;
		if (!ps->ntbl) {
			ps_free(ps);
			continue;
		}
		ps->peer = s->local;
		ps->local_teach = 1;
		atomic_fetch_add(&global.actconn, 1);
		if (conn_connect(&ps->c, &s->local_ss, s->local_sslen) < 0) {
			ps_free(ps);
			continue;
		}
		ps->state = PS_CONNECTING;
		ps->deadline = now + PEERS_HELLO_MS;
		ps->teach_deadline = now + 10000;
		task_set_expire(ps->task, ps->deadline);
		task_wakeup(ps->task, TASK_WOKEN_OTHER);
	}
	task_destroy(t);
	return NULL;
}

static void peers_soft_stop(int tid)
{
	struct task *t;

	if (tid != 0 || !peers_first())
		return;
	/* a moment later: this process's listeners are closed by then, so
	 * the connection reaches the new process */
	t = task_new(local_teach_start, NULL, tid, TC_NORMAL, "peer_local_teach");
	if (t)
		task_set_expire(t, peers_now_ms() + 100);
}

static struct listener_stop_hook peers_stop_hook = { .fn = peers_soft_stop };

static int peers_thread_init(int tid)
{
	int i = 0;

	if (tid == 0)
		for (struct peers *s = peers_first(); s; s = s->next)
			if (!s->disabled && s->local)
				local_address(s);

	for (struct peers *s = peers_first(); s; s = s->next) {
		if (s->disabled || !s->local)
			continue;
		for (struct peer *p = s->peers; p; p = p->next, i++) {
			if (p->local || !p->has_addr)
				continue;
			if (i % global.nbthread != tid)
				continue;
			p->tid = tid;
			p->task = task_new(peer_connector, p, tid, TC_NORMAL, "peer_connect");
			if (!p->task)
				return -1;
			task_set_expire(p->task, peers_now_ms() + 10);
		}
	}
	return 0;
}

static void peers_thread_deinit(int tid)
{
	for (struct peers *s = peers_first(); s; s = s->next)
		for (struct peer *p = s->peers; p; p = p->next)
			if (p->task && p->tid == tid) {
				task_destroy(p->task);
				p->task = NULL;
			}
}

static struct thread_init_hook peers_hook = {
	.fn = peers_thread_init,
	.deinit = peers_thread_deinit,
};

__attribute__((constructor)) static void peers_register(void)
{
	thread_register_init(&peers_hook);
	listener_register_stop(&peers_stop_hook);
}
