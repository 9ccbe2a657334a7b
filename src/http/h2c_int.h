/* Shared by the two files of the HTTP/2 connection engine: h2c.c (the
 * connection, nghttp2's callbacks, the protections) and h2c_conv.c (heads
 * between HTTP/2 fields and the message model). Not a public interface:
 * see include/sluice/http/h2c.h.
 */
#ifndef SLUICE_HTTP_H2C_INT_H
#define SLUICE_HTTP_H2C_INT_H

#include <stddef.h>
#include <stdint.h>
#include <nghttp2/nghttp2.h>
#include <sluice/core/list.h>
#include <sluice/http/h2c.h>
#include <sluice/http/msg.h>

/* A websocket key: base64 of 16 bytes (RFC 6455 section 4.1), 24 chars. */
#define H2C_WS_KEY_LEN     24
/* Sec-WebSocket-Accept: base64 of a SHA-1, 28 chars. */
#define H2C_WS_ACCEPT_LEN  28

/* h2c_stream.flags */
#define H2S_F_NOTIFIED     0x0001  /* the owner knows the stream (sctx valid) */
#define H2S_F_EXT_CONNECT  0x0002  /* extended CONNECT (RFC 8441), either side */
#define H2S_F_CONNECT      0x0004  /* plain CONNECT */
#define H2S_F_WS_KEY       0x0008  /* ws_key holds the key the HTTP/1 side saw */
#define H2S_F_FINAL_IN     0x0010  /* final head received */
#define H2S_F_FINAL_OUT    0x0020  /* final head submitted */
#define H2S_F_ES_IN        0x0040  /* END_STREAM received */
#define H2S_F_ES_OUT       0x0080  /* END_STREAM sent */
#define H2S_F_DEFERRED     0x0100  /* data_out() had nothing: waits for h2c_resume() */

/* One stream the owner may know. Lives from the first head to the owner's
 * detach, a reset or the close, whichever comes first; nghttp2's stream
 * user data points to it meanwhile. */
struct h2c_stream {
	struct list link;          /* in h2c.streams */
	void *sctx;
	int32_t sid;
	unsigned int flags;        /* H2S_F_* */
	enum http_meth meth;       /* method of the request (response flags) */
	size_t unconsumed;         /* DATA bytes given to the owner, not consumed yet */
	char ws_key[H2C_WS_KEY_LEN + 1];
};

/* Pseudo-header slots of a head being received. */
enum h2c_pseudo {
	H2P_METHOD = 0, H2P_SCHEME, H2P_AUTHORITY, H2P_PATH, H2P_PROTOCOL, H2P_STATUS,
	H2P_MAX,
};

/* Extra fields a conversion may add to a head: host, upgrade, connection,
 * a websocket key or accept, the merged cookie. */
#define H2C_HEAD_EXTRA_FIELDS  6
/* Arena bytes beyond twice the list limit for the fields we build. */
#define H2C_HEAD_EXTRA_BYTES   256

/* The head being received. Header blocks are never interleaved (RFC 9113
 * section 6.10: a block's CONTINUATION frames follow it immediately), so
 * one per connection suffices. Fields are copied into the arena: nghttp2's
 * bytes only live during its callback. */
struct h2c_head {
	int32_t sid;
	int active;                /* a block is being received */
	int discard;               /* over a limit: fields are ignored */
	size_t list_size;          /* RFC 9113 section 6.5.2 accounting */
	struct ist pseudo[H2P_MAX];
	struct http_hdr *fields;   /* regular fields as received, then the output */
	int nfields;
	int ncookies;
	int max_fields;            /* settings' max_hdrs */
	char *arena;
	size_t arena_used;
	size_t arena_size;
};

/* Scratch space to build outgoing fields: nghttp2 copies them when a
 * frame is submitted, so one per connection is reused. */
struct h2c_out {
	nghttp2_nv *nv;
	int n;
	int cap;
	char *buf;
	size_t used;
	size_t size;
};

/* Verdicts of the incoming conversion. */
#define H2C_HEAD_OK         0
#define H2C_HEAD_MALFORMED  (-1)   /* stream error PROTOCOL_ERROR (RFC 9113 8.1.1) */
#define H2C_HEAD_NOMEM      (-2)

/* Kinds of incoming heads. */
enum h2c_head_kind { H2C_KIND_REQUEST, H2C_KIND_RESPONSE, H2C_KIND_TRAILERS };

/* h2c_conv.c: incoming ---------------------------------------------------- */

int  h2c_head_init(struct h2c_head *hd, const struct h2c_settings *set);
void h2c_head_release(struct h2c_head *hd);
void h2c_head_begin(struct h2c_head *hd, int32_t sid);
/* Adds one decoded field. Returns 0, 1 when the head has just gone over
 * max_header_list, 2 over max_fields (the caller decides). */
int  h2c_head_add(struct h2c_head *hd, const uint8_t *name, size_t nlen,
                  const uint8_t *value, size_t vlen);
/* Builds <msg> (hdrs pointing into <hd>) for stream <s>. */
int  h2c_head_build(struct h2c_head *hd, enum h2c_head_kind kind, struct h2c_stream *s,
                    int end_stream, struct http_msg *msg);

/* h2c_conv.c: outgoing ---------------------------------------------------- */

void h2c_out_release(struct h2c_out *o);
/* Response head of <msg> for stream <s> into <o>. 0 or H2C_E_*. */
int  h2c_out_response(struct h2c_out *o, const struct http_msg *msg, struct h2c_stream *s);
/* Request head. <ext_ok>: the server allows extended CONNECT (-1: its
 * SETTINGS are not known yet). Sets H2S_F_* on <s>. 0 or H2C_E_*. */
int  h2c_out_request(struct h2c_out *o, const struct http_msg *msg, struct h2c_stream *s,
                     int ext_ok);
int  h2c_out_trailers(struct h2c_out *o, const struct http_hdr *h, int n);

#endif
