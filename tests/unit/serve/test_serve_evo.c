/* test_serve_evo.c: seed_serve's population mode over inproc:// channels.
 *
 * A learner's generation frames go in on the params channel, step frames of
 * one actor half of K = 4 environments are answered, and the episode frames
 * the server pushes are read back.  The wanted actions come from an
 * independent path: each member's parameters rebuilt with
 * seed_evo_member_params and run through seed_model_forward (the plain
 * model, not seed_population), argmax; the wanted assignments from the rule
 * (fewest assigned among those wanting more, then extras), worked by hand
 * in the comments.  Then: a new generation mid-episode (the old one plays
 * its episodes to the end and reports under its number), a repeat ignored,
 * the episode cap, bad generation frames warned about and counted while the
 * server keeps serving, and a params frame that ends population mode. */
#include <errno.h>
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

static void rig_open_opts(struct rig *r, const char *name, bool unrolls)
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
	                     .timeout = 0.05,
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
	rig_open_opts(r, name, true);
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

/* Publish f and turn the idle server until it has taken it. */
static void publish(struct rig *r, const seed_frame *f)
{
	seed_buf b = {0};
	seed_err err;
	CHECK_MSG(seed_frame_encode(f, &b, &err) == 0, "%s", err.msg);
	seed_chan_send(r->pub, NULL, 0, b.data, b.len, false);
	seed_buf_free(&b);
	const seed_serve_stats *st = seed_serve_get_stats(r->s);
	int64_t before = st->generations_taken;
	for (int i = 0; i < 200 && st->generations_taken == before; i++)
		seed_serve_turn(r->s, 1);
	/* (a params frame is not counted there: a few more turns) */
	for (int i = 0; i < 5; i++)
		seed_serve_turn(r->s, 1);
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

/* The greedy action of member m of x for an observation: its parameters by
 * seed_evo_member_params, the plain model's forward pass, argmax. */
static int32_t member_action(const struct gen *x, int m, const float obs[2])
{
	seed_model *model = NULL;
	seed_noise *noise = NULL;
	seed_err err;
	CHECK(seed_model_new(&model, model_json, SEED_DTYPE_F32, 1, (int64_t[]){2}, A, 1, &err) == 0);
	CHECK(seed_noise_new(&noise, 5, 64, &err) == 0);
	seed_evo_gen g = x->g;
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

static void t_population(void)
{
	struct rig r;
	rig_open(&r, "evo");
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	CHECK(st->generation == -1);
	struct gen g5, g6;
	make_gen(&g5, 5, 3, 1000);
	make_gen(&g6, 6, 2, 2000);
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
	/* The actor's first step (counters at 0): members 0, 1, 2, then an
	 * extra of member 0 (all have their one episode: fewest, lowest). */
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
	 * 1; its next episode is member 1's (counts 2, 1, 1). */
	for (int k = 0; k < K; k++)
		e.len[k] = 4, e.ret[k] = 1;
	e.te[1] = 1;
	e.ret[1] = 7;
	CHECK(step(&r, seq++, &e, act, &version));
	struct episodes ep;
	CHECK(next_episodes(&r, &ep));
	CHECK(ep.n == 1 && ep.env[0] == 1 && ep.gen[0] == 5 && ep.member[0] == 1 && ep.ret[0] == 7 &&
	      ep.len[0] == 4 && ep.trunc[0] == 0);
	CHECK(act[1] == want5[1][1]);
	e.te[1] = 0;
	for (int k = 0; k < K; k++)
		e.len[k] = 5;
	e.len[1] = 1;

	/* Generation 6 mid-episode (cap 10), then the same frame again. */
	publish_gen(&r, &g6, 10);
	publish_gen(&r, &g6, 10);
	CHECK(st->generations_taken == 3 && st->generation_repeats == 1);
	CHECK(step(&r, seq++, &e, act, &version));
	CHECK_MSG(version == 6 && st->generation == 6 && st->members == 2 && st->generations == 2,
	          "v %lld g %lld m %d gs %lld bad %lld warned %d: %s", (long long)version,
	          (long long)st->generation, st->members, (long long)st->generations,
	          (long long)st->bad_generations, r.nwarned, r.warned[0]);
	/* Every episode under way is generation 5's, which the learner is
	 * done with: each is reported as far as it went (truncated, under its
	 * member), played by generation 6's member 0, and its actor asked to
	 * restart it. */
	const int still[K] = {0, 1, 2, 0};
	CHECK(next_episodes(&r, &ep));
	CHECK(ep.n == K);
	for (int k = 0; k < K && k < ep.n; k++)
		CHECK_MSG(ep.env[k] == k && ep.gen[k] == 5 && ep.member[k] == still[k] &&
		              ep.len[k] == e.len[k] && ep.ret[k] == e.ret[k] && ep.trunc[k] == 1,
		          "row %d: env %d, generation %lld, member %d, length %d, truncated %d", k, ep.env[k],
		          (long long)ep.gen[k], ep.member[k], ep.len[k], ep.trunc[k]);
	for (int k = 0; k < K; k++)
		CHECK_MSG(act[k] == want6[0][k] && r.reset[k] == 1,
		          "row %d after generation 6: action %d, want %d; reset %d", k, act[k], want6[0][k],
		          r.reset[k]);
	CHECK(st->restarts == K);
	/* The actor restarts them (counters 0, no flags): each starts an
	 * episode of generation 6, members 0, 1, 0, 1; nothing reported,
	 * nothing asked. */
	for (int k = 0; k < K; k++)
		e.len[k] = 0, e.ret[k] = 0;
	CHECK(step(&r, seq++, &e, act, &version));
	for (int k = 0; k < K; k++)
		CHECK_MSG(act[k] == want6[k % 2][k] && r.reset[k] == 0,
		          "row %d restarted: action %d, want member %d's %d; reset %d", k, act[k], k % 2,
		          want6[k % 2][k], r.reset[k]);
	CHECK(!r.has_reset && st->restarts == K);
	/* Row 2 is truncated: generation 6's member 0, truncated; its next
	 * episode is member 0's again (counts 2 and 2: the lowest). */
	for (int k = 0; k < K; k++)
		e.len[k] = 1;
	e.len[2] = 6;
	e.tr[2] = 1;
	e.ret[2] = 3;
	CHECK(step(&r, seq++, &e, act, &version));
	CHECK(next_episodes(&r, &ep));
	CHECK(ep.n == 1 && ep.env[0] == 2 && ep.gen[0] == 6 && ep.member[0] == 0 && ep.trunc[0] == 1 &&
	      ep.len[0] == 6 && ep.ret[0] == 3);
	CHECK(act[2] == want6[0][2]);
	e.tr[2] = 0;
	/* The episodes reach the cap of 10 steps (rows 0, 1 and 3 at step 9,
	 * row 2 at step 10): reported then, truncated, with the return so
	 * far; from then on the server asks for a restart, and an actor that
	 * does not restart them plays on unreported. */
	e.len[2] = 0;
	for (int t = 1; t <= 12; t++) {
		for (int k = 0; k < K; k++)
			e.len[k]++;
		e.ret[2] = (float)t;
		CHECK(step(&r, seq++, &e, act, &version));
		if (t == 9) {
			CHECK(next_episodes(&r, &ep));
			CHECK(ep.n == 3 && ep.env[0] == 0 && ep.env[1] == 1 && ep.env[2] == 3);
			for (int i = 0; i < 3 && i < ep.n; i++)
				CHECK(ep.gen[i] == 6 && ep.member[i] == ep.env[i] % 2 && ep.len[i] == 10 &&
				      ep.trunc[i] == 1);
		}
		if (t == 10) {
			CHECK(next_episodes(&r, &ep));
			CHECK(ep.n == 1 && ep.env[0] == 2 && ep.gen[0] == 6 && ep.member[0] == 0 &&
			      ep.ret[0] == 10 && ep.len[0] == 10 && ep.trunc[0] == 1);
		}
		for (int k = 0; k < K; k++)
			CHECK_MSG(r.reset[k] == (k == 2 ? t >= 10 : t >= 9), "step %d: row %d reset %d", t, k,
			          r.reset[k]);
	}
	CHECK(st->restarts == 2 * K);
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

/* Before the first request no agent gives the observations: the generation
 * waits, and applies from the first request on (no loose episodes). */
static void t_generation_before_actors(void)
{
	struct rig r;
	rig_open(&r, "evo-early");
	struct gen g;
	make_gen(&g, 0, 2, 77);
	publish_gen(&r, &g, 0);
	const seed_serve_stats *st = seed_serve_get_stats(r.s);
	CHECK(st->generations_taken == 1 && st->generations == 0 && st->generation == -1);
	struct envs e = {.obs = {{1, 2}, {3, 4}, {5, 6}, {7, 8}}};
	int32_t act[K];
	int64_t version;
	CHECK(step(&r, 0, &e, act, &version));
	CHECK(st->generations == 1 && st->generation == 0 && version == 0);
	/* All four rows end: members 0, 1, 0, 1 (wants 1, 1: then extras). */
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
	rig_open_opts(&r, "evo-nounrolls", false);
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

int main(void)
{
	TAP_RUN(t_population);
	TAP_RUN(t_generation_before_actors);
	TAP_RUN(t_no_unrolls_channel);
	return tap_done();
}
