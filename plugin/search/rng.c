/* The search's own PRNG: xoshiro256** (Blackman and Vigna) seeded through
 * splitmix64, so that a seed gives the same stream on every platform. */
#include "search/search_int.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void st_rng_seed(st_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t st_rng_next(st_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double st_rng_uniform(st_rng *r) { return (double)(st_rng_next(r) >> 11) * 0x1.0p-53; }

size_t st_rng_below(st_rng *r, size_t n)
{
	uint64_t bound = (uint64_t)n;
	uint64_t limit = UINT64_MAX - UINT64_MAX % bound;  /* reject the uneven tail */
	uint64_t x;
	do
		x = st_rng_next(r);
	while (x >= limit);
	return (size_t)(x % bound);
}

double st_rng_normal(st_rng *r)
{
	double u1 = st_rng_uniform(r), u2 = st_rng_uniform(r);
	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}
