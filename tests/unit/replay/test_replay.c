/* test_replay.c: seed_replay, the prioritized sequence store of seed-replay.
 *
 * Items round trip (every field of a sampled row is the row inserted under
 * its key); probabilities and importance weights against values worked by
 * hand from the definitions P(i) = p_i^alpha / sum p^alpha and w_i =
 * ((1/N)/P(i))^beta / max w; default first priorities; FIFO eviction and
 * stale keys; refused layouts and priorities; the rate limiter's decisions
 * worked by hand, and that it never blocks both sides; the sequences frame
 * (it validates, and a learner reads it with the unroll field table);
 * snapshot round trip (same items, priorities, counters and the same later
 * samples) and corrupt, truncated and mismatching snapshots refused; the
 * unrolls' frame skip, part of the layout, carried on to the sequences
 * frames and kept by snapshots (version 2, for a skip above 1), and a
 * version 1 snapshot read as frame skip 1. */
#include "seed/replay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seed/buf.h"
#include "seed/bytes.h"
#include "tap.h"

/* An unroll of B rows, T1 steps, f32 observations of OBS floats, A actions
 * and S floats of state, whose every value encodes (tag, row, step, index)
 * so that a sampled row can be traced to the row inserted. */
struct unroll {
	int B, T1, OBS, A, S;
	float *obs, *reward, *final_value, *logits, *state, *priority;
	int32_t *action, *version, *env;
	uint8_t *terminated, *truncated;
	seed_frame f;
};

static float val(int tag, int b, int t, int i)
{
	return (float)(tag * 10000 + b * 1000 + t * 10 + i);
}

static void unroll_init(struct unroll *u, int tag, int B, int T1, int OBS, int A, int S, const float *prio)
{
	*u = (struct unroll){.B = B, .T1 = T1, .OBS = OBS, .A = A, .S = S};
	u->obs = calloc((size_t)(B * T1 * OBS), 4);
	u->reward = calloc((size_t)(B * T1), 4);
	u->final_value = calloc((size_t)(B * T1), 4);
	u->logits = calloc((size_t)(B * T1 * A), 4);
	u->state = calloc((size_t)(B * (S ? S : 1)), 4);
	u->priority = calloc((size_t)B, 4);
	u->action = calloc((size_t)(B * T1), 4);
	u->version = calloc((size_t)(B * T1), 4);
	u->env = calloc((size_t)B, 4);
	u->terminated = calloc((size_t)(B * T1), 1);
	u->truncated = calloc((size_t)(B * T1), 1);
	for (int b = 0; b < B; b++) {
		u->env[b] = tag * 100 + b;
		for (int s = 0; s < S; s++)
			u->state[b * S + s] = val(tag, b, 99, s);
		for (int t = 0; t < T1; t++) {
			int i = b * T1 + t;
			for (int o = 0; o < OBS; o++)
				u->obs[i * OBS + o] = val(tag, b, t, o);
			for (int a = 0; a < A; a++)
				u->logits[i * A + a] = -val(tag, b, t, a);
			u->reward[i] = val(tag, b, t, 7);
			u->final_value[i] = val(tag, b, t, 8);
			u->action[i] = (tag + b + t) % A;
			u->version[i] = tag * 10 + t;
			u->terminated[i] = (uint8_t)((b + t) % 3 == 0);
			u->truncated[i] = (uint8_t)((b + t) % 5 == 0);
		}
		if (prio)
			u->priority[b] = prio[b];
	}
	seed_frame *f = &u->f;
	int64_t b64 = B, t64 = T1;
	seed_frame_init(f, SEED_FRAME_UNROLL);
	seed_frame_set_int(f, "run", 7 + tag);
	seed_frame_set_int(f, "actor", 3 * tag);
	seed_frame_set_int(f, "num_actions", A);
	seed_frame_set_tensor(f, "env", seed_tensor_view(u->env, SEED_DTYPE_I32, 1, &b64));
	if (S)
		seed_frame_set_tensor(f, "state",
		                      seed_tensor_view(u->state, SEED_DTYPE_F32, 2, (int64_t[]){B, S}));
	if (prio)
		seed_frame_set_tensor(f, "priority", seed_tensor_view(u->priority, SEED_DTYPE_F32, 1, &b64));
	seed_frame_set_tensor(f, "obs", seed_tensor_view(u->obs, SEED_DTYPE_F32, 3, (int64_t[]){B, T1, OBS}));
	seed_frame_set_tensor(f, "action",
	                      seed_tensor_view(u->action, SEED_DTYPE_I32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "reward",
	                      seed_tensor_view(u->reward, SEED_DTYPE_F32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "terminated",
	                      seed_tensor_view(u->terminated, SEED_DTYPE_U8, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "truncated",
	                      seed_tensor_view(u->truncated, SEED_DTYPE_U8, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "final_value",
	                      seed_tensor_view(u->final_value, SEED_DTYPE_F32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "policy_version",
	                      seed_tensor_view(u->version, SEED_DTYPE_I32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "logits",
	                      seed_tensor_view(u->logits, SEED_DTYPE_F32, 3, (int64_t[]){B, T1, A}));
	(void)t64;
	seed_err err = {{0}};
	if (seed_frame_validate(f, &err)) {
		printf("# test unroll does not validate: %s\n", err.msg);
		exit(1);
	}
}

static void unroll_free(struct unroll *u)
{
	free(u->obs);
	free(u->reward);
	free(u->final_value);
	free(u->logits);
	free(u->state);
	free(u->priority);
	free(u->action);
	free(u->version);
	free(u->env);
	free(u->terminated);
	free(u->truncated);
}

static seed_replay *make(uint64_t capacity, double alpha, double beta, uint64_t min_size, double R, double E,
                         uint64_t seed)
{
	seed_replay_opts o = {.capacity = capacity,
	                      .alpha = alpha,
	                      .beta = beta,
	                      .min_size = min_size,
	                      .samples_per_insert = R,
	                      .tolerance = E,
	                      .seed = seed};
	seed_replay *r = NULL;
	seed_err err = {{0}};
	if (seed_replay_new(&r, &o, &err)) {
		printf("# seed_replay_new: %s\n", err.msg);
		exit(1);
	}
	return r;
}

static void insert(seed_replay *r, struct unroll *u)
{
	seed_err err = {{0}};
	int rc = seed_replay_insert(r, &u->f, NULL, &err);
	CHECK_MSG(rc == 0, "insert: %s", err.msg);
}

struct batch {
	seed_replay_batch b;
	void *mem;
};

static void batch_new(seed_replay *r, int K, struct batch *out)
{
	size_t n = seed_replay_batch_bytes(r, K);
	CHECK(n > 0);
	CHECK(posix_memalign(&out->mem, 64, n) == 0);
	CHECK(seed_replay_batch_carve(r, K, out->mem, &out->b) == 0);
}

/* Whether sampled row k of b is row `row` of u, field by field. */
static int row_is(const seed_replay_batch *b, int k, const struct unroll *u, int row)
{
	int T1 = u->T1, ok = 1;
	ok &= memcmp((float *)b->field[SEED_UNROLL_OBS] + (size_t)k * T1 * u->OBS, u->obs + row * T1 * u->OBS,
	             (size_t)(T1 * u->OBS) * 4) == 0;
	ok &= memcmp((int32_t *)b->field[SEED_UNROLL_ACTION] + k * T1, u->action + row * T1,
	             (size_t)T1 * 4) == 0;
	ok &=
	    memcmp((float *)b->field[SEED_UNROLL_REWARD] + k * T1, u->reward + row * T1, (size_t)T1 * 4) == 0;
	ok &= memcmp((uint8_t *)b->field[SEED_UNROLL_TERMINATED] + k * T1, u->terminated + row * T1,
	             (size_t)T1) == 0;
	ok &= memcmp((uint8_t *)b->field[SEED_UNROLL_TRUNCATED] + k * T1, u->truncated + row * T1,
	             (size_t)T1) == 0;
	ok &= memcmp((float *)b->field[SEED_UNROLL_FINAL_VALUE] + k * T1, u->final_value + row * T1,
	             (size_t)T1 * 4) == 0;
	ok &= memcmp((int32_t *)b->field[SEED_UNROLL_POLICY_VERSION] + k * T1, u->version + row * T1,
	             (size_t)T1 * 4) == 0;
	ok &= memcmp((float *)b->field[SEED_UNROLL_LOGITS] + (size_t)k * T1 * u->A,
	             u->logits + row * T1 * u->A, (size_t)(T1 * u->A) * 4) == 0;
	if (u->S)
		ok &= memcmp(b->state + k * u->S, u->state + row * u->S, (size_t)u->S * 4) == 0;
	ok &= b->env[k] == u->env[row];
	ok &= b->run[k] == (int32_t)seed_frame_int(&u->f, "run", -1);
	ok &= b->actor[k] == (int32_t)seed_frame_int(&u->f, "actor", -1);
	return ok;
}

/* Two unrolls of 3 rows: every sampled key brings back the row inserted
 * under it (keys 0..5 in insertion order). */
static void t_roundtrip(void)
{
	seed_replay *r = make(16, 0.9, 0.6, 1, 0, 0, 1);
	struct unroll u0, u1;
	unroll_init(&u0, 1, 3, 5, 4, 3, 2, NULL);
	unroll_init(&u1, 2, 3, 5, 4, 3, 2, NULL);
	CHECK(seed_replay_get_layout(r) == NULL);
	int64_t key = -1;
	seed_err err = {{0}};
	/* u1 says which action came before its step 0; u0 does not (-1). */
	int32_t prev1[3] = {7, 8, 9};
	seed_frame_set_tensor(&u1.f, "prev_action",
	                      seed_tensor_view(prev1, SEED_DTYPE_I32, 1, (int64_t[]){3}));
	CHECK(seed_replay_insert(r, &u0.f, &key, &err) == 0 && key == 0);
	CHECK(seed_replay_insert(r, &u1.f, &key, &err) == 0 && key == 3);
	const seed_replay_layout *l = seed_replay_get_layout(r);
	CHECK(l && l->steps == 5 && l->num_actions == 3 && l->obs_rank == 1 && l->obs_shape[0] == 4 &&
	      l->state_size == 2 && l->obs_dtype == SEED_DTYPE_F32);
	/* One item: obs 5*4*4, action, reward, final_value, version 5*4 each,
	 * flags 5*2, logits 5*3*4, state 2*4, previous action, env, run,
	 * actor 4 each. */
	size_t item = 80 + 4 * 20 + 10 + 60 + 8 + 16;
	CHECK_MSG(seed_replay_item_bytes(l) == item, "%zu", seed_replay_item_bytes(l));
	seed_replay_stats st;
	seed_replay_stats_get(r, &st);
	CHECK(st.size == 6 && st.inserted == 6 && st.bytes >= 16 * item && st.bytes < 16 * item + 64 * 12);
	struct batch b;
	batch_new(r, 32, &b);
	CHECK(seed_replay_sample(r, &b.b, &err) == 0);
	int seen[6] = {0};
	for (int k = 0; k < 32; k++) {
		int64_t id = b.b.key[k];
		CHECK(id >= 0 && id < 6);
		if (id < 0 || id >= 6)
			continue;
		seen[id] = 1;
		CHECK_MSG(row_is(&b.b, k, id < 3 ? &u0 : &u1, (int)(id % 3)), "row %d key %lld", k,
		          (long long)id);
		CHECK(b.b.prev_action && b.b.prev_action[k] == (id < 3 ? -1 : 7 + (int32_t)(id % 3)));
		/* Equal priorities: P = 1/6, every weight 1. */
		CHECK_NEAR(b.b.prob[k], 1.0 / 6, 1e-12);
		CHECK_NEAR(b.b.weight[k], 1.0, 1e-6);
	}
	for (int i = 0; i < 6; i++)
		CHECK_MSG(seen[i], "key %d never sampled in 32 stratified draws of 6 equal items", i);
	seed_replay_stats_get(r, &st);
	CHECK(st.sampled == 32 && st.samples == 1);
	seed_frame sf;
	CHECK(seed_replay_batch_frame(r, &b.b, &sf) == 0 && seed_frame_validate(&sf, &err) == 0);
	const seed_tensor *pa = seed_frame_tensor(&sf, "prev_action");
	CHECK(pa && pa->dtype == SEED_DTYPE_I32 && pa->shape[0] == 32);
	free(b.mem);
	unroll_free(&u0);
	unroll_free(&u1);
	seed_replay_free(&r);
	CHECK(r == NULL);
	seed_replay_free(&r);
}

/* Priorities 1, 4, 9, 16 with alpha 0.5 make p^alpha 1, 2, 3, 4: P(i) =
 * 0.1, 0.2, 0.3, 0.4; with beta 0.5, w_i = sqrt((1/4)/P(i)) = sqrt(2.5),
 * sqrt(1.25), sqrt(5/6), sqrt(0.625), each over the batch's largest.  The
 * empirical frequencies over many batches approach P. */
static void t_probabilities(void)
{
	const float prio[4] = {1, 4, 9, 16};
	const double P[4] = {0.1, 0.2, 0.3, 0.4};
	const double w[4] = {1.5811388300841898, 1.1180339887498949, 0.9128709291752769, 0.7905694150420949};
	seed_replay *r = make(8, 0.5, 0.5, 4, 0, 0, 3);
	struct unroll u;
	unroll_init(&u, 1, 4, 2, 1, 2, 0, prio);
	insert(r, &u);
	double p;
	CHECK(seed_replay_priority(r, 2, &p) == 0 && p == 9);
	struct batch b;
	batch_new(r, 8, &b);
	long count[4] = {0};
	enum { ROUNDS = 4000 };
	seed_err err = {{0}};
	for (int round = 0; round < ROUNDS; round++) {
		CHECK(seed_replay_sample(r, &b.b, &err) == 0);
		double wmax = 0;
		for (int k = 0; k < 8; k++)
			wmax = fmax(wmax, w[b.b.key[k]]);
		for (int k = 0; k < 8; k++) {
			int64_t id = b.b.key[k];
			count[id]++;
			if (round < 50) {
				CHECK_NEAR(b.b.prob[k], P[id], 1e-12);
				CHECK_NEAR(b.b.weight[k], w[id] / wmax, 1e-6);
				CHECK(row_is(&b.b, k, &u, (int)id));
			}
		}
	}
	for (int i = 0; i < 4; i++) {
		double f = (double)count[i] / (8.0 * ROUNDS);
		/* Stratified draws: the binomial sd sqrt(P(1-P)/n) < 0.0028 bounds
		 * the error; 0.015 is more than 5 of them. */
		CHECK_MSG(fabs(f - P[i]) < 0.015, "item %d drawn %.4f, P %.2f", i, f, P[i]);
	}
	free(b.mem);
	unroll_free(&u);
	seed_replay_free(&r);
}

/* Without a priority field rows enter at the largest stored priority, 1
 * for an empty replay. */
static void t_default_priority(void)
{
	seed_replay *r = make(8, 0.9, 0.6, 1, 0, 0, 1);
	struct unroll u;
	unroll_init(&u, 1, 2, 3, 2, 2, 0, NULL);
	insert(r, &u);
	double p;
	CHECK(seed_replay_priority(r, 0, &p) == 0 && p == 1);
	CHECK(seed_replay_priority(r, 1, &p) == 0 && p == 1);
	CHECK(seed_replay_update(r, 2, (int64_t[]){0, 1}, (float[]){5, 0.25f}) == 2);
	insert(r, &u);
	CHECK(seed_replay_priority(r, 2, &p) == 0 && p == 5);
	CHECK(seed_replay_priority(r, 3, &p) == 0 && p == 5);
	CHECK(seed_replay_priority(r, 1, &p) == 0 && p == 0.25);
	CHECK(seed_replay_priority(r, 4, &p) == -ESTALE);
	unroll_free(&u);
	seed_replay_free(&r);
}

/* Capacity 5, three unrolls of 2 rows: key 5 evicts key 0; updates for it
 * (and for keys never inserted) are stale; samples never return it. */
static void t_eviction(void)
{
	seed_replay *r = make(5, 1, 1, 1, 0, 0, 9);
	struct unroll u[3];
	for (int i = 0; i < 3; i++) {
		unroll_init(&u[i], i + 1, 2, 3, 2, 2, 1, (float[]){1, 1});
		insert(r, &u[i]);
	}
	seed_replay_stats st;
	seed_replay_stats_get(r, &st);
	CHECK(st.size == 5 && st.inserted == 6 && st.evicted == 1);
	double p;
	CHECK(seed_replay_priority(r, 0, &p) == -ESTALE);
	CHECK(seed_replay_update(r, 3, (int64_t[]){0, 9, -4}, (float[]){2, 2, 2}) == 0);
	CHECK(seed_replay_update(r, 2, (int64_t[]){1, 5}, (float[]){NAN, -1}) == 0);
	seed_replay_stats_get(r, &st);
	CHECK_MSG(st.stale == 3 && st.refused == 2, "stale %llu refused %llu", (unsigned long long)st.stale,
	          (unsigned long long)st.refused);
	struct batch b;
	batch_new(r, 64, &b);
	seed_err err = {{0}};
	CHECK(seed_replay_sample(r, &b.b, &err) == 0);
	for (int k = 0; k < 64; k++) {
		int64_t id = b.b.key[k];
		CHECK(id >= 1 && id <= 5);
		if (id >= 1 && id <= 5)
			CHECK_MSG(row_is(&b.b, k, &u[id / 2], (int)(id % 2)), "key %lld", (long long)id);
	}
	/* Every priority 0: stored but never sampled. */
	CHECK(seed_replay_update(r, 5, (int64_t[]){1, 2, 3, 4, 5}, (float[]){0, 0, 0, 0, 0}) == 5);
	CHECK(seed_replay_sample(r, &b.b, &err) == -ENOENT && strstr(err.msg, "0"));
	free(b.mem);
	for (int i = 0; i < 3; i++)
		unroll_free(&u[i]);
	seed_replay_free(&r);
}

/* An unroll of another layout is refused and counted; so is a bad
 * priority; nothing is stored by either. */
static void t_layout_refused(void)
{
	seed_replay *r = make(8, 0.9, 0.6, 1, 0, 0, 1);
	struct unroll u, v;
	unroll_init(&u, 1, 2, 3, 2, 2, 1, NULL);
	insert(r, &u);
	seed_err err = {{0}};
	seed_replay_stats st0;
	struct {
		const char *name;
		int T1, OBS, A, S;
	} cases[] = {
	    {"steps", 4, 2, 2, 1}, {"obs", 3, 3, 2, 1}, {"actions", 3, 2, 3, 1}, {"state", 3, 2, 2, 0}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unroll_init(&v, 2, 2, cases[i].T1, cases[i].OBS, cases[i].A, cases[i].S, NULL);
		int rc = seed_replay_insert(r, &v.f, NULL, &err);
		CHECK_MSG(rc == -SEED_EFRAME && strstr(err.msg, "layout"), "%s: %d %s", cases[i].name, rc,
		          err.msg);
		unroll_free(&v);
	}
	unroll_init(&v, 2, 2, 3, 2, 2, 1, (float[]){1, -2});
	CHECK(seed_replay_insert(r, &v.f, NULL, &err) == -SEED_EFRAME && strstr(err.msg, "priority"));
	unroll_free(&v);
	unroll_init(&v, 2, 2, 3, 2, 2, 1, (float[]){1, INFINITY});
	CHECK(seed_replay_insert(r, &v.f, NULL, &err) == -SEED_EFRAME && strstr(err.msg, "row 1"));
	unroll_free(&v);
	/* 1e30^20 overflows: the sum tree would refuse it, so the frame is. */
	seed_replay *steep = make(8, 20, 0.6, 1, 0, 0, 1);
	unroll_init(&v, 2, 2, 3, 2, 2, 1, (float[]){1, 1e30f});
	CHECK(seed_replay_insert(steep, &v.f, NULL, &err) == -SEED_EFRAME && strstr(err.msg, "row 1"));
	seed_replay_stats_get(steep, &st0);
	CHECK(st0.size == 0);
	unroll_free(&v);
	seed_replay_free(&steep);
	seed_replay_stats st;
	seed_replay_stats_get(r, &st);
	CHECK(st.size == 2 && st.bad_layout == 4);
	/* A layout too large for max_bytes is refused before allocating. */
	seed_replay_opts o = {.capacity = 1000, .alpha = 1, .beta = 1, .min_size = 1, .max_bytes = 1000};
	seed_replay *small = NULL;
	CHECK(seed_replay_new(&small, &o, &err) == 0);
	CHECK(seed_replay_insert(small, &u.f, NULL, &err) == -E2BIG && strstr(err.msg, "allowed"));
	seed_replay_free(&small);
	/* Bad options. */
	o = (seed_replay_opts){.capacity = 4, .alpha = 1, .beta = 1, .min_size = 5};
	CHECK(seed_replay_new(&small, &o, &err) == -EINVAL && strstr(err.msg, "minimum size"));
	o.min_size = 1;
	o.tolerance = -1;
	CHECK(seed_replay_new(&small, &o, &err) == -EINVAL && strstr(err.msg, "tolerance"));
	o.tolerance = 0;
	o.capacity = 0;
	CHECK(seed_replay_new(&small, &o, &err) == -EINVAL && strstr(err.msg, "capacity"));
	CHECK(small == NULL);
	unroll_free(&u);
	seed_replay_free(&r);
}

/* The limiter, R = 1, E = 2, M = 4 (c = 4, diff = inserted - sampled),
 * worked by hand: inserts while diff <= 6, a sample of K while size >= 4
 * and diff - K >= 2; K > 4 never. */
/* The replay holds discrete actions: an unroll of a Box action space (f32
 * actions [B, T+1, A], parameters [B, T+1, 2A]), a frame the schema
 * accepts, is refused by name before anything is stored. */
static void t_box_refused(void)
{
	seed_replay *r = make(8, 0.9, 0.6, 1, 0, 0, 1);
	struct unroll u;
	unroll_init(&u, 1, 2, 3, 2, 2, 0, NULL);
	float act[12] = {0.5f}, params[24] = {0};
	seed_frame_set_tensor(&u.f, "action", seed_tensor_view(act, SEED_DTYPE_F32, 3, (int64_t[]){2, 3, 2}));
	seed_frame_set_tensor(&u.f, "logits",
	                      seed_tensor_view(params, SEED_DTYPE_F32, 3, (int64_t[]){2, 3, 4}));
	seed_err err = {{0}};
	CHECK_MSG(seed_frame_validate(&u.f, &err) == 0, "%s", err.msg);
	int rc = seed_replay_insert(r, &u.f, NULL, &err);
	CHECK_MSG(rc == -SEED_EFRAME && strcmp(err.msg, "unroll frame: field 'action': f32, a Box action "
	                                                "space; the replay holds discrete actions (i32) "
	                                                "only") == 0,
	          "%d %s", rc, err.msg);
	seed_replay_stats st;
	seed_replay_stats_get(r, &st);
	CHECK(st.size == 0 && seed_replay_get_layout(r) == NULL);
	unroll_free(&u);
	seed_replay_free(&r);
}

static void t_limiter(void)
{
	seed_replay *r = make(64, 1, 1, 4, 1, 2, 1);
	struct unroll one, three;
	unroll_init(&one, 1, 1, 2, 1, 2, 0, NULL);
	unroll_init(&three, 1, 3, 2, 1, 2, 0, NULL);
	struct batch b;
	seed_err err = {{0}};
	CHECK(seed_replay_insert_ready(r));
	CHECK(seed_replay_sample_ready(r, 1) == SEED_REPLAY_WAIT); /* empty */
	insert(r, &three);                                         /* I 3 */
	CHECK(seed_replay_sample_ready(r, 1) == SEED_REPLAY_WAIT); /* size 3 < 4 */
	insert(r, &one);                                           /* I 4, diff 4 */
	batch_new(r, 2, &b);
	CHECK(seed_replay_sample_ready(r, 2) == SEED_REPLAY_READY); /* 4 - 2 = 2 >= 2 */
	CHECK(seed_replay_sample_ready(r, 3) == SEED_REPLAY_WAIT);  /* 4 - 3 < 2 */
	CHECK(seed_replay_sample_ready(r, 5) == SEED_REPLAY_NEVER); /* 5 > 2E */
	CHECK(seed_replay_sample_ready(r, 0) == SEED_REPLAY_NEVER);
	CHECK(seed_replay_sample(r, &b.b, &err) == 0);             /* S 2, diff 2 */
	CHECK(seed_replay_sample_ready(r, 1) == SEED_REPLAY_WAIT); /* 2 - 1 < 2 */
	CHECK(seed_replay_insert_ready(r));
	insert(r, &three); /* I 7, diff 5 */
	CHECK(seed_replay_insert_ready(r));
	insert(r, &one); /* I 8, diff 6 */
	CHECK(seed_replay_insert_ready(r));
	insert(r, &one); /* I 9, diff 7 > 6 */
	CHECK(!seed_replay_insert_ready(r));
	CHECK(seed_replay_sample_ready(r, 2) == SEED_REPLAY_READY);
	CHECK(seed_replay_sample(r, &b.b, &err) == 0); /* diff 5 */
	CHECK(seed_replay_insert_ready(r));
	free(b.mem);
	seed_replay_free(&r);

	/* R = 0: no limiter, only the minimum size. */
	r = make(64, 1, 1, 2, 0, 0, 1);
	insert(r, &one);
	CHECK(seed_replay_sample_ready(r, 1000) == SEED_REPLAY_WAIT);
	insert(r, &one);
	CHECK(seed_replay_sample_ready(r, 1000) == SEED_REPLAY_READY);
	for (int i = 0; i < 40; i++)
		insert(r, &three);
	CHECK(seed_replay_insert_ready(r));
	seed_replay_free(&r);

	/* Never both blocked while K <= 2E, over a grid of states. */
	const double Rs[] = {0.25, 1, 3, 8};
	for (size_t ri = 0; ri < 4; ri++)
		for (int E2 = 1; E2 <= 6; E2++) {
			double E = E2 / 2.0 * 4;
			r = make(4096, 1, 1, 3, Rs[ri], E, 1);
			int deadlocks = 0, in_blocked = 0, sample_waits = 0;
			for (int step = 0; step < 400; step++) {
				bool in = seed_replay_insert_ready(r);
				int K = 1 + step % (int)(2 * E > 1 ? 2 * E : 1);
				int sr = seed_replay_sample_ready(r, K);
				seed_replay_stats st;
				seed_replay_stats_get(r, &st);
				if (!in && sr != SEED_REPLAY_READY && st.size >= 3)
					deadlocks++;
				in_blocked += !in;
				sample_waits += sr == SEED_REPLAY_WAIT && st.size >= 3;
				/* Phases of 40 steps: inserting first, then sampling first. */
				bool insert_first = (step / 40) % 2 == 0;
				if (sr == SEED_REPLAY_READY && (!insert_first || !in)) {
					struct batch bk;
					batch_new(r, K, &bk);
					CHECK(seed_replay_sample(r, &bk.b, &err) == 0);
					free(bk.mem);
				} else if (in) {
					insert(r, step % 2 ? &one : &three);
				}
			}
			CHECK_MSG(deadlocks == 0, "R %g E %g: %d states with both sides blocked", Rs[ri], E,
			          deadlocks);
			/* Both sides were held back at times: the grid tests something. */
			CHECK_MSG(in_blocked > 0 && sample_waits > 0, "R %g E %g: %d, %d", Rs[ri], E,
			          in_blocked, sample_waits);
			seed_replay_free(&r);
		}
	unroll_free(&one);
	unroll_free(&three);
}

/* The sequences frame of a batch validates, encodes and decodes, and reads
 * with the unroll field table: shapes [K, T+1, ...]. */
static void t_frame(void)
{
	seed_replay *r = make(8, 0.9, 0.6, 1, 0, 0, 1);
	struct unroll u;
	unroll_init(&u, 1, 3, 4, 2, 3, 2, (float[]){1, 2, 3});
	insert(r, &u);
	struct batch b;
	batch_new(r, 5, &b);
	seed_err err = {{0}};
	CHECK(seed_replay_sample(r, &b.b, &err) == 0);
	seed_frame f, g;
	CHECK(seed_replay_batch_frame(r, &b.b, &f) == 0);
	seed_buf out = {0};
	CHECK_MSG(seed_frame_encode(&f, &out, &err) == 0, "%s", err.msg);
	CHECK(seed_frame_decode(&g, out.data, out.len, &err) == 0 && g.type == SEED_FRAME_SEQUENCES);
	for (int k = 0; k < SEED_UNROLL_NFIELDS; k++) {
		const seed_tensor *t = seed_frame_tensor(&g, seed_frame_unroll_fields[k].name);
		CHECK(t && t->shape[0] == 5 && t->shape[1] == 4);
	}
	const seed_tensor *key = seed_frame_tensor(&g, "key"), *w = seed_frame_tensor(&g, "weight");
	CHECK(key && key->dtype == SEED_DTYPE_I64 && key->shape[0] == 5);
	CHECK(w && w->dtype == SEED_DTYPE_F32 && w->shape[0] == 5);
	const seed_tensor *st = seed_frame_tensor(&g, "state");
	CHECK(st && st->shape[0] == 5 && st->shape[1] == 2);
	CHECK(strcmp(seed_frame_type_name(SEED_FRAME_SEQUENCES), "sequences") == 0);
	CHECK(seed_frame_type_parse("priority", 8) == SEED_FRAME_PRIORITY);
	/* A priority frame applies; one with mismatched lengths is refused by
	 * the schema; a sample frame needs batch >= 1. */
	seed_frame p;
	int64_t keys[2] = {0, 2};
	float pr[3] = {7, 8, 9};
	seed_frame_init(&p, SEED_FRAME_PRIORITY);
	seed_frame_set_tensor(&p, "key", seed_tensor_view(keys, SEED_DTYPE_I64, 1, (int64_t[]){2}));
	seed_frame_set_tensor(&p, "priority", seed_tensor_view(pr, SEED_DTYPE_F32, 1, (int64_t[]){2}));
	CHECK(seed_frame_validate(&p, &err) == 0);
	size_t applied = 0;
	double pv;
	CHECK(seed_replay_update_frame(r, &p, &applied, &err) == 0 && applied == 2);
	CHECK(seed_replay_priority(r, 2, &pv) == 0 && pv == 8);
	seed_frame_set_tensor(&p, "priority", seed_tensor_view(pr, SEED_DTYPE_F32, 1, (int64_t[]){3}));
	CHECK(seed_frame_validate(&p, &err) == -SEED_EFRAME && strstr(err.msg, "priority"));
	seed_frame_init(&p, SEED_FRAME_SAMPLE);
	seed_frame_set_int(&p, "batch", 0);
	CHECK(seed_frame_validate(&p, &err) == -SEED_EFRAME && strstr(err.msg, "batch"));
	seed_frame_set_int(&p, "batch", 64);
	CHECK(seed_frame_validate(&p, &err) == 0);
	seed_buf_free(&out);
	free(b.mem);
	unroll_free(&u);
	seed_replay_free(&r);
}

static char tmpdir[] = "/tmp/test_replay.XXXXXX";

/* Fill, update, save; a fresh replay restores the same state, and both
 * then sample the same keys with the same weights and rows. */
static void t_snapshot(void)
{
	char path[64];
	snprintf(path, sizeof path, "%s/replay.snap", tmpdir);
	seed_replay *r = make(7, 0.9, 0.6, 2, 1, 8, 42);
	struct unroll u[4];
	for (int i = 0; i < 4; i++) {
		unroll_init(&u[i], i + 1, 3, 3, 2, 3, 2, (float[]){1.5f + i, 0.5f, 2});
		insert(r, &u[i]); /* 12 rows through 7 slots: the runs wrap */
	}
	seed_replay_update(r, 2, (int64_t[]){6, 11}, (float[]){9, 0.125f});
	struct batch b1, b2;
	batch_new(r, 6, &b1);
	seed_err err = {{0}};
	CHECK(seed_replay_sample(r, &b1.b, &err) == 0);
	CHECK_MSG(seed_replay_save(r, path, &err) == 0, "%s", err.msg);
	seed_replay *q = make(7, 0.9, 0.6, 2, 1, 8, 999); /* another seed: the state comes from the file */
	CHECK_MSG(seed_replay_load(q, path, &err) == 0, "%s", err.msg);
	seed_replay_stats a, c;
	seed_replay_stats_get(r, &a);
	seed_replay_stats_get(q, &c);
	CHECK(a.size == c.size && a.inserted == c.inserted && a.sampled == c.sampled &&
	      a.samples == c.samples && a.updated == c.updated && a.evicted == c.evicted && c.size == 7);
	CHECK(seed_replay_insert_ready(r) == seed_replay_insert_ready(q));
	for (int64_t k = 0; k < 12; k++) {
		double pa, pb;
		int ra = seed_replay_priority(r, k, &pa), rb = seed_replay_priority(q, k, &pb);
		CHECK(ra == rb && (ra || pa == pb));
	}
	batch_new(q, 6, &b2);
	for (int round = 0; round < 3; round++) {
		CHECK(seed_replay_sample(r, &b1.b, &err) == 0);
		CHECK(seed_replay_sample(q, &b2.b, &err) == 0);
		for (int k = 0; k < 6; k++) {
			int64_t id = b2.b.key[k];
			CHECK(b1.b.key[k] == id && b1.b.weight[k] == b2.b.weight[k]);
			CHECK_MSG(id >= 5 && id < 12 && row_is(&b2.b, k, &u[id / 3], (int)(id % 3)),
			          "key %lld", (long long)id);
		}
	}
	/* Inserting goes on from the restored keys. */
	int64_t key;
	CHECK(seed_replay_insert(q, &u[0].f, &key, &err) == 0 && key == 12);
	free(b1.mem);
	free(b2.mem);
	seed_replay_free(&q);

	/* An empty replay (no layout yet) round trips too. */
	char path2[64];
	snprintf(path2, sizeof path2, "%s/empty.snap", tmpdir);
	q = make(7, 0.9, 0.6, 2, 1, 8, 5);
	CHECK(seed_replay_save(q, path2, &err) == 0);
	seed_replay *e = make(7, 0.9, 0.6, 2, 1, 8, 5);
	CHECK(seed_replay_load(e, path2, &err) == 0 && seed_replay_get_layout(e) == NULL);
	seed_replay_free(&e);
	seed_replay_free(&q);
	seed_replay_free(&r);
	for (int i = 0; i < 4; i++)
		unroll_free(&u[i]);
}

/* Truncated, corrupt, foreign and mismatching snapshots are refused, the
 * message naming the file, and the replay is left as it was. */
static void t_snapshot_refused(void)
{
	char path[64], bad[64];
	snprintf(path, sizeof path, "%s/replay.snap", tmpdir);
	snprintf(bad, sizeof bad, "%s/bad.snap", tmpdir);
	void *data;
	size_t len;
	seed_err err = {{0}};
	CHECK(seed_fs_read(path, 0, &data, &len, &err) == 0);
	seed_replay *r = make(7, 0.9, 0.6, 2, 1, 8, 42);
	CHECK(seed_replay_restore(r, data, len, &err) == 0);
	seed_replay_stats before;
	seed_replay_stats_get(r, &before);
	unsigned char *copy = malloc(len);
	struct {
		const char *name, *msg;
		size_t cut;  /* bytes kept; 0: all */
		size_t flip; /* byte flipped, or SIZE_MAX */
	} cases[] = {
	    {"empty", "not a replay snapshot", 1, SIZE_MAX},
	    {"magic", "not a replay snapshot", 0, 0},
	    {"truncated", "checksum", len - 1, SIZE_MAX},
	    {"half", "checksum", len / 2, SIZE_MAX},
	    {"header byte", "checksum", 0, 20},
	    {"item byte", "checksum", 0, len - 100},
	    {"checksum byte", "checksum", 0, len - 3},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memcpy(copy, data, len);
		if (cases[i].flip != SIZE_MAX)
			copy[cases[i].flip] ^= 0x40;
		size_t n = cases[i].cut ? cases[i].cut : len;
		if (i == 0)
			n = 0;
		CHECK(seed_fs_write_atomic(bad, &(seed_fs_part){copy, n}, 1, &err) == 0);
		int rc = seed_replay_load(r, bad, &err);
		CHECK_MSG(rc == -EBADMSG && strstr(err.msg, cases[i].msg) && strstr(err.msg, "bad.snap"),
		          "%s: %d %s", cases[i].name, rc, err.msg);
	}
	seed_replay_stats after;
	seed_replay_stats_get(r, &after);
	CHECK(after.inserted == before.inserted && after.sampled == before.sampled);
	/* Mismatching options and layouts. */
	seed_replay *q = make(8, 0.9, 0.6, 2, 1, 8, 42);
	CHECK(seed_replay_load(q, path, &err) == -EINVAL && strstr(err.msg, "capacity 7"));
	seed_replay_free(&q);
	q = make(7, 0.8, 0.6, 2, 1, 8, 42);
	CHECK(seed_replay_load(q, path, &err) == -EINVAL && strstr(err.msg, "alpha"));
	seed_replay_free(&q);
	q = make(7, 0.9, 0.6, 2, 1, 8, 42);
	struct unroll u;
	unroll_init(&u, 1, 1, 4, 2, 3, 2, NULL);
	insert(q, &u);
	CHECK(seed_replay_load(q, path, &err) == -EINVAL && strstr(err.msg, "layout"));
	seed_replay_free(&q);
	unroll_free(&u);
	CHECK(seed_replay_load(r, "/nonexistent/replay.snap", &err) < 0 && strstr(err.msg, "nonexistent"));
	unlink(bad);
	unlink(path);
	free(copy);
	free(data);
	seed_replay_free(&r);
}

/* The frame skip of the sequences frames of r sampled now (-1: no field). */
static int64_t sampled_skip(seed_replay *r)
{
	struct batch b;
	batch_new(r, 2, &b);
	seed_err err = {{0}};
	seed_frame f, g;
	seed_buf out = {0};
	int64_t skip = -2;
	if (seed_replay_sample(r, &b.b, &err) == 0 && seed_replay_batch_frame(r, &b.b, &f) == 0 &&
	    seed_frame_encode(&f, &out, &err) == 0 && seed_frame_decode(&g, out.data, out.len, &err) == 0)
		skip = seed_frame_int(&g, "frame_skip", -1);
	seed_buf_free(&out);
	free(b.mem);
	return skip;
}

/* Rewrite snapshot file bytes a (len) with checksum: the last 8 bytes. */
static void resum(unsigned char *a, size_t len)
{
	seed_le_put64(a + len - 8, seed_fnv1a(SEED_FNV1A_INIT, a, len - 8));
}

/* The frame skip is part of the layout: unrolls of skip 4 make sequences
 * frames of skip 4, and an unroll of skip 1 (no field) is then refused as
 * another layout.  Snapshots: a layout of skip 4 is version 2 (200 header
 * bytes: version 1's 192, then the skip and a zero) and keeps it; one of
 * skip 1 is version 1, as every snapshot before (one form: a version 2
 * of skip 1 is refused).  A version 1 snapshot of the same items (made
 * here by taking the 8 bytes out) reads as frame skip 1, with its items,
 * and a replay of skip 4 refuses it as another layout. */
static void t_frame_skip(void)
{
	seed_err err = {{0}};
	seed_replay *r = make(4, 0.9, 0.6, 1, 0, 0, 3);
	struct unroll u, plain;
	unroll_init(&u, 1, 2, 3, 2, 3, 0, NULL);
	unroll_init(&plain, 2, 2, 3, 2, 3, 0, NULL);
	seed_frame_set_int(&u.f, "frame_skip", 4);
	insert(r, &u);
	CHECK(seed_replay_get_layout(r)->frame_skip == 4);
	CHECK_MSG(sampled_skip(r) == 4, "%lld", (long long)sampled_skip(r));
	int rc = seed_replay_insert(r, &plain.f, NULL, &err);
	CHECK_MSG(rc == -SEED_EFRAME && strstr(err.msg, "but the replay holds") &&
	              strstr(err.msg, ", frame skip 4") && !strstr(err.msg, "S 0, frame skip 1"),
	          "%d %s", rc, err.msg);
	seed_replay_stats st;
	seed_replay_stats_get(r, &st);
	CHECK(st.bad_layout == 1 && st.size == 2);
	char path[64];
	snprintf(path, sizeof path, "%s/skip.snap", tmpdir);
	CHECK_MSG(seed_replay_save(r, path, &err) == 0, "%s", err.msg);
	void *data;
	size_t len;
	CHECK(seed_fs_read(path, 0, &data, &len, &err) == 0);
	unsigned char *v2 = data;
	const size_t h1 = 192;
	CHECK(seed_le_get32(v2 + 8) == 2 && seed_le_get32(v2 + 12) == h1 + 8 && seed_le_get32(v2 + h1) == 4 &&
	      seed_le_get32(v2 + h1 + 4) == 0);
	seed_replay *q = make(4, 0.9, 0.6, 1, 0, 0, 3);
	CHECK_MSG(seed_replay_load(q, path, &err) == 0, "%s", err.msg);
	CHECK(seed_replay_get_layout(q) && seed_replay_get_layout(q)->frame_skip == 4);
	CHECK(sampled_skip(q) == 4);
	seed_replay_free(&q);
	/* Version 2 of skip 1: not the one form of that layout. */
	seed_le_put32(v2 + h1, 1);
	resum(v2, len);
	q = make(4, 0.9, 0.6, 1, 0, 0, 3);
	rc = seed_replay_restore(q, v2, len, &err);
	CHECK_MSG(rc == -EBADMSG && strstr(err.msg, "version 2 is for a layout of frame skip 2 or more"),
	          "%d %s", rc, err.msg);
	seed_replay_free(&q);

	/* Version 1 of the same items: frame skip 1. */
	unsigned char *v1 = malloc(len - 8);
	memcpy(v1, v2, h1);
	memcpy(v1 + h1, v2 + h1 + 8, len - h1 - 8);
	seed_le_put32(v1 + 8, 1);
	seed_le_put32(v1 + 12, (uint32_t)h1);
	resum(v1, len - 8);
	q = make(4, 0.9, 0.6, 1, 0, 0, 3);
	rc = seed_replay_restore(q, v1, len - 8, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	CHECK(seed_replay_get_layout(q) && seed_replay_get_layout(q)->frame_skip == 1);
	CHECK(sampled_skip(q) == -1); /* skip 1: no field, as before */
	struct batch b;
	batch_new(q, 2, &b);
	CHECK(seed_replay_sample(q, &b.b, &err) == 0);
	for (int k = 0; k < 2; k++)
		CHECK(row_is(&b.b, k, &u, (int)b.b.key[k]));
	free(b.mem);
	/* Saved again: version 1, byte for byte. */
	CHECK(seed_replay_restore(q, v1, len - 8, &err) == 0);
	CHECK(seed_replay_save(q, path, &err) == 0);
	void *again;
	size_t alen;
	CHECK(seed_fs_read(path, 0, &again, &alen, &err) == 0);
	CHECK(alen == len - 8 && memcmp(again, v1, alen) == 0);
	free(again);
	seed_replay_free(&q);
	/* ... and a replay of skip 4 refuses it as another layout. */
	rc = seed_replay_restore(r, v1, len - 8, &err);
	CHECK_MSG(rc == -EINVAL && strstr(err.msg, "snapshot layout") && strstr(err.msg, "frame skip 4"),
	          "%d %s", rc, err.msg);
	free(v1);
	free(data);
	unlink(path);
	seed_replay_free(&r);
	unroll_free(&u);
	unroll_free(&plain);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	TAP_RUN(t_roundtrip);
	TAP_RUN(t_probabilities);
	TAP_RUN(t_default_priority);
	TAP_RUN(t_eviction);
	TAP_RUN(t_layout_refused);
	TAP_RUN(t_box_refused);
	TAP_RUN(t_limiter);
	TAP_RUN(t_frame);
	TAP_RUN(t_snapshot);
	TAP_RUN(t_snapshot_refused);
	TAP_RUN(t_frame_skip);
	char p[80];
	snprintf(p, sizeof p, "%s/empty.snap", tmpdir);
	unlink(p);
	rmdir(tmpdir);
	return tap_done();
}
