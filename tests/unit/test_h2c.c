/* HTTP/2 connection engine: h2c in server role driven by an in-process
 * nghttp2 client, and in client role against an nghttp2 server, checking
 * what each side sees: heads converted both ways (HAProxy 2.6's rules for
 * :authority, Host, cookies, CONNECT and websocket), bodies, trailers,
 * flow control held until h2c_consumed(), resets, GOAWAY. The protections
 * are driven by a raw frame writer (floods nghttp2 would not send) and
 * must end in a GOAWAY with their counter raised. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nghttp2/nghttp2.h>
#include <sluice/http/h2c.h>
#include <sluice/http/msgedit.h>
#include "t.h"

#define MAXS 128            /* stream slots, indexed by stream id */
#define LOG_MAX 8192

/* ------------------------------------------------------------------------ */
/* The owner of h2c: records every callback                                  */
/* ------------------------------------------------------------------------ */

struct ost {
	int used;
	int32_t sid;
	char log[LOG_MAX];        /* heads as text */
	size_t loglen;
	int nheads;
	char *data;               /* payload received */
	size_t dlen;
	int end_stream;
	int reset;
	uint32_t reset_err;
	int closed;
	/* body to send */
	const char *body;
	size_t body_len, body_off;
	int body_eom;             /* H2C_EOM_* once body is exhausted, 0: defer */
	int hold;                 /* data_out() says "none yet" */
	struct h2c *c;
	const struct http_hdr *trailers;
	int ntrailers;
};

struct owner {
	struct ost st[MAXS];
	int refuse;               /* stream_new() returns NULL */
	int head_fail;            /* head() returns -1 */
	int nnew;
	int auto_consume;         /* data() consumes at once */
	struct h2c *c;
};

static struct ost *ost_of(struct owner *o, int32_t sid)
{
	return &o->st[sid % MAXS];
}

static void logf_(struct ost *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct ost *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	s->loglen += (size_t)vsnprintf(s->log + s->loglen, sizeof(s->log) - s->loglen, fmt, ap);
	va_end(ap);
	if (s->loglen >= sizeof(s->log))
		s->loglen = sizeof(s->log) - 1;
}

static void *o_stream_new(void *owner, int32_t sid)
{
	struct owner *o = owner;
	struct ost *s = ost_of(o, sid);

	o->nnew++;
	if (o->refuse)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->used = 1;
	s->sid = sid;
	s->c = o->c;
	return s;
}

static void log_msg(struct ost *s, const struct http_msg *m, int is_trailers, int es)
{
	int i;

	s->nheads++;
	if (is_trailers)
		logf_(s, "TRAILERS es=%d\n", es);
	else if (m->is_request)
		logf_(s, "REQ %.*s %.*s %.*s f=%x cl=%llu es=%d\n", (int)m->method.len,
		      m->method.ptr, (int)m->uri.len, m->uri.ptr, (int)m->version.len,
		      m->version.ptr, m->flags, (unsigned long long)m->content_length, es);
	else
		logf_(s, "RES %d %.*s f=%x cl=%llu es=%d\n", m->status, (int)m->version.len,
		      m->version.ptr, m->flags, (unsigned long long)m->content_length, es);
	for (i = 0; i < m->nhdrs; i++)
		logf_(s, "%.*s: %.*s\n", (int)m->hdrs[i].name.len, m->hdrs[i].name.ptr,
		      (int)m->hdrs[i].value.len, m->hdrs[i].value.ptr);
}

static struct http_msg last_msg;   /* flags of the last head, for checks */

static int o_head(void *owner, void *sctx, const struct http_msg *m, int is_trailers, int es)
{
	struct owner *o = owner;
	struct ost *s = sctx;

	log_msg(s, m, is_trailers, es);
	last_msg = *m;
	if (es)
		s->end_stream = 1;
	return o->head_fail ? -1 : 0;
}

static int o_data(void *owner, void *sctx, const char *p, size_t len, int es)
{
	struct owner *o = owner;
	struct ost *s = sctx;

	if (len) {
		s->data = realloc(s->data, s->dlen + len);
		memcpy(s->data + s->dlen, p, len);
		s->dlen += len;
		if (o->auto_consume)
			h2c_consumed(o->c, s->sid, len);
	}
	if (es)
		s->end_stream = 1;
	return 0;
}

static void o_reset(void *owner, void *sctx, uint32_t err)
{
	struct ost *s = sctx;

	s->reset++;
	s->reset_err = err;
}

static void o_closed(void *owner, void *sctx)
{
	struct ost *s = sctx;

	s->closed++;
}

static ssize_t o_data_out(void *owner, void *sctx, char *dst, size_t max, int *eom)
{
	struct ost *s = sctx;
	size_t n = s->body_len - s->body_off;

	if (s->hold)
		return 0;
	if (n > max)
		n = max;
	memcpy(dst, s->body + s->body_off, n);
	s->body_off += n;
	if (s->body_off == s->body_len && s->body_eom) {
		*eom = s->body_eom;
		if (s->body_eom == H2C_EOM_TRAILERS && s->trailers)
			h2c_submit_trailers(s->c, s->sid, s->trailers, s->ntrailers);
	}
	return (ssize_t)n;
}

static const struct h2c_ops ops = {
	.stream_new = o_stream_new, .head = o_head, .data = o_data, .reset = o_reset,
	.closed = o_closed, .data_out = o_data_out,
};

static void owner_free(struct owner *o)
{
	int i;

	for (i = 0; i < MAXS; i++)
		free(o->st[i].data);
	free(o);
}

/* ------------------------------------------------------------------------ */
/* The nghttp2 peer                                                          */
/* ------------------------------------------------------------------------ */

struct pst {
	char log[LOG_MAX];
	size_t loglen;
	char *data;
	size_t dlen;
	int closed;
	uint32_t close_err;
	const char *body;
	size_t body_len, body_off;
	int trailers;             /* no END_STREAM on the last DATA */
};

struct peer {
	nghttp2_session *ng;
	struct pst st[MAXS];
	int goaway;
	uint32_t goaway_err;
	int32_t goaway_last;
	int auto_consume;         /* peer consumes (WINDOW_UPDATE) data at once */
	int respond;              /* server peer: answer each request with 200 */
	int settings_seen;
};

static int p_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *n, size_t nl,
                    const uint8_t *v, size_t vl, uint8_t fl, void *arg)
{
	struct peer *p = arg;
	struct pst *s = &p->st[f->hd.stream_id % MAXS];

	s->loglen += (size_t)snprintf(s->log + s->loglen, sizeof(s->log) - s->loglen,
	                              "%.*s: %.*s\n", (int)nl, n, (int)vl, v);
	if (s->loglen >= sizeof(s->log))
		s->loglen = sizeof(s->log) - 1;
	return 0;
}

static int p_data(nghttp2_session *ng, uint8_t fl, int32_t sid, const uint8_t *d, size_t l,
                  void *arg)
{
	struct peer *p = arg;
	struct pst *s = &p->st[sid % MAXS];

	s->data = realloc(s->data, s->dlen + l + 1);
	memcpy(s->data + s->dlen, d, l);
	s->dlen += l;
	if (p->auto_consume)
		nghttp2_session_consume(ng, sid, l);
	return 0;
}

static int p_close(nghttp2_session *ng, int32_t sid, uint32_t err, void *arg)
{
	struct peer *p = arg;

	p->st[sid % MAXS].closed = 1;
	p->st[sid % MAXS].close_err = err;
	return 0;
}

static ssize_t p_read(nghttp2_session *ng, int32_t sid, uint8_t *buf, size_t len,
                      uint32_t *fl, nghttp2_data_source *src, void *arg)
{
	struct pst *s = src->ptr;
	size_t n = s->body_len - s->body_off;

	if (n > len)
		n = len;
	memcpy(buf, s->body + s->body_off, n);
	s->body_off += n;
	if (s->body_off == s->body_len)
		*fl |= NGHTTP2_DATA_FLAG_EOF | (s->trailers ? NGHTTP2_DATA_FLAG_NO_END_STREAM : 0);
	return (ssize_t)n;
}

static int p_frame(nghttp2_session *ng, const nghttp2_frame *f, void *arg)
{
	struct peer *p = arg;
	struct pst *s = &p->st[f->hd.stream_id % MAXS];

	if (f->hd.type == NGHTTP2_GOAWAY) {
		p->goaway++;
		p->goaway_err = f->goaway.error_code;
		p->goaway_last = f->goaway.last_stream_id;
	}
	if (f->hd.type == NGHTTP2_SETTINGS && !(f->hd.flags & NGHTTP2_FLAG_ACK))
		p->settings_seen++;
	if (f->hd.type == NGHTTP2_HEADERS) {
		s->loglen += (size_t)snprintf(s->log + s->loglen, sizeof(s->log) - s->loglen,
		                              "--%s\n", (f->hd.flags & NGHTTP2_FLAG_END_STREAM) ?
		                              " es" : "");
		if (p->respond && f->headers.cat == NGHTTP2_HCAT_REQUEST &&
		    (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
			nghttp2_nv nv[] = { { (uint8_t *)":status", (uint8_t *)"200", 7, 3, 0 } };

			nghttp2_submit_response(ng, f->hd.stream_id, nv, 1, NULL);
		}
	}
	return 0;
}

static struct peer *peer_new(int server, int auto_consume, const nghttp2_settings_entry *iv,
                             size_t niv)
{
	struct peer *p = calloc(1, sizeof(*p));
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;

	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_on_header_callback(cb, p_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, p_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, p_close);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, p_frame);
	nghttp2_option_new(&opt);
	nghttp2_option_set_no_auto_window_update(opt, 1);
	/* the peer may send what a real one would not (tests of our checks) */
	nghttp2_option_set_no_http_messaging(opt, 1);
	if (server)
		nghttp2_session_server_new2(&p->ng, cb, p, opt);
	else
		nghttp2_session_client_new2(&p->ng, cb, p, opt);
	nghttp2_session_callbacks_del(cb);
	nghttp2_option_del(opt);
	p->auto_consume = auto_consume;
	nghttp2_submit_settings(p->ng, NGHTTP2_FLAG_NONE, iv, niv);
	return p;
}

static void peer_free(struct peer *p)
{
	int i;

	nghttp2_session_del(p->ng);
	for (i = 0; i < MAXS; i++)
		free(p->st[i].data);
	free(p);
}

/* Exchanges bytes until both sides are quiet. <rc> gets the last
 * h2c_recv() result. */
static ssize_t pump(struct h2c *c, struct peer *p)
{
	char buf[16384];
	ssize_t rc = 0;
	int rounds;

	for (rounds = 0; rounds < 10000; rounds++) {
		const uint8_t *out;
		ssize_t n = nghttp2_session_mem_send(p->ng, &out), m, progress = 0;

		while (n > 0) {
			ssize_t r = h2c_recv(c, (const char *)out, (size_t)n);

			if (r < 0)
				rc = r;
			progress += n;
			n = nghttp2_session_mem_send(p->ng, &out);
		}
		while ((m = h2c_send(c, buf, sizeof(buf))) > 0) {
			nghttp2_session_mem_recv(p->ng, (const uint8_t *)buf, (size_t)m);
			progress += m;
		}
		if (!progress)
			break;
	}
	return rc;
}

static nghttp2_nv nv_make(const char *n, const char *v)
{
	nghttp2_nv nv = { (uint8_t *)n, (uint8_t *)v, strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE };

	return nv;
}

/* The client peer sends a request given as "name", "value" pairs (NULL
 * ended), END_STREAM on the head. Returns the stream id. */
static int32_t peer_request(struct peer *p, const char **pairs)
{
	nghttp2_nv nv[64];
	size_t n = 0;

	while (pairs[2 * n]) {
		nv[n] = nv_make(pairs[2 * n], pairs[2 * n + 1]);
		n++;
	}
	return nghttp2_submit_request(p->ng, NULL, nv, n, NULL, NULL);
}

/* Request with a body: submit with a data provider. */
static int32_t peer_request_body(struct peer *p, const char *body, size_t blen,
                                 const char **pairs)
{
	nghttp2_nv nv[64];
	nghttp2_data_provider prd;
	size_t n = 0;
	int32_t sid;
	struct pst tmp = { 0 };

	while (pairs[2 * n]) {
		nv[n] = nv_make(pairs[2 * n], pairs[2 * n + 1]);
		n++;
	}
	/* the slot is only known once the id is: use the next one */
	sid = nghttp2_session_get_next_stream_id(p->ng);
	p->st[sid % MAXS] = tmp;
	p->st[sid % MAXS].body = body;
	p->st[sid % MAXS].body_len = blen;
	prd.source.ptr = &p->st[sid % MAXS];
	prd.read_callback = p_read;
	return nghttp2_submit_request(p->ng, NULL, nv, n, &prd, NULL);
}

static int has(const char *log, const char *want)
{
	if (strstr(log, want))
		return 1;
	fprintf(stderr, "  missing \"%s\" in:\n%s\n", want, log);
	return 0;
}

static int hasnt(const char *log, const char *bad)
{
	if (!strstr(log, bad))
		return 1;
	fprintf(stderr, "  unexpected \"%s\" in:\n%s\n", bad, log);
	return 0;
}

/* A server-role h2c with its client peer, preface and SETTINGS exchanged. */
struct srv {
	struct owner *o;
	struct h2c *c;
	struct peer *p;
};

static void srv_open(struct srv *s, const struct h2c_settings *set)
{
	s->o = calloc(1, sizeof(*s->o));
	s->c = h2c_new(1, set, &ops, s->o);
	s->o->c = s->c;
	s->p = peer_new(0, 1, NULL, 0);
	pump(s->c, s->p);
}

static void srv_close(struct srv *s)
{
	h2c_free(s->c);
	peer_free(s->p);
	owner_free(s->o);
}

/* ------------------------------------------------------------------------ */
/* Server role: requests in                                                  */
/* ------------------------------------------------------------------------ */

#define REQ(...) ((const char *[]){ __VA_ARGS__, NULL })

static void test_request_authority(void)
{
	struct srv s;
	int32_t sid;
	struct ost *o;

	srv_open(&s, NULL);
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/p?q",
	                                  ":authority", "example.com", "x-a", "1",
	                                  "host", "other.example", "x-b", "2"));
	pump(s.c, s.p);
	o = ost_of(s.o, sid);
	CHECK(o->used && o->nheads == 1);
	CHECK(has(o->log, "REQ GET https://example.com/p?q HTTP/2.0"));
	/* Host from :authority, first, the client's Host gone (HAProxy 2.6) */
	CHECK(has(o->log, "es=1\nhost: example.com\nx-a: 1\nx-b: 2\n"));
	CHECK(hasnt(o->log, "other.example"));
	CHECK((last_msg.flags & (HTTP_F_ABS_URI | HTTP_F_BODYLESS | HTTP_F_XFER_LEN |
	                         HTTP_F_VER_11)) ==
	      (HTTP_F_ABS_URI | HTTP_F_BODYLESS | HTTP_F_XFER_LEN | HTTP_F_VER_11));
	CHECK(o->end_stream);

	/* default ports go, others stay; an empty port goes */
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a.example:443"));
	pump(s.c, s.p);
	CHECK(has(ost_of(s.o, sid)->log, "REQ GET https://a.example/ HTTP/2.0"));
	CHECK(has(ost_of(s.o, sid)->log, "host: a.example\n"));
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "http", ":path", "/",
	                                  ":authority", "a.example:80"));
	pump(s.c, s.p);
	CHECK(has(ost_of(s.o, sid)->log, "REQ GET http://a.example/ HTTP"));
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "http", ":path", "/",
	                                  ":authority", "a.example:443"));
	pump(s.c, s.p);
	CHECK(has(ost_of(s.o, sid)->log, "REQ GET http://a.example:443/ HTTP"));
	CHECK(has(ost_of(s.o, sid)->log, "host: a.example:443\n"));
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "[::1]:443"));
	pump(s.c, s.p);
	CHECK(has(ost_of(s.o, sid)->log, "REQ GET https://[::1]/ HTTP"));
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a.example:"));
	pump(s.c, s.p);
	CHECK(has(ost_of(s.o, sid)->log, "host: a.example\n"));

	/* no :authority: origin form, Host kept where it was */
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/o",
	                                  "x-a", "1", "host", "h.example:443", "x-b", "2"));
	pump(s.c, s.p);
	o = ost_of(s.o, sid);
	CHECK(has(o->log, "REQ GET /o HTTP/2.0"));
	CHECK(has(o->log, "x-a: 1\nhost: h.example:443\nx-b: 2\n"));
	CHECK(!(last_msg.flags & HTTP_F_ABS_URI));

	/* neither: HAProxy 2.6 forwards it without Host, nghttp2 1.52 refuses
	 * it as malformed (RFC 9113 section 8.3.1 lets it go either way) */
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/n"));
	pump(s.c, s.p);
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == NGHTTP2_PROTOCOL_ERROR);
	CHECK(!ost_of(s.o, sid)->used);

	/* OPTIONS * */
	sid = peer_request(s.p, REQ(":method", "OPTIONS", ":scheme", "https", ":path", "*",
	                                  ":authority", "a.example"));
	pump(s.c, s.p);
	CHECK(has(ost_of(s.o, sid)->log, "REQ OPTIONS * HTTP/2.0"));
	CHECK(has(ost_of(s.o, sid)->log, "host: a.example\n"));
	CHECK(h2c_streams(s.c) == 8);   /* open until answered */
	srv_close(&s);
}

static void test_request_cookies_connect(void)
{
	struct srv s;
	int32_t sid;
	struct ost *o;

	srv_open(&s, NULL);
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a", "cookie", "a=1", "x-c", "3",
	                                  "cookie", "b=2", "cookie", "c=3"));
	pump(s.c, s.p);
	o = ost_of(s.o, sid);
	/* RFC 9113 section 8.2.3, one field after the others (HAProxy 2.6) */
	CHECK(has(o->log, "host: a\nx-c: 3\ncookie: a=1; b=2; c=3\n"));

	/* a single cookie stays in place */
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a", "cookie", "a=1", "x-c", "3"));
	pump(s.c, s.p);
	CHECK(has(ost_of(s.o, sid)->log, "host: a\ncookie: a=1\nx-c: 3\n"));

	/* CONNECT: authority-form uri, Host added, no body of its own */
	sid = peer_request_body(s.p, "tunnel", 6, REQ(":method", "CONNECT",
	                                              ":authority", "b.example:443"));
	pump(s.c, s.p);
	o = ost_of(s.o, sid);
	CHECK(has(o->log, "REQ CONNECT b.example:443 HTTP/2.0"));
	CHECK(has(o->log, "host: b.example:443\n"));
	CHECK(last_msg.flags & HTTP_F_BODYLESS);
	CHECK(o->dlen == 6 && memcmp(o->data, "tunnel", 6) == 0);
	srv_close(&s);
}

static void test_request_bodies(void)
{
	struct srv s;
	int32_t sid;
	struct ost *o;
	static const struct http_hdr tr[] = { { IST("X-Sum"), IST("abc") } };

	srv_open(&s, NULL);
	s.o->auto_consume = 1;
	sid = peer_request_body(s.p, "hello", 5, REQ(":method", "POST", ":scheme", "https",
	                                             ":path", "/u", ":authority", "a",
	                                             "content-length", "5"));
	pump(s.c, s.p);
	o = ost_of(s.o, sid);
	CHECK(has(o->log, "REQ POST https://a/u HTTP/2.0 f=") && has(o->log, "cl=5 es=0"));
	CHECK((last_msg.flags & (HTTP_F_HAS_CL | HTTP_F_XFER_LEN | HTTP_F_BODYLESS)) ==
	      (HTTP_F_HAS_CL | HTTP_F_XFER_LEN));
	CHECK(o->dlen == 5 && memcmp(o->data, "hello", 5) == 0 && o->end_stream);

	/* no content-length: length by framing, XFER_LEN alone */
	sid = peer_request_body(s.p, "abc", 3, REQ(":method", "POST", ":scheme", "https",
	                                           ":path", "/u", ":authority", "a"));
	pump(s.c, s.p);
	CHECK((last_msg.flags & (HTTP_F_HAS_CL | HTTP_F_XFER_LEN | HTTP_F_BODYLESS |
	                         HTTP_F_CHUNKED)) == HTTP_F_XFER_LEN);
	CHECK(ost_of(s.o, sid)->dlen == 3 && ost_of(s.o, sid)->end_stream);

	/* content-length and DATA disagree: nghttp2 resets the stream */
	sid = peer_request_body(s.p, "abcd", 4, REQ(":method", "POST", ":scheme", "https",
	                                            ":path", "/u", ":authority", "a",
	                                            "content-length", "3"));
	pump(s.c, s.p);
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == NGHTTP2_PROTOCOL_ERROR);
	CHECK(ost_of(s.o, sid)->reset == 1);

	/* trailers from the client */
	{
		nghttp2_nv nv[] = { nv_make(":method", "POST"), nv_make(":scheme", "https"),
		                    nv_make(":path", "/t"), nv_make(":authority", "a") };
		nghttp2_nv tv[] = { nv_make("x-t", "1") };

		sid = nghttp2_submit_headers(s.p->ng, NGHTTP2_FLAG_NONE, -1, NULL, nv, 4, NULL);
		pump(s.c, s.p);
		nghttp2_submit_headers(s.p->ng, NGHTTP2_FLAG_END_STREAM, sid, NULL, tv, 1, NULL);
		pump(s.c, s.p);
		o = ost_of(s.o, sid);
		CHECK(has(o->log, "TRAILERS es=1\nx-t: 1\n"));
		CHECK(o->nheads == 2 && o->end_stream);
	}

	/* response with a body in two pulls, then trailers */
	o->body = "0123456789";
	o->body_len = 10;
	o->body_eom = H2C_EOM_TRAILERS;
	o->trailers = tr;
	o->ntrailers = 1;
	{
		struct http_msg m = { 0 };
		struct http_hdr h[] = { { IST("Content-Type"), IST("text/plain") } };

		m.status = 200;
		m.hdrs = h;
		m.nhdrs = 1;
		CHECK(h2c_submit_response(s.c, sid, &m, 0) == 0);
		CHECK(h2c_submit_response(s.c, sid, &m, 0) == H2C_E_INVAL);
	}
	pump(s.c, s.p);
	CHECK(has(s.p->st[sid].log, ":status: 200\ncontent-type: text/plain\n--\n"));
	CHECK(has(s.p->st[sid].log, "x-sum: abc\n-- es\n"));
	CHECK(s.p->st[sid].dlen == 10 && memcmp(s.p->st[sid].data, "0123456789", 10) == 0);
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == 0);
	CHECK(o->closed == 1 && o->reset == 0);
	srv_close(&s);
}

static void test_flow_control(void)
{
	struct srv s;
	int32_t sid;
	struct ost *o;
	size_t big = 300000, seen;
	char *body = malloc(big);

	memset(body, 'x', big);
	srv_open(&s, NULL);
	sid = peer_request_body(s.p, body, big, REQ(":method", "POST", ":scheme", "https",
	                                            ":path", "/big", ":authority", "a"));
	pump(s.c, s.p);
	o = ost_of(s.o, sid);
	/* the stream window (65535) stops the body until the owner consumes */
	CHECK(o->dlen == 65535);
	pump(s.c, s.p);
	CHECK(o->dlen == 65535);
	h2c_consumed(s.c, sid, 1000);   /* below half a window: no update yet */
	pump(s.c, s.p);
	CHECK(o->dlen == 65535);
	for (seen = 0; seen < 20 && !o->end_stream; seen++) {
		h2c_consumed(s.c, sid, o->dlen);
		pump(s.c, s.p);
	}
	CHECK(o->dlen == big && o->end_stream);
	CHECK(o->dlen == big && memchr(o->data, 0, o->dlen) == NULL);

	/* a stream the owner forgets gives its window back to the connection */
	sid = peer_request_body(s.p, body, 40000, REQ(":method", "POST", ":scheme", "https",
	                                              ":path", "/f", ":authority", "a"));
	pump(s.c, s.p);
	CHECK(ost_of(s.o, sid)->dlen == 40000);
	h2c_detach(s.c, sid);
	pump(s.c, s.p);
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == NGHTTP2_CANCEL);
	CHECK(nghttp2_session_get_remote_window_size(s.p->ng) >= 65535);
	free(body);
	srv_close(&s);
}

static void test_response_paths(void)
{
	struct srv s;
	int32_t sid;
	struct ost *o;
	struct http_msg m = { 0 };
	struct http_hdr h[8];
	int n = 0;

	srv_open(&s, NULL);
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a"));
	pump(s.c, s.p);
	o = ost_of(s.o, sid);
	/* interim 100, then a final head from an HTTP/1 server */
	m.status = 100;
	CHECK(h2c_submit_response(s.c, sid, &m, 0) == 0);
	h[n++] = (struct http_hdr){ IST("Connection"), IST("keep-alive") };
	h[n++] = (struct http_hdr){ IST("Keep-Alive"), IST("timeout=5") };
	h[n++] = (struct http_hdr){ IST("Transfer-Encoding"), IST("chunked") };
	h[n++] = (struct http_hdr){ IST(""), IST("deleted") };
	h[n++] = (struct http_hdr){ IST("X-Kept"), IST("Yes") };
	h[n++] = (struct http_hdr){ IST("Upgrade"), IST("h2c") };
	h[n++] = (struct http_hdr){ IST("Proxy-Connection"), IST("close") };
	m.status = 200;
	m.hdrs = h;
	m.nhdrs = n;
	m.flags = HTTP_F_CHUNKED | HTTP_F_XFER_LEN;
	o->hold = 1;
	CHECK(h2c_submit_response(s.c, sid, &m, 0) == 0);
	pump(s.c, s.p);
	CHECK(has(s.p->st[sid].log, ":status: 100\n--\n:status: 200\nx-kept: Yes\n--\n"));
	CHECK(hasnt(s.p->st[sid].log, "connection") && hasnt(s.p->st[sid].log, "keep-alive") &&
	      hasnt(s.p->st[sid].log, "transfer-encoding") && hasnt(s.p->st[sid].log, "upgrade"));
	/* data_out() had nothing: deferred until h2c_resume() */
	CHECK(s.p->st[sid].dlen == 0 && !s.p->st[sid].closed);
	CHECK(!h2c_want_write(s.c));
	o->hold = 0;
	o->body = "late";
	o->body_len = 4;
	o->body_eom = H2C_EOM_END;
	pump(s.c, s.p);
	CHECK(s.p->st[sid].dlen == 0);
	CHECK(h2c_resume(s.c, sid) == 0);
	CHECK(h2c_want_write(s.c));
	pump(s.c, s.p);
	CHECK(s.p->st[sid].dlen == 4 && s.p->st[sid].closed && s.p->st[sid].close_err == 0);
	CHECK(o->closed == 1);

	/* merged Content-Length written once; HEAD answer without body */
	sid = peer_request(s.p, REQ(":method", "HEAD", ":scheme", "https", ":path", "/",
	                                  ":authority", "a"));
	pump(s.c, s.p);
	n = 0;
	h[n++] = (struct http_hdr){ IST("Content-Length"), IST("12") };
	h[n++] = (struct http_hdr){ IST("Content-Length"), IST("12") };
	m.hdrs = h;
	m.nhdrs = n;
	m.flags = HTTP_F_HAS_CL | HTTP_F_CL_MERGED | HTTP_F_XFER_LEN;
	m.content_length = 12;
	CHECK(h2c_submit_response(s.c, sid, &m, 1) == 0);
	pump(s.c, s.p);
	CHECK(has(s.p->st[sid].log, ":status: 200\ncontent-length: 12\n-- es\n"));

	/* a 101 outside an extended CONNECT cannot go */
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a"));
	pump(s.c, s.p);
	m.status = 101;
	m.nhdrs = 0;
	m.flags = 0;
	CHECK(h2c_submit_response(s.c, sid, &m, 0) == H2C_E_UPGRADE);
	/* the owner aborts it instead */
	CHECK(h2c_reset_stream(s.c, sid, H2C_INTERNAL_ERROR) == 0);
	pump(s.c, s.p);
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == NGHTTP2_INTERNAL_ERROR);
	CHECK(ost_of(s.o, sid)->reset == 0);
	CHECK(h2c_submit_response(s.c, sid, &m, 0) == H2C_E_INVAL);
	srv_close(&s);
}

static void test_websocket_server(void)
{
	struct srv s;
	int32_t sid;
	struct ost *o;
	struct http_msg m = { 0 };
	struct http_hdr h[4];
	const char *key;
	/* RFC 6455 section 1.3's example */
	static const char *k = "dGhlIHNhbXBsZSBub25jZQ==", *acc = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

	srv_open(&s, NULL);
	CHECK(nghttp2_session_get_remote_settings(s.p->ng,
	                                          NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL) == 1);
	sid = peer_request_body(s.p, "frames", 6, REQ(":method", "CONNECT", ":protocol",
	                                              "websocket", ":scheme", "https", ":path",
	                                              "/ws?a", ":authority", "a.example",
	                                              "sec-websocket-version", "13"));
	pump(s.c, s.p);
	o = ost_of(s.o, sid);
	/* what an HTTP/1 server expects (HAProxy 2.6) */
	CHECK(has(o->log, "REQ GET https://a.example/ws?a HTTP/2.0"));
	CHECK(has(o->log, "host: a.example\nsec-websocket-version: 13\nupgrade: websocket\n"
	              "connection: upgrade\nsec-websocket-key: "));
	CHECK((last_msg.flags & (HTTP_F_UPGRADE | HTTP_F_CONN_UPGRADE)) ==
	      (HTTP_F_UPGRADE | HTTP_F_CONN_UPGRADE));
	key = strstr(o->log, "sec-websocket-key: ");
	CHECK(key && strlen(key) == strlen("sec-websocket-key: ") + 24 + 1);
	/* a 101 with the wrong accept is refused (the owner answers 502) */
	m.status = 101;
	h[0] = (struct http_hdr){ IST("Upgrade"), IST("websocket") };
	h[1] = (struct http_hdr){ IST("Connection"), IST("Upgrade") };
	h[2] = (struct http_hdr){ IST("Sec-WebSocket-Accept"), IST("AAAAAAAAAAAAAAAAAAAAAAAAAAA=") };
	m.hdrs = h;
	m.nhdrs = 3;
	m.flags = HTTP_F_TUNNEL | HTTP_F_BODYLESS | HTTP_F_XFER_LEN;
	CHECK(h2c_submit_response(s.c, sid, &m, 0) == H2C_E_WS_ACCEPT);

	/* a client key is passed on and its accept checked */
	sid = peer_request_body(s.p, "frames", 6, REQ(":method", "CONNECT", ":protocol",
	                                              "websocket", ":scheme", "https", ":path",
	                                              "/ws", ":authority", "a.example",
	                                              "sec-websocket-key", k));
	pump(s.c, s.p);
	o = ost_of(s.o, sid);
	CHECK(has(o->log, "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\nupgrade: websocket\n"));
	h[2].value = (struct ist){ acc, strlen(acc) };
	o->body = "back";
	o->body_len = 4;
	o->body_eom = H2C_EOM_END;
	CHECK(h2c_submit_response(s.c, sid, &m, 0) == 0);
	pump(s.c, s.p);
	CHECK(has(s.p->st[sid].log, ":status: 200\nsec-websocket-accept: "));
	CHECK(hasnt(s.p->st[sid].log, "upgrade") && has(s.p->st[sid].log, "sec-websocket-accept: "));
	CHECK(s.p->st[sid].dlen == 4 && o->dlen == 6);
	srv_close(&s);
}

static void test_reset_refuse_shutdown(void)
{
	struct srv s;
	int32_t sid;

	srv_open(&s, NULL);
	sid = peer_request_body(s.p, "x", 1, REQ(":method", "POST", ":scheme", "https",
	                                         ":path", "/", ":authority", "a"));
	pump(s.c, s.p);
	nghttp2_submit_rst_stream(s.p->ng, NGHTTP2_FLAG_NONE, sid, NGHTTP2_CANCEL);
	pump(s.c, s.p);
	CHECK(ost_of(s.o, sid)->reset == 1 && ost_of(s.o, sid)->reset_err == NGHTTP2_CANCEL);
	CHECK(h2c_counters(s.c)->early_resets == 1 && h2c_counters(s.c)->rst_recv == 1);
	CHECK(h2c_streams(s.c) == 0);

	/* the owner refuses a stream */
	s.o->refuse = 1;
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a"));
	pump(s.c, s.p);
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == NGHTTP2_REFUSED_STREAM);
	CHECK(h2c_counters(s.c)->refused == 1);
	s.o->refuse = 0;

	/* head() < 0: the stream is reset, no reset() back */
	s.o->head_fail = 1;
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a"));
	pump(s.c, s.p);
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == NGHTTP2_INTERNAL_ERROR);
	CHECK(ost_of(s.o, sid)->reset == 0);
	s.o->head_fail = 0;

	/* malformed :path: stream error, the owner never hears of it */
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/a#b",
	                                  ":authority", "a"));
	pump(s.c, s.p);
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == NGHTTP2_PROTOCOL_ERROR);
	CHECK(!ost_of(s.o, sid)->used && h2c_counters(s.c)->malformed == 1);
	/* connection-specific field (nghttp2's check) */
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a", "connection", "close"));
	pump(s.c, s.p);
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == NGHTTP2_PROTOCOL_ERROR);
	CHECK(!ost_of(s.o, sid)->used);

	/* graceful shutdown: notice, the open stream still completes, then
	 * the last id */
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a"));
	pump(s.c, s.p);
	h2c_shutdown(s.c);
	pump(s.c, s.p);
	CHECK(s.p->goaway == 1 && s.p->goaway_err == 0 && s.p->goaway_last == 0x7fffffff);
	CHECK(h2c_want_read(s.c));
	{
		struct http_msg m = { 0 };

		m.status = 204;
		CHECK(h2c_submit_response(s.c, sid, &m, 1) == 0);
	}
	pump(s.c, s.p);
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == 0);
	/* the final GOAWAY went out (the nghttp2 peer, done with the
	 * connection, no longer reports it; reg-tests/h2/h2_soft_stop.vtc
	 * checks its last stream id): nothing left to do */
	CHECK(!h2c_want_read(s.c) && !h2c_want_write(s.c));
	srv_close(&s);
}

static void test_header_limits(void)
{
	struct srv s;
	struct h2c_settings set = { .max_header_list = 4096, .max_hdrs = 10 };
	const char *pairs[64];
	char big[5000];
	int32_t sid;
	int i, n = 0;
	ssize_t rc;

	srv_open(&s, &set);
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sid = peer_request(s.p, REQ(":method", "GET", ":scheme", "https", ":path", "/",
	                                  ":authority", "a", "x-big", big));
	pump(s.c, s.p);
	/* over the list limit: refused (HAProxy 2.6), the connection lives */
	CHECK(s.p->st[sid].closed && s.p->st[sid].close_err == NGHTTP2_REFUSED_STREAM);
	CHECK(h2c_counters(s.c)->heads_too_big == 1 && !s.p->goaway);

	/* more fields than max_hdrs: COMPRESSION_ERROR (HAProxy 2.6) */
	pairs[n++] = ":method"; pairs[n++] = "GET";
	pairs[n++] = ":scheme"; pairs[n++] = "https";
	pairs[n++] = ":path"; pairs[n++] = "/";
	for (i = 0; i < 11; i++) {
		pairs[n++] = "x-f";
		pairs[n++] = "1";
	}
	pairs[n] = NULL;
	sid = peer_request(s.p, pairs);
	rc = pump(s.c, s.p);
	CHECK(rc < 0);
	CHECK(s.p->goaway == 1 && s.p->goaway_err == NGHTTP2_COMPRESSION_ERROR);
	CHECK(h2c_counters(s.c)->too_many_fields == 1);
	CHECK(h2c_counters(s.c)->calm_cause == H2C_CAUSE_TOO_MANY_FIELDS);
	CHECK(!h2c_want_read(s.c) && !h2c_want_write(s.c));
	srv_close(&s);
}

/* ------------------------------------------------------------------------ */
/* Protections: raw frames                                                   */
/* ------------------------------------------------------------------------ */

struct raw {
	char *b;
	size_t len, cap;
};

static void raw_put(struct raw *r, const void *p, size_t n)
{
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2;
		r->b = realloc(r->b, r->cap);
	}
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

static void raw_frame(struct raw *r, int type, int flags, uint32_t sid, const void *p,
                      size_t n)
{
	uint8_t h[9] = { (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n, (uint8_t)type,
	                 (uint8_t)flags, (uint8_t)(sid >> 24), (uint8_t)(sid >> 16),
	                 (uint8_t)(sid >> 8), (uint8_t)sid };

	raw_put(r, h, 9);
	if (n)
		raw_put(r, p, n);
}

/* HPACK literal without indexing, new name (RFC 7541 section 6.2.2), for
 * short strings. */
static size_t hpack_lit(uint8_t *out, const char *n, const char *v)
{
	size_t nl = strlen(n), vl = strlen(v), o = 0;

	out[o++] = 0x00;
	out[o++] = (uint8_t)nl;
	memcpy(out + o, n, nl);
	o += nl;
	out[o++] = (uint8_t)vl;
	memcpy(out + o, v, vl);
	return o + vl;
}

static size_t hpack_get(uint8_t *out, const char *path)
{
	size_t o = 0;

	o += hpack_lit(out + o, ":method", "GET");
	o += hpack_lit(out + o, ":scheme", "https");
	o += hpack_lit(out + o, ":path", path);
	o += hpack_lit(out + o, ":authority", "a");
	return o;
}

static void raw_preface(struct raw *r)
{
	raw_put(r, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
	raw_frame(r, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
}

/* Feeds <r> to a fresh server-role h2c in slices of 16 kB (a buffer per
 * call), answering nothing; returns the first GOAWAY's error code found in
 * the output, or -1. */
static long raw_run(struct raw *r, const struct h2c_settings *set, struct h2c_counters *cnt,
                    int *recv_rc)
{
	struct owner *o = calloc(1, sizeof(*o));
	struct h2c *c = h2c_new(1, set, &ops, o);
	char out[65536];
	size_t off = 0, olen = 0, i;
	long err = -1;

	o->c = c;
	*recv_rc = 0;
	while (off < r->len) {
		size_t n = r->len - off > 16384 ? 16384 : r->len - off;
		ssize_t rc = h2c_recv(c, r->b + off, n), m;

		off += n;
		while ((m = h2c_send(c, out + olen, sizeof(out) - olen)) > 0)
			olen += (size_t)m;
		if (olen > sizeof(out) - 1024)
			olen = 0;   /* keep the tail only: the GOAWAY is last */
		if (rc < 0) {
			*recv_rc = (int)rc;
			break;
		}
	}
	for (i = 0; i + 9 <= olen;) {
		size_t flen = ((size_t)(uint8_t)out[i] << 16) | ((size_t)(uint8_t)out[i + 1] << 8) |
		              (uint8_t)out[i + 2];

		if (out[i + 3] == NGHTTP2_GOAWAY && i + 17 <= olen)
			err = ((long)(uint8_t)out[i + 13] << 24) | ((long)(uint8_t)out[i + 14] << 16) |
			      ((long)(uint8_t)out[i + 15] << 8) | (uint8_t)out[i + 16];
		i += 9 + flen;
	}
	*cnt = *h2c_counters(c);
	if (err != -1)
		CHECK(!h2c_want_read(c) && !h2c_want_write(c));
	h2c_free(c);
	owner_free(o);
	free(r->b);
	memset(r, 0, sizeof(*r));
	return err;
}

/* Feeds <a> then <b> to a fresh server-role h2c, sending what it has after
 * each; <d1> and <d2> get what h2c_stats_take() says after each. */
static void stats_run(struct raw *a, struct raw *b, struct h2c_stats *d1, struct h2c_stats *d2)
{
	struct owner *o = calloc(1, sizeof(*o));
	struct h2c *c = h2c_new(1, NULL, &ops, o);
	struct raw *in[2] = { a, b };
	struct h2c_stats *d[2] = { d1, d2 };
	char out[16384];

	o->c = c;
	for (int i = 0; i < 2; i++) {
		if (in[i]->len)
			h2c_recv(c, in[i]->b, in[i]->len);
		while (h2c_send(c, out, sizeof(out)) > 0)
			;
		h2c_stats_take(c, d[i]);
		free(in[i]->b);
		memset(in[i], 0, sizeof(*in[i]));
	}
	h2c_free(c);
	owner_free(o);
}

/* HAProxy's h2 stats module, as h2c counts it (struct h2c_stats). */
static void test_module_stats(void)
{
	struct raw a = { 0 }, b = { 0 };
	struct h2c_stats d1, d2;
	uint8_t hb[256], cl[256], bad[256];
	uint8_t cancel[4] = { 0, 0, 0, NGHTTP2_CANCEL }, goaway[8] = { 0 };
	size_t hl = hpack_get(hb, "/"), half = hl / 2, cll, badl;

	/* a head in a HEADERS and a CONTINUATION frame (one HEADERS frame
	 * counted), two DATA frames, the first SETTINGS counted twice as
	 * HAProxy 2.6 counts it, then its ACK */
	raw_preface(&a);
	raw_frame(&a, NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, NULL, 0);
	raw_frame(&a, NGHTTP2_HEADERS, 0, 1, hb, half);
	raw_frame(&a, NGHTTP2_CONTINUATION, NGHTTP2_FLAG_END_HEADERS, 1, hb + half, hl - half);
	raw_frame(&a, NGHTTP2_DATA, 0, 1, "abc", 3);
	raw_frame(&a, NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, 1, NULL, 0);
	/* a malformed request head: RST_STREAM PROTOCOL_ERROR, not a counted
	 * stream error; DATA beyond the content-length: one */
	badl = hpack_get(bad, "/bad");
	badl += hpack_lit(bad + badl, "X-Upper", "1");
	cll = hpack_get(cl, "/cl");
	cll += hpack_lit(cl + cll, "content-length", "1");
	raw_frame(&b, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, 3,
	          bad, badl);
	raw_frame(&b, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, 5, cl, cll);
	raw_frame(&b, NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, 5, "toolong", 7);
	raw_frame(&b, NGHTTP2_RST_STREAM, 0, 1, cancel, 4);
	raw_frame(&b, NGHTTP2_GOAWAY, 0, 0, goaway, 8);
	stats_run(&a, &b, &d1, &d2);
	CHECK(d1.headers == 1 && d1.data == 2 && d1.settings == 3);
	CHECK(d1.rst_recv == 0 && d1.goaway_recv == 0 && d1.conn_errors == 0);
	CHECK(d1.stream_errors == 0 && d1.rst_on_error == 0 && d1.goaway_on_error == 0);
	/* the second call: what came since */
	CHECK(d2.headers == 2 && d2.data == 1 && d2.settings == 0);
	CHECK(d2.rst_recv == 1 && d2.goaway_recv == 1 && d2.conn_errors == 0);
	CHECK(d2.stream_errors == 1 && d2.rst_on_error == 2 && d2.goaway_on_error == 0);

	/* a PING of 4 bytes: a connection error, GOAWAY FRAME_SIZE_ERROR */
	raw_preface(&a);
	raw_frame(&b, NGHTTP2_PING, 0, 0, "1234", 4);
	stats_run(&a, &b, &d1, &d2);
	CHECK(d1.settings == 2 && d1.conn_errors == 0 && d1.goaway_on_error == 0);
	CHECK(d2.conn_errors == 1 && d2.goaway_on_error == 1 && d2.settings == 0);
	CHECK(d2.headers == 0 && d2.rst_on_error == 0 && d2.stream_errors == 0);
}

static void test_rapid_reset(void)
{
	struct h2c_settings set = { .max_concurrent_streams = 10 };
	struct h2c_counters cnt;
	struct raw r = { 0 };
	uint8_t hb[256], rst[4] = { 0, 0, 0, NGHTTP2_CANCEL };
	size_t hl = hpack_get(hb, "/");
	uint32_t sid;
	int rc;

	raw_preface(&r);
	/* 2 x 10 early resets are tolerated, the next one is not */
	for (sid = 1; sid < 2 * 25; sid += 2) {
		raw_frame(&r, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM,
		          sid, hb, hl);
		raw_frame(&r, NGHTTP2_RST_STREAM, 0, sid, rst, 4);
	}
	CHECK(raw_run(&r, &set, &cnt, &rc) == NGHTTP2_ENHANCE_YOUR_CALM);
	CHECK(rc < 0);
	CHECK(cnt.calm_cause == H2C_CAUSE_RAPID_RESET && cnt.early_resets == 21);
	CHECK(cnt.goaway_sent == 1);
	/* a protection of sluice's, not an error HAProxy's h2 module counts */
	CHECK(cnt.goaway_on_error == 0 && cnt.conn_errors == 0);
}

static void test_continuation_flood(void)
{
	struct h2c_counters cnt;
	struct raw r = { 0 };
	uint8_t hb[256], junk[16];
	size_t hl = hpack_get(hb, "/");
	int i, rc;

	raw_preface(&r);
	raw_frame(&r, NGHTTP2_HEADERS, 0, 1, hb, hl);
	/* fields that decode to nothing held: header-less literal pieces */
	for (i = 0; i < 100; i++) {
		size_t n = hpack_lit(junk, "x", "y");

		raw_frame(&r, NGHTTP2_CONTINUATION, 0, 1, junk, n);
	}
	CHECK(raw_run(&r, NULL, &cnt, &rc) == NGHTTP2_ENHANCE_YOUR_CALM);
	CHECK(rc < 0 && cnt.calm_cause == H2C_CAUSE_CONTINUATION);
	CHECK(cnt.continuations >= 8 && cnt.continuations < 100);
}

static void test_hpack_bomb(void)
{
	struct h2c_counters cnt;
	struct raw r = { 0 };
	uint8_t hb[8192];
	size_t hl = hpack_get(hb, "/"), i;
	int rc;
	char val[3000];

	/* one 3000-byte value into the dynamic table (literal with
	 * incremental indexing, RFC 7541 section 6.2.1), then referenced
	 * (index 62) over and over: 16 kB decode to megabytes */
	memset(val, 'b', sizeof(val));
	hb[hl++] = 0x40;
	hb[hl++] = 1;
	hb[hl++] = 'x';
	hb[hl++] = 0x7f;   /* 7-bit prefix integer: 127 + 2873 */
	hb[hl++] = (uint8_t)(0x80 | ((3000 - 127) & 0x7f));
	hb[hl++] = (uint8_t)((3000 - 127) >> 7);
	memcpy(hb + hl, val, 3000);
	hl += 3000;
	for (i = 0; i < 4000; i++)
		hb[hl++] = 0x80 | 62;
	raw_preface(&r);
	raw_frame(&r, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, 1,
	          hb, hl);
	raw_frame(&r, NGHTTP2_PING, 0, 0, "12345678", 8);
	CHECK(raw_run(&r, NULL, &cnt, &rc) == -1);
	CHECK(rc == 0 && cnt.heads_too_big == 1 && cnt.rst_sent == 1 && cnt.pings == 1);

	/* a table larger than our SETTINGS_HEADER_TABLE_SIZE is refused */
	hl = 0;
	hb[hl++] = 0x3f;   /* dynamic table size update to 31 + 8000 */
	hb[hl++] = (uint8_t)(0x80 | ((8000 - 31) & 0x7f));
	hb[hl++] = (uint8_t)((8000 - 31) >> 7);
	hl += hpack_get(hb + hl, "/");
	raw_preface(&r);
	raw_frame(&r, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, 1,
	          hb, hl);
	CHECK(raw_run(&r, NULL, &cnt, &rc) == NGHTTP2_COMPRESSION_ERROR);
	CHECK(cnt.calm_cause == H2C_CAUSE_PROTOCOL);
}

static void test_ack_floods(void)
{
	struct h2c_counters cnt;
	struct raw r = { 0 };
	int i, rc;

	raw_preface(&r);
	for (i = 0; i < 200; i++)
		raw_frame(&r, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
	CHECK(raw_run(&r, NULL, &cnt, &rc) == NGHTTP2_ENHANCE_YOUR_CALM);
	CHECK(rc < 0 && cnt.calm_cause == H2C_CAUSE_ACK_FLOOD && cnt.settings > 60);

	raw_preface(&r);
	for (i = 0; i < 200; i++)
		raw_frame(&r, NGHTTP2_PING, 0, 0, "abcdefgh", 8);
	CHECK(raw_run(&r, NULL, &cnt, &rc) == NGHTTP2_ENHANCE_YOUR_CALM);
	CHECK(rc < 0 && cnt.calm_cause == H2C_CAUSE_ACK_FLOOD && cnt.pings > 60);
}

static void test_glitch_floods(void)
{
	struct h2c_settings set = { .max_concurrent_streams = 4 };
	struct h2c_counters cnt;
	struct raw r = { 0 };
	uint8_t hb[256], wu[4] = { 0, 0, 0, 1 }, prio[5] = { 0, 0, 0, 0, 16 };
	size_t hl = hpack_get(hb, "/");
	uint32_t sid;
	int i, rc;

	/* empty DATA frames without END_STREAM */
	raw_preface(&r);
	raw_frame(&r, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, 1, hb, hl);
	for (i = 0; i < 200; i++)
		raw_frame(&r, NGHTTP2_DATA, 0, 1, NULL, 0);
	CHECK(raw_run(&r, NULL, &cnt, &rc) == NGHTTP2_ENHANCE_YOUR_CALM);
	CHECK(rc < 0 && cnt.calm_cause == H2C_CAUSE_GLITCH && cnt.empty_data >= 129);

	/* PRIORITY frames */
	raw_preface(&r);
	for (i = 0; i < 200; i++)
		raw_frame(&r, NGHTTP2_PRIORITY, 0, 3 + 2 * (uint32_t)i, prio, 5);
	CHECK(raw_run(&r, NULL, &cnt, &rc) == NGHTTP2_ENHANCE_YOUR_CALM);
	CHECK(rc < 0 && cnt.calm_cause == H2C_CAUSE_GLITCH && cnt.priorities == 129);

	/* WINDOW_UPDATE frames for nothing we sent */
	raw_preface(&r);
	for (i = 0; i < 400; i++)
		raw_frame(&r, NGHTTP2_WINDOW_UPDATE, 0, 0, wu, 4);
	CHECK(raw_run(&r, NULL, &cnt, &rc) == NGHTTP2_ENHANCE_YOUR_CALM);
	CHECK(rc < 0 && cnt.calm_cause == H2C_CAUSE_WINDOW_UPDATE);
	CHECK(cnt.window_updates == 257);

	/* streams beyond our SETTINGS_MAX_CONCURRENT_STREAMS before the peer
	 * acknowledged it: refused (RFC 9113 5.1.2), then too many times */
	raw_preface(&r);
	for (sid = 1; sid < 2 * 40; sid += 2)
		raw_frame(&r, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM,
		          sid, hb, hl);
	CHECK(raw_run(&r, &set, &cnt, &rc) == NGHTTP2_ENHANCE_YOUR_CALM);
	CHECK(rc < 0 && cnt.calm_cause == H2C_CAUSE_REFUSED && cnt.refused == 9);
	/* after it acknowledged it, nghttp2 ends the connection at once */
	raw_preface(&r);
	raw_frame(&r, NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, NULL, 0);
	for (sid = 1; sid < 2 * 6; sid += 2)
		raw_frame(&r, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM,
		          sid, hb, hl);
	CHECK(raw_run(&r, &set, &cnt, &rc) == NGHTTP2_PROTOCOL_ERROR);
	CHECK(cnt.calm_cause == H2C_CAUSE_PROTOCOL);
}

static void test_bad_preface(void)
{
	struct h2c_counters cnt;
	struct raw r = { 0 };
	int rc;

	raw_put(&r, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 27);
	CHECK(raw_run(&r, NULL, &cnt, &rc) == NGHTTP2_PROTOCOL_ERROR);
	CHECK(rc < 0 && cnt.calm_cause == H2C_CAUSE_PROTOCOL);
}

/* ------------------------------------------------------------------------ */
/* Client role                                                               */
/* ------------------------------------------------------------------------ */

struct cli {
	struct owner *o;
	struct h2c *c;
	struct peer *p;
};

static void cli_open(struct cli *s, const nghttp2_settings_entry *iv, size_t niv)
{
	s->o = calloc(1, sizeof(*s->o));
	s->c = h2c_new(0, NULL, &ops, s->o);
	s->o->c = s->c;
	s->p = peer_new(1, 1, iv, niv);
}

static void cli_close(struct cli *s)
{
	h2c_free(s->c);
	peer_free(s->p);
	owner_free(s->o);
}

/* An h1-like request message. */
static void h1_req(struct http_msg *m, struct http_hdr *h, int n, const char *meth,
                   const char *uri)
{
	memset(m, 0, sizeof(*m));
	m->is_request = 1;
	m->method = (struct ist){ meth, strlen(meth) };
	m->meth = strcmp(meth, "GET") == 0 ? HTTP_METH_GET :
	          strcmp(meth, "CONNECT") == 0 ? HTTP_METH_CONNECT :
	          strcmp(meth, "HEAD") == 0 ? HTTP_METH_HEAD :
	          strcmp(meth, "POST") == 0 ? HTTP_METH_POST : HTTP_METH_OTHER;
	m->uri = (struct ist){ uri, strlen(uri) };
	m->version = IST("HTTP/1.1");
	m->flags = HTTP_F_VER_11;
	m->hdrs = h;
	m->nhdrs = n;
	m->maxhdrs = n;
}

static struct ost *cli_ctx(struct cli *s, int slot)
{
	struct ost *o = &s->o->st[slot];

	memset(o, 0, sizeof(*o));
	o->used = 1;
	o->c = s->c;
	return o;
}

static void test_client_requests(void)
{
	struct cli s;
	struct http_msg m;
	struct http_hdr h[10];
	struct ost *o;
	int32_t sid;
	int n = 0;

	cli_open(&s, NULL, 0);
	h[n++] = (struct http_hdr){ IST("Host"), IST("h.example") };
	h[n++] = (struct http_hdr){ IST("Connection"), IST("keep-alive, x-foo") };
	h[n++] = (struct http_hdr){ IST("X-Foo"), IST("1") };
	h[n++] = (struct http_hdr){ IST("Keep-Alive"), IST("5") };
	h[n++] = (struct http_hdr){ IST("TE"), IST("trailers, gzip") };
	h[n++] = (struct http_hdr){ IST("Proxy-Connection"), IST("x") };
	h[n++] = (struct http_hdr){ IST(""), IST("gone") };
	h[n++] = (struct http_hdr){ IST("Upgrade"), IST("foo") };
	h[n++] = (struct http_hdr){ IST("X-Bar"), IST("2") };
	h1_req(&m, h, n, "GET", "/a?b");
	o = cli_ctx(&s, 1);
	sid = h2c_submit_request(s.c, &m, o, 1);
	CHECK(sid == 1);
	o->sid = sid;
	s.p->respond = 1;
	pump(s.c, s.p);
	/* HAProxy 2.6: origin form gives :scheme https and keeps Host */
	CHECK(has(s.p->st[1].log, ":method: GET\n:scheme: https\n:path: /a?b\nhost: h.example\n"
	          "x-foo: 1\nte: trailers\nx-bar: 2\n-- es\n"));
	CHECK(has(o->log, "RES 200 HTTP/2.0"));
	CHECK(o->closed == 1 && o->end_stream);
	CHECK(last_msg.flags & HTTP_F_XFER_LEN);

	/* absolute form: :authority from it, default port gone, no Host */
	n = 0;
	h[n++] = (struct http_hdr){ IST("Host"), IST("abs.example:80") };
	h[n++] = (struct http_hdr){ IST("Content-Length"), IST("3") };
	h1_req(&m, h, n, "POST", "http://abs.example:80?x=1");
	m.flags |= HTTP_F_HAS_CL | HTTP_F_XFER_LEN;
	m.content_length = 3;
	o = cli_ctx(&s, 3);
	o->body = "abc";
	o->body_len = 3;
	o->body_eom = H2C_EOM_END;
	sid = h2c_submit_request(s.c, &m, o, 0);
	CHECK(sid == 3);
	o->sid = sid;
	pump(s.c, s.p);
	CHECK(has(s.p->st[3].log, ":method: POST\n:scheme: http\n:authority: abs.example\n"
	          ":path: /?x=1\ncontent-length: 3\n--\n"));
	CHECK(s.p->st[3].dlen == 3);

	/* CONNECT */
	n = 0;
	h[n++] = (struct http_hdr){ IST("Host"), IST("t.example:443") };
	h1_req(&m, h, n, "CONNECT", "t.example:443");
	o = cli_ctx(&s, 5);
	o->hold = 1;
	sid = h2c_submit_request(s.c, &m, o, 0);
	o->sid = sid;
	pump(s.c, s.p);
	CHECK(has(s.p->st[5].log, ":method: CONNECT\n:authority: t.example:443\n--\n"));
	CHECK(hasnt(s.p->st[5].log, "host"));
	{
		nghttp2_nv nv[] = { nv_make(":status", "200") };

		nghttp2_submit_headers(s.p->ng, NGHTTP2_FLAG_NONE, 5, NULL, nv, 1, NULL);
	}
	pump(s.c, s.p);
	CHECK(has(o->log, "RES 200"));
	CHECK(last_msg.flags & HTTP_F_TUNNEL);

	/* the server's GOAWAY: streams above its last id are refused, no new
	 * request goes */
	nghttp2_submit_goaway(s.p->ng, NGHTTP2_FLAG_NONE, 3, NGHTTP2_NO_ERROR, NULL, 0);
	pump(s.c, s.p);
	CHECK(o->reset == 1 && o->reset_err == NGHTTP2_REFUSED_STREAM);
	h1_req(&m, h, 0, "GET", "/");
	CHECK(h2c_submit_request(s.c, &m, cli_ctx(&s, 7), 1) == H2C_E_CLOSED);
	CHECK(h2c_counters(s.c)->goaway_recv == 1);
	cli_close(&s);
}

static void test_client_responses(void)
{
	nghttp2_settings_entry iv[] = { { NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 2 } };
	struct cli s;
	struct http_msg m;
	struct ost *o, *o2;
	int32_t sid, sid2;
	char *big = malloc(200000);

	memset(big, 'r', 200000);
	cli_open(&s, iv, 1);
	pump(s.c, s.p);
	CHECK(h2c_peer_max_streams(s.c) == 2);
	h1_req(&m, NULL, 0, "HEAD", "/h");
	o = cli_ctx(&s, 1);
	sid = h2c_submit_request(s.c, &m, o, 1);
	o->sid = sid;
	h1_req(&m, NULL, 0, "GET", "/g");
	o2 = cli_ctx(&s, 3);
	sid2 = h2c_submit_request(s.c, &m, o2, 1);
	o2->sid = sid2;
	CHECK(h2c_streams(s.c) == 2);
	CHECK(h2c_submit_request(s.c, &m, cli_ctx(&s, 5), 1) == H2C_E_NOSTREAM);
	pump(s.c, s.p);
	{
		nghttp2_nv r1[] = { nv_make(":status", "200"), nv_make("content-length", "42") };
		nghttp2_nv i1[] = { nv_make(":status", "103"), nv_make("link", "</s>") };
		nghttp2_nv r2[] = { nv_make(":status", "200"), nv_make("set-cookie", "a=1"),
		                    nv_make("cookie", "x=1"), nv_make("cookie", "y=2") };
		nghttp2_nv t2[] = { nv_make("x-trailer", "t") };
		nghttp2_data_provider prd;

		nghttp2_submit_response(s.p->ng, sid, r1, 2, NULL);
		nghttp2_submit_headers(s.p->ng, NGHTTP2_FLAG_NONE, sid2, NULL, i1, 2, NULL);
		s.p->st[sid2].body = big;
		s.p->st[sid2].body_len = 200000;
		s.p->st[sid2].trailers = 1;
		prd.source.ptr = &s.p->st[sid2];
		prd.read_callback = p_read;
		nghttp2_submit_response(s.p->ng, sid2, r2, 4, &prd);
		pump(s.c, s.p);
		/* response to HEAD: bodyless whatever content-length says */
		CHECK(has(o->log, "RES 200 HTTP/2.0 f=") && has(o->log, "cl=42 es=1"));
		CHECK(o->closed == 1);
		/* 1xx, then the final head; no content-length: XFER_LEN alone */
		CHECK(has(o2->log, "RES 103 HTTP/2.0") && has(o2->log, "link: </s>\nRES 200"));
		CHECK(has(o2->log, "set-cookie: a=1\ncookie: x=1; y=2\n"));
		CHECK((last_msg.flags & (HTTP_F_XFER_LEN | HTTP_F_BODYLESS | HTTP_F_HAS_CL)) ==
		      HTTP_F_XFER_LEN);
		/* the stream window holds the rest until the owner consumes */
		CHECK(o2->dlen == 65535);
		while (o2->dlen < 200000 && h2c_want_read(s.c)) {
			size_t before = o2->dlen;

			h2c_consumed(s.c, sid2, o2->dlen);
			pump(s.c, s.p);
			if (o2->dlen == before)
				break;
		}
		CHECK(o2->dlen == 200000 && !o2->end_stream);
		nghttp2_submit_trailer(s.p->ng, sid2, t2, 1);
		pump(s.c, s.p);
		CHECK(has(o2->log, "TRAILERS es=1\nx-trailer: t\n"));
		CHECK(o2->closed == 1);
	}
	CHECK(h2c_streams(s.c) == 0);
	free(big);
	cli_close(&s);
}

static void test_client_websocket(void)
{
	nghttp2_settings_entry iv[] = { { NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL, 1 } };
	struct cli s;
	struct http_msg m;
	struct http_hdr h[6];
	struct ost *o;
	int32_t sid;
	int n = 0;

	h[n++] = (struct http_hdr){ IST("Host"), IST("w.example") };
	h[n++] = (struct http_hdr){ IST("Connection"), IST("Upgrade") };
	h[n++] = (struct http_hdr){ IST("Upgrade"), IST("websocket") };
	h[n++] = (struct http_hdr){ IST("Sec-WebSocket-Key"), IST("dGhlIHNhbXBsZSBub25jZQ==") };
	h[n++] = (struct http_hdr){ IST("Sec-WebSocket-Version"), IST("13") };
	h1_req(&m, h, n, "GET", "/chat");
	m.flags |= HTTP_F_CONN_UPGRADE | HTTP_F_UPGRADE;

	/* the server's SETTINGS are not known yet */
	cli_open(&s, iv, 1);
	o = cli_ctx(&s, 1);
	CHECK(h2c_submit_request(s.c, &m, o, 0) == H2C_E_AGAIN);
	pump(s.c, s.p);
	o->hold = 1;
	sid = h2c_submit_request(s.c, &m, o, 0);
	CHECK(sid == 1);
	o->sid = sid;
	pump(s.c, s.p);
	/* the key goes along, as HAProxy 2.6 sends it */
	CHECK(has(s.p->st[1].log, ":method: CONNECT\n:protocol: websocket\n:scheme: https\n"
	          ":authority: w.example\n:path: /chat\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\n"
	          "sec-websocket-version: 13\n--\n"));
	{
		nghttp2_nv nv[] = { nv_make(":status", "200") };

		nghttp2_submit_headers(s.p->ng, NGHTTP2_FLAG_NONE, sid, NULL, nv, 1, NULL);
	}
	pump(s.c, s.p);
	/* the HTTP/1 client gets its 101 and the accept of its key */
	CHECK(has(o->log, "RES 101 HTTP/2.0"));
	CHECK(has(o->log, "connection: upgrade\nupgrade: websocket\n"
	          "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\n"));
	CHECK(last_msg.flags & HTTP_F_TUNNEL);
	cli_close(&s);

	/* a server without RFC 8441 */
	cli_open(&s, NULL, 0);
	pump(s.c, s.p);
	CHECK(h2c_submit_request(s.c, &m, cli_ctx(&s, 1), 0) == H2C_E_UPGRADE);
	cli_close(&s);
}

int main(void)
{
	test_request_authority();
	test_request_cookies_connect();
	test_request_bodies();
	test_flow_control();
	test_response_paths();
	test_websocket_server();
	test_reset_refuse_shutdown();
	test_header_limits();
	test_module_stats();
	test_rapid_reset();
	test_continuation_flood();
	test_hpack_bomb();
	test_ack_floods();
	test_glitch_floods();
	test_bad_preface();
	test_client_requests();
	test_client_responses();
	test_client_websocket();
	return t_done("test_h2c");
}
