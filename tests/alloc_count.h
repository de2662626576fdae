/* tests/alloc_count.h: count the allocations a piece of code makes.
 *
 * A test that includes this header defines malloc, calloc, realloc,
 * posix_memalign and aligned_alloc, which count the calls made from the
 * test's own thread while alloc_counting is set (ZeroMQ's I/O threads do
 * not count) and forward them to glibc's.  COUNT_ALLOCATIONS is 0 where
 * that cannot work (not glibc; AddressSanitizer owns malloc): a test then
 * says so instead of checking.  Include it in one file of a program only.
 */
#ifndef SEED_TESTS_ALLOC_COUNT_H
#define SEED_TESTS_ALLOC_COUNT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__)
#define COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef COUNT_ALLOCATIONS
#define COUNT_ALLOCATIONS 1
#endif

/* Unused where COUNT_ALLOCATIONS is 0 and the test's counting code is
 * compiled out (an --enable-asan --enable-werror build). */
__attribute__((unused)) static _Thread_local bool alloc_counting;
__attribute__((unused)) static _Thread_local long alloc_count;

#if COUNT_ALLOCATIONS
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

void *malloc(size_t n)
{
	alloc_count += alloc_counting;
	return __libc_malloc(n);
}
void *calloc(size_t n, size_t m)
{
	alloc_count += alloc_counting;
	return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n)
{
	alloc_count += alloc_counting;
	return __libc_realloc(p, n);
}
int posix_memalign(void **p, size_t align, size_t n)
{
	alloc_count += alloc_counting;
	*p = __libc_memalign(align, n);
	return *p ? 0 : ENOMEM;
}
void *aligned_alloc(size_t align, size_t n)
{
	alloc_count += alloc_counting;
	return __libc_memalign(align, n);
}
#endif

#endif
