/* seed/ppo.h: proximal policy optimisation (Schulman et al. 2017) as
 * CleanRL's ppo.py computes it: generalised advantage estimation and the
 * clipped surrogate loss, with its gradients with respect to the learner's
 * outputs.
 *
 * GAE (Schulman et al. 2016), for T steps of B sequences, time-major:
 *
 *   delta_t = r_t + d_t V(x_{t+1}) - V(x_t),          V(x_T) = bootstrap
 *   A_t     = delta_t + lambda d_t A_{t+1},            A_T = 0
 *   R_t     = A_t + V(x_t)                             (the value target)
 *
 * where d_t is the per-step discount gamma * (1 - terminated_t), as the
 * V-trace loss takes it (seed/loss.h), so that an episode end cuts both the
 * bootstrap and the trace; a truncated step folds gamma V(x_final) into r_t
 * and has d_t = 0 (seed_unroll_transitions does both).  CleanRL writes the
 * recursion with gamma and lambda apart and (1 - done) twice; with d_t it
 * is the same number.
 *
 * The loss of a minibatch of N transitions (row i: the learner's logits z_i
 * and value v_i, the behaviour logits mu_i recorded when the actor acted,
 * the action a_i, the advantage A_i and value target R_i from GAE, the
 * value v_old_i from the network at the start of the update):
 *
 *   r_i   = pi(a_i|x_i) / mu(a_i|x_i)                  (the ratio)
 *   An_i   = (A_i - mean A) / (std A + 1e-8)            (normalize_advantages;
 *                                                       std with N - 1, as torch)
 *   pg    = mean_i max(-An_i r_i, -An_i clip(r_i, 1 - clip, 1 + clip))
 *   u_i   = (v_i - R_i)^2
 *   w_i   = (v_old_i + clip(v_i - v_old_i, -value_clip, value_clip) - R_i)^2
 *   value = value_cost * 0.5 * mean_i max(u_i, w_i)    (clip_value; else u_i)
 *   ent   = -entropy_cost * mean_i H(pi(.|x_i))
 *   total = pg + value + ent
 *
 * A_i, R_i and v_old_i are constants to the loss, as are the mean and std
 * of the normalisation.  The gradient of max() goes to the larger branch;
 * where the branches are equal (the ratio inside the clip range, the value
 * inside its range) it is the unclipped branch's, which is also what
 * autograd gives there.  So d pg / d log pi(a_i) = -An_i r_i / N unless the
 * clipped branch is strictly larger (then 0), and d value / d v_i =
 * value_cost (v_i - R_i) / N unless w_i > u_i (then 0).
 *
 * Everything is computed in double and rounded to float at the end.
 * Logits must be finite; a non-finite advantage or value propagates.
 */
#ifndef SEED_PPO_H
#define SEED_PPO_H

#include <stdbool.h>
#include <stdint.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_ppo_config {
	int epochs;                /* passes over each batch (update_epochs); 4 */
	int minibatches;           /* minibatches per pass, each one optimizer step; 4 */
	float clip;                /* the ratio's clip range epsilon (clip_coef); 0.2 */
	bool clip_value;           /* clip the value loss (clip_vloss); true */
	float value_clip;          /* its range around v_old; 0.2 (CleanRL: clip_coef) */
	float value_cost;          /* weight of the value loss (vf_coef); 0.5 */
	float entropy_cost;        /* weight of the entropy bonus (ent_coef); 0.01 */
	float lambda;              /* GAE lambda in [0, 1]; 0.95 */
	bool normalize_advantages; /* per minibatch (norm_adv); true */
} seed_ppo_config;

/* Fill c with the defaults above (CleanRL ppo.py's). */
void seed_ppo_config_default(seed_ppo_config *c);

/* Check c: epochs and minibatches >= 1, clip, value_clip and the costs
 * finite and >= 0, lambda in [0, 1].  0, or -EINVAL with err naming the
 * field. */
int seed_ppo_config_check(const seed_ppo_config *c, seed_err *err);

/* GAE advantages and value targets (see above).  rewards, discounts,
 * values, advantages and returns are [T][B], bootstrap_value is [B].
 * The recursion runs in double.  advantages and returns must be distinct
 * and must not overlap the inputs.  Returns 0, or -EINVAL (nothing
 * written) for T or B below 1, a NULL pointer, advantages == returns, or
 * lambda NaN or outside [0, 1].  Pure: thread-safe on distinct outputs. */
int seed_ppo_gae(int T, int B, const float *rewards, const float *discounts, const float *values,
                 const float *bootstrap_value, float lambda, float *advantages, float *returns);

/* One minibatch of N transitions, rows in any order.  Every pointer is
 * required, but actions for a Gaussian policy and box_actions for a
 * categorical one.
 *
 * A Gaussian policy (box_actions not NULL) over A real numbers: logits and
 * behaviour_logits rows are its 2A parameters, A means m then A log
 * standard deviations l (seed_gaussian(3)), and box_actions the raw
 * samples u the actor drew (before clipping or squashing into the bounds:
 * a squash's correction depends on u alone, so it cancels in the ratio and
 * is left out), with
 *   log pi(u) = sum_j -(u_j - m_j)^2 / (2 e^{2 l_j}) - l_j - log(2 pi) / 2
 *   H(pi)     = sum_j l_j + (1 + log(2 pi)) / 2
 * and the loss above unchanged. */
typedef struct seed_ppo_batch {
	int N, A;                      /* transitions, actions (A >= 1) */
	const float *logits;           /* (N, A), or (N, 2A) for a Gaussian: the learner's */
	const float *behaviour_logits; /* the same shape: the actor's, when it acted */
	const int32_t *actions;        /* (N) in [0, A); categorical only */
	const float *advantages;       /* (N) GAE, before normalisation */
	const float *returns;          /* (N) value targets R */
	const float *old_values;       /* (N) v_old: the values at the start of the update */
	const float *values;           /* (N) the learner's */
	const float *box_actions;      /* (N, A) raw samples of a Gaussian policy; NULL: categorical */
} seed_ppo_batch;

/* The terms of the loss (each with its weight; total is their sum) and
 * diagnostics, all means over the N rows. */
typedef struct seed_ppo_stats {
	double total;
	double pg_loss;
	double value_loss;     /* includes value_cost */
	double entropy_loss;   /* includes entropy_cost: <= 0 for a positive cost */
	double entropy;        /* mean H(pi(.|x)) in nats */
	double approx_kl;      /* mean (r - 1) - log r (CleanRL's approx_kl) */
	double clip_fraction;  /* fraction of rows with |r - 1| > clip */
	double mean_ratio;     /* mean r */
	double mean_value;     /* mean v */
	double mean_return;    /* mean R */
	double mean_advantage; /* mean A, before normalisation */
} seed_ppo_stats;

/* Evaluate the PPO loss of one minibatch and its gradients.  stats is
 * required; dlogits (the shape of logits) and dvalues (N) receive d total / d logits and
 * d total / d values, either may be NULL to skip it; they must not overlap
 * the inputs.  Allocates nothing.  With N = 1 and normalize_advantages the
 * normalised advantage is 0 (the sample std is undefined there).
 *
 * Returns 0, or -EINVAL (nothing written, err says what and where) for a
 * NULL pointer, N or A below 1, an action outside [0, A), a non-finite
 * raw sample, or a
 * configuration seed_ppo_config_check refuses.  err may be NULL.
 * Thread-safe on distinct outputs. */
int seed_ppo_loss(const seed_ppo_config *cfg, const seed_ppo_batch *batch, seed_ppo_stats *stats,
                  float *dlogits, float *dvalues, seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
