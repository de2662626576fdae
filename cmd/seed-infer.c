/* seed-infer: the central inference server.
 *
 * Actors send step frames (observations of a half of their envs) over a
 * DEALER/ROUTER pair; the server gathers the requests that arrive within a
 * batching window (up to --max-batch env rows, or --timeout-us after the
 * first one), chooses actions for the whole batch at once, and answers each
 * request with an action frame.  It keeps, per env, the steps since the last
 * unroll and pushes each finished unroll (T+1 steps, overlapping the next by
 * one step) to --unrolls, together with episode frames for ended episodes.
 *
 * State is keyed by (run, actor, env0): a restarted actor (new run id) gets
 * fresh state, a resent request (same seq) gets the same answer again, and a
 * gap in seq (lost messages) restarts that half's unrolls.  A bad frame is
 * counted, reported, answered with an error frame, and dropped.
 *
 * The unroll channel is a PUSH socket with a bounded queue: when the consumer
 * falls behind, sends block, the server stops answering, and the actors wait
 * (SEED's backpressure).  Nothing is dropped silently.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "cli.h"
#include "seed/buf.h"
#include "seed/chan.h"
#include "seed/checkpoint.h"
#include "seed/frame.h"
#include "seed/nn.h"
#include "seed/policy.h"
#include "seed/rng.h"
#include <jansson.h>

static const char usage[] = "--bind ENDPOINT (--policy random | --model SOURCE) [OPTION]...";

static const char help[] =
    "Usage: seed-infer --bind ENDPOINT (--policy random | --model SOURCE) [OPTION]...\n"
    "Serve actions to Seed actors from one batched policy; assemble their unrolls.\n"
    "\n"
    "  -b, --bind ENDPOINT       where actors connect (binds; tcp://, ipc://; '>' to connect)\n"
    "  -p, --policy random       uniform random actions\n"
    "  -m, --model SOURCE        a model: a learner's parameter endpoint (connects; the newest\n"
    "                            parameters are used as they come), or a checkpoint (DIR or FILE)\n"
    "  -g, --greedy              take the most likely action instead of sampling\n"
    "  -B, --max-batch N         answer once N env rows are waiting (default 256)\n"
    "  -t, --timeout-us T        ... or T microseconds after the first request (default 500)\n"
    "  -u, --unrolls ENDPOINT    push unrolls and episode frames here (binds; or a file, or -)\n"
    "  -T, --unroll-length T     steps per unroll, plus one overlapping step (default 20)\n"
    "      --hwm N               unroll frames queued before sends block (default 64)\n"
    "  -s, --seed S              seed for the policy's sampling (default 0)\n"
    "      --stats-interval SEC  print statistics on stderr every SEC seconds (default 10; 0: never)\n"
    "      --idle-expiry SEC     forget an actor half silent for SEC seconds (default 60)\n"
    "  -q, --quiet               no statistics and no summary on stderr\n"
    "  -h, --help                show this help and exit\n"
    "  -V, --version             show the version and exit\n"
    "\n"
    "See seed-infer(1) and seed-frames(7).\n";

enum { OPT_HWM = 256, OPT_STATS, OPT_EXPIRY };

static const struct option options[] = {
    {"bind", required_argument, NULL, 'b'},
    {"policy", required_argument, NULL, 'p'},
    {"model", required_argument, NULL, 'm'},
    {"greedy", no_argument, NULL, 'g'},
    {"max-batch", required_argument, NULL, 'B'},
    {"timeout-us", required_argument, NULL, 't'},
    {"unrolls", required_argument, NULL, 'u'},
    {"unroll-length", required_argument, NULL, 'T'},
    {"hwm", required_argument, NULL, OPT_HWM},
    {"seed", required_argument, NULL, 's'},
    {"stats-interval", required_argument, NULL, OPT_STATS},
    {"idle-expiry", required_argument, NULL, OPT_EXPIRY},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* The state of one half of one actor's envs. */
typedef struct slot {
	bool used;
	uint32_t run;
	int64_t actor, env0;
	int count, num_actions;
	seed_dtype obs_dtype;
	int obs_rank; /* without the leading K */
	int64_t obs_shape[SEED_TENSOR_MAX_RANK];
	size_t obs_bytes;
	int64_t last_seq; /* -1: none yet */
	double last_seen;
	seed_buf reply;         /* the last answer, for resent requests */
	int32_t *reply_actions; /* [count] */
	/* Unroll under construction, [count][T+1] (obs: [count][T+1][obs]). */
	int pos;
	uint8_t *obs;
	int32_t *action, *version;
	float *reward, *final_value, *logits;
	uint8_t *terminated, *truncated;
} slot;

/* A request waiting in the current batch. */
typedef struct pending {
	slot *s;
	int64_t row0; /* first row in the batch */
	unsigned char id[256];
	size_t idlen;
} pending;

typedef struct server {
	seed_chan *actors, *unrolls;
	int T1; /* unroll length + 1 */
	int max_batch, timeout_us;
	seed_rng rng;
	int32_t policy_version;
	slot **slots; /* each slot allocated on its own: pending requests point at them */
	int nslots;
	pending *pend;
	int npend, cap_pend;
	int64_t rows; /* rows in the current batch */
	uint8_t *batch_obs;
	size_t batch_obs_cap;
	double idle_expiry;
	seed_buf out;
	/* the model policy (NULL model: no parameters yet, or --policy random) */
	bool use_model, greedy;
	seed_chan *params;     /* the learner's parameters, or NULL */
	seed_checkpoint *ckpt; /* a checkpoint to build the model from, or NULL */
	seed_model *model;
	int model_cap;    /* rows the model was built for */
	char *model_json; /* the model description in use */
	uint8_t *staged;  /* parameters that came before the model could be built */
	size_t staged_len;
	int64_t staged_version;
	float *logits, *values, *final_values;
	int32_t *actions;
	size_t cap_rows, cap_final;
	uint8_t *final_obs;       /* [nfinal][obs] final observations of truncated envs */
	int *final_req, *final_b; /* which request and env each belongs to */
	int nfinal;
	int64_t warned_mismatch;
	/* statistics since start and since the last report */
	int64_t steps, requests, batches, bad, dups, gaps, unroll_frames, unrolls_sent, episodes,
	    unroll_bytes;
	int64_t last_steps, last_batches, last_unroll_bytes, last_rows_sum, rows_sum;
	double last_report;
} server;

static void slot_free(slot *s)
{
	seed_buf_free(&s->reply);
	free(s->reply_actions);
	free(s->obs);
	free(s->action);
	free(s->version);
	free(s->reward);
	free(s->final_value);
	free(s->logits);
	free(s->terminated);
	free(s->truncated);
	memset(s, 0, sizeof *s);
}

static void slot_init(server *sv, slot *s, uint32_t run, int64_t actor, int64_t env0, const seed_tensor *obs,
                      int num_actions)
{
	slot_free(s);
	s->used = true;
	s->run = run;
	s->actor = actor;
	s->env0 = env0;
	s->count = (int)obs->shape[0];
	s->num_actions = num_actions;
	s->obs_dtype = obs->dtype;
	s->obs_rank = obs->rank - 1;
	for (int i = 1; i < obs->rank; i++)
		s->obs_shape[i - 1] = obs->shape[i];
	s->obs_bytes = seed_tensor_nbytes(obs) / (size_t)s->count;
	s->last_seq = -1;
	seed_buf_init(&s->reply);
	size_t n = (size_t)s->count, nt = n * (size_t)sv->T1;
	s->reply_actions = seed_xcalloc(n, sizeof(int32_t));
	if (sv->unrolls) {
		s->obs = seed_xcalloc(nt, s->obs_bytes);
		s->action = seed_xcalloc(nt, sizeof(int32_t));
		s->version = seed_xcalloc(nt, sizeof(int32_t));
		s->reward = seed_xcalloc(nt, sizeof(float));
		s->final_value = seed_xcalloc(nt, sizeof(float));
		s->logits = seed_xcalloc(nt * (size_t)num_actions, sizeof(float));
		s->terminated = seed_xcalloc(nt, 1);
		s->truncated = seed_xcalloc(nt, 1);
	}
}

/* Whether obs matches the slot's layout (an actor may not change it). */
static bool slot_matches(const slot *s, const seed_tensor *obs, int num_actions)
{
	if (obs->shape[0] != s->count || obs->dtype != s->obs_dtype || obs->rank - 1 != s->obs_rank ||
	    num_actions != s->num_actions)
		return false;
	for (int i = 1; i < obs->rank; i++)
		if (obs->shape[i] != s->obs_shape[i - 1])
			return false;
	return true;
}

/* Find the slot of (run, actor, env0), making one if needed.  A restarted
 * actor comes with a new run id and so gets fresh slots; the old ones are
 * forgotten once silent for the idle expiry. */
static slot *slot_get(server *sv, uint32_t run, int64_t actor, int64_t env0, const seed_tensor *obs,
                      int num_actions, double now)
{
	slot *free_slot = NULL;
	for (int i = 0; i < sv->nslots; i++) {
		slot *s = sv->slots[i];
		if (!s->used) {
			if (!free_slot)
				free_slot = s;
			continue;
		}
		if (s->run == run && s->actor == actor && s->env0 == env0) {
			if (!slot_matches(s, obs, num_actions))
				slot_init(sv, s, run, actor, env0, obs, num_actions);
			return s;
		}
		if (now - s->last_seen > sv->idle_expiry) {
			slot_free(s);
			if (!free_slot)
				free_slot = s;
		}
	}
	if (!free_slot) {
		sv->slots = seed_xrealloc(sv->slots, (size_t)(sv->nslots + 1) * sizeof *sv->slots);
		free_slot = sv->slots[sv->nslots++] = seed_xcalloc(1, sizeof(slot));
	}
	slot_init(sv, free_slot, run, actor, env0, obs, num_actions);
	return free_slot;
}

static void send_error(server *sv, const unsigned char *id, size_t idlen, int code, const char *msg,
                       const char *frame_type)
{
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_ERROR);
	seed_frame_set_int(&f, "code", code);
	seed_frame_set_str(&f, "message", msg);
	if (frame_type)
		seed_frame_set_str(&f, "frame", frame_type);
	seed_buf_reset(&sv->out);
	if (seed_frame_encode(&f, &sv->out, NULL) == 0)
		seed_chan_send(sv->actors, id, idlen, sv->out.data, sv->out.len, true);
}

static void report_bad(server *sv, const char *msg)
{
	sv->bad++;
	/* Say the first few, then every thousandth, so a flood cannot drown stderr. */
	if (sv->bad <= 10 || sv->bad % 1000 == 0)
		cli_warn("dropped bad frame #%" PRId64 ": %s", sv->bad, msg);
}

/* Copy the step's per-env data into the slot's unroll at pos. */
static void record_step(server *sv, slot *s, const seed_frame *f)
{
	int T1 = sv->T1, pos = s->pos;
	const seed_tensor *obs = seed_frame_tensor(f, "obs");
	const seed_tensor *rew = seed_frame_tensor(f, "reward");
	const seed_tensor *term = seed_frame_tensor(f, "terminated");
	const seed_tensor *trunc = seed_frame_tensor(f, "truncated");
	const uint8_t *o = obs->data;
	for (int b = 0; b < s->count; b++) {
		size_t at = (size_t)b * (size_t)T1 + (size_t)pos;
		memcpy(s->obs + at * s->obs_bytes, o + (size_t)b * s->obs_bytes, s->obs_bytes);
		memcpy(&s->reward[at], (const uint8_t *)rew->data + 4 * (size_t)b, 4);
		s->terminated[at] = ((const uint8_t *)term->data)[b];
		s->truncated[at] = ((const uint8_t *)trunc->data)[b];
		s->final_value[at] = 0.0f; /* the random policy has no value function */
	}
}

/* Send ended episodes of this step as one episode frame. */
static int send_episodes(server *sv, const slot *s, const seed_frame *f)
{
	const seed_tensor *term = seed_frame_tensor(f, "terminated");
	const seed_tensor *trunc = seed_frame_tensor(f, "truncated");
	const seed_tensor *ret = seed_frame_tensor(f, "ep_return");
	const seed_tensor *len = seed_frame_tensor(f, "ep_length");
	const uint8_t *te = term->data, *tr = trunc->data;
	int n = 0;
	for (int b = 0; b < s->count; b++)
		n += te[b] || tr[b];
	if (n == 0)
		return 0;
	int32_t *env = seed_xmalloc((size_t)n * 4), *length = seed_xmalloc((size_t)n * 4);
	float *rets = seed_xmalloc((size_t)n * 4);
	uint8_t *trn = seed_xmalloc((size_t)n);
	int j = 0;
	for (int b = 0; b < s->count; b++) {
		if (!(te[b] || tr[b]))
			continue;
		env[j] = (int32_t)(s->env0 + b);
		memcpy(&rets[j], (const uint8_t *)ret->data + 4 * (size_t)b, 4);
		memcpy(&length[j], (const uint8_t *)len->data + 4 * (size_t)b, 4);
		trn[j] = tr[b] && !te[b];
		j++;
	}
	int64_t nn = n;
	seed_frame e;
	seed_frame_init(&e, SEED_FRAME_EPISODE);
	seed_frame_set_int(&e, "run", s->run);
	seed_frame_set_int(&e, "actor", s->actor);
	seed_frame_set_tensor(&e, "env", seed_tensor_view(env, SEED_DTYPE_I32, 1, &nn));
	seed_frame_set_tensor(&e, "return", seed_tensor_view(rets, SEED_DTYPE_F32, 1, &nn));
	seed_frame_set_tensor(&e, "length", seed_tensor_view(length, SEED_DTYPE_I32, 1, &nn));
	seed_frame_set_tensor(&e, "truncated", seed_tensor_view(trn, SEED_DTYPE_U8, 1, &nn));
	seed_buf_reset(&sv->out);
	seed_err err;
	int rc = seed_frame_encode(&e, &sv->out, &err);
	if (rc == 0)
		rc = seed_chan_send(sv->unrolls, NULL, 0, sv->out.data, sv->out.len, false);
	free(env);
	free(length);
	free(rets);
	free(trn);
	sv->episodes += n;
	return rc;
}

/* Push the slot's finished unroll and start the next from its last step. */
static int send_unroll(server *sv, slot *s)
{
	int64_t B = s->count, T1 = sv->T1;
	int64_t shape[2 + SEED_TENSOR_MAX_RANK] = {B, T1};
	for (int i = 0; i < s->obs_rank; i++)
		shape[2 + i] = s->obs_shape[i];
	int64_t lshape[3] = {B, T1, s->num_actions};
	int32_t *env = seed_xmalloc((size_t)B * 4);
	for (int b = 0; b < B; b++)
		env[b] = (int32_t)(s->env0 + b);
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_UNROLL);
	seed_frame_set_int(&f, "run", s->run);
	seed_frame_set_int(&f, "actor", s->actor);
	seed_frame_set_int(&f, "num_actions", s->num_actions);
	seed_frame_set_tensor(&f, "env", seed_tensor_view(env, SEED_DTYPE_I32, 1, &B));
	seed_frame_set_tensor(&f, "obs", seed_tensor_view(s->obs, s->obs_dtype, 2 + s->obs_rank, shape));
	seed_frame_set_tensor(&f, "action", seed_tensor_view(s->action, SEED_DTYPE_I32, 2, shape));
	seed_frame_set_tensor(&f, "reward", seed_tensor_view(s->reward, SEED_DTYPE_F32, 2, shape));
	seed_frame_set_tensor(&f, "terminated", seed_tensor_view(s->terminated, SEED_DTYPE_U8, 2, shape));
	seed_frame_set_tensor(&f, "truncated", seed_tensor_view(s->truncated, SEED_DTYPE_U8, 2, shape));
	seed_frame_set_tensor(&f, "final_value", seed_tensor_view(s->final_value, SEED_DTYPE_F32, 2, shape));
	seed_frame_set_tensor(&f, "policy_version", seed_tensor_view(s->version, SEED_DTYPE_I32, 2, shape));
	seed_frame_set_tensor(&f, "logits", seed_tensor_view(s->logits, SEED_DTYPE_F32, 3, lshape));
	seed_buf_reset(&sv->out);
	seed_err err;
	int rc = seed_frame_encode(&f, &sv->out, &err);
	free(env);
	if (rc) {
		cli_warn("encoding an unroll: %s", err.msg);
		return rc;
	}
	rc = seed_chan_send(sv->unrolls, NULL, 0, sv->out.data, sv->out.len, false);
	if (rc)
		return rc;
	sv->unroll_frames++;
	sv->unrolls_sent += B;
	sv->unroll_bytes += (int64_t)sv->out.len;
	/* One-step overlap: the last step opens the next unroll. */
	size_t A = (size_t)s->num_actions;
	for (int b = 0; b < B; b++) {
		size_t last = (size_t)b * (size_t)T1 + (size_t)(T1 - 1), first = (size_t)b * (size_t)T1;
		memcpy(s->obs + first * s->obs_bytes, s->obs + last * s->obs_bytes, s->obs_bytes);
		s->action[first] = s->action[last];
		s->version[first] = s->version[last];
		s->reward[first] = s->reward[last];
		s->final_value[first] = s->final_value[last];
		s->terminated[first] = s->terminated[last];
		s->truncated[first] = s->truncated[last];
		memcpy(s->logits + first * A, s->logits + last * A, A * sizeof(float));
	}
	s->pos = 1;
	return 0;
}

/* Take one message from an actor: answer resends, queue steps. */
static void take_request(server *sv, const seed_chan_msg *m, seed_frame *f, double now)
{
	seed_err err;
	int rc = seed_frame_decode(f, m->data, m->len, &err);
	if (rc) {
		report_bad(sv, err.msg);
		send_error(sv, m->id, m->idlen, rc, err.msg, NULL);
		return;
	}
	if (f->type != SEED_FRAME_STEP) {
		snprintf(err.msg, sizeof err.msg, "%s frame: seed-infer takes step frames from actors",
		         seed_frame_type_name(f->type));
		report_bad(sv, err.msg);
		send_error(sv, m->id, m->idlen, -SEED_ETYPE, err.msg, seed_frame_type_name(f->type));
		return;
	}
	const seed_tensor *obs = seed_frame_tensor(f, "obs");
	uint32_t run = (uint32_t)seed_frame_int(f, "run", 0);
	int64_t actor = seed_frame_int(f, "actor", 0), env0 = seed_frame_int(f, "env0", 0);
	int64_t seq = seed_frame_int(f, "seq", 0);
	int num_actions = (int)seed_frame_int(f, "num_actions", 1);
	slot *s = slot_get(sv, run, actor, env0, obs, num_actions, now);
	s->last_seen = now;
	for (int i = 0; i < sv->npend; i++)
		if (sv->pend[i].s == s) {
			sv->dups++;
			return; /* resent while the first is still in this batch: it will be answered */
		}
	if (seq == s->last_seq && s->reply.len) {
		/* A resent request: the first answer may have been lost. */
		sv->dups++;
		seed_chan_send(sv->actors, m->id, m->idlen, s->reply.data, s->reply.len, true);
		return;
	}
	if (s->last_seq >= 0 && seq != s->last_seq + 1) {
		sv->gaps++;
		s->pos = 0; /* lost steps: this half's unroll cannot continue */
	}
	s->last_seq = seq;
	if (sv->unrolls) {
		record_step(sv, s, f);
		if (send_episodes(sv, s, f))
			return;
	}
	/* Gather the observations for the batched policy. */
	size_t need = (size_t)(sv->rows + s->count) * s->obs_bytes;
	if (need > sv->batch_obs_cap) {
		sv->batch_obs_cap = need * 2;
		sv->batch_obs = seed_xrealloc(sv->batch_obs, sv->batch_obs_cap);
	}
	memcpy(sv->batch_obs + (size_t)sv->rows * s->obs_bytes, obs->data, (size_t)s->count * s->obs_bytes);
	/* A model values the real last observation of truncated episodes, so the
	 * learner can bootstrap from it. */
	const seed_tensor *fin = seed_frame_tensor(f, "final_obs");
	if (sv->use_model && sv->unrolls && fin) {
		const uint8_t *tr = seed_frame_tensor(f, "truncated")->data;
		for (int b = 0; b < s->count; b++) {
			if (!tr[b])
				continue;
			if ((size_t)sv->nfinal == sv->cap_final) {
				sv->cap_final = sv->cap_final ? 2 * sv->cap_final : 64;
				sv->final_obs = seed_xrealloc(sv->final_obs, sv->cap_final * s->obs_bytes);
				sv->final_req = seed_xrealloc(sv->final_req, sv->cap_final * sizeof(int));
				sv->final_b = seed_xrealloc(sv->final_b, sv->cap_final * sizeof(int));
				sv->final_values =
				    seed_xrealloc(sv->final_values, sv->cap_final * sizeof(float));
			}
			memcpy(sv->final_obs + (size_t)sv->nfinal * s->obs_bytes,
			       (const uint8_t *)fin->data + (size_t)b * s->obs_bytes, s->obs_bytes);
			sv->final_req[sv->nfinal] = sv->npend;
			sv->final_b[sv->nfinal] = b;
			sv->nfinal++;
		}
	}
	if (sv->npend == sv->cap_pend) {
		sv->cap_pend = sv->cap_pend ? 2 * sv->cap_pend : 16;
		sv->pend = seed_xrealloc(sv->pend, (size_t)sv->cap_pend * sizeof *sv->pend);
	}
	pending *p = &sv->pend[sv->npend++];
	p->s = s;
	p->row0 = sv->rows;
	memcpy(p->id, m->id, m->idlen);
	p->idlen = m->idlen;
	sv->rows += s->count;
	sv->requests++;
}

/* Build the model from its description for the observations of slot s, and
 * load the staged parameters or the checkpoint into it.  On failure the
 * server goes on with uniform random actions and says why once. */
static void build_model(server *sv, const slot *s, int rows)
{
	seed_err err;
	int cap = rows > 2 * sv->max_batch ? rows : 2 * sv->max_batch;
	seed_model *m = NULL;
	int rc = seed_model_new(&m, sv->model_json, s->obs_dtype, s->obs_rank, s->obs_shape, s->num_actions,
	                        cap, &err);
	if (rc == 0 && sv->model) {
		rc = seed_model_copy_params(m, sv->model);
		if (rc)
			seed_err_set(&err, rc, "the new model's parameters differ from the old");
	} else if (rc == 0 && sv->staged) {
		rc = seed_model_load_params(m, sv->staged, sv->staged_len);
		if (rc)
			seed_err_set(&err, rc, "%zu bytes of parameters do not fit %s", sv->staged_len,
			             sv->model_json);
		else
			sv->policy_version = (int32_t)sv->staged_version;
	} else if (rc == 0 && sv->ckpt) {
		rc = seed_checkpoint_load_model(sv->ckpt, m, &err);
		if (rc == 0)
			sv->policy_version = (int32_t)sv->ckpt->policy_version;
	}
	if (rc) {
		cli_warn("cannot build the model (%s); acting at random until parameters fit", err.msg);
		seed_model_free(&m);
		free(sv->model_json);
		sv->model_json = NULL;
		return;
	}
	seed_model_free(&sv->model);
	sv->model = m;
	sv->model_cap = cap;
	free(sv->staged);
	sv->staged = NULL;
}

/* Take the newest parameters from the learner, if any came. */
static void poll_params(server *sv)
{
	seed_frame f = {0};
	seed_chan_msg m;
	seed_err err;
	bool got = false;
	/* Drain: only the newest parameters matter. */
	while (seed_chan_recv(sv->params, &m, 0, &err) == 0) {
		if (seed_frame_decode(&f, m.data, m.len, &err) != 0 || f.type != SEED_FRAME_PARAMS) {
			report_bad(sv, f.type == SEED_FRAME_INVALID
			                   ? err.msg
			                   : "a non-params frame on the params channel");
			continue;
		}
		const char *json;
		size_t len;
		if (seed_frame_str(&f, "model", &json, &len) != 0) {
			report_bad(sv, "params frame: field 'model': missing (the server needs the model's "
			               "description)");
			continue;
		}
		int64_t version = seed_frame_int(&f, "policy_version", 0);
		const seed_tensor *p = seed_frame_tensor(&f, "params");
		if (!sv->model_json || strlen(sv->model_json) != len ||
		    memcmp(sv->model_json, json, len) != 0) {
			/* A new architecture: rebuild at the next batch. */
			free(sv->model_json);
			sv->model_json = strndup(json, len);
			seed_model_free(&sv->model);
		}
		if (sv->model && seed_model_load_params(sv->model, p->data, seed_tensor_nbytes(p)) == 0) {
			sv->policy_version = (int32_t)version;
		} else {
			seed_model_free(&sv->model);
			free(sv->staged);
			sv->staged_len = seed_tensor_nbytes(p);
			sv->staged = seed_xmalloc(sv->staged_len);
			memcpy(sv->staged, p->data, sv->staged_len);
			sv->staged_version = version;
		}
		got = true;
	}
	(void)got;
	seed_frame_clear(&f);
}

static void grow_rows(server *sv, size_t rows, int A)
{
	if (rows * (size_t)A <= sv->cap_rows && rows <= sv->cap_rows)
		return;
	sv->cap_rows = 2 * rows * (size_t)A;
	sv->logits = seed_xrealloc(sv->logits, sv->cap_rows * sizeof(float));
	sv->values = seed_xrealloc(sv->values, sv->cap_rows * sizeof(float));
	sv->actions = seed_xrealloc(sv->actions, sv->cap_rows * sizeof(int32_t));
}

/* The batch through the model: logits, values, actions for every row, and
 * the values of the truncated envs' final observations.  false when there is
 * no usable model (then the caller acts at random). */
static bool model_act(server *sv)
{
	const slot *s0 = sv->pend[0].s;
	if (!sv->model && sv->model_json)
		build_model(sv, s0, (int)sv->rows);
	if (!sv->model)
		return false;
	for (int i = 0; i < sv->npend; i++) {
		const slot *s = sv->pend[i].s;
		if (s->obs_bytes != seed_model_obs_bytes(sv->model) ||
		    s->num_actions != seed_model_num_actions(sv->model)) {
			/* Mixed environments: the model fits only some of the batch. */
			if (!sv->warned_mismatch++)
				cli_warn("actor %" PRId64 "'s observations or actions do not fit the model; "
				         "acting at random for batches that hold them",
				         s->actor);
			return false;
		}
	}
	if (sv->rows > sv->model_cap || sv->nfinal > sv->model_cap)
		build_model(sv, s0, (int)(sv->rows > sv->nfinal ? sv->rows : sv->nfinal));
	if (!sv->model)
		return false;
	int A = seed_model_num_actions(sv->model);
	int rows = (int)sv->rows;
	grow_rows(sv, (size_t)(rows > sv->nfinal ? rows : sv->nfinal), A);
	seed_model_forward(sv->model, rows, sv->batch_obs, sv->logits, sv->values);
	if (sv->greedy)
		seed_policy_argmax(rows, A, sv->logits, sv->actions);
	else
		seed_policy_sample(rows, A, sv->logits, &sv->rng, sv->actions);
	if (sv->nfinal) {
		float *scratch = seed_xmalloc((size_t)sv->nfinal * (size_t)A * sizeof(float));
		seed_model_forward(sv->model, sv->nfinal, sv->final_obs, scratch, sv->final_values);
		free(scratch);
		for (int k = 0; k < sv->nfinal; k++) {
			slot *s = sv->pend[sv->final_req[k]].s;
			size_t at = (size_t)sv->final_b[k] * (size_t)sv->T1 + (size_t)s->pos;
			s->final_value[at] = sv->final_values[k];
		}
	}
	return true;
}

/* Choose actions for every pending request, answer them, extend unrolls. */
static void run_batch(server *sv)
{
	sv->batches++;
	sv->rows_sum += sv->rows;
	if (sv->params)
		poll_params(sv);
	bool modeled = sv->use_model && model_act(sv);
	int32_t version = modeled ? sv->policy_version : 0; /* uniform play before parameters come */
	for (int i = 0; i < sv->npend; i++) {
		pending *p = &sv->pend[i];
		slot *s = p->s;
		int A = s->num_actions;
		if (modeled)
			memcpy(s->reply_actions, sv->actions + p->row0, (size_t)s->count * sizeof(int32_t));
		else
			for (int b = 0; b < s->count; b++)
				s->reply_actions[b] = (int32_t)seed_rng_below(&sv->rng, (uint32_t)A);
		int64_t K = s->count;
		seed_frame f;
		seed_frame_init(&f, SEED_FRAME_ACTION);
		seed_frame_set_int(&f, "run", s->run);
		seed_frame_set_int(&f, "actor", s->actor);
		seed_frame_set_int(&f, "seq", s->last_seq);
		seed_frame_set_int(&f, "env0", s->env0);
		seed_frame_set_int(&f, "policy_version", version);
		seed_frame_set_tensor(&f, "action",
		                      seed_tensor_view(s->reply_actions, SEED_DTYPE_I32, 1, &K));
		seed_buf_reset(&s->reply);
		seed_err err;
		if (seed_frame_encode(&f, &s->reply, &err))
			cli_die("encoding an action frame: %s", err.msg);
		int rc = seed_chan_send(sv->actors, p->id, p->idlen, s->reply.data, s->reply.len, true);
		if (rc && rc != -EHOSTUNREACH && rc != -EAGAIN)
			cli_warn("answering actor %" PRId64 ": %s", s->actor, seed_strerror(rc));
		sv->steps += s->count;
		if (!sv->unrolls)
			continue;
		for (int b = 0; b < s->count; b++) {
			size_t at = (size_t)b * (size_t)sv->T1 + (size_t)s->pos;
			s->action[at] = s->reply_actions[b];
			s->version[at] = version;
			if (modeled) /* the behaviour logits, for V-trace's importance weights */
				memcpy(s->logits + at * (size_t)A,
				       sv->logits + (size_t)(p->row0 + b) * (size_t)A,
				       (size_t)A * sizeof(float));
			else /* the uniform policy's logits are all equal: zeros */
				memset(s->logits + at * (size_t)A, 0, (size_t)A * sizeof(float));
		}
		if (++s->pos == sv->T1)
			send_unroll(sv, s);
	}
	sv->npend = 0;
	sv->rows = 0;
	sv->nfinal = 0;
}

/* Whether every actor half the server knows is waiting in the batch: then
 * nothing more can come before the batch is answered, and waiting out the
 * timeout would only stall everyone. */
static bool all_waiting(const server *sv)
{
	int used = 0;
	for (int i = 0; i < sv->nslots; i++)
		used += sv->slots[i]->used;
	return sv->npend >= used;
}

static void report(server *sv, double now, bool final)
{
	double dt = now - sv->last_report;
	if (dt <= 0)
		return;
	int64_t db = sv->batches - sv->last_batches;
	fprintf(stderr,
	        "%s: %s%.0f env steps/s, %.1f rows/batch, %.2f MB/s of unrolls, %" PRId64 " steps, %" PRId64
	        " unrolls, %" PRId64 " episodes, %" PRId64 " bad frames, %" PRId64 " resends, %" PRId64
	        " gaps\n",
	        cli_prog, final ? "done: " : "", (double)(sv->steps - sv->last_steps) / dt,
	        db ? (double)(sv->rows_sum - sv->last_rows_sum) / (double)db : 0.0,
	        (double)(sv->unroll_bytes - sv->last_unroll_bytes) / dt / 1e6, sv->steps, sv->unrolls_sent,
	        sv->episodes, sv->bad, sv->dups, sv->gaps);
	sv->last_report = now;
	sv->last_steps = sv->steps;
	sv->last_batches = sv->batches;
	sv->last_rows_sum = sv->rows_sum;
	sv->last_unroll_bytes = sv->unroll_bytes;
}

int main(int argc, char **argv)
{
	cli_init(argc, argv, usage);
	const char *bind = NULL, *policy = NULL, *unrolls = NULL, *model = NULL;
	bool greedy = false;
	int max_batch = 256, timeout_us = 500, T = 20, hwm = 64;
	uint64_t seed = 0;
	double stats_interval = 10, expiry = 60;
	bool quiet = false;
	int o;
	while ((o = getopt_long(argc, argv, "b:p:m:gB:t:u:T:s:qhV", options, NULL)) != -1) {
		switch (o) {
		case 'b':
			bind = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'm':
			model = optarg;
			break;
		case 'g':
			greedy = true;
			break;
		case 'B':
			max_batch = (int)cli_int("--max-batch", optarg, 1, 1 << 24);
			break;
		case 't':
			timeout_us = (int)cli_int("--timeout-us", optarg, 0, 60000000);
			break;
		case 'u':
			unrolls = optarg;
			break;
		case 'T':
			T = (int)cli_int("--unroll-length", optarg, 1, 100000);
			break;
		case OPT_HWM:
			hwm = (int)cli_int("--hwm", optarg, 1, 1 << 20);
			break;
		case 's':
			seed = cli_u64("--seed", optarg);
			break;
		case OPT_STATS:
			stats_interval = cli_double("--stats-interval", optarg, 0, 1e9);
			break;
		case OPT_EXPIRY:
			expiry = cli_double("--idle-expiry", optarg, 0.001, 1e9);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			cli_help(help);
		case 'V':
			cli_version();
		default:
			cli_usage_error("unknown option");
		}
	}
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!bind)
		cli_usage_error("--bind is required");
	if (!policy == !model)
		cli_usage_error("give one of --policy random and --model SOURCE");
	if (policy && strcmp(policy, "random") != 0)
		cli_usage_error("--policy: unknown policy '%s' (known: random; or use --model)", policy);
	cli_catch_signals();

	server sv = {0};
	sv.T1 = T + 1;
	sv.max_batch = max_batch;
	sv.timeout_us = timeout_us;
	sv.idle_expiry = expiry;
	seed_rng_init(&sv.rng, seed, 0x1f3);
	seed_buf_init(&sv.out);
	void *ctx = seed_chan_context();
	if (!ctx)
		cli_die("cannot create a ZeroMQ context");
	seed_err err;
	seed_chan_opts aopts = {.bind = true, .hwm = 0, .stop = &cli_stop};
	if (seed_chan_open(&sv.actors, ctx, SEED_CHAN_ROUTER, bind, &aopts, &err))
		cli_die("%s", err.msg);
	sv.use_model = model != NULL;
	sv.greedy = greedy;
	if (model && (strstr(model, "://") || model[0] == '@' || model[0] == '>')) {
		seed_chan_opts popts = {.bind = false, .conflate = 1, .stop = &cli_stop};
		if (seed_chan_open(&sv.params, ctx, SEED_CHAN_SUB, model, &popts, &err))
			cli_die("--model: %s", err.msg);
	} else if (model) {
		if (seed_checkpoint_load(model, &sv.ckpt, &err))
			cli_die("--model: %s", err.msg);
		if (!sv.ckpt->model)
			cli_die("--model %s: the checkpoint does not describe its model", model);
		sv.model_json = json_dumps(sv.ckpt->model, JSON_COMPACT);
	}
	if (unrolls) {
		seed_chan_opts uopts = {.bind = true, .hwm = hwm, .stop = &cli_stop};
		if (seed_chan_open(&sv.unrolls, ctx, SEED_CHAN_PUSH, unrolls, &uopts, &err))
			cli_die("%s", err.msg);
	}

	double start = cli_now();
	sv.last_report = start;
	seed_frame f = {0};
	double deadline = 0;
	while (!cli_stop) {
		double now = cli_now();
		int wait_ms;
		if (sv.npend == 0)
			wait_ms = 100;
		else
			wait_ms = deadline > now ? (int)ceil((deadline - now) * 1e3) : 0;
		seed_chan_msg m;
		int rc = seed_chan_recv(sv.actors, &m, sv.npend ? 0 : wait_ms, &err);
		now = cli_now();
		if (rc == 0) {
			bool first = sv.npend == 0;
			take_request(&sv, &m, &f, now);
			if (first && sv.npend)
				deadline = now + sv.timeout_us * 1e-6;
		} else if (rc != -EAGAIN && rc != -EINTR) {
			report_bad(&sv, err.msg);
		}
		if (sv.npend && (sv.rows >= sv.max_batch || now >= deadline || all_waiting(&sv))) {
			run_batch(&sv);
		} else if (sv.npend && rc == -EAGAIN) {
			/* Nothing more has arrived: wait for more, at most until the deadline. */
			zmq_pollitem_t it = {.socket = seed_chan_socket(sv.actors), .events = ZMQ_POLLIN};
			long us = (long)((deadline - now) * 1e6);
			if (us > 0)
				zmq_poll(&it, 1, us >= 1000 ? us / 1000 : 1);
			if (cli_now() >= deadline && !(it.revents & ZMQ_POLLIN))
				run_batch(&sv);
		}
		if (!quiet && stats_interval > 0 && now - sv.last_report >= stats_interval)
			report(&sv, now, false);
	}
	seed_frame_clear(&f);
	if (!quiet) {
		sv.last_report = start;
		sv.last_steps = sv.last_batches = sv.last_rows_sum = sv.last_unroll_bytes = 0;
		report(&sv, cli_now(), true);
	}
	for (int i = 0; i < sv.nslots; i++) {
		slot_free(sv.slots[i]);
		free(sv.slots[i]);
	}
	free(sv.slots);
	free(sv.pend);
	free(sv.batch_obs);
	seed_buf_free(&sv.out);
	seed_chan_close(&sv.unrolls);
	seed_chan_close(&sv.actors);
	seed_chan_close(&sv.params);
	seed_checkpoint_free(&sv.ckpt);
	seed_model_free(&sv.model);
	free(sv.model_json);
	free(sv.staged);
	free(sv.logits);
	free(sv.values);
	free(sv.final_values);
	free(sv.actions);
	free(sv.final_obs);
	free(sv.final_req);
	free(sv.final_b);
	seed_chan_context_free(&ctx);
	return 0;
}
