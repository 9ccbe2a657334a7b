/* Non-cryptographic hashes (see hash.h). Pure functions, no state.
 *
 * xxHash (XXH32, XXH64, XXH3-64) is written from the algorithm as published
 * in the xxHash specification; all reads are little-endian whatever the
 * host. The 192-byte default secret of XXH3 is the specification's constant.
 */
#include <string.h>
#include <zlib.h>
#include <sluice/expr/hash.h>

uint32_t hash_djb2(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint32_t h = 5381;

	while (len--)
		h = h * 33 + *s++;
	return h;
}

uint32_t hash_sdbm(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint32_t h = 0;

	while (len--)
		h = *s++ + (h << 6) + (h << 16) - h;
	return h;
}

static inline uint32_t rotl32(uint32_t v, unsigned int n)
{
	n &= 31;
	return n ? (v << n) | (v >> (32 - n)) : v;
}

static inline uint64_t rotl64(uint64_t v, unsigned int n)
{
	n &= 63;
	return n ? (v << n) | (v >> (64 - n)) : v;
}

/* WT6: two 32-bit states folded with every byte, then rotated by amounts
 * that depend on the data itself. */
uint32_t hash_wt6(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint32_t h0 = 0xa53c965au, h1 = 0x5ca6953au;
	unsigned int r0 = 6, r1 = 18;

	while (len--) {
		uint32_t c = *s++, mix;

		h0 = ~(h0 ^ c);
		h1 = ~(h1 + c);
		mix = rotl32(h1, r0);
		h1 = rotl32(h0, r1);
		h0 = mix;
		mix = ((h0 >> 16) ^ h1) & 0xffff;
		r0 = mix & 0x1f;
		r1 = mix >> 11;
	}
	return h0 ^ h1;
}

uint32_t hash_crc32(const void *p, size_t len)
{
	uLong c = crc32(0L, Z_NULL, 0);
	const Bytef *b = p;

	while (len > 0) {
		uInt n = len > 0x40000000u ? 0x40000000u : (uInt)len;

		c = crc32(c, b, n);
		b += n;
		len -= n;
	}
	return (uint32_t)c;
}

uint32_t hash_crc32c(const void *p, size_t len)
{
	static uint32_t table[256];
	static int ready;
	const unsigned char *s = p;
	uint32_t c = 0xffffffffu;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		/* idempotent: concurrent first calls compute the same table */
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t v = i;

			for (int k = 0; k < 8; k++)
				v = (v & 1) ? (v >> 1) ^ 0x82f63b78u : v >> 1;
			table[i] = v;
		}
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	while (len--)
		c = table[(c ^ *s++) & 0xff] ^ (c >> 8);
	return ~c;
}

/* Bob Jenkins' full avalanche of a 32-bit value, then a multiplication by
 * a large prime close to 3/4 of 2^32, as HAProxy spreads its hashes. */
uint32_t hash_avalanche(uint32_t a)
{
	a = (a + 0x7ed55d16u) + (a << 12);
	a = (a ^ 0xc761c23cu) ^ (a >> 19);
	a = (a + 0x165667b1u) + (a << 5);
	a = (a + 0xd3a2646cu) ^ (a << 9);
	a = (a + 0xfd7046c5u) + (a << 3);
	a = (a ^ 0xb55a4f09u) ^ (a >> 16);
	return a * 3221225473u;
}

/* ------------------------------------------------------------------ xxHash */

#define P32_1 0x9E3779B1u
#define P32_2 0x85EBCA77u
#define P32_3 0xC2B2AE3Du
#define P32_4 0x27D4EB2Fu
#define P32_5 0x165667B1u
#define P64_1 0x9E3779B185EBCA87ull
#define P64_2 0xC2B2AE3D27D4EB4Full
#define P64_3 0x165667B19E3779F9ull
#define P64_4 0x85EBCA77C2B2AE63ull
#define P64_5 0x27D4EB2F165667C5ull
#define PMX_1 0x165667919E3779F9ull
#define PMX_2 0x9FB21C651E98DF25ull

static inline uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t rd64(const unsigned char *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static inline void wr64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

static inline uint32_t xxh32_round(uint32_t acc, uint32_t in)
{
	return rotl32(acc + in * P32_2, 13) * P32_1;
}

uint32_t hash_xxh32(const void *data, size_t len, uint32_t seed)
{
	const unsigned char *p = data, *end = p + len;
	uint32_t h;

	if (len >= 16) {
		uint32_t v[4] = { seed + P32_1 + P32_2, seed + P32_2, seed, seed - P32_1 };

		for (; end - p >= 16; p += 16)
			for (int i = 0; i < 4; i++)
				v[i] = xxh32_round(v[i], rd32(p + 4 * i));
		h = rotl32(v[0], 1) + rotl32(v[1], 7) + rotl32(v[2], 12) + rotl32(v[3], 18);
	} else {
		h = seed + P32_5;
	}
	h += (uint32_t)len;
	for (; end - p >= 4; p += 4)
		h = rotl32(h + rd32(p) * P32_3, 17) * P32_4;
	for (; p < end; p++)
		h = rotl32(h + *p * P32_5, 11) * P32_1;
	h ^= h >> 15;
	h *= P32_2;
	h ^= h >> 13;
	h *= P32_3;
	h ^= h >> 16;
	return h;
}

static inline uint64_t xxh64_round(uint64_t acc, uint64_t in)
{
	return rotl64(acc + in * P64_2, 31) * P64_1;
}

static inline uint64_t xxh64_merge(uint64_t h, uint64_t v)
{
	return (h ^ xxh64_round(0, v)) * P64_1 + P64_4;
}

static inline uint64_t xxh64_avalanche(uint64_t h)
{
	h ^= h >> 33;
	h *= P64_2;
	h ^= h >> 29;
	h *= P64_3;
	h ^= h >> 32;
	return h;
}

uint64_t hash_xxh64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data, *end = p + len;
	uint64_t h;

	if (len >= 32) {
		uint64_t v[4] = { seed + P64_1 + P64_2, seed + P64_2, seed, seed - P64_1 };

		for (; end - p >= 32; p += 32)
			for (int i = 0; i < 4; i++)
				v[i] = xxh64_round(v[i], rd64(p + 8 * i));
		h = rotl64(v[0], 1) + rotl64(v[1], 7) + rotl64(v[2], 12) + rotl64(v[3], 18);
		for (int i = 0; i < 4; i++)
			h = xxh64_merge(h, v[i]);
	} else {
		h = seed + P64_5;
	}
	h += (uint64_t)len;
	for (; end - p >= 8; p += 8)
		h = rotl64(h ^ xxh64_round(0, rd64(p)), 27) * P64_1 + P64_4;
	if (end - p >= 4) {
		h = rotl64(h ^ (uint64_t)rd32(p) * P64_1, 23) * P64_2 + P64_3;
		p += 4;
	}
	for (; p < end; p++)
		h = rotl64(h ^ *p * P64_5, 11) * P64_1;
	return xxh64_avalanche(h);
}

/* XXH3 */

#define XXH3_SECRET_SIZE 192
#define XXH3_STRIPE_LEN 64
#define XXH3_CONSUME_RATE 8

static const unsigned char xxh3_secret[XXH3_SECRET_SIZE] = {
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

static inline uint64_t mul128_fold64(uint64_t a, uint64_t b)
{
	unsigned __int128 r = (unsigned __int128)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t xxh3_avalanche(uint64_t h)
{
	h ^= h >> 37;
	h *= PMX_1;
	h ^= h >> 32;
	return h;
}

static inline uint64_t xxh3_rrmxmx(uint64_t h, uint64_t len)
{
	h ^= rotl64(h, 49) ^ rotl64(h, 24);
	h *= PMX_2;
	h ^= (h >> 35) + len;
	h *= PMX_2;
	h ^= h >> 28;
	return h;
}

static inline uint64_t xxh3_mix16(const unsigned char *in, const unsigned char *sec,
                                  uint64_t seed)
{
	return mul128_fold64(rd64(in) ^ (rd64(sec) + seed), rd64(in + 8) ^ (rd64(sec + 8) - seed));
}

static uint64_t xxh3_0to16(const unsigned char *in, size_t len, const unsigned char *sec,
                           uint64_t seed)
{
	if (len > 8) {
		uint64_t lo = rd64(in) ^ ((rd64(sec + 24) ^ rd64(sec + 32)) + seed);
		uint64_t hi = rd64(in + len - 8) ^ ((rd64(sec + 40) ^ rd64(sec + 48)) - seed);
		uint64_t acc = len + __builtin_bswap64(lo) + hi + mul128_fold64(lo, hi);

		return xxh3_avalanche(acc);
	}
	if (len >= 4) {
		uint64_t s = seed ^ ((uint64_t)__builtin_bswap32((uint32_t)seed) << 32);
		uint64_t in64 = rd32(in + len - 4) + ((uint64_t)rd32(in) << 32);
		uint64_t flip = (rd64(sec + 8) ^ rd64(sec + 16)) - s;

		return xxh3_rrmxmx(in64 ^ flip, len);
	}
	if (len) {
		uint32_t comb = ((uint32_t)in[0] << 16) | ((uint32_t)in[len >> 1] << 24) |
		                (uint32_t)in[len - 1] | ((uint32_t)len << 8);
		uint64_t flip = (uint64_t)(rd32(sec) ^ rd32(sec + 4)) + seed;

		return xxh64_avalanche((uint64_t)comb ^ flip);
	}
	return xxh64_avalanche(seed ^ (rd64(sec + 56) ^ rd64(sec + 64)));
}

static uint64_t xxh3_17to128(const unsigned char *in, size_t len, const unsigned char *sec,
                             uint64_t seed)
{
	uint64_t acc = len * P64_1;

	if (len > 32) {
		if (len > 64) {
			if (len > 96) {
				acc += xxh3_mix16(in + 48, sec + 96, seed);
				acc += xxh3_mix16(in + len - 64, sec + 112, seed);
			}
			acc += xxh3_mix16(in + 32, sec + 64, seed);
			acc += xxh3_mix16(in + len - 48, sec + 80, seed);
		}
		acc += xxh3_mix16(in + 16, sec + 32, seed);
		acc += xxh3_mix16(in + len - 32, sec + 48, seed);
	}
	acc += xxh3_mix16(in, sec, seed);
	acc += xxh3_mix16(in + len - 16, sec + 16, seed);
	return xxh3_avalanche(acc);
}

static uint64_t xxh3_129to240(const unsigned char *in, size_t len, const unsigned char *sec,
                              uint64_t seed)
{
	uint64_t acc = len * P64_1;
	size_t rounds = len / 16;

	for (size_t i = 0; i < 8; i++)
		acc += xxh3_mix16(in + 16 * i, sec + 16 * i, seed);
	acc = xxh3_avalanche(acc);
	for (size_t i = 8; i < rounds; i++)
		acc += xxh3_mix16(in + 16 * i, sec + 16 * (i - 8) + 3, seed);
	acc += xxh3_mix16(in + len - 16, sec + 136 - 17, seed);
	return xxh3_avalanche(acc);
}

static void xxh3_accumulate512(uint64_t *acc, const unsigned char *in, const unsigned char *sec)
{
	for (int i = 0; i < 8; i++) {
		uint64_t v = rd64(in + 8 * i);
		uint64_t k = v ^ rd64(sec + 8 * i);

		acc[i ^ 1] += v;
		acc[i] += (uint64_t)(uint32_t)k * (k >> 32);
	}
}

static void xxh3_scramble(uint64_t *acc, const unsigned char *sec)
{
	for (int i = 0; i < 8; i++) {
		uint64_t a = acc[i];

		a ^= a >> 47;
		a ^= rd64(sec + 8 * i);
		acc[i] = a * P32_1;
	}
}

static uint64_t xxh3_long(const unsigned char *in, size_t len, const unsigned char *sec)
{
	uint64_t acc[8] = { P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1 };
	const size_t stripes_per_block = (XXH3_SECRET_SIZE - XXH3_STRIPE_LEN) / XXH3_CONSUME_RATE;
	const size_t block_len = XXH3_STRIPE_LEN * stripes_per_block;
	size_t nb_blocks = (len - 1) / block_len, stripes;
	uint64_t h;

	for (size_t n = 0; n < nb_blocks; n++) {
		for (size_t s = 0; s < stripes_per_block; s++)
			xxh3_accumulate512(acc, in + n * block_len + s * XXH3_STRIPE_LEN,
			                   sec + s * XXH3_CONSUME_RATE);
		xxh3_scramble(acc, sec + XXH3_SECRET_SIZE - XXH3_STRIPE_LEN);
	}
	stripes = ((len - 1) - block_len * nb_blocks) / XXH3_STRIPE_LEN;
	for (size_t s = 0; s < stripes; s++)
		xxh3_accumulate512(acc, in + nb_blocks * block_len + s * XXH3_STRIPE_LEN,
		                   sec + s * XXH3_CONSUME_RATE);
	xxh3_accumulate512(acc, in + len - XXH3_STRIPE_LEN,
	                   sec + XXH3_SECRET_SIZE - XXH3_STRIPE_LEN - 7);
	h = len * P64_1;
	for (int i = 0; i < 4; i++)
		h += mul128_fold64(acc[2 * i] ^ rd64(sec + 11 + 16 * i),
		                   acc[2 * i + 1] ^ rd64(sec + 11 + 16 * i + 8));
	return xxh3_avalanche(h);
}

uint64_t hash_xxh3_64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *in = data;
	unsigned char custom[XXH3_SECRET_SIZE];

	if (len <= 16)
		return xxh3_0to16(in, len, xxh3_secret, seed);
	if (len <= 128)
		return xxh3_17to128(in, len, xxh3_secret, seed);
	if (len <= 240)
		return xxh3_129to240(in, len, xxh3_secret, seed);
	if (!seed)
		return xxh3_long(in, len, xxh3_secret);
	/* a seeded long input uses a secret derived from the seed */
	for (int i = 0; i < XXH3_SECRET_SIZE / 16; i++) {
		wr64(custom + 16 * i, rd64(xxh3_secret + 16 * i) + seed);
		wr64(custom + 16 * i + 8, rd64(xxh3_secret + 16 * i + 8) - seed);
	}
	return xxh3_long(in, len, custom);
}
