/* rng.c: xoshiro256** (Blackman and Vigna) seeded by splitmix64. */
#include "seed/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void seed_rng_init(seed_rng *r, uint64_t seed, uint64_t stream)
{
	/* Mix the stream into the seed so (seed, stream) pairs are independent. */
	uint64_t x = seed;
	uint64_t y = splitmix64(&x) ^ (stream * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&y);
}

uint64_t seed_rng_u64(seed_rng *r)
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

double seed_rng_double(seed_rng *r)
{
	return (double)(seed_rng_u64(r) >> 11) * 0x1.0p-53;
}

float seed_rng_float(seed_rng *r)
{
	return (float)(seed_rng_u64(r) >> 40) * 0x1.0p-24f;
}

uint32_t seed_rng_below(seed_rng *r, uint32_t n)
{
	/* Lemire's multiply-shift with rejection of the biased low range. */
	uint64_t m = (uint64_t)(uint32_t)(seed_rng_u64(r) >> 32) * n;
	uint32_t lo = (uint32_t)m;
	if (lo < n) {
		uint32_t threshold = (uint32_t)-n % n;
		while (lo < threshold) {
			m = (uint64_t)(uint32_t)(seed_rng_u64(r) >> 32) * n;
			lo = (uint32_t)m;
		}
	}
	return (uint32_t)(m >> 32);
}

double seed_rng_uniform(seed_rng *r, double lo, double hi)
{
	double x = lo + (hi - lo) * seed_rng_double(r);
	/* Rounding can carry x up to hi itself (u = 1 - 2^-53 with lo = 2,
	 * hi = 3 gives 3): keep the promise of [lo, hi). */
	return x < hi ? x : nextafter(hi, lo);
}

double seed_rng_normal(seed_rng *r)
{
	double u1 = 1.0 - seed_rng_double(r); /* (0, 1]: log is finite */
	double u2 = seed_rng_double(r);
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
