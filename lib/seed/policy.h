/* seed/policy.h: what a loss and an actor do with policy logits.
 *
 * A categorical policy over A actions is given by logits [B, A] (one row per
 * observation; seed_model_forward writes them).  These helpers turn logits
 * into log-probabilities, actions, entropies and log-probabilities of
 * chosen actions, and give the gradients a loss needs.
 *
 * Conventions: every *_backward function ADDS its contribution to dlogits
 * (zero dlogits first, then add the terms of the loss one by one); they
 * recompute what they need from the logits, so no forward state is kept.
 * Internally rows are computed in double after subtracting the row's
 * maximum, so huge or very negative logits (e.g. -1e30 to mask an action)
 * neither overflow nor give NaN.  Actions are int32 in [0, A).
 * All functions are pure (apart from the rng) and thread-safe.
 */
#ifndef SEED_POLICY_H
#define SEED_POLICY_H

#include <stdint.h>

#include "seed/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* logp[b,a] = logits[b,a] - log sum_j exp(logits[b,j]).  logp may be
 * logits. */
void seed_policy_log_softmax(int B, int A, const float *logits, float *logp);
/* Given logp from seed_policy_log_softmax and dL/dlogp, add dL/dlogits:
 * dlogits[b,a] += dlogp[b,a] - softmax[b,a] * sum_j dlogp[b,j]. */
void seed_policy_log_softmax_backward(int B, int A, const float *logp, const float *dlogp, float *dlogits);

/* probs[b,a] = softmax(logits[b])[a].  probs may be logits. */
void seed_policy_softmax(int B, int A, const float *logits, float *probs);

/* One action per row drawn from softmax(logits[b]) by inverse CDF, with
 * exactly one uniform u = seed_rng_double(rng) per row, in row order: the
 * smallest a with u < sum_{j<=a} p_j.  Actions of probability 0 (logits
 * -inf or far below the others) are never drawn. */
void seed_policy_sample(int B, int A, const float *logits, seed_rng *rng, int32_t *actions);

/* The greedy action per row: the first index of the largest logit (NaN
 * logits are never chosen unless the row is all NaN, then 0). */
void seed_policy_argmax(int B, int A, const float *logits, int32_t *actions);

/* Epsilon-greedy actions from Q values q [B, A]: row b takes a uniform
 * random action with probability epsilon[b] (which may coincide with the
 * greedy one) and the greedy action (seed_policy_argmax) otherwise, so the
 * greedy action's probability is 1 - epsilon[b] + epsilon[b] / A.  Draws
 * exactly one u = seed_rng_double(rng) per row, in row order, and one
 * seed_rng_below(rng, A) more for a row with u < epsilon[b]. */
void seed_policy_epsilon_greedy(int B, int A, const float *q, const float *epsilon, seed_rng *rng,
                                int32_t *actions);

/* Ape-X's (and R2D2's) fixed per-actor exploration: environment i of n
 * explores with epsilon base^(1 + alpha i / (n - 1)) (base 0.4, alpha 7 in
 * the papers and in SEED RL), from base for i = 0 to base^(1 + alpha) for
 * i = n - 1; n = 1 gives base.  NaN for i outside [0, n). */
double seed_policy_apex_epsilon(int i, int n, double base, double alpha);

/* entropy[b] = -sum_a p_a log p_a of softmax(logits[b]) (in nats). */
void seed_policy_entropy(int B, int A, const float *logits, float *entropy);
/* Add dL/dlogits for dL/dentropy [B]:
 * dlogits[b,a] += -dentropy[b] * p_a * (log p_a + entropy[b]). */
void seed_policy_entropy_backward(int B, int A, const float *logits, const float *dentropy, float *dlogits);

/* logp[b] = log softmax(logits[b])[actions[b]]: the log-probability of the
 * action taken (V-trace's target and behaviour log-probabilities).
 * Returns 0, or -EINVAL (nothing written) when an action is out of range. */
int seed_policy_action_log_prob(int B, int A, const float *logits, const int32_t *actions, float *logp);
/* Add dL/dlogits for dL/dlogp [B]:
 * dlogits[b,a] += dlogp[b] * ([a == actions[b]] - p_a).
 * Returns 0, or -EINVAL (nothing added) when an action is out of range. */
int seed_policy_action_log_prob_backward(int B, int A, const float *logits, const int32_t *actions,
                                         const float *dlogp, float *dlogits);

#ifdef __cplusplus
}
#endif
#endif
