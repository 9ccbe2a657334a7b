/* Watchdog: see src/core/wdt.c. */
#ifndef SLUICE_CORE_WDT_H
#define SLUICE_CORE_WDT_H

extern int wdt_period_ms;   /* tune.watchdog.period; 0 disables */

/* Arms the calling thread's CPU-time watchdog timer and installs the
 * backtrace handler. Returns 0 or -1. */
int  wdt_init_thread(void);
void wdt_deinit_thread(void);

/* Dumps every thread (state and backtrace) and aborts. */
void wdt_panic(const char *why) __attribute__((noreturn));

#endif
