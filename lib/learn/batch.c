/* batch.c: the learner's batch (learner_internal.h): its columns, and the
 * checking and copying of unroll and sequences frames into them.
 *
 * A frame is checked whole (learn_check_rows) before anything of it is
 * copied; rows are copied time-major, each unroll into one column of every
 * field's (T+1, B) array.  Decoded tensors point into the message, maybe
 * unaligned: every element is read with memcpy.
 */
#include "learner_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "seed/buf.h"

/* The batch every algorithm fills: one column per field of the unroll
 * table, the transitions, a core's inputs, and prioritized replay's keys,
 * weights and priorities for an algorithm on sequences; and its view. */
void learn_alloc_batch(seed_learner *L)
{
	size_t n = (size_t)L->T1 * (size_t)L->B, A = (size_t)L->A, B = (size_t)L->B;
	L->fields = L->box ? seed_frame_unroll_box_fields : seed_frame_unroll_fields;
	for (int k = 0; k < SEED_UNROLL_NFIELDS; k++) {
		const seed_unroll_field *fd = &L->fields[k];
		size_t bytes = fd->extent == SEED_UNROLL_PER_OBS ? L->obs_bytes : seed_dtype_size(fd->dtype);
		if (fd->extent == SEED_UNROLL_PER_ACTION)
			bytes *= A;
		else if (fd->extent == SEED_UNROLL_PER_PARAM)
			bytes *= 2 * A;
		L->step_bytes[k] = bytes;
		L->col[k] = seed_xaligned(n * bytes);
		memset(L->col[k], 0, n * bytes);
	}
	L->obs = L->col[SEED_UNROLL_OBS];
	L->action = L->box ? NULL : (int32_t *)(void *)L->col[SEED_UNROLL_ACTION];
	L->box_action = L->box ? (float *)(void *)L->col[SEED_UNROLL_ACTION] : NULL;
	L->version = (int32_t *)(void *)L->col[SEED_UNROLL_POLICY_VERSION];
	L->reward = (float *)(void *)L->col[SEED_UNROLL_REWARD];
	L->final_value = (float *)(void *)L->col[SEED_UNROLL_FINAL_VALUE];
	L->terminated = L->col[SEED_UNROLL_TERMINATED];
	L->truncated = L->col[SEED_UNROLL_TRUNCATED];
	L->blogits = (float *)(void *)L->col[SEED_UNROLL_LOGITS];
	size_t nt = n - B; /* T*B transition rows */
	L->rewards_t = seed_xcalloc(nt, sizeof(float));
	L->row_key = seed_xcalloc(B, sizeof *L->row_key);
	L->discounts_t = seed_xcalloc(nt, sizeof(float));
	L->S = seed_model_state_floats(L->model);
	if (L->S > 0) {
		L->state0 = seed_xcalloc(B * (size_t)L->S, sizeof(float));
		L->prev_action = seed_xcalloc(n, sizeof(int32_t));
		L->reset = seed_xcalloc(n, 1);
	}
	if (L->algo->sequences) {
		L->keys = seed_xcalloc(B, sizeof(int64_t));
		L->weights = seed_xcalloc(B, sizeof(float));
		L->last_keys = seed_xcalloc(B, sizeof(int64_t));
		L->priorities = seed_xcalloc(B, sizeof(float));
	}
	L->view = (seed_learner_batch){
	    .T = L->T1 - 1,
	    .B = L->B,
	    .A = L->A,
	    .obs_bytes = L->obs_bytes,
	    .obs = L->obs,
	    .action = L->action,
	    .box_action = L->box_action,
	    .reward = L->reward,
	    .terminated = L->terminated,
	    .truncated = L->truncated,
	    .final_value = L->final_value,
	    .version = L->version,
	    .behaviour_logits = L->blogits,
	    .rewards = L->rewards_t,
	    .discounts = L->discounts_t,
	};
}

/* Copy one unroll's n rows of size bytes (contiguous, as on the wire, maybe
 * unaligned) into column j of a time-major (n, B) array: row t goes to
 * element t*B + j.  The sizes that CartPole-like streams have (flags,
 * scalars, two logits, four floats of observation) get copies of a
 * constant size, which compile to plain moves where a copy of a variable
 * size is a call per row. */
static void to_column(uint8_t *dst, size_t B, size_t j, const uint8_t *src, size_t n, size_t size)
{
	uint8_t *d = dst + j * size;
	const size_t stride = B * size;
	switch (size) {
	case 1:
		for (size_t t = 0; t < n; t++)
			d[t * stride] = src[t];
		break;
	case 4:
		for (size_t t = 0; t < n; t++)
			memcpy(d + t * stride, src + 4 * t, 4);
		break;
	case 8:
		for (size_t t = 0; t < n; t++)
			memcpy(d + t * stride, src + 8 * t, 8);
		break;
	case 16:
		for (size_t t = 0; t < n; t++)
			memcpy(d + t * stride, src + 16 * t, 16);
		break;
	default:
		for (size_t t = 0; t < n; t++)
			memcpy(d + t * stride, src + size * t, size);
	}
}

/* Whether f is a frame this learner can take whole (see seed_learner_add):
 * an unroll frame for V-trace, a sequences frame for R2D2; *Bf: its rows. */
int learn_check_rows(const seed_learner *L, const seed_frame *f, int64_t *Bf_out, seed_err *err)
{
	if (L->algo->sequences && f->type == SEED_FRAME_UNROLL)
		return seed_err_set(err, -SEED_EFRAME,
		                    "an unroll frame: an r2d2 learner takes sequences frames (from "
		                    "seed-replay), not unrolls");
	if (!L->algo->sequences && f->type == SEED_FRAME_SEQUENCES)
		return seed_err_set(err, -SEED_EFRAME,
		                    "a sequences frame: a vtrace learner takes unroll frames; sequences "
		                    "are for algorithm r2d2");
	seed_frame_type want = L->algo->sequences ? SEED_FRAME_SEQUENCES : SEED_FRAME_UNROLL;
	const char *what = L->algo->sequences ? "sequences frame" : "unroll frame";
	if (f->type != want)
		return seed_err_set(err, -SEED_EFRAME, "a %s frame, not a%s %s",
		                    seed_frame_type_name(f->type), L->algo->sequences ? "" : "n", what);
	int rc = seed_frame_validate(f, err);
	if (rc)
		return rc;
	const seed_tensor *obs = seed_frame_tensor(f, "obs");
	int64_t Bf = obs->shape[0], T1 = obs->shape[1];
	if (T1 != L->T1)
		return seed_err_set(err, -SEED_EFRAME, "%s: %" PRId64 " steps, expected unroll_length+1 = %d",
		                    what, T1, L->T1);
	int64_t A = seed_frame_int(f, "num_actions", -1);
	if (A != L->A)
		return seed_err_set(err, -SEED_EFRAME,
		                    "%s: field 'num_actions': %" PRId64 ", environment '%s' has %d", what, A,
		                    L->cfg->env, L->A);
	bool same = obs->dtype == L->spec.obs_dtype && obs->rank == 2 + L->spec.obs_rank;
	for (int i = 0; same && i < L->spec.obs_rank; i++)
		same = obs->shape[2 + i] == L->spec.obs_shape[i];
	if (!same)
		return seed_err_set(err, -SEED_EFRAME,
		                    "%s: field 'obs': observations of another dtype or shape than "
		                    "environment '%s' makes",
		                    what, L->cfg->env);
	/* Decoded tensors point into the message: maybe unaligned, so every
	 * element is read with memcpy (a plain load where alignment is free). */
	const seed_tensor *at = seed_frame_tensor(f, "action");
	if ((at->dtype == SEED_DTYPE_F32) != L->box)
		return seed_err_set(
		    err, -SEED_EFRAME, "%s: field 'action': %s actions, but environment '%s' has %s ones",
		    what, L->box ? "discrete" : "Box (f32)", L->cfg->env, L->box ? "Box" : "discrete");
	const uint8_t *act = at->data;
	for (int64_t i = 0; L->box && i < Bf * T1 * L->A; i++) {
		float x;
		memcpy(&x, act + 4 * i, 4);
		if (!isfinite(x))
			return seed_err_set(err, -SEED_EFRAME,
			                    "%s: field 'action': %g at [%" PRId64 "][%" PRId64 "][%" PRId64
			                    "] is not finite",
			                    what, (double)x, i / L->A / T1, i / L->A % T1, i % L->A);
	}
	for (int64_t i = 0; !L->box && i < Bf * T1; i++) {
		int32_t a;
		memcpy(&a, act + 4 * i, 4);
		if (a < 0 || a >= L->A)
			return seed_err_set(err, -SEED_EFRAME,
			                    "%s: field 'action': %" PRId32 " at [%" PRId64 "][%" PRId64
			                    "] is outside [0, %d)",
			                    what, a, i / T1, i % T1, L->A);
	}
	const seed_tensor *st = seed_frame_tensor(f, "state"), *pa = seed_frame_tensor(f, "prev_action");
	if (st && L->S > 0 && st->shape[1] != L->S)
		return seed_err_set(err, -SEED_EFRAME,
		                    "%s: field 'state': %" PRId64
		                    " floats a row, but the model's core keeps %d",
		                    what, st->shape[1], L->S);
	for (int64_t i = 0; pa && L->S > 0 && i < Bf; i++) {
		int32_t a;
		memcpy(&a, (const uint8_t *)pa->data + 4 * i, 4);
		if (a < -1 || a >= L->A)
			return seed_err_set(err, -SEED_EFRAME,
			                    "%s: field 'prev_action': %" PRId32 " at [%" PRId64
			                    "] is outside [-1, %d)",
			                    what, a, i, L->A);
	}
	const seed_tensor *w = L->algo->sequences ? seed_frame_tensor(f, "weight") : NULL;
	for (int64_t i = 0; w && i < Bf; i++) {
		float x;
		memcpy(&x, (const uint8_t *)w->data + 4 * i, 4);
		if (!(x >= 0 && x <= 1e30f)) /* NaN fails too */
			return seed_err_set(err, -SEED_EFRAME,
			                    "%s: field 'weight': %g at [%" PRId64
			                    "] is not a finite weight >= 0",
			                    what, (double)x, i);
	}
	*Bf_out = Bf;
	return 0;
}

/* Copy unrolls first, first+1, ... of f, checked by learn_check_rows, into
 * the batch until the frame or the batch is used up; return how many. */
int learn_take_rows(seed_learner *L, const seed_frame *f, int64_t first)
{
	const uint8_t *src[SEED_UNROLL_NFIELDS];
	for (int k = 0; k < SEED_UNROLL_NFIELDS; k++)
		src[k] = seed_frame_tensor(f, L->fields[k].name)->data;
	const seed_tensor *obs = seed_frame_tensor(f, "obs");
	int64_t Bf = obs->shape[0], T1 = obs->shape[1];
	size_t B = (size_t)L->B, n1 = (size_t)T1;
	/* A recurrent core starts each unroll from its state (zeros and no
	 * previous action when the frame has none: e.g. uniform play). */
	const seed_tensor *st = L->S > 0 ? seed_frame_tensor(f, "state") : NULL,
	                  *pa = L->S > 0 ? seed_frame_tensor(f, "prev_action") : NULL;
	size_t sb = (size_t)L->S * sizeof(float);
	const seed_tensor *key = L->algo->sequences ? seed_frame_tensor(f, "key") : NULL,
	                  *w = L->algo->sequences ? seed_frame_tensor(f, "weight") : NULL;
	int taken = 0;
	const seed_tensor *env = seed_frame_tensor(f, "env");
	uint32_t run = (uint32_t)seed_frame_int(f, "run", 0), actor = (uint32_t)seed_frame_int(f, "actor", 0);
	int64_t skip = seed_frame_int(f, "frame_skip", 1); /* >= 1: validated */
	learn_know_skip(L, skip);
	for (int64_t b = first; b < Bf && L->fill < L->B; b++, taken++) {
		size_t j = (size_t)L->fill++, at = (size_t)b * n1;
		L->row_key[j] = (seed_reward_norm_key){.run = run, .actor = actor};
		if (env)
			memcpy(&L->row_key[j].env, (const uint8_t *)env->data + 4 * (size_t)b, 4);
		if (L->algo->sequences) {
			memcpy(&L->keys[j], (const uint8_t *)key->data + 8 * (size_t)b, 8);
			memcpy(&L->weights[j], (const uint8_t *)w->data + 4 * (size_t)b, 4);
		}
		for (int k = 0; k < SEED_UNROLL_NFIELDS; k++)
			to_column(L->col[k], B, j, src[k] + at * L->step_bytes[k], n1, L->step_bytes[k]);
		if (L->S > 0) {
			if (st)
				memcpy(L->state0 + j * (size_t)L->S,
				       (const uint8_t *)st->data + (size_t)b * sb, sb);
			else
				memset(L->state0 + j * (size_t)L->S, 0, sb);
			L->prev_action[j] = -1;
			if (pa)
				memcpy(&L->prev_action[j], (const uint8_t *)pa->data + 4 * (size_t)b, 4);
		}
	}
	L->view.fill = L->fill;
	L->fill_skip += (int64_t)taken * skip;
	return taken;
}
