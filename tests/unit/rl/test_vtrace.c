/* test_vtrace.c: seed_vtrace against the IMPALA paper's explicit formula
 * (tests/golden/vtrace_golden.h from tests/golden/vtrace_ref.py), against hand-worked
 * and on-policy returns, in place, and on bad arguments. */
#include "seed/vtrace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "vtrace_golden.h"

#define NGOLDEN ((int)(sizeof vtrace_golden / sizeof vtrace_golden[0]))

/* The brief's tolerance: 1e-5 relative, with a small absolute floor for
 * values near zero.  Results are float-rounded from double, so the real
 * error is ~1e-7. */
static int close_rel(double got, double want)
{
	return fabs(got - want) <= 1e-5 * fabs(want) + 1e-6;
}

static void t_golden(void)
{
	for (int k = 0; k < NGOLDEN; k++) {
		const struct vtrace_golden *g = &vtrace_golden[k];
		const int n = g->T * g->B;
		float *vs = calloc((size_t)n, sizeof *vs), *adv = calloc((size_t)n, sizeof *adv);
		int rc = seed_vtrace(g->T, g->B, g->log_rhos, g->discounts, g->rewards, g->values,
		                     g->bootstrap, g->clip_rho, g->clip_pg_rho, g->lambda, vs, adv);
		CHECK_MSG(rc == 0, "%s: rc %d", g->name, rc);
		double worst = 0;
		int bad = 0;
		for (int i = 0; i < n && !bad; i++) {
			if (!close_rel(vs[i], g->vs[i]) || !close_rel(adv[i], g->adv[i])) {
				CHECK_MSG(0, "%s[%d]: vs %.9g want %.17g, adv %.9g want %.17g", g->name, i,
				          vs[i], g->vs[i], adv[i], g->adv[i]);
				bad = 1;
			}
			double e1 = fabs(vs[i] - g->vs[i]) / fmax(fabs(g->vs[i]), 1e-3);
			double e2 = fabs(adv[i] - g->adv[i]) / fmax(fabs(g->adv[i]), 1e-3);
			worst = fmax(worst, fmax(e1, e2));
		}
		printf("# %-24s T=%-3d B=%d max relative error %.2g\n", g->name, g->T, g->B, worst);
		free(vs);
		free(adv);
	}
}

/* Worked by hand: rho = (2, 0.5), so clipped rho = c = (1, 0.5).
 *   delta_1 = 0.5 (2 + 0.5*6 - 4) = 0.5        v_1 = 4 + 0.5 = 4.5
 *   delta_0 = 1 (1 + 0.5*4 - 3) = 0             v_0 = 3 + 0 + 0.5*1*0.5 = 3.25
 *   A_1 = 0.5 (2 + 0.5*6 - 4) = 0.5             A_0 = 1 (1 + 0.5*4.5 - 3) = 0.25 */
static void t_hand_worked(void)
{
	const float lr[] = {logf(2.0f), logf(0.5f)}, d[] = {0.5f, 0.5f}, r[] = {1, 2}, v[] = {3, 4};
	const float boot[] = {6};
	float vs[2], adv[2];
	CHECK(seed_vtrace(2, 1, lr, d, r, v, boot, 1.0f, 1.0f, 1.0f, vs, adv) == 0);
	CHECK_NEAR(vs[0], 3.25, 1e-6);
	CHECK_NEAR(vs[1], 4.5, 1e-6);
	CHECK_NEAR(adv[0], 0.25, 1e-6);
	CHECK_NEAR(adv[1], 0.5, 1e-6);
	/* Without clipping rho_0 = 2 counts in full: delta_0 stays 0 (its TD
	 * error is 0) and A_0 = 2 * 0.25 = 0.5. */
	CHECK(seed_vtrace(2, 1, lr, d, r, v, boot, INFINITY, INFINITY, 1.0f, vs, adv) == 0);
	CHECK_NEAR(vs[0], 3.25, 1e-6);
	CHECK_NEAR(adv[0], 0.5, 1e-6);
}

/* On-policy (log rho = 0) with lambda = 1, V-trace is the n-step discounted
 * return bootstrapped from V(x_T), whatever the values are; an episode end
 * (discount 0) cuts the sum. */
static void t_on_policy_is_nstep_return(void)
{
	enum { T = 6, B = 2 };
	float lr[T * B] = {0}, d[T * B], r[T * B], v[T * B], boot[B] = {10, -3}, vs[T * B], adv[T * B];
	for (int i = 0; i < T * B; i++) {
		d[i] = 0.95f;
		r[i] = (float)(i % 5) - 1.5f;
		v[i] = 0.25f * (float)i - 1;
	}
	d[3 * B + 1] = 0; /* sequence 1 ends at t = 3 */
	CHECK(seed_vtrace(T, B, lr, d, r, v, boot, 1.0f, 1.0f, 1.0f, vs, adv) == 0);
	for (int b = 0; b < B; b++) {
		for (int s = 0; s < T; s++) {
			double ret = 0, w = 1;
			for (int t = s; t < T; t++) {
				ret += w * r[t * B + b];
				w *= d[t * B + b];
			}
			ret += w * boot[b];
			CHECK_NEAR(vs[s * B + b], ret, 1e-5 * fabs(ret) + 1e-6);
			/* and the advantage is the one-step TD error on vs */
			double next = s + 1 < T ? vs[(s + 1) * B + b] : boot[b];
			double a = r[s * B + b] + d[s * B + b] * next - v[s * B + b];
			CHECK_NEAR(adv[s * B + b], a, 1e-5 * fabs(a) + 1e-6);
		}
	}
}

/* The example in seed_vtrace(3). */
static void t_man_page_example(void)
{
	float lr[2] = {0, 0}, d[2] = {0.9f, 0.9f}, r[2] = {1, 1};
	float v[2] = {0, 0}, boot[1] = {10}, vs[2], adv[2];
	CHECK(seed_vtrace(2, 1, lr, d, r, v, boot, 1.0f, 1.0f, 1.0f, vs, adv) == 0);
	CHECK_NEAR(vs[0], 10.0, 1e-5);
	CHECK_NEAR(vs[1], 10.0, 1e-5);
}

/* Outputs may overwrite inputs of the same shape. */
static void t_in_place(void)
{
	const struct vtrace_golden *g = &vtrace_golden[2];
	const int n = g->T * g->B;
	float *vs = malloc((size_t)n * sizeof *vs), *adv = malloc((size_t)n * sizeof *adv);
	float *values = malloc((size_t)n * sizeof *values), *rewards = malloc((size_t)n * sizeof *rewards);
	CHECK(seed_vtrace(g->T, g->B, g->log_rhos, g->discounts, g->rewards, g->values, g->bootstrap,
	                  g->clip_rho, g->clip_pg_rho, g->lambda, vs, adv) == 0);
	memcpy(values, g->values, (size_t)n * sizeof *values);
	memcpy(rewards, g->rewards, (size_t)n * sizeof *rewards);
	CHECK(seed_vtrace(g->T, g->B, g->log_rhos, g->discounts, rewards, values, g->bootstrap, g->clip_rho,
	                  g->clip_pg_rho, g->lambda, values, rewards) == 0);
	CHECK(memcmp(values, vs, (size_t)n * sizeof *vs) == 0);
	CHECK(memcmp(rewards, adv, (size_t)n * sizeof *adv) == 0);
	free(vs);
	free(adv);
	free(values);
	free(rewards);
}

/* A NaN ratio must reach the outputs rather than be clipped into a number. */
static void t_nan_propagates(void)
{
	const float lr[] = {NAN, 0}, d[] = {0.9f, 0.9f}, r[] = {1, 1}, v[] = {0, 0}, boot[] = {0};
	float vs[2], adv[2];
	CHECK(seed_vtrace(2, 1, lr, d, r, v, boot, 1.0f, 1.0f, 1.0f, vs, adv) == 0);
	CHECK(isnan(vs[0]) && isnan(adv[0]));
	CHECK(!isnan(vs[1]) && !isnan(adv[1]));
}

static void t_errors(void)
{
	const float x[4] = {0, 0, 0, 0};
	float vs[4], adv[4];
	for (int i = 0; i < 4; i++)
		vs[i] = adv[i] = 42;
	CHECK(seed_vtrace(0, 1, x, x, x, x, x, 1, 1, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(1, 0, x, x, x, x, x, 1, 1, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(-3, 2, x, x, x, x, x, 1, 1, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, NULL, x, x, x, x, 1, 1, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, NULL, x, x, x, 1, 1, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, NULL, x, x, 1, 1, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, NULL, x, 1, 1, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, NULL, 1, 1, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, 1, 1, 1, NULL, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, 1, 1, 1, vs, NULL) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, 1, 1, 1, vs, vs) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, NAN, 1, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, 1, NAN, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, 1, 1, NAN, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, -1, 1, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, 1, -0.5f, 1, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, 1, 1, -0.1f, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, 1, 1, 1.5f, vs, adv) == -EINVAL);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, -INFINITY, 1, 1, vs, adv) == -EINVAL);
	for (int i = 0; i < 4; i++)
		CHECK(vs[i] == 42 && adv[i] == 42);
	/* the edges of the valid ranges */
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, 0, 0, 0, vs, adv) == 0);
	CHECK(seed_vtrace(2, 2, x, x, x, x, x, INFINITY, INFINITY, 1, vs, adv) == 0);
}

int main(void)
{
	TAP_RUN(t_golden);
	TAP_RUN(t_hand_worked);
	TAP_RUN(t_on_policy_is_nstep_return);
	TAP_RUN(t_man_page_example);
	TAP_RUN(t_in_place);
	TAP_RUN(t_nan_propagates);
	TAP_RUN(t_errors);
	return tap_done();
}
