/* sluice's own responses: default pages, errorfile / errorloc / http-error
 * replies, per-proxy tables and http-errors sets (see errors.h).
 *
 * Every reply, whatever built it, goes through one path: its raw text is
 * parsed by the HTTP/1 parser, checked, rewritten in canonical form by the
 * HTTP/1 serialiser and parsed again into the stored copy. A reply that is
 * stored is therefore one the parser accepts, with spans into its own
 * bytes.
 *
 * Concurrency: replies and tables change only during configuration
 * (one thread). At run time they are read-only; the built-in pages are
 * created once under pthread_once() and never freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sluice/core/errmsg.h>
#include <sluice/http/errors.h>
#include <sluice/http/h1.h>
#include <sluice/http/h1_out.h>
#include <sluice/http/msgedit.h>

const int http_err_codes[HTTP_ERR_NCODES] = {
	200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429,
	500, 501, 502, 503, 504,
};

/* Fields a reply head may have; HAProxy's tune.http.maxhdr default, the
 * start line counted as it counts it. */
#define REPLY_MAX_HDRS (HTTP_MAX_HDRS_DEFAULT - 1)

/* Built-in pages: status, whether the connection must close, and the
 * sentence of the page. */
/* The reason phrases are the ones HAProxy 2.6's own pages carry (clients
 * and tests match on status lines), which differ from RFC 9110's in places. */
static const struct {
	int status;
	int close;
	const char *reason;
	const char *text;
} builtin_pages[HTTP_ERR_NCODES] = {
	{ 200, 0, "OK", "The service is up." },
	{ 400, 1, "Bad request", "The request could not be understood: its syntax or framing is invalid." },
	{ 401, 0, "Unauthorized", "This resource requires valid credentials." },
	{ 403, 0, "Forbidden", "Access to this resource is denied by the proxy's rules." },
	{ 404, 0, "Not Found", "Nothing matches the requested resource." },
	{ 405, 0, "Method Not Allowed", "This resource does not accept the request method." },
	{ 407, 0, "Unauthorized", "The proxy requires valid credentials." },
	{ 408, 1, "Request Time-out", "The request was not received completely in time." },
	{ 410, 0, "Gone", "This resource has been removed for good." },
	{ 413, 0, "Payload Too Large", "The request body is larger than this service accepts." },
	{ 425, 0, "Too Early", "The request came as early data and was not processed; please retry it." },
	{ 429, 0, "Too Many Requests", "Too many requests were sent; please slow down and retry later." },
	{ 500, 0, "Internal Server Error", "The proxy ran into an internal error while handling the request." },
	{ 501, 0, "Not Implemented", "The proxy does not support what the request asks for." },
	{ 502, 0, "Bad Gateway", "The upstream server answered with a response that could not be used." },
	{ 503, 0, "Service Unavailable", "No server is able to take this request at the moment; please retry later." },
	{ 504, 0, "Gateway Time-out", "The upstream server did not answer in time." },
};

int http_err_slot(int status)
{
	int i;

	for (i = 0; i < HTTP_ERR_NCODES; i++)
		if (http_err_codes[i] == status)
			return i;
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Growing text, configuration time only                                     */
/* ------------------------------------------------------------------------ */

struct text {
	char *p;
	size_t len, size;
	int failed;
};

static void text_put(struct text *t, const char *s, size_t n)
{
	if (t->failed || !n)
		return;
	if (t->len + n > t->size) {
		size_t size = (t->size ? t->size : 256);
		char *p;

		while (size < t->len + n)
			size *= 2;
		p = realloc(t->p, size);
		if (!p) {
			t->failed = 1;
			return;
		}
		t->p = p;
		t->size = size;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
}

static void text_str(struct text *t, const char *s)
{
	text_put(t, s, strlen(s));
}

static void text_fmt(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_fmt(struct text *t, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		t->failed = 1;
		return;
	}
	text_put(t, tmp, (size_t)n);
}

/* ------------------------------------------------------------------------ */
/* Parsing and storing a reply                                               */
/* ------------------------------------------------------------------------ */

static struct http_reply *reply_alloc(size_t extra)
{
	struct http_reply *r = calloc(1, sizeof(*r) + extra);

	if (r)
		r->refcnt = 1;
	return r;
}

/* Why h1_parse_head() refused <data>, in words for the administrator. */
static int parse_failure(const char *name, const char *data, size_t len, enum h1_result rc,
                         const struct h1_error *perr, char *err, size_t errlen)
{
	if (len < 5 || memcmp(data, "HTTP/", 5) != 0)
		return errmsg_set(err, errlen, "'%s': not an HTTP response: it must start with "
		                  "a status line such as \"HTTP/1.1 503 Service Unavailable\"",
		                  name);
	if (rc == H1_INCOMPLETE)
		return errmsg_set(err, errlen, "'%s': incomplete HTTP response: no empty line "
		                  "ends the header section", name);
	return errmsg_set(err, errlen, "'%s': invalid HTTP response at byte %zu: %s",
	                  name, perr->offset, perr->reason);
}

/* The checks HAProxy makes on an error file, with sluice's strict parser:
 * a final status, a body whose size the head announces truly, nothing a
 * stored reply could not be re-sent as. */
static int check_response(const char *name, const struct http_msg *m, size_t body_len,
                          char *err, size_t errlen)
{
	if (m->status < 200)
		return errmsg_set(err, errlen, "'%s': %d is an interim status; a reply needs a "
		                  "final status (200 to 599)", name, m->status);
	if (m->flags & HTTP_F_HAS_TE)
		return errmsg_set(err, errlen, "'%s': Transfer-Encoding is not supported in a "
		                  "stored reply (%s); give the body a Content-Length instead",
		                  name, (m->flags & HTTP_F_CHUNKED) ? "chunked body" :
		                  "unknown length");
	if ((m->flags & HTTP_F_BODYLESS) && body_len)
		return errmsg_set(err, errlen, "'%s': a %d response has no body, yet %zu "
		                  "bytes follow its header section", name, m->status, body_len);
	if (!(m->flags & HTTP_F_BODYLESS) && (m->flags & HTTP_F_HAS_CL) &&
	    m->content_length != body_len)
		return errmsg_set(err, errlen, "'%s': the body is %zu bytes but Content-Length "
		                  "announces %llu", name, body_len,
		                  (unsigned long long)m->content_length);
	return 0;
}

/* Stores <head> + <body> in one block with the parsed head; <head> is
 * already canonical. */
static struct http_reply *reply_store(const char *head, size_t head_len, const char *body,
                                      size_t body_len, int nhdrs, unsigned int flags,
                                      char *err, size_t errlen)
{
	size_t hdrs_sz = (size_t)(nhdrs ? nhdrs : 1) * sizeof(struct http_hdr);
	struct http_reply *r = reply_alloc(hdrs_sz + head_len + body_len);
	struct h1_error perr;
	char *raw;

	if (!r) {
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	raw = (char *)(r + 1) + hdrs_sz;
	memcpy(raw, head, head_len);
	if (body_len)
		memcpy(raw + head_len, body, body_len);
	r->raw = raw;
	r->raw_len = head_len + body_len;
	r->head_len = head_len;
	r->flags = flags;
	r->msg.hdrs = (struct http_hdr *)(r + 1);
	r->msg.maxhdrs = nhdrs;
	if (h1_parse_head(raw, head_len + body_len, 0, HTTP_METH_GET, head_len + 1,
	                  H1_O_ACCEPT_INVALID, &r->msg, &perr) != H1_OK ||
	    r->msg.head_len != head_len) {
		/* the serialiser wrote what the parser refuses: a bug */
		free(r);
		errmsg_set(err, errlen, "internal error: canonical reply does not parse");
		return NULL;
	}
	r->status = r->msg.status;
	return r;
}

/* Stores the parsed <m> in canonical form: CRLF everywhere, one
 * Content-Length, and the Connection: close <oflags> may ask for. The
 * bound: each line grows by two bytes at most (CR, the SP after the
 * colon), and a line has three bytes at least. */
static struct http_reply *reply_canonical(const char *name, const struct http_msg *m,
                                          const char *body, size_t body_len,
                                          unsigned int oflags, unsigned int rflags,
                                          size_t max_size, char *err, size_t errlen)
{
	size_t room = 2 * m->head_len + 64;
	struct http_reply *r;
	char *head = malloc(room);
	ssize_t n;

	if (!head) {
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	n = h1_out_head(m, oflags, head, room);
	if (n < 0) {
		free(head);
		errmsg_set(err, errlen, "'%s': internal error: head does not fit", name);
		return NULL;
	}
	if ((size_t)n + body_len > max_size) {
		free(head);
		errmsg_set(err, errlen, "'%s': %zu bytes once its head is written with CRLF "
		           "line ends, more than tune.bufsize (%zu)", name,
		           (size_t)n + body_len, max_size);
		return NULL;
	}
	r = reply_store(head, (size_t)n, body, body_len, m->nhdrs + 1, rflags, err, errlen);
	free(head);
	if (r && r->msg.nhdrs > REPLY_MAX_HDRS) {
		/* the field limit applies to what is sent, which is what our own
		 * and the clients' parsers will read */
		http_reply_release(r);
		errmsg_set(err, errlen, "'%s': too many header fields once Connection: close "
		           "is added for its body without Content-Length", name);
		return NULL;
	}
	return r;
}

struct http_reply *http_reply_parse(const char *data, size_t len, const char *name,
                                    size_t max_size, char *err, size_t errlen)
{
	struct http_hdr hdrs[REPLY_MAX_HDRS];
	struct http_msg m = { .hdrs = hdrs, .maxhdrs = REPLY_MAX_HDRS };
	struct h1_error perr = { 0 };
	struct http_reply *r;
	unsigned int oflags = 0, rflags = 0;
	enum h1_result rc;
	size_t body_len;

	if (!len) {
		r = reply_alloc(0);
		if (!r)
			errmsg_set(err, errlen, "out of memory");
		else
			r->flags = HTTP_REPLY_F_EMPTY;
		return r;
	}
	if (len > max_size) {
		errmsg_set(err, errlen, "'%s': %zu bytes, more than tune.bufsize (%zu)",
		           name, len, max_size);
		return NULL;
	}
	/* the bound is the data itself: "incomplete" means the head never ends */
	rc = h1_parse_head(data, len, 0, HTTP_METH_GET, len + 1, H1_O_ACCEPT_INVALID, &m, &perr);
	if (rc != H1_OK) {
		parse_failure(name, data, len, rc, &perr, err, errlen);
		return NULL;
	}
	body_len = len - m.head_len;
	if (check_response(name, &m, body_len, err, errlen) < 0)
		return NULL;
	if (!(m.flags & HTTP_F_XFER_LEN)) {
		/* RFC 9112 section 6.3: the body ends with the connection */
		oflags |= H1O_F_CONN_CLOSE;
		rflags |= HTTP_REPLY_F_CLOSE;
	}
	if ((m.flags & HTTP_F_CONN_CLOSE) ||
	    (!(m.flags & HTTP_F_VER_11) && !(m.flags & HTTP_F_CONN_KA)))
		rflags |= HTTP_REPLY_F_CLOSE;

	return reply_canonical(name, &m, data + m.head_len, body_len, oflags, rflags, max_size,
	                       err, errlen);
}

/* Reads a whole file that must fit in <max> bytes; one byte more is
 * enough to know it does not. */
static char *read_small_file(const char *path, size_t max, size_t *lenp, char *err,
                             size_t errlen)
{
	char *data = malloc(max + 1);
	size_t len = 0;
	int fd;

	if (!data) {
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errmsg_set(err, errlen, "'%s': cannot open: %s", path, strerror(errno));
		free(data);
		return NULL;
	}
	while (len <= max) {
		ssize_t got = read(fd, data + len, max + 1 - len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			errmsg_set(err, errlen, "'%s': cannot read: %s", path, strerror(errno));
			close(fd);
			free(data);
			return NULL;
		}
		if (!got)
			break;
		len += (size_t)got;
	}
	close(fd);
	if (len > max) {
		errmsg_set(err, errlen, "'%s': larger than tune.bufsize (%zu bytes)", path, max);
		free(data);
		return NULL;
	}
	*lenp = len;
	return data;
}

struct http_reply *http_reply_load_file(const char *path, size_t max_size,
                                        char *err, size_t errlen)
{
	struct http_reply *r;
	size_t len = 0;
	char *data = read_small_file(path, max_size, &len, err, errlen);

	if (!data)
		return NULL;
	r = http_reply_parse(data, len, path, max_size, err, errlen);
	free(data);
	return r;
}

static int is_token(struct ist s)
{
	size_t i;

	if (!s.len)
		return 0;
	for (i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c && strchr("!#$%&'*+-.^_`|~", c))))
			return 0;
	}
	return 1;
}

/* What would end a line or a string has no place in a field value. */
static int is_safe_value(const char *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == '\r' || v[i] == '\n' || v[i] == '\0')
			return 0;
	return 1;
}

/* Start line and fixed fields of a built reply (no final CRLF). */
static int build_head(struct text *t, int status, const char *reason,
                      const char *content_type, int has_body,
                      const struct http_hdr *hdrs, int nhdrs, char *err, size_t errlen)
{
	int i;

	if (status < 200 || status > 599)
		return errmsg_set(err, errlen, "status %d out of range (200 to 599)", status);
	if (has_body && (!content_type || !*content_type))
		return errmsg_set(err, errlen, "a content-type is required with a non-empty "
		                  "payload");
	if (has_body && !is_safe_value(content_type, strlen(content_type)))
		return errmsg_set(err, errlen, "control character in content-type");
	for (i = 0; i < nhdrs; i++) {
		if (!is_token(hdrs[i].name))
			return errmsg_set(err, errlen, "invalid field name '%.*s'",
			                  (int)hdrs[i].name.len, hdrs[i].name.ptr);
		if (!is_safe_value(hdrs[i].value.ptr, hdrs[i].value.len))
			return errmsg_set(err, errlen, "control character in the value of '%.*s'",
			                  (int)hdrs[i].name.len, hdrs[i].name.ptr);
	}
	text_fmt(t, "HTTP/1.1 %03d %s\r\n", status, reason);
	if (has_body) {
		text_str(t, "Content-Type: ");
		text_str(t, content_type);
		text_str(t, "\r\n");
	}
	for (i = 0; i < nhdrs; i++) {
		text_put(t, hdrs[i].name.ptr, hdrs[i].name.len);
		text_str(t, ": ");
		text_put(t, hdrs[i].value.ptr, hdrs[i].value.len);
		text_str(t, "\r\n");
	}
	if (t->failed)
		return errmsg_set(err, errlen, "out of memory");
	return 0;
}

/* A built reply goes through the errorfile path: the parser validates the
 * fields the configuration gave. <what> names it in messages. */
static struct http_reply *reply_from_text(struct text *t, const char *what, size_t max_size,
                                          char *err, size_t errlen)
{
	struct http_reply *r = NULL;

	if (t->failed)
		errmsg_set(err, errlen, "out of memory");
	else
		r = http_reply_parse(t->p, t->len, what, max_size, err, errlen);
	free(t->p);
	return r;
}

struct http_reply *http_reply_redirect(int status, const char *url, size_t max_size,
                                       char *err, size_t errlen)
{
	struct text t = { 0 };
	size_t i;

	if (status != 302 && status != 303) {
		errmsg_set(err, errlen, "redirect status must be 302 or 303, not %d", status);
		return NULL;
	}
	if (!url || !*url) {
		errmsg_set(err, errlen, "missing URL");
		return NULL;
	}
	for (i = 0; url[i]; i++) {
		if ((unsigned char)url[i] < 0x20 || url[i] == 0x7f) {
			errmsg_set(err, errlen, "'%s': control character in URL", url);
			return NULL;
		}
	}
	/* a redirect names 302 "Found", as HAProxy's errorloc does */
	text_fmt(&t, "HTTP/1.1 %d %s\r\n", status, status == 302 ? "Found" :
	         http_status_reason(status));
	text_str(&t, "Location: ");
	text_str(&t, url);
	text_str(&t, "\r\nContent-Length: 0\r\nCache-Control: no-cache\r\n\r\n");
	return reply_from_text(&t, url, max_size, err, errlen);
}

/* RFC 9110 sections 8.6, 15.2, 15.3.5 and 15.4.5: 1xx, 204 and 304 responses
 * have no body, and HAProxy's replies then have no Content-Length either
 * (a 204 must not carry one). */
static int status_has_no_body(int status)
{
	return status < 200 || status == 204 || status == 304;
}

struct http_reply *http_reply_build(int status, const char *content_type,
                                    const char *body, size_t body_len,
                                    const struct http_hdr *hdrs, int nhdrs,
                                    size_t max_size, char *err, size_t errlen)
{
	struct text t = { 0 };

	if (build_head(&t, status, http_status_reason(status), content_type, body_len > 0, hdrs,
	               nhdrs, err, errlen) < 0) {
		free(t.p);
		return NULL;
	}
	if (status_has_no_body(status) && !body_len)
		text_str(&t, "\r\n");
	else
		text_fmt(&t, "Content-Length: %zu\r\n\r\n", body_len);
	text_put(&t, body, body_len);
	return reply_from_text(&t, "http-error reply", max_size, err, errlen);
}

struct http_reply *http_reply_build_file(int status, const char *content_type,
                                         const char *path, const struct http_hdr *hdrs,
                                         int nhdrs, size_t max_size, char *err,
                                         size_t errlen)
{
	struct http_reply *r;
	size_t len = 0;
	char *body = read_small_file(path, max_size, &len, err, errlen);

	if (!body)
		return NULL;
	r = http_reply_build(status, content_type, body, len, hdrs, nhdrs, max_size,
	                     err, errlen);
	free(body);
	return r;
}

/* The fixed part of a dynamic reply must parse as a head of its own. */
static int check_fixed_head(struct text *t, char *err, size_t errlen)
{
	struct http_hdr hdrs[REPLY_MAX_HDRS];
	struct http_msg m = { .hdrs = hdrs, .maxhdrs = REPLY_MAX_HDRS };
	struct h1_error perr;

	text_str(t, "\r\n");
	if (t->failed)
		return errmsg_set(err, errlen, "out of memory");
	if (h1_parse_head(t->p, t->len, 0, HTTP_METH_GET, t->len + 1, H1_O_ACCEPT_INVALID,
	                  &m, &perr) != H1_OK)
		return parse_failure("http-error reply", t->p, t->len, H1_ERROR, &perr, err, errlen);
	t->len -= 2;
	return 0;
}

struct http_reply *http_reply_build_dynamic(int status, const char *content_type,
                                            http_reply_fmt_fn fn, const void *body_fmt,
                                            const struct http_reply_dyn_hdr *dyn, int ndyn,
                                            const struct http_hdr *hdrs, int nhdrs,
                                            char *err, size_t errlen)
{
	struct text t = { 0 };
	struct http_reply *r;
	struct http_reply_dyn_hdr *d;
	size_t dyn_sz = (size_t)ndyn * sizeof(*d), names = 0;
	char *p;
	int i, is_redirect = 0;

	if (!fn) {
		errmsg_set(err, errlen, "no format renderer");
		return NULL;
	}
	for (i = 0; i < ndyn; i++) {
		if (!is_token(dyn[i].name)) {
			errmsg_set(err, errlen, "invalid field name '%.*s'", (int)dyn[i].name.len,
			           dyn[i].name.ptr);
			return NULL;
		}
		names += dyn[i].name.len;
	}
	for (i = 0; i < ndyn; i++)
		if (status == 302 && dyn[i].name.len == 8 &&
		    strncasecmp(dyn[i].name.ptr, "location", 8) == 0)
			is_redirect = 1;
	if (build_head(&t, status, is_redirect ? "Found" : http_status_reason(status),
	               content_type, body_fmt != NULL, hdrs, nhdrs, err, errlen) < 0 ||
	    check_fixed_head(&t, err, errlen) < 0) {
		free(t.p);
		return NULL;
	}
	r = reply_alloc(dyn_sz + names + t.len);
	if (!r) {
		free(t.p);
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	d = (struct http_reply_dyn_hdr *)(r + 1);
	p = (char *)(d + ndyn);
	for (i = 0; i < ndyn; i++) {
		memcpy(p, dyn[i].name.ptr, dyn[i].name.len);
		d[i].name = (struct ist){ p, dyn[i].name.len };
		d[i].fmt = dyn[i].fmt;
		p += dyn[i].name.len;
	}
	memcpy(p, t.p, t.len);
	free(t.p);
	r->raw = p;
	r->raw_len = t.len;
	r->status = status;
	r->flags = HTTP_REPLY_F_DYNAMIC;
	r->fmt_fn = fn;
	r->body_fmt = body_fmt;
	r->dyn = d;
	r->ndyn = ndyn;
	return r;
}

void http_reply_ref(struct http_reply *r)
{
	if (r && !(r->flags & HTTP_REPLY_F_BUILTIN))
		r->refcnt++;
}

void http_reply_release(struct http_reply *r)
{
	if (r && !(r->flags & HTTP_REPLY_F_BUILTIN) && --r->refcnt == 0)
		free(r);
}

/* ------------------------------------------------------------------------ */
/* Rendering (run time)                                                      */
/* ------------------------------------------------------------------------ */

/* A rendered field value ends at the first byte that would end the line:
 * what a sample returns must not add fields or split the response. */
static size_t safe_value_len(const char *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == '\r' || v[i] == '\n' || v[i] == '\0')
			break;
	while (i && (v[i - 1] == ' ' || v[i - 1] == '\t'))
		i--;
	return i;
}

static ssize_t render_dynamic(const struct http_reply *r, void *ctx, char *out, size_t room)
{
	/* "Content-Length: " + 20 digits + CRLF + the final CRLF */
	enum { CL_MAX = 16 + 20 + 2 + 2 };
	size_t pos = r->raw_len;
	ssize_t n = 0;
	char cl[CL_MAX + 1];
	int i, cl_len;

	if (room < pos)
		return -1;
	memcpy(out, r->raw, pos);
	for (i = 0; i < r->ndyn; i++) {
		const struct http_reply_dyn_hdr *d = &r->dyn[i];
		size_t vstart, skip = 0;

		if (room - pos < d->name.len + 2)
			return -1;
		memcpy(out + pos, d->name.ptr, d->name.len);
		memcpy(out + pos + d->name.len, ": ", 2);
		vstart = pos + d->name.len + 2;
		n = r->fmt_fn(d->fmt, ctx, out + vstart, room - vstart);
		if (n < 0)
			return -1;
		while (skip < (size_t)n && (out[vstart + skip] == ' ' || out[vstart + skip] == '\t'))
			skip++;
		n = (ssize_t)safe_value_len(out + vstart + skip, (size_t)n - skip);
		memmove(out + vstart, out + vstart + skip, (size_t)n);
		pos = vstart + (size_t)n;
		if (room - pos < 2)
			return -1;
		memcpy(out + pos, "\r\n", 2);
		pos += 2;
	}
	if (room - pos < CL_MAX)
		return -1;
	n = 0;
	if (r->body_fmt) {
		n = r->fmt_fn(r->body_fmt, ctx, out + pos + CL_MAX, room - pos - CL_MAX);
		if (n < 0)
			return -1;
	}
	if (status_has_no_body(r->status) && !n)
		cl_len = snprintf(cl, sizeof(cl), "\r\n");
	else
		cl_len = snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n\r\n", (size_t)n);
	memmove(out + pos + cl_len, out + pos + CL_MAX, (size_t)n);
	memcpy(out + pos, cl, (size_t)cl_len);
	return (ssize_t)(pos + (size_t)cl_len + (size_t)n);
}

ssize_t http_reply_render(const struct http_reply *r, void *ctx, char *out, size_t room)
{
	if (r->flags & HTTP_REPLY_F_EMPTY)
		return 0;
	if (r->flags & HTTP_REPLY_F_DYNAMIC)
		return render_dynamic(r, ctx, out, room);
	if (room < r->raw_len)
		return -1;
	memcpy(out, r->raw, r->raw_len);
	return (ssize_t)r->raw_len;
}

/* ------------------------------------------------------------------------ */
/* Built-in pages                                                            */
/* ------------------------------------------------------------------------ */

static struct http_reply *builtin[HTTP_ERR_NCODES];
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static struct http_reply *make_builtin(int slot)
{
	int status = builtin_pages[slot].status;
	const char *reason = builtin_pages[slot].reason;
	struct text body = { 0 }, t = { 0 };
	struct http_reply *r;
	char err[256];

	text_fmt(&body, "<!DOCTYPE html>\n<html><head><title>%d %s</title></head>\n",
	         status, reason);
	text_fmt(&body, "<body><h1>%d %s</h1>\n<p>", status, reason);
	text_str(&body, builtin_pages[slot].text);
	text_str(&body, "</p>\n</body></html>\n");
	text_fmt(&t, "HTTP/1.1 %d %s\r\n", status, reason);
	text_fmt(&t, "Content-Type: text/html\r\nCache-Control: no-cache\r\n"
	         "Content-Length: %zu\r\n", body.len);
	if (builtin_pages[slot].close)
		text_str(&t, "Connection: close\r\n");
	text_str(&t, "\r\n");
	if (!body.failed)
		text_put(&t, body.p, body.len);
	free(body.p);
	if (body.failed)
		t.failed = 1;
	r = reply_from_text(&t, "built-in page", (size_t)1 << 20, err, sizeof(err));
	if (r)
		r->flags |= HTTP_REPLY_F_BUILTIN;
	return r;
}

static void builtin_init(void)
{
	int i;

	for (i = 0; i < HTTP_ERR_NCODES; i++)
		builtin[i] = make_builtin(i);
}

const struct http_reply *http_reply_builtin(int status)
{
	int slot = http_err_slot(status);

	if (slot < 0)
		return NULL;
	pthread_once(&builtin_once, builtin_init);
	return builtin[slot];
}

/* ------------------------------------------------------------------------ */
/* Tables and sets (configuration time)                                      */
/* ------------------------------------------------------------------------ */

struct http_errors_import {
	struct http_errors_import *next;
	unsigned int seq;
	unsigned int slots;         /* bit per slot of the listed codes; 0: all */
	char *set;
	char *file;
	int line;
};

void http_errors_init(struct http_errors *t)
{
	memset(t, 0, sizeof(*t));
}

static void free_imports(struct http_errors_import *imp)
{
	while (imp) {
		struct http_errors_import *next = imp->next;

		free(imp->set);
		free(imp->file);
		free(imp);
		imp = next;
	}
}

void http_errors_deinit(struct http_errors *t)
{
	int i;

	for (i = 0; i < HTTP_ERR_NCODES; i++)
		http_reply_release(t->reply[i]);
	free_imports(t->imports);
	http_errors_init(t);
}

static struct http_errors_import *import_new(const char *set, unsigned int slots,
                                             const char *file, int line, unsigned int seq)
{
	struct http_errors_import *imp = calloc(1, sizeof(*imp));

	if (!imp)
		return NULL;
	imp->set = strdup(set);
	imp->file = file ? strdup(file) : NULL;
	if (!imp->set || (file && !imp->file)) {
		free_imports(imp);
		return NULL;
	}
	imp->slots = slots;
	imp->line = line;
	imp->seq = seq;
	return imp;
}

/* Appends to the pending list, keeping configuration order. */
static void import_append(struct http_errors *t, struct http_errors_import *imp)
{
	struct http_errors_import **pp = &t->imports;

	while (*pp)
		pp = &(*pp)->next;
	*pp = imp;
}

int http_errors_copy(struct http_errors *dst, const struct http_errors *src,
                     char *err, size_t errlen)
{
	const struct http_errors_import *imp;
	int i;

	for (i = 0; i < HTTP_ERR_NCODES; i++) {
		if (src->reply[i])
			http_reply_ref(src->reply[i]);
		http_reply_release(dst->reply[i]);
		dst->reply[i] = src->reply[i];
		dst->seq[i] = src->seq[i];
	}
	free_imports(dst->imports);
	dst->imports = NULL;
	dst->next_seq = src->next_seq;
	for (imp = src->imports; imp; imp = imp->next) {
		struct http_errors_import *c = import_new(imp->set, imp->slots, imp->file,
		                                          imp->line, imp->seq);

		if (!c)
			return errmsg_set(err, errlen, "out of memory");
		import_append(dst, c);
	}
	return 0;
}

static int slot_or_fail(int code, char *err, size_t errlen)
{
	int slot = http_err_slot(code);

	if (slot < 0)
		return errmsg_set(err, errlen, "status code '%d' not handled", code);
	return slot;
}

int http_errors_set(struct http_errors *t, int code, struct http_reply *r,
                    char *err, size_t errlen)
{
	int slot = slot_or_fail(code, err, errlen);

	if (slot < 0)
		return -1;
	http_reply_ref(r);
	http_reply_release(t->reply[slot]);
	t->reply[slot] = r;
	t->seq[slot] = ++t->next_seq;
	return 0;
}

int http_errors_reset(struct http_errors *t, int code, char *err, size_t errlen)
{
	int slot = slot_or_fail(code, err, errlen);

	if (slot < 0)
		return -1;
	http_reply_release(t->reply[slot]);
	t->reply[slot] = NULL;
	t->seq[slot] = ++t->next_seq;
	return 0;
}

int http_errors_import(struct http_errors *t, const char *set, const int *codes,
                       int ncodes, const char *file, int line, char *err, size_t errlen)
{
	struct http_errors_import *imp;
	unsigned int slots = 0;
	int i;

	if (!set || !*set)
		return errmsg_set(err, errlen, "missing http-errors section name");
	for (i = 0; i < ncodes; i++) {
		int slot = slot_or_fail(codes[i], err, errlen);

		if (slot < 0)
			return -1;
		slots |= 1u << slot;
	}
	imp = import_new(set, slots, file, line, ++t->next_seq);
	if (!imp)
		return errmsg_set(err, errlen, "out of memory");
	import_append(t, imp);
	return 0;
}

struct http_errors_set *http_errors_set_find(const struct http_errors_sets *sets,
                                             const char *name)
{
	struct http_errors_set *s;

	for (s = sets->head; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

struct http_errors_set *http_errors_set_new(struct http_errors_sets *sets, const char *name,
                                            const char *file, int line,
                                            char *err, size_t errlen)
{
	struct http_errors_set *s, **pp;

	if (!name || !*name) {
		errmsg_set(err, errlen, "missing name");
		return NULL;
	}
	s = http_errors_set_find(sets, name);
	if (s) {
		errmsg_set(err, errlen, "http-errors section '%s' already declared at %s:%d",
		           name, s->file ? s->file : "?", s->line);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->name = strdup(name)) || (file && !(s->file = strdup(file)))) {
		if (s)
			free(s->name);
		free(s);
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	s->line = line;
	http_errors_init(&s->errors);
	/* keep declaration order, for listings */
	for (pp = &sets->head; *pp; pp = &(*pp)->next)
		;
	*pp = s;
	return s;
}

void http_errors_sets_free(struct http_errors_sets *sets)
{
	struct http_errors_set *s = sets->head;

	while (s) {
		struct http_errors_set *next = s->next;

		http_errors_deinit(&s->errors);
		free(s->name);
		free(s->file);
		free(s);
		s = next;
	}
	sets->head = NULL;
}

int http_errors_resolve(struct http_errors *t, const struct http_errors_sets *sets,
                        http_errors_warn_fn warn, char *err, size_t errlen)
{
	struct http_errors_import *imp;
	int rc = 0, i;

	for (imp = t->imports; imp && !rc; imp = imp->next) {
		const struct http_errors_set *s = http_errors_set_find(sets, imp->set);

		if (!s) {
			rc = errmsg_set(err, errlen, "unknown http-errors section '%s' (at %s:%d)",
			                imp->set, imp->file ? imp->file : "?", imp->line);
			break;
		}
		for (i = 0; i < HTTP_ERR_NCODES; i++) {
			struct http_reply *r = s->errors.reply[i];

			if (imp->slots && !(imp->slots & (1u << i)))
				continue;
			if (!r) {
				if (imp->slots && warn)
					warn(imp->file, imp->line, "status '%d' not declared in "
					     "http-errors section '%s'", http_err_codes[i], imp->set);
				continue;
			}
			/* a directive after the import wins over it */
			if (t->seq[i] > imp->seq)
				continue;
			http_reply_ref(r);
			http_reply_release(t->reply[i]);
			t->reply[i] = r;
			t->seq[i] = imp->seq;
		}
	}
	if (!rc) {
		free_imports(t->imports);
		t->imports = NULL;
	}
	return rc;
}

const struct http_reply *http_errors_find(const struct http_errors *be,
                                          const struct http_errors *fe, int status)
{
	int slot = http_err_slot(status);

	if (slot < 0)
		return NULL;
	if (be && be->reply[slot])
		return be->reply[slot];
	if (fe && fe->reply[slot])
		return fe->reply[slot];
	return http_reply_builtin(status);
}
