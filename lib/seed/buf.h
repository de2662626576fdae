/* seed/buf.h: a growable byte buffer.
 *
 * Zero-initialise (or seed_buf_init) before use; seed_buf_free releases the
 * memory.  Allocation failure aborts the program (seed_xmalloc), so appends
 * cannot fail.
 */
#ifndef SEED_BUF_H
#define SEED_BUF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
} seed_buf;

void seed_buf_init(seed_buf *b);
void seed_buf_free(seed_buf *b);
/* Make room for n more bytes beyond len. */
void seed_buf_reserve(seed_buf *b, size_t n);
void seed_buf_append(seed_buf *b, const void *data, size_t n);
/* Forget the contents, keep the memory. */
static inline void seed_buf_reset(seed_buf *b) { b->len = 0; }

/* malloc/calloc/realloc that abort with a message on failure: the one place
 * where running out of memory is handled (by stopping). */
void *seed_xmalloc(size_t n);
void *seed_xcalloc(size_t n, size_t size);
void *seed_xrealloc(void *p, size_t n);
/* 64-byte aligned allocation, free with free(). */
void *seed_xaligned(size_t n);

#ifdef __cplusplus
}
#endif
#endif
