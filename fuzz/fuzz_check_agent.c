/* libFuzzer target: the reply of an agent check (agent_reply_parse() in
 * src/proxy/check_agent.c), which reads whatever the agent's port sends.
 *
 * Checked on every input, beyond the sanitizers' own checks (the reply is
 * a heap block of its exact size):
 * - the texts are NUL-terminated within their arrays;
 * - the values are in their ranges (weight 0..100000 or -1, maxconn
 *   0..1000000 or -1, op and admin among their names);
 * - an info text comes with a status word, and only then;
 * - the result does not depend on what follows the first line.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/proxy/check_agent.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *p = malloc(size ? size : 1);
	struct agent_reply r, r2;
	size_t line = 0;
	int rc;

	if (!p)
		return 0;
	memcpy(p, data, size);
	rc = agent_reply_parse(p, size, &r);
	assert(memchr(r.info, 0, sizeof(r.info)) && memchr(r.error, 0, sizeof(r.error)));
	assert(r.weight_pct >= -1 && r.weight_pct <= 100000);
	assert(r.maxconn >= -1 && r.maxconn <= 1000000);
	assert(r.op >= AGENT_OP_NONE && r.op <= AGENT_OP_DOWN);
	assert(r.admin >= AGENT_ADMIN_NONE && r.admin <= AGENT_ADMIN_MAINT);
	assert((r.op != AGENT_OP_NONE) == (r.info[0] != 0));
	while (line < size && p[line] != '\r' && p[line] != '\n')
		line++;
	assert(rc == (line ? 0 : -1));
	if (line < size) {
		/* the same line alone */
		int rc2 = agent_reply_parse(p, line, &r2);

		assert(rc2 == rc && !memcmp(&r, &r2, sizeof(r)));
	}
	free(p);
	return 0;
}
