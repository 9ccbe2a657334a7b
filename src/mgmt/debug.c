/* Expert CLI commands that prove the watchdog works: `debug dev loop MS`
 * burns CPU in the calling thread for MS milliseconds without returning to
 * the event loop (the watchdog warns after one period and aborts after two),
 * and `debug dev panic` triggers the dump-and-abort path at once. Both need
 * `expert-mode on` on an admin-level socket. */
#include <stdlib.h>
#include <string.h>
#include <sluice/core/clock.h>
#include <sluice/core/wdt.h>
#include <sluice/mgmt/cli.h>

static int cli_debug_loop(char **args, int nargs, struct cli_out *out, int level)
{
	char *end;
	long ms;
	uint64_t until;
	volatile uint64_t spins = 0;

	if (nargs < 4 || (ms = strtol(args[3], &end, 10)) <= 0 || *end || ms > 600000) {
		cli_printf(out, "usage: debug dev loop <ms> (1..600000)\n");
		return -1;
	}
	until = clock_mono_ms() + (uint64_t)ms;
	while (clock_mono_ms() < until)
		spins++;
	cli_printf(out, "looped for %ld ms\n", ms);
	return 0;
}

static int cli_debug_panic(char **args, int nargs, struct cli_out *out, int level)
{
	wdt_panic("panic requested on the CLI (debug dev panic)");
}

static const struct cli_kw debug_kws[] = {
	{ { "debug", "dev", "loop" }, CLI_LEVEL_EXPERT, cli_debug_loop,
	  "debug dev loop <ms>                     : burn CPU in this thread (expert)" },
	{ { "debug", "dev", "panic" }, CLI_LEVEL_EXPERT, cli_debug_panic,
	  "debug dev panic                         : dump all threads and abort (expert)" },
	{ { NULL } }
};
CLI_REGISTER(debug_kws)
