/* envs/minatar_seaquest.c: MinAtar Seaquest.
 *
 * The player's submarine shoots fish and enemy subs (+1 each), picks up
 * divers, and must surface before its oxygen runs out; surfacing needs a
 * diver on board and costs one, surfacing with six pays a bonus for the
 * oxygen left.  Contact with a fish, an enemy sub or an enemy bullet ends the
 * episode.  With ramping, every surfacing makes enemies spawn more often and
 * move faster.  Follows upstream's environments/seaquest.py step for step.
 * Channels: sub_front, sub_back, friendly_bullet, trail, enemy_bullet,
 * enemy_fish, enemy_sub, oxygen_guage, diver_guage, diver.
 *
 * Lists.  Upstream keeps each kind of object in a Python list, walks most of
 * them from the last to the first, and deletes by value while walking.  Here
 * each list is an array in creation order and a deletion removes the object
 * meant, keeping the order.  That is the same thing: whenever upstream
 * deletes by value, the first equal element is the object meant
 * (doc/minatar.md gives the argument), and since only the visited object is
 * deleted from the list being walked, the walk visits every object once, as
 * upstream's reversed() does.
 *
 * Capacities (the rules bound every list; the checks on append only protect
 * memory and never trigger):
 *   - friendly bullets: one shot every 5 steps at most, each gone within 10
 *     steps, so at most 2 exist;
 *   - divers: one every 30 steps, each gone within 60, so at most 2;
 *   - fish, enemy subs: at most one spawn per step, each gone within 60
 *     steps (10 moves, one every move_speed + 1 <= 6 steps), so at most 60
 *     enemies in all;
 *   - enemy bullets: each lives at most 10 steps and each sub shoots at most
 *     once in 11 steps, so at most one per sub alive in the last 10 steps:
 *     60 + 10.
 */
#include <string.h>

#include "minatar.h"
#include "minatar_state.h"

enum {
	CH_SUB_FRONT,
	CH_SUB_BACK,
	CH_FRIENDLY_BULLET,
	CH_TRAIL,
	CH_ENEMY_BULLET,
	CH_ENEMY_FISH,
	CH_ENEMY_SUB,
	CH_OXYGEN_GUAGE,
	CH_DIVER_GUAGE,
	CH_DIVER,
	NUM_CH
};

enum {
	MAX_OXYGEN = 200,
	INIT_SPAWN_SPEED = 20,
	DIVER_SPAWN_SPEED = 30,
	INIT_MOVE_INTERVAL = 5,
	SHOT_COOL_DOWN = 5,
	ENEMY_SHOT_INTERVAL = 10,
	DIVER_MOVE_INTERVAL = 5,
};

static void write_obs(const void *state, uint8_t *obs);

static const minatar_game game = {
    .write_obs = write_obs,
    .name = "minatar-seaquest",
    .channels = NUM_CH,
    .num_minimal = 6,
    .minimal = {MINATAR_NOOP, MINATAR_LEFT, MINATAR_UP, MINATAR_RIGHT, MINATAR_DOWN, MINATAR_FIRE},
    .glyphs = "SsftbFEOGD",
    .render_order = {CH_SUB_FRONT, CH_SUB_BACK, CH_ENEMY_BULLET, CH_FRIENDLY_BULLET, CH_ENEMY_SUB,
                     CH_ENEMY_FISH, CH_DIVER, CH_DIVER_GUAGE, CH_OXYGEN_GUAGE, CH_TRAIL},
};

typedef minatar_seaquest_obj obj;

static int configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	return minatar_configure(&game, options, config, spec, err);
}

static void append(obj *list, int *n, int cap, obj o)
{
	if (*n < cap)
		list[(*n)++] = o;
}

/* Delete list[i], keeping the order of the others. */
static void delete_at(obj *list, int *n, int i)
{
	memmove(&list[i], &list[i + 1], (size_t)(*n - i - 1) * sizeof *list);
	(*n)--;
}

static bool off_grid(const obj *o)
{
	return o->x < 0 || o->x > 9;
}

static void write_trail(uint8_t *obs, const obj *o)
{
	int back_x = o->right ? o->x - 1 : o->x + 1;
	if (back_x >= 0 && back_x <= 9)
		obs[minatar_at(o->y, back_x, CH_TRAIL, NUM_CH)] = 1;
}

static void write_obs(const void *state, uint8_t *obs)
{
	const minatar_seaquest *s = state;
	memset(obs, 0, MINATAR_SIZE * MINATAR_SIZE * NUM_CH);
	obs[minatar_at(s->sub_y, s->sub_x, CH_SUB_FRONT, NUM_CH)] = 1;
	/* The back is always inside the grid: facing right at column 0 or left
	 * at column 9 cannot happen (moving sets the facing). */
	int back_x = s->sub_or ? s->sub_x - 1 : s->sub_x + 1;
	if (back_x >= 0 && back_x <= 9)
		obs[minatar_at(s->sub_y, back_x, CH_SUB_BACK, NUM_CH)] = 1;
	int oxygen_cells = (s->oxygen > 0 ? s->oxygen : 0) * 10 / MAX_OXYGEN;
	for (int x = 0; x < oxygen_cells; x++)
		obs[minatar_at(9, x, CH_OXYGEN_GUAGE, NUM_CH)] = 1;
	/* Upstream's slice 9 - diver_count : 9 (empty when diver_count <= 0). */
	for (int x = 9 - s->diver_count; x < 9; x++)
		obs[minatar_at(9, x, CH_DIVER_GUAGE, NUM_CH)] = 1;
	for (int i = 0; i < s->n_f_bullets; i++)
		obs[minatar_at(s->f_bullets[i].y, s->f_bullets[i].x, CH_FRIENDLY_BULLET, NUM_CH)] = 1;
	for (int i = 0; i < s->n_e_bullets; i++)
		obs[minatar_at(s->e_bullets[i].y, s->e_bullets[i].x, CH_ENEMY_BULLET, NUM_CH)] = 1;
	for (int i = 0; i < s->n_fish; i++) {
		obs[minatar_at(s->fish[i].y, s->fish[i].x, CH_ENEMY_FISH, NUM_CH)] = 1;
		write_trail(obs, &s->fish[i]);
	}
	for (int i = 0; i < s->n_subs; i++) {
		obs[minatar_at(s->subs[i].y, s->subs[i].x, CH_ENEMY_SUB, NUM_CH)] = 1;
		write_trail(obs, &s->subs[i]);
	}
	for (int i = 0; i < s->n_divers; i++) {
		obs[minatar_at(s->divers[i].y, s->divers[i].x, CH_DIVER, NUM_CH)] = 1;
		write_trail(obs, &s->divers[i]);
	}
}

static void reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	minatar_seaquest *s = state;
	int last_action = s->c.last_action; /* survives episodes, as upstream */

	memset(s, 0, sizeof *s);
	s->c.last_action = last_action;
	s->oxygen = MAX_OXYGEN;
	s->diver_count = 0;
	s->sub_x = 5;
	s->sub_y = 0;
	s->sub_or = false;
	s->e_spawn_speed = INIT_SPAWN_SPEED;
	s->e_spawn_timer = s->e_spawn_speed;
	s->d_spawn_timer = DIVER_SPAWN_SPEED;
	s->move_speed = INIT_MOVE_INTERVAL;
	s->ramp_index = 0;
	s->shot_timer = 0;
	s->surface = true;
	write_obs(s, obs);
}

/* Upstream's _spawn_enemy: direction, kind and row are drawn; nothing
 * spawns if an enemy in that row moves the other way. */
static void spawn_enemy(minatar_seaquest *s, seed_rng *rng)
{
	bool lr = seed_rng_double(rng) < 0.5;
	bool is_sub = seed_rng_double(rng) < 1.0 / 3.0;
	int x = lr ? 0 : 9;
	int y = 1 + (int)seed_rng_below(rng, 8);

	for (int i = 0; i < s->n_subs; i++)
		if (s->subs[i].y == y && s->subs[i].right != lr)
			return;
	for (int i = 0; i < s->n_fish; i++)
		if (s->fish[i].y == y && s->fish[i].right != lr)
			return;
	obj o = {.x = (int8_t)x, .y = (int8_t)y, .right = lr, .move_timer = (int8_t)s->move_speed};
	if (is_sub) {
		o.shot_timer = ENEMY_SHOT_INTERVAL;
		append(s->subs, &s->n_subs, MINATAR_SEAQUEST_MAX_ENEMIES, o);
	} else {
		append(s->fish, &s->n_fish, MINATAR_SEAQUEST_MAX_ENEMIES, o);
	}
}

static void spawn_diver(minatar_seaquest *s, seed_rng *rng)
{
	bool lr = seed_rng_double(rng) < 0.5;
	int y = 1 + (int)seed_rng_below(rng, 8);
	obj o = {.x = lr ? 0 : 9, .y = (int8_t)y, .right = lr, .move_timer = DIVER_MOVE_INTERVAL};
	append(s->divers, &s->n_divers, MINATAR_SEAQUEST_MAX_DIVERS, o);
}

static bool at_player(const minatar_seaquest *s, const obj *o)
{
	return o->x == s->sub_x && o->y == s->sub_y;
}

/* Index of the first object of list on o's cell, or -1. */
static int find_at(const obj *list, int n, const obj *o)
{
	for (int i = 0; i < n; i++)
		if (list[i].x == o->x && list[i].y == o->y)
			return i;
	return -1;
}

/* Upstream's _surface: the divers' bonus, fresh oxygen, one diver less, and
 * a ramp step. */
static int surface(minatar_seaquest *s, bool ramping)
{
	int r = 0;
	s->surface = true;
	if (s->diver_count == 6) {
		s->diver_count = 0;
		r = s->oxygen * 10 / MAX_OXYGEN;
	}
	s->oxygen = MAX_OXYGEN;
	s->diver_count -= 1;
	if (ramping && (s->e_spawn_speed > 1 || s->move_speed > 2)) {
		if (s->move_speed > 2 && s->ramp_index % 2)
			s->move_speed -= 1;
		if (s->e_spawn_speed > 1)
			s->e_spawn_speed -= 1;
		s->ramp_index += 1;
	}
	return r;
}

/* Move an enemy (fish or sub) as upstream does: contact before the move,
 * then on its move timer one column, contact after it, or a friendly bullet
 * on its new cell destroys both.  Returns true if the enemy is gone. */
static bool move_enemy(minatar_seaquest *s, obj *e, int *r)
{
	bool gone = false;
	if (at_player(s, e))
		s->c.terminal = true;
	if (e->move_timer == 0) {
		e->move_timer = (int8_t)s->move_speed;
		e->x += e->right ? 1 : -1;
		if (off_grid(e)) {
			gone = true;
		} else if (at_player(s, e)) {
			s->c.terminal = true;
		} else {
			int b = find_at(s->f_bullets, s->n_f_bullets, e);
			if (b >= 0) {
				delete_at(s->f_bullets, &s->n_f_bullets, b);
				*r += 1;
				gone = true;
			}
		}
	} else {
		e->move_timer -= 1;
	}
	return gone;
}

/* The player's move: fire (when the gun has cooled down), or one cell. */
static void move_player(minatar_seaquest *s, int a)
{
	if (a == MINATAR_FIRE && s->shot_timer == 0) {
		obj b = {.x = (int8_t)s->sub_x, .y = (int8_t)s->sub_y, .right = s->sub_or};
		append(s->f_bullets, &s->n_f_bullets, MINATAR_SEAQUEST_MAX_F_BULLETS, b);
		s->shot_timer = SHOT_COOL_DOWN;
	} else if (a == MINATAR_LEFT) {
		s->sub_x = s->sub_x > 0 ? s->sub_x - 1 : 0;
		s->sub_or = false;
	} else if (a == MINATAR_RIGHT) {
		s->sub_x = s->sub_x < 9 ? s->sub_x + 1 : 9;
		s->sub_or = true;
	} else if (a == MINATAR_UP) {
		s->sub_y = s->sub_y > 0 ? s->sub_y - 1 : 0;
	} else if (a == MINATAR_DOWN) {
		s->sub_y = s->sub_y < 8 ? s->sub_y + 1 : 8;
	}
}

/* Friendly bullets: move, then hit the first fish on the cell, else the
 * first enemy sub.  Returns the enemies hit. */
static int move_f_bullets(minatar_seaquest *s)
{
	int r = 0;
	for (int i = s->n_f_bullets - 1; i >= 0; i--) {
		obj *b = &s->f_bullets[i];
		b->x += b->right ? 1 : -1;
		if (off_grid(b)) {
			delete_at(s->f_bullets, &s->n_f_bullets, i);
			continue;
		}
		int j = find_at(s->fish, s->n_fish, b);
		if (j >= 0) {
			delete_at(s->fish, &s->n_fish, j);
		} else {
			j = find_at(s->subs, s->n_subs, b);
			if (j < 0)
				continue;
			delete_at(s->subs, &s->n_subs, j);
		}
		delete_at(s->f_bullets, &s->n_f_bullets, i);
		r += 1;
	}
	return r;
}

/* Divers: picked up when on the sub's cell (with room), before or after
 * their move. */
static void move_divers(minatar_seaquest *s)
{
	for (int i = s->n_divers - 1; i >= 0; i--) {
		obj *d = &s->divers[i];
		if (at_player(s, d) && s->diver_count < 6) {
			delete_at(s->divers, &s->n_divers, i);
			s->diver_count += 1;
		} else if (d->move_timer == 0) {
			d->move_timer = DIVER_MOVE_INTERVAL;
			d->x += d->right ? 1 : -1;
			if (off_grid(d)) {
				delete_at(s->divers, &s->n_divers, i);
			} else if (at_player(s, d) && s->diver_count < 6) {
				delete_at(s->divers, &s->n_divers, i);
				s->diver_count += 1;
			}
		} else {
			d->move_timer -= 1;
		}
	}
}

/* Enemy subs: move, then shoot, even when the move just removed the sub
 * (upstream keeps using it): the bullet starts on its last cell. */
static void move_subs(minatar_seaquest *s, int *r)
{
	for (int i = s->n_subs - 1; i >= 0; i--) {
		obj sub = s->subs[i];
		bool gone = move_enemy(s, &sub, r);
		if (sub.shot_timer == 0) {
			sub.shot_timer = ENEMY_SHOT_INTERVAL;
			obj b = {.x = sub.x, .y = sub.y, .right = sub.right};
			append(s->e_bullets, &s->n_e_bullets, MINATAR_SEAQUEST_MAX_E_BULLETS, b);
		} else {
			sub.shot_timer -= 1;
		}
		if (gone)
			delete_at(s->subs, &s->n_subs, i);
		else
			s->subs[i] = sub;
	}
}

/* Enemy bullets (including those just fired): contact before and after the
 * move. */
static void move_e_bullets(minatar_seaquest *s)
{
	for (int i = s->n_e_bullets - 1; i >= 0; i--) {
		obj *b = &s->e_bullets[i];
		if (at_player(s, b))
			s->c.terminal = true;
		b->x += b->right ? 1 : -1;
		if (off_grid(b))
			delete_at(s->e_bullets, &s->n_e_bullets, i);
		else if (at_player(s, b))
			s->c.terminal = true;
	}
}

/* The end of a step: the timers count down and the oxygen with them below
 * the surface; reaching the surface ends the episode without a diver on
 * board and surfaces with one (returning surface's reward). */
static int breathe(minatar_seaquest *s, bool ramping)
{
	if (s->e_spawn_timer > 0)
		s->e_spawn_timer -= 1;
	if (s->d_spawn_timer > 0)
		s->d_spawn_timer -= 1;
	if (s->shot_timer > 0)
		s->shot_timer -= 1;
	if (s->oxygen <= 0)
		s->c.terminal = true;
	if (s->sub_y > 0) {
		s->oxygen -= 1;
		s->surface = false;
	} else if (!s->surface) {
		if (s->diver_count == 0)
			s->c.terminal = true;
		else
			return surface(s, ramping);
	}
	return 0;
}

static void step(const void *config, void *state, seed_rng *rng, int action, void *obs, float *reward,
                 bool *terminated)
{
	const minatar_config *cfg = config;
	minatar_seaquest *s = state;
	int a = minatar_action(cfg, &s->c, rng, action);
	int r = 0;

	if (!s->c.terminal) {
		if (s->e_spawn_timer == 0) {
			spawn_enemy(s, rng);
			s->e_spawn_timer = s->e_spawn_speed;
		}
		if (s->d_spawn_timer == 0) {
			spawn_diver(s, rng);
			s->d_spawn_timer = DIVER_SPAWN_SPEED;
		}
		move_player(s, a);
		r += move_f_bullets(s);
		move_divers(s);
		move_subs(s, &r);
		move_e_bullets(s);
		for (int i = s->n_fish - 1; i >= 0; i--)
			if (move_enemy(s, &s->fish[i], &r))
				delete_at(s->fish, &s->n_fish, i);
		r += breathe(s, cfg->difficulty_ramping);
	}
	write_obs(s, obs);
	*reward = (float)r;
	*terminated = s->c.terminal;
}

const seed_env_class seed_env_minatar_seaquest = {
    .name = "minatar-seaquest",
    .summary = "MinAtar Seaquest: shoot enemies, rescue divers, surface for oxygen (10x10x10 u8)",
    .configure = configure,
    .free_config = minatar_free_config,
    .state_size = sizeof(minatar_seaquest),
    .reset = reset,
    .step = step,
    .render_text = minatar_render_text,
    .render_rgb = minatar_render_rgb,
};
