/* libFuzzer target: a data line of a server state file (srv_saved_parse()
 * in src/proxy/srv_statefile.c), read at start-up from a file that a
 * previous process, or an operator, wrote.
 *
 * Checked on every input, beyond the sanitizers' own checks (the line is
 * a heap block of its exact size plus its NUL):
 * - an accepted line has its names inside the line, NUL-terminated, and
 *   its numbers in range (states 0..3, nothing negative);
 * - parsing is pure: the same bytes give the same answer twice.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/proxy/srv_statefile.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a = malloc(size + 1), *b = malloc(size + 1);
	struct srv_saved x, y;
	int ra, rb;

	if (!a || !b) {
		free(a);
		free(b);
		return 0;
	}
	memcpy(a, data, size);
	a[size] = '\0';
	memcpy(b, a, size + 1);
	ra = srv_saved_parse(a, &x);
	rb = srv_saved_parse(b, &y);
	assert(ra == rb);
	if (ra == 0) {
		assert(x.be_name >= a && x.be_name < a + size + 1);
		assert(x.srv_name >= a && x.srv_name < a + size + 1);
		assert(strlen(x.be_name) <= size && strlen(x.srv_name) <= size);
		assert(x.op >= 0 && x.op <= 3 && x.admin >= 0 && x.uweight >= 0 && x.iweight >= 0);
		assert(x.since_s >= 0 && x.check_status >= 0);
		assert(!strcmp(x.be_name, y.be_name) && !strcmp(x.srv_name, y.srv_name));
		assert(x.op == y.op && x.admin == y.admin && x.uweight == y.uweight);
	}
	free(a);
	free(b);
	return 0;
}
