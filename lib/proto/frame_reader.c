/* frame_reader.c: recorded streams, concatenated frames read from an fd.
 *
 * msgpack is self-delimiting, so a stream needs no framing of its own; the
 * reader walks each object's headers (frame_scan, resumable) to find where
 * it ends, reading more as needed, and hands out the object's bytes whole.
 * msgpack-c's streaming unpacker is not used because it does not keep an
 * object's bytes together once they span reads, and the callers want the
 * bytes (to decode zero-copy, or to pass them on untouched).
 *
 * Invariants: buf[head..tail) holds unread input; the object being
 * delimited starts at head and s.off of its bytes are walked; after a
 * frame is handed out, `handed` of its bytes are dropped on the next call.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame_internal.h"
#include "seed/frame.h"

#define READ_CHUNK ((size_t)64 << 10)

struct seed_frame_reader {
	int fd;
	unsigned char *buf;
	size_t cap, head, tail;
	size_t handed;   /* bytes handed out by the last call */
	uint64_t offset; /* stream offset of buf[head] */
	struct frame_scan s;
	int failed;       /* sticky error code, 0 while fine */
	seed_err failure; /* its message */
	bool eof;
};

int seed_frame_reader_new(seed_frame_reader **out, int fd)
{
	seed_frame_reader *r = seed_xcalloc(1, sizeof *r);
	r->fd = fd;
	r->cap = READ_CHUNK;
	r->buf = seed_xmalloc(r->cap);
	frame_scan_init(&r->s);
	*out = r;
	return 0;
}

void seed_frame_reader_free(seed_frame_reader **r)
{
	if (!r || !*r)
		return;
	free((*r)->buf);
	free(*r);
	*r = NULL;
}

uint64_t seed_frame_reader_offset(const seed_frame_reader *r)
{
	return r->offset + r->handed;
}

/* The stream cannot be read past this point: remember why. */
static int fail(seed_frame_reader *r, seed_err *err, const char *why)
{
	r->failed = -SEED_EFRAME;
	seed_err_set(&r->failure, r->failed, "frame at byte %llu: %s", (unsigned long long)r->offset, why);
	return seed_err_set(err, r->failed, "%s", r->failure.msg);
}

int seed_frame_reader_next(seed_frame_reader *r, const void **data, size_t *len, seed_err *err)
{
	if (r->failed)
		return seed_err_set(err, r->failed, "%s", r->failure.msg);
	r->head += r->handed;
	r->offset += r->handed;
	r->handed = 0;
	for (;;) {
		seed_err serr;
		int rc = frame_scan(&r->s, r->buf + r->head, r->tail - r->head, SEED_FRAME_MAX_BYTES,
		                    "the largest frame allowed", UINT64_MAX, &serr);
		if (rc < 0)
			return fail(r, err, serr.msg);
		if (rc == 1) {
			*data = r->buf + r->head;
			*len = r->s.off;
			r->handed = r->s.off;
			frame_scan_init(&r->s);
			return 0;
		}
		if (r->eof) {
			if (r->head == r->tail)
				return seed_err_set(err, -SEED_EEOF, "end of stream");
			return fail(r, err, "the input ends inside it (truncated)");
		}
		/* Room for a chunk, or for what the object needs but at most
		 * twice what has arrived of it: the buffer doubles as bytes
		 * come, and a length claimed by a header (up to
		 * SEED_FRAME_MAX_BYTES) is never allocated before its bytes
		 * exist, so a corrupt header in a short file costs nothing. */
		size_t have = r->tail - r->head;
		size_t want = r->s.need < 2 * have ? r->s.need : 2 * have;
		if (want < READ_CHUNK)
			want = READ_CHUNK;
		if (r->head > 0 && r->cap - r->head < want) {
			memmove(r->buf, r->buf + r->head, r->tail - r->head);
			r->tail -= r->head;
			r->head = 0;
		}
		r->buf = seed_xgrow(r->buf, &r->cap, r->head + want, 1);
		ssize_t n = read(r->fd, r->buf + r->tail, r->cap - r->tail);
		if (n < 0) {
			int e = errno;
			return seed_err_set(err, -e, "reading frames: %s", seed_strerror(-e));
		}
		if (n == 0)
			r->eof = true;
		r->tail += (size_t)n;
	}
}
