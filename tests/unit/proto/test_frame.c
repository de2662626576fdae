/* tests/unit/proto/test_frame.c: the frame codec, JSON and the stream reader.
 *
 * Golden frames come from tests/golden/golden_frames.h, packed by Python's msgpack
 * with numpy tensor bytes (tests/golden/make_golden.py): decoding them checks
 * our reading of the format against another implementation, and their JSON
 * (Python's json, float32 elements through numpy's shortest repr) checks
 * seed_frame_to_json.  The bad frames there are one named case each: the
 * error code and the parts of the message (frame type, field, what) must
 * match.  The rest builds frames with the API and round-trips them through
 * msgpack and JSON, comparing bit for bit; seed_frame_encode_action is
 * checked against Python's bytes, bytes worked by hand and the generic
 * encoder.
 */
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memory_managed.h"
#include "seed/frame.h"
#include "seed/rng.h"
#include "tap.h"

#include "golden_frames.h"

static void run_named(const char *prefix, const char *name, void (*fn)(const void *), const void *arg)
{
	char buf[160];
	snprintf(buf, sizeof buf, "%s_%s", prefix, name);
	tap_case_failed = 0;
	fn(arg);
	tap_result(buf);
}

/* ---- comparing ------------------------------------------------------------ */

static bool same_value(const seed_value *a, const seed_value *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case SEED_VALUE_NIL:
		return true;
	case SEED_VALUE_BOOL:
		return a->u.b == b->u.b;
	case SEED_VALUE_INT:
		return a->u.i == b->u.i;
	case SEED_VALUE_FLOAT:
		return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0;
	case SEED_VALUE_STR:
		return a->u.str.len == b->u.str.len && memcmp(a->u.str.ptr, b->u.str.ptr, a->u.str.len) == 0;
	case SEED_VALUE_TENSOR: {
		const seed_tensor *x = &a->u.tensor, *y = &b->u.tensor;
		if (x->dtype != y->dtype || x->rank != y->rank)
			return false;
		for (int i = 0; i < x->rank; i++)
			if (x->shape[i] != y->shape[i])
				return false;
		size_t n = seed_tensor_nbytes(x);
		return n == 0 || memcmp(x->data, y->data, n) == 0;
	}
	}
	return false;
}

/* Same type, version and fields in the same order, values bit for bit. */
static bool same_frame(const seed_frame *a, const seed_frame *b)
{
	if (a->type != b->type || a->version != b->version || a->nfields != b->nfields)
		return false;
	for (int i = 0; i < a->nfields; i++) {
		const seed_field *x = &a->fields[i], *y = &b->fields[i];
		if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) != 0)
			return false;
		if (!same_value(&x->value, &y->value)) {
			printf("# field '%.*s' differs\n", (int)x->name_len, x->name);
			return false;
		}
	}
	return true;
}

/* JSON values equal by value: numbers as numbers (an integer equals the
 * real of the same value), objects with the same keys in the same order. */
static bool json_same(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return false;
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		       memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!json_same(json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	case JSON_OBJECT: {
		if (json_object_size(a) != json_object_size(b))
			return false;
		void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
		for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
		                 ib = json_object_iter_next((json_t *)b, ib)) {
			if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib)) != 0) {
				printf("# key '%s' where '%s' was expected\n", json_object_iter_key(ia),
				       json_object_iter_key(ib));
				return false;
			}
			if (!json_same(json_object_iter_value(ia), json_object_iter_value(ib))) {
				printf("# value of '%s' differs\n", json_object_iter_key(ia));
				return false;
			}
		}
		return true;
	}
	default:
		return true; /* true, false, null */
	}
}

static bool json_text_same(const char *got, size_t n, const char *want)
{
	json_error_t e;
	json_t *a = json_loadb(got, n, JSON_ALLOW_NUL, &e), *b = json_loads(want, JSON_ALLOW_NUL, &e);
	bool ok = a && b && json_same(a, b);
	if (!a)
		printf("# our JSON does not parse: %s\n", e.text);
	json_decref(a);
	json_decref(b);
	return ok;
}

static bool has(const char *msg, const char *part)
{
	return strstr(msg, part) != NULL;
}

/* ---- golden frames from Python ------------------------------------------ */

static void golden_decode(const void *arg)
{
	const struct golden_frame *g = arg;
	/* At an odd address, so tensor data is unaligned. */
	unsigned char *buf = malloc(g->len + 1);
	memcpy(buf + 1, g->bytes, g->len);
	seed_frame f;
	seed_err err = {""};
	int rc = seed_frame_decode(&f, buf + 1, g->len, &err);
	CHECK_MSG(rc == 0, "decode: %s", err.msg);
	if (rc == 0) {
		CHECK(strcmp(seed_frame_type_name(f.type), g->type) == 0);
		CHECK(f.version == 1);
		CHECK(f.storage == NULL);
		CHECK(f.nfields == g->nfields);
		for (int i = 0; i < g->nfields && i < f.nfields; i++) {
			const struct golden_field *x = &g->fields[i];
			const seed_field *y = &f.fields[i];
			CHECK_MSG(y->name_len == strlen(x->name) &&
			              memcmp(y->name, x->name, y->name_len) == 0,
			          "field %d is '%.*s', expected '%s'", i, (int)y->name_len, y->name, x->name);
			const seed_value *v = &y->value;
			CHECK_MSG((int)v->kind == x->kind, "field %s: kind %d, expected %d", x->name, v->kind,
			          x->kind);
			if ((int)v->kind != x->kind)
				continue;
			switch (v->kind) {
			case SEED_VALUE_BOOL:
				CHECK(v->u.b == (x->i != 0));
				break;
			case SEED_VALUE_INT:
				CHECK_MSG(v->u.i == x->i, "%s: %lld", x->name, (long long)v->u.i);
				break;
			case SEED_VALUE_FLOAT:
				CHECK_MSG(v->u.f == x->f, "%s: %.17g", x->name, v->u.f);
				break;
			case SEED_VALUE_STR:
				CHECK(v->u.str.len == x->slen && memcmp(v->u.str.ptr, x->s, x->slen) == 0);
				/* Zero copy: the string is in the input. */
				CHECK((const unsigned char *)v->u.str.ptr >= buf &&
				      (const unsigned char *)v->u.str.ptr < buf + g->len + 1);
				break;
			case SEED_VALUE_TENSOR: {
				const seed_tensor *t = &v->u.tensor;
				CHECK_MSG(strcmp(seed_dtype_name(t->dtype), x->dtype) == 0, "%s: dtype %s",
				          x->name, seed_dtype_name(t->dtype));
				CHECK(t->rank == x->rank);
				for (int d = 0; d < x->rank && d < t->rank; d++)
					CHECK(t->shape[d] == x->shape[d]);
				CHECK(seed_tensor_nbytes(t) == x->nbytes);
				if (x->nbytes) {
					CHECK(memcmp(t->data, x->data, x->nbytes) == 0);
					CHECK((unsigned char *)t->data > buf &&
					      (unsigned char *)t->data < buf + g->len + 1);
				}
				break;
			}
			default:
				break;
			}
		}
	}
	seed_frame_clear(&f);
	free(buf);
}

static void golden_json(const void *arg)
{
	const struct golden_frame *g = arg;
	seed_frame f, back;
	seed_err err = {""};
	seed_buf js = {0}, m1 = {0}, m2 = {0};
	CHECK(seed_frame_decode(&f, g->bytes, g->len, &err) == 0);
	int rc = seed_frame_to_json(&f, &js, &err);
	CHECK_MSG(rc == 0, "to_json: %s", err.msg);
	if (rc == 0) {
		CHECK_MSG(json_text_same((char *)js.data, js.len, g->json), "got %.*s", (int)js.len, js.data);
		/* And back: the same frame, bit for bit, and the same bytes. */
		rc = seed_frame_from_json(&back, (char *)js.data, js.len, &err);
		CHECK_MSG(rc == 0, "from_json: %s", err.msg);
		if (rc == 0) {
			CHECK(same_frame(&f, &back));
			CHECK(seed_frame_encode(&f, &m1, &err) == 0);
			CHECK(seed_frame_encode(&back, &m2, &err) == 0);
			CHECK(m1.len == m2.len && memcmp(m1.data, m2.data, m1.len) == 0);
			seed_frame_clear(&back);
		}
		/* Python's JSON reads to the same frame too. */
		rc = seed_frame_from_json(&back, g->json, strlen(g->json), &err);
		CHECK_MSG(rc == 0, "from_json(python): %s", err.msg);
		if (rc == 0) {
			CHECK(same_frame(&f, &back));
			seed_frame_clear(&back);
		}
	}
	seed_frame_clear(&f);
	seed_buf_free(&js);
	seed_buf_free(&m1);
	seed_buf_free(&m2);
}

/* Our encoding of a golden frame decodes to the same frame. */
static void golden_reencode(const void *arg)
{
	const struct golden_frame *g = arg;
	seed_frame f, back;
	seed_err err = {""};
	seed_buf out = {0};
	CHECK(seed_frame_decode(&f, g->bytes, g->len, &err) == 0);
	int rc = seed_frame_encode(&f, &out, &err);
	CHECK_MSG(rc == 0, "encode: %s", err.msg);
	rc = seed_frame_decode(&back, out.data, out.len, &err);
	CHECK_MSG(rc == 0, "decode: %s", err.msg);
	CHECK(rc == 0 && same_frame(&f, &back));
	seed_frame_clear(&back);
	seed_frame_clear(&f);
	seed_buf_free(&out);
}

static void golden_bad_case(const void *arg)
{
	const struct golden_bad *b = arg;
	seed_frame f;
	seed_err err = {"untouched"};
	/* A copy: the decoder must not read past len. */
	unsigned char *buf = malloc(b->len ? b->len : 1);
	memcpy(buf, b->bytes, b->len);
	int rc = seed_frame_decode(&f, buf, b->len, &err);
	CHECK_MSG(rc == b->code, "code %d (%s), expected %d", rc, err.msg, b->code);
	for (int i = 0; i < 4 && b->parts[i]; i++)
		CHECK_MSG(has(err.msg, b->parts[i]), "message '%s' lacks '%s'", err.msg, b->parts[i]);
	/* Left cleared. */
	CHECK(f.type == SEED_FRAME_INVALID && f.nfields == 0 && f.storage == NULL);
	free(buf);
}

/* ---- frames built with the API ------------------------------------------- */

enum { K = 5, B = 3, T1 = 4, A = 6, N = 2, P = 7 };

/* Buffers the frames below point into. */
static struct {
	float obs[K][3], final_obs[K][3], reward[K], ep_return[K];
	uint8_t terminated[K], truncated[K];
	int32_t ep_length[K], action[K];
	int32_t env[B], u_action[B][T1], u_pv[B][T1];
	uint8_t u_obs[B][T1][2][2], u_term[B][T1], u_trunc[B][T1];
	float u_reward[B][T1], u_fv[B][T1], logits[B][T1][A];
	int32_t e_env[N], e_len[N];
	float e_ret[N];
	uint8_t e_trunc[N];
	float params[P];
} d;

static void fill(void *p, size_t n, uint64_t seed)
{
	seed_rng r;
	seed_rng_init(&r, seed, 0);
	unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		c[i] = (unsigned char)seed_rng_u64(&r);
}

static void fill_floats(float *p, size_t n, uint64_t seed)
{
	seed_rng r;
	seed_rng_init(&r, seed, 1);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)seed_rng_normal(&r);
}

static void setup_data(void)
{
	fill_floats(&d.obs[0][0], K * 3, 1);
	fill_floats(d.reward, K, 2);
	fill_floats(d.ep_return, K, 3);
	fill_floats(&d.u_reward[0][0], B * T1, 4);
	fill_floats(&d.u_fv[0][0], B * T1, 5);
	fill_floats(&d.logits[0][0][0], B * T1 * A, 6);
	fill_floats(d.e_ret, N, 7);
	fill_floats(d.params, P, 8);
	fill(&d.u_obs, sizeof d.u_obs, 9);
	memset(d.final_obs, 0, sizeof d.final_obs);
	for (int i = 0; i < K; i++) {
		d.terminated[i] = i == 1;
		d.truncated[i] = i == 3;
		d.ep_length[i] = 10 * i;
		d.action[i] = i % 2;
	}
	for (int j = 0; j < 3; j++)
		d.final_obs[3][j] = 0.5f * (float)j;
	for (int b = 0; b < B; b++) {
		d.env[b] = 10 + b;
		for (int t = 0; t < T1; t++) {
			d.u_action[b][t] = (b + t) % A;
			d.u_pv[b][t] = t;
			d.u_term[b][t] = t == 2;
			d.u_trunc[b][t] = 0;
		}
	}
	for (int i = 0; i < N; i++) {
		d.e_env[i] = i;
		d.e_len[i] = 100 + i;
		d.e_trunc[i] = (uint8_t)i;
	}
}

#define VIEW(p, dt, ...)                                                                                     \
	seed_tensor_view((void *)(p), dt, sizeof((int64_t[]){__VA_ARGS__}) / 8, (int64_t[]){__VA_ARGS__})

static void build_step(seed_frame *f)
{
	seed_frame_init(f, SEED_FRAME_STEP);
	seed_frame_set_int(f, "run", 4000000000LL);
	seed_frame_set_int(f, "actor", 3);
	seed_frame_set_int(f, "seq", 77);
	seed_frame_set_int(f, "env0", 40);
	seed_frame_set_int(f, "num_actions", 2);
	seed_frame_set_tensor(f, "obs", VIEW(d.obs, SEED_DTYPE_F32, K, 3));
	seed_frame_set_tensor(f, "reward", VIEW(d.reward, SEED_DTYPE_F32, K));
	seed_frame_set_tensor(f, "terminated", VIEW(d.terminated, SEED_DTYPE_U8, K));
	seed_frame_set_tensor(f, "truncated", VIEW(d.truncated, SEED_DTYPE_U8, K));
	seed_frame_set_tensor(f, "ep_return", VIEW(d.ep_return, SEED_DTYPE_F32, K));
	seed_frame_set_tensor(f, "ep_length", VIEW(d.ep_length, SEED_DTYPE_I32, K));
	seed_frame_set_tensor(f, "final_obs", VIEW(d.final_obs, SEED_DTYPE_F32, K, 3));
}

static void build_action(seed_frame *f)
{
	seed_frame_init(f, SEED_FRAME_ACTION);
	seed_frame_set_int(f, "run", 1);
	seed_frame_set_int(f, "actor", 3);
	seed_frame_set_int(f, "seq", 77);
	seed_frame_set_int(f, "env0", 40);
	seed_frame_set_int(f, "policy_version", 12);
	seed_frame_set_tensor(f, "action", VIEW(d.action, SEED_DTYPE_I32, K));
}

static void build_unroll(seed_frame *f)
{
	seed_frame_init(f, SEED_FRAME_UNROLL);
	seed_frame_set_int(f, "run", 1);
	seed_frame_set_int(f, "actor", 0);
	seed_frame_set_int(f, "num_actions", A);
	seed_frame_set_tensor(f, "env", VIEW(d.env, SEED_DTYPE_I32, B));
	seed_frame_set_tensor(f, "obs", VIEW(d.u_obs, SEED_DTYPE_U8, B, T1, 2, 2));
	seed_frame_set_tensor(f, "action", VIEW(d.u_action, SEED_DTYPE_I32, B, T1));
	seed_frame_set_tensor(f, "reward", VIEW(d.u_reward, SEED_DTYPE_F32, B, T1));
	seed_frame_set_tensor(f, "terminated", VIEW(d.u_term, SEED_DTYPE_U8, B, T1));
	seed_frame_set_tensor(f, "truncated", VIEW(d.u_trunc, SEED_DTYPE_U8, B, T1));
	seed_frame_set_tensor(f, "final_value", VIEW(d.u_fv, SEED_DTYPE_F32, B, T1));
	seed_frame_set_tensor(f, "policy_version", VIEW(d.u_pv, SEED_DTYPE_I32, B, T1));
	seed_frame_set_tensor(f, "logits", VIEW(d.logits, SEED_DTYPE_F32, B, T1, A));
}

static void build_episode(seed_frame *f)
{
	seed_frame_init(f, SEED_FRAME_EPISODE);
	seed_frame_set_int(f, "run", 1);
	seed_frame_set_int(f, "actor", 0);
	seed_frame_set_tensor(f, "env", VIEW(d.e_env, SEED_DTYPE_I32, N));
	seed_frame_set_tensor(f, "return", VIEW(d.e_ret, SEED_DTYPE_F32, N));
	seed_frame_set_tensor(f, "length", VIEW(d.e_len, SEED_DTYPE_I32, N));
	seed_frame_set_tensor(f, "truncated", VIEW(d.e_trunc, SEED_DTYPE_U8, N));
}

static void build_params(seed_frame *f)
{
	seed_frame_init(f, SEED_FRAME_PARAMS);
	seed_frame_set_int(f, "policy_version", 9);
	seed_frame_set_int(f, "run", 1);
	seed_frame_set_tensor(f, "params", VIEW(d.params, SEED_DTYPE_F32, P));
	seed_frame_set_str(f, "model", "{\"layers\": [\"linear\", 4, 2]}");
}

static void build_error(seed_frame *f)
{
	seed_frame_init(f, SEED_FRAME_ERROR);
	seed_frame_set_int(f, "code", -SEED_EFRAME);
	seed_frame_set_str(f, "message", "step frame: field 'reward': missing");
	seed_frame_set_str(f, "frame", "step");
}

/* msgpack and JSON round trips of f, bit for bit. */
static void roundtrip(const seed_frame *f)
{
	seed_err err = {""};
	seed_buf m = {0}, m2 = {0}, js = {0};
	seed_frame back, fj;
	int rc = seed_frame_encode(f, &m, &err);
	CHECK_MSG(rc == 0, "encode: %s", err.msg);
	rc = seed_frame_decode(&back, m.data, m.len, &err);
	CHECK_MSG(rc == 0, "decode: %s", err.msg);
	CHECK(rc == 0 && same_frame(f, &back));
	rc = seed_frame_to_json(f, &js, &err);
	CHECK_MSG(rc == 0, "to_json: %s", err.msg);
	rc = seed_frame_from_json(&fj, (char *)js.data, js.len, &err);
	CHECK_MSG(rc == 0, "from_json: %s", err.msg);
	if (rc == 0) {
		CHECK(same_frame(f, &fj));
		CHECK(seed_frame_encode(&fj, &m2, &err) == 0);
		CHECK(m.len == m2.len && memcmp(m.data, m2.data, m.len) == 0);
		seed_frame_clear(&fj);
	}
	seed_buf_free(&m);
	seed_buf_free(&m2);
	seed_buf_free(&js);
}

/* A step frame's typed view, decoded from the wire: every field where the
 * frame put it (values set by build_step above), final_obs optional, and
 * the refusals named by field. */
static void t_step_view(void)
{
	seed_frame f, back;
	seed_buf m = {0};
	seed_err err;
	seed_step st;
	build_step(&f);
	CHECK(seed_frame_encode(&f, &m, &err) == 0);
	CHECK(seed_frame_decode(&back, m.data, m.len, &err) == 0);
	int rc = seed_frame_step(&back, &st, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	CHECK(st.run == 4000000000u && st.actor == 3 && st.seq == 77 && st.env0 == 40 && st.num_actions == 2);
	CHECK(st.envs == K && st.obs->rank == 2 && st.obs->shape[1] == 3);
	CHECK(memcmp(st.obs->data, d.obs, sizeof d.obs) == 0);
	CHECK(memcmp(st.reward, d.reward, sizeof d.reward) == 0);
	CHECK(memcmp(st.terminated, d.terminated, sizeof d.terminated) == 0);
	CHECK(memcmp(st.truncated, d.truncated, sizeof d.truncated) == 0);
	CHECK(memcmp(st.ep_return, d.ep_return, sizeof d.ep_return) == 0);
	CHECK(memcmp(st.ep_length, d.ep_length, sizeof d.ep_length) == 0);
	CHECK(st.final_obs && memcmp(st.final_obs->data, d.final_obs, sizeof d.final_obs) == 0);
	CHECK(st.action_low == NULL && st.action_high == NULL); /* discrete */
	/* The view points into the decoded message, not at a copy. */
	CHECK((const unsigned char *)st.reward >= m.data &&
	      (const unsigned char *)st.reward < m.data + m.len);
	seed_frame_clear(&back);

	/* Without final_obs (the schema's one optional field). */
	seed_frame g;
	seed_frame_init(&g, SEED_FRAME_STEP);
	for (int i = 0; i < f.nfields; i++)
		if (f.fields[i].name_len != 9 || memcmp(f.fields[i].name, "final_obs", 9) != 0)
			g.fields[g.nfields++] = f.fields[i];
	CHECK(seed_frame_step(&g, &st, &err) == 0 && st.final_obs == NULL && st.envs == K);

	/* A hand-built frame that lacks a field, or has one of another kind. */
	g.nfields = 0;
	for (int i = 0; i < f.nfields; i++)
		if (f.fields[i].name_len != 9 || memcmp(f.fields[i].name, "ep_return", 9) != 0)
			g.fields[g.nfields++] = f.fields[i];
	rc = seed_frame_step(&g, &st, &err);
	CHECK_MSG(rc == -SEED_EFRAME && strcmp(err.msg, "step frame: field 'ep_return': missing") == 0,
	          "%d %s", rc, err.msg);
	seed_frame_set_str(&g, "ep_return", "ten");
	rc = seed_frame_step(&g, &st, &err);
	CHECK_MSG(rc == -SEED_EFRAME &&
	              strcmp(err.msg, "step frame: field 'ep_return': of another kind") == 0,
	          "%d %s", rc, err.msg);
	seed_frame a;
	build_action(&a);
	rc = seed_frame_step(&a, &st, &err);
	CHECK_MSG(rc == -SEED_ETYPE && strcmp(err.msg, "action frame: not a step frame") == 0, "%d %s", rc,
	          err.msg);
	seed_buf_free(&m);
}

/* A step frame of a Box action space: the bounds in the view, A floats
 * each, pointing into the message; a hand-built frame with one bound only
 * is refused by name. */
static void t_step_view_box(void)
{
	static const float low[2] = {-1.0f, -INFINITY}, high[2] = {1.0f, 0.5f};
	seed_frame f, back;
	seed_buf m = {0};
	seed_err err;
	seed_step st;
	build_step(&f); /* num_actions 2 */
	seed_frame_set_tensor(&f, "action_low", VIEW(low, SEED_DTYPE_F32, 2));
	seed_frame_set_tensor(&f, "action_high", VIEW(high, SEED_DTYPE_F32, 2));
	int rc = seed_frame_encode(&f, &m, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	CHECK(rc == 0 && seed_frame_decode(&back, m.data, m.len, &err) == 0);
	rc = seed_frame_step(&back, &st, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	CHECK(rc == 0 && st.num_actions == 2 && st.envs == K && st.final_obs);
	CHECK(rc == 0 && st.action_low && memcmp(st.action_low, low, sizeof low) == 0);
	CHECK(rc == 0 && st.action_high && memcmp(st.action_high, high, sizeof high) == 0);
	CHECK(rc == 0 && st.action_low >= m.data && st.action_high < m.data + m.len);
	seed_frame_clear(&back);
	roundtrip(&f);

	/* Hand-built, never validated: one bound without the other. */
	f.nfields--;
	rc = seed_frame_step(&f, &st, &err);
	CHECK_MSG(rc == -SEED_EFRAME &&
	              strcmp(err.msg, "step frame: field 'action_low': present without 'action_high' "
	                              "(they come together or not at all)") == 0,
	          "%d %s", rc, err.msg);
	/* The schema: bounds of A = num_actions elements, low <= high. */
	seed_frame_set_tensor(&f, "action_high", VIEW(high, SEED_DTYPE_F32, 1));
	rc = seed_frame_validate(&f, &err);
	CHECK_MSG(rc == -SEED_EFRAME &&
	              strcmp(err.msg, "step frame: field 'action_high': shape [1], expected "
	                              "[A]: dimension 0 is 1, but A = 2 (from 'num_actions')") == 0,
	          "%d %s", rc, err.msg);
	seed_frame_set_tensor(&f, "action_high", VIEW(low, SEED_DTYPE_F32, 2));
	seed_frame_set_tensor(&f, "action_low", VIEW(high, SEED_DTYPE_F32, 2));
	rc = seed_frame_validate(&f, &err);
	CHECK_MSG(rc == -SEED_EFRAME && strcmp(err.msg, "step frame: field 'action_low': element 0 is 1, "
	                                                "above action_high's -1") == 0,
	          "%d %s", rc, err.msg);
	seed_buf_free(&m);
}

/* The frame skip: an optional int >= 1 on step, unroll and episode frames,
 * read by the step view (1 when absent, as every frame before it) and
 * kept by both codecs; 0, a negative or a float is refused, naming the
 * field. */
static void t_frame_skip(void)
{
	seed_frame f, back;
	seed_buf m = {0};
	seed_err err = {""};
	seed_step st;
	build_step(&f);
	CHECK(seed_frame_step(&f, &st, &err) == 0 && st.frame_skip == 1);
	seed_frame_set_int(&f, "frame_skip", 4);
	int rc = seed_frame_encode(&f, &m, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	CHECK(rc == 0 && seed_frame_decode(&back, m.data, m.len, &err) == 0);
	rc = seed_frame_step(&back, &st, &err);
	CHECK_MSG(rc == 0 && st.frame_skip == 4, "%d %s", rc, err.msg);
	CHECK(seed_frame_int(&back, "frame_skip", 1) == 4);
	seed_frame_clear(&back);
	roundtrip(&f);
	seed_frame u, e;
	build_unroll(&u);
	build_episode(&e);
	CHECK(seed_frame_int(&u, "frame_skip", 1) == 1 && seed_frame_int(&e, "frame_skip", 1) == 1);
	seed_frame_set_int(&u, "frame_skip", 4);
	seed_frame_set_int(&e, "frame_skip", 1000);
	roundtrip(&u);
	roundtrip(&e);
	static const struct {
		seed_frame_type type;
		int64_t value;
		const char *msg;
	} bad[] = {
	    {SEED_FRAME_STEP, 0, "step frame: field 'frame_skip': 0 out of range [1, 2147483647]"},
	    {SEED_FRAME_STEP, -4, "step frame: field 'frame_skip': -4 out of range [1, 2147483647]"},
	    {SEED_FRAME_UNROLL, 0, "unroll frame: field 'frame_skip': 0 out of range [1, 2147483647]"},
	    {SEED_FRAME_EPISODE, -1, "episode frame: field 'frame_skip': -1 out of range [1, 2147483647]"},
	    {SEED_FRAME_EPISODE, 1LL << 31,
	     "episode frame: field 'frame_skip': 2147483648 out of range [1, 2147483647]"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		seed_frame g;
		if (bad[i].type == SEED_FRAME_STEP)
			build_step(&g);
		else if (bad[i].type == SEED_FRAME_UNROLL)
			build_unroll(&g);
		else
			build_episode(&g);
		seed_frame_set_int(&g, "frame_skip", bad[i].value);
		seed_buf_reset(&m);
		rc = seed_frame_encode(&g, &m, &err);
		CHECK_MSG(rc == -SEED_EFRAME && strcmp(err.msg, bad[i].msg) == 0, "case %zu: %d '%s'", i, rc,
		          err.msg);
	}
	seed_frame_set_float(&f, "frame_skip", 4.0);
	rc = seed_frame_validate(&f, &err);
	CHECK_MSG(rc == -SEED_EFRAME &&
	              strcmp(err.msg, "step frame: field 'frame_skip': float, expected int") == 0,
	          "%d %s", rc, err.msg);
	/* A hand-built frame, never validated: the view refuses it too. */
	seed_frame_set_int(&f, "frame_skip", 0);
	rc = seed_frame_step(&f, &st, &err);
	CHECK_MSG(rc == -SEED_EFRAME &&
	              strcmp(err.msg, "step frame: field 'frame_skip': 0, expected >= 1") == 0,
	          "%d %s", rc, err.msg);
	seed_buf_free(&m);
}

static void t_roundtrip_step(void)
{
	seed_frame f;
	build_step(&f);
	seed_frame_set_float(&f, "temperature", 0.25);
	seed_frame_set_bool(&f, "greedy", false);
	seed_frame_set_nil(&f, "comment");
	roundtrip(&f);
}

/* A tensor without elements prints as "data":[] whatever its shape: an
 * extra field shaped [2^62, 0] once made to_json nest 2^62 empty lists
 * (a fuzzer finding).  It must print at once and round-trip. */
static void t_roundtrip_empty_tensor_huge_dim(void)
{
	seed_frame f;
	build_step(&f);
	static const float none[1];
	seed_frame_set_tensor(&f, "x", VIEW(none, SEED_DTYPE_F32, INT64_C(1) << 62, 0));
	seed_frame_set_tensor(&f, "y", VIEW(none, SEED_DTYPE_U8, 3, 0, 2));
	seed_buf js;
	seed_buf_init(&js);
	seed_err err;
	CHECK(seed_frame_to_json(&f, &js, &err) == 0);
	CHECK(js.len < 4096);
	seed_buf_append(&js, "", 1);
	CHECK(strstr((char *)js.data,
	             "\"x\":{\"dtype\":\"f32\",\"shape\":[4611686018427387904,0],\"data\":[]}"));
	CHECK(strstr((char *)js.data, "\"y\":{\"dtype\":\"u8\",\"shape\":[3,0,2],\"data\":[]}"));
	seed_buf_free(&js);
	roundtrip(&f);
	/* Found by fuzzing (fuzz_stream): dimensions whose product overflows
	 * before the zero one; the count is 0, taken without overflow. */
	static const char line[] =
	    "{\"type\":\"params\",\"version\":1,\"policy_version\":1,\"run\":1,"
	    "\"params\":{\"dtype\":\"f32\",\"shape\":[1],\"data\":[0]},"
	    "\"z\":{\"dtype\":\"i32\",\"shape\":[1887734890384,9223372036,0],\"data\":[]}}";
	seed_frame g;
	CHECK_MSG(seed_frame_from_json(&g, line, sizeof line - 1, &err) == 0, "%s", err.msg);
	const seed_tensor *z = seed_frame_tensor(&g, "z");
	CHECK(z && seed_tensor_numel(z) == 0 && seed_tensor_nbytes(z) == 0);
	seed_frame_clear(&g);
	int64_t big[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 3};
	seed_tensor t = seed_tensor_view(NULL, SEED_DTYPE_U8, 3, big);
	CHECK(seed_tensor_numel(&t) == INT64_MAX);
	big[2] = 0;
	t = seed_tensor_view(NULL, SEED_DTYPE_U8, 3, big);
	CHECK(seed_tensor_numel(&t) == 0);
}

static void t_roundtrip_action(void)
{
	seed_frame f;
	build_action(&f);
	roundtrip(&f);
}

/* Box frames through msgpack and JSON (seed-cat's two forms), bit for bit:
 * f32 [K, A] actions, f32 [B, T+1, A] actions with [B, T+1, 2A]
 * parameters. */
static void t_roundtrip_box(void)
{
	static const float act[K][A] = {{0.5f, -1.25f, 3e-8f, 0, 1e30f, -2.5f}, {-0.0f, 1, 2, 3, 4, 5}};
	static float u_act[B][T1][2], params[B][T1][4];
	fill_floats(&u_act[0][0][0], B * T1 * 2, 11);
	fill_floats(&params[0][0][0], B * T1 * 4, 12);
	seed_frame f;
	build_action(&f);
	seed_frame_set_tensor(&f, "action", VIEW(act, SEED_DTYPE_F32, K, A));
	seed_err err;
	CHECK_MSG(seed_frame_validate(&f, &err) == 0, "%s", err.msg);
	roundtrip(&f);
	/* The JSON form nests the rows as numpy's tolist() does. */
	seed_buf js = {0};
	CHECK(seed_frame_to_json(&f, &js, &err) == 0);
	seed_buf_append(&js, "", 1);
	CHECK_MSG(strstr((char *)js.data,
	                 "\"action\":{\"dtype\":\"f32\",\"shape\":[5,6],\"data\":[[0.5,-1.25,"
	                 "3e-08,0,1e+30,-2.5],[-0.0,1,2,3,4,5],[0,0,0,0,0,0],"),
	          "%s", (char *)js.data);
	seed_buf_free(&js);

	build_unroll(&f);
	seed_frame_set_int(&f, "num_actions", 2);
	seed_frame_set_tensor(&f, "action", VIEW(u_act, SEED_DTYPE_F32, B, T1, 2));
	seed_frame_set_tensor(&f, "logits", VIEW(params, SEED_DTYPE_F32, B, T1, 4));
	CHECK_MSG(seed_frame_validate(&f, &err) == 0, "%s", err.msg);
	roundtrip(&f);
	/* Its logits are 2A wide: A's of a discrete unroll are refused. */
	seed_frame_set_tensor(&f, "logits", VIEW(params, SEED_DTYPE_F32, B, T1, 2));
	CHECK_MSG(seed_frame_validate(&f, &err) == -SEED_EFRAME &&
	              strcmp(err.msg, "unroll frame: field 'logits': shape [3,4,2], expected [B,T+1,2A]: "
	                              "dimension 2 is 2, but 2A = 4 (from 'num_actions')") == 0,
	          "%s", err.msg);
	/* The same logits with i32 actions: a discrete unroll of A = 2. */
	seed_frame_set_tensor(&f, "action", VIEW(d.u_action, SEED_DTYPE_I32, B, T1));
	CHECK_MSG(seed_frame_validate(&f, &err) == 0, "%s", err.msg);
}

/* seed_frame_encode_action: the bytes of Python's msgpack for the golden
 * action frame (whose map holds more fields: its header differs, what
 * follows up to the end of 'action' is the same), bytes worked out by hand
 * for one small frame, and, at every boundary of msgpack's int and bin
 * widths, the bytes of seed_frame_encode for the same fields. */
static void action_frame(seed_frame *f, uint32_t run, uint32_t actor, int64_t seq, int32_t env0,
                         int64_t version, const int32_t *a, int64_t *n)
{
	seed_frame_init(f, SEED_FRAME_ACTION);
	seed_frame_set_int(f, "run", run);
	seed_frame_set_int(f, "actor", actor);
	seed_frame_set_int(f, "seq", seq);
	seed_frame_set_int(f, "env0", env0);
	seed_frame_set_int(f, "policy_version", version);
	seed_frame_set_tensor(f, "action", seed_tensor_view((void *)a, SEED_DTYPE_I32, 1, n));
}

static void t_encode_action(void)
{
	seed_buf b = {0}, ref = {0};
	seed_err err;
	/* Python: {type, version, run 0, actor 0, seq 0, env0 0,
	 * policy_version 0, action [1, 0, -7], and 11 more}: map16 of 19. */
	const struct golden_frame *g = NULL;
	for (size_t i = 0; i < sizeof golden_frames / sizeof golden_frames[0]; i++)
		if (strcmp(golden_frames[i].name, "action") == 0)
			g = &golden_frames[i];
	const int32_t a3[3] = {1, 0, -7};
	CHECK(g && seed_frame_encode_action(&b, 0, 0, 0, 0, 0, a3, NULL, NULL, 3, &err) == 0);
	CHECK(g && g->bytes[0] == 0xde && g->bytes[1] == 0 && g->bytes[2] == 19 && b.data[0] == 0x88);
	CHECK(g && g->len > b.len + 2 && memcmp(b.data + 1, g->bytes + 3, b.len - 1) == 0);

	/* By hand: fixmap 8, fixstr names, 7 and 1 as fixints, seq 128 as
	 * uint8 (cc 80), env0 0, version 2, action [5]: bin8 of 4 bytes. */
	static const uint8_t hand[] = {
	    0x88, 0xa4, 't',  'y',  'p',  'e',  0xa6, 'a', 'c',  't',  'i',  'o',  'n',  0xa7, 'v', 'e', 'r',
	    's',  'i',  'o',  'n',  0x01, 0xa3, 'r',  'u', 'n',  0x07, 0xa5, 'a',  'c',  't',  'o', 'r', 0x01,
	    0xa3, 's',  'e',  'q',  0xcc, 0x80, 0xa4, 'e', 'n',  'v',  '0',  0x00, 0xae, 'p',  'o', 'l', 'i',
	    'c',  'y',  '_',  'v',  'e',  'r',  's',  'i', 'o',  'n',  0x02, 0xa6, 'a',  'c',  't', 'i', 'o',
	    'n',  0x83, 0xa5, 'd',  't',  'y',  'p',  'e', 0xa3, 'i',  '3',  '2',  0xa5, 's',  'h', 'a', 'p',
	    'e',  0x91, 0x01, 0xa4, 'd',  'a',  't',  'a', 0xc4, 0x04, 0x05, 0x00, 0x00, 0x00};
	const int32_t five = 5;
	seed_buf_reset(&b);
	CHECK(seed_frame_encode_action(&b, 7, 1, 128, 0, 2, &five, NULL, NULL, 1, &err) == 0);
	CHECK_MSG(b.len == sizeof hand && memcmp(b.data, hand, sizeof hand) == 0, "%zu bytes, want %zu",
	          b.len, sizeof hand);

	/* Every width of msgpack's uints and bins, against the generic path;
	 * appended after what out holds. */
	static const struct {
		const char *name;
		uint32_t run, actor;
		int64_t seq;
		int32_t env0;
		int64_t version, n;
	} cases[] = {
	    {"zeros", 0, 0, 0, 0, 0, 1},
	    {"fixint tops", 127, 127, 127, 127, 127, 63},
	    {"uint8", 128, 255, 128, 255, 200, 64},
	    {"uint16", 256, 65535, 256, 65535, 65535, 16383},
	    {"uint32", 65536, UINT32_MAX, 65536, INT32_MAX, UINT32_MAX, 16384},
	    {"uint64", 1, 2, (int64_t)1 << 32, 3, INT64_MAX, 5},
	    {"seq at its top", UINT32_MAX, 0, INT64_MAX, 0, (int64_t)1 << 32, 2},
	};
	int32_t *acts = malloc(16384 * sizeof *acts);
	uint8_t *resets = malloc(16384);
	int64_t *seeds = malloc(16384 * sizeof *seeds);
	for (int i = 0; i < 16384; i++) {
		acts[i] = (int32_t)(i * 2654435761u);
		resets[i] = i % 3 == 1;
		seeds[i] = resets[i] ? (int64_t)(i * 0x9e3779b97f4a7c15ull >> 1) : 0;
	}
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		seed_frame f;
		int64_t n = cases[k].n;
		action_frame(&f, cases[k].run, cases[k].actor, cases[k].seq, cases[k].env0, cases[k].version,
		             acts, &n);
		/* Without a reset mask, then with one, then with its seeds:
		 * the same frame with "reset" and "reset_seed" set last. */
		for (int with = 0; with < 3; with++) {
			if (with == 1)
				seed_frame_set_tensor(&f, "reset",
				                      seed_tensor_view(resets, SEED_DTYPE_U8, 1, &n));
			if (with == 2)
				seed_frame_set_tensor(&f, "reset_seed",
				                      seed_tensor_view(seeds, SEED_DTYPE_I64, 1, &n));
			seed_buf_reset(&ref);
			seed_buf_append(&ref, "xy", 2);
			CHECK(seed_frame_encode(&f, &ref, &err) == 0);
			seed_buf_reset(&b);
			seed_buf_append(&b, "xy", 2);
			CHECK(seed_frame_encode_action(&b, cases[k].run, cases[k].actor, cases[k].seq,
			                               cases[k].env0, cases[k].version, acts,
			                               with ? resets : NULL, with == 2 ? seeds : NULL, n,
			                               &err) == 0);
			CHECK_MSG(b.len == ref.len && memcmp(b.data, ref.data, b.len) == 0,
			          "%s%s: %zu bytes, want %zu", cases[k].name,
			          with == 2 ? " with seeds"
			          : with    ? " with reset"
			                    : "",
			          b.len, ref.len);
		}
		seed_frame dec;
		CHECK(seed_frame_decode(&dec, b.data + 2, b.len - 2, &err) == 0);
		const seed_tensor *rt = seed_frame_tensor(&dec, "reset"),
		                  *st = seed_frame_tensor(&dec, "reset_seed");
		CHECK(rt && rt->dtype == SEED_DTYPE_U8 && rt->shape[0] == n &&
		      memcmp(rt->data, resets, (size_t)n) == 0);
		CHECK(st && st->dtype == SEED_DTYPE_I64 && st->shape[0] == n &&
		      memcmp(st->data, seeds, 8 * (size_t)n) == 0);
	}

	/* Refusals: the generic path's code and message, out unchanged. */
	static const struct {
		const char *name;
		int64_t seq;
		int32_t env0;
		int64_t version, n;
	} bad[] = {
	    {"negative seq", -1, 0, 0, 2},
	    {"negative env0", 0, -1, 0, 2},
	    {"negative policy_version", 0, 0, -5, 2},
	    {"no actions", 0, 0, 0, 0},
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		seed_frame f;
		int64_t n = bad[k].n;
		action_frame(&f, 1, 2, bad[k].seq, bad[k].env0, bad[k].version, acts, &n);
		seed_err e1 = {""}, e2 = {""};
		int r1 = seed_frame_encode(&f, &ref, &e1);
		seed_buf_reset(&b);
		seed_buf_append(&b, "xy", 2);
		int r2 = seed_frame_encode_action(&b, 1, 2, bad[k].seq, bad[k].env0, bad[k].version, acts,
		                                  NULL, NULL, n, &e2);
		CHECK_MSG(r1 == -SEED_EFRAME && r2 == r1, "%s: %d and %d", bad[k].name, r1, r2);
		CHECK_MSG(strcmp(e1.msg, e2.msg) == 0, "%s: '%s' and '%s'", bad[k].name, e1.msg, e2.msg);
		CHECK_MSG(b.len == 2, "%s: out changed", bad[k].name);
	}
	free(acts);
	free(resets);
	free(seeds);
	seed_buf_free(&b);
	seed_buf_free(&ref);
}

/* The msgpack forms seed_frame_encode picks, worked out by hand from the
 * msgpack spec (the shortest form of each int; str headers by length; map
 * headers by count): an error frame {code: v, message: s} is fixmap 4,
 * then 'type' 'error' 'version' 1 'code' (26 bytes), then v, then
 * 'message' and s. */
/* seed_frame_encode_action_box: the bytes of Python's msgpack for the
 * golden Box action frame (the same map, field for field), bytes worked
 * out by hand, and across msgpack's widths the bytes of seed_frame_encode
 * for the frame with the same fields; its refusals are the frame's. */
static void box_frame(seed_frame *f, int64_t seq, int64_t version, const float *a, int64_t *shape,
                      const uint8_t *reset, const int64_t *seeds)
{
	seed_frame_init(f, SEED_FRAME_ACTION);
	seed_frame_set_int(f, "run", 70000);
	seed_frame_set_int(f, "actor", 5);
	seed_frame_set_int(f, "seq", seq);
	seed_frame_set_int(f, "env0", 3);
	seed_frame_set_int(f, "policy_version", version);
	seed_frame_set_tensor(f, "action", seed_tensor_view((void *)a, SEED_DTYPE_F32, 2, shape));
	if (reset)
		seed_frame_set_tensor(f, "reset", seed_tensor_view((void *)reset, SEED_DTYPE_U8, 1, shape));
	if (seeds)
		seed_frame_set_tensor(f, "reset_seed",
		                      seed_tensor_view((void *)seeds, SEED_DTYPE_I64, 1, shape));
}

static void t_encode_action_box(void)
{
	seed_buf b = {0}, ref = {0};
	seed_err err;
	const struct golden_frame *g = NULL;
	for (size_t i = 0; i < sizeof golden_frames / sizeof golden_frames[0]; i++)
		if (strcmp(golden_frames[i].name, "action_box") == 0)
			g = &golden_frames[i];
	/* Python: run 2, actor 1, seq 9, env0 0, policy_version 300, action
	 * f32 [[0.5, -1.25, 3e-8], [-0.0, 1e30, -2.5]], reset [0, 1]. */
	const float a6[6] = {0.5f, -1.25f, 3e-8f, -0.0f, 1e30f, -2.5f};
	const uint8_t reset2[2] = {0, 1};
	CHECK(g && seed_frame_encode_action_box(&b, 2, 1, 9, 0, 300, a6, reset2, NULL, 2, 3, &err) == 0);
	CHECK_MSG(g && b.len == g->len && memcmp(b.data, g->bytes, b.len) == 0, "%zu bytes, want %zu", b.len,
	          g ? g->len : 0);

	/* By hand: fixmap 8; run 1, actor 2, seq 3, env0 4, version 5 as
	 * fixints; action [[1.0, -2.0]]: shape fixarray [1, 2], bin8 of 8
	 * bytes, 1.0f = 0x3f800000 and -2.0f = 0xc0000000 little-endian. */
	static const uint8_t hand[] = {
	    0x88, 0xa4, 't', 'y',  'p',  'e',  0xa6, 'a',  'c',  't',  'i',  'o',  'n',  0xa7, 'v',
	    'e',  'r',  's', 'i',  'o',  'n',  0x01, 0xa3, 'r',  'u',  'n',  0x01, 0xa5, 'a',  'c',
	    't',  'o',  'r', 0x02, 0xa3, 's',  'e',  'q',  0x03, 0xa4, 'e',  'n',  'v',  '0',  0x04,
	    0xae, 'p',  'o', 'l',  'i',  'c',  'y',  '_',  'v',  'e',  'r',  's',  'i',  'o',  'n',
	    0x05, 0xa6, 'a', 'c',  't',  'i',  'o',  'n',  0x83, 0xa5, 'd',  't',  'y',  'p',  'e',
	    0xa3, 'f',  '3', '2',  0xa5, 's',  'h',  'a',  'p',  'e',  0x92, 0x01, 0x02, 0xa4, 'd',
	    'a',  't',  'a', 0xc4, 0x08, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0};
	const float two[2] = {1.0f, -2.0f};
	seed_buf_reset(&b);
	CHECK(seed_frame_encode_action_box(&b, 1, 2, 3, 4, 5, two, NULL, NULL, 1, 2, &err) == 0);
	CHECK_MSG(b.len == sizeof hand && memcmp(b.data, hand, sizeof hand) == 0, "%zu bytes, want %zu",
	          b.len, sizeof hand);

	/* The widths of K, A and the bin (8 bits up to 255 bytes, 16 up to
	 * 65535, then 32), against the generic encoder, after what out
	 * holds. */
	static const struct {
		const char *name;
		int64_t seq, version, K, A;
	} cases[] = {
	    {"one", 0, 0, 1, 1},           {"bin8 top", 127, 128, 9, 7},       {"bin16", 255, 65535, 8, 8},
	    {"A uint8", 65536, 1, 1, 200}, {"K uint16", 1, 2, 300, 3},         {"bin16 top", 3, 4, 16383, 1},
	    {"bin32", 1, 1, 4097, 4},      {"seq uint64", INT64_MAX, 9, 2, 2},
	};
	float *acts = malloc(16388 * sizeof *acts);
	uint8_t *resets = malloc(16384);
	for (int i = 0; i < 16388; i++)
		acts[i] = (float)((int)(i * 2654435761u % 2001u) - 1000) / 8.0f;
	int64_t *seeds = malloc(16384 * sizeof *seeds);
	for (int i = 0; i < 16384; i++) {
		resets[i] = i % 5 == 2;
		seeds[i] = resets[i] ? INT64_MAX - i : 0;
	}
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
		for (int with = 0; with < 3; with++) {
			seed_frame f;
			int64_t shape[2] = {cases[k].K, cases[k].A};
			box_frame(&f, cases[k].seq, cases[k].version, acts, shape, with ? resets : NULL,
			          with == 2 ? seeds : NULL);
			seed_buf_reset(&ref);
			seed_buf_append(&ref, "xy", 2);
			CHECK(seed_frame_encode(&f, &ref, &err) == 0);
			seed_buf_reset(&b);
			seed_buf_append(&b, "xy", 2);
			CHECK(seed_frame_encode_action_box(
			          &b, 70000, 5, cases[k].seq, 3, cases[k].version, acts, with ? resets : NULL,
			          with == 2 ? seeds : NULL, cases[k].K, cases[k].A, &err) == 0);
			CHECK_MSG(b.len == ref.len && memcmp(b.data, ref.data, b.len) == 0,
			          "%s%s: %zu bytes, want %zu", cases[k].name,
			          with == 2 ? " with seeds"
			          : with    ? " with reset"
			                    : "",
			          b.len, ref.len);
		}

	/* Refusals: the generic path's code and message, out unchanged. */
	float bad_acts[9] = {0};
	static const struct {
		const char *name;
		int64_t seq, K, A;
		int at;      /* the element made non-finite, -1: none */
		float value; /* ... and its value */
		const char *msg;
	} bad[] = {
	    {"nan", 0, 3, 3, 7, NAN, "action frame: field 'action': element 7 is not finite"},
	    {"negative nan", 0, 3, 3, 0, -NAN, "action frame: field 'action': element 0 is not finite"},
	    {"inf", 0, 1, 2, 1, INFINITY, "action frame: field 'action': element 1 is not finite"},
	    {"-inf", 0, 9, 1, 8, -INFINITY, "action frame: field 'action': element 8 is not finite"},
	    {"no environments", 0, 0, 2, -1, 0,
	     "action frame: field 'action': shape [0,2]: dimension 0 is 0, expected at least 1"},
	    {"no actions", 0, 2, 0, -1, 0,
	     "action frame: field 'action': shape [2,0]: dimension 1 is 0, expected at least 1"},
	    {"negative seq", -1, 1, 1, -1, 0, "action frame: field 'seq': -1 out of range"},
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		memset(bad_acts, 0, sizeof bad_acts);
		if (bad[k].at >= 0)
			bad_acts[bad[k].at] = bad[k].value;
		seed_frame f;
		int64_t shape[2] = {bad[k].K, bad[k].A};
		box_frame(&f, bad[k].seq, 1, bad_acts, shape, NULL, NULL);
		seed_err e1 = {""}, e2 = {""};
		int r1 = seed_frame_encode(&f, &ref, &e1);
		seed_buf_reset(&b);
		seed_buf_append(&b, "xy", 2);
		int r2 = seed_frame_encode_action_box(&b, 70000, 5, bad[k].seq, 3, 1, bad_acts, NULL, NULL,
		                                      bad[k].K, bad[k].A, &e2);
		CHECK_MSG(r1 == -SEED_EFRAME && r2 == r1, "%s: %d and %d", bad[k].name, r1, r2);
		CHECK_MSG(has(e2.msg, bad[k].msg), "%s: '%s'", bad[k].name, e2.msg);
		CHECK_MSG(strcmp(e1.msg, e2.msg) == 0, "%s: '%s' and '%s'", bad[k].name, e1.msg, e2.msg);
		CHECK_MSG(b.len == 2, "%s: out changed", bad[k].name);
	}
	free(acts);
	free(resets);
	free(seeds);
	seed_buf_free(&b);
	seed_buf_free(&ref);
}

static void t_encode_forms(void)
{
	static const struct {
		int64_t v;
		uint8_t bytes[9];
		size_t n;
	} ints[] = {
	    {0, {0x00}, 1},
	    {127, {0x7f}, 1},
	    {128, {0xcc, 0x80}, 2},
	    {255, {0xcc, 0xff}, 2},
	    {256, {0xcd, 0x01, 0x00}, 3},
	    {65535, {0xcd, 0xff, 0xff}, 3},
	    {65536, {0xce, 0x00, 0x01, 0x00, 0x00}, 5},
	    {4294967295LL, {0xce, 0xff, 0xff, 0xff, 0xff}, 5},
	    {4294967296LL, {0xcf, 0, 0, 0, 0x01, 0, 0, 0, 0}, 9},
	    {-1, {0xff}, 1},
	    {-32, {0xe0}, 1},
	    {-33, {0xd0, 0xdf}, 2},
	    {-128, {0xd0, 0x80}, 2},
	    {-129, {0xd1, 0xff, 0x7f}, 3},
	    {-32768, {0xd1, 0x80, 0x00}, 3},
	    {-32769, {0xd2, 0xff, 0xff, 0x7f, 0xff}, 5},
	    {INT32_MIN, {0xd2, 0x80, 0x00, 0x00, 0x00}, 5},
	    {(int64_t)INT32_MIN - 1, {0xd3, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff}, 9},
	};
	seed_buf b = {0};
	seed_err err;
	for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
		seed_frame f;
		seed_frame_init(&f, SEED_FRAME_ERROR);
		seed_frame_set_int(&f, "code", ints[k].v);
		seed_frame_set_str(&f, "message", "m");
		seed_buf_reset(&b);
		CHECK(seed_frame_encode(&f, &b, &err) == 0);
		CHECK_MSG(b.len == 26 + ints[k].n + 10 && b.data[0] == 0x84 &&
		              memcmp(b.data + 26, ints[k].bytes, ints[k].n) == 0,
		          "int %lld", (long long)ints[k].v);
	}
	/* str headers: fixstr below 32, str8 below 256, str16 below 65536. */
	static const struct {
		size_t len;
		uint8_t hdr[3];
		size_t n;
	} strs[] = {{0, {0xa0}, 1},
	            {31, {0xbf}, 1},
	            {32, {0xd9, 0x20}, 2},
	            {255, {0xd9, 0xff}, 2},
	            {256, {0xda, 0x01, 0x00}, 3}};
	char text[257];
	memset(text, 'z', sizeof text);
	for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++) {
		text[strs[k].len] = '\0';
		seed_frame f;
		seed_frame_init(&f, SEED_FRAME_ERROR);
		seed_frame_set_int(&f, "code", 0);
		seed_frame_set_str(&f, "message", text);
		seed_buf_reset(&b);
		CHECK(seed_frame_encode(&f, &b, &err) == 0);
		CHECK_MSG(b.len == 35 + strs[k].n + strs[k].len &&
		              memcmp(b.data + 35, strs[k].hdr, strs[k].n) == 0,
		          "str of %zu", strs[k].len);
		text[strs[k].len] = 'z';
	}
	/* code, message and 12 more: with type and version 16 entries, a map16
	 * (de 00 10). */
	static const char *names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_ERROR);
	seed_frame_set_int(&f, "code", 0);
	seed_frame_set_str(&f, "message", "m");
	for (int i = 0; i < 12; i++)
		seed_frame_set_nil(&f, names[i]);
	seed_buf_reset(&b);
	CHECK(seed_frame_encode(&f, &b, &err) == 0);
	CHECK(b.len > 3 && b.data[0] == 0xde && b.data[1] == 0 && b.data[2] == 16);
	seed_buf_free(&b);
}

static void t_roundtrip_unroll(void)
{
	seed_frame f;
	build_unroll(&f);
	roundtrip(&f);
}

static void t_roundtrip_episode(void)
{
	seed_frame f;
	build_episode(&f);
	roundtrip(&f);
}

/* A population server's observation moments on an episode frame: accepted
 * all three together (and round trip), refused one without the others, on
 * shapes that differ, of another dtype, or holding a NaN or a negative sum
 * of squares, each message naming the field. */
static void t_episode_obs_moments(void)
{
	static const double sum[3] = {4.5, -1.0, 0.0}, sumsq[3] = {10.25, 1.0, 0.0}, nan_sum[3] = {0, NAN, 0},
	                    neg_sumsq[3] = {1, 1, -2};
	static const float fsum[3] = {4.5f, -1.0f, 0.0f};
	seed_frame f;
	seed_err err = {""};
	build_episode(&f);
	seed_frame_set_int(&f, "obs_count", 12);
	seed_frame_set_tensor(&f, "obs_sum", VIEW(sum, SEED_DTYPE_F64, 3));
	seed_frame_set_tensor(&f, "obs_sumsq", VIEW(sumsq, SEED_DTYPE_F64, 3));
	CHECK_MSG(seed_frame_validate(&f, &err) == 0, "%s", err.msg);
	roundtrip(&f);
	struct {
		const char *drop[2];
		const char *name;
		seed_tensor t;
		const char *part;
	} cases[] = {
	    {{"obs_sum", "obs_sumsq"}, NULL, {0}, "field 'obs_count': present without 'obs_sum'"},
	    {{"obs_count", "obs_sumsq"}, NULL, {0}, "field 'obs_sum': present without 'obs_sumsq'"},
	    {{"obs_count", "obs_sum"}, NULL, {0}, "field 'obs_sumsq': present without 'obs_count'"},
	    {{"obs_count", NULL}, NULL, {0}, "field 'obs_sumsq': present without 'obs_count'"},
	    {{NULL, NULL},
	     "obs_sumsq",
	     VIEW(sumsq, SEED_DTYPE_F64, 2),
	     "field 'obs_sumsq': shape [2], expected [D]: dimension 0 is 2, but D = 3 (from 'obs_sum')"},
	    {{NULL, NULL},
	     "obs_sum",
	     VIEW(fsum, SEED_DTYPE_F32, 3),
	     "field 'obs_sum': dtype f32, expected f64"},
	    {{NULL, NULL}, "obs_sum", VIEW(nan_sum, SEED_DTYPE_F64, 3), "field 'obs_sum': element 1 is nan"},
	    {{NULL, NULL},
	     "obs_sumsq",
	     VIEW(neg_sumsq, SEED_DTYPE_F64, 3),
	     "field 'obs_sumsq': element 2 is -2, expected a finite value >= 0"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		seed_frame g;
		build_episode(&g);
		const char *names[3] = {"obs_count", "obs_sum", "obs_sumsq"};
		for (int k = 0; k < 3; k++) {
			bool dropped = (cases[i].drop[0] && strcmp(cases[i].drop[0], names[k]) == 0) ||
			               (cases[i].drop[1] && strcmp(cases[i].drop[1], names[k]) == 0);
			if (dropped)
				continue;
			if (k == 0)
				seed_frame_set_int(&g, names[k], 12);
			else if (cases[i].name && strcmp(cases[i].name, names[k]) == 0)
				seed_frame_set_tensor(&g, names[k], cases[i].t);
			else
				seed_frame_set_tensor(&g, names[k],
				                      VIEW(k == 1 ? sum : sumsq, SEED_DTYPE_F64, 3));
		}
		int rc = seed_frame_validate(&g, &err);
		CHECK_MSG(rc == -SEED_EFRAME && strstr(err.msg, "episode frame: ") &&
		              strstr(err.msg, cases[i].part),
		          "case %zu: %d '%s'", i, rc, err.msg);
	}
	seed_frame_set_int(&f, "obs_count", -1);
	CHECK(seed_frame_validate(&f, &err) == -SEED_EFRAME &&
	      strstr(err.msg, "field 'obs_count': -1 out of range"));
}

static void t_roundtrip_params(void)
{
	seed_frame f;
	build_params(&f);
	roundtrip(&f);
}

static void t_roundtrip_error(void)
{
	seed_frame f;
	build_error(&f);
	roundtrip(&f);
}

/* A step frame whose observations have each dtype in turn (random bits:
 * for floats that includes NaNs with payloads, which JSON does not keep, so
 * the JSON round trip uses finite values). */
static void t_roundtrip_every_dtype(void)
{
	static const seed_dtype dts[] = {SEED_DTYPE_U8,  SEED_DTYPE_I8,  SEED_DTYPE_I32,
	                                 SEED_DTYPE_I64, SEED_DTYPE_F32, SEED_DTYPE_F64};
	for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
		static unsigned char obs[K * 7 * 8];
		fill(obs, sizeof obs, 100 + i);
		if (dts[i] == SEED_DTYPE_F32)
			fill_floats((float *)obs, K * 7, 10 + i);
		if (dts[i] == SEED_DTYPE_F64) {
			seed_rng r;
			seed_rng_init(&r, 5, 5);
			for (int j = 0; j < K * 7; j++)
				((double *)obs)[j] =
				    seed_rng_normal(&r) * pow(10, (double)seed_rng_below(&r, 40) - 20);
		}
		seed_frame f;
		build_step(&f);
		seed_frame_set_tensor(&f, "obs", VIEW(obs, dts[i], K, 7));
		seed_frame_set_tensor(&f, "final_obs", VIEW(obs, dts[i], K, 7));
		int before = tap_case_failed;
		roundtrip(&f);
		if (tap_case_failed && !before)
			printf("# with dtype %s\n", seed_dtype_name(dts[i]));
	}
}

/* Floats through JSON: every special value and many random bit patterns
 * come back bit for bit (NaNs: sign kept, payload not). */
static void t_json_floats_exact(void)
{
	enum { M = 20000 };
	static float f32[M];
	static double f64[M];
	seed_rng r;
	seed_rng_init(&r, 42, 0);
	for (int i = 0; i < M; i++) {
		uint32_t b32;
		uint64_t b64;
		do {
			b32 = (uint32_t)seed_rng_u64(&r);
			memcpy(&f32[i], &b32, 4);
		} while (isnan(f32[i]));
		do {
			b64 = seed_rng_u64(&r);
			memcpy(&f64[i], &b64, 8);
		} while (isnan(f64[i]));
	}
	const float sf[] = {0.0f,           -0.0f,    NAN,
	                    -NAN,           INFINITY, -INFINITY,
	                    1e-45f,         -1e-45f,  1.17549435e-38f,
	                    3.40282347e38f, 0.1f,     16777216.0f,
	                    16777217.0f,    1.5e10f,  -2.5f,
	                    1.0f / 3};
	const double sd[] = {0.0,
	                     -0.0,
	                     NAN,
	                     -NAN,
	                     INFINITY,
	                     -INFINITY,
	                     5e-324,
	                     2.2250738585072014e-308,
	                     1.7976931348623157e308,
	                     0.1,
	                     9007199254740992.0,
	                     9007199254740993.0,
	                     1e23,
	                     1.0 / 3};
	memcpy(f32, sf, sizeof sf);
	memcpy(f64, sd, sizeof sd);
	seed_frame f, back;
	seed_err err = {""};
	seed_buf js = {0};
	seed_frame_init(&f, SEED_FRAME_PARAMS);
	seed_frame_set_int(&f, "policy_version", 1);
	seed_frame_set_int(&f, "run", 1);
	seed_frame_set_tensor(&f, "params", VIEW(f32, SEED_DTYPE_F32, M));
	seed_frame_set_tensor(&f, "extra", VIEW(f64, SEED_DTYPE_F64, M));
	seed_frame_set_float(&f, "scalar", -1.0 / 3);
	seed_frame_set_float(&f, "integral", 3.0);
	seed_frame_set_float(&f, "negzero", -0.0);
	CHECK(seed_frame_to_json(&f, &js, &err) == 0);
	int rc = seed_frame_from_json(&back, (char *)js.data, js.len, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc == 0) {
		CHECK(same_frame(&f, &back));
		/* Scalars stay floats. */
		CHECK(seed_frame_get(&back, "integral")->kind == SEED_VALUE_FLOAT);
		CHECK(signbit(seed_frame_float(&back, "negzero", 1)));
		seed_frame_clear(&back);
	}
	/* The special values are spelled as documented. */
	seed_buf_append(&js, "", 1);
	CHECK(strstr((char *)js.data, "\"data\":[0,-0.0,\"nan\",\"-nan\",\"inf\",\"-inf\",1e-45,-1e-45,"));
	CHECK(strstr((char *)js.data, ",0.1,16777216,16777216,1.5e+10,-2.5,"));
	CHECK(strstr((char *)js.data, "\"integral\":3.0"));
	seed_buf_free(&js);
}

static void t_json_forms_accepted(void)
{
	/* Flat data for any shape, ints in float tensors, rank 0 bare or in a
	 * list, and fields in any order. */
	const char *j =
	    "{\"version\":1,\"x\":{\"data\":7,\"shape\":[],\"dtype\":\"f64\"},\"type\":\"episode\","
	    "\"y\":{\"dtype\":\"i8\",\"shape\":[],\"data\":[-3]},"
	    "\"run\":1,\"actor\":2,\"env\":{\"dtype\":\"i32\",\"shape\":[2],\"data\":[4,5]},"
	    "\"return\":{\"dtype\":\"f32\",\"shape\":[2],\"data\":[1,2.5]},"
	    "\"length\":{\"dtype\":\"i32\",\"shape\":[2],\"data\":[3,4]},"
	    "\"truncated\":{\"dtype\":\"u8\",\"shape\":[2],\"data\":[0,1]},"
	    "\"m\":{\"dtype\":\"f32\",\"shape\":[2,3],\"data\":[1,2,3,4,5,\"inf\"]}}";
	seed_frame f;
	seed_err err = {""};
	int rc = seed_frame_from_json(&f, j, strlen(j), &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	CHECK(f.type == SEED_FRAME_EPISODE);
	CHECK(f.storage != NULL);
	const seed_tensor *x = seed_frame_tensor(&f, "x"), *y = seed_frame_tensor(&f, "y"),
	                  *m = seed_frame_tensor(&f, "m"), *ret = seed_frame_tensor(&f, "return");
	CHECK(x && x->rank == 0 && *(double *)x->data == 7.0);
	CHECK(y && y->rank == 0 && *(int8_t *)y->data == -3);
	CHECK(ret && ((float *)ret->data)[0] == 1.0f && ((float *)ret->data)[1] == 2.5f);
	CHECK(m && m->rank == 2 && ((float *)m->data)[4] == 5.0f && isinf(((float *)m->data)[5]));
	/* First field in the JSON, first in the frame. */
	CHECK(f.fields[0].name_len == 1 && f.fields[0].name[0] == 'x');
	seed_frame_clear(&f);
	CHECK(f.storage == NULL && f.type == SEED_FRAME_INVALID);
}

struct json_bad {
	const char *name, *json;
	int code;
	const char *parts[3];
};

#define STEP_HEAD                                                                                            \
	"{\"type\":\"step\",\"version\":1,\"run\":1,\"actor\":2,\"seq\":3,\"env0\":0,\"num_actions\":2,"
#define STEP_REST                                                                                            \
	"\"reward\":{\"dtype\":\"f32\",\"shape\":[2],\"data\":[0,0]},"                                       \
	"\"terminated\":{\"dtype\":\"u8\",\"shape\":[2],\"data\":[0,0]},"                                    \
	"\"truncated\":{\"dtype\":\"u8\",\"shape\":[2],\"data\":[0,0]},"                                     \
	"\"ep_return\":{\"dtype\":\"f32\",\"shape\":[2],\"data\":[0,0]},"                                    \
	"\"ep_length\":{\"dtype\":\"i32\",\"shape\":[2],\"data\":[0,0]}}"
#define OBS(dt, shape, data) "\"obs\":{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data\":" data "},"

static const struct json_bad json_bads[] = {
    {"not_json", "{\"type\":", -SEED_EFRAME, {"frame: bad JSON at line 1"}},
    {"trailing_garbage", "{\"type\":\"step\"} x", -SEED_EFRAME, {"frame: bad JSON"}},
    {"not_object", "[1,2]", -SEED_EFRAME, {"frame: JSON is an array, expected an object"}},
    {"duplicate_key",
     "{\"type\":\"step\",\"type\":\"step\"}",
     -SEED_EFRAME,
     {"frame: bad JSON", "duplicate"}},
    {"type_missing", "{\"version\":1}", -SEED_EFRAME, {"frame: field 'type': missing"}},
    {"type_not_string",
     "{\"type\":3,\"version\":1}",
     -SEED_EFRAME,
     {"frame: field 'type': an integer, expected a string"}},
    {"version_missing", "{\"type\":\"step\"}", -SEED_EFRAME, {"step frame: field 'version': missing"}},
    {"version_real",
     "{\"type\":\"step\",\"version\":1.0}",
     -SEED_EFRAME,
     {"step frame: field 'version': a real, expected an integer"}},
    {"version_2",
     "{\"type\":\"step\",\"version\":2}",
     -SEED_EVERSION,
     {"step frame: field 'version': version 2 not supported"}},
    {"type_unknown",
     "{\"type\":\"hello\",\"version\":1}",
     -SEED_ETYPE,
     {"frame: field 'type': unknown frame type 'hello'"}},
    {"list_field",
     STEP_HEAD "\"x\":[1]," OBS("f32", "[2]", "[0,0]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'x': lists are not allowed"}},
    {"dtype_unknown",
     STEP_HEAD OBS("f16", "[2]", "[0,0]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': dtype 'f16' unknown"}},
    {"tensor_extra_key",
     STEP_HEAD "\"obs\":{\"dtype\":\"f32\",\"shape\":[2],\"data\":[0,0],\"x\":1}," STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': unknown tensor key 'x'"}},
    {"tensor_no_data",
     STEP_HEAD "\"obs\":{\"dtype\":\"f32\",\"shape\":[2]}," STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': a tensor needs dtype, shape and data"}},
    {"shape_negative",
     STEP_HEAD OBS("f32", "[-2]", "[]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': dimension 0 is negative (-2)"}},
    {"shape_real",
     STEP_HEAD OBS("f32", "[2.0]", "[0,0]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': dimension 0 is a real, expected an integer"}},
    {"rank_7",
     STEP_HEAD OBS("f32", "[1,1,1,1,1,1,1]", "[0]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': shape of rank 7, at most 6"}},
    {"numel_overflow",
     STEP_HEAD OBS("f32", "[4611686018427387904,4]", "[]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs':", "is too large"}},
    {"flat_count",
     STEP_HEAD OBS("f32", "[2,2]", "[0,0,0]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': data has 3 elements, the shape needs 4"}},
    {"nested_wrong",
     STEP_HEAD OBS("f32", "[2,2]", "[[0,0],[0]]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': data does not match the shape", "dimension 1 wants a list of 2"}},
    {"nested_ragged",
     STEP_HEAD OBS("f32", "[2,2]", "[[0,0],0]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': data does not match the shape"}},
    {"data_not_list",
     STEP_HEAD OBS("f32", "[2]", "{}") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': data is an object, expected a list"}},
    {"element_string",
     STEP_HEAD OBS("f32", "[2]", "[0,\"x\"]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': data element 1 is a string other than nan"}},
    {"element_null",
     STEP_HEAD OBS("f32", "[2]", "[0,null]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': data element 1 is null, expected a number"}},
    {"u8_out_of_range",
     STEP_HEAD OBS("u8", "[2]", "[0,256]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': data element 1 (256) out of range for u8"}},
    {"i8_out_of_range",
     STEP_HEAD OBS("i8", "[2]", "[-129,0]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': data element 0 (-129) out of range for i8"}},
    {"i32_out_of_range",
     STEP_HEAD OBS("i32", "[2]", "[0,2147483648]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': data element 1 (2147483648) out of range for i32"}},
    {"real_in_int_tensor",
     STEP_HEAD OBS("i32", "[2]", "[0,1.5]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'obs': data element 1 is a real, expected an integer (dtype i32)"}},
    {"schema_dtype",
     STEP_HEAD OBS("f32", "[2]", "[0,0]") "\"reward\":{\"dtype\":\"f64\",\"shape\":[2],\"data\":[0,0]},"
                                          "\"terminated\":{\"dtype\":\"u8\",\"shape\":[2],\"data\":[0,0]},"
                                          "\"truncated\":{\"dtype\":\"u8\",\"shape\":[2],\"data\":[0,0]},"
                                          "\"ep_return\":{\"dtype\":\"f32\",\"shape\":[2],\"data\":[0,0]},"
                                          "\"ep_length\":{\"dtype\":\"i32\",\"shape\":[2],\"data\":[0,0]}}",
     -SEED_EFRAME,
     {"step frame: field 'reward': dtype f64, expected f32"}},
    {"schema_missing",
     STEP_HEAD OBS("f32", "[2]", "[0,0]") "\"x\":1}",
     -SEED_EFRAME,
     {"step frame: field 'reward': missing"}},
    {"schema_K",
     STEP_HEAD OBS("f32", "[3]", "[0,0,0]") STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'reward': shape [2], expected [K]: dimension 0 is 2, but K = 3 (from 'obs')"}},
    /* JSON's "nan" and "inf" read into a tensor, but a Box action frame
     * refuses them: an environment never steps on them. */
    {"action_box_nan",
     "{\"type\":\"action\",\"version\":1,\"run\":1,\"actor\":0,\"seq\":0,\"env0\":0,"
     "\"policy_version\":0,\"action\":{\"dtype\":\"f32\",\"shape\":[2,2],\"data\":[[0,1],[\"nan\",2]]}}",
     -SEED_EFRAME,
     {"action frame: field 'action': element 2 is not finite"}},
    {"action_box_inf",
     "{\"type\":\"action\",\"version\":1,\"run\":1,\"actor\":0,\"seq\":0,\"env0\":0,"
     "\"policy_version\":0,\"action\":{\"dtype\":\"f32\",\"shape\":[1,2],\"data\":[0,\"-inf\"]}}",
     -SEED_EFRAME,
     {"action frame: field 'action': element 1 is not finite"}},
    {"step_bounds_nan",
     STEP_HEAD OBS("f32", "[2]",
                   "[0,0]") "\"action_low\":{\"dtype\":\"f32\",\"shape\":[2],\"data\":[0,\"nan\"]},"
                            "\"action_high\":{\"dtype\":\"f32\",\"shape\":[2],\"data\":[1,1]}," STEP_REST,
     -SEED_EFRAME,
     {"step frame: field 'action_low': element 1 is NaN"}},
};

static void json_bad_case(const void *arg)
{
	const struct json_bad *b = arg;
	seed_frame f;
	seed_err err = {"untouched"};
	int rc = seed_frame_from_json(&f, b->json, strlen(b->json), &err);
	CHECK_MSG(rc == b->code, "code %d (%s), expected %d", rc, err.msg, b->code);
	for (int i = 0; i < 3 && b->parts[i]; i++)
		CHECK_MSG(has(err.msg, b->parts[i]), "message '%s' lacks '%s'", err.msg, b->parts[i]);
	CHECK(f.type == SEED_FRAME_INVALID && f.nfields == 0 && f.storage == NULL);
}

static void t_json_good_step_text(void)
{
	/* The base of the bad cases above is good: they fail for their one
	 * reason. */
	const char *j = STEP_HEAD OBS("f32", "[2]", "[0,0]") STEP_REST;
	seed_frame f;
	seed_err err = {""};
	int rc = seed_frame_from_json(&f, j, strlen(j), &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	seed_frame_clear(&f);
}

static void t_to_json_refusals(void)
{
	seed_frame f;
	seed_err err = {""};
	seed_buf out = {0};
	seed_buf_append(&out, "keep", 4);

	build_error(&f);
	seed_frame_set_float(&f, "x", NAN);
	CHECK(seed_frame_to_json(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "error frame: field 'x': float nan has no JSON form"), "%s", err.msg);
	CHECK(out.len == 4);

	build_error(&f);
	seed_frame_set_str(&f, "message", "bad \xff utf-8");
	CHECK(seed_frame_to_json(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "error frame: field 'message': the string is not UTF-8"), "%s", err.msg);
	CHECK(out.len == 4);

	/* A surrogate and an overlong form are not UTF-8 either. */
	build_error(&f);
	seed_frame_set_str(&f, "message", "\xed\xa0\x80");
	CHECK(seed_frame_to_json(&f, &out, &err) == -SEED_EFRAME);
	seed_frame_set_str(&f, "message", "\xc0\xaf");
	CHECK(seed_frame_to_json(&f, &out, &err) == -SEED_EFRAME);

	/* A name with a NUL byte (possible on the wire) has no JSON form. */
	build_error(&f);
	f.fields[f.nfields].name = "a\0b";
	f.fields[f.nfields].name_len = 3;
	f.fields[f.nfields].value = (seed_value){.kind = SEED_VALUE_INT, .u.i = 1};
	f.nfields++;
	CHECK(seed_frame_to_json(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "error frame: field 'a?b': the name is not UTF-8 or holds a NUL byte"), "%s",
	          err.msg);
	CHECK(out.len == 4);

	/* NUL, control characters, quotes and UTF-8 in strings are fine. */
	build_error(&f);
	static const char msg[] = "a\0b\x01\"\\\n\xc3\xa9\xf0\x9f\x98\x80";
	f.fields[1].value.u.str.ptr = msg;
	f.fields[1].value.u.str.len = sizeof msg - 1;
	out.len = 0;
	CHECK(seed_frame_to_json(&f, &out, &err) == 0);
	seed_buf_append(&out, "", 1);
	CHECK_MSG(
	    has((char *)out.data, "\"message\":\"a\\u0000b\\u0001\\\"\\\\\\n\xc3\xa9\xf0\x9f\x98\x80\""),
	    "%s", out.data);
	seed_frame back;
	CHECK(seed_frame_from_json(&back, (char *)out.data, out.len - 1, &err) == 0);
	CHECK(same_frame(&f, &back));
	seed_frame_clear(&back);
	seed_buf_free(&out);
}

/* ---- the API -------------------------------------------------------------- */

static void t_set_and_get(void)
{
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_ERROR);
	CHECK(f.version == SEED_PROTOCOL_VERSION && f.nfields == 0);
	CHECK(seed_frame_set_int(&f, "a", 1) == 0);
	CHECK(seed_frame_set_str(&f, "b", "hi") == 0);
	CHECK(seed_frame_set_int(&f, "a", 2) == 0); /* replaced in place */
	CHECK(f.nfields == 2 && f.fields[0].value.u.i == 2);
	CHECK(seed_frame_int(&f, "a", 0) == 2);
	CHECK(seed_frame_int(&f, "b", -1) == -1);   /* wrong kind: default */
	CHECK(seed_frame_int(&f, "zz", -1) == -1);  /* missing: default */
	CHECK(seed_frame_float(&f, "a", 0) == 2.0); /* int accepted as float */
	CHECK(seed_frame_set_float(&f, "c", 1.5) == 0);
	CHECK(seed_frame_float(&f, "c", 0) == 1.5);
	CHECK(seed_frame_tensor(&f, "a") == NULL);
	const char *s;
	size_t n;
	CHECK(seed_frame_str(&f, "b", &s, &n) == 0 && n == 2 && memcmp(s, "hi", 2) == 0);
	CHECK(seed_frame_str(&f, "a", &s, &n) == -ENOENT);
	CHECK(seed_frame_str(&f, "zz", &s, &n) == -ENOENT);
	CHECK(seed_frame_get(&f, "zz") == NULL);
	CHECK(seed_frame_set_int(&f, "type", 1) == -EINVAL);
	CHECK(seed_frame_set_int(&f, "version", 1) == -EINVAL);
	CHECK(seed_frame_set_int(&f, NULL, 1) == -EINVAL);
	CHECK(seed_frame_set_str(&f, "d", NULL) == -EINVAL);
	int64_t shape[7] = {1, 1, 1, 1, 1, 1, 1};
	float x = 0;
	seed_tensor t = seed_tensor_view(&x, SEED_DTYPE_F32, 6, shape);
	t.rank = 7;
	CHECK(seed_frame_set_tensor(&f, "t", t) == -EINVAL);
	t.rank = 1;
	t.dtype = SEED_DTYPE_INVALID;
	CHECK(seed_frame_set_tensor(&f, "t", t) == -EINVAL);
	static char names[SEED_FRAME_MAX_FIELDS][16];
	int rc = 0;
	for (int i = f.nfields; i < SEED_FRAME_MAX_FIELDS; i++) {
		snprintf(names[i], sizeof names[i], "f%d", i);
		rc |= seed_frame_set_int(&f, names[i], i);
	}
	CHECK(rc == 0 && f.nfields == SEED_FRAME_MAX_FIELDS);
	CHECK(seed_frame_set_int(&f, "one_too_many", 1) == -ENOSPC);
	CHECK(seed_frame_set_int(&f, "a", 3) == 0); /* replacing still works */
	seed_frame_clear(&f);
	CHECK(f.type == SEED_FRAME_INVALID && f.nfields == 0 && f.storage == NULL);
	seed_frame_clear(&f); /* twice is fine */
	CHECK(strcmp(seed_frame_type_name(SEED_FRAME_UNROLL), "unroll") == 0);
	CHECK(strcmp(seed_frame_type_name((seed_frame_type)99), "invalid") == 0);
	CHECK(seed_frame_type_parse("params", 6) == SEED_FRAME_PARAMS);
	CHECK(seed_frame_type_parse("params", 5) == SEED_FRAME_INVALID);
	CHECK(seed_frame_type_parse("invalid", 7) == SEED_FRAME_INVALID);
}

/* Encoding validates first and leaves out unchanged on failure. */
static void t_encode_validates(void)
{
	seed_frame f;
	seed_err err = {""};
	seed_buf out = {0};
	seed_buf_append(&out, "xy", 2);

	build_step(&f);
	f.fields[6].value.u.tensor.dtype = SEED_DTYPE_I32; /* reward */
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(strcmp(err.msg, "step frame: field 'reward': dtype i32, expected f32") == 0, "%s", err.msg);
	CHECK(out.len == 2);

	build_step(&f);
	f.nfields--; /* no final_obs: optional */
	CHECK(seed_frame_encode(&f, &out, &err) == 0);
	out.len = 2;
	f.nfields--; /* no ep_length */
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "step frame: field 'ep_length': missing"), "%s", err.msg);

	build_step(&f);
	f.type = SEED_FRAME_INVALID;
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_ETYPE);
	f.type = (seed_frame_type)42;
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_ETYPE);
	CHECK_MSG(has(err.msg, "frame: type 42 unknown"), "%s", err.msg);

	build_step(&f);
	f.version = 2;
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_EVERSION);
	CHECK_MSG(has(err.msg, "step frame: field 'version': version 2 not supported"), "%s", err.msg);

	build_step(&f);
	f.fields[6].value.u.tensor.data = NULL;
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "step frame: field 'reward': tensor without data"), "%s", err.msg);

	build_step(&f);
	f.fields[7].name = "reward"; /* two fields of one name */
	f.fields[7].name_len = 6;
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "step frame: field 'reward': appears twice"), "%s", err.msg);

	build_step(&f);
	f.fields[0].name = "type";
	f.fields[0].name_len = 4;
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "field 'type': reserved name"), "%s", err.msg);

	build_step(&f);
	f.fields[5].value.u.tensor.shape[1] = -1; /* obs */
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "step frame: field 'obs': dimension 1 is negative (-1)"), "%s", err.msg);

	build_step(&f);
	f.fields[5].value.u.tensor.shape[0] = INT64_MAX; /* obs */
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "step frame: field 'obs': shape [9223372036854775807,3] f32 is too large"),
	          "%s", err.msg);

	build_step(&f);
	seed_frame_set_int(&f, "run", -1);
	CHECK(seed_frame_encode(&f, &out, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "step frame: field 'run': -1 out of range"), "%s", err.msg);

	build_action(&f);
	seed_frame_set_str(&f, "seq", "1");
	CHECK(seed_frame_validate(&f, &err) == -SEED_EFRAME);
	CHECK_MSG(strcmp(err.msg, "action frame: field 'seq': str, expected int") == 0, "%s", err.msg);

	/* err may be NULL. */
	CHECK(seed_frame_encode(&f, &out, NULL) == -SEED_EFRAME);
	CHECK(out.len == 2);
	seed_buf_free(&out);
}

static void t_decode_oversize(void)
{
	static const unsigned char small[4] = {0x80};
	seed_frame f;
	seed_err err = {""};
	/* The length alone is refused: nothing is read. */
	CHECK(seed_frame_decode(&f, small, SEED_FRAME_MAX_BYTES + 1, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "frame: 1073741825 bytes, more than 1073741824"), "%s", err.msg);
}

/* The first frame in the golden stream is the golden step frame: decoding
 * needs no allocation per field, and data stays in place. */
static void t_decode_zero_copy(void)
{
	const struct golden_frame *g = &golden_frames[0];
	seed_frame f;
	seed_err err;
	CHECK(seed_frame_decode(&f, g->bytes, g->len, &err) == 0);
	const seed_tensor *obs = seed_frame_tensor(&f, "obs");
	CHECK(obs && (const unsigned char *)obs->data > g->bytes &&
	      (const unsigned char *)obs->data + seed_tensor_nbytes(obs) <= g->bytes + g->len);
	float v[12];
	seed_tensor_copy(v, obs);
	CHECK(v[0] == 0.1f && signbit(v[1]) && v[1] == 0);
}

/* ---- the reader ----------------------------------------------------------- */

static int temp_fd(const void *data, size_t n)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/test_frame_XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	unlink(path);
	if (fd < 0)
		return -1;
	const unsigned char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			break;
		p += w;
		n -= (size_t)w;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* A stream: every golden frame, then a 3 MB frame, then the golden frames
 * again, read back object by object. */
static void t_reader_stream(void)
{
	seed_buf s = {0};
	size_t ng = sizeof golden_frames / sizeof golden_frames[0];
	for (size_t i = 0; i < ng; i++)
		seed_buf_append(&s, golden_frames[i].bytes, golden_frames[i].len);
	seed_frame big;
	static float params[750000];
	fill_floats(params, 750000, 3);
	seed_frame_init(&big, SEED_FRAME_PARAMS);
	seed_frame_set_int(&big, "policy_version", 1);
	seed_frame_set_int(&big, "run", 1);
	seed_frame_set_tensor(&big, "params", VIEW(params, SEED_DTYPE_F32, 750000));
	size_t big_at = s.len;
	CHECK(seed_frame_encode(&big, &s, NULL) == 0);
	size_t big_len = s.len - big_at;
	for (size_t i = 0; i < ng; i++)
		seed_buf_append(&s, golden_frames[i].bytes, golden_frames[i].len);

	int fd = temp_fd(s.data, s.len);
	seed_frame_reader *r;
	CHECK(seed_frame_reader_new(&r, fd) == 0);
	const void *data;
	size_t len;
	seed_err err = {""};
	size_t at = 0;
	for (size_t i = 0; i < 2 * ng + 1; i++) {
		CHECK(seed_frame_reader_offset(r) == at);
		int rc = seed_frame_reader_next(r, &data, &len, &err);
		CHECK_MSG(rc == 0, "object %zu: %s", i, err.msg);
		if (rc)
			break;
		size_t want = i == ng ? big_len : golden_frames[i % (ng + 1)].len;
		CHECK_MSG(len == want && memcmp(data, s.data + at, len) == 0, "object %zu: %zu bytes", i,
		          len);
		if (i == ng) {
			seed_frame f;
			CHECK(seed_frame_decode(&f, data, len, &err) == 0);
			CHECK(same_frame(&f, &big));
		}
		at += len;
	}
	CHECK(seed_frame_reader_next(r, &data, &len, &err) == -SEED_EEOF);
	CHECK(seed_frame_reader_next(r, &data, &len, &err) == -SEED_EEOF); /* and stays there */
	CHECK(seed_frame_reader_offset(r) == s.len);
	seed_frame_reader_free(&r);
	CHECK(r == NULL);
	seed_frame_reader_free(&r);
	close(fd);
	seed_buf_free(&s);
}

static void t_reader_ends(void)
{
	const struct golden_frame *g = &golden_frames[0];
	const void *data;
	size_t len;
	seed_err err = {""};
	seed_frame_reader *r;

	/* Empty input: a clean end at once. */
	int fd = temp_fd("", 0);
	seed_frame_reader_new(&r, fd);
	CHECK(seed_frame_reader_next(r, &data, &len, &err) == -SEED_EEOF);
	seed_frame_reader_free(&r);
	close(fd);

	/* A frame, then the first half of another: one object, then an error
	 * that names where, and the same error again. */
	seed_buf s = {0};
	seed_buf_append(&s, g->bytes, g->len);
	seed_buf_append(&s, g->bytes, g->len / 2);
	fd = temp_fd(s.data, s.len);
	seed_frame_reader_new(&r, fd);
	CHECK(seed_frame_reader_next(r, &data, &len, &err) == 0 && len == g->len);
	CHECK(seed_frame_reader_next(r, &data, &len, &err) == -SEED_EFRAME);
	char want[80];
	snprintf(want, sizeof want, "frame at byte %zu: the input ends inside it (truncated)", g->len);
	CHECK_MSG(strcmp(err.msg, want) == 0, "%s", err.msg);
	CHECK(seed_frame_reader_next(r, &data, &len, &err) == -SEED_EFRAME);
	seed_frame_reader_free(&r);
	close(fd);
	seed_buf_free(&s);

	/* Not msgpack. */
	fd = temp_fd("\x01\xc1", 2);
	seed_frame_reader_new(&r, fd);
	CHECK(seed_frame_reader_next(r, &data, &len, &err) == 0 && len == 1);
	CHECK(seed_frame_reader_next(r, &data, &len, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "frame at byte 1: not msgpack: byte 0xc1 at offset 0"), "%s", err.msg);
	seed_frame_reader_free(&r);
	close(fd);

	/* An object that claims more than a frame may hold is refused before
	 * anything is read for it. */
	fd = temp_fd("\xc6\x7f\xff\xff\xff", 5);
	seed_frame_reader_new(&r, fd);
	CHECK(seed_frame_reader_next(r, &data, &len, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "frame at byte 0: an object at offset 0 ends at byte 2147483652, past the "
	                       "largest frame allowed"),
	          "%s", err.msg);
	seed_frame_reader_free(&r);
	close(fd);
}

/* A short stream whose header claims a large object: the reader reports it
 * truncated without first making room for what the header claims.  The
 * child's address space is limited to what it maps plus 64 MiB, and the
 * claim is 1 GiB less 64 KiB: making room for it would fail and abort
 * (seed_oom).  Under AddressSanitizer or valgrind, which map memory their
 * own way, the limit means nothing: then only the message is checked. */

static void t_reader_claims(void)
{
	static const char claim[] = "\x81\xa4type\xc6\x3f\xff\x00\x00 truncated";
	pid_t pid = fork();
	if (pid == 0) {
		if (!memory_managed() && limit_address_space((rlim_t)64 << 20) != 0)
			_exit(3);
		int fd = temp_fd(claim, sizeof claim - 1);
		seed_frame_reader *r;
		const void *data;
		size_t len;
		seed_err err = {""};
		seed_frame_reader_new(&r, fd);
		int rc = seed_frame_reader_next(r, &data, &len, &err);
		if (rc != -SEED_EFRAME ||
		    !has(err.msg, "frame at byte 0: the input ends inside it (truncated)"))
			fprintf(stderr, "# reader: %d %s\n", rc, err.msg);
		_exit(rc == -SEED_EFRAME &&
		              has(err.msg, "frame at byte 0: the input ends inside it (truncated)")
		          ? 0
		          : 1);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %s %d",
	          WIFEXITED(status) ? "exit" : "signal",
	          WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* Through a pipe, written a few bytes at a time by another process: the
 * reader puts frames together across reads. */
static void t_reader_pipe_pieces(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	size_t ng = sizeof golden_frames / sizeof golden_frames[0];
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		for (size_t i = 0; i < ng; i++)
			for (size_t o = 0; o < golden_frames[i].len; o += 7) {
				size_t n = golden_frames[i].len - o < 7 ? golden_frames[i].len - o : 7;
				if (write(p[1], golden_frames[i].bytes + o, n) != (ssize_t)n)
					_exit(1);
				if (o % 70 == 0)
					usleep(100);
			}
		_exit(0);
	}
	close(p[1]);
	seed_frame_reader *r;
	seed_frame_reader_new(&r, p[0]);
	const void *data;
	size_t len;
	seed_err err = {""};
	for (size_t i = 0; i < ng; i++) {
		int rc = seed_frame_reader_next(r, &data, &len, &err);
		CHECK_MSG(rc == 0, "frame %zu: %s", i, err.msg);
		if (rc)
			break;
		CHECK(len == golden_frames[i].len && memcmp(data, golden_frames[i].bytes, len) == 0);
	}
	CHECK(seed_frame_reader_next(r, &data, &len, &err) == -SEED_EEOF);
	seed_frame_reader_free(&r);
	close(p[0]);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	setup_data();
	for (size_t i = 0; i < sizeof golden_frames / sizeof golden_frames[0]; i++) {
		run_named("golden_decode", golden_frames[i].name, golden_decode, &golden_frames[i]);
		run_named("golden_json", golden_frames[i].name, golden_json, &golden_frames[i]);
		run_named("golden_reencode", golden_frames[i].name, golden_reencode, &golden_frames[i]);
	}
	for (size_t i = 0; i < sizeof golden_bad / sizeof golden_bad[0]; i++)
		run_named("bad", golden_bad[i].name, golden_bad_case, &golden_bad[i]);
	TAP_RUN(t_decode_oversize);
	TAP_RUN(t_decode_zero_copy);
	TAP_RUN(t_roundtrip_step);
	TAP_RUN(t_step_view);
	TAP_RUN(t_step_view_box);
	TAP_RUN(t_frame_skip);
	TAP_RUN(t_roundtrip_action);
	TAP_RUN(t_roundtrip_box);
	TAP_RUN(t_encode_action);
	TAP_RUN(t_encode_action_box);
	TAP_RUN(t_encode_forms);
	TAP_RUN(t_roundtrip_unroll);
	TAP_RUN(t_roundtrip_episode);
	TAP_RUN(t_episode_obs_moments);
	TAP_RUN(t_roundtrip_params);
	TAP_RUN(t_roundtrip_empty_tensor_huge_dim);
	TAP_RUN(t_roundtrip_error);
	TAP_RUN(t_roundtrip_every_dtype);
	TAP_RUN(t_json_floats_exact);
	TAP_RUN(t_json_forms_accepted);
	TAP_RUN(t_json_good_step_text);
	for (size_t i = 0; i < sizeof json_bads / sizeof json_bads[0]; i++)
		run_named("json_bad", json_bads[i].name, json_bad_case, &json_bads[i]);
	TAP_RUN(t_to_json_refusals);
	TAP_RUN(t_set_and_get);
	TAP_RUN(t_encode_validates);
	TAP_RUN(t_reader_stream);
	TAP_RUN(t_reader_ends);
	TAP_RUN(t_reader_claims);
	TAP_RUN(t_reader_pipe_pieces);
	return tap_done();
}
