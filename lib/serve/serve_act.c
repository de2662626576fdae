/* serve_act.c: running the service's batch (seed_serve_run): the
 * agent's forward pass over the batch (a recurrent core's inputs gathered
 * from the sessions, each row's epsilon), or the population's, or uniform
 * random play; the answers; and each row's step appended to its unroll.
 *
 * A request the agent refuses after it was taken is answered with an error
 * frame and its half starts afresh; every other request of the batch gets
 * its action frame.
 */
#include <stdlib.h>
#include <string.h>

#include "seed/clock.h"
#include "seed/gaussian.h"
#include "seed/policy.h"
#include "serve_internal.h"

/* Refuse request i of the batch after it was taken: an error frame, and
 * the half starts afresh (its step was recorded but never acted on). */
void serve_fail(seed_serve *s, int i, int code, const seed_err *err)
{
	seed_batch_req *r = &s->b->req[i];
	seed_session *h = r->owner;
	s->act.failed[i] = 1;
	s->st.refused++;
	h->last_seq = -1;
	if (h->unroll)
		seed_unroll_restart(h->unroll);
	serve_send_error(s, NULL, r->id, r->idlen, code, err->msg, "step");
}

static seed_tensor rows_view(const seed_serve *s, const unsigned char *base, int64_t row0, int rows)
{
	int64_t shape[SEED_TENSOR_MAX_RANK] = {rows};
	for (int i = 0; i < s->agent_layout.obs_rank; i++)
		shape[1 + i] = s->agent_layout.obs_shape[i];
	return seed_tensor_view((void *)(base + (size_t)row0 * s->b->row_bytes), s->batch_dtype,
	                        1 + s->agent_layout.obs_rank, shape);
}

/* A recurrent agent's inputs for the batch's rows: each session's state,
 * the reward that came with its request, its previous actions (-1 before
 * its first answer) and resets, gathered in batch order; and the same for
 * the final observations, seen from the state before the reset. */
static void gather_core(seed_serve *s, int S)
{
	seed_batcher *b = s->b;
	size_t R = (size_t)b->rows;
	s->act.core_in =
	    seed_xgrow(s->act.core_in, &s->act.cap_core_in, R * (size_t)S, sizeof *s->act.core_in);
	s->act.core_out =
	    seed_xgrow(s->act.core_out, &s->act.cap_core_out, R * (size_t)S, sizeof *s->act.core_out);
	s->act.core_reward =
	    seed_xgrow(s->act.core_reward, &s->act.cap_core_reward, R, sizeof *s->act.core_reward);
	s->act.core_action =
	    seed_xgrow(s->act.core_action, &s->act.cap_core_action, R, sizeof *s->act.core_action);
	s->act.core_reset =
	    seed_xgrow(s->act.core_reset, &s->act.cap_core_reset, R, sizeof *s->act.core_reset);
	for (int i = 0; i < b->n; i++) {
		const seed_batch_req *r = &b->req[i];
		const seed_session *h = r->owner;
		size_t k = (size_t)r->row0, n = (size_t)r->rows;
		memcpy(s->act.core_in + k * (size_t)S, h->core, n * (size_t)S * sizeof(float));
		memcpy(s->act.core_reward + k, h->core_reward, n * sizeof(float));
		memcpy(s->act.core_reset + k, h->core_reset, n);
		for (size_t j = 0; j < n; j++)
			s->act.core_action[k + j] = h->acted ? h->actions[j] : -1;
	}
	if (b->nfinal == 0)
		return;
	size_t F = (size_t)b->nfinal;
	s->act.final_in =
	    seed_xgrow(s->act.final_in, &s->act.cap_final_in, F * (size_t)S, sizeof *s->act.final_in);
	s->act.final_reward =
	    seed_xgrow(s->act.final_reward, &s->act.cap_final_reward, F, sizeof *s->act.final_reward);
	s->act.final_action =
	    seed_xgrow(s->act.final_action, &s->act.cap_final_action, F, sizeof *s->act.final_action);
	for (size_t f = 0; f < F; f++) {
		size_t row = (size_t)b->req[b->final_req[f]].row0 + (size_t)b->final_row[f];
		memcpy(s->act.final_in + f * (size_t)S, s->act.core_in + row * (size_t)S,
		       (size_t)S * sizeof(float));
		s->act.final_reward[f] = s->act.core_reward[row];
		s->act.final_action[f] = s->act.core_action[row];
	}
}

/* The exploration of row `row` of half h under the schedule of opts (see
 * seed/serve.h): environment i of N. */
static float env_epsilon(const seed_serve *s, const seed_session *h, int row)
{
	int64_t N = s->o.epsilon_envs, K = h->layout.rows;
	int64_t E = s->o.actor_envs > 0 ? s->o.actor_envs : h->env0 > 0 ? (int64_t)h->env0 + K : 2 * K;
	int64_t i = ((int64_t)h->actor * E + (int64_t)h->env0 + row) % N;
	if (i < 0) /* a negative env0 from a peer */
		i += N;
	return (float)seed_policy_apex_epsilon((int)i, (int)N, s->o.epsilon_base, s->o.epsilon_alpha);
}

/* Whether the batch's rows each get their own epsilon (a Q agent with the
 * schedule), and if so each row's, in batch order. */
static bool gather_eps(seed_serve *s)
{
	if (s->o.epsilon_envs < 1 || seed_agent_head(s->agent) != SEED_HEAD_DUELING)
		return false;
	seed_batcher *b = s->b;
	s->act.eps = seed_xgrow(s->act.eps, &s->act.cap_eps, (size_t)b->rows, sizeof *s->act.eps);
	for (int i = 0; i < b->n; i++) {
		const seed_batch_req *r = &b->req[i];
		for (int j = 0; j < r->rows; j++)
			s->act.eps[r->row0 + j] = env_epsilon(s, r->owner, j);
	}
	return true;
}

/* The core inputs of rows [row0, row0 + n) of the batch and their
 * epsilons (NULL without a core and without epsilons). */
static const seed_agent_core *core_at(const seed_serve *s, int S, bool eps, int64_t row0, seed_agent_core *c)
{
	size_t k = (size_t)row0;
	*c = (seed_agent_core){.epsilon = eps ? s->act.eps + k : NULL};
	if (S == 0)
		return eps ? c : NULL;
	c->prev_reward = s->act.core_reward + k;
	c->prev_action = s->act.core_action + k;
	c->reset = s->act.core_reset + k;
	c->state = s->act.core_in + k * (size_t)S;
	c->state_out = s->act.core_out + k * (size_t)S;
	return c;
}

/* The same for final observation k: no reset, no new state kept. */
static const seed_agent_core *final_core_at(const seed_serve *s, int S, int k, seed_agent_core *c)
{
	if (S == 0)
		return NULL;
	*c = (seed_agent_core){.prev_reward = s->act.final_reward + k,
	                       .prev_action = s->act.final_action + k,
	                       .state = s->act.final_in + (size_t)k * (size_t)S};
	return c;
}

/* Act on the batch with the agent: the whole batch in one pass when every
 * request fits and converts, else request by request, refusing those that
 * do not.  Then the values of the final observations.  A recurrent agent's
 * new state goes back into the sessions of the requests it answers. */
static void act(seed_serve *s)
{
	seed_batcher *b = s->b;
	size_t A = (size_t)s->agent_layout.num_actions, P = (size_t)seed_agent_policy_width(s->agent);
	bool box = seed_agent_box(s->agent);
	int S = seed_agent_state_floats(s->agent);
	seed_agent_core c;
	seed_err err;
	if (S > 0)
		gather_core(s, S);
	bool eps = gather_eps(s);
	bool whole = true;
	for (int i = 0; i < b->n && whole; i++)
		whole = serve_fits(s, b->req[i].owner, &err);
	if (whole) {
		seed_tensor t = rows_view(s, b->obs, 0, (int)b->rows);
		whole = (box ? seed_agent_act_box(s->agent, (int)b->rows, &t, core_at(s, S, eps, 0, &c),
		                                  s->act.raw, s->act.logits, NULL, &err)
		             : seed_agent_act_core(s->agent, (int)b->rows, &t, core_at(s, S, eps, 0, &c),
		                                   s->act.actions, s->act.logits, NULL, &err)) == 0;
	}
	for (int i = 0; i < b->n && !whole; i++) {
		const seed_batch_req *r = &b->req[i];
		seed_tensor t = rows_view(s, b->obs, r->row0, r->rows);
		const seed_agent_core *rc = core_at(s, S, eps, r->row0, &c);
		float *lg = s->act.logits + (size_t)r->row0 * P;
		int code = !serve_fits(s, r->owner, &err) ? -SEED_EFRAME
		           : box                          ? seed_agent_act_box(s->agent, r->rows, &t, rc,
		                                                               s->act.raw + (size_t)r->row0 * A, lg, NULL, &err)
		                 : seed_agent_act_core(s->agent, r->rows, &t, rc, s->act.actions + r->row0,
		                                       lg, NULL, &err);
		if (code)
			serve_fail(s, i, code, &err);
	}
	for (int i = 0; i < b->n && S > 0; i++) {
		const seed_batch_req *r = &b->req[i];
		seed_session *h = r->owner;
		if (!s->act.failed[i])
			memcpy(h->core, s->act.core_out + (size_t)r->row0 * (size_t)S,
			       (size_t)r->rows * (size_t)S * sizeof(float));
	}
	if (b->nfinal == 0)
		return;
	seed_tensor t = rows_view(s, b->final_obs, 0, b->nfinal);
	bool all = whole && seed_agent_values_core(s->agent, b->nfinal, &t, final_core_at(s, S, 0, &c),
	                                           s->act.final_values, &err) == 0;
	for (int k = 0; k < b->nfinal; k++) {
		int i = b->final_req[k];
		if (s->act.failed[i])
			continue;
		if (!all) {
			t = rows_view(s, b->final_obs, k, 1);
			if (seed_agent_values_core(s->agent, 1, &t, final_core_at(s, S, k, &c),
			                           &s->act.final_values[k], &err)) {
				seed_err e2;
				serve_fail(s, i,
				           seed_err_set(&e2, -SEED_EFRAME,
				                        "step frame: field 'final_obs': %s", err.msg),
				           &e2);
				continue;
			}
		}
		seed_session *h = b->req[i].owner;
		seed_unroll_set_final_value(h->unroll, b->final_row[k], s->act.final_values[k]);
	}
}

/* A Box half's answer: the raw samples raw (K, A) of the agent's Gaussian
 * policy, or without a model standard normal ones (a Gaussian of zero
 * parameters, as the unroll records it), kept in h->box_raw, and mapped
 * into the half's bounds (the model's squash; clipping without a model)
 * into h->box_act. */
static void box_answer(seed_serve *s, seed_session *h, const float *raw)
{
	size_t n = (size_t)h->layout.rows * (size_t)h->layout.num_actions;
	if (raw)
		memcpy(h->box_raw, raw, n * sizeof *raw);
	else
		for (size_t i = 0; i < n; i++)
			h->box_raw[i] = (float)seed_rng_normal(&s->rng);
	seed_squash sq = SEED_SQUASH_CLIP;
	if (raw)
		seed_model_squash(seed_agent_model(s->agent), &sq);
	seed_gaussian_to_env(h->layout.rows, h->layout.num_actions, h->box_raw, h->low, h->high, sq,
	                     h->box_act);
}

/* Answer request i of the batch (unless it was refused): its actions
 * (the agent's or the population's when modeled, else uniform), then its
 * step recorded in its unroll (a full one pushed) or, in population mode,
 * its ended episodes pushed.  S: the recurrent state's floats of the rows
 * acted on (0: none).  Returns 0 or the error of a push. */
static int answer(seed_serve *s, int i, bool modeled, bool pop, int S, int64_t version)
{
	const seed_batch_req *r = &s->b->req[i];
	seed_session *h = r->owner;
	h->pending = false;
	if (s->act.failed[i])
		return 0;
	int K = h->layout.rows;
	size_t P = s->agent ? (size_t)seed_agent_policy_width(s->agent) : 1;
	h->acted = true;
	if (h->layout.box)
		box_answer(s, h,
		           modeled ? s->act.raw + (size_t)r->row0 * (size_t)h->layout.num_actions : NULL);
	else if (modeled)
		memcpy(h->actions, s->act.actions + r->row0, (size_t)K * sizeof *h->actions);
	else
		for (int k = 0; k < K; k++)
			h->actions[k] = (int32_t)seed_rng_below(&s->rng, (uint32_t)h->layout.num_actions);
	/* Population mode: rows playing an episode no generation wants are
	 * asked to restart, rows with no episode to play to hold. */
	bool any_reset = false, any_seed = false;
	if (pop)
		for (int k = 0; k < K; k++) {
			uint8_t x = (uint8_t)seed_evo_assign_request(s->pop.assign, &h->evo[k]);
			s->st.restarts += x == SEED_RESET_RESTART && h->reset[k] != SEED_RESET_RESTART;
			s->st.held += x == SEED_RESET_HOLD;
			h->reset[k] = x;
			any_reset |= x != SEED_RESET_STEP;
			/* an assigned episode to be played from its seed */
			h->reset_seed[k] = (int64_t)seed_evo_assign_reset_seed(s->pop.assign, &h->evo[k]);
			any_seed |= h->reset_seed[k] != 0;
		}
	/* Straight into the half's kept answer, no seed_frame built. */
	seed_buf_reset(&h->reply);
	const uint8_t *rs = any_reset ? h->reset : NULL;
	const int64_t *rseed = any_seed ? h->reset_seed : NULL;
	int enc = h->layout.box ? seed_frame_encode_action_box(&h->reply, h->run, h->actor, h->last_seq,
	                                                       h->env0, version, h->box_act, rs, rseed, K,
	                                                       h->layout.num_actions, NULL)
	                        : seed_frame_encode_action(&h->reply, h->run, h->actor, h->last_seq, h->env0,
	                                                   version, h->actions, rs, rseed, K, NULL);
	if (enc == 0) {
		double ts = seed_now_s();
		seed_chan_send(s->actors, r->id, r->idlen, h->reply.data, h->reply.len, true);
		s->st.time[SEED_PHASE_SEND] += seed_now_s() - ts;
	}
	s->st.steps += K;
	if (s->pop.active) {
		/* Episodes go out at once: the learner waits for them to finish
		 * its round. */
		return h->ep_n > 0 ? serve_send_episodes(s, h) : 0;
	}
	if (!h->unroll)
		return 0;
	/* The behaviour logits, for V-trace's importance weights (the uniform
	 * policy's are all equal: zeros). */
	const float *lg = modeled ? s->act.logits + (size_t)r->row0 * P : NULL;
	if (h->layout.box && seed_unroll_record_action_box(h->unroll, h->box_raw, lg, (int32_t)version))
		return serve_send_unroll(s, h);
	if (h->layout.box)
		return 0;
	const float *st = S > 0 ? s->act.core_in + (size_t)r->row0 * (size_t)S : NULL;
	const int32_t *pa = S > 0 ? s->act.core_action + r->row0 : NULL;
	if (seed_unroll_record_action(h->unroll, h->actions, lg, (int32_t)version, st, pa))
		return serve_send_unroll(s, h);
	return 0;
}

int seed_serve_run(seed_serve *s)
{
	seed_batcher *b = s->b;
	if (b->n == 0)
		return 0;
	s->st.batches++;
	s->st.rows += b->rows;
	double t0 = seed_now_s();
	s->act.actions =
	    seed_xgrow(s->act.actions, &s->act.cap_rows, (size_t)b->rows, sizeof *s->act.actions);
	size_t P = s->agent ? (size_t)seed_agent_policy_width(s->agent) : 1;
	s->act.logits =
	    seed_xgrow(s->act.logits, &s->act.cap_logits, (size_t)b->rows * P, sizeof *s->act.logits);
	if (s->agent && seed_agent_box(s->agent))
		s->act.raw =
		    seed_xgrow(s->act.raw, &s->act.cap_raw,
		               (size_t)b->rows * (size_t)s->agent_layout.num_actions, sizeof *s->act.raw);
	s->act.final_values = seed_xgrow(s->act.final_values, &s->act.cap_final, (size_t)b->nfinal,
	                                 sizeof *s->act.final_values);
	s->act.failed = seed_xgrow(s->act.failed, &s->act.cap_req, (size_t)b->n, 1);
	memset(s->act.failed, 0, (size_t)b->n);
	/* An agent built since these requests came may keep a state their
	 * sessions do not have: they play at random this once, and are remade
	 * with its state at their next request. */
	bool modeled = s->agent != NULL;
	for (int i = 0; i < b->n && modeled; i++)
		modeled = ((const seed_session *)b->req[i].owner)->layout.state_size ==
		          seed_agent_state_floats(s->agent);
	/* In population mode the agent only converts the observations (as
	 * they come); the population acts, and the answers carry the current
	 * generation as their policy version. */
	bool pop = modeled && s->pop.active;
	int S = modeled && !pop ? seed_agent_state_floats(s->agent) : 0;
	if (pop)
		serve_act_population(s);
	else if (modeled)
		act(s);
	double t1 = seed_now_s();
	s->st.time[SEED_PHASE_FORWARD] += t1 - t0;
	double c0 = serve_counted(s);
	int64_t version = pop ? s->st.generation : modeled ? seed_agent_policy_version(s->agent) : 0;
	int rc = 0;
	for (int i = 0; i < b->n; i++) {
		int e = answer(s, i, modeled, pop, S, version);
		rc = rc ? rc : e;
	}
	seed_batcher_clear(b);
	/* The rest of the loop: choosing random actions, encoding answers and
	 * unrolls. */
	s->st.time[SEED_PHASE_ENCODE] += seed_now_s() - t1 - (serve_counted(s) - c0);
	return rc;
}
