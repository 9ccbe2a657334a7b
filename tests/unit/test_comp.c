/* Compression: q-values, the Accept-Encoding negotiation, the old-browser
 * rule, HAProxy 2.6's response conditions, the head edits, and the zlib
 * streams fed in pieces into small outputs (every format decompressed and
 * compared with its input). */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <sluice/core/global.h>
#include <sluice/http/comp.h>
#include <sluice/http/msgedit.h>
#include "t.h"

#define MAXH 16

struct tmsg {
	struct http_msg m;
	struct http_hdr h[MAXH];
	struct http_edit e;
	char arena[512];
};

static struct ist S(const char *s)
{
	return (struct ist){ s, strlen(s) };
}

/* A message with "name", "value" pairs (NULL-terminated). */
static void tmsg_init(struct tmsg *t, int is_req, const char *const *fields)
{
	memset(t, 0, sizeof(*t));
	t->m.is_request = is_req;
	t->m.hdrs = t->h;
	t->m.maxhdrs = MAXH;
	t->m.flags = HTTP_F_VER_11 | HTTP_F_XFER_LEN;
	t->m.status = 200;
	for (int i = 0; fields && fields[i]; i += 2) {
		t->h[t->m.nhdrs].name = S(fields[i]);
		t->h[t->m.nhdrs].value = S(fields[i + 1]);
		t->m.nhdrs++;
	}
	http_edit_init(&t->e, &t->m, t->arena, sizeof(t->arena), MAXH);
}

static int select_ae(const uint8_t *algos, int n, const char *ae)
{
	struct tmsg t;
	const char *f[] = { "Accept-Encoding", ae, NULL };

	tmsg_init(&t, 1, ae ? f : NULL);
	return comp_select(algos, n, &t.m);
}

static void test_qvalue(void)
{
#define Q(s) comp_qvalue((s), (s) + strlen(s))
	CHECK(Q("1") == 1000);
	CHECK(Q("0") == 0);
	CHECK(Q("0.5") == 500);
	CHECK(Q("0.123") == 123);
	CHECK(Q("0.1234") == 123);
	CHECK(Q("0.001") == 1);
	CHECK(Q("0.0001") == 0);
	CHECK(Q("1.0") == 1000);
	CHECK(Q("2") == 1000);
	CHECK(Q("abc") == 1000);
	CHECK(Q("") == 1000);
	CHECK(Q(".5") == 1000);
	CHECK(Q("0.9x") == 900);
#undef Q
}

static void test_select(void)
{
	/* HAProxy's order: "compression algo gzip deflate" is {deflate, gzip} */
	const uint8_t gd[] = { COMP_DEFLATE, COMP_GZIP };
	const uint8_t ig[] = { COMP_GZIP, COMP_IDENTITY };
	const uint8_t rd[] = { COMP_RAW_DEFLATE };

	CHECK(select_ae(gd, 2, "gzip") == COMP_GZIP);
	CHECK(select_ae(gd, 2, "GZip") == COMP_GZIP);
	CHECK(select_ae(gd, 2, "deflate, gzip") == COMP_DEFLATE);
	CHECK(select_ae(gd, 2, "gzip, deflate") == COMP_GZIP);
	CHECK(select_ae(gd, 2, "gzip;q=0.5, deflate") == COMP_DEFLATE);
	CHECK(select_ae(gd, 2, "gzip;q=0.5, deflate;q=0.5") == COMP_GZIP);
	CHECK(select_ae(gd, 2, "gzip ; q=0.9 , deflate;q=0.8") == COMP_GZIP);
	CHECK(select_ae(gd, 2, "gzip; level=1; q=0.2, deflate;q=0.3") == COMP_DEFLATE);
	CHECK(select_ae(gd, 2, "gzip;q=0") == COMP_NONE);
	CHECK(select_ae(gd, 2, "gzip;q=0.0001") == COMP_NONE);
	CHECK(select_ae(gd, 2, "gzip;Q=0") == COMP_GZIP);
	CHECK(select_ae(gd, 2, "gzip;q") == COMP_GZIP);
	CHECK(select_ae(gd, 2, "*") == COMP_DEFLATE);
	CHECK(select_ae(gd, 2, "*;q=0") == COMP_NONE);
	CHECK(select_ae(gd, 2, "deflate;q=0.3, *;q=0.5") == COMP_DEFLATE);
	CHECK(select_ae(gd, 2, "br, x-gzip, gzipx, identity") == COMP_NONE);
	CHECK(select_ae(gd, 2, "\"gzip\"") == COMP_NONE);
	CHECK(select_ae(gd, 2, "") == COMP_NONE);
	CHECK(select_ae(gd, 2, ",,, ,") == COMP_NONE);
	CHECK(select_ae(gd, 2, NULL) == COMP_NONE);
	CHECK(select_ae(gd, 0, "gzip") == COMP_NONE);
	/* identity: named, or when nothing else fits */
	CHECK(select_ae(ig, 2, NULL) == COMP_IDENTITY);
	CHECK(select_ae(ig, 2, "br") == COMP_IDENTITY);
	CHECK(select_ae(ig, 2, "gzip;q=0") == COMP_IDENTITY);
	CHECK(select_ae(ig, 2, "gzip;q=0.1") == COMP_GZIP);
	CHECK(select_ae(ig, 2, "identity, gzip;q=0.5") == COMP_IDENTITY);
	/* raw-deflate answers the "deflate" token */
	CHECK(select_ae(rd, 1, "deflate") == COMP_RAW_DEFLATE);
	CHECK(select_ae(rd, 1, "raw-deflate") == COMP_NONE);

	/* several fields */
	{
		struct tmsg t;
		const char *f[] = { "Accept-Encoding", "br", "accept-encoding", "deflate;q=0.2",
		                    "Accept-Encoding", "gzip;q=0.1", NULL };

		tmsg_init(&t, 1, f);
		CHECK(comp_select(gd, 2, &t.m) == COMP_DEFLATE);
	}
	CHECK_STR(comp_algo_name(COMP_RAW_DEFLATE), "raw-deflate");
	CHECK_STR(comp_algo_token(COMP_RAW_DEFLATE), "deflate");
	CHECK_STR(comp_algo_name(COMP_NONE), "");
}

static int ua_refused(const char *ua)
{
	struct tmsg t;
	const char *f[] = { "User-Agent", ua, NULL };

	tmsg_init(&t, 1, f);
	return comp_ua_refused(&t.m);
}

static void test_ua(void)
{
	CHECK(!ua_refused("Mozilla/5.0 (X11; Linux x86_64)"));
	CHECK(!ua_refused("curl/7.88"));
	CHECK(!ua_refused("mozilla/4.0"));
	CHECK(ua_refused("Mozilla/4"));
	CHECK(ua_refused("Mozilla/4.0 (compatible; MSIE 5.5; Windows NT 5.1; SV1)"));
	CHECK(ua_refused("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"));
	CHECK(ua_refused("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; XX1)"));
	CHECK(!ua_refused("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)"));
	CHECK(!ua_refused("Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)"));
}

static void test_request(void)
{
	struct comp_cfg fe = { .algos = { COMP_GZIP }, .nalgos = 1, .offload = 1 };
	struct comp_cfg be = { .algos = { COMP_DEFLATE }, .nalgos = 1 };
	struct comp_cfg be_types = { .nalgos = 0 };
	const char *f[] = { "Accept-Encoding", "gzip", "Host", "h", NULL };
	struct tmsg t;

	tmsg_init(&t, 1, f);
	CHECK(comp_request(&fe, NULL, &t.m, &t.e) == COMP_GZIP);
	CHECK(http_hdr_find(&t.m, S("accept-encoding"), 0) < 0);   /* offloaded */
	tmsg_init(&t, 1, f);
	CHECK(comp_request(&fe, &be, &t.m, &t.e) == COMP_NONE);    /* the backend's list */
	CHECK(http_hdr_find(&t.m, S("accept-encoding"), 0) >= 0);  /* kept: nothing chosen */
	tmsg_init(&t, 1, f);
	CHECK(comp_request(&fe, &be_types, &t.m, &t.e) == COMP_GZIP);
	tmsg_init(&t, 1, f);
	CHECK(comp_request(NULL, NULL, &t.m, &t.e) == COMP_NONE);
}

static int res_ok(const struct comp_cfg *fe, const struct comp_cfg *be, const char *const *f,
                  int status, unsigned int flags_off, int req_v11, enum http_meth meth)
{
	struct tmsg t;

	tmsg_init(&t, 0, f);
	t.m.status = status;
	t.m.flags &= ~flags_off;
	return comp_response_ok(fe, be, COMP_GZIP, req_v11, meth, 0, &t.m);
}

static void test_response_ok(void)
{
	char *html[] = { "text/html" }, *plain[] = { "text/plain" };
	struct comp_cfg any = { .algos = { COMP_GZIP }, .nalgos = 1 };
	struct comp_cfg fe_html = { .algos = { COMP_GZIP }, .nalgos = 1, .types = html, .ntypes = 1 };
	struct comp_cfg be_plain = { .types = plain, .ntypes = 1 };
	const char *none[] = { NULL };
	const char *ct_html[] = { "Content-Type", "Text/HTML; charset=utf-8", NULL };
	const char *ct_plain[] = { "Content-Type", "text/plain", NULL };
	const char *multi[] = { "Content-Type", "multipart/mixed", NULL };
	const char *ce[] = { "Content-Encoding", "br", NULL };
	const char *cc[] = { "Cache-Control", "max-age=1, No-Transform", NULL };
	const char *cc2[] = { "Cache-Control", "no-transformed", NULL };
	const char *et1[] = { "ETag", "\"x\"", NULL };
	const char *et2[] = { "ETag", "W/\"x\"", NULL };
	const char *et3[] = { "ETag", "x", NULL };
	const char *et4[] = { "ETag", "\"x\"", "ETag", "\"y\"", NULL };
	const char *te1[] = { "Transfer-Encoding", "chunked", NULL };
	const char *te2[] = { "Transfer-Encoding", "gzip, chunked", NULL };

	CHECK(res_ok(&any, NULL, none, 200, 0, 1, HTTP_METH_GET));
	CHECK(res_ok(&any, NULL, none, 203, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&any, NULL, none, 204, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&any, NULL, none, 206, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&any, NULL, none, 404, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&any, NULL, none, 200, 0, 0, HTTP_METH_GET));             /* HTTP/1.0 request */
	CHECK(!res_ok(&any, NULL, none, 200, HTTP_F_VER_11, 1, HTTP_METH_GET)); /* HTTP/1.0 response */
	CHECK(!res_ok(&any, NULL, none, 200, HTTP_F_XFER_LEN, 1, HTTP_METH_GET)); /* until close */
	CHECK(!res_ok(&any, NULL, none, 200, 0, 1, HTTP_METH_HEAD));
	CHECK(!res_ok(&any, NULL, ce, 200, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&any, NULL, cc, 200, 0, 1, HTTP_METH_GET));
	CHECK(res_ok(&any, NULL, cc2, 200, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&any, NULL, multi, 200, 0, 1, HTTP_METH_GET));
	CHECK(res_ok(&any, NULL, et1, 200, 0, 1, HTTP_METH_GET));
	CHECK(res_ok(&any, NULL, et2, 200, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&any, NULL, et3, 200, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&any, NULL, et4, 200, 0, 1, HTTP_METH_GET));
	CHECK(res_ok(&any, NULL, te1, 200, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&any, NULL, te2, 200, 0, 1, HTTP_METH_GET));
	/* types: the backend's first, a missing type refused under a list */
	CHECK(res_ok(&fe_html, NULL, ct_html, 200, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&fe_html, NULL, ct_plain, 200, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&fe_html, NULL, none, 200, 0, 1, HTTP_METH_GET));
	CHECK(res_ok(&fe_html, &be_plain, ct_plain, 200, 0, 1, HTTP_METH_GET));
	CHECK(!res_ok(&fe_html, &be_plain, ct_html, 200, 0, 1, HTTP_METH_GET));
	CHECK(!comp_response_ok(&any, NULL, COMP_NONE, 1, HTTP_METH_GET, 0, &(struct tmsg){ 0 }.m));
	{
		struct tmsg t;

		tmsg_init(&t, 0, none);
		CHECK(!comp_response_ok(&any, NULL, COMP_GZIP, 1, HTTP_METH_GET, 1, &t.m));  /* empty */
		t.m.flags |= HTTP_F_HAS_CL;
		t.m.content_length = 0;
		CHECK(!comp_response_ok(&any, NULL, COMP_GZIP, 1, HTTP_METH_GET, 0, &t.m));
		t.m.content_length = 1;
		CHECK(comp_response_ok(&any, NULL, COMP_GZIP, 1, HTTP_METH_GET, 0, &t.m));
	}
}

static void test_response_edit(void)
{
	const char *f[] = { "Content-Length", "100", "ETag", "\"abc\"", "Vary", "Cookie",
	                    "Content-Length", "100", NULL };
	struct tmsg t;
	struct ist v;

	tmsg_init(&t, 0, f);
	t.m.flags |= HTTP_F_HAS_CL | HTTP_F_CL_MERGED;
	t.m.content_length = 100;
	CHECK(comp_response_edit(&t.e, COMP_RAW_DEFLATE) == 0);
	CHECK(http_hdr_find(&t.m, S("content-length"), 0) < 0);
	CHECK(!(t.m.flags & (HTTP_F_HAS_CL | HTTP_F_CL_MERGED)));
	CHECK(http_hdr_occ(&t.m, S("etag"), 1, 0, &v) && v.len == 7 && !memcmp(v.ptr, "W/\"abc\"", 7));
	CHECK(http_hdr_count(&t.m, S("vary"), 0) == 2);
	CHECK(http_hdr_occ(&t.m, S("vary"), -1, 0, &v) && v.len == 15 &&
	      !memcmp(v.ptr, "Accept-Encoding", 15));
	CHECK(http_hdr_occ(&t.m, S("content-encoding"), 1, 0, &v) && v.len == 7 &&
	      !memcmp(v.ptr, "deflate", 7));

	tmsg_init(&t, 0, NULL);
	CHECK(comp_response_edit(&t.e, COMP_IDENTITY) == 0);
	CHECK(http_hdr_find(&t.m, S("content-encoding"), 0) < 0);
	CHECK(http_hdr_find(&t.m, S("vary"), 0) >= 0);
}

/* Compresses <len> bytes of <src> through a context, given in pieces of
 * <piece> bytes into an output of <outsz> bytes drained into <dst>,
 * flushing (SYNC) every other piece. Returns the compressed length, or
 * -1. */
static long run_stream(int algo, const unsigned char *src, size_t len, size_t piece, size_t outsz,
                       unsigned char *dst, size_t dstsz)
{
	struct comp_ctx *c = comp_ctx_new(algo, 1);
	char *area = malloc(outsz);
	struct buffer out = { area, outsz, 0, 0 };
	size_t off = 0, got = 0;
	int n = 0, guard = 0;

	if (!c || !area)
		return -1;
	while (!comp_ctx_finished(c) && guard++ < 10000000) {
		struct buffer *in = comp_ctx_input(c);
		int mode;

		if (off < len && in->data < piece) {
			size_t k = len - off < piece ? len - off : piece;

			buf_realign(in);
			if (k > buf_room(in))
				k = buf_room(in);
			memcpy(buf_tail(in), src + off, k);
			in->data += k;
			off += k;
			n++;
		}
		mode = off == len ? COMP_FEED_FINISH : (n & 1) ? COMP_FEED_SYNC : COMP_FEED_MORE;
		if (comp_ctx_feed(c, &out, mode) < 0)
			break;
		/* the client drains what it can */
		if (got + out.data > dstsz)
			break;
		memcpy(dst + got, buf_head(&out), out.data);
		got += out.data;
		buf_consume(&out, out.data);
	}
	/* a finished stream holds nothing: a response waiting on it would
	 * never end */
	CHECK(!comp_ctx_finished(c) || comp_ctx_pending(c) == 0);
	{
		uint64_t bin, bout;

		comp_ctx_counts(c, &bin, &bout);
		CHECK(bin == len);
		CHECK(bout == got);
	}
	n = comp_ctx_finished(c);
	comp_ctx_free(c);
	free(area);
	return n ? (long)got : -1;
}

static int inflate_all(int wbits, const unsigned char *in, size_t len, unsigned char *out,
                       size_t outsz, size_t *outlen)
{
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, wbits) != Z_OK)
		return -1;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)outsz;
	rc = inflate(&z, Z_FINISH);
	*outlen = outsz - z.avail_out;
	inflateEnd(&z);
	return rc == Z_STREAM_END && z.avail_in == 0 ? 0 : -1;
}

static void test_streams(void)
{
	const size_t len = 300000;
	unsigned char *src = malloc(len), *cmp = malloc(len * 2), *back = malloc(len + 16);
	static const struct { int algo, wbits; } fmt[] = {
		{ COMP_GZIP, 16 + MAX_WBITS }, { COMP_DEFLATE, MAX_WBITS },
		{ COMP_RAW_DEFLATE, -MAX_WBITS },
	};
	static const size_t pieces[] = { 1, 100, 4096, 70000 }, outs[] = { 1, 7, 1000, 16384 };
	unsigned int seed = 1;

	if (!src || !cmp || !back)
		return;
	/* compressible but not trivial: words from a small set, and noise */
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		src[i] = (i % 97 < 60) ? (unsigned char)("lorem ipsum dolor sit amet "[i % 27])
		                       : (unsigned char)(seed >> 16);
	}
	for (size_t f = 0; f < 3; f++) {
		for (size_t p = 0; p < 4; p++) {
			for (size_t o = 0; o < 4; o++) {
				size_t l = (pieces[p] == 1 || outs[o] == 1) ? 20000 : len;
				long clen = run_stream(fmt[f].algo, src, l, pieces[p], outs[o], cmp, len * 2);
				size_t blen = 0;

				CHECK(clen > 0);
				if (clen <= 0)
					continue;
				CHECK(inflate_all(fmt[f].wbits, cmp, (size_t)clen, back, len + 16, &blen) == 0);
				CHECK(blen == l && memcmp(back, src, l) == 0);
			}
		}
	}
	/* identity copies */
	{
		long clen = run_stream(COMP_IDENTITY, src, 50000, 333, 1000, cmp, len * 2);

		CHECK(clen == 50000 && memcmp(cmp, src, 50000) == 0);
	}
	/* an empty body is a valid empty stream */
	{
		long clen = run_stream(COMP_GZIP, src, 0, 100, 100, cmp, len * 2);
		size_t blen = 1;

		CHECK(clen > 0 && inflate_all(16 + MAX_WBITS, cmp, (size_t)clen, back, 16, &blen) == 0 &&
		      blen == 0);
	}
	/* a flush makes everything given so far decodable */
	{
		struct comp_ctx *c = comp_ctx_new(COMP_DEFLATE, 1);
		char area[4096];
		struct buffer out = { area, sizeof(area), 0, 0 };
		struct buffer *in = comp_ctx_input(c);
		z_stream z;

		memcpy(buf_tail(in), "hello hello hello", 17);
		in->data = 17;
		CHECK(comp_ctx_feed(c, &out, COMP_FEED_SYNC) == 1);
		CHECK(comp_ctx_feed(c, &out, COMP_FEED_SYNC) == 0);   /* nothing new: no empty block */
		memset(&z, 0, sizeof(z));
		inflateInit(&z);
		z.next_in = (Bytef *)area;
		z.avail_in = (uInt)out.data;
		z.next_out = back;
		z.avail_out = 100;
		CHECK(inflate(&z, Z_SYNC_FLUSH) == Z_OK);
		CHECK(100 - z.avail_out == 17 && memcmp(back, "hello hello hello", 17) == 0);
		inflateEnd(&z);
		CHECK(!comp_ctx_finished(c));
		comp_ctx_free(c);   /* an unfinished stream is freed as well */
	}
	CHECK(comp_ctx_new(COMP_NONE, 1) == NULL);
	free(src);
	free(cmp);
	free(back);
}

static void test_rate(void)
{
	global.comp_maxrate = 0;
	comp_rate_add(1000, 1 << 20);
	CHECK(!comp_rate_exceeded(1000));       /* no limit */
	global.comp_maxrate = 1;                /* 1024 bytes a second */
	CHECK(comp_rate_exceeded(1500));
	CHECK(comp_rate_exceeded(2100));        /* last second's, weighted */
	CHECK(!comp_rate_exceeded(3000));       /* two seconds later: gone */
	comp_rate_add(3000, 1000);
	CHECK(!comp_rate_exceeded(3001));
	comp_rate_add(3500, 100);
	CHECK(comp_rate_exceeded(3501));
	CHECK(!comp_rate_exceeded(4900));       /* 1100 x 10% */
	global.comp_maxrate = 0;
}

int main(void)
{
	test_rate();
	test_qvalue();
	test_select();
	test_ua();
	test_request();
	test_response_ok();
	test_response_edit();
	test_streams();
	return t_done("test_comp");
}
