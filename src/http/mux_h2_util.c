/* What the two HTTP/2 muxes share: see mux_h2_int.h. */
#include <stdlib.h>
#include <string.h>
#include <sluice/core/global.h>
#include <sluice/http/h2c.h>
#include <sluice/net/conn.h>
#include "mux_h2_int.h"

/* rounds of engine output and send per call of h2m_write() */
#define H2M_WRITE_ROUNDS 4

int h2m_rx_put(struct buffer *rx, const char *p, size_t len, size_t window)
{
	size_t need, max = (window > 65535 ? window : 65535) + (size_t)global.bufsize;
	char *n;

	buf_realign(rx);
	if (!rx->area || len > buf_room(rx)) {
		if (rx->head) {
			memmove(rx->area, buf_head(rx), rx->data);
			rx->head = 0;
		}
		need = rx->data + len;
		if (need > max)
			return -1;   /* beyond any window we opened */
		if (need < (size_t)global.bufsize)
			need = (size_t)global.bufsize;
		n = realloc(rx->area, need);
		if (!n)
			return -1;
		rx->area = n;
		rx->size = need;
	}
	memcpy(buf_tail(rx), p, len);
	rx->data += len;
	return 0;
}

size_t h2m_rx_move(struct buffer *rx, struct buffer *chan)
{
	size_t n;

	if (!rx->data || (!chan->area && buf_alloc(chan) < 0))
		return 0;
	buf_realign(chan);
	n = buf_room(chan);
	if (n > rx->data)
		n = rx->data;
	if (!n)
		return 0;
	memcpy(buf_tail(chan), buf_head(rx), n);
	chan->data += n;
	buf_consume(rx, n);
	return n;
}

int h2m_fields_to_lines(const struct http_msg *msg, char **out, size_t *len)
{
	size_t need = 0, w = 0;
	char *p;

	for (int i = 0; i < msg->nhdrs; i++)
		if (msg->hdrs[i].name.len)
			need += msg->hdrs[i].name.len + msg->hdrs[i].value.len + 4;
	if (!need)
		return 0;
	p = malloc(need);
	if (!p)
		return -1;
	for (int i = 0; i < msg->nhdrs; i++) {
		const struct http_hdr *f = &msg->hdrs[i];

		if (!f->name.len)
			continue;
		memcpy(p + w, f->name.ptr, f->name.len);
		w += f->name.len;
		memcpy(p + w, ": ", 2);
		w += 2;
		memcpy(p + w, f->value.ptr, f->value.len);
		w += f->value.len;
		memcpy(p + w, "\r\n", 2);
		w += 2;
	}
	free(*out);
	*out = p;
	*len = w;
	return 0;
}

int h2m_lines_to_fields(const char *p, size_t len, struct http_hdr *h, int max)
{
	int n = 0;

	while (len && n < max) {
		const char *eol = memchr(p, '\n', len);
		size_t l = eol ? (size_t)(eol - p) : len;
		const char *colon = memchr(p, ':', l);

		if (colon) {
			const char *v = colon + 1;
			size_t vl = l - (size_t)(v - p);

			while (vl && (*v == ' ' || *v == '\t'))
				v++, vl--;
			while (vl && (v[vl - 1] == '\r' || v[vl - 1] == ' ' || v[vl - 1] == '\t'))
				vl--;
			h[n].name = (struct ist){ p, (size_t)(colon - p) };
			h[n].value = (struct ist){ v, vl };
			n++;
		}
		if (!eol)
			break;
		len -= l + 1;
		p = eol + 1;
	}
	return n;
}

int h2m_write(struct conn *c, struct h2c *h2, struct buffer *tx, int pull)
{
	int progress = 0;

	for (int round = 0; round < H2M_WRITE_ROUNDS; round++) {
		if (pull && h2c_want_write(h2)) {
			ssize_t n;

			if (!tx->area && buf_alloc(tx) < 0)
				break;
			buf_realign(tx);
			if (tx->head) {
				memmove(tx->area, buf_head(tx), tx->data);
				tx->head = 0;
			}
			n = h2c_send(h2, buf_tail(tx), buf_room(tx));
			if (n > 0)
				tx->data += (size_t)n;
		}
		if (!tx->data)
			break;
		if (!(c->flags & CONN_F_WR_READY))
			break;
		if (conn_send(c, tx) <= 0) {
			if (c->flags & CONN_F_ERROR)
				return -1;
			break;
		}
		progress = 1;
	}
	if (tx->area && !tx->data)
		buf_release(tx);
	return progress;
}
