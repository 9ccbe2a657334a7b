/* The HTTP/1 mux: wire bytes to the message model and back (see
 * mux_h1.h). Owner thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/http/h1_out.h>
#include <sluice/http/mux_h1.h>
#include <sluice/http/msgedit.h>
#include <sluice/net/conn.h>

/* room kept in tx for a chunk's size line and its CRLF */
#define CHUNK_FRAME_MAX  (16 + 2 + 2)

void h1m_init(struct h1m *m, struct conn *c, uint64_t *cnt_in, uint64_t *cnt_out)
{
	memset(m, 0, sizeof(*m));
	m->c = c;
	m->cnt_in = cnt_in ? cnt_in : &m->bytes_in;
	m->cnt_out = cnt_out ? cnt_out : &m->bytes_out;
}

void h1m_release(struct h1m *m)
{
	if (m->rx.area && !m->rx.data)
		buf_release(&m->rx);
	if (m->tx.area && !m->tx.data)
		buf_release(&m->tx);
}

void h1m_end_msgs(struct h1m *m)
{
	if (m->tlr) {
		free(m->tlr);
		m->tlr = NULL;
	}
	m->tlr_len = 0;
	m->rx_mode = m->tx_mode = H1M_B_NONE;
	m->rx_done = m->tx_done = 0;
	m->rx_left = m->tx_left = 0;
	m->rx.head = m->rx.data = 0;
	m->tx.head = m->tx.data = 0;
}

void h1m_reset(struct h1m *m)
{
	struct conn *c = m->c;
	uint64_t *in = m->cnt_in == &m->bytes_in ? NULL : m->cnt_in;
	uint64_t *out = m->cnt_out == &m->bytes_out ? NULL : m->cnt_out;

	if (m->rx.area)
		buf_release(&m->rx);
	if (m->tx.area)
		buf_release(&m->tx);
	free(m->tlr);
	h1m_init(m, c, in, out);
}

static int need_buf(struct buffer *b)
{
	return b->area || buf_alloc(b) == 0 ? 0 : -1;
}

ssize_t h1m_read(struct h1m *m, size_t limit)
{
	struct conn *c = m->c;
	ssize_t total = 0;

	if (!(c->flags & CONN_F_RD_READY) || (c->flags & (CONN_F_RD_SHUT | CONN_F_ERROR)))
		return (c->flags & CONN_F_ERROR) ? -1 : 0;
	if (need_buf(&m->rx) < 0)
		return 0;
	if (limit > m->rx.size)
		limit = m->rx.size;
	while ((c->flags & CONN_F_RD_READY) && !(c->flags & (CONN_F_RD_SHUT | CONN_F_ERROR)) &&
	       m->rx.data < limit) {
		ssize_t n;

		if (m->rx.head && buf_room(&m->rx) < limit - m->rx.data) {
			memmove(m->rx.area, buf_head(&m->rx), m->rx.data);
			m->rx.head = 0;
		}
		n = conn_recv_max(c, &m->rx, limit - m->rx.data);
		if (n <= 0)
			break;
		total += n;
	}
	*m->cnt_in += (uint64_t)total;
	if (!total && (c->flags & CONN_F_ERROR))
		return -1;
	return total;
}

/* Moves the spans of <msg> from <from> to <to> (the head was copied). */
static void msg_rebase(struct http_msg *msg, const char *from, char *to)
{
#define REBASE(s) do { if ((s).ptr >= from && (s).ptr <= from + msg->head_len) \
	(s).ptr = to + ((s).ptr - from); } while (0)
	REBASE(msg->method);
	REBASE(msg->uri);
	REBASE(msg->reason);
	REBASE(msg->version);
	for (int i = 0; i < msg->nhdrs; i++) {
		REBASE(msg->hdrs[i].name);
		REBASE(msg->hdrs[i].value);
	}
#undef REBASE
}

/* The body of the message just parsed, as it will be received. */
static void rx_body_init(struct h1m *m, const struct http_msg *msg, int is_req)
{
	m->rx_done = 0;
	m->rx_left = 0;
	if (m->tlr) {
		free(m->tlr);
		m->tlr = NULL;
	}
	m->tlr_len = 0;
	if (msg->flags & HTTP_F_TUNNEL) {
		m->rx_mode = H1M_B_TUNNEL;   /* 101 / 2xx to CONNECT: no body */
		m->rx_done = 1;
	} else if (msg->flags & HTTP_F_BODYLESS) {
		m->rx_mode = H1M_B_NONE;
		m->rx_done = 1;
	} else if (msg->flags & HTTP_F_CHUNKED) {
		m->rx_mode = H1M_B_CHUNKED;
		h1_chunk_init(&m->rx_chunk);
		m->rx_chunk.opts = H1C_O_STOP_AFTER_DATA;
	} else if (msg->flags & HTTP_F_HAS_CL) {
		m->rx_mode = H1M_B_LEN;
		m->rx_left = msg->content_length;
		m->rx_done = !m->rx_left;
	} else if (is_req || (msg->flags & HTTP_F_XFER_LEN)) {
		m->rx_mode = H1M_B_NONE;
		m->rx_done = 1;
	} else {
		m->rx_mode = H1M_B_CLOSE;
	}
}

/* Whether what rx holds past the head just parsed is all payload of a
 * body that needs no decoding (no chunks, nothing of a next message). */
static int rx_is_one_message(const struct h1m *m, const struct http_msg *msg, int is_req)
{
	size_t extra = m->rx.data - msg->head_len;

	if (!extra)
		return 1;
	if (msg->flags & (HTTP_F_TUNNEL | HTTP_F_BODYLESS | HTTP_F_CHUNKED))
		return 0;
	if (msg->flags & HTTP_F_HAS_CL)
		return extra <= msg->content_length;
	return !is_req && !(msg->flags & HTTP_F_XFER_LEN);   /* until the close */
}

/* <n> bytes of payload reached the channel along with the head. */
static void rx_account_payload(struct h1m *m, size_t n)
{
	if (m->rx_mode == H1M_B_LEN) {
		m->rx_left -= n;
		m->rx_done = !m->rx_left;
	}
}

enum h1_result h1m_rcv_head(struct h1m *m, struct buffer *chan, int is_req,
                            enum http_meth req_meth, size_t max_head, unsigned int opts,
                            struct http_msg *msg, struct h1_error *err)
{
	enum h1_result r = H1_INCOMPLETE;

	for (int pass = 0; pass < 2; pass++) {
		if (m->rx.data) {
			r = h1_parse_head(buf_head(&m->rx), m->rx.data, is_req, req_meth, max_head,
			                  opts, msg, err);
			if (r != H1_INCOMPLETE)
				break;
		}
		if (pass || h1m_read(m, max_head) <= 0)
			break;
	}
	if (r != H1_OK)
		return r;
	if (!chan->area && !m->rx.head && rx_is_one_message(m, msg, is_req)) {
		/* rx holds this message and nothing else (the common case): it
		 * becomes the channel, no copy; the spans stay valid. Only at
		 * offset 0: a head in a channel never moves (buf_realign()
		 * leaves data at offset 0 where it is); and only into a
		 * channel without a buffer, so that a buffer from the pool
		 * goes where a pool buffer is expected */
		*chan = m->rx;
		memset(&m->rx, 0, sizeof(m->rx));
		rx_body_init(m, msg, is_req);
		rx_account_payload(m, chan->data - msg->head_len);
		return H1_OK;
	}
	if (need_buf(chan) < 0 || chan->data || msg->head_len > chan->size) {
		if (err) {
			err->status = is_req ? 500 : 502;
			err->reason = "no buffer for the head";
			err->offset = 0;
		}
		return H1_ERROR;
	}
	chan->head = 0;
	memcpy(chan->area, buf_head(&m->rx), msg->head_len);
	chan->data = msg->head_len;
	msg_rebase(msg, buf_head(&m->rx), chan->area);
	buf_consume(&m->rx, msg->head_len);
	rx_body_init(m, msg, is_req);
	return H1_OK;
}

/* Keeps the trailer bytes [p, p + len) the chunk decoder went over.
 * Returns 0, -1 without memory, -2 when the section could not be sent
 * again: the sending mux writes the last chunk ("0" CRLF, the field lines,
 * CRLF) whole into its tx buffer, which is no larger than rx. */
static int keep_trailers(struct h1m *m, const char *p, size_t len)
{
	char *n;

	if (!len)
		return 0;
	if (m->tlr_len + len + 3 > m->rx.size)
		return -2;
	n = realloc(m->tlr, m->tlr_len + len);
	if (!n)
		return -1;
	memcpy(n + m->tlr_len, p, len);
	m->tlr = n;
	m->tlr_len += len;
	return 0;
}

/* Decodes chunked payload from rx into <chan>. Returns 1 on progress, 0
 * or -1 (framing error). */
static int rcv_chunked(struct h1m *m, struct buffer *chan, const char **reason)
{
	int progress = 0;

	while (m->rx.data && !m->rx_done) {
		size_t off, len, n, room, tl0 = m->rx_chunk.trailer_len, tl;
		int r;

		buf_realign(chan);
		room = buf_room(chan);
		if (!room)
			break;
		/* never decode more payload than the channel can take: the
		 * decoder is fed at most <room> bytes */
		len = m->rx.data < room ? m->rx.data : room;
		n = h1_chunk_feed(&m->rx_chunk, buf_head(&m->rx), len, &off, &len);
		if (len) {
			memcpy(buf_tail(chan), buf_head(&m->rx) + off, len);
			chan->data += len;
		}
		/* the trailer bytes of this call are the last ones it consumed */
		tl = (size_t)(m->rx_chunk.trailer_len - tl0);
		if (tl && tl <= n && (r = keep_trailers(m, buf_head(&m->rx) + n - tl, tl)) < 0) {
			*reason = r == -2 ? "trailer section larger than a buffer" :
			                    "no memory for trailers";
			return -1;
		}
		if (m->rx_chunk.st == H1C_DONE) {
			/* field lines only: the empty line that ends them is framing */
			if (m->tlr_len && m->tlr[m->tlr_len - 1] == '\n')
				m->tlr_len--;
			if (m->tlr_len && m->tlr[m->tlr_len - 1] == '\r')
				m->tlr_len--;
		}
		buf_consume(&m->rx, n);
		if (n || len)
			progress = 1;
		if (m->rx_chunk.st == H1C_ERROR) {
			*reason = m->rx_chunk.reason;
			return -1;
		}
		if (m->rx_chunk.st == H1C_DONE)
			m->rx_done = 1;
		if (!n)
			break;
	}
	return progress;
}

int h1m_rcv_body(struct h1m *m, struct buffer *chan, const char **reason)
{
	int progress = 0;

	if (m->rx_done || m->rx_mode == H1M_B_TUNNEL)
		return 0;
	if (need_buf(chan) < 0)
		return 0;
	for (int round = 0; round < 4 && !m->rx_done; round++) {
		size_t n;

		if (!m->rx.data) {
			/* payload goes straight into the channel when rx is empty
			 * and the body has a length: no copy */
			if (m->rx_mode != H1M_B_CHUNKED && (m->c->flags & CONN_F_RD_READY) &&
			    !(m->c->flags & (CONN_F_RD_SHUT | CONN_F_ERROR))) {
				size_t room, want;
				ssize_t r;

				buf_realign(chan);
				room = buf_room(chan);
				want = m->rx_mode == H1M_B_LEN && m->rx_left < room ? (size_t)m->rx_left : room;
				if (!want)
					break;
				r = conn_recv_max(m->c, chan, want);
				if (r <= 0)
					break;
				*m->cnt_in += (uint64_t)r;
				if (m->rx_mode == H1M_B_LEN) {
					m->rx_left -= (uint64_t)r;
					m->rx_done = !m->rx_left;
				}
				progress = 1;
				continue;
			}
			if (m->rx_mode != H1M_B_CHUNKED || h1m_read(m, m->rx.size ? m->rx.size : (size_t)-1) <= 0)
				break;
		}
		if (m->rx_mode == H1M_B_CHUNKED) {
			int r = rcv_chunked(m, chan, reason);

			if (r < 0)
				return -1;
			progress |= r;
			if (!r)
				break;
			continue;
		}
		buf_realign(chan);
		n = buf_room(chan);
		if (n > m->rx.data)
			n = m->rx.data;
		if (m->rx_mode == H1M_B_LEN && n > m->rx_left)
			n = (size_t)m->rx_left;
		if (!n)
			break;
		memcpy(buf_tail(chan), buf_head(&m->rx), n);
		chan->data += n;
		buf_consume(&m->rx, n);
		if (m->rx_mode == H1M_B_LEN) {
			m->rx_left -= n;
			m->rx_done = !m->rx_left;
		}
		progress = 1;
	}
	if (m->rx_mode == H1M_B_CLOSE && !m->rx.data && (m->c->flags & CONN_F_RD_SHUT))
		m->rx_done = 1;
	return progress;
}

int h1m_snd_head(struct h1m *m, const struct http_msg *msg, unsigned int h1o_flags,
                 unsigned int snd_flags)
{
	if (need_buf(&m->tx) < 0)
		return -1;
	buf_realign(&m->tx);
	if (h1_out_head_buf(msg, h1o_flags, &m->tx) < 0)
		return -1;
	if (snd_flags & H1M_SND_INTERIM)
		return 0;
	m->tx_left = 0;
	m->tx_done = 0;
	if ((msg->flags & HTTP_F_BODYLESS) && !(h1o_flags & H1O_F_ADD_CHUNKED)) {
		m->tx_mode = H1M_B_NONE;
		m->tx_done = 1;
	} else if (msg->flags & HTTP_F_TUNNEL) {
		m->tx_mode = H1M_B_TUNNEL;
		m->tx_done = 1;
	} else if ((h1o_flags & H1O_F_ADD_CHUNKED) ||
	           ((msg->flags & HTTP_F_CHUNKED) && !(h1o_flags & H1O_F_DROP_TE))) {
		m->tx_mode = H1M_B_CHUNKED;
	} else if (msg->flags & HTTP_F_HAS_CL) {
		m->tx_mode = H1M_B_LEN;
		m->tx_left = msg->content_length;
		m->tx_done = !m->tx_left;
	} else if (msg->is_request || (msg->flags & HTTP_F_XFER_LEN)) {
		m->tx_mode = H1M_B_NONE;
		m->tx_done = 1;
	} else {
		m->tx_mode = H1M_B_CLOSE;
	}
	return 0;
}

int h1m_put_raw(struct h1m *m, const void *p, size_t len)
{
	if (need_buf(&m->tx) < 0)
		return -1;
	buf_realign(&m->tx);
	if (len > buf_room(&m->tx))
		return -1;
	memcpy(buf_tail(&m->tx), p, len);
	m->tx.data += len;
	return 0;
}

/* The end of a chunked message: last chunk, trailers, empty line. */
static int put_last_chunk(struct h1m *m, const char *tlr, size_t tlr_len)
{
	if (buf_room(&m->tx) < 3 + tlr_len + 2)
		return -1;
	memcpy(buf_tail(&m->tx), "0\r\n", 3);
	m->tx.data += 3;
	if (tlr_len) {
		memcpy(buf_tail(&m->tx), tlr, tlr_len);
		m->tx.data += tlr_len;
	}
	memcpy(buf_tail(&m->tx), "\r\n", 2);
	m->tx.data += 2;
	m->tx_done = 1;
	return 0;
}

/* Copies payload from <chan> into tx, framed. Returns the bytes taken. */
static size_t put_payload(struct h1m *m, struct buffer *chan)
{
	size_t room, n;

	if (!chan->data || m->tx_done)
		return 0;
	buf_realign(&m->tx);
	room = buf_room(&m->tx);
	if (m->tx_mode == H1M_B_CHUNKED) {
		char line[CHUNK_FRAME_MAX];
		int l;

		if (room <= CHUNK_FRAME_MAX)
			return 0;
		n = chan->data < room - CHUNK_FRAME_MAX ? chan->data : room - CHUNK_FRAME_MAX;
		l = snprintf(line, sizeof(line), "%zx\r\n", n);
		memcpy(buf_tail(&m->tx), line, (size_t)l);
		m->tx.data += (size_t)l;
		memcpy(buf_tail(&m->tx), buf_head(chan), n);
		m->tx.data += n;
		memcpy(buf_tail(&m->tx), "\r\n", 2);
		m->tx.data += 2;
	} else {
		n = chan->data < room ? chan->data : room;
		if (m->tx_mode == H1M_B_LEN && n > m->tx_left)
			n = (size_t)m->tx_left;
		memcpy(buf_tail(&m->tx), buf_head(chan), n);
		m->tx.data += n;
		if (m->tx_mode == H1M_B_LEN) {
			m->tx_left -= n;
			m->tx_done = !m->tx_left;
		}
	}
	buf_consume(chan, n);
	return n;
}

int h1m_put_body(struct h1m *m, struct buffer *chan, int eom, const char *tlr, size_t tlr_len)
{
	if (need_buf(&m->tx) < 0)
		return -1;
	buf_realign(&m->tx);
	if (m->tx.head) {
		memmove(m->tx.area, buf_head(&m->tx), m->tx.data);
		m->tx.head = 0;
	}
	/* all or nothing: one chunk (or the plain bytes), the last chunk;
	 * never more than Content-Length says */
	if (buf_room(&m->tx) < chan->data + CHUNK_FRAME_MAX + 7 + tlr_len ||
	    (m->tx_mode == H1M_B_LEN && chan->data > m->tx_left))
		return -1;
	while (chan->data && put_payload(m, chan))
		;
	if (chan->data)
		return -1;
	if (eom && !m->tx_done) {
		if (m->tx_mode == H1M_B_CHUNKED)
			return put_last_chunk(m, tlr, tlr_len);
		m->tx_done = 1;
	}
	return 0;
}

int h1m_flush(struct h1m *m)
{
	int progress = 0;

	while (m->tx.data && (m->c->flags & CONN_F_WR_READY) && !(m->c->flags & CONN_F_ERROR)) {
		ssize_t n = conn_send(m->c, &m->tx);

		if (n <= 0)
			break;
		*m->cnt_out += (uint64_t)n;
		progress = 1;
	}
	if (m->c->flags & CONN_F_ERROR)
		return -1;
	return progress;
}

int h1m_snd_body(struct h1m *m, struct buffer *chan, int eom, const char *tlr, size_t tlr_len)
{
	int progress = 0;

	for (int round = 0; round < 4; round++) {
		int p = 0;

		if (m->tx.data) {
			int r;

			/* a head (or framing) waits: the payload joins it, so
			 * that both leave in one send */
			if (chan->data && !m->tx_done && put_payload(m, chan))
				p = 1;
			r = h1m_flush(m);

			if (r < 0)
				return -1;
			p |= r;
			if (m->tx.data)
				break;   /* blocked */
		}
		if (chan->data && !m->tx_done && m->tx_mode != H1M_B_CHUNKED &&
		    (m->c->flags & CONN_F_WR_READY) && !(m->c->flags & CONN_F_ERROR)) {
			/* Content-Length or close: straight from the channel */
			size_t max = m->tx_mode == H1M_B_LEN && m->tx_left < chan->data ?
			             (size_t)m->tx_left : chan->data;
			ssize_t n = conn_send_max(m->c, chan, max);

			if (n > 0) {
				*m->cnt_out += (uint64_t)n;
				if (m->tx_mode == H1M_B_LEN) {
					m->tx_left -= (uint64_t)n;
					m->tx_done = !m->tx_left;
				}
				p = 1;
			} else if (m->c->flags & CONN_F_ERROR) {
				return -1;
			}
		} else if (chan->data && !m->tx_done && m->tx_mode == H1M_B_CHUNKED) {
			if (need_buf(&m->tx) < 0)
				break;
			if (put_payload(m, chan))
				p = 1;
		}
		if (eom && !chan->data && !m->tx_done) {
			if (m->tx_mode == H1M_B_CHUNKED) {
				if (need_buf(&m->tx) < 0 || put_last_chunk(m, tlr, tlr_len) < 0) {
					/* payload may have moved this round: say so */
					progress |= p;
					break;
				}
			} else {
				m->tx_done = 1;
			}
			p = 1;
		}
		progress |= p;
		if (!p || (!m->tx.data && (!chan->data || m->tx_done)))
			break;
	}
	if (m->tx.data && h1m_flush(m) < 0)
		return -1;
	return progress;
}

int h1m_rx_to_chan(struct h1m *m, struct buffer *chan)
{
	if (!m->rx.data)
		return 0;
	if (need_buf(chan) < 0)
		return -1;
	buf_realign(chan);
	if (m->rx.data > buf_room(chan))
		return -1;
	memcpy(buf_tail(chan), buf_head(&m->rx), m->rx.data);
	chan->data += m->rx.data;
	m->rx.head = m->rx.data = 0;
	return 0;
}

int h1m_prepend_raw(struct h1m *m, const void *p, size_t len)
{
	if (need_buf(&m->tx) < 0)
		return -1;
	return buf_prepend(&m->tx, p, len);
}

int h1m_take_rx(struct h1m *m, struct buffer *b)
{
	if (!b->data)
		return 0;
	if (need_buf(&m->rx) < 0)
		return -1;
	buf_realign(&m->rx);
	if (b->data > buf_room(&m->rx))
		return -1;
	memcpy(buf_tail(&m->rx), buf_head(b), b->data);
	m->rx.data += b->data;
	b->head = b->data = 0;
	return 0;
}
