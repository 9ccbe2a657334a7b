/* Actions that answer instead of the server: deny, tarpit, return and
 * redirect (HAProxy 2.6 manual, "http-request return" and "redirect").
 *
 * deny, tarpit and return share HAProxy's reply arguments:
 *   [status|deny_status <code>] [content-type <type>]
 *   [default-errorfiles | errorfile <file> | errorfiles <name> | file <file> |
 *    lf-file <file> | string <str> | lf-string <fmt>] [hdr <name> <fmt>]*
 * A reply made of constant parts is built once at configuration time
 * (errors.h); one with log-format parts is a dynamic reply whose formats are
 * rendered per request through act_lf_render() with the stream as context.
 *
 * return and redirect write the response into env->reply when the stream
 * gives one; in rule sets where it does not, they hand the same reply to
 * the stream as a deny with env->deny_reply (the bytes are what matters).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/http/errors.h>
#include <sluice/http/msgedit.h>
#include <sluice/http/txn.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stream.h>
#include "act_int.h"

/* referenced by the registry module: see its anchor list */
const int http_act_reply_anchor;

static int parse_reply(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_redirect(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static enum act_verdict exec_deny(const struct act_rule *, struct act_env *);
static enum act_verdict exec_return(const struct act_rule *, struct act_env *);
static enum act_verdict exec_redirect(const struct act_rule *, struct act_env *);
static void free_reply(void *);
static void free_redirect(void *);

static const struct act_kw reply_kws[] = {
	{ "deny",     ACT_F_HTTP_REQ | ACT_F_HTTP_RES, parse_reply, exec_deny, free_reply },
	{ "tarpit",   ACT_F_HTTP_REQ, parse_reply, exec_deny, free_reply },
	{ "return",   ACT_F_HTTP_REQ | ACT_F_HTTP_RES, parse_reply, exec_return, free_reply },
	{ "redirect", ACT_F_HTTP_REQ | ACT_F_HTTP_RES, parse_redirect, exec_redirect,
	  free_redirect },
	{ NULL }
};
ACT_REGISTER(reply_kws)

#define REPLY_MAX_HDRS 32

enum reply_kind {
	RK_NONE = 0,           /* nothing given: deny/tarpit use the errorfiles,
	                        * return a response with no payload */
	RK_DEFAULT_ERRORFILES,
	RK_ERRORFILE,
	RK_ERRORFILES,
	RK_FILE,
	RK_LF_FILE,
	RK_STRING,
	RK_LF_STRING,
};

static const char *const kind_words[] = {
	[RK_DEFAULT_ERRORFILES] = "default-errorfiles", [RK_ERRORFILE] = "errorfile",
	[RK_ERRORFILES] = "errorfiles", [RK_FILE] = "file", [RK_LF_FILE] = "lf-file",
	[RK_STRING] = "string", [RK_LF_STRING] = "lf-string",
};

struct act_reply {
	int status;
	enum reply_kind kind;
	char *arg;                   /* file name, set name or string as given */
	char *ctype;
	struct http_reply *reply;    /* built at configuration time (own reference) */
	/* formats a dynamic reply borrows: they live as long as the rule */
	struct act_fmt body;
	struct act_fmt hdr_fmt[REPLY_MAX_HDRS];
	char *hdr_name[REPLY_MAX_HDRS];
	int nhdrs;
};

static void free_reply(void *arg)
{
	struct act_reply *a = arg;

	http_reply_release(a->reply);
	act_fmt_free(&a->body);
	for (int i = 0; i < a->nhdrs; i++) {
		act_fmt_free(&a->hdr_fmt[i]);
		free(a->hdr_name[i]);
	}
	free(a->arg);
	free(a->ctype);
	free(a);
}

/* http_reply_fmt_fn of the dynamic replies: <ctx> is the stream. */
static ssize_t reply_fmt_render(const void *fmt, void *ctx, char *out, size_t room)
{
	const struct act_fmt *f = fmt;
	size_t n;

	if (!room)
		return -1;
	if (!f->lf) {
		if (f->len >= room)
			return -1;
		memcpy(out, f->text, f->len);
		return (ssize_t)f->len;
	}
	n = act_lf_render(ctx, f->lf, out, room);
	return n + 1 >= room ? -1 : (ssize_t)n;
}

/* ------------------------------------------------------------------------ */
/* Parsing the reply arguments                                               */
/* ------------------------------------------------------------------------ */

static int default_status(const struct act_rule *r)
{
	if (!strcmp(r->kw->kw, "return"))
		return 200;
	if (!strcmp(r->kw->kw, "tarpit"))
		return 500;
	return r->set == ACT_HTTP_RES ? 502 : 403;
}

static int parse_status_arg(const char *w, int *status, char *err, size_t errlen)
{
	char *end;
	long v = strtol(w, &end, 10);

	if (!*w || *end)
		v = 0;
	if (v < 200 || v > 599)
		return errmsg_set(err, errlen, "unexpected status code '%s' (200 to 599)", w);
	*status = (int)v;
	return 0;
}

/* Fields the reply writes itself are not taken from hdr (HAProxy ignores
 * them too, with the same warning). */
static int add_hdr(const struct act_rule *r, struct act_reply *a, const char *name,
                   const char *fmt, char *err, size_t errlen)
{
	static const char *const forbidden[] = { "content-length", "content-type",
	                                         "transfer-encoding", NULL };

	for (int i = 0; forbidden[i]; i++)
		if (!strcasecmp(name, forbidden[i])) {
			cfg_warning(r->file, r->line, "header '%s' always ignored by the http "
			            "reply.", name);
			return 0;
		}
	if (a->nhdrs >= REPLY_MAX_HDRS)
		return errmsg_set(err, errlen, "too many 'hdr' arguments (at most %d)",
		                  REPLY_MAX_HDRS);
	a->hdr_name[a->nhdrs] = strdup(name);
	if (!a->hdr_name[a->nhdrs])
		return errmsg_set(err, errlen, "out of memory");
	if (act_fmt_parse(&a->hdr_fmt[a->nhdrs], fmt, r, err, errlen) < 0) {
		free(a->hdr_name[a->nhdrs]);
		return -1;
	}
	a->nhdrs++;
	return 0;
}

static enum reply_kind kind_of(const char *w)
{
	for (size_t k = RK_DEFAULT_ERRORFILES; k <= RK_LF_STRING; k++)
		if (!strcmp(w, kind_words[k]))
			return (enum reply_kind)k;
	return RK_NONE;
}

/* One argument (and its value) at args[*i]. */
static int parse_reply_arg(const struct act_rule *r, struct act_reply *a, char **args,
                           int nargs, int *i, char *err, size_t errlen)
{
	const char *w = args[*i];
	int deny = strcmp(r->kw->kw, "return") != 0;
	int needs = strcmp(w, "hdr") ? 1 : 2;
	enum reply_kind k = kind_of(w);

	if (k == RK_NONE && strcmp(w, "status") && strcmp(w, "content-type") &&
	    strcmp(w, "hdr") && !(deny && !strcmp(w, "deny_status")))
		return errmsg_set(err, errlen, "unexpected argument '%s' (expects %sstatus, "
		                  "content-type, default-errorfiles, errorfile, errorfiles, file, "
		                  "lf-file, string, lf-string or hdr)", w,
		                  deny ? "deny_status, " : "");
	if (k == RK_DEFAULT_ERRORFILES)
		needs = 0;
	if (*i + needs >= nargs + (needs == 0))
		return errmsg_set(err, errlen, "'%s' expects %s", w,
		                  !strcmp(w, "hdr") ? "<name> and <value> as arguments" :
		                  strstr(w, "status") ? "<status_code> as argument" :
		                  "a value as argument");
	if (!strcmp(w, "status") || (deny && !strcmp(w, "deny_status"))) {
		*i += 2;
		return parse_status_arg(args[*i - 1], &a->status, err, errlen);
	}
	if (!strcmp(w, "content-type")) {
		free(a->ctype);
		a->ctype = strdup(args[*i + 1]);
		*i += 2;
		return a->ctype ? 0 : errmsg_set(err, errlen, "out of memory");
	}
	if (!strcmp(w, "hdr")) {
		*i += 3;
		return add_hdr(r, a, args[*i - 2], args[*i - 1], err, errlen);
	}
	if (a->kind != RK_NONE)
		return errmsg_set(err, errlen, "unexpected '%s' argument, '%s' already defined",
		                  w, kind_words[a->kind]);
	a->kind = k;
	*i += 1 + needs;
	if (!needs)
		return 0;
	a->arg = strdup(args[*i - 1]);
	return a->arg ? 0 : errmsg_set(err, errlen, "out of memory");
}

/* Reads a whole small file (a payload must fit in a buffer). */
static char *read_payload(const char *path, size_t *len, char *err, size_t errlen)
{
	size_t max = global.bufsize > 0 ? (size_t)global.bufsize : 16384;
	FILE *f = fopen(path, "r");
	char *p;

	if (!f) {
		errmsg_set(err, errlen, "error opening file '%s'", path);
		return NULL;
	}
	p = malloc(max + 1);
	*len = p ? fread(p, 1, max + 1, f) : 0;
	fclose(f);
	if (!p) {
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	if (*len > max) {
		free(p);
		errmsg_set(err, errlen, "file '%s' is larger than a buffer (%zu bytes)", path, max);
		return NULL;
	}
	p[*len] = '\0';
	return p;
}

/* The payload's text as an act_fmt (constant for file/string). */
static int load_body(const struct act_rule *r, struct act_reply *a, char *err, size_t errlen)
{
	char *text = a->arg;
	size_t len = strlen(a->arg);
	int rc;

	if (a->kind == RK_FILE || a->kind == RK_LF_FILE) {
		text = read_payload(a->arg, &len, err, errlen);
		if (!text)
			return -1;
		if (strlen(text) != len) {
			free(text);
			return errmsg_set(err, errlen, "file '%s' holds a NUL byte", a->arg);
		}
	}
	if (a->kind == RK_FILE || a->kind == RK_STRING) {
		memset(&a->body, 0, sizeof(a->body));
		a->body.text = strdup(text);
		a->body.len = len;
		rc = a->body.text ? 0 : errmsg_set(err, errlen, "out of memory");
	} else {
		rc = act_fmt_parse(&a->body, text, r, err, errlen);
	}
	if (text != a->arg)
		free(text);
	return rc;
}

/* Builds the reply once: static when every part is constant. */
static int build_reply(const struct act_rule *r, struct act_reply *a, char *err, size_t errlen)
{
	struct http_hdr fixed[REPLY_MAX_HDRS];
	struct http_reply_dyn_hdr dyn[REPLY_MAX_HDRS];
	size_t max = global.bufsize > 0 ? (size_t)global.bufsize : 16384;
	int nfixed = 0, ndyn = 0, has_body = a->body.len > 0 || a->body.lf;
	const char *ctype = has_body ? a->ctype : NULL;

	if (has_body && (a->status == 204 || a->status == 304))
		return errmsg_set(err, errlen, "no body expected for %d responses", a->status);
	if (has_body && !a->ctype)
		return errmsg_set(err, errlen, "a content type must be defined when non-empty "
		                  "payload is configured");
	for (int i = 0; i < a->nhdrs; i++) {
		struct ist name = { a->hdr_name[i], strlen(a->hdr_name[i]) };

		if (a->hdr_fmt[i].lf)
			dyn[ndyn++] = (struct http_reply_dyn_hdr){ name, &a->hdr_fmt[i] };
		else
			fixed[nfixed++] = (struct http_hdr){ name, { a->hdr_fmt[i].text,
			                                             a->hdr_fmt[i].len } };
	}
	if (!ndyn && !a->body.lf)
		a->reply = http_reply_build(a->status, ctype, a->body.text, a->body.len, fixed,
		                            nfixed, max, err, errlen);
	else
		a->reply = http_reply_build_dynamic(a->status, ctype, reply_fmt_render,
		                                    has_body ? &a->body : NULL, dyn, ndyn,
		                                    fixed, nfixed, err, errlen);
	if (a->reply)
		a->reply->refcnt = 1;
	return a->reply ? 0 : -1;
}

/* What the arguments ask for, once they are all read. */
static int finish_reply(const struct act_rule *r, struct act_reply *a, int deny,
                        char *err, size_t errlen)
{
	size_t max = global.bufsize > 0 ? (size_t)global.bufsize : 16384;
	int errorfile;

	/* deny/tarpit with nothing but a status mean the proxy's error page;
	 * with a content-type or hdr, an empty reply (as HAProxy does) */
	if (deny && a->kind == RK_NONE && !a->ctype && !a->nhdrs)
		a->kind = RK_DEFAULT_ERRORFILES;
	errorfile = a->kind == RK_DEFAULT_ERRORFILES || a->kind == RK_ERRORFILE ||
	            a->kind == RK_ERRORFILES;
	if (a->ctype && (errorfile || a->kind == RK_NONE))
		cfg_warning(r->file, r->line, "content-type '%s' ignored by the http reply because "
		            "neither errorfile nor payload defined.", a->ctype);
	if (a->nhdrs && errorfile)
		cfg_warning(r->file, r->line, "hdr parameters ignored by the http reply when used "
		            "with an errorfile.");
	if ((a->kind == RK_DEFAULT_ERRORFILES || a->kind == RK_ERRORFILES) &&
	    http_err_slot(a->status) < 0)
		return errmsg_set(err, errlen, "status code '%d' not handled by default with "
		                  "'%s' argument", a->status, kind_words[a->kind]);
	switch (a->kind) {
	case RK_DEFAULT_ERRORFILES:
		return 0;
	case RK_ERRORFILES:
		return errmsg_set(err, errlen, "'errorfiles %s': http-errors sections cannot be "
		                  "used by rules yet; use 'errorfile <file>'", a->arg);
	case RK_ERRORFILE:
		a->reply = http_reply_load_file(a->arg, max, err, errlen);
		if (a->reply)
			a->reply->refcnt = 1;
		return a->reply ? 0 : -1;
	case RK_NONE:
		break;
	default:
		if (load_body(r, a, err, errlen) < 0)
			return -1;
	}
	return build_reply(r, a, err, errlen);
}

static int parse_reply(struct act_rule *r, struct proxy *px, char **args, int nargs,
                       char *err, size_t errlen)
{
	struct act_reply *a = calloc(1, sizeof(*a));
	int deny = strcmp(r->kw->kw, "return") != 0;

	if (!a)
		return errmsg_set(err, errlen, "out of memory");
	r->arg = a;
	a->status = default_status(r);
	for (int i = 0; i < nargs; )
		if (parse_reply_arg(r, a, args, nargs, &i, err, errlen) < 0)
			return -1;
	return finish_reply(r, a, deny, err, errlen);
}

/* ------------------------------------------------------------------------ */
/* deny, tarpit, return                                                      */
/* ------------------------------------------------------------------------ */

static enum act_verdict exec_deny(const struct act_rule *r, struct act_env *env)
{
	const struct act_reply *a = r->arg;

	env->status = a->status;
	env->deny_reply = a->reply;   /* NULL: the proxy's page for the status */
	return strcmp(r->kw->kw, "tarpit") ? ACT_V_DENY : ACT_V_TARPIT;
}

/* The errorfile the proxies configure for <status>, else the built-in. */
static const struct http_reply *proxy_reply(struct act_env *env, int status)
{
	const struct http_errors *be = NULL, *fe = NULL;

	if (env->s) {
		be = env->s->be ? env->s->be->errors : NULL;
		fe = env->s->fe ? env->s->fe->errors : NULL;
	} else if (env->px) {
		fe = env->px->errors;
	}
	return http_errors_find(be, fe, status);
}

static enum act_verdict exec_return(const struct act_rule *r, struct act_env *env)
{
	const struct act_reply *a = r->arg;
	const struct http_reply *rep = a->reply ? a->reply : proxy_reply(env, a->status);
	ssize_t n;

	env->status = a->status;
	if (!rep)
		return ACT_V_ERROR;
	if (!env->reply) {
		env->deny_reply = rep;
		return ACT_V_DENY;
	}
	if (rep->flags & HTTP_REPLY_F_EMPTY)
		return ACT_V_REJECT;   /* an empty errorfile: close, send nothing */
	n = http_reply_render(rep, env->s, buf_tail(env->reply), buf_room(env->reply));
	if (n < 0)
		return ACT_V_ERROR;
	env->reply->data += (size_t)n;
	/* whether the connection lives on is the stream's to read from the
	 * reply's head (Connection: close, a body ended by the close): an
	 * HTTP/1.0 errorfile goes out with keep-alive, as in HAProxy */
	return ACT_V_REPLY;
}

/* ------------------------------------------------------------------------ */
/* redirect                                                                  */
/* ------------------------------------------------------------------------ */

enum redirect_type { RD_NONE = 0, RD_LOCATION, RD_PREFIX, RD_SCHEME };

struct act_redirect {
	enum redirect_type type;
	struct act_fmt target;
	int code;
	int drop_query, append_slash, ignore_empty;
	char *cookie;                /* Set-Cookie value, NULL: none */
	struct http_reply *reply;    /* response rules without a reply buffer */
};

static void free_redirect(void *arg)
{
	struct act_redirect *d = arg;

	act_fmt_free(&d->target);
	http_reply_release(d->reply);
	free(d->cookie);
	free(d);
}

static int redirect_cookie(struct act_redirect *d, const char *v, int clear, char *err,
                           size_t errlen)
{
	free(d->cookie);
	if (asprintf(&d->cookie, clear ? "%s; path=/; Max-Age=0;" : "%s; path=/;", v) < 0)
		d->cookie = NULL;
	return d->cookie ? 0 : errmsg_set(err, errlen, "out of memory");
}

/* The legacy `redirect` keyword takes its target literally: '%' is
 * escaped so that the log-format compiler leaves it as it is. */
static int redirect_target(const struct act_rule *r, struct act_redirect *d, const char *v,
                           char *err, size_t errlen)
{
	char buf[4096];
	size_t o = 0;

	act_fmt_free(&d->target);
	if (!(r->flags & ACT_RULE_F_LEGACY))
		return act_fmt_parse(&d->target, v, r, err, errlen);
	for (; *v && o + 2 < sizeof(buf); v++) {
		if (*v == '%')
			buf[o++] = '%';
		buf[o++] = *v;
	}
	if (*v)
		return errmsg_set(err, errlen, "redirect target too long");
	buf[o] = '\0';
	return act_fmt_parse(&d->target, buf, r, err, errlen);
}

static int redirect_arg(const struct act_rule *r, struct act_redirect *d, char **args,
                        int nargs, int *i, char *err, size_t errlen)
{
	static const char *const types[] = { "", "location", "prefix", "scheme" };
	const char *w = args[*i];
	int t, has_val = *i + 1 < nargs;

	for (t = RD_LOCATION; t <= RD_SCHEME; t++)
		if (!strcmp(w, types[t]))
			break;
	if (!strcmp(w, "drop-query") || !strcmp(w, "append-slash") ||
	    !strcmp(w, "ignore-empty")) {
		*(w[0] == 'd' ? &d->drop_query : w[0] == 'a' ? &d->append_slash :
		  &d->ignore_empty) = 1;
		(*i)++;
		return 0;
	}
	if (t > RD_SCHEME && strcmp(w, "code") && strcmp(w, "set-cookie") &&
	    strcmp(w, "clear-cookie"))
		return errmsg_set(err, errlen, "expects 'code', 'prefix', 'location', 'scheme', "
		                  "'set-cookie', 'clear-cookie', 'drop-query', 'ignore-empty' or "
		                  "'append-slash' (was '%s')", w);
	if (!has_val)
		return errmsg_set(err, errlen, "missing argument for '%s'", w);
	*i += 2;
	if (t <= RD_SCHEME) {
		d->type = (enum redirect_type)t;
		return redirect_target(r, d, args[*i - 1], err, errlen);
	}
	if (strcmp(w, "code") == 0) {
		d->code = atoi(args[*i - 1]);
		if (d->code != 301 && d->code != 302 && d->code != 303 && d->code != 307 &&
		    d->code != 308)
			return errmsg_set(err, errlen, "'code': unsupported HTTP code '%s' (must be "
			                  "one of 301, 302, 303, 307 or 308)", args[*i - 1]);
		return 0;
	}
	return redirect_cookie(d, args[*i - 1], w[0] == 'c', err, errlen);
}

/* Response rules without a reply buffer: a dynamic reply whose Location
 * is the format (only "location" redirects exist on responses). */
static int redirect_build_reply(struct act_redirect *d, char *err, size_t errlen)
{
	struct http_hdr fixed[2];
	struct http_reply_dyn_hdr loc = { IST("Location"), &d->target };
	int n = 0;

	if (d->code == 302 || d->code == 303 || d->code == 307)
		fixed[n++] = (struct http_hdr){ IST("Cache-Control"), IST("no-cache") };
	if (d->cookie)
		fixed[n++] = (struct http_hdr){ IST("Set-Cookie"),
		                                { d->cookie, strlen(d->cookie) } };
	d->reply = http_reply_build_dynamic(d->code, NULL, reply_fmt_render, NULL, &loc, 1,
	                                    fixed, n, err, errlen);
	if (d->reply)
		d->reply->refcnt = 1;
	return d->reply ? 0 : -1;
}

static int parse_redirect(struct act_rule *r, struct proxy *px, char **args, int nargs,
                          char *err, size_t errlen)
{
	struct act_redirect *d = calloc(1, sizeof(*d));

	if (!d)
		return errmsg_set(err, errlen, "out of memory");
	r->arg = d;
	d->code = 302;
	for (int i = 0; i < nargs; )
		if (redirect_arg(r, d, args, nargs, &i, err, errlen) < 0)
			return -1;
	if (d->type == RD_NONE)
		return errmsg_set(err, errlen, "redirection type expected ('prefix', 'location', "
		                  "or 'scheme')");
	if (r->set != ACT_HTTP_REQ && d->type != RD_LOCATION)
		return errmsg_set(err, errlen, "response only supports redirect type 'location'");
	return r->set == ACT_HTTP_REQ ? 0 : redirect_build_reply(d, err, errlen);
}

/* Appends <len> bytes to the location being built. 0, or -1 if too long. */
static int loc_put(char *loc, size_t *n, size_t cap, const char *p, size_t len)
{
	if (*n + len >= cap)
		return -1;
	memcpy(loc + *n, p, len);
	*n += len;
	return 0;
}

/* prefix / scheme: the request's path (and query unless drop-query). */
static int loc_add_path(const struct act_redirect *d, const struct http_msg *m, char *loc,
                        size_t *n, size_t cap)
{
	struct ist uri = m->uri, path = http_uri_path(uri);
	size_t len = (size_t)(uri.ptr + uri.len - path.ptr);
	int rc;

	if (d->drop_query)
		len = path.len;
	if (d->type == RD_SCHEME && (!len || (len == 1 && path.ptr[0] == '*')))
		return loc_put(loc, n, cap, "/", 1);
	rc = loc_put(loc, n, cap, path.ptr, len);
	return rc;
}

/* The Location value; 0 with *n its length, 1 to skip the rule, -1 on
 * failure. */
static int build_location(const struct act_redirect *d, struct act_env *env, char *loc,
                          size_t cap, size_t *n)
{
	const struct http_msg *m = env->msg;
	struct ist host;

	*n = act_fmt_render(&d->target, env, loc, cap);
	if (!*n && d->ignore_empty)
		return 1;
	if (d->type == RD_LOCATION)
		return 0;
	if (!m || !m->is_request)
		return -1;
	if (d->type == RD_PREFIX && *n == 1 && loc[0] == '/')
		*n = 0;   /* "/" is the same site: no prefix */
	if (d->type == RD_SCHEME) {
		if (loc_put(loc, n, cap, "://", 3) < 0)
			return -1;
		if (http_hdr_occ(m, IST("host"), 1, 0, &host) &&
		    loc_put(loc, n, cap, host.ptr, host.len) < 0)
			return -1;
	}
	if (loc_add_path(d, m, loc, n, cap) < 0)
		return -1;
	if (d->append_slash && (!*n || loc[*n - 1] != '/') && loc_put(loc, n, cap, "/", 1) < 0)
		return -1;
	return 0;
}

/* Same fields as HAProxy: Content-Length, Location, Cache-Control for the
 * temporary codes, Set-Cookie. */
static int write_redirect(const struct act_redirect *d, struct act_env *env,
                          const char *loc, size_t n)
{
	char head[256];
	/* redirects name 302 "Found" (RFC 9110), unlike set-status: as HAProxy */
	int len = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Length: 0\r\n"
	                   "Location: ", d->code,
	                   d->code == 302 ? "Found" : http_status_reason(d->code));
	size_t safe = 0;

	while (safe < n && loc[safe] != '\r' && loc[safe] != '\n')
		safe++;
	if (act_reply_put(env, head, (size_t)len) < 0 || act_reply_put(env, loc, safe) < 0 ||
	    act_reply_put(env, "\r\n", 2) < 0)
		return -1;
	if ((d->code == 302 || d->code == 303 || d->code == 307) &&
	    act_reply_put(env, "Cache-Control: no-cache\r\n", 25) < 0)
		return -1;
	if (d->cookie && (act_reply_put(env, "Set-Cookie: ", 12) < 0 ||
	                  act_reply_put(env, d->cookie, strlen(d->cookie)) < 0 ||
	                  act_reply_put(env, "\r\n", 2) < 0))
		return -1;
	return act_reply_put(env, "\r\n", 2);
}

static enum act_verdict exec_redirect(const struct act_rule *r, struct act_env *env)
{
	const struct act_redirect *d = r->arg;
	char loc[ACT_FMT_MAX];
	size_t n, mark;
	int rc = build_location(d, env, loc, sizeof(loc), &n);

	if (rc > 0)
		return ACT_V_CONTINUE;
	if (rc < 0)
		return ACT_V_ERROR;
	env->status = d->code;
	if (r->set != ACT_HTTP_REQ && env->s && env->s->txn)
		env->s->txn->flags |= TX_F_SRV_CLOSE;   /* nothing more from the server */
	if (!env->reply) {
		env->deny_reply = d->reply;
		return d->reply ? ACT_V_DENY : ACT_V_ERROR;
	}
	mark = env->reply->data;
	if (write_redirect(d, env, loc, n) < 0) {
		env->reply->data = mark;
		return ACT_V_ERROR;
	}
	return ACT_V_REPLY;
}
