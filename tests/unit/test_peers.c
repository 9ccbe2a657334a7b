/* The peers protocol's encodings (src/proxy/peers_proto.c): integers (the
 * example of HAProxy's doc/peers.txt and the limits of each length),
 * message framing, table definitions and updates, byte for byte against
 * what HAProxy 2.6 sends (captured from /usr/sbin/haproxy), and back. */
#include <stdint.h>
#include <string.h>
#include <sluice/proxy/peers.h>
#include "t.h"

static void test_varint(void)
{
	static const uint64_t vals[] = { 0, 1, 239, 240, 2287, 2288, 264431, 264432,
	                                 33818863, 33818864, 0x1234, UINT32_MAX,
	                                 (uint64_t)1 << 40, UINT64_MAX };
	static const int lens[] = { 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 3, 5, 7, 10 };
	uint8_t b[16];
	uint64_t v;

	/* the documented example: 0x1234 is f4 94 01 */
	CHECK(peers_varint_put(b, sizeof(b), 0x1234) == 3);
	CHECK(b[0] == 0xf4 && b[1] == 0x94 && b[2] == 0x01);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		int n = peers_varint_put(b, sizeof(b), vals[i]);

		CHECK(n == lens[i]);
		CHECK(peers_varint_get(b, (size_t)n, &v) == n && v == vals[i]);
		/* truncated: refused */
		if (n > 1)
			CHECK(peers_varint_get(b, (size_t)n - 1, &v) < 0);
		/* no room: refused */
		CHECK(peers_varint_put(b, (size_t)n - 1, vals[i]) < 0);
	}
	/* eleven continuation bytes: too long */
	memset(b, 0xff, sizeof(b));
	CHECK(peers_varint_get(b, sizeof(b), &v) < 0);
}

static void test_framing(void)
{
	const uint8_t hb[] = { 0x00, 0x04 };
	const uint8_t upd[] = { 0x0a, 0x80, 0x03, 1, 2, 3, 0xff };
	const uint8_t big[] = { 0x0a, 0x80, 0xf5, 0xff, 0xff, 0x7f };
	struct peers_msg m;

	CHECK(peers_msg_cut(hb, 1, &m) == 0);
	CHECK(peers_msg_cut(hb, 2, &m) == 2 && m.cls == 0 && m.type == 4 && !m.len);
	CHECK(peers_msg_cut(upd, 5, &m) == 0);
	CHECK(peers_msg_cut(upd, sizeof(upd), &m) == 6 && m.len == 3 && m.data[0] == 1);
	CHECK(peers_msg_cut(big, sizeof(big), &m) == -2);
}

/* What HAProxy 2.6 sent for "table t type ip size 100 expire 60s store
 * gpc0,http_req_rate(10s),server_key" in a peers section, and an update
 * of 1.2.3.4 with gpc0=5, http_req_rate 3 (1 ms old), no server_key. */
static const uint8_t hap_def[] = {
	0x0a, 0x82, 0x11, 0x01, 0x02, '/', 't', 0x04, 0x04, 0xf4, 0xb1, 0xff, 0x00,
	0xf0, 0x97, 0x1c, 0x0a, 0xf0, 0xe2, 0x03,
};
static const uint8_t hap_upd[] = {
	0x0a, 0x80, 0x0d, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x03, 0x04, 0x05, 0x01, 0x03,
	0x00, 0x00,
};

struct seen {
	int n;
	struct peers_val v[8];
};

static int collect(void *arg, const struct peers_val *v)
{
	struct seen *s = arg;

	if (s->n < 8)
		s->v[s->n++] = *v;
	return 0;
}

static void test_haproxy_bytes(void)
{
	struct peers_msg m;
	struct peers_def d, again;
	struct peers_upd u;
	struct seen s = { 0 };
	static char dict[PEERS_DICT_SIZE][PEERS_DICT_STRMAX + 1];
	uint8_t out[64];
	int n;

	CHECK(peers_msg_cut(hap_def, sizeof(hap_def), &m) == (long)sizeof(hap_def));
	CHECK(m.cls == PEERS_CLASS_STKT && m.type == PEERS_STKT_DEFINE);
	CHECK(peers_def_decode(m.data, m.len, &d) == 0);
	CHECK(d.id == 1 && d.name_len == 2 && !memcmp(d.name, "/t", 2));
	CHECK(d.key_type == PEERS_KT_IPV4 && d.key_len == 4);
	CHECK(d.data_types == ((1u << 2) | (1u << 10) | (1u << 19)));
	CHECK(d.expire == 60000 && d.period[10] == 10000);
	/* encoded again: the same bytes */
	n = peers_def_encode(out, sizeof(out), &d);
	CHECK(n == (int)sizeof(hap_def) && !memcmp(out, hap_def, sizeof(hap_def)));
	CHECK(peers_def_encode(out, 10, &d) < 0);
	CHECK(peers_msg_cut(out, (size_t)n, &m) == n && peers_def_decode(m.data, m.len, &again) == 0);

	CHECK(peers_msg_cut(hap_upd, sizeof(hap_upd), &m) == (long)sizeof(hap_upd));
	CHECK(peers_upd_decode(m.type, m.data, m.len, &d, dict, &u, collect, &s) == 0);
	CHECK(u.has_id && u.id == 1 && !u.timed && u.key_len == 4 && u.key[3] == 4);
	CHECK(s.n == 3);
	CHECK(s.v[0].dt == 2 && s.v[0].kind == PEERS_V_INT && s.v[0].v[0] == 5);
	CHECK(s.v[1].dt == 10 && s.v[1].kind == PEERS_V_FRQ && s.v[1].v[0] == 1 &&
	      s.v[1].v[1] == 3 && s.v[1].v[2] == 0);
	CHECK(s.v[2].dt == 19 && s.v[2].kind == PEERS_V_DICT && !s.v[2].str);
	/* cut anywhere: refused, never read past the end */
	for (size_t l = 0; l < m.len; l++)
		CHECK(peers_upd_decode(m.type, m.data, l, &d, dict, &u, NULL, NULL) < 0);
}

static void test_dict_and_keys(void)
{
	struct peers_def d = { .key_type = PEERS_KT_STR, .key_len = 33,
	                       .data_types = 1u << 19 };
	static char dict[PEERS_DICT_SIZE][PEERS_DICT_STRMAX + 1];
	/* key "abc", server_key: entry 1 = "srv1", then entry 1 alone */
	const uint8_t first[] = { 0, 0, 0, 7, 3, 'a', 'b', 'c', 6, 1, 4, 's', 'r', 'v', '1' };
	const uint8_t again[] = { 3, 'a', 'b', 'c', 1, 1 };
	const uint8_t bad_id[] = { 3, 'a', 'b', 'c', 1, 0 };
	struct peers_upd u;
	struct seen s = { 0 };

	CHECK(peers_upd_decode(PEERS_STKT_UPDATE, first, sizeof(first), &d, dict, &u, collect,
	                       &s) == 0);
	CHECK(u.id == 7 && u.key_len == 3 && !memcmp(u.key, "abc", 3));
	CHECK(s.n == 1 && s.v[0].str && !strcmp(s.v[0].str, "srv1"));
	s.n = 0;
	CHECK(peers_upd_decode(PEERS_STKT_INCUPDATE, again, sizeof(again), &d, dict, &u, collect,
	                       &s) == 0);
	CHECK(!u.has_id && s.n == 1 && s.v[0].str && !strcmp(s.v[0].str, "srv1"));
	CHECK(peers_upd_decode(PEERS_STKT_INCUPDATE, bad_id, sizeof(bad_id), &d, dict, &u, NULL,
	                       NULL) < 0);
	/* timed update of an integer key (network order) */
	{
		struct peers_def di = { .key_type = PEERS_KT_SINT, .key_len = 4, .data_types = 1 };
		const uint8_t t[] = { 0, 0, 0, 9, 0, 0, 0x27, 0x10, 0, 0, 1, 0, 42 };

		s.n = 0;
		CHECK(peers_upd_decode(PEERS_STKT_UPDATE_TIMED, t, sizeof(t), &di, dict, &u, collect,
		                       &s) == 0);
		CHECK(u.timed && u.expire == 10000 && u.key_len == 4 && u.key[2] == 1);
		CHECK(s.n == 1 && s.v[0].dt == 0 && s.v[0].v[0] == 42);
	}
}

static void test_writer(void)
{
	uint8_t b[300];
	struct peers_wr w = { b, 0, sizeof(b), 0 };
	struct peers_msg m;
	size_t start = peers_wr_msg_begin(&w);

	for (int i = 0; i < 250; i++)
		peers_wr_byte(&w, (uint8_t)i);
	CHECK(peers_wr_msg_end(&w, start, PEERS_CLASS_STKT, PEERS_STKT_ACK) == 0);
	/* 250 needs a two-byte length */
	CHECK(w.len == 2 + 2 + 250);
	CHECK(peers_msg_cut(b, w.len, &m) == (long)w.len && m.len == 250 && m.data[249] == 249);
}

int main(void)
{
	test_varint();
	test_framing();
	test_haproxy_bytes();
	test_dict_and_keys();
	test_writer();
	return t_done("test_peers");
}
