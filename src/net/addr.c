/* Address parsing and printing: the forms are listed in
 * include/sluice/net/addr.h.
 *
 * Pure functions over caller memory: no shared state, safe from any thread.
 * Only addr_parse() on a hostname may block (getaddrinfo), which is why the
 * configuration parser is its usual caller.
 *
 * Parsing order: a known "xxx@" prefix picks the kind (and for INET may force
 * the family); a leading '/' is a UNIX path; everything else is INET. An INET
 * string is split into host and port at "]:" for the bracketed form, else at
 * the last colon, as HAProxy does. Numeric hosts are read with inet_pton()
 * only, so the inet_aton() forms ("127.1", "0x7f.0.0.1") that getaddrinfo()
 * would accept are rejected instead of silently meaning something else.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <sluice/core/errmsg.h>
#include <sluice/net/addr.h>

/* Longest INET address text accepted: a 253-byte hostname, brackets, colon
 * and port, with room to spare. */
#define ADDR_TEXT_MAX  320

enum addr_prefix_kind {
	PFX_INET,
	PFX_UNIX,
	PFX_ABNS,
	PFX_ABNSZ,
	PFX_FD,
	PFX_UNSUPPORTED,
};

/* Every prefix sluice knows, including the HAProxy ones it refuses: those get
 * a message naming what is missing rather than "unknown prefix". */
static const struct addr_prefix {
	const char *name;             /* with its '@' */
	enum addr_prefix_kind kind;
	int family;                   /* PFX_INET: AF_UNSPEC, AF_INET, AF_INET6 */
	const char *why;              /* PFX_UNSUPPORTED */
} addr_prefixes[] = {
	{ "ipv4@",     PFX_INET, AF_INET,   NULL },
	{ "ipv6@",     PFX_INET, AF_INET6,  NULL },
	{ "tcp4@",     PFX_INET, AF_INET,   NULL },
	{ "tcp6@",     PFX_INET, AF_INET6,  NULL },
	{ "ip@",       PFX_INET, AF_UNSPEC, NULL },
	{ "tcp@",      PFX_INET, AF_UNSPEC, NULL },
	{ "unix@",     PFX_UNIX, AF_UNIX,   NULL },
	{ "uxst@",     PFX_UNIX, AF_UNIX,   NULL },
	{ "abns@",     PFX_ABNS, AF_UNIX,   NULL },
	{ "fd@",       PFX_FD,   AF_UNSPEC, NULL },
	{ "sockpair@", PFX_UNSUPPORTED, 0,
	  "sockpair@ addresses (descriptor passing over a socket pair) are not supported" },
	{ "abnsz@",    PFX_ABNSZ, AF_UNIX,  NULL },
	{ "udp@",      PFX_UNSUPPORTED, 0, "UDP addresses are not supported" },
	{ "udp4@",     PFX_UNSUPPORTED, 0, "UDP addresses are not supported" },
	{ "udp6@",     PFX_UNSUPPORTED, 0, "UDP addresses are not supported" },
	{ "uxdg@",     PFX_UNSUPPORTED, 0, "UNIX datagram addresses are not supported" },
	{ "quic4@",    PFX_UNSUPPORTED, 0, "QUIC addresses are not supported" },
	{ "quic6@",    PFX_UNSUPPORTED, 0, "QUIC addresses are not supported" },
	{ "quic+ipv4@", PFX_UNSUPPORTED, 0, "QUIC addresses are not supported" },
	{ "quic+ipv6@", PFX_UNSUPPORTED, 0, "QUIC addresses are not supported" },
};


/* Length of a "word@" prefix at the start of <str> (lower-case letters,
 * digits and '+', as in every HAProxy prefix), 0 if there is none. A path or
 * a host cannot look like this: neither contains '@' after such a word. */
static size_t addr_prefix_len(const char *str)
{
	size_t n = 0;

	while ((str[n] >= 'a' && str[n] <= 'z') || (str[n] >= '0' && str[n] <= '9') ||
	       str[n] == '+')
		n++;
	return (n && str[n] == '@') ? n + 1 : 0;
}

static const struct addr_prefix *addr_find_prefix(const char *str, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(addr_prefixes) / sizeof(addr_prefixes[0]); i++)
		if (strlen(addr_prefixes[i].name) == n &&
		    memcmp(addr_prefixes[i].name, str, n) == 0)
			return &addr_prefixes[i];
	return NULL;
}

/* ---- UNIX, abstract and fd@ forms ---- */

static int addr_parse_unix(const char *path, const char *str, struct sl_addr *out,
                           char *err, size_t errlen)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)&out->ss;
	size_t n = strlen(path);

	if (!n)
		return errmsg_set(err, errlen, "missing socket path in '%s'", str);
	/* sun_path keeps its terminating NUL: bind() and connect() on Linux
	 * take the path as a C string. */
	if (n >= sizeof(sun->sun_path))
		return errmsg_set(err, errlen, "socket path too long in '%s' (%zu bytes, max %zu)",
		                 str, n, sizeof(sun->sun_path) - 1);
	out->kind = ADDR_UNIX;
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, n + 1);
	out->len = offsetof(struct sockaddr_un, sun_path) + n + 1;
	return 0;
}

/* Abstract namespace (unix(7)): sun_path[0] is 0 and the name follows. The
 * kernel names the socket by every byte the address length covers, so two
 * programs meet only if they agree on it: abns@ zero-pads the name to the
 * whole sun_path (as HAProxy's abns@ does, so the two can talk), abnsz@
 * (<compact>) covers exactly the name, as most other programs do. */
static int addr_parse_abns(const char *name, const char *str, int compact,
                           struct sl_addr *out, char *err, size_t errlen)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)&out->ss;
	size_t n = strlen(name);

	if (!n)
		return errmsg_set(err, errlen, "missing abstract socket name in '%s'", str);
	if (n + 1 > sizeof(sun->sun_path))
		return errmsg_set(err, errlen, "abstract socket name too long in '%s' (%zu bytes, max %zu)",
		                 str, n, sizeof(sun->sun_path) - 1);
	out->kind = ADDR_ABNS;
	sun->sun_family = AF_UNIX;
	sun->sun_path[0] = '\0';
	memcpy(sun->sun_path + 1, name, n);
	memset(sun->sun_path + 1 + n, 0, sizeof(sun->sun_path) - 1 - n);
	out->len = compact ? offsetof(struct sockaddr_un, sun_path) + 1 + n :
	           sizeof(struct sockaddr_un);
	return 0;
}

static int addr_parse_fd(const char *num, const char *str, struct sl_addr *out,
                         char *err, size_t errlen)
{
	long fd = 0;
	const char *p;

	if (!*num)
		return errmsg_set(err, errlen, "missing file descriptor number in '%s'", str);
	for (p = num; *p; p++) {
		if (*p < '0' || *p > '9')
			return errmsg_set(err, errlen, "invalid file descriptor number in '%s'", str);
		fd = fd * 10 + (*p - '0');
		if (fd > INT_MAX)
			return errmsg_set(err, errlen, "file descriptor number out of range in '%s'", str);
	}
	out->kind = ADDR_FD;
	out->fd = (int)fd;
	out->ss.ss_family = AF_UNSPEC;
	out->len = 0;
	return 0;
}

/* ---- INET forms ---- */

/* Reads <port> (the text after the colon) into <*portnum>: 1..65535, or 0 with
 * ADDR_O_PORT_OPTIONAL. Names what HAProxy has and sluice does not. */
static int addr_parse_port(const char *port, const char *str, unsigned int opts,
                           int *portnum, char *err, size_t errlen)
{
	const char *p = port;
	long v = 0;

	if (!*p)
		return errmsg_set(err, errlen, "missing port after ':' in '%s'", str);
	if (*p == '+' || *p == '-')
		return errmsg_set(err, errlen, "port offsets ('%s') are not supported in '%s'", port, str);
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > 65535)
			return errmsg_set(err, errlen, "port out of range in '%s' (1..65535)", str);
	}
	if (p == port)
		return errmsg_set(err, errlen, "invalid port '%s' in '%s'", port, str);
	if (*p == '-')
		return errmsg_set(err, errlen, "port ranges ('%s') are not supported in '%s'", port, str);
	if (*p)
		return errmsg_set(err, errlen, "invalid port '%s' in '%s'", port, str);
	if (v == 0 && !(opts & ADDR_O_PORT_OPTIONAL))
		return errmsg_set(err, errlen, "port 0 is invalid in '%s' (1..65535)", str);
	*portnum = (int)v;
	return 0;
}

static const char *addr_family_prefix_name(int family)
{
	return family == AF_INET ? "ipv4@" : "ipv6@";
}

/* A name getaddrinfo() may be asked about: letters, digits, '-', '_' and
 * dots, at most 253 bytes. Anything else is a typo, not a DNS question. */
static int addr_is_hostname(const char *host)
{
	size_t n = strlen(host);
	const char *p;

	if (!n || n > 253 || host[0] == '-' || host[0] == '.')
		return 0;
	for (p = host; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

static int addr_only_digits_and_dots(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || *s == '.'))
			return 0;
	return 1;
}

static int addr_resolve(const char *host, int family, const char *str,
                        struct sockaddr_storage *ss, char *err, size_t errlen)
{
	struct addrinfo hints, *res, *ai;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0)
		return errmsg_set(err, errlen, "cannot resolve '%s' in '%s': %s",
		                 host, str, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		if ((ai->ai_family == AF_INET && ai->ai_addrlen >= sizeof(struct sockaddr_in)) ||
		    (ai->ai_family == AF_INET6 && ai->ai_addrlen >= sizeof(struct sockaddr_in6))) {
			memcpy(ss, ai->ai_addr, ai->ai_family == AF_INET ?
			       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
			freeaddrinfo(res);
			return 0;
		}
	}
	freeaddrinfo(res);
	return errmsg_set(err, errlen, "'%s' in '%s' has no IPv4 or IPv6 address", host, str);
}

/* Fills <ss> (address only, port 0) from <host>, honouring a forced
 * <family>. <bracketed> hosts must be numeric IPv6. */
static int addr_parse_host(const char *host, int family, int bracketed, const char *str,
                           unsigned int opts, struct sl_addr *out, char *err, size_t errlen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&out->ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&out->ss;
	struct in_addr a4;
	struct in6_addr a6;

	if (bracketed) {
		if (family == AF_INET)
			return errmsg_set(err, errlen, "bracketed IPv6 address in '%s' with ipv4@", str);
		if (inet_pton(AF_INET6, host, &a6) != 1)
			return errmsg_set(err, errlen, "invalid IPv6 address '%s' in '%s'", host, str);
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = a6;
		return 0;
	}
	if (!*host || strcmp(host, "*") == 0) {
		out->flags |= ADDR_F_ANY;
		if (family == AF_INET6) {
			sin6->sin6_family = AF_INET6;
			sin6->sin6_addr = in6addr_any;
		} else {
			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = htonl(INADDR_ANY);
		}
		return 0;
	}
	if (inet_pton(AF_INET, host, &a4) == 1) {
		if (family == AF_INET6)
			return errmsg_set(err, errlen, "'%s' in '%s' is an IPv4 address but %s requires IPv6",
			                 host, str, addr_family_prefix_name(family));
		sin->sin_family = AF_INET;
		sin->sin_addr = a4;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6) == 1) {
		if (family == AF_INET)
			return errmsg_set(err, errlen, "'%s' in '%s' is an IPv6 address but %s requires IPv4",
			                 host, str, addr_family_prefix_name(family));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = a6;
		return 0;
	}
	if (addr_only_digits_and_dots(host))
		return errmsg_set(err, errlen, "invalid IPv4 address '%s' in '%s'", host, str);
	if (strchr(host, ':'))
		return errmsg_set(err, errlen, "invalid IPv6 address '%s' in '%s' (an IPv6 address "
		                 "without a port is written '[addr]')", host, str);
	if (!addr_is_hostname(host))
		return errmsg_set(err, errlen, "invalid address '%s' in '%s'", host, str);
	if (opts & ADDR_O_NUMERIC)
		return errmsg_set(err, errlen, "hostname '%s' in '%s' not allowed here (numeric address required)",
		                 host, str);
	return addr_resolve(host, family, str, &out->ss, err, errlen);
}

static int addr_parse_inet(const char *text, int family, const char *str, unsigned int opts,
                           struct sl_addr *out, char *err, size_t errlen)
{
	char copy[ADDR_TEXT_MAX];
	char *host = copy, *port = NULL, *colon, *close;
	int bracketed = 0, portnum = 0;
	size_t n = strlen(text);

	if (!n)
		return errmsg_set(err, errlen, "missing address after the prefix in '%s'", str);
	if (n >= sizeof(copy))
		return errmsg_set(err, errlen, "address too long: '%.40s...'", str);
	memcpy(copy, text, n + 1);

	if (copy[0] == '[') {
		close = strchr(copy, ']');
		if (!close)
			return errmsg_set(err, errlen, "missing ']' in '%s'", str);
		*close = '\0';
		host = copy + 1;
		bracketed = 1;
		if (close[1] == ':')
			port = close + 2;
		else if (close[1] != '\0')
			return errmsg_set(err, errlen, "unexpected '%s' after ']' in '%s'", close + 1, str);
		if (!*host)
			return errmsg_set(err, errlen, "empty address between brackets in '%s'", str);
	} else if ((colon = strrchr(copy, ':')) != NULL) {
		*colon = '\0';
		port = colon + 1;
	}

	out->kind = ADDR_INET;
	if (addr_parse_host(host, family, bracketed, str, opts, out, err, errlen) < 0)
		return -1;

	if (port) {
		if (addr_parse_port(port, str, opts, &portnum, err, errlen) < 0)
			return -1;
	} else if (opts & ADDR_O_PORT_REQUIRED) {
		return errmsg_set(err, errlen, "missing port in '%s'", str);
	}
	if (portnum == 0)
		out->flags |= ADDR_F_NO_PORT;

	if (out->ss.ss_family == AF_INET) {
		((struct sockaddr_in *)&out->ss)->sin_port = htons((uint16_t)portnum);
		out->len = sizeof(struct sockaddr_in);
	} else {
		((struct sockaddr_in6 *)&out->ss)->sin6_port = htons((uint16_t)portnum);
		out->len = sizeof(struct sockaddr_in6);
	}
	return 0;
}

int addr_parse(const char *str, struct sl_addr *out, unsigned int opts,
               char *err, size_t errlen)
{
	const struct addr_prefix *pfx = NULL;
	const char *rest;
	size_t plen;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (err && errlen)
		err[0] = '\0';
	if (!str || !*str)
		return errmsg_set(err, errlen, "empty address");

	plen = addr_prefix_len(str);
	if (plen) {
		pfx = addr_find_prefix(str, plen);
		if (!pfx)
			return errmsg_set(err, errlen, "unknown address prefix '%.*s' in '%s'",
			                 (int)plen, str, str);
		if (pfx->kind == PFX_UNSUPPORTED)
			return errmsg_set(err, errlen, "%s: '%s'", pfx->why, str);
	}
	rest = str + plen;

	if (!pfx && str[0] == '/')
		pfx = addr_find_prefix("unix@", 5);

	if (pfx && (pfx->kind == PFX_UNIX || pfx->kind == PFX_ABNS || pfx->kind == PFX_ABNSZ) &&
	    (opts & ADDR_O_NO_UNIX))
		return errmsg_set(err, errlen, "UNIX socket address '%s' not allowed here", str);
	if (pfx && pfx->kind == PFX_FD && (opts & ADDR_O_NO_FD))
		return errmsg_set(err, errlen, "fd@ address '%s' not allowed here", str);

	switch (pfx ? pfx->kind : PFX_INET) {
	case PFX_UNIX:
		return addr_parse_unix(rest, str, out, err, errlen);
	case PFX_ABNS:
	case PFX_ABNSZ:
		return addr_parse_abns(rest, str, pfx->kind == PFX_ABNSZ, out, err, errlen);
	case PFX_FD:
		return addr_parse_fd(rest, str, out, err, errlen);
	default:
		return addr_parse_inet(rest, pfx ? pfx->family : AF_UNSPEC, str, opts,
		                       out, err, errlen);
	}
}

/* ---- printing ---- */

char *addr_host_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char tmp[INET6_ADDRSTRLEN];
	const char *s = "-";

	if (!len)
		return buf;
	if (ss && ss->ss_family == AF_INET) {
		if (inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, tmp, sizeof(tmp)))
			s = tmp;
	} else if (ss && ss->ss_family == AF_INET6) {
		if (inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, tmp, sizeof(tmp)))
			s = tmp;
	} else if (ss && ss->ss_family == AF_UNIX) {
		s = "unix";
	}
	snprintf(buf, len, "%s", s);
	return buf;
}

int addr_port(const struct sockaddr_storage *ss)
{
	if (ss && ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss && ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

char *addr_full_str(const struct sl_addr *a, char *buf, size_t len)
{
	const struct sockaddr_un *sun = (const struct sockaddr_un *)&a->ss;
	char host[INET6_ADDRSTRLEN];
	size_t namelen;
	int v6 = a->ss.ss_family == AF_INET6;

	if (!len)
		return buf;
	switch (a->kind) {
	case ADDR_INET:
		addr_host_str(&a->ss, host, sizeof(host));
		if (a->flags & ADDR_F_NO_PORT)
			snprintf(buf, len, v6 ? "[%s]" : "%s", host);
		else
			snprintf(buf, len, v6 ? "[%s]:%d" : "%s:%d", host, addr_port(&a->ss));
		break;
	case ADDR_UNIX:
		snprintf(buf, len, "unix@%.*s", (int)sizeof(sun->sun_path), sun->sun_path);
		break;
	case ADDR_ABNS:
		/* compact: the name ends where the address length says; padded
		 * (abns@, the whole sun_path): at the first NUL */
		namelen = 0;
		if (a->len > offsetof(struct sockaddr_un, sun_path) + 1)
			namelen = a->len - offsetof(struct sockaddr_un, sun_path) - 1;
		if (namelen > sizeof(sun->sun_path) - 1)
			namelen = sizeof(sun->sun_path) - 1;
		if (a->len >= sizeof(struct sockaddr_un)) {
			namelen = strnlen(sun->sun_path + 1, sizeof(sun->sun_path) - 1);
			snprintf(buf, len, "abns@%.*s", (int)namelen, sun->sun_path + 1);
		} else {
			snprintf(buf, len, "abnsz@%.*s", (int)namelen, sun->sun_path + 1);
		}
		break;
	case ADDR_FD:
		snprintf(buf, len, "fd@%d", a->fd);
		break;
	default:
		snprintf(buf, len, "-");
		break;
	}
	return buf;
}

/* ---- hashing ---- */

/* FNV-1a over the bytes, then the murmur3 finaliser: FNV alone leaves the
 * low bits of consecutive addresses too alike for a modulo over servers. */
static uint32_t addr_hash_bytes(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--) {
		h ^= *p++;
		h *= 16777619u;
	}
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

uint32_t addr_hash_host(const struct sockaddr_storage *ss)
{
	const struct in6_addr *a6;

	if (!ss)
		return 0;
	if (ss->ss_family == AF_INET)
		return addr_hash_bytes((const uint8_t *)&((const struct sockaddr_in *)ss)->sin_addr, 4);
	if (ss->ss_family == AF_INET6) {
		a6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a6))
			return addr_hash_bytes(a6->s6_addr + 12, 4);
		return addr_hash_bytes(a6->s6_addr, 16);
	}
	return 0;
}

static int prefix_eq(const unsigned char *a, const unsigned char *b, int plen)
{
	int full = plen / 8, rest = plen % 8;

	if (memcmp(a, b, (size_t)full) != 0)
		return 0;
	if (!rest)
		return 1;
	return ((a[full] ^ b[full]) & (0xff << (8 - rest)) & 0xff) == 0;
}

int addr_in_net(const struct sockaddr_storage *a, const struct sockaddr_storage *net, int plen)
{
	const unsigned char *ab, *nb;
	static const unsigned char v4mapped[12] = { 0,0,0,0,0,0,0,0,0,0,0xff,0xff };

	if (net->ss_family == AF_INET) {
		nb = (const unsigned char *)&((const struct sockaddr_in *)net)->sin_addr;
		if (a->ss_family == AF_INET) {
			ab = (const unsigned char *)&((const struct sockaddr_in *)a)->sin_addr;
		} else if (a->ss_family == AF_INET6) {
			ab = (const unsigned char *)&((const struct sockaddr_in6 *)a)->sin6_addr;
			if (memcmp(ab, v4mapped, 12) != 0)
				return 0;
			ab += 12;
		} else {
			return 0;
		}
		return prefix_eq(ab, nb, plen > 32 ? 32 : plen);
	}
	if (net->ss_family == AF_INET6 && a->ss_family == AF_INET6) {
		ab = (const unsigned char *)&((const struct sockaddr_in6 *)a)->sin6_addr;
		nb = (const unsigned char *)&((const struct sockaddr_in6 *)net)->sin6_addr;
		return prefix_eq(ab, nb, plen > 128 ? 128 : plen);
	}
	return 0;
}
