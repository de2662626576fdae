/* timing.c: phase fractions, their lines, a run's split read back from
 * metrics files, and the judgement of the bottleneck (seed/timing.h).
 *
 * Invariants: fractions are in [0, 1]; a split's seconds are the sum of the
 * intervals it averaged, and its fractions their weighted mean, so adding
 * lines in any order gives the same split.
 */
#include "seed/timing.h"

#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const phase_names[SEED_PHASE_N] = {
    [SEED_PHASE_WAIT] = "wait",
    [SEED_PHASE_TAKE] = "take",
    [SEED_PHASE_STEP] = "step",
    [SEED_PHASE_FORWARD] = "forward",
    [SEED_PHASE_BACKWARD] = "backward",
    [SEED_PHASE_OPTIM] = "optim",
    [SEED_PHASE_ENCODE] = "encode",
    [SEED_PHASE_SEND] = "send",
    [SEED_PHASE_BLOCKED] = "blocked",
    [SEED_PHASE_PUBLISH] = "publish",
    [SEED_PHASE_CHECKPOINT] = "checkpoint",
};

const char *seed_phase_name(seed_phase p)
{
	return (unsigned)p < SEED_PHASE_N ? phase_names[p] : NULL;
}

void seed_timing_fractions(const double *from, const double *to, double dt, double *frac)
{
	for (int p = 0; p < SEED_PHASE_N; p++) {
		double f = dt > 0 ? (to[p] - from[p]) / dt : 0;
		frac[p] = f > 0 ? (f < 1 ? f : 1) : 0; /* NaN becomes 0 too */
	}
}

int seed_timing_format(const double *frac, unsigned mask, char *buf, size_t n)
{
	int at = 0;
	if (n)
		buf[0] = '\0';
	for (int p = 0; p < SEED_PHASE_N; p++) {
		if (!(mask & SEED_PHASE_BIT(p)))
			continue;
		/* Past the end, only counting (no pointer beyond the buffer). */
		bool room = (size_t)at < n;
		int k = snprintf(room ? buf + at : NULL, room ? n - (size_t)at : 0, "%s%s %.0f%%",
		                 at ? ", " : "", phase_names[p], 100 * frac[p]);
		if (k < 0)
			return k;
		at += k;
	}
	return at;
}

void seed_timing_json(json_t *o, const double *frac, unsigned mask, double dt)
{
	char key[32];
	for (int p = 0; p < SEED_PHASE_N; p++) {
		if (!(mask & SEED_PHASE_BIT(p)))
			continue;
		snprintf(key, sizeof key, "frac_%s", phase_names[p]);
		json_object_set_new(o, key, json_real(frac[p]));
	}
	json_object_set_new(o, "interval", json_real(dt));
}

/* Add one line's object into s.  Returns 0, or -EINVAL with the key of a
 * fraction out of range in *bad. */
static int add_line(seed_timing_split *s, json_t *o, const char **bad)
{
	json_t *iv = json_object_get(o, "interval");
	double dt = json_is_number(iv) ? json_number_value(iv) : 0;
	if (!(dt > 0) || !isfinite(dt))
		return 0;
	double f[SEED_PHASE_N];
	char key[32];
	for (int p = 0; p < SEED_PHASE_N; p++) {
		snprintf(key, sizeof key, "frac_%s", phase_names[p]);
		json_t *v = json_object_get(o, key);
		f[p] = json_is_number(v) ? json_number_value(v) : 0;
		if (v && (!json_is_number(v) || !(f[p] >= 0 && f[p] <= 1))) {
			*bad = phase_names[p];
			return -EINVAL;
		}
	}
	double total = s->seconds + dt;
	for (int p = 0; p < SEED_PHASE_N; p++)
		s->frac[p] = (s->frac[p] * s->seconds + f[p] * dt) / total;
	s->seconds = total;
	return 0;
}

int seed_timing_read(const char *path, seed_timing_split *s, seed_err *err)
{
	FILE *in = fopen(path, "r");
	if (!in) {
		int e = errno;
		return seed_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	int rc = 0;
	while (getline(&line, &cap, in) > 0) {
		lineno++;
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		if (!json_is_object(o)) {
			rc = seed_err_set(err, -EINVAL, "%s:%ld: not a JSON object%s%s", path, lineno,
			                  o ? "" : ": ", o ? "" : je.text);
			json_decref(o);
			break;
		}
		const char *bad = NULL;
		rc = add_line(s, o, &bad);
		json_decref(o);
		if (rc) {
			seed_err_set(err, rc, "%s:%ld: frac_%s is not a number in [0, 1]", path, lineno, bad);
			break;
		}
	}
	if (rc == 0 && ferror(in))
		rc = seed_err_set(err, -EIO, "%s: %s", path, strerror(EIO));
	free(line);
	fclose(in);
	return rc;
}

const char *seed_bottleneck_name(seed_bottleneck b)
{
	switch (b) {
	case SEED_BOTTLENECK_NONE:
		return "none";
	case SEED_BOTTLENECK_ACTORS:
		return "actors";
	case SEED_BOTTLENECK_INFERENCE:
		return "inference";
	case SEED_BOTTLENECK_LEARNER:
		return "learner";
	case SEED_BOTTLENECK_ROUNDTRIP:
		return "round-trip";
	case SEED_BOTTLENECK_UNKNOWN:
		break;
	}
	return "unknown";
}

/* A fraction as a whole percentage. */
static double pc(double f)
{
	return round(100 * f);
}

/* The largest of the working phases of s (not wait, not blocked). */
static seed_phase busiest(const seed_timing_split *s)
{
	seed_phase best = SEED_PHASE_TAKE;
	for (int p = 0; p < SEED_PHASE_N; p++)
		if (p != SEED_PHASE_WAIT && p != SEED_PHASE_BLOCKED && s->frac[p] > s->frac[best])
			best = (seed_phase)p;
	return best;
}

seed_bottleneck seed_bottleneck_judge(const seed_timing_split *actors, const seed_timing_split *infer,
                                      const seed_timing_split *learner, char *buf, size_t n)
{
	const seed_timing_split *all[3] = {actors, infer, learner};
	static const char *const progs[3] = {"seed-actor", "seed-infer", "seed-learn"};
	char missing[48] = "";
	for (int i = 0; i < 3; i++)
		if (!(all[i]->seconds > 0)) {
			if (missing[0])
				strcat(missing, ", ");
			strcat(missing, progs[i]);
		}
	if (missing[0]) {
		snprintf(buf, n, "no timing figures from %s: the bottleneck cannot be told", missing);
		return SEED_BOTTLENECK_UNKNOWN;
	}
	double aw = actors->frac[SEED_PHASE_WAIT], iw = infer->frac[SEED_PHASE_WAIT];
	double ib = infer->frac[SEED_PHASE_BLOCKED], lw = learner->frac[SEED_PHASE_WAIT];
	double ibusy = 1 - iw - ib, lbusy = 1 - lw, abusy = 1 - aw;
	if (ibusy < 0)
		ibusy = 0;
	seed_phase lp = busiest(learner), ip = busiest(infer), ap = busiest(actors);
	if (lbusy >= SEED_BOTTLENECK_BUSY || ib >= SEED_BOTTLENECK_BLOCKED) {
		const char *more = "a larger batch_size (fewer, larger updates), a smaller model or a core "
		                   "of its own for seed-learn would help; more actors would not";
		if (ib >= SEED_BOTTLENECK_BLOCKED)
			snprintf(
			    buf, n,
			    "the server was blocked %.0f%% of the time on the full queue towards the learner "
			    "(backpressure) and the learner was busy %.0f%% of its time (%s %.0f%%): "
			    "the learner is the bottleneck: %s",
			    pc(ib), pc(lbusy), phase_names[lp], pc(learner->frac[lp]), more);
		else
			snprintf(buf, n,
			         "the learner was busy %.0f%% of the time (%s %.0f%%): the learner is "
			         "the bottleneck: %s",
			         pc(lbusy), phase_names[lp], pc(learner->frac[lp]), more);
		return SEED_BOTTLENECK_LEARNER;
	}
	if (ibusy >= SEED_BOTTLENECK_BUSY && aw >= SEED_BOTTLENECK_WAIT) {
		snprintf(buf, n,
		         "the actors waited %.0f%% of the time for actions and the server was busy %.0f%% of "
		         "its time (%s %.0f%%): the inference server is the bottleneck: a larger "
		         "--max-batch (infer.max_batch) or a faster model would help",
		         pc(aw), pc(ibusy), phase_names[ip], pc(infer->frac[ip]));
		return SEED_BOTTLENECK_INFERENCE;
	}
	if (lw >= SEED_BOTTLENECK_WAIT && aw < SEED_BOTTLENECK_WAIT) {
		snprintf(buf, n,
		         "the learner waited %.0f%% of the time for unrolls while the actors were busy "
		         "%.0f%% of theirs (%s %.0f%%): the actors are the bottleneck: more actors or "
		         "environments (--actors, envs_per_actor) would help",
		         pc(lw), pc(abusy), phase_names[ap], pc(actors->frac[ap]));
		return SEED_BOTTLENECK_ACTORS;
	}
	if (aw >= SEED_BOTTLENECK_WAIT && iw >= SEED_BOTTLENECK_WAIT) {
		snprintf(buf, n,
		         "the actors waited %.0f%% of the time for actions and the server %.0f%% of its "
		         "time for requests: the round trip between them is the bottleneck: more "
		         "environments per actor (envs_per_actor) would fill the batches, a shorter "
		         "--timeout-us (infer.timeout_us) would answer them sooner",
		         pc(aw), pc(iw));
		return SEED_BOTTLENECK_ROUNDTRIP;
	}
	if (aw >= SEED_BOTTLENECK_WAIT) {
		snprintf(buf, n,
		         "the actors waited %.0f%% of the time for actions while the server was busy %.0f%% "
		         "of its time (%s %.0f%%): the inference server is the bottleneck: a larger "
		         "--max-batch (infer.max_batch) or a faster model would help",
		         pc(aw), pc(ibusy), phase_names[ip], pc(infer->frac[ip]));
		return SEED_BOTTLENECK_INFERENCE;
	}
	snprintf(buf, n,
	         "no program held the others back: the learner waited %.0f%% of the time for unrolls, "
	         "the server %.0f%% for requests (and blocked %.0f%%), the actors %.0f%% for actions",
	         pc(lw), pc(iw), pc(ib), pc(aw));
	return SEED_BOTTLENECK_NONE;
}

int seed_bottleneck_of_run(const char *dir, seed_bottleneck *out, char *buf, size_t n, seed_err *err)
{
	seed_timing_split sp[3] = {{0}};
	char path[4096];
	snprintf(path, sizeof path, "%s/actor-*.metrics.jsonl", dir);
	glob_t g;
	int grc = glob(path, 0, NULL, &g), rc = 0;
	if (grc != 0 && grc != GLOB_NOMATCH)
		return seed_err_set(err, -EIO, "cannot list %s", path);
	for (size_t i = 0; grc == 0 && rc == 0 && i < g.gl_pathc; i++)
		rc = seed_timing_read(g.gl_pathv[i], &sp[0], err);
	if (grc == 0)
		globfree(&g);
	const char *names[2] = {"infer.metrics.jsonl", "metrics.jsonl"};
	for (int i = 0; rc == 0 && i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		rc = seed_timing_read(path, &sp[1 + i], err);
		if (rc == -ENOENT)
			rc = 0;
	}
	if (rc)
		return rc;
	*out = seed_bottleneck_judge(&sp[0], &sp[1], &sp[2], buf, n);
	return 0;
}
