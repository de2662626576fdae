/* test_batcher.c: seed_batcher, a table of readiness cases worked by hand,
 * then the gathering of rows and final observations, refusals, and reuse
 * of the buffers after a clear. */
#include "seed/batcher.h"

#include <errno.h>
#include <string.h>

#include "tap.h"

/* max_rows 8, timeout 0.5 s, a batch opened at t = 1 with `rows` rows. */
static const struct {
	const char *name;
	int rows;
	double now;
	size_t expected;
	bool ready;
} rcases[] = {
    {"empty batch is never ready", 0, 9.0, 0, false},
    {"room left, before the deadline, others expected", 3, 1.2, 2, false},
    {"full: 8 rows", 8, 1.0, 5, true},
    {"past full: 9 rows", 9, 1.0, 5, true},
    {"deadline reached exactly", 3, 1.5, 5, true},
    {"nobody else expected", 3, 1.0, 0, true},
};

static void t_ready(void)
{
	for (size_t k = 0; k < sizeof rcases / sizeof rcases[0]; k++) {
		seed_batcher *b = NULL;
		seed_err err;
		CHECK(seed_batcher_new(&b, 8, 0.5, &err) == 0);
		if (rcases[k].rows)
			CHECK(seed_batcher_add(b, NULL, "i", 1, rcases[k].rows, NULL, 0, 1.0) == 0);
		CHECK_MSG(seed_batcher_ready(b, rcases[k].now, rcases[k].expected) == rcases[k].ready, "%s",
		          rcases[k].name);
		seed_batcher_free(&b);
		CHECK(b == NULL);
	}
}

/* Three requests of 2, 1 and 3 rows of 2-byte observations: rows in order,
 * row0 0, 2, 3; ids kept; finals listed with their request and row. */
static void t_gather(void)
{
	seed_batcher *b = NULL;
	seed_err err;
	CHECK(seed_batcher_new(&b, 100, 0.001, &err) == 0);
	int owners[3];
	const unsigned char o0[4] = {1, 2, 3, 4}, o1[2] = {5, 6}, o2[6] = {7, 8, 9, 10, 11, 12};
	CHECK(seed_batcher_add(b, &owners[0], "aa", 2, 2, o0, 2, 10.0) == 0);
	CHECK(seed_batcher_add(b, &owners[1], "b", 1, 1, o1, 2, 10.2) == 1);
	CHECK(seed_batcher_add(b, &owners[2], "ccc", 3, 3, o2, 2, 10.3) == 2);
	CHECK(b->deadline == 10.0 + 0.001);
	CHECK(b->n == 3 && b->rows == 6);
	CHECK(b->req[0].row0 == 0 && b->req[1].row0 == 2 && b->req[2].row0 == 3);
	CHECK(b->req[1].owner == &owners[1] && b->req[2].idlen == 3 && memcmp(b->req[2].id, "ccc", 3) == 0);
	static const unsigned char want[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
	CHECK(memcmp(b->obs, want, 12) == 0);
	/* Rows of another size, a too-long id, no rows: refused, nothing added. */
	CHECK(seed_batcher_add(b, NULL, "d", 1, 1, o0, 4, 10.4) == -EINVAL);
	unsigned char longid[SEED_BATCHER_MAX_ID + 1] = {0};
	CHECK(seed_batcher_add(b, NULL, longid, sizeof longid, 1, o1, 2, 10.4) == -EINVAL);
	CHECK(seed_batcher_add(b, NULL, "d", 1, 0, o1, 2, 10.4) == -EINVAL);
	CHECK(b->n == 3 && b->rows == 6);
	const unsigned char f[2] = {42, 43};
	seed_batcher_add_final(b, 2, 1, f);
	seed_batcher_add_final(b, 0, 0, o1);
	CHECK(b->nfinal == 2 && b->final_req[0] == 2 && b->final_row[0] == 1 && b->final_req[1] == 0);
	CHECK(b->final_obs[0] == 42 && b->final_obs[1] == 43 && b->final_obs[2] == 5);
	/* Cleared: a new batch opens with the next request, buffers reused. */
	const unsigned char *obs_before = b->obs;
	seed_batcher_clear(b);
	CHECK(b->n == 0 && b->rows == 0 && b->nfinal == 0 && !seed_batcher_ready(b, 99, 0));
	CHECK(seed_batcher_add(b, NULL, "e", 1, 1, f, 2, 20.0) == 0);
	CHECK(b->deadline == 20.0 + 0.001 && b->obs == obs_before && b->obs[0] == 42);
	/* Without observations (random play) any request joins. */
	seed_batcher_clear(b);
	CHECK(seed_batcher_add(b, NULL, "e", 1, 2, NULL, 0, 21.0) == 0);
	CHECK(seed_batcher_add(b, NULL, "f", 1, 5, NULL, 0, 21.0) == 1);
	CHECK(b->rows == 7 && b->row_bytes == 0);
	seed_batcher_free(&b);
	seed_batcher_free(&b);
}

/* 1000 requests of 64 rows of 100 bytes: the buffers grow, contents stay. */
static void t_grow(void)
{
	seed_batcher *b = NULL;
	seed_err err;
	CHECK(seed_batcher_new(&b, 1 << 30, 1, &err) == 0);
	static unsigned char rows[64 * 100];
	for (int i = 0; i < 1000; i++) {
		memset(rows, i & 0xff, sizeof rows);
		CHECK(seed_batcher_add(b, NULL, "x", 1, 64, rows, 100, 0) == i);
	}
	int bad = 0;
	for (int i = 0; i < 1000; i++)
		bad += b->obs[(size_t)i * 6400 + 6399] != (unsigned char)(i & 0xff);
	CHECK(bad == 0 && b->rows == 64000);
	seed_batcher_free(&b);
}

static void t_options(void)
{
	seed_batcher *b = NULL;
	seed_err err;
	CHECK(seed_batcher_new(&b, 0, 1, &err) == -EINVAL && !b);
	CHECK(seed_batcher_new(&b, 1, -1, &err) == -EINVAL && !b);
	CHECK(seed_batcher_new(&b, 1, 1.0 / 0.0, &err) == -EINVAL && !b);
	CHECK(seed_batcher_new(&b, 1, 0, &err) == 0 && b);
	seed_batcher_free(&b);
}

int main(void)
{
	TAP_RUN(t_ready);
	TAP_RUN(t_gather);
	TAP_RUN(t_grow);
	TAP_RUN(t_options);
	return tap_done();
}
