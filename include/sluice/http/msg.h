/* The internal HTTP message model (DESIGN: "HTTP/1 and HTTP/2 both convert
 * to one internal message model"). A message is parsed once into a start
 * line, a list of headers and a body description; rules read and edit the
 * model and never see wire syntax; the outgoing mux serialises it.
 *
 * Strings are `struct ist` spans. After parsing they point into the input
 * buffer, which must not move while the head is processed; strings created by
 * edits live in the message's arena (added in the integration step).
 */
#ifndef SLUICE_HTTP_MSG_H
#define SLUICE_HTTP_MSG_H

#include <stddef.h>
#include <stdint.h>

struct ist {
	const char *ptr;
	size_t len;
};

#define IST(s) ((struct ist){ (s), sizeof(s) - 1 })

enum http_meth {
	HTTP_METH_OTHER = 0,   /* any other valid token: see msg->method */
	HTTP_METH_GET, HTTP_METH_HEAD, HTTP_METH_POST, HTTP_METH_PUT,
	HTTP_METH_DELETE, HTTP_METH_CONNECT, HTTP_METH_OPTIONS, HTTP_METH_TRACE,
	HTTP_METH_PATCH,
};

#define HTTP_MAX_HDRS_DEFAULT 101   /* tune.http.maxhdr default, as HAProxy */

/* msg->flags */
#define HTTP_F_VER_11        0x0001  /* HTTP/1.1 (else 1.0) */
#define HTTP_F_HAS_CL        0x0002  /* Content-Length present (valid) */
#define HTTP_F_CHUNKED       0x0004  /* Transfer-Encoding ends with chunked */
#define HTTP_F_CONN_CLOSE    0x0008  /* Connection: close */
#define HTTP_F_CONN_KA       0x0010  /* Connection: keep-alive */
#define HTTP_F_CONN_UPGRADE  0x0020  /* Connection: upgrade */
#define HTTP_F_UPGRADE       0x0040  /* Upgrade header present */
#define HTTP_F_EXPECT_100    0x0080  /* Expect: 100-continue */
#define HTTP_F_BODYLESS      0x0100  /* no body by protocol (HEAD resp, 1xx/204/304, GET without CL/TE) */
#define HTTP_F_XFER_LEN      0x0200  /* body length known (CL or chunked), else until close */
#define HTTP_F_HAS_TE        0x0400  /* a Transfer-Encoding header was present */
#define HTTP_F_CL_MERGED     0x0800  /* several identical Content-Length values (lines or
                                      * list) were merged: emit one field with
                                      * content_length when forwarding */
#define HTTP_F_CL_DROP       0x1000  /* response with both TE and CL: TE wins, CL ignored
                                      * and must be removed before forwarding
                                      * (RFC 9112 section 6.3) */
#define HTTP_F_TUNNEL        0x2000  /* response: 2xx to CONNECT or 101, the connection
                                      * leaves HTTP after this head (101 only if
                                      * the request asked for an upgrade) */
#define HTTP_F_ABS_URI       0x4000  /* request from HTTP/2: uri is the absolute form
                                      * built from :scheme, :authority and :path
                                      * (what url/path/base fetch, as HAProxy
                                      * 2.6); an HTTP/1 serialiser writes the
                                      * origin form (path and query) */

/* Body rules, in the order a mux should test them:
 *  BODYLESS            no body at all, whatever CL/TE say (content_length is
 *                      then meaningless even if HAS_CL is set, e.g. a 304);
 *  CHUNKED             chunked body (XFER_LEN set, see h1_chunk_feed());
 *  HAS_CL              exactly content_length bytes (XFER_LEN set);
 *  none of them        response body delimited by the connection close
 *                      (XFER_LEN clear). Requests always have XFER_LEN;
 *                      from HTTP/2, XFER_LEN alone means the body ends with
 *                      the stream (END_STREAM): an HTTP/1 side chunks it. */

/* A field whose name is empty was deleted by an edit and keeps its slot
 * (msgedit.h, http_hdr_is_deleted()): every reader of hdrs[] skips it. */
struct http_hdr {
	struct ist name;    /* as received (case kept); compare case-insensitively */
	struct ist value;   /* leading/trailing OWS removed */
};

struct http_msg {
	int is_request;
	/* request line (for a response, meth is the request's method, method empty) */
	enum http_meth meth;
	struct ist method;
	struct ist uri;
	/* status line */
	int status;
	struct ist reason;
	/* both */
	struct ist version;          /* "HTTP/1.1" */
	unsigned int flags;
	uint64_t content_length;     /* valid when HTTP_F_HAS_CL */
	int nhdrs;
	int maxhdrs;                 /* capacity of hdrs[]: one more field line is an
	                              * error (400/502). HAProxy's tune.http.maxhdr
	                              * counts the start line too, so size it
	                              * maxhdr - 1 to match HAProxy exactly */
	struct http_hdr *hdrs;       /* caller-provided array */
	size_t head_len;             /* bytes of the head, final CRLF included */
};

/* Copies <src> (its live fields) into <dst>, every string into
 * area[0..size): <dst> keeps its own hdrs/maxhdrs array. Returns the bytes
 * of <area> used (also dst->head_len), or -1 when it does not fit. */
#include <sys/types.h>
ssize_t http_msg_copy(struct http_msg *dst, const struct http_msg *src, char *area, size_t size);

#endif
