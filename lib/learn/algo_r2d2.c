/* algo_r2d2.c: R2D2's recurrent Q-learning, the learner's algorithm "r2d2"
 * (learner_internal.h, seed/learner.h's "R2D2").
 *
 * On sequences frames sampled from seed-replay, with a dueling Q model; the
 * core keeps the target network and the keys, weights and priorities.  An
 * update: with a core, both networks run through the burn-in from the
 * stored state, forward only, then over the trained steps (the online one
 * with gradient); seed_r2d2_loss gives each sequence's loss and priority;
 * the gradient into sequence b's Q values is weight_b / B times that of
 * loss_b; backward into the model's slab (the core clips and steps).  Its
 * buffers: both networks' Q values, their gradient, the episode
 * boundaries, each network's state after the burn-in, and the sequences'
 * losses.
 */
#include "learner_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/r2d2.h"

typedef struct r2d2 {
	float *q, *qt;              /* (T1, B, A): the online and target networks' */
	float *dq;                  /* (T1 - burn_in, B, A) */
	uint8_t *done;              /* (T1, B) */
	float *state_on, *state_tg; /* (B, S) */
	float *seq_loss;            /* (B) */
} r2d2;

static int check(const seed_learner *L, seed_err *err)
{
	/* R2D2 learns Q values. */
	if (seed_model_head_kind(L->model) != SEED_HEAD_DUELING)
		return seed_err_set(
		    err, -EINVAL,
		    "learner: algorithm r2d2 needs a dueling Q head (\"head\": \"dueling\" in "
		    "the model); the model has a \"%s\" head",
		    seed_model_head_name(seed_model_head_kind(L->model)));
	return 0;
}

static void *alloc(seed_learner *L)
{
	r2d2 *r = seed_xcalloc(1, sizeof *r);
	L->st.mean_q = L->st.mean_abs_td = L->st.mean_priority = NAN; /* before the first update */
	size_t n = (size_t)L->T1 * (size_t)L->B, A = (size_t)L->A, B = (size_t)L->B;
	size_t S = (size_t)(L->S > 0 ? L->S : 1);
	r->q = seed_xcalloc(n * A, sizeof(float));
	r->qt = seed_xcalloc(n * A, sizeof(float));
	r->dq = seed_xcalloc((n - (size_t)L->cfg->r2d2.burn_in * B) * A, sizeof(float));
	r->done = seed_xcalloc(n, 1);
	r->state_on = seed_xcalloc(B * S, sizeof(float));
	r->state_tg = seed_xcalloc(B * S, sizeof(float));
	r->seq_loss = seed_xcalloc(B, sizeof(float));
	return r;
}

static void release(void *alg)
{
	r2d2 *r = alg;
	free(r->q);
	free(r->qt);
	free(r->dq);
	free(r->done);
	free(r->state_on);
	free(r->state_tg);
	free(r->seq_loss);
	free(r);
}

/* Both networks forward over the sequences: with a core through the
 * burn-in and then the trained steps, without one over the rows that feed
 * the loss. */
static void forward(seed_learner *L, r2d2 *r)
{
	int T1 = L->T1, B = L->B, A = L->A, burn = L->cfg->r2d2.burn_in, Tt = T1 - burn;
	size_t off = (size_t)burn * (size_t)B;
	const uint8_t *obs = L->obs + off * L->obs_bytes;
	if (L->S > 0) {
		/* The core's inputs per step, as for V-trace. */
		learn_core_inputs(L);
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
			                    .state_out = r->state_on};
			seed_model_forward_seq_q(L->model, &s, r->q);
			s.state_out = r->state_tg;
			seed_model_forward_seq_q(L->target, &s, r->qt);
			s_on = r->state_on;
			s_tg = r->state_tg;
		}
		seed_model_seq s = {.T = Tt,
		                    .B = B,
		                    .obs = obs,
		                    .prev_reward = L->reward + off,
		                    .prev_action = L->prev_action + off,
		                    .reset = L->reset + off,
		                    .state0 = s_tg};
		seed_model_forward_seq_q(L->target, &s, r->qt + off * (size_t)A);
		s.state0 = s_on; /* the online forward last: backward reads its activations */
		seed_model_forward_seq_q(L->model, &s, r->q + off * (size_t)A);
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
		                     r->qt + (off + (size_t)B) * (size_t)A);
		seed_model_forward_q(L->model, B, obs + tb * ob, r->q + (off + tb) * (size_t)A);
		seed_model_forward_q(L->model, (int)tb, obs, r->q + off * (size_t)A);
	}
}

/* The loss is mean_b(weight_b * loss_b): the gradient into sequence b's Q
 * values is weight_b / B times that of loss_b.  Before scaling, the
 * gradient at the taken action of step t is -delta_t.  The statistics of
 * the update into L->st. */
static void weigh(seed_learner *L, r2d2 *r)
{
	int B = L->B, A = L->A, Tt = L->T1 - L->cfg->r2d2.burn_in;
	size_t off = (size_t)L->cfg->r2d2.burn_in * (size_t)B;
	double loss = 0, abs_td = 0, sum_q = 0, sum_p = 0;
	for (int b = 0; b < B; b++) {
		loss += (double)L->weights[b] * r->seq_loss[b];
		sum_p += L->priorities[b];
	}
	for (int t = 0; t < Tt; t++)
		for (int b = 0; b < B; b++) {
			size_t row = ((size_t)t * (size_t)B + (size_t)b) * (size_t)A;
			float scale = L->weights[b] / (float)B;
			int32_t a = L->action[off + (size_t)t * (size_t)B + (size_t)b];
			abs_td += fabs((double)r->dq[row + (size_t)a]);
			sum_q += r->q[off * (size_t)A + row + (size_t)a];
			for (int k = 0; k < A; k++)
				r->dq[row + (size_t)k] *= scale;
		}
	memset(&L->st.loss, 0, sizeof L->st.loss);
	L->st.loss.total = loss / B;
	L->st.mean_q = sum_q / ((double)Tt * B);
	L->st.mean_abs_td = abs_td / ((double)(Tt - 1) * B);
	L->st.mean_priority = sum_p / B;
}

/* The online network's gradient for the full batch into its gradient slab,
 * the priorities and losses of its sequences, and the statistics. */
static int update(seed_learner *L, seed_err *err)
{
	r2d2 *r = L->alg;
	const seed_config *c = L->cfg;
	int T1 = L->T1, B = L->B, A = L->A, burn = c->r2d2.burn_in, Tt = T1 - burn;
	size_t n = (size_t)T1 * (size_t)B, off = (size_t)burn * (size_t)B;
	for (size_t i = 0; i < n; i++)
		r->done[i] = L->terminated[i] || L->truncated[i];
	forward(L, r);
	int rc = seed_r2d2_loss(Tt, B, A, c->r2d2.n_step, c->discount, c->r2d2.value_rescale_eps, c->r2d2.eta,
	                        r->q + off * (size_t)A, r->qt + off * (size_t)A, L->action + off,
	                        L->reward + off, r->done + off, L->priorities, r->seq_loss, r->dq);
	if (rc)
		return seed_err_set(err, rc, "learner: the r2d2 loss refused its inputs (discount %g)",
		                    (double)c->discount);
	weigh(L, r);
	learn_count_lag(L, off, n - (size_t)B - off);
	L->t_backward = learn_now();
	seed_model_zero_grad(L->model);
	if (L->S > 0)
		seed_model_backward_seq_q(L->model, r->dq);
	else /* the last step's rows have no gradient (above) */
		seed_model_backward_q(L->model, (Tt - 1) * B, r->dq);
	memcpy(L->last_keys, L->keys, (size_t)B * sizeof(int64_t));
	L->nprio = B;
	return 0;
}

/* The policy-gradient statistics mean nothing here: Q learning's own. */
static void metrics(const seed_learner *L, json_t *o)
{
	static const char *const pg_only[] = {"pg_loss", "baseline_loss", "entropy_loss",
	                                      "entropy", "mean_rho",      "mean_value"};
	const seed_learner_status *st = &L->st;
	for (size_t i = 0; i < sizeof pg_only / sizeof *pg_only; i++)
		json_object_del(o, pg_only[i]);
	const double r2[] = {st->mean_q, st->mean_abs_td, st->mean_priority};
	const char *const r2n[] = {"mean_q", "mean_abs_td", "mean_priority"};
	for (int i = 0; i < 3; i++)
		json_object_set_new(o, r2n[i], isfinite(r2[i]) ? json_real(r2[i]) : json_null());
	json_object_set_new(o, "target_updates", json_integer(st->target_updates));
	json_object_set_new(o, "env_frames", json_integer(st->env_frames));
	json_object_set_new(o, "burn_in", json_integer(L->cfg->r2d2.burn_in));
}

static void progress(const seed_learner *L, const json_t *m, char *buf, size_t n)
{
	const seed_learner_status *st = &L->st;
	snprintf(buf, n,
	         "%" PRId64 " frames, %.0f fps, %" PRId64 " updates, return %.1f (%" PRId64
	         " episodes), loss %.4f, Q %.3f, |td| %.3f, lag %.1f",
	         st->frames, json_number_value(json_object_get(m, "fps")), st->updates,
	         st->nreturns ? st->mean_return : 0.0, st->episodes, st->loss.total,
	         isnan(st->mean_q) ? 0.0 : st->mean_q, isnan(st->mean_abs_td) ? 0.0 : st->mean_abs_td,
	         json_number_value(json_object_get(m, "policy_lag")));
}

const learn_algo learn_r2d2 = {
    .name = "r2d2",
    .sequences = true,
    .target = true,
    .check = check,
    .alloc = alloc,
    .free = release,
    .update = update,
    .metrics = metrics,
    .progress = progress,
};
