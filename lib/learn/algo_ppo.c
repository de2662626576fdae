/* algo_ppo.c: PPO's clipped surrogate, the learner's algorithm "ppo"
 * (learner_internal.h).
 *
 * On unroll frames, with an actor-critic model without a core (its
 * minibatches are shuffled transitions, which a core's sequences cannot be
 * cut into).  An update: GAE over the batch with the values of the
 * parameters as they are now, then epochs passes over the T*B transitions
 * in a new random order each (the learner's generator), cut into
 * minibatches of M rows; each minibatch is gathered, goes forward, through
 * seed_ppo_loss and backward, and takes one optimizer step
 * (learn_optim_step).  The statistics of the update are the means over its
 * minibatches: the loss terms into st.loss (value loss as baseline_loss,
 * the mean ratio as mean_rho, approx_kl as kl, the clip fraction as
 * clipped_rho_fraction, the mean value target as mean_vs), the gradient
 * norm into st.grad_norm.  Its buffers: the values, GAE's advantages and
 * targets, the epoch's order and one minibatch.
 */
#include "learner_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/ppo.h"

typedef struct ppo {
	int M;                                       /* rows of a minibatch */
	float *values;                               /* (T1, B): at the start of the update */
	float *adv, *ret;                            /* (T, B) */
	uint32_t *perm;                              /* (T*B) */
	uint8_t *mb_obs;                             /* (M, obs_bytes) */
	int32_t *mb_action;                          /* (M): discrete */
	float *mb_box;                               /* (M, A): a Box space's raw samples */
	float *mb_logits, *mb_blogits, *mb_dlogits;  /* (M, P) */
	float *mb_adv, *mb_ret, *mb_old, *mb_values; /* (M) */
	float *mb_dvalues;                           /* (M) */
} ppo;

static int check(const seed_learner *L, seed_err *err)
{
	int rc = learn_need_actor_critic(L, "PPO", err);
	if (rc == 0 && seed_model_state_floats(L->model) > 0)
		rc = seed_err_set(err, -EINVAL,
		                  "learner: algorithm ppo takes a model without a core (its minibatches "
		                  "are shuffled transitions); the model has an LSTM core");
	return rc;
}

static void *alloc(seed_learner *L)
{
	ppo *p = seed_xcalloc(1, sizeof *p);
	size_t n = (size_t)L->T1 * (size_t)L->B, nt = n - (size_t)L->B, A = (size_t)L->P;
	size_t M = nt / (size_t)L->cfg->ppo.minibatches;
	p->M = (int)M;
	p->values = seed_xcalloc(n, sizeof(float));
	p->adv = seed_xcalloc(nt, sizeof(float));
	p->ret = seed_xcalloc(nt, sizeof(float));
	p->perm = seed_xcalloc(nt, sizeof(uint32_t));
	p->mb_obs = seed_xaligned(M * L->obs_bytes);
	p->mb_action = seed_xcalloc(M, sizeof(int32_t));
	if (L->box)
		p->mb_box = seed_xcalloc(M * (size_t)L->A, sizeof(float));
	p->mb_logits = seed_xcalloc(M * A, sizeof(float));
	p->mb_blogits = seed_xcalloc(M * A, sizeof(float));
	p->mb_dlogits = seed_xcalloc(M * A, sizeof(float));
	p->mb_adv = seed_xcalloc(M, sizeof(float));
	p->mb_ret = seed_xcalloc(M, sizeof(float));
	p->mb_old = seed_xcalloc(M, sizeof(float));
	p->mb_values = seed_xcalloc(M, sizeof(float));
	p->mb_dvalues = seed_xcalloc(M, sizeof(float));
	return p;
}

static void release(void *alg)
{
	ppo *p = alg;
	free(p->values);
	free(p->adv);
	free(p->ret);
	free(p->perm);
	free(p->mb_obs);
	free(p->mb_action);
	free(p->mb_box);
	free(p->mb_logits);
	free(p->mb_blogits);
	free(p->mb_dlogits);
	free(p->mb_adv);
	free(p->mb_ret);
	free(p->mb_old);
	free(p->mb_values);
	free(p->mb_dvalues);
	free(p);
}

/* Gather minibatch rows[0..M) of the transitions. */
static void gather(const seed_learner *L, ppo *p, const uint32_t *rows)
{
	size_t ob = L->obs_bytes, Pz = (size_t)L->P, Az = (size_t)L->A;
	for (int m = 0; m < p->M; m++) {
		size_t i = rows[m];
		memcpy(p->mb_obs + (size_t)m * ob, L->obs + i * ob, ob);
		memcpy(p->mb_blogits + (size_t)m * Pz, L->blogits + i * Pz, Pz * sizeof(float));
		if (L->box)
			memcpy(p->mb_box + (size_t)m * Az, L->box_action + i * Az, Az * sizeof(float));
		else
			p->mb_action[m] = L->action[i];
		p->mb_adv[m] = p->adv[i];
		p->mb_ret[m] = p->ret[i];
		p->mb_old[m] = p->values[i];
	}
}

static void add_stats(seed_ppo_stats *sum, const seed_ppo_stats *one)
{
	sum->total += one->total;
	sum->pg_loss += one->pg_loss;
	sum->value_loss += one->value_loss;
	sum->entropy_loss += one->entropy_loss;
	sum->entropy += one->entropy;
	sum->approx_kl += one->approx_kl;
	sum->clip_fraction += one->clip_fraction;
	sum->mean_ratio += one->mean_ratio;
	sum->mean_value += one->mean_value;
	sum->mean_return += one->mean_return;
	sum->mean_advantage += one->mean_advantage;
}

/* One minibatch: forward, the loss, backward, one optimizer step; its
 * phases timed from *t_mark (the end of the last phase timed). */
static int minibatch(seed_learner *L, ppo *p, const uint32_t *rows, seed_ppo_stats *one, double *t_mark,
                     seed_err *err)
{
	gather(L, p, rows);
	seed_model_forward(L->model, p->M, p->mb_obs, p->mb_logits, p->mb_values);
	seed_ppo_batch mb = {.N = p->M,
	                     .A = L->A,
	                     .logits = p->mb_logits,
	                     .behaviour_logits = p->mb_blogits,
	                     .actions = p->mb_action,
	                     .advantages = p->mb_adv,
	                     .returns = p->mb_ret,
	                     .old_values = p->mb_old,
	                     .values = p->mb_values,
	                     .box_actions = p->mb_box};
	int rc = seed_ppo_loss(&L->cfg->ppo, &mb, one, p->mb_dlogits, p->mb_dvalues, err);
	if (rc)
		return rc;
	/* Forward: the values and GAE, the gathering, the forward pass and
	 * the loss; then backward; then the optimizer step. */
	double tb = learn_now();
	seed_model_zero_grad(L->model);
	seed_model_backward(L->model, p->M, p->mb_dlogits, p->mb_dvalues);
	double to = learn_now();
	learn_optim_step(L);
	double te = learn_now();
	L->st.time_forward += tb - *t_mark;
	L->st.time_backward += to - tb;
	L->st.time_optim += te - to;
	*t_mark = te;
	return 0;
}

static int update(seed_learner *L, seed_err *err)
{
	ppo *p = L->alg;
	const seed_config *c = L->cfg;
	const seed_ppo_config *pc = &c->ppo;
	int T = L->T1 - 1, B = L->B;
	size_t TB = (size_t)T * (size_t)B;
	double t_mark = learn_now();
	/* The values of all T+1 rows, bootstrap row included: the old values
	 * of the value clip, and GAE's. */
	seed_model_forward(L->model, B, L->obs + TB * L->obs_bytes, NULL, p->values + TB);
	seed_model_forward(L->model, (int)TB, L->obs, NULL, p->values);
	seed_unroll_transitions(T, B, c->discount, L->reward, L->terminated, L->truncated, L->final_value,
	                        L->rewards_t, L->discounts_t);
	int rc = seed_ppo_gae(T, B, L->rewards_t, L->discounts_t, p->values, p->values + TB, pc->lambda,
	                      p->adv, p->ret);
	if (rc)
		return seed_err_set(err, rc, "learner: GAE refused its inputs (lambda %g)",
		                    (double)pc->lambda);
	learn_count_lag(L, 0, TB);
	for (size_t i = 0; i < TB; i++)
		p->perm[i] = (uint32_t)i;
	seed_ppo_stats sum = {0}, one;
	double norm_sum = 0;
	int steps = 0;
	for (int e = 0; e < pc->epochs; e++) {
		for (size_t i = TB - 1; i > 0; i--) { /* Fisher-Yates */
			size_t j = seed_rng_below(&L->rng, (uint32_t)(i + 1));
			uint32_t t = p->perm[i];
			p->perm[i] = p->perm[j];
			p->perm[j] = t;
		}
		for (int k = 0; k < pc->minibatches; k++) {
			rc = minibatch(L, p, p->perm + (size_t)k * (size_t)p->M, &one, &t_mark, err);
			if (rc)
				return rc;
			norm_sum += L->st.grad_norm;
			steps++;
			add_stats(&sum, &one);
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

/* PPO's own diagnostics; its value loss is baseline_loss and its mean ratio
 * pi/mu mean_rho, as for V-trace. */
static void metrics(const seed_learner *L, json_t *o)
{
	json_object_set_new(o, "approx_kl", json_real(L->st.loss.kl));
	json_object_set_new(o, "clip_fraction", json_real(L->st.loss.clipped_rho_fraction));
	json_object_set_new(o, "optim_steps", json_integer(L->st.optim_steps));
}

const learn_algo learn_ppo = {
    .name = "ppo",
    .steps_itself = true,
    .check = check,
    .alloc = alloc,
    .free = release,
    .update = update,
    .metrics = metrics,
};
