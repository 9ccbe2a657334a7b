/* The Prometheus exporter (`http-request use-service prometheus-exporter`,
 * src/mgmt/promex.c): what the unit tests reach of its formatting and of
 * its query parsing. */
#ifndef SLUICE_MGMT_PROMEX_H
#define SLUICE_MGMT_PROMEX_H

#include <stddef.h>

struct cli_out;

/* What a scrape reports: `scope=` values of the query string. */
#define PROMEX_SC_GLOBAL    0x01
#define PROMEX_SC_FRONTEND  0x02
#define PROMEX_SC_BACKEND   0x04
#define PROMEX_SC_SERVER    0x08
#define PROMEX_SC_ALL       0x0f

struct promex_query {
	unsigned int scope;   /* PROMEX_SC_* */
	int no_maint;         /* leave out servers in maintenance */
};

/* Parses the query string <q> (after '?', <len> bytes, not NUL-terminated).
 * No scope at all means every scope; `scope=` alone selects none, as in
 * HAProxy. Returns 0, or -1 for an unknown scope (answered with a 400). */
int promex_parse_query(const char *q, size_t len, struct promex_query *out);

/* Appends <v> as a label value: backslash, double quote and line feed
 * escaped as the text exposition format requires. */
void promex_put_label_value(struct cli_out *o, const char *v);

#endif
