/* seed/buf.h: a growable byte buffer, and allocation that cannot fail.
 *
 * Zero-initialise (or seed_buf_init) before use; seed_buf_free releases the
 * memory.  Allocation failure stops the program (seed_oom), so appends
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
static inline void seed_buf_reset(seed_buf *b)
{
	b->len = 0;
}

/* The out-of-memory handler of all of libseed: prints "seed: out of memory
 * allocating N bytes" (or, with n == 0 for a size that is not known, "seed:
 * out of memory") on stderr and aborts.  Called by the allocators below, by
 * jansson's allocations (libseed routes them here when it is loaded, unless
 * the program installed its own), and by code that learns of a failed
 * allocation from another library's return value.  Never returns. */
#ifdef __cplusplus
[[noreturn]] void seed_oom(size_t n);
#else
_Noreturn void seed_oom(size_t n);
#endif

/* malloc/calloc/realloc that never return NULL: on failure they call
 * seed_oom.  A size of 0 allocates one byte. */
void *seed_xmalloc(size_t n);
void *seed_xcalloc(size_t n, size_t size);
void *seed_xrealloc(void *p, size_t n);
/* 64-byte aligned allocation, rounded up to a multiple of 64; free with free(). */
void *seed_xaligned(size_t n);
/* The one way an array of libseed grows: p (NULL or from these allocators)
 * holds *cap elements of size bytes; when need > *cap it is reallocated,
 * contents kept, to a capacity of at least need and at least twice *cap
 * (16 the first time), and *cap is set to it.  Returns the array (p itself
 * when it had room).  A capacity whose bytes overflow size_t calls
 * seed_oom, as running out of memory does. */
void *seed_xgrow(void *p, size_t *cap, size_t need, size_t size);

#ifdef __cplusplus
}
#endif
#endif
