/* test_serve_evo.c: seed_serve's population mode over inproc:// channels.
 *
 * A learner's generation frames go in on the params channel, step frames of
 * one actor half of K = 4 environments are answered, and the episode frames
 * the server pushes are read back.  The wanted actions come from an
 * independent path: each member's parameters rebuilt with
 * seed_evo_member_params and run through seed_model_forward (the plain
 * model, not seed_population), argmax; the wanted assignments from the rule
 * (fewest assigned among those wanting more; none: the row is held),
 * worked by hand in the comments.  Then: a new generation mid-episode (the old one plays
 * its episodes to the end and reports under its number), a repeat ignored,
 * the episode cap, bad generation frames warned about and counted while the
 * server keeps serving, and a params frame that ends population mode.  A
 * snes generation (per-parameter sigmas) played the same way, and snes
 * frames refused (sigmas of another length, a centre that does not fit the
 * model, low rank) while the server plays on.
 *
 * Box members (a Gaussian policy, a half of KB = 8 environments with
 * bounds): their actions against each member's means from the same
 * independent path, mapped into the bounds by hand (tanh, clip); the
 * generation's action noise measured over many rows; and the observation
 * moments the episode frames carry against sums of the observations sent. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/evo.h"
#include "seed/evo_frame.h"
#include "seed/frame.h"
#include "seed/nn.h"
#include "seed/noise.h"
#include "seed/serve.h"
#include "tap.h"
/* after seed/frame.h: it uses the SEED_VALUE_* and error codes */
#include "golden_frames.h"

enum { K = 4, A = 3 };
static const char *model_json = "{\"torso\": []}";

struct rig {
	void *ctx;
	seed_chan *router, *dealer, *push, *pull, *pub, *sub;
	seed_serve *s;
	char warned[4][600];
	int nwarned;
	uint8_t reset[K]; /* the last answer's restart requests (0: none) */
	bool has_reset;   /* whether it had the field */
};

static void on_warn(void *ctx, const char *msg)
{
	struct rig *r = ctx;
	if (r->nwarned < 4)
		snprintf(r->warned[r->nwarned], sizeof r->warned[0], "%s", msg);
	r->nwarned++;
}

static void rig_open_opts(struct rig *r, const char *name, bool unrolls, double timeout)
{
	memset(r, 0, sizeof *r);
	r->ctx = seed_chan_context();
	seed_err err;
	char ep[64], up[64], pp[64];
	snprintf(ep, sizeof ep, "inproc://%s", name);
	snprintf(up, sizeof up, "inproc://%s-unrolls", name);
	snprintf(pp, sizeof pp, "inproc://%s-params", name);
	seed_chan_opts bind = {.bind = true}, conn = {.bind = false};
	CHECK(seed_chan_open(&r->router, r->ctx, SEED_CHAN_ROUTER, ep, &bind, &err) == 0);
	CHECK(seed_chan_open(&r->dealer, r->ctx, SEED_CHAN_DEALER, ep, &conn, &err) == 0);
	CHECK(seed_chan_open(&r->push, r->ctx, SEED_CHAN_PUSH, up, &bind, &err) == 0);
	CHECK(seed_chan_open(&r->pull, r->ctx, SEED_CHAN_PULL, up, &conn, &err) == 0);
	CHECK(seed_chan_open(&r->pub, r->ctx, SEED_CHAN_PUB, pp, &bind, &err) == 0);
	CHECK(seed_chan_open(&r->sub, r->ctx, SEED_CHAN_SUB, pp, &conn, &err) == 0);
	seed_serve_opts o = {.max_batch = 64,
	                     .timeout = timeout,
	                     .T = 2,
	                     .idle_expiry = 60,
	                     .max_halves = 16,
	                     .max_bytes = 1 << 20,
	                     .max_envs = 8,
	                     .max_actions = 16,
	                     .max_row_bytes = 64,
	                     .model = true,
	                     .greedy = true,
	                     .warn = on_warn,
	                     .ctx = r};
	CHECK_MSG(seed_serve_new(&r->s, &o, r->router, unrolls ? r->push : NULL, r->sub, &err) == 0, "%s",
	          err.msg);
}

static void rig_open(struct rig *r, const char *name)
{
	rig_open_opts(r, name, true, 0.05);
}

static void rig_close(struct rig *r)
{
	seed_serve_free(&r->s);
	seed_chan_close(&r->dealer);
	seed_chan_close(&r->router);
	seed_chan_close(&r->pull);
	seed_chan_close(&r->push);
	seed_chan_close(&r->sub);
	seed_chan_close(&r->pub);
	seed_chan_context_free(&r->ctx);
}

/* Publish the bytes of a frame and turn the idle server until it has taken
 * it. */
static void publish_bytes(struct rig *r, const void *data, size_t len)
{
	seed_chan_send(r->pub, NULL, 0, data, len, false);
	const seed_serve_stats *st = seed_serve_get_stats(r->s);
	int64_t before = st->generations_taken;
	for (int i = 0; i < 200 && st->generations_taken == before; i++)
		seed_serve_turn(r->s, 1);
	/* (a params frame is not counted there: a few more turns) */
	for (int i = 0; i < 5; i++)
		seed_serve_turn(r->s, 1);
}

/* Publish f (encoded). */
static void publish(struct rig *r, const seed_frame *f)
{
	seed_buf b = {0};
	seed_err err;
	CHECK_MSG(seed_frame_encode(f, &b, &err) == 0, "%s", err.msg);
	publish_bytes(r, b.data, b.len);
	seed_buf_free(&b);
}

/* The environments' state as the actor reports it. */
struct envs {
	float obs[K][2];
	uint8_t te[K], tr[K];
	float ret[K];
	int32_t len[K];
};

/* Send one step of the half and return its actions (false: no answer, or
 * an error frame); *version gets the answer's policy version. */
static bool step(struct rig *r, int64_t seq, const struct envs *e, int32_t act[K], int64_t *version)
{
	int64_t os[2] = {K, 2}, ks = K;
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_STEP);
	seed_frame_set_int(&f, "run", 9);
	seed_frame_set_int(&f, "actor", 0);
	seed_frame_set_int(&f, "seq", seq);
	seed_frame_set_int(&f, "env0", 0);
	seed_frame_set_int(&f, "num_actions", A);
	seed_frame_set_tensor(&f, "obs", seed_tensor_view((void *)e->obs, SEED_DTYPE_F32, 2, os));
	static float rew[K];
	seed_frame_set_tensor(&f, "reward", seed_tensor_view(rew, SEED_DTYPE_F32, 1, &ks));
	seed_frame_set_tensor(&f, "terminated", seed_tensor_view((void *)e->te, SEED_DTYPE_U8, 1, &ks));
	seed_frame_set_tensor(&f, "truncated", seed_tensor_view((void *)e->tr, SEED_DTYPE_U8, 1, &ks));
	seed_frame_set_tensor(&f, "ep_return", seed_tensor_view((void *)e->ret, SEED_DTYPE_F32, 1, &ks));
	seed_frame_set_tensor(&f, "ep_length", seed_tensor_view((void *)e->len, SEED_DTYPE_I32, 1, &ks));
	seed_buf b = {0};
	seed_err err;
	CHECK(seed_frame_encode(&f, &b, &err) == 0);
	seed_chan_send(r->dealer, NULL, 0, b.data, b.len, false);
	seed_buf_free(&b);
	for (int i = 0; i < 400; i++) {
		seed_serve_turn(r->s, 5);
		seed_chan_msg m;
		if (seed_chan_recv(r->dealer, &m, 0, &err) != 0)
			continue;
		seed_frame a;
		if (seed_frame_decode(&a, m.data, m.len, &err) != 0 || a.type != SEED_FRAME_ACTION) {
			CHECK_MSG(0, "answer to seq %lld is not an action frame", (long long)seq);
			return false;
		}
		memcpy(act, seed_frame_tensor(&a, "action")->data, sizeof(int32_t) * K);
		*version = seed_frame_int(&a, "policy_version", -1);
		const seed_tensor *rt = seed_frame_tensor(&a, "reset");
		r->has_reset = rt != NULL;
		memset(r->reset, 0, K);
		if (rt)
			memcpy(r->reset, rt->data, K);
		return true;
	}
	CHECK_MSG(0, "no answer to seq %lld", (long long)seq);
	return false;
}

/* The next episode frame pushed (false: none within a while). */
struct episodes {
	int n;
	int32_t env[16], len[16], member[16];
	int64_t gen[16];
	float ret[16];
	uint8_t trunc[16];
};

static bool next_episodes(struct rig *r, struct episodes *ep)
{
	seed_err err;
	seed_chan_msg m;
	for (int i = 0; i < 100; i++) {
		if (seed_chan_recv(r->pull, &m, 10, &err) != 0)
			continue;
		seed_frame f;
		CHECK(seed_frame_decode(&f, m.data, m.len, &err) == 0);
		if (f.type != SEED_FRAME_EPISODE) {
			CHECK_MSG(0, "a %s frame pushed in population mode", seed_frame_type_name(f.type));
			return false;
		}
		const seed_tensor *g = seed_frame_tensor(&f, "generation");
		CHECK(g != NULL && seed_frame_tensor(&f, "member") != NULL);
		if (!g)
			return false;
		ep->n = (int)g->shape[0];
		CHECK(ep->n <= 16);
		memcpy(ep->env, seed_frame_tensor(&f, "env")->data, 4 * (size_t)ep->n);
		memcpy(ep->len, seed_frame_tensor(&f, "length")->data, 4 * (size_t)ep->n);
		memcpy(ep->member, seed_frame_tensor(&f, "member")->data, 4 * (size_t)ep->n);
		memcpy(ep->gen, g->data, 8 * (size_t)ep->n);
		memcpy(ep->ret, seed_frame_tensor(&f, "return")->data, 4 * (size_t)ep->n);
		memcpy(ep->trunc, seed_frame_tensor(&f, "truncated")->data, (size_t)ep->n);
		return true;
	}
	return false;
}

/* An rs generation of M members with the given init keys, one episode each. */
struct gen {
	int64_t keys[4];
	int32_t episodes[4];
	seed_evo_gen g;
};

static void make_gen(struct gen *x, int64_t generation, int M, int64_t k0)
{
	for (int m = 0; m < M; m++) {
		x->keys[m] = k0 + 101 * m;
		x->episodes[m] = 1;
	}
	x->g = (seed_evo_gen){.algo = SEED_EVO_RS,
	                      .generation = generation,
	                      .noise_seed = 5,
	                      .noise_size = 64,
	                      .members = M,
	                      .genome_len = 1,
	                      .genome = x->keys,
	                      .episodes = x->episodes};
}

static void publish_gen(struct rig *r, const struct gen *x, int64_t cap)
{
	seed_frame f;
	seed_err err;
	CHECK_MSG(seed_evo_gen_to_frame(&x->g, 0, &f, &err) == 0, "%s", err.msg);
	seed_frame_set_str(&f, "model", model_json);
	if (cap)
		seed_frame_set_int(&f, "episode_cap", cap);
	publish(r, &f);
}

/* The greedy action of member m of generation g0 (of the table (5, 64))
 * for an observation: its parameters by seed_evo_member_params, the plain
 * model's forward pass, argmax. */
static int32_t gen_action(const seed_evo_gen *g0, int m, const float obs[2])
{
	seed_model *model = NULL;
	seed_noise *noise = NULL;
	seed_err err;
	CHECK(seed_model_new(&model, model_json, SEED_DTYPE_F32, 1, (int64_t[]){2}, A, 1, &err) == 0);
	CHECK(seed_noise_new(&noise, 5, 64, &err) == 0);
	seed_evo_gen g = *g0;
	if (!g.centre)
		g.num_params = seed_model_num_params(model);
	float *p = malloc(4 * g.num_params);
	CHECK_MSG(seed_evo_member_params(noise, model, &g, m, p, &err) == 0, "%s", err.msg);
	memcpy(seed_model_params(model), p, 4 * g.num_params);
	float logits[A], value;
	seed_model_forward(model, 1, obs, logits, &value);
	int32_t best = 0;
	for (int a = 1; a < A; a++)
		if (logits[a] > logits[best])
			best = a;
	free(p);
	seed_noise_free(&noise);
	seed_model_free(&model);
	return best;
}

static int32_t member_action(const struct gen *x, int m, const float obs[2])
{
	return gen_action(&x->g, m, obs);
}

static void t_population(void)
{
	struct rig r;
	rig_open(&r, "evo");
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	CHECK(st->generation == -1);
	struct gen g5, g6;
	make_gen(&g5, 5, 3, 1000);
	make_gen(&g6, 6, 2, 2000);
	g5.episodes[0] = 2; /* wants {2, 1, 1} */
	g6.episodes[0] = 3; /* wants {3, 2} */
	g6.episodes[1] = 2;
	/* Observations for which the members disagree: the test can tell
	 * who played. */
	struct envs e = {.obs = {{1.5f, -2.0f}, {-0.7f, 0.3f}, {2.5f, 1.0f}, {-1.0f, -3.0f}}};
	int32_t want5[3][K], want6[2][K];
	int differ = 0;
	for (int k = 0; k < K; k++) {
		for (int m = 0; m < 3; m++)
			want5[m][k] = member_action(&g5, m, e.obs[k]);
		for (int m = 0; m < 2; m++)
			want6[m][k] = member_action(&g6, m, e.obs[k]);
		differ += want5[0][k] != want5[1][k] || want5[1][k] != want5[2][k];
	}
	CHECK_MSG(differ >= 2, "the members agree on too many observations (%d of %d differ)", differ, K);

	publish_gen(&r, &g5, 0);
	CHECK(st->generations_taken == 1);
	/* The actor's first step (counters at 0): members 0, 1, 2, then
	 * member 0's second (the only one wanting more). */
	int32_t act[K];
	int64_t version = -1;
	int64_t seq = 0;
	CHECK(step(&r, seq++, &e, act, &version));
	CHECK(version == 5 && st->generation == 5 && st->members == 3 && st->generations == 1);
	const int first[K] = {0, 1, 2, 0};
	for (int k = 0; k < K; k++)
		CHECK_MSG(act[k] == want5[first[k]][k], "row %d: action %d, member %d's is %d", k, act[k],
		          first[k], want5[first[k]][k]);
	/* Row 1 ends (return 7, 4 steps): reported as generation 5's member
	 * 1; every member has its episodes, so the row is held (acted on by
	 * member 0, answered with a hold). */
	for (int k = 0; k < K; k++)
		e.len[k] = 4, e.ret[k] = 1;
	e.te[1] = 1;
	e.ret[1] = 7;
	CHECK(step(&r, seq++, &e, act, &version));
	struct episodes ep;
	CHECK(next_episodes(&r, &ep));
	CHECK(ep.n == 1 && ep.env[0] == 1 && ep.gen[0] == 5 && ep.member[0] == 1 && ep.ret[0] == 7 &&
	      ep.len[0] == 4 && ep.trunc[0] == 0);
	CHECK(act[1] == 0 && r.has_reset && st->held == 1); /* no member acts on it */
	for (int k = 0; k < K; k++)
		CHECK(r.reset[k] == (k == 1 ? SEED_RESET_HOLD : SEED_RESET_STEP));
	e.te[1] = 0;
	for (int k = 0; k < K; k++)
		e.len[k] = 5;
	e.len[1] = 0, e.ret[1] = 0; /* held: its start again */

	/* Generation 6 mid-episode (cap 10), then the same frame again. */
	publish_gen(&r, &g6, 10);
	publish_gen(&r, &g6, 10);
	CHECK(st->generations_taken == 3 && st->generation_repeats == 1);
	CHECK(step(&r, seq++, &e, act, &version));
	CHECK_MSG(version == 6 && st->generation == 6 && st->members == 2 && st->generations == 2,
	          "v %lld g %lld m %d gs %lld bad %lld warned %d: %s", (long long)version,
	          (long long)st->generation, st->members, (long long)st->generations,
	          (long long)st->bad_generations, r.nwarned, r.warned[0]);
	/* Every episode under way (rows 0, 2, 3) is generation 5's, which the
	 * learner is done with: each is reported as far as it went
	 * (truncated, under its member) and its actor asked to restart it (no
	 * member acts on it: action 0).  The held row 1 starts generation 6's
	 * member 0 at once. */
	const int still[3] = {0, 2, 0}, rows[3] = {0, 2, 3};
	CHECK(next_episodes(&r, &ep));
	CHECK(ep.n == 3);
	for (int i = 0; i < 3 && i < ep.n; i++) {
		int k = rows[i];
		CHECK_MSG(ep.env[i] == k && ep.gen[i] == 5 && ep.member[i] == still[i] &&
		              ep.len[i] == e.len[k] && ep.ret[i] == e.ret[k] && ep.trunc[i] == 1,
		          "row %d: env %d, generation %lld, member %d, length %d, truncated %d", k, ep.env[i],
		          (long long)ep.gen[i], ep.member[i], ep.len[i], ep.trunc[i]);
	}
	for (int k = 0; k < K; k++)
		CHECK_MSG(act[k] == (k == 1 ? want6[0][k] : 0) &&
		              r.reset[k] == (k == 1 ? SEED_RESET_STEP : SEED_RESET_RESTART),
		          "row %d after generation 6: action %d, want %d; reset %d", k, act[k], want6[0][k],
		          r.reset[k]);
	CHECK(st->restarts == 3);
	/* The actor restarts them (counters 0, no flags) and steps row 1:
	 * rows 0, 2, 3 start generation 6's members 1, 0, 1 (member 0 has
	 * row 1's); nothing reported, nothing asked. */
	const int play6[K] = {1, 0, 0, 1};
	for (int k = 0; k < K; k++)
		e.len[k] = 0, e.ret[k] = 0;
	e.len[1] = 1;
	CHECK(step(&r, seq++, &e, act, &version));
	for (int k = 0; k < K; k++)
		CHECK_MSG(act[k] == want6[play6[k]][k] && r.reset[k] == 0,
		          "row %d restarted: action %d, want member %d's %d; reset %d", k, act[k], play6[k],
		          want6[play6[k]][k], r.reset[k]);
	CHECK(!r.has_reset && st->restarts == 3);
	/* Row 2 is truncated: generation 6's member 0, truncated; its next
	 * episode is member 0's third, the last one wanted. */
	for (int k = 0; k < K; k++)
		e.len[k] = 1;
	e.len[1] = 2;
	e.len[2] = 6;
	e.tr[2] = 1;
	e.ret[2] = 3;
	CHECK(step(&r, seq++, &e, act, &version));
	CHECK(next_episodes(&r, &ep));
	CHECK(ep.n == 1 && ep.env[0] == 2 && ep.gen[0] == 6 && ep.member[0] == 0 && ep.trunc[0] == 1 &&
	      ep.len[0] == 6 && ep.ret[0] == 3);
	CHECK(act[2] == want6[0][2]);
	e.tr[2] = 0;
	/* The episodes reach the cap of 10 steps (row 1 at step 8, rows 0 and
	 * 3 at step 9, row 2 at step 10): reported then, truncated, with the
	 * return so far; from then on the server asks for a restart, and an
	 * actor that does not restart them plays on unreported. */
	e.len[2] = 0;
	for (int t = 1; t <= 12; t++) {
		for (int k = 0; k < K; k++)
			e.len[k]++;
		e.ret[2] = (float)t;
		CHECK(step(&r, seq++, &e, act, &version));
		if (t == 8) {
			CHECK(next_episodes(&r, &ep));
			CHECK(ep.n == 1 && ep.env[0] == 1 && ep.gen[0] == 6 && ep.member[0] == 0 &&
			      ep.len[0] == 10 && ep.trunc[0] == 1);
		}
		if (t == 9) {
			CHECK(next_episodes(&r, &ep));
			CHECK(ep.n == 2 && ep.env[0] == 0 && ep.env[1] == 3);
			for (int i = 0; i < 2 && i < ep.n; i++)
				CHECK(ep.gen[i] == 6 && ep.member[i] == 1 && ep.len[i] == 10 &&
				      ep.trunc[i] == 1);
		}
		if (t == 10) {
			CHECK(next_episodes(&r, &ep));
			CHECK(ep.n == 1 && ep.env[0] == 2 && ep.gen[0] == 6 && ep.member[0] == 0 &&
			      ep.ret[0] == 10 && ep.len[0] == 10 && ep.trunc[0] == 1);
		}
		for (int k = 0; k < K; k++) {
			CHECK_MSG(r.reset[k] == (k == 2   ? t >= 10
			                         : k == 1 ? t >= 8
			                                  : t >= 9),
			          "step %d: row %d reset %d", t, k, r.reset[k]);
			CHECK_MSG(r.reset[k] || act[k] == want6[play6[k] == 0 || k == 2 ? 0 : 1][k],
			          "step %d: row %d action %d", t, k, act[k]);
			CHECK_MSG(!r.reset[k] || act[k] == 0, "step %d: row %d, restarted, action %d", t, k,
			          act[k]);
		}
	}
	CHECK(st->restarts == 3 + K && st->held == 1);
	seed_chan_msg m;
	seed_err err;
	CHECK(seed_chan_recv(r.pull, &m, 20, &err) == -EAGAIN); /* nothing after the cap */

	/* Bad generation frames: warned about, counted; the server plays on. */
	int64_t bad_keys[2] = {7, -2};
	int32_t eps[2] = {1, 1};
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_GENERATION);
	seed_frame_set_int(&f, "run", 0);
	seed_frame_set_int(&f, "generation", 7);
	seed_frame_set_int(&f, "phase", 0);
	seed_frame_set_str(&f, "algorithm", "rs");
	seed_frame_set_int(&f, "noise_seed", 5);
	seed_frame_set_int(&f, "noise_size", 64);
	seed_frame_set_float(&f, "sigma", 0);
	seed_frame_set_int(&f, "rank", 0);
	seed_frame_set_tensor(&f, "genome", seed_tensor_view(bad_keys, SEED_DTYPE_I64, 2, (int64_t[]){2, 1}));
	seed_frame_set_tensor(&f, "episodes", seed_tensor_view(eps, SEED_DTYPE_I32, 1, (int64_t[]){2}));
	r.nwarned = 0;
	publish(&r, &f);
	CHECK(st->bad_generations == 1 && r.nwarned == 1);
	CHECK_MSG(strstr(r.warned[0], "dropped a generation frame") &&
	              strstr(r.warned[0], "field 'genome': member 1: first key -2"),
	          "warned: %s", r.warned[0]);
	/* An es centre of 5 parameters for a model of more. */
	float sign[2] = {1, -1}, centre[5] = {0};
	int64_t es_keys[2] = {3, 3};
	seed_evo_gen es = {.algo = SEED_EVO_ES,
	                   .generation = 8,
	                   .noise_seed = 5,
	                   .noise_size = 64,
	                   .sigma = 0.1,
	                   .members = 2,
	                   .genome_len = 1,
	                   .genome = es_keys,
	                   .sign = sign,
	                   .episodes = eps,
	                   .centre = centre,
	                   .num_params = 5};
	CHECK(seed_evo_gen_to_frame(&es, 0, &f, &err) == 0);
	publish(&r, &f);
	CHECK(st->bad_generations == 2 && r.nwarned == 2);
	CHECK_MSG(
	    strstr(r.warned[1], "generation 8 (es, 2 members): a centre of 5 parameters for a model of 12"),
	    "warned: %s", r.warned[1]);
	/* The garbage frame on the channel: counted as a bad generation when
	 * it got as far as its type. */
	static const char garbage[] = "\x82\xa4type\xaageneration\xa7version\x01";
	seed_chan_send(r.pub, NULL, 0, garbage, sizeof garbage - 1, false);
	for (int i = 0; i < 20; i++)
		seed_serve_turn(r.s, 1);
	CHECK_MSG(st->bad_generations == 3, "%lld bad", (long long)st->bad_generations);
	CHECK(step(&r, seq++, &e, act, &version));
	CHECK(version == 6 && st->generation == 6);

	/* A params frame: one model again, unrolls and no generation. */
	seed_model *model = NULL;
	CHECK(seed_model_new(&model, model_json, SEED_DTYPE_F32, 1, (int64_t[]){2}, A, 1, &err) == 0);
	int64_t P = (int64_t)seed_model_num_params(model);
	seed_frame_init(&f, SEED_FRAME_PARAMS);
	seed_frame_set_int(&f, "policy_version", 42);
	seed_frame_set_int(&f, "run", 0);
	seed_frame_set_tensor(&f, "params",
	                      seed_tensor_view(seed_model_params(model), SEED_DTYPE_F32, 1, &P));
	seed_frame_set_str(&f, "model", model_json);
	publish(&r, &f);
	CHECK(step(&r, seq++, &e, act, &version));
	CHECK(version == 42 && st->generation == -1);
	for (int t = 0; t < 3; t++)
		CHECK(step(&r, seq++, &e, act, &version));
	/* What went out before: the last episodes; then an unroll. */
	bool unroll = false;
	while (seed_chan_recv(r.pull, &m, 20, &err) == 0) {
		seed_frame u;
		CHECK(seed_frame_decode(&u, m.data, m.len, &err) == 0);
		unroll = unroll || u.type == SEED_FRAME_UNROLL;
	}
	CHECK(unroll);
	seed_model_free(&model);
	rig_close(&r);
}

/* A snes generation (each parameter its own std) is played: every member's
 * actions those of its parameters centre + sign sigmas eps; a snes frame
 * whose sigmas are not the centre's length, or whose centre and sigmas do
 * not fit the model, is warned about and counted, and the server plays on
 * with the generation it had. */
static void t_snes(void)
{
	struct rig r;
	rig_open(&r, "evo-snes");
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	enum { P = 12 }; /* the empty torso: policy 2 x 3 + 3, value 2 + 1 */
	float centre[P], sigmas[P], sign[4] = {1, -1, 1, -1};
	int64_t keys[4] = {17, 17, 40, 40};
	int32_t eps[4] = {1, 1, 1, 1};
	for (int i = 0; i < P; i++) {
		centre[i] = 0.1f * (float)((i * 7) % 5) - 0.2f;
		sigmas[i] = i % 4 == 3 ? 0.0f : 0.5f + 0.25f * (float)(i % 3);
	}
	seed_evo_gen g = {.algo = SEED_EVO_SNES,
	                  .generation = 4,
	                  .noise_seed = 5,
	                  .noise_size = 64,
	                  .sigma = 0.5,
	                  .members = 4,
	                  .genome_len = 1,
	                  .genome = keys,
	                  .sign = sign,
	                  .episodes = eps,
	                  .centre = centre,
	                  .num_params = P,
	                  .sigmas = sigmas};
	struct envs e = {.obs = {{1.5f, -2.0f}, {-0.7f, 0.3f}, {2.5f, 1.0f}, {-1.0f, -3.0f}}};
	/* The first step's rows play members 0, 1, 2, 3. */
	int32_t want[K], other[K];
	int differ = 0;
	for (int k = 0; k < K; k++) {
		want[k] = gen_action(&g, k, e.obs[k]);
		for (int m = 0; m < 4; m++)
			differ += gen_action(&g, m, e.obs[k]) != want[k];
		other[k] = gen_action(&g, (k + 1) % 4, e.obs[k]);
	}
	CHECK_MSG(differ >= 2, "the members agree on too many observations (%d differ)", differ);
	seed_frame f;
	seed_err err;
	CHECK_MSG(seed_evo_gen_to_frame(&g, 0, &f, &err) == 0, "%s", err.msg);
	seed_frame_set_str(&f, "model", model_json);
	publish(&r, &f);
	int32_t act[K];
	int64_t version = -1, seq = 0;
	CHECK(step(&r, seq++, &e, act, &version));
	CHECK_MSG(version == 4 && st->generation == 4 && st->members == 4 && st->bad_generations == 0,
	          "version %lld, %lld bad: %s", (long long)version, (long long)st->bad_generations,
	          r.warned[0]);
	for (int k = 0; k < K; k++)
		CHECK_MSG(act[k] == want[k], "row %d: action %d, member %d's is %d (member %d's %d)", k,
		          act[k], k, want[k], (k + 1) % 4, other[k]);
	/* Sigmas of 3 for a centre of 4 (packed by Python: our encoder would
	 * not): the schema's refusal, naming the field. */
	const struct golden_bad *gb = NULL;
	for (size_t i = 0; i < sizeof golden_bad / sizeof golden_bad[0]; i++)
		if (strcmp(golden_bad[i].name, "generation_sigmas_P") == 0)
			gb = &golden_bad[i];
	CHECK(gb != NULL);
	r.nwarned = 0;
	if (gb)
		publish_bytes(&r, gb->bytes, gb->len);
	CHECK(st->bad_generations == 1 && r.nwarned == 1);
	CHECK_MSG(strstr(r.warned[0], "dropped a generation frame") &&
	              strstr(r.warned[0],
	                     "field 'sigmas': shape [3], expected [P]: dimension 0 is 3, but P = "
	                     "4 (from 'centre')"),
	          "warned: %s", r.warned[0]);
	/* A centre and sigmas of 5 for a model of 12. */
	g.generation = 6;
	g.num_params = 5;
	CHECK(seed_evo_gen_to_frame(&g, 0, &f, &err) == 0);
	publish(&r, &f);
	CHECK(st->bad_generations == 2 && r.nwarned == 2);
	CHECK_MSG(strstr(r.warned[1], "generation 6 (snes, 4 members): a centre and sigmas of 5 parameters "
	                              "for a model of 12"),
	          "warned: %s", r.warned[1]);
	/* A snes frame of low rank (to_frame would not make it). */
	g.generation = 7;
	g.num_params = P;
	CHECK(seed_evo_gen_to_frame(&g, 0, &f, &err) == 0);
	seed_frame_set_int(&f, "rank", 2);
	publish(&r, &f);
	CHECK(st->bad_generations == 3 && r.nwarned == 3);
	CHECK_MSG(strstr(r.warned[2], "field 'rank': 2, expected 0 for snes"), "warned: %s", r.warned[2]);
	/* Generation 4 plays on, its members as before. */
	CHECK(step(&r, seq++, &e, act, &version));
	CHECK(version == 4 && st->generation == 4 && st->generations == 1);
	for (int k = 0; k < K; k++)
		CHECK_MSG(act[k] == want[k], "row %d after the bad frames: action %d, want %d", k, act[k],
		          want[k]);
	rig_close(&r);
}

/* Before the first request no agent gives the observations: the generation
 * waits, and applies from the first request on (no loose episodes). */
static void t_generation_before_actors(void)
{
	struct rig r;
	rig_open(&r, "evo-early");
	struct gen g;
	make_gen(&g, 0, 2, 77);
	g.episodes[0] = g.episodes[1] = 2;
	publish_gen(&r, &g, 0);
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	CHECK(st->generations_taken == 1 && st->generations == 0 && st->generation == -1);
	struct envs e = {.obs = {{1, 2}, {3, 4}, {5, 6}, {7, 8}}};
	int32_t act[K];
	int64_t version;
	CHECK(step(&r, 0, &e, act, &version));
	CHECK(st->generations == 1 && st->generation == 0 && version == 0);
	/* All four rows end: members 0, 1, 0, 1 (wants 2, 2). */
	for (int k = 0; k < K; k++)
		e.te[k] = 1, e.len[k] = 3, e.ret[k] = (float)k;
	CHECK(step(&r, 1, &e, act, &version));
	struct episodes ep;
	CHECK(next_episodes(&r, &ep));
	CHECK(ep.n == 4);
	const int32_t want[4] = {0, 1, 0, 1};
	for (int k = 0; k < ep.n && k < 4; k++)
		CHECK(ep.env[k] == k && ep.member[k] == want[k] && ep.gen[k] == 0 && ep.ret[k] == (float)k);
	/* No generation frame without a model: the one from before is kept. */
	rig_close(&r);
}

/* Without an unrolls channel the generation is played, and the server
 * says once that its episodes reach no learner. */
static void t_no_unrolls_channel(void)
{
	struct rig r;
	rig_open_opts(&r, "evo-nounrolls", false, 0.05);
	struct gen g;
	make_gen(&g, 2, 2, 5);
	publish_gen(&r, &g, 0);
	struct envs e = {.obs = {{1, 2}, {3, 4}, {5, 6}, {7, 8}}};
	int32_t act[K];
	int64_t version;
	CHECK(step(&r, 0, &e, act, &version) && version == 2);
	for (int k = 0; k < K; k++)
		e.te[k] = 1, e.len[k] = 3;
	CHECK(step(&r, 1, &e, act, &version) && version == 2);
	CHECK(r.nwarned == 1);
	CHECK_MSG(strstr(r.warned[0], "playing generation 2 without an unrolls channel"), "warned: %s",
	          r.warned[0]);
	CHECK(seed_serve_get_stats(r.s)->episodes == 0);
	rig_close(&r);
}

/* ---- Box members --------------------------------------------------------- */

/* A half of KB environments in a Box space of AB reals, played by ES pairs of
 * a Gaussian policy on an empty torso, the centre chosen so that the means
 * are of the order of the bounds (a model's own initialisation gives means
 * near 0, where clip and tanh cannot be told apart). */
enum { KB = 8, AB = 2 };

struct box_gen {
	int64_t keys[2];
	int32_t episodes[2];
	float sign[2];
	float *centre;
	float mean[3], var[3]; /* statistics, of obs_dim features */
	seed_evo_gen g;
};

/* An ES generation of 2 members (a pair) around a centre of P parameters
 * (value i of it: 0.8 sin(i + phase)), one episode each; noise the
 * generation's action_noise; statistics of obs_dim features (0: none). */
static void make_box_gen(struct box_gen *x, int64_t generation, size_t P, double phase, double noise,
                         int obs_dim)
{
	/* 5 episodes each: the first step's 8 rows alternate 0, 1, ... */
	*x = (struct box_gen){.keys = {11, 11},
	                      .episodes = {5, 5},
	                      .sign = {1, -1},
	                      .mean = {0.5f, -1, 2},
	                      .var = {4, 0.25f, 1}};
	x->centre = malloc(P * sizeof *x->centre);
	for (size_t i = 0; i < P; i++)
		x->centre[i] = (float)(0.8 * sin((double)i + phase));
	x->g = (seed_evo_gen){.algo = SEED_EVO_ES,
	                      .generation = generation,
	                      .noise_seed = 5,
	                      .noise_size = 64,
	                      .sigma = 0.2,
	                      .members = 2,
	                      .genome_len = 1,
	                      .genome = x->keys,
	                      .sign = x->sign,
	                      .episodes = x->episodes,
	                      .centre = x->centre,
	                      .num_params = P,
	                      .action_noise = noise,
	                      .obs_dim = obs_dim,
	                      .obs_mean = obs_dim ? x->mean : NULL,
	                      .obs_var = obs_dim ? x->var : NULL};
}

static void publish_box_gen(struct rig *r, const struct box_gen *x, const char *json)
{
	seed_frame f;
	seed_err err;
	CHECK_MSG(seed_evo_gen_to_frame(&x->g, 0, &f, &err) == 0, "%s", err.msg);
	seed_frame_set_str(&f, "model", json);
	publish(r, &f);
}

/* The parameter count of a model of json for observations of 2 floats and
 * AB actions. */
static size_t box_params(const char *json)
{
	seed_model *model = NULL;
	seed_err err;
	CHECK_MSG(seed_model_new(&model, json, SEED_DTYPE_F32, 1, (int64_t[]){2}, AB, 1, &err) == 0, "%s",
	          err.msg);
	size_t P = seed_model_num_params(model);
	seed_model_free(&model);
	return P;
}

/* Member m's Gaussian means (AB) for each of n observations: its parameters
 * by seed_evo_member_params, then the plain model's forward pass (the
 * policy's first AB outputs); a model with "obs_norm" normalises with the
 * generation's statistics, set into its slab. */
static void member_means(const struct box_gen *x, const char *json, int m, int n, const float (*obs)[2],
                         float (*mean)[AB])
{
	seed_model *model = NULL;
	seed_noise *noise = NULL;
	seed_err err;
	CHECK(seed_model_new(&model, json, SEED_DTYPE_F32, 1, (int64_t[]){2}, AB, 1, &err) == 0);
	CHECK(seed_noise_new(&noise, 5, 64, &err) == 0);
	size_t P = seed_model_num_params(model);
	float *p = malloc(4 * P);
	CHECK_MSG(seed_evo_member_params(noise, model, &x->g, m, p, &err) == 0, "%s", err.msg);
	memcpy(seed_model_params(model), p, 4 * P);
	const seed_model_param *nm = seed_model_param_find(model, "obs_norm.mean"),
	                       *nv = seed_model_param_find(model, "obs_norm.var");
	if (x->g.obs_dim > 0 && nm && nv) {
		memcpy(seed_model_params(model) + nm->offset, x->mean, 2 * sizeof *x->mean);
		memcpy(seed_model_params(model) + nv->offset, x->var, 2 * sizeof *x->var);
	}
	for (int i = 0; i < n; i++) {
		float out[2 * AB], value;
		seed_model_forward(model, 1, obs[i], out, &value);
		memcpy(mean[i], out, sizeof mean[i]);
	}
	free(p);
	seed_noise_free(&noise);
	seed_model_free(&model);
}

/* The environments of a Box half as the actor reports them. */
struct box_envs {
	float obs[KB][2];
	uint8_t te[KB], tr[KB];
	float ret[KB];
	int32_t len[KB];
	float low[AB], high[AB];
};

/* The last Box answer's reset field (0s without one). */
static uint8_t box_reset[KB];

/* Send one step of the Box half and return its f32 [KB, AB] actions
 * (false: no answer, or not a Box action frame); its resets go to
 * box_reset. */
static bool box_step(struct rig *r, int64_t seq, const struct box_envs *e, float act[KB][AB])
{
	int64_t os[2] = {KB, 2}, ks = KB, as = AB;
	static float rew[KB];
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_STEP);
	seed_frame_set_int(&f, "run", 9);
	seed_frame_set_int(&f, "actor", 0);
	seed_frame_set_int(&f, "seq", seq);
	seed_frame_set_int(&f, "env0", 0);
	seed_frame_set_int(&f, "num_actions", AB);
	seed_frame_set_tensor(&f, "obs", seed_tensor_view((void *)e->obs, SEED_DTYPE_F32, 2, os));
	seed_frame_set_tensor(&f, "reward", seed_tensor_view(rew, SEED_DTYPE_F32, 1, &ks));
	seed_frame_set_tensor(&f, "terminated", seed_tensor_view((void *)e->te, SEED_DTYPE_U8, 1, &ks));
	seed_frame_set_tensor(&f, "truncated", seed_tensor_view((void *)e->tr, SEED_DTYPE_U8, 1, &ks));
	seed_frame_set_tensor(&f, "ep_return", seed_tensor_view((void *)e->ret, SEED_DTYPE_F32, 1, &ks));
	seed_frame_set_tensor(&f, "ep_length", seed_tensor_view((void *)e->len, SEED_DTYPE_I32, 1, &ks));
	seed_frame_set_tensor(&f, "action_low", seed_tensor_view((void *)e->low, SEED_DTYPE_F32, 1, &as));
	seed_frame_set_tensor(&f, "action_high", seed_tensor_view((void *)e->high, SEED_DTYPE_F32, 1, &as));
	seed_buf b = {0};
	seed_err err;
	CHECK(seed_frame_encode(&f, &b, &err) == 0);
	seed_chan_send(r->dealer, NULL, 0, b.data, b.len, false);
	seed_buf_free(&b);
	for (int i = 0; i < 400; i++) {
		seed_serve_turn(r->s, 5);
		seed_chan_msg m;
		if (seed_chan_recv(r->dealer, &m, 0, &err) != 0)
			continue;
		seed_frame a;
		const seed_tensor *t = NULL;
		if (seed_frame_decode(&a, m.data, m.len, &err) == 0 && a.type == SEED_FRAME_ACTION)
			t = seed_frame_tensor(&a, "action");
		if (!t || t->dtype != SEED_DTYPE_F32 || t->rank != 2 || t->shape[0] != KB ||
		    t->shape[1] != AB) {
			const char *msg = "";
			size_t len = 0;
			seed_frame_str(&a, "message", &msg, &len);
			CHECK_MSG(0, "answer to seq %lld is not a Box action frame: %.*s", (long long)seq,
			          (int)len, msg);
			return false;
		}
		memcpy(act, t->data, sizeof(float) * KB * AB);
		const seed_tensor *rt = seed_frame_tensor(&a, "reset");
		memset(box_reset, 0, KB);
		if (rt)
			memcpy(box_reset, rt->data, KB);
		return true;
	}
	CHECK_MSG(0, "no answer to seq %lld", (long long)seq);
	return false;
}

/* The moments an episode frame carries (count -1: none). */
struct moments {
	int64_t count;
	double sum[2], sumsq[2];
	int episodes;
};

/* The next episode frame pushed, with its moments (false: none within a
 * while, or malformed moments). */
static bool next_moments(struct rig *r, struct moments *mo)
{
	seed_err err;
	seed_chan_msg m;
	*mo = (struct moments){.count = -1};
	for (int i = 0; i < 100; i++) {
		if (seed_chan_recv(r->pull, &m, 10, &err) != 0)
			continue;
		seed_frame f;
		CHECK(seed_frame_decode(&f, m.data, m.len, &err) == 0 && f.type == SEED_FRAME_EPISODE);
		mo->episodes = (int)seed_frame_tensor(&f, "env")->shape[0];
		mo->count = seed_frame_int(&f, "obs_count", -1);
		const seed_tensor *s = seed_frame_tensor(&f, "obs_sum"),
		                  *q = seed_frame_tensor(&f, "obs_sumsq");
		if (mo->count < 0) {
			CHECK_MSG(!s && !q, "obs_sum or obs_sumsq without obs_count");
			return !s && !q;
		}
		bool ok = s && q && s->dtype == SEED_DTYPE_F64 && q->dtype == SEED_DTYPE_F64 &&
		          s->rank == 1 && q->rank == 1 && s->shape[0] == 2 && q->shape[0] == 2;
		CHECK_MSG(ok, "obs_count without obs_sum and obs_sumsq of f64 [2]");
		if (!ok)
			return false;
		memcpy(mo->sum, s->data, sizeof mo->sum);
		memcpy(mo->sumsq, q->data, sizeof mo->sumsq);
		return true;
	}
	return false;
}

/* Box members with no action noise: each row's action is its member's
 * mean mapped into the bounds by the model's squash, worked independently
 * (tanh: low + (tanh(u) + 1) (high - low) / 2; clip), members 0 and 1
 * alternating over the rows (k % 2: wants 4 and 5, so row 5's next
 * episode, at its end, is member 1's, the only one wanting more); and
 * without statistics the episode frames carry no moments. */
static void t_box_members(void)
{
	static const char *const squash[2] = {"tanh", "clip"};
	for (int q = 0; q < 2; q++) {
		char json[160], name[32];
		snprintf(json, sizeof json,
		         "{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"squash\": \"%s\"}}",
		         squash[q]);
		snprintf(name, sizeof name, "evo-box-%s", squash[q]);
		struct rig r;
		rig_open_opts(&r, name, true, 0.001);
		struct box_gen x;
		make_box_gen(&x, 3, box_params(json), 0.3, 0, 0);
		x.episodes[0] = 4;
		publish_box_gen(&r, &x, json);
		struct box_envs e = {.low = {-1, 0}, .high = {1, 3}};
		for (int k = 0; k < KB; k++)
			e.obs[k][0] = 0.4f * (float)k - 1.3f, e.obs[k][1] = 1.1f - 0.3f * (float)k;
		float mean[2][KB][AB];
		member_means(&x, json, 0, KB, e.obs, mean[0]);
		member_means(&x, json, 1, KB, e.obs, mean[1]);
		float act[KB][AB];
		int inside = 0, outside = 0;
		for (int64_t seq = 0; seq < 3; seq++) {
			for (int k = 0; k < KB; k++)
				e.len[k] = (int32_t)seq;
			if (seq == 2)
				e.te[5] = 1, e.ret[5] = 4;
			CHECK(box_step(&r, seq, &e, act));
			const seed_serve_stats *st = seed_serve_get_stats(r.s);
			CHECK(st->generation == 3 && st->members == 2);
			for (int k = 0; k < KB; k++)
				for (int a = 0; a < AB; a++) {
					double u = mean[k % 2][k][a], lo = e.low[a], hi = e.high[a];
					double want = q == 0   ? lo + (tanh(u) + 1) * (hi - lo) / 2
					              : u < lo ? lo
					              : u > hi ? hi
					                       : u;
					inside += u > lo && u < hi;
					outside += u < lo || u > hi;
					CHECK_MSG(
					    fabs(act[k][a] - want) <= 1e-5,
					    "%s, step %lld, row %d, action %d: %.7g, member %d's mean %.7g "
					    "gives %.7g",
					    squash[q], (long long)seq, k, a, (double)act[k][a], k % 2, u,
					    want);
				}
		}
		/* Means both inside and outside the bounds: the clip was seen
		 * to act (and not to act). */
		CHECK_MSG(inside > 0 && outside > 0, "means inside the bounds %d, outside %d", inside,
		          outside);
		struct moments mo;
		CHECK(next_moments(&r, &mo));
		CHECK_MSG(mo.episodes == 1 && mo.count == -1, "%d episodes, obs_count %lld", mo.episodes,
		          (long long)mo.count);
		free(x.centre);
		rig_close(&r);
	}
}

/* Box members with action noise 0.5, bounds wide enough that clipping
 * never bites: over 2,000 elements the noise (action - member's mean) has
 * a mean near 0 and a standard deviation near 0.5 (their standard errors:
 * 0.011 and 0.008), and no element equals its mean. */
static void t_box_action_noise(void)
{
	static const char *json =
	    "{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"squash\": \"clip\"}}";
	struct rig r;
	rig_open_opts(&r, "evo-box-noise", true, 0.001);
	struct box_gen x;
	make_box_gen(&x, 4, box_params(json), 1.7, 0.5, 0);
	publish_box_gen(&r, &x, json);
	struct box_envs e = {.low = {-1000, -1000}, .high = {1000, 1000}};
	for (int k = 0; k < KB; k++)
		e.obs[k][0] = 0.25f * (float)k, e.obs[k][1] = -0.5f * (float)k + 1;
	float mean[2][KB][AB];
	member_means(&x, json, 0, KB, e.obs, mean[0]);
	member_means(&x, json, 1, KB, e.obs, mean[1]);
	double sum = 0, sumsq = 0;
	int n = 0, equal = 0;
	float act[KB][AB];
	for (int64_t seq = 0; seq < 125; seq++) {
		if (!box_step(&r, seq, &e, act))
			break;
		for (int k = 0; k < KB; k++)
			for (int a = 0; a < AB; a++) {
				double d = (double)act[k][a] - mean[k % 2][k][a];
				sum += d;
				sumsq += d * d;
				equal += act[k][a] == mean[k % 2][k][a];
				n++;
			}
	}
	CHECK(n == 2000);
	double m = sum / n, sd = sqrt(sumsq / n - m * m);
	CHECK_MSG(fabs(m) < 0.05, "the noise's mean: %.4f", m);
	CHECK_MSG(fabs(sd - 0.5) < 0.04, "the noise's standard deviation: %.4f", sd);
	CHECK_MSG(equal == 0, "%d actions equal their mean", equal);
	free(x.centre);
	rig_close(&r);
}

/* Observation moments: a generation with statistics of the 2 features (a
 * model with "obs_norm"): each episode frame carries the count of the rows
 * acted on since the previous one and their sums and sums of squares,
 * summed here from the observations sent (a row with an infinite value
 * left out); the members normalise with the generation's statistics (their
 * means as the plain model's with them in its slab).  A generation without
 * statistics then: rows played by it do not count; and one with statistics
 * of 3 features for observations of 2 is refused. */
static void t_box_obs_moments(void)
{
	static const char *json = "{\"torso\": [], \"obs_norm\": true, \"policy\": {\"type\": "
	                          "\"gaussian\", \"squash\": \"clip\"}}";
	struct rig r;
	rig_open_opts(&r, "evo-box-moments", true, 0.001);
	struct box_gen x, y;
	make_box_gen(&x, 7, box_params(json), 0.9, 0, 2);
	publish_box_gen(&r, &x, json);
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	CHECK_MSG(st->generations == 0 && st->bad_generations == 0, "bad %lld: %s",
	          (long long)st->bad_generations, r.warned[0]);
	struct box_envs e = {.low = {-1000, -1000}, .high = {1000, 1000}};
	double sum[2] = {0}, sumsq[2] = {0};
	int64_t rows = 0;
	float act[KB][AB];
	struct moments mo;
	int64_t seq = 0;
	/* Steps 0..5 of episodes that start at step 0 (length 0); row 0's
	 * episode ends at step 3 (its next one then has length 1 at step 4),
	 * row 1's at step 5. */
	for (int t = 0; t < 6; t++, seq++) {
		for (int k = 0; k < KB; k++) {
			e.obs[k][0] = 0.37f * (float)t - 0.21f * (float)k + 0.05f;
			e.obs[k][1] = (float)((t * 7 + k * 3) % 11) * 0.5f - 2.25f;
			e.len[k] = k == 0 && t > 3 ? t - 3 : t;
		}
		/* An infinite value (normalised and clipped into a finite
		 * one): its row is left out of the moments. */
		if (t == 2)
			e.obs[4][0] = INFINITY;
		e.te[0] = t == 3;
		e.te[1] = t == 5;
		CHECK(box_step(&r, seq, &e, act));
		float mean[2][KB][AB];
		member_means(&x, json, 0, KB, e.obs, mean[0]);
		member_means(&x, json, 1, KB, e.obs, mean[1]);
		for (int k = 0; k < KB; k++)
			for (int a = 0; a < AB; a++)
				CHECK_MSG(fabs(act[k][a] - mean[k % 2][k][a]) <= 1e-5,
				          "step %d, row %d, action %d: %.7g, member %d's mean %.7g", t, k, a,
				          (double)act[k][a], k % 2, (double)mean[k % 2][k][a]);
		for (int k = 0; k < KB; k++) {
			if (!isfinite(e.obs[k][0]) || !isfinite(e.obs[k][1]))
				continue;
			for (int j = 0; j < 2; j++) {
				sum[j] += e.obs[k][j];
				sumsq[j] += (double)e.obs[k][j] * e.obs[k][j];
			}
			rows++;
		}
		if (t != 3 && t != 5)
			continue;
		CHECK(next_moments(&r, &mo));
		CHECK_MSG(mo.episodes == 1 && mo.count == rows,
		          "step %d: %d episodes, obs_count %lld, want %lld", t, mo.episodes,
		          (long long)mo.count, (long long)rows);
		for (int j = 0; j < 2; j++) {
			CHECK_MSG(fabs(mo.sum[j] - sum[j]) <= 1e-9 * (1 + fabs(sum[j])),
			          "step %d: obs_sum[%d] %.12g, want %.12g", t, j, mo.sum[j], sum[j]);
			CHECK_MSG(fabs(mo.sumsq[j] - sumsq[j]) <= 1e-9 * (1 + sumsq[j]),
			          "step %d: obs_sumsq[%d] %.12g, want %.12g", t, j, mo.sumsq[j], sumsq[j]);
			sum[j] = sumsq[j] = 0;
		}
		rows = 0;
	}
	/* A generation without statistics: at their next step the episodes
	 * under way are reported (generation 7's, truncated) and their rows
	 * play generation 8, which counts none. */
	make_box_gen(&y, 8, box_params(json), 2.1, 0, 0);
	publish_box_gen(&r, &y, json);
	e.te[1] = 0;
	for (int k = 0; k < KB; k++)
		e.len[k] = k == 0 ? 3 : k == 1 ? 1 : 6;
	CHECK(box_step(&r, seq++, &e, act));
	CHECK(st->generation == 8);
	CHECK(next_moments(&r, &mo));
	CHECK_MSG(mo.episodes == KB && mo.count == -1, "%d episodes, obs_count %lld", mo.episodes,
	          (long long)mo.count);
	/* Statistics of 3 features for observations of 2: a bad generation,
	 * said and counted; generation 8 plays on. */
	struct box_gen z;
	make_box_gen(&z, 9, box_params(json), 0.5, 0, 3);
	r.nwarned = 0;
	publish_box_gen(&r, &z, json);
	CHECK(st->bad_generations == 1 && r.nwarned == 1);
	CHECK_MSG(strstr(r.warned[0], "generation 9 (es, 2 members): statistics of 3 features for "
	                              "observations of 2 f32 values"),
	          "warned: %s", r.warned[0]);
	CHECK(box_step(&r, seq++, &e, act) && st->generation == 8);
	free(x.centre);
	free(y.centre);
	free(z.centre);
	rig_close(&r);
}

/* Leaving population mode drops the moments not yet sent: 16 rows acted
 * on with statistics and no episode ended, then a params frame (a step
 * played by the model, which counts none), then a generation with
 * statistics again: at its first step the episodes of generation 7 still
 * under way are reported, and their frame counts only that step's rows and
 * sums only their observations. */
static void t_box_moments_dropped(void)
{
	static const char *json = "{\"torso\": [], \"obs_norm\": true, \"policy\": {\"type\": "
	                          "\"gaussian\", \"squash\": \"clip\"}}";
	struct rig r;
	rig_open_opts(&r, "evo-box-dropped", true, 0.001);
	struct box_gen x, y;
	make_box_gen(&x, 7, box_params(json), 0.9, 0, 2);
	make_box_gen(&y, 9, box_params(json), 1.4, 0, 2);
	publish_box_gen(&r, &x, json);
	struct box_envs e = {.low = {-1000, -1000}, .high = {1000, 1000}};
	float act[KB][AB];
	double sum[2] = {0}, sumsq[2] = {0};
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	for (int t = 0; t < 4; t++) {
		for (int k = 0; k < KB; k++) {
			e.obs[k][0] = 0.5f * (float)t + 0.125f * (float)k;
			e.obs[k][1] = -0.25f * (float)(t * k) + 1;
			e.len[k] = t;
		}
		if (t == 2) {
			/* A params frame: one model again. */
			seed_model *model = NULL;
			seed_err err;
			CHECK(seed_model_new(&model, json, SEED_DTYPE_F32, 1, (int64_t[]){2}, AB, 1, &err) ==
			      0);
			int64_t P = (int64_t)seed_model_num_params(model);
			seed_frame f;
			seed_frame_init(&f, SEED_FRAME_PARAMS);
			seed_frame_set_int(&f, "policy_version", 42);
			seed_frame_set_int(&f, "run", 0);
			seed_frame_set_tensor(
			    &f, "params", seed_tensor_view(seed_model_params(model), SEED_DTYPE_F32, 1, &P));
			seed_frame_set_str(&f, "model", json);
			publish(&r, &f);
			seed_model_free(&model);
		}
		if (t == 3)
			publish_box_gen(&r, &y, json);
		CHECK(box_step(&r, t, &e, act));
		CHECK(st->generation == (t < 2 ? 7 : t == 2 ? -1 : 9));
		for (int k = 0; k < KB && t == 3; k++)
			for (int j = 0; j < 2; j++) {
				sum[j] += e.obs[k][j];
				sumsq[j] += (double)e.obs[k][j] * e.obs[k][j];
			}
	}
	struct moments mo;
	CHECK(next_moments(&r, &mo));
	CHECK_MSG(mo.episodes == KB && mo.count == KB, "%d episodes, obs_count %lld", mo.episodes,
	          (long long)mo.count);
	for (int j = 0; j < 2; j++) {
		CHECK_MSG(fabs(mo.sum[j] - sum[j]) <= 1e-9 * (1 + fabs(sum[j])),
		          "obs_sum[%d] %.12g, want %.12g", j, mo.sum[j], sum[j]);
		CHECK_MSG(fabs(mo.sumsq[j] - sumsq[j]) <= 1e-9 * (1 + sumsq[j]),
		          "obs_sumsq[%d] %.12g, want %.12g", j, mo.sumsq[j], sumsq[j]);
	}
	free(x.centre);
	free(y.centre);
	rig_close(&r);
}

/* Held rows: a Box generation with statistics wanting one episode of each
 * of its 2 members, for a half of 8 environments.  Rows 0 and 1 play them;
 * the other six are held from the start (reset 2), no member acts on them
 * (their Box means 0, into the bounds: 0), and their observations stay out
 * of the moments.  When row 0's episode ends (step 2) it is held too: the
 * episode frame counts rows 0 and 1 at steps 0 and 1 and row 1 at step 2,
 * 5 in all, and sums their observations. */
static void t_box_held_moments(void)
{
	static const char *json = "{\"torso\": [], \"obs_norm\": true, \"policy\": {\"type\": "
	                          "\"gaussian\", \"squash\": \"clip\"}}";
	struct rig r;
	rig_open_opts(&r, "evo-box-held", true, 0.001);
	struct box_gen x;
	make_box_gen(&x, 7, box_params(json), 0.9, 0, 2);
	x.episodes[0] = x.episodes[1] = 1;
	publish_box_gen(&r, &x, json);
	struct box_envs e = {.low = {-1000, -1000}, .high = {1000, 1000}};
	double sum[2] = {0}, sumsq[2] = {0};
	int64_t rows = 0;
	float act[KB][AB];
	for (int t = 0; t < 3; t++) {
		for (int k = 0; k < KB; k++) {
			e.obs[k][0] = 0.3f * (float)t - 0.2f * (float)k + 0.1f;
			e.obs[k][1] = (float)((t * 5 + k * 3) % 7) * 0.5f - 1.5f;
			e.len[k] = k < 2 ? t : 0; /* the held rows stay at their start */
		}
		e.te[0] = t == 2;
		CHECK(box_step(&r, t, &e, act));
		float mean[2][KB][AB];
		member_means(&x, json, 0, KB, e.obs, mean[0]);
		member_means(&x, json, 1, KB, e.obs, mean[1]);
		for (int k = 0; k < KB; k++) {
			bool held = k >= 2 || (k == 0 && t == 2);
			CHECK_MSG(box_reset[k] == (held ? SEED_RESET_HOLD : SEED_RESET_STEP),
			          "step %d, row %d: reset %d", t, k, box_reset[k]);
			for (int a = 0; a < AB; a++) {
				double want = held ? 0 : mean[k][k][a];
				CHECK_MSG(fabs(act[k][a] - want) <= 1e-5,
				          "step %d, row %d, action %d: %.7g, want %.7g", t, k, a,
				          (double)act[k][a], want);
			}
			if (held)
				continue;
			for (int j = 0; j < 2; j++) {
				sum[j] += e.obs[k][j];
				sumsq[j] += (double)e.obs[k][j] * e.obs[k][j];
			}
			rows++;
		}
	}
	struct moments mo;
	CHECK(next_moments(&r, &mo));
	CHECK_MSG(mo.episodes == 1 && mo.count == 5 && rows == 5, "%d episodes, obs_count %lld (want %lld)",
	          mo.episodes, (long long)mo.count, (long long)rows);
	for (int j = 0; j < 2; j++) {
		CHECK_MSG(fabs(mo.sum[j] - sum[j]) <= 1e-9 * (1 + fabs(sum[j])),
		          "obs_sum[%d] %.12g, want %.12g", j, mo.sum[j], sum[j]);
		CHECK_MSG(fabs(mo.sumsq[j] - sumsq[j]) <= 1e-9 * (1 + sumsq[j]),
		          "obs_sumsq[%d] %.12g, want %.12g", j, mo.sumsq[j], sumsq[j]);
	}
	CHECK(seed_serve_get_stats(r.s)->held == 6 + 6 + 7);
	free(x.centre);
	rig_close(&r);
}

int main(void)
{
	TAP_RUN(t_population);
	TAP_RUN(t_snes);
	TAP_RUN(t_generation_before_actors);
	TAP_RUN(t_no_unrolls_channel);
	TAP_RUN(t_box_members);
	TAP_RUN(t_box_action_noise);
	TAP_RUN(t_box_obs_moments);
	TAP_RUN(t_box_moments_dropped);
	TAP_RUN(t_box_held_moments);
	return tap_done();
}
