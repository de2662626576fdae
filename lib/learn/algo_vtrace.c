/* algo_vtrace.c: V-trace actor-critic (IMPALA), the learner's algorithm
 * "vtrace" (learner_internal.h).
 *
 * On unroll frames, with an actor-critic model (with or without a core):
 * forward over the batch, the transition rule, the V-trace loss
 * (seed_loss_vtrace_ws), backward into the model's gradient slab; the core
 * clips and steps.  Its buffers: the model's logits and values and their
 * gradients, and the loss's workspace.
 */
#include "learner_internal.h"

#include <stdlib.h>

#include "seed/buf.h"
#include "seed/loss.h"

typedef struct vtrace {
	float *logits, *values;   /* (T, B, A), (T1, B): the model's; (T1, ...) logits with a core */
	float *dlogits, *dvalues; /* (T, B, A), (T, B); (T1, ...) with a core */
	void *loss_ws;            /* seed_loss_workspace_size(T, B, A) bytes */
} vtrace;

static int check(const seed_learner *L, seed_err *err)
{
	return learn_need_actor_critic(L, "V-trace", err);
}

static void *alloc(seed_learner *L)
{
	vtrace *v = seed_xcalloc(1, sizeof *v);
	size_t n = (size_t)L->T1 * (size_t)L->B, nt = n - (size_t)L->B, A = (size_t)L->P;
	/* With a core the bootstrap step runs in the sequence, with the
	 * others: its logits are computed and get a zero gradient. */
	size_t nl = L->S > 0 ? n : nt;
	v->logits = seed_xcalloc(nl * A, sizeof(float));
	v->values = seed_xcalloc(n, sizeof(float));
	v->dlogits = seed_xcalloc(nl * A, sizeof(float));
	v->dvalues = seed_xcalloc(nl, sizeof(float));
	v->loss_ws = seed_xaligned(seed_loss_workspace_size(L->T1 - 1, L->B, L->A));
	return v;
}

static void release(void *alg)
{
	vtrace *v = alg;
	free(v->logits);
	free(v->values);
	free(v->dlogits);
	free(v->dvalues);
	free(v->loss_ws);
	free(v);
}

/* The model's gradient for the full batch into its gradient slab. */
static int update(seed_learner *L, seed_err *err)
{
	vtrace *v = L->alg;
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
		learn_core_inputs(L);
		seed_model_seq q = {.T = T1,
		                    .B = B,
		                    .obs = L->obs,
		                    .prev_reward = L->reward,
		                    .prev_action = L->prev_action,
		                    .reset = L->reset,
		                    .state0 = L->state0};
		seed_model_forward_seq(L->model, &q, v->logits, v->values);
	} else {
		seed_model_forward(L->model, B, L->obs + TB * L->obs_bytes, NULL, v->values + TB);
		seed_model_forward(L->model, T * B, L->obs, v->logits, v->values);
	}
	seed_unroll_transitions(T, B, c->discount, L->reward, L->terminated, L->truncated, L->final_value,
	                        L->rewards_t, L->discounts_t);
	learn_count_lag(L, 0, TB);
	seed_loss_batch batch = {
	    .T = T,
	    .B = B,
	    .A = A,
	    .logits = v->logits,
	    .behaviour_logits = L->blogits,
	    .actions = L->action,
	    .box_actions = L->box_action,
	    .rewards = L->rewards_t,
	    .discounts = L->discounts_t,
	    .values = v->values,
	    .bootstrap_value = v->values + TB,
	};
	int rc = seed_loss_vtrace_ws(&c->loss, &batch, v->loss_ws, &L->st.loss, v->dlogits, v->dvalues, err);
	if (rc)
		return rc;
	L->t_backward = learn_now();
	seed_model_zero_grad(L->model);
	if (L->S > 0) /* the bootstrap step's rows, after the T*B the loss wrote, stay zero */
		seed_model_backward_seq(L->model, v->dlogits, v->dvalues);
	else
		seed_model_backward(L->model, T * B, v->dlogits, v->dvalues);
	return 0;
}

const learn_algo learn_vtrace = {
    .name = "vtrace",
    .check = check,
    .alloc = alloc,
    .free = release,
    .update = update,
};
