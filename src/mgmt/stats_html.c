/* The report of the HTTP statistics page: HTML (a table per proxy, with
 * HAProxy's column groups, and the admin form), or CSV as `show stat`
 * prints it.
 *
 * Options follow the URI prefix, anywhere after it, as in HAProxy: ";csv",
 * ";up" (no DOWN servers), ";no-maint" (no servers in maintenance),
 * ";norefresh", ";st=<CODE>" (the result of an admin POST, shown as a
 * message) and "scope=<text>" (only proxies whose name contains it, as the
 * page's scope box asks).
 *
 * Runs on the requesting stream's thread; the body is one heap block
 * whose size follows the number of proxies and servers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/global.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/stats.h>
#include <sluice/mgmt/stats_page.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>


struct page_opts {
	int csv, hide_down, hide_maint, norefresh;
	int fmt;                       /* STATS_FMT_*: ";typed", ";json" */
	char st[8];
	char scope[32];                /* "" for none */
};

static int has_opt(const char *p, size_t len, const char *opt)
{
	return memmem(p, len, opt, strlen(opt)) != NULL;
}

static void parse_opts(const char *p, size_t len, struct page_opts *o)
{
	const char *v;

	memset(o, 0, sizeof(*o));
	o->csv = has_opt(p, len, ";csv");
	o->fmt = has_opt(p, len, ";json") ? STATS_FMT_JSON : has_opt(p, len, ";typed") ?
	         STATS_FMT_TYPED : STATS_FMT_TEXT;
	if (o->fmt != STATS_FMT_TEXT)
		o->csv = 1;
	o->hide_down = has_opt(p, len, ";up");
	o->hide_maint = has_opt(p, len, ";no-maint");
	o->norefresh = has_opt(p, len, ";norefresh");
	v = memmem(p, len, ";st=", 4);
	if (v) {
		size_t i = 0;

		for (v += 4; v < p + len && i + 1 < sizeof(o->st) && *v >= 'A' && *v <= 'Z'; v++)
			o->st[i++] = *v;
		o->st[i] = '\0';
	}
	v = memmem(p, len, "scope=", 6);
	if (v) {
		size_t i = 0;

		/* the characters of proxy names only: the value is printed back */
		for (v += 6; v < p + len && i + 1 < sizeof(o->scope); v++) {
			char c = *v;

			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			      c == '-' || c == '_' || c == '.' || c == ':'))
				break;
			o->scope[i++] = c;
		}
		o->scope[i] = '\0';
	}
}

/* Whether <px> is shown by the page of <owner>: `stats scope` names, then
 * the scope box's text (a substring of the name). */
static int in_scope(const struct proxy *owner, const struct proxy *px, const struct page_opts *o)
{
	const struct stats_page *sp = owner->stats;

	if (sp->scopes) {
		const struct stats_scope *sc;

		for (sc = sp->scopes; sc; sc = sc->next)
			if (!strcmp(sc->name, ".") ? px == owner : !strcmp(sc->name, px->name))
				break;
		if (!sc)
			return 0;
	}
	return !o->scope[0] || strstr(px->name, o->scope);
}

static int server_hidden(const struct stat_row *r, const struct page_opts *o)
{
	const char *st = r->f[ST_STATUS] ? r->f[ST_STATUS] : "";

	/* ";up" leaves out every server that takes no traffic: DOWN and MAINT */
	return ((o->hide_down || o->hide_maint) && !strncmp(st, "MAINT", 5)) ||
	       (o->hide_down && !strncmp(st, "DOWN", 4));
}

/* ---- CSV ---- */

/* One row: CSV, or typed or JSON (";typed", ";json"). */
static void put_row_fmt(struct cli_out *o, struct stat_row *r, const struct page_opts *po,
                        int *first)
{
	if (po->fmt == STATS_FMT_TEXT)
		stats_csv_row(o, r);
	else
		stats_typed_row(o, r, po->fmt == STATS_FMT_JSON, *first);
	*first = 0;
}

static void put_csv(struct cli_out *o, const struct proxy *owner, const struct page_opts *po,
                    int level)
{
	int first = 1;

	if (po->fmt == STATS_FMT_TEXT)
		stats_csv_header(o);
	else if (po->fmt == STATS_FMT_JSON)
		cli_printf(o, "[");
	for (struct list *p = proxies.next; p != &proxies; p = p->next) {
		struct proxy *px = list_elem(p, struct proxy, list);
		struct stat_row r = { 0 };

		if (!in_scope(owner, px, po))
			continue;
		if (px->cap & PX_CAP_FE) {
			stats_row_frontend(&r, px);
			put_row_fmt(o, &r, po, &first);
		}
		if (!(px->cap & PX_CAP_BE))
			continue;
		for (int i = 0; i < px->nsrv; i++) {
			stats_row_server(&r, px, px->srv[i], level);
			if (server_hidden(&r, po))
				stats_row_free(&r);
			else
				put_row_fmt(o, &r, po, &first);
		}
		stats_row_backend(&r, px);
		if (po->hide_down && r.f[ST_STATUS]) {
			/* as HAProxy: the status then counts usable servers */
			int usable = atoi(r.f[ST_ACT] ? r.f[ST_ACT] : "0") +
			             atoi(r.f[ST_BCK] ? r.f[ST_BCK] : "0");
			char *st;

			if (asprintf(&st, "%s (%d/%d)", r.f[ST_STATUS], usable, px->nsrv) >= 0) {
				free(r.f[ST_STATUS]);
				r.f[ST_STATUS] = st;
			}
		}
		put_row_fmt(o, &r, po, &first);
	}
	if (po->fmt == STATS_FMT_JSON)
		cli_printf(o, "]\n");
}

/* ---- HTML ---- */

static void put_esc(struct cli_out *o, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		const char *e = *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" :
		                *s == '"' ? "&quot;" : *s == '\'' ? "&#39;" : NULL;

		if (!e)
			continue;
		cli_printf(o, "%.*s%s", (int)(s - run), run, e);
		run = s + 1;
	}
	cli_printf(o, "%s", run);
}

static const char page_style[] =
	"body{font-family:sans-serif;font-size:13px;margin:12px;color:#222}"
	"h1{font-size:18px;margin:0 0 8px}h1 small{font-weight:normal;color:#666}"
	"table.px{border-collapse:collapse;margin:14px 0 4px;width:100%}"
	"table.px caption{text-align:left;font-weight:bold;font-size:14px;padding:3px 0}"
	"table.px caption small{font-weight:normal;color:#555}"
	"table.px th,table.px td{border:1px solid #bbb;padding:1px 4px;text-align:right;"
	"white-space:nowrap}"
	"table.px th{background:#dde3ea;text-align:center}"
	"table.px td.name{text-align:left}"
	"tr.fe td,tr.be td{background:#eef0f2;font-weight:bold}"
	"tr.up td{background:#c8f0c0}tr.going_down td{background:#f8e7a0}"
	"tr.going_up td{background:#f8d0a0}tr.down td{background:#f4a8a8}"
	"tr.maint td{background:#c8c8f0}tr.drain td{background:#a8d8f8}"
	"tr.nolb td{background:#e0e0e0}tr.nocheck td{background:#f4f4f4}"
	"tr.stop td{background:#f4a8a8}"
	"table.info td{padding:1px 10px 1px 0;vertical-align:top}"
	"div.msg{margin:8px 0;padding:6px;border:1px solid #888}"
	"div.msg.ok{background:#c8f0c0}div.msg.ko{background:#f4a8a8}"
	"span.lg{display:inline-block;padding:1px 6px;margin:1px;border:1px solid #bbb}";

/* The class of a server's row, from its status column. */
static const char *status_class(const char *st)
{
	if (!strncmp(st, "UP ", 3))
		return "going_down";
	if (!strncmp(st, "DOWN ", 5))
		return "going_up";
	if (!strncmp(st, "UP", 2) || !strcmp(st, "OPEN"))
		return "up";
	if (!strncmp(st, "DOWN", 4))
		return "down";
	if (!strncmp(st, "MAINT", 5))
		return "maint";
	if (!strncmp(st, "DRAIN", 5))
		return "drain";
	if (!strncmp(st, "NOLB", 4))
		return "nolb";
	if (!strcmp(st, "STOP"))
		return "stop";
	return "nocheck";
}

static const struct { const char *code, *text; int ok; } st_msgs[] = {
	{ "DONE", "The action was applied to every selected server.", 1 },
	{ "PART", "The action was applied to some of the selected servers only.", 0 },
	{ "NONE", "Nothing to do: no server was selected.", 1 },
	{ "ERRP", "The action could not be applied: invalid parameters.", 0 },
	{ "EXCD", "The action could not be applied: the request was too large.", 0 },
	{ "DENY", "The action was refused: admin level required.", 0 },
};

/* A GET form replaces the query of its action: a prefix with a query
 * ("/haproxy?stats") keeps it through hidden fields, so that the request
 * still starts with the prefix. <self> is already escaped. */
static void put_scope_form(struct cli_out *o, const struct page_opts *po, const char *self)
{
	const char *q = strchr(self, '?');
	const char *semi;

	cli_printf(o, "<form method=get action='%.*s'>", (int)(q ? q - self : (long)strlen(self)),
	           self);
	if (q) {
		const char *eq = strchr(q + 1, '=');

		semi = strchr(q + 1, ';');
		if (!semi)
			semi = q + strlen(q);
		if (eq && eq < semi)
			cli_printf(o, "<input type=hidden name='%.*s' value='%.*s'>", (int)(eq - q - 1),
			           q + 1, (int)(semi - eq - 1), eq + 1);
		else
			cli_printf(o, "<input type=hidden name='%.*s'>", (int)(semi - q - 1), q + 1);
	}
	cli_printf(o, "scope: <input name=scope size=12 value='");
	put_esc(o, po->scope);
	cli_printf(o, "'></form>");
}

static void put_general(struct cli_out *o, const struct proxy *owner,
                        const struct page_opts *po, const char *self)
{
	const struct stats_page *sp = owner->stats;
	uint64_t up = stats_uptime_sec();
	const char *node = sp->node ? sp->node : global.node ? global.node : "";
	const char *desc = sp->desc ? sp->desc : global.desc ? global.desc : "";

	cli_printf(o, "<h1>Statistics report for pid %d", global.pid);
	if (!(sp->flags & SP_HIDE_VERSION))
		cli_printf(o, " <small>sluice version %s</small>", SLUICE_VERSION);
	cli_printf(o, "</h1>\n<table class=info><tr><td><b>General process information</b><br>\n"
	           "pid = %d; nbthread = %d<br>\nuptime = %llud %lluh%02llum%02llus<br>\n"
	           "system limits: ulimit-n = %ld; maxsock = %d; maxconn = %d<br>\n"
	           "current conns = %d; run queue = %d",
	           global.pid, global.nbthread, (unsigned long long)(up / 86400),
	           (unsigned long long)(up / 3600 % 24), (unsigned long long)(up / 60 % 60),
	           (unsigned long long)(up % 60), global.rlimit_nofile, global.maxsock,
	           atomic_load(&global.maxconn_rt), atomic_load(&global.actconn),
	           stats_run_queue());
	if (sp->flags & SP_SHOW_NODE) {
		cli_printf(o, "<br>\nnode = ");
		put_esc(o, node);
	}
	if ((sp->flags & SP_SHOW_DESC) && *desc) {
		cli_printf(o, "<br>\ndescription = ");
		put_esc(o, desc);
	}
	cli_printf(o, "</td><td><b>Legend</b><br>\n<span class=lg style='background:#c8f0c0'>"
	           "active or backup UP</span><span class=lg style='background:#f8e7a0'>"
	           "UP, going down</span><span class=lg style='background:#f8d0a0'>DOWN, going up"
	           "</span><span class=lg style='background:#f4a8a8'>DOWN</span><br>\n"
	           "<span class=lg style='background:#a8d8f8'>DRAIN</span><span class=lg "
	           "style='background:#c8c8f0'>MAINT</span><span class=lg style='background:"
	           "#e0e0e0'>NOLB</span><span class=lg style='background:#f4f4f4'>not checked"
	           "</span></td><td><b>Display options</b><br>\n");
	put_scope_form(o, po, self);
	cli_printf(o, "\n<a href='%s%s'>%s DOWN servers</a><br>\n", self,
	           po->hide_down ? "" : ";up", po->hide_down ? "Show" : "Hide");
	if (sp->refresh_s)
		cli_printf(o, "<a href='%s%s'>%s</a><br>\n", self, po->norefresh ? "" : ";norefresh",
		           po->norefresh ? "Enable refresh" : "Disable refresh");
	cli_printf(o, "<a href='%s'>Refresh now</a><br>\n<a href='%s;csv'>CSV export</a>"
	           "</td></tr></table>\n", self, self);
	for (size_t i = 0; po->st[0] && i < sizeof(st_msgs) / sizeof(st_msgs[0]); i++)
		if (!strcmp(po->st, st_msgs[i].code))
			cli_printf(o, "<div class='msg %s'>%s <a href='%s'>[dismiss]</a></div>\n",
			           st_msgs[i].ok ? "ok" : "ko", st_msgs[i].text, self);
}

static const char *fld(const struct stat_row *r, enum stat_col c)
{
	return r->f[c] ? r->f[c] : "";
}

static void put_row(struct cli_out *o, const struct stat_row *r, const char *cls, int checkbox,
                    int legends)
{
	static const enum stat_col cols[] = {
		ST_QCUR, ST_QMAX, ST_QLIMIT, ST_RATE, ST_RATE_MAX, ST_RATE_LIM, ST_SCUR, ST_SMAX,
		ST_SLIM, ST_STOT, ST_LBTOT, ST_LASTSESS, ST_BIN, ST_BOUT, ST_DREQ, ST_DRESP,
		ST_EREQ, ST_ECON, ST_ERESP, ST_WRETR, ST_WREDIS, ST_STATUS, ST_CHECK_STATUS,
		ST_WEIGHT, ST_ACT, ST_BCK, ST_CHKFAIL, ST_CHKDOWN, ST_DOWNTIME, ST_THROTTLE,
	};
	const char *name = fld(r, ST_SVNAME);

	cli_printf(o, "<tr class=%s><td class=name>", cls);
	if (checkbox) {
		cli_printf(o, "<input type=checkbox name=s value='");
		put_esc(o, name);
		cli_printf(o, "'> ");
	}
	put_esc(o, !strcmp(name, "FRONTEND") ? "Frontend" : !strcmp(name, "BACKEND") ? "Backend" :
	        name);
	if (legends && r->f[ST_ADDR]) {
		cli_printf(o, " <small>");
		put_esc(o, r->f[ST_ADDR]);
		cli_printf(o, "</small>");
	}
	cli_printf(o, "</td>");
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		const char *v = fld(r, cols[i]);

		if (cols[i] == ST_LASTSESS && !strcmp(v, "-1"))
			v = "";
		if (cols[i] == ST_CHECK_STATUS && r->f[ST_CHECK_CODE]) {
			cli_printf(o, "<td>");
			put_esc(o, v);
			cli_printf(o, "/%s</td>", r->f[ST_CHECK_CODE]);
			continue;
		}
		cli_printf(o, "<td>");
		put_esc(o, v);
		cli_printf(o, "</td>");
	}
	cli_printf(o, "</tr>\n");
}

static const char table_head[] =
	"<thead><tr><th rowspan=2></th><th colspan=3>Queue</th><th colspan=3>Session rate</th>"
	"<th colspan=6>Sessions</th><th colspan=2>Bytes</th><th colspan=2>Denied</th>"
	"<th colspan=3>Errors</th><th colspan=2>Warnings</th><th colspan=9>Server</th></tr>\n"
	"<tr><th>Cur</th><th>Max</th><th>Limit</th><th>Cur</th><th>Max</th><th>Limit</th>"
	"<th>Cur</th><th>Max</th><th>Limit</th><th>Total</th><th>LbTot</th><th>Last</th>"
	"<th>In</th><th>Out</th><th>Req</th><th>Resp</th><th>Req</th><th>Conn</th><th>Resp</th>"
	"<th>Retr</th><th>Redis</th><th>Status</th><th>LastChk</th><th>Wght</th><th>Act</th>"
	"<th>Bck</th><th>Chk</th><th>Dwn</th><th>Dwntme</th><th>Thrtle</th></tr></thead>\n";

static void put_proxy(struct cli_out *o, struct proxy *px, const struct proxy *owner,
                      const struct page_opts *po, int admin, const char *self)
{
	int legends = (owner->stats->flags & SP_SHOW_LEGENDS) != 0;
	int form = admin && (px->cap & PX_CAP_BE) && px->nsrv;
	struct stat_row r = { 0 };

	if (form)
		cli_printf(o, "<form method=post action='%s'>\n", self);
	cli_printf(o, "<table class=px><caption><a name='");
	put_esc(o, px->name);
	cli_printf(o, "' href='#");
	put_esc(o, px->name);
	cli_printf(o, "'>");
	put_esc(o, px->name);
	cli_printf(o, "</a>");
	if (legends)
		cli_printf(o, " <small>cap: %s%s%s, mode: %s, id: %d</small>",
		           (px->cap & PX_CAP_FE) ? "FE" : "", (px->cap & PX_CAP_FE) &&
		           (px->cap & PX_CAP_BE) ? " " : "", (px->cap & PX_CAP_BE) ? "BE" : "",
		           proxy_mode_name(px->mode), px->uuid);
	cli_printf(o, "</caption>\n%s<tbody>\n", table_head);
	if (px->cap & PX_CAP_FE) {
		stats_row_frontend(&r, px);
		put_row(o, &r, !strcmp(fld(&r, ST_STATUS), "OPEN") ? "fe" : "stop", 0, 0);
		stats_row_free(&r);
	}
	if (px->cap & PX_CAP_BE) {
		for (int i = 0; i < px->nsrv; i++) {
			stats_row_server(&r, px, px->srv[i], legends ? CLI_LEVEL_ADMIN : CLI_LEVEL_USER);
			if (!server_hidden(&r, po))
				put_row(o, &r, status_class(fld(&r, ST_STATUS)), form, legends);
			stats_row_free(&r);
		}
		stats_row_backend(&r, px);
		put_row(o, &r, !strncmp(fld(&r, ST_STATUS), "UP", 2) ? "be" : "down", 0, 0);
		stats_row_free(&r);
	}
	cli_printf(o, "</tbody></table>\n");
	if (form)
		cli_printf(o, "Choose the action to perform on the checked servers: "
		           "<select name=action><option value=''></option>"
		           "<option value=ready>Set state to READY</option>"
		           "<option value=drain>Set state to DRAIN</option>"
		           "<option value=maint>Set state to MAINT</option>"
		           "<option value=dhlth>Health: disable checks</option>"
		           "<option value=ehlth>Health: enable checks</option>"
		           "<option value=hrunn>Health: force UP</option>"
		           "<option value=hnolb>Health: force NOLB</option>"
		           "<option value=hdown>Health: force DOWN</option>"
		           "<option value=dagent>Agent: disable checks</option>"
		           "<option value=eagent>Agent: enable checks</option>"
		           "<option value=arunn>Agent: force UP</option>"
		           "<option value=adown>Agent: force DOWN</option>"
		           "<option value=shutdown>Kill Sessions</option></select>"
		           "<input type=hidden name=b value='#%d'> <input type=submit value=Apply>"
		           "</form>\n", px->uuid);
}

static void put_html(struct cli_out *o, const struct proxy *owner, const struct page_opts *po,
                     int admin, const char *self)
{
	const char *node = owner->stats->node ? owner->stats->node : global.node;

	cli_printf(o, "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>\n"
	           "<title>Statistics Report for sluice%s", node && *node ? " on " : "");
	if (node)
		put_esc(o, node);
	cli_printf(o, "</title>\n<style>%s</style></head>\n<body>\n", page_style);
	put_general(o, owner, po, self);
	for (struct list *p = proxies.next; p != &proxies; p = p->next) {
		struct proxy *px = list_elem(p, struct proxy, list);

		if (in_scope(owner, px, po))
			put_proxy(o, px, owner, po, admin, self);
	}
	cli_printf(o, "</body></html>\n");
}

int stats_page_render(const struct proxy *px, const char *opts, size_t olen, int admin,
                      char **body, size_t *len, int *csv)
{
	const struct stats_page *sp = px->stats;
	struct cli_out o = { 0 };
	struct page_opts po;
	char self[1024];

	parse_opts(opts, olen, &po);
	/* 1 CSV or typed (text/plain), 2 JSON */
	*csv = po.fmt == STATS_FMT_JSON ? 2 : po.csv;
	if (po.csv)
		put_csv(&o, px, &po, CLI_LEVEL_USER);
	else {
		struct cli_out e = { 0 };

		/* links keep the options that select what is shown; the prefix
		 * comes from the configuration but lands in attributes: escaped */
		put_esc(&e, sp->uri ? sp->uri : STATS_DEFAULT_URI);
		snprintf(self, sizeof(self), "%s%s%s", e.buf ? e.buf : "",
		         po.norefresh ? ";norefresh" : "", po.hide_maint ? ";no-maint" : "");
		free(e.buf);
		put_html(&o, px, &po, admin, self);
	}
	if (o.failed || !o.buf) {
		free(o.buf);
		return -1;
	}
	*body = o.buf;
	*len = o.len;
	return 0;
}
