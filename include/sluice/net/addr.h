/* Addresses as the configuration writes them.
 *
 *   ip:port  [ipv6]:port  ipv6:port (last colon)  :port  *:port  port ranges
 *   are not supported; ipv4@ / ipv6@ prefixes force the family; unix@/path and
 *   /path (unix stream socket); abns@name (Linux abstract namespace);
 *   fd@N (an inherited, already-listening descriptor); hostnames are resolved
 *   once at parse time with getaddrinfo (AF_UNSPEC unless a prefix forces it).
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
#define ADDR_O_PORT_OPTIONAL  0x02  /* no port: port 0, ADDR_F_NO_PORT set */
#define ADDR_O_NO_FD          0x04  /* fd@ not allowed (e.g. server) */
#define ADDR_O_NO_UNIX        0x08  /* unix@, /path, abns@ not allowed */

/* flags set by addr_parse() */
#define ADDR_F_NO_PORT        0x01
#define ADDR_F_ANY            0x02  /* host part empty or '*' */

struct sl_addr {
	enum addr_kind kind;
	unsigned int flags;
	struct sockaddr_storage ss;
	socklen_t len;          /* meaningful length of ss */
	int fd;                 /* ADDR_FD only */
};

/* Parses <str>. Returns 0, or -1 with a message in <err>. */
int addr_parse(const char *str, struct sl_addr *out, unsigned int opts,
               char *err, size_t errlen);

/* Host part of <ss> as text ("127.0.0.1", "::1", "unix" for AF_UNIX,
 * "-" if unknown). Returns <buf>. */
char *addr_host_str(const struct sockaddr_storage *ss, char *buf, size_t len);

/* Port of an AF_INET/AF_INET6 address, 0 otherwise. */
int addr_port(const struct sockaddr_storage *ss);

/* "host:port", "[v6]:port", "unix@/path", "abns@name", "fd@N". Returns <buf>. */
char *addr_full_str(const struct sl_addr *a, char *buf, size_t len);

/* Hash of the host part (for `balance source`): IPv4 and IPv6 bytes. */
uint32_t addr_hash_host(const struct sockaddr_storage *ss);

#endif
