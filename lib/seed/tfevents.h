/* seed/tfevents.h: TensorBoard event files, written without TensorFlow.
 *
 * An event file is a sequence of TFRecords, each holding one serialized
 * Event protocol buffer (tensorflow/core/util/event.proto):
 *
 *   record = uint64 length (little endian)
 *            uint32 masked CRC-32C of those 8 length bytes
 *            length bytes of data (the Event)
 *            uint32 masked CRC-32C of the data
 *   masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8   (mod 2^32)
 *
 *   Event   {double wall_time = 1; int64 step = 2; string file_version = 3;
 *            Summary summary = 5;}
 *   Summary {repeated Value value = 1;}
 *   Value   {string tag = 1; float simple_value = 2;}
 *
 * The first record of a file is an Event with file_version "brain.Event:2"
 * and no step; every later one carries a step and a Summary of scalars.
 * TensorBoard (`tensorboard --logdir DIR`) reads every file of a directory
 * whose name contains "tfevents", in name order, as one run.
 *
 * Each record goes to the file in one write(2) on an O_APPEND descriptor,
 * as seed/metrics.h does for lines: a reader polling the file while
 * training runs never sees half a record unless the disk fills, and then
 * TensorBoard's reader keeps the records before it.  Records are not
 * buffered (nothing to flush) nor synced to disk.
 *
 * Threads: one seed_tfevents must not be written from two threads at once
 * (it reuses one encoding buffer); separate writers are independent.
 */
#ifndef SEED_TFEVENTS_H
#define SEED_TFEVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct json_t json_t;
typedef struct seed_tfevents seed_tfevents;

/* Create a new event file in the existing directory dir, named
 * "events.out.tfevents.<10-digit seconds>.<hostname>" (TensorFlow's
 * pattern; seconds = floor(wall_time)), with ".1", ".2", ... appended when
 * that name is taken (a second writer within the same second never
 * appends to another's file), and write its file_version record with
 * wall_time.  wall_time is seconds since the Unix epoch (the caller's
 * clock: no hidden time source).  Negative errno, with a message naming the
 * file, if it cannot be created or written (a half-made file is removed). */
int seed_tfevents_open(const char *dir, double wall_time, seed_tfevents **out, seed_err *err);

/* The file's path (owned by t, valid until close). */
const char *seed_tfevents_path(const seed_tfevents *t);

/* A scalar: tag (borrowed) and its value. */
typedef struct seed_tfevents_scalar {
	const char *tag;
	float value;
} seed_tfevents_scalar;

/* Append one Event at step and wall_time holding the n scalars v[0..n)
 * (NaN and infinities are written as they are: TensorBoard shows them).
 * Negative errno, with a message naming the file, if the write fails. */
int seed_tfevents_write(seed_tfevents *t, int64_t step, double wall_time, const seed_tfevents_scalar *v,
                        size_t n, seed_err *err);

/* Append a metrics line (seed/metrics.h) as one Event: obj's member
 * step_key (an integer, or a whole number that fits int64) is the step,
 * and every other member that is a JSON number becomes a scalar tagged
 * with its key, in obj's order, rounded to float (TensorBoard's
 * simple_value); null, strings, booleans, arrays and objects are left out.
 * -EINVAL (nothing written) if obj is not an object or its step_key is
 * missing or not such a number; else as seed_tfevents_write. */
int seed_tfevents_write_json(seed_tfevents *t, const json_t *obj, const char *step_key, double wall_time,
                             seed_err *err);

/* Close (NULL is fine) and set *t to NULL. */
void seed_tfevents_close(seed_tfevents **t);

/* CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, initial value and
 * final xor 0xFFFFFFFF) of data[0..n), as RFC 3720 defines it;
 * "123456789" gives 0xE3069283. */
uint32_t seed_tfevents_crc32c(const void *data, size_t n);

/* TFRecord's masking of a CRC (the formula above).  TensorFlow masks every
 * CRC it stores, since the CRC of data that embeds unmasked CRCs is weak. */
uint32_t seed_tfevents_mask(uint32_t crc);

#ifdef __cplusplus
}
#endif
#endif
