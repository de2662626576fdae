/* population_bench.c: rows/s of a population's forward pass (not a test).
 *
 *   bench/population_bench [--rows N] [--repeats R] [--cpu-time]
 *                          [--net cartpole|minatar] [--members M] [--no-ga]
 *
 * For the CartPole MLP (examples/models/mlp64.json: f32[4], 2 actions) and
 * the MinAtar network of examples/presets/minatar-breakout.json (u8[10,10,4]
 * with a tenth of the bits set, conv 16 3x3, linear 128, 3 actions), at
 * one total batch of N rows (default 4096), prints a markdown table of:
 *   single: seed_model_forward of one model on the N rows;
 *   full rank: seed_population_forward of an ES generation of M members
 *     (rank 0), rows spread over the members at random;
 *   low rank 1, 4: the same generation with rank 1 and 4 noise;
 * for M = 64 and 256, and the cost of seed_population_set (building the
 * members, once per generation) in ms; then GA generations (full rank):
 * a first round of fresh genomes (set: one initialisation per member, the
 * model's scheme, orthogonal), and a later round whose members are
 * children of 20 parents of 9 keys (set: after the first call, which
 * builds each parent once, the parents come from those the population
 * kept, as they do from one GA round to the next).  Each figure is the median of R
 * timed runs (default 7), each at least 20 ms long.  --cpu-time times by
 * the thread's CPU time (for a shared machine).  One BLAS thread unless
 * SEED_BLAS_THREADS says otherwise.  --net, --members and --no-ga narrow
 * the table to one network, one population size, and the ES rows (to
 * time or profile one case).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_time.h"
#include "seed/evo.h"
#include "seed/nn.h"
#include "seed/noise.h"
#include "seed/population.h"
#include "seed/rng.h"

static int only_members; /* 0: 64 and 256 */
static bool no_ga;

typedef struct ctx {
	seed_model *model;
	seed_population *pop;
	int rows;
	void *obs;
	int32_t *member;
	float *logits;
	/* for timing set */
	const seed_noise *noise;
	const seed_evo_gen *gen;
} ctx;

static void run_single(void *p)
{
	ctx *c = p;
	if (seed_model_forward(c->model, c->rows, c->obs, c->logits, NULL) != 0)
		abort();
}

static void run_pop(void *p)
{
	ctx *c = p;
	if (seed_population_forward(c->pop, c->rows, c->obs, c->member, c->logits, NULL) != 0)
		abort();
}

static void run_set(void *p)
{
	ctx *c = p;
	if (seed_population_set(c->pop, c->noise, c->gen, NULL) != 0)
		abort();
}

typedef struct netdef {
	const char *key, *name, *json;
	seed_dtype dtype;
	int rank;
	int64_t shape[3];
	int A;
} netdef;

static const netdef nets[] = {
    {"cartpole",
     "CartPole MLP",
     "{\"torso\": [{\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"}, {\"type\": \"linear\", "
     "\"out\": 64},"
     " {\"type\": \"tanh\"}]}",
     SEED_DTYPE_F32,
     1,
     {4},
     2},
    {"minatar",
     "MinAtar network",
     "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 16, \"kernel\": 3}, {\"type\": \"relu\"}, {\"type\": "
     "\"flatten\"}, {\"type\": \"linear\", \"out\": 128}, {\"type\": \"relu\"}]}",
     SEED_DTYPE_U8,
     3,
     {10, 10, 4},
     3},
};

static void bench_net(const netdef *d, const seed_noise *noise, int rows)
{
	seed_err err = {{0}};
	seed_model *model = NULL;
	if (seed_model_new(&model, d->json, d->dtype, d->rank, d->shape, d->A, rows, &err) != 0) {
		fprintf(stderr, "population_bench: %s\n", err.msg);
		exit(1);
	}
	seed_rng rng;
	seed_rng_init(&rng, 1, 0);
	seed_model_init(model, &rng);
	size_t ob = seed_model_obs_bytes(model), P = seed_model_num_params(model);
	unsigned char *obs = malloc((size_t)rows * ob);
	for (size_t i = 0; i < (size_t)rows * ob; i++)
		obs[i] = d->dtype == SEED_DTYPE_U8 ? (seed_rng_below(&rng, 10) == 0) : 0;
	if (d->dtype == SEED_DTYPE_F32)
		for (size_t i = 0; i < (size_t)rows * (ob / 4); i++)
			((float *)obs)[i] = (float)seed_rng_uniform(&rng, -1.0, 1.0);
	float *logits = malloc((size_t)rows * (size_t)d->A * sizeof *logits);
	int32_t *member = malloc((size_t)rows * sizeof *member);
	ctx c = {
	    .model = model, .rows = rows, .obs = obs, .member = member, .logits = logits, .noise = noise};
	double single = rows / bench_time_it(run_single, &c);
	printf("| %s | single model | - | %.0f | 100%% | - |\n", d->name, single);
	static const int members[] = {64, 256};
	static const int ranks[] = {0, 1, 4};
	for (size_t mi = 0; mi < sizeof members / sizeof members[0]; mi++) {
		int M = members[mi];
		if (only_members && M != only_members)
			continue;
		int64_t *genome = malloc((size_t)M * sizeof *genome);
		float *sign = malloc((size_t)M * sizeof *sign);
		int32_t *episodes = malloc((size_t)M * sizeof *episodes);
		for (int m = 0; m < M; m++) {
			genome[m] = (int64_t)(seed_rng_u64(&rng) >> 1);
			sign[m] = m % 2 ? -1.0f : 1.0f;
			episodes[m] = 1;
		}
		for (int r = 0; r < rows; r++)
			member[r] = (int32_t)seed_rng_below(&rng, (uint32_t)M);
		for (size_t ri = 0; ri < sizeof ranks / sizeof ranks[0]; ri++) {
			seed_evo_gen g = {.algo = SEED_EVO_ES,
			                  .noise_seed = seed_noise_seed(noise),
			                  .noise_size = seed_noise_size(noise),
			                  .sigma = 0.02,
			                  .rank = ranks[ri],
			                  .members = M,
			                  .genome_len = 1,
			                  .genome = genome,
			                  .sign = sign,
			                  .episodes = episodes,
			                  .centre = seed_model_params(model),
			                  .num_params = P};
			seed_population *pop = NULL;
			if (seed_population_new(&pop, d->json, d->dtype, d->rank, d->shape, d->A, rows,
			                        &err) != 0) {
				fprintf(stderr, "population_bench: %s\n", err.msg);
				exit(1);
			}
			c.pop = pop;
			c.gen = &g;
			double set_s = bench_time_it(run_set, &c);
			double rs = rows / bench_time_it(run_pop, &c);
			char what[32];
			if (ranks[ri] == 0)
				snprintf(what, sizeof what, "full rank");
			else
				snprintf(what, sizeof what, "low rank %d", ranks[ri]);
			printf("| %s | %s | %d | %.0f | %.0f%% | %.2f |\n", d->name, what, M, rs,
			       100.0 * rs / single, 1e3 * set_s);
			seed_population_free(&pop);
		}
		/* GA: the cost of building members from genomes of 1 and 10
		 * keys (the initialisation, then the mutations). */
		for (int L = 1; L <= 10 && !no_ga; L += 9) {
			int64_t *gg = malloc((size_t)M * (size_t)L * sizeof *gg);
			/* L = 1: a first round (every genome fresh); L = 10: a
			 * later round, children of 20 parents of 9 keys each. */
			int64_t parents[20][9];
			for (int i = 0; i < 20 * 9; i++)
				parents[i / 9][i % 9] = (int64_t)(seed_rng_u64(&rng) >> 1);
			for (int m = 0; m < M; m++) {
				if (L > 1)
					memcpy(gg + (size_t)m * L, parents[seed_rng_below(&rng, 20)],
					       9 * sizeof *gg);
				gg[(size_t)m * L + L - 1] = (int64_t)(seed_rng_u64(&rng) >> 1);
			}
			seed_evo_gen g = {.algo = SEED_EVO_GA,
			                  .noise_seed = seed_noise_seed(noise),
			                  .noise_size = seed_noise_size(noise),
			                  .sigma = 0.002,
			                  .members = M,
			                  .genome_len = L,
			                  .genome = gg,
			                  .episodes = episodes,
			                  .num_params = P};
			seed_population *pop = NULL;
			if (seed_population_new(&pop, d->json, d->dtype, d->rank, d->shape, d->A, rows,
			                        &err) != 0)
				exit(1);
			c.pop = pop;
			c.gen = &g;
			double set_s = bench_time_it(run_set, &c);
			double rs = rows / bench_time_it(run_pop, &c);
			printf("| %s | GA, %s | %d | %.0f | %.0f%% | %.2f |\n", d->name,
			       L == 1 ? "fresh genomes" : "20 parents + 1 key, parents kept", M, rs,
			       100.0 * rs / single, 1e3 * set_s);
			seed_population_free(&pop);
			free(gg);
		}
		free(genome);
		free(sign);
		free(episodes);
	}
	free(obs);
	free(logits);
	free(member);
	seed_model_free(&model);
}

int main(int argc, char **argv)
{
	int rows = 4096;
	const char *net = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
			rows = atoi(argv[++i]);
		else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
			bench_repeats = atoi(argv[++i]);
		else if (strcmp(argv[i], "--cpu-time") == 0)
			bench_clock = CLOCK_THREAD_CPUTIME_ID;
		else if (strcmp(argv[i], "--net") == 0 && i + 1 < argc)
			net = argv[++i];
		else if (strcmp(argv[i], "--members") == 0 && i + 1 < argc)
			only_members = atoi(argv[++i]);
		else if (strcmp(argv[i], "--no-ga") == 0)
			no_ga = true;
		else {
			fprintf(stderr,
			        "usage: population_bench [--rows N] [--repeats R] [--cpu-time]\n"
			        "                        [--net cartpole|minatar] [--members M] [--no-ga]\n");
			return 2;
		}
	}
	if (rows < 1 || bench_repeats < 1) {
		fprintf(stderr, "population_bench: --rows and --repeats must be at least 1\n");
		return 2;
	}
	if (only_members != 0 && only_members != 64 && only_members != 256) {
		fprintf(stderr, "population_bench: --members must be 64 or 256, not %d\n", only_members);
		return 2;
	}
	bool known = net == NULL;
	for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
		known = known || strcmp(net, nets[i].key) == 0;
	if (!known) {
		fprintf(stderr, "population_bench: --net must be cartpole or minatar, not '%s'\n", net);
		return 2;
	}
	seed_noise *noise = NULL;
	seed_err err = {{0}};
	double t0 = bench_now();
	if (seed_noise_new(&noise, 0, INT64_C(1) << 24, &err) != 0) {
		fprintf(stderr, "population_bench: %s\n", err.msg);
		return 1;
	}
	printf("noise table of 2^24 floats built in %.0f ms\n\n", 1e3 * (bench_now() - t0));
	printf("%d rows per call, median of %d runs\n\n", rows, bench_repeats);
	printf(
	    "| network | forward | members | rows/s | of single | set ms |\n|---|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
		if (net == NULL || strcmp(net, nets[i].key) == 0)
			bench_net(&nets[i], noise, rows);
	seed_noise_free(&noise);
	return 0;
}
