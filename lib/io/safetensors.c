/* safetensors.c: the safetensors file format (see seed/safetensors.h).
 *
 * Reading trusts nothing: every length, offset and dimension is checked with
 * overflow-safe arithmetic before any pointer is formed from it, and the
 * tensors must tile the data section exactly, as the reference
 * implementation requires.  The parsed header (jansson) stays alive with the
 * loaded file: names and metadata values point into it.
 */
#include "seed/safetensors.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/bytes.h"
#include "seed/buf.h"
#include "seed/fsutil.h"

/* Seed dtypes and their safetensors names. */
static const struct {
	seed_dtype dt;
	const char *name;
} st_dtypes[] = {
    {SEED_DTYPE_U8, "U8"},   {SEED_DTYPE_I8, "I8"},   {SEED_DTYPE_I32, "I32"},
    {SEED_DTYPE_I64, "I64"}, {SEED_DTYPE_F32, "F32"}, {SEED_DTYPE_F64, "F64"},
};
#define N_ST_DTYPES (sizeof st_dtypes / sizeof st_dtypes[0])

/* dtypes the format knows but Seed has no use for: refused by name, so the
 * message says "unsupported" rather than "unknown". */
static const char *const foreign_dtypes[] = {
    "BOOL", "I16",     "U16",     "F16",     "BF16",    "U32",     "U64",
    "C64",  "F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4",
};

const char *seed_safetensors_dtype_name(seed_dtype dt)
{
	for (size_t i = 0; i < N_ST_DTYPES; i++)
		if (st_dtypes[i].dt == dt)
			return st_dtypes[i].name;
	return NULL;
}

/* Shape as "[2, 3]" into buf. */
static const char *shape_str(char *buf, size_t len, int rank, const int64_t *shape)
{
	size_t n = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < rank && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%" PRId64, i ? ", " : "", shape[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
	return buf;
}

/* Elements times element size, or -1 on overflow of int64/size_t. */
static int64_t nbytes_checked(int rank, const int64_t *shape, size_t elem)
{
	uint64_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (shape[i] < 0 || __builtin_mul_overflow(n, (uint64_t)shape[i], &n))
			return -1;
	}
	if (__builtin_mul_overflow(n, (uint64_t)elem, &n) || n > (uint64_t)INT64_MAX || n > SIZE_MAX)
		return -1;
	return (int64_t)n;
}

/* ---- writing ------------------------------------------------------------ */

struct wtensor {
	char *name;
	seed_tensor t;
	size_t nbytes;
};

struct seed_safetensors_writer {
	struct wtensor *t;
	size_t n, cap;
	json_t *meta; /* object of strings, in the order keys were first set */
};

seed_safetensors_writer *seed_safetensors_writer_new(void)
{
	seed_safetensors_writer *w = seed_xcalloc(1, sizeof *w);
	w->meta = json_object();
	if (!w->meta)
		seed_oom(0); /* jansson out of memory: like seed_xmalloc */
	return w;
}

void seed_safetensors_writer_free(seed_safetensors_writer **wp)
{
	if (!wp || !*wp)
		return;
	seed_safetensors_writer *w = *wp;
	for (size_t i = 0; i < w->n; i++)
		free(w->t[i].name);
	free(w->t);
	json_decref(w->meta);
	free(w);
	*wp = NULL;
}

static int is_utf8(const char *s)
{
	json_t *j = json_string(s);
	json_decref(j);
	return j != NULL;
}

int seed_safetensors_writer_add(seed_safetensors_writer *w, const char *name, const seed_tensor *t,
                                seed_err *err)
{
	if (!name || !*name)
		return seed_err_set(err, -EINVAL, "safetensors: a tensor needs a non-empty name");
	if (!is_utf8(name))
		return seed_err_set(err, -EINVAL, "safetensors: tensor name '%s' is not UTF-8", name);
	if (strcmp(name, "__metadata__") == 0)
		return seed_err_set(err, -EINVAL,
		                    "safetensors: '__metadata__' is reserved, not a tensor name");
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(w->t[i].name, name) == 0)
			return seed_err_set(err, -EINVAL, "safetensors: tensor '%s' added twice", name);
	if (!seed_safetensors_dtype_name(t->dtype))
		return seed_err_set(err, -EINVAL, "safetensors: tensor '%s': invalid dtype %d", name,
		                    (int)t->dtype);
	if (t->rank < 0 || t->rank > SEED_TENSOR_MAX_RANK)
		return seed_err_set(err, -EINVAL, "safetensors: tensor '%s': rank %d outside [0, %d]", name,
		                    t->rank, SEED_TENSOR_MAX_RANK);
	char sh[160];
	int64_t nb = nbytes_checked(t->rank, t->shape, seed_dtype_size(t->dtype));
	if (nb < 0)
		return seed_err_set(err, -EINVAL, "safetensors: tensor '%s': bad shape %s", name,
		                    shape_str(sh, sizeof sh, t->rank, t->shape));
	if (nb > 0 && !t->data)
		return seed_err_set(err, -EINVAL, "safetensors: tensor '%s': no data", name);
	w->t = seed_xgrow(w->t, &w->cap, w->n + 1, sizeof *w->t);
	struct wtensor *e = &w->t[w->n++];
	e->name = strcpy(seed_xmalloc(strlen(name) + 1), name);
	e->t = *t;
	e->nbytes = (size_t)nb;
	return 0;
}

int seed_safetensors_writer_meta(seed_safetensors_writer *w, const char *key, const char *value,
                                 seed_err *err)
{
	if (!is_utf8(key))
		return seed_err_set(err, -EINVAL, "safetensors: metadata key '%s' is not UTF-8", key);
	json_t *v = json_string(value);
	if (!v)
		return seed_err_set(err, -EINVAL, "safetensors: metadata value for '%s' is not UTF-8", key);
	if (json_object_set_new(w->meta, key, v) != 0)
		seed_oom(0); /* the key is valid UTF-8: only allocation can fail */
	return 0;
}

/* The layout: header text (padded) and, for each tensor in data order, its
 * index in w->t.  Data order is 8-byte elements first, then 4, then 1, each
 * group in the order added: with the data section 8-aligned, every tensor
 * then starts at a multiple of its element size. */
struct plan {
	char *header; /* padded, not NUL-terminated at hlen */
	size_t hlen;
	size_t *order;
	uint64_t data_len;
};

static void plan_free(struct plan *p)
{
	free(p->header);
	free(p->order);
}

static int make_plan(const seed_safetensors_writer *w, struct plan *p, seed_err *err)
{
	uint64_t *begin = seed_xcalloc(w->n ? w->n : 1, sizeof *begin);
	p->order = seed_xcalloc(w->n ? w->n : 1, sizeof *p->order);
	uint64_t off = 0;
	size_t k = 0;
	static const size_t sizes[] = {8, 4, 1};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (size_t i = 0; i < w->n; i++)
			if (seed_dtype_size(w->t[i].t.dtype) == sizes[s]) {
				p->order[k++] = i;
				begin[i] = off;
				off += w->t[i].nbytes;
			}
	p->data_len = off;

	json_t *root = json_object();
	if (json_object_size(w->meta) > 0)
		json_object_set(root, "__metadata__", w->meta);
	for (size_t i = 0; i < w->n; i++) {
		const struct wtensor *e = &w->t[i];
		json_t *shape = json_array();
		for (int d = 0; d < e->t.rank; d++)
			json_array_append_new(shape, json_integer(e->t.shape[d]));
		json_t *ent = json_pack(
		    "{s:s, s:o, s:[I, I]}", "dtype", seed_safetensors_dtype_name(e->t.dtype), "shape", shape,
		    "data_offsets", (json_int_t)begin[i], (json_int_t)(begin[i] + e->nbytes));
		if (!ent || json_object_set_new(root, e->name, ent) != 0)
			seed_oom(0); /* only allocation can fail here: inputs were checked by add */
	}
	free(begin);
	char *text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!text)
		seed_oom(0);
	size_t len = strlen(text);
	if (len > SEED_SAFETENSORS_MAX_HEADER) {
		free(text);
		free(p->order);
		p->order = NULL;
		return seed_err_set(err, -EFBIG, "safetensors: header of %zu bytes exceeds the limit of %d",
		                    len, SEED_SAFETENSORS_MAX_HEADER);
	}
	/* Pad with spaces so that 8 + hlen, the data section's start, is a
	 * multiple of 8. */
	p->hlen = (len + 7) / 8 * 8;
	p->header = seed_xmalloc(p->hlen);
	memcpy(p->header, text, len);
	memset(p->header + len, ' ', p->hlen - len);
	free(text);
	return 0;
}

int seed_safetensors_writer_write(const seed_safetensors_writer *w, const char *path, seed_err *err)
{
	struct plan p = {0};
	int rc = make_plan(w, &p, err);
	if (rc)
		return rc;
	uint8_t len8[8];
	seed_le_put64(len8, p.hlen);
	seed_fs_part *parts = seed_xmalloc((w->n + 2) * sizeof *parts);
	size_t np = 0;
	parts[np++] = (seed_fs_part){len8, 8};
	parts[np++] = (seed_fs_part){p.header, p.hlen};
	for (size_t k = 0; k < w->n; k++) {
		const struct wtensor *e = &w->t[p.order[k]];
		if (e->nbytes)
			parts[np++] = (seed_fs_part){e->t.data, e->nbytes};
	}
	rc = seed_fs_write_atomic(path, parts, np, err);
	free(parts);
	plan_free(&p);
	return rc;
}

int seed_safetensors_writer_encode(const seed_safetensors_writer *w, void **data, size_t *len, seed_err *err)
{
	struct plan p = {0};
	int rc = make_plan(w, &p, err);
	if (rc)
		return rc;
	seed_buf b;
	seed_buf_init(&b);
	uint8_t len8[8];
	seed_le_put64(len8, p.hlen);
	seed_buf_append(&b, len8, 8);
	seed_buf_append(&b, p.header, p.hlen);
	for (size_t k = 0; k < w->n; k++) {
		const struct wtensor *e = &w->t[p.order[k]];
		if (e->nbytes)
			seed_buf_append(&b, e->t.data, e->nbytes);
	}
	plan_free(&p);
	*data = b.data ? b.data : seed_xmalloc(1);
	*len = b.len;
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

struct rtensor {
	const char *name; /* points into root */
	seed_tensor t;
	uint64_t begin, end;
	void *copy; /* aligned copy when the file's bytes were misaligned */
};

struct seed_safetensors {
	char *path;
	uint8_t *file; /* the whole file, 64-byte aligned */
	size_t len;
	json_t *root;
	struct rtensor *t; /* in header order */
	size_t n;
	const struct rtensor **by_name; /* sorted by name */
	const char **mkeys, **mvals;
	size_t nm;
};

void seed_safetensors_free(seed_safetensors **stp)
{
	if (!stp || !*stp)
		return;
	seed_safetensors *st = *stp;
	for (size_t i = 0; i < st->n; i++)
		free(st->t[i].copy);
	free(st->t);
	free(st->by_name);
	free(st->mkeys);
	free(st->mvals);
	json_decref(st->root);
	free(st->file);
	free(st->path);
	free(st);
	*stp = NULL;
}

static int bad(seed_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(seed_err *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

/* A JSON integer in [0, INT64_MAX], or -1. */
static int64_t json_nonneg(const json_t *j)
{
	if (!json_is_integer(j))
		return -1;
	json_int_t v = json_integer_value(j);
	return v < 0 ? -1 : (int64_t)v;
}

static int parse_dtype(const char *path, const char *name, const json_t *j, seed_dtype *dt, seed_err *err)
{
	if (!json_is_string(j))
		return bad(err, "%s: tensor '%s': dtype is not a string", path, name);
	const char *s = json_string_value(j);
	for (size_t i = 0; i < N_ST_DTYPES; i++)
		if (strcmp(s, st_dtypes[i].name) == 0) {
			*dt = st_dtypes[i].dt;
			return 0;
		}
	for (size_t i = 0; i < sizeof foreign_dtypes / sizeof foreign_dtypes[0]; i++)
		if (strcmp(s, foreign_dtypes[i]) == 0)
			return bad(
			    err,
			    "%s: tensor '%s': dtype %s is not supported by Seed (U8, I8, I32, I64, F32, F64)",
			    path, name, s);
	return bad(err, "%s: tensor '%s': unknown dtype '%s'", path, name, s);
}

/* Fill r from the header entry ent (everything but the data pointer). */
static int parse_entry(const char *path, const char *name, const json_t *ent, uint64_t data_len,
                       struct rtensor *r, seed_err *err)
{
	if (!json_is_object(ent))
		return bad(err, "%s: tensor '%s': header entry is not an object", path, name);
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)ent, key, val)
	{
		if (strcmp(key, "dtype") != 0 && strcmp(key, "shape") != 0 &&
		    strcmp(key, "data_offsets") != 0)
			return bad(err, "%s: tensor '%s': unknown field '%s'", path, name, key);
	}
	const json_t *jd = json_object_get(ent, "dtype");
	const json_t *js = json_object_get(ent, "shape");
	const json_t *jo = json_object_get(ent, "data_offsets");
	if (!jd || !js || !jo)
		return bad(err, "%s: tensor '%s': missing field '%s'", path, name,
		           !jd   ? "dtype"
		           : !js ? "shape"
		                 : "data_offsets");
	r->name = name;
	int rc = parse_dtype(path, name, jd, &r->t.dtype, err);
	if (rc)
		return rc;

	if (!json_is_array(js))
		return bad(err, "%s: tensor '%s': shape is not an array", path, name);
	size_t rank = json_array_size(js);
	if (rank > SEED_TENSOR_MAX_RANK)
		return bad(err, "%s: tensor '%s': rank %zu exceeds Seed's limit of %d", path, name, rank,
		           SEED_TENSOR_MAX_RANK);
	r->t.rank = (int)rank;
	for (size_t i = 0; i < rank; i++) {
		int64_t d = json_nonneg(json_array_get(js, i));
		if (d < 0)
			return bad(err, "%s: tensor '%s': shape[%zu] is not a non-negative integer", path,
			           name, i);
		r->t.shape[i] = d;
	}

	if (!json_is_array(jo) || json_array_size(jo) != 2)
		return bad(err, "%s: tensor '%s': data_offsets is not an array [begin, end]", path, name);
	int64_t b = json_nonneg(json_array_get(jo, 0)), e = json_nonneg(json_array_get(jo, 1));
	if (b < 0 || e < 0)
		return bad(err, "%s: tensor '%s': data_offsets are not non-negative integers", path, name);
	if (e < b)
		return bad(err,
		           "%s: tensor '%s': data_offsets [%" PRId64 ", %" PRId64 "] end before they begin",
		           path, name, b, e);
	if ((uint64_t)e > data_len)
		return bad(err,
		           "%s: tensor '%s': data_offsets [%" PRId64 ", %" PRId64
		           "] run past the data section (%" PRIu64 " bytes)",
		           path, name, b, e, data_len);
	char sh[160];
	int64_t nb = nbytes_checked(r->t.rank, r->t.shape, seed_dtype_size(r->t.dtype));
	if (nb < 0)
		return bad(err, "%s: tensor '%s': shape %s overflows", path, name,
		           shape_str(sh, sizeof sh, r->t.rank, r->t.shape));
	if (nb != e - b)
		return bad(err,
		           "%s: tensor '%s': shape %s of %s needs %" PRId64
		           " bytes but data_offsets [%" PRId64 ", %" PRId64 "] span %" PRId64,
		           path, name, shape_str(sh, sizeof sh, r->t.rank, r->t.shape), json_string_value(jd),
		           nb, b, e, e - b);
	r->begin = (uint64_t)b;
	r->end = (uint64_t)e;
	return 0;
}

/* qsort comparators over arrays of pointers to entries. */
static int cmp_offsets(const void *a, const void *b)
{
	const struct rtensor *x = *(const struct rtensor *const *)a, *y = *(const struct rtensor *const *)b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	const struct rtensor *x = *(const struct rtensor *const *)a, *y = *(const struct rtensor *const *)b;
	return strcmp(x->name, y->name);
}

/* The tensors must tile [0, data_len) exactly. */
static int check_tiling(const seed_safetensors *st, uint64_t data_len, seed_err *err)
{
	const struct rtensor **idx = seed_xmalloc((st->n ? st->n : 1) * sizeof *idx);
	for (size_t i = 0; i < st->n; i++)
		idx[i] = &st->t[i];
	qsort(idx, st->n, sizeof *idx, cmp_offsets);
	uint64_t at = 0;
	int rc = 0;
	for (size_t k = 0; k < st->n && rc == 0; k++) {
		const struct rtensor *r = idx[k];
		if (r->begin > at)
			rc = bad(err,
			         "%s: tensor '%s': gap before it: bytes [%" PRIu64 ", %" PRIu64
			         ") of the data section belong to no tensor",
			         st->path, r->name, at, r->begin);
		else if (r->begin < at)
			rc = bad(err, "%s: tensor '%s' overlaps tensor '%s' in the data section", st->path,
			         r->name, idx[k - 1]->name);
		else
			at = r->end;
	}
	if (rc == 0 && at != data_len)
		rc = bad(err,
		         "%s: bytes [%" PRIu64 ", %" PRIu64
		         ") at the end of the data section belong to no tensor",
		         st->path, at, data_len);
	free(idx);
	return rc;
}

/* Validate st->file (st->len bytes) and fill in the rest of st. */
static int parse(seed_safetensors *st, seed_err *err)
{
	const char *path = st->path;
	if (st->len < 8)
		return bad(err,
		           "%s: %zu bytes: too short for a safetensors file (8-byte header length first)",
		           path, st->len);
	uint64_t hlen = seed_le_get64(st->file);
	if (hlen > SEED_SAFETENSORS_MAX_HEADER)
		return bad(err, "%s: header length %" PRIu64 " exceeds the limit of %d bytes", path, hlen,
		           SEED_SAFETENSORS_MAX_HEADER);
	if (hlen > st->len - 8)
		return bad(err, "%s: header length %" PRIu64 " runs past the end of the file (%zu bytes)",
		           path, hlen, st->len);
	const char *header = (const char *)st->file + 8;
	if (hlen < 2)
		return bad(err, "%s: header length %" PRIu64 " is too small for a JSON object", path, hlen);
	if (header[0] != '{')
		return bad(err, "%s: header does not start with '{'", path);
	json_error_t je;
	st->root = json_loadb(header, (size_t)hlen, JSON_REJECT_DUPLICATES, &je);
	if (!st->root)
		return bad(err, "%s: header is not valid JSON: %s (byte %d of the header)", path, je.text,
		           je.position);
	if (!json_is_object(st->root))
		return bad(err, "%s: header is not a JSON object", path);

	uint64_t data_len = st->len - 8 - hlen;
	size_t ntensors = json_object_size(st->root);
	st->t = seed_xcalloc(ntensors ? ntensors : 1, sizeof *st->t);
	const char *name;
	json_t *ent;
	json_object_foreach(st->root, name, ent)
	{
		if (strcmp(name, "__metadata__") == 0) {
			if (!json_is_object(ent))
				return bad(err, "%s: __metadata__ is not an object", path);
			size_t nm = json_object_size(ent);
			st->mkeys = seed_xcalloc(nm ? nm : 1, sizeof *st->mkeys);
			st->mvals = seed_xcalloc(nm ? nm : 1, sizeof *st->mvals);
			const char *k;
			json_t *v;
			json_object_foreach(ent, k, v)
			{
				if (!json_is_string(v))
					return bad(err, "%s: __metadata__ value for '%s' is not a string",
					           path, k);
				st->mkeys[st->nm] = k;
				st->mvals[st->nm++] = json_string_value(v);
			}
			continue;
		}
		/* The writer's rules for names, so that whatever loads can be
		 * written again: "__metadata__" is taken above, UTF-8 is jansson's. */
		if (!*name)
			return bad(err, "%s: a tensor has an empty name", path);
		int rc = parse_entry(path, name, ent, data_len, &st->t[st->n], err);
		if (rc)
			return rc;
		st->n++;
	}
	int rc = check_tiling(st, data_len, err);
	if (rc)
		return rc;

	const uint8_t *data = st->file + 8 + hlen;
	for (size_t i = 0; i < st->n; i++) {
		struct rtensor *r = &st->t[i];
		size_t nb = (size_t)(r->end - r->begin);
		void *p = (void *)(data + r->begin);
		if ((uintptr_t)p % seed_dtype_size(r->t.dtype) != 0) {
			r->copy = seed_xaligned(nb);
			memcpy(r->copy, p, nb);
			p = r->copy;
		}
		r->t.data = p;
	}
	st->by_name = seed_xmalloc((st->n ? st->n : 1) * sizeof *st->by_name);
	for (size_t i = 0; i < st->n; i++)
		st->by_name[i] = &st->t[i];
	qsort(st->by_name, st->n, sizeof *st->by_name, cmp_names);
	return 0;
}

static int finish(seed_safetensors *st, seed_safetensors **out, seed_err *err)
{
	int rc = parse(st, err);
	if (rc) {
		seed_safetensors_free(&st);
		return rc;
	}
	*out = st;
	return 0;
}

int seed_safetensors_load(const char *path, seed_safetensors **out, seed_err *err)
{
	void *data;
	size_t len;
	int rc = seed_fs_read(path, 0, &data, &len, err);
	if (rc)
		return rc;
	seed_safetensors *st = seed_xcalloc(1, sizeof *st);
	st->path = strcpy(seed_xmalloc(strlen(path) + 1), path);
	st->file = data;
	st->len = len;
	return finish(st, out, err);
}

int seed_safetensors_parse(const void *data, size_t len, const char *what, seed_safetensors **out,
                           seed_err *err)
{
	if (!what)
		what = "safetensors data";
	seed_safetensors *st = seed_xcalloc(1, sizeof *st);
	st->path = strcpy(seed_xmalloc(strlen(what) + 1), what);
	st->file = seed_xaligned(len ? len : 1);
	if (len)
		memcpy(st->file, data, len);
	st->len = len;
	return finish(st, out, err);
}

size_t seed_safetensors_count(const seed_safetensors *st)
{
	return st->n;
}

const char *seed_safetensors_name(const seed_safetensors *st, size_t i)
{
	return i < st->n ? st->t[i].name : NULL;
}

const seed_tensor *seed_safetensors_get(const seed_safetensors *st, const char *name)
{
	size_t lo = 0, hi = st->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct rtensor *r = st->by_name[mid];
		int c = strcmp(name, r->name);
		if (c == 0)
			return &r->t;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

int seed_safetensors_expect(const seed_safetensors *st, const char *name, seed_dtype dt, int rank,
                            const int64_t *shape, seed_tensor *out, seed_err *err)
{
	const seed_tensor *t = seed_safetensors_get(st, name);
	if (!t)
		return seed_err_set(err, -ENOENT, "%s: no tensor '%s'", st->path, name);
	int same = t->dtype == dt && t->rank == rank;
	for (int i = 0; same && i < rank; i++)
		same = t->shape[i] == shape[i];
	if (!same) {
		char want[160], have[160];
		return seed_err_set(err, -EINVAL, "%s: tensor '%s': expected %s %s, found %s %s", st->path,
		                    name, seed_dtype_name(dt), shape_str(want, sizeof want, rank, shape),
		                    seed_dtype_name(t->dtype),
		                    shape_str(have, sizeof have, t->rank, t->shape));
	}
	*out = *t;
	return 0;
}

const char *seed_safetensors_meta(const seed_safetensors *st, const char *key)
{
	for (size_t i = 0; i < st->nm; i++)
		if (strcmp(st->mkeys[i], key) == 0)
			return st->mvals[i];
	return NULL;
}

size_t seed_safetensors_meta_count(const seed_safetensors *st)
{
	return st->nm;
}

const char *seed_safetensors_meta_key(const seed_safetensors *st, size_t i)
{
	return i < st->nm ? st->mkeys[i] : NULL;
}

const char *seed_safetensors_path(const seed_safetensors *st)
{
	return st->path;
}
