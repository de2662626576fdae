/* nn_bench.c: speed of the neural-network kernels (not a test).
 *
 *   bench/nn_bench [--threads N] [--repeats R] [--models] [--nature] [--cpu-time]
 *
 * Prints, as markdown tables: sgemm GFLOP/s for the shapes the models use
 * (through seed_blas_sgemm, so with whatever BLAS kernel this process got),
 * the element-wise kernels (reference vs SIMD), the conv2d forward and
 * weight gradient as im2col + sgemm and as the direct kernels the model
 * uses, the MinAtar network's linear layer by sgemm and by the kernels,
 * and model throughput in rows/s for forward and
 * forward+backward of the CartPole MLP and the MinAtar network at batch
 * sizes of the inference server (32: a few actor requests; up to 256) and
 * of the learner (176: the MinAtar presets' 16 unrolls of 10 steps plus the
 * bootstrap row; 640), on random bits (half set) and on real Breakout and
 * Seaquest observations (about a tenth set), and of the Nature DQN network
 * (examples/models/nature-dqn.json: three strided convolutions on
 * u8[84,84,4] Atari frames, 18 actions, random bits) at batches of 32
 * (inference), 128 and 512 (a learner's); --nature adds 160, the rows
 * atari-pong's learner passes forward and backward (8 unrolls of 20).  --models prints only the
 * model table, --nature only its Nature DQN rows, after a table of the
 * Nature network's three convolutions at 160 rows by each kernel variant
 * the CPU runs (forward and weight gradient, GFLOP/s); --cpu-time
 * times by the thread's CPU time instead of the wall clock (for a shared
 * machine; BLAS threads beyond the first are then not counted).  Each figure is the median
 * of R timed runs (default 7), each run long enough (>= 20 ms) to time.
 * To compare OpenBLAS kernels, run it under OPENBLAS_CORETYPE=Prescott,
 * =Haswell, =SkylakeX, or with that variable unset (Seed's choice); see
 * bench/RESULTS.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn/nn_kernels.h"
#include "bench_time.h"
#include "seed/blas.h"
#include "seed/env.h"
#include "seed/nn.h"
#include "seed/rng.h"

static float *randn(seed_rng *r, size_t n)
{
	float *p = malloc(n * sizeof *p);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)seed_rng_normal(r);
	return p;
}

/* ---- sgemm -------------------------------------------------------------- */

typedef struct {
	const char *what;
	int ta, tb, M, N, K;
	float *A, *B, *C;
} gemm_ctx;

static void run_gemm(void *p)
{
	gemm_ctx *g = p;
	seed_blas_sgemm(g->ta, g->tb, g->M, g->N, g->K, 1.0f, g->A, g->ta ? g->M : g->K, g->B,
	                g->tb ? g->K : g->N, 0.0f, g->C, g->N);
}

static void bench_sgemm(seed_rng *r)
{
	static const struct {
		const char *what;
		int ta, tb, M, N, K;
	} shapes[] = {
	    {"CartPole layer 1, B=256: [256x4]x[4x64]", 0, 1, 256, 64, 4},
	    {"MLP layer 2, B=256: [256x64]x[64x64]", 0, 1, 256, 64, 64},
	    {"MLP layer 2, B=640: [640x64]x[64x64]", 0, 1, 640, 64, 64},
	    {"MLP heads, B=256: [256x64]x[64x3]", 0, 1, 256, 3, 64},
	    {"MLP dW, B=640: [64x640]x[640x64]", 1, 0, 64, 64, 640},
	    {"MLP dx, B=640: [640x64]x[64x64]", 0, 0, 640, 64, 64},
	    {"conv im2col C=4, B=256: [16384x36]x[36x16]", 0, 1, 16384, 16, 36},
	    {"conv im2col C=10, B=640: [40960x90]x[90x16]", 0, 1, 40960, 16, 90},
	    {"conv dW C=4, B=640: [16x40960]x[40960x36]", 1, 0, 16, 36, 40960},
	    {"MinAtar FC, B=256: [256x1024]x[1024x128]", 0, 1, 256, 128, 1024},
	    {"MinAtar FC, B=640: [640x1024]x[1024x128]", 0, 1, 640, 128, 1024},
	    {"MinAtar FC dW, B=640: [128x640]x[640x1024]", 1, 0, 128, 1024, 640},
	};
	printf("\n| sgemm (row-major) | GFLOP/s |\n|---|---:|\n");
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		gemm_ctx g = {shapes[s].what, shapes[s].ta, shapes[s].tb, shapes[s].M, shapes[s].N,
		              shapes[s].K,    NULL,         NULL,         NULL};
		g.A = randn(r, (size_t)g.M * g.K);
		g.B = randn(r, (size_t)g.K * g.N);
		g.C = randn(r, (size_t)g.M * g.N);
		double t = bench_time_it(run_gemm, &g);
		printf("| %s | %.1f |\n", g.what, 2.0 * g.M * g.N * g.K / t * 1e-9);
		free(g.A);
		free(g.B);
		free(g.C);
	}
}

/* ---- linear layers: sgemm against the kernels ---------------------------- */

typedef struct {
	int B, n_in, n_out;
	float *x, *w, *b, *y, *dy, *dx, *dw;
} lin_ctx;

static void run_lin_fwd_gemm(void *p)
{
	lin_ctx *c = p;
	seed_blas_sgemm(false, true, c->B, c->n_out, c->n_in, 1.0f, c->x, c->n_in, c->w, c->n_in, 0.0f, c->y,
	                c->n_out);
	nnk_best()->bias_add((size_t)c->B, (size_t)c->n_out, c->b, c->y);
}

static void run_lin_fwd_kernel(void *p)
{
	lin_ctx *c = p;
	nnk_best()->linear_fwd((size_t)c->B, (size_t)c->n_in, (size_t)c->n_out, c->x, c->w, c->b, c->y);
}

static void run_lin_dw_gemm(void *p)
{
	lin_ctx *c = p;
	seed_blas_sgemm(true, false, c->n_out, c->n_in, c->B, 1.0f, c->dy, c->n_out, c->x, c->n_in, 1.0f,
	                c->dw, c->n_in);
}

static void run_lin_dw_kernel(void *p)
{
	lin_ctx *c = p;
	nnk_best()->linear_dw((size_t)c->B, (size_t)c->n_in, (size_t)c->n_out, c->dy, c->x, c->dw);
}

static void run_lin_dx_gemm(void *p)
{
	lin_ctx *c = p;
	seed_blas_sgemm(false, false, c->B, c->n_in, c->n_out, 1.0f, c->dy, c->n_out, c->w, c->n_in, 0.0f,
	                c->dx, c->n_in);
}

static void run_lin_dx_kernel(void *p)
{
	lin_ctx *c = p;
	nnk_best()->linear_dx((size_t)c->B, (size_t)c->n_in, (size_t)c->n_out, c->dy, c->w, c->dx);
}

/* The MinAtar network's 1024 -> 128 layer, its three products by sgemm
 * (with the bias as a second pass, as the model did) and by the kernels
 * the model uses now. */
static void bench_linear(seed_rng *r, int B)
{
	lin_ctx c = {B, 1024, 128, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	c.x = randn(r, (size_t)B * c.n_in);
	c.w = randn(r, (size_t)c.n_out * c.n_in);
	c.b = randn(r, (size_t)c.n_out);
	c.y = randn(r, (size_t)B * c.n_out);
	c.dy = randn(r, (size_t)B * c.n_out);
	c.dx = randn(r, (size_t)B * c.n_in);
	c.dw = randn(r, (size_t)c.n_out * c.n_in);
	printf("| 1024 -> 128, B=%d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", B,
	       bench_time_it(run_lin_fwd_gemm, &c) * 1e6, bench_time_it(run_lin_fwd_kernel, &c) * 1e6,
	       bench_time_it(run_lin_dw_gemm, &c) * 1e6, bench_time_it(run_lin_dw_kernel, &c) * 1e6,
	       bench_time_it(run_lin_dx_gemm, &c) * 1e6, bench_time_it(run_lin_dx_kernel, &c) * 1e6);
	free(c.x);
	free(c.w);
	free(c.b);
	free(c.y);
	free(c.dy);
	free(c.dx);
	free(c.dw);
}

static void bench_linear_table(seed_rng *r)
{
	printf(
	    "\n| linear layer | forward: sgemm + bias us | forward: kernel us | dW: sgemm us | dW: kernel us "
	    "| dx: sgemm us | dx: kernel us |\n|---|---:|---:|---:|---:|---:|---:|\n");
	bench_linear(r, 32);
	bench_linear(r, 176);
	bench_linear(r, 640);
}

/* ---- element-wise kernels ---------------------------------------------- */

typedef struct {
	const nnk_ops *k;
	size_t n;
	float *x, *y;
} ew_ctx;

static void run_tanh(void *p)
{
	ew_ctx *e = p;
	e->k->tanh_fwd(e->n, e->x, e->y);
}

static void run_relu(void *p)
{
	ew_ctx *e = p;
	e->k->relu_fwd(e->n, e->x, e->y);
}

static void run_bias(void *p)
{
	ew_ctx *e = p;
	e->k->bias_add(e->n / 64, 64, e->x, e->y);
}

static void bench_elementwise(seed_rng *r)
{
	size_t n = 256 * 64; /* one MLP activation at B=256, in L1/L2 */
	ew_ctx e = {NULL, n, randn(r, n), randn(r, n)};
	printf("\n| element-wise, %zu floats (B=256 x 64) | ns per element |\n|---|---:|\n", n);
	const nnk_ops *ks[] = {&nnk_ref, nnk_best()};
	for (int i = 0; i < 2; i++) {
		e.k = ks[i];
		printf("| tanh, %s | %.3f |\n", e.k->name, bench_time_it(run_tanh, &e) / n * 1e9);
		printf("| relu, %s | %.3f |\n", e.k->name, bench_time_it(run_relu, &e) / n * 1e9);
		printf("| bias add, %s | %.3f |\n", e.k->name, bench_time_it(run_bias, &e) / n * 1e9);
	}
	free(e.x);
	free(e.y);
}

/* ---- models ------------------------------------------------------------ */

typedef struct {
	seed_model *m;
	int B;
	void *obs;
	float *logits, *values, *dl, *dv;
} model_ctx;

static void run_forward(void *p)
{
	model_ctx *c = p;
	seed_model_forward(c->m, c->B, c->obs, c->logits, c->values);
}

static void run_train(void *p)
{
	model_ctx *c = p;
	seed_model_forward(c->m, c->B, c->obs, c->logits, c->values);
	seed_model_backward(c->m, c->B, c->dl, c->dv);
}

/* B observations of the environment env (NULL: random bits instead, half
 * of them set), from B instances stepped with random actions long enough
 * to be in mid-game: real observations are sparse (a tenth of MinAtar's
 * cells are set), which the first convolution exploits. */
static const char *obs_env;

static void fill_obs(seed_rng *r, unsigned char *obs, size_t row, int B)
{
	seed_envs *e = NULL;
	seed_err err;
	if (!obs_env) {
		for (size_t i = 0; i < (size_t)B * row; i++)
			obs[i] = (unsigned char)seed_rng_below(r, 2);
		return;
	}
	if (seed_envs_new(&e, obs_env, "{}", B, 1, &err) < 0) {
		fprintf(stderr, "nn_bench: %s\n", err.msg);
		exit(1);
	}
	int n = seed_envs_spec(e)->num_actions;
	int32_t *act = malloc((size_t)B * sizeof *act);
	float *rew = malloc((size_t)B * sizeof *rew);
	uint8_t *term = malloc((size_t)B), *trunc = malloc((size_t)B);
	seed_envs_reset(e, obs);
	for (int t = 0; t < 100; t++) {
		for (int i = 0; i < B; i++)
			act[i] = (int32_t)seed_rng_below(r, (uint64_t)n);
		seed_envs_step(e, 0, B, act, obs, rew, term, trunc, NULL, NULL, NULL);
	}
	free(act);
	free(rew);
	free(term);
	free(trunc);
	seed_envs_free(&e);
}

static void bench_model(seed_rng *r, const char *name, const char *json, seed_dtype dt, int rank,
                        const int64_t *shape, int A, int B)
{
	seed_model *m = NULL;
	seed_err err;
	if (seed_model_new(&m, json, dt, rank, shape, A, B, &err) < 0) {
		fprintf(stderr, "nn_bench: %s\n", err.msg);
		exit(1);
	}
	seed_model_init(m, r);
	size_t row = seed_model_obs_bytes(m);
	unsigned char *obs = malloc((size_t)B * row);
	if (dt == SEED_DTYPE_U8)
		fill_obs(r, obs, row, B);
	else
		for (size_t i = 0; i < (size_t)B * row / 4; i++)
			((float *)obs)[i] = (float)seed_rng_normal(r);
	model_ctx c = {m,
	               B,
	               obs,
	               randn(r, (size_t)B * A),
	               randn(r, (size_t)B),
	               randn(r, (size_t)B * A),
	               randn(r, (size_t)B)};
	double tf = bench_time_it(run_forward, &c), tt = bench_time_it(run_train, &c);
	char sum[256];
	seed_model_summary(m, sum, sizeof sum);
	printf("| %s, B=%d | %.0f | %.0f | %.1f | %.1f |\n", name, B, B / tf, B / tt, tf * 1e6, tt * 1e6);
	free(obs);
	free(c.logits);
	free(c.values);
	free(c.dl);
	free(c.dv);
	seed_model_free(&m);
}

/* The MinAtar convolution (10x10xC -> 8x8x16, 3x3) two ways: im2col (the
 * patch matrix) + sgemm, and the direct kernels the model uses; forward
 * and weight gradient. */
typedef struct {
	int B, C;
	nnk_conv s;
	float *x, *col, *w, *wt, *out, *dy, *dw;
} conv_ctx;

static void run_im2col(void *p)
{
	conv_ctx *c = p;
	size_t run = 3 * (size_t)c->C;
	float *col = c->col;
	for (int b = 0; b < c->B; b++)
		for (int oy = 0; oy < 8; oy++)
			for (int ox = 0; ox < 8; ox++)
				for (int ky = 0; ky < 3; ky++, col += run)
					memcpy(col, c->x + (((size_t)b * 10 + oy + ky) * 10 + ox) * c->C,
					       run * sizeof *col);
}

static void run_conv_gemm(void *p)
{
	conv_ctx *c = p;
	int kk = 9 * c->C;
	seed_blas_sgemm(false, true, c->B * 64, 16, kk, 1.0f, c->col, kk, c->w, kk, 0.0f, c->out, 16);
}

static void run_conv_dw_gemm(void *p)
{
	conv_ctx *c = p;
	int kk = 9 * c->C;
	seed_blas_sgemm(true, false, 16, kk, c->B * 64, 1.0f, c->dy, 16, c->col, kk, 1.0f, c->dw, kk);
}

static void run_conv_direct(void *p)
{
	conv_ctx *c = p;
	nnk_best()->conv_fwd(&c->s, c->B, c->x, c->wt, c->w, c->out);
}

static void run_conv_dw_direct(void *p)
{
	conv_ctx *c = p;
	nnk_best()->conv_dw(&c->s, c->B, c->x, c->dy, c->dw);
}

static void bench_conv(seed_rng *r, int B, int C)
{
	size_t kk = 9 * (size_t)C;
	conv_ctx c = {B,
	              C,
	              {.H = 10, .W = 10, .C = C, .k = 3, .F = 16, .OH = 8, .OW = 8, .S = 1},
	              randn(r, (size_t)B * 100 * C),
	              randn(r, (size_t)B * 64 * kk),
	              randn(r, 16 * kk),
	              randn(r, 16 * kk),
	              randn(r, (size_t)B * 64 * 16),
	              randn(r, (size_t)B * 64 * 16),
	              randn(r, 16 * kk)};
	double flop = 2.0 * B * 64 * 16 * kk;
	double ti = bench_time_it(run_im2col, &c), tg = bench_time_it(run_conv_gemm, &c),
	       td = bench_time_it(run_conv_direct, &c);
	double tgw = bench_time_it(run_conv_dw_gemm, &c), tdw = bench_time_it(run_conv_dw_direct, &c);
	printf("| 3x3x%d->16 on 10x10, B=%d | %.0f | %.0f | %.0f (%.0f GFLOP/s) | %.0f (%.0f GFLOP/s) | %.0f "
	       "(%.0f) | "
	       "%.0f (%.0f) |\n",
	       C, B, ti * 1e6, tg * 1e6, (ti + tg) * 1e6, flop / (ti + tg) * 1e-9, td * 1e6, flop / td * 1e-9,
	       (ti + tgw) * 1e6, flop / (ti + tgw) * 1e-9, tdw * 1e6, flop / tdw * 1e-9);
	free(c.x);
	free(c.col);
	free(c.w);
	free(c.wt);
	free(c.out);
	free(c.dy);
	free(c.dw);
}

/* The Nature network's three convolutions at the learner's 160 rows, by
 * each kernel variant this CPU runs: the direct forward and weight
 * gradient the model uses, GFLOP/s at 2 * multiply-adds. */
typedef struct {
	const nnk_ops *ops;
	int B;
	nnk_conv s;
	float *x, *wt, *b, *out, *dy, *dw;
} layer_ctx;

static void run_layer_fwd(void *p)
{
	layer_ctx *c = p;
	c->ops->conv_fwd_relu(&c->s, c->B, c->x, c->wt, c->b, c->out);
}

static void run_layer_dw(void *p)
{
	layer_ctx *c = p;
	c->ops->conv_dw(&c->s, c->B, c->x, c->dy, c->dw);
}

static void bench_nature_layers(seed_rng *r, int B)
{
	static const nnk_conv layers[3] = {
	    {.H = 84, .W = 84, .C = 4, .k = 8, .F = 32, .OH = 20, .OW = 20, .S = 4},
	    {.H = 20, .W = 20, .C = 32, .k = 4, .F = 64, .OH = 9, .OW = 9, .S = 2},
	    {.H = 9, .W = 9, .C = 64, .k = 3, .F = 64, .OH = 7, .OW = 7, .S = 1},
	};
	printf("\n| Nature conv2d, B=%d | kernels | forward (+relu) us | GFLOP/s | weight gradient us | "
	       "GFLOP/s |\n"
	       "|---|---|---:|---:|---:|---:|\n",
	       B);
	for (int v = 0; nnk_variants[v]; v++) {
		const nnk_ops *ops = nnk_variants[v];
		if (!nnk_usable(ops) || ops == &nnk_ref)
			continue;
		for (int l = 0; l < 3; l++) {
			const nnk_conv *s = &layers[l];
			size_t kk = (size_t)s->k * s->k * s->C, Fp = (size_t)nnk_fpad(ops, s->F);
			size_t ny = (size_t)B * s->OH * s->OW * s->F;
			layer_ctx c = {ops,
			               B,
			               *s,
			               randn(r, (size_t)B * s->H * s->W * s->C),
			               randn(r, kk * Fp),
			               randn(r, Fp),
			               randn(r, ny),
			               randn(r, ny),
			               randn(r, kk * Fp)};
			double flop = 2.0 * (double)ny * (double)kk;
			double tf = bench_time_it(run_layer_fwd, &c), tw = bench_time_it(run_layer_dw, &c);
			printf("| %dx%dx%d, %dx%d stride %d -> %dx%dx%d | %s | %.0f | %.0f | %.0f | %.0f |\n",
			       s->H, s->W, s->C, s->k, s->k, s->S, s->OH, s->OW, s->F, ops->name, tf * 1e6,
			       flop / tf * 1e-9, tw * 1e6, flop / tw * 1e-9);
			free(c.x);
			free(c.wt);
			free(c.b);
			free(c.out);
			free(c.dy);
			free(c.dw);
		}
	}
}

int main(int argc, char **argv)
{
	int threads = 1, models_only = 0, nature_only = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--models") == 0)
			models_only = 1;
		else if (strcmp(argv[i], "--nature") == 0)
			models_only = nature_only = 1;
		else if (strcmp(argv[i], "--cpu-time") == 0)
			bench_clock = CLOCK_THREAD_CPUTIME_ID;
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
			bench_repeats = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: nn_bench [--threads N] [--repeats R] [--models] [--nature] "
			                "[--cpu-time]\n");
			return 2;
		}
	}
	if (threads < 1 || bench_repeats < 1) {
		fprintf(stderr,
		        "usage: nn_bench [--threads N] [--repeats R] [--models] [--nature] [--cpu-time]\n");
		return 2;
	}
	seed_err err;
	if (seed_blas_init(&err) < 0) {
		fprintf(stderr, "nn_bench: %s\n", err.msg);
		return 1;
	}
	if (threads != seed_blas_threads() && seed_blas_set_threads(threads) < 0)
		fprintf(stderr, "nn_bench: cannot set %d BLAS threads\n", threads);
	printf("BLAS: %s, %d thread(s); element-wise kernels: %s; median of %d runs of %s\n",
	       seed_blas_info(), seed_blas_threads(), nnk_best()->name, bench_repeats,
	       bench_clock == CLOCK_MONOTONIC ? "wall time" : "CPU time");
	seed_rng r;
	seed_rng_init(&r, 1, 0);
	if (!models_only) {
		bench_sgemm(&r);
		bench_elementwise(&r);
		printf(
		    "\n| conv2d | im2col us | its sgemm us | forward: im2col + sgemm us | forward: direct us "
		    "| dW: im2col + sgemm us (GFLOP/s) | dW: direct us (GFLOP/s) "
		    "|\n|---|---:|---:|---:|---:|---:|---:|\n");
		bench_conv(&r, 256, 4);
		bench_conv(&r, 640, 4);
		bench_conv(&r, 640, 10);
		bench_linear_table(&r);
	}

	static const char mlp[] = "{\"torso\":[{\"type\":\"linear\",\"out\":64},{\"type\":\"tanh\"},"
	                          "{\"type\":\"linear\",\"out\":64},{\"type\":\"tanh\"}]}";
	static const char minatar[] =
	    "{\"torso\":[{\"type\":\"conv2d\",\"filters\":16,\"kernel\":3},{\"type\":\"relu\"},"
	    "{\"type\":\"flatten\"},{\"type\":\"linear\",\"out\":128},{\"type\":\"relu\"}]}";
	/* examples/models/nature-dqn.json, as one line. */
	static const char nature[] =
	    "{\"torso\":[{\"type\":\"scale\",\"by\":0.00392156862745098},"
	    "{\"type\":\"conv2d\",\"filters\":32,\"kernel\":8,\"stride\":4},{\"type\":\"relu\"},"
	    "{\"type\":\"conv2d\",\"filters\":64,\"kernel\":4,\"stride\":2},{\"type\":\"relu\"},"
	    "{\"type\":\"conv2d\",\"filters\":64,\"kernel\":3,\"stride\":1},{\"type\":\"relu\"},"
	    "{\"type\":\"flatten\"},{\"type\":\"linear\",\"out\":512},{\"type\":\"relu\"}]}";
	const int64_t cp[1] = {4}, br[3] = {10, 10, 4}, sq[3] = {10, 10, 10}, atari[3] = {84, 84, 4};
	if (nature_only) {
		bench_nature_layers(&r, 160);
		printf("\n| model | forward rows/s | forward+backward rows/s | forward us | forward+backward "
		       "us |\n"
		       "|---|---:|---:|---:|---:|\n");
		bench_model(&r, "Nature DQN (u8[84,84,4], A=18)", nature, SEED_DTYPE_U8, 3, atari, 18, 32);
		bench_model(&r, "Nature DQN (u8[84,84,4], A=18)", nature, SEED_DTYPE_U8, 3, atari, 18, 128);
		bench_model(&r, "Nature DQN (u8[84,84,4], A=18)", nature, SEED_DTYPE_U8, 3, atari, 18, 160);
		bench_model(&r, "Nature DQN (u8[84,84,4], A=18)", nature, SEED_DTYPE_U8, 3, atari, 18, 512);
		return 0;
	}
	printf("\n| model | forward rows/s | forward+backward rows/s | forward us | forward+backward us |\n"
	       "|---|---:|---:|---:|---:|\n");
	bench_model(&r, "CartPole MLP 64-64 (f32[4], A=2)", mlp, SEED_DTYPE_F32, 1, cp, 2, 256);
	bench_model(&r, "CartPole MLP 64-64 (f32[4], A=2)", mlp, SEED_DTYPE_F32, 1, cp, 2, 640);
	bench_model(&r, "MinAtar net (u8[10,10,4], A=3)", minatar, SEED_DTYPE_U8, 3, br, 3, 32);
	bench_model(&r, "MinAtar net (u8[10,10,4], A=3)", minatar, SEED_DTYPE_U8, 3, br, 3, 176);
	bench_model(&r, "MinAtar net (u8[10,10,4], A=3)", minatar, SEED_DTYPE_U8, 3, br, 3, 256);
	bench_model(&r, "MinAtar net (u8[10,10,4], A=3)", minatar, SEED_DTYPE_U8, 3, br, 3, 640);
	bench_model(&r, "MinAtar net (u8[10,10,10], A=6)", minatar, SEED_DTYPE_U8, 3, sq, 6, 640);
	obs_env = "minatar-breakout";
	bench_model(&r, "MinAtar net, Breakout observations", minatar, SEED_DTYPE_U8, 3, br, 3, 32);
	bench_model(&r, "MinAtar net, Breakout observations", minatar, SEED_DTYPE_U8, 3, br, 3, 176);
	obs_env = "minatar-seaquest";
	bench_model(&r, "MinAtar net, Seaquest observations", minatar, SEED_DTYPE_U8, 3, sq, 6, 176);
	obs_env = NULL;
	bench_model(&r, "Nature DQN (u8[84,84,4], A=18)", nature, SEED_DTYPE_U8, 3, atari, 18, 32);
	bench_model(&r, "Nature DQN (u8[84,84,4], A=18)", nature, SEED_DTYPE_U8, 3, atari, 18, 128);
	bench_model(&r, "Nature DQN (u8[84,84,4], A=18)", nature, SEED_DTYPE_U8, 3, atari, 18, 512);
	return 0;
}
