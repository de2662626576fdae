/* seed/checkpoint.h: training checkpoints in a run directory.
 *
 * A run directory DIR holds:
 *
 *   checkpoint-NNNNNNNNNNNN.safetensors   the tensors of the checkpoint at
 *                                         update NNNN (model parameters by
 *                                         name, optimizer state such as
 *                                         "optim.adam_m", "optim.adam_v")
 *   checkpoint.json                       the metadata, naming that file in
 *                                         "file": the commit point
 *   checkpoint.safetensors                a symbolic link to that file, for
 *                                         tools that want a fixed name
 *   versions.json                         {"reserved_through": N}: policy
 *                                         versions up to N may have been
 *                                         published (seed_checkpoint_reserve)
 *
 * Saving writes the new .safetensors under a name no existing file has,
 * then checkpoint.json, each atomically (seed/fsutil.h), then moves the
 * link and removes older checkpoint-*.safetensors.  A crash at any point
 * leaves checkpoint.json naming a complete .safetensors whose metadata
 * matches it, so a reader never pairs new metadata with old tensors.  One
 * process saves into a run directory at a time.
 *
 * The metadata (checkpoint.json, also stored whole as the string
 * "seed.checkpoint" in the .safetensors __metadata__ so that a lone file
 * describes itself) is a JSON object:
 *
 *   format "seed-checkpoint", format_version 1, seed_version, created
 *   (ISO 8601 UTC), step, frames, agent_steps, policy_version, optim_step
 *   (integers),
 *   wall_time (seconds), rng (the four 64-bit words of the seed_rng as
 *   16-digit hex strings: JSON numbers cannot hold them exactly), env
 *   ({"name", "options"} or null), model, config (any JSON, or null),
 *   crc32 (an object: tensor name -> CRC-32 of its data bytes, as zlib's
 *   crc32, in 8 hex digits).  Loading verifies every checksum present, so
 *   flipped bytes are refused; checkpoints written before checksums
 *   existed (no crc32) still load.
 *
 * doc/checkpoints.md shows how to read all of it from Python.
 */
#ifndef SEED_CHECKPOINT_H
#define SEED_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/nn.h"
#include "seed/rng.h"
#include "seed/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct json_t json_t;

/* A named tensor of a checkpoint. */
typedef struct seed_checkpoint_tensor {
	const char *name;
	seed_tensor tensor;
} seed_checkpoint_tensor;

/* A checkpoint.  To save, fill one in (all pointers borrowed: nothing is
 * kept after seed_checkpoint_save returns).  One from seed_checkpoint_load
 * owns everything it points to; free it with seed_checkpoint_free. */
typedef struct seed_checkpoint {
	/* What was trained: any JSON value or NULL (absent). */
	json_t *config;      /* the whole training config */
	const char *env;     /* environment name */
	json_t *env_options; /* environment options */
	json_t *model;       /* model description */

	/* Where training stood (counts are >= 0). */
	int64_t step;   /* learner updates applied */
	int64_t frames; /* environment frames consumed: emulator frames, agent
	                   steps times the environment's frame skip */
	/* Agent steps consumed (frames / frame skip).  Checkpoints written
	 * before Seed counted emulator frames have no agent_steps in their
	 * metadata: load sets -1, and their `frames` are agent steps (a
	 * learner resuming one reads them so: seed_learner_restore).  Save
	 * leaves it out when negative (not known). */
	int64_t agent_steps;
	int64_t policy_version; /* version of the parameters last published */
	int64_t optim_step;     /* the optimizer's own step count */
	seed_rng rng;           /* the learner's generator, to resume its stream */
	double wall_time;       /* seconds of training so far (finite) */

	/* Set by load; save ignores them and writes the current UTC time and
	 * this library's version.  Both NULL for a .safetensors file without
	 * Seed metadata (then the fields above are zero and NULL too). */
	const char *created;      /* "2025-01-31T12:00:00Z" */
	const char *seed_version; /* e.g. "0.1.0" */

	/* The tensors, in order; names must be distinct. */
	size_t ntensors;
	const seed_checkpoint_tensor *tensors;

	/* Private to load and free: NULL in a checkpoint filled in by hand. */
	struct seed_checkpoint_owned *owned;
} seed_checkpoint;

/* Save ck into run directory dir, creating it (and its parents) if needed,
 * as described above.  Errors: -EINVAL for a bad checkpoint (negative
 * count, non-finite wall_time, a bad or repeated tensor name: the message
 * names it), a negative errno from the file system with a message naming
 * the path.  Failing before the commit point leaves the previous
 * checkpoint in place and current; failing after it (moving the link)
 * leaves the new one current. */
int seed_checkpoint_save(const char *dir, const seed_checkpoint *ck, seed_err *err);

/* Load a checkpoint from path, which is either a run directory (or its
 * checkpoint.json), or a .safetensors file on its own (metadata from its
 * "seed.checkpoint" entry where present).  The tensors' data is aligned for
 * its dtype.  Errors name the path at fault: a negative errno when a file
 * cannot be read (-ENOENT: no checkpoint there), -EBADMSG for a corrupt or
 * inconsistent checkpoint (malformed safetensors, metadata field missing or
 * of the wrong type, checkpoint.json and the .safetensors it names
 * disagreeing). */
int seed_checkpoint_load(const char *path, seed_checkpoint **out, seed_err *err);

/* Free a checkpoint from seed_checkpoint_load (NULL is fine) and set *ck
 * to NULL.  Never pass one filled in by hand. */
void seed_checkpoint_free(seed_checkpoint **ck);

/* The tensor called name, or NULL (view owned by ck). */
const seed_tensor *seed_checkpoint_get(const seed_checkpoint *ck, const char *name);

/* The tensor called name with dtype dt, the given rank and shape; else
 * -ENOENT (absent) or -EINVAL (different), with a message naming the file,
 * the tensor and both shapes.  For restoring parameters into a model of a
 * known shape. */
int seed_checkpoint_expect(const seed_checkpoint *ck, const char *name, seed_dtype dt, int rank,
                           const int64_t *shape, seed_tensor *out, seed_err *err);

/* Copy every parameter tensor of model m from ck, by name: the one loader
 * of a model's parameters for resuming, serving and playing.  Each must be
 * there as f32 with m's shape: -ENOENT or -EINVAL otherwise, with err
 * naming the file, the tensor and both shapes; m is then partly loaded. */
int seed_checkpoint_load_model(const seed_checkpoint *ck, seed_model *m, seed_err *err);

/* Record in dir/versions.json, atomically and durably, that policy
 * versions up to through may have been published, so that a learner
 * resumed after a crash never hands out one of them again for other
 * parameters.  through >= 0.  Errors: -EINVAL for a negative through; a
 * negative errno naming the path. */
int seed_checkpoint_reserve(const char *dir, int64_t through, seed_err *err);

/* The reservation in dir (*through = -1 when dir has no versions.json).
 * Errors: -EBADMSG for a versions.json that is not {"reserved_through": N}
 * with N >= 0; a negative errno naming the path. */
int seed_checkpoint_reserved(const char *dir, int64_t *through, seed_err *err);

/* For a loaded checkpoint: its whole metadata object as described above
 * (borrowed; NULL when the file had none), and the path of the .safetensors
 * file its tensors came from.  NULL for one filled in by hand. */
json_t *seed_checkpoint_meta(const seed_checkpoint *ck);
const char *seed_checkpoint_file(const seed_checkpoint *ck);

/* What run directory dir holds of a run at step now (steps counted in
 * unit: "update", "round") whose last checkpoint written is of step saved
 * (< 0: none yet), appended to s (n bytes, holding a string; always
 * terminated), in the words both trainers use.  After a save that failed
 * (failed true), so that the failure does not read as if a recent
 * checkpoint were there: "; DIR holds no checkpoint of this run" or "; DIR
 * still holds the checkpoint of UNIT SAVED, K UNITs old".  In a run's final
 * account (failed false): ", checkpoint in DIR" when saved == now, else
 * "; NOT SAVED: DIR holds no checkpoint of this run" or "; NOT SAVED: DIR
 * holds the checkpoint of UNIT SAVED". */
void seed_checkpoint_holds(char *s, size_t n, const char *dir, const char *unit, int64_t saved, int64_t now,
                           bool failed);

#ifdef __cplusplus
}
#endif
#endif
