/* envs/catch.c: Catch from bsuite (bsuite/environments/catch.py).
 *
 * A board of rows x columns (default 10 x 5).  A ball starts in row 0 at a
 * uniformly random column; the paddle starts in the bottom row at the middle
 * column (columns / 2, rounded down).  Actions 0, 1, 2 move the paddle left,
 * not at all, right (clipped to the board); then the ball falls one row.
 * When the ball reaches the bottom row the episode terminates with reward +1
 * if the paddle is under it and -1 if not; every other step gives 0.  So
 * every episode lasts rows - 1 steps.
 *
 * Observation: f32 [rows][columns], 1.0 at the ball and at the paddle, 0.0
 * elsewhere (one 1.0 in the bottom row when the ball is caught).
 *
 * bsuite's own environment resets itself when stepped after the end; here
 * the vector resets ended episodes, and a direct step after the end repeats
 * the final observation with reward 0 and terminated set.
 *
 * Options: "rows" (>= 2) and "columns" (>= 1), as bsuite's constructor.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "seed/buf.h"

typedef struct catch_config {
	int rows, columns;
} catch_config;

typedef struct catch_state {
	int ball_x, ball_y;
	int paddle_x, paddle_y;
} catch_state;

static int catch_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	static const char *const known[] = {"rows", "columns", NULL};
	long long rows = 10, columns = 5;
	int rc = seed_env_options_check(options, "catch", known, err);
	if (rc == 0)
		rc = seed_env_option_int(options, "catch", "rows", 2, 1024, &rows, err);
	if (rc == 0)
		rc = seed_env_option_int(options, "catch", "columns", 1, 1024, &columns, err);
	if (rc < 0)
		return rc;
	catch_config *c = seed_xmalloc(sizeof *c);
	c->rows = (int)rows;
	c->columns = (int)columns;
	*config = c;
	memset(spec, 0, sizeof *spec);
	spec->obs_dtype = SEED_DTYPE_F32;
	spec->obs_rank = 2;
	spec->obs_shape[0] = rows;
	spec->obs_shape[1] = columns;
	spec->num_actions = 3;
	spec->max_steps = 0; /* every episode ends after rows - 1 steps */
	/* Square cells of 16 pixels, smaller for big boards (at least 1). */
	long long cell = 512 / (rows > columns ? rows : columns);
	cell = cell < 1 ? 1 : cell > 16 ? 16 : cell;
	spec->rgb_width = (int)(columns * cell);
	spec->rgb_height = (int)(rows * cell);
	return 0;
}

static void catch_free_config(void *config)
{
	free(config);
}

static void observe(const catch_config *c, const catch_state *s, float *obs)
{
	memset(obs, 0, (size_t)c->rows * (size_t)c->columns * sizeof *obs);
	obs[s->ball_y * c->columns + s->ball_x] = 1.0f;
	obs[s->paddle_y * c->columns + s->paddle_x] = 1.0f;
}

static void catch_reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	const catch_config *c = config;
	catch_state *s = state;
	s->ball_x = (int)seed_rng_below(rng, (uint32_t)c->columns);
	s->ball_y = 0;
	s->paddle_x = c->columns / 2;
	s->paddle_y = c->rows - 1;
	observe(c, s, obs);
}

static void catch_step(const void *config, void *state, seed_rng *rng, int action, void *obs, float *reward,
                       bool *terminated)
{
	const catch_config *c = config;
	catch_state *s = state;
	if (s->ball_y == s->paddle_y) {
		/* Already ended: nothing moves. */
		observe(c, s, obs);
		*reward = 0.0f;
		*terminated = true;
		return;
	}
	int px = s->paddle_x + (action - 1); /* actions -1, 0, +1 */
	s->paddle_x = px < 0 ? 0 : px > c->columns - 1 ? c->columns - 1 : px;
	s->ball_y++;
	bool end = s->ball_y == s->paddle_y;
	*reward = !end ? 0.0f : s->paddle_x == s->ball_x ? 1.0f : -1.0f;
	*terminated = end;
	observe(c, s, obs);
}

/* The board: '.' empty, 'o' ball, '=' paddle, '@' ball on the paddle. */
static int catch_render_text(const void *config, const void *state, char *buf, size_t len)
{
	const catch_config *c = config;
	const catch_state *s = state;
	size_t need = (size_t)c->rows * ((size_t)c->columns + 1);
	for (int y = 0; y < c->rows; y++) {
		for (int x = 0; x <= c->columns; x++) {
			size_t at = (size_t)y * ((size_t)c->columns + 1) + (size_t)x;
			if (at + 1 >= len)
				continue;
			char ch = '.';
			bool ball = x == s->ball_x && y == s->ball_y;
			bool paddle = x == s->paddle_x && y == s->paddle_y;
			if (x == c->columns)
				ch = '\n';
			else if (ball && paddle)
				ch = '@';
			else if (ball)
				ch = 'o';
			else if (paddle)
				ch = '=';
			buf[at] = ch;
		}
	}
	if (len > 0)
		buf[need < len ? need : len - 1] = '\0';
	return (int)need;
}

/* The board as cells: dark grey where empty, the ball white, the paddle
 * blue; at the end the ball's cell turns green on the paddle (caught) or red
 * beside it (missed).  Pixel (x, y) shows cell (y * rows / height,
 * x * columns / width), so any size is drawn. */
static int catch_render_rgb(const void *config, const void *state, uint8_t *rgb, int width, int height)
{
	static const uint8_t empty[3] = {32, 32, 32}, ball[3] = {255, 255, 255}, paddle[3] = {66, 135, 245};
	static const uint8_t caught[3] = {0, 200, 0}, missed[3] = {220, 40, 40};
	const catch_config *c = config;
	const catch_state *s = state;
	const bool end = s->ball_y == s->paddle_y;
	const uint8_t *ball_rgb = !end ? ball : s->ball_x == s->paddle_x ? caught : missed;
	for (int py = 0; py < height; py++) {
		int y = (int)((int64_t)py * c->rows / height);
		uint8_t *out = rgb + (size_t)py * (size_t)width * 3;
		for (int px = 0; px < width; px++, out += 3) {
			int x = (int)((int64_t)px * c->columns / width);
			const uint8_t *col = empty;
			if (x == s->paddle_x && y == s->paddle_y)
				col = paddle;
			if (x == s->ball_x && y == s->ball_y)
				col = ball_rgb;
			memcpy(out, col, 3);
		}
	}
	return 0;
}

const seed_env_class seed_env_catch = {
    .name = "catch",
    .summary = "Catch as in bsuite: move a paddle under a falling ball",
    .configure = catch_configure,
    .free_config = catch_free_config,
    .state_size = sizeof(catch_state),
    .reset = catch_reset,
    .step = catch_step,
    .render_text = catch_render_text,
    .render_rgb = catch_render_rgb,
};
