/* Configuration keywords of HTTP proxies (HAProxy 2.6 semantics): the HTTP
 * options, HTTP timeouts, http-reuse, monitor-uri, unique-id-*, header
 * captures, error pages (errorfile, errorloc*, errorfiles, http-error and
 * the http-errors section), cookie persistence and hash-type; and the
 * checks after parsing: HTTP-only settings of a TCP proxy are dropped with
 * HAProxy's warnings, errorfiles imports are resolved, unique-id formats
 * compiled, consistent-hash rings built.
 *
 * `mode http` and `balance uri|url_param|hdr()` are parsed in proxy.c
 * (kw_mode, kw_balance, the latter through lb_hash_cfg_balance()), and the
 * inheritance from defaults sections is proxy_inherit()'s.
 *
 * Everything here runs at configuration time, on one thread. The
 * http-errors sections and the formats of http-error replies live as long
 * as the configuration (the proxies' tables hold references on the
 * replies, which borrow the formats); http_cfg_free() releases them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/http/act.h>
#include <sluice/http/errors.h>
#include <sluice/http/http_cfg.h>
#include <sluice/proxy/lb_hash.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_http_conn(KW_ARGS);
static int kw_option_flag(KW_ARGS);
static int kw_httplog(KW_ARGS);
static int kw_httpslog(KW_ARGS);
static int kw_fwd(KW_ARGS);
static int kw_http_timeout(KW_ARGS);
static int kw_http_reuse(KW_ARGS);
static int kw_monitor_uri(KW_ARGS);
static int kw_unique_id_format(KW_ARGS);
static int kw_unique_id_header(KW_ARGS);
static int kw_capture(KW_ARGS);
static int kw_capture_cookie(KW_ARGS);
static int kw_errorfile(KW_ARGS);
static int kw_errorloc(KW_ARGS);
static int kw_errorfiles(KW_ARGS);
static int kw_http_error(KW_ARGS);
static int kw_set_errorfile(KW_ARGS);
static int kw_cookie(KW_ARGS);
static int kw_hash_type(KW_ARGS);

static const struct cfg_kw http_cfg_kws[] = {
	{ "option",  "http-keep-alive",   CFG_SEC_PROXY, kw_http_conn, 1 },
	{ "option",  "http-server-close", CFG_SEC_PROXY, kw_http_conn, 1 },
	{ "option",  "httpclose",         CFG_SEC_PROXY, kw_http_conn, 1 },
	{ "option",  "http-buffer-request", CFG_SEC_PROXY, kw_option_flag, 1 },
	{ "option",  "h1-case-adjust-bogus-client", CFG_SEC_FE, kw_option_flag, 1 },
	{ "option",  "h1-case-adjust-bogus-server", CFG_SEC_BE, kw_option_flag, 1 },
	{ "option",  "accept-invalid-http-request",  CFG_SEC_FE, kw_option_flag, 1 },
	{ "option",  "accept-invalid-http-response", CFG_SEC_BE, kw_option_flag, 1 },
	{ "option",  "dontlog-normal",    CFG_SEC_FE,    kw_option_flag, 1 },
	{ "option",  "log-separate-errors", CFG_SEC_FE,  kw_option_flag, 1 },
	{ "option",  "http-ignore-probes", CFG_SEC_FE,   kw_option_flag, 1 },
	{ "option",  "logasap",           CFG_SEC_FE,    kw_option_flag, 1 },
	{ "option",  "httplog",           CFG_SEC_FE,    kw_httplog },
	{ "option",  "httpslog",          CFG_SEC_FE,    kw_httpslog },
	{ "option",  "forwardfor",        CFG_SEC_PROXY, kw_fwd },
	{ "option",  "originalto",        CFG_SEC_PROXY, kw_fwd },
	{ "timeout", "http-request",      CFG_SEC_PROXY, kw_http_timeout },
	{ "timeout", "http-keep-alive",   CFG_SEC_PROXY, kw_http_timeout },
	{ "timeout", "tarpit",            CFG_SEC_PROXY, kw_http_timeout },
	{ "http-reuse",       NULL,       CFG_SEC_BE,    kw_http_reuse },
	{ "monitor-uri",      NULL,       CFG_SEC_FE,    kw_monitor_uri },
	{ "unique-id-format", NULL,       CFG_SEC_FE,    kw_unique_id_format },
	{ "unique-id-header", NULL,       CFG_SEC_FE,    kw_unique_id_header },
	{ "capture", "request",           CFG_SEC_FE_ONLY, kw_capture },
	{ "capture", "response",          CFG_SEC_FE_ONLY, kw_capture },
	{ "capture", "cookie",            CFG_SEC_FE_ONLY, kw_capture_cookie },
	{ "errorfile",        NULL,       CFG_SEC_PROXY, kw_errorfile },
	{ "errorfile",        NULL,       CFG_SEC_HTTP_ERRORS, kw_set_errorfile },
	{ "errorloc",         NULL,       CFG_SEC_PROXY, kw_errorloc },
	{ "errorloc302",      NULL,       CFG_SEC_PROXY, kw_errorloc },
	{ "errorloc303",      NULL,       CFG_SEC_PROXY, kw_errorloc },
	{ "errorfiles",       NULL,       CFG_SEC_PROXY, kw_errorfiles },
	{ "http-error",       NULL,       CFG_SEC_PROXY, kw_http_error },
	{ "cookie",           NULL,       CFG_SEC_BE,    kw_cookie },
	{ "hash-type",        NULL,       CFG_SEC_BE,    kw_hash_type },
	{ NULL }
};
CFG_REGISTER(http_cfg_kws)

static int http_errors_begin(KW_ARGS);

static struct cfg_section_def http_errors_section = {
	.name = "http-errors", .sec = CFG_SEC_HTTP_ERRORS, .begin = http_errors_begin,
};

/* the http-errors sections, and the one being read */
static struct http_errors_sets err_sets;
static struct http_errors_set *cur_set;

/* ---- options ---- */

/* option http-keep-alive | http-server-close | httpclose: one connection
 * mode, the last line wins; "no option X" goes back to keep-alive only if
 * X is the mode in force (HAProxy). */
static int kw_http_conn(KW_ARGS)
{
	enum px_http_conn m = strcmp(args[1], "http-keep-alive") == 0 ? PX_HTTP_KAL :
	                      strcmp(args[1], "http-server-close") == 0 ? PX_HTTP_SCL : PX_HTTP_CLO;

	if (nargs > 2)
		return errmsg_set(err, errlen, "'option %s' cannot handle unexpected argument '%s'.",
		                  args[1], args[2]);
	if (!ctx->negate)
		ctx->px->http_conn = m;
	else if (ctx->px->http_conn == m)
		ctx->px->http_conn = PX_HTTP_KAL;
	return 0;
}

static int kw_option_flag(KW_ARGS)
{
	static const struct { const char *name; unsigned int flag; } tab[] = {
		{ "http-buffer-request", PX_O_HTTP_BUFFER_REQ },
		{ "accept-invalid-http-request", PX_O_ACCEPT_INV_REQ },
		{ "accept-invalid-http-response", PX_O_ACCEPT_INV_RES },
		{ "dontlog-normal", PX_O_DONTLOG_NORMAL },
		{ "log-separate-errors", PX_O_LOG_SEP_ERRORS },
		{ "http-ignore-probes", PX_O_HTTP_IGN_PROBES },
		{ "logasap", PX_O_LOGASAP },
		{ "h1-case-adjust-bogus-client", PX_O_H1_CASE_CLI },
		{ "h1-case-adjust-bogus-server", PX_O_H1_CASE_SRV },
	};

	if (nargs > 2)
		return errmsg_set(err, errlen, "'option %s' cannot handle unexpected argument '%s'.",
		                  args[1], args[2]);
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(args[1], tab[i].name) != 0)
			continue;
		if (ctx->negate)
			ctx->px->options &= ~tab[i].flag;
		else
			ctx->px->options |= tab[i].flag;
		return 0;
	}
	return errmsg_set(err, errlen, "unknown option '%s'.", args[1]);
}

/* option httplog [clf]: the last of log-format, option tcplog and option
 * httplog wins, so a log-format seen before is dropped (HAProxy warns
 * about it only in a defaults section). */
static int kw_httplog(KW_ARGS)
{
	struct proxy *px = ctx->px;

	if (nargs > 2 && strcmp(args[2], "clf") != 0)
		return errmsg_set(err, errlen, "keyword 'httplog' only supports option 'clf'.");
	if (nargs > 3)
		return errmsg_set(err, errlen, "'option httplog' cannot handle unexpected "
		                  "argument '%s'.", args[3]);
	if (px->log_format && ctx->section == CFG_SEC_DEFAULTS)
		cfg_warning(ctx->file, ctx->line, "'option httplog' overrides previous 'log-format' "
		            "in 'defaults' section.");
	free(px->log_format);
	px->log_format = NULL;
	px->options &= ~(PX_O_TCPLOG | PX_O_HTTPLOG_CLF | PX_O_HTTPSLOG);
	px->options |= PX_O_HTTPLOG | (nargs > 2 ? PX_O_HTTPLOG_CLF : 0);
	return 0;
}

/* option httpslog: httplog's format and the TLS fields (LF_HTTPSLOG_FORMAT),
 * with the same "last one wins" rule. HAProxy 2.6 takes and ignores
 * arguments; so does sluice, with a warning. */
static int kw_httpslog(KW_ARGS)
{
	struct proxy *px = ctx->px;

	if (nargs > 2)
		cfg_warning(ctx->file, ctx->line, "'option httpslog' takes no argument: '%s' "
		            "ignored.", args[2]);
	if (px->log_format && ctx->section == CFG_SEC_DEFAULTS)
		cfg_warning(ctx->file, ctx->line, "'option httplog' overrides previous 'log-format' "
		            "in 'defaults' section.");
	free(px->log_format);
	px->log_format = NULL;
	px->options &= ~(PX_O_TCPLOG | PX_O_HTTPLOG_CLF);
	px->options |= PX_O_HTTPLOG | PX_O_HTTPSLOG;
	return 0;
}

/* <addr>[/<len>|/<dotted mask>], IPv4 or IPv6, as `except` takes it. */
static int parse_net(const char *s, struct sockaddr_storage *ss, int *plen)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t hl = slash ? (size_t)(slash - s) : strlen(s);
	struct in_addr m4;
	char *end;
	long l;

	if (!hl || hl >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1)
		ss->ss_family = AF_INET;
	else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1)
		ss->ss_family = AF_INET6;
	else
		return -1;
	*plen = ss->ss_family == AF_INET ? 32 : 128;
	if (!slash)
		return 0;
	l = strtol(slash + 1, &end, 10);
	if (slash[1] >= '0' && slash[1] <= '9' && !*end && l >= 0 && l <= *plen) {
		*plen = (int)l;
		return 0;
	}
	if (ss->ss_family != AF_INET || inet_pton(AF_INET, slash + 1, &m4) != 1)
		return -1;
	/* a dotted mask must be contiguous ones */
	for (uint32_t m = ntohl(m4.s_addr), n = 0; ; m <<= 1, n++) {
		if (!(m & 0x80000000u)) {
			if (m)
				return -1;
			*plen = (int)n;
			return 0;
		}
	}
}

/* RFC 9110 token: what a field name may be. */
static int is_token(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", *s)))
			return 0;
	return 1;
}

/* option forwardfor [except <net>] [header <name>] [if-none]
 * option originalto [except <net>] [header <name>]
 * Each line starts from the defaults again, as in HAProxy. */
static int kw_fwd(KW_ARGS)
{
	int ff = strcmp(args[1], "forwardfor") == 0;
	struct px_fwd_hdr *f = ff ? &ctx->px->fwdfor : &ctx->px->origto;
	struct px_fwd_hdr n = { 0 };

	for (int i = 2; i < nargs; i++) {
		const char *val = i + 1 < nargs ? args[i + 1] : NULL;

		if (strcmp(args[i], "except") == 0) {
			if (!val || parse_net(val, &n.except_net, &n.except_plen) < 0) {
				errmsg_set(err, errlen, "'option %s except' expects <address>[/mask] as "
				           "argument.", args[1]);
				goto fail;
			}
			n.has_except = 1;
			i++;
		} else if (strcmp(args[i], "header") == 0) {
			if (!val || !*val) {
				errmsg_set(err, errlen, "'option %s header' expects <header_name> as "
				           "argument.", args[1]);
				goto fail;
			}
			if (!is_token(val)) {
				errmsg_set(err, errlen, "'option %s header': invalid header name '%s'.",
				           args[1], val);
				goto fail;
			}
			free(n.hdr);
			n.hdr = strdup(val);
			i++;
		} else if (ff && strcmp(args[i], "if-none") == 0) {
			n.if_none = 1;
		} else {
			errmsg_set(err, errlen, ff ? "'option forwardfor' only supports optional values: "
			           "'except', 'header' and 'if-none'." : "'option originalto' only "
			           "supports optional values: 'except' and 'header'.");
			goto fail;
		}
	}
	free(f->hdr);
	*f = n;
	ctx->px->options |= ff ? PX_O_FORWARDFOR : PX_O_ORIGINALTO;
	return 0;
fail:
	free(n.hdr);
	return -1;
}

/* ---- timeouts, http-reuse, monitor-uri, unique-id ---- */

static int kw_http_timeout(KW_ARGS)
{
	struct proxy *px = ctx->px;
	int *field = strcmp(args[1], "http-request") == 0 ? &px->timeout_http_request :
	             strcmp(args[1], "http-keep-alive") == 0 ? &px->timeout_http_keep_alive :
	             &px->timeout_tarpit;

	if (nargs < 3)
		return errmsg_set(err, errlen, "'timeout %s' expects an integer value (in "
		                  "milliseconds).", args[1]);
	if (nargs > 3)
		return errmsg_set(err, errlen, "'timeout %s' : unexpected extra argument '%s' "
		                  "after value '%s'.", args[1], args[3], args[2]);
	return cfg_parse_time_ms(args[2], field, err, errlen);
}

static int kw_http_reuse(KW_ARGS)
{
	static const struct { const char *name; enum px_http_reuse v; } tab[] = {
		{ "never", PX_REUSE_NEVER }, { "safe", PX_REUSE_SAFE },
		{ "aggressive", PX_REUSE_AGGRESSIVE }, { "always", PX_REUSE_ALWAYS },
	};

	for (size_t i = 0; nargs == 2 && i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(args[1], tab[i].name) == 0) {
			ctx->px->http_reuse = tab[i].v;
			return 0;
		}
	}
	return errmsg_set(err, errlen, "'http-reuse' only supports 'never', 'safe', "
	                  "'aggressive', 'always'.");
}

/* Replaces *dst by a copy of <s>. */
static int set_str(char **dst, const char *s, char *err, size_t errlen)
{
	char *c = strdup(s);

	if (!c)
		return errmsg_set(err, errlen, "out of memory.");
	free(*dst);
	*dst = c;
	return 0;
}

static int kw_monitor_uri(KW_ARGS)
{
	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "'monitor-uri' expects an URI.");
	if (cfg_no_more_args(args, nargs, 2, err, errlen) < 0)
		return -1;
	return set_str(&ctx->px->monitor_uri, args[1], err, errlen);
}

/* unique-id-format <fmt>: checked here (the error then names this line),
 * compiled for good after parsing, once per proxy that ends up with it. */
static int kw_unique_id_format(KW_ARGS)
{
	struct lf_expr e = { 0 };
	char sub[256];

	if (nargs < 2)
		return errmsg_set(err, errlen, "unique-id-format expects an argument.");
	if (nargs > 2)
		return errmsg_set(err, errlen, "unique-id-format expects only one argument, don't "
		                  "forget to escape spaces!");
	if (!*args[1]) {
		/* an empty format: no unique id, as HAProxy */
		free(ctx->px->unique_id_fmt_str);
		ctx->px->unique_id_fmt_str = NULL;
		return 0;
	}
	if (lf_compile(args[1], &e, sub, sizeof(sub)) < 0)
		return errmsg_set(err, errlen, "failed to parse unique-id : %s", sub);
	lf_free(&e);
	/* the later checks (proxy.c) report at this line */
	ctx->px->unique_id_fmt_line = ctx->line;
	if (set_str(&ctx->px->unique_id_fmt_file, ctx->file, err, errlen) < 0)
		return -1;
	return set_str(&ctx->px->unique_id_fmt_str, args[1], err, errlen);
}

static int kw_unique_id_header(KW_ARGS)
{
	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "unique-id-header expects an argument.");
	if (!is_token(args[1]))
		return errmsg_set(err, errlen, "invalid header name '%s'.", args[1]);
	if (cfg_no_more_args(args, nargs, 2, err, errlen) < 0)
		return -1;
	return set_str(&ctx->px->unique_id_hdr, args[1], err, errlen);
}

/* capture request|response header <name> len <length> */
static int kw_capture(KW_ARGS)
{
	int req = strcmp(args[1], "request") == 0;
	struct px_capture *cap = req ? ctx->px->req_cap : ctx->px->res_cap;
	int *n = req ? &ctx->px->nreq_cap : &ctx->px->nres_cap;
	long len;

	if (nargs != 6 || strcmp(args[2], "header") != 0 || strcmp(args[4], "len") != 0 ||
	    !*args[3])
		return errmsg_set(err, errlen, "'capture %s' expects 'header' <header_name> 'len' "
		                  "<len>.", args[1]);
	if (cfg_parse_uint(args[5], 65536, &len, err, errlen) < 0)
		return -1;
	if (*n >= PX_MAX_CAPTURES)
		return errmsg_set(err, errlen, "too many '%s' header captures (sluice keeps at "
		                  "most %d per frontend).", args[1], PX_MAX_CAPTURES);
	cap[*n].name = strdup(args[3]);
	if (!cap[*n].name)
		return errmsg_set(err, errlen, "out of memory.");
	cap[*n].len = (int)len;
	(*n)++;
	return 0;
}

/* capture cookie <name> len <length>: the last line of a frontend wins;
 * the length is bounded by tune.http.cookielen, as in HAProxy */
static int kw_capture_cookie(KW_ARGS)
{
	long len;
	char *n;

	if (nargs != 5 || strcmp(args[3], "len") != 0 || !*args[2])
		return errmsg_set(err, errlen, "'capture' expects 'cookie' <cookie_name> 'len' <len>.");
	if (cfg_parse_uint(args[4], 0x7fffffff, &len, err, errlen) < 0)
		return -1;
	if (len > global.http_cookielen)
		len = global.http_cookielen;
	n = strdup(args[2]);
	if (!n)
		return errmsg_set(err, errlen, "out of memory");
	free(ctx->px->capture_cookie);
	ctx->px->capture_cookie = n;
	ctx->px->capture_cookie_len = (int)len;
	return 0;
}

/* ---- error pages ---- */

static struct http_errors *px_errors(struct proxy *px, char *err, size_t errlen)
{
	if (!px->errors) {
		px->errors = malloc(sizeof(*px->errors));
		if (!px->errors) {
			errmsg_set(err, errlen, "out of memory.");
			return NULL;
		}
		http_errors_init(px->errors);
	}
	return px->errors;
}

/* A status code of errorfile & co: one sluice may answer itself. */
static int parse_code(const char *s, int *code)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v > 999 || http_err_slot((int)v) < 0)
		return -1;
	*code = (int)v;
	return 0;
}

/* Stores <r> (built by the caller, who keeps no reference) for <code>. */
static int set_reply(struct http_errors *t, int code, struct http_reply *r, const char *sub,
                     char *err, size_t errlen)
{
	char why[256];
	int rc;

	if (!r)
		return errmsg_set(err, errlen, "%s.", sub);
	rc = http_errors_set(t, code, r, why, sizeof(why));
	http_reply_release(r);
	return rc < 0 ? errmsg_set(err, errlen, "%s.", why) : 0;
}

/* errorfile <code> <file>, in a proxy or an http-errors section. */
static int errorfile_into(struct http_errors *t, struct cfg_ctx *ctx, char **args, int nargs,
                          char *err, size_t errlen)
{
	char sub[384];
	int code;

	if (nargs < 3)
		return errmsg_set(err, errlen, "expects <status_code> and <file> as arguments.");
	if (parse_code(args[1], &code) < 0)
		return errmsg_set(err, errlen, "status code '%s' not handled.", args[1]);
	if (nargs > 3)
		cfg_warning(ctx->file, ctx->line, "'errorfile': extra argument '%s' ignored.", args[3]);
	return set_reply(t, code, http_reply_load_file(args[2], (size_t)global.bufsize, sub,
	                                               sizeof(sub)), sub, err, errlen);
}

static int kw_errorfile(KW_ARGS)
{
	struct http_errors *t = px_errors(ctx->px, err, errlen);

	return t ? errorfile_into(t, ctx, args, nargs, err, errlen) : -1;
}

static int kw_set_errorfile(KW_ARGS)
{
	if (!cur_set)
		return errmsg_set(err, errlen, "not in an http-errors section.");
	return errorfile_into(&cur_set->errors, ctx, args, nargs, err, errlen);
}

/* errorloc|errorloc302 (302) and errorloc303 (303) <code> <url> */
static int kw_errorloc(KW_ARGS)
{
	struct http_errors *t = px_errors(ctx->px, err, errlen);
	int status = strcmp(args[0], "errorloc303") == 0 ? 303 : 302;
	char sub[384];
	int code;

	if (!t)
		return -1;
	if (nargs < 3)
		return errmsg_set(err, errlen, "expects <status_code> and <url> as arguments.");
	if (parse_code(args[1], &code) < 0)
		return errmsg_set(err, errlen, "status code '%s' not handled.", args[1]);
	if (nargs > 3)
		cfg_warning(ctx->file, ctx->line, "'%s': extra argument '%s' ignored.", args[0],
		            args[3]);
	return set_reply(t, code, http_reply_redirect(status, args[2], (size_t)global.bufsize,
	                                              sub, sizeof(sub)), sub, err, errlen);
}

/* errorfiles <name> [<code> ...]: resolved after parsing, the section may
 * come later in the file. */
static int kw_errorfiles(KW_ARGS)
{
	struct http_errors *t = px_errors(ctx->px, err, errlen);
	int codes[HTTP_ERR_NCODES * 4], n = 0;
	char sub[256];

	if (!t)
		return -1;
	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "expects <name> as argument.");
	for (int i = 2; i < nargs; i++) {
		if (n >= (int)(sizeof(codes) / sizeof(codes[0])))
			return errmsg_set(err, errlen, "too many status codes.");
		if (parse_code(args[i], &codes[n++]) < 0)
			return errmsg_set(err, errlen, "status code '%s' not handled.", args[i]);
	}
	if (http_errors_import(t, args[1], codes, n, ctx->file, ctx->line, sub, sizeof(sub)) < 0)
		return errmsg_set(err, errlen, "%s.", sub);
	return 0;
}

/* ---- http-error ---- */

#define HERR_MAX_HDRS 64

struct herr_args {
	int code;                   /* -1 until "status" */
	const char *ctype;
	const char *src_kw, *src;   /* payload keyword and its argument */
	int nhdrs;
	const char *hdr_name[HERR_MAX_HDRS], *hdr_val[HERR_MAX_HDRS];
};

/* The payload keywords of http-error, with what their argument is. */
static const char *herr_src_arg(const char *kw)
{
	static const char *const tab[][2] = {
		{ "default-errorfiles", "" }, { "errorfile", "<file>" }, { "errorfiles", "<name>" },
		{ "file", "<file>" }, { "lf-file", "<file>" }, { "string", "<str>" },
		{ "lf-string", "<fmt>" },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(kw, tab[i][0]) == 0)
			return tab[i][1];
	return NULL;
}

static int herr_parse(char **args, int nargs, struct herr_args *a, char *err, size_t errlen)
{
	a->code = -1;
	for (int i = 1; i < nargs; i++) {
		const char *k = args[i], *what = herr_src_arg(k);
		int has = i + 1 < nargs;

		if (strcmp(k, "status") == 0) {
			if (!has)
				return errmsg_set(err, errlen, "'status' expects <status_code> as argument.");
			if (parse_code(args[++i], &a->code) < 0) {
				long v = strtol(args[i], NULL, 10);

				return errmsg_set(err, errlen, v >= 200 && v <= 599 ?
				                  "status code '%s' not handled." :
				                  "Unexpected status code '%s'.", args[i]);
			}
		} else if (strcmp(k, "content-type") == 0) {
			if (!has)
				return errmsg_set(err, errlen, "'content-type' expects <type> as argument.");
			a->ctype = args[++i];
		} else if (strcmp(k, "hdr") == 0) {
			if (i + 2 >= nargs)
				return errmsg_set(err, errlen, "'hdr' expects <name> and <value> as "
				                  "arguments.");
			if (a->nhdrs >= HERR_MAX_HDRS)
				return errmsg_set(err, errlen, "too many 'hdr' (max %d).", HERR_MAX_HDRS);
			a->hdr_name[a->nhdrs] = args[i + 1];
			a->hdr_val[a->nhdrs++] = args[i + 2];
			i += 2;
		} else if (what) {
			if (a->src_kw)
				return errmsg_set(err, errlen, "unexpected '%s' argument, '%s' already "
				                  "defined.", k, a->src_kw);
			if (*what && !has)
				return errmsg_set(err, errlen, "'%s' expects %s as argument.", k, what);
			a->src_kw = k;
			if (*what)
				a->src = args[++i];
		} else {
			return errmsg_set(err, errlen, "unknown keyword '%s'.", k);
		}
	}
	if (a->code < 0)
		return errmsg_set(err, errlen, "expects at least a <status> as arguments.");
	return 0;
}

/* Reads a payload file (at most tune.bufsize bytes). */
static char *read_payload(const char *path, size_t *len, char *err, size_t errlen)
{
	size_t max = (size_t)global.bufsize;
	char *data = malloc(max + 1);
	FILE *f = fopen(path, "rb");

	if (!f || !data) {
		errmsg_set(err, errlen, "'%s': cannot open: %s", path, f ? "out of memory" :
		           strerror(errno));
		goto fail;
	}
	*len = fread(data, 1, max + 1, f);
	if (ferror(f) || *len > max) {
		errmsg_set(err, errlen, "'%s': %s", path, ferror(f) ? "read error" :
		           "larger than tune.bufsize");
		goto fail;
	}
	fclose(f);
	data[*len] = '\0';
	return data;
fail:
	if (f)
		fclose(f);
	free(data);
	return NULL;
}

/* Formats of http-error replies: the replies only borrow them, so they are
 * kept here until http_cfg_free() (even those of a line found wrong). */
struct kept_fmt {
	struct kept_fmt *next;
	struct lf_expr e;
};
static struct kept_fmt *kept_fmts;

static struct lf_expr *herr_compile(const char *fmt, char *err, size_t errlen)
{
	struct kept_fmt *k = calloc(1, sizeof(*k));
	char sub[256];

	if (!k) {
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	if (lf_compile(fmt, &k->e, sub, sizeof(sub)) < 0) {
		errmsg_set(err, errlen, "%s", sub);
		free(k);
		return NULL;
	}
	k->next = kept_fmts;
	kept_fmts = k;
	return &k->e;
}

/* Renders a reply's format for the stream <ctx> (http_reply_render()). */
static ssize_t herr_render(const void *fmt, void *ctx, char *out, size_t room)
{
	size_t n;

	if (!room)
		return -1;
	n = act_lf_render(ctx, fmt, out, room);
	return n + 1 >= room ? -1 : (ssize_t)n;
}

/* The reply of an http-error line with a payload of its own (string, file,
 * lf-string, lf-file, or none) and its fields. */
static struct http_reply *herr_build(const struct herr_args *a, char *err, size_t errlen)
{
	struct http_hdr hdrs[HERR_MAX_HDRS];
	struct http_reply_dyn_hdr dyn[HERR_MAX_HDRS];
	int nhdrs = 0, ndyn = 0, lf = a->src_kw && strncmp(a->src_kw, "lf-", 3) == 0;
	const char *ctype = a->ctype;
	struct http_reply *r = NULL;
	struct lf_expr *body_fmt = NULL;
	char *body = NULL;
	size_t len = a->src ? strlen(a->src) : 0;

	if (a->src_kw && strstr(a->src_kw, "file")) {
		body = read_payload(a->src, &len, err, errlen);
		if (!body)
			return NULL;
	}
	if (lf && !ctype) {
		errmsg_set(err, errlen, "a content type must be defined with a log-format payload");
		goto out;
	}
	if (len && !ctype) {
		errmsg_set(err, errlen, "a content type must be defined when non-empty payload is "
		           "configured");
		goto out;
	}
	if (!len && !lf)
		ctype = NULL;    /* ignored without a payload */
	for (int i = 0; i < a->nhdrs; i++) {
		struct ist name = { a->hdr_name[i], strlen(a->hdr_name[i]) };

		if (!strchr(a->hdr_val[i], '%')) {
			hdrs[nhdrs++] = (struct http_hdr){ name, { a->hdr_val[i], strlen(a->hdr_val[i]) } };
			continue;
		}
		dyn[ndyn] = (struct http_reply_dyn_hdr){ name, herr_compile(a->hdr_val[i], err, errlen) };
		if (!dyn[ndyn].fmt)
			goto out;
		ndyn++;
	}
	if (lf && !(body_fmt = herr_compile(body ? body : a->src, err, errlen)))
		goto out;
	if (lf || ndyn)
		r = http_reply_build_dynamic(a->code, ctype, herr_render, body_fmt, dyn, ndyn,
		                             hdrs, nhdrs, err, errlen);
	else
		r = http_reply_build(a->code, ctype, body ? body : a->src, len, hdrs, nhdrs,
		                     (size_t)global.bufsize, err, errlen);
out:
	free(body);
	return r;
}

/* http-error status <code> [content-type <type>]
 *            [default-errorfiles | errorfile <file> | errorfiles <name> |
 *             file <file> | lf-file <file> | string <str> | lf-string <fmt>]
 *            [hdr <name> <fmt>]* */
static int kw_http_error(KW_ARGS)
{
	struct http_errors *t = px_errors(ctx->px, err, errlen);
	struct herr_args a = { 0 };
	char sub[384];

	if (!t || herr_parse(args, nargs, &a, err, errlen) < 0)
		return -1;
	if (a.src_kw && strcmp(a.src_kw, "default-errorfiles") == 0)
		return http_errors_reset(t, a.code, err, errlen);
	if (a.src_kw && strcmp(a.src_kw, "errorfiles") == 0) {
		if (http_errors_import(t, a.src, &a.code, 1, ctx->file, ctx->line, sub,
		                       sizeof(sub)) < 0)
			return errmsg_set(err, errlen, "%s.", sub);
		return 0;
	}
	if (a.src_kw && strcmp(a.src_kw, "errorfile") == 0)
		return set_reply(t, a.code, http_reply_load_file(a.src, (size_t)global.bufsize, sub,
		                                                 sizeof(sub)), sub, err, errlen);
	sub[0] = '\0';
	return set_reply(t, a.code, herr_build(&a, sub, sizeof(sub)), sub, err, errlen);
}

/* http-errors <name> */
static int http_errors_begin(KW_ARGS)
{
	char sub[256];

	cur_set = NULL;
	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "missing name for http-errors section.");
	cur_set = http_errors_set_new(&err_sets, args[1], ctx->file, ctx->line, sub, sizeof(sub));
	if (!cur_set)
		return errmsg_set(err, errlen, "%s.", sub);
	if (nargs > 2)
		cfg_warning(ctx->file, ctx->line, "'http-errors %s': extra argument '%s' ignored.",
		            args[1], args[2]);
	return 0;
}

/* ---- cookie, hash-type ---- */

/* maxidle/maxlife: a time in seconds unless a unit says otherwise. */
static int parse_seconds(const char *opt, const char *s, int *out, char *err, size_t errlen)
{
	static const struct { const char *unit; double mult; } units[] = {
		{ "", 1 }, { "us", 0.000001 }, { "ms", 0.001 }, { "s", 1 }, { "m", 60 },
		{ "h", 3600 }, { "d", 86400 },
	};
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return errmsg_set(err, errlen, "'%s' expects <%s> in seconds as argument.", opt,
		                  strcmp(opt, "maxidle") == 0 ? "idletime" : "lifetime");
	errno = 0;
	v = strtoul(s, &end, 10);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double r = (double)v * units[i].mult;

		if (strcmp(end, units[i].unit) != 0)
			continue;
		if (errno || r > 0x7fffffff)
			return errmsg_set(err, errlen, "value '%s' for <%s> is too large.", s, opt);
		*out = (int)r;
		return 0;
	}
	return errmsg_set(err, errlen, "unexpected character '%c' in argument to <%s>.", *end, opt);
}

/* cookie <name> [rewrite|insert|prefix] [indirect] [nocache] [postonly]
 *        [preserve] [httponly] [secure] [domain <d>]* [maxidle <t>]
 *        [maxlife <t>]
 * Each line replaces the previous settings. Several domains are kept as
 * HAProxy keeps them, "a; domain=b", so that the Set-Cookie carries
 * "; domain=a; domain=b". */
struct ck_conf {
	unsigned int cookie_opts;
	char *cookie_domain;
	int cookie_maxidle, cookie_maxlife;
};

static int cookie_option(struct cfg_ctx *ctx, char **args, int nargs, int *i,
                         struct ck_conf *tmp, char *err, size_t errlen)
{
	static const struct { const char *name; unsigned int flag; } flags[] = {
		{ "rewrite", PX_CK_REWRITE }, { "insert", PX_CK_INSERT }, { "prefix", PX_CK_PREFIX },
		{ "indirect", PX_CK_INDIRECT }, { "nocache", PX_CK_NOCACHE },
		{ "postonly", PX_CK_POSTONLY }, { "preserve", PX_CK_PRESERVE },
		{ "httponly", PX_CK_HTTPONLY }, { "secure", PX_CK_SECURE },
	};
	const char *o = args[*i], *val = *i + 1 < nargs ? args[*i + 1] : NULL;

	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		if (strcmp(o, flags[k].name) == 0) {
			tmp->cookie_opts |= flags[k].flag;
			return 0;
		}
	}
	(*i)++;
	if (strcmp(o, "maxidle") == 0)
		return parse_seconds(o, val, &tmp->cookie_maxidle, err, errlen);
	if (strcmp(o, "maxlife") == 0)
		return parse_seconds(o, val, &tmp->cookie_maxlife, err, errlen);
	if (strcmp(o, "domain") == 0) {
		char *d;

		if (!val || !*val)
			return errmsg_set(err, errlen, "'domain' expects <domain> as argument.");
		if (!strchr(val + 1, '.'))
			cfg_warning(ctx->file, ctx->line, "domain '%s' contains no embedded dot, this "
			            "configuration may not work properly (see RFC6265#5.2.3).", val);
		if (strpbrk(val, "; \t,"))
			return errmsg_set(err, errlen, "invalid domain '%s'.", val);
		if (asprintf(&d, "%s%s%s", tmp->cookie_domain ? tmp->cookie_domain : "",
		             tmp->cookie_domain ? "; domain=" : "", val) < 0)
			return errmsg_set(err, errlen, "out of memory.");
		free(tmp->cookie_domain);
		tmp->cookie_domain = d;
		return 0;
	}
	if (strcmp(o, "dynamic") == 0 || strcmp(o, "attr") == 0)
		return errmsg_set(err, errlen, "'%s' is not supported by this version of sluice.", o);
	return errmsg_set(err, errlen, "'cookie' supports 'rewrite', 'insert', 'prefix', "
	                  "'indirect', 'nocache', 'postonly', 'domain', 'maxidle', 'dynamic', "
	                  "'maxlife' and 'attr' options.");
}

static int kw_cookie(KW_ARGS)
{
	struct ck_conf tmp = { 0 };
	struct proxy *px = ctx->px;
	unsigned int modes;

	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "'cookie' expects <cookie_name> as argument.");
	for (int i = 2; i < nargs; i++) {
		if (cookie_option(ctx, args, nargs, &i, &tmp, err, errlen) < 0)
			goto fail;
	}
	modes = tmp.cookie_opts & (PX_CK_REWRITE | PX_CK_INSERT | PX_CK_PREFIX);
	if (modes & (modes - 1)) {
		errmsg_set(err, errlen, "cookie 'rewrite', 'insert' and 'prefix' modes are "
		           "incompatible.");
		goto fail;
	}
	if ((tmp.cookie_opts & PX_CK_REWRITE) && (tmp.cookie_opts & PX_CK_INDIRECT)) {
		errmsg_set(err, errlen, "cookie 'rewrite' and 'indirect' modes are incompatible.");
		goto fail;
	}
	if ((tmp.cookie_opts & PX_CK_PRESERVE) &&
	    !(tmp.cookie_opts & (PX_CK_INSERT | PX_CK_INDIRECT))) {
		errmsg_set(err, errlen, "cookie 'preserve' requires at least 'insert' or 'indirect'.");
		goto fail;
	}
	if (set_str(&px->cookie_name, args[1], err, errlen) < 0)
		goto fail;
	free(px->cookie_domain);
	px->cookie_domain = tmp.cookie_domain;
	px->cookie_opts = tmp.cookie_opts;
	px->cookie_maxidle = tmp.cookie_maxidle;
	px->cookie_maxlife = tmp.cookie_maxlife;
	return 0;
fail:
	free(tmp.cookie_domain);
	return -1;
}

/* hash-type map-based|consistent [sdbm|djb2|wt6|crc32 [avalanche]]
 * Without a function, consistent hashing uses sdbm with avalanche, the
 * map-based sdbm alone (HAProxy's defaults). */
static int kw_hash_type(KW_ARGS)
{
	static const char *const fns[] = { "sdbm", "djb2", "wt6", "crc32" };
	enum lb_hash_type t;
	int fn = 0, aval;

	if (nargs < 2 || (strcmp(args[1], "consistent") && strcmp(args[1], "map-based")))
		return errmsg_set(err, errlen, "'hash-type' only supports 'consistent' and "
		                  "'map-based'.");
	t = strcmp(args[1], "consistent") == 0 ? LB_HASH_CONSISTENT : LB_HASH_MAP;
	aval = t == LB_HASH_CONSISTENT && nargs < 3;
	if (nargs > 2) {
		for (fn = 0; fn < 4 && strcmp(args[2], fns[fn]) != 0; fn++)
			;
		if (fn == 4)
			return errmsg_set(err, errlen, "'hash-type' only supports 'sdbm', 'djb2', "
			                  "'crc32', or 'wt6' hash functions.");
	}
	if (nargs > 3) {
		if (strcmp(args[3], "avalanche") != 0)
			return errmsg_set(err, errlen, "'hash-type' only supports 'avalanche' as a "
			                  "modifier for hash functions.");
		aval = 1;
	}
	if (cfg_no_more_args(args, nargs, 4, err, errlen) < 0)
		return -1;
	if (lb_hash_conf_set(ctx->px, (enum lb_hash_fn)fn, aval) < 0)
		return errmsg_set(err, errlen, "out of memory.");
	ctx->px->hash_type = t;
	return 0;
}

/* ---- for other modules ---- */

const struct http_errors_sets *http_cfg_errors_sets(void)
{
	return &err_sets;
}

void http_cfg_free(void)
{
	http_errors_sets_free(&err_sets);
	cur_set = NULL;
	while (kept_fmts) {
		struct kept_fmt *k = kept_fmts;

		kept_fmts = k->next;
		lf_free(&k->e);
		free(k);
	}
}

/* ---- after parsing ---- */

static const char *px_kind(const struct proxy *px)
{
	return (px->cap & PX_CAP_FE) && (px->cap & PX_CAP_BE) ? "listen" :
	       (px->cap & PX_CAP_FE) ? "frontend" : "backend";
}

/* Options that need HTTP, and the side of the proxy they belong to. */
static const struct { const char *name; unsigned int flag, cap; } http_only_opts[] = {
	{ "forwardfor", PX_O_FORWARDFOR, PX_CAP_FE | PX_CAP_BE },
	{ "originalto", PX_O_ORIGINALTO, PX_CAP_FE | PX_CAP_BE },
	{ "http-buffer-request", PX_O_HTTP_BUFFER_REQ, PX_CAP_FE | PX_CAP_BE },
	{ "http-ignore-probes", PX_O_HTTP_IGN_PROBES, PX_CAP_FE },
	{ "accept-invalid-http-request", PX_O_ACCEPT_INV_REQ, PX_CAP_FE },
	{ "accept-invalid-http-response", PX_O_ACCEPT_INV_RES, PX_CAP_BE },
};

/* A TCP proxy: HTTP-only settings are dropped with HAProxy's warnings,
 * `option httplog` falls back to tcplog and layer-7 hashing to round
 * robin. */
static void tcp_proxy_fallbacks(struct proxy *px)
{
	const char *kind = px_kind(px);

	if ((px->cap & PX_CAP_FE) && px->monitor_uri) {
		cfg_warning(px->conf_file, px->conf_line, "monitor-uri will be ignored for %s '%s' "
		            "(needs 'mode http').", kind, px->name);
		free(px->monitor_uri);
		px->monitor_uri = NULL;
	}
	if ((px->cap & PX_CAP_FE) && (px->options & PX_O_HTTPLOG) && !px->log_format) {
		cfg_warning(px->conf_file, px->conf_line, "'option %s' not usable with %s '%s' "
		            "(needs 'mode http'). Falling back to 'option tcplog'.",
		            (px->options & PX_O_HTTPSLOG) ? "httpslog" : "httplog", kind, px->name);
		px->options |= PX_O_TCPLOG;
	}
	px->options &= ~(PX_O_HTTPLOG | PX_O_HTTPLOG_CLF | PX_O_HTTPSLOG);
	for (size_t i = 0; i < sizeof(http_only_opts) / sizeof(http_only_opts[0]); i++) {
		if (!(px->options & http_only_opts[i].flag))
			continue;
		if (px->cap & http_only_opts[i].cap)
			cfg_warning(px->conf_file, px->conf_line, "'option %s' ignored for %s '%s' as it "
			            "requires HTTP mode.", http_only_opts[i].name, kind, px->name);
		px->options &= ~http_only_opts[i].flag;
	}
	if (!(px->cap & PX_CAP_BE))
		return;
	if (px->cookie_name) {
		cfg_warning(px->conf_file, px->conf_line, "cookie will be ignored for %s '%s' (needs "
		            "'mode http').", kind, px->name);
		free(px->cookie_name);
		px->cookie_name = NULL;
	}
	if (px->lb_algo == LB_URI || px->lb_algo == LB_URL_PARAM || px->lb_algo == LB_HDR) {
		cfg_warning(px->conf_file, px->conf_line, "Layer 7 hash not possible for %s '%s' "
		            "(needs 'mode http'). Falling back to round robin.", kind, px->name);
		px->lb_algo = LB_ROUNDROBIN;
	}
	for (int i = 0; i < px->nsrv; i++)
		if (px->srv[i]->cookie)
			cfg_warning(px->srv[i]->conf_file, px->srv[i]->conf_line, "%s '%s' : ignoring "
			            "cookie for server '%s' as HTTP mode is disabled.", kind, px->name,
			            px->srv[i]->name);
}

/* Runs before proxy.c compiles the log formats (order 10), so that a
 * fallback to tcplog is the format that gets compiled. */
static int http_cfg_tcp_check(void)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (px->mode == PX_MODE_TCP)
			tcp_proxy_fallbacks(px);
	}
	return 0;
}

static int is_hash_algo(enum lb_algo a)
{
	return a == LB_SOURCE || a == LB_URI || a == LB_URL_PARAM || a == LB_HDR;
}

static const struct proxy *resolving;

/* Warnings of http_errors_resolve(), naming the proxy as HAProxy does. */
static void resolve_warn(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void resolve_warn(const char *file, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cfg_warning(file, line, "proxy '%s' : %s.", resolving->name, msg);
}

/* Errorfiles imports, the unique-id format, the consistent-hash ring. */
static int http_cfg_finish_one(struct proxy *px)
{
	char err[512];
	int errors = 0;

	resolving = px;
	if (px->errors && http_errors_resolve(px->errors, &err_sets, resolve_warn, err,
	                                      sizeof(err)) < 0) {
		cfg_alert(px->conf_file, px->conf_line, "proxy '%s': %s.", px->name, err);
		errors++;
	}
	if ((px->cap & PX_CAP_FE) && px->unique_id_fmt_str && !px->unique_id_fmt) {
		px->unique_id_fmt = calloc(1, sizeof(*px->unique_id_fmt));
		if (!px->unique_id_fmt ||
		    lf_compile(px->unique_id_fmt_str, px->unique_id_fmt, err, sizeof(err)) < 0) {
			cfg_alert(px->unique_id_fmt_file, px->unique_id_fmt_line, "proxy '%s': failed to parse "
			          "unique-id-format : %s.", px->name, px->unique_id_fmt ? err :
			          "out of memory");
			free(px->unique_id_fmt);
			px->unique_id_fmt = NULL;
			errors++;
		}
	}
	if ((px->cap & PX_CAP_BE) && px->hash_type == LB_HASH_CONSISTENT &&
	    is_hash_algo(px->lb_algo) && lb_chash_init(px) < 0) {
		cfg_alert(px->conf_file, px->conf_line, "proxy '%s': out of memory for the "
		          "consistent hash ring.", px->name);
		errors++;
	}
	return errors;
}

static int http_cfg_finish(void)
{
	struct list *pos, *tmp;
	int errors = 0;

	list_for_each_safe(pos, tmp, &proxies)
		errors += http_cfg_finish_one(list_elem(pos, struct proxy, list));
	return errors;
}

static struct cfg_post_hook http_cfg_tcp_hook = { .fn = http_cfg_tcp_check, .order = 8 };
static struct cfg_post_hook http_cfg_finish_hook = { .fn = http_cfg_finish, .order = 15 };

__attribute__((constructor)) static void http_cfg_register(void)
{
	cfg_register_section(&http_errors_section);
	cfg_register_post(&http_cfg_tcp_hook);
	cfg_register_post(&http_cfg_finish_hook);
}
