/* test_gaussian.c: the diagonal Gaussian policy (seed/gaussian.h).
 *
 * Values against scipy (the golden arrays below are the output of
 * tests/ref/gaussian_ref.py: scipy.stats.norm's log-density and entropy, the
 * tanh Jacobian as -2 log cosh, the KL by numerical integration), gradients
 * against central differences of the density written out in double here,
 * and of the library's own float log-probability, sampling by its moments
 * over many draws and its draw order.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/gaussian.h"
#include "tap.h"

#define B 3
#define A 3

/* ---- tests/ref/gaussian_ref.py's output -------------------------------- */
static const double ref_params[] = {0.5,
                                    -1.25,
                                    2,
                                    0,
                                    -0.5,
                                    0.69999999999999996,
                                    0,
                                    0.29999999999999999,
                                    -0.69999999999999996,
                                    -2,
                                    0.10000000000000001,
                                    0,
                                    -3,
                                    1.5,
                                    0.25,
                                    1.2,
                                    -1,
                                    -0.29999999999999999};
static const double ref_q[] = {0.40000000000000002,
                               -1,
                               1.5,
                               0.29999999999999999,
                               -0.20000000000000001,
                               0.5,
                               0.20000000000000001,
                               0,
                               -0.5,
                               -1.5,
                               0.40000000000000002,
                               -0.20000000000000001,
                               -2,
                               1,
                               0,
                               1,
                               -0.5,
                               0.10000000000000001};
static const double ref_u[] = {
    0.10000000000000001, -1,  3.5, 0.050000000000000003, 12, -0.90000000000000002, -6,
    1.3999999999999999,  -9.5};
static const double ref_low[] = {-1, -2, 0};
static const double ref_high[] = {1, 3, 0.5};
static const double ref_logp_clip[] = {-3.3991834911876708, -56.983089681577901, -89.709575900972396};
static const double ref_logp_tanh[] = {3.5638937484550697, -33.177220594417044, -59.480377402917838};
static const double ref_entropy[] = {4.4568155996140177, 2.3568155996140181, 4.1568155996140179};
static const double ref_env_clip[] = {0.10000000000000001, -1, 0.5, 0.050000000000000003, 3, 0, -1,
                                      1.3999999999999999,  0};
static const double ref_env_tanh[] = {0.099667994624955902, -1.4039853898894121, 0.4995444744027997,
                                      0.049958374957880025, 2.9999999998112434,  0.070925532450243883,
                                      -0.99998771165079559, 2.7133791205056568,  2.8013982245056468e-09};
static const double ref_kl[] = {0.29007249504285171, 0.75602492325522341, 0.78755475767434091};
/* ------------------------------------------------------------------------- */

static void to_float(const double *x, int n, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = (float)x[i];
}

/* The golden inputs as float (the reference ran on the doubles: the
 * tolerances cover the rounding of the inputs, about 1e-7 relative). */
static float P[B * 2 * A], Q[B * 2 * A], U[B * A], LO[A], HI[A];

static void load(void)
{
	to_float(ref_params, B * 2 * A, P);
	to_float(ref_q, B * 2 * A, Q);
	to_float(ref_u, B * A, U);
	to_float(ref_low, A, LO);
	to_float(ref_high, A, HI);
}

static double tol(double x)
{
	return 2e-6 * (1 + fabs(x));
}

static void t_golden_values(void)
{
	float lp[B], h[B], kl[B], env[B * A];
	seed_gaussian_log_prob(B, A, P, U, SEED_SQUASH_CLIP, NULL, NULL, lp);
	for (int b = 0; b < B; b++)
		CHECK_NEAR(lp[b], ref_logp_clip[b], tol(ref_logp_clip[b]));
	seed_gaussian_log_prob(B, A, P, U, SEED_SQUASH_TANH, LO, HI, lp);
	for (int b = 0; b < B; b++) {
		CHECK_NEAR(lp[b], ref_logp_tanh[b], tol(ref_logp_tanh[b]));
		CHECK(isfinite(lp[b])); /* u = 12 and -9.5: tanh rounds to +-1 */
	}
	seed_gaussian_entropy(B, A, P, h);
	for (int b = 0; b < B; b++)
		CHECK_NEAR(h[b], ref_entropy[b], tol(ref_entropy[b]));
	seed_gaussian_kl(B, A, P, Q, kl);
	for (int b = 0; b < B; b++)
		CHECK_NEAR(kl[b], ref_kl[b], tol(ref_kl[b]));
	seed_gaussian_kl(B, A, P, P, kl);
	for (int b = 0; b < B; b++)
		CHECK(kl[b] == 0.0f);
	seed_gaussian_to_env(B, A, U, LO, HI, SEED_SQUASH_CLIP, env);
	for (int i = 0; i < B * A; i++)
		CHECK_NEAR(env[i], ref_env_clip[i], 1e-7 * (1 + fabs(ref_env_clip[i])));
	seed_gaussian_to_env(B, A, U, LO, HI, SEED_SQUASH_TANH, env);
	for (int i = 0; i < B * A; i++) {
		CHECK_NEAR(env[i], ref_env_tanh[i], 2e-7 * (1 + fabs(ref_env_tanh[i])));
		CHECK(env[i] >= LO[i % A] && env[i] <= HI[i % A]);
	}
	/* In place. */
	float w[B * A];
	memcpy(w, U, sizeof w);
	seed_gaussian_to_env(B, A, w, LO, HI, SEED_SQUASH_TANH, w);
	CHECK(memcmp(w, env, sizeof w) == 0);
}

static void t_mean_and_clip_infinite(void)
{
	float m[B * A];
	seed_gaussian_mean(B, A, P, m);
	for (int b = 0; b < B; b++)
		for (int i = 0; i < A; i++)
			CHECK(m[b * A + i] == P[b * 2 * A + i]);
	/* Clip with infinite bounds is the identity. */
	float lo[A] = {-INFINITY, -INFINITY, -INFINITY}, hi[A] = {INFINITY, INFINITY, INFINITY}, env[B * A];
	seed_gaussian_to_env(B, A, U, lo, hi, SEED_SQUASH_CLIP, env);
	CHECK(memcmp(env, U, sizeof env) == 0);
	/* One-sided. */
	float lo2[A] = {0, -INFINITY, -INFINITY};
	seed_gaussian_to_env(B, A, U, lo2, hi, SEED_SQUASH_CLIP, env);
	CHECK(env[0] == U[0] && env[3] == U[3] && env[6] == 0.0f && env[2] == U[2]);
}

static void t_squash_names_and_bounds(void)
{
	seed_squash s = SEED_SQUASH_TANH;
	CHECK(seed_gaussian_squash_parse("clip", &s) == 0 && s == SEED_SQUASH_CLIP);
	CHECK(seed_gaussian_squash_parse("tanh", &s) == 0 && s == SEED_SQUASH_TANH);
	CHECK(seed_gaussian_squash_parse("Tanh", &s) == -EINVAL && s == SEED_SQUASH_TANH);
	CHECK(seed_gaussian_squash_parse(NULL, &s) == -EINVAL);
	CHECK(strcmp(seed_gaussian_squash_name(SEED_SQUASH_CLIP), "clip") == 0);
	CHECK(strcmp(seed_gaussian_squash_name(SEED_SQUASH_TANH), "tanh") == 0);
	seed_err err;
	float lo[2] = {-1, -INFINITY}, hi[2] = {1, INFINITY};
	CHECK(seed_gaussian_check_bounds(2, lo, hi, SEED_SQUASH_CLIP, &err) == 0);
	memset(&err, 0, sizeof err);
	CHECK(seed_gaussian_check_bounds(2, lo, hi, SEED_SQUASH_TANH, &err) == -EINVAL);
	CHECK(strstr(err.msg, "dimension 1") && strstr(err.msg, "finite"));
	float lo3[1] = {2}, hi3[1] = {1};
	CHECK(seed_gaussian_check_bounds(1, lo3, hi3, SEED_SQUASH_CLIP, &err) == -EINVAL);
	float lo4[1] = {1}, hi4[1] = {1};
	CHECK(seed_gaussian_check_bounds(1, lo4, hi4, SEED_SQUASH_CLIP, &err) == 0);
	CHECK(seed_gaussian_check_bounds(1, lo4, hi4, SEED_SQUASH_TANH, &err) == -EINVAL);
	float nan1[1] = {NAN};
	CHECK(seed_gaussian_check_bounds(1, nan1, hi4, SEED_SQUASH_CLIP, &err) == -EINVAL);
}

/* The Gaussian's log-density of one row in double, written out here. */
static double logp_ref(const double *p, const float *u)
{
	double s = 0;
	for (int i = 0; i < A; i++) {
		double sd = exp(p[A + i]), z = (u[i] - p[i]) / sd;
		s += -0.5 * z * z - log(sd) - 0.91893853320467274 /* log sqrt(2 pi) */;
	}
	return s;
}

/* Every parameter's gradient of L = sum_b c_b logp_b (+ d_b entropy_b)
 * against central differences of the formula in double, and of the
 * library's float function; backward ADDS (starts from a nonzero
 * dparams). */
static void t_grad_log_prob_and_entropy(void)
{
	/* Moderate samples, so that float differences keep digits. */
	const float u[B * A] = {0.1f, -1.0f, 2.5f, 0.05f, 1.2f, -0.9f, -4.0f, 1.4f, 0.1f};
	const float c[B] = {0.7f, -1.3f, 0.4f}, d[B] = {0.2f, 0.5f, -1.1f};
	float g[B * 2 * A], base[B * 2 * A];
	for (int i = 0; i < B * 2 * A; i++)
		g[i] = base[i] = 0.25f * (float)(i % 5) - 0.5f;
	seed_gaussian_log_prob_backward(B, A, P, u, c, g);
	seed_gaussian_entropy_backward(B, A, P, d, g);
	int bad = 0;
	for (int b = 0; b < B; b++)
		for (int j = 0; j < 2 * A; j++) {
			int k = b * 2 * A + j;
			double p[2 * A];
			for (int i = 0; i < 2 * A; i++)
				p[i] = P[b * 2 * A + i];
			const double h = 1e-6;
			p[j] += h;
			double lp = logp_ref(p, u + b * A);
			p[j] -= 2 * h;
			double lm = logp_ref(p, u + b * A);
			double want = c[b] * (lp - lm) / (2 * h) + (j >= A ? d[b] : 0.0);
			double got = (double)g[k] - base[k];
			if (fabs(got - want) > 1e-5 * (1 + fabs(want)) && bad++ < 5)
				printf("# row %d param %d: backward %.9g, differences %.9g\n", b, j, got,
				       want);
			/* The library's own float log-probability, both squash
			 * modes (the squash terms do not depend on params). */
			for (int sq = 0; sq < 2; sq++) {
				float q[B * 2 * A], lpf[B], lmf[B];
				memcpy(q, P, sizeof q);
				const float hf = 1e-2f;
				float fp = P[k] + hf, fm = P[k] - hf;
				q[k] = fp;
				seed_gaussian_log_prob(B, A, q, u, (seed_squash)sq, LO, HI, lpf);
				q[k] = fm;
				seed_gaussian_log_prob(B, A, q, u, (seed_squash)sq, LO, HI, lmf);
				double num = c[b] * ((double)lpf[b] - lmf[b]) / ((double)fp - fm);
				double gl = (double)g[k] - base[k] - (j >= A ? d[b] : 0.0);
				if (fabs(gl - num) > 2e-3 * (1 + fabs(num)) && bad++ < 5)
					printf("# squash %d row %d param %d: backward %.6g, float "
					       "differences %.6g\n",
					       sq, b, j, gl, num);
			}
		}
	CHECK(bad == 0);
}

static void t_sample_moments(void)
{
	enum { N = 200000 };
	const float p[4] = {0.5f, -2.0f, -0.3f, 0.4f}; /* A = 2: means, log stds */
	float *u = malloc((size_t)N * 2 * sizeof *u);
	float *rows = malloc((size_t)N * 4 * sizeof *rows);
	for (int r = 0; r < N; r++)
		memcpy(rows + (size_t)r * 4, p, sizeof p);
	seed_rng rng;
	seed_rng_init(&rng, 42, 7);
	seed_gaussian_sample(N, 2, rows, &rng, u);
	for (int i = 0; i < 2; i++) {
		double s = 0, s2 = 0, sd = exp((double)p[2 + i]);
		for (int r = 0; r < N; r++)
			s += u[(size_t)r * 2 + i];
		double mean = s / N;
		for (int r = 0; r < N; r++) {
			double x = u[(size_t)r * 2 + i] - mean;
			s2 += x * x;
		}
		double std = sqrt(s2 / (N - 1));
		/* 5 standard errors: sd / sqrt(N) for the mean, about
		 * sd / sqrt(2N) for the standard deviation (normal data). */
		CHECK_NEAR(mean, p[i], 5 * sd / sqrt((double)N));
		CHECK_NEAR(std, sd, 5 * sd / sqrt(2.0 * N));
	}
	/* Deterministic under a seed, and exactly A normals per row in row
	 * order: the same generator gives mean + std z by hand. */
	seed_rng a, c;
	seed_rng_init(&a, 9, 1);
	seed_rng_init(&c, 9, 1);
	float v[B * A], w[B * A];
	seed_gaussian_sample(B, A, P, &a, v);
	for (int b = 0; b < B; b++)
		for (int i = 0; i < A; i++) {
			double z = seed_rng_normal(&c);
			w[b * A + i] =
			    (float)((double)P[b * 2 * A + i] + exp((double)P[b * 2 * A + A + i]) * z);
		}
	CHECK(memcmp(v, w, sizeof v) == 0);
	CHECK(seed_rng_u64(&a) == seed_rng_u64(&c));
	free(u);
	free(rows);
}

int main(void)
{
	load();
	TAP_RUN(t_golden_values);
	TAP_RUN(t_mean_and_clip_infinite);
	TAP_RUN(t_squash_names_and_bounds);
	TAP_RUN(t_grad_log_prob_and_entropy);
	TAP_RUN(t_sample_moments);
	return tap_done();
}
