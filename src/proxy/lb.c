/* Load balancing: choosing a server for a new session.
 *
 * Candidates are the usable active servers (admin state ready, weight > 0);
 * when there is none, the usable backup servers: all of them with
 * `option allbackups`, otherwise the first one declared.
 *
 * Locking: the balancer's own state (the servers' lb_cur and rr_static_pos,
 * the backend's lb_rr_static_next and lb_last) is protected by the backend's
 * lb_lock (struct sl_lock, kind "lb" in `show locks`). The work done under it
 * is bounded by the number of servers of the backend, never by the number of
 * connections.
 * Slots are taken with srv_take_slot() (a CAS), so a full server is skipped
 * without waiting.
 *
 * Hash-based algorithms (source, uri, url_param, hdr) map a key to a server
 * in one of two ways (`hash-type`):
 *   map-based   the key modulo the total weight of the candidates picks a
 *               server: smooth, but most keys move when the set changes;
 *   consistent  a ring of points, 16 per unit of weight, each server's
 *               points at fixed places (HAProxy's: the avalanche hash of
 *               id * 4096 + point number), and the key goes to the closest
 *               point: when a server leaves, only its keys move.
 * The ring (struct lb_chash, one per backend, found through lb_hash_ent())
 * is protected by lb_lock like the rest of the balancer state. It records
 * the candidates and weights it was built from; a pick that sees another
 * set (a weight or state changed from the CLI) rebuilds it first. That
 * costs O(points log points) under the lock, once per change of the farm,
 * never per connection; a pick otherwise costs O(servers) to take the
 * snapshot and O(log points) to search.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/clock.h>
#include <sluice/core/sched.h>
#include <sluice/expr/hash.h>
#include <sluice/net/addr.h>
#include <sluice/proxy/lb.h>
#include <sluice/proxy/lb_hash.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>

#define LB_MAX_CANDIDATES 4096

/* Points of the consistent ring per unit of weight, and the span of point
 * numbers reserved per server id (the largest weight's points), as HAProxy
 * places them: the same ids and weights give the same ring. */
#define CHASH_PTS_PER_WEIGHT  16
#define CHASH_ID_RANGE        (SRV_WEIGHT_MAX * CHASH_PTS_PER_WEIGHT)

struct lb_chash_pt {
	uint32_t key;
	struct server *srv;
};

struct lb_chash {
	struct lb_chash_pt *pts;     /* sorted by key */
	int npts, cap;
	/* the candidates the ring was built from (cap: the backend's servers) */
	struct server **sig_srv;
	int *sig_w;
	int nsig;                    /* -1: not built yet */
};

const char *lb_algo_name(int algo)
{
	static const char *const names[] = {
		"roundrobin", "static-rr", "leastconn", "first", "source", "random",
		"uri", "url_param", "hdr"
	};

	return algo >= 0 && algo <= LB_HDR ? names[algo] : "?";
}

static uint64_t lb_rand(void)
{
	static __thread uint64_t x;

	if (!x)
		x = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&x ^ clock_mono_ns();
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static int weight_of(const struct proxy *be, const struct server *s)
{
	if (!srv_is_usable(s))
		return 0;
	return be->lb_algo == LB_STATIC_RR ? s->iweight : srv_lb_weight(s);
}

/* The servers a pick chooses among, each with its weight read once: the
 * CLI may change weights and states at any time, so every decision of one
 * pick uses this snapshot (never a second read that could now be 0). */
struct lb_cands {
	struct server *s[LB_MAX_CANDIDATES];
	int w[LB_MAX_CANDIDATES];
	int n;
	int total;
};

static void cand_drop(struct lb_cands *c, int i)
{
	c->total -= c->w[i];
	c->n--;
	c->s[i] = c->s[c->n];
	c->w[i] = c->w[c->n];
}

/* Leaves <avoid> out of <c> when another candidate remains (redispatch). */
static void cand_avoid(struct lb_cands *c, const struct server *avoid)
{
	if (!avoid || c->n < 2)
		return;
	for (int i = 0; i < c->n; i++) {
		if (c->s[i] == avoid) {
			cand_drop(c, i);
			return;
		}
	}
}

/* Fills <c> with the candidates. Returns their number. */
static int candidates(struct proxy *be, struct server *avoid, struct lb_cands *c)
{
	c->n = c->total = 0;
	for (int pass = 0; pass < 2 && !c->n; pass++) {
		for (int i = 0; i < be->nsrv && c->n < LB_MAX_CANDIDATES; i++) {
			struct server *s = be->srv[i];
			int w;

			if (s->backup != pass || !(w = weight_of(be, s)))
				continue;
			c->s[c->n] = s;
			c->w[c->n++] = w;
			c->total += w;
			if (pass == 1 && !(be->options & PX_O_ALLBACKUPS))
				break;
		}
	}
	cand_avoid(c, avoid);
	return c->n;
}

/* Smooth weighted round robin: every candidate gains its weight, the
 * largest accumulator wins and pays back the total. Full servers are
 * skipped for this pick. */
static struct server *pick_rr(struct lb_cands *c)
{
	int total = c->total;

	for (int i = 0; i < c->n; i++)
		c->s[i]->lb_cur += c->w[i];
	while (c->n > 0) {
		int bi = 0;
		struct server *best;

		for (int i = 1; i < c->n; i++)
			if (c->s[i]->lb_cur > c->s[bi]->lb_cur)
				bi = i;
		best = c->s[bi];
		if (srv_take_slot(best)) {
			best->lb_cur -= total;
			return best;
		}
		cand_drop(c, bi);
	}
	return NULL;
}

/* Fewest slots in use relative to weight; ties rotate after the last pick. */
static struct server *pick_leastconn(struct proxy *be, struct lb_cands *c)
{
	while (c->n > 0) {
		int bi = -1, start = 0;
		long long bkey = 0;

		for (int i = 0; i < c->n; i++)
			if (c->s[i] == be->lb_last)
				start = i + 1;
		for (int k = 0; k < c->n; k++) {
			int i = (start + k) % c->n;
			long long key = (long long)atomic_load(&c->s[i]->served) * SRV_WEIGHT_MAX /
			                c->w[i];

			if (bi < 0 || key < bkey) {
				bi = i;
				bkey = key;
			}
		}
		if (srv_take_slot(c->s[bi])) {
			be->lb_last = c->s[bi];
			return c->s[bi];
		}
		cand_drop(c, bi);
	}
	return NULL;
}

static struct server *pick_first(struct lb_cands *c)
{
	for (int i = 0; i < c->n; i++)
		if (srv_take_slot(c->s[i]))
			return c->s[i];
	return NULL;
}

/* Map-based source hashing: the same client address always maps to the same
 * server while the set of candidates and their weights do not change. */
static struct server *pick_hash(struct lb_cands *c, uint32_t h)
{
	int slot = (int)(h % (uint32_t)c->total);

	for (int i = 0; i < c->n; i++) {
		slot -= c->w[i];
		if (slot < 0)
			return c->s[i];
	}
	return c->s[c->n - 1];
}

/* random(<draws>): draw <draws> servers by weight, keep the least loaded. */
static struct server *pick_random(struct proxy *be, struct lb_cands *c)
{
	while (c->n > 0) {
		int bi = -1;

		for (int d = 0; d < be->random_draws; d++) {
			int slot = (int)(lb_rand() % (uint64_t)c->total), i;

			for (i = 0; i < c->n - 1; i++) {
				slot -= c->w[i];
				if (slot < 0)
					break;
			}
			if (bi < 0 || atomic_load(&c->s[i]->served) < atomic_load(&c->s[bi]->served))
				bi = i;
		}
		if (srv_take_slot(c->s[bi]))
			return c->s[bi];
		cand_drop(c, bi);
	}
	return NULL;
}

/* ---- consistent hashing ---- */

int lb_chash_init(struct proxy *be)
{
	struct lb_hash_ent *e = lb_hash_ent(be, 1);
	struct lb_chash *r;
	int cap = 0;

	if (!e)
		return -1;
	if (e->ring)
		return 0;
	for (int i = 0; i < be->nsrv; i++)
		cap += (be->srv[i]->iweight > 0 ? be->srv[i]->iweight : 1) * CHASH_PTS_PER_WEIGHT;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -1;
	r->nsig = -1;
	r->cap = cap ? cap : CHASH_PTS_PER_WEIGHT;
	r->pts = malloc((size_t)r->cap * sizeof(*r->pts));
	r->sig_srv = calloc((size_t)be->nsrv + 1, sizeof(*r->sig_srv));
	r->sig_w = calloc((size_t)be->nsrv + 1, sizeof(*r->sig_w));
	if (!r->pts || !r->sig_srv || !r->sig_w) {
		lb_chash_free(r);
		return -1;
	}
	e->ring = r;
	return 0;
}

void lb_chash_free(struct lb_chash *r)
{
	if (!r)
		return;
	free(r->pts);
	free(r->sig_srv);
	free(r->sig_w);
	free(r);
}

static int chash_pt_cmp(const void *a, const void *b)
{
	const struct lb_chash_pt *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	/* equal keys (rare): a fixed order, so that every build agrees */
	return x->srv->puid - y->srv->puid;
}

/* Rebuilds <r> for the candidates <c> unless it was built for exactly
 * them. Returns 0, or -1 when memory is short (the caller falls back to
 * map-based hashing). Under lb_lock. */
static int chash_sync(struct lb_chash *r, const struct lb_cands *c)
{
	int need = 0, n = 0;

	if (r->nsig == c->n && !memcmp(r->sig_srv, c->s, (size_t)c->n * sizeof(*c->s)) &&
	    !memcmp(r->sig_w, c->w, (size_t)c->n * sizeof(*c->w)))
		return 0;
	for (int i = 0; i < c->n; i++)
		need += c->w[i] * CHASH_PTS_PER_WEIGHT;
	if (need > r->cap) {
		struct lb_chash_pt *p = realloc(r->pts, (size_t)need * sizeof(*p));

		if (!p)
			return -1;
		r->pts = p;
		r->cap = need;
	}
	for (int i = 0; i < c->n; i++) {
		uint32_t base = (uint32_t)c->s[i]->puid * CHASH_ID_RANGE;

		for (int k = 0; k < c->w[i] * CHASH_PTS_PER_WEIGHT; k++)
			r->pts[n++] = (struct lb_chash_pt){ hash_avalanche(base + (uint32_t)k), c->s[i] };
	}
	qsort(r->pts, (size_t)n, sizeof(*r->pts), chash_pt_cmp);
	r->npts = n;
	memcpy(r->sig_srv, c->s, (size_t)c->n * sizeof(*c->s));
	memcpy(r->sig_w, c->w, (size_t)c->n * sizeof(*c->w));
	r->nsig = c->n;
	return 0;
}

/* The server of the point closest to <h> (either side, the previous one on
 * a tie, as HAProxy chooses), then the next points while they belong to
 * <avoid>. */
static struct server *chash_lookup(const struct lb_chash *r, uint32_t h, const struct server *avoid)
{
	int lo = 0, hi = r->npts, next, prev, i;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (r->pts[mid].key < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	next = lo == r->npts ? 0 : lo;
	prev = (lo == 0 ? r->npts : lo) - 1;
	i = h - r->pts[prev].key <= r->pts[next].key - h ? prev : next;
	for (int k = 0; avoid && r->pts[i].srv == avoid && k < r->npts; k++)
		i = (i + 1) % r->npts;
	return r->pts[i].srv;
}

/* A hash-based choice of <h> among <c>, <avoid> skipped when another
 * candidate exists. Under lb_lock. */
static struct server *pick_hashed(struct proxy *be, struct lb_cands *c, uint32_t h,
                                  const struct server *avoid)
{
	if (be->hash_type == LB_HASH_CONSISTENT) {
		struct lb_hash_ent *e = lb_hash_ent(be, 0);

		if (e && e->ring && chash_sync(e->ring, c) == 0 && e->ring->npts)
			return chash_lookup(e->ring, h, c->n > 1 ? avoid : NULL);
	}
	cand_avoid(c, avoid);
	return pick_hash(c, h);
}

static int is_l7_hash(enum lb_algo a)
{
	return a == LB_URI || a == LB_URL_PARAM || a == LB_HDR;
}

enum lb_result lb_pick(struct proxy *be, const struct sockaddr_storage *src,
                       const uint32_t *hkey, struct server *avoid, struct server **out)
{
	struct lb_cands cand;
	struct server *s = NULL;
	int hashed = be->lb_algo == LB_SOURCE || (hkey && is_l7_hash(be->lb_algo));

	*out = NULL;
	lock_take(&be->lb_lock);
	/* a hashed pick keeps <avoid> among the candidates: the consistent
	 * ring is built for the farm, not for one stream's retry */
	if (!candidates(be, hashed ? NULL : avoid, &cand)) {
		lock_release(&be->lb_lock);
		return LB_NOSRV;
	}
	if (hashed) {
		uint32_t h = be->lb_algo == LB_SOURCE ? lb_hash_finish(be, addr_hash_host(src)) : *hkey;

		s = pick_hashed(be, &cand, h, avoid);
		lock_release(&be->lb_lock);
		*out = s;
		return srv_take_slot(s) ? LB_OK : LB_QUEUE_SRV;
	}
	switch (be->lb_algo) {
	case LB_LEASTCONN:
		s = pick_leastconn(be, &cand);
		break;
	case LB_FIRST:
		s = pick_first(&cand);
		break;
	case LB_RANDOM:
		s = pick_random(be, &cand);
		break;
	default:
		/* roundrobin, static-rr, and the request hashes without a key in
		 * the request: round robin, as HAProxy does */
		s = pick_rr(&cand);
		break;
	}
	lock_release(&be->lb_lock);
	*out = s;
	return s ? LB_OK : LB_QUEUE_BE;
}
