/* tests/unit/evo/test_evolve.c: the evolution loop of seed-learn (seed/evolve.h).
 *
 * The clock is the test's: rounds, deadlines and rates are driven by the
 * times passed in.  The statistics a metrics line carries are checked
 * against returns chosen here and worked by hand (best, mean, median of
 * 1, 2, 3, 4 are 4, 2.5, 2.5); a GA checkpoint's parameters are rebuilt
 * from its genome and the noise table its configuration names alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/checkpoint.h"
#include "seed/config.h"
#include "seed/evo.h"
#include "seed/evo_frame.h"
#include "seed/evolve.h"
#include "seed/noise.h"
#include "tap.h"
#include "tmpdir.h"

static const char *BASE =
    "{\"env\": \"cartpole\", \"model\": {\"torso\": [{\"type\": \"linear\", \"out\": 8}, "
    "{\"type\": \"tanh\"}]}, \"seed\": 3, \"total_frames\": 1000000, "
    "\"evolution\": {\"population\": 4, \"noise_size\": 100000, \"sigma\": 0.1, "
    "\"truncation\": 2, \"elite_candidates\": 2, \"elite_episodes\": 2, "
    "\"generation_deadline\": 5, \"episode_cap\": 123, \"greedy\": false}}";

/* A configuration: BASE with the algorithm and extra assignments. */
static int config(seed_config *c, const char *algorithm, const char *const *sets, int nsets)
{
	json_t *root = json_loads(BASE, 0, NULL);
	seed_err err = {""};
	char a[64];
	snprintf(a, sizeof a, "algorithm=%s", algorithm);
	int rc = seed_config_set(root, a, &err);
	for (int i = 0; rc == 0 && i < nsets; i++)
		rc = seed_config_set(root, sets[i], &err);
	if (rc == 0)
		rc = seed_config_parse(root, c, &err);
	if (rc) {
		printf("# config: %s\n", err.msg);
		json_decref(root);
	}
	return rc;
}

/* When above 0, episodes() writes this frame_skip. */
static int episode_skip;

/* An episode frame of n episodes: generation gen[i] (NULL: no generation
 * fields), member mem[i], return ret[i], length len[i]. */
static void episodes(seed_frame *f, int n, const int64_t *gen, const int32_t *mem, const float *ret,
                     const int32_t *len)
{
	static int32_t env[64];
	static uint8_t trunc[64];
	int64_t N = n;
	seed_frame_init(f, SEED_FRAME_EPISODE);
	seed_frame_set_int(f, "run", 0);
	seed_frame_set_int(f, "actor", 0);
	seed_frame_set_tensor(f, "env", seed_tensor_view(env, SEED_DTYPE_I32, 1, &N));
	seed_frame_set_tensor(f, "return", seed_tensor_view((void *)ret, SEED_DTYPE_F32, 1, &N));
	seed_frame_set_tensor(f, "length", seed_tensor_view((void *)len, SEED_DTYPE_I32, 1, &N));
	seed_frame_set_tensor(f, "truncated", seed_tensor_view(trunc, SEED_DTYPE_U8, 1, &N));
	if (gen) {
		seed_frame_set_tensor(f, "generation", seed_tensor_view((void *)gen, SEED_DTYPE_I64, 1, &N));
		seed_frame_set_tensor(f, "member", seed_tensor_view((void *)mem, SEED_DTYPE_I32, 1, &N));
	}
	if (episode_skip > 0)
		seed_frame_set_int(f, "frame_skip", episode_skip);
}

/* Report one episode of every member m of the current round with return
 * ret0 + m and length len; the number reported. */
static int play_round(seed_evolver *E, double ret0, int32_t len)
{
	const seed_evo_gen *g = seed_evo_current(seed_evolver_evo(E));
	int64_t gen[64];
	int32_t mem[64], lens[64];
	float ret[64];
	int n = 0;
	for (int m = 0; m < g->members; m++)
		for (int k = 0; k < g->episodes[m] && n < 64; k++, n++) {
			gen[n] = g->generation;
			mem[n] = m;
			ret[n] = (float)(ret0 + m);
			lens[n] = len;
		}
	seed_frame f;
	episodes(&f, n, gen, mem, ret, lens);
	seed_err err = {""};
	int rc = seed_evolver_feed(E, &f, &err);
	seed_frame_clear(&f);
	if (rc < 0)
		printf("# feed: %s\n", err.msg);
	return rc;
}

static void t_refuses(void)
{
	seed_config c;
	seed_evolver *E = (seed_evolver *)1;
	seed_err err = {""};
	CHECK(config(&c, "vtrace", NULL, 0) == 0);
	CHECK(seed_evolver_new(&E, &c, NULL, 0, &err) == -EINVAL && E == NULL);
	CHECK_MSG(strstr(err.msg, "vtrace"), "%s", err.msg);
	seed_config_free(&c);
	const char *dueling[] = {"model.head=\"dueling\""};
	CHECK(config(&c, "es", dueling, 1) == 0);
	CHECK(seed_evolver_new(&E, &c, NULL, 0, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "actor-critic"), "%s", err.msg);
	seed_config_free(&c);
}

/* The generation frame says the round, the model and the settings the
 * server needs. */
static void t_generation_frame(void)
{
	seed_config c;
	seed_evolver *E;
	seed_err err = {""};
	CHECK(config(&c, "es", NULL, 0) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 0, &err) == 0, "%s", err.msg);
	seed_buf out = {0};
	CHECK_MSG(seed_evolver_generation_frame(E, &out, &err) == 0, "%s", err.msg);
	seed_frame f;
	CHECK_MSG(seed_frame_decode(&f, out.data, out.len, &err) == 0, "%s", err.msg);
	seed_evo_gen_copy gc = {0};
	CHECK_MSG(seed_evo_gen_from_frame_copy(&f, &gc, &err) == 0, "%s", err.msg);
	const seed_evo_gen g = gc.gen;
	const seed_evo_gen *cur = seed_evo_current(seed_evolver_evo(E));
	CHECK(g.algo == SEED_EVO_ES && g.generation == 0 && g.phase == 0 && g.members == 4);
	CHECK(g.noise_size == 100000 && g.num_params == seed_model_num_params(seed_evolver_model(E)));
	CHECK_NEAR(g.sigma, 0.1, 1e-12);
	for (int m = 0; m < 4; m++)
		CHECK(g.genome[m] == cur->genome[m] && g.sign[m] == cur->sign[m] && g.episodes[m] == 1);
	CHECK(memcmp(g.centre, cur->centre, g.num_params * sizeof(float)) == 0);
	CHECK(seed_frame_int(&f, "episode_cap", -1) == 123);
	const seed_value *gr = seed_frame_get(&f, "greedy");
	CHECK(gr && gr->kind == SEED_VALUE_BOOL && !gr->u.b);
	const char *model;
	size_t len;
	CHECK(seed_frame_str(&f, "model", &model, &len) == 0 && len == strlen(c.model) &&
	      memcmp(model, c.model, len) == 0);
	seed_evo_gen_copy_free(&gc);
	seed_frame_clear(&f);
	seed_buf_free(&out);
	seed_evolver_free(&E);
	seed_config_free(&c);
}

/* The episode seed of a round's frame: under evolution.common_episodes a
 * positive one, a new one each round; none without. */
static int64_t frame_episode_seed(seed_evolver *E)
{
	seed_buf out = {0};
	seed_err err = {""};
	seed_frame f;
	int64_t v = -2;
	if (seed_evolver_generation_frame(E, &out, &err) == 0 &&
	    seed_frame_decode(&f, out.data, out.len, &err) == 0) {
		v = seed_frame_int(&f, "episode_seed", -1);
		seed_frame_clear(&f);
	}
	seed_buf_free(&out);
	return v;
}

static void t_episode_seed(void)
{
	seed_config c;
	seed_evolver *E;
	seed_err err = {""};
	const char *on[] = {"evolution.common_episodes=true"};
	CHECK(config(&c, "es", on, 1) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 10, &err) == 0, "%s", err.msg);
	int64_t s0 = frame_episode_seed(E);
	CHECK(s0 > 0 && frame_episode_seed(E) == s0); /* the round republished: the same */
	CHECK(play_round(E, 0, 50) == 4);
	CHECK(seed_evolver_step(E, 12, &err) == 1);
	int64_t s1 = frame_episode_seed(E);
	CHECK_MSG(s1 > 0 && s1 != s0, "%" PRId64 " then %" PRId64, s0, s1);
	seed_evolver_free(&E);
	seed_config_free(&c);
	CHECK(config(&c, "es", NULL, 0) == 0 && !c.evolution.common_episodes);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 10, &err) == 0, "%s", err.msg);
	CHECK(frame_episode_seed(E) == -1);
	seed_evolver_free(&E);
	seed_config_free(&c);
}

/* Episodes of the round count; those of another round are stale, those of
 * no member or without generation fields ignored; frames count the
 * members' episodes, stale ones too.
 * A complete round finishes; its metrics are the returns' by hand. */
static void t_round(void)
{
	seed_config c;
	seed_evolver *E;
	seed_err err = {""};
	CHECK(config(&c, "es", NULL, 0) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 10, &err) == 0, "%s", err.msg);
	const seed_evolver_status *st = seed_evolver_get_status(E);
	/* Other rounds, no member, no generation fields. */
	int64_t gen[3] = {7, 0, 0};
	int32_t mem[3] = {0, -1, 0}, len[3] = {10, 20, 30};
	float ret[3] = {100, 100, 100};
	seed_frame f;
	episodes(&f, 3, gen, mem, ret, len);
	f.type = SEED_FRAME_UNROLL;
	CHECK(seed_evolver_feed(E, &f, &err) == -SEED_EFRAME);
	f.type = SEED_FRAME_EPISODE;
	CHECK(seed_evolver_feed(E, &f, &err) == 1);
	seed_frame_clear(&f);
	CHECK(st->stale == 1 && st->ignored == 1 && st->frames == 40 && st->episodes == 2);
	episodes(&f, 2, NULL, NULL, ret, len);
	CHECK(seed_evolver_feed(E, &f, &err) == 0);
	seed_frame_clear(&f);
	CHECK(st->ignored == 3 && st->frames == 40);
	/* Member 0 has its episode (return 100): not complete yet. */
	CHECK(seed_evolver_step(E, 11, &err) == 0 && st->rounds == 0);
	CHECK(play_round(E, 1, 50) == 4); /* members 0..3: returns 1, 2, 3, 4 */
	CHECK(st->frames == 240);
	CHECK(seed_evolver_step(E, 12, &err) == 1);
	CHECK(st->rounds == 1 && st->generation == 1 && st->deadlines == 0);
	CHECK_NEAR(st->round_seconds, 2, 1e-12);
	json_t *o = seed_evolver_metrics(E, 14);
	/* Member 0 averages its two episodes (100 and 1): 50.5. */
	CHECK_NEAR(json_number_value(json_object_get(o, "best")), 50.5, 1e-9);
	CHECK_NEAR(json_number_value(json_object_get(o, "mean")), (50.5 + 2 + 3 + 4) / 4, 1e-9);
	CHECK_NEAR(json_number_value(json_object_get(o, "median")), 3.5, 1e-9);
	CHECK(json_is_null(json_object_get(o, "elite")));
	CHECK(json_integer_value(json_object_get(o, "generation")) == 1);
	CHECK(json_integer_value(json_object_get(o, "evaluated")) == 4);
	CHECK(json_integer_value(json_object_get(o, "frames")) == 240);
	CHECK(json_integer_value(json_object_get(o, "episodes")) == 6);
	CHECK_NEAR(json_number_value(json_object_get(o, "frames_per_s")), 240.0 / 4, 1e-9);
	CHECK_NEAR(json_number_value(json_object_get(o, "time")), 4, 1e-9);
	CHECK(strcmp(json_string_value(json_object_get(o, "algorithm")), "es") == 0);
	json_decref(o);
	/* An episode of round 0 is stale now. */
	gen[0] = 0;
	episodes(&f, 1, gen, mem, ret, len);
	CHECK(seed_evolver_feed(E, &f, &err) == 0 && st->stale == 2);
	seed_frame_clear(&f);
	seed_evolver_free(&E);
	seed_config_free(&c);
}

/* Frames are emulator frames: an episode of length l (agent steps) in a
 * frame of frame skip k is l * k frames.  By hand, es with 4 members of one
 * episode each: a round of length 50 at skip 4 is 200 agent steps, 800
 * frames.  The same checkpoint as a Seed that counted agent steps wrote
 * it (frames 200, no agent_steps: saved here with -1) resumes at 200 agent
 * steps, frames not known (no metrics line) until an episode frame says
 * skip 4: then 800, and its round of length 10 adds 40 agent steps and 160
 * frames: 240 and 960. */
static void t_frame_skip(void)
{
	seed_config c;
	seed_evolver *E, *R;
	seed_err err = {""};
	const char *dir = tmpdir_new(), *old = "old";
	char olddir[4200];
	snprintf(olddir, sizeof olddir, "%s/%s", dir, old);
	CHECK(config(&c, "es", NULL, 0) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_evolver_open_dir(E, dir, &err) == 0, "%s", err.msg);
	const seed_evolver_status *st = seed_evolver_get_status(E);
	episode_skip = 4;
	CHECK(play_round(E, 1, 50) == 4);
	CHECK_MSG(st->agent_steps == 200 && st->frames == 800, "%lld agent steps, %lld frames",
	          (long long)st->agent_steps, (long long)st->frames);
	CHECK(seed_evolver_step(E, 1, &err) == 1);
	json_t *o = seed_evolver_metrics(E, 2);
	CHECK(o && json_integer_value(json_object_get(o, "frames")) == 800 &&
	      json_integer_value(json_object_get(o, "agent_steps")) == 200);
	json_decref(o);
	CHECK_MSG(seed_evolver_save(E, &err) == 0, "%s", err.msg);
	seed_checkpoint *ck;
	CHECK_MSG(seed_checkpoint_load(dir, &ck, &err) == 0, "%s", err.msg);
	CHECK(ck->frames == 800 && ck->agent_steps == 200);
	/* As a Seed that counted agent steps would have written it: frames
	 * 200, no agent_steps. */
	ck->frames = 200;
	ck->agent_steps = -1;
	int64_t *counters = (int64_t *)seed_checkpoint_get(ck, "evolver.counters")->data;
	counters[0] = 200;
	CHECK_MSG(seed_checkpoint_save(olddir, ck, &err) == 0, "%s", err.msg);
	seed_checkpoint_free(&ck);
	CHECK_MSG(seed_checkpoint_load(olddir, &ck, &err) == 0, "%s", err.msg);
	CHECK(ck->agent_steps == -1);
	CHECK_MSG(seed_evolver_new(&R, &c, NULL, 10, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_evolver_restore(R, ck, 10, &err) == 0, "%s", err.msg);
	const seed_evolver_status *rs = seed_evolver_get_status(R);
	CHECK(rs->frames_from_steps && rs->agent_steps == 200 && rs->frames == 200);
	CHECK(seed_evolver_metrics(R, 11) == NULL);
	CHECK(play_round(R, 1, 10) == 4);
	CHECK_MSG(!rs->frames_from_steps && rs->agent_steps == 240 && rs->frames == 960,
	          "%lld agent steps, %lld frames", (long long)rs->agent_steps, (long long)rs->frames);
	episode_skip = 0;
	seed_checkpoint_free(&ck);
	seed_evolver_free(&R);
	seed_evolver_free(&E);
	seed_config_free(&c);
	tmpdir_remove(dir);
}

/* The deadline finishes an incomplete round, counted; a round in which
 * nothing came back also ends at it. */
static void t_deadline(void)
{
	seed_config c;
	seed_evolver *E;
	seed_err err = {""};
	CHECK(config(&c, "es", NULL, 0) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 100, &err) == 0, "%s", err.msg);
	const seed_evolver_status *st = seed_evolver_get_status(E);
	int64_t gen[2] = {0, 0};
	int32_t mem[2] = {0, 1}, len[2] = {5, 5};
	float ret[2] = {1, 2};
	seed_frame f;
	episodes(&f, 2, gen, mem, ret, len);
	CHECK(seed_evolver_feed(E, &f, &err) == 2);
	seed_frame_clear(&f);
	CHECK_NEAR(seed_evolver_deadline_in(E, 101), 4, 1e-12);
	CHECK(seed_evolver_step(E, 104.9, &err) == 0);
	CHECK(seed_evolver_step(E, 105, &err) == 1 && st->deadlines == 1 && st->rounds == 1);
	CHECK(seed_evolver_stats(E)->evaluated == 2);
	CHECK(seed_evolver_step(E, 109.9, &err) == 0);
	CHECK(seed_evolver_step(E, 110, &err) == 1 && st->deadlines == 2 && st->rounds == 2);
	seed_evolver_free(&E);
	seed_config_free(&c);
	/* No deadline: never. */
	const char *none[] = {"evolution.generation_deadline=0"};
	CHECK(config(&c, "es", none, 1) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK(isinf(seed_evolver_deadline_in(E, 1e9)));
	CHECK(seed_evolver_step(E, 1e9, &err) == 0);
	seed_evolver_free(&E);
	seed_config_free(&c);
}

/* The frame budget counts every frame played; ES's target is the round's
 * mean, GA's the elite's re-evaluated mean. */
static void t_done(void)
{
	seed_config c;
	seed_evolver *E;
	seed_err err = {""};
	const char *sets[] = {"total_frames=1000", "target_return=30"};
	CHECK(config(&c, "es", sets, 2) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK(seed_evolver_done(E) == NULL);
	CHECK(play_round(E, 28, 10) == 4); /* 28, 29, 30, 31: mean 29.5 */
	CHECK(seed_evolver_step(E, 1, &err) == 1);
	CHECK(seed_evolver_done(E) == NULL);
	CHECK(play_round(E, 29, 10) == 4); /* mean 30.5 */
	CHECK(seed_evolver_step(E, 2, &err) == 1);
	CHECK(seed_evolver_done(E) && strcmp(seed_evolver_done(E), "target return reached") == 0);
	seed_evolver_free(&E);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK(play_round(E, 0, 250) == 4);
	CHECK(seed_evolver_done(E) && strcmp(seed_evolver_done(E), "frame budget reached") == 0);
	seed_evolver_free(&E);
	seed_config_free(&c);

	CHECK(config(&c, "ga", sets, 2) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK(play_round(E, 100, 1) == 4); /* every member far above the target */
	CHECK(seed_evolver_step(E, 1, &err) == 1);
	CHECK(seed_evolver_done(E) == NULL); /* the elite is not re-evaluated yet */
	CHECK(seed_evo_current(seed_evolver_evo(E))->phase == 1);
	CHECK(play_round(E, 100, 1) > 0);
	CHECK(seed_evolver_step(E, 2, &err) == 1);
	CHECK(!isnan(seed_evolver_stats(E)->elite));
	CHECK(seed_evolver_done(E) && strcmp(seed_evolver_done(E), "target return reached") == 0);
	seed_evolver_free(&E);
	seed_config_free(&c);
}

/* A GA checkpoint: its parameters are the elite's, rebuilt here from
 * best.genome and the noise table its configuration names; it resumes
 * into the same round and counters. */
static void t_checkpoint_ga(void)
{
	seed_config c;
	seed_evolver *E, *R;
	seed_err err = {""};
	const char *dir = tmpdir_new();
	CHECK(config(&c, "ga", NULL, 0) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK(seed_evolver_save(E, &err) == -EINVAL);
	CHECK_MSG(seed_evolver_open_dir(E, dir, &err) == 0, "%s", err.msg);
	/* Two generations of mutation, then the elite's re-evaluation: its
	 * genome holds an initialisation and mutations. */
	for (int r = 0; r < 6; r++) {
		CHECK(play_round(E, 10 * r, 7) > 0);
		CHECK(seed_evolver_step(E, r + 1, &err) == 1);
	}
	CHECK_MSG(seed_evolver_save(E, &err) == 0, "%s", err.msg);
	const seed_evolver_status *st = seed_evolver_get_status(E);
	CHECK(st->saved_rounds == 6);

	seed_checkpoint *ck;
	CHECK_MSG(seed_checkpoint_load(dir, &ck, &err) == 0, "%s", err.msg);
	const seed_tensor *gt = seed_checkpoint_get(ck, "best.genome");
	CHECK(gt && gt->dtype == SEED_DTYPE_I64 && gt->rank == 1 && gt->shape[0] >= 2);
	CHECK(ck->step == 6 && ck->frames == st->frames);
	/* The noise table's identity from the saved configuration alone. */
	json_t *ev = json_object_get(ck->config, "evolution");
	uint64_t nseed = (uint64_t)json_integer_value(json_object_get(ev, "noise_seed"));
	int64_t nsize = json_integer_value(json_object_get(ev, "noise_size"));
	double sigma = json_number_value(json_object_get(ev, "sigma"));
	seed_noise *noise;
	CHECK(seed_noise_new(&noise, nseed, nsize, &err) == 0);
	seed_model *m = seed_evolver_model(E);
	size_t P = seed_model_num_params(m);
	int32_t one = 1;
	seed_evo_gen g = {.algo = SEED_EVO_GA,
	                  .noise_seed = nseed,
	                  .noise_size = nsize,
	                  .sigma = sigma,
	                  .members = 1,
	                  .genome_len = (int)gt->shape[0],
	                  .genome = gt->data,
	                  .episodes = &one,
	                  .num_params = P};
	float *rebuilt = calloc(P, sizeof *rebuilt);
	seed_model *scratch;
	CHECK(seed_model_new(&scratch, c.model, SEED_DTYPE_F32, 1, (int64_t[]){4}, 2, 1, &err) == 0);
	CHECK_MSG(seed_evo_member_params(noise, scratch, &g, 0, rebuilt, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_checkpoint_load_model(ck, scratch, &err) == 0, "%s", err.msg);
	CHECK(memcmp(seed_model_params(scratch), rebuilt, P * sizeof(float)) == 0);
	/* And they differ from a bare initialisation: the mutations count. */
	g.genome_len = 1;
	float *init = calloc(P, sizeof *init);
	CHECK(seed_evo_member_params(noise, m, &g, 0, init, &err) == 0);
	CHECK(memcmp(init, rebuilt, P * sizeof(float)) != 0);

	/* Resume: the same round, the counters. */
	CHECK_MSG(seed_evolver_new(&R, &c, NULL, 50, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_evolver_restore(R, ck, 50, &err) == 0, "%s", err.msg);
	const seed_evolver_status *rs = seed_evolver_get_status(R);
	CHECK(rs->rounds == 6 && rs->frames == st->frames && rs->episodes == st->episodes);
	CHECK(rs->generation == st->generation && rs->phase == st->phase);
	CHECK_NEAR(seed_evolver_wall_time(R, 51), ck->wall_time + 1, 1e-9);
	const seed_evo_gen *a = seed_evo_current(seed_evolver_evo(E)),
	                   *b = seed_evo_current(seed_evolver_evo(R));
	CHECK(a->members == b->members && a->genome_len == b->genome_len &&
	      memcmp(a->genome, b->genome, (size_t)a->members * (size_t)a->genome_len * 8) == 0);
	seed_evolver_free(&R);
	free(init);
	free(rebuilt);
	seed_model_free(&scratch);
	seed_noise_free(&noise);
	seed_checkpoint_free(&ck);
	seed_evolver_free(&E);
	seed_config_free(&c);
	tmpdir_remove(dir);
}

/* evolution.centre_init and evolution.temperature reach the algorithm: a
 * new snes run with centre_init zero starts its centre at zero, model at
 * the model's initialisation; a temperature changes the first update; a
 * resumed run takes the checkpoint's centre whatever centre_init says. */
static void t_centre_init_and_temperature(void)
{
	seed_config cz, cm, ct;
	seed_evolver *Z = NULL, *M = NULL, *T = NULL, *R = NULL;
	seed_err err = {""};
	const char *dir = tmpdir_new();
	const char *zero[] = {"evolution.centre_init=zero"};
	const char *zero_t[] = {"evolution.centre_init=zero", "evolution.temperature=30"};
	CHECK(config(&cz, "snes", zero, 1) == 0);
	CHECK(config(&cm, "snes", NULL, 0) == 0);
	CHECK(config(&ct, "snes", zero_t, 2) == 0);
	CHECK_MSG(seed_evolver_new(&Z, &cz, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_evolver_new(&M, &cm, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_evolver_new(&T, &ct, NULL, 0, &err) == 0, "%s", err.msg);
	if (!Z || !M || !T)
		goto out;
	size_t P = seed_model_num_params(seed_evolver_model(Z));
	const float *init = seed_model_params(seed_evolver_model(M));
	const seed_evo_gen *gz = seed_evo_current(seed_evolver_evo(Z));
	const seed_evo_gen *gm = seed_evo_current(seed_evolver_evo(M));
	int zeros = 0, nonzero_init = 0;
	for (size_t i = 0; i < P; i++) {
		zeros += gz->centre[i] == 0.0f;
		nonzero_init += init[i] != 0.0f;
	}
	CHECK_MSG(zeros == (int)P, "%d of %zu parameters of the first centre are zero", zeros, P);
	CHECK(nonzero_init > 0 && memcmp(gm->centre, init, P * sizeof(float)) == 0);
	/* The same round and returns: the temperature's weights move the
	 * centre elsewhere than the rank utilities. */
	CHECK_MSG(seed_evolver_open_dir(Z, dir, &err) == 0, "%s", err.msg);
	CHECK(play_round(Z, 0, 3) == 4 && play_round(T, 0, 3) == 4);
	CHECK(seed_evolver_step(Z, 1, &err) == 1 && seed_evolver_step(T, 1, &err) == 1);
	gz = seed_evo_current(seed_evolver_evo(Z));
	const seed_evo_gen *gt = seed_evo_current(seed_evolver_evo(T));
	CHECK(memcmp(gz->genome, gt->genome, (size_t)gz->members * 8) == 0);
	CHECK(memcmp(gz->centre, gt->centre, P * sizeof(float)) != 0);
	/* Resumed with centre_init zero: the checkpoint's centre, not zero. */
	CHECK_MSG(seed_evolver_save(Z, &err) == 0, "%s", err.msg);
	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(dir, &ck, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_evolver_new(&R, &cz, NULL, 5, &err) == 0, "%s", err.msg);
	if (ck && R) {
		CHECK_MSG(seed_evolver_restore(R, ck, 5, &err) == 0, "%s", err.msg);
		const seed_evo_gen *rg = seed_evo_current(seed_evolver_evo(R));
		int moved = 0;
		for (size_t i = 0; i < P; i++)
			moved += gz->centre[i] != 0.0f;
		CHECK(moved > 0 && memcmp(rg->centre, gz->centre, P * sizeof(float)) == 0);
	}
	seed_checkpoint_free(&ck);
out:
	seed_evolver_free(&R);
	seed_evolver_free(&Z);
	seed_evolver_free(&M);
	seed_evolver_free(&T);
	seed_config_free(&cz);
	seed_config_free(&cm);
	seed_config_free(&ct);
	tmpdir_remove(dir);
}

/* An ES checkpoint's parameters are the centre; it resumes to the same
 * updates (Adam's moments restored). */
static void t_checkpoint_es(void)
{
	seed_config c;
	seed_evolver *E;
	seed_err err = {""};
	const char *dir = tmpdir_new();
	CHECK(config(&c, "es", NULL, 0) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_evolver_open_dir(E, dir, &err) == 0, "%s", err.msg);
	CHECK(play_round(E, 0, 3) == 4);
	CHECK(seed_evolver_step(E, 1, &err) == 1);
	CHECK_MSG(seed_evolver_save(E, &err) == 0, "%s", err.msg);
	seed_checkpoint *ck;
	CHECK_MSG(seed_checkpoint_load(dir, &ck, &err) == 0, "%s", err.msg);
	const seed_evo_gen *g = seed_evo_current(seed_evolver_evo(E));
	seed_model *m = seed_evolver_model(E);
	size_t P = seed_model_num_params(m);
	seed_model *scratch;
	CHECK(seed_model_new(&scratch, c.model, SEED_DTYPE_F32, 1, (int64_t[]){4}, 2, 1, &err) == 0);
	CHECK_MSG(seed_checkpoint_load_model(ck, scratch, &err) == 0, "%s", err.msg);
	CHECK(memcmp(seed_model_params(scratch), g->centre, P * sizeof(float)) == 0);
	CHECK(seed_checkpoint_get(ck, "best.genome") == NULL);
	/* Resume: the same centre and keys, and the next round after it
	 * equal to the one the first evolver makes from the same episodes. */
	seed_evolver *R;
	CHECK_MSG(seed_evolver_new(&R, &c, NULL, 5, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_evolver_restore(R, ck, 5, &err) == 0, "%s", err.msg);
	const seed_evo_gen *rg = seed_evo_current(seed_evolver_evo(R));
	CHECK(rg->generation == g->generation && rg->members == g->members);
	CHECK(memcmp(rg->centre, g->centre, P * sizeof(float)) == 0);
	CHECK(memcmp(rg->genome, g->genome, (size_t)g->members * 8) == 0);
	CHECK(play_round(E, 5, 3) == 4 && play_round(R, 5, 3) == 4);
	CHECK(seed_evolver_step(E, 3, &err) == 1 && seed_evolver_step(R, 6, &err) == 1);
	g = seed_evo_current(seed_evolver_evo(E));
	rg = seed_evo_current(seed_evolver_evo(R));
	CHECK(memcmp(rg->centre, g->centre, P * sizeof(float)) == 0);
	seed_evolver_free(&R);
	char line[512];
	seed_evolver_summary(E, "frame budget reached", 2, line, sizeof line);
	/* A round past the checkpoint: the summary says the run is not saved. */
	CHECK_MSG(strstr(line, "frame budget reached: 24 frames, 2 rounds") && strstr(line, "NOT SAVED") &&
	              strstr(line, "holds the checkpoint of round 1"),
	          "%s", line);
	CHECK_MSG(seed_evolver_save(E, &err) == 0, "%s", err.msg);
	seed_evolver_summary(E, NULL, 2, line, sizeof line);
	CHECK_MSG(strstr(line, "stopped by a signal: 24 frames, 2 rounds") && strstr(line, "checkpoint in"),
	          "%s", line);
	seed_model_free(&scratch);
	seed_checkpoint_free(&ck);
	seed_evolver_free(&E);
	seed_config_free(&c);
	tmpdir_remove(dir);
}

/* A Box space: members need a Gaussian policy (and a discrete space a
 * categorical one); the generation frame carries evolution.action_noise. */
static void t_box(void)
{
	seed_config c;
	seed_evolver *E = NULL;
	seed_err err = {""};
	const char *cat[] = {"env=\"pendulum\""};
	CHECK(config(&c, "es", cat, 1) == 0);
	CHECK(seed_evolver_new(&E, &c, NULL, 0, &err) == -EINVAL && E == NULL);
	CHECK_MSG(strstr(err.msg, "Box") && strstr(err.msg, "gaussian"), "%s", err.msg);
	seed_config_free(&c);
	const char *gauss[] = {"model.policy={\"type\": \"gaussian\"}"};
	CHECK(config(&c, "es", gauss, 1) == 0);
	CHECK(seed_evolver_new(&E, &c, NULL, 0, &err) == -EINVAL && E == NULL);
	CHECK_MSG(strstr(err.msg, "discrete") && strstr(err.msg, "Gaussian"), "%s", err.msg);
	seed_config_free(&c);
	const char *box[] = {"env=\"pendulum\"", "model.policy={\"type\": \"gaussian\"}",
	                     "evolution.action_noise=0.05"};
	CHECK(config(&c, "es", box, 3) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 0, &err) == 0, "%s", err.msg);
	seed_buf out = {0};
	CHECK_MSG(seed_evolver_generation_frame(E, &out, &err) == 0, "%s", err.msg);
	seed_frame f;
	CHECK_MSG(seed_frame_decode(&f, out.data, out.len, &err) == 0, "%s", err.msg);
	CHECK_NEAR(seed_frame_float(&f, "action_noise", -1), 0.05, 1e-12);
	CHECK(seed_frame_get(&f, "obs_mean") == NULL); /* no "obs_norm" */
	seed_frame_clear(&f);
	seed_buf_free(&out);
	seed_evolver_free(&E);
	seed_config_free(&c);
}

/* The observation moments of an episode frame: obs_count rows x (D = 4
 * features), their sums and sums of squares. */
static void moments(seed_frame *f, int rows, const double (*x)[4])
{
	static double sum[4], sq[4];
	int64_t D = 4;
	memset(sum, 0, sizeof sum);
	memset(sq, 0, sizeof sq);
	for (int r = 0; r < rows; r++)
		for (int j = 0; j < 4; j++) {
			sum[j] += x[r][j];
			sq[j] += x[r][j] * x[r][j];
		}
	seed_frame_set_int(f, "obs_count", rows);
	seed_frame_set_tensor(f, "obs_sum", seed_tensor_view(sum, SEED_DTYPE_F64, 1, &D));
	seed_frame_set_tensor(f, "obs_sumsq", seed_tensor_view(sq, SEED_DTYPE_F64, 1, &D));
}

/* The generation frame's obs_mean and obs_var into mean, var (4 each). */
static int frame_stats(seed_evolver *E, float *mean, float *var)
{
	seed_buf out = {0};
	seed_err err = {""};
	seed_frame f;
	int ok = seed_evolver_generation_frame(E, &out, &err) == 0 &&
	         seed_frame_decode(&f, out.data, out.len, &err) == 0;
	if (!ok) {
		printf("# %s\n", err.msg);
		seed_buf_free(&out);
		return -1;
	}
	const seed_tensor *m = seed_frame_tensor(&f, "obs_mean"), *v = seed_frame_tensor(&f, "obs_var");
	ok = m && v && m->dtype == SEED_DTYPE_F32 && v->dtype == SEED_DTYPE_F32 && m->rank == 1 &&
	     v->rank == 1 && m->shape[0] == 4 && v->shape[0] == 4;
	if (ok) {
		memcpy(mean, m->data, 16);
		memcpy(var, v->data, 16);
	}
	seed_frame_clear(&f);
	seed_buf_free(&out);
	return ok ? 0 : -1;
}

/* Observation statistics ("obs_norm"): the generation frames carry them,
 * starting at Gymnasium's mean 0, var 1, count 1e-4; the moments of the
 * episode frames of a round are merged when it finishes, whichever frames
 * they came in; a checkpoint holds them (as the model's tensors and
 * exactly), and a resumed evolver publishes the same.  The merged values
 * are checked against the pooled moments worked here: with the start's
 * weight c0 = 1e-4 (mean 0, second moment var + mean^2 = 1),
 *   mean = sum x / (c0 + n),  var = (c0 * 1 + sum x^2) / (c0 + n) - mean^2. */
static void t_obs_norm(void)
{
	static const double X[6][4] = {{1, -2, 0.5, 10}, {3, -1, 0.5, 12}, {2, 0, 0.5, 8},
	                               {4, 1, 0.5, 11},  {0, 2, 0.5, 9},   {2, 3, 0.5, 10}};
	seed_config c;
	seed_evolver *E;
	seed_err err = {""};
	const char *dir = tmpdir_new();
	const char *norm[] = {"model.obs_norm=true"};
	CHECK(config(&c, "es", norm, 1) == 0);
	CHECK_MSG(seed_evolver_new(&E, &c, NULL, 0, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_evolver_open_dir(E, dir, &err) == 0, "%s", err.msg);
	float mean[4], var[4];
	CHECK(frame_stats(E, mean, var) == 0);
	for (int j = 0; j < 4; j++)
		CHECK(mean[j] == 0.0f && var[j] == 1.0f);
	/* The round's episodes, with the first two rows' moments; then a frame
	 * of one episode of no member with the other four (both before the
	 * round ends). */
	const seed_evo_gen *g = seed_evo_current(seed_evolver_evo(E));
	int64_t gen[4];
	int32_t mem[4], len[4];
	float ret[4];
	for (int m = 0; m < 4; m++) {
		gen[m] = g->generation;
		mem[m] = m;
		ret[m] = (float)m;
		len[m] = 5;
	}
	seed_frame f;
	episodes(&f, 4, gen, mem, ret, len);
	moments(&f, 2, X);
	CHECK_MSG(seed_evolver_feed(E, &f, &err) == 4, "%s", err.msg);
	seed_frame_clear(&f);
	/* Not until the round finishes. */
	CHECK(frame_stats(E, mean, var) == 0 && mean[0] == 0.0f && var[0] == 1.0f);
	int32_t none = -1; /* an episode of no member: its frame's moments still count */
	episodes(&f, 1, gen, &none, ret, len);
	moments(&f, 4, X + 2);
	CHECK_MSG(seed_evolver_feed(E, &f, &err) == 0, "%s", err.msg);
	seed_frame_clear(&f);
	/* Moments of other features are refused, naming the fields. */
	episodes(&f, 1, gen, &none, ret, len);
	moments(&f, 4, X);
	int64_t three = 3;
	static double bad[3];
	seed_frame_set_tensor(&f, "obs_sum", seed_tensor_view(bad, SEED_DTYPE_F64, 1, &three));
	CHECK(seed_evolver_feed(E, &f, &err) < 0);
	CHECK_MSG(strstr(err.msg, "obs_sum"), "%s", err.msg);
	seed_frame_clear(&f);
	CHECK(seed_evolver_step(E, 1, &err) == 1);
	double c0 = (double)1e-4f, want_m[4], want_v[4];
	for (int j = 0; j < 4; j++) {
		double s = 0, q = 0;
		for (int r = 0; r < 6; r++) {
			s += X[r][j];
			q += X[r][j] * X[r][j];
		}
		want_m[j] = s / (c0 + 6);
		want_v[j] = (c0 + q) / (c0 + 6) - want_m[j] * want_m[j];
	}
	CHECK(frame_stats(E, mean, var) == 0);
	for (int j = 0; j < 4; j++) {
		CHECK_NEAR(mean[j], want_m[j], 1e-5 * (1 + fabs(want_m[j])));
		CHECK_NEAR(var[j], want_v[j], 1e-5 * (1 + want_v[j]));
	}
	CHECK_MSG(seed_evolver_save(E, &err) == 0, "%s", err.msg);
	seed_checkpoint *ck;
	CHECK_MSG(seed_checkpoint_load(dir, &ck, &err) == 0, "%s", err.msg);
	const seed_tensor *cm = seed_checkpoint_get(ck, "obs_norm.mean");
	const seed_tensor *cc = seed_checkpoint_get(ck, "obs_norm.count");
	CHECK(cm && cm->dtype == SEED_DTYPE_F32 && memcmp(cm->data, mean, 16) == 0);
	float count;
	CHECK(cc && (memcpy(&count, cc->data, 4), fabs(count - (c0 + 6)) < 1e-5));
	const seed_tensor *ex = seed_checkpoint_get(ck, "evolver.obs_norm");
	CHECK(ex && ex->dtype == SEED_DTYPE_F64 && ex->shape[0] == 9);
	seed_evolver *R;
	CHECK_MSG(seed_evolver_new(&R, &c, NULL, 5, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_evolver_restore(R, ck, 5, &err) == 0, "%s", err.msg);
	float rmean[4], rvar[4];
	CHECK(frame_stats(R, rmean, rvar) == 0 && memcmp(rmean, mean, 16) == 0 && memcmp(rvar, var, 16) == 0);
	seed_evolver_free(&R);
	seed_checkpoint_free(&ck);
	seed_evolver_free(&E);
	seed_config_free(&c);
	tmpdir_remove(dir);
}

int main(void)
{
	TAP_RUN(t_refuses);
	TAP_RUN(t_generation_frame);
	TAP_RUN(t_episode_seed);
	TAP_RUN(t_round);
	TAP_RUN(t_deadline);
	TAP_RUN(t_frame_skip);
	TAP_RUN(t_done);
	TAP_RUN(t_checkpoint_ga);
	TAP_RUN(t_checkpoint_es);
	TAP_RUN(t_centre_init_and_temperature);
	TAP_RUN(t_box);
	TAP_RUN(t_obs_norm);
	return tap_done();
}
