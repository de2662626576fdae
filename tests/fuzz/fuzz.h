/* tests/fuzz/fuzz.h: what the libFuzzer targets (tests/fuzz_*.c) share.
 *
 * REQUIRE states a property of the code under test; a broken one traps, which
 * libFuzzer reports as a crash and saves the input.  fuzz_scratch gives each
 * process one private directory (removed at exit) for the targets whose
 * parsers read files, preferring /dev/shm so that writing an input costs no
 * disk traffic.
 */
#ifndef SEED_TESTS_FUZZ_H
#define SEED_TESTS_FUZZ_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seed/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c)                                                                                           \
	do {                                                                                                 \
		if (!(c)) {                                                                                  \
			fprintf(stderr, "%s:%d: property broken: %s\n", __FILE__, __LINE__, #c);             \
			__builtin_trap();                                                                    \
		}                                                                                            \
	} while (0)

/* A refused input gets a message: non-empty, terminated. */
#define REQUIRE_MESSAGE(e) REQUIRE((e).msg[0] != '\0' && memchr((e).msg, '\0', sizeof(e).msg) != NULL)

static char fuzz_scratch_dir[256];

static void fuzz_rm_tree(const char *path)
{
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		char sub[512];
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
				snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
				fuzz_rm_tree(sub);
			}
		closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

static void fuzz_scratch_remove(void)
{
	if (fuzz_scratch_dir[0])
		fuzz_rm_tree(fuzz_scratch_dir);
}

/* The process's scratch directory, created on first use. */
static const char *fuzz_scratch(void)
{
	if (!fuzz_scratch_dir[0]) {
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
		snprintf(fuzz_scratch_dir, sizeof fuzz_scratch_dir, "%s/seed-fuzz.XXXXXX",
		         base ? base : "/tmp");
		if (!mkdtemp(fuzz_scratch_dir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(fuzz_scratch_remove);
	}
	return fuzz_scratch_dir;
}

/* Replace the file at path with n bytes of data (n may be 0). */
static void fuzz_write_file(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(path);
		abort();
	}
	const char *p = data;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0) {
			perror(path);
			abort();
		}
		p += w;
		n -= (size_t)w;
	}
	close(fd);
}

#endif
