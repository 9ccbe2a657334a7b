/* Linear I/O buffers: data lives at area[head .. head+data). Buffers of
 * tune.bufsize bytes come from a per-thread pool (pool.c). */
#ifndef SLUICE_CORE_BUF_H
#define SLUICE_CORE_BUF_H

#include <stddef.h>
#include <string.h>

struct buffer {
	char *area;
	size_t size;
	size_t head;
	size_t data;
};

static inline size_t buf_room(const struct buffer *b)
{
	return b->size - b->head - b->data;
}

/* Makes all free space contiguous at the tail. */
static inline void buf_realign(struct buffer *b)
{
	if (!b->data)
		b->head = 0;
	else if (b->head && buf_room(b) < b->size / 2) {
		memmove(b->area, b->area + b->head, b->data);
		b->head = 0;
	}
}

static inline char *buf_tail(struct buffer *b)
{
	return b->area + b->head + b->data;
}

static inline char *buf_head(struct buffer *b)
{
	return b->area + b->head;
}

static inline void buf_consume(struct buffer *b, size_t n)
{
	b->head += n;
	b->data -= n;
	if (!b->data)
		b->head = 0;
}

/* Puts <len> bytes in front of the data. Returns 0, -1 if no room. */
static inline int buf_prepend(struct buffer *b, const void *p, size_t len)
{
	if (b->data + len > b->size)
		return -1;
	if (b->head < len) {
		memmove(b->area + len, b->area + b->head, b->data);
		b->head = len;
	}
	b->head -= len;
	b->data += len;
	memcpy(b->area + b->head, p, len);
	return 0;
}

/* Per-thread pool of tune.bufsize buffers. */
int  buf_alloc(struct buffer *b);
void buf_release(struct buffer *b);

#endif
