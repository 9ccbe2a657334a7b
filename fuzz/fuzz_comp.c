/* libFuzzer target: the compression decisions on arbitrary header values,
 * and the zlib streams on arbitrary payloads.
 *
 * Input: byte 0 chooses the configured algorithms (HAProxy's list order)
 * and the types list, byte 1 the slicing; the rest, split on '\n', gives
 * Accept-Encoding values (then User-Agent, Content-Type, ETag and
 * Cache-Control for the response checks). Checked beyond the sanitizers:
 * - comp_select() returns none or one of the configured algorithms, never
 *   identity unless configured, and the same whether the elements come in
 *   one field joined with ',' or one field each (when no value has a quote,
 *   which would change the splitting);
 * - a response head edited for compression has no Content-Length, one
 *   Vary: Accept-Encoding more, a Content-Encoding unless identity, and an
 *   ETag that is weak;
 * - the whole input compressed by a comp_ctx in slices into a small output,
 *   with flushes, decompresses to itself in every format.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <sluice/http/comp.h>
#include <sluice/http/msgedit.h>

#define MAXF 64

static void msg_init(struct http_msg *m, struct http_hdr *h, int is_req)
{
	memset(m, 0, sizeof(*m));
	m->is_request = is_req;
	m->hdrs = h;
	m->maxhdrs = MAXF;
	m->flags = HTTP_F_VER_11 | HTTP_F_XFER_LEN;
	m->status = 200;
}

static void add(struct http_msg *m, const char *name, const char *v, size_t len)
{
	if (m->nhdrs >= MAXF - 4)
		return;
	m->hdrs[m->nhdrs].name = (struct ist){ name, strlen(name) };
	m->hdrs[m->nhdrs].value = (struct ist){ v, len };
	m->nhdrs++;
}

static void check_select(const uint8_t *algos, int n, const char *const *vals, const size_t *lens,
                         int nvals)
{
	struct http_hdr h[MAXF], hj[MAXF];
	struct http_msg m, mj;
	char joined[4096];
	size_t jl = 0;
	int quotes = 0, cut = 0, r, rj;

	msg_init(&m, h, 1);
	msg_init(&mj, hj, 1);
	for (int i = 0; i < nvals; i++) {
		add(&m, "Accept-Encoding", vals[i], lens[i]);
		if (memchr(vals[i], '"', lens[i]))
			quotes = 1;
		if (jl + lens[i] + 1 < sizeof(joined)) {
			if (i)
				joined[jl++] = ',';
			memcpy(joined + jl, vals[i], lens[i]);
			jl += lens[i];
		} else {
			cut = 1;
		}
	}
	add(&mj, "accept-encoding", joined, jl);
	r = comp_select(algos, n, &m);
	rj = comp_select(algos, n, &mj);
	if (r != COMP_NONE) {
		int found = 0;

		for (int i = 0; i < n; i++)
			found |= algos[i] == r;
		assert(found);
	}
	if (!quotes && !cut && nvals < MAXF - 4)
		assert(r == rj);
	(void)comp_ua_refused(&m);
}

static void check_response(const struct comp_cfg *cfg, int algo, const char *const *vals,
                           const size_t *lens, int nvals)
{
	static const char *const names[] = { "Content-Type", "ETag", "Cache-Control",
	                                     "Content-Length", "Vary" };
	struct http_hdr h[MAXF];
	struct http_msg m;
	struct http_edit e;
	char arena[2048];
	int nvary, ok;
	struct ist v;

	msg_init(&m, h, 0);
	for (int i = 0; i < nvals; i++)
		add(&m, names[i % 5], vals[i], lens[i]);
	ok = comp_response_ok(cfg, NULL, algo, 1, HTTP_METH_GET, 0, &m);
	if (!ok)
		return;
	nvary = http_hdr_count(&m, (struct ist){ "vary", 4 }, 0);
	http_edit_init(&e, &m, arena, sizeof(arena), MAXF);
	if (comp_response_edit(&e, algo) < 0)
		return;
	assert(http_hdr_find(&m, (struct ist){ "content-length", 14 }, 0) < 0);
	assert(http_hdr_count(&m, (struct ist){ "vary", 4 }, 0) == nvary + 1);
	assert((http_hdr_find(&m, (struct ist){ "content-encoding", 16 }, 0) >= 0) ==
	       (algo != COMP_IDENTITY));
	if (http_hdr_occ(&m, (struct ist){ "etag", 4 }, 1, 0, &v))
		assert(v.len >= 2 && v.ptr[0] == 'W' && v.ptr[1] == '/');
}

static void check_stream(int algo, const uint8_t *data, size_t len, unsigned int slicing)
{
	static const int wbits[COMP_ALGO_MAX] = {
		[COMP_GZIP] = 16 + MAX_WBITS, [COMP_DEFLATE] = MAX_WBITS,
		[COMP_RAW_DEFLATE] = -MAX_WBITS,
	};
	struct comp_ctx *c = comp_ctx_new(algo, 1 + (int)(slicing % 9));
	size_t outsz = 1 + slicing % 61, cap = len * 4 + 4096, got = 0, off = 0;
	unsigned char *cmp = malloc(cap), *back = malloc(len + 1);
	char *area = malloc(outsz);
	struct buffer out = { area, outsz, 0, 0 };
	unsigned int turn = 0;

	assert(c && cmp && back && area);
	while (!comp_ctx_finished(c)) {
		struct buffer *in = comp_ctx_input(c);
		size_t k = 1 + ((slicing >> 3) + turn * 7) % 97;
		int mode, rc;

		buf_realign(in);
		if (k > len - off)
			k = len - off;
		if (k > buf_room(in))
			k = buf_room(in);
		memcpy(buf_tail(in), data + off, k);
		in->data += k;
		off += k;
		mode = off == len ? COMP_FEED_FINISH : (turn++ & 1) ? COMP_FEED_SYNC : COMP_FEED_MORE;
		rc = comp_ctx_feed(c, &out, mode);
		assert(rc >= 0);
		assert(got + out.data <= cap);
		memcpy(cmp + got, buf_head(&out), out.data);
		got += out.data;
		buf_consume(&out, out.data);
	}
	if (algo == COMP_IDENTITY) {
		assert(got == len && !memcmp(cmp, data, len));
	} else {
		z_stream z;

		memset(&z, 0, sizeof(z));
		assert(inflateInit2(&z, wbits[algo]) == Z_OK);
		z.next_in = cmp;
		z.avail_in = (uInt)got;
		z.next_out = back;
		z.avail_out = (uInt)len + 1;
		assert(inflate(&z, Z_FINISH) == Z_STREAM_END);
		assert(z.total_out == len && !memcmp(back, data, len));
		inflateEnd(&z);
	}
	comp_ctx_free(c);
	free(cmp);
	free(back);
	free(area);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *vals[MAXF];
	size_t lens[MAXF];
	int nvals = 0;
	uint8_t algos[COMP_ALGO_MAX];
	int n = 0;
	char *copy;
	char *types[] = { "text/", "application/json" };
	struct comp_cfg cfg;

	if (size < 2)
		return 0;
	/* algorithms: each present or not, in an order the byte picks */
	for (int i = 0; i < 4; i++) {
		int a = COMP_IDENTITY + (data[0] + i * ((data[0] >> 4) | 1)) % 4;
		int dup = 0;

		for (int j = 0; j < n; j++)
			dup |= algos[j] == a;
		if (!dup && (data[0] >> i) & 1)
			algos[n++] = (uint8_t)a;
	}
	copy = malloc(size - 2 + 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 2, size - 2);
	copy[size - 2] = '\n';
	for (size_t s = 0, i = 0; i < size - 1 && nvals < MAXF; i++) {
		if (copy[i] == '\n') {
			vals[nvals] = copy + s;
			lens[nvals] = i - s;
			nvals++;
			s = i + 1;
		}
	}
	check_select(algos, n, vals, lens, nvals);
	memset(&cfg, 0, sizeof(cfg));
	memcpy(cfg.algos, algos, (size_t)n);
	cfg.nalgos = n;
	if (data[1] & 0x80) {
		cfg.types = types;
		cfg.ntypes = 2;
	}
	for (int a = COMP_IDENTITY; a < COMP_ALGO_MAX; a++)
		check_response(&cfg, a, vals, lens, nvals);
	check_stream(COMP_IDENTITY + data[1] % 4, data + 2, size - 2, data[1] * 2654435761u);
	free(copy);
	return 0;
}
