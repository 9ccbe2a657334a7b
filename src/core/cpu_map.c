/* cpu-map [auto:]<process-set>[/<thread-set>] <cpu-set>...: threads bound to
 * CPUs (HAProxy 2.6 manual, 3.1). sluice is one process: a line whose
 * process set does not hold process 1 is ignored, as HAProxy ignores the
 * processes above 1. Later lines replace earlier ones for the threads they
 * name. With "auto:", the n-th thread of the set gets the n-th CPU of the
 * CPU sets, which must be as many.
 *
 * The masks are written at configuration time; each thread reads its own
 * once, from its init hook, and binds itself (pthread_setaffinity_np).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/core/thread.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_cpu_map(KW_ARGS);

static const struct cfg_kw cpu_map_kws[] = {
	{ "cpu-map", NULL, CFG_SEC_GLOBAL, kw_cpu_map },
	{ NULL }
};
CFG_REGISTER(cpu_map_kws)

/* referenced by global_tune.c: see its anchor */
const int core_cpu_map_anchor;

/* CPUs of thread n (bit i: CPU i), 0: not bound */
static uint64_t thread_cpus[64];

/* all|odd|even|N|N-|N-M over 1..64; 0 or -1 */
static int parse_set(const char *s, int lo_min, int hi_max, uint64_t *out)
{
	char *end;
	long lo, hi;

	*out = 0;
	if (!strcmp(s, "all") || !strcmp(s, "odd") || !strcmp(s, "even")) {
		for (int i = lo_min; i <= hi_max; i++)
			if (s[0] == 'a' || (s[0] == 'o' ? i % 2 : !(i % 2)))
				*out |= 1ull << (i - lo_min);
		return 0;
	}
	lo = strtol(s, &end, 10);
	if (end == s || lo < lo_min || lo > hi_max)
		return -1;
	hi = lo;
	if (*end == '-') {
		s = end + 1;
		hi = *s ? strtol(s, &end, 10) : hi_max;
		if (*s && (end == s || hi < lo || hi > hi_max))
			return -1;
		if (!*s)
			end = (char *)s;
	}
	if (*end)
		return -1;
	for (long i = lo; i <= hi; i++)
		*out |= 1ull << (i - lo_min);
	return 0;
}

static int kw_cpu_map(KW_ARGS)
{
	const char *spec = nargs > 1 ? args[1] : "";
	uint64_t procs, threads = ~0ull, cpus = 0;
	char set[64];
	const char *slash;
	int automap = 0;

	if (nargs < 3)
		return errmsg_set(err, errlen, "cpu-map expects a process number  ('all', 'odd', "
		                  "'even', a number from 1 to 64 or a range),  followed by a list of "
		                  "CPU ranges with numbers from 0 to 63.");
	if (!strncmp(spec, "auto:", 5)) {
		automap = 1;
		spec += 5;
	}
	slash = strchr(spec, '/');
	snprintf(set, sizeof(set), "%.*s", slash ? (int)(slash - spec) : (int)strlen(spec), spec);
	if (parse_set(set, 1, 64, &procs) < 0)
		return errmsg_set(err, errlen, "cpu-map : '%s' is not a valid number/range.", set);
	if (slash && parse_set(slash + 1, 1, 64, &threads) < 0)
		return errmsg_set(err, errlen, "cpu-map : '%s' is not a valid number/range.",
		                  slash + 1);
	for (int i = 2; i < nargs; i++) {
		uint64_t c;

		if (parse_set(args[i], 0, 63, &c) < 0 || !strcmp(args[i], "all") ||
		    !strcmp(args[i], "odd") || !strcmp(args[i], "even"))
			return errmsg_set(err, errlen, "cpu-map : '%s' is not a CPU range.", args[i]);
		cpus |= c;
	}
	if (automap && __builtin_popcountll(threads) != __builtin_popcountll(cpus))
		return errmsg_set(err, errlen, "cpu-map : PROC/THREAD range and CPU sets must have "
		                  "the same size to be automatically bound");
	if (!(procs & 1))
		return 0;   /* other processes: there are none */
	for (int t = 0, k = 0; t < 64; t++) {
		if (!(threads & (1ull << t)))
			continue;
		if (automap) {
			/* the k-th CPU of the sets, from the lowest */
			uint64_t c = cpus;

			for (int j = 0; j < k; j++)
				c &= c - 1;
			thread_cpus[t] = c & -c;
			k++;
		} else
			thread_cpus[t] = cpus;
	}
	return 0;
}

static int cpu_map_thread_init(int tid)
{
	cpu_set_t set;

	if (tid >= 64 || !thread_cpus[tid])
		return 0;
	CPU_ZERO(&set);
	for (int i = 0; i < 64; i++)
		if (thread_cpus[tid] & (1ull << i))
			CPU_SET(i, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
		fprintf(stderr, "[WARNING] cpu-map: thread %d cannot be bound to its CPUs (not "
		        "available to this process?): it runs on any.\n", tid + 1);
	return 0;
}

static struct thread_init_hook cpu_map_hook = { .fn = cpu_map_thread_init };

__attribute__((constructor)) static void cpu_map_register(void)
{
	thread_register_init(&cpu_map_hook);
}
