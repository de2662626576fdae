/* nn_kernels.h: element-wise kernels of the neural-network layers (internal).
 *
 * Matrix products go to BLAS (seed/blas.h); what is left is element-wise
 * work that BLAS does not do: activations and their gradients, bias rows,
 * column sums, u8 -> f32.  Each kernel exists as a plain scalar reference
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

#include <stddef.h>
#include <stdint.h>

typedef struct nnk_ops {
	const char *name; /* "avx512", "avx2", "sse2"/"vector", "reference" */
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
} nnk_ops;

/* The scalar reference (libm's tanhf). */
extern const nnk_ops nnk_ref;
/* Every variant compiled in, widest first, NULL-terminated; only those
 * for which nnk_usable() is true may be called. */
extern const nnk_ops *const nnk_variants[];
int nnk_usable(const nnk_ops *ops);
/* The widest usable variant. */
const nnk_ops *nnk_best(void);

#endif
