/* libFuzzer target: the errorfile loader, and edit + serialise round trips.
 *
 * The first byte picks the mode; the rest is the input. Builders (first
 * byte even, bit 3 set) are described at fuzz_builders().
 *
 * Errorfile (first byte even, bit 3 clear): http_reply_parse() on the bytes with a
 * tune.bufsize taken from the first byte. An accepted reply must be a
 * complete response the strict parser reads back with the same head, a
 * final status and a body matching its Content-Length (or a close it
 * announces), fit the size limit, render as its stored bytes, and be a
 * fixed point: loading the stored bytes again stores the same bytes. A
 * refused one must say why.
 *
 * Round trip (first byte odd): the bytes start with a head; what follows
 * it drives a series of edits (additions, set, deletions in each match
 * mode, value rewrites, start-line changes) on an arena whose size also
 * comes from the input, so that edits run out of room at any point. After
 * the edits the head is serialised and parsed again: the start line and
 * the live fields must come back in order (Content-Length merged or
 * dropped as the flags say). Serialisations with the connection flags must
 * parse too, never keep a close/keep-alive option they were told to
 * remove, and fail with one byte less of room.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sluice/http/errors.h>
#include <sluice/http/h1.h>
#include <sluice/http/h1_out.h>
#include <sluice/http/msgedit.h>

#define MAXHDRS 24
#define CAP (MAXHDRS + 8)

/* ------------------------------------------------------------------------ */
/* Errorfile                                                                 */
/* ------------------------------------------------------------------------ */

static void check_reply(const struct http_reply *r, size_t max_size)
{
	struct http_hdr hdrs[HTTP_MAX_HDRS_DEFAULT];
	struct http_msg m = { .hdrs = hdrs, .maxhdrs = HTTP_MAX_HDRS_DEFAULT };
	struct h1_error perr;
	char *copy, *out, err[256];
	struct http_reply *again;
	size_t body;
	int i;

	if (r->flags & HTTP_REPLY_F_EMPTY) {
		assert(r->raw_len == 0);
		return;
	}
	assert(r->raw_len <= max_size && r->head_len <= r->raw_len);
	/* exactly raw_len bytes on the heap: ASan sees any overread */
	copy = malloc(r->raw_len);
	memcpy(copy, r->raw, r->raw_len);
	assert(h1_parse_head(copy, r->raw_len, 0, HTTP_METH_GET, r->raw_len + 1,
	                     H1_O_ACCEPT_INVALID, &m, &perr) == H1_OK);
	assert(m.head_len == r->head_len);
	assert(m.status == r->status && r->status >= 200 && r->status <= 599);
	assert(m.nhdrs == r->msg.nhdrs);
	for (i = 0; i < m.nhdrs; i++) {
		assert(m.hdrs[i].name.len == r->msg.hdrs[i].name.len);
		assert(m.hdrs[i].value.len == r->msg.hdrs[i].value.len);
		assert(r->msg.hdrs[i].name.ptr >= r->raw &&
		       r->msg.hdrs[i].name.ptr + r->msg.hdrs[i].name.len <= r->raw + r->head_len);
	}
	assert(!(m.flags & HTTP_F_HAS_TE));
	assert(!(m.flags & HTTP_F_CL_MERGED));   /* canonical: one field */
	/* the head is CRLF only */
	for (i = 0; i < (int)m.head_len; i++)
		assert(copy[i] != '\n' || (i > 0 && copy[i - 1] == '\r'));
	body = r->raw_len - r->head_len;
	if (m.flags & HTTP_F_BODYLESS)
		assert(body == 0);
	else if (m.flags & HTTP_F_HAS_CL)
		assert(m.content_length == body);
	else
		assert((m.flags & HTTP_F_CONN_CLOSE) && (r->flags & HTTP_REPLY_F_CLOSE));
	if (m.flags & HTTP_F_CONN_CLOSE)
		assert(r->flags & HTTP_REPLY_F_CLOSE);

	out = malloc(r->raw_len + 1);
	assert(http_reply_render(r, NULL, out, r->raw_len) == (ssize_t)r->raw_len);
	assert(memcmp(out, r->raw, r->raw_len) == 0);
	if (r->raw_len)
		assert(http_reply_render(r, NULL, out, r->raw_len - 1) == -1);
	free(out);

	again = http_reply_parse(copy, r->raw_len, "again", max_size, err, sizeof(err));
	assert(again);
	assert(again->raw_len == r->raw_len && memcmp(again->raw, r->raw, r->raw_len) == 0);
	assert(again->flags == r->flags);
	http_reply_release(again);
	free(copy);
}

static void fuzz_errorfile(uint8_t sel, const uint8_t *data, size_t size)
{
	static const size_t sizes[] = { 16384, 64, 256, 1024 };
	size_t max_size = sizes[(sel >> 1) & 3];
	char *copy = malloc(size ? size : 1), err[512];
	struct http_reply *r;

	memcpy(copy, data, size);
	err[0] = 0;
	r = http_reply_parse(copy, size, "fuzz", max_size, err, sizeof(err));
	if (r) {
		check_reply(r, max_size);
		http_reply_release(r);
	} else {
		assert(err[0] && strstr(err, "'fuzz'"));
	}
	free(copy);
}

/* Builders (first byte even with bit 3 set): http-error replies, errorloc
 * redirects and dynamic replies from input strings. What is accepted must
 * be a valid reply; a rendered dynamic reply must parse with exactly the
 * fields it declares, whatever the formats produce. */
static ssize_t fuzz_fmt(const void *fmt, void *ctx, char *out, size_t room)
{
	const struct ist *s = fmt;

	if (s->len > room)
		return -1;
	if (s->len)
		memcpy(out, s->ptr, s->len);
	return (ssize_t)s->len;
}

static void fuzz_builders(uint8_t sel, const uint8_t *data, size_t size)
{
	struct ist part[4] = { { 0 } };
	struct http_hdr hdr;
	struct http_reply_dyn_hdr dyn[2];
	struct http_reply *r;
	char *buf = malloc(size + 4), err[512], ct[32], url[64], out[4096];
	size_t i, k = 0, start = 0;
	int status;

	/* four NUL-separated strings: content-type, body, field value, URL */
	memcpy(buf, data, size);
	for (i = 0; i <= size && k < 4; i++) {
		if (i == size || buf[i] == 0) {
			part[k++] = (struct ist){ buf + start, i - start };
			start = i + 1;
		}
	}
	snprintf(ct, sizeof(ct), "%.*s", (int)part[0].len, part[0].ptr);
	snprintf(url, sizeof(url), "%.*s", (int)part[3].len, part[3].ptr);
	status = size ? 200 + data[0] % 400 : 503;
	hdr.name = IST("X-Fuzz");
	hdr.value = part[2];

	r = http_reply_build(status, part[0].len ? ct : NULL, part[1].ptr, part[1].len,
	                     (sel & 16) ? &hdr : NULL, (sel & 16) ? 1 : 0, 1024, err, sizeof(err));
	if (r) {
		check_reply(r, 1024);
		http_reply_release(r);
	}
	r = http_reply_redirect((sel & 32) ? 303 : 302, url, 1024, err, sizeof(err));
	if (r) {
		check_reply(r, 1024);
		http_reply_release(r);
	}
	dyn[0].name = IST("X-Dyn");
	dyn[0].fmt = &part[2];
	dyn[1].name = IST("X-Dyn2");
	dyn[1].fmt = &part[3];
	r = http_reply_build_dynamic(status, "text/plain", fuzz_fmt, &part[1], dyn, 2,
	                             (sel & 16) ? &hdr : NULL, (sel & 16) ? 1 : 0, err, sizeof(err));
	if (r) {
		struct http_hdr hdrs[16];
		struct http_msg m = { .hdrs = hdrs, .maxhdrs = 16 };
		struct h1_error perr;
		ssize_t n = http_reply_render(r, NULL, out, sizeof(out));

		if (n >= 0) {
			assert(h1_parse_head(out, (size_t)n, 0, HTTP_METH_GET, (size_t)n + 1,
			                     H1_O_ACCEPT_INVALID, &m, &perr) == H1_OK);
			/* 1xx/204/304 without a body carry no Content-Length */
			int bodyless = (status < 200 || status == 204 || status == 304) &&
			               !part[1].len;

			assert(m.status == status);
			assert(m.nhdrs == 4 + !!(sel & 16) - bodyless);
			if (bodyless) {
				assert(!(m.flags & HTTP_F_HAS_CL) && (size_t)n == m.head_len);
			} else {
				assert((m.flags & HTTP_F_HAS_CL) &&
				       m.content_length == (size_t)n - m.head_len);
				assert(m.content_length == part[1].len);
			}
		}
		http_reply_release(r);
	}
	free(buf);
}

/* ------------------------------------------------------------------------ */
/* Edit + serialise                                                          */
/* ------------------------------------------------------------------------ */

struct ops {
	const uint8_t *p, *end;
};

static unsigned int op_byte(struct ops *o)
{
	return o->p < o->end ? *o->p++ : 0;
}

/* A string of the input, up to 16 bytes. */
static struct ist op_str(struct ops *o)
{
	size_t n = op_byte(o) % 17;

	if (n > (size_t)(o->end - o->p))
		n = (size_t)(o->end - o->p);
	o->p += n;
	return (struct ist){ (const char *)o->p - n, n };
}

/* Names the serialiser and the parser give no meaning to. */
static struct ist op_name(struct ops *o)
{
	static const char *names[] = { "x-a", "X-A", "x-b", "Accept", "cookie", "X-Long-Name" };
	const char *n = names[op_byte(o) % 6];

	return (struct ist){ n, strlen(n) };
}

struct rw_arg {
	struct ops *o;
	struct ist to;
	uint8_t first;
};

/* Rewrites the elements (or values) starting with a given byte. */
static int fuzz_rewrite(void *arg, struct http_edit *e, struct ist in, struct ist *out)
{
	struct rw_arg *a = arg;
	char *p;

	if (!in.len || (uint8_t)in.ptr[0] != a->first)
		return 0;
	if (a->first & 1) {
		*out = a->to;   /* outside the arena: copied */
		return 1;
	}
	if (!http_edit_alloc(e, a->first % 5))   /* scratch given back */
		return HTTP_EDIT_ENOROOM;
	p = http_edit_alloc(e, a->to.len + in.len);
	if (!p)
		return HTTP_EDIT_ENOROOM;
	memcpy(p, a->to.ptr, a->to.len);
	memcpy(p + a->to.len, in.ptr, in.len);
	*out = (struct ist){ p, a->to.len + in.len };
	return 1;
}

static int match_odd(void *arg, struct ist name)
{
	return name.len & 1;
}

/* A target byte for the parser and the edit layer alike. */
static struct ist op_target(struct ops *o, char *buf, size_t size)
{
	struct ist s = op_str(o);
	size_t i, n = 1;

	buf[0] = '/';
	for (i = 0; i < s.len && n < size; i++)
		if ((uint8_t)s.ptr[i] > 0x20 && (uint8_t)s.ptr[i] != 0x7f)
			buf[n++] = s.ptr[i];
	return (struct ist){ buf, n };
}

static void apply_op(struct http_edit *e, struct ops *o)
{
	struct http_msg *m = e->msg;
	struct rw_arg rw;
	char tbuf[20];
	struct ist name, val;
	int rc = 0, i, which;

	switch (op_byte(o) % 12) {
	case 0:
		name = op_name(o);
		rc = http_hdr_add(e, name, op_str(o));
		break;
	case 1:
		name = op_name(o);
		rc = http_hdr_set(e, name, op_str(o));
		break;
	case 2:
		rc = http_hdr_del(e, op_str(o), (enum http_match)(op_byte(o) % 4), NULL, NULL);
		break;
	case 3:
		rc = http_hdr_del(e, op_name(o), HTTP_MATCH_CB, match_odd, NULL);
		break;
	case 4:
		/* any field but those whose syntax the parser checks */
		val = op_str(o);
		i = (int)(op_byte(o) % (unsigned)(m->nhdrs + 1));
		if (i < m->nhdrs && !http_hdr_is_deleted(&m->hdrs[i]) &&
		    (http_name_eq(m->hdrs[i].name, IST("host")) ||
		     http_name_eq(m->hdrs[i].name, IST("content-length")) ||
		     http_name_eq(m->hdrs[i].name, IST("transfer-encoding"))))
			break;
		rc = http_hdr_replace_idx(e, i, val);
		break;
	case 5:
	case 6:
		rw.o = o;
		name = op_name(o);
		rw.first = (uint8_t)op_byte(o);
		rw.to = op_str(o);
		which = (int)op_byte(o) & 1;
		rc = which ? http_hdr_replace_value(e, name, fuzz_rewrite, &rw) :
		             http_hdr_replace_header(e, name, fuzz_rewrite, &rw);
		break;
	case 7:
		if (m->is_request && m->uri.len && m->uri.ptr[0] == '/')
			rc = http_set_path(e, op_target(o, tbuf, sizeof(tbuf)));
		break;
	case 8:
		if (m->is_request && m->uri.len && m->uri.ptr[0] == '/') {
			val = op_target(o, tbuf, sizeof(tbuf));
			rc = http_set_query(e, (struct ist){ val.ptr + 1, val.len - 1 });
		}
		break;
	case 9:
		/* "*" belongs to OPTIONS, authority-form to CONNECT */
		if (m->is_request && m->uri.len && m->uri.ptr[0] != '*' &&
		    m->meth != HTTP_METH_CONNECT) {
			static const char *meths[] = { "GET", "POST", "PURGE", "HEAD", "x" };
			const char *s = meths[op_byte(o) % 5];

			rc = http_set_method(e, (struct ist){ s, strlen(s) });
		} else if (!m->is_request) {
			rc = http_set_status(e, 100 + (int)(op_byte(o) * 2) % 500, op_str(o));
		}
		break;
	case 10:
		rc = http_hdr_del_conn_named(e, (int)(op_byte(o) & 1));
		break;
	default:
		if (m->is_request && m->uri.len && m->uri.ptr[0] == '/')
			rc = http_set_pathq(e, op_target(o, tbuf, sizeof(tbuf)));
		break;
	}
	assert(rc >= 0 || rc == HTTP_EDIT_ENOROOM || rc == HTTP_EDIT_EINVAL);
	assert(e->arena_used <= e->arena_size);
	assert(m->nhdrs <= e->hdrs_cap);
}

static int same_ist(struct ist a, struct ist b)
{
	return a.len == b.len && (!a.len || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* A 1.1 request whose edits deleted Host is refused by the parser, as it
 * must be: nothing else to compare then. */
static int lost_host(const struct http_msg *m)
{
	return m->is_request && (m->flags & HTTP_F_VER_11) && http_hdr_find(m, IST("host"), 0) < 0;
}

/* The fields a flags-0 serialisation must give back. Returns the flags of
 * the message parsed again. */
static unsigned int check_round_trip(const struct http_msg *m, const char *out, size_t n,
                                     enum http_meth rm)
{
	struct http_hdr hdrs[CAP + 4];
	struct http_msg m2 = { .hdrs = hdrs, .maxhdrs = CAP + 4 };
	struct h1_error perr;
	enum h1_result rc;
	char cl[24];
	int i, j = 0, cl_seen = 0;

	rc = h1_parse_head(out, n, m->is_request, rm, n + 1, H1_O_ACCEPT_INVALID, &m2, &perr);
	if (lost_host(m)) {
		assert(rc == H1_ERROR);
		return 0;
	}
	if (rc != H1_OK)
		fprintf(stderr, "round trip refused: %s at %zu: %.*s\n", perr.reason, perr.offset,
		        (int)n, out);
	assert(rc == H1_OK);
	assert(m2.head_len == n);
	if (m->is_request) {
		assert(same_ist(m->method, m2.method) && same_ist(m->uri, m2.uri));
		assert(m->meth == m2.meth);
	} else {
		assert(m->status == m2.status && same_ist(m->reason, m2.reason));
	}
	snprintf(cl, sizeof(cl), "%llu", (unsigned long long)m->content_length);
	for (i = 0; i < m->nhdrs; i++) {
		const struct http_hdr *h = &m->hdrs[i];
		struct ist want = h->value;

		if (http_hdr_is_deleted(h))
			continue;
		if (http_name_eq(h->name, IST("content-length"))) {
			if (m->flags & HTTP_F_CL_DROP)
				continue;
			if (m->flags & HTTP_F_CL_MERGED) {
				if (cl_seen++)
					continue;
				want = (struct ist){ cl, strlen(cl) };
			}
		}
		assert(j < m2.nhdrs);
		assert(same_ist(h->name, m2.hdrs[j].name));
		assert(same_ist(want, m2.hdrs[j].value));
		j++;
	}
	assert(j == m2.nhdrs);
	return m2.flags;
}

/* Connection options and fields after a serialisation with <flags>;
 * <flags0> are those of the flags-0 serialisation parsed again. */
static void check_conn_flags(const struct http_msg *m, unsigned int flags, const char *out,
                             size_t n, enum http_meth rm, unsigned int flags0)
{
	struct http_hdr hdrs[CAP + 4];
	struct http_msg m2 = { .hdrs = hdrs, .maxhdrs = CAP + 4 };
	struct h1_error perr;
	struct http_hdr_iter it;
	struct ist v;
	int closes = 0, kas = 0;

	if (lost_host(m))
		return;
	assert(h1_parse_head(out, n, m->is_request, rm, n + 1, H1_O_ACCEPT_INVALID, &m2,
	                     &perr) == H1_OK);
	http_hdr_iter_init(&it);
	while (http_hdr_next(&m2, IST("connection"), 1, &it, &v)) {
		closes += http_name_eq(v, IST("close"));
		kas += http_name_eq(v, IST("keep-alive"));
	}
	if (flags & (H1O_F_CONN_CLOSE | H1O_F_CONN_KA | H1O_F_CONN_SCRUB | H1O_F_HOP_BY_HOP)) {
		assert(closes == !!(flags & H1O_F_CONN_CLOSE));
		assert(kas == (!(flags & H1O_F_CONN_CLOSE) && (flags & H1O_F_CONN_KA)));
	}
	if (flags & H1O_F_HOP_BY_HOP) {
		assert(http_hdr_find(&m2, IST("keep-alive"), 0) < 0);
		/* only "TE: trailers" stays (the next hop needs it) */
		http_hdr_iter_init(&it);
		while (http_hdr_next(&m2, IST("te"), 0, &it, &v))
			assert(v.len == 8 && !strncasecmp(v.ptr, "trailers", 8));
		assert(http_hdr_find(&m2, IST("proxy-connection"), 0) < 0);
		if (!(flags & H1O_F_TUNNEL))
			assert(http_hdr_find(&m2, IST("upgrade"), 0) < 0);
	}
	/* routing and framing fields are never dropped by these flags */
	assert(http_hdr_count(&m2, IST("host"), 0) == http_hdr_count(m, IST("host"), 0));
	assert((m2.flags & (HTTP_F_CHUNKED | HTTP_F_HAS_CL | HTTP_F_HAS_TE)) ==
	       (flags0 & (HTTP_F_CHUNKED | HTTP_F_HAS_CL | HTTP_F_HAS_TE)));
	assert(m2.content_length == m->content_length || !(m2.flags & HTTP_F_HAS_CL) ||
	       !(m->flags & HTTP_F_HAS_CL));
}

static void fuzz_round_trip(uint8_t sel, const uint8_t *data, size_t size)
{
	static const enum http_meth rms[] = { HTTP_METH_GET, HTTP_METH_HEAD };
	struct http_hdr hdrs[CAP];
	struct http_msg m = { .hdrs = hdrs, .maxhdrs = MAXHDRS };
	struct http_edit e;
	struct h1_error perr;
	struct ops o;
	char *copy, *out, arena[512];
	size_t out_size;
	int is_req = (sel >> 1) & 1, i, nops;
	enum http_meth rm = rms[(sel >> 2) & 1];
	unsigned int flags;
	ssize_t n, n2;
	unsigned int flags0;

	copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	if (h1_parse_head(copy, size, is_req, rm, size + 1, H1_O_ACCEPT_INVALID, &m, &perr) != H1_OK) {
		free(copy);
		return;
	}
	o.p = data + m.head_len;
	o.end = data + size;
	http_edit_init(&e, &m, arena, op_byte(&o) * 2, CAP - (int)(op_byte(&o) % 8));
	nops = (int)(op_byte(&o) % 32);
	for (i = 0; i < nops && o.p < o.end; i++)
		apply_op(&e, &o);

	out_size = 2 * m.head_len + e.arena_used + 64 * (size_t)CAP + 512;
	out = malloc(out_size);
	n = h1_out_head(&m, 0, out, out_size);
	assert(n > 0);
	flags0 = check_round_trip(&m, out, (size_t)n, rm);
	assert(h1_out_head(&m, 0, out, (size_t)n - 1) == H1_OUT_NOROOM);

	flags = op_byte(&o) & (H1O_F_CONN_CLOSE | H1O_F_CONN_KA | H1O_F_CONN_SCRUB |
	                       H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED | H1O_F_TUNNEL);
	n = h1_out_head(&m, flags, out, out_size);
	assert(n > 0);
	check_conn_flags(&m, flags, out, (size_t)n, rm, flags0);
	n2 = h1_out_head(&m, flags, out, (size_t)n - 1);
	assert(n2 == H1_OUT_NOROOM);

	/* re-framing flags: only sizes are checked, the result may be an
	 * invalid message by the caller's choice (chunked in HTTP/1.0) */
	flags = op_byte(&o) | (op_byte(&o) << 8);
	n = h1_out_head(&m, flags, out, out_size);
	assert(n > 0 && (size_t)n <= out_size);
	assert(h1_out_head(&m, flags, out, (size_t)n) == n);
	free(out);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		fuzz_round_trip(data[0], data + 1, size - 1);
	else if (data[0] & 8)
		fuzz_builders(data[0], data + 1, size - 1);
	else
		fuzz_errorfile(data[0], data + 1, size - 1);
	return 0;
}
