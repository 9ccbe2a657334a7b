/* String and binary converters (manual section 7.3.1): case, slicing,
 * fields and words, regex substitution, JSON escaping, hex and URL
 * encodings, concatenation, IP masks, dates. No shared state; results go
 * into the calling thread's scratch buffers.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/regex.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include <sluice/core/hexdigit.h>

const int expr_conv_str_anchor;

#define C(name) static int smp_conv_##name(const struct smp_args *args, \
	struct sample *smp, struct smp_ctx *ctx)

C(lower); C(upper); C(length); C(bytes); C(field); C(word); C(regsub); C(json);
C(hex); C(hex2i); C(be2dec); C(be2hex); C(url_dec); C(url_enc); C(concat);
C(add_item); C(iif); C(ipmask); C(ltrim); C(rtrim); C(cut_crlf); C(strcmp);
C(htonl); C(http_date); C(utime); C(ltime); C(host_only); C(port_only); C(language);
#undef C

static int check_field(struct smp_args *args, char *err, size_t errlen);
static int check_regsub(struct smp_args *args, char *err, size_t errlen);
static int check_json(struct smp_args *args, char *err, size_t errlen);
static int check_be2dec(struct smp_args *args, char *err, size_t errlen);
static int check_be2hex(struct smp_args *args, char *err, size_t errlen);
static int check_url_enc(struct smp_args *args, char *err, size_t errlen);
static int check_concat(struct smp_args *args, char *err, size_t errlen);
static int check_add_item(struct smp_args *args, char *err, size_t errlen);
static int check_var1(struct smp_args *args, char *err, size_t errlen);
static int smp_conv_capture(const struct smp_args *args, struct sample *smp,
                            struct smp_ctx *ctx);
static int check_date_unit(struct smp_args *args, char *err, size_t errlen);

static const struct smp_conv_kw str_convs[] = {
	{ "lower",    smp_conv_lower,    { 0 }, 0, NULL, SMP_T_STR, SMP_T_STR },
	{ "upper",    smp_conv_upper,    { 0 }, 0, NULL, SMP_T_STR, SMP_T_STR },
	{ "length",   smp_conv_length,   { 0 }, 0, NULL, SMP_T_STR, SMP_T_SINT },
	{ "bytes",    smp_conv_bytes,    { ARGT_SINT, ARGT_SINT }, 1, NULL, SMP_T_BIN, SMP_T_BIN },
	{ "field",    smp_conv_field,    { ARGT_SINT, ARGT_STR, ARGT_SINT }, 2, check_field, SMP_T_STR, SMP_T_STR },
	{ "word",     smp_conv_word,     { ARGT_SINT, ARGT_STR, ARGT_SINT }, 2, check_field, SMP_T_STR, SMP_T_STR },
	{ "regsub",   smp_conv_regsub,   { ARGT_STR, ARGT_STR, ARGT_STR }, 2, check_regsub, SMP_T_STR, SMP_T_STR },
	{ "json",     smp_conv_json,     { ARGT_STR }, 0, check_json, SMP_T_STR, SMP_T_STR },
	{ "hex",      smp_conv_hex,      { 0 }, 0, NULL, SMP_T_BIN, SMP_T_STR },
	{ "hex2i",    smp_conv_hex2i,    { 0 }, 0, NULL, SMP_T_STR, SMP_T_SINT },
	{ "be2dec",   smp_conv_be2dec,   { ARGT_STR, ARGT_SINT, ARGT_SINT }, 2, check_be2dec, SMP_T_BIN, SMP_T_STR },
	{ "be2hex",   smp_conv_be2hex,   { ARGT_STR, ARGT_SINT, ARGT_SINT }, 0, check_be2hex, SMP_T_BIN, SMP_T_STR },
	{ "url_dec",  smp_conv_url_dec,  { ARGT_SINT }, 0, NULL, SMP_T_STR, SMP_T_STR },
	{ "url_enc",  smp_conv_url_enc,  { ARGT_STR }, 0, check_url_enc, SMP_T_STR, SMP_T_STR },
	{ "concat",   smp_conv_concat,   { ARGT_STR, ARGT_STR, ARGT_STR }, 0, check_concat, SMP_T_STR, SMP_T_STR },
	{ "add_item", smp_conv_add_item, { ARGT_STR, ARGT_STR, ARGT_STR }, 2, check_add_item, SMP_T_STR, SMP_T_STR },
	{ "iif",      smp_conv_iif,      { ARGT_STR, ARGT_STR }, 2, NULL, SMP_T_BOOL, SMP_T_STR },
	{ "ipmask",   smp_conv_ipmask,   { ARGT_MSK4, ARGT_MSK6 }, 1, NULL, SMP_T_ADDR, SMP_T_ADDR },
	{ "ltrim",    smp_conv_ltrim,    { ARGT_STR }, 1, NULL, SMP_T_STR, SMP_T_STR },
	{ "rtrim",    smp_conv_rtrim,    { ARGT_STR }, 1, NULL, SMP_T_STR, SMP_T_STR },
	{ "cut_crlf", smp_conv_cut_crlf, { 0 }, 0, NULL, SMP_T_STR, SMP_T_STR },
	{ "strcmp",   smp_conv_strcmp,   { ARGT_STR }, 1, check_var1, SMP_T_STR, SMP_T_SINT },
	{ "htonl",    smp_conv_htonl,    { 0 }, 0, NULL, SMP_T_SINT, SMP_T_BIN },
	{ "http_date", smp_conv_http_date, { ARGT_SINT, ARGT_STR }, 0, check_date_unit, SMP_T_SINT, SMP_T_STR },
	{ "utime",    smp_conv_utime,    { ARGT_STR, ARGT_SINT }, 1, NULL, SMP_T_SINT, SMP_T_STR },
	{ "ltime",    smp_conv_ltime,    { ARGT_STR, ARGT_SINT }, 1, NULL, SMP_T_SINT, SMP_T_STR },
	{ "host_only", smp_conv_host_only, { 0 }, 0, NULL, SMP_T_STR, SMP_T_STR },
	{ "port_only", smp_conv_port_only, { 0 }, 0, NULL, SMP_T_STR, SMP_T_SINT },
	{ "language", smp_conv_language, { ARGT_STR, ARGT_STR }, 1, NULL, SMP_T_STR, SMP_T_STR },
	{ "capture-req", smp_conv_capture, { ARGT_SINT }, 1, NULL, SMP_T_STR, SMP_T_STR },
	{ "capture-res", smp_conv_capture, { ARGT_SINT }, 1, NULL, SMP_T_STR, SMP_T_STR,
	  (const void *)1 },
	{ NULL }
};
SMP_REGISTER_CONVS(str_convs)

static int has_arg(const struct smp_args *args, int i)
{
	return args->n > i && args->a[i].type != ARGT_STOP;
}

/* A writable copy of the input in a fresh scratch buffer, keeping <in>. */
static void take_input(struct sample *smp, struct smp_str *in, enum smp_type out)
{
	*in = smp->data.str;
	smp_set_trash(smp, out);
}

/* ------------------------------------------------------------------ case, length, slices */

static int smp_conv_lower(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	if (!smp_make_rw(smp, 0))
		return 0;
	for (size_t i = 0; i < smp->data.str.len; i++)
		smp->data.str.ptr[i] = (char)tolower((unsigned char)smp->data.str.ptr[i]);
	return 1;
}

static int smp_conv_upper(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	if (!smp_make_rw(smp, 0))
		return 0;
	for (size_t i = 0; i < smp->data.str.len; i++)
		smp->data.str.ptr[i] = (char)toupper((unsigned char)smp->data.str.ptr[i]);
	return 1;
}

static int smp_conv_length(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, (int64_t)smp->data.str.len);
	return 1;
}

/* Past the end gives an empty block, as HAProxy does. */
static int smp_conv_bytes(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t off = args->a[0].data.sint;
	size_t len = smp->data.str.len;

	if (off < 0)
		return 0;
	if ((uint64_t)off >= len) {
		smp->data.str.len = 0;
		return 1;
	}
	smp->data.str.ptr += off;
	smp->data.str.len -= (size_t)off;
	if (smp->data.str.size)
		smp->data.str.size -= (size_t)off;
	if (has_arg(args, 1)) {
		if (args->a[1].data.sint < 0)
			return 0;
		if ((uint64_t)args->a[1].data.sint < smp->data.str.len)
			smp->data.str.len = (size_t)args->a[1].data.sint;
	}
	return 1;
}

static int check_field(struct smp_args *args, char *err, size_t errlen)
{
	if (args->a[0].data.sint == 0)
		return errmsg_set(err, errlen, "Unexpected value 0 for index");
	if (!args->a[1].data.str.len)
		return errmsg_set(err, errlen, "Empty separators list");
	if (has_arg(args, 2) && args->a[2].data.sint < 0)
		return errmsg_set(err, errlen, "Unexpected negative value for count");
	return 0;
}

/* Splits <s> into at most 1024 tokens at any byte of <delims>. With
 * <words>, empty tokens are dropped. Returns the count. */
#define MAX_TOKENS 1024
struct token { size_t start, end; };

static int tokenize(struct smp_str s, const struct smp_arg *delims, int words,
                    struct token *tok)
{
	int n = 0;
	size_t start = 0;

	for (size_t i = 0; i <= s.len; i++) {
		if (i < s.len && !memchr(delims->data.str.ptr, s.ptr[i], delims->data.str.len))
			continue;
		if (!words || i > start) {
			if (n == MAX_TOKENS)
				return -1;
			tok[n].start = start;
			tok[n].end = i;
			n++;
		}
		start = i + 1;
	}
	return n;
}

/* The tokens from index <idx> (1-based, negative from the end), <count> of
 * them (0: all the rest in that direction), as one span of the input. */
static int select_tokens(const struct smp_args *args, struct sample *smp, int words)
{
	static __thread struct token tok[MAX_TOKENS];
	int64_t idx = args->a[0].data.sint;
	int64_t count = has_arg(args, 2) ? args->a[2].data.sint : 1;
	int n = tokenize(smp->data.str, &args->a[1], words, tok);
	int64_t first, last;

	if (n < 0)
		return 0;
	if (idx > 0) {
		first = idx;
		last = count ? idx + count - 1 : n;
		if (last > n)
			last = n;
	} else {
		last = n + idx + 1;
		first = count ? last - count + 1 : 1;
		if (first < 1)
			first = 1;
	}
	if (first < 1 || first > n || last < first) {
		if (words) {           /* word(): an empty result, field(): none */
			smp->data.str.len = 0;
			return 1;
		}
		return 0;
	}
	smp->data.str.ptr += tok[first - 1].start;
	smp->data.str.len = tok[last - 1].end - tok[first - 1].start;
	if (smp->data.str.size)
		smp->data.str.size -= tok[first - 1].start;
	return 1;
}

static int smp_conv_field(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return select_tokens(args, smp, 0);
}

static int smp_conv_word(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return select_tokens(args, smp, 1);
}

/* ------------------------------------------------------------------ regsub */

struct regsub {
	struct regex *re;
	int global;
};

static void free_regsub(void *p)
{
	struct regsub *r = p;

	regex_free(r->re);
	free(r);
}

static int check_regsub(struct smp_args *args, char *err, size_t errlen)
{
	struct regsub *r = calloc(1, sizeof(*r));
	int icase = 0;

	if (!r)
		return errmsg_set(err, errlen, "out of memory");
	if (has_arg(args, 2)) {
		for (const char *f = args->a[2].data.str.ptr; *f; f++) {
			if (*f == 'g')
				r->global = 1;
			else if (*f == 'i')
				icase = 1;
			else {
				free(r);
				return errmsg_set(err, errlen, "invalid regex flag '%c' (g, i)", *f);
			}
		}
	}
	r->re = regex_compile(args->a[0].data.str.ptr, icase, err, errlen);
	if (!r->re) {
		free(r);
		return -1;
	}
	args->priv = r;
	args->free_priv = free_regsub;
	return 0;
}

static int smp_conv_regsub(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct regsub *r = args->priv;
	const struct smp_arg *subst = &args->a[1];
	long ovec[2 * REGEX_MAX_GROUPS];
	struct smp_str in;
	size_t pos = 0;
	int n;

	take_input(smp, &in, SMP_T_STR);
	while (pos <= in.len &&
	       (n = regex_match_groups(r->re, in.ptr, in.len, pos, ovec, REGEX_MAX_GROUPS)) > 0) {
		long w;

		if (!smp_str_append(smp, in.ptr + pos, (size_t)ovec[0] - pos))
			return 0;
		w = regex_expand(subst->data.str.ptr, subst->data.str.len, in.ptr, ovec, n,
		                 smp->data.str.ptr + smp->data.str.len,
		                 smp->data.str.size - smp->data.str.len);
		if (w < 0)
			return 0;
		smp->data.str.len += (size_t)w;
		pos = (size_t)ovec[1];
		if (ovec[1] == ovec[0]) {      /* empty match: step over one byte */
			if (pos < in.len && !smp_str_append(smp, in.ptr + pos, 1))
				return 0;
			pos++;
		}
		if (!r->global)
			break;
	}
	if (pos < in.len && !smp_str_append(smp, in.ptr + pos, in.len - pos))
		return 0;
	return 1;
}

/* ------------------------------------------------------------------ json */

enum json_mode { JSON_ASCII, JSON_UTF8, JSON_UTF8S, JSON_UTF8P, JSON_UTF8PS };

static int check_json(struct smp_args *args, char *err, size_t errlen)
{
	static const char *const modes[] = { "ascii", "utf8", "utf8s", "utf8p", "utf8ps" };

	args->priv = (void *)(intptr_t)JSON_ASCII;
	if (!has_arg(args, 0) || !args->a[0].data.str.len)
		return 0;
	for (int i = 0; i < 5; i++)
		if (strcmp(args->a[0].data.str.ptr, modes[i]) == 0) {
			args->priv = (void *)(intptr_t)i;
			return 0;
		}
	return errmsg_set(err, errlen, "unexpected input code type '%s' (ascii, utf8, utf8s, "
	                  "utf8p, utf8ps)", args->a[0].data.str.ptr);
}

/* Decodes one UTF-8 character. Returns its length (0: error) and sets *cp;
 * *overlong when it used more bytes than needed. */
static size_t utf8_decode(const unsigned char *p, size_t len, uint32_t *cp, int *overlong)
{
	size_t n;
	uint32_t v;

	*overlong = 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0) { n = 2; v = p[0] & 0x1f; }
	else if ((p[0] & 0xf0) == 0xe0) { n = 3; v = p[0] & 0x0f; }
	else if ((p[0] & 0xf8) == 0xf0) { n = 4; v = p[0] & 0x07; }
	else
		return 0;
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3f);
	}
	if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) || (n == 4 && v < 0x10000))
		*overlong = 1;
	if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

static int json_escape_cp(struct sample *smp, uint32_t c)
{
	char buf[8];

	switch (c) {
	case '"':  return smp_str_append(smp, "\\\"", 2);
	case '\\': return smp_str_append(smp, "\\\\", 2);
	case '/':  return smp_str_append(smp, "\\/", 2);
	case '\b': return smp_str_append(smp, "\\b", 2);
	case '\f': return smp_str_append(smp, "\\f", 2);
	case '\n': return smp_str_append(smp, "\\n", 2);
	case '\r': return smp_str_append(smp, "\\r", 2);
	case '\t': return smp_str_append(smp, "\\t", 2);
	}
	if (c >= 0x20 && c < 0x7f) {
		buf[0] = (char)c;
		return smp_str_append(smp, buf, 1);
	}
	if (c > 0xffff)
		return 0;       /* JSON escapes have 4 hex digits only */
	snprintf(buf, sizeof(buf), "\\u%04x", c);
	return smp_str_append(smp, buf, 6);
}

static int smp_conv_json(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	enum json_mode mode = (enum json_mode)(intptr_t)args->priv;
	const unsigned char *p;
	struct smp_str in;

	take_input(smp, &in, SMP_T_STR);
	p = (const unsigned char *)in.ptr;
	for (size_t i = 0; i < in.len;) {
		uint32_t cp;
		int overlong, silent = mode == JSON_UTF8S || mode == JSON_UTF8PS;
		size_t n;

		if (mode == JSON_ASCII) {
			if (!json_escape_cp(smp, p[i++]))
				return 0;
			continue;
		}
		n = utf8_decode(p + i, in.len - i, &cp, &overlong);
		if (n && overlong && mode != JSON_UTF8P && mode != JSON_UTF8PS)
			n = 0;
		if (!n || cp > 0xffff) {
			if (!silent)
				return 0;
			i += n ? n : 1;
			continue;
		}
		if (!json_escape_cp(smp, cp))
			return 0;
		i += n;
	}
	return 1;
}

/* ------------------------------------------------------------------ hex and integers */

static const char hexdig[] = "0123456789ABCDEF";

static int smp_conv_hex(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct smp_str in;

	take_input(smp, &in, SMP_T_STR);
	if (in.len * 2 > smp->data.str.size)
		return 0;
	for (size_t i = 0; i < in.len; i++) {
		unsigned char c = (unsigned char)in.ptr[i];

		smp->data.str.ptr[2 * i] = hexdig[c >> 4];
		smp->data.str.ptr[2 * i + 1] = hexdig[c & 15];
	}
	smp->data.str.len = in.len * 2;
	return 1;
}

static int smp_conv_hex2i(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	uint64_t v = 0;

	for (size_t i = 0; i < smp->data.str.len; i++) {
		int d = hex_digit_value(smp->data.str.ptr[i]);

		if (d < 0)
			return 0;
		v = (v << 4) | (uint64_t)d;
	}
	smp_set_sint(smp, (int64_t)v);
	return 1;
}

static int check_be2dec(struct smp_args *args, char *err, size_t errlen)
{
	if (args->a[1].data.sint < 1 || args->a[1].data.sint > 8)
		return errmsg_set(err, errlen, "chunk size must be between 1 and 8");
	return 0;
}

static int check_be2hex(struct smp_args *args, char *err, size_t errlen)
{
	if (has_arg(args, 1) && args->a[1].data.sint < 1)
		return errmsg_set(err, errlen, "chunk size must be positive");
	return 0;
}

static int smp_conv_be2dec(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	size_t chunk = (size_t)args->a[1].data.sint;
	int trunc = has_arg(args, 2) && args->a[2].data.sint;
	const struct smp_arg *sep = &args->a[0];
	struct smp_str in;

	take_input(smp, &in, SMP_T_STR);
	for (size_t i = 0; i < in.len; i += chunk) {
		size_t n = in.len - i < chunk ? in.len - i : chunk;
		uint64_t v = 0;
		char num[24];

		if (n < chunk && trunc)
			break;
		for (size_t k = 0; k < n; k++)
			v = (v << 8) | (unsigned char)in.ptr[i + k];
		if (i && !smp_str_append(smp, sep->data.str.ptr, sep->data.str.len))
			return 0;
		if (!smp_str_append(smp, num, (size_t)snprintf(num, sizeof(num), "%llu", (unsigned long long)v)))
			return 0;
	}
	return 1;
}

static int smp_conv_be2hex(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	size_t chunk = has_arg(args, 1) ? (size_t)args->a[1].data.sint : 1;
	int trunc = has_arg(args, 2) && args->a[2].data.sint;
	struct smp_str in, sep = { NULL, 0, 0 };

	if (has_arg(args, 0)) {
		sep.ptr = args->a[0].data.str.ptr;
		sep.len = args->a[0].data.str.len;
	}
	take_input(smp, &in, SMP_T_STR);
	for (size_t i = 0; i < in.len; i += chunk) {
		size_t n = in.len - i < chunk ? in.len - i : chunk;

		if (n < chunk && trunc)
			break;
		if (i && sep.len && !smp_str_append(smp, sep.ptr, sep.len))
			return 0;
		for (size_t k = 0; k < n; k++) {
			unsigned char c = (unsigned char)in.ptr[i + k];
			char h[2] = { hexdig[c >> 4], hexdig[c & 15] };

			if (!smp_str_append(smp, h, 2))
				return 0;
		}
	}
	return 1;
}

static int smp_conv_htonl(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	uint32_t v = htonl((uint32_t)smp->data.sint);

	smp_set_trash(smp, SMP_T_BIN);
	memcpy(smp->data.str.ptr, &v, 4);
	smp->data.str.len = 4;
	return 1;
}

/* ------------------------------------------------------------------ URL encoding */

/* '+' is a space in a form, or anywhere after the '?' of a URL. */
static int smp_conv_url_dec(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int in_query = has_arg(args, 0) && args->a[0].data.sint;
	struct smp_str in;

	take_input(smp, &in, SMP_T_STR);
	for (size_t i = 0; i < in.len; i++) {
		char c = in.ptr[i];

		if (c == '%') {
			int h, l;

			if (i + 2 >= in.len)
				return 0;
			h = hex_digit_value(in.ptr[i + 1]);
			l = hex_digit_value(in.ptr[i + 2]);
			if (h < 0 || l < 0)
				return 0;
			c = (char)(h << 4 | l);
			i += 2;
		} else if (c == '?') {
			in_query = 1;
		} else if (c == '+' && in_query) {
			c = ' ';
		}
		if (!smp_str_append(smp, &c, 1))
			return 0;
	}
	return 1;
}

static int check_url_enc(struct smp_args *args, char *err, size_t errlen)
{
	if (has_arg(args, 0) && args->a[0].data.str.len &&
	    strcmp(args->a[0].data.str.ptr, "query") != 0)
		return errmsg_set(err, errlen, "unexpected encode type '%s' (only 'query')",
		                  args->a[0].data.str.ptr);
	return 0;
}

/* Query encoding: everything but letters, digits and "-._~" (RFC 3986
 * unreserved characters). */
static int smp_conv_url_enc(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct smp_str in;

	take_input(smp, &in, SMP_T_STR);
	for (size_t i = 0; i < in.len; i++) {
		unsigned char c = (unsigned char)in.ptr[i];

		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
			if (!smp_str_append(smp, &c, 1))
				return 0;
		} else {
			char e[3] = { '%', hexdig[c >> 4], hexdig[c & 15] };

			if (!smp_str_append(smp, e, 3))
				return 0;
		}
	}
	return 1;
}

/* ------------------------------------------------------------------ concatenation */

/* The middle argument names a variable (or is empty). */
static int check_mid_var(struct smp_args *args, char *err, size_t errlen)
{
	if (args->n > 1 && args->a[1].text[0]) {
		if (vars_parse_ref(args->a[1].text, strlen(args->a[1].text), &args->a[1].data.var,
		                   err, errlen) < 0)
			return -1;
		args->a[1].type = ARGT_VAR;
	} else if (args->n > 1)
		args->a[1].type = ARGT_STOP;
	return 0;
}

static int check_concat(struct smp_args *args, char *err, size_t errlen)
{
	return check_mid_var(args, err, errlen);
}

static int check_add_item(struct smp_args *args, char *err, size_t errlen)
{
	if (check_mid_var(args, err, errlen) < 0)
		return -1;
	if (args->a[1].type != ARGT_VAR && (args->n < 3 || !args->a[2].text[0]))
		return errmsg_set(err, errlen, "a variable or a suffix is required");
	return 0;
}

static int check_var1(struct smp_args *args, char *err, size_t errlen)
{
	if (vars_parse_ref(args->a[0].text, strlen(args->a[0].text), &args->a[0].data.var,
	                   err, errlen) < 0)
		return -1;
	args->a[0].type = ARGT_VAR;
	return 0;
}

/* The variable's value as a string (not set: empty, *found 0). */
static int var_as_str(const struct smp_arg *a, struct smp_ctx *ctx, struct sample *v)
{
	memset(v, 0, sizeof(*v));
	if (a->type != ARGT_VAR || !vars_get(ctx, &a->data.var, v))
		return 0;
	return smp_cast(v, SMP_T_STR);
}

static int smp_conv_concat(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct sample v;

	if (!smp_make_rw(smp, 0))
		return 0;
	if (args->n > 0 && !smp_str_append(smp, args->a[0].data.str.ptr, args->a[0].data.str.len))
		return 0;
	if (args->n > 1 && var_as_str(&args->a[1], ctx, &v) &&
	    !smp_str_append(smp, v.data.str.ptr, v.data.str.len))
		return 0;
	if (args->n > 2 && !smp_str_append(smp, args->a[2].data.str.ptr, args->a[2].data.str.len))
		return 0;
	return 1;
}

static int smp_conv_add_item(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct sample v;
	int has_var = var_as_str(&args->a[1], ctx, &v);
	int has_suffix = args->n > 2 && args->a[2].data.str.len;

	if (!smp_make_rw(smp, 0))
		return 0;
	if (smp->data.str.len && (has_var || has_suffix) &&
	    !smp_str_append(smp, args->a[0].data.str.ptr, args->a[0].data.str.len))
		return 0;
	if (has_var && !smp_str_append(smp, v.data.str.ptr, v.data.str.len))
		return 0;
	if (has_suffix && !smp_str_append(smp, args->a[2].data.str.ptr, args->a[2].data.str.len))
		return 0;
	return 1;
}

static int smp_conv_iif(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct smp_arg *a = &args->a[smp->data.sint ? 0 : 1];

	smp_set_const_str(smp, SMP_T_STR, a->data.str.ptr, a->data.str.len);
	return 1;
}

static int smp_conv_strcmp(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct sample v;
	size_t n;
	int r;

	if (!var_as_str(&args->a[0], ctx, &v))
		return 0;
	n = smp->data.str.len < v.data.str.len ? smp->data.str.len : v.data.str.len;
	r = memcmp(smp->data.str.ptr, v.data.str.ptr, n);
	if (!r)
		r = smp->data.str.len < v.data.str.len ? -1 : smp->data.str.len > v.data.str.len;
	smp_set_sint(smp, r);
	return 1;
}

/* ------------------------------------------------------------------ trimming */

static int smp_conv_ltrim(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct smp_arg *set = &args->a[0];

	while (smp->data.str.len &&
	       memchr(set->data.str.ptr, smp->data.str.ptr[0], set->data.str.len)) {
		smp->data.str.ptr++;
		smp->data.str.len--;
		if (smp->data.str.size)
			smp->data.str.size--;
	}
	return 1;
}

static int smp_conv_rtrim(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct smp_arg *set = &args->a[0];

	while (smp->data.str.len &&
	       memchr(set->data.str.ptr, smp->data.str.ptr[smp->data.str.len - 1], set->data.str.len))
		smp->data.str.len--;
	return 1;
}

static int smp_conv_cut_crlf(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	for (size_t i = 0; i < smp->data.str.len; i++)
		if (smp->data.str.ptr[i] == '\r' || smp->data.str.ptr[i] == '\n') {
			smp->data.str.len = i;
			break;
		}
	return 1;
}

/* ------------------------------------------------------------------ addresses */

/* Only an IPv4-mapped address (::ffff:a.b.c.d, RFC 4291 section 2.5.5.2)
 * is masked as IPv4, as HAProxy 2.6 does: "::1", "::a.b.c.d" and 6to4
 * addresses stay IPv6 (smp_ipv6_to_ipv4() also takes those, for matching). */
static int smp_conv_ipmask(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (smp->type == SMP_T_IPV6 && memcmp(smp->data.ipv6.s6_addr, v4mapped, 12) == 0) {
		struct in_addr a4;

		memcpy(&a4.s_addr, &smp->data.ipv6.s6_addr[12], 4);
		smp->type = SMP_T_IPV4;
		smp->data.ipv4 = a4;
	}
	if (smp->type == SMP_T_IPV4) {
		smp->data.ipv4.s_addr &= args->a[0].data.ipv4.s_addr;
		return 1;
	}
	if (smp->type != SMP_T_IPV6 || !has_arg(args, 1))
		return 0;
	for (int i = 0; i < 16; i++)
		smp->data.ipv6.s6_addr[i] &= args->a[1].data.ipv6.s6_addr[i];
	return 1;
}

/* Host header value "host[:port]" or "[v6][:port]": the host, lower case. */
static int split_host_port(const struct smp_str *s, size_t *hlen, const char **port, size_t *plen)
{
	const char *p = s->ptr, *e = s->ptr + s->len, *c;

	if (p < e && *p == '[') {
		c = memchr(p, ']', s->len);
		if (!c)
			return 0;
		c++;
	} else {
		c = memchr(p, ':', s->len);
		if (!c)
			c = e;
	}
	*hlen = (size_t)(c - p);
	if (c < e && *c == ':') {
		*port = c + 1;
		*plen = (size_t)(e - c - 1);
	} else {
		*port = NULL;
		*plen = 0;
	}
	return 1;
}

static int smp_conv_host_only(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const char *port;
	size_t hlen, plen;

	if (!split_host_port(&smp->data.str, &hlen, &port, &plen))
		return 0;
	smp->data.str.len = hlen;
	return smp_conv_lower(args, smp, ctx);
}

static int smp_conv_port_only(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const char *port;
	size_t hlen, plen;
	int64_t v = 0;

	if (!split_host_port(&smp->data.str, &hlen, &port, &plen))
		return 0;
	if (port && !smp_str_to_sint(port, plen, &v))
		return 0;
	smp_set_sint(smp, v);
	return 1;
}

/* ------------------------------------------------------------------ dates */

/* priv: units per second of the input (1, 1000, 1000000) */
static int check_date_unit(struct smp_args *args, char *err, size_t errlen)
{
	intptr_t unit = 1;

	if (has_arg(args, 1)) {
		if (smp_parse_time_unit(args->a[1].data.str.ptr, &unit, err, errlen) < 0)
			return -1;
	}
	args->priv = (void *)unit;
	return 0;
}

/* IMF-fixdate (RFC 9110 section 5.6.7); the input is in the unit of the
 * second argument (s, ms, us), the offset too. With ms or us the remainder
 * follows the seconds as HAProxy 2.6 prints it: '.' and the plain number,
 * unpadded ("01.250", but 1005 ms gives "01.5") and negative for a negative
 * input. Like HAProxy, the seconds keep their low 55 bits, so a negative
 * date gives a far future year rather than a failure. */
static int smp_conv_http_date(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char mons[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul",
	                                  "Aug", "Sep", "Oct", "Nov", "Dec" };
	int64_t unit = (intptr_t)args->priv ? (intptr_t)args->priv : 1;
	int64_t v = (int64_t)((uint64_t)smp->data.sint +
	                      (uint64_t)(has_arg(args, 0) ? args->a[0].data.sint : 0));
	time_t t = (time_t)((v / unit) & 0x007fffffffffffffLL);
	char frac[24] = "";
	struct tm tm;

	if (unit > 1)
		snprintf(frac, sizeof(frac), ".%d", (int)(v % unit));
	if (!gmtime_r(&t, &tm))
		return 0;
	smp_set_trash(smp, SMP_T_STR);
	smp->data.str.len = (size_t)snprintf(smp->data.str.ptr, smp->data.str.size,
		"%s, %02d %s %04d %02d:%02d:%02d%s GMT", days[tm.tm_wday], tm.tm_mday,
		mons[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	return 1;
}

static int fmt_time(const struct smp_args *args, struct sample *smp, int local)
{
	time_t t = (time_t)(smp->data.sint + (has_arg(args, 1) ? args->a[1].data.sint : 0));
	struct tm tm;

	if (!(local ? localtime_r(&t, &tm) : gmtime_r(&t, &tm)))
		return 0;
	smp_set_trash(smp, SMP_T_STR);
	smp->data.str.len = strftime(smp->data.str.ptr, smp->data.str.size,
	                             args->a[0].data.str.ptr, &tm);
	return 1;
}

static int smp_conv_utime(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fmt_time(args, smp, 0);
}

static int smp_conv_ltime(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fmt_time(args, smp, 1);
}

/* ------------------------------------------------------------------ language */

static struct ist trim_ows(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return (struct ist){ p, (size_t)(e - p) };
}

/* "q=0.8" as thousandths (1000 when absent or invalid). */
static int qvalue(const char *p, const char *e)
{
	int q = 0, digits = 0;

	while (p < e && (*p == ' ' || *p == ';'))
		p++;
	if (e - p < 3 || p[0] != 'q' || p[1] != '=')
		return 1000;
	p += 2;
	if (*p == '1')
		return 1000;
	if (*p++ != '0')
		return 1000;
	if (p < e && *p == '.')
		for (p++; p < e && *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
			q = q * 10 + (*p - '0');
	while (digits++ < 3)
		q *= 10;
	return q;
}

/* The value of the list "a;b;c" equal to <lang>, or to its part before
 * '-' when no value equals it whole. */
static int lang_pick(const struct smp_arg *list, const char *lang, size_t len,
                     const char **v, size_t *vlen)
{
	for (int pass = 0; pass < 2; pass++) {
		const char *p = list->data.str.ptr, *e = p + list->data.str.len;
		size_t l = len;

		if (pass) {
			const char *dash = memchr(lang, '-', len);

			if (!dash)
				return 0;
			l = (size_t)(dash - lang);
		}
		while (p < e) {
			const char *semi = memchr(p, ';', (size_t)(e - p));
			const char *end = semi ? semi : e;

			if ((size_t)(end - p) == l && memcmp(p, lang, l) == 0) {
				*v = p;
				*vlen = l;
				return 1;
			}
			p = end + 1;
		}
	}
	return 0;
}

/* language(<values>[,<default>]) on an Accept-Language value: the allowed
 * value with the highest q-factor, the first one on ties, q=0 ignored. */
static int smp_conv_language(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const char *p = smp->data.str.ptr, *e = p + smp->data.str.len, *best = NULL;
	size_t best_len = 0;
	int best_q = 0;

	while (p < e) {
		const char *comma = memchr(p, ',', (size_t)(e - p)), *end = comma ? comma : e;
		const char *semi = memchr(p, ';', (size_t)(end - p)), *v;
		struct ist lang = trim_ows(p, semi ? semi : end);
		int q = semi ? qvalue(semi, end) : 1000;
		size_t vlen;

		if (q > best_q && lang_pick(&args->a[0], lang.ptr, lang.len, &v, &vlen)) {
			best = v;
			best_len = vlen;
			best_q = q;
		}
		p = end + 1;
	}
	if (!best) {
		if (args->n < 2)
			return 0;
		best = args->a[1].data.str.ptr;
		best_len = args->a[1].data.str.len;
	}
	smp_set_const_str(smp, SMP_T_STR, best, best_len);
	return 1;
}

/* capture-req(<id>), capture-res(<id>): the input, also stored in the
 * frontend's capture slot <id> (declare capture); a slot that does not
 * exist is ignored, as HAProxy does. */
static int smp_conv_capture(const struct smp_args *args, struct sample *smp,
                            struct smp_ctx *ctx)
{
	int res = args->kw_priv != NULL;

	if (ctx->ops && ctx->ops->capture)
		ctx->ops->capture(ctx, res, args->a[0].data.sint, smp->data.str.ptr,
		                  smp->data.str.len);
	return 1;
}
