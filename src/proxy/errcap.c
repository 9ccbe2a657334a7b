/* Captures of invalid requests and responses (`show errors`).
 *
 * Each proxy keeps the last request its frontend refused and the last
 * response its backend refused, as HAProxy does. The slots are allocated
 * by the first error of the proxy (an atomic compare-and-swap of the
 * pointer; the loser frees its copy) and never freed before exit, and
 * each slot's buffer is tune.bufsize bytes at most: memory is bounded by
 * the number of proxies, never by traffic. A capture is written by the
 * thread whose stream saw the error, and read by the CLI, under the slots'
 * lock, which is taken only on an error or a `show errors`, for a copy of
 * one buffer.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sluice/core/global.h>
#include <sluice/core/lock.h>
#include <sluice/proxy/errcap.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>

struct errcap_slots {
	struct sl_lock lock;
	struct errcap cap[2];        /* request, response; data NULL: none */
};

static _Atomic uint32_t errcap_events;

uint32_t errcap_total(void)
{
	return atomic_load(&errcap_events);
}

static struct errcap_slots *errcap_slots_get(struct proxy *px)
{
	struct errcap_slots *sl = atomic_load(&px->errcap), *exp = NULL;

	if (sl)
		return sl;
	sl = calloc(1, sizeof(*sl));
	if (!sl)
		return NULL;
	lock_init(&sl->lock, LK_OTHER, "errcap");
	if (!atomic_compare_exchange_strong(&px->errcap, &exp, sl)) {
		lock_destroy(&sl->lock);
		free(sl);
		return exp;
	}
	return sl;
}

void errcap_record(struct proxy *px, int is_resp, const struct proxy *other,
                   const struct server *srv, const struct sockaddr_storage *src,
                   const char *buf, size_t len, size_t pos, const char *reason)
{
	struct errcap_slots *sl = errcap_slots_get(px);
	size_t cap = global.bufsize > 0 ? (size_t)global.bufsize : 16384;
	uint32_t ev = atomic_fetch_add(&errcap_events, 1);
	struct errcap *c;
	struct timeval tv;
	char *data;

	if (!sl)
		return;
	gettimeofday(&tv, NULL);
	lock_take(&sl->lock);
	c = &sl->cap[is_resp ? 1 : 0];
	data = c->data;
	if (!data)
		data = malloc(cap);   /* once per slot: errors are rare */
	if (!data) {
		lock_release(&sl->lock);
		return;
	}
	memset(c, 0, sizeof(*c));
	c->data = data;
	c->when_ms = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
	c->event = ev;
	c->is_resp = is_resp;
	snprintf(c->other, sizeof(c->other), "%s", other ? other->name : "<NONE>");
	c->other_id = other ? other->uuid : -1;
	snprintf(c->srv, sizeof(c->srv), "%s", srv ? srv->name : "<NONE>");
	c->srv_id = srv ? srv->puid : -1;
	if (src)
		c->src = *src;
	c->len = len;
	c->pos = pos;
	snprintf(c->reason, sizeof(c->reason), "%s", reason ? reason : "");
	c->bufsize = cap;
	c->data_len = len < cap ? len : cap;
	memcpy(c->data, buf, c->data_len);
	lock_release(&sl->lock);
}

int errcap_get(struct proxy *px, int is_resp, struct errcap *out)
{
	struct errcap_slots *sl = atomic_load(&px->errcap);
	const struct errcap *c;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (!sl)
		return -1;
	lock_take(&sl->lock);
	c = &sl->cap[is_resp ? 1 : 0];
	if (c->data && c->when_ms) {
		*out = *c;
		out->data = malloc(c->data_len ? c->data_len : 1);
		if (out->data) {
			memcpy(out->data, c->data, c->data_len);
			ret = 0;
		}
	}
	lock_release(&sl->lock);
	return ret;
}

void errcap_release(struct errcap *c)
{
	free(c->data);
	c->data = NULL;
}

void errcap_free(struct proxy *px)
{
	struct errcap_slots *sl = atomic_exchange(&px->errcap, NULL);

	if (!sl)
		return;
	free(sl->cap[0].data);
	free(sl->cap[1].data);
	lock_destroy(&sl->lock);
	free(sl);
}
