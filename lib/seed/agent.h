/* seed/agent.h: an acting policy: observations in, actions out.
 *
 * An agent wraps one model (seed/nn.h) and its policy: it takes a batch of
 * observations as a tensor (any dtype that converts exactly to the model's,
 * any alignment), runs the forward pass, and writes one action per row
 * (sampled from the policy, or the most likely one when greedy), with the
 * logits and values when asked.  It is what seed-infer and seed-eval act
 * with, so that both convert, check and choose the same way, and so that the
 * backend that computes the forward pass stays hidden behind it.
 *
 * Rows: the agent is built for max_rows rows and preallocates everything a
 * call needs for that many; act and values never allocate unless asked for
 * more rows than ever before, and then grow once to the new size (see
 * seed_agent_capacity).  A call's outputs depend only on its inputs, the
 * parameters and the sampling generator, never on the capacity.
 *
 * Observation dtypes (seed_agent_act, seed_agent_values).  The model takes
 * u8 observations when built for u8 and f32 otherwise.  Observations of
 * another dtype are converted when every value converts exactly, and refused
 * (nothing written, err naming the row, the element, the value and the rule)
 * when one does not:
 *
 *   to an f32 model:  f32 as is (NaN and infinities included: the model
 *                     sees what the client sent);
 *                     u8, i8 always (exact);
 *                     i32, i64 when every value is an integer f32 holds
 *                     exactly (every |v| <= 2^24, and larger ones that
 *                     happen to be representable);
 *                     f64 when every value is finite and within f32's range
 *                     (|v| <= FLT_MAX); it is rounded to the nearest f32,
 *                     which is the precision an f32 model computes in.
 *   to a u8 model:    u8 as is; i8, i32, i64, f32, f64 when every value is
 *                     an integer in [0, 255] (so 3.0 is fine, 3.5, -1, 256
 *                     and NaN are not).
 *
 * Why these rules: numpy's default dtype is f64 and image observations are
 * often u8 or f32 pixels, so outside clients send them; converting them
 * silently changes nothing when the conversion is exact, and refusing the
 * rest says what was wrong instead of acting on garbage.  The rank and shape
 * must match the model's exactly ([rows, obs_shape...]).
 *
 * Q models (a dueling head, seed_model(3)): the model outputs one Q value
 * per action instead of policy logits.  The agent's logits output is then
 * the Q values, its values output max_a Q, and the action is epsilon-greedy
 * (seed_policy_epsilon_greedy): with probability 1 - epsilon the greedy
 * action (the first largest Q value), else one drawn uniformly from all A
 * (so the greedy one's probability is 1 - epsilon + epsilon / A).  Each row
 * may have its own epsilon (seed_agent_core.epsilon, e.g. Ape-X's schedule
 * over environments); rows given none take the agent's (0 for a greedy
 * agent, SEED_AGENT_EPSILON otherwise; seed_agent_set_epsilon changes it).
 *
 * Recurrent models (a model with a core, seed_model(3)): the agent keeps no
 * state itself.  The caller keeps each environment's state and its
 * previous reward and action, and passes them to seed_agent_act_core (the
 * inference server gathers them into the batch and scatters the new state
 * back); seed_agent_act and seed_agent_values refuse such a model.
 *
 * Threads: an agent belongs to one thread at a time.
 */
#ifndef SEED_AGENT_H
#define SEED_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/nn.h"
#include "seed/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_agent seed_agent;

/* A non-greedy Q agent's epsilon until seed_agent_set_epsilon. */
#define SEED_AGENT_EPSILON 0.01

/* Build an agent for the model described by model_json (seed_model(3)) for
 * observations of obs_dtype and shape obs_shape[obs_rank] (one row, without
 * the batch dimension), num_actions actions, max_rows rows per call before
 * growing.  The model is built for u8 when obs_dtype is SEED_DTYPE_U8, for
 * f32 otherwise (an f64 or integer client gets an f32 model and converts).
 * greedy: choose the first most likely action; otherwise sample from
 * softmax(logits) (a Q model: epsilon-greedy with SEED_AGENT_EPSILON) with a
 * generator seeded by seed_rng_init(seed, stream).
 * Parameters start at zero (uniform policy, zero values) and the policy
 * version at 0: load parameters before acting for real.  model_json is
 * copied.  Errors (*out untouched): those of seed_model_new (-SEED_EOPTION
 * for a bad description, -EINVAL for bad shapes or counts, -ENOENT with no
 * BLAS), -EINVAL for an unknown obs_dtype or max_rows < 1. */
int seed_agent_new(seed_agent **out, const char *model_json, seed_dtype obs_dtype, int obs_rank,
                   const int64_t *obs_shape, int num_actions, int max_rows, bool greedy, uint64_t seed,
                   uint64_t stream, seed_err *err);
/* Free a (NULL is fine) and set *a to NULL. */
void seed_agent_free(seed_agent **a);

/* Load parameters from len bytes of raw little-endian f32 in the model's
 * slab order (a params frame's "params" payload; any alignment) and set the
 * policy version.  Errors: -EINVAL when len is not 4 * the number of
 * parameters (err says both sizes); parameters and version are then
 * untouched. */
int seed_agent_load_params(seed_agent *a, const void *data, size_t len, int64_t version, seed_err *err);

/* Choose actions for rows >= 1 observations obs ([rows, obs_shape...], a
 * dtype that converts by the rules above, data of any alignment):
 * actions[rows] always; logits[rows * num_actions] and values[rows] when not
 * NULL (a Q model: the Q values and max_a Q).  Draws exactly one uniform per
 * row from the generator when sampling (none when greedy); a Q model draws
 * as seed_policy_epsilon_greedy does (one uniform per row and one more per
 * row that explores), and nothing when every row's epsilon is the agent's
 * and that is 0.  Errors (nothing written, generator not advanced):
 * -EINVAL for a bad rows, dtype or shape; -ERANGE for a value that does not
 * convert; err says which and where. */
int seed_agent_act(seed_agent *a, int rows, const seed_tensor *obs, int32_t *actions, float *logits,
                   float *values, seed_err *err);

/* What one step of a recurrent agent reads besides the observations, and
 * where it writes its new state; S = seed_agent_state_floats(a). */
typedef struct seed_agent_core {
	const float *prev_reward;   /* [rows]: the reward that came with obs (NULL: zeros) */
	const int32_t *prev_action; /* [rows]: the action before it (NULL or -1: none) */
	const uint8_t *reset;       /* [rows] or NULL: zero the row's state first (a new episode) */
	const float *state;         /* [rows][S]: the state before the step (NULL: zeros) */
	float *state_out;           /* [rows][S] or NULL: after the step; must not overlap state */
	/* [rows] or NULL (the agent's epsilon for every row): a Q model's
	 * exploration of each row, each in [0, 1]; ignored by actor-critic
	 * models.  Read by act only; a model without a core reads nothing
	 * else of seed_agent_core. */
	const float *epsilon;
} seed_agent_core;

/* Floats of recurrent state per row: 0 for a model without a core. */
int seed_agent_state_floats(const seed_agent *a);

/* seed_agent_act for a model with or without a core: one step of rows
 * environments from the state and inputs in c (which may be NULL only
 * without a core).  Same checks, draws and errors as seed_agent_act, and
 * -EINVAL (nothing written) for a row's epsilon outside [0, 1] or NaN. */
int seed_agent_act_core(seed_agent *a, int rows, const seed_tensor *obs, const seed_agent_core *c,
                        int32_t *actions, float *logits, float *values, seed_err *err);

/* For a model with a Gaussian policy (Box actions, seed_model(3)'s
 * "policy"), instead of seed_agent_act(_core): raw[rows * A] the raw
 * samples u ~ N(mean, exp(log_std)) (seed_gaussian_sample: A normal draws
 * a row, none when greedy), or the means when greedy; params[rows * 2A]
 * (each row's A means then A log-stds) and values[rows] when not NULL.
 * Mapping u into an environment's bounds is the caller's
 * (seed_gaussian_to_env with the model's squash: seed_model_squash).  c as
 * for seed_agent_act_core (a Gaussian policy's core takes no previous
 * action).  Errors as seed_agent_act's, and -EINVAL for a categorical or Q
 * model (seed_agent_act_core refuses a Gaussian one alike). */
int seed_agent_act_box(seed_agent *a, int rows, const seed_tensor *obs, const seed_agent_core *c, float *raw,
                       float *params, float *values, seed_err *err);
/* seed_agent_values with state: the values of rows observations seen from
 * the state and inputs in c (e.g. a truncated episode's last observation,
 * from the state before the reset). */
int seed_agent_values_core(seed_agent *a, int rows, const seed_tensor *obs, const seed_agent_core *c,
                           float *values, seed_err *err);

/* The values of rows observations (e.g. the final observations of truncated
 * episodes, to bootstrap from): values[rows].  Same checks and errors as
 * seed_agent_act; never touches the generator. */
int seed_agent_values(seed_agent *a, int rows, const seed_tensor *obs, float *values, seed_err *err);

/* Convert rows observations obs (checked as by seed_agent_act) into dst,
 * rows * seed_agent_obs_bytes bytes in the model's dtype, by the rules
 * above: for a caller that gathers one batch from several clients, each
 * request converted (or refused, and answered with the error) on its own,
 * then acts on the batch in the model's dtype, which needs no conversion.
 * Never allocates.  Errors as seed_agent_act; dst may then be partly
 * written. */
int seed_agent_convert(const seed_agent *a, int rows, const seed_tensor *obs, void *dst, seed_err *err);

/* The version of the parameters in use (seed_agent_load_params' version, or
 * seed_agent_set_policy_version's; 0 at first). */
int64_t seed_agent_policy_version(const seed_agent *a);
/* Set the version after loading parameters straight into the model (e.g.
 * from a checkpoint, through seed_agent_model). */
void seed_agent_set_policy_version(seed_agent *a, int64_t version);

/* The agent's model, owned by a and valid as long as a: for loading
 * parameters from a checkpoint into it, or reading its layout.  Do not run
 * it (its activations are the agent's scratch). */
seed_model *seed_agent_model(seed_agent *a);

int seed_agent_num_actions(const seed_agent *a);
/* Floats of policy output a row (the logits or params a call writes): A,
 * or 2A for a Gaussian policy (seed_model_policy_width). */
int seed_agent_policy_width(const seed_agent *a);
/* Whether the model's policy is Gaussian: the agent acts in Box action
 * spaces, with seed_agent_act_box. */
bool seed_agent_box(const seed_agent *a);
/* The model's observation dtype: SEED_DTYPE_U8 or SEED_DTYPE_F32. */
seed_dtype seed_agent_obs_dtype(const seed_agent *a);
/* Bytes of one observation row in the model's dtype. */
size_t seed_agent_obs_bytes(const seed_agent *a);
/* Rows a call takes without allocating: max_rows at first, then the most
 * rows ever asked for. */
int seed_agent_capacity(const seed_agent *a);

/* The model's head: SEED_HEAD_DUELING for a Q model (epsilon-greedy on Q
 * values), SEED_HEAD_ACTOR_CRITIC for a policy (sampled or greedy). */
seed_model_head seed_agent_head(const seed_agent *a);
/* A Q agent's epsilon for rows given none (see above): in [0, 1], else
 * -EINVAL and it stays.  Kept but unused by an actor-critic agent. */
int seed_agent_set_epsilon(seed_agent *a, double epsilon, seed_err *err);
double seed_agent_epsilon(const seed_agent *a);

#ifdef __cplusplus
}
#endif
#endif
