/* json_query(<path>[,<output_type>]): a value out of a JSON document.
 *
 * Paths supported: "$" followed by ".name" (a backslash protects a dot in a
 * name: "$.my\.key"), "['name']" / "[\"name\"]" and "[N]" steps. Results
 * follow HAProxy 2.6 (checked against it), which users' rules rely on:
 * - a string is returned unescaped; "\u00XX" gives the single byte 0xXX,
 *   any other "\uXXXX" (and an unknown escape such as "\/") makes the
 *   converter fail, as HAProxy decodes no UTF-8;
 * - true/false give a boolean, with or without "int";
 * - a number without "int" is read as a double and printed with "%g"
 *   (1234567 gives "1.23457e+06", 2.50 gives "2.5");
 * - a number with "int" is its leading integer (2.50 gives 2; "010" is
 *   octal, as C's strtoll with base 0 reads it), and fails outside
 *   +/-(2^53 - 1), the integers a JSON double holds exactly;
 * - "int" on a string leaves the string;
 * - objects, arrays and null make the converter fail.
 * The document is scanned once; nesting is limited to JSON_MAX_DEPTH.
 *
 * jwt_header_query([<path>[,<type>]]) and jwt_payload_query(...): the first
 * or second dot-separated part of a JSON Web Token, base64url-decoded,
 * then queried like json_query() when a path is given.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/sample.h>
#include <sluice/core/hexdigit.h>

const int expr_conv_json_anchor;

static int smp_conv_json_query(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx);
static int smp_conv_jwt_query(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx);
static int check_json_query(struct smp_args *args, char *err, size_t errlen);
static int check_jwt_query(struct smp_args *args, char *err, size_t errlen);

static const int jwt_header = 0, jwt_payload = 1;

static const struct smp_conv_kw json_convs[] = {
	{ "json_query", smp_conv_json_query, { ARGT_STR, ARGT_STR }, 1, check_json_query,
	  SMP_T_STR, SMP_T_ANY },
	{ "jwt_header_query", smp_conv_jwt_query, { ARGT_STR, ARGT_STR }, 0, check_jwt_query,
	  SMP_T_STR, SMP_T_ANY, &jwt_header },
	{ "jwt_payload_query", smp_conv_jwt_query, { ARGT_STR, ARGT_STR }, 0, check_jwt_query,
	  SMP_T_STR, SMP_T_ANY, &jwt_payload },
	{ NULL }
};
SMP_REGISTER_CONVS(json_convs)

#define JSON_MAX_DEPTH 64
#define JSON_MAX_STEPS 32

struct json_step {
	int is_index;
	long index;
	char *name;                /* unescaped */
	size_t len;
};

struct json_path {
	int nsteps;
	int want_int;
	struct json_step steps[JSON_MAX_STEPS];
};

static void free_path(void *p)
{
	struct json_path *jp = p;

	for (int i = 0; i < jp->nsteps; i++)
		free(jp->steps[i].name);
	free(jp);
}

static int add_name(struct json_path *jp, const char *s, size_t len)
{
	struct json_step *st = &jp->steps[jp->nsteps];
	size_t n = 0;

	st->name = malloc(len + 1);
	if (!st->name)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len)
			i++;
		st->name[n++] = s[i];
	}
	st->name[n] = '\0';
	st->len = n;
	jp->nsteps++;
	return 0;
}

static int check_json_query(struct smp_args *args, char *err, size_t errlen)
{
	const char *p = args->a[0].data.str.ptr;
	struct json_path *jp = calloc(1, sizeof(*jp));

	if (!jp)
		return errmsg_set(err, errlen, "out of memory");
	args->priv = jp;
	args->free_priv = free_path;
	if (args->n > 1 && args->a[1].data.str.len) {
		if (strcmp(args->a[1].data.str.ptr, "int") != 0)
			return errmsg_set(err, errlen, "output_type only supports \"int\" as argument");
		jp->want_int = 1;
	}
	if (*p++ != '$')
		return errmsg_set(err, errlen, "json path must start with '$'");
	while (*p) {
		if (jp->nsteps == JSON_MAX_STEPS)
			return errmsg_set(err, errlen, "json path too deep");
		if (*p == '.') {
			const char *s = ++p;

			while (*p && *p != '.' && *p != '[') {
				if (*p == '\\' && p[1])
					p++;
				p++;
			}
			if (p == s)
				return errmsg_set(err, errlen, "empty name in json path");
			if (add_name(jp, s, (size_t)(p - s)) < 0)
				return errmsg_set(err, errlen, "out of memory");
		} else if (*p == '[') {
			p++;
			if (*p == '\'' || *p == '"') {
				char q = *p++;
				const char *s = p;

				while (*p && *p != q)
					p++;
				if (*p != q || p[1] != ']')
					return errmsg_set(err, errlen, "unterminated name in json path");
				if (add_name(jp, s, (size_t)(p - s)) < 0)
					return errmsg_set(err, errlen, "out of memory");
				p += 2;
			} else {
				char *end;
				long idx = strtol(p, &end, 10);

				if (end == p || *end != ']' || idx < 0)
					return errmsg_set(err, errlen, "invalid array index in json path");
				jp->steps[jp->nsteps].is_index = 1;
				jp->steps[jp->nsteps++].index = idx;
				p = end + 1;
			}
		} else
			return errmsg_set(err, errlen, "unexpected '%c' in json path", *p);
	}
	return 0;
}

/* ------------------------------------------------------------------ scanner */

struct scan {
	const char *p, *e;
};

static void skip_ws(struct scan *s)
{
	while (s->p < s->e && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* Skips a string (at its opening quote). */
static int skip_string(struct scan *s)
{
	for (s->p++; s->p < s->e; s->p++) {
		if (*s->p == '\\')
			s->p++;
		else if (*s->p == '"') {
			s->p++;
			return 1;
		}
	}
	return 0;
}

static int skip_value(struct scan *s, int depth)
{
	skip_ws(s);
	if (s->p >= s->e || depth > JSON_MAX_DEPTH)
		return 0;
	if (*s->p == '"')
		return skip_string(s);
	if (*s->p == '{' || *s->p == '[') {
		char close = *s->p == '{' ? '}' : ']';
		int obj = close == '}';

		s->p++;
		skip_ws(s);
		if (s->p < s->e && *s->p == close) {
			s->p++;
			return 1;
		}
		for (;;) {
			if (obj) {
				skip_ws(s);
				if (s->p >= s->e || *s->p != '"' || !skip_string(s))
					return 0;
				skip_ws(s);
				if (s->p >= s->e || *s->p++ != ':')
					return 0;
			}
			if (!skip_value(s, depth + 1))
				return 0;
			skip_ws(s);
			if (s->p >= s->e)
				return 0;
			if (*s->p == close) {
				s->p++;
				return 1;
			}
			if (*s->p++ != ',')
				return 0;
		}
	}
	/* number, true, false, null */
	while (s->p < s->e && !strchr(",}] \t\r\n", *s->p))
		s->p++;
	return 1;
}

/* Compares the JSON string at s->p (escapes decoded for the simple ones)
 * with <name>; leaves s->p after the string. */
static int string_eq(struct scan *s, const char *name, size_t len)
{
	const char *start = s->p + 1;
	size_t n = 0;
	int eq = 1;

	if (!skip_string(s))
		return -1;
	for (const char *q = start; q < s->p - 1; q++) {
		char c = *q;

		if (c == '\\') {
			c = *++q;
			if (c == 'n') c = '\n';
			else if (c == 't') c = '\t';
			else if (c == 'r') c = '\r';
			else if (c == 'b') c = '\b';
			else if (c == 'f') c = '\f';
		}
		if (n >= len || name[n] != c)
			eq = 0;
		n++;
	}
	return eq && n == len;
}

static int find_step(struct scan *s, const struct json_step *st)
{
	skip_ws(s);
	if (s->p >= s->e)
		return 0;
	if (st->is_index) {
		if (*s->p != '[')
			return 0;
		s->p++;
		for (long i = 0;; i++) {
			skip_ws(s);
			if (s->p < s->e && *s->p == ']')
				return 0;
			if (i == st->index)
				return 1;
			if (!skip_value(s, 1))
				return 0;
			skip_ws(s);
			if (s->p >= s->e || *s->p++ != ',')
				return 0;
		}
	}
	if (*s->p != '{')
		return 0;
	s->p++;
	for (;;) {
		int eq;

		skip_ws(s);
		if (s->p >= s->e || *s->p != '"')
			return 0;
		eq = string_eq(s, st->name, st->len);
		if (eq < 0)
			return 0;
		skip_ws(s);
		if (s->p >= s->e || *s->p++ != ':')
			return 0;
		if (eq) {
			skip_ws(s);
			return 1;
		}
		if (!skip_value(s, 1))
			return 0;
		skip_ws(s);
		if (s->p >= s->e || *s->p++ != ',')
			return 0;
	}
}

/* The byte an escape "\<c>..." at <p> (after the backslash) stands for, or
 * -1 when HAProxy 2.6 refuses it: only \" \\ \b \f \n \r \t and \u00XX
 * are decoded; <*used> receives the characters read after the backslash. */
static int unescape_one(const char *p, const char *e, size_t *used)
{
	static const char from[] = "\"\\bfnrt", to[] = "\"\\\b\f\n\r\t";
	const char *f;
	int hi, lo;

	*used = 1;
	if (*p == 'u') {
		if (e - p < 5 || p[1] != '0' || p[2] != '0')
			return -1;
		hi = hex_digit_value(p[3]);
		lo = hex_digit_value(p[4]);
		if (hi < 0 || lo < 0)
			return -1;
		*used = 5;
		return hi << 4 | lo;
	}
	f = memchr(from, *p, sizeof(from) - 1);
	return f ? (unsigned char)to[f - from] : -1;
}

static int unescape_string(const char *p, const char *e, struct sample *smp)
{
	smp_set_trash(smp, SMP_T_STR);
	for (; p < e; p++) {
		int c = (unsigned char)*p;

		if (*p == '\\' && p + 1 < e) {
			size_t used;

			c = unescape_one(p + 1, e, &used);
			if (c < 0)
				return 0;
			p += used;
		}
		if (smp->data.str.len >= smp->data.str.size)
			return 0;
		smp->data.str.ptr[smp->data.str.len++] = (char)c;
	}
	return 1;
}

/* The largest integer a JSON number (an IEEE double) holds exactly. */
#define JSON_INT_MAX ((1LL << 53) - 1)

/* The end of the JSON number at the start of <p>..<e>, or NULL: an
 * optional '-', digits (leading zeros allowed), an optional fraction and an
 * optional exponent. As with HAProxy, what follows it is not looked at. */
static const char *number_end(const char *p, const char *e)
{
	const char *d;

	if (p < e && *p == '-')
		p++;
	for (d = p; p < e && *p >= '0' && *p <= '9'; p++)
		;
	if (p == d)
		return NULL;
	if (p < e && *p == '.')
		for (p++; p < e && *p >= '0' && *p <= '9'; p++)
			;
	if (p < e && (*p == 'e' || *p == 'E')) {
		d = p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p == e || *p < '0' || *p > '9')
			return d;          /* "1e" is the number 1 */
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	return p;
}

/* A number at <p>: with <want_int> its leading integer, else the
 * double printed with "%g". The token is copied into a fresh trash buffer
 * (the input may be one) to be NUL-terminated for strtod/strtoll. */
static int number_value(const char *p, const char *e, int want_int, struct sample *smp)
{
	char txt[64];
	long long v;
	size_t len;

	e = number_end(p, e);
	if (!e)
		return 0;
	len = (size_t)(e - p);
	smp_set_trash(smp, SMP_T_STR);
	if (len >= smp->data.str.size)
		return 0;
	memcpy(smp->data.str.ptr, p, len);
	smp->data.str.ptr[len] = '\0';
	if (want_int) {
		errno = 0;
		v = strtoll(smp->data.str.ptr, NULL, 0);
		if (errno || v < -JSON_INT_MAX || v > JSON_INT_MAX)
			return 0;
		smp_set_sint(smp, v);
		return 1;
	}
	len = (size_t)snprintf(txt, sizeof(txt), "%g", strtod(smp->data.str.ptr, NULL));
	memcpy(smp->data.str.ptr, txt, len);
	smp->data.str.len = len;
	return 1;
}

static int smp_conv_json_query(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct json_path *jp = args->priv;
	struct scan s = { smp->data.str.ptr, smp->data.str.ptr + smp->data.str.len };
	const char *start;

	for (int i = 0; i < jp->nsteps; i++)
		if (!find_step(&s, &jp->steps[i]))
			return 0;
	skip_ws(&s);
	start = s.p;
	if (s.p >= s.e || !skip_value(&s, 0))
		return 0;
	if (*start == '"')
		return unescape_string(start + 1, s.p - 1, smp);
	if (s.p - start == 4 && memcmp(start, "true", 4) == 0) {
		smp_set_bool(smp, 1);
		return 1;
	}
	if (s.p - start == 5 && memcmp(start, "false", 5) == 0) {
		smp_set_bool(smp, 0);
		return 1;
	}
	/* objects, arrays, null and anything else than a number fail */
	return number_value(start, s.p, jp->want_int, smp);
}

/* ------------------------------------------------------------------ JWT */

static int check_jwt_query(struct smp_args *args, char *err, size_t errlen)
{
	if (args->n < 1 || !args->a[0].data.str.len)
		return 0;                    /* no path: the decoded part itself */
	return check_json_query(args, err, errlen);
}

static int smp_conv_jwt_query(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int part = *(const int *)args->kw_priv;
	const char *p = smp->data.str.ptr, *e = p + smp->data.str.len, *dot;
	long n;

	for (int i = 0; i < part; i++) {
		dot = memchr(p, '.', (size_t)(e - p));
		if (!dot)
			return 0;
		p = dot + 1;
	}
	dot = memchr(p, '.', (size_t)(e - p));
	if (!dot)
		return 0;                    /* a JWS has three parts */
	{
		const char *src = p;
		size_t len = (size_t)(dot - p);

		smp_set_trash(smp, SMP_T_STR);
		n = smp_base64_decode(src, len, 1, (unsigned char *)smp->data.str.ptr,
		                      smp->data.str.size);
	}
	if (n < 0)
		return 0;
	smp->data.str.len = (size_t)n;
	if (!args->priv)
		return 1;
	return smp_conv_json_query(args, smp, ctx);
}
