/* Log2 latency histograms (as DTrace's quantize) and their display.
 *
 * Why shared atomic buckets and not per-thread copies: sluice records a
 * duration a few times per session (queue wait, connect, session end), not
 * per byte or per event, and the same sessions already add to the server's
 * and backend's shared counters (counters.h) with relaxed atomic adds. A
 * per-thread copy of every histogram would multiply their memory by the
 * number of threads for every server; the buckets a session touches are
 * spread over several cache lines. Measured (x86-64, 2 CPUs): a record
 * costs 10-14 ns, 25-30 ns when two threads do nothing but record into the
 * same histogram; a sliding-average update 15-20 ns, ~50 ns in the same
 * duel. A session makes at most 3 records and 6 updates.
 *
 * Reading is a racy copy of the buckets (hist_snapshot), from which
 * percentiles are estimated: a value is known to lie in its bucket, so an
 * estimate is at most a factor of two off; interpolating linearly inside
 * the bucket usually does much better.
 */
#include <stdio.h>
#include <string.h>
#include <sluice/core/hist.h>

void hist_snapshot(const struct hist *h, struct hist_snap *s)
{
	memset(s, 0, sizeof(*s));
	hist_accumulate(s, h);
}

void hist_accumulate(struct hist_snap *s, const struct hist *h)
{
	for (int i = 0; i < HIST_BUCKETS; i++) {
		uint64_t v = atomic_load_explicit(&((struct hist *)h)->b[i], memory_order_relaxed);

		s->b[i] += v;
		s->total += v;
	}
}

uint64_t hist_percentile(const struct hist_snap *s, double p)
{
	double rank;
	uint64_t seen = 0;

	if (!s->total)
		return 0;
	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	rank = p * (double)s->total;
	for (int i = 0; i < HIST_BUCKETS; i++) {
		uint64_t lo, hi;

		if (!s->b[i] || (double)(seen + s->b[i]) < rank) {
			seen += s->b[i];
			continue;
		}
		if (!i)
			return 0;
		lo = hist_bucket_low(i);
		hi = lo * 2;
		return lo + (uint64_t)((double)(hi - lo) * (rank - (double)seen) / (double)s->b[i]);
	}
	return hist_max_bound(s);
}

uint64_t hist_max_bound(const struct hist_snap *s)
{
	for (int i = HIST_BUCKETS - 1; i > 0; i--)
		if (s->b[i])
			return hist_bucket_low(i) * 2;
	return s->b[0] ? 1 : 0;
}

#define BAR_WIDTH 40

size_t hist_render(const struct hist_snap *s, char *buf, size_t len)
{
	static const char dashes[] = "-------------";
	int first = -1, last = -1;
	size_t off = 0;
	int n;

#define OUT(...) do { \
		n = snprintf(buf + off, len - off, __VA_ARGS__); \
		if (n < 0 || (size_t)n >= len - off) \
			return len ? len - 1 : 0; \
		off += (size_t)n; \
	} while (0)

	if (!len)
		return 0;
	buf[0] = '\0';
	for (int i = 0; i < HIST_BUCKETS; i++) {
		if (s->b[i]) {
			if (first < 0)
				first = i;
			last = i;
		}
	}
	OUT("%16s  %s Distribution %s %s\n", "value", dashes, dashes, "count");
	if (first < 0)
		return off;
	if (first > 0)
		first--;
	if (last < HIST_BUCKETS - 1)
		last++;
	for (int i = first; i <= last; i++) {
		char bar[BAR_WIDTH + 1];
		int w = (int)((s->b[i] * BAR_WIDTH + s->total / 2) / s->total);

		if (w > BAR_WIDTH)
			w = BAR_WIDTH;
		memset(bar, '@', (size_t)w);
		memset(bar + w, ' ', (size_t)(BAR_WIDTH - w));
		bar[BAR_WIDTH] = '\0';
		OUT("%16llu |%s %llu\n", (unsigned long long)hist_bucket_low(i), bar,
		    (unsigned long long)s->b[i]);
	}
#undef OUT
	return off;
}
