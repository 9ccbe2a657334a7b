/* Addresses as the configuration writes them.
 *
 *   ip:port  [ipv6]:port  ipv6:port (port after the last colon, so "::1:8080"
 *   is ::1 port 8080, and a bare IPv6 address without a port must be written
 *   "[::1]")  :port  *:port (any address: 0.0.0.0, or :: with ipv6@);
 *   ipv4@ / ipv6@ (and their aliases tcp4@ / tcp6@, ip@ / tcp@ for "either")
 *   force the family; unix@/path, uxst@/path and /path (unix stream socket);
 *   abns@name (Linux abstract namespace, compact: the address length ends
 *   with the name); fd@N (an inherited, already-listening descriptor).
 *   Hostnames are resolved once at parse time with getaddrinfo (AF_UNSPEC
 *   unless a prefix forces it; the first INET/INET6 answer is kept).
 *   Not supported, rejected with a message saying so: port ranges ("80-90"),
 *   port offsets ("+1"), sockpair@, datagram and QUIC prefixes.
 *
 * Ports: a missing port (or, with ADDR_O_PORT_OPTIONAL, an explicit 0) gives
 * port 0 and ADDR_F_NO_PORT (a server then uses the client's destination
 * port); it is an error with ADDR_O_PORT_REQUIRED. Otherwise 1..65535.
 *
 * Thread safety: no shared state. addr_parse() may block in getaddrinfo()
 * for a hostname, so it belongs to configuration time, not to an event loop
 * (or pass ADDR_O_NUMERIC).
 */
#ifndef SLUICE_NET_ADDR_H
#define SLUICE_NET_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum addr_kind {
	ADDR_INET = 0,    /* AF_INET or AF_INET6 in ss */
	ADDR_UNIX,        /* AF_UNIX path */
	ADDR_ABNS,        /* AF_UNIX abstract name (sun_path[0] == 0) */
	ADDR_FD,          /* inherited descriptor in fd */
};

/* addr_parse() options */
#define ADDR_O_PORT_REQUIRED  0x01  /* "1.2.3.4" alone is an error */
#define ADDR_O_PORT_OPTIONAL  0x02  /* no port or port 0: port 0, ADDR_F_NO_PORT set */
#define ADDR_O_NO_FD          0x04  /* fd@ not allowed (e.g. server) */
#define ADDR_O_NO_UNIX        0x08  /* unix@, /path, abns@ not allowed */
#define ADDR_O_NUMERIC        0x10  /* hostnames are an error: never resolves
                                     * (runtime changes, fuzzing) */

/* flags set by addr_parse() */
#define ADDR_F_NO_PORT        0x01
#define ADDR_F_ANY            0x02  /* host part empty or '*' */

struct sl_addr {
	enum addr_kind kind;
	unsigned int flags;
	struct sockaddr_storage ss;  /* AF_UNSPEC for ADDR_FD */
	socklen_t len;          /* meaningful length of ss (0 for ADDR_FD) */
	int fd;                 /* ADDR_FD only, -1 otherwise */
};

/* Parses <str>. Returns 0, or -1 with a message in <err> (which names the
 * offending text; the caller prefixes file:line and the keyword). */
int addr_parse(const char *str, struct sl_addr *out, unsigned int opts,
               char *err, size_t errlen);

/* Host part of <ss> as text ("127.0.0.1", "::1", "::ffff:1.2.3.4", "unix" for
 * AF_UNIX, "-" if unknown). Truncated to fit <len>. Returns <buf>. */
char *addr_host_str(const struct sockaddr_storage *ss, char *buf, size_t len);

/* Port of an AF_INET/AF_INET6 address, 0 otherwise. */
int addr_port(const struct sockaddr_storage *ss);

/* "host:port", "[v6]:port", "host" / "[v6]" with ADDR_F_NO_PORT,
 * "unix@/path", "abns@name", "fd@N": text that addr_parse() reads back to the
 * same address. Truncated to fit <len>. Returns <buf>. */
char *addr_full_str(const struct sl_addr *a, char *buf, size_t len);

/* Hash of the host part (for `balance source`): the 4 IPv4 or 16 IPv6 bytes,
 * an IPv4-mapped IPv6 address hashing like its IPv4 address so that a
 * dual-stack listener balances a client as an IPv4 listener would. 0 for
 * other families. */
uint32_t addr_hash_host(const struct sockaddr_storage *ss);
/* Whether <a> is in <net>/<plen> (same family; an IPv4-mapped IPv6
 * address matches an IPv4 network). */
int addr_in_net(const struct sockaddr_storage *a, const struct sockaddr_storage *net, int plen);

#endif
