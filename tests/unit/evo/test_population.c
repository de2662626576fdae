/* test_population.c: the population's forward pass (seed/population.h)
 * against its definition: for every row, seed_model_forward (cpu.c, an
 * independent forward) of a model loaded with seed_evo_member_params'
 * parameters of the row's member.  Over several shapes (the CartPole MLP,
 * the MinAtar network on u8 observations, a strided "same" convolution, a
 * dueling head on wide layers that take the kernels' path), ES in full and
 * low rank, GA and RS, SNES (full rank, per-parameter sigmas), ARS in full
 * and low rank (and the same logits as ES's), members with no rows, one member, and every row one
 * member; models with "obs_norm" (the generation's statistics against the
 * same statistics written into each member's slab) and a Gaussian policy
 * (its means); then acting, and the errors. */
#include "seed/population.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/evo.h"
#include "seed/policy.h"
#include "member_ref.h"
#include "tap.h"

typedef struct shape_case {
	const char *name, *json;
	seed_dtype dtype;
	int rank;
	int64_t shape[3];
	int A;
} shape_case;

static const shape_case cases[] = {
    {"cartpole-mlp",
     "{\"torso\": [{\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"}, {\"type\": \"linear\", "
     "\"out\": 64},"
     " {\"type\": \"tanh\"}]}",
     SEED_DTYPE_F32,
     1,
     {4},
     2},
    {"minatar",
     "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 16, \"kernel\": 3}, {\"type\": \"relu\"}, {\"type\": "
     "\"flatten\"}, {\"type\": \"linear\", \"out\": 128}, {\"type\": \"relu\"}]}",
     SEED_DTYPE_U8,
     3,
     {10, 10, 4},
     6},
    {"conv-stride-same",
     "{\"torso\": [{\"type\": \"scale\", \"by\": 0.5}, {\"type\": \"conv2d\", \"filters\": 5, \"kernel\": 3, "
     "\"stride\": 2, \"padding\": \"same\"}, {\"type\": \"tanh\"}, {\"type\": \"flatten\"}]}",
     SEED_DTYPE_F32,
     3,
     {7, 6, 3},
     3},
    {"dueling-wide",
     "{\"torso\": [{\"type\": \"linear\", \"out\": 300}, {\"type\": \"relu\"}, {\"type\": \"linear\", "
     "\"out\": 260},"
     " {\"type\": \"relu\"}], \"head\": \"dueling\", \"init\": \"pytorch\"}",
     SEED_DTYPE_F32,
     1,
     {9},
     4},
};

#define NCASES ((int)(sizeof cases / sizeof cases[0]))
#define ROWS 61
#define M 7

/* A generation of algo (rank r; GA with r = -1: a family of shared
 * parents, rank 0) over M members for model mo. */
typedef struct gen_store {
	int64_t genome[16 * 3]; /* up to 16 members */
	float sign[16];
	int32_t episodes[16];
	float *centre;
	float *sigmas; /* SNES */
	seed_evo_gen g;
} gen_store;

static void make_gen(gen_store *s, seed_evo_algo algo, int r, const seed_noise *n, seed_model *mo,
                     int members)
{
	seed_rng rng;
	seed_rng_init(&rng, 77 + (uint64_t)algo * 10 + (uint64_t)r, 0);
	size_t P = seed_model_num_params(mo);
	int L = algo == SEED_EVO_GA ? 3 : 1;
	for (int m = 0; m < members; m++) {
		for (int k = 0; k < L; k++)
			s->genome[m * L + k] = (int64_t)(seed_rng_u64(&rng) >> 1);
		if (algo == SEED_EVO_GA && m % 2)
			s->genome[m * L + 2] = -1; /* shorter genomes padded */
		s->sign[m] = m % 2 ? -1.0f : 1.0f;
		s->episodes[m] = 1;
	}
	if (algo == SEED_EVO_GA && r < 0) {
		/* A GA round's family (M = 7): the elite {a, b} as member 0,
		 * children of {a, b} and of {c}, a cousin {a, d, e} sharing
		 * only the root, a fresh {f}: members share parents and roots. */
		static const int64_t fam[M][3] = {{11, 12, -1}, {11, 12, 31}, {13, 32, -1}, {11, 12, 33},
		                                  {11, 14, 15}, {13, 34, -1}, {16, -1, -1}};
		memcpy(s->genome, fam, sizeof fam);
		r = 0;
	}
	bool centred = seed_evo_algo_centred(algo);
	if (centred) {
		/* An initialised centre, as a learner's. */
		seed_model_init(mo, &rng);
		s->centre = malloc(P * sizeof *s->centre);
		memcpy(s->centre, seed_model_params(mo), P * sizeof *s->centre);
	} else {
		s->centre = NULL;
	}
	s->sigmas = NULL;
	double mean = 0;
	if (algo == SEED_EVO_SNES) {
		/* Each parameter's own std, some 0 (those stay the centre's). */
		s->sigmas = malloc(P * sizeof *s->sigmas);
		for (size_t i = 0; i < P; i++) {
			s->sigmas[i] = i % 5 == 0 ? 0.0f : (float)seed_rng_uniform(&rng, 0.01, 0.09);
			mean += s->sigmas[i] / (double)P;
		}
	}
	s->g = (seed_evo_gen){.algo = algo,
	                      .generation = 3,
	                      .noise_seed = seed_noise_seed(n),
	                      .noise_size = seed_noise_size(n),
	                      .sigma = algo == SEED_EVO_SNES ? mean
	                               : centred             ? 0.05
	                                                     : 0.02,
	                      .rank = r,
	                      .members = members,
	                      .genome_len = L,
	                      .genome = s->genome,
	                      .sign = centred ? s->sign : NULL,
	                      .episodes = s->episodes,
	                      .centre = s->centre,
	                      .num_params = P,
	                      .sigmas = s->sigmas};
}

static void random_obs(const shape_case *c, int rows, void *obs, seed_rng *rng)
{
	size_t numel = 1;
	for (int i = 0; i < c->rank; i++)
		numel *= (size_t)c->shape[i];
	for (size_t i = 0; i < (size_t)rows * numel; i++) {
		if (c->dtype == SEED_DTYPE_U8)
			((uint8_t *)obs)[i] =
			    (uint8_t)(seed_rng_u64(rng) % 3 == 0 ? 1 : 0); /* MinAtar's 0/1 */
		else
			((float *)obs)[i] = (float)seed_rng_uniform(rng, -2.0, 2.0);
	}
}

/* The population's logits against the model's, row by row.  Returns the
 * largest error relative to the logits' scale. */
static double compare(const shape_case *c, seed_population *pop, seed_model *ref, seed_model *scratch,
                      const seed_noise *n, const seed_evo_gen *g, int rows, const void *obs,
                      const int32_t *member)
{
	float *got = malloc((size_t)rows * c->A * sizeof *got);
	size_t P = seed_model_num_params(ref);
	/* Each member's parameters, built once (an initialisation is slow). */
	float *params = malloc((size_t)g->members * P * sizeof *params);
	seed_err err = {{0}};
	for (int m = 0; m < g->members; m++)
		CHECK(seed_evo_member_params(n, scratch, g, m, params + (size_t)m * P, &err) == 0);
	int rc = seed_population_forward(pop, rows, obs, member, got, &err);
	CHECK_MSG(rc == 0, "%s: %s", c->name, err.msg);
	double worst = rc == 0 ? member_ref_error(ref, params, rows, obs, member, got) : 0;
	free(got);
	free(params);
	return worst;
}

/* An ARS generation plays as the ES generation of the same centre, keys,
 * signs and sigma (full or low rank): the same logits, to the bit. */
static void same_as_es(const shape_case *c, seed_population *pop, const seed_noise *n, const seed_evo_gen *g,
                       const void *obs, const int32_t *member)
{
	float *ars = malloc((size_t)ROWS * c->A * sizeof *ars),
	      *es = malloc((size_t)ROWS * c->A * sizeof *es);
	seed_err err = {{0}};
	seed_evo_gen e = *g;
	e.algo = SEED_EVO_ES;
	CHECK(seed_population_set(pop, n, g, &err) == 0);
	CHECK(seed_population_forward(pop, ROWS, obs, member, ars, &err) == 0);
	CHECK(seed_population_set(pop, n, &e, &err) == 0);
	CHECK(seed_population_forward(pop, ROWS, obs, member, es, &err) == 0);
	CHECK_MSG(memcmp(ars, es, (size_t)ROWS * c->A * sizeof *es) == 0, "%s ars rank %d: not es's logits",
	          c->name, g->rank);
	free(ars);
	free(es);
}

static void t_shapes(void)
{
	seed_noise *n = NULL;
	CHECK(seed_noise_new(&n, 11, 1 << 20, NULL) == 0);
	if (!n)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 5, 0);
	for (int ci = 0; ci < NCASES; ci++) {
		const shape_case *c = &cases[ci];
		seed_population *pop = NULL;
		seed_model *ref = NULL, *scratch = NULL;
		seed_err err = {{0}};
		CHECK_MSG(seed_population_new(&pop, c->json, c->dtype, c->rank, c->shape, c->A, ROWS, &err) ==
		              0,
		          "%s: %s", c->name, err.msg);
		CHECK(seed_model_new(&ref, c->json, c->dtype, c->rank, c->shape, c->A, 1, &err) == 0);
		CHECK(seed_model_new(&scratch, c->json, c->dtype, c->rank, c->shape, c->A, 1, &err) == 0);
		if (!pop || !ref || !scratch)
			goto next;
		CHECK(seed_population_obs_bytes(pop) == seed_model_obs_bytes(ref));
		CHECK(seed_population_num_params(pop) == seed_model_num_params(ref));
		CHECK(seed_population_num_actions(pop) == c->A);
		void *obs = malloc((size_t)ROWS * seed_model_obs_bytes(ref));
		int32_t member[ROWS];
		struct {
			seed_evo_algo algo;
			int rank;
		} kinds[] = {{SEED_EVO_ES, 0},   {SEED_EVO_ES, 1},  {SEED_EVO_ES, 3},
		             {SEED_EVO_GA, 0},   {SEED_EVO_GA, 2},  {SEED_EVO_RS, 0},
		             {SEED_EVO_SNES, 0}, {SEED_EVO_ARS, 0}, {SEED_EVO_ARS, 2}};
		for (int k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++) {
			gen_store s;
			make_gen(&s, kinds[k].algo, kinds[k].rank, n, scratch, M); /* rank -1: a GA family */
			CHECK_MSG(seed_population_set(pop, n, &s.g, &err) == 0, "%s: %s", c->name, err.msg);
			/* Members 2 and 5 get no rows; the others in random order. */
			for (int r = 0; r < ROWS; r++) {
				int m;
				do
					m = (int)seed_rng_below(&rng, M);
				while (m == 2 || m == 5);
				member[r] = m;
			}
			random_obs(c, ROWS, obs, &rng);
			double e = compare(c, pop, ref, scratch, n, &s.g, ROWS, obs, member);
			CHECK_MSG(e < 2e-5, "%s %s rank %d: relative error %g", c->name,
			          seed_evo_algo_name(kinds[k].algo), kinds[k].rank, e);
			/* Every row one member, and a single row. */
			for (int r = 0; r < ROWS; r++)
				member[r] = 6;
			e = compare(c, pop, ref, scratch, n, &s.g, ROWS, obs, member);
			CHECK_MSG(e < 2e-5, "%s one member: %g", c->name, e);
			member[0] = 3;
			e = compare(c, pop, ref, scratch, n, &s.g, 1, obs, member);
			CHECK_MSG(e < 2e-5, "%s one row: %g", c->name, e);
			if (kinds[k].algo == SEED_EVO_ARS)
				same_as_es(c, pop, n, &s.g, obs, member);
			free(s.centre);
			free(s.sigmas);
		}
		free(obs);
	next:
		seed_population_free(&pop);
		CHECK(pop == NULL);
		seed_model_free(&ref);
		seed_model_free(&scratch);
	}
	seed_noise_free(&n);
}

/* act: greedy is the argmax of forward's logits, sampled is
 * seed_policy_sample's draw from them with the same generator. */
static void t_act(void)
{
	const shape_case *c = &cases[1];
	seed_noise *n = NULL;
	seed_population *pop = NULL;
	seed_model *scratch = NULL;
	CHECK(seed_noise_new(&n, 2, 1 << 19, NULL) == 0);
	CHECK(seed_population_new(&pop, c->json, c->dtype, c->rank, c->shape, c->A, ROWS, NULL) == 0);
	CHECK(seed_model_new(&scratch, c->json, c->dtype, c->rank, c->shape, c->A, 1, NULL) == 0);
	if (!n || !pop || !scratch)
		goto out;
	gen_store s;
	make_gen(&s, SEED_EVO_ES, 2, n, scratch, M);
	CHECK(seed_population_set(pop, n, &s.g, NULL) == 0);
	seed_rng rng, r1, r2;
	seed_rng_init(&rng, 9, 0);
	uint8_t obs[ROWS * 400];
	int32_t member[ROWS], act[ROWS], want[ROWS];
	random_obs(c, ROWS, obs, &rng);
	for (int r = 0; r < ROWS; r++)
		member[r] = (int32_t)seed_rng_below(&rng, M);
	float logits[ROWS * 6];
	CHECK(seed_population_forward(pop, ROWS, obs, member, logits, NULL) == 0);
	CHECK(seed_population_act(pop, ROWS, obs, member, true, NULL, act, NULL) == 0);
	seed_policy_argmax(ROWS, c->A, logits, want);
	CHECK(memcmp(act, want, sizeof act) == 0);
	seed_rng_init(&r1, 4, 4);
	r2 = r1;
	CHECK(seed_population_act(pop, ROWS, obs, member, false, &r1, act, NULL) == 0);
	seed_policy_sample(ROWS, c->A, logits, &r2, want);
	CHECK(memcmp(act, want, sizeof act) == 0);
	CHECK(memcmp(&r1, &r2, sizeof r1) == 0);
	free(s.centre);
out:
	seed_population_free(&pop);
	seed_model_free(&scratch);
	seed_noise_free(&n);
}

static void t_errors(void)
{
	const shape_case *c = &cases[0];
	seed_noise *n = NULL, *other = NULL;
	seed_population *pop = NULL;
	seed_model *scratch = NULL;
	seed_err err = {{0}};
	CHECK(seed_noise_new(&n, 2, 1 << 16, NULL) == 0);
	CHECK(seed_noise_new(&other, 3, 1 << 16, NULL) == 0);
	CHECK(seed_population_new(&pop, c->json, c->dtype, c->rank, c->shape, c->A, 8, &err) == 0);
	CHECK(seed_model_new(&scratch, c->json, c->dtype, c->rank, c->shape, c->A, 1, NULL) == 0);
	if (!n || !other || !pop || !scratch)
		goto out;
	float obs[8 * 4] = {0}, logits[8 * 2];
	int32_t member[8] = {0, 1, 2, 0, 1, 2, 0, 1};
	CHECK(seed_population_forward(pop, 8, obs, member, logits, &err) == -EINVAL &&
	      strstr(err.msg, "no generation"));
	gen_store s;
	make_gen(&s, SEED_EVO_ES, 0, n, scratch, 3);
	CHECK(seed_population_set(pop, other, &s.g, &err) == -EINVAL && strstr(err.msg, "noise table"));
	s.g.num_params++;
	CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL && strstr(err.msg, "parameters"));
	s.g.num_params--;
	s.sign[1] = 0.5f;
	CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL && strstr(err.msg, "sign"));
	s.sign[1] = -1.0f;
	CHECK(seed_population_set(pop, n, &s.g, &err) == 0);
	CHECK(seed_population_forward(pop, 8, obs, member, logits, &err) == 0);
	CHECK(seed_population_forward(pop, 9, obs, member, logits, &err) == -EINVAL &&
	      strstr(err.msg, "9 rows"));
	CHECK(seed_population_forward(pop, 0, obs, member, logits, &err) == -EINVAL);
	member[4] = 3;
	CHECK(seed_population_forward(pop, 8, obs, member, logits, &err) == -EINVAL &&
	      strstr(err.msg, "row 4"));
	member[4] = -1;
	CHECK(seed_population_forward(pop, 8, obs, member, logits, &err) == -EINVAL &&
	      strstr(err.msg, "row 4"));
	/* A failed set leaves no generation. */
	s.g.noise_seed = 3;
	CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL);
	member[4] = 0;
	CHECK(seed_population_forward(pop, 8, obs, member, logits, &err) == -EINVAL &&
	      strstr(err.msg, "no generation"));
	free(s.centre);
	/* Observation statistics for a model without "obs_norm". */
	float mean[4] = {0}, var[4] = {1, 1, 1, 1};
	make_gen(&s, SEED_EVO_ES, 0, n, scratch, 3);
	s.g.obs_dim = 4;
	s.g.obs_mean = mean;
	s.g.obs_var = var;
	CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL && strstr(err.msg, "obs_dim 4") &&
	      strstr(err.msg, "D = 0") && strstr(err.msg, "no \"obs_norm\""));
	free(s.centre);
	/* SNES: full rank only, with sigmas, every one finite and >= 0; none
	 * for ARS. */
	make_gen(&s, SEED_EVO_SNES, 0, n, scratch, 3);
	s.g.rank = 1;
	CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL && strstr(err.msg, "snes needs rank 0"));
	s.g.rank = 0;
	s.sigmas[2] = NAN;
	CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL && strstr(err.msg, "sigmas[2] is nan"));
	s.sigmas[2] = 0.5f;
	CHECK(seed_population_set(pop, n, &s.g, &err) == 0);
	CHECK(seed_population_forward(pop, 8, obs, member, logits, &err) == 0);
	s.g.algo = SEED_EVO_ARS;
	CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL &&
	      strstr(err.msg, "sigmas only go with snes, not ars"));
	free(s.centre);
	free(s.sigmas);
	/* No recurrent core; no zero rows. */
	seed_population *bad = NULL;
	const char *lstm = "{\"torso\": [], \"core\": {\"type\": \"lstm\", \"units\": 3}}";
	CHECK(seed_population_new(&bad, lstm, SEED_DTYPE_F32, 1, c->shape, 2, 8, &err) == -EINVAL &&
	      strstr(err.msg, "recurrent"));
	CHECK(seed_population_new(&bad, c->json, c->dtype, c->rank, c->shape, c->A, 0, &err) == -EINVAL);
	CHECK(seed_population_new(&bad, "{\"torso\": [{\"type\": \"nope\"}]}", c->dtype, c->rank, c->shape,
	                          c->A, 8, &err) == -SEED_EOPTION);
	CHECK(bad == NULL);
out:
	seed_population_free(&pop);
	seed_population_free(&pop);
	seed_model_free(&scratch);
	seed_noise_free(&n);
	seed_noise_free(&other);
}

/* One population through generations of other sizes and kinds: the
 * buffers follow (more members, fewer, full rank after low rank). */
static void t_regenerate(void)
{
	const shape_case *c = &cases[1];
	seed_noise *n = NULL;
	seed_population *pop = NULL;
	seed_model *ref = NULL, *scratch = NULL;
	CHECK(seed_noise_new(&n, 8, 1 << 19, NULL) == 0);
	CHECK(seed_population_new(&pop, c->json, c->dtype, c->rank, c->shape, c->A, ROWS, NULL) == 0);
	CHECK(seed_model_new(&ref, c->json, c->dtype, c->rank, c->shape, c->A, 1, NULL) == 0);
	CHECK(seed_model_new(&scratch, c->json, c->dtype, c->rank, c->shape, c->A, 1, NULL) == 0);
	if (!n || !pop || !ref || !scratch)
		goto out;
	static const struct {
		seed_evo_algo algo;
		int rank, members;
	} steps[] = {{SEED_EVO_ES, 0, 4},
	             {SEED_EVO_GA, 0, 16},
	             {SEED_EVO_ES, 2, 2},
	             {SEED_EVO_ES, 0, 12},
	             {SEED_EVO_RS, 0, 3}};
	seed_rng rng;
	seed_rng_init(&rng, 3, 3);
	uint8_t obs[ROWS * 400];
	int32_t member[ROWS];
	for (int k = 0; k < (int)(sizeof steps / sizeof steps[0]); k++) {
		gen_store s;
		make_gen(&s, steps[k].algo, steps[k].rank, n, scratch, steps[k].members);
		seed_err err = {{0}};
		CHECK_MSG(seed_population_set(pop, n, &s.g, &err) == 0, "step %d: %s", k, err.msg);
		random_obs(c, ROWS, obs, &rng);
		for (int r = 0; r < ROWS; r++)
			member[r] = (int32_t)seed_rng_below(&rng, (uint32_t)steps[k].members);
		double e = compare(c, pop, ref, scratch, n, &s.g, ROWS, obs, member);
		CHECK_MSG(e < 2e-5, "step %d: relative error %g", k, e);
		free(s.centre);
	}
out:
	seed_population_free(&pop);
	seed_model_free(&ref);
	seed_model_free(&scratch);
	seed_noise_free(&n);
}

/* GA rounds from seed_evo itself, played through one population (which
 * builds parents from the ones it kept from the last phase-0 round): every
 * round's forward against the members' own parameters. */
static void t_ga_generations(void)
{
	const shape_case *c = &cases[0];
	seed_noise *n = NULL;
	seed_population *pop = NULL;
	seed_model *ref = NULL, *scratch = NULL, *layout = NULL;
	seed_evo *e = NULL;
	CHECK(seed_noise_new(&n, 6, 1 << 16, NULL) == 0);
	CHECK(seed_population_new(&pop, c->json, c->dtype, c->rank, c->shape, c->A, ROWS, NULL) == 0);
	CHECK(seed_model_new(&ref, c->json, c->dtype, c->rank, c->shape, c->A, 1, NULL) == 0);
	CHECK(seed_model_new(&scratch, c->json, c->dtype, c->rank, c->shape, c->A, 1, NULL) == 0);
	CHECK(seed_model_new(&layout, c->json, c->dtype, c->rank, c->shape, c->A, 1, NULL) == 0);
	if (!n || !pop || !ref || !scratch || !layout)
		goto out;
	for (int rank = 0; rank <= 1; rank++) {
		seed_evo_config cfg;
		seed_evo_config_default(&cfg, SEED_EVO_GA);
		cfg.population = 9;
		cfg.truncation = 3;
		cfg.elite_candidates = 2;
		cfg.elite_episodes = 1;
		cfg.sigma = 0.05;
		cfg.rank = rank;
		cfg.noise_seed = 6;
		cfg.noise_size = 1 << 16;
		seed_err err = {{0}};
		CHECK_MSG(seed_evo_new(&e, &cfg, n, layout, &err) == 0, "%s", err.msg);
		if (!e)
			break;
		seed_rng rng;
		seed_rng_init(&rng, 12, (uint64_t)rank);
		float obs[ROWS * 4];
		int32_t member[ROWS];
		for (int round = 0; round < 12; round++) {
			const seed_evo_gen *g = seed_evo_current(e);
			CHECK_MSG(seed_population_set(pop, n, g, &err) == 0, "round %d: %s", round, err.msg);
			random_obs(c, ROWS, obs, &rng);
			for (int r = 0; r < ROWS; r++)
				member[r] = (int32_t)seed_rng_below(&rng, (uint32_t)g->members);
			double worst = compare(c, pop, ref, scratch, n, g, ROWS, obs, member);
			CHECK_MSG(worst < 2e-5, "rank %d round %d (phase %d, L %d): relative error %g", rank,
			          round, g->phase, g->genome_len, worst);
			for (int m = 0; m < g->members; m++)
				seed_evo_report(e, g->generation, m, (double)seed_rng_below(&rng, 100), 1);
			CHECK(seed_evo_advance(e, &err) == 0);
		}
		seed_evo_free(&e);
	}
out:
	seed_evo_free(&e);
	seed_population_free(&pop);
	seed_model_free(&ref);
	seed_model_free(&scratch);
	seed_model_free(&layout);
	seed_noise_free(&n);
}

/* Models with "obs_norm" (D = 5, a clip of 2 that the statistics below make
 * bite, a large epsilon so that it matters), a Gaussian policy among them. */
static const shape_case norm_cases[] = {
    {"obs-norm-mlp",
     "{\"torso\": [{\"type\": \"linear\", \"out\": 16}, {\"type\": \"tanh\"}], \"obs_norm\": {\"clip\": 2, "
     "\"epsilon\": 0.01}}",
     SEED_DTYPE_F32,
     1,
     {5},
     3},
    {"obs-norm-gaussian-critic",
     "{\"torso\": [{\"type\": \"linear\", \"out\": 12}, {\"type\": \"tanh\"}], \"critic_torso\": "
     "[{\"type\": \"linear\", \"out\": 7}, {\"type\": \"tanh\"}], \"policy\": {\"type\": \"gaussian\"}, "
     "\"obs_norm\": {\"clip\": 2, \"epsilon\": 0.01}}",
     SEED_DTYPE_F32,
     1,
     {5},
     2},
    {"obs-norm-gaussian-state",
     "{\"torso\": [{\"type\": \"linear\", \"out\": 9}, {\"type\": \"relu\"}], \"policy\": {\"type\": "
     "\"gaussian\", \"log_std\": \"state\", \"log_std_init\": -1}, \"obs_norm\": {\"clip\": 2, "
     "\"epsilon\": 0.01}}",
     SEED_DTYPE_F32,
     1,
     {5},
     4},
};

/* The population's outputs against seed_model_forward of each member's
 * parameters with mean and var (NULL: 0 and 1) written over the slab's
 * obs_norm.mean and obs_norm.var: what the population must normalise
 * with, whatever its members' slabs hold there. */
static double compare_norm(const shape_case *c, seed_population *pop, seed_model *ref, seed_model *scratch,
                           const seed_noise *n, const seed_evo_gen *g, const float *mean, const float *var,
                           int rows, const void *obs, const int32_t *member)
{
	float *got = malloc((size_t)rows * c->A * sizeof *got);
	size_t P = seed_model_num_params(ref);
	float *params = malloc((size_t)g->members * P * sizeof *params);
	size_t om = seed_model_param_find(ref, "obs_norm.mean")->offset;
	size_t ov = seed_model_param_find(ref, "obs_norm.var")->offset;
	int D = seed_model_obs_norm_dim(ref);
	seed_err err = {{0}};
	for (int m = 0; m < g->members; m++) {
		float *pm = params + (size_t)m * P;
		CHECK(seed_evo_member_params(n, scratch, g, m, pm, &err) == 0);
		for (int j = 0; j < D; j++) {
			pm[om + (size_t)j] = mean ? mean[j] : 0.0f;
			pm[ov + (size_t)j] = var ? var[j] : 1.0f;
		}
	}
	int rc = seed_population_forward(pop, rows, obs, member, got, &err);
	CHECK_MSG(rc == 0, "%s: %s", c->name, err.msg);
	double worst = rc == 0 ? member_ref_error(ref, params, rows, obs, member, got) : 0;
	free(got);
	free(params);
	return worst;
}

/* "obs_norm": every member normalises with the generation's statistics, in
 * full and low rank, GA and RS; mean 0, var 1 without them; the obs_norm.*
 * entries of the members' slabs (the centre's, here moved far away) change
 * nothing; and a Gaussian policy's rows are its means. */
static void t_obs_norm(void)
{
	seed_noise *n = NULL;
	CHECK(seed_noise_new(&n, 21, 1 << 18, NULL) == 0);
	if (!n)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 15, 0);
	/* Statistics far from 0 and 1, one var 0 (then epsilon alone), so
	 * that rows are shifted, scaled and some clipped. */
	const float mean[5] = {0.5f, -1.25f, 0.0f, 2.0f, -0.125f}, var[5] = {0.25f, 4.0f, 0.0f, 1.5f, 0.01f};
	for (int ci = 0; ci < (int)(sizeof norm_cases / sizeof norm_cases[0]); ci++) {
		const shape_case *c = &norm_cases[ci];
		seed_population *pop = NULL;
		seed_model *ref = NULL, *scratch = NULL;
		seed_err err = {{0}};
		CHECK_MSG(seed_population_new(&pop, c->json, c->dtype, c->rank, c->shape, c->A, ROWS, &err) ==
		              0,
		          "%s: %s", c->name, err.msg);
		CHECK(seed_model_new(&ref, c->json, c->dtype, c->rank, c->shape, c->A, 1, &err) == 0);
		CHECK(seed_model_new(&scratch, c->json, c->dtype, c->rank, c->shape, c->A, 1, &err) == 0);
		if (!pop || !ref || !scratch)
			goto next;
		CHECK(seed_model_obs_norm_dim(ref) == 5);
		float obs[ROWS * 5], got[ROWS * 4], again[ROWS * 4];
		int32_t member[ROWS];
		struct {
			seed_evo_algo algo;
			int rank;
		} kinds[] = {{SEED_EVO_ES, 0}, {SEED_EVO_ES, 2}, {SEED_EVO_GA, 0}, {SEED_EVO_RS, 0}};
		for (int k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++) {
			gen_store s;
			make_gen(&s, kinds[k].algo, kinds[k].rank, n, scratch, M);
			for (int r = 0; r < ROWS; r++)
				member[r] = (int32_t)seed_rng_below(&rng, M);
			random_obs(c, ROWS, obs, &rng);
			/* Without statistics: mean 0, var 1. */
			CHECK_MSG(seed_population_set(pop, n, &s.g, &err) == 0, "%s: %s", c->name, err.msg);
			double e = compare_norm(c, pop, ref, scratch, n, &s.g, NULL, NULL, ROWS, obs, member);
			CHECK_MSG(e < 2e-5, "%s %s rank %d, no statistics: relative error %g", c->name,
			          seed_evo_algo_name(kinds[k].algo), kinds[k].rank, e);
			/* With them. */
			s.g.obs_dim = 5;
			s.g.obs_mean = mean;
			s.g.obs_var = var;
			CHECK_MSG(seed_population_set(pop, n, &s.g, &err) == 0, "%s: %s", c->name, err.msg);
			e = compare_norm(c, pop, ref, scratch, n, &s.g, mean, var, ROWS, obs, member);
			CHECK_MSG(e < 2e-5, "%s %s rank %d: relative error %g", c->name,
			          seed_evo_algo_name(kinds[k].algo), kinds[k].rank, e);
			if (kinds[k].algo == SEED_EVO_ES) {
				/* The centre's statistics (every member's, in full
				 * rank; the centre's and the slices', in low rank)
				 * moved: the same outputs to the bit. */
				CHECK(seed_population_forward(pop, ROWS, obs, member, got, &err) == 0);
				size_t om = seed_model_param_find(ref, "obs_norm.mean")->offset;
				size_t ov = seed_model_param_find(ref, "obs_norm.var")->offset;
				for (int j = 0; j < 5; j++) {
					s.centre[om + (size_t)j] += 7.0f;
					s.centre[ov + (size_t)j] = 100.0f;
				}
				CHECK(seed_population_set(pop, n, &s.g, &err) == 0);
				CHECK(seed_population_forward(pop, ROWS, obs, member, again, &err) == 0);
				CHECK_MSG(memcmp(got, again, (size_t)ROWS * c->A * sizeof *got) == 0,
				          "%s rank %d: the slab's statistics changed the outputs", c->name,
				          kinds[k].rank);
			}
			free(s.centre);
		}
		/* A Gaussian policy's actions are real numbers: act refuses. */
		if (seed_model_policy_kind(ref) == SEED_POLICY_GAUSSIAN) {
			int32_t act[ROWS];
			CHECK(seed_population_act(pop, ROWS, obs, member, true, NULL, act, &err) == -EINVAL &&
			      strstr(err.msg, "gaussian") && strstr(err.msg, "means"));
		}
		/* Refusals: statistics of another D, a negative or NaN var, a
		 * non-finite mean; a failed set leaves no generation. */
		gen_store s;
		make_gen(&s, SEED_EVO_ES, 0, n, scratch, 3);
		s.g.obs_dim = 4;
		s.g.obs_mean = mean;
		s.g.obs_var = var;
		CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL && strstr(err.msg, "obs_dim 4") &&
		      strstr(err.msg, "D = 5"));
		member[0] = 0;
		CHECK(seed_population_forward(pop, 1, obs, member, got, &err) == -EINVAL &&
		      strstr(err.msg, "no generation"));
		float bad[5];
		memcpy(bad, var, sizeof bad);
		bad[3] = -0.5f;
		s.g.obs_dim = 5;
		s.g.obs_var = bad;
		CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL && strstr(err.msg, "obs_var[3]"));
		bad[3] = NAN;
		CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL && strstr(err.msg, "obs_var[3]"));
		s.g.obs_var = var;
		s.g.obs_mean = bad;
		CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL && strstr(err.msg, "obs_mean[3]"));
		s.g.obs_mean = NULL;
		CHECK(seed_population_set(pop, n, &s.g, &err) == -EINVAL && strstr(err.msg, "obs_mean NULL"));
		free(s.centre);
	next:
		seed_population_free(&pop);
		seed_model_free(&ref);
		seed_model_free(&scratch);
	}
	seed_noise_free(&n);
}

int main(void)
{
	TAP_RUN(t_shapes);
	TAP_RUN(t_act);
	TAP_RUN(t_regenerate);
	TAP_RUN(t_ga_generations);
	TAP_RUN(t_obs_norm);
	TAP_RUN(t_errors);
	return tap_done();
}
