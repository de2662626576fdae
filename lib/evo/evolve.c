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
	/* Observation statistics (a model with "obs_norm"; D 0 without): the
	 * running mean, variance and count the members normalise with, in
	 * double, as floats for the generation frames; the moments of the
	 * episode frames taken since the last round finished, merged into them
	 * when it does (so that every member of a round sees the same ones). */
	int64_t D;
	double *mean, *var, count;
	double pend_count, *pend_sum, *pend_sq;
	float *fmean, *fvar;
};

/* The model's policy must suit the environment's actions: a Gaussian one
 * (whose members act with their mean) for a Box space, a categorical one
 * for a discrete space. */
static int check_policy(const seed_evolver *E, seed_err *err)
{
	bool box = E->spec.action_space == SEED_ACTIONS_BOX;
	bool gauss = seed_model_policy_kind(E->model) == SEED_POLICY_GAUSSIAN;
	if (box && !gauss)
		return seed_err_set(err, -EINVAL,
		                    "evolver: %s has a Box action space (A = %d): the model needs a "
		                    "Gaussian policy, \"policy\": {\"type\": \"gaussian\"} (members act "
		                    "with its mean)",
		                    E->cfg->env, E->spec.num_actions);
	if (!box && gauss)
		return seed_err_set(err, -EINVAL,
		                    "evolver: %s has %d discrete actions; the model's policy is Gaussian, "
		                    "for Box action spaces",
		                    E->cfg->env, E->spec.num_actions);
	return 0;
}

/* Room for the observation statistics of a model with "obs_norm", at
 * Gymnasium's start (mean 0, var 1, count 1e-4, as seed_model_new's). */
static void norm_init(seed_evolver *E)
{
	E->D = seed_model_obs_norm_dim(E->model);
	if (E->D == 0)
		return;
	size_t D = (size_t)E->D;
	E->mean = seed_xcalloc(D, sizeof *E->mean);
	E->var = seed_xcalloc(D, sizeof *E->var);
	E->pend_sum = seed_xcalloc(D, sizeof *E->pend_sum);
	E->pend_sq = seed_xcalloc(D, sizeof *E->pend_sq);
	E->fmean = seed_xcalloc(D, sizeof *E->fmean);
	E->fvar = seed_xcalloc(D, sizeof *E->fvar);
	for (size_t j = 0; j < D; j++)
		E->var[j] = 1.0;
	E->count = (double)1e-4f;
	E->pend_count = 0;
}

/* The floats the generation frames carry. */
static void norm_publish(seed_evolver *E)
{
	for (int64_t j = 0; j < E->D; j++) {
		E->fmean[j] = (float)E->mean[j];
		E->fvar[j] = (float)E->var[j];
	}
}

/* Merge the pending moments into the statistics, as
 * seed_model_obs_norm_update merges a batch (Gymnasium's RunningMeanStd):
 * the batch's mean and variance (ddof 0) by the parallel-variance formula,
 * weighted by the counts. */
static void norm_merge(seed_evolver *E)
{
	double n = E->pend_count;
	if (E->D == 0 || !(n > 0))
		return;
	double tot = E->count + n;
	for (int64_t j = 0; j < E->D; j++) {
		double bmean = E->pend_sum[j] / n;
		double bvar = E->pend_sq[j] / n - bmean * bmean;
		if (!(bvar > 0)) /* rounding below zero, or a constant feature */
			bvar = 0;
		double delta = bmean - E->mean[j];
		double m2 = E->var[j] * E->count + bvar * n + delta * delta * E->count * n / tot;
		E->mean[j] += delta * n / tot;
		E->var[j] = m2 / tot;
		E->pend_sum[j] = E->pend_sq[j] = 0;
	}
	E->count = tot;
	E->pend_count = 0;
	norm_publish(E);
}

static seed_evo_algo algo_of(seed_config_algorithm a)
{
	switch (a) {
	case SEED_CONFIG_GA:
		return SEED_EVO_GA;
	case SEED_CONFIG_RS:
		return SEED_EVO_RS;
	case SEED_CONFIG_SNES:
		return SEED_EVO_SNES;
	case SEED_CONFIG_ARS:
		return SEED_EVO_ARS;
	default:
		return SEED_EVO_ES;
	}
}

int seed_evolver_new(seed_evolver **out, const seed_config *cfg, const seed_env_spec *spec, double now,
                     seed_err *err)
{
	*out = NULL;
	if (!SEED_CONFIG_IS_EVO(cfg->algorithm))
		return seed_err_set(err, -EINVAL, "evolver: algorithm %s is not es, ga, rs, snes or ars",
		                    seed_config_algorithm_name(cfg->algorithm));
	seed_env_spec probed;
	if (!spec) {
		int prc = seed_env_probe(cfg->env, cfg->env_options, &probed, err);
		if (prc)
			return prc;
		spec = &probed;
	}
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
	else if (rc == 0)
		rc = check_policy(E, err);
	if (rc == 0 && seed_model_state_floats(E->model) > 0)
		rc = seed_err_set(err, -EINVAL,
		                  "evolver: algorithm %s takes a model without a core (the population "
		                  "server keeps no recurrent state); the model has an LSTM core",
		                  seed_config_algorithm_name(cfg->algorithm));
	const seed_config_evolution *ev = &cfg->evolution;
	if (rc == 0)
		rc = seed_noise_new(&E->noise, ev->noise_seed, ev->noise_size, err);
	if (rc == 0) {
		/* ES's, SNES's and ARS's first centre: the model's own
		 * initialisation, or zero (centre_init, seed_evo_new's; a
		 * restored run takes the checkpoint's). */
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
		ec.lr_sigma = ev->lr_sigma;
		ec.temperature = ev->temperature;
		ec.centre_init =
		    ev->centre_init == SEED_CONFIG_CENTRE_ZERO ? SEED_EVO_CENTRE_ZERO : SEED_EVO_CENTRE_MODEL;
		ec.top = ev->top;
		ec.reward_shift = ev->reward_shift;
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
	norm_init(E);
	norm_publish(E);
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
	free(E->mean);
	free(E->var);
	free(E->pend_sum);
	free(E->pend_sq);
	free(E->fmean);
	free(E->fvar);
	free(E);
	*pE = NULL;
}

int seed_evolver_restore(seed_evolver *E, const seed_checkpoint *ck, double now, seed_err *err)
{
	int64_t n = COUNTERS;
	seed_tensor t;
	int rc = seed_checkpoint_expect(ck, "evolver.counters", SEED_DTYPE_I64, 1, &n, &t, err);
	seed_tensor tn;
	int64_t nn = 2 * E->D + 1;
	if (rc == 0 && E->D > 0)
		rc = seed_checkpoint_expect(ck, "evolver.obs_norm", SEED_DTYPE_F64, 1, &nn, &tn, err);
	if (rc == 0)
		rc = seed_evo_restore(E->evo, ck, err);
	if (rc)
		return rc;
	if (E->D > 0) {
		const unsigned char *b = tn.data;
		for (int64_t j = 0; j < E->D; j++) {
			memcpy(&E->mean[j], b + 8 * j, 8);
			memcpy(&E->var[j], b + 8 * (E->D + j), 8);
			E->pend_sum[j] = E->pend_sq[j] = 0;
		}
		memcpy(&E->count, b + 8 * 2 * E->D, 8);
		E->pend_count = 0;
		norm_publish(E);
	}
	int64_t c[COUNTERS];
	memcpy(c, t.data, sizeof c);
	/* A checkpoint without agent_steps counted agent steps as frames:
	 * frames stand at them until an episode frame says its frame skip
	 * (seed_evolver_feed).  doc/checkpoints.md, "Frames". */
	E->st.frames = c[0];
	E->st.agent_steps = ck->agent_steps >= 0 ? ck->agent_steps : c[0];
	E->st.frames_from_steps = ck->agent_steps < 0;
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

/* The episode seed of round g under common episodes: a mix of the run's
 * seed, the generation and the phase, in [1, 2^63) as the frame's int
 * carries it; a new one every round, so members are not fitted to a few
 * episodes. */
static uint64_t round_episode_seed(uint64_t seed, const seed_evo_gen *g)
{
	seed_rng r;
	seed_rng_init(&r, seed ^ 0xc0ffee5eedull, (uint64_t)g->generation * 2 + (uint64_t)g->phase);
	uint64_t v = seed_rng_u64(&r) & INT64_MAX;
	return v ? v : 1;
}

int seed_evolver_generation_frame(seed_evolver *E, seed_buf *out, seed_err *err)
{
	seed_frame f;
	seed_evo_gen g = *seed_evo_current(E->evo);
	if (E->spec.action_space == SEED_ACTIONS_BOX)
		g.action_noise = E->cfg->evolution.action_noise;
	if (E->D > 0) {
		g.obs_dim = E->D;
		g.obs_mean = E->fmean;
		g.obs_var = E->fvar;
	}
	int rc = seed_evo_gen_to_frame(&g, 0, &f, err);
	if (rc)
		return rc;
	const seed_config_evolution *ev = &E->cfg->evolution;
	rc = seed_frame_set_str(&f, "model", E->cfg->model);
	if (rc == 0)
		rc = seed_frame_set_int(&f, "episode_cap", ev->episode_cap);
	if (rc == 0 && ev->common_episodes)
		rc = seed_frame_set_int(&f, "episode_seed", (int64_t)round_episode_seed(E->cfg->seed, &g));
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

/* The observation moments an episode frame may carry (obs_count, obs_sum,
 * obs_sumsq: seed-frames(7)), added to the pending ones; a model without
 * "obs_norm" has no use for them.  -SEED_EFRAME when they do not fit the
 * model's observations (nothing taken). */
static int take_moments(seed_evolver *E, const seed_frame *f, seed_err *err)
{
	int64_t n = seed_frame_int(f, "obs_count", 0);
	const seed_tensor *sum = seed_frame_tensor(f, "obs_sum"), *sq = seed_frame_tensor(f, "obs_sumsq");
	if (E->D == 0 || n <= 0 || !sum || !sq)
		return 0;
	if (sum->dtype != SEED_DTYPE_F64 || sq->dtype != SEED_DTYPE_F64 || sum->rank != 1 || sq->rank != 1 ||
	    sum->shape[0] != E->D || sq->shape[0] != E->D)
		return seed_err_set(err, -SEED_EFRAME,
		                    "episode frame: 'obs_sum' and 'obs_sumsq' must be f64[%" PRId64
		                    "], the model's observation features",
		                    E->D);
	const unsigned char *a = sum->data, *b = sq->data;
	for (int64_t j = 0; j < E->D; j++) {
		double x, y;
		memcpy(&x, a + 8 * j, 8);
		memcpy(&y, b + 8 * j, 8);
		if (!isfinite(x) || !isfinite(y) || y < 0)
			return seed_err_set(err, -SEED_EFRAME,
			                    "episode frame: 'obs_sum'[%" PRId64 "] %g or 'obs_sumsq'[%" PRId64
			                    "] %g is not a finite sum (of squares)",
			                    j, x, j, y);
	}
	for (int64_t j = 0; j < E->D; j++) {
		double x, y;
		memcpy(&x, a + 8 * j, 8);
		memcpy(&y, b + 8 * j, 8);
		E->pend_sum[j] += x;
		E->pend_sq[j] += y;
	}
	E->pend_count += (double)n;
	return 0;
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
	int rc2 = take_moments(E, f, err);
	if (rc2)
		return rc2;
	int64_t skip = seed_frame_int(f, "frame_skip", 1);
	if (E->st.frames_from_steps) {
		E->st.frames = E->st.agent_steps * skip;
		E->mark_frames *= skip;
		E->st.frames_from_steps = false;
	}
	int reported = 0;
	for (int64_t i = 0; i < N; i++) {
		int64_t g = int_at(gen, i), m = int_at(mem, i), l = int_at(len, i);
		float r;
		memcpy(&r, (const uint8_t *)ret->data + 4 * i, 4);
		if (m < 0) { /* played before any generation: not evolution's */
			E->st.ignored++;
			continue;
		}
		E->st.frames += l > 0 ? l * skip : 0;
		E->st.agent_steps += l > 0 ? l : 0;
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
	norm_merge(E);
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
	if (seed_evo_algo_centred(algo_of(E->cfg->algorithm)))
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
	if (E->st.frames_from_steps) /* frames not known yet: no line (learner.c) */
		return NULL;
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
	json_object_set_new(o, "agent_steps", json_integer(E->st.agent_steps));
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
	seed_checkpoint_tensor *ts = seed_xcalloc((size_t)nt + SEED_EVO_STATE_TENSORS + 3, sizeof *ts);
	double *norm = NULL;
	int64_t nn = 2 * E->D + 1;
	for (int i = 0; i < nt; i++) {
		const seed_model_param *p = seed_model_param_at(E->model, i);
		ts[i].name = p->name;
		ts[i].tensor = seed_tensor_view(E->best + p->offset, SEED_DTYPE_F32, p->rank, p->shape);
		/* The statistics the members normalised with, where the
		 * network's own would be (noise and updates moved those). */
		float *dst = E->best + p->offset;
		if (strcmp(p->name, "obs_norm.mean") == 0)
			memcpy(dst, E->fmean, (size_t)E->D * sizeof *dst);
		else if (strcmp(p->name, "obs_norm.var") == 0)
			memcpy(dst, E->fvar, (size_t)E->D * sizeof *dst);
		else if (strcmp(p->name, "obs_norm.count") == 0)
			dst[0] = (float)E->count;
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
	if (E->D > 0) { /* exact, for --resume: the model's tensors are floats */
		norm = seed_xcalloc((size_t)nn, sizeof *norm);
		memcpy(norm, E->mean, (size_t)E->D * sizeof *norm);
		memcpy(norm + E->D, E->var, (size_t)E->D * sizeof *norm);
		norm[2 * E->D] = E->count;
		ts[n].name = "evolver.obs_norm";
		ts[n++].tensor = seed_tensor_view(norm, SEED_DTYPE_F64, 1, &nn);
	}
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
	    .agent_steps = E->st.frames_from_steps ? -1 : E->st.agent_steps,
	    .policy_version = E->st.generation,
	    .optim_step = E->st.rounds,
	    .wall_time = seed_evolver_wall_time(E, E->now),
	    .ntensors = (size_t)n,
	    .tensors = ts,
	};
	t0 = seed_now_s();
	rc = seed_config_checkpoint_save(E->cfg, E->dir, &ck, err);
	free(ts);
	free(norm);
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
