/* tfevents.c: TensorBoard event files (see seed/tfevents.h for the format).
 *
 * The protocol buffers are encoded by hand: three messages, five fields.
 * Proto3 leaves a scalar field at its default out, so a zero wall_time or
 * step is not written (the bytes are then those protobuf itself would
 * write); simple_value is in a oneof and is always written, zero included.
 *
 * A record is built whole in the writer's buffer (reused, so the metrics
 * path allocates nothing once it has grown) and handed to the kernel in a
 * single write on an O_APPEND descriptor, as metrics.c does for lines.
 */
#include "seed/tfevents.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seed/bytes.h"
#include "seed/buf.h"

struct seed_tfevents {
	int fd;
	char *path;
	seed_buf rec;                  /* the record being built */
	seed_tfevents_scalar *scratch; /* write_json's scalars, reused */
	size_t scratch_cap;
};

/* Bit by bit: a record is a few hundred bytes every metrics interval, so
 * the reading is worth more than a table's speed. */
uint32_t seed_tfevents_crc32c(const void *data, size_t n)
{
	const uint8_t *p = data;
	uint32_t crc = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
	}
	return crc ^ 0xFFFFFFFFu;
}

uint32_t seed_tfevents_mask(uint32_t crc)
{
	return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

/* ---- protocol buffer encoding ---------------------------------------------- */

/* Wire types: 0 varint, 1 64-bit, 2 length-delimited, 5 32-bit. */
#define KEY(field, wire) (uint8_t)((field) << 3 | (wire))

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80)
		v >>= 7, n++;
	return n;
}

static void put_varint(seed_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	seed_buf_append(b, tmp, n);
}

static void put_byte(seed_buf *b, uint8_t c)
{
	seed_buf_append(b, &c, 1);
}

static void put_le32(seed_buf *b, uint32_t v)
{
	unsigned char tmp[4];
	seed_le_put32(tmp, v);
	seed_buf_append(b, tmp, sizeof tmp);
}

static void put_le64(seed_buf *b, uint64_t v)
{
	unsigned char tmp[8];
	seed_le_put64(tmp, v);
	seed_buf_append(b, tmp, sizeof tmp);
}

static void put_bytes_field(seed_buf *b, uint8_t key, const void *s, size_t n)
{
	put_byte(b, key);
	put_varint(b, n);
	seed_buf_append(b, s, n);
}

/* Summary.Value {tag = 1, simple_value = 2}: its size without the key and
 * length that embed it in the Summary. */
static size_t value_size(size_t taglen)
{
	return 1 + varint_len(taglen) + taglen + 1 + 4;
}

/* The head of an Event: wall_time and step, each when not zero. */
static void put_event_head(seed_buf *b, double wall_time, int64_t step)
{
	if (wall_time != 0) {
		put_byte(b, KEY(1, 1));
		put_le64(b, seed_f64_bits(wall_time));
	}
	if (step != 0) {
		put_byte(b, KEY(2, 0));
		put_varint(b, (uint64_t)step); /* int64: a negative step takes 10 bytes */
	}
}

/* ---- records ----------------------------------------------------------------- */

/* Room for the record's 12-byte header, to be filled by finish_record once
 * the data is in. */
static void start_record(seed_buf *b)
{
	seed_buf_reset(b);
	seed_buf_reserve(b, 12);
	memset(b->data, 0, 12);
	b->len = 12;
}

static void finish_record(seed_buf *b)
{
	uint64_t len = b->len - 12;
	seed_le_put64(b->data, len);
	seed_le_put32(b->data + 8, seed_tfevents_mask(seed_tfevents_crc32c(b->data, 8)));
	put_le32(b, seed_tfevents_mask(seed_tfevents_crc32c(b->data + 12, len)));
}

static int write_all(seed_tfevents *t, seed_err *err)
{
	const uint8_t *p = t->rec.data;
	size_t len = t->rec.len;
	while (len > 0) {
		ssize_t w = write(t->fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return seed_err_set(err, -errno, "%s: cannot write events: %s", t->path,
			                    strerror(errno));
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* ---- the writer -------------------------------------------------------------- */

int seed_tfevents_open(const char *dir, double wall_time, seed_tfevents **out, seed_err *err)
{
	char host[256];
	if (gethostname(host, sizeof host) != 0 || !host[0])
		strcpy(host, "localhost");
	host[sizeof host - 1] = '\0';
	long long secs = isfinite(wall_time) && wall_time >= 0 && wall_time < 1e17 ? (long long)wall_time : 0;
	size_t cap = strlen(dir) + strlen(host) + 64;
	char *path = seed_xmalloc(cap);
	int fd = -1;
	for (int k = 0; fd < 0; k++) {
		int n = snprintf(path, cap, "%s/events.out.tfevents.%010lld.%s", dir, secs, host);
		if (k > 0)
			snprintf(path + n, cap - (size_t)n, ".%d", k);
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && (errno != EEXIST || k == 9999)) {
			int rc = seed_err_set(err, -errno, "%s: cannot create an event file: %s", path,
			                      strerror(errno));
			free(path);
			return rc;
		}
	}
	seed_tfevents *t = seed_xcalloc(1, sizeof *t);
	t->fd = fd;
	t->path = path;
	start_record(&t->rec);
	put_event_head(&t->rec, wall_time, 0);
	put_bytes_field(&t->rec, KEY(3, 2), "brain.Event:2", 13);
	finish_record(&t->rec);
	int rc = write_all(t, err);
	if (rc) {
		unlink(t->path);
		seed_tfevents_close(&t);
		return rc;
	}
	*out = t;
	return 0;
}

const char *seed_tfevents_path(const seed_tfevents *t)
{
	return t->path;
}

void seed_tfevents_close(seed_tfevents **tp)
{
	if (!tp || !*tp)
		return;
	seed_tfevents *t = *tp;
	close(t->fd);
	seed_buf_free(&t->rec);
	free(t->scratch);
	free(t->path);
	free(t);
	*tp = NULL;
}

int seed_tfevents_write(seed_tfevents *t, int64_t step, double wall_time, const seed_tfevents_scalar *v,
                        size_t n, seed_err *err)
{
	size_t summary = 0;
	for (size_t i = 0; i < n; i++) {
		size_t vs = value_size(strlen(v[i].tag));
		summary += 1 + varint_len(vs) + vs;
	}
	seed_buf *b = &t->rec;
	start_record(b);
	put_event_head(b, wall_time, step);
	put_byte(b, KEY(5, 2));
	put_varint(b, summary);
	for (size_t i = 0; i < n; i++) {
		size_t taglen = strlen(v[i].tag);
		put_byte(b, KEY(1, 2));
		put_varint(b, value_size(taglen));
		put_bytes_field(b, KEY(1, 2), v[i].tag, taglen);
		uint32_t bits;
		memcpy(&bits, &v[i].value, sizeof bits);
		put_byte(b, KEY(2, 5));
		put_le32(b, bits);
	}
	finish_record(b);
	return write_all(t, err);
}

int seed_tfevents_write_json(seed_tfevents *t, const json_t *obj, const char *step_key, double wall_time,
                             seed_err *err)
{
	if (!json_is_object(obj))
		return seed_err_set(err, -EINVAL, "%s: a metrics line must be a JSON object", t->path);
	const json_t *s = json_object_get(obj, step_key);
	double sd = json_is_real(s) ? json_real_value(s) : 0;
	/* -2^63 <= sd < 2^63: the doubles that convert to int64 exactly when whole. */
	if (!json_is_integer(s) && !(json_is_real(s) && sd == trunc(sd) && sd >= -0x1p63 && sd < 0x1p63))
		return seed_err_set(err, -EINVAL,
		                    "%s: the metrics line has no whole number \"%s\" for the step", t->path,
		                    step_key);
	int64_t step = json_is_integer(s) ? (int64_t)json_integer_value(s) : (int64_t)sd;
	size_t size = json_object_size(obj);
	t->scratch = seed_xgrow(t->scratch, &t->scratch_cap, size, sizeof *t->scratch);
	size_t n = 0;
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)obj, key, val)
	{
		/* Beyond float's range the conversion gives an infinity (IEEE 754). */
		if (json_is_number(val) && strcmp(key, step_key) != 0)
			t->scratch[n++] = (seed_tfevents_scalar){key, (float)json_number_value(val)};
	}
	return seed_tfevents_write(t, step, wall_time, t->scratch, n, err);
}
