/* httpgen.h: what the HTTP stress origin (httporigin.c) and client
 * (httpload.c) share, so that both ends derive and check bytes the same way.
 *
 *   pstream    a deterministic byte stream from a 64-bit seed (splitmix64,
 *              eight bytes per step); fill or compare it piece by piece
 *   fnv64      FNV-1a over bytes: the checksum a receiver reports of what it
 *              got, position sensitive, cheap enough for hundreds of MB
 *   bodygen    writes a body into an output buffer as it drains: plain bytes
 *              (Content-Length) or chunked framing with random chunk sizes,
 *              optional chunk extensions, and trailers after the last chunk
 *   chunked    the reverse: a chunked-body reader fed arbitrary slices,
 *              handing data spans to a callback and keeping the trailers
 *   head_*     finding and reading an HTTP/1 head held whole in a buffer
 *
 * Header-only (static inline) because each helper program is one file built
 * by the stress test itself.
 */
#ifndef HTTPGEN_H
#define HTTPGEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define FNV_INIT  0xcbf29ce484222325ULL
#define TRAILERS_MAX 1024

static inline uint64_t hg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* splitmix64: one well-mixed 64-bit word per call; also the dice. */
static inline uint64_t sm64_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* a uniform integer in [lo, hi] (hi - lo far below 2^64: bias negligible) */
static inline uint64_t sm64_range(uint64_t *x, uint64_t lo, uint64_t hi)
{
	return lo + sm64_next(x) % (hi - lo + 1);
}

static inline uint64_t fnv64(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* ---- pstream ---- */

struct pstream {
	uint64_t x;        /* splitmix state */
	uint8_t word[8];   /* the current word's bytes */
	unsigned int used; /* bytes of <word> already handed out */
};

static inline void ps_init(struct pstream *p, uint64_t seed)
{
	p->x = seed;
	p->used = 8;
}

static inline void ps_fill(struct pstream *p, uint8_t *dst, size_t n)
{
	while (n) {
		if (p->used == 8) {
			uint64_t w = sm64_next(&p->x);

			if (n >= 8) {   /* whole words straight to the output */
				memcpy(dst, &w, 8);
				dst += 8;
				n -= 8;
				continue;
			}
			memcpy(p->word, &w, 8);
			p->used = 0;
		}
		*dst++ = p->word[p->used++];
		n--;
	}
}

/* Compares <n> received bytes with the stream. Returns the offset of the
 * first difference, or n when all match (the stream advances by n). */
static inline size_t ps_check(struct pstream *p, const uint8_t *src, size_t n)
{
	uint8_t tmp[4096];
	size_t done = 0;

	while (done < n) {
		size_t k = n - done < sizeof(tmp) ? n - done : sizeof(tmp);

		ps_fill(p, tmp, k);
		if (memcmp(tmp, src + done, k) != 0) {
			for (size_t i = 0; i < k; i++)
				if (tmp[i] != src[done + i])
					return done + i;
		}
		done += k;
	}
	return n;
}

/* ---- bodygen ---- */

struct bodygen {
	uint64_t left;        /* body bytes still to produce */
	uint64_t chunk_left;  /* of the current chunk */
	uint64_t sum;         /* fnv64 of the body bytes produced */
	uint64_t dice;        /* chunk sizes and extensions */
	struct pstream ps;
	int chunked;
	int chunk_ext;        /* add ";ext=..." to some size lines */
	int in_chunk;         /* a size line went out, its CRLF has not */
	int done;
	/* trailers, each line ending in CRLF; "%SUM%" is replaced by the body's
	 * checksum once known (the body is over when the trailers go out) */
	char trailers[TRAILERS_MAX];
};

static inline void bg_init(struct bodygen *g, uint64_t len, uint64_t seed, int chunked,
                           uint64_t dice)
{
	memset(g, 0, sizeof(*g));
	g->left = len;
	g->sum = FNV_INIT;
	g->dice = dice;
	g->chunked = chunked;
	ps_init(&g->ps, seed);
	g->done = !chunked && len == 0;
}

/* chunk sizes: many tiny ones, some buffer-sized, a few far larger */
static inline uint64_t bg_chunk_size(struct bodygen *g)
{
	uint64_t r = sm64_next(&g->dice) % 10, max;

	max = r < 5 ? 100 : r < 8 ? 16384 : 300000;
	max = max < g->left ? max : g->left;
	return sm64_range(&g->dice, 1, max);
}

static inline size_t bg_body(struct bodygen *g, uint8_t *dst, size_t room, uint64_t avail)
{
	size_t k = avail < room ? (size_t)avail : room;

	ps_fill(&g->ps, dst, k);
	g->sum = fnv64(g->sum, dst, k);
	g->left -= k;
	return k;
}

/* The last chunk and the trailers, or 0 if they do not fit in <room>. */
static inline size_t bg_last(struct bodygen *g, char *dst, size_t room)
{
	char sum[17], *mark;
	size_t n;

	if (room < sizeof(g->trailers) + 32)
		return 0;
	snprintf(sum, sizeof(sum), "%016llx", (unsigned long long)g->sum);
	n = (size_t)snprintf(dst, room, "0\r\n%s\r\n", g->trailers);
	mark = strstr(dst, "%SUM%");
	if (mark) {   /* 5 -> 16 characters: shift the rest right */
		memmove(mark + 16, mark + 5, n - (size_t)(mark + 5 - dst) + 1);
		memcpy(mark, sum, 16);
		n += 11;
	}
	g->done = 1;
	return n;
}

/* Appends as much of the body (and framing) as fits in <room> bytes at
 * <dst>; returns the bytes written. g->done once all of it went out. */
static inline size_t bg_fill(struct bodygen *g, uint8_t *dst, size_t room)
{
	size_t n = 0;

	if (!g->chunked) {
		n = bg_body(g, dst, room, g->left);
		g->done = g->left == 0;
		return n;
	}
	while (!g->done && room - n >= 64) {
		if (g->in_chunk && g->chunk_left == 0) {
			memcpy(dst + n, "\r\n", 2);
			n += 2;
			g->in_chunk = 0;
		} else if (g->chunk_left) {
			size_t k = bg_body(g, dst + n, room - n, g->chunk_left);

			g->chunk_left -= k;
			n += k;
		} else if (g->left) {
			g->chunk_left = bg_chunk_size(g);
			n += (size_t)snprintf((char *)dst + n, room - n,
			                      sm64_next(&g->dice) & 1 ? "%llx%s\r\n" : "%llX%s\r\n",
			                      (unsigned long long)g->chunk_left,
			                      g->chunk_ext && sm64_next(&g->dice) % 4 == 0 ?
			                      ";ext=\"a b\";x" : "");
			g->in_chunk = 1;
		} else {
			size_t k = bg_last(g, (char *)dst + n, room - n);

			if (!k)
				break;
			n += k;
		}
	}
	return n;
}

/* ---- chunked reader ---- */

enum ck_state { CK_SIZE, CK_DATA, CK_DATA_CRLF, CK_TRAILERS, CK_DONE, CK_ERROR };

struct chunked {
	enum ck_state st;
	uint64_t left;            /* of the current chunk */
	char line[512];           /* size or trailer line being assembled */
	size_t llen;
	int ntrailers;
	size_t tlen;
	char trailers[TRAILERS_MAX];   /* trailer lines, each ending in "\n" */
	const char *err;
};

typedef void (*ck_data_cb)(void *ctx, const uint8_t *p, size_t n);

/* A complete line (without CRLF) in c->line. */
static inline void ck_line(struct chunked *c)
{
	char *end;

	if (c->st == CK_SIZE) {
		c->left = strtoull(c->line, &end, 16);
		if (end == c->line || (*end && *end != ';' && *end != ' ' && *end != '\t')) {
			c->st = CK_ERROR;
			c->err = "bad chunk size line";
			return;
		}
		c->st = c->left ? CK_DATA : CK_TRAILERS;
	} else if (c->st == CK_DATA_CRLF) {
		if (c->llen) {
			c->st = CK_ERROR;
			c->err = "no CRLF after chunk data";
			return;
		}
		c->st = CK_SIZE;
	} else if (c->llen == 0) {
		c->st = CK_DONE;
	} else {
		c->ntrailers++;
		if (c->tlen + c->llen + 2 < sizeof(c->trailers)) {
			memcpy(c->trailers + c->tlen, c->line, c->llen);
			c->tlen += c->llen;
			c->trailers[c->tlen++] = '\n';
			c->trailers[c->tlen] = 0;
		}
	}
}

/* Consumes up to <n> bytes; stops after the body's end. Returns the bytes
 * consumed; c->st is CK_DONE at the end, CK_ERROR (c->err) on bad framing. */
static inline size_t ck_feed(struct chunked *c, const uint8_t *p, size_t n,
                             ck_data_cb cb, void *ctx)
{
	size_t i = 0;

	while (i < n && c->st != CK_DONE && c->st != CK_ERROR) {
		if (c->st == CK_DATA) {
			size_t k = n - i < c->left ? n - i : (size_t)c->left;

			cb(ctx, p + i, k);
			c->left -= k;
			i += k;
			if (!c->left) {
				c->st = CK_DATA_CRLF;
				c->llen = 0;
			}
			continue;
		}
		if (p[i] == '\n') {
			if (c->llen && c->line[c->llen - 1] == '\r')
				c->llen--;
			c->line[c->llen] = 0;
			ck_line(c);
			c->llen = 0;
		} else if (c->llen + 2 >= sizeof(c->line)) {
			c->st = CK_ERROR;
			c->err = "framing line too long";
		} else {
			c->line[c->llen++] = (char)p[i];
		}
		i++;
	}
	return i;
}

/* ---- heads ---- */

/* Length of the head at the start of <p> (through the empty line), or 0 if
 * it is not complete yet. */
static inline size_t head_len(const uint8_t *p, size_t n)
{
	const uint8_t *e = memmem(p, n, "\r\n\r\n", 4);

	return e ? (size_t)(e - p) + 4 : 0;
}

/* Finds header <name> in the head; sets its value (trimmed, not
 * terminated) and returns 1, or returns 0. */
static inline int head_find(const uint8_t *h, size_t hlen, const char *name,
                            const char **val, size_t *vlen)
{
	size_t nl = strlen(name);
	const char *p = memchr(h, '\n', hlen), *end = (const char *)h + hlen;

	while (p && ++p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *v;

		if (!eol)
			break;
		if ((size_t)(eol - p) > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
			v = p + nl + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			*val = v;
			*vlen = (size_t)(eol - v);
			while (*vlen && (v[*vlen - 1] == '\r' || v[*vlen - 1] == ' '))
				(*vlen)--;
			return 1;
		}
		p = eol;
	}
	return 0;
}

/* Header <name> as a number in <base>; <dflt> if absent. */
static inline uint64_t head_u64(const uint8_t *h, size_t hlen, const char *name, int base,
                                uint64_t dflt)
{
	const char *v;
	size_t n;
	char tmp[32];

	if (!head_find(h, hlen, name, &v, &n) || n >= sizeof(tmp))
		return dflt;
	memcpy(tmp, v, n);
	tmp[n] = 0;
	return strtoull(tmp, NULL, base);
}

static inline int head_has(const uint8_t *h, size_t hlen, const char *name, const char *val)
{
	const char *v;
	size_t n;

	return head_find(h, hlen, name, &v, &n) && n == strlen(val) &&
	       strncasecmp(v, val, n) == 0;
}

#endif
