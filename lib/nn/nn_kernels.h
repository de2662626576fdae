/* nn_kernels.h: element-wise and convolution kernels of the layers (internal).
 *
 * Matrix products go to BLAS (seed/blas.h); what is left is work that BLAS
 * does not do: activations and their gradients, bias rows, column sums,
 * u8 -> f32, and the convolution forward and weight gradient, which are
 * faster computed directly than as im2col + sgemm (the product of a
 * B*OH*OW x k*k*C patch matrix with a 16-wide filter matrix is too narrow
 * for BLAS's kernels, and building the patch matrix costs as much again;
 * bench/RESULTS.md has the figures).  The linear layers' products are here
 * too, for the small weight matrices of RL models: BLAS packs the whole
 * weight matrix on every call, which for a batch of 16 to 200 rows costs
 * as much as the product (cpu.c says when each is used).  Each kernel exists as a plain scalar reference
 * (nnk_ref) and in SIMD variants written once with GCC vector extensions and
 * compiled for AVX-512, AVX2 and the baseline ISA.  nnk_best() picks the
 * widest variant the CPU supports; the tests compare every variant the CPU
 * can run with the reference.
 *
 * These names are not exported from libseed (only seed_* are); the tests
 * compile nn_kernels.c themselves to reach every variant.
 */
#ifndef SEED_NN_KERNELS_H
#define SEED_NN_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A convolution of (H, W, C) inputs (HWC) with k x k kernels, F filters,
 * stride S and zero padding into (OH, OW, F): output pixel (oy, ox) reads
 * the k x k patch whose top left corner is input pixel (oy * S - pt,
 * ox * S - pl), inputs outside the image being zeros.  The padding at the
 * bottom and right is whatever OH and OW imply: the patches of the last
 * row and column may reach past the image (zeros) or stop short of it
 * (inputs never read).  S >= 1; 0 <= pt, pl < k; every patch overlaps the
 * image (model_parse.c ensures it).  S = 1, pt = pl = 0, OH = H - k + 1 and
 * OW = W - k + 1 is the plain "valid" convolution. */
typedef struct nnk_conv {
	int H, W, C, k, F, OH, OW;
	int S, pt, pl;
} nnk_conv;

/* The output columns [*lo, *hi) whose patches lie inside the image's width
 * (no padding read): the kernels' fast blocks run on them, the columns at
 * the edges one at a time with their patches clipped.  *lo <= *hi. */
static inline void nnk_conv_inner_cols(const nnk_conv *s, int *lo, int *hi)
{
	int l = (s->pl + s->S - 1) / s->S; /* ox * S - pl >= 0 */
	int last = s->W - s->k + s->pl;    /* ox * S <= last: ox * S - pl + k <= W */
	int h = last < 0 ? 0 : last / s->S + 1;
	if (h > s->OW)
		h = s->OW;
	*lo = l < h ? l : h;
	*hi = h;
}

typedef struct nnk_ops {
	const char *name; /* "avx512", "avx2", "sse2"/"vector", "reference" */
	/* Filter padding of the convolution kernels' transposed weights: they
	 * take wt as (k, k, C, Fp) with Fp = F rounded up to a multiple of
	 * fpad, zeros in the padding. */
	int fpad;
	/* y = tanh(x) (y may be x).  Error within a few ulp of tanh in double;
	 * NaN stays NaN. */
	void (*tanh_fwd)(size_t n, const float *x, float *y);
	/* dx = dy * (1 - y*y) (dx may be dy). */
	void (*tanh_bwd)(size_t n, const float *y, const float *dy, float *dx);
	/* y = max(x, 0) (y may be x); NaN stays NaN. */
	void (*relu_fwd)(size_t n, const float *x, float *y);
	/* dx = y > 0 ? dy : 0 (dx may be dy). */
	void (*relu_bwd)(size_t n, const float *y, const float *dy, float *dx);
	/* y[r][c] += b[c] for a rows x cols matrix. */
	void (*bias_add)(size_t rows, size_t cols, const float *b, float *y);
	/* db[c] += sum_r dy[r][c]. */
	void (*col_sum)(size_t rows, size_t cols, const float *dy, float *db);
	/* y = (float)x. */
	void (*u8_to_f32)(size_t n, const uint8_t *x, float *y);
	/* out (B, OH, OW, F) = bias + sum over the k x k x C patch of x
	 * (B, H, W, C) times wt (k*k*C, Fp) (padding contributes nothing). */
	void (*conv_fwd)(const nnk_conv *s, int B, const float *x, const float *wt, const float *bias,
	                 float *out);
	/* dwt (k*k*C, Fp) += sum over output positions of the patch of x
	 * there (outer product) dy (B, OH, OW, F) there: the weight gradient,
	 * transposed and padded like wt (padding columns stay untouched). */
	void (*conv_dw)(const nnk_conv *s, int B, const float *x, const float *dy, float *dwt);
	/* conv_fwd then relu_fwd on out, in one pass (bit-exact with the two:
	 * the same sums, max(0, .) before the store). */
	void (*conv_fwd_relu)(const nnk_conv *s, int B, const float *x, const float *wt, const float *bias,
	                      float *out);
	/* Whether the model should prefer the linear kernels below to BLAS
	 * for small layers (cpu.c's linear_direct): where they were measured
	 * faster than OpenBLAS's kernel for the same instruction set.  True
	 * for AVX-512 (about 90% of the multiply-add peak, against BLAS's
	 * packing); false for AVX2 and SSE2, whose two-row blocks run at a
	 * fraction of OpenBLAS's Haswell kernel (a core's cache takes the
	 * weight rows, 4 KB apart, poorly), and for the reference. */
	bool linear_fast;
	/* A linear layer's three products, w (n_out, n_in) row-major as the
	 * model stores it.  y (rows, n_out) = x (rows, n_in) w^T + b. */
	void (*linear_fwd)(size_t rows, size_t n_in, size_t n_out, const float *x, const float *w,
	                   const float *b, float *y);
	/* linear_fwd then relu_fwd on y, in one pass (bit-exact with the two). */
	void (*linear_fwd_relu)(size_t rows, size_t n_in, size_t n_out, const float *x, const float *w,
	                        const float *b, float *y);
	/* dx (rows, n_in) = dy (rows, n_out) w (overwritten). */
	void (*linear_dx)(size_t rows, size_t n_in, size_t n_out, const float *dy, const float *w, float *dx);
	/* linear_dx then relu_bwd with the relu output y (rows, n_in) below
	 * the layer: dx = y > 0 ? dy w : 0, in one pass (bit-exact with the
	 * two). */
	void (*linear_dx_relu)(size_t rows, size_t n_in, size_t n_out, const float *dy, const float *w,
	                       const float *y, float *dx);
	/* dw (n_out, n_in) += dy (rows, n_out)^T x (rows, n_in). */
	void (*linear_dw)(size_t rows, size_t n_in, size_t n_out, const float *dy, const float *x, float *dw);
	/* y (rows, n) += a (rows, k) m (k, n), y's rows ldy floats apart: a
	 * product with a short shared dimension, added onto part of a wider
	 * output (a population's low-rank correction, popnet.c). */
	void (*matmul_acc)(size_t rows, size_t k, size_t n, const float *a, const float *m, float *y,
	                   size_t ldy);
} nnk_ops;

/* Fp for F filters under ops. */
static inline int nnk_fpad(const nnk_ops *ops, int F)
{
	return (F + ops->fpad - 1) / ops->fpad * ops->fpad;
}

/* The scalar reference (libm's tanhf). */
extern const nnk_ops nnk_ref;
/* Every variant compiled in, widest first, NULL-terminated; only those
 * for which nnk_usable() is true may be called. */
extern const nnk_ops *const nnk_variants[];
int nnk_usable(const nnk_ops *ops);
/* The widest usable variant. */
const nnk_ops *nnk_best(void);

/* The input gradient of a convolution, the model's way and by definition.
 * The model computes it as dcol (rows, k*k*C) = dy (rows, F) w (F, k*k*C)
 * by BLAS, rows being output pixels, then scatters the patch gradients
 * back onto the input with nnk_col2im; nnk_conv_dx_ref is the definition
 * (dx[input] = the sum over the outputs whose patches hold it of dy times
 * the weight that joins them), written to be read, for the tests.
 *
 * nnk_col2im: dx (n, H, W, C) += dcol (n * OH * OW, k*k*C), each patch
 * gradient added onto the inputs of its patch; the rows of padding are
 * dropped.  dx is added to, not overwritten: clear it first.
 * nnk_conv_dx_ref: dx (B, H, W, C) = the input gradient from dy (B, OH,
 * OW, F) and w (F, k, k, C) (overwritten). */
void nnk_col2im(const nnk_conv *s, int n, const float *dcol, float *dx);
void nnk_conv_dx_ref(const nnk_conv *s, int B, const float *dy, const float *w, float *dx);

#endif
