/* SHA-256 (FIPS 180-4), incremental.  Internal to the library; the public
 * one-shot form is st_cache_sha256_hex() in sasstune/cache.h. */
#ifndef ST_CACHE_SHA256_H
#define ST_CACHE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define ST_SHA256_SIZE 32

typedef struct st_sha256 {
	uint32_t h[8];     /* intermediate hash value H(i) */
	uint64_t bits;     /* message length so far, in bits */
	uint8_t block[64]; /* pending partial block */
	size_t fill;       /* bytes used in block */
} st_sha256;

void st_sha256_init(st_sha256 *s);
void st_sha256_update(st_sha256 *s, const void *data, size_t size);
void st_sha256_final(st_sha256 *s, uint8_t digest[ST_SHA256_SIZE]);

/* Lowercase hex of a digest: 64 characters and a NUL. */
void st_sha256_hex(const uint8_t digest[ST_SHA256_SIZE], char out[65]);

#endif
