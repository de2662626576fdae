/* serve.c: the inference service (seed/serve.h): the object, its policy
 * and agent (the model a learner sends, or a checkpoint's), requests taken
 * into sessions and the batch, the loop's turn and the parameters channel.
 * The rest of a request's path is in serve_act.c, serve_out.c and
 * serve_pop.c, a program's loop around the turns in serve_loop.c;
 * serve_internal.h says which file holds what, and the invariants they keep
 * together.
 */
#include "seed/serve.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "seed/checkpoint.h"
#include "seed/clock.h"
#include "serve_internal.h"

void serve_warn(seed_serve *s, const char *fmt, ...)
{
	if (!s->o.warn)
		return;
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	s->o.warn(s->o.ctx, msg);
}

int seed_serve_new(seed_serve **out, const seed_serve_opts *o, seed_chan *actors, seed_chan *unrolls,
                   seed_chan *params, seed_err *err)
{
	if (o->max_envs < 1 || o->max_actions < 1 || o->max_row_bytes < 1)
		return seed_err_set(err, -EINVAL, "serve: bounds of %d envs, %d actions, %zu bytes a row",
		                    o->max_envs, o->max_actions, o->max_row_bytes);
	if (!(o->epsilon >= 0 && o->epsilon <= 1) || o->epsilon_envs < 0 || o->actor_envs < 0)
		return seed_err_set(err, -EINVAL, "serve: epsilon %g, over %d envs of %d per actor",
		                    o->epsilon, o->epsilon_envs, o->actor_envs);
	if (o->epsilon_envs > 0 && (!(o->epsilon_base >= 0 && o->epsilon_base <= 1) ||
	                            !(o->epsilon_alpha >= 0 && isfinite(o->epsilon_alpha))))
		return seed_err_set(err, -EINVAL,
		                    "serve: epsilon base %g (in [0, 1]) and alpha %g (finite, >= 0)",
		                    o->epsilon_base, o->epsilon_alpha);
	int steps = o->T + (o->overlap > 0 ? o->overlap : 1);
	if (o->burn_in < 0 || o->n_step < 0 || (unrolls && steps - o->burn_in < 2))
		return seed_err_set(
		    err, -EINVAL,
		    "serve: burn-in %d of unrolls of %d steps leaves fewer than the 2 steps a "
		    "priority needs (n-step %d)",
		    o->burn_in, steps, o->n_step);
	if (!(o->discount >= 0 && o->discount <= 1) || !(o->eta >= 0 && o->eta <= 1) ||
	    !(o->rescale_eps >= 0 && isfinite(o->rescale_eps)))
		return seed_err_set(err, -EINVAL,
		                    "serve: discount %g and eta %g must be in [0, 1], the value rescaling's "
		                    "epsilon %g finite and >= 0",
		                    o->discount, o->eta, o->rescale_eps);
	if (!(o->push_warn_interval >= 0 && isfinite(o->push_warn_interval)))
		return seed_err_set(err, -EINVAL, "serve: push_warn_interval %g (finite, >= 0)",
		                    o->push_warn_interval);
	seed_serve *s = seed_xcalloc(1, sizeof *s);
	seed_sessions_opts so = {.unrolls = unrolls != NULL,
	                         .T = o->T,
	                         .overlap = o->overlap > 0 ? o->overlap : 1,
	                         .idle_expiry = o->idle_expiry,
	                         .max_sessions = o->max_halves,
	                         .max_bytes = o->max_bytes,
	                         .dropped = serve_session_dropped,
	                         .ctx = s};
	seed_sessions *ss = NULL;
	seed_batcher *b = NULL;
	int rc = seed_sessions_new(&ss, &so, err);
	if (rc == 0)
		rc = seed_batcher_new(&b, o->max_batch, o->timeout, err);
	seed_frame_decoder *dec = NULL;
	if (rc == 0 && (rc = seed_frame_decoder_new(&dec)) != 0)
		seed_err_set(err, rc, "serve: cannot make a frame decoder");
	if (rc) {
		seed_sessions_free(&ss);
		seed_batcher_free(&b);
		free(s);
		return rc;
	}
	s->o = *o;
	s->actors = actors;
	s->unrolls = unrolls;
	s->params = params;
	s->ss = ss;
	s->b = b;
	s->dec = dec;
	seed_rng_init(&s->rng, o->seed, 0x1f3);
	seed_buf_init(&s->out);
	s->st.generation = -1;
	*out = s;
	return 0;
}

void seed_serve_free(seed_serve **sp)
{
	if (!sp || !*sp)
		return;
	seed_serve *s = *sp;
	seed_sessions_free(&s->ss);
	seed_batcher_free(&s->b);
	seed_frame_decoder_free(&s->dec);
	seed_agent_free(&s->agent);
	seed_checkpoint_free(&s->ckpt);
	seed_evo_assign_free(&s->pop.assign);
	if (s->pop.slot[0].noise == s->pop.slot[1].noise) /* shared */
		s->pop.slot[1].noise = NULL;
	for (int i = 0; i < 2; i++) {
		seed_population_free(&s->pop.slot[i].pop);
		free(s->pop.slot[i].json);
		seed_noise_free(&s->pop.slot[i].noise);
	}
	seed_evo_gen_copy_free(&s->pop.pending);
	free(s->pop.row_slot);
	free(s->pop.row_member);
	free(s->pop.pop_member);
	free(s->pop.pop_actions);
	free(s->pop.pop_index);
	free(s->pop.pop_obs);
	free(s->pop.pop_raw);
	free(s->pop.obs_sum);
	free(s->pop.obs_sumsq);
	free(s->json);
	free(s->staged);
	free(s->act.actions);
	free(s->act.raw);
	free(s->act.logits);
	free(s->act.final_values);
	free(s->act.failed);
	free(s->act.core_in);
	free(s->act.core_out);
	free(s->act.core_reward);
	free(s->act.core_action);
	free(s->act.core_reset);
	free(s->act.final_in);
	free(s->act.final_reward);
	free(s->act.final_action);
	free(s->take.conv);
	free(s->act.eps);
	free(s->q.prio);
	free(s->q.pq);
	free(s->q.preward);
	free(s->q.ploss);
	free(s->q.paction);
	free(s->q.pdone);
	seed_buf_free(&s->out);
	free(s);
	*sp = NULL;
}

/* Build the agent for the observations of agent_layout (of layout_actor's
 * frames), and play the generation waiting for it; when it cannot be built,
 * say so (rate-limited) and play at random. */
static void build_agent(seed_serve *s)
{
	seed_err err;
	seed_agent *a = NULL;
	const seed_unroll_layout *l = &s->agent_layout;
	int rc = seed_agent_new(&a, s->json, l->obs_dtype, l->obs_rank, l->obs_shape, l->num_actions,
	                        2 * s->o.max_batch, s->o.greedy, s->o.seed, 0x1f3, &err);
	if (rc == 0 && s->o.device)
		rc = seed_model_set_device(seed_agent_model(a), s->o.device, &err);
	if (rc == 0 && s->have_staged) {
		rc = seed_agent_load_params(a, s->staged, s->staged_len, s->staged_version, &err);
	} else if (rc == 0 && s->ckpt) {
		rc = seed_checkpoint_load_model(s->ckpt, seed_agent_model(a), &err);
		seed_agent_set_policy_version(a, s->ckpt->policy_version);
	}
	if (rc) {
		seed_agent_free(&a);
		s->build_failed = true;
		/* A learner publishes after every update: say it once in a while. */
		double now = seed_now_s();
		if (s->build_warned && now - s->last_build_warn < 10)
			return;
		s->build_warned = true;
		s->last_build_warn = now;
		serve_warn(s,
		           "cannot build the model for actor %" PRIu32
		           "'s observations (%s); playing uniformly at random "
		           "(policy version 0) until parameters that fit arrive",
		           s->layout_actor, err.msg);
		return;
	}
	if (seed_agent_head(a) == SEED_HEAD_DUELING)
		seed_agent_set_epsilon(a, s->o.epsilon, NULL); /* checked in seed_serve_new */
	else if (s->o.q_settings && !s->q_warned) {
		s->q_warned = true;
		serve_warn(s,
		           "the model has an actor-critic head: it samples from its policy, and the Q-model "
		           "settings (epsilon, priorities) do not apply");
	}
	s->agent = a;
	s->have_staged = false;
	if (s->pop.have_pending)
		serve_apply_generation(s);
}

/* Build the agent now, for the observations the first request told: the
 * parameters that just arrived are played from the next request on.
 * Nothing to do before a request has told them, with an agent that took
 * the parameters in place, or while a build for them has failed. */
static void rebuild(seed_serve *s)
{
	if (s->o.model && !s->agent && s->json && s->have_layout && !s->build_failed)
		build_agent(s);
}

/* seed_serve_policy, without the building. */
static void take_policy(seed_serve *s, const char *json, size_t len, const void *params, size_t nbytes,
                        int64_t version)
{
	if (json && (!s->json || strlen(s->json) != len || memcmp(s->json, json, len) != 0)) {
		/* Another architecture: another agent. */
		free(s->json);
		s->json = seed_xmalloc(len + 1);
		memcpy(s->json, json, len);
		s->json[len] = '\0';
		seed_agent_free(&s->agent);
		s->build_failed = false;
	}
	if (!params)
		return;
	if (s->agent && seed_agent_load_params(s->agent, params, nbytes, version, NULL) == 0) {
		s->have_staged = false;
		return;
	}
	s->staged = seed_xgrow(s->staged, &s->staged_cap, nbytes, 1);
	memcpy(s->staged, params, nbytes);
	s->staged_len = nbytes;
	s->staged_version = version;
	s->have_staged = true;
	seed_agent_free(&s->agent);
	s->build_failed = false;
}

int seed_serve_policy(seed_serve *s, const char *json, size_t len, const void *params, size_t nbytes,
                      int64_t version)
{
	take_policy(s, json, len, params, nbytes, version);
	rebuild(s);
	return 0;
}

int seed_serve_checkpoint(seed_serve *s, seed_checkpoint **ck, seed_err *err)
{
	if (!(*ck)->model)
		return seed_err_set(err, -EINVAL, "the checkpoint does not describe its model");
	char *json = json_dumps((*ck)->model, JSON_COMPACT);
	if (!json)
		return seed_err_set(err, -ENOMEM, "the checkpoint's model description cannot be written out");
	take_policy(s, json, strlen(json), NULL, 0, 0);
	free(json);
	/* The agent starts from these parameters, even for the description
	 * in use. */
	seed_agent_free(&s->agent);
	s->build_failed = false;
	s->have_staged = false;
	seed_checkpoint_free(&s->ckpt);
	s->ckpt = *ck;
	*ck = NULL;
	rebuild(s);
	return 0;
}

/* The type named at the start of a decoder's message ("step frame: ..."),
 * or NULL: the decoder names the type whenever it got that far. */
static const char *failed_type(const char *msg)
{
	for (int t = SEED_FRAME_INVALID + 1; t < SEED_FRAME_NTYPES; t++) {
		const char *name = seed_frame_type_name((seed_frame_type)t);
		size_t n = strlen(name);
		if (strncmp(msg, name, n) == 0 && strncmp(msg + n, " frame:", 7) == 0)
			return name;
	}
	return NULL;
}

/* Say, rate-limited, that a half's unroll was dropped for a gap in seq:
 * a client that counts seq per actor instead of per half loses every one. */
static void warn_gap(seed_serve *s, const seed_session *h, int64_t seq, int64_t prev, double now)
{
	if (s->st.gaps > 1 && now - s->last_gap_warn < 10)
		return;
	serve_warn(s,
	           "actor %" PRIu32 " (run %" PRIu32 ", envs %" PRId32 "..%" PRId32
	           "): step frame seq %" PRId64 " after %" PRId64
	           ": its unroll in progress is dropped (seq counts the step frames of each half, "
	           "see seed-frames(7)); %" PRId64 " such gaps in all, %" PRId64 " since the last warning",
	           h->actor, h->run, h->env0, h->env0 + h->layout.rows - 1, seq, prev, s->st.gaps,
	           s->st.gaps - s->gaps_warned);
	s->last_gap_warn = now;
	s->gaps_warned = s->st.gaps;
}

/* Whether h's observations fit the agent (it converts dtypes). */
bool serve_fits(const seed_serve *s, const seed_session *h, seed_err *err)
{
	const seed_unroll_layout *a = &s->agent_layout, *l = &h->layout;
	bool ok = a->num_actions == l->num_actions && a->obs_rank == l->obs_rank;
	for (int i = 0; ok && i < a->obs_rank; i++)
		ok = a->obs_shape[i] == l->obs_shape[i];
	if (ok && l->box != seed_agent_box(s->agent)) {
		seed_err_set(
		    err, -SEED_EFRAME,
		    l->box ? "step frame: field 'action_low': a Box action space (%d real numbers); the "
		             "model's policy is categorical: Box actions need \"policy\": {\"type\": "
		             "\"gaussian\"}"
		           : "step frame: %d discrete actions (no 'action_low'); the model's policy is "
		             "Gaussian, for Box actions",
		    l->num_actions);
		return false;
	}
	seed_squash sq;
	seed_err e;
	if (ok && l->box && seed_model_squash(seed_agent_model(s->agent), &sq) == 0 &&
	    seed_gaussian_check_bounds(l->num_actions, h->low, h->high, sq, &e)) {
		seed_err_set(err, -SEED_EFRAME, "step frame: field 'action_low': %s", e.msg);
		return false;
	}
	if (!ok) {
		char got[80] = "", want[80] = "";
		for (int i = 0, o = 0; i < l->obs_rank; i++)
			o += snprintf(got + o, sizeof got - (size_t)o, ",%" PRId64, l->obs_shape[i]);
		for (int i = 0, o = 0; i < a->obs_rank; i++)
			o += snprintf(want + o, sizeof want - (size_t)o, ",%" PRId64, a->obs_shape[i]);
		seed_err_set(
		    err, -SEED_EFRAME,
		    "step frame: field 'obs': observations [K%s] with %d actions do not fit the model, built "
		    "for [K%s] with %d actions",
		    got, l->num_actions, want, a->num_actions);
	}
	return ok;
}

/* With a model, check a request's observations and convert them to the
 * model's dtype: *rows and *finals point at what the batch gathers. */
static int prepare(seed_serve *s, const seed_session *h, const seed_tensor *obs, const seed_tensor *fin,
                   const void **rows, const void **finals, seed_err *err)
{
	if (!serve_fits(s, h, err))
		return -SEED_EFRAME;
	if (obs->dtype == seed_agent_obs_dtype(s->agent))
		return 0;
	size_t n = (size_t)h->layout.rows * seed_agent_obs_bytes(s->agent);
	s->take.conv = seed_xgrow(s->take.conv, &s->take.cap_conv, 2 * n, 1);
	seed_err e;
	int rc = seed_agent_convert(s->agent, h->layout.rows, obs, s->take.conv, &e);
	if (rc == 0 && fin) {
		rc = seed_agent_convert(s->agent, h->layout.rows, fin, s->take.conv + n, &e);
		if (rc)
			return seed_err_set(err, rc, "step frame: field 'final_obs': %s", e.msg);
		*finals = s->take.conv + n;
	}
	if (rc)
		return seed_err_set(err, rc, "step frame: field 'obs': %s", e.msg);
	*rows = s->take.conv;
	return 0;
}

/* Decode m as a step frame within the bounds of opts into s->f, read once
 * into its typed view s->step, and its observations' layout into *l.
 * Returns false when it was answered with an error frame instead. */
static bool take_step_frame(seed_serve *s, const seed_chan_msg *m, seed_unroll_layout *l)
{
	seed_err err;
	seed_frame *f = &s->f;
	int rc = seed_frame_decoder_decode(s->dec, f, m->data, m->len, &err);
	if (rc) {
		serve_send_error(s, m, NULL, 0, rc, err.msg, failed_type(err.msg));
		return false;
	}
	const char *tn = seed_frame_type_name(f->type);
	if (f->type != SEED_FRAME_STEP) {
		rc =
		    seed_err_set(&err, -SEED_ETYPE, "%s frame: seed-infer takes step frames from actors", tn);
		serve_send_error(s, m, NULL, 0, rc, err.msg, tn);
		return false;
	}
	if ((rc = seed_frame_step(f, &s->step, &err)) != 0) { /* cannot happen: decoding checked */
		serve_send_error(s, m, NULL, 0, rc, err.msg, tn);
		return false;
	}
	const seed_tensor *obs = s->step.obs;
	int64_t K = s->step.envs, A = s->step.num_actions;
	size_t row_bytes = seed_tensor_nbytes(obs) / (size_t)K;
	if (K > s->o.max_envs || A > s->o.max_actions || row_bytes > s->o.max_row_bytes) {
		rc = seed_err_set(&err, -E2BIG,
		                  "step frame: %" PRId64 " environments, %" PRId64
		                  " actions, %zu bytes per observation: "
		                  "more than the server takes (at most %d, %d, %zu)",
		                  K, A, row_bytes, s->o.max_envs, s->o.max_actions, s->o.max_row_bytes);
		serve_send_error(s, m, NULL, 0, rc, err.msg, tn);
		return false;
	}
	if (seed_tensor_nbytes(obs) > s->o.max_bytes) {
		/* The batch would copy (and keep room for) all of it. */
		rc = seed_err_set(
		    &err, -E2BIG,
		    "step frame: field 'obs': %zu bytes, more than the bound of %zu on the server's "
		    "memory",
		    seed_tensor_nbytes(obs), s->o.max_bytes);
		serve_send_error(s, m, NULL, 0, rc, err.msg, tn);
		return false;
	}
	*l = (seed_unroll_layout){.rows = (int)K,
	                          .num_actions = (int)A,
	                          .obs_dtype = obs->dtype,
	                          .obs_rank = obs->rank - 1,
	                          .box = s->step.action_low != NULL,
	                          .frame_skip = s->step.frame_skip};
	memcpy(l->obs_shape, obs->shape + 1, (size_t)l->obs_rank * sizeof l->obs_shape[0]);
	return true;
}

/* The session of the half that sent s->step (made or remade for layout l),
 * or NULL when m was answered with an error frame instead. */
static seed_session *take_session(seed_serve *s, const seed_chan_msg *m, const seed_unroll_layout *l,
                                  double now)
{
	seed_err err;
	const seed_step *step = &s->step;
	seed_session *h = NULL;
	int rc = seed_sessions_get(s->ss, step->run, step->actor, step->env0, l, now, &h, &err);
	if (rc < 0) {
		char msg[sizeof err.msg + 16];
		snprintf(msg, sizeof msg, "step frame: %s", err.msg);
		serve_send_error(s, m, NULL, 0, rc, msg, "step");
		return NULL;
	}
	if (seed_sessions_evicted(s->ss) > s->st.evicted) {
		s->st.evicted = seed_sessions_evicted(s->ss);
		/* Eviction under load means the bounds are too small for the
		 * actors there are: every evicted live half loses its unroll. */
		if (s->evict_warns == 0 || now - s->last_evict_warn >= 10) {
			s->evict_warns++;
			s->last_evict_warn = now;
			serve_warn(
			    s,
			    "%" PRId64
			    " actor halves evicted so far, the longest idle first, to stay within %zu halves "
			    "and %zu bytes; an evicted half that comes back starts a new unroll",
			    s->st.evicted, s->o.max_halves, s->o.max_bytes);
		}
	}
	s->st.halves = (int64_t)seed_sessions_count(s->ss);
	return h;
}

/* Whether the request m of seq for h is a new step to act on: a resend is
 * answered with the kept answer (or waits for the one coming), a gap is
 * counted and said, a second request in flight is refused. */
static bool take_seq(seed_serve *s, const seed_chan_msg *m, seed_session *h, int64_t seq, double now)
{
	seed_err err;
	int64_t prev = h->last_seq;
	switch (seed_session_accept(h, seq)) {
	case SEED_SESSION_WAITING:
		s->st.resends++;
		return false;
	case SEED_SESSION_RESEND:
		s->st.resends++;
		seed_chan_send(s->actors, m->id, m->idlen, h->reply.data, h->reply.len, true);
		return false;
	case SEED_SESSION_GAP:
		s->st.gaps++;
		warn_gap(s, h, seq, prev, now);
		return true;
	case SEED_SESSION_STEP:
		return true;
	default: {
		int rc = seed_err_set(&err, -EBUSY,
		                      "step frame: field 'seq': %" PRId64 " while the request of seq %" PRId64
		                      " of actor %" PRIu32 " (env0 %" PRId32
		                      ") waits for its answer: one request in flight "
		                      "per half",
		                      seq, prev, h->actor, h->env0);
		serve_send_error(s, m, NULL, 0, rc, err.msg, "step");
		return false;
	}
	}
}

/* Record the step of s->step, request req of the batch, in h: a recurrent
 * core's inputs, the step in h's unroll and its ended episodes (or the
 * population's bookkeeping), and the final observations (rows of
 * row_bytes at finals) of truncated episodes for the model to value. */
static void record_step(seed_serve *s, seed_session *h, int req, const void *finals, size_t row_bytes)
{
	const seed_step *step = &s->step;
	int K = h->layout.rows;
	if (h->core) {
		/* The step's inputs besides obs: the reward that came with it,
		 * and which rows begin an episode (their state starts afresh). */
		memcpy(h->core_reward, step->reward, (size_t)K * sizeof(float));
		for (int b = 0; b < K; b++)
			h->core_reset[b] = step->terminated[b] || step->truncated[b];
	}
	if (s->pop.active) {
		serve_evo_step(s, h, step);
	} else if (h->unroll) {
		seed_unroll_record_step(h->unroll, step->obs->data, step->reward, step->terminated,
		                        step->truncated);
		serve_gather_episodes(s, h, step);
	}
	/* A model values the real last observation of truncated episodes, so
	 * that the learner can bootstrap from it. */
	if (s->o.model && h->unroll && finals && !s->pop.active) {
		for (int b = 0; b < K; b++)
			if (step->truncated[b])
				seed_batcher_add_final(s->b, req, b,
				                       (const uint8_t *)finals + (size_t)b * row_bytes);
	}
}

bool serve_same_obs(const seed_unroll_layout *a, const seed_unroll_layout *b)
{
	bool same = a->num_actions == b->num_actions && a->obs_dtype == b->obs_dtype &&
	            a->obs_rank == b->obs_rank && a->box == b->box;
	for (int i = 0; same && i < a->obs_rank; i++)
		same = a->obs_shape[i] == b->obs_shape[i];
	return same;
}

void seed_serve_take(seed_serve *s, const seed_chan_msg *m, double now)
{
	seed_err err;
	const seed_step *step = &s->step;
	s->st.expired += (int64_t)seed_sessions_expire(s->ss, now);
	seed_unroll_layout l;
	if (!take_step_frame(s, m, &l))
		return;
	if (s->o.model && !s->agent && (!s->have_layout || !serve_same_obs(&s->agent_layout, &l))) {
		/* The first request tells the observations an agent is built
		 * for (the first policy's, if there is one: built now); from
		 * then on policies are built as they arrive.  While there is no
		 * agent, the latest observations are those to build for. */
		s->agent_layout = l;
		s->layout_actor = step->actor;
		s->have_layout = true;
		rebuild(s);
	}
	/* A recurrent agent's state lives in the session: sessions of another
	 * state size (made before this agent) are remade. */
	l.state_size = s->agent ? seed_agent_state_floats(s->agent) : 0;
	seed_session *h = take_session(s, m, &l, now);
	if (!h)
		return;
	if (l.box) { /* the bounds the answer maps into */
		memcpy(h->low, step->action_low, (size_t)l.num_actions * sizeof(float));
		memcpy(h->high, step->action_high, (size_t)l.num_actions * sizeof(float));
	}
	/* With a model, a request it cannot take is refused before its step
	 * counts, and the batch holds the model's dtype only. */
	const seed_tensor *obs = step->obs, *fin = step->final_obs;
	const void *rows = obs->data, *finals = fin ? fin->data : NULL;
	seed_dtype dt = obs->dtype;
	size_t row_bytes = seed_tensor_nbytes(obs) / (size_t)l.rows;
	if (s->agent) {
		int rc = prepare(s, h, obs, fin, &rows, &finals, &err);
		if (rc) {
			s->st.refused++;
			serve_send_error(s, m, NULL, 0, rc, err.msg, "step");
			return;
		}
		dt = seed_agent_obs_dtype(s->agent);
		row_bytes = seed_agent_obs_bytes(s->agent);
	}
	if (!take_seq(s, m, h, step->seq, now))
		return;
	/* Observations of another dtype or size cannot share the batch's
	 * matrix: answer the batch first. */
	bool gather = s->o.model;
	if (gather && s->b->n > 0 && (dt != s->batch_dtype || row_bytes != s->b->row_bytes))
		seed_serve_run(s);
	int req = seed_batcher_add(s->b, h, m->id, m->idlen, l.rows, gather ? rows : NULL, row_bytes, now);
	if (req < 0) { /* cannot happen: ids are at most 256 bytes and the rows agree */
		seed_err_set(&err, req, "step frame: cannot join the batch");
		serve_send_error(s, m, NULL, 0, req, err.msg, "step");
		return;
	}
	s->batch_dtype = dt;
	record_step(s, h, req, finals, row_bytes);
	h->pending = true;
	s->st.requests++;
}

bool seed_serve_pending(const seed_serve *s)
{
	return s->b->n > 0;
}

bool seed_serve_full(const seed_serve *s)
{
	return s->b->n > 0 && s->b->rows >= s->b->max_rows;
}

bool seed_serve_ready(const seed_serve *s, double now)
{
	if (s->b->n == 0)
		return false;
	if (s->b->rows >= s->b->max_rows || now >= s->b->deadline)
		return true;
	return seed_batcher_ready(s->b, now, seed_sessions_expected(s->ss, now, s->o.timeout));
}

/* Hand the newest parameters from the learner, if any came, to the policy. */
static void poll_params(seed_serve *s)
{
	seed_frame f = {0};
	seed_chan_msg m;
	seed_err err;
	while (seed_chan_recv(s->params, &m, 0, &err) == 0) {
		const char *json;
		size_t len;
		int rc = seed_frame_decoder_decode(s->dec, &f, m.data, m.len, &err);
		if (rc == 0 && f.type == SEED_FRAME_GENERATION) {
			serve_take_generation(s, &f);
			continue;
		}
		if (rc != 0 && strncmp(err.msg, "generation frame:", 17) == 0) {
			s->st.generations_taken++;
			serve_bad_generation(s, "%s", err.msg);
			continue;
		}
		if (rc != 0 || f.type != SEED_FRAME_PARAMS || seed_frame_str(&f, "model", &json, &len) != 0) {
			serve_warn(s, "dropped a frame on the parameter channel: %s",
			           f.type == SEED_FRAME_INVALID
			               ? err.msg
			               : "not a params frame with its model's description");
			continue;
		}
		const seed_tensor *p = seed_frame_tensor(&f, "params");
		if (s->pop.active) {
			/* The learner acts with one model again.  Requests
			 * taken in population mode are answered in it first:
			 * their steps were not recorded in the unrolls. */
			if (s->b->n > 0)
				seed_serve_run(s);
			serve_switch_mode(s, false);
		}
		s->pop.have_pending = false;
		seed_serve_policy(s, json, len, p->data, seed_tensor_nbytes(p),
		                  seed_frame_int(&f, "policy_version", 0));
	}
}

int seed_serve_turn(seed_serve *s, int wait_ms)
{
	seed_chan_msg m;
	seed_err err;
	double t0 = seed_now_s();
	int rc = seed_chan_recv(s->actors, &m, seed_serve_pending(s) ? 0 : wait_ms, &err);
	double now = seed_now_s();
	s->st.time[SEED_PHASE_WAIT] += now - t0;
	if (rc == 0) {
		double c0 = serve_counted(s);
		seed_serve_take(s, &m, now);
		/* (taking a request may push a half's episodes, or run the
		 * batch before a request of another dtype: timed apart) */
		s->st.time[SEED_PHASE_TAKE] += seed_now_s() - now - (serve_counted(s) - c0);
	} else if (rc == -SEED_EFRAME && m.idlen)
		seed_serve_refuse(s, &m, rc, err.msg);
	else if (rc != -EAGAIN && rc != -EINTR)
		serve_warn(s, "%s", err.msg);
	/* While idle, take what the learner sent: a generation then applies
	 * from the first request on, not from the first batch. */
	if (rc == -EAGAIN && !seed_serve_pending(s) && s->params) {
		double tp = seed_now_s();
		poll_params(s);
		s->st.time[SEED_PHASE_TAKE] += seed_now_s() - tp;
	}
	/* Drain what has come before deciding: a batch is only worth waiting
	 * for while more may arrive. */
	if (!seed_serve_pending(s) || (rc == 0 && now < s->b->deadline && !seed_serve_full(s)))
		return 0;
	if (s->params) {
		double tp = seed_now_s();
		poll_params(s);
		s->st.time[SEED_PHASE_TAKE] += seed_now_s() - tp;
	}
	if (seed_serve_ready(s, now))
		return seed_serve_run(s);
	if (rc == -EAGAIN) {
		double tw = seed_now_s();
		(void)seed_chan_poll(&s->actors, 1, 1, NULL);
		s->st.time[SEED_PHASE_WAIT] += seed_now_s() - tw;
	}
	return 0;
}

const seed_serve_stats *seed_serve_get_stats(const seed_serve *s)
{
	return &s->st;
}
