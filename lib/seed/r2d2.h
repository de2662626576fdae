/* seed/r2d2.h: the targets and loss of R2D2 (Kapturowski et al. 2019,
 * "Recurrent Experience Replay in Distributed Reinforcement Learning"), as
 * in SEED RL's agents/r2d2/learner.py: n-step double-Q targets under the
 * invertible value rescaling h, priorities mixing the max and mean absolute
 * TD error of a sequence, and the squared TD loss with its gradient.
 *
 * Conventions (SEED's): arrays are time-major and row-major, [T][B] with
 * element (t, b) at t*B + b, Q values [T][B][A].  rewards[t] and done[t]
 * arrive with observation t: they belong to the transition that led into
 * step t, and done[t] != 0 means observation t starts a new episode (the
 * transition into it ended the previous one).  q_boot[t] is the bootstrap
 * value of observation t.  actions[t] is the action taken at observation t.
 *
 * All four functions are pure: no state, thread-safe on distinct outputs.
 * Arithmetic runs in double; only results are rounded to float.
 */
#ifndef SEED_R2D2_H
#define SEED_R2D2_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The value rescaling h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x (R2D2,
 * table 2; Pohlen et al. 2018), eps >= 0.  Computed in a form without
 * cancellation, so small |x| keep full relative precision.  NaN in, NaN out. */
float seed_value_rescale(float x, float eps);

/* The exact inverse of seed_value_rescale for the same eps >= 0:
 * h^-1(x) = sign(x) (((sqrt(1 + 4 eps (|x| + 1 + eps)) - 1) / (2 eps))^2 - 1),
 * and sign(x) ((|x| + 1)^2 - 1) for eps = 0 (the limit; one formula serves
 * both, see seed_r2d2(3)).  h(h^-1(x)) and h^-1(h(x)) return x to within
 * two float ulps. */
float seed_value_rescale_inv(float x, float eps);

/* n-step discounted targets, for each (t, b) with m = min(n, T - t):
 *
 *   y_t = sum_{i<m} gamma^i prod_{k<i} (1 - done_{t+k}) r_{t+i}
 *         + gamma^m prod_{k<m} (1 - done_{t+k}) q_boot[t+m-1]
 *
 * so the last n - 1 targets fall back to shorter returns bootstrapped from
 * the last q_boot.  rewards, done, q_boot and targets are [T][B]; a nonzero
 * done counts as 1.  targets may be the same array as rewards or q_boot (it
 * is computed in place safely).  Returns 0, or -EINVAL (nothing written) when
 * T < 1, B < 1, n < 1, a pointer is NULL, or gamma is NaN or outside [0, 1]. */
int seed_nstep_targets(int T, int B, int n, float gamma, const float *rewards, const uint8_t *done,
                       const float *q_boot, float *targets);

/* The R2D2 loss of B sequences of T steps over A actions.
 *
 * Double Q: a*_t = argmax_a q_online[t][b][a] (ties to the lowest index),
 * q_boot[t] = h^-1(q_target[t][b][a*_t]); y = seed_nstep_targets(q_boot);
 * for t = 0 .. T-2 the TD error is
 *
 *   delta_t = h(y_{t+1}) - q_online[t][b][actions[t][b]],
 *
 * and per sequence priorities[b] = eta max_t |delta_t| + (1 - eta)
 * mean_t |delta_t|, loss[b] = 0.5 sum_t delta_t^2 (before importance
 * weighting).  Where grad_q_online is not NULL it receives [T][B][A] the
 * gradient of sum_b loss[b] with respect to q_online, targets held constant
 * (SEED's stop_gradient): -delta_t at the taken action of steps t <= T-2,
 * 0 elsewhere.  q_online, q_target are [T][B][A]; actions, rewards, done
 * are [T][B]; priorities and loss are [B].  Outputs must not overlap inputs.
 *
 * Returns 0, or -EINVAL (nothing written) when T < 2, B < 1, A < 1, n < 1,
 * a required pointer is NULL, gamma or eta is NaN or outside [0, 1], eps is
 * NaN, negative or infinite, or an action is outside [0, A). */
int seed_r2d2_loss(int T, int B, int A, int n, float gamma, float eps, float eta, const float *q_online,
                   const float *q_target, const int32_t *actions, const float *rewards, const uint8_t *done,
                   float *priorities, float *loss, float *grad_q_online);

#ifdef __cplusplus
}
#endif
#endif
