/* What a stream does to the stick-table entries it tracks (track-sc0/1/2,
 * src/http/act_stk.c takes the references): the counters of sessions,
 * HTTP requests, errors, failures and bytes, and the release of the
 * references, with conn_cur going down, at the end of a transaction or of
 * the connection. Owner thread of the stream; the entries' counters are
 * atomics (stktable.h).
 */
#include <sluice/proxy/stktable.h>
#include <sluice/proxy/stream.h>

static void add2(struct stkctr *c, enum stkt_dt cnt, enum stkt_dt rate, uint64_t n)
{
	stkt_add(c->table, c->entry, cnt, n);
	stkt_add(c->table, c->entry, rate, n);
}

void stkctr_session_new(struct stream *s)
{
	for (int i = 0; i < STKT_MAX_CTR; i++)
		if (s->stkctr[i].entry)
			add2(&s->stkctr[i], STKT_DT_SESS_CNT, STKT_DT_SESS_RATE, 1);
}

void stkctr_http_request(struct stream *s, int error)
{
	for (int i = 0; i < STKT_MAX_CTR; i++) {
		if (!s->stkctr[i].entry)
			continue;
		add2(&s->stkctr[i], STKT_DT_HTTP_REQ_CNT, STKT_DT_HTTP_REQ_RATE, 1);
		if (error)
			add2(&s->stkctr[i], STKT_DT_HTTP_ERR_CNT, STKT_DT_HTTP_ERR_RATE, 1);
	}
}

void stkctr_http_error(struct stream *s)
{
	for (int i = 0; i < STKT_MAX_CTR; i++)
		if (s->stkctr[i].entry)
			add2(&s->stkctr[i], STKT_DT_HTTP_ERR_CNT, STKT_DT_HTTP_ERR_RATE, 1);
}

void stkctr_http_status(struct stream *s, int status)
{
	for (int i = 0; i < STKT_MAX_CTR; i++) {
		if (!s->stkctr[i].entry)
			continue;
		if (status >= 400 && status < 500)
			add2(&s->stkctr[i], STKT_DT_HTTP_ERR_CNT, STKT_DT_HTTP_ERR_RATE, 1);
		else if (status >= 500 && status < 600 && status != 501 && status != 505)
			add2(&s->stkctr[i], STKT_DT_HTTP_FAIL_CNT, STKT_DT_HTTP_FAIL_RATE, 1);
	}
}

void stkctr_bytes(struct stream *s, uint64_t in, uint64_t out)
{
	for (int i = 0; i < STKT_MAX_CTR; i++) {
		if (!s->stkctr[i].entry)
			continue;
		if (in)
			add2(&s->stkctr[i], STKT_DT_BYTES_IN_CNT, STKT_DT_BYTES_IN_RATE, in);
		if (out)
			add2(&s->stkctr[i], STKT_DT_BYTES_OUT_CNT, STKT_DT_BYTES_OUT_RATE, out);
	}
}

static void ctr_release(struct stkctr *c)
{
	if (!c->shared)
		stkt_dec(c->table, c->entry, STKT_DT_CONN_CUR);
	stktable_release(c->table, c->entry);
	memset(c, 0, sizeof(*c));
}

void stkctr_release(struct stream *s, int content_only)
{
	for (int i = 0; i < STKT_MAX_CTR; i++) {
		struct stkctr *c = &s->stkctr[i];

		if (!c->entry || (content_only && c->sess))
			continue;
		ctr_release(c);
	}
}

void stkctr_take_session(struct stream *s, struct stkctr *dst)
{
	for (int i = 0; i < STKT_MAX_CTR; i++) {
		if (!s->stkctr[i].entry || !s->stkctr[i].sess)
			continue;
		dst[i] = s->stkctr[i];
		memset(&s->stkctr[i], 0, sizeof(s->stkctr[i]));
	}
}

void stkctr_share_session(struct stream *s, const struct stkctr *src)
{
	for (int i = 0; i < STKT_MAX_CTR; i++) {
		if (!src[i].entry)
			continue;
		stktable_ref(src[i].entry);
		s->stkctr[i] = src[i];
		s->stkctr[i].shared = 1;
	}
}

void stkctr_release_array(struct stkctr *c)
{
	for (int i = 0; i < STKT_MAX_CTR; i++)
		if (c[i].entry)
			ctr_release(&c[i]);
}
