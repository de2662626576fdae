/* unroll.c: assembly of unrolls from steps, their frame, and the transition
 * rule (seed/unroll.h).
 *
 * Invariants: one allocation holds the header's buffers, the fields of
 * seed_frame_unroll_fields (or of seed_frame_unroll_box_fields, for a Box
 * layout) in table order ((B, L, ...) each, batch-major as in the frame)
 * and the two state blocks; 0 <= pos <= L; nothing here allocates after
 * seed_unroll_new, so recording a step costs copies only.  The action
 * space is read at creation (the fields' sizes) and when the frame is
 * built, never per step: each space has its own record_action.
 */
#include "seed/unroll.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"

/* Round up to 16 bytes so that every block is aligned for any element. */
static size_t round16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

/* The per-step fields of l's action space. */
static const seed_unroll_field *fields_of(const seed_unroll_layout *l)
{
	return l->box ? seed_frame_unroll_box_fields : seed_frame_unroll_fields;
}

/* Bytes of one (row, step) of field i (A is at most INT_MAX: no overflow). */
static size_t elem_bytes(const seed_unroll_layout *l, size_t obs_bytes, int i)
{
	const seed_unroll_field *fd = &fields_of(l)[i];
	switch (fd->extent) {
	case SEED_UNROLL_PER_STEP:
		return seed_dtype_size(fd->dtype);
	case SEED_UNROLL_PER_ACTION:
		return seed_dtype_size(fd->dtype) * (size_t)l->num_actions;
	case SEED_UNROLL_PER_PARAM:
		return seed_dtype_size(fd->dtype) * 2 * (size_t)l->num_actions;
	case SEED_UNROLL_PER_OBS:
		return obs_bytes;
	}
	return 0;
}

/* Check l; on success *obs_bytes is one observation's size. */
static int check_layout(const seed_unroll_layout *l, size_t *obs_bytes, seed_err *err)
{
	if (l->T < 1 || l->overlap < 1 || l->overlap > l->T)
		return seed_err_set(err, -EINVAL,
		                    "unroll: T %d and overlap %d: need T >= 1 and 1 <= overlap <= T", l->T,
		                    l->overlap);
	if (l->frame_skip < 0)
		return seed_err_set(err, -EINVAL, "unroll: frame skip %d: need >= 1 (0: 1)", l->frame_skip);
	if (l->rows < 1 || l->num_actions < 1 || l->state_size < 0)
		return seed_err_set(err, -EINVAL,
		                    "unroll: %d rows, %d actions, state of %d: need >= 1, >= 1, >= 0",
		                    l->rows, l->num_actions, l->state_size);
	if (l->box && l->state_size > 0)
		return seed_err_set(err, -EINVAL,
		                    "unroll: a Box action space with a state of %d: a Box unroll keeps no "
		                    "previous action (state 0 only)",
		                    l->state_size);
	size_t es = seed_dtype_size(l->obs_dtype);
	if (es == 0 || l->obs_rank < 0 || l->obs_rank > SEED_TENSOR_MAX_RANK - 2)
		return seed_err_set(err, -EINVAL, "unroll: observations of dtype %d and rank %d",
		                    (int)l->obs_dtype, l->obs_rank);
	size_t n = es;
	for (int i = 0; i < l->obs_rank; i++) {
		if (l->obs_shape[i] < 1)
			return seed_err_set(err, -EINVAL, "unroll: observation dimension %d is %lld", i,
			                    (long long)l->obs_shape[i]);
		if (__builtin_mul_overflow(n, (size_t)l->obs_shape[i], &n))
			return seed_err_set(err, -E2BIG, "unroll: observations too large");
	}
	*obs_bytes = n;
	return 0;
}

/* Total bytes of l, or 0 on overflow; fills the per-field sizes. */
static size_t layout_bytes(const seed_unroll_layout *l, size_t obs_bytes, size_t eb[SEED_UNROLL_NFIELDS])
{
	size_t cells, total = round16(sizeof(seed_unroll)), b;
	if (__builtin_mul_overflow((size_t)l->rows, (size_t)(l->T + l->overlap), &cells))
		return 0;
	for (int i = 0; i < SEED_UNROLL_NFIELDS; i++) {
		eb[i] = elem_bytes(l, obs_bytes, i);
		if (eb[i] == 0 || __builtin_mul_overflow(cells, eb[i], &b) || b > SIZE_MAX / 4 ||
		    __builtin_add_overflow(total, round16(b), &total))
			return 0;
	}
	if (__builtin_mul_overflow((size_t)l->rows, (size_t)l->state_size * sizeof(float), &b) ||
	    __builtin_add_overflow(total, 2 * round16(b), &total))
		return 0;
	if (l->state_size > 0 &&
	    __builtin_add_overflow(total, 2 * round16((size_t)l->rows * sizeof(int32_t)), &total))
		return 0;
	return total;
}

size_t seed_unroll_bytes(const seed_unroll_layout *l)
{
	size_t ob, eb[SEED_UNROLL_NFIELDS];
	if (check_layout(l, &ob, NULL))
		return 0;
	return layout_bytes(l, ob, eb);
}

int seed_unroll_new(seed_unroll **out, const seed_unroll_layout *l, seed_err *err)
{
	size_t ob, eb[SEED_UNROLL_NFIELDS];
	int rc = check_layout(l, &ob, err);
	if (rc)
		return rc;
	size_t total = layout_bytes(l, ob, eb);
	if (total == 0)
		return seed_err_set(err, -E2BIG, "unroll: %d rows of %d steps: too large", l->rows,
		                    l->T + l->overlap);
	/* calloc: a step never recorded (logits of a uniform policy, state
	 * before the first) reads as zeros. */
	unsigned char *mem = seed_xcalloc(1, total);
	seed_unroll *u = (seed_unroll *)mem;
	u->mem = mem;
	u->layout = *l;
	u->steps = l->T + l->overlap;
	u->obs_bytes = ob;
	u->bytes = total;
	size_t at = round16(sizeof *u), cells = (size_t)l->rows * (size_t)u->steps;
	for (int i = 0; i < SEED_UNROLL_NFIELDS; i++) {
		u->elem_bytes[i] = eb[i];
		u->field[i] = mem + at;
		at += round16(cells * eb[i]);
	}
	size_t sb = (size_t)l->rows * (size_t)l->state_size * sizeof(float);
	u->state = (float *)(mem + at);
	u->next_state = (float *)(mem + at + round16(sb));
	at += 2 * round16(sb);
	if (l->state_size > 0) {
		size_t ab = round16((size_t)l->rows * sizeof(int32_t));
		u->prev_action = (int32_t *)(mem + at);
		u->next_prev_action = (int32_t *)(mem + at + ab);
		for (int b = 0; b < l->rows; b++)
			u->prev_action[b] = u->next_prev_action[b] = -1;
	}
	*out = u;
	return 0;
}

void seed_unroll_free(seed_unroll **u)
{
	if (!u || !*u)
		return;
	free((*u)->mem);
	*u = NULL;
}

/* Address of (row b, step t) of field i. */
static unsigned char *cell(const seed_unroll *u, int i, int b, int t)
{
	return (unsigned char *)u->field[i] + ((size_t)b * (size_t)u->steps + (size_t)t) * u->elem_bytes[i];
}

void seed_unroll_record_step(seed_unroll *u, const void *obs, const void *reward, const uint8_t *terminated,
                             const uint8_t *truncated)
{
	/* Row by row down the column of step t: each field's cell of row b + 1
	 * is L cells after that of row b (walked with pointers, not cell()). */
	const unsigned char *o = obs, *r = reward;
	int t = u->pos, B = u->layout.rows;
	size_t L = (size_t)u->steps, ob = u->obs_bytes;
	unsigned char *co = cell(u, SEED_UNROLL_OBS, 0, t), *cr = cell(u, SEED_UNROLL_REWARD, 0, t),
	              *cte = cell(u, SEED_UNROLL_TERMINATED, 0, t),
	              *ctr = cell(u, SEED_UNROLL_TRUNCATED, 0, t),
	              *cf = cell(u, SEED_UNROLL_FINAL_VALUE, 0, t);
	for (int b = 0; b < B; b++) {
		memcpy(co, o + (size_t)b * ob, ob);
		memcpy(cr, r + 4 * (size_t)b, 4);
		*cte = terminated[b];
		*ctr = truncated[b];
		memset(cf, 0, sizeof(float));
		co += L * ob;
		cr += L * 4;
		cte += L;
		ctr += L;
		cf += L * sizeof(float);
	}
}

void seed_unroll_set_final_value(seed_unroll *u, int row, float value)
{
	memcpy(cell(u, SEED_UNROLL_FINAL_VALUE, row, u->pos), &value, sizeof value);
}

bool seed_unroll_record_action(seed_unroll *u, const int32_t *action, const float *logits, int32_t version,
                               const float *state, const int32_t *prev_action)
{
	int t = u->pos, B = u->layout.rows;
	size_t lb = u->elem_bytes[SEED_UNROLL_LOGITS], L = (size_t)u->steps;
	unsigned char *ca = cell(u, SEED_UNROLL_ACTION, 0, t),
	              *cv = cell(u, SEED_UNROLL_POLICY_VERSION, 0, t),
	              *cl = cell(u, SEED_UNROLL_LOGITS, 0, t);
	for (int b = 0; b < B; b++) {
		memcpy(ca, &action[b], 4);
		memcpy(cv, &version, 4);
		if (logits)
			memcpy(cl, logits + (size_t)b * (size_t)u->layout.num_actions, lb);
		else
			memset(cl, 0, lb);
		ca += L * 4;
		cv += L * 4;
		cl += L * lb;
	}
	/* Keep the state of the step that is step 0 now or will be step 0 of
	 * the next unroll. */
	size_t sb = (size_t)B * (size_t)u->layout.state_size * sizeof(float);
	float *keep = t == 0 ? u->state : t == u->steps - u->layout.overlap ? u->next_state : NULL;
	if (keep && sb) {
		if (state)
			memcpy(keep, state, sb);
		else
			memset(keep, 0, sb);
		int32_t *pa = keep == u->state ? u->prev_action : u->next_prev_action;
		for (int b = 0; b < B; b++)
			pa[b] = prev_action ? prev_action[b] : -1;
	}
	u->pos++;
	return u->pos == u->steps;
}

bool seed_unroll_record_action_box(seed_unroll *u, const float *action, const float *params, int32_t version)
{
	int t = u->pos, B = u->layout.rows;
	size_t ab = u->elem_bytes[SEED_UNROLL_ACTION], pb = u->elem_bytes[SEED_UNROLL_LOGITS],
	       L = (size_t)u->steps;
	unsigned char *ca = cell(u, SEED_UNROLL_ACTION, 0, t),
	              *cv = cell(u, SEED_UNROLL_POLICY_VERSION, 0, t),
	              *cp = cell(u, SEED_UNROLL_LOGITS, 0, t);
	const unsigned char *a = (const unsigned char *)action, *pr = (const unsigned char *)params;
	for (int b = 0; b < B; b++) {
		memcpy(ca, a + (size_t)b * ab, ab);
		memcpy(cv, &version, 4);
		if (params)
			memcpy(cp, pr + (size_t)b * pb, pb);
		else
			memset(cp, 0, pb);
		ca += L * ab;
		cv += L * 4;
		cp += L * pb;
	}
	u->pos++;
	return u->pos == u->steps;
}

int seed_unroll_frame(const seed_unroll *u, seed_frame *f, uint32_t run, uint32_t actor, const int32_t *env)
{
	if (u->pos != u->steps)
		return -EINVAL;
	const seed_unroll_layout *l = &u->layout;
	int64_t B = l->rows, L = u->steps, S = l->state_size;
	int64_t shape[SEED_TENSOR_MAX_RANK] = {B, L};
	seed_frame_init(f, SEED_FRAME_UNROLL);
	int rc = seed_frame_set_int(f, "run", run);
	rc = rc ? rc : seed_frame_set_int(f, "actor", actor);
	rc = rc ? rc : seed_frame_set_int(f, "num_actions", l->num_actions);
	rc = rc ? rc : seed_frame_set_tensor(f, "env", seed_tensor_view((void *)env, SEED_DTYPE_I32, 1, &B));
	if (S > 0 && !rc) {
		int64_t ss[2] = {B, S};
		rc = seed_frame_set_tensor(f, "state", seed_tensor_view(u->state, SEED_DTYPE_F32, 2, ss));
		rc = rc ? rc
		        : seed_frame_set_tensor(f, "prev_action",
		                                seed_tensor_view(u->prev_action, SEED_DTYPE_I32, 1, &B));
	}
	const seed_unroll_field *table = fields_of(l);
	for (int i = 0; i < SEED_UNROLL_NFIELDS && !rc; i++) {
		const seed_unroll_field *fd = &table[i];
		seed_dtype dt = fd->dtype;
		int rank = 2;
		if (fd->extent == SEED_UNROLL_PER_ACTION) {
			shape[rank++] = l->num_actions;
		} else if (fd->extent == SEED_UNROLL_PER_PARAM) {
			shape[rank++] = 2 * (int64_t)l->num_actions;
		} else if (fd->extent == SEED_UNROLL_PER_OBS) {
			dt = l->obs_dtype;
			for (int k = 0; k < l->obs_rank; k++)
				shape[rank++] = l->obs_shape[k];
		}
		rc = seed_frame_set_tensor(f, fd->name, seed_tensor_view(u->field[i], dt, rank, shape));
	}
	if (l->frame_skip > 1 && !rc)
		rc = seed_frame_set_int(f, "frame_skip", l->frame_skip);
	return rc;
}

void seed_unroll_next(seed_unroll *u)
{
	int L = u->steps, O = u->layout.overlap;
	for (int i = 0; i < SEED_UNROLL_NFIELDS; i++)
		for (int b = 0; b < u->layout.rows; b++)
			memmove(cell(u, i, b, 0), cell(u, i, b, L - O), (size_t)O * u->elem_bytes[i]);
	float *s = u->state;
	u->state = u->next_state;
	u->next_state = s;
	int32_t *pa = u->prev_action;
	u->prev_action = u->next_prev_action;
	u->next_prev_action = pa;
	u->pos = O;
}

void seed_unroll_restart(seed_unroll *u)
{
	u->pos = 0;
}

void seed_unroll_transitions(int T, int B, float gamma, const float *reward, const uint8_t *terminated,
                             const uint8_t *truncated, const float *final_value, float *rewards,
                             float *discounts)
{
	for (int t = 0; t < T; t++)
		for (int b = 0; b < B; b++) {
			size_t now = (size_t)t * (size_t)B + (size_t)b, next = now + (size_t)B;
			float r = reward[next], disc = gamma;
			if (terminated[next]) {
				disc = 0;
			} else if (truncated[next]) {
				r += gamma * final_value[next];
				disc = 0;
			}
			rewards[now] = r;
			discounts[now] = disc;
		}
}
