/* The HTTP cache's parsers of network input: Cache-Control directives,
 * HTTP dates, Accept-Encoding codings, entity tags. Pure functions on
 * spans, no allocation; fuzzed by fuzz/fuzz_cache_cc.c.
 */
#include <ctype.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <sluice/http/cache.h>

static int ows(char c)
{
	return c == ' ' || c == '\t';
}

/* The next comma-separated element of [*p, end), OWS trimmed, quoted
 * strings kept whole. Returns 0 at the end. */
static int next_elem(const char **p, const char *end, const char **s, size_t *len)
{
	const char *q = *p, *e;
	int quoted = 0;

	while (q < end && (ows(*q) || *q == ','))
		q++;
	if (q >= end)
		return 0;
	for (e = q; e < end; e++) {
		if (*e == '"' && (e == q || e[-1] != '\\'))
			quoted = !quoted;
		else if (*e == ',' && !quoted)
			break;
	}
	*p = e;
	while (e > q && ows(e[-1]))
		e--;
	*s = q;
	*len = (size_t)(e - q);
	return 1;
}

static int name_is(const char *s, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len == n && strncasecmp(s, name, n) == 0;
}

/* A delta-seconds argument (RFC 9111 section 1.2.2), quotes tolerated;
 * a value too large for the counter is the largest one. -1 if invalid. */
static long delta_seconds(const char *v, size_t len)
{
	long r = 0;

	if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
		v++;
		len -= 2;
	}
	if (!len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)v[i]))
			return -1;
		if (r > (INT_MAX - 9) / 10)
			r = INT_MAX;
		else
			r = r * 10 + (v[i] - '0');
	}
	return r;
}

void cache_cc_parse(const char *v, size_t len, struct cache_cc *cc)
{
	const char *p = v, *end = v + len, *s;
	size_t l;

	while (next_elem(&p, end, &s, &l)) {
		const char *eq = memchr(s, '=', l);
		size_t nl = eq ? (size_t)(eq - s) : l;
		const char *arg = eq ? eq + 1 : NULL;
		size_t al = eq ? l - nl - 1 : 0;
		long d;

		while (nl && ows(s[nl - 1]))
			nl--;
		while (arg && al && ows(*arg)) {
			arg++;
			al--;
		}
		if (name_is(s, nl, "max-age") || name_is(s, nl, "max-stale") ||
		    name_is(s, nl, "min-fresh"))
			cc->fresh_ctl = 1;
		if (name_is(s, nl, "no-cache"))
			cc->no_cache = 1;
		else if (name_is(s, nl, "no-store"))
			cc->no_store = 1;
		else if (name_is(s, nl, "private"))
			cc->private_ = 1;
		else if (name_is(s, nl, "public"))
			cc->public_ = 1;
		else if (name_is(s, nl, "max-age") && arg && (d = delta_seconds(arg, al)) >= 0) {
			cc->has_max_age = 1;
			cc->max_age = d;
		} else if (name_is(s, nl, "s-maxage") && arg && (d = delta_seconds(arg, al)) >= 0) {
			cc->has_s_maxage = 1;
			cc->s_maxage = d;
		}
	}
}

/* ---- dates ---- */

static int month_of(const char *m)
{
	static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";

	for (int i = 0; i < 12; i++)
		if (strncmp(m, names + 3 * i, 3) == 0)
			return i + 1;
	return 0;
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int num(const char *p, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)p[i]))
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return 0;
}

/* "HH:MM:SS" */
static int hms(const char *p, int *h, int *mi, int *s)
{
	if (p[2] != ':' || p[5] != ':' || num(p, 2, h) || num(p + 3, 2, mi) || num(p + 6, 2, s))
		return -1;
	return *h < 24 && *mi < 60 && *s <= 60 ? 0 : -1;
}

int64_t cache_http_date(const char *v, size_t len)
{
	char b[64];
	const char *comma;
	int d, mo, y, h, mi, s;

	while (len && ows(*v)) {
		v++;
		len--;
	}
	while (len && ows(v[len - 1]))
		len--;
	if (len >= sizeof(b) || len < 24)
		return -1;
	memcpy(b, v, len);
	b[len] = '\0';
	comma = memchr(b, ',', len);
	if (comma && comma == b + 3) {
		/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
		if (len != 29 || b[4] != ' ' || b[7] != ' ' || b[11] != ' ' || b[16] != ' ' ||
		    b[25] != ' ' || strcmp(b + 26, "GMT") != 0)
			return -1;
		if (num(b + 5, 2, &d) || !(mo = month_of(b + 8)) || num(b + 12, 4, &y) ||
		    hms(b + 17, &h, &mi, &s))
			return -1;
	} else if (comma) {
		/* RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT" */
		const char *p = comma + 1;

		if ((size_t)(p - b) + 23 != len || p[0] != ' ' || p[3] != '-' || p[7] != '-' ||
		    p[10] != ' ' || p[19] != ' ' || strcmp(p + 20, "GMT") != 0)
			return -1;
		if (num(p + 1, 2, &d) || !(mo = month_of(p + 4)) || num(p + 8, 2, &y) ||
		    hms(p + 11, &h, &mi, &s))
			return -1;
		y += y < 70 ? 2000 : 1900;   /* RFC 9110 section 5.6.7 */
	} else {
		/* asctime: "Sun Nov  6 08:49:37 1994" */
		char dd[2];

		if (len != 24 || b[3] != ' ' || b[7] != ' ' || b[10] != ' ' || b[19] != ' ')
			return -1;
		dd[0] = b[8] == ' ' ? '0' : b[8];
		dd[1] = b[9];
		if (!(mo = month_of(b + 4)) || num(dd, 2, &d) || hms(b + 11, &h, &mi, &s) ||
		    num(b + 20, 4, &y))
			return -1;
	}
	if (d < 1 || d > 31)
		return -1;
	return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

/* ---- content codings ---- */

/* The codings of IANA's HTTP Content Coding Registry, and "*" (bit 11);
 * the x- aliases share their coding's bit (RFC 9110 section 8.4.1) */
static const struct { const char *name; int bit; } codings[] = {
	{ "identity", 0 }, { "gzip", 1 }, { "deflate", 2 }, { "br", 3 }, { "compress", 4 },
	{ "x-gzip", 1 }, { "x-compress", 4 }, { "exi", 7 }, { "pack200-gzip", 8 },
	{ "aes128gcm", 9 }, { "zstd", 10 }, { "*", 11 }, { NULL, 0 }
};

uint32_t cache_coding_bit(const char *v, size_t len)
{
	for (int i = 0; codings[i].name; i++)
		if (name_is(v, len, codings[i].name))
			return 1u << codings[i].bit;
	return 0;
}

/* Whether parameters <p> (after the first ';') hold q=0 (0, 0.0, 0.000). */
static int q_zero(const char *p, size_t len)
{
	const char *end = p + len;

	while (p < end) {
		while (p < end && (ows(*p) || *p == ';'))
			p++;
		if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			p += 2;
			if (p >= end || *p != '0')
				return 0;
			for (p++; p < end && *p != ';' && !ows(*p); p++)
				if (*p != '.' && *p != '0')
					return 0;
			return 1;
		}
		while (p < end && *p != ';')
			p++;
	}
	return 0;
}

uint32_t cache_accept_encoding(const char *v, size_t len, uint32_t *refused)
{
	const char *p = v, *end = v + len, *s;
	uint32_t bits = 0;
	size_t l;

	while (next_elem(&p, end, &s, &l)) {
		const char *semi = memchr(s, ';', l);
		size_t nl = semi ? (size_t)(semi - s) : l;
		uint32_t b;

		while (nl && ows(s[nl - 1]))
			nl--;
		b = cache_coding_bit(s, nl);
		if (semi && q_zero(semi, l - (size_t)(semi - s)))
			*refused |= b;
		else
			bits |= b;
	}
	return bits;
}

/* ---- entity tags ---- */

/* The opaque part of an entity tag, "W/" dropped (weak comparison). */
static void etag_opaque(const char **s, size_t *len)
{
	if (*len >= 2 && (*s)[0] == 'W' && (*s)[1] == '/') {
		*s += 2;
		*len -= 2;
	}
}

int cache_etag_match(const char *inm, size_t ilen, const char *etag, size_t elen)
{
	const char *p = inm, *end = inm + ilen, *s;
	size_t l;

	etag_opaque(&etag, &elen);
	while (next_elem(&p, end, &s, &l)) {
		if (l == 1 && s[0] == '*')
			return 1;
		etag_opaque(&s, &l);
		if (l == elen && elen && memcmp(s, etag, l) == 0)
			return 1;
	}
	return 0;
}
