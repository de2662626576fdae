/* lib/proto/frame_internal.h: what the frame sources share and nothing else sees.
 *
 * Not installed.  The names here have no seed_ prefix, so the shared library
 * does not export them (it exports only seed_*).
 */
#ifndef SEED_FRAME_INTERNAL_H
#define SEED_FRAME_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/frame.h"

/* At most this many msgpack objects (maps, keys, values, shape entries) in
 * one frame.  The largest frame the schema allows has about 500; the bound
 * keeps msgpack-c's object tree small whatever a peer claims. */
#define FRAME_MAX_OBJECTS 4096

/* Incremental delimiting of one msgpack object: walks the headers without
 * building anything, skipping str/bin/ext bodies in one step.  Resumable:
 * call again with more bytes (the same prefix plus more) after it asked for
 * them. */
struct frame_scan {
	size_t off;       /* bytes of the object walked so far */
	uint64_t pending; /* objects still to walk, the one at off included */
	uint64_t objects; /* objects walked */
	size_t need;      /* when more is needed: bytes needed in all */
};

void frame_scan_init(struct frame_scan *s);
/* Walk p[0..avail).  Returns 1 when the object is whole (its length is
 * s->off), 0 when it needs s->need bytes in all (more than avail), or
 * -SEED_EFRAME with a message when the bytes are not msgpack, the object is
 * longer than max_bytes (called `limit` in the message), or it holds more
 * than max_objects objects. */
int frame_scan(struct frame_scan *s, const uint8_t *p, size_t avail, size_t max_bytes, const char *limit,
               uint64_t max_objects, seed_err *err);

/* A printable form of a name from the wire for messages: bytes outside
 * printable ASCII become '?', long names are cut with "...". */
#define FRAME_QUOTE_MAX 72
const char *frame_quote(char buf[FRAME_QUOTE_MAX], const char *p, size_t n);

/* Set err to "<type> frame: field '<name>': <fmt...>" ("frame: ..." when
 * type is SEED_FRAME_INVALID, no field part when name is NULL) and return
 * code. */
int frame_err(seed_err *err, int code, seed_frame_type type, const char *name, size_t name_len,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Check a tensor's dtype, rank, dimensions and size (not its data
 * pointer); on success *nbytes is the size of its data.  Messages as for
 * frame_err. */
int frame_check_tensor(const seed_tensor *t, size_t *nbytes, seed_frame_type type, const char *name,
                       size_t name_len, seed_err *err);

/* The schema part of seed_frame_validate: fields the type requires, their
 * kinds, ranges, dtypes and shapes.  Assumes the generic checks passed. */
int frame_check_schema(const seed_frame *f, seed_err *err);

/* Frame-owned memory (f->storage): a chain of blocks freed together by
 * seed_frame_clear.  Returns 16-byte aligned memory; aborts on OOM. */
void *frame_alloc(seed_frame *f, size_t n);
void frame_storage_free(void *storage);

/* Print a shape as "[4,2]" into buf (at least 8 + 21 * rank bytes). */
const char *frame_shape_str(char *buf, size_t size, const seed_tensor *t);

#endif
