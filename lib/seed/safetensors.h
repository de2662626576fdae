/* seed/safetensors.h: reading and writing safetensors files.
 *
 * The format (the one PyTorch, numpy and JAX users load with the
 * `safetensors` package):
 *
 *   8 bytes   N, little-endian unsigned: the length of the header
 *   N bytes   a JSON object, UTF-8, padded with trailing spaces:
 *             {"NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [B, E]},
 *              ..., "__metadata__": {"KEY": "VALUE", ...}}
 *   the rest  the data section: each tensor's raw little-endian bytes at
 *             [B, E) relative to its start.  Tensors cover the data section
 *             exactly: no gaps, no overlaps, nothing left over.
 *
 * dtypes map to Seed's as U8, I8, I32, I64, F32, F64; files holding any
 * other dtype (F16, BF16, BOOL, ...) are refused, since Seed could not use
 * those tensors.  Rank is at most SEED_TENSOR_MAX_RANK.
 *
 * The writer pads the header so that the data section starts at a multiple
 * of 8, lays the data out with 8-byte elements first, then 4-byte, then
 * 1-byte (each group in the order added), so that every tensor is aligned for
 * its dtype in the file (PyTorch refuses misaligned views), and lists the
 * tensors in the header in the order they were added.  It replaces the file
 * atomically (seed/fsutil.h): a crash leaves the old file or the new one.
 *
 * The reader validates the whole file before handing anything out, and
 * errors name the file and the tensor at fault.  Its tensors are aligned for
 * their dtype in memory (misaligned ones from other writers are copied).
 *
 * Threads: a writer or a loaded file belongs to one thread while being
 * changed; a loaded file may be read from several threads at once.
 */
#ifndef SEED_SAFETENSORS_H
#define SEED_SAFETENSORS_H

#include <stddef.h>

#include "seed/error.h"
#include "seed/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Headers longer than this are refused (the reference implementation's
 * limit too): it bounds what a corrupt length field can make us allocate. */
#define SEED_SAFETENSORS_MAX_HEADER 100000000

/* The safetensors name of a dtype ("F32", ...), or NULL for one the format
 * cannot hold. */
const char *seed_safetensors_dtype_name(seed_dtype dt);

/* ---- writing ---------------------------------------------------------- */

typedef struct seed_safetensors_writer seed_safetensors_writer;

seed_safetensors_writer *seed_safetensors_writer_new(void);
/* Free w (NULL is fine) and set *w to NULL. */
void seed_safetensors_writer_free(seed_safetensors_writer **w);

/* Add tensor t under name.  The name is copied; t's data is NOT: it must
 * stay valid and unchanged until the last write or encode.  Errors
 * (-EINVAL, with a message naming the tensor): empty name or one that is
 * not UTF-8, the reserved name "__metadata__", a name added before, an
 * invalid dtype, rank outside [0, SEED_TENSOR_MAX_RANK], a negative
 * dimension, NULL data for a non-empty tensor, a size that overflows. */
int seed_safetensors_writer_add(seed_safetensors_writer *w, const char *name, const seed_tensor *t,
                                seed_err *err);

/* Set metadata key to value (both copied, both UTF-8; a key set before gets
 * the new value).  -EINVAL for text that is not UTF-8. */
int seed_safetensors_writer_meta(seed_safetensors_writer *w, const char *key, const char *value,
                                 seed_err *err);

/* Replace the file at path with the tensors and metadata added so far,
 * atomically: on failure (negative errno, message naming path) the file
 * there before is untouched. */
int seed_safetensors_writer_write(const seed_safetensors_writer *w, const char *path, seed_err *err);

/* The same bytes as write would store, in a new buffer (free with free()). */
int seed_safetensors_writer_encode(const seed_safetensors_writer *w, void **data, size_t *len, seed_err *err);

/* ---- reading ---------------------------------------------------------- */

typedef struct seed_safetensors seed_safetensors;

/* Read and validate the file at path.  *out owns everything it hands out;
 * free with seed_safetensors_free.  Errors: a negative errno when the file
 * cannot be read, -EBADMSG when it is not a valid safetensors file (too
 * short, header length beyond the file or over the limit, header not a JSON
 * object, a tensor entry with a missing, unknown or ill-typed field, unknown
 * or unsupported dtype, negative dimension, element count times dtype size
 * not equal to the span of its offsets, offsets outside the data section,
 * gaps, overlaps or bytes left over, a duplicate name, metadata values that
 * are not strings); the message names path and the tensor. */
int seed_safetensors_load(const char *path, seed_safetensors **out, seed_err *err);

/* The same for a file already in memory (len bytes at data, copied); what
 * names the data in messages. */
int seed_safetensors_parse(const void *data, size_t len, const char *what, seed_safetensors **out,
                           seed_err *err);

/* Free st (NULL is fine) and set *st to NULL. */
void seed_safetensors_free(seed_safetensors **st);

/* Number of tensors, and the i-th name (0 <= i < count) in the order the
 * header lists them (for files from this writer: the order added). */
size_t seed_safetensors_count(const seed_safetensors *st);
const char *seed_safetensors_name(const seed_safetensors *st, size_t i);

/* The tensor called name, or NULL.  The view (and its data, aligned for its
 * dtype) belongs to st. */
const seed_tensor *seed_safetensors_get(const seed_safetensors *st, const char *name);

/* The tensor called name, which must have dtype dt and the given rank and
 * shape; else -ENOENT (absent) or -EINVAL (different), with a message
 * naming the file, the tensor, and both shapes.  *out is a view owned by
 * st. */
int seed_safetensors_expect(const seed_safetensors *st, const char *name, seed_dtype dt, int rank,
                            const int64_t *shape, seed_tensor *out, seed_err *err);

/* Metadata: the value of key, or NULL; the number of keys and the i-th key
 * (in header order). */
const char *seed_safetensors_meta(const seed_safetensors *st, const char *key);
size_t seed_safetensors_meta_count(const seed_safetensors *st);
const char *seed_safetensors_meta_key(const seed_safetensors *st, size_t i);

/* What the file was called (the path given to load, or what to parse). */
const char *seed_safetensors_path(const seed_safetensors *st);

#ifdef __cplusplus
}
#endif
#endif
