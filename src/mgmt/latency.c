/* CLI commands that show where time goes: `show locks` (how often threads
 * met on each kind of lock and how long they waited), `show queue` (every
 * server and backend queue: length, oldest wait, totals, wait percentiles,
 * its lock's contention) and `show histograms` (log2 histograms of queue,
 * connect and session times, DTrace style).
 *
 * Answers hold no empty line: one ends the answer in the CLI's protocol.
 *
 * Everything here is a racy snapshot of counters that other threads keep
 * updating (display only). The one lock taken is each queue's, for O(1) to
 * read the oldest waiter's arrival date.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/clock.h>
#include <sluice/core/hist.h>
#include <sluice/core/lock.h>
#include <sluice/mgmt/cli.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>

static int cli_show_locks(char **, int, struct cli_out *, int);
static int cli_show_queue(char **, int, struct cli_out *, int);
static int cli_show_histograms(char **, int, struct cli_out *, int);

static const struct cli_kw latency_kws[] = {
	{ { "show", "locks" }, CLI_LEVEL_USER, cli_show_locks,
	  "show locks                              : lock acquisitions and waits per lock kind" },
	{ { "show", "queue" }, CLI_LEVEL_USER, cli_show_queue,
	  "show queue [<backend>]                  : server and backend queues: length, waits" },
	{ { "show", "histograms" }, CLI_LEVEL_USER, cli_show_histograms,
	  "show histograms [<backend>]             : log2 histograms of queue, connect, session times" },
	{ { NULL } }
};
CLI_REGISTER(latency_kws)

/* ---- show locks ---- */

static int cmp_kind(const void *a, const void *b, void *arg)
{
	const struct lock_kind_total *t = arg;
	int ka = *(const int *)a, kb = *(const int *)b;

	if (t[ka].contended != t[kb].contended)
		return t[ka].contended > t[kb].contended ? -1 : 1;
	if (t[ka].acquired != t[kb].acquired)
		return t[ka].acquired > t[kb].acquired ? -1 : 1;
	return ka - kb;
}

static int cli_show_locks(char **args, int nargs, struct cli_out *out, int level)
{
	struct lock_kind_total tot[LK_KINDS];
	int order[LK_KINDS];

	lock_stats_sum(tot);
	for (int i = 0; i < LK_KINDS; i++)
		order[i] = i;
	qsort_r(order, LK_KINDS, sizeof(order[0]), cmp_kind, tot);
	cli_printf(out, "# %-12s %14s %12s %8s %14s %12s %12s\n", "kind", "acquired",
	           "contended", "cont%", "wait_total_us", "wait_max_us", "wait_avg_us");
	for (int i = 0; i < LK_KINDS; i++) {
		const struct lock_kind_total *t = &tot[order[i]];

		cli_printf(out, "  %-12s %14llu %12llu %8.3f %14llu %12llu %12.1f\n",
		           lock_kind_name(order[i]), (unsigned long long)t->acquired,
		           (unsigned long long)t->contended,
		           t->acquired ? 100.0 * (double)t->contended / (double)t->acquired : 0.0,
		           (unsigned long long)(t->wait_ns / 1000),
		           (unsigned long long)(t->max_wait_ns / 1000),
		           t->contended ? (double)t->wait_ns / 1000.0 / (double)t->contended : 0.0);
	}
	return 0;
}

/* ---- show queue ---- */

static void queue_row(struct cli_out *out, const char *be, const char *srv,
                      struct queue *q, uint64_t now)
{
	struct hist_snap h;
	char name[256];

	hist_snapshot(&q->wait_hist, &h);
	snprintf(name, sizeof(name), "%s/%s", be, srv);
	cli_printf(out, "  %-24s %7d %10llu %11llu %9llu %9llu %9llu %9llu %10llu %9llu %12llu\n",
	           name, atomic_load(&q->len),
	           (unsigned long long)(queue_oldest_wait_ns(q, now) / 1000000),
	           (unsigned long long)atomic_load(&q->cum), (unsigned long long)h.total,
	           (unsigned long long)hist_percentile(&h, 0.50),
	           (unsigned long long)hist_percentile(&h, 0.90),
	           (unsigned long long)hist_percentile(&h, 0.99),
	           (unsigned long long)hist_max_bound(&h),
	           (unsigned long long)atomic_load_explicit(&q->lock.contended,
	                                                    memory_order_relaxed),
	           (unsigned long long)(atomic_load_explicit(&q->lock.wait_ns,
	                                                     memory_order_relaxed) / 1000));
}

/* The backend named args[2] exists, or no name was given. Otherwise prints
 * the error (as `show servers state` does). */
static int backend_arg_ok(char **args, int nargs, struct cli_out *out)
{
	if (nargs > 2 && !proxy_find(args[2], PX_CAP_BE)) {
		cli_printf(out, "Can't find backend.\n");
		return 0;
	}
	return 1;
}

/* Runs <fn> on the backend named args[2], or on every backend. */
static void for_backends(char **args, int nargs, struct cli_out *out,
                         void (*fn)(struct cli_out *, struct proxy *))
{
	const char *only = nargs > 2 ? args[2] : NULL;
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!(px->cap & PX_CAP_BE) || (only && strcmp(px->name, only) != 0))
			continue;
		fn(out, px);
	}
}

static void queue_rows(struct cli_out *out, struct proxy *be)
{
	uint64_t now = clock_mono_ns();

	queue_row(out, be->name, "BACKEND", &be->queue, now);
	for (int i = 0; i < be->nsrv; i++)
		queue_row(out, be->name, be->srv[i]->name, &be->srv[i]->queue, now);
}

static int cli_show_queue(char **args, int nargs, struct cli_out *out, int level)
{
	if (!backend_arg_ok(args, nargs, out))
		return -1;
	cli_printf(out, "# %-24s %7s %10s %11s %9s %9s %9s %9s %10s %9s %12s\n",
	           "queue", "len", "oldest_ms", "queued_tot", "served", "p50_us", "p90_us",
	           "p99_us", "max_us", "lock_cont", "lock_wait_us");
	for_backends(args, nargs, out, queue_rows);
	return 0;
}

/* ---- show histograms ---- */

static void print_hist(struct cli_out *out, const char *what, const char *owner,
                       const char *title, const struct hist_snap *h)
{
	char buf[HIST_BUCKETS * 80 + 128];

	cli_printf(out, "%s %s: %s (us), %llu samples\n", what, owner, title,
	           (unsigned long long)h->total);
	if (!h->total)
		return;
	hist_render(h, buf, sizeof(buf));
	cli_printf(out, "%s", buf);
}

static void hist_block(struct cli_out *out, struct proxy *be)
{
	struct hist_snap q, c, t;

	be_time_hists(be, &q, &c, &t);
	print_hist(out, "backend", be->name, "queue wait", &q);
	print_hist(out, "backend", be->name, "connect time", &c);
	print_hist(out, "backend", be->name, "session time", &t);
	for (int i = 0; i < be->nsrv; i++) {
		struct server *s = be->srv[i];
		char owner[256];

		snprintf(owner, sizeof(owner), "%s/%s", be->name, s->name);
		hist_snapshot(&s->qtime_hist, &q);
		hist_snapshot(&s->ctime_hist, &c);
		hist_snapshot(&s->ttime_hist, &t);
		print_hist(out, "server", owner, "queue wait", &q);
		print_hist(out, "server", owner, "connect time", &c);
		print_hist(out, "server", owner, "session time", &t);
	}
}

static int cli_show_histograms(char **args, int nargs, struct cli_out *out, int level)
{
	if (!backend_arg_ok(args, nargs, out))
		return -1;
	for_backends(args, nargs, out, hist_block);
	return 0;
}
