/* PROXY protocol v1 (text) and v2 (binary), as specified by the HAProxy
 * project's proxy-protocol.txt: parsing on accept (`accept-proxy`) and
 * building for servers (`send-proxy`, `send-proxy-v2`).
 *
 * Pure functions over caller buffers: no allocation, no shared state.
 */
#ifndef SLUICE_NET_PROXY_PROTO_H
#define SLUICE_NET_PROXY_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define PP_V1_MAX   107   /* longest v1 line, CRLF included */
#define PP_V2_MAX   (16 + 65535)

struct pp_info {
	int version;        /* 1 or 2 */
	int local;          /* v2 LOCAL command, v1 UNKNOWN, or a v2 family that
	                     * falls back to UNSPEC (AF_UNSPEC, UDP, UNIX dgram):
	                     * keep the socket addresses. src/dst are then zeroed
	                     * (AF_UNSPEC). */
	struct sockaddr_storage src;   /* AF_INET, AF_INET6 or (v2) AF_UNIX */
	struct sockaddr_storage dst;
	size_t tlv_off;     /* v2 PROXY over a known family: offset in the
	                     * buffer of the TLV area, already checked to be a
	                     * well-formed TLV sequence; 0 otherwise */
	size_t tlv_len;     /* its length, 0 if none */
};

/* Parses a PROXY header at the start of <buf>. Returns the number of bytes it
 * occupies (>0) when complete and valid, 0 when more bytes are needed (what
 * is there is a prefix of a header that may still be valid), -1 as soon as
 * the bytes cannot be a valid header (not a PROXY header, bad syntax,
 * unsupported family, v1 line without CRLF in its first 107 bytes...).
 * Never reads past <len>. <out> is meaningful only when it returns >0. */
int pp_parse(const uint8_t *buf, size_t len, struct pp_info *out);

/* Build a header for the connection from <src> to <dst> (the client's
 * addresses; either may be NULL when there is no client, e.g. a health
 * check). Returns the length written, or 0 if <len> is too small.
 *
 * Both: addresses that are both IPv4 or IPv4-mapped IPv6 go as IPv4; an IPv4
 * and a real IPv6 address go as IPv6 with the IPv4 one mapped (::ffff:a.b.c.d).
 * v1: "PROXY TCP4 ..." / "PROXY TCP6 ..." (IPv6 written as hex groups only,
 * as the spec asks), "PROXY UNKNOWN\r\n" for anything else. No NUL written.
 * v2: PROXY command over TCP/IPv4, TCP/IPv6, or UNIX stream when both are
 * AF_UNIX; otherwise the LOCAL command with an AF_UNSPEC empty block. */
size_t pp_build_v1(char *buf, size_t len, const struct sockaddr_storage *src,
                   const struct sockaddr_storage *dst);
size_t pp_build_v2(uint8_t *buf, size_t len, const struct sockaddr_storage *src,
                   const struct sockaddr_storage *dst);

/* TLV types of v2 headers (proxy-protocol.txt 2.2.x) */
enum {
	PP2_TYPE_ALPN = 0x01, PP2_TYPE_AUTHORITY = 0x02, PP2_TYPE_CRC32C = 0x03,
	PP2_TYPE_NOOP = 0x04, PP2_TYPE_UNIQUE_ID = 0x05, PP2_TYPE_SSL = 0x20,
	PP2_SUBTYPE_SSL_VERSION = 0x21, PP2_SUBTYPE_SSL_CN = 0x22,
	PP2_SUBTYPE_SSL_CIPHER = 0x23, PP2_SUBTYPE_SSL_SIG_ALG = 0x24,
	PP2_SUBTYPE_SSL_KEY_ALG = 0x25,
};
/* the client byte of the SSL TLV */
enum { PP2_CLIENT_SSL = 0x01, PP2_CLIENT_CERT_CONN = 0x02, PP2_CLIENT_CERT_SESS = 0x04 };

/* Appends a TLV to the v2 header of <used> bytes in <buf> (of <len>) and
 * counts it in the header's length. Returns the new length, 0 if <len> is
 * short (nothing written). A TLV nested in another (the SSL TLV's) is
 * written the same way and its parent's length fixed with pp_v2_tlv_len(). */
size_t pp_v2_add_tlv(uint8_t *buf, size_t len, size_t used, uint8_t type, const void *val,
                     size_t vlen);

/* Sets the length of the TLV at <off> to end at <end>, and the header's. */
void pp_v2_tlv_len(uint8_t *buf, size_t off, size_t end);

/* Fills the CRC32C TLV whose value is at <val_off> with the checksum of
 * the whole header of <used> bytes (the value counted as zeros). */
void pp_v2_crc32c(uint8_t *buf, size_t used, size_t val_off);

#endif
