/* policy.c: categorical policy helpers over logits (see seed/policy.h).
 *
 * Each row is handled in double: subtract the row maximum, exponentiate,
 * sum.  A actions is small (a few to a few dozen), so this is cheap next to
 * the model, and double keeps log-probabilities of unlikely actions exact
 * enough for importance weights.
 */
#include "seed/policy.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>

/* The row's maximum and log of the sum of exp(z - max). */
static void row_lse(int A, const float *z, double *max, double *logsum)
{
	double m = -INFINITY;
	for (int a = 0; a < A; a++)
		if (z[a] > m)
			m = z[a];
	double s = 0;
	if (m > -INFINITY)
		for (int a = 0; a < A; a++)
			s += exp((double)z[a] - m);
	*max = m;
	*logsum = log(s);
}

/* log p_a of one row, given its row_lse. */
static inline double logp_of(double z, double max, double logsum)
{
	return z - max - logsum;
}

void seed_policy_log_softmax(int B, int A, const float *logits, float *logp)
{
	for (int b = 0; b < B; b++) {
		const float *z = logits + (size_t)b * A;
		float *o = logp + (size_t)b * A;
		double m, ls;
		row_lse(A, z, &m, &ls);
		for (int a = 0; a < A; a++)
			o[a] = (float)logp_of(z[a], m, ls);
	}
}

void seed_policy_log_softmax_backward(int B, int A, const float *logp, const float *dlogp, float *dlogits)
{
	for (int b = 0; b < B; b++) {
		const float *lp = logp + (size_t)b * A, *g = dlogp + (size_t)b * A;
		float *d = dlogits + (size_t)b * A;
		double sum = 0;
		for (int a = 0; a < A; a++)
			sum += g[a];
		for (int a = 0; a < A; a++)
			d[a] += (float)(g[a] - exp((double)lp[a]) * sum);
	}
}

void seed_policy_softmax(int B, int A, const float *logits, float *probs)
{
	for (int b = 0; b < B; b++) {
		const float *z = logits + (size_t)b * A;
		float *o = probs + (size_t)b * A;
		double m, ls;
		row_lse(A, z, &m, &ls);
		for (int a = 0; a < A; a++)
			o[a] = (float)exp(logp_of(z[a], m, ls));
	}
}

void seed_policy_sample(int B, int A, const float *logits, seed_rng *rng, int32_t *actions)
{
	for (int b = 0; b < B; b++) {
		const float *z = logits + (size_t)b * A;
		double m, ls;
		row_lse(A, z, &m, &ls);
		double u = seed_rng_double(rng);
		/* Compare u with unnormalised cumulative weights scaled by their
		 * sum, so rounding in the normalisation cannot skip past the end. */
		double total = exp(ls), cum = 0;
		int32_t pick = -1, last = 0;
		for (int a = 0; a < A; a++) {
			double w = m > -INFINITY ? exp((double)z[a] - m) : 0.0;
			if (!(w > 0))
				continue;
			last = a;
			cum += w;
			if (u * total < cum) {
				pick = a;
				break;
			}
		}
		actions[b] = pick >= 0 ? pick : last;
	}
}

void seed_policy_argmax(int B, int A, const float *logits, int32_t *actions)
{
	for (int b = 0; b < B; b++) {
		const float *z = logits + (size_t)b * A;
		int32_t best = 0;
		for (int a = 1; a < A; a++)
			if (z[a] > z[best] || (z[best] != z[best] && z[a] == z[a]))
				best = a;
		actions[b] = best;
	}
}

void seed_policy_epsilon_greedy(int B, int A, const float *q, const float *epsilon, seed_rng *rng,
                                int32_t *actions)
{
	seed_policy_argmax(B, A, q, actions);
	for (int b = 0; b < B; b++)
		if (seed_rng_double(rng) < epsilon[b])
			actions[b] = (int32_t)seed_rng_below(rng, (uint32_t)A);
}

double seed_policy_apex_epsilon(int i, int n, double base, double alpha)
{
	if (n < 1 || i < 0 || i >= n)
		return NAN;
	return pow(base, 1 + (n > 1 ? alpha * i / (n - 1) : 0));
}

/* Entropy of one row. */
static double row_entropy(int A, const float *z)
{
	double m, ls;
	row_lse(A, z, &m, &ls);
	double h = 0;
	for (int a = 0; a < A; a++) {
		double l = logp_of(z[a], m, ls), q = exp(l);
		if (q > 0) /* p log p -> 0 as p -> 0 */
			h -= q * l;
	}
	return h;
}

void seed_policy_entropy(int B, int A, const float *logits, float *entropy)
{
	for (int b = 0; b < B; b++)
		entropy[b] = (float)row_entropy(A, logits + (size_t)b * A);
}

void seed_policy_entropy_backward(int B, int A, const float *logits, const float *dentropy, float *dlogits)
{
	for (int b = 0; b < B; b++) {
		const float *z = logits + (size_t)b * A;
		float *d = dlogits + (size_t)b * A;
		double m, ls;
		row_lse(A, z, &m, &ls);
		double h = row_entropy(A, z);
		for (int a = 0; a < A; a++) {
			double l = logp_of(z[a], m, ls), q = exp(l);
			if (q > 0) /* p log p -> 0 as p -> 0, and so does its gradient */
				d[a] += (float)(-(double)dentropy[b] * q * (l + h));
		}
	}
}

static int actions_ok(int B, int A, const int32_t *actions)
{
	for (int b = 0; b < B; b++)
		if (actions[b] < 0 || actions[b] >= A)
			return 0;
	return 1;
}

int seed_policy_action_log_prob(int B, int A, const float *logits, const int32_t *actions, float *logp)
{
	if (!actions_ok(B, A, actions))
		return -EINVAL;
	for (int b = 0; b < B; b++) {
		const float *z = logits + (size_t)b * A;
		double m, ls;
		row_lse(A, z, &m, &ls);
		logp[b] = (float)logp_of(z[actions[b]], m, ls);
	}
	return 0;
}

int seed_policy_action_log_prob_backward(int B, int A, const float *logits, const int32_t *actions,
                                         const float *dlogp, float *dlogits)
{
	if (!actions_ok(B, A, actions))
		return -EINVAL;
	for (int b = 0; b < B; b++) {
		const float *z = logits + (size_t)b * A;
		float *d = dlogits + (size_t)b * A;
		double m, ls;
		row_lse(A, z, &m, &ls);
		for (int a = 0; a < A; a++) {
			double q = exp(logp_of(z[a], m, ls));
			d[a] += (float)((double)dlogp[b] * ((a == actions[b]) - q));
		}
	}
	return 0;
}
