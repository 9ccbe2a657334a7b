/* The peers protocol's encodings (HAProxy's doc/peers.txt, protocol 2.1):
 * variable-length integers, message framing, table definitions and entry
 * updates. Pure functions over byte arrays, no allocation, no state but
 * what the caller passes: tests/unit/test_peers.c and fuzz/fuzz_peers.c
 * drive them; src/proxy/peers.c moves the bytes.
 *
 * Integers: a value below 240 is one byte; otherwise the first byte holds
 * its low 4 bits OR 0xf0, and each next byte 7 more bits, bit 7 set while
 * more follow. 64 bits fit in 10 bytes.
 *
 * Messages: class byte, type byte; types >= 128 carry an encoded payload
 * length then the payload. Control and error messages are two bytes.
 */
#include <string.h>
#include <arpa/inet.h>
#include <sluice/proxy/peers.h>

int peers_varint_put(uint8_t *p, size_t room, uint64_t v)
{
	size_t n = 0;

	if (v < 0xf0) {
		if (!room)
			return -1;
		p[0] = (uint8_t)v;
		return 1;
	}
	if (room < 1)
		return -1;
	p[n++] = (uint8_t)(v | 0xf0);
	v = (v - 0xf0) >> 4;
	while (v >= 0x80) {
		if (n >= room)
			return -1;
		p[n++] = (uint8_t)(v | 0x80);
		v = (v - 0x80) >> 7;
	}
	if (n >= room)
		return -1;
	p[n++] = (uint8_t)v;
	return (int)n;
}

int peers_varint_get(const uint8_t *p, size_t len, uint64_t *v)
{
	uint64_t val;
	unsigned int shift = 4;
	size_t n = 1;

	if (!len)
		return -1;
	val = p[0];
	if (val < 0xf0) {
		*v = val;
		return 1;
	}
	for (;;) {
		if (n >= len || shift > 60)
			return -1;
		val += (uint64_t)p[n] << shift;
		shift += 7;
		if (!(p[n++] & 0x80))
			break;
	}
	*v = val;
	return (int)n;
}

long peers_msg_cut(const uint8_t *p, size_t len, struct peers_msg *m)
{
	uint64_t plen;
	int n;

	if (len < 2)
		return 0;
	m->cls = p[0];
	m->type = p[1];
	m->data = NULL;
	m->len = 0;
	if (m->type < 128)
		return 2;
	if (len < 3)
		return 0;
	n = peers_varint_get(p + 2, len - 2, &plen);
	if (n < 0) {
		/* a varint is at most 10 bytes: incomplete, or malformed */
		return len - 2 >= 10 ? -1 : 0;
	}
	if (plen > PEERS_MAX_MSG)
		return -2;
	if (len - 2 - (size_t)n < plen)
		return 0;
	m->data = p + 2 + n;
	m->len = (size_t)plen;
	return (long)(2 + (size_t)n + plen);
}

/* ------------------------------------------------------------------ writer */

void peers_wr_byte(struct peers_wr *w, uint8_t b)
{
	if (w->len >= w->room) {
		w->err = 1;
		return;
	}
	w->p[w->len++] = b;
}

void peers_wr_varint(struct peers_wr *w, uint64_t v)
{
	int n = peers_varint_put(w->p + w->len, w->room - w->len, v);

	if (n < 0) {
		w->err = 1;
		return;
	}
	w->len += (size_t)n;
}

void peers_wr_bytes(struct peers_wr *w, const void *b, size_t n)
{
	if (w->room - w->len < n) {
		w->err = 1;
		return;
	}
	memcpy(w->p + w->len, b, n);
	w->len += n;
}

void peers_wr_u32(struct peers_wr *w, uint32_t v)
{
	uint32_t nv = htonl(v);

	peers_wr_bytes(w, &nv, 4);
}

/* header (2) + the longest length a PEERS_MAX_MSG payload takes (4) */
#define HDR_ROOM 6

size_t peers_wr_msg_begin(struct peers_wr *w)
{
	if (w->room - w->len < HDR_ROOM) {
		w->err = 1;
		return w->len;
	}
	w->len += HDR_ROOM;
	return w->len;
}

int peers_wr_msg_end(struct peers_wr *w, size_t start, uint8_t cls, uint8_t type)
{
	size_t plen, hdr = start - HDR_ROOM;
	uint8_t lenbuf[10];
	int n;

	if (w->err)
		return -1;
	plen = w->len - start;
	n = peers_varint_put(lenbuf, sizeof(lenbuf), plen);
	if (n < 0 || n > HDR_ROOM - 2)
		return -1;
	w->p[hdr] = cls;
	w->p[hdr + 1] = type;
	memcpy(w->p + hdr + 2, lenbuf, (size_t)n);
	memmove(w->p + hdr + 2 + n, w->p + start, plen);
	w->len = hdr + 2 + (size_t)n + plen;
	return 0;
}

/* ------------------------------------------------------------------ definitions */

/* Data type ids of HAProxy 2.6 (the order of sluice's enum stkt_dt) */
#define DT_SERVER_KEY 19
#define DT_GPT        22
#define DT_GPC        23
#define DT_GPC_RATE   24

static int dt_is_rate(int dt)
{
	switch (dt) {
	case 3: case 5: case 8: case 10: case 12: case 14: case 16: case 18: case 21:
	case DT_GPC_RATE:
		return 1;
	}
	return 0;
}

static int dt_is_array(int dt)
{
	return dt == DT_GPT || dt == DT_GPC || dt == DT_GPC_RATE;
}

int peers_dt_wire_kind(int dt)
{
	if (dt < 0 || dt >= PEERS_NB_DT)
		return -1;
	if (dt == DT_SERVER_KEY)
		return 2;
	return dt_is_rate(dt) ? 1 : 0;
}

int peers_def_encode(uint8_t *p, size_t room, const struct peers_def *d)
{
	struct peers_wr w = { p, 0, room, 0 };
	size_t start = peers_wr_msg_begin(&w);

	peers_wr_varint(&w, d->id);
	peers_wr_varint(&w, d->name_len);
	peers_wr_bytes(&w, d->name, d->name_len);
	peers_wr_varint(&w, d->key_type);
	peers_wr_varint(&w, d->key_len);
	peers_wr_varint(&w, d->data_types);
	peers_wr_varint(&w, d->expire);
	/* then, for the arrays their size, for the rates their period */
	for (int dt = 0; dt < PEERS_NB_DT; dt++) {
		if (!(d->data_types & (1ull << dt)))
			continue;
		if (!dt_is_rate(dt) && !dt_is_array(dt))
			continue;
		peers_wr_varint(&w, (uint64_t)dt);
		if (dt_is_array(dt))
			peers_wr_varint(&w, d->nbelem[dt] ? d->nbelem[dt] : 1);
		if (dt_is_rate(dt))
			peers_wr_varint(&w, d->period[dt]);
	}
	if (peers_wr_msg_end(&w, start, PEERS_CLASS_STKT, PEERS_STKT_DEFINE) < 0)
		return -1;
	return (int)w.len;
}

/* Reads a varint at *<pos> of <p>/<len>. 0, or -1. */
static int rd_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
	int n = peers_varint_get(p + *pos, len - *pos, v);

	if (n < 0)
		return -1;
	*pos += (size_t)n;
	return 0;
}

static void def_read_params(const uint8_t *p, size_t len, size_t pos, struct peers_def *d)
{
	/* optional: the expiry, then the arrays' sizes and rates' periods;
	 * older peers stop anywhere */
	uint64_t v, dt;

	if (rd_varint(p, len, &pos, &v) < 0)
		return;
	d->expire = v;
	while (pos < len) {
		if (rd_varint(p, len, &pos, &dt) < 0 || dt >= PEERS_NB_DT)
			return;
		if (dt_is_array((int)dt)) {
			if (rd_varint(p, len, &pos, &v) < 0)
				return;
			d->nbelem[dt] = v > 100 ? 100 : (uint32_t)v;
		}
		if (dt_is_rate((int)dt)) {
			if (rd_varint(p, len, &pos, &v) < 0)
				return;
			d->period[dt] = (uint32_t)v;
		}
	}
}

int peers_def_decode(const uint8_t *p, size_t len, struct peers_def *d)
{
	size_t pos = 0;
	uint64_t nlen;

	memset(d, 0, sizeof(*d));
	if (rd_varint(p, len, &pos, &d->id) < 0 || rd_varint(p, len, &pos, &nlen) < 0)
		return -1;
	if (nlen > len - pos)
		return -1;
	d->name = p + pos;
	d->name_len = (size_t)nlen;
	pos += (size_t)nlen;
	if (rd_varint(p, len, &pos, &d->key_type) < 0 ||
	    rd_varint(p, len, &pos, &d->key_len) < 0 ||
	    rd_varint(p, len, &pos, &d->data_types) < 0)
		return -1;
	if (d->key_len > 65536)
		return -1;
	def_read_params(p, len, pos, d);
	return 0;
}

/* ------------------------------------------------------------------ updates */

static int decode_key(const uint8_t *p, size_t len, size_t *pos, const struct peers_def *def,
                      struct peers_upd *u)
{
	uint64_t klen;

	switch (def->key_type) {
	case PEERS_KT_STR:
		if (rd_varint(p, len, pos, &klen) < 0 || klen > len - *pos)
			return -1;
		break;
	case PEERS_KT_SINT:
		klen = 4;
		break;
	case PEERS_KT_IPV4: case PEERS_KT_IPV6: case PEERS_KT_BIN:
		klen = def->key_len;
		break;
	default:
		return -1;
	}
	if (klen > len - *pos)
		return -1;
	u->key = p + *pos;
	u->key_len = (size_t)klen;
	*pos += (size_t)klen;
	return 0;
}

/* server_key: length, dictionary id, then (first use) the name. */
static int decode_dict(const uint8_t *p, size_t len, size_t *pos,
                       char (*dict)[PEERS_DICT_STRMAX + 1], struct peers_val *v)
{
	uint64_t vlen, id, slen;
	size_t end;

	v->str = NULL;
	v->str_len = 0;
	if (rd_varint(p, len, pos, &vlen) < 0 || vlen > len - *pos)
		return -1;
	if (!vlen)
		return 0;
	end = *pos + (size_t)vlen;
	if (rd_varint(p, end, pos, &id) < 0 || !id || id > PEERS_DICT_SIZE)
		return -1;
	if (*pos < end) {
		if (rd_varint(p, end, pos, &slen) < 0 || slen != end - *pos)
			return -1;
		if (dict && slen <= PEERS_DICT_STRMAX) {
			memcpy(dict[id - 1], p + *pos, (size_t)slen);
			dict[id - 1][slen] = 0;
		}
		*pos = end;
	}
	if (dict && dict[id - 1][0]) {
		v->str = dict[id - 1];
		v->str_len = strlen(dict[id - 1]);
	}
	return 0;
}

static int decode_value(const uint8_t *p, size_t len, size_t *pos, int dt,
                        char (*dict)[PEERS_DICT_STRMAX + 1], struct peers_val *v)
{
	int kind = peers_dt_wire_kind(dt);

	v->kind = kind == 1 ? PEERS_V_FRQ : kind == 2 ? PEERS_V_DICT : PEERS_V_INT;
	if (kind == 2)
		return decode_dict(p, len, pos, dict, v);
	if (rd_varint(p, len, pos, &v->v[0]) < 0)
		return -1;
	if (kind == 1 && (rd_varint(p, len, pos, &v->v[1]) < 0 ||
	                  rd_varint(p, len, pos, &v->v[2]) < 0))
		return -1;
	return 0;
}

static int read_u32(const uint8_t *p, size_t len, size_t *pos, uint32_t *v)
{
	uint32_t nv;

	if (len - *pos < 4)
		return -1;
	memcpy(&nv, p + *pos, 4);
	*v = ntohl(nv);
	*pos += 4;
	return 0;
}

int peers_upd_decode(uint8_t type, const uint8_t *p, size_t len, const struct peers_def *def,
                     char (*dict)[PEERS_DICT_STRMAX + 1], struct peers_upd *u,
                     int (*cb)(void *arg, const struct peers_val *v), void *arg)
{
	size_t pos = 0;

	memset(u, 0, sizeof(*u));
	u->has_id = type == PEERS_STKT_UPDATE || type == PEERS_STKT_UPDATE_TIMED;
	u->timed = type == PEERS_STKT_UPDATE_TIMED || type == PEERS_STKT_INCUPDATE_TIMED;
	if (u->has_id && read_u32(p, len, &pos, &u->id) < 0)
		return -1;
	if (u->timed && read_u32(p, len, &pos, &u->expire) < 0)
		return -1;
	if (decode_key(p, len, &pos, def, u) < 0)
		return -1;
	for (int dt = 0; dt < 64; dt++) {
		unsigned int nb;

		if (!(def->data_types & (1ull << dt)))
			continue;
		if (dt >= PEERS_NB_DT)
			return -1;   /* a type we cannot skip: its size is unknown */
		nb = dt_is_array(dt) ? (def->nbelem[dt] ? def->nbelem[dt] : 1) : 1;
		for (unsigned int i = 0; i < nb; i++) {
			struct peers_val v = { .dt = dt, .idx = i };

			if (decode_value(p, len, &pos, dt, dict, &v) < 0)
				return -1;
			if (cb && cb(arg, &v))
				return -1;
		}
	}
	return 0;
}
