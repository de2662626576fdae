/* buf.c: growable byte buffers and the allocators that abort on failure. */
#include "seed/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
	/* The one place libseed gives up: there is nothing sensible to return. */
	fprintf(stderr, "seed: out of memory allocating %zu bytes\n", n);
	abort();
}

void *seed_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *seed_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *seed_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

void *seed_xaligned(size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, n ? (n + 63) / 64 * 64 : 64) != 0)
		oom(n);
	return p;
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
	if (b->len + n <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	b->data = seed_xrealloc(b->data, cap);
	b->cap = cap;
}

void seed_buf_append(seed_buf *b, const void *data, size_t n)
{
	seed_buf_reserve(b, n);
	memcpy(b->data + b->len, data, n);
	b->len += n;
}
