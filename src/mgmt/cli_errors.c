/* show errors [<iid>|<proxy>] [request|response]: the last invalid request
 * and response of each proxy (captured by src/proxy/errcap.c), in HAProxy
 * 2.6's layout: a total line, then per capture a header naming the proxy,
 * the other side, the event number and the client, then the bytes, one
 * input line per output line, escaped, cut at 79 columns (a continuation
 * line's offset is followed by '+'). A proxy given as filter selects its
 * own captures and those it was the other side of.
 *
 * HAProxy then prints three lines of its HTTP/1 parser's internal state
 * (flags, message state), meaningless in sluice: sluice prints the reason
 * the parser gave instead ("  reason: <text> :").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/stats.h>
#include <sluice/net/addr.h>
#include <sluice/proxy/errcap.h>
#include <sluice/proxy/proxy.h>

static int cli_show_errors(char **, int, struct cli_out *, int);

static const struct cli_kw errors_kws[] = {
	{ { "show", "errors" }, CLI_LEVEL_OPERATOR, cli_show_errors,
	  "show errors [<px>] [request|response]   : report last request and/or response errors for each proxy" },
	{ { NULL } }
};
CLI_REGISTER(errors_kws)

/* "[28/Nov/2026:02:03:36.562]", local time, as HAProxy dates them */
static void errors_date(char *buf, size_t len, int64_t ms)
{
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
	                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	localtime_r(&t, &tm);
	snprintf(buf, len, "[%02d/%s/%04d:%02d:%02d:%02d.%03d]", tm.tm_mday, mon[tm.tm_mon],
	         tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

/* Appends one output line of <c>'s bytes from <*pos>: at most 79 columns
 * with its 9-column prefix, an escape never split, ending after a LF. */
static void errors_dump_line(struct cli_out *out, const struct errcap *c, size_t *pos,
                             int cont)
{
	char line[96];
	size_t n = (size_t)snprintf(line, sizeof(line), "  %05zu%c ", *pos, cont ? '+' : ' ');

	while (*pos < c->data_len) {
		unsigned char ch = (unsigned char)c->data[*pos];
		char tok[8];
		size_t tl;

		if (ch == '\t' || ch == '\n' || ch == '\r' || ch == 0x1b || ch == '\\')
			tl = (size_t)snprintf(tok, sizeof(tok), "\\%c", ch == '\t' ? 't' :
			                      ch == '\n' ? 'n' : ch == '\r' ? 'r' : ch == 0x1b ? 'e' : '\\');
		else if (ch < 0x20 || ch >= 0x7f)
			tl = (size_t)snprintf(tok, sizeof(tok), "\\x%02X", ch);
		else
			tl = (size_t)snprintf(tok, sizeof(tok), "%c", ch);
		if (n + tl > 79)
			break;
		memcpy(line + n, tok, tl);
		n += tl;
		(*pos)++;
		if (ch == '\n')
			break;
	}
	line[n] = '\0';
	cli_printf(out, "%s\n", line);
}

static void errors_dump(struct cli_out *out, const struct proxy *px, const struct errcap *c)
{
	char date[40], host[64];
	size_t pos = 0;
	int cont = 0;

	errors_date(date, sizeof(date), c->when_ms);
	cli_printf(out, " \n%s %s %s (#%d): invalid %s\n", date,
	           c->is_resp ? "backend" : "frontend", px->name, px->uuid,
	           c->is_resp ? "response" : "request");
	cli_printf(out, "  %s %s (#%d), server %s (#%d), event #%u, src %s:%d\n",
	           c->is_resp ? "frontend" : "backend", c->other, c->other_id, c->srv, c->srv_id,
	           c->event, addr_host_str(&c->src, host, sizeof(host)), addr_port(&c->src));
	cli_printf(out, "  buffer starts at 0 (including 0 out), %zu free,\n",
	           c->bufsize > c->len ? c->bufsize - c->len : 0);
	cli_printf(out, "  len %zu, wraps at %zu, error at position %zu\n", c->len, c->bufsize,
	           c->pos);
	cli_printf(out, "  reason: %s :\n  \n", c->reason);
	while (pos < c->data_len) {
		size_t start = pos;

		errors_dump_line(out, c, &pos, cont);
		cont = pos > start && c->data[pos - 1] != '\n';
	}
}

static int cli_show_errors(char **args, int nargs, struct cli_out *out, int level)
{
	struct proxy *only = NULL;
	struct list *pos, *nxt;
	struct timeval tv;
	char date[40];
	int want = 3;   /* bit 0: requests, bit 1: responses */
	int a = 2;

	if (nargs > a && strcmp(args[a], "request") != 0 && strcmp(args[a], "response") != 0) {
		if (strcmp(args[a], "-1") != 0) {
			only = stats_find_proxy_arg(args[a], PX_CAP_FE | PX_CAP_BE);
			if (!only) {
				char *end;
				long id = strtol(args[a], &end, 10);

				if (*args[a] && !*end) {
					list_for_each_safe(pos, nxt, &proxies) {
						struct proxy *px = list_elem(pos, struct proxy, list);

						if (px->uuid == id)
							only = px;
					}
				}
			}
			if (!only) {
				cli_printf(out, "No such proxy.\n");
				return -1;
			}
		}
		a++;
	}
	if (nargs > a && strcmp(args[a], "request") == 0)
		want = 1;
	else if (nargs > a && strcmp(args[a], "response") == 0)
		want = 2;

	gettimeofday(&tv, NULL);
	errors_date(date, sizeof(date), (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000);
	cli_printf(out, "Total events captured on %s : %u\n", date, errcap_total());
	list_for_each_safe(pos, nxt, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		for (int dir = 0; dir < 2; dir++) {
			struct errcap c;

			if (!(want & (1 << dir)) || errcap_get(px, dir, &c) < 0)
				continue;
			/* a proxy selects its captures and those whose other
			 * side it was (the frontend of a response), as in
			 * HAProxy */
			if (!only || px == only || c.other_id == only->uuid)
				errors_dump(out, px, &c);
			errcap_release(&c);
		}
	}
	return 0;
}
