/* learner.c: the V-trace learner (seed/learner.h).
 *
 * Invariants: the batch buffers are allocated once, by seed_learner_new,
 * for (T+1)*B rows (the model's logits and the gradients for the T*B
 * transition rows), and never again; add and feed check a whole frame
 * before they copy anything; the version handed out by an update is never past
 * L->reserved while a run directory is open (reserve first, then advance).
 */
#include "seed/learner.h"
#include "seed/unroll.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seed/buf.h"
#include "seed/clock.h"
#include "seed/fsutil.h"
#include "seed/metrics.h"
#include "seed/optim.h"
#include "seed/ppo.h"
#include "seed/r2d2.h"
#include "seed/rng.h"

struct seed_learner {
	const seed_config *cfg;
	seed_env_spec spec;
	size_t obs_bytes;
	int A, T1, B;
	seed_model *model;
	seed_optim *optim;
	seed_rng rng;
	/* The batch being filled, time-major: one buffer per field of the
	 * unroll table (seed_frame_unroll_fields), col[k] of step_bytes[k]
	 * bytes per step; the typed pointers below name the same buffers. */
	int fill;
	uint8_t *col[SEED_UNROLL_NFIELDS];
	size_t step_bytes[SEED_UNROLL_NFIELDS];
	uint8_t *obs;                    /* (T1, B, obs_bytes) */
	int32_t *action, *version;       /* (T1, B) */
	float *reward, *final_value;     /* (T1, B) */
	uint8_t *terminated, *truncated; /* (T1, B) */
	float *blogits;                  /* (T1, B, A) */
	float *logits, *values;          /* (T, B, A), (T1, B): the model's */
	float *rewards_t, *discounts_t;  /* (T, B): the transitions */
	float *dlogits, *dvalues;        /* (T, B, A), (T, B); (T1, ...) with a core */
	/* A recurrent core's inputs (S > 0): each unroll's state before step 0
	 * and its previous action there (from the frame; zeros and -1 when it
	 * has none), and per step the previous actions and the resets. */
	int S;
	float *state0;        /* (B, S) */
	int32_t *prev_action; /* (T1, B) */
	uint8_t *reset;       /* (T1, B) */
	/* R2D2 (r2d2): the target network, the Q values of both networks over
	 * the T1 steps, the gradient into the online Q values over the trained
	 * steps, the episode boundaries, each network's state after the burn-in,
	 * the batch's keys and importance weights, and the last update's keys,
	 * priorities and per-sequence losses. */
	bool r2d2;
	seed_model *target;
	float *q, *qt;                /* (T1, B, A) */
	float *dq;                    /* (T1 - burn_in, B, A) */
	uint8_t *done;                /* (T1, B) */
	float *state_on, *state_tg;   /* (B, S) */
	int64_t *keys;                /* (B) */
	float *weights;               /* (B) */
	int64_t *last_keys;           /* (B) */
	float *priorities, *seq_loss; /* (B) */
	int nprio;                    /* priorities held: 0 before the first update, else B */
	void *loss_ws;                /* seed_loss_workspace_size(T, B, A) bytes */
	/* PPO (ppo): GAE's advantages and value targets over the T*B
	 * transitions (the values at the start of the update stay in values),
	 * the order of the current epoch, and one minibatch of M rows gathered
	 * from it with the model's outputs and gradients. */
	bool ppo;
	int M;
	float *adv, *ret;                            /* (T, B) */
	uint32_t *perm;                              /* (T*B) */
	uint8_t *mb_obs;                             /* (M, obs_bytes) */
	int32_t *mb_action;                          /* (M) */
	float *mb_logits, *mb_blogits, *mb_dlogits;  /* (M, A) */
	float *mb_adv, *mb_ret, *mb_old, *mb_values; /* (M) */
	float *mb_dvalues;                           /* (M) */
	seed_learner_status st;
	seed_learner_batch view;
	double *returns; /* ring of the last return_window returns */
	int ret_at;
	double wall0, wall_before; /* wall_before: seconds trained before a restore */
	double t_backward;         /* when the update's backward pass began (0: none yet) */
	/* Where the current metrics interval started. */
	struct {
		double t, lag_sum;
		int64_t frames, updates, lag_count;
	} mark;
	/* Versions. */
	char *dir;
	int64_t reserved; /* versions up to this one are reserved in dir */
	bool restored;
	int64_t ck_version;                 /* the restored checkpoint's policy_version */
	int64_t src_reserved, dir_reserved; /* found at restore and open; -1: none */
};

int seed_learner_new(seed_learner **out, const seed_config *cfg, const seed_env_spec *spec, seed_err *err)
{
	seed_env_spec probed;
	if (!spec) {
		int prc = seed_env_probe(cfg->env, cfg->env_options, &probed, err);
		if (prc)
			return prc;
		spec = &probed;
	}
	seed_learner *L = seed_xcalloc(1, sizeof *L);
	L->cfg = cfg;
	L->spec = *spec;
	L->obs_bytes = seed_env_spec_obs_bytes(spec);
	L->A = spec->num_actions;
	L->T1 = cfg->unroll_length + 1;
	L->B = cfg->batch_size;
	int rc = seed_model_new(&L->model, cfg->model, spec->obs_dtype, spec->obs_rank, spec->obs_shape, L->A,
	                        L->T1 * L->B, err);
	L->r2d2 = cfg->algorithm == SEED_CONFIG_R2D2;
	L->ppo = cfg->algorithm == SEED_CONFIG_PPO;
	if (rc == 0 && L->r2d2 && seed_model_head_kind(L->model) != SEED_HEAD_DUELING)
		/* R2D2 learns Q values. */
		rc = seed_err_set(err, -EINVAL,
		                  "learner: algorithm r2d2 needs a dueling Q head (\"head\": \"dueling\" in "
		                  "the model); the model has a \"%s\" head",
		                  seed_model_head_name(seed_model_head_kind(L->model)));
	else if (rc == 0 && !L->r2d2 && seed_model_head_kind(L->model) != SEED_HEAD_ACTOR_CRITIC)
		/* V-trace learns a policy and a value, from logits. */
		rc = seed_err_set(err, -EINVAL,
		                  "learner: the model has a \"%s\" head, which outputs Q values: %s "
		                  "needs an actor-critic head; a Q-value head needs a Q-learning algorithm "
		                  "(r2d2)",
		                  seed_model_head_name(seed_model_head_kind(L->model)),
		                  L->ppo ? "PPO" : "V-trace");
	else if (rc == 0 && L->ppo && seed_model_state_floats(L->model) > 0)
		/* Its minibatches are shuffled transitions, which a core's
		 * sequences cannot be cut into. */
		rc = seed_err_set(err, -EINVAL,
		                  "learner: algorithm ppo takes a model without a core (its minibatches "
		                  "are shuffled transitions); the model has an LSTM core");
	if (rc == 0 && L->r2d2)
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
	size_t n = (size_t)L->T1 * (size_t)L->B, A = (size_t)L->A;
	for (int k = 0; k < SEED_UNROLL_NFIELDS; k++) {
		const seed_unroll_field *fd = &seed_frame_unroll_fields[k];
		size_t bytes = fd->extent == SEED_UNROLL_PER_OBS ? L->obs_bytes : seed_dtype_size(fd->dtype);
		if (fd->extent == SEED_UNROLL_PER_ACTION)
			bytes *= A;
		L->step_bytes[k] = bytes;
		L->col[k] = seed_xaligned(n * bytes);
		memset(L->col[k], 0, n * bytes);
	}
	L->obs = L->col[SEED_UNROLL_OBS];
	L->action = (int32_t *)(void *)L->col[SEED_UNROLL_ACTION];
	L->version = (int32_t *)(void *)L->col[SEED_UNROLL_POLICY_VERSION];
	L->reward = (float *)(void *)L->col[SEED_UNROLL_REWARD];
	L->final_value = (float *)(void *)L->col[SEED_UNROLL_FINAL_VALUE];
	L->terminated = L->col[SEED_UNROLL_TERMINATED];
	L->truncated = L->col[SEED_UNROLL_TRUNCATED];
	L->blogits = (float *)(void *)L->col[SEED_UNROLL_LOGITS];
	size_t nt = n - (size_t)L->B; /* T*B transition rows */
	/* With a core the bootstrap step runs in the sequence, with the
	 * others: its logits are computed and get a zero gradient. */
	L->S = seed_model_state_floats(L->model);
	size_t nl = L->S > 0 ? n : nt;
	L->logits = seed_xcalloc(nl * A, sizeof(float));
	L->values = seed_xcalloc(n, sizeof(float));
	L->rewards_t = seed_xcalloc(nt, sizeof(float));
	L->discounts_t = seed_xcalloc(nt, sizeof(float));
	L->dlogits = seed_xcalloc(nl * A, sizeof(float));
	L->dvalues = seed_xcalloc(nl, sizeof(float));
	if (L->S > 0) {
		L->state0 = seed_xcalloc((size_t)L->B * (size_t)L->S, sizeof(float));
		L->prev_action = seed_xcalloc(n, sizeof(int32_t));
		L->reset = seed_xcalloc(n, 1);
	}
	if (L->r2d2) {
		size_t S = (size_t)(L->S > 0 ? L->S : 1), B = (size_t)L->B;
		L->q = seed_xcalloc(n * A, sizeof(float));
		L->qt = seed_xcalloc(n * A, sizeof(float));
		L->dq = seed_xcalloc((n - (size_t)cfg->r2d2.burn_in * B) * A, sizeof(float));
		L->done = seed_xcalloc(n, 1);
		L->state_on = seed_xcalloc(B * S, sizeof(float));
		L->state_tg = seed_xcalloc(B * S, sizeof(float));
		L->keys = seed_xcalloc(B, sizeof(int64_t));
		L->weights = seed_xcalloc(B, sizeof(float));
		L->last_keys = seed_xcalloc(B, sizeof(int64_t));
		L->priorities = seed_xcalloc(B, sizeof(float));
		L->seq_loss = seed_xcalloc(B, sizeof(float));
		L->st.mean_q = L->st.mean_abs_td = L->st.mean_priority = NAN;
	}
	if (L->ppo) {
		size_t M = nt / (size_t)cfg->ppo.minibatches;
		L->M = (int)M;
		L->adv = seed_xcalloc(nt, sizeof(float));
		L->ret = seed_xcalloc(nt, sizeof(float));
		L->perm = seed_xcalloc(nt, sizeof(uint32_t));
		L->mb_obs = seed_xaligned(M * L->obs_bytes);
		L->mb_action = seed_xcalloc(M, sizeof(int32_t));
		L->mb_logits = seed_xcalloc(M * A, sizeof(float));
		L->mb_blogits = seed_xcalloc(M * A, sizeof(float));
		L->mb_dlogits = seed_xcalloc(M * A, sizeof(float));
		L->mb_adv = seed_xcalloc(M, sizeof(float));
		L->mb_ret = seed_xcalloc(M, sizeof(float));
		L->mb_old = seed_xcalloc(M, sizeof(float));
		L->mb_values = seed_xcalloc(M, sizeof(float));
		L->mb_dvalues = seed_xcalloc(M, sizeof(float));
	}
	L->loss_ws = seed_xaligned(seed_loss_workspace_size(L->T1 - 1, L->B, L->A));
	L->returns = seed_xcalloc((size_t)cfg->return_window, sizeof(double));
	L->st.mean_return = NAN;
	L->st.grad_norm = NAN;
	L->st.lr = cfg->lr;
	L->st.saved_updates = L->st.saved_frames = -1;
	L->src_reserved = L->dir_reserved = -1;
	L->view = (seed_learner_batch){
	    .T = L->T1 - 1,
	    .B = L->B,
	    .A = L->A,
	    .obs_bytes = L->obs_bytes,
	    .obs = L->obs,
	    .action = L->action,
	    .reward = L->reward,
	    .terminated = L->terminated,
	    .truncated = L->truncated,
	    .final_value = L->final_value,
	    .version = L->version,
	    .behaviour_logits = L->blogits,
	    .rewards = L->rewards_t,
	    .discounts = L->discounts_t,
	};
	L->wall0 = seed_now_s();
	L->mark.t = L->wall0;
	*out = L;
	return 0;
}

void seed_learner_free(seed_learner **Lp)
{
	if (!Lp || !*Lp)
		return;
	seed_learner *L = *Lp;
	seed_model_free(&L->model);
	seed_model_free(&L->target);
	seed_optim_free(&L->optim);
	free(L->q);
	free(L->qt);
	free(L->dq);
	free(L->done);
	free(L->state_on);
	free(L->state_tg);
	free(L->keys);
	free(L->weights);
	free(L->last_keys);
	free(L->priorities);
	free(L->seq_loss);
	for (int k = 0; k < SEED_UNROLL_NFIELDS; k++)
		free(L->col[k]);
	free(L->logits);
	free(L->values);
	free(L->rewards_t);
	free(L->discounts_t);
	free(L->dlogits);
	free(L->dvalues);
	free(L->state0);
	free(L->prev_action);
	free(L->reset);
	free(L->adv);
	free(L->ret);
	free(L->perm);
	free(L->mb_obs);
	free(L->mb_action);
	free(L->mb_logits);
	free(L->mb_blogits);
	free(L->mb_dlogits);
	free(L->mb_adv);
	free(L->mb_ret);
	free(L->mb_old);
	free(L->mb_values);
	free(L->mb_dvalues);
	free(L->loss_ws);
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
	L->st.frames = ck->frames;
	L->rng = ck->rng;
	L->wall_before = ck->wall_time;
	L->wall0 = seed_now_s();
	L->mark.t = L->wall0;
	L->mark.frames = ck->frames;
	L->mark.updates = ck->step;
	L->restored = true;
	L->ck_version = ck->policy_version;
	L->src_reserved = src;
	return settle_version(L, err);
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

/* Copy one unroll's n rows of size bytes (contiguous, as on the wire, maybe
 * unaligned) into column j of a time-major (n, B) array: row t goes to
 * element t*B + j.  The sizes that CartPole-like streams have (flags,
 * scalars, two logits, four floats of observation) get copies of a
 * constant size, which compile to plain moves where a copy of a variable
 * size is a call per row. */
static void to_column(uint8_t *dst, size_t B, size_t j, const uint8_t *src, size_t n, size_t size)
{
	uint8_t *d = dst + j * size;
	const size_t stride = B * size;
	switch (size) {
	case 1:
		for (size_t t = 0; t < n; t++)
			d[t * stride] = src[t];
		break;
	case 4:
		for (size_t t = 0; t < n; t++)
			memcpy(d + t * stride, src + 4 * t, 4);
		break;
	case 8:
		for (size_t t = 0; t < n; t++)
			memcpy(d + t * stride, src + 8 * t, 8);
		break;
	case 16:
		for (size_t t = 0; t < n; t++)
			memcpy(d + t * stride, src + 16 * t, 16);
		break;
	default:
		for (size_t t = 0; t < n; t++)
			memcpy(d + t * stride, src + size * t, size);
	}
}

/* Whether f is a frame this learner can take whole (see seed_learner_add):
 * an unroll frame for V-trace, a sequences frame for R2D2; *Bf: its rows. */
static int check_unrolls(const seed_learner *L, const seed_frame *f, int64_t *Bf_out, seed_err *err)
{
	if (L->r2d2 && f->type == SEED_FRAME_UNROLL)
		return seed_err_set(err, -SEED_EFRAME,
		                    "an unroll frame: an r2d2 learner takes sequences frames (from "
		                    "seed-replay), not unrolls");
	if (!L->r2d2 && f->type == SEED_FRAME_SEQUENCES)
		return seed_err_set(err, -SEED_EFRAME,
		                    "a sequences frame: a vtrace learner takes unroll frames; sequences "
		                    "are for algorithm r2d2");
	seed_frame_type want = L->r2d2 ? SEED_FRAME_SEQUENCES : SEED_FRAME_UNROLL;
	const char *what = L->r2d2 ? "sequences frame" : "unroll frame";
	if (f->type != want)
		return seed_err_set(err, -SEED_EFRAME, "a %s frame, not a%s %s",
		                    seed_frame_type_name(f->type), L->r2d2 ? "" : "n", what);
	int rc = seed_frame_validate(f, err);
	if (rc)
		return rc;
	const seed_tensor *obs = seed_frame_tensor(f, "obs");
	int64_t Bf = obs->shape[0], T1 = obs->shape[1];
	if (T1 != L->T1)
		return seed_err_set(err, -SEED_EFRAME, "%s: %" PRId64 " steps, expected unroll_length+1 = %d",
		                    what, T1, L->T1);
	int64_t A = seed_frame_int(f, "num_actions", -1);
	if (A != L->A)
		return seed_err_set(err, -SEED_EFRAME,
		                    "%s: field 'num_actions': %" PRId64 ", environment '%s' has %d", what, A,
		                    L->cfg->env, L->A);
	bool same = obs->dtype == L->spec.obs_dtype && obs->rank == 2 + L->spec.obs_rank;
	for (int i = 0; same && i < L->spec.obs_rank; i++)
		same = obs->shape[2 + i] == L->spec.obs_shape[i];
	if (!same)
		return seed_err_set(err, -SEED_EFRAME,
		                    "%s: field 'obs': observations of another dtype or shape than "
		                    "environment '%s' makes",
		                    what, L->cfg->env);
	/* Decoded tensors point into the message: maybe unaligned, so every
	 * element is read with memcpy (a plain load where alignment is free). */
	const uint8_t *act = seed_frame_tensor(f, "action")->data;
	for (int64_t i = 0; i < Bf * T1; i++) {
		int32_t a;
		memcpy(&a, act + 4 * i, 4);
		if (a < 0 || a >= L->A)
			return seed_err_set(err, -SEED_EFRAME,
			                    "%s: field 'action': %" PRId32 " at [%" PRId64 "][%" PRId64
			                    "] is outside [0, %d)",
			                    what, a, i / T1, i % T1, L->A);
	}
	const seed_tensor *st = seed_frame_tensor(f, "state"), *pa = seed_frame_tensor(f, "prev_action");
	if (st && L->S > 0 && st->shape[1] != L->S)
		return seed_err_set(err, -SEED_EFRAME,
		                    "%s: field 'state': %" PRId64
		                    " floats a row, but the model's core keeps %d",
		                    what, st->shape[1], L->S);
	for (int64_t i = 0; pa && L->S > 0 && i < Bf; i++) {
		int32_t a;
		memcpy(&a, (const uint8_t *)pa->data + 4 * i, 4);
		if (a < -1 || a >= L->A)
			return seed_err_set(err, -SEED_EFRAME,
			                    "%s: field 'prev_action': %" PRId32 " at [%" PRId64
			                    "] is outside [-1, %d)",
			                    what, a, i, L->A);
	}
	const seed_tensor *w = L->r2d2 ? seed_frame_tensor(f, "weight") : NULL;
	for (int64_t i = 0; w && i < Bf; i++) {
		float x;
		memcpy(&x, (const uint8_t *)w->data + 4 * i, 4);
		if (!(x >= 0 && x <= 1e30f)) /* NaN fails too */
			return seed_err_set(err, -SEED_EFRAME,
			                    "%s: field 'weight': %g at [%" PRId64
			                    "] is not a finite weight >= 0",
			                    what, (double)x, i);
	}
	*Bf_out = Bf;
	return 0;
}

/* Copy unrolls first, first+1, ... of f, checked by check_unrolls, into
 * the batch until the frame or the batch is used up; return how many. */
static int take_unrolls(seed_learner *L, const seed_frame *f, int64_t first)
{
	const uint8_t *src[SEED_UNROLL_NFIELDS];
	for (int k = 0; k < SEED_UNROLL_NFIELDS; k++)
		src[k] = seed_frame_tensor(f, seed_frame_unroll_fields[k].name)->data;
	const seed_tensor *obs = seed_frame_tensor(f, "obs");
	int64_t Bf = obs->shape[0], T1 = obs->shape[1];
	size_t B = (size_t)L->B, n1 = (size_t)T1;
	/* A recurrent core starts each unroll from its state (zeros and no
	 * previous action when the frame has none: e.g. uniform play). */
	const seed_tensor *st = L->S > 0 ? seed_frame_tensor(f, "state") : NULL,
	                  *pa = L->S > 0 ? seed_frame_tensor(f, "prev_action") : NULL;
	size_t sb = (size_t)L->S * sizeof(float);
	const seed_tensor *key = L->r2d2 ? seed_frame_tensor(f, "key") : NULL,
	                  *w = L->r2d2 ? seed_frame_tensor(f, "weight") : NULL;
	int taken = 0;
	for (int64_t b = first; b < Bf && L->fill < L->B; b++, taken++) {
		size_t j = (size_t)L->fill++, at = (size_t)b * n1;
		if (L->r2d2) {
			memcpy(&L->keys[j], (const uint8_t *)key->data + 8 * (size_t)b, 8);
			memcpy(&L->weights[j], (const uint8_t *)w->data + 4 * (size_t)b, 4);
		}
		for (int k = 0; k < SEED_UNROLL_NFIELDS; k++)
			to_column(L->col[k], B, j, src[k] + at * L->step_bytes[k], n1, L->step_bytes[k]);
		if (L->S > 0) {
			if (st)
				memcpy(L->state0 + j * (size_t)L->S,
				       (const uint8_t *)st->data + (size_t)b * sb, sb);
			else
				memset(L->state0 + j * (size_t)L->S, 0, sb);
			L->prev_action[j] = -1;
			if (pa)
				memcpy(&L->prev_action[j], (const uint8_t *)pa->data + 4 * (size_t)b, 4);
		}
	}
	L->view.fill = L->fill;
	return taken;
}

int seed_learner_add(seed_learner *L, const seed_frame *f, int first, seed_err *err)
{
	int64_t Bf;
	int rc = check_unrolls(L, f, &Bf, err);
	if (rc)
		return rc;
	if (first < 0 || first > Bf)
		return seed_err_set(err, -EINVAL, "%s %d of %" PRId64,
		                    L->r2d2 ? "sequences frame: sequence" : "unroll frame: unroll", first,
		                    Bf);
	return take_unrolls(L, f, first);
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
	for (int64_t i = 0; len && i < len->shape[0]; i++) {
		int32_t n;
		memcpy(&n, (const uint8_t *)len->data + 4 * i, 4);
		L->st.env_frames += n > 0 ? n : 0;
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
		                    seed_frame_type_name(f->type), L->r2d2 ? "sequences" : "unroll");
	/* Checked once, taken in as many pieces as batches it fills. */
	int64_t Bf;
	int rc = check_unrolls(L, f, &Bf, err);
	if (rc)
		return rc;
	int updates = 0;
	for (int64_t at = 0, k; at < Bf && (k = take_unrolls(L, f, at)) != 0; at += k) {
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
static void core_inputs(seed_learner *L)
{
	size_t B = (size_t)L->B, n = (size_t)L->T1 * B;
	for (size_t i = B; i < n; i++)
		L->prev_action[i] = L->action[i - B];
	for (size_t i = 0; i < n; i++)
		L->reset[i] = L->terminated[i] || L->truncated[i];
}

/* V-trace: the model's gradient for the full batch into its gradient slab. */
static int vtrace_grad(seed_learner *L, seed_err *err)
{
	const seed_config *c = L->cfg;
	int T1 = L->T1, T = T1 - 1, B = L->B, A = L->A;
	size_t TB = (size_t)T * (size_t)B;
	/* The bootstrap row t = T needs only its values and gets no gradient:
	 * it goes forward alone first, so that the forward backward follows
	 * (they must have the same rows) and backward itself cover the T*B
	 * transition rows only, 1/(T+1) less work than the whole batch. */
	if (L->S > 0) {
		/* A recurrent core runs through the T + 1 steps from each
		 * unroll's state, as the server ran it. */
		core_inputs(L);
		seed_model_seq q = {.T = T1,
		                    .B = B,
		                    .obs = L->obs,
		                    .prev_reward = L->reward,
		                    .prev_action = L->prev_action,
		                    .reset = L->reset,
		                    .state0 = L->state0};
		seed_model_forward_seq(L->model, &q, L->logits, L->values);
	} else {
		seed_model_forward(L->model, B, L->obs + TB * L->obs_bytes, NULL, L->values + TB);
		seed_model_forward(L->model, T * B, L->obs, L->logits, L->values);
	}
	seed_unroll_transitions(T, B, c->discount, L->reward, L->terminated, L->truncated, L->final_value,
	                        L->rewards_t, L->discounts_t);
	for (int i = 0; i < T * B; i++)
		L->st.lag_sum += (double)(L->st.policy_version - L->version[i]);
	L->st.lag_count += (int64_t)T * B;
	seed_loss_batch batch = {
	    .T = T,
	    .B = B,
	    .A = A,
	    .logits = L->logits,
	    .behaviour_logits = L->blogits,
	    .actions = L->action,
	    .rewards = L->rewards_t,
	    .discounts = L->discounts_t,
	    .values = L->values,
	    .bootstrap_value = L->values + TB,
	};
	int rc = seed_loss_vtrace_ws(&c->loss, &batch, L->loss_ws, &L->st.loss, L->dlogits, L->dvalues, err);
	if (rc)
		return rc;
	L->t_backward = seed_now_s();
	seed_model_zero_grad(L->model);
	if (L->S > 0) /* the bootstrap step's rows, after the T*B the loss wrote, stay zero */
		seed_model_backward_seq(L->model, L->dlogits, L->dvalues);
	else
		seed_model_backward(L->model, T * B, L->dlogits, L->dvalues);
	return 0;
}

/* R2D2: the online network's gradient for the full batch into its
 * gradient slab, the priorities and losses of its sequences, and the
 * statistics of the update. */
static int r2d2_grad(seed_learner *L, seed_err *err)
{
	const seed_config *c = L->cfg;
	int T1 = L->T1, B = L->B, A = L->A, burn = c->r2d2.burn_in, Tt = T1 - burn;
	size_t n = (size_t)T1 * (size_t)B, off = (size_t)burn * (size_t)B;
	for (size_t i = 0; i < n; i++)
		L->done[i] = L->terminated[i] || L->truncated[i];
	const uint8_t *obs = L->obs + off * L->obs_bytes;
	if (L->S > 0) {
		/* The core's inputs per step, as for V-trace. */
		core_inputs(L);
		const float *s_on = L->state0, *s_tg = L->state0;
		if (burn > 0) {
			/* Burn-in: both networks run from the stored state through
			 * the first burn_in steps, forward only (no backward reads
			 * these activations: the next forward replaces them), to
			 * their own states at step burn_in. */
			seed_model_seq s = {.T = burn,
			                    .B = B,
			                    .obs = L->obs,
			                    .prev_reward = L->reward,
			                    .prev_action = L->prev_action,
			                    .reset = L->reset,
			                    .state0 = L->state0,
			                    .state_out = L->state_on};
			seed_model_forward_seq_q(L->model, &s, L->q);
			s.state_out = L->state_tg;
			seed_model_forward_seq_q(L->target, &s, L->qt);
			s_on = L->state_on;
			s_tg = L->state_tg;
		}
		seed_model_seq s = {.T = Tt,
		                    .B = B,
		                    .obs = obs,
		                    .prev_reward = L->reward + off,
		                    .prev_action = L->prev_action + off,
		                    .reset = L->reset + off,
		                    .state0 = s_tg};
		seed_model_forward_seq_q(L->target, &s, L->qt + off * (size_t)A);
		s.state0 = s_on; /* the online forward last: backward reads its activations */
		seed_model_forward_seq_q(L->model, &s, L->q + off * (size_t)A);
	} else {
		/* Without a core the steps are independent rows: the burn-in
		 * steps have nothing to rebuild and are skipped, and so are the
		 * rows that feed nothing.  The first target is y_1, so the
		 * target network's step 0 bootstraps nothing (the loss reads
		 * it into a q_boot no target uses); the last step's online Q
		 * values only choose its bootstrap action, with no delta of
		 * their own, so they go forward alone, before the Tt - 1 steps
		 * whose backward follows: 1/Tt less target forward and
		 * backward work. */
		size_t tb = (size_t)(Tt - 1) * (size_t)B, ob = L->obs_bytes;
		seed_model_forward_q(L->target, (int)tb, obs + (size_t)B * ob,
		                     L->qt + (off + (size_t)B) * (size_t)A);
		seed_model_forward_q(L->model, B, obs + tb * ob, L->q + (off + tb) * (size_t)A);
		seed_model_forward_q(L->model, (int)tb, obs, L->q + off * (size_t)A);
	}
	int rc = seed_r2d2_loss(Tt, B, A, c->r2d2.n_step, c->discount, c->r2d2.value_rescale_eps, c->r2d2.eta,
	                        L->q + off * (size_t)A, L->qt + off * (size_t)A, L->action + off,
	                        L->reward + off, L->done + off, L->priorities, L->seq_loss, L->dq);
	if (rc)
		return seed_err_set(err, rc, "learner: the r2d2 loss refused its inputs (discount %g)",
		                    (double)c->discount);
	/* The loss is mean_b(weight_b * loss_b): the gradient into sequence
	 * b's Q values is weight_b / B times that of loss_b.  Before scaling,
	 * the gradient at the taken action of step t is -delta_t. */
	double loss = 0, abs_td = 0, sum_q = 0, sum_p = 0;
	for (int b = 0; b < B; b++) {
		loss += (double)L->weights[b] * L->seq_loss[b];
		sum_p += L->priorities[b];
	}
	for (int t = 0; t < Tt; t++)
		for (int b = 0; b < B; b++) {
			size_t row = ((size_t)t * (size_t)B + (size_t)b) * (size_t)A;
			float scale = L->weights[b] / (float)B;
			int32_t a = L->action[off + (size_t)t * (size_t)B + (size_t)b];
			abs_td += fabs((double)L->dq[row + (size_t)a]);
			sum_q += L->q[off * (size_t)A + row + (size_t)a];
			for (int k = 0; k < A; k++)
				L->dq[row + (size_t)k] *= scale;
		}
	memset(&L->st.loss, 0, sizeof L->st.loss);
	L->st.loss.total = loss / B;
	L->st.mean_q = sum_q / ((double)Tt * B);
	L->st.mean_abs_td = abs_td / ((double)(Tt - 1) * B);
	L->st.mean_priority = sum_p / B;
	for (size_t i = off; i < n - (size_t)B; i++)
		L->st.lag_sum += (double)(L->st.policy_version - L->version[i]);
	L->st.lag_count += (int64_t)(Tt - 1) * B;
	L->t_backward = seed_now_s();
	seed_model_zero_grad(L->model);
	if (L->S > 0)
		seed_model_backward_seq_q(L->model, L->dq);
	else /* the last step's rows have no gradient (above) */
		seed_model_backward_q(L->model, (Tt - 1) * B, L->dq);
	memcpy(L->last_keys, L->keys, (size_t)B * sizeof(int64_t));
	L->nprio = B;
	return 0;
}

/* Clip the gradient in the model's slab to max_grad_norm, set the
 * learning rate of the schedule, and take one optimizer step, unless the
 * gradient is not finite: that would poison every parameter, so the step
 * is skipped (and counted). */
static void optim_step(seed_learner *L)
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

/* PPO: GAE over the batch with the values of the parameters as they are
 * now, then epochs passes over the T*B transitions in a new random order
 * each, cut into minibatches of M rows; each minibatch is gathered, goes
 * forward, through seed_ppo_loss and backward, and takes one optimizer
 * step (optim_step).  The statistics of the update are the means over its
 * minibatches: the loss terms into st.loss (value loss as baseline_loss,
 * the mean ratio as mean_rho, approx_kl as kl, the clip fraction as
 * clipped_rho_fraction, the mean value target as mean_vs), the gradient
 * norm into st.grad_norm. */
static int ppo_update(seed_learner *L, seed_err *err)
{
	const seed_config *c = L->cfg;
	const seed_ppo_config *pc = &c->ppo;
	int T = L->T1 - 1, B = L->B, A = L->A, M = L->M;
	size_t TB = (size_t)T * (size_t)B, ob = L->obs_bytes, Az = (size_t)A;
	double t_start = seed_now_s();
	/* The values of all T+1 rows, bootstrap row included: the old values
	 * of the value clip, and GAE's. */
	seed_model_forward(L->model, B, L->obs + TB * ob, NULL, L->values + TB);
	seed_model_forward(L->model, (int)TB, L->obs, NULL, L->values);
	seed_unroll_transitions(T, B, c->discount, L->reward, L->terminated, L->truncated, L->final_value,
	                        L->rewards_t, L->discounts_t);
	int rc = seed_ppo_gae(T, B, L->rewards_t, L->discounts_t, L->values, L->values + TB, pc->lambda,
	                      L->adv, L->ret);
	if (rc)
		return seed_err_set(err, rc, "learner: GAE refused its inputs (lambda %g)",
		                    (double)pc->lambda);
	for (size_t i = 0; i < TB; i++)
		L->st.lag_sum += (double)(L->st.policy_version - L->version[i]);
	L->st.lag_count += (int64_t)TB;
	for (size_t i = 0; i < TB; i++)
		L->perm[i] = (uint32_t)i;
	seed_ppo_stats sum = {0}, one;
	double norm_sum = 0, t_mark = t_start; /* the end of the last phase timed */
	int steps = 0;
	for (int e = 0; e < pc->epochs; e++) {
		for (size_t i = TB - 1; i > 0; i--) { /* Fisher-Yates */
			size_t j = seed_rng_below(&L->rng, (uint32_t)(i + 1));
			uint32_t t = L->perm[i];
			L->perm[i] = L->perm[j];
			L->perm[j] = t;
		}
		for (int k = 0; k < pc->minibatches; k++) {
			const uint32_t *rows = L->perm + (size_t)k * (size_t)M;
			for (int m = 0; m < M; m++) {
				size_t i = rows[m];
				memcpy(L->mb_obs + (size_t)m * ob, L->obs + i * ob, ob);
				memcpy(L->mb_blogits + (size_t)m * Az, L->blogits + i * Az,
				       Az * sizeof(float));
				L->mb_action[m] = L->action[i];
				L->mb_adv[m] = L->adv[i];
				L->mb_ret[m] = L->ret[i];
				L->mb_old[m] = L->values[i];
			}
			seed_model_forward(L->model, M, L->mb_obs, L->mb_logits, L->mb_values);
			seed_ppo_batch mb = {.N = M,
			                     .A = A,
			                     .logits = L->mb_logits,
			                     .behaviour_logits = L->mb_blogits,
			                     .actions = L->mb_action,
			                     .advantages = L->mb_adv,
			                     .returns = L->mb_ret,
			                     .old_values = L->mb_old,
			                     .values = L->mb_values};
			rc = seed_ppo_loss(pc, &mb, &one, L->mb_dlogits, L->mb_dvalues, err);
			if (rc)
				return rc;
			/* Forward: the values and GAE, the gathering, the
			 * forward pass and the loss; then backward; then the
			 * optimizer step. */
			double tb = seed_now_s();
			seed_model_zero_grad(L->model);
			seed_model_backward(L->model, M, L->mb_dlogits, L->mb_dvalues);
			double to = seed_now_s();
			optim_step(L);
			double te = seed_now_s();
			L->st.time_forward += tb - t_mark;
			L->st.time_backward += to - tb;
			L->st.time_optim += te - to;
			t_mark = te;
			norm_sum += L->st.grad_norm;
			steps++;
			sum.total += one.total;
			sum.pg_loss += one.pg_loss;
			sum.value_loss += one.value_loss;
			sum.entropy_loss += one.entropy_loss;
			sum.entropy += one.entropy;
			sum.approx_kl += one.approx_kl;
			sum.clip_fraction += one.clip_fraction;
			sum.mean_ratio += one.mean_ratio;
			sum.mean_value += one.mean_value;
			sum.mean_return += one.mean_return;
			sum.mean_advantage += one.mean_advantage;
		}
	}
	const double s = 1.0 / steps;
	L->st.loss = (seed_loss_stats){.total = sum.total * s,
	                               .pg_loss = sum.pg_loss * s,
	                               .baseline_loss = sum.value_loss * s,
	                               .entropy_loss = sum.entropy_loss * s,
	                               .entropy = sum.entropy * s,
	                               .kl = sum.approx_kl * s,
	                               .mean_rho = sum.mean_ratio * s,
	                               .clipped_rho_fraction = sum.clip_fraction * s,
	                               .mean_vs = sum.mean_return * s,
	                               .mean_value = sum.mean_value * s,
	                               .mean_pg_advantage = sum.mean_advantage * s};
	L->st.grad_norm = norm_sum * s;
	return 0;
}

int seed_learner_update(seed_learner *L, seed_err *err)
{
	if (L->fill != L->B)
		return seed_err_set(err, -EINVAL, "learner: update with %d of %d %s in the batch", L->fill,
		                    L->B, L->r2d2 ? "sequences" : "unrolls");
	int64_t next = L->st.policy_version + 1;
	int rc = reserve(L, next, err);
	if (rc)
		return rc;
	const seed_config *c = L->cfg;
	int T = L->T1 - 1, B = L->B;
	double t0 = seed_now_s();
	L->t_backward = 0;
	/* PPO takes its optimizer steps itself, one per minibatch, and times
	 * its phases as it goes. */
	rc = L->ppo ? ppo_update(L, err) : L->r2d2 ? r2d2_grad(L, err) : vtrace_grad(L, err);
	if (rc)
		return rc;
	if (!L->ppo) {
		/* Forward until the gradient function began its backward pass
		 * (all of it, should one not say when). */
		double t1 = seed_now_s(), tb = L->t_backward >= t0 ? L->t_backward : t1;
		L->st.time_forward += tb - t0;
		L->st.time_backward += t1 - tb;
		optim_step(L); /* a skipped step still counts its frames */
		L->st.time_optim += seed_now_s() - t1;
	}
	L->st.optim_steps = seed_optim_steps(L->optim);
	L->st.updates++;
	L->st.frames += (int64_t)T * B;
	L->st.policy_version = next;
	if (L->r2d2 && L->st.updates % c->r2d2.target_update_period == 0) {
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
	seed_checkpoint_tensor *ts = seed_xcalloc((size_t)(nt + ns + ntg + nr), sizeof *ts);
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
	const seed_config *c = L->cfg;
	json_t *env_opts = json_loads(c->env_options, 0, NULL);
	json_t *model = json_loads(c->model, 0, NULL);
	seed_checkpoint ck = {
	    .config = c->root,
	    .env = c->env,
	    .env_options = env_opts,
	    .model = model,
	    .step = L->st.updates,
	    .frames = L->st.frames,
	    .policy_version = L->st.policy_version,
	    .optim_step = seed_optim_steps(L->optim),
	    .rng = L->rng,
	    .wall_time = seed_learner_wall_time(L),
	    .ntensors = (size_t)(nt + ns + ntg + nr),
	    .tensors = ts,
	};
	int rc = seed_checkpoint_save(L->dir, &ck, err);
	json_decref(env_opts);
	json_decref(model);
	free(names);
	free(window);
	free(ts);
	if (rc && err) {
		/* Say what the directory still holds: a failure must not read as
		 * if a recent checkpoint were there. */
		size_t len = strlen(err->msg);
		if (L->st.saved_updates < 0)
			snprintf(err->msg + len, sizeof err->msg - len,
			         "; %s holds no checkpoint of this run", L->dir);
		else
			snprintf(err->msg + len, sizeof err->msg - len,
			         "; %s still holds the checkpoint of update %" PRId64 ", %" PRId64
			         " updates old",
			         L->dir, L->st.saved_updates, L->st.updates - L->st.saved_updates);
	}
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

const char *seed_learner_dir(const seed_learner *L)
{
	return L->dir;
}

double seed_learner_wall_time(const seed_learner *L)
{
	return L->wall_before + (seed_now_s() - L->wall0);
}

void seed_learner_progress(const seed_learner *L, const json_t *metrics, char *buf, size_t n)
{
	const seed_learner_status *st = &L->st;
	if (L->r2d2) {
		snprintf(buf, n,
		         "%" PRId64 " frames, %.0f fps, %" PRId64 " updates, return %.1f (%" PRId64
		         " episodes), loss %.4f, Q %.3f, |td| %.3f, lag %.1f",
		         st->frames, json_number_value(json_object_get(metrics, "fps")), st->updates,
		         st->nreturns ? st->mean_return : 0.0, st->episodes, st->loss.total,
		         isnan(st->mean_q) ? 0.0 : st->mean_q, isnan(st->mean_abs_td) ? 0.0 : st->mean_abs_td,
		         json_number_value(json_object_get(metrics, "policy_lag")));
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
	int at = snprintf(buf, n,
	                  "%s: %" PRId64 " frames, %" PRId64 " updates, version %" PRId64
	                  ", mean return %.2f over the last %d episodes, %.1f s",
	                  why ? why : "stopped by a signal", st->frames, st->updates, st->policy_version,
	                  st->nreturns ? st->mean_return : 0.0, st->nreturns, seed_learner_wall_time(L));
	if (at < 0 || (size_t)at >= n || !L->dir)
		return;
	if (st->saved_updates == st->updates)
		snprintf(buf + at, n - (size_t)at, ", checkpoint in %s", L->dir);
	else if (st->saved_updates < 0)
		snprintf(buf + at, n - (size_t)at, "; NOT SAVED: %s holds no checkpoint of this run", L->dir);
	else
		snprintf(buf + at, n - (size_t)at, "; NOT SAVED: %s holds the checkpoint of update %" PRId64,
		         L->dir, st->saved_updates);
}

json_t *seed_learner_metrics(seed_learner *L)
{
	const seed_learner_status *st = &L->st;
	double now = seed_now_s(), dt = now - L->mark.t;
	if (dt <= 0)
		return NULL;
	int64_t nlag = st->lag_count - L->mark.lag_count;
	double lag = nlag ? (st->lag_sum - L->mark.lag_sum) / (double)nlag : 0;
	const seed_loss_stats *l = &st->loss;
	json_t *o = SEED_METRICS_OBJ(
	    {"time", seed_learner_wall_time(L)}, {"frames", (double)st->frames},
	    {"updates", (double)st->updates}, {"version", (double)st->policy_version},
	    {"fps", (double)(st->frames - L->mark.frames) / dt},
	    {"updates_per_s", (double)(st->updates - L->mark.updates) / dt}, {"loss", l->total},
	    {"pg_loss", l->pg_loss}, {"baseline_loss", l->baseline_loss}, {"entropy_loss", l->entropy_loss},
	    {"entropy", l->entropy}, {"mean_rho", l->mean_rho}, {"mean_value", l->mean_value},
	    {"grad_norm", st->grad_norm}, {"lr", st->lr}, {"episodes", (double)st->episodes},
	    {"policy_lag", lag}, {"batch_size", (double)L->B}, {"unroll_length", (double)(L->T1 - 1)},
	    {"skipped_updates", (double)st->skipped});
	json_object_set_new(o, "episode_return", st->nreturns ? json_real(st->mean_return) : json_null());
	json_object_set_new(o, "algorithm", json_string(seed_config_algorithm_name(L->cfg->algorithm)));
	if (L->r2d2) {
		/* The policy-gradient statistics mean nothing here: Q learning's own. */
		static const char *const vtrace_only[] = {"pg_loss", "baseline_loss", "entropy_loss",
		                                          "entropy", "mean_rho",      "mean_value"};
		for (size_t i = 0; i < sizeof vtrace_only / sizeof *vtrace_only; i++)
			json_object_del(o, vtrace_only[i]);
		const double r2[] = {st->mean_q, st->mean_abs_td, st->mean_priority};
		const char *const r2n[] = {"mean_q", "mean_abs_td", "mean_priority"};
		for (int i = 0; i < 3; i++)
			json_object_set_new(o, r2n[i], isfinite(r2[i]) ? json_real(r2[i]) : json_null());
		json_object_set_new(o, "target_updates", json_integer(st->target_updates));
		json_object_set_new(o, "env_frames", json_integer(st->env_frames));
		json_object_set_new(o, "burn_in", json_integer(L->cfg->r2d2.burn_in));
	}
	if (L->ppo) {
		/* PPO's own diagnostics; its value loss is baseline_loss and its
		 * mean ratio pi/mu mean_rho, as for V-trace. */
		json_object_set_new(o, "approx_kl", json_real(l->kl));
		json_object_set_new(o, "clip_fraction", json_real(l->clipped_rho_fraction));
		json_object_set_new(o, "optim_steps", json_integer(st->optim_steps));
	}
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
	if (!L->r2d2)
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
