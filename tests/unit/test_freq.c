/* Frequency counters: the sliding estimate, the exact limit of
 * freq_ctr_try_add() under concurrent threads, freq_ctr_wait(). */
#include <pthread.h>
#include <sluice/core/freq.h>
#include "t.h"

static struct freq_ctr shared;
static _Atomic int taken;

static void *adder(void *arg)
{
	for (int i = 0; i < 20000; i++)
		if (freq_ctr_try_add(&shared, 1000, 5000, 5000))
			atomic_fetch_add(&taken, 1);
	return NULL;
}

int main(void)
{
	struct freq_ctr f = { 0 };
	pthread_t th[4];

	/* a period starting at 1000 */
	freq_ctr_set(&f, 1000, 0);
	for (int i = 0; i < 3; i++)
		CHECK(freq_ctr_try_add(&f, 1000, 1100, 3) == 1);
	CHECK(freq_ctr_try_add(&f, 1000, 1100, 3) == 0);
	CHECK(freq_ctr_read(&f, 1000, 1100) == 3);
	/* next period: the previous one counts for what is left of it */
	CHECK(freq_ctr_read(&f, 1000, 2000) == 3);
	CHECK(freq_ctr_read(&f, 1000, 2500) == 1);
	CHECK(freq_ctr_try_add(&f, 1000, 2000, 3) == 0);
	CHECK(freq_ctr_try_add(&f, 1000, 2500, 3) == 1);
	/* undo: the event did not happen */
	CHECK(freq_ctr_read(&f, 1000, 2500) == 2);
	freq_ctr_undo(&f);
	CHECK(freq_ctr_read(&f, 1000, 2500) == 1);
	/* wait: until the estimate falls below the limit */
	freq_ctr_set(&f, 0, 0);
	for (int i = 0; i < 10; i++)
		freq_ctr_add(&f, 1000, 0, 1);
	CHECK(freq_ctr_wait(&f, 1000, 500, 5) == 0 || freq_ctr_read(&f, 1000, 500) >= 5);
	{
		uint32_t w = freq_ctr_wait(&f, 1000, 500, 5);

		CHECK(w > 0 && w <= 2000);
		CHECK(freq_ctr_read(&f, 1000, 500 + w) < 5);
		CHECK(freq_ctr_read(&f, 1000, 500 + w - 1) >= 5);
	}
	/* four threads, one limit: exactly the limit gets through */
	freq_ctr_set(&shared, 5000, 0);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, adder, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK(atomic_load(&taken) == 5000);
	CHECK(freq_ctr_read(&shared, 1000, 5000) == 5000);
	return t_done("test_freq");
}
