/* HTTP response compression (see comp.h): configuration keywords, the
 * Accept-Encoding negotiation, HAProxy 2.6's conditions on the response,
 * the head edits, the zlib streams and the res.comp / res.comp_algo
 * fetches.
 *
 * Configuration runs on one thread. A struct comp_ctx belongs to the stream
 * of one transaction, on its owner thread: it exists only while a response
 * is being compressed (zlib's state is about 256 KB at the default window
 * and memory level, which is why it is never taken before a response was
 * found compressible, and why its end is every path's business: see
 * stream_http.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/freq.h>
#include <sluice/core/global.h>
#include <sluice/expr/sample.h>
#include <sluice/http/cache.h>
#include <sluice/http/comp.h>
#include <sluice/proxy/proxy.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_compression(KW_ARGS);
static int kw_filter(KW_ARGS);
static int kw_comp_maxlevel(KW_ARGS);
static int kw_maxcomprate(KW_ARGS);
static int kw_maxcompcpuusage(KW_ARGS);

static const struct cfg_kw comp_cfg_kws[] = {
	{ "compression",        NULL, CFG_SEC_PROXY,  kw_compression },
	{ "filter",             NULL, CFG_SEC_PROXY,  kw_filter },
	{ "tune.comp.maxlevel", NULL, CFG_SEC_GLOBAL, kw_comp_maxlevel },
	{ "maxcomprate",        NULL, CFG_SEC_GLOBAL, kw_maxcomprate },
	{ "maxcompcpuusage",    NULL, CFG_SEC_GLOBAL, kw_maxcompcpuusage },
	{ NULL }
};
CFG_REGISTER(comp_cfg_kws)

static int smp_fetch_res_comp(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx);
static int smp_fetch_res_comp_algo(const struct smp_args *args, struct sample *smp,
                                   struct smp_ctx *ctx);

static const struct smp_fetch_kw comp_fetches[] = {
	{ "res.comp",      smp_fetch_res_comp,      { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_HRSHP },
	{ "res.comp_algo", smp_fetch_res_comp_algo, { 0 }, 0, NULL, SMP_T_STR,  SMP_USE_HRSHP },
	{ NULL }
};
SMP_REGISTER_FETCHES(comp_fetches)

/* ---- algorithms ---- */

static const struct {
	const char *name;    /* configuration and res.comp_algo */
	const char *token;   /* Accept-Encoding and Content-Encoding */
	int wbits;           /* deflateInit2() windowBits: the format */
} comp_algos[COMP_ALGO_MAX] = {
	[COMP_IDENTITY]    = { "identity",    "identity", 0 },
	[COMP_GZIP]        = { "gzip",        "gzip",     MAX_WBITS + 16 },
	[COMP_DEFLATE]     = { "deflate",     "deflate",  MAX_WBITS },
	[COMP_RAW_DEFLATE] = { "raw-deflate", "deflate",  -MAX_WBITS },
};

const char *comp_algo_name(int algo)
{
	return algo > COMP_NONE && algo < COMP_ALGO_MAX ? comp_algos[algo].name : "";
}

const char *comp_algo_token(int algo)
{
	return algo > COMP_NONE && algo < COMP_ALGO_MAX ? comp_algos[algo].token : "";
}

/* ---- configuration ---- */

static struct comp_cfg *cfg_of(struct proxy *px)
{
	if (!px->comp)
		px->comp = calloc(1, sizeof(*px->comp));
	return px->comp;
}

/* HAProxy prepends each algorithm to its list: the last one configured is
 * the first looked at. A repeated one moves to the front, which selects
 * exactly as HAProxy's list with the duplicate does. */
static void algo_push_front(struct comp_cfg *c, int algo)
{
	int i, j;

	for (i = 0; i < c->nalgos && c->algos[i] != algo; i++)
		;
	if (i == c->nalgos)
		c->nalgos++;
	for (j = i; j > 0; j--)
		c->algos[j] = c->algos[j - 1];
	c->algos[0] = (uint8_t)algo;
}

static int kw_comp_algo(struct comp_cfg *c, char **args, int nargs, char *err, size_t errlen)
{
	if (nargs < 3) {
		snprintf(err, errlen, "expects <algorithm>.");
		return -1;
	}
	for (int i = 2; i < nargs; i++) {
		int a;

		for (a = COMP_IDENTITY; a < COMP_ALGO_MAX; a++)
			if (strcmp(args[i], comp_algos[a].name) == 0)
				break;
		if (a == COMP_ALGO_MAX) {
			snprintf(err, errlen, "'%s' is not a supported algorithm.",
			         args[i]);
			return -1;
		}
		algo_push_front(c, a);
	}
	return 0;
}

static int kw_comp_type(struct comp_cfg *c, char **args, int nargs, char *err, size_t errlen)
{
	char **t;

	if (nargs < 3) {
		snprintf(err, errlen, "expects <type>.");
		return -1;
	}
	t = realloc(c->types, sizeof(*t) * (size_t)(c->ntypes + nargs - 2));
	if (!t) {
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	c->types = t;
	for (int i = 2; i < nargs; i++) {
		if (!(c->types[c->ntypes] = strdup(args[i]))) {
			snprintf(err, errlen, "out of memory.");
			return -1;
		}
		c->ntypes++;
	}
	return 0;
}

static int kw_compression(KW_ARGS)
{
	struct comp_cfg *c;

	/* `direction`, `algo-req`, `algo-res`, `type-req`, `type-res` are
	 * HAProxy 2.8's: refused with 2.6's words */
	if (nargs < 2 || (strcmp(args[1], "algo") != 0 && strcmp(args[1], "type") != 0 &&
	                  strcmp(args[1], "offload") != 0)) {
		snprintf(err, errlen, "expects 'algo', 'type' or 'offload'");
		return -1;
	}
	if (!(c = cfg_of(ctx->px))) {
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	if (strcmp(args[1], "algo") == 0)
		return kw_comp_algo(c, args, nargs, err, errlen);
	if (strcmp(args[1], "type") == 0)
		return kw_comp_type(c, args, nargs, err, errlen);
	/* offload: HAProxy ignores words after it; sluice refuses them (a
	 * typo there would otherwise pass unnoticed) */
	if (cfg_no_more_args(args, nargs, 2, err, errlen) < 0)
		return -1;
	if (ctx->section == CFG_SEC_DEFAULTS) {
		cfg_warning(ctx->file, ctx->line, "'compression' : 'offload' ignored in "
		            "'defaults' section.");
		return 0;
	}
	c->offload = 1;
	return 0;
}

/* `filter <name>`: compression is the only filter sluice has. The cache's
 * filter says what is missing; HAProxy's other filters are refused by
 * name. */
static int kw_filter(KW_ARGS)
{
	static const char *const others[] = {
		"trace", "spoe", "fcgi-app", "opentracing", "bwlim-in", "bwlim-out", NULL
	};
	struct comp_cfg *c;

	if (ctx->section == CFG_SEC_DEFAULTS) {
		snprintf(err, errlen, "filter is not allowed in a 'default' section.");
		return -1;
	}
	if (nargs < 2) {
		snprintf(err, errlen, "missing argument for 'filter' in proxy '%s'.",
		         ctx->px->name ? ctx->px->name : "");
		return -1;
	}
	if (strcmp(args[1], "compression") == 0) {
		if (nargs > 2) {
			snprintf(err, errlen, "'compression' : unknown keyword '%s'.", args[2]);
			return -1;
		}
		if (!(c = cfg_of(ctx->px))) {
			snprintf(err, errlen, "out of memory.");
			return -1;
		}
		if (c->filter_line) {
			snprintf(err, errlen, "%s: Proxy supports only one compression filter (the "
			         "first one is at line %d)", ctx->px->name, c->filter_line);
			return -1;
		}
		c->filter_line = ctx->line;
		return 0;
	}
	if (strcmp(args[1], "cache") == 0)
		return cache_filter_kw(ctx, args, nargs, err, errlen);
	for (int i = 0; others[i]; i++) {
		if (strcmp(args[1], others[i]) == 0) {
			snprintf(err, errlen, "'%s' is not implemented (sluice has the 'compression' "
			         "filter only)", args[1]);
			return -1;
		}
	}
	snprintf(err, errlen, "unknown keyword '%s'. Registered keywords : compression", args[1]);
	return -1;
}

/* A whole decimal integer, or -1. */
static long strict_int(const char *s)
{
	char *end;
	long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v > 1000000000L)
		return -1;
	return v;
}

static int kw_comp_maxlevel(KW_ARGS)
{
	long v = nargs == 2 ? strict_int(args[1]) : -1;

	if (v < 1 || v > 9) {
		snprintf(err, errlen, "expects a numeric value between 1 and 9");
		return -1;
	}
	global.comp_maxlevel = (int)v;
	return 0;
}

/* HAProxy 2.6 reads the number with atoi() (a word that is not a number
 * is 0, no limit); sluice wants a number. kB/s: 1024 bytes. */
static int kw_maxcomprate(KW_ARGS)
{
	long v = nargs == 2 ? strict_int(args[1]) : -1;

	if (v < 0 || cfg_no_more_args(args, nargs, 2, err, errlen) < 0) {
		snprintf(err, errlen, "expects an integer argument in kb/s.");
		return -1;
	}
	global.comp_maxrate = (int)v;
	return 0;
}

static int kw_maxcompcpuusage(KW_ARGS)
{
	long v = nargs == 2 ? strict_int(args[1]) : -1;

	if (v < 0 || v > 100) {
		snprintf(err, errlen, "expects an integer argument between 0 and 100.");
		return -1;
	}
	global.comp_maxcpu = (int)v;
	return 0;
}

/* As HAProxy: a proxy starts with the algorithms and types of its defaults
 * section (offload is never taken from there), and its own lines add to
 * them. */
int comp_cfg_inherit(struct proxy *px, const struct proxy *def)
{
	const struct comp_cfg *d = def->comp;
	struct comp_cfg *c;

	if (!d || (!d->nalgos && !d->ntypes))
		return 0;
	if (!(c = cfg_of(px)))
		return -1;
	memcpy(c->algos, d->algos, sizeof(c->algos));
	c->nalgos = d->nalgos;
	if (d->ntypes) {
		c->types = calloc((size_t)d->ntypes, sizeof(*c->types));
		if (!c->types)
			return -1;
		for (int i = 0; i < d->ntypes; i++) {
			if (!(c->types[i] = strdup(d->types[i])))
				return -1;
			c->ntypes++;
		}
	}
	return 0;
}

void comp_cfg_free(struct proxy *px)
{
	struct comp_cfg *c = px->comp;

	if (!c)
		return;
	for (int i = 0; i < c->ntypes; i++)
		free(c->types[i]);
	free(c->types);
	free(c);
	px->comp = NULL;
}

/* ---- Accept-Encoding ---- */

static int is_tchar(unsigned char ch)
{
	/* RFC 9110 section 5.6.2 */
	return isalnum(ch) || (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

int comp_qvalue(const char *p, const char *end)
{
	int q, scale = 100;

	if (p >= end || !isdigit((unsigned char)*p))
		return 1000;
	q = (*p++ - '0') * 1000;
	if (p < end && *p == '.') {
		for (p++; p < end && scale && isdigit((unsigned char)*p); p++, scale /= 10)
			q += (*p - '0') * scale;
	}
	return q > 1000 ? 1000 : q;
}

/* The q-value of one Accept-Encoding element <v> whose token is <toklen>
 * bytes long: the first parameter spelled "q=" (lower case, as HAProxy),
 * else 1. */
static int elem_qvalue(struct ist v, size_t toklen)
{
	const char *p = v.ptr + toklen, *end = v.ptr + v.len;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p != ';')
			return 1000;
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end)
			return 1000;
		if (end - p >= 2 && p[0] == 'q' && p[1] == '=')
			return comp_qvalue(p + 2, end);
		if (end - p == 1 && p[0] == 'q')
			return 1000;   /* "q" and nothing: HAProxy reads past it */
		while (p < end && *p != ';')
			p++;
	}
}

int comp_select(const uint8_t *algos, int nalgos, const struct http_msg *req)
{
	struct http_hdr_iter it;
	struct ist v;
	int best = COMP_NONE, best_q = 0;

	http_hdr_iter_init(&it);
	while (http_hdr_next(req, IST("accept-encoding"), 1, &it, &v)) {
		size_t toklen = 0;
		int q;

		while (toklen < v.len && is_tchar((unsigned char)v.ptr[toklen]))
			toklen++;
		q = elem_qvalue(v, toklen);
		if (q <= best_q)
			continue;
		for (int i = 0; i < nalgos; i++) {
			const char *tok = comp_algos[algos[i]].token;

			if ((v.len && v.ptr[0] == '*') ||
			    (toklen && toklen == strlen(tok) && strncasecmp(v.ptr, tok, toklen) == 0)) {
				best = algos[i];
				best_q = q;
				break;
			}
		}
	}
	if (best != COMP_NONE)
		return best;
	/* identity needs no Accept-Encoding */
	for (int i = 0; i < nalgos; i++)
		if (algos[i] == COMP_IDENTITY)
			return COMP_IDENTITY;
	return COMP_NONE;
}

int comp_ua_refused(const struct http_msg *req)
{
	struct ist ua;

	if (!http_hdr_occ(req, IST("user-agent"), 1, 0, &ua))
		return 0;
	if (ua.len < 9 || memcmp(ua.ptr, "Mozilla/4", 9) != 0)
		return 0;
	/* "Mozilla/4.0 (compatible; MSIE 7.0; ..." and later are fine, MSIE
	 * 6 only with XP SP2 ("SV1"), at HAProxy's fixed offsets */
	if (ua.len < 31 || memcmp(ua.ptr + 25, "MSIE ", 5) != 0 || ua.ptr[30] < '6')
		return 1;
	if (ua.ptr[30] == '6' && (ua.len < 54 || memcmp(ua.ptr + 51, "SV1", 3) != 0))
		return 1;
	return 0;
}

int comp_request(const struct comp_cfg *fe, const struct comp_cfg *be, struct http_msg *req,
                 struct http_edit *e)
{
	const struct comp_cfg *c = be && be->nalgos ? be : fe && fe->nalgos ? fe : NULL;
	int algo;

	if (!c || comp_ua_refused(req))
		return COMP_NONE;
	algo = comp_select(c->algos, c->nalgos, req);
	/* offload: the server must not compress what sluice will; when the
	 * client accepts none of ours (or only the implicit identity) it
	 * keeps its header */
	if (algo != COMP_NONE && ((be && be->offload) || (fe && fe->offload)) &&
	    http_hdr_find(req, IST("accept-encoding"), 0) >= 0)
		http_hdr_del(e, IST("accept-encoding"), HTTP_MATCH_STR, NULL, NULL);
	return algo;
}

/* ---- the response ---- */

static int prefix_ieq(struct ist v, const char *p)
{
	size_t n = strlen(p);

	return v.len >= n && strncasecmp(v.ptr, p, n) == 0;
}

static int content_type_ok(const struct comp_cfg *fe, const struct comp_cfg *be,
                           const struct http_msg *res)
{
	const struct comp_cfg *c = be && be->ntypes ? be : fe && fe->ntypes ? fe : NULL;
	struct ist ct;

	if (!http_hdr_occ(res, IST("content-type"), 1, 0, &ct))
		return !c;   /* no type: only when no list restricts them */
	if (prefix_ieq(ct, "multipart"))
		return 0;
	if (!c)
		return 1;
	for (int i = 0; i < c->ntypes; i++)
		if (prefix_ieq(ct, c->types[i]))
			return 1;
	return 0;
}

static int etag_ok(const struct http_msg *res)
{
	struct ist v;
	int n = http_hdr_count(res, IST("etag"), 0);

	if (n == 0)
		return 1;
	if (n > 1 || !http_hdr_occ(res, IST("etag"), 1, 0, &v))
		return 0;
	if (v.len >= 2 && v.ptr[0] == 'W' && v.ptr[1] == '/')
		return 1;
	return v.len >= 2 && v.ptr[0] == '"' && v.ptr[v.len - 1] == '"';
}

int comp_response_ok(const struct comp_cfg *fe, const struct comp_cfg *be, int algo,
                     int req_v11, enum http_meth meth, int empty, const struct http_msg *res)
{
	struct http_hdr_iter it;
	struct ist v;

	if (algo == COMP_NONE || !req_v11 || !(res->flags & HTTP_F_VER_11) ||
	    meth == HTTP_METH_HEAD)
		return 0;
	if (res->status < 200 || res->status > 203)
		return 0;
	if (empty || !(res->flags & HTTP_F_XFER_LEN) ||
	    (res->flags & (HTTP_F_BODYLESS | HTTP_F_TUNNEL)) ||
	    ((res->flags & HTTP_F_HAS_CL) && !res->content_length))
		return 0;
	if (http_hdr_find(res, IST("content-encoding"), 0) >= 0)
		return 0;
	/* a transfer coding other than chunked (which HAProxy refuses with a
	 * 502) would be lost when the body is framed again */
	http_hdr_iter_init(&it);
	while (http_hdr_next(res, IST("transfer-encoding"), 1, &it, &v))
		if (v.len != 7 || strncasecmp(v.ptr, "chunked", 7) != 0)
			return 0;
	http_hdr_iter_init(&it);
	while (http_hdr_next(res, IST("cache-control"), 1, &it, &v))
		if (v.len == 12 && strncasecmp(v.ptr, "no-transform", 12) == 0)
			return 0;
	return etag_ok(res) && content_type_ok(fe, be, res);
}

int comp_response_edit(struct http_edit *e, int algo)
{
	struct http_msg *m = e->msg;
	int idx = http_hdr_find(m, IST("etag"), 0);
	int rc;

	if (idx >= 0 && !(m->hdrs[idx].value.len >= 2 && m->hdrs[idx].value.ptr[0] == 'W' &&
	                  m->hdrs[idx].value.ptr[1] == '/')) {
		/* RFC 9110 section 8.8.3.3: the compressed bytes differ, the
		 * representation is only weakly the same */
		struct ist old = m->hdrs[idx].value;
		char *w = http_edit_alloc(e, old.len + 2);

		if (!w)
			return HTTP_EDIT_ENOROOM;
		memcpy(w, "W/", 2);
		memcpy(w + 2, old.ptr, old.len);
		m->hdrs[idx].value = (struct ist){ w, old.len + 2 };
		e->flags |= HTTP_EDIT_F_HEADERS;
	}
	http_hdr_del(e, IST("content-length"), HTTP_MATCH_STR, NULL, NULL);
	m->flags &= ~(HTTP_F_HAS_CL | HTTP_F_CL_MERGED | HTTP_F_CL_DROP);
	m->content_length = 0;
	rc = http_hdr_add(e, IST("vary"), IST("Accept-Encoding"));
	if (rc < 0)
		return rc;
	if (algo != COMP_IDENTITY) {
		const char *tok = comp_algos[algo].token;

		rc = http_hdr_add(e, IST("content-encoding"), (struct ist){ tok, strlen(tok) });
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- maxcomprate ---- */

/* The input of every compressor of the process, per second (core/freq.c:
 * lock-free, any thread). */
void comp_rate_add(uint64_t now_ms, uint64_t bytes)
{
	freq_ctr_add(&global.comp_rate, 1000, (uint32_t)now_ms,
	             bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes);
}

int comp_rate_exceeded(uint64_t now_ms)
{
	if (!global.comp_maxrate)
		return 0;
	return freq_ctr_read(&global.comp_rate, 1000, (uint32_t)now_ms) >
	       (uint64_t)global.comp_maxrate * 1024;
}

/* ---- streams ---- */

struct comp_ctx {
	int algo;
	int zinit;          /* z is a live deflate stream */
	int finished;       /* the end of the stream is written */
	int sync_due;       /* a sync flush stopped on a full output */
	int unflushed;      /* input taken since the last complete flush */
	struct buffer in;   /* payload not compressed yet */
	uint64_t bytes_in, bytes_out;
	z_stream z;
};

struct comp_ctx *comp_ctx_new(int algo, int level)
{
	struct comp_ctx *c;

	if (algo <= COMP_NONE || algo >= COMP_ALGO_MAX)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->algo = algo;
	if (buf_alloc(&c->in) < 0) {
		free(c);
		return NULL;
	}
	if (algo != COMP_IDENTITY) {
		/* HAProxy's defaults: a 32 KB window, memLevel 8 */
		if (deflateInit2(&c->z, level, Z_DEFLATED, comp_algos[algo].wbits, 8,
		                 Z_DEFAULT_STRATEGY) != Z_OK) {
			buf_release(&c->in);
			free(c);
			return NULL;
		}
		c->zinit = 1;
	}
	return c;
}

void comp_ctx_free(struct comp_ctx *c)
{
	if (!c)
		return;
	if (c->zinit)
		deflateEnd(&c->z);
	buf_release(&c->in);
	free(c);
}

struct buffer *comp_ctx_input(struct comp_ctx *c)
{
	return &c->in;
}

size_t comp_ctx_pending(const struct comp_ctx *c)
{
	/* a flush that stopped on a full output still holds bytes in zlib
	 * (until the end of the stream, which writes everything) */
	if (c->finished)
		return 0;
	return c->in.data + (c->sync_due ? 1 : 0);
}

int comp_ctx_finished(const struct comp_ctx *c)
{
	return c->finished;
}

void comp_ctx_counts(const struct comp_ctx *c, uint64_t *in, uint64_t *out)
{
	*in = c->bytes_in;
	*out = c->bytes_out;
}

static int feed_identity(struct comp_ctx *c, struct buffer *out, int mode)
{
	size_t n = c->in.data < buf_room(out) ? c->in.data : buf_room(out);

	if (n) {
		memcpy(buf_tail(out), buf_head(&c->in), n);
		out->data += n;
		buf_consume(&c->in, n);
		c->bytes_in += n;
		c->bytes_out += n;
	}
	if (mode == COMP_FEED_FINISH && !c->in.data) {
		c->finished = 1;
		return 1;
	}
	return n > 0;
}

int comp_ctx_feed(struct comp_ctx *c, struct buffer *out, int mode)
{
	size_t room, used, made;
	int flush, rc;

	if (c->finished)
		return 0;
	if (!out->area && buf_alloc(out) < 0)
		return 0;
	buf_realign(out);
	if (c->algo == COMP_IDENTITY)
		return feed_identity(c, out, mode);
	if (!c->in.data && mode != COMP_FEED_FINISH && !c->sync_due &&
	    (mode == COMP_FEED_MORE || !c->unflushed))
		return 0;   /* nothing to compress, nothing to flush */
	room = buf_room(out);
	if (!room)
		return 0;
	flush = mode == COMP_FEED_FINISH ? Z_FINISH :
	        (mode == COMP_FEED_SYNC || c->sync_due) ? Z_SYNC_FLUSH : Z_NO_FLUSH;
	c->z.next_in = (Bytef *)buf_head(&c->in);
	c->z.avail_in = (uInt)c->in.data;
	c->z.next_out = (Bytef *)buf_tail(out);
	c->z.avail_out = (uInt)room;
	rc = deflate(&c->z, flush);
	if (rc == Z_STREAM_ERROR)
		return -1;
	used = c->in.data - c->z.avail_in;
	made = room - c->z.avail_out;
	buf_consume(&c->in, used);
	out->data += made;
	c->bytes_in += used;
	c->bytes_out += made;
	if (used)
		c->unflushed = 1;
	if (flush == Z_SYNC_FLUSH) {
		c->sync_due = !(c->z.avail_out && !c->z.avail_in);
		if (!c->sync_due)
			c->unflushed = 0;
	}
	if (rc == Z_STREAM_END) {
		c->finished = 1;
		c->sync_due = 0;
	}
	return used || made || c->finished;
}

/* ---- fetches ---- */

static int smp_fetch_res_comp(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, ctx->res_comp_algo != NULL);
	return 1;
}

static int smp_fetch_res_comp_algo(const struct smp_args *args, struct sample *smp,
                                   struct smp_ctx *ctx)
{
	if (!ctx->res_comp_algo)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, ctx->res_comp_algo, strlen(ctx->res_comp_algo));
	return 1;
}
