/* test_unroll.c: seed_unroll's transition rule against cases worked by hand,
 * and the assembly of steps into unrolls (overlap, state at step 0, the
 * frame it makes; discrete and Box action spaces) against values written
 * out by hand below. */
#include "seed/unroll.h"

#include <errno.h>
#include <string.h>

#include "tap.h"

/* ---- the transition rule ------------------------------------------------- */

#define TMAX 3
#define BMAX 2

/* Inputs time-major [T+1][B]; the wanted outputs [T][B], worked by hand with
 * gamma 0.5 (exact in binary, so equality is exact). */
struct tcase {
	const char *name;
	int T, B;
	float reward[(TMAX + 1) * BMAX];
	uint8_t term[(TMAX + 1) * BMAX], trunc[(TMAX + 1) * BMAX];
	float final_value[(TMAX + 1) * BMAX];
	float want_r[TMAX * BMAX], want_d[TMAX * BMAX];
};

static const struct tcase tcases[] = {
    /* No end: rewards of steps 1..T, discount gamma. */
    {"no episode ends", 2, 2, {9, 9, 1, 2, 3, 4}, {0}, {0}, {0}, {1, 2, 3, 4}, {0.5f, 0.5f, 0.5f, 0.5f}},
    /* Step 1 of row 0 terminates: transition 0 of row 0 has discount 0 and
     * its reward unchanged (final_value there is ignored). */
    {"termination: discount 0, no bootstrap",
     2,
     2,
     {0, 0, 1, 2, 3, 4},
     {0, 0, 1, 0, 0, 0},
     {0},
     {0, 0, 7, 0, 0, 0},
     {1, 2, 3, 4},
     {0, 0.5f, 0.5f, 0.5f}},
    /* Step 2 of row 1 is a truncation with final value 10: transition 1 of
     * row 1 gets 4 + 0.5 * 10 = 9 and discount 0. */
    {"truncation: gamma * final value folded in, discount 0",
     2,
     2,
     {0, 0, 1, 2, 3, 4},
     {0},
     {0, 0, 0, 0, 0, 1},
     {0, 0, 0, 0, 0, 10},
     {1, 2, 3, 9},
     {0.5f, 0.5f, 0.5f, 0}},
    /* Both flags on one step: termination wins, 2 stays 2. */
    {"both flags on one step: termination wins",
     2,
     2,
     {0, 0, 1, 2, 3, 4},
     {0, 0, 0, 1, 0, 0},
     {0, 0, 0, 1, 0, 0},
     {0, 0, 0, 10, 0, 0},
     {1, 2, 3, 4},
     {0.5f, 0, 0.5f, 0.5f}},
    /* Flags and reward of step 0 belong to the previous unroll's last
     * transition: they change nothing here. */
    {"step 0 is not a transition of this unroll", 1, 1, {5, 1}, {1, 0}, {1, 0}, {3, 0}, {1}, {0.5f}},
    /* One row, three transitions: truncation, plain, termination. */
    {"one row, truncation then termination",
     3,
     1,
     {0, -1, 2, 1},
     {0, 0, 0, 1},
     {0, 1, 0, 0},
     {0, -4, 0, 0},
     {-3, 2, 1},
     {0, 0.5f, 0}},
};

static void t_transitions(void)
{
	for (size_t k = 0; k < sizeof tcases / sizeof tcases[0]; k++) {
		const struct tcase *c = &tcases[k];
		float r[TMAX * BMAX], d[TMAX * BMAX];
		seed_unroll_transitions(c->T, c->B, 0.5f, c->reward, c->term, c->trunc, c->final_value, r, d);
		for (int i = 0; i < c->T * c->B; i++) {
			CHECK_MSG(r[i] == c->want_r[i], "%s: reward[%d] %g, want %g", c->name, i, r[i],
			          c->want_r[i]);
			CHECK_MSG(d[i] == c->want_d[i], "%s: discount[%d] %g, want %g", c->name, i, d[i],
			          c->want_d[i]);
		}
	}
}

/* ---- assembly ------------------------------------------------------------ */

/* Record step n of two rows of 2-byte observations: obs (10n+b, 10n+b+100),
 * reward n + b/2, action 3n + b, logits (n, -n) per row, version n. */
static bool put(seed_unroll *u, int n, uint8_t term0, uint8_t trunc1)
{
	uint8_t obs[4] = {(uint8_t)(10 * n), (uint8_t)(10 * n + 100), (uint8_t)(10 * n + 1),
	                  (uint8_t)(10 * n + 101)};
	float rew[2] = {(float)n, n + 0.5f};
	uint8_t te[2] = {term0, 0}, tr[2] = {0, trunc1};
	seed_unroll_record_step(u, obs, rew, te, tr);
	if (trunc1)
		seed_unroll_set_final_value(u, 1, 100.0f + n);
	int32_t act[2] = {3 * n, 3 * n + 1};
	float logits[6] = {(float)n, (float)-n, 0, (float)n, (float)-n, 0};
	/* (2, S) for S <= 2: with S = 1, rows 0 and 1 get 1000 + n and 2000 + n */
	float state[4] = {1000.0f + n, 2000.0f + n, 3000.0f + n, 4000.0f + n};
	int32_t prev[2] = {50 + n, 60 + n}; /* the previous actions, as told */
	return seed_unroll_record_action(u, act, logits, n, state, prev);
}

static seed_unroll *make(int T, int overlap, int S)
{
	seed_unroll_layout l = {.T = T,
	                        .overlap = overlap,
	                        .rows = 2,
	                        .num_actions = 3,
	                        .obs_dtype = SEED_DTYPE_U8,
	                        .obs_rank = 1,
	                        .obs_shape = {2},
	                        .state_size = S};
	seed_unroll *u = NULL;
	seed_err err;
	int rc = seed_unroll_new(&u, &l, &err);
	CHECK_MSG(rc == 0, "seed_unroll_new: %d", rc);
	return u;
}

static const int32_t envs[2] = {4, 5};

/* Steps 0..3 with T 3, overlap 1: full after 4, then the next starts from
 * step 3; the frame holds the fields as recorded, batch-major. */
static void t_overlap_one(void)
{
	seed_unroll *u = make(3, 1, 0);
	CHECK(!put(u, 0, 0, 0));
	CHECK(!put(u, 1, 1, 0));
	CHECK(!put(u, 2, 0, 1));
	CHECK(put(u, 3, 0, 0));
	seed_frame f;
	CHECK(seed_unroll_frame(u, &f, 7, 9, envs) == 0);
	seed_err err;
	CHECK_MSG(seed_frame_validate(&f, &err) == 0, "%s", err.msg);
	const seed_tensor *obs = seed_frame_tensor(&f, "obs");
	CHECK(obs->rank == 3 && obs->shape[0] == 2 && obs->shape[1] == 4 && obs->shape[2] == 2);
	/* row 1, step 2: (21, 121) */
	CHECK(((const uint8_t *)obs->data)[(1 * 4 + 2) * 2] == 21 &&
	      ((const uint8_t *)obs->data)[(1 * 4 + 2) * 2 + 1] == 121);
	const int32_t *act = seed_frame_tensor(&f, "action")->data;
	CHECK(act[0] == 0 && act[3] == 9 && act[4] == 1 && act[7] == 10);
	const uint8_t *te = seed_frame_tensor(&f, "terminated")->data,
	              *tr = seed_frame_tensor(&f, "truncated")->data;
	CHECK(te[1] == 1 && te[5] == 0 && tr[6] == 1 && tr[2] == 0);
	const float *fv = seed_frame_tensor(&f, "final_value")->data;
	CHECK(fv[6] == 102.0f && fv[2] == 0 && fv[7] == 0);
	const float *lg = seed_frame_tensor(&f, "logits")->data;
	CHECK(lg[(1 * 4 + 3) * 3 + 1] == -3.0f);
	const int32_t *ver = seed_frame_tensor(&f, "policy_version")->data;
	CHECK(ver[2] == 2 && ver[6] == 2);
	CHECK(seed_frame_int(&f, "run", 0) == 7 && seed_frame_int(&f, "actor", 0) == 9 &&
	      seed_frame_int(&f, "num_actions", 0) == 3);
	CHECK(seed_frame_tensor(&f, "state") == NULL && seed_frame_tensor(&f, "prev_action") == NULL);
	seed_unroll_next(u);
	CHECK(u->pos == 1);
	/* step 0 of the next is step 3 of this one */
	const uint8_t *o = u->field[SEED_UNROLL_OBS];
	CHECK(o[0] == 30 && o[(1 * 4) * 2] == 31);
	CHECK(((const int32_t *)u->field[SEED_UNROLL_ACTION])[4] == 10);
	CHECK(!put(u, 4, 0, 0) && !put(u, 5, 0, 0));
	CHECK(put(u, 6, 0, 0));
	seed_unroll_free(&u);
	CHECK(u == NULL);
	seed_unroll_free(&u);
}

/* T 2, overlap 2 (a burn-in of one step): four steps per unroll, the next
 * starts from the last two; the state at step 0 follows. */
static void t_overlap_two_state(void)
{
	seed_unroll *u = make(2, 2, 1);
	CHECK(u->steps == 4);
	for (int n = 0; n < 3; n++)
		CHECK(!put(u, n, 0, 0));
	CHECK(put(u, 3, 0, 0));
	seed_frame f;
	CHECK(seed_unroll_frame(u, &f, 1, 2, envs) == 0);
	seed_err err;
	CHECK_MSG(seed_frame_validate(&f, &err) == 0, "%s", err.msg);
	const seed_tensor *st = seed_frame_tensor(&f, "state");
	CHECK(st && st->rank == 2 && st->shape[0] == 2 && st->shape[1] == 1);
	/* The state of step 0 was recorded with step 0: (1000, 2000). */
	CHECK(((const float *)st->data)[0] == 1000.0f && ((const float *)st->data)[1] == 2000.0f);
	const seed_tensor *pa = seed_frame_tensor(&f, "prev_action");
	CHECK(pa && pa->dtype == SEED_DTYPE_I32 && pa->rank == 1 && pa->shape[0] == 2);
	CHECK(((const int32_t *)pa->data)[0] == 50 && ((const int32_t *)pa->data)[1] == 60);
	seed_unroll_next(u);
	CHECK(u->prev_action[0] == 52 && u->prev_action[1] == 62);
	CHECK(u->pos == 2);
	/* Steps 2 and 3 open the next unroll, with the state of step 2. */
	CHECK(((const int32_t *)u->field[SEED_UNROLL_ACTION])[0] == 6 &&
	      ((const int32_t *)u->field[SEED_UNROLL_ACTION])[1] == 9);
	CHECK(u->state[0] == 1002.0f && u->state[1] == 2002.0f);
	CHECK(!put(u, 4, 0, 0));
	CHECK(put(u, 5, 0, 0));
	seed_unroll_next(u);
	CHECK(u->state[0] == 1004.0f);
	seed_unroll_free(&u);
}

/* A gap restarts: nothing before it stays, and the frame of a partial
 * unroll is refused. */
static void t_restart(void)
{
	seed_unroll *u = make(2, 1, 0);
	CHECK(!put(u, 0, 0, 0) && !put(u, 1, 0, 0));
	seed_frame f;
	CHECK(seed_unroll_frame(u, &f, 0, 0, envs) == -EINVAL);
	seed_unroll_restart(u);
	CHECK(u->pos == 0);
	CHECK(!put(u, 5, 0, 0) && !put(u, 6, 0, 0) && put(u, 7, 0, 0));
	CHECK(((const int32_t *)u->field[SEED_UNROLL_ACTION])[0] == 15);
	seed_unroll_free(&u);
}

/* Layouts refused, and the size a caller can bound before allocating. */
static void t_layouts(void)
{
	struct {
		const char *name;
		seed_unroll_layout l;
		int rc;
	} cases[] = {
	    {"T 0",
	     {.T = 0, .overlap = 1, .rows = 1, .num_actions = 1, .obs_dtype = SEED_DTYPE_F32},
	     -EINVAL},
	    {"overlap 0",
	     {.T = 2, .overlap = 0, .rows = 1, .num_actions = 1, .obs_dtype = SEED_DTYPE_F32},
	     -EINVAL},
	    {"overlap > T",
	     {.T = 2, .overlap = 3, .rows = 1, .num_actions = 1, .obs_dtype = SEED_DTYPE_F32},
	     -EINVAL},
	    {"no rows",
	     {.T = 2, .overlap = 1, .rows = 0, .num_actions = 1, .obs_dtype = SEED_DTYPE_F32},
	     -EINVAL},
	    {"no dtype", {.T = 2, .overlap = 1, .rows = 1, .num_actions = 1}, -EINVAL},
	    {"huge actions",
	     {.T = 100000,
	      .overlap = 1,
	      .rows = 1 << 30,
	      .num_actions = 2147483647,
	      .obs_dtype = SEED_DTYPE_F32},
	     -E2BIG},
	    {"scalar obs",
	     {.T = 1, .overlap = 1, .rows = 1, .num_actions = 1, .obs_dtype = SEED_DTYPE_F64},
	     0},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		seed_unroll *u = NULL;
		seed_err err;
		int rc = seed_unroll_new(&u, &cases[k].l, &err);
		CHECK_MSG(rc == cases[k].rc, "%s: rc %d, want %d", cases[k].name, rc, cases[k].rc);
		CHECK_MSG((seed_unroll_bytes(&cases[k].l) != 0) == (cases[k].rc == 0), "%s: bytes",
		          cases[k].name);
		if (u)
			CHECK(u->bytes == seed_unroll_bytes(&cases[k].l));
		seed_unroll_free(&u);
	}
	/* 2 rows x 4 steps: obs 2 B, action/reward/final_value/version 4 B,
	 * flags 1 B, logits 12 B per cell: 8 cells of each, every block
	 * rounded to 16 bytes; plus the header and two empty state blocks. */
	seed_unroll_layout l = {.T = 3,
	                        .overlap = 1,
	                        .rows = 2,
	                        .num_actions = 3,
	                        .obs_dtype = SEED_DTYPE_U8,
	                        .obs_rank = 1,
	                        .obs_shape = {2}};
	size_t header = (sizeof(seed_unroll) + 15) & ~(size_t)15;
	CHECK(seed_unroll_bytes(&l) == header + 16 + 32 * 4 + 16 * 2 + 96);
	/* A state of 3 floats: two state blocks of 24 bytes and two
	 * previous-action blocks of 8, each rounded up to 16. */
	l.state_size = 3;
	CHECK(seed_unroll_bytes(&l) == header + 16 + 32 * 4 + 16 * 2 + 96 + 2 * 32 + 2 * 16);
}

/* The schema checks unroll frames against the same table: every field of
 * it is in the frame, in table order after the frame's own fields, and a
 * frame breaking one is refused with a message naming it. */
static void t_schema(void)
{
	seed_unroll *u = make(1, 1, 2);
	CHECK(!put(u, 0, 0, 0));
	CHECK(put(u, 1, 0, 0));
	seed_frame f;
	CHECK(seed_unroll_frame(u, &f, 1, 1, envs) == 0);
	/* run, actor, num_actions, env, state, prev_action, then the table */
	CHECK(f.nfields == 6 + SEED_UNROLL_NFIELDS);
	for (int i = 0; i < SEED_UNROLL_NFIELDS; i++)
		CHECK_MSG(strlen(seed_frame_unroll_fields[i].name) == f.fields[6 + i].name_len &&
		              memcmp(seed_frame_unroll_fields[i].name, f.fields[6 + i].name,
		                     f.fields[6 + i].name_len) == 0,
		          "field %d", i);
	seed_err err;
	CHECK(seed_frame_validate(&f, &err) == 0);
	int32_t wrong[4] = {0};
	int64_t shape[2] = {2, 2};
	seed_frame g = f;
	seed_frame_set_tensor(&g, "reward", seed_tensor_view(wrong, SEED_DTYPE_I32, 2, shape));
	CHECK(seed_frame_validate(&g, &err) == -SEED_EFRAME);
	CHECK_MSG(strcmp(err.msg, "unroll frame: field 'reward': dtype i32, expected f32") == 0, "%s",
	          err.msg);
	/* state is [B, S]: 3 rows for B = 2 is refused. */
	float st[6] = {0};
	int64_t s3[2] = {3, 2};
	g = f;
	seed_frame_set_tensor(&g, "state", seed_tensor_view(st, SEED_DTYPE_F32, 2, s3));
	CHECK(seed_frame_validate(&g, &err) == -SEED_EFRAME);
	CHECK_MSG(strstr(err.msg, "field 'state'") && strstr(err.msg, "B = 2"), "%s", err.msg);
	/* prev_action is i32 [B]. */
	g = f;
	seed_frame_set_tensor(&g, "prev_action", seed_tensor_view(wrong, SEED_DTYPE_I32, 1, s3));
	CHECK(seed_frame_validate(&g, &err) == -SEED_EFRAME);
	CHECK_MSG(strstr(err.msg, "field 'prev_action'") && strstr(err.msg, "B = 2"), "%s", err.msg);
	seed_unroll_free(&u);
}

/* ---- a Box action space ------------------------------------------------- */

/* Record step n of two rows of 2-byte observations (as put), actions of
 * A = 2 reals (n + b/4, -n) per row b and parameters (means n, b; log
 * standard deviations -1, n/2), or none (NULL: zeros); version 10 + n. */
static bool put_box(seed_unroll *u, int n, bool with_params)
{
	uint8_t obs[4] = {(uint8_t)(10 * n), (uint8_t)(10 * n + 100), (uint8_t)(10 * n + 1),
	                  (uint8_t)(10 * n + 101)};
	float rew[2] = {(float)n, n + 0.5f};
	uint8_t te[2] = {0, 0}, tr[2] = {0, 0};
	seed_unroll_record_step(u, obs, rew, te, tr);
	float act[4] = {(float)n, (float)-n, n + 0.25f, (float)-n};
	float params[8] = {(float)n, 0, -1, n / 2.0f, (float)n, 1, -1, n / 2.0f};
	return seed_unroll_record_action_box(u, act, with_params ? params : NULL, 10 + n);
}

static seed_unroll *make_box(int T, int overlap)
{
	seed_unroll_layout l = {.T = T,
	                        .overlap = overlap,
	                        .rows = 2,
	                        .num_actions = 2,
	                        .obs_dtype = SEED_DTYPE_U8,
	                        .obs_rank = 1,
	                        .obs_shape = {2},
	                        .box = true};
	seed_unroll *u = NULL;
	seed_err err;
	int rc = seed_unroll_new(&u, &l, &err);
	CHECK_MSG(rc == 0, "seed_unroll_new: %d %s", rc, err.msg);
	return u;
}

/* T 2, overlap 1: three steps of f32 [2] actions and [4] parameters per
 * row, the frame the Box schema accepts, then the next unroll from the
 * last step. */
static void t_box(void)
{
	seed_unroll *u = make_box(2, 1);
	CHECK(u->elem_bytes[SEED_UNROLL_ACTION] == 8 && u->elem_bytes[SEED_UNROLL_LOGITS] == 16);
	CHECK(!put_box(u, 1, true) && !put_box(u, 2, false));
	CHECK(put_box(u, 3, true));
	seed_frame f;
	CHECK(seed_unroll_frame(u, &f, 7, 9, envs) == 0);
	seed_err err;
	CHECK_MSG(seed_frame_validate(&f, &err) == 0, "%s", err.msg);
	CHECK(seed_frame_int(&f, "num_actions", 0) == 2);
	/* In the Box table's order, after run, actor, num_actions, env. */
	CHECK(f.nfields == 4 + SEED_UNROLL_NFIELDS);
	for (int i = 0; i < SEED_UNROLL_NFIELDS; i++)
		CHECK_MSG(strlen(seed_frame_unroll_box_fields[i].name) == f.fields[4 + i].name_len &&
		              memcmp(seed_frame_unroll_box_fields[i].name, f.fields[4 + i].name,
		                     f.fields[4 + i].name_len) == 0,
		          "field %d", i);
	const seed_tensor *a = seed_frame_tensor(&f, "action"), *p = seed_frame_tensor(&f, "logits");
	CHECK(a->dtype == SEED_DTYPE_F32 && a->rank == 3 && a->shape[0] == 2 && a->shape[1] == 3 &&
	      a->shape[2] == 2);
	CHECK(p->dtype == SEED_DTYPE_F32 && p->rank == 3 && p->shape[0] == 2 && p->shape[1] == 3 &&
	      p->shape[2] == 4);
	/* Batch-major (b, t, i): row 1, step 2 (n = 3) is (3.25, -3) at
	 * (1 * 3 + 2) * 2; row 0, step 0 (n = 1) is (1, -1). */
	const float want_a[12] = {1, -1, 2, -2, 3, -3, 1.25f, -1, 2.25f, -2, 3.25f, -3};
	CHECK(memcmp(a->data, want_a, sizeof want_a) == 0);
	/* Step 1 (n = 2) had no parameters: zeros. */
	const float want_p[24] = {1, 0, -1, 0.5f, 0, 0, 0, 0, 3, 0, -1, 1.5f,
	                          1, 1, -1, 0.5f, 0, 0, 0, 0, 3, 1, -1, 1.5f};
	CHECK(memcmp(p->data, want_p, sizeof want_p) == 0);
	const int32_t *ver = seed_frame_tensor(&f, "policy_version")->data;
	CHECK(ver[0] == 11 && ver[2] == 13 && ver[5] == 13);
	const float *rew = seed_frame_tensor(&f, "reward")->data;
	CHECK(rew[1] == 2.0f && rew[4] == 2.5f);

	/* The next unroll starts from step 2 (n = 3). */
	seed_unroll_next(u);
	CHECK(u->pos == 1);
	const float *ua = u->field[SEED_UNROLL_ACTION], *up = u->field[SEED_UNROLL_LOGITS];
	CHECK(ua[0] == 3 && ua[1] == -3 && ua[6] == 3.25f && ua[7] == -3);
	CHECK(up[3] == 1.5f && up[12 + 1] == 1);
	CHECK(!put_box(u, 4, true) && put_box(u, 5, true));
	CHECK(seed_unroll_frame(u, &f, 7, 9, envs) == 0);
	CHECK_MSG(seed_frame_validate(&f, &err) == 0, "%s", err.msg);
	seed_unroll_free(&u);
}

/* Box layouts: their size (worked by hand), and a state refused. */
static void t_box_layouts(void)
{
	/* 2 rows x 3 steps = 6 cells: obs 2 B (12 -> 16), action 8 B (48),
	 * reward, final_value, version 4 B (24 -> 32 each), flags 1 B (6 ->
	 * 16 each), parameters 16 B (96); the state blocks are empty. */
	seed_unroll_layout l = {.T = 2,
	                        .overlap = 1,
	                        .rows = 2,
	                        .num_actions = 2,
	                        .obs_dtype = SEED_DTYPE_U8,
	                        .obs_rank = 1,
	                        .obs_shape = {2},
	                        .box = true};
	size_t header = (sizeof(seed_unroll) + 15) & ~(size_t)15;
	CHECK(seed_unroll_bytes(&l) == header + 16 + 48 + 32 * 3 + 16 * 2 + 96);
	l.box = false; /* action 4 B (24 -> 32), logits 8 B (48) */
	CHECK(seed_unroll_bytes(&l) == header + 16 + 32 + 32 * 3 + 16 * 2 + 48);
	l.box = true;
	l.state_size = 4;
	seed_unroll *u = NULL;
	seed_err err;
	int rc = seed_unroll_new(&u, &l, &err);
	CHECK_MSG(rc == -EINVAL && strstr(err.msg, "Box") && strstr(err.msg, "state of 4"), "%d %s", rc,
	          err.msg);
	CHECK(u == NULL && seed_unroll_bytes(&l) == 0);
	/* 2A floats of parameters a cell: overflow is caught, not wrapped. */
	l = (seed_unroll_layout){.T = 100000,
	                         .overlap = 1,
	                         .rows = 1 << 30,
	                         .num_actions = 2147483647,
	                         .obs_dtype = SEED_DTYPE_F32,
	                         .box = true};
	CHECK(seed_unroll_new(&u, &l, &err) == -E2BIG && u == NULL);
}

int main(void)
{
	TAP_RUN(t_transitions);
	TAP_RUN(t_overlap_one);
	TAP_RUN(t_overlap_two_state);
	TAP_RUN(t_restart);
	TAP_RUN(t_layouts);
	TAP_RUN(t_schema);
	TAP_RUN(t_box);
	TAP_RUN(t_box_layouts);
	return tap_done();
}
