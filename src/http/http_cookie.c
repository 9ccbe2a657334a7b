/* Cookie-based persistence: choosing the server from the request's cookie,
 * cleaning the request, and setting or rewriting the cookie in the response
 * (see http_cookie.h for the rules and the log characters).
 *
 * No shared state: the functions read the backend's configuration and edit
 * the messages they are given, on the stream's owner thread.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sluice/http/http_cookie.h>
#include <sluice/http/msgedit.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>

#define CK_PREFIX_DELIM '~'     /* prefix mode: "<srv>~<application value>" */
#define CK_DATE_DELIM   '|'     /* "<srv>|<last>[|<first>]" */
#define CK_DATE_LEN     5
#define CK_FUTURE_MAX   86400   /* a date further in the future is not trusted */

static const char b64tab[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void http_cookie_date_enc(uint32_t v, char out[5])
{
	for (int i = 0; i < CK_DATE_LEN; i++)
		out[i] = b64tab[(v >> (24 - 6 * i)) & 0x3f];
}

int http_cookie_date_dec(const char in[5])
{
	int v = 0;

	for (int i = 0; i < CK_DATE_LEN; i++) {
		const char *p = in[i] ? strchr(b64tab, in[i]) : NULL;

		if (!p)
			return -1;
		v = (v << 6) | (int)(p - b64tab);
	}
	return v;
}

/* ---- parsing cookie fields ---- */

struct ck_item {
	const char *beg, *end;      /* the item without surrounding blanks */
	struct ist name, value;
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static struct ist trim(const char *b, const char *e)
{
	while (b < e && is_blank(*b))
		b++;
	while (e > b && is_blank(e[-1]))
		e--;
	return (struct ist){ b, (size_t)(e - b) };
}

/* The next "name=value" of a Cookie field from *p (';'-separated, empty
 * items skipped). Returns 1 with <it>, 0 at the end. */
static int ck_next(const char **p, const char *end, struct ck_item *it)
{
	const char *b = *p, *e, *eq;
	struct ist whole;

	while (b < end && (is_blank(*b) || *b == ';'))
		b++;
	if (b >= end) {
		*p = end;
		return 0;
	}
	e = memchr(b, ';', (size_t)(end - b));
	if (!e)
		e = end;
	*p = e;
	whole = trim(b, e);
	it->beg = whole.ptr;
	it->end = whole.ptr + whole.len;
	eq = memchr(it->beg, '=', whole.len);
	it->name = trim(it->beg, eq ? eq : it->end);
	it->value = eq ? trim(eq + 1, it->end) : (struct ist){ it->end, 0 };
	return 1;
}

static int is_our_cookie(const struct proxy *be, struct ist name)
{
	size_t l = strlen(be->cookie_name);

	return name.len == l && memcmp(name.ptr, be->cookie_name, l) == 0;
}

/* ---- request ---- */

struct ck_req {
	const struct proxy *be;
	uint32_t now;
	uint32_t first, last;       /* dates of the cookie examined */
	char state;                 /* %tsc third character */
	struct server *srv;
	int force;                  /* persistence forced: stopped servers too */
};

/* What becomes of a cookie of the request. */
enum ck_action { CK_KEEP = 0, CK_STRIP, CK_DROP };

static enum ck_action ck_action(const struct proxy *be, const struct ck_item *it)
{
	if (!is_our_cookie(be, it->name))
		return CK_KEEP;
	if (be->cookie_opts & PX_CK_PREFIX)
		return memchr(it->value.ptr, CK_PREFIX_DELIM, it->value.len) ? CK_STRIP : CK_KEEP;
	if ((be->cookie_opts & (PX_CK_INSERT | PX_CK_INDIRECT)) == (PX_CK_INSERT | PX_CK_INDIRECT))
		return CK_DROP;
	return CK_KEEP;
}

/* "<srv>|<last>[|<first>]": the server part, the dates into <r>. */
static struct ist ck_split_dates(struct ck_req *r, struct ist v)
{
	const char *end = v.ptr + v.len, *bar = memchr(v.ptr, CK_DATE_DELIM, v.len), *bar2;
	int d;

	if (!bar)
		return v;
	if (end - (bar + 1) >= CK_DATE_LEN && (d = http_cookie_date_dec(bar + 1)) > 0)
		r->last = (uint32_t)d << 2;
	bar2 = memchr(bar + 1, CK_DATE_DELIM, (size_t)(end - bar - 1));
	if (bar2 && end - bar2 > CK_DATE_LEN && (d = http_cookie_date_dec(bar2 + 1)) > 0)
		r->first = (uint32_t)d << 2;
	return (struct ist){ v.ptr, (size_t)(bar - v.ptr) };
}

/* Whether a cookie date is too old for <max> seconds (or too far ahead). */
static int ck_date_stale(uint32_t date, uint32_t now, int max)
{
	return (int32_t)(now - date) > max || (int32_t)(date - now) > CK_FUTURE_MAX;
}

/* The persistence cookie <v>: chooses the server (first occurrence only). */
static void ck_examine(struct ck_req *r, struct ist v)
{
	const struct proxy *be = r->be;
	struct ist id = v;
	int assigned = r->srv != NULL, found = 0;

	if (be->cookie_opts & PX_CK_PREFIX) {
		const char *d = memchr(v.ptr, CK_PREFIX_DELIM, v.len);

		if (d)
			id.len = (size_t)(d - v.ptr);
	} else {
		id = ck_split_dates(r, v);
	}
	if (r->first && be->cookie_maxlife && ck_date_stale(r->first, r->now, be->cookie_maxlife)) {
		r->state = 'O';
		r->first = r->last = 0;
		id.len = 0;
	} else if (r->last && be->cookie_maxidle &&
	           ck_date_stale(r->last, r->now, be->cookie_maxidle)) {
		r->state = 'E';
		r->first = r->last = 0;
		id.len = 0;
	}
	/* an empty value never designates a server: a client that learnt an
	 * empty cookie must not stick to a cookie-less (backup) server */
	for (int i = 0; id.len && !assigned && i < be->nsrv; i++) {
		struct server *s = be->srv[i];

		if (!s->cookie || strlen(s->cookie) != id.len || memcmp(s->cookie, id.ptr, id.len))
			continue;
		/* a DOWN or maintenance server keeps no client (HAProxy: its
		 * cur_state is STOPPED); a drained one does */
		if (!srv_is_stopped(s) || r->force) {
			r->state = 'V';
			r->srv = s;
			found = 1;
			break;
		}
		r->state = 'D';     /* keep looking: servers may share a cookie */
	}
	if (!found && r->state != 'D' && r->state != 'E' && r->state != 'O')
		r->state = assigned ? 'U' : 'I';
}

/* Writes the kept items of a Cookie field into <out> (NULL: only counts).
 * Returns the length of the new value. */
static size_t ck_rebuild(const struct proxy *be, struct ist v, char *out)
{
	const char *p = v.ptr;
	struct ck_item it;
	size_t n = 0;

	while (ck_next(&p, v.ptr + v.len, &it)) {
		enum ck_action a = ck_action(be, &it);
		struct ist tail = { it.beg, (size_t)(it.end - it.beg) };

		if (a == CK_DROP)
			continue;
		if (n) {
			if (out)
				memcpy(out + n, "; ", 2);
			n += 2;
		}
		if (a == CK_STRIP) {
			const char *d = memchr(it.value.ptr, CK_PREFIX_DELIM, it.value.len);
			size_t head = (size_t)(it.value.ptr - it.beg);

			/* "name=" then what follows the server's prefix */
			if (out)
				memcpy(out + n, it.beg, head);
			n += head;
			tail = (struct ist){ d + 1, (size_t)(it.end - d - 1) };
		}
		if (out)
			memcpy(out + n, tail.ptr, tail.len);
		n += tail.len;
	}
	return n;
}

/* One Cookie field: examines it, then rewrites or deletes it if needed. */
static int ck_request_field(struct ck_req *r, struct http_msg *req, struct http_edit *e, int idx)
{
	struct ist v = req->hdrs[idx].value;
	const char *p = v.ptr;
	struct ck_item it;
	int change = 0;
	size_t len;
	char *out;

	while (ck_next(&p, v.ptr + v.len, &it)) {
		if (!is_our_cookie(r->be, it.name))
			continue;
		ck_examine(r, it.value);
		change |= ck_action(r->be, &it) != CK_KEEP;
	}
	if (!change || !e)
		return 0;
	len = ck_rebuild(r->be, v, NULL);
	if (!len)
		return http_hdr_del_idx(e, idx);
	out = http_edit_alloc(e, len);
	if (!out)
		return HTTP_EDIT_ENOROOM;
	ck_rebuild(r->be, v, out);
	return http_hdr_replace_idx(e, idx, (struct ist){ out, len });
}

static uint32_t wall_now(uint32_t given)
{
	return given ? given : (uint32_t)time(NULL);
}

struct server *http_cookie_server_ex(const struct proxy *be, struct http_msg *req,
                                     struct http_edit *e, char cookie_term[2],
                                     struct http_cookie_state *st)
{
	struct ck_req r = { .be = be, .state = 'N' };
	const struct ist name = IST("cookie");

	if (!be->cookie_name) {
		cookie_term[0] = cookie_term[1] = '-';
		return NULL;
	}
	r.now = wall_now(st ? st->now : 0);
	r.force = st ? st->force : 0;
	for (int i = http_hdr_find(req, name, 0); i >= 0; i = http_hdr_find(req, name, i + 1))
		ck_request_field(&r, req, e, i);   /* a failed cleaning leaves the cookie: harmless */
	if (st) {
		st->now = r.now;
		st->first_date = r.first;
		st->last_date = r.last;
	}
	cookie_term[0] = r.state;
	cookie_term[1] = 'N';
	return r.srv;
}

struct server *http_cookie_server(const struct proxy *be, struct http_msg *req,
                                  struct http_edit *e, char cookie_term[2])
{
	return http_cookie_server_ex(be, req, e, cookie_term, NULL);
}

/* ---- response ---- */

/* Whether a shared cache could store <res>, by HAProxy 2.6's rules: an
 * answer to GET or HEAD with a status cacheable by default, no Pragma
 * no-cache nor Cache-Control private/no-cache/no-store/max-age=0/
 * s-maxage=0, and an explicit freshness (max-age, s-maxage, Expires) or a
 * validator (ETag, Last-Modified), as RFC 9111 section 3 suggests. */
static int res_cacheable(const struct http_msg *res)
{
	static const int codes[] = { 200, 203, 204, 206, 300, 301, 404, 405, 410, 414, 501 };
	static const char *const nocache[] = {
		"private", "no-cache", "no-store", "max-age=0", "s-maxage=0"
	};
	struct http_hdr_iter it;
	struct ist v;
	int ok = 0, fresh = 0;

	if (res->meth != HTTP_METH_GET && res->meth != HTTP_METH_HEAD)
		return 0;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		ok |= res->status == codes[i];
	if (!ok)
		return 0;
	http_hdr_iter_init(&it);
	while (http_hdr_next(res, IST("pragma"), 1, &it, &v))
		if (http_name_eq(v, IST("no-cache")))
			return 0;
	http_hdr_iter_init(&it);
	while (http_hdr_next(res, IST("cache-control"), 1, &it, &v)) {
		for (size_t i = 0; i < sizeof(nocache) / sizeof(nocache[0]); i++)
			if (http_name_eq(v, (struct ist){ nocache[i], strlen(nocache[i]) }))
				return 0;
		if ((v.len >= 7 && http_name_eq((struct ist){ v.ptr, 7 }, IST("max-age"))) ||
		    (v.len >= 8 && http_name_eq((struct ist){ v.ptr, 8 }, IST("s-maxage"))))
			fresh = 1;
	}
	return fresh || http_hdr_find(res, IST("expires"), 0) >= 0 ||
	       http_hdr_find(res, IST("etag"), 0) >= 0 ||
	       http_hdr_find(res, IST("last-modified"), 0) >= 0;
}

/* The server's own Set-Cookie named like ours: "name=value; attributes".
 * Rewrite gives "name=<srv>; attributes", prefix "name=<srv>~value; ...". */
static int ck_rewrite_set_cookie(const struct proxy *be, const struct server *srv,
                                 struct http_edit *e, int idx, struct ist val)
{
	struct ist whole = e->msg->hdrs[idx].value;
	size_t head = (size_t)(val.ptr - whole.ptr), sl = strlen(srv->cookie);
	size_t keep = (be->cookie_opts & PX_CK_PREFIX) ? val.len : 0;
	size_t rest = (size_t)(whole.ptr + whole.len - (val.ptr + val.len));
	size_t len = head + sl + (keep ? 1 : 0) + keep + rest, n = 0;
	char *out = http_edit_alloc(e, len);

	if (!out)
		return HTTP_EDIT_ENOROOM;
	memcpy(out, whole.ptr, head);
	n = head;
	memcpy(out + n, srv->cookie, sl);
	n += sl;
	if (be->cookie_opts & PX_CK_PREFIX) {
		out[n++] = CK_PREFIX_DELIM;
		memcpy(out + n, val.ptr, val.len);
		n += val.len;
	}
	memcpy(out + n, val.ptr + val.len, rest);
	return http_hdr_replace_idx(e, idx, (struct ist){ out, len });
}

/* Step 1 of the response: the server's Set-Cookie fields named like ours.
 * Returns the %tsc character so far, or '\0' on an edit failure (*rc). */
static char ck_server_cookies(const struct proxy *be, const struct server *srv,
                              int srv_from_cookie, struct http_msg *res, struct http_edit *e,
                              int *found, int *rc)
{
	const struct ist name = IST("set-cookie");
	char sck = 'N';

	for (int i = http_hdr_find(res, name, 0); i >= 0; i = http_hdr_find(res, name, i + 1)) {
		struct ist v = res->hdrs[i].value;
		const char *p = v.ptr, *semi = memchr(v.ptr, ';', v.len);
		struct ck_item it;

		if (!ck_next(&p, semi ? semi : v.ptr + v.len, &it) || !is_our_cookie(be, it.name))
			continue;
		*found = 1;
		sck = 'P';
		if (be->cookie_opts & PX_CK_PRESERVE)
			continue;
		if ((srv && (be->cookie_opts & PX_CK_INSERT)) ||
		    (srv_from_cookie && (be->cookie_opts & PX_CK_INDIRECT))) {
			/* insert: ours replaces it; indirect: the client has it already */
			*rc = http_hdr_del_idx(e, i);
			*found = 0;
			sck = 'D';
		} else if (srv && srv->cookie && (be->cookie_opts & (PX_CK_REWRITE | PX_CK_PREFIX))) {
			*rc = ck_rewrite_set_cookie(be, srv, e, i, it.value);
			sck = 'R';
		}
		if (*rc < 0)
			return '\0';
	}
	return sck;
}

/* Insert mode: whether the client needs a (new) cookie. */
static int ck_need_insert(const struct proxy *be, int srv_from_cookie, uint32_t now,
                          uint32_t first, uint32_t last)
{
	if (!srv_from_cookie)
		return 1;
	/* maxidle: the last-seen date is rounded up, so this refreshes it at
	 * most every 4 seconds; a date the configuration no longer wants is
	 * removed the same way */
	if ((be->cookie_maxidle || last) && (!last || (int32_t)(last - now) < 0))
		return 1;
	return (be->cookie_maxlife && !first) || (!be->cookie_maxlife && first);
}

/* The Set-Cookie value insert mode adds, in <e>'s arena. */
static int ck_insert_value(const struct proxy *be, const struct server *srv, uint32_t now,
                           uint32_t first, struct http_edit *e, struct ist *out)
{
	static const char expired[] = "; Expires=Thu, 01-Jan-1970 00:00:01 GMT";
	size_t nl = strlen(be->cookie_name), sl = srv->cookie ? strlen(srv->cookie) : 0;
	size_t dl = be->cookie_domain ? strlen(be->cookie_domain) : 0;
	int ndates = !srv->cookie ? 0 : be->cookie_maxlife ? 2 : be->cookie_maxidle ? 1 : 0;
	size_t len = nl + 1 + (srv->cookie ? sl + (size_t)ndates * (1 + CK_DATE_LEN) :
	                       sizeof(expired) - 1) + 8 + (dl ? 9 + dl : 0) +
	             (be->cookie_opts & PX_CK_HTTPONLY ? 10 : 0) +
	             (be->cookie_opts & PX_CK_SECURE ? 8 : 0);
	char *p = http_edit_alloc(e, len), *b = p;

	if (!p)
		return HTTP_EDIT_ENOROOM;
	memcpy(p, be->cookie_name, nl);
	p += nl;
	*p++ = '=';
	if (!srv->cookie) {
		/* a server without cookie: make the client forget a stale one */
		memcpy(p, expired, sizeof(expired) - 1);
		p += sizeof(expired) - 1;
	} else {
		memcpy(p, srv->cookie, sl);
		p += sl;
		if (be->cookie_maxidle || be->cookie_maxlife) {
			*p++ = CK_DATE_DELIM;
			http_cookie_date_enc((now + 3) >> 2, p);
			p += CK_DATE_LEN;
		}
		if (be->cookie_maxlife) {
			*p++ = CK_DATE_DELIM;
			http_cookie_date_enc(first ? first >> 2 : (now + 3) >> 2, p);
			p += CK_DATE_LEN;
		}
	}
	memcpy(p, "; path=/", 8);
	p += 8;
	if (dl) {
		memcpy(p, "; domain=", 9);
		memcpy(p + 9, be->cookie_domain, dl);
		p += 9 + dl;
	}
	if (be->cookie_opts & PX_CK_HTTPONLY) {
		memcpy(p, "; HttpOnly", 10);
		p += 10;
	}
	if (be->cookie_opts & PX_CK_SECURE) {
		memcpy(p, "; Secure", 8);
		p += 8;
	}
	*out = (struct ist){ b, (size_t)(p - b) };
	return 0;
}

int http_cookie_response_ex(const struct proxy *be, const struct server *srv,
                            int srv_from_cookie, struct http_msg *res, struct http_edit *e,
                            char cookie_term[2], const struct http_cookie_state *st)
{
	uint32_t now = wall_now(st ? st->now : 0);
	uint32_t first = st ? st->first_date : 0, last = st ? st->last_date : 0;
	int found = 0, rc = 0;
	struct ist v;
	char sck;

	if (!be->cookie_name) {
		cookie_term[1] = '-';
		return 0;
	}
	sck = ck_server_cookies(be, srv, srv_from_cookie, res, e, &found, &rc);
	if (rc < 0)
		return rc;
	if (srv && (be->cookie_opts & PX_CK_INSERT) &&
	    !(found && (be->cookie_opts & PX_CK_PRESERVE)) &&
	    ck_need_insert(be, srv_from_cookie, now, first, last) &&
	    (!(be->cookie_opts & PX_CK_POSTONLY) || res->meth == HTTP_METH_POST)) {
		rc = ck_insert_value(be, srv, now, first, e, &v);
		if (rc == 0)
			rc = http_hdr_add(e, IST("Set-Cookie"), v);
		if (rc < 0)
			return rc;
		/* the same server, only the date changed: an update */
		sck = srv->cookie && srv_from_cookie ? 'U' : 'I';
		/* a shared cache must not hand this cookie to other clients */
		if ((be->cookie_opts & PX_CK_NOCACHE) && res_cacheable(res)) {
			rc = http_hdr_add(e, IST("Cache-control"), IST("private"));
			if (rc < 0)
				return rc;
		}
	}
	cookie_term[1] = sck;
	return 0;
}

int http_cookie_response(const struct proxy *be, const struct server *srv, int srv_from_cookie,
                         struct http_msg *res, struct http_edit *e, char cookie_term[2])
{
	return http_cookie_response_ex(be, srv, srv_from_cookie, res, e, cookie_term, NULL);
}

/* ---- capture cookie ---- */

static char *capture_pair(const char *p, size_t n, int len)
{
	char *out;

	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if ((size_t)len < n)
		n = (size_t)len;
	out = malloc(n + 1);
	if (out) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
	return out;
}

char *http_cookie_capture(const struct http_msg *m, int response, const char *prefix, int len)
{
	const struct ist name = response ? IST("set-cookie") : IST("cookie");
	size_t plen = strlen(prefix);

	for (int i = http_hdr_find(m, name, 0); i >= 0; i = http_hdr_find(m, name, i + 1)) {
		const char *p = m->hdrs[i].value.ptr, *end = p + m->hdrs[i].value.len;

		while (p < end) {
			const char *q;

			while (p < end && (*p == ' ' || *p == '\t' || *p == ';'))
				p++;
			/* a request's field holds pairs up to ';', a response's one
			 * cookie: the pair ends at its first attribute */
			q = memchr(p, ';', (size_t)(end - p));
			if (!q)
				q = end;
			if ((size_t)(q - p) >= plen && memcmp(p, prefix, plen) == 0)
				return capture_pair(p, (size_t)(q - p), len);
			if (response)
				break;
			p = q;
		}
	}
	return NULL;
}

