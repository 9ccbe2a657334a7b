/* Log2 latency histograms and sliding averages. See src/core/hist.c.
 *
 * A histogram counts values in power-of-two buckets: bucket 0 holds 0,
 * bucket i (i >= 1) holds [2^(i-1), 2^i). Values are microseconds where
 * sluice records times. Buckets are updated with relaxed atomic adds by any
 * thread and read racily (display only).
 */
#ifndef SLUICE_CORE_HIST_H
#define SLUICE_CORE_HIST_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define HIST_BUCKETS 40      /* the last one also holds everything above 2^38 */

struct hist {
	_Atomic uint64_t b[HIST_BUCKETS];
};

static inline int hist_bucket(uint64_t v)
{
	int i;

	if (!v)
		return 0;
	i = 64 - __builtin_clzll(v);
	return i < HIST_BUCKETS ? i : HIST_BUCKETS - 1;
}

/* Lowest value of bucket <i>: 0, 1, 2, 4, 8, ... */
static inline uint64_t hist_bucket_low(int i)
{
	return i ? 1ull << (i - 1) : 0;
}

static inline void hist_record(struct hist *h, uint64_t v)
{
	atomic_fetch_add_explicit(&h->b[hist_bucket(v)], 1, memory_order_relaxed);
}

/* A plain copy to compute on. */
struct hist_snap {
	uint64_t b[HIST_BUCKETS];
	uint64_t total;
};

void hist_snapshot(const struct hist *h, struct hist_snap *s);
/* Adds <h> into <s> (sums of several histograms). */
void hist_accumulate(struct hist_snap *s, const struct hist *h);
/* Estimated value at fraction <p> (0..1) of the samples, interpolated in
 * its bucket; 0 without samples. */
uint64_t hist_percentile(const struct hist_snap *s, double p);
/* Upper bound of the highest non-empty bucket (0 without samples). */
uint64_t hist_max_bound(const struct hist_snap *s);
/* DTrace-style rows ("value  ---- Distribution ---- count"), from one
 * empty bucket below the lowest sample to one above the highest, into
 * <buf>. Returns the length written (truncated to <len> - 1). */
size_t hist_render(const struct hist_snap *s, char *buf, size_t len);

/* Sliding average of the last SWRATE_WINDOW values (the average of all of
 * them until that many were seen), as HAProxy's qtime/ctime/ttime, and the
 * highest value. An update is relaxed loads and one atomic add, never a
 * retry loop except to raise the maximum; concurrent updates may each decay
 * the same old sum, an error of the order of the rounding. */
#define SWRATE_WINDOW 1024

struct swrate {
	_Atomic uint64_t sum;
	_Atomic uint32_t n;        /* samples, counted up to SWRATE_WINDOW */
	_Atomic uint64_t max;      /* highest value ever added */
};

static inline void swrate_add(struct swrate *r, uint64_t v)
{
	uint32_t n = atomic_load_explicit(&r->n, memory_order_relaxed);
	uint64_t sum = atomic_load_explicit(&r->sum, memory_order_relaxed);
	uint64_t mx = atomic_load_explicit(&r->max, memory_order_relaxed);

	if (n < SWRATE_WINDOW)
		n = atomic_fetch_add_explicit(&r->n, 1, memory_order_relaxed);
	/* until the window is full, the sum is the plain sum of the values;
	 * then each value replaces an average one (unsigned wrap-around makes
	 * a negative difference a subtraction) */
	atomic_fetch_add_explicit(&r->sum, v - (n < SWRATE_WINDOW ? 0 : sum / SWRATE_WINDOW),
	                          memory_order_relaxed);
	while (v > mx && !atomic_compare_exchange_weak_explicit(&r->max, &mx, v,
	                                                          memory_order_relaxed,
	                                                          memory_order_relaxed))
		;
}

static inline uint64_t swrate_avg(const struct swrate *r)
{
	uint32_t n = atomic_load_explicit(&((struct swrate *)r)->n, memory_order_relaxed);
	uint64_t sum = atomic_load_explicit(&((struct swrate *)r)->sum, memory_order_relaxed);

	/* an update racing with a reset (clear counters all) may leave the
	 * sum slightly "negative" (wrapped): an average of 0 until the
	 * window absorbs it */
	if (!n || (int64_t)sum < 0)
		return 0;
	if (n > SWRATE_WINDOW)
		n = SWRATE_WINDOW;
	return (sum + n / 2) / n;
}

static inline uint64_t swrate_max(const struct swrate *r)
{
	return atomic_load_explicit(&((struct swrate *)r)->max, memory_order_relaxed);
}

#endif
