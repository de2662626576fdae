/* gaussian.c: the diagonal Gaussian policy (see seed/gaussian.h).
 *
 * Each row is A means then A log standard deviations; everything is
 * computed in double per element and summed in double per row, so that
 * log-probabilities of unlikely samples (importance weights take their
 * differences) keep their digits.  A is small (a few to a few dozen
 * dimensions): next to the model these loops cost nothing.
 */
#include "seed/gaussian.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* log sqrt(2 pi) and 1/2 (1 + log 2 pi), the constants of the density
 * and of the entropy per dimension. */
#define LOG_SQRT_2PI 0.91893853320467274178
#define ENTROPY_CONST 1.41893853320467274178
#define LOG2 0.69314718055994530942

const char *seed_gaussian_squash_name(seed_squash squash)
{
	return squash == SEED_SQUASH_TANH ? "tanh" : "clip";
}

int seed_gaussian_squash_parse(const char *name, seed_squash *out)
{
	if (name && strcmp(name, "clip") == 0)
		*out = SEED_SQUASH_CLIP;
	else if (name && strcmp(name, "tanh") == 0)
		*out = SEED_SQUASH_TANH;
	else
		return -EINVAL;
	return 0;
}

int seed_gaussian_check_bounds(int A, const float *low, const float *high, seed_squash squash, seed_err *err)
{
	for (int i = 0; i < A; i++) {
		double lo = low[i], hi = high[i];
		if (isnan(lo) || isnan(hi))
			return seed_err_set(err, -EINVAL, "action dimension %d: a bound is NaN", i);
		if (squash == SEED_SQUASH_TANH && (!isfinite(lo) || !isfinite(hi)))
			return seed_err_set(err, -EINVAL,
			                    "action dimension %d: bounds [%g, %g]: the tanh squash needs "
			                    "finite bounds (use clip)",
			                    i, lo, hi);
		if (squash == SEED_SQUASH_TANH ? !(lo < hi) : !(lo <= hi))
			return seed_err_set(err, -EINVAL, "action dimension %d: low %g is above high %g%s", i,
			                    lo, hi,
			                    squash == SEED_SQUASH_TANH ? " (or equal: tanh needs room)" : "");
	}
	return 0;
}

void seed_gaussian_sample(int B, int A, const float *params, seed_rng *rng, float *u)
{
	for (int b = 0; b < B; b++) {
		const float *mean = params + (size_t)b * 2 * A, *log_std = mean + A;
		for (int i = 0; i < A; i++) {
			double z = seed_rng_normal(rng);
			u[(size_t)b * A + i] = (float)((double)mean[i] + exp((double)log_std[i]) * z);
		}
	}
}

void seed_gaussian_mean(int B, int A, const float *params, float *u)
{
	for (int b = 0; b < B; b++)
		memcpy(u + (size_t)b * A, params + (size_t)b * 2 * A, (size_t)A * sizeof *u);
}

void seed_gaussian_to_env(int B, int A, const float *u, const float *low, const float *high,
                          seed_squash squash, float *action)
{
	for (int b = 0; b < B; b++)
		for (int i = 0; i < A; i++) {
			size_t k = (size_t)b * A + i;
			double x = u[k], lo = low[i], hi = high[i];
			if (squash == SEED_SQUASH_TANH)
				x = lo + (tanh(x) + 1.0) * (hi - lo) * 0.5;
			else
				x = x < lo ? lo : x > hi ? hi : x; /* NaN stays NaN; +-inf bounds: identity */
			action[k] = (float)x;
		}
}

/* softplus(x) = log(1 + e^x), without overflow. */
static double softplus(double x)
{
	return (x > 0 ? x : 0) + log1p(exp(-fabs(x)));
}

double seed_gaussian_row_log_prob(int A, const float *params, const float *u, double *entropy)
{
	const float *mean = params, *log_std = params + A;
	double s = 0, h = 0;
	for (int i = 0; i < A; i++) {
		double ls = log_std[i], z = ((double)u[i] - mean[i]) * exp(-ls);
		s += -0.5 * z * z - ls - LOG_SQRT_2PI;
		h += ls + ENTROPY_CONST;
	}
	if (entropy)
		*entropy = h;
	return s;
}

void seed_gaussian_log_prob(int B, int A, const float *params, const float *u, seed_squash squash,
                            const float *low, const float *high, float *logp)
{
	for (int b = 0; b < B; b++) {
		const float *ub = u + (size_t)b * A;
		double s = seed_gaussian_row_log_prob(A, params + (size_t)b * 2 * A, ub, NULL);
		for (int i = 0; squash == SEED_SQUASH_TANH && i < A; i++) {
			double x = ub[i];
			/* log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)) */
			s -= 2.0 * (LOG2 - x - softplus(-2.0 * x));
			s -= log(((double)high[i] - low[i]) * 0.5);
		}
		logp[b] = (float)s;
	}
}

void seed_gaussian_row_backward(int A, const float *params, const float *u, double dlogp, double dentropy,
                                float *dparams)
{
	const float *mean = params, *log_std = params + A;
	for (int i = 0; i < A; i++) {
		double inv = exp(-(double)log_std[i]), z = ((double)u[i] - mean[i]) * inv;
		dparams[i] += (float)(dlogp * z * inv);
		dparams[A + i] += (float)(dlogp * (z * z - 1.0) + dentropy);
	}
}

void seed_gaussian_log_prob_backward(int B, int A, const float *params, const float *u, const float *dlogp,
                                     float *dparams)
{
	for (int b = 0; b < B; b++)
		seed_gaussian_row_backward(A, params + (size_t)b * 2 * A, u + (size_t)b * A, dlogp[b], 0,
		                           dparams + (size_t)b * 2 * A);
}

void seed_gaussian_entropy(int B, int A, const float *params, float *entropy)
{
	for (int b = 0; b < B; b++) {
		const float *log_std = params + (size_t)b * 2 * A + A;
		double s = 0;
		for (int i = 0; i < A; i++)
			s += (double)log_std[i] + ENTROPY_CONST;
		entropy[b] = (float)s;
	}
}

void seed_gaussian_entropy_backward(int B, int A, const float *params, const float *dentropy, float *dparams)
{
	(void)params;
	for (int b = 0; b < B; b++) {
		float *dls = dparams + (size_t)b * 2 * A + A;
		for (int i = 0; i < A; i++)
			dls[i] += dentropy[b];
	}
}

void seed_gaussian_kl(int B, int A, const float *p, const float *q, float *kl)
{
	for (int b = 0; b < B; b++) {
		const float *mp = p + (size_t)b * 2 * A, *lp = mp + A;
		const float *mq = q + (size_t)b * 2 * A, *lq = mq + A;
		double s = 0;
		for (int i = 0; i < A; i++) {
			double d = (double)mp[i] - mq[i], r = exp(2.0 * ((double)lp[i] - lq[i]));
			double iq2 = exp(-2.0 * (double)lq[i]);
			s += (double)lq[i] - lp[i] + 0.5 * (r + d * d * iq2) - 0.5;
		}
		kl[b] = (float)s;
	}
}
