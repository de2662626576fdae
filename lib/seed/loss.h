/* seed/loss.h: the IMPALA/SEED actor-critic loss with V-trace targets,
 * its value and its gradients with respect to the learner's outputs.
 *
 * The learner runs its network over an unroll batch (T steps of B sequences)
 * and gets policy logits [T][B][A] and values [T][B], plus the value of the
 * state after the last step, bootstrap_value [B].  This module turns those,
 * with the behaviour policy's logits recorded by the actor, into
 *
 *   total = pg_loss + baseline_loss + entropy_loss + kl_loss
 *   pg_loss       = -R( A_t * log pi(a_t|x_t) )
 *   baseline_loss = baseline_cost * 0.5 * R( (v_t - V(x_t))^2 )
 *   entropy_loss  = -entropy_cost * R( H(pi(.|x_t)) )
 *   kl_loss       = kl_cost * R( log mu(a_t|x_t) - log pi(a_t|x_t) )
 *
 * where v_t and A_t are seed_vtrace's targets and advantages from
 * log_rhos = log pi(a|x) - log mu(a|x), and R is the mean over the T*B steps
 * (default, as seed_rl does) or their sum (as scalable_agent does).  The mean
 * keeps the scale of the loss, of its gradients and so of a good learning
 * rate independent of the unroll length and batch size; with the sum, changing
 * T or B silently changes the effective step size of SGD-like optimizers.
 *
 * The gradients dlogits and dvalues are those of total, treating v_t and A_t
 * as constants (stop-gradient), exactly as the reference implementations do.
 * Consequently bootstrap_value gets no gradient: it enters the loss only
 * through v_t and A_t.  The caller backpropagates dlogits and dvalues
 * through its network.
 *
 * Discounts, episode ends and truncation: discounts[t][b] is gamma for a step
 * that did not end the episode and 0 for a step that terminated it (the
 * caller computes gamma * (1 - terminated)).  A step that was truncated (time
 * limit) must still bootstrap; the loss stays general and the caller folds the
 * bootstrap into the reward: rewards[t][b] = r_t + gamma * V(x_final),
 * discounts[t][b] = 0, where x_final is the observation the truncated step
 * reached (not the reset observation that follows it) and V(x_final) is a
 * constant to the loss.  Reward clipping (max_abs_reward in seed_rl) is also
 * the caller's, applied to r_t before that folding.
 *
 * Everything is computed in double (log-softmax with the maximum subtracted,
 * entropy, gradients) and rounded to float at the end.  Logits must be
 * finite: an action masked by -INFINITY is not supported and gives NaN.
 */
#ifndef SEED_LOSS_H
#define SEED_LOSS_H

#include <stdint.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the per-step terms are reduced over the T*B steps. */
typedef enum seed_loss_reduce {
	SEED_LOSS_MEAN = 0, /* average (seed_rl); the default */
	SEED_LOSS_SUM = 1,  /* sum (scalable_agent) */
} seed_loss_reduce;

typedef struct seed_loss_config {
	float baseline_cost;     /* weight of the value loss; 0.5 */
	float entropy_cost;      /* weight of the entropy bonus; 0.01 */
	float kl_cost;           /* weight of the sampled KL(mu || pi) term; 0 (off) */
	float clip_rho;          /* V-trace rho-bar for the value targets; 1 (INFINITY: none) */
	float clip_pg_rho;       /* rho-bar for the policy-gradient advantages; 1 */
	float lambda;            /* trace coefficient scale in [0, 1]; 1 */
	seed_loss_reduce reduce; /* SEED_LOSS_MEAN */
} seed_loss_config;

/* One unroll batch.  Every pointer is required, but actions for a
 * Gaussian policy and box_actions for a categorical one; arrays are
 * row-major.
 *
 * A Gaussian policy (box_actions not NULL) over A real numbers: each step's
 * logits and behaviour_logits are its 2A parameters, A means m then A log
 * standard deviations l (seed_gaussian(3)), and box_actions the raw
 * samples u the actor drew (before clipping or squashing: a squash's
 * correction depends on u alone and cancels in pi/mu, so it is left out):
 * log pi(u) = sum_j -(u_j - m_j)^2 / (2 e^{2 l_j}) - l_j - log(2 pi) / 2,
 * H = sum_j l_j + (1 + log(2 pi)) / 2, the loss above unchanged. */
typedef struct seed_loss_batch {
	int T, B, A;                   /* steps, sequences, actions (A >= 1) */
	const float *logits;           /* (T, B, A), or (T, B, 2A) for a Gaussian: the learner's */
	const float *behaviour_logits; /* the same shape: the actor's when it acted */
	const int32_t *actions;        /* (T, B) actions taken, in [0, A); categorical only */
	const float *rewards;          /* (T, B) r_t */
	const float *discounts;        /* (T, B) gamma * (1 - terminated_t) */
	const float *values;           /* (T, B) learner V(x_t) */
	const float *bootstrap_value;  /* (B) learner V(x_T) */
	const float *box_actions;      /* (T, B, A) raw samples of a Gaussian policy; NULL: categorical */
} seed_loss_batch;

/* The loss terms (reduced as configured; total is their sum) and
 * diagnostics (always means over the T*B steps, whatever the reduction). */
typedef struct seed_loss_stats {
	double total;
	double pg_loss;
	double baseline_loss;        /* includes baseline_cost */
	double entropy_loss;         /* includes entropy_cost, so <= 0 for a positive cost */
	double kl_loss;              /* includes kl_cost */
	double entropy;              /* mean H(pi(.|x_t)) in nats */
	double kl;                   /* mean log mu(a_t|x_t) - log pi(a_t|x_t) */
	double mean_rho;             /* mean pi/mu of the action taken, before clipping */
	double clipped_rho_fraction; /* fraction of steps with pi/mu > clip_rho */
	double mean_vs;              /* mean V-trace target */
	double mean_value;           /* mean V(x_t) */
	double mean_pg_advantage;
} seed_loss_stats;

/* Fill c with the defaults above (seed_rl's and the IMPALA paper's). */
void seed_loss_config_default(seed_loss_config *c);

/* Evaluate the V-trace actor-critic loss of one batch and its gradients.
 *
 * stats is required.  dlogits (the shape of logits) and dvalues (T, B) receive d total /
 * d logits and d total / d values; either may be NULL to skip it.  They must
 * not overlap the inputs.  Scratch memory of O(T*B*A) is allocated per call.
 *
 * Returns 0, or -EINVAL (nothing written, err says what and where) for a
 * NULL pointer, T, B or A below 1, an action outside [0, A), a non-finite
 * raw sample, or a bad
 * configuration: a cost that is negative or not finite, a clip threshold
 * that is NaN or negative, lambda outside [0, 1], an unknown reduction.
 * err may be NULL.  Thread-safe on distinct outputs.
 */
int seed_loss_vtrace(const seed_loss_config *cfg, const seed_loss_batch *batch, seed_loss_stats *stats,
                     float *dlogits, float *dvalues, seed_err *err);

/* The same with caller-owned scratch: workspace holds at least
 * seed_loss_workspace_size(T, B, A) bytes aligned for double, so that a
 * learner's update allocates nothing.  Not thread-safe on one workspace. */
int seed_loss_vtrace_ws(const seed_loss_config *cfg, const seed_loss_batch *batch, void *workspace,
                        seed_loss_stats *stats, float *dlogits, float *dvalues, seed_err *err);

/* Bytes of scratch seed_loss_vtrace_ws needs for T steps of B sequences
 * and A actions: O(T*B*A), since the softmax probabilities are kept
 * between the two passes instead of being recomputed. */
size_t seed_loss_workspace_size(int T, int B, int A);

#ifdef __cplusplus
}
#endif
#endif
