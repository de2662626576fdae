/* seed/frame.h: msgpack frames, the messages every Seed program exchanges.
 *
 * A frame is one msgpack map: {"type": str, "version": int, fields...}.  A
 * tensor field is a map {"dtype": str, "shape": [int...], "data": bin} whose
 * bin holds the little-endian elements, row-major.  One ZeroMQ message carries
 * one frame; a file of concatenated frames is a recorded stream.
 *
 * The fields of every frame type are checked on decode and before encode
 * against the type's schema (man seed-frames(7) is the reference):
 *
 *   step     actor -> infer  run actor seq env0 num_actions
 *                            obs[K,...] reward f32[K] terminated u8[K]
 *                            truncated u8[K] ep_return f32[K] ep_length i32[K]
 *                            (final_obs[K,...] when some env was truncated)
 *   action   infer -> actor  run actor seq env0 policy_version action i32[K]
 *   unroll   infer -> learn  run actor num_actions env i32[B] and, over
 *                            T+1 steps, obs[B,T+1,...] action i32[B,T+1]
 *                            reward f32 terminated u8 truncated u8
 *                            final_value f32 policy_version i32 [B,T+1]
 *                            logits f32[B,T+1,A]
 *   episode  infer -> learn  run actor env i32[N] return f32[N]
 *                            length i32[N] truncated u8[N]
 *   error    anyone          code message (frame: the type that failed)
 *
 * Fields not in the schema are kept (and printed by seed-cat) but not
 * interpreted, so newer peers can add fields.  A decoded frame points into
 * the buffer it was decoded from: keep that buffer alive while using it.
 *
 * Threads: a seed_frame belongs to one thread at a time; the functions keep
 * no global state.
 */
#ifndef SEED_FRAME_H
#define SEED_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/buf.h"
#include "seed/error.h"
#include "seed/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SEED_PROTOCOL_VERSION 1
#define SEED_FRAME_MAX_FIELDS 32
/* Frames larger than this are refused by the decoder. */
#define SEED_FRAME_MAX_BYTES ((size_t)1 << 30)

typedef enum seed_frame_type {
	SEED_FRAME_INVALID = 0,
	SEED_FRAME_STEP,
	SEED_FRAME_ACTION,
	SEED_FRAME_UNROLL,
	SEED_FRAME_EPISODE,
	SEED_FRAME_PARAMS,
	SEED_FRAME_ERROR,
	SEED_FRAME_NTYPES
} seed_frame_type;

typedef enum seed_value_kind {
	SEED_VALUE_NIL = 0,
	SEED_VALUE_BOOL,
	SEED_VALUE_INT,
	SEED_VALUE_FLOAT,
	SEED_VALUE_STR,
	SEED_VALUE_TENSOR,
} seed_value_kind;

typedef struct seed_value {
	seed_value_kind kind;
	union {
		bool b;
		int64_t i;
		double f;
		struct {
			const char *ptr; /* not NUL-terminated */
			size_t len;
		} str;
		seed_tensor tensor;
	} u;
} seed_value;

typedef struct seed_field {
	const char *name; /* not NUL-terminated when decoded */
	size_t name_len;
	seed_value value;
} seed_field;

typedef struct seed_frame {
	seed_frame_type type;
	int version;
	int nfields;
	seed_field fields[SEED_FRAME_MAX_FIELDS];
	void *storage; /* decoder-owned memory; released by seed_frame_clear */
} seed_frame;

const char *seed_frame_type_name(seed_frame_type t);
/* SEED_FRAME_INVALID if unknown. */
seed_frame_type seed_frame_type_parse(const char *name, size_t len);

/* Start an empty frame of type t at SEED_PROTOCOL_VERSION. */
void seed_frame_init(seed_frame *f, seed_frame_type t);
/* Release what decoding allocated; f is then an empty INVALID frame.
 * Safe on a zeroed or already cleared frame. */
void seed_frame_clear(seed_frame *f);

/* Add or replace a field.  name must outlive f (a string literal, say); a
 * tensor's data is referenced, not copied.  -ENOSPC past MAX_FIELDS. */
int seed_frame_set_int(seed_frame *f, const char *name, int64_t v);
int seed_frame_set_float(seed_frame *f, const char *name, double v);
int seed_frame_set_bool(seed_frame *f, const char *name, bool v);
int seed_frame_set_str(seed_frame *f, const char *name, const char *s);
int seed_frame_set_tensor(seed_frame *f, const char *name, seed_tensor t);

/* The field called name, or NULL. */
const seed_value *seed_frame_get(const seed_frame *f, const char *name);
/* Typed getters: the value, or dflt / NULL when the field is missing or of
 * another kind.  seed_frame_float accepts an int field too. */
int64_t seed_frame_int(const seed_frame *f, const char *name, int64_t dflt);
double seed_frame_float(const seed_frame *f, const char *name, double dflt);
const seed_tensor *seed_frame_tensor(const seed_frame *f, const char *name);
/* *s points into the frame (not NUL-terminated); -ENOENT if missing. */
int seed_frame_str(const seed_frame *f, const char *name, const char **s, size_t *len);

/* Check f against its type's schema: required fields present with the
 * right kind, dtypes, ranks and matching leading dimensions.  On failure the
 * message names the frame type and the field, e.g.
 *   "step frame: field 'reward': dtype i32, expected f32". */
int seed_frame_validate(const seed_frame *f, seed_err *err);

/* Decode and validate one frame from buf[0..len).  Trailing bytes after the
 * map are an error.  f's strings and tensors point into buf afterwards.
 * Errors: -SEED_EFRAME (not msgpack, missing/wrong field, shape vs data,
 * oversize), -SEED_ETYPE, -SEED_EVERSION; err says what and where.  On
 * failure f is left cleared. */
int seed_frame_decode(seed_frame *f, const void *buf, size_t len, seed_err *err);

/* Validate f and append its msgpack encoding to out. */
int seed_frame_encode(const seed_frame *f, seed_buf *out, seed_err *err);

/* Append f as one line of JSON (no newline) to out.  Tensors become
 * {"dtype":..,"shape":[..],"data":[numbers]}; type and version come first. */
int seed_frame_to_json(const seed_frame *f, seed_buf *out, seed_err *err);

/* Parse one JSON object in the form seed_frame_to_json writes (integers in
 * tensors of float dtype are fine; data may also be a flat list for any
 * shape) and validate it.  The frame owns the memory it needs (freed by
 * seed_frame_clear). */
int seed_frame_from_json(seed_frame *f, const char *json, size_t len, seed_err *err);

/* Reads a recorded stream (concatenated frames) from a file descriptor. */
typedef struct seed_frame_reader seed_frame_reader;

int seed_frame_reader_new(seed_frame_reader **out, int fd);
/* Frees r (NULL is fine) and sets *r to NULL; does not close fd. */
void seed_frame_reader_free(seed_frame_reader **r);
/* The bytes of the next whole msgpack object: *data/*len stay valid until the
 * next call.  -SEED_EEOF at a clean end of input; -SEED_EFRAME when the input
 * ends inside an object or is not msgpack; -errno on read errors. */
int seed_frame_reader_next(seed_frame_reader *r, const void **data, size_t *len, seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
