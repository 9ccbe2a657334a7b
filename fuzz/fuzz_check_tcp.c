/* libFuzzer target: the expect steps of tcp-check health checks
 * (tchk_expect_eval() in src/proxy/check_tcp.c), which read a server's
 * reply: plain matches and the protocol readers of mysql-check,
 * ldap-check and pgsql-check.
 *
 * Input: byte 0 chooses the step (one of the rules below) and whether the
 * reply is final (the server closed); the rest is the reply.
 *
 * Checked on every input, beyond the sanitizers' own checks (the reply is
 * a heap block of its exact size):
 * - a final reply is always decided (passed or failed), never "wait";
 * - a failure carries a valid status and a NUL-terminated description;
 * - the evaluation is pure: the same bytes give the same answer twice.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/proxy/check_http.h>
#include <sluice/proxy/check_tcp.h>

static const char *const rules[] = {
	"string +PONG",
	"! string +PONG",
	"min-recv 4 rstring ^[0-9]{3}[\\x20\r-]",
	"min-recv 4 error-status L7STS rstring ^2[0-9]{2}[-\\x20\r]",
	"binary 2b504f4e47",
	"min-recv 5 ok-status L6OK error-status L6RSP tout-status L6TOUT rbinary ^1[56]",
	"min-recv 5 ! rstring ^E",
	"min-recv 9 error-status L7STS rbinary ^520000000800000000",
	"rbinary .",   /* mysql greeting */
	"rbinary .",   /* mysql login */
	"rbinary .",   /* ldap bind */
};
#define NRULES (sizeof(rules) / sizeof(rules[0]))

static struct tchk_step steps[NRULES];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (size_t i = 0; i < NRULES; i++) {
		char buf[256], *args[16], err[256];
		int n = 0;

		strcpy(buf, rules[i]);
		for (char *t = strtok(buf, " "); t && n < 16; t = strtok(NULL, " "))
			args[n++] = t;
		if (tchk_parse_expect(args, n, &steps[i], err, sizeof(err)) < 0)
			abort();
	}
	steps[NRULES - 3].custom = 'm';
	steps[NRULES - 2].custom = 'M';
	steps[NRULES - 1].custom = 'l';
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hchk_verdict v1, v2;
	const struct tchk_step *st;
	int last, r1, r2;
	char *reply;

	if (size < 1)
		return 0;
	st = &steps[data[0] % NRULES];
	last = (data[0] / NRULES) & 1;
	reply = malloc(size - 1 ? size - 1 : 1);
	if (!reply)
		return 0;
	memcpy(reply, data + 1, size - 1);
	r1 = tchk_expect_eval(st, 3, reply, size - 1, last, &v1);
	r2 = tchk_expect_eval(st, 3, reply, size - 1, last, &v2);
	assert(r1 >= -1 && r1 <= 1);
	assert(r1 == r2);
	if (last)
		assert(r1 != 0);
	if (r1 < 0) {
		assert(v1.status > 0 && v1.status < CHK_ST_COUNT);
		assert(memchr(v1.desc, 0, sizeof(v1.desc)) != NULL);
		assert(v1.status == v2.status && v1.code == v2.code && !strcmp(v1.desc, v2.desc));
	}
	free(reply);
	return 0;
}
