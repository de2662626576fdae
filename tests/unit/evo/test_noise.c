/* test_noise.c: the shared noise table (seed/noise.h): its values against
 * tests/golden/evo_ref.py (Python's own polar method over tests/golden/rng_ref.py's
 * generator), determinism, the statistics of N(0, 1), the index's range,
 * golden values and spread, and bad sizes. */
#include "seed/noise.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evo_golden.h"
#include "tap.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* One float ulp at x (the reference's libm log may differ from ours in the
 * last bit of a double, which moves the float at most one step). */
static double ulp(float x)
{
	return fabs((double)nextafterf(x, INFINITY) - (double)x);
}

static void t_golden_values(void)
{
	seed_noise *n = NULL;
	seed_err err = {{0}};
	CHECK(seed_noise_new(&n, 0, 64, &err) == 0);
	if (!n)
		return;
	CHECK(seed_noise_size(n) == 64 && seed_noise_seed(n) == 0);
	const float *d = seed_noise_data(n);
	CHECK(((uintptr_t)d & 63) == 0);
	for (int i = 0; i < 64; i++)
		CHECK_NEAR(d[i], noise_seed0[i], ulp(noise_seed0[i]));
	seed_noise_free(&n);
	CHECK(n == NULL);
	seed_noise_free(&n); /* NULL is fine */

	CHECK(seed_noise_new(&n, NOISE_BIG_SEED, NOISE_BIG_SIZE, &err) == 0);
	if (!n)
		return;
	for (int i = 0; i < N_OF(noise_big_at); i++)
		CHECK_NEAR(seed_noise_data(n)[noise_big_at[i]], noise_big_val[i], ulp(noise_big_val[i]));
	seed_noise_free(&n);
}

/* Same (seed, size), same floats; a longer table starts with the shorter
 * one (element i is the i-th draw); another seed, other floats. */
static void t_deterministic(void)
{
	seed_noise *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	CHECK(seed_noise_new(&a, 42, 10001, NULL) == 0);
	CHECK(seed_noise_new(&b, 42, 10001, NULL) == 0);
	CHECK(seed_noise_new(&c, 42, 20000, NULL) == 0);
	CHECK(seed_noise_new(&d, 43, 10001, NULL) == 0);
	if (a && b && c && d) {
		CHECK(memcmp(seed_noise_data(a), seed_noise_data(b), 10001 * sizeof(float)) == 0);
		CHECK(memcmp(seed_noise_data(a), seed_noise_data(c), 10001 * sizeof(float)) == 0);
		int same = 0;
		for (int i = 0; i < 10001; i++)
			same += seed_noise_data(a)[i] == seed_noise_data(d)[i];
		CHECK_MSG(same < 10, "%d equal floats between seeds 42 and 43", same);
	}
	seed_noise_free(&a);
	seed_noise_free(&b);
	seed_noise_free(&c);
	seed_noise_free(&d);
}

/* 2^20 floats: mean 0 and variance 1 within 5 standard errors, the third
 * and fourth moments (0 and 3), the share beyond 1.96 (5%), all finite, and
 * neighbours uncorrelated (the polar method's pairs). */
static void t_statistics(void)
{
	const int64_t N = INT64_C(1) << 20;
	seed_noise *n = NULL;
	CHECK(seed_noise_new(&n, 7, N, NULL) == 0);
	if (!n)
		return;
	const float *d = seed_noise_data(n);
	double s1 = 0, s2 = 0, s3 = 0, s4 = 0, lag = 0;
	int64_t tail = 0, bad = 0;
	for (int64_t i = 0; i < N; i++) {
		double x = d[i];
		bad += !isfinite(x);
		s1 += x;
		s2 += x * x;
		s3 += x * x * x;
		s4 += x * x * x * x;
		tail += fabs(x) > 1.959963985;
		if (i + 1 < N)
			lag += x * d[i + 1];
	}
	double mean = s1 / N, var = s2 / N - mean * mean;
	CHECK(bad == 0);
	CHECK_NEAR(mean, 0.0, 5.0 / sqrt((double)N));
	CHECK_NEAR(var, 1.0, 5.0 * sqrt(2.0 / N));
	CHECK_NEAR(s3 / N, 0.0, 5.0 * sqrt(15.0 / N));
	CHECK_NEAR(s4 / N, 3.0, 5.0 * sqrt(96.0 / N));
	CHECK_NEAR((double)tail / N, 0.05, 5.0 * sqrt(0.05 * 0.95 / N));
	CHECK_NEAR(lag / (N - 1), 0.0, 5.0 / sqrt((double)N));
	seed_noise_free(&n);
}

static void t_index_golden(void)
{
	for (int i = 0; i < N_OF(index_golden); i++) {
		seed_noise *n = NULL;
		CHECK(seed_noise_new(&n, index_golden[i].seed, index_golden[i].size, NULL) == 0);
		if (!n)
			continue;
		CHECK_MSG(seed_noise_index(n, index_golden[i].key, index_golden[i].len) ==
		              index_golden[i].want,
		          "case %d: %lld, want %lld", i,
		          (long long)seed_noise_index(n, index_golden[i].key, index_golden[i].len),
		          (long long)index_golden[i].want);
		seed_noise_free(&n);
	}
}

/* Offsets stay in [0, size - len]; len == size gives 0; bad lengths are
 * -EINVAL; consecutive keys spread evenly over the table (chi-square over
 * 16 buckets, 15 degrees of freedom: 40 is beyond the 0.9995 quantile) and
 * rarely collide. */
static void t_index_range_spread(void)
{
	seed_noise *n = NULL;
	CHECK(seed_noise_new(&n, 5, 100000, NULL) == 0);
	if (!n)
		return;
	CHECK(seed_noise_index(n, 123, 100000) == 0);
	CHECK(seed_noise_index(n, 123, 100001) == -EINVAL);
	CHECK(seed_noise_index(n, 123, 0) == -EINVAL);
	CHECK(seed_noise_index(n, 123, -5) == -EINVAL);
	int64_t ones = 0;
	for (uint64_t k = 0; k < 1000; k++) {
		int64_t at = seed_noise_index(n, k, 99999);
		CHECK(at == 0 || at == 1);
		ones += at;
	}
	CHECK_MSG(ones > 400 && ones < 600, "%lld of 1000 keys at offset 1", (long long)ones);
	enum { KEYS = 160000, BUCKETS = 16 };
	const int64_t len = 1000, range = 100000 - len + 1;
	int count[BUCKETS] = {0};
	int64_t out_of_range = 0;
	for (uint64_t k = 0; k < KEYS; k++) {
		int64_t at = seed_noise_index(n, k, len);
		if (at < 0 || at > 100000 - len) {
			out_of_range++;
			continue;
		}
		count[at * BUCKETS / range]++;
	}
	CHECK(out_of_range == 0);
	double chi2 = 0, want = (double)KEYS / BUCKETS;
	for (int b = 0; b < BUCKETS; b++)
		chi2 += (count[b] - want) * (count[b] - want) / want;
	CHECK_MSG(chi2 < 40, "chi-square %.1f over %d buckets", chi2, BUCKETS);
	/* Collisions among 1000 keys over 99,001 offsets: about 5 expected. */
	static int64_t seen[1000];
	int collide = 0;
	for (int k = 0; k < 1000; k++) {
		seen[k] = seed_noise_index(n, (uint64_t)k, len);
		for (int j = 0; j < k; j++)
			collide += seen[j] == seen[k];
	}
	CHECK_MSG(collide < 20, "%d collisions among 1000 keys", collide);
	seed_noise_free(&n);
}

static void t_bad_sizes(void)
{
	seed_noise *n = NULL;
	seed_err err = {{0}};
	CHECK(seed_noise_new(&n, 1, 0, &err) == -EINVAL);
	CHECK(n == NULL);
	CHECK(strstr(err.msg, "size 0") != NULL);
	CHECK(seed_noise_new(&n, 1, -3, &err) == -EINVAL);
	CHECK(seed_noise_new(&n, 1, INT64_C(1) << 31, &err) == -EINVAL);
	CHECK(strstr(err.msg, "2147483648") != NULL);
	CHECK(n == NULL);
	CHECK(seed_noise_new(&n, 1, 1, &err) == 0);
	if (n)
		CHECK(isfinite(seed_noise_data(n)[0]) && seed_noise_index(n, 99, 1) == 0);
	seed_noise_free(&n);
}

int main(void)
{
	TAP_RUN(t_golden_values);
	TAP_RUN(t_deterministic);
	TAP_RUN(t_statistics);
	TAP_RUN(t_index_golden);
	TAP_RUN(t_index_range_spread);
	TAP_RUN(t_bad_sizes);
	return tap_done();
}
