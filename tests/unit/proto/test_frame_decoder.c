/* tests/unit/proto/test_frame_decoder.c: seed_frame_decoder, the decoder of hot paths.
 *
 * It must read every frame as seed_frame_decode does (the golden frames of
 * Python's msgpack, tests/golden/golden_frames.h, and their bad frames with the
 * same codes and messages), and, once made, allocate nothing: this test
 * counts the process's malloc/calloc/realloc calls (glibc: its own
 * definitions forward to __libc_*) around a thousand decodes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/frame.h"
#include "tap.h"

#include "alloc_count.h"
#include "golden_frames.h"

/* ---- the same frames as seed_frame_decode ---------------------------------------- */

static char *json_of(const seed_frame *f)
{
	seed_buf b = {0};
	seed_err err;
	if (seed_frame_to_json(f, &b, &err) != 0)
		return NULL;
	seed_buf_append(&b, "", 1);
	return (char *)b.data;
}

static void t_same_frames_as_decode(void)
{
	seed_frame_decoder *d;
	CHECK(seed_frame_decoder_new(&d) == 0);
	for (int round = 0; round < 2; round++) /* the second reuses the zone */
		for (size_t i = 0; i < sizeof golden_frames / sizeof golden_frames[0]; i++) {
			const struct golden_frame *g = &golden_frames[i];
			seed_frame a, b;
			seed_err ea, eb;
			CHECK_MSG(seed_frame_decode(&a, g->bytes, g->len, &ea) == 0, "%s: %s", g->name,
			          ea.msg);
			CHECK_MSG(seed_frame_decoder_decode(d, &b, g->bytes, g->len, &eb) == 0, "%s: %s",
			          g->name, eb.msg);
			CHECK(a.type == b.type && a.nfields == b.nfields && b.nfields == g->nfields);
			char *ja = json_of(&a), *jb = json_of(&b);
			CHECK_MSG(ja && jb && strcmp(ja, jb) == 0, "%s", g->name);
			free(ja);
			free(jb);
		}
	seed_frame_decoder_free(&d);
	CHECK(d == NULL);
	seed_frame_decoder_free(&d);
	seed_frame_decoder_free(NULL);
}

static void t_same_errors_as_decode(void)
{
	seed_frame_decoder *d;
	CHECK(seed_frame_decoder_new(&d) == 0);
	for (size_t i = 0; i < sizeof golden_bad / sizeof golden_bad[0]; i++) {
		const struct golden_bad *g = &golden_bad[i];
		seed_frame a, b;
		seed_err ea = {""}, eb = {""};
		int ra = seed_frame_decode(&a, g->bytes, g->len, &ea);
		int rb = seed_frame_decoder_decode(d, &b, g->bytes, g->len, &eb);
		CHECK_MSG(ra == g->code && rb == g->code, "%s: %d and %d, want %d", g->name, ra, rb, g->code);
		CHECK_MSG(strcmp(ea.msg, eb.msg) == 0, "%s: '%s' and '%s'", g->name, ea.msg, eb.msg);
		/* A good frame after a bad one decodes as well. */
		CHECK(seed_frame_decoder_decode(d, &b, golden_frames[0].bytes, golden_frames[0].len, &eb) ==
		      0);
	}
	seed_frame_decoder_free(&d);
}

static void t_no_allocation_per_frame(void)
{
#if COUNT_ALLOCATIONS
	const char *preload = getenv("LD_PRELOAD");
	if (preload && strstr(preload, "vgpreload")) {
		printf("# under valgrind, which owns malloc: not counted\n");
		return;
	}
	seed_frame_decoder *d;
	CHECK(seed_frame_decoder_new(&d) == 0);
	seed_frame f;
	seed_err err;
	long before = alloc_count;
	alloc_counting = true;
	int bad = 0;
	for (int n = 0; n < 1000; n++)
		for (size_t i = 0; i < sizeof golden_frames / sizeof golden_frames[0]; i++)
			bad += seed_frame_decoder_decode(d, &f, golden_frames[i].bytes, golden_frames[i].len,
			                                 &err) != 0;
	alloc_counting = false;
	long with_decoder = alloc_count - before;
	/* The counter itself works: seed_frame_decode makes a zone each time. */
	before = alloc_count;
	alloc_counting = true;
	for (size_t i = 0; i < sizeof golden_frames / sizeof golden_frames[0]; i++)
		bad += seed_frame_decode(&f, golden_frames[i].bytes, golden_frames[i].len, &err) != 0;
	alloc_counting = false;
	long plain = alloc_count - before;
	CHECK(bad == 0);
	CHECK_MSG(with_decoder == 0, "%ld allocations in %zu decodes", with_decoder,
	          1000 * (sizeof golden_frames / sizeof golden_frames[0]));
	CHECK_MSG(plain > 0, "seed_frame_decode: %ld alloc_count", plain);
	seed_frame_decoder_free(&d);
#else
	printf("# not glibc, or a sanitizer owns malloc: allocations not counted\n");
#endif
}

int main(void)
{
	TAP_RUN(t_same_frames_as_decode);
	TAP_RUN(t_same_errors_as_decode);
	TAP_RUN(t_no_allocation_per_frame);
	return tap_done();
}
