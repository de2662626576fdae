/* serve_out.c: what the service sends besides answers: error frames,
 * pushes on the unrolls channel, episode frames, and unroll frames with a
 * Q model's first priorities.
 *
 * A push that fails is counted (push_failed) and warned about at once the
 * first time, then at most once every push_warn_interval seconds; its
 * unrolls and episodes are lost and not counted as pushed.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "seed/clock.h"
#include "seed/r2d2.h"
#include "serve_internal.h"

void serve_send_error(seed_serve *s, const seed_chan_msg *to, const void *id, size_t idlen, int code,
                      const char *msg, const char *type)
{
	s->st.bad++;
	/* The first few, then every thousandth, so that a flood cannot drown
	 * the log. */
	if (s->st.bad <= 10 || s->st.bad % 1000 == 0)
		serve_warn(s, "dropped bad frame #%" PRId64 ": %s", s->st.bad, msg);
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
	serve_send_error(s, m, NULL, 0, code, msg, NULL);
}

/* A frame that could not be pushed (its unrolls or episodes are lost):
 * serve_counted, and said at once the first time, then at most once every
 * push_warn_interval seconds with the count since the last warning. */
static void push_failed(seed_serve *s, int rc)
{
	s->st.push_failed++;
	double now = seed_now_s(), every = s->o.push_warn_interval > 0 ? s->o.push_warn_interval : 5;
	if (s->push_warned > 0 && now - s->last_push_warn < every)
		return;
	serve_warn(s,
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
double serve_counted(const seed_serve *s)
{
	double t = 0;
	for (int p = 0; p < SEED_PHASE_N; p++)
		t += s->st.time[p];
	return t;
}

/* Send the episodes gathered in h as one episode frame, and forget them.
 * In population mode the observation moments gathered since the last
 * frame that carried them go with it (obs_count, obs_sum, obs_sumsq), and
 * start again from zero once it is pushed (a frame not pushed leaves them
 * for the next one). */
int serve_send_episodes(seed_serve *s, seed_session *h)
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
	if (h->layout.frame_skip > 1)
		seed_frame_set_int(&e, "frame_skip", h->layout.frame_skip);
	bool moments = s->pop.active && s->pop.obs_count > 0;
	if (moments) {
		int64_t D = s->pop.obs_dim;
		seed_frame_set_int(&e, "obs_count", s->pop.obs_count);
		seed_frame_set_tensor(&e, "obs_sum", seed_tensor_view(s->pop.obs_sum, SEED_DTYPE_F64, 1, &D));
		seed_frame_set_tensor(&e, "obs_sumsq",
		                      seed_tensor_view(s->pop.obs_sumsq, SEED_DTYPE_F64, 1, &D));
	}
	seed_buf_reset(&s->out);
	int rc = seed_frame_encode(&e, &s->out, NULL);
	if (rc == 0)
		rc = push(s, s->out.data, s->out.len);
	if (rc == 0 && moments) {
		s->pop.obs_count = 0;
		memset(s->pop.obs_sum, 0, (size_t)s->pop.obs_dim * sizeof *s->pop.obs_sum);
		memset(s->pop.obs_sumsq, 0, (size_t)s->pop.obs_dim * sizeof *s->pop.obs_sumsq);
	}
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
void serve_gather_episodes(seed_serve *s, seed_session *h, const seed_step *step)
{
	const uint8_t *te = step->terminated, *tr = step->truncated;
	const unsigned char *ret = step->ep_return, *len = step->ep_length;
	int K = h->layout.rows;
	if (h->ep_n + (size_t)K > h->ep_cap)
		serve_send_episodes(s, h);
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
		int e = serve_send_episodes(s, h);
		rc = rc ? rc : e;
	}
	return rc;
}

/* The first priorities of h's full unroll into s->q.prio (B) when the agent
 * is a Q model: seed_r2d2_loss over steps burn_in .. L-1, the recorded Q
 * values (the logits field) as online and target values, done = terminated
 * | truncated.  Returns whether they are there, finite. */
static bool unroll_priorities(seed_serve *s, const seed_session *h)
{
	if (!s->agent || seed_agent_head(s->agent) != SEED_HEAD_DUELING)
		return false;
	const seed_unroll *u = h->unroll;
	int B = u->layout.rows, A = u->layout.num_actions, L = u->steps, b0 = s->o.burn_in;
	if (A != s->agent_layout.num_actions || u->layout.box) /* played at random for another layout */
		return false;
	size_t Lp = (size_t)(L - b0), n = Lp * (size_t)B;
	s->q.prio = seed_xgrow(s->q.prio, &s->q.cap_prio, (size_t)B, sizeof *s->q.prio);
	s->q.ploss = seed_xgrow(s->q.ploss, &s->q.cap_ploss, (size_t)B, sizeof *s->q.ploss);
	s->q.pq = seed_xgrow(s->q.pq, &s->q.cap_pq, n * (size_t)A, sizeof *s->q.pq);
	s->q.preward = seed_xgrow(s->q.preward, &s->q.cap_preward, n, sizeof *s->q.preward);
	s->q.paction = seed_xgrow(s->q.paction, &s->q.cap_paction, n, sizeof *s->q.paction);
	s->q.pdone = seed_xgrow(s->q.pdone, &s->q.cap_pdone, n, sizeof *s->q.pdone);
	const float *q = u->field[SEED_UNROLL_LOGITS], *rew = u->field[SEED_UNROLL_REWARD];
	const int32_t *act = u->field[SEED_UNROLL_ACTION];
	const uint8_t *te = u->field[SEED_UNROLL_TERMINATED], *tr = u->field[SEED_UNROLL_TRUNCATED];
	/* (B, L, ...) batch-major to (L', B, ...) time-major. */
	for (int b = 0; b < B; b++)
		for (size_t t = 0; t < Lp; t++) {
			size_t src = (size_t)b * (size_t)L + (size_t)b0 + t, dst = t * (size_t)B + (size_t)b;
			memcpy(s->q.pq + dst * (size_t)A, q + src * (size_t)A, (size_t)A * sizeof(float));
			s->q.preward[dst] = rew[src];
			s->q.paction[dst] = act[src];
			s->q.pdone[dst] = te[src] || tr[src];
		}
	int n_step = s->o.n_step > 0 ? s->o.n_step : 5;
	int rc = seed_r2d2_loss((int)Lp, B, A, n_step, (float)s->o.discount, (float)s->o.rescale_eps,
	                        (float)s->o.eta, s->q.pq, s->q.pq, s->q.paction, s->q.preward, s->q.pdone,
	                        s->q.prio, s->q.ploss, NULL);
	bool ok = rc == 0;
	for (int b = 0; b < B && ok; b++)
		ok = isfinite(s->q.prio[b]) && s->q.prio[b] >= 0;
	if (!ok && (s->q.prio_warns++ < 10 || s->q.prio_warns % 1000 == 0))
		serve_warn(s,
		           "an unroll of actor %" PRIu32 " (env0 %" PRId32
		           ") goes without first priorities: %s (%" PRId64
		           " so far); the replay gives it its "
		           "largest",
		           h->actor, h->env0,
		           rc ? "they cannot be computed" : "its Q values give one that is not finite",
		           s->q.prio_warns);
	return ok;
}

/* Push h's full unroll, after the episodes gathered until its last step,
 * with a Q model's first priorities, and start its next one. */
int serve_send_unroll(seed_serve *s, seed_session *h)
{
	seed_frame f;
	seed_err err;
	int erc = serve_send_episodes(s, h);
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
		rc =
		    seed_frame_set_tensor(&f, "priority", seed_tensor_view(s->q.prio, SEED_DTYPE_F32, 1, &B));
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
