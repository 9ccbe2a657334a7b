/* Expert CLI commands that prove the watchdog works: `debug dev loop MS`
 * burns CPU in the calling thread for MS milliseconds without returning to
 * the event loop (the watchdog warns after one period and aborts after two),
 * and `debug dev panic` triggers the dump-and-abort path at once. Both need
 * `expert-mode on` on an admin-level socket. `debug dev loop MS lock` does
 * the same while holding a named lock of its own ("other:debug"), so that
 * the watchdog's dump can be seen to name the locks a stuck thread holds. */
#include <stdlib.h>
#include <string.h>
#include <sluice/core/clock.h>
#include <sluice/core/lock.h>
#include <sluice/core/wdt.h>
#include <sluice/mgmt/cli.h>

static struct sl_lock debug_lock = SL_LOCK_INIT(LK_OTHER, "debug");

static int cli_debug_loop(char **args, int nargs, struct cli_out *out, int level)
{
	char *end;
	long ms;
	uint64_t until;
	volatile uint64_t spins = 0;
	int with_lock = nargs > 4 && strcmp(args[4], "lock") == 0;

	if (nargs < 4 || (ms = strtol(args[3], &end, 10)) <= 0 || *end || ms > 600000 ||
	    (nargs > 4 && !with_lock)) {
		cli_printf(out, "usage: debug dev loop <ms> [lock] (1..600000)\n");
		return -1;
	}
	if (with_lock)
		lock_take(&debug_lock);
	until = clock_mono_ms() + (uint64_t)ms;
	while (clock_mono_ms() < until)
		spins++;
	if (with_lock)
		lock_release(&debug_lock);
	cli_printf(out, "looped for %ld ms\n", ms);
	return 0;
}

static int cli_debug_panic(char **args, int nargs, struct cli_out *out, int level)
{
	wdt_panic("panic requested on the CLI (debug dev panic)");
}

static const struct cli_kw debug_kws[] = {
	{ { "debug", "dev", "loop" }, CLI_LEVEL_EXPERT, cli_debug_loop,
	  "debug dev loop <ms> [lock]              : burn CPU in this thread (expert)" },
	{ { "debug", "dev", "panic" }, CLI_LEVEL_EXPERT, cli_debug_panic,
	  "debug dev panic                         : dump all threads and abort (expert)" },
	{ { NULL } }
};
CLI_REGISTER(debug_kws)
