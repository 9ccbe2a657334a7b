/* libFuzzer target: the HTTP/2 connection engine (h2c.c) fed arbitrary
 * wire bytes, in server role (the bytes are a client's) or client role
 * (a server's, after h2c sent a few requests).
 *
 * The first byte picks the mode:
 *   bit 0     client role instead of server role
 *   bit 1     prepend a valid preface (server role: the client magic and an
 *             empty SETTINGS; client role: an empty SETTINGS), so that the
 *             fuzzer spends its time on frames
 *   bits 2-4  slice size for h2c_recv(): 1 << (bits) bytes, 0 = everything
 *             at once (the verdict must not depend on it; not checked here)
 *   bit 5     the owner holds its bodies (data_out says "none yet") and
 *             resumes them after each slice
 *   bit 6     the owner calls h2c_shutdown() half way
 *   bit 7     the owner drops every other stream after its first head
 *             (h2c_reset_stream() or h2c_detach())
 * In client role, the websocket request is submitted again after the
 * first slice, once the server's SETTINGS may have allowed RFC 8441.
 * The owner accepts every stream, answers each complete request with a
 * small response (or a 101 to a websocket request, which must be refused
 * unless it was an extended CONNECT), consumes what it gets, and checks
 * that no callback names a stream it was told was over. Sanitizers catch
 * the rest; h2c_free() must leave nothing behind.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/http/h2c.h>

struct fz_stream {
	struct fz_stream *next;
	int32_t sid;
	int dead;             /* reset() or closed() came: no callback may follow */
	int answered;
	int body_left;
	int is_ws;
};

struct fz_owner {
	struct h2c *c;
	struct fz_stream *all;
	int hold;
	int drop;
	unsigned int nheads;
};

static struct fz_stream *fz_new(struct fz_owner *o, int32_t sid)
{
	struct fz_stream *s = calloc(1, sizeof(*s));

	s->sid = sid;
	s->body_left = 100;
	s->next = o->all;
	o->all = s;
	return s;
}

static void *fz_stream_new(void *owner, int32_t sid)
{
	struct fz_owner *o = owner;

	assert(sid > 0 && (sid & 1));
	return fz_new(o, sid);
}

static void fz_answer(struct fz_owner *o, struct fz_stream *s, const struct http_msg *m)
{
	struct http_msg r = { 0 };
	struct http_hdr h[3] = {
		{ { "Content-Type", 12 }, { "text/plain", 10 } },
		{ { "Connection", 10 }, { "close", 5 } },
		{ { "Sec-WebSocket-Accept", 20 }, { "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", 28 } },
	};
	int rc;

	r.hdrs = h;
	r.nhdrs = 2;
	r.status = 200;
	if (m->flags & HTTP_F_UPGRADE) {
		r.status = 101;
		r.nhdrs = 3;
		s->is_ws = 1;
	}
	rc = h2c_submit_response(o->c, s->sid, &r, m->meth == HTTP_METH_HEAD);
	if (rc == H2C_E_UPGRADE || rc == H2C_E_WS_ACCEPT) {
		r.status = 502;
		r.nhdrs = 1;
		h2c_submit_response(o->c, s->sid, &r, 0);
	}
	s->answered = 1;
}

static int fz_head(void *owner, void *sctx, const struct http_msg *m, int is_trailers,
                   int end_stream)
{
	struct fz_owner *o = owner;
	struct fz_stream *s = sctx;
	int i;

	assert(!s->dead);
	for (i = 0; i < m->nhdrs; i++)
		assert(m->hdrs[i].name.len > 0 && m->hdrs[i].name.ptr);
	if (!is_trailers)
		assert(m->version.len == 8 && memcmp(m->version.ptr, "HTTP/2.0", 8) == 0);
	if (m->is_request && !is_trailers) {
		assert(m->method.len && m->uri.len);
		assert(m->flags & HTTP_F_XFER_LEN);
		if (!s->answered)
			fz_answer(o, s, m);
	}
	if (o->drop && (++o->nheads & 1)) {
		/* the stream is the owner's no more: no callback may follow */
		s->dead = 1;
		if (o->nheads & 2)
			h2c_detach(o->c, s->sid);
		else
			h2c_reset_stream(o->c, s->sid, H2C_CANCEL);
	}
	return 0;
}

static int fz_data(void *owner, void *sctx, const char *p, size_t len, int end_stream)
{
	struct fz_owner *o = owner;
	struct fz_stream *s = sctx;

	assert(!s->dead);
	assert(p || !len);
	h2c_consumed(o->c, s->sid, len);
	return 0;
}

static void fz_reset(void *owner, void *sctx, uint32_t err)
{
	struct fz_stream *s = sctx;

	assert(!s->dead);
	s->dead = 1;
}

static void fz_closed(void *owner, void *sctx)
{
	struct fz_stream *s = sctx;

	assert(!s->dead);
	s->dead = 1;
}

static ssize_t fz_data_out(void *owner, void *sctx, char *dst, size_t max, int *eom)
{
	struct fz_owner *o = owner;
	struct fz_stream *s = sctx;
	size_t n = (size_t)s->body_left;

	assert(!s->dead);
	if (o->hold)
		return 0;
	if (n > max)
		n = max;
	memset(dst, 'b', n);
	s->body_left -= (int)n;
	if (!s->body_left && !s->is_ws)
		*eom = H2C_EOM_END;
	return (ssize_t)n;
}

static const struct h2c_ops fz_ops = {
	.stream_new = fz_stream_new, .head = fz_head, .data = fz_data, .reset = fz_reset,
	.closed = fz_closed, .data_out = fz_data_out,
};

static void fz_drain(struct h2c *c)
{
	char out[4096];
	int rounds = 0;

	/* bounded: a body is 100 bytes and streams are bounded */
	while (h2c_send(c, out, sizeof(out)) > 0)
		assert(++rounds < 100000);
}

static void fz_resume_all(struct fz_owner *o)
{
	struct fz_stream *s;

	for (s = o->all; s; s = s->next)
		if (!s->dead)
			h2c_resume(o->c, s->sid);
}

/* Client role: a few requests before the server's bytes come (<ws_only>:
 * the websocket one alone). */
static void fz_requests(struct fz_owner *o, int ws_only)
{
	struct http_hdr h[4] = {
		{ { "Host", 4 }, { "a.example", 9 } },
		{ { "Connection", 10 }, { "Upgrade", 7 } },
		{ { "Upgrade", 7 }, { "websocket", 9 } },
		{ { "Sec-WebSocket-Key", 17 }, { "dGhlIHNhbXBsZSBub25jZQ==", 24 } },
	};
	struct http_msg m = { 0 };
	struct fz_stream *s;
	int32_t sid;

	m.is_request = 1;
	m.version = (struct ist){ "HTTP/1.1", 8 };
	m.hdrs = h;
	m.nhdrs = 1;
	m.method = (struct ist){ "GET", 3 };
	m.meth = HTTP_METH_GET;
	m.uri = (struct ist){ "/", 1 };
	if (ws_only)
		goto ws;
	s = fz_new(o, 0);
	sid = h2c_submit_request(o->c, &m, s, 1);
	s->dead = sid < 0;
	s->sid = sid;

	m.method = (struct ist){ "POST", 4 };
	m.meth = HTTP_METH_POST;
	m.uri = (struct ist){ "http://b.example:80/p?q", 23 };
	s = fz_new(o, 0);
	sid = h2c_submit_request(o->c, &m, s, 0);
	s->dead = sid < 0;
	s->sid = sid;

ws:
	m.method = (struct ist){ "GET", 3 };
	m.meth = HTTP_METH_GET;
	m.uri = (struct ist){ "/ws", 3 };
	m.nhdrs = 4;
	m.flags = HTTP_F_CONN_UPGRADE | HTTP_F_UPGRADE;
	s = fz_new(o, 0);
	sid = h2c_submit_request(o->c, &m, s, 0);
	s->dead = sid < 0;
	s->sid = sid;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const char magic[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	static const uint8_t settings[9] = { 0, 0, 0, 4, 0, 0, 0, 0, 0 };
	struct h2c_settings set = { .max_concurrent_streams = 16, .max_header_list = 4096,
	                            .max_hdrs = 32 };
	struct fz_owner o = { 0 };
	struct fz_stream *s;
	uint8_t mode;
	size_t slice, off = 0;
	char *copy;
	int server;

	if (!len)
		return 0;
	mode = data[0];
	data++;
	len--;
	server = !(mode & 1);
	slice = (mode >> 2) & 7 ? (size_t)1 << ((mode >> 2) & 7) : len;
	if (!slice)
		slice = 1;
	o.hold = (mode >> 5) & 1;
	o.c = h2c_new(server, &set, &fz_ops, &o);
	if (!o.c)
		return 0;
	o.drop = mode >> 7;
	if (!server)
		fz_requests(&o, 0);
	fz_drain(o.c);
	if (mode & 2) {
		if (server)
			h2c_recv(o.c, magic, sizeof(magic) - 1);
		h2c_recv(o.c, (const char *)settings, sizeof(settings));
		fz_drain(o.c);
	}
	/* a heap copy of each slice: ASan sees reads past it */
	while (off < len) {
		size_t n = len - off < slice ? len - off : slice;
		ssize_t rc;

		copy = malloc(n);
		memcpy(copy, data + off, n);
		rc = h2c_recv(o.c, copy, n);
		free(copy);
		off += n;
		fz_drain(o.c);
		if (o.hold)
			fz_resume_all(&o);
		fz_drain(o.c);
		if (!server && off == n) {
			fz_requests(&o, 1);
			fz_drain(o.c);
		}
		if ((mode & 64) && off >= len / 2)
			h2c_shutdown(o.c);
		if (rc < 0) {
			assert(!h2c_want_read(o.c));
			break;
		}
	}
	assert(h2c_streams(o.c) >= 0);
	h2c_free(o.c);
	while ((s = o.all)) {
		o.all = s->next;
		free(s);
	}
	return 0;
}
