/* seed/nn.h: actor-critic and dueling Q models on the CPU, with backprop.
 *
 * A model is a torso described in JSON, an optional recurrent core ("core"
 * below), then two heads on the torso's (or the core's) output: a policy
 * head (linear -> num_actions logits, or a Gaussian's parameters: "policy"
 * below) and a value head (linear -> 1, on a critic torso of its own when
 * "critic_torso" says so), or a dueling Q head ("head" below).  The JSON is
 * an object:
 *
 *   {"torso": [{"type": "conv2d", "filters": 16, "kernel": 3},
 *              {"type": "relu"}, {"type": "flatten"},
 *              {"type": "linear", "out": 128}, {"type": "relu"}],
 *    "init": "orthogonal"}
 *
 * Layers ("type" and its keys; unknown keys are errors):
 *   linear  "out": n       y = x W^T + b, W [out, in], b [out]; input rank 1
 *   conv2d  "filters": f, "kernel": k, "stride": s, "padding": p
 *                          input [H, W, C] (HWC, as MinAtar observations
 *                          come); stride s (default 1); p rows and columns
 *                          of zeros on every side (0..k-1, default 0, or
 *                          "valid" for 0), output [(H+2p-k)/s+1,
 *                          (W+2p-k)/s+1, f] (rounded down), or "same":
 *                          output [ceil(H/s), ceil(W/s), f], padded as
 *                          TensorFlow's "SAME" (the odd row or column at
 *                          the bottom or right); weight [f, k, k, C]
 *                          (filter, row, column, channel: PyTorch's
 *                          [f, C, k, k] permuted (0, 2, 3, 1)), bias [f];
 *                          without "stride" and "padding", the layer of
 *                          before those keys (stride 1, no padding)
 *   relu, tanh             element-wise
 *   flatten                any rank -> rank 1, row-major (HWC order)
 *   scale   "by": x or [x1, ..., xn]
 *                          y = x * by along the last dimension: one factor,
 *                          or one per element of the last dimension (n its
 *                          size); fixed, no parameters (a fixed input
 *                          normalisation: inputs of order 0.01 next to
 *                          others of order 1 learn badly)
 * The torso must end with a rank-1 output (flatten after conv2d); an empty
 * torso puts the heads straight on a rank-1 observation.
 *
 * "core" (optional): {"type": "lstm", "units": H, "prev_reward": bool,
 *   "prev_action": bool} puts an LSTM of H units (seed/lstm.h, Keras's
 *   LSTMCell) between the torso and the heads, as SEED RL's recurrent
 *   agents have it; the heads then read its output h (H values).  Its input
 *   is the torso's output, then with "prev_reward" the previous reward
 *   clipped to [-1, 1] (one value), then with "prev_action" the one-hot of
 *   the previous action (A values): I = D + prev_reward + A * prev_action
 *   for a torso output of D.  Both default to false; unknown keys are
 *   errors.  Its state per row is h then c (seed_model_state_floats); run
 *   it over sequences with seed_model_forward_seq (below).
 *
 * "policy" (optional) chooses the actor-critic head's distribution:
 *   {"type": "categorical"} (the default, as without the key): logits
 *     [B, A] (seed/policy.h); no other key.
 *   {"type": "gaussian", "log_std": "parameter" | "state",
 *    "log_std_init": x, "squash": "clip" | "tanh"}: a diagonal Gaussian
 *     over A real action dimensions (seed/gaussian.h): rows of A means then
 *     A log standard deviations, [B, 2A] (seed_model_policy_width).  With
 *     "parameter" (the default, CleanRL's state-independent log-std) the
 *     policy layer outputs the A means and a tensor policy.log_std [A],
 *     starting at log_std_init, fills every row's second half (its
 *     gradient is the sum over rows); with "state" the policy layer outputs
 *     all 2A, its log-std biases starting at log_std_init (the weights as
 *     "init" says).  log_std_init: a number in -20..20, default 0.
 *     "squash" (default "clip") is how raw samples reach the environment
 *     (seed/gaussian.h; "tanh" needs finite bounds): the model only records
 *     it (seed_model_squash).  Needs the actor-critic head; with a core,
 *     "prev_action" (a one-hot of a discrete action) is refused.
 *
 * "critic_torso" (optional): a list of layers as "torso", on the same
 *   observation; the value head then reads its output (it must end rank 1)
 *   and the policy head the torso's (CleanRL's continuous PPO agent:
 *   {"torso": [linear 64, tanh, linear 64, tanh], "critic_torso": [the
 *   same], "policy": {"type": "gaussian"}}).  An empty list puts the value
 *   head straight on the observation.  Not with a core nor a dueling head.
 *   seed_model_forward computes both torsos (values NULL or not); backward
 *   skips the critic's when dvalues is NULL (it would add zeros).
 *
 * "obs_norm" (optional): running observation normalisation, CleanRL's
 *   continuous-control NormalizeObservation (Gymnasium's wrapper, then a
 *   clip): true for the defaults, false (as without the key) for none, or
 *   {"clip": c, "epsilon": e} (each optional, numbers above 0: c = 10,
 *   e = 1e-8, e at most 1).  Every observation x of D values becomes
 *     y = clip((x - mean) / sqrt(var + e), -c, c)
 *   (in double, then float; a NaN stays NaN) before the torso and the
 *   critic torso (and before the heads when the torso is empty).  mean,
 *   var and a count are the tensors obs_norm.* below, in the slab, so that
 *   they travel with the parameters (params frames, checkpoints, copies);
 *   they get no gradient and optimizers leave them alone
 *   (seed_model_trainable); seed_model_obs_norm_update merges a batch of
 *   observations into them (the learner's job).  They start as Gymnasium's
 *   RunningMeanStd does, at mean 0, var 1 and count 1e-4 (so the first
 *   update almost replaces them), in seed_model_new and seed_model_init
 *   alike (no draws: the other parameters are initialised as without the
 *   key).  Only for f32 observations of rank 1 [D]: other ranks and u8
 *   (images: use "scale") are refused, naming the key.
 *
 * "head" (optional) chooses what the model outputs:
 *   "actor-critic" (default): policy logits [B, A] and values [B], read
 *     with seed_model_forward; tensors policy.* and value.* below.
 *   "dueling": Q values [B, A] (Wang et al. 2016, the head of SEED's R2D2
 *     agent): a value stream V = linear(in -> 1) and an advantage stream
 *     Adv = linear(in -> A) on the torso's output, combined as
 *     Q[a] = V + Adv[a] - mean_a' Adv[a'].  Read with seed_model_forward_q,
 *     backpropagate with seed_model_backward_q; tensors advantage.* and
 *     value.* below.  For Q-learning (r2d2): programs that act or learn
 *     with policy logits refuse it.
 *
 * "init" (optional) chooses seed_model_init's scheme:
 *   "orthogonal" (default): orthogonal weights (as torch.nn.init.orthogonal_)
 *     with gain sqrt(2) in the torso and the critic torso, 0.01 for the policy head, 1 for the
 *     value head and for a dueling head's advantage stream, zero biases.  This is the initialisation of the
 * IMPALA and PPO baselines (OpenAI baselines, CleanRL): the tiny policy gain starts from a near-uniform
 * policy (maximum entropy, so early exploration is not biased by random weights) and orthogonal torso weights
 * keep activations and gradients at the same scale through the layers.  It is what learns CartPole fastest
 * with PPO/A2C in those baselines. "pytorch": PyTorch's defaults for nn.Linear / nn.Conv2d, weights and
 *     biases uniform in +-1/sqrt(fan_in).
 *
 * Parameters live in ONE float slab and their gradients in another with the
 * same layout, carved per tensor in this order, without gaps:
 *   obs_norm.mean [D], obs_norm.var [D], obs_norm.count [1]
 *                                       with "obs_norm": the statistics,
 *                                       first, not trainable
 *   torso.<i>.weight, torso.<i>.bias    for each linear/conv2d layer i (its
 *                                       index in the torso list)
 *   critic_torso.<i>.weight, critic_torso.<i>.bias
 *                                       the same for the critic torso
 *   core.kernel [I, 4H], core.recurrent_kernel [H, 4H], core.bias [4H]
 *                                       with a core (Keras's layout, gates
 *                                       i, f, c, o)
 *   policy.weight [Ph, in], value.weight [1, vin],
 *   policy.bias [Ph], value.bias [1]    Ph = A, or 2A for a Gaussian with
 *                                       "state" log-stds (means' rows
 *                                       first); vin = in, or the critic
 *                                       torso's output width
 *   policy.log_std [A]                  a Gaussian with "parameter" log-stds
 * (a dueling head: advantage.weight [A, in], value.weight [1, in],
 * advantage.bias [A], value.bias [1], in the same places; without a critic torso the two heads' weights are
 * adjacent so that they form one [Ph+1, in] matrix: both heads are one matrix product).  The initialisation
 * draws from the rng in this order too (the statistics draw nothing).  seed_model_param_at lists names,
 * shapes and offsets, e.g. for checkpoints.
 *
 * Observations: obs_dtype f32, or u8 converted to f32 (0..255, not scaled).
 * Rank 1 to 4; a conv2d layer needs rank 3 [H, W, C].
 *
 * Threads: a model belongs to one thread at a time; distinct models may be
 * used concurrently.  BLAS runs with seed_blas_threads() threads.
 */
#ifndef SEED_NN_H
#define SEED_NN_H

#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/gaussian.h"
#include "seed/rng.h"
#include "seed/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_model seed_model;

/* One parameter tensor: a named, shaped window of the slabs. */
typedef struct seed_model_param {
	const char *name; /* "torso.0.weight", "policy.bias", ... */
	int rank;
	int64_t shape[4];
	size_t offset; /* index of its first float in params and grads */
	size_t numel;
} seed_model_param;

/* Build a model from its JSON description for observations of obs_dtype
 * (SEED_DTYPE_F32 or SEED_DTYPE_U8) and shape obs_shape[obs_rank], with
 * num_actions policy logits, for batches of at most max_batch rows.
 * Parameters and gradients start at zero (obs_norm's statistics at their
 * initial values): call seed_model_init (or load parameters).  Loads the
 * BLAS (seed_blas_init) on first use.
 * Errors: -SEED_EOPTION (bad JSON: err names the layer index and key),
 * -EINVAL (bad dtype, shape, num_actions or max_batch), -ENOENT (no BLAS). */
int seed_model_new(seed_model **out, const char *json, seed_dtype obs_dtype, int obs_rank,
                   const int64_t *obs_shape, int num_actions, int max_batch, seed_err *err);
/* Free m (NULL is fine) and set *m to NULL. */
void seed_model_free(seed_model **m);

/* Make room for batches of up to max_batch rows (no change when it is not
 * more than seed_model_max_batch).  Parameters and gradients are kept; the
 * activations of the last forward are not (backward then needs a new
 * forward).  Errors: -EINVAL (too many rows for the shapes), m unchanged. */
int seed_model_reserve(seed_model *m, int max_batch, seed_err *err);

/* Initialise the parameters with the model's "init" scheme, drawing from
 * rng (same rng state, same parameters).  Gradients are not touched. */
void seed_model_init(seed_model *m, seed_rng *rng);

/* The parameter and gradient slabs (seed_model_num_params floats each,
 * 64-byte aligned, owned by m). */
float *seed_model_params(seed_model *m);
float *seed_model_grads(seed_model *m);
/* The parameters for reading only (publishing, saving): brought to the host
 * as seed_model_params does, but a model on a GPU keeps its device's copy
 * as the current one (the next forward copies nothing back). */
const float *seed_model_params_read(const seed_model *m);
size_t seed_model_num_params(const seed_model *m);

/* Parameter tensors in slab order: i in [0, seed_model_num_tensors); NULL
 * past the end.  The pointers live as long as m. */
int seed_model_num_tensors(const seed_model *m);
const seed_model_param *seed_model_param_at(const seed_model *m, int i);
/* The tensor called name, or NULL. */
const seed_model_param *seed_model_param_find(const seed_model *m, const char *name);

int seed_model_num_actions(const seed_model *m);

/* The kind of head the description chose ("head"). */
typedef enum seed_model_head {
	SEED_HEAD_ACTOR_CRITIC, /* policy logits and values: seed_model_forward */
	SEED_HEAD_DUELING,      /* Q values: seed_model_forward_q */
} seed_model_head;
seed_model_head seed_model_head_kind(const seed_model *m);
/* "actor-critic" or "dueling", as the description spells it. */
const char *seed_model_head_name(seed_model_head head);

/* The actor-critic head's policy ("policy"): categorical (logits [B, A],
 * seed/policy.h) or a diagonal Gaussian (rows of A means then A log-stds,
 * [B, 2A], seed/gaussian.h).  A dueling head is categorical. */
typedef enum seed_model_policy {
	SEED_POLICY_CATEGORICAL,
	SEED_POLICY_GAUSSIAN,
} seed_model_policy;
seed_model_policy seed_model_policy_kind(const seed_model *m);
/* "categorical" or "gaussian", as the description spells it. */
const char *seed_model_policy_name(seed_model_policy kind);
/* Floats per row of the logits that seed_model_forward writes and
 * seed_model_backward reads: A (categorical, and a dueling head's Q
 * values), 2A (Gaussian).  Size logits buffers with it, not with
 * seed_model_num_actions. */
int seed_model_policy_width(const seed_model *m);
/* D, the features "obs_norm" keeps statistics of (the observation's numel), or 0 without
 * "obs_norm". */
int seed_model_obs_norm_dim(const seed_model *m);
/* A Gaussian policy's squash mode ("squash") into *out: 0, or -EINVAL
 * (*out untouched) for a categorical policy. */
int seed_model_squash(const seed_model *m, seed_squash *out);
int seed_model_max_batch(const seed_model *m);
/* Bytes of one observation row as forward reads it. */
size_t seed_model_obs_bytes(const seed_model *m);
/* A one-line description ("u8[10,10,4] conv2d(16,k3) relu flatten
 * linear(128) relu | heads 6+1 | 132695 params"; "obs_norm" adds
 * " obs_norm" after the observation's shape; a core adds, before the
 * heads, "| lstm(64) +reward +action", a critic torso "| critic
 * linear(64) tanh"; a Gaussian policy's heads read "heads
 * gaussian(6,parameter,clip)+1") into buf; returns the length it needed,
 * like snprintf. */
int seed_model_summary(const seed_model *m, char *buf, size_t len);

/* Forward pass on B rows (1 <= B <= max_batch) of obs (B x obs_bytes,
 * any alignment): logits [B, P] (P = seed_model_policy_width: A, or 2A for
 * a Gaussian policy) and values [B] (either may be NULL).  Keeps
 * the activations for seed_model_backward.  A model with a core runs the B
 * rows as one step (T = 1) from a zero state, with zero previous rewards
 * and actions: seed_model_forward_seq carries state.  Errors: -EINVAL (bad
 * B). */
int seed_model_forward(seed_model *m, int B, const void *obs, float *logits, float *values);
/* seed_model_forward_q and seed_model_backward_q are their twins for a
 * dueling head: Q values q [B, A] (not NULL) out, dL/dq [B, A] in (NULL
 * means zero), flowing into both streams and the torso.  Each pair refuses
 * (-EINVAL) the other kind of head, so that neither output is misread. */
int seed_model_forward_q(seed_model *m, int B, const void *obs, float *q);

/* Backward pass for the last forward, which must have had the same B:
 * given dL/dlogits [B, P] and dL/dvalues [B] (either may be NULL, meaning
 * zero), ADD dL/dparams into the gradient slab.  May be called several times
 * after one forward.  Errors: -EINVAL (no forward yet, a different B, or,
 * with a core, a last forward of more than one step: see the _seq twins). */
int seed_model_backward(seed_model *m, int B, const float *dlogits, const float *dvalues);
int seed_model_backward_q(seed_model *m, int B, const float *dq);

/* Floats of recurrent state per row: 2H for an LSTM core (h then c), 0 without a core. */
int seed_model_state_floats(const seed_model *m);

/* A batch of sequences for the _seq functions.  S is
 * seed_model_state_floats(m); prev_reward is clipped to [-1, 1] before use;
 * a NULL prev_action gives zero inputs, the all-zero one-hot (no previous
 * action), as -1 does. */
typedef struct seed_model_seq {
	int T, B;                   /* steps and rows: obs is [T][B] rows, time-major */
	const void *obs;            /* T*B observation rows (seed_model_obs_bytes each) */
	const float *prev_reward;   /* [T][B]; read only when the core asks for it (NULL: zeros) */
	const int32_t *prev_action; /* [T][B]; idem (NULL: zeros; -1 or out of range: all-zero one-hot) */
	const uint8_t *reset;       /* [T][B] or NULL: row b's state is zeroed before step t */
	const float *state0;        /* [B][S] or NULL (zeros): the state before step 0 */
	float *state_out;           /* [B][S] or NULL: the state after step T-1 */
} seed_model_seq;

/* Forward over T steps of B rows: logits [T][B][P] and values [T][B]
 * (either may be NULL), or for a dueling head Q values q [T][B][A].  The
 * core runs through time from state0, its state zeroed for row b before
 * step t where reset[t][b] != 0, and writes state_out last (it may be
 * state0's buffer); without a core the T*B rows are
 * independent and this is seed_model_forward on them (state, rewards,
 * actions and resets are not read).  T*B must be at most
 * seed_model_max_batch (seed_model_reserve makes room).  Keeps the
 * activations for the _seq backward; a forward whose state_out feeds the
 * next call without a backward is R2D2's burn-in.  Never allocates.
 * Errors: -EINVAL (T or B < 1, T*B too many rows, NULL obs or q, the
 * other kind of head). */
int seed_model_forward_seq(seed_model *m, const seed_model_seq *s, float *logits, float *values);
int seed_model_forward_seq_q(seed_model *m, const seed_model_seq *s, float *q);
/* Backward through the last forward (of either family; a plain forward is
 * T = 1): dL/dlogits [T][B][P] and dL/dvalues [T][B] (NULL: zero), or
 * dL/dq [T][B][A], through the heads, back through time into the core
 * and into the torso; ADDS into the gradient slab.  No gradient flows into
 * state0, nor back across a reset.  Never allocates.  Errors: -EINVAL (no
 * forward yet, the other kind of head). */
int seed_model_backward_seq(seed_model *m, const float *dlogits, const float *dvalues);
int seed_model_backward_seq_q(seed_model *m, const float *dq);

/* Devices (doc/gpu.md).  A model computes on the CPU unless told
 * otherwise; device is "cpu", "cuda" (CUDA device 0) or "cuda:N".  On a
 * GPU the parameters and gradients live on the device too: the slabs that
 * seed_model_params and seed_model_grads return are the host's copies,
 * brought up to date when those are called (a caller may write through
 * them: the device takes the host's values before its next forward or
 * backward), and forward, backward, seed_model_zero_grad and loads keep
 * the two coherent.  Observations, outputs and their gradients cross to
 * and from the device in every call (with a core: the previous rewards,
 * actions, resets and the state too).
 * seed_device_check says whether device names a device this build and
 * machine have: 0; -EINVAL (not a device name); -ENODEV (CUDA not built
 * in, or no such device: err says which, in the CUDA runtime's words).
 * seed_model_set_device moves m's compute to device (parameters and
 * gradients kept, the activations of the last forward not): the errors of
 * seed_device_check, -ENOMEM (device memory); m is unchanged on errors.
 * seed_model_device names m's device: "cpu" or "cuda:N".
 * The CUDA backend computes categorical policies and dueling heads only:
 * moving a model with a Gaussian policy, a critic torso or "obs_norm" to a
 * GPU fails with -ENOTSUP (err says which), the model staying on the CPU. */
int seed_device_check(const char *device, seed_err *err);
int seed_model_set_device(seed_model *m, const char *device, seed_err *err);
const char *seed_model_device(const seed_model *m);

/* Optimizer updates where the model's slabs are, for seed/optim.h's
 * seed_optim_clip_model and seed_optim_step_model (which compute the
 * per-step coefficients; use those).  On the CPU these return -ENOTSUP and
 * the optimizer works on the host's slabs.  On a GPU the parameters,
 * gradients and the optimizer's state stay on the device: only the norm
 * crosses.  rule: 0 Adam, 1 RMSProp (TF1), 2 RMSProp (PyTorch); the
 * coefficients are seed/optim.h's (optim.c's struct coef).
 * seed_model_device_update binds state (nslots * num_params floats, the
 * optimizer's host array) to m's device copy of it: the host's values are
 * taken when state is new to m or was handed out since
 * (seed_model_device_state); afterwards the device's copy is the newer one.
 * seed_model_device_state brings it back into state and marks the host's
 * copy the newer one (the caller may write it).
 * seed_model_device_grad_sumsq: sum of the gradients' squares (in double)
 * into *sumsq; seed_model_device_scale_grads: gradients *= s.
 * Errors: -ENOTSUP (on the CPU), -EIO (the device failed). */
typedef struct seed_model_update {
	int rule, nslots;
	float keep, l2, a, b, a2, b2, step, bc2s, eps, mu;
} seed_model_update;
int seed_model_device_update(seed_model *m, const seed_model_update *u, float *state);
void seed_model_device_state(seed_model *m, float *state);
int seed_model_device_grad_sumsq(seed_model *m, double *sumsq);
int seed_model_device_scale_grads(seed_model *m, float s);

/* Set every gradient to zero. */
void seed_model_zero_grad(seed_model *m);

/* The parameters an optimizer may change: the floats [*first, *first +
 * *count) of the slab, one range (0 and seed_model_num_params without
 * "obs_norm"; after its statistics, the slab's first 2D + 1 floats, with
 * it).  The rest are statistics, which no gradient, weight decay or
 * momentum may move: seed_optim_step_model steps this range only, and
 * whoever steps a slab by hand (seed_optim_step) must do the same. */
void seed_model_trainable(const seed_model *m, size_t *first, size_t *count);

/* Merge rows observations obs ([rows, D] f32, any alignment) into m's
 * statistics ("obs_norm"), exactly as Gymnasium's RunningMeanStd.update:
 * the batch's mean and variance (ddof 0), merged with the running ones by
 * the parallel-variance formula (Chan et al.), weighted by the count, in
 * double, stored as floats (the count is exact up to 2^24 observations,
 * then rounded to the float's precision).  The next forward normalises
 * with the new statistics; the gradients are not touched.  Returns 0, or
 * -EINVAL (m has no "obs_norm", rows < 1, obs NULL; m unchanged). */
int seed_model_obs_norm_update(seed_model *m, int rows, const void *obs);

/* Copy src's parameters into dst (e.g. learner -> inference copy); the two
 * must have the same tensors (names and shapes), max_batch may differ.
 * Errors: -EINVAL (different layouts). */
int seed_model_copy_params(seed_model *dst, const seed_model *src);
/* Load parameters from nbytes of raw little-endian f32 in slab order (any
 * alignment, e.g. straight from a received frame).  Errors: -EINVAL
 * (nbytes is not 4 * seed_model_num_params). */
int seed_model_load_params(seed_model *m, const void *data, size_t nbytes);

#ifdef __cplusplus
}
#endif
#endif
