/* envs/minatar.c: what the five MinAtar games share: options, the action set
 * and sticky actions (MinAtar's Environment wrapper), and text rendering. */
#include "minatar.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"

int minatar_configure(const minatar_game *g, const json_t *options, void **config, seed_env_spec *spec,
                      seed_err *err)
{
	double sticky = 0.1;
	bool ramping = true, minimal = false;

	if (!json_is_object(options))
		return seed_err_set(err, -SEED_EOPTION, "%s: options must be a JSON object", g->name);
	const char *key;
	json_t *value;
	/* jansson's iteration takes a non-const object; nothing is modified. */
	json_object_foreach((json_t *)options, key, value)
	{
		if (strcmp(key, "sticky_action_prob") == 0) {
			if (!json_is_number(value))
				return seed_err_set(
				    err, -SEED_EOPTION,
				    "%s: option \"sticky_action_prob\" must be a number in [0, 1]", g->name);
			sticky = json_number_value(value);
			if (!(sticky >= 0.0 && sticky <= 1.0))
				return seed_err_set(err, -SEED_EOPTION,
				                    "%s: option \"sticky_action_prob\" is %g, not in [0, 1]",
				                    g->name, sticky);
		} else if (strcmp(key, "difficulty_ramping") == 0) {
			if (!json_is_boolean(value))
				return seed_err_set(err, -SEED_EOPTION,
				                    "%s: option \"difficulty_ramping\" must be true or false",
				                    g->name);
			ramping = json_is_true(value);
		} else if (strcmp(key, "minimal_action_set") == 0) {
			if (!json_is_boolean(value))
				return seed_err_set(err, -SEED_EOPTION,
				                    "%s: option \"minimal_action_set\" must be true or false",
				                    g->name);
			minimal = json_is_true(value);
		} else if (strcmp(key, "max_steps") == 0) {
			/* The vector's option: it checks and applies it. */
		} else {
			return seed_err_set(err, -SEED_EOPTION,
			                    "%s: unknown option \"%s\" (known: sticky_action_prob, "
			                    "difficulty_ramping, minimal_action_set, max_steps)",
			                    g->name, key);
		}
	}

	minatar_config *c = seed_xcalloc(1, sizeof *c);
	c->game = g;
	c->sticky_action_prob = sticky;
	c->difficulty_ramping = ramping;
	if (minimal) {
		c->num_actions = g->num_minimal;
		memcpy(c->action_map, g->minimal, sizeof c->action_map);
	} else {
		c->num_actions = MINATAR_NUM_ACTIONS;
		for (int a = 0; a < MINATAR_NUM_ACTIONS; a++)
			c->action_map[a] = a;
	}
	*config = c;
	memset(spec, 0, sizeof *spec);
	spec->obs_dtype = SEED_DTYPE_U8;
	spec->obs_rank = 3;
	spec->obs_shape[0] = MINATAR_SIZE;
	spec->obs_shape[1] = MINATAR_SIZE;
	spec->obs_shape[2] = g->channels;
	spec->num_actions = c->num_actions;
	spec->max_steps = 0;
	spec->rgb_width = spec->rgb_height = 160; /* 16 pixels a cell */
	return 0;
}

void minatar_free_config(void *config)
{
	free(config);
}

int minatar_action(const minatar_config *cfg, minatar_common *c, seed_rng *rng, int action)
{
	int a = cfg->action_map[action];
	/* Upstream draws on every call, whatever the probability. */
	if (seed_rng_double(rng) < cfg->sticky_action_prob)
		a = c->last_action;
	c->last_action = a;
	return a;
}

int minatar_render(const minatar_game *g, const uint8_t *obs, char *buf, size_t len)
{
	char text[MINATAR_SIZE * (MINATAR_SIZE + 1) + 1];
	char *p = text;
	for (int y = 0; y < MINATAR_SIZE; y++) {
		for (int x = 0; x < MINATAR_SIZE; x++) {
			char ch = '.';
			for (int i = 0; i < g->channels; i++) {
				int c = g->render_order[i];
				if (obs[minatar_at(y, x, c, g->channels)]) {
					ch = g->glyphs[c];
					break;
				}
			}
			*p++ = ch;
		}
		*p++ = '\n';
	}
	*p = '\0';
	return snprintf(buf, len, "%s", text);
}

int minatar_render_text(const void *config, const void *state, char *buf, size_t len)
{
	const minatar_game *g = ((const minatar_config *)config)->game;
	uint8_t obs[MINATAR_SIZE * MINATAR_SIZE * MINATAR_MAX_CHANNELS];
	g->write_obs(state, obs);
	return minatar_render(g, obs, buf, len);
}

int minatar_render_rgb(const void *config, const void *state, uint8_t *rgb, int width, int height)
{
	const minatar_game *g = ((const minatar_config *)config)->game;
	uint8_t obs[MINATAR_SIZE * MINATAR_SIZE * MINATAR_MAX_CHANNELS];
	g->write_obs(state, obs);
	return seed_env_grid_rgb(obs, MINATAR_SIZE, MINATAR_SIZE, g->channels, NULL, rgb, width, height);
}
