/* learner.c: the learner's core (seed/learner.h): the batch, versions,
 * checkpoints and metrics, around the algorithm that the configuration
 * chooses from the table below (learner_internal.h; algo_vtrace.c,
 * algo_ppo.c, algo_r2d2.c).
 *
 * Invariants: the batch buffers are allocated once, by seed_learner_new,
 * for (T+1)*B rows, with the chosen algorithm's own buffers and no other
 * algorithm's, and never again; add and feed check a whole frame
 * before they copy anything; the version handed out by an update is never past
 * L->reserved while a run directory is open (reserve first, then advance).
 */
#include "learner_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/clock.h"
#include "seed/fsutil.h"
#include "seed/metrics.h"

/* The algorithms, by the configuration's "algorithm": one row each. */
static const struct {
	seed_config_algorithm id;
	const learn_algo *algo;
} algos[] = {
    {SEED_CONFIG_VTRACE, &learn_vtrace},
    {SEED_CONFIG_PPO, &learn_ppo},
    {SEED_CONFIG_R2D2, &learn_r2d2},
};

static const learn_algo *algo_for(seed_config_algorithm id)
{
	for (size_t i = 0; i < sizeof algos / sizeof *algos; i++)
		if (algos[i].id == id)
			return algos[i].algo;
	return NULL;
}

double learn_now(void)
{
	return seed_now_s();
}

/* The shared message of the policy-gradient algorithms. */
int learn_need_actor_critic(const seed_learner *L, const char *what, seed_err *err)
{
	/* A policy and a value, from logits. */
	if (seed_model_head_kind(L->model) != SEED_HEAD_ACTOR_CRITIC)
		return seed_err_set(err, -EINVAL,
		                    "learner: the model has a \"%s\" head, which outputs Q values: %s "
		                    "needs an actor-critic head; a Q-value head needs a Q-learning algorithm "
		                    "(r2d2)",
		                    seed_model_head_name(seed_model_head_kind(L->model)), what);
	return 0;
}

/* The model's policy must suit the environment's actions: a Gaussian for
 * a Box space (without a core: a Box unroll keeps no previous actions), a
 * categorical one or Q values for a discrete space.  Sets L->P. */
static int learn_check_policy(seed_learner *L, seed_err *err)
{
	bool gauss = seed_model_policy_kind(L->model) == SEED_POLICY_GAUSSIAN;
	L->P = seed_model_policy_width(L->model);
	size_t first, count;
	seed_model_trainable(L->model, &first, &count);
	L->obs_norm = first > 0; /* the statistics lead the slab */
	if (L->box && !gauss)
		return seed_err_set(err, -EINVAL,
		                    "learner: %s has a Box action space (A = %d): the model needs "
		                    "a Gaussian policy, \"policy\": {\"type\": \"gaussian\"}",
		                    L->cfg->env, L->A);
	if (!L->box && gauss)
		return seed_err_set(err, -EINVAL,
		                    "learner: %s has %d discrete actions; the model's policy is Gaussian, "
		                    "for Box action spaces",
		                    L->cfg->env, L->A);
	if (L->box && seed_model_state_floats(L->model) > 0)
		return seed_err_set(err, -EINVAL,
		                    "learner: a Gaussian policy with a recurrent core: Box unrolls keep no "
		                    "previous actions; describe the model without \"core\"");
	return 0;
}

int seed_learner_new(seed_learner **out, const seed_config *cfg, const seed_env_spec *spec, seed_err *err)
{
	seed_env_spec probed;
	if (!spec) {
		int prc = seed_env_probe(cfg->env, cfg->env_options, &probed, err);
		if (prc)
			return prc;
		spec = &probed;
	}
	const learn_algo *algo = algo_for(cfg->algorithm);
	if (!algo)
		return seed_err_set(err, -EINVAL, "learner: algorithm %s is not a gradient learner's",
		                    seed_config_algorithm_name(cfg->algorithm));
	bool box = spec->action_space == SEED_ACTIONS_BOX;
	if (cfg->normalize_reward && algo->sequences)
		return seed_err_set(err, -EINVAL,
		                    "learner: normalize_reward is for the policy-gradient learners (ppo, "
		                    "vtrace), not %s",
		                    algo->name);
	if (box && algo->sequences)
		return seed_err_set(err, -EINVAL,
		                    "learner: %s has a Box action space (A = %d); algorithm %s "
		                    "learns Q values of discrete actions: use ppo or vtrace with a Gaussian "
		                    "policy",
		                    cfg->env, spec->num_actions, algo->name);
	seed_learner *L = seed_xcalloc(1, sizeof *L);
	L->cfg = cfg;
	L->algo = algo;
	L->spec = *spec;
	L->obs_bytes = seed_env_spec_obs_bytes(spec);
	L->A = spec->num_actions;
	L->box = box;
	L->T1 = cfg->unroll_length + 1;
	L->B = cfg->batch_size;
	int rc = seed_model_new(&L->model, cfg->model, spec->obs_dtype, spec->obs_rank, spec->obs_shape, L->A,
	                        L->T1 * L->B, err);
	if (rc == 0)
		rc = learn_check_policy(L, err);
	if (rc == 0)
		rc = algo->check(L, err);
	if (rc == 0 && algo->target)
		rc = seed_model_new(&L->target, cfg->model, spec->obs_dtype, spec->obs_rank, spec->obs_shape,
		                    L->A, L->T1 * L->B, err);
	if (rc == 0)
		rc = seed_optim_new(&L->optim, &cfg->optim, seed_model_num_params(L->model), err);
	if (rc) {
		seed_learner_free(&L);
		return rc;
	}
	seed_rng_init(&L->rng, cfg->seed, 0x1ea);
	seed_model_init(L->model, &L->rng);
	if (L->target) /* the target network starts as a copy of the online one */
		seed_model_copy_params(L->target, L->model);
	learn_alloc_batch(L);
	if (cfg->normalize_reward && !algo->sequences &&
	    seed_reward_norm_new(&L->rnorm, cfg->discount, cfg->reward_clip, NULL))
		abort(); /* the configuration checked both */
	L->alg = algo->alloc(L);
	L->returns = seed_xcalloc((size_t)cfg->return_window, sizeof(double));
	L->st.mean_return = NAN;
	L->st.grad_norm = NAN;
	L->st.lr = cfg->lr;
	L->st.saved_updates = L->st.saved_frames = -1;
	L->src_reserved = L->dir_reserved = -1;
	L->wall0 = learn_now();
	L->mark.t = L->wall0;
	*out = L;
	return 0;
}

void seed_learner_free(seed_learner **Lp)
{
	if (!Lp || !*Lp)
		return;
	seed_learner *L = *Lp;
	if (L->alg)
		L->algo->free(L->alg);
	seed_model_free(&L->model);
	seed_model_free(&L->target);
	seed_optim_free(&L->optim);
	for (int k = 0; k < SEED_UNROLL_NFIELDS; k++)
		free(L->col[k]);
	free(L->rewards_t);
	free(L->row_key);
	seed_reward_norm_free(&L->rnorm);
	free(L->discounts_t);
	free(L->state0);
	free(L->prev_action);
	free(L->reset);
	free(L->keys);
	free(L->weights);
	free(L->last_keys);
	free(L->priorities);
	free(L->returns);
	free(L->dir);
	free(L);
	*Lp = NULL;
}

/* Reserve versions up to at least v in the run directory, in a block. */
static int reserve(seed_learner *L, int64_t v, seed_err *err)
{
	if (!L->dir || v <= L->reserved)
		return 0;
	int64_t through = v + SEED_LEARNER_VERSION_BLOCK - 1;
	int rc = seed_checkpoint_reserve(L->dir, through, err);
	if (rc == 0)
		L->reserved = through;
	return rc;
}

/* The first version to hand out: the restored one (or 0), moved past every
 * reservation that goes beyond it, since those versions may have named
 * parameters this learner never had. */
static int settle_version(seed_learner *L, seed_err *err)
{
	int64_t base = L->restored ? L->ck_version : -1;
	int64_t v = L->restored ? L->ck_version : 0;
	if (L->src_reserved > base && L->src_reserved + 1 > v)
		v = L->src_reserved + 1;
	if (L->dir_reserved > base && L->dir_reserved + 1 > v)
		v = L->dir_reserved + 1;
	int rc = reserve(L, v, err);
	if (rc == 0)
		L->st.policy_version = v;
	return rc;
}

/* The directory part of path ("." for a bare name), in a new string. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strcpy(seed_xmalloc(2), ".");
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	char *d = seed_xmalloc(n + 1);
	memcpy(d, path, n);
	d[n] = '\0';
	return d;
}

int seed_learner_set_device(seed_learner *L, const char *device, seed_err *err)
{
	const char *was = seed_model_device(L->model);
	char old[32];
	snprintf(old, sizeof old, "%s", was);
	int rc = seed_model_set_device(L->model, device, err);
	if (rc == 0 && L->target && (rc = seed_model_set_device(L->target, device, err)) < 0)
		seed_model_set_device(L->model, old, NULL); /* back where it was: cannot fail */
	return rc;
}

/* Put return x in the window of the last return_window returns. */
static void take_return(seed_learner *L, float x)
{
	int W = L->cfg->return_window;
	L->returns[L->ret_at] = x;
	L->ret_at = (L->ret_at + 1) % W;
	if (L->st.nreturns < W)
		L->st.nreturns++;
}

/* The window's mean into the status (NaN while it is empty). */
static void window_mean(seed_learner *L)
{
	double s = 0;
	for (int i = 0; i < L->st.nreturns; i++)
		s += L->returns[i];
	L->st.mean_return = L->st.nreturns ? s / L->st.nreturns : NAN;
}

int seed_learner_restore(seed_learner *L, const seed_checkpoint *ck, seed_err *err)
{
	int rc = seed_checkpoint_load_model(ck, L->model, err);
	if (rc)
		return rc;
	float *state = seed_optim_state(L->optim);
	int64_t n = (int64_t)seed_optim_numel(L->optim);
	for (int i = 0; i < seed_optim_slots(L->optim); i++) {
		char name[64];
		snprintf(name, sizeof name, "optim.%s", seed_optim_slot_name(L->optim, i));
		seed_tensor t;
		rc = seed_checkpoint_expect(ck, name, SEED_DTYPE_F32, 1, &n, &t, err);
		if (rc)
			return rc;
		memcpy(state + (size_t)i * (size_t)n, t.data, (size_t)n * sizeof(float));
	}
	seed_optim_set_steps(L->optim, ck->optim_step);
	float *tparams = L->target ? seed_model_params(L->target) : NULL;
	for (int i = 0; L->target && i < seed_model_num_tensors(L->target); i++) {
		const seed_model_param *p = seed_model_param_at(L->target, i);
		char name[80];
		snprintf(name, sizeof name, "target.%s", p->name);
		seed_tensor t;
		rc = seed_checkpoint_expect(ck, name, SEED_DTYPE_F32, p->rank, p->shape, &t, err);
		if (rc)
			return rc;
		memcpy(tparams + p->offset, t.data, p->numel * sizeof(float));
	}
	if (L->target)
		L->st.target_updates = ck->step / L->cfg->r2d2.target_update_period;
	/* The return window goes on where it was (a checkpoint saved before
	 * an episode ended, or by an older Seed, has none): its last
	 * return_window returns, oldest first. */
	const seed_tensor *ret = seed_checkpoint_get(ck, "learner.returns");
	if (ret && (ret->dtype != SEED_DTYPE_F32 || ret->rank != 1))
		return seed_err_set(err, -EINVAL, "%s: tensor 'learner.returns' is not f32 [N]",
		                    seed_checkpoint_file(ck) ? seed_checkpoint_file(ck) : "checkpoint");
	int64_t nret = ret ? ret->shape[0] : 0;
	for (int64_t i = nret > L->cfg->return_window ? nret - L->cfg->return_window : 0; i < nret; i++) {
		float x;
		memcpy(&x, (const uint8_t *)ret->data + 4 * i, 4);
		take_return(L, x);
	}
	window_mean(L);
	/* The reward scaler's statistics (count, mean, variance), when the
	 * checkpoint has them; its environments' returns start at 0. */
	const seed_tensor *rms = L->rnorm ? seed_checkpoint_get(ck, "learner.reward_rms") : NULL;
	if (rms) {
		double s[3];
		if (rms->dtype != SEED_DTYPE_F64 || rms->rank != 1 || rms->shape[0] != 3)
			return seed_err_set(err, -EINVAL, "%s: tensor 'learner.reward_rms' is not f64 [3]",
			                    seed_checkpoint_file(ck) ? seed_checkpoint_file(ck)
			                                             : "checkpoint");
		memcpy(s, rms->data, sizeof s);
		rc = seed_reward_norm_set_stats(L->rnorm, s, err);
		if (rc)
			return rc;
	}
	int64_t src = -1;
	const char *file = seed_checkpoint_file(ck);
	if (file) {
		char *d = dir_of(file);
		rc = seed_checkpoint_reserved(d, &src, err);
		free(d);
		if (rc)
			return rc;
	}
	L->st.updates = ck->step;
	L->st.optim_steps = ck->optim_step;
	/* The counters.  A checkpoint without agent_steps (-1) was written
	 * when Seed counted agent steps and called them frames: its frames
	 * are agent steps, and the emulator frames are those times the frame
	 * skip, which only the frames to come can say (learn_know_skip); until
	 * then frames stand at agent_steps.  doc/checkpoints.md, "Frames". */
	L->st.agent_steps = ck->agent_steps >= 0 ? ck->agent_steps : ck->frames;
	L->st.frames = ck->frames;
	L->st.frames_from_steps = ck->agent_steps < 0;
	L->rng = ck->rng;
	L->wall_before = ck->wall_time;
	L->wall0 = learn_now();
	L->mark.t = L->wall0;
	L->mark.frames = ck->frames;
	L->mark.updates = ck->step;
	L->restored = true;
	L->ck_version = ck->policy_version;
	L->src_reserved = src;
	return settle_version(L, err);
}

void learn_know_skip(seed_learner *L, int64_t skip)
{
	if (!L->st.frames_from_steps)
		return;
	/* Frames stood at agent steps, and so did their marks. */
	L->st.frames = L->st.agent_steps * skip;
	L->mark.frames *= skip;
	if (L->st.saved_frames > 0)
		L->st.saved_frames *= skip;
	L->st.frames_from_steps = false;
}

int seed_learner_open_dir(seed_learner *L, const char *dir, seed_err *err)
{
	int64_t r;
	int rc = seed_fs_mkdirs(dir, err);
	if (rc == 0)
		rc = seed_checkpoint_reserved(dir, &r, err);
	if (rc)
		return rc;
	free(L->dir);
	L->dir = strcpy(seed_xmalloc(strlen(dir) + 1), dir);
	L->reserved = -1;
	L->dir_reserved = r;
	return settle_version(L, err);
}

int seed_learner_add(seed_learner *L, const seed_frame *f, int first, seed_err *err)
{
	int64_t Bf;
	int rc = learn_check_rows(L, f, &Bf, err);
	if (rc)
		return rc;
	if (first < 0 || first > Bf)
		return seed_err_set(err, -EINVAL, "%s %d of %" PRId64,
		                    L->algo->sequences ? "sequences frame: sequence" : "unroll frame: unroll",
		                    first, Bf);
	return learn_take_rows(L, f, first);
}

int seed_learner_add_episodes(seed_learner *L, const seed_frame *f, seed_err *err)
{
	if (f->type != SEED_FRAME_EPISODE)
		return seed_err_set(err, -SEED_EFRAME, "a %s frame, not an episode frame",
		                    seed_frame_type_name(f->type));
	int rc = seed_frame_validate(f, err);
	if (rc)
		return rc;
	const seed_tensor *r = seed_frame_tensor(f, "return");
	const seed_tensor *len = seed_frame_tensor(f, "length");
	int64_t skip = seed_frame_int(f, "frame_skip", 1);
	for (int64_t i = 0; len && i < len->shape[0]; i++) {
		int32_t n;
		memcpy(&n, (const uint8_t *)len->data + 4 * i, 4);
		L->st.env_frames += n > 0 ? n * skip : 0;
	}
	for (int64_t i = 0; i < r->shape[0]; i++) {
		float x;
		memcpy(&x, (const uint8_t *)r->data + 4 * i, 4);
		take_return(L, x);
		L->st.episodes++;
	}
	window_mean(L);
	return 0;
}

int seed_learner_feed(seed_learner *L, const seed_frame *f, seed_err *err)
{
	if (f->type == SEED_FRAME_EPISODE)
		return seed_learner_add_episodes(L, f, err);
	if (f->type != SEED_FRAME_UNROLL && f->type != SEED_FRAME_SEQUENCES)
		return seed_err_set(err, -SEED_EFRAME, "a %s frame: the learner takes %s and episode frames",
		                    seed_frame_type_name(f->type),
		                    L->algo->sequences ? "sequences" : "unroll");
	/* Checked once, taken in as many pieces as batches it fills. */
	int64_t Bf;
	int rc = learn_check_rows(L, f, &Bf, err);
	if (rc)
		return rc;
	int updates = 0;
	for (int64_t at = 0, k; at < Bf && (k = learn_take_rows(L, f, at)) != 0; at += k) {
		if (seed_learner_full(L)) {
			rc = seed_learner_update(L, err);
			if (rc)
				return rc;
			updates++;
		}
	}
	return updates;
}

const char *seed_learner_done(const seed_learner *L)
{
	const seed_config *c = L->cfg;
	if (L->st.frames >= c->total_frames)
		return "frame budget reached";
	if (!isnan(c->target_return) && L->st.nreturns >= c->return_window &&
	    L->st.mean_return >= c->target_return)
		return "target return reached";
	return NULL;
}

bool seed_learner_full(const seed_learner *L)
{
	return L->fill == L->B;
}

/* A recurrent core's inputs over the batch's T1 steps, as the server ran
 * it (the reward that came with each observation is the reward column
 * itself): the action before each step (row 0 is the one stored with the
 * unroll) and a reset where an episode begins. */
void learn_core_inputs(seed_learner *L)
{
	size_t B = (size_t)L->B, n = (size_t)L->T1 * B;
	for (size_t i = B; i < n; i++)
		L->prev_action[i] = L->action[i - B];
	for (size_t i = 0; i < n; i++)
		L->reset[i] = L->terminated[i] || L->truncated[i];
}

/* Clip the gradient in the model's slab to max_grad_norm, set the
 * learning rate of the schedule, and take one optimizer step, unless the
 * gradient is not finite: that would poison every parameter, so the step
 * is skipped (and counted). */
void learn_optim_step(seed_learner *L)
{
	const seed_config *c = L->cfg;
	L->st.grad_norm = seed_optim_clip_model(L->model, c->max_grad_norm > 0 ? c->max_grad_norm : INFINITY);
	L->st.lr =
	    c->lr_decay ? seed_optim_lr_linear(c->lr, L->st.frames, c->total_frames, c->lr_min) : c->lr;
	if (!isfinite(L->st.grad_norm))
		L->st.skipped++;
	else
		seed_optim_step_model(L->optim, L->model, (float)L->st.lr);
}

void learn_count_lag(seed_learner *L, size_t first, size_t n)
{
	for (size_t i = first; i < first + n; i++)
		L->st.lag_sum += (double)(L->st.policy_version - L->version[i]);
	L->st.lag_count += (int64_t)n;
}

int seed_learner_update(seed_learner *L, seed_err *err)
{
	if (L->fill != L->B)
		return seed_err_set(err, -EINVAL, "learner: update with %d of %d %s in the batch", L->fill,
		                    L->B, L->algo->sequences ? "sequences" : "unrolls");
	int64_t next = L->st.policy_version + 1;
	int rc = reserve(L, next, err);
	if (rc)
		return rc;
	const seed_config *c = L->cfg;
	int T = L->T1 - 1, B = L->B;
	double t0 = learn_now();
	L->t_backward = 0;
	if (L->rnorm) /* the batch's rewards, scaled in place before any use */
		seed_reward_norm_apply(L->rnorm, L->T1, B, L->row_key, L->reward, L->terminated);
	/* A model that normalises its observations takes the batch's into its
	 * statistics first: steps 0 .. T-1 of each unroll, each observation of
	 * the actors once (an unroll's last step is the next one's first).  The
	 * servers act with them from the version this update publishes. */
	if (L->obs_norm)
		seed_model_obs_norm_update(L->model, T * B, L->obs);
	rc = L->algo->update(L, err);
	if (rc)
		return rc;
	if (!L->algo->steps_itself) {
		/* Forward until the algorithm began its backward pass (all of
		 * it, should one not say when). */
		double t1 = learn_now(), tb = L->t_backward >= t0 ? L->t_backward : t1;
		L->st.time_forward += tb - t0;
		L->st.time_backward += t1 - tb;
		learn_optim_step(L); /* a skipped step still counts its frames */
		L->st.time_optim += learn_now() - t1;
	}
	L->st.optim_steps = seed_optim_steps(L->optim);
	L->st.updates++;
	L->st.agent_steps += (int64_t)T * B;
	L->st.frames += (int64_t)T * L->fill_skip;
	L->fill_skip = 0;
	L->st.policy_version = next;
	if (L->target && L->st.updates % c->r2d2.target_update_period == 0) {
		seed_model_copy_params(L->target, L->model);
		L->st.target_updates++;
	}
	L->fill = 0;
	L->view.fill = 0;
	return 0;
}

int seed_learner_save(seed_learner *L, bool last, seed_err *err)
{
	if (!L->dir)
		return seed_err_set(err, -EINVAL, "learner: no run directory to save into");
	int nt = seed_model_num_tensors(L->model);
	int ns = seed_optim_slots(L->optim);
	int ntg = L->target ? nt : 0; /* the target network's tensors, "target.NAME" */
	int nr = L->st.nreturns > 0;  /* the return window, "learner.returns" */
	int nn = L->rnorm != NULL;    /* the reward scaler's statistics, "learner.reward_rms" */
	seed_checkpoint_tensor *ts = seed_xcalloc((size_t)(nt + ns + ntg + nr + nn), sizeof *ts);
	char(*names)[64] = seed_xcalloc((size_t)(ns + ntg) + 1, sizeof *names);
	float *params = (float *)seed_model_params_read(L->model); /* a view for saving */
	for (int i = 0; i < nt; i++) {
		const seed_model_param *p = seed_model_param_at(L->model, i);
		ts[i].name = p->name;
		ts[i].tensor = seed_tensor_view(params + p->offset, SEED_DTYPE_F32, p->rank, p->shape);
	}
	float *state = seed_optim_state(L->optim);
	int64_t n = (int64_t)seed_optim_numel(L->optim);
	for (int i = 0; i < ns; i++) {
		snprintf(names[i], sizeof names[i], "optim.%s", seed_optim_slot_name(L->optim, i));
		ts[nt + i].name = names[i];
		ts[nt + i].tensor = seed_tensor_view(state + (size_t)i * (size_t)n, SEED_DTYPE_F32, 1, &n);
	}
	float *tparams =
	    L->target ? (float *)seed_model_params_read(L->target) : NULL; /* a view for saving */
	for (int i = 0; i < ntg; i++) {
		const seed_model_param *p = seed_model_param_at(L->target, i);
		snprintf(names[ns + i], sizeof names[ns + i], "target.%s", p->name);
		ts[nt + ns + i].name = names[ns + i];
		ts[nt + ns + i].tensor =
		    seed_tensor_view(tparams + p->offset, SEED_DTYPE_F32, p->rank, p->shape);
	}
	/* The window's returns, oldest first, so that a resumed run's mean
	 * goes on from them instead of starting over from its first
	 * episodes (the returns came as f32: saved exactly). */
	float *window = NULL;
	int64_t nw = L->st.nreturns;
	if (nr) {
		window = seed_xmalloc((size_t)nw * sizeof *window);
		int W = L->cfg->return_window, first = nw < W ? 0 : L->ret_at;
		for (int64_t i = 0; i < nw; i++)
			window[i] = (float)L->returns[(first + i) % W];
		ts[nt + ns + ntg].name = "learner.returns";
		ts[nt + ns + ntg].tensor = seed_tensor_view(window, SEED_DTYPE_F32, 1, &nw);
	}
	double rms[3];
	int64_t n3 = 3;
	if (nn) {
		seed_reward_norm_stats(L->rnorm, rms);
		ts[nt + ns + ntg + nr].name = "learner.reward_rms";
		ts[nt + ns + ntg + nr].tensor = seed_tensor_view(rms, SEED_DTYPE_F64, 1, &n3);
	}
	seed_checkpoint ck = {
	    .step = L->st.updates,
	    .frames = L->st.frames,
	    /* Still unknown: saved as the checkpoint was (no agent_steps, its
	     * frames agent steps), so that the next resume reads it alike. */
	    .agent_steps = L->st.frames_from_steps ? -1 : L->st.agent_steps,
	    .policy_version = L->st.policy_version,
	    .optim_step = seed_optim_steps(L->optim),
	    .rng = L->rng,
	    .wall_time = seed_learner_wall_time(L),
	    .ntensors = (size_t)(nt + ns + ntg + nr + nn),
	    .tensors = ts,
	};
	int rc = seed_config_checkpoint_save(L->cfg, L->dir, &ck, err);
	free(names);
	free(window);
	free(ts);
	if (rc && err) /* say what the directory still holds */
		seed_checkpoint_holds(err->msg, sizeof err->msg, L->dir, "update", L->st.saved_updates,
		                      L->st.updates, true);
	if (rc)
		return rc;
	L->st.saved_updates = L->st.updates;
	L->st.saved_frames = L->st.frames;
	/* Give back what this process will not publish.  Failing to is
	 * harmless: a resume then only skips more versions. */
	if (last && seed_checkpoint_reserve(L->dir, L->st.policy_version, NULL) == 0)
		L->reserved = L->st.policy_version;
	return 0;
}

const seed_learner_status *seed_learner_get_status(const seed_learner *L)
{
	return &L->st;
}

const seed_learner_batch *seed_learner_get_batch(const seed_learner *L)
{
	return &L->view;
}

seed_model *seed_learner_model(seed_learner *L)
{
	return L->model;
}

bool seed_learner_wants_sequences(const seed_learner *L)
{
	return L->algo->sequences;
}

const char *seed_learner_dir(const seed_learner *L)
{
	return L->dir;
}

double seed_learner_wall_time(const seed_learner *L)
{
	return L->wall_before + (learn_now() - L->wall0);
}

void seed_learner_progress(const seed_learner *L, const json_t *metrics, char *buf, size_t n)
{
	const seed_learner_status *st = &L->st;
	if (L->algo->progress) {
		L->algo->progress(L, metrics, buf, n);
		return;
	}
	snprintf(buf, n,
	         "%" PRId64 " frames, %.0f fps, %" PRId64 " updates, return %.1f (%" PRId64
	         " episodes), entropy %.3f, lag %.1f",
	         st->frames, json_number_value(json_object_get(metrics, "fps")), st->updates,
	         st->nreturns ? st->mean_return : 0.0, st->episodes, st->loss.entropy,
	         json_number_value(json_object_get(metrics, "policy_lag")));
}

void seed_learner_summary(const seed_learner *L, const char *why, char *buf, size_t n)
{
	const seed_learner_status *st = &L->st;
	char count[96];
	if (st->frames_from_steps)
		snprintf(count, sizeof count, "%" PRId64 " agent steps (frame skip not known yet)",
		         st->agent_steps);
	else if (st->frames != st->agent_steps)
		snprintf(count, sizeof count, "%" PRId64 " frames (%" PRId64 " agent steps)", st->frames,
		         st->agent_steps);
	else
		snprintf(count, sizeof count, "%" PRId64 " frames", st->frames);
	int at = snprintf(buf, n,
	                  "%s: %s, %" PRId64 " updates, version %" PRId64
	                  ", mean return %.2f over the last %d episodes, %.1f s",
	                  why ? why : "stopped by a signal", count, st->updates, st->policy_version,
	                  st->nreturns ? st->mean_return : 0.0, st->nreturns, seed_learner_wall_time(L));
	if (at < 0 || (size_t)at >= n || !L->dir)
		return;
	seed_checkpoint_holds(buf, n, L->dir, "update", st->saved_updates, st->updates, false);
}

json_t *seed_learner_metrics(seed_learner *L)
{
	const seed_learner_status *st = &L->st;
	double now = learn_now(), dt = now - L->mark.t;
	/* No line while the frames of an old checkpoint are not known: it
	 * would put its points at agent steps on a frames axis. */
	if (dt <= 0 || st->frames_from_steps)
		return NULL;
	int64_t nlag = st->lag_count - L->mark.lag_count;
	double lag = nlag ? (st->lag_sum - L->mark.lag_sum) / (double)nlag : 0;
	const seed_loss_stats *l = &st->loss;
	json_t *o = SEED_METRICS_OBJ(
	    {"time", seed_learner_wall_time(L)}, {"frames", (double)st->frames},
	    {"agent_steps", (double)st->agent_steps}, {"updates", (double)st->updates},
	    {"version", (double)st->policy_version}, {"fps", (double)(st->frames - L->mark.frames) / dt},
	    {"updates_per_s", (double)(st->updates - L->mark.updates) / dt}, {"loss", l->total},
	    {"pg_loss", l->pg_loss}, {"baseline_loss", l->baseline_loss}, {"entropy_loss", l->entropy_loss},
	    {"entropy", l->entropy}, {"mean_rho", l->mean_rho}, {"mean_value", l->mean_value},
	    {"grad_norm", st->grad_norm}, {"lr", st->lr}, {"episodes", (double)st->episodes},
	    {"policy_lag", lag}, {"batch_size", (double)L->B}, {"unroll_length", (double)(L->T1 - 1)},
	    {"skipped_updates", (double)st->skipped});
	json_object_set_new(o, "episode_return", st->nreturns ? json_real(st->mean_return) : json_null());
	json_object_set_new(o, "algorithm", json_string(seed_config_algorithm_name(L->cfg->algorithm)));
	if (L->algo->metrics)
		L->algo->metrics(L, o);
	L->mark.t = now;
	L->mark.frames = st->frames;
	L->mark.updates = st->updates;
	L->mark.lag_sum = st->lag_sum;
	L->mark.lag_count = st->lag_count;
	return o;
}

int seed_learner_params_frame(const seed_learner *L, seed_buf *out, seed_err *err)
{
	int64_t n = (int64_t)seed_model_num_params(L->model);
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_PARAMS);
	seed_frame_set_int(&f, "policy_version", L->st.policy_version);
	seed_frame_set_int(&f, "run", 0);
	seed_frame_set_tensor(
	    &f, "params", seed_tensor_view((float *)seed_model_params_read(L->model), SEED_DTYPE_F32, 1, &n));
	seed_frame_set_str(&f, "model", L->cfg->model);
	seed_buf_reset(out);
	return seed_frame_encode(&f, out, err);
}

int seed_learner_priority_frame(const seed_learner *L, seed_buf *out, seed_err *err)
{
	if (!L->algo->sequences)
		return seed_err_set(err, -EINVAL, "learner: priority frames come from an r2d2 learner");
	if (L->nprio == 0)
		return seed_err_set(err, -EINVAL, "learner: no update yet, so no priorities");
	int64_t N = L->nprio;
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_PRIORITY);
	seed_frame_set_tensor(&f, "key", seed_tensor_view(L->last_keys, SEED_DTYPE_I64, 1, &N));
	seed_frame_set_tensor(&f, "priority", seed_tensor_view(L->priorities, SEED_DTYPE_F32, 1, &N));
	seed_buf_reset(out);
	return seed_frame_encode(&f, out, err);
}

const float *seed_learner_priorities(const seed_learner *L, const int64_t **keys, int *n)
{
	if (keys)
		*keys = L->last_keys;
	if (n)
		*n = L->nprio;
	return L->priorities;
}

seed_model *seed_learner_target_model(seed_learner *L)
{
	return L->target;
}
