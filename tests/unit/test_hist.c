/* Log2 histograms: bucket edges, percentiles, rendering; sliding averages. */
#include <sluice/core/hist.h>
#include "t.h"

static void test_buckets(void)
{
	/* bucket 0 holds 0; bucket i >= 1 holds [2^(i-1), 2^i) */
	CHECK(hist_bucket(0) == 0);
	CHECK(hist_bucket(1) == 1);
	CHECK(hist_bucket(2) == 2 && hist_bucket(3) == 2);
	CHECK(hist_bucket(4) == 3 && hist_bucket(7) == 3);
	CHECK(hist_bucket(8) == 4);
	CHECK(hist_bucket(1023) == 10 && hist_bucket(1024) == 11);
	for (int i = 1; i < HIST_BUCKETS - 1; i++) {
		uint64_t lo = hist_bucket_low(i);

		CHECK(hist_bucket(lo) == i);
		CHECK(hist_bucket(lo * 2 - 1) == i);
		CHECK(hist_bucket(lo * 2) == i + 1);
	}
	CHECK(hist_bucket_low(0) == 0 && hist_bucket_low(1) == 1 && hist_bucket_low(11) == 1024);
	/* everything too large lands in the last bucket */
	CHECK(hist_bucket(1ull << 38) == HIST_BUCKETS - 1);
	CHECK(hist_bucket(~0ull) == HIST_BUCKETS - 1);
}

static void test_percentiles(void)
{
	struct hist h = { 0 };
	struct hist_snap s;

	hist_snapshot(&h, &s);
	CHECK(s.total == 0 && hist_percentile(&s, 0.5) == 0 && hist_max_bound(&s) == 0);

	for (int i = 0; i < 90; i++)
		hist_record(&h, 100);      /* bucket [64,128) */
	for (int i = 0; i < 10; i++)
		hist_record(&h, 5000);     /* bucket [4096,8192) */
	hist_snapshot(&h, &s);
	CHECK(s.total == 100);
	CHECK(s.b[hist_bucket(100)] == 90 && s.b[hist_bucket(5000)] == 10);
	CHECK(hist_percentile(&s, 0.50) >= 64 && hist_percentile(&s, 0.50) < 128);
	CHECK(hist_percentile(&s, 0.90) >= 64 && hist_percentile(&s, 0.90) <= 128);
	CHECK(hist_percentile(&s, 0.99) >= 4096 && hist_percentile(&s, 0.99) < 8192);
	CHECK(hist_max_bound(&s) == 8192);
	CHECK(hist_percentile(&s, 1.5) <= 8192);

	/* sums of histograms */
	hist_accumulate(&s, &h);
	CHECK(s.total == 200 && s.b[hist_bucket(100)] == 180);
}

static void test_render(void)
{
	struct hist h = { 0 };
	struct hist_snap s;
	char buf[4096];
	const char *p;

	hist_snapshot(&h, &s);
	hist_render(&s, buf, sizeof(buf));
	CHECK(strstr(buf, "Distribution") && !strchr(strchr(buf, '\n') + 1, '\n'));

	for (int i = 0; i < 3; i++)
		hist_record(&h, 2);
	hist_record(&h, 9);
	hist_snapshot(&h, &s);
	hist_render(&s, buf, sizeof(buf));
	/* one empty row below, the rows in between, one empty row above */
	p = strstr(buf, "\n               1 |");
	CHECK(p && strstr(p, " 0\n"));
	CHECK(strstr(buf, "\n               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@           3\n"));
	CHECK(strstr(buf, "\n               4 |                                         0\n"));
	CHECK(strstr(buf, "\n               8 |@@@@@@@@@@                               1\n"));
	CHECK(strstr(buf, "\n              16 |                                         0\n"));
	CHECK(!strstr(buf, "\n              32 |"));
	CHECK(!strstr(buf, "\n               0 |"));
	/* truncation stays within the buffer and terminated */
	CHECK(hist_render(&s, buf, 50) == 49 && strlen(buf) == 49);
}

static void test_swrate(void)
{
	struct swrate r = { 0 };

	CHECK(swrate_avg(&r) == 0);
	swrate_add(&r, 10);
	CHECK(swrate_avg(&r) == 10);
	swrate_add(&r, 20);
	CHECK(swrate_avg(&r) == 15);   /* plain average before the window fills */
	for (int i = 0; i < 5 * SWRATE_WINDOW; i++)
		swrate_add(&r, 1000);
	CHECK(swrate_avg(&r) >= 990 && swrate_avg(&r) <= 1000);
	for (int i = 0; i < 5 * SWRATE_WINDOW; i++)
		swrate_add(&r, 0);
	CHECK(swrate_avg(&r) <= 10);   /* old values fade away */
	CHECK(swrate_max(&r) == 1000);
}

int main(void)
{
	test_buckets();
	test_percentiles();
	test_render();
	test_swrate();
	return t_done("test_hist");
}
