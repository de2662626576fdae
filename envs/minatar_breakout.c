/* envs/minatar_breakout.c: MinAtar Breakout.
 *
 * A paddle in row 9 bounces a ball that travels along diagonals into three
 * rows of bricks; +1 per brick broken; the wall of bricks is rebuilt when the
 * ball comes down to the paddle row with none left; the episode ends when the
 * ball reaches row 9 without being caught.  Follows upstream's
 * environments/breakout.py step for step (including the "strike" rule: the
 * step after breaking a brick, the ball passes into a brick without breaking
 * it).  Channels: paddle, ball, trail (the ball's previous cell), brick.
 */
#include <string.h>

#include "minatar.h"
#include "minatar_state.h"

enum { CH_PADDLE, CH_BALL, CH_TRAIL, CH_BRICK, NUM_CH };

static void write_obs(const void *state, uint8_t *obs);

static const minatar_game game = {
    .write_obs = write_obs,
    .name = "minatar-breakout",
    .channels = NUM_CH,
    .num_minimal = 3,
    .minimal = {MINATAR_NOOP, MINATAR_LEFT, MINATAR_RIGHT},
    .glyphs = "POtB",
    .render_order = {CH_BALL, CH_PADDLE, CH_TRAIL, CH_BRICK},
};

/* Moves by direction, and the direction after each kind of bounce. */
static const int dir_dx[4] = {-1, +1, +1, -1};
static const int dir_dy[4] = {-1, -1, +1, +1};
static const int flip_horizontal[4] = {1, 0, 3, 2};
static const int flip_vertical[4] = {3, 2, 1, 0};
static const int flip_both[4] = {2, 3, 0, 1};

static int configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	return minatar_configure(&game, options, config, spec, err);
}

static void fill_bricks(minatar_breakout *s)
{
	for (int y = 1; y <= 3; y++)
		memset(s->brick[y], 1, MINATAR_SIZE);
	s->bricks = 3 * MINATAR_SIZE;
}

static void write_obs(const void *state, uint8_t *obs)
{
	const minatar_breakout *s = state;
	memset(obs, 0, MINATAR_SIZE * MINATAR_SIZE * NUM_CH);
	obs[minatar_at(s->ball_y, s->ball_x, CH_BALL, NUM_CH)] = 1;
	obs[minatar_at(9, s->pos, CH_PADDLE, NUM_CH)] = 1;
	obs[minatar_at(s->last_y, s->last_x, CH_TRAIL, NUM_CH)] = 1;
	for (int y = 0; y < MINATAR_SIZE; y++)
		for (int x = 0; x < MINATAR_SIZE; x++)
			obs[minatar_at(y, x, CH_BRICK, NUM_CH)] = s->brick[y][x];
}

static void reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	minatar_breakout *s = state;
	int last_action = s->c.last_action; /* survives episodes, as upstream */

	memset(s, 0, sizeof *s);
	s->c.last_action = last_action;
	s->ball_y = 3;
	if (seed_rng_below(rng, 2) == 0) {
		s->ball_x = 0;
		s->ball_dir = 2;
	} else {
		s->ball_x = 9;
		s->ball_dir = 3;
	}
	s->pos = 4;
	fill_bricks(s);
	s->strike = false;
	s->last_x = s->ball_x;
	s->last_y = s->ball_y;
	write_obs(s, obs);
}

static void step(const void *config, void *state, seed_rng *rng, int action, void *obs, float *reward,
                 bool *terminated)
{
	minatar_breakout *s = state;
	int a = minatar_action(config, &s->c, rng, action);
	int r = 0;

	if (s->c.terminal)
		goto out;

	if (a == MINATAR_LEFT)
		s->pos = s->pos > 0 ? s->pos - 1 : 0;
	else if (a == MINATAR_RIGHT)
		s->pos = s->pos < 9 ? s->pos + 1 : 9;

	s->last_x = s->ball_x;
	s->last_y = s->ball_y;
	int new_x = s->ball_x + dir_dx[s->ball_dir];
	int new_y = s->ball_y + dir_dy[s->ball_dir];

	bool strike_toggle = false;
	if (new_x < 0 || new_x > 9) {
		new_x = new_x < 0 ? 0 : 9;
		s->ball_dir = flip_horizontal[s->ball_dir];
	}
	if (new_y < 0) {
		new_y = 0;
		s->ball_dir = flip_vertical[s->ball_dir];
	} else if (s->brick[new_y][new_x]) {
		strike_toggle = true;
		if (!s->strike) {
			r += 1;
			s->strike = true;
			s->brick[new_y][new_x] = 0;
			s->bricks--;
			new_y = s->last_y;
			s->ball_dir = flip_vertical[s->ball_dir];
		}
	} else if (new_y == 9) {
		if (s->bricks == 0)
			fill_bricks(s);
		if (s->ball_x == s->pos) {
			s->ball_dir = flip_vertical[s->ball_dir];
			new_y = s->last_y;
		} else if (new_x == s->pos) {
			s->ball_dir = flip_both[s->ball_dir];
			new_y = s->last_y;
		} else {
			s->c.terminal = true;
		}
	}
	if (!strike_toggle)
		s->strike = false;

	s->ball_x = new_x;
	s->ball_y = new_y;
out:
	write_obs(s, obs);
	*reward = (float)r;
	*terminated = s->c.terminal;
}

const seed_env_class seed_env_minatar_breakout = {
    .name = "minatar-breakout",
    .summary = "MinAtar Breakout: bounce the ball off the paddle to break bricks (10x10x4 u8)",
    .configure = configure,
    .free_config = minatar_free_config,
    .state_size = sizeof(minatar_breakout),
    .reset = reset,
    .step = step,
    .render_text = minatar_render_text,
    .render_rgb = minatar_render_rgb,
};
