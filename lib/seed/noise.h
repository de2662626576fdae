/* seed/noise.h: the shared noise table of neuroevolution.
 *
 * OpenAI's evolution strategies and Uber's deep GA never send weights or
 * perturbations between processes: every process builds the same large
 * table of N(0, 1) floats, and a perturbation is named by a key, the
 * offset of its slice in the table.  A table is identified by (seed, size)
 * alone: two tables with the same pair are the same floats, bit for bit,
 * on every machine.
 *
 * Element i is the i-th normal of a seed_rng seeded
 * seed_rng_init(seed, SEED_NOISE_STREAM), drawn by Marsaglia's polar
 * method: u = 2 U1 - 1, v = 2 U2 - 1 from two seed_rng_double draws,
 * rejected unless 0 < s = u^2 + v^2 < 1, then u f and v f (in that order)
 * with f = sqrt(-2 ln(s) / s), rounded to float.  The logarithm is computed
 * here in plain IEEE double arithmetic (frexp, then ln(m) = 2 atanh((m - 1)
 * / (m + 1)) as a fixed series), not by libm, whose last bit may differ
 * between C libraries; sqrt is correctly rounded by IEEE 754.  So the table
 * depends only on IEEE doubles and the build's -ffp-contract=off.
 *
 * Memory: 4 * size bytes (2^24 floats, 64 MiB; OpenAI and Uber used 2^28,
 * 1 GiB).  Building it draws about 30 million normals a second on one core.
 *
 * Keys: seed_noise_index hashes a key (splitmix64's finaliser of key and
 * the table's seed) onto an offset in [0, size - len], so that any 64-bit
 * key names a slice of any length that fits; distinct keys give offsets
 * spread evenly over the table (slices overlap, as in OpenAI's and Uber's
 * tables: a table much larger than a slice keeps them nearly independent).
 *
 * A table is read-only once built: threads may share it.
 */
#ifndef SEED_NOISE_H
#define SEED_NOISE_H

#include <stdint.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The seed_rng stream the table is drawn from. */
#define SEED_NOISE_STREAM UINT64_C(0x6e6f697365)

/* The largest table: offsets and sizes stay within int32 counts of floats. */
#define SEED_NOISE_MAX_SIZE INT64_C(2147483647)

typedef struct seed_noise seed_noise;

/* Build the table: size floats, element i the i-th draw of a generator seeded
 * seed_rng_init(seed, SEED_NOISE_STREAM) (the polar method above,
 * deterministic on every machine). size in [1, 2^31 - 1].  Errors: -EINVAL
 * (size out of range, err says so); *out is written only on success.
 * Allocation failure aborts (seed_oom). */
int seed_noise_new(seed_noise **out, uint64_t seed, int64_t size, seed_err *err);
/* Free *n (NULL is fine) and set *n to NULL. */
void seed_noise_free(seed_noise **n);
/* The size floats of the table (64-byte aligned, owned by n). */
const float *seed_noise_data(const seed_noise *n);
/* The table's identity. */
int64_t seed_noise_size(const seed_noise *n);
uint64_t seed_noise_seed(const seed_noise *n);
/* The offset in [0, size - len] where the slice of len floats of key starts (a hash of key,
 * deterministic). Errors: -EINVAL when len > size (or len < 1). */
int64_t seed_noise_index(const seed_noise *n, uint64_t key, int64_t len);

#ifdef __cplusplus
}
#endif
#endif
