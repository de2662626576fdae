/* test_serve_loop.c: what a program running seed_serve reports, and its
 * loop.  seed_serve_report's lines for a table of readings, each line
 * worked by hand from the two readings (rates over dt, counts since the
 * start, the phases' percentages); seed_serve_metrics' fields for the same;
 * then seed_serve_loop over inproc:// channels: the lines said and the
 * metrics lines written on their intervals and at the end, and a metrics
 * file that cannot be written warned about under its name. */
#include "seed/serve.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/metrics.h"
#include "tap.h"
#include "tmpdir.h"

/* The readings: from `a` (last) to `b` (st), 2 s apart. */
static seed_serve_stats reading_a(void)
{
	seed_serve_stats a = {
	    .steps = 1000, .batches = 10, .rows = 1000, .unroll_bytes = 1000000, .episodes = 2};
	a.generation = -1;
	return a;
}

static seed_serve_stats reading_b(void)
{
	seed_serve_stats b = {.steps = 3000,
	                      .requests = 1500,
	                      .batches = 20,
	                      .rows = 2000,
	                      .unroll_frames = 10,
	                      .unroll_bytes = 5000000,
	                      .unrolls = 40,
	                      .episodes = 10,
	                      .push_failed = 1,
	                      .bad = 2,
	                      .resends = 3,
	                      .gaps = 4,
	                      .halves = 5,
	                      .evicted = 6,
	                      .expired = 8,
	                      .generation = -1};
	b.time[SEED_PHASE_WAIT] = 1.0;
	b.time[SEED_PHASE_FORWARD] = 0.5;
	b.time[SEED_PHASE_SEND] = 0.3;
	return b;
}

/* 2 s: wait 1.0 s (50%), forward 0.5 s (25%), send 0.3 s (15%); take,
 * encode, blocked none. */
#define TIME_LINE "time: wait 50%, take 0%, forward 25%, encode 0%, send 15%, blocked 0% (of 2.0 s)\n"
/* (3000 - 1000) / 2 steps/s; (2000 - 1000) / (20 - 10) rows a batch;
 * (5e6 - 1e6) / 2 / 1e6 MB/s; then the counts of b. */
#define COUNT_LINE                                                                                           \
	"1000 env steps/s, 100.0 rows/batch, 2.00 MB/s of unrolls, 3000 steps, 40 unrolls, 10 episodes, 1 "  \
	"pushes failed, 2 bad frames, 3 resends, 4 gaps, 5 halves, 6 evicted, 8 expired\n"

static void t_report(void)
{
	static const struct {
		const char *name;
		bool final, population;
		int64_t generation, unmodeled;
		const char *want;
	} cases[] = {
	    {"an interval", false, false, -1, 0, TIME_LINE COUNT_LINE},
	    {"the end: done, and the unmodeled unrolls", true, false, -1, 12,
	     "done: " TIME_LINE "done: " COUNT_LINE
	     "12 unrolls were not pushed: played at random before the first parameters came\n"},
	    {"unmodeled unrolls are said only at the end", false, false, -1, 12, TIME_LINE COUNT_LINE},
	    /* (10 - 2) / 2 episodes/s */
	    {"a population playing generation 3", false, true, 3, 0,
	     TIME_LINE "generation 3 (4 members), 4 episodes/s, 2 generations played, 1 repeats, 0 bad "
	               "generation frames, 5 restarts, 25% of rows held\n" COUNT_LINE},
	    {"generation frames came, none played", true, true, -1, 0,
	     "done: " TIME_LINE "done: generation none, 4 episodes/s, 2 generations played, 1 repeats, 0 bad "
	     "generation frames, 5 restarts, 25% of rows held\n"
	     "done: " COUNT_LINE},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		seed_serve_stats a = reading_a(), b = reading_b();
		b.unrolls_unmodeled = cases[k].unmodeled;
		if (cases[k].population) {
			b.generations_taken = 3;
			b.generation = cases[k].generation;
			b.members = 4;
			b.generations = 2;
			b.generation_repeats = 1;
			b.restarts = 5;
			b.held = 500; /* of the 2000 rows answered since `a`: 25% */
		}
		char buf[2048];
		int n = seed_serve_report(&b, &a, 2.0, cases[k].final, buf, sizeof buf);
		CHECK_MSG(strcmp(buf, cases[k].want) == 0, "%s:\n got  %s\n want %s", cases[k].name, buf,
		          cases[k].want);
		CHECK_MSG(n == (int)strlen(cases[k].want), "%s: length %d", cases[k].name, n);
	}
	/* Too small a buffer: what fits, terminated, and the whole length. */
	seed_serve_stats a = reading_a(), b = reading_b();
	char small[11];
	int n = seed_serve_report(&b, &a, 2.0, false, small, sizeof small);
	CHECK(n == (int)strlen(TIME_LINE COUNT_LINE));
	CHECK_MSG(strcmp(small, "time: wait") == 0, "%s", small);
	/* No time between the readings: nothing. */
	strcpy(small, "x");
	CHECK(seed_serve_report(&b, &a, 0, true, small, sizeof small) == 0 && small[0] == '\0');
	/* No batch in the interval: 0.0 rows a batch, not a division by 0. */
	b.batches = a.batches;
	char buf[2048];
	seed_serve_report(&b, &a, 2.0, false, buf, sizeof buf);
	CHECK_MSG(strstr(buf, "1000 env steps/s, 0.0 rows/batch,") != NULL, "%s", buf);
}

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return v ? json_number_value(v) : NAN;
}

static void t_metrics(void)
{
	seed_serve_stats a = reading_a(), b = reading_b();
	json_t *o = seed_serve_metrics(&b, &a, 2.0, 7.5);
	CHECK(o != NULL);
	static const struct {
		const char *key;
		double want;
	} fields[] = {
	    {"time", 7.5},         {"steps", 3000},     {"steps_per_s", 1000}, {"rows_per_batch", 100},
	    {"requests", 1500},    {"batches", 20},     {"unrolls", 40},       {"unroll_frames", 10},
	    {"unroll_bytes", 5e6}, {"episodes", 10},    {"push_failed", 1},    {"bad_frames", 2},
	    {"resends", 3},        {"gaps", 4},         {"halves", 5},         {"evicted", 6},
	    {"expired", 8},        {"frac_wait", 0.5},  {"frac_take", 0},      {"frac_forward", 0.25},
	    {"frac_encode", 0},    {"frac_send", 0.15}, {"frac_blocked", 0},   {"interval", 2},
	};
	for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
		CHECK_MSG(num(o, fields[k].key) == fields[k].want, "%s: %g, not %g", fields[k].key,
		          num(o, fields[k].key), fields[k].want);
	/* Phases the service does not have, and a population's fields before
	 * any generation frame, are not there. */
	CHECK(!json_object_get(o, "frac_step") && !json_object_get(o, "generation") &&
	      !json_object_get(o, "episodes_per_s"));
	json_decref(o);
	b.generations_taken = 3;
	b.generation = 3;
	b.members = 4;
	b.generations = 2;
	b.bad_generations = 1;
	b.restarts = 5;
	b.held = 7;
	o = seed_serve_metrics(&b, &a, 2.0, 7.5);
	CHECK(num(o, "generation") == 3 && num(o, "members") == 4 && num(o, "episodes_per_s") == 4 &&
	      num(o, "generations") == 2 && num(o, "bad_generations") == 1 && num(o, "restarts") == 5 &&
	      num(o, "held") == 7);
	json_decref(o);
	CHECK(seed_serve_metrics(&b, &a, 0, 7.5) == NULL);
}

/* What the loop said: its lines, and the service's warnings. */
struct heard {
	char lines[16][512], warnings[4][512];
	int nlines, nwarnings;
	volatile sig_atomic_t stop;
	int stop_after; /* lines said before the test raises stop */
};

static void say(void *ctx, const char *line)
{
	struct heard *h = ctx;
	if (h->nlines < 16)
		snprintf(h->lines[h->nlines], sizeof h->lines[0], "%s", line);
	if (++h->nlines >= h->stop_after)
		h->stop = 1;
}

static void warn(void *ctx, const char *msg)
{
	struct heard *h = ctx;
	if (h->nwarnings < 4)
		snprintf(h->warnings[h->nwarnings], sizeof h->warnings[0], "%s", msg);
	h->nwarnings++;
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int n = 0;
	for (int c; (c = fgetc(f)) != EOF;)
		n += c == '\n';
	fclose(f);
	return n;
}

/* A service with no actors: the loop's first turn is past both intervals
 * (1 ms), so it says the interval's two lines and writes a metrics line;
 * the second line said raises stop; at the end come the last metrics line
 * and the whole run's two lines, "done: ". */
static void run_loop(const char *metrics_path, struct heard *h)
{
	void *ctx = seed_chan_context();
	seed_chan *router = NULL;
	seed_chan_opts bind = {.bind = true};
	seed_err err;
	CHECK(seed_chan_open(&router, ctx, SEED_CHAN_ROUTER, "inproc://loop", &bind, &err) == 0);
	seed_serve_opts so = {.max_batch = 8,
	                      .timeout = 0.01,
	                      .T = 2,
	                      .idle_expiry = 60,
	                      .max_halves = 4,
	                      .max_bytes = 1 << 20,
	                      .max_envs = 8,
	                      .max_actions = 8,
	                      .max_row_bytes = 64,
	                      .warn = warn,
	                      .ctx = h};
	seed_serve *s = NULL;
	CHECK_MSG(seed_serve_new(&s, &so, router, NULL, NULL, &err) == 0, "%s", err.msg);
	seed_metrics *mx = NULL;
	CHECK_MSG(seed_metrics_open(metrics_path, &mx, &err) == 0, "%s", err.msg);
	h->stop_after = 2;
	seed_serve_loop_opts lo = {.stop = &h->stop,
	                           .wait_ms = 5,
	                           .say = say,
	                           .ctx = h,
	                           .stats_interval = 0.001,
	                           .metrics = mx,
	                           .metrics_interval = 0.001,
	                           .metrics_name = "the metrics file"};
	CHECK(seed_serve_loop(s, &lo) == 0);
	seed_metrics_close(&mx);
	seed_serve_free(&s);
	seed_chan_close(&router);
	seed_chan_context_free(&ctx);
}

static void t_loop(void)
{
	char *dir = strdup(tmpdir_new()), path[4200];
	snprintf(path, sizeof path, "%s/m.jsonl", dir);
	struct heard h = {0};
	run_loop(path, &h);
	CHECK_MSG(h.nlines == 4, "%d lines said", h.nlines);
	CHECK_MSG(strncmp(h.lines[0], "time: wait ", 11) == 0, "%s", h.lines[0]);
	CHECK_MSG(strstr(h.lines[1], " 0 steps, 0 unrolls,") != NULL && strncmp(h.lines[1], "done", 4) != 0,
	          "%s", h.lines[1]);
	CHECK_MSG(strncmp(h.lines[2], "done: time: wait ", 17) == 0, "%s", h.lines[2]);
	CHECK_MSG(strncmp(h.lines[3], "done: ", 6) == 0 && strstr(h.lines[3], " env steps/s, ") != NULL, "%s",
	          h.lines[3]);
	CHECK_MSG(h.nwarnings == 0, "%d warnings: %s", h.nwarnings, h.warnings[0]);
	CHECK_MSG(count_lines(path) == 2, "%d metrics lines", count_lines(path));
	tmpdir_remove(dir);
	free(dir);

	/* A metrics file that cannot be written: warned about, under the
	 * name given, and the loop goes on to its end. */
	struct heard full = {0};
	run_loop("/dev/full", &full);
	CHECK_MSG(full.nlines == 4, "%d lines said", full.nlines);
	CHECK_MSG(full.nwarnings == 2, "%d warnings", full.nwarnings);
	CHECK_MSG(strncmp(full.warnings[0], "the metrics file: ", 18) == 0, "%s", full.warnings[0]);
}

int main(void)
{
	TAP_RUN(t_report);
	TAP_RUN(t_metrics);
	TAP_RUN(t_loop);
	return tap_done();
}
