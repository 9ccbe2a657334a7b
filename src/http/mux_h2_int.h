/* What the two HTTP/2 muxes share (mux_h2.c for clients, mux_h2_back.c for
 * servers; implemented in mux_h2_util.c): the payload a stream holds until
 * its sluice stream takes it, trailers kept as field lines, and moving an
 * engine's output to its socket. Owner thread only, like the muxes. */
#ifndef SLUICE_HTTP_MUX_H2_INT_H
#define SLUICE_HTTP_MUX_H2_INT_H

#include <stddef.h>
#include <sluice/core/buf.h>
#include <sluice/http/msg.h>

struct conn;
struct h2c;

/* Appends <len> bytes of DATA payload to a stream's <rx>, which grows (a
 * heap block) up to what a peer may send in <window> bytes of stream
 * window, or the default 65535 it may use before our SETTINGS, plus one
 * buffer of slack. Returns 0, or -1 beyond that (the peer broke flow
 * control) or when memory is short. */
int h2m_rx_put(struct buffer *rx, const char *p, size_t len, size_t window);

/* Moves what <rx> holds into the channel <chan>, as far as it has room.
 * Returns the bytes moved. */
size_t h2m_rx_move(struct buffer *rx, struct buffer *chan);

/* The live fields of <msg> as "name: value" CRLF lines in a heap block
 * that replaces *out (nothing when there are none). 0, or -1 (memory). */
int h2m_fields_to_lines(const struct http_msg *msg, char **out, size_t *len);

/* Field lines back into <h> (spans into <p>): at most <max>; the count. */
int h2m_lines_to_fields(const char *p, size_t len, struct http_hdr *h, int max);

/* Moves what the engine <h2> has to send into <tx> (when <pull>) and sends
 * <tx> on <c>, a few rounds. Returns 1 on progress, 0, or -1 on a socket
 * error. An emptied <tx> goes back to the pool. */
int h2m_write(struct conn *c, struct h2c *h2, struct buffer *tx, int pull);

#endif
