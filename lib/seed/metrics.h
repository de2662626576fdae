/* seed/metrics.h: metrics as JSON lines.
 *
 * One JSON object per line, appended to a file that tools (jq, pandas,
 * plotting scripts) read while training runs.  Each line goes to the file
 * in one write(2) on a descriptor opened with O_APPEND, so lines from
 * several writers (threads, processes) never interleave within a line and
 * a reader never sees half a line unless the disk fills.  Lines are not
 * buffered: once seed_metrics_write returns, the line is in the file (not
 * necessarily on disk: no fsync per line).
 *
 * Threads: one seed_metrics may be written from several threads at once.
 */
#ifndef SEED_METRICS_H
#define SEED_METRICS_H

#include <stddef.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct json_t json_t;
typedef struct seed_metrics seed_metrics;

/* Open path for appending (created with mode 0666 less the umask if
 * missing); "-" is standard output (as seed_metrics_from_fd(1)).  Negative
 * errno, with a message naming path, on failure. */
int seed_metrics_open(const char *path, seed_metrics **out, seed_err *err);

/* Write to an already open descriptor instead (e.g. 1 for standard
 * output); fd is not closed by seed_metrics_close. */
seed_metrics *seed_metrics_from_fd(int fd);

/* Close (NULL is fine) and set *m to NULL. */
void seed_metrics_close(seed_metrics **m);

/* Append obj (a JSON object; borrowed) as one compact line plus '\n'.
 * Numbers keep every digit (doubles round-trip).  -EINVAL if obj is not an
 * object, a negative errno (message naming the file) if the write fails. */
int seed_metrics_write(seed_metrics *m, const json_t *obj, seed_err *err);

/* A key and a number, for building a line. */
typedef struct seed_metric {
	const char *key;
	double value;
} seed_metric;

/* A new JSON object (free with json_decref) holding kv[0..n).  Whole
 * numbers of magnitude up to 2^53 become JSON integers ("step": 100, not
 * 100.0); values that are not finite become null, since JSON has no NaN or
 * infinity (a diverged loss shows up as null rather than losing the line).
 * A key given twice keeps the last value. */
json_t *seed_metrics_obj(const seed_metric *kv, size_t n);

/* seed_metrics_obj over a literal list:
 *   json_t *o = SEED_METRICS_OBJ({"step", step}, {"loss", loss});
 * Every value converts to double, so any arithmetic type is fine. */
#define SEED_METRICS_OBJ(...)                                                                                \
	seed_metrics_obj((const seed_metric[]){__VA_ARGS__},                                                 \
	                 sizeof((const seed_metric[]){__VA_ARGS__}) / sizeof(seed_metric))

#ifdef __cplusplus
}
#endif
#endif
