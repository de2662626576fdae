/* population.c: a population of networks from an evolution's generations
 * (seed/population.h).
 *
 * The forward pass is nn's (seed/popnet.h: the rows sorted by member, the
 * layers computed per member group, full or low rank); this file turns a
 * generation (seed/evo.h) into the members it computes with, built in
 * place in the popnet's buffers:
 *   ES, ARS and SNES (the centred algorithms), full rank: each member as
 *     seed_evo_member_params builds it (SNES: the centre plus sign times
 *     the per-parameter sigmas times eps; SNES is full rank only);
 *   ES and ARS, low rank: the centre, and each member's noise slice and
 *     its scale sign sigma, as the popnet takes them;
 *   GA and RS: each member's parameters from its genome, each parent
 *     built once, and a phase-0 GA set's parents kept for the next sets
 *     (build_genomes).
 * It lives in evo, beside the evolution that makes the generations: nn
 * knows nothing of genomes or noise tables.
 */
#include "seed/population.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/popnet.h"

struct seed_population {
	seed_popnet *net;
	seed_model *model; /* the net's layout: scratch for building members */
	size_t P;
	/* GA: the parents built by the last phase-0 set (their genomes, padded
	 * with -1 to cache_L, and weights), for the next rounds' parents and
	 * candidates; valid for the table, sigma and rank they were built with. */
	int ncache, cache_L;
	int64_t *cache_g; /* (ncache, cache_L) */
	int *cache_len;   /* (ncache) */
	float *cache_w;   /* (ncache, P) */
	uint64_t cache_seed;
	int64_t cache_size;
	double cache_sigma;
	int cache_rank;
};

int seed_population_new(seed_population **out, const char *model_json, seed_dtype obs_dtype, int obs_rank,
                        const int64_t *obs_shape, int num_actions, int max_rows, seed_err *err)
{
	seed_popnet *net = NULL;
	int rc =
	    seed_popnet_new(&net, model_json, obs_dtype, obs_rank, obs_shape, num_actions, max_rows, err);
	if (rc)
		return rc;
	seed_population *p = seed_xcalloc(1, sizeof *p);
	p->net = net;
	p->model = seed_popnet_model(net);
	p->P = seed_popnet_num_params(net);
	*out = p;
	return 0;
}

void seed_population_free(seed_population **pp)
{
	if (!pp || !*pp)
		return;
	seed_population *p = *pp;
	seed_popnet_free(&p->net);
	free(p->cache_g);
	free(p->cache_len);
	free(p->cache_w);
	free(p);
	*pp = NULL;
}

size_t seed_population_obs_bytes(const seed_population *p)
{
	return seed_popnet_obs_bytes(p->net);
}

size_t seed_population_num_params(const seed_population *p)
{
	return p->P;
}

int seed_population_num_actions(const seed_population *p)
{
	return seed_popnet_num_actions(p->net);
}

/* Full rank, the centred algorithms (ES, SNES, ARS): each member as
 * seed_evo_member_params builds it. */
static int build_centred(seed_population *p, const seed_noise *noise, const seed_evo_gen *g, float *members,
                         seed_err *err)
{
	for (int m = 0; m < g->members; m++) {
		int rc = seed_evo_member_params(noise, p->model, g, m, members + (size_t)m * p->P, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* A member's genome for sorting by parent: its keys but the last. */
typedef struct genome_ref {
	const int64_t *row;
	int len; /* keys before the first -1 */
	int m;
} genome_ref;

static int cmp_parent(const void *a, const void *b)
{
	const genome_ref *x = a, *y = b;
	int nx = x->len - 1, ny = y->len - 1;
	for (int k = 0; k < nx && k < ny; k++)
		if (x->row[k] != y->row[k])
			return x->row[k] < y->row[k] ? -1 : 1;
	if (nx != ny)
		return nx < ny ? -1 : 1;
	return x->m - y->m;
}

/* The most parents a GA set keeps for the next (a truncation is tens). */
#define POP_CACHE 64

/* The cached parent whose genome is row[0..n), or -1. */
static int cache_find(const seed_population *p, const int64_t *row, int n)
{
	for (int j = 0; j < p->ncache; j++) {
		if (p->cache_len[j] != n)
			continue;
		const int64_t *c = p->cache_g + (size_t)j * (size_t)p->cache_L;
		int k = 0;
		while (k < n && c[k] == row[k])
			k++;
		if (k == n)
			return j;
	}
	return -1;
}

/* init (P floats) = init(key). */
static void build_init(seed_population *p, int64_t key, float *init)
{
	seed_rng rng;
	seed_rng_init(&rng, (uint64_t)key, SEED_EVO_INIT_STREAM);
	seed_model_init(p->model, &rng);
	memcpy(init, seed_model_params(p->model), p->P * sizeof *init);
}

/* What build_genomes carries from member to member. */
typedef struct ga_build {
	seed_population *p;
	const seed_noise *noise;
	const seed_evo_gen *g;
	float sigma;
	float *init, *parent; /* (P) each: init(init_key), the current parent */
	bool have_init;
	int64_t init_key;
	/* The parents to keep (a phase-0 GA set): up to cap of them. */
	int cap, nnew;
	int64_t *new_g; /* (cap, L) */
	int *new_len;   /* (cap) */
	float *new_w;   /* (cap, P) */
} ga_build;

/* b->init = init(key), unless it is already. */
static void init_of(ga_build *b, int64_t key)
{
	if (!b->have_init || b->init_key != key) {
		build_init(b->p, key, b->init);
		b->have_init = true;
		b->init_key = key;
	}
}

/* b->parent = the parameters of r's genome without its last key: from a
 * kept parent, a kept parent plus one key, or the initialisation and the
 * mutations; recorded to be kept if there is room. */
static int build_parent(ga_build *b, const genome_ref *r, seed_err *err)
{
	seed_population *p = b->p;
	size_t P = p->P;
	int k = r->len - 1, rc = 0; /* the parent's keys: row[0..k) */
	int j = cache_find(p, r->row, k);
	if (j >= 0) {
		memcpy(b->parent, p->cache_w + (size_t)j * P, P * sizeof *b->parent);
	} else if (k >= 2 && (j = cache_find(p, r->row, k - 1)) >= 0) {
		memcpy(b->parent, p->cache_w + (size_t)j * P, P * sizeof *b->parent);
		rc = seed_evo_add_noise(b->noise, p->model, b->g->rank, (uint64_t)r->row[k - 1], b->sigma,
		                        b->parent, err);
	} else {
		init_of(b, r->row[0]);
		memcpy(b->parent, b->init, P * sizeof *b->parent);
		for (int q = 1; q < k && !rc; q++)
			rc = seed_evo_add_noise(b->noise, p->model, b->g->rank, (uint64_t)r->row[q], b->sigma,
			                        b->parent, err);
	}
	if (!rc && b->nnew < b->cap) {
		int L = b->g->genome_len;
		int64_t *cg = b->new_g + (size_t)b->nnew * (size_t)L;
		for (int q = 0; q < L; q++)
			cg[q] = q < k ? r->row[q] : -1;
		b->new_len[b->nnew] = k;
		memcpy(b->new_w + (size_t)b->nnew * P, b->parent, P * sizeof *b->new_w);
		b->nnew++;
	}
	return rc;
}

/* A phase-0 GA set that succeeded keeps the parents it built, in place of
 * the last ones; otherwise they go. */
static void keep_parents(ga_build *b, bool keep)
{
	seed_population *p = b->p;
	const seed_evo_gen *g = b->g;
	if (!keep || b->nnew == 0) {
		free(b->new_g);
		free(b->new_len);
		free(b->new_w);
		return;
	}
	free(p->cache_g);
	free(p->cache_len);
	free(p->cache_w);
	p->cache_g = b->new_g;
	p->cache_len = b->new_len;
	p->cache_w = b->new_w;
	p->ncache = b->nnew;
	p->cache_L = g->genome_len;
	p->cache_seed = g->noise_seed;
	p->cache_size = g->noise_size;
	p->cache_sigma = g->sigma;
	p->cache_rank = g->rank;
}

/* Full rank, GA and RS: the members' parameters exactly as
 * seed_evo_member_params builds them (init(genome[0]), then the mutations
 * in order), but each parent once: members are sorted by their genome
 * without its last key (a GA round's children share a handful of
 * parents, its first round and RS's members share nothing), the parent's
 * parameters are built once, then each member is its parent plus its last
 * mutation.  A parent comes, in order of preference, from the parents the
 * last phase-0 set built (a phase-1 round's candidates are their children),
 * from one of those plus one key (a phase-0 round's parents are the last
 * round's members), or from its initialisation (once per run of equal
 * first keys: an orthogonal initialisation is a QR per layer) and all its
 * mutations.  The float operations are those of seed_evo_member_params, in
 * the same order, so the parameters are the same to the bit. */
static int build_genomes(seed_population *p, const seed_noise *noise, const seed_evo_gen *g, float *members,
                         seed_err *err)
{
	int M = g->members, L = g->genome_len;
	size_t P = p->P;
	if (p->cache_seed != g->noise_seed || p->cache_size != g->noise_size || p->cache_sigma != g->sigma ||
	    p->cache_rank != g->rank || g->algo != SEED_EVO_GA)
		p->ncache = 0; /* built with another table, sigma or rank */
	/* A phase-0 GA set keeps its parents for the next sets. */
	bool keep = g->algo == SEED_EVO_GA && g->phase == 0;
	int cap = keep ? (M < POP_CACHE ? M : POP_CACHE) : 0;
	ga_build b = {.p = p, .noise = noise, .g = g, .sigma = (float)g->sigma, .cap = cap, .init_key = -1};
	b.init = seed_xmalloc(P * sizeof *b.init);
	b.parent = seed_xmalloc(P * sizeof *b.parent);
	b.new_g = cap ? seed_xmalloc((size_t)cap * (size_t)L * sizeof *b.new_g) : NULL;
	b.new_len = cap ? seed_xmalloc((size_t)cap * sizeof *b.new_len) : NULL;
	b.new_w = cap ? seed_xmalloc((size_t)cap * P * sizeof *b.new_w) : NULL;
	genome_ref *refs = seed_xmalloc((size_t)M * sizeof *refs);
	for (int m = 0; m < M; m++) {
		const int64_t *row = g->genome + (size_t)m * (size_t)L;
		int n = 0;
		while (n < L && row[n] >= 0)
			n++;
		refs[m] = (genome_ref){row, n, m};
	}
	qsort(refs, (size_t)M, sizeof *refs, cmp_parent);
	const genome_ref *last = NULL;
	int rc = 0;
	for (int i = 0; i < M && !rc; i++) {
		const genome_ref *r = &refs[i];
		float *out = members + (size_t)r->m * P;
		if (g->algo == SEED_EVO_RS || r->len == 1) {
			/* The initialisation itself (RS ignores further keys). */
			init_of(&b, r->row[0]);
			memcpy(out, b.init, P * sizeof *out);
			continue;
		}
		if (!last || cmp_parent(&(genome_ref){last->row, last->len, 0},
		                        &(genome_ref){r->row, r->len, 0}) != 0) {
			rc = build_parent(&b, r, err);
			last = r;
		}
		memcpy(out, b.parent, P * sizeof *out);
		if (!rc)
			rc = seed_evo_add_noise(noise, p->model, g->rank, (uint64_t)r->row[r->len - 1],
			                        b.sigma, out, err);
	}
	keep_parents(&b, !rc && keep);
	free(refs);
	free(b.init);
	free(b.parent);
	return rc;
}

/* Low rank: the centre into the net, each member's noise slice and its
 * scale sign sigma. */
static int build_lowrank(seed_population *p, const seed_noise *noise, const seed_evo_gen *g, seed_err *err)
{
	int r = g->rank;
	int64_t Q = seed_evo_noise_len(p->model, r);
	if (Q > seed_noise_size(noise))
		return seed_err_set(
		    err, -EINVAL, "population: a noise slice of %lld floats is longer than the table (%lld)",
		    (long long)Q, (long long)seed_noise_size(noise));
	seed_popnet_lowrank(p->net, g->members, r, g->centre);
	for (int m = 0; m < g->members; m++) {
		int64_t at = seed_noise_index(noise, (uint64_t)g->genome[m], Q);
		seed_popnet_lowrank_member(p->net, m, seed_noise_data(noise) + at,
		                           g->sign[m] * (float)g->sigma);
	}
	return 0;
}

int seed_population_set(seed_population *p, const seed_noise *noise, const seed_evo_gen *g, seed_err *err)
{
	seed_popnet_drop(p->net);
	int rc = seed_evo_gen_check(g, err);
	if (rc)
		return rc;
	if (g->num_params != p->P)
		return seed_err_set(err, -EINVAL,
		                    "population: the generation has %zu parameters, the model %zu",
		                    g->num_params, p->P);
	if (seed_noise_seed(noise) != g->noise_seed || seed_noise_size(noise) != g->noise_size)
		return seed_err_set(
		    err, -EINVAL,
		    "population: the noise table is (seed %llu, size %lld), the generation wants (seed "
		    "%llu, size %lld)",
		    (unsigned long long)seed_noise_seed(noise), (long long)seed_noise_size(noise),
		    (unsigned long long)g->noise_seed, (long long)g->noise_size);
	/* The learner's observation statistics, for every member (mean 0,
	 * var 1 when the generation gives none); the obs_norm.* tensors the
	 * members are built with are not read. */
	int D = seed_model_obs_norm_dim(p->model);
	if (g->obs_dim > 0 && g->obs_dim != D)
		return seed_err_set(err, -EINVAL,
		                    "population: the generation's observation statistics have obs_dim "
		                    "%lld, the model's \"obs_norm\" D = %d%s",
		                    (long long)g->obs_dim, D, D ? "" : " (the model has no \"obs_norm\")");
	if ((rc = seed_popnet_obs_norm(p->net, g->obs_dim, g->obs_mean, g->obs_var, err)))
		return rc;
	bool centred = seed_evo_algo_centred(g->algo);
	if (centred && g->rank > 0) { /* ES or ARS: SNES is full rank (seed_evo_gen_check) */
		rc = build_lowrank(p, noise, g, err);
	} else {
		float *members = seed_popnet_full(p->net, g->members);
		rc = centred ? build_centred(p, noise, g, members, err)
		             : build_genomes(p, noise, g, members, err);
	}
	if (rc) {
		seed_popnet_drop(p->net);
		return rc;
	}
	seed_popnet_ready(p->net);
	return 0;
}

int seed_population_forward(seed_population *p, int rows, const void *obs, const int32_t *member,
                            float *logits, seed_err *err)
{
	return seed_popnet_forward(p->net, rows, obs, member, logits, err);
}

int seed_population_act(seed_population *p, int rows, const void *obs, const int32_t *member, bool greedy,
                        seed_rng *rng, int32_t *actions, seed_err *err)
{
	return seed_popnet_act(p->net, rows, obs, member, greedy, rng, actions, err);
}
