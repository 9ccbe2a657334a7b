/* Frequency counters (HAProxy's freq_ctr): events of the current period and
 * of the previous one; the rate read at a date is the current count plus
 * the previous one weighted by what is left of the period. Used by stick
 * tables (rates over any period) and by the accept limits (per second).
 *
 * Lock-free: any thread may add or read. <tick> is the start of the current
 * period in ms of the loop clock (32 bits, wrapping), even; its low bit is a
 * tiny lock held while a period is rotated. An event that lands during a
 * rotation may count in either period, which the estimate tolerates.
 */
#ifndef SLUICE_CORE_FREQ_H
#define SLUICE_CORE_FREQ_H

#include <stdatomic.h>
#include <stdint.h>

struct freq_ctr {
	_Atomic uint32_t tick;
	_Atomic uint32_t curr;
	_Atomic uint32_t prev;
};

/* Adds <n> events at date <now> (ms) to a counter of periods of <period> ms
 * (0: never rotates, the rate is the count). */
void freq_ctr_add(struct freq_ctr *f, uint32_t period, uint32_t now, uint32_t n);
/* curr + prev * remaining / period at date <now>. */
uint32_t freq_ctr_read(struct freq_ctr *f, uint32_t period, uint32_t now);
/* Starts the counter over at <now> with <v> events. */
void freq_ctr_set(struct freq_ctr *f, uint32_t now, uint32_t v);
/* Adds one event if the rate stays below <limit> with it: 1, or 0 when the
 * limit is reached (nothing added). Exact across threads: the count is
 * judged and moved in one compare-and-swap. */
int freq_ctr_try_add(struct freq_ctr *f, uint32_t period, uint32_t now, uint32_t limit);
/* Takes back an event freq_ctr_try_add() added (it did not happen). */
void freq_ctr_undo(struct freq_ctr *f);
/* Milliseconds from <now> until the rate falls below <limit> if no event
 * comes (0 when it already is), at most two periods. */
uint32_t freq_ctr_wait(struct freq_ctr *f, uint32_t period, uint32_t now, uint32_t limit);

#endif
