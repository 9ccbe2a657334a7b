/* Load balancing: choosing a server for a new session.
 *
 * Candidates are the usable active servers (admin state ready, weight > 0);
 * when there is none, the usable backup servers: all of them with
 * `option allbackups`, otherwise the first one declared.
 *
 * Locking: the balancer's own state (lb_cur accumulators, rotation points)
 * is protected by the backend's lb_lock. The work done under it is bounded by
 * the number of servers of the backend, never by the number of connections.
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
		"roundrobin", "static-rr", "leastconn", "first", "source", "random"
	};

	return algo >= 0 && algo <= LB_RANDOM ? names[algo] : "?";
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

/* Fills <c> with the candidates. Returns their number. */
static int candidates(struct proxy *be, struct server *avoid, struct server **c)
{
	int n = 0, navoid = 0;

	for (int pass = 0; pass < 2 && !n; pass++) {
		for (int i = 0; i < be->nsrv && n < LB_MAX_CANDIDATES; i++) {
			struct server *s = be->srv[i];

			if (s->backup != pass || !weight_of(be, s))
				continue;
			c[n++] = s;
			if (pass == 1 && !(be->options & PX_O_ALLBACKUPS))
				break;
		}
	}
	if (avoid && n > 1) {
		for (int i = 0; i < n; i++) {
			if (c[i] == avoid) {
				c[i] = c[--n];
				navoid = 1;
				break;
			}
		}
	}
	(void)navoid;
	return n;
}

/* Smooth weighted round robin: every candidate gains its weight, the
 * largest accumulator wins and pays back the total. Full servers are
 * skipped for this pick. */
static struct server *pick_rr(struct proxy *be, struct server **c, int n)
{
	struct server *best;
	int total = 0;

	for (int i = 0; i < n; i++) {
		int w = weight_of(be, c[i]);

		c[i]->lb_cur += w;
		total += w;
	}
	while (n > 0) {
		int bi = 0;

		for (int i = 1; i < n; i++)
			if (c[i]->lb_cur > c[bi]->lb_cur)
				bi = i;
		best = c[bi];
		if (srv_take_slot(best)) {
			best->lb_cur -= total;
			return best;
		}
		c[bi] = c[--n];
	}
	return NULL;
}

/* Fewest slots in use relative to weight; ties rotate after the last pick. */
static struct server *pick_leastconn(struct proxy *be, struct server **c, int n)
{
	while (n > 0) {
		int bi = -1;
		long long bkey = 0;
		int start = 0;

		for (int i = 0; i < n; i++)
			if (c[i] == be->lb_last)
				start = i + 1;
		for (int k = 0; k < n; k++) {
			int i = (start + k) % n;
			long long key = (long long)atomic_load(&c[i]->served) * SRV_WEIGHT_MAX /
			                weight_of(be, c[i]);

			if (bi < 0 || key < bkey) {
				bi = i;
				bkey = key;
			}
		}
		if (srv_take_slot(c[bi])) {
			be->lb_last = c[bi];
			return c[bi];
		}
		c[bi] = c[--n];
	}
	return NULL;
}

static struct server *pick_first(struct server **c, int n)
{
	for (int i = 0; i < n; i++)
		if (srv_take_slot(c[i]))
			return c[i];
	return NULL;
}

/* Map-based source hashing: the same client address always maps to the same
 * server while the set of candidates and their weights do not change. */
static struct server *pick_source(struct proxy *be, struct server **c, int n,
                                  const struct sockaddr_storage *src)
{
	uint32_t h = addr_hash_host(src);
	int total = 0, slot;

	for (int i = 0; i < n; i++)
		total += weight_of(be, c[i]);
	slot = (int)(h % (uint32_t)total);
	for (int i = 0; i < n; i++) {
		slot -= weight_of(be, c[i]);
		if (slot < 0)
			return c[i];
	}
	return c[n - 1];
}

/* random(<draws>): draw <draws> servers by weight, keep the least loaded. */
static struct server *pick_random(struct proxy *be, struct server **c, int n)
{
	while (n > 0) {
		int total = 0, bi = -1;

		for (int i = 0; i < n; i++)
			total += weight_of(be, c[i]);
		for (int d = 0; d < be->random_draws; d++) {
			int slot = (int)(lb_rand() % (uint64_t)total), i;

			for (i = 0; i < n - 1; i++) {
				slot -= weight_of(be, c[i]);
				if (slot < 0)
					break;
			}
			if (bi < 0 || atomic_load(&c[i]->served) < atomic_load(&c[bi]->served))
				bi = i;
		}
		if (srv_take_slot(c[bi]))
			return c[bi];
		c[bi] = c[--n];
	}
	return NULL;
}

enum lb_result lb_pick(struct proxy *be, const struct sockaddr_storage *src,
                       struct server *avoid, struct server **out)
{
	struct server *cand[LB_MAX_CANDIDATES];
	struct server *s = NULL;
	int n;

	*out = NULL;
	pthread_mutex_lock(&be->lb_lock);
	n = candidates(be, avoid, cand);
	if (!n) {
		pthread_mutex_unlock(&be->lb_lock);
		return LB_NOSRV;
	}
	switch (be->lb_algo) {
	case LB_ROUNDROBIN:
	case LB_STATIC_RR:
		s = pick_rr(be, cand, n);
		break;
	case LB_LEASTCONN:
		s = pick_leastconn(be, cand, n);
		break;
	case LB_FIRST:
		s = pick_first(cand, n);
		break;
	case LB_RANDOM:
		s = pick_random(be, cand, n);
		break;
	case LB_SOURCE:
		s = pick_source(be, cand, n, src);
		pthread_mutex_unlock(&be->lb_lock);
		*out = s;
		return srv_take_slot(s) ? LB_OK : LB_QUEUE_SRV;
	}
	pthread_mutex_unlock(&be->lb_lock);
	*out = s;
	return s ? LB_OK : LB_QUEUE_BE;
}
