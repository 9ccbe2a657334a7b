/* HTTP checks toward a server that speaks HTTP/2 (`proto h2`), as HAProxy
 * 2.6 makes them: the check's request goes as one HTTP/2 stream, after the
 * preface and our SETTINGS, on the check's own connection; the response
 * comes back as HTTP/1 text (status line, fields, the DATA payload after
 * them), so that the same verdict (hchk_reply_eval()) judges it. The
 * stream's END_STREAM is the reply's end, as a close is for HTTP/1.
 * Owner thread of the check only; no I/O here, the check moves the bytes. */
#ifndef SLUICE_PROXY_CHECK_H2_H
#define SLUICE_PROXY_CHECK_H2_H

#include <stddef.h>
#include <sluice/core/buf.h>

struct chk_h2;

/* A session for the request <req>/<req_len> (HTTP/1 text, as the check
 * renders it). Its first bytes (preface, SETTINGS) are added to <tx>; the
 * request follows the server's SETTINGS. NULL when the request cannot be
 * read or memory is short. */
struct chk_h2 *chk_h2_new(const char *req, size_t req_len, struct buffer *tx);

/* The server's bytes <p>/<len>: the reply goes into <rx> as HTTP/1 text
 * (as far as it has room; the rest is dropped: the verdict is bounded by
 * the buffer as for HTTP/1), what the session must answer (SETTINGS
 * acknowledgement, window updates) into <tx>. Returns 1 when the reply
 * ended (END_STREAM, or the stream or the connection failed: *failed
 * set), 0 to read more. */
int chk_h2_input(struct chk_h2 *h, const char *p, size_t len, struct buffer *rx,
                 struct buffer *tx, int *failed);

void chk_h2_free(struct chk_h2 *h);

#endif
