/* tests/fuzz/fuzz_stream.c: a libFuzzer target for recorded streams and JSON lines.
 *
 * The input is read twice, as seed-cat reads its inputs: as a recorded stream
 * (concatenated msgpack frames, from a file descriptor through
 * seed_frame_reader, each frame decoded by one kept seed_frame_decoder as the
 * programs do), and as JSON lines (seed-cat --encode: each line through
 * seed_frame_from_json).  Besides "no crash, no leak, no undefined
 * behaviour", it checks properties:
 *   - the reader hands out the input's own bytes, in order, without gaps: at
 *     the end of the stream the offset is the input's size; a refused stream
 *     gets a message, and the same one again on the next call (sticky);
 *   - a refused frame or line gets a message;
 *   - a decoded frame encodes, and decodes back to the same encoding; an
 *     action frame with just the schema's fields, in its order, encodes to
 *     the same bytes through seed_frame_encode_action (the server's hot
 *     path);
 *   - a line that parses encodes, and its frame prints as JSON that parses
 *     again to a frame that prints the same (JSON is a fixed point).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "seed/frame.h"

static seed_frame_decoder *decoder;

static bool is_plain_action(const seed_frame *f)
{
	/* the schema's order; the last two optional */
	static const char *const names[] = {"run",    "actor", "seq",       "env0", "policy_version",
	                                    "action", "reset", "reset_seed"};
	if (f->type != SEED_FRAME_ACTION || f->nfields < 6 || f->nfields > 8)
		return false;
	int k = 0;
	for (int i = 0; i < f->nfields; i++, k++) {
		if (k == 6 && f->nfields == 7 && seed_frame_tensor(f, "reset_seed"))
			k++; /* reset_seed without reset */
		if (f->fields[i].name_len != strlen(names[k]) ||
		    memcmp(f->fields[i].name, names[k], f->fields[i].name_len) != 0)
			return false;
	}
	return true;
}

/* f (decoded and valid) encodes; the encoding decodes and encodes again to
 * the same bytes. */
static void check_frame(const seed_frame *f)
{
	seed_buf m = {0}, again = {0};
	seed_err err;
	seed_frame back;
	REQUIRE(seed_frame_encode(f, &m, &err) == 0);
	REQUIRE(seed_frame_decoder_decode(decoder, &back, m.data, m.len, &err) == 0);
	REQUIRE(seed_frame_encode(&back, &again, &err) == 0);
	REQUIRE(again.len == m.len && memcmp(again.data, m.data, m.len) == 0);
	if (is_plain_action(f)) {
		const seed_tensor *a = seed_frame_tensor(f, "action");
		REQUIRE(a && a->dtype == SEED_DTYPE_I32 && a->rank == 1);
		/* Decoded tensor data may be unaligned: the hot path takes host
		 * int32s, so copy them. */
		int32_t *act = malloc((size_t)a->shape[0] * sizeof *act + 1);
		memcpy(act, a->data, (size_t)a->shape[0] * sizeof *act);
		const seed_tensor *rt = seed_frame_tensor(f, "reset");
		uint8_t *reset = rt ? malloc((size_t)rt->shape[0] + 1) : NULL;
		if (rt)
			memcpy(reset, rt->data, (size_t)rt->shape[0]);
		const seed_tensor *st = seed_frame_tensor(f, "reset_seed");
		int64_t *seeds = st ? malloc(8 * (size_t)st->shape[0] + 1) : NULL;
		if (st)
			memcpy(seeds, st->data, 8 * (size_t)st->shape[0]);
		seed_buf fast = {0};
		REQUIRE(seed_frame_encode_action(
		            &fast, (uint32_t)seed_frame_int(f, "run", -1),
		            (uint32_t)seed_frame_int(f, "actor", -1), seed_frame_int(f, "seq", -1),
		            (int32_t)seed_frame_int(f, "env0", -1), seed_frame_int(f, "policy_version", -1),
		            act, reset, seeds, a->shape[0], &err) == 0);
		REQUIRE(fast.len == m.len && memcmp(fast.data, m.data, m.len) == 0);
		seed_buf_free(&fast);
		free(act);
		free(reset);
		free(seeds);
	}
	seed_buf_free(&m);
	seed_buf_free(&again);
}

static void read_stream(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-stream", 0);
	REQUIRE(fd >= 0);
	for (size_t done = 0; done < size;) {
		ssize_t w = write(fd, data + done, size - done);
		REQUIRE(w > 0);
		done += (size_t)w;
	}
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
	seed_frame_reader *r;
	REQUIRE(seed_frame_reader_new(&r, fd) == 0);
	uint64_t at = 0;
	/* Any byte below 0x80 is a whole msgpack object: a cap on the frames
	 * looked at keeps an input of 2 KiB from being 2,000 refused frames. */
	for (int nframes = 0; nframes < 64; nframes++) {
		const void *frame;
		size_t len;
		seed_err err;
		err.msg[0] = '\0';
		int rc = seed_frame_reader_next(r, &frame, &len, &err);
		if (rc == -SEED_EEOF) {
			REQUIRE(at == size);
			break;
		}
		if (rc < 0) {
			REQUIRE(rc == -SEED_EFRAME);
			REQUIRE_MESSAGE(err);
			seed_err again;
			REQUIRE(seed_frame_reader_next(r, &frame, &len, &again) == rc);
			REQUIRE(strcmp(again.msg, err.msg) == 0);
			break;
		}
		REQUIRE(len > 0 && at + len <= size && memcmp(frame, data + at, len) == 0);
		at += len;
		REQUIRE(seed_frame_reader_offset(r) == at);
		seed_frame f;
		err.msg[0] = '\0';
		if (seed_frame_decoder_decode(decoder, &f, frame, len, &err) == 0)
			check_frame(&f);
		else
			REQUIRE_MESSAGE(err);
	}
	seed_frame_reader_free(&r);
	close(fd);
}

/* One line of JSON, as seed-cat --encode takes it. */
static void read_line(const char *line, size_t n)
{
	seed_frame f, g;
	seed_err err;
	err.msg[0] = '\0';
	if (seed_frame_from_json(&f, line, n, &err) != 0) {
		REQUIRE_MESSAGE(err);
		return;
	}
	seed_buf m = {0}, js = {0}, js2 = {0};
	REQUIRE(seed_frame_encode(&f, &m, &err) == 0);
	if (seed_frame_to_json(&f, &js, &err) == 0) {
		REQUIRE(seed_frame_from_json(&g, (const char *)js.data, js.len, &err) == 0);
		REQUIRE(seed_frame_to_json(&g, &js2, &err) == 0);
		REQUIRE(js2.len == js.len && memcmp(js2.data, js.data, js.len) == 0);
		seed_frame_clear(&g);
	} else {
		/* Only what JSON cannot write: a non-finite float field. */
		REQUIRE_MESSAGE(err);
	}
	seed_buf_free(&m);
	seed_buf_free(&js);
	seed_buf_free(&js2);
	seed_frame_clear(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!decoder)
		REQUIRE(seed_frame_decoder_new(&decoder) == 0);
	read_stream(data, size);
	const char *text = (const char *)data;
	for (size_t at = 0; at < size;) {
		const char *nl = memchr(text + at, '\n', size - at);
		size_t n = nl ? (size_t)(nl - (text + at)) + 1 : size - at;
		size_t blank = 0; /* seed-cat skips blank lines */
		while (blank < n && strchr(" \t\r\n", text[at + blank]) && text[at + blank])
			blank++;
		if (blank < n)
			read_line(text + at, n);
		at += n;
	}
	return 0;
}
