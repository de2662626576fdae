/* frame_json.c: frames as one line of JSON each, and back.
 *
 * Writing is done by hand rather than through jansson's tree: a tensor of
 * ten thousand floats would otherwise cost ten thousand allocations, and the
 * number format matters.  Every float is written with the fewest significant
 * digits that read back (through strtod, as jansson, Python and jq read
 * them) to the same float or double, so the round trip frame -> JSON ->
 * frame is exact and the text stays short (0.1, not 0.100000001).
 * Non-finite tensor elements become the strings "nan", "-nan", "inf",
 * "-inf"; a non-finite scalar float field has no JSON form and is refused
 * (a string there would read back as a str field).  Scalar floats always
 * carry a '.' or an exponent so they read back as floats, not ints.
 *
 * Numbers are formatted with snprintf in the C locale (Seed programs do not
 * set LC_NUMERIC).
 *
 * Reading goes through jansson (duplicate keys refused, NUL bytes in
 * strings allowed); the frame then owns copies of names, strings and tensor
 * data in its storage.
 */
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_internal.h"
#include "seed/frame.h"

/* ---- writing ------------------------------------------------------------- */

static void put(seed_buf *b, const char *s, size_t n)
{
	seed_buf_append(b, s, n);
}

static void puts_(seed_buf *b, const char *s)
{
	seed_buf_append(b, s, strlen(s));
}

/* Length of the UTF-8 sequence at p (at most n bytes), or 0 if it is not
 * one (overlong forms, surrogates and code points past U+10FFFF refused, as
 * jansson does). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t len;
	unsigned cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Write s as a JSON string; -1 if it is not UTF-8 (or, for a name, holds a
 * NUL byte, which jansson cannot read back in a key). */
static int put_string(seed_buf *b, const char *s, size_t n, bool name)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	put(b, "\"", 1);
	size_t i = 0;
	while (i < n) {
		size_t run = i;
		/* Copy plain bytes in runs. */
		while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
			run++;
		if (run > i) {
			put(b, s + i, run - i);
			i = run;
			continue;
		}
		unsigned char c = p[i];
		if (c >= 0x80) {
			size_t len = utf8_len(p + i, n - i);
			if (!len)
				return -1;
			put(b, s + i, len);
			i += len;
			continue;
		}
		char e[6] = {'\\', 0};
		switch (c) {
		case '"':
			e[1] = '"';
			break;
		case '\\':
			e[1] = '\\';
			break;
		case '\n':
			e[1] = 'n';
			break;
		case '\t':
			e[1] = 't';
			break;
		case '\r':
			e[1] = 'r';
			break;
		case '\b':
			e[1] = 'b';
			break;
		case '\f':
			e[1] = 'f';
			break;
		default:
			if (c == 0 && name)
				return -1;
			e[1] = 'u', e[2] = '0', e[3] = '0', e[4] = hex[c >> 4], e[5] = hex[c & 15];
			put(b, e, 6);
			i++;
			continue;
		}
		put(b, e, 2);
		i++;
	}
	put(b, "\"", 1);
	return 0;
}

/* The shortest "%.*g" form of v (at least `from` digits) that strtod reads
 * back to v itself (f32: to a double that rounds to v). */
static int fmt_shortest(char *buf, size_t size, double v, bool f32)
{
	int from, to;
	if (f32) {
		from = fabs(v) < FLT_MIN ? 1 : FLT_DIG; /* subnormals have fewer digits */
		to = 9;
	} else {
		from = fabs(v) < DBL_MIN ? 1 : DBL_DIG;
		to = 17;
	}
	int n = 0;
	for (int p = from; p <= to; p++) {
		n = snprintf(buf, size, "%.*g", p, v);
		double back = strtod(buf, NULL);
		if (f32 ? (float)back == (float)v : back == v)
			return n;
	}
	/* A double that rounds to the float v in one step, whatever a reader
	 * does with the text. */
	return snprintf(buf, size, "%.17g", v);
}

/* A tensor element: finite numbers as numbers, the rest as strings. */
static void put_float(seed_buf *b, double v, bool f32)
{
	char buf[40];
	int n;
	if (isnan(v)) {
		puts_(b, signbit(v) ? "\"-nan\"" : "\"nan\"");
		return;
	}
	if (isinf(v)) {
		puts_(b, v < 0 ? "\"-inf\"" : "\"inf\"");
		return;
	}
	if (v == 0 && signbit(v)) {
		/* "-0" would read back as the integer 0. */
		puts_(b, "-0.0");
		return;
	}
	if (v == trunc(v) && fabs(v) < (f32 ? 16777216.0 : 9007199254740992.0))
		n = snprintf(buf, sizeof buf, "%lld", (long long)v);
	else
		n = fmt_shortest(buf, sizeof buf, v, f32);
	put(b, buf, (size_t)n);
}

static void put_int(seed_buf *b, long long v)
{
	char buf[24];
	int n = snprintf(buf, sizeof buf, "%lld", v);
	put(b, buf, (size_t)n);
}

/* Elements [*idx, ...) of t for dimensions dim.. as nested lists. */
static void put_elements(seed_buf *b, const seed_tensor *t, int dim, size_t *idx)
{
	if (dim == t->rank) {
		const unsigned char *p = (const unsigned char *)t->data + *idx * seed_dtype_size(t->dtype);
		(*idx)++;
		switch (t->dtype) {
		case SEED_DTYPE_U8:
			put_int(b, *p);
			break;
		case SEED_DTYPE_I8:
			put_int(b, (int8_t)*p);
			break;
		case SEED_DTYPE_I32: {
			int32_t v;
			memcpy(&v, p, 4);
			put_int(b, v);
			break;
		}
		case SEED_DTYPE_I64: {
			int64_t v;
			memcpy(&v, p, 8);
			put_int(b, v);
			break;
		}
		case SEED_DTYPE_F32: {
			float v;
			memcpy(&v, p, 4);
			put_float(b, v, true);
			break;
		}
		case SEED_DTYPE_F64: {
			double v;
			memcpy(&v, p, 8);
			put_float(b, v, false);
			break;
		}
		default:
			break;
		}
		return;
	}
	put(b, "[", 1);
	for (int64_t i = 0; i < t->shape[dim]; i++) {
		if (i)
			put(b, ",", 1);
		put_elements(b, t, dim + 1, idx);
	}
	put(b, "]", 1);
}

int seed_frame_to_json(const seed_frame *f, seed_buf *out, seed_err *err)
{
	int rc = seed_frame_validate(f, err);
	if (rc < 0)
		return rc;
	size_t start = out->len;
	char buf[40];
	puts_(out, "{\"type\":\"");
	puts_(out, seed_frame_type_name(f->type));
	puts_(out, "\",\"version\":");
	put_int(out, f->version);
	for (int i = 0; i < f->nfields; i++) {
		const seed_field *fd = &f->fields[i];
		const seed_value *v = &fd->value;
		put(out, ",", 1);
		if (put_string(out, fd->name, fd->name_len, true) < 0) {
			rc = frame_err(err, -SEED_EFRAME, f->type, fd->name, fd->name_len,
			               "the name is not UTF-8 or holds a NUL byte: no JSON form");
			goto fail;
		}
		put(out, ":", 1);
		switch (v->kind) {
		case SEED_VALUE_NIL:
			puts_(out, "null");
			break;
		case SEED_VALUE_BOOL:
			puts_(out, v->u.b ? "true" : "false");
			break;
		case SEED_VALUE_INT:
			put_int(out, v->u.i);
			break;
		case SEED_VALUE_FLOAT: {
			if (!isfinite(v->u.f)) {
				rc = frame_err(err, -SEED_EFRAME, f->type, fd->name, fd->name_len,
				               "float %g has no JSON form", v->u.f);
				goto fail;
			}
			int n = v->u.f == 0
			            ? snprintf(buf, sizeof buf, "%s", signbit(v->u.f) ? "-0.0" : "0.0")
			            : fmt_shortest(buf, sizeof buf, v->u.f, false);
			put(out, buf, (size_t)n);
			if (!strpbrk(buf, ".e"))
				put(out, ".0", 2);
			break;
		}
		case SEED_VALUE_STR:
			if (put_string(out, v->u.str.ptr, v->u.str.len, false) < 0) {
				rc = frame_err(err, -SEED_EFRAME, f->type, fd->name, fd->name_len,
				               "the string is not UTF-8: no JSON form");
				goto fail;
			}
			break;
		case SEED_VALUE_TENSOR: {
			const seed_tensor *t = &v->u.tensor;
			size_t idx = 0;
			puts_(out, "{\"dtype\":\"");
			puts_(out, seed_dtype_name(t->dtype));
			puts_(out, "\",\"shape\":[");
			for (int d = 0; d < t->rank; d++) {
				if (d)
					put(out, ",", 1);
				put_int(out, t->shape[d]);
			}
			puts_(out, "],\"data\":");
			/* A tensor without elements prints as [] whatever its shape:
			 * nesting empty lists for a shape like [2^62, 0] would never
			 * end (found by the fuzzer).  The shape says the rest. */
			if (seed_tensor_numel(t) == 0 && t->rank > 0)
				puts_(out, "[]");
			else
				put_elements(out, t, 0, &idx);
			put(out, "}", 1);
			break;
		}
		}
	}
	put(out, "}", 1);
	return 0;
fail:
	out->len = start;
	return rc;
}

/* ---- reading ------------------------------------------------------------- */

static const char *json_kind(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a bool";
	case JSON_NULL:
		return "null";
	}
	return "unknown";
}

struct fill {
	seed_frame_type type;
	const char *name;
	size_t nl;
	const seed_tensor *t;
	unsigned char *out;
	size_t esize;
	size_t idx; /* next element */
	seed_err *err;
};

static int element(struct fill *c, const json_t *j)
{
	unsigned char *p = c->out + c->idx * c->esize;
	seed_dtype dt = c->t->dtype;
	if (dt == SEED_DTYPE_F32 || dt == SEED_DTYPE_F64) {
		double v;
		if (json_is_integer(j) && dt == SEED_DTYPE_F32) {
			/* Straight from the integer: one rounding, not two. */
			float x = (float)json_integer_value(j);
			memcpy(p, &x, 4);
			c->idx++;
			return 0;
		} else if (json_is_number(j)) {
			v = json_number_value(j);
		} else if (json_is_string(j)) {
			const char *s = json_string_value(j);
			if (strcmp(s, "nan") == 0)
				v = NAN;
			else if (strcmp(s, "-nan") == 0)
				v = -NAN;
			else if (strcmp(s, "inf") == 0)
				v = INFINITY;
			else if (strcmp(s, "-inf") == 0)
				v = -INFINITY;
			else
				return frame_err(
				    c->err, -SEED_EFRAME, c->type, c->name, c->nl,
				    "data element %zu is a string other than nan, -nan, inf, -inf", c->idx);
		} else {
			return frame_err(c->err, -SEED_EFRAME, c->type, c->name, c->nl,
			                 "data element %zu is %s, expected a number", c->idx, json_kind(j));
		}
		if (dt == SEED_DTYPE_F32) {
			float x = (float)v;
			memcpy(p, &x, 4);
		} else {
			memcpy(p, &v, 8);
		}
		c->idx++;
		return 0;
	}
	if (!json_is_integer(j))
		return frame_err(c->err, -SEED_EFRAME, c->type, c->name, c->nl,
		                 "data element %zu is %s, expected an integer (dtype %s)", c->idx,
		                 json_kind(j), seed_dtype_name(dt));
	json_int_t v = json_integer_value(j);
	json_int_t lo = dt == SEED_DTYPE_U8    ? 0
	                : dt == SEED_DTYPE_I8  ? -128
	                : dt == SEED_DTYPE_I32 ? INT32_MIN
	                                       : INT64_MIN;
	json_int_t hi = dt == SEED_DTYPE_U8    ? 255
	                : dt == SEED_DTYPE_I8  ? 127
	                : dt == SEED_DTYPE_I32 ? INT32_MAX
	                                       : INT64_MAX;
	if (v < lo || v > hi)
		return frame_err(c->err, -SEED_EFRAME, c->type, c->name, c->nl,
		                 "data element %zu (%lld) out of range for %s", c->idx, (long long)v,
		                 seed_dtype_name(dt));
	switch (dt) {
	case SEED_DTYPE_U8:
	case SEED_DTYPE_I8:
		*p = (unsigned char)(v & 0xff);
		break;
	case SEED_DTYPE_I32: {
		int32_t x = (int32_t)v;
		memcpy(p, &x, 4);
		break;
	}
	default: {
		int64_t x = v;
		memcpy(p, &x, 8);
		break;
	}
	}
	c->idx++;
	return 0;
}

static int nested(struct fill *c, const json_t *j, int dim)
{
	if (dim == c->t->rank)
		return element(c, j);
	if (!json_is_array(j) || (int64_t)json_array_size(j) != c->t->shape[dim])
		return frame_err(
		    c->err, -SEED_EFRAME, c->type, c->name, c->nl,
		    "data does not match the shape: at element %zu, dimension %d wants a list of %lld, "
		    "got %s",
		    c->idx, dim, (long long)c->t->shape[dim], json_kind(j));
	for (size_t i = 0; i < json_array_size(j); i++) {
		int rc = nested(c, json_array_get(j, i), dim + 1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int tensor_from_json(seed_frame *f, seed_tensor *t, const json_t *o, const char *name, seed_err *err)
{
	size_t nl = strlen(name);
	const char *key;
	json_t *v;
	char q[FRAME_QUOTE_MAX];
	json_object_foreach((json_t *)o, key, v)
	{
		if (strcmp(key, "dtype") && strcmp(key, "shape") && strcmp(key, "data"))
			return frame_err(err, -SEED_EFRAME, f->type, name, nl, "unknown tensor key '%s'",
			                 frame_quote(q, key, strlen(key)));
	}
	const json_t *dtype = json_object_get(o, "dtype"), *shape = json_object_get(o, "shape"),
	             *data = json_object_get(o, "data");
	if (!dtype || !shape || !data)
		return frame_err(err, -SEED_EFRAME, f->type, name, nl,
		                 "a tensor needs dtype, shape and data");
	if (!json_is_string(dtype))
		return frame_err(err, -SEED_EFRAME, f->type, name, nl, "dtype is %s, expected a string",
		                 json_kind(dtype));
	t->dtype = seed_dtype_parse(json_string_value(dtype), json_string_length(dtype));
	if (t->dtype == SEED_DTYPE_INVALID)
		return frame_err(err, -SEED_EFRAME, f->type, name, nl, "dtype '%s' unknown",
		                 frame_quote(q, json_string_value(dtype), json_string_length(dtype)));
	if (!json_is_array(shape))
		return frame_err(err, -SEED_EFRAME, f->type, name, nl,
		                 "shape is %s, expected a list of integers", json_kind(shape));
	if (json_array_size(shape) > SEED_TENSOR_MAX_RANK)
		return frame_err(err, -SEED_EFRAME, f->type, name, nl, "shape of rank %zu, at most %d",
		                 json_array_size(shape), SEED_TENSOR_MAX_RANK);
	t->rank = (int)json_array_size(shape);
	for (int i = 0; i < t->rank; i++) {
		const json_t *d = json_array_get(shape, (size_t)i);
		if (!json_is_integer(d))
			return frame_err(err, -SEED_EFRAME, f->type, name, nl,
			                 "dimension %d is %s, expected an integer", i, json_kind(d));
		t->shape[i] = json_integer_value(d);
	}
	size_t nbytes;
	int rc = frame_check_tensor(t, &nbytes, f->type, name, nl, err);
	if (rc < 0)
		return rc;
	int64_t numel = seed_tensor_numel(t);
	t->data = frame_alloc(f, nbytes);
	struct fill c = {f->type, name, nl, t, t->data, seed_dtype_size(t->dtype), 0, err};
	if (t->rank == 0 && !json_is_array(data))
		return element(&c, data);
	if (!json_is_array(data))
		return frame_err(err, -SEED_EFRAME, f->type, name, nl, "data is %s, expected a list",
		                 json_kind(data));
	size_t n = json_array_size(data);
	bool flat = t->rank <= 1 || n == 0 || !json_is_array(json_array_get(data, 0));
	if (!flat)
		return nested(&c, data, 0);
	if ((int64_t)n != numel)
		return frame_err(err, -SEED_EFRAME, f->type, name, nl,
		                 "data has %zu elements, the shape needs %lld", n, (long long)numel);
	for (size_t i = 0; i < n; i++) {
		rc = element(&c, json_array_get(data, i));
		if (rc < 0)
			return rc;
	}
	return 0;
}

static char *copy(seed_frame *f, const char *s, size_t n)
{
	char *p = frame_alloc(f, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static int from_json(seed_frame *f, const json_t *root, seed_err *err)
{
	char q[FRAME_QUOTE_MAX];
	if (!json_is_object(root))
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, NULL, 0,
		                 "JSON is %s, expected an object", json_kind(root));
	const json_t *type = json_object_get(root, "type"), *version = json_object_get(root, "version");
	if (!type)
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, "type", 4, "missing");
	if (!json_is_string(type))
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, "type", 4, "%s, expected a string",
		                 json_kind(type));
	seed_frame_type t = seed_frame_type_parse(json_string_value(type), json_string_length(type));
	if (!version)
		return frame_err(err, -SEED_EFRAME, t, "version", 7, "missing");
	if (!json_is_integer(version))
		return frame_err(err, -SEED_EFRAME, t, "version", 7, "%s, expected an integer",
		                 json_kind(version));
	if (json_integer_value(version) != SEED_PROTOCOL_VERSION)
		return frame_err(err, -SEED_EVERSION, t, "version", 7,
		                 "version %lld not supported (this build speaks version %d)",
		                 (long long)json_integer_value(version), SEED_PROTOCOL_VERSION);
	if (t == SEED_FRAME_INVALID)
		return frame_err(err, -SEED_ETYPE, SEED_FRAME_INVALID, "type", 4, "unknown frame type '%s'",
		                 frame_quote(q, json_string_value(type), json_string_length(type)));
	if (json_object_size(root) - 2 > SEED_FRAME_MAX_FIELDS)
		return frame_err(err, -SEED_EFRAME, t, NULL, 0,
		                 "%zu fields, at most %d besides type and version",
		                 json_object_size(root) - 2, SEED_FRAME_MAX_FIELDS);
	f->type = t;
	f->version = SEED_PROTOCOL_VERSION;

	const char *key;
	json_t *v;
	json_object_foreach((json_t *)root, key, v)
	{
		if (strcmp(key, "type") == 0 || strcmp(key, "version") == 0)
			continue;
		seed_field *fd = &f->fields[f->nfields];
		fd->name_len = strlen(key);
		fd->name = copy(f, key, fd->name_len);
		seed_value *val = &fd->value;
		switch (json_typeof(v)) {
		case JSON_NULL:
			val->kind = SEED_VALUE_NIL;
			break;
		case JSON_TRUE:
		case JSON_FALSE:
			val->kind = SEED_VALUE_BOOL;
			val->u.b = json_is_true(v);
			break;
		case JSON_INTEGER:
			val->kind = SEED_VALUE_INT;
			val->u.i = json_integer_value(v);
			break;
		case JSON_REAL:
			val->kind = SEED_VALUE_FLOAT;
			val->u.f = json_real_value(v);
			break;
		case JSON_STRING:
			val->kind = SEED_VALUE_STR;
			val->u.str.len = json_string_length(v);
			val->u.str.ptr = copy(f, json_string_value(v), val->u.str.len);
			break;
		case JSON_OBJECT: {
			val->kind = SEED_VALUE_TENSOR;
			int rc = tensor_from_json(f, &val->u.tensor, v, fd->name, err);
			if (rc < 0)
				return rc;
			break;
		}
		case JSON_ARRAY:
			return frame_err(err, -SEED_EFRAME, t, fd->name, fd->name_len,
			                 "lists are not allowed (nil, bool, int, float, str or tensor)");
		}
		f->nfields++;
	}
	return seed_frame_validate(f, err);
}

int seed_frame_from_json(seed_frame *f, const char *json, size_t len, seed_err *err)
{
	f->type = SEED_FRAME_INVALID;
	f->version = 0;
	f->nfields = 0;
	f->storage = NULL;
	json_error_t je;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (!root)
		return frame_err(err, -SEED_EFRAME, SEED_FRAME_INVALID, NULL, 0,
		                 "bad JSON at line %d, column %d: %s", je.line, je.column, je.text);
	int rc = from_json(f, root, err);
	json_decref(root);
	if (rc < 0)
		seed_frame_clear(f);
	return rc;
}
