/* evo.c: evolution strategies, a genetic algorithm, random search,
 * separable NES and augmented random search (seed/evo.h).
 *
 * A seed_evo holds the round being played (its genome table, signs and
 * episodes wanted, exposed as a seed_evo_gen), the episodes reported for
 * it, and what the algorithm carries from round to round: ES its centre and
 * Adam; SNES its centre and stds; ARS its centre; GA and RS the parents and
 * the elite, as genomes.  Nothing here builds a member's weights but
 * seed_evo_best_params (GA, RS): the updates of ES, SNES and ARS add the
 * members' noise into a gradient (or the centre), key by key.
 *
 * The algorithm's draws come from one seed_rng, seed_rng_init(seed,
 * SEED_EVO_ALGO_STREAM), in this order: ES, SNES, ARS, per pair, one key; GA's first
 * round and RS's rounds, per fresh member, one key; GA's later rounds, per
 * child, the parent (seed_rng_below) then the key.  A key is
 * seed_rng_u64 >> 1 (non-negative as an int64).
 */
#include "evo_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/optim.h"
#include "seed/rng.h"

/* ---- the algorithm ----------------------------------------------------------- */

void seed_evo_config_default(seed_evo_config *c, seed_evo_algo a)
{
	memset(c, 0, sizeof *c);
	c->algo = a;
	c->population = a == SEED_EVO_GA ? 1000 : 256;
	c->episodes = 1;
	c->sigma = a == SEED_EVO_ES     ? 0.02
	           : a == SEED_EVO_GA   ? 0.002
	           : a == SEED_EVO_SNES ? 0.01
	           : a == SEED_EVO_ARS  ? 0.03
	                                : 0.0;
	c->rank = 0;
	c->noise_seed = 0;
	c->noise_size = INT64_C(1) << 24;
	c->seed = 1;
	c->lr = a == SEED_EVO_SNES ? 1.0f : a == SEED_EVO_ARS ? 0.02f : 0.01f;
	c->l2 = 0.005f;
	c->temperature = 0;                     /* SNES's rank utilities */
	c->centre_init = SEED_EVO_CENTRE_MODEL; /* the model's initialisation */
	c->truncation = 20;
	c->elite_candidates = 10;
	c->elite_episodes = 30;
}

struct seed_evo {
	seed_evo_config c;
	const seed_noise *noise;
	seed_model *model;
	size_t P;
	seed_rng rng;
	/* The current round: gen points at the arrays below. */
	seed_evo_gen gen;
	int64_t *genome;    /* (M, L) */
	float *sign;        /* (M) ES */
	int32_t *episodes;  /* (M) */
	size_t cap_members; /* rows the arrays hold */
	size_t cap_genome;  /* int64s genome holds */
	double *sum;        /* (cap_members) returns reported this round */
	double *lsum;       /* (cap_members) their lengths */
	int32_t *count;     /* (cap_members) episodes reported this round */
	double *fit;        /* (cap_members) scratch: fitness of the evaluated */
	int *order;         /* (cap_members) scratch: members by fitness */
	float *shaped;      /* (cap_members) ES, SNES scratch */
	/* ES, SNES, ARS */
	float *centre, *grad;  /* (P; ARS: no grad) */
	seed_optim *adam;      /* ES */
	float *sigmas, *grad2; /* SNES (P): the stds, sigma's gradient */
	double sigma_mean;     /* SNES: the stds' mean, the generation's sigma */
	/* GA: the parents of the next phase-0 round, (nparents, parents_len) */
	int64_t *parents;
	int nparents, parents_len;
	/* GA, RS: the elite (elite_len keys; 0 before one) and its score */
	int64_t *elite;
	int elite_len;
	double elite_score;
	/* GA, RS: the best member of the last finished round, for
	 * seed_evo_best_params before any elite */
	int64_t *last_best;
	int last_best_len;
	seed_evo_stats stats;
	int64_t state[16]; /* seed_evo_state_tensors' evo.state */
	double scores[7];  /* evo.scores */
	int64_t ident[2];  /* evo.noise */
};

static int config_check(const seed_evo_config *c, seed_err *err)
{
	if (!evo_algo_ok(c->algo))
		return seed_err_set(err, -EINVAL, "evolution: unknown algorithm %d", (int)c->algo);
	bool centred = seed_evo_algo_centred(c->algo);
	if (c->population < 1 || (centred && c->population % 2))
		return seed_err_set(err, -EINVAL, "evolution: population %d must be %s", c->population,
		                    centred ? "even and at least 2 (antithetic pairs)" : "at least 1");
	if (c->episodes < 1)
		return seed_err_set(err, -EINVAL, "evolution: episodes %d must be at least 1", c->episodes);
	if (!(isfinite(c->sigma) && c->sigma >= 0) || (centred && !(c->sigma > 0)))
		return seed_err_set(err, -EINVAL, "evolution: sigma %g must be finite and %s", c->sigma,
		                    centred ? "> 0" : ">= 0");
	if (c->rank < 0)
		return seed_err_set(err, -EINVAL, "evolution: rank %d is negative", c->rank);
	if (c->algo == SEED_EVO_SNES && c->rank != 0)
		return seed_err_set(err, -EINVAL,
		                    "evolution: snes needs rank 0 (a std per parameter does not factor into "
		                    "low-rank noise), not %d",
		                    c->rank);
	if (!(isfinite(c->lr_sigma) && c->lr_sigma >= 0))
		return seed_err_set(err, -EINVAL, "evolution: lr_sigma %g must be finite and >= 0",
		                    (double)c->lr_sigma);
	if (!(isfinite(c->temperature) && c->temperature >= 0))
		return seed_err_set(err, -EINVAL, "evolution: temperature %g must be finite and >= 0",
		                    c->temperature);
	if (c->temperature != 0 && c->algo != SEED_EVO_SNES)
		return seed_err_set(err, -EINVAL,
		                    "evolution: temperature %g is SNES's (the weights of its update); "
		                    "algorithm %s takes none (0)",
		                    c->temperature, seed_evo_algo_name(c->algo));
	if (c->centre_init != SEED_EVO_CENTRE_MODEL && c->centre_init != SEED_EVO_CENTRE_ZERO)
		return seed_err_set(err, -EINVAL, "evolution: centre_init %d is neither model nor zero",
		                    (int)c->centre_init);
	if (c->centre_init == SEED_EVO_CENTRE_ZERO && !centred)
		return seed_err_set(err, -EINVAL,
		                    "evolution: centre_init zero is for es, snes and ars; %s has no centre "
		                    "(its members start from the model's initialisation)",
		                    seed_evo_algo_name(c->algo));
	if (c->top < 0 || c->top > c->population / 2)
		return seed_err_set(err, -EINVAL, "evolution: top %d is not in [0, population / 2 = %d]",
		                    c->top, c->population / 2);
	if (!isfinite(c->reward_shift))
		return seed_err_set(err, -EINVAL, "evolution: reward_shift %g is not finite",
		                    c->reward_shift);
	if (c->noise_size < 1 || c->noise_size > SEED_NOISE_MAX_SIZE)
		return seed_err_set(err, -EINVAL, "evolution: noise_size %lld is not in [1, %lld]",
		                    (long long)c->noise_size, (long long)SEED_NOISE_MAX_SIZE);
	if (centred) {
		if (!(isfinite(c->lr) && c->lr >= 0))
			return seed_err_set(err, -EINVAL, "evolution: lr %g must be finite and >= 0",
			                    (double)c->lr);
		if (!(isfinite(c->l2) && c->l2 >= 0))
			return seed_err_set(err, -EINVAL, "evolution: l2 %g must be finite and >= 0",
			                    (double)c->l2);
	}
	if (c->algo == SEED_EVO_GA && (c->truncation < 1 || c->truncation > c->population))
		return seed_err_set(err, -EINVAL, "evolution: truncation %d is not in [1, population %d]",
		                    c->truncation, c->population);
	if (!centred) {
		if (c->elite_candidates < 0 || c->elite_candidates > c->population)
			return seed_err_set(err, -EINVAL,
			                    "evolution: elite_candidates %d is not in [0, population %d]",
			                    c->elite_candidates, c->population);
		if (c->elite_episodes < 1)
			return seed_err_set(err, -EINVAL, "evolution: elite_episodes %d must be at least 1",
			                    c->elite_episodes);
	}
	return 0;
}

/* Room for a round of M members and L columns; the arrays keep their
 * contents.  The per-member arrays grow together, to one capacity. */
static void reserve(seed_evo *e, int M, int L)
{
	e->genome = seed_xgrow(e->genome, &e->cap_genome, (size_t)M * (size_t)L, sizeof *e->genome);
	size_t n = (size_t)M, c;
	if (n <= e->cap_members)
		return;
	c = e->cap_members, e->sign = seed_xgrow(e->sign, &c, n, sizeof *e->sign);
	c = e->cap_members, e->episodes = seed_xgrow(e->episodes, &c, n, sizeof *e->episodes);
	c = e->cap_members, e->sum = seed_xgrow(e->sum, &c, n, sizeof *e->sum);
	c = e->cap_members, e->lsum = seed_xgrow(e->lsum, &c, n, sizeof *e->lsum);
	c = e->cap_members, e->count = seed_xgrow(e->count, &c, n, sizeof *e->count);
	c = e->cap_members, e->fit = seed_xgrow(e->fit, &c, n, sizeof *e->fit);
	c = e->cap_members, e->order = seed_xgrow(e->order, &c, n, sizeof *e->order);
	e->shaped = seed_xgrow(e->shaped, &e->cap_members, n, sizeof *e->shaped);
}

/* Point gen at the arrays for a round of M members, L columns. */
static void publish(seed_evo *e, int64_t generation, int phase, int M, int L)
{
	seed_evo_gen *g = &e->gen;
	g->algo = e->c.algo;
	g->generation = generation;
	g->phase = phase;
	g->noise_seed = e->c.noise_seed;
	g->noise_size = e->c.noise_size;
	g->sigma = e->c.algo == SEED_EVO_SNES ? e->sigma_mean : e->c.sigma;
	g->rank = e->c.rank;
	g->members = M;
	g->genome_len = L;
	g->genome = e->genome;
	bool centred = seed_evo_algo_centred(e->c.algo);
	g->sign = centred ? e->sign : NULL;
	g->episodes = e->episodes;
	g->centre = centred ? e->centre : NULL;
	g->sigmas = e->c.algo == SEED_EVO_SNES ? e->sigmas : NULL;
	g->num_params = e->P;
	memset(e->sum, 0, (size_t)M * sizeof *e->sum);
	memset(e->lsum, 0, (size_t)M * sizeof *e->lsum);
	memset(e->count, 0, (size_t)M * sizeof *e->count);
}

static int64_t draw_key(seed_evo *e)
{
	return (int64_t)(seed_rng_u64(&e->rng) >> 1);
}

/* ES, SNES, ARS: M / 2 pairs, each a fresh key, +1 then -1. */
static void round_es(seed_evo *e, int64_t generation)
{
	int M = e->c.population;
	reserve(e, M, 1);
	for (int i = 0; i < M; i += 2) {
		int64_t key = draw_key(e);
		e->genome[i] = e->genome[i + 1] = key;
		e->sign[i] = 1.0f;
		e->sign[i + 1] = -1.0f;
		e->episodes[i] = e->episodes[i + 1] = e->c.episodes;
	}
	publish(e, generation, 0, M, 1);
}

/* GA, RS phase 0: member 0 the elite when there is one, the others fresh
 * genomes (RS, and GA's first round) or children of the parents (GA). */
static void round_evaluate(seed_evo *e, int64_t generation)
{
	int M = e->c.population;
	bool children = e->c.algo == SEED_EVO_GA && e->nparents > 0;
	int L = 1;
	if (children)
		L = e->parents_len + 1;
	if (e->elite_len > L)
		L = e->elite_len;
	reserve(e, M, L);
	int m = 0;
	if (e->elite_len > 0) {
		int64_t *row = e->genome;
		for (int k = 0; k < L; k++)
			row[k] = k < e->elite_len ? e->elite[k] : -1;
		m = 1;
	}
	for (; m < M; m++) {
		int64_t *row = e->genome + (size_t)m * (size_t)L;
		for (int k = 0; k < L; k++)
			row[k] = -1;
		if (!children) {
			row[0] = draw_key(e);
		} else {
			int p = (int)seed_rng_below(&e->rng, (uint32_t)e->nparents);
			const int64_t *par = e->parents + (size_t)p * (size_t)e->parents_len;
			int k = 0;
			while (k < e->parents_len && par[k] >= 0) {
				row[k] = par[k];
				k++;
			}
			row[k] = draw_key(e);
		}
	}
	for (int i = 0; i < M; i++)
		e->episodes[i] = e->c.episodes;
	publish(e, generation, 0, M, L);
}

/* Length of a genome row (keys before the first -1). */
static int row_len(const int64_t *row, int L)
{
	int n = 0;
	while (n < L && row[n] >= 0)
		n++;
	return n;
}

static void set_genome(int64_t **dst, int *dst_len, const int64_t *row, int len)
{
	int64_t *g = seed_xrealloc(*dst, (size_t)len * sizeof *g);
	memcpy(g, row, (size_t)len * sizeof *g);
	*dst = g;
	*dst_len = len;
}

int seed_evo_new(seed_evo **out, const seed_evo_config *c, const seed_noise *noise, seed_model *model,
                 seed_err *err)
{
	int rc = config_check(c, err);
	if (rc)
		return rc;
	if ((rc = evo_check_table(noise, c->noise_seed, c->noise_size, err)))
		return rc;
	int64_t len = seed_evo_noise_len(model, c->rank);
	if (len > c->noise_size)
		return seed_err_set(
		    err, -EINVAL,
		    "evolution: a member's noise takes %lld floats, more than the table's noise_size %lld",
		    (long long)len, (long long)c->noise_size);
	seed_evo *e = seed_xcalloc(1, sizeof *e);
	e->c = *c;
	e->noise = noise;
	e->model = model;
	e->P = seed_model_num_params(model);
	seed_rng_init(&e->rng, c->seed, SEED_EVO_ALGO_STREAM);
	e->stats.best = e->stats.mean = e->stats.median = e->stats.elite = NAN;
	e->elite_score = NAN;
	if (seed_evo_algo_centred(c->algo)) {
		e->centre = seed_xmalloc(e->P * sizeof *e->centre);
		memcpy(e->centre, seed_model_params(model), e->P * sizeof *e->centre);
		if (c->centre_init == SEED_EVO_CENTRE_ZERO) {
			/* The statistics of "obs_norm" (outside the trainable range) stay. */
			size_t first, count;
			seed_model_trainable(model, &first, &count);
			memset(e->centre + first, 0, count * sizeof *e->centre);
		}
	}
	if (c->algo == SEED_EVO_ES || c->algo == SEED_EVO_SNES)
		e->grad = seed_xmalloc(e->P * sizeof *e->grad);
	if (c->algo == SEED_EVO_SNES) {
		e->grad2 = seed_xmalloc(e->P * sizeof *e->grad2);
		e->sigmas = seed_xmalloc(e->P * sizeof *e->sigmas);
		for (size_t i = 0; i < e->P; i++)
			e->sigmas[i] = (float)c->sigma;
		e->sigma_mean = (float)c->sigma;
	}
	if (c->algo == SEED_EVO_ES) {
		seed_optim_config oc;
		seed_optim_config_default(&oc, SEED_OPTIM_ADAM);
		oc.weight_decay = c->l2;
		if ((rc = seed_optim_new(&e->adam, &oc, e->P, err))) {
			seed_evo_free(&e);
			return rc;
		}
	}
	if (seed_evo_algo_centred(c->algo)) {
		round_es(e, 0);
	} else {
		round_evaluate(e, 0);
	}
	*out = e;
	return 0;
}

void seed_evo_free(seed_evo **ep)
{
	if (!ep || !*ep)
		return;
	seed_evo *e = *ep;
	free(e->genome);
	free(e->sign);
	free(e->episodes);
	free(e->sum);
	free(e->lsum);
	free(e->count);
	free(e->fit);
	free(e->order);
	free(e->shaped);
	free(e->centre);
	free(e->grad);
	free(e->grad2);
	free(e->sigmas);
	seed_optim_free(&e->adam);
	free(e->parents);
	free(e->elite);
	free(e->last_best);
	free(e);
	*ep = NULL;
}

const seed_evo_gen *seed_evo_current(const seed_evo *e)
{
	return &e->gen;
}

int seed_evo_report(seed_evo *e, int64_t generation, int m, double ret, int64_t length)
{
	if (generation != e->gen.generation)
		return -ESTALE;
	if (m < 0 || m >= e->gen.members)
		return -ERANGE;
	if (isnan(ret))
		return -EINVAL; /* it would poison the ranking */
	e->sum[m] += ret;
	e->lsum[m] += (double)(length > 0 ? length : 0);
	e->count[m]++;
	e->stats.episodes++;
	e->stats.frames += length > 0 ? length : 0;
	return 0;
}

bool seed_evo_complete(const seed_evo *e)
{
	for (int m = 0; m < e->gen.members; m++)
		if (e->count[m] < e->episodes[m])
			return false;
	return true;
}

/* The evaluated members (an episode at least; ES, SNES, ARS: both of the
 * pair) into e->order, best first (ties: lower index first), their fitness
 * (the mean return less reward_shift times the mean length) in e->fit
 * indexed by member.  Returns how many. */
static int rank_members(seed_evo *e)
{
	int M = e->gen.members, n = 0;
	bool centred = seed_evo_algo_centred(e->c.algo);
	for (int m = 0; m < M; m++) {
		bool ok = e->count[m] > 0;
		if (centred)
			ok = e->count[m & ~1] > 0 && e->count[m | 1] > 0;
		e->fit[m] = ok ? (e->sum[m] - e->c.reward_shift * e->lsum[m]) / e->count[m] : NAN;
		if (ok)
			e->order[n++] = m;
	}
	/* Insertion sort, descending; stable. */
	for (int i = 1; i < n; i++) {
		int v = e->order[i], j = i;
		while (j > 0 && e->fit[e->order[j - 1]] < e->fit[v]) {
			e->order[j] = e->order[j - 1];
			j--;
		}
		e->order[j] = v;
	}
	return n;
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x < y) - (x > y);
}

/* best, mean, median of the n evaluated members' mean returns (not their
 * fitness: reward_shift leaves the returns as the environment pays them). */
static void round_stats(seed_evo *e, int n)
{
	double s = 0, *r = seed_xmalloc((size_t)n * sizeof *r);
	for (int i = 0; i < n; i++) {
		int m = e->order[i];
		r[i] = e->sum[m] / e->count[m];
		s += r[i];
	}
	qsort(r, (size_t)n, sizeof *r, cmp_desc);
	e->stats.best = r[0];
	e->stats.mean = s / n;
	e->stats.median = (r[(n - 1) / 2] + r[n / 2]) / 2;
	free(r);
}

/* ES: the update from the n evaluated members, then a new round. */
static int advance_es(seed_evo *e, int n, int64_t next, seed_err *err)
{
	/* The evaluated members' fitness compacted in member order (pairs stay
	 * adjacent: both or neither are evaluated), then shaped over them. */
	int k = 0;
	for (int m = 0; m < e->gen.members; m++)
		if (e->count[m & ~1] > 0 && e->count[m | 1] > 0)
			e->fit[k++] = e->fit[m];
	seed_evo_centered_ranks(e->fit, n, e->shaped);
	memset(e->grad, 0, e->P * sizeof *e->grad);
	double denom = (double)n * e->c.sigma;
	k = 0;
	for (int m = 0; m < e->gen.members; m += 2) {
		if (!(e->count[m] > 0 && e->count[m + 1] > 0))
			continue;
		/* Members m (+1) and m + 1 (-1) share the key: one pass of its
		 * noise with (shaped[m] - shaped[m + 1]) / (n sigma).  The
		 * descent direction is -g. */
		float w =
		    (float)(-((double)e->shaped[k] * e->sign[m] + (double)e->shaped[k + 1] * e->sign[m + 1]) /
		            denom);
		int rc = seed_evo_add_noise(e->noise, e->model, e->c.rank, (uint64_t)e->genome[m], w, e->grad,
		                            err);
		if (rc)
			return rc;
		k += 2;
	}
	int rc = seed_optim_step(e->adam, e->centre, e->grad, e->c.lr);
	if (rc)
		return seed_err_set(err, rc, "evolution: the Adam step failed");
	round_es(e, next);
	return 0;
}

/* SNES's weights of the n evaluated members into e->shaped, indexed by
 * member.  Temperature 0: the utilities u_k = max(0, ln(n/2 + 1) - ln k) /
 * sum - 1/n, k = 1..n by rank.  Temperature T > 0: softmax(-T x) with
 * x_r = r / (n - 1) - 0.5, r = 0..n-1 by rank, computed as
 * exp(-T r / (n - 1)) / sum (the same after dividing by exp(T / 2), with no
 * overflow for any finite T: every exponent is <= 0). */
static void snes_weights(seed_evo *e, int n)
{
	double T = e->c.temperature, tot = 0;
	if (T > 0) {
		for (int r = 0; r < n; r++)
			tot += n > 1 ? exp(-T * r / (n - 1)) : 1.0;
		for (int r = 0; r < n; r++)
			e->shaped[e->order[r]] = (float)((n > 1 ? exp(-T * r / (n - 1)) : 1.0) / tot);
		return;
	}
	for (int k = 1; k <= n; k++)
		tot += fmax(0.0, log(n / 2.0 + 1.0) - log((double)k));
	for (int k = 1; k <= n; k++)
		e->shaped[e->order[k - 1]] =
		    (float)(fmax(0.0, log(n / 2.0 + 1.0) - log((double)k)) / tot - 1.0 / n);
}

/* SNES: weights over the n evaluated members (best first), the natural
 * gradients of the centre and of the log-stds, then a new round. */
static int advance_snes(seed_evo *e, int n, int64_t next)
{
	snes_weights(e, n);
	size_t P = e->P;
	memset(e->grad, 0, P * sizeof *e->grad);
	memset(e->grad2, 0, P * sizeof *e->grad2);
	for (int m = 0; m < e->gen.members; m += 2) {
		if (!(e->count[m] > 0 && e->count[m + 1] > 0))
			continue;
		/* z = +eps for member m, -eps for m + 1: the pair adds
		 * (u+ - u-) eps to the centre's gradient and (u+ + u-)
		 * (eps^2 - 1) to the stds'. */
		const float *eps = evo_noise_slice(e->noise, (uint64_t)e->genome[m], (int64_t)P);
		float d = e->shaped[m] * e->sign[m] + e->shaped[m + 1] * e->sign[m + 1];
		float t = e->shaped[m] + e->shaped[m + 1];
		for (size_t i = 0; i < P; i++) {
			e->grad[i] += d * eps[i];
			e->grad2[i] += t * (eps[i] * eps[i] - 1.0f);
		}
	}
	double lr_s = e->c.lr_sigma > 0 ? e->c.lr_sigma : (3.0 + log((double)P)) / (5.0 * sqrt((double)P));
	double sum = 0;
	for (size_t i = 0; i < P; i++) {
		e->centre[i] += e->c.lr * e->sigmas[i] * e->grad[i];
		e->sigmas[i] *= (float)exp(lr_s / 2.0 * e->grad2[i]);
		sum += e->sigmas[i];
	}
	e->sigma_mean = sum / (double)P;
	round_es(e, next);
	return 0;
}

/* ARS (V2-t): the top b pairs by max(r+, r-), their returns' std, the step
 * straight into the centre, then a new round. */
static int advance_ars(seed_evo *e, int64_t next, seed_err *err)
{
	/* The evaluated pairs (their first member) into e->order, best first
	 * by max(r+, r-), ties by index. */
	int np = 0;
	for (int m = 0; m < e->gen.members; m += 2)
		if (e->count[m] > 0 && e->count[m + 1] > 0)
			e->order[np++] = m;
	for (int i = 1; i < np; i++) {
		int v = e->order[i], j = i;
		double fv = fmax(e->fit[v], e->fit[v + 1]);
		while (j > 0 && fmax(e->fit[e->order[j - 1]], e->fit[e->order[j - 1] + 1]) < fv) {
			e->order[j] = e->order[j - 1];
			j--;
		}
		e->order[j] = v;
	}
	int b = e->c.top > 0 && e->c.top < np ? e->c.top : np;
	double mean = 0, var = 0;
	for (int i = 0; i < b; i++)
		mean += e->fit[e->order[i]] + e->fit[e->order[i] + 1];
	mean /= 2.0 * b;
	for (int i = 0; i < b; i++) {
		double x = e->fit[e->order[i]] - mean, y = e->fit[e->order[i] + 1] - mean;
		var += x * x + y * y;
	}
	double sd = sqrt(var / (2.0 * b));
	if (sd > 0 && isfinite(sd)) {
		for (int i = 0; i < b; i++) {
			int m = e->order[i];
			/* sign[m] = +1: r+ is member m's fitness. */
			double diff = (e->fit[m] - e->fit[m + 1]) * e->sign[m];
			float w = (float)(e->c.lr * diff / (b * sd));
			int rc = seed_evo_add_noise(e->noise, e->model, e->c.rank, (uint64_t)e->genome[m], w,
			                            e->centre, err);
			if (rc)
				return rc;
		}
	}
	round_es(e, next);
	return 0;
}

int seed_evo_advance(seed_evo *e, seed_err *err)
{
	int64_t next = e->gen.generation + 1;
	int n = rank_members(e);
	e->stats.evaluated = n;
	e->stats.generation++;
	if (n == 0) {
		/* Nothing to learn from: the same members again. */
		publish(e, next, e->gen.phase, e->gen.members, e->gen.genome_len);
		return 0;
	}
	if (e->c.algo == SEED_EVO_ES) {
		round_stats(e, n);
		return advance_es(e, n, next, err);
	}
	if (e->c.algo == SEED_EVO_SNES) {
		round_stats(e, n);
		return advance_snes(e, n, next);
	}
	if (e->c.algo == SEED_EVO_ARS) {
		round_stats(e, n);
		return advance_ars(e, next, err);
	}
	int L = e->gen.genome_len;
	const int64_t *best = e->genome + (size_t)e->order[0] * (size_t)L;
	if (e->gen.phase == 1) {
		/* The elite: the best candidate by its re-evaluation. */
		set_genome(&e->elite, &e->elite_len, best, row_len(best, L));
		e->elite_score = e->fit[e->order[0]];
		e->stats.elite = e->elite_score;
		round_evaluate(e, next);
		return 0;
	}
	round_stats(e, n);
	set_genome(&e->last_best, &e->last_best_len, best, row_len(best, L));
	if (e->c.algo == SEED_EVO_GA) {
		/* The parents: the top T of the evaluated. */
		int T = e->c.truncation < n ? e->c.truncation : n;
		int64_t *par = seed_xmalloc((size_t)T * (size_t)L * sizeof *par);
		for (int i = 0; i < T; i++)
			memcpy(par + (size_t)i * L, e->genome + (size_t)e->order[i] * L,
			       (size_t)L * sizeof *par);
		free(e->parents);
		e->parents = par;
		e->nparents = T;
		e->parents_len = L;
	}
	int E = e->c.elite_candidates < n ? e->c.elite_candidates : n;
	if (E == 0) {
		/* No re-evaluation: the best of the round is the elite. */
		set_genome(&e->elite, &e->elite_len, best, row_len(best, L));
		e->elite_score = e->fit[e->order[0]];
		e->stats.elite = e->elite_score;
		round_evaluate(e, next);
		return 0;
	}
	/* Phase 1: the top E re-evaluated, best first (through a copy: their
	 * rows may come from anywhere in the table). */
	int64_t *cand = seed_xmalloc((size_t)E * (size_t)L * sizeof *cand);
	for (int i = 0; i < E; i++)
		memcpy(cand + (size_t)i * L, e->genome + (size_t)e->order[i] * L, (size_t)L * sizeof *cand);
	memcpy(e->genome, cand, (size_t)E * (size_t)L * sizeof *cand);
	free(cand);
	for (int i = 0; i < E; i++)
		e->episodes[i] = e->c.elite_episodes;
	publish(e, next, 1, E, L);
	return 0;
}

int seed_evo_best_params(seed_evo *e, float *out, seed_err *err)
{
	if (seed_evo_algo_centred(e->c.algo)) {
		memcpy(out, e->centre, e->P * sizeof *out);
		return 0;
	}
	int len;
	const int64_t *g = seed_evo_best_genome(e, &len);
	return evo_build_genome(e->noise, e->model, e->c.algo, e->c.sigma, e->c.rank, g, len, out, err);
}

const int64_t *seed_evo_best_genome(const seed_evo *e, int *len)
{
	if (seed_evo_algo_centred(e->c.algo)) {
		*len = 0;
		return NULL;
	}
	if (e->elite_len > 0) {
		*len = e->elite_len;
		return e->elite;
	}
	if (e->last_best_len > 0) {
		*len = e->last_best_len;
		return e->last_best;
	}
	*len = row_len(e->genome, e->gen.genome_len);
	return e->genome;
}

const seed_evo_stats *seed_evo_get_stats(const seed_evo *e)
{
	return &e->stats;
}

/* ---- checkpoint and resume ----------------------------------------------------- */

enum {
	ST_GENERATION,
	ST_PHASE,
	ST_RNG0, /* ..ST_RNG0 + 3 */
	ST_ADAM_STEPS = ST_RNG0 + 4,
	ST_ROUNDS,
	ST_EPISODES,
	ST_FRAMES,
	ST_ALGO,
	ST_POPULATION,
	ST_RANK,
	ST_PARAMS,
	ST_MEMBERS,
	ST_GENOME_LEN,
	ST_COUNT
};
_Static_assert(ST_COUNT == 16, "evo.state has 16 entries");

static seed_checkpoint_tensor view(const char *name, void *data, seed_dtype dt, int rank, int64_t d0,
                                   int64_t d1)
{
	int64_t shape[2] = {d0, d1};
	seed_checkpoint_tensor t = {name, seed_tensor_view(data, dt, rank, shape)};
	return t;
}

int seed_evo_state_tensors(seed_evo *e, seed_checkpoint_tensor *out, int max)
{
	if (max < SEED_EVO_STATE_TENSORS)
		return -ERANGE;
	int64_t *s = e->state;
	memset(s, 0, sizeof e->state);
	s[ST_GENERATION] = e->gen.generation;
	s[ST_PHASE] = e->gen.phase;
	for (int i = 0; i < 4; i++)
		s[ST_RNG0 + i] = (int64_t)e->rng.s[i];
	s[ST_ADAM_STEPS] = e->adam ? seed_optim_steps(e->adam) : 0;
	s[ST_ROUNDS] = e->stats.generation;
	s[ST_EPISODES] = e->stats.episodes;
	s[ST_FRAMES] = e->stats.frames;
	s[ST_ALGO] = e->c.algo;
	s[ST_POPULATION] = e->c.population;
	s[ST_RANK] = e->c.rank;
	s[ST_PARAMS] = (int64_t)e->P;
	s[ST_MEMBERS] = e->gen.members;
	s[ST_GENOME_LEN] = e->gen.genome_len;
	double *d = e->scores;
	d[0] = e->stats.best;
	d[1] = e->stats.mean;
	d[2] = e->stats.median;
	d[3] = e->stats.elite;
	d[4] = e->elite_score;
	d[5] = e->stats.evaluated;
	d[6] = e->c.sigma;
	e->ident[0] = (int64_t)e->c.noise_seed;
	e->ident[1] = e->c.noise_size;
	int n = 0, M = e->gen.members, L = e->gen.genome_len;
	out[n++] = view("evo.state", s, SEED_DTYPE_I64, 1, ST_COUNT, 0);
	out[n++] = view("evo.scores", d, SEED_DTYPE_F64, 1, 7, 0);
	out[n++] = view("evo.noise", e->ident, SEED_DTYPE_I64, 1, 2, 0);
	out[n++] = view("evo.genome", e->genome, SEED_DTYPE_I64, 2, M, L);
	out[n++] = view("evo.episodes", e->episodes, SEED_DTYPE_I32, 1, M, 0);
	if (seed_evo_algo_centred(e->c.algo)) {
		out[n++] = view("evo.sign", e->sign, SEED_DTYPE_F32, 1, M, 0);
		out[n++] = view("evo.centre", e->centre, SEED_DTYPE_F32, 1, (int64_t)e->P, 0);
	}
	if (e->c.algo == SEED_EVO_ES) {
		float *st = seed_optim_state(e->adam);
		out[n++] = view("evo.adam_m", st, SEED_DTYPE_F32, 1, (int64_t)e->P, 0);
		out[n++] = view("evo.adam_v", st + e->P, SEED_DTYPE_F32, 1, (int64_t)e->P, 0);
	}
	if (e->c.algo == SEED_EVO_SNES)
		out[n++] = view("evo.sigmas", e->sigmas, SEED_DTYPE_F32, 1, (int64_t)e->P, 0);
	if (e->nparents > 0)
		out[n++] = view("evo.parents", e->parents, SEED_DTYPE_I64, 2, e->nparents, e->parents_len);
	if (e->elite_len > 0)
		out[n++] = view("evo.elite", e->elite, SEED_DTYPE_I64, 1, e->elite_len, 0);
	if (e->last_best_len > 0)
		out[n++] = view("evo.best", e->last_best, SEED_DTYPE_I64, 1, e->last_best_len, 0);
	return n;
}

/* The tensor name of ck as dt of the given rank (any shape), or an error. */
static int get_tensor(const seed_checkpoint *ck, const char *name, seed_dtype dt, int rank, bool optional,
                      const seed_tensor **out, seed_err *err)
{
	const seed_tensor *t = seed_checkpoint_get(ck, name);
	*out = NULL;
	if (!t)
		return optional
		           ? 0
		           : seed_err_set(err, -ENOENT, "evolution: the checkpoint has no tensor '%s'", name);
	if (t->dtype != dt || t->rank != rank)
		return seed_err_set(err, -EINVAL,
		                    "evolution: checkpoint tensor '%s' is %s of rank %d, not %s of rank %d",
		                    name, seed_dtype_name(t->dtype), t->rank, seed_dtype_name(dt), rank);
	*out = t;
	return 0;
}

static int want_len(const seed_tensor *t, int64_t n, const char *name, seed_err *err)
{
	if (t && t->shape[0] != n)
		return seed_err_set(err, -EINVAL,
		                    "evolution: checkpoint tensor '%s' has %lld entries, not %lld", name,
		                    (long long)t->shape[0], (long long)n);
	return 0;
}

/* The tensors of a checkpoint's evolution state, as seed_evo_restore
 * finds them (NULL: absent, where that is allowed). */
typedef struct evo_ck {
	const seed_tensor *st, *sc, *no, *ge, *ep, *sg, *ce, *am, *av, *pa, *el, *be, *sd;
} evo_ck;

/* evo.state, evo.scores and evo.noise: present, of their shapes, of this
 * run's table, algorithm, population, rank and P, and in range. */
static int restore_check_state(const seed_evo *e, const seed_checkpoint *ck, evo_ck *t, seed_err *err)
{
	int rc;
	if ((rc = get_tensor(ck, "evo.state", SEED_DTYPE_I64, 1, false, &t->st, err)) ||
	    (rc = want_len(t->st, ST_COUNT, "evo.state", err)) ||
	    (rc = get_tensor(ck, "evo.scores", SEED_DTYPE_F64, 1, false, &t->sc, err)) ||
	    (rc = want_len(t->sc, 7, "evo.scores", err)) ||
	    (rc = get_tensor(ck, "evo.noise", SEED_DTYPE_I64, 1, false, &t->no, err)) ||
	    (rc = want_len(t->no, 2, "evo.noise", err)))
		return rc;
	const int64_t *id = t->no->data;
	if ((uint64_t)id[0] != e->c.noise_seed || id[1] != e->c.noise_size)
		return seed_err_set(err, -EINVAL,
		                    "evolution: the checkpoint's noise table is (seed %llu, size %lld), this "
		                    "run's (seed %llu, "
		                    "size %lld)",
		                    (unsigned long long)id[0], (long long)id[1],
		                    (unsigned long long)e->c.noise_seed, (long long)e->c.noise_size);
	const int64_t *s = t->st->data;
	if (s[ST_ALGO] != e->c.algo || s[ST_POPULATION] != e->c.population || s[ST_RANK] != e->c.rank ||
	    s[ST_PARAMS] != (int64_t)e->P)
		return seed_err_set(
		    err, -EINVAL,
		    "evolution: the checkpoint is of %s, population %lld, rank %lld, %lld parameters; this "
		    "run is %s, population %d, rank %d, %zu parameters",
		    (uint64_t)s[ST_ALGO] <= SEED_EVO_ARS ? seed_evo_algo_name((seed_evo_algo)s[ST_ALGO])
		                                         : "?",
		    (long long)s[ST_POPULATION], (long long)s[ST_RANK], (long long)s[ST_PARAMS],
		    seed_evo_algo_name(e->c.algo), e->c.population, e->c.rank, e->P);
	int64_t M = s[ST_MEMBERS], L = s[ST_GENOME_LEN];
	if (M < 1 || M > e->c.population || L < 1 || L > INT32_MAX || s[ST_GENERATION] < 0 ||
	    (s[ST_PHASE] != 0 && s[ST_PHASE] != 1) || s[ST_ADAM_STEPS] < 0)
		return seed_err_set(err, -EINVAL, "evolution: checkpoint tensor 'evo.state' is out of range");
	return 0;
}

/* The round's tensors (M members of genomes of L keys): genomes, episodes,
 * the optional parents, elite and best, and ES's sign, centre and Adam. */
static int restore_check_round(const seed_evo *e, const seed_checkpoint *ck, int64_t M, int64_t L, evo_ck *t,
                               seed_err *err)
{
	int rc;
	if ((rc = get_tensor(ck, "evo.genome", SEED_DTYPE_I64, 2, false, &t->ge, err)) ||
	    (rc = get_tensor(ck, "evo.episodes", SEED_DTYPE_I32, 1, false, &t->ep, err)) ||
	    (rc = want_len(t->ep, M, "evo.episodes", err)) ||
	    (rc = get_tensor(ck, "evo.parents", SEED_DTYPE_I64, 2, true, &t->pa, err)) ||
	    (rc = get_tensor(ck, "evo.elite", SEED_DTYPE_I64, 1, true, &t->el, err)) ||
	    (rc = get_tensor(ck, "evo.best", SEED_DTYPE_I64, 1, true, &t->be, err)))
		return rc;
	if (t->ge->shape[0] != M || t->ge->shape[1] != L)
		return seed_err_set(
		    err, -EINVAL,
		    "evolution: checkpoint tensor 'evo.genome' is [%lld, %lld], not [%lld, %lld]",
		    (long long)t->ge->shape[0], (long long)t->ge->shape[1], (long long)M, (long long)L);
	if (seed_evo_algo_centred(e->c.algo) &&
	    ((rc = get_tensor(ck, "evo.sign", SEED_DTYPE_F32, 1, false, &t->sg, err)) ||
	     (rc = want_len(t->sg, M, "evo.sign", err)) ||
	     (rc = get_tensor(ck, "evo.centre", SEED_DTYPE_F32, 1, false, &t->ce, err)) ||
	     (rc = want_len(t->ce, (int64_t)e->P, "evo.centre", err))))
		return rc;
	if (e->c.algo == SEED_EVO_SNES &&
	    ((rc = get_tensor(ck, "evo.sigmas", SEED_DTYPE_F32, 1, false, &t->sd, err)) ||
	     (rc = want_len(t->sd, (int64_t)e->P, "evo.sigmas", err))))
		return rc;
	if (t->sd) {
		const float *v = t->sd->data;
		for (size_t i = 0; i < e->P; i++)
			if (!(isfinite(v[i]) && v[i] >= 0))
				return seed_err_set(
				    err, -EINVAL,
				    "evolution: checkpoint tensor 'evo.sigmas'[%zu] is %g, not "
				    "finite and >= 0",
				    i, (double)v[i]);
	}
	if (e->c.algo == SEED_EVO_ES &&
	    ((rc = get_tensor(ck, "evo.adam_m", SEED_DTYPE_F32, 1, false, &t->am, err)) ||
	     (rc = want_len(t->am, (int64_t)e->P, "evo.adam_m", err)) ||
	     (rc = get_tensor(ck, "evo.adam_v", SEED_DTYPE_F32, 1, false, &t->av, err)) ||
	     (rc = want_len(t->av, (int64_t)e->P, "evo.adam_v", err))))
		return rc;
	return 0;
}

/* Everything checked: the state into e, and the round g published. */
static void restore_commit(seed_evo *e, const evo_ck *t, const seed_evo_gen *g)
{
	const int64_t *s = t->st->data;
	int M = g->members, L = g->genome_len;
	int64_t *par = NULL, *eli = NULL, *bst = NULL;
	int elen = t->el ? (int)t->el->shape[0] : 0, blen = t->be ? (int)t->be->shape[0] : 0;
	size_t npar = t->pa ? (size_t)(t->pa->shape[0] * t->pa->shape[1]) : 0;
	if (t->pa)
		par = seed_xmalloc(npar * sizeof *par);
	if (t->el)
		set_genome(&eli, &elen, t->el->data, elen);
	if (t->be)
		set_genome(&bst, &blen, t->be->data, blen);
	reserve(e, M, L);
	memcpy(e->genome, t->ge->data, (size_t)M * (size_t)L * sizeof *e->genome);
	memcpy(e->episodes, t->ep->data, (size_t)M * sizeof *e->episodes);
	if (seed_evo_algo_centred(e->c.algo)) {
		memcpy(e->sign, t->sg->data, (size_t)M * sizeof *e->sign);
		memcpy(e->centre, t->ce->data, e->P * sizeof *e->centre);
	}
	if (e->c.algo == SEED_EVO_SNES) {
		double sum = 0;
		memcpy(e->sigmas, t->sd->data, e->P * sizeof *e->sigmas);
		for (size_t i = 0; i < e->P; i++)
			sum += e->sigmas[i];
		e->sigma_mean = sum / (double)e->P;
	}
	if (e->c.algo == SEED_EVO_ES) {
		float *os = seed_optim_state(e->adam);
		memcpy(os, t->am->data, e->P * sizeof *os);
		memcpy(os + e->P, t->av->data, e->P * sizeof *os);
		seed_optim_set_steps(e->adam, s[ST_ADAM_STEPS]);
	}
	free(e->parents);
	e->parents = par;
	e->nparents = t->pa ? (int)t->pa->shape[0] : 0;
	e->parents_len = t->pa ? (int)t->pa->shape[1] : 0;
	if (par)
		memcpy(par, t->pa->data, npar * sizeof *par);
	free(e->elite);
	e->elite = eli;
	e->elite_len = t->el ? elen : 0;
	free(e->last_best);
	e->last_best = bst;
	e->last_best_len = t->be ? blen : 0;
	for (int i = 0; i < 4; i++)
		e->rng.s[i] = (uint64_t)s[ST_RNG0 + i];
	const double *d = t->sc->data;
	e->stats.generation = s[ST_ROUNDS];
	e->stats.episodes = s[ST_EPISODES];
	e->stats.frames = s[ST_FRAMES];
	e->stats.best = d[0];
	e->stats.mean = d[1];
	e->stats.median = d[2];
	e->stats.elite = d[3];
	e->elite_score = d[4];
	e->stats.evaluated = (int)d[5];
	publish(e, g->generation, g->phase, M, L);
}

int seed_evo_restore(seed_evo *e, const seed_checkpoint *ck, seed_err *err)
{
	evo_ck t = {0};
	int rc = restore_check_state(e, ck, &t, err);
	if (rc)
		return rc;
	const int64_t *s = t.st->data;
	int64_t M = s[ST_MEMBERS], L = s[ST_GENOME_LEN];
	if ((rc = restore_check_round(e, ck, M, L, &t, err)))
		return rc;
	/* The round must be one this run could play. */
	seed_evo_gen g = e->gen;
	g.generation = s[ST_GENERATION];
	g.phase = (int)s[ST_PHASE];
	g.members = (int)M;
	g.genome_len = (int)L;
	g.genome = t.ge->data;
	g.episodes = t.ep->data;
	g.sign = t.sg ? t.sg->data : NULL;
	g.centre = t.ce ? t.ce->data : NULL;
	g.sigmas = t.sd ? t.sd->data : NULL;
	if ((rc = seed_evo_gen_check(&g, err)))
		return rc;
	restore_commit(e, &t, &g);
	return 0;
}
