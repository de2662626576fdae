/* tests/tmpdir.h: scratch directories and file helpers for the C unit tests.
 *
 * tmpdir_new makes a fresh directory under $TMPDIR (or /tmp); tmpdir_remove
 * deletes it with everything inside, so tests leave nothing behind.
 */
#ifndef SEED_TESTS_TMPDIR_H
#define SEED_TESTS_TMPDIR_H

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir_path[4096];

static inline const char *tmpdir_new(void)
{
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir_path, sizeof tmpdir_path, "%s/seed-test-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir_path)) {
		perror("mkdtemp");
		exit(99);
	}
	return tmpdir_path;
}

static inline int tmpdir_rm1(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	remove(p);
	return 0;
}

static inline void tmpdir_remove(const char *dir)
{
	nftw(dir, tmpdir_rm1, 16, FTW_DEPTH | FTW_PHYS);
}

/* "dir/name" in a static buffer (one of four, so a few may be in use). */
static inline const char *pathf(const char *dir, const char *name)
{
	static char bufs[4][4096];
	static int k;
	char *b = bufs[k++ % 4];
	snprintf(b, 4096, "%s/%s", dir, name);
	return b;
}

static inline int write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = len ? fwrite(data, 1, len, f) : 0;
	return fclose(f) == 0 && w == len ? 0 : -1;
}

/* The whole file in a new buffer (NUL-terminated), or NULL. */
static inline char *read_bytes(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	size_t r;
	while ((r = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n < 2)
			b = realloc(b, cap *= 2);
	}
	fclose(f);
	b[n] = '\0';
	*len = n;
	return b;
}

/* Entries of dir whose names contain part. */
static inline int count_entries(const char *dir, const char *part)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strstr(e->d_name, part))
			n++;
	closedir(d);
	return n;
}

#endif
