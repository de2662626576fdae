/* test_serve.c: seed_serve over inproc:// channels, a table of requests and
 * the answer each must get (actions, the kept answer again, error frames
 * with the refused frame's type), then unroll assembly end to end: the
 * frames pushed for a half, their overlap and their identity.  The wanted
 * values follow from the protocol (seed-frames(7)), worked out below.
 * Last, that a step request allocates nothing once the buffers have grown:
 * the test counts this thread's malloc/calloc/realloc calls (glibc: its
 * own definitions forward to __libc_*), as tests/unit/proto/test_frame_decoder.c
 * does, but per thread, so that ZeroMQ's I/O threads do not count.
 * The phases' seconds (seed_serve_stats.time): each within the wall time
 * the test took, and a push that waits for room counted as blocked, for at
 * least the time a slow consumer made it wait.  Pushes that fail: counted,
 * not counted as pushed, and warned about at most once per interval.  A
 * checkpoint's model and parameters (seed_serve_checkpoint). */
#include "seed/serve.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "seed/buf.h"
#include "seed/checkpoint.h"
#include "seed/clock.h"
#include "seed/frame.h"
#include "seed/nn.h"
#include "seed/rng.h"
#include "alloc_count.h"
#include "tap.h"
#include "tmpdir.h"

struct rig {
	void *ctx;
	seed_chan *router, *dealer, *push, *pull;
	seed_serve *s;
};

/* A rig whose server acts greedily with a model (given by
 * seed_serve_policy), with unrolls of T transitions overlapping by
 * overlap steps. */
static void rig_open_model(struct rig *r, const char *name, int T, int overlap);

/* Options a test sets beyond the rig's (NULL: none). */
static void (*rig_tweak)(seed_serve_opts *o);

static void rig_open_opts(struct rig *r, const char *name, bool unrolls, int T, bool model, int overlap)
{
	memset(r, 0, sizeof *r);
	r->ctx = seed_chan_context();
	seed_err err;
	char ep[64], up[64];
	snprintf(ep, sizeof ep, "inproc://%s", name);
	snprintf(up, sizeof up, "inproc://%s-unrolls", name);
	seed_chan_opts bind = {.bind = true}, conn = {.bind = false};
	CHECK(seed_chan_open(&r->router, r->ctx, SEED_CHAN_ROUTER, ep, &bind, &err) == 0);
	CHECK(seed_chan_open(&r->dealer, r->ctx, SEED_CHAN_DEALER, ep, &conn, &err) == 0);
	if (unrolls) {
		CHECK(seed_chan_open(&r->push, r->ctx, SEED_CHAN_PUSH, up, &bind, &err) == 0);
		CHECK(seed_chan_open(&r->pull, r->ctx, SEED_CHAN_PULL, up, &conn, &err) == 0);
	}
	seed_serve_opts o = {.max_batch = 64,
	                     .timeout = 0.05,
	                     .T = T,
	                     .idle_expiry = 60,
	                     .max_halves = 16,
	                     .max_bytes = 1 << 20,
	                     .max_envs = 8,
	                     .max_actions = 16,
	                     .max_row_bytes = 64,
	                     .model = model,
	                     .greedy = model,
	                     .overlap = overlap};
	if (rig_tweak)
		rig_tweak(&o);
	CHECK_MSG(seed_serve_new(&r->s, &o, r->router, r->push, NULL, &err) == 0, "%s", err.msg);
}

static void rig_open(struct rig *r, const char *name, bool unrolls, int T)
{
	rig_open_opts(r, name, unrolls, T, false, 1);
}

static void rig_open_model(struct rig *r, const char *name, int T, int overlap)
{
	rig_open_opts(r, name, true, T, true, overlap);
}

static void rig_close(struct rig *r)
{
	seed_serve_free(&r->s);
	CHECK(r->s == NULL);
	seed_chan_close(&r->dealer);
	seed_chan_close(&r->router);
	seed_chan_close(&r->pull);
	seed_chan_close(&r->push);
	seed_chan_context_free(&r->ctx);
}

/* When not NULL, step() writes a Box space of A actions with these bounds. */
static const float *step_low, *step_high;
/* When above 0, step() writes this frame_skip. */
static int step_skip;

/* A step frame of K rows of 2 f32 observations (all x), rewards 0.5,
 * terminated at row `term` (-1: none), encoded into out. */
static void step(seed_buf *out, uint32_t actor, int64_t seq, int64_t env0, int K, int A, float x, int term)
{
	/* K up to 15: one past the bound of 8 is refused, but built first. */
	static float obs[32], rew[16], ret[16];
	static uint8_t te[16], tr[16];
	static int32_t len[16];
	for (int i = 0; i < 2 * K; i++)
		obs[i] = x;
	for (int k = 0; k < K; k++) {
		rew[k] = 0.5f;
		te[k] = k == term;
		tr[k] = 0;
		ret[k] = 3.0f;
		len[k] = 6;
	}
	int64_t os[2] = {K, 2}, ks = K;
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_STEP);
	seed_frame_set_int(&f, "run", 7);
	seed_frame_set_int(&f, "actor", actor);
	seed_frame_set_int(&f, "seq", seq);
	seed_frame_set_int(&f, "env0", env0);
	seed_frame_set_int(&f, "num_actions", A);
	int64_t as = A;
	if (step_low) {
		seed_frame_set_tensor(&f, "action_low",
		                      seed_tensor_view((void *)step_low, SEED_DTYPE_F32, 1, &as));
		seed_frame_set_tensor(&f, "action_high",
		                      seed_tensor_view((void *)step_high, SEED_DTYPE_F32, 1, &as));
	}
	seed_frame_set_tensor(&f, "obs", seed_tensor_view(obs, SEED_DTYPE_F32, 2, os));
	seed_frame_set_tensor(&f, "reward", seed_tensor_view(rew, SEED_DTYPE_F32, 1, &ks));
	seed_frame_set_tensor(&f, "terminated", seed_tensor_view(te, SEED_DTYPE_U8, 1, &ks));
	seed_frame_set_tensor(&f, "truncated", seed_tensor_view(tr, SEED_DTYPE_U8, 1, &ks));
	seed_frame_set_tensor(&f, "ep_return", seed_tensor_view(ret, SEED_DTYPE_F32, 1, &ks));
	seed_frame_set_tensor(&f, "ep_length", seed_tensor_view(len, SEED_DTYPE_I32, 1, &ks));
	if (step_skip > 0)
		seed_frame_set_int(&f, "frame_skip", step_skip);
	seed_buf_reset(out);
	seed_err err;
	CHECK_MSG(seed_frame_encode(&f, out, &err) == 0, "%s", err.msg);
}

/* Send out's bytes from the dealer and turn the service until an answer
 * comes (1 s at most); the answer's bytes go to got.  false if none. */
static bool ask(struct rig *r, const seed_buf *out, seed_buf *got)
{
	seed_chan_send(r->dealer, NULL, 0, out->data, out->len, false);
	for (int i = 0; i < 200; i++) {
		seed_serve_turn(r->s, 5);
		seed_chan_msg m;
		seed_err err;
		if (seed_chan_recv(r->dealer, &m, 0, &err) == 0) {
			seed_buf_reset(got);
			seed_buf_append(got, m.data, m.len);
			return true;
		}
	}
	return false;
}

enum want { W_ACTION, W_SAME, W_ERROR };

/* Requests of one half (actor 1, env0 0) and others, in order. */
static const struct {
	const char *name;
	uint32_t actor;
	int64_t seq, env0;
	int K, A;
	enum want want;
	const char *msg; /* a part of the error's message */
} cases[] = {
    {"first step", 1, 0, 0, 2, 3, W_ACTION, NULL},
    {"the next step", 1, 1, 0, 2, 3, W_ACTION, NULL},
    {"the same seq again: the kept answer", 1, 1, 0, 2, 3, W_SAME, NULL},
    {"K past the bound of 8", 1, 2, 0, 9, 3, W_ERROR, "9 environments"},
    {"num_actions past the bound of 16", 1, 2, 0, 2, 17, W_ERROR, "17 actions"},
    {"another half of the same actor", 1, 0, 2, 2, 3, W_ACTION, NULL},
    {"another K for the half: remade", 1, 5, 0, 3, 3, W_ACTION, NULL},
};

static void t_requests(void)
{
	struct rig r;
	rig_open(&r, "requests", false, 2);
	seed_buf out, got, last;
	seed_buf_init(&out);
	seed_buf_init(&got);
	seed_buf_init(&last);
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		step(&out, cases[k].actor, cases[k].seq, cases[k].env0, cases[k].K, cases[k].A, 0, -1);
		if (!ask(&r, &out, &got)) {
			CHECK_MSG(0, "%s: no answer", cases[k].name);
			continue;
		}
		seed_frame f;
		seed_err err;
		CHECK_MSG(seed_frame_decode(&f, got.data, got.len, &err) == 0, "%s: %s", cases[k].name,
		          err.msg);
		if (cases[k].want == W_ERROR) {
			const char *msg, *type;
			size_t ml, tl;
			CHECK_MSG(f.type == SEED_FRAME_ERROR, "%s: a %s frame", cases[k].name,
			          seed_frame_type_name(f.type));
			CHECK(seed_frame_str(&f, "message", &msg, &ml) == 0 &&
			      seed_frame_str(&f, "frame", &type, &tl) == 0);
			CHECK_MSG(memmem(msg, ml, cases[k].msg, strlen(cases[k].msg)) != NULL, "%s: %.*s",
			          cases[k].name, (int)ml, msg);
			CHECK(tl == 4 && memcmp(type, "step", 4) == 0);
			continue;
		}
		CHECK_MSG(f.type == SEED_FRAME_ACTION, "%s: a %s frame", cases[k].name,
		          seed_frame_type_name(f.type));
		const seed_tensor *a = seed_frame_tensor(&f, "action");
		CHECK(a && a->shape[0] == cases[k].K);
		for (int i = 0; a && i < cases[k].K; i++) {
			int32_t v;
			memcpy(&v, (const uint8_t *)a->data + 4 * i, 4);
			CHECK_MSG(v >= 0 && v < cases[k].A, "%s: action %d", cases[k].name, v);
		}
		CHECK(seed_frame_int(&f, "seq", -1) == cases[k].seq &&
		      seed_frame_int(&f, "env0", -1) == cases[k].env0 &&
		      seed_frame_int(&f, "policy_version", -1) == 0 && seed_frame_int(&f, "run", -1) == 7);
		if (cases[k].want == W_SAME)
			CHECK_MSG(got.len == last.len && memcmp(got.data, last.data, got.len) == 0, "%s",
			          cases[k].name);
		seed_buf_reset(&last);
		seed_buf_append(&last, got.data, got.len);
	}
	/* Not a step frame: refused, its type named. */
	seed_frame e;
	seed_frame_init(&e, SEED_FRAME_ERROR);
	seed_frame_set_int(&e, "code", -1);
	seed_frame_set_str(&e, "message", "hello");
	seed_buf_reset(&out);
	seed_frame_encode(&e, &out, NULL);
	CHECK(ask(&r, &out, &got));
	seed_frame f;
	CHECK(seed_frame_decode(&f, got.data, got.len, NULL) == 0 && f.type == SEED_FRAME_ERROR);
	const char *type;
	size_t tl;
	CHECK(seed_frame_str(&f, "frame", &type, &tl) == 0 && tl == 5 && memcmp(type, "error", 5) == 0);
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	/* 4 answered steps of 2, 2, 2, 3 rows; one resend; three refusals. */
	CHECK_MSG(st->steps == 9 && st->resends == 1 && st->bad == 3, "steps %lld resends %lld bad %lld",
	          (long long)st->steps, (long long)st->resends, (long long)st->bad);
	seed_buf_free(&out);
	seed_buf_free(&got);
	seed_buf_free(&last);
	rig_close(&r);
}

/* T 2: steps 0..4 of one half of 2 envs make two unrolls of 3 steps, the
 * second starting with the first's last step (seq 2), and one episode frame
 * for the termination at seq 3, row 1, just before that second unroll (the
 * one holding seq 3).  A gap (seq 7 after 4) drops the step in progress:
 * seq 7, 8 do not complete an unroll, and the episode that row 0 ends at
 * seq 8 waits for the next unroll: seed_serve_flush pushes it. */
static void t_unrolls(void)
{
	struct rig r;
	rig_open(&r, "unrolls", true, 2);
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	const int64_t seqs[] = {0, 1, 2, 3, 4, 7, 8};
	const int term[] = {-1, -1, -1, 1, -1, -1, 0};
	for (int i = 0; i < 7; i++) {
		step(&out, 4, seqs[i], 6, 2, 3, (float)seqs[i], term[i]);
		CHECK(ask(&r, &out, &got));
	}
	int unrolls = 0, episodes = 0;
	char order[8] = "";
	seed_chan_msg m;
	seed_err err;
	while (seed_chan_recv(r.pull, &m, 200, &err) == 0 && strlen(order) < 7) {
		seed_frame f;
		CHECK(seed_frame_decode(&f, m.data, m.len, &err) == 0);
		if (f.type == SEED_FRAME_EPISODE) {
			strcat(order, "e");
			episodes++;
			const seed_tensor *env = seed_frame_tensor(&f, "env");
			int32_t e;
			memcpy(&e, env->data, 4);
			CHECK(env->shape[0] == 1 && e == 7 && seed_frame_int(&f, "actor", -1) == 4);
			continue;
		}
		strcat(order, "u");
		CHECK(f.type == SEED_FRAME_UNROLL);
		const seed_tensor *obs = seed_frame_tensor(&f, "obs"), *env = seed_frame_tensor(&f, "env");
		CHECK(obs->shape[0] == 2 && obs->shape[1] == 3);
		int32_t e[2];
		memcpy(e, env->data, 8);
		CHECK(e[0] == 6 && e[1] == 7);
		/* Step 0 of unroll n is seq 2n: obs (2n, 2n) in both rows. */
		float o0;
		memcpy(&o0, obs->data, 4);
		CHECK_MSG(o0 == 2.0f * (float)unrolls, "unroll %d starts at obs %g", unrolls, o0);
		const uint8_t *te = seed_frame_tensor(&f, "terminated")->data;
		/* row 1, step 1 of the second unroll is seq 3: terminated */
		CHECK(te[1 * 3 + 1] == (unrolls == 1));
		unrolls++;
	}
	CHECK_MSG(unrolls == 2 && episodes == 1, "%d unrolls, %d episodes", unrolls, episodes);
	CHECK_MSG(strcmp(order, "ueu") == 0, "frames in the order %s, want ueu", order);
	CHECK(seed_serve_get_stats(r.s)->gaps == 1 && seed_serve_get_stats(r.s)->episodes == 1);
	/* The episode of seq 8 comes out with the flush, and only once. */
	CHECK(seed_serve_flush(r.s) == 0);
	CHECK(seed_serve_flush(r.s) == 0);
	int flushed = 0;
	while (seed_chan_recv(r.pull, &m, 200, &err) == 0) {
		seed_frame f;
		CHECK(seed_frame_decode(&f, m.data, m.len, &err) == 0 && f.type == SEED_FRAME_EPISODE);
		const seed_tensor *env = seed_frame_tensor(&f, "env");
		int32_t e;
		memcpy(&e, env->data, 4);
		CHECK(env->shape[0] == 1 && e == 6);
		flushed++;
	}
	CHECK_MSG(flushed == 1, "%d episode frames flushed, want 1", flushed);
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
}

/* The frame skip of a half's step frames goes on to its unroll and episode
 * frames; a half without one sends frames without the field (frame skip 1,
 * as before it existed).  A half whose frame skip changes is remade: its
 * unroll in progress is dropped, so no unroll mixes steps of two skips.
 * T 2: an unroll after seqs 2 and 4 (steps 0-2, 2-4), the episode of row 1
 * ending at seq 3 before the second; then seqs 5-7 without the field make
 * one unroll starting at seq 5, not 4. */
static void t_frame_skip(void)
{
	struct rig r;
	rig_open(&r, "skip", true, 2);
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	for (int seq = 0; seq < 8; seq++) {
		step_skip = seq < 5 ? 4 : 0;
		step(&out, 4, seq, 0, 2, 3, (float)seq, seq == 3 ? 1 : -1);
		CHECK(ask(&r, &out, &got));
	}
	step_skip = 0;
	char order[8] = "";
	seed_chan_msg m;
	seed_err err;
	while (strlen(order) < 4 && seed_chan_recv(r.pull, &m, 200, &err) == 0) {
		seed_frame f;
		CHECK(seed_frame_decode(&f, m.data, m.len, &err) == 0);
		int64_t skip = seed_frame_int(&f, "frame_skip", -1);
		if (f.type == SEED_FRAME_EPISODE) {
			strcat(order, "e");
			CHECK_MSG(skip == 4, "episode frame: frame_skip %lld", (long long)skip);
			continue;
		}
		CHECK(f.type == SEED_FRAME_UNROLL);
		strcat(order, "u");
		float o0;
		memcpy(&o0, seed_frame_tensor(&f, "obs")->data, 4);
		if (strlen(order) < 4) { /* seqs 0-2 and 2-4: frame skip 4 */
			CHECK_MSG(skip == 4, "unroll frame %zu: frame_skip %lld", strlen(order),
			          (long long)skip);
			CHECK(o0 == (strlen(order) == 1 ? 0.0f : 2.0f));
		} else { /* seqs 5-7: no field */
			CHECK_MSG(skip == -1, "last unroll frame: frame_skip %lld", (long long)skip);
			CHECK_MSG(o0 == 5.0f, "the last unroll starts at obs %g, want 5", (double)o0);
		}
	}
	CHECK_MSG(strcmp(order, "ueuu") == 0, "frames in the order %s, want ueuu", order);
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
}

/* Recurrent state held by the server: two halves of 2 environments step
 * 7 times each, interleaved, one row of each ending an episode on the way.
 * The reference steps a copy of the model itself (seed_model_forward_seq,
 * T = 1, carrying each environment's state, previous reward and action,
 * resetting at an episode's first step), so every answer must be its
 * greedy action, and every unroll (T 2, overlap 2: 4 steps, the next
 * starting at the previous one's third) must carry the state and the
 * previous action before its step 0 and the logits of each step. */
static void t_recurrent_state(void)
{
	enum { K = 2, A = 3, N = 7, S = 4, HALVES = 2 };
	const char *json = "{\"torso\": [], \"core\": {\"type\": \"lstm\", \"units\": 2, "
	                   "\"prev_reward\": true, \"prev_action\": true}}";
	seed_model *m = NULL;
	seed_err err;
	CHECK_MSG(seed_model_new(&m, json, SEED_DTYPE_F32, 1, (int64_t[]){2}, A, K, &err) == 0, "%s",
	          err.msg);
	CHECK(seed_model_state_floats(m) == S);
	seed_rng rng;
	seed_rng_init(&rng, 3, 0);
	seed_model_init(m, &rng);
	struct rig r;
	rig_open_model(&r, "recurrent", 2, 2);
	CHECK(seed_serve_policy(r.s, json, strlen(json), seed_model_params(m), 4 * seed_model_num_params(m),
	                        5) == 0);
	/* The reference: per half, the state before each step (pre-reset),
	 * the previous actions, the logits. */
	float state[HALVES][K][S] = {{{0}}}, before[HALVES][N][K][S], logits[HALVES][N][K][A];
	int32_t prev[HALVES][K] = {{-1, -1}, {-1, -1}}, prev_at[HALVES][N][K];
	const int term[HALVES][N] = {{-1, -1, 1, -1, -1, -1, -1}, {-1, -1, -1, 0, -1, -1, -1}};
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	int mismatches = 0;
	for (int n = 0; n < N; n++)
		for (int half = 0; half < HALVES; half++) {
			float x = 0.25f * (float)n - 0.6f * (float)half;
			step(&out, 9, n, 2 * half, K, A, x, term[half][n]);
			CHECK(ask(&r, &out, &got));
			seed_frame f;
			CHECK(seed_frame_decode(&f, got.data, got.len, &err) == 0 &&
			      f.type == SEED_FRAME_ACTION);
			const int32_t *act = seed_frame_tensor(&f, "action")->data;
			float obs[K][2] = {{x, x}, {x, x}}, rew[K] = {0.5f, 0.5f}, out_state[K][S];
			uint8_t reset[K];
			for (int k = 0; k < K; k++)
				reset[k] = k == term[half][n];
			memcpy(before[half][n], state[half], sizeof state[half]);
			memcpy(prev_at[half][n], prev[half], sizeof prev[half]);
			seed_model_seq q = {.T = 1,
			                    .B = K,
			                    .obs = obs,
			                    .prev_reward = rew,
			                    .prev_action = prev[half],
			                    .reset = reset,
			                    .state0 = &state[half][0][0],
			                    .state_out = &out_state[0][0]};
			CHECK(seed_model_forward_seq(m, &q, &logits[half][n][0][0], NULL) == 0);
			memcpy(state[half], out_state, sizeof out_state);
			for (int k = 0; k < K; k++) {
				int32_t greedy = 0;
				for (int a = 1; a < A; a++)
					if (logits[half][n][k][a] > logits[half][n][k][greedy])
						greedy = a;
				mismatches += act[k] != greedy;
				prev[half][k] = act[k];
			}
		}
	CHECK_MSG(mismatches == 0, "%d actions differ from the reference's greedy ones", mismatches);
	/* Unrolls of steps 0-3 and 2-5 of each half. */
	int unrolls = 0, count[HALVES] = {0};
	double worst = 0;
	seed_chan_msg msg;
	while (seed_chan_recv(r.pull, &msg, 200, &err) == 0) {
		seed_frame f;
		CHECK(seed_frame_decode(&f, msg.data, msg.len, &err) == 0);
		if (f.type != SEED_FRAME_UNROLL)
			continue;
		const seed_tensor *st = seed_frame_tensor(&f, "state"),
		                  *pa = seed_frame_tensor(&f, "prev_action"),
		                  *lg = seed_frame_tensor(&f, "logits"), *env = seed_frame_tensor(&f, "env");
		CHECK(st && pa && st->shape[0] == K && st->shape[1] == S && lg->shape[1] == 4);
		if (!st || !pa)
			break;
		int32_t e0;
		memcpy(&e0, env->data, 4);
		/* Which unroll of this half: the first starts at step 0. */
		int half = e0 / 2, t0 = 2 * count[half]++;
		for (int k = 0; k < K; k++) {
			int32_t p;
			memcpy(&p, (const int32_t *)pa->data + k, 4);
			mismatches += p != prev_at[half][t0][k];
			for (int j = 0; j < S; j++) {
				float v;
				memcpy(&v, (const float *)st->data + k * S + j, 4);
				worst = fmax(worst, fabs(v - before[half][t0][k][j]));
			}
			for (int t = 0; t < 4; t++)
				for (int a = 0; a < A; a++) {
					float v;
					memcpy(&v,
					       (const float *)lg->data + ((size_t)k * 4 + (size_t)t) * A +
					           (size_t)a,
					       4);
					worst = fmax(worst, fabs(v - logits[half][t0 + t][k][a]));
				}
		}
		unrolls++;
	}
	CHECK_MSG(unrolls == 4, "%d unroll frames, want 4", unrolls);
	CHECK_MSG(mismatches == 0 && worst < 1e-6, "%d previous actions differ, largest difference %g",
	          mismatches, worst);
	/* The state mattered: step 3's state of half 0 row 0 is not zero. */
	CHECK(fabs(before[0][3][0][0]) > 1e-3);
	CHECK(seed_serve_get_stats(r.s)->bad == 0 && seed_serve_get_stats(r.s)->refused == 0);
	seed_model_free(&m);
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
}

/* ---- Q models ---------------------------------------------------------- */

/* A dueling model of A actions on 2 inputs, no torso, every parameter 0
 * but value.bias = 3: every Q value is 3 (V + Adv - mean Adv = 3 + 0), so
 * the greedy action is 0 (ties go to the lowest index). */
static const char q_json[] = "{\"torso\": [], \"head\": \"dueling\"}";

static void q_policy(struct rig *r, int A)
{
	seed_model *m = NULL;
	seed_err err;
	CHECK_MSG(seed_model_new(&m, q_json, SEED_DTYPE_F32, 1, (int64_t[]){2}, A, 1, &err) == 0, "%s",
	          err.msg);
	const seed_model_param *vb = seed_model_param_find(m, "value.bias");
	CHECK(vb != NULL);
	seed_model_params(m)[vb->offset] = 3.0f;
	CHECK(seed_serve_policy(r->s, q_json, strlen(q_json), seed_model_params(m),
	                        4 * seed_model_num_params(m), 2) == 0);
	seed_model_free(&m);
}

static void tweak_priorities(seed_serve_opts *o)
{
	o->greedy = false;
	o->epsilon = 0;
	o->n_step = 1;
	o->discount = 0.5;
	o->rescale_eps = 0;
	o->eta = 0.9;
}

/* First priorities, worked by hand: Q = 3 everywhere, actions 0, rewards
 * 0.5 at every step, n-step 1, discount 0.5, no rescaling epsilon (h(x) =
 * sign(x) (sqrt(|x| + 1) - 1), h^-1(3) = 4^2 - 1 = 15), eta 0.9; unrolls of
 * T 2, overlap 1: 3 steps, 2 TD errors
 *   delta_t = h(r_{t+1} + 0.5 (1 - done_{t+1}) 15) - 3.
 * Row 1 never ends: h(8) - 3 = -1 twice, priority 1.  Row 0 terminates at
 * step 1: delta_0 = h(0.5) - 3 = sqrt(1.5) - 4 = -2.7752551286, delta_1 =
 * -1, priority 0.9 * 2.7752551286 + 0.1 * 1.8876275643 = 2.6864923722.
 * The logits field holds the Q values. */
static void t_q_priorities(void)
{
	enum { K = 2, A = 3 };
	struct rig r;
	rig_tweak = tweak_priorities;
	rig_open_model(&r, "q-priorities", 2, 1);
	rig_tweak = NULL;
	q_policy(&r, A);
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	seed_err err;
	for (int n = 0; n < 3; n++) {
		step(&out, 1, n, 0, K, A, 0.25f * (float)n, n == 1 ? 0 : -1);
		CHECK(ask(&r, &out, &got));
		seed_frame f;
		CHECK(seed_frame_decode(&f, got.data, got.len, &err) == 0 && f.type == SEED_FRAME_ACTION);
		const int32_t *act = seed_frame_tensor(&f, "action")->data;
		CHECK(act[0] == 0 && act[1] == 0);
	}
	seed_chan_msg msg;
	int unrolls = 0;
	while (seed_chan_recv(r.pull, &msg, 200, &err) == 0) {
		seed_frame f;
		CHECK(seed_frame_decode(&f, msg.data, msg.len, &err) == 0);
		if (f.type != SEED_FRAME_UNROLL)
			continue;
		unrolls++;
		const seed_tensor *p = seed_frame_tensor(&f, "priority"),
		                  *lg = seed_frame_tensor(&f, "logits");
		CHECK(p && p->dtype == SEED_DTYPE_F32 && p->rank == 1 && p->shape[0] == K);
		if (!p)
			break;
		float pr[K], q[K * 3 * A];
		memcpy(pr, p->data, sizeof pr);
		memcpy(q, lg->data, sizeof q);
		CHECK_MSG(fabs(pr[0] - 2.6864923722) < 1e-5 && fabs(pr[1] - 1.0) < 1e-6,
		          "priorities %.9g %.9g, want 2.6864923722 1", pr[0], pr[1]);
		for (int i = 0; i < K * 3 * A; i++)
			CHECK(q[i] == 3.0f);
	}
	CHECK_MSG(unrolls == 1, "%d unroll frames, want 1", unrolls);
	CHECK(seed_serve_get_stats(r.s)->bad == 0);
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
}

static void tweak_schedule(seed_serve_opts *o)
{
	tweak_priorities(o);
	o->epsilon_envs = 2;
	o->epsilon_base = 0.5;
	o->epsilon_alpha = 30;
}

/* Ape-X's schedule over 2 environments, base 0.5, alpha 30: environment 0
 * explores with epsilon 0.5, environment 1 with 0.5^31 (never, here).
 * Actor 1 steps two halves of one environment each: its environments are
 * taken to be 2 (twice the rows of the half at env0 0; env0 + rows of the
 * other), so the half at env0 0 is environment (1 * 2 + 0) mod 2 = 0 and
 * the one at env0 1 is (1 * 2 + 1) mod 2 = 1.  All Q values tie at 3
 * (greedy: action 0), and an exploring step picks one of 3 uniformly: the
 * first half's actions are not 0 a third of the time (0.5 * 2/3) and the
 * second half's always 0.  300 steps: within 5 standard errors. */
static void t_q_epsilon_schedule(void)
{
	enum { A = 3, N = 300 };
	struct rig r;
	rig_tweak = tweak_schedule;
	rig_open_opts(&r, "q-schedule", false, 2, true, 1);
	rig_tweak = NULL;
	q_policy(&r, A);
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	seed_err err;
	int off[2] = {0};
	for (int n = 0; n < N; n++)
		for (int half = 0; half < 2; half++) {
			step(&out, 1, n, half, 1, A, 0.0f, -1);
			CHECK(ask(&r, &out, &got));
			seed_frame f;
			CHECK(seed_frame_decode(&f, got.data, got.len, &err) == 0 &&
			      f.type == SEED_FRAME_ACTION);
			int32_t a;
			memcpy(&a, seed_frame_tensor(&f, "action")->data, 4);
			off[half] += a != 0;
		}
	double f0 = (double)off[0] / N, p0 = 1.0 / 3, se = sqrt(p0 * (1 - p0) / N);
	CHECK_MSG(fabs(f0 - p0) < 5 * se, "environment 0 left the greedy action %.3f of the time, want %.3f",
	          f0, p0);
	CHECK_MSG(off[1] == 0, "environment 1 left the greedy action %d times", off[1]);
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
}

/* Bad Q settings are refused by name. */
static void t_q_bad_settings(void)
{
	seed_serve_opts ok = {.max_batch = 4,
	                      .timeout = 0.01,
	                      .T = 4,
	                      .idle_expiry = 1,
	                      .max_halves = 4,
	                      .max_bytes = 1 << 20,
	                      .max_envs = 4,
	                      .max_actions = 4,
	                      .max_row_bytes = 64,
	                      .model = true,
	                      .discount = 0.99,
	                      .eta = 0.9};
	void *ctx = seed_chan_context();
	seed_chan *router = NULL, *push = NULL;
	seed_chan_opts bind = {.bind = true};
	seed_err err;
	CHECK(seed_chan_open(&router, ctx, SEED_CHAN_ROUTER, "inproc://q-bad", &bind, &err) == 0);
	CHECK(seed_chan_open(&push, ctx, SEED_CHAN_PUSH, "inproc://q-bad-u", &bind, &err) == 0);
	seed_serve *sv = NULL;
	CHECK(seed_serve_new(&sv, &ok, router, push, NULL, &err) == 0);
	seed_serve_free(&sv);
	struct {
		const char *what, *msg;
		seed_serve_opts o;
	} bad[] = {{"epsilon 1.5", "epsilon 1.5", ok},
	           {"base 2", "base 2", ok},
	           {"burn-in 4 of 5 steps", "burn-in 4", ok},
	           {"discount 1.5", "discount 1.5", ok},
	           {"eta NaN", "eta nan", ok}};
	bad[0].o.epsilon = 1.5;
	bad[1].o.epsilon_envs = 8;
	bad[1].o.epsilon_base = 2;
	bad[2].o.burn_in = 4;
	bad[3].o.discount = 1.5;
	bad[4].o.eta = NAN;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_MSG(seed_serve_new(&sv, &bad[i].o, router, push, NULL, &err) == -EINVAL && !sv, "%s",
		          bad[i].what);
		CHECK_MSG(strstr(err.msg, bad[i].msg), "%s: %s", bad[i].what, err.msg);
	}
	/* Burn-in 3 of 5 steps leaves 2: fine. */
	ok.burn_in = 3;
	CHECK(seed_serve_new(&sv, &ok, router, push, NULL, &err) == 0);
	seed_serve_free(&sv);
	seed_chan_close(&push);
	seed_chan_close(&router);
	seed_chan_context_free(&ctx);
}

/* A checkpoint's model (q_json, value.bias 3: greedy action 0) at policy
 * version 9: the service takes it, and the first request is answered by the
 * agent built from it (version 9, not the random play's 0); another one of
 * the same model (version 11) answers the next.  A checkpoint without a
 * model description is refused and stays the caller's. */
static void t_checkpoint(void)
{
	enum { A = 3 };
	char *dir = strdup(tmpdir_new()), run[4200], run2[4200], bare[4200];
	snprintf(run, sizeof run, "%s/run", dir);
	snprintf(run2, sizeof run2, "%s/run2", dir);
	snprintf(bare, sizeof bare, "%s/bare", dir);
	seed_err err;
	seed_model *m = NULL;
	CHECK_MSG(seed_model_new(&m, q_json, SEED_DTYPE_F32, 1, (int64_t[]){2}, A, 1, &err) == 0, "%s",
	          err.msg);
	float *params = seed_model_params(m);
	params[seed_model_param_find(m, "value.bias")->offset] = 3.0f;
	seed_checkpoint_tensor ts[16];
	int nt = seed_model_num_tensors(m);
	CHECK(nt <= 16);
	for (int i = 0; i < nt && i < 16; i++) {
		const seed_model_param *p = seed_model_param_at(m, i);
		ts[i] = (seed_checkpoint_tensor){
		    p->name, seed_tensor_view(params + p->offset, SEED_DTYPE_F32, p->rank, p->shape)};
	}
	json_t *desc = json_loads(q_json, 0, NULL);
	seed_checkpoint ck = {.model = desc, .policy_version = 9, .ntensors = (size_t)nt, .tensors = ts};
	CHECK_MSG(seed_checkpoint_save(run, &ck, &err) == 0, "%s", err.msg);
	ck.policy_version = 11;
	CHECK_MSG(seed_checkpoint_save(run2, &ck, &err) == 0, "%s", err.msg);
	seed_checkpoint nomodel = {.policy_version = 1};
	CHECK_MSG(seed_checkpoint_save(bare, &nomodel, &err) == 0, "%s", err.msg);
	json_decref(desc);
	seed_model_free(&m);

	struct rig r;
	rig_open_model(&r, "checkpoint", 2, 1);
	seed_checkpoint *lc = NULL;
	CHECK_MSG(seed_checkpoint_load(bare, &lc, &err) == 0, "%s", err.msg);
	CHECK(seed_serve_checkpoint(r.s, &lc, &err) == -EINVAL && lc != NULL);
	CHECK_MSG(strstr(err.msg, "does not describe its model") != NULL, "%s", err.msg);
	seed_checkpoint_free(&lc);
	CHECK_MSG(seed_checkpoint_load(run, &lc, &err) == 0, "%s", err.msg);
	CHECK(seed_serve_checkpoint(r.s, &lc, &err) == 0 && lc == NULL);
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	step(&out, 1, 0, 0, 2, A, 0.5f, -1);
	CHECK(ask(&r, &out, &got));
	seed_frame f;
	CHECK(seed_frame_decode(&f, got.data, got.len, NULL) == 0 && f.type == SEED_FRAME_ACTION);
	CHECK_MSG(seed_frame_int(&f, "policy_version", -1) == 9, "policy version %lld",
	          (long long)seed_frame_int(&f, "policy_version", -1));
	const seed_tensor *a = seed_frame_tensor(&f, "action");
	CHECK(a && a->shape[0] == 2 && ((const int32_t *)a->data)[0] == 0 &&
	      ((const int32_t *)a->data)[1] == 0);
	/* Another checkpoint of the same model: the next request's agent
	 * starts from it. */
	CHECK_MSG(seed_checkpoint_load(run2, &lc, &err) == 0, "%s", err.msg);
	CHECK(seed_serve_checkpoint(r.s, &lc, &err) == 0 && lc == NULL);
	step(&out, 1, 1, 0, 2, A, 0.5f, -1);
	CHECK(ask(&r, &out, &got));
	CHECK(seed_frame_decode(&f, got.data, got.len, NULL) == 0 && f.type == SEED_FRAME_ACTION);
	CHECK_MSG(seed_frame_int(&f, "policy_version", -1) == 11, "policy version %lld",
	          (long long)seed_frame_int(&f, "policy_version", -1));
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
	tmpdir_remove(dir);
	free(dir);
}

/* A thousand step requests of two halves, with unrolls and episodes (one
 * row ends its episode at every step), taken one by one: the taking
 * (decoding, the half's lookup, the batch, the unroll's step, the episodes
 * gathered) allocates
 * nothing.  The answers and pushes go through ZeroMQ, which allocates its
 * messages: they are not counted. */
static void t_no_allocation_per_request(void)
{
#if COUNT_ALLOCATIONS
	const char *preload = getenv("LD_PRELOAD");
	if (preload && strstr(preload, "vgpreload")) {
		printf("# under valgrind, which owns malloc: not counted\n");
		return;
	}
	struct rig r;
	rig_open(&r, "allocations", true, 4);
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	long taken = 0, answered = 0;
	for (int64_t seq = 0; seq < 1000; seq++)
		for (int half = 0; half < 2; half++) {
			step(&out, 3, seq, 4 * half, 4, 3, (float)seq, (int)(seq % 4));
			seed_chan_send(r.dealer, NULL, 0, out.data, out.len, false);
			seed_chan_msg m;
			seed_err err;
			if (seed_chan_recv(r.router, &m, 1000, &err) != 0)
				continue;
			/* The first steps grow the buffers: count from seq 10. */
			long before = alloc_count;
			alloc_counting = seq >= 10;
			seed_serve_take(r.s, &m, seed_now_s());
			alloc_counting = false;
			taken += alloc_count - before;
			seed_serve_run(r.s);
			answered += seed_chan_recv(r.dealer, &m, 1000, &err) == 0;
			while (seed_chan_recv(r.pull, &m, 0, &err) == 0)
				;
		}
	CHECK_MSG(answered == 2000, "%ld of 2000 requests answered", answered);
	CHECK_MSG(taken == 0, "%ld allocations taking 1980 step requests", taken);
	CHECK(seed_serve_get_stats(r.s)->bad == 0);
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
#else
	printf("# not glibc, or a sanitizer owns malloc: allocations not counted\n");
#endif
}

/* Where the time went, over a rig's requests: every phase within the wall
 * time, their sum too; waiting, answering and encoding took some. */
static void t_timing(void)
{
	struct rig r;
	double t0 = seed_now_s();
	rig_open(&r, "timing", true, 2);
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	for (int i = 0; i < 6; i++) {
		step(&out, 2, i, 0, 2, 3, (float)i, -1);
		CHECK(ask(&r, &out, &got));
	}
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	double wall = seed_now_s() - t0, sum = 0;
	for (int p = 0; p < SEED_PHASE_N; p++) {
		CHECK_MSG(st->time[p] >= 0 && st->time[p] <= wall, "%s %g s of %g", seed_phase_name(p),
		          st->time[p], wall);
		sum += st->time[p];
		if (!(SEED_SERVE_PHASES & SEED_PHASE_BIT(p)))
			CHECK_MSG(st->time[p] == 0, "%s: not a phase of the service", seed_phase_name(p));
	}
	CHECK_MSG(sum <= wall, "the phases sum to %g s of %g", sum, wall);
	CHECK(st->time[SEED_PHASE_WAIT] > 0 && st->time[SEED_PHASE_TAKE] > 0 &&
	      st->time[SEED_PHASE_SEND] > 0 && st->time[SEED_PHASE_ENCODE] > 0);
	CHECK(st->time[SEED_PHASE_BLOCKED] == 0); /* the queue had room */
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
}

/* A consumer that starts reading after `delay` seconds, then reads for a
 * second. */
struct slow_pull {
	seed_chan *pull;
	double delay;
	int got;
};

static void *slow_pull(void *arg)
{
	struct slow_pull *sp = arg;
	nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = (long)(sp->delay * 1e9)}, NULL);
	seed_chan_msg m;
	seed_err err;
	while (seed_chan_recv(sp->pull, &m, 1000, &err) == 0)
		sp->got++;
	return NULL;
}

/* Backpressure: unroll frames into queues of 1 message on each side, and
 * a consumer that reads nothing for 0.3 s: the push that found no room
 * waited until it read, and that wait counts as blocked, not send. */
static void t_timing_blocked(void)
{
	void *ctx = seed_chan_context();
	seed_err err;
	seed_chan *router, *dealer, *push, *pull;
	seed_chan_opts bind = {.bind = true}, conn = {.bind = false};
	seed_chan_opts pbind = {.bind = true, .hwm = 1}, pconn = {.bind = false, .hwm = 1};
	CHECK(seed_chan_open(&router, ctx, SEED_CHAN_ROUTER, "inproc://blocked", &bind, &err) == 0);
	CHECK(seed_chan_open(&dealer, ctx, SEED_CHAN_DEALER, "inproc://blocked", &conn, &err) == 0);
	CHECK(seed_chan_open(&push, ctx, SEED_CHAN_PUSH, "inproc://blocked-u", &pbind, &err) == 0);
	CHECK(seed_chan_open(&pull, ctx, SEED_CHAN_PULL, "inproc://blocked-u", &pconn, &err) == 0);
	seed_serve_opts o = {.max_batch = 64,
	                     .timeout = 0.05,
	                     .T = 1,
	                     .idle_expiry = 60,
	                     .max_halves = 16,
	                     .max_bytes = 1 << 20,
	                     .max_envs = 8,
	                     .max_actions = 16,
	                     .max_row_bytes = 64};
	struct rig r = {.ctx = ctx, .router = router, .dealer = dealer, .push = push, .pull = pull};
	CHECK_MSG(seed_serve_new(&r.s, &o, router, push, NULL, &err) == 0, "%s", err.msg);
	struct slow_pull sp = {.pull = pull, .delay = 0.3};
	pthread_t th;
	CHECK(pthread_create(&th, NULL, slow_pull, &sp) == 0);
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	/* Each step after the first completes an unroll of T 1: eight of
	 * them cannot all fit in two queues of 1. */
	double t0 = seed_now_s();
	for (int i = 0; i < 9; i++) {
		step(&out, 3, i, 0, 2, 3, (float)i, -1);
		CHECK(ask(&r, &out, &got));
	}
	double wall = seed_now_s() - t0;
	pthread_join(th, NULL);
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	CHECK_MSG(st->time[SEED_PHASE_BLOCKED] >= 0.2 && st->time[SEED_PHASE_BLOCKED] <= wall,
	          "blocked %g s of %g", st->time[SEED_PHASE_BLOCKED], wall);
	CHECK_MSG(st->time[SEED_PHASE_SEND] < 0.1, "send %g s", st->time[SEED_PHASE_SEND]);
	CHECK_MSG(sp.got == 8, "%d unrolls read, want 8", sp.got);
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
}

/* The warnings a service gives, kept for the test to read. */
struct warnings {
	int n;
	char msg[8][600];
};

static void keep_warning(void *ctx, const char *msg)
{
	struct warnings *w = ctx;
	if (w->n < 8)
		snprintf(w->msg[w->n], sizeof w->msg[0], "%s", msg);
	w->n++;
}

/* Pushes that fail: a PUSH channel with no consumer (its queue cannot take
 * a frame without waiting) and its stop flag raised, so that waiting for
 * room is -EINTR at once.  Steps seq 0..4 of one half with T 1 complete 4
 * unrolls (seq 0-1, 1-2, 2-3, 3-4); row 1 ends its episode at seq 2, whose
 * frame goes out just before the unroll that completes then: 5 frames
 * fail, and nothing counts as pushed.  The first failure is warned at once
 * ("1 ... 1 in all"); the 4 more within push_warn_interval are not; after
 * it, seq 5's unroll is warned with the 5 since: "5 ... 6 in all". */
static void t_push_failed(void)
{
	void *ctx = seed_chan_context();
	seed_err err;
	volatile sig_atomic_t stop = 1;
	seed_chan *router, *dealer, *push;
	seed_chan_opts bind = {.bind = true}, conn = {.bind = false};
	seed_chan_opts pbind = {.bind = true, .hwm = 1, .stop = &stop};
	CHECK(seed_chan_open(&router, ctx, SEED_CHAN_ROUTER, "inproc://nopush", &bind, &err) == 0);
	CHECK(seed_chan_open(&dealer, ctx, SEED_CHAN_DEALER, "inproc://nopush", &conn, &err) == 0);
	CHECK(seed_chan_open(&push, ctx, SEED_CHAN_PUSH, "inproc://nopush-u", &pbind, &err) == 0);
	struct warnings w = {0};
	seed_serve_opts o = {.max_batch = 64,
	                     .timeout = 0.05,
	                     .T = 1,
	                     .idle_expiry = 60,
	                     .max_halves = 16,
	                     .max_bytes = 1 << 20,
	                     .max_envs = 8,
	                     .max_actions = 16,
	                     .max_row_bytes = 64,
	                     .push_warn_interval = 1,
	                     .warn = keep_warning,
	                     .ctx = &w};
	struct rig r = {.ctx = ctx, .router = router, .dealer = dealer, .push = push};
	CHECK_MSG(seed_serve_new(&r.s, &o, router, push, NULL, &err) == 0, "%s", err.msg);
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	double t0 = seed_now_s();
	for (int i = 0; i < 5; i++) {
		step(&out, 2, i, 0, 2, 3, (float)i, i == 2 ? 1 : -1);
		CHECK(ask(&r, &out, &got));
	}
	bool quick = seed_now_s() - t0 < 1;
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	CHECK_MSG(st->push_failed == 5, "%lld pushes failed, want 5", (long long)st->push_failed);
	CHECK_MSG(st->unroll_frames == 0 && st->unrolls == 0 && st->episodes == 0,
	          "%lld unroll frames, %lld unrolls, %lld episodes counted as pushed",
	          (long long)st->unroll_frames, (long long)st->unrolls, (long long)st->episodes);
	if (quick) {
		CHECK_MSG(w.n == 1, "%d warnings, want 1", w.n);
		CHECK_MSG(strstr(w.msg[0], " 1 frames not pushed since the last warning, 1 in all") &&
		              strstr(w.msg[0], seed_strerror(-EINTR)),
		          "%s", w.msg[0]);
		nanosleep(&(struct timespec){.tv_sec = 1, .tv_nsec = 100000000L}, NULL);
		step(&out, 2, 5, 0, 2, 3, 5.0f, -1);
		CHECK(ask(&r, &out, &got));
		CHECK_MSG(st->push_failed == 6, "%lld pushes failed, want 6", (long long)st->push_failed);
		CHECK_MSG(w.n == 2, "%d warnings, want 2", w.n);
		CHECK_MSG(strstr(w.msg[1], " 5 frames not pushed since the last warning, 6 in all"), "%s",
		          w.msg[1]);
	} else {
		printf("# the steps took over 1 s: the rate limit is not checked\n");
	}
	/* The episode went with its failed frame: nothing is left to flush. */
	CHECK(seed_serve_flush(r.s) == 0);
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
}

static struct warnings arrival_warnings;
static void tweak_arrival(seed_serve_opts *o)
{
	o->warn = keep_warning;
	o->ctx = &arrival_warnings;
}

/* A policy is built into an agent when it arrives, never on a request's
 * path: once the first request has told the observations, a description
 * that cannot be built for them is said during seed_serve_policy itself,
 * and the request after a good policy takes nothing to build (taking it
 * allocates nothing) and is answered at the new policy's version. */
static void t_built_on_arrival(void)
{
	enum { A = 3 };
	struct rig r;
	rig_tweak = tweak_arrival;
	rig_open_model(&r, "arrival", 2, 1);
	rig_tweak = NULL;
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	step(&out, 1, 0, 0, 2, A, 0.5f, -1);
	CHECK(ask(&r, &out, &got)); /* no policy yet: at random */
	static const char bad[] = "{\"torso\": [{\"type\": \"no-such-layer\"}], \"head\": \"dueling\"}";
	CHECK(seed_serve_policy(r.s, bad, strlen(bad), NULL, 0, 0) == 0);
	CHECK_MSG(arrival_warnings.n == 1 &&
	              strstr(arrival_warnings.msg[0], "cannot build the model for actor 1"),
	          "%d warnings: %s", arrival_warnings.n, arrival_warnings.msg[0]);
	q_policy(&r, A); /* version 2 */
	CHECK_MSG(arrival_warnings.n == 1, "%d warnings: %s", arrival_warnings.n, arrival_warnings.msg[1]);

	step(&out, 1, 1, 0, 2, A, 0.5f, -1);
	seed_chan_send(r.dealer, NULL, 0, out.data, out.len, false);
	seed_chan_msg m;
	seed_err err;
	CHECK(seed_chan_recv(r.router, &m, 1000, &err) == 0);
#if COUNT_ALLOCATIONS
	const char *preload = getenv("LD_PRELOAD");
	bool count = !(preload && strstr(preload, "vgpreload"));
#else
	bool count = false;
#endif
	long before = alloc_count;
	alloc_counting = count;
	seed_serve_take(r.s, &m, seed_now_s());
	alloc_counting = false;
	if (count)
		CHECK_MSG(alloc_count == before, "%ld allocations taking the request", alloc_count - before);
	seed_serve_run(r.s);
	CHECK(seed_chan_recv(r.dealer, &m, 1000, &err) == 0);
	seed_frame f;
	CHECK(seed_frame_decode(&f, m.data, m.len, NULL) == 0 && f.type == SEED_FRAME_ACTION);
	CHECK_MSG(seed_frame_int(&f, "policy_version", -1) == 2, "policy version %lld",
	          (long long)seed_frame_int(&f, "policy_version", -1));
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
}

/* A Gaussian policy on an empty torso whose means are its policy biases
 * (zero weights) and whose log-stds are log_std, with the squash named. */
static void gaussian_policy(struct rig *r, const float *mean, const float *log_std, const char *squash,
                            int64_t version)
{
	char json[160];
	snprintf(json, sizeof json,
	         "{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"squash\": \"%s\"}}", squash);
	seed_model *m = NULL;
	seed_err err;
	CHECK_MSG(seed_model_new(&m, json, SEED_DTYPE_F32, 1, (int64_t[]){2}, 2, 1, &err) == 0, "%s",
	          err.msg);
	const seed_model_param *pb = seed_model_param_find(m, "policy.bias"),
	                       *ls = seed_model_param_find(m, "policy.log_std");
	CHECK(pb && ls && pb->numel == 2 && ls->numel == 2);
	memcpy(seed_model_params(m) + pb->offset, mean, 2 * sizeof *mean);
	memcpy(seed_model_params(m) + ls->offset, log_std, 2 * sizeof *log_std);
	CHECK(seed_serve_policy(r->s, json, strlen(json), seed_model_params(m), 4 * seed_model_num_params(m),
	                        version) == 0);
	seed_model_free(&m);
}

/* The action frame in got: its f32 [K, A] actions into act. */
static bool box_actions(const seed_buf *got, int K, int A, float *act)
{
	seed_frame f;
	if (seed_frame_decode(&f, got->data, got->len, NULL) || f.type != SEED_FRAME_ACTION)
		return false;
	const seed_tensor *t = seed_frame_tensor(&f, "action");
	if (t->dtype != SEED_DTYPE_F32 || t->rank != 2 || t->shape[0] != K || t->shape[1] != A)
		return false;
	memcpy(act, t->data, (size_t)K * (size_t)A * sizeof *act);
	return true;
}

/* A Box action space (the step frames' bounds): a greedy Gaussian policy
 * answers its means, clipped into the bounds or squashed by tanh (worked
 * by hand); the unroll keeps the raw means and the parameters; before any
 * policy the answers are standard normal samples clipped into the bounds;
 * a categorical model refuses Box requests and a Gaussian one discrete
 * requests, each with an error naming the field; tanh refuses infinite
 * bounds. */
static void t_box_actions(void)
{
	struct rig r;
	rig_open_model(&r, "box", 2, 1);
	seed_buf out, got;
	seed_buf_init(&out);
	seed_buf_init(&got);
	static const float low[2] = {-1, -1}, high[2] = {1, 2}, mean[2] = {0.5f, 3}, log_std[2] = {-1, -0.5f};
	step_low = low;
	step_high = high;
	float act[4];
	/* No policy yet: N(0, 1) samples, clipped. */
	step(&out, 1, 0, 0, 2, 2, 0.5f, -1);
	CHECK(ask(&r, &out, &got) && box_actions(&got, 2, 2, act));
	for (int i = 0; i < 4; i++)
		CHECK_MSG(act[i] >= low[i % 2] && act[i] <= high[i % 2], "act[%d] = %g", i, (double)act[i]);
	gaussian_policy(&r, mean, log_std, "clip", 3);
	for (int64_t seq = 1; seq <= 3; seq++) {
		step(&out, 1, seq, 0, 2, 2, 0.5f, -1);
		CHECK(ask(&r, &out, &got) && box_actions(&got, 2, 2, act));
		CHECK_MSG(act[0] == 0.5f && act[1] == 2 && act[2] == 0.5f && act[3] == 2, "%g %g %g %g",
		          (double)act[0], (double)act[1], (double)act[2], (double)act[3]);
	}
	/* Steps 0..2 make the first unroll (T 2): step 0 played at random,
	 * steps 1 and 2 the raw means and the parameters. */
	seed_chan_msg m;
	seed_err err;
	seed_frame f;
	bool unroll = false;
	while (!unroll && seed_chan_recv(r.pull, &m, 1000, &err) == 0) {
		CHECK(seed_frame_decode(&f, m.data, m.len, &err) == 0);
		unroll = f.type == SEED_FRAME_UNROLL;
	}
	CHECK(unroll);
	const seed_tensor *ua = seed_frame_tensor(&f, "action"), *ul = seed_frame_tensor(&f, "logits");
	CHECK(ua->dtype == SEED_DTYPE_F32 && ua->rank == 3 && ua->shape[1] == 3 && ua->shape[2] == 2);
	CHECK(ul->dtype == SEED_DTYPE_F32 && ul->rank == 3 && ul->shape[2] == 4);
	float a1[2], l1[4];
	memcpy(a1, (const float *)ua->data + 2, sizeof a1); /* row 0, step 1 */
	memcpy(l1, (const float *)ul->data + 4, sizeof l1);
	CHECK(a1[0] == 0.5f && a1[1] == 3);
	CHECK(l1[0] == 0.5f && l1[1] == 3 && l1[2] == -1 && l1[3] == -0.5f);

	/* tanh: low + (tanh(u) + 1) (high - low) / 2. */
	gaussian_policy(&r, mean, log_std, "tanh", 4);
	step(&out, 1, 4, 0, 2, 2, 0.5f, -1);
	CHECK(ask(&r, &out, &got) && box_actions(&got, 2, 2, act));
	CHECK_NEAR(act[0], -1 + (tanh(0.5) + 1), 1e-6);
	CHECK_NEAR(act[1], -1 + (tanh(3.0) + 1) * 1.5, 1e-6);
	static const float open_high[2] = {1, INFINITY};
	step_high = open_high;
	step(&out, 1, 5, 0, 2, 2, 0.5f, -1);
	CHECK(ask(&r, &out, &got));
	CHECK(seed_frame_decode(&f, got.data, got.len, NULL) == 0 && f.type == SEED_FRAME_ERROR);
	const char *msg;
	size_t len;
	CHECK(seed_frame_str(&f, "message", &msg, &len) == 0);
	CHECK_MSG(memmem(msg, len, "action_low", 10) != NULL, "%.*s", (int)len, msg);
	step_high = high;

	/* A discrete request to a Gaussian model (another half). */
	step_low = step_high = NULL;
	step(&out, 1, 0, 4, 2, 2, 0.5f, -1);
	CHECK(ask(&r, &out, &got));
	CHECK(seed_frame_decode(&f, got.data, got.len, NULL) == 0 && f.type == SEED_FRAME_ERROR);
	CHECK(seed_frame_str(&f, "message", &msg, &len) == 0);
	CHECK_MSG(memmem(msg, len, "the model's policy is Gaussian", 30) != NULL, "%.*s", (int)len, msg);
	/* A Box request to a categorical model. */
	q_policy(&r, 2);
	step_low = low;
	step_high = high;
	step(&out, 1, 6, 0, 2, 2, 0.5f, -1);
	CHECK(ask(&r, &out, &got));
	CHECK(seed_frame_decode(&f, got.data, got.len, NULL) == 0 && f.type == SEED_FRAME_ERROR);
	CHECK(seed_frame_str(&f, "message", &msg, &len) == 0);
	CHECK_MSG(memmem(msg, len, "Box actions need", 16) != NULL, "%.*s", (int)len, msg);
	step_low = step_high = NULL;
	seed_buf_free(&out);
	seed_buf_free(&got);
	rig_close(&r);
}

int main(void)
{
	TAP_RUN(t_requests);
	TAP_RUN(t_unrolls);
	TAP_RUN(t_frame_skip);
	TAP_RUN(t_recurrent_state);
	TAP_RUN(t_q_priorities);
	TAP_RUN(t_q_epsilon_schedule);
	TAP_RUN(t_q_bad_settings);
	TAP_RUN(t_checkpoint);
	TAP_RUN(t_no_allocation_per_request);
	TAP_RUN(t_timing);
	TAP_RUN(t_timing_blocked);
	TAP_RUN(t_push_failed);
	TAP_RUN(t_built_on_arrival);
	TAP_RUN(t_box_actions);
	return tap_done();
}
