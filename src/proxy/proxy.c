/* Proxies: frontend, backend, listen and defaults sections, their keywords,
 * inheritance from defaults, and the cross-checks done after parsing.
 *
 * Everything here runs at configuration time, single-threaded. At run time
 * a proxy's settings are read-only; counters and connection counts are
 * atomics; the balancer state is under lb_lock (see lb.c) and the backend
 * queue under its own lock (see queue.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/cfg/cfg_free.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/expr/acl.h>
#include <sluice/http/errors.h>
#include <sluice/proxy/check_http.h>
#include <sluice/proxy/check_tcp.h>
#include <sluice/proxy/lb_hash.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/http/comp.h>
#include <sluice/mgmt/stats_page.h>
#include <sluice/mgmt/cli.h>
#include <sluice/net/unix_sock.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/px_logfmt.h>
#include <sluice/proxy/stktable.h>
#include <sluice/proxy/server.h>
#include <sluice/http/act.h>

static int proxy_has_tcp_service(const struct proxy *px);

/* the socket settings and `id` keywords (px_sock.c) register from a
 * constructor: referencing them links them wherever proxies are */
extern const int proxy_px_sock_anchor;
__attribute__((used)) static const int *const px_sock_anchor = &proxy_px_sock_anchor;
extern const int http_px_cfg_anchor, proxy_persist_cfg_anchor, proxy_px_compat_anchor;
extern const int srv_statefile_anchor;
__attribute__((used)) static const int *const statefile_anchor = &srv_statefile_anchor;
__attribute__((used)) static const int *const px_compat_anchor = &proxy_px_compat_anchor;
__attribute__((used)) static const int *const persist_anchor = &proxy_persist_cfg_anchor;
__attribute__((used)) static const int *const http_px_anchor = &http_px_cfg_anchor;

struct list proxies = LIST_HEAD_INIT(proxies);
static struct list defaults_list = LIST_HEAD_INIT(defaults_list);
static struct proxy *last_defaults;
static int next_uuid = 1;

static int kw_mode(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_bind(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_maxconn(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_fullconn(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_default_backend(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_use_backend(struct cfg_ctx *, char **, int, char *, size_t);
static int use_backend_parse(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_balance(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_timeout(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_retries(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_retry_on(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_option(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_log(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_log_format(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_log_tag(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_disabled(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_ignored(struct cfg_ctx *, char **, int, char *, size_t);

static const struct cfg_kw proxy_kws[] = {
	{ "mode",            NULL,        CFG_SEC_PROXY,   kw_mode },
	{ "bind",            NULL,        CFG_SEC_FE_ONLY, kw_bind },
	{ "maxconn",         NULL,        CFG_SEC_FE,      kw_maxconn },
	{ "fullconn",        NULL,        CFG_SEC_BE,      kw_fullconn },
	{ "default_backend", NULL,        CFG_SEC_FE,      kw_default_backend },
	{ "use_backend",     NULL,        CFG_SEC_FE_ONLY, kw_use_backend },
	{ "balance",         NULL,        CFG_SEC_BE,      kw_balance },
	{ "timeout",         "client",    CFG_SEC_FE,      kw_timeout },
	{ "timeout",         "client-fin", CFG_SEC_FE,     kw_timeout },
	{ "timeout",         "server",    CFG_SEC_BE,      kw_timeout },
	{ "timeout",         "server-fin", CFG_SEC_BE,     kw_timeout },
	{ "timeout",         "connect",   CFG_SEC_BE,      kw_timeout },
	{ "timeout",         "queue",     CFG_SEC_BE,      kw_timeout },
	{ "timeout",         "tunnel",    CFG_SEC_BE,      kw_timeout },
	{ "timeout",         "check",     CFG_SEC_BE,      kw_timeout },
	{ "retries",         NULL,        CFG_SEC_BE,      kw_retries },
	{ "retry-on",        NULL,        CFG_SEC_BE,      kw_retry_on },
	{ "option",          "redispatch", CFG_SEC_BE,     kw_option, 1 },
	{ "option",          "tcplog",    CFG_SEC_FE,      kw_option },
	{ "option",          "dontlognull", CFG_SEC_FE,    kw_option, 1 },
	{ "option",          "allbackups", CFG_SEC_BE,     kw_option, 1 },
	{ "option",          "log-health-checks", CFG_SEC_BE, kw_option, 1 },
	{ "log",             NULL,        CFG_SEC_PROXY | CFG_SEC_GLOBAL, kw_log, 1 },
	{ "log-format",      NULL,        CFG_SEC_FE,      kw_log_format },
	{ "log-tag",         NULL,        CFG_SEC_PROXY,   kw_log_tag },
	{ "disabled",        NULL,        CFG_SEC_PROXY,   kw_disabled },
	{ "enabled",         NULL,        CFG_SEC_PROXY,   kw_disabled },
	{ "description",     NULL,        CFG_SEC_PROXY,   kw_ignored },
	{ NULL }
};
CFG_REGISTER(proxy_kws)

const char *proxy_mode_name(enum px_mode m)
{
	return m == PX_MODE_HTTP ? "http" : "tcp";
}

static void proxy_set_defaults(struct proxy *px)
{
	px->retries = 3;
	px->mode = PX_MODE_TCP;
	px->lb_algo = LB_ROUNDROBIN;
	px->random_draws = 2;
	px->redispatch_interval = -1;
	atomic_init(&px->fe_maxconn_rt, -1);
	list_init(&px->logs);
	list_init(&px->binds);
	list_init(&px->use_backends);
	list_init(&px->use_servers);
	list_init(&px->stick_rules);
	list_init(&px->http_req_rules);
	list_init(&px->http_res_rules);
	list_init(&px->http_after_rules);
	list_init(&px->tcp_req_conn_rules);
	list_init(&px->tcp_req_sess_rules);
	list_init(&px->tcp_req_cont_rules);
	list_init(&px->tcp_res_cont_rules);
	px->pool_max_conn = -1;
	px->pool_purge_delay = 5000;
	px->defsrv = server_new_default();
	lock_init(&px->lb_lock, LK_LB, NULL);
	lock_init(&px->state_lock, LK_SRV_STATE, NULL);
	queue_init(&px->queue);
}

static void proxy_clear_log_format(struct proxy *px)
{
	free(px->log_format);
	free(px->log_format_file);
	px->log_format = px->log_format_file = NULL;
}

/* Sets the log-format string and where it was written: it is compiled once
 * the proxy's mode is known (proxy_check_one()), and its errors must name
 * that line, not the proxy's. Returns -1 if out of memory. */
static int proxy_set_log_format(struct proxy *px, const char *fmt, const char *file, int line)
{
	proxy_clear_log_format(px);
	px->log_format = strdup(fmt);
	px->log_format_file = strdup(file);
	px->log_format_line = line;
	if (!px->log_format || !px->log_format_file) {
		proxy_clear_log_format(px);
		return -1;
	}
	return 0;
}

/* Copies what a proxy inherits from a defaults section. */
static void proxy_inherit(struct proxy *px, const struct proxy *def)
{
	struct list *pos, *tmp;

	px->mode = def->mode;
	px->timeout_client = def->timeout_client;
	px->timeout_server = def->timeout_server;
	px->timeout_connect = def->timeout_connect;
	px->timeout_queue = def->timeout_queue;
	px->timeout_tunnel = def->timeout_tunnel;
	px->timeout_client_fin = def->timeout_client_fin;
	px->timeout_server_fin = def->timeout_server_fin;
	px->timeout_check = def->timeout_check;
	px->retries = def->retries;
	px->retry_on = def->retry_on;
	px->options = def->options;
	px->redispatch_interval = def->redispatch_interval;
	px->fullconn = def->fullconn;
	px->lb_algo = def->lb_algo;
	px->cli_so = def->cli_so;
	px->srv_so = def->srv_so;
	px->backlog = def->backlog;
	px->fe_rate_lim = def->fe_rate_lim;
	px->srv_state_load = def->srv_state_load;
	px->chk_send_state = def->chk_send_state;
	px->log_tag = def->log_tag ? strdup(def->log_tag) : NULL;
	px->random_draws = def->random_draws;
	if (px->cap & PX_CAP_FE)
		px->maxconn = def->maxconn;
	if (def->log_format &&
	    proxy_set_log_format(px, def->log_format, def->log_format_file, def->log_format_line) < 0)
		px->log_format = NULL;   /* out of memory: the built-in format */
	px_error_log_format_inherit(px, def);
	if (def->defbe_name && (px->cap & PX_CAP_FE)) {
		px->defbe_name = strdup(def->defbe_name);
		px->defbe_file = strdup(def->defbe_file);
		px->defbe_line = def->defbe_line;
	}
	list_for_each_safe(pos, tmp, &def->logs) {
		struct log_target *t = log_target_clone(list_elem(pos, struct log_target, list));

		if (t)
			list_append(&px->logs, &t->list);
	}
	server_copy_settings(px->defsrv, def->defsrv);
	hchk_inherit(px, def);
	tchk_inherit(px, def);
	/* HTTP (http_cfg.c): scalars, then deep copies */
	px->timeout_http_request = def->timeout_http_request;
	px->timeout_http_keep_alive = def->timeout_http_keep_alive;
	px->timeout_tarpit = def->timeout_tarpit;
	px->tcp_inspect_delay = def->tcp_inspect_delay;
	px->tcp_res_inspect_delay = def->tcp_res_inspect_delay;
	px->http_conn = def->http_conn;
	px->http_reuse = def->http_reuse;
	px->fwdfor = def->fwdfor;
	px->fwdfor.hdr = def->fwdfor.hdr ? strdup(def->fwdfor.hdr) : NULL;
	px->origto = def->origto;
	px->origto.hdr = def->origto.hdr ? strdup(def->origto.hdr) : NULL;
	if (def->errors && (px->errors = malloc(sizeof(*px->errors)))) {
		http_errors_init(px->errors);
		http_errors_copy(px->errors, def->errors, NULL, 0);
	}
	if (def->send_name_hdr && (px->cap & PX_CAP_BE))
		px->send_name_hdr = strdup(def->send_name_hdr);
	if (def->stats) {
		/* shared until a `stats` line of the proxy makes it its own */
		px->stats = def->stats;
		px->stats->refcnt++;
	}
	if (px->cap & PX_CAP_FE) {
		px->monitor_uri = def->monitor_uri ? strdup(def->monitor_uri) : NULL;
		px->unique_id_fmt_str = def->unique_id_fmt_str ? strdup(def->unique_id_fmt_str) : NULL;
		px->unique_id_fmt_file = def->unique_id_fmt_file ? strdup(def->unique_id_fmt_file) : NULL;
		px->unique_id_fmt_line = def->unique_id_fmt_line;
		px->unique_id_hdr = def->unique_id_hdr ? strdup(def->unique_id_hdr) : NULL;
	}
	if (px->cap & PX_CAP_BE) {
		px->cookie_name = def->cookie_name ? strdup(def->cookie_name) : NULL;
		px->cookie_domain = def->cookie_domain ? strdup(def->cookie_domain) : NULL;
		px->cookie_opts = def->cookie_opts;
		px->cookie_maxidle = def->cookie_maxidle;
		px->cookie_maxlife = def->cookie_maxlife;
		px->hash_type = def->hash_type;
		lb_hash_conf_inherit(px, def);
		px->lb_arg = def->lb_arg ? strdup(def->lb_arg) : NULL;
		px->lb_uri_len = def->lb_uri_len;
		px->lb_uri_depth = def->lb_uri_depth;
		px->lb_uri_whole = def->lb_uri_whole;
		px->lb_uri_path_only = def->lb_uri_path_only;
		px->lb_hdr_domain = def->lb_hdr_domain;
	}
	comp_cfg_inherit(px, def);   /* out of memory: no compression */
	px->defaults = (struct proxy *)def;
}

/* The defaults section named <name>; NULL if none, and *dups set when several
 * share the name (a referenced defaults section must be unique). */
static struct proxy *find_defaults(const char *name, int *dups)
{
	struct list *pos, *tmp;
	struct proxy *found = NULL;

	*dups = 0;
	list_for_each_safe(pos, tmp, &defaults_list) {
		struct proxy *d = list_elem(pos, struct proxy, list);

		if (d->name && strcmp(d->name, name) == 0) {
			if (found)
				*dups = 1;
			else
				found = d;
		}
	}
	return found;
}

struct proxy *proxy_find(const char *name, unsigned int cap)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if ((px->cap & cap) && strcmp(px->name, name) == 0)
			return px;
	}
	return NULL;
}

static int valid_name(const char *n)
{
	if (!*n)
		return 0;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9') || *n == '-' || *n == '_' ||
		      *n == '.' || *n == ':'))
			return 0;
	return 1;
}

struct proxy *proxy_cfg_begin(struct cfg_ctx *ctx, enum cfg_section sec,
                              char **args, int nargs, char *err, size_t errlen)
{
	const char *name = nargs > 1 ? args[1] : NULL;
	const char *from = NULL;
	struct proxy *px, *def = last_defaults;
	unsigned int cap;
	int dups;

	if (nargs > 2) {
		if (strcmp(args[2], "from") != 0 || nargs != 4) {
			snprintf(err, errlen, "'%s %s': expects only 'from <defaults>' after the name.",
			         args[0], name);
			return NULL;
		}
		from = args[3];
	}
	if (sec == CFG_SEC_DEFAULTS) {
		/* a defaults section starts from the built-in settings unless it
		 * names another one with `from` */
		def = NULL;
		cap = PX_CAP_DEF;
		if (name && !valid_name(name)) {
			snprintf(err, errlen, "invalid character in defaults name '%s'.", name);
			return NULL;
		}
	} else {
		cap = sec == CFG_SEC_FRONTEND ? PX_CAP_FE :
		      sec == CFG_SEC_BACKEND ? PX_CAP_BE : PX_CAP_FE | PX_CAP_BE;
		if (!name) {
			snprintf(err, errlen, "'%s' expects a name.", args[0]);
			return NULL;
		}
		if (!valid_name(name)) {
			snprintf(err, errlen, "invalid character in %s name '%s'.", args[0], name);
			return NULL;
		}
		px = proxy_find(name, cap);
		if (px) {
			snprintf(err, errlen, "%s '%s' has the same name as %s '%s' declared at %s:%d.",
			         args[0], name,
			         (px->cap & PX_CAP_FE) && (px->cap & PX_CAP_BE) ? "listen" :
			         (px->cap & PX_CAP_FE) ? "frontend" : "backend",
			         px->name, px->conf_file, px->conf_line);
			return NULL;
		}
	}
	if (from) {
		def = find_defaults(from, &dups);
		if (!def) {
			snprintf(err, errlen, "defaults section '%s' not found for %s '%s'.",
			         from, args[0], name ? name : "");
			return NULL;
		}
		if (dups) {
			snprintf(err, errlen, "several defaults sections are named '%s': a "
			         "defaults section used with 'from' must have a unique name.", from);
			return NULL;
		}
	}
	px = calloc(1, sizeof(*px));
	if (!px) {
		snprintf(err, errlen, "out of memory.");
		return NULL;
	}
	proxy_set_defaults(px);
	px->cap = cap;
	px->name = name ? strdup(name) : NULL;
	px->conf_file = strdup(ctx->file);
	px->conf_line = ctx->line;
	/* what the section's "acl" lines name is checked against it; rules
	 * set their own line (smp_resolve_names()) */
	smp_cfg_origin_set(px->conf_file, px->conf_line, px);
	if (def)
		proxy_inherit(px, def);
	if (cap == PX_CAP_DEF) {
		list_append(&defaults_list, &px->list);
		last_defaults = px;
	} else {
		px->uuid = next_uuid++;
		list_append(&proxies, &px->list);
	}
	return px;
}

void proxy_cfg_end(struct cfg_ctx *ctx)
{
}

/* The frontend's limit in force: its `maxconn`, else the global one; the
 * CLI may change it (0 then means "accept nothing"). */
int proxy_fe_maxconn(const struct proxy *fe)
{
	int rt = atomic_load_explicit(&((struct proxy *)fe)->fe_maxconn_rt, memory_order_relaxed);

	if (rt >= 0)
		return rt;
	return fe->maxconn ? fe->maxconn : atomic_load(&global.maxconn_rt);
}

/* ---- keywords ---- */

static int kw_mode(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (nargs != 2) {
		snprintf(err, errlen, "expects 'tcp' or 'http'.");
		return -1;
	}
	if (strcmp(args[1], "tcp") == 0) {
		ctx->px->mode = PX_MODE_TCP;
		return 0;
	}
	if (strcmp(args[1], "http") == 0) {
		ctx->px->mode = PX_MODE_HTTP;
		return 0;
	}
	snprintf(err, errlen, "unknown mode '%s' (expects 'tcp' or 'http').", args[1]);
	return -1;
}

static int kw_maxconn(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	long v;

	if (nargs != 2 || cfg_parse_uint(args[1], 10000000, &v, err, errlen) < 0) {
		if (nargs != 2)
			snprintf(err, errlen, "expects one integer.");
		return -1;
	}
	ctx->px->maxconn = (int)v;
	return 0;
}

static int kw_fullconn(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	long v;

	if (nargs != 2 || cfg_parse_uint(args[1], 10000000, &v, err, errlen) < 0) {
		if (nargs != 2)
			snprintf(err, errlen, "expects one integer.");
		return -1;
	}
	ctx->px->fullconn = (int)v;
	return 0;
}

static int kw_default_backend(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                              size_t errlen)
{
	if (nargs != 2) {
		snprintf(err, errlen, "expects a backend name.");
		return -1;
	}
	free(ctx->px->defbe_name);
	ctx->px->defbe_name = strdup(args[1]);
	free(ctx->px->defbe_file);
	ctx->px->defbe_file = strdup(ctx->file);
	ctx->px->defbe_line = ctx->line;
	return 0;
}

/* Whether a use_backend name is a log-format string: it has a '%' that
 * is not the escape "%%". Otherwise "%%" stands for '%' and is unescaped
 * into <plain> (as HAProxy turns a format without variables back into a
 * fixed name). */
static int use_backend_is_dynamic(const char *name, char *plain)
{
	for (; *name; name++) {
		if (*name == '%' && name[1] != '%')
			return 1;
		*plain++ = *name;
		if (*name == '%')
			name++;
	}
	*plain = '\0';
	return 0;
}

/* A use_backend condition on data that do not exist yet never matches:
 * a warning, as in HAProxy; a name format using them is an error. */
static int use_backend_check_use(struct cfg_ctx *ctx, const struct acl_cond *cond,
                                 const struct lf_expr *dyn, const char *name,
                                 char *err, size_t errlen)
{
	char sub[512];

	if (cond && (acl_cond_use(cond) & ~SMP_AVAIL_SWITCH & ~SMP_USE_INTRN))
		cfg_warning(ctx->file, ctx->line, "condition involves keywords which are "
		            "incompatible with 'frontend use-backend rule' (they never match "
		            "there).");
	else if (cond && (acl_cond_use(cond) & SMP_USE_L6REQ) && ctx->px->mode == PX_MODE_HTTP)
		cfg_warning(ctx->file, ctx->line, "Proxy '%s': L6 sample fetches on an HTTP "
		            "proxy do not see the request as received (HAProxy warns that they "
		            "are ignored).", ctx->px->name);
	if (dyn && lf_check_use(dyn, SMP_AVAIL_SWITCH, sub, sizeof(sub)) < 0) {
		snprintf(err, errlen, "failed to parse use_backend rule '%s' : %s.", name, sub);
		return -1;
	}
	return 0;
}

int proxy_parse_switch_cond(struct cfg_ctx *ctx, char **args, int nargs,
                            struct acl_cond **cond, char *err, size_t errlen)
{
	char sub[512];

	*cond = NULL;
	if (nargs <= 2)
		return 0;
	if (strcmp(args[2], "if") != 0 && strcmp(args[2], "unless") != 0) {
		snprintf(err, errlen, "unexpected keyword '%s' after switching rule, only 'if' "
		         "and 'unless' are allowed.", args[2]);
		return -1;
	}
	*cond = acl_cond_parse(args + 2, nargs - 2, ctx->px->acls, ctx->file, ctx->line,
	                       sub, sizeof(sub));
	if (!*cond) {
		snprintf(err, errlen, "error detected while parsing switching rule : %s.", sub);
		return -1;
	}
	return 0;
}

/* use_backend <name> [{if | unless} <condition>]
 *
 * A fixed <name> is resolved after parsing (proxy_check_one) into r->be.
 * A log-format <name> ("%[req.hdr(host),lower]", "be_%[src,map_ip(f)]")
 * is compiled here into r->dyn and r->be stays NULL. The stream's choice
 * of backend walks the rules in order:
 *   - r->cond (NULL: always) is evaluated with acl_cond_eval(), "unless"
 *     already applied: FAIL goes to the next rule, MISS waits for more
 *     data (or counts as FAIL once the data are final), PASS selects;
 *   - a selected fixed rule gives r->be;
 *   - a selected dynamic rule is rendered with stream_lf_render(s, r->dyn,
 *     buf, sizeof(buf)) and looked up with proxy_find(buf, PX_CAP_BE); a
 *     name that matches no backend (or one of an incompatible mode) ends
 *     the walk, and default_backend applies (manual, "use_backend");
 *   - no rule selected: default_backend, then the proxy itself if it is a
 *     listen section. */
static int kw_use_backend(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	struct smp_origin saved;
	int ret;

	smp_cfg_origin_get(&saved);
	smp_cfg_origin_set(ctx->file, ctx->line, ctx->px);
	ret = use_backend_parse(ctx, args, nargs, err, errlen);
	smp_cfg_origin_set(saved.file, saved.line, saved.px);
	return ret;
}

/* kw_use_backend(), with the origin of its expressions set */
static int use_backend_parse(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                             size_t errlen)
{
	struct use_backend_rule *r;
	struct acl_cond *cond = NULL;
	char sub[512];
	char *plain;
	int dynamic;

	if (nargs < 2) {
		snprintf(err, errlen, "expects a backend name.");
		return -1;
	}
	if (proxy_parse_switch_cond(ctx, args, nargs, &cond, err, errlen) < 0)
		return -1;
	r = calloc(1, sizeof(*r));
	plain = malloc(strlen(args[1]) + 1);
	if (!r || !plain)
		goto nomem;
	dynamic = use_backend_is_dynamic(args[1], plain);
	r->name = dynamic ? strdup(args[1]) : plain;
	if (dynamic)
		free(plain);
	plain = NULL;
	r->file = strdup(ctx->file);
	if (!r->name || !r->file)
		goto nomem;
	if (dynamic) {
		r->dyn = calloc(1, sizeof(*r->dyn));
		if (!r->dyn)
			goto nomem;
		if (lf_compile(args[1], r->dyn, sub, sizeof(sub)) < 0) {
			snprintf(err, errlen, "failed to parse use_backend rule '%s' : %s.", args[1], sub);
			goto fail;
		}
	}
	if (use_backend_check_use(ctx, cond, r->dyn, args[1], err, errlen) < 0) {
		lf_free(r->dyn);
		goto fail;
	}
	r->cond = cond;
	r->line = ctx->line;
	list_append(&ctx->px->use_backends, &r->list);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory.");
fail:
	acl_cond_free(cond);
	free(plain);
	if (r) {
		free(r->dyn);
		free(r->name);
		free(r->file);
		free(r);
	}
	return -1;
}

static int kw_balance(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	static const struct { const char *name; enum lb_algo algo; } algos[] = {
		{ "roundrobin", LB_ROUNDROBIN }, { "static-rr", LB_STATIC_RR },
		{ "leastconn", LB_LEASTCONN }, { "first", LB_FIRST },
		{ "source", LB_SOURCE }, { "random", LB_RANDOM },
	};
	int rc;

	if (nargs < 2) {
		snprintf(err, errlen, "expects an algorithm.");
		return -1;
	}
	for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
		const char *a = args[1];
		long draws = 2;

		if (strcmp(a, algos[i].name) != 0 &&
		    !(algos[i].algo == LB_RANDOM && strncmp(a, "random(", 7) == 0))
			continue;
		if (algos[i].algo == LB_RANDOM && a[6] == '(') {
			char num[16];
			size_t l = strlen(a + 7);

			if (l < 2 || l > sizeof(num) || a[7 + l - 1] != ')') {
				snprintf(err, errlen, "invalid '%s' (expects random(<draws>)).", a);
				return -1;
			}
			memcpy(num, a + 7, l - 1);
			num[l - 1] = '\0';
			if (cfg_parse_uint(num, 100, &draws, err, errlen) < 0 || draws < 1) {
				snprintf(err, errlen, "invalid number of draws in '%s'.", a);
				return -1;
			}
		}
		if (cfg_no_more_args(args, nargs, 2, err, errlen) < 0)
			return -1;
		ctx->px->lb_algo = algos[i].algo;
		ctx->px->random_draws = (int)draws;
		return 0;
	}
	/* uri, url_param, hdr(<name>): lb_hash.c */
	rc = lb_hash_cfg_balance(ctx, args, nargs, err, errlen);
	if (rc)
		return rc < 0 ? -1 : 0;
	if (!strncmp(args[1], "rdp-cookie", 10) || !strcmp(args[1], "hash")) {
		snprintf(err, errlen, "algorithm '%s' is not supported by this version of sluice.",
		         args[1]);
		return -1;
	}
	snprintf(err, errlen, "only supports 'roundrobin', 'static-rr', 'leastconn', 'first', "
	         "'source', 'random', 'uri', 'url_param' and 'hdr(name)' (unknown '%s').", args[1]);
	return -1;
}

static int kw_timeout(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	static const struct { const char *name; size_t off; } tab[] = {
		{ "client",     offsetof(struct proxy, timeout_client) },
		{ "server",     offsetof(struct proxy, timeout_server) },
		{ "connect",    offsetof(struct proxy, timeout_connect) },
		{ "queue",      offsetof(struct proxy, timeout_queue) },
		{ "tunnel",     offsetof(struct proxy, timeout_tunnel) },
		{ "client-fin", offsetof(struct proxy, timeout_client_fin) },
		{ "server-fin", offsetof(struct proxy, timeout_server_fin) },
		{ "check",      offsetof(struct proxy, timeout_check) },
	};
	int ms;

	if (nargs != 3) {
		snprintf(err, errlen, "expects one time value.");
		return -1;
	}
	if (cfg_parse_time_ms(args[2], &ms, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(args[1], tab[i].name) == 0) {
			*(int *)((char *)ctx->px + tab[i].off) = ms;
			return 0;
		}
	}
	snprintf(err, errlen, "unknown timeout '%s'.", args[1]);
	return -1;
}

static int kw_retries(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	long v;

	if (nargs != 2) {
		snprintf(err, errlen, "expects one integer.");
		return -1;
	}
	if (cfg_parse_uint(args[1], 1000, &v, err, errlen) < 0)
		return -1;
	ctx->px->retries = (int)v;
	return 0;
}

/* retry-on <keyword>...: what a request is retried on (HAProxy 2.6). The
 * layer-7 ones replay the request, so sluice keeps a copy of it when it
 * was received whole before being sent (stream_http.c). */
static int kw_retry_on(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	static const struct { const char *name; unsigned int bits; } tab[] = {
		{ "none", RETRY_ON_NONE }, { "conn-failure", RETRY_ON_CONN_FAILURE },
		{ "empty-response", RETRY_ON_EMPTY_RESPONSE },
		{ "junk-response", RETRY_ON_JUNK_RESPONSE },
		{ "response-timeout", RETRY_ON_RESP_TIMEOUT },
		{ "0rtt-rejected", RETRY_ON_0RTT_REJECTED },
		{ "404", RETRY_ON_404 }, { "408", RETRY_ON_408 }, { "425", RETRY_ON_425 },
		{ "500", RETRY_ON_500 }, { "501", RETRY_ON_501 }, { "502", RETRY_ON_502 },
		{ "503", RETRY_ON_503 }, { "504", RETRY_ON_504 },
		{ "all-retryable-errors", RETRY_ON_CONN_FAILURE | RETRY_ON_EMPTY_RESPONSE |
		  RETRY_ON_JUNK_RESPONSE | RETRY_ON_RESP_TIMEOUT | RETRY_ON_0RTT_REJECTED |
		  RETRY_ON_500 | RETRY_ON_502 | RETRY_ON_503 | RETRY_ON_504 },
	};
	unsigned int bits = 0;

	if (nargs < 2) {
		snprintf(err, errlen, "missing argument.");
		return -1;
	}
	for (int a = 1; a < nargs; a++) {
		size_t i;

		for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
			if (strcmp(args[a], tab[i].name) == 0)
				break;
		if (i == sizeof(tab) / sizeof(tab[0])) {
			snprintf(err, errlen, "unknown keyword '%s'.", args[a]);
			return -1;
		}
		if (tab[i].bits == RETRY_ON_NONE && nargs > 2) {
			snprintf(err, errlen, "'none' may only be used alone.");
			return -1;
		}
		bits |= tab[i].bits;
	}
	ctx->px->retry_on = bits;
	return 0;
}

static int kw_option(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	static const struct { const char *name; unsigned int flag; } tab[] = {
		{ "redispatch", PX_O_REDISPATCH }, { "tcplog", PX_O_TCPLOG },
		{ "dontlognull", PX_O_DONTLOGNULL }, { "allbackups", PX_O_ALLBACKUPS },
		{ "log-health-checks", PX_O_LOG_HCHK },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(args[1], tab[i].name) != 0)
			continue;
		if (tab[i].flag == PX_O_REDISPATCH && nargs == 3 && !ctx->negate) {
			/* option redispatch <interval>: P > 0 every Pth retry, N < 0
			 * the Nth retry before the last (-1: the last), 0: never */
			char *end;
			long v = strtol(args[2], &end, 10);

			if (*end || end == args[2] || v < -1000 || v > 1000) {
				snprintf(err, errlen, "'option redispatch' expects an integer interval, "
				         "got '%s'.", args[2]);
				return -1;
			}
			ctx->px->redispatch_interval = (int)v;
			ctx->px->options |= PX_O_REDISPATCH;
			return 0;
		}
		if (tab[i].flag == PX_O_REDISPATCH)
			ctx->px->redispatch_interval = -1;
		if (tab[i].flag == PX_O_TCPLOG && nargs == 3 && strcmp(args[2], "clf") == 0) {
			snprintf(err, errlen, "'clf' format is not supported yet.");
			return -1;
		}
		if (cfg_no_more_args(args, nargs, 2, err, errlen) < 0)
			return -1;
		if (ctx->negate)
			ctx->px->options &= ~tab[i].flag;
		else
			ctx->px->options |= tab[i].flag;
		if (tab[i].flag == PX_O_TCPLOG && !ctx->negate) {
			/* the last of tcplog / httplog / log-format wins */
			ctx->px->options &= ~(PX_O_HTTPLOG | PX_O_HTTPLOG_CLF | PX_O_HTTPSLOG);
			proxy_clear_log_format(ctx->px);
		}
		return 0;
	}
	snprintf(err, errlen, "unknown option '%s'.", args[1]);
	return -1;
}

static int kw_log(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	struct list *logs = ctx->section == CFG_SEC_GLOBAL ? &global.logs : &ctx->px->logs;
	struct log_target *t;

	if (ctx->negate) {
		/* "no log": forget inherited targets */
		struct list *pos, *tmp;

		if (nargs != 1) {
			snprintf(err, errlen, "'no log' takes no argument.");
			return -1;
		}
		list_for_each_safe(pos, tmp, logs) {
			list_del_init(pos);
			log_target_free(list_elem(pos, struct log_target, list));
		}
		if (ctx->px)
			ctx->px->options &= ~PX_O_LOG_GLOBAL;
		return 0;
	}
	if (nargs < 2) {
		snprintf(err, errlen, "expects 'global' or a target address.");
		return -1;
	}
	if (strcmp(args[1], "global") == 0) {
		if (ctx->section == CFG_SEC_GLOBAL) {
			snprintf(err, errlen, "'log global' is only valid in a proxy section.");
			return -1;
		}
		if (cfg_no_more_args(args, nargs, 2, err, errlen) < 0)
			return -1;
		ctx->px->options |= PX_O_LOG_GLOBAL;
		return 0;
	}
	t = log_target_parse(args + 1, nargs - 1, err, errlen);
	if (!t)
		return -1;
	t->conf_file = strdup(ctx->file);
	t->conf_line = ctx->line;
	list_append(logs, &t->list);
	return 0;
}

/* log-tag <string>: the syslog tag of this proxy's logs, instead of the
 * global one. */
static int kw_log_tag(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (nargs != 2 || !*args[1]) {
		snprintf(err, errlen, "'%s' expects a tag for use in syslog.", args[0]);
		return -1;
	}
	free(ctx->px->log_tag);
	ctx->px->log_tag = strdup(args[1]);
	if (!ctx->px->log_tag) {
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	return 0;
}

static int kw_log_format(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (nargs < 2) {
		snprintf(err, errlen, "expects a format string.");
		return -1;
	}
	if (nargs > 2) {
		snprintf(err, errlen, "expects one argument; quote the format string "
		         "(got '%s' as an extra word).", args[2]);
		return -1;
	}
	if (proxy_set_log_format(ctx->px, args[1], ctx->file, ctx->line) < 0) {
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	return 0;
}

static int kw_disabled(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (cfg_no_more_args(args, nargs, 1, err, errlen) < 0)
		return -1;
	ctx->px->disabled = strcmp(args[0], "disabled") == 0;
	return 0;
}

static int kw_ignored(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	return 0;
}

/* ---- bind ---- */

static int parse_thread_set(const char *s, uint64_t *mask, char *err, size_t errlen)
{
	char buf[128], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "thread set '%s' is too long.", s);
		return -1;
	}
	strcpy(buf, s);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash, *end;
		long lo, hi;

		if (strcmp(tok, "all") == 0) {
			*mask = ~0ull;
			continue;
		}
		if (strcmp(tok, "odd") == 0) {
			*mask |= 0x5555555555555555ull;
			continue;
		}
		if (strcmp(tok, "even") == 0) {
			*mask |= 0xaaaaaaaaaaaaaaaaull;
			continue;
		}
		if (strchr(tok, '/')) {
			snprintf(err, errlen, "thread groups ('%s') are not supported.", tok);
			return -1;
		}
		lo = strtol(tok, &end, 10);
		hi = lo;
		dash = end;
		if (*dash == '-')
			hi = strtol(dash + 1, &end, 10);
		if (*end || lo < 1 || hi < lo || hi > MAX_THREADS) {
			snprintf(err, errlen, "invalid thread set '%s' (expects 'all', 'odd', 'even', "
			         "N or N-M with 1 <= N <= %d).", s, MAX_THREADS);
			return -1;
		}
		for (long i = lo; i <= hi; i++)
			*mask |= 1ull << (i - 1);
	}
	return 0;
}

/* Options of a `bind` line that sluice knows but has not implemented yet:
 * refused by name rather than ignored. */
static int bind_unsupported(const char *o)
{
	static const char *const names[] = {
		"transparent", "interface", "namespace",
		"quic-cc-algo", "process", "nice", NULL
	};

	for (int i = 0; names[i]; i++)
		if (strcmp(o, names[i]) == 0)
			return 1;
	return 0;
}

int bind_parse_options(struct bind_conf *bc, char **args, int nargs, int first,
                       char *err, size_t errlen)
{
	for (int i = first; i < nargs; i++) {
		const char *o = args[i];
		long v;

		if (strcmp(o, "accept-proxy") == 0) {
			bc->accept_proxy = 1;
			continue;
		}
		if (strcmp(o, "proto") == 0) {
			if (i + 1 >= nargs) {
				snprintf(err, errlen, "'proto' expects a multiplexer name ('h1' or 'h2').");
				return -1;
			}
			i++;
			if (strcmp(args[i], "h2") == 0) {
				bc->proto = BIND_PROTO_H2;
			} else if (strcmp(args[i], "h1") == 0) {
				bc->proto = BIND_PROTO_H1;
			} else {
				snprintf(err, errlen, "'proto' : unknown protocol '%s' (sluice knows 'h1' "
				         "and 'h2').", args[i]);
				return -1;
			}
			continue;
		}
		if (strcmp(o, "tfo") == 0 || strcmp(o, "defer-accept") == 0) {
			*(o[0] == 't' ? &bc->tfo : &bc->defer_accept) = 1;
			continue;
		}
		if (strcmp(o, "mss") == 0 || strcmp(o, "tcp-ut") == 0) {
			int ms;

			if (i + 1 >= nargs) {
				snprintf(err, errlen, "'%s' expects an argument.", o);
				return -1;
			}
			i++;
			if (o[0] == 't') {
				if (cfg_parse_time_ms(args[i], &ms, err, errlen) < 0)
					return -1;
				bc->tcp_ut_ms = ms;
				continue;
			}
			/* HAProxy: a negative MSS means "at most" in its build; sluice
			 * sets the value as written */
			v = strtol(args[i], NULL, 10);
			if (v < 1 || v > 65535) {
				snprintf(err, errlen, "'mss' expects an MSS between 1 and 65535, got '%s'.",
				         args[i]);
				return -1;
			}
			bc->mss = (int)v;
			continue;
		}
		if (strcmp(o, "v4v6") == 0 || strcmp(o, "v6only") == 0) {
			*(o[1] == '4' ? &bc->v4v6 : &bc->v6only) = 1;
			continue;
		}
		if (strcmp(o, "name") == 0 || strcmp(o, "backlog") == 0 ||
		    strcmp(o, "maxconn") == 0 || strcmp(o, "thread") == 0 ||
		    strcmp(o, "level") == 0 || strcmp(o, "mode") == 0 ||
		    strcmp(o, "id") == 0 || strcmp(o, "expose-fd") == 0 ||
		    strcmp(o, "user") == 0 || strcmp(o, "group") == 0 ||
		    strcmp(o, "uid") == 0 || strcmp(o, "gid") == 0 ||
		    strcmp(o, "severity-output") == 0) {
			if (i + 1 >= nargs) {
				snprintf(err, errlen, "'%s' expects an argument.", o);
				return -1;
			}
			i++;
			if (strcmp(o, "name") == 0) {
				free(bc->name);
				bc->name = strdup(args[i]);
			} else if (strcmp(o, "backlog") == 0) {
				if (cfg_parse_uint(args[i], 1 << 20, &v, err, errlen) < 0)
					return -1;
				bc->backlog = (int)v;
			} else if (strcmp(o, "maxconn") == 0) {
				if (cfg_parse_uint(args[i], 10000000, &v, err, errlen) < 0)
					return -1;
				bc->maxconn = (int)v;
			} else if (strcmp(o, "thread") == 0) {
				if (parse_thread_set(args[i], &bc->thread_mask, err, errlen) < 0)
					return -1;
			} else if (strcmp(o, "level") == 0) {
				/* checked everywhere, used on stats sockets (as HAProxy) */
				if (strcmp(args[i], "user") == 0)
					bc->cli_level = 0;
				else if (strcmp(args[i], "operator") == 0)
					bc->cli_level = 1;
				else if (strcmp(args[i], "admin") == 0)
					bc->cli_level = 2;
				else {
					snprintf(err, errlen, "'level' expects 'user', 'operator' or 'admin', "
					         "got '%s'.", args[i]);
					return -1;
				}
			} else if (strcmp(o, "mode") == 0) {
				char *end;
				long m = strtol(args[i], &end, 8);

				if (*end || m < 0 || m > 07777) {
					snprintf(err, errlen, "'mode' expects an octal mode, got '%s'.", args[i]);
					return -1;
				}
				bc->mode_perm = (int)m;
			} else if (strcmp(o, "expose-fd") == 0) {
				if (strcmp(args[i], "listeners") != 0) {
					snprintf(err, errlen, "'expose-fd' only accepts 'listeners'.");
					return -1;
				}
				bc->expose_fd = 1;
			} else if (strcmp(o, "id") == 0) {
				if (cfg_parse_uint(args[i], 1 << 30, &v, err, errlen) < 0)
					return -1;
			} else if (strcmp(o, "severity-output") == 0) {
				if ((bc->sevfmt = cli_sevfmt_parse(args[i])) < 0) {
					snprintf(err, errlen, "'severity-output' only supports 'none', "
					         "'number', and 'string' (got '%s')", args[i]);
					return -1;
				}
			} else if (unix_sock_owner_opt(bc, o, args[i], err, errlen) < 0) {
				return -1;   /* user/group/uid/gid: owner of unix sockets */
			}
			continue;
		}
		switch (ssl_bind_parse_opt(bc, args, nargs, &i, err, errlen)) {
		case 1:
			continue;
		case -1:
			return -1;
		}
		if (bind_unsupported(o)) {
			snprintf(err, errlen, "option '%s' is not supported by this version of sluice.", o);
			return -1;
		}
		snprintf(err, errlen, "unknown option '%s'.", o);
		return -1;
	}
	return unix_sock_defaults(bc, err, errlen);
}

/* Creates one bind_conf per comma-separated address of <addrs>. */
int bind_conf_create(struct proxy *fe, const char *addrs, const char *file, int line,
                     int is_cli, struct list *out, char *err, size_t errlen)
{
	char *copy = strdup(addrs), *save = NULL, *a;
	int n = 0;

	for (a = strtok_r(copy, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		struct bind_conf *bc = calloc(1, sizeof(*bc));

		bc->fe = fe;
		bc->file = strdup(file);
		bc->line = line;
		bc->addr_str = strdup(a);
		bc->is_cli = is_cli;
		bc->cli_level = 1;   /* operator: HAProxy's default for stats sockets */
		bc->mode_perm = -1;
		bc->unix_uid = bc->unix_gid = -1;
		bc->sevfmt = -1;
		if (addr_parse(a, &bc->addr, ADDR_O_PORT_REQUIRED, err, errlen) < 0) {
			free(bc->addr_str);
			free(bc->file);
			free(bc);
			free(copy);
			bind_conf_list_free(out);
			return -1;
		}
		list_append(out, &bc->list);
		n++;
	}
	free(copy);
	if (!n) {
		snprintf(err, errlen, "expects an address.");
		return -1;
	}
	return 0;
}

void bind_conf_list_free(struct list *l)
{
	struct list *pos, *nxt;

	list_for_each_safe(pos, nxt, l) {
		list_del_init(pos);
		cfg_free_bind_conf(list_elem(pos, struct bind_conf, list));
	}
}

static int kw_bind(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	struct list tmp = LIST_HEAD_INIT(tmp);
	struct list *pos, *nxt;

	if (nargs < 2) {
		snprintf(err, errlen, "expects an address.");
		return -1;
	}
	if (bind_conf_create(ctx->px, args[1], ctx->file, ctx->line, 0, &tmp, err, errlen) < 0)
		return -1;
	list_for_each_safe(pos, nxt, &tmp) {
		struct bind_conf *bc = list_elem(pos, struct bind_conf, list);

		if (bind_parse_options(bc, args, nargs, 2, err, errlen) < 0) {
			bind_conf_list_free(&tmp);
			return -1;
		}
	}
	list_splice_tail(&ctx->px->binds, &tmp);
	return 0;
}

/* ---- post-parse checks ---- */

/* Resolves a fixed use_backend name (a dynamic one is looked up per
 * stream, see kw_use_backend()). Returns the number of errors. */
static int use_backend_resolve(struct proxy *px, struct use_backend_rule *r)
{
	if (r->dyn)
		return 0;
	r->be = proxy_find(r->name, PX_CAP_BE);
	if (!r->be) {
		/* HAProxy's wording, which tests and tools look for */
		cfg_alert(r->file, r->line, "Proxy '%s': unable to find required use_backend: '%s'.",
		          px->name, r->name);
		return 1;
	}
	if (r->be->mode != px->mode) {
		/* as for default_backend: no switch between modes (HAProxy
		 * refuses HTTP to TCP; TCP to HTTP would need an upgrade) */
		cfg_alert(r->file, r->line, "%s %s '%s' (%s:%d) tries to use incompatible %s "
		          "backend '%s' (%s:%d) in a 'use_backend' rule (see 'mode').",
		          proxy_mode_name(px->mode), (px->cap & PX_CAP_BE) ? "listen" : "frontend",
		          px->name, px->conf_file, px->conf_line, proxy_mode_name(r->be->mode),
		          r->be->name, r->be->conf_file, r->be->conf_line);
		return 1;
	}
	return 0;
}

/* unique-id-format is rendered while the request is parsed, before a
 * backend is chosen: HAProxy refuses what needs more. It is compiled here,
 * where its origin is known (smp_resolve_names()); a syntax error is left
 * for http_cfg.c to report, which compiles it when it was not done here. */
static int unique_id_compile(struct proxy *px)
{
	struct lf_expr *e;
	char err[512];

	if (!(px->cap & PX_CAP_FE) || !px->unique_id_fmt_str || px->unique_id_fmt)
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return 0;
	smp_cfg_origin_set(px->unique_id_fmt_file, px->unique_id_fmt_line, px);
	if (lf_compile(px->unique_id_fmt_str, e, err, sizeof(err)) < 0) {
		free(e);
		return 0;
	}
	if (lf_check_use(e, SMP_AVAIL_SWITCH, err, sizeof(err)) < 0) {
		cfg_alert(px->unique_id_fmt_file, px->unique_id_fmt_line, "proxy '%s': failed to parse "
		          "unique-id-format : %s.", px->name, err);
		lf_free(e);
		free(e);
		return 1;
	}
	if (px->mode == PX_MODE_HTTP &&
	    lf_check_use(e, SMP_USE_ALL & ~SMP_USE_L6REQ, err, sizeof(err)) < 0)
		cfg_warning(px->unique_id_fmt_file, px->unique_id_fmt_line, "proxy '%s': an L6 sample fetch in an HTTP "
		            "unique-id-format does not see the request as received (HAProxy "
		            "warns that it is ignored).", px->name);
	px->unique_id_fmt = e;
	return 0;
}

/* Only a frontend logs: a backend's log-format (inherited from defaults) is
 * never used, and HAProxy does not check it either. */
static int log_format_compile(struct proxy *px)
{
	char err[512];

	if (!(px->cap & PX_CAP_FE))
		return 0;
	smp_cfg_origin_set(px->log_format_file, px->log_format_line, px);
	if (lf_compile(px->log_format, &px->logfmt, err, sizeof(err)) < 0 ||
	    lf_check_mode(&px->logfmt, px->mode == PX_MODE_HTTP, err, sizeof(err)) < 0 ||
	    lf_check_use(&px->logfmt, SMP_AVAIL_LOG, err, sizeof(err)) < 0) {
		cfg_alert(px->log_format_file, px->log_format_line, "log-format of '%s': %s",
		          px->name, err);
		return 1;
	}
	return 0;
}

static int proxy_check_one(struct proxy *px)
{
	int errors = 0;
	struct list *pos, *tmp;

	if ((px->cap & PX_CAP_FE) && list_empty(&px->binds) && !px->disabled) {
		cfg_alert(px->conf_file, px->conf_line, "%s '%s' has no 'bind' line.",
		          (px->cap & PX_CAP_BE) ? "listen" : "frontend", px->name);
		errors++;
	}
	if ((px->cap & PX_CAP_FE) && px->defbe_name) {
		px->defbe = proxy_find(px->defbe_name, PX_CAP_BE);
		if (!px->defbe) {
			/* HAProxy's wording, which tests and tools look for */
			cfg_alert(px->defbe_file, px->defbe_line,
			          "Proxy '%s': unable to find required default_backend: '%s'.",
			          px->name, px->defbe_name);
			errors++;
		} else if (px->defbe->mode != px->mode) {
			cfg_alert(px->defbe_file, px->defbe_line,
			          "%s '%s' in mode %s cannot use backend '%s' in mode %s.",
			          (px->cap & PX_CAP_BE) ? "listen" : "frontend", px->name,
			          proxy_mode_name(px->mode), px->defbe->name,
			          proxy_mode_name(px->defbe->mode));
			errors++;
		}
	}
	/* an HTTP frontend may answer everything with its own rules; the
	 * requests none answers get a 503 (HAProxy accepts it too); so may a
	 * TCP frontend with a service (tcp-request content use-service) */
	if ((px->cap & PX_CAP_FE) && !(px->cap & PX_CAP_BE) && !px->defbe_name &&
	    list_empty(&px->use_backends) && !px->disabled && px->mode != PX_MODE_HTTP &&
	    !proxy_has_tcp_service(px)) {
		cfg_alert(px->conf_file, px->conf_line, "frontend '%s' has no backend: add "
		          "'default_backend' or 'use_backend'.", px->name);
		errors++;
	}
	list_for_each_safe(pos, tmp, &px->use_backends)
		errors += use_backend_resolve(px, list_elem(pos, struct use_backend_rule, list));
	errors += unique_id_compile(px);
	if (px->log_format) {
		errors += log_format_compile(px);
	} else if ((px->options & PX_O_HTTPLOG) && px->mode == PX_MODE_HTTP) {
		char err[512];

		if (lf_compile((px->options & PX_O_HTTPSLOG) ? LF_HTTPSLOG_FORMAT :
		               (px->options & PX_O_HTTPLOG_CLF) ? LF_HTTPLOG_CLF_FORMAT :
		               LF_HTTPLOG_FORMAT, &px->logfmt, err, sizeof(err)) < 0) {
			cfg_alert(px->conf_file, px->conf_line, "internal: httplog format: %s", err);
			errors++;
		}
	} else if (px->options & (PX_O_TCPLOG | PX_O_HTTPLOG)) {
		char err[512];

		if (lf_compile(LF_TCPLOG_FORMAT, &px->logfmt, err, sizeof(err)) < 0) {
			cfg_alert(px->conf_file, px->conf_line, "internal: tcplog format: %s", err);
			errors++;
		}
	}
	return errors;
}

static int proxy_has_tcp_service(const struct proxy *px)
{
	const struct list *pos;

	for (pos = px->tcp_req_cont_rules.next; pos != &px->tcp_req_cont_rules; pos = pos->next) {
		const struct act_rule *r = list_elem(pos, struct act_rule, list);

		if (strcmp(r->kw->kw, "use-service") == 0)
			return 1;
	}
	return 0;
}

static int proxy_postparse(void)
{
	struct list *pos, *tmp;
	int errors = 0;

	list_for_each_safe(pos, tmp, &proxies) {
		errors += proxy_check_one(list_elem(pos, struct proxy, list));
		/* what is compiled from now on belongs to no section line */
		smp_cfg_origin_set(NULL, 0, NULL);
	}
	return errors;
}

/* The backend named by argument <i> of fetch <kw> (HAProxy's wording for
 * its errors), or the expression's own proxy when the name is omitted. An
 * omitted name with no known origin stays unresolved: the stream's backend
 * of the moment. */
static int resolve_be_arg(struct smp_arg *a, int i, const char *kw, const struct smp_origin *o)
{
	struct proxy *px = o->px;

	if (a->text && *a->text) {
		a->resolved = proxy_find(a->text, PX_CAP_BE);
		if (a->resolved)
			return 0;
		cfg_alert(o->file, o->line, "unable to find backend '%s' referenced in arg %d of "
		          "sample fetch keyword '%s'%s%s%s.", a->text, i + 1, kw,
		          px ? " in proxy '" : "", px ? px->name : "", px ? "'" : "");
		return 1;
	}
	if (!px)
		return 0;
	if (!(px->cap & PX_CAP_BE)) {
		cfg_alert(o->file, o->line, "proxy '%s', referenced in arg %d of sample fetch "
		          "keyword '%s', has not backend capability.", px->name, i + 1, kw);
		return 1;
	}
	a->resolved = px;
	return 0;
}

/* The frontend named by argument <i>; omitted, the stream's frontend of
 * the moment (left unresolved). */
static int resolve_fe_arg(struct smp_arg *a, int i, const char *kw, const struct smp_origin *o)
{
	struct proxy *px = o->px;

	if (!a->text || !*a->text)
		return 0;
	a->resolved = proxy_find(a->text, PX_CAP_FE);
	if (a->resolved)
		return 0;
	cfg_alert(o->file, o->line, "unable to find frontend '%s' referenced in arg %d of "
	          "sample fetch keyword '%s'%s%s%s.", a->text, i + 1, kw,
	          px ? " in proxy '" : "", px ? px->name : "", px ? "'" : "");
	return 1;
}

/* "[backend/]server": without a backend, a server of the expression's own
 * proxy (whatever its side, as HAProxy looks it up). */
static int resolve_srv_arg(struct smp_arg *a, int i, const char *kw, const struct smp_origin *o)
{
	const char *slash = a->text ? strchr(a->text, '/') : NULL;
	const char *sname = slash ? slash + 1 : a->text;
	struct proxy *be = o->px;

	if (!sname)
		return 0;
	if (slash) {
		char bname[256];

		snprintf(bname, sizeof(bname), "%.*s", (int)(slash - a->text), a->text);
		be = proxy_find(bname, PX_CAP_BE);
		if (!be) {
			cfg_alert(o->file, o->line, "unable to find proxy '%s' referenced in arg %d "
			          "of sample fetch keyword '%s'.", bname, i + 1, kw);
			return 1;
		}
	}
	if (!be)
		return 0;
	a->resolved = server_find(be, sname);
	if (a->resolved)
		return 0;
	cfg_alert(o->file, o->line, "unable to find server '%s' in proxy '%s', referenced in "
	          "arg %d of sample fetch keyword '%s'.", sname, be->name, i + 1, kw);
	return 1;
}

static int resolve_fetch_names(struct smp_args *args, const char *kw, int conv,
                               const struct smp_origin *o, void *priv)
{
	int errors = 0;

	for (int i = 0; i < args->n; i++) {
		if (args->a[i].type == ARGT_BE)
			errors += resolve_be_arg(&args->a[i], i, kw, o);
		else if (args->a[i].type == ARGT_FE)
			errors += resolve_fe_arg(&args->a[i], i, kw, o);
		else if (args->a[i].type == ARGT_SRV)
			errors += resolve_srv_arg(&args->a[i], i, kw, o);
		else if (args->a[i].type == ARGT_TAB)
			errors += stktable_resolve_arg(&args->a[i], i, kw, conv, o);
	}
	return errors;
}

/* After every expression was compiled (unique-id-format is, at order 15) */
static int proxy_resolve_names(void)
{
	return smp_resolve_names(resolve_fetch_names, NULL);
}

static struct cfg_post_hook proxy_post = { .fn = proxy_postparse, .order = 10 };
static struct cfg_post_hook names_post = { .fn = proxy_resolve_names, .order = 40 };

__attribute__((constructor)) static void proxy_register_post(void)
{
	cfg_register_post(&proxy_post);
	cfg_register_post(&names_post);
}
