/* The search's own PRNG: xoshiro256** (Blackman and Vigna) seeded through
 * splitmix64, so that a seed gives the same stream on every platform. */
#include "search/search_int.h"
#include "util/util.h"

#include <math.h>

void st_rng_seed(st_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = st_splitmix64(&x);
}

uint64_t st_rng_next(st_rng *r) { return st_xoshiro256ss(r->s); }

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
