/* HTTP checks over HTTP/2: see check_h2.h. The h2c engine in its client
 * role frames the check's request and decodes the reply; this file only
 * turns one into the other's format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/http/h1.h>
#include <sluice/http/h2c.h>
#include <sluice/http/msg.h>
#include <sluice/proxy/check_h2.h>

struct chk_h2 {
	struct h2c *h2;
	char *text;                    /* the request, HTTP/1 text (owned) */
	struct http_msg req;           /* parsed from it */
	struct http_hdr hdrs[HTTP_MAX_HDRS_DEFAULT];
	size_t body_off, body_len;     /* its body, after the head */
	struct buffer *rx;             /* during chk_h2_input(): the reply */
	int head_seen;                 /* the first head was rendered */
	int submitted;                 /* the request went to the engine */
	int done, failed;
};

/* Appends what fits of <p>/<len> to <b>. */
static void put(struct buffer *b, const char *p, size_t len)
{
	size_t room = buf_room(b);

	if (len > room)
		len = room;
	memcpy(buf_tail(b), p, len);
	b->data += len;
}

static int cb_head(void *owner, void *sctx, const struct http_msg *msg, int is_trailers,
                   int end_stream)
{
	struct chk_h2 *h = owner;
	char line[32];

	/* the first head is the reply (a 1xx included, as HTTP/1 checks
	 * take it); trailers and later heads add nothing to a verdict */
	if (!is_trailers && !h->head_seen && h->rx) {
		h->head_seen = 1;
		snprintf(line, sizeof(line), "HTTP/1.1 %03d \r\n", msg->status);
		put(h->rx, line, strlen(line));
		for (int i = 0; i < msg->nhdrs; i++) {
			if (!msg->hdrs[i].name.len)
				continue;
			put(h->rx, msg->hdrs[i].name.ptr, msg->hdrs[i].name.len);
			put(h->rx, ": ", 2);
			put(h->rx, msg->hdrs[i].value.ptr, msg->hdrs[i].value.len);
			put(h->rx, "\r\n", 2);
		}
		put(h->rx, "\r\n", 2);
	}
	if (end_stream)
		h->done = 1;
	return 0;
}

static int cb_data(void *owner, void *sctx, const char *p, size_t len, int end_stream)
{
	struct chk_h2 *h = owner;

	if (h->rx && len)
		put(h->rx, p, len);
	if (end_stream)
		h->done = 1;
	return 0;
}

static void cb_reset(void *owner, void *sctx, uint32_t err)
{
	struct chk_h2 *h = owner;

	h->failed = h->done = 1;
}

static void cb_closed(void *owner, void *sctx)
{
	struct chk_h2 *h = owner;

	h->done = 1;
}

static ssize_t cb_data_out(void *owner, void *sctx, char *dst, size_t max, int *eom)
{
	struct chk_h2 *h = owner;
	size_t n = h->body_len < max ? h->body_len : max;

	memcpy(dst, h->text + h->body_off, n);
	h->body_off += n;
	h->body_len -= n;
	if (!h->body_len)
		*eom = H2C_EOM_END;
	return (ssize_t)n;
}

static const struct h2c_ops chk_h2_ops = {
	.head = cb_head,
	.data = cb_data,
	.reset = cb_reset,
	.closed = cb_closed,
	.data_out = cb_data_out,
};

/* What the engine has to send, into <tx> as far as it has room. */
static void flush(struct chk_h2 *h, struct buffer *tx)
{
	buf_realign(tx);
	while (h2c_want_write(h->h2) && buf_room(tx)) {
		ssize_t n = h2c_send(h->h2, buf_tail(tx), buf_room(tx));

		if (n <= 0)
			break;
		tx->data += (size_t)n;
	}
}

struct chk_h2 *chk_h2_new(const char *req, size_t req_len, struct buffer *tx)
{
	struct chk_h2 *h = calloc(1, sizeof(*h));
	struct h1_error err;

	if (!h)
		return NULL;
	h->text = malloc(req_len);
	if (!h->text)
		goto fail;
	memcpy(h->text, req, req_len);
	h->req.hdrs = h->hdrs;
	h->req.maxhdrs = HTTP_MAX_HDRS_DEFAULT;
	h->req.is_request = 1;
	if (h1_parse_head(h->text, req_len, 1, HTTP_METH_OTHER, req_len,
	                  H1_O_BARE_LF | H1_O_HOST_OPTIONAL | H1_O_ANY_VERSION, &h->req,
	                  &err) != H1_OK)
		goto fail;
	h->body_off = h->req.head_len;
	h->body_len = req_len - h->req.head_len;
	h->h2 = h2c_new(0, NULL, &chk_h2_ops, h);
	if (!h->h2)
		goto fail;
	/* the preface and our SETTINGS now, the request once the server's
	 * SETTINGS came (chk_h2_input()), as streams toward servers go */
	flush(h, tx);
	return h;
fail:
	chk_h2_free(h);
	return NULL;
}

int chk_h2_input(struct chk_h2 *h, const char *p, size_t len, struct buffer *rx,
                 struct buffer *tx, int *failed)
{
	h->rx = rx;
	buf_realign(rx);
	if (len && h2c_recv(h->h2, p, len) < 0)
		h->failed = h->done = 1;
	if (!h->submitted && !h->done && h2c_peer_settings_known(h->h2)) {
		h->submitted = 1;
		if (h2c_submit_request(h->h2, &h->req, h, !h->body_len) <= 0)
			h->failed = h->done = 1;
	}
	flush(h, tx);
	if (!h2c_want_read(h->h2))
		h->done = 1;   /* the connection ended (a GOAWAY exchanged) */
	h->rx = NULL;
	*failed = h->failed && !h->head_seen;
	return h->done;
}

void chk_h2_free(struct chk_h2 *h)
{
	if (!h)
		return;
	h2c_free(h->h2);
	free(h->text);
	free(h);
}
