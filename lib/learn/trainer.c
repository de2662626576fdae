/* trainer.c: the learner and the evolver behind one interface
 * (seed/trainer.h).
 *
 * A trainer holds one of the two and a table of its functions; every
 * seed_trainer_* call is one call of the table.  The evolver's functions
 * that take the caller's clock get seed_now_s.
 */
#include "trainer_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seed/blas.h"
#include "seed/buf.h"
#include "seed/clock.h"
#include "seed/evolve.h"
#include "seed/learner.h"
#include "seed/limits.h"

/* ---- the learner ------------------------------------------------------- */

static int l_restore(seed_trainer *t, const seed_checkpoint *ck, seed_err *err)
{
	return seed_learner_restore(t->L, ck, err);
}

static int l_set_device(seed_trainer *t, const char *device, seed_err *err)
{
	return seed_learner_set_device(t->L, device, err);
}

static int l_open_dir(seed_trainer *t, const char *dir, seed_err *err)
{
	return seed_learner_open_dir(t->L, dir, err);
}

static seed_model *l_model(seed_trainer *t)
{
	return seed_learner_model(t->L);
}

static int l_feed(seed_trainer *t, const seed_frame *f, seed_err *err)
{
	return seed_learner_feed(t->L, f, err);
}

static int l_tick(seed_trainer *t, seed_err *err)
{
	return 0;
}

static double l_tick_in(const seed_trainer *t)
{
	return INFINITY;
}

static const char *l_done(const seed_trainer *t)
{
	return seed_learner_done(t->L);
}

static int l_publish_frame(seed_trainer *t, seed_buf *out, seed_err *err)
{
	return seed_learner_params_frame(t->L, out, err);
}

static int64_t l_published(const seed_trainer *t)
{
	return seed_learner_get_status(t->L)->policy_version;
}

static int l_save(seed_trainer *t, bool last, seed_err *err)
{
	return seed_learner_save(t->L, last, err);
}

static json_t *l_metrics(seed_trainer *t)
{
	return seed_learner_metrics(t->L);
}

static void l_progress(const seed_trainer *t, const json_t *m, char *buf, size_t n)
{
	seed_learner_progress(t->L, m, buf, n);
}

static void l_summary(const seed_trainer *t, const char *why, char *buf, size_t n)
{
	seed_learner_summary(t->L, why, buf, n);
}

static void l_describe(seed_trainer *t, char *buf, size_t n)
{
	char model[512];
	seed_model_summary(seed_learner_model(t->L), model, sizeof model);
	snprintf(buf, n, "%s on %s, %s", model, t->cfg->env, seed_blas_info());
}

/* The updates' phases, timed by the learner. */
static void l_times(const seed_trainer *t, double *phase)
{
	const seed_learner_status *st = seed_learner_get_status(t->L);
	phase[SEED_PHASE_FORWARD] = st->time_forward;
	phase[SEED_PHASE_BACKWARD] = st->time_backward;
	phase[SEED_PHASE_OPTIM] = st->time_optim;
}

static void l_free(seed_trainer *t)
{
	seed_learner_free(&t->L);
}

static const trainer_ops learner_ops = {
    .restore = l_restore,
    .set_device = l_set_device,
    .open_dir = l_open_dir,
    .model = l_model,
    .feed = l_feed,
    .tick = l_tick,
    .tick_in = l_tick_in,
    .done = l_done,
    .publish_frame = l_publish_frame,
    .published = l_published,
    .save = l_save,
    .metrics = l_metrics,
    .progress = l_progress,
    .summary = l_summary,
    .describe = l_describe,
    .times = l_times,
    .free = l_free,
    .phases = SEED_PHASE_BIT(SEED_PHASE_WAIT) | SEED_PHASE_BIT(SEED_PHASE_TAKE) |
              SEED_PHASE_BIT(SEED_PHASE_FORWARD) | SEED_PHASE_BIT(SEED_PHASE_BACKWARD) |
              SEED_PHASE_BIT(SEED_PHASE_OPTIM) | SEED_PHASE_BIT(SEED_PHASE_PUBLISH) |
              SEED_PHASE_BIT(SEED_PHASE_CHECKPOINT),
    .republish_s = 0.5,
};

/* ---- the evolver ------------------------------------------------------- */

static int e_restore(seed_trainer *t, const seed_checkpoint *ck, seed_err *err)
{
	return seed_evolver_restore(t->E, ck, seed_now_s(), err);
}

static int e_set_device(seed_trainer *t, const char *device, seed_err *err)
{
	if (strcmp(device, "cpu") == 0)
		return 0;
	return seed_err_set(
	    err, -EINVAL,
	    "algorithm %s runs no backward pass; its update (a few vector operations a round) is "
	    "the CPU's",
	    seed_config_algorithm_name(t->cfg->algorithm));
}

static int e_open_dir(seed_trainer *t, const char *dir, seed_err *err)
{
	return seed_evolver_open_dir(t->E, dir, err);
}

static seed_model *e_model(seed_trainer *t)
{
	return seed_evolver_model(t->E);
}

static int e_feed(seed_trainer *t, const seed_frame *f, seed_err *err)
{
	int k = seed_evolver_feed(t->E, f, err);
	if (k < 0)
		return k;
	/* A round is finished by the step after the episodes that complete it. */
	return seed_evolver_step(t->E, seed_now_s(), err);
}

static int e_tick(seed_trainer *t, seed_err *err)
{
	return seed_evolver_step(t->E, seed_now_s(), err);
}

static double e_tick_in(const seed_trainer *t)
{
	return seed_evolver_deadline_in(t->E, seed_now_s());
}

static const char *e_done(const seed_trainer *t)
{
	return seed_evolver_done(t->E);
}

static int e_publish_frame(seed_trainer *t, seed_buf *out, seed_err *err)
{
	return seed_evolver_generation_frame(t->E, out, err);
}

static int64_t e_published(const seed_trainer *t)
{
	return seed_evolver_get_status(t->E)->generation;
}

static int e_save(seed_trainer *t, bool last, seed_err *err)
{
	return seed_evolver_save(t->E, err);
}

static json_t *e_metrics(seed_trainer *t)
{
	return seed_evolver_metrics(t->E, seed_now_s());
}

static void e_progress(const seed_trainer *t, const json_t *m, char *buf, size_t n)
{
	const seed_evo_stats *s = seed_evolver_stats(t->E);
	snprintf(buf, n,
	         "generation %" PRId64 ", best %.4g, mean %.4g, elite %.4g, %" PRId64 " frames, %.0f fps",
	         s->generation, s->best, s->mean, s->elite, seed_evolver_get_status(t->E)->frames,
	         json_number_value(json_object_get(m, "frames_per_s")));
}

static void e_summary(const seed_trainer *t, const char *why, char *buf, size_t n)
{
	seed_evolver_summary(t->E, why, seed_now_s(), buf, n);
}

static void e_describe(seed_trainer *t, char *buf, size_t n)
{
	char model[512];
	seed_model_summary(seed_evolver_model(t->E), model, sizeof model);
	const seed_config_evolution *ev = &t->cfg->evolution;
	snprintf(buf, n, "%s on %s, %s population %d, noise table %" PRId64 " floats (%.0f MiB)", model,
	         t->cfg->env, seed_config_algorithm_name(t->cfg->algorithm), ev->population, ev->noise_size,
	         (double)ev->noise_size * 4 / (1 << 20));
}

/* The rounds' update (the algorithm's advance) is the optim phase. */
static void e_times(const seed_trainer *t, double *phase)
{
	phase[SEED_PHASE_OPTIM] = seed_evolver_get_status(t->E)->time_update;
}

static void e_free(seed_trainer *t)
{
	seed_evolver_free(&t->E);
}

static const trainer_ops evolver_ops = {
    .restore = e_restore,
    .set_device = e_set_device,
    .open_dir = e_open_dir,
    .model = e_model,
    .feed = e_feed,
    .tick = e_tick,
    .tick_in = e_tick_in,
    .done = e_done,
    .publish_frame = e_publish_frame,
    .published = e_published,
    .save = e_save,
    .metrics = e_metrics,
    .progress = e_progress,
    .summary = e_summary,
    .describe = e_describe,
    .times = e_times,
    .free = e_free,
    .phases = SEED_PHASE_BIT(SEED_PHASE_WAIT) | SEED_PHASE_BIT(SEED_PHASE_TAKE) |
              SEED_PHASE_BIT(SEED_PHASE_OPTIM) | SEED_PHASE_BIT(SEED_PHASE_PUBLISH) |
              SEED_PHASE_BIT(SEED_PHASE_CHECKPOINT),
    .republish_s = 1.0,
    .rounds = true,
};

/* ---- the interface ----------------------------------------------------- */

int seed_trainer_new(seed_trainer **out, const seed_config *cfg, const seed_env_spec *spec, seed_err *err)
{
	seed_trainer *t = seed_xcalloc(1, sizeof *t);
	t->cfg = cfg;
	int rc;
	if (SEED_CONFIG_IS_EVO(cfg->algorithm)) {
		t->ops = &evolver_ops;
		rc = seed_evolver_new(&t->E, cfg, spec, seed_now_s(), err);
	} else {
		t->ops = &learner_ops;
		rc = seed_learner_new(&t->L, cfg, spec, err);
	}
	if (rc) {
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void seed_trainer_free(seed_trainer **pt)
{
	if (!pt || !*pt)
		return;
	(*pt)->ops->free(*pt);
	seed_metrics_close(&(*pt)->metrics);
	seed_tfevents_close(&(*pt)->events);
	free(*pt);
	*pt = NULL;
}

int seed_trainer_restore(seed_trainer *t, const seed_checkpoint *ck, seed_err *err)
{
	return t->ops->restore(t, ck, err);
}

int seed_trainer_set_device(seed_trainer *t, const char *device, seed_err *err)
{
	return t->ops->set_device(t, device, err);
}

int seed_trainer_open_dir(seed_trainer *t, const char *dir, seed_err *err)
{
	return t->ops->open_dir(t, dir, err);
}

double trainer_unix_time(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int seed_trainer_open_metrics(seed_trainer *t, const char *dir, const char *metrics, seed_err *err)
{
	char path[4096];
	if (!metrics && dir) {
		snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
		metrics = path;
	}
	int rc = metrics ? seed_metrics_open(metrics, &t->metrics, err) : 0;
	if (rc == 0 && dir)
		rc = seed_tfevents_open(dir, trainer_unix_time(), &t->events, err);
	return rc;
}

bool seed_trainer_samples(const seed_trainer *t)
{
	return t->L && seed_learner_wants_sequences(t->L);
}

seed_model *seed_trainer_model(seed_trainer *t)
{
	return t->ops->model(t);
}

int64_t seed_trainer_max_frame(seed_trainer *t, const seed_env_spec *spec)
{
	const seed_config *c = t->cfg;
	int64_t rows = c->envs_per_actor > 65536 ? c->envs_per_actor : 65536;
	int64_t episodes = seed_limit_unroll(rows, 1, 0, 0, 0);
	if (t->E) /* 12 bytes more a row: its generation and member */
		return episodes + 12 * rows;
	const seed_model *m = seed_trainer_model(t);
	/* The env's own rows, should the model read another dtype. */
	int64_t obs_bytes = (int64_t)seed_model_obs_bytes(m),
	        env_bytes = (int64_t)seed_env_spec_obs_bytes(spec);
	obs_bytes = env_bytes > obs_bytes ? env_bytes : obs_bytes;
	/* A Box unroll's step holds A floats of action and 2A of parameters
	 * where a discrete one holds one i32 and A logits: bounded as 3A
	 * logits. */
	int A = seed_model_num_actions(m), S = seed_model_state_floats(m), T1 = c->unroll_length + 1;
	if (seed_model_policy_kind(m) == SEED_POLICY_GAUSSIAN)
		A *= 3;
	if (!seed_trainer_samples(t))
		return seed_limit_unroll(rows, T1, obs_bytes, A, S);
	/* An unroll frame's fields plus, per row, run, actor, key and weight
	 * (at most 24 bytes more, which seed_limit_priority's 12 per row and
	 * its slack cover). */
	int64_t seqs = seed_limit_unroll(c->batch_size, T1, obs_bytes, A, S) +
	               seed_limit_priority(2 * (int64_t)c->batch_size);
	return seqs > episodes ? seqs : episodes;
}

int seed_trainer_feed(seed_trainer *t, const seed_frame *f, seed_err *err)
{
	return t->ops->feed(t, f, err);
}

int seed_trainer_tick(seed_trainer *t, seed_err *err)
{
	return t->ops->tick(t, err);
}

double seed_trainer_tick_in(const seed_trainer *t)
{
	return t->ops->tick_in(t);
}

const char *seed_trainer_done(const seed_trainer *t)
{
	return t->ops->done(t);
}

int seed_trainer_publish_frame(seed_trainer *t, seed_buf *out, seed_err *err)
{
	return t->ops->publish_frame(t, out, err);
}

int64_t seed_trainer_published(const seed_trainer *t)
{
	return t->ops->published(t);
}

int seed_trainer_priority_frame(seed_trainer *t, seed_buf *out, seed_err *err)
{
	if (!t->L)
		return seed_err_set(err, -EINVAL, "trainer: priority frames come from an r2d2 learner");
	return seed_learner_priority_frame(t->L, out, err);
}

int seed_trainer_save(seed_trainer *t, bool last, seed_err *err)
{
	return t->ops->save(t, last, err);
}

json_t *seed_trainer_metrics(seed_trainer *t)
{
	return t->ops->metrics(t);
}

void seed_trainer_progress(const seed_trainer *t, const json_t *metrics, char *buf, size_t n)
{
	t->ops->progress(t, metrics, buf, n);
}

void seed_trainer_summary(const seed_trainer *t, const char *why, char *buf, size_t n)
{
	t->ops->summary(t, why, buf, n);
}

void seed_trainer_describe(seed_trainer *t, char *buf, size_t n)
{
	t->ops->describe(t, buf, n);
}

const char **seed_trainer_sets(const seed_trainer_overrides *o, const char *const *sets, int nsets, int *n)
{
	enum { MADE = 6, LEN = 64 };
	const char **v = seed_xmalloc((size_t)(nsets + MADE) * sizeof *v + MADE * LEN);
	char(*made)[LEN] = (char(*)[LEN])(v + nsets + MADE);
	int k = 0, m = 0;
	for (int i = 0; i < nsets; i++)
		v[k++] = sets[i];
#define SET(seen, ...)                                                                                       \
	if (seen) {                                                                                          \
		snprintf(made[m], LEN, __VA_ARGS__);                                                         \
		v[k++] = made[m++];                                                                          \
	}
	SET(o->frames_seen, "total_frames=%lld", (long long)o->frames);
	SET(o->seed_seen, "seed=%llu", (unsigned long long)o->seed);
	SET(o->lr_seen, "optimizer.lr=%.9g", o->lr);
	SET(o->batch_size_seen, "batch_size=%lld", (long long)o->batch_size);
	SET(o->target_seen, "target_return=%.17g", o->target);
	SET(o->checkpoint_interval_seen, "checkpoint_interval=%.17g", o->checkpoint_interval);
#undef SET
	*n = k;
	return v;
}
