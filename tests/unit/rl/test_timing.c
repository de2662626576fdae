/* tests/unit/rl/test_timing.c: phase fractions, their lines, a run's split read
 * back, and the judgement of the bottleneck.
 *
 * Every expected value is worked by hand from the inputs written here: the
 * fractions and weighted means in the comments beside them, the
 * judgement's sentences from the rules of seed/timing.h (one hand-made set
 * of splits per rule, and the borders of its thresholds).
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <string.h>

#include "seed/clock.h"
#include "seed/timing.h"
#include "tap.h"
#include "tmpdir.h"

static const char *dir;

static void t_names(void)
{
	CHECK(strcmp(seed_phase_name(SEED_PHASE_WAIT), "wait") == 0);
	CHECK(strcmp(seed_phase_name(SEED_PHASE_BLOCKED), "blocked") == 0);
	CHECK(strcmp(seed_phase_name(SEED_PHASE_CHECKPOINT), "checkpoint") == 0);
	CHECK(seed_phase_name(SEED_PHASE_N) == NULL);
	for (int p = 0; p < SEED_PHASE_N; p++)
		CHECK(seed_phase_name((seed_phase)p) != NULL);
	CHECK(strcmp(seed_bottleneck_name(SEED_BOTTLENECK_ROUNDTRIP), "round-trip") == 0);
	CHECK(strcmp(seed_bottleneck_name(SEED_BOTTLENECK_INFERENCE), "inference") == 0);
	CHECK(strcmp(seed_bottleneck_name((seed_bottleneck)99), "unknown") == 0);
}

static void t_fractions(void)
{
	double from[SEED_PHASE_N] = {0}, to[SEED_PHASE_N] = {0}, f[SEED_PHASE_N];
	from[SEED_PHASE_WAIT] = 1.0, to[SEED_PHASE_WAIT] = 1.5;       /* 0.5 s of 2: 0.25 */
	from[SEED_PHASE_FORWARD] = 2.0, to[SEED_PHASE_FORWARD] = 3.5; /* 1.5 s of 2: 0.75 */
	to[SEED_PHASE_STEP] = 5;                                      /* 5 s of 2: clamped to 1 */
	from[SEED_PHASE_SEND] = 1, to[SEED_PHASE_SEND] = 0.5;         /* negative: clamped to 0 */
	seed_timing_fractions(from, to, 2.0, f);
	CHECK_NEAR(f[SEED_PHASE_WAIT], 0.25, 1e-15);
	CHECK_NEAR(f[SEED_PHASE_FORWARD], 0.75, 1e-15);
	CHECK(f[SEED_PHASE_STEP] == 1);
	CHECK(f[SEED_PHASE_SEND] == 0);
	CHECK(f[SEED_PHASE_OPTIM] == 0);
	seed_timing_fractions(from, to, 0, f);
	for (int p = 0; p < SEED_PHASE_N; p++)
		CHECK(f[p] == 0);
	double t0 = seed_now_s(), t1 = seed_now_s();
	CHECK(t0 > 0 && t1 >= t0);
}

static void t_format_json(void)
{
	double f[SEED_PHASE_N] = {0};
	f[SEED_PHASE_WAIT] = 0.62, f[SEED_PHASE_FORWARD] = 0.2, f[SEED_PHASE_ENCODE] = 0.034;
	char buf[128];
	unsigned mask = SEED_PHASE_BIT(SEED_PHASE_WAIT) | SEED_PHASE_BIT(SEED_PHASE_FORWARD) |
	                SEED_PHASE_BIT(SEED_PHASE_ENCODE) | SEED_PHASE_BIT(SEED_PHASE_BLOCKED);
	CHECK(seed_timing_format(f, mask, buf, sizeof buf) == 44);
	CHECK_MSG(strcmp(buf, "wait 62%, forward 20%, encode 3%, blocked 0%") == 0, "%s", buf);
	char small[12];
	CHECK(seed_timing_format(f, mask, small, sizeof small) == 44);
	CHECK(strcmp(small, "wait 62%, f") == 0);
	CHECK(seed_timing_format(f, mask, NULL, 0) == 44); /* counting only */
	json_t *o = json_object();
	seed_timing_json(o, f, mask, 2.5);
	CHECK(json_object_size(o) == 5);
	CHECK(json_real_value(json_object_get(o, "frac_wait")) == 0.62);
	CHECK(json_real_value(json_object_get(o, "frac_blocked")) == 0);
	CHECK(json_real_value(json_object_get(o, "interval")) == 2.5);
	CHECK(json_object_get(o, "frac_step") == NULL);
	json_decref(o);
}

static const char *write_file(const char *name, const char *text)
{
	const char *path = pathf(dir, name);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static void t_read(void)
{
	/* wait: (2 * 0.5 + 6 * 0.9) / 8 = 0.8; forward: (2 * 0.25 + 0) / 8 =
	 * 0.0625; the line without an interval and the blank line count for
	 * nothing.  Then another file of 8 s at wait 0.4: (8 * 0.8 + 8 * 0.4)
	 * / 16 = 0.6. */
	const char *a = write_file("a.jsonl", "{\"interval\":2,\"frac_wait\":0.5,\"frac_forward\":0.25}\n"
	                                      "{\"frames\":10,\"fps\":3}\n"
	                                      "\n"
	                                      "{\"interval\":6,\"frac_wait\":0.9,\"steps\":5}\n");
	const char *b = write_file("b.jsonl", "{\"interval\":8,\"frac_wait\":0.4}");
	seed_timing_split s = {0};
	seed_err err;
	CHECK(seed_timing_read(a, &s, &err) == 0);
	CHECK_NEAR(s.seconds, 8, 1e-12);
	CHECK_NEAR(s.frac[SEED_PHASE_WAIT], 0.8, 1e-12);
	CHECK_NEAR(s.frac[SEED_PHASE_FORWARD], 0.0625, 1e-12);
	CHECK(seed_timing_read(b, &s, &err) == 0);
	CHECK_NEAR(s.seconds, 16, 1e-12);
	CHECK_NEAR(s.frac[SEED_PHASE_WAIT], 0.6, 1e-12);
	CHECK_NEAR(s.frac[SEED_PHASE_FORWARD], 0.03125, 1e-12);

	seed_timing_split z = {0};
	CHECK(seed_timing_read(pathf(dir, "missing.jsonl"), &z, &err) == -ENOENT);
	CHECK(strstr(err.msg, "missing.jsonl") != NULL);
	const char *c = write_file("c.jsonl", "{\"interval\":1,\"frac_wait\":0.5}\nnot json\n");
	CHECK(seed_timing_read(c, &z, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "c.jsonl:2: not a JSON object") != NULL, "%s", err.msg);
	CHECK(z.seconds == 1 && z.frac[SEED_PHASE_WAIT] == 0.5); /* the lines before it */
	const char *d = write_file("d.jsonl", "{\"interval\":1,\"frac_send\":1.5}\n");
	seed_timing_split y = {0};
	CHECK(seed_timing_read(d, &y, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "d.jsonl:1: frac_send is not a number in [0, 1]") != NULL, "%s", err.msg);
	CHECK(y.seconds == 0);
}

/* A split of 10 seconds with the phases given as (phase, fraction) pairs,
 * ended by -1. */
static seed_timing_split split(int p, ...)
{
	seed_timing_split s = {.seconds = 10};
	va_list ap;
	va_start(ap, p);
	while (p >= 0) {
		s.frac[p] = va_arg(ap, double);
		p = va_arg(ap, int);
	}
	va_end(ap);
	return s;
}

#define JUDGE(want, text)                                                                                    \
	do {                                                                                                 \
		char buf_[512];                                                                              \
		seed_bottleneck got_ = seed_bottleneck_judge(&act, &inf, &lrn, buf_, sizeof buf_);           \
		CHECK_MSG(got_ == (want), "%s, not %s", seed_bottleneck_name(got_), #want);                  \
		CHECK_MSG(strcmp(buf_, text) == 0, "%s", buf_);                                              \
		CHECK(!strchr(buf_, '\t') && !strchr(buf_, '\n'));                                           \
	} while (0)

static void t_judge(void)
{
	seed_timing_split act, inf, lrn, none = {0};

	/* unknown: the missing programs named */
	act = split(SEED_PHASE_WAIT, 0.1, -1), inf = none, lrn = none;
	JUDGE(SEED_BOTTLENECK_UNKNOWN,
	      "no timing figures from seed-infer, seed-learn: the bottleneck cannot be told");
	act = none, inf = split(SEED_PHASE_WAIT, 0.1, -1), lrn = split(SEED_PHASE_WAIT, 0.1, -1);
	JUDGE(SEED_BOTTLENECK_UNKNOWN, "no timing figures from seed-actor: the bottleneck cannot be told");

	/* learner, busy: waits 0.05, so busy 0.95; backward its largest */
	act = split(SEED_PHASE_WAIT, 0.7, SEED_PHASE_STEP, 0.2, -1);
	inf = split(SEED_PHASE_WAIT, 0.5, SEED_PHASE_BLOCKED, 0.1, SEED_PHASE_FORWARD, 0.3, -1);
	lrn = split(SEED_PHASE_WAIT, 0.05, SEED_PHASE_FORWARD, 0.3, SEED_PHASE_BACKWARD, 0.45,
	            SEED_PHASE_OPTIM, 0.1, -1);
	JUDGE(SEED_BOTTLENECK_LEARNER,
	      "the learner was busy 95% of the time (backward 45%): the learner is the bottleneck: a larger "
	      "batch_size (fewer, larger updates), a smaller model or a core of its own for seed-learn would "
	      "help; more actors would not");
	/* ... at the border: waits 0.2, busy 0.8 */
	lrn.frac[SEED_PHASE_WAIT] = 0.2;
	JUDGE(SEED_BOTTLENECK_LEARNER,
	      "the learner was busy 80% of the time (backward 45%): the learner is the bottleneck: a larger "
	      "batch_size (fewer, larger updates), a smaller model or a core of its own for seed-learn would "
	      "help; more actors would not");
	/* learner, through backpressure: the server blocked 0.4 though the
	 * learner waits 0.3 (r2d2's rate limiter holds inserts back) */
	inf.frac[SEED_PHASE_BLOCKED] = 0.4;
	lrn.frac[SEED_PHASE_WAIT] = 0.3;
	JUDGE(
	    SEED_BOTTLENECK_LEARNER,
	    "the server was blocked 40% of the time on the full queue towards the learner (backpressure) and "
	    "the learner was busy 70% of its time (backward 45%): the learner is the bottleneck: a larger "
	    "batch_size (fewer, larger updates), a smaller model or a core of its own for seed-learn would "
	    "help; more actors would not");

	/* inference: the server waits 0.1, blocks 0.05: busy 0.85; actors
	 * wait 0.7; the learner waits 0.6 (it starves too, but because of the
	 * server) */
	act = split(SEED_PHASE_WAIT, 0.7, SEED_PHASE_STEP, 0.25, -1);
	inf = split(SEED_PHASE_WAIT, 0.1, SEED_PHASE_BLOCKED, 0.05, SEED_PHASE_FORWARD, 0.8,
	            SEED_PHASE_ENCODE, 0.03, -1);
	lrn = split(SEED_PHASE_WAIT, 0.6, SEED_PHASE_BACKWARD, 0.2, -1);
	JUDGE(SEED_BOTTLENECK_INFERENCE,
	      "the actors waited 70% of the time for actions and the server was busy 85% of its time "
	      "(forward 80%): the inference server is the bottleneck: a larger --max-batch "
	      "(infer.max_batch) or a faster model would help");

	/* actors: the learner waits 0.6, the actors 0.1 (busy 0.9, stepping
	 * 0.75); the server waits too */
	act = split(SEED_PHASE_WAIT, 0.1, SEED_PHASE_STEP, 0.75, SEED_PHASE_ENCODE, 0.05, SEED_PHASE_SEND,
	            0.05, -1);
	inf = split(SEED_PHASE_WAIT, 0.7, SEED_PHASE_FORWARD, 0.2, -1);
	lrn = split(SEED_PHASE_WAIT, 0.6, SEED_PHASE_BACKWARD, 0.2, -1);
	JUDGE(SEED_BOTTLENECK_ACTORS,
	      "the learner waited 60% of the time for unrolls while the actors were busy 90% of theirs (step "
	      "75%): the actors are the bottleneck: more actors or environments (--actors, envs_per_actor) "
	      "would help");
	/* ... the actors just under the border of waiting (0.49) */
	act.frac[SEED_PHASE_WAIT] = 0.49;
	JUDGE(SEED_BOTTLENECK_ACTORS,
	      "the learner waited 60% of the time for unrolls while the actors were busy 51% of theirs (step "
	      "75%): the actors are the bottleneck: more actors or environments (--actors, envs_per_actor) "
	      "would help");

	/* round trip: actors wait 0.6 and the server 0.7, the learner too */
	act.frac[SEED_PHASE_WAIT] = 0.6;
	JUDGE(
	    SEED_BOTTLENECK_ROUNDTRIP,
	    "the actors waited 60% of the time for actions and the server 70% of its time for requests: the "
	    "round trip between them is the bottleneck: more environments per actor (envs_per_actor) would "
	    "fill the batches, a shorter --timeout-us (infer.timeout_us) would answer them sooner");

	/* inference, the weaker form: the actors wait 0.6, the server neither
	 * waits (0.3) nor is busy 0.8 (0.65) nor blocks (0.05) */
	inf = split(SEED_PHASE_WAIT, 0.3, SEED_PHASE_BLOCKED, 0.05, SEED_PHASE_FORWARD, 0.4,
	            SEED_PHASE_ENCODE, 0.2, -1);
	JUDGE(SEED_BOTTLENECK_INFERENCE,
	      "the actors waited 60% of the time for actions while the server was busy 65% of its time "
	      "(forward 40%): the inference server is the bottleneck: a larger --max-batch (infer.max_batch) "
	      "or a faster model would help");

	/* none: everyone waits a little, nobody much */
	act = split(SEED_PHASE_WAIT, 0.3, SEED_PHASE_STEP, 0.6, -1);
	inf = split(SEED_PHASE_WAIT, 0.4, SEED_PHASE_BLOCKED, 0.1, SEED_PHASE_FORWARD, 0.4, -1);
	lrn = split(SEED_PHASE_WAIT, 0.4, SEED_PHASE_BACKWARD, 0.3, -1);
	JUDGE(SEED_BOTTLENECK_NONE,
	      "no program held the others back: the learner waited 40% of the time for unrolls, the server "
	      "40% for requests (and blocked 10%), the actors 30% for actions");
}

int main(void)
{
	dir = tmpdir_new();
	TAP_RUN(t_names);
	TAP_RUN(t_fractions);
	TAP_RUN(t_format_json);
	TAP_RUN(t_read);
	TAP_RUN(t_judge);
	tmpdir_remove(dir);
	return tap_done();
}
