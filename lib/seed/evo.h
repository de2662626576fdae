/* seed/evo.h: neuroevolution: evolution strategies, a genetic algorithm and
 * random search over a population of networks named by keys.
 *
 * Three algorithms share one machinery (seed_evo_config.algo):
 *
 *   es  OpenAI's evolution strategies (Salimans et al. 2017): a centre theta;
 *       each round M members in antithetic pairs theta +- sigma eps(key) (the
 *       pair shares a key); fitness = mean episode return, shaped by centred
 *       ranks over the members that had an episode (seed_evo_centered_ranks),
 *       the gradient estimate
 *           g = 1 / (M' sigma) * sum_m shaped[m] sign[m] eps(key[m])
 *       (M' the members in the update) fed to Adam (seed/optim.h) as the
 *       descent direction -g, with L2 weight decay l2 * theta added to it as
 *       OpenAI's es does (optimizer.update(-g + l2coeff * theta)).
 *   ga  Uber's deep GA (Such et al. 2017): a member is a genome, a list of
 *       keys: the first seeds the initialisation, each further one adds a
 *       mutation sigma eps(key).  Each round (phase 0) the M members are
 *       ranked; the top T (truncation) are the parents of the next round,
 *       whose members are a random parent's genome plus one new mutation
 *       key; elitism: the top elite_candidates of the round are re-evaluated
 *       over elite_episodes episodes each in a round of their own (phase 1),
 *       and the best of them by that mean is the elite, kept unchanged as
 *       member 0 of every following round until a better one replaces it.
 *       In the first round every member is a fresh genome of length 1.
 *   rs  random search: every member a fresh genome of length 1 (a new
 *       initialisation), with the same elitism as the GA (the elite member 0
 *       of each round, phase 1 re-evaluations).
 *   snes separable natural evolution strategies (Wierstra et al. 2014,
 *       Schaul et al. 2011), with mirrored sampling: a centre mu and a std
 *       per parameter s; members in antithetic pairs mu +- s . eps(key)
 *       (full rank only); the M' evaluated members, best first, get the
 *       utilities u_k = max(0, ln(M'/2 + 1) - ln k) / sum_j max(0, ...) -
 *       1/M' (k = 1..M'), or with temperature T > 0 the weights of
 *       evosax's SNES with a temperature (Lange et al. 2022's discovered
 *       weights): x_k = (k - 1) / (M' - 1) - 0.5 and
 *       u_k = exp(-T x_k) / sum_j exp(-T x_j), all positive and summing to
 *       1, no baseline (M' = 1: u_1 = 1); with z = sign eps(key) a member's
 *       standardised sample,
 *           mu  += lr * s . sum_k u_k z_k
 *           s   *= exp(lr_sigma / 2 * sum_k u_k (z_k^2 - 1))
 *       (lr_sigma 0: (3 + ln P) / (5 sqrt P)); s starts at sigma for every
 *       parameter, mu as centre_init says.
 *   ars augmented random search, V2-t (Mania et al. 2018): members in
 *       antithetic pairs theta +- sigma eps(key) as es's; of the pairs
 *       evaluated, the top b (top; 0: all) by max(r+, r-), and
 *           theta += lr / (b sigma_R) * sum (r+ - r-) eps(key)
 *       with sigma_R the standard deviation (ddof 0) of their 2b returns (no
 *       step when it is 0).  Observation statistics are the evolver's
 *       (seed/evolve.h), as for every algorithm.
 * The centre of es, snes and ars starts (centre_init) at the model's
 * parameters as seed_evo_new finds them (SEED_EVO_CENTRE_MODEL), or at zero
 * (SEED_EVO_CENTRE_ZERO: every parameter an optimizer may change,
 * seed_model_trainable's range, as NeuroEvoBench's ES mean starts; the
 * observation statistics of "obs_norm" keep the model's values); a
 * restored state brings its own centre.
 * Fitness may be shifted (ARS's "shift", for tasks that pay for being alive):
 * a member's fitness is its mean return minus reward_shift times its mean
 * episode length; the round's statistics stay those of the returns.
 * With elite_candidates = 0 there is no phase 1: the elite is the best
 * member of the last round by its own episodes.
 *
 * Keys and noise.  eps(key) comes from the shared noise table (seed/noise.h):
 *   full rank (rank 0): the P floats of the table starting at
 *     seed_noise_index(noise, key, P), in the model's slab order;
 *   low rank r > 0: the model's tensors in slab order (seed_model_param_at)
 *     each take their noise from one slice of Q floats starting at
 *     seed_noise_index(noise, key, Q), consumed in that order: a 2-D tensor
 *     of shape [d0, d1] (a linear layer's weight [out, in], a head's weight)
 *     takes d0 * r floats as A [d0, r] then d1 * r floats as B [d1, r]
 *     (row-major) and its noise is
 *         eps[i][j] = (sum_k A[i][k] B[j][k]) * (1 / sqrt(r))
 *     (the sum over k in order, in float, then the product by the float
 *     1/sqrt(r)): the product of two thin matrices, each element of
 *     variance 1 as a full-rank element's; every other tensor (biases,
 *     convolution weights) takes its numel floats as they are.  Q is the
 *     sum of those lengths.  The population's forward pass (seed/population.h)
 *     then needs no weights per member for 2-D weights: x (W + c A B^T) =
 *     x W + c (x B) A^T.
 * init(s) is seed_model_init(model, rng) with rng = seed_rng_init(s,
 * SEED_EVO_INIT_STREAM): the model's own initialisation scheme.
 *
 * Fitness: a member's fitness is the mean return of all its reported
 * episodes of the round; members without one are left out of the update
 * (ES: both members of their pair).
 *
 * Memory: ES keeps the centre and Adam's two slots (3 P floats) and a
 * gradient (P); SNES the centre, the stds and two gradients (4 P); ARS the
 * centre (P); GA and RS keep genomes only (members x generations keys).
 *
 * Threads: a seed_evo belongs to one thread at a time;
 * seed_evo_member_params may run in several threads at once on distinct
 * scratch models (the table is read-only).
 */
#ifndef SEED_EVO_H
#define SEED_EVO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/checkpoint.h"
#include "seed/error.h"
#include "seed/nn.h"
#include "seed/noise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The seed_rng stream of init(s). */
#define SEED_EVO_INIT_STREAM UINT64_C(0x696e6974)
/* The stream of the algorithm's own draws (keys, parents), seeded with
 * seed_evo_config.seed: per ES pair one key; per fresh GA or RS member one
 * key; per GA child the parent (seed_rng_below over the parents, best
 * first) then the key; a key is seed_rng_u64 >> 1. */
#define SEED_EVO_ALGO_STREAM UINT64_C(0x65766f)

typedef enum seed_evo_algo {
	SEED_EVO_ES = 0,
	SEED_EVO_GA,
	SEED_EVO_RS,
	SEED_EVO_SNES,
	SEED_EVO_ARS
} seed_evo_algo;
const char *seed_evo_algo_name(seed_evo_algo a);          /* "es", "ga", "rs", "snes", "ars" */
int seed_evo_algo_parse(const char *s, seed_evo_algo *a); /* -EINVAL if unknown */
/* Whether a's members are a centre plus a signed perturbation (es, snes,
 * ars: antithetic pairs, a genome of one key, sign and centre in every
 * generation), not genomes (ga, rs). */
bool seed_evo_algo_centred(seed_evo_algo a);

/* A generation (one round of evaluation) as the learner publishes it and the
 * server plays it.  Every pointer is borrowed. */
typedef struct seed_evo_gen {
	seed_evo_algo algo;
	int64_t generation;  /* counts rounds from 0; a GA's elite re-evaluation is a round of its own */
	int phase;           /* 0: evaluate the members; 1: re-evaluate elite candidates (GA, RS) */
	uint64_t noise_seed; /* the noise table's identity */
	int64_t noise_size;
	double sigma;            /* ES: perturbation std; GA: mutation power */
	int rank;                /* 0: full-rank noise; r > 0: low-rank noise of 2-D weights (above) */
	int members;             /* M */
	int genome_len;          /* L: columns of genome */
	const int64_t *genome;   /* [M][L] non-negative keys, -1 pads a shorter genome; ES: L = 1,
	                          * the member's noise key; GA, RS: [0] seeds the initialisation,
	                          * [1..] the mutations in order */
	const float *sign;       /* ES: [M], +1 or -1 (antithetic pairs share a key); NULL otherwise */
	const int32_t *episodes; /* [M]: episodes wanted of each member (>= 1) */
	const float *centre;     /* ES, SNES, ARS: [num_params], the centre; NULL otherwise */
	size_t num_params;       /* P of the model */
	const float *sigmas;     /* SNES: [num_params], each parameter's std (finite, >= 0), full rank
	                          * only; NULL otherwise (sigma is then their mean, for reports) */
	/* Optional (zero: none).  Box members (a Gaussian policy) act with their mean action plus
	 * action_noise times a standard normal draw per element, then mapped into the bounds by the
	 * model's squash.  A model with "obs_norm": every member normalises its observations with
	 * obs_mean and obs_var ([obs_dim] each, the learner's running statistics), not with the
	 * statistics its slab holds; obs_dim 0 (no statistics given) means mean 0, variance 1. */
	double action_noise;
	int64_t obs_dim;
	const float *obs_mean, *obs_var;
} seed_evo_gen;

/* Check g's shape and values: algo, phase, noise_size >= 1, sigma finite
 * and >= 0, rank >= 0, members >= 1, genome_len >= 1, genome non-NULL with
 * every row starting with a key >= 0 and holding keys >= 0 then only -1,
 * es, snes, ars (centred): L = 1, sign of +-1, centre non-NULL, no phase 1;
 * snes: rank 0 and sigmas non-NULL, every element finite and >= 0; sigmas
 * NULL for every other algorithm; episodes >= 1; action_noise
 * finite and >= 0; obs_dim >= 0, obs_mean and obs_var non-NULL exactly when
 * obs_dim > 0, every mean finite, every var finite and >= 0.  Returns 0 or
 * -EINVAL with err naming the field and the member (or element).  For a generation that
 * arrived from elsewhere, before it is played. */
int seed_evo_gen_check(const seed_evo_gen *g, seed_err *err);

/* Floats of one eps(key) slice of the table for a model of this layout and
 * rank: P for rank 0, Q (above) for rank > 0. */
int64_t seed_evo_noise_len(const seed_model *model, int rank);

/* Write member m's parameters (num_params floats) into out; model gives the layout and the
 * initialisation (its own parameters are overwritten; use a scratch model).
 *   ES, ARS: centre + sign[m] * sigma * eps(genome[m][0])
 *   SNES: centre[i] + (sign[m] * sigmas[i]) * eps(genome[m][0])[i] (full rank)
 *   GA: init(genome[m][0]) + sum over k >= 1 (until -1) of sigma * eps(genome[m][k])
 *   RS: init(genome[m][0])
 * Errors: -EINVAL (member out of range, a table that does not match noise_seed/noise_size, P mismatch,
 * a slice longer than the table, a bad generation as seed_evo_gen_check says). */
int seed_evo_member_params(const seed_noise *noise, seed_model *model, const seed_evo_gen *g, int m,
                           float *out, seed_err *err);

/* out[i] += scale * eps(key)[i] for the P parameters of model's layout
 * (model is only read), full or low rank.  Errors: -EINVAL (a slice longer
 * than the table). */
int seed_evo_add_noise(const seed_noise *noise, const seed_model *model, int rank, uint64_t key, float scale,
                       float *out, seed_err *err);

/* Centred ranks (OpenAI ES): fitness[n] -> shaped[n] = rank / (n - 1) - 0.5, ties averaged.
 * rank is the 0-based position in ascending order; tied values share the
 * mean of their positions.  n = 1 gives 0; n = 0 writes nothing. */
void seed_evo_centered_ranks(const double *fitness, int n, float *shaped);

/* Where the centre of es, snes and ars starts (seed_evo_config.centre_init). */
typedef enum seed_evo_centre_init {
	SEED_EVO_CENTRE_MODEL = 0, /* the model's parameters as seed_evo_new finds them */
	SEED_EVO_CENTRE_ZERO       /* zero (the observation statistics aside) */
} seed_evo_centre_init;

/* The algorithm object (the learner's side). */
typedef struct seed_evo_config {
	seed_evo_algo algo;
	int population;       /* M: members of an evaluation round (ES: even, antithetic pairs) */
	int episodes;         /* episodes per member per round (1) */
	double sigma;         /* ES 0.02, GA 0.002, RS unused (0) */
	int rank;             /* 0 full rank */
	uint64_t noise_seed;  /* 0 */
	int64_t noise_size;   /* 2^24 floats (64 MiB) */
	uint64_t seed;        /* the algorithm's own draws (keys, parents): 1 */
	float lr, l2;         /* ES: Adam's learning rate (0.01), L2 weight decay coefficient (0.005);
	                       * SNES: the centre's learning rate (1); ARS: the step size (0.02) */
	float lr_sigma;       /* SNES: the stds' learning rate; 0: (3 + ln P) / (5 sqrt P) (0) */
	double temperature;   /* SNES: > 0 softmax weights of that temperature; 0 rank utilities (0) */
	int top;              /* ARS: the pairs of the update (b); 0: all (0) */
	double reward_shift;  /* fitness = mean return - reward_shift * mean length (0) */
	int truncation;       /* GA: parents kept (T): 20 */
	int elite_candidates; /* GA, RS: top candidates re-evaluated (10) */
	int elite_episodes;   /* GA, RS: episodes of each re-evaluation (30) */

	/* ES, SNES, ARS: where the centre starts (SEED_EVO_CENTRE_MODEL) */
	seed_evo_centre_init centre_init;
} seed_evo_config;
/* Fill c with the defaults of algorithm a: population 256 (ES, RS, SNES,
 * ARS) or 1000 (GA, Uber's Atari population), sigma 0.02 (ES), 0.002 (GA),
 * 0 (RS), 0.01 (SNES), 0.03 (ARS), lr 0.01 (ES), 1 (SNES), 0.02 (ARS), the
 * values in the comments above. */
void seed_evo_config_default(seed_evo_config *c, seed_evo_algo a);

typedef struct seed_evo seed_evo;
/* model: the layout (and for ES, SNES, ARS with centre_init model the initial centre: its
 * current parameters), kept by the caller alive while evo lives.  noise: the table named by c (kept alive by
 * the caller too).  The first round (generation 0, phase 0) is ready at once. Errors: -EINVAL (a bad
 * configuration: err names the key: population < 1, or odd for ES, SNES, ARS; episodes, elite_episodes < 1;
 * sigma not finite or < 0 (or 0 for ES, SNES, ARS); rank < 0, or not 0 for SNES; top not in [0, population /
 * 2]; lr_sigma, reward_shift not finite (lr_sigma < 0); temperature not finite, < 0, or not 0 for an
 * algorithm other than snes; centre_init unknown, or zero for ga or rs (they have no centre); truncation not
 * in [1, population]; elite_candidates not in [0, population]; lr not finite or < 0; l2 not finite or < 0; a
 * table that is not (noise_seed, noise_size); a noise slice longer than the table); those of seed_optim_new
 * (ES).  Allocation failure aborts (seed_oom). */
int seed_evo_new(seed_evo **out, const seed_evo_config *c, const seed_noise *noise, seed_model *model,
                 seed_err *err);
/* Free *e (NULL is fine) and set *e to NULL. */
void seed_evo_free(seed_evo **e);
/* The round to play now (valid until the next seed_evo_advance). */
const seed_evo_gen *seed_evo_current(const seed_evo *e);
/* One episode of member m of round generation: return and length.
 * Returns 0, or -ESTALE for another round (ignore it), -ERANGE for a bad member,
 * -EINVAL for a NaN return (nothing recorded). */
int seed_evo_report(seed_evo *e, int64_t generation, int m, double ret, int64_t length);
/* Whether every member has its episodes. */
bool seed_evo_complete(const seed_evo *e);
/* Finish the round (complete or not: a deadline passed; members without an episode are left out
 * of the update, both of an ES pair) and make the next one.  A round in
 * which no member (ES: no pair) had an episode changes nothing but the
 * round: the same members are played again under the next generation
 * number.  Errors: those of an ES update (seed_evo_add_noise, the Adam
 * step), with a message in err. */
int seed_evo_advance(seed_evo *e, seed_err *err);
/* The best network so far: ES, SNES, ARS their centre, GA and RS the elite (after its re-evaluation;
 * before any, the best member of the last finished round; before any round
 * finished, member 0 of the current round).  out: P floats.  GA and RS
 * build it in the model given to seed_evo_new, whose parameters are then
 * overwritten (ES leaves it alone).  Errors: those of
 * seed_evo_member_params. */
int seed_evo_best_params(seed_evo *e, float *out, seed_err *err);
/* The elite's genome (GA, RS; ES, SNES, ARS: NULL, *len 0).  Before any elite, as
 * seed_evo_best_params says.  Valid until the next seed_evo_advance. */
const int64_t *seed_evo_best_genome(const seed_evo *e, int *len);
typedef struct seed_evo_stats {
	int64_t generation;        /* rounds finished */
	double best, mean, median; /* of the last finished evaluation round's members (NAN before one) */
	double elite;              /* the elite's re-evaluated mean return (GA/RS; NAN until one) */
	int64_t episodes, frames;  /* of all rounds so far (lengths summed) */
	int evaluated; /* members of the last round in its update: with an episode (ES: both of the pair) */
} seed_evo_stats;
const seed_evo_stats *seed_evo_get_stats(const seed_evo *e);

/* Checkpoint and resume.
 *
 * seed_evo_state_tensors fills out[0 .. count) with views of the state
 * (pointing into e, valid until the next seed_evo_advance or seed_evo_free)
 * for seed_checkpoint_save, and returns count (at most
 * SEED_EVO_STATE_TENSORS; max smaller than that is -ERANGE).  Names all
 * start with "evo." and never clash with a model's tensors:
 *   evo.state    i64 [16]  the current round's generation and phase, the
 *                          four words of the algorithm's seed_rng, Adam's
 *                          step count, the stats' generation, episodes and
 *                          frames, the algorithm, population, rank, P, the
 *                          round's members M and genome length L
 *   evo.scores   f64 [7]   the stats' best, mean, median, elite; the
 *                          elite's score; the stats' evaluated; sigma
 *   evo.noise    i64 [2]   the noise table's identity: noise_seed (its
 *                          64 bits), noise_size
 *   evo.genome   i64 [M, L] the current round's genomes
 *   evo.episodes i32 [M]   its episodes wanted
 *   evo.sign     f32 [M]   ES, SNES, ARS
 *   evo.centre   f32 [P]   ES, SNES, ARS (save the model's parameters too,
 *                          from seed_evo_best_params, for seed-eval)
 *   evo.adam_m, evo.adam_v f32 [P]  ES only
 *   evo.sigmas   f32 [P]   SNES only: each parameter's std
 *   evo.parents  i64 [T', Lp] GA: the parents of the next phase-0 round
 *                          (absent before the first round finished)
 *   evo.elite    i64 [Le]  GA, RS: the elite's genome (absent before one)
 *   evo.best     i64 [Lb]  GA, RS: the best member of the last finished
 *                          evaluation round (absent before one)
 * With evo.noise, evo.scores' sigma and the rank (evo.state), evo.elite
 * rebuilds the GA/RS elite anywhere (seed_evo_member_params).
 *
 * seed_evo_restore puts that state back into e, made by seed_evo_new with
 * the same configuration and model layout (a fresh e, or one that ran):
 * the round that was current when the state was taken is current again,
 * with no episodes reported (a resumed learner replays it from the start).
 * Errors: -ENOENT (a tensor missing), -EINVAL (a tensor of another dtype
 * or shape, a state of another algorithm, population, rank, P or noise
 * table: err says which); e is unchanged on error. */
#define SEED_EVO_STATE_TENSORS 13
int seed_evo_state_tensors(seed_evo *e, seed_checkpoint_tensor *out, int max);
int seed_evo_restore(seed_evo *e, const seed_checkpoint *ck, seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
