/* tensor.c: dtype and device tables, tensor view helpers.
 *
 * Views never own memory; seed_tensor_view makes CPU views only (the one
 * device there is).  The dtype table is indexed by seed_dtype, so its order
 * follows the enum. */
#include "seed/tensor.h"

#include <string.h>

static const struct {
	const char *name;
	size_t size;
} dtypes[] = {
    [SEED_DTYPE_INVALID] = {"invalid", 0}, [SEED_DTYPE_U8] = {"u8", 1},   [SEED_DTYPE_I8] = {"i8", 1},
    [SEED_DTYPE_I32] = {"i32", 4},         [SEED_DTYPE_I64] = {"i64", 8}, [SEED_DTYPE_F32] = {"f32", 4},
    [SEED_DTYPE_F64] = {"f64", 8},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

size_t seed_dtype_size(seed_dtype dt)
{
	return (unsigned)dt < NDTYPES ? dtypes[dt].size : 0;
}

const char *seed_dtype_name(seed_dtype dt)
{
	return (unsigned)dt < NDTYPES ? dtypes[dt].name : "invalid";
}

seed_dtype seed_dtype_parse(const char *name, size_t len)
{
	for (size_t i = 1; i < NDTYPES; i++)
		if (strlen(dtypes[i].name) == len && memcmp(dtypes[i].name, name, len) == 0)
			return (seed_dtype)i;
	return SEED_DTYPE_INVALID;
}

const char *seed_device_name(seed_device dev)
{
	return dev == SEED_DEVICE_CPU ? "cpu" : "invalid";
}

int64_t seed_tensor_numel(const seed_tensor *t)
{
	/* An empty tensor may have huge dimensions besides its zero one
	 * (frames allow them): their product must not be taken first. */
	for (int i = 0; i < t->rank; i++)
		if (t->shape[i] == 0)
			return 0;
	int64_t n = 1;
	for (int i = 0; i < t->rank; i++)
		if (__builtin_mul_overflow(n, t->shape[i], &n))
			return INT64_MAX;
	return n;
}

size_t seed_tensor_nbytes(const seed_tensor *t)
{
	return (size_t)seed_tensor_numel(t) * seed_dtype_size(t->dtype);
}

seed_tensor seed_tensor_view(void *data, seed_dtype dt, int rank, const int64_t *shape)
{
	seed_tensor t = {.dtype = dt, .rank = rank, .data = data, .device = SEED_DEVICE_CPU};
	for (int i = 0; i < rank && i < SEED_TENSOR_MAX_RANK; i++)
		t.shape[i] = shape[i];
	return t;
}

int seed_tensor_on_cpu(const seed_tensor *t)
{
	return t->device == SEED_DEVICE_CPU;
}

void seed_tensor_copy(void *dst, const seed_tensor *t)
{
	memcpy(dst, t->data, seed_tensor_nbytes(t));
}
