/* serve_loop.c: what a program running the service reports and its loop
 * (seed/serve.h): the statistics lines for a person, the metrics lines
 * (JSON) and the loop that makes both on their intervals around
 * seed_serve_turn.
 *
 * The rates and where the time went cover the interval between two
 * readings of the statistics; the counts are those since the start.  The
 * time split comes first, so that the counters stay the last line.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "seed/clock.h"
#include "seed/metrics.h"
#include "serve_internal.h"

/* Append to buf (n bytes) at *at as snprintf would, counting past the end
 * without writing there. */
static void append(char *buf, size_t n, int *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t n, int *at, const char *fmt, ...)
{
	bool room = *at >= 0 && (size_t)*at < n;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(room ? buf + *at : NULL, room ? n - (size_t)*at : 0, fmt, ap);
	va_end(ap);
	if (k > 0 && *at >= 0)
		*at += k;
}

int seed_serve_report(const seed_serve_stats *st, const seed_serve_stats *last, double dt, bool final,
                      char *buf, size_t n)
{
	int at = 0;
	if (n)
		buf[0] = '\0';
	if (dt <= 0)
		return 0;
	const char *done = final ? "done: " : "";
	double frac[SEED_PHASE_N];
	char split[256];
	seed_timing_fractions(last->time, st->time, dt, frac);
	seed_timing_format(frac, SEED_SERVE_PHASES, split, sizeof split);
	append(buf, n, &at, "%stime: %s (of %.1f s)\n", done, split, dt);
	if (st->generations_taken > 0) {
		/* Population mode (a learner's generation frames). */
		char gen[48] = "none";
		if (st->generation >= 0)
			snprintf(gen, sizeof gen, "%" PRId64 " (%d members)", st->generation, st->members);
		append(buf, n, &at,
		       "%sgeneration %s, %.0f episodes/s, %" PRId64 " generations played, %" PRId64
		       " repeats, %" PRId64 " bad generation frames, %" PRId64
		       " restarts, %.0f%% of rows held\n",
		       done, gen, (double)(st->episodes - last->episodes) / dt, st->generations,
		       st->generation_repeats, st->bad_generations, st->restarts,
		       st->steps > last->steps
		           ? 100.0 * (double)(st->held - last->held) / (double)(st->steps - last->steps)
		           : 0.0);
	}
	int64_t db = st->batches - last->batches;
	append(buf, n, &at,
	       "%s%.0f env steps/s, %.1f rows/batch, %.2f MB/s of unrolls, %" PRId64 " steps, %" PRId64
	       " unrolls, %" PRId64 " episodes, %" PRId64 " pushes failed, %" PRId64 " bad frames, %" PRId64
	       " resends, %" PRId64 " gaps, %" PRId64 " halves, %" PRId64 " evicted, %" PRId64 " expired\n",
	       done, (double)(st->steps - last->steps) / dt,
	       db ? (double)(st->rows - last->rows) / (double)db : 0.0,
	       (double)(st->unroll_bytes - last->unroll_bytes) / dt / 1e6, st->steps, st->unrolls,
	       st->episodes, st->push_failed, st->bad, st->resends, st->gaps, st->halves, st->evicted,
	       st->expired);
	if (final && st->unrolls_unmodeled)
		append(buf, n, &at,
		       "%" PRId64
		       " unrolls were not pushed: played at random before the first parameters came\n",
		       st->unrolls_unmodeled);
	return at;
}

json_t *seed_serve_metrics(const seed_serve_stats *st, const seed_serve_stats *last, double dt,
                           double elapsed)
{
	if (dt <= 0)
		return NULL;
	int64_t db = st->batches - last->batches;
	json_t *o = SEED_METRICS_OBJ(
	    {"time", elapsed}, {"steps", st->steps}, {"steps_per_s", (double)(st->steps - last->steps) / dt},
	    {"rows_per_batch", db ? (double)(st->rows - last->rows) / (double)db : 0.0},
	    {"requests", st->requests}, {"batches", st->batches}, {"unrolls", st->unrolls},
	    {"unroll_frames", st->unroll_frames}, {"unroll_bytes", st->unroll_bytes},
	    {"episodes", st->episodes}, {"push_failed", st->push_failed}, {"bad_frames", st->bad},
	    {"resends", st->resends}, {"gaps", st->gaps}, {"halves", st->halves}, {"evicted", st->evicted},
	    {"expired", st->expired});
	if (st->generations_taken > 0) {
		json_object_set_new(o, "generation", json_integer(st->generation));
		json_object_set_new(o, "members", json_integer(st->members));
		json_object_set_new(o, "episodes_per_s",
		                    json_real((double)(st->episodes - last->episodes) / dt));
		json_object_set_new(o, "generations", json_integer(st->generations));
		json_object_set_new(o, "bad_generations", json_integer(st->bad_generations));
		json_object_set_new(o, "restarts", json_integer(st->restarts));
		json_object_set_new(o, "held", json_integer(st->held));
	}
	double frac[SEED_PHASE_N];
	seed_timing_fractions(last->time, st->time, dt, frac);
	seed_timing_json(o, frac, SEED_SERVE_PHASES, dt);
	return o;
}

/* Say the statistics lines since last (dt seconds), one call a line. */
static void say_report(const seed_serve_loop_opts *o, const seed_serve_stats *st,
                       const seed_serve_stats *last, double dt, bool final)
{
	char buf[2048];
	seed_serve_report(st, last, dt, final, buf, sizeof buf);
	for (char *line = buf, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		o->say(o->ctx, line);
	}
}

/* Write a metrics line since last (dt seconds); a write that fails is
 * warned about and the loop goes on. */
static void write_metrics(seed_serve *s, const seed_serve_loop_opts *o, const seed_serve_stats *last,
                          double dt, double elapsed)
{
	json_t *line = seed_serve_metrics(&s->st, last, dt, elapsed);
	if (!line)
		return;
	seed_err err;
	if (seed_metrics_write(o->metrics, line, &err))
		serve_warn(s, "%s: %s", o->metrics_name ? o->metrics_name : "metrics", err.msg);
	json_decref(line);
}

int seed_serve_loop(seed_serve *s, const seed_serve_loop_opts *o)
{
	double start = seed_now_s(), last_report = start, last_metrics = start;
	seed_serve_stats last = {0}, mlast = {0};
	int wait_ms = o->wait_ms > 0 ? o->wait_ms : 100;
	while (!(o->stop && *o->stop)) {
		/* A push that failed is counted and warned about (push_failed);
		 * the loop serves on. */
		seed_serve_turn(s, wait_ms);
		double now = seed_now_s();
		if (o->say && o->stats_interval > 0 && now - last_report >= o->stats_interval) {
			say_report(o, &s->st, &last, now - last_report, false);
			last = s->st;
			last_report = now;
		}
		if (o->metrics && o->metrics_interval > 0 && now - last_metrics >= o->metrics_interval) {
			write_metrics(s, o, &mlast, now - last_metrics, now - start);
			mlast = s->st;
			last_metrics = now;
		}
	}
	/* The episodes that ended after each half's last unroll, before the
	 * last counts are reported. */
	int rc = seed_serve_flush(s);
	if (rc)
		serve_warn(s, "the episodes still gathered at exit were not all pushed: %s",
		           seed_strerror(rc));
	double end = seed_now_s();
	if (o->metrics)
		write_metrics(s, o, &mlast, end - last_metrics, end - start);
	if (o->say) {
		seed_serve_stats zero = {0};
		say_report(o, &s->st, &zero, end - start, true);
	}
	return rc;
}
