/* seed/population.h: the forward pass of a whole population of networks.
 *
 * Uber's accelerated neuroevolution batches the inference of every member of
 * a population into the same large matrix products.  A population is one
 * model layout (seed/nn.h) and a generation (seed/evo.h): M members, each
 * with its own parameters, rebuilt from the shared noise table.  A batch of
 * rows, each tagged with its member, is computed as:
 *
 *   full rank (rank 0, and every GA, RS and SNES generation): each member's
 *     parameters are built once per seed_population_set (M x P floats);
 *     rows are grouped by member (a counting sort), each group goes through
 *     the layers with its member's weights (one matrix product per group
 *     and layer), and the results are scattered back in row order;
 *   low rank (an ES or ARS generation with rank r > 0, seed/evo.h): a linear
 *     layer computes the shared product of all the rows with the centre's
 *     weights, then adds each row's correction c (x B) A^T (c = sign sigma
 *     / sqrt(r), A and B read straight from the noise table, 2 r (in + out)
 *     multiply-adds a row) and its member's bias noise; layers whose noise
 *     is full (convolutions) are computed per member group with weights
 *     built once per seed_population_set.
 * Either way a row's logits are those of seed_model_forward with
 * seed_evo_member_params' parameters, up to float rounding (the sums are
 * ordered differently).  The forward pass is nn's seed/popnet.h; a
 * population builds its members, in place, from the generation.
 *
 * Models: torso layers of any kind, an actor-critic head (logits) or a
 * dueling head (Q values, read as logits: greedy acting takes their argmax),
 * or a Gaussian policy (seed/nn.h "policy"): forward gives each row's A
 * means, its member's deterministic action, and act refuses it (its
 * actions are real numbers); a recurrent core is refused (an episode's
 * state would have to travel with the rows).
 *
 * "obs_norm" (seed/nn.h): every member normalises its observations with
 * the generation's statistics (obs_dim, obs_mean, obs_var: the learner's),
 * mean 0 and var 1 when it gives none, never with the obs_norm.* tensors
 * its own parameters hold (an evolution's noise moves them as if they were
 * weights); seed/popnet.h's seed_popnet_obs_norm.
 *
 * GA members are built from their parents, each parent once; a phase-0
 * GA set keeps the parents it built (up to 64), and the next sets build a
 * parent from a kept one plus at most one key: (T + M) x P additions a
 * round however long the genomes.  The same floats either way.
 *
 * Memory: M x P floats of member parameters in full rank (256 members of
 * the MinAtar network's 132,000 parameters: 135 MB), kept between
 * generations, and up to 64 x P for a GA's kept parents; in low rank the
 * convolution weights and biases per member and B^T, c A^T of each 2-D
 * weight.  Activations for max_rows rows, as seed_model_new.
 *
 * Threads: a population belongs to one thread at a time; BLAS runs with
 * seed_blas_threads() threads.
 */
#ifndef SEED_POPULATION_H
#define SEED_POPULATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/evo.h"
#include "seed/noise.h"
#include "seed/rng.h"
#include "seed/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_population seed_population;

/* As seed_agent_new's arguments: the model description, observation dtype (SEED_DTYPE_F32 or U8: rows
 * come already converted to it) and shape, actions, rows per call.
 * Errors: those of seed_model_new (-SEED_EOPTION for a bad description),
 * -EINVAL for a model with a recurrent core.  Allocation failure aborts
 * (seed_oom). */
int seed_population_new(seed_population **out, const char *model_json, seed_dtype obs_dtype, int obs_rank,
                        const int64_t *obs_shape, int num_actions, int max_rows, seed_err *err);
/* Free *p (NULL is fine) and set *p to NULL. */
void seed_population_free(seed_population **p);
/* Take a generation: build each member's weights once (full rank), or what the low-rank forward needs.
 * g is copied (nothing of it is kept); noise must stay alive until the
 * next seed_population_set or seed_population_free (low rank reads it).
 * Errors: -EINVAL (P mismatch, noise identity mismatch, a bad generation as
 * seed_evo_gen_check says, observation statistics whose obs_dim is not the
 * model's "obs_norm" D or for a model without "obs_norm": err names obs_dim
 * and D); on error the population has no
 * generation (forward refuses until a set succeeds). */
int seed_population_set(seed_population *p, const seed_noise *noise, const seed_evo_gen *g, seed_err *err);
/* Forward rows obs (rows x obs_bytes, the model's dtype) each with its member (member[r] in [0, M)):
 * rows are grouped by member, one matrix product per group, results scattered back in row order.
 * logits [rows][A] (a Gaussian policy's: the A means).  rows in [1, max_rows].  Errors: -EINVAL (no
 * generation set, bad rows, a member out of range: err names the row). */
int seed_population_forward(seed_population *p, int rows, const void *obs, const int32_t *member,
                            float *logits, seed_err *err);
/* The same, then the action of each row: argmax (greedy, the first largest)
 * or sampled from softmax with rng (seed_policy's sampler).  A Gaussian
 * policy's actions are not indices: -EINVAL (use the means forward gives). */
int seed_population_act(seed_population *p, int rows, const void *obs, const int32_t *member, bool greedy,
                        seed_rng *rng, int32_t *actions, seed_err *err);
/* Bytes of one observation row. */
size_t seed_population_obs_bytes(const seed_population *p);
/* The layout's parameter count P and actions A, for checks. */
size_t seed_population_num_params(const seed_population *p);
int seed_population_num_actions(const seed_population *p);

#ifdef __cplusplus
}
#endif
#endif
