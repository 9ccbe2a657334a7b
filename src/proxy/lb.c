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
 */
#include <stdint.h>
#include <string.h>
#include <sluice/core/clock.h>
#include <sluice/core/sched.h>
#include <sluice/net/addr.h>
#include <sluice/proxy/lb.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>

#define LB_MAX_CANDIDATES 4096

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
	if (avoid && c->n > 1) {
		for (int i = 0; i < c->n; i++) {
			if (c->s[i] == avoid) {
				cand_drop(c, i);
				break;
			}
		}
	}
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

enum lb_result lb_pick(struct proxy *be, const struct sockaddr_storage *src,
                       const uint32_t *hkey, struct server *avoid, struct server **out)
{
	struct lb_cands cand;
	struct server *s = NULL;

	*out = NULL;
	lock_take(&be->lb_lock);
	if (!candidates(be, avoid, &cand)) {
		lock_release(&be->lb_lock);
		return LB_NOSRV;
	}
	switch (be->lb_algo) {
	case LB_ROUNDROBIN:
	case LB_STATIC_RR:
		s = pick_rr(&cand);
		break;
	case LB_LEASTCONN:
		s = pick_leastconn(be, &cand);
		break;
	case LB_FIRST:
		s = pick_first(&cand);
		break;
	case LB_RANDOM:
		s = pick_random(be, &cand);
		break;
	case LB_URI:
	case LB_URL_PARAM:
	case LB_HDR:
		if (!hkey) {
			/* no key in the request: round robin, as HAProxy does */
			s = pick_rr(&cand);
			break;
		}
		s = pick_hash(&cand, *hkey);
		lock_release(&be->lb_lock);
		*out = s;
		return srv_take_slot(s) ? LB_OK : LB_QUEUE_SRV;
	case LB_SOURCE:
		s = pick_hash(&cand, addr_hash_host(src));
		lock_release(&be->lb_lock);
		*out = s;
		return srv_take_slot(s) ? LB_OK : LB_QUEUE_SRV;
	}
	lock_release(&be->lb_lock);
	*out = s;
	return s ? LB_OK : LB_QUEUE_BE;
}
