/* test_r2d2.c: the R2D2 rescaling, n-step targets and loss (seed_r2d2(3))
 * against the definitions evaluated by tests/golden/r2d2_ref.py
 * (tests/golden/r2d2_golden.h), against the worked examples of SEED RL's
 * agents/r2d2/learner_test.py, by hand, by round trips of the rescaling to
 * within 2 ulps, by finite differences of the loss, and on bad arguments. */
#include "seed/r2d2.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "r2d2_golden.h"
#include "tap.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* 1e-5 relative with a small absolute floor; outputs are rounded from
 * double, so the real error is near float rounding (~1e-7). */
static int close_rel(double got, double want)
{
	return fabs(got - want) <= 1e-5 * fabs(want) + 1e-6;
}

/* tf.test.TestCase.assertAllClose: |got - want| <= atol + rtol |want|, with
 * its defaults rtol = atol = 1e-6 unless the test gives atol. */
static int all_close(double got, double want, double atol)
{
	return fabs(got - want) <= atol + 1e-6 * fabs(want);
}

/* Distance in units in the last place between two finite floats. */
static int64_t ulps(float a, float b)
{
	int32_t ia, ib;
	memcpy(&ia, &a, sizeof ia);
	memcpy(&ib, &b, sizeof ib);
	/* Map the sign-magnitude bit patterns onto a monotonic integer line. */
	int64_t la = ia < 0 ? (int64_t)INT32_MIN - ia : ia;
	int64_t lb = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
	return la > lb ? la - lb : lb - la;
}

static void t_golden_nstep(void)
{
	for (int k = 0; k < LEN(nstep_golden); k++) {
		const struct nstep_golden *g = &nstep_golden[k];
		const int n = g->T * g->B;
		float *y = calloc((size_t)n, sizeof *y);
		int rc = seed_nstep_targets(g->T, g->B, g->n, g->gamma, g->rewards, g->done, g->q_boot, y);
		CHECK_MSG(rc == 0, "%s: rc %d", g->name, rc);
		double worst = 0;
		for (int i = 0; i < n; i++) {
			CHECK_MSG(close_rel(y[i], g->y[i]), "%s[%d]: %.9g want %.17g", g->name, i, y[i],
			          g->y[i]);
			worst = fmax(worst, fabs(y[i] - g->y[i]) / fmax(fabs(g->y[i]), 1e-3));
		}
		printf("# %-24s T=%-2d B=%d n=%d max relative error %.2g\n", g->name, g->T, g->B, g->n,
		       worst);
		free(y);
	}
}

static void t_golden_loss(void)
{
	for (int k = 0; k < LEN(r2d2_golden); k++) {
		const struct r2d2_golden *g = &r2d2_golden[k];
		const int nq = g->T * g->B * g->A;
		float *prio = calloc((size_t)g->B, sizeof *prio), *loss = calloc((size_t)g->B, sizeof *loss);
		float *grad = calloc((size_t)nq, sizeof *grad);
		int rc = seed_r2d2_loss(g->T, g->B, g->A, g->n, g->gamma, g->eps, g->eta, g->q_online,
		                        g->q_target, g->actions, g->rewards, g->done, prio, loss, grad);
		CHECK_MSG(rc == 0, "%s: rc %d", g->name, rc);
		double worst = 0;
		for (int b = 0; b < g->B; b++) {
			CHECK_MSG(close_rel(prio[b], g->priorities[b]), "%s: priority[%d] %.9g want %.17g",
			          g->name, b, prio[b], g->priorities[b]);
			CHECK_MSG(close_rel(loss[b], g->loss[b]), "%s: loss[%d] %.9g want %.17g", g->name, b,
			          loss[b], g->loss[b]);
			worst = fmax(worst, fabs(prio[b] - g->priorities[b]) / fmax(g->priorities[b], 1e-3));
			worst = fmax(worst, fabs(loss[b] - g->loss[b]) / fmax(g->loss[b], 1e-3));
		}
		for (int i = 0; i < nq; i++) {
			CHECK_MSG(close_rel(grad[i], g->grad[i]), "%s: grad[%d] %.9g want %.17g", g->name, i,
			          grad[i], g->grad[i]);
			worst = fmax(worst, fabs(grad[i] - g->grad[i]) / fmax(fabs(g->grad[i]), 1e-3));
		}
		printf("# %-24s T=%-2d B=%d A=%d n=%d tied rows %-2d max relative error %.2g\n", g->name,
		       g->T, g->B, g->A, g->n, g->ties, worst);
		/* Without a gradient buffer the same losses and priorities. */
		float prio2[8], loss2[8];
		CHECK(g->B <= 8);
		CHECK(seed_r2d2_loss(g->T, g->B, g->A, g->n, g->gamma, g->eps, g->eta, g->q_online,
		                     g->q_target, g->actions, g->rewards, g->done, prio2, loss2, NULL) == 0);
		CHECK(memcmp(prio2, prio, (size_t)g->B * sizeof *prio) == 0);
		CHECK(memcmp(loss2, loss, (size_t)g->B * sizeof *loss) == 0);
		free(prio);
		free(loss);
		free(grad);
	}
}

/* google-research/seed_rl, agents/r2d2/learner_test.py,
 * LearnerTest.test_value_function_rescaling, with the flag's default
 * value_function_rescaling_epsilon = 1e-3.  Expectations as written there. */
static void t_seed_value_function_rescaling(void)
{
	const float eps = 1e-3f;
	/* for x in np.linspace(-100., 100.): h^-1(h(x)) allclose x (50 points) */
	for (int i = 0; i < 50; i++) {
		const float x = (float)(-100.0 + 200.0 * i / 49.0);
		const float back = seed_value_rescale_inv(seed_value_rescale(x, eps), eps);
		CHECK_MSG(all_close(back, x, 1e-6), "h^-1(h(%.9g)) = %.9g", x, back);
	}
	CHECK(seed_value_rescale(0.f, eps) == 0);
	CHECK(seed_value_rescale(1000.f, eps) > 10);
	CHECK(seed_value_rescale(-1000.f, eps) < -10);
	CHECK(seed_value_rescale_inv(0.f, eps) == 0);
	/* h([0, 3, -3]) allclose [0, 1 + 3e-3, -1 - 3e-3] */
	CHECK(all_close(seed_value_rescale(0.f, eps), 0, 1e-6));
	CHECK(all_close(seed_value_rescale(3.f, eps), 1 + 3e-3, 1e-6));
	CHECK(all_close(seed_value_rescale(-3.f, eps), -1 - 3e-3, 1e-6));
	/* h^-1([0, 1 + 3e-3, -1 - 3e-3]) allclose [0, 3, -3] with atol = 2e-4 */
	CHECK(all_close(seed_value_rescale_inv(0.f, eps), 0, 2e-4));
	CHECK(all_close(seed_value_rescale_inv((float)(1 + 3e-3), eps), 3, 2e-4));
	CHECK(all_close(seed_value_rescale_inv((float)(-1 - 3e-3), eps), -3, 2e-4));
	/* SEED needs atol 2e-4 because its form cancels; this one does not.  The
	 * float nearest 1.003 is off by at most 6e-8 and h^-1 has slope 4 there,
	 * so 2.4e-7 is all that is left. */
	CHECK_NEAR(seed_value_rescale_inv((float)(1 + 3e-3), eps), 3, 2e-6);
}

/* learner_test.py passes [time, batch] arrays with batch = 1
 * (np.array([[...]]).T has shape [T, 1]), already this module's time-major
 * layout; its q_target is our q_boot, index for index. */
static void nstep_seed_case(const char *name, int T, int n, const float *r, const uint8_t *d, const float *q,
                            const double *want)
{
	float y[8];
	CHECK_MSG(seed_nstep_targets(T, 1, n, 0.9f, r, d, q, y) == 0, "%s", name);
	for (int t = 0; t < T; t++)
		CHECK_MSG(all_close(y[t], want[t], 1e-6), "%s: y[%d] = %.9g want %.9g", name, t, y[t],
		          want[t]);
}

/* LearnerTest.test_n_step_bellman_target_one_step */
static void t_seed_n_step_one_step(void)
{
	const float r[] = {1, 2, 3}, q[] = {100, 200, 300};
	const uint8_t d[] = {0, 0, 0};
	const double want[] = {1 + 0.9 * 100, 2 + 0.9 * 200, 3 + 0.9 * 300};
	nstep_seed_case("one_step", 3, 1, r, d, q, want);
}

/* LearnerTest.test_n_step_bellman_target_one_step_with_done */
static void t_seed_n_step_one_step_with_done(void)
{
	const float r[] = {1, 2, 3}, q[] = {100, 200, 300};
	const uint8_t d[] = {0, 1, 0};
	const double want[] = {1 + 0.9 * 100, 2, 3 + 0.9 * 300};
	nstep_seed_case("one_step_with_done", 3, 1, r, d, q, want);
}

/* LearnerTest.test_n_step_bellman_target_two_steps */
static void t_seed_n_step_two_steps(void)
{
	const float r[] = {1, 2, 3}, q[] = {100, 200, 300};
	const uint8_t d[] = {0, 0, 0};
	const double want[] = {
	    1 + 0.9 * 2 + 0.9 * 0.9 * 200, 2 + 0.9 * 3 + 0.9 * 0.9 * 300,
	    3 + 0.9 * 300, /* "Last target is actually 1-step." */
	};
	nstep_seed_case("two_steps", 3, 2, r, d, q, want);
}

/* LearnerTest.test_n_step_bellman_target_three_steps_done */
static void t_seed_n_step_three_steps_done(void)
{
	const float r[] = {1, 2, 3, 4, 5, 6, 7}, q[] = {100, 200, 300, 400, 500, 600, 700};
	const uint8_t d[] = {0, 0, 0, 1, 0, 0, 0};
	const double g2 = 0.9 * 0.9, g3 = 0.9 * 0.9 * 0.9;
	const double want[] = {
	    1 + 0.9 * 2 + g2 * 3 + g3 * 300,
	    2 + 0.9 * 3 + g2 * 4,
	    3 + 0.9 * 4,
	    4,
	    5 + 0.9 * 6 + g2 * 7 + g3 * 700,
	    6 + 0.9 * 7 + g2 * 700, /* "Actually 2-step." */
	    7 + 0.9 * 700,          /* "Actually 1-step." */
	};
	nstep_seed_case("three_steps_done", 7, 3, r, d, q, want);
}

/* h^-1(h(x)) and h(h^-1(x)) give x back to within 2 ulps from 1e-6 to 1e6,
 * both signs, eps = 1e-3 and 0. */
static void t_rescale_round_trip(void)
{
	const float epss[] = {1e-3f, 0.0f};
	for (int e = 0; e < 2; e++) {
		int64_t worst1 = 0, worst2 = 0;
		for (int k = -600; k <= 600; k++) {
			for (int s = -1; s <= 1; s += 2) {
				const float x = (float)(s * pow(10.0, k / 100.0));
				const float y = seed_value_rescale(x, epss[e]);
				const float a = seed_value_rescale_inv(y, epss[e]);
				const float z = seed_value_rescale_inv(x, epss[e]);
				const float c = seed_value_rescale(z, epss[e]);
				CHECK_MSG(isfinite(a) && ulps(a, x) <= 2, "eps %g: h^-1(h(%.9g)) = %.9g",
				          epss[e], x, a);
				CHECK_MSG(isfinite(c) && ulps(c, x) <= 2, "eps %g: h(h^-1(%.9g)) = %.9g",
				          epss[e], x, c);
				if (ulps(a, x) > worst1)
					worst1 = ulps(a, x);
				if (ulps(c, x) > worst2)
					worst2 = ulps(c, x);
			}
		}
		printf("# eps %g: worst h^-1(h(x)) %d ulp, h(h^-1(x)) %d ulp over 2402 points\n", epss[e],
		       (int)worst1, (int)worst2);
	}
	CHECK(seed_value_rescale(-0.0f, 1e-3f) == 0 && seed_value_rescale_inv(-0.0f, 1e-3f) == 0);
	CHECK(isnan(seed_value_rescale(NAN, 1e-3f)) && isnan(seed_value_rescale_inv(NAN, 1e-3f)));
}

/* Against formulas the code does not use: sqrt(1 + a) - 1 = expm1(log1p(a) / 2)
 * and, for eps = 0, h^-1(x) = sign(x) |x| (|x| + 2).  Tiny inputs keep their
 * relative precision (the published forms lose it to cancellation). */
static void t_rescale_independent(void)
{
	const double xs[] = {1e-30, 3e-12, 1e-6, 0.5, 1, 3, 99, 12345.678, 1e7};
	const double epss[] = {1e-3, 0.0, 0.25};
	for (int i = 0; i < LEN(xs); i++) {
		for (int e = 0; e < LEN(epss); e++) {
			for (int s = -1; s <= 1; s += 2) {
				const float x = (float)(s * xs[i]);
				const double a = fabs((double)x);
				const double want = s * expm1(log1p(a) / 2) + epss[e] * x;
				const float got = seed_value_rescale(x, (float)epss[e]);
				CHECK_MSG(fabs(got - want) <= 6e-8 * fabs(want),
				          "h(%.9g, %g) = %.9g want %.17g", x, epss[e], got, want);
			}
		}
		const float x = (float)xs[i];
		const double want = (double)x * ((double)x + 2);
		const float got = seed_value_rescale_inv(x, 0.0f);
		CHECK_MSG(fabs(got - want) <= 6e-8 * want, "h^-1(%.9g, 0) = %.9g want %.17g", x, got, want);
		CHECK(seed_value_rescale_inv(-x, 0.0f) == -got);
	}
}

/* With eps = 0 the rescaling has round values: h(3) = 1, h(8) = 2, and
 * h^-1(1) = 3.  T = 2, B = 1, A = 2, actions (0, .):
 *   argmax q_online[1] = (1, 2) is 1, so q_boot[1] = h^-1(q_target[1][1]) = h^-1(1) = 3
 *   y_1 = r_1 + gamma q_boot[1] = 1.5 + 0.5 * 3 = 3, target h(3) = 1
 *   delta_0 = 1 - q_online[0][0] = 1 - 0.25 = 0.75
 *   loss = 0.5 * 0.75^2 = 0.28125, priority = 0.75 (one step: max = mean),
 *   gradient -0.75 at (0, 0, 0) and 0 elsewhere.
 * This is the example in seed_r2d2(3). */
static void t_hand_worked(void)
{
	const float q_online[] = {0.25f, -1, 1, 2}, q_target[] = {7, -7, 5, 1};
	const int32_t actions[] = {0, 1};
	const float rewards[] = {-9, 1.5f};
	const uint8_t done[] = {0, 0};
	float prio, loss, grad[4];
	CHECK(seed_r2d2_loss(2, 1, 2, 1, 0.5f, 0, 0.9f, q_online, q_target, actions, rewards, done, &prio,
	                     &loss, grad) == 0);
	CHECK_NEAR(loss, 0.28125, 1e-7);
	CHECK_NEAR(prio, 0.75, 1e-7);
	CHECK_NEAR(grad[0], -0.75, 1e-7);
	CHECK(grad[1] == 0 && grad[2] == 0 && grad[3] == 0);

	/* An episode end at observation 1 drops the bootstrap, even an infinite
	 * one: y_1 = r_1 = 3, h(3) = 1, the same TD error. */
	const float q_target_inf[] = {7, -7, 5, INFINITY};
	const float rewards_end[] = {-9, 3};
	const uint8_t done_end[] = {0, 1};
	CHECK(seed_r2d2_loss(2, 1, 2, 1, 0.5f, 0, 0.9f, q_online, q_target_inf, actions, rewards_end,
	                     done_end, &prio, &loss, grad) == 0);
	CHECK_NEAR(loss, 0.28125, 1e-7);
	CHECK_NEAR(prio, 0.75, 1e-7);

	/* n = 3 on T = 2 is the 1-step target: the only later bootstrap is q_boot[1]. */
	CHECK(seed_r2d2_loss(2, 1, 2, 3, 0.5f, 0, 0.9f, q_online, q_target, actions, rewards, done, &prio,
	                     &loss, grad) == 0);
	CHECK_NEAR(loss, 0.28125, 1e-7);
}

/* Ties in the double-Q argmax go to the lowest index: q_online[1] = (2, 2)
 * picks action 0, q_target[1][0] = h(8) -> q_boot = 8 with eps = 0; gamma = 1,
 * r = 0: target h(8) = 2, delta = 2 - 0 = 2.  Picking index 1 would give
 * q_target[1][1] = 0, delta 0. */
static void t_ties_lowest_index(void)
{
	const float q_online[] = {0, 0, 2, 2}, q_target[] = {0, 0, 2, 0};
	const int32_t actions[] = {0, 0};
	const float rewards[] = {0, 0};
	const uint8_t done[] = {0, 0};
	float prio, loss;
	CHECK(seed_r2d2_loss(2, 1, 2, 1, 1.0f, 0, 0.9f, q_online, q_target, actions, rewards, done, &prio,
	                     &loss, NULL) == 0);
	CHECK_NEAR(prio, 2, 1e-6);
	CHECK_NEAR(loss, 2, 1e-6);
}

/* priorities = eta max + (1 - eta) mean of |delta| over the T - 1 steps: with
 * eps = 0, gamma = 0 and n = 1 the targets are h(r_{t+1}); r = (., 0, 3, 8)
 * makes them (0, 1, 2), and q_online at the actions 0 gives |delta| = (0, 1, 2):
 * max 2, mean 1, loss 0.5 (0 + 1 + 4) = 2.5. */
static void t_priority_mix(void)
{
	const float q_online[4] = {0, 0, 0, 0}, q_target[4] = {0, 0, 0, 0};
	const int32_t actions[4] = {0, 0, 0, 0};
	const float rewards[] = {5, 0, 3, 8};
	const uint8_t done[4] = {0, 0, 0, 0};
	const float etas[] = {0, 0.25f, 1};
	for (int i = 0; i < LEN(etas); i++) {
		float prio, loss;
		CHECK(seed_r2d2_loss(4, 1, 1, 1, 0.0f, 0, etas[i], q_online, q_target, actions, rewards, done,
		                     &prio, &loss, NULL) == 0);
		CHECK_NEAR(prio, etas[i] * 2 + (1 - etas[i]) * 1, 1e-6);
		CHECK_NEAR(loss, 2.5, 1e-6);
	}
}

/* The gradient of sum_b loss[b] by central differences.  q_online rows are
 * spread at least 0.4 apart so that a step of 1e-2 never changes the argmax
 * (the loss is piecewise quadratic in q_online, so central differences have no
 * truncation error inside a piece; what is left is float rounding). */
static void t_gradient_fd(void)
{
	enum { T = 6, B = 3, A = 4, NQ = T * B * A };
	float q_online[NQ], q_target[NQ], rewards[T * B], grad[NQ], prio[B], loss[B];
	int32_t actions[T * B];
	uint8_t done[T * B];
	uint32_t s = 12345;
#define NEXT() ((s = s * 1664525u + 1013904223u) >> 8)
	for (int i = 0; i < T * B; i++) {
		/* a permutation of 0..A-1 per row, by a random rotation and direction */
		const int rot = (int)(NEXT() % A), dir = NEXT() % 2 ? 1 : A - 1;
		for (int a = 0; a < A; a++) {
			const int rank = (rot + dir * a) % A;
			q_online[i * A + a] =
			    0.5f * (float)rank - 0.75f + 0.1f * (float)(NEXT() % 1000) / 1000;
			q_target[i * A + a] = 3.0f * (float)(NEXT() % 2001) / 1000 - 3;
		}
		actions[i] = (int32_t)(NEXT() % A);
		rewards[i] = (float)(NEXT() % 2001) / 1000 - 1;
		done[i] = NEXT() % 5 == 0;
	}
#undef NEXT
	const int ns[] = {1, 3, 5};
	for (int c = 0; c < LEN(ns); c++) {
		CHECK(seed_r2d2_loss(T, B, A, ns[c], 0.97f, 1e-3f, 0.9f, q_online, q_target, actions, rewards,
		                     done, prio, loss, grad) == 0);
		double worst = 0;
		for (int i = 0; i < NQ; i++) {
			const float keep = q_online[i], h = 1e-2f;
			double sum[2];
			for (int side = 0; side < 2; side++) {
				q_online[i] = keep + (side ? -h : h);
				CHECK(seed_r2d2_loss(T, B, A, ns[c], 0.97f, 1e-3f, 0.9f, q_online, q_target,
				                     actions, rewards, done, prio, loss, NULL) == 0);
				sum[side] = 0;
				for (int b = 0; b < B; b++)
					sum[side] += loss[b];
			}
			q_online[i] = keep;
			const double fd = (sum[0] - sum[1]) / (2.0 * ((double)(keep + h) - keep));
			CHECK_MSG(fabs(fd - grad[i]) <= 1e-3 * fmax(1, fabs(grad[i])),
			          "n=%d: d loss / d q_online[%d] = %.9g, finite difference %.9g", ns[c], i,
			          grad[i], fd);
			worst = fmax(worst, fabs(fd - grad[i]));
		}
		printf("# n=%d: worst |finite difference - gradient| %.2g over %d entries\n", ns[c], worst,
		       NQ);
	}
}

/* targets may overwrite rewards or q_boot. */
static void t_nstep_in_place(void)
{
	const struct nstep_golden *g = &nstep_golden[2];
	const int n = g->T * g->B;
	float *want = malloc((size_t)n * sizeof *want), *buf = malloc((size_t)n * sizeof *buf);
	CHECK(seed_nstep_targets(g->T, g->B, g->n, g->gamma, g->rewards, g->done, g->q_boot, want) == 0);
	memcpy(buf, g->rewards, (size_t)n * sizeof *buf);
	CHECK(seed_nstep_targets(g->T, g->B, g->n, g->gamma, buf, g->done, g->q_boot, buf) == 0);
	CHECK(memcmp(buf, want, (size_t)n * sizeof *buf) == 0);
	memcpy(buf, g->q_boot, (size_t)n * sizeof *buf);
	CHECK(seed_nstep_targets(g->T, g->B, g->n, g->gamma, g->rewards, g->done, buf, buf) == 0);
	CHECK(memcmp(buf, want, (size_t)n * sizeof *buf) == 0);
	free(want);
	free(buf);
}

static void t_errors(void)
{
	const float x[12] = {0};
	const uint8_t d[4] = {0};
	const int32_t act[4] = {0, 1, 2, 0}, bad_act[4] = {0, 3, 0, 0}, neg_act[4] = {0, 0, -1, 0};
	float y[4], p[2], l[2], g[12];
	for (int i = 0; i < 4; i++)
		y[i] = 42;
	p[0] = p[1] = l[0] = l[1] = 42;
	for (int i = 0; i < 12; i++)
		g[i] = 42;

	CHECK(seed_nstep_targets(0, 1, 1, 0.9f, x, d, x, y) == -EINVAL);
	CHECK(seed_nstep_targets(2, 0, 1, 0.9f, x, d, x, y) == -EINVAL);
	CHECK(seed_nstep_targets(2, 2, 0, 0.9f, x, d, x, y) == -EINVAL);
	CHECK(seed_nstep_targets(2, 2, 1, -0.1f, x, d, x, y) == -EINVAL);
	CHECK(seed_nstep_targets(2, 2, 1, 1.01f, x, d, x, y) == -EINVAL);
	CHECK(seed_nstep_targets(2, 2, 1, NAN, x, d, x, y) == -EINVAL);
	CHECK(seed_nstep_targets(2, 2, 1, 0.9f, NULL, d, x, y) == -EINVAL);
	CHECK(seed_nstep_targets(2, 2, 1, 0.9f, x, NULL, x, y) == -EINVAL);
	CHECK(seed_nstep_targets(2, 2, 1, 0.9f, x, d, NULL, y) == -EINVAL);
	CHECK(seed_nstep_targets(2, 2, 1, 0.9f, x, d, x, NULL) == -EINVAL);
	for (int i = 0; i < 4; i++)
		CHECK(y[i] == 42);

		/* T = 2, B = 2, A = 3 */
#define LOSS(T, B, A, n, gamma, eps, eta, qo, qt, a, r, dn, pr, ls, gr)                                      \
	seed_r2d2_loss(T, B, A, n, gamma, eps, eta, qo, qt, a, r, dn, pr, ls, gr)
	CHECK(LOSS(1, 2, 3, 1, 0.9f, 1e-3f, 0.9f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 0, 3, 1, 0.9f, 1e-3f, 0.9f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 0, 1, 0.9f, 1e-3f, 0.9f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 0, 0.9f, 1e-3f, 0.9f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, -0.5f, 1e-3f, 0.9f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 1.5f, 1e-3f, 0.9f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, NAN, 1e-3f, 0.9f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, -1e-3f, 0.9f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, NAN, 0.9f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, INFINITY, 0.9f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, -0.1f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, 1.1f, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, NAN, x, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, 0.9f, NULL, x, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, 0.9f, x, NULL, act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, 0.9f, x, x, NULL, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, 0.9f, x, x, act, NULL, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, 0.9f, x, x, act, x, NULL, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, 0.9f, x, x, act, x, d, NULL, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, 0.9f, x, x, act, x, d, p, NULL, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, 0.9f, x, x, bad_act, x, d, p, l, g) == -EINVAL);
	CHECK(LOSS(2, 2, 3, 1, 0.9f, 1e-3f, 0.9f, x, x, neg_act, x, d, p, l, g) == -EINVAL);
	CHECK(p[0] == 42 && p[1] == 42 && l[0] == 42 && l[1] == 42);
	for (int i = 0; i < 12; i++)
		CHECK(g[i] == 42);
	/* the edges of the valid ranges */
	CHECK(LOSS(2, 2, 3, 1, 0.0f, 0.0f, 0.0f, x, x, act, x, d, p, l, g) == 0);
	CHECK(LOSS(2, 2, 3, 1, 1.0f, 1e-3f, 1.0f, x, x, act, x, d, p, l, NULL) == 0);
	CHECK(seed_nstep_targets(1, 1, 1, 1.0f, x, d, x, y) == 0);
#undef LOSS
}

int main(void)
{
	TAP_RUN(t_golden_nstep);
	TAP_RUN(t_golden_loss);
	TAP_RUN(t_seed_value_function_rescaling);
	TAP_RUN(t_seed_n_step_one_step);
	TAP_RUN(t_seed_n_step_one_step_with_done);
	TAP_RUN(t_seed_n_step_two_steps);
	TAP_RUN(t_seed_n_step_three_steps_done);
	TAP_RUN(t_rescale_round_trip);
	TAP_RUN(t_rescale_independent);
	TAP_RUN(t_hand_worked);
	TAP_RUN(t_ties_lowest_index);
	TAP_RUN(t_priority_mix);
	TAP_RUN(t_gradient_fd);
	TAP_RUN(t_nstep_in_place);
	TAP_RUN(t_errors);
	return tap_done();
}
