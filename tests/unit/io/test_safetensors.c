/* tests/unit/io/test_safetensors.c: the safetensors reader and writer.
 *
 * Golden files come from the reference implementation (Python safetensors,
 * tests/golden/safetensors_ref.py): we must read them bit-exactly, and encode
 * the same tensors to the same bytes.  Every way a file can be malformed is
 * a named case that must fail with -EBADMSG and a message naming the file
 * and the tensor.  Atomicity: a write that fails midway leaves the old file.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "seed/safetensors.h"
#include "tap.h"
#include "tmpdir.h"

#include "data/safetensors_ref.h"

static const char *dir;

static const char *srcdir(void)
{
	const char *s = getenv("SEED_SRCDIR");
	return s && *s ? s : ".";
}

static int has(const char *msg, const char *part)
{
	return part == NULL || strstr(msg, part) != NULL;
}

/* ---- files from the reference implementation ---------------------------- */

static void t_reads_reference_files(void)
{
	for (size_t f = 0; f < sizeof st_ref_files / sizeof st_ref_files[0]; f++) {
		const struct st_ref_file *rf = &st_ref_files[f];
		char path[4096];
		snprintf(path, sizeof path, "%s/tests/golden/data/%s", srcdir(), rf->file);
		seed_safetensors *st = NULL;
		seed_err err = {""};
		int rc = seed_safetensors_load(path, &st, &err);
		CHECK_MSG(rc == 0, "%s: %s", rf->file, err.msg);
		if (rc)
			continue;
		CHECK(seed_safetensors_count(st) == rf->ntensors);
		for (size_t i = 0; i < rf->ntensors && i < seed_safetensors_count(st); i++) {
			const struct st_ref_tensor *r = &rf->tensors[i];
			CHECK_MSG(strcmp(seed_safetensors_name(st, i), r->name) == 0,
			          "%s: name %zu is %s, want %s", rf->file, i, seed_safetensors_name(st, i),
			          r->name);
			const seed_tensor *t = seed_safetensors_get(st, r->name);
			CHECK_MSG(t != NULL, "%s: no tensor %s", rf->file, r->name);
			if (!t)
				continue;
			CHECK_MSG(t->dtype == r->dtype && t->rank == r->rank, "%s: %s", rf->file, r->name);
			for (int d = 0; d < r->rank; d++)
				CHECK_MSG(t->shape[d] == r->shape[d], "%s: %s dim %d", rf->file, r->name, d);
			CHECK(seed_tensor_nbytes(t) == r->nbytes);
			CHECK_MSG(r->nbytes == 0 || memcmp(t->data, r->values, r->nbytes) == 0,
			          "%s: %s values differ", rf->file, r->name);
			CHECK_MSG((uintptr_t)t->data % seed_dtype_size(t->dtype) == 0, "%s: %s misaligned",
			          rf->file, r->name);
		}
		CHECK(seed_safetensors_meta_count(st) == rf->nmeta);
		for (size_t m = 0; m < rf->nmeta; m++) {
			const char *v = seed_safetensors_meta(st, rf->meta[2 * m]);
			CHECK_MSG(v && strcmp(v, rf->meta[2 * m + 1]) == 0, "%s: metadata %s", rf->file,
			          rf->meta[2 * m]);
		}
		CHECK(seed_safetensors_get(st, "no such tensor") == NULL);
		CHECK(seed_safetensors_meta(st, "no such key") == NULL);
		seed_safetensors_free(&st);
		CHECK(st == NULL);
	}
}

/* Our encoding of the same tensors is byte for byte the reference's. */
static void t_encodes_like_reference(void)
{
	static const struct {
		const char *file;
		int with_x;
	} cases[] = {{"st_ref_single.safetensors", 1}, {"st_ref_empty.safetensors", 0}};
	float x[2] = {0.5f, -2.0f};
	for (size_t c = 0; c < 2; c++) {
		seed_safetensors_writer *w = seed_safetensors_writer_new();
		seed_err err = {""};
		if (cases[c].with_x) {
			seed_tensor t = seed_tensor_view(x, SEED_DTYPE_F32, 1, (int64_t[]){2});
			CHECK(seed_safetensors_writer_add(w, "x", &t, &err) == 0);
		}
		void *ours;
		size_t len;
		CHECK(seed_safetensors_writer_encode(w, &ours, &len, &err) == 0);
		char path[4096];
		snprintf(path, sizeof path, "%s/tests/golden/data/%s", srcdir(), cases[c].file);
		size_t rlen = 0;
		char *ref = read_bytes(path, &rlen);
		CHECK_MSG(ref && rlen == len && memcmp(ref, ours, len) == 0, "%s: %zu bytes vs our %zu",
		          cases[c].file, rlen, len);
		free(ref);
		free(ours);
		seed_safetensors_writer_free(&w);
		CHECK(w == NULL);
	}
}

/* ---- our own files ------------------------------------------------------- */

static void t_roundtrip_all_dtypes(void)
{
	uint8_t u8[5] = {0, 1, 127, 128, 255};
	int8_t i8[3] = {-128, 0, 127};
	int32_t i32[2][2] = {{INT32_MIN, -1}, {0, INT32_MAX}};
	int64_t i64 = INT64_MIN;
	float f32[1][2][1][1][2][1] = {{{{{{-0.0f}, {1e-45f}}}}, {{{{3.4028235e38f}, {-1.5f}}}}}};
	double f64[3] = {0.1, -1e308, 4.9e-324};
	const struct {
		const char *name;
		seed_tensor t;
	} ts[] = {
	    {"u8", seed_tensor_view(u8, SEED_DTYPE_U8, 1, (int64_t[]){5})},
	    {"layer.0/i8 ünï", seed_tensor_view(i8, SEED_DTYPE_I8, 1, (int64_t[]){3})},
	    {"i32", seed_tensor_view(i32, SEED_DTYPE_I32, 2, (int64_t[]){2, 2})},
	    {"scalar", seed_tensor_view(&i64, SEED_DTYPE_I64, 0, NULL)},
	    {"rank6", seed_tensor_view(f32, SEED_DTYPE_F32, 6, (int64_t[]){1, 2, 1, 1, 2, 1})},
	    {"empty", seed_tensor_view(NULL, SEED_DTYPE_F32, 3, (int64_t[]){4, 0, 2})},
	    {"f64", seed_tensor_view(f64, SEED_DTYPE_F64, 1, (int64_t[]){3})},
	};
	size_t n = sizeof ts / sizeof ts[0];
	seed_safetensors_writer *w = seed_safetensors_writer_new();
	seed_err err = {""};
	for (size_t i = 0; i < n; i++)
		CHECK_MSG(seed_safetensors_writer_add(w, ts[i].name, &ts[i].t, &err) == 0, "%s", err.msg);
	CHECK(seed_safetensors_writer_meta(w, "a", "1", &err) == 0);
	CHECK(seed_safetensors_writer_meta(w, "json", "{\"x\": [1, \"\\n\"]}", &err) == 0);
	CHECK(seed_safetensors_writer_meta(w, "a", "2", &err) == 0); /* replaces */
	const char *path = pathf(dir, "round.safetensors");
	CHECK_MSG(seed_safetensors_writer_write(w, path, &err) == 0, "%s", err.msg);
	/* For the cross-check by hand with Python (tests/golden/checkpoint_readback.py). */
	const char *export = getenv("SEED_EXPORT_DIR");
	if (export && *export)
		CHECK(seed_safetensors_writer_write(w, pathf(export, "roundtrip.safetensors"), &err) == 0);
	seed_safetensors_writer_free(&w);

	seed_safetensors *st = NULL;
	CHECK_MSG(seed_safetensors_load(path, &st, &err) == 0, "%s", err.msg);
	if (!st)
		return;
	CHECK(seed_safetensors_count(st) == n);
	for (size_t i = 0; i < n && i < seed_safetensors_count(st); i++) {
		CHECK_MSG(strcmp(seed_safetensors_name(st, i), ts[i].name) == 0, "order: %zu is %s", i,
		          seed_safetensors_name(st, i));
		const seed_tensor *t = seed_safetensors_get(st, ts[i].name);
		CHECK_MSG(t && t->dtype == ts[i].t.dtype && t->rank == ts[i].t.rank, "%s", ts[i].name);
		if (!t)
			continue;
		for (int d = 0; d < t->rank; d++)
			CHECK(t->shape[d] == ts[i].t.shape[d]);
		size_t nb = seed_tensor_nbytes(&ts[i].t);
		CHECK(seed_tensor_nbytes(t) == nb);
		CHECK_MSG(nb == 0 || memcmp(t->data, ts[i].t.data, nb) == 0, "%s values", ts[i].name);
		CHECK((uintptr_t)t->data % seed_dtype_size(t->dtype) == 0);
	}
	CHECK(seed_safetensors_meta_count(st) == 2);
	CHECK(strcmp(seed_safetensors_meta_key(st, 0), "a") == 0);
	CHECK(strcmp(seed_safetensors_meta(st, "a"), "2") == 0);
	CHECK(strcmp(seed_safetensors_meta(st, "json"), "{\"x\": [1, \"\\n\"]}") == 0);
	CHECK(strcmp(seed_safetensors_path(st), path) == 0);
	seed_safetensors_free(&st);
}

/* The writer pads the header to a multiple of 8 with spaces and places
 * every tensor at an offset that is a multiple of its element size,
 * whatever the order they were added in. */
static void t_writer_layout_aligned(void)
{
	uint8_t odd[3] = {1, 2, 3};
	float f[3] = {1, 2, 3};
	double d[1] = {4};
	int8_t c[1] = {5};
	seed_safetensors_writer *w = seed_safetensors_writer_new();
	seed_err err;
	seed_tensor t1 = seed_tensor_view(odd, SEED_DTYPE_U8, 1, (int64_t[]){3});
	seed_tensor t2 = seed_tensor_view(f, SEED_DTYPE_F32, 1, (int64_t[]){3});
	seed_tensor t3 = seed_tensor_view(c, SEED_DTYPE_I8, 1, (int64_t[]){1});
	seed_tensor t4 = seed_tensor_view(d, SEED_DTYPE_F64, 1, (int64_t[]){1});
	CHECK(seed_safetensors_writer_add(w, "odd", &t1, &err) == 0);
	CHECK(seed_safetensors_writer_add(w, "f", &t2, &err) == 0);
	CHECK(seed_safetensors_writer_add(w, "c", &t3, &err) == 0);
	CHECK(seed_safetensors_writer_add(w, "d", &t4, &err) == 0);
	unsigned char *buf;
	size_t len;
	CHECK(seed_safetensors_writer_encode(w, (void **)&buf, &len, &err) == 0);
	seed_safetensors_writer_free(&w);
	uint64_t hlen = 0;
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | buf[i];
	CHECK(hlen % 8 == 0);
	CHECK(8 + hlen + 3 + 12 + 1 + 8 == len);
	CHECK(buf[8 + hlen - 1] == ' ' || buf[8 + hlen - 1] == '}');
	json_t *h = json_loadb((const char *)buf + 8, hlen, 0, NULL);
	CHECK(h != NULL);
	/* Expected offsets worked out by hand: f64 first, then f32, then the
	 * 1-byte tensors in the order added. */
	static const struct {
		const char *name;
		int64_t b, e;
	} want[] = {{"d", 0, 8}, {"f", 8, 20}, {"odd", 20, 23}, {"c", 23, 24}};
	for (size_t i = 0; i < 4; i++) {
		json_t *o = json_object_get(json_object_get(h, want[i].name), "data_offsets");
		CHECK_MSG(json_integer_value(json_array_get(o, 0)) == want[i].b &&
		              json_integer_value(json_array_get(o, 1)) == want[i].e,
		          "%s offsets", want[i].name);
	}
	/* Header order is the order added. */
	const char *key;
	json_t *v;
	const char *order[] = {"odd", "f", "c", "d"};
	size_t k = 0;
	json_object_foreach(h, key, v) CHECK(k < 4 && strcmp(key, order[k++]) == 0);
	json_decref(h);
	float f1;
	memcpy(&f1, buf + 8 + hlen + 12, 4);
	CHECK(f1 == 2.0f);
	free(buf);
}

/* Files from other writers may leave a tensor misaligned (unpadded header,
 * odd-sized tensors first): the reader hands out an aligned copy. */
static void t_misaligned_tensor_copied(void)
{
	const char *h = "{\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]},"
	                "\"f\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[3,11]}}";
	size_t hl = strlen(h);
	unsigned char file[256] = {0};
	for (int i = 0; i < 8; i++)
		file[i] = (unsigned char)(hl >> (8 * i));
	memcpy(file + 8, h, hl);
	unsigned char *data = file + 8 + hl;
	data[0] = 1, data[1] = 2, data[2] = 3;
	float fv[2] = {1.5f, -0.25f};
	memcpy(data + 3, fv, 8);
	const char *path = pathf(dir, "misaligned.safetensors");
	CHECK(write_bytes(path, file, 8 + hl + 11) == 0);
	seed_safetensors *st = NULL;
	seed_err err;
	CHECK_MSG(seed_safetensors_load(path, &st, &err) == 0, "%s", err.msg);
	if (!st)
		return;
	const seed_tensor *t = seed_safetensors_get(st, "f");
	CHECK(t && (uintptr_t)t->data % 4 == 0);
	CHECK(t && ((float *)t->data)[0] == 1.5f && ((float *)t->data)[1] == -0.25f);
	t = seed_safetensors_get(st, "b");
	CHECK(t && ((uint8_t *)t->data)[2] == 3);
	seed_safetensors_free(&st);
}

/* Zero-sized tensors may sit at any offset inside the data section. */
static void t_empty_tensors_between(void)
{
	const char *h = "{\"a\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]},"
	                "\"e1\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]},"
	                "\"e2\":{\"dtype\":\"U8\",\"shape\":[2,0],\"data_offsets\":[4,4]},"
	                "\"b\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[4,8]},"
	                "\"e3\":{\"dtype\":\"F64\",\"shape\":[0],\"data_offsets\":[8,8]}}";
	size_t hl = strlen(h);
	unsigned char file[512] = {0};
	for (int i = 0; i < 8; i++)
		file[i] = (unsigned char)(hl >> (8 * i));
	memcpy(file + 8, h, hl);
	int32_t v[2] = {-7, 9};
	memcpy(file + 8 + hl, v, 8);
	seed_safetensors *st = NULL;
	seed_err err;
	CHECK_MSG(seed_safetensors_parse(file, 8 + hl + 8, "mem", &st, &err) == 0, "%s", err.msg);
	if (!st)
		return;
	CHECK(seed_safetensors_count(st) == 5);
	const seed_tensor *b = seed_safetensors_get(st, "b");
	CHECK(b && *(int32_t *)b->data == 9);
	CHECK(seed_tensor_numel(seed_safetensors_get(st, "e2")) == 0);
	CHECK(strcmp(seed_safetensors_path(st), "mem") == 0);
	seed_safetensors_free(&st);
}

static void t_lookup_many_names(void)
{
	enum { N = 300 };
	static int32_t vals[N];
	char names[N][16];
	seed_safetensors_writer *w = seed_safetensors_writer_new();
	seed_err err;
	for (int i = 0; i < N; i++) {
		/* Names in an order that is not sorted. */
		snprintf(names[i], sizeof names[i], "p%d", (i * 7919) % N);
		vals[i] = (i * 7919) % N;
		seed_tensor t = seed_tensor_view(&vals[i], SEED_DTYPE_I32, 1, (int64_t[]){1});
		CHECK(seed_safetensors_writer_add(w, names[i], &t, &err) == 0);
	}
	void *buf;
	size_t len;
	CHECK(seed_safetensors_writer_encode(w, &buf, &len, &err) == 0);
	seed_safetensors_writer_free(&w);
	seed_safetensors *st = NULL;
	CHECK(seed_safetensors_parse(buf, len, "many", &st, &err) == 0);
	free(buf);
	if (!st)
		return;
	for (int i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof name, "p%d", i);
		const seed_tensor *t = seed_safetensors_get(st, name);
		CHECK_MSG(t && *(int32_t *)t->data == i, "%s", name);
	}
	CHECK(seed_safetensors_get(st, "p") == NULL && seed_safetensors_get(st, "p300") == NULL);
	seed_safetensors_free(&st);
}

static void t_expect_names_both_shapes(void)
{
	float x[6] = {0};
	seed_safetensors_writer *w = seed_safetensors_writer_new();
	seed_err err;
	seed_tensor t = seed_tensor_view(x, SEED_DTYPE_F32, 2, (int64_t[]){2, 3});
	CHECK(seed_safetensors_writer_add(w, "w", &t, &err) == 0);
	void *buf;
	size_t len;
	CHECK(seed_safetensors_writer_encode(w, &buf, &len, &err) == 0);
	seed_safetensors_writer_free(&w);
	seed_safetensors *st = NULL;
	CHECK(seed_safetensors_parse(buf, len, "model.st", &st, &err) == 0);
	free(buf);
	if (!st)
		return;
	seed_tensor out = {0};
	CHECK(seed_safetensors_expect(st, "w", SEED_DTYPE_F32, 2, (int64_t[]){2, 3}, &out, &err) == 0);
	CHECK(out.data == seed_safetensors_get(st, "w")->data);
	seed_tensor untouched = {.rank = 99};
	CHECK(seed_safetensors_expect(st, "w", SEED_DTYPE_F32, 2, (int64_t[]){3, 2}, &untouched, &err) ==
	      -EINVAL);
	CHECK_MSG(has(err.msg, "model.st") && has(err.msg, "'w'") && has(err.msg, "f32 [3, 2]") &&
	              has(err.msg, "f32 [2, 3]"),
	          "%s", err.msg);
	CHECK(untouched.rank == 99);
	CHECK(seed_safetensors_expect(st, "w", SEED_DTYPE_F64, 2, (int64_t[]){2, 3}, &untouched, &err) ==
	      -EINVAL);
	CHECK(seed_safetensors_expect(st, "v", SEED_DTYPE_F32, 1, (int64_t[]){6}, &untouched, &err) ==
	      -ENOENT);
	CHECK_MSG(has(err.msg, "'v'"), "%s", err.msg);
	seed_safetensors_free(&st);
}

static void t_writer_rejects_bad_tensors(void)
{
	float x[2] = {0};
	static const struct {
		const char *name;
		seed_dtype dt;
		int rank;
		int64_t shape[7];
		int null_data;
		const char *want;
	} cases[] = {
	    {"", SEED_DTYPE_F32, 1, {2}, 0, "non-empty"},
	    {"__metadata__", SEED_DTYPE_F32, 1, {2}, 0, "reserved"},
	    {"dup", SEED_DTYPE_F32, 1, {2}, 0, "twice"},
	    {"bad\xff", SEED_DTYPE_F32, 1, {2}, 0, "UTF-8"},
	    {"dtype", SEED_DTYPE_INVALID, 1, {2}, 0, "dtype"},
	    {"rank", SEED_DTYPE_F32, 7, {1, 1, 1, 1, 1, 1, 2}, 0, "rank 7"},
	    {"negative", SEED_DTYPE_F32, 1, {-2}, 0, "shape [-2]"},
	    {"overflow", SEED_DTYPE_F32, 2, {INT64_MAX, 2}, 0, "shape"},
	    {"nodata", SEED_DTYPE_F32, 1, {2}, 1, "no data"},
	};
	seed_safetensors_writer *w = seed_safetensors_writer_new();
	seed_err err;
	seed_tensor ok = seed_tensor_view(x, SEED_DTYPE_F32, 1, (int64_t[]){2});
	CHECK(seed_safetensors_writer_add(w, "dup", &ok, &err) == 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		seed_tensor t = {
		    .dtype = cases[i].dt, .rank = cases[i].rank, .data = cases[i].null_data ? NULL : x};
		for (int d = 0; d < cases[i].rank && d < SEED_TENSOR_MAX_RANK; d++)
			t.shape[d] = cases[i].shape[d];
		err.msg[0] = '\0';
		int rc = seed_safetensors_writer_add(w, cases[i].name, &t, &err);
		CHECK_MSG(rc == -EINVAL && has(err.msg, cases[i].want), "case %zu (%s): rc %d, '%s'", i,
		          cases[i].name, rc, err.msg);
	}
	CHECK(seed_safetensors_writer_meta(w, "k", "bad\xff", &err) == -EINVAL);
	CHECK(seed_safetensors_writer_meta(w, "bad\xff", "v", &err) == -EINVAL);
	/* Nothing rejected made it in. */
	void *buf;
	size_t len;
	CHECK(seed_safetensors_writer_encode(w, &buf, &len, &err) == 0);
	seed_safetensors *st = NULL;
	CHECK(seed_safetensors_parse(buf, len, "w", &st, &err) == 0);
	CHECK(st && seed_safetensors_count(st) == 1 && seed_safetensors_meta_count(st) == 0);
	seed_safetensors_free(&st);
	free(buf);
	seed_safetensors_writer_free(&w);
	seed_safetensors_writer_free(&w); /* NULL is fine */
}

/* ---- malformed files: one named case each ------------------------------- */

struct bad_case {
	const char *name;
	const char *header; /* header text; NULL: the file is raw */
	size_t data_len;    /* zero bytes after the header */
	int set_hlen;       /* write hlen instead of the header's length */
	uint64_t hlen;
	const char *raw; /* the whole file when header is NULL */
	size_t rawlen;
	const char *want1, *want2; /* in the message, besides the path */
};

#define T(fields) "{\"t\":{" fields "}}"
static const struct bad_case bad_cases[] = {
    {"too_short", NULL, 0, 0, 0, "\x02\x00\x00", 3, "too short", NULL},
    {"header_length_zero", NULL, 0, 0, 0, "\0\0\0\0\0\0\0\0{}", 10, "header length 0", "too small"},
    {"header_length_past_eof", "{}", 0, 1, 1000, NULL, 0, "header length 1000", "past the end"},
    {"header_length_over_limit", "{}", 0, 1, 100000001, NULL, 0, "exceeds the limit", NULL},
    {"header_length_2_64_minus_1", "{}", 0, 1, UINT64_MAX, NULL, 0, "exceeds the limit", NULL},
    {"header_leading_space", " {}", 0, 0, 0, NULL, 0, "does not start with '{'", NULL},
    {"header_not_json", "{\"t\":", 0, 0, 0, NULL, 0, "not valid JSON", NULL},
    {"header_not_utf8", "{\"t\xff\":{}}", 0, 0, 0, NULL, 0, "not valid JSON", NULL},
    {"header_nul_padding", NULL, 0, 0, 0, "\x08\0\0\0\0\0\0\0{}\0\0\0\0\0\0", 16, "not valid JSON", NULL},
    {"header_trailing_garbage", "{} x", 0, 0, 0, NULL, 0, "not valid JSON", NULL},
    {"duplicate_name",
     "{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
     8, 0, 0, NULL, 0, "duplicate", "\"t\""},
    {"entry_not_object", "{\"t\":5}", 0, 0, 0, NULL, 0, "tensor 't'", "not an object"},
    {"unknown_field", T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"extra\":1"), 4, 0, 0, NULL,
     0, "tensor 't'", "unknown field 'extra'"},
    {"missing_dtype", T("\"shape\":[1],\"data_offsets\":[0,4]"), 4, 0, 0, NULL, 0, "tensor 't'",
     "missing field 'dtype'"},
    {"missing_shape", T("\"dtype\":\"F32\",\"data_offsets\":[0,4]"), 4, 0, 0, NULL, 0, "tensor 't'",
     "missing field 'shape'"},
    {"missing_data_offsets", T("\"dtype\":\"F32\",\"shape\":[1]"), 4, 0, 0, NULL, 0, "tensor 't'",
     "missing field 'data_offsets'"},
    {"dtype_not_string", T("\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "dtype is not a string"},
    {"dtype_unknown", T("\"dtype\":\"F17\",\"shape\":[1],\"data_offsets\":[0,4]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "unknown dtype 'F17'"},
    {"dtype_lowercase", T("\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "unknown dtype 'f32'"},
    {"dtype_unsupported", T("\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "BF16 is not supported"},
    {"shape_not_array", T("\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "shape is not an array"},
    {"shape_negative", T("\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "shape[0] is not a non-negative integer"},
    {"shape_fractional", T("\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "shape[0]"},
    {"shape_rank_7", T("\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1],\"data_offsets\":[0,4]"), 4, 0, 0, NULL,
     0, "tensor 't'", "rank 7"},
    {"shape_overflow", T("\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,4]"), 4,
     0, 0, NULL, 0, "tensor 't'", "overflows"},
    {"data_offsets_one_number", T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "data_offsets is not an array [begin, end]"},
    {"data_offsets_negative", T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "non-negative"},
    {"data_offsets_reversed", T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "end before they begin"},
    {"data_offsets_past_data", T("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "past the data section (4 bytes)"},
    {"size_mismatch", T("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]"), 4, 0, 0, NULL, 0,
     "tensor 't'", "needs 8 bytes"},
    {"gap_between_tensors",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
     12, 0, 0, NULL, 0, "tensor 't'", "gap"},
    {"gap_at_start", T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]"), 8, 0, 0, NULL, 0,
     "tensor 't'", "bytes [0, 4)"},
    {"overlap",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
     "\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
     8, 0, 0, NULL, 0, "tensor 't' overlaps tensor 'a'", NULL},
    {"same_offsets_twice",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"t\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
     4, 0, 0, NULL, 0, "overlaps", "'t'"},
    {"bytes_left_over", T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]"), 8, 0, 0, NULL, 0,
     "bytes [4, 8)", "belong to no tensor"},
    {"data_without_tensors", "{}", 8, 0, 0, NULL, 0, "bytes [0, 8)", "belong to no tensor"},
    {"metadata_not_object", "{\"__metadata__\":[\"a\"]}", 0, 0, 0, NULL, 0, "__metadata__ is not an object",
     NULL},
    /* The writer refuses an empty name: the reader must too. */
    {"empty_name", "{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, 0, 0, NULL, 0,
     "empty name", NULL},
    {"metadata_value_not_string", "{\"__metadata__\":{\"k\":1}}", 0, 0, 0, NULL, 0, "'k'", "not a string"},
};
#undef T

static void run_bad_case(const struct bad_case *c)
{
	unsigned char file[1024] = {0};
	size_t len;
	if (c->header) {
		size_t hl = strlen(c->header);
		uint64_t field = c->set_hlen ? c->hlen : hl;
		for (int i = 0; i < 8; i++)
			file[i] = (unsigned char)(field >> (8 * i));
		memcpy(file + 8, c->header, hl);
		len = 8 + hl + c->data_len;
	} else {
		memcpy(file, c->raw, c->rawlen);
		len = c->rawlen;
	}
	char name[256];
	snprintf(name, sizeof name, "%s.safetensors", c->name);
	const char *path = pathf(dir, name);
	CHECK(write_bytes(path, file, len) == 0);
	seed_safetensors *st = (seed_safetensors *)&st; /* must stay as it is */
	seed_err err = {""};
	int rc = seed_safetensors_load(path, &st, &err);
	CHECK_MSG(rc == -EBADMSG, "rc %d (%s)", rc, err.msg);
	CHECK(st == (seed_safetensors *)&st);
	CHECK_MSG(has(err.msg, path) && has(err.msg, c->want1) && has(err.msg, c->want2), "message: %s",
	          err.msg);
	/* The same bytes from memory fail the same way. */
	rc = seed_safetensors_parse(file, len, "mem", &st, &err);
	CHECK(rc == -EBADMSG && has(err.msg, "mem") && has(err.msg, c->want1));
}

static void t_missing_file(void)
{
	seed_safetensors *st = NULL;
	seed_err err;
	const char *path = pathf(dir, "absent.safetensors");
	CHECK(seed_safetensors_load(path, &st, &err) == -ENOENT);
	CHECK_MSG(has(err.msg, path), "%s", err.msg);
	CHECK(seed_safetensors_load(dir, &st, &err) == -EISDIR);
	CHECK_MSG(has(err.msg, dir), "%s", err.msg);
	CHECK(st == NULL);
}

/* ---- atomic writes -------------------------------------------------------- */

static seed_safetensors_writer *writer_of(const void *data, int64_t n)
{
	seed_safetensors_writer *w = seed_safetensors_writer_new();
	seed_tensor t = seed_tensor_view((void *)data, SEED_DTYPE_U8, 1, &n);
	seed_err err;
	if (seed_safetensors_writer_add(w, "bytes", &t, &err) != 0)
		abort();
	return w;
}

/* A write that fails midway (the file size limit stands in for a full
 * disk: it works for root too, unlike permissions) leaves the old file
 * byte for byte, and no temporary file behind. */
static void t_failed_write_keeps_old_file(void)
{
	const char *path = pathf(dir, "atomic.safetensors");
	static uint8_t small[16] = {1, 2, 3}, big[256 << 10];
	memset(big, 0xab, sizeof big);
	seed_safetensors_writer *w = writer_of(small, sizeof small);
	seed_err err;
	CHECK(seed_safetensors_writer_write(w, path, &err) == 0);
	seed_safetensors_writer_free(&w);
	size_t oldlen;
	char *old = read_bytes(path, &oldlen);

	struct rlimit saved, lim;
	getrlimit(RLIMIT_FSIZE, &saved);
	lim = saved;
	lim.rlim_cur = 64 << 10;
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
	CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	w = writer_of(big, sizeof big);
	int rc = seed_safetensors_writer_write(w, path, &err);
	setrlimit(RLIMIT_FSIZE, &saved);
	signal(SIGXFSZ, prev);
	seed_safetensors_writer_free(&w);

	CHECK_MSG(rc == -EFBIG, "rc %d: %s", rc, err.msg);
	CHECK_MSG(has(err.msg, path), "%s", err.msg);
	size_t nowlen;
	char *now = read_bytes(path, &nowlen);
	CHECK(old && now && oldlen == nowlen && memcmp(old, now, oldlen) == 0);
	CHECK(count_entries(dir, ".tmp-") == 0);
	free(old);
	free(now);

	/* And the loader still reads the old contents. */
	seed_safetensors *st = NULL;
	CHECK(seed_safetensors_load(path, &st, &err) == 0);
	CHECK(st && seed_tensor_numel(seed_safetensors_get(st, "bytes")) == 16);
	seed_safetensors_free(&st);
}

/* A successful write replaces the file (a new inode), never rewrites it in
 * place, so a reader holding the old file keeps seeing it whole. */
static void t_write_replaces_by_rename(void)
{
	const char *path = pathf(dir, "replace.safetensors");
	uint8_t a[4] = {1}, b[8] = {2};
	seed_safetensors_writer *w = writer_of(a, 4);
	seed_err err;
	CHECK(seed_safetensors_writer_write(w, path, &err) == 0);
	seed_safetensors_writer_free(&w);
	struct stat s1, s2;
	CHECK(stat(path, &s1) == 0);
	FILE *held = fopen(path, "rb");
	w = writer_of(b, 8);
	CHECK(seed_safetensors_writer_write(w, path, &err) == 0);
	seed_safetensors_writer_free(&w);
	CHECK(stat(path, &s2) == 0);
	CHECK(s1.st_ino != s2.st_ino);
	CHECK(held && fseek(held, 0, SEEK_END) == 0 && ftell(held) == (long)s1.st_size);
	if (held)
		fclose(held);
	seed_safetensors *st = NULL;
	CHECK(seed_safetensors_load(path, &st, &err) == 0);
	CHECK(st && seed_tensor_numel(seed_safetensors_get(st, "bytes")) == 8);
	seed_safetensors_free(&st);
}

static void t_write_into_missing_directory(void)
{
	const char *path = pathf(dir, "no/such/dir/x.safetensors");
	uint8_t a[4] = {0};
	seed_safetensors_writer *w = writer_of(a, 4);
	seed_err err;
	CHECK(seed_safetensors_writer_write(w, path, &err) == -ENOENT);
	CHECK_MSG(has(err.msg, path), "%s", err.msg);
	seed_safetensors_writer_free(&w);
}

int main(void)
{
	dir = tmpdir_new();
	TAP_RUN(t_reads_reference_files);
	TAP_RUN(t_encodes_like_reference);
	TAP_RUN(t_roundtrip_all_dtypes);
	TAP_RUN(t_writer_layout_aligned);
	TAP_RUN(t_misaligned_tensor_copied);
	TAP_RUN(t_empty_tensors_between);
	TAP_RUN(t_lookup_many_names);
	TAP_RUN(t_expect_names_both_shapes);
	TAP_RUN(t_writer_rejects_bad_tensors);
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
		char name[128];
		tap_case_failed = 0;
		run_bad_case(&bad_cases[i]);
		snprintf(name, sizeof name, "bad_%s", bad_cases[i].name);
		tap_result(name);
	}
	TAP_RUN(t_missing_file);
	TAP_RUN(t_failed_write_keeps_old_file);
	TAP_RUN(t_write_replaces_by_rename);
	TAP_RUN(t_write_into_missing_directory);
	tmpdir_remove(dir);
	return tap_done();
}
