/* tests/memory_managed.h: whether AddressSanitizer or valgrind manages this
 * process's memory.  Their own mappings make a limit on the address space
 * (setrlimit RLIMIT_AS) meaningless, so the tests that check what an
 * allocation would do under such a limit check less there. */
#ifndef SEED_TESTS_MEMORY_MANAGED_H
#define SEED_TESTS_MEMORY_MANAGED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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

/* Limit this process's address space to what it maps now plus extra bytes
 * (a real shortage for what it allocates next).  0, or -1 on failure. */
static inline int limit_address_space(rlim_t extra)
{
	long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%ld", &pages) != 1) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	rlim_t lim = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + extra;
	struct rlimit rl = {lim, lim};
	return setrlimit(RLIMIT_AS, &rl) == 0 ? 0 : -1;
}

#endif
