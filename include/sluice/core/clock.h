/* Time: a monotonic millisecond clock read once per loop iteration into the
 * thread context, and wall-clock helpers for logs. */
#ifndef SLUICE_CORE_CLOCK_H
#define SLUICE_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define TICK_ETERNITY 0   /* an expiry of 0 means "never" */

static inline uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock_mono_ms(void)
{
	return clock_mono_ns() / 1000000ull;
}

/* <a> and <b> are expiry dates (0 = never): the earliest one. */
static inline uint64_t tick_first(uint64_t a, uint64_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

/* now + <ms>, or never when <ms> is 0 (an unset timeout). */
static inline uint64_t tick_add_ifset(uint64_t now, int ms)
{
	return ms > 0 ? now + (uint64_t)ms : TICK_ETERNITY;
}

#endif
