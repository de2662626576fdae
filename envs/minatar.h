/* envs/minatar.h: the five MinAtar games (Young and Tian, 2019) as built-in
 * environment classes, and what the five share.
 *
 * The classes follow the original Python package (minatar 1.0.15) rule for
 * rule and step for step; doc/minatar.md lists what that means where the
 * upstream code is subtle.  Every class:
 *   - observes u8 [10][10][C] (row, column, channel; 0/1 planes in MinAtar's
 *     channel order);
 *   - takes MinAtar's full action set by default (6 actions: no-op, left, up,
 *     right, down, fire), or the game's minimal set with
 *     {"minimal_action_set": true} (action i is the i-th minimal action);
 *   - repeats the previous action with probability "sticky_action_prob"
 *     (default 0.1), where the previous action is the one last executed by
 *     this instance, across episodes: reset does not forget it, exactly as
 *     upstream (an instance starts with the no-op as its previous action,
 *     which is what a zeroed state holds);
 *   - ramps difficulty unless {"difficulty_ramping": false} (Asterix,
 *     Seaquest, Space Invaders; Breakout and Freeway accept and ignore it);
 *   - has no time limit of its own (spec max_steps 0).  Freeway ends itself
 *     after 2500 steps (terminated, as upstream reports it).
 *
 * The minatar_* helpers are internal to libseed: their names do not start
 * with seed_, so the library does not export them.
 */
#ifndef SEED_ENVS_MINATAR_H
#define SEED_ENVS_MINATAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/env.h"
#include "seed/rng.h"

extern const seed_env_class seed_env_minatar_breakout;
extern const seed_env_class seed_env_minatar_asterix;
extern const seed_env_class seed_env_minatar_freeway;
extern const seed_env_class seed_env_minatar_seaquest;
extern const seed_env_class seed_env_minatar_space_invaders;

/* MinAtar's full action set, in its order. */
enum minatar_action {
	MINATAR_NOOP = 0,
	MINATAR_LEFT = 1,
	MINATAR_UP = 2,
	MINATAR_RIGHT = 3,
	MINATAR_DOWN = 4,
	MINATAR_FIRE = 5,
	MINATAR_NUM_ACTIONS = 6,
};

#define MINATAR_SIZE 10
#define MINATAR_MAX_CHANNELS 10

/* What a game tells the shared code about itself. */
typedef struct minatar_game {
	const char *name;                 /* class name, e.g. "minatar-breakout" */
	int channels;                     /* observation channels */
	int num_minimal;                  /* size of the minimal action set */
	int minimal[MINATAR_NUM_ACTIONS]; /* the minimal set, as full actions */
	const char *glyphs;               /* one character per channel, for render_text */
	/* Channels in the order render_text looks for them: a cell shows the
	 * glyph of the first channel present in it (only the first `channels`
	 * entries are used). */
	int render_order[MINATAR_MAX_CHANNELS];
	/* Write the observation of a state (the game's own struct). */
	void (*write_obs)(const void *state, uint8_t *obs);
} minatar_game;

/* Parsed options, shared by the instances of one vector. */
typedef struct minatar_config {
	double sticky_action_prob;
	bool difficulty_ramping;
	int num_actions;                     /* 6, or the minimal set's size */
	int action_map[MINATAR_NUM_ACTIONS]; /* agent action -> full action */
	const minatar_game *game;            /* for rendering */
} minatar_config;

/* The head of every game's state.  A zeroed head is a new instance: the
 * previous action is the no-op. */
typedef struct minatar_common {
	int last_action; /* full action executed by the last step (sticky actions) */
	bool terminal;   /* the episode has ended; steps change nothing */
} minatar_common;

/* The class's configure for game g: parse {"sticky_action_prob": number in
 * [0, 1], "difficulty_ramping": bool, "minimal_action_set": bool,
 * "max_steps": ignored (the vector applies it)}, allocate *config and fill
 * spec.  -SEED_EOPTION naming the option for an unknown key or a bad value;
 * nothing is written then. */
int minatar_configure(const minatar_game *g, const json_t *options, void **config, seed_env_spec *spec,
                      seed_err *err);
void minatar_free_config(void *config);

/* Turn the agent's action into the full action the game executes: map it
 * through the action set, then, as MinAtar's wrapper does on every step,
 * draw one uniform number and repeat c->last_action if it falls below the
 * sticky probability; remember the result in c->last_action. */
int minatar_action(const minatar_config *cfg, minatar_common *c, seed_rng *rng, int action);

/* Draw an observation of game g as 10 lines of 10 characters ('.' where no
 * channel is set) into buf, snprintf-style; returns 110. */
int minatar_render(const minatar_game *g, const uint8_t *obs, char *buf, size_t len);

/* The classes' render_text and render_rgb: the observation of the state
 * (through the game's write_obs) drawn as text, or as cells in MinAtar's
 * display colours, one per channel, later channels on top. */
int minatar_render_text(const void *config, const void *state, char *buf, size_t len);
int minatar_render_rgb(const void *config, const void *state, uint8_t *rgb, int width, int height);

/* Index of (row y, column x, channel c) in an observation with nc channels. */
static inline size_t minatar_at(int y, int x, int c, int nc)
{
	return ((size_t)y * MINATAR_SIZE + (size_t)x) * (size_t)nc + (size_t)c;
}

#endif
