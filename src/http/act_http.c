/* Actions that edit the HTTP message through msgedit.h: header fields
 * (set-header, add-header, del-header, replace-header, replace-value), the
 * request line (set-method, set-uri, set-path, set-pathq, set-query,
 * replace-uri, replace-path, replace-pathq) and the status line
 * (set-status).
 *
 * Values are rendered into stack buffers (ACT_FMT_MAX) and copied by the
 * edit into the message's arena; a value or a rewrite that does not fit is
 * a failed rewrite (act_rewrite_failed()). Regex replacements follow
 * HAProxy: the value must match somewhere, and the whole value becomes the
 * rendered format with \0..\9 replaced by the groups.
 */
#include <stdlib.h>
#include <string.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/regex.h>
#include <sluice/http/msgedit.h>
#include "act_int.h"

/* referenced by the registry module: see its anchor list */
const int http_act_http_anchor;

static int parse_hdr_fmt(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_del_hdr(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_replace_hdr(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_line_fmt(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_replace_line(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static int parse_set_status(struct act_rule *, struct proxy *, char **, int, char *, size_t);

static enum act_verdict exec_set_hdr(const struct act_rule *, struct act_env *);
static enum act_verdict exec_del_hdr(const struct act_rule *, struct act_env *);
static enum act_verdict exec_replace_hdr(const struct act_rule *, struct act_env *);
static enum act_verdict exec_set_line(const struct act_rule *, struct act_env *);
static enum act_verdict exec_replace_line(const struct act_rule *, struct act_env *);
static enum act_verdict exec_set_status(const struct act_rule *, struct act_env *);

static void free_edit(void *);

#define HTTP_ANY ACT_F_HTTP_ALL
#define REQ      ACT_F_HTTP_REQ
#define RES      (ACT_F_HTTP_RES | ACT_F_HTTP_AFTER)

static const struct act_kw http_kws[] = {
	{ "set-header",     HTTP_ANY, parse_hdr_fmt,      exec_set_hdr,      free_edit },
	{ "add-header",     HTTP_ANY, parse_hdr_fmt,      exec_set_hdr,      free_edit },
	{ "del-header",     HTTP_ANY, parse_del_hdr,      exec_del_hdr,      free_edit },
	{ "replace-header", HTTP_ANY, parse_replace_hdr,  exec_replace_hdr,  free_edit },
	{ "replace-value",  HTTP_ANY, parse_replace_hdr,  exec_replace_hdr,  free_edit },
	{ "set-method",     REQ,      parse_line_fmt,     exec_set_line,     free_edit },
	{ "set-uri",        REQ,      parse_line_fmt,     exec_set_line,     free_edit },
	{ "set-path",       REQ,      parse_line_fmt,     exec_set_line,     free_edit },
	{ "set-pathq",      REQ,      parse_line_fmt,     exec_set_line,     free_edit },
	{ "set-query",      REQ,      parse_line_fmt,     exec_set_line,     free_edit },
	{ "replace-uri",    REQ,      parse_replace_line, exec_replace_line, free_edit },
	{ "replace-path",   REQ,      parse_replace_line, exec_replace_line, free_edit },
	{ "replace-pathq",  REQ,      parse_replace_line, exec_replace_line, free_edit },
	{ "set-status",     RES,      parse_set_status,   exec_set_status,   free_edit },
	{ NULL }
};
ACT_REGISTER(http_kws)

/* What a line edit changes. */
enum line_part { LP_METHOD, LP_URI, LP_PATH, LP_PATHQ, LP_QUERY };

/* The compiled arguments of every action of this file. */
struct act_edit {
	char *name;                  /* header name */
	size_t name_len;
	struct act_fmt fmt;          /* value, replacement or new line part */
	struct regex *re;            /* replace-*, del-header -m reg */
	enum http_match match;       /* del-header */
	enum line_part part;
	int add;                     /* add-header (else set-header) */
	int per_value;               /* replace-value (else replace-header) */
	int status;                  /* set-status */
	char *reason;                /* set-status reason, NULL: canonical */
};

static void free_edit(void *arg)
{
	struct act_edit *a = arg;

	free(a->name);
	act_fmt_free(&a->fmt);
	regex_free(a->re);
	free(a->reason);
	free(a);
}

static struct act_edit *edit_new(struct act_rule *r, char *err, size_t errlen)
{
	struct act_edit *a = calloc(1, sizeof(*a));

	if (!a)
		errmsg_set(err, errlen, "out of memory");
	r->arg = a;
	return a;
}

/* RFC 9110 section 5.1: a field name is a token. */
static int set_name(struct act_edit *a, const char *name, char *err, size_t errlen)
{
	static const char tchar[] = "!#$%&'*+-.^_`|~";

	if (!*name)
		return errmsg_set(err, errlen, "empty header name");
	for (const char *p = name; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z') || strchr(tchar, *p)))
			return errmsg_set(err, errlen, "invalid character in header name '%s'", name);
	a->name = strdup(name);
	a->name_len = strlen(name);
	return a->name ? 0 : errmsg_set(err, errlen, "out of memory");
}

static struct ist name_of(const struct act_edit *a)
{
	return (struct ist){ a->name, a->name_len };
}

/* ------------------------------------------------------------------------ */
/* Header fields                                                             */
/* ------------------------------------------------------------------------ */

static int parse_hdr_fmt(struct act_rule *r, struct proxy *px, char **args, int nargs,
                         char *err, size_t errlen)
{
	struct act_edit *a = edit_new(r, err, errlen);

	if (!a)
		return -1;
	if (nargs != 2)
		return act_err_nargs(err, errlen, 2, "<name> <fmt>");
	a->add = !strcmp(r->kw->kw, "add-header");
	if (set_name(a, args[0], err, errlen) < 0)
		return -1;
	return act_fmt_parse(&a->fmt, args[1], r, err, errlen);
}

/* set-header renders before it deletes: the value may use the old field. */
static enum act_verdict exec_set_hdr(const struct act_rule *r, struct act_env *env)
{
	const struct act_edit *a = r->arg;
	struct http_edit *e = act_edit(env);
	char buf[ACT_FMT_MAX];
	struct ist v;
	int rc;

	if (!e)
		return ACT_V_CONTINUE;
	v.ptr = buf;
	v.len = act_fmt_render(&a->fmt, env, buf, sizeof(buf));
	rc = a->add ? http_hdr_add(e, name_of(a), v) : http_hdr_set(e, name_of(a), v);
	return rc < 0 ? act_rewrite_failed(env) : ACT_V_CONTINUE;
}

static int parse_del_hdr(struct act_rule *r, struct proxy *px, char **args, int nargs,
                         char *err, size_t errlen)
{
	static const struct { const char *name; enum http_match m; } methods[] = {
		{ "str", HTTP_MATCH_STR }, { "beg", HTTP_MATCH_BEG }, { "end", HTTP_MATCH_END },
		{ "sub", HTTP_MATCH_SUB }, { "reg", HTTP_MATCH_CB },
	};
	struct act_edit *a = edit_new(r, err, errlen);
	size_t i;

	if (!a)
		return -1;
	if (nargs != 1 && nargs != 3)
		return errmsg_set(err, errlen, "expects <name> [ -m <meth> ]");
	if (nargs == 3 && strcmp(args[1], "-m") != 0)
		return errmsg_set(err, errlen, "unexpected argument '%s' (expects '-m' <meth>)",
		                  args[1]);
	a->match = HTTP_MATCH_STR;
	for (i = 0; nargs == 3 && i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(args[2], methods[i].name))
			break;
	if (nargs == 3 && i == sizeof(methods) / sizeof(methods[0]))
		return errmsg_set(err, errlen, "-m with unsupported matching method '%s' "
		                  "(expects str, beg, end, sub or reg)", args[2]);
	if (nargs == 3)
		a->match = methods[i].m;
	if (a->match == HTTP_MATCH_CB) {
		/* HAProxy runs the regex, case-sensitive, on the lower-case
		 * name it stores: name_regex_match() lowers ours first */
		a->re = regex_compile(args[0], 0, err, errlen);
		return a->re ? 0 : -1;
	}
	a->name = strdup(args[0]);
	a->name_len = strlen(args[0]);
	return a->name ? 0 : errmsg_set(err, errlen, "out of memory");
}

/* Names keep their case in our messages; HAProxy's are lower-case, so "^x-"
 * matches X-Foo there and "^X-" matches nothing. A name too long for the
 * buffer (never seen in practice) is matched as it is. */
static int name_regex_match(void *arg, struct ist name)
{
	char low[1024];

	if (name.len > sizeof(low))
		return regex_match(arg, name.ptr, name.len);
	for (size_t i = 0; i < name.len; i++)
		low[i] = (name.ptr[i] >= 'A' && name.ptr[i] <= 'Z') ? (char)(name.ptr[i] + 32) :
		         name.ptr[i];
	return regex_match(arg, low, name.len);
}

static enum act_verdict exec_del_hdr(const struct act_rule *r, struct act_env *env)
{
	const struct act_edit *a = r->arg;
	struct http_edit *e = act_edit(env);

	if (!e)
		return ACT_V_CONTINUE;
	if (http_hdr_del(e, a->re ? IST("") : name_of(a), a->match, name_regex_match,
	                 a->re) < 0)
		return act_rewrite_failed(env);
	return ACT_V_CONTINUE;
}

static int parse_replace_hdr(struct act_rule *r, struct proxy *px, char **args, int nargs,
                             char *err, size_t errlen)
{
	struct act_edit *a = edit_new(r, err, errlen);

	if (!a)
		return -1;
	if (nargs != 3)
		return act_err_nargs(err, errlen, 3, "<name> <match-regex> <replace-fmt>");
	a->per_value = !strcmp(r->kw->kw, "replace-value");
	if (set_name(a, args[0], err, errlen) < 0)
		return -1;
	a->re = regex_compile(args[1], 0, err, errlen);
	if (!a->re)
		return -1;
	return act_fmt_parse(&a->fmt, args[2], r, err, errlen);
}

/* A rendered replacement and where the expansion goes. */
struct rewrite {
	const struct regex *re;
	const char *subst;
	size_t subst_len;
	char *out;
	size_t cap;
};

/* http_rewrite_fn: the whole value becomes the expansion when the regex
 * matches somewhere in it. */
static int rewrite_value(void *arg, struct http_edit *e, struct ist in, struct ist *out)
{
	struct rewrite *rw = arg;
	long ovec[2 * REGEX_MAX_GROUPS], len;
	int n = regex_match_groups(rw->re, in.ptr, in.len, 0, ovec, REGEX_MAX_GROUPS);

	if (n <= 0)
		return 0;
	len = regex_expand(rw->subst, rw->subst_len, in.ptr, ovec, n, rw->out, rw->cap);
	if (len < 0)
		return HTTP_EDIT_ENOROOM;
	*out = (struct ist){ rw->out, (size_t)len };
	return 1;
}

static enum act_verdict exec_replace_hdr(const struct act_rule *r, struct act_env *env)
{
	const struct act_edit *a = r->arg;
	struct http_edit *e = act_edit(env);
	char subst[ACT_FMT_MAX], out[ACT_FMT_MAX];
	struct rewrite rw = { a->re, subst, 0, out, sizeof(out) };
	int rc;

	if (!e)
		return ACT_V_CONTINUE;
	rw.subst_len = act_fmt_render(&a->fmt, env, subst, sizeof(subst));
	if (a->per_value)
		rc = http_hdr_replace_value(e, name_of(a), rewrite_value, &rw);
	else
		rc = http_hdr_replace_header(e, name_of(a), rewrite_value, &rw);
	return rc < 0 ? act_rewrite_failed(env) : ACT_V_CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* Request line                                                              */
/* ------------------------------------------------------------------------ */

static enum line_part part_of(const char *kw)
{
	if (!strcmp(kw, "set-method"))
		return LP_METHOD;
	if (!strcmp(kw, "set-path") || !strcmp(kw, "replace-path"))
		return LP_PATH;
	if (!strcmp(kw, "set-pathq") || !strcmp(kw, "replace-pathq"))
		return LP_PATHQ;
	if (!strcmp(kw, "set-query"))
		return LP_QUERY;
	return LP_URI;
}

static int parse_line_fmt(struct act_rule *r, struct proxy *px, char **args, int nargs,
                          char *err, size_t errlen)
{
	struct act_edit *a = edit_new(r, err, errlen);

	if (!a)
		return -1;
	if (nargs != 1)
		return act_err_nargs(err, errlen, 1, "<fmt>");
	a->part = part_of(r->kw->kw);
	return act_fmt_parse(&a->fmt, args[0], r, err, errlen);
}

static int set_line_part(struct http_edit *e, enum line_part part, struct ist v)
{
	switch (part) {
	case LP_METHOD: return http_set_method(e, v);
	case LP_PATH:   return http_set_path(e, v);
	case LP_PATHQ:  return http_set_pathq(e, v);
	case LP_QUERY:  return http_set_query(e, v);
	default:        return http_set_uri(e, v);
	}
}

static enum act_verdict exec_set_line(const struct act_rule *r, struct act_env *env)
{
	const struct act_edit *a = r->arg;
	struct http_edit *e = act_edit(env);
	char buf[ACT_FMT_MAX];
	struct ist v = { buf, 0 };

	if (!e || !env->msg->is_request)
		return ACT_V_CONTINUE;
	v.len = act_fmt_render(&a->fmt, env, buf, sizeof(buf));
	return set_line_part(e, a->part, v) < 0 ? act_rewrite_failed(env) : ACT_V_CONTINUE;
}

static int parse_replace_line(struct act_rule *r, struct proxy *px, char **args, int nargs,
                              char *err, size_t errlen)
{
	struct act_edit *a = edit_new(r, err, errlen);

	if (!a)
		return -1;
	if (nargs != 2)
		return act_err_nargs(err, errlen, 2, "<match-regex> <replace-fmt>");
	a->part = part_of(r->kw->kw);
	a->re = regex_compile(args[0], 0, err, errlen);
	if (!a->re)
		return -1;
	return act_fmt_parse(&a->fmt, args[1], r, err, errlen);
}

/* The part of the request-target a replace-* rule sees: the path alone,
 * the path and its query, or the whole target. */
static struct ist line_part_value(struct ist uri, enum line_part part)
{
	struct ist path = http_uri_path(uri);

	if (part == LP_PATH)
		return path;
	if (part == LP_PATHQ)
		return (struct ist){ path.ptr, (size_t)(uri.ptr + uri.len - path.ptr) };
	return uri;
}

static enum act_verdict exec_replace_line(const struct act_rule *r, struct act_env *env)
{
	const struct act_edit *a = r->arg;
	struct http_edit *e = act_edit(env);
	char subst[ACT_FMT_MAX], out[ACT_FMT_MAX];
	struct rewrite rw = { a->re, subst, 0, out, sizeof(out) };
	struct ist v;
	int rc;

	if (!e || !env->msg->is_request)
		return ACT_V_CONTINUE;
	rw.subst_len = act_fmt_render(&a->fmt, env, subst, sizeof(subst));
	rc = rewrite_value(&rw, e, line_part_value(env->msg->uri, a->part), &v);
	if (rc == 0)
		return ACT_V_CONTINUE;
	if (rc > 0)
		rc = set_line_part(e, a->part, v);
	return rc < 0 ? act_rewrite_failed(env) : ACT_V_CONTINUE;
}

/* ------------------------------------------------------------------------ */
/* Status line                                                               */
/* ------------------------------------------------------------------------ */

static int parse_set_status(struct act_rule *r, struct proxy *px, char **args, int nargs,
                            char *err, size_t errlen)
{
	struct act_edit *a = edit_new(r, err, errlen);
	char *end;
	long st;

	if (!a)
		return -1;
	if (nargs != 1 && nargs != 3)
		return errmsg_set(err, errlen, "expects <status> [ reason <str> ]");
	st = strtol(args[0], &end, 10);
	if (!*args[0] || *end || st < 100 || st > 999)
		return errmsg_set(err, errlen, "expects an integer status code between 100 and "
		                  "999, got '%s'", args[0]);
	a->status = (int)st;
	if (nargs == 1)
		return 0;
	if (strcmp(args[1], "reason") != 0)
		return errmsg_set(err, errlen, "unexpected argument '%s' (expects 'reason' <str>)",
		                  args[1]);
	for (const char *p = args[2]; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t')
			return errmsg_set(err, errlen, "control character in reason '%s'", args[2]);
	a->reason = strdup(args[2]);
	return a->reason ? 0 : errmsg_set(err, errlen, "out of memory");
}

static enum act_verdict exec_set_status(const struct act_rule *r, struct act_env *env)
{
	const struct act_edit *a = r->arg;
	struct http_edit *e = act_edit(env);
	struct ist reason = { a->reason, a->reason ? strlen(a->reason) : 0 };

	if (!e || env->msg->is_request)
		return ACT_V_CONTINUE;
	return http_set_status(e, a->status, reason) < 0 ? act_rewrite_failed(env) :
	       ACT_V_CONTINUE;
}
