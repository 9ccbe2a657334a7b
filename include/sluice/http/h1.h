/* Strict HTTP/1.0 and HTTP/1.1 parsing (RFC 9110, RFC 9112), written for
 * sluice: no allocation, no per-byte copying, the whole head parsed in one
 * pass once it is complete.
 */
#ifndef SLUICE_HTTP_H1_H
#define SLUICE_HTTP_H1_H

#include <stddef.h>
#include <stdint.h>
#include <sluice/http/msg.h>

/* Parser options (relaxations HAProxy offers with
 * `option accept-invalid-http-request|response`). */
#define H1_O_ACCEPT_INVALID  0x01
/* Accept a bare LF as the end of a head line (RFC 9112 section 2.2 lets a
 * recipient do so; HAProxy does by default). The streams pass it unless
 * configured otherwise; without it a bare LF is a 400. */
#define H1_O_BARE_LF         0x02
/* Accept an HTTP/1.1 request without Host (RFC 9112 section 3.2 says 400;
 * HAProxy 2.6 forwards it, and monitoring scripts rely on that). Several
 * Host fields or an invalid one stay errors. */
#define H1_O_HOST_OPTIONAL   0x04
/* A request version HTTP/d.d above 1.1 is read as HTTP/1.1 instead of a
 * 505 (HAProxy 2.6 does so); below 1.0 stays an error. The same for a
 * response (health checks: HAProxy 2.6 reads "HTTP/2.0 200" as a 200). */
#define H1_O_ANY_VERSION     0x08

/* Result of h1_parse_head(). */
enum h1_result {
	H1_INCOMPLETE = 0,   /* need more bytes: the head is not complete yet */
	H1_OK = 1,           /* msg filled; msg->head_len bytes consumed */
	H1_ERROR = -1,       /* invalid: see err->status and err->reason */
};

struct h1_error {
	int status;          /* 400, 414, 431, 505 for requests; 502 for responses */
	const char *reason;  /* static text naming the rule broken, for the log */
	size_t offset;       /* byte offset of the problem in the input */
};

/* Parses the head (start line + headers + empty line) at the start of <buf>
 * (<len> bytes available). <msg->hdrs>/<msg->maxhdrs> must be set by the
 * caller; <is_request> selects request or response parsing; for a response,
 * <req_meth> is the method of the request it answers (HEAD and CONNECT
 * change the body rules). <max_head> bounds the head size (tune.bufsize minus
 * reserve): a longer start line gives 414 (request) and longer headers 431.
 * Returns H1_INCOMPLETE, H1_OK or H1_ERROR. Never reads past <len>.
 * Empty lines before a request line are skipped (RFC 9112 section 2.2) and
 * counted in head_len. The verdict only depends on the bytes read: an error
 * stays the same error (status, reason, offset) when more bytes arrive, and
 * a complete head stays identical. <err> may be NULL. */
enum h1_result h1_parse_head(const char *buf, size_t len, int is_request,
                             enum http_meth req_meth, size_t max_head,
                             unsigned int opts, struct http_msg *msg,
                             struct h1_error *err);

/* Incremental chunked-body decoder (RFC 9112 section 7.1). Feed it bytes;
 * it reports data spans to forward and where the body ends. */
enum h1_chunk_state {
	H1C_SIZE = 0, H1C_EXT, H1C_SIZE_LF, H1C_DATA, H1C_DATA_CR, H1C_DATA_LF,
	H1C_TRAILERS, H1C_DONE, H1C_ERROR,
};

/* Bounds of the chunked decoder. A chunk size has at most 15 hex digits
 * (leading zeros included), so it never overflows. */
#define H1_CHUNK_SIZE_DIGITS_MAX  15
#define H1_CHUNK_EXT_MAX          4096    /* bytes of extensions on one size line */
#define H1_CHUNK_TRAILERS_MAX     16384   /* bytes of trailer section, final CRLF included */

/* h1_chunk.opts */
#define H1C_O_STOP_AFTER_DATA  0x01  /* return right after each data span, so that
                                      * every payload span is reported (callers that
                                      * re-frame loop until all is consumed) */

struct h1_chunk {
	enum h1_chunk_state st;
	uint64_t remaining;      /* data bytes left in the current chunk */
	uint64_t size_digits;
	size_t trailer_len;      /* bytes of trailers seen (bounded) */
	int trailer_line_len;    /* bytes of the current trailer line so far */
	const char *reason;      /* on H1C_ERROR */
	unsigned int opts;       /* H1C_O_*, set by the caller after h1_chunk_init() */
	unsigned int sub;        /* position inside a size line or trailer line */
	size_t ext_len;          /* bytes of the current size line after the digits */
	uint64_t body_len;       /* payload bytes decoded so far (framing excluded) */
};

void h1_chunk_init(struct h1_chunk *c);

/* Consumes up to <len> bytes of <buf>. Returns the number of bytes
 * consumed (all of them unless the body ended, an error occurred, or
 * H1C_O_STOP_AFTER_DATA stopped after a data span). On H1C_DONE the
 * return value ends right after the final CRLF (what follows belongs to the
 * next message); on H1C_ERROR, buf[return value] is the offending byte.
 * Once DONE or ERROR, further calls consume nothing.
 * <data_off>/<data_len>, if not NULL, receive the first span of payload
 * data found (0/0 if none; c->body_len counts all of them); the caller
 * forwards the consumed bytes verbatim (chunk framing kept) or re-frames
 * them (then with H1C_O_STOP_AFTER_DATA). Any split of the input gives the
 * same data, final state and reason. */
size_t h1_chunk_feed(struct h1_chunk *c, const char *buf, size_t len,
                     size_t *data_off, size_t *data_len);

enum http_meth h1_meth_from_token(const char *p, size_t len);

/* Next member of a comma-separated list (RFC 9110 section 5.6.1) starting at
 * *pp, without its surrounding OWS; *pp is left on the comma or at <end>
 * (the caller steps over the comma). */
struct ist h1_list_elem(const char **pp, const char *end);

/* Case-insensitive header name comparison; <lower> is NUL-terminated and
 * already lower case. */
int h1_name_eq(struct ist name, const char *lower);

#endif
