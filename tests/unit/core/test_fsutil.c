/* tests/unit/core/test_fsutil.c: whole-file reads, atomic replacement, mkdir -p.
 * (Atomicity under a failing write is tested with the safetensors writer,
 * which is what relies on it.) */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seed/fsutil.h"
#include "tap.h"
#include "tmpdir.h"

static const char *dir;

static int has(const char *msg, const char *part)
{
	return strstr(msg, part) != NULL;
}

static void t_write_parts_then_read(void)
{
	const char *path = pathf(dir, "parts.txt");
	seed_fs_part parts[] = {{"hello", 5}, {"", 0}, {", ", 2}, {NULL, 0}, {"world", 5}};
	seed_err err;
	CHECK(seed_fs_write_atomic(path, parts, 5, &err) == 0);
	void *data = NULL;
	size_t len = 0;
	CHECK(seed_fs_read(path, 0, &data, &len, &err) == 0);
	CHECK(len == 12 && memcmp(data, "hello, world", 13) == 0); /* NUL included */
	CHECK((uintptr_t)data % 64 == 0);
	free(data);
	struct stat st;
	CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode));
	CHECK(count_entries(dir, ".tmp-") == 0);
}

static void t_write_empty_file(void)
{
	const char *path = pathf(dir, "empty");
	seed_err err;
	CHECK(seed_fs_write_atomic(path, NULL, 0, &err) == 0);
	void *data = NULL;
	size_t len = 99;
	CHECK(seed_fs_read(path, 0, &data, &len, &err) == 0);
	CHECK(len == 0 && ((char *)data)[0] == '\0');
	free(data);
}

static void t_read_limit(void)
{
	const char *path = pathf(dir, "limit");
	CHECK(write_bytes(path, "0123456789", 10) == 0);
	void *data = NULL;
	size_t len = 0;
	seed_err err;
	CHECK(seed_fs_read(path, 10, &data, &len, &err) == 0 && len == 10);
	free(data);
	data = NULL;
	CHECK(seed_fs_read(path, 9, &data, &len, &err) == -EFBIG);
	CHECK(data == NULL && has(err.msg, path));
}

static void t_read_errors_name_path(void)
{
	void *data = NULL;
	size_t len;
	seed_err err;
	const char *path = pathf(dir, "absent");
	CHECK(seed_fs_read(path, 0, &data, &len, &err) == -ENOENT && has(err.msg, path));
	CHECK(seed_fs_read(dir, 0, &data, &len, &err) == -EISDIR && has(err.msg, dir));
	CHECK(data == NULL);
}

/* A pipe has no size up front: the buffer grows as it is read. */
static void t_read_from_pipe(void)
{
	int fds[2];
	CHECK(pipe(fds) == 0);
	static char big[20000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)('a' + i % 26);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		ssize_t w = write(fds[1], big, sizeof big);
		_exit(w == (ssize_t)sizeof big ? 0 : 1);
	}
	close(fds[1]);
	char path[64];
	snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
	void *data = NULL;
	size_t len = 0;
	seed_err err;
	CHECK_MSG(seed_fs_read(path, 0, &data, &len, &err) == 0, "%s", err.msg);
	CHECK(len == sizeof big && data && memcmp(data, big, len) == 0);
	free(data);
	close(fds[0]);
	int status;
	waitpid(pid, &status, 0);
}

/* The link is replaced, its target left alone. */
static void t_write_over_symlink_replaces_link(void)
{
	const char *target = pathf(dir, "target");
	const char *link = pathf(dir, "link");
	CHECK(write_bytes(target, "old", 3) == 0);
	CHECK(symlink("target", link) == 0);
	seed_fs_part p = {"new", 3};
	seed_err err;
	CHECK(seed_fs_write_atomic(link, &p, 1, &err) == 0);
	struct stat st;
	CHECK(lstat(link, &st) == 0 && S_ISREG(st.st_mode));
	size_t len;
	char *t = read_bytes(target, &len);
	CHECK(t && len == 3 && memcmp(t, "old", 3) == 0);
	free(t);
}

/* Renaming over a non-empty directory fails: the directory stays as it
 * was and the temporary file is removed. */
static void t_write_over_directory_fails_cleanly(void)
{
	const char *sub = pathf(dir, "sub");
	CHECK(mkdir(sub, 0777) == 0);
	CHECK(write_bytes(pathf(sub, "inside"), "x", 1) == 0);
	seed_fs_part p = {"data", 4};
	seed_err err;
	int rc = seed_fs_write_atomic(sub, &p, 1, &err);
	CHECK_MSG(rc < 0 && has(err.msg, sub), "rc %d: %s", rc, err.msg);
	CHECK(count_entries(sub, "inside") == 1);
	CHECK(count_entries(dir, ".tmp-") == 0);
	CHECK(seed_fs_write_atomic(pathf(dir, "x/"), &p, 1, &err) == -EISDIR);
}

static void t_mkdirs(void)
{
	seed_err err;
	const char *deep = pathf(dir, "a/b//c/d/");
	CHECK_MSG(seed_fs_mkdirs(deep, &err) == 0, "%s", err.msg);
	struct stat st;
	CHECK(stat(pathf(dir, "a/b/c/d"), &st) == 0 && S_ISDIR(st.st_mode));
	CHECK(seed_fs_mkdirs(deep, &err) == 0); /* exists: fine */
	CHECK(seed_fs_mkdirs(".", &err) == 0);
	CHECK(write_bytes(pathf(dir, "file"), "x", 1) == 0);
	CHECK(seed_fs_mkdirs(pathf(dir, "file"), &err) == -ENOTDIR && has(err.msg, "file"));
	CHECK(seed_fs_mkdirs(pathf(dir, "file/below"), &err) == -ENOTDIR && has(err.msg, "file/below"));
	CHECK(seed_fs_mkdirs("", &err) == -ENOENT);
}

static void t_sync_dir(void)
{
	seed_err err;
	CHECK(seed_fs_sync_dir(dir, &err) == 0);
	const char *absent = pathf(dir, "nope");
	CHECK(seed_fs_sync_dir(absent, &err) == -ENOENT && has(err.msg, absent));
}

int main(void)
{
	dir = tmpdir_new();
	TAP_RUN(t_write_parts_then_read);
	TAP_RUN(t_write_empty_file);
	TAP_RUN(t_read_limit);
	TAP_RUN(t_read_errors_name_path);
	TAP_RUN(t_read_from_pipe);
	TAP_RUN(t_write_over_symlink_replaces_link);
	TAP_RUN(t_write_over_directory_fails_cleanly);
	TAP_RUN(t_mkdirs);
	TAP_RUN(t_sync_dir);
	tmpdir_remove(dir);
	return tap_done();
}
