/* Servers: the `server` and `default-server` keywords and server state.
 *
 * A server's settings are read-only after parsing, except the atomics that
 * the CLI changes at run time (admin state, weight, maxconn). `served` counts
 * the slots in use and is governed by queue.c.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/cfg/cfg_free.h>
#include <sluice/core/clock.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/expr/sample.h>
#include <sluice/net/resolvers.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_opts.h>

static int kw_server(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_server_template(struct cfg_ctx *, char **, int, char *, size_t);

static const struct cfg_kw server_kws[] = {
	{ "server",         NULL, CFG_SEC_BE_ONLY, kw_server, 0, CFG_KW_F_SIDE_FATAL },
	{ "default-server", NULL, CFG_SEC_BE,      kw_server },
	{ "server-template", NULL, CFG_SEC_BE_ONLY, kw_server_template, 0, CFG_KW_F_SIDE_FATAL },
	{ NULL }
};
CFG_REGISTER(server_kws)

struct server *server_new_default(void)
{
	struct server *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->iweight = 1;
	atomic_init(&s->uweight, 1);
	queue_init(&s->queue);
	s->pool_max_conn = -1;
	s->pool_purge_delay = 5000;
	s->max_reuse = -1;
	s->error_limit = 10;
	s->chk.inter = CHK_DEF_INTER;
	s->chk.rise = CHK_DEF_RISE;
	s->chk.fall = CHK_DEF_FALL;
	atomic_init(&s->op_state, SRV_OP_UP);
	return s;
}

void server_copy_settings(struct server *dst, const struct server *src)
{
	dst->iweight = src->iweight;
	atomic_store(&dst->uweight, atomic_load(&src->uweight));
	atomic_store(&dst->maxconn, atomic_load(&src->maxconn));
	dst->minconn = src->minconn;
	dst->maxqueue = src->maxqueue;
	dst->backup = src->backup;
	dst->send_proxy = src->send_proxy;
	srv_opts_copy(dst, src);
	dst->disabled_at_start = src->disabled_at_start;
	dst->pool_max_conn = src->pool_max_conn;
	dst->pool_purge_delay = src->pool_purge_delay;
	dst->proto = src->proto;
	dst->max_reuse = src->max_reuse;
	dst->chk = src->chk;
	dst->on_marked_down_kill = src->on_marked_down_kill;
	dst->slowstart = src->slowstart;
	memcpy(dst->init_addr, src->init_addr, sizeof(dst->init_addr));
	dst->init_ip = src->init_ip;
	if (src->resolvers_name) {
		free(dst->resolvers_name);
		dst->resolvers_name = strdup(src->resolvers_name);
	}
	if (src->track_name) {
		free(dst->track_name);
		dst->track_name = strdup(src->track_name);
	}
	dst->observe = src->observe;
	dst->error_limit = src->error_limit;
	dst->on_error = src->on_error;
	dst->on_marked_up_kill_backups = src->on_marked_up_kill_backups;
	dst->tfo = src->tfo;
	dst->tcp_ut_ms = src->tcp_ut_ms;
	dst->source = src->source;
	dst->has_source = src->has_source;
	ssl_srv_conf_copy(dst, src);
}

const char *srv_admin_name(int admin)
{
	switch (admin) {
	case SRV_ADMIN_DRAIN: return "drain";
	case SRV_ADMIN_MAINT: return "maint";
	default:              return "ready";
	}
}

int srv_is_usable(const struct server *srv)
{
	struct server *s = (struct server *)srv;

	return atomic_load_explicit(&s->admin, memory_order_relaxed) == SRV_ADMIN_READY &&
	       atomic_load_explicit(&s->op_state, memory_order_relaxed) == SRV_OP_UP &&
	       atomic_load_explicit(&s->uweight, memory_order_relaxed) > 0;
}

int srv_throttle(const struct server *srv)
{
	int64_t since, el;
	uint64_t now;

	if (!srv->slowstart)
		return 100;
	since = atomic_load_explicit(&((struct server *)srv)->warm_since_ms, memory_order_relaxed);
	if (!since)
		return 100;
	now = th_ctx ? th_ctx->now_ms : clock_mono_ms();
	el = (int64_t)now - since;
	if (el >= srv->slowstart)
		return 100;
	if (el < 0)
		el = 0;
	/* rounded up: a server just up takes a little */
	el = (el * 100 + srv->slowstart - 1) / srv->slowstart;
	return el > 0 ? (int)el : 1;
}

int be_dynamic_weights(const struct proxy *be)
{
	return be->lb_algo == LB_ROUNDROBIN || be->lb_algo == LB_LEASTCONN ||
	       be->lb_algo == LB_RANDOM;
}

int srv_lb_weight(const struct server *srv)
{
	int w, t;

	if (!srv_is_usable(srv))
		return 0;
	w = atomic_load_explicit(&((struct server *)srv)->uweight, memory_order_relaxed);
	if (!srv->slowstart || !be_dynamic_weights(srv->be) || (t = srv_throttle(srv)) >= 100)
		return w;
	w = w * t / 100;
	return w > 0 ? w : 1;
}

struct server *server_find(const struct proxy *be, const char *name)
{
	for (int i = 0; i < be->nsrv; i++)
		if (strcmp(be->srv[i]->name, name) == 0)
			return be->srv[i];
	return NULL;
}

/* Check-related keywords of a server line that HAProxy has and sluice does
 * not implement yet: accepted with a warning, since pasted configurations
 * are full of them. Returns 1 when <o> is one (*takes_arg: it has an
 * argument, *disables: the server's checks cannot run without it, so they
 * are turned off rather than run in a way that would mark a sane server
 * DOWN, e.g. in clear against a TLS port). */
static int srv_kw_check_later(const char *o, int *takes_arg, int *disables)
{
	static const struct { const char *name; int arg, disables; } tab[] = {
		{ "check-via-socks4", 0, 0 },
		{ NULL, 0, 0 }
	};

	for (int i = 0; tab[i].name; i++) {
		if (strcmp(o, tab[i].name) == 0) {
			*takes_arg = tab[i].arg;
			*disables = tab[i].disables;
			return 1;
		}
	}
	return 0;
}

/* A comma-separated list of networks: IPv4 with a prefix length or a
 * dotted mask, IPv6 with a prefix length, or bare addresses. 0 or -1. */
static int srv_check_nets(const char *list)
{
	char buf[256], *net, *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	for (net = strtok_r(buf, ",", &save); net; net = strtok_r(NULL, ",", &save)) {
		char *slash = strchr(net, '/');
		struct in6_addr a6;
		struct in_addr a4;
		int v6 = strchr(net, ':') != NULL;
		long plen;
		char *end;

		if (slash)
			*slash++ = 0;
		if (v6 ? inet_pton(AF_INET6, net, &a6) != 1 : inet_pton(AF_INET, net, &a4) != 1)
			return -1;
		if (!slash)
			continue;
		plen = strtol(slash, &end, 10);
		if (*slash && !*end && plen >= 0 && plen <= (v6 ? 128 : 32))
			continue;
		if (v6 || !smp_parse_ipv4_mask(slash, &a4))
			return -1;
	}
	return 0;
}

/* resolvers, resolve-prefer, resolve-net, resolve-opts, init-addr, as
 * HAProxy 2.6 checks them. The resolution parameters are for resolving at
 * run time, which sluice does not do (the resolvers section says so). */
static int srv_parse_dns_opt(struct server *s, const char *o, const char *v, char *err,
                             size_t errlen)
{
	if (!strcmp(o, "resolvers")) {
		if (!v || !*v) {
			snprintf(err, errlen, "'resolvers' expects <resolvers_id> as argument.");
			return -1;
		}
		free(s->resolvers_name);
		s->resolvers_name = strdup(v);
		return s->resolvers_name ? 0 : -1;
	}
	if (!strcmp(o, "resolve-prefer")) {
		if (!v || (strcmp(v, "ipv4") && strcmp(v, "ipv6"))) {
			snprintf(err, errlen, "'resolve-prefer' expects either ipv4 or ipv6 as "
			         "argument..");
			return -1;
		}
		return 0;
	}
	if (!strcmp(o, "resolve-net")) {
		if (!v || !*v) {
			snprintf(err, errlen, "'resolve-net' expects a list of networks.");
			return -1;
		}
		if (srv_check_nets(v) < 0) {
			snprintf(err, errlen, "'resolve-net' invalid network '%s'..", v);
			return -1;
		}
		return 0;
	}
	if (!strcmp(o, "resolve-opts")) {
		char buf[256], *save = NULL;

		snprintf(buf, sizeof(buf), "%s", v ? v : "");
		for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			if (strcmp(w, "allow-dup-ip") && strcmp(w, "ignore-weight") &&
			    strcmp(w, "prevent-dup-ip")) {
				snprintf(err, errlen, "'resolve-opts' : unknown resolve-opts option '%s', "
				         "supported methods are 'allow-dup-ip', 'ignore-weight', and "
				         "'prevent-dup-ip'..", w);
				return -1;
			}
		}
		return 0;
	}
	/* init-addr {last|libc|none|<ip>},... */
	{
		char buf[256], *save = NULL;
		int n = 0;

		snprintf(buf, sizeof(buf), "%s", v ? v : "");
		for (char *w = strtok_r(buf, ",", &save); w && n < 7; w = strtok_r(NULL, ",", &save)) {
			struct sl_addr a;
			char sub[128];

			if (!strcmp(w, "libc")) {
				s->init_addr[n++] = INIT_ADDR_LIBC;
			} else if (!strcmp(w, "last")) {
				s->init_addr[n++] = INIT_ADDR_LAST;
			} else if (!strcmp(w, "none")) {
				s->init_addr[n++] = INIT_ADDR_NONE;
			} else if (addr_parse(w, &a, ADDR_O_PORT_OPTIONAL | ADDR_O_NO_FD |
			                      ADDR_O_NO_UNIX | ADDR_O_NUMERIC, sub, sizeof(sub)) == 0) {
				s->init_addr[n++] = INIT_ADDR_IP;
				s->init_ip = a.ss;
			} else {
				snprintf(err, errlen, "'init-addr' : unknown init-addr method '%s', "
				         "supported methods are 'libc', 'last', 'none'..", w);
				return -1;
			}
		}
		s->init_addr[n] = INIT_ADDR_NONE_SET;
		return 0;
	}
}

int srv_parse_params(struct cfg_ctx *ctx, struct server *s, char **args, int nargs,
                     int first, char *err, size_t errlen)
{
	int checks_off = 0;

	for (int i = first; i < nargs; i++) {
		const char *o = args[i];
		int takes_arg, disables, r;
		long v;

		if ((r = srv_opts_parse(ctx, s, args, nargs, &i, err, errlen)) != 0) {
			if (r < 0)
				return -1;
			continue;
		}

		if (!strcmp(o, "tfo")) { s->tfo = 1; continue; }
		if (!strcmp(o, "observe") || !strcmp(o, "on-error")) {
			static const char *const obs[] = { "none", "layer4", "layer7", NULL };
			static const char *const onerr[] = { "fail-check", "fastinter", "sudden-death",
			                                     "mark-down", NULL };
			const char *const *tab = o[0] == 'o' && o[1] == 'b' ? obs : onerr;
			const char *w = i + 1 < nargs ? args[i + 1] : "";
			int k;

			for (k = 0; tab[k] && strcmp(tab[k], w); k++)
				;
			if (!tab[k]) {
				if (tab == obs)
					snprintf(err, errlen, "'observe' expects one of 'none', 'layer4', "
					         "'layer7' but got '%s'.", w);
				else
					snprintf(err, errlen, "'on-error' expects one of 'fastinter', "
					         "'fail-check', 'sudden-death' or 'mark-down' but got '%s'.", w);
				return -1;
			}
			i++;
			if (tab == obs)
				s->observe = k;
			else
				s->on_error = k;
			continue;
		}
		if (!strcmp(o, "error-limit")) {
			if (i + 1 >= nargs || !*args[i + 1]) {
				snprintf(err, errlen, "'error-limit' expects an integer argument.");
				return -1;
			}
			v = strtol(args[++i], NULL, 10);
			if (v <= 0) {
				snprintf(err, errlen, "error-limit has to be > 0.");
				return -1;
			}
			s->error_limit = v > 1000000 ? 1000000 : (int)v;
			continue;
		}
		if (!strcmp(o, "resolvers") || !strcmp(o, "resolve-prefer") ||
		    !strcmp(o, "resolve-net") || !strcmp(o, "resolve-opts") ||
		    !strcmp(o, "init-addr")) {
			if (srv_parse_dns_opt(s, o, i + 1 < nargs ? args[i + 1] : NULL, err,
			                      errlen) < 0)
				return -1;
			if (i + 1 < nargs)
				i++;
			continue;
		}
		if (!strcmp(o, "track")) {
			if (i + 1 >= nargs || !*args[i + 1]) {
				snprintf(err, errlen, "'track' expects [<proxy>/]<server> as argument..");
				return -1;
			}
			free(s->track_name);
			s->track_name = strdup(args[++i]);
			if (!s->track_name) {
				snprintf(err, errlen, "out of memory.");
				return -1;
			}
			continue;
		}
		if (!strcmp(o, "slowstart")) {
			int ms;

			if (i + 1 >= nargs || !*args[i + 1]) {
				snprintf(err, errlen, "'slowstart' expects a delay as argument.");
				return -1;
			}
			if (cfg_parse_time_ms(args[++i], &ms, err, errlen) < 0)
				return -1;
			s->slowstart = ms;
			continue;
		}
		if (!strcmp(o, "on-marked-down") || !strcmp(o, "on-marked-up")) {
			int down = o[10] == 'd';
			const char *want = down ? "shutdown-sessions" : "shutdown-backup-sessions";
			const char *got = i + 1 < nargs ? args[i + 1] : "";

			if (strcmp(got, want) != 0) {
				snprintf(err, errlen, "'%s' expects '%s' but got '%s'.", o, want, got);
				return -1;
			}
			i++;
			if (down)
				s->on_marked_down_kill = 1;
			else
				s->on_marked_up_kill_backups = 1;
			continue;
		}
		if (!strcmp(o, "no-tfo")) { s->tfo = -1; continue; }
		if (!strcmp(o, "tcp-ut") || !strcmp(o, "source")) {
			int ms;

			if (i + 1 >= nargs) {
				snprintf(err, errlen, "'%s' expects an argument.", o);
				return -1;
			}
			i++;
			if (!strcmp(o, "source")) {
				char sub[256];

				if (addr_parse(args[i], &s->source, ADDR_O_PORT_OPTIONAL | ADDR_O_NO_FD |
				               ADDR_O_NO_UNIX, sub, sizeof(sub)) < 0) {
					snprintf(err, errlen, "'source %s' : invalid address: %s", args[i], sub);
					return -1;
				}
				s->has_source = 1;
				if (i + 1 < nargs && (!strcmp(args[i + 1], "usesrc") ||
				                      !strcmp(args[i + 1], "interface"))) {
					snprintf(err, errlen, "'source ... %s' is not supported by sluice "
					         "(transparent proxying and binding to an interface need "
					         "privileges sluice does not take).", args[i + 1]);
					return -1;
				}
				continue;
			}
			if (cfg_parse_time_ms(args[i], &ms, err, errlen) < 0)
				return -1;
			s->tcp_ut_ms = ms;
			continue;
		}
		if (!strcmp(o, "backup")) { s->backup = 1; continue; }
		if (!strcmp(o, "no-backup")) { s->backup = 0; continue; }
		if (!strcmp(o, "disabled")) { s->disabled_at_start = 1; continue; }
		if (!strcmp(o, "enabled")) { s->disabled_at_start = 0; continue; }
		if (!strcmp(o, "send-proxy")) { s->send_proxy = 1; continue; }
		if (!strcmp(o, "send-proxy-v2")) { s->send_proxy = 2; continue; }
		if (!strcmp(o, "no-send-proxy") || !strcmp(o, "no-send-proxy-v2")) {
			s->send_proxy = 0;
			continue;
		}
		if (!strcmp(o, "weight") || !strcmp(o, "maxconn") || !strcmp(o, "maxqueue") ||
		    !strcmp(o, "minconn") || !strcmp(o, "id")) {
			if (i + 1 >= nargs) {
				snprintf(err, errlen, "'%s' expects an integer argument.", o);
				return -1;
			}
			i++;
			if (cfg_parse_uint(args[i], 10000000, &v, err, errlen) < 0) {
				char tmp[256];

				snprintf(tmp, sizeof(tmp), "'%s': %s", o, err);
				snprintf(err, errlen, "%s", tmp);
				return -1;
			}
			if (!strcmp(o, "weight")) {
				if (v > SRV_WEIGHT_MAX) {
					/* HAProxy's wording */
					snprintf(err, errlen, "weight of server %s is not within 0 and "
					         "%d (%ld).", s->name ? s->name : "default-server",
					         SRV_WEIGHT_MAX, v);
					return -1;
				}
				s->iweight = (int)v;
				atomic_store(&s->uweight, (int)v);
			} else if (!strcmp(o, "maxconn")) {
				atomic_store(&s->maxconn, (int)v);
			} else if (!strcmp(o, "maxqueue")) {
				s->maxqueue = (int)v;
			} else if (!strcmp(o, "minconn")) {
				s->minconn = (int)v;
			} else if (v > 0) {
				s->puid = (int)v;
			}
			continue;
		}
		if (!strcmp(o, "pool-max-conn") || !strcmp(o, "pool-purge-delay") ||
		    !strcmp(o, "cookie") || !strcmp(o, "pool-low-conn")) {
			if (i + 1 >= nargs) {
				snprintf(err, errlen, "'%s' expects an argument.", o);
				return -1;
			}
			i++;
			if (!strcmp(o, "cookie")) {
				free(s->cookie);
				s->cookie = strdup(args[i]);
			} else if (!strcmp(o, "pool-purge-delay")) {
				int ms;

				if (cfg_parse_time_ms(args[i], &ms, err, errlen) < 0)
					return -1;
				s->pool_purge_delay = ms;
			} else if (!strcmp(args[i], "-1")) {
				if (!strcmp(o, "pool-max-conn"))
					s->pool_max_conn = -1;
			} else if (cfg_parse_uint(args[i], 10000000, &v, err, errlen) < 0) {
				return -1;
			} else if (!strcmp(o, "pool-max-conn")) {
				s->pool_max_conn = (int)v;
			}
			continue;
		}
		if (!strcmp(o, "proto")) {
			if (i + 1 >= nargs) {
				snprintf(err, errlen, "'proto' : missing value.");
				return -1;
			}
			i++;
			if (!strcmp(args[i], "h2")) {
				s->proto = SRV_PROTO_H2;
			} else if (!strcmp(args[i], "h1")) {
				s->proto = SRV_PROTO_H1;
			} else {
				snprintf(err, errlen, "'proto' : unknown or unsupported MUX protocol "
				         "'%s' (sluice has h1 and h2).", args[i]);
				return -1;
			}
			continue;
		}
		if (!strcmp(o, "max-reuse")) {
			if (i + 1 >= nargs) {
				snprintf(err, errlen, "'max-reuse' expects an integer argument.");
				return -1;
			}
			i++;
			if (!strcmp(args[i], "-1")) {
				s->max_reuse = -1;
			} else if (cfg_parse_uint(args[i], 2147483647, &v, err, errlen) < 0) {
				return -1;
			} else {
				s->max_reuse = (int)v;
			}
			continue;
		}
		switch (ssl_srv_parse_opt(s, args, nargs, &i, err, errlen)) {
		case 1:
			continue;
		case -1:
			return -1;
		}
		switch (check_srv_parse_opt(&s->chk, args, nargs, &i, err, errlen)) {
		case 1:
			continue;
		case -1:
			return -1;
		}
		if (srv_kw_check_later(o, &takes_arg, &disables)) {
			if (takes_arg) {
				if (i + 1 >= nargs) {
					snprintf(err, errlen, "'%s' expects an argument.", o);
					return -1;
				}
				i++;
			}
			if (disables) {
				checks_off = 1;
				cfg_warning(ctx->file, ctx->line, "'%s' is not implemented yet: the "
				            "health checks of this server are disabled (it is considered "
				            "always up).", o);
			} else {
				cfg_warning(ctx->file, ctx->line, "'%s' is not implemented yet; "
				            "ignored.", o);
			}
			continue;
		}
		snprintf(err, errlen, "unknown or unsupported server parameter '%s'.", o);
		return -1;
	}
	if (checks_off)
		s->chk.off = 1;
	if (s->minconn && atomic_load(&s->maxconn) && s->minconn > atomic_load(&s->maxconn)) {
		snprintf(err, errlen, "minconn (%d) is larger than maxconn (%d).",
		         s->minconn, atomic_load(&s->maxconn));
		return -1;
	}
	return 0;
}

/* The name in <addr_str> did not resolve (<why>): the server's init-addr
 * methods in order (HAProxy's default: last, then libc). "none" starts it
 * in maintenance without an address, "<ip>" uses that address with the
 * port written; "last" and "libc" have nothing more to offer (no state
 * file holds addresses here, and libc just failed). Returns 0, or -1 with
 * the resolution error. */
static int srv_init_addr(struct cfg_ctx *ctx, struct server *s, const char *addr_str,
                         const char *why, char *err, size_t errlen)
{
	const char *colon = strrchr(addr_str, ':');
	int port = colon && addr_str[0] != '[' ? atoi(colon + 1) : 0;

	for (int i = 0; s->init_addr[i] != INIT_ADDR_NONE_SET; i++) {
		if (s->init_addr[i] == INIT_ADDR_IP) {
			s->addr.ss = s->init_ip;
			s->addr.len = s->init_ip.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
			              sizeof(struct sockaddr_in);
			if (s->addr.ss.ss_family == AF_INET)
				((struct sockaddr_in *)&s->addr.ss)->sin_port = htons((uint16_t)port);
			else
				((struct sockaddr_in6 *)&s->addr.ss)->sin6_port = htons((uint16_t)port);
			if (!port)
				s->addr.flags |= ADDR_F_NO_PORT;
			return 0;
		}
		if (s->init_addr[i] == INIT_ADDR_NONE) {
			memset(&s->addr, 0, sizeof(s->addr));
			s->addr.ss.ss_family = AF_INET;
			s->addr.len = sizeof(struct sockaddr_in);
			((struct sockaddr_in *)&s->addr.ss)->sin_port = htons((uint16_t)port);
			s->no_addr = 1;
			cfg_warning(ctx->file, ctx->line, "server '%s': %s: it starts in maintenance "
			            "(init-addr none), and sluice does not resolve it again at run "
			            "time.", s->name, why);
			return 0;
		}
	}
	/* HAProxy's words, with the name as written */
	snprintf(err, errlen, "could not resolve address '%.*s'.",
	         colon && addr_str[0] != '[' ? (int)(colon - addr_str) : (int)strlen(addr_str),
	         addr_str);
	return -1;
}

static int kw_server(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	struct proxy *be = ctx->px;
	struct server *s, **n;
	char unresolved[300] = "";

	if (strcmp(args[0], "default-server") == 0)
		return srv_parse_params(ctx, be->defsrv, args, nargs, 1, err, errlen);

	if (nargs < 3) {
		snprintf(err, errlen, "expects <name> and <address>.");
		return -1;
	}
	for (const char *c = args[1]; *c; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.' ||
		      *c == ':')) {
			snprintf(err, errlen, "invalid character '%c' in server name '%s'.", *c,
			         args[1]);
			return -1;
		}
	}
	if (server_find(be, args[1])) {
		struct server *o = server_find(be, args[1]);

		snprintf(err, errlen, "backend '%s', another server named '%s' was already "
		         "defined at line %d, please use distinct names.",
		         be->name, args[1], o->conf_line);
		return -1;
	}
	s = server_new_default();
	server_copy_settings(s, be->defsrv);
	s->be = be;
	s->name = strdup(args[1]);
	s->conf_file = strdup(ctx->file);
	s->conf_line = ctx->line;
	s->addr_str = strdup(args[2]);
	if (addr_parse(args[2], &s->addr, ADDR_O_PORT_OPTIONAL | ADDR_O_NO_FD, err, errlen) < 0) {
		/* a name that does not resolve may wait for init-addr */
		if (strncmp(err, "cannot resolve", 14) && !strstr(err, "has no IPv4 or IPv6"))
			goto fail;
		snprintf(unresolved, sizeof(unresolved), "%s", err);
	}
	if (srv_parse_params(ctx, s, args, nargs, 3, err, errlen) < 0)
		goto fail;
	if (*unresolved && srv_init_addr(ctx, s, args[2], unresolved, err, errlen) < 0)
		goto fail;
	if (s->addr.flags & ADDR_F_NO_PORT) {
		snprintf(err, errlen, "server '%s': an address without a port is not supported "
		         "yet in TCP mode.", s->name);
		goto fail;
	}
	atomic_store(&s->admin, s->disabled_at_start ? SRV_ADMIN_MAINT : SRV_ADMIN_READY);
	for (int i = 0; s->puid && i < be->nsrv; i++) {
		if (be->srv[i]->puid == s->puid) {
			snprintf(err, errlen, "'id': custom id %d already used at %s:%d "
			         "('server %s').", s->puid, be->srv[i]->conf_file,
			         be->srv[i]->conf_line, be->srv[i]->name);
			goto fail;
		}
	}
	/* the array grows only once the line is known to be valid */
	n = realloc(be->srv, (be->nsrv + 1) * sizeof(*n));
	if (!n) {
		snprintf(err, errlen, "out of memory.");
		goto fail;
	}
	be->srv = n;
	be->srv[be->nsrv++] = s;
	if (!s->puid)
		s->puid = be->nsrv;
	return 0;
fail:
	cfg_free_server(s);
	return -1;
}

/* server-template <prefix> <num | first-last> <address> [params]: the
 * servers <prefix><n>, each a `server` line of its own. Without resolvers
 * (not implemented), a name is resolved once at start-up, as for `server`:
 * every server of the template gets that address. */
static int kw_server_template(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                              size_t errlen)
{
	char **sargs, name[256], *end;
	long lo = 1, hi;
	int rc = 0;

	if (nargs < 4 || !*args[1] || !*args[2] || !*args[3])
		return errmsg_set(err, errlen, "'server-template' expects <prefix> <nb | range> "
		                  "<addr>[:<port>] as arguments.");
	hi = strtol(args[2], &end, 10);
	if (*end == '-' && end != args[2]) {
		lo = hi;
		hi = strtol(end + 1, &end, 10);
	}
	if (*end || lo < 1 || hi < lo || hi > 100000)
		return errmsg_set(err, errlen, "Wrong server-template number or range arg '%s'.",
		                  args[2]);
	sargs = calloc((size_t)nargs, sizeof(*sargs));
	if (!sargs)
		return errmsg_set(err, errlen, "out of memory");
	sargs[0] = args[0];
	sargs[1] = name;
	for (int i = 3; i < nargs; i++)
		sargs[i - 1] = args[i];
	for (long n = lo; n <= hi && rc == 0; n++) {
		if ((size_t)snprintf(name, sizeof(name), "%s%ld", args[1], n) >= sizeof(name)) {
			rc = errmsg_set(err, errlen, "server-template prefix '%s' is too long.", args[1]);
			break;
		}
		rc = kw_server(ctx, sargs, nargs - 1, err, errlen);
	}
	free(sargs);
	return rc;
}

