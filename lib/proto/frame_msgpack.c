/* frame_msgpack.c: frames to and from msgpack bytes.
 *
 * Decoding runs on the hot path (thousands of frames a second, each a few
 * to tens of kilobytes), so it copies nothing: names, strings and tensor
 * data of the decoded frame point into the caller's buffer, and the only
 * heap memory is msgpack-c's zone for the object tree, freed before
 * seed_frame_decode returns (a seed_frame_decoder keeps its zone instead, so
 * that decoding allocates nothing).  Before msgpack-c sees the bytes, frame_scan
 * walks the headers once: it finds where the object ends (trailing bytes are
 * an error) and refuses counts that cannot fit in the input, so a peer
 * cannot make msgpack-c allocate for a billion-entry array in a 5-byte
 * message.
 *
 * Encoding writes the bytes itself, straight into the caller's buffer
 * after one reservation of a bound on the frame's size; it keeps
 * msgpack-c's choice of forms (the shortest), so the bytes are those of
 * the golden frames that Python's msgpack packed.
 */
#include <errno.h>
#include <math.h>
#include <msgpack.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "frame_internal.h"
#include "seed/frame.h"

/* ---- delimiting ---------------------------------------------------------- */

void frame_scan_init(struct frame_scan *s)
{
	s->off = 0;
	s->pending = 1;
	s->objects = 0;
	s->need = 0;
}

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* The headers 0xc0..0xdf: bytes of the size field after the type byte,
 * fixed body bytes, bytes between size and data (ext's type), and for arrays
 * and maps the objects per entry. */
static const struct {
	uint8_t lenbytes, body, extra, per_entry, unused;
} headers[32] = {
    [0x00] = {0},                             /* nil */
    [0x01] = {.unused = 1},                   /* never used */
    [0x02] = {0},                             /* false */
    [0x03] = {0},                             /* true */
    [0x04] = {.lenbytes = 1},                 /* bin 8 */
    [0x05] = {.lenbytes = 2},                 /* bin 16 */
    [0x06] = {.lenbytes = 4},                 /* bin 32 */
    [0x07] = {.lenbytes = 1, .extra = 1},     /* ext 8 */
    [0x08] = {.lenbytes = 2, .extra = 1},     /* ext 16 */
    [0x09] = {.lenbytes = 4, .extra = 1},     /* ext 32 */
    [0x0a] = {.body = 4},                     /* float 32 */
    [0x0b] = {.body = 8},                     /* float 64 */
    [0x0c] = {.body = 1},                     /* uint 8 */
    [0x0d] = {.body = 2},                     /* uint 16 */
    [0x0e] = {.body = 4},                     /* uint 32 */
    [0x0f] = {.body = 8},                     /* uint 64 */
    [0x10] = {.body = 1},                     /* int 8 */
    [0x11] = {.body = 2},                     /* int 16 */
    [0x12] = {.body = 4},                     /* int 32 */
    [0x13] = {.body = 8},                     /* int 64 */
    [0x14] = {.body = 2},                     /* fixext 1: type, data */
    [0x15] = {.body = 3},                     /* fixext 2 */
    [0x16] = {.body = 5},                     /* fixext 4 */
    [0x17] = {.body = 9},                     /* fixext 8 */
    [0x18] = {.body = 17},                    /* fixext 16 */
    [0x19] = {.lenbytes = 1},                 /* str 8 */
    [0x1a] = {.lenbytes = 2},                 /* str 16 */
    [0x1b] = {.lenbytes = 4},                 /* str 32 */
    [0x1c] = {.lenbytes = 2, .per_entry = 1}, /* array 16 */
    [0x1d] = {.lenbytes = 4, .per_entry = 1}, /* array 32 */
    [0x1e] = {.lenbytes = 2, .per_entry = 2}, /* map 16 */
    [0x1f] = {.lenbytes = 4, .per_entry = 2}, /* map 32 */
};

int frame_scan(struct frame_scan *s, const uint8_t *p, size_t avail, size_t max_bytes, const char *limit,
               uint64_t max_objects, seed_err *err)
{
	while (s->pending) {
		size_t o = s->off;
		if (o >= avail) {
			s->need = o + 1;
			return 0;
		}
		uint8_t c = p[o];
		int lenbytes = 0, per_entry = 0;
		uint64_t body = 0, extra = 0, children = 0;
		if (c <= 0x7f || c >= 0xe0) {
			/* positive or negative fixint */
		} else if (c <= 0x8f) {
			children = 2u * (c & 0x0f); /* fixmap */
		} else if (c <= 0x9f) {
			children = c & 0x0f; /* fixarray */
		} else if (c <= 0xbf) {
			body = c & 0x1f; /* fixstr */
		} else if (headers[c - 0xc0].unused) {
			return seed_err_set(err, -SEED_EFRAME, "not msgpack: byte 0x%02x at offset %zu", c,
			                    o);
		} else {
			lenbytes = headers[c - 0xc0].lenbytes;
			body = headers[c - 0xc0].body;
			extra = headers[c - 0xc0].extra;
			per_entry = headers[c - 0xc0].per_entry;
		}
		if (lenbytes) {
			if (o + 1 + (size_t)lenbytes > avail) {
				s->need = o + 1 + (size_t)lenbytes;
				return 0;
			}
			uint64_t n = be(p + o + 1, lenbytes);
			if (per_entry)
				children = n * (uint64_t)per_entry;
			else
				body = n + extra;
		}
		uint64_t total = 1 + (uint64_t)lenbytes + body;
		if (total > max_bytes || o > max_bytes - total)
			return seed_err_set(err, -SEED_EFRAME,
			                    "an object at offset %zu ends at byte %llu, past %s (%zu bytes)",
			                    o, (unsigned long long)(o + total), limit, max_bytes);
		size_t end = o + (size_t)total;
		/* Every object takes at least one byte. */
		if (children > max_bytes - end || s->pending - 1 > max_bytes - end - children)
			return seed_err_set(err, -SEED_EFRAME,
			                    "%llu entries at offset %zu cannot fit in %s (%zu bytes)",
			                    (unsigned long long)children, o, limit, max_bytes);
		if (s->objects + 1 > max_objects)
			return seed_err_set(err, -SEED_EFRAME, "more than %llu msgpack objects",
			                    (unsigned long long)max_objects);
		if (end > avail) {
			s->need = end;
			return 0;
		}
		s->off = end;
		s->objects++;
		s->pending += children - 1;
	}
	return 1;
}

/* ---- decoding ------------------------------------------------------------ */

static const char *obj_kind(msgpack_object_type t)
{
	switch (t) {
	case MSGPACK_OBJECT_NIL:
		return "nil";
	case MSGPACK_OBJECT_BOOLEAN:
		return "bool";
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return "int";
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		return "float";
	case MSGPACK_OBJECT_STR:
		return "str";
	case MSGPACK_OBJECT_ARRAY:
		return "array";
	case MSGPACK_OBJECT_MAP:
		return "map";
	case MSGPACK_OBJECT_BIN:
		return "bin";
	case MSGPACK_OBJECT_EXT:
		return "ext";
	}
	return "unknown";
}

static bool str_is(const msgpack_object *o, const char *s, size_t n)
{
	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n && memcmp(o->via.str.ptr, s, n) == 0;
}

static int tensor_from(seed_tensor *t, const msgpack_object *m, seed_frame_type type, const char *name,
                       size_t nl, seed_err *err)
{
	const msgpack_object *dtype = NULL, *shape = NULL, *data = NULL;
	char q[FRAME_QUOTE_MAX], s[160];
	if (m->via.map.size != 3)
		return frame_err(err, -SEED_EFRAME, type, name, nl,
		                 "a tensor is a map of dtype, shape and data; this map has %u keys",
		                 (unsigned)m->via.map.size);
	for (uint32_t i = 0; i < 3; i++) {
		const msgpack_object *k = &m->via.map.ptr[i].key, *v = &m->via.map.ptr[i].val;
		const msgpack_object **slot;
		if (str_is(k, "dtype", 5))
			slot = &dtype;
		else if (str_is(k, "shape", 5))
			slot = &shape;
		else if (str_is(k, "data", 4))
			slot = &data;
		else if (k->type == MSGPACK_OBJECT_STR)
			return frame_err(err, -SEED_EFRAME, type, name, nl, "unknown tensor key '%s'",
			                 frame_quote(q, k->via.str.ptr, k->via.str.size));
		else
			return frame_err(err, -SEED_EFRAME, type, name, nl, "tensor key of kind %s",
			                 obj_kind(k->type));
		if (*slot)
			return frame_err(err, -SEED_EFRAME, type, name, nl, "tensor key '%s' appears twice",
			                 frame_quote(q, k->via.str.ptr, k->via.str.size));
		*slot = v;
	}
	if (dtype->type != MSGPACK_OBJECT_STR)
		return frame_err(err, -SEED_EFRAME, type, name, nl, "dtype is %s, expected str",
		                 obj_kind(dtype->type));
	t->dtype = seed_dtype_parse(dtype->via.str.ptr, dtype->via.str.size);
	if (t->dtype == SEED_DTYPE_INVALID)
		return frame_err(err, -SEED_EFRAME, type, name, nl, "dtype '%s' unknown",
		                 frame_quote(q, dtype->via.str.ptr, dtype->via.str.size));
	if (shape->type != MSGPACK_OBJECT_ARRAY)
		return frame_err(err, -SEED_EFRAME, type, name, nl, "shape is %s, expected an array of ints",
		                 obj_kind(shape->type));
	if (shape->via.array.size > SEED_TENSOR_MAX_RANK)
		return frame_err(err, -SEED_EFRAME, type, name, nl, "shape of rank %u, at most %d",
		                 (unsigned)shape->via.array.size, SEED_TENSOR_MAX_RANK);
	t->rank = (int)shape->via.array.size;
	for (int i = 0; i < t->rank; i++) {
		const msgpack_object *d = &shape->via.array.ptr[i];
		if (d->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
			return frame_err(err, -SEED_EFRAME, type, name, nl, "dimension %d is negative (%lld)",
			                 i, (long long)d->via.i64);
		if (d->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return frame_err(err, -SEED_EFRAME, type, name, nl,
			                 "dimension %d is %s, expected int", i, obj_kind(d->type));
		if (d->via.u64 > INT64_MAX)
			return frame_err(err, -SEED_EFRAME, type, name, nl,
			                 "dimension %d is too large (%llu)", i,
			                 (unsigned long long)d->via.u64);
		t->shape[i] = (int64_t)d->via.u64;
	}
	size_t nbytes;
	int rc = frame_check_tensor(t, &nbytes, type, name, nl, err);
	if (rc < 0)
		return rc;
	if (data->type != MSGPACK_OBJECT_BIN)
		return frame_err(err, -SEED_EFRAME, type, name, nl, "data is %s, expected bin",
		                 obj_kind(data->type));
	if (data->via.bin.size != nbytes)
		return frame_err(err, -SEED_EFRAME, type, name, nl,
		                 "shape %s %s needs %zu bytes of data, got %u",
		                 frame_shape_str(s, sizeof s, t), seed_dtype_name(t->dtype), nbytes,
		                 (unsigned)data->via.bin.size);
	/* Zero copy: the data stays in the caller's buffer (maybe unaligned). */
	t->data = (void *)data->via.bin.ptr;
	return 0;
}

static int value_from(seed_value *v, const msgpack_object *o, seed_frame_type type, const char *name,
                      size_t nl, seed_err *err)
{
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		v->kind = SEED_VALUE_NIL;
		return 0;
	case MSGPACK_OBJECT_BOOLEAN:
		v->kind = SEED_VALUE_BOOL;
		v->u.b = o->via.boolean;
		return 0;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		if (o->via.u64 > INT64_MAX)
			return frame_err(err, -SEED_EFRAME, type, name, nl, "integer %llu out of range",
			                 (unsigned long long)o->via.u64);
		v->kind = SEED_VALUE_INT;
		v->u.i = (int64_t)o->via.u64;
		return 0;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		v->kind = SEED_VALUE_INT;
		v->u.i = o->via.i64;
		return 0;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		v->kind = SEED_VALUE_FLOAT;
		v->u.f = o->via.f64;
		return 0;
	case MSGPACK_OBJECT_STR:
		v->kind = SEED_VALUE_STR;
		v->u.str.ptr = o->via.str.ptr;
		v->u.str.len = o->via.str.size;
		return 0;
	case MSGPACK_OBJECT_MAP:
		v->kind = SEED_VALUE_TENSOR;
		return tensor_from(&v->u.tensor, o, type, name, nl, err);
	default:
		return frame_err(err, -SEED_EFRAME, type, name, nl,
		                 "%s values are not allowed (nil, bool, int, float, str or tensor)",
		                 obj_kind(o->type));
	}
}

static int frame_from(seed_frame *f, const msgpack_object *root, seed_err *err)
{
	char q[FRAME_QUOTE_MAX];
	if (root->type != MSGPACK_OBJECT_MAP)
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, NULL, 0, "not a map but %s",
		                 obj_kind(root->type));
	const msgpack_object_kv *kv = root->via.map.ptr;
	uint32_t n = root->via.map.size;

	/* First the type and version, so that later messages can name the
	 * type. */
	const msgpack_object *type = NULL, *version = NULL;
	for (uint32_t i = 0; i < n; i++) {
		const msgpack_object *k = &kv[i].key;
		if (k->type != MSGPACK_OBJECT_STR)
			return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, NULL, 0,
			                 "key %u is %s, expected str", (unsigned)i, obj_kind(k->type));
		const msgpack_object **slot = str_is(k, "type", 4)      ? &type
		                              : str_is(k, "version", 7) ? &version
		                                                        : NULL;
		if (!slot)
			continue;
		if (*slot)
			return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, k->via.str.ptr,
			                 k->via.str.size, "appears twice");
		*slot = &kv[i].val;
	}
	if (!type)
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, "type", 4, "missing");
	if (type->type != MSGPACK_OBJECT_STR)
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, "type", 4, "%s, expected str",
		                 obj_kind(type->type));
	seed_frame_type t = seed_frame_type_parse(type->via.str.ptr, type->via.str.size);
	if (!version)
		return frame_err(err, -SEED_EFRAME, t, "version", 7, "missing");
	if (version->type != MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    version->type != MSGPACK_OBJECT_NEGATIVE_INTEGER)
		return frame_err(err, -SEED_EFRAME, t, "version", 7, "%s, expected int",
		                 obj_kind(version->type));
	/* The version first: a newer protocol may well have new types. */
	if (version->type == MSGPACK_OBJECT_NEGATIVE_INTEGER || version->via.u64 != SEED_PROTOCOL_VERSION)
		return frame_err(err, -SEED_EVERSION, t, "version", 7,
		                 "version %s%llu not supported (this build speaks version %d)",
		                 version->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? "-" : "",
		                 version->type == MSGPACK_OBJECT_NEGATIVE_INTEGER
		                     ? 0ULL - (unsigned long long)version->via.i64
		                     : (unsigned long long)version->via.u64,
		                 SEED_PROTOCOL_VERSION);
	if (t == SEED_FRAME_INVALID)
		return frame_err(err, -SEED_ETYPE, SEED_FRAME_INVALID, "type", 4, "unknown frame type '%s'",
		                 frame_quote(q, type->via.str.ptr, type->via.str.size));
	if (n - 2 > SEED_FRAME_MAX_FIELDS)
		return frame_err(err, -SEED_EFRAME, t, NULL, 0,
		                 "%u fields, at most %d besides type and version", (unsigned)(n - 2),
		                 SEED_FRAME_MAX_FIELDS);
	f->type = t;
	f->version = SEED_PROTOCOL_VERSION;

	for (uint32_t i = 0; i < n; i++) {
		if (&kv[i].val == type || &kv[i].val == version)
			continue;
		/* msgpack-c gives an empty key a NULL pointer: make it "", a
		 * name that encodes again (seed_frame_encode refuses NULL). */
		const char *name = kv[i].key.via.str.size ? kv[i].key.via.str.ptr : "";
		size_t nl = kv[i].key.via.str.size;
		for (int j = 0; j < f->nfields; j++)
			if (f->fields[j].name_len == nl && memcmp(f->fields[j].name, name, nl) == 0)
				return frame_err(err, -SEED_EFRAME, t, name, nl, "appears twice");
		seed_field *fd = &f->fields[f->nfields];
		fd->name = name;
		fd->name_len = nl;
		int rc = value_from(&fd->value, &kv[i].val, t, name, nl, err);
		if (rc < 0)
			return rc;
		f->nfields++;
	}
	return frame_check_schema(f, err);
}

/* Decode with zone z (cleared afterwards, its first chunk kept), or with a
 * zone of its own when z is NULL. */
static int decode(seed_frame *f, const void *buf, size_t len, msgpack_zone *z, seed_err *err)
{
	f->type = SEED_FRAME_INVALID;
	f->version = 0;
	f->nfields = 0;
	f->storage = NULL;
	if (len > SEED_FRAME_MAX_BYTES)
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, NULL, 0, "%zu bytes, more than %zu",
		                 len, SEED_FRAME_MAX_BYTES);
	if (len == 0)
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, NULL, 0, "empty");

	struct frame_scan s;
	seed_err serr;
	frame_scan_init(&s);
	int rc = frame_scan(&s, buf, len, len, "the end of the input", FRAME_MAX_OBJECTS, &serr);
	if (rc == 0)
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, NULL, 0,
		                 "not msgpack: the input ends inside an object (%zu bytes)", len);
	if (rc < 0)
		return frame_err(err, rc, SEED_FRAME_INVALID, NULL, 0, "%s", serr.msg);
	if (s.off != len)
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, NULL, 0,
		                 "%zu trailing byte(s) after the frame", len - s.off);

	msgpack_unpacked u;
	msgpack_object root;
	size_t off = 0;
	msgpack_unpack_return r;
	if (z) {
		r = msgpack_unpack(buf, len, &off, z, &root);
	} else {
		msgpack_unpacked_init(&u);
		r = msgpack_unpack_next(&u, buf, len, &off);
		root = u.data;
	}
	if (r == MSGPACK_UNPACK_SUCCESS && off == len) {
		rc = frame_from(f, &root, err);
	} else {
		/* frame_scan accepted the layout, so what msgpack-c refuses is
		 * nesting deeper than its parser's stack, or bad ext data. */
		rc = frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, NULL, 0,
		               "not msgpack, or nested too deeply (msgpack-c says %d)", (int)r);
	}
	/* Nothing of the tree outlives frame_from: f points into buf. */
	if (z)
		msgpack_zone_clear(z);
	else
		msgpack_unpacked_destroy(&u);
	if (rc < 0)
		seed_frame_clear(f);
	return rc;
}

int seed_frame_decode(seed_frame *f, const void *buf, size_t len, seed_err *err)
{
	return decode(f, buf, len, NULL, err);
}

/* The object tree of any frame of the schema fits in one chunk of this
 * size (a few dozen objects of 24 bytes); larger trees get more chunks for
 * the one call. */
#define DECODER_CHUNK 8192

struct seed_frame_decoder {
	msgpack_zone zone;
};

int seed_frame_decoder_new(seed_frame_decoder **out)
{
	seed_frame_decoder *d = seed_xcalloc(1, sizeof *d);
	if (!msgpack_zone_init(&d->zone, DECODER_CHUNK)) {
		free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void seed_frame_decoder_free(seed_frame_decoder **pd)
{
	seed_frame_decoder *d = pd ? *pd : NULL;
	if (!d)
		return;
	msgpack_zone_destroy(&d->zone);
	free(d);
	*pd = NULL;
}

int seed_frame_decoder_decode(seed_frame_decoder *d, seed_frame *f, const void *buf, size_t len,
                              seed_err *err)
{
	return decode(f, buf, len, &d->zone, err);
}

/* ---- encoding ------------------------------------------------------------ */

/* The writers emit what msgpack-c's packer does for the same calls (so the
 * bytes are those of any msgpack library that packs shortest-first): ints
 * in their shortest form, str, bin, array and map headers with the
 * shortest length, floats as float64.  Each writes at p and returns the
 * end; the caller has reserved the room. */
static uint8_t *put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *put_uint(uint8_t *p, uint64_t v)
{
	if (v < 128) {
		*p++ = (uint8_t)v;
		return p;
	}
	if (v < 256) {
		*p++ = 0xcc;
		return put_be(p, v, 1);
	}
	if (v < 65536) {
		*p++ = 0xcd;
		return put_be(p, v, 2);
	}
	if (v < ((uint64_t)1 << 32)) {
		*p++ = 0xce;
		return put_be(p, v, 4);
	}
	*p++ = 0xcf;
	return put_be(p, v, 8);
}

static uint8_t *put_int(uint8_t *p, int64_t v)
{
	if (v >= -32) {
		if (v >= 0)
			return put_uint(p, (uint64_t)v);
		*p++ = (uint8_t)v; /* negative fixint */
		return p;
	}
	if (v >= -128) {
		*p++ = 0xd0;
		return put_be(p, (uint64_t)v, 1);
	}
	if (v >= -32768) {
		*p++ = 0xd1;
		return put_be(p, (uint64_t)v, 2);
	}
	if (v >= INT32_MIN) {
		*p++ = 0xd2;
		return put_be(p, (uint64_t)v, 4);
	}
	*p++ = 0xd3;
	return put_be(p, (uint64_t)v, 8);
}

static uint8_t *put_double(uint8_t *p, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	*p++ = 0xcb;
	return put_be(p, bits, 8);
}

/* A header of n: fix (n below fixmax, one byte fix | n), else the 8-bit
 * form (tag8, 0 if none), the 16-bit (tag8 + 1) or the 32-bit (tag8 + 2),
 * for str (0xa0, 32, 0xd9) and bin (-, 0, 0xc4); arrays and maps have no
 * 8-bit form (tag16, tag16 + 1). */
static uint8_t *put_len(uint8_t *p, size_t n, uint8_t fix, size_t fixmax, uint8_t tag8, uint8_t tag16)
{
	if (n < fixmax) {
		*p++ = (uint8_t)(fix | n);
		return p;
	}
	if (tag8 && n < 256) {
		*p++ = tag8;
		return put_be(p, n, 1);
	}
	if (n < 65536) {
		*p++ = tag16;
		return put_be(p, n, 2);
	}
	*p++ = (uint8_t)(tag16 + 1);
	return put_be(p, n, 4);
}

static uint8_t *put_str(uint8_t *p, const char *s, size_t n)
{
	p = put_len(p, n, 0xa0, 32, 0xd9, 0xda);
	if (n)
		memcpy(p, s, n);
	return p + n;
}

static uint8_t *put_bin(uint8_t *p, const void *data, size_t n)
{
	p = put_len(p, n, 0, 0, 0xc4, 0xc5);
	if (n)
		memcpy(p, data, n);
	return p + n;
}

#define PUT_MAP(p, n) put_len(p, n, 0x80, 16, 0, 0xde)
#define PUT_ARRAY(p, n) put_len(p, n, 0x90, 16, 0, 0xdc)

int seed_frame_encode(const seed_frame *f, seed_buf *out, seed_err *err)
{
	int rc = seed_frame_validate(f, err);
	if (rc < 0)
		return rc;

	/* Room for the whole frame, a bound: the map's header, type and
	 * version take at most 36 bytes; a field's name at most 5 + its
	 * length, a scalar value 9, a string 5 + its length, a tensor 87 + its
	 * data (names and headers 32, the dtype 5, the shape 5 + 6 x 9, the
	 * bin's header 5). */
	size_t bound = 64;
	for (int i = 0; i < f->nfields; i++) {
		const seed_value *v = &f->fields[i].value;
		bound += 16 + f->fields[i].name_len;
		if (v->kind == SEED_VALUE_STR)
			bound += v->u.str.len;
		else if (v->kind == SEED_VALUE_TENSOR)
			bound += 96 + seed_tensor_nbytes(&v->u.tensor);
	}
	seed_buf_reserve(out, bound);

	uint8_t *start = out->data + out->len, *p = start;
	p = PUT_MAP(p, (size_t)f->nfields + 2);
	p = put_str(p, "type", 4);
	const char *tn = seed_frame_type_name(f->type);
	p = put_str(p, tn, strlen(tn));
	p = put_str(p, "version", 7);
	p = put_int(p, f->version);
	for (int i = 0; i < f->nfields; i++) {
		const seed_field *fd = &f->fields[i];
		const seed_value *v = &fd->value;
		p = put_str(p, fd->name, fd->name_len);
		switch (v->kind) {
		case SEED_VALUE_NIL:
			*p++ = 0xc0;
			break;
		case SEED_VALUE_BOOL:
			*p++ = v->u.b ? 0xc3 : 0xc2;
			break;
		case SEED_VALUE_INT:
			p = put_int(p, v->u.i);
			break;
		case SEED_VALUE_FLOAT:
			p = put_double(p, v->u.f);
			break;
		case SEED_VALUE_STR:
			p = put_str(p, v->u.str.ptr, v->u.str.len);
			break;
		case SEED_VALUE_TENSOR: {
			const seed_tensor *t = &v->u.tensor;
			const char *dn = seed_dtype_name(t->dtype);
			p = PUT_MAP(p, 3);
			p = put_str(p, "dtype", 5);
			p = put_str(p, dn, strlen(dn));
			p = put_str(p, "shape", 5);
			p = PUT_ARRAY(p, (size_t)t->rank);
			for (int d = 0; d < t->rank; d++)
				p = put_int(p, t->shape[d]);
			p = put_str(p, "data", 4);
			p = put_bin(p, t->data, seed_tensor_nbytes(t));
			break;
		}
		}
	}
	size_t n = (size_t)(p - start);
	if (n > SEED_FRAME_MAX_BYTES)
		return frame_err(err, -SEED_EFRAME, f->type, NULL, 0, "encoded in %zu bytes, more than %zu",
		                 n, SEED_FRAME_MAX_BYTES);
	out->len += n;
	return 0;
}

/* ---- the action frame, without a seed_frame ------------------------------ */

#define PUT_NAME(p, lit) put_str(p, lit, sizeof lit - 1)

/* A tensor of dtype (a short name), shape[0..rank) (each < 2^63, rank < 16)
 * and nbytes of data. */
static uint8_t *put_tensor(uint8_t *p, const char *dtype, int rank, const int64_t *shape, const void *data,
                           size_t nbytes)
{
	*p++ = 0x83; /* dtype, shape, data */
	p = PUT_NAME(p, "dtype");
	p = put_str(p, dtype, strlen(dtype));
	p = PUT_NAME(p, "shape");
	*p++ = (uint8_t)(0x90 | rank);
	for (int i = 0; i < rank; i++)
		p = put_uint(p, (uint64_t)shape[i]);
	p = PUT_NAME(p, "data");
	return put_bin(p, data, nbytes);
}

/* The action frame's map header, type, version and its five ints: 118
 * bytes at most (names and headers 73, five ints of 9 bytes at most).
 * extra: the tensors after the action (reset, reset_seed), 0 to 2. */
static uint8_t *put_action_head(uint8_t *p, int extra, uint32_t run, uint32_t actor, int64_t seq,
                                int32_t env0, int64_t policy_version)
{
	*p++ = (uint8_t)(0x88 + extra); /* type, version and six fields, and the extra ones */
	p = PUT_NAME(p, "type");
	p = PUT_NAME(p, "action");
	p = PUT_NAME(p, "version");
	p = put_uint(p, SEED_PROTOCOL_VERSION);
	p = PUT_NAME(p, "run");
	p = put_uint(p, run);
	p = PUT_NAME(p, "actor");
	p = put_uint(p, actor);
	p = PUT_NAME(p, "seq");
	p = put_uint(p, (uint64_t)seq);
	p = PUT_NAME(p, "env0");
	p = put_uint(p, (uint64_t)env0);
	p = PUT_NAME(p, "policy_version");
	return put_uint(p, (uint64_t)policy_version);
}

/* The action frame built and encoded by seed_frame_encode: the refusals'
 * path, so that they get the frame's own checks and messages.  action is
 * (K) i32, or (K, A) f32 when dtype is f32. */
static int encode_action_frame(seed_buf *out, uint32_t run, uint32_t actor, int64_t seq, int32_t env0,
                               int64_t policy_version, const void *action, seed_dtype dtype,
                               const uint8_t *reset, const int64_t *reset_seed, int64_t K, int64_t A,
                               seed_err *err)
{
	seed_frame f;
	int64_t shape[2] = {K, A};
	seed_frame_init(&f, SEED_FRAME_ACTION);
	seed_frame_set_int(&f, "run", run);
	seed_frame_set_int(&f, "actor", actor);
	seed_frame_set_int(&f, "seq", seq);
	seed_frame_set_int(&f, "env0", env0);
	seed_frame_set_int(&f, "policy_version", policy_version);
	int rank = dtype == SEED_DTYPE_F32 ? 2 : 1;
	seed_frame_set_tensor(&f, "action", seed_tensor_view((void *)action, dtype, rank, shape));
	if (reset)
		seed_frame_set_tensor(&f, "reset", seed_tensor_view((void *)reset, SEED_DTYPE_U8, 1, &K));
	if (reset_seed)
		seed_frame_set_tensor(&f, "reset_seed",
		                      seed_tensor_view((void *)reset_seed, SEED_DTYPE_I64, 1, &K));
	return seed_frame_encode(&f, out, err);
}

/* The restart requests after the action: reset, and reset_seed where
 * given: 33 bytes at most before each one's data (the name, the tensor's
 * names and headers, K, the bin's header of 5). */
static uint8_t *put_resets(uint8_t *p, const uint8_t *reset, const int64_t *reset_seed, int64_t K)
{
	if (reset) {
		p = PUT_NAME(p, "reset");
		p = put_tensor(p, "u8", 1, &K, reset, (size_t)K);
	}
	if (reset_seed) {
		p = PUT_NAME(p, "reset_seed");
		p = put_tensor(p, "i64", 1, &K, reset_seed, 8 * (size_t)K);
	}
	return p;
}

int seed_frame_encode_action(seed_buf *out, uint32_t run, uint32_t actor, int64_t seq, int32_t env0,
                             int64_t policy_version, const int32_t *action, const uint8_t *reset,
                             const int64_t *reset_seed, int64_t K, seed_err *err)
{
	if (seq < 0 || env0 < 0 || policy_version < 0 || K < 1 ||
	    (uint64_t)K > (SEED_FRAME_MAX_BYTES - 256) / 13)
		/* Off the fast path: the frame's own checks say what is wrong. */
		return encode_action_frame(out, run, actor, seq, env0, policy_version, action, SEED_DTYPE_I32,
		                           reset, reset_seed, K, 0, err);
	size_t nbytes = 4 * (size_t)K;
	/* 145 bytes at most before the data: the head, the name and the
	 * tensor's names and headers, K, the bin's header of 5. */
	seed_buf_reserve(out,
	                 192 + nbytes + (reset ? 48 + (size_t)K : 0) + (reset_seed ? 48 + 8 * (size_t)K : 0));
	uint8_t *p = put_action_head(out->data + out->len, (reset != NULL) + (reset_seed != NULL), run, actor,
	                             seq, env0, policy_version);
	p = PUT_NAME(p, "action");
	p = put_tensor(p, "i32", 1, &K, action, nbytes);
	p = put_resets(p, reset, reset_seed, K);
	out->len = (size_t)(p - out->data);
	return 0;
}

int seed_frame_encode_action_box(seed_buf *out, uint32_t run, uint32_t actor, int64_t seq, int32_t env0,
                                 int64_t policy_version, const float *action, const uint8_t *reset,
                                 const int64_t *reset_seed, int64_t K, int64_t A, seed_err *err)
{
	/* The fast path: a frame of at most SEED_FRAME_MAX_BYTES (K x A
	 * floats, K reset bytes, 8K of seeds and 256 of the rest), every
	 * element finite. */
	bool fast = seq >= 0 && env0 >= 0 && policy_version >= 0 && K >= 1 && A >= 1 &&
	            (uint64_t)A <= (SEED_FRAME_MAX_BYTES - 256) / 5 &&
	            (uint64_t)K <= (SEED_FRAME_MAX_BYTES - 256) / (4 * (uint64_t)A + 9);
	size_t n = fast ? (size_t)K * (size_t)A : 0;
	for (size_t i = 0; i < n && fast; i++)
		fast = isfinite(action[i]);
	if (!fast)
		return encode_action_frame(out, run, actor, seq, env0, policy_version, action, SEED_DTYPE_F32,
		                           reset, reset_seed, K, A, err);
	int64_t shape[2] = {K, A};
	/* 154 bytes at most before the data: the head, the name and the
	 * tensor's names and headers, K and A, the bin's header of 5. */
	seed_buf_reserve(out,
	                 192 + 4 * n + (reset ? 48 + (size_t)K : 0) + (reset_seed ? 48 + 8 * (size_t)K : 0));
	uint8_t *p = put_action_head(out->data + out->len, (reset != NULL) + (reset_seed != NULL), run, actor,
	                             seq, env0, policy_version);
	p = PUT_NAME(p, "action");
	p = put_tensor(p, "f32", 2, shape, action, 4 * n);
	p = put_resets(p, reset, reset_seed, K);
	out->len = (size_t)(p - out->data);
	return 0;
}
