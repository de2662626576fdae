/* tests/fuzz/fuzz_safetensors.c: a libFuzzer target for safetensors files.
 *
 * The input is a file's bytes, handed to seed_safetensors_parse (the same
 * validation seed_safetensors_load does after reading the file).  Besides
 * "no crash, no leak, no undefined behaviour", it checks properties:
 *   - a refused file gets -EBADMSG and a message that names it;
 *   - an accepted file lists each tensor once, by name, and every tensor
 *     has its own shape (seed_safetensors_expect) and aligned data;
 *   - whatever loads can be written again: the writer takes every tensor
 *     and metadata entry, its bytes load back to the same names in the same
 *     order, dtypes, shapes, data and metadata, and encoding those again
 *     gives the same bytes (the writer's layout is a fixed point).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "seed/safetensors.h"

static const char WHAT[] = "fuzz.safetensors";

static void same(const seed_safetensors *a, const seed_safetensors *b)
{
	size_t n = seed_safetensors_count(a);
	REQUIRE(seed_safetensors_count(b) == n);
	for (size_t i = 0; i < n; i++) {
		const char *name = seed_safetensors_name(a, i);
		REQUIRE(strcmp(name, seed_safetensors_name(b, i)) == 0);
		const seed_tensor *s = seed_safetensors_get(a, name), *t = seed_safetensors_get(b, name);
		REQUIRE(s && t && s->dtype == t->dtype && s->rank == t->rank);
		REQUIRE(memcmp(s->shape, t->shape, (size_t)s->rank * sizeof s->shape[0]) == 0);
		size_t nb = seed_tensor_nbytes(s);
		REQUIRE(nb == seed_tensor_nbytes(t) && (nb == 0 || memcmp(s->data, t->data, nb) == 0));
	}
	size_t nm = seed_safetensors_meta_count(a);
	REQUIRE(seed_safetensors_meta_count(b) == nm);
	for (size_t i = 0; i < nm; i++) {
		const char *k = seed_safetensors_meta_key(a, i);
		REQUIRE(seed_safetensors_meta(b, k) &&
		        strcmp(seed_safetensors_meta(a, k), seed_safetensors_meta(b, k)) == 0);
	}
}

/* The writer's bytes for everything in st (a new buffer). */
static void encode(const seed_safetensors *st, void **data, size_t *len)
{
	seed_safetensors_writer *w = seed_safetensors_writer_new();
	seed_err err;
	for (size_t i = 0; i < seed_safetensors_count(st); i++) {
		const char *name = seed_safetensors_name(st, i);
		err.msg[0] = '\0';
		int rc = seed_safetensors_writer_add(w, name, seed_safetensors_get(st, name), &err);
		if (rc)
			fprintf(stderr, "the writer refuses tensor '%s' that loads: %s\n", name, err.msg);
		REQUIRE(rc == 0);
	}
	for (size_t i = 0; i < seed_safetensors_meta_count(st); i++) {
		const char *k = seed_safetensors_meta_key(st, i);
		REQUIRE(seed_safetensors_writer_meta(w, k, seed_safetensors_meta(st, k), &err) == 0);
	}
	REQUIRE(seed_safetensors_writer_encode(w, data, len, &err) == 0);
	seed_safetensors_writer_free(&w);
	REQUIRE(w == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	seed_safetensors *st = NULL;
	seed_err err;
	err.msg[0] = '\0';
	int rc = seed_safetensors_parse(data, size, WHAT, &st, &err);
	if (rc != 0) {
		REQUIRE(rc == -EBADMSG);
		REQUIRE_MESSAGE(err);
		REQUIRE(strstr(err.msg, WHAT) != NULL);
		REQUIRE(st == NULL);
		return 0;
	}
	REQUIRE(strcmp(seed_safetensors_path(st), WHAT) == 0);
	size_t n = seed_safetensors_count(st);
	REQUIRE(seed_safetensors_name(st, n) == NULL);
	for (size_t i = 0; i < n; i++) {
		const char *name = seed_safetensors_name(st, i);
		REQUIRE(name && *name);
		for (size_t j = 0; j < i; j++)
			REQUIRE(strcmp(name, seed_safetensors_name(st, j)) != 0);
		const seed_tensor *t = seed_safetensors_get(st, name);
		REQUIRE(t && t->rank >= 0 && t->rank <= SEED_TENSOR_MAX_RANK);
		REQUIRE((uintptr_t)t->data % seed_dtype_size(t->dtype) == 0);
		seed_tensor view;
		REQUIRE(seed_safetensors_expect(st, name, t->dtype, t->rank, t->shape, &view, &err) == 0);
		REQUIRE(view.data == t->data);
	}
	REQUIRE(seed_safetensors_get(st, "__metadata__") == NULL);

	void *enc, *enc2;
	size_t len, len2;
	encode(st, &enc, &len);
	seed_safetensors *back = NULL;
	rc = seed_safetensors_parse(enc, len, "encoded", &back, &err);
	if (rc)
		fprintf(stderr, "the writer's bytes do not load: %s\n", err.msg);
	REQUIRE(rc == 0);
	same(st, back);
	encode(back, &enc2, &len2);
	REQUIRE(len2 == len && memcmp(enc, enc2, len) == 0);
	free(enc);
	free(enc2);
	seed_safetensors_free(&back);
	seed_safetensors_free(&st);
	REQUIRE(st == NULL);
	return 0;
}
