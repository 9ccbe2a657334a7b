/* libFuzzer target: the peers protocol decoder (src/proxy/peers_proto.c)
 * on a stream of arbitrary messages, as a session reads them: framing,
 * table definitions (each one becomes the current table), updates decoded
 * against the current definition with a server_key dictionary.
 *
 * Checked beyond the sanitizers: a message cut is within the input; a
 * definition that decodes encodes to bytes that decode to the same fields;
 * an update's key lies within its message; every value names a data type
 * of the definition.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include <sluice/proxy/peers.h>

static char dict[PEERS_DICT_SIZE][PEERS_DICT_STRMAX + 1];

static int check_value(void *arg, const struct peers_val *v)
{
	const struct peers_def *d = arg;

	assert(v->dt >= 0 && v->dt < PEERS_NB_DT);
	assert(d->data_types & (1ull << v->dt));
	assert(!v->str || strlen(v->str) == v->str_len);
	return 0;
}

static void check_def(const struct peers_def *d)
{
	static uint8_t out[PEERS_MAX_MSG + 16];
	struct peers_def again;
	struct peers_msg m;
	int n = peers_def_encode(out, sizeof(out), d);

	if (n < 0)
		return;
	assert(peers_msg_cut(out, (size_t)n, &m) == n);
	assert(peers_def_decode(m.data, m.len, &again) == 0);
	assert(again.id == d->id && again.name_len == d->name_len);
	assert(!memcmp(again.name, d->name, d->name_len));
	assert(again.key_type == d->key_type && again.key_len == d->key_len);
	assert(again.data_types == d->data_types && again.expire == d->expire);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peers_def def;
	int have_def = 0;
	size_t pos = 0;

	memset(dict, 0, sizeof(dict));
	while (pos < size) {
		struct peers_msg m;
		struct peers_upd u;
		long n = peers_msg_cut(data + pos, size - pos, &m);

		if (n <= 0)
			break;
		assert((size_t)n <= size - pos);
		pos += (size_t)n;
		if (m.cls != PEERS_CLASS_STKT || m.type < 128)
			continue;
		if (m.type == PEERS_STKT_DEFINE) {
			have_def = peers_def_decode(m.data, m.len, &def) == 0;
			if (have_def)
				check_def(&def);
			continue;
		}
		if (!have_def)
			continue;
		if (peers_upd_decode(m.type, m.data, m.len, &def, dict, &u, check_value, &def) == 0)
			assert(u.key >= m.data && u.key + u.key_len <= m.data + m.len);
	}
	return 0;
}
