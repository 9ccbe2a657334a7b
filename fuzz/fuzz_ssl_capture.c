/* libFuzzer target: ssl_capture_parse(), the ClientHello reader behind
 * the ssl_fc_cipherlist_* / extlist / eclist / ecformats fetches, on the
 * raw input (a handshake message as the TLS layer hands it over), with a
 * capture room taken from the first input byte.
 *
 * Checked on every input, beyond the sanitizers' own checks:
 * - the result is 0 or -1;
 * - an accepted message keeps no more list bytes than the room, and an
 *   even number of cipher, extension and group bytes when the room is even;
 * - the GREASE filter never grows a list.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/net/ssl_capture.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t room;
	struct ssl_capture *cap;
	unsigned char *msg, out[65536];
	int rc;

	if (!size)
		return 0;
	room = (size_t)data[0] * 2;
	msg = malloc(size - 1 ? size - 1 : 1);
	memcpy(msg, data + 1, size - 1);
	cap = malloc(sizeof(*cap) + room);
	rc = ssl_capture_parse(msg, size - 1, cap, room);
	assert(rc == 0 || rc == -1);
	if (rc == 0) {
		size_t total = (size_t)cap->ciphers_len + cap->ext_len + cap->groups_len +
		               cap->formats_len;

		assert(total <= room);
		assert(!(cap->ciphers_len & 1) && !(cap->ext_len & 1));
		assert(ssl_capture_no_grease(ssl_capture_ciphers(cap), cap->ciphers_len, out) <=
		       cap->ciphers_len);
		assert(ssl_capture_no_grease(ssl_capture_groups(cap), cap->groups_len, out) <=
		       cap->groups_len);
	}
	free(cap);
	free(msg);
	return 0;
}
