/* libFuzzer target: the Prometheus exporter's query string parser
 * (promex_parse_query()) and its label value escaping.
 *
 * Checked on every input, beyond the sanitizers' own checks:
 * - the parser reads only the <len> bytes it is given (the input is copied
 *   into a buffer of exactly that size, without a NUL);
 * - the result is 0 or -1, and an accepted query selects only known scopes;
 * - a query made of the input followed by "&scope=" selects nothing, and
 *   one followed by "&scope=*" selects everything, when either is accepted
 *   (an empty scope clears, "*" sets all, whatever came before);
 * - the escaped form of the input (up to its first NUL) holds no line feed
 *   and no unescaped double quote, and unescapes to the input.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/promex.h>

static int parse_with_suffix(const uint8_t *data, size_t size, const char *suffix,
                             struct promex_query *q)
{
	size_t sl = strlen(suffix);
	char *buf = malloc(size + sl);
	int rc;

	assert(buf);
	memcpy(buf, data, size);
	memcpy(buf + size, suffix, sl);
	rc = promex_parse_query(buf, size + sl, q);
	free(buf);
	return rc;
}

static void check_escape(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1);
	struct cli_out o = { 0 };
	size_t n = 0;

	assert(in);
	memcpy(in, data, size);
	in[size] = '\0';
	promex_put_label_value(&o, in);
	assert(!o.failed);
	for (size_t i = 0; i < o.len; i++) {
		char c = o.buf[i];

		assert(c != '\n' && c != '"');
		if (c == '\\') {
			assert(i + 1 < o.len);
			c = o.buf[++i];
			assert(c == '\\' || c == '"' || c == 'n');
			if (c == 'n')
				c = '\n';
		}
		assert(in[n] == c);
		n++;
	}
	assert(in[n] == '\0');
	free(o.buf);
	free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct promex_query q;
	char *exact = malloc(size ? size : 1);
	int rc;

	assert(exact);
	memcpy(exact, data, size);
	rc = promex_parse_query(exact, size, &q);
	free(exact);
	assert(rc == 0 || rc == -1);
	if (rc == 0) {
		assert((q.scope & ~PROMEX_SC_ALL) == 0);
		assert(q.no_maint == 0 || q.no_maint == 1);
	}
	if (parse_with_suffix(data, size, "&scope=", &q) == 0)
		assert(q.scope == 0);
	if (parse_with_suffix(data, size, "&scope=*", &q) == 0)
		assert(q.scope == PROMEX_SC_ALL);
	check_escape(data, size);
	return 0;
}
