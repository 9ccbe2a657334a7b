/* HTTP/1.x message heads and chunked bodies (RFC 9110, RFC 9112).
 *
 * h1_parse_head() reads a complete head in one left-to-right pass and fills
 * the internal message model with spans into the caller's buffer; it keeps
 * no state between calls, so an incomplete head is parsed again from its
 * start once more bytes have arrived. h1_chunk_feed() is a byte-level state
 * machine whose whole state lives in struct h1_chunk, so a body may be split
 * anywhere.
 *
 * Concurrency: nothing here is shared. The character tables are constant;
 * every function works only on what its caller passes in.
 *
 * Strictness follows HAProxy's defaults: every framing ambiguity that could
 * let a server read the message differently from us (request smuggling,
 * response splitting) is an error, reported as 400/414/431/505 for a
 * request and 502 for a response. H1_O_ACCEPT_INVALID ("option
 * accept-invalid-http-request|response") relaxes only what cannot change
 * framing: character sets of names, values and targets, and bare LF line
 * endings; CR, NUL, obs-fold and framing rules are never relaxed.
 */
#include <stdint.h>
#include <string.h>
#include <sluice/http/h1.h>

/* Character classes (bit flags of h1_cls[]). */
#define C_TCHAR      0x01  /* token character, RFC 9110 section 5.6.2 */
#define C_URI        0x02  /* request-target byte accepted by default */
#define C_URI_RELAX  0x04  /* request-target byte accepted with accept-invalid */
#define C_VAL        0x08  /* field-vchar, SP or HTAB (RFC 9110 section 5.5) */
#define C_VAL_RELAX  0x10  /* CTL other than NUL/CR/LF: accepted with accept-invalid */
#define C_NAME_RELAX 0x20  /* field-name byte accepted with accept-invalid */
#define C_HOST       0x40  /* uri-host / port byte (RFC 3986 section 3.2.2) */

#define H1_IS_DIGIT(c) ((c) >= '0' && (c) <= '9')
#define H1_IS_ALPHA(c) (((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z'))
#define H1_IS_TCHAR(c) (H1_IS_DIGIT(c) || H1_IS_ALPHA(c) || (c) == '!' || \
	(c) == '#' || (c) == '$' || (c) == '%' || (c) == '&' || (c) == '\'' || \
	(c) == '*' || (c) == '+' || (c) == '-' || (c) == '.' || (c) == '^' || \
	(c) == '_' || (c) == '`' || (c) == '|' || (c) == '~')
#define H1_IS_VCHAR(c) ((c) >= 0x21 && (c) <= 0x7e)
/* RFC 3986 excludes these from URIs; HAProxy blocks them unless
 * accept-invalid-http-request, like '#' (a fragment is never sent). */
#define H1_IS_URI_UNSAFE(c) ((c) == '"' || (c) == '<' || (c) == '>' || \
	(c) == '\\' || (c) == '^' || (c) == '`' || (c) == '{' || (c) == '|' || \
	(c) == '}' || (c) == '#')
#define H1_IS_HOST(c) (H1_IS_DIGIT(c) || H1_IS_ALPHA(c) || (c) == '-' || \
	(c) == '.' || (c) == '_' || (c) == '~' || (c) == '%' || (c) == '!' || \
	(c) == '$' || (c) == '&' || (c) == '\'' || (c) == '(' || (c) == ')' || \
	(c) == '*' || (c) == '+' || (c) == ',' || (c) == ';' || (c) == '=' || \
	(c) == ':' || (c) == '[' || (c) == ']')

#define H1_CLS(c) ( \
	(H1_IS_TCHAR(c) ? C_TCHAR : 0) | \
	(H1_IS_VCHAR(c) && !H1_IS_URI_UNSAFE(c) ? C_URI : 0) | \
	((H1_IS_VCHAR(c) && H1_IS_URI_UNSAFE(c)) || (c) >= 0x80 ? C_URI_RELAX : 0) | \
	(H1_IS_VCHAR(c) || (c) >= 0x80 || (c) == ' ' || (c) == '\t' ? C_VAL : 0) | \
	(((c) < 0x20 && (c) != 0 && (c) != '\r' && (c) != '\n' && (c) != '\t') || \
	 (c) == 0x7f ? C_VAL_RELAX : 0) | \
	((H1_IS_VCHAR(c) || (c) >= 0x80) && (c) != ':' ? C_NAME_RELAX : 0) | \
	(H1_IS_HOST(c) ? C_HOST : 0))

#define H1_LOWER(c) (((c) >= 'A' && (c) <= 'Z') ? (c) + 0x20 : (c))
#define H1_HEXVAL(c) (H1_IS_DIGIT(c) ? (c) - '0' : \
	((c) >= 'a' && (c) <= 'f') ? (c) - 'a' + 10 : \
	((c) >= 'A' && (c) <= 'F') ? (c) - 'A' + 10 : 0xff)

/* 256-entry constant tables computed by the compiler from the macros above
 * (the cast: clang checks the range of both arms of a conditional). */
#define H1_T1(F, n)   (uint8_t)(F(n))
#define H1_T4(F, n)   H1_T1(F, n), H1_T1(F, (n) + 1), H1_T1(F, (n) + 2), H1_T1(F, (n) + 3)
#define H1_T16(F, n)  H1_T4(F, n), H1_T4(F, (n) + 4), H1_T4(F, (n) + 8), H1_T4(F, (n) + 12)
#define H1_T64(F, n)  H1_T16(F, n), H1_T16(F, (n) + 16), H1_T16(F, (n) + 32), H1_T16(F, (n) + 48)
#define H1_T256(F)    H1_T64(F, 0), H1_T64(F, 64), H1_T64(F, 128), H1_T64(F, 192)

static const uint8_t h1_cls[256] = { H1_T256(H1_CLS) };
static const uint8_t h1_lower[256] = { H1_T256(H1_LOWER) };
static const uint8_t h1_hex[256] = { H1_T256(H1_HEXVAL) };

#define CLS(ch) h1_cls[(uint8_t)(ch)]

/* One call of h1_parse_head(): the cursor limits and what the field lines
 * taught us about framing, checked once the head is complete. */
struct h1_parse {
	const char *buf;
	const char *end;           /* buf + min(len, max_head) */
	int truncated;             /* end was set by max_head: "incomplete" means too long */
	unsigned int opts;
	struct http_msg *msg;
	struct h1_error *err;
	int host_count;
	int te_chunked;            /* "chunked" seen among the transfer codings */
	int te_last_chunked;       /* ... and it is the last one so far */
	int cl_count;              /* Content-Length values seen (lines and list members) */
	const char *te_line;       /* first Transfer-Encoding line, for error offsets */
	const char *cl_line;
};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

static inline struct ist h1_ist(const char *p, size_t len)
{
	return (struct ist){ p, len };
}

/* Records an error. Every invalid response is answered 502 by a gateway
 * whatever the rule broken (RFC 9110 section 15.6.3). */
static enum h1_result h1_fail(struct h1_parse *ps, int status, const char *reason,
                              const char *at)
{
	if (!ps->msg->is_request)
		status = 502;
	if (ps->err) {
		ps->err->status = status;
		ps->err->reason = reason;
		ps->err->offset = (size_t)(at - ps->buf);
	}
	return H1_ERROR;
}

/* The window ended before the head did: wait for more bytes, unless the
 * window is max_head, in which case the head is too long. */
static enum h1_result h1_need_more(struct h1_parse *ps, int in_start_line)
{
	if (!ps->truncated)
		return H1_INCOMPLETE;
	if (in_start_line)
		return h1_fail(ps, 414, ps->msg->is_request ? "request line too long" :
		               "status line too long", ps->end);
	return h1_fail(ps, 431, "header section too long", ps->end);
}

/* Skips the bytes of class <ok> (field values and reasons), eight at a time
 * while none of them is a CTL or DEL: those are the only bytes a value may
 * stop at, and long values (Cookie, User-Agent) are most of a head. HTAB
 * and relaxed controls go through the byte loop. Never reads past <end>. */
static inline const char *h1_skip_value(const char *p, const char *end, uint8_t ok)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;

	for (;;) {
		const char *stop;

		while (end - p >= 8) {
			uint64_t x, del;

			memcpy(&x, p, 8);
			del = x ^ (ones * 0x7f);
			/* a byte < 0x20, or a byte equal to 0x7f (RFC 9110 CTL) */
			if (((x - ones * 0x20) & ~x & highs) | ((del - ones) & ~del & highs))
				break;
			p += 8;
		}
		stop = end - p >= 8 ? p + 8 : end;
		while (p < stop && (CLS(*p) & ok))
			p++;
		if (p < stop || p == end)
			return p;
	}
}

/* Case-insensitive equality of a span with a lower-case literal. */
static int h1_ist_eq(struct ist s, const char *lower, size_t lower_len)
{
	size_t i;

	if (s.len != lower_len)
		return 0;
	for (i = 0; i < lower_len; i++)
		if (h1_lower[(uint8_t)s.ptr[i]] != (uint8_t)lower[i])
			return 0;
	return 1;
}

#define H1_IST_EQ(s, lit) h1_ist_eq((s), (lit), sizeof(lit) - 1)

int h1_name_eq(struct ist name, const char *lower)
{
	size_t i;

	for (i = 0; i < name.len; i++)
		if (!lower[i] || h1_lower[(uint8_t)name.ptr[i]] != (uint8_t)lower[i])
			return 0;
	return lower[i] == '\0';
}

/* Methods are case-sensitive (RFC 9110 section 9.1). */
enum http_meth h1_meth_from_token(const char *p, size_t len)
{
	switch (len) {
	case 3:
		if (memcmp(p, "GET", 3) == 0)
			return HTTP_METH_GET;
		if (memcmp(p, "PUT", 3) == 0)
			return HTTP_METH_PUT;
		break;
	case 4:
		if (memcmp(p, "HEAD", 4) == 0)
			return HTTP_METH_HEAD;
		if (memcmp(p, "POST", 4) == 0)
			return HTTP_METH_POST;
		break;
	case 5:
		if (memcmp(p, "TRACE", 5) == 0)
			return HTTP_METH_TRACE;
		if (memcmp(p, "PATCH", 5) == 0)
			return HTTP_METH_PATCH;
		break;
	case 6:
		if (memcmp(p, "DELETE", 6) == 0)
			return HTTP_METH_DELETE;
		break;
	case 7:
		if (memcmp(p, "CONNECT", 7) == 0)
			return HTTP_METH_CONNECT;
		if (memcmp(p, "OPTIONS", 7) == 0)
			return HTTP_METH_OPTIONS;
		break;
	}
	return HTTP_METH_OTHER;
}

struct ist h1_list_elem(const char **pp, const char *end)
{
	const char *p = *pp, *s, *e;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	s = p;
	while (p < end && *p != ',')
		p++;
	e = p;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*pp = p;
	return h1_ist(s, (size_t)(e - s));
}

/* At a CR or LF that ends a line: consumes CRLF, or a bare LF when relaxed
 * (RFC 9112 section 2.2 lets a recipient accept it). A CR not followed by
 * LF is always an error: some agents end the line there, others do not. */
static enum h1_result h1_eol(struct h1_parse *ps, const char **pp)
{
	const char *p = *pp;

	if (*p == '\n') {
		if (!(ps->opts & (H1_O_ACCEPT_INVALID | H1_O_BARE_LF)))
			return h1_fail(ps, 400, "bare LF line ending", p);
		*pp = p + 1;
		return H1_OK;
	}
	if (p + 1 == ps->end)
		return H1_INCOMPLETE;
	if (p[1] != '\n')
		return h1_fail(ps, 400, "bare CR", p);
	*pp = p + 2;
	return H1_OK;
}

/* "HTTP/1.1" -> 11, "HTTP/1.0" -> 10, another "HTTP/d.d" -> -505,
 * anything else -> -400 (RFC 9112 section 2.3). */
static int h1_version(const char *v, size_t len)
{
	if (len != 8 || memcmp(v, "HTTP/", 5) != 0 || !H1_IS_DIGIT(v[5]) ||
	    v[6] != '.' || !H1_IS_DIGIT(v[7]))
		return -400;
	if (v[5] == '1' && v[7] == '1')
		return 11;
	if (v[5] == '1' && v[7] == '0')
		return 10;
	return -505;
}

/* Scans an HTTP-version token at *pp up to the first byte that cannot be
 * part of one; more than 8 bytes can no longer be a version. */
static enum h1_result h1_scan_version(struct h1_parse *ps, const char **pp)
{
	const char *p = *pp, *start = p;

	while (p < ps->end && ((CLS(*p) & C_TCHAR) || *p == '/')) {
		if (p - start == 8)
			return h1_fail(ps, 400, "invalid HTTP version", start);
		p++;
	}
	*pp = p;
	return p == ps->end ? H1_INCOMPLETE : H1_OK;
}

/* ------------------------------------------------------------------------ */
/* Start lines                                                               */
/* ------------------------------------------------------------------------ */

/* RFC 9112 section 3.2.3: authority-form = uri-host ":" port, the only form
 * CONNECT takes, and no other method may use it. */
static int h1_is_authority_form(struct ist u)
{
	const char *colon = NULL, *p, *end = u.ptr + u.len;

	for (p = u.ptr; p < end; p++) {
		if (!(CLS(*p) & C_HOST))
			return 0;
		if (*p == ':')
			colon = p;
	}
	if (!colon || colon == u.ptr || end - colon < 2 || end - colon > 6)
		return 0;
	for (p = colon + 1; p < end; p++)
		if (!H1_IS_DIGIT(*p))
			return 0;
	if (u.ptr[0] == '[')
		return colon[-1] == ']' && colon - u.ptr > 2;
	/* outside an IP-literal, a colon may only introduce the port */
	return memchr(u.ptr, ':', (size_t)(colon - u.ptr)) == NULL &&
	       memchr(u.ptr, '[', (size_t)(colon - u.ptr)) == NULL &&
	       memchr(u.ptr, ']', (size_t)(colon - u.ptr)) == NULL;
}

/* RFC 3986 section 3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":" */
static int h1_is_absolute_form(struct ist u)
{
	size_t i;

	if (!u.len || !H1_IS_ALPHA(u.ptr[0]))
		return 0;
	for (i = 1; i < u.len; i++) {
		char c = u.ptr[i];

		if (c == ':')
			return 1;
		if (!H1_IS_ALPHA(c) && !H1_IS_DIGIT(c) && c != '+' && c != '-' && c != '.')
			return 0;
	}
	return 0;
}

/* The form of the request-target must match the method (RFC 9112 3.2). */
static enum h1_result h1_check_target(struct h1_parse *ps, struct ist u)
{
	enum http_meth meth = ps->msg->meth;

	if (meth == HTTP_METH_CONNECT) {
		if (!h1_is_authority_form(u))
			return h1_fail(ps, 400, "CONNECT target is not host:port", u.ptr);
		return H1_OK;
	}
	if (u.len == 1 && u.ptr[0] == '*') {
		if (meth != HTTP_METH_OPTIONS)
			return h1_fail(ps, 400, "asterisk target outside OPTIONS", u.ptr);
		return H1_OK;
	}
	if (u.ptr[0] == '/' || h1_is_absolute_form(u))
		return H1_OK;
	return h1_fail(ps, 400, "invalid request-target form", u.ptr);
}

/* Empty lines before the request line (RFC 9112 section 2.2). */
static enum h1_result h1_skip_empty_lines(struct h1_parse *ps, const char **pp)
{
	enum h1_result rc;

	while (*pp < ps->end && (**pp == '\r' || **pp == '\n')) {
		rc = h1_eol(ps, pp);
		if (rc != H1_OK)
			return rc;
	}
	return *pp == ps->end ? H1_INCOMPLETE : H1_OK;
}

/* request-line = method SP request-target SP HTTP-version CRLF */
static enum h1_result h1_request_line(struct h1_parse *ps, const char **pp)
{
	struct http_msg *msg = ps->msg;
	const char *p, *end = ps->end, *tok;
	uint8_t uri_ok = C_URI | ((ps->opts & H1_O_ACCEPT_INVALID) ? C_URI_RELAX : 0);
	enum h1_result rc;
	int v;

	rc = h1_skip_empty_lines(ps, pp);
	if (rc != H1_OK)
		return rc;
	p = tok = *pp;
	while (p < end && (CLS(*p) & C_TCHAR))
		p++;
	if (p == end)
		return H1_INCOMPLETE;
	if (*p != ' ' || p == tok)
		return h1_fail(ps, 400, p == tok ? "empty method" : "invalid character in method", p);
	msg->method = h1_ist(tok, (size_t)(p - tok));
	msg->meth = h1_meth_from_token(tok, (size_t)(p - tok));

	tok = ++p;
	while (p < end && (CLS(*p) & uri_ok))
		p++;
	if (p == end)
		return H1_INCOMPLETE;
	if (*p != ' ') {
		if (*p == '\r' || *p == '\n')
			return h1_fail(ps, 400, "no HTTP version in request line", p);
		return h1_fail(ps, 400, "invalid character in request-target", p);
	}
	if (p == tok)
		return h1_fail(ps, 400, "empty request-target", p);
	msg->uri = h1_ist(tok, (size_t)(p - tok));

	tok = ++p;
	rc = h1_scan_version(ps, &p);
	if (rc != H1_OK)
		return rc;
	if (*p != '\r' && *p != '\n')
		return h1_fail(ps, 400, "invalid HTTP version", p);
	v = h1_version(tok, (size_t)(p - tok));
	if (v == -505 && (ps->opts & H1_O_ANY_VERSION) && tok[5] >= '1') {
		/* a later HTTP/1.x or HTTP/2+ on an HTTP/1 connection: handled
		 * (and forwarded) as HTTP/1.1, as HAProxy 2.6 does */
		msg->version = IST("HTTP/1.1");
		v = 11;
	} else if (v < 0) {
		return h1_fail(ps, -v, v == -505 ? "unsupported HTTP version" :
		               "invalid HTTP version", tok);
	} else {
		msg->version = h1_ist(tok, 8);
	}
	if (v == 11)
		msg->flags |= HTTP_F_VER_11;
	rc = h1_check_target(ps, msg->uri);
	if (rc != H1_OK)
		return rc;
	rc = h1_eol(ps, &p);
	*pp = p;
	return rc;
}

/* status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF.
 * The SP before an empty reason is tolerated when missing, as HAProxy does:
 * the status code is complete without it and servers in the wild omit it. */
static enum h1_result h1_status_line(struct h1_parse *ps, const char **pp)
{
	struct http_msg *msg = ps->msg;
	const char *p = *pp, *end = ps->end, *tok = p;
	uint8_t val_ok = C_VAL | ((ps->opts & H1_O_ACCEPT_INVALID) ? C_VAL_RELAX : 0);
	enum h1_result rc;
	int v, i;

	rc = h1_scan_version(ps, &p);
	if (rc != H1_OK)
		return rc;
	if (*p != ' ')
		return h1_fail(ps, 502, "invalid HTTP version", p);
	v = h1_version(tok, (size_t)(p - tok));
	if (v == -505 && (ps->opts & H1_O_ANY_VERSION) && tok[5] >= '1') {
		msg->version = IST("HTTP/1.1");   /* as for requests, below */
		v = 11;
	} else if (v < 0) {
		return h1_fail(ps, 502, "invalid HTTP version", tok);
	} else {
		msg->version = h1_ist(tok, 8);
	}
	if (v == 11)
		msg->flags |= HTTP_F_VER_11;

	tok = ++p;
	for (i = 0; i < 3; i++, p++) {
		if (p == end)
			return H1_INCOMPLETE;
		if (!H1_IS_DIGIT(*p))
			return h1_fail(ps, 502, "invalid status code", p);
	}
	if (p == end)
		return H1_INCOMPLETE;
	if (*p != ' ' && *p != '\r' && *p != '\n')
		return h1_fail(ps, 502, "invalid status code", p);
	msg->status = (tok[0] - '0') * 100 + (tok[1] - '0') * 10 + (tok[2] - '0');
	if (msg->status < 100 || msg->status > 599)
		return h1_fail(ps, 502, "status code out of range", tok);

	if (*p == ' ')
		p++;
	tok = p;
	p = h1_skip_value(p, end, val_ok);
	if (p == end)
		return H1_INCOMPLETE;
	if (*p != '\r' && *p != '\n')
		return h1_fail(ps, 502, "invalid character in reason", p);
	msg->reason = h1_ist(tok, (size_t)(p - tok));
	rc = h1_eol(ps, &p);
	*pp = p;
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Fields that matter to the proxy                                           */
/* ------------------------------------------------------------------------ */

/* RFC 9110 section 8.6: Content-Length = 1*DIGIT; a list or repeated field
 * is only acceptable when all members are the same number. */
static enum h1_result h1_content_length(struct h1_parse *ps, struct ist v, const char *line)
{
	struct http_msg *msg = ps->msg;
	const char *p = v.ptr, *end = v.ptr + v.len;

	if (!ps->cl_line)
		ps->cl_line = line;
	for (;;) {
		struct ist e = h1_list_elem(&p, end);
		uint64_t n = 0;
		size_t i;

		if (!e.len)
			return h1_fail(ps, 400, "empty Content-Length", line);
		for (i = 0; i < e.len; i++) {
			unsigned int d = (unsigned int)(uint8_t)e.ptr[i] - '0';

			if (d > 9)
				return h1_fail(ps, 400, "invalid Content-Length", line);
			if (n > ((uint64_t)INT64_MAX - d) / 10)
				return h1_fail(ps, 400, "Content-Length too large", line);
			n = n * 10 + d;
		}
		if (ps->cl_count++ && n != msg->content_length)
			return h1_fail(ps, 400, "conflicting Content-Length values", line);
		msg->content_length = n;
		if (p == end)
			break;
		p++;
	}
	msg->flags |= HTTP_F_HAS_CL;
	if (ps->cl_count > 1)
		msg->flags |= HTTP_F_CL_MERGED;
	return H1_OK;
}

/* transfer-coding = token *( OWS ";" OWS token BWS "=" BWS ( token / quoted-string ) )
 * (RFC 9110 section 10.1.4). Returns 0 if <e> is not one; chunked takes no
 * parameter. A quoted-string holding a comma has been split by the list
 * walk and is refused: strict, and never seen in practice. */
static int h1_coding(struct ist e, int *is_chunked)
{
	const char *p = e.ptr, *end = e.ptr + e.len, *tok = p;

	while (p < end && (CLS(*p) & C_TCHAR))
		p++;
	if (p == tok)
		return 0;
	*is_chunked = H1_IST_EQ(h1_ist(tok, (size_t)(p - tok)), "chunked");
	while (p < end) {
		if (*is_chunked)
			return 0;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end || *p++ != ';')
			return 0;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		tok = p;
		while (p < end && (CLS(*p) & C_TCHAR))
			p++;
		if (p == tok)
			return 0;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end || *p++ != '=')
			return 0;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end && *p == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\' && ++p == end)
					return 0;
			if (p++ == end)
				return 0;
		} else {
			tok = p;
			while (p < end && (CLS(*p) & C_TCHAR))
				p++;
			if (p == tok)
				return 0;
		}
	}
	return 1;
}

/* RFC 9112 section 6.1: the codings of all Transfer-Encoding lines form one
 * list; chunked may appear once and, to frame a request, must be last. */
static enum h1_result h1_transfer_encoding(struct h1_parse *ps, struct ist v, const char *line)
{
	const char *p = v.ptr, *end = v.ptr + v.len;

	if (!ps->te_line)
		ps->te_line = line;
	ps->msg->flags |= HTTP_F_HAS_TE;
	for (;;) {
		struct ist e = h1_list_elem(&p, end);
		int chunked = 0;

		if (!e.len)
			return h1_fail(ps, 400, "empty transfer coding", line);
		if (!h1_coding(e, &chunked))
			return h1_fail(ps, 400, "invalid transfer coding", line);
		if (chunked && ps->te_chunked)
			return h1_fail(ps, 400, "chunked applied twice", line);
		ps->te_chunked |= chunked;
		ps->te_last_chunked = chunked;
		if (p == end)
			break;
		p++;
	}
	return H1_OK;
}

/* Connection options are tokens (RFC 9110 section 7.6.1); unknown ones are
 * names of hop-by-hop fields, left to the caller. */
static void h1_connection(struct http_msg *msg, struct ist v)
{
	const char *p = v.ptr, *end = v.ptr + v.len;

	for (;;) {
		struct ist e = h1_list_elem(&p, end);

		if (H1_IST_EQ(e, "close"))
			msg->flags |= HTTP_F_CONN_CLOSE;
		else if (H1_IST_EQ(e, "keep-alive"))
			msg->flags |= HTTP_F_CONN_KA;
		else if (H1_IST_EQ(e, "upgrade"))
			msg->flags |= HTTP_F_CONN_UPGRADE;
		if (p == end)
			break;
		p++;
	}
}

/* RFC 9112 section 3.2: one Host, with a valid uri-host [ ":" port ]. */
static enum h1_result h1_host(struct h1_parse *ps, struct ist v, const char *line)
{
	size_t i;

	if (++ps->host_count > 1)
		return h1_fail(ps, 400, "several Host fields", line);
	for (i = 0; i < v.len; i++)
		if (!(CLS(v.ptr[i]) & C_HOST))
			return h1_fail(ps, 400, "invalid Host value", v.ptr + i);
	return H1_OK;
}

/* Looks at one stored field; dispatched on the name length first so that
 * ordinary fields cost one switch. */
static enum h1_result h1_on_field(struct h1_parse *ps, const struct http_hdr *h,
                                  const char *line)
{
	struct http_msg *msg = ps->msg;

	switch (h->name.len) {
	case 4:
		if (msg->is_request && H1_IST_EQ(h->name, "host"))
			return h1_host(ps, h->value, line);
		break;
	case 6:
		if (msg->is_request && H1_IST_EQ(h->name, "expect") &&
		    H1_IST_EQ(h->value, "100-continue"))
			msg->flags |= HTTP_F_EXPECT_100;
		break;
	case 7:
		if (H1_IST_EQ(h->name, "upgrade"))
			msg->flags |= HTTP_F_UPGRADE;
		break;
	case 10:
		if (H1_IST_EQ(h->name, "connection"))
			h1_connection(msg, h->value);
		break;
	case 14:
		if (H1_IST_EQ(h->name, "content-length"))
			return h1_content_length(ps, h->value, line);
		break;
	case 17:
		if (H1_IST_EQ(h->name, "transfer-encoding"))
			return h1_transfer_encoding(ps, h->value, line);
		break;
	}
	return H1_OK;
}

/* ------------------------------------------------------------------------ */
/* Field lines and the end of the head                                       */
/* ------------------------------------------------------------------------ */

/* field-line = field-name ":" OWS field-value OWS, then CRLF (RFC 9112 5). */
static enum h1_result h1_field_line(struct h1_parse *ps, const char **pp)
{
	struct http_msg *msg = ps->msg;
	const char *p = *pp, *end = ps->end, *line = p, *val, *vend;
	int relax = !!(ps->opts & H1_O_ACCEPT_INVALID);
	uint8_t name_ok = relax ? (C_TCHAR | C_NAME_RELAX) : C_TCHAR;
	uint8_t val_ok = relax ? (C_VAL | C_VAL_RELAX) : C_VAL;
	struct http_hdr *h;
	enum h1_result rc;

	/* RFC 9112 section 5.2: obs-fold is rejected, never relaxed: folding
	 * in place would need to rewrite the buffer, and forwarding it as is
	 * lets the next hop see a different field. The same goes for
	 * whitespace between the start line and the first field (section 2.2). */
	if (*p == ' ' || *p == '\t')
		return h1_fail(ps, 400, "obsolete line folding", p);
	while (p < end && (CLS(*p) & name_ok))
		p++;
	if (p == end)
		return H1_INCOMPLETE;
	if (*p != ':') {
		if (*p == ' ' || *p == '\t')
			return h1_fail(ps, 400, "whitespace before colon", p);
		if (*p == '\r' || *p == '\n')
			return h1_fail(ps, 400, "field line without colon", p);
		return h1_fail(ps, 400, "invalid character in field name", p);
	}
	if (p == line)
		return h1_fail(ps, 400, "empty field name", p);
	vend = p++;   /* name end, for now */
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	val = p;
	p = h1_skip_value(p, end, val_ok);
	if (p == end)
		return H1_INCOMPLETE;
	if (*p != '\r' && *p != '\n')
		return h1_fail(ps, 400, "invalid character in field value", p);
	if (msg->nhdrs >= msg->maxhdrs)
		return h1_fail(ps, 400, "too many header fields", line);
	h = &msg->hdrs[msg->nhdrs];
	h->name = h1_ist(line, (size_t)(vend - line));
	vend = p;
	while (vend > val && (vend[-1] == ' ' || vend[-1] == '\t'))
		vend--;
	h->value = h1_ist(val, (size_t)(vend - val));
	rc = h1_eol(ps, &p);
	if (rc != H1_OK)
		return rc;
	msg->nhdrs++;
	*pp = p;
	return h1_on_field(ps, h, line);
}

static enum h1_result h1_request_framing(struct h1_parse *ps)
{
	struct http_msg *msg = ps->msg;

	if ((msg->flags & HTTP_F_VER_11) && !ps->host_count && !(ps->opts & H1_O_HOST_OPTIONAL))
		return h1_fail(ps, 400, "missing Host", ps->buf + msg->head_len);
	if (!(msg->flags & HTTP_F_VER_11))
		msg->flags &= ~HTTP_F_EXPECT_100;   /* RFC 9110 section 10.1.1 */
	if (msg->flags & HTTP_F_HAS_TE) {
		/* RFC 9112 section 6.1: a 1.0 recipient cannot know chunked,
		 * both fields together are a smuggling attempt, and a last
		 * coding other than chunked leaves no way to find the end. */
		if (!(msg->flags & HTTP_F_VER_11))
			return h1_fail(ps, 400, "Transfer-Encoding in HTTP/1.0", ps->te_line);
		if (msg->flags & HTTP_F_HAS_CL)
			return h1_fail(ps, 400, "both Content-Length and Transfer-Encoding",
			               ps->te_line < ps->cl_line ? ps->cl_line : ps->te_line);
		if (!ps->te_last_chunked)
			return h1_fail(ps, 400, "chunked is not the final coding", ps->te_line);
		msg->flags |= HTTP_F_CHUNKED | HTTP_F_XFER_LEN;
	} else if (msg->flags & HTTP_F_HAS_CL) {
		msg->flags |= HTTP_F_XFER_LEN;
	} else {
		/* RFC 9112 section 6.3, rule 7: no body */
		msg->flags |= HTTP_F_BODYLESS | HTTP_F_XFER_LEN;
		msg->content_length = 0;
	}
	return H1_OK;
}

/* RFC 9112 section 6.3, in its order: HEAD, 1xx, 204, 304 and 2xx to
 * CONNECT have no body; then Transfer-Encoding overrides Content-Length;
 * then close-delimited. */
static enum h1_result h1_response_framing(struct h1_parse *ps, enum http_meth req_meth)
{
	struct http_msg *msg = ps->msg;
	int st = msg->status;

	if (msg->flags & HTTP_F_HAS_TE) {
		if (!(msg->flags & HTTP_F_VER_11))
			return h1_fail(ps, 502, "Transfer-Encoding in HTTP/1.0", ps->te_line);
		if (msg->flags & HTTP_F_HAS_CL) {
			msg->flags &= ~(HTTP_F_HAS_CL | HTTP_F_CL_MERGED);
			msg->flags |= HTTP_F_CL_DROP;
			msg->content_length = 0;
		}
		if (ps->te_last_chunked)
			msg->flags |= HTTP_F_CHUNKED;
	}
	if (req_meth == HTTP_METH_CONNECT && st >= 200 && st < 300)
		msg->flags |= HTTP_F_BODYLESS | HTTP_F_XFER_LEN | HTTP_F_TUNNEL;
	else if (st == 101)
		msg->flags |= HTTP_F_BODYLESS | HTTP_F_XFER_LEN | HTTP_F_TUNNEL;
	else if (req_meth == HTTP_METH_HEAD || st < 200 || st == 204 || st == 304)
		msg->flags |= HTTP_F_BODYLESS | HTTP_F_XFER_LEN;
	else if (msg->flags & (HTTP_F_CHUNKED | HTTP_F_HAS_CL))
		msg->flags |= HTTP_F_XFER_LEN;
	return H1_OK;
}

static void h1_msg_reset(struct http_msg *msg, int is_request, enum http_meth req_meth)
{
	msg->is_request = is_request;
	msg->meth = is_request ? HTTP_METH_OTHER : req_meth;
	msg->method = h1_ist(NULL, 0);
	msg->uri = h1_ist(NULL, 0);
	msg->status = 0;
	msg->reason = h1_ist(NULL, 0);
	msg->version = h1_ist(NULL, 0);
	msg->flags = 0;
	msg->content_length = 0;
	msg->nhdrs = 0;
	msg->head_len = 0;
}

enum h1_result h1_parse_head(const char *buf, size_t len, int is_request,
                             enum http_meth req_meth, size_t max_head,
                             unsigned int opts, struct http_msg *msg,
                             struct h1_error *err)
{
	struct h1_parse ps = {
		.buf = buf, .end = buf + (len < max_head ? len : max_head),
		.truncated = len >= max_head, .opts = opts, .msg = msg, .err = err,
	};
	const char *p = buf;
	enum h1_result rc;

	h1_msg_reset(msg, is_request, req_meth);
	rc = is_request ? h1_request_line(&ps, &p) : h1_status_line(&ps, &p);
	if (rc == H1_INCOMPLETE)
		return h1_need_more(&ps, 1);
	if (rc != H1_OK)
		return rc;
	for (;;) {
		if (p == ps.end)
			return h1_need_more(&ps, 0);
		if (*p == '\r' || *p == '\n')
			break;
		rc = h1_field_line(&ps, &p);
		if (rc == H1_INCOMPLETE)
			return h1_need_more(&ps, 0);
		if (rc != H1_OK)
			return rc;
	}
	rc = h1_eol(&ps, &p);
	if (rc == H1_INCOMPLETE)
		return h1_need_more(&ps, 0);
	if (rc != H1_OK)
		return rc;
	msg->head_len = (size_t)(p - buf);
	rc = is_request ? h1_request_framing(&ps) : h1_response_framing(&ps, req_meth);
	return rc == H1_OK ? H1_OK : H1_ERROR;
}

/* ------------------------------------------------------------------------ */
/* Chunked bodies (RFC 9112 section 7.1)                                     */
/* ------------------------------------------------------------------------ */

/* Positions inside a size line (c->sub, states H1C_SIZE and H1C_EXT):
 *   chunk-size [ chunk-ext ] CRLF
 *   chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
 * Whitespace is only accepted where the grammar has BWS: "5 \r\n" and
 * "5;a \r\n" are refused, since agents disagree on them. */
enum {
	CX_DIGITS = 0,   /* H1C_SIZE: in the hex digits */
	CX_SIZE_WS,      /* H1C_SIZE: BWS after the digits, ';' must follow */
	CX_PRE_NAME,     /* after ';' */
	CX_NAME,
	CX_POST_NAME,    /* BWS after a name: '=' or ';' must follow */
	CX_PRE_VAL,      /* after '=' */
	CX_VAL_TOKEN,
	CX_VAL_QUOTED,
	CX_VAL_ESCAPE,   /* after a backslash in a quoted value */
	CX_QUOTE_END,    /* right after the closing quote */
	CX_POST_VAL,     /* BWS after a value: ';' must follow */
};

/* Positions inside the trailer section (c->sub, state H1C_TRAILERS). */
enum {
	CT_LINE_START = 0,
	CT_NAME,
	CT_VALUE,
	CT_LINE_LF,      /* CR of a field line seen */
	CT_END_LF,       /* CR of the final empty line seen */
};

static int h1c_fail(struct h1_chunk *c, const char *reason)
{
	c->st = H1C_ERROR;
	c->reason = reason;
	return 0;
}

/* One byte of a chunk size. Returns 0 after an error. */
static int h1c_size_byte(struct h1_chunk *c, uint8_t ch)
{
	if (h1_hex[ch] != 0xff && c->sub == CX_DIGITS) {
		if (++c->size_digits > H1_CHUNK_SIZE_DIGITS_MAX)
			return h1c_fail(c, "chunk size too large");
		c->remaining = (c->remaining << 4) | h1_hex[ch];
		return 1;
	}
	if (!c->size_digits)
		return h1c_fail(c, "invalid chunk size");
	if (ch == ' ' || ch == '\t') {
		c->sub = CX_SIZE_WS;
	} else if (ch == ';') {
		c->st = H1C_EXT;
		c->sub = CX_PRE_NAME;
	} else if (ch == '\r' && c->sub == CX_DIGITS) {
		c->st = H1C_SIZE_LF;
	} else {
		return h1c_fail(c, "invalid chunk size line");
	}
	return 1;
}

/* One byte of chunk extensions. Returns 0 after an error. */
static int h1c_ext_byte(struct h1_chunk *c, uint8_t ch)
{
	uint8_t cls = h1_cls[ch];
	int ws = ch == ' ' || ch == '\t';

	if (++c->ext_len > H1_CHUNK_EXT_MAX)
		return h1c_fail(c, "chunk extensions too long");
	switch (c->sub) {
	case CX_PRE_NAME:
		if (ws)
			return 1;
		if (cls & C_TCHAR) {
			c->sub = CX_NAME;
			return 1;
		}
		break;
	case CX_NAME:
	case CX_POST_NAME:
		if (ws) {
			c->sub = CX_POST_NAME;
			return 1;
		}
		if ((cls & C_TCHAR) && c->sub == CX_NAME)
			return 1;
		if (ch == '=') {
			c->sub = CX_PRE_VAL;
			return 1;
		}
		if (ch == ';') {
			c->sub = CX_PRE_NAME;
			return 1;
		}
		if (ch == '\r' && c->sub == CX_NAME) {
			c->st = H1C_SIZE_LF;
			return 1;
		}
		break;
	case CX_PRE_VAL:
		if (ws)
			return 1;
		if (cls & C_TCHAR) {
			c->sub = CX_VAL_TOKEN;
			return 1;
		}
		if (ch == '"') {
			c->sub = CX_VAL_QUOTED;
			return 1;
		}
		break;
	case CX_VAL_TOKEN:
	case CX_QUOTE_END:
	case CX_POST_VAL:
		if (ws) {
			c->sub = CX_POST_VAL;
			return 1;
		}
		if ((cls & C_TCHAR) && c->sub == CX_VAL_TOKEN)
			return 1;
		if (ch == ';') {
			c->sub = CX_PRE_NAME;
			return 1;
		}
		if (ch == '\r' && c->sub != CX_POST_VAL) {
			c->st = H1C_SIZE_LF;
			return 1;
		}
		break;
	case CX_VAL_QUOTED:
		/* qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text */
		if (ch == '"')
			c->sub = CX_QUOTE_END;
		else if (ch == '\\')
			c->sub = CX_VAL_ESCAPE;
		else if (!(cls & C_VAL))
			break;
		return 1;
	case CX_VAL_ESCAPE:
		if (!(cls & C_VAL))
			break;
		c->sub = CX_VAL_QUOTED;
		return 1;
	}
	return h1c_fail(c, "invalid chunk extension");
}

/* One byte of the trailer section, same rules as header fields (RFC 9112
 * section 7.1.2). Returns 0 after an error, 2 when the body is complete. */
static int h1c_trailer_byte(struct h1_chunk *c, uint8_t ch)
{
	uint8_t cls = h1_cls[ch];

	if (++c->trailer_len > H1_CHUNK_TRAILERS_MAX)
		return h1c_fail(c, "trailer section too long");
	c->trailer_line_len++;
	switch (c->sub) {
	case CT_LINE_START:
		if (ch == '\r') {
			c->sub = CT_END_LF;
			return 1;
		}
		if (ch == ' ' || ch == '\t')
			return h1c_fail(c, "obsolete line folding in trailer");
		if (!(cls & C_TCHAR))
			return h1c_fail(c, "invalid trailer field name");
		c->sub = CT_NAME;
		return 1;
	case CT_NAME:
		if (cls & C_TCHAR)
			return 1;
		if (ch == ':') {
			c->sub = CT_VALUE;
			return 1;
		}
		if (ch == ' ' || ch == '\t')
			return h1c_fail(c, "whitespace before colon in trailer");
		return h1c_fail(c, "invalid trailer field name");
	case CT_VALUE:
		if (cls & C_VAL)
			return 1;
		if (ch == '\r') {
			c->sub = CT_LINE_LF;
			return 1;
		}
		return h1c_fail(c, "invalid trailer field value");
	case CT_LINE_LF:
		if (ch != '\n')
			return h1c_fail(c, "bare CR in trailer");
		c->sub = CT_LINE_START;
		c->trailer_line_len = 0;
		return 1;
	default: /* CT_END_LF */
		if (ch != '\n')
			return h1c_fail(c, "bare CR in trailer");
		c->st = H1C_DONE;
		return 2;
	}
}

void h1_chunk_init(struct h1_chunk *c)
{
	memset(c, 0, sizeof(*c));
	c->st = H1C_SIZE;
}

size_t h1_chunk_feed(struct h1_chunk *c, const char *buf, size_t len,
                     size_t *data_off, size_t *data_len)
{
	size_t i = 0, n;
	int got_data = 0, rc;

	if (data_off)
		*data_off = 0;
	if (data_len)
		*data_len = 0;
	while (i < len) {
		uint8_t ch = (uint8_t)buf[i];

		switch (c->st) {
		case H1C_SIZE:
			if (!h1c_size_byte(c, ch))
				return i;
			break;
		case H1C_EXT:
			if (!h1c_ext_byte(c, ch))
				return i;
			break;
		case H1C_SIZE_LF:
			if (ch != '\n') {
				h1c_fail(c, "bare CR in chunk size line");
				return i;
			}
			c->ext_len = 0;
			c->sub = CT_LINE_START;
			c->st = c->remaining ? H1C_DATA : H1C_TRAILERS;
			break;
		case H1C_DATA:
			n = len - i;
			if (n > c->remaining)
				n = (size_t)c->remaining;
			if (!got_data) {
				got_data = 1;
				if (data_off)
					*data_off = i;
				if (data_len)
					*data_len = n;
			}
			c->remaining -= n;
			c->body_len += n;
			i += n;
			if (!c->remaining)
				c->st = H1C_DATA_CR;
			continue;
		case H1C_DATA_CR:
			if (got_data && (c->opts & H1C_O_STOP_AFTER_DATA))
				return i;
			if (ch != '\r') {
				h1c_fail(c, "missing CRLF after chunk data");
				return i;
			}
			c->st = H1C_DATA_LF;
			break;
		case H1C_DATA_LF:
			if (ch != '\n') {
				h1c_fail(c, "missing CRLF after chunk data");
				return i;
			}
			c->st = H1C_SIZE;
			c->sub = CX_DIGITS;
			c->size_digits = 0;
			c->remaining = 0;
			break;
		case H1C_TRAILERS:
			rc = h1c_trailer_byte(c, ch);
			if (!rc)
				return i;
			if (rc == 2)
				return i + 1;
			break;
		default: /* H1C_DONE, H1C_ERROR */
			return i;
		}
		i++;
	}
	return i;
}
