/* envs/minatar_asterix.c: MinAtar Asterix.
 *
 * The player moves in rows 1..8; enemies and gold enter from the sides, one
 * per row at most, and move horizontally.  +1 per gold collected; touching an
 * enemy ends the episode.  With ramping, spawning and movement speed up every
 * 102 steps.  Follows upstream's environments/asterix.py step for step.
 * Channels: player, enemy, trail (the cell behind each entity), gold.
 */
#include <string.h>

#include "minatar.h"
#include "minatar_state.h"

enum { CH_PLAYER, CH_ENEMY, CH_TRAIL, CH_GOLD, NUM_CH };

enum {
	RAMP_INTERVAL = 100,
	INIT_SPAWN_SPEED = 10,
	INIT_MOVE_INTERVAL = 5,
};

static void write_obs(const void *state, uint8_t *obs);

static const minatar_game game = {
    .write_obs = write_obs,
    .name = "minatar-asterix",
    .channels = NUM_CH,
    .num_minimal = 5,
    .minimal = {MINATAR_NOOP, MINATAR_LEFT, MINATAR_UP, MINATAR_RIGHT, MINATAR_DOWN},
    .glyphs = "PEtG",
    .render_order = {CH_PLAYER, CH_ENEMY, CH_GOLD, CH_TRAIL},
};

static int configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	return minatar_configure(&game, options, config, spec, err);
}

static void write_obs(const void *state, uint8_t *obs)
{
	const minatar_asterix *s = state;
	memset(obs, 0, MINATAR_SIZE * MINATAR_SIZE * NUM_CH);
	obs[minatar_at(s->player_y, s->player_x, CH_PLAYER, NUM_CH)] = 1;
	for (int i = 0; i < 8; i++) {
		const minatar_asterix_entity *e = &s->entity[i];
		if (!e->live)
			continue;
		obs[minatar_at(i + 1, e->x, e->gold ? CH_GOLD : CH_ENEMY, NUM_CH)] = 1;
		int back_x = e->right ? e->x - 1 : e->x + 1;
		if (back_x >= 0 && back_x <= 9)
			obs[minatar_at(i + 1, back_x, CH_TRAIL, NUM_CH)] = 1;
	}
}

static void reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	minatar_asterix *s = state;
	int last_action = s->c.last_action; /* survives episodes, as upstream */

	memset(s, 0, sizeof *s);
	s->c.last_action = last_action;
	s->player_x = 5;
	s->player_y = 5;
	s->spawn_speed = INIT_SPAWN_SPEED;
	s->spawn_timer = s->spawn_speed;
	s->move_speed = INIT_MOVE_INTERVAL;
	s->move_timer = s->move_speed;
	s->ramp_timer = RAMP_INTERVAL;
	s->ramp_index = 0;
	write_obs(s, obs);
}

/* Upstream's _spawn_entity: direction and kind are drawn first, then a free
 * slot (row) uniformly, if there is one. */
static void spawn_entity(minatar_asterix *s, seed_rng *rng)
{
	bool lr = seed_rng_double(rng) < 0.5;
	bool is_gold = seed_rng_double(rng) < 1.0 / 3.0;
	int options[8], n = 0;
	for (int i = 0; i < 8; i++)
		if (!s->entity[i].live)
			options[n++] = i;
	if (n == 0)
		return;
	int slot = options[seed_rng_below(rng, (uint32_t)n)];
	s->entity[slot] =
	    (minatar_asterix_entity){.live = true, .right = lr, .gold = is_gold, .x = lr ? 0 : 9};
}

/* The entity in slot i is on the player's cell: collect gold, or end the
 * episode (the enemy stays). */
static void touch(minatar_asterix *s, int i, int *r)
{
	if (s->entity[i].gold) {
		s->entity[i].live = false;
		*r += 1;
	} else {
		s->c.terminal = true;
	}
}

static void step(const void *config, void *state, seed_rng *rng, int action, void *obs, float *reward,
                 bool *terminated)
{
	const minatar_config *cfg = config;
	minatar_asterix *s = state;
	int a = minatar_action(cfg, &s->c, rng, action);
	int r = 0;

	if (s->c.terminal)
		goto out;

	if (s->spawn_timer == 0) {
		spawn_entity(s, rng);
		s->spawn_timer = s->spawn_speed;
	}

	if (a == MINATAR_LEFT)
		s->player_x = s->player_x > 0 ? s->player_x - 1 : 0;
	else if (a == MINATAR_RIGHT)
		s->player_x = s->player_x < 9 ? s->player_x + 1 : 9;
	else if (a == MINATAR_UP)
		s->player_y = s->player_y > 1 ? s->player_y - 1 : 1;
	else if (a == MINATAR_DOWN)
		s->player_y = s->player_y < 8 ? s->player_y + 1 : 8;

	for (int i = 0; i < 8; i++) {
		minatar_asterix_entity *e = &s->entity[i];
		if (e->live && e->x == s->player_x && i + 1 == s->player_y)
			touch(s, i, &r);
	}
	if (s->move_timer == 0) {
		s->move_timer = s->move_speed;
		for (int i = 0; i < 8; i++) {
			minatar_asterix_entity *e = &s->entity[i];
			if (!e->live)
				continue;
			e->x += e->right ? 1 : -1;
			if (e->x < 0 || e->x > 9)
				e->live = false;
			else if (e->x == s->player_x && i + 1 == s->player_y)
				touch(s, i, &r);
		}
	}

	s->spawn_timer -= 1;
	s->move_timer -= 1;

	if (cfg->difficulty_ramping && (s->spawn_speed > 1 || s->move_speed > 1)) {
		if (s->ramp_timer >= 0) {
			s->ramp_timer -= 1;
		} else {
			if (s->move_speed > 1 && s->ramp_index % 2)
				s->move_speed -= 1;
			if (s->spawn_speed > 1)
				s->spawn_speed -= 1;
			s->ramp_index += 1;
			s->ramp_timer = RAMP_INTERVAL;
		}
	}
out:
	write_obs(s, obs);
	*reward = (float)r;
	*terminated = s->c.terminal;
}

const seed_env_class seed_env_minatar_asterix = {
    .name = "minatar-asterix",
    .summary = "MinAtar Asterix: collect gold, avoid enemies crossing the rows (10x10x4 u8)",
    .configure = configure,
    .free_config = minatar_free_config,
    .state_size = sizeof(minatar_asterix),
    .reset = reset,
    .step = step,
    .render_text = minatar_render_text,
    .render_rgb = minatar_render_rgb,
};
