/* libFuzzer target: the HTTP cache's parsers of network input
 * (src/http/cache_rules.c): Cache-Control, HTTP dates, Accept-Encoding,
 * entity tags.
 *
 * Input, split on '\n': a Cache-Control value, an HTTP-date, an
 * Accept-Encoding value, an If-None-Match list, an entity tag. Checked
 * beyond the sanitizers:
 * - Cache-Control read whole or element by element (split on ',', when no
 *   quote could change the splitting) gives the same directives, and a
 *   delta-seconds value is never negative;
 * - a date that parses is printed again as an IMF-fixdate, which parses
 *   to the same time;
 * - Accept-Encoding read whole or element by element gives the same sets;
 *   "*" and the identity have their bits;
 * - an If-None-Match list holding "*" matches any tag; a tag matches a list
 *   made of itself; W/ never changes the result of a weak comparison.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sluice/http/cache.h>

static const char *field(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *nl;

	if (s >= end) {
		*len = 0;
		return s;
	}
	nl = memchr(s, '\n', (size_t)(end - s));
	*len = nl ? (size_t)(nl - s) : (size_t)(end - s);
	*p = nl ? nl + 1 : end;
	return s;
}

static void check_cc(const char *v, size_t len)
{
	struct cache_cc whole = { 0 }, parts = { 0 };
	const char *p = v, *end = v + len;

	cache_cc_parse(v, len, &whole);
	assert(!whole.has_max_age || whole.max_age >= 0);
	assert(!whole.has_s_maxage || whole.s_maxage >= 0);
	if (memchr(v, '"', len))
		return;
	while (p <= end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		size_t n = c ? (size_t)(c - p) : (size_t)(end - p);

		cache_cc_parse(p, n, &parts);
		if (!c)
			break;
		p = c + 1;
	}
	assert(whole.no_cache == parts.no_cache && whole.no_store == parts.no_store &&
	       whole.private_ == parts.private_ && whole.public_ == parts.public_ &&
	       whole.has_max_age == parts.has_max_age && whole.has_s_maxage == parts.has_s_maxage &&
	       whole.fresh_ctl == parts.fresh_ctl);
	assert(!whole.has_max_age || whole.max_age == parts.max_age);
	assert(!whole.has_s_maxage || whole.s_maxage == parts.s_maxage);
}

static void check_date(const char *v, size_t len)
{
	int64_t t = cache_http_date(v, len), t2;
	char out[64];
	struct tm tm;
	time_t tt;

	if (t < 0)
		return;
	tt = (time_t)t;
	if (!gmtime_r(&tt, &tm) || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0)
		return;
	strftime(out, sizeof(out), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	t2 = cache_http_date(out, strlen(out));
	assert(t2 == t);
}

static void check_ae(const char *v, size_t len)
{
	uint32_t rw = 0, rp = 0, bw, bp = 0;
	const char *p = v, *end = v + len;

	bw = cache_accept_encoding(v, len, &rw);
	if (memchr(v, '"', len))
		return;
	while (p <= end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		size_t n = c ? (size_t)(c - p) : (size_t)(end - p);

		bp |= cache_accept_encoding(p, n, &rp);
		if (!c)
			break;
		p = c + 1;
	}
	assert(bw == bp && rw == rp);
	assert(cache_coding_bit("*", 1) == CACHE_CODING_ANY);
	assert(cache_coding_bit("identity", 8) == CACHE_CODING_IDENTITY);
}

static void check_etag(const char *inm, size_t ilen, const char *tag, size_t tlen)
{
	char list[600];
	int m = cache_etag_match(inm, ilen, tag, tlen);

	if (tlen + 3 < sizeof(list) && tlen && !memchr(tag, ',', tlen) && !memchr(tag, '"', tlen) &&
	    tag[0] != ' ' && tag[0] != '\t' && tag[tlen - 1] != ' ' && tag[tlen - 1] != '\t' &&
	    !(tlen == 2 && tag[0] == 'W' && tag[1] == '/')) {
		/* a tag matches itself, weak or not */
		assert(cache_etag_match(tag, tlen, tag, tlen));
		if (tag[0] != 'W' || tlen < 2 || tag[1] != '/') {
			memcpy(list, "W/", 2);
			memcpy(list + 2, tag, tlen);
			assert(cache_etag_match(list, tlen + 2, tag, tlen));
		}
	}
	/* (an unclosed quote in the list would swallow the ",*") */
	if (ilen + 3 < sizeof(list) && !memchr(inm, '"', ilen)) {
		memcpy(list, inm, ilen);
		memcpy(list + ilen, ",*", 2);
		assert(cache_etag_match(list, ilen + 2, tag, tlen));
	}
	(void)m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *v[5];
	size_t l[5];

	for (int i = 0; i < 5; i++)
		v[i] = field(&p, end, &l[i]);
	check_cc(v[0], l[0]);
	check_date(v[1], l[1]);
	check_ae(v[2], l[2]);
	check_etag(v[3], l[3], v[4], l[4]);
	return 0;
}
