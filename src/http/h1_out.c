/* HTTP/1 serialisation of the message model: heads and chunked framing.
 * The flags and the rules they apply are described in h1_out.h.
 *
 * One pass over the field list; each field is written as it is, dropped, or
 * rewritten (Connection options, a merged Content-Length). The list of
 * fields Connection names is gathered first, so that deciding about a field
 * costs a comparison with each named option, not a scan of Connection.
 *
 * Concurrency: nothing shared.
 */
#include <string.h>
#include <strings.h>
#include <sluice/http/h1_case.h>
#include <sluice/http/h1_out.h>

#define LOWER(c) ((unsigned char)((c) >= 'A' && (c) <= 'Z' ? (c) + 0x20 : (c)))

/* Options of Connection remembered for H1O_F_CONN_NAMED; past this many,
 * the remaining ones are found by scanning the Connection fields again. */
#define CONN_NAMED_MAX 16

/* Fields the serialiser knows about, by lower-case name. */
enum field_kind {
	FK_OTHER = 0, FK_TE, FK_HOST, FK_TRAILER, FK_UPGRADE, FK_CONNECTION,
	FK_KEEP_ALIVE, FK_CONTENT_LENGTH, FK_PROXY_CONNECTION, FK_TRANSFER_ENCODING,
};

struct writer {
	char *p;
	char *end;
	int full;            /* something did not fit */
};

struct head_ctx {
	const struct http_msg *msg;
	unsigned int flags;
	int cl_written;                 /* a Content-Length line went out */
	int named_n;                    /* options kept in named[] */
	int named_more;                 /* more than CONN_NAMED_MAX options */
	struct ist named[CONN_NAMED_MAX];
};

static inline struct ist mk_ist(const char *p, size_t len)
{
	return (struct ist){ p, len };
}

static int name_is(struct ist s, const char *lower, size_t len)
{
	size_t i;

	if (s.len != len)
		return 0;
	for (i = 0; i < len; i++)
		if (LOWER(s.ptr[i]) != (unsigned char)lower[i])
			return 0;
	return 1;
}

#define NAME_IS(s, lit) name_is((s), (lit), sizeof(lit) - 1)

static int ist_ieq(struct ist a, struct ist b)
{
	size_t i;

	if (a.len != b.len)
		return 0;
	for (i = 0; i < a.len; i++)
		if (LOWER(a.ptr[i]) != LOWER(b.ptr[i]))
			return 0;
	return 1;
}

static enum field_kind field_kind(struct ist n)
{
	switch (n.len) {
	case 2:
		return NAME_IS(n, "te") ? FK_TE : FK_OTHER;
	case 4:
		return NAME_IS(n, "host") ? FK_HOST : FK_OTHER;
	case 7:
		if (NAME_IS(n, "trailer"))
			return FK_TRAILER;
		return NAME_IS(n, "upgrade") ? FK_UPGRADE : FK_OTHER;
	case 10:
		if (NAME_IS(n, "connection"))
			return FK_CONNECTION;
		return NAME_IS(n, "keep-alive") ? FK_KEEP_ALIVE : FK_OTHER;
	case 14:
		return NAME_IS(n, "content-length") ? FK_CONTENT_LENGTH : FK_OTHER;
	case 16:
		return NAME_IS(n, "proxy-connection") ? FK_PROXY_CONNECTION : FK_OTHER;
	case 17:
		return NAME_IS(n, "transfer-encoding") ? FK_TRANSFER_ENCODING : FK_OTHER;
	}
	return FK_OTHER;
}

/* ------------------------------------------------------------------------ */
/* Output primitives                                                         */
/* ------------------------------------------------------------------------ */

static void w_put(struct writer *w, const char *s, size_t n)
{
	if (w->full || n > (size_t)(w->end - w->p)) {
		w->full = 1;
		return;
	}
	if (n)
		memcpy(w->p, s, n);
	w->p += n;
}

#define W_LIT(w, lit) w_put((w), (lit), sizeof(lit) - 1)

static void w_ist(struct writer *w, struct ist s)
{
	w_put(w, s.ptr, s.len);
}

static void w_u64(struct writer *w, uint64_t v, int base)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = "0123456789abcdef"[v % (uint64_t)base];
		v /= (uint64_t)base;
	} while (v);
	w_put(w, tmp + i, sizeof(tmp) - (size_t)i);
}

static void w_field(struct writer *w, struct ist name, struct ist value)
{
	w_ist(w, name);
	W_LIT(w, ": ");
	w_ist(w, value);
	W_LIT(w, "\r\n");
}

/* ------------------------------------------------------------------------ */
/* Connection options                                                        */
/* ------------------------------------------------------------------------ */

/* Next option of a Connection value from *pp (RFC 9110 section 7.6.1: a
 * list of tokens, OWS around commas); *pp becomes NULL after the last one.
 * Returns 0 when there is none left. */
static int next_option(const char **pp, const char *end, struct ist *tok)
{
	const char *p = *pp, *s, *e;

	if (!p)
		return 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	s = p;
	while (p < end && *p != ',')
		p++;
	e = p;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*tok = mk_ist(s, (size_t)(e - s));
	*pp = p < end ? p + 1 : NULL;
	return 1;
}

static int keep_option(const struct head_ctx *c, struct ist tok)
{
	unsigned int f = c->flags;

	if (NAME_IS(tok, "close") || NAME_IS(tok, "keep-alive"))
		return !(f & (H1O_F_CONN_CLOSE | H1O_F_CONN_KA | H1O_F_CONN_SCRUB |
		              H1O_F_HOP_BY_HOP));
	if (NAME_IS(tok, "upgrade"))
		return (f & H1O_F_TUNNEL) || !(f & (H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED));
	if (!tok.len)
		return !(f & (H1O_F_CONN_CLOSE | H1O_F_CONN_KA | H1O_F_CONN_SCRUB |
		              H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED));
	return !(f & (H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED));
}

/* Writes a Connection field with the options kept: verbatim if all are,
 * nothing if none is. */
static void w_connection(struct writer *w, const struct head_ctx *c, const struct http_hdr *h)
{
	const char *end = h->value.ptr + h->value.len, *p;
	struct ist tok;
	int kept = 0, dropped = 0;

	for (p = h->value.ptr; next_option(&p, end, &tok);) {
		if (keep_option(c, tok))
			kept++;
		else
			dropped++;
	}
	if (!kept)
		return;
	if (!dropped) {
		w_field(w, h->name, h->value);
		return;
	}
	w_ist(w, h->name);
	W_LIT(w, ": ");
	kept = 0;
	for (p = h->value.ptr; next_option(&p, end, &tok);) {
		if (!keep_option(c, tok))
			continue;
		if (kept++)
			W_LIT(w, ", ");
		w_ist(w, tok);
	}
	W_LIT(w, "\r\n");
}

/* Gathers the options that name fields, for H1O_F_CONN_NAMED. */
static void gather_named(struct head_ctx *c)
{
	const struct http_msg *m = c->msg;
	int i;

	for (i = 0; i < m->nhdrs; i++) {
		const struct http_hdr *h = &m->hdrs[i];
		const char *p, *end;
		struct ist tok;

		if (!h->name.len || field_kind(h->name) != FK_CONNECTION)
			continue;
		end = h->value.ptr + h->value.len;
		for (p = h->value.ptr; next_option(&p, end, &tok);) {
			if (!tok.len || NAME_IS(tok, "close") || NAME_IS(tok, "keep-alive"))
				continue;
			if (c->named_n == CONN_NAMED_MAX) {
				c->named_more = 1;
				return;
			}
			c->named[c->named_n++] = tok;
		}
	}
}

static int is_named_by_connection(const struct head_ctx *c, struct ist name)
{
	const struct http_msg *m = c->msg;
	int i;

	for (i = 0; i < c->named_n; i++)
		if (ist_ieq(c->named[i], name))
			return 1;
	if (!c->named_more)
		return 0;
	for (i = 0; i < m->nhdrs; i++) {
		const struct http_hdr *h = &m->hdrs[i];
		const char *p, *end;
		struct ist tok;

		if (!h->name.len || field_kind(h->name) != FK_CONNECTION)
			continue;
		end = h->value.ptr + h->value.len;
		for (p = h->value.ptr; next_option(&p, end, &tok);)
			if (ist_ieq(tok, name))
				return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Heads                                                                     */
/* ------------------------------------------------------------------------ */

/* The request-target to write: a uri built from HTTP/2's :scheme,
 * :authority and :path (HTTP_F_ABS_URI) goes in origin form, as HAProxy
 * 2.6 sends it; the authority is in the Host field. */
static struct ist w_target(const struct http_msg *m)
{
	const char *p, *end = m->uri.ptr + m->uri.len;

	if (!(m->flags & HTTP_F_ABS_URI))
		return m->uri;
	p = memchr(m->uri.ptr, ':', m->uri.len);
	if (!p || end - p < 3 || p[1] != '/' || p[2] != '/')
		return m->uri;
	for (p += 3; p < end && *p != '/'; p++)
		;
	return p < end ? mk_ist(p, (size_t)(end - p)) : IST("/");
}

static void w_start_line(struct writer *w, const struct http_msg *m, unsigned int flags)
{
	struct ist version = m->version;

	/* anything but HTTP/1.x (an HTTP/2 message) goes as HTTP/1.1 */
	if (version.len != 8 || memcmp(version.ptr, "HTTP/1.", 7) != 0 ||
	    (flags & H1O_F_VERSION_11))
		version = IST("HTTP/1.1");
	if (m->is_request) {
		w_ist(w, m->method);
		W_LIT(w, " ");
		w_ist(w, w_target(m));
		W_LIT(w, " ");
		w_ist(w, version);
	} else {
		char code[4];

		code[0] = (char)('0' + m->status / 100 % 10);
		code[1] = (char)('0' + m->status / 10 % 10);
		code[2] = (char)('0' + m->status % 10);
		code[3] = ' ';
		w_ist(w, version);
		W_LIT(w, " ");
		w_put(w, code, 4);
		/* an HTTP/2 response has none: HAProxy 2.6 writes it empty */
		w_ist(w, m->reason);
	}
	W_LIT(w, "\r\n");
}

/* One field: written, dropped or rewritten. */
static void w_header(struct writer *w, struct head_ctx *c, const struct http_hdr *h)
{
	unsigned int f = c->flags;
	const struct http_msg *m = c->msg;
	enum field_kind k = field_kind(h->name);
	struct http_hdr adj;

	if (f & H1O_F_CASE_ADJUST) {
		adj = (struct http_hdr){ h1_case_adjust(h->name), h->value };
		h = &adj;
	}

	switch (k) {
	case FK_CONNECTION:
		w_connection(w, c, h);
		return;
	case FK_CONTENT_LENGTH:
		if ((m->flags & HTTP_F_CL_DROP) || (f & H1O_F_ADD_CHUNKED))
			return;
		if ((f & H1O_F_ADD_CL) || (m->flags & HTTP_F_CL_MERGED)) {
			/* one line with the value the parser validated */
			if (c->cl_written)
				return;
			c->cl_written = 1;
			w_ist(w, h->name);
			W_LIT(w, ": ");
			w_u64(w, m->content_length, 10);
			W_LIT(w, "\r\n");
			return;
		}
		break;
	case FK_TRANSFER_ENCODING:
		if (f & (H1O_F_DROP_TE | H1O_F_ADD_CHUNKED))
			return;
		break;
	case FK_TE:
		/* "TE: trailers" says the client takes trailers, which the next
		 * hop needs to know to send them: kept, as HAProxy keeps it */
		if ((f & H1O_F_HOP_BY_HOP) &&
		    !(h->value.len == 8 && !strncasecmp(h->value.ptr, "trailers", 8)))
			return;
		break;
	case FK_KEEP_ALIVE:
	case FK_PROXY_CONNECTION:
	case FK_TRAILER:
		if (f & H1O_F_HOP_BY_HOP)
			return;
		break;
	case FK_UPGRADE:
		if ((f & H1O_F_HOP_BY_HOP) && !(f & H1O_F_TUNNEL))
			return;
		break;
	case FK_HOST:
	case FK_OTHER:
		break;
	}
	/* RFC 9110 section 7.6.1; framing and routing fields are never
	 * removed on a peer's say-so (they were handled above) */
	if ((f & H1O_F_CONN_NAMED) && k != FK_HOST && k != FK_CONTENT_LENGTH &&
	    k != FK_TRANSFER_ENCODING && is_named_by_connection(c, h->name) &&
	    !(k == FK_UPGRADE && (f & H1O_F_TUNNEL)))
		return;
	w_field(w, h->name, h->value);
}

/* "<name>: " of a field the serialiser adds */
static void w_added_name(struct writer *w, unsigned int flags, struct ist name)
{
	w_ist(w, (flags & H1O_F_CASE_ADJUST) ? h1_case_adjust(name) : name);
	W_LIT(w, ": ");
}

ssize_t h1_out_head(const struct http_msg *msg, unsigned int flags, char *out, size_t room)
{
	struct writer w = { out, out + room, 0 };
	struct head_ctx c = { .msg = msg, .flags = flags };
	int i;

	if (flags & H1O_F_CONN_NAMED)
		gather_named(&c);
	w_start_line(&w, msg, flags);
	for (i = 0; i < msg->nhdrs && !w.full; i++)
		if (msg->hdrs[i].name.len)   /* a deleted field has no name */
			w_header(&w, &c, &msg->hdrs[i]);
	if ((flags & H1O_F_ADD_CL) && !(flags & H1O_F_ADD_CHUNKED) && !c.cl_written) {
		w_added_name(&w, flags, IST("Content-Length"));
		w_u64(&w, msg->content_length, 10);
		W_LIT(&w, "\r\n");
	}
	if (flags & H1O_F_ADD_CHUNKED) {
		w_added_name(&w, flags, IST("Transfer-Encoding"));
		W_LIT(&w, "chunked\r\n");
	}
	if (flags & (H1O_F_CONN_CLOSE | H1O_F_CONN_KA)) {
		w_added_name(&w, flags, IST("Connection"));
		if (flags & H1O_F_CONN_CLOSE)
			W_LIT(&w, "close\r\n");
		else
			W_LIT(&w, "keep-alive\r\n");
	}
	W_LIT(&w, "\r\n");
	return w.full ? H1_OUT_NOROOM : (ssize_t)(w.p - out);
}

ssize_t h1_out_head_buf(const struct http_msg *msg, unsigned int flags, struct buffer *b)
{
	ssize_t n;

	buf_realign(b);
	n = h1_out_head(msg, flags, buf_tail(b), buf_room(b));
	if (n > 0)
		b->data += (size_t)n;
	return n;
}

/* ------------------------------------------------------------------------ */
/* Chunked framing                                                           */
/* ------------------------------------------------------------------------ */

ssize_t h1_out_chunk_size(char *out, size_t room, uint64_t size)
{
	struct writer w = { out, out + room, 0 };

	w_u64(&w, size, 16);
	W_LIT(&w, "\r\n");
	return w.full ? H1_OUT_NOROOM : (ssize_t)(w.p - out);
}

ssize_t h1_out_chunk(char *out, size_t room, const char *data, size_t len)
{
	struct writer w = { out, out + room, 0 };

	w_u64(&w, len, 16);
	W_LIT(&w, "\r\n");
	w_put(&w, data, len);
	W_LIT(&w, "\r\n");
	return w.full ? H1_OUT_NOROOM : (ssize_t)(w.p - out);
}

ssize_t h1_out_chunk_end(char *out, size_t room)
{
	struct writer w = { out, out + room, 0 };

	W_LIT(&w, "\r\n");
	return w.full ? H1_OUT_NOROOM : (ssize_t)(w.p - out);
}

ssize_t h1_out_last_chunk(char *out, size_t room, const struct http_hdr *trailers,
                          int ntrailers)
{
	struct writer w = { out, out + room, 0 };
	int i;

	W_LIT(&w, "0\r\n");
	for (i = 0; trailers && i < ntrailers; i++)
		if (trailers[i].name.len)
			w_field(&w, trailers[i].name, trailers[i].value);
	W_LIT(&w, "\r\n");
	return w.full ? H1_OUT_NOROOM : (ssize_t)(w.p - out);
}
