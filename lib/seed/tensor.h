/* seed/tensor.h: plain tensors, dtypes and devices.
 *
 * A tensor is a non-owning view: data, dtype, shape, device.  Data is dense,
 * row-major, little-endian (the only byte order Seed runs on).  Who owns the
 * memory is said by whoever hands the tensor out.  Decoded frames point
 * straight into the received message, so their data may be unaligned: copy
 * with memcpy (seed_tensor_copy) before reading it as floats.
 *
 * The device says where data lives.  Every tensor made today is on the CPU
 * (SEED_DEVICE_CPU, 0, so a zeroed or designated-initialiser tensor and
 * every seed_tensor_view are CPU tensors); an accelerator backend will add
 * its devices, and code that reads data with the CPU must check the device
 * first (seed_tensor_on_cpu).
 */
#ifndef SEED_TENSOR_H
#define SEED_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum seed_dtype {
	SEED_DTYPE_INVALID = 0,
	SEED_DTYPE_U8,  /* "u8"  */
	SEED_DTYPE_I8,  /* "i8"  */
	SEED_DTYPE_I32, /* "i32" */
	SEED_DTYPE_I64, /* "i64" */
	SEED_DTYPE_F32, /* "f32" */
	SEED_DTYPE_F64, /* "f64" */
} seed_dtype;

/* Where a tensor's data lives. */
typedef enum seed_device {
	SEED_DEVICE_CPU = 0, /* host memory, readable by the CPU */
} seed_device;

#define SEED_TENSOR_MAX_RANK 6

typedef struct seed_tensor {
	seed_dtype dtype;
	int rank;
	int64_t shape[SEED_TENSOR_MAX_RANK];
	void *data;         /* numel * seed_dtype_size(dtype) bytes; not owned */
	seed_device device; /* where data is; SEED_DEVICE_CPU (0) unless said otherwise */
} seed_tensor;

/* Size in bytes of one element; 0 for SEED_DTYPE_INVALID. */
size_t seed_dtype_size(seed_dtype dt);
/* "u8", "i32", ...; "invalid" for anything else. */
const char *seed_dtype_name(seed_dtype dt);
/* Parse a name as above (len bytes, need not be NUL-terminated);
 * SEED_DTYPE_INVALID if unknown. */
seed_dtype seed_dtype_parse(const char *name, size_t len);

/* "cpu"; "invalid" for anything else. */
const char *seed_device_name(seed_device dev);

/* Number of elements (1 for rank 0; 0 when a dimension is 0, whatever the
 * others are; INT64_MAX when the product does not fit in an int64_t). */
int64_t seed_tensor_numel(const seed_tensor *t);
/* Number of bytes of data. */
size_t seed_tensor_nbytes(const seed_tensor *t);
/* A view of data with the given dtype and shape (rank <= MAX_RANK), on the
 * CPU. */
seed_tensor seed_tensor_view(void *data, seed_dtype dt, int rank, const int64_t *shape);
/* Whether the CPU can read t's data (t->device is SEED_DEVICE_CPU). */
int seed_tensor_on_cpu(const seed_tensor *t);
/* Copy t's data (possibly unaligned; on the CPU) to dst, which holds
 * nbytes. */
void seed_tensor_copy(void *dst, const seed_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
