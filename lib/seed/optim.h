/* seed/optim.h: first-order optimizers over one flat parameter slab.
 *
 * The network's parameters and gradients are each one contiguous array of n
 * floats (the design carves every layer's tensors from one slab), so an
 * optimizer is a loop over n floats plus its own state of a few slots of n
 * floats each, also contiguous, so that a checkpoint saves and restores it
 * as plain arrays next to a step counter.
 *
 * Adam follows PyTorch's torch.optim.Adam (single-tensor path):
 *   g' = g + weight_decay * p                 (L2; or decoupled, see below)
 *   m = beta1 m + (1 - beta1) g'              v = beta2 v + (1 - beta2) g'^2
 *   p = p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 * with t the 1-based step number: eps is added after the square root and
 * after the bias correction.  SEED RL's V-trace agents use Adam with beta1 = 0.
 *
 * RMSProp has two conventions that differ in more than eps, and both are here:
 *   SEED_RMSPROP_TF (default): TensorFlow 1's tf.train.RMSPropOptimizer, the
 *     one IMPALA (scalable_agent) trained with.  ms starts at 1, eps is inside
 *     the square root and the learning rate inside the momentum:
 *       ms = ms + (1 - decay)(g^2 - ms);  mom = momentum mom + lr g / sqrt(ms + eps);  p -= mom
 *   SEED_RMSPROP_TORCH: torch.optim.RMSprop (not centered).  square_avg
 *     starts at 0, eps is outside the square root, the learning rate outside
 *     the momentum buffer:
 *       ms = decay ms + (1 - decay) g^2;  buf = momentum buf + g / (sqrt(ms) + eps);  p -= lr buf
 *     (without momentum, p -= lr g / (sqrt(ms) + eps)).
 *   The same eps means very different damping in the two: IMPALA's 0.01
 *   inside the root is about 0.1 outside it.  Keras 2's RMSprop is the TF
 *   form but starts ms at 0; it is not offered.
 *
 * Weight decay (off by default) is the L2 form, added to the gradient as in
 * torch.optim.Adam and RMSprop; with decoupled_weight_decay it is AdamW's
 * p = p (1 - lr weight_decay) before the update, for either kind.
 *
 * Arithmetic is in float, like the frameworks; per-step scalars (bias
 * corrections) are computed in double.  The update loops are written to be
 * vectorised (restrict pointers, branch-free bodies, fixed-size blocks): GCC
 * vectorises them at -O2 once math errno is off (CFLAGS='-O2 -fno-math-errno'),
 * which is worth about 4x with SSE2; with the default -fmath-errno, sqrtf may
 * set errno, and the loops stay scalar.  Results are the same either way.
 *
 * An optimizer is not thread-safe; distinct optimizers are independent.
 */
#ifndef SEED_OPTIM_H
#define SEED_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum seed_optim_kind {
	SEED_OPTIM_ADAM = 1,
	SEED_OPTIM_RMSPROP = 2,
} seed_optim_kind;

typedef enum seed_rmsprop_style {
	SEED_RMSPROP_TF = 0,    /* TF1 / IMPALA: ms starts at 1, eps inside sqrt, lr inside momentum */
	SEED_RMSPROP_TORCH = 1, /* PyTorch: ms starts at 0, eps outside sqrt, lr outside momentum */
} seed_rmsprop_style;

typedef struct seed_optim_config {
	seed_optim_kind kind;
	float beta1;                      /* Adam, in [0, 1): 0.9 */
	float beta2;                      /* Adam, in [0, 1): 0.999 */
	float eps;                        /* >= 0: Adam 1e-8; RMSProp 0.01 (IMPALA's Atari setting) */
	float decay;                      /* RMSProp, in [0, 1): 0.99 */
	float momentum;                   /* RMSProp, in [0, 1): 0 (no momentum slot is kept) */
	seed_rmsprop_style rmsprop_style; /* SEED_RMSPROP_TF */
	float weight_decay;               /* >= 0: 0 */
	int decoupled_weight_decay;       /* 0: L2 in the gradient; 1: AdamW-style */
} seed_optim_config;

typedef struct seed_optim seed_optim;

/* Fill c with the defaults for kind (values above). */
void seed_optim_config_default(seed_optim_config *c, seed_optim_kind kind);

/* Create an optimizer for n >= 1 parameters with fresh state (step 0).
 * Returns 0 and *out, or -EINVAL with a message in err (may be NULL) for an
 * unknown kind or style, n == 0, or a hyperparameter outside its range. */
int seed_optim_new(seed_optim **out, const seed_optim_config *c, size_t n, seed_err *err);
/* Free *o (NULL is fine) and set *o to NULL. */
void seed_optim_free(seed_optim **o);

/* Apply one update with learning rate lr: params -= f(grads, state).
 * params and grads hold n floats each and must not overlap; grads is not
 * modified.  Increments the step counter.  Returns 0, or -EINVAL (nothing
 * changed) for NULL arrays, params == grads, or lr negative or not finite.
 * Non-finite gradients are not detected here: they would poison the state
 * for good, so check seed_optim_clip_global_norm's result first and skip
 * the step when it is not finite. */
int seed_optim_step(seed_optim *o, float *params, const float *grads, float lr);

/* seed_optim_step on m's slabs, where they are: on a GPU
 * (seed_model_set_device) the update runs there, on the device's
 * parameters, gradients and a device copy of the state (the same formulas,
 * the same float arithmetic), and nothing crosses to the host; on the CPU
 * it is seed_optim_step(o, seed_model_params(m), seed_model_grads(m), lr)
 * restricted to m's trainable range (seed_model_trainable): the floats
 * outside it (a model's "obs_norm" statistics), and their state slots,
 * are left as they are, whatever the weight decay or momentum.
 * The state's newer copy is then m's until seed_optim_state or
 * seed_optim_reset bring it back: m must live while o may need it.
 * Errors: -EINVAL (n is not m's parameter count, lr negative or not
 * finite), -EIO (the device failed). */
int seed_optim_step_model(seed_optim *o, seed_model *m, float lr);
/* seed_optim_clip_global_norm over m's gradients, where they are (on a GPU
 * only the norm crosses); NaN if the device failed. */
double seed_optim_clip_model(seed_model *m, float max_norm);

/* Forget the state: slots back to their initial values, step counter 0. */
void seed_optim_reset(seed_optim *o);

/* Number of parameters n. */
size_t seed_optim_numel(const seed_optim *o);
/* Steps taken so far (Adam's bias correction uses this + 1 for the next). */
int64_t seed_optim_steps(const seed_optim *o);
/* Restore the step counter from a checkpoint; -EINVAL if steps < 0. */
int seed_optim_set_steps(seed_optim *o, int64_t steps);

/* The state for checkpoints: seed_optim_state_size(o) floats at
 * seed_optim_state(o), which is seed_optim_slots(o) slots of n floats back to
 * back, slot i named seed_optim_slot_name(o, i):
 *   Adam: "adam_m", "adam_v";  RMSProp: "rmsprop_ms", then "rmsprop_mom" when
 *   momentum > 0.
 * To export, copy the floats and the step counter out; to import, create an
 * optimizer with the same configuration and n, copy the floats in through
 * the pointer and call seed_optim_set_steps.  The pointer stays valid until
 * seed_optim_free.  Imported values are not checked. */
size_t seed_optim_state_size(const seed_optim *o);
float *seed_optim_state(seed_optim *o);
int seed_optim_slots(const seed_optim *o);
/* NULL when i is not a slot index. */
const char *seed_optim_slot_name(const seed_optim *o, int i);

/* Global-norm gradient clipping over the whole slab.  Returns the norm
 * sqrt(sum g_i^2) before clipping (accumulated in double).  When max_norm is
 * positive and finite and the norm exceeds it, scales g by max_norm / norm
 * (TensorFlow's clip_by_global_norm; PyTorch divides by norm + 1e-6
 * instead), so that the clipped norm is max_norm.  A max_norm that is 0,
 * negative, infinite or NaN only measures.  A non-finite norm leaves g
 * untouched: the caller should skip the step.  g may be NULL only if n == 0
 * (norm 0). */
double seed_optim_clip_global_norm(float *g, size_t n, float max_norm);

/* Linear learning-rate decay: lr0 * (1 - t / total) for 0 <= t <= total,
 * lr0 * 1 before step 0 and 0 after step total, floored at lr_min (the
 * result is max(that, lr_min)).  total <= 0 means no decay: lr0.  With
 * lr_min = 0 this is seed_rl's PolynomialDecay(lr0, total, 0), linear;
 * note the floor is a clamp, not TF's end_learning_rate interpolation. */
float seed_optim_lr_linear(float lr0, int64_t t, int64_t total, float lr_min);

#ifdef __cplusplus
}
#endif
#endif
