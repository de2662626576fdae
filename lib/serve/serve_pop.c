/* serve_pop.c: the service's population mode (seed/serve.h, "Population
 * mode"): generation frames taken and checked, each generation built in
 * the slot the assigner prepares (its population and noise table), members
 * assigned to episodes, and a batch acted on by member.
 *
 * A generation that cannot be played leaves the previous one playing.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_internal.h"

/* Flags beside a row's slot (0 or 1) in row_slot (serve_act_population):
 * no member acts on the row (the answer asks to restart or hold it), and
 * the row is held (its observation, its episode's first again, stays out
 * of the moments). */
enum { ROW_IDLE = 4, ROW_HELD = 8, ROW_SLOT = 3 };

/* A half is forgotten: its environments' episodes in flight no longer
 * hold their generation. */
void serve_session_dropped(void *ctx, seed_session *h)
{
	seed_serve *s = ctx;
	if (!s->pop.assign)
		return;
	for (int b = 0; b < h->layout.rows; b++)
		seed_evo_assign_forget(s->pop.assign, &h->evo[b]);
}

/* A generation frame that cannot be played: said (the first ten, then every
 * hundredth) and counted; the server plays on as it was. */
void serve_bad_generation(seed_serve *s, const char *fmt, ...)
{
	s->st.bad_generations++;
	if (s->pop.gen_warns++ >= 10 && s->st.bad_generations % 100 != 0)
		return;
	char msg[500];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	serve_warn(s, "dropped a generation frame (%" PRId64 " bad of %" PRId64 " taken): %s",
	           s->st.bad_generations, s->st.generations_taken, msg);
}

/* Between the modes: the episodes gathered go out under the old one, and
 * unrolls in progress are dropped (a population plays no unrolls; the
 * steps played by it belong to no policy of the learner). */
void serve_switch_mode(seed_serve *s, bool population)
{
	seed_serve_flush(s);
	for (seed_session *h = seed_sessions_next(s->ss, NULL); h; h = seed_sessions_next(s->ss, h))
		if (h->unroll)
			seed_unroll_restart(h->unroll);
	s->pop.active = population;
	if (!population) {
		seed_evo_assign_stop(s->pop.assign);
		s->st.generation = -1;
		s->st.members = 0;
		/* The moments not sent with the last episodes are dropped: the
		 * learner that acts with one model again keeps its own. */
		s->pop.obs_count = 0;
		s->pop.obs_dim = 0;
	}
}

/* The observation moments start afresh for statistics of D features. */
static void moments_restart(seed_serve *s, int64_t D)
{
	s->pop.obs_sum = seed_xgrow(s->pop.obs_sum, &s->pop.cap_obs_sum, (size_t)D, sizeof *s->pop.obs_sum);
	s->pop.obs_sumsq =
	    seed_xgrow(s->pop.obs_sumsq, &s->pop.cap_obs_sumsq, (size_t)D, sizeof *s->pop.obs_sumsq);
	memset(s->pop.obs_sum, 0, (size_t)D * sizeof *s->pop.obs_sum);
	memset(s->pop.obs_sumsq, 0, (size_t)D * sizeof *s->pop.obs_sumsq);
	s->pop.obs_count = 0;
	s->pop.obs_dim = D;
}

/* The batch's rows acted on by a slot whose generation gives statistics
 * of the moments' features, added to the moments: the observations as the
 * population read them (f32 rows of obs_dim, as serve_apply_generation
 * checked), in batch order.  A row with a value that is not finite is left
 * out: it would make every later sum NaN or infinite, which an episode
 * frame cannot carry, and a learner's statistics could not take. */
static void moments_add(seed_serve *s)
{
	const seed_batcher *b = s->b;
	size_t D = (size_t)s->pop.obs_dim;
	bool counts[2] = {false, false};
	for (int t = 0; t < 2; t++)
		counts[t] = D > 0 && s->pop.slot[t].obs_dim == s->pop.obs_dim;
	if (!(counts[0] || counts[1]) || s->batch_dtype != SEED_DTYPE_F32 ||
	    b->row_bytes != D * sizeof(float))
		return;
	double *sum = s->pop.obs_sum, *sq = s->pop.obs_sumsq;
	for (size_t k = 0; k < (size_t)b->rows; k++) {
		if ((s->pop.row_slot[k] & ROW_HELD) || !counts[s->pop.row_slot[k] & ROW_SLOT])
			continue;
		const unsigned char *row = b->obs + k * b->row_bytes;
		bool finite = true;
		for (size_t j = 0; j < D && finite; j++) {
			float x;
			memcpy(&x, row + j * sizeof x, sizeof x);
			finite = isfinite(x);
		}
		if (!finite)
			continue;
		for (size_t j = 0; j < D; j++) {
			float x;
			memcpy(&x, row + j * sizeof x, sizeof x);
			sum[j] += x;
			sq[j] += (double)x * x;
		}
		s->pop.obs_count++;
	}
}

/* Gather an episode to report of row b of h (with generation and member). */
static void gather_evo_episode(seed_serve *s, seed_session *h, int b, const seed_evo_episode *rep)
{
	if (h->ep_cap == 0) /* no unrolls channel: nowhere to push it */
		return;
	if (h->ep_n > 0 && (!h->ep_evo || h->ep_n >= h->ep_cap))
		serve_send_episodes(s, h);
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
void serve_evo_step(seed_serve *s, seed_session *h, const seed_step *step)
{
	const uint8_t *te = step->terminated, *tr = step->truncated;
	const unsigned char *ret = step->ep_return, *len = step->ep_length;
	for (int b = 0; b < h->layout.rows; b++) {
		float r;
		int32_t n;
		memcpy(&r, ret + 4 * (size_t)b, 4);
		memcpy(&n, len + 4 * (size_t)b, 4);
		seed_evo_episode rep;
		if (seed_evo_assign_step(s->pop.assign, &h->evo[b], te[b] != 0, tr[b] != 0, r, n, &rep))
			gather_evo_episode(s, h, b, &rep);
	}
}

/* The noise table (seed, size) for slot t: the other slot's when it is the
 * same, else a new one (the slot's old one freed unless the other shares
 * it).  Building takes time: 2^24 floats, about half a second. */
static int slot_noise(seed_serve *s, int t, uint64_t seed, int64_t size, seed_err *err)
{
	struct evo_slot *sl = &s->pop.slot[t], *other = &s->pop.slot[1 - t];
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

/* Play the pending generation (the agent gives the model and the
 * observations): its members' weights built in the slot the assigner
 * prepares, then made current. */
void serve_apply_generation(seed_serve *s)
{
	s->pop.have_pending = false;
	seed_evo_gen g = s->pop.pending.gen;
	seed_err err;
	const char *algo = seed_evo_algo_name(g.algo);
	bool centred = seed_evo_algo_centred(g.algo);
	/* Checked before the slot is emptied: a frame that does not fit
	 * leaves the previous generation's episodes playing. */
	size_t P = seed_model_num_params(seed_agent_model(s->agent));
	if (centred && g.num_params != P) {
		serve_bad_generation(s,
		                     "generation %" PRId64
		                     " (%s, %d members): a centre%s of %zu parameters for a model of %zu",
		                     g.generation, algo, g.members, g.sigmas ? " and sigmas" : "",
		                     g.num_params, P);
		return;
	}
	/* The moments are of f32 rows of obs_dim values, the observations
	 * "obs_norm" normalises. */
	seed_dtype dt = seed_agent_obs_dtype(s->agent);
	int64_t numel = 1;
	for (int i = 0; i < s->agent_layout.obs_rank; i++)
		numel *= s->agent_layout.obs_shape[i];
	if (g.obs_dim > 0 && (dt != SEED_DTYPE_F32 || numel != g.obs_dim)) {
		serve_bad_generation(s,
		                     "generation %" PRId64 " (%s, %d members): statistics of %" PRId64
		                     " features for observations of %" PRId64 " %s values (they need f32 "
		                     "ones of as many)",
		                     g.generation, algo, g.members, g.obs_dim, numel, seed_dtype_name(dt));
		return;
	}
	if (!s->pop.assign)
		s->pop.assign = seed_evo_assign_new();
	int t = seed_evo_assign_prepare(s->pop.assign);
	struct evo_slot *sl = &s->pop.slot[t];
	seed_unroll_layout l = s->agent_layout;
	l.obs_dtype = seed_agent_obs_dtype(s->agent);
	int rc = 0;
	if (!sl->pop || strcmp(sl->json, s->json) != 0 || !serve_same_obs(&sl->layout, &l)) {
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
		if (!centred)
			g.num_params = seed_population_num_params(sl->pop);
		rc = seed_population_set(sl->pop, sl->noise, &g, &err);
	}
	if (rc == 0) /* the slot t, or an error */
		rc = seed_evo_assign_start(s->pop.assign, g.generation, g.members, g.episodes,
		                           s->pop.pending_cap, s->pop.pending_episode_seed, &err);
	if (rc < 0) {
		serve_bad_generation(s, "generation %" PRId64 " (%s, %d members): %s", g.generation, algo,
		                     g.members, err.msg);
		return;
	}
	sl->generation = g.generation;
	sl->greedy = s->pop.pending_greedy;
	sl->action_noise = g.action_noise;
	sl->obs_dim = g.obs_dim;
	/* Statistics of other features than the moments gathered so far
	 * (other observations, so another model): those moments describe
	 * observations the learner keeps no statistics of any more, and are
	 * dropped; from now on only rows of generations with the new features
	 * count (the previous generation's episodes still playing do not).
	 * A generation without statistics changes nothing: the previous one's
	 * rows still count until its episodes end. */
	if (g.obs_dim > 0 && g.obs_dim != s->pop.obs_dim)
		moments_restart(s, g.obs_dim);
	if (!s->pop.active) {
		serve_switch_mode(s, true);
		if (!s->unrolls)
			serve_warn(s,
			           "playing generation %" PRId64
			           " without an unrolls channel: its episodes reach no "
			           "learner",
			           g.generation);
	}
	s->st.generation = g.generation;
	s->st.members = g.members;
	s->st.generations++;
}

/* A generation frame from the learner: checked, and played at once by the
 * agent (built now if the frame brings another model), or kept until the
 * first request tells the observations an agent is built for. */
void serve_take_generation(seed_serve *s, const seed_frame *f)
{
	seed_err err;
	s->st.generations_taken++;
	int64_t id[3] = {seed_frame_int(f, "run", 0), seed_frame_int(f, "generation", 0),
	                 seed_frame_int(f, "phase", 0)};
	if (s->pop.have_last_gen && memcmp(id, s->pop.last_gen, sizeof id) == 0) {
		s->st.generation_repeats++; /* the learner publishes a round again for late joiners */
		return;
	}
	const char *json;
	size_t len;
	bool has_json = seed_frame_str(f, "model", &json, &len) == 0;
	if (!has_json && !s->json) {
		serve_bad_generation(
		    s, "generation %" PRId64 ": no 'model' in it, and no model description yet", id[1]);
		return;
	}
	const seed_value *gv = seed_frame_get(f, "greedy");
	int rc = seed_evo_gen_from_frame_copy(f, &s->pop.pending, &err);
	if (rc) {
		serve_bad_generation(s, "%s", err.msg);
		return;
	}
	memcpy(s->pop.last_gen, id, sizeof id);
	s->pop.have_last_gen = true;
	s->pop.pending_cap = seed_frame_int(f, "episode_cap", 0);
	s->pop.pending_episode_seed = (uint64_t)seed_frame_int(f, "episode_seed", 0);
	s->pop.pending_greedy = !gv || gv->u.b;
	s->pop.have_pending = true;
	if (has_json) /* another model: the agent built for it plays the generation */
		seed_serve_policy(s, json, len, NULL, 0, 0);
	if (s->agent && s->pop.have_pending)
		serve_apply_generation(s);
}

/* Act on the batch with the population: each row by the member the
 * assigner gives it (its episode's, in the current generation or the
 * previous one), rows of one generation in one call (grouped by member
 * there), in pieces of the rows a population was built for.  Rows the
 * answer asks to hold or restart take no action from it: no member acts
 * on them (action 0, Box means 0) and their observations (a held row's
 * repeats its episode's first) stay out of the moments.  Discrete
 * members give actions (greedy or sampled, as their generation says); Box
 * members (a Gaussian policy) their means into s->act.raw, plus their
 * generation's action_noise times a standard normal draw per element,
 * which the answers map into each half's bounds.  Then the rows' moments. */
void serve_act_population(seed_serve *s)
{
	seed_batcher *b = s->b;
	size_t R = (size_t)b->rows, rb = b->row_bytes;
	bool box = seed_agent_box(s->agent);
	size_t A = (size_t)s->agent_layout.num_actions;
	s->pop.row_slot = seed_xgrow(s->pop.row_slot, &s->pop.cap_row_slot, R, sizeof *s->pop.row_slot);
	s->pop.row_member =
	    seed_xgrow(s->pop.row_member, &s->pop.cap_row_member, R, sizeof *s->pop.row_member);
	bool one = true;
	for (int i = 0; i < b->n; i++) {
		const seed_batch_req *r = &b->req[i];
		const seed_session *h = r->owner;
		for (int j = 0; j < r->rows; j++) {
			int slot; /* 0 or 1: population mode has a current generation */
			size_t k = (size_t)r->row0 + (size_t)j;
			seed_evo_assign_play(s->pop.assign, &h->evo[j], &slot, &s->pop.row_member[k]);
			int ask = seed_evo_assign_request(s->pop.assign, &h->evo[j]);
			if (ask != SEED_RESET_STEP)
				slot |= ROW_IDLE | (ask == SEED_RESET_HOLD ? ROW_HELD : 0);
			s->pop.row_slot[k] = (int8_t)slot;
			one = one && slot == s->pop.row_slot[0];
		}
	}
	for (size_t k = 0; k < R; k++)
		if (s->pop.row_slot[k] & ROW_IDLE) {
			if (box)
				memset(s->act.raw + k * A, 0, A * sizeof *s->act.raw);
			else
				s->act.actions[k] = 0;
		}
	int max_rows = 2 * s->o.max_batch;
	seed_err err;
	for (int t = 0; t < 2; t++) {
		const unsigned char *obs = b->obs;
		const int32_t *member = s->pop.row_member;
		int32_t *actions = s->act.actions;
		float *raw = s->act.raw;
		size_t n = R;
		if (!one) {
			s->pop.pop_index =
			    seed_xgrow(s->pop.pop_index, &s->pop.cap_pop_index, R, sizeof *s->pop.pop_index);
			s->pop.pop_member = seed_xgrow(s->pop.pop_member, &s->pop.cap_pop_member, R,
			                               sizeof *s->pop.pop_member);
			s->pop.pop_actions = seed_xgrow(s->pop.pop_actions, &s->pop.cap_pop_actions, R,
			                                sizeof *s->pop.pop_actions);
			s->pop.pop_obs = seed_xgrow(s->pop.pop_obs, &s->pop.cap_pop_obs, R * rb, 1);
			if (box)
				s->pop.pop_raw = seed_xgrow(s->pop.pop_raw, &s->pop.cap_pop_raw, R * A,
				                            sizeof *s->pop.pop_raw);
			n = 0;
			for (size_t k = 0; k < R; k++)
				if (s->pop.row_slot[k] == t) {
					memcpy(s->pop.pop_obs + n * rb, b->obs + k * rb, rb);
					s->pop.pop_member[n] = s->pop.row_member[k];
					s->pop.pop_index[n++] = (int32_t)k;
				}
			obs = s->pop.pop_obs;
			member = s->pop.pop_member;
			actions = s->pop.pop_actions;
			raw = s->pop.pop_raw;
		} else if (s->pop.row_slot[0] != t) {
			continue;
		}
		const struct evo_slot *sl = &s->pop.slot[t];
		for (size_t k0 = 0; k0 < n; k0 += (size_t)max_rows) {
			int rows = n - k0 < (size_t)max_rows ? (int)(n - k0) : max_rows;
			int rc = box ? seed_population_forward(sl->pop, rows, obs + k0 * rb, member + k0,
			                                       raw + k0 * A, &err)
			             : seed_population_act(sl->pop, rows, obs + k0 * rb, member + k0,
			                                   sl->greedy, &s->rng, actions + k0, &err);
			if (rc) {
				/* Not expected: the rows were checked as they came. */
				seed_err e2;
				seed_err_set(&e2, rc, "step frame: the population's forward pass: %s",
				             err.msg);
				for (int i = 0; i < b->n; i++)
					if (!s->act.failed[i])
						serve_fail(s, i, rc, &e2);
				return;
			}
		}
		if (box && sl->action_noise > 0)
			for (size_t i = 0; i < n * A; i++)
				raw[i] += (float)(sl->action_noise * seed_rng_normal(&s->rng));
		if (!one && box)
			for (size_t k = 0; k < n; k++)
				memcpy(s->act.raw + (size_t)s->pop.pop_index[k] * A, raw + k * A,
				       A * sizeof *raw);
		else if (!one)
			for (size_t k = 0; k < n; k++)
				s->act.actions[s->pop.pop_index[k]] = s->pop.pop_actions[k];
	}
	moments_add(s);
}
