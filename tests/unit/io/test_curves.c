/* tests/unit/io/test_curves.c: learning curves from metrics.jsonl (seed/curves.h).
 *
 * The metrics files are written here by hand, a few lines each, and every
 * expected value is worked out by hand in the comment beside it: the
 * columns and their NaNs, the rows a resume replaces, linear interpolation
 * and the mean, least and greatest of runs resampled onto a grid.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "seed/curves.h"
#include "tap.h"
#include "tmpdir.h"

static const char *dir;

/* Write text to dir/name and read it back with seed_curves_read. */
static int read_text(const char *name, const char *text, seed_curves **c, seed_err *err)
{
	const char *path = pathf(dir, name);
	if (write_bytes(path, text, strlen(text)) != 0)
		return -EIO;
	return seed_curves_read(path, c, err);
}

static void t_columns(void)
{
	seed_curves *c = NULL;
	seed_err err;
	int rc = read_text("columns.jsonl",
	                   "{\"time\":1.0,\"frames\":100,\"episode_return\":null,\"loss\":2.5,"
	                   "\"algorithm\":\"vtrace\"}\n"
	                   "\n"
	                   "  \n"
	                   "{\"time\":2.0,\"frames\":300,\"episode_return\":10,\"loss\":1.5,\"tag\":\"x\"}\n"
	                   "{\"time\":3.5,\"frames\":600,\"episode_return\":20.5,\"pg_loss\":-0.5}",
	                   &c, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	/* Three rows; the strings ("algorithm", "tag") are no columns. */
	CHECK(c->n == 3);
	CHECK(c->ncols == 5);
	const char *want[] = {"time", "frames", "episode_return", "loss", "pg_loss"};
	for (int k = 0; k < 5 && k < c->ncols; k++)
		CHECK_MSG(strcmp(c->keys[k], want[k]) == 0, "column %d is %s, want %s", k, c->keys[k],
		          want[k]);
	CHECK(c->algorithm && strcmp(c->algorithm, "vtrace") == 0);
	CHECK(strstr(c->path, "columns.jsonl") != NULL);
	const double *t = seed_curves_col(c, "time"), *ret = seed_curves_col(c, "episode_return");
	const double *loss = seed_curves_col(c, "loss"), *pg = seed_curves_col(c, "pg_loss");
	CHECK(t && t[0] == 1.0 && t[1] == 2.0 && t[2] == 3.5);
	CHECK(ret && isnan(ret[0]) && ret[1] == 10 && ret[2] == 20.5);
	CHECK(loss && loss[0] == 2.5 && loss[1] == 1.5 && isnan(loss[2]));
	CHECK(pg && isnan(pg[0]) && isnan(pg[1]) && pg[2] == -0.5);
	CHECK(seed_curves_col(c, "tag") == NULL && seed_curves_col(c, "nothing") == NULL);

	/* Points where both are finite: (300, 10) and (600, 20.5). */
	double x[3], y[3];
	CHECK(seed_curves_points(c, "frames", "episode_return", x, y) == 2);
	CHECK(x[0] == 300 && y[0] == 10 && x[1] == 600 && y[1] == 20.5);
	/* Against time: (2, 10) and (3.5, 20.5). */
	CHECK(seed_curves_points(c, "time", "episode_return", x, y) == 2);
	CHECK(x[0] == 2.0 && x[1] == 3.5);
	CHECK(seed_curves_points(c, "frames", "mean_q", x, y) == 0);

	/* Loss terms present: loss and pg_loss, in the module's order. */
	const char *keys[8];
	CHECK(seed_curves_loss_keys(c, keys, 8) == 2);
	CHECK(strcmp(keys[0], "loss") == 0 && strcmp(keys[1], "pg_loss") == 0);
	/* No env_frames column: frames either way. */
	CHECK(strcmp(seed_curves_frames_key(c, true), "frames") == 0);
	CHECK(strcmp(seed_curves_frames_key(c, false), "frames") == 0);
	CHECK(strcmp(seed_curves_return_key(c), "episode_return") == 0);
	seed_curves_free(&c);
	CHECK(c == NULL);
	seed_curves_free(&c);
}

/* A neuroevolution run writes no episode_return: its returns are the
 * rounds' mean; a run with both keeps episode_return, one with neither
 * names episode_return (and has no points). */
static void t_return_key(void)
{
	seed_curves *c = NULL;
	seed_err err;
	int rc = read_text("es.jsonl",
	                   "{\"time\":1,\"frames\":128,\"generation\":1,\"best\":9,\"mean\":4.5,"
	                   "\"median\":4,\"elite\":null,\"algorithm\":\"es\"}\n"
	                   "{\"time\":2,\"frames\":256,\"generation\":2,\"best\":12,\"mean\":7.25,"
	                   "\"median\":7,\"elite\":null,\"algorithm\":\"es\"}\n",
	                   &c, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	CHECK(strcmp(seed_curves_return_key(c), "mean") == 0);
	double x[2], y[2];
	CHECK(seed_curves_points(c, "frames", seed_curves_return_key(c), x, y) == 2);
	CHECK(x[0] == 128 && y[0] == 4.5 && x[1] == 256 && y[1] == 7.25);
	seed_curves_free(&c);
	rc =
	    read_text("both.jsonl", "{\"time\":1,\"frames\":10,\"episode_return\":3,\"mean\":5}\n", &c, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	CHECK(rc || strcmp(seed_curves_return_key(c), "episode_return") == 0);
	seed_curves_free(&c);
	rc = read_text("none.jsonl", "{\"time\":1,\"frames\":10,\"episode_return\":null,\"mean\":null}\n", &c,
	               &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	CHECK(rc || strcmp(seed_curves_return_key(c), "episode_return") == 0);
	seed_curves_free(&c);
}

/* An R2D2 run's keys: env_frames, and Q learning's statistics as its loss
 * terms; a key that is null on every line is no term. */
static void t_r2d2_keys(void)
{
	seed_curves *c = NULL;
	seed_err err;
	int rc = read_text("r2d2.jsonl",
	                   "{\"time\":1,\"frames\":960,\"env_frames\":400,\"loss\":0.75,\"mean_q\":1.25,"
	                   "\"mean_abs_td\":0.5,\"mean_priority\":null,\"episode_return\":null,"
	                   "\"algorithm\":\"r2d2\"}\n"
	                   "{\"time\":2,\"frames\":1920,\"env_frames\":900,\"loss\":0.5,\"mean_q\":2.5,"
	                   "\"mean_abs_td\":0.25,\"mean_priority\":null,\"episode_return\":9,"
	                   "\"algorithm\":\"r2d2\"}\n",
	                   &c, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	CHECK(c->algorithm && strcmp(c->algorithm, "r2d2") == 0);
	CHECK(strcmp(seed_curves_frames_key(c, true), "env_frames") == 0);
	CHECK(strcmp(seed_curves_frames_key(c, false), "frames") == 0);
	const char *keys[8];
	CHECK(seed_curves_loss_keys(c, keys, 8) == 3);
	CHECK(strcmp(keys[0], "loss") == 0 && strcmp(keys[1], "mean_abs_td") == 0 &&
	      strcmp(keys[2], "mean_q") == 0);
	/* At most max of them. */
	CHECK(seed_curves_loss_keys(c, keys, 1) == 1 && strcmp(keys[0], "loss") == 0);
	double x[2], y[2];
	CHECK(seed_curves_points(c, "env_frames", "episode_return", x, y) == 1);
	CHECK(x[0] == 900 && y[0] == 9);
	seed_curves_free(&c);
}

/* A resume from an older checkpoint: frames 100 200 300, then 150 (the
 * rows at 200 and 300 go), 250, and 250 again (equal frames stay). */
static void t_resume(void)
{
	seed_curves *c = NULL;
	seed_err err;
	int rc = read_text("resume.jsonl",
	                   "{\"time\":1,\"frames\":100}\n{\"time\":2,\"frames\":200}\n"
	                   "{\"time\":3,\"frames\":300}\n{\"time\":1.5,\"frames\":150}\n"
	                   "{\"time\":2.5,\"frames\":250}\n{\"time\":2.75,\"frames\":250}\n",
	                   &c, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	CHECK(c->n == 4);
	const double *f = seed_curves_col(c, "frames"), *t = seed_curves_col(c, "time");
	CHECK(f[0] == 100 && f[1] == 150 && f[2] == 250 && f[3] == 250);
	CHECK(t[0] == 1 && t[1] == 1.5 && t[2] == 2.5 && t[3] == 2.75);
	CHECK(c->algorithm == NULL);
	seed_curves_free(&c);
}

/* A run begun before Seed counted emulator frames and resumed since: its
 * first lines have no agent_steps and their frames are agent steps, the
 * later ones both, 4 frames an agent step.  By hand: the old lines at 100
 * and 200 (env_frames 40 and 90) read as agent steps 100 and 200, frames
 * 400 and 800 (env_frames 160 and 360); then the resume at 1000 frames,
 * 250 agent steps, redone from a checkpoint at 150 agent steps (600
 * frames): the line of 800 frames goes.  Axis keys: agent_steps where
 * there is the column, frames where not (old lines only: frames are agent
 * steps, and no skip is known, so the file reads as it is). */
static void t_old_lines(void)
{
	seed_curves *c = NULL;
	seed_err err;
	int rc = read_text("old.jsonl",
	                   "{\"time\":1,\"frames\":100,\"env_frames\":40}\n"
	                   "{\"time\":2,\"frames\":200,\"env_frames\":90}\n"
	                   "{\"time\":3,\"frames\":600,\"agent_steps\":150,\"env_frames\":200}\n"
	                   "{\"time\":4,\"frames\":1000,\"agent_steps\":250,\"env_frames\":520}\n",
	                   &c, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	CHECK_MSG(c->n == 3, "%lld rows", (long long)c->n);
	const double *f = seed_curves_col(c, "frames"), *a = seed_curves_col(c, "agent_steps"),
	             *e = seed_curves_col(c, "env_frames");
	CHECK(f && f[0] == 400 && f[1] == 600 && f[2] == 1000);
	CHECK(a && a[0] == 100 && a[1] == 150 && a[2] == 250);
	CHECK(e && e[0] == 160 && e[1] == 200 && e[2] == 520);
	CHECK(strcmp(seed_curves_steps_key(c), "agent_steps") == 0);
	seed_curves_free(&c);
	rc = read_text("old-only.jsonl", "{\"time\":1,\"frames\":100}\n{\"time\":2,\"frames\":200}\n", &c,
	               &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	CHECK(rc || (seed_curves_col(c, "frames")[1] == 200 && !seed_curves_col(c, "agent_steps") &&
	             strcmp(seed_curves_steps_key(c), "frames") == 0));
	seed_curves_free(&c);
}

/* Each bad file: the code and a part of the message (file and line). */
static void t_bad_files(void)
{
	static const struct {
		const char *name, *text, *msg;
	} cases[] = {
	    {"empty.jsonl", "", "empty.jsonl: no metrics lines"},
	    {"blank.jsonl", "\n  \n\n", "blank.jsonl: no metrics lines"},
	    {"cut.jsonl", "{\"time\":1,\"frames\":1}\n{\"time\":2,\"fra", "cut.jsonl:2: not JSON: "},
	    {"array.jsonl", "\n\n[1,2]\n", "array.jsonl:3: not a JSON object"},
	    {"number.jsonl", "7\n", "number.jsonl:1: not JSON: "},
	    {"noframes.jsonl", "{\"time\":1,\"frames\":1}\n{\"time\":1}\n",
	     "noframes.jsonl:2: no number \"frames\""},
	    {"strframes.jsonl", "{\"time\":1,\"frames\":\"7\"}\n", "strframes.jsonl:1: no number \"frames\""},
	    {"notime.jsonl", "{\"frames\":1,\"time\":null}\n", "notime.jsonl:1: no number \"time\""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		seed_curves *c = NULL;
		seed_err err = {{0}};
		int rc = read_text(cases[i].name, cases[i].text, &c, &err);
		CHECK_MSG(rc == -EINVAL, "%s: rc %d", cases[i].name, rc);
		CHECK_MSG(strstr(err.msg, cases[i].msg) != NULL, "%s: message '%s'", cases[i].name, err.msg);
		CHECK(c == NULL);
		seed_curves_free(&c);
	}
	seed_curves *c = NULL;
	seed_err err;
	CHECK(seed_curves_read(pathf(dir, "absent.jsonl"), &c, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "absent.jsonl: cannot open") != NULL, "%s", err.msg);
	CHECK(c == NULL);
}

static void t_read_dir(void)
{
	seed_curves *c = NULL;
	seed_err err;
	/* No such directory, a file, a directory without metrics. */
	CHECK(seed_curves_read_dir(pathf(dir, "nodir"), &c, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "nodir: no such directory") != NULL, "%s", err.msg);
	CHECK(write_bytes(pathf(dir, "plain"), "x", 1) == 0);
	CHECK(seed_curves_read_dir(pathf(dir, "plain"), &c, &err) == -ENOTDIR);
	CHECK_MSG(strstr(err.msg, "plain: not a directory") != NULL, "%s", err.msg);
	char run[4096];
	snprintf(run, sizeof run, "%s/run", dir);
	CHECK(mkdir(run, 0777) == 0);
	CHECK(seed_curves_read_dir(run, &c, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "run/metrics.jsonl: no such file") != NULL, "%s", err.msg);
	CHECK(c == NULL);
	/* A run directory, with and without a slash at the end. */
	CHECK(write_bytes(pathf(run, "metrics.jsonl"), "{\"time\":1,\"frames\":2}\n", 22) == 0);
	CHECK(seed_curves_read_dir(run, &c, &err) == 0 && c->n == 1);
	CHECK(c && strcmp(c->path, pathf(run, "metrics.jsonl")) == 0);
	seed_curves_free(&c);
	strcat(run, "/");
	CHECK(seed_curves_read_dir(run, &c, &err) == 0 && c->n == 1);
	CHECK(c && strstr(c->path, "run/metrics.jsonl") && !strstr(c->path, "//"));
	seed_curves_free(&c);
	/* A bad line inside a run directory names the file and the line. */
	snprintf(run, sizeof run, "%s/run", dir);
	CHECK(write_bytes(pathf(run, "metrics.jsonl"), "{\"time\":1,\"frames\":2}\n{oops}\n", 29) == 0);
	CHECK(seed_curves_read_dir(run, &c, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "run/metrics.jsonl:2: not JSON") != NULL, "%s", err.msg);
}

/* x = 0 10 10 20, y = 0 5 7 27: at 5 halfway from 0 to 5 (2.5); at 10 the
 * first point there (5); at 15 halfway from 7 to 27 (17). */
static void t_interp(void)
{
	const double x[] = {0, 10, 10, 20}, y[] = {0, 5, 7, 27};
	CHECK(seed_curves_interp(x, y, 4, 0) == 0);
	CHECK_NEAR(seed_curves_interp(x, y, 4, 5), 2.5, 1e-12);
	CHECK(seed_curves_interp(x, y, 4, 10) == 5);
	CHECK_NEAR(seed_curves_interp(x, y, 4, 15), 17, 1e-12);
	CHECK_NEAR(seed_curves_interp(x, y, 4, 12.5), 12, 1e-12);
	CHECK(seed_curves_interp(x, y, 4, 20) == 27);
	CHECK(isnan(seed_curves_interp(x, y, 4, -1)));
	CHECK(isnan(seed_curves_interp(x, y, 4, 20.5)));
	CHECK(isnan(seed_curves_interp(x, y, 4, NAN)));
	CHECK(isnan(seed_curves_interp(x, y, 0, 0)));
	const double x1[] = {3}, y1[] = {4};
	CHECK(seed_curves_interp(x1, y1, 1, 3) == 4);
	CHECK(isnan(seed_curves_interp(x1, y1, 1, 2.9)));
}

/* A: (0,0) (100,10) (200,30); B: (50,20) (150,20) (250,40); C: (0,0)
 * (300,-30).  Their common stretch is [50, 200]; four points: 50 100 150
 * 200.  A there: 5 10 20 30; B: 20 20 20 30; C: -5 -10 -15 -20. */
static void t_band(void)
{
	const double ax[] = {0, 100, 200}, ay[] = {0, 10, 30};
	const double bx[] = {50, 150, 250}, by[] = {20, 20, 40};
	const double cx[] = {0, 300}, cy[] = {0, -30};
	seed_curves_xy runs[] = {{ax, ay, 3}, {bx, by, 3}, {cx, cy, 2}};
	double g[4], m[4], lo[4], hi[4];
	seed_err err;
	/* A and B: means 12.5 15 20 30. */
	CHECK(seed_curves_band(runs, 2, 4, g, m, lo, hi, &err) == 0);
	const double g2[] = {50, 100, 150, 200}, m2[] = {12.5, 15, 20, 30};
	const double lo2[] = {5, 10, 20, 30}, hi2[] = {20, 20, 20, 30};
	for (int k = 0; k < 4; k++) {
		CHECK(g[k] == g2[k]);
		CHECK_NEAR(m[k], m2[k], 1e-12);
		CHECK_NEAR(lo[k], lo2[k], 1e-12);
		CHECK_NEAR(hi[k], hi2[k], 1e-12);
	}
	/* All three: means 20/3 20/3 25/3 40/3; C is the least everywhere. */
	CHECK(seed_curves_band(runs, 3, 4, g, m, lo, hi, &err) == 0);
	const double m3[] = {20.0 / 3, 20.0 / 3, 25.0 / 3, 40.0 / 3}, lo3[] = {-5, -10, -15, -20};
	for (int k = 0; k < 4; k++) {
		CHECK(g[k] == g2[k]);
		CHECK_NEAR(m[k], m3[k], 1e-12);
		CHECK_NEAR(lo[k], lo3[k], 1e-12);
		CHECK_NEAR(hi[k], hi2[k], 1e-12);
	}
	/* One point: the start of the stretch. */
	CHECK(seed_curves_band(runs, 3, 1, g, m, lo, hi, &err) == 0);
	CHECK(g[0] == 50);
	CHECK_NEAR(m[0], 20.0 / 3, 1e-12);
	/* One run: itself, on the grid 0 100 200. */
	CHECK(seed_curves_band(runs, 1, 3, g, m, lo, hi, &err) == 0);
	CHECK(g[0] == 0 && g[1] == 100 && g[2] == 200);
	CHECK(m[0] == 0 && m[1] == 10 && m[2] == 30 && lo[2] == 30 && hi[2] == 30);
	/* Runs that meet at one x: every grid point is there. */
	const double dx[] = {0, 10}, dy[] = {1, 2}, ex[] = {10, 20}, ey[] = {6, 0};
	seed_curves_xy touch[] = {{dx, dy, 2}, {ex, ey, 2}};
	CHECK(seed_curves_band(touch, 2, 3, g, m, lo, hi, &err) == 0);
	CHECK(g[0] == 10 && g[2] == 10 && m[1] == 4 && lo[1] == 2 && hi[1] == 6);
}

static void t_band_errors(void)
{
	const double ax[] = {0, 10}, ay[] = {1, 2}, bx[] = {20, 30}, by[] = {3, 4};
	const double dx[] = {0, 20, 10}, dy[] = {0, 0, 0};
	double g[2], m[2], lo[2], hi[2];
	seed_err err;
	seed_curves_xy apart[] = {{ax, ay, 2}, {bx, by, 2}};
	CHECK(seed_curves_band(apart, 2, 2, g, m, lo, hi, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "share no stretch of x: run 0 ends at 10, before run 1 starts at 20"), "%s",
	          err.msg);
	seed_curves_xy empty[] = {{ax, ay, 2}, {bx, by, 0}};
	CHECK(seed_curves_band(empty, 2, 2, g, m, lo, hi, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "run 1 has no points"), "%s", err.msg);
	seed_curves_xy back[] = {{dx, dy, 3}};
	CHECK(seed_curves_band(back, 1, 2, g, m, lo, hi, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "run 0: x decreases at point 2"), "%s", err.msg);
	CHECK(seed_curves_band(apart, 0, 2, g, m, lo, hi, &err) == -EINVAL);
	CHECK(seed_curves_band(apart, 1, 0, g, m, lo, hi, &err) == -EINVAL);
}

int main(void)
{
	dir = tmpdir_new();
	TAP_RUN(t_columns);
	TAP_RUN(t_return_key);
	TAP_RUN(t_r2d2_keys);
	TAP_RUN(t_resume);
	TAP_RUN(t_old_lines);
	TAP_RUN(t_bad_files);
	TAP_RUN(t_read_dir);
	TAP_RUN(t_interp);
	TAP_RUN(t_band);
	TAP_RUN(t_band_errors);
	tmpdir_remove(dir);
	return tap_done();
}
