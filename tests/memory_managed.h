/* tests/memory_managed.h: whether AddressSanitizer or valgrind manages this
 * process's memory.  Their own mappings make a limit on the address space
 * (setrlimit RLIMIT_AS) meaningless, so the tests that check what an
 * allocation would do under such a limit check less there. */
#ifndef SEED_TESTS_MEMORY_MANAGED_H
#define SEED_TESTS_MEMORY_MANAGED_H

#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static inline int memory_managed(void)
{
	const char *pre = getenv("LD_PRELOAD");
	return UNDER_ASAN || (pre && strstr(pre, "vgpreload"));
}

#endif
