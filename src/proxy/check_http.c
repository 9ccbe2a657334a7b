/* HTTP health checks: `option httpchk` in both syntaxes, `http-check send`
 * and `http-check expect`, the request they make and the verdict on the
 * reply, as HAProxy 2.6 does them.
 *
 * Configuration time only, except hchk_reply_eval() and friends, which a
 * check runs on its thread over its own buffer: no shared state, no
 * allocation.
 *
 * The request, as HAProxy 2.6 writes it: the request line, the header
 * names in lower case, `content-length` when there is a body, and
 * `connection: close` for an HTTP/1.1 request that names no Connection
 * field; nothing else (no Host unless given).
 *
 * The verdict: a status rule is decided by the head; a body rule as soon
 * as its text is found, otherwise once the body is complete, the server
 * closed, or the buffer is full (HAProxy reads at most tune.bufsize).
 * Texts, as HAProxy's: a wrong status is L7STS with the reason phrase as
 * info, a body that did not match L7RSP "HTTP content check did not
 * match", a matching negated body L7RSP "HTTP check matched unwanted
 * content", a reply that is not HTTP L7RSP without info.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/regex.h>
#include <sluice/http/h1.h>
#include <sluice/proxy/check_http.h>
#include <sluice/proxy/proxy.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_httpchk(KW_ARGS);
static int kw_http_check(KW_ARGS);

static const struct cfg_kw hchk_kws[] = {
	{ "option",     "httpchk", CFG_SEC_BE, kw_httpchk, 1 },
	{ "http-check", NULL,      CFG_SEC_BE, kw_http_check },
	{ NULL }
};
CFG_REGISTER(hchk_kws)

/* ---- the rules of a proxy ---- */

static void hdrs_free(struct hchk_hdr *h, int n)
{
	for (int i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].value);
	}
	free(h);
}

void hchk_expect_free(struct hchk_expect *e)
{
	free(e->ranges);
	free(e->str);
	if (e->re)
		regex_free(e->re);
	memset(e, 0, sizeof(*e));
}

static void rules_free(struct hchk_rules *r)
{
	if (!r)
		return;
	free(r->meth);
	free(r->uri);
	free(r->ver);
	hdrs_free(r->legacy, r->nlegacy);
	free(r->s_meth);
	free(r->s_uri);
	free(r->s_ver);
	free(r->s_body);
	hdrs_free(r->hdrs, r->nhdrs);
	for (int i = 0; i < r->nexpects; i++)
		hchk_expect_free(&r->expects[i]);
	free(r->expects);
	free(r->req);
	free(r);
}

void hchk_free(struct proxy *px)
{
	if (px->hchk_owned)
		rules_free(px->hchk);
	px->hchk = NULL;
	px->hchk_owned = 0;
}

void hchk_inherit(struct proxy *px, const struct proxy *def)
{
	hchk_free(px);
	px->hchk = def->hchk;   /* the defaults section outlives its proxies */
}

/* The proxy's own rules: the first rule or `option httpchk` written in a
 * proxy starts a set of its own, empty, as HAProxy does. NULL if out of
 * memory. */
static struct hchk_rules *rules_own(struct proxy *px)
{
	struct hchk_rules *r;

	if (px->hchk_owned)
		return px->hchk;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	px->hchk = r;
	px->hchk_owned = 1;
	return r;
}

static int set_str(char **dst, const char *src)
{
	char *n = strdup(src);

	if (!n)
		return -1;
	free(*dst);
	*dst = n;
	return 0;
}

static int hdr_add(struct hchk_hdr **tab, int *n, const char *name, size_t nlen,
                   const char *value, size_t vlen)
{
	struct hchk_hdr *t = realloc(*tab, (size_t)(*n + 1) * sizeof(*t));

	if (!t)
		return -1;
	*tab = t;
	t[*n].name = strndup(name, nlen);
	t[*n].value = strndup(value, vlen);
	if (!t[*n].name || !t[*n].value) {
		free(t[*n].name);
		free(t[*n].value);
		return -1;
	}
	(*n)++;
	return 0;
}

/* "HTTP/1.1\r\nHost: foo": the old way to add headers, deprecated but
 * still read (HAProxy warns). Splits <ver> at its first CR or LF and
 * reads "name: value" lines from there. */
static int parse_legacy_hdrs(struct hchk_rules *r, char *ver, char *err, size_t errlen)
{
	char *p = ver + strcspn(ver, "\r\n");

	if (!*p)
		return 0;
	*p++ = '\0';
	while (*p) {
		size_t l;
		char *colon, *v;

		p += strspn(p, "\r\n");
		l = strcspn(p, "\r\n");
		if (!l)
			break;
		colon = memchr(p, ':', l);
		if (!colon || colon == p)
			return errmsg_set(err, errlen, "'option httpchk' : invalid header line "
			                  "'%.*s' hidden in the version string.", (int)l, p);
		for (v = colon + 1; v < p + l && (*v == ' ' || *v == '\t'); v++)
			;
		if (hdr_add(&r->legacy, &r->nlegacy, p, (size_t)(colon - p), v,
		            (size_t)(p + l - v)) < 0)
			return errmsg_set(err, errlen, "out of memory.");
		p += l;
	}
	return 1;
}

/* option httpchk
 * option httpchk <uri>
 * option httpchk <method> <uri>
 * option httpchk <method> <uri> <version> */
static int kw_httpchk(KW_ARGS)
{
	struct proxy *px = ctx->px;
	struct hchk_rules *r;
	char *ver = NULL;
	int rc;

	if (ctx->negate) {
		px->options &= ~PX_O_HTTPCHK;
		return 0;
	}
	if (nargs > 5)
		return errmsg_set(err, errlen, "'option httpchk' cannot handle unexpected argument "
		                  "'%s'.", args[5]);
	r = rules_own(px);
	if (!r)
		return errmsg_set(err, errlen, "out of memory.");
	r->has_send = 1;
	px->options |= PX_O_HTTPCHK;
	px->options &= ~PX_O_TCPCHK;   /* the last check option wins */
	if (nargs == 3)
		return set_str(&r->uri, args[2]) < 0 ? errmsg_set(err, errlen, "out of memory.") : 0;
	if (nargs >= 4 && (set_str(&r->meth, args[2]) < 0 || set_str(&r->uri, args[3]) < 0))
		return errmsg_set(err, errlen, "out of memory.");
	if (nargs < 5)
		return 0;
	ver = strdup(args[4]);
	if (!ver)
		return errmsg_set(err, errlen, "out of memory.");
	rc = parse_legacy_hdrs(r, ver, err, errlen);
	if (rc > 0)
		cfg_warning(ctx->file, ctx->line, "'option httpchk' : hiding headers or body at the "
		            "end of the version string is deprecated. Please, consider to use "
		            "'http-check send' directive instead.");
	free(r->ver);
	r->ver = ver;
	return rc < 0 ? -1 : 0;
}

/* http-check send [meth <m>] [uri <u>] [ver <v>] [hdr <name> <value>]*
 *                 [body <string>] */
static int parse_send(struct hchk_rules *r, char **args, int nargs, char *err, size_t errlen)
{
	if (r->has_send_rule)
		return errmsg_set(err, errlen, "'http-check send' : sluice supports one send rule "
		                  "per backend (sequences with 'http-check connect' are not "
		                  "supported yet).");
	for (int i = 2; i < nargs; i++) {
		const char *o = args[i];
		char **dst = !strcmp(o, "meth") ? &r->s_meth : !strcmp(o, "uri") ? &r->s_uri :
		             !strcmp(o, "ver") ? &r->s_ver : !strcmp(o, "body") ? &r->s_body : NULL;

		if (dst) {
			if (i + 1 >= nargs || !*args[i + 1])
				return errmsg_set(err, errlen, "'http-check send' : '%s' expects a string "
				                  "as argument.", o);
			if (set_str(dst, args[++i]) < 0)
				return errmsg_set(err, errlen, "out of memory.");
			continue;
		}
		if (!strcmp(o, "hdr")) {
			if (i + 2 >= nargs || !*args[i + 1])
				return errmsg_set(err, errlen, "'http-check send' : 'hdr' expects <name> "
				                  "and <value> as arguments.");
			if (strchr(args[i + 2], '%'))
				return errmsg_set(err, errlen, "'http-check send' : log-format values in "
				                  "'hdr' ('%s') are not supported yet.", args[i + 2]);
			if (hdr_add(&r->hdrs, &r->nhdrs, args[i + 1], strlen(args[i + 1]), args[i + 2],
			            strlen(args[i + 2])) < 0)
				return errmsg_set(err, errlen, "out of memory.");
			i += 2;
			continue;
		}
		if (!strcmp(o, "uri-lf") || !strcmp(o, "body-lf") || !strcmp(o, "comment"))
			return errmsg_set(err, errlen, "'http-check send' : '%s' is not supported yet.", o);
		return errmsg_set(err, errlen, "'http-check send' : expects 'comment', 'meth', 'uri', "
		                  "'uri-lf', 'ver', 'hdr', 'body' or 'body-lf' but got '%s' as "
		                  "argument.", o);
	}
	r->has_send = r->has_send_rule = 1;
	return 0;
}

/* "200,201,300-310" */
static int parse_status_list(const char *s, struct hchk_expect *e, char *err, size_t errlen)
{
	const char *p = s;

	while (*p) {
		struct hchk_range rg;
		struct hchk_range *t;
		char *end;

		if (*p < '0' || *p > '9')
			return errmsg_set(err, errlen, "'http-check expect' : invalid character '%c' in "
			                  "the list of status codes.", *p);
		rg.lo = rg.hi = (int)strtol(p, &end, 10);
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return errmsg_set(err, errlen, "'http-check expect' : invalid character "
				                  "'%c' in the list of status codes.", end[1] ? end[1] : '-');
			rg.hi = (int)strtol(end + 1, &end, 10);
		}
		if (*end && *end != ',')
			return errmsg_set(err, errlen, "'http-check expect' : invalid character '%c' in "
			                  "the list of status codes.", *end);
		t = realloc(e->ranges, (size_t)(e->nranges + 1) * sizeof(*t));
		if (!t)
			return errmsg_set(err, errlen, "out of memory.");
		e->ranges = t;
		e->ranges[e->nranges++] = rg;
		p = *end ? end + 1 : end;
	}
	if (!e->nranges)
		return errmsg_set(err, errlen, "'http-check expect' : 'status' expects a <pattern> "
		                  "as argument.");
	return 0;
}

int hchk_parse_expect(char **args, int nargs, struct hchk_expect *e, char *err, size_t errlen)
{
	static const struct { const char *name; enum hchk_match m; } matches[] = {
		{ "status", HCHK_M_STATUS }, { "rstatus", HCHK_M_RSTATUS },
		{ "string", HCHK_M_STRING }, { "rstring", HCHK_M_RSTRING },
	};
	static const char *const later[] = {
		"min-recv", "comment", "ok-status", "error-status", "tout-status", "on-success",
		"on-error", "status-code", "hdr", "fhdr", "string-lf", NULL
	};
	const char *m;
	int i = 0;

	memset(e, 0, sizeof(*e));
	if (i < nargs && !strcmp(args[i], "!")) {
		e->negate = 1;
		i++;
	}
	if (i >= nargs)
		return errmsg_set(err, errlen, "'http-check expect' : expects a pattern.");
	m = args[i];
	if (*m == '!' && !e->negate) {
		e->negate = 1;
		m++;
	}
	for (int k = 0; later[k]; k++)
		if (!strcmp(m, later[k]))
			return errmsg_set(err, errlen, "'http-check expect' : '%s' is not supported yet.",
			                  m);
	for (size_t k = 0; k < sizeof(matches) / sizeof(matches[0]); k++) {
		if (strcmp(m, matches[k].name) != 0)
			continue;
		e->match = matches[k].m;
		if (i + 1 >= nargs || !*args[i + 1])
			return errmsg_set(err, errlen, "'http-check expect' : '%s' expects a <pattern> "
			                  "as argument.", m);
		if (i + 2 < nargs)
			return errmsg_set(err, errlen, "'http-check expect' : unexpected argument '%s' "
			                  "after the pattern.", args[i + 2]);
		switch (e->match) {
		case HCHK_M_STATUS:
			return parse_status_list(args[i + 1], e, err, errlen);
		case HCHK_M_STRING:
			e->len = strlen(args[i + 1]);
			e->str = strdup(args[i + 1]);
			return e->str ? 0 : errmsg_set(err, errlen, "out of memory.");
		default: {
			char sub[256];

			e->re = regex_compile(args[i + 1], 0, sub, sizeof(sub));
			if (!e->re)
				return errmsg_set(err, errlen, "'http-check expect' : %s.", sub);
			return 0;
		}
		}
	}
	return errmsg_set(err, errlen, "'http-check expect' : 'only supports min-recv, "
	                  "[!]string', '[!]rstring', '[!]string-lf', '[!]status', '[!]rstatus', "
	                  "[!]hdr, [!]fhdr or comment but got '%s' as argument.", args[i]);
}

static int kw_http_check(KW_ARGS)
{
	struct hchk_rules *r;

	if (nargs < 2)
		return errmsg_set(err, errlen, "'http-check' expects 'send', 'expect' and more.");
	if (!strcmp(args[1], "send") || !strcmp(args[1], "expect")) {
		r = rules_own(ctx->px);
		if (!r)
			return errmsg_set(err, errlen, "out of memory.");
		if (!strcmp(args[1], "send"))
			return parse_send(r, args, nargs, err, errlen);
		{
			struct hchk_expect e, *t;

			if (hchk_parse_expect(args + 2, nargs - 2, &e, err, errlen) < 0) {
				hchk_expect_free(&e);
				return -1;
			}
			t = realloc(r->expects, (size_t)(r->nexpects + 1) * sizeof(*t));
			if (!t) {
				hchk_expect_free(&e);
				return errmsg_set(err, errlen, "out of memory.");
			}
			r->expects = t;
			r->expects[r->nexpects++] = e;
			return 0;
		}
	}
	if (!strcmp(args[1], "disable-on-404")) {
		/* a proxy option in HAProxy, not a rule: the inherited
		 * request stays */
		if (cfg_no_more_args(args, nargs, 2, err, errlen) < 0)
			return -1;
		ctx->px->options |= PX_O_DISABLE404;
		return 0;
	}
	if (!strcmp(args[1], "send-state")) {
		/* a proxy option in HAProxy too */
		if (cfg_no_more_args(args, nargs, 2, err, errlen) < 0)
			return -1;
		ctx->px->chk_send_state = !ctx->negate;
		return 0;
	}
	if (!strcmp(args[1], "connect") || !strcmp(args[1], "comment") ||
	    !strncmp(args[1], "set-var", 7) || !strncmp(args[1], "unset-var", 9))
		return errmsg_set(err, errlen, "'http-check %s' is not supported yet.", args[1]);
	return errmsg_set(err, errlen, "'http-check' only supports 'comment', 'connect', "
	                  "'disable-on-404', 'expect', 'send', 'send-state', 'set-var(<var-name>)' "
	                  "and 'unset-var(<var-name>)', but got '%s'.", args[1]);
}

/* ---- the request ---- */

static int is_framing_hdr(const char *name)
{
	return !strcasecmp(name, "content-length") || !strcasecmp(name, "transfer-encoding");
}

static void put(char *out, size_t *n, const char *s, size_t l)
{
	if (out)
		memcpy(out + *n, s, l);
	*n += l;
}

static void put_hdrs(char *out, size_t *n, const struct hchk_hdr *h, int nh, int *has_conn)
{
	for (int i = 0; i < nh; i++) {
		size_t nl = strlen(h[i].name);

		if (is_framing_hdr(h[i].name))
			continue;   /* HAProxy ignores them: the body sets its own */
		if (!strcasecmp(h[i].name, "connection"))
			*has_conn = 1;
		for (size_t k = 0; k < nl; k++) {
			char c = h[i].name[k];

			c = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
			put(out, n, &c, 1);
		}
		put(out, n, ": ", 2);
		put(out, n, h[i].value, strlen(h[i].value));
		put(out, n, "\r\n", 2);
	}
}

/* Writes the request into <out> (NULL: only measures). Returns its length. */
static size_t render(const struct hchk_rules *r, char *out)
{
	const char *meth = r->s_meth ? r->s_meth : r->meth ? r->meth : "OPTIONS";
	const char *uri = r->s_uri ? r->s_uri : r->uri ? r->uri : "/";
	const char *ver = r->s_ver ? r->s_ver : r->ver ? r->ver : "HTTP/1.0";
	size_t n = 0;
	int has_conn = 0;
	char cl[48];

	put(out, &n, meth, strlen(meth));
	put(out, &n, " ", 1);
	put(out, &n, uri, strlen(uri));
	put(out, &n, " ", 1);
	put(out, &n, ver, strlen(ver));
	put(out, &n, "\r\n", 2);
	put_hdrs(out, &n, r->legacy, r->nlegacy, &has_conn);
	put_hdrs(out, &n, r->hdrs, r->nhdrs, &has_conn);
	if (r->s_body) {
		snprintf(cl, sizeof(cl), "content-length: %zu\r\n", strlen(r->s_body));
		put(out, &n, cl, strlen(cl));
	}
	/* no keep-alive for checks: an HTTP/1.1 request says so */
	if (!has_conn && strcmp(ver, "HTTP/1.0") != 0)
		put(out, &n, "connection: close\r\n", 19);
	put(out, &n, "\r\n", 2);
	if (r->s_body)
		put(out, &n, r->s_body, strlen(r->s_body));
	return n;
}

int hchk_prepare(struct hchk_rules *r, size_t bufsize, char *err, size_t errlen)
{
	const char *meth;
	size_t n;

	r->needs_body = 0;
	for (int i = 0; i < r->nexpects; i++)
		if (r->expects[i].match == HCHK_M_STRING || r->expects[i].match == HCHK_M_RSTRING)
			r->needs_body = 1;
	if (r->req || !r->has_send)
		return 0;
	n = render(r, NULL);
	if (n > bufsize)
		return errmsg_set(err, errlen, "the HTTP check request (%zu bytes) does not fit in "
		                  "tune.bufsize (%zu).", n, bufsize);
	r->req = malloc(n + 1);
	if (!r->req)
		return errmsg_set(err, errlen, "out of memory.");
	r->req_len = render(r, r->req);
	r->req[r->req_len] = '\0';
	meth = r->s_meth ? r->s_meth : r->meth ? r->meth : "OPTIONS";
	r->req_meth = (int)h1_meth_from_token(meth, strlen(meth));
	return 0;
}

/* ---- the reply ---- */

/* Header fields a check reply may carry: HAProxy's tune.http.maxhdr. */
#define HCHK_MAX_HDRS  HTTP_MAX_HDRS_DEFAULT

void hchk_reply_init(struct hchk_reply *st)
{
	memset(st, 0, sizeof(*st));
	h1_chunk_init(&st->chunk);
	st->chunk.opts = H1C_O_STOP_AFTER_DATA;
}

static int verdict(struct hchk_verdict *v, int status, int code, const char *desc)
{
	v->status = status;
	v->code = code;
	snprintf(v->desc, sizeof(v->desc), "%s", desc ? desc : "");
	return 1;
}

/* Whether buf[0..len) may hold a whole head: an empty line was seen.
 * Looks at each byte once over the calls of one reply. */
static int head_ended(struct hchk_reply *st, const char *buf, size_t len)
{
	size_t i = st->scan > 2 ? st->scan - 2 : 0;

	for (; i + 1 < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (buf[i + 1] == '\n' || (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n'))
			return 1;
	}
	st->scan = len;
	return 0;
}

/* Reads the head once it is complete. Returns 1 when done (st filled), 0
 * when more bytes are needed, -1 when it is not an HTTP reply. */
static int read_head(const struct hchk_rules *r, struct hchk_reply *st, const char *buf,
                     size_t len, size_t cap, int eof)
{
	struct http_hdr hdrs[HCHK_MAX_HDRS];
	struct http_msg msg;
	enum h1_result rc;

	if (!head_ended(st, buf, len) && len < cap && !eof)
		return 0;
	memset(&msg, 0, sizeof(msg));
	msg.hdrs = hdrs;
	msg.maxhdrs = HCHK_MAX_HDRS - 1;
	rc = h1_parse_head(buf, len, 0, (enum http_meth)r->req_meth, cap,
	                   H1_O_BARE_LF | H1_O_ANY_VERSION, &msg, NULL);
	if (rc == H1_INCOMPLETE)
		return len < cap && !eof ? 0 : -1;
	if (rc != H1_OK)
		return -1;
	st->head_done = 1;
	st->status = msg.status;
	snprintf(st->reason, sizeof(st->reason), "%.*s", (int)msg.reason.len, msg.reason.ptr);
	st->flags = msg.flags;
	st->clen = msg.content_length;
	st->head_len = msg.head_len;
	return 1;
}

/* Decodes what arrived of a chunked body in place: the payload joins the
 * body after the head, the framing goes. */
static void decode_chunked(struct hchk_reply *st, char *buf, size_t *len)
{
	size_t raw = st->head_len + st->body_len, end = *len;

	while (raw < end && !st->body_done && !st->body_error) {
		size_t off = 0, dl = 0;
		size_t used = h1_chunk_feed(&st->chunk, buf + raw, end - raw, &off, &dl);

		if (dl) {
			memmove(buf + st->head_len + st->body_len, buf + raw + off, dl);
			st->body_len += dl;
		}
		raw += used;
		if (st->chunk.st == H1C_DONE)
			st->body_done = 1;
		else if (st->chunk.st == H1C_ERROR)
			st->body_error = 1;
		else if (!used)
			break;
	}
	/* what is left of the framing joins the body's end; what follows
	 * the message goes */
	if (st->body_done || st->body_error) {
		*len = st->head_len + st->body_len;
		return;
	}
	memmove(buf + st->head_len + st->body_len, buf + raw, end - raw);
	*len = st->head_len + st->body_len + (end - raw);
}

/* Brings the body up to date. */
static void read_body(struct hchk_reply *st, char *buf, size_t *len, int eof)
{
	size_t got = *len - st->head_len;

	if (st->flags & HTTP_F_BODYLESS) {
		st->body_len = 0;
		st->body_done = 1;
		*len = st->head_len;
	} else if (st->flags & HTTP_F_CHUNKED) {
		decode_chunked(st, buf, len);
	} else if (st->flags & HTTP_F_HAS_CL) {
		if (got >= st->clen) {
			got = (size_t)st->clen;
			st->body_done = 1;
			*len = st->head_len + got;
		}
		st->body_len = got;
	} else {
		st->body_len = got;
	}
	if (eof)
		st->body_done = 1;
}

static int status_matches(const struct hchk_expect *e, int status)
{
	if (e->match == HCHK_M_STATUS) {
		for (int i = 0; i < e->nranges; i++)
			if (status >= e->ranges[i].lo && status <= e->ranges[i].hi)
				return 1;
		return 0;
	}
	{
		char digits[16];
		int n = snprintf(digits, sizeof(digits), "%d", status);

		return regex_match(e->re, digits, (size_t)n);
	}
}

/* A body rule: 1 found, 0 not found, -1 cannot tell yet. */
static int body_matches(const struct hchk_expect *e, struct hchk_reply *st, const char *body,
                        int final)
{
	if (e->match == HCHK_M_STRING) {
		/* only the new bytes, with the overlap a match may straddle */
		size_t from = st->searched >= e->len ? st->searched - e->len + 1 : 0;

		if (e->len <= st->body_len &&
		    memmem(body + from, st->body_len - from, e->str, e->len))
			return 1;
		st->searched = st->body_len;
		return final ? 0 : -1;
	}
	/* a regex looks at the whole body: again once it doubled, and at its
	 * end, so the runs over one reply add up to a few times its size */
	if (!final && st->regex_at && st->body_len < 2 * st->regex_at)
		return -1;
	st->regex_at = st->body_len ? st->body_len : 1;
	if (regex_match(e->re, body, st->body_len))
		return 1;
	return final ? 0 : -1;
}

int hchk_reply_eval(const struct hchk_rules *r, struct hchk_reply *st, char *buf, size_t *len,
                    size_t cap, int eof, struct hchk_verdict *v)
{
	int final;

	if (!st->head_done) {
		int rc = read_head(r, st, buf, *len, cap, eof);

		if (rc < 0)
			return verdict(v, CHK_ST_L7RSP, 0, NULL);
		if (!rc)
			return 0;
	}
	/* before any rule, as HAProxy's manual says */
	if (st->stop_on_404 && st->status == 404)
		return verdict(v, CHK_ST_L7OKC, 404, NULL);
	if (!r->nexpects)
		return st->status >= 200 && st->status < 400 ?
		       verdict(v, CHK_ST_L7OK, st->status, NULL) :
		       verdict(v, CHK_ST_L7STS, st->status, st->reason);
	if (r->needs_body)
		read_body(st, buf, len, eof);
	/* bad chunked framing ends the body: the rules judge what came
	 * before it, whatever the reads that brought it */
	final = st->body_done || st->body_error || *len >= cap;
	for (; st->next < r->nexpects; st->next++) {
		const struct hchk_expect *e = &r->expects[st->next];
		int m;

		if (e->match == HCHK_M_STATUS || e->match == HCHK_M_RSTATUS) {
			if (status_matches(e, st->status) == e->negate)
				return verdict(v, CHK_ST_L7STS, st->status, st->reason);
			continue;
		}
		m = body_matches(e, st, buf + st->head_len, final);
		if (m < 0)
			return 0;
		if (m == e->negate)
			return verdict(v, CHK_ST_L7RSP, 0, e->negate ? "HTTP check matched unwanted "
			               "content" : "HTTP content check did not match");
		st->searched = 0;   /* the next rule starts from the start */
		st->regex_at = 0;
	}
	return verdict(v, CHK_ST_L7OK, st->status, NULL);
}
