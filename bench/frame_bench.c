/* bench/frame_bench.c: time to encode and decode typical frames.
 *
 *   bench/frame_bench [SECONDS]     (default 0.5 s per measurement)
 *
 * Frames: a step of 128 CartPole envs (obs f32[128,4]), a step of 128
 * MinAtar envs (obs u8[128,10,10,4]), and an unroll of B=128, T+1=21
 * CartPole steps (obs f32[128,21,4], logits f32[128,21,2]).  Encoding reuses
 * one output buffer, as a sender would; decoding includes validation.
 * Prints one line per frame and operation.  Built by `make check`, not run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/clock.h"
#include "seed/frame.h"
#include "seed/rng.h"

static void *random_bytes(size_t n, seed_rng *r)
{
	unsigned char *p = seed_xmalloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)seed_rng_below(r, 256);
	return p;
}

static void *random_floats(size_t n, seed_rng *r)
{
	float *p = seed_xmalloc(n * sizeof *p);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)seed_rng_normal(r);
	return p;
}

static void *zeros(size_t n)
{
	return seed_xcalloc(n, 1);
}

static void build_step(seed_frame *f, int64_t K, seed_tensor obs, seed_rng *r)
{
	int64_t k[1] = {K};
	seed_frame_init(f, SEED_FRAME_STEP);
	seed_frame_set_int(f, "run", 12345);
	seed_frame_set_int(f, "actor", 3);
	seed_frame_set_int(f, "seq", 1000);
	seed_frame_set_int(f, "env0", 0);
	seed_frame_set_int(f, "num_actions", 2);
	seed_frame_set_tensor(f, "obs", obs);
	seed_frame_set_tensor(f, "reward",
	                      seed_tensor_view(random_floats((size_t)K, r), SEED_DTYPE_F32, 1, k));
	seed_frame_set_tensor(f, "terminated", seed_tensor_view(zeros((size_t)K), SEED_DTYPE_U8, 1, k));
	seed_frame_set_tensor(f, "truncated", seed_tensor_view(zeros((size_t)K), SEED_DTYPE_U8, 1, k));
	seed_frame_set_tensor(f, "ep_return",
	                      seed_tensor_view(random_floats((size_t)K, r), SEED_DTYPE_F32, 1, k));
	seed_frame_set_tensor(f, "ep_length", seed_tensor_view(zeros((size_t)K * 4), SEED_DTYPE_I32, 1, k));
}

static void build_unroll(seed_frame *f, int64_t B, int64_t T1, int64_t A, seed_rng *r)
{
	int64_t b[1] = {B}, bt[2] = {B, T1}, obs[3] = {B, T1, 4}, lg[3] = {B, T1, A};
	size_t n = (size_t)(B * T1);
	seed_frame_init(f, SEED_FRAME_UNROLL);
	seed_frame_set_int(f, "run", 12345);
	seed_frame_set_int(f, "actor", 3);
	seed_frame_set_int(f, "num_actions", A);
	seed_frame_set_tensor(f, "env", seed_tensor_view(zeros((size_t)B * 4), SEED_DTYPE_I32, 1, b));
	seed_frame_set_tensor(f, "obs", seed_tensor_view(random_floats(n * 4, r), SEED_DTYPE_F32, 3, obs));
	seed_frame_set_tensor(f, "action", seed_tensor_view(zeros(n * 4), SEED_DTYPE_I32, 2, bt));
	seed_frame_set_tensor(f, "reward", seed_tensor_view(random_floats(n, r), SEED_DTYPE_F32, 2, bt));
	seed_frame_set_tensor(f, "terminated", seed_tensor_view(zeros(n), SEED_DTYPE_U8, 2, bt));
	seed_frame_set_tensor(f, "truncated", seed_tensor_view(zeros(n), SEED_DTYPE_U8, 2, bt));
	seed_frame_set_tensor(f, "final_value", seed_tensor_view(zeros(n * 4), SEED_DTYPE_F32, 2, bt));
	seed_frame_set_tensor(f, "policy_version", seed_tensor_view(zeros(n * 4), SEED_DTYPE_I32, 2, bt));
	seed_frame_set_tensor(f, "logits",
	                      seed_tensor_view(random_floats(n * (size_t)A, r), SEED_DTYPE_F32, 3, lg));
}

static void bench(const char *name, const seed_frame *f, double seconds)
{
	seed_buf out = {0};
	seed_err err;
	if (seed_frame_encode(f, &out, &err) != 0) {
		fprintf(stderr, "frame_bench: %s: %s\n", name, err.msg);
		exit(1);
	}
	size_t bytes = out.len;

	long n = 0;
	double t0 = seed_now_s(), t;
	do {
		for (int i = 0; i < 100; i++) {
			seed_buf_reset(&out);
			seed_frame_encode(f, &out, &err);
		}
		n += 100;
	} while ((t = seed_now_s() - t0) < seconds);
	double enc = t / (double)n;

	seed_frame g;
	long ok = 0;
	n = 0;
	t0 = seed_now_s();
	do {
		for (int i = 0; i < 100; i++)
			ok += seed_frame_decode(&g, out.data, out.len, &err) == 0;
		n += 100;
	} while ((t = seed_now_s() - t0) < seconds);
	double dec = t / (double)n;
	if (ok != n) {
		fprintf(stderr, "frame_bench: %s: decoding failed: %s\n", name, err.msg);
		exit(1);
	}
	printf("%-16s %7zu bytes  encode %7.2f us (%6.0f MB/s)  decode %7.2f us (%6.0f MB/s)  both %8.0f "
	       "frames/s\n",
	       name, bytes, enc * 1e6, (double)bytes / enc / 1e6, dec * 1e6, (double)bytes / dec / 1e6,
	       1.0 / (enc + dec));
	seed_buf_free(&out);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	if (!(seconds > 0)) {
		fprintf(stderr, "usage: frame_bench [SECONDS]\n");
		return 2;
	}
	seed_rng r;
	seed_rng_init(&r, 1, 0);
	seed_frame f;

	int64_t cp[2] = {128, 4};
	build_step(&f, 128, seed_tensor_view(random_floats(128 * 4, &r), SEED_DTYPE_F32, 2, cp), &r);
	bench("step K=128 f32", &f, seconds);

	int64_t ma[4] = {128, 10, 10, 4};
	build_step(&f, 128, seed_tensor_view(random_bytes(128 * 400, &r), SEED_DTYPE_U8, 4, ma), &r);
	bench("step K=128 u8", &f, seconds);

	build_unroll(&f, 128, 21, 2, &r);
	bench("unroll 128x21", &f, seconds);
	return 0;
}
