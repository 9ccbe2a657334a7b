/* Non-cryptographic hashes with the exact definitions HAProxy uses for its
 * converters and its hash-based balancing (`hash-type`), so that results
 * match those of HAProxy bit for bit:
 *
 *   djb2:  h = 5381; h = h * 33 + c
 *   sdbm:  h = 0;    h = c + (h << 6) + (h << 16) - h
 *   wt6:   Willy Tarreau's 6-step mixing hash
 *   crc32: IEEE 802.3 (zlib's crc32)
 *   crc32c: Castagnoli (RFC 4960 appendix B)
 *   avalanche: Bob Jenkins' 6-shift full avalanche on 32 bits, times
 *          3221225473
 *   xxh32, xxh64, xxh3 (64-bit): Yann Collet's xxHash, from the published
 *   specification (XXH3 with the default secret).
 */
#ifndef SLUICE_EXPR_HASH_H
#define SLUICE_EXPR_HASH_H

#include <stddef.h>
#include <stdint.h>

uint32_t hash_djb2(const void *p, size_t len);
uint32_t hash_sdbm(const void *p, size_t len);
uint32_t hash_wt6(const void *p, size_t len);
uint32_t hash_crc32(const void *p, size_t len);
uint32_t hash_crc32c(const void *p, size_t len);
uint32_t hash_avalanche(uint32_t h);

uint32_t hash_xxh32(const void *p, size_t len, uint32_t seed);
uint64_t hash_xxh64(const void *p, size_t len, uint64_t seed);
uint64_t hash_xxh3_64(const void *p, size_t len, uint64_t seed);

#endif
