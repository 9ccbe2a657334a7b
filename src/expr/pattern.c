/* Pattern references and their indexes (see pattern.h for the model and
 * the locking rules).
 *
 * Locking summary: the global list of references is built at configuration
 * time and only read afterwards (no lock). Each reference's rwlock covers
 * its entries and every index built from it: pat_expr_match() holds the
 * read lock for the lookup and the copy of a map value; pat_ref_add(),
 * pat_ref_delete(), pat_ref_set() and pat_ref_clear() hold the write lock.
 * Configuration-time building (pat_expr_get(), file loading) runs before
 * any worker starts, under the write lock anyway.
 *
 * Every index keeps all its entries in an insertion-ordered list (used by
 * the list methods and for counting); str and ip entries are also in a
 * hash table, beg entries in a byte trie. Entries carry a sequence number:
 * among equal keys the lowest (first inserted) wins.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/pattern.h>
#include <sluice/expr/regex.h>
#include <sluice/core/hexdigit.h>

struct pat_entry {
	struct pat_entry *list_next;   /* insertion order */
	struct pat_entry *hash_next;   /* hash chain or trie node list */
	struct pat_entry *elt_next;    /* entries of the same reference element */
	struct pat_expr *expr;
	struct pat_ref_elt *elt;
	uint64_t seq;
	union {
		struct { int64_t min, max; } range;
		struct { int family, plen; uint8_t addr[16]; } ip;
		struct regex *re;
		struct { const char *ptr; size_t len; } str;
		struct { int meth; const char *ptr; size_t len; } meth;
	} u;
	unsigned char *owned;          /* decoded bytes (bin), stripped words */
	struct sample value;           /* map value, parsed for expr->val_type */
};

struct trie_node {
	unsigned char *keys;           /* sorted child bytes */
	struct trie_node **kids;
	int nkids, cap;
	struct pat_entry *entries;     /* keys ending here, by seq */
};

struct pat_index {
	struct pat_entry *head, **tail;
	unsigned int count;
	struct pat_entry **buckets;    /* str, ip */
	size_t nbuckets;
	struct trie_node *trie;        /* beg */
	uint64_t v4_lens;              /* bit n: an IPv4 /n pattern exists */
	uint64_t v6_lens[3];           /* bit n: an IPv6 /n pattern exists */
};

static struct list pat_refs = LIST_HEAD_INIT(pat_refs);
static int pat_dns_enabled = 1;    /* configuration time only */
static int next_unique_id;
static uint64_t next_seq = 1;      /* atomic: CLI sessions on several threads may
                                    * edit different references at once */

void pat_set_dns(int enabled)
{
	pat_dns_enabled = enabled;
}

/* ------------------------------------------------------------------ methods */

static const char *const match_names[PAT_MATCH_NUM] = {
	[PAT_MATCH_FOUND] = "found", [PAT_MATCH_BOOL] = "bool", [PAT_MATCH_INT] = "int",
	[PAT_MATCH_IP] = "ip", [PAT_MATCH_BIN] = "bin", [PAT_MATCH_LEN] = "len",
	[PAT_MATCH_STR] = "str", [PAT_MATCH_BEG] = "beg", [PAT_MATCH_SUB] = "sub",
	[PAT_MATCH_DIR] = "dir", [PAT_MATCH_DOM] = "dom", [PAT_MATCH_END] = "end",
	[PAT_MATCH_REG] = "reg", [PAT_MATCH_METH] = "meth",
};

const char *pat_match_name(enum pat_match m)
{
	return (unsigned int)m < PAT_MATCH_NUM ? match_names[m] : "?";
}

int pat_match_by_name(const char *name)
{
	for (int i = 0; i < PAT_MATCH_NUM; i++)
		if (strcmp(match_names[i], name) == 0)
			return i;
	return -1;
}

/* The type a method works on: a sample is accepted when it casts to it
 * (HAProxy's rule; it extends the manual's 7.1 matrix, e.g. an integer
 * matched as an address, refusing an IPv6 address matched as an integer). */
static enum smp_type match_type(enum pat_match m)
{
	switch (m) {
	case PAT_MATCH_FOUND: return SMP_T_ANY;
	case PAT_MATCH_BOOL: case PAT_MATCH_INT: return SMP_T_SINT;
	case PAT_MATCH_IP: return SMP_T_ADDR;
	case PAT_MATCH_BIN: return SMP_T_BIN;
	case PAT_MATCH_METH: return SMP_T_METH;
	default: return SMP_T_STR;
	}
}

int pat_match_accepts(enum pat_match m, enum smp_type t)
{
	if ((unsigned int)m >= PAT_MATCH_NUM)
		return 0;
	if (t == SMP_T_BIN && match_type(m) == SMP_T_STR)
		return 1;        /* matched as bytes, not cast */
	return smp_cast_ok(t, match_type(m));
}

int pat_match_default(enum smp_type t)
{
	switch (t) {
	case SMP_T_BOOL: return PAT_MATCH_BOOL;
	case SMP_T_SINT: return PAT_MATCH_INT;
	case SMP_T_ADDR: case SMP_T_IPV4: case SMP_T_IPV6: return PAT_MATCH_IP;
	case SMP_T_STR: case SMP_T_ANY: return PAT_MATCH_STR;
	case SMP_T_METH: return PAT_MATCH_METH;
	default: return -1;
	}
}

/* ------------------------------------------------------------------ parsing */

static int parse_int_bound(const char *s, size_t len, int64_t *v)
{
	return smp_str_to_sint(s, len, v);
}

/* "N", "N:M", ":M", "N:" */
static int parse_range(const char *s, int64_t *min, int64_t *max, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':');
	size_t len = strlen(s);

	*min = INT64_MIN;
	*max = INT64_MAX;
	if (!colon) {
		if (!parse_int_bound(s, len, min))
			return errmsg_set(err, errlen, "'%s' is not a number", s);
		*max = *min;
		return 0;
	}
	if (colon > s && !parse_int_bound(s, (size_t)(colon - s), min))
		return errmsg_set(err, errlen, "'%s' is not a valid integer range", s);
	if (colon[1] && !parse_int_bound(colon + 1, strlen(colon + 1), max))
		return errmsg_set(err, errlen, "'%s' is not a valid integer range", s);
	if (colon == s && !colon[1])
		return errmsg_set(err, errlen, "'%s' is not a valid integer range", s);
	return 0;
}

/* A version as req.ssl_ver's ACL reads it (HAProxy's "dotted" patterns):
 * "MAJOR[.MINOR]", decimal digits only, each part at most 65535, is
 * MAJOR << 16 | MINOR. */
static int parse_dotted(const char *s, size_t len, int64_t *v)
{
	int64_t part[2] = { 0, 0 };
	int n = 0, digits = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.' && n == 0 && digits) {
			n = 1;
			digits = 0;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			return 0;
		part[n] = part[n] * 10 + (s[i] - '0');
		if (part[n] > 65535)
			return 0;
		digits++;
	}
	if (!digits)
		return 0;
	*v = part[0] << 16 | part[1];
	return 1;
}

/* "V", "V:W", ":W", "V:" of dotted versions, V <= W */
static int parse_dotted_range(const char *s, int64_t *min, int64_t *max, char *err,
                              size_t errlen)
{
	const char *colon = strchr(s, ':');

	*min = 0;
	*max = INT64_MAX;
	if (!colon) {
		if (!parse_dotted(s, strlen(s), min))
			return errmsg_set(err, errlen, "'%s' is not a dotted number", s);
		*max = *min;
		return 0;
	}
	if ((colon == s && !colon[1]) ||
	    (colon > s && !parse_dotted(s, (size_t)(colon - s), min)) ||
	    (colon[1] && !parse_dotted(colon + 1, strlen(colon + 1), max)) || *min > *max)
		return errmsg_set(err, errlen, "'%s' is not a valid dotted number range", s);
	return 0;
}

int pat_dotted_op_key(enum pat_int_op op, const char *val, char *out, size_t outlen,
                      char *err, size_t errlen)
{
	const int64_t top = (int64_t)65535 << 16 | 65535;
	int64_t v;

	if (op == PAT_OP_NONE) {
		snprintf(out, outlen, "%s", val);
		return 0;
	}
	if (!parse_dotted(val, strlen(val), &v))
		return errmsg_set(err, errlen, "'%s' is neither a number nor a supported operator",
		                  val);
	if ((op == PAT_OP_GT && v == top) || (op == PAT_OP_LT && v == 0))
		return errmsg_set(err, errlen, "'%s %s' can never match",
		                  op == PAT_OP_GT ? "gt" : "lt", val);
	/* in MAJOR << 16 | MINOR, the next version after 3.65535 is 4.0 */
	v += op == PAT_OP_GT ? 1 : op == PAT_OP_LT ? -1 : 0;
	snprintf(out, outlen, "%s%lld.%lld%s", op == PAT_OP_LE || op == PAT_OP_LT ? ":" : "",
	         (long long)(v >> 16), (long long)(v & 0xffff),
	         op == PAT_OP_GE || op == PAT_OP_GT ? ":" : "");
	return 0;
}

int pat_int_op_by_name(const char *w)
{
	static const char *const ops[] = { NULL, "eq", "ge", "gt", "le", "lt" };

	for (int i = 1; i < 6; i++)
		if (strcmp(w, ops[i]) == 0)
			return i;
	return PAT_OP_NONE;
}

int pat_int_op_key(enum pat_int_op op, const char *val, char *out, size_t outlen,
                   char *err, size_t errlen)
{
	int64_t v;

	if (op == PAT_OP_NONE) {
		snprintf(out, outlen, "%s", val);
		return 0;
	}
	if (!smp_str_to_sint(val, strlen(val), &v))
		return errmsg_set(err, errlen, "'%s' is not a number", val);
	switch (op) {
	case PAT_OP_EQ: snprintf(out, outlen, "%lld", (long long)v); break;
	case PAT_OP_GE: snprintf(out, outlen, "%lld:", (long long)v); break;
	case PAT_OP_LE: snprintf(out, outlen, ":%lld", (long long)v); break;
	case PAT_OP_GT:
		if (v == INT64_MAX)
			return errmsg_set(err, errlen, "'gt %s' can never match", val);
		snprintf(out, outlen, "%lld:", (long long)v + 1);
		break;
	case PAT_OP_LT:
		if (v == INT64_MIN)
			return errmsg_set(err, errlen, "'lt %s' can never match", val);
		snprintf(out, outlen, ":%lld", (long long)v - 1);
		break;
	default:
		break;
	}
	return 0;
}

static int mask_to_plen(const uint8_t *m, int bytes)
{
	int plen = 0, i;

	for (i = 0; i < bytes && m[i] == 0xff; i++)
		plen += 8;
	if (i < bytes) {
		uint8_t b = m[i];

		while (b & 0x80) {
			plen++;
			b = (uint8_t)(b << 1);
		}
		if (b)
			return -1;
		for (i++; i < bytes; i++)
			if (m[i])
				return -1;
	}
	return plen;
}

static void apply_plen(uint8_t *a, int bytes, int plen)
{
	for (int i = 0; i < bytes; i++, plen -= 8)
		a[i] &= plen >= 8 ? 0xff : plen > 0 ? (uint8_t)(0xff << (8 - plen)) : 0;
}

/* IPv4 "a.b.c.d[/mask]" (abbreviated forms as inet_aton reads them: 10.12
 * is 10.0.0.12), a host name (resolved once, unless <nodns>), or IPv6
 * "addr[/bits]". */
static int parse_ip(const char *s, int nodns, int *family, int *plen, uint8_t *addr,
                    char *err, size_t errlen)
{
	char host[256];
	const char *slash = strchr(s, '/');
	size_t hlen = slash ? (size_t)(slash - s) : strlen(s);
	struct in_addr a4;

	if (hlen >= sizeof(host))
		return errmsg_set(err, errlen, "'%s' is not a valid address", s);
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	memset(addr, 0, 16);
	if (strchr(host, ':')) {
		int64_t bits = 128;

		if (inet_pton(AF_INET6, host, addr) != 1)
			return errmsg_set(err, errlen, "'%s' is not a valid IPv6 address", s);
		if (slash && (!smp_str_to_sint(slash + 1, strlen(slash + 1), &bits) ||
		              bits < 0 || bits > 128))
			return errmsg_set(err, errlen, "'%s': invalid IPv6 prefix length", s);
		*family = AF_INET6;
		*plen = (int)bits;
		apply_plen(addr, 16, *plen);
		return 0;
	}
	if (!inet_aton(host, &a4)) {
		struct addrinfo hints = { .ai_family = AF_INET }, *res = NULL;

		if (nodns || !pat_dns_enabled || !*host || getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
			return errmsg_set(err, errlen, "'%s' is not a valid IPv4 or IPv6 address", s);
		a4 = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
		freeaddrinfo(res);
	}
	memcpy(addr, &a4, 4);
	*family = AF_INET;
	*plen = 32;
	if (slash) {
		struct in_addr m;

		if (!smp_parse_ipv4_mask(slash + 1, &m) ||
		    (*plen = mask_to_plen((uint8_t *)&m, 4)) < 0)
			return errmsg_set(err, errlen, "'%s': invalid IPv4 mask", s);
	}
	apply_plen(addr, 4, *plen);
	return 0;
}

/* Strips leading and trailing delimiters (dir, dom patterns). */
static void strip_delims(const char **p, size_t *len, const char *delims)
{
	while (*len && strchr(delims, **p)) {
		(*p)++;
		(*len)--;
	}
	while (*len && strchr(delims, (*p)[*len - 1]))
		(*len)--;
}

/* Parses a map value for <t>. */
static int parse_value(enum smp_type t, const char *v, struct sample *out,
                       char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (t == SMP_T_ANY)
		return 0;
	if (!v)
		v = "";
	switch (t) {
	case SMP_T_STR:
		smp_set_const_str(out, SMP_T_STR, v, strlen(v));
		return 0;
	case SMP_T_SINT:
		if (!smp_str_to_sint(v, strlen(v), &out->data.sint))
			return errmsg_set(err, errlen, "unable to parse value '%s' as an integer", v);
		out->type = SMP_T_SINT;
		return 0;
	case SMP_T_ADDR: case SMP_T_IPV4: case SMP_T_IPV6:
		if (inet_pton(AF_INET, v, &out->data.ipv4) == 1)
			out->type = SMP_T_IPV4;
		else if (inet_pton(AF_INET6, v, &out->data.ipv6) == 1)
			out->type = SMP_T_IPV6;
		else
			return errmsg_set(err, errlen, "unable to parse value '%s' as an IP address", v);
		return 0;
	default:
		return errmsg_set(err, errlen, "unsupported map output type");
	}
}

/* HAProxy 2.6 knows eight methods, spelt exactly (PATCH is not one). */
static int meth_code(const char *name, size_t len)
{
	int m = smp_meth_from_str(name, len);

	return m == HTTP_METH_PATCH ? HTTP_METH_OTHER : m;
}

/* As HAProxy 2.6: a known method matches by its code only ("method -i post"
 * never matches POST); another token is compared with case unless -i. */
static int match_meth(const struct sample *s, const struct pat_entry *e, int icase)
{
	const struct smp_str *tok = &s->data.meth.str;
	int code = s->data.meth.meth == HTTP_METH_PATCH ? HTTP_METH_OTHER : (int)s->data.meth.meth;

	if (e->u.meth.meth != HTTP_METH_OTHER || code != HTTP_METH_OTHER)
		return code == e->u.meth.meth;
	if (tok->len != e->u.meth.len)
		return 0;
	return icase ? strncasecmp(tok->ptr, e->u.meth.ptr, tok->len) == 0
	             : memcmp(tok->ptr, e->u.meth.ptr, tok->len) == 0;
}

/* Fills <e> from <key> for the expression's method. */
static int parse_entry(struct pat_entry *e, const struct pat_expr *x, const char *key,
                       const char *value, int nodns, char *err, size_t errlen)
{
	size_t len = strlen(key);
	const char *p = key;

	if (parse_value(x->val_type, value, &e->value, err, errlen) < 0)
		return -1;
	switch (x->match) {
	case PAT_MATCH_FOUND: case PAT_MATCH_BOOL:
		return 0;
	case PAT_MATCH_INT: case PAT_MATCH_LEN:
		if (x->flags & PAT_F_DOTTED_VER)
			return parse_dotted_range(key, &e->u.range.min, &e->u.range.max, err, errlen);
		return parse_range(key, &e->u.range.min, &e->u.range.max, err, errlen);
	case PAT_MATCH_IP:
		return parse_ip(key, nodns || (x->flags & PAT_F_NO_DNS), &e->u.ip.family,
		                &e->u.ip.plen, e->u.ip.addr, err, errlen);
	case PAT_MATCH_REG:
		e->u.re = regex_compile(key, x->flags & PAT_F_ICASE, err, errlen);
		return e->u.re ? 0 : -1;
	case PAT_MATCH_BIN:
		if (len % 2)
			return errmsg_set(err, errlen, "'%s': an even number of hex digits is expected", key);
		e->owned = malloc(len / 2 + 1);
		if (!e->owned)
			return errmsg_set(err, errlen, "out of memory");
		for (size_t i = 0; i < len; i += 2) {
			int h = hex_digit_value(key[i]), l = hex_digit_value(key[i + 1]);

			if (h < 0 || l < 0)
				return errmsg_set(err, errlen, "'%s' is not a hex string", key);
			e->owned[i / 2] = (unsigned char)(h << 4 | l);
		}
		e->u.str.ptr = (const char *)e->owned;
		e->u.str.len = len / 2;
		return 0;
	case PAT_MATCH_METH:
		e->u.meth.ptr = key;
		e->u.meth.len = len;
		e->u.meth.meth = meth_code(key, len);
		return 0;
	case PAT_MATCH_DIR:
		strip_delims(&p, &len, "/");
		break;
	case PAT_MATCH_DOM:
		strip_delims(&p, &len, "/?.:");
		break;
	default:
		break;
	}
	if ((x->flags & PAT_F_ICASE) &&
	    (x->match == PAT_MATCH_STR || x->match == PAT_MATCH_BEG)) {
		/* indexed methods store the folded key */
		e->owned = malloc(len + 1);
		if (!e->owned)
			return errmsg_set(err, errlen, "out of memory");
		for (size_t i = 0; i < len; i++)
			e->owned[i] = (unsigned char)tolower((unsigned char)p[i]);
		p = (const char *)e->owned;
	}
	e->u.str.ptr = p;
	e->u.str.len = len;
	return 0;
}

static void entry_free(struct pat_entry *e, enum pat_match m)
{
	if (m == PAT_MATCH_REG)
		regex_free(e->u.re);
	free(e->owned);
	free(e);
}

/* ------------------------------------------------------------------ indexes */

static uint64_t hash_bytes(const void *p, size_t len, int fold, uint64_t h)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < len; i++) {
		h ^= fold ? (unsigned char)tolower(s[i]) : s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t entry_hash(const struct pat_entry *e, enum pat_match m)
{
	if (m == PAT_MATCH_IP)
		return hash_bytes(e->u.ip.addr, 16, 0, 0xcbf29ce484222325ull ^
		                  (uint64_t)(e->u.ip.family * 256 + e->u.ip.plen));
	return hash_bytes(e->u.str.ptr, e->u.str.len, 0, 0xcbf29ce484222325ull);
}

static int idx_rehash(struct pat_index *ix, enum pat_match m)
{
	size_t n = ix->nbuckets ? ix->nbuckets * 4 : 64;
	struct pat_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return -1;
	/* re-insert in insertion order so that chains stay ordered by seq */
	for (struct pat_entry *e = ix->head; e; e = e->list_next) {
		struct pat_entry **pp = &b[entry_hash(e, m) & (n - 1)];

		while (*pp)
			pp = &(*pp)->hash_next;
		e->hash_next = NULL;
		*pp = e;
	}
	free(ix->buckets);
	ix->buckets = b;
	ix->nbuckets = n;
	return 0;
}

static struct trie_node *trie_child(struct trie_node *n, unsigned char c, int create)
{
	int lo = 0, hi = n->nkids;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (n->keys[mid] == c)
			return n->kids[mid];
		if (n->keys[mid] < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!create)
		return NULL;
	if (n->nkids == n->cap) {
		int cap = n->cap ? n->cap * 2 : 2;
		unsigned char *k = realloc(n->keys, (size_t)cap);
		struct trie_node **kids;

		if (!k)
			return NULL;
		n->keys = k;
		kids = realloc(n->kids, sizeof(*kids) * (size_t)cap);
		if (!kids)
			return NULL;
		n->kids = kids;
		n->cap = cap;
	}
	memmove(n->keys + lo + 1, n->keys + lo, (size_t)(n->nkids - lo));
	memmove(n->kids + lo + 1, n->kids + lo, sizeof(*n->kids) * (size_t)(n->nkids - lo));
	n->keys[lo] = c;
	n->kids[lo] = calloc(1, sizeof(struct trie_node));
	if (!n->kids[lo])
		return NULL;
	n->nkids++;
	return n->kids[lo];
}

static void trie_free(struct trie_node *n)
{
	if (!n)
		return;
	for (int i = 0; i < n->nkids; i++)
		trie_free(n->kids[i]);
	free(n->keys);
	free(n->kids);
	free(n);
}

/* Appends to a seq-ordered chain (new entries have the highest seq). */
static void chain_append(struct pat_entry **pp, struct pat_entry *e)
{
	while (*pp)
		pp = &(*pp)->hash_next;
	e->hash_next = NULL;
	*pp = e;
}

static int idx_insert(struct pat_expr *x, struct pat_entry *e)
{
	struct pat_index *ix = x->idx;

	e->list_next = NULL;
	*ix->tail = e;
	ix->tail = &e->list_next;
	ix->count++;
	if (x->match == PAT_MATCH_STR || x->match == PAT_MATCH_IP) {
		if (x->match == PAT_MATCH_IP) {
			if (e->u.ip.family == AF_INET)
				ix->v4_lens |= 1ull << e->u.ip.plen;
			else
				ix->v6_lens[e->u.ip.plen / 64] |= 1ull << (e->u.ip.plen % 64);
		}
		if (ix->count > ix->nbuckets * 2)
			return idx_rehash(ix, x->match);   /* includes e */
		chain_append(&ix->buckets[entry_hash(e, x->match) & (ix->nbuckets - 1)], e);
	} else if (x->match == PAT_MATCH_BEG) {
		struct trie_node *n;

		if (!ix->trie && !(ix->trie = calloc(1, sizeof(*ix->trie))))
			return -1;
		n = ix->trie;
		for (size_t i = 0; i < e->u.str.len; i++)
			if (!(n = trie_child(n, (unsigned char)e->u.str.ptr[i], 1)))
				return -1;
		chain_append(&n->entries, e);
	}
	return 0;
}

static void chain_remove(struct pat_entry **pp, struct pat_entry *e)
{
	for (; *pp; pp = &(*pp)->hash_next)
		if (*pp == e) {
			*pp = e->hash_next;
			return;
		}
}

static void idx_remove(struct pat_expr *x, struct pat_entry *e)
{
	struct pat_index *ix = x->idx;
	struct pat_entry **pp;

	for (pp = &ix->head; *pp; pp = &(*pp)->list_next)
		if (*pp == e) {
			*pp = e->list_next;
			if (ix->tail == &e->list_next)
				ix->tail = pp;
			ix->count--;
			break;
		}
	if ((x->match == PAT_MATCH_STR || x->match == PAT_MATCH_IP) && ix->nbuckets)
		chain_remove(&ix->buckets[entry_hash(e, x->match) & (ix->nbuckets - 1)], e);
	else if (x->match == PAT_MATCH_BEG && ix->trie) {
		struct trie_node *n = ix->trie;

		for (size_t i = 0; n && i < e->u.str.len; i++)
			n = trie_child(n, (unsigned char)e->u.str.ptr[i], 0);
		if (n)
			chain_remove(&n->entries, e);
	}
	/* the IP length bitmaps are not shrunk: one more probe at worst */
}

/* Frees every entry of the index and leaves it empty and usable. */
static void idx_empty(struct pat_expr *x)
{
	struct pat_index *ix = x->idx;
	struct pat_entry *e, *next;

	for (e = ix->head; e; e = next) {
		next = e->list_next;
		entry_free(e, x->match);
	}
	free(ix->buckets);
	trie_free(ix->trie);
	memset(ix, 0, sizeof(*ix));
	ix->tail = &ix->head;
}

static void idx_free(struct pat_expr *x)
{
	if (!x->idx)
		return;
	idx_empty(x);
	free(x->idx);
	x->idx = NULL;
}

/* Creates the entry of <elt> in <x>. */
static int expr_add_elt(struct pat_expr *x, struct pat_ref_elt *elt, int nodns,
                        struct pat_entry **out, char *err, size_t errlen)
{
	struct pat_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return errmsg_set(err, errlen, "out of memory");
	e->expr = x;
	e->elt = elt;
	e->seq = __atomic_fetch_add(&next_seq, 1, __ATOMIC_RELAXED);
	if (parse_entry(e, x, elt->key, elt->value, nodns, err, errlen) < 0) {
		entry_free(e, x->match);
		return -1;
	}
	if (idx_insert(x, e) < 0) {
		/* only a rehash or a trie node can fail, after the list insert */
		idx_remove(x, e);
		entry_free(e, x->match);
		return errmsg_set(err, errlen, "out of memory");
	}
	*out = e;
	return 0;
}

/* ------------------------------------------------------------------ references */

struct pat_ref *pat_ref_lookup(const char *name)
{
	struct list *l;

	if (name[0] == '#') {
		int64_t id;

		if (!smp_str_to_sint(name + 1, strlen(name + 1), &id))
			return NULL;
		return pat_ref_lookup_id((int)id);
	}
	for (l = pat_refs.next; l != &pat_refs; l = l->next) {
		struct pat_ref *r = list_elem(l, struct pat_ref, list);

		if (r->name && strcmp(r->name, name) == 0)
			return r;
	}
	return NULL;
}

struct pat_ref *pat_ref_lookup_id(int id)
{
	for (struct list *l = pat_refs.next; l != &pat_refs; l = l->next) {
		struct pat_ref *r = list_elem(l, struct pat_ref, list);

		if (r->unique_id == id)
			return r;
	}
	return NULL;
}

static void ref_free(struct pat_ref *r);

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Gives the references created without a -u id the ids HAProxy gives them
 * once the whole configuration is read: in creation order, the smallest
 * ids that no -u took. Called when a -u claims an id that such a
 * reference holds (configuration time: nobody has seen the ids yet). */
static int renumber_auto_ids(void)
{
	int *given = NULL, n = 0, next = 0, k = 0;
	struct list *l;

	for (l = pat_refs.next; l != &pat_refs; l = l->next) {
		struct pat_ref *r = list_elem(l, struct pat_ref, list);
		int *g;

		if (r->flags & PAT_REF_AUTO_ID)
			continue;
		if (!(g = realloc(given, sizeof(*g) * (size_t)(n + 1)))) {
			free(given);
			return -1;
		}
		given = g;
		given[n++] = r->unique_id;
	}
	if (n)
		qsort(given, (size_t)n, sizeof(*given), cmp_int);
	for (l = pat_refs.next; l != &pat_refs; l = l->next) {
		struct pat_ref *r = list_elem(l, struct pat_ref, list);

		if (!(r->flags & PAT_REF_AUTO_ID))
			continue;
		for (;;) {
			while (k < n && given[k] < next)
				k++;
			if (k < n && given[k] == next)
				next++;
			else
				break;
		}
		r->unique_id = next++;
	}
	next_unique_id = next;
	free(given);
	return 0;
}

struct pat_ref *pat_ref_new(const char *name, const char *display, int unique_id,
                            unsigned int flags, char *err, size_t errlen)
{
	struct pat_ref *r, *holder = NULL;
	pthread_rwlockattr_t attr;

	if (unique_id >= 0 && (holder = pat_ref_lookup_id(unique_id)) &&
	    !(holder->flags & PAT_REF_AUTO_ID)) {
		errmsg_set(err, errlen, "unique id %d is already used", unique_id);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r || (name && !(r->name = strdup(name))) ||
	    !(r->display = strdup(display ? display : name ? name : ""))) {
		if (r)
			free(r->name);
		free(r);
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	flags &= ~PAT_REF_AUTO_ID;
	if (unique_id < 0) {
		while (pat_ref_lookup_id(next_unique_id))
			next_unique_id++;
		unique_id = next_unique_id++;
		flags |= PAT_REF_AUTO_ID;
	}
	r->unique_id = unique_id;
	r->flags = flags;
	pthread_rwlockattr_init(&attr);
	/* the CLI must not starve behind a continuous flow of lookups */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&r->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	list_init(&r->elts);
	list_init(&r->exprs);
	list_append(&pat_refs, &r->list);
	if (holder && renumber_auto_ids() < 0) {
		ref_free(r);
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	return r;
}

static struct pat_ref_elt *elt_new(const char *key, const char *value, int line)
{
	struct pat_ref_elt *e = calloc(1, sizeof(*e));

	if (!e || !(e->key = strdup(key)) || (value && !(e->value = strdup(value)))) {
		if (e)
			free(e->key);
		free(e);
		return NULL;
	}
	e->line = line;
	return e;
}

static void elt_free(struct pat_ref_elt *e)
{
	free(e->key);
	free(e->value);
	free(e);
}

/* Indexes <elt> in every index of <ref>, all or nothing. */
static int ref_index_elt(struct pat_ref *ref, struct pat_ref_elt *elt, int nodns,
                         char *err, size_t errlen)
{
	struct list *l;

	for (l = ref->exprs.next; l != &ref->exprs; l = l->next) {
		struct pat_expr *x = list_elem(l, struct pat_expr, ref_list);
		struct pat_entry *e;

		if (expr_add_elt(x, elt, nodns, &e, err, errlen) < 0) {
			/* undo the indexes done */
			while (elt->entries) {
				struct pat_entry *d = elt->entries;

				elt->entries = d->elt_next;
				idx_remove(d->expr, d);
				entry_free(d, d->expr->match);
			}
			return -1;
		}
		e->elt_next = elt->entries;
		elt->entries = e;
	}
	return 0;
}

static int ref_append(struct pat_ref *ref, const char *key, const char *value, int line,
                      int nodns, char *err, size_t errlen)
{
	struct pat_ref_elt *elt = elt_new(key, value, line);

	if (!elt)
		return errmsg_set(err, errlen, "out of memory");
	if (ref_index_elt(ref, elt, nodns, err, errlen) < 0) {
		elt_free(elt);
		return -1;
	}
	list_append(&ref->elts, &elt->list);
	ref->count++;
	return 0;
}

int pat_ref_append(struct pat_ref *ref, const char *key, const char *value, int line,
                   int nodns, char *err, size_t errlen)
{
	int ret;

	pthread_rwlock_wrlock(&ref->lock);
	ret = ref_append(ref, key, value, line, nodns, err, errlen);
	pthread_rwlock_unlock(&ref->lock);
	return ret;
}

int pat_ref_load_file(struct pat_ref *ref, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lineno = 0, ret = 0;

	struct stat st;

	if (!f)
		return errmsg_set(err, errlen, "failed to open pattern file <%s>: %s", path,
		                  strerror(errno));
	/* a FIFO or a device would block or never end the configuration */
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return errmsg_set(err, errlen, "pattern file <%s> is not a regular file", path);
	}
	pthread_rwlock_wrlock(&ref->lock);
	while ((n = getline(&line, &cap, f)) >= 0) {
		char *p = line, *key, *value = NULL, sub[256];

		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (*p == '#')
			continue;       /* " #x" is the pattern "#x" (manual 7.1) */
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			continue;
		key = p;
		if (ref->flags & PAT_REF_MAP) {
			char *end;

			while (*p && *p != ' ' && *p != '\t')
				p++;
			if (*p)
				*p++ = '\0';
			while (*p == ' ' || *p == '\t')
				p++;
			value = p;
			end = p + strlen(p);
			while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
				*--end = '\0';
		}
		if (ref_append(ref, key, value, lineno, 0, sub, sizeof(sub)) < 0) {
			ret = errmsg_set(err, errlen, "file '%s' line %d: %s", path, lineno, sub);
			break;
		}
	}
	pthread_rwlock_unlock(&ref->lock);
	free(line);
	fclose(f);
	return ret;
}

void pat_ref_foreach(struct pat_ref *ref, int (*fn)(const struct pat_ref_elt *e, void *arg),
                     void *arg)
{
	pthread_rwlock_rdlock(&ref->lock);
	for (struct list *l = ref->elts.next; l != &ref->elts; l = l->next)
		if (fn(list_elem(l, struct pat_ref_elt, list), arg))
			break;
	pthread_rwlock_unlock(&ref->lock);
}

void pat_refs_foreach(int (*fn)(struct pat_ref *ref, void *arg), void *arg)
{
	for (struct list *l = pat_refs.next; l != &pat_refs; l = l->next)
		if (fn(list_elem(l, struct pat_ref, list), arg))
			break;
}

int pat_ref_add(struct pat_ref *ref, const char *key, const char *value, char *err,
                size_t errlen)
{
	int ret;

	if ((ref->flags & PAT_REF_MAP) && !value)
		return errmsg_set(err, errlen, "a value is required for a map");
	pthread_rwlock_wrlock(&ref->lock);
	/* runtime additions never resolve names (manual 7.1, "-n") */
	ret = ref_append(ref, key, (ref->flags & PAT_REF_MAP) ? value : NULL, 0, 1, err, errlen);
	pthread_rwlock_unlock(&ref->lock);
	return ret;
}

static void elt_unindex(struct pat_ref_elt *elt)
{
	while (elt->entries) {
		struct pat_entry *e = elt->entries;

		elt->entries = e->elt_next;
		idx_remove(e->expr, e);
		entry_free(e, e->expr->match);
	}
}

/* Unlinks and frees <elt> (write lock held). */
static void elt_delete(struct pat_ref *ref, struct pat_ref_elt *elt)
{
	elt_unindex(elt);
	list_del_init(&elt->list);
	elt_free(elt);
	ref->count--;
}

/* Deletes the entries whose key is <key>, or, with <key> NULL, the one
 * entry whose address is <id>. */
static int ref_delete(struct pat_ref *ref, const char *key, const void *id)
{
	struct list *l, *next;
	int n = 0;

	pthread_rwlock_wrlock(&ref->lock);
	for (l = ref->elts.next; l != &ref->elts; l = next) {
		struct pat_ref_elt *elt = list_elem(l, struct pat_ref_elt, list);

		next = l->next;
		if (key ? strcmp(elt->key, key) != 0 : (const void *)elt != id)
			continue;
		elt_delete(ref, elt);
		n++;
	}
	pthread_rwlock_unlock(&ref->lock);
	return n;
}

int pat_ref_delete(struct pat_ref *ref, const char *key)
{
	return ref_delete(ref, key, NULL);
}

int pat_ref_delete_elt(struct pat_ref *ref, const void *id)
{
	return ref_delete(ref, NULL, id);
}

/* Changes the value of the entries whose key is <key>, or, with <key>
 * NULL, of the one entry whose address is <id>: all or nothing, the value
 * being checked against every index first. */
static int ref_set(struct pat_ref *ref, const char *key, const void *id, const char *value,
                   char *err, size_t errlen)
{
	struct list *l;
	int n = 0;

	if (!(ref->flags & PAT_REF_MAP))
		return errmsg_set(err, errlen, "not a map");
	pthread_rwlock_wrlock(&ref->lock);
	for (l = ref->exprs.next; l != &ref->exprs; l = l->next) {
		struct pat_expr *x = list_elem(l, struct pat_expr, ref_list);
		struct sample tmp;

		if (parse_value(x->val_type, value, &tmp, err, errlen) < 0) {
			pthread_rwlock_unlock(&ref->lock);
			return -1;
		}
	}
	for (l = ref->elts.next; l != &ref->elts; l = l->next) {
		struct pat_ref_elt *elt = list_elem(l, struct pat_ref_elt, list);
		char *v;

		if (key ? strcmp(elt->key, key) != 0 : (const void *)elt != id)
			continue;
		if (!(v = strdup(value))) {
			pthread_rwlock_unlock(&ref->lock);
			return errmsg_set(err, errlen, "out of memory");
		}
		free(elt->value);
		elt->value = v;
		for (struct pat_entry *e = elt->entries; e; e = e->elt_next)
			parse_value(e->expr->val_type, v, &e->value, NULL, 0);
		n++;
	}
	pthread_rwlock_unlock(&ref->lock);
	return n;
}

int pat_ref_set(struct pat_ref *ref, const char *key, const char *value, char *err,
                size_t errlen)
{
	return ref_set(ref, key, NULL, value, err, errlen);
}

int pat_ref_set_elt(struct pat_ref *ref, const void *id, const char *value, char *err,
                    size_t errlen)
{
	return ref_set(ref, NULL, id, value, err, errlen);
}

unsigned int pat_ref_entries(struct pat_ref *ref)
{
	unsigned int n;

	pthread_rwlock_rdlock(&ref->lock);
	n = ref->count;
	pthread_rwlock_unlock(&ref->lock);
	return n;
}

void pat_ref_foreach_expr(struct pat_ref *ref, int (*fn)(struct pat_expr *x, void *arg),
                          void *arg)
{
	for (struct list *l = ref->exprs.next; l != &ref->exprs; l = l->next)
		if (fn(list_elem(l, struct pat_expr, ref_list), arg))
			break;
}

/* Empties every index at once rather than unindexing entry by entry,
 * which costs a walk of the index's list per entry: O(n^2) on a large map. */
void pat_ref_clear(struct pat_ref *ref)
{
	struct list *l, *next;

	pthread_rwlock_wrlock(&ref->lock);
	for (l = ref->exprs.next; l != &ref->exprs; l = l->next)
		idx_empty(list_elem(l, struct pat_expr, ref_list));
	for (l = ref->elts.next; l != &ref->elts; l = next) {
		struct pat_ref_elt *elt = list_elem(l, struct pat_ref_elt, list);

		next = l->next;
		elt->entries = NULL;
		list_del_init(&elt->list);
		elt_free(elt);
	}
	ref->count = 0;
	pthread_rwlock_unlock(&ref->lock);
}

/* Empties the indexes of <ref> and moves its entries to <to>, their index
 * entries gone (write lock held). */
static void ref_detach_all(struct pat_ref *ref, struct list *to)
{
	struct list *l, *next;

	for (l = ref->exprs.next; l != &ref->exprs; l = l->next)
		idx_empty(list_elem(l, struct pat_expr, ref_list));
	for (l = ref->elts.next; l != &ref->elts; l = next) {
		struct pat_ref_elt *elt = list_elem(l, struct pat_ref_elt, list);

		next = l->next;
		elt->entries = NULL;
		list_del_init(&elt->list);
		list_append(to, &elt->list);
	}
	ref->count = 0;
}

static void elt_list_free(struct list *head)
{
	struct list *l, *next;

	for (l = head->next; l != head; l = next) {
		next = l->next;
		list_del_init(l);
		elt_free(list_elem(l, struct pat_ref_elt, list));
	}
}

int pat_ref_replace(struct pat_ref *ref, size_t n, const char *const *keys,
                    const char *const *values, char *err, size_t errlen)
{
	struct list old = LIST_HEAD_INIT(old), failed = LIST_HEAD_INIT(failed);
	struct list *l, *next;
	int ret = 0;

	pthread_rwlock_wrlock(&ref->lock);
	ref_detach_all(ref, &old);
	for (size_t i = 0; i < n; i++) {
		if (ref_append(ref, keys[i], (ref->flags & PAT_REF_MAP) ? values[i] : NULL, 0, 1,
		               err, errlen) < 0) {
			ret = -1;
			break;
		}
	}
	if (ret < 0) {
		/* back to the old entries, as they were */
		ref_detach_all(ref, &failed);
		for (l = old.next; l != &old; l = next) {
			struct pat_ref_elt *elt = list_elem(l, struct pat_ref_elt, list);
			char e2[8];

			next = l->next;
			list_del_init(&elt->list);
			if (ref_index_elt(ref, elt, 1, e2, sizeof(e2)) < 0) {
				elt_free(elt);   /* only out of memory: it was valid */
				continue;
			}
			list_append(&ref->elts, &elt->list);
			ref->count++;
		}
	}
	pthread_rwlock_unlock(&ref->lock);
	elt_list_free(&old);
	elt_list_free(&failed);
	return ret;
}

struct pat_expr *pat_expr_get(struct pat_ref *ref, enum pat_match match, unsigned int flags,
                              enum smp_type val_type, char *err, size_t errlen)
{
	struct pat_expr *x;
	struct list *l;

	for (l = ref->exprs.next; l != &ref->exprs; l = l->next) {
		x = list_elem(l, struct pat_expr, ref_list);
		if (x->match == match && x->flags == flags && x->val_type == val_type) {
			x->refcnt++;
			return x;
		}
	}
	x = calloc(1, sizeof(*x));
	if (!x || !(x->idx = calloc(1, sizeof(*x->idx)))) {
		free(x);
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	x->idx->tail = &x->idx->head;
	x->ref = ref;
	x->match = match;
	x->flags = flags;
	x->val_type = val_type;
	x->refcnt = 1;
	pthread_rwlock_wrlock(&ref->lock);
	for (l = ref->elts.next; l != &ref->elts; l = l->next) {
		struct pat_ref_elt *elt = list_elem(l, struct pat_ref_elt, list);
		struct pat_entry *e;
		char sub[256];

		if (expr_add_elt(x, elt, 0, &e, sub, sizeof(sub)) < 0) {
			if (elt->line && ref->name)
				errmsg_set(err, errlen, "file '%s' line %d: %s", ref->name, elt->line, sub);
			else
				errmsg_set(err, errlen, "%s", sub);
			/* detach the entries made so far */
			for (struct list *k = ref->elts.next; k != l; k = k->next) {
				struct pat_ref_elt *o = list_elem(k, struct pat_ref_elt, list);

				if (o->entries && o->entries->expr == x)
					o->entries = o->entries->elt_next;
			}
			pthread_rwlock_unlock(&ref->lock);
			idx_free(x);
			free(x);
			return NULL;
		}
		e->elt_next = elt->entries;
		elt->entries = e;
	}
	list_append(&ref->exprs, &x->ref_list);
	pthread_rwlock_unlock(&ref->lock);
	return x;
}

void pat_expr_put(struct pat_expr *x)
{
	struct pat_ref *ref;

	if (!x || --x->refcnt)
		return;
	pthread_rwlock_wrlock(&x->ref->lock);
	for (struct list *l = x->ref->elts.next; l != &x->ref->elts; l = l->next) {
		struct pat_ref_elt *elt = list_elem(l, struct pat_ref_elt, list);
		struct pat_entry **pp = &elt->entries;

		while (*pp) {
			if ((*pp)->expr == x)
				*pp = (*pp)->elt_next;
			else
				pp = &(*pp)->elt_next;
		}
	}
	list_del_init(&x->ref_list);
	pthread_rwlock_unlock(&x->ref->lock);
	ref = x->ref;
	idx_free(x);
	free(x);
	pat_ref_release(ref);
}

int pat_check(enum pat_match match, unsigned int flags, enum smp_type val_type,
              const char *key, const char *value, char *err, size_t errlen)
{
	struct pat_expr x = { .match = match, .flags = flags, .val_type = val_type };
	struct pat_entry *e = calloc(1, sizeof(*e));
	int ret;

	if (!e)
		return errmsg_set(err, errlen, "out of memory");
	ret = parse_entry(e, &x, key, value, 1, err, errlen);
	entry_free(e, match);
	return ret;
}

unsigned int pat_expr_count(const struct pat_expr *x)
{
	return x->idx->count;
}

static void ref_free(struct pat_ref *r)
{
	while (!list_empty(&r->exprs)) {
		struct pat_expr *x = list_elem(r->exprs.next, struct pat_expr, ref_list);

		list_del_init(&x->ref_list);
		idx_free(x);
		free(x);
	}
	while (!list_empty(&r->elts)) {
		struct pat_ref_elt *e = list_elem(r->elts.next, struct pat_ref_elt, list);

		list_del_init(&e->list);
		elt_free(e);
	}
	list_del_init(&r->list);
	pthread_rwlock_destroy(&r->lock);
	free(r->name);
	free(r->display);
	free(r);
}

void pat_ref_release(struct pat_ref *ref)
{
	if (ref && list_empty(&ref->exprs))
		ref_free(ref);
}

void pat_refs_free_all(void)
{
	while (!list_empty(&pat_refs))
		ref_free(list_elem(pat_refs.next, struct pat_ref, list));
}

/* ------------------------------------------------------------------ matching */

int pat_match_novalue(enum pat_match m, const struct sample *smp)
{
	if (m == PAT_MATCH_FOUND)
		return 1;
	if (m == PAT_MATCH_BOOL) {
		struct sample s = *smp;

		return smp_cast(&s, SMP_T_SINT) && s.data.sint != 0;
	}
	return 0;
}

static int bytes_eq(const char *a, const char *b, size_t len, int icase)
{
	return icase ? strncasecmp(a, b, len) == 0 : memcmp(a, b, len) == 0;
}

/* <needle> delimited in <hay> by a byte of <delims> or an end. */
static int match_word(const char *hay, size_t hlen, const char *needle, size_t nlen,
                      const char *delims, int icase)
{
	if (!nlen)
		return 0;
	for (size_t i = 0; i + nlen <= hlen; i++) {
		if ((i && !strchr(delims, hay[i - 1])) || !bytes_eq(hay + i, needle, nlen, icase))
			continue;
		if (i + nlen == hlen || strchr(delims, hay[i + nlen]))
			return 1;
	}
	return 0;
}

static int match_sub(const char *hay, size_t hlen, const char *needle, size_t nlen, int icase)
{
	if (!icase)
		return memmem(hay, hlen, needle, nlen) != NULL;
	for (size_t i = 0; i + nlen <= hlen; i++)
		if (strncasecmp(hay + i, needle, nlen) == 0)
			return 1;
	return 0;
}

/* First entry of the ordered list matching <s> (list methods). */
static struct pat_entry *match_list(const struct pat_expr *x, const struct sample *s,
                                    long *ovec, int *ngroups)
{
	int icase = x->flags & PAT_F_ICASE;
	const char *p = s->data.str.ptr;
	size_t len = s->data.str.len;

	for (struct pat_entry *e = x->idx->head; e; e = e->list_next) {
		const char *k = e->u.str.ptr;
		size_t kl = e->u.str.len;
		int ok = 0;

		switch (x->match) {
		case PAT_MATCH_INT:
			ok = s->data.sint >= e->u.range.min && s->data.sint <= e->u.range.max;
			break;
		case PAT_MATCH_LEN:
			ok = (int64_t)len >= e->u.range.min && (int64_t)len <= e->u.range.max;
			break;
		case PAT_MATCH_BIN:
			ok = kl == len && memcmp(k, p, len) == 0;
			break;
		case PAT_MATCH_SUB:
			ok = kl <= len && match_sub(p, len, k, kl, icase);
			break;
		case PAT_MATCH_END:
			ok = kl <= len && bytes_eq(p + len - kl, k, kl, icase);
			break;
		case PAT_MATCH_DIR:
			ok = match_word(p, len, k, kl, "/", icase);
			break;
		case PAT_MATCH_DOM:
			ok = match_word(p, len, k, kl, "/?.:", icase);
			break;
		case PAT_MATCH_REG:
			if (ovec) {
				*ngroups = regex_match_groups(e->u.re, p, len, 0, ovec, REGEX_MAX_GROUPS);
				ok = *ngroups > 0;
			} else
				ok = regex_match(e->u.re, p, len);
			break;
		case PAT_MATCH_METH:
			ok = match_meth(s, e, icase);
			break;
		default:
			break;
		}
		if (ok)
			return e;
	}
	return NULL;
}

static struct pat_entry *match_str(const struct pat_expr *x, const struct sample *s)
{
	const struct pat_index *ix = x->idx;
	int icase = x->flags & PAT_F_ICASE;
	uint64_t h;

	if (!ix->nbuckets)
		return NULL;
	h = hash_bytes(s->data.str.ptr, s->data.str.len, icase, 0xcbf29ce484222325ull);
	for (struct pat_entry *e = ix->buckets[h & (ix->nbuckets - 1)]; e; e = e->hash_next)
		if (e->u.str.len == s->data.str.len &&
		    bytes_eq(s->data.str.ptr, e->u.str.ptr, e->u.str.len, icase))
			return e;
	return NULL;
}

/* Longest matching prefix. */
static struct pat_entry *match_beg(const struct pat_expr *x, const struct sample *s)
{
	const struct trie_node *n = x->idx->trie;
	struct pat_entry *best = NULL;
	int icase = x->flags & PAT_F_ICASE;

	for (size_t i = 0; n; i++) {
		if (n->entries)
			best = n->entries;
		if (i == s->data.str.len)
			break;
		n = trie_child((struct trie_node *)n,
		               icase ? (unsigned char)tolower((unsigned char)s->data.str.ptr[i]) :
		                       (unsigned char)s->data.str.ptr[i], 0);
	}
	return best;
}

static struct pat_entry *ip_lookup(const struct pat_index *ix, int family, const uint8_t *a)
{
	int max = family == AF_INET ? 32 : 128, bytes = family == AF_INET ? 4 : 16;

	if (!ix->nbuckets)
		return NULL;
	for (int plen = max; plen >= 0; plen--) {
		struct pat_entry probe;
		uint64_t h;
		int present = family == AF_INET ? (ix->v4_lens >> plen) & 1 :
		              (ix->v6_lens[plen / 64] >> (plen % 64)) & 1;

		if (!present)
			continue;
		memset(&probe.u.ip, 0, sizeof(probe.u.ip));
		probe.u.ip.family = family;
		probe.u.ip.plen = plen;
		memcpy(probe.u.ip.addr, a, (size_t)bytes);
		apply_plen(probe.u.ip.addr, bytes, plen);
		h = entry_hash(&probe, PAT_MATCH_IP);
		for (struct pat_entry *e = ix->buckets[h & (ix->nbuckets - 1)]; e; e = e->hash_next)
			if (e->u.ip.family == family && e->u.ip.plen == plen &&
			    memcmp(e->u.ip.addr, probe.u.ip.addr, 16) == 0)
				return e;
	}
	return NULL;
}

/* Manual 7.1.6: each family against its own patterns, then across. */
static struct pat_entry *match_ip(const struct pat_expr *x, const struct sample *s)
{
	struct pat_entry *e;
	uint8_t a[16];
	struct in_addr v4;

	if (s->type == SMP_T_IPV4) {
		if ((e = ip_lookup(x->idx, AF_INET, (const uint8_t *)&s->data.ipv4)))
			return e;
		memset(a, 0, 10);
		a[10] = a[11] = 0xff;
		memcpy(a + 12, &s->data.ipv4, 4);
		return ip_lookup(x->idx, AF_INET6, a);
	}
	if ((e = ip_lookup(x->idx, AF_INET6, s->data.ipv6.s6_addr)))
		return e;
	if (smp_ipv6_to_ipv4(&s->data.ipv6, &v4))
		return ip_lookup(x->idx, AF_INET, (const uint8_t *)&v4);
	return NULL;
}

/* Copies the value of <e> into <out> (strings into a scratch buffer). */
static int copy_value(const struct pat_entry *e, struct sample *out, const struct sample *in,
                      const long *ovec, int ngroups, int regm)
{
	const struct sample *v = &e->value;

	out->type = v->type;
	out->flags &= ~SMP_F_CONST;
	if (v->type != SMP_T_STR) {
		out->data = v->data;
		return 1;
	}
	smp_set_trash(out, SMP_T_STR);
	if (regm && ngroups > 0) {
		long n = regex_expand(v->data.str.ptr, v->data.str.len, in->data.str.ptr, ovec,
		                      ngroups, out->data.str.ptr, out->data.str.size);

		if (n < 0)
			return 0;
		out->data.str.len = (size_t)n;
		return 1;
	}
	if (v->data.str.len > out->data.str.size)
		return 0;
	memcpy(out->data.str.ptr, v->data.str.ptr, v->data.str.len);
	out->data.str.len = v->data.str.len;
	return 1;
}

/* Brings <s> to the type <x>'s method works on; 0 if it cannot be. */
static int cast_for_match(const struct pat_expr *x, struct sample *s)
{
	switch (x->match) {
	case PAT_MATCH_INT:
		return smp_cast(s, SMP_T_SINT);
	case PAT_MATCH_IP:
		return smp_cast(s, SMP_T_ADDR);
	case PAT_MATCH_METH:
		return smp_cast(s, SMP_T_METH);
	default:
		return s->type == SMP_T_BIN || smp_cast(s, SMP_T_STR);
	}
}

/* The entry of <x> that a cast sample <s> matches (read lock held). */
static struct pat_entry *find_entry(const struct pat_expr *x, const struct sample *s,
                                    long *ovec, int *ngroups)
{
	if (x->match == PAT_MATCH_STR)
		return match_str(x, s);
	if (x->match == PAT_MATCH_BEG)
		return match_beg(x, s);
	if (x->match == PAT_MATCH_IP)
		return match_ip(x, s);
	return match_list(x, s, ovec, ngroups);
}

int pat_expr_match(struct pat_expr *x, const struct sample *in, struct sample *value,
                   int regm)
{
	struct sample s = *in;
	struct pat_entry *e = NULL;
	long ovec[2 * REGEX_MAX_GROUPS];
	int ngroups = 0, ret = 0;

	if (x->match == PAT_MATCH_FOUND || x->match == PAT_MATCH_BOOL)
		return pat_match_novalue(x->match, in);
	if (!cast_for_match(x, &s))
		return 0;
	pthread_rwlock_rdlock(&x->ref->lock);
	e = find_entry(x, &s, regm ? ovec : NULL, &ngroups);
	if (e) {
		ret = 1;
		if (value && x->val_type != SMP_T_ANY)
			ret = copy_value(e, value, &s, ovec, ngroups, regm);
	}
	pthread_rwlock_unlock(&x->ref->lock);
	return ret;
}

int pat_expr_lookup(struct pat_expr *x, const struct sample *in,
                    void (*fn)(const struct pat_ref_elt *elt, const struct sample *value,
                               void *arg), void *arg)
{
	struct sample s = *in;
	struct pat_entry *e;
	int ngroups = 0;

	if (x->match == PAT_MATCH_FOUND || x->match == PAT_MATCH_BOOL)
		return pat_match_novalue(x->match, in);
	if (!cast_for_match(x, &s))
		return 0;
	pthread_rwlock_rdlock(&x->ref->lock);
	e = find_entry(x, &s, NULL, &ngroups);
	if (e)
		fn(e->elt, x->val_type != SMP_T_ANY ? &e->value : NULL, arg);
	pthread_rwlock_unlock(&x->ref->lock);
	return e != NULL;
}

int pat_expr_indexed(const struct pat_expr *x)
{
	return x->match == PAT_MATCH_STR || x->match == PAT_MATCH_BEG ||
	       x->match == PAT_MATCH_IP;
}
