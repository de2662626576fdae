/* curves.c: learning curves from metrics.jsonl (see seed/curves.h).
 *
 * The file is read whole and parsed line by line with jansson; the rows
 * are kept as parsed objects until every line is read, since the columns
 * (the keys seen in any line) are known only then.  Metrics files are small
 * (a line a second of training), so the two passes cost nothing.
 */
#include "seed/curves.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "seed/buf.h"
#include "seed/fsutil.h"

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(seed_xmalloc(n), s, n);
}

void seed_curves_free(seed_curves **cp)
{
	if (!cp || !*cp)
		return;
	seed_curves *c = *cp;
	for (int i = 0; i < c->ncols; i++)
		free(c->keys[i]);
	free(c->keys);
	free(c->data);
	free(c->algorithm);
	free(c->path);
	free(c);
	*cp = NULL;
}

/* The index of column key, or -1. */
static int column_of(const seed_curves *c, const char *key)
{
	for (int k = 0; k < c->ncols; k++)
		if (strcmp(c->keys[k], key) == 0)
			return k;
	return -1;
}

/* The number under key in o, or NaN (absent, null, not a number). */
static double number_of(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Parse text (len bytes, NUL after them) into rows, one JSON object per
 * row. */
static int parse_rows(const char *path, char *text, size_t len, json_t ***rowsp, int64_t *np, seed_err *err)
{
	json_t **rows = NULL;
	int64_t n = 0, lineno = 0;
	size_t cap = 0;
	char *p = text, *end = text + len;
	int rc = 0;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		lineno++;
		char *q = p;
		while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q == eol) {
			p = eol + 1;
			continue;
		}
		json_error_t jerr;
		json_t *o = json_loadb(p, (size_t)(eol - p), 0, &jerr);
		if (!o) {
			rc = seed_err_set(err, -EINVAL, "%s:%" PRId64 ": not JSON: %s (column %d)", path,
			                  lineno, jerr.text, jerr.column);
			break;
		}
		if (!json_is_object(o)) {
			json_decref(o);
			rc = seed_err_set(err, -EINVAL, "%s:%" PRId64 ": not a JSON object", path, lineno);
			break;
		}
		static const char *const need[] = {"frames", "time"};
		for (int k = 0; k < 2 && !rc; k++)
			if (!isfinite(number_of(o, need[k])))
				rc = seed_err_set(err, -EINVAL, "%s:%" PRId64 ": no number \"%s\"", path,
				                  lineno, need[k]);
		if (rc) {
			json_decref(o);
			break;
		}
		rows = seed_xgrow(rows, &cap, (size_t)n + 1, sizeof *rows);
		rows[n++] = o;
		p = eol + 1;
	}
	if (!rc && n == 0)
		rc = seed_err_set(err, -EINVAL, "%s: no metrics lines (an empty file)", path);
	if (rc) {
		for (int64_t i = 0; i < n; i++)
			json_decref(rows[i]);
		free(rows);
		return rc;
	}
	*rowsp = rows;
	*np = n;
	return 0;
}

/* Lines written before Seed counted emulator frames have no agent_steps,
 * and their frames (and env_frames) are agent steps.  When later lines of
 * the file (a run resumed since) have both, their ratio is the frame skip:
 * the old lines get agent_steps = their frames, and frames (env_frames)
 * times the skip, so that one curve runs through both.  A file of old
 * lines only is left as it is: nothing in it says the skip. */
static void old_lines_in_frames(json_t **rows, int64_t n)
{
	double skip = NAN;
	for (int64_t i = 0; i < n && isnan(skip); i++) {
		double a = number_of(rows[i], "agent_steps"), f = number_of(rows[i], "frames");
		if (a > 0 && f >= a)
			skip = round(f / a);
	}
	if (isnan(skip))
		return;
	for (int64_t i = 0; i < n; i++) {
		if (isfinite(number_of(rows[i], "agent_steps")))
			continue;
		double f = number_of(rows[i], "frames"), e = number_of(rows[i], "env_frames");
		json_object_set_new(rows[i], "agent_steps", json_real(f));
		json_object_set_new(rows[i], "frames", json_real(f * skip));
		if (isfinite(e))
			json_object_set_new(rows[i], "env_frames", json_real(e * skip));
	}
}

/* Keep frames nondecreasing (the resume rule of seed/curves.h): a row
 * whose frames are fewer than an earlier row's replaces the rows past its
 * frames. */
static void resume_rule(json_t **rows, int64_t *np)
{
	int64_t n = 0;
	for (int64_t i = 0; i < *np; i++) {
		double frames = number_of(rows[i], "frames");
		while (n > 0 && number_of(rows[n - 1], "frames") > frames)
			json_decref(rows[--n]);
		rows[n++] = rows[i];
	}
	*np = n;
}

int seed_curves_read(const char *path, seed_curves **out, seed_err *err)
{
	void *text;
	size_t len;
	int rc = seed_fs_read(path, 0, &text, &len, err);
	if (rc)
		return rc;
	json_t **rows;
	int64_t n;
	rc = parse_rows(path, text, len, &rows, &n, err);
	free(text);
	if (rc)
		return rc;
	old_lines_in_frames(rows, n);
	resume_rule(rows, &n);

	seed_curves *c = seed_xcalloc(1, sizeof *c);
	c->path = dup_str(path);
	c->n = n;
	/* The columns: keys with a number or null, in order of first appearance. */
	size_t cap = 0;
	for (int64_t i = 0; i < n; i++) {
		const char *key;
		json_t *v;
		json_object_foreach(rows[i], key, v)
		{
			if (!json_is_number(v) && !json_is_null(v))
				continue;
			if (column_of(c, key) >= 0)
				continue;
			c->keys = seed_xgrow(c->keys, &cap, (size_t)c->ncols + 1, sizeof *c->keys);
			c->keys[c->ncols++] = dup_str(key);
		}
	}
	c->data = seed_xmalloc((size_t)c->ncols * (size_t)n * sizeof *c->data);
	for (int k = 0; k < c->ncols; k++)
		for (int64_t i = 0; i < n; i++)
			c->data[(size_t)k * (size_t)n + (size_t)i] = number_of(rows[i], c->keys[k]);
	for (int64_t i = n - 1; i >= 0 && !c->algorithm; i--) {
		const char *alg = json_string_value(json_object_get(rows[i], "algorithm"));
		c->algorithm = alg ? dup_str(alg) : NULL;
	}
	for (int64_t i = 0; i < n; i++)
		json_decref(rows[i]);
	free(rows);
	*out = c;
	return 0;
}

int seed_curves_read_dir(const char *dir, seed_curves **out, seed_err *err)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return seed_err_set(err, -errno, "%s: %s", dir,
		                    errno == ENOENT ? "no such directory" : strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return seed_err_set(err, -ENOTDIR, "%s: not a directory (a run directory of seed-learn)",
		                    dir);
	size_t n = strlen(dir);
	char *path = seed_xmalloc(n + sizeof "/metrics.jsonl");
	memcpy(path, dir, n);
	strcpy(path + n, n && dir[n - 1] == '/' ? "metrics.jsonl" : "/metrics.jsonl");
	int rc;
	if (stat(path, &st) != 0 && errno == ENOENT)
		rc = seed_err_set(err, -ENOENT, "%s: no such file (is %s a run directory of seed-learn?)",
		                  path, dir);
	else
		rc = seed_curves_read(path, out, err);
	free(path);
	return rc;
}

const double *seed_curves_col(const seed_curves *c, const char *key)
{
	int k = column_of(c, key);
	return k < 0 ? NULL : c->data + (size_t)k * (size_t)c->n;
}

int64_t seed_curves_points(const seed_curves *c, const char *xkey, const char *ykey, double *x, double *y)
{
	const double *xs = seed_curves_col(c, xkey), *ys = seed_curves_col(c, ykey);
	if (!xs || !ys)
		return 0;
	int64_t m = 0;
	for (int64_t i = 0; i < c->n; i++)
		if (isfinite(xs[i]) && isfinite(ys[i])) {
			x[m] = xs[i];
			y[m] = ys[i];
			m++;
		}
	return m;
}

const char *seed_curves_frames_key(const seed_curves *c, bool env_frames)
{
	return env_frames && seed_curves_col(c, "env_frames") ? "env_frames" : "frames";
}

const char *seed_curves_steps_key(const seed_curves *c)
{
	return seed_curves_col(c, "agent_steps") ? "agent_steps" : "frames";
}

/* Whether column key has a finite value in some row. */
static bool has_values(const seed_curves *c, const char *key)
{
	const double *col = seed_curves_col(c, key);
	for (int64_t i = 0; col && i < c->n; i++)
		if (isfinite(col[i]))
			return true;
	return false;
}

const char *seed_curves_return_key(const seed_curves *c)
{
	if (!has_values(c, "episode_return") && has_values(c, "mean"))
		return "mean";
	return "episode_return";
}

int seed_curves_loss_keys(const seed_curves *c, const char **keys, int max)
{
	static const char *const terms[] = {"loss",        "pg_loss", "baseline_loss", "entropy_loss",
	                                    "mean_abs_td", "mean_q",  "mean_priority"};
	int m = 0;
	for (size_t t = 0; t < sizeof terms / sizeof *terms && m < max; t++) {
		const double *col = seed_curves_col(c, terms[t]);
		for (int64_t i = 0; col && i < c->n; i++)
			if (isfinite(col[i])) {
				keys[m++] = terms[t];
				break;
			}
	}
	return m;
}

double seed_curves_interp(const double *x, const double *y, int64_t n, double at)
{
	if (n <= 0 || !(at >= x[0] && at <= x[n - 1]))
		return NAN;
	/* The first i with x[i] >= at. */
	int64_t lo = 0, hi = n - 1;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (x[mid] >= at)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (x[lo] == at || lo == 0)
		return y[lo];
	double x0 = x[lo - 1], x1 = x[lo];
	return y[lo - 1] + (y[lo] - y[lo - 1]) * ((at - x0) / (x1 - x0));
}

int seed_curves_band(const seed_curves_xy *runs, int nruns, int npoints, double *grid, double *mean,
                     double *lo, double *hi, seed_err *err)
{
	if (nruns < 1)
		return seed_err_set(err, -EINVAL, "curves: no runs to aggregate");
	if (npoints < 1)
		return seed_err_set(err, -EINVAL, "curves: %d grid points (at least 1)", npoints);
	double from = -INFINITY, to = INFINITY;
	int from_run = 0, to_run = 0;
	for (int r = 0; r < nruns; r++) {
		const seed_curves_xy *s = &runs[r];
		if (s->n < 1)
			return seed_err_set(err, -EINVAL, "curves: run %d has no points", r);
		for (int64_t i = 1; i < s->n; i++)
			if (s->x[i] < s->x[i - 1])
				return seed_err_set(err, -EINVAL,
				                    "curves: run %d: x decreases at point %" PRId64
				                    " (%.17g after %.17g)",
				                    r, i, s->x[i], s->x[i - 1]);
		if (s->x[0] > from)
			from = s->x[0], from_run = r;
		if (s->x[s->n - 1] < to)
			to = s->x[s->n - 1], to_run = r;
	}
	if (from > to)
		return seed_err_set(err, -EINVAL,
		                    "curves: the runs share no stretch of x: run %d ends at %.17g, before "
		                    "run %d starts at %.17g",
		                    to_run, to, from_run, from);
	for (int k = 0; k < npoints; k++) {
		/* The last point is the end itself, not a rounding away from it. */
		double at = k == npoints - 1 ? to : from + (to - from) * k / (npoints - 1);
		if (npoints == 1)
			at = from;
		double sum = 0, least = INFINITY, most = -INFINITY;
		for (int r = 0; r < nruns; r++) {
			double v = seed_curves_interp(runs[r].x, runs[r].y, runs[r].n, at);
			sum += v;
			least = v < least ? v : least;
			most = v > most ? v : most;
		}
		grid[k] = at;
		mean[k] = sum / nruns;
		lo[k] = least;
		hi[k] = most;
	}
	return 0;
}
