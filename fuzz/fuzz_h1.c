/* libFuzzer target: h1_parse_head() and h1_chunk_feed() on arbitrary bytes.
 *
 * The input is parsed as a request and as a response head, from a heap copy
 * of exactly its size so that ASan sees any read past <len>. Checked beyond
 * the sanitizers' own checks:
 * - a complete head has 0 < head_len <= len, every span of the model lies
 *   inside it, and the flags are coherent (CHUNKED needs HAS_TE, BODYLESS
 *   needs XFER_LEN, requests always know their length, ...);
 * - an error carries a status allowed for its side, a reason and an offset
 *   within the input;
 * - the verdict only depends on the bytes read: the input with bytes
 *   appended parses the same (same head or same error), the input minus its
 *   last byte fails identically if it fails, and a complete head minus its
 *   last byte needs more;
 * - a complete head parsed with max_head = head_len is the same, with one
 *   byte less it is a 414/431 (request) or 502 (response);
 * - the chunked decoder gives the same final state, reason, consumed count
 *   and payload bytes whether the input arrives at once or in random slices,
 *   with and without H1C_O_STOP_AFTER_DATA. It runs on the whole input and
 *   on what follows a complete head.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/http/h1.h>

#define MAXHDRS 32
#define BIG_HEAD (1 << 20)

struct parsed {
	enum h1_result rc;
	struct http_msg msg;
	struct http_hdr hdrs[MAXHDRS];
	struct h1_error err;
};

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void parse(const uint8_t *data, size_t len, int is_req, enum http_meth rm,
                  size_t max_head, unsigned int opts, struct parsed *out)
{
	char *copy = malloc(len ? len : 1);

	memcpy(copy, data, len);
	memset(out, 0, sizeof(*out));
	out->msg.hdrs = out->hdrs;
	out->msg.maxhdrs = MAXHDRS;
	out->rc = h1_parse_head(copy, len, is_req, rm, max_head, opts, &out->msg, &out->err);
	/* spans point into <copy>: turn them into offsets before freeing it */
	if (out->rc == H1_OK) {
		struct ist *spans[] = { &out->msg.method, &out->msg.uri, &out->msg.reason,
		                        &out->msg.version };
		size_t i;
		int h;

		for (i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
			if (!spans[i]->ptr) {
				assert(spans[i]->len == 0);
				continue;
			}
			assert(spans[i]->ptr >= copy &&
			       spans[i]->ptr + spans[i]->len <= copy + out->msg.head_len);
			spans[i]->ptr = (const char *)(uintptr_t)(spans[i]->ptr - copy + 1);
		}
		for (h = 0; h < out->msg.nhdrs; h++) {
			struct http_hdr *hd = &out->hdrs[h];

			assert(hd->name.len > 0);
			assert(hd->name.ptr >= copy &&
			       hd->name.ptr + hd->name.len <= copy + out->msg.head_len);
			assert(hd->value.ptr >= hd->name.ptr + hd->name.len &&
			       hd->value.ptr + hd->value.len <= copy + out->msg.head_len);
			hd->name.ptr = (const char *)(uintptr_t)(hd->name.ptr - copy + 1);
			hd->value.ptr = (const char *)(uintptr_t)(hd->value.ptr - copy + 1);
		}
	}
	free(copy);
}

static void check_shape(const uint8_t *data, size_t len, int is_req, const struct parsed *p)
{
	const struct http_msg *m = &p->msg;
	unsigned int f = m->flags;

	if (p->rc == H1_ERROR) {
		assert(p->err.reason != NULL);
		assert(p->err.offset <= len);
		if (is_req)
			assert(p->err.status == 400 || p->err.status == 414 ||
			       p->err.status == 431 || p->err.status == 505);
		else
			assert(p->err.status == 502);
		return;
	}
	if (p->rc != H1_OK)
		return;
	assert(m->head_len > 0 && m->head_len <= len);
	assert(data[m->head_len - 1] == '\n');
	assert(m->nhdrs >= 0 && m->nhdrs <= MAXHDRS);
	assert(m->is_request == is_req);
	assert(m->version.len == 8);
	assert(!!(f & HTTP_F_VER_11) == (data[(uintptr_t)m->version.ptr - 1 + 7] == '1'));
	assert(!(f & HTTP_F_CHUNKED) || (f & HTTP_F_HAS_TE));
	assert(!(f & HTTP_F_BODYLESS) || (f & HTTP_F_XFER_LEN));
	assert(!(f & HTTP_F_CL_MERGED) || (f & HTTP_F_HAS_CL));
	assert(!((f & HTTP_F_HAS_CL) && (f & HTTP_F_CL_DROP)));
	assert(m->content_length <= (uint64_t)INT64_MAX);
	if (is_req) {
		assert(m->method.len > 0 && m->uri.len > 0);
		assert(f & HTTP_F_XFER_LEN);
		assert(!((f & HTTP_F_HAS_CL) && (f & HTTP_F_HAS_TE)));
		assert(!(f & (HTTP_F_CL_DROP | HTTP_F_TUNNEL)));
		assert(!(f & HTTP_F_HAS_TE) || (f & HTTP_F_CHUNKED));
		assert(!(f & HTTP_F_BODYLESS) || m->content_length == 0);
	} else {
		assert(m->status >= 100 && m->status <= 599);
		assert(!(f & HTTP_F_EXPECT_100));
		assert((f & HTTP_F_XFER_LEN) ||
		       !(f & (HTTP_F_CHUNKED | HTTP_F_HAS_CL | HTTP_F_BODYLESS)));
	}
}

static void same(const struct parsed *a, const struct parsed *b)
{
	int h;

	assert(a->rc == b->rc);
	if (a->rc == H1_ERROR) {
		assert(a->err.status == b->err.status);
		assert(a->err.reason == b->err.reason);
		assert(a->err.offset == b->err.offset);
	}
	if (a->rc != H1_OK)
		return;
	assert(a->msg.head_len == b->msg.head_len);
	assert(a->msg.flags == b->msg.flags);
	assert(a->msg.meth == b->msg.meth);
	assert(a->msg.status == b->msg.status);
	assert(a->msg.content_length == b->msg.content_length);
	assert(a->msg.nhdrs == b->msg.nhdrs);
	assert(a->msg.uri.ptr == b->msg.uri.ptr && a->msg.uri.len == b->msg.uri.len);
	assert(a->msg.method.ptr == b->msg.method.ptr && a->msg.method.len == b->msg.method.len);
	assert(a->msg.reason.ptr == b->msg.reason.ptr && a->msg.reason.len == b->msg.reason.len);
	for (h = 0; h < a->msg.nhdrs; h++) {
		assert(a->hdrs[h].name.ptr == b->hdrs[h].name.ptr);
		assert(a->hdrs[h].name.len == b->hdrs[h].name.len);
		assert(a->hdrs[h].value.ptr == b->hdrs[h].value.ptr);
		assert(a->hdrs[h].value.len == b->hdrs[h].value.len);
	}
}

static void check_head(const uint8_t *data, size_t size, int is_req, enum http_meth rm,
                       unsigned int opts)
{
	static struct parsed full, alt;
	uint8_t *longer;

	parse(data, size, is_req, rm, BIG_HEAD, opts, &full);
	check_shape(data, size, is_req, &full);

	/* more bytes change nothing once the verdict is known */
	longer = malloc(size * 2 + 4);
	memcpy(longer, data, size);
	memcpy(longer + size, data, size);
	memcpy(longer + 2 * size, "\r\n\r\n", 4);
	parse(longer, size * 2 + 4, is_req, rm, BIG_HEAD, opts, &alt);
	if (full.rc != H1_INCOMPLETE)
		same(&full, &alt);
	free(longer);

	if (size) {
		parse(data, size - 1, is_req, rm, BIG_HEAD, opts, &alt);
		if (alt.rc == H1_ERROR)
			same(&alt, &full);
		if (alt.rc == H1_OK)
			same(&alt, &full);
	}
	if (full.rc == H1_OK) {
		size_t hl = full.msg.head_len;

		parse(data, hl - 1, is_req, rm, BIG_HEAD, opts, &alt);
		assert(alt.rc == H1_INCOMPLETE);
		parse(data, size, is_req, rm, hl, opts, &alt);
		same(&full, &alt);
		parse(data, size, is_req, rm, hl - 1, opts, &alt);
		assert(alt.rc == H1_ERROR);
		assert(alt.err.status == (is_req ? 414 : 502) || (is_req && alt.err.status == 431));
	}
}

struct dec {
	enum h1_chunk_state st;
	const char *reason;
	size_t consumed;
	uint64_t body_len;
	uint8_t *out;
	size_t out_len;
};

/* Feeds <data> in slices of random sizes (all at once if !seed). */
static void decode(const uint8_t *data, size_t size, uint64_t seed, unsigned int opts,
                   struct dec *d)
{
	struct h1_chunk c;
	size_t pos = 0;

	h1_chunk_init(&c);
	c.opts = opts;
	d->out = malloc(size ? size : 1);
	d->out_len = 0;
	while (pos < size && c.st != H1C_DONE && c.st != H1C_ERROR) {
		size_t sl = size - pos, used, off, len;
		char *slice;

		if (seed)
			sl = 1 + rng_next(&seed) % (rng_next(&seed) % 4 ? 8 : sl);
		if (sl > size - pos)
			sl = size - pos;
		slice = malloc(sl);
		memcpy(slice, data + pos, sl);
		used = h1_chunk_feed(&c, slice, sl, &off, &len);
		assert(used <= sl);
		assert(len == 0 || (off < used && off + len <= used));
		if (opts & H1C_O_STOP_AFTER_DATA) {
			memcpy(d->out + d->out_len, slice + off, len);
			d->out_len += len;
		}
		free(slice);
		pos += used;
		if (used < sl && !(opts & H1C_O_STOP_AFTER_DATA))
			assert(c.st == H1C_DONE || c.st == H1C_ERROR);
		if (!used && c.st != H1C_DONE && c.st != H1C_ERROR)
			assert(opts & H1C_O_STOP_AFTER_DATA);
	}
	assert(c.body_len <= pos);
	assert((c.st == H1C_ERROR) == (c.reason != NULL));
	d->st = c.st;
	d->reason = c.reason;
	d->consumed = pos;
	d->body_len = c.body_len;
}

static void check_chunked(const uint8_t *data, size_t size, uint64_t seed)
{
	struct dec a, b, c;

	decode(data, size, 0, H1C_O_STOP_AFTER_DATA, &a);
	decode(data, size, seed | 1, H1C_O_STOP_AFTER_DATA, &b);
	decode(data, size, (seed * 7) | 1, 0, &c);
	assert(a.st == b.st && a.st == c.st);
	assert(a.reason == b.reason && a.reason == c.reason);
	assert(a.consumed == b.consumed && a.consumed == c.consumed);
	assert(a.body_len == b.body_len && a.body_len == c.body_len);
	assert(a.out_len == a.body_len && b.out_len == b.body_len);
	assert(memcmp(a.out, b.out, a.out_len) == 0);
	free(a.out);
	free(b.out);
	free(c.out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum http_meth meths[] = {
		HTTP_METH_GET, HTTP_METH_HEAD, HTTP_METH_CONNECT, HTTP_METH_POST,
	};
	uint64_t h = 1469598103934665603ULL;
	size_t i;
	unsigned int opts;
	struct parsed req;

	for (i = 0; i < size; i++)
		h = (h ^ data[i]) * 1099511628211ULL;
	opts = (h >> 8) & 1 ? H1_O_ACCEPT_INVALID : 0;

	check_head(data, size, 1, HTTP_METH_OTHER, opts);
	check_head(data, size, 0, meths[(h >> 16) & 3], opts);
	check_chunked(data, size, h);

	/* a body after a complete head */
	parse(data, size, 1, HTTP_METH_OTHER, BIG_HEAD, H1_O_ACCEPT_INVALID, &req);
	if (req.rc == H1_OK && req.msg.head_len < size)
		check_chunked(data + req.msg.head_len, size - req.msg.head_len, h >> 1);
	return 0;
}
