/* HTTP/1 serialisation of the message model (DESIGN: "the outgoing mux
 * serialises it"): the head of a parsed and possibly edited struct
 * http_msg, with the connection-management changes the caller asks for,
 * and chunked framing for bodies the caller re-frames.
 *
 * Nothing is allocated; every function writes into the caller's memory and
 * returns the number of bytes written, or H1_OUT_NOROOM (nothing useful was
 * written: retry with more room).
 */
#ifndef SLUICE_HTTP_H1_OUT_H
#define SLUICE_HTTP_H1_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sluice/core/buf.h>
#include <sluice/http/msg.h>

#define H1_OUT_NOROOM  (-1)

/* h1_out_head() flags.
 *
 * Connection options: with CONN_CLOSE, CONN_KA or CONN_SCRUB, the "close"
 * and "keep-alive" options are removed from the Connection fields (which
 * keep their place; one left empty is dropped) and CONN_CLOSE/CONN_KA
 * append "Connection: close" / "Connection: keep-alive" after the last
 * field. This is HAProxy's behaviour between HTTP/1 peers, where other
 * hop-by-hop fields are forwarded.
 *
 * HOP_BY_HOP removes what RFC 9110 section 7.6.1 calls hop-by-hop:
 * Connection (but its "upgrade" option under TUNNEL), Keep-Alive,
 * Proxy-Connection, TE, Trailer and Upgrade (kept under TUNNEL).
 * Transfer-Encoding goes only with DROP_TE or ADD_CHUNKED: it frames the
 * body being forwarded. CONN_NAMED removes the fields named by Connection
 * options, except Content-Length, Transfer-Encoding and Host: a client
 * must not be able to change how the next hop frames or routes the message
 * by naming them. Naming is matched against the fields present at
 * serialisation, rule-added ones included; to spare those, strip at ingress
 * with http_hdr_del_conn_named() (msgedit.h) before the rules run.
 *
 * Content-Length: the parser's HTTP_F_CL_DROP removes every Content-Length
 * field, HTTP_F_CL_MERGED writes the first one with msg->content_length and
 * drops the others (RFC 9112 section 6.3). */
#define H1O_F_CONN_CLOSE   0x0001  /* append "Connection: close" */
#define H1O_F_CONN_KA      0x0002  /* append "Connection: keep-alive" */
#define H1O_F_CONN_SCRUB   0x0004  /* only remove close/keep-alive options */
#define H1O_F_HOP_BY_HOP   0x0008  /* remove the hop-by-hop fields listed above */
#define H1O_F_CONN_NAMED   0x0010  /* remove the fields Connection names */
#define H1O_F_TUNNEL       0x0020  /* keep Upgrade and Connection: upgrade (101, websocket) */
#define H1O_F_DROP_TE      0x0040  /* remove Transfer-Encoding: the caller re-frames */
#define H1O_F_ADD_CHUNKED  0x0080  /* remove Content-Length and Transfer-Encoding, append
                                    * "Transfer-Encoding: chunked" */
#define H1O_F_ADD_CL       0x0100  /* write Content-Length: msg->content_length in place
                                    * of the first one (or last), drop the others */
#define H1O_F_VERSION_11   0x0200  /* write HTTP/1.1 whatever msg->version says */
#define H1O_F_CASE_ADJUST  0x0400  /* field names as h1-case-adjust says (h1_case.h) */

/* Writes the head of <msg>: start line, live fields in order, final CRLF.
 * A msg->version other than HTTP/1.x (empty, or "HTTP/2.0" for a message
 * built from HTTP/2) is written HTTP/1.1, and an HTTP_F_ABS_URI uri in
 * origin form (its path and query).
 * Returns the head length or H1_OUT_NOROOM. */
ssize_t h1_out_head(const struct http_msg *msg, unsigned int flags, char *out, size_t room);

/* Same, appended to <b>'s data. */
ssize_t h1_out_head_buf(const struct http_msg *msg, unsigned int flags, struct buffer *b);

/* Chunked framing (RFC 9112 section 7.1). */

/* "<size in hex>\r\n" for a chunk of <size> > 0 bytes. */
ssize_t h1_out_chunk_size(char *out, size_t room, uint64_t size);
/* The size line, <len> bytes of <data> and the CRLF that ends the chunk
 * (<len> > 0). */
ssize_t h1_out_chunk(char *out, size_t room, const char *data, size_t len);
/* The CRLF that ends a chunk's data, when data was written separately. */
ssize_t h1_out_chunk_end(char *out, size_t room);
/* "0\r\n", the live fields of <trailers> (may be NULL), "\r\n". */
ssize_t h1_out_last_chunk(char *out, size_t room, const struct http_hdr *trailers,
                          int ntrailers);

#endif
