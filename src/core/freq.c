/* Frequency counters: see include/sluice/core/freq.h. */
#include <sluice/core/freq.h>


/* Rotates the counter to the period that holds <now> if it is past the
 * current one. The low bit of <tick> serialises rotations; adders never
 * wait for it (an event that lands during a rotation may count in either
 * period, which the estimate tolerates). */
static void frq_rotate(struct freq_ctr *f, uint32_t period, uint32_t now)
{
	uint32_t tick = atomic_load_explicit(&f->tick, memory_order_acquire);
	uint32_t elapsed, cur;

	/* a period of 0 (accepted, as by HAProxy) never rotates: its rate is
	 * the count since the entry was created */
	if ((tick & 1) || !period)
		return;
	elapsed = now - tick;
	if ((int32_t)elapsed < 0 || elapsed < period)
		return;
	if (!atomic_compare_exchange_strong(&f->tick, &tick, tick | 1))
		return;
	cur = atomic_exchange_explicit(&f->curr, 0, memory_order_relaxed);
	atomic_store_explicit(&f->prev, elapsed >= 2 * period ? 0 : cur, memory_order_relaxed);
	/* the new period starts at a multiple of <period> after the old one */
	tick += elapsed - elapsed % period;
	atomic_store_explicit(&f->tick, tick & ~1u, memory_order_release);
}

void freq_ctr_add(struct freq_ctr *f, uint32_t period, uint32_t now, uint32_t n)
{
	now &= ~1u;
	frq_rotate(f, period, now);
	atomic_fetch_add_explicit(&f->curr, n, memory_order_relaxed);
}

/* HAProxy's read_freq_ctr_period(): curr + prev * remaining / period, the
 * previous period counting for what is left of the current one. */
uint32_t freq_ctr_read(struct freq_ctr *f, uint32_t period, uint32_t now)
{
	uint32_t tick = atomic_load_explicit(&f->tick, memory_order_acquire) & ~1u;
	uint64_t curr = atomic_load_explicit(&f->curr, memory_order_relaxed);
	uint64_t prev = atomic_load_explicit(&f->prev, memory_order_relaxed);
	int32_t elapsed = (int32_t)((now & ~1u) - tick);

	if (!period)
		return (uint32_t)curr;
	if (elapsed < 0)   /* another thread's clock is a little ahead */
		elapsed = 0;
	if ((uint32_t)elapsed >= 2 * period)
		return 0;
	if ((uint32_t)elapsed >= period) {
		/* not rotated yet: the current period is the previous one */
		prev = curr;
		curr = 0;
		elapsed -= (int32_t)period;
	}
	return (uint32_t)(curr + prev * (uint64_t)(period - (uint32_t)elapsed) / period);
}

void freq_ctr_set(struct freq_ctr *f, uint32_t now, uint32_t v)
{
	atomic_store_explicit(&f->tick, now & ~1u, memory_order_relaxed);
	atomic_store_explicit(&f->prev, 0, memory_order_relaxed);
	atomic_store_explicit(&f->curr, v, memory_order_relaxed);
}


uint32_t freq_ctr_wait(struct freq_ctr *f, uint32_t period, uint32_t now, uint32_t limit)
{
	uint32_t lo = 0, hi = 2 * period;   /* two periods on, the estimate is 0 */

	if (!period || freq_ctr_read(f, period, now) < limit)
		return 0;
	/* the estimate only decreases while no event comes: bisect */
	while (lo + 1 < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (freq_ctr_read(f, period, now + mid) < limit)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* The estimate of <f> for a current count <curr> (other fields as loaded). */
static uint32_t estimate(uint32_t tick, uint64_t curr, uint64_t prev, uint32_t period,
                         uint32_t now)
{
	int32_t elapsed = (int32_t)((now & ~1u) - (tick & ~1u));

	if (!period)
		return (uint32_t)curr;
	if (elapsed < 0)
		elapsed = 0;
	if ((uint32_t)elapsed >= 2 * period)
		return 0;
	if ((uint32_t)elapsed >= period) {
		prev = curr;
		curr = 0;
		elapsed -= (int32_t)period;
	}
	return (uint32_t)(curr + prev * (uint64_t)(period - (uint32_t)elapsed) / period);
}

int freq_ctr_try_add(struct freq_ctr *f, uint32_t period, uint32_t now, uint32_t limit)
{
	now &= ~1u;
	for (;;) {
		uint32_t tick, curr, prev;

		frq_rotate(f, period, now);
		tick = atomic_load_explicit(&f->tick, memory_order_acquire);
		curr = atomic_load_explicit(&f->curr, memory_order_relaxed);
		prev = atomic_load_explicit(&f->prev, memory_order_relaxed);
		if (estimate(tick, curr, prev, period, now) >= limit)
			return 0;
		/* the count did not move since it was judged: the event fits */
		if (atomic_compare_exchange_weak_explicit(&f->curr, &curr, curr + 1,
		                                          memory_order_relaxed,
		                                          memory_order_relaxed))
			return 1;
	}
}

void freq_ctr_undo(struct freq_ctr *f)
{
	uint32_t curr = atomic_load_explicit(&f->curr, memory_order_relaxed);

	/* after a rotation the event may be in the previous period: then
	 * nothing is taken back (the estimate errs on the strict side) */
	while (curr && !atomic_compare_exchange_weak_explicit(&f->curr, &curr, curr - 1,
	                                                      memory_order_relaxed,
	                                                      memory_order_relaxed))
		;
}

