/* tests/unit/evo/test_evo_frame.c: generations as generation frames (seed/evo_frame.h):
 * round trips through the wire and JSON (with and without the optional
 * action noise and observation statistics), frames packed by Python (the
 * golden frames of tests/golden/make_golden.py) read back to the values Python
 * wrote, and every refusal of both directions with its message; snes
 * generations (their sigmas) and ars ones as well. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "seed/evo_frame.h"
#include "seed/frame.h"
#include "tap.h"
/* after seed/frame.h: it uses the SEED_VALUE_* and error codes */
#include "golden_frames.h"

static bool has(const char *s, const char *part)
{
	return strstr(s, part) != NULL;
}

/* An es round of 4 members (antithetic pairs) of a 3-parameter model. */
static int64_t es_genome[4] = {5, 5, 9, 9};
static float es_sign[4] = {1, -1, 1, -1};
static int32_t es_episodes[4] = {1, 1, 1, 2};
static float es_centre[3] = {0.5f, -1.25f, 3e-7f};
/* A snes round's per-parameter sigmas for that model, and bad ones. */
static float snes_sigmas[3] = {0.05f, 0.0f, 1.5e-3f}, nan_sigmas[3] = {0.05f, NAN, 0.0f};
static float neg_sigmas[3] = {0.05f, 0.0f, -0.25f};

static seed_evo_gen es_gen(void)
{
	return (seed_evo_gen){.algo = SEED_EVO_ES,
	                      .generation = 7,
	                      .phase = 0,
	                      .noise_seed = UINT64_C(1) << 62,
	                      .noise_size = 1 << 20,
	                      .sigma = 0.02,
	                      .rank = 2,
	                      .members = 4,
	                      .genome_len = 1,
	                      .genome = es_genome,
	                      .sign = es_sign,
	                      .episodes = es_episodes,
	                      .centre = es_centre,
	                      .num_params = 3};
}

/* A GA round: 3 members, genomes of up to 3 keys, -1 padding. */
static int64_t ga_genome[3][3] = {{4, 8, 15}, {16, -1, -1}, {0, 23, -1}};
static int32_t ga_episodes[3] = {30, 30, 1};

static seed_evo_gen ga_gen(void)
{
	return (seed_evo_gen){.algo = SEED_EVO_GA,
	                      .generation = 0,
	                      .phase = 1,
	                      .noise_seed = 0,
	                      .noise_size = 1,
	                      .sigma = 0.002,
	                      .rank = 0,
	                      .members = 3,
	                      .genome_len = 3,
	                      .genome = &ga_genome[0][0],
	                      .episodes = ga_episodes};
}

static void same_gen(const seed_evo_gen *a, const seed_evo_gen *b)
{
	CHECK(a->algo == b->algo);
	CHECK(a->generation == b->generation && a->phase == b->phase);
	CHECK(a->noise_seed == b->noise_seed && a->noise_size == b->noise_size);
	CHECK(a->sigma == b->sigma && a->rank == b->rank);
	CHECK(a->members == b->members && a->genome_len == b->genome_len);
	size_t ML = (size_t)a->members * (size_t)a->genome_len;
	CHECK(memcmp(a->genome, b->genome, ML * 8) == 0);
	CHECK(memcmp(a->episodes, b->episodes, (size_t)a->members * 4) == 0);
	CHECK(!a->sign == !b->sign);
	if (a->sign && b->sign)
		CHECK(memcmp(a->sign, b->sign, (size_t)a->members * 4) == 0);
	CHECK(!a->centre == !b->centre && a->num_params == b->num_params);
	if (a->centre && b->centre)
		CHECK(memcmp(a->centre, b->centre, a->num_params * 4) == 0);
	CHECK(!a->sigmas == !b->sigmas);
	if (a->sigmas && b->sigmas)
		CHECK(memcmp(a->sigmas, b->sigmas, a->num_params * 4) == 0);
	CHECK(a->action_noise == b->action_noise);
	CHECK(a->obs_dim == b->obs_dim && !a->obs_mean == !b->obs_mean && !a->obs_var == !b->obs_var);
	if (a->obs_mean && b->obs_mean && a->obs_var && b->obs_var) {
		CHECK(memcmp(a->obs_mean, b->obs_mean, (size_t)a->obs_dim * 4) == 0);
		CHECK(memcmp(a->obs_var, b->obs_var, (size_t)a->obs_dim * 4) == 0);
	}
}

/* to_frame, then back three ways: the built frame itself, the wire, JSON. */
static void roundtrip(const seed_evo_gen *g)
{
	seed_err err = {""};
	seed_frame f, back, fj;
	int rc = seed_evo_gen_to_frame(g, 42, &f, &err);
	CHECK_MSG(rc == 0, "to_frame: %s", err.msg);
	if (rc)
		return;
	CHECK(f.type == SEED_FRAME_GENERATION && seed_frame_int(&f, "run", -1) == 42);
	/* The optional fields only when they say something. */
	CHECK(!seed_frame_get(&f, "action_noise") == !(g->action_noise > 0));
	CHECK(!seed_frame_get(&f, "obs_mean") == !(g->obs_dim > 0));
	CHECK(!seed_frame_get(&f, "obs_var") == !(g->obs_dim > 0));
	CHECK(!seed_frame_get(&f, "sigmas") == !g->sigmas);
	const char *algo = NULL;
	size_t algo_len = 0;
	CHECK(seed_frame_str(&f, "algorithm", &algo, &algo_len) == 0 &&
	      algo_len == strlen(seed_evo_algo_name(g->algo)) &&
	      memcmp(algo, seed_evo_algo_name(g->algo), algo_len) == 0);
	/* Built frames point at g's arrays, aligned: read in place. */
	seed_evo_gen x;
	rc = seed_evo_gen_from_frame(&f, &x, &err);
	CHECK_MSG(rc == 0, "from_frame: %s", err.msg);
	if (rc == 0) {
		same_gen(g, &x);
		CHECK(x.genome == g->genome && x.episodes == g->episodes);
	}
	seed_buf m = {0}, js = {0};
	seed_evo_gen_copy c = {0};
	CHECK(seed_frame_encode(&f, &m, &err) == 0);
	CHECK(seed_frame_decode(&back, m.data, m.len, &err) == 0);
	rc = seed_evo_gen_from_frame_copy(&back, &c, &err);
	CHECK_MSG(rc == 0, "from_frame_copy: %s", err.msg);
	if (rc == 0)
		same_gen(g, &c.gen);
	CHECK(seed_frame_to_json(&f, &js, &err) == 0);
	rc = seed_frame_from_json(&fj, (const char *)js.data, js.len, &err);
	CHECK_MSG(rc == 0, "from_json: %s", err.msg);
	if (rc == 0) {
		seed_evo_gen_copy c2 = {0};
		CHECK(seed_evo_gen_from_frame_copy(&fj, &c2, &err) == 0);
		same_gen(g, &c2.gen);
		seed_evo_gen_copy_free(&c2);
		seed_frame_clear(&fj);
	}
	seed_evo_gen_copy_free(&c);
	CHECK(c.mem == NULL);
	seed_buf_free(&m);
	seed_buf_free(&js);
}

static void t_roundtrip_es(void)
{
	seed_evo_gen g = es_gen();
	roundtrip(&g);
}

static void t_roundtrip_ga(void)
{
	seed_evo_gen g = ga_gen();
	roundtrip(&g);
	g.algo = SEED_EVO_RS;
	g.genome_len = 1;
	int64_t keys[3] = {1, 2, 3};
	g.genome = keys;
	roundtrip(&g);
}

/* Box members' action noise and the learner's observation statistics, with
 * and without each other, es and ga. */
static float box_mean[4] = {0.5f, -1e-3f, 1e6f, -7.25f}, box_var[4] = {1.0f, 0.0f, 3e9f, 0.0625f};

static void t_roundtrip_box(void)
{
	seed_evo_gen g = es_gen();
	g.action_noise = 0.3;
	roundtrip(&g);
	g.obs_dim = 4;
	g.obs_mean = box_mean;
	g.obs_var = box_var;
	roundtrip(&g);
	g.action_noise = 0;
	roundtrip(&g);
	g = ga_gen();
	g.obs_dim = 1;
	g.obs_mean = box_mean + 3;
	g.obs_var = box_var + 3;
	g.action_noise = 1e-9;
	roundtrip(&g);
}

/* The other centred algorithms: snes (with its sigmas, full rank) and ars
 * (an es round under another name, full and low rank). */
static void t_roundtrip_snes_ars(void)
{
	seed_evo_gen g = es_gen();
	g.algo = SEED_EVO_SNES;
	g.rank = 0;
	g.sigmas = snes_sigmas;
	g.sigma = (0.05 + 0.0 + 1.5e-3) / 3; /* their mean, informational */
	roundtrip(&g);
	g.obs_dim = 4, g.obs_mean = box_mean, g.obs_var = box_var, g.action_noise = 0.2;
	roundtrip(&g);
	g = es_gen();
	g.algo = SEED_EVO_ARS;
	roundtrip(&g);
	g.rank = 0;
	roundtrip(&g);
}

/* The frame Python packed (tests/golden/make_golden.py), read back to the
 * values written there. */
static void t_python_frame(void)
{
	const struct golden_frame *gf = NULL;
	for (size_t i = 0; i < sizeof golden_frames / sizeof golden_frames[0]; i++)
		if (strcmp(golden_frames[i].name, "generation") == 0)
			gf = &golden_frames[i];
	CHECK(gf != NULL);
	if (!gf)
		return;
	seed_frame f;
	seed_err err;
	CHECK(seed_frame_decode(&f, gf->bytes, gf->len, &err) == 0);
	seed_evo_gen_copy c = {0};
	int rc = seed_evo_gen_from_frame_copy(&f, &c, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	const seed_evo_gen *g = &c.gen;
	CHECK(g->algo == SEED_EVO_ES && g->generation == 12 && g->phase == 0);
	CHECK(g->noise_seed == (UINT64_C(1) << 40) + 7 && g->noise_size == 1000003);
	CHECK(g->sigma == 0.02 && g->rank == 0);
	CHECK(g->members == 4 && g->genome_len == 1);
	CHECK(g->genome[0] == 17 && g->genome[1] == 17 && g->genome[2] == INT64_C(1) << 62 &&
	      g->genome[3] == 0);
	CHECK(g->episodes[0] == 1 && g->episodes[2] == 2 && g->episodes[3] == 1);
	CHECK(g->sign[0] == 1 && g->sign[1] == -1 && g->sign[2] == 1 && g->sign[3] == -1);
	CHECK(g->num_params == 5 && g->centre[0] == 0.5f && g->centre[1] == -0.25f && g->centre[3] == 1e-3f &&
	      g->centre[4] == 3.0f);
	/* The optional fields a server reads itself. */
	CHECK(seed_frame_int(&f, "episode_cap", 0) == 500);
	const seed_value *gv = seed_frame_get(&f, "greedy");
	CHECK(gv && gv->kind == SEED_VALUE_BOOL && !gv->u.b);
	CHECK(g->action_noise == 0 && g->obs_dim == 0 && !g->obs_mean && !g->obs_var);
	seed_evo_gen_copy_free(&c);
	/* The evolution of Box members: action noise and statistics. */
	gf = NULL;
	for (size_t i = 0; i < sizeof golden_frames / sizeof golden_frames[0]; i++)
		if (strcmp(golden_frames[i].name, "generation_box") == 0)
			gf = &golden_frames[i];
	CHECK(gf != NULL);
	if (gf) {
		CHECK(seed_frame_decode(&f, gf->bytes, gf->len, &err) == 0);
		rc = seed_evo_gen_from_frame_copy(&f, &c, &err);
		CHECK_MSG(rc == 0, "%s", err.msg);
		if (rc == 0) {
			CHECK(g->algo == SEED_EVO_ES && g->generation == 30 && g->rank == 2 &&
			      g->members == 2);
			CHECK(g->action_noise == 0.1);
			CHECK(g->obs_dim == 3 && g->obs_mean[0] == 0.5f && g->obs_mean[1] == -3.25f &&
			      g->obs_mean[2] == 1e-3f);
			CHECK(g->obs_var[0] == 2.0f && g->obs_var[1] == 0.0f && g->obs_var[2] == 1e4f);
			CHECK((uintptr_t)g->obs_mean % 4 == 0 && (uintptr_t)g->obs_var % 4 == 0);
		}
		seed_evo_gen_copy_free(&c);
	}
	/* And the bad generation frames Python packed are refused by the
	 * schema (their messages are test_frame's business). */
	int nbad = 0;
	for (size_t i = 0; i < sizeof golden_bad / sizeof golden_bad[0]; i++) {
		if (strncmp(golden_bad[i].name, "generation_", 11) != 0)
			continue;
		nbad++;
		seed_frame b;
		CHECK(seed_frame_decode(&b, golden_bad[i].bytes, golden_bad[i].len, &err) == -SEED_EFRAME);
	}
	CHECK(nbad >= 10);
}

struct bad_gen {
	const char *name;
	void (*edit)(seed_evo_gen *g);
	const char *parts[3];
};

static int64_t key_minus2[4] = {5, 5, -2, 9}, first_pad[4] = {5, -1, 9, 9};
static int64_t ga_after_pad[3][3] = {{4, -1, 15}, {16, -1, -1}, {0, 23, -1}};
static int64_t ga_minus2[3][3] = {{4, 8, 15}, {16, -2, -1}, {0, 23, -1}};
static int32_t zero_episodes[4] = {1, 1, 0, 1};
static float half_sign[4] = {1, -1, 0.5f, -1};

static void e_algo(seed_evo_gen *g)
{
	g->algo = (seed_evo_algo)7;
}
static void e_generation(seed_evo_gen *g)
{
	g->generation = -1;
}
static void e_phase(seed_evo_gen *g)
{
	g->phase = 2;
}
static void e_noise_seed(seed_evo_gen *g)
{
	g->noise_seed = UINT64_C(1) << 63;
}
static void e_noise_size(seed_evo_gen *g)
{
	g->noise_size = 0;
}
static void e_noise_size_big(seed_evo_gen *g)
{
	g->noise_size = INT64_C(1) << 31;
}
static void e_sigma_nan(seed_evo_gen *g)
{
	g->sigma = NAN;
}
static void e_sigma_neg(seed_evo_gen *g)
{
	g->sigma = -0.5;
}
static void e_rank(seed_evo_gen *g)
{
	g->rank = -1;
}
static void e_members(seed_evo_gen *g)
{
	g->members = 0;
}
static void e_es_columns(seed_evo_gen *g)
{
	g->genome_len = 2, g->members = 2;
}
static void e_es_sign(seed_evo_gen *g)
{
	g->sign = NULL;
}
static void e_es_centre(seed_evo_gen *g)
{
	g->centre = NULL;
}
static void e_es_first_pad(seed_evo_gen *g)
{
	g->genome = first_pad;
}
static void e_es_key(seed_evo_gen *g)
{
	g->genome = key_minus2;
}
static void e_episodes(seed_evo_gen *g)
{
	g->episodes = zero_episodes;
}
static void e_sign_value(seed_evo_gen *g)
{
	g->sign = half_sign;
}
static void e_ga_sign(seed_evo_gen *g)
{
	*g = ga_gen(), g->sign = es_sign;
}
static void e_ga_centre(seed_evo_gen *g)
{
	*g = ga_gen(), g->centre = es_centre, g->num_params = 3;
}
static void e_ga_after_pad(seed_evo_gen *g)
{
	*g = ga_gen(), g->genome = &ga_after_pad[0][0];
}
static void e_ga_key(seed_evo_gen *g)
{
	*g = ga_gen(), g->genome = &ga_minus2[0][0];
}
static void e_snes_no_sigmas(seed_evo_gen *g)
{
	g->algo = SEED_EVO_SNES, g->rank = 0;
}
static void e_snes_rank(seed_evo_gen *g)
{
	g->algo = SEED_EVO_SNES, g->sigmas = snes_sigmas; /* es_gen's rank 2 */
}
static void e_snes_sigmas_nan(seed_evo_gen *g)
{
	g->algo = SEED_EVO_SNES, g->rank = 0, g->sigmas = nan_sigmas;
}
static void e_snes_sigmas_neg(seed_evo_gen *g)
{
	g->algo = SEED_EVO_SNES, g->rank = 0, g->sigmas = neg_sigmas;
}
static void e_snes_sign(seed_evo_gen *g)
{
	g->algo = SEED_EVO_SNES, g->rank = 0, g->sigmas = snes_sigmas, g->sign = NULL;
}
static void e_snes_columns(seed_evo_gen *g)
{
	g->algo = SEED_EVO_SNES, g->rank = 0, g->sigmas = snes_sigmas, g->genome_len = 2, g->members = 2;
}
static void e_ars_centre(seed_evo_gen *g)
{
	g->algo = SEED_EVO_ARS, g->centre = NULL;
}
static void e_ars_sign_value(seed_evo_gen *g)
{
	g->algo = SEED_EVO_ARS, g->sign = half_sign;
}
static void e_es_sigmas(seed_evo_gen *g)
{
	g->sigmas = snes_sigmas;
}
static void e_ars_sigmas(seed_evo_gen *g)
{
	g->algo = SEED_EVO_ARS, g->sigmas = snes_sigmas;
}
static void e_ga_sigmas(seed_evo_gen *g)
{
	*g = ga_gen(), g->sigmas = snes_sigmas, g->num_params = 3;
}
static float nan_var[4] = {1.0f, NAN, 1.0f, 1.0f}, neg_var[4] = {1.0f, 1.0f, 1.0f, -0.5f};
static float inf_mean[4] = {0.0f, 0.0f, -INFINITY, 0.0f};
static void e_action_noise_neg(seed_evo_gen *g)
{
	g->action_noise = -0.25;
}
static void e_action_noise_nan(seed_evo_gen *g)
{
	g->action_noise = NAN;
}
static void stats(seed_evo_gen *g, int64_t D, const float *mean, const float *var)
{
	g->obs_dim = D, g->obs_mean = mean, g->obs_var = var;
}
static void e_obs_mean_missing(seed_evo_gen *g)
{
	stats(g, 4, NULL, box_var);
}
static void e_obs_var_missing(seed_evo_gen *g)
{
	stats(g, 4, box_mean, NULL);
}
static void e_obs_dim_zero(seed_evo_gen *g)
{
	stats(g, 0, box_mean, box_var);
}
static void e_obs_dim_negative(seed_evo_gen *g)
{
	stats(g, -3, NULL, NULL);
}
static void e_obs_var_nan(seed_evo_gen *g)
{
	stats(g, 4, box_mean, nan_var);
}
static void e_obs_var_negative(seed_evo_gen *g)
{
	stats(g, 4, box_mean, neg_var);
}
static void e_obs_mean_inf(seed_evo_gen *g)
{
	stats(g, 4, inf_mean, box_var);
}

static const struct bad_gen bad_gens[] = {
    {"algorithm", e_algo, {"field 'algorithm'", "7 is not an algorithm"}},
    {"generation", e_generation, {"field 'generation': -1, expected >= 0"}},
    {"phase", e_phase, {"field 'phase': 2, expected 0 or 1"}},
    {"noise_seed", e_noise_seed, {"field 'noise_seed': 9223372036854775808, expected below 2^63"}},
    {"noise_size", e_noise_size, {"field 'noise_size': 0, expected in [1, 2^31 - 1]"}},
    {"noise_size_big", e_noise_size_big, {"field 'noise_size': 2147483648"}},
    {"sigma_nan", e_sigma_nan, {"field 'sigma': nan, expected a finite value >= 0"}},
    {"sigma_negative", e_sigma_neg, {"field 'sigma': -0.5"}},
    {"rank", e_rank, {"field 'rank': -1, expected >= 0"}},
    {"members", e_members, {"field 'genome': 0 members"}},
    {"es_columns", e_es_columns, {"field 'genome': 2 columns, expected 1 for es"}},
    {"es_sign", e_es_sign, {"field 'sign': missing"}},
    {"es_centre", e_es_centre, {"field 'centre': missing"}},
    {"first_key_pad", e_es_first_pad, {"field 'genome': member 1: first key -1, expected >= 0"}},
    {"es_key_negative", e_es_key, {"member 2: first key -2"}},
    {"episodes", e_episodes, {"field 'episodes': member 2 wants 0, expected >= 1"}},
    {"sign_value", e_sign_value, {"field 'sign': member 2: 0.5, expected +1 or -1"}},
    {"ga_sign", e_ga_sign, {"field 'sign': only es, snes and ars generations have signs, not ga"}},
    {"ga_centre", e_ga_centre, {"field 'centre': only es, snes and ars generations have a centre, not ga"}},
    {"snes_sigmas_missing", e_snes_no_sigmas, {"field 'sigmas': missing (snes needs each parameter's std)"}},
    {"snes_rank", e_snes_rank, {"field 'rank': 2, expected 0 for snes"}},
    {"snes_sigmas_nan",
     e_snes_sigmas_nan,
     {"field 'sigmas': element 1 is nan, expected a finite value >= 0"}},
    {"snes_sigmas_negative", e_snes_sigmas_neg, {"field 'sigmas': element 2 is -0.25"}},
    {"snes_sign", e_snes_sign, {"field 'sign': missing (snes needs each member's sign)"}},
    {"snes_columns", e_snes_columns, {"field 'genome': 2 columns, expected 1 for snes"}},
    {"ars_centre", e_ars_centre, {"field 'centre': missing (ars needs the centre)"}},
    {"ars_sign_value", e_ars_sign_value, {"field 'sign': member 2: 0.5, expected +1 or -1"}},
    {"es_sigmas", e_es_sigmas, {"field 'sigmas': only snes generations have sigmas, not es"}},
    {"ars_sigmas", e_ars_sigmas, {"field 'sigmas': only snes generations have sigmas, not ars"}},
    {"ga_sigmas", e_ga_sigmas, {"field 'sigmas': only snes generations have sigmas, not ga"}},
    {"ga_key_after_pad", e_ga_after_pad, {"field 'genome': member 0: key 15 at column 2 after -1"}},
    {"ga_key_negative", e_ga_key, {"member 1: key -2 at column 1 (keys are >= 0, -1 pads"}},
    {"action_noise_negative",
     e_action_noise_neg,
     {"field 'action_noise': -0.25, expected a finite value >= 0"}},
    {"action_noise_nan", e_action_noise_nan, {"field 'action_noise': nan"}},
    {"obs_mean_missing", e_obs_mean_missing, {"field 'obs_mean': missing with obs_dim 4"}},
    {"obs_var_missing", e_obs_var_missing, {"field 'obs_var': missing with obs_dim 4"}},
    {"obs_dim_zero", e_obs_dim_zero, {"field 'obs_mean': present with obs_dim 0"}},
    {"obs_dim_negative", e_obs_dim_negative, {"field 'obs_mean': obs_dim -3"}},
    {"obs_var_nan", e_obs_var_nan, {"field 'obs_var': element 1 is nan, expected a finite value >= 0"}},
    {"obs_var_negative", e_obs_var_negative, {"field 'obs_var': element 3 is -0.5"}},
    {"obs_mean_inf", e_obs_mean_inf, {"field 'obs_mean': element 2 is -inf, expected finite"}},
};

/* Every rule, refused by to_frame with its message; and by from_frame on
 * a frame that carries it (built field by field: to_frame would not). */
static void t_refusals(void)
{
	for (size_t i = 0; i < sizeof bad_gens / sizeof bad_gens[0]; i++) {
		const struct bad_gen *b = &bad_gens[i];
		seed_evo_gen g = es_gen();
		b->edit(&g);
		seed_err err = {""};
		seed_frame f;
		f.type = SEED_FRAME_STEP; /* untouched on error: not made a generation frame */
		f.nfields = 0;
		int rc = seed_evo_gen_to_frame(&g, 0, &f, &err);
		CHECK_MSG(rc == -EINVAL, "%s: to_frame %d (%s)", b->name, rc, err.msg);
		CHECK_MSG(has(err.msg, "generation frame: "), "%s: '%s'", b->name, err.msg);
		for (int k = 0; k < 3 && b->parts[k]; k++)
			CHECK_MSG(has(err.msg, b->parts[k]), "%s: '%s' lacks '%s'", b->name, err.msg,
			          b->parts[k]);
		CHECK(f.type == SEED_FRAME_STEP);
	}
	seed_evo_gen g = es_gen();
	seed_err err = {""};
	seed_frame f;
	CHECK(seed_evo_gen_to_frame(&g, -1, &f, &err) == -EINVAL && has(err.msg, "field 'run': -1"));
	CHECK(seed_evo_gen_to_frame(&g, INT64_C(1) << 32, &f, &err) == -EINVAL &&
	      has(err.msg, "field 'run': 4294967296, expected in [0, 2^32)"));
}

/* A good es frame built by hand, then edited: what from_frame refuses
 * beyond the schema. */
static void hand_frame(seed_frame *f, const void *genome, int64_t L, const float *sign,
                       const int32_t *episodes, const char *algo)
{
	int64_t M = 4, ML[2] = {4 / L, L}, P = 3;
	seed_frame_init(f, SEED_FRAME_GENERATION);
	seed_frame_set_int(f, "run", 0);
	seed_frame_set_int(f, "generation", 3);
	seed_frame_set_int(f, "phase", 0);
	seed_frame_set_str(f, "algorithm", algo);
	seed_frame_set_int(f, "noise_seed", 1);
	seed_frame_set_int(f, "noise_size", 100);
	seed_frame_set_int(f, "sigma", 1); /* an int for a float: accepted */
	seed_frame_set_int(f, "rank", 0);
	seed_frame_set_tensor(f, "genome", seed_tensor_view((void *)genome, SEED_DTYPE_I64, 2, ML));
	M = ML[0];
	seed_frame_set_tensor(f, "episodes", seed_tensor_view((void *)episodes, SEED_DTYPE_I32, 1, &M));
	if (sign)
		seed_frame_set_tensor(f, "sign", seed_tensor_view((void *)sign, SEED_DTYPE_F32, 1, &M));
	seed_frame_set_tensor(f, "centre", seed_tensor_view(es_centre, SEED_DTYPE_F32, 1, &P));
}

static void t_from_frame_refusals(void)
{
	seed_frame f;
	seed_evo_gen g, untouched = {.generation = 99};
	seed_err err = {""};
	hand_frame(&f, es_genome, 1, es_sign, es_episodes, "es");
	g = untouched;
	CHECK(seed_evo_gen_from_frame(&f, &g, &err) == 0 && g.sigma == 1.0 && g.generation == 3);
	struct {
		const int64_t *genome;
		int64_t L;
		const float *sign;
		const int32_t *episodes;
		const char *algo, *part;
	} cases[] = {
	    {key_minus2, 1, es_sign, es_episodes, "es", "member 2: first key -2"},
	    {es_genome, 1, NULL, es_episodes, "es", "field 'sign': missing"},
	    {es_genome, 1, half_sign, es_episodes, "es", "member 2: 0.5, expected +1 or -1"},
	    {es_genome, 1, es_sign, zero_episodes, "es", "member 2 wants 0"},
	    {es_genome, 2, NULL, es_episodes, "es", "2 columns, expected 1 for es"},
	    {es_genome, 1, NULL, es_episodes, "rs",
	     "only es, snes and ars generations have a centre, not rs"},
	    {es_genome, 1, NULL, es_episodes, "ars", "field 'sign': missing (ars needs each member's sign)"},
	    {es_genome, 1, es_sign, es_episodes, "snes", "field 'sigmas': missing (snes needs"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		hand_frame(&f, cases[i].genome, cases[i].L, cases[i].sign, cases[i].episodes, cases[i].algo);
		g = untouched;
		int rc = seed_evo_gen_from_frame(&f, &g, &err);
		CHECK_MSG(rc == -EINVAL && has(err.msg, cases[i].part), "case %zu: %d '%s'", i, rc, err.msg);
		CHECK(g.generation == 99);
		/* The copy refuses the same and keeps what it had. */
		seed_evo_gen_copy c = {0};
		hand_frame(&f, es_genome, 1, es_sign, es_episodes, "es");
		CHECK(seed_evo_gen_from_frame_copy(&f, &c, &err) == 0);
		hand_frame(&f, cases[i].genome, cases[i].L, cases[i].sign, cases[i].episodes, cases[i].algo);
		CHECK(seed_evo_gen_from_frame_copy(&f, &c, &err) == -EINVAL && has(err.msg, cases[i].part));
		CHECK(c.gen.generation == 3 && c.gen.members == 4 && c.gen.genome[3] == 9);
		seed_evo_gen_copy_free(&c);
	}
	/* Another type; a frame the schema refuses. */
	seed_frame_init(&f, SEED_FRAME_PARAMS);
	CHECK(seed_evo_gen_from_frame(&f, &g, &err) == -SEED_ETYPE &&
	      has(err.msg, "params frame: expected a generation frame"));
	hand_frame(&f, es_genome, 1, es_sign, es_episodes, "es");
	seed_frame_set_str(&f, "algorithm", "cma");
	CHECK(seed_evo_gen_from_frame(&f, &g, &err) == -SEED_EFRAME &&
	      has(err.msg, "generation frame: field 'algorithm': 'cma', expected one of 'es', 'ga', 'rs', "
	                   "'snes', 'ars'"));
	/* Data not aligned for its dtype: refused in place, copied fine. */
	_Alignas(8) unsigned char raw[8 * 4 + 1];
	memcpy(raw + 1, es_genome, sizeof es_genome);
	hand_frame(&f, raw + 1, 1, es_sign, es_episodes, "es");
	CHECK(seed_evo_gen_from_frame(&f, &g, &err) == -EINVAL &&
	      has(err.msg, "field 'genome': data at an address not aligned for i64"));
	seed_evo_gen_copy c = {0};
	CHECK(seed_evo_gen_from_frame_copy(&f, &c, &err) == 0 && c.gen.genome[2] == 9 &&
	      (uintptr_t)c.gen.genome % 8 == 0);
	seed_evo_gen_copy_free(&c);
	seed_evo_gen_copy_free(NULL);
}

/* The optional fields' refusals on frames built field by field: the
 * schema's (obs_mean without obs_var, shapes that differ, a negative
 * action_noise) and evo_frame's (a NaN var, a negative one), each naming
 * the field, by both readers; unaligned statistics copied fine. */
static void t_from_frame_box(void)
{
	seed_frame f;
	seed_evo_gen g;
	seed_err err = {""};
	int64_t D = 4, D3 = 3;
	struct {
		const char *drop; /* or NULL */
		int64_t var_D;
		const float *var;
		double action_noise;
		int code;
		const char *part;
	} cases[] = {
	    {"obs_var", 4, box_var, 0, -SEED_EFRAME,
	     "generation frame: field 'obs_mean': present without 'obs_var' (they come together or not at "
	     "all)"},
	    {"obs_mean", 4, box_var, 0, -SEED_EFRAME,
	     "generation frame: field 'obs_var': present without 'obs_mean'"},
	    {NULL, 3, box_var, 0, -SEED_EFRAME,
	     "generation frame: field 'obs_var': shape [3], expected [D]: dimension 0 is 3, but D = 4 (from "
	     "'obs_mean')"},
	    {NULL, 4, box_var, -0.5, -SEED_EFRAME,
	     "generation frame: field 'action_noise': -0.5, expected a finite value >= 0"},
	    {NULL, 4, nan_var, 0, -EINVAL,
	     "generation frame: field 'obs_var': element 1 is nan, expected a finite value >= 0"},
	    {NULL, 4, neg_var, 0, -EINVAL, "generation frame: field 'obs_var': element 3 is -0.5"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		hand_frame(&f, es_genome, 1, es_sign, es_episodes, "es");
		seed_frame_set_tensor(&f, "obs_mean", seed_tensor_view(box_mean, SEED_DTYPE_F32, 1, &D));
		seed_frame_set_tensor(&f, "obs_var",
		                      seed_tensor_view((void *)cases[i].var, SEED_DTYPE_F32, 1,
		                                       cases[i].var_D == 4 ? &D : &D3));
		if (cases[i].action_noise)
			seed_frame_set_float(&f, "action_noise", cases[i].action_noise);
		if (cases[i].drop) {
			/* Rebuilt without the field. */
			seed_frame h;
			seed_frame_init(&h, SEED_FRAME_GENERATION);
			for (int k = 0; k < f.nfields; k++)
				if (strcmp(f.fields[k].name, cases[i].drop) != 0)
					h.fields[h.nfields++] = f.fields[k];
			f = h;
		}
		g.generation = 99;
		int rc = seed_evo_gen_from_frame(&f, &g, &err);
		CHECK_MSG(rc == cases[i].code && has(err.msg, cases[i].part), "case %zu: %d '%s'", i, rc,
		          err.msg);
		CHECK(g.generation == 99);
		seed_evo_gen_copy c = {0};
		rc = seed_evo_gen_from_frame_copy(&f, &c, &err);
		CHECK_MSG(rc == cases[i].code && has(err.msg, cases[i].part), "copy, case %zu: %d '%s'", i,
		          rc, err.msg);
		CHECK(c.mem == NULL);
	}
	/* Statistics at an address not aligned for f32: refused in place,
	 * copied (the copy owns them, aligned, the values equal). */
	_Alignas(8) unsigned char raw[4 * 4 + 2];
	memcpy(raw + 2, box_var, sizeof box_var);
	hand_frame(&f, es_genome, 1, es_sign, es_episodes, "es");
	seed_frame_set_float(&f, "action_noise", 0.75);
	seed_frame_set_tensor(&f, "obs_mean", seed_tensor_view(box_mean, SEED_DTYPE_F32, 1, &D));
	seed_frame_set_tensor(&f, "obs_var", seed_tensor_view(raw + 2, SEED_DTYPE_F32, 1, &D));
	CHECK(seed_evo_gen_from_frame(&f, &g, &err) == -EINVAL &&
	      has(err.msg, "field 'obs_var': data at an address not aligned for f32"));
	seed_evo_gen_copy c = {0};
	CHECK(seed_evo_gen_from_frame_copy(&f, &c, &err) == 0);
	CHECK(c.gen.action_noise == 0.75 && c.gen.obs_dim == 4);
	CHECK(c.gen.obs_mean && memcmp(c.gen.obs_mean, box_mean, sizeof box_mean) == 0 &&
	      c.gen.obs_mean != box_mean);
	CHECK(c.gen.obs_var && memcmp(c.gen.obs_var, box_var, sizeof box_var) == 0 &&
	      (uintptr_t)c.gen.obs_var % 4 == 0);
	seed_evo_gen_copy_free(&c);
}

/* sigmas on frames built field by field: refused by both readers with a
 * non-snes algorithm, with an element NaN or negative, with a rank other
 * than 0, of another length than the centre (the schema), and read (in
 * place or copied, aligned) with snes. */
static void t_from_frame_sigmas(void)
{
	seed_frame f;
	seed_evo_gen g;
	seed_err err = {""};
	int64_t P = 3, P2 = 2;
	struct {
		const char *algo;
		const float *sigmas;
		int64_t *len;
		int rank;
		int code;
		const char *part;
	} cases[] = {
	    {"es", snes_sigmas, &P, 0, -EINVAL,
	     "generation frame: field 'sigmas': only snes generations have sigmas, not es"},
	    {"ars", snes_sigmas, &P, 0, -EINVAL,
	     "field 'sigmas': only snes generations have sigmas, not ars"},
	    {"snes", nan_sigmas, &P, 0, -EINVAL,
	     "field 'sigmas': element 1 is nan, expected a finite value >= 0"},
	    {"snes", neg_sigmas, &P, 0, -EINVAL, "field 'sigmas': element 2 is -0.25"},
	    {"snes", snes_sigmas, &P, 1, -EINVAL, "field 'rank': 1, expected 0 for snes"},
	    {"snes", snes_sigmas, &P2, 0, -SEED_EFRAME,
	     "generation frame: field 'sigmas': shape [2], expected [P]: dimension 0 is 2, but P = 3 (from "
	     "'centre')"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		hand_frame(&f, es_genome, 1, es_sign, es_episodes, cases[i].algo);
		seed_frame_set_int(&f, "rank", cases[i].rank);
		seed_frame_set_tensor(
		    &f, "sigmas", seed_tensor_view((void *)cases[i].sigmas, SEED_DTYPE_F32, 1, cases[i].len));
		g.generation = 99;
		int rc = seed_evo_gen_from_frame(&f, &g, &err);
		CHECK_MSG(rc == cases[i].code && has(err.msg, cases[i].part), "case %zu: %d '%s'", i, rc,
		          err.msg);
		CHECK(g.generation == 99);
		seed_evo_gen_copy c = {0};
		rc = seed_evo_gen_from_frame_copy(&f, &c, &err);
		CHECK_MSG(rc == cases[i].code && has(err.msg, cases[i].part), "copy, case %zu: %d '%s'", i,
		          rc, err.msg);
		CHECK(c.mem == NULL);
	}
	/* A good snes frame: in place, and copied from an unaligned address. */
	hand_frame(&f, es_genome, 1, es_sign, es_episodes, "snes");
	seed_frame_set_tensor(&f, "sigmas", seed_tensor_view(snes_sigmas, SEED_DTYPE_F32, 1, &P));
	CHECK(seed_evo_gen_from_frame(&f, &g, &err) == 0);
	CHECK(g.algo == SEED_EVO_SNES && g.sigmas == snes_sigmas && g.num_params == 3 &&
	      g.centre == es_centre);
	_Alignas(8) unsigned char raw[3 * 4 + 1];
	memcpy(raw + 1, snes_sigmas, sizeof snes_sigmas);
	seed_frame_set_tensor(&f, "sigmas", seed_tensor_view(raw + 1, SEED_DTYPE_F32, 1, &P));
	CHECK(seed_evo_gen_from_frame(&f, &g, &err) == -EINVAL &&
	      has(err.msg, "field 'sigmas': data at an address not aligned for f32"));
	seed_evo_gen_copy c = {0};
	CHECK(seed_evo_gen_from_frame_copy(&f, &c, &err) == 0);
	CHECK(c.gen.algo == SEED_EVO_SNES && c.gen.sigmas && (uintptr_t)c.gen.sigmas % 4 == 0 &&
	      memcmp(c.gen.sigmas, snes_sigmas, sizeof snes_sigmas) == 0 && c.gen.num_params == 3);
	/* An old es frame (no sigmas) still reads, with sigmas NULL. */
	hand_frame(&f, es_genome, 1, es_sign, es_episodes, "es");
	CHECK(seed_evo_gen_from_frame_copy(&f, &c, &err) == 0 && c.gen.algo == SEED_EVO_ES && !c.gen.sigmas);
	seed_evo_gen_copy_free(&c);
}

/* The snes and ars frames Python packed, read back to its values. */
static void t_python_snes_ars(void)
{
	const struct golden_frame *snes = NULL, *ars = NULL;
	for (size_t i = 0; i < sizeof golden_frames / sizeof golden_frames[0]; i++) {
		if (strcmp(golden_frames[i].name, "generation_snes") == 0)
			snes = &golden_frames[i];
		if (strcmp(golden_frames[i].name, "generation_ars") == 0)
			ars = &golden_frames[i];
	}
	CHECK(snes && ars);
	if (!snes || !ars)
		return;
	seed_frame f;
	seed_err err;
	seed_evo_gen_copy c = {0};
	CHECK(seed_frame_decode(&f, snes->bytes, snes->len, &err) == 0);
	int rc = seed_evo_gen_from_frame_copy(&f, &c, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc == 0) {
		const seed_evo_gen *g = &c.gen;
		CHECK(g->algo == SEED_EVO_SNES && g->generation == 3 && g->phase == 0 && g->rank == 0);
		CHECK(g->noise_seed == 11 && g->noise_size == 65536 && g->sigma == 0.0375);
		CHECK(g->members == 4 && g->genome_len == 1 && g->genome[0] == 21 && g->genome[3] == 8);
		CHECK(g->sign[0] == 1 && g->sign[1] == -1 && g->sign[3] == -1);
		CHECK(g->num_params == 4 && g->centre[0] == 0.25f && g->centre[1] == -1.5f &&
		      g->centre[3] == 2.0f);
		CHECK(g->sigmas && g->sigmas[0] == 0.05f && g->sigmas[1] == 0.0f && g->sigmas[2] == 0.1f &&
		      g->sigmas[3] == 0.0f);
		CHECK(seed_evo_gen_check(g, &err) == 0);
	}
	CHECK(seed_frame_decode(&f, ars->bytes, ars->len, &err) == 0);
	rc = seed_evo_gen_from_frame_copy(&f, &c, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc == 0) {
		const seed_evo_gen *g = &c.gen;
		CHECK(g->algo == SEED_EVO_ARS && g->generation == 9 && g->rank == 1 && g->sigma == 0.03);
		CHECK(g->members == 2 && g->genome[0] == 5 && g->genome[1] == 5 && g->episodes[1] == 2);
		CHECK(g->num_params == 3 && g->centre[1] == -0.75f && g->centre[2] == 1e-4f && !g->sigmas);
		CHECK(seed_evo_gen_check(g, &err) == 0);
	}
	seed_evo_gen_copy_free(&c);
}

int main(void)
{
	TAP_RUN(t_roundtrip_es);
	TAP_RUN(t_roundtrip_ga);
	TAP_RUN(t_roundtrip_box);
	TAP_RUN(t_roundtrip_snes_ars);
	TAP_RUN(t_python_frame);
	TAP_RUN(t_refusals);
	TAP_RUN(t_from_frame_refusals);
	TAP_RUN(t_from_frame_box);
	TAP_RUN(t_from_frame_sigmas);
	TAP_RUN(t_python_snes_ars);
	return tap_done();
}
