/* TLS ClientHello inspection without terminating TLS: what a proxy in TCP
 * mode reads from the first bytes a client sends, for the req.ssl_* sample
 * fetches (SNI routing and the like).
 *
 * Pure functions over a caller's byte buffer: no allocation, no shared
 * state, safe from any thread. Every function is written for a connection
 * that receives its bytes in pieces: it answers SSL_HELLO_INCOMPLETE for a
 * prefix that may still become what it looks for, SSL_HELLO_INVALID as soon
 * as the bytes rule that out, and never reads past the length it is given.
 * Work is bounded by that length.
 *
 * Layers (RFC 8446 section 5.1, RFC 5246 sections 6.2.1 and 7.4):
 *
 *   record layer     ContentType(1) ProtocolVersion(2) length(2) fragment
 *   handshake layer  HandshakeType(1) length(3) body, possibly split over
 *                    several handshake records (RFC 8446 5.1: handshake
 *                    messages MAY be fragmented across records)
 *   ClientHello      legacy_version(2) random(32) session_id<0..32>
 *                    cipher_suites<2..2^16-2> compression_methods<1..2^8-1>
 *                    extensions<0..2^16-1> (absent in old hellos)
 *
 * A message split over several records is gathered into a scratch buffer
 * the caller provides; a message that fits in the first record is used in
 * place. Pointers in the results point into the input or into that scratch
 * buffer.
 */
#ifndef SLUICE_NET_SSL_HELLO_H
#define SLUICE_NET_SSL_HELLO_H

#include <stddef.h>
#include <stdint.h>

enum ssl_hello_status {
	SSL_HELLO_OK = 0,          /* complete and well-formed */
	SSL_HELLO_INCOMPLETE,      /* a prefix of what may still be one */
	SSL_HELLO_INVALID,         /* is not, and will not become, one */
};

#define SSL_REC_HANDSHAKE      22       /* ContentType handshake */
#define SSL_HS_CLIENT_HELLO    1        /* HandshakeType client_hello */

/* Extension types interpreted here (IANA TLS ExtensionType registry) */
#define SSL_EXT_SERVER_NAME          0  /* RFC 6066 section 3 */
#define SSL_EXT_SUPPORTED_GROUPS    10  /* RFC 8422 5.1.1 (RFC 4492: elliptic_curves) */
#define SSL_EXT_EC_POINT_FORMATS    11  /* RFC 8422 5.1.2 */
#define SSL_EXT_ALPN                16  /* RFC 7301 section 3.1 */
#define SSL_EXT_SESSION_TICKET      35  /* RFC 5077 section 3.2 */
#define SSL_EXT_SUPPORTED_VERSIONS  43  /* RFC 8446 4.2.1 */

/* The first handshake message of a TLS stream. */
struct ssl_hs_msg {
	unsigned int type;             /* HandshakeType */
	size_t len;                    /* body length (24-bit field) */
	const unsigned char *body;     /* <len> bytes: in the input when the
	                                * message sits in the first record, in
	                                * the scratch buffer when it was
	                                * gathered from several; NULL when it
	                                * was split and no scratch buffer (or
	                                * too small a one) was given */
	unsigned int nrecords;         /* records it was read from (1: in place) */
};

/* Reads the first handshake message at the start of <buf>: the records
 * must be handshake records (type 22) of protocol major version 3 or
 * above, none empty. OK once the whole message is there (bytes after it,
 * in its last record or beyond, are not looked at); INCOMPLETE while it
 * may still come; INVALID otherwise. <scratch> (may be NULL) receives a
 * message split over several records, if it fits in <scratch_size>. */
enum ssl_hello_status ssl_hs_first_msg(const unsigned char *buf, size_t len,
                                       unsigned char *scratch, size_t scratch_size,
                                       struct ssl_hs_msg *msg);

/* Flags of struct ssl_client_hello */
#define SSL_CH_F_EXTENSIONS    0x01   /* an extensions block is present */
#define SSL_CH_F_SNI           0x02   /* server_name: sni/sni_len set if
                                       * its first entry is a host_name */
#define SSL_CH_F_GROUPS        0x04   /* supported_groups (elliptic_curves) */
#define SSL_CH_F_POINT_FORMATS 0x08   /* ec_point_formats */
#define SSL_CH_F_ALPN          0x10   /* application_layer_protocol_negotiation */
#define SSL_CH_F_TICKET        0x20   /* session_ticket (ticket_len bytes) */
#define SSL_CH_F_VERSIONS      0x40   /* supported_versions */

struct ssl_client_hello {
	unsigned int version;          /* legacy_version: major << 8 | minor */
	const unsigned char *random;   /* 32 bytes */
	const unsigned char *session_id;
	size_t session_id_len;
	const unsigned char *ciphers;  /* cipher_suites, 2 bytes each */
	size_t ciphers_len;
	const unsigned char *compression;
	size_t compression_len;
	const unsigned char *extensions;   /* the block after its length */
	size_t extensions_len;
	unsigned int flags;            /* SSL_CH_F_* */
	unsigned int nextensions;
	const unsigned char *sni;      /* host_name, or NULL */
	size_t sni_len;
	const unsigned char *alpn;     /* ProtocolNameList contents (each name
	                                * preceded by its 1-byte length), or
	                                * NULL; walk it with ssl_alpn_next() */
	size_t alpn_len;
	size_t ticket_len;             /* session_ticket extension data */
	unsigned int max_version;      /* highest supported_versions entry that
	                                * is not a GREASE value (RFC 8701), or
	                                * <version> without the extension */
};

/* Parses a ClientHello body (the handshake message without its 4-byte
 * header). The structure must be exact: each vector within its parent,
 * the extensions block filling the rest of the message, no interpreted
 * extension twice, and the interpreted extensions well-formed:
 * server_name a non-empty list of (type, non-empty name) entries,
 * ALPN a non-empty list of non-empty names, supported_versions an even
 * non-empty list. Unknown extensions are skipped. OK or INVALID (the body
 * is complete by definition). */
enum ssl_hello_status ssl_client_hello_parse_body(const unsigned char *body, size_t len,
                                                  struct ssl_client_hello *ch);

/* Both steps: the first handshake message of <buf> must be a ClientHello
 * and parse. INCOMPLETE while the message may still come. */
enum ssl_hello_status ssl_client_hello_parse(const unsigned char *buf, size_t len,
                                             unsigned char *scratch, size_t scratch_size,
                                             struct ssl_client_hello *ch);

/* The protocol version a client offers in its hello, in either format:
 * an SSLv2-compatible CLIENT-HELLO (RFC 6101 appendix E.2; 2- or 3-byte
 * header, then type 1, version, cipher specs in multiples of 3, a session
 * id of 0 or 16 bytes, a challenge of 16 to 32 bytes, the header's length
 * matching them), or a ClientHello in handshake records, complete (its
 * body is not checked beyond its first two bytes). *<version> is
 * major << 8 | minor. A first byte of another record type (20, 21, 23,
 * 255) is no hello: INVALID. */
enum ssl_hello_status ssl_hello_version(const unsigned char *buf, size_t len,
                                        unsigned char *scratch, size_t scratch_size,
                                        unsigned int *version);

/* Steps through the ALPN names of <ch>: *<pos> starts at 0. Returns 1 with
 * the next name, 0 at the end. */
int ssl_alpn_next(const struct ssl_client_hello *ch, size_t *pos,
                  const unsigned char **name, size_t *name_len);

#endif
