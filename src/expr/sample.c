/* Samples: types and casts, the keyword registry, argument parsing, and
 * sample expressions (parse once, evaluate many times).
 *
 * Shared state: the fetch and converter tables, linked at start-up by
 * constructors and read-only afterwards. Per-thread state: the scratch
 * buffers and the random generator (thread-local, no lock). A compiled
 * expression is never written after parsing.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>

/* The keyword tables of the other files of the engine. Referencing them
 * here makes any program that parses an expression link them all, even
 * from a static archive (constructors alone would not pull them in). */
extern const int expr_fetch_internal_anchor, expr_fetch_http_anchor,
	expr_fetch_ssl_anchor, expr_conv_str_anchor, expr_conv_arith_anchor, expr_conv_hash_anchor,
	expr_conv_json_anchor, expr_conv_proto_anchor, expr_map_anchor,
	expr_vars_anchor, expr_fetch_ssl_hello_anchor, expr_conv_jwt_anchor;
__attribute__((used)) static const int *const expr_anchors[] = {
	&expr_fetch_internal_anchor, &expr_fetch_http_anchor, &expr_fetch_ssl_anchor,
	&expr_conv_str_anchor, &expr_conv_arith_anchor, &expr_conv_hash_anchor,
	&expr_conv_json_anchor, &expr_conv_proto_anchor, &expr_map_anchor,
	&expr_vars_anchor, &expr_fetch_ssl_hello_anchor, &expr_conv_jwt_anchor,
};

static struct smp_fetch_table *fetch_tables;
static struct smp_conv_table *conv_tables;

/* ------------------------------------------------------------------ types */

static const char *const type_names[SMP_TYPES] = {
	[SMP_T_ANY] = "any", [SMP_T_BOOL] = "bool", [SMP_T_SINT] = "sint",
	[SMP_T_ADDR] = "addr", [SMP_T_IPV4] = "ipv4", [SMP_T_IPV6] = "ipv6",
	[SMP_T_STR] = "str", [SMP_T_BIN] = "bin", [SMP_T_METH] = "meth",
};

const char *smp_type_name(enum smp_type t)
{
	return (unsigned int)t < SMP_TYPES ? type_names[t] : "?";
}

/* ------------------------------------------------------------------ scratch */

/* One block per thread holding its SMP_TRASH_COUNT buffers, allocated on
 * first use and freed when the thread exits (key destructor). */
static __thread char *trash_block;
static __thread unsigned int trash_next;
static __thread size_t trash_size;
static pthread_key_t trash_key;
static pthread_once_t trash_once = PTHREAD_ONCE_INIT;

static void trash_key_init(void)
{
	pthread_key_create(&trash_key, free);
}

char *smp_trash_get(size_t *size)
{
	unsigned int i = trash_next++ % SMP_TRASH_COUNT;

	if (!trash_block) {
		trash_size = global.bufsize >= 1024 ? (size_t)global.bufsize : 16384;
		trash_block = malloc(trash_size * SMP_TRASH_COUNT);
		if (!trash_block)
			abort();
		pthread_once(&trash_once, trash_key_init);
		pthread_setspecific(trash_key, trash_block);
	}
	*size = trash_size;
	return trash_block + i * trash_size;
}

void smp_set_trash(struct sample *smp, enum smp_type t)
{
	size_t size;
	char *p = smp_trash_get(&size);

	smp->type = t;
	smp->flags &= ~SMP_F_CONST;
	smp->data.str.ptr = p;
	smp->data.str.len = 0;
	smp->data.str.size = size;
}

int smp_make_rw(struct sample *smp, size_t extra)
{
	struct smp_str *s = &smp->data.str;
	size_t size;
	char *p;

	if (s->size && !(smp->flags & SMP_F_CONST) && s->len + extra <= s->size)
		return 1;
	p = smp_trash_get(&size);
	if (s->len + extra > size)
		return 0;
	memcpy(p, s->ptr, s->len);
	s->ptr = p;
	s->size = size;
	smp->flags &= ~SMP_F_CONST;
	return 1;
}

void smp_set_bool(struct sample *smp, int v)
{
	smp->type = SMP_T_BOOL;
	smp->data.sint = !!v;
}

void smp_set_sint(struct sample *smp, int64_t v)
{
	smp->type = SMP_T_SINT;
	smp->data.sint = v;
}

void smp_set_const_str(struct sample *smp, enum smp_type t, const char *p, size_t len)
{
	smp->type = t;
	smp->flags |= SMP_F_CONST;
	smp->data.str.ptr = (char *)p;
	smp->data.str.len = len;
	smp->data.str.size = 0;
}

/* ------------------------------------------------------------------ random */

static __thread uint64_t rng_state[4];

static inline uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna, public domain algorithm) */
uint64_t smp_random64(void)
{
	uint64_t *s = rng_state, r, t;

	if (!(s[0] | s[1] | s[2] | s[3])) {
		if (getrandom(s, sizeof(rng_state), 0) != (ssize_t)sizeof(rng_state) ||
		    !(s[0] | s[1] | s[2] | s[3])) {
			s[0] = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&s;
			s[1] = 0x9e3779b97f4a7c15ull;
		}
	}
	r = rotl64(s[1] * 5, 7) * 9;
	t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl64(s[3], 45);
	return r;
}

/* ------------------------------------------------------------------ helpers */

/* Reads [+-]digits at <p> (at most <len> bytes), stopping at the first
 * other byte; saturates at the int64 limits (*ovf set then). Returns the
 * number of bytes read (0: no digit). */
static size_t read_int_prefix(const char *p, size_t len, int64_t *out, int *ovf)
{
	size_t i = 0;
	int neg = 0, digits = 0;
	uint64_t v = 0, lim;

	*ovf = 0;
	if (i < len && (p[i] == '-' || p[i] == '+'))
		neg = p[i++] == '-';
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < len && p[i] >= '0' && p[i] <= '9'; i++, digits++) {
		unsigned int d = (unsigned int)(p[i] - '0');

		if (v > (lim - d) / 10) {
			v = lim;
			*ovf = 1;
		} else
			v = v * 10 + d;
	}
	if (!digits) {
		*out = 0;
		return 0;
	}
	*out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
	return i;
}

int smp_str_to_sint(const char *p, size_t len, int64_t *out)
{
	int ovf;
	size_t n = read_int_prefix(p, len, out, &ovf);

	return n && n == len && !ovf;
}

static const char *const meth_names[] = {
	[HTTP_METH_OTHER] = NULL, [HTTP_METH_GET] = "GET", [HTTP_METH_HEAD] = "HEAD",
	[HTTP_METH_POST] = "POST", [HTTP_METH_PUT] = "PUT",
	[HTTP_METH_DELETE] = "DELETE", [HTTP_METH_CONNECT] = "CONNECT",
	[HTTP_METH_OPTIONS] = "OPTIONS", [HTTP_METH_TRACE] = "TRACE",
	[HTTP_METH_PATCH] = "PATCH",
};

int smp_meth_from_str(const char *p, size_t len)
{
	for (size_t i = 1; i < sizeof(meth_names) / sizeof(meth_names[0]); i++)
		if (strlen(meth_names[i]) == len && memcmp(meth_names[i], p, len) == 0)
			return (int)i;
	return HTTP_METH_OTHER;
}

const char *smp_meth_name(enum http_meth m)
{
	if ((unsigned int)m < sizeof(meth_names) / sizeof(meth_names[0]))
		return meth_names[m];
	return NULL;
}

int smp_parse_ipv4_mask(const char *s, struct in_addr *mask)
{
	int64_t bits;

	if (smp_str_to_sint(s, strlen(s), &bits)) {
		if (bits < 0 || bits > 32)
			return 0;
		mask->s_addr = bits ? htonl(~0u << (32 - bits)) : 0;
		return 1;
	}
	if (inet_pton(AF_INET, s, mask) != 1)
		return 0;
	return 1;
}

int smp_parse_ipv6_mask(const char *s, struct in6_addr *mask)
{
	int64_t bits;

	if (smp_str_to_sint(s, strlen(s), &bits)) {
		if (bits < 0 || bits > 128)
			return 0;
		memset(mask, 0, sizeof(*mask));
		for (int i = 0; i < 16; i++, bits -= 8)
			mask->s6_addr[i] = bits >= 8 ? 0xff : bits > 0 ? (uint8_t)(0xff << (8 - bits)) : 0;
		return 1;
	}
	return inet_pton(AF_INET6, s, mask) == 1;
}

/* ------------------------------------------------------------------ casts */

typedef int (*cast_fn)(struct sample *smp);

static int c_none(struct sample *smp)
{
	(void)smp;
	return 1;
}

static int c_int2bool(struct sample *smp)
{
	smp->data.sint = !!smp->data.sint;
	return 1;
}

static int c_int2str(struct sample *smp)
{
	int64_t v = smp->data.sint;

	smp_set_trash(smp, SMP_T_STR);
	smp->data.str.len = (size_t)snprintf(smp->data.str.ptr, smp->data.str.size,
	                                     "%lld", (long long)v);
	return 1;
}

static int c_int2bin(struct sample *smp)
{
	uint64_t v = (uint64_t)smp->data.sint;

	smp_set_trash(smp, SMP_T_BIN);
	for (int i = 7; i >= 0; i--, v >>= 8)
		smp->data.str.ptr[i] = (char)(v & 0xff);
	smp->data.str.len = 8;
	return 1;
}

static int c_int2ip(struct sample *smp)
{
	uint32_t v = (uint32_t)smp->data.sint;

	smp->data.ipv4.s_addr = htonl(v);
	smp->type = SMP_T_IPV4;
	return 1;
}

static void v4_to_mapped(const struct in_addr *a, struct in6_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->s6_addr[10] = out->s6_addr[11] = 0xff;
	memcpy(&out->s6_addr[12], &a->s_addr, 4);
}

static int c_int2ipv6(struct sample *smp)
{
	struct in_addr a;

	a.s_addr = htonl((uint32_t)smp->data.sint);
	v4_to_mapped(&a, &smp->data.ipv6);
	smp->type = SMP_T_IPV6;
	return 1;
}

static int c_ip2int(struct sample *smp)
{
	smp->data.sint = (int64_t)ntohl(smp->data.ipv4.s_addr);
	smp->type = SMP_T_SINT;
	return 1;
}

static int c_ip2ipv6(struct sample *smp)
{
	struct in_addr a = smp->data.ipv4;

	v4_to_mapped(&a, &smp->data.ipv6);
	smp->type = SMP_T_IPV6;
	return 1;
}

/* IPv6 holding an IPv4 address: ::ffff:a.b.c.d, ::a.b.c.d, 2002:AABB:CCDD:: */
int smp_ipv6_to_ipv4(const struct in6_addr *a6, struct in_addr *a4)
{
	static const uint8_t zero[12];
	const uint8_t *b = a6->s6_addr;

	if ((memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff) ||
	    memcmp(b, zero, 12) == 0) {
		memcpy(&a4->s_addr, b + 12, 4);
		return 1;
	}
	if (b[0] == 0x20 && b[1] == 0x02) {
		memcpy(&a4->s_addr, b + 2, 4);
		return 1;
	}
	return 0;
}

static int c_ipv62ip(struct sample *smp)
{
	struct in_addr a;

	if (!smp_ipv6_to_ipv4(&smp->data.ipv6, &a))
		return 0;
	smp->data.ipv4 = a;
	smp->type = SMP_T_IPV4;
	return 1;
}

static int c_ip2str(struct sample *smp)
{
	struct in_addr a = smp->data.ipv4;

	smp_set_trash(smp, SMP_T_STR);
	if (!inet_ntop(AF_INET, &a, smp->data.str.ptr, (socklen_t)smp->data.str.size))
		return 0;
	smp->data.str.len = strlen(smp->data.str.ptr);
	return 1;
}

static int c_ipv62str(struct sample *smp)
{
	struct in6_addr a = smp->data.ipv6;

	smp_set_trash(smp, SMP_T_STR);
	if (!inet_ntop(AF_INET6, &a, smp->data.str.ptr, (socklen_t)smp->data.str.size))
		return 0;
	smp->data.str.len = strlen(smp->data.str.ptr);
	return 1;
}

static int c_addr2bin(struct sample *smp)
{
	union { struct in_addr v4; struct in6_addr v6; } a;
	size_t len = smp->type == SMP_T_IPV4 ? 4 : 16;

	memcpy(&a, &smp->data, len);
	smp_set_trash(smp, SMP_T_BIN);
	memcpy(smp->data.str.ptr, &a, len);
	smp->data.str.len = len;
	return 1;
}

static int c_str2int(struct sample *smp)
{
	int64_t v;
	int ovf;

	read_int_prefix(smp->data.str.ptr, smp->data.str.len, &v, &ovf);
	smp->type = SMP_T_SINT;
	smp->data.sint = v;
	return 1;
}

static int c_str2bool(struct sample *smp)
{
	c_str2int(smp);
	smp->type = SMP_T_BOOL;
	smp->data.sint = !!smp->data.sint;
	return 1;
}

static int copy_cstr(const struct sample *smp, char *buf, size_t len)
{
	if (smp->data.str.len >= len)
		return 0;
	memcpy(buf, smp->data.str.ptr, smp->data.str.len);
	buf[smp->data.str.len] = '\0';
	return 1;
}

static int c_str2ip(struct sample *smp)
{
	char buf[64];
	struct in_addr a;

	if (!copy_cstr(smp, buf, sizeof(buf)) || inet_pton(AF_INET, buf, &a) != 1)
		return 0;
	smp->data.ipv4 = a;
	smp->type = SMP_T_IPV4;
	return 1;
}

static int c_str2ipv6(struct sample *smp)
{
	char buf[64];
	struct in6_addr a;

	if (!copy_cstr(smp, buf, sizeof(buf)) || inet_pton(AF_INET6, buf, &a) != 1)
		return 0;
	smp->data.ipv6 = a;
	smp->type = SMP_T_IPV6;
	return 1;
}

static int c_str2addr(struct sample *smp)
{
	struct sample save = *smp;

	if (c_str2ip(smp))
		return 1;
	*smp = save;
	return c_str2ipv6(smp);
}

static int c_str2bin(struct sample *smp)
{
	smp->type = SMP_T_BIN;
	return 1;
}

static int c_bin2str(struct sample *smp)
{
	const char *z = memchr(smp->data.str.ptr, 0, smp->data.str.len);

	if (z)
		smp->data.str.len = (size_t)(z - smp->data.str.ptr);
	smp->type = SMP_T_STR;
	return 1;
}

static int c_str2meth(struct sample *smp)
{
	struct smp_str s = smp->data.str;
	int m = smp_meth_from_str(s.ptr, s.len);

	smp->type = SMP_T_METH;
	smp->data.meth.meth = (enum http_meth)m;
	smp->data.meth.str = s;
	return 1;
}

static int c_meth2str(struct sample *smp)
{
	enum http_meth m = smp->data.meth.meth;
	const char *name = smp_meth_name(m);

	if (name)
		smp_set_const_str(smp, SMP_T_STR, name, strlen(name));
	else {
		struct smp_str s = smp->data.meth.str;

		smp->type = SMP_T_STR;
		smp->data.str = s;
	}
	return 1;
}

static int c_meth2bin(struct sample *smp)
{
	c_meth2str(smp);
	smp->type = SMP_T_BIN;
	return 1;
}

static const cast_fn casts[SMP_TYPES][SMP_TYPES] = {
	/*            ANY     BOOL        SINT       ADDR        IPV4       IPV6        STR         BIN         METH */
	[SMP_T_BOOL] = { c_none, c_none,     c_none,    NULL,       NULL,      NULL,       c_int2str,  c_int2bin,  NULL },
	[SMP_T_SINT] = { c_none, c_int2bool, c_none,    c_int2ip,   c_int2ip,  c_int2ipv6, c_int2str,  c_int2bin,  NULL },
	[SMP_T_IPV4] = { c_none, NULL,       c_ip2int,  c_none,     c_none,    c_ip2ipv6,  c_ip2str,   c_addr2bin, NULL },
	[SMP_T_IPV6] = { c_none, NULL,       NULL,      c_none,     c_ipv62ip, c_none,     c_ipv62str, c_addr2bin, NULL },
	[SMP_T_STR]  = { c_none, c_str2bool, c_str2int, c_str2addr, c_str2ip,  c_str2ipv6, c_none,     c_str2bin,  c_str2meth },
	[SMP_T_BIN]  = { c_none, NULL,       NULL,      NULL,       NULL,      NULL,       c_bin2str,  c_none,     c_str2meth },
	[SMP_T_METH] = { c_none, NULL,       NULL,      NULL,       NULL,      NULL,       c_meth2str, c_meth2bin, c_none },
};

int smp_cast_ok(enum smp_type from, enum smp_type to)
{
	if ((unsigned int)from >= SMP_TYPES || (unsigned int)to >= SMP_TYPES)
		return 0;
	if (from == SMP_T_ANY || to == SMP_T_ANY)
		return 1;               /* checked at run time */
	if (from == SMP_T_ADDR)
		return casts[SMP_T_IPV4][to] || casts[SMP_T_IPV6][to];
	return casts[from][to] != NULL;
}

int smp_cast(struct sample *smp, enum smp_type to)
{
	cast_fn fn;

	if ((unsigned int)smp->type >= SMP_TYPES || (unsigned int)to >= SMP_TYPES)
		return 0;
	if (to == SMP_T_ANY || smp->type == to)
		return 1;
	if (to == SMP_T_ADDR && (smp->type == SMP_T_IPV4 || smp->type == SMP_T_IPV6))
		return 1;
	fn = casts[smp->type][to];
	if (!fn || !fn(smp))
		return 0;
	if (to != SMP_T_ADDR && to != SMP_T_ANY)
		smp->type = to;
	return 1;
}

size_t smp_to_text(const struct sample *in, char *buf, size_t len)
{
	struct sample smp = *in;
	size_t n;

	if (!len)
		return 0;
	buf[0] = '\0';
	if (!smp_cast(&smp, SMP_T_STR))
		return 0;
	n = smp.data.str.len < len - 1 ? smp.data.str.len : len - 1;
	memcpy(buf, smp.data.str.ptr, n);
	buf[n] = '\0';
	return n;
}

/* ------------------------------------------------------------------ registry */

void smp_register_fetches(struct smp_fetch_table *t)
{
	t->next = fetch_tables;
	fetch_tables = t;
}

void smp_register_convs(struct smp_conv_table *t)
{
	t->next = conv_tables;
	conv_tables = t;
}

static int kw_eq(const char *kw, const char *name, size_t len)
{
	return strlen(kw) == len && memcmp(kw, name, len) == 0;
}

const struct smp_fetch_kw *smp_find_fetch(const char *name, size_t len)
{
	for (const struct smp_fetch_table *t = fetch_tables; t; t = t->next)
		for (const struct smp_fetch_kw *k = t->kws; k->kw; k++)
			if (kw_eq(k->kw, name, len))
				return k;
	return NULL;
}

const struct smp_conv_kw *smp_find_conv(const char *name, size_t len)
{
	for (const struct smp_conv_table *t = conv_tables; t; t = t->next)
		for (const struct smp_conv_kw *k = t->kws; k->kw; k++)
			if (kw_eq(k->kw, name, len))
				return k;
	return NULL;
}

/* Edit distance (insert, delete, substitute), capped by the buffers. */
static unsigned int edit_distance(const char *a, size_t la, const char *b)
{
	unsigned int row[64], prev, tmp;
	size_t lb = strlen(b);

	if (la >= 63 || lb >= 63)
		return UINT_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned int)j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (unsigned int)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned int best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

/* The closest keyword to <name> if close enough to be a typo, else NULL. */
static const char *suggest(const char *name, size_t len, int conv)
{
	const char *best = NULL;
	unsigned int best_d = UINT_MAX, d;

	if (conv) {
		for (const struct smp_conv_table *t = conv_tables; t; t = t->next)
			for (const struct smp_conv_kw *k = t->kws; k->kw; k++)
				if ((d = edit_distance(name, len, k->kw)) < best_d) {
					best_d = d;
					best = k->kw;
				}
	} else {
		for (const struct smp_fetch_table *t = fetch_tables; t; t = t->next)
			for (const struct smp_fetch_kw *k = t->kws; k->kw; k++)
				if ((d = edit_distance(name, len, k->kw)) < best_d) {
					best_d = d;
					best = k->kw;
				}
	}
	if (best && best_d <= 2 && best_d < len)
		return best;
	return NULL;
}

/* ------------------------------------------------------------------ arguments */

static void args_free(struct smp_args *args)
{
	for (int i = 0; i < args->n; i++) {
		free(args->a[i].text);
		if (args->a[i].type == ARGT_STR)
			args->a[i].data.str.ptr = NULL;
	}
	if (args->priv && args->free_priv)
		args->free_priv(args->priv);
	memset(args, 0, sizeof(*args));
}

/* Reads one argument at <p> (unquoting it into <out>, NUL-terminated) up to
 * an unprotected ',' or ')'. Returns the position of that delimiter, or
 * NULL at the end of the string (missing ')'). */
static const char *read_arg(const char *p, char *out, size_t outlen, size_t *olen,
                            int *toolong)
{
	size_t n = 0;
	char q = 0;

	*toolong = 0;
	for (; *p; p++) {
		char c = *p;

		if (q == '\'') {
			if (c == '\'') {
				q = 0;
				continue;
			}
		} else if (c == '\\' && (p[1] == '\\' || p[1] == '"' || p[1] == '\'')) {
			c = *++p;       /* only these are escapes; "\1" stays "\1" */
		} else if (q == '"') {
			if (c == '"') {
				q = 0;
				continue;
			}
		} else if (c == '"' || c == '\'') {
			q = c;
			continue;
		} else if (c == ',' || c == ')') {
			break;
		}
		if (n + 1 >= outlen) {
			*toolong = 1;
			continue;
		}
		out[n++] = c;
	}
	out[n] = '\0';
	*olen = n;
	return (*p && !q) ? p : NULL;
}

static const char *argt_name(enum smp_arg_type t)
{
	switch (t) {
	case ARGT_SINT: return "integer";
	case ARGT_STR:  return "string";
	case ARGT_BE:   return "backend";
	case ARGT_FE:   return "frontend";
	case ARGT_SRV:  return "server";
	case ARGT_TAB:  return "table";
	case ARGT_IPV4: return "ipv4";
	case ARGT_MSK4: return "ipv4 mask";
	case ARGT_IPV6: return "ipv6";
	case ARGT_MSK6: return "ipv6 mask";
	case ARGT_VAR:  return "variable";
	default:        return "?";
	}
}

/* Converts the text of argument <a> to <type>. */
static int arg_convert(struct smp_arg *a, enum smp_arg_type type, int optional,
                       char *err, size_t errlen)
{
	const char *s = a->text;
	size_t len = strlen(s);

	a->type = type;
	if (!len && type != ARGT_STR) {
		if (optional) {
			a->type = ARGT_STOP;       /* an omitted optional argument */
			return 0;
		}
		return errmsg_set(err, errlen, "empty %s argument", argt_name(type));
	}
	switch (type) {
	case ARGT_SINT:
		if (!smp_str_to_sint(s, len, &a->data.sint))
			return errmsg_set(err, errlen, "failed to parse '%s' as type 'integer'", s);
		break;
	case ARGT_STR: case ARGT_BE: case ARGT_FE: case ARGT_SRV: case ARGT_TAB:
		a->data.str.ptr = a->text;
		a->data.str.len = len;
		break;
	case ARGT_IPV4:
		if (inet_pton(AF_INET, s, &a->data.ipv4) != 1)
			return errmsg_set(err, errlen, "failed to parse '%s' as type 'ipv4'", s);
		break;
	case ARGT_MSK4:
		if (!smp_parse_ipv4_mask(s, &a->data.ipv4))
			return errmsg_set(err, errlen, "failed to parse '%s' as an IPv4 mask", s);
		break;
	case ARGT_IPV6:
		if (inet_pton(AF_INET6, s, &a->data.ipv6) != 1)
			return errmsg_set(err, errlen, "failed to parse '%s' as type 'ipv6'", s);
		break;
	case ARGT_MSK6:
		if (!smp_parse_ipv6_mask(s, &a->data.ipv6))
			return errmsg_set(err, errlen, "failed to parse '%s' as an IPv6 mask", s);
		break;
	case ARGT_VAR:
		return vars_parse_ref(s, len, &a->data.var, err, errlen);
	default:
		return errmsg_set(err, errlen, "unsupported argument type");
	}
	return 0;
}

/* Parses "(args)" at <p> (pointing at '(' or not) against a specification.
 * Returns the position after the list, or NULL with a message. */
static const char *parse_args(const char *p, const char *kind, const char *kw,
                              const enum smp_arg_type *spec, int min_args,
                              struct smp_args *args, char *err, size_t errlen)
{
	int max = 0, toolong;
	char buf[4096];
	size_t len;

	while (max < SMP_MAX_ARGS && spec[max] != ARGT_STOP)
		max++;
	memset(args, 0, sizeof(*args));
	if (*p == '(') {
		p++;
		if (*p == ')' && min_args == 0) {
			p++;                /* "()": no argument */
			goto count;
		}
		for (;;) {
			const char *d = read_arg(p, buf, sizeof(buf), &len, &toolong);

			if (!d) {
				errmsg_set(err, errlen, "%s '%s' : expected ')'", kind, kw);
				goto fail;
			}
			if (toolong) {
				errmsg_set(err, errlen, "%s '%s' : argument %d too long", kind, kw,
				           args->n + 1);
				goto fail;
			}
			if (args->n >= max) {
				errmsg_set(err, errlen, "%s '%s' : expected ')' before '%s' "
				           "(at most %d argument%s)", kind, kw, p - 1,
				           max, max == 1 ? "" : "s");
				goto fail;
			}
			args->a[args->n].text = strdup(buf);
			if (!args->a[args->n].text) {
				errmsg_set(err, errlen, "out of memory");
				goto fail;
			}
			args->n++;
			p = d + 1;
			if (*d == ')')
				break;
		}
	}
count:
	if (args->n < min_args) {
		errmsg_set(err, errlen, "%s '%s' expects %s%d argument%s, %d given", kind, kw,
		           max > min_args ? "at least " : "", min_args,
		           min_args == 1 ? "" : "s", args->n);
		goto fail;
	}
	for (int i = 0; i < args->n; i++) {
		char sub[256];

		if (arg_convert(&args->a[i], spec[i], i >= min_args, sub, sizeof(sub)) < 0) {
			errmsg_set(err, errlen, "invalid arg %d in %s '%s' : %s", i + 1, kind,
			           kw, sub);
			goto fail;
		}
	}
	return p;
fail:
	args_free(args);
	return NULL;
}

int smp_arg_int_or_var(struct smp_arg *arg, char *err, size_t errlen)
{
	const char *s = arg->text ? arg->text : "";
	size_t len = strlen(s);

	if (arg->type == ARGT_SINT || arg->type == ARGT_VAR)
		return 0;
	if (smp_str_to_sint(s, len, &arg->data.sint)) {
		arg->type = ARGT_SINT;
		return 0;
	}
	if (vars_parse_ref(s, len, &arg->data.var, err, errlen) < 0)
		return -1;
	arg->type = ARGT_VAR;
	return 0;
}

int smp_arg_get_sint(const struct smp_arg *arg, struct smp_ctx *ctx, int64_t *out)
{
	struct sample v;

	if (arg->type == ARGT_SINT) {
		*out = arg->data.sint;
		return 1;
	}
	if (arg->type != ARGT_VAR)
		return 0;
	memset(&v, 0, sizeof(v));
	if (!vars_get(ctx, &arg->data.var, &v) || !smp_cast(&v, SMP_T_SINT))
		return 0;
	*out = v.data.sint;
	return 1;
}

/* ------------------------------------------------------------------ expressions */

static int is_kw_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' || c == '+';
}

/* ------------------------------------------------------------------ names */

static struct sample_expr *names_head;   /* expressions naming proxies/servers */
static int names_closed;                 /* smp_resolve_names() ran */
static struct smp_origin cfg_origin;

void smp_cfg_origin_set(const char *file, int line, void *px)
{
	cfg_origin = (struct smp_origin){ file, line, px };
}

void smp_cfg_origin_get(struct smp_origin *o)
{
	*o = cfg_origin;
}

static void names_unlink(struct sample_expr *expr)
{
	if (!expr->names_pprev)
		return;
	*expr->names_pprev = expr->names_next;
	if (expr->names_next)
		expr->names_next->names_pprev = expr->names_pprev;
	expr->names_next = NULL;
	expr->names_pprev = NULL;
}

/* An omitted optional backend or table argument becomes an empty one of
 * its type (the expression's own proxy, or its table). */
static int names_pad(struct smp_args *args, const enum smp_arg_type *spec)
{
	int named = 0;

	for (int i = 0; i < SMP_MAX_ARGS && spec[i] != ARGT_STOP; i++) {
		if (spec[i] != ARGT_BE && spec[i] != ARGT_FE && spec[i] != ARGT_SRV &&
		    spec[i] != ARGT_TAB)
			continue;
		if (spec[i] != ARGT_SRV && i == args->n) {
			args->a[args->n++].type = spec[i];
		} else if (spec[i] != ARGT_SRV && i < args->n && args->a[i].type == ARGT_STOP) {
			args->a[i].type = spec[i];
		}
		named = 1;
	}
	return named;
}

/* An expression with a backend, server or table argument (in its fetch or
 * one of its converters) is kept for smp_resolve_names(). */
static int names_keep(struct sample_expr *expr, int named)
{
	if (!named || names_closed || expr->names_pprev)
		return 0;
	expr->origin = cfg_origin;
	if (cfg_origin.file && !(expr->origin.file = strdup(cfg_origin.file)))
		return -1;
	expr->names_next = names_head;
	if (names_head)
		names_head->names_pprev = &expr->names_next;
	expr->names_pprev = &names_head;
	names_head = expr;
	return 0;
}

int smp_resolve_names(int (*fn)(struct smp_args *args, const char *kw, int conv,
                                const struct smp_origin *o, void *priv),
                      void *priv)
{
	struct sample_expr *x = names_head;
	int errors = 0;

	/* the list is newest first: walk it back from its end, so that errors
	 * come in the order of the lines */
	while (x && x->names_next)
		x = x->names_next;
	while (x) {
		struct sample_expr *prev = x->names_pprev == &names_head ? NULL :
		        (struct sample_expr *)((char *)x->names_pprev -
		                               offsetof(struct sample_expr, names_next));

		errors += fn(&x->fetch_args, x->fetch->kw, 0, &x->origin, priv);
		for (int i = 0; i < x->nconv; i++)
			for (int j = 0; j < x->conv[i].args.n; j++)
				if (x->conv[i].args.a[j].type == ARGT_TAB) {
					errors += fn(&x->conv[i].args, x->conv[i].kw->kw, 1,
					             &x->origin, priv);
					break;
				}
		names_unlink(x);
		x = prev;
	}
	names_closed = 1;
	return errors;
}

void sample_expr_free(struct sample_expr *expr)
{
	if (!expr)
		return;
	names_unlink(expr);
	free((char *)expr->origin.file);
	args_free(&expr->fetch_args);
	for (int i = 0; i < expr->nconv; i++)
		args_free(&expr->conv[i].args);
	free(expr->conv);
	free(expr);
}

static int expr_add_conv(struct sample_expr *expr, const struct smp_conv_kw *kw)
{
	struct smp_conv_step *c = realloc(expr->conv, sizeof(*c) * (size_t)(expr->nconv + 1));

	if (!c)
		return -1;
	expr->conv = c;
	memset(&c[expr->nconv], 0, sizeof(*c));
	c[expr->nconv].kw = kw;
	expr->nconv++;
	return 0;
}

static const char *parse_fetch(const char *p, struct sample_expr *expr,
                               char *err, size_t errlen)
{
	const char *name = p;
	const struct smp_fetch_kw *kw;
	char sub[512];
	size_t len;

	while (is_kw_char(*p))
		p++;
	len = (size_t)(p - name);
	kw = smp_find_fetch(name, len);
	if (!kw) {
		const char *s = suggest(name, len, 0);

		if (!len)
			errmsg_set(err, errlen, "missing fetch method");
		else if (s)
			errmsg_set(err, errlen, "unknown fetch method '%.*s' (did you mean '%s' ?)",
			           (int)len, name, s);
		else
			errmsg_set(err, errlen, "unknown fetch method '%.*s'", (int)len, name);
		return NULL;
	}
	expr->fetch = kw;
	expr->out_type = kw->out_type;
	expr->use = kw->use;
	p = parse_args(p, "fetch method", kw->kw, kw->args, kw->min_args,
	               &expr->fetch_args, err, errlen);
	if (!p)
		return NULL;
	expr->fetch_args.kw_priv = kw->priv;
	if (kw->check && kw->check(&expr->fetch_args, sub, sizeof(sub)) < 0) {
		errmsg_set(err, errlen, "invalid args in fetch method '%s' : %s", kw->kw, sub);
		return NULL;
	}
	if (names_keep(expr, names_pad(&expr->fetch_args, kw->args)) < 0)
		return errmsg_set(err, errlen, "out of memory"), NULL;
	return p;
}

static const char *parse_conv(const char *p, struct sample_expr *expr,
                              char *err, size_t errlen)
{
	const char *name = p;
	const struct smp_conv_kw *kw;
	struct smp_conv_step *step;
	char sub[512];
	size_t len;

	while (is_kw_char(*p))
		p++;
	len = (size_t)(p - name);
	kw = smp_find_conv(name, len);
	if (!kw) {
		const char *s = len ? suggest(name, len, 1) : NULL;

		if (s)
			errmsg_set(err, errlen, "unknown converter '%.*s' (did you mean '%s' ?)",
			           (int)len, name, s);
		else
			errmsg_set(err, errlen, "unknown converter '%.*s'", (int)len, name);
		return NULL;
	}
	if (!smp_cast_ok(expr->out_type, kw->in_type))
		return errmsg_set(err, errlen, "converter '%s' cannot be applied (its input "
		                  "is %s, the sample is %s)", kw->kw, smp_type_name(kw->in_type),
		                  smp_type_name(expr->out_type)), NULL;
	if (expr_add_conv(expr, kw) < 0)
		return errmsg_set(err, errlen, "out of memory"), NULL;
	step = &expr->conv[expr->nconv - 1];
	p = parse_args(p, "converter", kw->kw, kw->args, kw->min_args, &step->args,
	               err, errlen);
	if (!p)
		return NULL;
	step->args.kw_priv = kw->priv;
	if (kw->check && kw->check(&step->args, sub, sizeof(sub)) < 0) {
		errmsg_set(err, errlen, "invalid args in converter '%s' : %s", kw->kw, sub);
		return NULL;
	}
	if (names_keep(expr, names_pad(&step->args, kw->args)) < 0)
		return errmsg_set(err, errlen, "out of memory"), NULL;
	expr->out_type = kw->out_type;
	return p;
}

struct sample_expr *sample_expr_parse(const char *str, const char **end,
                                      char *err, size_t errlen)
{
	struct sample_expr *expr = calloc(1, sizeof(*expr));
	const char *p;

	if (!expr) {
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	p = parse_fetch(str, expr, err, errlen);
	if (!p)
		goto fail;
	for (;;) {
		if (*p == ',') {
			/* As in HAProxy, a run of commas counts as one and a word
			 * may end with commas ("src,,lower", "src,"); but where the
			 * expression goes on, a converter name must follow: "%[src,]"
			 * is "unknown converter ''". */
			while (*p == ',')
				p++;
			if (!*p)
				break;
			p = parse_conv(p, expr, err, errlen);
			if (!p)
				goto fail;
			continue;
		}
		if (!*p || end)
			break;
		errmsg_set(err, errlen, "missing comma after %s '%s'",
		           expr->nconv ? "converter" : "fetch keyword",
		           expr->nconv ? expr->conv[expr->nconv - 1].kw->kw : expr->fetch->kw);
		goto fail;
	}
	if (end)
		*end = p;
	return expr;
fail:
	sample_expr_free(expr);
	return NULL;
}

static int ctx_has(const struct smp_ctx *ctx, unsigned int use)
{
	use &= ~SMP_USE_INTRN;
	return !ctx->avail || !(use & ~ctx->avail);
}

int sample_expr_eval(const struct sample_expr *expr, struct smp_ctx *ctx,
                     struct sample *smp)
{
	unsigned int keep;

	if (!ctx_has(ctx, expr->use)) {
		smp->flags = 0;
		return 0;
	}
	if (ctx->final)
		smp->opt |= SMP_OPT_FINAL;
	smp->flags &= ~(SMP_F_MAY_CHANGE | SMP_F_CONST);
	if (!expr->fetch->fn(&expr->fetch_args, smp, ctx)) {
		if (smp->opt & SMP_OPT_FINAL)
			smp->flags &= ~SMP_F_MAY_CHANGE;
		return 0;
	}
	if (smp->opt & SMP_OPT_FINAL)
		smp->flags &= ~SMP_F_MAY_CHANGE;
	/* converters see one value; the fetch's iteration flags survive them */
	keep = smp->flags & (SMP_F_NOT_LAST | SMP_F_MAY_CHANGE);
	for (int i = 0; i < expr->nconv; i++) {
		const struct smp_conv_step *c = &expr->conv[i];

		if (!smp_cast(smp, c->kw->in_type) || !c->kw->fn(&c->args, smp, ctx)) {
			smp->flags = (smp->flags & ~(SMP_F_NOT_LAST | SMP_F_MAY_CHANGE)) | keep;
			return 0;
		}
		smp->flags = (smp->flags & ~(SMP_F_NOT_LAST | SMP_F_MAY_CHANGE)) | keep;
	}
	return 1;
}

int sample_expr_eval_as(const struct sample_expr *expr, struct smp_ctx *ctx,
                        enum smp_type type, struct sample *smp)
{
	memset(smp, 0, sizeof(*smp));
	if (!sample_expr_eval(expr, ctx, smp))
		return 0;
	return smp_cast(smp, type);
}

int smp_apply_convs(struct sample *smp, const char *convs, struct smp_ctx *ctx,
                    char *err, size_t errlen)
{
	/* parse "str(),<convs>" to reuse the parser, then run the converters
	 * only, from the given sample */
	char *text;
	struct sample_expr *expr;
	int ret = 1;

	if (asprintf(&text, "str(),%s", convs) < 0)
		return errmsg_set(err, errlen, "out of memory");
	expr = sample_expr_parse(text, NULL, err, errlen);
	free(text);
	if (!expr)
		return -1;
	for (int i = 0; i < expr->nconv && ret; i++) {
		const struct smp_conv_step *c = &expr->conv[i];

		ret = smp_cast(smp, c->kw->in_type) && c->kw->fn(&c->args, smp, ctx);
	}
	sample_expr_free(expr);
	return ret;
}

int smp_check_use(unsigned int use, unsigned int avail, const char *what,
                  char *err, size_t errlen)
{
	static const char *const names[] = {
		"internal state", "the client connection", "the session", "a backend",
		"a server", "a transaction", "the request contents", "HTTP request headers",
		"HTTP request body", "HTTP response headers", "HTTP response body",
		"the HTTP request method", "the HTTP response status", "HTTP headers",
		"the client connection's TLS session", "the server connection's TLS session",
	};
	unsigned int missing = use & ~avail & ~SMP_USE_INTRN;

	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (missing & (1u << i))
			return errmsg_set(err, errlen, "'%s' may not be reliably used here because "
			                  "it needs %s which is not available here", what, names[i]);
	return 0;
}

int smp_parse_time_unit(const char *u, intptr_t *unit, char *err, size_t errlen)
{
	if (strcmp(u, "s") == 0)
		*unit = 1;
	else if (strcmp(u, "ms") == 0)
		*unit = 1000;
	else if (strcmp(u, "us") == 0)
		*unit = 1000000;
	else
		return errmsg_set(err, errlen, "unknown unit '%s' (s, ms or us)", u);
	return 0;
}
