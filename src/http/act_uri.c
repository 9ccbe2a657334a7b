/* http-request normalize-uri (HAProxy 2.6 manual, "http-request
 * normalize-uri"; RFC 3986 section 6.2.2).
 *
 * Each normalizer rewrites one part of the request-target into a stack
 * buffer, then the target is replaced as a whole (http_set_uri()) when it
 * changed. Path normalizers see the path without its query; the percent
 * normalizers see the path and the query, as HAProxy's do; "strict"
 * variants answer 400 when they meet an invalid %-sequence.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sluice/core/errmsg.h>
#include <sluice/http/msgedit.h>
#include <sluice/core/hexdigit.h>
#include "act_int.h"

/* referenced by the registry module: see its anchor list */
const int http_act_uri_anchor;

static int parse_normalize(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static enum act_verdict exec_normalize(const struct act_rule *, struct act_env *);

static const struct act_kw uri_kws[] = {
	{ "normalize-uri", ACT_F_HTTP_REQ, parse_normalize, exec_normalize },
	{ NULL }
};
ACT_REGISTER(uri_kws)

enum normalizer {
	NU_MERGE_SLASHES, NU_STRIP_DOT, NU_STRIP_DOTDOT, NU_DECODE_UNRESERVED,
	NU_TO_UPPERCASE, NU_SORT_QUERY, NU_FRAGMENT_STRIP, NU_FRAGMENT_ENCODE,
};

static const struct {
	const char *name;
	const char *option;          /* its optional word, or NULL */
} normalizers[] = {
	[NU_MERGE_SLASHES]     = { "path-merge-slashes", NULL },
	[NU_STRIP_DOT]         = { "path-strip-dot", NULL },
	[NU_STRIP_DOTDOT]      = { "path-strip-dotdot", "full" },
	[NU_DECODE_UNRESERVED] = { "percent-decode-unreserved", "strict" },
	[NU_TO_UPPERCASE]      = { "percent-to-uppercase", "strict" },
	[NU_SORT_QUERY]        = { "query-sort-by-name", NULL },
	[NU_FRAGMENT_STRIP]    = { "fragment-strip", NULL },
	[NU_FRAGMENT_ENCODE]   = { "fragment-encode", NULL },
};

#define NU_COUNT (sizeof(normalizers) / sizeof(normalizers[0]))
#define NU_OPTION 0x100              /* "full" or "strict" given */
#define NU_INVALID (-2)              /* strict: invalid %-sequence */
#define NU_MAX_PARAMS 256            /* query-sort-by-name: more are left alone */

static int parse_normalize(struct act_rule *r, struct proxy *px, char **args, int nargs,
                           char *err, size_t errlen)
{
	size_t i;

	if (nargs < 1)
		return errmsg_set(err, errlen, "expects a normalizer name");
	for (i = 0; i < NU_COUNT; i++)
		if (!strcmp(args[0], normalizers[i].name))
			break;
	if (i == NU_COUNT)
		return errmsg_set(err, errlen, "unknown normalizer '%s' (expects "
		                  "path-merge-slashes, path-strip-dot, path-strip-dotdot [full], "
		                  "percent-decode-unreserved [strict], percent-to-uppercase "
		                  "[strict], query-sort-by-name, fragment-strip or "
		                  "fragment-encode)", args[0]);
	if (nargs == 1) {
		r->arg = (void *)i;
		return 0;
	}
	if (nargs == 2 && normalizers[i].option && !strcmp(args[1], normalizers[i].option)) {
		r->arg = (void *)(i | NU_OPTION);
		return 0;
	}
	return errmsg_set(err, errlen, "unexpected argument '%s' after '%s'%s%s%s", args[1],
	                  args[0], normalizers[i].option ? " (only '" : "",
	                  normalizers[i].option ? normalizers[i].option : "",
	                  normalizers[i].option ? "' may follow)" : "");
}

/* ------------------------------------------------------------------------ */
/* Normalizers: <in> to <out>; the length, -1 if it does not fit, NU_INVALID */
/* ------------------------------------------------------------------------ */

struct out {
	char *p;
	size_t n, cap;
};

static int put(struct out *o, const char *p, size_t len)
{
	if (o->n + len > o->cap)
		return -1;
	memcpy(o->p + o->n, p, len);
	o->n += len;
	return 0;
}

static int merge_slashes(struct ist in, struct out *o)
{
	for (size_t i = 0; i < in.len; i++)
		if (!(in.ptr[i] == '/' && i && in.ptr[i - 1] == '/') && put(o, in.ptr + i, 1) < 0)
			return -1;
	return 0;
}

/* Next segment after the '/' at <*pos>; *pos moves to the next '/' or end. */
static struct ist next_segment(struct ist in, size_t *pos)
{
	size_t start = ++*pos;

	while (*pos < in.len && in.ptr[*pos] != '/')
		(*pos)++;
	return (struct ist){ in.ptr + start, *pos - start };
}

static int is_seg(struct ist s, const char *lit)
{
	return s.len == strlen(lit) && memcmp(s.ptr, lit, s.len) == 0;
}

/* "/./" segments go; a final "/." leaves the trailing slash. */
static int strip_dot(struct ist in, struct out *o)
{
	size_t pos = 0;

	if (!in.len || in.ptr[0] != '/')
		return put(o, in.ptr, in.len);
	while (pos < in.len) {
		struct ist seg = next_segment(in, &pos);

		if (!is_seg(seg, ".")) {
			if (put(o, "/", 1) < 0 || put(o, seg.ptr, seg.len) < 0)
				return -1;
		} else if (pos >= in.len && put(o, "/", 1) < 0) {
			return -1;
		}
	}
	if (!o->n)
		return put(o, "/", 1);
	return 0;
}

/* Drops the last segment written ("/seg"); 0 if there is none to drop
 * (nothing written, or it is a ".." kept at the root). */
static int pop_segment(struct out *o)
{
	size_t n = o->n;

	if (!n)
		return 0;
	while (n && o->p[n - 1] != '/')
		n--;
	if (o->n - n == 2 && !memcmp(o->p + n, "..", 2))
		return 0;
	o->n = n ? n - 1 : 0;
	return 1;
}

/* "seg/.." pairs merge; a ".." with nothing to cancel stays (or goes with
 * "full"); a final ".." leaves the trailing slash. */
static int strip_dotdot(struct ist in, struct out *o, int full)
{
	size_t pos = 0;

	if (!in.len || in.ptr[0] != '/')
		return put(o, in.ptr, in.len);
	while (pos < in.len) {
		struct ist seg = next_segment(in, &pos);
		int last = pos >= in.len;

		if (!is_seg(seg, "..")) {
			if (put(o, "/", 1) < 0 || put(o, seg.ptr, seg.len) < 0)
				return -1;
			continue;
		}
		if (!pop_segment(o) && !full && put(o, "/..", 3) < 0)
			return -1;
		if (last && put(o, "/", 1) < 0)
			return -1;
	}
	if (!o->n)
		return put(o, "/", 1);
	return 0;
}

/* RFC 3986 section 2.3 */
static int is_unreserved(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

/* percent-decode-unreserved (<upper> 0) or percent-to-uppercase (1). */
static int percent_pass(struct ist in, struct out *o, int upper, int strict)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < in.len; i++) {
		int hi, lo;
		char c;

		if (in.ptr[i] != '%') {
			if (put(o, in.ptr + i, 1) < 0)
				return -1;
			continue;
		}
		hi = i + 1 < in.len ? hex_digit_value(in.ptr[i + 1]) : -1;
		lo = i + 2 < in.len ? hex_digit_value(in.ptr[i + 2]) : -1;
		if (hi < 0 || lo < 0) {
			if (strict)
				return NU_INVALID;
			if (put(o, "%", 1) < 0)
				return -1;
			continue;
		}
		c = (char)(hi * 16 + lo);
		if (!upper && is_unreserved((unsigned char)c)) {
			if (put(o, &c, 1) < 0)
				return -1;
		} else {
			char enc[3] = { '%', upper ? hex[hi] : in.ptr[i + 1],
			                upper ? hex[lo] : in.ptr[i + 2] };

			if (put(o, enc, 3) < 0)
				return -1;
		}
		i += 2;
	}
	return 0;
}

/* Parameter names compare as byte strings, a shorter prefix first; the
 * sort is stable (insertion), so equal names keep their order. */
static size_t param_name_len(struct ist p)
{
	const char *eq = memchr(p.ptr, '=', p.len);

	return eq ? (size_t)(eq - p.ptr) : p.len;
}

static int param_cmp(struct ist a, struct ist b)
{
	size_t la = param_name_len(a), lb = param_name_len(b);
	int c = memcmp(a.ptr, b.ptr, la < lb ? la : lb);

	return c ? c : (la > lb) - (la < lb);
}

static int sort_query(struct ist in, struct out *o)
{
	struct ist params[NU_MAX_PARAMS];
	size_t n = 0, start = 0;

	for (size_t i = 0; i <= in.len; i++) {
		if (i < in.len && in.ptr[i] != '&')
			continue;
		if (n == NU_MAX_PARAMS)
			return put(o, in.ptr, in.len);
		params[n++] = (struct ist){ in.ptr + start, i - start };
		start = i + 1;
	}
	for (size_t i = 1; i < n; i++) {
		struct ist cur = params[i];
		size_t j = i;

		while (j && param_cmp(params[j - 1], cur) > 0) {
			params[j] = params[j - 1];
			j--;
		}
		params[j] = cur;
	}
	for (size_t i = 0; i < n; i++)
		if ((i && put(o, "&", 1) < 0) || put(o, params[i].ptr, params[i].len) < 0)
			return -1;
	return 0;
}

static int fragment_encode(struct ist in, struct out *o)
{
	for (size_t i = 0; i < in.len; i++)
		if (put(o, in.ptr[i] == '#' ? "%23" : in.ptr + i, in.ptr[i] == '#' ? 3 : 1) < 0)
			return -1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The action                                                                */
/* ------------------------------------------------------------------------ */

/* Rewrites the part of <uri> the normalizer works on into <o>: the URI up
 * to that part, the part rewritten, and what follows it. */
static int normalize(enum normalizer nu, int opt, struct ist uri, struct out *o)
{
	struct ist path = http_uri_path(uri), part;
	const char *end = uri.ptr + uri.len, *hash;
	int rc;

	switch (nu) {
	case NU_SORT_QUERY:
		part = http_uri_query(uri);
		if (!part.ptr)
			return put(o, uri.ptr, uri.len);
		hash = memchr(part.ptr, '#', part.len);
		if (hash)
			part.len = (size_t)(hash - part.ptr);
		break;
	case NU_DECODE_UNRESERVED:
	case NU_TO_UPPERCASE:
	case NU_FRAGMENT_ENCODE:
		part = (struct ist){ path.ptr, (size_t)(end - path.ptr) };
		break;
	case NU_FRAGMENT_STRIP:
		hash = memchr(uri.ptr, '#', uri.len);
		return put(o, uri.ptr, hash ? (size_t)(hash - uri.ptr) : uri.len);
	default:
		part = path;
	}
	if (put(o, uri.ptr, (size_t)(part.ptr - uri.ptr)) < 0)
		return -1;
	switch (nu) {
	case NU_MERGE_SLASHES:     rc = merge_slashes(part, o); break;
	case NU_STRIP_DOT:         rc = strip_dot(part, o); break;
	case NU_STRIP_DOTDOT:      rc = strip_dotdot(part, o, opt); break;
	case NU_DECODE_UNRESERVED: rc = percent_pass(part, o, 0, opt); break;
	case NU_TO_UPPERCASE:      rc = percent_pass(part, o, 1, opt); break;
	case NU_SORT_QUERY:        rc = sort_query(part, o); break;
	default:                   rc = fragment_encode(part, o); break;
	}
	if (rc < 0)
		return rc;
	return put(o, part.ptr + part.len, (size_t)(end - part.ptr - part.len));
}

static enum act_verdict exec_normalize(const struct act_rule *r, struct act_env *env)
{
	unsigned long v = (unsigned long)r->arg;
	struct http_edit *e = act_edit(env);
	char buf[ACT_FMT_MAX];
	struct out o = { buf, 0, sizeof(buf) };
	struct ist uri;
	int rc;

	if (!e || !env->msg->is_request)
		return ACT_V_CONTINUE;
	uri = env->msg->uri;
	if (!uri.len || uri.ptr[0] == '*')
		return ACT_V_CONTINUE;
	rc = normalize((enum normalizer)(v & 0xff), (v & NU_OPTION) != 0, uri, &o);
	if (rc == NU_INVALID) {
		env->status = 400;
		env->deny_reply = NULL;
		return ACT_V_DENY;
	}
	if (rc < 0)
		return act_rewrite_failed(env);
	if (o.n == uri.len && !memcmp(buf, uri.ptr, o.n))
		return ACT_V_CONTINUE;
	return http_set_uri(e, (struct ist){ buf, o.n }) < 0 ? act_rewrite_failed(env) :
	       ACT_V_CONTINUE;
}
