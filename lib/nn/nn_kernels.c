/* nn_kernels.c: element-wise kernels for the layers, reference and SIMD.
 *
 * The reference is plain scalar C; the SIMD variants come from one template
 * (nn_kernels_simd.h) compiled per instruction set.  Variant choice happens
 * at run time from CPUID, so one binary runs everywhere and uses AVX-512
 * where it exists.
 */
#include "nn_kernels.h"

#include <math.h>

static void ref_tanh_fwd(size_t n, const float *x, float *y)
{
	for (size_t i = 0; i < n; i++)
		y[i] = tanhf(x[i]);
}

static void ref_tanh_bwd(size_t n, const float *y, const float *dy, float *dx)
{
	for (size_t i = 0; i < n; i++)
		dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

static void ref_relu_fwd(size_t n, const float *x, float *y)
{
	for (size_t i = 0; i < n; i++)
		y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

static void ref_relu_bwd(size_t n, const float *y, const float *dy, float *dx)
{
	for (size_t i = 0; i < n; i++)
		dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

static void ref_bias_add(size_t rows, size_t cols, const float *b, float *y)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < cols; c++)
			y[r * cols + c] += b[c];
}

static void ref_col_sum(size_t rows, size_t cols, const float *dy, float *db)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < cols; c++)
			db[c] += dy[r * cols + c];
}

static void ref_u8_to_f32(size_t n, const uint8_t *x, float *y)
{
	for (size_t i = 0; i < n; i++)
		y[i] = (float)x[i];
}

/* The convolution as its definition says, one output at a time. */
static void ref_conv_fwd(const nnk_conv *s, int B, const float *x, const float *wt, const float *bias,
                         float *out)
{
	int Fp = nnk_fpad(&nnk_ref, s->F);
	for (int b = 0; b < B; b++)
		for (int oy = 0; oy < s->OH; oy++)
			for (int ox = 0; ox < s->OW; ox++)
				for (int f = 0; f < s->F; f++) {
					float acc = bias[f];
					for (int ky = 0; ky < s->k; ky++)
						for (int j = 0; j < s->k * s->C; j++) {
							float xv =
							    x[(((size_t)b * s->H + oy + ky) * s->W + ox) *
							          s->C +
							      j];
							acc +=
							    xv * wt[((size_t)ky * s->k * s->C + j) * Fp + f];
						}
					out[(((size_t)b * s->OH + oy) * s->OW + ox) * s->F + f] = acc;
				}
}

static void ref_conv_dw(const nnk_conv *s, int B, const float *x, const float *dy, float *dwt)
{
	int Fp = nnk_fpad(&nnk_ref, s->F);
	for (int b = 0; b < B; b++)
		for (int oy = 0; oy < s->OH; oy++)
			for (int ox = 0; ox < s->OW; ox++) {
				const float *g = dy + (((size_t)b * s->OH + oy) * s->OW + ox) * s->F;
				for (int ky = 0; ky < s->k; ky++)
					for (int j = 0; j < s->k * s->C; j++) {
						float xv =
						    x[(((size_t)b * s->H + oy + ky) * s->W + ox) * s->C + j];
						float *d = dwt + ((size_t)ky * s->k * s->C + j) * Fp;
						for (int f = 0; f < s->F; f++)
							d[f] += xv * g[f];
					}
			}
}

static void ref_linear_fwd(size_t rows, size_t n_in, size_t n_out, const float *x, const float *w,
                           const float *b, float *y)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t o = 0; o < n_out; o++) {
			float acc = b[o];
			for (size_t k = 0; k < n_in; k++)
				acc += x[r * n_in + k] * w[o * n_in + k];
			y[r * n_out + o] = acc;
		}
}

static void ref_conv_fwd_relu(const nnk_conv *s, int B, const float *x, const float *wt, const float *bias,
                              float *out)
{
	ref_conv_fwd(s, B, x, wt, bias, out);
	ref_relu_fwd((size_t)B * s->OH * s->OW * s->F, out, out);
}

static void ref_linear_fwd_relu(size_t rows, size_t n_in, size_t n_out, const float *x, const float *w,
                                const float *b, float *y)
{
	ref_linear_fwd(rows, n_in, n_out, x, w, b, y);
	ref_relu_fwd(rows * n_out, y, y);
}

static void ref_linear_dx(size_t rows, size_t n_in, size_t n_out, const float *dy, const float *w, float *dx)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t k = 0; k < n_in; k++) {
			float acc = 0.0f;
			for (size_t o = 0; o < n_out; o++)
				acc += dy[r * n_out + o] * w[o * n_in + k];
			dx[r * n_in + k] = acc;
		}
}

static void ref_linear_dx_relu(size_t rows, size_t n_in, size_t n_out, const float *dy, const float *w,
                               const float *y, float *dx)
{
	ref_linear_dx(rows, n_in, n_out, dy, w, dx);
	ref_relu_bwd(rows * n_in, y, dx, dx);
}

static void ref_linear_dw(size_t rows, size_t n_in, size_t n_out, const float *dy, const float *x, float *dw)
{
	for (size_t o = 0; o < n_out; o++)
		for (size_t k = 0; k < n_in; k++) {
			float acc = dw[o * n_in + k];
			for (size_t r = 0; r < rows; r++)
				acc += dy[r * n_out + o] * x[r * n_in + k];
			dw[o * n_in + k] = acc;
		}
}

const nnk_ops nnk_ref = {
    .name = "reference",
    .fpad = 1,
    .tanh_fwd = ref_tanh_fwd,
    .tanh_bwd = ref_tanh_bwd,
    .relu_fwd = ref_relu_fwd,
    .relu_bwd = ref_relu_bwd,
    .bias_add = ref_bias_add,
    .col_sum = ref_col_sum,
    .u8_to_f32 = ref_u8_to_f32,
    .conv_fwd = ref_conv_fwd,
    .conv_dw = ref_conv_dw,
    .conv_fwd_relu = ref_conv_fwd_relu,
    .linear_fwd = ref_linear_fwd,
    .linear_fwd_relu = ref_linear_fwd_relu,
    .linear_dx = ref_linear_dx,
    .linear_dx_relu = ref_linear_dx_relu,
    .linear_dw = ref_linear_dw,
};

#if defined(__x86_64__)
#include <immintrin.h>

/* Lane sums for NNK_HSUM: halves added until one lane is left. */
static inline __attribute__((always_inline)) float nnk_hsum_sse(__m128 v)
{
	__m128 h = _mm_add_ps(v, _mm_movehl_ps(v, v));
	return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

static inline __attribute__((always_inline, target("avx2,fma"))) float nnk_hsum_avx2(__m256 v)
{
	return nnk_hsum_sse(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}

#define NNK_W 16
#define NNK_SUFFIX avx512
#define NNK_TARGET __attribute__((target("avx512f")))
#define NNK_NAME "avx512"
#define NNK_MADD(a, b, c) _mm512_fmadd_ps(a, b, c)
#define NNK_HSUM(v) _mm512_reduce_add_ps((__m512)(v))
#define NNK_SPLAT(x) _mm512_set1_ps(x)
#include "nn_kernels_simd.h"

#define NNK_W 8
#define NNK_SUFFIX avx2
#define NNK_TARGET __attribute__((target("avx2,fma")))
#define NNK_NAME "avx2"
#define NNK_MADD(a, b, c) _mm256_fmadd_ps(a, b, c)
#define NNK_HSUM(v) nnk_hsum_avx2((__m256)(v))
#define NNK_SPLAT(x) _mm256_set1_ps(x)
#include "nn_kernels_simd.h"

#define NNK_W 4
#define NNK_SUFFIX base
#define NNK_TARGET
#define NNK_NAME "sse2"
#define NNK_MADD(a, b, c) ((a) * (b) + (c))
#define NNK_HSUM(v) nnk_hsum_sse((__m128)(v))
#define NNK_SPLAT(x) _mm_set1_ps(x)
#include "nn_kernels_simd.h"

const nnk_ops *const nnk_variants[] = {&nnk_ops_avx512, &nnk_ops_avx2, &nnk_ops_base, &nnk_ref, NULL};

int nnk_usable(const nnk_ops *ops)
{
	__builtin_cpu_init();
	if (ops == &nnk_ops_avx512)
		return __builtin_cpu_supports("avx512f");
	if (ops == &nnk_ops_avx2)
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	return 1;
}
#else
/* Other architectures: the vectors become whatever the baseline ISA has. */
typedef float nnk_vector4 __attribute__((vector_size(16)));
static inline nnk_vector4 nnk_splat_vector(float x)
{
	return (nnk_vector4){x, x, x, x};
}
#define NNK_W 4
#define NNK_SUFFIX base
#define NNK_TARGET
#define NNK_NAME "vector"
#define NNK_MADD(a, b, c) ((a) * (b) + (c))
#define NNK_HSUM(v) (((v)[0] + (v)[2]) + ((v)[1] + (v)[3]))
#define NNK_SPLAT(x) nnk_splat_vector(x)
#include "nn_kernels_simd.h"

const nnk_ops *const nnk_variants[] = {&nnk_ops_base, &nnk_ref, NULL};

int nnk_usable(const nnk_ops *ops)
{
	(void)ops;
	return 1;
}
#endif

const nnk_ops *nnk_best(void)
{
	for (int i = 0; nnk_variants[i]; i++)
		if (nnk_usable(nnk_variants[i]))
			return nnk_variants[i];
	return &nnk_ref;
}
