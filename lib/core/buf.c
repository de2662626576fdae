/* buf.c: growable byte buffers, and the one out-of-memory handler of libseed.
 *
 * Invariants: every allocation of libseed goes through seed_xmalloc & co
 * (arrays grow through seed_xgrow, nowhere else) or,
 * for what a library does for us, ends in seed_oom(): jansson's allocations
 * are routed through seed_xmalloc at load time (route_jansson below), and
 * the few places that learn of a failure only from a library's return value
 * call seed_oom(0).  So running out of memory is handled in one place, by
 * stopping, and no other function needs a path for it.
 */
#include "seed/buf.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Noreturn void seed_oom(size_t n)
{
	/* The one place libseed gives up: there is nothing sensible to return.
	 * No stdio: it may itself need memory we do not have. */
	char msg[80];
	int len = n ? snprintf(msg, sizeof msg, "seed: out of memory allocating %zu bytes\n", n)
	            : snprintf(msg, sizeof msg, "seed: out of memory\n");
	if (len > 0) {
		ssize_t w = write(STDERR_FILENO, msg, (size_t)len);
		(void)w; /* where stderr is gone there is nothing more to say */
	}
	abort();
}

void *seed_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		seed_oom(n);
	return p;
}

void *seed_xcalloc(size_t n, size_t size)
{
	size_t total;
	/* calloc refuses a product that overflows: say how much was asked
	 * for, at least, rather than the wrapped product. */
	if (__builtin_mul_overflow(n, size, &total))
		seed_oom(SIZE_MAX);
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		seed_oom(total);
	return p;
}

void *seed_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		seed_oom(n);
	return q;
}

void *seed_xaligned(size_t n)
{
	void *p = NULL;
	/* Rounding n up to a multiple of 64 must not wrap around to a tiny
	 * size that would then "succeed". */
	if (n > SIZE_MAX - 63)
		seed_oom(n);
	if (posix_memalign(&p, 64, n ? (n + 63) / 64 * 64 : 64) != 0)
		seed_oom(n);
	return p;
}

void *seed_xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c = c > SIZE_MAX / 2 ? need : c * 2;
	size_t bytes;
	if (__builtin_mul_overflow(c, size, &bytes))
		seed_oom(SIZE_MAX);
	p = seed_xrealloc(p, bytes);
	*cap = c;
	return p;
}

/* jansson allocates with malloc and reports failure as a NULL it returns to
 * us deep inside a build of an object; rather than check every call, give
 * it our allocator, which never returns NULL.  A program that installed its
 * own functions before loading libseed keeps them. */
__attribute__((constructor)) static void route_jansson(void)
{
	json_malloc_t m;
	json_free_t f;
	json_get_alloc_funcs(&m, &f);
	if (m == malloc && f == free)
		json_set_alloc_funcs(seed_xmalloc, free);
}

void seed_buf_init(seed_buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void seed_buf_free(seed_buf *b)
{
	free(b->data);
	seed_buf_init(b);
}

void seed_buf_reserve(seed_buf *b, size_t n)
{
	if (n <= b->cap - b->len)
		return;
	/* len + n beyond SIZE_MAX cannot be had; doubling must stop before it
	 * wraps to 0 (it would then double 0 forever). */
	if (n > SIZE_MAX - b->len)
		seed_oom(SIZE_MAX);
	size_t need = b->len + n;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	b->data = seed_xrealloc(b->data, cap);
	b->cap = cap;
}

void seed_buf_append(seed_buf *b, const void *data, size_t n)
{
	if (n == 0)
		return; /* data may be NULL then, which memcpy does not allow */
	seed_buf_reserve(b, n);
	memcpy(b->data + b->len, data, n);
	b->len += n;
}
