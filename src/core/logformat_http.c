/* log-format, the HTTP half: the variables only an HTTP transaction has
 * (request line and its parts, status, HTTP timers, request date, header and
 * cookie captures, cookie termination state) and %[sample] expressions.
 * Output is byte for byte HAProxy 2.6's (configuration manual, sections
 * 8.2.3, 8.2.6, 8.4, 8.5 and 8.6), checked against its binary.
 *
 * On a TCP stream (log_fields.is_http == 0) these variables print what
 * HAProxy prints without a transaction: "<BADREQ>" for the request line and
 * its parts, 0 for the status, -1 for the HTTP timers, "-" for cookies, no
 * captures at all, and the accept date as request date.
 *
 * Nothing here allocates: a sample lands in the thread's scratch buffers.
 */
#include <ctype.h>
#include <string.h>

#include <sluice/core/log.h>
#include <sluice/core/logtext.h>
#include <sluice/expr/sample.h>
#include "logformat_int.h"

#define LF_BADREQ "<BADREQ>"

/* ---- encoding (manual section 8.6) ---- */

/* Which characters become "#XX": outside 32..126, '"' and '#' everywhere;
 * also '{', '|' and '}' in header captures, where they delimit values. */
enum lf_enc { LF_ENC_URL, LF_ENC_HDR };

static int lf_must_encode(unsigned char c, enum lf_enc map)
{
	if (c < 32 || c >= 127 || c == '"' || c == '#')
		return 1;
	return map == LF_ENC_HDR && (c == '{' || c == '|' || c == '}');
}

/* <len> bytes of <s> (up to a NUL), encoded; with E, '\' and ']' (and '"'
 * were it not already encoded) get a backslash, as HAProxy does. Nothing,
 * not "-", when empty. */
static void out_encoded(struct lf_out *o, const struct lf_node *n, const char *s, size_t len,
                        enum lf_enc map)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const char *end = s + len; s < end && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (lf_must_encode(c, map)) {
			out_char(o, '#');
			out_char(o, hex[c >> 4]);
			out_char(o, hex[c & 15]);
			continue;
		}
		if ((n->options & LF_OPT_ESCAPE) && (c == '\\' || c == ']'))
			out_char(o, '\\');
		out_char(o, (char)c);
	}
}

/* A part of the request line, quoted with Q. */
static void out_req_part(struct lf_out *o, const struct lf_node *n, const char *s, size_t len)
{
	if (n->options & LF_OPT_QUOTE)
		out_char(o, '"');
	out_encoded(o, n, s, len, LF_ENC_URL);
	if (n->options & LF_OPT_QUOTE)
		out_char(o, '"');
}

static void out_badreq(struct lf_out *o, const struct lf_node *n)
{
	out_req_part(o, n, LF_BADREQ, sizeof(LF_BADREQ) - 1);
}

/* ---- the request line: "METHOD SP URI SP VERSION" ---- */

/* The request line as [*p, *end), or 0 when there is none. */
static int req_line(const struct log_fields *f, const char **p, const char **end)
{
	if (!f->is_http || !f->req_line)
		return 0;
	*p = f->req_line;
	*end = f->req_line + strnlen(f->req_line, f->req_line_len);
	return 1;
}

static int is_spht(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_token(const char *p, const char *end)
{
	while (p < end && !is_spht(*p))
		p++;
	return p;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_spht(*p))
		p++;
	return p;
}

/* The URI: after the method and the blanks that follow it. NULL when the
 * line has no blank (HAProxy prints <BADREQ> then). */
static const char *req_uri(const char *p, const char *end)
{
	const char *blanks = skip_token(p, end), *uri = skip_blanks(blanks, end);

	return uri == blanks ? NULL : uri;
}

static void r_request(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	const char *p, *end;

	if (!req_line(f, &p, &end))
		out_badreq(o, n);
	else
		out_req_part(o, n, p, (size_t)(end - p));
}

static void r_method(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	const char *p, *end, *spc;

	if (!req_line(f, &p, &end) || (spc = skip_token(p, end)) == end)
		out_badreq(o, n);
	else
		out_req_part(o, n, p, (size_t)(spc - p));
}

/* %HU: the URI as received, up to the next blank. */
static void r_uri(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	const char *p, *end, *uri;

	if (!req_line(f, &p, &end) || !(uri = req_uri(p, end)))
		out_badreq(o, n);
	else
		out_req_part(o, n, uri, (size_t)(skip_token(uri, end) - uri));
}

/* %HP: the URI up to its query string (an absolute URI keeps its scheme and
 * authority). */
static void r_path(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	const char *p, *end, *uri, *stop;

	if (!req_line(f, &p, &end) || !(uri = req_uri(p, end))) {
		out_badreq(o, n);
		return;
	}
	for (stop = uri; stop < end && *stop != '?' && !is_spht(*stop); stop++)
		;
	out_req_part(o, n, uri, (size_t)(stop - uri));
}

/* The path of a URI (RFC 3986 section 3.3), without its query: itself for
 * the origin form, after "scheme://authority" for the absolute form, none
 * for "*" and for the authority form of CONNECT. As HAProxy, the authority
 * ends at the first '/' only. Sets [*p, *end) to an empty span if none. */
static void uri_path(const char **p, const char **end)
{
	const char *s = *p, *e = *end, *q;

	if (s == e || (e - s == 1 && *s == '*')) {
		*end = s;
		return;
	}
	if (*s != '/') {
		if (!isalpha((unsigned char)*s))
			goto none;
		for (q = s + 1; q < e && (isalnum((unsigned char)*q) || *q == '+' || *q == '-' ||
		                          *q == '.'); q++)
			;
		if (e - q < 3 || memcmp(q, "://", 3) != 0)
			goto none;
		for (q += 3; q < e && *q != '/'; q++)
			;
		s = q;
	}
	for (q = s; q < e && *q != '?'; q++)
		;
	*p = s;
	*end = q;
	return;
none:
	*end = s;
}

/* %HPO: the path only, without scheme, authority or query. */
static void r_path_only(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	const char *p, *end, *uri, *uri_end;

	if (!req_line(f, &p, &end) || !(uri = req_uri(p, end))) {
		out_badreq(o, n);
		return;
	}
	uri_end = skip_token(uri, end);
	uri_path(&uri, &uri_end);
	out_req_part(o, n, uri, (size_t)(uri_end - uri));
}

/* %HQ: from the first '?' of the line to the next blank, '?' included;
 * nothing without one. */
static void r_query(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	const char *p, *end, *q;

	if (!req_line(f, &p, &end)) {
		out_badreq(o, n);
		return;
	}
	q = memchr(p, '?', (size_t)(end - p));
	if (!q)
		q = end;
	out_req_part(o, n, q, (size_t)(skip_token(q, end) - q));
}

/* %HV: what follows the URI; a line without one is HTTP/0.9. */
static void r_version(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	const char *p, *end, *v;

	if (!req_line(f, &p, &end)) {
		out_badreq(o, n);
		return;
	}
	v = skip_blanks(skip_token(skip_blanks(skip_token(p, end), end), end), end);
	if (v == end)
		out_req_part(o, n, "HTTP/0.9", 8);
	else
		out_req_part(o, n, v, (size_t)(end - v));
}

/* ---- captures, cookies, status ---- */

/* %hr %hs: "{v1|v2}", an absent header leaving its slot empty; nothing at
 * all without captures. */
static void out_caps_braces(struct lf_out *o, const struct lf_node *n,
                            const char *const *caps, int ncaps)
{
	if (!caps || ncaps <= 0)
		return;
	if (n->options & LF_OPT_QUOTE)
		out_char(o, '"');
	out_char(o, '{');
	for (int i = 0; i < ncaps; i++) {
		if (i)
			out_char(o, '|');
		if (caps[i])
			out_encoded(o, n, caps[i], strlen(caps[i]), LF_ENC_HDR);
	}
	out_char(o, '}');
	if (n->options & LF_OPT_QUOTE)
		out_char(o, '"');
}

/* %hrl %hsl: the values separated by spaces, "-" (or "" with Q) for an
 * absent header. */
static void out_caps_list(struct lf_out *o, const struct lf_node *n,
                          const char *const *caps, int ncaps)
{
	int quote = n->options & LF_OPT_QUOTE;

	if (!caps)
		return;
	for (int i = 0; i < ncaps; i++) {
		if (i)
			out_char(o, ' ');
		if (quote)
			out_char(o, '"');
		if (caps[i])
			out_encoded(o, n, caps[i], strlen(caps[i]), LF_ENC_HDR);
		else if (!quote)
			out_char(o, '-');
		if (quote)
			out_char(o, '"');
	}
}

static void r_req_caps(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	if (f->is_http)
		out_caps_braces(o, n, f->req_caps, f->nreq_caps);
}

static void r_res_caps(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	if (f->is_http)
		out_caps_braces(o, n, f->res_caps, f->nres_caps);
}

static void r_req_caps_list(struct lf_out *o, const struct lf_node *n,
                            const struct log_fields *f)
{
	if (f->is_http)
		out_caps_list(o, n, f->req_caps, f->nreq_caps);
}

static void r_res_caps_list(struct lf_out *o, const struct lf_node *n,
                            const struct log_fields *f)
{
	if (f->is_http)
		out_caps_list(o, n, f->res_caps, f->nres_caps);
}

static void r_cookie_cli(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	lf_out_text(o, n, f->is_http ? f->cookie_cli : NULL);
}

static void r_cookie_srv(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	lf_out_text(o, n, f->is_http ? f->cookie_srv : NULL);
}

/* %tsc: the two termination characters, then the two persistence cookie
 * ones (section 8.5), '-' for each one not set. */
static void r_term_cookie(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	const char *ck = f->is_http ? f->cookie_term : "--";

	out_char(o, f->term[0] ? f->term[0] : '-');
	out_char(o, f->term[0] && f->term[1] ? f->term[1] : '-');
	out_char(o, ck[0] ? ck[0] : '-');
	out_char(o, ck[0] && ck[1] ? ck[1] : '-');
}

/* A TCP stream has no transaction, whose status HAProxy would print: 0. */
static void r_status(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	out_int(o, f->is_http ? f->status : 0);
}

/* ---- timers and the request date (section 8.4) ---- */

static void r_Tq(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	out_int(o, f->is_http ? f->Tq : -1);
}

static void r_TR(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	out_int(o, f->is_http ? f->TR : -1);
}

static void r_Ti(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	out_int(o, f->is_http ? f->Ti : -1);
}

static void r_Tr(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	out_int(o, f->is_http ? f->Tr : -1);
}

/* Ta: the request's active time; without a request it is the whole
 * session, as in HAProxy where Ta = Tt - (Th + Ti) with Ti unset. */
static void r_Ta(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	if (f->logasap)
		out_char(o, '+');
	out_int(o, f->is_http ? f->Ta : f->Tt);
}

/* The first byte of the request came Th + Ti after the accept; without a
 * request (Ti unset) HAProxy prints the accept date. */
static int64_t request_us(const struct log_fields *f)
{
	if (!f->is_http || f->Ti < 0)
		return f->accept_us;
	return f->accept_us + ((int64_t)f->Ti + (f->Th > 0 ? f->Th : 0)) * 1000;
}

static void r_req_date(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	lf_out_date(o, n, request_us(f), LF_D_CLF_MS);
}

static void r_req_date_gmt(struct lf_out *o, const struct lf_node *n,
                           const struct log_fields *f)
{
	lf_out_date(o, n, request_us(f), LF_D_GMT);
}

static void r_req_date_local(struct lf_out *o, const struct lf_node *n,
                             const struct log_fields *f)
{
	lf_out_date(o, n, request_us(f), LF_D_LOCAL);
}

/* ---- %[sample] ---- */

/* As a string variable: quoted with Q, escaped with E, "-" when there is no
 * result or an empty one. Integers and addresses print in their text form
 * (the engine's cast to string), a binary sample up to its first NUL. */
void lf_render_sample(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	struct sample smp;

	if (f->smp && sample_expr_eval_as(n->expr, f->smp, SMP_T_STR, &smp))
		lf_out_text_len(o, n, smp.data.str.ptr, smp.data.str.len);
	else
		lf_out_text_len(o, n, NULL, 0);
}

/* ---- the table ---- */

#define LF_HTTP(name, fn)  { name, LF_K_CUSTOM, 0, LF_F_HTTP_ONLY, fn }
#define LF_ANY(name, fn)   { name, LF_K_CUSTOM, 0, 0, fn }
#define LF_CAPS(name, fn)  { name, LF_K_CUSTOM, 0, LF_F_MAY_SKIP, fn }

/* HTTP_ONLY: the ones HAProxy 2.6 refuses in a TCP proxy ("reserved for
 * HTTP mode"); the others are accepted there and print their TCP value. */
const struct lf_var_def lf_http_vars[] = {
	LF_HTTP("CC",  r_cookie_cli),
	LF_HTTP("CS",  r_cookie_srv),
	LF_HTTP("HM",  r_method),
	LF_HTTP("HP",  r_path),
	LF_HTTP("HPO", r_path_only),
	LF_HTTP("HQ",  r_query),
	LF_HTTP("HU",  r_uri),
	LF_HTTP("HV",  r_version),
	LF_ANY("ST",   r_status),
	LF_HTTP("Ta",  r_Ta),
	LF_HTTP("Ti",  r_Ti),
	LF_HTTP("Tq",  r_Tq),
	LF_HTTP("TR",  r_TR),
	LF_HTTP("Tr",  r_Tr),
	LF_CAPS("hr",  r_req_caps),
	LF_CAPS("hrl", r_req_caps_list),
	LF_CAPS("hs",  r_res_caps),
	LF_CAPS("hsl", r_res_caps_list),
	LF_HTTP("r",   r_request),
	LF_HTTP("tr",  r_req_date),
	LF_HTTP("trg", r_req_date_gmt),
	LF_HTTP("trl", r_req_date_local),
	LF_ANY("tsc",  r_term_cookie),
};

const size_t lf_http_nvars = sizeof(lf_http_vars) / sizeof(lf_http_vars[0]);
