/* HTTP response compression (HAProxy 2.6's `compression` filter).
 *
 * Three parts, all owned by src/http/comp.c:
 *
 *  - configuration: `compression algo|type|offload` per proxy (struct
 *    comp_cfg, inherited from defaults), `filter compression`, and the
 *    global `tune.comp.maxlevel`, `maxcomprate`, `maxcompcpuusage`;
 *  - decisions, pure functions over the message model: which algorithm a
 *    request's Accept-Encoding accepts (comp_request()), whether a response
 *    may be compressed (comp_response_ok()), and the head edits of a
 *    compressed response (comp_response_edit());
 *  - streaming (struct comp_ctx): zlib state and a staging buffer, allocated
 *    only for a response being compressed and freed with it; payload goes
 *    from the staging buffer into the response channel compressed, flushed
 *    (Z_SYNC_FLUSH) whenever the server has nothing more for now, so that
 *    the client sees progress while the server pauses.
 *
 * Where both the frontend and the backend configure compression, HAProxy
 * 2.6's rules apply: the backend's algorithms if it has any, else the
 * frontend's; the backend's types if it has any, else the frontend's;
 * offload if either says so.
 *
 * Configuration on one thread; a comp_ctx belongs to its stream's thread.
 */
#ifndef SLUICE_HTTP_COMP_H
#define SLUICE_HTTP_COMP_H

#include <stddef.h>
#include <stdint.h>
#include <sluice/core/buf.h>
#include <sluice/http/msg.h>
#include <sluice/http/msgedit.h>

enum comp_algo {
	COMP_NONE = 0,
	COMP_IDENTITY,
	COMP_GZIP,
	COMP_DEFLATE,       /* zlib format, "deflate" token */
	COMP_RAW_DEFLATE,   /* raw deflate, also the "deflate" token */
	COMP_ALGO_MAX,
};

struct comp_cfg {
	/* in HAProxy's list order: the algorithm configured last comes first
	 * (it answers "*" and wins a token two algorithms share); each at
	 * most once */
	uint8_t algos[COMP_ALGO_MAX];
	int nalgos;
	char **types;       /* `compression type`, prefixes (case-insensitive) */
	int ntypes;
	int offload;
	int filter_line;    /* line of `filter compression`, 0: none */
};

struct proxy;

/* Configuration name ("gzip") and Content-Encoding token ("gzip") of an
 * algorithm. */
const char *comp_algo_name(int algo);
const char *comp_algo_token(int algo);

/* Defaults inheritance and release of a proxy's settings. */
int comp_cfg_inherit(struct proxy *px, const struct proxy *def);
void comp_cfg_free(struct proxy *px);

/* ---- decisions ---- */

/* A q-value as HAProxy reads it (RFC 9110 section 12.4.2): 0..1000 for
 * 0..1; anything that is not a digit counts as 1, more than 1 as 1. */
int comp_qvalue(const char *p, const char *end);

/* The algorithm of <algos> (HAProxy's list order) that the Accept-Encoding
 * fields of <req> accept: the element with the highest q-value wins (the
 * first one listed among equals), "*" stands for the first algorithm, q=0
 * refuses; identity, when configured, is taken when nothing else is.
 * Returns COMP_NONE when none. */
int comp_select(const uint8_t *algos, int nalgos, const struct http_msg *req);

/* Whether the User-Agent of <req> is one of the old "Mozilla/4" browsers
 * that mishandle compressed responses (all but MSIE 6 SP2 and MSIE 7+). */
int comp_ua_refused(const struct http_msg *req);

/* The request's side, once every http-request rule ran: the algorithm
 * chosen (COMP_NONE: none), and Accept-Encoding removed under `compression
 * offload` when one was chosen. <fe>/<be> may be NULL. */
int comp_request(const struct comp_cfg *fe, const struct comp_cfg *be, struct http_msg *req,
                 struct http_edit *e);

/* Whether the response <res> to a request that chose <algo> is compressed
 * (HAProxy 2.6's conditions). <req_v11>: the request was HTTP/1.1 or
 * above; <meth>: its method; <empty>: the body is known to be empty (an
 * HTTP/2 server ended the stream with the head). */
int comp_response_ok(const struct comp_cfg *fe, const struct comp_cfg *be, int algo,
                     int req_v11, enum http_meth meth, int empty, const struct http_msg *res);

/* The head of a compressed response: no Content-Length, a strong ETag made
 * weak, "Vary: Accept-Encoding" and "Content-Encoding" (but for identity)
 * appended. The sending mux frames the body (chunked to HTTP/1, DATA frames
 * to HTTP/2). Returns 0, or a negative HTTP_EDIT_* error. */
int comp_response_edit(struct http_edit *e, int algo);

/* maxcomprate: counts <bytes> given to a compressor at <now_ms>
 * (monotonic), and says whether the rate over the last second is above the
 * limit, when there is one (then no new response is compressed, as in
 * HAProxy 2.6). Any thread. */
void comp_rate_add(uint64_t now_ms, uint64_t bytes);
int comp_rate_exceeded(uint64_t now_ms);

/* ---- streaming ---- */

struct comp_ctx;

/* comp_feed() modes */
#define COMP_FEED_MORE    0   /* more input follows soon: no flush */
#define COMP_FEED_SYNC    1   /* the input pauses: flush what was given */
#define COMP_FEED_FINISH  2   /* the input ended: end the stream */

/* A context for <algo> at <level>, its staging buffer empty (taken from the
 * thread's pool at the first use). NULL when out of memory. */
struct comp_ctx *comp_ctx_new(int algo, int level);
void comp_ctx_free(struct comp_ctx *c);
/* The staging buffer that receives the payload to compress (its area is
 * allocated on demand: NULL when out of memory). */
struct buffer *comp_ctx_input(struct comp_ctx *c);
/* Non-zero while bytes given have not all come out: some wait in the
 * staging buffer, or a flush stopped on a full output. */
size_t comp_ctx_pending(const struct comp_ctx *c);
/* Compresses the staging buffer into <out>'s room. Returns 1 if anything
 * moved, 0 if not, -1 on a zlib error. */
int comp_ctx_feed(struct comp_ctx *c, struct buffer *out, int mode);
/* Whether the compressed stream ended (COMP_FEED_FINISH fully written). */
int comp_ctx_finished(const struct comp_ctx *c);
/* Bytes in and out so far. */
void comp_ctx_counts(const struct comp_ctx *c, uint64_t *in, uint64_t *out);

#endif
