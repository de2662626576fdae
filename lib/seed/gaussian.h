/* seed/gaussian.h: a diagonal Gaussian policy over A real action dimensions.
 *
 * The policy of one observation is given by 2A floats, params[b] = (mean_0
 * .. mean_{A-1}, log_std_0 .. log_std_{A-1}): the row a Gaussian model head
 * writes into logits (seed/nn.h, "policy": {"type": "gaussian"}) and what
 * unroll frames store as logits, [B, 2A] for B rows.
 *
 * Actions in an unroll are the RAW samples u ~ N(mean, std), std =
 * exp(log_std); the environment gets u mapped into its bounds [low, high]
 * by a squash mode:
 *   SEED_SQUASH_CLIP: action = min(max(u, low), high); log-probabilities
 *     are those of the unclipped u (CleanRL's and SEED RL's clipped
 *     Gaussians).  Infinite bounds are allowed (+-inf: the identity).
 *   SEED_SQUASH_TANH: action = low + (tanh(u) + 1) (high - low) / 2, whose
 *     density is that of u divided by the map's Jacobian:
 *       log p(action) = log N(u; mean, std) - sum_i log(1 - tanh(u_i)^2)
 *                       - sum_i log((high_i - low_i) / 2),
 *     log(1 - tanh(u)^2) computed as 2 (log 2 - u - softplus(-2u)), which
 *     is exact where tanh(u) rounds to +-1.  The bounds must be finite
 *     (seed_gaussian_check_bounds).
 * The squash terms depend on u only, not on the parameters, so the
 * gradients of both modes are the Gaussian's.
 *
 * Conventions (as seed/policy.h): every *_backward function ADDS its
 * contribution to dparams [B, 2A]; rows are computed in double; all
 * functions are pure (apart from the rng) and thread-safe.  low and high
 * are [A], the same for every row.
 */
#ifndef SEED_GAUSSIAN_H
#define SEED_GAUSSIAN_H

#include "seed/error.h"
#include "seed/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How raw samples become environment actions (above). */
typedef enum seed_squash {
	SEED_SQUASH_CLIP,
	SEED_SQUASH_TANH,
} seed_squash;

/* "clip" or "tanh". */
const char *seed_gaussian_squash_name(seed_squash squash);
/* The mode called name ("clip", "tanh") into *out.  Returns 0, or -EINVAL
 * (*out untouched) for any other name or NULL. */
int seed_gaussian_squash_parse(const char *name, seed_squash *out);
/* Whether bounds low, high [A] suit squash: no NaN, low <= high (clip) or
 * low < high, both finite (tanh).  Returns 0, or -EINVAL with err naming the
 * dimension. */
int seed_gaussian_check_bounds(int A, const float *low, const float *high, seed_squash squash, seed_err *err);

/* u[b] = mean[b] + exp(log_std[b]) z, z standard normal: exactly A calls of
 * seed_rng_normal per row (two seed_rng_double draws each), in row order,
 * dimension by dimension (so the same rng state gives the same samples). */
void seed_gaussian_sample(int B, int A, const float *params, seed_rng *rng, float *u);
/* The deterministic action: u[b] = mean[b] (evaluation, evolution). */
void seed_gaussian_mean(int B, int A, const float *params, float *u);
/* Raw samples u [B, A] into environment actions [B, A] (above); action may
 * be u.  tanh needs finite bounds (not checked here:
 * seed_gaussian_check_bounds). */
void seed_gaussian_to_env(int B, int A, const float *u, const float *low, const float *high,
                          seed_squash squash, float *action);

/* logp[b] = log-density of the environment's action given raw sample u[b]
 * under params[b] (above): the Gaussian's for clip (low and high are not
 * read and may be NULL), with the tanh terms for tanh. */
void seed_gaussian_log_prob(int B, int A, const float *params, const float *u, seed_squash squash,
                            const float *low, const float *high, float *logp);
/* Add dL/dparams for dL/dlogp [B], whatever the squash mode:
 * dmean_i += dlogp (u_i - mean_i) / std_i^2,
 * dlog_std_i += dlogp ((u_i - mean_i)^2 / std_i^2 - 1). */
/* One row (params [2A], u [A]) in double, for a caller that keeps double
 * (the PPO and V-trace losses): the Gaussian's own log-density at u (no
 * squash term: it depends on u alone), and its entropy into *entropy when
 * not NULL. */
double seed_gaussian_row_log_prob(int A, const float *params, const float *u, double *entropy);
/* Add to one row's dparams [2A] dlogp * d log N(u) / d params + dentropy *
 * d entropy / d params, in double, rounded once. */
void seed_gaussian_row_backward(int A, const float *params, const float *u, double dlogp, double dentropy,
                                float *dparams);
void seed_gaussian_log_prob_backward(int B, int A, const float *params, const float *u, const float *dlogp,
                                     float *dparams);

/* entropy[b] = sum_i log_std_i + A/2 (1 + log 2 pi): the differential
 * entropy of the Gaussian itself (as CleanRL and SEED RL report it, also
 * for tanh, whose squashed entropy has no closed form). */
void seed_gaussian_entropy(int B, int A, const float *params, float *entropy);
/* Add dL/dparams for dL/dentropy [B]: dlog_std_i += dentropy[b] (the means
 * get nothing; params is not read, kept for the shape of the other
 * _backward functions). */
void seed_gaussian_entropy_backward(int B, int A, const float *params, const float *dentropy, float *dparams);

/* kl[b] = KL(p[b] || q[b]) = sum_i log(std_q / std_p)
 *   + (std_p^2 + (mean_p - mean_q)^2) / (2 std_q^2) - 1/2, for diagnostics
 * (the Gaussians', before any squash). */
void seed_gaussian_kl(int B, int A, const float *p, const float *q, float *kl);

#ifdef __cplusplus
}
#endif
#endif
