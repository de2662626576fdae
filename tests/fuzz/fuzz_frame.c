/* tests/fuzz/fuzz_frame.c: a libFuzzer target for the frame decoder and JSON.
 *
 * Built and run by tests/fuzz/fuzz.sh with -fsanitize=fuzzer,address,undefined
 * against the library sources.  Besides "no crash, no leak, no undefined
 * behaviour", it checks properties:
 *   - a refused input gets a non-empty message;
 *   - a decoded frame encodes, and the encoding decodes to the same frame;
 *   - a frame with a JSON form reads back from it to the same frame (NaNs
 *     compare by sign only: JSON does not keep payloads);
 *   - the input read as JSON, when it is a frame, survives msgpack;
 *   - a decoded step frame reads into its typed view (seed_frame_step),
 *     whose per-environment arrays are the environments' count long, and
 *     whose bounds, when it has them, are num_actions long, NaN-free and
 *     ordered (low <= high);
 *   - a decoded action frame holds i32 [K] or finite f32 [K, A] actions, and
 *     when its fields are the encoders' (run actor seq env0 policy_version
 *     action, reset optional, in that order) seed_frame_encode_action or
 *     seed_frame_encode_action_box writes seed_frame_encode's bytes;
 *   - a decoded unroll frame's action and logits have the widths of its
 *     space: [B, T+1] and [B, T+1, A] discrete, [B, T+1, A] and
 *     [B, T+1, 2A] Box (f32 actions).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "seed/frame.h"

static bool same_float(const unsigned char *a, const unsigned char *b, seed_dtype dt)
{
	if (dt == SEED_DTYPE_F32) {
		float x, y;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		if (isnan(x) || isnan(y))
			return isnan(x) && isnan(y) && signbit(x) == signbit(y);
		return memcmp(a, b, 4) == 0;
	}
	double x, y;
	memcpy(&x, a, 8);
	memcpy(&y, b, 8);
	if (isnan(x) || isnan(y))
		return isnan(x) && isnan(y) && signbit(x) == signbit(y);
	return memcmp(a, b, 8) == 0;
}

static bool same_frame(const seed_frame *a, const seed_frame *b)
{
	if (a->type != b->type || a->version != b->version || a->nfields != b->nfields)
		return false;
	for (int i = 0; i < a->nfields; i++) {
		const seed_field *x = &a->fields[i], *y = &b->fields[i];
		if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) != 0)
			return false;
		const seed_value *v = &x->value, *w = &y->value;
		if (v->kind != w->kind)
			return false;
		switch (v->kind) {
		case SEED_VALUE_NIL:
			break;
		case SEED_VALUE_BOOL:
			if (v->u.b != w->u.b)
				return false;
			break;
		case SEED_VALUE_INT:
			if (v->u.i != w->u.i)
				return false;
			break;
		case SEED_VALUE_FLOAT:
			if (!same_float((const unsigned char *)&v->u.f, (const unsigned char *)&w->u.f,
			                SEED_DTYPE_F64))
				return false;
			break;
		case SEED_VALUE_STR:
			if (v->u.str.len != w->u.str.len ||
			    (v->u.str.len && memcmp(v->u.str.ptr, w->u.str.ptr, v->u.str.len)))
				return false;
			break;
		case SEED_VALUE_TENSOR: {
			const seed_tensor *s = &v->u.tensor, *t = &w->u.tensor;
			if (s->dtype != t->dtype || s->rank != t->rank ||
			    memcmp(s->shape, t->shape, (size_t)s->rank * sizeof s->shape[0]) != 0)
				return false;
			size_t n = seed_tensor_nbytes(s), es = seed_dtype_size(s->dtype);
			const unsigned char *p = s->data, *q = t->data;
			if (s->dtype == SEED_DTYPE_F32 || s->dtype == SEED_DTYPE_F64) {
				for (size_t o = 0; o < n; o += es)
					if (!same_float(p + o, q + o, s->dtype))
						return false;
			} else if (n && memcmp(p, q, n) != 0) {
				return false;
			}
			break;
		}
		}
	}
	return true;
}

/* f encodes, and decodes back to itself. */
static void check_encoding(const seed_frame *f)
{
	seed_buf m = {0};
	seed_err err;
	seed_frame back;
	REQUIRE(seed_frame_encode(f, &m, &err) == 0);
	REQUIRE(seed_frame_decode(&back, m.data, m.len, &err) == 0);
	REQUIRE(same_frame(f, &back));
	seed_buf_free(&m);
}

/* A step frame that decoded has its view; every array of it covers envs. */
static void check_step(const seed_frame *f)
{
	seed_step st;
	seed_err err;
	if (f->type != SEED_FRAME_STEP) {
		REQUIRE(seed_frame_step(f, &st, &err) == -SEED_ETYPE);
		return;
	}
	REQUIRE(seed_frame_step(f, &st, &err) == 0);
	REQUIRE(st.envs == st.obs->shape[0]);
	REQUIRE(seed_frame_tensor(f, "reward")->shape[0] == st.envs);
	volatile uint8_t sum = 0;
	for (int64_t b = 0; b < st.envs; b++) /* ASan reads every byte the view promises */
		sum += st.terminated[b] + st.truncated[b] + st.reward[4 * b + 3] + st.ep_return[4 * b + 3] +
		       st.ep_length[4 * b + 3];
	(void)sum;
	REQUIRE(!st.action_low == !st.action_high);
	if (!st.action_low)
		return;
	REQUIRE(seed_frame_tensor(f, "action_low")->shape[0] == st.num_actions &&
	        seed_frame_tensor(f, "action_high")->shape[0] == st.num_actions);
	for (int32_t i = 0; i < st.num_actions; i++) {
		float lo, hi;
		memcpy(&lo, st.action_low + 4 * (size_t)i, 4);
		memcpy(&hi, st.action_high + 4 * (size_t)i, 4);
		REQUIRE(!isnan(lo) && !isnan(hi) && lo <= hi);
	}
}

static bool is_named(const seed_field *fd, const char *name)
{
	return fd->name_len == strlen(name) && memcmp(fd->name, name, fd->name_len) == 0;
}

/* An action frame's actions, and the hot-path encoders against the generic
 * one (on aligned copies: the decoded data may be unaligned). */
static void check_action(const seed_frame *f)
{
	const seed_tensor *a = seed_frame_tensor(f, "action");
	bool box = a->dtype == SEED_DTYPE_F32;
	REQUIRE(box ? a->rank == 2 : a->dtype == SEED_DTYPE_I32 && a->rank == 1);
	int64_t K = a->shape[0], A = box ? a->shape[1] : 1;
	size_t n = (size_t)(K * A);
	void *acts = malloc(4 * n);
	memcpy(acts, a->data, 4 * n);
	for (size_t i = 0; box && i < n; i++)
		REQUIRE(isfinite(((const float *)acts)[i]));
	static const char *const order[] = {"run",    "actor", "seq",       "env0", "policy_version",
	                                    "action", "reset", "reset_seed"};
	const seed_tensor *r = seed_frame_tensor(f, "reset"), *rsd = seed_frame_tensor(f, "reset_seed");
	bool canonical = f->nfields == 6 + (r != NULL) + (rsd != NULL);
	for (int i = 0, k = 0; canonical && i < f->nfields; i++, k++) {
		if (k == 6 && !r)
			k++; /* reset_seed without reset */
		canonical = is_named(&f->fields[i], order[k]);
	}
	if (canonical) {
		uint8_t *reset = r ? malloc((size_t)K) : NULL;
		if (r)
			memcpy(reset, r->data, (size_t)K);
		int64_t *seeds = rsd ? malloc(8 * (size_t)K) : NULL;
		if (rsd)
			memcpy(seeds, rsd->data, 8 * (size_t)K);
		seed_buf want = {0}, got = {0};
		seed_err err;
		REQUIRE(seed_frame_encode(f, &want, &err) == 0);
		uint32_t run = (uint32_t)seed_frame_int(f, "run", 0),
		         actor = (uint32_t)seed_frame_int(f, "actor", 0);
		int64_t seq = seed_frame_int(f, "seq", 0), version = seed_frame_int(f, "policy_version", 0);
		int32_t env0 = (int32_t)seed_frame_int(f, "env0", 0);
		if (box)
			REQUIRE(seed_frame_encode_action_box(&got, run, actor, seq, env0, version, acts,
			                                     reset, seeds, K, A, &err) == 0);
		else
			REQUIRE(seed_frame_encode_action(&got, run, actor, seq, env0, version, acts, reset,
			                                 seeds, K, &err) == 0);
		REQUIRE(got.len == want.len && memcmp(got.data, want.data, got.len) == 0);
		seed_buf_free(&want);
		seed_buf_free(&got);
		free(reset);
		free(seeds);
	}
	free(acts);
}

/* An unroll frame's action and logits: the widths of its space. */
static void check_unroll(const seed_frame *f)
{
	const seed_tensor *a = seed_frame_tensor(f, "action"), *l = seed_frame_tensor(f, "logits");
	int64_t A = seed_frame_int(f, "num_actions", -1);
	bool box = a->dtype == SEED_DTYPE_F32;
	const seed_unroll_field *table = box ? seed_frame_unroll_box_fields : seed_frame_unroll_fields;
	REQUIRE(a->dtype == table[SEED_UNROLL_ACTION].dtype && l->dtype == SEED_DTYPE_F32 && l->rank == 3);
	if (box)
		REQUIRE(a->rank == 3 && a->shape[2] == A && l->shape[2] == 2 * A);
	else
		REQUIRE(a->rank == 2 && l->shape[2] == A);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	seed_frame f, fj;
	seed_err err;
	err.msg[0] = '\0';
	if (seed_frame_decode(&f, data, size, &err) == 0) {
		check_encoding(&f);
		check_step(&f);
		if (f.type == SEED_FRAME_ACTION)
			check_action(&f);
		if (f.type == SEED_FRAME_UNROLL)
			check_unroll(&f);
		seed_buf js = {0};
		if (seed_frame_to_json(&f, &js, &err) == 0) {
			REQUIRE(seed_frame_from_json(&fj, (const char *)js.data, js.len, &err) == 0);
			REQUIRE(same_frame(&f, &fj));
			seed_frame_clear(&fj);
		}
		seed_buf_free(&js);
		seed_frame_clear(&f);
	} else {
		REQUIRE_MESSAGE(err);
		REQUIRE(f.type == SEED_FRAME_INVALID && f.nfields == 0 && f.storage == NULL);
	}
	if (seed_frame_from_json(&fj, (const char *)data, size, &err) == 0) {
		check_encoding(&fj);
		check_step(&fj);
		if (fj.type == SEED_FRAME_ACTION)
			check_action(&fj);
		seed_frame_clear(&fj);
	}
	return 0;
}
