/* seed/frame.h: msgpack frames, the messages every Seed program exchanges.
 *
 * A frame is one msgpack map: {"type": str, "version": int, fields...}.  A
 * tensor field is a map {"dtype": str, "shape": [int...], "data": bin} whose
 * bin holds the little-endian elements, row-major.  Every other field value
 * is nil, a bool, an int, a float or a str (arrays, other maps, bin and ext
 * are refused).  One ZeroMQ message carries one frame; a file of
 * concatenated frames is a recorded stream.
 *
 * The fields of every frame type are checked on decode and before encode
 * against the type's schema (man seed-frames(7) is the reference).  K is the
 * number of environments of a step, B the unrolls in a batch, T+1 the steps
 * of an unroll, A the number of actions, N the episodes, P the parameters:
 *
 *   step     actor -> infer  run actor seq env0 num_actions
 *                            obs[K,...] reward f32[K] terminated u8[K]
 *                            truncated u8[K] ep_return f32[K] ep_length i32[K]
 *                            (optional final_obs: obs's dtype and shape;
 *                            optional, both or neither: action_low f32[A]
 *                            action_high f32[A], a Box action space)
 *   action   infer -> actor  run actor seq env0 policy_version action i32[K]
 *                            (discrete) or f32[K,A] (Box) (optional reset
 *                            u8[K])
 *   unroll   infer -> learn  run actor num_actions env i32[B] (optional
 *                            state f32[B,S], priority f32[B]) and, over
 *                            T+1 steps, the fields of
 *                            seed_frame_unroll_fields below (discrete) or
 *                            of seed_frame_unroll_box_fields (Box)
 *   episode  infer -> learn  run actor env i32[N] return f32[N]
 *                            length i32[N] truncated u8[N] (optional,
 *                            both or neither: generation i64[N],
 *                            member i32[N])
 *   params   learn -> infer  policy_version run params f32[P] (optional
 *                            model: str, the model's JSON description)
 *   error    anyone          code message (optional frame: the type of the
 *                            frame that failed)
 *   sample   learn -> replay batch (an int >= 1: B)
 *   sequences replay -> learn num_actions env run actor i32[B] key i64[B]
 *                            weight f32[B] (optional state f32[B,S]) and
 *                            the unroll's per-step fields over B rows
 *   priority learn -> replay key i64[N] priority f32[N]
 *   generation learn -> infer run generation phase algorithm ("es", "ga",
 *                            "rs", "snes" or "ars") noise_seed noise_size
 *                            sigma (a float) rank genome i64[M,L] episodes
 *                            i32[M] (optional sign f32[M], centre f32[P],
 *                            sigmas f32[P], model str, episode_cap int,
 *                            greedy bool)
 *
 * Ints: run and actor in [0, 2^32), seq and the policy versions >= 0, env0
 * in [0, 2^31), num_actions >= 1.  Every dimension of a schema tensor is at
 * least 1.  The checks cover structure, not tensor contents, but for two
 * that keep an environment from acting on garbage: a step frame's bounds
 * (no NaN, action_low <= action_high elementwise; infinities allowed) and a
 * Box action frame's elements (finite).
 *
 * Action spaces: a step frame with action_low and action_high is from an
 * environment whose actions are A = num_actions real numbers, each within
 * its bounds (a Box space); without them the environment takes one integer
 * in [0, A) (discrete).  The action and unroll frames say which they carry
 * by the dtype of their 'action' field: f32 is Box (rank 2 [K,A] in an
 * action frame, rank 3 [B,T+1,A] in an unroll frame), anything else is
 * checked as discrete (i32).  In a Box unroll, 'action' is the policy's
 * raw sample, before any clipping or squashing into the bounds, and
 * 'logits' holds the Gaussian's parameters: A means then A log standard
 * deviations.  Sequences frames (replay) are discrete only.
 *
 * Identity: env0 (steps, actions) and env (unrolls, episodes) index the
 * actor's own vector of environments, from 0 in every actor, so an
 * environment is known by (run, actor, env); seq counts the step frames of
 * one half (run, actor, env0).
 *
 * Fields not in the schema are kept (decoded, re-encoded, printed by
 * seed-cat) but not interpreted, so newer peers can add fields.  A decoded
 * frame points into the buffer it was decoded from: keep that buffer alive
 * while using the frame.
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
/* Fields of a frame besides type and version. */
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
	SEED_FRAME_SAMPLE,
	SEED_FRAME_SEQUENCES,
	SEED_FRAME_PRIORITY,
	SEED_FRAME_GENERATION,
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

/* Fields are kept in the order they were set or decoded; encoding and JSON
 * write type and version first, then the fields in that order. */
typedef struct seed_frame {
	seed_frame_type type;
	int version;
	int nfields;
	seed_field fields[SEED_FRAME_MAX_FIELDS];
	void *storage; /* memory the frame owns (seed_frame_from_json); NULL
	                * for built and decoded frames; released by
	                * seed_frame_clear */
} seed_frame;

/* The per-step fields of an unroll frame, in frame order: the one table
 * that the frame schema checks, that the server's assembly (seed_unroll(3))
 * allocates and fills, and that a learner reads; one table per action
 * space, the same fields in the same order.  Each is a tensor whose
 * leading dimensions are [B, T+1]; PER_ACTION adds A, PER_PARAM 2A,
 * PER_OBS the observation's own dimensions (and takes the observation's
 * dtype). */
typedef enum seed_unroll_extent {
	SEED_UNROLL_PER_STEP,   /* [B, T+1] */
	SEED_UNROLL_PER_ACTION, /* [B, T+1, A] */
	SEED_UNROLL_PER_OBS,    /* [B, T+1, ...], any dtype */
	SEED_UNROLL_PER_PARAM,  /* [B, T+1, 2A]: a Gaussian's A means, A log std */
} seed_unroll_extent;

typedef enum seed_unroll_field_id {
	SEED_UNROLL_OBS,
	SEED_UNROLL_ACTION,
	SEED_UNROLL_REWARD,
	SEED_UNROLL_TERMINATED,
	SEED_UNROLL_TRUNCATED,
	SEED_UNROLL_FINAL_VALUE,
	SEED_UNROLL_POLICY_VERSION,
	SEED_UNROLL_LOGITS,
	SEED_UNROLL_NFIELDS
} seed_unroll_field_id;

typedef struct seed_unroll_field {
	const char *name;
	seed_dtype dtype; /* SEED_DTYPE_INVALID for PER_OBS: the observation's */
	seed_unroll_extent extent;
} seed_unroll_field;

/* Indexed by seed_unroll_field_id.  Discrete actions: action i32 [B, T+1],
 * logits f32 [B, T+1, A].  The unroll and sequences frames' table. */
extern const seed_unroll_field seed_frame_unroll_fields[SEED_UNROLL_NFIELDS];
/* Box actions: action f32 [B, T+1, A] (the raw sample of the policy, before
 * clipping or squashing into the bounds), logits f32 [B, T+1, 2A] (the
 * Gaussian's A means, then its A log standard deviations); the other fields
 * as in the discrete table.  An unroll frame whose action is f32 is checked
 * against this table; sequences frames never are. */
extern const seed_unroll_field seed_frame_unroll_box_fields[SEED_UNROLL_NFIELDS];

/* "step", "action", ...; "invalid" for anything else. */
const char *seed_frame_type_name(seed_frame_type t);
/* Parse a name as above (len bytes, need not be NUL-terminated);
 * SEED_FRAME_INVALID if unknown. */
seed_frame_type seed_frame_type_parse(const char *name, size_t len);

/* Start an empty frame of type t at SEED_PROTOCOL_VERSION.  f need not be
 * initialised before; nothing is released. */
void seed_frame_init(seed_frame *f, seed_frame_type t);
/* Release the memory the frame owns; f is then an empty INVALID frame.
 * Safe on a zeroed, initialised, decoded or already cleared frame. */
void seed_frame_clear(seed_frame *f);

/* Add a field, or replace the value of the field of that name (it keeps
 * its place).  name must outlive f (a string literal, say); strings and
 * tensor data are referenced, not copied.  Errors: -ENOSPC past
 * SEED_FRAME_MAX_FIELDS; -EINVAL for a NULL name or string, the reserved
 * names "type" and "version", or a tensor with a rank outside
 * [0, SEED_TENSOR_MAX_RANK] or an invalid dtype.  The rest is checked by
 * seed_frame_validate. */
int seed_frame_set_int(seed_frame *f, const char *name, int64_t v);
int seed_frame_set_float(seed_frame *f, const char *name, double v);
int seed_frame_set_bool(seed_frame *f, const char *name, bool v);
int seed_frame_set_nil(seed_frame *f, const char *name);
int seed_frame_set_str(seed_frame *f, const char *name, const char *s);
int seed_frame_set_tensor(seed_frame *f, const char *name, seed_tensor t);

/* The field called name, or NULL. */
const seed_value *seed_frame_get(const seed_frame *f, const char *name);
/* Typed getters: the value, or dflt / NULL when the field is missing or of
 * another kind.  seed_frame_float accepts an int field too. */
int64_t seed_frame_int(const seed_frame *f, const char *name, int64_t dflt);
double seed_frame_float(const seed_frame *f, const char *name, double dflt);
const seed_tensor *seed_frame_tensor(const seed_frame *f, const char *name);
/* *s points into the frame (not NUL-terminated); -ENOENT if missing or not
 * a string. */
int seed_frame_str(const seed_frame *f, const char *name, const char **s, size_t *len);

/* Check f: type known (else -SEED_ETYPE), version SEED_PROTOCOL_VERSION
 * (else -SEED_EVERSION), field names unique and not reserved, tensors with
 * a valid dtype, rank and size and data; then the type's schema: required
 * fields present with the right kind, range, dtype, rank and matching
 * dimensions.  Everything else is -SEED_EFRAME.  The message names the
 * frame type and the field, e.g.
 *   "step frame: field 'reward': dtype i32, expected f32". */
int seed_frame_validate(const seed_frame *f, seed_err *err);

/* Decode and validate one frame from buf[0..len).  f need not be
 * initialised, and what it held is not released (clear a decoded-from-JSON
 * frame first).  Afterwards f's names, strings and tensors point into buf
 * (tensor data may be unaligned); f owns no memory.  Ints are accepted in
 * any msgpack int encoding, floats as float32 or float64.
 * Errors: -SEED_EFRAME (not msgpack, trailing bytes after the map, not a
 * map, missing or duplicate field, field of the wrong kind, bad tensor:
 * unknown dtype, bad shape, shape vs data length; more than
 * SEED_FRAME_MAX_FIELDS fields; more than SEED_FRAME_MAX_BYTES bytes or
 * 4096 msgpack objects in all),
 * -SEED_ETYPE (unknown type), -SEED_EVERSION (unsupported version, checked
 * before the type); err says what and where.  On failure f is left cleared.
 * Cost: one msgpack-c zone (two allocations: the zone and one 8 KiB
 * chunk, freed before returning), nothing per field. */
int seed_frame_decode(seed_frame *f, const void *buf, size_t len, seed_err *err);

/* A decoder for a stream of frames on a hot path: seed_frame_decode with a
 * msgpack-c zone kept from one frame to the next, so that decoding allocates
 * nothing (the zone's first chunk, 8 KiB, holds the object tree of any
 * frame of the schema; a larger tree gets chunks for that one call).
 * seed_frame_decoder_new returns 0 or -ENOMEM; free accepts NULL and nulls
 * the pointer.  Decoding is seed_frame_decode's, with its contract.
 * Threads: a decoder belongs to one thread at a time. */
typedef struct seed_frame_decoder seed_frame_decoder;
int seed_frame_decoder_new(seed_frame_decoder **out);
void seed_frame_decoder_free(seed_frame_decoder **d);
int seed_frame_decoder_decode(seed_frame_decoder *d, seed_frame *f, const void *buf, size_t len,
                              seed_err *err);

/* A step frame read once, by type: what the server takes from an actor's
 * request, so that no field is looked up by name twice.  The pointers are
 * views into the frame's own storage, valid while the frame is (for a
 * decoded frame: until the decoder's next call).  Tensor data in a msgpack
 * frame has no alignment: read the per-environment numbers with memcpy. */
typedef struct seed_step {
	uint32_t run, actor;
	int64_t seq;
	int32_t env0, num_actions;
	int64_t envs;                   /* K, obs's leading dimension */
	const seed_tensor *obs;         /* [K, ...] */
	const seed_tensor *final_obs;   /* like obs; NULL when absent */
	const unsigned char *reward;    /* K float32 */
	const uint8_t *terminated;      /* K bytes, 0 or 1 */
	const uint8_t *truncated;       /* K bytes, 0 or 1 */
	const unsigned char *ep_return; /* K float32 */
	const unsigned char *ep_length; /* K int32 */
	/* A Box action space: A (num_actions) float32 each, the same for every
	 * environment of the frame; NULL (both) when the actions are discrete. */
	const unsigned char *action_low, *action_high;
	/* The emulator frames one step of these environments is (the
	 * optional field frame_skip; 1 when absent). */
	int32_t frame_skip;
} seed_step;

/* Fill *st from f, a step frame that passed the schema (decoding checks
 * it): 0, or -SEED_ETYPE when f is another type and -SEED_EFRAME when a
 * field the schema requires is missing or of another kind (a frame built
 * by hand and never validated); err names the field. */
int seed_frame_step(const seed_frame *f, seed_step *st, seed_err *err);

/* Validate f and append its msgpack encoding to out: type, version, then
 * the fields in order; ints in their shortest msgpack form, floats as
 * float64, tensor data as bin.  On failure out is unchanged. */
int seed_frame_encode(const seed_frame *f, seed_buf *out, seed_err *err);

/* An action frame's reset values, per environment (seed-frames(7)): step
 * it with its action; restart it (a new episode, not a step); hold it at
 * the start of a new episode (restarted unless it was held at the last
 * step; then neither stepped nor restarted until an answer says otherwise).
 * An actor that knows only 0 and 1 restarts on any value but 0. */
enum { SEED_RESET_STEP = 0, SEED_RESET_RESTART = 1, SEED_RESET_HOLD = 2 };

/* Append the action frame {run, actor, seq, env0, policy_version, action
 * i32[K], reset u8[K] when reset is not NULL, and reset_seed i64[K] when
 * reset_seed is not NULL} to out, byte for byte as seed_frame_encode
 * writes the frame with those fields set in that order, without building
 * and validating a seed_frame: the answer on an inference server's hot
 * path.  action holds K int32 (host order, as tensor views do), reset K
 * bytes, reset_seed K int64 (seed-frames(7)).  Errors (out unchanged):
 * those of seed_frame_encode for that frame, with its messages
 * (-SEED_EFRAME: seq, env0 or policy_version negative, K < 1).  Allocates
 * only when out must grow. */
int seed_frame_encode_action(seed_buf *out, uint32_t run, uint32_t actor, int64_t seq, int32_t env0,
                             int64_t policy_version, const int32_t *action, const uint8_t *reset,
                             const int64_t *reset_seed, int64_t K, seed_err *err);

/* The same for a Box action space: action holds K x A float32 (row-major,
 * host order), written as the tensor f32 [K, A].  Every element must be
 * finite.  Errors (out unchanged): those of seed_frame_encode for that
 * frame, with its messages (-SEED_EFRAME: seq, env0 or policy_version
 * negative, K < 1, A < 1, an element NaN or infinite, e.g.
 * "action frame: field 'action': element 7 is not finite").  Allocates only
 * when out must grow. */
int seed_frame_encode_action_box(seed_buf *out, uint32_t run, uint32_t actor, int64_t seq, int32_t env0,
                                 int64_t policy_version, const float *action, const uint8_t *reset,
                                 const int64_t *reset_seed, int64_t K, int64_t A, seed_err *err);

/* Validate f and append it as one line of JSON (no newline) to out.
 * Tensors become {"dtype":..,"shape":[..],"data":[..]} with data nested
 * like numpy's tolist() (a bare number for rank 0); type and version come
 * first.  Floats are written with the fewest digits that read back to the
 * same value; tensors write non-finite floats as the strings "nan", "-nan",
 * "inf" and "-inf" (NaN payloads are not kept).  Errors (-SEED_EFRAME, out
 * unchanged): a non-finite float field (JSON has no number for it), a
 * string or name that is not UTF-8 or a name holding a NUL byte. */
int seed_frame_to_json(const seed_frame *f, seed_buf *out, seed_err *err);

/* Parse one JSON object in the form seed_frame_to_json writes and validate
 * it.  Integers in tensors of float dtype are fine; data may also be a flat
 * list for any shape.  JSON integers become int fields, reals float fields.
 * f need not be initialised; on success it owns the memory it needs (freed
 * by seed_frame_clear) and json may be freed.  Errors as for decoding
 * (-SEED_EFRAME for JSON that does not parse). */
int seed_frame_from_json(seed_frame *f, const char *json, size_t len, seed_err *err);

/* Reads a recorded stream (concatenated frames) from a file descriptor, in
 * chunks, holding one frame at a time whatever its size (up to
 * SEED_FRAME_MAX_BYTES). */
typedef struct seed_frame_reader seed_frame_reader;

/* A reader of fd (blocking or not).  Returns 0; allocation failure aborts. */
int seed_frame_reader_new(seed_frame_reader **out, int fd);
/* Frees r (NULL is fine) and sets *r to NULL; does not close fd. */
void seed_frame_reader_free(seed_frame_reader **r);
/* The bytes of the next whole msgpack object, which need not be a valid
 * frame (give it to seed_frame_decode): *data and *len stay valid until the
 * next call.  -SEED_EEOF at a clean end of input; -SEED_EFRAME when the
 * input ends inside an object, is not msgpack or holds an object larger
 * than SEED_FRAME_MAX_BYTES (there is no way to find the next frame, so
 * every later call fails the same way); -EINTR or -EAGAIN when a signal
 * interrupted the read or a non-blocking fd has nothing yet (call again:
 * nothing is lost); other -errno on read errors. */
int seed_frame_reader_next(seed_frame_reader *r, const void **data, size_t *len, seed_err *err);

/* Bytes of input the reader has handed out so far: the stream offset of
 * the next object (to locate a bad frame in a file). */
uint64_t seed_frame_reader_offset(const seed_frame_reader *r);

#ifdef __cplusplus
}
#endif
#endif
