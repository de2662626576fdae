/* serve.c: the inference service (seed/serve.h): requests to sessions and
 * the batch, the batch through the agent (or uniform play), answers, and
 * unroll and episode frames.
 *
 * Invariants: a session is pending exactly while one of its requests is in
 * the batch; the batch's observations, when a model is in use, all have
 * one dtype and one row size: once the agent exists every request is
 * converted to its dtype as it comes (seed_agent_convert), and before that
 * a request of another dtype first runs the batch; scratch arrays only
 * grow.  Every request taken is answered once: with an action frame by
 * seed_serve_run, or with an error frame.
 */
#include "seed/serve.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/agent.h"
#include "seed/batcher.h"
#include "seed/buf.h"
#include "seed/clock.h"
#include "seed/evo_assign.h"
#include "seed/evo_frame.h"
#include "seed/frame.h"
#include "seed/noise.h"
#include "seed/policy.h"
#include "seed/population.h"
#include "seed/r2d2.h"
#include "seed/rng.h"
#include "seed/sessions.h"
#include "seed/unroll.h"

struct seed_serve {
	seed_serve_opts o;
	seed_chan *actors, *unrolls, *params;
	seed_sessions *ss;
	seed_batcher *b;
	seed_frame_decoder *dec; /* of requests and params: allocates nothing */
	seed_rng rng;
	seed_dtype batch_dtype; /* of the batch's observations */
	/* the policy */
	char *json;      /* the model's description; NULL: none yet */
	uint8_t *staged; /* parameters for the next agent built */
	size_t staged_len, staged_cap;
	int64_t staged_version;
	bool have_staged, build_failed;
	seed_agent *agent;
	seed_unroll_layout agent_layout; /* the observations it was built for */
	/* scratch, grown to the largest batch */
	int32_t *actions;
	float *logits, *final_values;
	uint8_t *failed; /* (requests) */
	/* a recurrent agent's batch: the state before and after the step
	 * (rows, S), the previous rewards, actions and resets (rows), and the
	 * states and inputs of the final observations (nfinal, S) */
	float *core_in, *core_out, *core_reward, *final_in, *final_reward;
	int32_t *core_action, *final_action;
	uint8_t *core_reset;
	size_t cap_core_in, cap_core_out, cap_core_reward, cap_core_action, cap_core_reset;
	size_t cap_final_in, cap_final_reward, cap_final_action;
	unsigned char *conv; /* a request's observations and final ones, converted */
	size_t cap_conv;
	/* a Q agent's batch: each row's epsilon (rows) with the schedule; an
	 * unroll's priorities (B) and its steps burn_in.. time-major: Q values
	 * (L', B, A), actions, rewards, ends (L', B), losses (B) */
	float *eps, *prio, *pq, *preward, *ploss;
	int32_t *paction;
	uint8_t *pdone;
	size_t cap_eps, cap_prio, cap_pq, cap_preward, cap_ploss, cap_paction, cap_pdone;
	int64_t prio_warns;
	bool q_warned;
	size_t cap_rows, cap_logits, cap_final, cap_req;
	/* population mode (a generation frame came): the assigner, and per
	 * slot of it the population playing that generation, built for the
	 * agent's model and observations, and its noise table (shared by the
	 * slots when they name the same one) */
	seed_evo_assign *assign; /* NULL until the first generation */
	bool population;         /* a generation is current */
	struct evo_slot {
		seed_population *pop;
		char *json;                /* the model pop was built for */
		seed_unroll_layout layout; /* ... and the observations (the agent's dtype) */
		seed_noise *noise;
		int64_t generation;
		bool greedy;
	} slot[2];
	/* the newest generation frame, until an agent gives its layout */
	seed_evo_gen_copy pending;
	bool have_pending, pending_greedy;
	int64_t pending_cap;
	/* the (run, generation, phase) taken last: a repeat is ignored */
	int64_t last_gen[3];
	bool have_last_gen;
	int64_t gen_warns;
	/* scratch of a population batch: each row's slot and member, and the
	 * rows of one slot gathered (obs, members, actions, their rows) */
	int8_t *row_slot;
	int32_t *row_member, *pop_member, *pop_actions, *pop_index;
	unsigned char *pop_obs;
	size_t cap_row_slot, cap_row_member, cap_pop_member, cap_pop_actions, cap_pop_index, cap_pop_obs;
	seed_buf out;
	seed_frame f;
	seed_serve_stats st;
	double last_gap_warn, last_build_warn, last_evict_warn, last_push_warn;
	int64_t evict_warns;
	int64_t push_warned; /* push_failed at the last warning of it */
	int64_t gaps_warned;
	bool build_warned;
};

static void warn(seed_serve *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(seed_serve *s, const char *fmt, ...)
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

/* A half is forgotten: its environments' episodes in flight no longer
 * hold their generation. */
static void session_dropped(void *ctx, seed_session *h)
{
	seed_serve *s = ctx;
	if (!s->assign)
		return;
	for (int b = 0; b < h->layout.rows; b++)
		seed_evo_assign_forget(s->assign, &h->evo[b]);
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
	                         .dropped = session_dropped,
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
	seed_evo_assign_free(&s->assign);
	if (s->slot[0].noise == s->slot[1].noise) /* shared */
		s->slot[1].noise = NULL;
	for (int i = 0; i < 2; i++) {
		seed_population_free(&s->slot[i].pop);
		free(s->slot[i].json);
		seed_noise_free(&s->slot[i].noise);
	}
	seed_evo_gen_copy_free(&s->pending);
	free(s->row_slot);
	free(s->row_member);
	free(s->pop_member);
	free(s->pop_actions);
	free(s->pop_index);
	free(s->pop_obs);
	free(s->json);
	free(s->staged);
	free(s->actions);
	free(s->logits);
	free(s->final_values);
	free(s->failed);
	free(s->core_in);
	free(s->core_out);
	free(s->core_reward);
	free(s->core_action);
	free(s->core_reset);
	free(s->final_in);
	free(s->final_reward);
	free(s->final_action);
	free(s->conv);
	free(s->eps);
	free(s->prio);
	free(s->pq);
	free(s->preward);
	free(s->ploss);
	free(s->paction);
	free(s->pdone);
	seed_buf_free(&s->out);
	free(s);
	*sp = NULL;
}

int seed_serve_policy(seed_serve *s, const char *json, size_t len, const void *params, size_t nbytes,
                      int64_t version)
{
	if (json && (!s->json || strlen(s->json) != len || memcmp(s->json, json, len) != 0)) {
		/* Another architecture: rebuilt at the next request. */
		free(s->json);
		s->json = seed_xmalloc(len + 1);
		memcpy(s->json, json, len);
		s->json[len] = '\0';
		seed_agent_free(&s->agent);
		s->build_failed = false;
	}
	if (!params)
		return 0;
	if (s->agent && seed_agent_load_params(s->agent, params, nbytes, version, NULL) == 0) {
		s->have_staged = false;
		return 0;
	}
	s->staged = seed_xgrow(s->staged, &s->staged_cap, nbytes, 1);
	memcpy(s->staged, params, nbytes);
	s->staged_len = nbytes;
	s->staged_version = version;
	s->have_staged = true;
	seed_agent_free(&s->agent);
	s->build_failed = false;
	return 0;
}

/* Build the agent for the observations of layout l (of actor's frames). */
static void build_agent(seed_serve *s, const seed_unroll_layout *l, uint32_t actor)
{
	seed_err err;
	seed_agent *a = NULL;
	int rc = seed_agent_new(&a, s->json, l->obs_dtype, l->obs_rank, l->obs_shape, l->num_actions,
	                        2 * s->o.max_batch, s->o.greedy, s->o.seed, 0x1f3, &err);
	if (rc == 0 && s->o.device)
		rc = seed_model_set_device(seed_agent_model(a), s->o.device, &err);
	if (rc == 0 && s->have_staged) {
		rc = seed_agent_load_params(a, s->staged, s->staged_len, s->staged_version, &err);
	} else if (rc == 0 && s->o.load) {
		int64_t v = 0;
		rc = s->o.load(s->o.ctx, seed_agent_model(a), &v, &err);
		seed_agent_set_policy_version(a, v);
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
		warn(s,
		     "cannot build the model for actor %" PRIu32
		     "'s observations (%s); playing uniformly at random "
		     "(policy version 0) until parameters that fit arrive",
		     actor, err.msg);
		return;
	}
	if (seed_agent_head(a) == SEED_HEAD_DUELING)
		seed_agent_set_epsilon(a, s->o.epsilon, NULL); /* checked in seed_serve_new */
	else if (s->o.q_settings && !s->q_warned) {
		s->q_warned = true;
		warn(s, "the model has an actor-critic head: it samples from its policy, and the Q-model "
		        "settings (epsilon, priorities) do not apply");
	}
	s->agent = a;
	s->agent_layout = *l;
	s->have_staged = false;
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

static void send_error(seed_serve *s, const seed_chan_msg *to, const void *id, size_t idlen, int code,
                       const char *msg, const char *type)
{
	s->st.bad++;
	/* The first few, then every thousandth, so that a flood cannot drown
	 * the log. */
	if (s->st.bad <= 10 || s->st.bad % 1000 == 0)
		warn(s, "dropped bad frame #%" PRId64 ": %s", s->st.bad, msg);
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_ERROR);
	seed_frame_set_int(&f, "code", code);
	seed_frame_set_str(&f, "message", msg);
	if (type)
		seed_frame_set_str(&f, "frame", type);
	seed_buf_reset(&s->out);
	if (seed_frame_encode(&f, &s->out, NULL) != 0)
		return;
	if (to)
		seed_chan_reply(s->actors, to, s->out.data, s->out.len, true);
	else
		seed_chan_send(s->actors, id, idlen, s->out.data, s->out.len, true);
}

void seed_serve_refuse(seed_serve *s, const seed_chan_msg *m, int code, const char *msg)
{
	send_error(s, m, NULL, 0, code, msg, NULL);
}

/* A frame that could not be pushed (its unrolls or episodes are lost):
 * counted, and said at once the first time, then at most once every
 * push_warn_interval seconds with the count since the last warning. */
static void push_failed(seed_serve *s, int rc)
{
	s->st.push_failed++;
	double now = seed_now_s(), every = s->o.push_warn_interval > 0 ? s->o.push_warn_interval : 5;
	if (s->push_warned > 0 && now - s->last_push_warn < every)
		return;
	warn(s,
	     "unrolls channel: %" PRId64 " frames not pushed since the last warning, %" PRId64
	     " in all (their unrolls and episodes are lost): %s",
	     s->st.push_failed - s->push_warned, s->st.push_failed, seed_strerror(rc));
	s->last_push_warn = now;
	s->push_warned = s->st.push_failed;
}

/* Push a frame on the unrolls channel: at once when its queue has room
 * (time counted as send), else waiting for room (blocked: the consumer
 * falls behind). */
static int push(seed_serve *s, const void *data, size_t len)
{
	double t0 = seed_now_s();
	int rc = seed_chan_send(s->unrolls, NULL, 0, data, len, true);
	double t1 = seed_now_s();
	s->st.time[SEED_PHASE_SEND] += t1 - t0;
	if (rc == -EAGAIN) {
		rc = seed_chan_send(s->unrolls, NULL, 0, data, len, false);
		s->st.time[SEED_PHASE_BLOCKED] += seed_now_s() - t1;
	}
	if (rc)
		push_failed(s, rc);
	return rc;
}

/* Seconds counted in every phase so far: a phase timed around code that
 * times phases of its own (pushes, a batch run early) subtracts them. */
static double counted(const seed_serve *s)
{
	double t = 0;
	for (int p = 0; p < SEED_PHASE_N; p++)
		t += s->st.time[p];
	return t;
}

/* Send the episodes gathered in h as one episode frame, and forget them. */
static int send_episodes(seed_serve *s, seed_session *h)
{
	if (h->ep_n == 0)
		return 0;
	int64_t N = (int64_t)h->ep_n;
	seed_frame e;
	seed_frame_init(&e, SEED_FRAME_EPISODE);
	seed_frame_set_int(&e, "run", h->run);
	seed_frame_set_int(&e, "actor", h->actor);
	seed_frame_set_tensor(&e, "env", seed_tensor_view(h->ep_env, SEED_DTYPE_I32, 1, &N));
	seed_frame_set_tensor(&e, "return", seed_tensor_view(h->ep_ret, SEED_DTYPE_F32, 1, &N));
	seed_frame_set_tensor(&e, "length", seed_tensor_view(h->ep_len, SEED_DTYPE_I32, 1, &N));
	seed_frame_set_tensor(&e, "truncated", seed_tensor_view(h->ep_trunc, SEED_DTYPE_U8, 1, &N));
	if (h->ep_evo) {
		seed_frame_set_tensor(&e, "generation", seed_tensor_view(h->ep_gen, SEED_DTYPE_I64, 1, &N));
		seed_frame_set_tensor(&e, "member", seed_tensor_view(h->ep_member, SEED_DTYPE_I32, 1, &N));
	}
	seed_buf_reset(&s->out);
	int rc = seed_frame_encode(&e, &s->out, NULL);
	if (rc == 0)
		rc = push(s, s->out.data, s->out.len);
	if (rc == 0)
		s->st.episodes += (int64_t)h->ep_n;
	h->ep_n = 0;
	h->ep_evo = false;
	return rc;
}

/* Gather the episodes that ended at this step of h.  They go out in one
 * frame just before h's next unroll frame (one frame per unroll instead of
 * one per step with an ended episode: pushes are the loop's cost), or
 * sooner when another step's worth might not fit. */
static void gather_episodes(seed_serve *s, seed_session *h, const seed_frame *f)
{
	const uint8_t *te = seed_frame_tensor(f, "terminated")->data,
	              *tr = seed_frame_tensor(f, "truncated")->data;
	const uint8_t *ret = seed_frame_tensor(f, "ep_return")->data,
	              *len = seed_frame_tensor(f, "ep_length")->data;
	int K = h->layout.rows;
	if (h->ep_n + (size_t)K > h->ep_cap)
		send_episodes(s, h);
	for (int b = 0; b < K; b++) {
		if (!(te[b] || tr[b]))
			continue;
		size_t n = h->ep_n++;
		h->ep_env[n] = h->env[b];
		memcpy(&h->ep_ret[n], ret + 4 * (size_t)b, 4);
		memcpy(&h->ep_len[n], len + 4 * (size_t)b, 4);
		h->ep_trunc[n] = tr[b] && !te[b];
	}
}

int seed_serve_flush(seed_serve *s)
{
	int rc = 0;
	for (seed_session *h = seed_sessions_next(s->ss, NULL); h; h = seed_sessions_next(s->ss, h)) {
		int e = send_episodes(s, h);
		rc = rc ? rc : e;
	}
	return rc;
}

/* ---- population mode ------------------------------------------------------ */

/* A generation frame that cannot be played: said (the first ten, then every
 * hundredth) and counted; the server plays on as it was. */
static void bad_generation(seed_serve *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad_generation(seed_serve *s, const char *fmt, ...)
{
	s->st.bad_generations++;
	if (s->gen_warns++ >= 10 && s->st.bad_generations % 100 != 0)
		return;
	char msg[500];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	warn(s, "dropped a generation frame (%" PRId64 " bad of %" PRId64 " taken): %s",
	     s->st.bad_generations, s->st.generations_taken, msg);
}

/* Between the modes: the episodes gathered go out under the old one, and
 * unrolls in progress are dropped (a population plays no unrolls; the
 * steps played by it belong to no policy of the learner). */
static void switch_mode(seed_serve *s, bool population)
{
	seed_serve_flush(s);
	for (seed_session *h = seed_sessions_next(s->ss, NULL); h; h = seed_sessions_next(s->ss, h))
		if (h->unroll)
			seed_unroll_restart(h->unroll);
	s->population = population;
	if (!population) {
		seed_evo_assign_stop(s->assign);
		s->st.generation = -1;
		s->st.members = 0;
	}
}

/* Gather an episode to report of row b of h (with generation and member). */
static void gather_evo_episode(seed_serve *s, seed_session *h, int b, const seed_evo_episode *rep)
{
	if (h->ep_cap == 0) /* no unrolls channel: nowhere to push it */
		return;
	if (h->ep_n > 0 && (!h->ep_evo || h->ep_n >= h->ep_cap))
		send_episodes(s, h);
	size_t n = h->ep_n++;
	h->ep_env[n] = h->env[b];
	h->ep_ret[n] = rep->ret;
	h->ep_len[n] = rep->length;
	h->ep_trunc[n] = rep->truncated;
	h->ep_gen[n] = rep->generation;
	h->ep_member[n] = rep->member;
	h->ep_evo = true;
}

/* One step of h's environments in population mode: episodes that ended or
 * reached the cap are gathered, members assigned to those that start. */
static void evo_step(seed_serve *s, seed_session *h, const seed_frame *f)
{
	const uint8_t *te = seed_frame_tensor(f, "terminated")->data,
	              *tr = seed_frame_tensor(f, "truncated")->data;
	const uint8_t *ret = seed_frame_tensor(f, "ep_return")->data,
	              *len = seed_frame_tensor(f, "ep_length")->data;
	for (int b = 0; b < h->layout.rows; b++) {
		float r;
		int32_t n;
		memcpy(&r, ret + 4 * (size_t)b, 4);
		memcpy(&n, len + 4 * (size_t)b, 4);
		seed_evo_episode rep;
		if (seed_evo_assign_step(s->assign, &h->evo[b], te[b] != 0, tr[b] != 0, r, n, &rep))
			gather_evo_episode(s, h, b, &rep);
	}
}

/* The noise table (seed, size) for slot t: the other slot's when it is the
 * same, else a new one (the slot's old one freed unless the other shares
 * it).  Building takes time: 2^24 floats, about half a second. */
static int slot_noise(seed_serve *s, int t, uint64_t seed, int64_t size, seed_err *err)
{
	struct evo_slot *sl = &s->slot[t], *other = &s->slot[1 - t];
	if (sl->noise && seed_noise_seed(sl->noise) == seed && seed_noise_size(sl->noise) == size)
		return 0;
	seed_noise *n = NULL;
	if (other->noise && seed_noise_seed(other->noise) == seed && seed_noise_size(other->noise) == size) {
		n = other->noise;
	} else {
		int rc = seed_noise_new(&n, seed, size, err);
		if (rc)
			return rc;
	}
	if (sl->noise != other->noise)
		seed_noise_free(&sl->noise);
	sl->noise = n;
	return 0;
}

static bool same_obs(const seed_unroll_layout *a, const seed_unroll_layout *b)
{
	if (a->num_actions != b->num_actions || a->obs_dtype != b->obs_dtype || a->obs_rank != b->obs_rank)
		return false;
	for (int i = 0; i < a->obs_rank; i++)
		if (a->obs_shape[i] != b->obs_shape[i])
			return false;
	return true;
}

/* Play the pending generation (the agent gives the model and the
 * observations): its members' weights built in the slot the assigner
 * prepares, then made current. */
static void apply_generation(seed_serve *s)
{
	s->have_pending = false;
	seed_evo_gen g = s->pending.gen;
	seed_err err;
	const char *algo = g.algo == SEED_EVO_ES ? "es" : g.algo == SEED_EVO_GA ? "ga" : "rs";
	/* Checked before the slot is emptied: a frame that does not fit
	 * leaves the previous generation's episodes playing. */
	size_t P = seed_model_num_params(seed_agent_model(s->agent));
	if (g.algo == SEED_EVO_ES && g.num_params != P) {
		bad_generation(s,
		               "generation %" PRId64
		               " (es, %d members): a centre of %zu parameters for a model of %zu",
		               g.generation, g.members, g.num_params, P);
		return;
	}
	if (!s->assign)
		s->assign = seed_evo_assign_new();
	int t = seed_evo_assign_prepare(s->assign);
	struct evo_slot *sl = &s->slot[t];
	seed_unroll_layout l = s->agent_layout;
	l.obs_dtype = seed_agent_obs_dtype(s->agent);
	int rc = 0;
	if (!sl->pop || strcmp(sl->json, s->json) != 0 || !same_obs(&sl->layout, &l)) {
		seed_population_free(&sl->pop);
		free(sl->json);
		sl->json = NULL;
		rc = seed_population_new(&sl->pop, s->json, l.obs_dtype, l.obs_rank, l.obs_shape,
		                         l.num_actions, 2 * s->o.max_batch, &err);
		if (rc == 0) {
			size_t n = strlen(s->json) + 1;
			sl->json = seed_xmalloc(n);
			memcpy(sl->json, s->json, n);
			sl->layout = l;
		}
	}
	if (rc == 0)
		rc = slot_noise(s, t, g.noise_seed, g.noise_size, &err);
	if (rc == 0) {
		if (g.algo != SEED_EVO_ES)
			g.num_params = seed_population_num_params(sl->pop);
		rc = seed_population_set(sl->pop, sl->noise, &g, &err);
	}
	if (rc == 0) /* the slot t, or an error */
		rc = seed_evo_assign_start(s->assign, g.generation, g.members, g.episodes, s->pending_cap,
		                           &err);
	if (rc < 0) {
		bad_generation(s, "generation %" PRId64 " (%s, %d members): %s", g.generation, algo,
		               g.members, err.msg);
		return;
	}
	sl->generation = g.generation;
	sl->greedy = s->pending_greedy;
	if (!s->population) {
		switch_mode(s, true);
		if (!s->unrolls)
			warn(s,
			     "playing generation %" PRId64
			     " without an unrolls channel: its episodes reach no "
			     "learner",
			     g.generation);
	}
	s->st.generation = g.generation;
	s->st.members = g.members;
	s->st.generations++;
}

/* A generation frame from the learner: checked and kept until an agent
 * exists (the first request builds it), then played. */
static void take_generation(seed_serve *s, const seed_frame *f)
{
	seed_err err;
	s->st.generations_taken++;
	int64_t id[3] = {seed_frame_int(f, "run", 0), seed_frame_int(f, "generation", 0),
	                 seed_frame_int(f, "phase", 0)};
	if (s->have_last_gen && memcmp(id, s->last_gen, sizeof id) == 0) {
		s->st.generation_repeats++; /* the learner publishes a round again for late joiners */
		return;
	}
	const char *json;
	size_t len;
	bool has_json = seed_frame_str(f, "model", &json, &len) == 0;
	if (!has_json && !s->json) {
		bad_generation(s, "generation %" PRId64 ": no 'model' in it, and no model description yet",
		               id[1]);
		return;
	}
	const seed_value *gv = seed_frame_get(f, "greedy");
	int rc = seed_evo_gen_from_frame_copy(f, &s->pending, &err);
	if (rc) {
		bad_generation(s, "%s", err.msg);
		return;
	}
	memcpy(s->last_gen, id, sizeof id);
	s->have_last_gen = true;
	if (has_json)
		seed_serve_policy(s, json, len, NULL, 0, 0); /* another model: the agent is rebuilt */
	s->pending_cap = seed_frame_int(f, "episode_cap", 0);
	s->pending_greedy = !gv || gv->u.b;
	s->have_pending = true;
	if (s->agent)
		apply_generation(s);
}

/* Say, rate-limited, that a half's unroll was dropped for a gap in seq:
 * a client that counts seq per actor instead of per half loses every one. */
static void warn_gap(seed_serve *s, const seed_session *h, int64_t seq, int64_t prev, double now)
{
	if (s->st.gaps > 1 && now - s->last_gap_warn < 10)
		return;
	warn(s,
	     "actor %" PRIu32 " (run %" PRIu32 ", envs %" PRId32 "..%" PRId32 "): step frame seq %" PRId64
	     " after %" PRId64
	     ": its unroll in progress is dropped (seq counts the step frames of each half, "
	     "see seed-frames(7)); %" PRId64 " such gaps in all, %" PRId64 " since the last warning",
	     h->actor, h->run, h->env0, h->env0 + h->layout.rows - 1, seq, prev, s->st.gaps,
	     s->st.gaps - s->gaps_warned);
	s->last_gap_warn = now;
	s->gaps_warned = s->st.gaps;
}

/* Whether h's observations fit the agent (it converts dtypes). */
static bool fits(const seed_serve *s, const seed_session *h, seed_err *err)
{
	const seed_unroll_layout *a = &s->agent_layout, *l = &h->layout;
	bool ok = a->num_actions == l->num_actions && a->obs_rank == l->obs_rank;
	for (int i = 0; ok && i < a->obs_rank; i++)
		ok = a->obs_shape[i] == l->obs_shape[i];
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
	if (!fits(s, h, err))
		return -SEED_EFRAME;
	if (obs->dtype == seed_agent_obs_dtype(s->agent))
		return 0;
	size_t n = (size_t)h->layout.rows * seed_agent_obs_bytes(s->agent);
	s->conv = seed_xgrow(s->conv, &s->cap_conv, 2 * n, 1);
	seed_err e;
	int rc = seed_agent_convert(s->agent, h->layout.rows, obs, s->conv, &e);
	if (rc == 0 && fin) {
		rc = seed_agent_convert(s->agent, h->layout.rows, fin, s->conv + n, &e);
		if (rc)
			return seed_err_set(err, rc, "step frame: field 'final_obs': %s", e.msg);
		*finals = s->conv + n;
	}
	if (rc)
		return seed_err_set(err, rc, "step frame: field 'obs': %s", e.msg);
	*rows = s->conv;
	return 0;
}

void seed_serve_take(seed_serve *s, const seed_chan_msg *m, double now)
{
	seed_err err;
	seed_frame *f = &s->f;
	s->st.expired += (int64_t)seed_sessions_expire(s->ss, now);
	int rc = seed_frame_decoder_decode(s->dec, f, m->data, m->len, &err);
	if (rc) {
		send_error(s, m, NULL, 0, rc, err.msg, failed_type(err.msg));
		return;
	}
	const char *tn = seed_frame_type_name(f->type);
	if (f->type != SEED_FRAME_STEP) {
		rc =
		    seed_err_set(&err, -SEED_ETYPE, "%s frame: seed-infer takes step frames from actors", tn);
		send_error(s, m, NULL, 0, rc, err.msg, tn);
		return;
	}
	const seed_tensor *obs = seed_frame_tensor(f, "obs");
	int64_t K = obs->shape[0], A = seed_frame_int(f, "num_actions", 1);
	size_t row_bytes = seed_tensor_nbytes(obs) / (size_t)K;
	if (K > s->o.max_envs || A > s->o.max_actions || row_bytes > s->o.max_row_bytes) {
		rc = seed_err_set(&err, -E2BIG,
		                  "step frame: %" PRId64 " environments, %" PRId64
		                  " actions, %zu bytes per observation: "
		                  "more than the server takes (at most %d, %d, %zu)",
		                  K, A, row_bytes, s->o.max_envs, s->o.max_actions, s->o.max_row_bytes);
		send_error(s, m, NULL, 0, rc, err.msg, tn);
		return;
	}
	if (seed_tensor_nbytes(obs) > s->o.max_bytes) {
		/* The batch would copy (and keep room for) all of it. */
		rc = seed_err_set(
		    &err, -E2BIG,
		    "step frame: field 'obs': %zu bytes, more than the bound of %zu on the server's "
		    "memory",
		    seed_tensor_nbytes(obs), s->o.max_bytes);
		send_error(s, m, NULL, 0, rc, err.msg, tn);
		return;
	}
	seed_unroll_layout l = {
	    .rows = (int)K, .num_actions = (int)A, .obs_dtype = obs->dtype, .obs_rank = obs->rank - 1};
	memcpy(l.obs_shape, obs->shape + 1, (size_t)l.obs_rank * sizeof l.obs_shape[0]);
	uint32_t run = (uint32_t)seed_frame_int(f, "run", 0), actor = (uint32_t)seed_frame_int(f, "actor", 0);
	int32_t env0 = (int32_t)seed_frame_int(f, "env0", 0);
	int64_t seq = seed_frame_int(f, "seq", 0);
	if (s->o.model && !s->agent && s->json && !s->build_failed)
		build_agent(s, &l, actor);
	if (s->have_pending && s->agent)
		apply_generation(s);
	/* A recurrent agent's state lives in the session: sessions of another
	 * state size (made before this agent) are remade. */
	l.state_size = s->agent ? seed_agent_state_floats(s->agent) : 0;
	seed_session *h = NULL;
	rc = seed_sessions_get(s->ss, run, actor, env0, &l, now, &h, &err);
	if (rc < 0) {
		char msg[sizeof err.msg + 16];
		snprintf(msg, sizeof msg, "step frame: %s", err.msg);
		send_error(s, m, NULL, 0, rc, msg, tn);
		return;
	}
	if (seed_sessions_evicted(s->ss) > s->st.evicted) {
		s->st.evicted = seed_sessions_evicted(s->ss);
		/* Eviction under load means the bounds are too small for the
		 * actors there are: every evicted live half loses its unroll. */
		if (s->evict_warns == 0 || now - s->last_evict_warn >= 10) {
			s->evict_warns++;
			s->last_evict_warn = now;
			warn(
			    s,
			    "%" PRId64
			    " actor halves evicted so far, the longest idle first, to stay within %zu halves "
			    "and %zu bytes; an evicted half that comes back starts a new unroll",
			    s->st.evicted, s->o.max_halves, s->o.max_bytes);
		}
	}
	s->st.halves = (int64_t)seed_sessions_count(s->ss);
	/* With a model, a request it cannot take is refused before its step
	 * counts, and the batch holds the model's dtype only. */
	const seed_tensor *fin = seed_frame_tensor(f, "final_obs");
	const void *rows = obs->data, *finals = fin ? fin->data : NULL;
	seed_dtype dt = obs->dtype;
	if (s->agent) {
		rc = prepare(s, h, obs, fin, &rows, &finals, &err);
		if (rc) {
			s->st.refused++;
			send_error(s, m, NULL, 0, rc, err.msg, tn);
			return;
		}
		dt = seed_agent_obs_dtype(s->agent);
		row_bytes = seed_agent_obs_bytes(s->agent);
	}
	int64_t prev = h->last_seq;
	switch (seed_session_accept(h, seq)) {
	case SEED_SESSION_WAITING:
		s->st.resends++;
		return;
	case SEED_SESSION_RESEND:
		s->st.resends++;
		seed_chan_send(s->actors, m->id, m->idlen, h->reply.data, h->reply.len, true);
		return;
	case SEED_SESSION_GAP:
		s->st.gaps++;
		warn_gap(s, h, seq, prev, now);
		break;
	case SEED_SESSION_STEP:
		break;
	default:
		rc = seed_err_set(&err, -EBUSY,
		                  "step frame: field 'seq': %" PRId64 " while the request of seq %" PRId64
		                  " of actor %" PRIu32 " (env0 %" PRId32
		                  ") waits for its answer: one request in flight "
		                  "per half",
		                  seq, prev, actor, env0);
		send_error(s, m, NULL, 0, rc, err.msg, tn);
		return;
	}
	/* Observations of another dtype or size cannot share the batch's
	 * matrix: answer the batch first. */
	bool gather = s->o.model;
	if (gather && s->b->n > 0 && (dt != s->batch_dtype || row_bytes != s->b->row_bytes))
		seed_serve_run(s);
	int req = seed_batcher_add(s->b, h, m->id, m->idlen, (int)K, gather ? rows : NULL, row_bytes, now);
	if (req < 0) { /* cannot happen: ids are at most 256 bytes and the rows agree */
		seed_err_set(&err, req, "step frame: cannot join the batch");
		send_error(s, m, NULL, 0, req, err.msg, tn);
		return;
	}
	s->batch_dtype = dt;
	if (h->core) {
		/* The step's inputs besides obs: the reward that came with it,
		 * and which rows begin an episode (their state starts afresh). */
		const uint8_t *te = seed_frame_tensor(f, "terminated")->data,
		              *tr = seed_frame_tensor(f, "truncated")->data;
		memcpy(h->core_reward, seed_frame_tensor(f, "reward")->data, (size_t)K * sizeof(float));
		for (int b = 0; b < K; b++)
			h->core_reset[b] = te[b] || tr[b];
	}
	if (s->population) {
		evo_step(s, h, f);
	} else if (h->unroll) {
		seed_unroll_record_step(h->unroll, obs->data, seed_frame_tensor(f, "reward")->data,
		                        seed_frame_tensor(f, "terminated")->data,
		                        seed_frame_tensor(f, "truncated")->data);
		gather_episodes(s, h, f);
	}
	/* A model values the real last observation of truncated episodes, so
	 * that the learner can bootstrap from it. */
	if (gather && h->unroll && finals && !s->population) {
		const uint8_t *tr = seed_frame_tensor(f, "truncated")->data;
		for (int b = 0; b < K; b++)
			if (tr[b])
				seed_batcher_add_final(s->b, req, b,
				                       (const uint8_t *)finals + (size_t)b * row_bytes);
	}
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

/* Refuse request i of the batch after it was taken: an error frame, and
 * the half starts afresh (its step was recorded but never acted on). */
static void fail(seed_serve *s, int i, int code, const seed_err *err)
{
	seed_batch_req *r = &s->b->req[i];
	seed_session *h = r->owner;
	s->failed[i] = 1;
	s->st.refused++;
	h->last_seq = -1;
	if (h->unroll)
		seed_unroll_restart(h->unroll);
	send_error(s, NULL, r->id, r->idlen, code, err->msg, "step");
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
	s->core_in = seed_xgrow(s->core_in, &s->cap_core_in, R * (size_t)S, sizeof *s->core_in);
	s->core_out = seed_xgrow(s->core_out, &s->cap_core_out, R * (size_t)S, sizeof *s->core_out);
	s->core_reward = seed_xgrow(s->core_reward, &s->cap_core_reward, R, sizeof *s->core_reward);
	s->core_action = seed_xgrow(s->core_action, &s->cap_core_action, R, sizeof *s->core_action);
	s->core_reset = seed_xgrow(s->core_reset, &s->cap_core_reset, R, sizeof *s->core_reset);
	for (int i = 0; i < b->n; i++) {
		const seed_batch_req *r = &b->req[i];
		const seed_session *h = r->owner;
		size_t k = (size_t)r->row0, n = (size_t)r->rows;
		memcpy(s->core_in + k * (size_t)S, h->core, n * (size_t)S * sizeof(float));
		memcpy(s->core_reward + k, h->core_reward, n * sizeof(float));
		memcpy(s->core_reset + k, h->core_reset, n);
		for (size_t j = 0; j < n; j++)
			s->core_action[k + j] = h->acted ? h->actions[j] : -1;
	}
	if (b->nfinal == 0)
		return;
	size_t F = (size_t)b->nfinal;
	s->final_in = seed_xgrow(s->final_in, &s->cap_final_in, F * (size_t)S, sizeof *s->final_in);
	s->final_reward = seed_xgrow(s->final_reward, &s->cap_final_reward, F, sizeof *s->final_reward);
	s->final_action = seed_xgrow(s->final_action, &s->cap_final_action, F, sizeof *s->final_action);
	for (size_t f = 0; f < F; f++) {
		size_t row = (size_t)b->req[b->final_req[f]].row0 + (size_t)b->final_row[f];
		memcpy(s->final_in + f * (size_t)S, s->core_in + row * (size_t)S, (size_t)S * sizeof(float));
		s->final_reward[f] = s->core_reward[row];
		s->final_action[f] = s->core_action[row];
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
	s->eps = seed_xgrow(s->eps, &s->cap_eps, (size_t)b->rows, sizeof *s->eps);
	for (int i = 0; i < b->n; i++) {
		const seed_batch_req *r = &b->req[i];
		for (int j = 0; j < r->rows; j++)
			s->eps[r->row0 + j] = env_epsilon(s, r->owner, j);
	}
	return true;
}

/* The core inputs of rows [row0, row0 + n) of the batch and their
 * epsilons (NULL without a core and without epsilons). */
static const seed_agent_core *core_at(const seed_serve *s, int S, bool eps, int64_t row0, seed_agent_core *c)
{
	size_t k = (size_t)row0;
	*c = (seed_agent_core){.epsilon = eps ? s->eps + k : NULL};
	if (S == 0)
		return eps ? c : NULL;
	c->prev_reward = s->core_reward + k;
	c->prev_action = s->core_action + k;
	c->reset = s->core_reset + k;
	c->state = s->core_in + k * (size_t)S;
	c->state_out = s->core_out + k * (size_t)S;
	return c;
}

/* The same for final observation k: no reset, no new state kept. */
static const seed_agent_core *final_core_at(const seed_serve *s, int S, int k, seed_agent_core *c)
{
	if (S == 0)
		return NULL;
	*c = (seed_agent_core){.prev_reward = s->final_reward + k,
	                       .prev_action = s->final_action + k,
	                       .state = s->final_in + (size_t)k * (size_t)S};
	return c;
}

/* Act on the batch with the agent: the whole batch in one pass when every
 * request fits and converts, else request by request, refusing those that
 * do not.  Then the values of the final observations.  A recurrent agent's
 * new state goes back into the sessions of the requests it answers. */
static void act(seed_serve *s)
{
	seed_batcher *b = s->b;
	size_t A = (size_t)s->agent_layout.num_actions;
	int S = seed_agent_state_floats(s->agent);
	seed_agent_core c;
	seed_err err;
	if (S > 0)
		gather_core(s, S);
	bool eps = gather_eps(s);
	bool whole = true;
	for (int i = 0; i < b->n && whole; i++)
		whole = fits(s, b->req[i].owner, &err);
	if (whole) {
		seed_tensor t = rows_view(s, b->obs, 0, (int)b->rows);
		whole = seed_agent_act_core(s->agent, (int)b->rows, &t, core_at(s, S, eps, 0, &c), s->actions,
		                            s->logits, NULL, &err) == 0;
	}
	for (int i = 0; i < b->n && !whole; i++) {
		const seed_batch_req *r = &b->req[i];
		seed_tensor t = rows_view(s, b->obs, r->row0, r->rows);
		int code = fits(s, r->owner, &err)
		               ? seed_agent_act_core(s->agent, r->rows, &t, core_at(s, S, eps, r->row0, &c),
		                                     s->actions + r->row0, s->logits + (size_t)r->row0 * A,
		                                     NULL, &err)
		               : -SEED_EFRAME;
		if (code)
			fail(s, i, code, &err);
	}
	for (int i = 0; i < b->n && S > 0; i++) {
		const seed_batch_req *r = &b->req[i];
		seed_session *h = r->owner;
		if (!s->failed[i])
			memcpy(h->core, s->core_out + (size_t)r->row0 * (size_t)S,
			       (size_t)r->rows * (size_t)S * sizeof(float));
	}
	if (b->nfinal == 0)
		return;
	seed_tensor t = rows_view(s, b->final_obs, 0, b->nfinal);
	bool all = whole && seed_agent_values_core(s->agent, b->nfinal, &t, final_core_at(s, S, 0, &c),
	                                           s->final_values, &err) == 0;
	for (int k = 0; k < b->nfinal; k++) {
		int i = b->final_req[k];
		if (s->failed[i])
			continue;
		if (!all) {
			t = rows_view(s, b->final_obs, k, 1);
			if (seed_agent_values_core(s->agent, 1, &t, final_core_at(s, S, k, &c),
			                           &s->final_values[k], &err)) {
				seed_err e2;
				fail(s, i,
				     seed_err_set(&e2, -SEED_EFRAME, "step frame: field 'final_obs': %s",
				                  err.msg),
				     &e2);
				continue;
			}
		}
		seed_session *h = b->req[i].owner;
		seed_unroll_set_final_value(h->unroll, b->final_row[k], s->final_values[k]);
	}
}

/* Act on the batch with the population: each row by the member the
 * assigner gives it (its episode's, in the current generation or the
 * previous one), rows of one generation in one call (grouped by member
 * there), in pieces of the rows a population was built for. */
static void act_population(seed_serve *s)
{
	seed_batcher *b = s->b;
	size_t R = (size_t)b->rows, rb = b->row_bytes;
	s->row_slot = seed_xgrow(s->row_slot, &s->cap_row_slot, R, sizeof *s->row_slot);
	s->row_member = seed_xgrow(s->row_member, &s->cap_row_member, R, sizeof *s->row_member);
	bool one = true;
	for (int i = 0; i < b->n; i++) {
		const seed_batch_req *r = &b->req[i];
		const seed_session *h = r->owner;
		for (int j = 0; j < r->rows; j++) {
			int slot;
			size_t k = (size_t)r->row0 + (size_t)j;
			seed_evo_assign_play(s->assign, &h->evo[j], &slot, &s->row_member[k]);
			s->row_slot[k] = (int8_t)slot;
			one = one && slot == s->row_slot[0];
		}
	}
	int max_rows = 2 * s->o.max_batch;
	seed_err err;
	for (int t = 0; t < 2; t++) {
		const unsigned char *obs = b->obs;
		const int32_t *member = s->row_member;
		int32_t *actions = s->actions;
		size_t n = R;
		if (!one) {
			s->pop_index = seed_xgrow(s->pop_index, &s->cap_pop_index, R, sizeof *s->pop_index);
			s->pop_member =
			    seed_xgrow(s->pop_member, &s->cap_pop_member, R, sizeof *s->pop_member);
			s->pop_actions =
			    seed_xgrow(s->pop_actions, &s->cap_pop_actions, R, sizeof *s->pop_actions);
			s->pop_obs = seed_xgrow(s->pop_obs, &s->cap_pop_obs, R * rb, 1);
			n = 0;
			for (size_t k = 0; k < R; k++)
				if (s->row_slot[k] == t) {
					memcpy(s->pop_obs + n * rb, b->obs + k * rb, rb);
					s->pop_member[n] = s->row_member[k];
					s->pop_index[n++] = (int32_t)k;
				}
			obs = s->pop_obs;
			member = s->pop_member;
			actions = s->pop_actions;
		} else if (s->row_slot[0] != t) {
			continue;
		}
		for (size_t k0 = 0; k0 < n; k0 += (size_t)max_rows) {
			int rows = n - k0 < (size_t)max_rows ? (int)(n - k0) : max_rows;
			int rc = seed_population_act(s->slot[t].pop, rows, obs + k0 * rb, member + k0,
			                             s->slot[t].greedy, &s->rng, actions + k0, &err);
			if (rc) {
				/* Not expected: the rows were checked as they came. */
				seed_err e2;
				seed_err_set(&e2, rc, "step frame: the population's forward pass: %s",
				             err.msg);
				for (int i = 0; i < b->n; i++)
					if (!s->failed[i])
						fail(s, i, rc, &e2);
				return;
			}
		}
		if (!one)
			for (size_t k = 0; k < n; k++)
				s->actions[s->pop_index[k]] = s->pop_actions[k];
	}
}

/* The first priorities of h's full unroll into s->prio (B) when the agent
 * is a Q model: seed_r2d2_loss over steps burn_in .. L-1, the recorded Q
 * values (the logits field) as online and target values, done = terminated
 * | truncated.  Returns whether they are there, finite. */
static bool unroll_priorities(seed_serve *s, const seed_session *h)
{
	if (!s->agent || seed_agent_head(s->agent) != SEED_HEAD_DUELING)
		return false;
	const seed_unroll *u = h->unroll;
	int B = u->layout.rows, A = u->layout.num_actions, L = u->steps, b0 = s->o.burn_in;
	if (A != s->agent_layout.num_actions) /* played at random for another layout */
		return false;
	size_t Lp = (size_t)(L - b0), n = Lp * (size_t)B;
	s->prio = seed_xgrow(s->prio, &s->cap_prio, (size_t)B, sizeof *s->prio);
	s->ploss = seed_xgrow(s->ploss, &s->cap_ploss, (size_t)B, sizeof *s->ploss);
	s->pq = seed_xgrow(s->pq, &s->cap_pq, n * (size_t)A, sizeof *s->pq);
	s->preward = seed_xgrow(s->preward, &s->cap_preward, n, sizeof *s->preward);
	s->paction = seed_xgrow(s->paction, &s->cap_paction, n, sizeof *s->paction);
	s->pdone = seed_xgrow(s->pdone, &s->cap_pdone, n, sizeof *s->pdone);
	const float *q = u->field[SEED_UNROLL_LOGITS], *rew = u->field[SEED_UNROLL_REWARD];
	const int32_t *act = u->field[SEED_UNROLL_ACTION];
	const uint8_t *te = u->field[SEED_UNROLL_TERMINATED], *tr = u->field[SEED_UNROLL_TRUNCATED];
	/* (B, L, ...) batch-major to (L', B, ...) time-major. */
	for (int b = 0; b < B; b++)
		for (size_t t = 0; t < Lp; t++) {
			size_t src = (size_t)b * (size_t)L + (size_t)b0 + t, dst = t * (size_t)B + (size_t)b;
			memcpy(s->pq + dst * (size_t)A, q + src * (size_t)A, (size_t)A * sizeof(float));
			s->preward[dst] = rew[src];
			s->paction[dst] = act[src];
			s->pdone[dst] = te[src] || tr[src];
		}
	int n_step = s->o.n_step > 0 ? s->o.n_step : 5;
	int rc = seed_r2d2_loss((int)Lp, B, A, n_step, (float)s->o.discount, (float)s->o.rescale_eps,
	                        (float)s->o.eta, s->pq, s->pq, s->paction, s->preward, s->pdone, s->prio,
	                        s->ploss, NULL);
	bool ok = rc == 0;
	for (int b = 0; b < B && ok; b++)
		ok = isfinite(s->prio[b]) && s->prio[b] >= 0;
	if (!ok && (s->prio_warns++ < 10 || s->prio_warns % 1000 == 0))
		warn(s,
		     "an unroll of actor %" PRIu32 " (env0 %" PRId32
		     ") goes without first priorities: %s (%" PRId64 " so far); the replay gives it its "
		     "largest",
		     h->actor, h->env0,
		     rc ? "they cannot be computed" : "its Q values give one that is not finite",
		     s->prio_warns);
	return ok;
}

/* Push h's full unroll, after the episodes gathered until its last step,
 * with a Q model's first priorities, and start its next one. */
static int send_unroll(seed_serve *s, seed_session *h)
{
	seed_frame f;
	seed_err err;
	int erc = send_episodes(s, h);
	if (s->o.model && (!s->agent || h->layout.state_size != seed_agent_state_floats(s->agent))) {
		/* A server that follows a model pushes only what a model
		 * played.  Until parameters that fit arrive it plays at random
		 * under no model (version 0, no recurrent state, no Q values),
		 * and so do halves made before the model, until they are remade:
		 * a replay would take that layout for the model's and refuse
		 * every later unroll, a recurrent learner every one of these. */
		s->st.unrolls_unmodeled += h->layout.rows;
		seed_unroll_next(h->unroll);
		return erc;
	}
	int rc = seed_unroll_frame(h->unroll, &f, h->run, h->actor, h->env);
	int64_t B = h->layout.rows;
	if (rc == 0 && unroll_priorities(s, h))
		rc = seed_frame_set_tensor(&f, "priority", seed_tensor_view(s->prio, SEED_DTYPE_F32, 1, &B));
	seed_buf_reset(&s->out);
	if (rc == 0)
		rc = seed_frame_encode(&f, &s->out, &err);
	if (rc == 0)
		rc = push(s, s->out.data, s->out.len);
	if (rc == 0) {
		s->st.unroll_frames++;
		s->st.unrolls += h->layout.rows;
		s->st.unroll_bytes += (int64_t)s->out.len;
	}
	seed_unroll_next(h->unroll);
	return rc ? rc : erc;
}

int seed_serve_run(seed_serve *s)
{
	seed_batcher *b = s->b;
	if (b->n == 0)
		return 0;
	s->st.batches++;
	s->st.rows += b->rows;
	double t0 = seed_now_s();
	if (s->o.model && !s->agent && s->json && !s->build_failed) {
		const seed_session *h0 = b->req[0].owner;
		build_agent(s, &h0->layout, h0->actor);
	}
	if (s->have_pending && s->agent)
		apply_generation(s);
	s->actions = seed_xgrow(s->actions, &s->cap_rows, (size_t)b->rows, sizeof *s->actions);
	size_t A = s->agent ? (size_t)s->agent_layout.num_actions : 1;
	s->logits = seed_xgrow(s->logits, &s->cap_logits, (size_t)b->rows * A, sizeof *s->logits);
	s->final_values =
	    seed_xgrow(s->final_values, &s->cap_final, (size_t)b->nfinal, sizeof *s->final_values);
	s->failed = seed_xgrow(s->failed, &s->cap_req, (size_t)b->n, 1);
	memset(s->failed, 0, (size_t)b->n);
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
	bool pop = modeled && s->population;
	int S = modeled && !pop ? seed_agent_state_floats(s->agent) : 0;
	if (pop)
		act_population(s);
	else if (modeled)
		act(s);
	double t1 = seed_now_s();
	s->st.time[SEED_PHASE_FORWARD] += t1 - t0;
	double c0 = counted(s);
	int64_t version = pop ? s->st.generation : modeled ? seed_agent_policy_version(s->agent) : 0;
	int rc = 0;
	for (int i = 0; i < b->n; i++) {
		const seed_batch_req *r = &b->req[i];
		seed_session *h = r->owner;
		h->pending = false;
		if (s->failed[i])
			continue;
		int K = h->layout.rows;
		h->acted = true;
		if (modeled)
			memcpy(h->actions, s->actions + r->row0, (size_t)K * sizeof *h->actions);
		else
			for (int k = 0; k < K; k++)
				h->actions[k] =
				    (int32_t)seed_rng_below(&s->rng, (uint32_t)h->layout.num_actions);
		/* Population mode: rows playing an episode no generation
		 * wants are asked to restart. */
		bool any_reset = false;
		if (pop)
			for (int k = 0; k < K; k++) {
				bool x = seed_evo_assign_abandoned(s->assign, &h->evo[k]);
				s->st.restarts += x && !h->reset[k];
				h->reset[k] = x;
				any_reset |= x;
			}
		/* Straight into the half's kept answer, no seed_frame built. */
		seed_buf_reset(&h->reply);
		if (seed_frame_encode_action(&h->reply, h->run, h->actor, h->last_seq, h->env0, version,
		                             h->actions, any_reset ? h->reset : NULL, K, NULL) == 0) {
			double ts = seed_now_s();
			seed_chan_send(s->actors, r->id, r->idlen, h->reply.data, h->reply.len, true);
			s->st.time[SEED_PHASE_SEND] += seed_now_s() - ts;
		}
		s->st.steps += K;
		if (s->population) {
			/* Episodes go out at once: the learner waits for them
			 * to finish its round. */
			if (h->ep_n > 0) {
				int e = send_episodes(s, h);
				rc = rc ? rc : e;
			}
			continue;
		}
		if (!h->unroll)
			continue;
		/* The behaviour logits, for V-trace's importance weights (the
		 * uniform policy's are all equal: zeros). */
		const float *lg = modeled ? s->logits + (size_t)r->row0 * A : NULL;
		const float *st = S > 0 ? s->core_in + (size_t)r->row0 * (size_t)S : NULL;
		const int32_t *pa = S > 0 ? s->core_action + r->row0 : NULL;
		if (seed_unroll_record_action(h->unroll, h->actions, lg, (int32_t)version, st, pa)) {
			int e = send_unroll(s, h);
			rc = rc ? rc : e;
		}
	}
	seed_batcher_clear(b);
	/* The rest of the loop: choosing random actions, encoding answers and
	 * unrolls. */
	s->st.time[SEED_PHASE_ENCODE] += seed_now_s() - t1 - (counted(s) - c0);
	return rc;
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
			take_generation(s, &f);
			continue;
		}
		if (rc != 0 && strncmp(err.msg, "generation frame:", 17) == 0) {
			s->st.generations_taken++;
			bad_generation(s, "%s", err.msg);
			continue;
		}
		if (rc != 0 || f.type != SEED_FRAME_PARAMS || seed_frame_str(&f, "model", &json, &len) != 0) {
			warn(s, "dropped a frame on the parameter channel: %s",
			     f.type == SEED_FRAME_INVALID
			         ? err.msg
			         : "not a params frame with its model's description");
			continue;
		}
		const seed_tensor *p = seed_frame_tensor(&f, "params");
		if (s->population) {
			/* The learner acts with one model again.  Requests
			 * taken in population mode are answered in it first:
			 * their steps were not recorded in the unrolls. */
			if (s->b->n > 0)
				seed_serve_run(s);
			switch_mode(s, false);
		}
		s->have_pending = false;
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
		double c0 = counted(s);
		seed_serve_take(s, &m, now);
		/* (taking a request may push a half's episodes, or run the
		 * batch before a request of another dtype: timed apart) */
		s->st.time[SEED_PHASE_TAKE] += seed_now_s() - now - (counted(s) - c0);
	} else if (rc == -SEED_EFRAME && m.idlen)
		seed_serve_refuse(s, &m, rc, err.msg);
	else if (rc != -EAGAIN && rc != -EINTR)
		warn(s, "%s", err.msg);
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
