/* tests/unit/envs/test_minatar.c: the five MinAtar classes, scenario by scenario.
 *
 * Each case sets up a game state by hand (sticky actions off unless the case
 * is about them), steps the class through its function pointers, and checks
 * rewards, ends and observations worked out by hand from the upstream rules
 * (the Python package minatar 1.0.15).  Distribution checks (spawns, car
 * speeds, sticky actions) count outcomes over many fixed-seed draws and allow
 * 5 standard errors.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../envs/minatar.h"
#include "../envs/minatar_state.h"
#include "tap.h"

/* One instance of a class, driven directly. */
struct env {
	const seed_env_class *cls;
	void *config;
	seed_env_spec spec;
	void *state;
	seed_rng rng;
	uint8_t obs[MINATAR_SIZE * MINATAR_SIZE * MINATAR_MAX_CHANNELS];
	float reward;
	bool done;
};

/* Configure cls with options (JSON text), zero a state and reset it. */
static void env_open(struct env *e, const seed_env_class *cls, const char *options, uint64_t seed)
{
	memset(e, 0, sizeof *e);
	e->cls = cls;
	json_t *o = json_loads(options, 0, NULL);
	seed_err err;
	int rc = cls->configure(o, &e->config, &e->spec, &err);
	json_decref(o);
	if (rc) {
		printf("# configure %s %s: %s\n", cls->name, options, err.msg);
		exit(99);
	}
	e->state = calloc(1, cls->state_size);
	seed_rng_init(&e->rng, seed, 0);
	cls->reset(e->config, e->state, &e->rng, e->obs);
}

static void env_close(struct env *e)
{
	e->cls->free_config(e->config);
	free(e->state);
}

static void env_reset(struct env *e)
{
	e->cls->reset(e->config, e->state, &e->rng, e->obs);
	e->done = false;
	e->reward = 0.0f;
}

/* One step; returns the reward. */
static float env_step(struct env *e, int action)
{
	e->cls->step(e->config, e->state, &e->rng, action, e->obs, &e->reward, &e->done);
	return e->reward;
}

static int ob(const struct env *e, int y, int x, int c)
{
	return e->obs[minatar_at(y, x, c, (int)e->spec.obs_shape[2])];
}

/* Cells set in channel c. */
static int count_ch(const struct env *e, int c)
{
	int n = 0;
	for (int y = 0; y < 10; y++)
		for (int x = 0; x < 10; x++)
			n += ob(e, y, x, c);
	return n;
}

/* Fraction k/n within 5 standard errors of p. */
#define CHECK_FRACTION(k, n, p) CHECK_NEAR((double)(k) / (n), (p), 5.0 * sqrt((p) * (1.0 - (p)) / (n)))

#define NO_STICKY "{\"sticky_action_prob\": 0}"

enum {
	N = MINATAR_NOOP,
	L = MINATAR_LEFT,
	U = MINATAR_UP,
	R = MINATAR_RIGHT,
	D = MINATAR_DOWN,
	F = MINATAR_FIRE
};

/* ---- options and specs ---------------------------------------------------- */

static void t_specs(void)
{
	static const struct {
		const seed_env_class *cls;
		const char *name;
		int channels, minimal;
	} want[] = {
	    {&seed_env_minatar_breakout, "minatar-breakout", 4, 3},
	    {&seed_env_minatar_asterix, "minatar-asterix", 4, 5},
	    {&seed_env_minatar_freeway, "minatar-freeway", 7, 3},
	    {&seed_env_minatar_seaquest, "minatar-seaquest", 10, 6},
	    {&seed_env_minatar_space_invaders, "minatar-space-invaders", 6, 4},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct env e;
		CHECK(strcmp(want[i].cls->name, want[i].name) == 0);
		CHECK(want[i].cls->summary && *want[i].cls->summary);
		env_open(&e, want[i].cls, "{}", 1);
		CHECK(e.spec.obs_dtype == SEED_DTYPE_U8);
		CHECK(e.spec.obs_rank == 3);
		CHECK(e.spec.obs_shape[0] == 10 && e.spec.obs_shape[1] == 10);
		CHECK_MSG(e.spec.obs_shape[2] == want[i].channels, "%s", want[i].name);
		CHECK(e.spec.num_actions == 6);
		CHECK(e.spec.max_steps == 0);
		env_close(&e);
		env_open(&e, want[i].cls, "{\"minimal_action_set\": true, \"max_steps\": 100}", 1);
		CHECK_MSG(e.spec.num_actions == want[i].minimal, "%s", want[i].name);
		CHECK(e.spec.max_steps == 0);
		env_close(&e);
		env_open(&e, want[i].cls,
		         "{\"minimal_action_set\": false, \"sticky_action_prob\": 1, \"difficulty_ramping\": "
		         "false}",
		         1);
		CHECK(e.spec.num_actions == 6);
		env_close(&e);
	}
}

/* A bad option: -SEED_EOPTION, a message naming it, and nothing written. */
static void check_bad_option(const char *options, const char *name)
{
	json_t *o = json_loads(options, 0, NULL);
	void *config = (void *)&config;
	seed_env_spec spec = {.num_actions = -7};
	seed_err err = {{0}};
	int rc = seed_env_minatar_seaquest.configure(o, &config, &spec, &err);
	json_decref(o);
	CHECK_MSG(rc == -SEED_EOPTION, "%s: rc %d", options, rc);
	CHECK_MSG(strstr(err.msg, name) != NULL, "%s: message \"%s\"", options, err.msg);
	CHECK(config == (void *)&config);
	CHECK(spec.num_actions == -7);
}

static void t_bad_options(void)
{
	check_bad_option("{\"sticky\": 0.1}", "\"sticky\"");
	check_bad_option("{\"minimal_action_set\": true, \"colour\": 1}", "\"colour\"");
	check_bad_option("{\"sticky_action_prob\": \"high\"}", "sticky_action_prob");
	check_bad_option("{\"sticky_action_prob\": 1.5}", "sticky_action_prob");
	check_bad_option("{\"sticky_action_prob\": -0.1}", "sticky_action_prob");
	check_bad_option("{\"difficulty_ramping\": 1}", "difficulty_ramping");
	check_bad_option("{\"minimal_action_set\": \"yes\"}", "minimal_action_set");
}

/* ---- sticky actions and action sets -------------------------------------- */

static void t_sticky_always(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_breakout, "{\"sticky_action_prob\": 1}", 1);
	minatar_breakout *s = e.state;
	/* A new instance's previous action is the no-op: nothing moves. */
	env_step(&e, R);
	env_step(&e, L);
	CHECK(s->pos == 4);
	CHECK(s->c.last_action == N);
	/* The previous action survives reset. */
	s->c.last_action = R;
	env_reset(&e);
	CHECK(s->c.last_action == R);
	CHECK(s->pos == 4);
	env_step(&e, L);
	CHECK(s->pos == 5);
	env_close(&e);
}

static void t_sticky_never(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_breakout, NO_STICKY, 1);
	minatar_breakout *s = e.state;
	s->c.last_action = L;
	env_step(&e, R);
	CHECK(s->pos == 5);
	CHECK(s->c.last_action == R);
	env_close(&e);
}

static void t_sticky_probability(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_breakout, "{\"sticky_action_prob\": 0.3}", 7);
	minatar_breakout *s = e.state;
	int n = 20000, repeated = 0;
	for (int i = 0; i < n; i++) {
		env_reset(&e);
		s->c.last_action = L;
		env_step(&e, R);
		repeated += s->pos == 3;
		CHECK(s->pos == 3 || s->pos == 5);
		CHECK(s->c.last_action == (s->pos == 3 ? L : R));
	}
	CHECK_FRACTION(repeated, n, 0.3);
	env_close(&e);
}

static void t_minimal_action_sets(void)
{
	struct env e;
	/* Breakout n, l, r: 2 is right; the executed full action is kept. */
	env_open(&e, &seed_env_minatar_breakout, "{\"sticky_action_prob\": 0, \"minimal_action_set\": true}",
	         1);
	minatar_breakout *b = e.state;
	env_step(&e, 2);
	CHECK(b->pos == 5);
	CHECK(b->c.last_action == R);
	env_step(&e, 1);
	CHECK(b->pos == 4);
	env_close(&e);

	/* Freeway n, u, d: 1 is up (once the cooldown is over). */
	env_open(&e, &seed_env_minatar_freeway, "{\"sticky_action_prob\": 0, \"minimal_action_set\": true}",
	         1);
	minatar_freeway *f = e.state;
	for (int i = 0; i < 8; i++)
		f->car[i].timer = 1000;
	f->move_timer = 0;
	env_step(&e, 1);
	CHECK(f->pos == 8);
	CHECK(f->c.last_action == U);
	f->move_timer = 0;
	env_step(&e, 2);
	CHECK(f->pos == 9);
	env_close(&e);

	/* Space Invaders n, l, r, f: 3 fires. */
	env_open(&e, &seed_env_minatar_space_invaders,
	         "{\"sticky_action_prob\": 0, \"minimal_action_set\": true}", 1);
	minatar_space_invaders *si = e.state;
	env_step(&e, 3);
	CHECK(si->f_bullet[8][5] == 1);
	CHECK(si->c.last_action == F);
	env_step(&e, 2);
	CHECK(si->pos == 6);
	env_close(&e);

	/* Asterix n, l, u, r, d: the first five. */
	env_open(&e, &seed_env_minatar_asterix, "{\"sticky_action_prob\": 0, \"minimal_action_set\": true}",
	         1);
	minatar_asterix *as = e.state;
	env_step(&e, 4);
	CHECK(as->player_y == 6);
	env_close(&e);
}

/* ---- Breakout ------------------------------------------------------------------ */

enum { BK_PADDLE, BK_BALL, BK_TRAIL, BK_BRICK };

static void t_breakout_reset(void)
{
	struct env e;
	int left = 0, n = 4000;
	env_open(&e, &seed_env_minatar_breakout, NO_STICKY, 3);
	minatar_breakout *s = e.state;
	for (int i = 0; i < n; i++) {
		env_reset(&e);
		CHECK(s->ball_y == 3);
		CHECK((s->ball_x == 0 && s->ball_dir == 2) || (s->ball_x == 9 && s->ball_dir == 3));
		left += s->ball_x == 0;
	}
	CHECK_FRACTION(left, n, 0.5);
	CHECK(ob(&e, 9, 4, BK_PADDLE) && count_ch(&e, BK_PADDLE) == 1);
	CHECK(ob(&e, 3, s->ball_x, BK_BALL) && count_ch(&e, BK_BALL) == 1);
	CHECK(ob(&e, 3, s->ball_x, BK_TRAIL) && count_ch(&e, BK_TRAIL) == 1);
	CHECK(count_ch(&e, BK_BRICK) == 30);
	for (int x = 0; x < 10; x++)
		CHECK(ob(&e, 1, x, BK_BRICK) && ob(&e, 2, x, BK_BRICK) && ob(&e, 3, x, BK_BRICK));
	env_close(&e);
}

static void t_breakout_paddle(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_breakout, NO_STICKY, 1);
	minatar_breakout *s = e.state;
	env_step(&e, L);
	CHECK(s->pos == 3);
	env_step(&e, U);
	env_step(&e, D);
	env_step(&e, F);
	CHECK(s->pos == 3);
	s->pos = 0;
	env_step(&e, L);
	CHECK(s->pos == 0);
	s->pos = 9;
	env_step(&e, R);
	CHECK(s->pos == 9);
	CHECK(ob(&e, 9, 9, BK_PADDLE));
	env_close(&e);
}

static void t_breakout_brick(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_breakout, NO_STICKY, 1);
	minatar_breakout *s = e.state;
	/* Up-left from (4,5) into the brick at (3,4): broken, the ball stays in
	 * row 4 (moved to column 4) and now goes down-left. */
	s->ball_y = 4, s->ball_x = 5, s->ball_dir = 0, s->strike = false;
	CHECK(env_step(&e, N) == 1.0f);
	CHECK(!e.done);
	CHECK(s->brick[3][4] == 0 && s->bricks == 29);
	CHECK(s->ball_y == 4 && s->ball_x == 4 && s->ball_dir == 3);
	CHECK(s->strike);
	CHECK(!ob(&e, 3, 4, BK_BRICK) && count_ch(&e, BK_BRICK) == 29);
	CHECK(ob(&e, 4, 4, BK_BALL) && ob(&e, 4, 5, BK_TRAIL));
	/* Next step (5,3): no brick, the strike flag clears. */
	CHECK(env_step(&e, N) == 0.0f);
	CHECK(s->ball_y == 5 && s->ball_x == 3 && !s->strike);
	env_close(&e);
}

static void t_breakout_strike(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_breakout, NO_STICKY, 1);
	minatar_breakout *s = e.state;
	/* Right after a break, the ball enters a brick without breaking it. */
	s->ball_y = 4, s->ball_x = 5, s->ball_dir = 0, s->strike = true;
	CHECK(env_step(&e, N) == 0.0f);
	CHECK(s->brick[3][4] == 1 && s->bricks == 30);
	CHECK(s->ball_y == 3 && s->ball_x == 4 && s->ball_dir == 0);
	CHECK(s->strike);
	CHECK(ob(&e, 3, 4, BK_BALL) && ob(&e, 3, 4, BK_BRICK));
	/* Still touching bricks: (2,3) is entered too. */
	CHECK(env_step(&e, N) == 0.0f);
	CHECK(s->ball_y == 2 && s->ball_x == 3 && s->brick[2][3] == 1);
	env_close(&e);
}

static void t_breakout_walls(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_breakout, NO_STICKY, 1);
	minatar_breakout *s = e.state;
	/* Left wall: up-left at column 0 turns up-right, row 4 reached. */
	s->ball_y = 5, s->ball_x = 0, s->ball_dir = 0;
	env_step(&e, N);
	CHECK(s->ball_y == 4 && s->ball_x == 0 && s->ball_dir == 1);
	/* Right wall: down-right at column 9 turns down-left. */
	s->ball_y = 5, s->ball_x = 9, s->ball_dir = 2;
	env_step(&e, N);
	CHECK(s->ball_y == 6 && s->ball_x == 9 && s->ball_dir == 3);
	/* Ceiling (no bricks in the way): up-right at row 0 turns down-right. */
	memset(s->brick, 0, sizeof s->brick);
	s->bricks = 0;
	s->ball_y = 0, s->ball_x = 3, s->ball_dir = 1;
	env_step(&e, N);
	CHECK(s->ball_y == 0 && s->ball_x == 4 && s->ball_dir == 2);
	/* Corner: up-right at (0,9) comes back down-left from (0,9). */
	s->ball_y = 0, s->ball_x = 9, s->ball_dir = 1;
	env_step(&e, N);
	CHECK(s->ball_y == 0 && s->ball_x == 9 && s->ball_dir == 3);
	CHECK(ob(&e, 0, 9, BK_BALL) && ob(&e, 0, 9, BK_TRAIL));
	CHECK(!e.done);
	env_close(&e);
}

static void t_breakout_catch(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_breakout, NO_STICKY, 1);
	minatar_breakout *s = e.state;
	/* Ball above the paddle: bounces straight back up, keeping its
	 * sideways motion, and stays in row 8. */
	s->ball_y = 8, s->ball_x = 4, s->ball_dir = 2, s->pos = 4;
	env_step(&e, N);
	CHECK(!e.done);
	CHECK(s->ball_y == 8 && s->ball_x == 5 && s->ball_dir == 1);
	/* Ball coming onto the paddle from the side: sent back the way it came. */
	s->ball_y = 8, s->ball_x = 3, s->ball_dir = 2, s->pos = 4;
	env_step(&e, N);
	CHECK(!e.done);
	CHECK(s->ball_y == 8 && s->ball_x == 4 && s->ball_dir == 0);
	/* The paddle moves first: stepping under the ball catches it. */
	s->ball_y = 8, s->ball_x = 6, s->ball_dir = 3, s->pos = 7;
	env_step(&e, L);
	CHECK(!e.done);
	CHECK(s->ball_y == 8 && s->ball_x == 5 && s->ball_dir == 0);
	env_close(&e);
}

static void t_breakout_miss(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_breakout, NO_STICKY, 1);
	minatar_breakout *s = e.state;
	s->ball_y = 8, s->ball_x = 0, s->ball_dir = 2, s->pos = 4;
	CHECK(env_step(&e, N) == 0.0f);
	CHECK(e.done);
	CHECK(s->ball_y == 9 && s->ball_x == 1);
	CHECK(ob(&e, 9, 1, BK_BALL));
	/* An ended game stays as it is. */
	CHECK(env_step(&e, R) == 0.0f);
	CHECK(e.done && s->pos == 4 && s->ball_y == 9 && s->ball_x == 1);
	/* Falling from the reset position takes 6 steps. */
	env_reset(&e);
	int steps = 0;
	s->pos = s->ball_x == 0 ? 9 : 0; /* out of the way */
	while (!e.done && steps < 100) {
		env_step(&e, N);
		steps++;
	}
	CHECK(steps == 6);
	env_close(&e);
}

static void t_breakout_refill(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_breakout, NO_STICKY, 1);
	minatar_breakout *s = e.state;
	memset(s->brick, 0, sizeof s->brick);
	s->bricks = 0;
	s->ball_y = 8, s->ball_x = 4, s->ball_dir = 2, s->pos = 4;
	env_step(&e, N);
	CHECK(!e.done);
	CHECK(s->bricks == 30 && count_ch(&e, BK_BRICK) == 30);
	/* Not before the ball reaches the paddle row. */
	memset(s->brick, 0, sizeof s->brick);
	s->bricks = 0;
	s->ball_y = 6, s->ball_x = 4, s->ball_dir = 2;
	env_step(&e, N);
	CHECK(count_ch(&e, BK_BRICK) == 0);
	env_close(&e);
}

/* ---- Asterix ------------------------------------------------------------------- */

enum { AX_PLAYER, AX_ENEMY, AX_TRAIL, AX_GOLD };

static void clear_entities(minatar_asterix *s)
{
	memset(s->entity, 0, sizeof s->entity);
}

static void t_asterix_reset(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_asterix, NO_STICKY, 1);
	minatar_asterix *s = e.state;
	CHECK(s->player_x == 5 && s->player_y == 5);
	CHECK(ob(&e, 5, 5, AX_PLAYER) && count_ch(&e, AX_PLAYER) == 1);
	CHECK(count_ch(&e, AX_ENEMY) + count_ch(&e, AX_GOLD) + count_ch(&e, AX_TRAIL) == 0);
	/* The player keeps to rows 1..8. */
	for (int i = 0; i < 6; i++)
		env_step(&e, U);
	CHECK(s->player_y == 1);
	s->player_y = 8;
	env_step(&e, D);
	CHECK(s->player_y == 8);
	s->player_x = 0;
	env_step(&e, L);
	CHECK(s->player_x == 0);
	env_close(&e);
}

static void t_asterix_gold(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_asterix, NO_STICKY, 1);
	minatar_asterix *s = e.state;
	/* The player steps onto gold (row 5 is slot 4). */
	s->entity[4] = (minatar_asterix_entity){.live = true, .right = false, .gold = true, .x = 6};
	CHECK(ob(&e, 5, 5, AX_PLAYER));
	CHECK(env_step(&e, R) == 1.0f);
	CHECK(!e.done && !s->entity[4].live);
	CHECK(count_ch(&e, AX_GOLD) == 0);
	/* Gold moving onto the player. */
	s->entity[4] = (minatar_asterix_entity){.live = true, .right = true, .gold = true, .x = 5};
	s->move_timer = 0;
	CHECK(env_step(&e, N) == 1.0f);
	CHECK(!e.done && !s->entity[4].live);
	env_close(&e);
}

static void t_asterix_enemy(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_asterix, NO_STICKY, 1);
	minatar_asterix *s = e.state;
	/* Stepping onto an enemy ends the game; the enemy stays. */
	s->entity[4] = (minatar_asterix_entity){.live = true, .right = false, .gold = false, .x = 6};
	CHECK(env_step(&e, R) == 0.0f);
	CHECK(e.done && s->entity[4].live);
	CHECK(ob(&e, 5, 6, AX_PLAYER) && ob(&e, 5, 6, AX_ENEMY));
	/* An enemy moving onto the player. */
	env_reset(&e);
	s->entity[4] = (minatar_asterix_entity){.live = true, .right = false, .gold = false, .x = 6};
	s->move_timer = 0;
	env_step(&e, N);
	CHECK(e.done);
	CHECK(s->entity[4].x == 5);
	/* Passing next to the player is harmless, and trails are drawn. */
	env_reset(&e);
	s->entity[3] = (minatar_asterix_entity){.live = true, .right = false, .gold = false, .x = 6};
	s->move_timer = 0;
	env_step(&e, N);
	CHECK(!e.done);
	CHECK(ob(&e, 4, 5, AX_ENEMY) && ob(&e, 4, 6, AX_TRAIL));
	env_close(&e);
}

static void t_asterix_movement(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_asterix, NO_STICKY, 1);
	minatar_asterix *s = e.state;
	/* Entities move at steps 5k+1, and leave at the edge. */
	s->entity[0] = (minatar_asterix_entity){.live = true, .right = true, .gold = false, .x = 8};
	s->entity[7] = (minatar_asterix_entity){.live = true, .right = false, .gold = true, .x = 0};
	for (int t = 1; t <= 5; t++) {
		env_step(&e, N);
		CHECK(s->entity[0].live && s->entity[0].x == 8);
	}
	CHECK(ob(&e, 1, 8, AX_ENEMY) && ob(&e, 1, 7, AX_TRAIL));
	CHECK(ob(&e, 8, 0, AX_GOLD) && ob(&e, 8, 1, AX_TRAIL));
	env_step(&e, N); /* step 6 */
	CHECK(s->entity[0].x == 9 && !s->entity[7].live);
	CHECK(ob(&e, 1, 9, AX_ENEMY) && ob(&e, 1, 8, AX_TRAIL));
	for (int t = 7; t <= 10; t++)
		env_step(&e, N);
	CHECK(s->entity[0].live);
	env_step(&e, N);           /* step 11: leaves; a new entity spawns and moves */
	CHECK(!s->entity[0].live); /* the spawn could not take its live slot */
	env_close(&e);
}

static void t_asterix_spawn_timing(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_asterix, NO_STICKY, 5);
	minatar_asterix *s = e.state;
	for (int t = 1; t <= 10; t++)
		env_step(&e, N);
	int live = 0;
	for (int i = 0; i < 8; i++)
		live += s->entity[i].live;
	CHECK(live == 0);
	env_step(&e, N); /* step 11: spawns at the edge, then moves one column */
	for (int i = 0; i < 8; i++) {
		minatar_asterix_entity *en = &s->entity[i];
		if (!en->live)
			continue;
		live++;
		CHECK(en->x == (en->right ? 1 : 8));
		CHECK(ob(&e, i + 1, en->x, en->gold ? AX_GOLD : AX_ENEMY));
	}
	CHECK(live == 1);
	env_close(&e);
}

static void t_asterix_spawn_distribution(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_asterix, NO_STICKY, 11);
	minatar_asterix *s = e.state;
	int n = 20000, right = 0, gold = 0, row[8] = {0};
	for (int i = 0; i < n; i++) {
		clear_entities(s);
		s->spawn_timer = 0;
		s->move_timer = 3;
		env_step(&e, N);
		for (int k = 0; k < 8; k++) {
			if (s->entity[k].live) {
				row[k]++;
				right += s->entity[k].right;
				gold += s->entity[k].gold;
				CHECK(s->entity[k].x == (s->entity[k].right ? 0 : 9));
			}
		}
	}
	CHECK_FRACTION(right, n, 0.5);
	CHECK_FRACTION(gold, n, 1.0 / 3.0);
	for (int k = 0; k < 8; k++)
		CHECK_FRACTION(row[k], n, 1.0 / 8.0);
	/* Only free slots are drawn; with none free nothing spawns. */
	for (int i = 0; i < 200; i++) {
		clear_entities(s);
		for (int k = 0; k < 8; k++)
			if (k != 2 && k != 6)
				s->entity[k] = (minatar_asterix_entity){.live = true, .x = 5, .gold = true};
		s->player_y = 5, s->player_x = 0;
		s->spawn_timer = 0;
		s->move_timer = 3;
		env_step(&e, N);
		CHECK(s->entity[2].live != s->entity[6].live);
	}
	for (int k = 0; k < 8; k++)
		s->entity[k] = (minatar_asterix_entity){.live = true, .x = 5, .gold = true};
	s->entity[4].x = 7;
	s->spawn_timer = 0;
	env_step(&e, N);
	for (int k = 0; k < 8; k++)
		CHECK(s->entity[k].live && s->entity[k].x == (k == 4 ? 7 : 5));
	env_close(&e);
}

static void t_asterix_ramping(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_asterix, NO_STICKY, 1);
	minatar_asterix *s = e.state;
	/* Ramps at steps 102, 204, ...: the first lowers the spawn interval,
	 * the second also the move interval. */
	for (int t = 1; t <= 204; t++) {
		clear_entities(s);
		env_step(&e, N);
		if (t == 101)
			CHECK(s->spawn_speed == 10 && s->ramp_index == 0);
		if (t == 102)
			CHECK(s->spawn_speed == 9 && s->move_speed == 5 && s->ramp_index == 1);
		if (t == 203)
			CHECK(s->spawn_speed == 9 && s->move_speed == 5);
	}
	CHECK(s->spawn_speed == 8 && s->move_speed == 4 && s->ramp_index == 2);
	CHECK(!e.done);
	env_close(&e);

	env_open(&e, &seed_env_minatar_asterix, "{\"sticky_action_prob\": 0, \"difficulty_ramping\": false}",
	         1);
	s = e.state;
	for (int t = 1; t <= 300; t++) {
		clear_entities(s);
		env_step(&e, N);
	}
	CHECK(s->spawn_speed == 10 && s->move_speed == 5 && s->ramp_index == 0);
	env_close(&e);

	/* The last ramp (index 8) takes the spawn interval to 1; then ramping
	 * stops (the timer no longer runs). */
	env_open(&e, &seed_env_minatar_asterix, NO_STICKY, 1);
	s = e.state;
	s->spawn_speed = 2, s->move_speed = 1, s->ramp_index = 8, s->ramp_timer = -1;
	env_step(&e, N);
	CHECK(s->spawn_speed == 1 && s->move_speed == 1 && s->ramp_index == 9 && s->ramp_timer == 100);
	env_step(&e, N);
	CHECK(s->ramp_timer == 100 && s->ramp_index == 9);
	/* Odd ramps stop lowering the move interval at 1. */
	s->spawn_speed = 5, s->move_speed = 1, s->ramp_index = 7, s->ramp_timer = -1;
	env_step(&e, N);
	CHECK(s->spawn_speed == 4 && s->move_speed == 1 && s->ramp_index == 8);
	env_close(&e);
}

/* ---- Freeway ------------------------------------------------------------------- */

enum { FW_CHICKEN, FW_CAR, FW_SPEED1 };

/* Park every car far from the chicken's column, never to move. */
static void park_cars(minatar_freeway *s)
{
	for (int i = 0; i < 8; i++)
		s->car[i] = (minatar_freeway_car){.x = 0, .timer = 100000, .speed = 1};
}

static void t_freeway_reset(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_freeway, NO_STICKY, 2);
	minatar_freeway *s = e.state;
	CHECK(s->pos == 9 && s->move_timer == 3 && s->terminate_timer == 2500);
	CHECK(ob(&e, 9, 4, FW_CHICKEN) && count_ch(&e, FW_CHICKEN) == 1);
	CHECK(count_ch(&e, FW_CAR) == 8);
	for (int i = 0; i < 8; i++) {
		int sp = s->car[i].speed, a = abs(sp);
		CHECK(s->car[i].x == 0 && a >= 1 && a <= 5 && s->car[i].timer == a);
		CHECK(ob(&e, i + 1, 0, FW_CAR));
		/* The trail is behind the car, wrapping around: column 9 for a
		 * car going right, 1 for one going left. */
		CHECK(ob(&e, i + 1, sp > 0 ? 9 : 1, FW_SPEED1 + a - 1));
	}
	int trails = 0;
	for (int c = FW_SPEED1; c < FW_SPEED1 + 5; c++)
		trails += count_ch(&e, c);
	CHECK(trails == 8);
	env_close(&e);
}

static void t_freeway_speeds_distribution(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_freeway, NO_STICKY, 9);
	minatar_freeway *s = e.state;
	int n = 4000, value[6] = {0}, right = 0;
	for (int i = 0; i < n; i++) {
		env_reset(&e);
		for (int k = 0; k < 8; k++) {
			value[abs(s->car[k].speed)]++;
			right += s->car[k].speed > 0;
		}
	}
	CHECK(value[0] == 0);
	for (int v = 1; v <= 5; v++)
		CHECK_FRACTION(value[v], 8 * n, 0.2);
	CHECK_FRACTION(right, 8 * n, 0.5);
	env_close(&e);
}

static void t_freeway_cooldown(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_freeway, NO_STICKY, 1);
	minatar_freeway *s = e.state;
	park_cars(s);
	/* The first move is possible on step 4, then every 3 steps. */
	int want[] = {9, 9, 9, 8, 8, 8, 7, 7, 7, 6};
	for (int t = 0; t < 10; t++) {
		env_step(&e, U);
		CHECK_MSG(s->pos == want[t], "step %d: row %d, expected %d", t + 1, s->pos, want[t]);
	}
	CHECK(ob(&e, 6, 4, FW_CHICKEN));
	/* Down, after the cooldown; moves in the cooldown are dropped. */
	env_step(&e, D);
	env_step(&e, D);
	CHECK(s->pos == 6);
	env_step(&e, D);
	CHECK(s->pos == 7);
	s->pos = 9;
	s->move_timer = 0;
	env_step(&e, D);
	CHECK(s->pos == 9);
	env_close(&e);
}

static void t_freeway_crossing(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_freeway, NO_STICKY, 1);
	minatar_freeway *s = e.state;
	park_cars(s);
	for (int i = 0; i < 8; i++)
		s->car[i].x = i; /* distinct positions to see that they are kept */
	s->pos = 1;
	s->move_timer = 0;
	CHECK(env_step(&e, U) == 1.0f);
	CHECK(!e.done);
	CHECK(s->pos == 9 && ob(&e, 9, 4, FW_CHICKEN));
	for (int i = 0; i < 8; i++) {
		int a = abs(s->car[i].speed);
		/* New speeds (timers reloaded, so this one already counted down). */
		CHECK(a >= 1 && a <= 5 && (s->car[i].timer == a - 1));
		CHECK(s->car[i].x == i);
	}
	env_close(&e);
}

static void t_freeway_hit(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_freeway, NO_STICKY, 1);
	minatar_freeway *s = e.state;
	/* A car driving into the chicken sends it back to row 9. */
	park_cars(s);
	s->pos = 8;
	s->car[7] = (minatar_freeway_car){.x = 3, .timer = 0, .speed = 2};
	CHECK(env_step(&e, N) == 0.0f);
	CHECK(s->pos == 9 && !e.done);
	CHECK(s->car[7].x == 4 && s->car[7].timer == 2);
	CHECK(ob(&e, 8, 4, FW_CAR) && ob(&e, 8, 3, FW_SPEED1 + 1) && ob(&e, 9, 4, FW_CHICKEN));
	/* The chicken walking into a car. */
	park_cars(s);
	s->pos = 8;
	s->move_timer = 0;
	s->car[6] = (minatar_freeway_car){.x = 4, .timer = 100, .speed = -3};
	env_step(&e, U);
	CHECK(s->pos == 9);
	/* A car one column away that does not move is harmless. */
	park_cars(s);
	s->pos = 8;
	s->car[7] = (minatar_freeway_car){.x = 3, .timer = 1, .speed = 1};
	env_step(&e, N);
	CHECK(s->pos == 8 && s->car[7].x == 3 && s->car[7].timer == 0);
	env_close(&e);
}

static void t_freeway_cars(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_freeway, NO_STICKY, 1);
	minatar_freeway *s = e.state;
	park_cars(s);
	/* Speed s moves once every s + 1 steps; cars wrap around. */
	s->car[0] = (minatar_freeway_car){.x = 0, .timer = 2, .speed = -2};
	s->car[1] = (minatar_freeway_car){.x = 9, .timer = 0, .speed = 1};
	int want0[] = {0, 0, 9, 9, 9, 8, 8, 8, 7};
	int want1[] = {0, 0, 1, 1, 2, 2, 3, 3, 4};
	for (int t = 0; t < 9; t++) {
		env_step(&e, N);
		CHECK_MSG(s->car[0].x == want0[t], "step %d: car 0 at %d", t + 1, s->car[0].x);
		CHECK_MSG(s->car[1].x == want1[t], "step %d: car 1 at %d", t + 1, s->car[1].x);
	}
	/* Trail of a left-going car at column 9 wraps to column 0. */
	s->car[0].x = 9;
	env_step(&e, N);
	CHECK(ob(&e, 1, 9, FW_CAR) && ob(&e, 1, 0, FW_SPEED1 + 1));
	env_close(&e);
}

static void t_freeway_time_limit(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_freeway, "{}", 4); /* defaults, sticky on */
	int t = 0;
	while (!e.done && t < 3000) {
		env_step(&e, t % 6);
		t++;
	}
	CHECK_MSG(t == 2501, "ended on step %d", t);
	env_close(&e);
}

/* ---- Seaquest ------------------------------------------------------------------ */

enum {
	SQ_SUB_FRONT,
	SQ_SUB_BACK,
	SQ_FRIENDLY_BULLET,
	SQ_TRAIL,
	SQ_ENEMY_BULLET,
	SQ_FISH,
	SQ_ENEMY_SUB,
	SQ_OXYGEN,
	SQ_DIVER_GAUGE,
	SQ_DIVER
};

typedef minatar_seaquest_obj sq_obj;

/* Under water at (y, x), facing right, with no spawns coming soon. */
static void sq_setup(minatar_seaquest *s, int y, int x)
{
	s->sub_y = y, s->sub_x = x, s->sub_or = true;
	s->surface = y == 0;
	s->e_spawn_timer = 1000;
	s->d_spawn_timer = 1000;
}

static void t_seaquest_reset(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 1);
	minatar_seaquest *s = e.state;
	CHECK(s->oxygen == 200 && s->diver_count == 0 && s->surface);
	CHECK(ob(&e, 0, 5, SQ_SUB_FRONT) && ob(&e, 0, 6, SQ_SUB_BACK));
	CHECK(count_ch(&e, SQ_OXYGEN) == 10 && count_ch(&e, SQ_DIVER_GAUGE) == 0);
	for (int x = 0; x < 10; x++)
		CHECK(ob(&e, 9, x, SQ_OXYGEN));
	/* Staying at the surface is safe. */
	for (int t = 0; t < 100; t++)
		env_step(&e, N);
	CHECK(!e.done && s->oxygen == 200);
	/* Facing follows left/right even against the wall. */
	env_reset(&e);
	env_step(&e, R);
	CHECK(s->sub_x == 6 && s->sub_or && ob(&e, 0, 5, SQ_SUB_BACK));
	s->sub_x = 9;
	s->sub_or = false;
	env_step(&e, R);
	CHECK(s->sub_x == 9 && s->sub_or);
	s->sub_y = 8;
	env_step(&e, D);
	CHECK(s->sub_y == 8);
	env_close(&e);
}

static void t_seaquest_shoot(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 1);
	minatar_seaquest *s = e.state;
	sq_setup(s, 3, 5);
	s->fish[s->n_fish++] = (sq_obj){.x = 7, .y = 3, .right = false, .move_timer = 3};
	/* Fired from the sub's cell, the bullet moves at once: column 6. */
	CHECK(env_step(&e, F) == 0.0f);
	CHECK(s->n_f_bullets == 1 && s->f_bullets[0].x == 6 && s->shot_timer == 4);
	CHECK(ob(&e, 3, 6, SQ_FRIENDLY_BULLET) && ob(&e, 3, 7, SQ_FISH) && ob(&e, 3, 8, SQ_TRAIL));
	CHECK(env_step(&e, N) == 1.0f);
	CHECK(s->n_f_bullets == 0 && s->n_fish == 0);
	CHECK(count_ch(&e, SQ_FISH) == 0 && count_ch(&e, SQ_FRIENDLY_BULLET) == 0);
	/* An enemy sub, hit when it moves onto a bullet. */
	s->shot_timer = 0;
	s->subs[s->n_subs++] = (sq_obj){.x = 8, .y = 3, .right = false, .move_timer = 0, .shot_timer = 5};
	CHECK(env_step(&e, F) == 0.0f); /* the bullet moves to 6, the sub to 7 */
	CHECK(s->n_subs == 1 && s->subs[0].x == 7 && s->f_bullets[0].x == 6);
	CHECK(env_step(&e, N) == 1.0f); /* bullet to 7: the sub is there */
	CHECK(s->n_subs == 0 && s->n_f_bullets == 0);
	/* Cooldown: 5 steps between shots (from column 0, so that the first
	 * bullet is still on screen for the second). */
	s->shot_timer = 0;
	s->sub_x = 0;
	env_step(&e, F);
	for (int t = 0; t < 4; t++)
		env_step(&e, F);
	CHECK(s->n_f_bullets == 1);
	env_step(&e, F);
	CHECK(s->n_f_bullets == 2);
	env_close(&e);
}

static void t_seaquest_shoot_order(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 1);
	minatar_seaquest *s = e.state;
	/* A bullet reaching a cell with a fish and a sub destroys the fish. */
	sq_setup(s, 4, 2);
	s->subs[s->n_subs++] = (sq_obj){.x = 3, .y = 4, .right = true, .move_timer = 4, .shot_timer = 9};
	s->fish[s->n_fish++] = (sq_obj){.x = 3, .y = 4, .right = true, .move_timer = 4};
	CHECK(env_step(&e, F) == 1.0f);
	CHECK(s->n_fish == 0 && s->n_subs == 1);
	env_close(&e);
}

static void t_seaquest_divers(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 1);
	minatar_seaquest *s = e.state;
	sq_setup(s, 4, 5);
	/* A diver moving onto the sub is picked up. */
	s->divers[s->n_divers++] = (sq_obj){.x = 6, .y = 4, .right = false, .move_timer = 0};
	CHECK(env_step(&e, N) == 0.0f);
	CHECK(s->n_divers == 0 && s->diver_count == 1);
	CHECK(count_ch(&e, SQ_DIVER) == 0);
	CHECK(ob(&e, 9, 8, SQ_DIVER_GAUGE) && count_ch(&e, SQ_DIVER_GAUGE) == 1);
	/* The sub moving onto a diver. */
	s->divers[s->n_divers++] = (sq_obj){.x = 6, .y = 4, .right = true, .move_timer = 3};
	env_step(&e, R);
	CHECK(s->n_divers == 0 && s->diver_count == 2);
	CHECK(ob(&e, 9, 7, SQ_DIVER_GAUGE) && ob(&e, 9, 8, SQ_DIVER_GAUGE) &&
	      count_ch(&e, SQ_DIVER_GAUGE) == 2);
	/* With six on board, divers are not picked up. */
	s->diver_count = 6;
	s->divers[s->n_divers++] = (sq_obj){.x = 5, .y = 4, .right = true, .move_timer = 3};
	env_step(&e, L);
	env_step(&e, R);
	CHECK(s->n_divers == 1 && s->diver_count == 6);
	CHECK(ob(&e, 4, 6, SQ_SUB_FRONT) && ob(&e, 4, 5, SQ_DIVER) && ob(&e, 4, 4, SQ_TRAIL));
	CHECK(count_ch(&e, SQ_DIVER_GAUGE) == 6);
	/* Divers move every 6 steps. */
	s->n_divers = 0;
	s->divers[s->n_divers++] = (sq_obj){.x = 9, .y = 2, .right = false, .move_timer = 0};
	int want[] = {8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 7, 7, 6};
	for (int t = 0; t < 13; t++) {
		env_step(&e, N);
		CHECK_MSG(s->divers[0].x == want[t], "step %d: diver at %d", t + 1, s->divers[0].x);
	}
	env_close(&e);
}

static void t_seaquest_surface(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 1);
	minatar_seaquest *s = e.state;
	/* Surfacing with 6 divers: oxygen 100 pays 100 * 10 / 200 = 5, the
	 * divers are unloaded (the count ends at -1), oxygen is restored and
	 * the difficulty ramps (first ramp: the spawn interval only). */
	sq_setup(s, 1, 5);
	s->diver_count = 6;
	s->oxygen = 100;
	CHECK(env_step(&e, U) == 5.0f);
	CHECK(!e.done);
	CHECK(s->diver_count == -1 && s->oxygen == 200 && s->surface);
	CHECK(s->e_spawn_speed == 19 && s->move_speed == 5 && s->ramp_index == 1);
	CHECK(count_ch(&e, SQ_DIVER_GAUGE) == 0 && count_ch(&e, SQ_OXYGEN) == 10);
	/* With 3: no reward, one diver used. The second ramp also speeds up
	 * the enemies. */
	env_step(&e, D);
	s->diver_count = 3;
	s->oxygen = 57;
	CHECK(env_step(&e, U) == 0.0f);
	CHECK(!e.done && s->diver_count == 2 && s->oxygen == 200);
	CHECK(s->e_spawn_speed == 18 && s->move_speed == 4 && s->ramp_index == 2);
	/* Five divers are not six: no bonus. */
	env_step(&e, D);
	s->diver_count = 5;
	CHECK(env_step(&e, U) == 0.0f);
	CHECK(s->diver_count == 4 && s->ramp_index == 3 && s->move_speed == 4 && s->e_spawn_speed == 17);
	/* A negative count is not "no divers". */
	env_step(&e, D);
	s->diver_count = -1;
	env_step(&e, U);
	CHECK(!e.done && s->diver_count == -2);
	/* With none: the game ends. */
	env_step(&e, D);
	s->diver_count = 0;
	env_step(&e, U);
	CHECK(e.done);
	env_close(&e);

	/* Without ramping, nothing speeds up. */
	env_open(&e, &seed_env_minatar_seaquest, "{\"sticky_action_prob\": 0, \"difficulty_ramping\": false}",
	         1);
	s = e.state;
	sq_setup(s, 1, 5);
	s->diver_count = 6;
	s->oxygen = 200;
	CHECK(env_step(&e, U) == 10.0f);
	CHECK(s->e_spawn_speed == 20 && s->move_speed == 5 && s->ramp_index == 0);
	env_close(&e);

	/* Ramping floors: enemies move at most every 3 steps (interval 2) and
	 * spawn at most every step. */
	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 1);
	s = e.state;
	sq_setup(s, 1, 5);
	s->diver_count = 3, s->move_speed = 3, s->e_spawn_speed = 2, s->ramp_index = 5;
	env_step(&e, U);
	CHECK(s->move_speed == 2 && s->e_spawn_speed == 1 && s->ramp_index == 6);
	env_step(&e, D);
	env_step(&e, U);
	CHECK(s->move_speed == 2 && s->e_spawn_speed == 1 && s->ramp_index == 6);
	env_step(&e, D);
	s->e_spawn_speed = 5, s->ramp_index = 7;
	env_step(&e, U);
	CHECK(s->move_speed == 2 && s->e_spawn_speed == 4 && s->ramp_index == 8);
	env_close(&e);
}

static void t_seaquest_oxygen(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 1);
	minatar_seaquest *s = e.state;
	/* From the start: down once, then wait under water.  Oxygen lasts 200
	 * steps; the end is seen on the step after it reaches 0. */
	int t = 0;
	while (!e.done && t < 1000) {
		s->n_fish = s->n_subs = s->n_e_bullets = s->n_divers = 0;
		env_step(&e, t == 0 ? D : N);
		t++;
		if (t == 100)
			CHECK(s->oxygen == 100 && count_ch(&e, SQ_OXYGEN) == 5);
		if (t == 191)
			CHECK(count_ch(&e, SQ_OXYGEN) == 0);
		if (t == 200)
			CHECK(s->oxygen == 0 && !e.done);
	}
	CHECK_MSG(t == 201, "ended on step %d", t);
	/* Running out is seen even when surfacing on that step. */
	env_reset(&e);
	sq_setup(s, 1, 5);
	s->oxygen = 0;
	s->diver_count = 2;
	env_step(&e, U);
	CHECK(e.done);
	env_close(&e);
}

static void t_seaquest_enemies(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 1);
	minatar_seaquest *s = e.state;
	/* A fish swimming into the sub. */
	sq_setup(s, 2, 5);
	s->fish[s->n_fish++] = (sq_obj){.x = 6, .y = 2, .right = false, .move_timer = 0};
	env_step(&e, N);
	CHECK(e.done);
	/* The sub moving into an enemy sub. */
	env_reset(&e);
	sq_setup(s, 2, 5);
	s->subs[s->n_subs++] = (sq_obj){.x = 6, .y = 2, .right = true, .move_timer = 3, .shot_timer = 3};
	env_step(&e, R);
	CHECK(e.done);
	/* Enemies leave at the edge. */
	env_reset(&e);
	sq_setup(s, 5, 5);
	s->fish[s->n_fish++] = (sq_obj){.x = 9, .y = 2, .right = true, .move_timer = 0};
	s->subs[s->n_subs++] = (sq_obj){.x = 0, .y = 3, .right = false, .move_timer = 0, .shot_timer = 3};
	env_step(&e, N);
	CHECK(!e.done && s->n_fish == 0 && s->n_subs == 0);
	env_close(&e);
}

static void t_seaquest_enemy_bullet(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 1);
	minatar_seaquest *s = e.state;
	sq_setup(s, 2, 3);
	s->subs[s->n_subs++] = (sq_obj){.x = 0, .y = 2, .right = true, .move_timer = 3, .shot_timer = 0};
	/* Step 1: the sub fires from column 0; the bullet moves at once to 1. */
	env_step(&e, N);
	CHECK(!e.done && s->n_e_bullets == 1 && s->subs[0].shot_timer == 10);
	CHECK(ob(&e, 2, 1, SQ_ENEMY_BULLET) && ob(&e, 2, 0, SQ_ENEMY_SUB));
	env_step(&e, N);
	CHECK(!e.done && ob(&e, 2, 2, SQ_ENEMY_BULLET));
	env_step(&e, N);
	CHECK(e.done && ob(&e, 2, 3, SQ_ENEMY_BULLET));
	/* A sub shoots every 11 steps, even on the step it leaves. */
	env_reset(&e);
	sq_setup(s, 8, 0);
	s->subs[s->n_subs++] = (sq_obj){.x = 9, .y = 1, .right = true, .move_timer = 0, .shot_timer = 0};
	env_step(&e, N);
	CHECK(s->n_subs == 0 && s->n_e_bullets == 0); /* fired at column 10, gone at once */
	/* ... and on the step it is shot: the bullet starts on its cell. */
	env_reset(&e);
	sq_setup(s, 5, 2);
	s->subs[s->n_subs++] = (sq_obj){.x = 8, .y = 1, .right = false, .move_timer = 0, .shot_timer = 0};
	s->f_bullets[s->n_f_bullets++] = (sq_obj){.x = 6, .y = 1, .right = true};
	CHECK(env_step(&e, N) == 1.0f); /* bullet to 7, then the sub onto it */
	CHECK(s->n_subs == 0 && s->n_f_bullets == 0);
	CHECK(s->n_e_bullets == 1 && s->e_bullets[0].x == 6 && !s->e_bullets[0].right);
	CHECK(ob(&e, 1, 6, SQ_ENEMY_BULLET) && count_ch(&e, SQ_ENEMY_BULLET) == 1);
	env_reset(&e);
	sq_setup(s, 8, 0);
	s->subs[s->n_subs++] = (sq_obj){.x = 5, .y = 1, .right = false, .move_timer = 100, .shot_timer = 0};
	int shots = 0;
	for (int t = 1; t <= 23; t++) {
		int before = s->n_e_bullets;
		env_step(&e, N);
		if (s->n_e_bullets > before) {
			shots++;
			CHECK_MSG(t == 1 || t == 12 || t == 23, "shot on step %d", t);
		}
	}
	CHECK(shots == 3);
	env_close(&e);
}

static void t_seaquest_spawn(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 13);
	minatar_seaquest *s = e.state;
	int n = 20000, right = 0, sub = 0, row[9] = {0}, diver_right = 0, diver_row[9] = {0};
	for (int i = 0; i < n; i++) {
		env_reset(&e);
		sq_setup(s, 0, 5);
		s->e_spawn_timer = 0;
		s->d_spawn_timer = 0;
		env_step(&e, N);
		CHECK(s->n_fish + s->n_subs == 1 && s->n_divers == 1);
		const sq_obj *o = s->n_subs ? &s->subs[0] : &s->fish[0];
		sub += s->n_subs;
		right += o->right;
		row[o->y]++;
		CHECK(o->x == (o->right ? 0 : 9) && o->move_timer == 4);
		diver_right += s->divers[0].right;
		diver_row[s->divers[0].y]++;
		CHECK(s->e_spawn_timer == 19 && s->d_spawn_timer == 29);
	}
	CHECK_FRACTION(right, n, 0.5);
	CHECK_FRACTION(sub, n, 1.0 / 3.0);
	CHECK_FRACTION(diver_right, n, 0.5);
	CHECK(row[0] == 0 && diver_row[0] == 0);
	for (int y = 1; y <= 8; y++) {
		CHECK_FRACTION(row[y], n, 1.0 / 8.0);
		CHECK_FRACTION(diver_row[y], n, 1.0 / 8.0);
	}
	/* No spawn into a row where an enemy moves the other way: with a
	 * right-going fish in every row, only right-going enemies appear. */
	int spawned = 0;
	for (int i = 0; i < 2000; i++) {
		env_reset(&e);
		sq_setup(s, 0, 5);
		for (int y = 1; y <= 8; y++)
			s->fish[s->n_fish++] =
			    (sq_obj){.x = 4, .y = (int8_t)y, .right = true, .move_timer = 50};
		s->e_spawn_timer = 0;
		env_step(&e, N);
		int added = s->n_fish + s->n_subs - 8;
		CHECK(added == 0 || added == 1);
		if (added) {
			spawned++;
			CHECK((s->n_subs ? s->subs[0] : s->fish[8]).right);
		}
	}
	CHECK_FRACTION(spawned, 2000, 0.5);
	/* The same with left-going enemy subs. */
	spawned = 0;
	for (int i = 0; i < 2000; i++) {
		env_reset(&e);
		sq_setup(s, 0, 5);
		for (int y = 1; y <= 8; y++)
			s->subs[s->n_subs++] = (sq_obj){
			    .x = 4, .y = (int8_t)y, .right = false, .move_timer = 50, .shot_timer = 50};
		s->e_spawn_timer = 0;
		env_step(&e, N);
		int added = s->n_fish + s->n_subs - 8;
		if (added) {
			spawned++;
			CHECK(!(s->n_fish ? s->fish[0] : s->subs[8]).right);
		}
	}
	CHECK_FRACTION(spawned, 2000, 0.5);
	env_close(&e);
}

/* ---- Space Invaders ------------------------------------------------------------ */

enum { SI_CANNON, SI_ALIEN, SI_ALIEN_LEFT, SI_ALIEN_RIGHT, SI_FRIENDLY_BULLET, SI_ENEMY_BULLET };

static void t_space_invaders_reset(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	CHECK(ob(&e, 9, 5, SI_CANNON) && count_ch(&e, SI_CANNON) == 1);
	CHECK(count_ch(&e, SI_ALIEN) == 24 && count_ch(&e, SI_ALIEN_LEFT) == 24);
	CHECK(count_ch(&e, SI_ALIEN_RIGHT) == 0);
	for (int y = 0; y < 4; y++)
		for (int x = 2; x < 8; x++)
			CHECK(ob(&e, y, x, SI_ALIEN) && ob(&e, y, x, SI_ALIEN_LEFT));
	env_close(&e);
}

static void t_space_invaders_shoot(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	minatar_space_invaders *s = e.state;
	/* Fired on step 1 from (9,5), the bullet is in row 8 after the step and
	 * reaches the alien at (3,5) on step 6. */
	float rewards[6];
	for (int t = 0; t < 6; t++) {
		rewards[t] = env_step(&e, t == 0 ? F : N);
		if (t == 0)
			CHECK(ob(&e, 8, 5, SI_FRIENDLY_BULLET) && count_ch(&e, SI_FRIENDLY_BULLET) == 1);
	}
	for (int t = 0; t < 5; t++)
		CHECK(rewards[t] == 0.0f);
	CHECK(rewards[5] == 1.0f);
	CHECK(!e.done);
	CHECK(s->alien[3][5] == 0 && count_ch(&e, SI_ALIEN) == 23 && count_ch(&e, SI_FRIENDLY_BULLET) == 0);
	/* Two aliens at once. */
	s->f_bullet[4][2] = 1;
	s->f_bullet[4][3] = 1;
	CHECK(env_step(&e, N) == 2.0f);
	CHECK(s->alien[3][2] == 0 && s->alien[3][3] == 0);
	env_close(&e);
}

static void t_space_invaders_shot_cooldown(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	minatar_space_invaders *s = e.state;
	s->pos = 0; /* no aliens above */
	for (int t = 1; t <= 6; t++)
		env_step(&e, F);
	/* Shots on steps 1 and 6: now in rows 3 and 8. */
	CHECK(s->f_bullet[3][0] && s->f_bullet[8][0] && count_ch(&e, SI_FRIENDLY_BULLET) == 2);
	/* Fire does not move the cannon; left and right do. */
	env_step(&e, R);
	CHECK(s->pos == 1);
	env_close(&e);
}

static void t_space_invaders_wave(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	minatar_space_invaders *s = e.state;
	/* The last alien shot: a new wave, and (ramping) a faster one. */
	memset(s->alien, 0, sizeof s->alien);
	s->alien[3][5] = 1;
	s->f_bullet[4][5] = 1;
	s->alien_move_timer = 5, s->alien_shot_timer = 5;
	CHECK(env_step(&e, N) == 1.0f);
	CHECK(!e.done);
	CHECK(count_ch(&e, SI_ALIEN) == 24 && s->alien[0][2] && s->alien[3][7]);
	CHECK(s->enemy_move_interval == 11 && s->ramp_index == 1);
	CHECK(s->alien_move_timer == 4 && s->alien_shot_timer == 4);
	env_close(&e);

	env_open(&e, &seed_env_minatar_space_invaders,
	         "{\"sticky_action_prob\": 0, \"difficulty_ramping\": false}", 1);
	s = e.state;
	memset(s->alien, 0, sizeof s->alien);
	s->alien[3][5] = 1;
	s->f_bullet[4][5] = 1;
	CHECK(env_step(&e, N) == 1.0f);
	CHECK(count_ch(&e, SI_ALIEN) == 24);
	CHECK(s->enemy_move_interval == 12 && s->ramp_index == 0);
	env_close(&e);

	/* Waves speed up to an interval of 6, no further. */
	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	s = e.state;
	memset(s->alien, 0, sizeof s->alien);
	s->alien[3][5] = 1;
	s->f_bullet[4][5] = 1;
	s->enemy_move_interval = 6, s->ramp_index = 6;
	CHECK(env_step(&e, N) == 1.0f);
	CHECK(count_ch(&e, SI_ALIEN) == 24 && s->enemy_move_interval == 6 && s->ramp_index == 6);
	env_close(&e);
}

static void t_space_invaders_first_episode(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	/* Doing nothing: the aliens fire on step 11 from above the cannon (the
	 * lowest alien of column 5, row 3), the block moves left on step 13,
	 * and the bullet hits the cannon on step 17. */
	int t = 0;
	while (!e.done && t < 100) {
		env_step(&e, N);
		t++;
		if (t == 10)
			CHECK(count_ch(&e, SI_ENEMY_BULLET) == 0);
		if (t == 11)
			CHECK(ob(&e, 3, 5, SI_ENEMY_BULLET) && count_ch(&e, SI_ENEMY_BULLET) == 1);
		if (t == 12)
			CHECK(ob(&e, 3, 2, SI_ALIEN) && !ob(&e, 3, 1, SI_ALIEN));
		if (t == 13) {
			CHECK(ob(&e, 3, 1, SI_ALIEN) && ob(&e, 0, 6, SI_ALIEN) && !ob(&e, 0, 7, SI_ALIEN));
			CHECK(count_ch(&e, SI_ALIEN_LEFT) == 24);
			CHECK(ob(&e, 5, 5, SI_ENEMY_BULLET));
		}
	}
	CHECK_MSG(t == 17, "ended on step %d", t);
	CHECK(ob(&e, 9, 5, SI_ENEMY_BULLET) && ob(&e, 9, 5, SI_CANNON));
	env_close(&e);
}

static void t_space_invaders_enemy_bullet(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	minatar_space_invaders *s = e.state;
	/* Stepping aside in time is safe; the bullet leaves the screen. */
	s->e_bullet[8][5] = 1;
	env_step(&e, L);
	CHECK(!e.done && ob(&e, 9, 5, SI_ENEMY_BULLET));
	env_step(&e, N);
	CHECK(!e.done && count_ch(&e, SI_ENEMY_BULLET) == 0);
	/* Staying under it is not. */
	s->e_bullet[8][4] = 1;
	env_step(&e, N);
	CHECK(e.done);
	/* Friendly and enemy bullets pass through each other. */
	env_reset(&e);
	s->e_bullet[6][0] = 1;
	s->f_bullet[7][0] = 1;
	env_step(&e, N);
	CHECK(s->e_bullet[7][0] && s->f_bullet[6][0]);
	env_close(&e);
}

static void t_space_invaders_aim(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	minatar_space_invaders *s = e.state;
	/* Columns 3 and 7 are both 2 from the cannon: the smaller one fires,
	 * from its lowest alien. */
	memset(s->alien, 0, sizeof s->alien);
	s->alien[1][3] = s->alien[4][3] = s->alien[6][7] = 1;
	s->alien_shot_timer = 0;
	s->alien_move_timer = 5;
	env_step(&e, N);
	CHECK(s->e_bullet[4][3] && count_ch(&e, SI_ENEMY_BULLET) == 1);
	CHECK(s->alien_shot_timer == 9);
	env_close(&e);
}

static void t_space_invaders_march(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	minatar_space_invaders *s = e.state;
	/* At the left edge the block steps down and turns right. */
	memset(s->alien, 0, sizeof s->alien);
	s->alien[2][0] = s->alien[2][1] = 1;
	s->alien_move_timer = 0, s->alien_shot_timer = 5;
	env_step(&e, N);
	CHECK(s->alien[3][0] && s->alien[3][1] && count_ch(&e, SI_ALIEN) == 2);
	CHECK(s->alien_dir == 1 && count_ch(&e, SI_ALIEN_RIGHT) == 2 && count_ch(&e, SI_ALIEN_LEFT) == 0);
	/* With 2 aliens the block moves every 2 steps. */
	CHECK(s->alien_move_timer == 1);
	env_step(&e, N);
	CHECK(s->alien[3][0]);
	env_step(&e, N);
	CHECK(s->alien[3][1] && s->alien[3][2]);
	/* Reaching the cannon's cell ends the game. */
	memset(s->alien, 0, sizeof s->alien);
	s->alien[8][5] = 1;
	s->alien[8][9] = 1;
	s->alien_dir = 1, s->alien_move_timer = 0;
	env_step(&e, N);
	CHECK(e.done && s->alien[9][5]);
	env_close(&e);
}

static void t_space_invaders_bottom(void)
{
	struct env e;
	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	minatar_space_invaders *s = e.state;
	/* An alien in row 9 away from the cannon: the game goes on until the
	 * block must step down. */
	memset(s->alien, 0, sizeof s->alien);
	s->alien[9][1] = 1;
	s->alien_dir = -1, s->alien_move_timer = 0, s->alien_shot_timer = 5;
	env_step(&e, N);
	CHECK(!e.done && s->alien[9][0]);
	env_step(&e, N);
	CHECK(e.done);
	env_close(&e);
}

/* ---- rendering ------------------------------------------------------------- */

static void t_render(void)
{
	struct env e;
	char buf[256];
	env_open(&e, &seed_env_minatar_breakout, NO_STICKY, 1);
	minatar_breakout *s = e.state;
	s->ball_x = s->last_x = 0;
	s->ball_dir = 2;
	int n = e.cls->render_text(e.config, e.state, buf, sizeof buf);
	const char *want = "..........\n"
	                   "BBBBBBBBBB\n"
	                   "BBBBBBBBBB\n"
	                   "OBBBBBBBBB\n"
	                   "..........\n"
	                   "..........\n"
	                   "..........\n"
	                   "..........\n"
	                   "..........\n"
	                   "....P.....\n";
	CHECK(n == 110);
	CHECK_MSG(strcmp(buf, want) == 0, "got\n%s", buf);
	/* snprintf-style: cut and terminated, full length returned. */
	memset(buf, 'x', sizeof buf);
	CHECK(e.cls->render_text(e.config, e.state, buf, 5) == 110);
	CHECK(strcmp(buf, "....") == 0);
	CHECK(e.cls->render_text(e.config, e.state, NULL, 0) == 110);
	env_step(&e, N);
	e.cls->render_text(e.config, e.state, buf, sizeof buf);
	/* Ball now at (4,1); its trail at (3,0) shows over the brick there. */
	CHECK(buf[4 * 11 + 1] == 'O' && buf[3 * 11 + 0] == 't' && buf[3 * 11 + 1] == 'B');
	env_close(&e);

	env_open(&e, &seed_env_minatar_seaquest, NO_STICKY, 1);
	e.cls->render_text(e.config, e.state, buf, sizeof buf);
	CHECK(strncmp(buf, ".....Ss...\n", 11) == 0);
	CHECK(strcmp(buf + 99, "OOOOOOOOOO\n") == 0);
	env_close(&e);

	env_open(&e, &seed_env_minatar_space_invaders, NO_STICKY, 1);
	e.cls->render_text(e.config, e.state, buf, sizeof buf);
	CHECK(strncmp(buf, "..LLLLLL..\n", 11) == 0 && strcmp(buf + 99, ".....C....\n") == 0);
	env_close(&e);

	/* Every game: a cell is '.' exactly when no channel is set there. */
	const seed_env_class *all[] = {&seed_env_minatar_breakout, &seed_env_minatar_asterix,
	                               &seed_env_minatar_freeway, &seed_env_minatar_seaquest,
	                               &seed_env_minatar_space_invaders};
	for (int g = 0; g < 5; g++) {
		env_open(&e, all[g], NO_STICKY, 1);
		int nc = (int)e.spec.obs_shape[2];
		n = e.cls->render_text(e.config, e.state, buf, sizeof buf);
		CHECK(n == 110);
		for (int y = 0; y < 10; y++) {
			CHECK(buf[y * 11 + 10] == '\n');
			for (int x = 0; x < 10; x++) {
				int any = 0;
				for (int c = 0; c < nc; c++)
					any |= ob(&e, y, x, c);
				CHECK((buf[y * 11 + x] == '.') == !any);
			}
		}
		env_close(&e);
	}
}

int main(void)
{
	TAP_RUN(t_specs);
	TAP_RUN(t_bad_options);
	TAP_RUN(t_sticky_always);
	TAP_RUN(t_sticky_never);
	TAP_RUN(t_sticky_probability);
	TAP_RUN(t_minimal_action_sets);
	TAP_RUN(t_breakout_reset);
	TAP_RUN(t_breakout_paddle);
	TAP_RUN(t_breakout_brick);
	TAP_RUN(t_breakout_strike);
	TAP_RUN(t_breakout_walls);
	TAP_RUN(t_breakout_catch);
	TAP_RUN(t_breakout_miss);
	TAP_RUN(t_breakout_refill);
	TAP_RUN(t_asterix_reset);
	TAP_RUN(t_asterix_gold);
	TAP_RUN(t_asterix_enemy);
	TAP_RUN(t_asterix_movement);
	TAP_RUN(t_asterix_spawn_timing);
	TAP_RUN(t_asterix_spawn_distribution);
	TAP_RUN(t_asterix_ramping);
	TAP_RUN(t_freeway_reset);
	TAP_RUN(t_freeway_speeds_distribution);
	TAP_RUN(t_freeway_cooldown);
	TAP_RUN(t_freeway_crossing);
	TAP_RUN(t_freeway_hit);
	TAP_RUN(t_freeway_cars);
	TAP_RUN(t_freeway_time_limit);
	TAP_RUN(t_seaquest_reset);
	TAP_RUN(t_seaquest_shoot);
	TAP_RUN(t_seaquest_shoot_order);
	TAP_RUN(t_seaquest_divers);
	TAP_RUN(t_seaquest_surface);
	TAP_RUN(t_seaquest_oxygen);
	TAP_RUN(t_seaquest_enemies);
	TAP_RUN(t_seaquest_enemy_bullet);
	TAP_RUN(t_seaquest_spawn);
	TAP_RUN(t_space_invaders_reset);
	TAP_RUN(t_space_invaders_shoot);
	TAP_RUN(t_space_invaders_shot_cooldown);
	TAP_RUN(t_space_invaders_wave);
	TAP_RUN(t_space_invaders_first_episode);
	TAP_RUN(t_space_invaders_enemy_bullet);
	TAP_RUN(t_space_invaders_aim);
	TAP_RUN(t_space_invaders_march);
	TAP_RUN(t_space_invaders_bottom);
	TAP_RUN(t_render);
	return tap_done();
}
