/* cmd/render.h: pictures of env 0 while seed-eval plays: in the terminal
 * and as an animated GIF.
 *
 * A view follows environment 0 of a vector.  Its pictures come from a
 * render_source: Seed's own vector (render_source_envs: the class draws at
 * any size) or any other that can draw env 0 (seed-eval's gym:ID
 * environments, whose pictures seed-gym sends).  Its owner calls
 * render_view_reset after the vector's reset and render_view_step after
 * every step with env 0's reward and end flags; the view draws the
 * pictures the options ask for:
 *
 *   - terminal (--render): every step of every episode of env 0, as ANSI
 *     24-bit colour half blocks (one text row holds two pixel rows: "▀" in
 *     the top pixel's colour on the bottom pixel's), each picture followed
 *     by a status line "env 0  episode E  step T  reward R  return G", with
 *     "  terminated" or "  truncated" on the last step of an episode.  When
 *     the stream is a terminal each picture replaces the previous one in
 *     place; otherwise pictures follow one another without cursor movement,
 *     so that they can be captured.  After each picture the view waits
 *     delay_ms milliseconds.
 *   - GIF (--record FILE): the first gif_episodes episodes of env 0, one
 *     after the other, at the source's natural size; the file is written
 *     as soon as the last of them ends.
 *
 * An episode's pictures are its first state (step 0), the state after each
 * step, and its last state (drawn with the source's final picture, since
 * the vector has already reset env 0 when step returns).  The first picture
 * of the next episode is drawn in the step that ended the last one (while
 * env 0 is still in that state) but shown only when the episode is
 * stepped, so the last picture shown is the end of an episode when play
 * stops there.
 */
#ifndef SEED_CMD_RENDER_H
#define SEED_CMD_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "seed/env.h"

typedef struct render_options {
	bool term;              /* draw in the terminal */
	FILE *term_out;         /* where to draw (seed-eval: stdout) */
	int term_cols;          /* picture width in columns; 0: fit (see render.c) */
	int delay_ms;           /* pause after each terminal picture */
	const char *gif_path;   /* record a GIF there; NULL: no GIF */
	long long gif_episodes; /* episodes of env 0 to record, >= 1 */
	double gif_fps;         /* frames a second in the GIF */
} render_options;

/* Where the pictures of env 0 come from. */
typedef struct render_source {
	const char *name;  /* the environment, for messages */
	int width, height; /* the natural size; 0 x 0: it draws no pictures */
	/* Draw env 0 into rgb [height][width][3] at any size from 1 x 1 to
	 * SEED_ENV_MAX_RGB a side: its current state, or with final the state
	 * its last episode ended in.  0 or a negative errno. */
	int (*draw)(void *ctx, bool final, uint8_t *rgb, int width, int height);
	void *ctx;
} render_source;

/* Env 0 of a vector of Seed's environments, drawn by its class
 * (seed_envs_render_rgb and seed_envs_render_rgb_final); envs must outlive
 * the views made from the source. */
render_source render_source_envs(const seed_envs *envs);

typedef struct render_view render_view;

/* A view of env 0 of src as o asks; *out is NULL when o asks for nothing.
 * -ENOTSUP if the source draws no pictures, or seed_gif_open's errors for
 * a bad GIF path; err says which.  The view keeps a copy of *src. */
int render_view_new(render_view **out, const render_source *src, const render_options *o, seed_err *err);

/* The first picture, after the vector's reset. */
int render_view_reset(render_view *v, seed_err *err);

/* The pictures of one step of env 0 (reward, terminated, truncated: its
 * row of the step's outputs).  Errors: drawing failed, writing to the
 * terminal failed, or the GIF could not be encoded or written. */
int render_view_step(render_view *v, float reward, bool terminated, bool truncated, seed_err *err);

/* True while the GIF still waits for episodes of env 0: the owner keeps
 * stepping until then, even past the episodes it needs itself. */
bool render_view_wants_more(const render_view *v);

/* Frees v (NULL is fine; an unfinished GIF is dropped, not written) and
 * sets *v to NULL. */
void render_view_free(render_view **v);

#endif
