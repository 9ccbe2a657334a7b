/* The HTTP/2 mux on the client side (DESIGN: "Connection layers"): an
 * HTTP/2 connection from a client, its frames handled by the h2c engine
 * (h2c.h), each of its streams a sluice stream with its own transaction,
 * rules, queue slot and log line.
 *
 * A connection becomes HTTP/2 in its first stream (stream_http.c) once the
 * accept, the PROXY header, the TLS handshake and the tcp-request
 * connection/session rules are done: by `proto h2` on its bind, by ALPN
 * "h2", or by the HTTP/2 preface on a clear HTTP listener. That stream
 * hands the connection over (h2_front_takeover()) and ends without a log
 * line; the connection's task reads, writes and keeps its timeouts from
 * then on.
 *
 * Between an HTTP/2 stream and its sluice stream, the message model flows
 * as it does with the HTTP/1 mux (mux_h1.h): the request head is put in
 * the stream's request channel, DATA payload follows it there as the
 * channel drains (flow control: the stream window is one channel's worth,
 * reopened as payload moves), and the response leaves the response channel
 * as the connection's task pulls it into DATA frames.
 *
 * Owner thread only: a connection and its streams live on the thread that
 * accepted the connection.
 */
#ifndef SLUICE_HTTP_MUX_H2_H
#define SLUICE_HTTP_MUX_H2_H

#include <stddef.h>
#include <stdint.h>
#include <sluice/core/buf.h>
#include <sluice/http/msg.h>

struct stream;
struct h2s;

/* The HTTP/2 connection preface (RFC 9113 section 3.4). */
#define H2_PREFACE      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN  24

/* Whether the first <len> bytes of <p> are the preface (1), a beginning of
 * it (0: wait for more), or something else (-1). */
int h2_preface_match(const char *p, size_t len);

/* Takes stream <s>'s client connection (and the bytes its HTTP/1 mux read
 * already) into a new HTTP/2 connection. The stream must then end without
 * logging (stream_conn_given()). Returns 0, or -1 (no memory: the stream
 * closes the connection). */
int h2_front_takeover(struct stream *s);

struct h2c_settings;
/* The settings of tune.h2.* (zeros: h2c's defaults). */
void h2_tune_get(struct h2c_settings *out);

struct h2c;
struct h2_counters;
/* Adds what connection <h2>'s frame counters gained since the last call to
 * the proxy counters <px> (show stat h2_*): once per run of a connection's
 * task, not once per frame. Both sides' muxes use it. */
void h2_stats_flush(struct h2c *h2, struct h2_counters *px);

/* ---- what the stream of an HTTP/2 stream calls (stream_http.c) ---- */

/* Moves received payload into <chan>. Returns 1 on progress, 0. */
int  h2s_rcv_body(struct h2s *h, struct buffer *chan);
/* The request is complete in the channel (END_STREAM seen, all moved). */
int  h2s_rx_done(const struct h2s *h);
/* The request's trailers as field lines (NULL, 0 when none). */
const char *h2s_rx_trailers(const struct h2s *h, size_t *len);
/* The HTTP/2 stream is gone (reset by the client, connection lost). */
int  h2s_failed(const struct h2s *h);
/* Sends the response head (<interim>: a 1xx). Returns 0, or -1 when HTTP/2
 * cannot carry it. */
int  h2s_snd_head(struct h2s *h, const struct http_msg *msg, int interim);
/* The response payload waits in the response channel; <eom>: its end is
 * there too (trailers: field lines <tlr>, may be NULL). The connection
 * pulls it. */
void h2s_snd_body(struct h2s *h, int eom, const char *tlr, size_t tlr_len);
/* The whole response went to the HTTP/2 stream (its END_STREAM is queued). */
int  h2s_tx_finished(const struct h2s *h);
/* The stream ends: the HTTP/2 stream is reset if it is still open. */
void h2s_detach(struct h2s *h);
/* Its HTTP/2 stream id. */
int32_t h2s_id(const struct h2s *h);
/* The stick-table counters its connection tracks (STKT_MAX_CTR of them),
 * or NULL once the connection is gone. */
struct stkctr;
const struct stkctr *h2s_session_counters(const struct h2s *h);

#endif
