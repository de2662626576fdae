/* model_internal.h: a model's description, shared by its two halves
 * (internal to lib/nn).
 *
 * model.c (with model_parse.c and model_layout.c) owns the description:
 * the layers parsed from JSON with their shapes, the parameter and
 * gradient slabs and their layout, the initialisation, copies and loads of
 * parameters.  A backend (cpu.c, and
 * cuda.cu where CUDA is built in) owns the compute: everything sized by the
 * batch and everything that depends on how the layers are computed, behind
 * the opaque nn_backend and the table of its entry points, nn_backend_ops,
 * chosen per model (seed_model_set_device).  The backend reads the
 * description and the slabs and writes only the gradient slab; model.c
 * never looks inside nn_backend.
 *
 * A backend with memory of its own (CUDA) keeps its own copy of both slabs
 * and m->params_at, m->grads_at say where the current values are: model.c
 * pulls them to the host (ops->pull) before the host reads them and marks
 * the host's copy as the newer one whenever a caller may write it
 * (seed_model_params, seed_model_grads, loads and copies); the backend
 * pushes what is newer on the host before it computes, and marks its own
 * copy the newer one after it writes it.  The CPU backend has no copy:
 * its slabs stay SLAB_SYNCED.
 *
 * Invariants: layers[nlayers - 1] is the fused head, a linear layer with
 * head_out(m) outputs: the policy's Ph outputs (A logits; A Gaussian means;
 * or A means then A log-stds when the log-stds are "state"), then the value
 * unless a critic torso computes it; for a dueling head the A advantages,
 * then the value, combined into Q values by the backend.  Every torso
 * layer's shape_in is the previous layer's shape_out (the observation's for
 * layer 0), and the head's is the torso's output or, with a core, the
 * core's H; w, b, dw, db point into params and grads (NULL for layers
 * without parameters); be is built for max_batch rows.
 *
 * The policy's rows (the logits the backend writes, P = seed_model_policy_width
 * floats each) are the fused head's Ph policy outputs, then for a Gaussian
 * head with a "parameter" log-std the A values of policy.log_std, the same
 * in every row (its gradient is the sum over rows of the logits' gradients
 * there).
 *
 * With a critic torso (ncritic > 0), critic[0 .. ncritic - 2] are its layers
 * on the observation, with the torso's invariants, and critic[ncritic - 1]
 * is the value head, a linear layer with 1 output on the critic torso's
 * output; the fused head then holds the policy alone.  There is no core
 * then.
 */
#ifndef SEED_NN_MODEL_INTERNAL_H
#define SEED_NN_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

enum layer_kind { L_LINEAR, L_CONV2D, L_RELU, L_TANH, L_FLATTEN, L_SCALE };

typedef struct layer {
	enum layer_kind kind;
	int rank_in, rank_out; /* per-row shapes */
	int64_t shape_in[4], shape_out[4];
	size_t numel_in, numel_out;
	/* linear: n_in -> n_out; conv2d: (H, W, C) -> (OH, OW, F) with k x k
	 * kernels, stride S, pt rows of zeros above and pl columns on the left
	 * (nnk_conv); pad is the "padding" key's number, same its "same" */
	int n_in, n_out;
	int H, W, C, F, k, OH, OW;
	int S, pt, pl, pad;
	bool same;
	float gain;     /* orthogonal init gain of the weight */
	float *w, *b;   /* linear (n_out, n_in), (n_out); conv2d (F, k, k, C), (F) */
	float *dw, *db; /* gradients, same shapes */
	/* scale: y = x * scale[j % nscale] along the last dimension (nscale is
	 * 1 or the last dimension's size); owned, freed with the model */
	float *scale;
	int nscale;
} layer;

/* The optional recurrent core between the torso and the heads (seed/nn.h
 * "core"): an LSTM of H units on I = D + prev_reward + A * prev_action
 * inputs, D the torso's output width.  w, u, b (Keras layout, seed/lstm.h)
 * and dw, du, db point into params and grads; H == 0 means no core. */
typedef struct model_core {
	int H, I, D;
	bool prev_reward, prev_action;
	float *w, *u, *b;    /* (I, 4H), (H, 4H), (4H) */
	float *dw, *du, *db; /* gradients, same shapes */
} model_core;

/* The compute state of one model, defined by the backend. */
typedef struct nn_backend nn_backend;

/* Where a slab's current values are (see above). */
enum slab_at {
	SLAB_SYNCED, /* the host and the device agree (or there is no device) */
	SLAB_HOST,   /* the host's copy is newer (or may be: a caller holds a pointer) */
	SLAB_DEVICE, /* the device's copy is newer */
};

typedef struct nn_backend_ops nn_backend_ops;

enum init_kind { INIT_ORTHOGONAL, INIT_PYTORCH };

/* The policy head's distribution (seed/nn.h "policy"). */
typedef struct model_policy {
	seed_model_policy kind;
	bool state_std;            /* Gaussian: log-stds from the head ("state"), else policy.log_std */
	float log_std_init;        /* Gaussian, "parameter": policy.log_std's initial value */
	seed_squash squash;        /* Gaussian: how actions reach the environment */
	int P, Ph;                 /* floats per row of logits (A or 2A); of them, the head's outputs */
	float *log_std, *dlog_std; /* "parameter": [A] in params and grads; else NULL */
} model_policy;

/* Running observation normalisation (seed/nn.h "obs_norm"): on f32
 * observations of rank 1 (D values), y = clip((x - mean) / sqrt(var + eps),
 * -clip, clip) before every torso.  mean, var and count point into params
 * (obs_norm.mean [D], obs_norm.var [D], obs_norm.count [1], the slab's
 * first 2D + 1 floats: not trainable, see seed_model_trainable); on false,
 * all NULL. */
typedef struct model_obs_norm {
	bool on;
	int D;
	double clip, eps;
	float *mean, *var, *count;
} model_obs_norm;

struct seed_model {
	seed_dtype obs_dtype;
	int obs_rank;
	int64_t obs_shape[4];
	size_t obs_numel;
	int A, max_batch;
	enum init_kind init;
	seed_model_head head; /* what the fused head's outputs mean */
	model_policy policy;  /* the actor-critic head's policy */
	model_obs_norm norm;  /* the observations' normalisation, before the torsos */
	int nlayers;          /* the torso's layers, then the fused head */
	layer *layers;
	int ncritic;           /* the critic torso's layers then the value head; 0: none */
	layer *critic;         /* [ncritic] */
	model_core core;       /* between layers[nlayers - 2] and the head; H == 0: none */
	float *params, *grads; /* (nparams) each, 64-byte aligned */
	size_t nparams;
	seed_model_param *tensors;
	int ntensors;
	char *names;               /* the tensors' names, back to back */
	nn_backend *be;            /* the compute, for max_batch rows */
	const nn_backend_ops *ops; /* be's entry points: nn_cpu_ops unless a device was chosen */
	int ordinal;               /* the device's number (cuda:N) */
	char device[24];           /* "cuda:N" (seed_model_device) */
	enum slab_at params_at, grads_at;
	int last_B; /* rows of the last forward (T * B); 0 before the first */
	int last_T; /* its steps (1 for seed_model_forward) */
	/* An optimizer's state bound to the device (seed_model_device_update):
	 * its host array and where its current values are. */
	float *ostate;
	int ostate_slots;
	enum slab_at ostate_at;
};

/* A backend's entry points.  model.c checks the arguments of the public
 * functions (seed/nn.h) and then calls these. */
struct nn_backend_ops {
	const char *name; /* "cpu", "cuda" */
	/* The state for m (description complete, m->max_batch, m->ordinal
	 * set): loads what the backend needs (the BLAS, the device), then
	 * allocates for max_batch rows.  *out is untouched on errors. */
	int (*create)(nn_backend **out, const seed_model *m, seed_err *err);
	/* Free *be (NULL is fine) and set it to NULL. */
	void (*destroy)(nn_backend **be);
	/* Forward over s (checked: seq_ok) into logits and values (either
	 * NULL) for an actor-critic head, or q for a dueling head.  Returns 0,
	 * or -EIO when the device failed (said on stderr). */
	int (*forward)(seed_model *m, const seed_model_seq *s, float *logits, float *values, float *q);
	/* Backward through the last forward's m->last_B rows from dL/dlogits
	 * and dL/dvalues (actor-critic) or dL/dq (dueling), NULL meaning zero;
	 * adds into the gradients.  Returns 0 or -EIO. */
	int (*backward)(seed_model *m, const float *dlogits, const float *dvalues, const float *dq);
	/* With a copy of the slabs of its own (NULL for the CPU): copy the
	 * device's parameters (grads false) or gradients (grads true) to the
	 * host slab; zero the device's gradients. */
	void (*pull)(seed_model *m, bool grads);
	void (*zero_grad)(seed_model *m);
	/* The optimizer on the device (seed/nn.h, seed_model_device_update):
	 * NULL for the CPU.  update pushes what the host changed (the state
	 * too when m->ostate_at is SLAB_HOST), runs u and marks the parameters
	 * and the state the device's; pull_state copies the state to
	 * m->ostate. */
	int (*update)(seed_model *m, const seed_model_update *u);
	void (*pull_state)(seed_model *m);
	int (*grad_sumsq)(seed_model *m, double *sumsq);
	int (*scale_grads)(seed_model *m, float s);
};

/* model_parse.c: read the JSON description json into m (whose observation
 * fields, A and max_batch are set): init, head, core and the layers
 * (allocated here, freed by seed_model_free) with their shapes.  Returns 0
 * or -SEED_EOPTION with err saying what is wrong and where. */
int model_parse(seed_model *m, const char *json, seed_err *err);
/* A layer kind's name as the description spells it ("conv2d"). */
const char *model_kind_name(enum layer_kind kind);
/* A shape as "[84,84,4]" into buf (cut to len). */
void model_shape_str(char *buf, size_t len, int rank, const int64_t *shape);
/* The fused head's outputs: the policy's Ph (the advantages' A for a
 * dueling head), plus the value without a critic torso. */
static inline int head_out(const seed_model *m)
{
	return m->policy.Ph + (m->ncritic ? 0 : 1);
}
/* model_layout.c: the parameters' table, slabs (zeroed) and each layer's
 * pointers into them, for m's parsed layers.  Returns 0 or -SEED_EOPTION
 * (too many parameters). */
int model_layout(seed_model *m, seed_err *err);
/* Initialise the parameters in the host slab with m's scheme (seed_model_init
 * without the slabs' bookkeeping). */
void model_init_layers(seed_model *m, seed_rng *rng);
/* The observation statistics to their initial values (mean 0, var 1, count
 * 1e-4, Gymnasium's RunningMeanStd), without drawing from any rng; nothing
 * without "obs_norm". */
void model_init_obs_norm(seed_model *m);
/* Normalise n values x in place (rows of nm->D) with the statistics mean
 * and var ([D] each), nm's clip and epsilon, in double, clipped
 * (model_obs_norm): the backends call it with the model's own statistics
 * (nm->mean, nm->var), the population's forward (popnet.c) with those it
 * was given, on the observations as f32 before the first layer. */
void model_obs_norm_apply(const model_obs_norm *nm, const float *mean, const float *var, size_t n, float *x);

/* The CPU backend (cpu.c). */
extern const nn_backend_ops nn_cpu_ops;
/* The CUDA backend (cuda.cu), in the module seed-cuda.so that model.c
 * loads when a model is first put on a CUDA device:
 *   const nn_backend_ops nn_cuda_ops;
 *   int nn_cuda_probe(int ordinal, const char *name, seed_err *err);
 * the probe says whether device ordinal exists: 0, or -ENODEV with the
 * CUDA runtime's words in err (no driver, no device, too few devices),
 * naming the device as name. */
typedef int nn_cuda_probe_fn(int ordinal, const char *name, seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
