/* HTTP sample fetches (manual section 7.3.6): they read the parsed message
 * model (struct http_msg) the context points to, never wire syntax.
 *
 * Header values. A field line's value may hold a comma-separated list:
 * hdr()/req.hdr()/res.hdr() and hdr_cnt() see each element (trimmed, empty
 * ones kept, commas inside "quoted strings" protected), fhdr() and
 * fhdr_cnt() see whole lines. <occ>: n > 0 the n-th value from the first,
 * n < 0 the n-th from the last, 0 or absent: the last one, or every one in
 * turn when an ACL iterates (SMP_OPT_ITERATE). Without a name, every header
 * is considered.
 *
 * A message not parsed yet makes the fetch fail with SMP_F_MAY_CHANGE (an
 * ACL then waits), unless the context is final. A header slot with an
 * empty name was deleted by an edit and is skipped everywhere (msg.h).
 * No shared state.
 */
#include <arpa/inet.h>
#include <string.h>
#include <strings.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/hash.h>
#include <sluice/expr/sample.h>

const int expr_fetch_http_anchor;

#define F(name) static int smp_fetch_##name(const struct smp_args *args, \
	struct sample *smp, struct smp_ctx *ctx)

F(hdr); F(req_hdr); F(res_hdr); F(req_fhdr); F(res_fhdr);
F(req_hdr_cnt); F(res_hdr_cnt); F(req_fhdr_cnt); F(res_fhdr_cnt);
F(req_hdr_val); F(res_hdr_val); F(req_hdr_ip); F(res_hdr_ip); F(req_hdrs);
F(res_hdrs); F(req_hdr_names); F(res_hdr_names); F(method); F(path);
F(pathq); F(url); F(query); F(base); F(baseq); F(req_ver); F(res_ver);
F(status); F(req_cook); F(res_cook); F(req_cook_cnt); F(res_cook_cnt);
F(req_cook_val); F(url_param); F(urlp_val); F(req_body); F(req_body_len);
F(req_body_size); F(res_body); F(res_body_len); F(first_req); F(proto_http);
F(auth_type); F(auth_user); F(auth_pass); F(auth_bearer); F(base32); F(base32_src);
F(url32); F(url32_src); F(url_ip); F(url_port); F(body_param); F(res_cook_val);
F(cookie);
#undef F

#define HRQ SMP_USE_HRQHV
#define HRS SMP_USE_HRSHV

static const struct smp_fetch_kw http_fetches[] = {
	/* the side the rule set works on; hdr_cnt() and the hdr* ACLs are
	 * about the request only (manual, "hdr") */
	{ "hdr",          smp_fetch_hdr,          { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_STR, SMP_USE_HDRS },
	{ "req.hdr",      smp_fetch_req_hdr,      { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_STR, HRQ },
	{ "res.hdr",      smp_fetch_res_hdr,      { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_STR, HRS },
	{ "shdr",         smp_fetch_res_hdr,      { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_STR, HRS },
	{ "req.fhdr",     smp_fetch_req_fhdr,     { ARGT_STR, ARGT_SINT }, 1, NULL, SMP_T_STR, HRQ },
	{ "res.fhdr",     smp_fetch_res_fhdr,     { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_STR, HRS },
	{ "hdr_cnt",      smp_fetch_req_hdr_cnt,  { ARGT_STR }, 0, NULL, SMP_T_SINT, HRQ },
	{ "req.hdr_cnt",  smp_fetch_req_hdr_cnt,  { ARGT_STR }, 0, NULL, SMP_T_SINT, HRQ },
	{ "res.hdr_cnt",  smp_fetch_res_hdr_cnt,  { ARGT_STR }, 0, NULL, SMP_T_SINT, HRS },
	{ "shdr_cnt",     smp_fetch_res_hdr_cnt,  { ARGT_STR }, 0, NULL, SMP_T_SINT, HRS },
	{ "req.fhdr_cnt", smp_fetch_req_fhdr_cnt, { ARGT_STR }, 0, NULL, SMP_T_SINT, HRQ },
	{ "res.fhdr_cnt", smp_fetch_res_fhdr_cnt, { ARGT_STR }, 0, NULL, SMP_T_SINT, HRS },
	{ "hdr_val",      smp_fetch_req_hdr_val,  { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_SINT, HRQ },
	{ "req.hdr_val",  smp_fetch_req_hdr_val,  { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_SINT, HRQ },
	{ "res.hdr_val",  smp_fetch_res_hdr_val,  { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_SINT, HRS },
	{ "shdr_val",     smp_fetch_res_hdr_val,  { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_SINT, HRS },
	{ "hdr_ip",       smp_fetch_req_hdr_ip,   { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_ADDR, HRQ },
	{ "req.hdr_ip",   smp_fetch_req_hdr_ip,   { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_ADDR, HRQ },
	{ "res.hdr_ip",   smp_fetch_res_hdr_ip,   { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_ADDR, HRS },
	{ "shdr_ip",      smp_fetch_res_hdr_ip,   { ARGT_STR, ARGT_SINT }, 0, NULL, SMP_T_ADDR, HRS },
	{ "req.hdrs",     smp_fetch_req_hdrs,     { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "res.hdrs",     smp_fetch_res_hdrs,     { 0 }, 0, NULL, SMP_T_STR, HRS },
	{ "req.hdr_names", smp_fetch_req_hdr_names, { ARGT_STR }, 0, NULL, SMP_T_STR, HRQ },
	{ "res.hdr_names", smp_fetch_res_hdr_names, { ARGT_STR }, 0, NULL, SMP_T_STR, HRS },
	{ "method",       smp_fetch_method,       { 0 }, 0, NULL, SMP_T_METH, SMP_USE_HRQHP },
	{ "path",         smp_fetch_path,         { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "pathq",        smp_fetch_pathq,        { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "url",          smp_fetch_url,          { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "query",        smp_fetch_query,        { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "base",         smp_fetch_base,         { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "baseq",        smp_fetch_baseq,        { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "req.ver",      smp_fetch_req_ver,      { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "req_ver",      smp_fetch_req_ver,      { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "res.ver",      smp_fetch_res_ver,      { 0 }, 0, NULL, SMP_T_STR, HRS },
	{ "resp_ver",     smp_fetch_res_ver,      { 0 }, 0, NULL, SMP_T_STR, HRS },
	{ "status",       smp_fetch_status,       { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_HRSHP },
	{ "cook",         smp_fetch_req_cook,     { ARGT_STR }, 0, NULL, SMP_T_STR, HRQ },
	{ "req.cook",     smp_fetch_req_cook,     { ARGT_STR }, 0, NULL, SMP_T_STR, HRQ },
	{ "res.cook",     smp_fetch_res_cook,     { ARGT_STR }, 0, NULL, SMP_T_STR, HRS },
	{ "scook",        smp_fetch_res_cook,     { ARGT_STR }, 0, NULL, SMP_T_STR, HRS },
	{ "cook_cnt",     smp_fetch_req_cook_cnt, { ARGT_STR }, 0, NULL, SMP_T_SINT, HRQ },
	{ "req.cook_cnt", smp_fetch_req_cook_cnt, { ARGT_STR }, 0, NULL, SMP_T_SINT, HRQ },
	{ "res.cook_cnt", smp_fetch_res_cook_cnt, { ARGT_STR }, 0, NULL, SMP_T_SINT, HRS },
	{ "scook_cnt",    smp_fetch_res_cook_cnt, { ARGT_STR }, 0, NULL, SMP_T_SINT, HRS },
	{ "cook_val",     smp_fetch_req_cook_val, { ARGT_STR }, 0, NULL, SMP_T_SINT, HRQ },
	{ "req.cook_val", smp_fetch_req_cook_val, { ARGT_STR }, 0, NULL, SMP_T_SINT, HRQ },
	{ "url_param",    smp_fetch_url_param,    { ARGT_STR, ARGT_STR }, 0, NULL, SMP_T_STR, HRQ },
	{ "urlp",         smp_fetch_url_param,    { ARGT_STR, ARGT_STR }, 0, NULL, SMP_T_STR, HRQ },
	{ "urlp_val",     smp_fetch_urlp_val,     { ARGT_STR, ARGT_STR }, 0, NULL, SMP_T_SINT, HRQ },
	{ "req.body",     smp_fetch_req_body,     { 0 }, 0, NULL, SMP_T_BIN, SMP_USE_HRQBO },
	{ "req.body_len", smp_fetch_req_body_len, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_HRQBO },
	{ "req.body_size", smp_fetch_req_body_size, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_HRQBO },
	{ "res.body",     smp_fetch_res_body,     { 0 }, 0, NULL, SMP_T_BIN, SMP_USE_HRSBO },
	{ "res.body_len", smp_fetch_res_body_len, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_HRSBO },
	{ "http_first_req", smp_fetch_first_req,  { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_HRQHP },
	{ "req.proto_http", smp_fetch_proto_http, { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_HRQHP },
	{ "req_proto_http", smp_fetch_proto_http, { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_HRQHP },
	{ "res.cook_val", smp_fetch_res_cook_val, { ARGT_STR }, 0, NULL, SMP_T_SINT, HRS },
	{ "scook_val",    smp_fetch_res_cook_val, { ARGT_STR }, 0, NULL, SMP_T_SINT, HRS },
	/* deprecated: the request's cookie, or the response's once it is there */
	{ "cookie",       smp_fetch_cookie,       { ARGT_STR }, 0, NULL, SMP_T_STR, HRQ },
	{ "http_auth_type", smp_fetch_auth_type,  { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "http_auth_user", smp_fetch_auth_user,  { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "http_auth_pass", smp_fetch_auth_pass,  { 0 }, 0, NULL, SMP_T_STR, HRQ },
	{ "http_auth_bearer", smp_fetch_auth_bearer, { ARGT_STR }, 0, NULL, SMP_T_STR, HRQ },
	{ "base32",       smp_fetch_base32,       { 0 }, 0, NULL, SMP_T_SINT, HRQ },
	{ "base32+src",   smp_fetch_base32_src,   { 0 }, 0, NULL, SMP_T_BIN, HRQ | SMP_USE_L4CLI },
	{ "url32",        smp_fetch_url32,        { 0 }, 0, NULL, SMP_T_SINT, HRQ },
	{ "url32+src",    smp_fetch_url32_src,    { 0 }, 0, NULL, SMP_T_BIN, HRQ | SMP_USE_L4CLI },
	{ "url_ip",       smp_fetch_url_ip,       { 0 }, 0, NULL, SMP_T_ADDR, HRQ },
	{ "url_port",     smp_fetch_url_port,     { 0 }, 0, NULL, SMP_T_SINT, HRQ },
	{ "req.body_param", smp_fetch_body_param, { ARGT_STR }, 0, NULL, SMP_T_STR, SMP_USE_HRQBO },
	{ NULL }
};
SMP_REGISTER_FETCHES(http_fetches)

/* ------------------------------------------------------------------ messages */

/* The message of side <dir>, or NULL with MAY_CHANGE set (not parsed yet). */
static const struct http_msg *get_msg(struct sample *smp, struct smp_ctx *ctx, enum smp_dir dir)
{
	const struct http_msg *m = dir == SMP_DIR_REQ ? ctx->req : ctx->res;

	if (!m)
		smp->flags |= SMP_F_MAY_CHANGE;
	return m;
}

static int ist_ieq(struct ist a, const char *b, size_t blen)
{
	return a.len == blen && strncasecmp(a.ptr, b, blen) == 0;
}

static struct ist trim_ows(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return (struct ist){ p, (size_t)(e - p) };
}

/* End of the list element starting at <p>: the next comma outside a quoted
 * string (RFC 9110 section 5.6.4, with its backslash quoted-pairs). */
static const char *elem_end(const char *p, const char *e)
{
	int q = 0;

	for (; p < e; p++) {
		if (q && *p == '\\' && p + 1 < e)
			p++;
		else if (*p == '"')
			q = !q;
		else if (*p == ',' && !q)
			return p;
	}
	return e;
}

/* Walks the values of header <name> (every header when <nlen> is 0):
 * calls back value number 1, 2... until <want> is reached (0: all, to
 * count). Returns the number of values seen; *out holds the last one. */
static int hdr_walk(const struct http_msg *m, const char *name, size_t nlen, int full,
                    int want, struct ist *out)
{
	int n = 0;

	for (int i = 0; i < m->nhdrs; i++) {
		const struct http_hdr *h = &m->hdrs[i];
		const char *p, *e;

		if (!h->name.len || (nlen && !ist_ieq(h->name, name, nlen)))
			continue;           /* deleted by an edit (msg.h), or another name */
		if (full) {
			*out = h->value;
			if (++n == want)
				return n;
			continue;
		}
		p = h->value.ptr;
		e = p + h->value.len;
		for (;;) {
			const char *c = elem_end(p, e);

			*out = trim_ows(p, c);
			if (++n == want)
				return n;
			if (c == e)
				break;
			p = c + 1;
		}
	}
	return n;
}

/* Shared body of hdr()/fhdr(): iter.i[0] is the next value to report when
 * iterating. */
static int fetch_hdr(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                     enum smp_dir dir, int full)
{
	const struct http_msg *m = get_msg(smp, ctx, dir);
	const char *name = args->n > 0 ? args->a[0].data.str.ptr : NULL;
	size_t nlen = args->n > 0 ? args->a[0].data.str.len : 0;
	int64_t occ = args->n > 1 && args->a[1].type == ARGT_SINT ? args->a[1].data.sint : 0;
	struct ist v = { NULL, 0 };
	int total, want;

	if (!m)
		return 0;
	smp->flags &= ~SMP_F_NOT_LAST;
	if (!occ && (smp->opt & SMP_OPT_ITERATE)) {
		total = hdr_walk(m, name, nlen, full, 0, &v);
		want = (int)smp->iter.i[0] + 1;
		if (want > total)
			return 0;
		hdr_walk(m, name, nlen, full, want, &v);
		smp->iter.i[0] = want;
		if (want < total)
			smp->flags |= SMP_F_NOT_LAST;
	} else {
		/* HAProxy 2.6 gives nothing for a nameless header without <occ> */
		if (!occ && !nlen)
			return 0;
		total = hdr_walk(m, name, nlen, full, 0, &v);
		if (!occ)
			occ = -1;
		want = occ > 0 ? (occ > total ? -1 : (int)occ) : (-occ > total ? -1 : total + (int)occ + 1);
		if (want <= 0)
			return 0;
		hdr_walk(m, name, nlen, full, want, &v);
	}
	smp_set_const_str(smp, SMP_T_STR, v.ptr, v.len);
	return 1;
}

static int fetch_hdr_cnt(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                         enum smp_dir dir, int full)
{
	const struct http_msg *m = get_msg(smp, ctx, dir);
	struct ist v;

	if (!m)
		return 0;
	smp_set_sint(smp, hdr_walk(m, args->n > 0 ? args->a[0].data.str.ptr : NULL,
	                           args->n > 0 ? args->a[0].data.str.len : 0, full, 0, &v));
	return 1;
}

static int smp_fetch_hdr(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr(args, smp, ctx, ctx->dir, 0);
}

static int smp_fetch_req_hdr(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr(args, smp, ctx, SMP_DIR_REQ, 0);
}

static int smp_fetch_res_hdr(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr(args, smp, ctx, SMP_DIR_RES, 0);
}

static int smp_fetch_req_fhdr(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr(args, smp, ctx, SMP_DIR_REQ, 1);
}

static int smp_fetch_res_fhdr(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr(args, smp, ctx, SMP_DIR_RES, 1);
}

static int smp_fetch_req_hdr_cnt(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr_cnt(args, smp, ctx, SMP_DIR_REQ, 0);
}

static int smp_fetch_res_hdr_cnt(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr_cnt(args, smp, ctx, SMP_DIR_RES, 0);
}

static int smp_fetch_req_fhdr_cnt(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr_cnt(args, smp, ctx, SMP_DIR_REQ, 1);
}

static int smp_fetch_res_fhdr_cnt(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr_cnt(args, smp, ctx, SMP_DIR_RES, 1);
}

static int fetch_hdr_val(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                         enum smp_dir dir)
{
	int ret = fetch_hdr(args, smp, ctx, dir, 0);

	if (ret > 0)
		ret = smp_cast(smp, SMP_T_SINT);
	return ret;
}

static int smp_fetch_req_hdr_val(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr_val(args, smp, ctx, SMP_DIR_REQ);
}

static int smp_fetch_res_hdr_val(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr_val(args, smp, ctx, SMP_DIR_RES);
}

/* An address as X-Forwarded-For carries it: IPv4 (optionally ":port", which
 * is dropped) or IPv6 (RFC 7239 forms "[v6]" and "[v6]:port" too). */
static int parse_hdr_ip(struct sample *smp)
{
	char buf[64];
	const char *p = smp->data.str.ptr;
	size_t len = smp->data.str.len;
	struct in_addr a4;
	struct in6_addr a6;
	const char *colon;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, p, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, &a6) == 1)
		goto v6;
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close || (close[1] && close[1] != ':'))
			return 0;
		*close = '\0';
		if (inet_pton(AF_INET6, buf + 1, &a6) == 1)
			goto v6;
		return 0;
	}
	colon = strchr(buf, ':');
	if (colon) {
		int64_t port;

		if (!smp_str_to_sint(colon + 1, strlen(colon + 1), &port) || port < 0 ||
		    port > 65535)
			return 0;
		buf[colon - buf] = '\0';
	}
	if (inet_pton(AF_INET, buf, &a4) != 1)
		return 0;
	smp->type = SMP_T_IPV4;
	smp->data.ipv4 = a4;
	return 1;
v6:
	smp->type = SMP_T_IPV6;
	smp->data.ipv6 = a6;
	return 1;
}

static int fetch_hdr_ip(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                        enum smp_dir dir)
{
	if (!fetch_hdr(args, smp, ctx, dir, 0))
		return 0;
	return parse_hdr_ip(smp);
}

static int smp_fetch_req_hdr_ip(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr_ip(args, smp, ctx, SMP_DIR_REQ);
}

static int smp_fetch_res_hdr_ip(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr_ip(args, smp, ctx, SMP_DIR_RES);
}

/* All the fields as "name: value\r\n" lines, then the empty line. */
static int fetch_hdrs(struct sample *smp, struct smp_ctx *ctx, enum smp_dir dir)
{
	const struct http_msg *m = get_msg(smp, ctx, dir);

	if (!m)
		return 0;
	smp_set_trash(smp, SMP_T_STR);
	for (int i = 0; i < m->nhdrs; i++)
		if (m->hdrs[i].name.len &&
		    (!smp_str_append(smp, m->hdrs[i].name.ptr, m->hdrs[i].name.len) ||
		    !smp_str_append(smp, ": ", 2) ||
		     !smp_str_append(smp, m->hdrs[i].value.ptr, m->hdrs[i].value.len) ||
		     !smp_str_append(smp, "\r\n", 2)))
			return 0;
	return smp_str_append(smp, "\r\n", 2);
}

static int smp_fetch_req_hdrs(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdrs(smp, ctx, SMP_DIR_REQ);
}

static int smp_fetch_res_hdrs(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdrs(smp, ctx, SMP_DIR_RES);
}

static int fetch_hdr_names(const struct smp_args *args, struct sample *smp,
                           struct smp_ctx *ctx, enum smp_dir dir)
{
	const struct http_msg *m = get_msg(smp, ctx, dir);
	char delim = args->n > 0 && args->a[0].data.str.len ? args->a[0].data.str.ptr[0] : ',';

	if (!m)
		return 0;
	smp_set_trash(smp, SMP_T_STR);
	for (int i = 0, n = 0; i < m->nhdrs; i++) {
		if (!m->hdrs[i].name.len)
			continue;           /* deleted (msg.h) */
		if ((n++ && !smp_str_append(smp, &delim, 1)) ||
		    !smp_str_append(smp, m->hdrs[i].name.ptr, m->hdrs[i].name.len))
			return 0;
	}
	return 1;
}

static int smp_fetch_req_hdr_names(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr_names(args, smp, ctx, SMP_DIR_REQ);
}

static int smp_fetch_res_hdr_names(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hdr_names(args, smp, ctx, SMP_DIR_RES);
}

/* ------------------------------------------------------------------ request line */

static int smp_fetch_method(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct http_msg *m = ctx->req;
	enum http_meth meth = m ? m->meth : ctx->txn_meth;
	struct ist str = m ? m->method : ctx->txn_method;

	/* the head forwarded, the transaction still knows its method */
	if (!m && !ctx->txn_method.len) {
		smp->flags |= SMP_F_MAY_CHANGE;
		return 0;
	}
	smp->type = SMP_T_METH;
	smp->flags |= SMP_F_CONST;
	smp->data.meth.meth = meth;
	smp->data.meth.str.ptr = (char *)str.ptr;
	smp->data.meth.str.len = str.len;
	smp->data.meth.str.size = 0;
	return 1;
}

/* The path of a request target: origin-form "/p?q", or absolute-form
 * "scheme://authority/p?q" from the first '/' after the authority. Returns
 * 0 when there is none ("*", authority-form, "http://host"). <with_query>
 * keeps the query string. */
static int uri_path(struct ist uri, int with_query, struct ist *out)
{
	const char *p = uri.ptr, *e = uri.ptr + uri.len, *q;

	if (p == e)
		return 0;
	if (*p != '/') {
		const char *s = memmem(p, uri.len, "://", 3);

		if (!s)
			return 0;
		p = memchr(s + 3, '/', (size_t)(e - s - 3));
		if (!p)
			return 0;
	}
	q = with_query ? NULL : memchr(p, '?', (size_t)(e - p));
	*out = (struct ist){ p, (size_t)((q ? q : e) - p) };
	return 1;
}

static int smp_fetch_path(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct http_msg *m = get_msg(smp, ctx, SMP_DIR_REQ);
	struct ist p;

	if (!m || !uri_path(m->uri, 0, &p))
		return 0;
	smp_set_const_str(smp, SMP_T_STR, p.ptr, p.len);
	return 1;
}

static int smp_fetch_pathq(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct http_msg *m = get_msg(smp, ctx, SMP_DIR_REQ);
	struct ist p;

	if (!m || !uri_path(m->uri, 1, &p))
		return 0;
	smp_set_const_str(smp, SMP_T_STR, p.ptr, p.len);
	return 1;
}

static int smp_fetch_url(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct http_msg *m = get_msg(smp, ctx, SMP_DIR_REQ);

	if (!m)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, m->uri.ptr, m->uri.len);
	return 1;
}

static int smp_fetch_query(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct http_msg *m = get_msg(smp, ctx, SMP_DIR_REQ);
	const char *q;

	if (!m || !(q = memchr(m->uri.ptr, '?', m->uri.len)))
		return 0;
	q++;
	smp_set_const_str(smp, SMP_T_STR, q, (size_t)(m->uri.ptr + m->uri.len - q));
	return 1;
}

/* First Host value followed by the path (base) or path and query (baseq);
 * the path alone without a Host header. */
static int fetch_base(struct sample *smp, struct smp_ctx *ctx, int with_query)
{
	const struct http_msg *m = get_msg(smp, ctx, SMP_DIR_REQ);
	struct ist host = { NULL, 0 }, path;

	if (!m || !uri_path(m->uri, with_query, &path))
		return 0;
	for (int i = 0; i < m->nhdrs; i++)
		if (ist_ieq(m->hdrs[i].name, "host", 4)) {
			host = m->hdrs[i].value;
			break;
		}
	if (!host.len) {
		smp_set_const_str(smp, SMP_T_STR, path.ptr, path.len);
		return 1;
	}
	smp_set_trash(smp, SMP_T_STR);
	return smp_str_append(smp, host.ptr, host.len) && smp_str_append(smp, path.ptr, path.len);
}

static int smp_fetch_base(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_base(smp, ctx, 0);
}

static int smp_fetch_baseq(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_base(smp, ctx, 1);
}

/* "HTTP/1.1" gives "1.1" */
static int fetch_ver(struct sample *smp, struct smp_ctx *ctx, enum smp_dir dir)
{
	const struct http_msg *m = get_msg(smp, ctx, dir);

	if (!m || m->version.len < 5 || strncmp(m->version.ptr, "HTTP/", 5) != 0)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, m->version.ptr + 5, m->version.len - 5);
	return 1;
}

static int smp_fetch_req_ver(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_ver(smp, ctx, SMP_DIR_REQ);
}

static int smp_fetch_res_ver(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_ver(smp, ctx, SMP_DIR_RES);
}

static int smp_fetch_status(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct http_msg *m = ctx->res;

	if (m) {
		smp_set_sint(smp, m->status);
		return 1;
	}
	/* the head forwarded (or a local reply): the status sent */
	if (ctx->txn_status > 0) {
		smp_set_sint(smp, ctx->txn_status);
		return 1;
	}
	smp->flags |= SMP_F_MAY_CHANGE;
	return 0;
}

/* ------------------------------------------------------------------ cookies */

/* Walks the cookies "name=value" of every Cookie header (request: pairs
 * separated by ';') or the first pair of every Set-Cookie header
 * (response). Stops at cookie number <want> (0: all) named <name> (any if
 * <nlen> is 0). Returns the number seen, the last one's value in *out. */
static int cook_walk(const struct http_msg *m, int response, const char *name, size_t nlen,
                     int want, struct ist *out)
{
	const char *hname = response ? "set-cookie" : "cookie";
	size_t hlen = response ? 10 : 6;
	int n = 0;

	for (int i = 0; i < m->nhdrs; i++) {
		const char *p, *e;

		if (!ist_ieq(m->hdrs[i].name, hname, hlen))
			continue;
		p = m->hdrs[i].value.ptr;
		e = p + m->hdrs[i].value.len;
		while (p < e) {
			const char *semi = memchr(p, ';', (size_t)(e - p));
			const char *end = semi ? semi : e, *eq = memchr(p, '=', (size_t)(end - p));

			if (eq) {
				struct ist cn = trim_ows(p, eq);

				if (!nlen || (cn.len == nlen && memcmp(cn.ptr, name, nlen) == 0)) {
					*out = trim_ows(eq + 1, end);
					if (++n == want)
						return n;
				}
			}
			if (response || !semi)
				break;
			p = semi + 1;
		}
	}
	return n;
}

/* Without a name the first cookie, with a name the last one, or each in
 * turn when iterating. */
static int fetch_cook(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                      int response)
{
	const struct http_msg *m = get_msg(smp, ctx, response ? SMP_DIR_RES : SMP_DIR_REQ);
	const char *name = args->n > 0 ? args->a[0].data.str.ptr : NULL;
	size_t nlen = args->n > 0 ? args->a[0].data.str.len : 0;
	struct ist v = { NULL, 0 };
	int total, want;

	if (!m)
		return 0;
	smp->flags &= ~SMP_F_NOT_LAST;
	if (smp->opt & SMP_OPT_ITERATE) {
		want = (int)smp->iter.i[0] + 1;
		total = cook_walk(m, response, name, nlen, 0, &v);
		if (want > total)
			return 0;
		cook_walk(m, response, name, nlen, want, &v);
		smp->iter.i[0] = want;
		if (want < total)
			smp->flags |= SMP_F_NOT_LAST;
	} else {
		total = cook_walk(m, response, name, nlen, nlen ? 0 : 1, &v);
		if (!total)
			return 0;
	}
	smp_set_const_str(smp, SMP_T_STR, v.ptr, v.len);
	return 1;
}

static int smp_fetch_req_cook(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_cook(args, smp, ctx, 0);
}

static int smp_fetch_res_cook(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_cook(args, smp, ctx, 1);
}

static int fetch_cook_cnt(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                          int response)
{
	const struct http_msg *m = get_msg(smp, ctx, response ? SMP_DIR_RES : SMP_DIR_REQ);
	struct ist v;

	if (!m)
		return 0;
	smp_set_sint(smp, cook_walk(m, response, args->n > 0 ? args->a[0].data.str.ptr : NULL,
	                            args->n > 0 ? args->a[0].data.str.len : 0, 0, &v));
	return 1;
}

static int smp_fetch_req_cook_cnt(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_cook_cnt(args, smp, ctx, 0);
}

static int smp_fetch_res_cook_cnt(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_cook_cnt(args, smp, ctx, 1);
}

static int smp_fetch_req_cook_val(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int ret = fetch_cook(args, smp, ctx, 0);

	return ret > 0 ? smp_cast(smp, SMP_T_SINT) : ret;
}

static int smp_fetch_res_cook_val(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int ret = fetch_cook(args, smp, ctx, 1);

	return ret > 0 ? smp_cast(smp, SMP_T_SINT) : ret;
}

static int smp_fetch_cookie(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_cook(args, smp, ctx, ctx->dir == SMP_DIR_RES);
}

/* ------------------------------------------------------------------ URL parameters */

/* The query part starts after the first '?' (or <delim>); parameters end
 * at '&', ';' (unless <body>: a form body splits at '&' only) or <delim>.
 * Returns the value of parameter number <want> named <name> (any when
 * <nlen> is 0); the count of such parameters. */
static int urlp_walk_ex(struct ist uri, const char *name, size_t nlen, char delim, int body,
                        int want, struct ist *out)
{
	const char *p = uri.ptr, *e = uri.ptr + uri.len;
	int n = 0;

	while (p < e && *p != '?' && (!delim || *p != delim))
		p++;
	if (p == e)
		return 0;
	for (p++; p < e;) {
		const char *end = p, *eq;

		while (end < e && *end != '&' && (body || *end != ';') && (!delim || *end != delim))
			end++;
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq && (!nlen || ((size_t)(eq - p) == nlen && memcmp(p, name, nlen) == 0))) {
			*out = (struct ist){ eq + 1, (size_t)(end - eq - 1) };
			if (++n == want)
				return n;
		}
		p = end + 1;
	}
	return n;
}

static int urlp_walk(struct ist uri, const char *name, size_t nlen, char delim, int want,
                     struct ist *out)
{
	return urlp_walk_ex(uri, name, nlen, delim, 0, want, out);
}

static int smp_fetch_url_param(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct http_msg *m = get_msg(smp, ctx, SMP_DIR_REQ);
	const char *name = args->n > 0 ? args->a[0].data.str.ptr : NULL;
	size_t nlen = args->n > 0 ? args->a[0].data.str.len : 0;
	char delim = args->n > 1 && args->a[1].data.str.len ? args->a[1].data.str.ptr[0] : 0;
	struct ist v = { NULL, 0 };
	int total, want = 1;

	if (!m)
		return 0;
	smp->flags &= ~SMP_F_NOT_LAST;
	if (smp->opt & SMP_OPT_ITERATE)
		want = (int)smp->iter.i[0] + 1;
	total = urlp_walk(m->uri, name, nlen, delim, 0, &v);
	if (want > total)
		return 0;
	urlp_walk(m->uri, name, nlen, delim, want, &v);
	if (smp->opt & SMP_OPT_ITERATE) {
		smp->iter.i[0] = want;
		if (want < total)
			smp->flags |= SMP_F_NOT_LAST;
	}
	smp_set_const_str(smp, SMP_T_STR, v.ptr, v.len);
	return 1;
}

static int smp_fetch_urlp_val(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int ret = smp_fetch_url_param(args, smp, ctx);

	return ret > 0 ? smp_cast(smp, SMP_T_SINT) : ret;
}

/* ------------------------------------------------------------------ bodies */

static int fetch_body(struct sample *smp, struct smp_ctx *ctx, int response, int len_only)
{
	struct ist b = response ? ctx->res_body : ctx->req_body;
	int complete = response ? ctx->res_body_complete : ctx->req_body_complete;

	if (!(response ? ctx->res : ctx->req)) {
		smp->flags |= SMP_F_MAY_CHANGE;
		return 0;
	}
	if (len_only)
		smp_set_sint(smp, (int64_t)b.len);
	else
		smp_set_const_str(smp, SMP_T_BIN, b.ptr ? b.ptr : "", b.len);
	if (!complete)
		smp->flags |= SMP_F_MAY_CHANGE;
	return 1;
}

static int smp_fetch_req_body(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_body(smp, ctx, 0, 0);
}

static int smp_fetch_req_body_len(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_body(smp, ctx, 0, 1);
}

/* The advertised length (Content-Length), else what is available. */
static int smp_fetch_req_body_size(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct http_msg *m = get_msg(smp, ctx, SMP_DIR_REQ);

	if (!m)
		return 0;
	if ((m->flags & HTTP_F_HAS_CL) && !(m->flags & HTTP_F_CHUNKED)) {
		smp_set_sint(smp, (int64_t)m->content_length);
		return 1;
	}
	return fetch_body(smp, ctx, 0, 1);
}

static int smp_fetch_res_body(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_body(smp, ctx, 1, 0);
}

static int smp_fetch_res_body_len(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_body(smp, ctx, 1, 1);
}

static int smp_fetch_first_req(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, ctx->first_req);
	return 1;
}

static int smp_fetch_proto_http(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	/* accepted in response rules and logs, as in HAProxy 2.6, but the
	 * head is gone there: no sample */
	if (!get_msg(smp, ctx, SMP_DIR_REQ))
		return 0;
	smp_set_bool(smp, 1);
	return 1;
}

/* ------------------------------------------------------------------ authorization */

static int auth_header(struct smp_ctx *ctx, struct sample *smp, const char *name, size_t nlen,
                       struct ist *scheme, struct ist *param)
{
	const struct http_msg *m = get_msg(smp, ctx, SMP_DIR_REQ);
	struct ist v;
	const char *sp;

	if (!m || hdr_walk(m, name, nlen, 1, 1, &v) < 1)
		return 0;
	sp = memchr(v.ptr, ' ', v.len);
	if (!sp)
		return 0;
	*scheme = (struct ist){ v.ptr, (size_t)(sp - v.ptr) };
	*param = trim_ows(sp + 1, v.ptr + v.len);
	return 1;
}

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '+') return 62;
	if (c == '/') return 63;
	return -1;
}

/* Basic credentials "user:pass", decoded into a scratch buffer. */
int smp_http_basic_creds(struct smp_ctx *ctx, struct sample *smp, struct ist *user,
                         struct ist *pass)
{
	struct ist scheme, p;
	unsigned int acc = 0, bits = 0;
	char *colon;

	if (!auth_header(ctx, smp, "authorization", 13, &scheme, &p) ||
	    !ist_ieq(scheme, "basic", 5))
		return 0;
	smp_set_trash(smp, SMP_T_STR);
	for (size_t i = 0; i < p.len && p.ptr[i] != '='; i++) {
		int v = b64val(p.ptr[i]);

		if (v < 0)
			return 0;
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (smp->data.str.len >= smp->data.str.size)
				return 0;
			smp->data.str.ptr[smp->data.str.len++] = (char)(acc >> bits);
		}
	}
	colon = memchr(smp->data.str.ptr, ':', smp->data.str.len);
	if (!colon)
		return 0;
	*user = (struct ist){ smp->data.str.ptr, (size_t)(colon - smp->data.str.ptr) };
	*pass = (struct ist){ colon + 1, (size_t)(smp->data.str.ptr + smp->data.str.len - colon - 1) };
	return 1;
}

static int smp_fetch_auth_type(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct ist scheme, p;

	if (!auth_header(ctx, smp, "authorization", 13, &scheme, &p))
		return 0;
	smp_set_const_str(smp, SMP_T_STR, scheme.ptr, scheme.len);
	return 1;
}

static int smp_fetch_auth_user(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct ist u, p;

	if (!smp_http_basic_creds(ctx, smp, &u, &p))
		return 0;
	smp->data.str.len = u.len;
	return 1;
}

static int smp_fetch_auth_pass(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct ist u, p;

	if (!smp_http_basic_creds(ctx, smp, &u, &p))
		return 0;
	memmove(smp->data.str.ptr, p.ptr, p.len);
	smp->data.str.len = p.len;
	return 1;
}

static int smp_fetch_auth_bearer(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const char *h = args->n > 0 && args->a[0].data.str.len ? args->a[0].data.str.ptr : "authorization";
	struct ist scheme, p;

	if (!auth_header(ctx, smp, h, strlen(h), &scheme, &p) || !ist_ieq(scheme, "bearer", 6))
		return 0;
	smp_set_const_str(smp, SMP_T_STR, p.ptr, p.len);
	return 1;
}

/* ------------------------------------------------------------------ hashes of the URL */

/* SDBM with full avalanche of the Host value then <path> (base32 is
 * exactly "base,sdbm(1)", manual 7.3.6). */
static int url_hash(struct smp_ctx *ctx, struct sample *smp, int whole, uint32_t *h)
{
	const struct http_msg *m = get_msg(smp, ctx, SMP_DIR_REQ);
	struct ist host = { NULL, 0 }, path;
	uint32_t v = 0;

	if (!m)
		return 0;
	if (whole)
		path = m->uri;
	else if (!uri_path(m->uri, 0, &path))
		return 0;
	for (int i = 0; i < m->nhdrs; i++)
		if (ist_ieq(m->hdrs[i].name, "host", 4)) {
			host = m->hdrs[i].value;
			break;
		}
	/* sdbm is a running hash: feeding host then path equals one buffer */
	for (size_t i = 0; i < host.len; i++)
		v = (unsigned char)host.ptr[i] + (v << 6) + (v << 16) - v;
	for (size_t i = 0; i < path.len; i++)
		v = (unsigned char)path.ptr[i] + (v << 6) + (v << 16) - v;
	*h = hash_avalanche(v);
	return 1;
}

static int fetch_hash_src(struct sample *smp, struct smp_ctx *ctx, int whole)
{
	struct sockaddr_storage ss;
	uint32_t h;
	unsigned char *p;

	if (!url_hash(ctx, smp, whole, &h))
		return 0;
	if (!ctx->ops || !ctx->ops->addr || !ctx->ops->addr(ctx, SMP_ADDR_CLI_SRC, &ss))
		return 0;
	smp_set_trash(smp, SMP_T_BIN);
	p = (unsigned char *)smp->data.str.ptr;
	p[0] = (unsigned char)(h >> 24);
	p[1] = (unsigned char)(h >> 16);
	p[2] = (unsigned char)(h >> 8);
	p[3] = (unsigned char)h;
	if (ss.ss_family == AF_INET) {
		memcpy(p + 4, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		smp->data.str.len = 8;
	} else if (ss.ss_family == AF_INET6) {
		memcpy(p + 4, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
		smp->data.str.len = 20;
	} else
		return 0;
	return 1;
}

static int smp_fetch_base32(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	uint32_t h;

	if (!url_hash(ctx, smp, 0, &h))
		return 0;
	smp_set_sint(smp, h);
	return 1;
}

static int smp_fetch_url32(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	uint32_t h;

	if (!url_hash(ctx, smp, 1, &h))
		return 0;
	smp_set_sint(smp, h);
	return 1;
}

static int smp_fetch_base32_src(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hash_src(smp, ctx, 0);
}

static int smp_fetch_url32_src(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_hash_src(smp, ctx, 1);
}

/* The authority of an absolute-form target: host (IPv4 or [IPv6]) and
 * port (80 when absent). Fails for origin-form, as HAProxy does. */
static int url_authority(struct sample *smp, struct smp_ctx *ctx, char *host, size_t hsize,
                         int64_t *port)
{
	const struct http_msg *m = get_msg(smp, ctx, SMP_DIR_REQ);
	const char *p, *e, *s, *colon;
	size_t hlen;

	if (!m || !(s = memmem(m->uri.ptr, m->uri.len, "://", 3)))
		return 0;
	p = s + 3;
	e = m->uri.ptr + m->uri.len;
	for (s = p; s < e && *s != '/' && *s != '?'; s++)
		;
	e = s;
	if (p < e && *p == '[') {
		const char *close = memchr(p, ']', (size_t)(e - p));

		if (!close)
			return 0;
		hlen = (size_t)(close - p - 1);
		if (hlen >= hsize)
			return 0;
		memcpy(host, p + 1, hlen);
		colon = close + 1 < e && close[1] == ':' ? close + 1 : NULL;
	} else {
		colon = memchr(p, ':', (size_t)(e - p));
		hlen = (size_t)((colon ? colon : e) - p);
		if (hlen >= hsize)
			return 0;
		memcpy(host, p, hlen);
	}
	host[hlen] = '\0';
	*port = 80;
	if (colon && !smp_str_to_sint(colon + 1, (size_t)(e - colon - 1), port))
		return 0;
	return 1;
}

static int smp_fetch_url_ip(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	char host[256];
	int64_t port;

	if (!url_authority(smp, ctx, host, sizeof(host), &port))
		return 0;
	if (inet_pton(AF_INET, host, &smp->data.ipv4) == 1)
		smp->type = SMP_T_IPV4;
	else if (inet_pton(AF_INET6, host, &smp->data.ipv6) == 1)
		smp->type = SMP_T_IPV6;
	else
		return 0;
	return 1;
}

static int smp_fetch_url_port(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	char host[256];
	int64_t port;

	if (!url_authority(smp, ctx, host, sizeof(host), &port))
		return 0;
	smp_set_sint(smp, port);
	return 1;
}

/* A parameter of an url-encoded body ("a=1&b=2"), like url_param. */
static int smp_fetch_body_param(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const char *name = args->n > 0 ? args->a[0].data.str.ptr : NULL;
	size_t nlen = args->n > 0 ? args->a[0].data.str.len : 0;
	struct ist b = ctx->req_body, v = { NULL, 0 };
	int total, want = 1;
	char *q;

	if (!ctx->req) {
		smp->flags |= SMP_F_MAY_CHANGE;
		return 0;
	}
	/* urlp_walk() expects the parameters after a '?': give it one */
	smp_set_trash(smp, SMP_T_STR);
	if (b.len + 1 > smp->data.str.size)
		return 0;
	q = smp->data.str.ptr;
	q[0] = '?';
	if (b.len)
		memcpy(q + 1, b.ptr, b.len);
	b = (struct ist){ q, b.len + 1 };
	smp->flags &= ~SMP_F_NOT_LAST;
	if (smp->opt & SMP_OPT_ITERATE)
		want = (int)smp->iter.i[0] + 1;
	total = urlp_walk_ex(b, name, nlen, 0, 1, 0, &v);
	if (want > total)
		return 0;
	urlp_walk_ex(b, name, nlen, 0, 1, want, &v);
	if (smp->opt & SMP_OPT_ITERATE) {
		smp->iter.i[0] = want;
		if (want < total)
			smp->flags |= SMP_F_NOT_LAST;
	}
	smp->data.str.ptr = (char *)v.ptr;
	smp->data.str.len = v.len;
	smp->data.str.size -= (size_t)(v.ptr - q);
	if (!ctx->req_body_complete)
		smp->flags |= SMP_F_MAY_CHANGE;
	return 1;
}
