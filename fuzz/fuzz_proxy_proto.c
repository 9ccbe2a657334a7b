/* libFuzzer target: pp_parse() on arbitrary bytes.
 *
 * Checked on every input, beyond the sanitizers' own checks:
 * - the result is -1, 0, or a length within the input;
 * - the verdict is monotonic in the bytes received: the input minus its last
 *   byte gets "need more" if the input does, "invalid" makes every extension
 *   invalid, and a complete header stays complete with the same length;
 * - a complete header parses identically from exactly its own bytes;
 * - a header carrying addresses, rebuilt with pp_build_v1() and
 *   pp_build_v2() and parsed again, gives back the same addresses (after the
 *   builders' documented normalisation of IPv4-mapped IPv6), and the LOCAL
 *   header built for no addresses parses as local.
 */
#include <assert.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <sluice/net/proxy_proto.h>

static int is_v4ish(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ||
	       (ss->ss_family == AF_INET6 &&
	        IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)ss)->sin6_addr));
}

/* <in> as the builders carry it: IPv4 when <as4>, IPv6 (IPv4 mapped) otherwise. */
static void normalise(const struct sockaddr_storage *in, int as4, struct sockaddr_storage *out)
{
	const struct sockaddr_in *i4 = (const struct sockaddr_in *)in;
	const struct sockaddr_in6 *i6 = (const struct sockaddr_in6 *)in;
	struct sockaddr_in *o4 = (struct sockaddr_in *)out;
	struct sockaddr_in6 *o6 = (struct sockaddr_in6 *)out;

	memset(out, 0, sizeof(*out));
	if (as4) {
		o4->sin_family = AF_INET;
		if (in->ss_family == AF_INET) {
			o4->sin_addr = i4->sin_addr;
			o4->sin_port = i4->sin_port;
		} else {
			memcpy(&o4->sin_addr, i6->sin6_addr.s6_addr + 12, 4);
			o4->sin_port = i6->sin6_port;
		}
	} else {
		o6->sin6_family = AF_INET6;
		if (in->ss_family == AF_INET6) {
			o6->sin6_addr = i6->sin6_addr;
			o6->sin6_port = i6->sin6_port;
		} else {
			o6->sin6_addr.s6_addr[10] = o6->sin6_addr.s6_addr[11] = 0xff;
			memcpy(o6->sin6_addr.s6_addr + 12, &i4->sin_addr, 4);
			o6->sin6_port = i4->sin_port;
		}
	}
}

static void check_rebuild_inet(const struct pp_info *pi)
{
	struct sockaddr_storage ws, wd;
	struct pp_info again;
	char line[PP_V1_MAX];
	uint8_t bin[64];
	int as4 = is_v4ish(&pi->src) && is_v4ish(&pi->dst);
	size_t n;

	normalise(&pi->src, as4, &ws);
	normalise(&pi->dst, as4, &wd);

	n = pp_build_v1(line, sizeof(line), &pi->src, &pi->dst);
	assert(n > 0);
	assert(pp_parse((const uint8_t *)line, n, &again) == (int)n);
	assert(again.version == 1 && !again.local);
	assert(memcmp(&again.src, &ws, sizeof(ws)) == 0);
	assert(memcmp(&again.dst, &wd, sizeof(wd)) == 0);

	n = pp_build_v2(bin, sizeof(bin), &pi->src, &pi->dst);
	assert(n > 0);
	assert(pp_parse(bin, n, &again) == (int)n);
	assert(again.version == 2 && !again.local);
	assert(memcmp(&again.src, &ws, sizeof(ws)) == 0);
	assert(memcmp(&again.dst, &wd, sizeof(wd)) == 0);
}

static void check_rebuild_unix(const struct pp_info *pi)
{
	struct pp_info again;
	uint8_t bin[300];
	char line[PP_V1_MAX];
	size_t n;

	n = pp_build_v2(bin, sizeof(bin), &pi->src, &pi->dst);
	assert(n > 0);
	assert(pp_parse(bin, n, &again) == (int)n);
	assert(!again.local && again.src.ss_family == AF_UNIX && again.dst.ss_family == AF_UNIX);
	assert(memcmp(&again.src, &pi->src, sizeof(struct sockaddr_un)) == 0);
	assert(memcmp(&again.dst, &pi->dst, sizeof(struct sockaddr_un)) == 0);

	n = pp_build_v1(line, sizeof(line), &pi->src, &pi->dst);
	assert(n > 0);
	assert(pp_parse((const uint8_t *)line, n, &again) == (int)n && again.local);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pp_info pi, pj;
	uint8_t bin[16];
	int rc, shorter;

	rc = pp_parse(data, size, &pi);
	assert(rc >= -1 && (rc <= 0 || (size_t)rc <= size));

	if (size > 0) {
		shorter = pp_parse(data, size - 1, &pj);
		if (rc == 0)
			assert(shorter == 0);
		if (shorter == -1)
			assert(rc == -1);
		if (shorter > 0)
			assert(rc == shorter);
	}
	if (rc <= 0)
		return 0;

	assert(pp_parse(data, (size_t)rc, &pj) == rc);
	assert(memcmp(&pi, &pj, sizeof(pi)) == 0);
	assert(pi.version == 1 || pi.version == 2);
	assert(pi.tlv_off + pi.tlv_len <= (size_t)rc);

	if (pi.local) {
		assert(pi.src.ss_family == AF_UNSPEC && pi.dst.ss_family == AF_UNSPEC);
		assert(pp_parse(bin, pp_build_v2(bin, sizeof(bin), NULL, NULL), &pj) == 16 && pj.local);
	} else if (pi.src.ss_family == AF_UNIX) {
		check_rebuild_unix(&pi);
	} else {
		assert(pi.src.ss_family == pi.dst.ss_family);
		assert(pi.src.ss_family == AF_INET || pi.src.ss_family == AF_INET6);
		check_rebuild_inet(&pi);
	}
	return 0;
}
