/* vtrace.c: V-trace targets and advantages (see seed/vtrace.h).
 *
 * One backward pass per sequence b: the accumulator acc = v_s - V(x_s) runs
 * from s = T-1 down to 0 in double.  Walking one sequence at a time (b outer,
 * t inner) lets every output element be written right after the input
 * elements at the same index are read, which is what makes in-place calls
 * safe; V(x_{s+1}) and v_{s+1} are carried in locals.  T*B is small (an
 * unroll batch), so the strided access costs nothing that matters.
 */
#include "seed/vtrace.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>

/* min(x, limit) that lets a NaN x through (fmin would return limit), so that a
 * broken input shows up in the results instead of being clipped away. */
static inline double cap(double x, double limit)
{
	return x > limit ? limit : x;
}

int seed_vtrace(int T, int B, const float *log_rhos, const float *discounts, const float *rewards,
                const float *values, const float *bootstrap_value, float clip_rho, float clip_pg_rho,
                float lambda, float *vs, float *pg_advantages)
{
	if (T < 1 || B < 1 || !log_rhos || !discounts || !rewards || !values || !bootstrap_value || !vs ||
	    !pg_advantages || vs == pg_advantages)
		return -EINVAL;
	/* The negated comparisons also reject NaN. */
	if (!(clip_rho >= 0) || !(clip_pg_rho >= 0) || !(lambda >= 0 && lambda <= 1))
		return -EINVAL;

	const double crho = clip_rho, cpg = clip_pg_rho, lam = lambda;
	for (int b = 0; b < B; b++) {
		double v_next = bootstrap_value[b]; /* V(x_{t+1}) */
		double vs_next = v_next;            /* v_{t+1}; v_T = V(x_T) */
		double acc = 0;                     /* v_{t+1} - V(x_{t+1}) */
		for (int t = T - 1; t >= 0; t--) {
			const size_t i = (size_t)t * (size_t)B + (size_t)b;
			const double rho = exp((double)log_rhos[i]);
			const double gamma = discounts[i], r = rewards[i], v = values[i];
			const double c = lam * cap(rho, 1.0);
			const double delta = cap(rho, crho) * (r + gamma * v_next - v);
			acc = delta + gamma * c * acc;
			const double vs_t = v + acc;
			const double adv = cap(rho, cpg) * (r + gamma * vs_next - v);
			vs[i] = (float)vs_t;
			pg_advantages[i] = (float)adv;
			v_next = v;
			vs_next = vs_t;
		}
	}
	return 0;
}
