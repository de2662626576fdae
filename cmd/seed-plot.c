/* cmd/seed-plot.c: learning curves of runs, drawn by gnuplot.
 *
 *   seed-plot RUN_DIR...             a text plot on the terminal
 *   seed-plot -O curve.png RUN_DIR...  curve.png and curve-loss.png
 *
 * Reading metrics.jsonl, choosing the columns and resampling runs for
 * --mean are seed_curves(3)'s; this program writes what it computed as
 * data files and a gnuplot script into a private temporary directory, runs
 * gnuplot on them and, for PNG output, puts each picture in place
 * atomically: gnuplot writes a temporary file beside the target, which is
 * synced and renamed over it only when gnuplot succeeded and the file is a
 * PNG.  The pages:
 *
 *   returns  mean return against frames (emulator frames; --agent-steps:
 *            agent steps) (top) and against seconds of
 *            training (bottom): one line per run, or with --mean the mean
 *            of the runs and their min-max band, resampled onto a grid;
 *            the returns of neuroevolution's runs are their rounds' mean
 *            (seed_curves_return_key)
 *   losses   the loss terms (seed_curves_loss_keys), a panel each, two a
 *            row, against frames; the second PNG (NAME-loss.png, taller
 *            by half for each row past the second), or the text plot with
 *            --losses
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "seed/buf.h"
#include "seed/curves.h"
#include "seed/fsutil.h"
#include "seed/opts.h"

extern char **environ;

static struct {
	const char *out, *size;
	bool mean, env_frames, agent_steps, losses;
	int64_t points;
} opt = {.points = 200};

static const seed_opt options[] = {
    {"out", 'O', SEED_OPT_STR, &opt.out, "FILE.png",
     .help = "write PNG pictures: the returns to FILE.png, the loss terms to FILE-loss.png "
             "(default: a text plot on the terminal)"},
    {"mean", 0, SEED_OPT_FLAG, &opt.mean,
     .help = "draw the runs' mean and their min-max band (resampled onto a common grid of frames, "
             "or of seconds) instead of a line per run"},
    {"points", 0, SEED_OPT_INT, &opt.points, "N", 2, 100000,
     .help = "--mean: points of the common grid (default 200)"},
    {"env-frames", 0, SEED_OPT_FLAG, &opt.env_frames,
     .help = "count R2D2 runs' frames by env_frames, the frames their actors played, instead of the "
             "steps their learner sampled (V-trace runs count played frames either way)"},
    {"agent-steps", 0, SEED_OPT_FLAG, &opt.agent_steps,
     .help = "draw against agent steps instead of frames, which are emulator frames: agent steps "
             "times the environment's frame skip (4 for Atari; the same for environments without "
             "one)"},
    {"losses", 0, SEED_OPT_FLAG, &opt.losses,
     .help = "the text plot shows the loss terms instead of the returns"},
    {"size", 0, SEED_OPT_STR, &opt.size, "WxH",
     .help = "the picture's size: pixels for a PNG (default 1000x700), characters for the text plot "
             "(default: the terminal's)"},
    {0},
};

static const seed_opts spec = {
    .usage = "[--mean] [--env-frames | --agent-steps] [--size WxH] [-O FILE.png] RUN_DIR...",
    .summary = "Draw the learning curves of training runs from their metrics.jsonl, with gnuplot:\n"
               "the mean return against frames (emulator frames, as papers count them) and against\n"
               "seconds of training, a line per run (labelled by the run directory's name) or their\n"
               "mean and min-max band (--mean), and the loss terms on a second page.  Without -O, a\n"
               "text plot on the terminal.",
    .epilogue = "gnuplot (Debian: gnuplot-nox) must be on PATH, or named by SEED_GNUPLOT.\n"
                "See seed-plot(1).\n",
    .opts = options,
    .max_operands = -1,
};

/* The private directory of data files and the script, removed at the end. */
static char tmpdir[4096];
static seed_buf tmpfiles; /* NUL-separated names in tmpdir */
/* The PNG temporaries beside the targets, removed unless renamed. */
static char *png_tmp[2];

static void cleanup(void)
{
	for (size_t i = 0; i < tmpfiles.len; i += strlen((char *)tmpfiles.data + i) + 1) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", tmpdir, (char *)tmpfiles.data + i);
		unlink(path);
	}
	seed_buf_free(&tmpfiles);
	if (tmpdir[0])
		rmdir(tmpdir);
	tmpdir[0] = 0;
	for (int i = 0; i < 2; i++)
		if (png_tmp[i]) {
			unlink(png_tmp[i]);
			free(png_tmp[i]);
			png_tmp[i] = NULL;
		}
}

/* Open tmpdir/name for writing, remembering it for cleanup. */
static FILE *tmp_open(const char *name, char *path, size_t n)
{
	snprintf(path, n, "%s/%s", tmpdir, name);
	seed_buf_append(&tmpfiles, name, strlen(name) + 1);
	FILE *f = fopen(path, "w");
	if (!f)
		cli_die("%s: cannot write: %s", path, strerror(errno));
	return f;
}

static void tmp_close(FILE *f, const char *path)
{
	if (ferror(f) | fclose(f))
		cli_die("%s: cannot write: %s", path, strerror(errno));
}

/* s as a gnuplot string: single quotes (no escapes inside but ''), control
 * characters shown as '?'. */
static void gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("''", f);
		else
			fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
	}
	fputc('\'', f);
}

static void put_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("NaN", f);
}

/* One run: its directory, its label, its metrics and its frames column. */
typedef struct run {
	const char *dir, *label;
	char *name; /* the directory's last component (label's memory) */
	seed_curves *c;
	const char *fkey;
	const char *rkey; /* its returns' column (seed_curves_return_key) */
	char data[8192];  /* its data file: x, time, return, then every loss key */
} run;

static run *runs;
static int nruns;
static const char *losskeys[16];
static int nloss;

/* A panel's series: y column ycol of the runs' data files against column
 * xcol (1: frames, 2: time), or with --mean the band file of the panel. */
typedef struct panel {
	/* xkey NULL: each run's frames column; ykey NULL: each run's returns */
	const char *title, *xlabel, *ylabel, *ykey, *xkey;
	int xcol, ycol;
	char band[8192];   /* --mean: grid mean lo hi */
	int banded;        /* --mean: runs in the band */
	bool any;          /* something to draw */
	double xmin, xmax; /* the x of what is drawn */
	int width;         /* text plot: the panel's width in characters */
} panel;

/* The points of run r for a panel, in new arrays; returns how many. */
static int64_t run_points(const run *r, const panel *p, double **x, double **y)
{
	*x = seed_xmalloc((size_t)(r->c->n + 1) * sizeof **x);
	*y = seed_xmalloc((size_t)(r->c->n + 1) * sizeof **y);
	return seed_curves_points(r->c, p->xkey ? p->xkey : r->fkey, p->ykey ? p->ykey : r->rkey, *x, *y);
}

/* --mean: the band of a panel over the runs that have points there. */
static void write_band(panel *p, int index)
{
	seed_curves_xy *xy = seed_xcalloc((size_t)nruns, sizeof *xy);
	int *which = seed_xcalloc((size_t)nruns, sizeof *which); /* xy[j] is runs[which[j]] */
	int m = 0;
	for (int i = 0; i < nruns; i++) {
		double *x, *y;
		int64_t n = run_points(&runs[i], p, &x, &y);
		if (n == 0) {
			free(x);
			free(y);
			continue;
		}
		which[m] = i;
		xy[m++] = (seed_curves_xy){x, y, n};
	}
	p->banded = m;
	p->any = m > 0;
	if (m > 0) {
		size_t k = (size_t)opt.points;
		double *g = seed_xmalloc(4 * k * sizeof *g), *mean = g + k, *lo = g + 2 * k, *hi = g + 3 * k;
		seed_err err;
		if (seed_curves_band(xy, m, (int)k, g, mean, lo, hi, &err)) {
			/* The error counts the runs of the band: say which is which.
			 * Everything is freed before dying, so that a leak checker
			 * sees none on this path either. */
			seed_buf names = {0};
			for (int j = 0; j < m; j++) {
				char s[64];
				snprintf(s, sizeof s, "%srun %d: ", j ? ", " : " (", j);
				seed_buf_append(&names, s, strlen(s));
				seed_buf_append(&names, runs[which[j]].dir, strlen(runs[which[j]].dir));
			}
			seed_buf_append(&names, ")", 2);
			char msg[4096];
			snprintf(msg, sizeof msg, "--mean: %s: %s%s", p->title, err.msg, (char *)names.data);
			seed_buf_free(&names);
			for (int j = 0; j < m; j++) {
				free((void *)xy[j].x);
				free((void *)xy[j].y);
			}
			free(xy);
			free(which);
			free(g);
			cli_die("%s", msg);
		}
		char name[64];
		snprintf(name, sizeof name, "band-%d.dat", index);
		FILE *f = tmp_open(name, p->band, sizeof p->band);
		fprintf(f, "# %s: grid mean min max over %d runs\n", p->ykey ? p->ykey : "returns", m);
		for (size_t i = 0; i < k; i++) {
			put_num(f, g[i]);
			fputc(' ', f);
			put_num(f, mean[i]);
			fputc(' ', f);
			put_num(f, lo[i]);
			fputc(' ', f);
			put_num(f, hi[i]);
			fputc('\n', f);
		}
		tmp_close(f, p->band);
		free(g);
	}
	for (int i = 0; i < m; i++) {
		free((void *)xy[i].x);
		free((void *)xy[i].y);
	}
	free(xy);
	free(which);
}

/* The plot command of a panel. */
static void plot_panel(FILE *f, const panel *p)
{
	fputs("set title ", f);
	gp_str(f, p->title);
	fputs("\nset xlabel ", f);
	gp_str(f, p->xlabel);
	/* gnuplot's text cannot turn the y label: it would take columns from
	 * the plot, and the title already says what y is. */
	fputs("\nset ylabel ", f);
	gp_str(f, opt.out ? p->ylabel : "");
	/* Frames as 2.5M; seconds as they are. */
	fputs(p->xcol == 2 ? "\nset format x '%g'\n" : "\nset format x '%.1s%c'\n", f);
	/* gnuplot spaces tics for the range, not for the width: a text panel
	 * gets a tic every 10 characters at most. */
	if (!opt.out && p->xmax > p->xmin) {
		double want = (p->xmax - p->xmin) / fmax(2, p->width / 10);
		double step = pow(10, floor(log10(want)));
		step *= want <= step ? 1 : want <= 2 * step ? 2 : want <= 5 * step ? 5 : 10;
		fprintf(f, "set xtics %.17g\n", step);
	}
	if (opt.mean) {
		char label[96];
		fputs("plot ", f);
		gp_str(f, p->band);
		snprintf(label, sizeof label, "min-max of %d run%s", p->banded, p->banded == 1 ? "" : "s");
		fputs(" using 1:3:4 with filledcurves fillstyle solid 0.25 noborder linecolor rgb '#4c72b0' "
		      "title ",
		      f);
		gp_str(f, label);
		fputs(", '' using 1:2 with lines linewidth 2 linecolor rgb '#1f3f7a' title ", f);
		snprintf(label, sizeof label, "mean of %d run%s", p->banded, p->banded == 1 ? "" : "s");
		gp_str(f, label);
		fputc('\n', f);
		return;
	}
	const char *sep = "plot ";
	for (int i = 0; i < nruns; i++) {
		double *x, *y;
		int64_t n = run_points(&runs[i], p, &x, &y);
		free(x);
		free(y);
		if (n == 0)
			continue;
		fputs(sep, f);
		gp_str(f, runs[i].data);
		/* A run keeps its colour (its character in text) on every panel. */
		fprintf(f, " using %d:%d with lines linetype %d linewidth 1.5 title ", p->xcol, p->ycol,
		        i + 1);
		gp_str(f, runs[i].label);
		sep = ", \\\n     ";
	}
	fputc('\n', f);
}

/* The terminal's size in characters: stdout's window, else COLUMNS and
 * LINES, else 80x24; a line is left for the shell's prompt. */
static void terminal_size(int64_t *w, int64_t *h)
{
	struct winsize ws;
	*w = 80, *h = 24;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 &&
	    ws.ws_row > 0) {
		*w = ws.ws_col, *h = ws.ws_row;
	} else {
		const char *c = getenv("COLUMNS"), *l = getenv("LINES");
		if (c && atoi(c) > 0)
			*w = atoi(c);
		if (l && atoi(l) > 0)
			*h = atoi(l);
	}
	*h -= 1;
	if (*w < 40)
		*w = 40;
	if (*h < 12)
		*h = 12;
}

/* --size WxH into w and h, each in [lo, hi]. */
static void parse_size(const char *s, int64_t lo, int64_t hi, int64_t *w, int64_t *h)
{
	const char *x = strchr(s, 'x');
	char buf[64];
	seed_err err;
	if (!x || (size_t)(x - s) >= sizeof buf)
		cli_usage_error("--size: '%s' is not WIDTHxHEIGHT", s);
	memcpy(buf, s, (size_t)(x - s));
	buf[x - s] = 0;
	if (seed_opts_int("--size width", buf, lo, hi, w, &err) ||
	    seed_opts_int("--size height", x + 1, lo, hi, h, &err))
		cli_usage_error("%s", err.msg);
}

/* NAME.png -> NAME-loss.png (any other name: NAME-loss.png after it). */
static char *loss_name(const char *out)
{
	size_t n = strlen(out);
	if (n > 4 && strcmp(out + n - 4, ".png") == 0)
		n -= 4;
	char *s = seed_xmalloc(n + sizeof "-loss.png");
	memcpy(s, out, n);
	strcpy(s + n, "-loss.png");
	return s;
}

/* A temporary file beside target, made now so that a directory that is not
 * there, or not writable, is said before gnuplot runs. */
static char *png_temp(const char *target)
{
	const char *slash = strrchr(target, '/');
	size_t dl = slash ? (size_t)(slash - target) + 1 : 0;
	size_t n = strlen(target) + 64;
	char *t = seed_xmalloc(n);
	snprintf(t, n, "%.*s.%s.tmp-%ld", (int)dl, target, target + dl, (long)getpid());
	int fd = open(t, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		cli_die("%s: cannot write: %s", target, strerror(errno));
	close(fd);
	return t;
}

/* The PNG gnuplot wrote at tmp, synced and renamed over target. */
static void png_commit(char **tmp, const char *target)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	unsigned char head[8];
	int fd = open(*tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, head, 8) != 8 || memcmp(head, sig, 8) != 0)
		cli_die("%s: gnuplot wrote no PNG (%s left as it was)", *tmp, target);
	if (fsync(fd) != 0)
		cli_die("%s: cannot sync: %s", *tmp, strerror(errno));
	close(fd);
	if (rename(*tmp, target) != 0)
		cli_die("%s: cannot rename to %s: %s", *tmp, target, strerror(errno));
	free(*tmp);
	*tmp = NULL;
	char *dir = strcpy(seed_xmalloc(strlen(target) + 2), target);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = 0;
	else
		strcpy(dir, ".");
	seed_err err;
	if (seed_fs_sync_dir(dir, &err))
		cli_die("%s", err.msg);
	free(dir);
}

/* The program name as execvp would find it (a name with a slash as it
 * is), in a new string, or NULL.  Looked up here rather than left to
 * posix_spawnp, which cannot always say that the exec failed (under
 * valgrind the child just exits 127). */
static char *find_program(const char *name)
{
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? strcpy(seed_xmalloc(strlen(name) + 1), name) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *full = seed_xmalloc(n + strlen(name) + 3);
		snprintf(full, n + strlen(name) + 3, "%.*s/%s", (int)n, n ? p : ".", name);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
			return full;
		free(full);
		if (!end)
			return NULL;
		p = end;
	}
}

/* Run gnuplot on script; its standard error goes to errpath and, when it
 * fails, into the message. */
static void run_gnuplot(const char *script, const char *errpath)
{
	const char *env = getenv("SEED_GNUPLOT");
	const char *gp = env && *env ? env : "gnuplot";
	char *exe = find_program(gp);
	if (!exe)
		cli_die("%s: not found%s: install gnuplot (Debian: apt-get install gnuplot-nox)", gp,
		        env && *env ? " (SEED_GNUPLOT)" : " on PATH");
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char *argv[] = {(char *)gp, (char *)script, NULL};
	pid_t pid;
	fflush(stdout);
	int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	free(exe);
	if (rc)
		cli_die("%s: cannot run: %s", gp, strerror(rc));
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			cli_die("%s: cannot wait: %s", gp, strerror(errno));
		if (cli_stop) {
			kill(pid, SIGTERM);
			waitpid(pid, &status, 0);
			cli_die("stopped by a signal");
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	void *text = NULL;
	size_t len = 0;
	seed_err err;
	if (seed_fs_read(errpath, 1 << 16, &text, &len, &err) != 0)
		text = NULL;
	char *t = text;
	while (t && len > 0 && (t[len - 1] == '\n' || t[len - 1] == ' '))
		t[--len] = 0;
	if (WIFEXITED(status))
		cli_die("%s failed (exit %d)%s%s", gp, WEXITSTATUS(status), t && *t ? ":\n" : "", t ? t : "");
	cli_die("%s died of signal %d", gp, WTERMSIG(status));
}

static void write_run_data(run *r, int index)
{
	char name[64];
	snprintf(name, sizeof name, "run-%d.dat", index);
	FILE *f = tmp_open(name, r->data, sizeof r->data);
	const double *x = seed_curves_col(r->c, r->fkey), *t = seed_curves_col(r->c, "time");
	const double *ret = seed_curves_col(r->c, r->rkey);
	const double *loss[16];
	fprintf(f, "# %s: %s time %s", r->dir, r->fkey, r->rkey);
	for (int k = 0; k < nloss; k++) {
		loss[k] = seed_curves_col(r->c, losskeys[k]);
		fprintf(f, " %s", losskeys[k]);
	}
	fputc('\n', f);
	for (int64_t i = 0; i < r->c->n; i++) {
		put_num(f, x ? x[i] : NAN);
		fputc(' ', f);
		put_num(f, t[i]);
		fputc(' ', f);
		put_num(f, ret ? ret[i] : NAN);
		for (int k = 0; k < nloss; k++) {
			fputc(' ', f);
			put_num(f, loss[k] ? loss[k][i] : NAN);
		}
		fputc('\n', f);
	}
	tmp_close(f, r->data);
}

/* The labels: each run directory's name, or the path as given where two
 * names are the same. */
static void label_runs(void)
{
	bool clash = false;
	for (int i = 0; i < nruns; i++) {
		char *d = strcpy(seed_xmalloc(strlen(runs[i].dir) + 1), runs[i].dir);
		size_t n = strlen(d);
		while (n > 1 && d[n - 1] == '/')
			d[--n] = 0;
		char *slash = strrchr(d, '/');
		runs[i].name = d;
		runs[i].label = slash && slash[1] ? slash + 1 : d;
	}
	for (int i = 0; i < nruns; i++)
		for (int j = 0; j < i; j++)
			clash |= strcmp(runs[i].label, runs[j].label) == 0;
	if (clash)
		for (int i = 0; i < nruns; i++)
			runs[i].label = runs[i].dir;
}

/* Read each run's metrics, its frames column and the loss keys of them all
 * (the first 16, in the order the runs name them), then label the runs. */
static void read_runs(char **dirs, int n)
{
	nruns = n;
	runs = seed_xcalloc((size_t)nruns, sizeof *runs);
	for (int i = 0; i < nruns; i++) {
		seed_err err;
		runs[i].dir = dirs[i];
		if (seed_curves_read_dir(runs[i].dir, &runs[i].c, &err))
			cli_die("%s", err.msg);
		runs[i].fkey = opt.agent_steps ? seed_curves_steps_key(runs[i].c)
		                               : seed_curves_frames_key(runs[i].c, opt.env_frames);
		runs[i].rkey = seed_curves_return_key(runs[i].c);
		const char *keys[16];
		int nk = seed_curves_loss_keys(runs[i].c, keys, 16);
		for (int k = 0; k < nk; k++) {
			int seen = 0;
			for (int j = 0; j < nloss; j++)
				seen |= strcmp(losskeys[j], keys[k]) == 0;
			if (!seen && nloss < 16)
				losskeys[nloss++] = keys[k];
		}
	}
	label_runs();
}

/* The private temporary directory, removed at exit with what is in it. */
static void make_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/seed-plot.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		tmpdir[0] = 0;
		cli_die("%s: cannot make a temporary directory: %s", base && *base ? base : "/tmp",
		        strerror(errno));
	}
	atexit(cleanup);
}

/* The panels: the returns page, then a panel per loss term; returns how
 * many.  ps has room for 2 + 16. */
static int make_panels(panel *ps)
{
	bool envf = false;
	for (int i = 0; i < nruns; i++)
		envf |= strcmp(runs[i].fkey, "env_frames") == 0;
	const char *fl = opt.agent_steps ? "agent steps"
	                 : envf          ? "env frames (emulator)"
	                                 : "frames (emulator)";
	int np = 0;
	ps[np++] = (panel){.title = opt.agent_steps ? "mean return against agent steps"
	                                            : "mean return against frames",
	                   .xlabel = fl,
	                   .ylabel = "mean return",
	                   .xcol = 1,
	                   .ycol = 3};
	ps[np++] = (panel){.title = "mean return against time",
	                   .xlabel = "seconds of training",
	                   .ylabel = "mean return",
	                   .xkey = "time",
	                   .xcol = 2,
	                   .ycol = 3};
	for (int k = 0; k < nloss; k++)
		ps[np++] = (panel){.title = losskeys[k],
		                   .xlabel = fl,
		                   .ylabel = losskeys[k],
		                   .ykey = losskeys[k],
		                   .xcol = 1,
		                   .ycol = 4 + k};
	return np;
}

/* What each panel has to draw and the x it spans; with --mean, its band. */
static void measure_panels(panel *ps, int np)
{
	for (int p = 0; p < np; p++) {
		ps[p].xmin = INFINITY, ps[p].xmax = -INFINITY;
		for (int i = 0; i < nruns; i++) {
			double *x, *y;
			int64_t n = run_points(&runs[i], &ps[p], &x, &y);
			ps[p].any |= n > 0;
			for (int64_t j = 0; j < n; j++)
				ps[p].xmin = fmin(ps[p].xmin, x[j]), ps[p].xmax = fmax(ps[p].xmax, x[j]);
			free(x);
			free(y);
		}
		if (opt.mean)
			write_band(&ps[p], p);
	}
}

/* A run without returns is left out, with a warning; without any run that
 * has them there is nothing to draw. */
static void check_returns(const panel *returns)
{
	for (int i = 0; i < nruns; i++) {
		double *x, *y;
		if (run_points(&runs[i], returns, &x, &y) == 0)
			cli_warn("%s: no return yet (every line's episode_return, or an evolution's round "
			         "mean, is null): left out",
			         runs[i].c->path);
		free(x);
		free(y);
	}
	if (!returns->any)
		cli_die("no episode return to draw: every line of %s is null there",
		        nruns == 1 ? runs[0].c->path : "every run's metrics.jsonl");
}

/* One page of the script: the returns (page 0) or the loss terms (page 1,
 * nlp panels with something to draw), w by h. */
static void write_page(FILE *f, int page, panel *ps, int np, int nlp, int64_t w, int64_t h)
{
	if (opt.out) {
		/* The loss page: a returns panel's height for each row of
		 * its panels past the second (runs of both algorithms). */
		int64_t ph = page == 0 || nlp <= 4 ? h : h * ((nlp + 1) / 2) / 2;
		fprintf(f,
		        "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		        "  set terminal pngcairo size %" PRId64 ",%" PRId64 " noenhanced font ',10'\n"
		        "} else {\n"
		        "  set terminal png size %" PRId64 ",%" PRId64 " noenhanced\n"
		        "}\n",
		        w, ph, w, ph);
		fputs("set output ", f);
		gp_str(f, png_tmp[page]);
		fputc('\n', f);
	}
	for (int p = 0; p < np; p++)
		ps[p].width = (int)(p < 2 || nlp == 1 ? w : w / 2);
	if (page == 0) {
		fputs("set multiplot layout 2,1\n", f);
		plot_panel(f, &ps[0]);
		plot_panel(f, &ps[1]);
	} else {
		fprintf(f, "set key top right\nset multiplot layout %d,%d\n", (nlp + 1) / 2, nlp > 1 ? 2 : 1);
		for (int p = 2; p < np; p++)
			if (ps[p].any)
				plot_panel(f, &ps[p]);
	}
	fputs("unset multiplot\n", f);
	if (opt.out)
		fputs("unset output\n", f);
}

/* The gnuplot script, at script; with -O, the PNG targets (targets[1] new,
 * NULL without a loss page) and their temporaries beside them. */
static void write_script(char *script, size_t n, panel *ps, int np, int nlp, int64_t w, int64_t h,
                         char **targets)
{
	FILE *f = tmp_open("plot.gp", script, n);
	if (opt.out) {
		targets[0] = (char *)opt.out;
		targets[1] = nlp ? loss_name(opt.out) : NULL;
		png_tmp[0] = png_temp(targets[0]);
		if (targets[1])
			png_tmp[1] = png_temp(targets[1]);
	} else {
		fprintf(f, "set terminal dumb size %" PRId64 ",%" PRId64 " noenhanced\n", w, h);
	}
	/* A grid and an opaque key help a picture; in text they are clutter. */
	fputs(opt.out ? "set grid\nset key bottom right opaque\n" : "set key bottom right\n", f);
	/* x spans the data, not the next round number past it. */
	fputs("set autoscale xfix\n", f);
	for (int page = 0; page < 2; page++) {
		if (!opt.out && page != (opt.losses ? 1 : 0))
			continue;
		if (page == 1 && nlp == 0)
			continue;
		write_page(f, page, ps, np, nlp, w, h);
	}
	tmp_close(f, script);
}

int main(int argc, char **argv)
{
	int first = cli_parse(&spec, argc, argv);
	if (first >= argc)
		cli_usage_error("name at least one RUN_DIR (a directory with seed-learn's metrics.jsonl)");
	if (opt.losses && opt.out)
		cli_usage_error("--losses chooses the text plot's page: -O writes both pages");
	if (opt.env_frames && opt.agent_steps)
		cli_usage_error("--env-frames and --agent-steps choose two different x axes: give one");
	int64_t w, h;
	if (opt.out)
		w = 1000, h = 700;
	else
		terminal_size(&w, &h);
	if (opt.size)
		parse_size(opt.size, opt.out ? 100 : 20, opt.out ? 20000 : 10000, &w, &h);
	cli_catch_signals();

	read_runs(argv + first, argc - first);
	make_tmpdir();
	for (int i = 0; i < nruns; i++)
		write_run_data(&runs[i], i);
	panel ps[2 + 16];
	int np = make_panels(ps);
	measure_panels(ps, np);
	check_returns(&ps[0]);
	int nlp = 0; /* loss panels with something to draw */
	for (int p = 2; p < np; p++)
		nlp += ps[p].any;

	char script[8192], errpath[8192];
	char *targets[2] = {NULL, NULL};
	fclose(tmp_open("gnuplot.err", errpath, sizeof errpath));
	write_script(script, sizeof script, ps, np, nlp, w, h, targets);
	if (!opt.out && opt.losses && nlp == 0)
		cli_die("no loss terms to draw in %s", nruns == 1 ? runs[0].c->path : "these runs' metrics");
	if (opt.out && nlp == 0)
		cli_warn("no loss terms in the metrics: no loss page written");

	run_gnuplot(script, errpath);
	for (int page = 0; page < 2; page++)
		if (targets[page])
			png_commit(&png_tmp[page], targets[page]);
	if (targets[1])
		free(targets[1]);
	for (int i = 0; i < nruns; i++) {
		seed_curves_free(&runs[i].c);
		free(runs[i].name);
	}
	free(runs);
	cleanup();
	return fflush(stdout) == 0 ? 0 : 1;
}
