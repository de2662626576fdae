/* tests/unit/rl/test_reward_norm.c: rewards scaled by a running deviation
 * of discounted returns (seed/reward_norm.h), against Gymnasium's own
 * RunningMeanStd and NormalizeReward rule run by
 * tests/golden/reward_norm_ref.py (its printout below): three batches of
 * three unrolls of four steps, environments continuing across batches and
 * one coming new, terminations on the way, clip 1.2 reached.
 */
#include "seed/reward_norm.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "tap.h"

static const float rn_rewards[] = {
    0.00369046f,  0.896236598f,  -0.822413564f, -2.67177558f, -1.36401236f,  -2.97493958f,
    0.180430815f, 4.02064562f,   -1.4766196f,   -1.86142468f, 1.46952617f,   1.07066107f,
    0.316242754f, -2.79140425f,  -0.087755464f, 2.08590961f,  -4.0326438f,   -1.37284732f,
    -5.70366812f, -3.86861324f,  -5.52520514f,  -0.70527339f, -3.80233955f,  0.813793063f,
    0.470253259f, -0.560792863f, -7.55027914f,  -1.61607873f, -0.145502836f, 0.339926958f,
    -4.59040737f, -1.43325984f,  -2.93555713f,  -2.42651176f, 3.18269587f,   -2.42260408f};
static const uint8_t rn_terminated[] = {1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0,
                                        1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0};
static const float rn_scaled[] = {
    0.00369046f,   0.896236598f,  -0.822413564f, -1.0304178f,   -0.526055634f,  -1.14733839f,
    0.0695863515f, 1.20000005f,   -0.569484651f, -0.717891574f, 0.566748917f,   0.412919492f,
    0.316242754f,  -2.79140425f,  -0.087755464f, 0.536655307f,  -1.03750408f,   -0.35320121f,
    -1.20000005f,  -0.995302856f, -1.20000005f,  -0.181450188f, -0.978252232f,  0.209369749f,
    0.470253259f,  -0.560792863f, -7.55027914f,  -0.382335931f, -0.0344234221f, 0.0804207623f,
    -1.08600998f,  -0.339084178f, -0.6945014f,   -0.574070156f, 0.752970099f,   -0.573145688f};
static const double rn_stats[3] = {27.0001, -4.6185604859984277, 17.866308164180243};

enum { T1 = 4, B = 3 };

static const seed_reward_norm_key keys[3][B] = {
    {{1, 0, 0}, {1, 0, 1}, {1, 1, 0}},
    {{1, 0, 1}, {1, 0, 0}, {2, 0, 0}},
    {{1, 1, 0}, {2, 0, 0}, {1, 0, 0}},
};

static void t_against_gymnasium(void)
{
	seed_reward_norm *r = NULL;
	seed_err err;
	CHECK(seed_reward_norm_new(&r, 0.9, 1.2, &err) == 0);
	double st[3];
	seed_reward_norm_stats(r, st);
	CHECK(st[0] == 1e-4 && st[1] == 0 && st[2] == 1);
	int clipped = 0;
	for (int k = 0; k < 3; k++) {
		float rew[T1 * B];
		memcpy(rew, rn_rewards + k * T1 * B, sizeof rew);
		seed_reward_norm_apply(r, T1, B, keys[k], rew, rn_terminated + k * T1 * B);
		for (int i = 0; i < T1 * B; i++) {
			CHECK_MSG(fabsf(rew[i] - rn_scaled[k * T1 * B + i]) <=
			              1e-6f * fabsf(rn_scaled[k * T1 * B + i]),
			          "batch %d reward %d: %.9g, Gymnasium %.9g", k, i, (double)rew[i],
			          (double)rn_scaled[k * T1 * B + i]);
			clipped += i >= B && fabsf(rew[i]) == 1.2f;
		}
	}
	CHECK_MSG(clipped > 0, "no reward reached the clip");
	seed_reward_norm_stats(r, st);
	for (int i = 0; i < 3; i++)
		CHECK_MSG(fabs(st[i] - rn_stats[i]) <= 1e-12 * fabs(rn_stats[i]),
		          "stat %d %.17g, Gymnasium %.17g", i, st[i], rn_stats[i]);
	seed_reward_norm_free(&r);
	CHECK(r == NULL);
}

/* Many environments (the table grows) keep their own returns: a constant
 * reward of 1 with gamma 0.5 gives each G = 1, 1.5, 1.75 over three steps
 * whatever the others do. */
static void t_many_environments(void)
{
	enum { N = 200 };
	seed_reward_norm *r = NULL;
	CHECK(seed_reward_norm_new(&r, 0.5, 100, NULL) == 0);
	static seed_reward_norm_key k[N];
	static float rew[4 * N];
	static uint8_t term[4 * N];
	for (int b = 0; b < N; b++)
		k[b] = (seed_reward_norm_key){7, (uint32_t)b / 10, b % 10};
	for (int i = 0; i < 4 * N; i++)
		rew[i] = 1;
	seed_reward_norm_apply(r, 4, N, k, rew, term);
	/* Returns 1, 1.5, 1.75 in equal numbers: mean 17/12, variance
	 * ((1-m)^2 + (1.5-m)^2 + (1.75-m)^2) / 3, merged with (1e-4, 0, 1). */
	double m = 17.0 / 12, v = ((1 - m) * (1 - m) + (1.5 - m) * (1.5 - m) + (1.75 - m) * (1.75 - m)) / 3;
	double n = 3.0 * N, tot = 1e-4 + n, d = m;
	double want_mean = d * n / tot, want_var = (1 * 1e-4 + v * n + d * d * 1e-4 * n / tot) / tot;
	double st[3];
	seed_reward_norm_stats(r, st);
	CHECK_MSG(fabs(st[1] - want_mean) < 1e-12 && fabs(st[2] - want_var) < 1e-12, "mean %.17g var %.17g",
	          st[1], st[2]);
	CHECK(rew[0] == 1); /* step 0 untouched */
	CHECK(fabsf(rew[N] - (float)(1 / sqrt(want_var + 1e-8))) < 1e-6f);
	/* Continuing: the next unroll's first transition goes on from 1.75. */
	for (int i = 0; i < 4 * N; i++)
		rew[i] = 0;
	seed_reward_norm_apply(r, 2, N, k, rew, term);
	seed_reward_norm_stats(r, st);
	double m2 = 1.75 * 0.5; /* every G is 0.875 now */
	CHECK(st[0] == tot + N);
	CHECK(fabs(st[1] - (want_mean + (m2 - want_mean) * N / (tot + N))) < 1e-12);
	seed_reward_norm_free(&r);
}

static void t_errors(void)
{
	seed_reward_norm *r = NULL;
	seed_err err;
	CHECK(seed_reward_norm_new(&r, 1.5, 10, &err) == -EINVAL && !r);
	CHECK(seed_reward_norm_new(&r, 0.9, 0, &err) == -EINVAL && !r);
	CHECK(seed_reward_norm_new(&r, NAN, 10, &err) == -EINVAL && !r);
	CHECK(seed_reward_norm_new(&r, 0.99, 10, &err) == 0);
	double bad[3] = {0, 0, 1}, good[3] = {5, -1, 2}, got[3];
	CHECK(seed_reward_norm_set_stats(r, bad, &err) == -EINVAL);
	CHECK(strstr(err.msg, "count > 0") != NULL);
	bad[0] = 1;
	bad[2] = NAN;
	CHECK(seed_reward_norm_set_stats(r, bad, &err) == -EINVAL);
	CHECK(seed_reward_norm_set_stats(r, good, &err) == 0);
	seed_reward_norm_stats(r, got);
	CHECK(memcmp(got, good, sizeof got) == 0);
	seed_reward_norm_free(&r);
	seed_reward_norm_free(&r); /* NULL is fine */
}

int main(void)
{
	TAP_RUN(t_against_gymnasium);
	TAP_RUN(t_many_environments);
	TAP_RUN(t_errors);
	return tap_done();
}
