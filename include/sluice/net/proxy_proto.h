/* PROXY protocol v1 (text) and v2 (binary), as specified by the HAProxy
 * project's proxy-protocol.txt: parsing on accept (`accept-proxy`) and
 * building for servers (`send-proxy`, `send-proxy-v2`). */
#ifndef SLUICE_NET_PROXY_PROTO_H
#define SLUICE_NET_PROXY_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define PP_V1_MAX   107   /* longest v1 line, CRLF included */
#define PP_V2_MAX   (16 + 65535)

struct pp_info {
	int version;        /* 1 or 2 */
	int local;          /* v2 LOCAL command or v1 UNKNOWN: keep socket addresses */
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
};

/* Parses a PROXY header at the start of <buf>. Returns the number of bytes it
 * occupies (>0) when complete and valid, 0 when more bytes are needed, -1
 * when invalid (not a PROXY header, bad syntax, unsupported family...). Never
 * reads past <len>. */
int pp_parse(const uint8_t *buf, size_t len, struct pp_info *out);

/* Builds a header for the connection from <src> to <dst> (the client's
 * addresses). v1: "PROXY TCP4 ..." or "PROXY UNKNOWN\r\n" for non-INET.
 * Returns the length written, or 0 if <len> is too small. */
size_t pp_build_v1(char *buf, size_t len, const struct sockaddr_storage *src,
                   const struct sockaddr_storage *dst);
size_t pp_build_v2(uint8_t *buf, size_t len, const struct sockaddr_storage *src,
                   const struct sockaddr_storage *dst);

#endif
