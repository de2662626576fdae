/* cmd/model_ckpt.h: a model's parameters from a checkpoint, for the
 * programs that restore (seed-learn --resume), serve (seed-infer --model) or
 * play (seed-eval --checkpoint) a trained policy. */
#ifndef SEED_CMD_MODEL_CKPT_H
#define SEED_CMD_MODEL_CKPT_H

#include "seed/checkpoint.h"
#include "seed/error.h"
#include "seed/nn.h"

/* Copy every parameter tensor of m from ck, by name.  Each must be there as
 * f32 with m's shape: -ENOENT or -EINVAL otherwise, with err naming the
 * file, the tensor and both shapes; m is then partly loaded. */
int model_load_checkpoint(seed_model *m, const seed_checkpoint *ck, seed_err *err);

#endif
