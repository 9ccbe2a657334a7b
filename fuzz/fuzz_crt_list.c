/* libFuzzer target: a line of a crt-list file (ssl_crt_list_line() in
 * src/net/ssl_conf.c), which an operator writes and sluice reads at
 * start-up.
 *
 * Checked on every input, beyond the sanitizers' own checks (the line is
 * a heap block of its exact size plus its NUL):
 * - an entry has a path and its filters are NUL-terminated lower-case
 *   strings, counted right;
 * - an empty or comment line gives nothing, an error a message;
 * - parsing is pure: the same bytes give the same answer twice.
 */
#include <assert.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/net/ssl_conf.h>

static int parse(const uint8_t *data, size_t size, char **crt, struct ssl_crt_filters **f)
{
	char *line = malloc(size + 1), err[256] = "";
	int r;

	if (!line)
		return -2;
	memcpy(line, data, size);
	line[size] = '\0';
	r = ssl_crt_list_line(line, crt, f, err, sizeof(err));
	assert(r != -1 || err[0]);
	free(line);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *c1, *c2;
	struct ssl_crt_filters *f1, *f2;
	int r1 = parse(data, size, &c1, &f1), r2 = parse(data, size, &c2, &f2);

	if (r1 == -2 || r2 == -2)
		return 0;
	assert(r1 == r2);
	if (r1 == 1) {
		assert(c1 && c2 && !strcmp(c1, c2));
		assert(!f1 == !f2);
		if (f1) {
			assert(f1->npos == f2->npos && f1->nneg == f2->nneg && f1->none == f2->none);
			for (int i = 0; i < f1->npos; i++) {
				assert(!strcmp(f1->pos[i], f2->pos[i]));
				for (const char *p = f1->pos[i]; *p; p++)
					assert(!isupper((unsigned char)*p));
			}
		}
	} else {
		assert(!c1 && !f1);
	}
	free(c1);
	free(c2);
	ssl_crt_filters_free(f1);
	ssl_crt_filters_free(f2);
	return 0;
}
