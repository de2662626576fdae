/* seed/vtrace.h: V-trace off-policy value targets and policy-gradient
 * advantages (Espeholt et al. 2018, "IMPALA", section 4).
 *
 * Given an unroll of T steps for B independent sequences, collected by a
 * behaviour policy mu and evaluated by the learner's policy pi and value
 * function V, V-trace computes for every step s the value target
 *
 *   v_s = V(x_s) + sum_{t=s}^{T-1} ( prod_{i=s}^{t-1} gamma_i c_i ) delta_t,
 *   delta_t = rho_t (r_t + gamma_t V(x_{t+1}) - V(x_t)),   V(x_T) = bootstrap,
 *
 * with rho_t = min(clip_rho, pi(a_t|x_t)/mu(a_t|x_t)) and trace coefficients
 * c_i = lambda * min(1, pi/mu), and the policy-gradient advantage
 *
 *   A_s = min(clip_pg_rho, pi/mu) (r_s + gamma_s v_{s+1} - V(x_s)),  v_T = bootstrap.
 *
 * gamma_t is the per-step discount: the caller passes gamma * (1 - terminated)
 * so that a real episode end cuts both the bootstrap and the trace.  The
 * semantics are those of the reference implementations (scalable_agent's
 * vtrace.py, and seed_rl's, which adds lambda): c uses the unclipped ratio
 * capped at 1 whatever clip_rho is, and lambda = 1 gives the paper.
 */
#ifndef SEED_VTRACE_H
#define SEED_VTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Compute V-trace targets vs and advantages pg_advantages.
 *
 * Arrays are time-major, row-major: log_rhos, discounts, rewards, values,
 * vs and pg_advantages are [T][B] (element (t, b) at t*B + b);
 * bootstrap_value is [B], the value of the state after the last step.
 * log_rhos[t][b] = log pi(a_t|x_t) - log mu(a_t|x_t).
 *
 * clip_rho and clip_pg_rho cap the importance ratios used in the value
 * targets and in the advantages; INFINITY means no cap.  lambda in [0, 1]
 * scales the trace coefficients (1: the IMPALA paper; 0: one-step targets).
 *
 * The backward recursion v_s - V(x_s) = delta_s + gamma_s c_s (v_{s+1} -
 * V(x_{s+1})) runs in double precision and only the results are rounded to
 * float, so long unrolls do not accumulate float rounding error.
 *
 * vs and pg_advantages must be different arrays, but either may be the same
 * array as an input of the same shape (computing in place is allowed): each
 * element of the inputs is read before the output at the same index is
 * written.  Non-finite inputs propagate to the outputs; they are not errors.
 *
 * Returns 0, or -EINVAL (nothing written) when T < 1, B < 1, a pointer is
 * NULL, vs == pg_advantages, a clip threshold is NaN or negative, or lambda
 * is NaN or outside [0, 1].  Pure function: thread-safe on distinct outputs.
 */
int seed_vtrace(int T, int B, const float *log_rhos, const float *discounts, const float *rewards,
                const float *values, const float *bootstrap_value, float clip_rho, float clip_pg_rho,
                float lambda, float *vs, float *pg_advantages);

#ifdef __cplusplus
}
#endif
#endif
