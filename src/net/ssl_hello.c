/* TLS ClientHello inspection (see ssl_hello.h): the record layer, the first
 * handshake message gathered over one or several records, the ClientHello
 * body and the extensions the req.ssl_* fetches need, and the SSLv2
 * CLIENT-HELLO for req.ssl_ver.
 *
 * Pure functions over caller buffers: no allocation, no shared state, safe
 * from any thread. Nothing here reads past the length it is given, and
 * every loop advances through the input (or through a length-checked part
 * of it), so the work is bounded by that length.
 *
 * Choices the RFCs leave to a passive reader (see also ssl_hello.h):
 * - A record of protocol major version 3 or above is accepted (record
 *   versions are not negotiated in the first flight; RFC 8446 5.1 asks
 *   receivers to ignore legacy_record_version). Empty handshake records are
 *   refused (RFC 8446 5.1 forbids them).
 * - A ClientHello must be exact (each vector within its parent, nothing
 *   after the extensions): a hello a TLS server refuses as malformed gives
 *   no values rather than values read from the malformed part.
 * - server_name: only its first entry is used, and only if it is a
 *   host_name (what OpenSSL accepts); a name is returned as sent (no case
 *   folding, no check of its characters).
 */
#include <string.h>
#include <sluice/net/ssl_hello.h>

static unsigned int rd16(const unsigned char *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

/* ------------------------------------------------------------------ records */

enum ssl_hello_status ssl_hs_first_msg(const unsigned char *buf, size_t len,
                                       unsigned char *scratch, size_t scratch_size,
                                       struct ssl_hs_msg *msg)
{
	unsigned char hdr[4];
	size_t pos = 0;          /* start of the current record */
	size_t got = 0;          /* handshake bytes gathered, header included */
	size_t need = 4;         /* the header, then the whole message */
	int in_place = 0, copy = 0;

	memset(msg, 0, sizeof(*msg));
	for (;;) {
		const unsigned char *frag;
		size_t rlen, avail;

		/* the record header, judged on each byte as soon as it is there */
		if (pos >= len)
			return SSL_HELLO_INCOMPLETE;
		if (buf[pos] != SSL_REC_HANDSHAKE)
			return SSL_HELLO_INVALID;
		if (len - pos < 2)
			return SSL_HELLO_INCOMPLETE;
		if (buf[pos + 1] < 3)
			return SSL_HELLO_INVALID;
		if (len - pos < 5)
			return SSL_HELLO_INCOMPLETE;
		rlen = rd16(buf + pos + 3);
		if (!rlen)
			return SSL_HELLO_INVALID;
		msg->nrecords++;
		frag = buf + pos + 5;
		avail = len - pos - 5 < rlen ? len - pos - 5 : rlen;

		while (avail && got < need) {
			size_t n;

			if (got < 4) {
				n = 4 - got < avail ? 4 - got : avail;
				memcpy(hdr + got, frag, n);
			} else {
				n = need - got < avail ? need - got : avail;
				if (copy)
					memcpy(scratch + (got - 4), frag, n);
			}
			got += n;
			frag += n;
			avail -= n;
			if (got == 4 && need == 4) {
				msg->type = hdr[0];
				msg->len = (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
				need = 4 + msg->len;
				/* the usual case: the whole message in the first record */
				in_place = msg->nrecords == 1 && msg->len <= rlen - 4;
				copy = !in_place && scratch && msg->len <= scratch_size;
			}
		}
		if (got >= 4 && got == need) {
			msg->body = in_place ? buf + 5 + 4 : copy ? scratch : NULL;
			return SSL_HELLO_OK;
		}
		if (len - pos - 5 < rlen)
			return SSL_HELLO_INCOMPLETE;   /* the rest of this record is to come */
		pos += 5 + rlen;
	}
}

/* ------------------------------------------------------------------ ClientHello */

/* A bounded reader over a vector. */
struct rd {
	const unsigned char *p;
	size_t left;
};

static int rd_take(struct rd *r, size_t n, const unsigned char **out)
{
	if (r->left < n)
		return 0;
	*out = r->p;
	r->p += n;
	r->left -= n;
	return 1;
}

/* A vector with a 1- or 2-byte length of at least <min> bytes. */
static int rd_vec(struct rd *r, int lenbytes, size_t min, const unsigned char **out,
                  size_t *out_len)
{
	const unsigned char *l;
	size_t n;

	if (!rd_take(r, (size_t)lenbytes, &l))
		return 0;
	n = lenbytes == 1 ? l[0] : rd16(l);
	if (n < min || !rd_take(r, n, out))
		return 0;
	*out_len = n;
	return 1;
}

/* server_name (RFC 6066 section 3): ServerNameList<1..2^16-1> of
 * (NameType, opaque<1..2^16-1>) entries, filling the extension. */
static int ext_server_name(const unsigned char *d, size_t len, struct ssl_client_hello *ch)
{
	struct rd r = { d, len }, list;
	const unsigned char *p, *name;
	size_t name_len;
	int first = 1;

	if (!rd_vec(&r, 2, 1, &list.p, &list.left) || r.left)
		return 0;
	while (list.left) {
		if (!rd_take(&list, 1, &p) || !rd_vec(&list, 2, 1, &name, &name_len))
			return 0;
		if (first && p[0] == 0) {          /* host_name */
			ch->sni = name;
			ch->sni_len = name_len;
		}
		first = 0;
	}
	return 1;
}

/* ALPN (RFC 7301 section 3.1): ProtocolNameList<2..2^16-1> of
 * ProtocolName<1..2^8-1>, filling the extension. */
static int ext_alpn(const unsigned char *d, size_t len, struct ssl_client_hello *ch)
{
	struct rd r = { d, len }, list;
	const unsigned char *name;
	size_t name_len;

	if (!rd_vec(&r, 2, 2, &list.p, &list.left) || r.left)
		return 0;
	ch->alpn = list.p;
	ch->alpn_len = list.left;
	while (list.left)
		if (!rd_vec(&list, 1, 1, &name, &name_len))
			return 0;
	return 1;
}

/* GREASE values (RFC 8701): 0x0A0A, 0x1A1A... 0xFAFA */
static int is_grease(unsigned int v)
{
	return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff);
}

/* supported_versions in a ClientHello (RFC 8446 4.2.1):
 * ProtocolVersion versions<2..254>, filling the extension. */
static int ext_versions(const unsigned char *d, size_t len, struct ssl_client_hello *ch)
{
	struct rd r = { d, len };
	const unsigned char *v;
	size_t n;

	if (!rd_vec(&r, 1, 2, &v, &n) || r.left || n % 2)
		return 0;
	ch->max_version = 0;
	for (size_t i = 0; i < n; i += 2)
		if (!is_grease(rd16(v + i)) && rd16(v + i) > ch->max_version)
			ch->max_version = rd16(v + i);
	if (!ch->max_version)
		ch->max_version = ch->version;   /* nothing but GREASE */
	return 1;
}

static int parse_extension(unsigned int type, const unsigned char *d, size_t len,
                           struct ssl_client_hello *ch)
{
	unsigned int flag;

	switch (type) {
	case SSL_EXT_SERVER_NAME:        flag = SSL_CH_F_SNI; break;
	case SSL_EXT_SUPPORTED_GROUPS:   flag = SSL_CH_F_GROUPS; break;
	case SSL_EXT_EC_POINT_FORMATS:   flag = SSL_CH_F_POINT_FORMATS; break;
	case SSL_EXT_ALPN:               flag = SSL_CH_F_ALPN; break;
	case SSL_EXT_SESSION_TICKET:     flag = SSL_CH_F_TICKET; break;
	case SSL_EXT_SUPPORTED_VERSIONS: flag = SSL_CH_F_VERSIONS; break;
	default:
		return 1;                /* not interpreted */
	}
	/* "There MUST NOT be more than one extension of the same type"
	 * (RFC 5246 7.4.1.4, RFC 8446 4.2) */
	if (ch->flags & flag)
		return 0;
	ch->flags |= flag;
	switch (type) {
	case SSL_EXT_SERVER_NAME:
		return ext_server_name(d, len, ch);
	case SSL_EXT_ALPN:
		return ext_alpn(d, len, ch);
	case SSL_EXT_SUPPORTED_VERSIONS:
		return ext_versions(d, len, ch);
	case SSL_EXT_SESSION_TICKET:
		ch->ticket_len = len;
		return 1;
	default:
		return 1;
	}
}

enum ssl_hello_status ssl_client_hello_parse_body(const unsigned char *body, size_t len,
                                                  struct ssl_client_hello *ch)
{
	struct rd r = { body, len }, ext;
	const unsigned char *v;

	memset(ch, 0, sizeof(*ch));
	if (!rd_take(&r, 2, &v) || !rd_take(&r, 32, &ch->random))
		return SSL_HELLO_INVALID;
	ch->version = rd16(v);
	ch->max_version = ch->version;
	if (!rd_vec(&r, 1, 0, &ch->session_id, &ch->session_id_len) || ch->session_id_len > 32)
		return SSL_HELLO_INVALID;
	if (!rd_vec(&r, 2, 2, &ch->ciphers, &ch->ciphers_len) || ch->ciphers_len % 2)
		return SSL_HELLO_INVALID;
	if (!rd_vec(&r, 1, 1, &ch->compression, &ch->compression_len))
		return SSL_HELLO_INVALID;
	/* "the presence of extensions can be detected by determining whether
	 * there are bytes following the compression_methods" (RFC 5246 7.4.1.2) */
	if (!r.left)
		return SSL_HELLO_OK;
	if (!rd_vec(&r, 2, 0, &ext.p, &ext.left) || r.left)
		return SSL_HELLO_INVALID;
	ch->flags |= SSL_CH_F_EXTENSIONS;
	ch->extensions = ext.p;
	ch->extensions_len = ext.left;
	while (ext.left) {
		const unsigned char *t, *d;
		size_t dlen;

		if (!rd_take(&ext, 2, &t) || !rd_vec(&ext, 2, 0, &d, &dlen) ||
		    !parse_extension(rd16(t), d, dlen, ch))
			return SSL_HELLO_INVALID;
		ch->nextensions++;
	}
	return SSL_HELLO_OK;
}

enum ssl_hello_status ssl_client_hello_parse(const unsigned char *buf, size_t len,
                                             unsigned char *scratch, size_t scratch_size,
                                             struct ssl_client_hello *ch)
{
	struct ssl_hs_msg msg;
	enum ssl_hello_status st = ssl_hs_first_msg(buf, len, scratch, scratch_size, &msg);

	memset(ch, 0, sizeof(*ch));
	if (st != SSL_HELLO_OK)
		return st;
	if (msg.type != SSL_HS_CLIENT_HELLO || !msg.body)
		return SSL_HELLO_INVALID;
	return ssl_client_hello_parse_body(msg.body, msg.len, ch);
}

int ssl_alpn_next(const struct ssl_client_hello *ch, size_t *pos,
                  const unsigned char **name, size_t *name_len)
{
	size_t n;

	/* the list was checked by ext_alpn(): each length fits */
	if (!ch->alpn || *pos >= ch->alpn_len)
		return 0;
	n = ch->alpn[*pos];
	if (!n || n > ch->alpn_len - *pos - 1)
		return 0;
	*name = ch->alpn + *pos + 1;
	*name_len = n;
	*pos += 1 + n;
	return 1;
}

/* ------------------------------------------------------------------ versions */

/* SSLv2-compatible CLIENT-HELLO (RFC 6101 appendix E.2, and the SSL 2.0
 * specification it refers to): a 2-byte record header (high bit set: 15
 * bits of length) or a 3-byte one (14 bits of length, then a padding
 * length), msg_type 1, version(2), cipher_spec_length(2),
 * session_id_length(2), challenge_length(2), then the three vectors. */
static enum ssl_hello_status sslv2_version(const unsigned char *buf, size_t len,
                                           unsigned int *version)
{
	size_t hlen = buf[0] & 0x80 ? 2 : 3;
	size_t rlen, pad, cilen, silen, chlen;
	const unsigned char *p;

	if (len < hlen + 1)
		return SSL_HELLO_INCOMPLETE;
	if (buf[hlen] != SSL_HS_CLIENT_HELLO)
		return SSL_HELLO_INVALID;
	if (len < hlen + 9)
		return SSL_HELLO_INCOMPLETE;
	rlen = hlen == 2 ? ((size_t)(buf[0] & 0x7f) << 8 | buf[1])
	                 : ((size_t)(buf[0] & 0x3f) << 8 | buf[1]);
	pad = hlen == 2 ? 0 : buf[2];
	p = buf + hlen + 1;
	cilen = rd16(p + 2);
	silen = rd16(p + 4);
	chlen = rd16(p + 6);
	if (cilen % 3 || (silen && silen != 16) || chlen < 16 || chlen > 32 ||
	    rlen != 9 + cilen + silen + chlen)
		return SSL_HELLO_INVALID;
	if (len - (hlen + 9) < cilen + silen + chlen + pad)
		return SSL_HELLO_INCOMPLETE;
	*version = rd16(p);
	return SSL_HELLO_OK;
}

enum ssl_hello_status ssl_hello_version(const unsigned char *buf, size_t len,
                                        unsigned char *scratch, size_t scratch_size,
                                        unsigned int *version)
{
	struct ssl_hs_msg msg;
	enum ssl_hello_status st;

	if (!len)
		return SSL_HELLO_INCOMPLETE;
	switch (buf[0]) {
	case SSL_REC_HANDSHAKE:
		st = ssl_hs_first_msg(buf, len, scratch, scratch_size, &msg);
		if (st != SSL_HELLO_OK)
			return st;
		if (msg.type != SSL_HS_CLIENT_HELLO || msg.len < 2 || !msg.body)
			return SSL_HELLO_INVALID;
		*version = rd16(msg.body);
		return SSL_HELLO_OK;
	case 20: case 21: case 23: case 255:
		/* change_cipher_spec, alert, application_data, and 255 that
		 * HAProxy also reads as a record header: records, no hello */
		return SSL_HELLO_INVALID;
	default:
		return sslv2_version(buf, len, version);
	}
}
