/* seed/curves.h: learning curves from a run directory's metrics.jsonl.
 *
 * seed-learn appends one JSON object a line to DIR/metrics.jsonl
 * (seed_metrics(3), the keys of seed_learner_metrics): "time" (seconds of
 * training), "frames" (emulator frames), "agent_steps", "episode_return"
 * (null while no episode has ended),
 * the loss terms, and for R2D2 "env_frames", "mean_q", "mean_abs_td",
 * "mean_priority".  This module reads such a file into columns, chooses
 * the columns a learning curve plots, and resamples several runs onto one
 * grid for their mean and min-max band.  It draws nothing: seed-plot(1)
 * hands what it computes to gnuplot.
 *
 * Columns: every key whose value is a number (or null) in some line, in the
 * order keys first appear; a line without the key, or with null there,
 * holds NaN.  Every line must be a JSON object with numbers "frames" and
 * "time".  Lines written before Seed counted emulator frames have no
 * "agent_steps", and their "frames" are agent steps: when later lines of
 * the file have both (the run was resumed since), their ratio is the frame
 * skip, and the old lines are read with agent_steps = their frames and
 * frames (and env_frames) times the skip; a file of old lines only is read
 * as it is.  Rows keep "frames" nondecreasing: a line whose frames are
 * fewer than the previous row's (seed-learn --resume from a checkpoint
 * older than the last lines, which redoes that training) replaces the
 * earlier rows past its frames.
 *
 * Errors name the file, and the line for a bad line ("DIR/metrics.jsonl:7:
 * not JSON: ...").  Threads: no shared state; a seed_curves may be read
 * from several threads.
 */
#ifndef SEED_CURVES_H
#define SEED_CURVES_H

#include <stdbool.h>
#include <stdint.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_curves {
	char *path;      /* the file read */
	char *algorithm; /* the last "algorithm" of the rows ("vtrace", "r2d2"), or NULL */
	int64_t n;       /* rows */
	int ncols;       /* columns */
	char **keys;     /* (ncols) column names */
	double *data;    /* (ncols, n): column c is data + c * n; NaN for null or absent */
} seed_curves;

/* Read path (a metrics.jsonl file) into a new *out (free with
 * seed_curves_free).  Blank lines are skipped.  Errors, each naming path:
 * a negative errno when it cannot be read; -EINVAL for a file without a
 * line ("no metrics lines"), a line that is not JSON, not an object, or
 * lacks a number "frames" or "time" (these name the line too). */
int seed_curves_read(const char *path, seed_curves **out, seed_err *err);

/* seed_curves_read of DIR/metrics.jsonl, with errors that say what DIR is
 * when it is no run directory: -ENOENT "DIR: no such directory", -ENOTDIR
 * "DIR: not a directory", -ENOENT "DIR/metrics.jsonl: no such file (...)". */
int seed_curves_read_dir(const char *dir, seed_curves **out, seed_err *err);

/* Free *c (NULL is fine) and set *c to NULL. */
void seed_curves_free(seed_curves **c);

/* Column key (c->n values), or NULL when no line has it. */
const double *seed_curves_col(const seed_curves *c, const char *key);

/* The rows where both column xkey and column ykey are finite, in row order,
 * into x and y (room for c->n each); returns how many (0 when a column is
 * missing). */
int64_t seed_curves_points(const seed_curves *c, const char *xkey, const char *ykey, double *x, double *y);

/* The column that counts a run's frames: "frames" (every algorithm's
 * counter: for V-trace the frames the actors played, for R2D2 the
 * sequence steps sampled, T*B per update, times the frame skip), or
 * "env_frames" (what R2D2's actors played) when env_frames is true and c
 * has that column. */
const char *seed_curves_frames_key(const seed_curves *c, bool env_frames);

/* The column that counts a run's agent steps: "agent_steps", or "frames"
 * when c has no agent_steps (a run whose lines all predate it, when frames
 * were agent steps). */
const char *seed_curves_steps_key(const seed_curves *c);

/* The column of a run's returns: "episode_return" (the mean return of
 * the last episodes, every gradient learner's), or "mean" (the round's
 * mean return of neuroevolution's members: es, ga, rs write no
 * episode_return) when episode_return has no finite value and mean has. */
const char *seed_curves_return_key(const seed_curves *c);

/* The loss terms of c that have a finite value in some row, in this order:
 * loss, pg_loss, baseline_loss, entropy_loss (V-trace), mean_abs_td,
 * mean_q, mean_priority (R2D2's TD errors, Q values and priorities).  Up
 * to max of them into keys (static strings); returns how many. */
int seed_curves_loss_keys(const seed_curves *c, const char **keys, int max);

/* y at x = at by linear interpolation between the neighbouring points of
 * (x[i], y[i]), i < n, x nondecreasing; at a point's x exactly, the first
 * such point's y.  NaN when at lies outside [x[0], x[n-1]] or n is 0. */
double seed_curves_interp(const double *x, const double *y, int64_t n, double at);

/* One run's points, x nondecreasing (as seed_curves_points gives them). */
typedef struct seed_curves_xy {
	const double *x, *y;
	int64_t n;
} seed_curves_xy;

/* Resample nruns runs onto a common grid and aggregate them: grid[k], k <
 * npoints, evenly spaced from the largest first x of the runs to the
 * smallest last x (the stretch every run covers; npoints 1: its start
 * alone), and at each, over the runs interpolated there, mean[k],
 * lo[k] (the least) and hi[k] (the greatest).  Errors (-EINVAL, naming the
 * run by its index): no runs, npoints < 1, a run without points, a run
 * whose x decreases, runs that share no stretch of x. */
int seed_curves_band(const seed_curves_xy *runs, int nruns, int npoints, double *grid, double *mean,
                     double *lo, double *hi, seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
