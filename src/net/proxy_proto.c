/* PROXY protocol v1 and v2 (HAProxy's proxy-protocol.txt, sections 2.1 and
 * 2.2): the receiving side for `accept-proxy`, the sending side for
 * `send-proxy` / `send-proxy-v2`.
 *
 * Pure functions over caller buffers: no allocation, no shared state, safe
 * from any thread. pp_parse() is written for a connection that receives the
 * header in pieces: it answers "need more" (0) for any prefix of a header
 * that may still be valid and "invalid" (-1) as soon as one byte rules that
 * out, and it never looks past the bytes it was given.
 *
 * Choices the spec leaves open (see also proxy_proto.h):
 * - v1 TCP4 addresses are read strictly (4 decimal parts, no heading zero);
 *   TCP6 addresses are whatever inet_pton() reads, which includes the dotted
 *   tail form ("::ffff:1.2.3.4") some senders produce with inet_ntop().
 * - v1 UNKNOWN: the rest of the line is ignored, as the spec requires.
 * - v2 LOCAL: the block is skipped, family byte ignored (spec 2.2).
 * - v2 PROXY: AF_UNSPEC, UDP and UNIX datagram fall back to the UNSPEC mode
 *   (real endpoints), as the spec allows receivers that do not implement a
 *   transport; family/transport bytes outside the seven listed ones are
 *   rejected; a length shorter than the family's address block is rejected;
 *   what follows the block must be a well-formed TLV sequence (TLVs are not
 *   interpreted, and CRC32C is not verified).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <sluice/expr/hash.h>
#include <sluice/net/proxy_proto.h>

#define PP_BAD   (-1)
#define PP_MORE  0
#define PP_OK    1

/* ---- v2 wire constants (spec 2.2) ---- */

static const uint8_t pp_v2_sig[12] = {
	0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A
};

#define PP2_HDR_LEN        16
#define PP2_VERSION        0x20
#define PP2_CMD_LOCAL      0x00
#define PP2_CMD_PROXY      0x01
#define PP2_FAM_UNSPEC     0x00
#define PP2_FAM_TCP4       0x11
#define PP2_FAM_UDP4       0x12
#define PP2_FAM_TCP6       0x21
#define PP2_FAM_UDP6       0x22
#define PP2_FAM_UNIX_STREAM 0x31
#define PP2_FAM_UNIX_DGRAM 0x32
#define PP2_ADDR_LEN_INET  12
#define PP2_ADDR_LEN_INET6 36
#define PP2_UNIX_PATH_LEN  108
#define PP2_ADDR_LEN_UNIX  (2 * PP2_UNIX_PATH_LEN)
#define PP2_TLV_HDR_LEN    3

/* ---- v1 (text) parsing ---- */

/* A v1 field checker reads s[0..n) as a whole field (<partial> == 0, storing
 * the value into <dst>) or as the start of a field cut short by the end of
 * the received bytes (<partial> == 1, nothing stored). 1 if valid. */
typedef int (*pp_v1_check_fn)(const uint8_t *s, size_t n, int partial, void *dst);

/* IPv4 in the spec's canonical form: exactly 4 decimal numbers 0..255
 * separated by single dots, no heading zeroes. */
static int pp_v1_check_ipv4(const uint8_t *s, size_t n, int partial, void *dst)
{
	uint8_t bytes[4];
	int parts = 0, digits = 0, val = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (!digits || parts == 3)
				return 0;
			bytes[parts++] = (uint8_t)val;
			digits = val = 0;
		} else if (s[i] >= '0' && s[i] <= '9') {
			if (digits && val == 0)
				return 0;
			val = val * 10 + (s[i] - '0');
			digits++;
			if (val > 255)
				return 0;
		} else {
			return 0;
		}
	}
	if (partial)
		return 1;
	if (parts != 3 || !digits)
		return 0;
	bytes[3] = (uint8_t)val;
	memcpy(dst, bytes, 4);
	return 1;
}

/* What can still become an IPv6 address: hex digits, colons and the dots of
 * a dotted tail, groups of at most 4 digits, at most one "::", at most 7
 * colons besides the one a "::" adds ("1:2:3:4:5:6:7::" is valid). An
 * approximation (a few doomed prefixes wait for the CRLF or the 107-byte
 * limit before being refused), never a false refusal. */
static int pp_v1_ipv6_prefix_ok(const uint8_t *s, size_t n)
{
	int colons = 0, dcolons = 0, group = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == ':') {
			colons++;
			if (i && s[i - 1] == ':' && (++dcolons > 1 || (i > 1 && s[i - 2] == ':')))
				return 0;
			if (colons - dcolons > 7)
				return 0;
			group = 0;
		} else if (s[i] == '.') {
			group = 0;
		} else if (++group > 4) {
			return 0;
		}
	}
	return 1;
}

static int pp_v1_check_ipv6(const uint8_t *s, size_t n, int partial, void *dst)
{
	char text[INET6_ADDRSTRLEN];
	size_t i;

	if (n >= sizeof(text))
		return 0;
	for (i = 0; i < n; i++) {
		uint8_t c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      (c >= 'A' && c <= 'F') || c == ':' || c == '.'))
			return 0;
	}
	if (partial)
		return pp_v1_ipv6_prefix_ok(s, n);
	memcpy(text, s, n);
	text[n] = '\0';
	return inet_pton(AF_INET6, text, dst) == 1;
}

/* Decimal 0..65535, no heading zero; stored in network order. */
static int pp_v1_check_port(const uint8_t *s, size_t n, int partial, void *dst)
{
	uint32_t v = 0;
	uint16_t port;
	size_t i;

	if (n > 5 || (n > 1 && s[0] == '0'))
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	if (v > 65535)
		return 0;
	if (partial)
		return 1;
	if (!n)
		return 0;
	port = htons((uint16_t)v);
	memcpy(dst, &port, sizeof(port));
	return 1;
}

struct pp_v1_cursor {
	const uint8_t *p;
	const uint8_t *end;   /* the CR of the CRLF, or the end of the bytes received */
	int complete;         /* <end> is the end of the line */
};

/* Matches the literal <lit>; PP_MORE if the bytes stop inside it. */
static int pp_v1_literal(struct pp_v1_cursor *c, const char *lit)
{
	size_t n = strlen(lit), avail = (size_t)(c->end - c->p);
	size_t m = avail < n ? avail : n;

	if (memcmp(c->p, lit, m) != 0)
		return PP_BAD;
	if (m < n)
		return c->complete ? PP_BAD : PP_MORE;
	c->p += n;
	return PP_OK;
}

/* Reads a field and the single space that ends it, or the line end for the
 * <last> field. Two spaces make an empty field, which no checker accepts. */
static int pp_v1_field(struct pp_v1_cursor *c, int last, pp_v1_check_fn check, void *dst)
{
	const uint8_t *sp = memchr(c->p, ' ', (size_t)(c->end - c->p));
	size_t n = (size_t)((sp ? sp : c->end) - c->p);

	if (sp) {
		if (last || !check(c->p, n, 0, dst))
			return PP_BAD;
		c->p = sp + 1;
		return PP_OK;
	}
	if (!c->complete)
		return check(c->p, n, 1, dst) ? PP_MORE : PP_BAD;
	if (!last || !check(c->p, n, 0, dst))
		return PP_BAD;
	c->p = c->end;
	return PP_OK;
}

enum pp_v1_proto { PP_V1_TCP4, PP_V1_TCP6, PP_V1_UNKNOWN };

/* The protocol word and, for TCP4/TCP6, the space after it. */
static int pp_v1_proto(struct pp_v1_cursor *c, enum pp_v1_proto *proto)
{
	static const char *const words[] = { "TCP4 ", "TCP6 ", "UNKNOWN" };
	size_t avail = (size_t)(c->end - c->p), i, n, m;
	int maybe = 0;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		n = strlen(words[i]);
		m = avail < n ? avail : n;
		if (memcmp(c->p, words[i], m) != 0)
			continue;
		if (m == n) {
			c->p += n;
			*proto = (enum pp_v1_proto)i;
			return PP_OK;
		}
		maybe = 1;
	}
	return (maybe && !c->complete) ? PP_MORE : PP_BAD;
}

/* "PROXY UNKNOWN" then the line end, or a space and anything up to it. */
static int pp_v1_unknown_tail(struct pp_v1_cursor *c)
{
	if (c->p == c->end)
		return c->complete ? PP_OK : PP_MORE;
	if (*c->p != ' ')
		return PP_BAD;
	return c->complete ? PP_OK : PP_MORE;
}

static int pp_v1_addresses(struct pp_v1_cursor *c, enum pp_v1_proto proto, struct pp_info *out)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)&out->src;
	struct sockaddr_in *d4 = (struct sockaddr_in *)&out->dst;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&out->src;
	struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&out->dst;
	pp_v1_check_fn check = proto == PP_V1_TCP4 ? pp_v1_check_ipv4 : pp_v1_check_ipv6;
	void *fields[4];
	int i, rc;

	if (proto == PP_V1_TCP4) {
		s4->sin_family = d4->sin_family = AF_INET;
		fields[0] = &s4->sin_addr;
		fields[1] = &d4->sin_addr;
		fields[2] = &s4->sin_port;
		fields[3] = &d4->sin_port;
	} else {
		s6->sin6_family = d6->sin6_family = AF_INET6;
		fields[0] = &s6->sin6_addr;
		fields[1] = &d6->sin6_addr;
		fields[2] = &s6->sin6_port;
		fields[3] = &d6->sin6_port;
	}
	for (i = 0; i < 4; i++) {
		rc = pp_v1_field(c, i == 3, i < 2 ? check : pp_v1_check_port, fields[i]);
		if (rc != PP_OK)
			return rc;
	}
	return PP_OK;
}

/* Spec 2.1: the line ends with CRLF within its first 107 bytes; a lone CR or
 * LF is an error. The CRLF is located first so that the fields are read
 * knowing whether the line is complete. */
static int pp_parse_v1(const uint8_t *buf, size_t len, struct pp_info *out)
{
	size_t scope = len < PP_V1_MAX ? len : PP_V1_MAX, i;
	struct pp_v1_cursor c = { buf, buf + scope, 0 };
	enum pp_v1_proto proto = PP_V1_UNKNOWN;
	int lf_pending = 0, rc;

	for (i = 0; i < scope; i++) {
		if (buf[i] == '\n')
			return PP_BAD;
		if (buf[i] != '\r')
			continue;
		if (i + 1 == scope) {
			if (scope == PP_V1_MAX)
				return PP_BAD;
			lf_pending = 1;
		} else if (buf[i + 1] != '\n') {
			return PP_BAD;
		}
		c.end = buf + i;
		c.complete = 1;
		break;
	}
	if (!c.complete && scope == PP_V1_MAX)
		return PP_BAD;

	rc = pp_v1_literal(&c, "PROXY ");
	if (rc == PP_OK)
		rc = pp_v1_proto(&c, &proto);
	if (rc == PP_OK)
		rc = proto == PP_V1_UNKNOWN ? pp_v1_unknown_tail(&c) : pp_v1_addresses(&c, proto, out);
	if (rc != PP_OK)
		return rc;
	if (lf_pending)
		return PP_MORE;

	out->version = 1;
	if (proto == PP_V1_UNKNOWN) {
		out->local = 1;
		memset(&out->src, 0, sizeof(out->src));
		memset(&out->dst, 0, sizeof(out->dst));
	}
	return (int)(c.end - buf) + 2;
}

/* ---- v2 (binary) parsing ---- */

/* Size of the address block that <fam> announces under the PROXY command,
 * or -1 if the byte is not one of the combinations of spec 2.2. */
static int pp_v2_block_len(uint8_t fam)
{
	switch (fam) {
	case PP2_FAM_UNSPEC:
		return 0;
	case PP2_FAM_TCP4:
	case PP2_FAM_UDP4:
		return PP2_ADDR_LEN_INET;
	case PP2_FAM_TCP6:
	case PP2_FAM_UDP6:
		return PP2_ADDR_LEN_INET6;
	case PP2_FAM_UNIX_STREAM:
	case PP2_FAM_UNIX_DGRAM:
		return PP2_ADDR_LEN_UNIX;
	default:
		return -1;
	}
}

/* TLVs (spec 2.2): type, 16-bit length, value; they must tile the area. */
static int pp_v2_tlvs_ok(const uint8_t *p, size_t n)
{
	size_t vlen;

	while (n) {
		if (n < PP2_TLV_HDR_LEN)
			return 0;
		vlen = ((size_t)p[1] << 8) | p[2];
		if (vlen > n - PP2_TLV_HDR_LEN)
			return 0;
		p += PP2_TLV_HDR_LEN + vlen;
		n -= PP2_TLV_HDR_LEN + vlen;
	}
	return 1;
}

static void pp_v2_read_addresses(const uint8_t *blk, uint8_t fam, struct pp_info *out)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)&out->src;
	struct sockaddr_in *d4 = (struct sockaddr_in *)&out->dst;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&out->src;
	struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&out->dst;
	struct sockaddr_un *su = (struct sockaddr_un *)&out->src;
	struct sockaddr_un *du = (struct sockaddr_un *)&out->dst;

	switch (fam) {
	case PP2_FAM_TCP4:
		s4->sin_family = d4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, blk, 4);
		memcpy(&d4->sin_addr, blk + 4, 4);
		memcpy(&s4->sin_port, blk + 8, 2);
		memcpy(&d4->sin_port, blk + 10, 2);
		break;
	case PP2_FAM_TCP6:
		s6->sin6_family = d6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, blk, 16);
		memcpy(&d6->sin6_addr, blk + 16, 16);
		memcpy(&s6->sin6_port, blk + 32, 2);
		memcpy(&d6->sin6_port, blk + 34, 2);
		break;
	case PP2_FAM_UNIX_STREAM:
		/* 108 bytes each, like sun_path; the storage beyond sun_path
		 * stays zero, so an unterminated path still ends. */
		su->sun_family = du->sun_family = AF_UNIX;
		memcpy(su->sun_path, blk, PP2_UNIX_PATH_LEN);
		memcpy(du->sun_path, blk + PP2_UNIX_PATH_LEN, PP2_UNIX_PATH_LEN);
		break;
	default:
		/* UNSPEC, UDP, UNIX dgram: fall back to the real endpoints */
		out->local = 1;
		break;
	}
}

static int pp_parse_v2(const uint8_t *buf, size_t len, struct pp_info *out)
{
	size_t sig = len < sizeof(pp_v2_sig) ? len : sizeof(pp_v2_sig);
	size_t body;
	uint8_t cmd, fam;
	int block = 0;

	if (memcmp(buf, pp_v2_sig, sig) != 0)
		return PP_BAD;
	if (len < 13)
		return PP_MORE;
	if ((buf[12] & 0xF0) != PP2_VERSION)
		return PP_BAD;
	cmd = buf[12] & 0x0F;
	if (cmd != PP2_CMD_LOCAL && cmd != PP2_CMD_PROXY)
		return PP_BAD;
	if (len < 14)
		return PP_MORE;
	fam = buf[13];
	if (cmd == PP2_CMD_PROXY && (block = pp_v2_block_len(fam)) < 0)
		return PP_BAD;
	if (len < PP2_HDR_LEN)
		return PP_MORE;
	body = ((size_t)buf[14] << 8) | buf[15];
	if (body < (size_t)block)
		return PP_BAD;
	if (len < PP2_HDR_LEN + body)
		return PP_MORE;

	out->version = 2;
	if (cmd == PP2_CMD_LOCAL || fam == PP2_FAM_UNSPEC) {
		/* the whole block is skipped: its layout is unknown */
		out->local = 1;
		return (int)(PP2_HDR_LEN + body);
	}
	if (!pp_v2_tlvs_ok(buf + PP2_HDR_LEN + block, body - block))
		return PP_BAD;
	pp_v2_read_addresses(buf + PP2_HDR_LEN, fam, out);
	if (body > (size_t)block) {
		out->tlv_off = PP2_HDR_LEN + block;
		out->tlv_len = body - block;
	}
	return (int)(PP2_HDR_LEN + body);
}

int pp_parse(const uint8_t *buf, size_t len, struct pp_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!len)
		return PP_MORE;
	if (buf[0] == 'P')
		return pp_parse_v1(buf, len, out);
	if (buf[0] == pp_v2_sig[0])
		return pp_parse_v2(buf, len, out);
	return PP_BAD;
}

/* ---- building ---- */

/* Both endpoints in one family, as the headers carry them. */
struct pp_endpoints {
	int family;              /* AF_INET, AF_INET6, AF_UNIX or AF_UNSPEC */
	uint8_t src[16];         /* network order; AF_INET uses 4 bytes */
	uint8_t dst[16];
	uint16_t sport;          /* network order */
	uint16_t dport;
};

/* Reads an INET address into its IPv6 form (IPv4 mapped). Returns 4 for IPv4
 * or IPv4-mapped IPv6, 6 for other IPv6, 0 for anything else. */
static int pp_inet_read(const struct sockaddr_storage *ss, uint8_t a6[16], uint16_t *port)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

	if (!ss)
		return 0;
	if (ss->ss_family == AF_INET) {
		memset(a6, 0, 10);
		a6[10] = a6[11] = 0xff;
		memcpy(a6 + 12, &s4->sin_addr, 4);
		*port = s4->sin_port;
		return 4;
	}
	if (ss->ss_family == AF_INET6) {
		memcpy(a6, &s6->sin6_addr, 16);
		*port = s6->sin6_port;
		return IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) ? 4 : 6;
	}
	return 0;
}

static void pp_endpoints_get(const struct sockaddr_storage *src, const struct sockaddr_storage *dst,
                             struct pp_endpoints *ep)
{
	int sk, dk;

	memset(ep, 0, sizeof(*ep));
	ep->family = AF_UNSPEC;
	if (!src || !dst)
		return;
	if (src->ss_family == AF_UNIX && dst->ss_family == AF_UNIX) {
		ep->family = AF_UNIX;
		return;
	}
	sk = pp_inet_read(src, ep->src, &ep->sport);
	dk = pp_inet_read(dst, ep->dst, &ep->dport);
	if (!sk || !dk)
		return;
	if (sk == 4 && dk == 4) {
		ep->family = AF_INET;
		memmove(ep->src, ep->src + 12, 4);
		memmove(ep->dst, ep->dst + 12, 4);
	} else {
		ep->family = AF_INET6;
	}
}

/* IPv6 as hex groups only (spec 2.1), the longest run of two or more zero
 * groups (the first on a tie) written "::", as in RFC 5952 but without its
 * dotted IPv4 tail, which inet_ntop() would produce. <out> holds 40 bytes. */
static void pp_format_ipv6(const uint8_t a[16], char *out)
{
	unsigned int w[8];
	int i, j, best = -1, bestlen = 0;
	char *p = out;

	for (i = 0; i < 8; i++)
		w[i] = ((unsigned int)a[2 * i] << 8) | a[2 * i + 1];
	for (i = 0; i < 8; i = j + 1) {
		for (j = i; j < 8 && w[j] == 0; j++)
			;
		if (j - i > bestlen) {
			best = i;
			bestlen = j - i;
		}
	}
	if (bestlen < 2)
		best = -1;
	for (i = 0; i < 8; ) {
		if (i == best) {
			*p++ = ':';
			*p++ = ':';
			i += bestlen;
			continue;
		}
		if (i > 0 && i != best + bestlen)
			*p++ = ':';
		p += sprintf(p, "%x", w[i]);
		i++;
	}
	*p = '\0';
}

size_t pp_build_v1(char *buf, size_t len, const struct sockaddr_storage *src,
                   const struct sockaddr_storage *dst)
{
	char line[PP_V1_MAX + 1], s[40], d[40];
	struct pp_endpoints ep;
	int n;

	pp_endpoints_get(src, dst, &ep);
	if (ep.family == AF_INET) {
		inet_ntop(AF_INET, ep.src, s, sizeof(s));
		inet_ntop(AF_INET, ep.dst, d, sizeof(d));
		n = snprintf(line, sizeof(line), "PROXY TCP4 %s %s %u %u\r\n",
		             s, d, ntohs(ep.sport), ntohs(ep.dport));
	} else if (ep.family == AF_INET6) {
		pp_format_ipv6(ep.src, s);
		pp_format_ipv6(ep.dst, d);
		n = snprintf(line, sizeof(line), "PROXY TCP6 %s %s %u %u\r\n",
		             s, d, ntohs(ep.sport), ntohs(ep.dport));
	} else {
		n = snprintf(line, sizeof(line), "PROXY UNKNOWN\r\n");
	}
	if (n < 0 || (size_t)n > len)
		return 0;
	memcpy(buf, line, (size_t)n);
	return (size_t)n;
}

size_t pp_build_v2(uint8_t *buf, size_t len, const struct sockaddr_storage *src,
                   const struct sockaddr_storage *dst)
{
	struct pp_endpoints ep;
	uint8_t cmd = PP2_CMD_PROXY, fam;
	size_t body;
	uint8_t *p;

	pp_endpoints_get(src, dst, &ep);
	switch (ep.family) {
	case AF_INET:
		fam = PP2_FAM_TCP4;
		body = PP2_ADDR_LEN_INET;
		break;
	case AF_INET6:
		fam = PP2_FAM_TCP6;
		body = PP2_ADDR_LEN_INET6;
		break;
	case AF_UNIX:
		fam = PP2_FAM_UNIX_STREAM;
		body = PP2_ADDR_LEN_UNIX;
		break;
	default:
		/* spec 2.2: LOCAL with AF_UNSPEC and no address block */
		cmd = PP2_CMD_LOCAL;
		fam = PP2_FAM_UNSPEC;
		body = 0;
		break;
	}
	if (len < PP2_HDR_LEN + body)
		return 0;

	memcpy(buf, pp_v2_sig, sizeof(pp_v2_sig));
	buf[12] = PP2_VERSION | cmd;
	buf[13] = fam;
	buf[14] = (uint8_t)(body >> 8);
	buf[15] = (uint8_t)body;
	p = buf + PP2_HDR_LEN;
	if (ep.family == AF_INET || ep.family == AF_INET6) {
		size_t alen = ep.family == AF_INET ? 4 : 16;

		memcpy(p, ep.src, alen);
		memcpy(p + alen, ep.dst, alen);
		memcpy(p + 2 * alen, &ep.sport, 2);
		memcpy(p + 2 * alen + 2, &ep.dport, 2);
	} else if (ep.family == AF_UNIX) {
		memcpy(p, ((const struct sockaddr_un *)src)->sun_path, PP2_UNIX_PATH_LEN);
		memcpy(p + PP2_UNIX_PATH_LEN, ((const struct sockaddr_un *)dst)->sun_path,
		       PP2_UNIX_PATH_LEN);
	}
	return PP2_HDR_LEN + body;
}

static void pp_v2_set_body_len(uint8_t *buf, size_t used)
{
	size_t body = used - PP2_HDR_LEN;

	buf[14] = (uint8_t)(body >> 8);
	buf[15] = (uint8_t)body;
}

size_t pp_v2_add_tlv(uint8_t *buf, size_t len, size_t used, uint8_t type, const void *val,
                     size_t vlen)
{
	if (vlen > 0xffff || used + PP2_TLV_HDR_LEN + vlen > len ||
	    used + PP2_TLV_HDR_LEN + vlen - PP2_HDR_LEN > 0xffff)
		return 0;
	buf[used] = type;
	buf[used + 1] = (uint8_t)(vlen >> 8);
	buf[used + 2] = (uint8_t)vlen;
	if (vlen)
		memcpy(buf + used + PP2_TLV_HDR_LEN, val, vlen);
	used += PP2_TLV_HDR_LEN + vlen;
	pp_v2_set_body_len(buf, used);
	return used;
}

void pp_v2_tlv_len(uint8_t *buf, size_t off, size_t end)
{
	size_t vlen = end - off - PP2_TLV_HDR_LEN;

	buf[off + 1] = (uint8_t)(vlen >> 8);
	buf[off + 2] = (uint8_t)vlen;
	pp_v2_set_body_len(buf, end);
}

void pp_v2_crc32c(uint8_t *buf, size_t used, size_t val_off)
{
	uint32_t crc;

	memset(buf + val_off, 0, 4);
	crc = hash_crc32c(buf, used);
	buf[val_off] = (uint8_t)(crc >> 24);
	buf[val_off + 1] = (uint8_t)(crc >> 16);
	buf[val_off + 2] = (uint8_t)(crc >> 8);
	buf[val_off + 3] = (uint8_t)crc;
}
