/* seed/popnet.h: the forward pass of a population of networks that share a
 * layout, each member with weights of its own.
 *
 * A popnet is one model layout (seed/nn.h) and M members.  A batch of rows,
 * each tagged with its member, is computed as:
 *
 *   full rank: each member's P parameters (in the model's slab order) are
 *     given once (seed_popnet_full); rows are grouped by member (a counting
 *     sort), each group goes through the layers with its member's weights
 *     (one matrix product per group and layer), and the results are
 *     scattered back in row order;
 *   low rank r > 0: the members share a centre (P parameters) and each
 *     member's weights are the centre plus a perturbation given as a slice
 *     of floats and a scale (seed_popnet_lowrank_member): the model's
 *     tensors in slab order (seed_model_param_at) each take their part of
 *     the slice in that order, a 2-D tensor of shape [d0, d1] d0 * r floats
 *     as A [d0, r] then d1 * r floats as B [d1, r] (row-major), its
 *     perturbation scale * (A B^T) / sqrt(r), and every other tensor
 *     (biases, convolution weights) its numel floats e, its perturbation
 *     scale * e (seed/evo.h's low-rank noise).  A linear layer computes the
 *     shared product of all the rows with the centre's weights, then adds
 *     each row's correction c (x B) A^T (c = scale / sqrt(r)) and its
 *     member's bias; layers whose perturbation is full (convolutions) are
 *     computed per member group with weights built once per member.
 * Either way a row's logits are those of seed_model_forward with its
 * member's parameters, up to float rounding (the sums are ordered
 * differently).
 *
 * Models: torso layers of any kind, an actor-critic head (logits) or a
 * dueling head (Q values, read as logits: greedy acting takes their argmax),
 * or a Gaussian policy head (seed/nn.h "policy"), whose members act with
 * their deterministic action, the mean: forward gives the A means per row
 * (the log-stds and the value are not computed; a critic torso is not run);
 * a recurrent core is refused (an episode's state would have to travel with
 * the rows).
 *
 * "obs_norm" (seed/nn.h): every row is normalised, after its conversion to
 * f32 and before the first layer, exactly as seed_model_forward does it
 * (the model's clip and epsilon), but with the popnet's own statistics
 * (seed_popnet_obs_norm: the learner's, the same for every member; mean 0,
 * var 1 until given).  The obs_norm.* tensors of a member's parameters
 * (full rank) or of the centre and the slices (low rank) are not read: an
 * evolution's noise and centre updates cover the whole slab and move them
 * as if they were weights, but they are not.  A slice still holds their
 * numel floats each (the layout above), unread.
 *
 * Members are set in three steps, so that whoever builds them (seed/
 * population.h, from an evolution's generation) writes them in place, with
 * no copy: seed_popnet_full or seed_popnet_lowrank forgets the members and
 * makes room for M new ones, the caller writes them (into the buffer
 * returned, or by seed_popnet_lowrank_member), then seed_popnet_ready.
 * Until then, and after seed_popnet_drop, forward refuses.
 *
 * Memory: M x P floats of member parameters in full rank, kept between
 * sets; in low rank the convolution weights and biases per member and
 * B^T, c A^T of each 2-D weight.  Activations for max_rows rows, as
 * seed_model_new.
 *
 * Threads: a popnet belongs to one thread at a time; BLAS runs with
 * seed_blas_threads() threads.
 */
#ifndef SEED_POPNET_H
#define SEED_POPNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/nn.h"
#include "seed/rng.h"
#include "seed/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_popnet seed_popnet;

/* As seed_agent_new's arguments: the model description, observation dtype (SEED_DTYPE_F32 or U8: rows
 * come already converted to it) and shape, actions, rows per call.
 * Errors: those of seed_model_new (-SEED_EOPTION for a bad description),
 * -EINVAL for a model with a recurrent core, or max_rows < 1.  Allocation
 * failure aborts (seed_oom). */
int seed_popnet_new(seed_popnet **out, const char *model_json, seed_dtype obs_dtype, int obs_rank,
                    const int64_t *obs_shape, int num_actions, int max_rows, seed_err *err);
/* Free *p (NULL is fine) and set *p to NULL. */
void seed_popnet_free(seed_popnet **p);
/* The layout, owned by p: its tensors say where each parameter lies; its parameters are scratch the
 * caller may build members in (full rank), and hold the centre in low rank (seed_popnet_lowrank
 * writes them; change them only before the next set). */
seed_model *seed_popnet_model(seed_popnet *p);
/* Full rank: forget the members and return room for M members' parameters, (M, P) floats, member m
 * at m * P, owned by p (kept for the next set), for the caller to fill before seed_popnet_ready. */
float *seed_popnet_full(seed_popnet *p, int M);
/* Low rank r >= 1: forget the members, copy the centre (P floats) into the model's parameters and
 * make room for M members, each then given by seed_popnet_lowrank_member before seed_popnet_ready. */
void seed_popnet_lowrank(seed_popnet *p, int M, int r, const float *centre);
/* Member m in [0, M) of a low-rank set: its slice (the layout above: as many floats as the model's
 * tensors take at rank r, only read during the call) and its scale. */
void seed_popnet_lowrank_member(seed_popnet *p, int m, const float *slice, float scale);
/* The members are all written: forward may run. */
void seed_popnet_ready(seed_popnet *p);
/* Forget the members (forward refuses until the next set is ready). */
void seed_popnet_drop(seed_popnet *p);
/* The observation statistics forward normalises every row with (a model with "obs_norm"): mean and
 * var, D floats each (copied), D = seed_model_obs_norm_dim of the layout; D 0 with both NULL resets
 * them to mean 0, var 1 (a model without "obs_norm" accepts that, and nothing else).  Kept across
 * member sets until the next call.  Errors: -EINVAL (statistics for a model without "obs_norm", D
 * not the model's, mean and var not both given for D > 0 or both NULL for D 0, a mean not finite, a
 * var negative or not finite: err names the element); the statistics are unchanged on error. */
int seed_popnet_obs_norm(seed_popnet *p, int64_t D, const float *mean, const float *var, seed_err *err);
/* Forward rows obs (rows x obs_bytes, the model's dtype) each with its member (member[r] in [0, M)):
 * rows are grouped by member, one matrix product per group, results scattered back in row order.
 * logits [rows][A]: a categorical policy's logits, a dueling head's Q values, or a Gaussian policy's means
 * (the deterministic actions, seed_gaussian_mean's).  rows in [1, max_rows].  Errors: -EINVAL (no
 * members ready, bad rows, a member out of range: err names the row). */
int seed_popnet_forward(seed_popnet *p, int rows, const void *obs, const int32_t *member, float *logits,
                        seed_err *err);
/* The same, then the action of each row: argmax (greedy, the first largest)
 * or sampled from softmax with rng (seed_policy's sampler).  A Gaussian
 * policy's actions are not indices: -EINVAL (use the means forward gives). */
int seed_popnet_act(seed_popnet *p, int rows, const void *obs, const int32_t *member, bool greedy,
                    seed_rng *rng, int32_t *actions, seed_err *err);
/* Bytes of one observation row. */
size_t seed_popnet_obs_bytes(const seed_popnet *p);
/* The layout's parameter count P and actions A. */
size_t seed_popnet_num_params(const seed_popnet *p);
int seed_popnet_num_actions(const seed_popnet *p);

#ifdef __cplusplus
}
#endif
#endif
