/* envs/minatar_freeway.c: MinAtar Freeway.
 *
 * A chicken in column 4 crosses eight lanes of cars from row 9 to row 0; +1
 * per crossing, after which it starts again from row 9 and the cars get new
 * speeds; a car hit sends it back to row 9.  The chicken moves at most once
 * every 3 steps.  The episode ends itself on step 2501.  Follows upstream's
 * environments/freeway.py step for step.  Channels: chicken, car, and five
 * trail channels, one per car speed (the cell behind each car).
 */
#include <stdlib.h>
#include <string.h>

#include "minatar.h"
#include "minatar_state.h"

enum { CH_CHICKEN, CH_CAR, CH_SPEED1, NUM_CH = CH_SPEED1 + 5 };

enum {
	PLAYER_SPEED = 3,
	TIME_LIMIT = 2500,
};

static void write_obs(const void *state, uint8_t *obs);

static const minatar_game game = {
    .write_obs = write_obs,
    .name = "minatar-freeway",
    .channels = NUM_CH,
    .num_minimal = 3,
    .minimal = {MINATAR_NOOP, MINATAR_UP, MINATAR_DOWN},
    .glyphs = "CA12345",
    .render_order = {CH_CHICKEN, CH_CAR, CH_SPEED1, CH_SPEED1 + 1, CH_SPEED1 + 2, CH_SPEED1 + 3,
                     CH_SPEED1 + 4},
};

static int configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	return minatar_configure(&game, options, config, spec, err);
}

static void write_obs(const void *state, uint8_t *obs)
{
	const minatar_freeway *s = state;
	memset(obs, 0, MINATAR_SIZE * MINATAR_SIZE * NUM_CH);
	obs[minatar_at(s->pos, 4, CH_CHICKEN, NUM_CH)] = 1;
	for (int i = 0; i < 8; i++) {
		const minatar_freeway_car *car = &s->car[i];
		obs[minatar_at(i + 1, car->x, CH_CAR, NUM_CH)] = 1;
		int back_x = car->speed > 0 ? car->x - 1 : car->x + 1;
		if (back_x < 0)
			back_x = 9;
		else if (back_x > 9)
			back_x = 0;
		obs[minatar_at(i + 1, back_x, CH_SPEED1 - 1 + abs(car->speed), NUM_CH)] = 1;
	}
}

/* Upstream's _randomize_cars: eight speeds uniform in 1..5, then eight
 * directions sign(u - 0.5) for uniform u.  Upstream gives a car speed 0
 * when u is exactly 0.5 (probability 2^-53 per car), which its observation
 * code cannot draw; here u <= 0.5 means left, so speeds are never 0. */
static void randomize_cars(minatar_freeway *s, seed_rng *rng, bool initialize)
{
	int speed[8];
	for (int i = 0; i < 8; i++)
		speed[i] = 1 + (int)seed_rng_below(rng, 5);
	for (int i = 0; i < 8; i++)
		if (!(seed_rng_double(rng) > 0.5))
			speed[i] = -speed[i];
	for (int i = 0; i < 8; i++) {
		if (initialize)
			s->car[i].x = 0;
		s->car[i].timer = abs(speed[i]);
		s->car[i].speed = speed[i];
	}
}

static void reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	minatar_freeway *s = state;
	int last_action = s->c.last_action; /* survives episodes, as upstream */

	memset(s, 0, sizeof *s);
	s->c.last_action = last_action;
	randomize_cars(s, rng, true);
	s->pos = 9;
	s->move_timer = PLAYER_SPEED;
	s->terminate_timer = TIME_LIMIT;
	write_obs(s, obs);
}

static void step(const void *config, void *state, seed_rng *rng, int action, void *obs, float *reward,
                 bool *terminated)
{
	minatar_freeway *s = state;
	int a = minatar_action(config, &s->c, rng, action);
	int r = 0;

	if (s->c.terminal)
		goto out;

	if (a == MINATAR_UP && s->move_timer == 0) {
		s->move_timer = PLAYER_SPEED;
		s->pos = s->pos > 0 ? s->pos - 1 : 0;
	} else if (a == MINATAR_DOWN && s->move_timer == 0) {
		s->move_timer = PLAYER_SPEED;
		s->pos = s->pos < 9 ? s->pos + 1 : 9;
	}

	if (s->pos == 0) {
		r += 1;
		randomize_cars(s, rng, false);
		s->pos = 9;
	}

	for (int i = 0; i < 8; i++) {
		minatar_freeway_car *car = &s->car[i];
		if (car->x == 4 && i + 1 == s->pos)
			s->pos = 9;
		if (car->timer == 0) {
			car->timer = abs(car->speed);
			car->x += car->speed > 0 ? 1 : -1;
			if (car->x < 0)
				car->x = 9;
			else if (car->x > 9)
				car->x = 0;
			if (car->x == 4 && i + 1 == s->pos)
				s->pos = 9;
		} else {
			car->timer -= 1;
		}
	}

	if (s->move_timer > 0)
		s->move_timer -= 1;
	s->terminate_timer -= 1;
	if (s->terminate_timer < 0)
		s->c.terminal = true;
out:
	write_obs(s, obs);
	*reward = (float)r;
	*terminated = s->c.terminal;
}

const seed_env_class seed_env_minatar_freeway = {
    .name = "minatar-freeway",
    .summary = "MinAtar Freeway: get the chicken across eight lanes of traffic (10x10x7 u8)",
    .configure = configure,
    .free_config = minatar_free_config,
    .state_size = sizeof(minatar_freeway),
    .reset = reset,
    .step = step,
    .render_text = minatar_render_text,
    .render_rgb = minatar_render_rgb,
};
