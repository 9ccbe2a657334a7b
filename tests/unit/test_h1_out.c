/* HTTP/1 serialiser: verbatim heads, edited heads (parse, edit, serialise,
 * parse again, compare), Connection options and hop-by-hop fields under
 * each flag, Content-Length merging and dropping, re-framing, the exact
 * room needed, and chunked framing checked with the chunked decoder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/http/h1.h>
#include <sluice/http/h1_out.h>
#include <sluice/http/msgedit.h>
#include "t.h"

#define CAP 32

static struct http_hdr hdrs[CAP], hdrs2[CAP];
static struct http_msg msg, msg2;
static struct http_edit ed;
static char arena[1024];
static char input[8192];
static char out[8192];

static struct ist I(const char *s)
{
	return (struct ist){ s, strlen(s) };
}

static int parse_into(const char *s, size_t n, int is_req, enum http_meth rm,
                      struct http_msg *m, struct http_hdr *h)
{
	struct h1_error err;

	memset(m, 0, sizeof(*m));
	m->hdrs = h;
	m->maxhdrs = CAP;
	if (h1_parse_head(s, n, is_req, rm, 65536, 0, m, &err) != H1_OK) {
		fprintf(stderr, "  parse: %s at %zu in \"%.*s\"\n", err.reason, err.offset, (int)n, s);
		return 0;
	}
	return 1;
}

static int setup(const char *s, int is_req)
{
	size_t n = strlen(s);

	memcpy(input, s, n);
	if (!parse_into(input, n, is_req, HTTP_METH_GET, &msg, hdrs))
		return 0;
	http_edit_init(&ed, &msg, arena, sizeof(arena), CAP);
	return 1;
}

/* Serialises <msg> with <flags> as a NUL-terminated string. */
static const char *ser(unsigned int flags)
{
	ssize_t n = h1_out_head(&msg, flags, out, sizeof(out) - 1);

	if (n < 0)
		return "(noroom)";
	out[n] = 0;
	return out;
}

static int same_ist(struct ist a, struct ist b)
{
	return a.len == b.len && (!a.len || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Serialises the edited <msg>, parses the result and checks that the model
 * is the same: start line and the live fields in order. */
static int round_trip(unsigned int flags)
{
	ssize_t n = h1_out_head(&msg, flags, out, sizeof(out));
	int i, j = 0;

	if (n < 0 || !parse_into(out, (size_t)n, msg.is_request, HTTP_METH_GET, &msg2, hdrs2))
		return 0;
	if ((size_t)n != msg2.head_len)
		return 0;
	if (msg.is_request ? !same_ist(msg.method, msg2.method) || !same_ist(msg.uri, msg2.uri) ||
	                     msg.meth != msg2.meth :
	                     msg.status != msg2.status || !same_ist(msg.reason, msg2.reason))
		return 0;
	for (i = 0; i < msg.nhdrs; i++) {
		if (http_hdr_is_deleted(&msg.hdrs[i]))
			continue;
		if (j >= msg2.nhdrs || !same_ist(msg.hdrs[i].name, msg2.hdrs[j].name) ||
		    !same_ist(msg.hdrs[i].value, msg2.hdrs[j].value))
			return 0;
		j++;
	}
	return j == msg2.nhdrs;
}

static void test_verbatim(void)
{
	static const char *heads[] = {
		"GET /a?b HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\nAccept: */*\r\n\r\n",
		"POST http://h/x HTTP/1.0\r\nContent-Length: 3\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: h\r\nX-Empty: \r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.0 404 \r\nServer: s\r\n\r\n",
		"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\nContent-Length: 12\r\n\r\n",
	};
	size_t i;

	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		CHECK(setup(heads[i], heads[i][0] != 'H'));
		CHECK_STR(ser(0), heads[i]);
		CHECK(round_trip(0));
	}
	/* values lose the OWS the parser dropped; names keep their case */
	CHECK(setup("GET / HTTP/1.1\r\nhOsT:a\r\nX:   b c  \r\n\r\n", 1));
	CHECK_STR(ser(0), "GET / HTTP/1.1\r\nhOsT: a\r\nX: b c\r\n\r\n");
	/* a message built from HTTP/2 has no version */
	msg.version = (struct ist){ 0 };
	CHECK_STR(ser(0), "GET / HTTP/1.1\r\nhOsT: a\r\nX: b c\r\n\r\n");
	CHECK(setup("GET / HTTP/1.0\r\n\r\n", 1));
	CHECK_STR(ser(H1O_F_VERSION_11), "GET / HTTP/1.1\r\n\r\n");
}

static void test_edited(void)
{
	CHECK(setup("GET /old?q=1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nCookie: c=1\r\n"
	            "X-A: 2\r\nAccept: a, b\r\n\r\n", 1));
	CHECK(http_hdr_add(&ed, I("X-Forwarded-For"), I("10.0.0.1")) == 0);
	CHECK(http_hdr_set(&ed, I("x-a"), I("3")) == 0);
	CHECK(http_hdr_del(&ed, I("cookie"), HTTP_MATCH_STR, NULL, NULL) == 1);
	CHECK(http_hdr_replace_idx(&ed, http_hdr_find(&msg, I("accept"), 0), I("text/html")) == 0);
	CHECK(http_set_path(&ed, I("/new")) == 0);
	CHECK(http_set_method(&ed, I("PUT")) == 0);
	CHECK_STR(ser(0), "PUT /new?q=1 HTTP/1.1\r\nHost: h\r\nAccept: text/html\r\n"
	          "X-Forwarded-For: 10.0.0.1\r\nx-a: 3\r\n\r\n");
	CHECK(round_trip(0));

	CHECK(setup("HTTP/1.1 200 OK\r\nServer: s\r\nContent-Length: 2\r\n\r\n", 0));
	CHECK(http_set_status(&ed, 503, (struct ist){ 0 }) == 0);
	CHECK(http_hdr_del(&ed, I("server"), HTTP_MATCH_STR, NULL, NULL) == 1);
	CHECK(http_hdr_add(&ed, I("Retry-After"), I("5")) == 0);
	CHECK_STR(ser(0), "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n"
	          "Retry-After: 5\r\n\r\n");
	CHECK(round_trip(0));
	/* every field deleted */
	CHECK(http_hdr_del(&ed, I(""), HTTP_MATCH_SUB, NULL, NULL) == 2);
	CHECK_STR(ser(0), "HTTP/1.1 503 Service Unavailable\r\n\r\n");
	CHECK(round_trip(0));
}

static void test_connection(void)
{
	const char *req = "GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, X-Bar, Upgrade\r\n"
	                  "X-Bar: 1\r\nKeep-Alive: 300\r\nTE: trailers\r\nTrailer: X-T\r\n"
	                  "Proxy-Connection: x\r\nUpgrade: websocket\r\nX-Keep: 1\r\n"
	                  "Connection: close\r\n\r\n";

	/* between HTTP/1 peers, HAProxy only manages close/keep-alive */
	CHECK(setup(req, 1));
	CHECK_STR(ser(H1O_F_CONN_KA), "GET / HTTP/1.1\r\nHost: h\r\nConnection: X-Bar, Upgrade\r\n"
	          "X-Bar: 1\r\nKeep-Alive: 300\r\nTE: trailers\r\nTrailer: X-T\r\n"
	          "Proxy-Connection: x\r\nUpgrade: websocket\r\nX-Keep: 1\r\n"
	          "Connection: keep-alive\r\n\r\n");
	CHECK_STR(ser(H1O_F_CONN_SCRUB), "GET / HTTP/1.1\r\nHost: h\r\nConnection: X-Bar, Upgrade\r\n"
	          "X-Bar: 1\r\nKeep-Alive: 300\r\nTE: trailers\r\nTrailer: X-T\r\n"
	          "Proxy-Connection: x\r\nUpgrade: websocket\r\nX-Keep: 1\r\n\r\n");
	CHECK_STR(ser(0), req);

	/* RFC 9110 section 7.6.1, but "TE: trailers", which the next hop
	 * needs (HAProxy keeps it) */
	CHECK_STR(ser(H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED | H1O_F_CONN_CLOSE),
	          "GET / HTTP/1.1\r\nHost: h\r\nTE: trailers\r\nX-Keep: 1\r\n"
	          "Connection: close\r\n\r\n");
	CHECK_STR(ser(H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED | H1O_F_TUNNEL),
	          "GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nTE: trailers\r\n"
	          "Upgrade: websocket\r\nX-Keep: 1\r\n\r\n");
	/* fixed list only: named fields stay */
	CHECK_STR(ser(H1O_F_HOP_BY_HOP),
	          "GET / HTTP/1.1\r\nHost: h\r\nX-Bar: 1\r\nTE: trailers\r\nX-Keep: 1\r\n\r\n");
	/* named fields only */
	CHECK_STR(ser(H1O_F_CONN_NAMED),
	          "GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\nKeep-Alive: 300\r\n"
	          "TE: trailers\r\nTrailer: X-T\r\nProxy-Connection: x\r\nX-Keep: 1\r\n"
	          "Connection: close\r\n\r\n");
	CHECK(round_trip(H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED | H1O_F_CONN_CLOSE) == 0);

	/* framing and routing fields cannot be named away; case is ignored */
	CHECK(setup("POST / HTTP/1.1\r\nHost: h\r\nConnection: content-length, HOST, "
	            "Transfer-Encoding, x-a\r\nContent-Length: 1\r\nX-A: 1\r\n\r\n", 1));
	CHECK_STR(ser(H1O_F_CONN_NAMED | H1O_F_HOP_BY_HOP),
	          "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\n");

	/* many options: the ones past the remembered set are still found */
	CHECK(setup("GET / HTTP/1.1\r\nHost: h\r\nConnection: a1,a2,a3,a4,a5,a6,a7,a8,a9,"
	            "a10,a11,a12,a13,a14,a15,a16,a17,a18\r\na18: x\r\na1: y\r\nb: z\r\n\r\n", 1));
	CHECK_STR(ser(H1O_F_CONN_NAMED), "GET / HTTP/1.1\r\nHost: h\r\nb: z\r\n\r\n");

	/* an empty Connection, and empty options */
	CHECK(setup("GET / HTTP/1.1\r\nHost: h\r\nConnection:\r\nConnection: ,close,\r\n\r\n", 1));
	CHECK_STR(ser(0), "GET / HTTP/1.1\r\nHost: h\r\nConnection: \r\nConnection: ,close,\r\n\r\n");
	CHECK_STR(ser(H1O_F_CONN_KA), "GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\n\r\n");

	/* fields named by Connection and added by rules: stripped at ingress
	 * they survive, stripped at egress they do not */
	CHECK(setup("GET / HTTP/1.1\r\nHost: h\r\nConnection: X-Forwarded-For\r\n"
	            "X-Forwarded-For: 6.6.6.6\r\n\r\n", 1));
	CHECK(http_hdr_del_conn_named(&ed, 0) == 1);
	CHECK(http_hdr_add(&ed, I("X-Forwarded-For"), I("10.0.0.1")) == 0);
	CHECK_STR(ser(H1O_F_HOP_BY_HOP), "GET / HTTP/1.1\r\nHost: h\r\n"
	          "X-Forwarded-For: 10.0.0.1\r\n\r\n");
	CHECK_STR(ser(H1O_F_HOP_BY_HOP | H1O_F_CONN_NAMED), "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
}

static void test_framing(void)
{
	/* duplicates the parser merged leave as one field */
	CHECK(setup("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nX: 1\r\n"
	            "content-length: 5, 5\r\n\r\n", 1));
	CHECK(msg.flags & HTTP_F_CL_MERGED);
	CHECK_STR(ser(0), "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nX: 1\r\n\r\n");
	CHECK(round_trip(0) == 0);   /* a field went: by design */

	/* a response with TE and CL: CL goes (RFC 9112 section 6.3) */
	CHECK(setup("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n"
	            "X: 1\r\n\r\n", 0));
	CHECK(msg.flags & HTTP_F_CL_DROP);
	CHECK_STR(ser(0), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX: 1\r\n\r\n");
	CHECK_STR(ser(H1O_F_DROP_TE), "HTTP/1.1 200 OK\r\nX: 1\r\n\r\n");
	msg.content_length = 42;
	CHECK_STR(ser(H1O_F_DROP_TE | H1O_F_ADD_CL),
	          "HTTP/1.1 200 OK\r\nX: 1\r\nContent-Length: 42\r\n\r\n");

	CHECK(setup("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: 1\r\n\r\n", 0));
	CHECK_STR(ser(H1O_F_ADD_CHUNKED | H1O_F_CONN_CLOSE),
	          "HTTP/1.1 200 OK\r\nX: 1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
	msg.content_length = 7;
	CHECK_STR(ser(H1O_F_ADD_CL), "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nX: 1\r\n\r\n");

	/* rules that set Content-Length make the header list authoritative */
	CHECK(setup("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n", 1));
	CHECK(http_hdr_set(&ed, I("Content-Length"), I("9")) == 0);
	CHECK(ed.flags & HTTP_EDIT_F_FRAMING);
	CHECK_STR(ser(0), "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\n");
}

static void test_room(void)
{
	ssize_t full, n;
	size_t room;

	CHECK(setup("GET /x HTTP/1.1\r\nHost: h\r\nConnection: close, X\r\nX: 1\r\n"
	            "Content-Length: 3\r\ncontent-length: 3\r\n\r\n", 1));
	full = h1_out_head(&msg, H1O_F_CONN_KA | H1O_F_ADD_CHUNKED, out, sizeof(out));
	CHECK(full > 0);
	for (room = 0; room < (size_t)full; room++) {
		n = h1_out_head(&msg, H1O_F_CONN_KA | H1O_F_ADD_CHUNKED, out, room);
		if (n != H1_OUT_NOROOM) {
			CHECK(n == H1_OUT_NOROOM);
			break;
		}
	}
	CHECK(h1_out_head(&msg, H1O_F_CONN_KA | H1O_F_ADD_CHUNKED, out, (size_t)full) == full);

	{
		char area[50];
		struct buffer b = { area, sizeof(area), 10, 5 };

		memcpy(area + 10, "hello", 5);
		CHECK(setup("GET / HTTP/1.1\r\nHost: h\r\n\r\n", 1));
		CHECK(h1_out_head_buf(&msg, 0, &b) == 27);
		CHECK(b.data == 32);
		CHECK(memcmp(area + b.head, "helloGET / HTTP/1.1\r\nHost: h\r\n\r\n", 32) == 0);
		/* 8 bytes left at the end, 18 once realigned: not enough */
		CHECK(h1_out_head_buf(&msg, 0, &b) == H1_OUT_NOROOM);
		CHECK(b.data == 32 && b.head == 0);
		CHECK(memcmp(area, "helloGET / HTTP/1.1\r\nHost: h\r\n\r\n", 32) == 0);
	}
}

/* Frames <data> in chunks of <step> bytes with trailers and decodes it back. */
static int chunk_round_trip(const char *data, size_t len, size_t step)
{
	struct http_hdr tr[2] = { { I("X-Sum"), I("abc") }, { { NULL, 0 }, { NULL, 0 } } };
	char buf[4096], dec[4096];
	struct h1_chunk c;
	size_t pos = 0, off, dlen, used, dpos = 0, i;
	ssize_t n;

	for (i = 0; i < len; i += step) {
		size_t k = len - i < step ? len - i : step;

		if (i % 2) {
			n = h1_out_chunk(buf + pos, sizeof(buf) - pos, data + i, k);
		} else {
			n = h1_out_chunk_size(buf + pos, sizeof(buf) - pos, k);
			if (n > 0) {
				memcpy(buf + pos + (size_t)n, data + i, k);
				n += (ssize_t)k;
				n += h1_out_chunk_end(buf + pos + (size_t)n, sizeof(buf) - pos - (size_t)n);
			}
		}
		if (n < 0)
			return 0;
		pos += (size_t)n;
	}
	n = h1_out_last_chunk(buf + pos, sizeof(buf) - pos, tr, 2);
	if (n < 0)
		return 0;
	pos += (size_t)n;
	h1_chunk_init(&c);
	c.opts = H1C_O_STOP_AFTER_DATA;
	for (i = 0; i < pos && c.st != H1C_DONE && c.st != H1C_ERROR; i += used) {
		used = h1_chunk_feed(&c, buf + i, pos - i, &off, &dlen);
		memcpy(dec + dpos, buf + i + off, dlen);
		dpos += dlen;
	}
	return c.st == H1C_DONE && i == pos && dpos == len && memcmp(dec, data, len) == 0;
}

static void test_chunks(void)
{
	static const char data[] = "0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ";
	char buf[64];

	CHECK(h1_out_chunk_size(buf, sizeof(buf), 0x1a2b) == 6 && memcmp(buf, "1a2b\r\n", 6) == 0);
	CHECK(h1_out_chunk_size(buf, sizeof(buf), UINT64_MAX) == 18);
	CHECK(h1_out_chunk_size(buf, 5, 0x1a2b) == H1_OUT_NOROOM);
	CHECK(h1_out_chunk(buf, sizeof(buf), "abc", 3) == 8 && memcmp(buf, "3\r\nabc\r\n", 8) == 0);
	CHECK(h1_out_chunk(buf, 7, "abc", 3) == H1_OUT_NOROOM);
	CHECK(h1_out_chunk_end(buf, 1) == H1_OUT_NOROOM);
	CHECK(h1_out_last_chunk(buf, sizeof(buf), NULL, 0) == 5 && memcmp(buf, "0\r\n\r\n", 5) == 0);
	CHECK(h1_out_last_chunk(buf, 4, NULL, 0) == H1_OUT_NOROOM);
	CHECK(chunk_round_trip(data, sizeof(data) - 1, 1));
	CHECK(chunk_round_trip(data, sizeof(data) - 1, 7));
	CHECK(chunk_round_trip(data, sizeof(data) - 1, 100));
	CHECK(chunk_round_trip(data, 0, 1));
}

/* A head built from HTTP/2 (h2c.c): version HTTP/2.0 and an absolute uri
 * made of :scheme, :authority and :path go out as HTTP/1.1 in origin form. */
static void test_from_h2(void)
{
	struct http_hdr h[] = { { IST("host"), IST("a.example") } };
	struct http_msg m = { 0 };
	ssize_t n;

	m.is_request = 1;
	m.method = IST("GET");
	m.meth = HTTP_METH_GET;
	m.uri = IST("https://a.example/p?q");
	m.version = IST("HTTP/2.0");
	m.flags = HTTP_F_VER_11 | HTTP_F_ABS_URI | HTTP_F_BODYLESS | HTTP_F_XFER_LEN;
	m.hdrs = h;
	m.nhdrs = 1;
	n = h1_out_head(&m, 0, out, sizeof(out) - 1);
	CHECK(n > 0);
	out[n > 0 ? n : 0] = 0;
	CHECK_STR(out, "GET /p?q HTTP/1.1\r\nhost: a.example\r\n\r\n");
	/* without the flag, an absolute uri stays as it is */
	m.flags &= ~HTTP_F_ABS_URI;
	n = h1_out_head(&m, 0, out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = 0;
	CHECK_STR(out, "GET https://a.example/p?q HTTP/1.1\r\nhost: a.example\r\n\r\n");
	m.is_request = 0;
	m.status = 200;
	m.reason = IST("");
	m.nhdrs = 0;
	n = h1_out_head(&m, 0, out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = 0;
	CHECK_STR(out, "HTTP/1.1 200 \r\n\r\n");
}

int main(void)
{
	test_from_h2();
	test_verbatim();
	test_edited();
	test_connection();
	test_framing();
	test_room();
	test_chunks();
	return t_done("test_h1_out");
}
