/* The HTTP/2 connection engine (RFC 9113, RFC 8441) over libnghttp2, used
 * by the h2 mux on both sides: server role toward clients, client role
 * toward servers (DESIGN: "Connection layers").
 *
 * Pure and I/O-free: wire bytes in (h2c_recv()), wire bytes out
 * (h2c_send()), and callbacks (struct h2c_ops) to the owner carrying the
 * message model of msg.h. No syscall, thread or timer; everything that
 * happens is caused by a call of the owner. Callbacks are made from inside
 * h2c_recv() and h2c_send() only (data_out), never from a submit function,
 * and the owner may call every function of this file from a callback but
 * h2c_recv(), h2c_send() and h2c_free().
 *
 * Incoming heads become struct http_msg as h1_parse_head() fills them, so
 * that the stream applies the same rules whatever the protocol:
 *
 * - version "HTTP/2.0", HTTP_F_VER_11 set (HTTP/2 has everything HTTP/1.1
 *   can do: Host, chunking on the HTTP/1 side, 100-continue);
 * - request with :authority (HAProxy 2.6): uri is the absolute form
 *   "<:scheme>://<authority><:path>" with HTTP_F_ABS_URI (an HTTP/1 side
 *   writes the origin form), the authority losing an empty or default port
 *   (":80" with http, ":443" with https); every Host field is replaced by
 *   one "host: <authority>" placed first (RFC 9113 section 8.3.1 says they
 *   must not differ; HAProxy 2.6 keeps :authority). So url gives
 *   "https://example.com/p?q", path "/p", req.hdr(host) and base what the
 *   authority says. Without :authority, uri is :path and Host fields stay
 *   as they are (one at most);
 * - OPTIONS with :path "*": uri "*"; CONNECT: uri is :authority, with
 *   "host: <authority>" first, BODYLESS (the DATA that follows is tunnel
 *   payload, as after an HTTP/1 CONNECT);
 * - extended CONNECT (RFC 8441, :protocol): the request an HTTP/1 server
 *   expects, as HAProxy 2.6 gives it: method GET, uri as above, fields
 *   then "upgrade: <:protocol>" and "connection: upgrade" appended
 *   (HTTP_F_UPGRADE | HTTP_F_CONN_UPGRADE), and for websocket a generated
 *   "sec-websocket-key" when the client sent none (RFC 8441 clients do
 *   not); the server's 101 is turned back into a 200 by
 *   h2c_submit_response(), which checks its Sec-WebSocket-Accept;
 * - the cookie crumbs are merged into one "cookie" field, values joined
 *   with "; " (RFC 9113 section 8.2.3), appended after the other fields;
 * - body: END_STREAM on the head gives BODYLESS | XFER_LEN (requests, and
 *   responses bodyless by status or method) or XFER_LEN alone (other
 *   responses: an empty body, end_stream tells); content-length gives
 *   HAS_CL | XFER_LEN with content_length; neither gives XFER_LEN alone:
 *   the body ends with END_STREAM, an HTTP/1 side chunks it;
 * - responses (client role): status from :status, empty reason, meth the
 *   request's method; 1xx heads come before the final one (BODYLESS);
 *   2xx to CONNECT and the 200 to an extended CONNECT sent for an HTTP/1
 *   websocket request (given as 101 with Connection/Upgrade and the
 *   Sec-WebSocket-Accept the HTTP/1 client expects) carry HTTP_F_TUNNEL.
 *
 * Outgoing heads (h2c_submit_*) may come from HTTP/1, edited by rules:
 * deleted fields are skipped, names lower-cased, Connection, Keep-Alive,
 * Proxy-Connection, Transfer-Encoding, Upgrade dropped, TE kept as
 * "te: trailers" when it lists trailers and dropped otherwise,
 * Content-Length dropped under HTTP_F_CL_DROP and written once under
 * HTTP_F_CL_MERGED. A request gets :method, :scheme, :authority and :path
 * as HAProxy 2.6 builds them: from an absolute-form uri, :scheme and
 * :authority from it (default port removed) and no Host field; from an
 * origin-form (or "*") uri, :scheme "https" and the Host field kept as a
 * field, without :authority (RFC 9113 section 8.3.1 lets an intermediary
 * do either); CONNECT: :authority from the uri, no :scheme/:path.
 *
 * Protections: every one is bounded per connection, counted in struct
 * h2c_counters and answered with GOAWAY (ENHANCE_YOUR_CALM, or the error
 * RFC 9113 names) once its budget is spent. Budgets that do not depend on
 * time are refilled by useful work instead (a completed response, a DATA
 * frame sent): a peer may misbehave in proportion to the work it causes,
 * not more. See h2c.c for each rule.
 *
 * Concurrency: none. A connection and its streams belong to one thread.
 */
#ifndef SLUICE_HTTP_H2C_H
#define SLUICE_HTTP_H2C_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sluice/http/msg.h>

/* HTTP/2 error codes (RFC 9113 section 7) the owner passes or receives. */
#define H2C_NO_ERROR            0x0
#define H2C_PROTOCOL_ERROR      0x1
#define H2C_INTERNAL_ERROR      0x2
#define H2C_FLOW_CONTROL_ERROR  0x3
#define H2C_STREAM_CLOSED       0x5
#define H2C_REFUSED_STREAM      0x7
#define H2C_CANCEL              0x8
#define H2C_COMPRESSION_ERROR   0x9
#define H2C_ENHANCE_YOUR_CALM   0xb

/* Errors of the submit functions (negative). */
#define H2C_E_INVAL      (-1)   /* unknown or closed stream, wrong role, bad message */
#define H2C_E_NOMEM      (-2)
#define H2C_E_CLOSED     (-3)   /* the connection is going away: no new stream */
#define H2C_E_NOSTREAM   (-4)   /* client role: the server's stream limit is reached */
#define H2C_E_UPGRADE    (-5)   /* a 101 or an Upgrade that HTTP/2 cannot carry: see
                                 * h2c_submit_request() and h2c_submit_response() */
#define H2C_E_AGAIN      (-6)   /* client role: the server's SETTINGS are not known yet
                                 * and the request depends on them (websocket) */
#define H2C_E_WS_ACCEPT  (-7)   /* a 101 to a websocket request whose
                                 * Sec-WebSocket-Accept does not match the key */

/* *eom values of h2c_ops.data_out. */
#define H2C_EOM_END       1     /* the body ends: END_STREAM on this DATA */
#define H2C_EOM_TRAILERS  2     /* the body ends and trailers follow: the owner calls
                                 * h2c_submit_trailers() (now, or later) */

/* HAProxy's tune.h2.* and tune.bufsize; a zero takes the default named. */
struct h2c_settings {
	uint32_t header_table_size;      /* HPACK decoder table we allow (4096) */
	uint32_t initial_window_size;    /* per stream receive window (65535) */
	uint32_t max_concurrent_streams; /* streams the peer may open (100) */
	uint32_t max_frame_size;         /* largest frame payload we accept (16384) */
	uint32_t max_header_list;        /* decoded head bytes, RFC 9113 section 6.5.2
	                                  * counting (tune.bufsize, 16384) */
	uint32_t max_hdrs;               /* fields of one head (tune.http.maxhdr, 101) */
	uint32_t no_ext_connect;         /* server role: RFC 8441 not announced
	                                  * (h2-workaround-bogus-websocket-clients) */
};

/* Why the connection was ended by this side (h2c_counters.calm_cause). */
enum h2c_cause {
	H2C_CAUSE_NONE = 0,
	H2C_CAUSE_PROTOCOL,        /* the peer broke the protocol (nghttp2's verdict) */
	H2C_CAUSE_RAPID_RESET,     /* streams reset by the peer before their response */
	H2C_CAUSE_CONTINUATION,    /* too many CONTINUATION frames for one head */
	H2C_CAUSE_ACK_FLOOD,       /* SETTINGS/PING acknowledgements piling up */
	H2C_CAUSE_GLITCH,          /* empty DATA, PRIORITY, malformed heads */
	H2C_CAUSE_WINDOW_UPDATE,   /* WINDOW_UPDATE frames beyond what our DATA explains */
	H2C_CAUSE_REFUSED,         /* streams opened beyond our limit, again and again */
	H2C_CAUSE_TOO_MANY_FIELDS, /* a head with more than max_hdrs fields */
	H2C_CAUSE_SHUTDOWN,        /* h2c_shutdown() */
};

struct h2c_counters {
	uint64_t streams;          /* streams opened (by either side) */
	uint64_t refused;          /* peer's streams refused (our limit, or the owner) */
	uint64_t rst_recv;         /* RST_STREAM received */
	uint64_t rst_sent;         /* RST_STREAM sent */
	uint64_t early_resets;     /* server role: RST_STREAM before our final head */
	uint64_t heads_too_big;    /* heads over max_header_list (stream refused) */
	uint64_t too_many_fields;  /* heads over max_hdrs (connection error) */
	uint64_t malformed;        /* heads refused as malformed (stream error) */
	uint64_t continuations;    /* CONTINUATION frames received */
	uint64_t empty_data;       /* DATA frames without payload nor END_STREAM */
	uint64_t window_updates;   /* WINDOW_UPDATE frames received */
	uint64_t settings;         /* SETTINGS frames received (not ACKs) */
	uint64_t pings;            /* PING frames received (not ACKs) */
	uint64_t priorities;       /* PRIORITY frames received */
	uint64_t goaway_sent;
	uint64_t goaway_recv;
	uint32_t goaway_err;       /* error code of our GOAWAY */
	enum h2c_cause calm_cause; /* why we ended the connection, if we did */
	/* HAProxy's h2 stats module (see struct h2c_stats) */
	uint64_t headers_frames;   /* HEADERS frames received (CONTINUATION not counted) */
	uint64_t data_frames;      /* DATA frames received */
	uint64_t settings_frames;  /* SETTINGS frames received, ACKs included,
	                            * the first one twice (HAProxy 2.6's count) */
	uint64_t conn_errors;      /* our GOAWAY said a protocol error of the peer */
	uint64_t stream_errors;    /* stream errors found in the peer's frames */
	uint64_t rst_on_error;     /* RST_STREAM sent, but to cancel a stream */
	uint64_t goaway_on_error;  /* GOAWAY sent with an error code */
};

/* What HAProxy 2.6's h2 stats module counts (the h2_* columns of `show
 * stat`), as h2c counts it:
 *  - headers, data, settings, rst_recv, goaway_recv: frames received of
 *    these types (SETTINGS ACKs included, and the first SETTINGS counted
 *    twice as HAProxy 2.6 does; CONTINUATION frames not counted);
 *  - conn_errors: connection errors found in what the peer sent: GOAWAY
 *    sent with a protocol error code (not NO_ERROR, INTERNAL_ERROR,
 *    ENHANCE_YOUR_CALM, REFUSED_STREAM, CANCEL);
 *  - stream_errors: stream errors found in the peer's frames, i.e.
 *    RST_STREAM sent with PROTOCOL_ERROR or FLOW_CONTROL_ERROR: DATA
 *    against the content-length, a bad stream WINDOW_UPDATE, a malformed
 *    response head (client role); not a malformed request head, which
 *    HAProxy refuses without counting it here (rst_on_error only);
 *  - rst_on_error: RST_STREAM frames sent for an error (any code but
 *    NO_ERROR and CANCEL: a refused stream, a malformed head...);
 *  - goaway_on_error: GOAWAY frames sent with an error code (not NO_ERROR,
 *    ENHANCE_YOUR_CALM, REFUSED_STREAM, CANCEL), as HAProxy counts them. */
struct h2c_stats {
	uint64_t headers, data, settings, rst_recv, goaway_recv;
	uint64_t conn_errors, stream_errors, rst_on_error, goaway_on_error;
};

struct h2c_ops {
	/* Server role: the peer opened stream <sid> with a valid request head
	 * (given to head() right after). Returns the owner's stream context,
	 * or NULL to refuse it (RST_STREAM REFUSED_STREAM). */
	void *(*stream_new)(void *owner, int32_t sid);
	/* A complete head: request (server role), response or 1xx (client
	 * role), or trailers (<is_trailers>, only fields). <msg> and its spans
	 * live in h2c memory valid only during the call: the owner copies what
	 * it keeps. <end_stream>: no DATA follows. Returns 0, or < 0 to reset
	 * the stream (RST_STREAM INTERNAL_ERROR; the owner forgets the stream,
	 * no reset() follows). */
	int (*head)(void *owner, void *sctx, const struct http_msg *msg, int is_trailers,
	            int end_stream);
	/* DATA payload, always taken whole (the stream window bounds it; the
	 * owner calls h2c_consumed() once it forwarded bytes, which reopens the
	 * window). <p>/<len> may be NULL/0 with <end_stream> (the END_STREAM
	 * of a frame whose payload came earlier). Returns 0, or < 0 to reset
	 * the stream as head() does. */
	int (*data)(void *owner, void *sctx, const char *p, size_t len, int end_stream);
	/* The stream ended abnormally: peer RST_STREAM, connection error or
	 * GOAWAY, GOAWAY beyond its id (REFUSED_STREAM: safe to retry), or
	 * closed before its END_STREAM came in. <err> is the HTTP/2 error code.
	 * Called once; h2c forgets the stream (as h2c_detach()). */
	void (*reset)(void *owner, void *sctx, uint32_t err);
	/* Optional: the stream completed, END_STREAM both ways (the owner may
	 * still hold received bytes; no more h2c_consumed() is needed). h2c
	 * forgets the stream. */
	void (*closed)(void *owner, void *sctx);
	/* Outgoing body pull: copies up to <max> bytes into <dst>, sets *eom
	 * (H2C_EOM_*) when the body ends. Returns the bytes copied; 0 with
	 * *eom unset means none yet: the stream waits until h2c_resume(). < 0
	 * resets the stream (INTERNAL_ERROR, no reset() follows). */
	ssize_t (*data_out)(void *owner, void *sctx, char *dst, size_t max, int *eom);
};

struct h2c;

/* A connection in <server_role> (else client role) with our <set>tings
 * (NULL: defaults), callbacks <ops> and their first argument <owner>. The
 * preface (client role) and our SETTINGS are queued: h2c_want_write() is
 * true. NULL when memory is short. */
struct h2c *h2c_new(int server_role, const struct h2c_settings *set,
                    const struct h2c_ops *ops, void *owner);

/* Frees the connection without any callback: the owner has already
 * forgotten its streams (or is about to). */
void h2c_free(struct h2c *c);

/* Wire bytes in. Returns <len> (all taken) or < 0 for a connection error
 * found by h2c (a protection, a flood, a bad preface): a GOAWAY is then
 * queued (send it with h2c_send(), then close) and every stream got its
 * reset(). A protocol error nghttp2 finds by itself (an HPACK error, a
 * frame where none may be) is only known once its GOAWAY is out: the
 * streams get their reset() from h2c_send(), and h2c_want_read() turns 0.
 * Work is bounded by <len>: the caller passes at most one buffer. */
ssize_t h2c_recv(struct h2c *c, const char *p, size_t len);

/* Wire bytes out, at most <room>: what does not fit is kept for the next
 * call. Returns the bytes written (0: nothing to send). May call
 * data_out(), and reset() when the connection turns out to be over (see
 * h2c_recv()). */
ssize_t h2c_send(struct h2c *c, char *out, size_t room);

/* Whether h2c_send() has bytes to give / h2c_recv() wants bytes. Both 0:
 * the connection is over (GOAWAY exchanged, error sent): close it. */
int h2c_want_write(const struct h2c *c);
int h2c_want_read(const struct h2c *c);

/* Server role: the response head <msg> on stream <sid>: 1xx (interim: the
 * final head follows), or final; <end_stream>: no body (a HEAD or 304
 * answer, or an empty body), else the body is pulled with data_out(). A
 * 101 can only answer an extended CONNECT (RFC 8441): it becomes a 200,
 * after its Sec-WebSocket-Accept is checked against the key sent to the
 * server (H2C_E_WS_ACCEPT: the owner answers 502, as HAProxy 2.6 does);
 * anywhere else H2C_E_UPGRADE: the owner must not have forwarded an
 * upgrade (HTTP/2 requests carry none) and answers 502. Returns 0 or
 * H2C_E_*. */
int h2c_submit_response(struct h2c *c, int32_t sid, const struct http_msg *msg,
                        int end_stream);

/* Client role: sends request <msg> on a new stream bound to <sctx>;
 * <end_stream>: no body. Returns the stream id (> 0) or H2C_E_*: _CLOSED
 * after a GOAWAY, _NOSTREAM at the server's limit (h2c_streams() ==
 * h2c_peer_max_streams()). A websocket request (Upgrade: websocket and
 * Connection: upgrade, GET) becomes an extended CONNECT when the server
 * allows it (SETTINGS_ENABLE_CONNECT_PROTOCOL), its 200 given back as 101;
 * H2C_E_AGAIN before the server's SETTINGS came, H2C_E_UPGRADE when it
 * does not allow it: the owner answers 502 or takes an HTTP/1 server.
 * Other Upgrade values are dropped (the request goes without upgrade). */
int32_t h2c_submit_request(struct h2c *c, const struct http_msg *msg, void *sctx,
                           int end_stream);

/* Trailers ending stream <sid>'s outgoing side: the live fields of <h>
 * (<n> entries), after data_out() gave H2C_EOM_TRAILERS or before any
 * DATA on a stream whose head was submitted without end_stream. Returns 0
 * or H2C_E_*. */
int h2c_submit_trailers(struct h2c *c, int32_t sid, const struct http_hdr *h, int n);

/* data_out() of stream <sid> has bytes again. 0 or H2C_E_INVAL. */
int h2c_resume(struct h2c *c, int32_t sid);

/* The owner forwarded <n> bytes received on stream <sid>: the stream and
 * connection windows reopen by as much (WINDOW_UPDATE when worth it). No
 * effect on a stream h2c forgot. */
void h2c_consumed(struct h2c *c, int32_t sid, size_t n);

/* The owner aborts stream <sid> (client gone, rule reject): RST_STREAM
 * <err>, no further callback for it. 0 or H2C_E_INVAL. */
int h2c_reset_stream(struct h2c *c, int32_t sid, uint32_t err);

/* Graceful close (RFC 9113 section 6.8). Server role, in two steps as
 * HAProxy 2.6: a GOAWAY with the largest stream id first (streams the
 * client has in flight are still taken), then, once no stream is left, a
 * GOAWAY with the last stream id processed. Client role: the last one at
 * once, no new stream opened. h2c_want_read()/h2c_want_write() turn 0 once
 * the streams are done and the GOAWAY is sent. */
void h2c_shutdown(struct h2c *c);

/* At once: GOAWAY NO_ERROR with the last stream id processed, no new
 * stream accepted; for a connection with no stream in flight (an idle
 * timeout), where the two steps of h2c_shutdown() would only delay. */
void h2c_goaway_now(struct h2c *c);

/* The owner forgets stream <sid>: no more callbacks for it; a stream still
 * open is reset (CANCEL) and the window its unconsumed bytes held is
 * given back to the connection. */
void h2c_detach(struct h2c *c, int32_t sid);

/* Open streams, and the peer's SETTINGS_MAX_CONCURRENT_STREAMS (client
 * role: capacity left for reuse is the difference). */
int h2c_streams(const struct h2c *c);
int h2c_peer_max_streams(const struct h2c *c);

/* Whether the peer's first SETTINGS frame arrived. A client sends its
 * requests only after it (as HAProxy does): until then the owner sends
 * what h2c_new() queued (preface, SETTINGS) and nothing else. */
int h2c_peer_settings_known(const struct h2c *c);

const struct h2c_counters *h2c_counters(const struct h2c *c);

/* What the h2c_stats figures gained since the previous call (since the
 * connection began, the first time), into <d>: the owner adds them to
 * shared counters after each run, without an atomic per frame. Returns
 * non-zero if any of them moved. */
int h2c_stats_take(struct h2c *c, struct h2c_stats *d);

#endif
