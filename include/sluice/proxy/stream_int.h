/* Stream internals shared by the TCP path (stream.c) and the HTTP
 * stream (stream_http.c, stream_req.c, stream_reply.c, stream_smp.c,
 * stream_srvconn.c). Not for other modules. Owner thread only. */
#ifndef SLUICE_PROXY_STREAM_INT_H
#define SLUICE_PROXY_STREAM_INT_H

#include <stdint.h>
#include <sys/types.h>
#include <sluice/core/global.h>
#include <sluice/core/list.h>
#include <sluice/core/lock.h>
#include <sluice/core/log.h>
#include <sluice/proxy/stream.h>

struct http_msg;
struct http_reply;
struct txn_body;

/* Each thread's streams, for the CLI (stream_cli.c): linked and unlinked
 * by the owner under <lock>, walked by the CLI in bounded batches under
 * it; <count> written under it, read racily. */
struct stream_list {
	struct sl_lock lock;
	struct list head;
	int count;
};
extern struct stream_list thr_streams[MAX_THREADS];

/* stream.c */
int64_t stream_wall_us(void);
/* The process-wide stream counter (%rt, txn.id): one per TCP session or
 * HTTP request, as HAProxy counts streams. */
uint64_t stream_next_id(void);
void stream_free(struct stream *s);
void stream_account_bytes(struct stream *s);
/* Ends the stream (state CLOSED) with termination state <a><b> unless one
 * is already set. In HTTP mode, the caller decides first whether a response
 * goes out (http_stream_error()). */
void stream_abort(struct stream *s, char a, char b);
void do_assign(struct stream *s);
/* Counts the stream in <be> (beconn, sessions) and takes its retries. */
void stream_set_backend(struct stream *s, struct proxy *be);
void do_queued(struct stream *s);
void do_connect(struct stream *s);
void do_connecting(struct stream *s);
void do_established(struct stream *s);
void stream_release_server(struct stream *s);
void stream_record_times(struct stream *s);
/* Counts a retry (retries_left must be > 0) and sets the state for it:
 * ASSIGN (redispatch, returns 1) or CONNECT (returns 0). */
int  stream_retry(struct stream *s);
int  side_timeout(const struct stream *s, int client);
void stream_log_fields_tcp(struct stream *s, struct log_fields *f);
void stream_send_log(struct stream *s, const struct lf_expr *fmt);

/* stream_http.c */
/* Sets up HTTP mode on a new stream. Returns 0 or -1 (no memory). */
int  http_stream_start(struct stream *s);
/* Runs the HTTP states; returns like a state step. */
void http_stream_step(struct stream *s);
uint64_t http_stream_expiry(const struct stream *s);
/* stream_abort() in HTTP mode: answers the client when no response has
 * started (503 for queue/connect failures...) and returns 1; 0 to let the
 * stream close. */
int  http_stream_abort(struct stream *s, char a, char b);
/* The client side's mux, HTTP/1 or HTTP/2: request payload into the
 * request channel (1 progress, 0, -1 framing error), and whether the
 * request is complete there. */
int  http_cli_rcv_body(struct stream *s, const char **why);
int  http_cli_rx_done(const struct stream *s);
/* The response is complete in the channel (the server's mux saw its end). */
int  http_srv_rx_done(const struct stream *s);
/* A tunnel (after CONNECT, or a websocket upgrade) with an HTTP/2 stream
 * on one side or both (s->h2s, s->h2bs): state ESTABLISHED of such a
 * stream. */
void http_h2_tunnel(struct stream *s);
/* The request's trailers, field lines (NULL, 0 when none). */
const char *http_cli_trailers(const struct stream *s, size_t *len);
/* An HTTP/2 stream's request head <msg> (copied into the request channel),
 * analysed at once. */
void http_stream_h2_request(struct stream *s, const struct http_msg *msg);
/* Reads the client while the stream waits for a server (queue, connect):
 * the request body into the request channel, or what follows into the
 * client's mux. Returns -1 if the client connection failed. */
int  http_read_client(struct stream *s);
/* Called by stream_free() in HTTP mode: last log, idle connection. */
void http_stream_release(struct stream *s);
/* Numbers the transaction (txn.id, s->uniq_id) if it has no number yet. */
void http_txn_take_id(struct stream *s);
/* Sets up <b> for the body framing of <m> (Content-Length, chunked, close). */
void http_body_init(struct txn_body *b, const struct http_msg *m, int is_req);

/* A timeout <a> if set, else <b> (both in ms, 0 meaning unset). */
static inline int http_first_set(int a, int b)
{
	return a ? a : b;
}

/* stream_req.c: request analysis */
/* A complete request head was parsed: checks, then http_analyze(). */
void http_request_parsed(struct stream *s);
/* Serialises the analysed request head into the server's mux, when the
 * request starts going out (a queued request holds only its channel), and
 * keeps the copy retry-on needs. Returns 0, -1 (no room: 500), -2 (an
 * HTTP/2 server connection took no new stream: the stream went back to
 * connecting) or -3 (HTTP/2 toward the server cannot carry it: 502). */
int  http_request_emit(struct stream *s);
/* Runs the analysis steps from where a yielding rule left them. */
void http_analyze(struct stream *s, int final);

/* stream_reply.c: log line and local replies */
/* The transaction's log line, once (not for monitor-uri or silent). */
void http_log(struct stream *s);
/* Counts a response status in the frontend, backend and server. */
void http_count_status(struct stream *s, int status);
/* Puts a local reply in the response buffer; 0, or -1 if none can go. */
int  http_reply_prepare(struct stream *s, int status, const struct http_reply *r);
/* Answers the request locally (termination state <a><b> if none yet). */
void http_reply_start(struct stream *s, int status, const struct http_reply *r, char a, char b);
/* http-request auth: the proxy's 401 page, its WWW-Authenticate headers
 * replaced by a Basic challenge for <realm>. */
void http_reply_auth(struct stream *s, const char *realm);
/* use-service <name>: the service answers the request (its head in the
 * response buffer, its body in s->svc_body). */
void http_service_start(struct stream *s, const char *name);
/* The same for a service that use-service does not name (the stats page). */
struct http_service;
void http_service_run(struct stream *s, const struct http_service *svc);
/* Moves the next bytes of the service's body into the response buffer;
 * returns 1 if some moved. */
int  http_service_feed(struct stream *s, struct buffer *dst);
/* Drops the service's body, sent or not (end of transaction, new reply). */
void http_service_release(struct stream *s);
/* Whether a service's or a cache hit's body has bytes left to send. */
int  http_service_pending(const struct stream *s);

/* stream_smp.c */
struct smp_ctx;
struct ist;
/* Prepares <c> for evaluations on <s> in direction <dir> (final). */
void stream_smp_ctx_init(struct stream *s, struct smp_ctx *c, int dir);
/* The stream a sample context belongs to, or NULL (another caller's). */
struct stream *stream_of_smp(const struct smp_ctx *ctx);
/* unique-id: rendered once per transaction (unique-id-format). */
int  stream_unique_id(struct smp_ctx *ctx, struct ist *out);

/* use-server rules of the stream's backend: the server they name, or NULL
 * (src/proxy/use_server.c). */
struct server *stream_use_server(struct stream *s);
/* The backend for the stream (use_backend rules with their conditions and
 * dynamic names, default_backend, or the proxy itself for a listen). */
struct proxy *stream_choose_backend(struct stream *s);
/* tcp-request connection rules, at accept (before a PROXY header and a
 * TLS handshake), and tcp-request session rules, once the session is
 * established (after both, as in HAProxy): 0, or -1 to close the
 * connection at once. */
int  stream_tcp_conn_rules(struct stream *s);
int  stream_tcp_sess_rules(struct stream *s);
/* tcp-request content rules of a TCP stream before its backend is chosen:
 * 1 go on, 0 wait for more data (s->conn_exp: the inspect-delay end), -1
 * rejected (stream closed). */
int  stream_tcp_content_rules(struct stream *s);
/* stream_srvconn.c: retry-on and the server connection between requests */
void http_retry_snapshot(struct stream *s);
int  http_l7_retry(struct stream *s, unsigned int why);
/* A reused server connection closed before any byte of the response: the
 * request goes again on a new connection, if a copy of it was kept (an
 * HTTP/2 stream's, on a reused connection). Returns 1 if it did. */
int  http_reuse_retry(struct stream *s);
unsigned int http_retry_bit_of_status(int status);
/* At the end of a transaction, what becomes of the server connection:
 * http_server_conn_plan() decides (nothing changes yet), and
 * http_server_conn_apply() does it once the log line is written (ssl_bc
 * and ssl_s_* read the connection). NONE: no connection, or a kept one
 * the transaction did not use; STAY: kept for the client's next request;
 * OFFER: offered with the slot, which http_server_conn_apply() releases
 * (requests wait for the server: the caller must not release the slot
 * itself); POOL: to the idle pool (kept for the client if the pool is
 * full and the client stays); CLOSE. */
enum sc_plan { SC_PLAN_NONE, SC_PLAN_STAY, SC_PLAN_OFFER, SC_PLAN_POOL, SC_PLAN_CLOSE };
enum sc_plan http_server_conn_plan(struct stream *s);
void http_server_conn_apply(struct stream *s, enum sc_plan plan);
/* Releases s's slot, offering its idle server connection to the waiter
 * that gets the slot; the pool (or close) if none takes it. */
void http_release_slot_offer(struct stream *s);
/* What a stream about to queue may take with a slot (pend.take_conn). */
int  http_take_conn_mode(const struct stream *s);
/* Makes the connection handed over with the slot of <srv> the stream's
 * kept connection (s->sc, s->sc_srv). */
void http_adopt_handed_conn(struct stream *s, struct server *srv);
/* Gives the server connection kept since the previous request to its
 * server's idle pool (or closes it): the stream is about to wait. */
void http_release_kept_conn(struct stream *s);
/* Connection reuse: fills s->sc with a reusable connection to s->srv if
 * the http-reuse mode allows one. Returns 1 if so. */
int  http_reuse_conn(struct stream *s);

/* HTTP/1 connections and streams of HAProxy's h1 stats module (show stat
 * h1_*). A new server connection that is not HTTP/2 counts in its
 * backend's from its establishment to its close; the request it carries
 * is an HTTP/1 stream of the backend from then (or from its reuse) to the
 * end of the transaction, as the client's request is one of the frontend
 * from its first byte. http_h1_strm_end() ends both, once. */
void http_h1_srv_conn_new(struct stream *s);
void http_h1_be_strm_begin(struct stream *s);
void http_h1_strm_end(struct stream *s);

#endif
