/* seed/timing.h: where a program's time goes, and which program holds a run
 * back.
 *
 * Every program splits its wall time into phases named from one vocabulary
 * (seed_phase), so that "wait" or "forward" mean the same in seed-actor,
 * seed-infer and seed-learn: a program adds the seconds each phase took to
 * an array of totals (double[SEED_PHASE_N]), reading the clock once per
 * phase boundary (seed_now_s of seed/clock.h, the monotonic clock through
 * the vDSO: some 20 ns a read), and reports the fractions of wall time between two
 * readings of the totals (seed_timing_fractions) in its statistics lines
 * (seed_timing_format) and its metrics lines (seed_timing_json: a field
 * "frac_NAME" per phase and "interval", the seconds they cover).  What no
 * phase names (bookkeeping, printing) is the remainder: the fractions sum
 * to 1 at most.
 *
 * A run's split (seed_timing_split) is the mean of the metrics lines of one
 * program, or of several (all the actors), weighted by their intervals
 * (seed_timing_read); seed_bottleneck_judge takes the actors', the
 * server's and the learner's and says, in words, which program held the
 * others back and what would help.
 *
 * Threads: nothing here keeps state; a split belongs to its caller.
 */
#ifndef SEED_TIMING_H
#define SEED_TIMING_H

#include <stddef.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct json_t json_t;

/* The phases, in the order lines print them.  A program uses some. */
typedef enum seed_phase {
	SEED_PHASE_WAIT,       /* blocked receiving: actions, requests, unrolls */
	SEED_PHASE_TAKE,       /* decoding frames and taking them in (batch, parameters) */
	SEED_PHASE_STEP,       /* stepping environments */
	SEED_PHASE_FORWARD,    /* forward passes (with the action choice, the loss) */
	SEED_PHASE_BACKWARD,   /* backward passes */
	SEED_PHASE_OPTIM,      /* gradient clipping and the optimizer step */
	SEED_PHASE_ENCODE,     /* encoding frames: requests, answers, unrolls */
	SEED_PHASE_SEND,       /* sending them, when the socket takes them at once */
	SEED_PHASE_BLOCKED,    /* a send that waited: the consumer's queue was full (backpressure) */
	SEED_PHASE_PUBLISH,    /* encoding and publishing parameters (and priorities) */
	SEED_PHASE_CHECKPOINT, /* writing checkpoints and metrics */
	SEED_PHASE_N
} seed_phase;

/* A set of phases: bit p for phase p. */
#define SEED_PHASE_BIT(p) (1u << (p))

/* "wait", "take", "step", "forward", "backward", "optim", "encode",
 * "send", "blocked", "publish", "checkpoint"; NULL outside the enum. */
const char *seed_phase_name(seed_phase p);

/* The fractions of dt seconds of wall time spent in each phase between two
 * readings of the totals, from (earlier) and to (later), each
 * SEED_PHASE_N: frac[p] = (to[p] - from[p]) / dt, clamped to [0, 1]; all
 * zero when dt <= 0. */
void seed_timing_fractions(const double *from, const double *to, double dt, double *frac);

/* The phases of mask as "wait 62%, forward 20%, encode 3%" into buf (n
 * bytes, always terminated; NULL when n is 0).  Returns what snprintf
 * returns: the length of the whole line, whatever fitted. */
int seed_timing_format(const double *frac, unsigned mask, char *buf, size_t n);

/* Set "frac_NAME" (the fraction, in [0, 1]) for every phase of mask and
 * "interval" (dt, the seconds they cover) in object o.  Allocation
 * failure aborts. */
void seed_timing_json(json_t *o, const double *frac, unsigned mask, double dt);

/* One program's split over a run: the wall time its lines cover and the
 * fraction of it per phase.  A phase the program does not have stays 0. */
typedef struct seed_timing_split {
	double seconds; /* 0: no figures */
	double frac[SEED_PHASE_N];
} seed_timing_split;

/* Add the lines of metrics file path (JSON lines, seed_timing_json's
 * fields) into s: s becomes the mean of what it held and every line that
 * has "interval" > 0, weighted by seconds.  A missing phase counts as 0, a
 * line without "interval" is skipped (a learner's line written before this
 * module, or another kind).  Errors: -ENOENT and the like when path cannot
 * be read; -EINVAL for a line that is not a JSON object, or a fraction
 * outside [0, 1] (the message names path and line).  On error s holds the
 * lines before the bad one. */
int seed_timing_read(const char *path, seed_timing_split *s, seed_err *err);

/* Which program held the run back. */
typedef enum seed_bottleneck {
	SEED_BOTTLENECK_UNKNOWN,   /* a program's figures are missing */
	SEED_BOTTLENECK_NONE,      /* no program held the others back */
	SEED_BOTTLENECK_ACTORS,    /* the learner waited for data the actors make */
	SEED_BOTTLENECK_INFERENCE, /* the actors waited for a busy server */
	SEED_BOTTLENECK_LEARNER,   /* the learner was busy, or pushed back on the server */
	SEED_BOTTLENECK_ROUNDTRIP, /* actors and server waited for each other */
} seed_bottleneck;

/* "unknown", "none", "actors", "inference", "learner", "round-trip". */
const char *seed_bottleneck_name(seed_bottleneck b);

/* The thresholds of the judgement: a program is busy when it waits less
 * than 1 - SEED_BOTTLENECK_BUSY of its time, waits when it waits
 * SEED_BOTTLENECK_WAIT of it or more; the server is pushed back when it
 * blocks SEED_BOTTLENECK_BLOCKED of its time or more. */
#define SEED_BOTTLENECK_BUSY 0.8
#define SEED_BOTTLENECK_WAIT 0.5
#define SEED_BOTTLENECK_BLOCKED 0.3

/* Judge a run from the actors' split (all of them), the inference
 * server's and the learner's, and write one sentence saying what was
 * measured, which program is the bottleneck and what would help into buf
 * (n bytes, always terminated; no newline, no tab).  The first rule that
 * holds decides, with busy = 1 - wait (the server's: 1 - wait - blocked):
 *   unknown    a split with no seconds;
 *   learner    the learner busy, or the server blocked on its queue;
 *   inference  the server busy and the actors waiting;
 *   actors     the learner waiting and the actors not;
 *   round-trip the actors and the server both waiting;
 *   inference  the actors waiting (the server neither waits nor blocks);
 *   none       otherwise. */
seed_bottleneck seed_bottleneck_judge(const seed_timing_split *actors, const seed_timing_split *infer,
                                      const seed_timing_split *learner, char *buf, size_t n);

/* The judgement over a seed-train run directory's metrics files (its
 * names: actor-*.metrics.jsonl, infer.metrics.jsonl, metrics.jsonl), the
 * sentence into buf (n bytes) and the bottleneck into *out.  A file missing
 * is no figures; one that cannot be read is an error, naming it. */
int seed_bottleneck_of_run(const char *dir, seed_bottleneck *out, char *buf, size_t n, seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
