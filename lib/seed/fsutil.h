/* seed/fsutil.h: whole-file reads, crash-safe file replacement, mkdir -p.
 *
 * Checkpoints and their metadata must never be seen half-written: a crash
 * (or a full disk) while saving has to leave either the old file or the new
 * one.  seed_fs_write_atomic gets that from the usual POSIX sequence: write a
 * temporary file in the target's own directory, fsync it, rename it over the
 * target (atomic within one file system), fsync the directory so the rename
 * itself is durable.  Readers of the target therefore need no locking.
 *
 * Temporary files are named ".NAME.tmp-PID-N" beside the target NAME; one
 * left behind by a crash is garbage and may be removed by whoever owns the
 * directory.  Errors name the path and the step that failed.
 */
#ifndef SEED_FSUTIL_H
#define SEED_FSUTIL_H

#include <stddef.h>
#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One piece of a file's contents: the file is the pieces back to back. */
typedef struct seed_fs_part {
	const void *data;
	size_t len;
} seed_fs_part;

/* Replace path with the concatenation of parts[0..nparts), atomically (see
 * above).  The new file gets mode 0666 less the umask.  If path is a
 * symbolic link, the link itself is replaced, not its target.  On failure
 * path is untouched and the temporary file removed; the code is a negative
 * errno.  Safe to call from several threads, even for the same path (the
 * last rename wins). */
int seed_fs_write_atomic(const char *path, const seed_fs_part *parts, size_t nparts, seed_err *err);

/* Read all of path into a new buffer (64-byte aligned, free with free()),
 * with a NUL byte appended after the *len bytes so that text can be used as
 * a string.  Files larger than max bytes are refused with -EFBIG (max 0: no
 * limit).  Negative errno on failure. */
int seed_fs_read(const char *path, size_t max, void **data, size_t *len, seed_err *err);

/* Create directory path and any missing parents (mode 0777 less the umask),
 * like mkdir -p.  Existing directories are fine; an existing non-directory
 * is -ENOTDIR. */
int seed_fs_mkdirs(const char *path, seed_err *err);

/* fsync directory dir, so that renames and removals in it survive a crash.
 * File systems that cannot sync directories (EINVAL) count as success. */
int seed_fs_sync_dir(const char *dir, seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
