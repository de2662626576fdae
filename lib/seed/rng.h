/* seed/rng.h: an explicit, seedable random number generator.
 *
 * xoshiro256** seeded through splitmix64.  No global state: every user holds
 * its own generator, so runs are reproducible from a seed and threads never
 * share one.  Streams: seed_rng_init(r, seed, stream) gives independent
 * sequences for the same seed (one per environment, one per actor...).
 */
#ifndef SEED_RNG_H
#define SEED_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_rng {
	uint64_t s[4];
} seed_rng;

void seed_rng_init(seed_rng *r, uint64_t seed, uint64_t stream);
uint64_t seed_rng_u64(seed_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double seed_rng_double(seed_rng *r);
/* Uniform in [0, 1) with 24 random bits. */
float seed_rng_float(seed_rng *r);
/* Uniform integer in [0, n), n >= 1, without modulo bias. */
uint32_t seed_rng_below(seed_rng *r, uint32_t n);
/* Uniform in [lo, hi). */
double seed_rng_uniform(seed_rng *r, double lo, double hi);
/* Standard normal (Box-Muller). */
double seed_rng_normal(seed_rng *r);

#ifdef __cplusplus
}
#endif
#endif
