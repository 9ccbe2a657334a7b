/* Prometheus exporter: label value escaping, query string (scope, no-maint). */
#include <stdlib.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/promex.h>
#include "t.h"

/* The escaped form of <v>, NUL-terminated (static: one at a time). */
static const char *escaped(const char *v)
{
	static char out[256];
	struct cli_out o = { 0 };

	promex_put_label_value(&o, v);
	snprintf(out, sizeof(out), "%.*s", (int)o.len, o.buf ? o.buf : "");
	free(o.buf);
	return out;
}

static void test_escape(void)
{
	CHECK_STR(escaped(""), "");
	CHECK_STR(escaped("be1"), "be1");
	CHECK_STR(escaped("a\\b"), "a\\\\b");
	CHECK_STR(escaped("a\"b"), "a\\\"b");
	CHECK_STR(escaped("a\nb"), "a\\nb");
	CHECK_STR(escaped("\\\"\n"), "\\\\\\\"\\n");
	CHECK_STR(escaped("x\n\ny"), "x\\n\\ny");
	/* everything else goes through as it is, tabs and UTF-8 included */
	CHECK_STR(escaped("t\tu \xc3\xa9"), "t\tu \xc3\xa9");
}

static int parse(const char *q, struct promex_query *out)
{
	return promex_parse_query(q, strlen(q), out);
}

static void test_query(void)
{
	struct promex_query q;

	CHECK(parse("", &q) == 0 && q.scope == PROMEX_SC_ALL && !q.no_maint);
	CHECK(parse("x=1&y", &q) == 0 && q.scope == PROMEX_SC_ALL);
	CHECK(parse("scope=backend", &q) == 0 && q.scope == PROMEX_SC_BACKEND);
	CHECK(parse("scope=server&scope=global", &q) == 0 &&
	      q.scope == (PROMEX_SC_SERVER | PROMEX_SC_GLOBAL));
	CHECK(parse("scope=*", &q) == 0 && q.scope == PROMEX_SC_ALL);
	CHECK(parse("scope=%2A", &q) == 0 && q.scope == PROMEX_SC_ALL);
	CHECK(parse("scope=back%65nd", &q) == 0 && q.scope == PROMEX_SC_BACKEND);
	/* an empty scope clears what came before, as HAProxy */
	CHECK(parse("scope=", &q) == 0 && q.scope == 0);
	CHECK(parse("scope=backend&scope=", &q) == 0 && q.scope == 0);
	CHECK(parse("scope=&scope=frontend", &q) == 0 && q.scope == PROMEX_SC_FRONTEND);
	CHECK(parse("scope=sticktable", &q) == 0 && q.scope == 0);
	CHECK(parse("&&scope=global&", &q) == 0 && q.scope == PROMEX_SC_GLOBAL);
	CHECK(parse("no-maint", &q) == 0 && q.no_maint && q.scope == PROMEX_SC_ALL);
	CHECK(parse("scope=server&no-maint=1", &q) == 0 && q.no_maint &&
	      q.scope == PROMEX_SC_SERVER);
	CHECK(parse("no-maintenance", &q) == 0 && !q.no_maint);
	/* names are case-sensitive; bad escapes and long values are refused */
	CHECK(parse("scope=FRONTEND", &q) == -1);
	CHECK(parse("scope=foo", &q) == -1);
	CHECK(parse("scope=%zz", &q) == -1);
	CHECK(parse("scope=%2", &q) == -1);
	CHECK(parse("scope=%", &q) == -1);
	CHECK(parse("scope=backendbackendbackendbackendbackend", &q) == -1);
	/* the length bounds the parse: what follows is not read */
	CHECK(promex_parse_query("scope=global&scope=foo", 12, &q) == 0 &&
	      q.scope == PROMEX_SC_GLOBAL);
}

int main(void)
{
	test_escape();
	test_query();
	return t_done("test_promex");
}
