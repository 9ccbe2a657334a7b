/* libFuzzer target: the arguments of a `stick-table` line
 * (stktable_parse_args()), then a CLI key for the table it describes
 * (stktable_key_from_text()).
 *
 * Input: the words of the line, separated by blanks, up to the first
 * newline; what follows is the key text.
 *
 * Checked on every input, beyond the sanitizers' own checks:
 * - the result is 0 or -1; an error always leaves a message;
 * - an accepted line has a type, a size, key sizes and periods in range,
 *   and stores only known data types;
 * - a key that parses is no longer than the table's keys;
 * - each rate the line stores, fed events at dates taken from the input
 *   (wrapping clock included), never reads more than it was given.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/proxy/stktable.h>

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *words[MAX_WORDS], *p, *key = NULL;
	struct stkt_conf c;
	char err[512];
	int n = 0, rc;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	p = strchr(buf, '\n');
	if (p) {
		*p = 0;
		key = p + 1;
	}
	for (p = strtok(buf, " \t"); p && n < MAX_WORDS; p = strtok(NULL, " \t"))
		words[n++] = p;
	err[0] = 0;
	rc = stktable_parse_args(words, n, &c, err, sizeof(err));
	assert(rc == 0 || rc == -1);
	if (rc < 0) {
		assert(err[0]);
		free(buf);
		return 0;
	}
	assert(c.size > 0 && c.size <= UINT32_MAX);
	assert(c.expire_ms >= 0);
	assert(c.type >= STKT_T_IP && c.type <= STKT_T_BINARY);
	assert(c.key_size > 0 && c.key_size <= 65535);
	for (int i = 0; i < STKT_DT_COUNT; i++) {
		assert(c.stored[i] == 0 || c.stored[i] == 1);
		if (c.stored[i] && stkt_dt_defs[i].array)
			assert(c.nbelem[i] >= 1 && c.nbelem[i] <= STKT_MAX_ELEMS);
	}
	/* the arrays replace the legacy types: never both */
	assert(!(c.stored[STKT_DT_GPC] && (c.stored[STKT_DT_GPC0] || c.stored[STKT_DT_GPC1])));
	assert(!(c.stored[STKT_DT_GPT] && c.stored[STKT_DT_GPT0]));
	for (int i = 0; i < STKT_DT_COUNT; i++) {
		struct freq_ctr f;
		uint32_t now = 0, total = 0;

		if (!c.stored[i] || stkt_dt_defs[i].kind != STKT_K_FRQ)
			continue;
		memset(&f, 0, sizeof(f));
		for (size_t j = 0; j < size && j < 64; j++) {
			now += (uint32_t)data[j] * (uint32_t)(1u + c.period[i] / 64);
			freq_ctr_add(&f, c.period[i], now, 1);
			total++;
			assert(freq_ctr_read(&f, c.period[i], now) <= total);
		}
	}
	if (key && c.key_size <= 1024) {
		struct stktable t;
		struct stkt_key k;

		memset(&t, 0, sizeof(t));
		t.type = c.type;
		t.key_size = c.key_size;
		if (stktable_key_from_text(&t, key, &k))
			assert(k.len <= t.key_size);
	}
	free(buf);
	return 0;
}
