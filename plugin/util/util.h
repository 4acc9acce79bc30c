/* Internal helpers shared by the library's modules (not public API). */
#ifndef ST_UTIL_H
#define ST_UTIL_H

#include "sasstune/error.h"

#include <stddef.h>
#include <stdint.h>

/* Read a whole file into a malloc'ed buffer (NUL-terminated for text use;
 * *size excludes the NUL). */
st_status st_read_file(const char *path, uint8_t **data, size_t *size, st_error *err);

/* Write a file atomically: a temporary file in the same folder, fsync, rename.
 * Readers see the old content or the new one, never a mix. */
st_status st_write_file_atomic(const char *path, const void *data, size_t size, st_error *err);

/* A growable byte buffer. */
typedef struct st_buf {
	uint8_t *data;
	size_t len, cap;
} st_buf;

st_status st_buf_append(st_buf *b, const void *data, size_t n);
st_status st_buf_printf(st_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void st_buf_free(st_buf *b);

/* Whether environment variable `name` is set to anything but "" or "0" (a switch such as
 * SASSTUNE_CHECK_REFERENCE, read by the pass's settings and the CLI, never by the runtime). */
int st_env_on(const char *name);

/* Little-endian loads and stores. */
static inline uint32_t st_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t st_le64(const uint8_t *p)
{
	return (uint64_t)st_le32(p) | (uint64_t)st_le32(p + 4) << 32;
}
static inline void st_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void st_put_le64(uint8_t *p, uint64_t v)
{
	st_put_le32(p, (uint32_t)v);
	st_put_le32(p + 4, (uint32_t)(v >> 32));
}

/* splitmix64: advance *x and return its next output (seeding generators, mixing bits). */
static inline uint64_t st_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* xoshiro256** (Blackman and Vigna): the next output of state s (not all zero). */
static inline uint64_t st_xoshiro256ss(uint64_t s[4])
{
#define ST_ROTL_(x, k) ((x) << (k) | (x) >> (64 - (k)))
	uint64_t out = ST_ROTL_(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = ST_ROTL_(s[3], 45);
#undef ST_ROTL_
	return out;
}

#endif
