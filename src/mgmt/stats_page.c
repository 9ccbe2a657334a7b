/* The HTTP statistics page: its configuration keywords (`stats enable`,
 * `uri`, `realm`, `auth`, `refresh`, `scope`, `hide-version`,
 * `show-legends`, `show-node`, `show-desc`, `show-modules`, `admin`,
 * `http-request`), the test that a request is for it, its access rules,
 * and the admin form's POST. The report itself is rendered by
 * stats_html.c.
 *
 * Configuration time (one thread): a proxy inherits its defaults
 * section's settings by reference; its first own `stats` line makes a
 * private copy (sp_own()). After parsing, `stats auth` users become one
 * last rule of the `stats http-request` list (an internal action that
 * answers 401 unless the request's credentials are valid), which is what
 * HAProxy does, so that an explicit `allow` before it skips it.
 *
 * Run time: the stream asks stats_page_match() after each proxy's
 * http-request rules; then runs the page's rules and `stats admin`
 * conditions (stream_req.c), and the page answers as a service
 * (stats_page_produce()). The admin POST changes server states through
 * srv_set_admin(), as the CLI's `set server` does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/sample.h>
#include <sluice/http/act.h>
#include <sluice/http/txn.h>
#include <sluice/http/userlist.h>
#include <sluice/mgmt/stats_page.h>
#include <sluice/proxy/check.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_state.h>
#include <sluice/proxy/stream.h>
#include <sluice/proxy/stream_int.h>
#include <sluice/http/msgedit.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_stats(KW_ARGS);

/* `stats socket|timeout|maxconn` are global keywords of the CLI module:
 * only the proxy's `stats` lines come here */
static const struct cfg_kw stats_page_kws[] = {
	{ "stats", NULL, CFG_SEC_PROXY, kw_stats },
	{ NULL }
};
CFG_REGISTER(stats_page_kws)

static const char stats_usage[] = "expects 'admin', 'uri', 'realm', 'auth', 'scope', "
	"'enable', 'hide-version', 'show-node', 'show-desc' or 'show-legends'.";

/* ---- settings ---- */

static struct stats_page *sp_new(void)
{
	struct stats_page *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->refcnt = 1;
	list_init(&sp->rules);
	return sp;
}

void stats_page_release(struct stats_page *sp)
{
	if (!sp || --sp->refcnt > 0)
		return;
	act_free_rules(&sp->rules);
	while (sp->admin) {
		struct stats_admin_rule *next = sp->admin->next;

		acl_cond_free(sp->admin->cond);
		free(sp->admin);
		sp->admin = next;
	}
	while (sp->scopes) {
		struct stats_scope *next = sp->scopes->next;

		free(sp->scopes->name);
		free(sp->scopes);
		sp->scopes = next;
	}
	userlist_free(sp->users);
	free(sp->uri);
	free(sp->realm);
	free(sp->node);
	free(sp->desc);
	free(sp);
}

static char *dup_or_null(const char *s, int *failed)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*failed = 1;
	return d;
}

/* A private copy of settings inherited from a defaults section (which
 * holds neither rules nor admin conditions: both are refused there). */
static struct stats_page *sp_copy(const struct stats_page *src)
{
	struct stats_page *sp = sp_new();
	struct stats_scope **tail;
	int failed = 0;

	if (!sp)
		return NULL;
	sp->uri = dup_or_null(src->uri, &failed);
	sp->realm = dup_or_null(src->realm, &failed);
	sp->node = dup_or_null(src->node, &failed);
	sp->desc = dup_or_null(src->desc, &failed);
	sp->refresh_s = src->refresh_s;
	sp->flags = src->flags;
	tail = &sp->scopes;
	for (const struct stats_scope *sc = src->scopes; sc && !failed; sc = sc->next) {
		*tail = calloc(1, sizeof(**tail));
		if (!*tail || !((*tail)->name = strdup(sc->name))) {
			failed = 1;
			break;
		}
		tail = &(*tail)->next;
	}
	if (src->users && !failed) {
		sp->users = userlist_new(NULL, NULL, 0);
		if (!sp->users)
			failed = 1;
		for (int i = 0; !failed && i < src->users->nusers; i++) {
			const struct ul_user *u = &src->users->users[i];

			if (userlist_add_user(sp->users, u->name, strlen(u->name), u->pass,
			                      u->insecure) < 0)
				failed = 1;
		}
	}
	if (failed) {
		stats_page_release(sp);
		return NULL;
	}
	return sp;
}

/* The proxy's own settings, created or copied from its defaults'. */
static struct stats_page *sp_own(struct proxy *px)
{
	struct stats_page *sp = px->stats;

	if (sp && sp->refcnt == 1)
		return sp;
	sp = sp ? sp_copy(sp) : sp_new();
	if (!sp)
		return NULL;
	stats_page_release(px->stats);
	px->stats = sp;
	return sp;
}

static int set_str(char **dst, const char *v, char *err, size_t errlen)
{
	char *d = strdup(v);

	if (!d)
		return errmsg_set(err, errlen, "out of memory");
	free(*dst);
	*dst = d;
	return 0;
}

static int stats_auth_line(struct stats_page *sp, const char *v, char *err, size_t errlen)
{
	const char *colon = strchr(v, ':');

	/* HAProxy 2.6 takes "user" without a colon as a user without password:
	 * it can never log in, but the page then asks for credentials */
	if (!sp->users && !(sp->users = userlist_new(NULL, NULL, 0)))
		return errmsg_set(err, errlen, "out of memory");
	if (userlist_add_user(sp->users, v, colon ? (size_t)(colon - v) : strlen(v),
	                      colon ? colon + 1 : NULL, 1) < 0)
		return errmsg_set(err, errlen, "out of memory");
	return 0;
}

static int stats_scope_line(struct stats_page *sp, const char *v, char *err, size_t errlen)
{
	struct stats_scope *sc = calloc(1, sizeof(*sc)), **tail;

	if (!sc || !(sc->name = strdup(v))) {
		free(sc);
		return errmsg_set(err, errlen, "out of memory");
	}
	for (tail = &sp->scopes; *tail; tail = &(*tail)->next)
		;
	*tail = sc;
	return 0;
}

static int stats_admin_line(struct cfg_ctx *ctx, struct stats_page *sp, char **args, int nargs,
                            char *err, size_t errlen)
{
	struct stats_admin_rule *r, **tail;
	char sub[512];

	if (nargs < 3 || (strcmp(args[2], "if") && strcmp(args[2], "unless")))
		return errmsg_set(err, errlen, "'stats admin' requires either 'if' or 'unless' "
		                  "followed by a condition.");
	r = calloc(1, sizeof(*r));
	if (!r)
		return errmsg_set(err, errlen, "out of memory");
	r->cond = acl_cond_parse(args + 2, nargs - 2, ctx->px->acls, ctx->file, ctx->line,
	                         sub, sizeof(sub));
	if (!r->cond) {
		free(r);
		return errmsg_set(err, errlen, "error detected while parsing an 'stats admin' "
		                  "condition : %s.", sub);
	}
	for (tail = &sp->admin; *tail; tail = &(*tail)->next)
		;
	*tail = r;
	return 0;
}

/* The words of `stats <what>` that only take an optional argument. */
static int stats_flag_line(struct stats_page *sp, const char *what, char **args, int nargs,
                           char *err, size_t errlen)
{
	if (!strcmp(what, "enable"))
		return 0;
	if (!strcmp(what, "hide-version"))
		sp->flags |= SP_HIDE_VERSION;
	else if (!strcmp(what, "show-legends"))
		sp->flags |= SP_SHOW_LEGENDS;
	else if (!strcmp(what, "show-modules"))
		sp->flags |= SP_SHOW_MODULES;
	else if (!strcmp(what, "show-node")) {
		sp->flags |= SP_SHOW_NODE;
		if (nargs > 2 && *args[2])
			return set_str(&sp->node, args[2], err, errlen);
	} else if (!strcmp(what, "show-desc")) {
		sp->flags |= SP_SHOW_DESC;
		if (nargs > 2 && *args[2]) {
			/* the description is every word that follows */
			size_t len = 0;
			char *d;

			for (int i = 2; i < nargs; i++)
				len += strlen(args[i]) + 1;
			d = calloc(1, len);
			if (!d)
				return errmsg_set(err, errlen, "out of memory");
			for (int i = 2; i < nargs; i++) {
				if (i > 2)
					strcat(d, " ");
				strcat(d, args[i]);
			}
			free(sp->desc);
			sp->desc = d;
		}
	} else
		return -2;
	return 0;
}

static int kw_stats(KW_ARGS)
{
	const char *what = nargs > 1 ? args[1] : "";
	struct stats_page *sp;
	int rc;

	if (!*what)
		return errmsg_set(err, errlen, "missing keyword in 'stats', %s", stats_usage);
	if (ctx->section == CFG_SEC_DEFAULTS &&
	    (!strcmp(what, "admin") || !strcmp(what, "http-request")))
		return errmsg_set(err, errlen, "'stats %s' not allowed in 'defaults' section.",
		                  what);
	sp = sp_own(ctx->px);
	if (!sp)
		return errmsg_set(err, errlen, "out of memory");
	if (!strcmp(what, "admin"))
		return stats_admin_line(ctx, sp, args, nargs, err, errlen);
	if (!strcmp(what, "http-request"))
		return act_rule_parse_into(ctx->px, ACT_HTTP_REQ, &sp->rules, args + 2, nargs - 2,
		                           ctx->file, ctx->line, err, errlen);
	if (!strcmp(what, "uri")) {
		if (nargs < 3 || !*args[2])
			return errmsg_set(err, errlen, "'uri' needs an URI prefix.");
		return set_str(&sp->uri, args[2], err, errlen);
	}
	if (!strcmp(what, "realm")) {
		if (nargs < 3 || !*args[2])
			return errmsg_set(err, errlen, "'realm' needs an realm name.");
		return set_str(&sp->realm, args[2], err, errlen);
	}
	if (!strcmp(what, "refresh")) {
		int ms;

		if (nargs < 3 || cfg_parse_time_ms(args[2], &ms, err, errlen) < 0)
			return errmsg_set(err, errlen, "'refresh' expects a delay such as '10s'.");
		sp->refresh_s = ms / 1000 ? ms / 1000 : (ms ? 1 : 0);
		return 0;
	}
	if (!strcmp(what, "auth")) {
		if (nargs < 3 || !*args[2])
			return errmsg_set(err, errlen, "'auth' needs a user:password account.");
		return stats_auth_line(sp, args[2], err, errlen);
	}
	if (!strcmp(what, "scope")) {
		if (nargs < 3 || !*args[2])
			return errmsg_set(err, errlen, "'scope' needs a proxy name.");
		return stats_scope_line(sp, args[2], err, errlen);
	}
	rc = stats_flag_line(sp, what, args, nargs, err, errlen);
	if (rc == -2)
		return errmsg_set(err, errlen, "unknown stats parameter '%s', %s", what, stats_usage);
	return rc;
}

/* ---- after parsing ---- */

/* The check of `stats auth`: 401 unless the credentials are a user's. */
static enum act_verdict exec_stats_auth(const struct act_rule *r, struct act_env *env)
{
	const struct stats_page *sp = r->arg;
	struct sample smp;
	struct ist user, pass;

	memset(&smp, 0, sizeof(smp));
	if (smp_http_basic_creds(env->smp, &smp, &user, &pass) &&
	    userlist_check(sp->users, user.ptr, user.len, pass.ptr, pass.len))
		return ACT_V_CONTINUE;
	env->status = 401;
	env->auth = 1;
	env->auth_realm = sp->realm ? sp->realm : STATS_DEFAULT_REALM;
	return ACT_V_DENY;
}

static const struct act_kw stats_auth_kw = { "stats-auth", ACT_F_HTTP_REQ, NULL,
                                             exec_stats_auth };

static int add_auth_rule(struct stats_page *sp, const struct proxy *px)
{
	struct act_rule *r;

	if (!sp->users)
		return 0;
	for (struct list *p = sp->rules.next; p != &sp->rules; p = p->next)
		if (list_elem(p, struct act_rule, list)->kw == &stats_auth_kw)
			return 0;   /* shared with another proxy: done */
	r = calloc(1, sizeof(*r));
	if (!r || !(r->file = strdup(px->conf_file ? px->conf_file : ""))) {
		free(r);
		cfg_alert(px->conf_file, px->conf_line, "out of memory");
		return 1;
	}
	r->set = ACT_HTTP_REQ;
	r->kw = &stats_auth_kw;
	r->line = px->conf_line;
	r->arg = sp;
	list_append(&sp->rules, &r->list);
	return 0;
}

/* Whether the only rule is the check of `stats auth` (added for another
 * proxy sharing the settings). */
static int stats_rules_are_auth(const struct stats_page *sp)
{
	return sp->rules.next != &sp->rules && sp->rules.next->next == &sp->rules &&
	       list_elem(sp->rules.next, struct act_rule, list)->kw == &stats_auth_kw;
}

static int stats_page_postparse(void)
{
	int errors = 0;

	for (struct list *p = proxies.next; p != &proxies; p = p->next) {
		struct proxy *px = list_elem(p, struct proxy, list);

		if (!px->stats)
			continue;
		if (px->mode != PX_MODE_HTTP) {
			cfg_warning(px->conf_file, px->conf_line, "'stats' statement ignored for %s "
			            "'%s' as it requires HTTP mode.",
			            (px->cap & PX_CAP_FE) && (px->cap & PX_CAP_BE) ? "proxy" :
			            (px->cap & PX_CAP_FE) ? "frontend" : "backend", px->name);
			stats_page_release(px->stats);
			px->stats = NULL;
			continue;
		}
		if ((px->stats->users || px->stats->realm) && !list_empty(&px->stats->rules) &&
		    !stats_rules_are_auth(px->stats)) {
			cfg_alert(px->conf_file, px->conf_line, "proxy '%s': stats 'auth'/'realm' and "
			          "'http-request' can't be used at the same time.", px->name);
			errors++;
			continue;
		}
		errors += add_auth_rule(px->stats, px);
	}
	return errors;
}

static struct cfg_post_hook stats_page_post_hook = { .fn = stats_page_postparse, .order = 20 };

__attribute__((constructor)) static void stats_page_register(void)
{
	cfg_register_post(&stats_page_post_hook);
}

/* ---- requests ---- */

/* The part of the request target the prefix is compared with: the path
 * and what follows when the prefix starts with '/' (an absolute-form
 * target loses its scheme and authority), else the whole target. */
static struct ist stats_target(const struct stats_page *sp, const struct http_msg *m)
{
	const char *uri = sp->uri ? sp->uri : STATS_DEFAULT_URI;
	struct ist t = m->uri;

	if (uri[0] == '/' && t.len && t.ptr[0] != '/') {
		struct ist path = http_uri_path(t);

		t.len -= (size_t)(path.ptr - t.ptr);
		t.ptr = path.ptr;
	}
	return t;
}

int stats_page_match(const struct stats_page *sp, const struct http_msg *m)
{
	const char *uri;
	struct ist t;
	size_t l;

	if (!sp || (m->meth != HTTP_METH_GET && m->meth != HTTP_METH_HEAD &&
	            m->meth != HTTP_METH_POST))
		return 0;
	uri = sp->uri ? sp->uri : STATS_DEFAULT_URI;
	l = strlen(uri);
	t = stats_target(sp, m);
	return t.len >= l && memcmp(t.ptr, uri, l) == 0;
}

/* ---- the admin form ---- */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* URL-decodes <in>[0..len) ('+' is a space) into <out> (NUL-terminated).
 * Returns 0, or -1 when it does not fit or an escape is invalid. */
static int form_decode(const char *in, size_t len, char *out, size_t room)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = in[i];

		if (c == '%') {
			int h, l;

			if (i + 2 >= len || (h = hexval(in[i + 1])) < 0 ||
			    (l = hexval(in[i + 2])) < 0)
				return -1;
			c = (char)(h << 4 | l);
			i += 2;
		} else if (c == '+')
			c = ' ';
		if (o + 1 >= room)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

static void *post_backend(void *ctx, const char *v)
{
	if (v[0] == '#') {
		char *end;
		long id = strtol(v + 1, &end, 10);

		if (!v[1] || *end)
			return NULL;
		for (struct list *p = proxies.next; p != &proxies; p = p->next) {
			struct proxy *px = list_elem(p, struct proxy, list);

			if (px->uuid == id && (px->cap & PX_CAP_BE))
				return px;
		}
		return NULL;
	}
	return proxy_find(v, PX_CAP_BE);
}

const char *const stats_act_names[STATS_ACT_COUNT] = {
	"ready", "drain", "maint", "dhlth", "ehlth", "hrunn", "hnolb", "hdown", "dagent",
	"eagent", "arunn", "adown", "shutdown",
};

/* What the page asks of one server, counted as HAProxy counts it: 1
 * altered, 0 not found, -1 left out (enabling or disabling the checks or
 * the agent, or forcing the agent, of a server that has none); forcing the
 * health counts every server and changes those with checks. */
static int post_apply(void *ctx, void *be, int action, const char *name)
{
	struct server *srv = server_find(be, name);

	if (!srv)
		return 0;
	switch (action) {
	case STATS_ACT_READY:
	case STATS_ACT_DRAIN:
	case STATS_ACT_MAINT:
		srv_set_admin(srv, action == STATS_ACT_READY ? SRV_ADMIN_READY :
		              action == STATS_ACT_DRAIN ? SRV_ADMIN_DRAIN : SRV_ADMIN_MAINT);
		return 1;
	case STATS_ACT_DHLTH:
	case STATS_ACT_EHLTH:
		if (!srv->check)
			return -1;
		atomic_store(&srv->chk_disabled, action == STATS_ACT_DHLTH);
		return 1;
	case STATS_ACT_HRUNN:
	case STATS_ACT_HNOLB:
	case STATS_ACT_HDOWN:
		if (srv->check && !srv->track)
			srv_set_health(srv, action == STATS_ACT_HRUNN ? SRV_OP_UP :
			               action == STATS_ACT_HNOLB ? SRV_OP_NOLB : SRV_OP_DOWN);
		return 1;
	case STATS_ACT_DAGENT:
	case STATS_ACT_EAGENT:
		if (!srv->agent)
			return -1;
		atomic_store(&srv->agent_disabled, action == STATS_ACT_DAGENT);
		if (action == STATS_ACT_EAGENT)
			check_agent_wake_now(srv);
		return 1;
	case STATS_ACT_ARUNN:
	case STATS_ACT_ADOWN:
		if (!srv->agent)
			return -1;
		srv_set_agent_health(srv, action == STATS_ACT_ARUNN);
		return 1;
	case STATS_ACT_SHUTDOWN:
		stream_shutdown_server(srv, 'K');
		return 1;
	}
	return 0;
}

static int post_action(const char *v)
{
	for (int i = 0; i < STATS_ACT_COUNT; i++)
		if (!strcmp(v, stats_act_names[i]))
			return i;
	return -1;
}

/* As HAProxy, the pairs are read from the last one: the form puts the
 * backend and the action after the servers' checkboxes. */
const char *stats_form_walk(const char *body, size_t len, const struct stats_form_ops *ops,
                            void *ctx)
{
	void *be = NULL;
	int action = -1, total = 0, altered = 0;
	const char *end = body + len;

	while (end > body) {
		const char *start = end, *eq;
		char key[32], val[256];

		while (start > body && start[-1] != '&')
			start--;
		eq = memchr(start, '=', (size_t)(end - start));
		if (eq && form_decode(start, (size_t)(eq - start), key, sizeof(key)) == 0 &&
		    form_decode(eq + 1, (size_t)(end - eq - 1), val, sizeof(val)) == 0) {
			if (!strcmp(key, "b")) {
				be = ops->find_backend(ctx, val);
				if (!be)
					return "ERRP";
			} else if (!strcmp(key, "action")) {
				action = post_action(val);
				if (action < 0)
					return "ERRP";
			} else if (!strcmp(key, "s")) {
				int r;

				if (!be || action < 0)
					return "ERRP";
				r = ops->apply(ctx, be, action, val);
				total += r >= 0;
				altered += r > 0;
			}
		}
		end = start > body ? start - 1 : body;
	}
	if (!total)
		return "NONE";
	return altered == total ? "DONE" : altered ? "PART" : "ERRP";
}

const char *stats_page_post(const char *body, size_t len)
{
	static const struct stats_form_ops ops = { post_backend, post_apply };

	return stats_form_walk(body, len, &ops, NULL);
}

/* ---- the answer ---- */

int stats_page_produce(struct stream *s, struct svc_reply *out)
{
	struct http_txn *t = s->txn;
	const struct proxy *px = t->stats_px;
	const struct stats_page *sp = px->stats;
	const char *uri = sp->uri ? sp->uri : STATS_DEFAULT_URI;
	struct ist target = stats_target(sp, &t->req);
	size_t plen = strlen(uri);
	int csv = 0;

	if (t->req.meth == HTTP_METH_POST) {
		struct smp_ctx c;
		const char *st = "DENY";

		stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
		if (t->stats_admin)
			st = c.req_body_complete ? stats_page_post(c.req_body.ptr, c.req_body.len) :
			     "EXCD";
		out->status = 303;
		out->content_type = "text/plain";
		snprintf(out->extra_hdrs, sizeof(out->extra_hdrs), "location: %s;st=%s\r\n", uri, st);
		return 0;
	}
	if (stats_page_render(px, target.ptr + plen, target.len - plen, t->stats_admin, &out->body,
	                      &out->len, &csv) < 0)
		return -1;
	out->status = 200;
	out->content_type = csv == 2 ? "application/json" : csv ? "text/plain" : "text/html";
	if (sp->refresh_s && !memmem(target.ptr + plen, target.len - plen, ";norefresh", 10))
		snprintf(out->extra_hdrs, sizeof(out->extra_hdrs), "refresh: %d\r\n", sp->refresh_s);
	return 0;
}
