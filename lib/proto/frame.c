/* frame.c: the frame model (fields, getters, setters) and the schema of
 * every frame type, checked by seed_frame_validate.
 *
 * The schema is a table per type: each entry names a field, its kind, its
 * range (ints), its dtypes and its leading dimensions (tensors).  Dimensions
 * are symbols (K, B, T+1, A, N, P, S, M, L, D): the first field that has a symbol
 * fixes its value, every later one must agree, and an int field can fix one
 * too (num_actions fixes A).  Messages name the frame type and the field.
 * The per-step fields of the unroll and sequences frames are not in their
 * tables: they come from seed_frame_unroll_fields, the table the unroll
 * assembly shares, or for a Box unroll from seed_frame_unroll_box_fields.
 *
 * Action spaces: the action and unroll frames carry discrete actions (i32)
 * or a Box's (f32, one more dimension, A); the dtype of their 'action'
 * field says which, and a table entry marked `action` is written for the
 * discrete form and turned into the Box form (f32, A appended) when the
 * frame is Box.  Contents are checked in three places only
 * (check_contents): a step frame's bounds, a Box action frame's elements
 * and an episode frame's observation moments.
 *
 * The wire codec is in frame_msgpack.c, JSON in frame_json.c, recorded
 * streams in frame_reader.c.
 */
#include "seed/frame.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_internal.h"

static const char *const type_names[SEED_FRAME_NTYPES] = {
    [SEED_FRAME_INVALID] = "invalid",       [SEED_FRAME_STEP] = "step",
    [SEED_FRAME_ACTION] = "action",         [SEED_FRAME_UNROLL] = "unroll",
    [SEED_FRAME_EPISODE] = "episode",       [SEED_FRAME_PARAMS] = "params",
    [SEED_FRAME_ERROR] = "error",           [SEED_FRAME_SAMPLE] = "sample",
    [SEED_FRAME_SEQUENCES] = "sequences",   [SEED_FRAME_PRIORITY] = "priority",
    [SEED_FRAME_GENERATION] = "generation",
};

const char *seed_frame_type_name(seed_frame_type t)
{
	return (unsigned)t < SEED_FRAME_NTYPES ? type_names[t] : "invalid";
}

seed_frame_type seed_frame_type_parse(const char *name, size_t len)
{
	for (int t = 1; t < SEED_FRAME_NTYPES; t++)
		if (strlen(type_names[t]) == len && memcmp(type_names[t], name, len) == 0)
			return (seed_frame_type)t;
	return SEED_FRAME_INVALID;
}

/* ---- frame-owned memory -------------------------------------------------- */

struct block {
	struct block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

void *frame_alloc(seed_frame *f, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct block *b = f->storage;
	if (!b || b->size - b->used < n) {
		size_t size = n > 4000 ? n : 4000;
		b = seed_xmalloc(sizeof *b + size);
		b->size = size;
		b->used = 0;
		b->next = f->storage;
		f->storage = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	return p;
}

void frame_storage_free(void *storage)
{
	struct block *b = storage;
	while (b) {
		struct block *next = b->next;
		free(b);
		b = next;
	}
}

/* ---- messages ------------------------------------------------------------ */

const char *frame_quote(char buf[FRAME_QUOTE_MAX], const char *p, size_t n)
{
	size_t keep = n, i;
	if (keep > FRAME_QUOTE_MAX - 4)
		keep = FRAME_QUOTE_MAX - 7;
	for (i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)p[i];
		buf[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (keep < n) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

int frame_err(seed_err *err, int code, seed_frame_type type, const char *name, size_t name_len,
              const char *fmt, ...)
{
	if (!err)
		return code;
	char what[400], q[FRAME_QUOTE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	const char *tn = type == SEED_FRAME_INVALID ? "" : seed_frame_type_name(type);
	const char *sp = type == SEED_FRAME_INVALID ? "" : " ";
	if (name)
		return seed_err_set(err, code, "%s%sframe: field '%s': %s", tn, sp,
		                    frame_quote(q, name, name_len), what);
	return seed_err_set(err, code, "%s%sframe: %s", tn, sp, what);
}

const char *frame_shape_str(char *buf, size_t size, const seed_tensor *t)
{
	size_t o = 0;
	o += (size_t)snprintf(buf + o, size - o, "[");
	for (int i = 0; i < t->rank && i < SEED_TENSOR_MAX_RANK && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "", (long long)t->shape[i]);
	if (o < size)
		snprintf(buf + o, size - o, "]");
	return buf;
}

static const char *kind_name(seed_value_kind k)
{
	switch (k) {
	case SEED_VALUE_NIL:
		return "nil";
	case SEED_VALUE_BOOL:
		return "bool";
	case SEED_VALUE_INT:
		return "int";
	case SEED_VALUE_FLOAT:
		return "float";
	case SEED_VALUE_STR:
		return "str";
	case SEED_VALUE_TENSOR:
		return "tensor";
	}
	return "invalid";
}

/* ---- fields -------------------------------------------------------------- */

void seed_frame_init(seed_frame *f, seed_frame_type t)
{
	f->type = t;
	f->version = SEED_PROTOCOL_VERSION;
	f->nfields = 0;
	f->storage = NULL;
}

void seed_frame_clear(seed_frame *f)
{
	frame_storage_free(f->storage);
	f->storage = NULL;
	f->type = SEED_FRAME_INVALID;
	f->version = 0;
	f->nfields = 0;
}

static int find(const seed_frame *f, const char *name, size_t len)
{
	for (int i = 0; i < f->nfields; i++)
		if (f->fields[i].name_len == len && memcmp(f->fields[i].name, name, len) == 0)
			return i;
	return -1;
}

static bool reserved(const char *name, size_t len)
{
	return (len == 4 && memcmp(name, "type", 4) == 0) || (len == 7 && memcmp(name, "version", 7) == 0);
}

static int set(seed_frame *f, const char *name, seed_value v)
{
	if (!name)
		return -EINVAL;
	size_t len = strlen(name);
	if (reserved(name, len))
		return -EINVAL;
	int i = find(f, name, len);
	if (i < 0) {
		if (f->nfields >= SEED_FRAME_MAX_FIELDS)
			return -ENOSPC;
		i = f->nfields++;
		f->fields[i].name = name;
		f->fields[i].name_len = len;
	}
	f->fields[i].value = v;
	return 0;
}

int seed_frame_set_int(seed_frame *f, const char *name, int64_t v)
{
	return set(f, name, (seed_value){.kind = SEED_VALUE_INT, .u.i = v});
}

int seed_frame_set_float(seed_frame *f, const char *name, double v)
{
	return set(f, name, (seed_value){.kind = SEED_VALUE_FLOAT, .u.f = v});
}

int seed_frame_set_bool(seed_frame *f, const char *name, bool v)
{
	return set(f, name, (seed_value){.kind = SEED_VALUE_BOOL, .u.b = v});
}

int seed_frame_set_nil(seed_frame *f, const char *name)
{
	return set(f, name, (seed_value){.kind = SEED_VALUE_NIL});
}

int seed_frame_set_str(seed_frame *f, const char *name, const char *s)
{
	if (!s)
		return -EINVAL;
	return set(f, name, (seed_value){.kind = SEED_VALUE_STR, .u.str = {s, strlen(s)}});
}

int seed_frame_set_tensor(seed_frame *f, const char *name, seed_tensor t)
{
	if (t.rank < 0 || t.rank > SEED_TENSOR_MAX_RANK || seed_dtype_size(t.dtype) == 0)
		return -EINVAL;
	return set(f, name, (seed_value){.kind = SEED_VALUE_TENSOR, .u.tensor = t});
}

const seed_value *seed_frame_get(const seed_frame *f, const char *name)
{
	int i = find(f, name, strlen(name));
	return i < 0 ? NULL : &f->fields[i].value;
}

int64_t seed_frame_int(const seed_frame *f, const char *name, int64_t dflt)
{
	const seed_value *v = seed_frame_get(f, name);
	return v && v->kind == SEED_VALUE_INT ? v->u.i : dflt;
}

double seed_frame_float(const seed_frame *f, const char *name, double dflt)
{
	const seed_value *v = seed_frame_get(f, name);
	if (v && v->kind == SEED_VALUE_FLOAT)
		return v->u.f;
	if (v && v->kind == SEED_VALUE_INT)
		return (double)v->u.i;
	return dflt;
}

const seed_tensor *seed_frame_tensor(const seed_frame *f, const char *name)
{
	const seed_value *v = seed_frame_get(f, name);
	return v && v->kind == SEED_VALUE_TENSOR ? &v->u.tensor : NULL;
}

int seed_frame_str(const seed_frame *f, const char *name, const char **s, size_t *len)
{
	const seed_value *v = seed_frame_get(f, name);
	if (!v || v->kind != SEED_VALUE_STR)
		return -ENOENT;
	*s = v->u.str.ptr;
	*len = v->u.str.len;
	return 0;
}

/* ---- generic checks ------------------------------------------------------ */

int frame_check_tensor(const seed_tensor *t, size_t *nbytes, seed_frame_type type, const char *name,
                       size_t name_len, seed_err *err)
{
	size_t esize = seed_dtype_size(t->dtype);
	if (esize == 0)
		return frame_err(err, -SEED_EFRAME, type, name, name_len, "dtype %d unknown", (int)t->dtype);
	if (t->rank < 0 || t->rank > SEED_TENSOR_MAX_RANK)
		return frame_err(err, -SEED_EFRAME, type, name, name_len, "rank %d, at most %d", t->rank,
		                 SEED_TENSOR_MAX_RANK);
	int64_t n = 1;
	for (int i = 0; i < t->rank; i++) {
		if (t->shape[i] < 0)
			return frame_err(err, -SEED_EFRAME, type, name, name_len,
			                 "dimension %d is negative (%lld)", i, (long long)t->shape[i]);
		if (__builtin_mul_overflow(n, t->shape[i], &n))
			n = INT64_MAX; /* as good as infinite: refused below */
	}
	uint64_t bytes;
	if (__builtin_mul_overflow((uint64_t)n, (uint64_t)esize, &bytes) || bytes > SEED_FRAME_MAX_BYTES) {
		char s[160];
		return frame_err(
		    err, -SEED_EFRAME, type, name, name_len, "shape %s %s is too large (more than %zu bytes)",
		    frame_shape_str(s, sizeof s, t), seed_dtype_name(t->dtype), SEED_FRAME_MAX_BYTES);
	}
	*nbytes = (size_t)bytes;
	return 0;
}

int seed_frame_validate(const seed_frame *f, seed_err *err)
{
	if (f->type <= SEED_FRAME_INVALID || f->type >= SEED_FRAME_NTYPES)
		return frame_err(err, -SEED_ETYPE, SEED_FRAME_INVALID, NULL, 0, "type %d unknown",
		                 (int)f->type);
	if (f->version != SEED_PROTOCOL_VERSION)
		return frame_err(err, -SEED_EVERSION, f->type, "version", 7,
		                 "version %d not supported (this build speaks version %d)", f->version,
		                 SEED_PROTOCOL_VERSION);
	if (f->nfields < 0 || f->nfields > SEED_FRAME_MAX_FIELDS)
		return frame_err(err, -SEED_EFRAME, f->type, NULL, 0, "%d fields, at most %d", f->nfields,
		                 SEED_FRAME_MAX_FIELDS);
	for (int i = 0; i < f->nfields; i++) {
		const seed_field *fd = &f->fields[i];
		if (!fd->name)
			return frame_err(err, -SEED_EFRAME, f->type, NULL, 0, "field %d has no name", i);
		if (reserved(fd->name, fd->name_len))
			return frame_err(err, -SEED_EFRAME, f->type, fd->name, fd->name_len,
			                 "reserved name used for a field");
		for (int j = 0; j < i; j++)
			if (f->fields[j].name_len == fd->name_len &&
			    memcmp(f->fields[j].name, fd->name, fd->name_len) == 0)
				return frame_err(err, -SEED_EFRAME, f->type, fd->name, fd->name_len,
				                 "appears twice");
		const seed_value *v = &fd->value;
		size_t nbytes;
		int rc;
		switch (v->kind) {
		case SEED_VALUE_NIL:
		case SEED_VALUE_BOOL:
		case SEED_VALUE_INT:
		case SEED_VALUE_FLOAT:
			break;
		case SEED_VALUE_STR:
			if (!v->u.str.ptr && v->u.str.len)
				return frame_err(err, -SEED_EFRAME, f->type, fd->name, fd->name_len,
				                 "string without data");
			break;
		case SEED_VALUE_TENSOR:
			rc = frame_check_tensor(&v->u.tensor, &nbytes, f->type, fd->name, fd->name_len, err);
			if (rc < 0)
				return rc;
			if (nbytes && !v->u.tensor.data)
				return frame_err(err, -SEED_EFRAME, f->type, fd->name, fd->name_len,
				                 "tensor without data");
			break;
		default:
			return frame_err(err, -SEED_EFRAME, f->type, fd->name, fd->name_len,
			                 "value of kind %d", (int)v->kind);
		}
	}
	return frame_check_schema(f, err);
}

/* ---- schema -------------------------------------------------------------- */

/* D_2A is twice A, not a symbol of its own: it is checked against A (or
 * fixes A when it comes first). */
enum dim { D_NONE = 0, D_K, D_B, D_T1, D_A, D_N, D_P, D_S, D_M, D_L, D_2A, D_D, D_COUNT };
static const char *const dim_names[D_COUNT] = {"?", "K", "B", "T+1", "A", "N", "P", "S", "M", "L", "2A", "D"};

enum fkind { FK_INT = 1, FK_STR, FK_TENSOR, FK_FLOAT, FK_BOOL };

#define DT(x) (1u << SEED_DTYPE_##x)
#define DT_ANY (DT(U8) | DT(I8) | DT(I32) | DT(I64) | DT(F32) | DT(F64))

struct fspec {
	const char *name;
	uint8_t kind;
	bool optional;
	/* FK_INT: the allowed range, and the dimension the value fixes */
	int64_t min, max;
	uint8_t fixes;
	/* FK_FLOAT: finite and at least fmin (an int is accepted too) */
	double fmin;
	/* FK_STR: the values allowed (NULL-terminated; NULL: any) */
	const char *const *values;
	/* optional fields that come together: the field that must be present
	 * whenever this one is (and names this one back) */
	const char *with;
	/* FK_TENSOR: allowed dtypes, leading dimensions, whether more
	 * dimensions may follow them, or the field whose dtype and shape this
	 * one repeats */
	uint32_t dtypes;
	uint8_t dims[3];
	bool more;
	const char *like;
	/* An action tensor: the entry describes the discrete form (i32); in a
	 * Box frame it is f32 with A appended to its dimensions. */
	bool action;
};

#define U32 4294967295LL
#define I32 2147483647LL
#define I64 INT64_MAX
#define INT(n, lo, hi)                                                                                       \
	{                                                                                                    \
		.name = n, .kind = FK_INT, .min = lo, .max = hi                                              \
	}
#define STR(n)                                                                                               \
	{                                                                                                    \
		.name = n, .kind = FK_STR                                                                    \
	}
#define OPT_STR(n)                                                                                           \
	{                                                                                                    \
		.name = n, .kind = FK_STR, .optional = true                                                  \
	}
#define TENSOR(n, dt, ...)                                                                                   \
	{                                                                                                    \
		.name = n, .kind = FK_TENSOR, .dtypes = dt, .dims = { __VA_ARGS__ }                          \
	}
/* A tensor whose listed dimensions may be followed by more (observations). */
#define TENSOR_MORE(n, dt, ...)                                                                              \
	{                                                                                                    \
		.name = n, .kind = FK_TENSOR, .dtypes = dt, .dims = {__VA_ARGS__}, .more = true              \
	}

/* Optional everywhere it appears (step, unroll, episode and sequences
 * frames): the emulator frames one agent step of the frame's environments
 * is, >= 1; a frame without it reads as 1. */
#define FRAME_SKIP                                                                                           \
	{                                                                                                    \
		.name = "frame_skip", .kind = FK_INT, .optional = true, .min = 1, .max = I32                 \
	}

static const struct fspec step_spec[] = {
    INT("run", 0, U32),
    INT("actor", 0, U32),
    INT("seq", 0, I64),
    INT("env0", 0, I32),
    {.name = "num_actions", .kind = FK_INT, .min = 1, .max = I32, .fixes = D_A},
    TENSOR_MORE("obs", DT_ANY, D_K),
    TENSOR("reward", DT(F32), D_K),
    TENSOR("terminated", DT(U8), D_K),
    TENSOR("truncated", DT(U8), D_K),
    TENSOR("ep_return", DT(F32), D_K),
    TENSOR("ep_length", DT(I32), D_K),
    {.name = "final_obs", .kind = FK_TENSOR, .optional = true, .like = "obs"},
    /* A Box action space: each action's bounds (infinite allowed, no NaN,
     * low <= high: check_contents). */
    {.name = "action_low",
     .kind = FK_TENSOR,
     .optional = true,
     .dtypes = DT(F32),
     .dims = {D_A},
     .with = "action_high"},
    {.name = "action_high",
     .kind = FK_TENSOR,
     .optional = true,
     .dtypes = DT(F32),
     .dims = {D_A},
     .with = "action_low"},
    /* The emulator frames one agent step is (Atari's frame skip); absent:
     * 1, one frame a step. */
    FRAME_SKIP,
};

static const struct fspec action_spec[] = {
    INT("run", 0, U32),
    INT("actor", 0, U32),
    INT("seq", 0, I64),
    INT("env0", 0, I32),
    INT("policy_version", 0, I64),
    /* i32 [K], or f32 [K,A] of finite elements (check_contents). */
    {.name = "action", .kind = FK_TENSOR, .dtypes = DT(I32), .dims = {D_K}, .action = true},
    {.name = "reset", .kind = FK_TENSOR, .optional = true, .dtypes = DT(U8), .dims = {D_K}},
    /* The seed each restart (reset 1) starts its episode from; 0: from
     * where the environment's generator is. */
    {.name = "reset_seed", .kind = FK_TENSOR, .optional = true, .dtypes = DT(I64), .dims = {D_K}},
};

const seed_unroll_field seed_frame_unroll_fields[SEED_UNROLL_NFIELDS] = {
    [SEED_UNROLL_OBS] = {"obs", SEED_DTYPE_INVALID, SEED_UNROLL_PER_OBS},
    [SEED_UNROLL_ACTION] = {"action", SEED_DTYPE_I32, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_REWARD] = {"reward", SEED_DTYPE_F32, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_TERMINATED] = {"terminated", SEED_DTYPE_U8, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_TRUNCATED] = {"truncated", SEED_DTYPE_U8, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_FINAL_VALUE] = {"final_value", SEED_DTYPE_F32, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_POLICY_VERSION] = {"policy_version", SEED_DTYPE_I32, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_LOGITS] = {"logits", SEED_DTYPE_F32, SEED_UNROLL_PER_ACTION},
};

const seed_unroll_field seed_frame_unroll_box_fields[SEED_UNROLL_NFIELDS] = {
    [SEED_UNROLL_OBS] = {"obs", SEED_DTYPE_INVALID, SEED_UNROLL_PER_OBS},
    [SEED_UNROLL_ACTION] = {"action", SEED_DTYPE_F32, SEED_UNROLL_PER_ACTION},
    [SEED_UNROLL_REWARD] = {"reward", SEED_DTYPE_F32, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_TERMINATED] = {"terminated", SEED_DTYPE_U8, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_TRUNCATED] = {"truncated", SEED_DTYPE_U8, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_FINAL_VALUE] = {"final_value", SEED_DTYPE_F32, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_POLICY_VERSION] = {"policy_version", SEED_DTYPE_I32, SEED_UNROLL_PER_STEP},
    [SEED_UNROLL_LOGITS] = {"logits", SEED_DTYPE_F32, SEED_UNROLL_PER_PARAM},
};

/* The unroll frame's fields besides the per-step ones, which come from
 * seed_frame_unroll_fields (frame_check_schema appends them). */
static const struct fspec unroll_spec[] = {
    INT("run", 0, U32),
    INT("actor", 0, U32),
    {.name = "num_actions", .kind = FK_INT, .min = 1, .max = I32, .fixes = D_A},
    TENSOR("env", DT(I32), D_B),
    /* The agent's recurrent state before step 0 of each row. */
    {.name = "state", .kind = FK_TENSOR, .optional = true, .dtypes = DT(F32), .dims = {D_B, D_S}},
    /* Each row's first replay priority (seed-replay). */
    {.name = "priority", .kind = FK_TENSOR, .optional = true, .dtypes = DT(F32), .dims = {D_B}},
    /* With a state: the action taken before step 0 (-1: none); f32 [B,A]
     * in a Box unroll. */
    {.name = "prev_action",
     .kind = FK_TENSOR,
     .optional = true,
     .dtypes = DT(I32),
     .dims = {D_B},
     .action = true},
    FRAME_SKIP,
};

static const struct fspec episode_spec[] = {
    INT("run", 0, U32),
    INT("actor", 0, U32),
    TENSOR("env", DT(I32), D_N),
    TENSOR("return", DT(F32), D_N),
    TENSOR("length", DT(I32), D_N),
    TENSOR("truncated", DT(U8), D_N),
    /* Neuroevolution: the generation and member that played each episode
     * (member -1: none was assigned), both or neither. */
    {.name = "generation",
     .kind = FK_TENSOR,
     .optional = true,
     .dtypes = DT(I64),
     .dims = {D_N},
     .with = "member"},
    {.name = "member",
     .kind = FK_TENSOR,
     .optional = true,
     .dtypes = DT(I32),
     .dims = {D_N},
     .with = "generation"},
    /* A population server's observation moments since its previous
     * episode frame (count, and per feature the sums of x and of x^2),
     * for the evolver's running statistics: all three or none (each
     * names the next), finite, the squares' sums >= 0 (check_contents). */
    {.name = "obs_count", .kind = FK_INT, .optional = true, .min = 0, .max = I64, .with = "obs_sum"},
    {.name = "obs_sum",
     .kind = FK_TENSOR,
     .optional = true,
     .dtypes = DT(F64),
     .dims = {D_D},
     .with = "obs_sumsq"},
    {.name = "obs_sumsq",
     .kind = FK_TENSOR,
     .optional = true,
     .dtypes = DT(F64),
     .dims = {D_D},
     .with = "obs_count"},
    FRAME_SKIP,
};

static const struct fspec params_spec[] = {
    /* The parameters' version: "version" itself is the protocol's. */
    INT("policy_version", 0, I64),
    INT("run", 0, U32),
    TENSOR("params", DT(F32), D_P),
    OPT_STR("model"),
};

/* A learner's request for a batch of sequences (seed-replay). */
static const struct fspec sample_spec[] = {
    INT("batch", 1, I32),
};

/* The answer: the unroll frame's fields over B sampled rows, each row's
 * identity as tensors, the items' keys and importance weights; the
 * per-step fields are appended as for an unroll frame. */
static const struct fspec sequences_spec[] = {
    {.name = "num_actions", .kind = FK_INT, .min = 1, .max = I32, .fixes = D_A},
    TENSOR("env", DT(I32), D_B),
    TENSOR("run", DT(I32), D_B),
    TENSOR("actor", DT(I32), D_B),
    {.name = "state", .kind = FK_TENSOR, .optional = true, .dtypes = DT(F32), .dims = {D_B, D_S}},
    {.name = "prev_action", .kind = FK_TENSOR, .optional = true, .dtypes = DT(I32), .dims = {D_B}},
    TENSOR("key", DT(I64), D_B),
    TENSOR("weight", DT(F32), D_B),
    FRAME_SKIP,
};

/* New priorities for sampled items, by key. */
static const struct fspec priority_spec[] = {
    TENSOR("key", DT(I64), D_N),
    TENSOR("priority", DT(F32), D_N),
};

static const char *const evo_algorithms[] = {"es", "ga", "rs", "snes", "ars", NULL};

/* A round of neuroevolution for the population server (seed_evo_gen in
 * seed/evo.h; lib/evo/evo_frame.c checks what the schema cannot: the genome's
 * keys, the episodes wanted, which optional fields an algorithm needs). */
static const struct fspec generation_spec[] = {
    INT("run", 0, U32),
    INT("generation", 0, I64),
    INT("phase", 0, 1),
    {.name = "algorithm", .kind = FK_STR, .values = evo_algorithms},
    INT("noise_seed", 0, I64),
    INT("noise_size", 1, I32),
    {.name = "sigma", .kind = FK_FLOAT, .fmin = 0},
    INT("rank", 0, I32),
    TENSOR("genome", DT(I64), D_M, D_L),
    TENSOR("episodes", DT(I32), D_M),
    {.name = "sign", .kind = FK_TENSOR, .optional = true, .dtypes = DT(F32), .dims = {D_M}},
    {.name = "centre", .kind = FK_TENSOR, .optional = true, .dtypes = DT(F32), .dims = {D_P}},
    /* snes: each parameter's std (evo_frame.c: with snes only). */
    {.name = "sigmas", .kind = FK_TENSOR, .optional = true, .dtypes = DT(F32), .dims = {D_P}},
    OPT_STR("model"),
    {.name = "episode_cap", .kind = FK_INT, .optional = true, .min = 0, .max = I64},
    /* Common episodes: every member's k-th episode from the same seed
     * (seed_evo_episode_seed of this and k); absent or 0: none. */
    {.name = "episode_seed", .kind = FK_INT, .optional = true, .min = 0, .max = I64},
    {.name = "greedy", .kind = FK_BOOL, .optional = true},
    /* Box members: the std of the normal noise added to each mean action. */
    {.name = "action_noise", .kind = FK_FLOAT, .optional = true, .fmin = 0},
    /* The learner's observation statistics for "obs_norm", both or
     * neither (evo_frame.c checks the values). */
    {.name = "obs_mean",
     .kind = FK_TENSOR,
     .optional = true,
     .dtypes = DT(F32),
     .dims = {D_D},
     .with = "obs_var"},
    {.name = "obs_var",
     .kind = FK_TENSOR,
     .optional = true,
     .dtypes = DT(F32),
     .dims = {D_D},
     .with = "obs_mean"},
};

static const struct fspec error_spec[] = {
    INT("code", INT64_MIN, I64),
    STR("message"),
    OPT_STR("frame"),
};

#define SPEC(a)                                                                                              \
	{                                                                                                    \
		a, sizeof a / sizeof a[0]                                                                    \
	}
static const struct {
	const struct fspec *fields;
	int n;
} schema[SEED_FRAME_NTYPES] = {
    [SEED_FRAME_STEP] = SPEC(step_spec),         [SEED_FRAME_ACTION] = SPEC(action_spec),
    [SEED_FRAME_UNROLL] = SPEC(unroll_spec),     [SEED_FRAME_EPISODE] = SPEC(episode_spec),
    [SEED_FRAME_PARAMS] = SPEC(params_spec),     [SEED_FRAME_ERROR] = SPEC(error_spec),
    [SEED_FRAME_SAMPLE] = SPEC(sample_spec),     [SEED_FRAME_SEQUENCES] = SPEC(sequences_spec),
    [SEED_FRAME_PRIORITY] = SPEC(priority_spec), [SEED_FRAME_GENERATION] = SPEC(generation_spec),
};

struct dims {
	int64_t value[D_COUNT];
	const char *from[D_COUNT]; /* the field that fixed it, NULL while unset */
};

static int check_int(const seed_frame *f, const struct fspec *s, const seed_value *v, struct dims *d,
                     seed_err *err)
{
	size_t nl = strlen(s->name);
	if (v->kind != SEED_VALUE_INT)
		return frame_err(err, -SEED_EFRAME, f->type, s->name, nl, "%s, expected int",
		                 kind_name(v->kind));
	if (v->u.i < s->min || v->u.i > s->max)
		return frame_err(err, -SEED_EFRAME, f->type, s->name, nl, "%lld out of range [%lld, %lld]",
		                 (long long)v->u.i, (long long)s->min, (long long)s->max);
	if (s->fixes) {
		d->value[s->fixes] = v->u.i;
		d->from[s->fixes] = s->name;
	}
	return 0;
}

/* A str field whose value must be one of s->values. */
static int check_value(const seed_frame *f, const struct fspec *s, const seed_value *v, seed_err *err)
{
	char list[120] = "", q[FRAME_QUOTE_MAX];
	size_t o = 0;
	for (int i = 0; s->values[i]; i++) {
		if (strlen(s->values[i]) == v->u.str.len &&
		    memcmp(s->values[i], v->u.str.ptr, v->u.str.len) == 0)
			return 0;
		o += (size_t)snprintf(list + o, sizeof list - o, "%s'%s'", i ? ", " : "", s->values[i]);
		if (o >= sizeof list)
			o = sizeof list - 1;
	}
	return frame_err(err, -SEED_EFRAME, f->type, s->name, strlen(s->name), "'%s', expected one of %s",
	                 frame_quote(q, v->u.str.ptr, v->u.str.len), list);
}

/* A float field (an int is taken as its value): finite, at least s->fmin. */
static int check_float(const seed_frame *f, const struct fspec *s, const seed_value *v, seed_err *err)
{
	size_t nl = strlen(s->name);
	if (v->kind != SEED_VALUE_FLOAT && v->kind != SEED_VALUE_INT)
		return frame_err(err, -SEED_EFRAME, f->type, s->name, nl, "%s, expected float",
		                 kind_name(v->kind));
	double x = v->kind == SEED_VALUE_FLOAT ? v->u.f : (double)v->u.i;
	if (!isfinite(x) || x < s->fmin)
		return frame_err(err, -SEED_EFRAME, f->type, s->name, nl, "%g, expected a finite value >= %g",
		                 x, s->fmin);
	return 0;
}

static void expected_shape(char *buf, size_t size, const struct fspec *s)
{
	size_t o = (size_t)snprintf(buf, size, "[");
	for (int i = 0; i < 3 && s->dims[i] && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "," : "", dim_names[s->dims[i]]);
	if (o < size)
		snprintf(buf + o, size - o, "%s]", s->more ? ",..." : "");
}

/* What an action entry's message adds: the action space the frame's
 * 'action' field chose, for the other action fields (prev_action), or
 * both forms, for 'action' itself in a frame that is not Box. */
static const char *space_note(const struct fspec *s, bool box)
{
	if (!s->action)
		return "";
	if (box)
		return " (a Box frame: 'action' is f32)";
	return strcmp(s->name, "action") == 0 ? " (discrete actions) or f32 (Box actions)"
	                                      : " (discrete actions: 'action' is i32)";
}

static int check_tensor(const seed_frame *f, const struct fspec *s, const seed_tensor *t, struct dims *d,
                        bool box, seed_err *err)
{
	size_t nl = strlen(s->name);
	char got[160], want[40];
	if (s->like) {
		const seed_tensor *o = seed_frame_tensor(f, s->like);
		if (t->dtype != o->dtype)
			return frame_err(err, -SEED_EFRAME, f->type, s->name, nl,
			                 "dtype %s, expected %s (as '%s')", seed_dtype_name(t->dtype),
			                 seed_dtype_name(o->dtype), s->like);
		if (t->rank != o->rank ||
		    memcmp(t->shape, o->shape, (size_t)t->rank * sizeof t->shape[0]) != 0) {
			char os[160];
			return frame_err(
			    err, -SEED_EFRAME, f->type, s->name, nl, "shape %s, expected %s (as '%s')",
			    frame_shape_str(got, sizeof got, t), frame_shape_str(os, sizeof os, o), s->like);
		}
		return 0;
	}
	if (!(s->dtypes & (1u << t->dtype)))
		/* Every dtype mask in the tables is either one dtype or all. */
		return frame_err(err, -SEED_EFRAME, f->type, s->name, nl, "dtype %s, expected %s%s",
		                 seed_dtype_name(t->dtype),
		                 seed_dtype_name((seed_dtype)__builtin_ctz(s->dtypes)), space_note(s, box));
	int nd = 0;
	while (nd < 3 && s->dims[nd])
		nd++;
	if (s->more ? t->rank < nd : t->rank != nd) {
		expected_shape(want, sizeof want, s);
		return frame_err(err, -SEED_EFRAME, f->type, s->name, nl, "shape %s, expected %s%s",
		                 frame_shape_str(got, sizeof got, t), want, box ? space_note(s, box) : "");
	}
	for (int i = 0; i < t->rank; i++)
		if (t->shape[i] < 1)
			return frame_err(err, -SEED_EFRAME, f->type, s->name, nl,
			                 "shape %s: dimension %d is %lld, expected at least 1",
			                 frame_shape_str(got, sizeof got, t), i, (long long)t->shape[i]);
	for (int i = 0; i < nd; i++) {
		int sym = s->dims[i];
		/* 2A is A's: fixed by it, or fixing it when even. */
		int key = sym == D_2A ? D_A : sym;
		int64_t times = sym == D_2A ? 2 : 1;
		if (!d->from[key] && t->shape[i] % times == 0) {
			d->value[key] = t->shape[i] / times;
			d->from[key] = s->name;
		} else if (!d->from[key] || t->shape[i] != times * d->value[key]) {
			expected_shape(want, sizeof want, s);
			if (!d->from[key])
				return frame_err(err, -SEED_EFRAME, f->type, s->name, nl,
				                 "shape %s, expected %s: dimension %d is %lld, not even",
				                 frame_shape_str(got, sizeof got, t), want, i,
				                 (long long)t->shape[i]);
			return frame_err(
			    err, -SEED_EFRAME, f->type, s->name, nl,
			    "shape %s, expected %s: dimension %d is %lld, but %s = %lld (from '%s')",
			    frame_shape_str(got, sizeof got, t), want, i, (long long)t->shape[i],
			    dim_names[sym], (long long)(times * d->value[key]), d->from[key]);
		}
	}
	return 0;
}

/* The Box form of an action entry: f32, with A after its dimensions. */
static struct fspec box_form(const struct fspec *s)
{
	struct fspec b = *s;
	int nd = 0;
	while (nd < 2 && b.dims[nd])
		nd++;
	b.dtypes = DT(F32);
	b.dims[nd] = D_A;
	return b;
}

/* Element i of a tensor of float32 (data may be unaligned). */
static float f32_at(const seed_tensor *t, int64_t i)
{
	float x;
	memcpy(&x, (const unsigned char *)t->data + 4 * (size_t)i, sizeof x);
	return x;
}

/* Element i of a tensor of float64 (data may be unaligned). */
static double f64_at(const seed_tensor *t, int64_t i)
{
	double x;
	memcpy(&x, (const unsigned char *)t->data + 8 * (size_t)i, sizeof x);
	return x;
}

/* The contents the schema checks, after the structure: a step frame's
 * bounds, a Box action frame's elements, an episode frame's observation
 * moments. */
static int check_contents(const seed_frame *f, bool box, seed_err *err)
{
	if (f->type == SEED_FRAME_STEP) {
		const seed_tensor *lo = seed_frame_tensor(f, "action_low"),
		                  *hi = seed_frame_tensor(f, "action_high");
		if (!lo)
			return 0; /* discrete (the schema has both or neither) */
		for (int64_t i = 0; i < lo->shape[0]; i++) {
			float l = f32_at(lo, i), h = f32_at(hi, i);
			if (isnan(l))
				return frame_err(err, -SEED_EFRAME, f->type, "action_low", 10,
				                 "element %lld is NaN", (long long)i);
			if (isnan(h))
				return frame_err(err, -SEED_EFRAME, f->type, "action_high", 11,
				                 "element %lld is NaN", (long long)i);
			if (l > h)
				return frame_err(err, -SEED_EFRAME, f->type, "action_low", 10,
				                 "element %lld is %g, above action_high's %g", (long long)i,
				                 (double)l, (double)h);
		}
	} else if (f->type == SEED_FRAME_ACTION && box) {
		const seed_tensor *a = seed_frame_tensor(f, "action");
		int64_t n = a->shape[0] * a->shape[1]; /* both checked, the bytes in bounds */
		for (int64_t i = 0; i < n; i++)
			if (!isfinite(f32_at(a, i)))
				return frame_err(err, -SEED_EFRAME, f->type, "action", 6,
				                 "element %lld is not finite", (long long)i);
	} else if (f->type == SEED_FRAME_EPISODE) {
		const seed_tensor *s = seed_frame_tensor(f, "obs_sum"),
		                  *q = seed_frame_tensor(f, "obs_sumsq");
		if (!s)
			return 0; /* none (the schema has all three or none) */
		for (int64_t i = 0; i < s->shape[0]; i++) {
			if (!isfinite(f64_at(s, i)))
				return frame_err(err, -SEED_EFRAME, f->type, "obs_sum", 7,
				                 "element %lld is %g, expected finite", (long long)i,
				                 f64_at(s, i));
			double x = f64_at(q, i);
			if (!isfinite(x) || x < 0)
				return frame_err(err, -SEED_EFRAME, f->type, "obs_sumsq", 9,
				                 "element %lld is %g, expected a finite value >= 0",
				                 (long long)i, x);
		}
	}
	return 0;
}

/* The schema entry of an unroll frame's per-step field. */
static struct fspec unroll_step_spec(const seed_unroll_field *u)
{
	struct fspec s = {.name = u->name, .kind = FK_TENSOR, .dims = {D_B, D_T1}};
	switch (u->extent) {
	case SEED_UNROLL_PER_STEP:
		s.dtypes = 1u << u->dtype;
		break;
	case SEED_UNROLL_PER_ACTION:
		s.dtypes = 1u << u->dtype;
		s.dims[2] = D_A;
		break;
	case SEED_UNROLL_PER_PARAM:
		s.dtypes = 1u << u->dtype;
		s.dims[2] = D_2A;
		break;
	case SEED_UNROLL_PER_OBS:
		s.dtypes = DT_ANY;
		s.more = true;
		break;
	}
	return s;
}

int frame_check_schema(const seed_frame *f, seed_err *err)
{
	struct dims d;
	memset(&d, 0, sizeof d);
	const struct fspec *spec = schema[f->type].fields;
	int nfixed = schema[f->type].n;
	int nstep = f->type == SEED_FRAME_UNROLL || f->type == SEED_FRAME_SEQUENCES ? SEED_UNROLL_NFIELDS : 0;
	/* The action space, from the dtype of 'action' (an action or unroll
	 * frame's; sequences frames are discrete only). */
	bool box = false;
	if (f->type == SEED_FRAME_ACTION || f->type == SEED_FRAME_UNROLL) {
		const seed_tensor *a = seed_frame_tensor(f, "action");
		box = a && a->dtype == SEED_DTYPE_F32;
	}
	const seed_unroll_field *table = box ? seed_frame_unroll_box_fields : seed_frame_unroll_fields;
	for (int i = 0; i < nfixed + nstep; i++) {
		struct fspec one;
		const struct fspec *s = &one;
		if (i >= nfixed) {
			one = unroll_step_spec(&table[i - nfixed]);
			one.action = i - nfixed == SEED_UNROLL_ACTION && f->type == SEED_FRAME_UNROLL;
		} else if (box && spec[i].action) {
			one = box_form(&spec[i]);
		} else {
			s = &spec[i];
		}
		const seed_value *v = seed_frame_get(f, s->name);
		size_t nl = strlen(s->name);
		if (!v) {
			if (s->optional)
				continue;
			return frame_err(err, -SEED_EFRAME, f->type, s->name, nl, "missing");
		}
		if (s->with && !seed_frame_get(f, s->with))
			return frame_err(err, -SEED_EFRAME, f->type, s->name, nl,
			                 "present without '%s' (they come together or not at all)", s->with);
		int rc = 0;
		switch (s->kind) {
		case FK_INT:
			rc = check_int(f, s, v, &d, err);
			break;
		case FK_STR:
			if (v->kind != SEED_VALUE_STR)
				rc = frame_err(err, -SEED_EFRAME, f->type, s->name, nl, "%s, expected str",
				               kind_name(v->kind));
			else if (s->values)
				rc = check_value(f, s, v, err);
			break;
		case FK_FLOAT:
			rc = check_float(f, s, v, err);
			break;
		case FK_BOOL:
			if (v->kind != SEED_VALUE_BOOL)
				rc = frame_err(err, -SEED_EFRAME, f->type, s->name, nl, "%s, expected bool",
				               kind_name(v->kind));
			break;
		case FK_TENSOR:
			if (v->kind != SEED_VALUE_TENSOR)
				rc = frame_err(err, -SEED_EFRAME, f->type, s->name, nl, "%s, expected tensor",
				               kind_name(v->kind));
			else
				rc = check_tensor(f, s, &v->u.tensor, &d, box, err);
			break;
		}
		if (rc < 0)
			return rc;
	}
	return check_contents(f, box, err);
}
