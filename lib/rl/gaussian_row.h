/* gaussian_row.h: one row of a diagonal Gaussian policy, in double, for the
 * losses (ppo.c, loss.c): its log-density at a raw sample and its entropy.
 *
 * z holds the row's 2A parameters, A means m then A log standard
 * deviations l (seed_gaussian(3)'s layout).  The gradients the losses need
 * follow from e_j = (u_j - m_j) / s_j: d log pi / d m_j = e_j / s_j, d log
 * pi / d l_j = e_j^2 - 1, d H / d l_j = 1.
 */
#ifndef SEED_RL_GAUSSIAN_ROW_H
#define SEED_RL_GAUSSIAN_ROW_H

#include <math.h>
#include <stddef.h>

/* log N(u; m, e^l) summed over the A dimensions; the entropy
 * sum_j l_j + A (1 + log 2 pi) / 2 into *entropy when not NULL. */
static inline double gaussian_log_prob(const float *z, const float *u, int A, double *entropy)
{
	const double half_log_2pi = 0.5 * log(2 * M_PI);
	double lp = 0, sl = 0;
	for (int j = 0; j < A; j++) {
		const double e = ((double)u[j] - z[j]) * exp(-(double)z[A + j]);
		lp += -0.5 * e * e - z[A + j] - half_log_2pi;
		sl += z[A + j];
	}
	if (entropy)
		*entropy = sl + A * (0.5 + half_log_2pi);
	return lp;
}

#endif
