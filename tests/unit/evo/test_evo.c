/* test_evo.c: neuroevolution's members and algorithms (seed/evo.h).
 *
 * Against tests/golden/evo_ref.py (numpy, from the documented definitions):
 * centred ranks with ties, ES and GA members in full and low rank on a
 * small MLP, the ES update over two rounds (one with a missing episode), the
 * keys the algorithms draw.  Worked by hand here: GA truncation selection,
 * elitism and its phase-1 round, random search, rounds without episodes,
 * stale and bad reports; SNES members against the noise table read
 * directly (centre[i] + sign sigmas[i] eps[i]), ARS members against ES's
 * golden ones, and the generation checks of both.  Checkpoint state saved
 * and restored, in memory
 * and through seed_checkpoint files, continues exactly as the original. */
#include "seed/evo.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evo_golden.h"
#include "tap.h"
#include "tmpdir.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *MLP = "{\"torso\": [{\"type\": \"linear\", \"out\": 4}, {\"type\": \"relu\"}]}";

static seed_model *small_model(void)
{
	seed_model *m = NULL;
	int64_t shape[1] = {3};
	seed_err err = {{0}};
	if (seed_model_new(&m, MLP, SEED_DTYPE_F32, 1, shape, 2, 8, &err) != 0)
		printf("# model: %s\n", err.msg);
	return m;
}

static seed_noise *member_table(void)
{
	seed_noise *n = NULL;
	if (seed_noise_new(&n, MEMBER_NOISE_SEED, MEMBER_NOISE_SIZE, NULL) != 0)
		return NULL;
	return n;
}

/* Relative 1e-5 with a floor of 1e-6: float sums of a few terms. */
static int close5(double got, double want)
{
	return fabs(got - want) <= 1e-5 * fabs(want) + 1e-6;
}

static void t_algo_names(void)
{
	seed_evo_algo a = SEED_EVO_ES;
	CHECK(seed_evo_algo_parse("ga", &a) == 0 && a == SEED_EVO_GA);
	CHECK(seed_evo_algo_parse("rs", &a) == 0 && a == SEED_EVO_RS);
	CHECK(seed_evo_algo_parse("es", &a) == 0 && a == SEED_EVO_ES);
	CHECK(seed_evo_algo_parse("ES", &a) == -EINVAL && a == SEED_EVO_ES);
	CHECK(seed_evo_algo_parse("", &a) == -EINVAL);
	CHECK(strcmp(seed_evo_algo_name(SEED_EVO_GA), "ga") == 0);
	CHECK(strcmp(seed_evo_algo_name(SEED_EVO_RS), "rs") == 0);
	CHECK(strcmp(seed_evo_algo_name(SEED_EVO_ES), "es") == 0);
	CHECK(seed_evo_algo_parse("snes", &a) == 0 && a == SEED_EVO_SNES);
	CHECK(seed_evo_algo_parse("ars", &a) == 0 && a == SEED_EVO_ARS);
	CHECK(strcmp(seed_evo_algo_name(SEED_EVO_SNES), "snes") == 0);
	CHECK(strcmp(seed_evo_algo_name(SEED_EVO_ARS), "ars") == 0);
	CHECK(seed_evo_algo_centred(SEED_EVO_ES) && seed_evo_algo_centred(SEED_EVO_SNES) &&
	      seed_evo_algo_centred(SEED_EVO_ARS));
	CHECK(!seed_evo_algo_centred(SEED_EVO_GA) && !seed_evo_algo_centred(SEED_EVO_RS));
}

static void t_centered_ranks(void)
{
	for (int k = 0; k < N_OF(ranks_golden); k++) {
		float shaped[8];
		seed_evo_centered_ranks(ranks_golden[k].fitness, ranks_golden[k].n, shaped);
		for (int i = 0; i < ranks_golden[k].n; i++)
			CHECK_MSG(fabsf(shaped[i] - ranks_golden[k].shaped[i]) < 1e-7f,
			          "case %d [%d]: %g, want %g", k, i, (double)shaped[i],
			          (double)ranks_golden[k].shaped[i]);
	}
	/* One member: 0 (no division by zero); none: nothing written. */
	double one = 3.5;
	float s = 9.0f;
	seed_evo_centered_ranks(&one, 1, &s);
	CHECK(s == 0.0f);
	s = 9.0f;
	seed_evo_centered_ranks(&one, 0, &s);
	CHECK(s == 9.0f);
	/* A large population: ranks -0.5 .. 0.5 in steps of 1 / (n - 1). */
	enum { N = 1001 };
	static double f[N];
	static float r[N];
	for (int i = 0; i < N; i++)
		f[i] = (double)((i * 7919) % N); /* a permutation of 0..N-1 */
	seed_evo_centered_ranks(f, N, r);
	for (int i = 0; i < N; i++)
		CHECK(fabs(r[i] - (f[i] / (N - 1) - 0.5)) < 1e-6);
}

/* The model's tensors are the ones the reference lays out. */
static void t_layout(void)
{
	seed_model *m = small_model();
	if (!m)
		return;
	static const char *names[] = {"torso.0.weight", "torso.0.bias", "policy.weight",
	                              "value.weight",   "policy.bias",  "value.bias"};
	CHECK(seed_model_num_tensors(m) == N_OF(names));
	for (int i = 0; i < N_OF(names) && i < seed_model_num_tensors(m); i++)
		CHECK(strcmp(seed_model_param_at(m, i)->name, names[i]) == 0);
	CHECK(seed_model_num_params(m) == MEMBER_P);
	CHECK(seed_evo_noise_len(m, 0) == MEMBER_P);
	CHECK(seed_evo_noise_len(m, 1) == MEMBER_LOWRANK_Q1);
	CHECK(seed_evo_noise_len(m, 2) == MEMBER_LOWRANK_Q2);
	seed_model_free(&m);
}

/* ES's members, and ARS's, which are the same: centre + sign sigma eps(key),
 * full and low rank, against the numpy golden parameters. */
static void member_centred(seed_evo_algo algo)
{
	seed_model *m = small_model();
	seed_noise *n = member_table();
	if (!m || !n)
		goto out;
	float centre[MEMBER_P], out[MEMBER_P];
	for (int i = 0; i < MEMBER_P; i++)
		centre[i] = (float)(0.01 * i - 0.1);
	int64_t genome[6];
	float sign[6];
	int32_t episodes[6];
	for (int k = 0; k < 3; k++)
		for (int s = 0; s < 2; s++) {
			genome[2 * k + s] = member_keys[k];
			sign[2 * k + s] = s ? -1.0f : 1.0f;
			episodes[2 * k + s] = 1;
		}
	for (int r = 0; r < 3; r++) {
		seed_evo_gen g = {.algo = algo,
		                  .noise_seed = MEMBER_NOISE_SEED,
		                  .noise_size = MEMBER_NOISE_SIZE,
		                  .sigma = MEMBER_SIGMA,
		                  .rank = r,
		                  .members = 6,
		                  .genome_len = 1,
		                  .genome = genome,
		                  .sign = sign,
		                  .episodes = episodes,
		                  .centre = centre,
		                  .num_params = MEMBER_P};
		CHECK(seed_evo_gen_check(&g, NULL) == 0);
		for (int mm = 0; mm < 6; mm++) {
			seed_err err = {{0}};
			CHECK_MSG(seed_evo_member_params(n, m, &g, mm, out, &err) == 0, "%s", err.msg);
			const float *want = member_es + ((size_t)(r * 6 + mm)) * MEMBER_P;
			int bad = 0;
			for (int i = 0; i < MEMBER_P; i++)
				bad += !close5(out[i], want[i]);
			CHECK_MSG(bad == 0, "rank %d member %d: %d of %d parameters differ", r, mm, bad,
			          MEMBER_P);
		}
	}
out:
	seed_model_free(&m);
	seed_noise_free(&n);
}

static void t_member_es(void)
{
	member_centred(SEED_EVO_ES);
}

/* GA: init(genome[0]) plus the mutations, padded genome; RS: init only. */
static void t_member_ga_rs(void)
{
	seed_model *m = small_model(), *ref = small_model();
	seed_noise *n = member_table();
	if (!m || !ref || !n)
		goto out;
	seed_rng r;
	seed_rng_init(&r, 9, SEED_EVO_INIT_STREAM);
	seed_model_init(ref, &r);
	const float *init = seed_model_params(ref);
	int64_t genome[2][4] = {{9, member_keys[0], member_keys[2], -1}, {9, -1, -1, -1}};
	int32_t episodes[2] = {1, 1};
	float out[MEMBER_P];
	for (int rank = 0; rank < 3; rank++) {
		seed_evo_gen g = {.algo = SEED_EVO_GA,
		                  .noise_seed = MEMBER_NOISE_SEED,
		                  .noise_size = MEMBER_NOISE_SIZE,
		                  .sigma = MEMBER_SIGMA,
		                  .rank = rank,
		                  .members = 2,
		                  .genome_len = 4,
		                  .genome = &genome[0][0],
		                  .episodes = episodes,
		                  .num_params = MEMBER_P};
		seed_err err = {{0}};
		CHECK_MSG(seed_evo_member_params(n, m, &g, 0, out, &err) == 0, "%s", err.msg);
		int bad = 0;
		for (int i = 0; i < MEMBER_P; i++)
			bad += !close5(out[i] - init[i], member_ga_delta[rank * MEMBER_P + i]);
		CHECK_MSG(bad == 0, "rank %d: %d parameters differ", rank, bad);
		/* A genome of one key is the initialisation itself. */
		CHECK(seed_evo_member_params(n, m, &g, 1, out, &err) == 0);
		CHECK(memcmp(out, init, sizeof out) == 0);
		/* RS ignores nothing but plays init(genome[0]). */
		g.algo = SEED_EVO_RS;
		CHECK(seed_evo_member_params(n, m, &g, 0, out, &err) == 0);
		CHECK(memcmp(out, init, sizeof out) == 0);
	}
out:
	seed_model_free(&m);
	seed_model_free(&ref);
	seed_noise_free(&n);
}

static void t_member_errors(void)
{
	seed_model *m = small_model();
	seed_noise *n = member_table(), *small = NULL;
	CHECK(seed_noise_new(&small, MEMBER_NOISE_SEED, 20, NULL) == 0);
	if (!m || !n || !small)
		goto out;
	int64_t genome[2] = {4, 5};
	int32_t episodes[2] = {1, 1};
	float out[MEMBER_P];
	seed_evo_gen g = {.algo = SEED_EVO_GA,
	                  .noise_seed = MEMBER_NOISE_SEED,
	                  .noise_size = MEMBER_NOISE_SIZE,
	                  .sigma = 0.1,
	                  .members = 1,
	                  .genome_len = 2,
	                  .genome = genome,
	                  .episodes = episodes,
	                  .num_params = MEMBER_P};
	seed_err err = {{0}};
	CHECK(seed_evo_member_params(n, m, &g, 0, out, &err) == 0);
	CHECK(seed_evo_member_params(n, m, &g, 1, out, &err) == -EINVAL && strstr(err.msg, "member 1"));
	CHECK(seed_evo_member_params(n, m, &g, -1, out, &err) == -EINVAL);
	g.noise_seed++;
	CHECK(seed_evo_member_params(n, m, &g, 0, out, &err) == -EINVAL && strstr(err.msg, "noise table"));
	g.noise_seed--;
	g.num_params++;
	CHECK(seed_evo_member_params(n, m, &g, 0, out, &err) == -EINVAL && strstr(err.msg, "parameters"));
	g.num_params--;
	/* A table of 20 floats cannot hold a slice of 31. */
	g.noise_size = 20;
	CHECK(seed_evo_member_params(small, m, &g, 0, out, &err) == -EINVAL && strstr(err.msg, "longer"));
	g.noise_size = MEMBER_NOISE_SIZE;
	genome[0] = -1;
	CHECK(seed_evo_member_params(n, m, &g, 0, out, &err) == -EINVAL && strstr(err.msg, "genome[0]"));
	genome[0] = 4;
	genome[1] = -7;
	CHECK(seed_evo_gen_check(&g, &err) == -EINVAL && strstr(err.msg, "genome[1]"));
	genome[1] = 5;
	episodes[0] = 0;
	CHECK(seed_evo_gen_check(&g, &err) == -EINVAL && strstr(err.msg, "episodes"));
	episodes[0] = 1;
	g.algo = SEED_EVO_ES; /* L = 2, no sign, no centre */
	CHECK(seed_evo_gen_check(&g, &err) == -EINVAL);
	g.algo = SEED_EVO_GA;
	g.sigma = NAN;
	CHECK(seed_evo_gen_check(&g, &err) == -EINVAL && strstr(err.msg, "sigma"));
	g.sigma = 0.1;
	g.phase = 2;
	CHECK(seed_evo_gen_check(&g, &err) == -EINVAL && strstr(err.msg, "phase"));
	g.phase = 0;
	CHECK(seed_evo_gen_check(&g, &err) == 0);
out:
	seed_model_free(&m);
	seed_noise_free(&n);
	seed_noise_free(&small);
}

/* ARS members are ES's: the same golden parameters, full and low rank. */
static void t_member_ars(void)
{
	member_centred(SEED_EVO_ARS);
}

/* A SNES round of 4 members (two keys, antithetic) on the small MLP. */
typedef struct snes_round {
	float centre[MEMBER_P], sigmas[MEMBER_P], sign[4];
	int64_t genome[4];
	int32_t episodes[4];
	seed_evo_gen g;
} snes_round;

static void snes_round_init(snes_round *x)
{
	for (int i = 0; i < MEMBER_P; i++) {
		x->centre[i] = (float)(0.02 * i - 0.3);
		x->sigmas[i] = (float)(0.005 * (i % 7)); /* some 0: those parameters stay the centre's */
	}
	for (int k = 0; k < 4; k++) {
		x->genome[k] = member_keys[k / 2];
		x->sign[k] = k % 2 ? -1.0f : 1.0f;
		x->episodes[k] = 1;
	}
	x->g = (seed_evo_gen){.algo = SEED_EVO_SNES,
	                      .noise_seed = MEMBER_NOISE_SEED,
	                      .noise_size = MEMBER_NOISE_SIZE,
	                      .sigma = 0.015,
	                      .members = 4,
	                      .genome_len = 1,
	                      .genome = x->genome,
	                      .sign = x->sign,
	                      .episodes = x->episodes,
	                      .centre = x->centre,
	                      .num_params = MEMBER_P,
	                      .sigmas = x->sigmas};
}

/* SNES: centre[i] + sign * sigmas[i] * eps(key)[i], eps the table's P
 * floats at the key's index, read here from the table itself. */
static void t_member_snes(void)
{
	seed_model *m = small_model();
	seed_noise *n = member_table();
	if (!m || !n)
		goto out;
	snes_round x;
	snes_round_init(&x);
	seed_err err = {{0}};
	CHECK_MSG(seed_evo_gen_check(&x.g, &err) == 0, "%s", err.msg);
	const float *table = seed_noise_data(n);
	float out[MEMBER_P];
	for (int mm = 0; mm < 4; mm++) {
		CHECK_MSG(seed_evo_member_params(n, m, &x.g, mm, out, &err) == 0, "%s", err.msg);
		int64_t at = seed_noise_index(n, (uint64_t)x.genome[mm], MEMBER_P);
		CHECK(at >= 0 && at + MEMBER_P <= MEMBER_NOISE_SIZE);
		if (at < 0)
			continue;
		int bad = 0, moved = 0;
		for (int i = 0; i < MEMBER_P; i++) {
			double want = (double)x.centre[i] +
			              (double)x.sign[mm] * (double)x.sigmas[i] * (double)table[at + i];
			bad += !close5(out[i], want);
			if (x.sigmas[i] == 0.0f)
				bad += out[i] != x.centre[i];
			moved += out[i] != x.centre[i];
		}
		CHECK_MSG(bad == 0, "member %d: %d of %d parameters differ", mm, bad, MEMBER_P);
		CHECK(moved > MEMBER_P / 2);
	}
	/* The antithetic pair: member 1 is the mirror of member 0 about the centre. */
	float plus[MEMBER_P], minus[MEMBER_P];
	CHECK(seed_evo_member_params(n, m, &x.g, 0, plus, &err) == 0);
	CHECK(seed_evo_member_params(n, m, &x.g, 1, minus, &err) == 0);
	for (int i = 0; i < MEMBER_P; i++)
		CHECK_NEAR(plus[i] - x.centre[i], x.centre[i] - minus[i], 1e-6);
	/* sigma is informational: another value builds the same members. */
	x.g.sigma = 7.0;
	CHECK(seed_evo_member_params(n, m, &x.g, 0, out, &err) == 0);
	CHECK(memcmp(out, plus, sizeof out) == 0);
out:
	seed_model_free(&m);
	seed_noise_free(&n);
}

static void t_member_snes_errors(void)
{
	seed_model *m = small_model();
	seed_noise *n = member_table(), *small = NULL;
	CHECK(seed_noise_new(&small, MEMBER_NOISE_SEED, 20, NULL) == 0);
	if (!m || !n || !small)
		goto out;
	snes_round x;
	snes_round_init(&x);
	seed_evo_gen *g = &x.g;
	seed_err err = {{0}};
	float out[MEMBER_P];
	/* Low rank: per-parameter sigmas do not factor. */
	g->rank = 1;
	CHECK(seed_evo_gen_check(g, &err) == -EINVAL &&
	      strstr(err.msg, "generation: snes needs rank 0 (per-parameter sigmas), not 1"));
	CHECK(seed_evo_member_params(n, m, g, 0, out, &err) == -EINVAL && strstr(err.msg, "rank 0"));
	g->rank = 0;
	g->sigmas = NULL;
	CHECK(seed_evo_gen_check(g, &err) == -EINVAL && strstr(err.msg, "generation: snes needs sigmas"));
	CHECK(seed_evo_member_params(n, m, g, 0, out, &err) == -EINVAL && strstr(err.msg, "needs sigmas"));
	g->sigmas = x.sigmas;
	x.sigmas[3] = NAN;
	CHECK(seed_evo_gen_check(g, &err) == -EINVAL &&
	      strstr(err.msg, "generation: sigmas[3] is nan, must be finite and >= 0"));
	CHECK(seed_evo_member_params(n, m, g, 2, out, &err) == -EINVAL && strstr(err.msg, "sigmas[3]"));
	x.sigmas[3] = INFINITY;
	CHECK(seed_evo_gen_check(g, &err) == -EINVAL && strstr(err.msg, "sigmas[3] is inf"));
	x.sigmas[3] = 0.01f;
	x.sigmas[30] = -0.5f;
	CHECK(seed_evo_gen_check(g, &err) == -EINVAL && strstr(err.msg, "sigmas[30] is -0.5"));
	CHECK(seed_evo_member_params(n, m, g, 0, out, &err) == -EINVAL && strstr(err.msg, "sigmas[30]"));
	x.sigmas[30] = 0.0f;
	CHECK(seed_evo_gen_check(g, &err) == 0);
	/* The centred algorithms' rules hold for snes too. */
	g->phase = 1;
	CHECK(seed_evo_gen_check(g, &err) == -EINVAL && strstr(err.msg, "snes has no phase 1"));
	g->phase = 0;
	g->centre = NULL;
	CHECK(seed_evo_gen_check(g, &err) == -EINVAL && strstr(err.msg, "snes needs sign and centre"));
	g->centre = x.centre;
	x.sign[2] = 0.5f;
	CHECK(seed_evo_gen_check(g, &err) == -EINVAL && strstr(err.msg, "member 2: sign"));
	CHECK(seed_evo_member_params(n, m, g, 2, out, &err) == -EINVAL && strstr(err.msg, "sign"));
	x.sign[2] = 1.0f;
	/* A table of 20 floats cannot hold a slice of 31. */
	g->noise_size = 20;
	CHECK(seed_evo_member_params(small, m, g, 0, out, &err) == -EINVAL && strstr(err.msg, "longer"));
	g->noise_size = MEMBER_NOISE_SIZE;
	/* sigmas only go with snes. */
	static const seed_evo_algo others[] = {SEED_EVO_ES, SEED_EVO_ARS, SEED_EVO_GA, SEED_EVO_RS};
	for (int k = 0; k < N_OF(others); k++) {
		seed_evo_gen o = *g;
		o.algo = others[k];
		if (!seed_evo_algo_centred(o.algo))
			o.sign = NULL, o.centre = NULL;
		char want[80];
		snprintf(want, sizeof want, "generation: sigmas only go with snes, not %s",
		         seed_evo_algo_name(o.algo));
		CHECK_MSG(seed_evo_gen_check(&o, &err) == -EINVAL && strstr(err.msg, want), "%s: %s",
		          seed_evo_algo_name(o.algo), err.msg);
		CHECK(seed_evo_member_params(n, m, &o, 0, out, &err) == -EINVAL && strstr(err.msg, want));
		o.sigmas = NULL;
		CHECK_MSG(seed_evo_gen_check(&o, &err) == 0, "%s: %s", seed_evo_algo_name(o.algo), err.msg);
	}
	/* ARS keeps ES's rules: no phase 1, sign and centre. */
	seed_evo_gen a = *g;
	a.algo = SEED_EVO_ARS;
	a.sigmas = NULL;
	a.phase = 1;
	CHECK(seed_evo_gen_check(&a, &err) == -EINVAL && strstr(err.msg, "ars has no phase 1"));
	a.phase = 0;
	a.sign = NULL;
	CHECK(seed_evo_gen_check(&a, &err) == -EINVAL && strstr(err.msg, "ars needs sign and centre"));
out:
	seed_model_free(&m);
	seed_noise_free(&n);
	seed_noise_free(&small);
}

static seed_evo_config es_config(void)
{
	seed_evo_config c;
	seed_evo_config_default(&c, SEED_EVO_ES);
	c.population = ES_POP;
	c.sigma = ES_SIGMA;
	c.lr = ES_LR;
	c.l2 = ES_L2;
	c.seed = ES_SEED;
	c.noise_seed = MEMBER_NOISE_SEED;
	c.noise_size = MEMBER_NOISE_SIZE;
	return c;
}

static void set_centre(seed_model *m)
{
	for (int i = 0; i < MEMBER_P; i++)
		seed_model_params(m)[i] = (float)(0.01 * i - 0.1);
}

/* Reports round r's returns (NAN: none) to e. */
static void report_es_round(seed_evo *e, int r)
{
	const seed_evo_gen *g = seed_evo_current(e);
	for (int i = 0; i < ES_POP; i++)
		if (!isnan(es_returns[r][i]))
			CHECK(seed_evo_report(e, g->generation, i, es_returns[r][i], 10 + i) == 0);
}

static void t_es_update(void)
{
	seed_model *m = small_model();
	seed_noise *n = member_table();
	seed_evo *e = NULL;
	if (!m || !n)
		goto out;
	set_centre(m);
	seed_evo_config c = es_config();
	seed_err err = {{0}};
	CHECK_MSG(seed_evo_new(&e, &c, n, m, &err) == 0, "%s", err.msg);
	if (!e)
		goto out;
	float centre[MEMBER_P];
	for (int r = 0; r < 3; r++) {
		const seed_evo_gen *g = seed_evo_current(e);
		CHECK(g->generation == r && g->phase == 0 && g->members == ES_POP && g->genome_len == 1);
		CHECK(g->algo == SEED_EVO_ES && g->rank == 0 && g->num_params == MEMBER_P &&
		      g->sigma == ES_SIGMA);
		CHECK(g->noise_seed == MEMBER_NOISE_SEED && g->noise_size == MEMBER_NOISE_SIZE);
		CHECK(seed_evo_gen_check(g, &err) == 0);
		for (int i = 0; i < ES_POP; i++) {
			CHECK_MSG(g->genome[i] == es_keys[r * 3 + i / 2],
			          "round %d member %d key %lld, want %lld", r, i, (long long)g->genome[i],
			          (long long)es_keys[r * 3 + i / 2]);
			CHECK(g->sign[i] == (i % 2 ? -1.0f : 1.0f));
			CHECK(g->episodes[i] == 1);
		}
		if (r == 2)
			break;
		CHECK(!seed_evo_complete(e));
		report_es_round(e, r);
		CHECK(seed_evo_complete(e) == (r == 0));
		CHECK(seed_evo_report(e, r + 1, 0, 1.0, 1) == -ESTALE);
		CHECK(seed_evo_report(e, r, ES_POP, 1.0, 1) == -ERANGE);
		CHECK(seed_evo_report(e, r, -1, 1.0, 1) == -ERANGE);
		CHECK(seed_evo_report(e, r, 0, NAN, 1) == -EINVAL);
		CHECK_MSG(seed_evo_advance(e, &err) == 0, "%s", err.msg);
		CHECK(seed_evo_best_params(e, centre, &err) == 0);
		int bad = 0;
		for (int i = 0; i < MEMBER_P; i++)
			bad += !close5(centre[i], es_centre[r * MEMBER_P + i]);
		CHECK_MSG(bad == 0, "round %d: %d of %d centre parameters differ", r, bad, MEMBER_P);
		/* The published centre is the updated one. */
		CHECK(memcmp(seed_evo_current(e)->centre, centre, sizeof centre) == 0);
		CHECK(seed_evo_report(e, r, 0, 1.0, 1) == -ESTALE);
	}
	const seed_evo_stats *s = seed_evo_get_stats(e);
	/* Round 1: members 0, 1, 4, 5 evaluated (member 3 missing drops pair 1):
	 * returns 4, 4, 2, 8. */
	CHECK(s->generation == 2 && s->evaluated == 4);
	CHECK(s->best == 8.0 && s->mean == 4.5 && s->median == 4.0);
	CHECK(isnan(s->elite));
	CHECK(s->episodes == 11);
	CHECK(s->frames == (10 + 11 + 12 + 13 + 14 + 15) + (10 + 11 + 12 + 14 + 15));
	int len = 5;
	CHECK(seed_evo_best_genome(e, &len) == NULL && len == 0);
out:
	seed_evo_free(&e);
	CHECK(e == NULL);
	seed_model_free(&m);
	seed_noise_free(&n);
}

/* ES's configuration with another centred algorithm. */
static seed_evo_config centred_config(seed_evo_algo a)
{
	seed_evo_config c = es_config();
	c.algo = a;
	return c;
}

/* SNES over ES's keys and returns (tests/golden/evo_ref.py): the centre
 * and the stds after each round, the generation's sigmas and mean sigma,
 * with lr_sigma's default and a given one, then with temperature 5 (the
 * softmax weights in place of the rank utilities; round 1 has a pair left
 * out and a tie, so the ranks run over the 4 evaluated). */
static void t_snes_update(void)
{
	seed_model *m = small_model();
	seed_noise *n = member_table();
	if (!m || !n)
		goto out;
	static const float *const want_cs[3] = {snes_centre, snes_ls_centre, snes_t_centre};
	static const float *const want_ss[3] = {snes_sigmas, snes_ls_sigmas, snes_t_sigmas};
	for (int v = 0; v < 3; v++) {
		const float *want_c = want_cs[v];
		const float *want_s = want_ss[v];
		set_centre(m);
		seed_evo_config c = centred_config(SEED_EVO_SNES);
		c.lr = 0.5f;
		c.lr_sigma = v == 1 ? 0.3f : 0.0f;
		c.temperature = v == 2 ? 5.0 : 0.0;
		seed_evo *e = NULL;
		seed_err err = {{0}};
		CHECK_MSG(seed_evo_new(&e, &c, n, m, &err) == 0, "%s", err.msg);
		if (!e)
			continue;
		const seed_evo_gen *g = seed_evo_current(e);
		CHECK(g->algo == SEED_EVO_SNES && g->sigmas && g->centre && g->sign && g->genome_len == 1);
		CHECK(g->sigmas && g->sigmas[0] == (float)ES_SIGMA &&
		      g->sigmas[MEMBER_P - 1] == (float)ES_SIGMA);
		CHECK(fabs(g->sigma - ES_SIGMA) < 1e-9);
		for (int r = 0; r < 2; r++) {
			g = seed_evo_current(e);
			for (int i = 0; i < ES_POP; i++)
				CHECK(g->genome[i] == es_keys[r * 3 + i / 2]);
			report_es_round(e, r);
			CHECK_MSG(seed_evo_advance(e, &err) == 0, "%s", err.msg);
			g = seed_evo_current(e);
			float centre[MEMBER_P];
			CHECK(seed_evo_best_params(e, centre, &err) == 0);
			int bad_c = 0, bad_s = 0;
			double mean = 0;
			for (int i = 0; i < MEMBER_P; i++) {
				bad_c += !close5(centre[i], want_c[r * MEMBER_P + i]);
				bad_s += !close5(g->sigmas[i], want_s[r * MEMBER_P + i]);
				mean += want_s[r * MEMBER_P + i];
			}
			CHECK_MSG(bad_c == 0 && bad_s == 0,
			          "lr_sigma %g, temperature %g, round %d: %d centre, %d sigmas differ",
			          (double)c.lr_sigma, c.temperature, r, bad_c, bad_s);
			CHECK(memcmp(g->centre, centre, sizeof centre) == 0);
			CHECK(close5(g->sigma, mean / MEMBER_P));
		}
		seed_evo_free(&e);
	}
out:
	seed_model_free(&m);
	seed_noise_free(&n);
}

/* centre_init: model starts es's, snes's and ars's centre at the model's
 * parameters, zero at zero (the trainable ones: a model with "obs_norm"
 * keeps its statistics, mean 0, var 1, count 1e-4, in front); the
 * members of the first round are then centre +- sigma eps. */
static void t_centre_init(void)
{
	static const char *NORM = "{\"torso\": [{\"type\": \"linear\", \"out\": 4}, {\"type\": \"relu\"}], "
	                          "\"obs_norm\": {\"clip\": 5}}";
	seed_model *m = small_model(), *mn = NULL;
	seed_noise *n = member_table();
	int64_t shape[1] = {3};
	seed_err err = {{0}};
	CHECK_MSG(seed_model_new(&mn, NORM, SEED_DTYPE_F32, 1, shape, 2, 8, &err) == 0, "%s", err.msg);
	if (!m || !mn || !n)
		goto out;
	static const seed_evo_algo algos[] = {SEED_EVO_ES, SEED_EVO_SNES, SEED_EVO_ARS};
	for (int a = 0; a < N_OF(algos); a++)
		for (int zero = 0; zero < 2; zero++) {
			set_centre(m);
			seed_evo_config c = centred_config(algos[a]);
			c.centre_init = zero ? SEED_EVO_CENTRE_ZERO : SEED_EVO_CENTRE_MODEL;
			seed_evo *e = NULL;
			CHECK_MSG(seed_evo_new(&e, &c, n, m, &err) == 0, "%s", err.msg);
			if (!e)
				continue;
			const seed_evo_gen *g = seed_evo_current(e);
			float best[MEMBER_P], member[MEMBER_P];
			CHECK(seed_evo_best_params(e, best, &err) == 0);
			int bad = 0;
			for (int i = 0; i < MEMBER_P; i++) {
				float want = zero ? 0.0f : (float)(0.01 * i - 0.1);
				bad += g->centre[i] != want || best[i] != want;
			}
			CHECK_MSG(bad == 0, "%s, centre_init %s: %d parameters of the first centre differ",
			          seed_evo_algo_name(algos[a]), zero ? "zero" : "model", bad);
			/* The model is left as it was. */
			CHECK(seed_model_params(m)[0] == -0.1f &&
			      seed_model_params(m)[MEMBER_P - 1] == (float)(0.01 * (MEMBER_P - 1) - 0.1));
			/* Member 1 (sign -1) is the centre less its noise. */
			seed_model *scratch = small_model();
			CHECK(scratch && seed_evo_member_params(n, scratch, g, 1, member, &err) == 0);
			float eps[MEMBER_P] = {0};
			if (scratch &&
			    seed_evo_add_noise(n, m, 0, (uint64_t)g->genome[1], 1.0f, eps, &err) == 0) {
				int off = 0;
				for (int i = 0; i < MEMBER_P; i++) {
					float s = g->sigmas ? g->sigmas[i] : (float)g->sigma;
					off += !close5(member[i], g->centre[i] - s * eps[i]);
				}
				CHECK_MSG(off == 0, "%s: member 1 is not centre - sigma eps at %d parameters",
				          seed_evo_algo_name(algos[a]), off);
			}
			seed_model_free(&scratch);
			seed_evo_free(&e);
		}
	/* With "obs_norm": zero leaves the statistics in front of the
	 * trainable range as the model has them. */
	size_t first = 0, count = 0, P = seed_model_num_params(mn);
	seed_model_trainable(mn, &first, &count);
	CHECK(first == 7 && first + count == P);
	for (size_t i = first; i < P; i++)
		seed_model_params(mn)[i] = 0.5f;
	seed_evo_config c = centred_config(SEED_EVO_SNES);
	c.centre_init = SEED_EVO_CENTRE_ZERO;
	seed_evo *e = NULL;
	CHECK_MSG(seed_evo_new(&e, &c, n, mn, &err) == 0, "%s", err.msg);
	if (e) {
		const float *ce = seed_evo_current(e)->centre;
		CHECK(ce[0] == 0.0f && ce[1] == 0.0f && ce[2] == 0.0f); /* mean */
		CHECK(ce[3] == 1.0f && ce[4] == 1.0f && ce[5] == 1.0f); /* var */
		CHECK(ce[6] == 1e-4f);                                  /* count */
		int nonzero = 0;
		for (size_t i = first; i < P; i++)
			nonzero += ce[i] != 0.0f;
		CHECK_MSG(nonzero == 0, "%d trainable parameters not zero", nonzero);
		seed_evo_free(&e);
	}
out:
	seed_model_free(&m);
	seed_model_free(&mn);
	seed_noise_free(&n);
}

/* ARS V2-t over ES's keys and returns, the top 2 pairs, fitness shifted by
 * ARS_SHIFT per step; the round's statistics stay the unshifted returns. */
static void t_ars_update(void)
{
	seed_model *m = small_model();
	seed_noise *n = member_table();
	seed_evo *e = NULL;
	if (!m || !n)
		goto out;
	set_centre(m);
	seed_evo_config c = centred_config(SEED_EVO_ARS);
	c.lr = ARS_LR;
	c.top = ARS_TOP;
	c.reward_shift = ARS_SHIFT;
	seed_err err = {{0}};
	CHECK_MSG(seed_evo_new(&e, &c, n, m, &err) == 0, "%s", err.msg);
	if (!e)
		goto out;
	for (int r = 0; r < 2; r++) {
		const seed_evo_gen *g = seed_evo_current(e);
		CHECK(g->algo == SEED_EVO_ARS && g->sigmas == NULL && g->sigma == ES_SIGMA);
		report_es_round(e, r);
		CHECK_MSG(seed_evo_advance(e, &err) == 0, "%s", err.msg);
		float centre[MEMBER_P];
		CHECK(seed_evo_best_params(e, centre, &err) == 0);
		int bad = 0;
		for (int i = 0; i < MEMBER_P; i++)
			bad += !close5(centre[i], ars_centre[r * MEMBER_P + i]);
		CHECK_MSG(bad == 0, "round %d: %d of %d centre parameters differ", r, bad, MEMBER_P);
	}
	/* Round 1's returns as reported: 4, 4, 2, 8 of members 0, 1, 4, 5. */
	const seed_evo_stats *s = seed_evo_get_stats(e);
	CHECK(s->best == 8.0 && s->mean == 4.5 && s->median == 4.0 && s->evaluated == 4);
	/* All returns equal: no step (their std is 0), the centre stays. */
	float before[MEMBER_P], after[MEMBER_P];
	CHECK(seed_evo_best_params(e, before, &err) == 0);
	const seed_evo_gen *g = seed_evo_current(e);
	for (int i = 0; i < ES_POP; i++)
		CHECK(seed_evo_report(e, g->generation, i, 3.0, 10) == 0);
	CHECK(seed_evo_advance(e, &err) == 0);
	CHECK(seed_evo_best_params(e, after, &err) == 0);
	CHECK(memcmp(before, after, sizeof before) == 0);
out:
	seed_evo_free(&e);
	seed_model_free(&m);
	seed_noise_free(&n);
}

/* A round without a single episode changes nothing but the generation. */
static void t_no_episodes(void)
{
	seed_model *m = small_model();
	seed_noise *n = member_table();
	seed_evo *e = NULL;
	if (!m || !n)
		goto out;
	set_centre(m);
	seed_evo_config c = es_config();
	CHECK(seed_evo_new(&e, &c, n, m, NULL) == 0);
	if (!e)
		goto out;
	int64_t keys[ES_POP];
	memcpy(keys, seed_evo_current(e)->genome, sizeof keys);
	/* Only member 0 of pair 0: the pair is incomplete, nothing to learn. */
	CHECK(seed_evo_report(e, 0, 0, 5.0, 3) == 0);
	CHECK(seed_evo_advance(e, NULL) == 0);
	const seed_evo_gen *g = seed_evo_current(e);
	CHECK(g->generation == 1 && memcmp(g->genome, keys, sizeof keys) == 0);
	for (int i = 0; i < MEMBER_P; i++)
		CHECK(g->centre[i] == (float)(0.01 * i - 0.1));
	CHECK(seed_evo_get_stats(e)->evaluated == 0 && seed_evo_get_stats(e)->generation == 1);
	CHECK(isnan(seed_evo_get_stats(e)->best));
out:
	seed_evo_free(&e);
	seed_model_free(&m);
	seed_noise_free(&n);
}

static seed_evo_config ga_config(seed_evo_algo a)
{
	seed_evo_config c;
	seed_evo_config_default(&c, a);
	c.population = 6;
	c.truncation = 2;
	c.elite_candidates = 2;
	c.elite_episodes = 3;
	c.sigma = 0.1;
	c.seed = ES_SEED;
	c.noise_seed = MEMBER_NOISE_SEED;
	c.noise_size = MEMBER_NOISE_SIZE;
	return c;
}

static int glen(const seed_evo_gen *g, int m)
{
	int n = 0;
	while (n < g->genome_len && g->genome[(size_t)m * g->genome_len + n] >= 0)
		n++;
	return n;
}

static const int64_t *grow(const seed_evo_gen *g, int m)
{
	return g->genome + (size_t)m * g->genome_len;
}

/* Uber's GA, worked by hand: truncation, the phase-1 re-evaluation of the
 * top candidates, the elite kept as member 0, children = parent + one key;
 * a member without episodes left out. */
static void t_ga_selection(void)
{
	seed_model *m = small_model(), *ref = small_model();
	seed_noise *n = member_table();
	seed_evo *e = NULL;
	if (!m || !ref || !n)
		goto out;
	seed_evo_config c = ga_config(SEED_EVO_GA);
	seed_err err = {{0}};
	CHECK_MSG(seed_evo_new(&e, &c, n, m, &err) == 0, "%s", err.msg);
	if (!e)
		goto out;
	const seed_evo_gen *g = seed_evo_current(e);
	CHECK(g->algo == SEED_EVO_GA && g->members == 6 && g->genome_len == 1 && g->phase == 0);
	CHECK(g->sign == NULL && g->centre == NULL);
	for (int i = 0; i < 6; i++)
		CHECK_MSG(g->genome[i] == ga_first_keys[i], "member %d key %lld, want %lld", i,
		          (long long)g->genome[i], (long long)ga_first_keys[i]);
	/* Before any round finished the best is member 0. */
	int len = 0;
	CHECK(seed_evo_best_genome(e, &len)[0] == ga_first_keys[0] && len == 1);
	double fit[6] = {1, 5, 3, 9, 2, 7};
	for (int i = 0; i < 6; i++)
		CHECK(seed_evo_report(e, 0, i, fit[i], 100) == 0);
	/* Two episodes for member 2: the mean counts (3 and 5: 4). */
	CHECK(seed_evo_report(e, 0, 2, 5.0, 100) == 0);
	CHECK(seed_evo_complete(e));
	CHECK(seed_evo_advance(e, &err) == 0);
	/* Phase 1: the top 2 (members 3 and 5) over 3 episodes each. */
	g = seed_evo_current(e);
	CHECK(g->generation == 1 && g->phase == 1 && g->members == 2);
	CHECK(grow(g, 0)[0] == ga_first_keys[3] && grow(g, 1)[0] == ga_first_keys[5]);
	CHECK(g->episodes[0] == 3 && g->episodes[1] == 3);
	const seed_evo_stats *s = seed_evo_get_stats(e);
	CHECK(s->best == 9 && s->mean == (1 + 5 + 4 + 9 + 2 + 7) / 6.0 && s->median == (4 + 5) / 2.0);
	CHECK(isnan(s->elite));
	/* Best so far, before the re-evaluation: the round's best. */
	CHECK(seed_evo_best_genome(e, &len)[0] == ga_first_keys[3] && len == 1);
	double re[2][3] = {{4, 4, 4}, {8, 6, 7}};
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 3; k++) {
			CHECK(!seed_evo_complete(e));
			CHECK(seed_evo_report(e, 1, i, re[i][k], 50) == 0);
		}
	CHECK(seed_evo_complete(e));
	CHECK(seed_evo_advance(e, &err) == 0);
	/* The elite: member 5 of round 0 (7 against 4), member 0 from now on. */
	CHECK(s->elite == 7.0);
	CHECK(seed_evo_best_genome(e, &len)[0] == ga_first_keys[5] && len == 1);
	g = seed_evo_current(e);
	CHECK(g->generation == 2 && g->phase == 0 && g->members == 6 && g->genome_len == 2);
	CHECK(grow(g, 0)[0] == ga_first_keys[5] && grow(g, 0)[1] == -1);
	CHECK(g->episodes[0] == 1);
	int from3 = 0, from5 = 0;
	for (int i = 1; i < 6; i++) {
		CHECK(glen(g, i) == 2 && grow(g, i)[1] >= 0);
		CHECK(grow(g, i)[0] == ga_first_keys[3] || grow(g, i)[0] == ga_first_keys[5]);
		from3 += grow(g, i)[0] == ga_first_keys[3];
		from5 += grow(g, i)[0] == ga_first_keys[5];
		for (int j = 1; j < i; j++)
			CHECK(grow(g, i)[1] != grow(g, j)[1]);
	}
	CHECK(from3 + from5 == 5);
	/* The elite's parameters are init(its key), built by the caller's way. */
	float best[MEMBER_P];
	CHECK(seed_evo_best_params(e, best, &err) == 0);
	seed_rng r;
	seed_rng_init(&r, (uint64_t)ga_first_keys[5], SEED_EVO_INIT_STREAM);
	seed_model_init(ref, &r);
	CHECK(memcmp(best, seed_model_params(ref), sizeof best) == 0);
	/* Round 2 with a deadline: members 3, 4, 5 never report.  Member 2 is
	 * best, then member 1; the elite (member 0) third. */
	int64_t row1[2], row2[2];
	memcpy(row1, grow(g, 1), sizeof row1);
	memcpy(row2, grow(g, 2), sizeof row2);
	CHECK(seed_evo_report(e, 2, 0, 1.0, 10) == 0);
	CHECK(seed_evo_report(e, 2, 1, 2.0, 10) == 0);
	CHECK(seed_evo_report(e, 2, 2, 3.0, 10) == 0);
	CHECK(!seed_evo_complete(e));
	CHECK(seed_evo_advance(e, &err) == 0);
	CHECK(s->evaluated == 3 && s->best == 3.0 && s->median == 2.0);
	g = seed_evo_current(e);
	CHECK(g->phase == 1 && g->members == 2 && g->genome_len == 2);
	CHECK(memcmp(grow(g, 0), row2, sizeof row2) == 0 && memcmp(grow(g, 1), row1, sizeof row1) == 0);
	/* The re-evaluation does not beat... any score: the best of the two
	 * becomes the elite even if lower than the old elite's 7 (Uber keeps
	 * the best of the candidates; the old elite competes as a member). */
	for (int k = 0; k < 3; k++) {
		CHECK(seed_evo_report(e, 3, 0, 1.0, 10) == 0);
		CHECK(seed_evo_report(e, 3, 1, 2.0, 10) == 0);
	}
	CHECK(seed_evo_advance(e, &err) == 0);
	CHECK(s->elite == 2.0);
	CHECK(seed_evo_best_genome(e, &len) != NULL && len == 2);
	CHECK(memcmp(seed_evo_best_genome(e, &len), row1, sizeof row1) == 0);
	g = seed_evo_current(e);
	/* Parents of round 4: members 2 and 1 of round 2 (the top T = 2). */
	CHECK(g->genome_len == 3 && memcmp(grow(g, 0), row1, sizeof row1) == 0 && grow(g, 0)[2] == -1);
	for (int i = 1; i < 6; i++) {
		CHECK(glen(g, i) == 3);
		CHECK(memcmp(grow(g, i), row1, sizeof row1) == 0 ||
		      memcmp(grow(g, i), row2, sizeof row2) == 0);
	}
	CHECK(s->generation == 4 && s->episodes == 7 + 6 + 3 + 6);
out:
	seed_evo_free(&e);
	seed_model_free(&m);
	seed_model_free(&ref);
	seed_noise_free(&n);
}

/* Random search: fresh genomes of one key, the elite as member 0. */
static void t_rs(void)
{
	seed_model *m = small_model();
	seed_noise *n = member_table();
	seed_evo *e = NULL;
	if (!m || !n)
		goto out;
	seed_evo_config c = ga_config(SEED_EVO_RS);
	c.population = 4;
	c.elite_candidates = 1;
	CHECK(seed_evo_new(&e, &c, n, m, NULL) == 0);
	if (!e)
		goto out;
	const seed_evo_gen *g = seed_evo_current(e);
	CHECK(g->algo == SEED_EVO_RS && g->members == 4 && g->genome_len == 1);
	int64_t first[4];
	memcpy(first, g->genome, sizeof first);
	for (int i = 0; i < 4; i++)
		CHECK(seed_evo_report(e, 0, i, (double)(i == 2), 1) == 0);
	CHECK(seed_evo_advance(e, NULL) == 0);
	g = seed_evo_current(e);
	CHECK(g->phase == 1 && g->members == 1 && g->genome[0] == first[2] && g->episodes[0] == 3);
	for (int k = 0; k < 3; k++)
		CHECK(seed_evo_report(e, 1, 0, 0.5, 1) == 0);
	CHECK(seed_evo_advance(e, NULL) == 0);
	CHECK(seed_evo_get_stats(e)->elite == 0.5);
	g = seed_evo_current(e);
	CHECK(g->phase == 0 && g->members == 4 && g->genome_len == 1 && g->genome[0] == first[2]);
	for (int i = 1; i < 4; i++)
		for (int j = 0; j < 4; j++)
			CHECK(g->genome[i] != first[j]);
out:
	seed_evo_free(&e);
	seed_model_free(&m);
	seed_noise_free(&n);
}

static void t_config_errors(void)
{
	seed_model *m = small_model();
	seed_noise *n = member_table();
	seed_evo *e = NULL;
	if (!m || !n)
		goto out;
	seed_err err = {{0}};
	seed_evo_config c = es_config();
	c.population = 5;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "even"));
	c = es_config();
	c.sigma = 0;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "sigma"));
	c = es_config();
	c.noise_seed = 4;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "noise table"));
	c = es_config();
	c.lr = -1;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "lr"));
	c = ga_config(SEED_EVO_GA);
	c.truncation = 7;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "truncation"));
	c = ga_config(SEED_EVO_GA);
	c.elite_episodes = 0;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "elite_episodes"));
	c = ga_config(SEED_EVO_GA);
	c.rank = 400; /* a slice of (4+3+2+4+1+4) * 400 + 7 floats > 2000 */
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "noise_size"));
	c = centred_config(SEED_EVO_SNES);
	c.rank = 1;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "snes needs rank 0"));
	c = centred_config(SEED_EVO_ARS);
	c.population = 5;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "even"));
	c = centred_config(SEED_EVO_ARS);
	c.top = ES_POP / 2 + 1;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "top 4"));
	c = centred_config(SEED_EVO_SNES);
	c.lr_sigma = -1;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "lr_sigma"));
	c = centred_config(SEED_EVO_ARS);
	c.reward_shift = INFINITY;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "reward_shift"));
	c = centred_config(SEED_EVO_SNES);
	c.temperature = -1;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "temperature -1"));
	c = centred_config(SEED_EVO_SNES);
	c.temperature = NAN;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "temperature") &&
	      strstr(err.msg, "finite"));
	c = centred_config(SEED_EVO_SNES);
	c.temperature = INFINITY;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "temperature"));
	c = es_config();
	c.temperature = 30;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "temperature 30 is SNES's") &&
	      strstr(err.msg, "es takes none"));
	c = centred_config(SEED_EVO_ARS);
	c.temperature = 1;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "temperature"));
	c = ga_config(SEED_EVO_GA);
	c.centre_init = SEED_EVO_CENTRE_ZERO;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "centre_init zero") &&
	      strstr(err.msg, "ga has no centre"));
	c = ga_config(SEED_EVO_RS);
	c.centre_init = SEED_EVO_CENTRE_ZERO;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "rs has no centre"));
	c = es_config();
	c.centre_init = (seed_evo_centre_init)7;
	CHECK(seed_evo_new(&e, &c, n, m, &err) == -EINVAL && strstr(err.msg, "centre_init 7"));
	CHECK(e == NULL);
	seed_evo_config_default(&c, SEED_EVO_SNES);
	CHECK(c.population == 256 && c.sigma == 0.01 && c.lr == 1.0f && c.lr_sigma == 0);
	CHECK(c.temperature == 0 && c.centre_init == SEED_EVO_CENTRE_MODEL);
	seed_evo_config_default(&c, SEED_EVO_ARS);
	CHECK(c.population == 256 && c.sigma == 0.03 && c.lr == 0.02f && c.top == 0);
	seed_evo_config d;
	seed_evo_config_default(&d, SEED_EVO_GA);
	CHECK(d.algo == SEED_EVO_GA && d.population == 1000 && d.truncation == 20 &&
	      d.elite_candidates == 10 && d.elite_episodes == 30 && d.episodes == 1 &&
	      d.noise_size == (INT64_C(1) << 24));
out:
	seed_model_free(&m);
	seed_noise_free(&n);
}

/* Save a's state, restore it into a fresh b (by hand, or through files
 * when dir is not NULL), then drive both with the same reports: the same
 * rounds and the same parameters. */
static void roundtrip(seed_evo *a, seed_evo *b, const char *dir, int rounds)
{
	seed_checkpoint_tensor t[SEED_EVO_STATE_TENSORS];
	CHECK(seed_evo_state_tensors(a, t, 3) == -ERANGE);
	int nt = seed_evo_state_tensors(a, t, SEED_EVO_STATE_TENSORS);
	CHECK(nt >= 4 && nt <= SEED_EVO_STATE_TENSORS);
	seed_checkpoint ck = {0};
	ck.ntensors = (size_t)nt;
	ck.tensors = t;
	seed_checkpoint *loaded = NULL;
	seed_err err = {{0}};
	if (dir) {
		CHECK_MSG(seed_checkpoint_save(dir, &ck, &err) == 0, "%s", err.msg);
		CHECK_MSG(seed_checkpoint_load(dir, &loaded, &err) == 0, "%s", err.msg);
		if (!loaded)
			return;
	}
	CHECK_MSG(seed_evo_restore(b, loaded ? loaded : &ck, &err) == 0, "%s", err.msg);
	seed_checkpoint_free(&loaded);
	size_t P = seed_evo_current(a)->num_params;
	float *pa = malloc(P * sizeof *pa), *pb = malloc(P * sizeof *pb);
	for (int r = 0; r < rounds && pa && pb; r++) {
		const seed_evo_gen *ga = seed_evo_current(a), *gb = seed_evo_current(b);
		CHECK(ga->generation == gb->generation && ga->phase == gb->phase &&
		      ga->members == gb->members && ga->genome_len == gb->genome_len);
		if (ga->members != gb->members || ga->genome_len != gb->genome_len)
			break;
		CHECK(memcmp(ga->genome, gb->genome,
		             (size_t)ga->members * ga->genome_len * sizeof(int64_t)) == 0);
		CHECK(memcmp(ga->episodes, gb->episodes, (size_t)ga->members * sizeof(int32_t)) == 0);
		for (int i = 0; i < ga->members; i++)
			for (int k = 0; k < ga->episodes[i]; k++) {
				double ret =
				    (double)((ga->genome[(size_t)i * ga->genome_len] >> 20) % 97) + k;
				CHECK(seed_evo_report(a, ga->generation, i, ret, 5) == 0);
				CHECK(seed_evo_report(b, gb->generation, i, ret, 5) == 0);
			}
		CHECK(seed_evo_advance(a, NULL) == 0 && seed_evo_advance(b, NULL) == 0);
		CHECK(seed_evo_best_params(a, pa, NULL) == 0 && seed_evo_best_params(b, pb, NULL) == 0);
		CHECK(memcmp(pa, pb, P * sizeof *pa) == 0);
		const seed_evo_stats *sa = seed_evo_get_stats(a), *sb = seed_evo_get_stats(b);
		CHECK(sa->generation == sb->generation && sa->episodes == sb->episodes &&
		      sa->frames == sb->frames);
		CHECK(sa->best == sb->best && sa->evaluated == sb->evaluated);
	}
	free(pa);
	free(pb);
}

static void t_checkpoint(void)
{
	seed_model *m = small_model();
	seed_noise *n = member_table();
	if (!m || !n)
		goto out;
	const char *dir = tmpdir_new();
	for (int algo = 0; algo < 5; algo++) {
		for (int via_files = 0; via_files < 2; via_files++) {
			seed_evo_config c = algo == SEED_EVO_GA || algo == SEED_EVO_RS
			                        ? ga_config((seed_evo_algo)algo)
			                        : centred_config((seed_evo_algo)algo);
			c.rank = algo == SEED_EVO_SNES ? 0 : via_files; /* low rank too */
			set_centre(m);
			seed_evo *a = NULL, *b = NULL;
			CHECK(seed_evo_new(&a, &c, n, m, NULL) == 0);
			CHECK(seed_evo_new(&b, &c, n, m, NULL) == 0);
			if (!a || !b)
				continue;
			/* Two rounds in a (the GA is then in phase 1, ES has Adam
			 * state), one report into the third that is forgotten. */
			for (int r = 0; r < 2; r++) {
				const seed_evo_gen *g = seed_evo_current(a);
				for (int i = 0; i < g->members; i++)
					for (int k = 0; k < g->episodes[i]; k++)
						seed_evo_report(a, g->generation, i,
						                (double)((i * 37 + r * 11) % 13), 7);
				CHECK(seed_evo_advance(a, NULL) == 0);
			}
			CHECK(seed_evo_report(a, seed_evo_current(a)->generation, 0, 1.0, 1) == 0);
			/* The report is not saved: start a's round afresh too, by
			 * restoring a from its own state first. */
			seed_checkpoint_tensor t[SEED_EVO_STATE_TENSORS];
			int nt = seed_evo_state_tensors(a, t, SEED_EVO_STATE_TENSORS);
			seed_checkpoint self = {0};
			self.ntensors = (size_t)nt;
			self.tensors = t;
			/* Views into a itself: restore copies before it frees. */
			seed_evo *tmp = NULL;
			CHECK(seed_evo_new(&tmp, &c, n, m, NULL) == 0);
			if (tmp) {
				CHECK(seed_evo_restore(tmp, &self, NULL) == 0);
				seed_evo_free(&a);
				a = tmp;
			}
			roundtrip(a, b, via_files ? dir : NULL, 4);
			seed_evo_free(&a);
			seed_evo_free(&b);
		}
	}
	/* Errors: another algorithm, a missing tensor. */
	seed_evo_config c = es_config();
	seed_evo *es = NULL, *ga = NULL;
	seed_evo_config gc = ga_config(SEED_EVO_GA);
	CHECK(seed_evo_new(&es, &c, n, m, NULL) == 0);
	CHECK(seed_evo_new(&ga, &gc, n, m, NULL) == 0);
	if (es && ga) {
		seed_checkpoint_tensor t[SEED_EVO_STATE_TENSORS];
		int nt = seed_evo_state_tensors(es, t, SEED_EVO_STATE_TENSORS);
		seed_checkpoint ck = {0};
		ck.ntensors = (size_t)nt;
		ck.tensors = t;
		seed_err err = {{0}};
		CHECK(seed_evo_restore(ga, &ck, &err) == -EINVAL && strstr(err.msg, "es, population 6"));
		/* The same run on another noise table. */
		seed_noise *n4 = NULL;
		seed_evo *es4 = NULL;
		seed_evo_config c4 = es_config();
		c4.noise_seed = 4;
		CHECK(seed_noise_new(&n4, 4, MEMBER_NOISE_SIZE, NULL) == 0);
		CHECK(n4 && seed_evo_new(&es4, &c4, n4, m, NULL) == 0);
		if (es4)
			CHECK(seed_evo_restore(es4, &ck, &err) == -EINVAL &&
			      strstr(err.msg, "noise table is (seed 3"));
		seed_evo_free(&es4);
		seed_noise_free(&n4);
		ck.ntensors = 1; /* evo.state only */
		CHECK(seed_evo_restore(es, &ck, &err) == -ENOENT && strstr(err.msg, "evo.scores"));
		/* ga unchanged by the failed restore */
		CHECK(seed_evo_current(ga)->algo == SEED_EVO_GA && seed_evo_current(ga)->members == 6);
	}
	seed_evo_free(&es);
	seed_evo_free(&ga);
	tmpdir_remove(dir);
out:
	seed_model_free(&m);
	seed_noise_free(&n);
}

int main(void)
{
	TAP_RUN(t_algo_names);
	TAP_RUN(t_centered_ranks);
	TAP_RUN(t_layout);
	TAP_RUN(t_member_es);
	TAP_RUN(t_member_ga_rs);
	TAP_RUN(t_member_errors);
	TAP_RUN(t_member_ars);
	TAP_RUN(t_member_snes);
	TAP_RUN(t_member_snes_errors);
	TAP_RUN(t_es_update);
	TAP_RUN(t_snes_update);
	TAP_RUN(t_ars_update);
	TAP_RUN(t_centre_init);
	TAP_RUN(t_no_episodes);
	TAP_RUN(t_ga_selection);
	TAP_RUN(t_rs);
	TAP_RUN(t_config_errors);
	TAP_RUN(t_checkpoint);
	return tap_done();
}
