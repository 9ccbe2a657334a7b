/* Per-thread pool of I/O buffers. Each thread keeps a bounded cache of free
 * buffer areas; allocation and release touch only the calling thread's
 * cache (thread-local, no lock), so the hot path never calls malloc once the
 * cache is warm. A buffer released by another thread than the one that
 * allocated it simply joins that thread's cache. */
#include <stdlib.h>
#include <sluice/core/buf.h>
#include <sluice/core/global.h>

#define POOL_CACHE_MAX 4096

struct free_area {
	struct free_area *next;
};

static __thread struct free_area *cache;
static __thread int cached;

int buf_alloc(struct buffer *b)
{
	struct free_area *f = cache;

	b->size = (size_t)global.bufsize;
	b->head = b->data = 0;
	if (f) {
		cache = f->next;
		cached--;
		b->area = (char *)f;
		return 0;
	}
	b->area = malloc(b->size);
	return b->area ? 0 : -1;
}

void buf_release(struct buffer *b)
{
	if (!b->area)
		return;
	if (cached < POOL_CACHE_MAX) {
		struct free_area *f = (struct free_area *)b->area;

		f->next = cache;
		cache = f;
		cached++;
	} else {
		free(b->area);
	}
	b->area = NULL;
	b->size = b->head = b->data = 0;
}
