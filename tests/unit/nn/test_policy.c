/* test_policy.c: policy-head helpers (seed/policy.h).
 *
 * Values against numpy (tests/golden/nn_golden.h, from tests/golden/nn_golden.py),
 * gradients against central differences, sampling against the inverse-CDF
 * definition and against the probabilities (chi-square).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/policy.h"
#include "tap.h"
#include "nn_golden.h"

#define GB GOLDEN_POL_B
#define GA GOLDEN_POL_A

static void t_golden_values(void)
{
	float lp[GB * GA], p[GB * GA], h[GB];
	seed_policy_log_softmax(GB, GA, golden_pol_logits, lp);
	seed_policy_softmax(GB, GA, golden_pol_logits, p);
	seed_policy_entropy(GB, GA, golden_pol_logits, h);
	for (int i = 0; i < GB * GA; i++) {
		CHECK_NEAR(lp[i], golden_pol_logp[i], 1e-6 * (1 + fabs(golden_pol_logp[i])));
		CHECK_NEAR(p[i], golden_pol_probs[i], 1e-7);
		CHECK(isfinite(lp[i]));
	}
	for (int b = 0; b < GB; b++)
		CHECK_NEAR(h[b], golden_pol_entropy[b], 1e-6);
	/* In place. */
	float z[GB * GA];
	memcpy(z, golden_pol_logits, sizeof z);
	seed_policy_log_softmax(GB, GA, z, z);
	CHECK(memcmp(z, lp, sizeof z) == 0);
}

static void t_action_log_prob(void)
{
	int32_t act[GB] = {2, 0, 1, 4, 1};
	float lp[GB];
	CHECK(seed_policy_action_log_prob(GB, GA, golden_pol_logits, act, lp) == 0);
	for (int b = 0; b < GB; b++)
		CHECK_NEAR(lp[b], golden_pol_logp[b * GA + act[b]],
		           1e-6 * (1 + fabs(golden_pol_logp[b * GA + act[b]])));
	int32_t badact[GB] = {2, 0, 5, 4, 1};
	float before[GB];
	memcpy(before, lp, sizeof lp);
	CHECK(seed_policy_action_log_prob(GB, GA, golden_pol_logits, badact, lp) == -EINVAL);
	CHECK(memcmp(before, lp, sizeof lp) == 0);
	badact[2] = -1;
	float d[GB * GA] = {0};
	CHECK(seed_policy_action_log_prob_backward(GB, GA, golden_pol_logits, badact, lp, d) == -EINVAL);
	for (int i = 0; i < GB * GA; i++)
		CHECK(d[i] == 0.0f);
}

static void t_argmax(void)
{
	float z[4 * 4] = {1,  3,  3,  2, /* tie: first */
	                  -5, -6, -7, -8, NAN, 1, 2, NAN, NAN, NAN, NAN, NAN};
	int32_t a[4];
	seed_policy_argmax(4, 4, z, a);
	CHECK(a[0] == 1);
	CHECK(a[1] == 0);
	CHECK(a[2] == 2);
	CHECK(a[3] == 0);
	int32_t ag[GB];
	seed_policy_argmax(GB, GA, golden_pol_logits, ag);
	int32_t want[GB] = {2, 2, 1, 0, 1};
	for (int b = 0; b < GB; b++)
		CHECK(ag[b] == want[b]);
}

static void t_sample_inverse_cdf(void)
{
	/* Each row uses one uniform u; the action is the first a with
	 * u < p_0 + ... + p_a (probabilities from numpy). */
	seed_rng rng, copy;
	seed_rng_init(&rng, 3, 0);
	for (int rep = 0; rep < 200; rep++) {
		copy = rng;
		int32_t act[GB];
		seed_policy_sample(GB, GA, golden_pol_logits, &rng, act);
		for (int b = 0; b < GB; b++) {
			double u = seed_rng_double(&copy), cum = 0;
			int want = -1;
			for (int a = 0; a < GA && want < 0; a++) {
				cum += golden_pol_probs[b * GA + a];
				if (u < cum)
					want = a;
			}
			/* They may differ only where u is within float rounding of
			 * a boundary of the cumulative distribution. */
			if (act[b] != want) {
				double c = 0, nearest = 1;
				for (int a = 0; a < GA; a++) {
					c += golden_pol_probs[b * GA + a];
					if (fabs(c - u) < nearest)
						nearest = fabs(c - u);
				}
				CHECK_MSG(nearest < 1e-6, "row %d: u=%.9f sampled %d, inverse CDF gives %d",
				          b, u, act[b], want);
			}
			CHECK(golden_pol_probs[b * GA + act[b]] > 0); /* never a masked action */
		}
		/* Exactly one uniform per row: the generators are in step. */
		CHECK(memcmp(&copy, &rng, sizeof rng) == 0);
	}
}

static void t_sample_frequencies(void)
{
	/* 60000 draws of row 0: chi-square with 4 degrees of freedom; 18.47 is
	 * the 0.999 quantile, and the seed is fixed. */
	enum { N = 60000 };
	static float z[N * GA];
	for (int i = 0; i < N; i++)
		memcpy(z + i * GA, golden_pol_logits, GA * sizeof *z);
	static int32_t act[N];
	seed_rng rng;
	seed_rng_init(&rng, 4, 0);
	seed_policy_sample(N, GA, z, &rng, act);
	int count[GA] = {0};
	for (int i = 0; i < N; i++)
		count[act[i]]++;
	double chi2 = 0;
	for (int a = 0; a < GA; a++) {
		double e = N * golden_pol_probs[a];
		chi2 += (count[a] - e) * (count[a] - e) / e;
	}
	printf("# chi-square %.2f\n", chi2);
	CHECK(chi2 < 18.47);
	/* A row with one possible action always gives it. */
	float one[3] = {-INFINITY, 0.5f, -INFINITY};
	for (int i = 0; i < 100; i++) {
		int32_t a;
		seed_policy_sample(1, 3, one, &rng, &a);
		CHECK(a == 1);
	}
}

/* Central differences of a scalar function of the logits (GB x GA). */
typedef double (*scalar_fn)(const float *z, const void *ctx);

static void fd_check(scalar_fn f, const void *ctx, const float *z0, const float *grad, const char *what)
{
	float z[GB * GA];
	memcpy(z, z0, sizeof z);
	int bad = 0;
	for (int i = 0; i < GB * GA; i++) {
		if (z0[i] < -1e20f)
			continue; /* masked: no useful neighbourhood */
		const float h = 1e-2f;
		z[i] = z0[i] + h;
		double up = f(z, ctx);
		z[i] = z0[i] - h;
		double down = f(z, ctx);
		z[i] = z0[i];
		double num = (up - down) / (2 * (double)h);
		if (fabs(num - grad[i]) > 2e-4 + 2e-3 * fabs(num)) {
			if (bad++ < 5)
				printf("# %s: d/dz[%d]: backward %.7g, central differences %.7g\n", what, i,
				       (double)grad[i], num);
		}
	}
	CHECK_MSG(bad == 0, "%s", what);
}

/* The rows used for the gradients: the golden ones except the 1000s
 * (their float spacing is too coarse for finite differences). */
static void grad_logits(float *z)
{
	memcpy(z, golden_pol_logits, GB * GA * sizeof *z);
	for (int a = 0; a < GA; a++)
		z[GA + a] -= 1000.0f;
}

static const double coef[GB * GA] = {0.3,  -1.2, 0.7,  0.1,  -0.4, 1.1,  0.2,  -0.6, 0.9,
                                     -0.3, 0.5,  0.8,  -0.9, 0.4,  0.6,  -0.7, 1.3,  0.05,
                                     -0.2, 0.35, 0.45, -1.0, 0.15, 0.25, -0.5};

static double f_log_softmax(const float *z, const void *ctx)
{
	float lp[GB * GA];
	seed_policy_log_softmax(GB, GA, z, lp);
	double s = 0;
	for (int i = 0; i < GB * GA; i++)
		if (z[i] > -1e20f) /* masked actions carry no loss */
			s += coef[i] * lp[i];
	return s;
}

static double f_entropy(const float *z, const void *ctx)
{
	float h[GB];
	seed_policy_entropy(GB, GA, z, h);
	double s = 0;
	for (int b = 0; b < GB; b++)
		s += coef[b] * h[b];
	return s;
}

static double f_action(const float *z, const void *ctx)
{
	float lp[GB];
	seed_policy_action_log_prob(GB, GA, z, ctx, lp);
	double s = 0;
	for (int b = 0; b < GB; b++)
		s += coef[b] * lp[b];
	return s;
}

/* Ape-X's epsilons, worked by hand: with n = 8 and alpha 7 the exponent is
 * 1 + i, so environment i explores with 0.4^(i + 1). */
static void t_apex_epsilon(void)
{
	double want = 0.4;
	for (int i = 0; i < 8; i++, want *= 0.4)
		CHECK(fabs(seed_policy_apex_epsilon(i, 8, 0.4, 7) - want) < 1e-15);
	CHECK(fabs(seed_policy_apex_epsilon(7, 8, 0.4, 7) - 0.00065536) < 1e-15);
	CHECK(seed_policy_apex_epsilon(0, 1, 0.4, 7) == 0.4);
	/* n = 3: exponents 1, 4.5, 8. */
	CHECK(fabs(seed_policy_apex_epsilon(1, 3, 0.4, 7) - 0.016190861620062) < 1e-12);
	CHECK(isnan(seed_policy_apex_epsilon(8, 8, 0.4, 7)));
	CHECK(isnan(seed_policy_apex_epsilon(-1, 8, 0.4, 7)));
	CHECK(isnan(seed_policy_apex_epsilon(0, 0, 0.4, 7)));
}

/* Epsilon-greedy: the documented draws, then the frequencies their law
 * gives (greedy 1 - eps + eps/A, each other action eps/A). */
static void t_epsilon_greedy(void)
{
	enum { A = 4, N = 200000 };
	const float q[3][A] = {{0, 2, 1, 2}, {-1, -2, -3, -4}, {0.5f, 0.5f, 0.5f, 9}};
	const float eps3[3] = {0.5f, 0.5f, 0.5f};
	seed_rng r, mirror;
	seed_rng_init(&r, 11, 0);
	seed_rng_init(&mirror, 11, 0);
	const int greedy[3] = {1, 0, 3};
	for (int k = 0; k < 100; k++) {
		int32_t act[3];
		seed_policy_epsilon_greedy(3, A, &q[0][0], eps3, &r, act);
		for (int b = 0; b < 3; b++) {
			int want = greedy[b];
			if (seed_rng_double(&mirror) < eps3[b])
				want = (int)seed_rng_below(&mirror, A);
			CHECK(act[b] == want);
		}
	}
	const float eps[3] = {0, 0.3f, 1};
	const double pg[3] = {1, 0.7 + 0.3 / A, 0.25}, po[3] = {0, 0.3 / A, 0.25};
	static int counts[3][A];
	for (int k = 0; k < N; k++) {
		int32_t act[3];
		seed_policy_epsilon_greedy(3, A, &q[0][0], eps, &r, act);
		for (int b = 0; b < 3; b++)
			counts[b][act[b]]++;
	}
	for (int b = 0; b < 3; b++)
		for (int a = 0; a < A; a++) {
			double p = a == greedy[b] ? pg[b] : po[b], f = (double)counts[b][a] / N;
			/* 5 standard deviations of the frequency (0.0047 at p = 0.775) */
			CHECK(fabs(f - p) <= 5 * sqrt(p * (1 - p) / N) + 1e-12);
		}
}

static void t_grad_log_softmax(void)
{
	float z[GB * GA], lp[GB * GA], dl[GB * GA], d[GB * GA];
	grad_logits(z);
	seed_policy_log_softmax(GB, GA, z, lp);
	for (int i = 0; i < GB * GA; i++) {
		/* masked entries carry no loss (their logp is -1e30) */
		dl[i] = z[i] < -1e20f ? 0.0f : (float)coef[i];
		d[i] = 1.0f; /* backward adds */
	}
	seed_policy_log_softmax_backward(GB, GA, lp, dl, d);
	for (int i = 0; i < GB * GA; i++)
		d[i] -= 1.0f;
	fd_check(f_log_softmax, NULL, z, d, "log_softmax");
}

static void t_grad_entropy(void)
{
	float z[GB * GA], dh[GB], d[GB * GA];
	grad_logits(z);
	for (int b = 0; b < GB; b++)
		dh[b] = (float)coef[b];
	for (int i = 0; i < GB * GA; i++)
		d[i] = -2.0f;
	seed_policy_entropy_backward(GB, GA, z, dh, d);
	for (int i = 0; i < GB * GA; i++)
		d[i] += 2.0f;
	fd_check(f_entropy, NULL, z, d, "entropy");
	/* Uniform logits: the entropy is at its maximum, gradient zero. */
	float u[4] = {0.3f, 0.3f, 0.3f, 0.3f}, du[4] = {0}, one = 1.0f;
	seed_policy_entropy_backward(1, 4, u, &one, du);
	for (int a = 0; a < 4; a++)
		CHECK_NEAR(du[a], 0, 1e-7);
}

static void t_grad_action_log_prob(void)
{
	float z[GB * GA], dl[GB], d[GB * GA] = {0};
	int32_t act[GB] = {2, 0, 1, 4, 3};
	grad_logits(z);
	for (int b = 0; b < GB; b++)
		dl[b] = (float)coef[b];
	CHECK(seed_policy_action_log_prob_backward(GB, GA, z, act, dl, d) == 0);
	fd_check(f_action, act, z, d, "action_log_prob");
	/* Hand-worked: uniform over 4, action 1: d/dz = [a==1] - 1/4. */
	float u[4] = {0, 0, 0, 0}, du[4] = {0}, g = 1.0f;
	int32_t a1 = 1;
	CHECK(seed_policy_action_log_prob_backward(1, 4, u, &a1, &g, du) == 0);
	CHECK(du[0] == -0.25f && du[1] == 0.75f && du[2] == -0.25f && du[3] == -0.25f);
}

int main(void)
{
	TAP_RUN(t_golden_values);
	TAP_RUN(t_action_log_prob);
	TAP_RUN(t_argmax);
	TAP_RUN(t_sample_inverse_cdf);
	TAP_RUN(t_sample_frequencies);
	TAP_RUN(t_apex_epsilon);
	TAP_RUN(t_epsilon_greedy);
	TAP_RUN(t_grad_log_softmax);
	TAP_RUN(t_grad_entropy);
	TAP_RUN(t_grad_action_log_prob);
	return tap_done();
}
