/* noise.c: the shared noise table of neuroevolution (seed/noise.h).
 *
 * The table is drawn once, by one thread, with Marsaglia's polar method; its
 * logarithm is ours (plain double arithmetic) so that the floats are the same
 * on every machine, whatever libm the process links.
 */
#include "seed/noise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/rng.h"

struct seed_noise {
	uint64_t seed;
	int64_t size;
	float *data; /* (size) N(0, 1), 64-byte aligned */
};

/* ln(s) for s in (0, 1), in IEEE double arithmetic only: s = m 2^e with m in
 * [sqrt(1/2), sqrt(2)), ln(m) = 2 atanh(z) = 2 (z + z^3/3 + ... + z^23/23)
 * with z = (m - 1) / (m + 1), |z| < 0.172, so the first term left out is
 * below 2^-57 of the result.  frexp and the arithmetic are exact or
 * correctly rounded by IEEE 754; with -ffp-contract=off nothing is fused. */
static double noise_log(double s)
{
	int e;
	double m = frexp(s, &e); /* [0.5, 1) */
	if (m < 0.70710678118654752440) {
		m *= 2.0;
		e -= 1;
	}
	double z = (m - 1.0) / (m + 1.0), z2 = z * z;
	static const double c[] = {1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
	                           1.0 / 11, 1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3,  1.0};
	double p = 0.0;
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		p = p * z2 + c[i];
	return (double)e * 0.69314718055994530942 + 2.0 * z * p;
}

int seed_noise_new(seed_noise **out, uint64_t seed, int64_t size, seed_err *err)
{
	if (size < 1 || size > SEED_NOISE_MAX_SIZE)
		return seed_err_set(err, -EINVAL, "noise table: size %lld is not in [1, %lld]",
		                    (long long)size, (long long)SEED_NOISE_MAX_SIZE);
	seed_noise *n = seed_xcalloc(1, sizeof *n);
	n->data = seed_xaligned((size_t)size * sizeof(float));
	n->seed = seed;
	n->size = size;
	seed_rng r;
	seed_rng_init(&r, seed, SEED_NOISE_STREAM);
	float *d = n->data;
	int64_t i = 0;
	while (i < size) {
		double u = 2.0 * seed_rng_double(&r) - 1.0;
		double v = 2.0 * seed_rng_double(&r) - 1.0;
		double s = u * u + v * v;
		if (s >= 1.0 || s == 0.0)
			continue;
		double f = sqrt(-2.0 * noise_log(s) / s);
		d[i++] = (float)(u * f);
		if (i < size)
			d[i++] = (float)(v * f);
	}
	*out = n;
	return 0;
}

void seed_noise_free(seed_noise **n)
{
	if (!n || !*n)
		return;
	free((*n)->data);
	free(*n);
	*n = NULL;
}

const float *seed_noise_data(const seed_noise *n)
{
	return n->data;
}

int64_t seed_noise_size(const seed_noise *n)
{
	return n->size;
}

uint64_t seed_noise_seed(const seed_noise *n)
{
	return n->seed;
}

int64_t seed_noise_index(const seed_noise *n, uint64_t key, int64_t len)
{
	if (len < 1 || len > n->size)
		return -EINVAL;
	/* splitmix64's finaliser of the key mixed with the table's seed. */
	uint64_t z = key ^ (n->seed * 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	/* size - len + 1 <= 2^31: the modulo's bias is below 2^-33. */
	return (int64_t)(z % (uint64_t)(n->size - len + 1));
}
