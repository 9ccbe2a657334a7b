/* Watchdog: catches a thread stuck in one loop iteration.
 *
 * Each thread arms a timer on its own CPU-time clock (period
 * tune.watchdog.period, 1 s by default), delivered to that thread only. A
 * thread that sleeps in epoll consumes no CPU, so its timer does not run:
 * an idle thread is never suspected. When the timer fires, the thread is
 * fine if its loop counter moved since the last tick. Otherwise it has
 * burnt a whole period of CPU inside one iteration: the first time it is
 * marked stuck and a warning with its current task and a backtrace is
 * printed; if it is still stuck at the next tick, every thread is asked to
 * print its backtrace, and the process aborts so that a core is left.
 *
 * No loop iteration may legitimately take that long: tasks run in bounded
 * batches, accepts are bounded per wake-up, and no locked section scales
 * with the number of connections or queued streams.
 *
 * Everything in the handlers is async-signal-safe: write(2), a formatter
 * without locale or allocation, and backtrace_symbols_fd() once backtrace()
 * has been called before (which loads libgcc outside any signal).
 */
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>
#include <sluice/core/wdt.h>

#define WDT_SIGNAL   (SIGRTMIN + 1)
#define DUMP_SIGNAL  (SIGRTMIN + 2)

int wdt_period_ms = 1000;
static _Atomic int dumps_done;
static __thread uint64_t last_seq;
static __thread timer_t wdt_timer;
static __thread int wdt_armed;

/* ---- async-signal-safe output ---- */

struct sbuf {
	char b[1024];
	size_t n;
};

static void s_str(struct sbuf *s, const char *str)
{
	while (str && *str && s->n < sizeof(s->b) - 1)
		s->b[s->n++] = *str++;
}

static void s_u64(struct sbuf *s, uint64_t v)
{
	char tmp[24];
	int i = 0;

	do {
		tmp[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && i < (int)sizeof(tmp));
	while (i > 0 && s->n < sizeof(s->b) - 1)
		s->b[s->n++] = tmp[--i];
}

static void s_hex(struct sbuf *s, uint64_t v)
{
	s_str(s, "0x");
	for (int shift = 60; shift >= 0; shift -= 4) {
		int d = (int)(v >> shift) & 0xf;

		if (s->n < sizeof(s->b) - 1)
			s->b[s->n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
	}
}

static void s_flush(struct sbuf *s)
{
	ssize_t r = write(STDERR_FILENO, s->b, s->n);

	(void)r;
	s->n = 0;
}

/* One line on <tc>'s state, as another thread may read it (racy). */
static void s_lock(struct sbuf *s, const struct sl_lock *l)
{
	s_str(s, lock_kind_name(l->kind));
	if (l->name) {
		s_str(s, ":");
		s_str(s, l->name);
	}
	s_str(s, "(");
	s_hex(s, (uint64_t)(uintptr_t)l);
	s_str(s, ")");
}

/* The locks the thread holds and the one it waits for (racy reads of the
 * thread's own notes: good enough for a post-mortem). */
static void describe_locks(struct sbuf *s, int tid)
{
	struct lock_thread_stats *st = lock_stats_of_thread(tid);
	struct sl_lock *w;
	int n;

	if (!st)
		return;
	n = atomic_load_explicit(&st->nheld, memory_order_relaxed);
	s_str(s, " locks_held=");
	if (n <= 0)
		s_str(s, "none");
	for (int i = 0; i < n && i < LOCK_HELD_MAX; i++) {
		struct sl_lock *l = atomic_load_explicit(&st->held[i], memory_order_relaxed);

		if (i)
			s_str(s, ",");
		if (l)
			s_lock(s, l);
	}
	w = atomic_load_explicit(&st->waiting, memory_order_relaxed);
	if (w) {
		s_str(s, " waiting_for=");
		s_lock(s, w);
	}
}

static void describe_thread(struct sbuf *s, struct thread_ctx *tc)
{
	struct task *cur = tc->current;

	s_str(s, "  thread ");
	s_u64(s, (uint64_t)tc->tid + 1);
	s_str(s, ": loops=");
	s_u64(s, atomic_load(&tc->loop_seq));
	s_str(s, atomic_load(&tc->in_poll) ? " polling" : " running");
	s_str(s, " task=");
	if (cur) {
		s_str(s, cur->name ? cur->name : "?");
		s_str(s, "(");
		s_hex(s, (uint64_t)(uintptr_t)cur);
		s_str(s, ")");
	} else {
		s_str(s, "none");
	}
	s_str(s, " runq=");
	for (int c = 0; c < TC_COUNT; c++) {
		s_u64(s, (uint64_t)tc->runq_len[c]);
		s_str(s, c + 1 < TC_COUNT ? "/" : "");
	}
	s_str(s, " timers=");
	s_u64(s, (uint64_t)tc->timers.count);
	s_str(s, " conns=");
	s_u64(s, (uint64_t)(tc->conns > 0 ? tc->conns : 0));
	describe_locks(s, tc->tid);
	s_str(s, "\n");
	s_flush(s);
}

static void own_backtrace(void)
{
	void *frames[48];
	int n = backtrace(frames, 48);

	backtrace_symbols_fd(frames, n, STDERR_FILENO);
}

/* ---- handlers ---- */

static void dump_handler(int sig)
{
	struct sbuf s = { .n = 0 };

	if (th_ctx) {
		s_str(&s, "[ALERT] watchdog: backtrace of thread ");
		s_u64(&s, (uint64_t)th_ctx->tid + 1);
		s_str(&s, ":\n");
		s_flush(&s);
	}
	own_backtrace();
	atomic_fetch_add(&dumps_done, 1);
}

void wdt_panic(const char *why)
{
	struct sbuf s = { .n = 0 };
	uint64_t deadline;
	int others = 0;

	s_str(&s, "[ALERT] watchdog: ");
	s_str(&s, why);
	s_str(&s, "; dumping all threads and aborting.\n");
	s_flush(&s);
	for (int i = 0; i < global.nbthread; i++)
		describe_thread(&s, &thread_ctx[i]);
	if (th_ctx)
		dump_handler(0);
	for (int i = 0; i < global.nbthread; i++) {
		if (th_ctx && i == th_ctx->tid)
			continue;
		if (thread_ctx[i].pth && pthread_kill(thread_ctx[i].pth, DUMP_SIGNAL) == 0)
			others++;
	}
	/* give the other threads a moment to print (CLOCK_MONOTONIC is
	 * async-signal-safe through clock_gettime) */
	deadline = clock_mono_ms() + 500;
	while (atomic_load(&dumps_done) < others + (th_ctx ? 1 : 0) && clock_mono_ms() < deadline)
		;
	signal(SIGABRT, SIG_DFL);
	abort();
}

static void wdt_handler(int sig, siginfo_t *si, void *uc)
{
	struct thread_ctx *tc = th_ctx;
	uint64_t seq;
	struct sbuf s = { .n = 0 };

	if (!tc)
		return;
	seq = atomic_load(&tc->loop_seq);
	if (atomic_load(&tc->in_poll) || seq != last_seq) {
		last_seq = seq;
		tc->wdt_stuck = 0;
		return;
	}
	if (!tc->wdt_stuck) {
		tc->wdt_stuck = 1;
		tc->act.wdt_warnings++;
		s_str(&s, "[WARNING] watchdog: thread ");
		s_u64(&s, (uint64_t)tc->tid + 1);
		s_str(&s, " has been running one loop iteration for ");
		s_u64(&s, (uint64_t)wdt_period_ms);
		s_str(&s, " ms of CPU time:\n");
		s_flush(&s);
		describe_thread(&s, tc);
		own_backtrace();
		return;
	}
	wdt_panic("a thread is stuck");
}

/* ---- set-up ---- */

int wdt_init_thread(void)
{
	struct sigaction sa;
	struct sigevent sev;
	struct itimerspec its;
	clockid_t cid;
	sigset_t set;
	void *warm[4];

	/* every thread may print a backtrace when asked */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = dump_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(DUMP_SIGNAL, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, DUMP_SIGNAL);
	sigaddset(&set, WDT_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	backtrace(warm, 4);   /* loads libgcc now, not in a handler */

	if (wdt_period_ms <= 0)
		return 0;
	sa.sa_handler = NULL;
	sa.sa_sigaction = wdt_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(WDT_SIGNAL, &sa, NULL);
	if (pthread_getcpuclockid(pthread_self(), &cid) != 0)
		return -1;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = WDT_SIGNAL;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(cid, &sev, &wdt_timer) < 0)
		return -1;
	its.it_value.tv_sec = wdt_period_ms / 1000;
	its.it_value.tv_nsec = (long)(wdt_period_ms % 1000) * 1000000L;
	its.it_interval = its.it_value;
	if (timer_settime(wdt_timer, 0, &its, NULL) < 0)
		return -1;
	wdt_armed = 1;
	return 0;
}

void wdt_deinit_thread(void)
{
	if (wdt_armed)
		timer_delete(wdt_timer);
	wdt_armed = 0;
}

/* ---- configuration ---- */

static int kw_wdt_period(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	int ms;

	if (nargs != 2) {
		snprintf(err, errlen, "expects a time (e.g. 1s), or 0 to disable the watchdog.");
		return -1;
	}
	if (cfg_parse_time_ms(args[1], &ms, err, errlen) < 0)
		return -1;
	if (ms && ms < 100) {
		snprintf(err, errlen, "period must be 0 (disabled) or at least 100ms.");
		return -1;
	}
	wdt_period_ms = ms;
	return 0;
}

static const struct cfg_kw wdt_kws[] = {
	{ "tune.watchdog.period", NULL, CFG_SEC_GLOBAL, kw_wdt_period },
	{ NULL }
};
CFG_REGISTER(wdt_kws)
