/* evolve.c: the evolution loop of seed-learn (seed/evolve.h): rounds as
 * generation frames out, episode frames in, the deadline, the stopping
 * rules, metrics and checkpoints around the algorithm of seed/evo.h.
 */
#include "seed/evolve.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/clock.h"
#include "seed/evo_frame.h"
#include "seed/fsutil.h"
#include "seed/noise.h"
#include "seed/rng.h"
#include "seed/timing.h"

/* The counters a checkpoint keeps beside the algorithm's state, as the
 * tensor "evolver.counters" (i64): frames, episodes, stale, ignored,
 * deadlines. */
#define COUNTERS 5

struct seed_evolver {
	const seed_config *cfg;
	seed_env_spec spec;
	seed_model *model;
	seed_noise *noise;
	seed_evo *evo;
	seed_evolver_status st;
	float *best; /* P floats: the best network, built for saves */
	double t_new, wall0;
	double now; /* the caller's clock at the last call that passed it */
	double round_start;
	int last_phase; /* the phase of the last finished round */
	int64_t mark_frames, mark_episodes;
	double mark_at;
	char *dir;
};

static seed_evo_algo algo_of(seed_config_algorithm a)
{
	return a == SEED_CONFIG_GA ? SEED_EVO_GA : a == SEED_CONFIG_RS ? SEED_EVO_RS : SEED_EVO_ES;
}

int seed_evolver_new(seed_evolver **out, const seed_config *cfg, const seed_env_spec *spec, double now,
                     seed_err *err)
{
	*out = NULL;
	if (!SEED_CONFIG_IS_EVO(cfg->algorithm))
		return seed_err_set(err, -EINVAL, "evolver: algorithm %s is not es, ga or rs",
		                    seed_config_algorithm_name(cfg->algorithm));
	seed_env_spec probed;
	if (!spec) {
		int prc = seed_env_probe(cfg->env, cfg->env_options, &probed, err);
		if (prc)
			return prc;
		spec = &probed;
	}
	if (spec->action_space != SEED_ACTIONS_DISCRETE)
		return seed_err_set(err, -EINVAL,
		                    "evolver: %s has a Box (continuous) action space; evolution acts in "
		                    "discrete ones only",
		                    cfg->env);
	seed_evolver *E = seed_xcalloc(1, sizeof *E);
	E->cfg = cfg;
	E->spec = *spec;
	E->st.saved_rounds = -1;
	int rc = seed_model_new(&E->model, cfg->model, spec->obs_dtype, spec->obs_rank, spec->obs_shape,
	                        spec->num_actions, 1, err);
	if (rc == 0 && seed_model_head_kind(E->model) != SEED_HEAD_ACTOR_CRITIC)
		/* Members act on their logits. */
		rc = seed_err_set(err, -EINVAL,
		                  "evolver: the model has a \"%s\" head; algorithm %s plays a policy's "
		                  "logits: it needs an actor-critic head",
		                  seed_model_head_name(seed_model_head_kind(E->model)),
		                  seed_config_algorithm_name(cfg->algorithm));
	else if (rc == 0 && seed_model_state_floats(E->model) > 0)
		rc = seed_err_set(err, -EINVAL,
		                  "evolver: algorithm %s takes a model without a core (the population "
		                  "server keeps no recurrent state); the model has an LSTM core",
		                  seed_config_algorithm_name(cfg->algorithm));
	const seed_config_evolution *ev = &cfg->evolution;
	if (rc == 0)
		rc = seed_noise_new(&E->noise, ev->noise_seed, ev->noise_size, err);
	if (rc == 0) {
		/* ES's first centre: the model's own initialisation. */
		seed_rng rng;
		seed_rng_init(&rng, cfg->seed, 0x1ea);
		seed_model_init(E->model, &rng);
		seed_evo_config ec;
		seed_evo_config_default(&ec, algo_of(cfg->algorithm));
		ec.population = ev->population;
		ec.episodes = ev->episodes;
		ec.sigma = ev->sigma;
		ec.rank = ev->rank;
		ec.noise_seed = ev->noise_seed;
		ec.noise_size = ev->noise_size;
		ec.seed = cfg->seed;
		ec.lr = ev->lr;
		ec.l2 = ev->l2;
		ec.truncation = ev->truncation;
		ec.elite_candidates = ev->elite_candidates;
		ec.elite_episodes = ev->elite_episodes;
		rc = seed_evo_new(&E->evo, &ec, E->noise, E->model, err);
	}
	if (rc) {
		seed_evolver_free(&E);
		return rc;
	}
	E->best = seed_xcalloc(seed_model_num_params(E->model), sizeof *E->best);
	E->t_new = now;
	E->now = now;
	E->round_start = now;
	E->mark_at = now;
	E->st.generation = seed_evo_current(E->evo)->generation;
	*out = E;
	return 0;
}

void seed_evolver_free(seed_evolver **pE)
{
	seed_evolver *E = *pE;
	if (!E)
		return;
	seed_evo_free(&E->evo);
	seed_noise_free(&E->noise);
	seed_model_free(&E->model);
	free(E->best);
	free(E->dir);
	free(E);
	*pE = NULL;
}

int seed_evolver_restore(seed_evolver *E, const seed_checkpoint *ck, double now, seed_err *err)
{
	int64_t n = COUNTERS;
	seed_tensor t;
	int rc = seed_checkpoint_expect(ck, "evolver.counters", SEED_DTYPE_I64, 1, &n, &t, err);
	if (rc == 0)
		rc = seed_evo_restore(E->evo, ck, err);
	if (rc)
		return rc;
	int64_t c[COUNTERS];
	memcpy(c, t.data, sizeof c);
	E->st.frames = c[0];
	E->st.episodes = c[1];
	E->st.stale = c[2];
	E->st.ignored = c[3];
	E->st.deadlines = c[4];
	E->st.rounds = seed_evo_get_stats(E->evo)->generation;
	E->st.generation = seed_evo_current(E->evo)->generation;
	E->st.phase = seed_evo_current(E->evo)->phase;
	E->st.saved_rounds = E->st.rounds;
	E->wall0 = ck->wall_time;
	E->t_new = now;
	E->now = now;
	E->round_start = now;
	E->mark_at = now;
	E->mark_frames = E->st.frames;
	E->mark_episodes = E->st.episodes;
	return 0;
}

int seed_evolver_open_dir(seed_evolver *E, const char *dir, seed_err *err)
{
	int rc = seed_fs_mkdirs(dir, err);
	if (rc)
		return rc;
	free(E->dir);
	E->dir = strcpy(seed_xmalloc(strlen(dir) + 1), dir);
	return 0;
}

int seed_evolver_generation_frame(seed_evolver *E, seed_buf *out, seed_err *err)
{
	seed_frame f;
	int rc = seed_evo_gen_to_frame(seed_evo_current(E->evo), 0, &f, err);
	if (rc)
		return rc;
	const seed_config_evolution *ev = &E->cfg->evolution;
	rc = seed_frame_set_str(&f, "model", E->cfg->model);
	if (rc == 0)
		rc = seed_frame_set_int(&f, "episode_cap", ev->episode_cap);
	if (rc == 0)
		rc = seed_frame_set_bool(&f, "greedy", ev->greedy);
	seed_buf_reset(out);
	if (rc == 0)
		rc = seed_frame_encode(&f, out, err);
	else
		seed_err_set(err, rc, "evolver: the generation frame has too many fields");
	seed_frame_clear(&f);
	return rc;
}

/* Element i of a 1-D i64 or i32 tensor (its dtype checked by the caller), as
 * int64; read with memcpy, since a decoded frame's data may be unaligned. */
static int64_t int_at(const seed_tensor *t, int64_t i)
{
	if (t->dtype == SEED_DTYPE_I64) {
		int64_t v;
		memcpy(&v, (const uint8_t *)t->data + 8 * i, 8);
		return v;
	}
	int32_t v;
	memcpy(&v, (const uint8_t *)t->data + 4 * i, 4);
	return v;
}

int seed_evolver_feed(seed_evolver *E, const seed_frame *f, seed_err *err)
{
	if (f->type != SEED_FRAME_EPISODE)
		return seed_err_set(err, -SEED_EFRAME, "a %s frame: the evolver takes episode frames",
		                    seed_frame_type_name(f->type));
	int rc = seed_frame_validate(f, err);
	if (rc)
		return rc;
	const seed_tensor *ret = seed_frame_tensor(f, "return");
	const seed_tensor *len = seed_frame_tensor(f, "length");
	const seed_tensor *gen = seed_frame_tensor(f, "generation");
	const seed_tensor *mem = seed_frame_tensor(f, "member");
	int64_t N = ret->shape[0];
	if (!gen || !mem) {
		E->st.ignored += N;
		return 0;
	}
	/* seed_frame_validate checks these; a frame that slipped past it must
	 * still never be read out of bounds. */
	if (gen->dtype != SEED_DTYPE_I64 || mem->dtype != SEED_DTYPE_I32 || gen->rank != 1 ||
	    mem->rank != 1 || gen->shape[0] != N || mem->shape[0] != N || len->dtype != SEED_DTYPE_I32 ||
	    len->shape[0] != N || ret->dtype != SEED_DTYPE_F32)
		return seed_err_set(err, -SEED_EFRAME,
		                    "episode frame: 'generation' (i64[N]), 'member' (i32[N]), 'return' "
		                    "(f32[N]) and 'length' (i32[N]) disagree");
	int reported = 0;
	for (int64_t i = 0; i < N; i++) {
		int64_t g = int_at(gen, i), m = int_at(mem, i), l = int_at(len, i);
		float r;
		memcpy(&r, (const uint8_t *)ret->data + 4 * i, 4);
		if (m < 0) { /* played before any generation: not evolution's */
			E->st.ignored++;
			continue;
		}
		E->st.frames += l > 0 ? l : 0;
		E->st.episodes++;
		int k = seed_evo_report(E->evo, g, (int)(m > INT32_MAX ? -1 : m), r, l);
		if (k == -ESTALE)
			E->st.stale++;
		else if (k)
			E->st.ignored++;
		else
			reported++;
	}
	return reported;
}

double seed_evolver_deadline_in(const seed_evolver *E, double now)
{
	double d = E->cfg->evolution.generation_deadline;
	return d > 0 ? E->round_start + d - now : INFINITY;
}

int seed_evolver_step(seed_evolver *E, double now, seed_err *err)
{
	E->now = now;
	bool complete = seed_evo_complete(E->evo);
	if (!complete && !(seed_evolver_deadline_in(E, now) <= 0))
		return 0;
	int phase = seed_evo_current(E->evo)->phase;
	double t0 = seed_now_s();
	int rc = seed_evo_advance(E->evo, err);
	E->st.time_update += seed_now_s() - t0;
	if (rc)
		return rc;
	if (!complete)
		E->st.deadlines++;
	E->last_phase = phase;
	E->st.rounds = seed_evo_get_stats(E->evo)->generation;
	E->st.generation = seed_evo_current(E->evo)->generation;
	E->st.phase = seed_evo_current(E->evo)->phase;
	E->st.round_seconds = now - E->round_start;
	E->round_start = now;
	return 1;
}

/* The return the target is judged on (above), or NAN. */
static double target_score(const seed_evolver *E)
{
	const seed_evo_stats *s = seed_evo_get_stats(E->evo);
	if (E->cfg->algorithm == SEED_CONFIG_ES)
		return s->mean;
	if (E->cfg->evolution.elite_candidates == 0)
		return s->best;
	return s->elite;
}

const char *seed_evolver_done(const seed_evolver *E)
{
	const seed_config *c = E->cfg;
	if (E->st.frames >= c->total_frames)
		return "frame budget reached";
	double s = target_score(E);
	if (!isnan(c->target_return) && !isnan(s) && s >= c->target_return)
		return "target return reached";
	return NULL;
}

static json_t *jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

json_t *seed_evolver_metrics(seed_evolver *E, double now)
{
	const seed_evo_stats *s = seed_evo_get_stats(E->evo);
	double dt = now - E->mark_at;
	json_t *o = json_object();
	json_object_set_new(o, "time", json_real(seed_evolver_wall_time(E, now)));
	json_object_set_new(o, "algorithm", json_string(seed_config_algorithm_name(E->cfg->algorithm)));
	json_object_set_new(o, "generation", json_integer(E->st.rounds));
	json_object_set_new(o, "phase", json_integer(E->last_phase));
	json_object_set_new(o, "best", jnum(s->best));
	json_object_set_new(o, "mean", jnum(s->mean));
	json_object_set_new(o, "median", jnum(s->median));
	json_object_set_new(o, "elite", jnum(s->elite));
	json_object_set_new(o, "evaluated", json_integer(s->evaluated));
	json_object_set_new(o, "frames", json_integer(E->st.frames));
	json_object_set_new(o, "episodes", json_integer(E->st.episodes));
	json_object_set_new(o, "frames_per_s",
	                    jnum(dt > 0 ? (double)(E->st.frames - E->mark_frames) / dt : NAN));
	json_object_set_new(o, "episodes_per_s",
	                    jnum(dt > 0 ? (double)(E->st.episodes - E->mark_episodes) / dt : NAN));
	json_object_set_new(o, "round_seconds", json_real(E->st.round_seconds));
	json_object_set_new(o, "stale", json_integer(E->st.stale));
	json_object_set_new(o, "ignored", json_integer(E->st.ignored));
	json_object_set_new(o, "deadlines", json_integer(E->st.deadlines));
	E->mark_at = now;
	E->mark_frames = E->st.frames;
	E->mark_episodes = E->st.episodes;
	return o;
}

int seed_evolver_save(seed_evolver *E, seed_err *err)
{
	if (!E->dir)
		return seed_err_set(err, -EINVAL, "evolver: no run directory to save into");
	double t0 = seed_now_s();
	int rc = seed_evo_best_params(E->evo, E->best, err);
	E->st.time_update += seed_now_s() - t0;
	if (rc)
		return rc;
	int nt = seed_model_num_tensors(E->model);
	seed_checkpoint_tensor *ts = seed_xcalloc((size_t)nt + SEED_EVO_STATE_TENSORS + 2, sizeof *ts);
	for (int i = 0; i < nt; i++) {
		const seed_model_param *p = seed_model_param_at(E->model, i);
		ts[i].name = p->name;
		ts[i].tensor = seed_tensor_view(E->best + p->offset, SEED_DTYPE_F32, p->rank, p->shape);
	}
	int n = nt;
	int ns = seed_evo_state_tensors(E->evo, ts + n, SEED_EVO_STATE_TENSORS);
	if (ns < 0) {
		free(ts);
		return seed_err_set(err, ns, "evolver: the algorithm's state does not fit %d tensors",
		                    SEED_EVO_STATE_TENSORS);
	}
	n += ns;
	int64_t counters[COUNTERS] = {E->st.frames, E->st.episodes, E->st.stale, E->st.ignored,
	                              E->st.deadlines};
	int64_t nc = COUNTERS;
	ts[n].name = "evolver.counters";
	ts[n++].tensor = seed_tensor_view(counters, SEED_DTYPE_I64, 1, &nc);
	int glen = 0;
	const int64_t *genome = seed_evo_best_genome(E->evo, &glen);
	int64_t gl = glen;
	if (genome && glen > 0) {
		ts[n].name = "best.genome";
		ts[n++].tensor = seed_tensor_view((void *)genome, SEED_DTYPE_I64, 1, &gl);
	}
	seed_checkpoint ck = {
	    .step = E->st.rounds,
	    .frames = E->st.frames,
	    .policy_version = E->st.generation,
	    .optim_step = E->st.rounds,
	    .wall_time = seed_evolver_wall_time(E, E->now),
	    .ntensors = (size_t)n,
	    .tensors = ts,
	};
	t0 = seed_now_s();
	rc = seed_config_checkpoint_save(E->cfg, E->dir, &ck, err);
	free(ts);
	if (rc) { /* say what the directory still holds */
		seed_checkpoint_holds(err->msg, sizeof err->msg, E->dir, "round", E->st.saved_rounds,
		                      E->st.rounds, true);
		return rc;
	}
	E->st.saved_rounds = E->st.rounds;
	return 0;
}

const seed_evolver_status *seed_evolver_get_status(const seed_evolver *E)
{
	return &E->st;
}

const seed_evo_stats *seed_evolver_stats(const seed_evolver *E)
{
	return seed_evo_get_stats(E->evo);
}

seed_model *seed_evolver_model(seed_evolver *E)
{
	return E->model;
}

seed_evo *seed_evolver_evo(seed_evolver *E)
{
	return E->evo;
}

double seed_evolver_wall_time(const seed_evolver *E, double now)
{
	return E->wall0 + (now - E->t_new);
}

void seed_evolver_summary(const seed_evolver *E, const char *why, double now, char *buf, size_t n)
{
	const seed_evo_stats *s = seed_evo_get_stats(E->evo);
	int at = snprintf(buf, n,
	                  "%s: %" PRId64 " frames, %" PRId64 " rounds, best %.6g, mean %.6g, elite %.6g, "
	                  "%.1f s",
	                  why ? why : "stopped by a signal", E->st.frames, E->st.rounds, s->best, s->mean,
	                  s->elite, seed_evolver_wall_time(E, now));
	if (at < 0 || (size_t)at >= n || !E->dir)
		return;
	seed_checkpoint_holds(buf, n, E->dir, "round", E->st.saved_rounds, E->st.rounds, false);
}
