/* fsutil.c: whole-file reads, atomic replacement by rename, mkdir -p.
 *
 * Every loop here copes with short reads/writes and EINTR; every failure
 * after the temporary file exists removes it again, so a failed
 * seed_fs_write_atomic leaves the directory as it found it.
 */
#include "seed/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seed/buf.h"

/* The directory part of path ("." when there is none), in a new string. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strcpy(seed_xmalloc(2), ".");
	if (slash == path)
		return strcpy(seed_xmalloc(2), "/");
	size_t n = (size_t)(slash - path);
	char *d = seed_xmalloc(n + 1);
	memcpy(d, path, n);
	d[n] = '\0';
	return d;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int seed_fs_sync_dir(const char *dir, seed_err *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return seed_err_set(err, -errno, "%s: cannot open directory to sync it: %s", dir,
		                    strerror(errno));
	int rc = 0;
	if (fsync(fd) != 0 && errno != EINVAL)
		rc = seed_err_set(err, -errno, "%s: cannot sync directory: %s", dir, strerror(errno));
	close(fd);
	return rc;
}

int seed_fs_write_atomic(const char *path, const seed_fs_part *parts, size_t nparts, seed_err *err)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (*base == '\0')
		return seed_err_set(err, -EISDIR, "%s: not a file name", path);

	/* ".NAME.tmp-PID-N" in the target's directory: same file system, so
	 * rename is atomic.  O_EXCL and a counter keep concurrent writers
	 * (threads of this process writing the same path) apart. */
	size_t dlen = (size_t)(base - path);
	size_t cap = strlen(path) + 64;
	char *tmp = seed_xmalloc(cap);
	int fd = -1;
	for (unsigned n = 0; fd < 0; n++) {
		snprintf(tmp, cap, "%.*s.%s.tmp-%ld-%u", (int)dlen, path, base, (long)getpid(), n);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && (errno != EEXIST || n >= 1000)) {
			int rc = seed_err_set(err, -errno, "%s: cannot create temporary file %s: %s", path,
			                      tmp, strerror(errno));
			free(tmp);
			return rc;
		}
	}

	int rc = 0;
	for (size_t i = 0; i < nparts && rc == 0; i++) {
		rc = write_all(fd, parts[i].data, parts[i].len);
		if (rc)
			seed_err_set(err, rc, "%s: cannot write temporary file %s: %s", path, tmp,
			             strerror(-rc));
	}
	if (rc == 0 && fsync(fd) != 0)
		rc = seed_err_set(err, -errno, "%s: cannot sync temporary file %s: %s", path, tmp,
		                  strerror(errno));
	/* close can report a deferred write error (NFS): it counts. */
	if (close(fd) != 0 && rc == 0)
		rc = seed_err_set(err, -errno, "%s: cannot close temporary file %s: %s", path, tmp,
		                  strerror(errno));
	if (rc == 0 && rename(tmp, path) != 0)
		rc =
		    seed_err_set(err, -errno, "%s: cannot rename %s over it: %s", path, tmp, strerror(errno));
	if (rc) {
		unlink(tmp);
		free(tmp);
		return rc;
	}
	free(tmp);

	char *dir = dir_of(path);
	rc = seed_fs_sync_dir(dir, err);
	free(dir);
	return rc;
}

int seed_fs_read(const char *path, size_t max, void **data, size_t *len, seed_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return seed_err_set(err, -errno, "%s: cannot open: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int rc = seed_err_set(err, -errno, "%s: cannot stat: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return seed_err_set(err, -EISDIR, "%s: is a directory", path);
	}
	/* Size from fstat for regular files; pipes and the like grow as read. */
	size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	if (max && cap > max + 1)
		cap = max + 1;
	char *buf = seed_xaligned(cap + 1);
	size_t n = 0;
	int rc = 0;
	for (;;) {
		if (n == cap) {
			if (max && n > max) {
				rc = seed_err_set(err, -EFBIG, "%s: larger than %zu bytes", path, max);
				break;
			}
			char *bigger = seed_xaligned(2 * cap + 1);
			memcpy(bigger, buf, n);
			free(buf);
			buf = bigger;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = seed_err_set(err, -errno, "%s: cannot read: %s", path, strerror(errno));
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (rc == 0 && max && n > max)
		rc = seed_err_set(err, -EFBIG, "%s: larger than %zu bytes", path, max);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

int seed_fs_mkdirs(const char *path, seed_err *err)
{
	if (*path == '\0')
		return seed_err_set(err, -ENOENT, "cannot create a directory with an empty name");
	char *p = strcpy(seed_xmalloc(strlen(path) + 1), path);
	int rc = 0;
	/* Create each prefix ending before a '/', then the whole path. */
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			rc = seed_err_set(err, -errno, "%s: cannot create directory %s: %s", path, p,
			                  strerror(errno));
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	if (rc)
		return rc;
	struct stat st;
	if (stat(path, &st) != 0)
		return seed_err_set(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return seed_err_set(err, -ENOTDIR, "%s: exists and is not a directory", path);
	return 0;
}
