/* model_internal.h: a model's description, shared by its two halves
 * (internal to lib/nn).
 *
 * model.c owns the description: the layers parsed from JSON with their
 * shapes, the parameter and gradient slabs and their layout, the
 * initialisation, copies and loads of parameters.  The backend (cpu.c; a
 * CUDA twin later) owns the compute: everything sized by the batch and
 * everything that depends on how the layers are computed, behind the
 * opaque nn_backend.  The backend reads the description and the slabs and
 * writes only the gradient slab; model.c never looks inside nn_backend.
 *
 * Invariants: layers[nlayers - 1] is the fused head (a linear layer with
 * A + 1 outputs: the policy's A logits, then the value; for a dueling head
 * the A advantages, then the value, combined into Q values by the
 * backend); every torso layer's shape_in is the previous layer's shape_out
 * (the observation's for layer 0), and the head's is the torso's output or,
 * with a core, the core's H; w, b, dw, db point into params and grads (NULL for layers without
 * parameters); be is built for max_batch rows.
 */
#ifndef SEED_NN_MODEL_INTERNAL_H
#define SEED_NN_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/nn.h"

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

enum init_kind { INIT_ORTHOGONAL, INIT_PYTORCH };

struct seed_model {
	seed_dtype obs_dtype;
	int obs_rank;
	int64_t obs_shape[4];
	size_t obs_numel;
	int A, max_batch;
	enum init_kind init;
	seed_model_head head; /* what the fused head's A + 1 outputs mean */
	int nlayers;          /* the torso's layers, then the fused head */
	layer *layers;
	model_core core;       /* between layers[nlayers - 2] and the head; H == 0: none */
	float *params, *grads; /* (nparams) each, 64-byte aligned */
	size_t nparams;
	seed_model_param *tensors;
	int ntensors;
	char *names;    /* the tensors' names, back to back */
	nn_backend *be; /* the compute, for max_batch rows */
};

/* The backend's state for m (description complete, m->max_batch set):
 * loads what the backend needs (the BLAS), then allocates for max_batch
 * rows.  Errors: those of seed_blas_init (-ENOENT); *out is untouched. */
int nn_backend_new(nn_backend **out, const seed_model *m, seed_err *err);
/* Free *be (NULL is fine) and set it to NULL. */
void nn_backend_free(nn_backend **be);

/* seed_model_forward and seed_model_backward (seed/nn.h), their _q and
 * _seq twins, are the backend's too: they run on m->be. */

#endif
