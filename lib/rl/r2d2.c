/* r2d2.c: R2D2 value rescaling, n-step targets and loss (see seed/r2d2.h).
 *
 * The rescaling pair is evaluated in forms free of cancellation.  With
 * a = |x|:
 *
 *   h(x):     sqrt(a + 1) - 1 = a / (sqrt(a + 1) + 1)
 *   h^-1(x):  with R = sqrt(1 + 4 eps (a + 1 + eps)) = sqrt((1 + 2 eps)^2 + 4 eps a)
 *             and s = (R - 1) / (2 eps), the published form is s^2 - 1.
 *             Multiplying by (R + 1)/(R + 1) gives s = 2 (a + 1 + eps) / (R + 1),
 *             and s - 1 = 2 a / (1 + 2 eps + R) (rationalise once more with
 *             1 + 2 eps + R), so s^2 - 1 = d (d + 2) with d = 2 a / (1 + 2 eps + R).
 *
 * The last form is the same function, needs no division by eps (eps = 0
 * gives R = 1, d = a, d (d + 2) = (a + 1)^2 - 1) and loses no digits when a
 * is small, where the published one subtracts nearly equal numbers twice.
 *
 * The n-step targets are evaluated as the plain sum, O(T n) per sequence,
 * front to back: y_t reads inputs at indices >= t only, which is what makes
 * targets == rewards or targets == q_boot safe.
 */
#include "seed/r2d2.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "seed/buf.h"

static double rescale(double x, double eps)
{
	const double a = fabs(x);
	const double s = a / (sqrt(a + 1) + 1);
	return copysign(s, x) + eps * x;
}

static double rescale_inv(double x, double eps)
{
	const double a = fabs(x);
	const double R = sqrt((1 + 2 * eps) * (1 + 2 * eps) + 4 * eps * a);
	const double d = 2 * a / (1 + 2 * eps + R);
	return copysign(d * (d + 2), x);
}

float seed_value_rescale(float x, float eps)
{
	return (float)rescale(x, eps);
}

float seed_value_rescale_inv(float x, float eps)
{
	return (float)rescale_inv(x, eps);
}

/* The discounted reward part of y_t for one (t, b), in double; *w receives
 * the weight gamma^m prod_{k<m} (1 - done_{t+k}) of the bootstrap value at
 * index (t + m - 1) B + b, m = min(n, T - t). */
static double nstep_rewards(int T, int B, int n, double gamma, const float *rewards, const uint8_t *done,
                            int t, int b, double *w)
{
	const int m = n < T - t ? n : T - t;
	double y = 0, wi = 1; /* wi = gamma^i prod_{k<i} (1 - done_{t+k}) */
	for (int i = 0; i < m && wi != 0; i++) {
		const size_t j = (size_t)(t + i) * (size_t)B + (size_t)b;
		y += wi * rewards[j];
		wi *= done[j] ? 0.0 : gamma;
	}
	*w = wi;
	return y;
}

static size_t boot_index(int T, int B, int n, int t, int b)
{
	const int m = n < T - t ? n : T - t;
	return (size_t)(t + m - 1) * (size_t)B + (size_t)b;
}

/* y = rewards part + w * bootstrap, except that a zero weight (an episode end
 * within reach, or gamma = 0) leaves the bootstrap out entirely, so an
 * infinite value behind an episode end does not leak in as 0 * inf = NaN. */
static double add_boot(double y, double w, double boot)
{
	return w != 0 ? y + w * boot : y;
}

int seed_nstep_targets(int T, int B, int n, float gamma, const float *rewards, const uint8_t *done,
                       const float *q_boot, float *targets)
{
	if (T < 1 || B < 1 || n < 1 || !rewards || !done || !q_boot || !targets)
		return -EINVAL;
	if (!(gamma >= 0 && gamma <= 1)) /* also rejects NaN */
		return -EINVAL;
	for (int t = 0; t < T; t++)
		for (int b = 0; b < B; b++) {
			double w;
			const double y = nstep_rewards(T, B, n, gamma, rewards, done, t, b, &w);
			const double boot = q_boot[boot_index(T, B, n, t, b)];
			targets[(size_t)t * (size_t)B + (size_t)b] = (float)add_boot(y, w, boot);
		}
	return 0;
}

/* argmax over A values, ties to the lowest index.  A NaN is never chosen
 * unless it is at index 0 (every comparison with it is false). */
static int argmax(const float *q, int A)
{
	int best = 0;
	for (int a = 1; a < A; a++)
		if (q[a] > q[best])
			best = a;
	return best;
}

int seed_r2d2_loss(int T, int B, int A, int n, float gamma, float eps, float eta, const float *q_online,
                   const float *q_target, const int32_t *actions, const float *rewards, const uint8_t *done,
                   float *priorities, float *loss, float *grad_q_online)
{
	if (T < 2 || B < 1 || A < 1 || n < 1 || !q_online || !q_target || !actions || !rewards || !done ||
	    !priorities || !loss)
		return -EINVAL;
	if (!(gamma >= 0 && gamma <= 1) || !(eta >= 0 && eta <= 1) || !(eps >= 0) || isinf(eps))
		return -EINVAL;
	const size_t TB = (size_t)T * (size_t)B;
	for (size_t i = 0; i < TB; i++)
		if (actions[i] < 0 || actions[i] >= A)
			return -EINVAL;

	/* q_boot[t][b] = h^-1(q_target[t][b][argmax_a q_online[t][b][a]]). */
	double *q_boot = seed_xmalloc(TB * sizeof *q_boot);
	for (size_t i = 0; i < TB; i++) {
		const size_t row = i * (size_t)A;
		const int best = argmax(q_online + row, A);
		q_boot[i] = rescale_inv(q_target[row + (size_t)best], eps);
	}
	if (grad_q_online)
		for (size_t i = 0; i < TB * (size_t)A; i++)
			grad_q_online[i] = 0;

	for (int b = 0; b < B; b++) {
		double max_abs = 0, sum_abs = 0, sum_sq = 0;
		for (int t = 0; t + 1 < T; t++) {
			/* The target of step t is y_{t+1}: the transition out of
			 * observation t carries reward and done of observation t+1. */
			double w;
			double y = nstep_rewards(T, B, n, gamma, rewards, done, t + 1, b, &w);
			y = add_boot(y, w, q_boot[boot_index(T, B, n, t + 1, b)]);
			const size_t i = (size_t)t * (size_t)B + (size_t)b;
			const size_t k = i * (size_t)A + (size_t)actions[i];
			const double delta = rescale(y, eps) - q_online[k];
			const double ad = fabs(delta);
			/* The negated test lets a NaN through into the max. */
			if (!(ad <= max_abs))
				max_abs = ad;
			sum_abs += ad;
			sum_sq += delta * delta;
			if (grad_q_online)
				grad_q_online[k] = (float)-delta;
		}
		priorities[b] = (float)(eta * max_abs + (1.0 - eta) * sum_abs / (T - 1));
		loss[b] = (float)(0.5 * sum_sq);
	}
	free(q_boot);
	return 0;
}
