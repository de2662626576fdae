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
 *     whose per-environment arrays are the environments' count long.
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	seed_frame f, fj;
	seed_err err;
	err.msg[0] = '\0';
	if (seed_frame_decode(&f, data, size, &err) == 0) {
		check_encoding(&f);
		check_step(&f);
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
		seed_frame_clear(&fj);
	}
	return 0;
}
