/* envs/minatar_space_invaders.c: MinAtar Space Invaders.
 *
 * A cannon in row 9 shoots at a block of aliens that sweeps sideways and
 * steps down at the edges, faster as it thins out; +1 per alien shot; a
 * cleared wave is replaced by a new one (with ramping, a faster one).  The
 * aliens shoot back from the column nearest the cannon.  An enemy bullet or
 * an alien reaching the cannon, or the block having to step down from row 9,
 * ends the episode.  No randomness.  Follows upstream's
 * environments/space_invaders.py step for step, including its numpy rolls
 * (cyclic shifts).  Channels: cannon, alien, alien_left, alien_right
 * (the alien map again, in the channel of the block's direction),
 * friendly_bullet, enemy_bullet.
 */
#include <string.h>

#include "minatar.h"
#include "minatar_state.h"

enum { CH_CANNON, CH_ALIEN, CH_ALIEN_LEFT, CH_ALIEN_RIGHT, CH_FRIENDLY_BULLET, CH_ENEMY_BULLET, NUM_CH };

enum {
	SHOT_COOL_DOWN = 5,
	ENEMY_MOVE_INTERVAL = 12,
	ENEMY_SHOT_INTERVAL = 10,
};

static void write_obs(const void *state, uint8_t *obs);

static const minatar_game game = {
    .write_obs = write_obs,
    .name = "minatar-space-invaders",
    .channels = NUM_CH,
    .num_minimal = 4,
    .minimal = {MINATAR_NOOP, MINATAR_LEFT, MINATAR_RIGHT, MINATAR_FIRE},
    .glyphs = "CALRfe",
    .render_order = {CH_CANNON, CH_ENEMY_BULLET, CH_FRIENDLY_BULLET, CH_ALIEN_LEFT, CH_ALIEN_RIGHT, CH_ALIEN},
};

typedef uint8_t map[MINATAR_SIZE][MINATAR_SIZE];

static int configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	return minatar_configure(&game, options, config, spec, err);
}

static void write_obs(const void *state, uint8_t *obs)
{
	const minatar_space_invaders *s = state;
	int dir_ch = s->alien_dir < 0 ? CH_ALIEN_LEFT : CH_ALIEN_RIGHT;
	memset(obs, 0, MINATAR_SIZE * MINATAR_SIZE * NUM_CH);
	obs[minatar_at(9, s->pos, CH_CANNON, NUM_CH)] = 1;
	for (int y = 0; y < MINATAR_SIZE; y++) {
		for (int x = 0; x < MINATAR_SIZE; x++) {
			obs[minatar_at(y, x, CH_ALIEN, NUM_CH)] = s->alien[y][x];
			obs[minatar_at(y, x, dir_ch, NUM_CH)] = s->alien[y][x];
			obs[minatar_at(y, x, CH_FRIENDLY_BULLET, NUM_CH)] = s->f_bullet[y][x];
			obs[minatar_at(y, x, CH_ENEMY_BULLET, NUM_CH)] = s->e_bullet[y][x];
		}
	}
}

static void fill_aliens(minatar_space_invaders *s)
{
	for (int y = 0; y < 4; y++)
		for (int x = 2; x < 8; x++)
			s->alien[y][x] = 1;
}

static void reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	minatar_space_invaders *s = state;
	int last_action = s->c.last_action; /* survives episodes, as upstream */

	memset(s, 0, sizeof *s);
	s->c.last_action = last_action;
	s->pos = 5;
	fill_aliens(s);
	s->alien_dir = -1;
	s->enemy_move_interval = ENEMY_MOVE_INTERVAL;
	s->alien_move_timer = s->enemy_move_interval;
	s->alien_shot_timer = ENEMY_SHOT_INTERVAL;
	s->ramp_index = 0;
	s->shot_timer = 0;
	write_obs(s, obs);
}

/* numpy.roll along rows (axis 0) by +1 (down) or -1 (up): cyclic. */
static void roll_rows(map m, int by)
{
	uint8_t row[MINATAR_SIZE];
	if (by > 0) {
		memcpy(row, m[9], sizeof row);
		memmove(m[1], m[0], 9 * sizeof row);
		memcpy(m[0], row, sizeof row);
	} else {
		memcpy(row, m[0], sizeof row);
		memmove(m[0], m[1], 9 * sizeof row);
		memcpy(m[9], row, sizeof row);
	}
}

/* numpy.roll along columns (axis 1) by +1 (right) or -1 (left): cyclic. */
static void roll_columns(map m, int by)
{
	for (int y = 0; y < MINATAR_SIZE; y++) {
		uint8_t *row = m[y];
		if (by > 0) {
			uint8_t last = row[9];
			memmove(row + 1, row, 9);
			row[0] = last;
		} else {
			uint8_t first = row[0];
			memmove(row, row + 1, 9);
			row[9] = first;
		}
	}
}

static bool column_has(const map m, int x)
{
	for (int y = 0; y < MINATAR_SIZE; y++)
		if (m[y][x])
			return true;
	return false;
}

static bool row_has(const map m, int y)
{
	for (int x = 0; x < MINATAR_SIZE; x++)
		if (m[y][x])
			return true;
	return false;
}

static int count(const map m)
{
	int n = 0;
	for (int y = 0; y < MINATAR_SIZE; y++)
		for (int x = 0; x < MINATAR_SIZE; x++)
			n += m[y][x];
	return n;
}

/* Upstream's _nearest_alien: columns by distance to pos (ties: the smaller
 * column first); the lowest alien of the first column that has one.
 * Returns false if there is no alien. */
static bool nearest_alien(const minatar_space_invaders *s, int *ay, int *ax)
{
	for (int d = 0; d < MINATAR_SIZE; d++) {
		int cols[2] = {s->pos - d, s->pos + d};
		for (int k = 0; k < (d ? 2 : 1); k++) {
			int x = cols[k];
			if (x < 0 || x > 9)
				continue;
			for (int y = 9; y >= 0; y--) {
				if (s->alien[y][x]) {
					*ay = y;
					*ax = x;
					return true;
				}
			}
		}
	}
	return false;
}

static void step(const void *config, void *state, seed_rng *rng, int action, void *obs, float *reward,
                 bool *terminated)
{
	const minatar_config *cfg = config;
	minatar_space_invaders *s = state;
	int a = minatar_action(cfg, &s->c, rng, action);
	int r = 0;

	if (s->c.terminal)
		goto out;

	if (a == MINATAR_FIRE && s->shot_timer == 0) {
		s->f_bullet[9][s->pos] = 1;
		s->shot_timer = SHOT_COOL_DOWN;
	} else if (a == MINATAR_LEFT) {
		s->pos = s->pos > 0 ? s->pos - 1 : 0;
	} else if (a == MINATAR_RIGHT) {
		s->pos = s->pos < 9 ? s->pos + 1 : 9;
	}

	/* Friendly bullets up (row 0 leaves), enemy bullets down (row 9 leaves). */
	roll_rows(s->f_bullet, -1);
	memset(s->f_bullet[9], 0, MINATAR_SIZE);
	roll_rows(s->e_bullet, +1);
	memset(s->e_bullet[0], 0, MINATAR_SIZE);
	if (s->e_bullet[9][s->pos])
		s->c.terminal = true;

	if (s->alien[9][s->pos])
		s->c.terminal = true;
	if (s->alien_move_timer == 0) {
		int n = count(s->alien);
		s->alien_move_timer = n < s->enemy_move_interval ? n : s->enemy_move_interval;
		if ((column_has(s->alien, 0) && s->alien_dir < 0) ||
		    (column_has(s->alien, 9) && s->alien_dir > 0)) {
			s->alien_dir = -s->alien_dir;
			if (row_has(s->alien, 9))
				s->c.terminal = true;
			roll_rows(s->alien, +1);
		} else {
			roll_columns(s->alien, s->alien_dir);
		}
		if (s->alien[9][s->pos])
			s->c.terminal = true;
	}
	if (s->alien_shot_timer == 0) {
		s->alien_shot_timer = ENEMY_SHOT_INTERVAL;
		int ay, ax;
		/* There is always an alien here: a cleared wave is replaced at
		 * the end of the step that cleared it. */
		if (nearest_alien(s, &ay, &ax))
			s->e_bullet[ay][ax] = 1;
	}

	for (int y = 0; y < MINATAR_SIZE; y++) {
		for (int x = 0; x < MINATAR_SIZE; x++) {
			if (s->alien[y][x] && s->f_bullet[y][x]) {
				s->alien[y][x] = 0;
				s->f_bullet[y][x] = 0;
				r += 1;
			}
		}
	}

	if (s->shot_timer > 0)
		s->shot_timer -= 1;
	s->alien_move_timer -= 1;
	s->alien_shot_timer -= 1;
	if (count(s->alien) == 0) {
		if (s->enemy_move_interval > 6 && cfg->difficulty_ramping) {
			s->enemy_move_interval -= 1;
			s->ramp_index += 1;
		}
		fill_aliens(s);
	}
out:
	write_obs(s, obs);
	*reward = (float)r;
	*terminated = s->c.terminal;
}

const seed_env_class seed_env_minatar_space_invaders = {
    .name = "minatar-space-invaders",
    .summary = "MinAtar Space Invaders: shoot the descending alien block before it reaches you (10x10x6 u8)",
    .configure = configure,
    .free_config = minatar_free_config,
    .state_size = sizeof(minatar_space_invaders),
    .reset = reset,
    .step = step,
    .render_text = minatar_render_text,
    .render_rgb = minatar_render_rgb,
};
