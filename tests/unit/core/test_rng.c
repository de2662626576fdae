/* tests/unit/core/test_rng.c: seed_rng against known answers of the published algorithms.
 *
 * Golden values come from tests/golden/rng_ref.py (tests/golden/rng_golden.h), plain
 * Python integers written from Blackman and Vigna's xoshiro256** and from
 * splitmix64, checked there against the published first outputs of both.
 * Doubles, floats, uniforms and below() are exact; normals go through libm's
 * log and cos and are compared to a tolerance.  Stream independence is
 * checked by statistics over fixed seeds, so those cases are deterministic
 * too: a bound either holds for these seeds or it does not.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rng_golden.h"
#include "seed/rng.h"
#include "tap.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The engine alone, from states set by hand (the state is public data). */
static void t_published_outputs(void)
{
	seed_rng r = {{1, 2, 3, 4}};
	for (size_t i = 0; i < LEN(golden_xoshiro_1234); i++) {
		uint64_t got = seed_rng_u64(&r);
		CHECK_MSG(got == golden_xoshiro_1234[i], "{1,2,3,4} output %zu: %#llx", i,
		          (unsigned long long)got);
	}
	seed_rng z = {{0, 0, 0, 1}};
	for (size_t i = 0; i < LEN(golden_xoshiro_0001); i++) {
		uint64_t got = seed_rng_u64(&z);
		CHECK_MSG(got == golden_xoshiro_0001[i], "{0,0,0,1} output %zu: %#llx", i,
		          (unsigned long long)got);
	}
}

/* seed_rng_init: the state of each (seed, stream) pair and what follows. */
static void t_seeding(void)
{
	for (size_t k = 0; k < LEN(golden_seedings); k++) {
		const struct golden_seeding *g = &golden_seedings[k];
		seed_rng r;
		seed_rng_init(&r, g->seed, g->stream);
		CHECK_MSG(memcmp(r.s, g->state, sizeof r.s) == 0, "seed %#llx stream %#llx: state",
		          (unsigned long long)g->seed, (unsigned long long)g->stream);
		for (int i = 0; i < GOLDEN_NOUT; i++) {
			uint64_t got = seed_rng_u64(&r);
			CHECK_MSG(got == g->out[i], "seed %#llx stream %#llx output %d: %#llx",
			          (unsigned long long)g->seed, (unsigned long long)g->stream, i,
			          (unsigned long long)got);
		}
	}
}

static void t_double_float_uniform(void)
{
	seed_rng r;
	seed_rng_init(&r, 7, 3);
	for (int i = 0; i < GOLDEN_NDRAW; i++) {
		double d = seed_rng_double(&r);
		CHECK_MSG(d == golden_double[i], "double %d: %a, want %a", i, d, golden_double[i]);
		CHECK(d >= 0.0 && d < 1.0);
	}
	for (int i = 0; i < GOLDEN_NDRAW; i++) {
		float f = seed_rng_float(&r);
		CHECK_MSG(f == golden_float[i], "float %d: %a, want %a", i, (double)f,
		          (double)golden_float[i]);
		CHECK(f >= 0.0f && f < 1.0f);
	}
	for (int i = 0; i < GOLDEN_NDRAW; i++) {
		double u = seed_rng_uniform(&r, -2.5, 4.0);
		CHECK_MSG(u == golden_uniform[i], "uniform %d: %a, want %a", i, u, golden_uniform[i]);
		CHECK(u >= -2.5 && u < 4.0);
	}
	/* One output per draw, no more. */
	CHECK(seed_rng_u64(&r) == golden_after_draws);
}

/* The extremes of the conversions, from states that give them: all zero
 * bits are exactly 0, all one bits stay below 1 (1 - 2^-53 for a double,
 * 1 - 2^-24 for a float: the largest values below 1). */
static void t_double_float_bounds(void)
{
	/* xoshiro256** from {0, 0, 0, 1} begins 0, 0. */
	seed_rng z = {{0, 0, 0, 1}};
	CHECK(seed_rng_double(&z) == 0.0);
	CHECK(seed_rng_float(&z) == 0.0f);
	seed_rng ones = {{0, golden_all_ones_s1, 0, 0}};
	seed_rng r = ones;
	CHECK(seed_rng_u64(&r) == UINT64_MAX);
	r = ones;
	CHECK(seed_rng_double(&r) == 0x1.fffffffffffffp-1);
	r = ones;
	CHECK(seed_rng_float(&r) == 0x1.fffffep-1f);
	r = ones;
	/* 2 + (1 - 2^-53) rounds to 3: the largest double below 3 instead. */
	double u = seed_rng_uniform(&r, 2.0, 3.0);
	CHECK_MSG(u == 0x1.7ffffffffffffp+1, "uniform(2, 3) = %a", u);
	r = ones;
	CHECK(seed_rng_below(&r, 10) == 9);
	r = ones;
	CHECK(seed_rng_below(&r, UINT32_MAX) == UINT32_MAX - 1);
}

static void t_below(void)
{
	seed_rng r;
	seed_rng_init(&r, 11, 5);
	for (size_t k = 0; k < LEN(golden_below); k++) {
		const struct golden_below *g = &golden_below[k];
		for (int i = 0; i < GOLDEN_NBELOW; i++) {
			uint32_t v = seed_rng_below(&r, g->n);
			CHECK_MSG(v == g->value[i], "below(%u) draw %d: %u, want %u", g->n, i, v,
			          g->value[i]);
		}
	}
	/* Rejections consumed exactly the outputs the reference did. */
	CHECK(seed_rng_u64(&r) == golden_after_below);
}

/* Without bias: every value of a small n comes equally often (chi-square,
 * 5 degrees of freedom: 20.5 is its 0.999 quantile). */
static void t_below_unbiased(void)
{
	seed_rng r;
	seed_rng_init(&r, 2024, 0);
	enum { N = 6, DRAWS = 60000 };
	long count[N] = {0};
	for (int i = 0; i < DRAWS; i++)
		count[seed_rng_below(&r, N)]++;
	double chi2 = 0;
	for (int v = 0; v < N; v++) {
		double e = (double)DRAWS / N;
		chi2 += (count[v] - e) * (count[v] - e) / e;
	}
	CHECK_MSG(chi2 < 20.5, "chi-square %g", chi2);
}

static void t_normal(void)
{
	seed_rng r;
	seed_rng_init(&r, 5, 9);
	for (int i = 0; i < GOLDEN_NNORMAL; i++) {
		double x = seed_rng_normal(&r);
		CHECK_NEAR(x, golden_normal[i], 1e-12 * (1 + fabs(golden_normal[i])));
	}
	/* Two outputs per draw. */
	CHECK(seed_rng_u64(&r) == golden_after_normal);
}

/* Mean and variance of many normal draws: 0 and 1 within five standard
 * errors (the standard error of the variance of a normal is sqrt(2/n)). */
static void t_normal_moments(void)
{
	seed_rng r;
	seed_rng_init(&r, 99, 1);
	enum { DRAWS = 200000 };
	double sum = 0, sq = 0;
	for (int i = 0; i < DRAWS; i++) {
		double x = seed_rng_normal(&r);
		CHECK(isfinite(x));
		sum += x;
		sq += x * x;
	}
	double mean = sum / DRAWS, var = sq / DRAWS - mean * mean;
	CHECK_NEAR(mean, 0.0, 5.0 / sqrt(DRAWS));
	CHECK_NEAR(var, 1.0, 5.0 * sqrt(2.0 / DRAWS));
}

/* Streams of one seed: the same stream repeats, different streams do not
 * share outputs, and their uniforms are uncorrelated (|r| under five
 * standard errors, 1/sqrt(n) each) at lags 0 and 1. */
static void t_streams_independent(void)
{
	enum { STREAMS = 16, DRAWS = 4096 };
	static double u[STREAMS][DRAWS];
	static uint64_t first[STREAMS];
	for (int s = 0; s < STREAMS; s++) {
		seed_rng r, again;
		seed_rng_init(&r, 42, (uint64_t)s);
		seed_rng_init(&again, 42, (uint64_t)s);
		first[s] = seed_rng_u64(&r);
		CHECK(seed_rng_u64(&again) == first[s]);
		for (int i = 0; i < DRAWS; i++)
			u[s][i] = seed_rng_double(&r);
	}
	for (int a = 0; a < STREAMS; a++)
		for (int b = a + 1; b < STREAMS; b++) {
			CHECK_MSG(first[a] != first[b], "streams %d and %d begin alike", a, b);
			for (int lag = 0; lag <= 1; lag++) {
				double sa = 0, sb = 0, sab = 0, saa = 0, sbb = 0;
				int n = DRAWS - lag;
				for (int i = 0; i < n; i++) {
					double x = u[a][i], y = u[b][i + lag];
					sa += x, sb += y, sab += x * y, saa += x * x, sbb += y * y;
				}
				double cov = sab / n - (sa / n) * (sb / n);
				double corr = cov / sqrt((saa / n - (sa / n) * (sa / n)) *
				                         (sbb / n - (sb / n) * (sb / n)));
				CHECK_MSG(fabs(corr) < 5.0 / sqrt(n), "streams %d, %d lag %d: correlation %g",
				          a, b, lag, corr);
			}
		}
}

/* A stream and a seed are not interchangeable, and no stream of one seed
 * replays a shifted copy of another's: the first 64 outputs of streams
 * 0..7 of seeds 0..7 are all distinct. */
static void t_seed_stream_pairs_distinct(void)
{
	enum { K = 8, OUT = 64 };
	static uint64_t all[K * K * OUT];
	size_t n = 0;
	for (uint64_t seed = 0; seed < K; seed++)
		for (uint64_t stream = 0; stream < K; stream++) {
			seed_rng r;
			seed_rng_init(&r, seed, stream);
			for (int i = 0; i < OUT; i++)
				all[n++] = seed_rng_u64(&r);
		}
	size_t dups = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			dups += all[i] == all[j];
	CHECK_MSG(dups == 0, "%zu repeated outputs", dups);
}

int main(void)
{
	TAP_RUN(t_published_outputs);
	TAP_RUN(t_seeding);
	TAP_RUN(t_double_float_uniform);
	TAP_RUN(t_double_float_bounds);
	TAP_RUN(t_below);
	TAP_RUN(t_below_unbiased);
	TAP_RUN(t_normal);
	TAP_RUN(t_normal_moments);
	TAP_RUN(t_streams_independent);
	TAP_RUN(t_seed_stream_pairs_distinct);
	return tap_done();
}
