/* The reply of an agent check, as HAProxy 2.6 reads it: see check_agent.h.
 * Bounded by its input; never reads past <len>.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sluice/proxy/check_agent.h>

int agent_reply_complete(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] == '\r' || p[i] == '\n')
			return 1;
	return 0;
}

static int is_sep(char c)
{
	return c == ' ' || c == '\t' || c == ',';
}

static int word_is(const char *w, size_t wl, const char *name)
{
	return wl == strlen(name) && !strncasecmp(w, name, wl);
}

/* "<digits><suffix>" with nothing else: the number, or -1. */
static long word_number(const char *w, size_t wl)
{
	long n = 0;

	if (!wl)
		return -1;
	for (size_t i = 0; i < wl; i++) {
		if (w[i] < '0' || w[i] > '9')
			return -1;
		if (n < 100000000)
			n = n * 10 + (w[i] - '0');
	}
	return n;
}

int agent_reply_parse(const char *p, size_t len, struct agent_reply *r)
{
	const char *end = p, *desc = NULL, *word = NULL;
	size_t i = 0, line, desc_len = 0, word_len = 0;

	memset(r, 0, sizeof(*r));
	r->weight_pct = -1;
	r->maxconn = -1;
	while ((size_t)(end - p) < len && *end != '\r' && *end != '\n')
		end++;
	line = (size_t)(end - p);
	if (!line)
		return -1;
	while (i < line) {
		const char *w;
		size_t wl;
		long n;

		while (i < line && is_sep(p[i]))
			i++;
		if (i >= line)
			break;
		w = p + i;
		while (i < line && !is_sep(p[i]))
			i++;
		wl = (size_t)(p + i - w);
		if (w[0] == '#') {
			/* the rest of the line, from after the sharp */
			desc = w + 1;
			desc_len = line - (size_t)(desc - p);
			break;
		}
		if (word_is(w, wl, "up") || word_is(w, wl, "down") || word_is(w, wl, "fail") ||
		    word_is(w, wl, "stopped")) {
			r->op = word_is(w, wl, "up") ? AGENT_OP_UP : AGENT_OP_DOWN;
			word = w;
			word_len = wl;
		} else if (word_is(w, wl, "ready")) {
			r->admin = AGENT_ADMIN_READY;
		} else if (word_is(w, wl, "drain")) {
			r->admin = AGENT_ADMIN_DRAIN;
		} else if (word_is(w, wl, "maint")) {
			r->admin = AGENT_ADMIN_MAINT;
		} else if (wl > 8 && !strncasecmp(w, "maxconn:", 8) &&
		           (n = word_number(w + 8, wl - 8)) >= 0) {
			r->maxconn = (int)(n > 1000000 ? 1000000 : n);
		} else if (wl > 1 && w[wl - 1] == '%' && (n = word_number(w, wl - 1)) >= 0) {
			r->weight_pct = (int)(n > 100000 ? 100000 : n);
		} else {
			snprintf(r->error, sizeof(r->error), "agent reports an error : %.*s",
			         (int)(wl > 64 ? 64 : wl), w);
			break;
		}
	}
	if (word) {
		/* the description only goes with a status word */
		while (desc && desc_len && (*desc == ' ' || *desc == '\t')) {
			desc++;
			desc_len--;
		}
		if (desc && desc_len)
			snprintf(r->info, sizeof(r->info), "via agent : %.*s (%.*s)",
			         (int)(word_len > 16 ? 16 : word_len), word,
			         (int)(desc_len > 80 ? 80 : desc_len), desc);
		else
			snprintf(r->info, sizeof(r->info), "via agent : %.*s",
			         (int)(word_len > 16 ? 16 : word_len), word);
	}
	return 0;
}
