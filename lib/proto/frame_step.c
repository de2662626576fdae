/* frame_step.c: a step frame read once into its typed view (seed/frame.h).
 *
 * One pass over the frame's fields puts each where the view keeps it; the
 * schema (frame.c) has already said the fields are there with the right
 * kinds, dtypes and shapes, so this checks only what a hand-built frame
 * could still lack.  Nothing is copied: the view points into the frame. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "seed/frame.h"

enum {
	F_RUN,
	F_ACTOR,
	F_SEQ,
	F_ENV0,
	F_NUM_ACTIONS,
	F_OBS,
	F_REWARD,
	F_TERMINATED,
	F_TRUNCATED,
	F_EP_RETURN,
	F_EP_LENGTH,
	F_FINAL_OBS,
	F_ACTION_LOW,
	F_ACTION_HIGH,
	F_FRAME_SKIP,
	F_N
};

/* The step frame's fields, indexed by the enum above (the schema's order,
 * which encoders keep), their names' lengths, and the kind each is;
 * final_obs, the bounds and the frame skip (F_OPTIONAL on) may be missing. */
#define FIELD(id, n, k) [id] = {n, sizeof n - 1, k}
static const struct {
	const char *name;
	size_t len;
	seed_value_kind kind;
} fields[F_N] = {
    FIELD(F_RUN, "run", SEED_VALUE_INT),
    FIELD(F_ACTOR, "actor", SEED_VALUE_INT),
    FIELD(F_SEQ, "seq", SEED_VALUE_INT),
    FIELD(F_ENV0, "env0", SEED_VALUE_INT),
    FIELD(F_NUM_ACTIONS, "num_actions", SEED_VALUE_INT),
    FIELD(F_OBS, "obs", SEED_VALUE_TENSOR),
    FIELD(F_REWARD, "reward", SEED_VALUE_TENSOR),
    FIELD(F_TERMINATED, "terminated", SEED_VALUE_TENSOR),
    FIELD(F_TRUNCATED, "truncated", SEED_VALUE_TENSOR),
    FIELD(F_EP_RETURN, "ep_return", SEED_VALUE_TENSOR),
    FIELD(F_EP_LENGTH, "ep_length", SEED_VALUE_TENSOR),
    FIELD(F_FINAL_OBS, "final_obs", SEED_VALUE_TENSOR),
    FIELD(F_ACTION_LOW, "action_low", SEED_VALUE_TENSOR),
    FIELD(F_ACTION_HIGH, "action_high", SEED_VALUE_TENSOR),
    FIELD(F_FRAME_SKIP, "frame_skip", SEED_VALUE_INT),
};
#define F_OPTIONAL F_FINAL_OBS

static bool is(const seed_field *fd, int k)
{
	return fields[k].len == fd->name_len && memcmp(fields[k].name, fd->name, fd->name_len) == 0;
}

/* Which of the step frame's fields fd is (-1: none), trying first the one
 * at its position i in the schema's order. */
static int field_id(const seed_field *fd, int i)
{
	if (i < F_N && is(fd, i))
		return i;
	for (int k = 0; k < F_N; k++)
		if (is(fd, k))
			return k;
	return -1;
}

int seed_frame_step(const seed_frame *f, seed_step *st, seed_err *err)
{
	if (f->type != SEED_FRAME_STEP)
		return seed_err_set(err, -SEED_ETYPE, "%s frame: not a step frame",
		                    seed_frame_type_name(f->type));
	const seed_value *v[F_N] = {0};
	for (int i = 0; i < f->nfields; i++) {
		int k = field_id(&f->fields[i], i);
		if (k >= 0)
			v[k] = &f->fields[i].value;
	}
	for (int k = 0; k < F_N; k++) {
		if (!v[k] && k >= F_OPTIONAL)
			continue;
		if (!v[k] || v[k]->kind != fields[k].kind)
			return seed_err_set(err, -SEED_EFRAME, "step frame: field '%s': %s", fields[k].name,
			                    v[k] ? "of another kind" : "missing");
	}
	const seed_tensor *obs = &v[F_OBS]->u.tensor;
	if (obs->rank < 1)
		return seed_err_set(err, -SEED_EFRAME, "step frame: field 'obs': no environments dimension");
	if (!v[F_ACTION_LOW] != !v[F_ACTION_HIGH])
		return seed_err_set(err, -SEED_EFRAME,
		                    "step frame: field '%s': present without '%s' (they come together or "
		                    "not at all)",
		                    v[F_ACTION_LOW] ? "action_low" : "action_high",
		                    v[F_ACTION_LOW] ? "action_high" : "action_low");
	if (v[F_FRAME_SKIP] && (v[F_FRAME_SKIP]->u.i < 1 || v[F_FRAME_SKIP]->u.i > INT32_MAX))
		return seed_err_set(err, -SEED_EFRAME, "step frame: field 'frame_skip': %lld, expected >= 1",
		                    (long long)v[F_FRAME_SKIP]->u.i);
	*st = (seed_step){
	    .run = (uint32_t)v[F_RUN]->u.i,
	    .actor = (uint32_t)v[F_ACTOR]->u.i,
	    .seq = v[F_SEQ]->u.i,
	    .env0 = (int32_t)v[F_ENV0]->u.i,
	    .num_actions = (int32_t)v[F_NUM_ACTIONS]->u.i,
	    .envs = obs->shape[0],
	    .obs = obs,
	    .final_obs = v[F_FINAL_OBS] ? &v[F_FINAL_OBS]->u.tensor : NULL,
	    .reward = v[F_REWARD]->u.tensor.data,
	    .terminated = v[F_TERMINATED]->u.tensor.data,
	    .truncated = v[F_TRUNCATED]->u.tensor.data,
	    .ep_return = v[F_EP_RETURN]->u.tensor.data,
	    .ep_length = v[F_EP_LENGTH]->u.tensor.data,
	    .action_low = v[F_ACTION_LOW] ? v[F_ACTION_LOW]->u.tensor.data : NULL,
	    .action_high = v[F_ACTION_HIGH] ? v[F_ACTION_HIGH]->u.tensor.data : NULL,
	    .frame_skip = v[F_FRAME_SKIP] ? (int32_t)v[F_FRAME_SKIP]->u.i : 1,
	};
	return 0;
}
