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
/* Milliseconds from <now> until the rate falls below <limit> if no event
 * comes (0 when it already is), bounded by the period. */
uint32_t freq_ctr_wait(struct freq_ctr *f, uint32_t period, uint32_t now, uint32_t limit);

#endif
