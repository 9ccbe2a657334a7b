/* Editing the HTTP message model: an arena for new strings, field lookups
 * with HAProxy's hdr()/fhdr() semantics, field edits and start-line edits.
 * The rules and invariants are stated in msgedit.h.
 *
 * Sizing. The arena holds the bytes of every new name, value, URI or
 * reason; it is never compacted (a replaced string stays where it was), so
 * it bounds the total rewriting a message may receive, like HAProxy's
 * tune.maxrewrite reserve (1024 bytes by default): size it from that
 * setting, taken from the stream's pool object or the free end of the
 * message's buffer, never malloc'ed per request. The header array needs
 * tune.http.maxhdr entries for parsing plus HTTP_EDIT_EXTRA_HDRS for
 * additions; deletions free slots that additions reclaim by packing.
 *
 * Concurrency: nothing shared; every function works on what it is given.
 */
#include <string.h>
#include <sluice/http/h1.h>
#include <sluice/http/msgedit.h>

#define LOWER(c) ((unsigned char)((c) >= 'A' && (c) <= 'Z' ? (c) + 0x20 : (c)))
#define IS_OWS(c) ((c) == ' ' || (c) == '\t')

static inline struct ist mk_ist(const char *p, size_t len)
{
	return (struct ist){ p, len };
}

/* RFC 9110 section 5.6.2 */
static int is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return 1;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int is_token(struct ist s)
{
	size_t i;

	if (!s.len)
		return 0;
	for (i = 0; i < s.len; i++)
		if (!is_tchar((unsigned char)s.ptr[i]))
			return 0;
	return 1;
}

/* A value may hold anything the parser may have let through, except what
 * would end the line or the string on the wire. */
static int is_safe_value(struct ist s)
{
	size_t i;

	for (i = 0; i < s.len; i++)
		if (s.ptr[i] == '\r' || s.ptr[i] == '\n' || s.ptr[i] == '\0')
			return 0;
	return 1;
}

static struct ist trim_ows(struct ist s)
{
	while (s.len && IS_OWS(s.ptr[0])) {
		s.ptr++;
		s.len--;
	}
	while (s.len && IS_OWS(s.ptr[s.len - 1]))
		s.len--;
	return s;
}

/* ------------------------------------------------------------------------ */
/* Arena                                                                     */
/* ------------------------------------------------------------------------ */

void http_edit_init(struct http_edit *e, struct http_msg *msg, void *arena,
                    size_t arena_size, int hdrs_cap)
{
	int i;

	e->msg = msg;
	e->arena = arena;
	e->arena_size = arena ? arena_size : 0;
	e->arena_used = 0;
	e->hdrs_cap = hdrs_cap < msg->nhdrs ? msg->nhdrs : hdrs_cap;
	e->ndeleted = 0;
	e->flags = 0;
	for (i = 0; i < msg->nhdrs; i++)
		if (http_hdr_is_deleted(&msg->hdrs[i]))
			e->ndeleted++;
}

char *http_edit_alloc(struct http_edit *e, size_t len)
{
	char *p;

	if (len > e->arena_size - e->arena_used || !e->arena)
		return NULL;
	p = e->arena + e->arena_used;
	e->arena_used += len;
	return p;
}

int http_edit_dup(struct http_edit *e, struct ist in, struct ist *out)
{
	char *p;

	if (!in.len) {
		*out = mk_ist("", 0);
		return 0;
	}
	p = http_edit_alloc(e, in.len);
	if (!p)
		return HTTP_EDIT_ENOROOM;
	memcpy(p, in.ptr, in.len);
	*out = mk_ist(p, in.len);
	return 0;
}

/* Copies <in> unless it already lies in the arena (a rewriter's result). */
static int dup_if_foreign(struct http_edit *e, struct ist in, struct ist *out)
{
	if (e->arena && in.len && in.ptr >= e->arena &&
	    in.ptr + in.len <= e->arena + e->arena_used) {
		*out = in;
		return 0;
	}
	return http_edit_dup(e, in, out);
}

void http_edit_compact(struct http_edit *e)
{
	struct http_msg *m = e->msg;
	int i, j = 0;

	for (i = 0; i < m->nhdrs; i++)
		if (!http_hdr_is_deleted(&m->hdrs[i]))
			m->hdrs[j++] = m->hdrs[i];
	m->nhdrs = j;
	e->ndeleted = 0;
}

/* ------------------------------------------------------------------------ */
/* Lookups                                                                   */
/* ------------------------------------------------------------------------ */

int http_name_eq(struct ist a, struct ist b)
{
	size_t i;

	if (a.len != b.len)
		return 0;
	for (i = 0; i < a.len; i++)
		if (LOWER(a.ptr[i]) != LOWER(b.ptr[i]))
			return 0;
	return 1;
}

static int name_has_at(struct ist name, size_t at, struct ist pat)
{
	return http_name_eq(mk_ist(name.ptr + at, pat.len), pat);
}

int http_hdr_find(const struct http_msg *msg, struct ist name, int from)
{
	int i;

	for (i = from < 0 ? 0 : from; i < msg->nhdrs; i++)
		if (!http_hdr_is_deleted(&msg->hdrs[i]) && http_name_eq(msg->hdrs[i].name, name))
			return i;
	return -1;
}

/* End of the list element starting at <p>: the first comma outside a
 * quoted-string, or <end>. */
static const char *elem_end(const char *p, const char *end)
{
	int quoted = 0;

	for (; p < end; p++) {
		if (quoted) {
			if (*p == '\\') {
				if (++p == end)
					break;
			} else if (*p == '"') {
				quoted = 0;
			}
		} else if (*p == '"') {
			quoted = 1;
		} else if (*p == ',') {
			break;
		}
	}
	return p;
}

void http_hdr_iter_init(struct http_hdr_iter *it)
{
	it->idx = -1;
	it->next = NULL;
}

int http_hdr_next(const struct http_msg *msg, struct ist name, int split,
                  struct http_hdr_iter *it, struct ist *val)
{
	const struct http_hdr *h;
	const char *end, *e;

	if (!split || !it->next) {
		for (it->idx++; it->idx < msg->nhdrs; it->idx++) {
			h = &msg->hdrs[it->idx];
			if (!http_hdr_is_deleted(h) && (!name.ptr || http_name_eq(h->name, name)))
				break;
		}
		if (it->idx >= msg->nhdrs) {
			it->idx = msg->nhdrs;
			it->next = NULL;
			return 0;
		}
		h = &msg->hdrs[it->idx];
		if (!split) {
			*val = h->value;
			return 1;
		}
		/* an empty value still holds one (empty) element */
		it->next = h->value.ptr ? h->value.ptr : "";
	}
	h = &msg->hdrs[it->idx];
	end = h->value.len ? h->value.ptr + h->value.len : it->next;
	e = elem_end(it->next, end);
	*val = trim_ows(mk_ist(it->next, (size_t)(e - it->next)));
	it->next = e < end ? e + 1 : NULL;
	return 1;
}

int http_hdr_count(const struct http_msg *msg, struct ist name, int split)
{
	struct http_hdr_iter it;
	struct ist v;
	int n = 0;

	http_hdr_iter_init(&it);
	while (http_hdr_next(msg, name, split, &it, &v))
		n++;
	return n;
}

int http_hdr_occ(const struct http_msg *msg, struct ist name, int occ, int split,
                 struct ist *val)
{
	struct http_hdr_iter it;
	struct ist v;
	int n = 0;

	if (occ <= 0) {
		occ = http_hdr_count(msg, name, split) + (occ ? occ : -1) + 1;
		if (occ <= 0)
			return 0;
	}
	http_hdr_iter_init(&it);
	while (http_hdr_next(msg, name, split, &it, &v)) {
		if (++n == occ) {
			*val = v;
			return 1;
		}
	}
	return 0;
}

/* Start of the path in an absolute-form target "scheme://authority...",
 * or NULL if <uri> is not one (origin-form, "*", authority-form). */
static const char *abs_path_start(struct ist uri)
{
	const char *p = uri.ptr, *end = uri.ptr + uri.len;

	if (!uri.len || !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		return NULL;
	while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	                   (*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '.'))
		p++;
	if (end - p < 3 || p[0] != ':' || p[1] != '/' || p[2] != '/')
		return NULL;
	/* authority: up to the path, the query or the end */
	for (p += 3; p < end && *p != '/' && *p != '?'; p++)
		;
	return p;
}

/* Path bounds [*ps, *pe) of <uri>; both at the end of the URI when it has
 * none ("*", authority-form). */
static void uri_path_bounds(struct ist uri, const char **ps, const char **pe)
{
	const char *end = uri.ptr + uri.len, *p;

	if (uri.len && uri.ptr[0] == '/')
		p = uri.ptr;
	else if (!(p = abs_path_start(uri)))
		p = end;
	*ps = p;
	while (p < end && *p != '?')
		p++;
	*pe = p;
}

struct ist http_uri_path(struct ist uri)
{
	const char *ps, *pe;

	uri_path_bounds(uri, &ps, &pe);
	return mk_ist(ps, (size_t)(pe - ps));
}

struct ist http_uri_query(struct ist uri)
{
	const char *q = uri.len ? memchr(uri.ptr, '?', uri.len) : NULL;

	if (!q)
		return mk_ist(NULL, 0);
	return mk_ist(q + 1, (size_t)(uri.ptr + uri.len - q - 1));
}

const char *http_status_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 101: return "Switching Protocols";
	case 102: return "Processing";
	case 103: return "Early Hints";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 203: return "Non-Authoritative Information";
	case 204: return "No Content";
	case 205: return "Reset Content";
	case 206: return "Partial Content";
	case 207: return "Multi-Status";
	case 226: return "IM Used";
	case 300: return "Multiple Choices";
	case 301: return "Moved Permanently";
	case 302: return "Moved Temporarily";
	case 303: return "See Other";
	case 304: return "Not Modified";
	case 305: return "Use Proxy";
	case 307: return "Temporary Redirect";
	case 308: return "Permanent Redirect";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 402: return "Payment Required";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 407: return "Proxy Authentication Required";
	case 408: return "Request Time-out";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 412: return "Precondition Failed";
	case 413: return "Request Entity Too Large";
	case 414: return "Request-URI Too Long";
	case 415: return "Unsupported Media Type";
	case 416: return "Requested range unsatisfiable";
	case 417: return "Expectation failed";
	case 418: return "I'm a teapot";
	case 421: return "Misdirected Request";
	case 422: return "Unprocessable Content";
	case 425: return "Too Early";
	case 426: return "Upgrade Required";
	case 428: return "Precondition Required";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 451: return "Unavailable For Legal Reasons";
	case 499: return "client has closed connection";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway or Proxy Error";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Time-out";
	case 505: return "HTTP Version not supported";
	case 507: return "Insufficient storage";
	case 511: return "Network authentication required";
	}
	/* other codes: the name of their class, as HAProxy */
	switch (status / 100) {
	case 1: return "Informational";
	case 2: return "Success";
	case 3: return "Redirection";
	case 4: return "Client Error";
	case 5: return "Server Error";
	}
	return "Other";
}

/* ------------------------------------------------------------------------ */
/* Field edits                                                               */
/* ------------------------------------------------------------------------ */

/* What a change to a field of some name affects: Connection and Upgrade
 * feed flags the mux reads, framing fields invalidate the parse's view.
 * Operations gather these bits and apply them once, so that a multi-field
 * edit stays O(fields). */
#define CHG_FIELD    0x01
#define CHG_FRAMING  0x02
#define CHG_CONN     0x04
#define CHG_UPGRADE  0x08

static unsigned int change_of(struct ist name)
{
	if (http_name_eq(name, IST("content-length")) ||
	    http_name_eq(name, IST("transfer-encoding")))
		return CHG_FIELD | CHG_FRAMING;
	if (http_name_eq(name, IST("connection")))
		return CHG_FIELD | CHG_CONN;
	if (http_name_eq(name, IST("upgrade")))
		return CHG_FIELD | CHG_UPGRADE;
	return CHG_FIELD;
}

static void apply_changes(struct http_edit *e, unsigned int chg)
{
	struct http_msg *m = e->msg;

	if (chg & CHG_FIELD)
		e->flags |= HTTP_EDIT_F_HEADERS;
	if (chg & CHG_FRAMING) {
		e->flags |= HTTP_EDIT_F_FRAMING;
		m->flags &= ~HTTP_F_CL_MERGED;
	}
	if (chg & CHG_CONN) {
		struct http_hdr_iter it;
		struct ist v;

		/* RFC 9110 section 7.6.1: options are case-insensitive tokens */
		m->flags &= ~(HTTP_F_CONN_CLOSE | HTTP_F_CONN_KA | HTTP_F_CONN_UPGRADE);
		http_hdr_iter_init(&it);
		while (http_hdr_next(m, IST("connection"), 1, &it, &v)) {
			if (http_name_eq(v, IST("close")))
				m->flags |= HTTP_F_CONN_CLOSE;
			else if (http_name_eq(v, IST("keep-alive")))
				m->flags |= HTTP_F_CONN_KA;
			else if (http_name_eq(v, IST("upgrade")))
				m->flags |= HTTP_F_CONN_UPGRADE;
		}
	}
	if (chg & CHG_UPGRADE) {
		if (http_hdr_find(m, IST("upgrade"), 0) >= 0)
			m->flags |= HTTP_F_UPGRADE;
		else
			m->flags &= ~HTTP_F_UPGRADE;
	}
}

/* A free slot at the end of the array, packing marked ones if needed. */
static int take_slot(struct http_edit *e)
{
	if (e->msg->nhdrs >= e->hdrs_cap) {
		if (!e->ndeleted)
			return HTTP_EDIT_ENOROOM;
		http_edit_compact(e);
	}
	return e->msg->nhdrs++;
}

static void mark_deleted(struct http_edit *e, int idx)
{
	struct http_hdr *h = &e->msg->hdrs[idx];

	h->name = mk_ist(NULL, 0);
	h->value = mk_ist(NULL, 0);
	e->ndeleted++;
}

/* Copies name and value into the arena and appends the field. All or
 * nothing. */
static int append_field(struct http_edit *e, struct ist name, struct ist value)
{
	size_t mark = e->arena_used;
	struct ist n, v;
	int idx;

	if (http_edit_dup(e, name, &n) < 0 || http_edit_dup(e, value, &v) < 0) {
		e->arena_used = mark;
		return HTTP_EDIT_ENOROOM;
	}
	idx = take_slot(e);
	if (idx < 0) {
		e->arena_used = mark;
		return idx;
	}
	e->msg->hdrs[idx].name = n;
	e->msg->hdrs[idx].value = v;
	return 0;
}

int http_hdr_add(struct http_edit *e, struct ist name, struct ist value)
{
	int rc;

	value = trim_ows(value);
	if (!is_token(name) || !is_safe_value(value))
		return HTTP_EDIT_EINVAL;
	rc = append_field(e, name, value);
	if (rc == 0)
		apply_changes(e, change_of(name));
	return rc;
}

int http_hdr_set(struct http_edit *e, struct ist name, struct ist value)
{
	struct http_msg *m = e->msg;
	int i, matches = 0;

	value = trim_ows(value);
	if (!is_token(name) || !is_safe_value(value))
		return HTTP_EDIT_EINVAL;
	if (name.len + value.len > e->arena_size - e->arena_used)
		return HTTP_EDIT_ENOROOM;
	for (i = 0; i < m->nhdrs; i++)
		if (!http_hdr_is_deleted(&m->hdrs[i]) && http_name_eq(m->hdrs[i].name, name))
			matches++;
	if (m->nhdrs >= e->hdrs_cap && !e->ndeleted && !matches)
		return HTTP_EDIT_ENOROOM;
	for (i = 0; i < m->nhdrs; i++)
		if (!http_hdr_is_deleted(&m->hdrs[i]) && http_name_eq(m->hdrs[i].name, name))
			mark_deleted(e, i);
	/* cannot fail: room and slot checked above */
	append_field(e, name, value);
	apply_changes(e, change_of(name));
	return 0;
}

int http_hdr_del_idx(struct http_edit *e, int idx)
{
	struct ist name;

	if (idx < 0 || idx >= e->msg->nhdrs || http_hdr_is_deleted(&e->msg->hdrs[idx]))
		return HTTP_EDIT_EINVAL;
	name = e->msg->hdrs[idx].name;
	mark_deleted(e, idx);
	apply_changes(e, change_of(name));
	return 0;
}

static int name_matches(struct ist hname, struct ist pat, enum http_match mode,
                        http_name_match_fn cb, void *arg)
{
	size_t i;

	switch (mode) {
	case HTTP_MATCH_STR:
		return http_name_eq(hname, pat);
	case HTTP_MATCH_BEG:
		return hname.len >= pat.len && name_has_at(hname, 0, pat);
	case HTTP_MATCH_END:
		return hname.len >= pat.len && name_has_at(hname, hname.len - pat.len, pat);
	case HTTP_MATCH_SUB:
		for (i = 0; i + pat.len <= hname.len; i++)
			if (name_has_at(hname, i, pat))
				return 1;
		return 0;
	case HTTP_MATCH_CB:
		return cb ? cb(arg, hname) : HTTP_EDIT_EINVAL;
	}
	return 0;
}

int http_hdr_del(struct http_edit *e, struct ist name, enum http_match mode,
                 http_name_match_fn cb, void *arg)
{
	struct http_msg *m = e->msg;
	unsigned int chg = 0;
	int i, rc = 0, n = 0;

	for (i = 0; i < m->nhdrs; i++) {
		struct ist hname = m->hdrs[i].name;

		if (http_hdr_is_deleted(&m->hdrs[i]))
			continue;
		rc = name_matches(hname, name, mode, cb, arg);
		if (rc < 0)
			break;
		if (!rc)
			continue;
		chg |= change_of(hname);
		mark_deleted(e, i);
		n++;
	}
	apply_changes(e, chg);
	return rc < 0 ? rc : n;
}

int http_hdr_del_conn_named(struct http_edit *e, int keep_upgrade)
{
	struct http_msg *m = e->msg;
	struct http_hdr_iter it;
	struct ist tok;
	unsigned int chg = 0;
	int n = 0, i;

	http_hdr_iter_init(&it);
	while (http_hdr_next(m, IST("connection"), 1, &it, &tok)) {
		if (!tok.len || http_name_eq(tok, IST("close")) ||
		    http_name_eq(tok, IST("keep-alive")) ||
		    http_name_eq(tok, IST("connection")) ||
		    http_name_eq(tok, IST("content-length")) ||
		    http_name_eq(tok, IST("transfer-encoding")) ||
		    http_name_eq(tok, IST("host")) ||
		    (keep_upgrade && http_name_eq(tok, IST("upgrade"))))
			continue;
		for (i = http_hdr_find(m, tok, 0); i >= 0; i = http_hdr_find(m, tok, i + 1)) {
			chg |= change_of(tok);
			mark_deleted(e, i);
			n++;
		}
	}
	apply_changes(e, chg);
	return n;
}

/* Sets the value of live field <idx>; the caller applies the changes. */
static int set_value(struct http_edit *e, int idx, struct ist value)
{
	struct ist v;
	int rc;

	value = trim_ows(value);
	if (!is_safe_value(value))
		return HTTP_EDIT_EINVAL;
	rc = dup_if_foreign(e, value, &v);
	if (rc < 0)
		return rc;
	e->msg->hdrs[idx].value = v;
	return 0;
}

int http_hdr_replace_idx(struct http_edit *e, int idx, struct ist value)
{
	int rc;

	if (idx < 0 || idx >= e->msg->nhdrs || http_hdr_is_deleted(&e->msg->hdrs[idx]))
		return HTTP_EDIT_EINVAL;
	rc = set_value(e, idx, value);
	if (rc == 0)
		apply_changes(e, change_of(e->msg->hdrs[idx].name));
	return rc;
}

int http_hdr_replace_header(struct http_edit *e, struct ist name, http_rewrite_fn cb,
                            void *arg)
{
	struct http_msg *m = e->msg;
	int i, rc = 0, n = 0;

	for (i = http_hdr_find(m, name, 0); i >= 0; i = http_hdr_find(m, name, i + 1)) {
		struct ist out;
		size_t mark = e->arena_used;

		rc = cb(arg, e, m->hdrs[i].value, &out);
		if (rc < 0)
			break;
		if (!rc) {
			e->arena_used = mark;   /* drop the rewriter's scratch */
			continue;
		}
		rc = set_value(e, i, out);
		if (rc < 0) {
			e->arena_used = mark;
			break;
		}
		n++;
	}
	if (n)
		apply_changes(e, change_of(name));
	return rc < 0 ? rc : n;
}

/* replace-value on one field: the new value is built at the arena's end,
 * [start, start + len). Before each call to <cb> the part built so far is
 * committed, so that <cb> allocates after it; its result is then moved to
 * the end of the part built (memmove: it lies after it or elsewhere), and
 * whatever scratch <cb> used is given back. Returns 1 if the field changed,
 * 0 if not, or an error. */
static int replace_value_field(struct http_edit *e, int idx, http_rewrite_fn cb, void *arg)
{
	struct ist value = e->msg->hdrs[idx].value;
	const char *p = value.ptr, *end = value.ptr + value.len;
	size_t start = e->arena_used, len = 0;
	int changed = 0, rc;

	if (!value.len)
		p = end = "";
	for (;;) {
		const char *seg_end = elem_end(p, end);
		struct ist seg = mk_ist(p, (size_t)(seg_end - p)), out;

		e->arena_used = start + len;
		rc = cb(arg, e, trim_ows(seg), &out);
		if (rc < 0)
			goto fail;
		if (rc) {
			if (!is_safe_value(out)) {
				rc = HTTP_EDIT_EINVAL;
				goto fail;
			}
			seg = out;
			changed = 1;
		}
		/* the segment then its comma; <seg> lies before the part built,
		 * after it, or outside the arena: memmove covers all three */
		if (seg.len + (seg_end < end) > e->arena_size - start - len) {
			rc = HTTP_EDIT_ENOROOM;
			goto fail;
		}
		if (seg.len)
			memmove(e->arena + start + len, seg.ptr, seg.len);
		len += seg.len;
		if (seg_end == end)
			break;
		e->arena[start + len++] = ',';
		p = seg_end + 1;
	}
	if (!changed) {
		e->arena_used = start;
		return 0;
	}
	e->arena_used = start + len;
	e->msg->hdrs[idx].value = trim_ows(mk_ist(e->arena + start, len));
	return 1;
fail:
	e->arena_used = start;
	return rc;
}

int http_hdr_replace_value(struct http_edit *e, struct ist name, http_rewrite_fn cb,
                           void *arg)
{
	struct http_msg *m = e->msg;
	int i, rc = 0, n = 0;

	for (i = http_hdr_find(m, name, 0); i >= 0; i = http_hdr_find(m, name, i + 1)) {
		rc = replace_value_field(e, i, cb, arg);
		if (rc < 0)
			break;
		n += rc;
	}
	if (n)
		apply_changes(e, change_of(name));
	return rc < 0 ? rc : n;
}

/* ------------------------------------------------------------------------ */
/* Start line                                                                */
/* ------------------------------------------------------------------------ */

static int is_target_byte(unsigned char c)
{
	return c > 0x20 && c != 0x7f;
}

/* Builds a new request-target from up to three pieces, all or nothing. */
static int set_uri3(struct http_edit *e, struct ist a, struct ist b, struct ist c)
{
	struct http_msg *m = e->msg;
	size_t len = a.len + b.len + c.len, i;
	char *p;

	if (!len)
		return HTTP_EDIT_EINVAL;
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)(i < a.len ? a.ptr[i] : i < a.len + b.len ?
		                                   b.ptr[i - a.len] : c.ptr[i - a.len - b.len]);

		if (!is_target_byte(ch))
			return HTTP_EDIT_EINVAL;
	}
	p = http_edit_alloc(e, len);
	if (!p)
		return HTTP_EDIT_ENOROOM;
	/* the pieces may lie in the arena, before <p>: copies never overlap */
	if (a.len)
		memcpy(p, a.ptr, a.len);
	if (b.len)
		memcpy(p + a.len, b.ptr, b.len);
	if (c.len)
		memcpy(p + a.len + b.len, c.ptr, c.len);
	m->uri = mk_ist(p, len);
	e->flags |= HTTP_EDIT_F_START_LINE;
	return 0;
}

int http_set_method(struct http_edit *e, struct ist method)
{
	struct ist v;
	int rc;

	if (!e->msg->is_request || !is_token(method))
		return HTTP_EDIT_EINVAL;
	rc = http_edit_dup(e, method, &v);
	if (rc < 0)
		return rc;
	e->msg->method = v;
	e->msg->meth = h1_meth_from_token(v.ptr, v.len);
	e->flags |= HTTP_EDIT_F_START_LINE;
	return 0;
}

int http_set_uri(struct http_edit *e, struct ist uri)
{
	if (!e->msg->is_request)
		return HTTP_EDIT_EINVAL;
	return set_uri3(e, mk_ist(NULL, 0), uri, mk_ist(NULL, 0));
}

int http_set_path(struct http_edit *e, struct ist path)
{
	struct ist uri = e->msg->uri;
	const char *ps, *pe;

	if (!e->msg->is_request)
		return HTTP_EDIT_EINVAL;
	uri_path_bounds(uri, &ps, &pe);
	if (ps == uri.ptr + uri.len && !abs_path_start(uri))
		return set_uri3(e, mk_ist(NULL, 0), path, mk_ist(NULL, 0));   /* "*", host:port */
	return set_uri3(e, mk_ist(uri.ptr, (size_t)(ps - uri.ptr)), path,
	                mk_ist(pe, (size_t)(uri.ptr + uri.len - pe)));
}

int http_set_pathq(struct http_edit *e, struct ist pathq)
{
	struct ist uri = e->msg->uri;
	const char *ps, *pe;

	if (!e->msg->is_request)
		return HTTP_EDIT_EINVAL;
	uri_path_bounds(uri, &ps, &pe);
	if (ps == uri.ptr + uri.len && !abs_path_start(uri))
		return set_uri3(e, mk_ist(NULL, 0), pathq, mk_ist(NULL, 0));
	return set_uri3(e, mk_ist(uri.ptr, (size_t)(ps - uri.ptr)), pathq, mk_ist(NULL, 0));
}

int http_set_query(struct http_edit *e, struct ist query)
{
	struct ist uri = e->msg->uri, q;

	if (!e->msg->is_request)
		return HTTP_EDIT_EINVAL;
	q = http_uri_query(uri);
	if (q.ptr)
		return set_uri3(e, mk_ist(uri.ptr, (size_t)(q.ptr - uri.ptr)), query,
		                mk_ist(NULL, 0));
	if (!query.len)
		return 0;
	return set_uri3(e, uri, IST("?"), query);
}

int http_set_status(struct http_edit *e, int status, struct ist reason)
{
	struct ist r;
	int rc;

	if (e->msg->is_request || status < 100 || status > 999)
		return HTTP_EDIT_EINVAL;
	if (!reason.ptr || !reason.len) {
		const char *s = http_status_reason(status);

		r = mk_ist(s, strlen(s));   /* static text: no arena needed */
	} else {
		if (!is_safe_value(reason))
			return HTTP_EDIT_EINVAL;
		rc = dup_if_foreign(e, reason, &r);
		if (rc < 0)
			return rc;
	}
	e->msg->status = status;
	e->msg->reason = r;
	e->flags |= HTTP_EDIT_F_START_LINE;
	return 0;
}

/* Appends <v> to area[*used..size) and points <out> at the copy. */
static int copy_ist(struct ist v, char *area, size_t size, size_t *used, struct ist *out)
{
	if (v.len > size - *used)
		return -1;
	if (v.len)
		memcpy(area + *used, v.ptr, v.len);
	out->ptr = area + *used;
	out->len = v.len;
	*used += v.len;
	return 0;
}

ssize_t http_msg_copy(struct http_msg *dst, const struct http_msg *src, char *area, size_t size)
{
	struct http_hdr *hdrs = dst->hdrs;
	int maxhdrs = dst->maxhdrs, n = 0;
	size_t used = 0;

	*dst = *src;
	dst->hdrs = hdrs;
	dst->maxhdrs = maxhdrs;
	if (copy_ist(src->method, area, size, &used, &dst->method) < 0 ||
	    copy_ist(src->uri, area, size, &used, &dst->uri) < 0 ||
	    copy_ist(src->reason, area, size, &used, &dst->reason) < 0 ||
	    copy_ist(src->version, area, size, &used, &dst->version) < 0)
		return -1;
	for (int i = 0; i < src->nhdrs; i++) {
		if (!src->hdrs[i].name.len)
			continue;   /* deleted */
		if (n >= maxhdrs ||
		    copy_ist(src->hdrs[i].name, area, size, &used, &hdrs[n].name) < 0 ||
		    copy_ist(src->hdrs[i].value, area, size, &used, &hdrs[n].value) < 0)
			return -1;
		n++;
	}
	dst->nhdrs = n;
	dst->head_len = used;
	return (ssize_t)used;
}
