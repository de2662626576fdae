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

/* x at row iy, column ix, channel c of image b (inside the image). */
static float conv_in(const nnk_conv *s, const float *x, int b, int iy, int ix, int c)
{
	return x[(((size_t)b * s->H + iy) * s->W + ix) * s->C + c];
}

/* The convolution as its definition says, one output at a time: the sum
 * over the patch at (oy * S - pt, ox * S - pl), in the order ky, kx, c. */
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
						for (int kx = 0; kx < s->k; kx++)
							for (int c = 0; c < s->C; c++) {
								int iy = oy * s->S - s->pt + ky,
								    ix = ox * s->S - s->pl + kx;
								if (iy < 0 || iy >= s->H || ix < 0 ||
								    ix >= s->W)
									continue; /* padding: adds 0 */
								size_t j =
								    ((size_t)ky * s->k + kx) * s->C + c;
								acc += conv_in(s, x, b, iy, ix, c) *
								       wt[j * Fp + f];
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
					for (int kx = 0; kx < s->k; kx++)
						for (int c = 0; c < s->C; c++) {
							int iy = oy * s->S - s->pt + ky,
							    ix = ox * s->S - s->pl + kx;
							if (iy < 0 || iy >= s->H || ix < 0 || ix >= s->W)
								continue;
							float xv = conv_in(s, x, b, iy, ix, c);
							float *d =
							    dwt + (((size_t)ky * s->k + kx) * s->C + c) * Fp;
							for (int f = 0; f < s->F; f++)
								d[f] += xv * g[f];
						}
			}
}

void nnk_conv_dx_ref(const nnk_conv *s, int B, const float *dy, const float *w, float *dx)
{
	size_t kk = (size_t)s->k * s->k * s->C;
	for (size_t i = 0; i < (size_t)B * s->H * s->W * s->C; i++)
		dx[i] = 0.0f;
	for (int b = 0; b < B; b++)
		for (int oy = 0; oy < s->OH; oy++)
			for (int ox = 0; ox < s->OW; ox++) {
				const float *g = dy + (((size_t)b * s->OH + oy) * s->OW + ox) * s->F;
				for (int ky = 0; ky < s->k; ky++)
					for (int kx = 0; kx < s->k; kx++)
						for (int c = 0; c < s->C; c++) {
							int iy = oy * s->S - s->pt + ky,
							    ix = ox * s->S - s->pl + kx;
							if (iy < 0 || iy >= s->H || ix < 0 || ix >= s->W)
								continue; /* a padding input: no gradient kept
								           */
							size_t j = ((size_t)ky * s->k + kx) * s->C + c;
							float acc = 0.0f;
							for (int f = 0; f < s->F; f++)
								acc += g[f] * w[(size_t)f * kk + j];
							dx[(((size_t)b * s->H + iy) * s->W + ix) * s->C +
							   c] += acc;
						}
			}
}

/* Patch row ky of output pixel (oy, ox) is k * C contiguous values of
 * dcol, for the inputs of row oy * S - pt + ky from column ox * S - pl:
 * those inside the image (columns kx_lo..kx_hi-1 of the patch) are added
 * as one run, the rest (padding) dropped. */
void nnk_col2im(const nnk_conv *s, int n, const float *dcol, float *dx)
{
	size_t run = (size_t)s->k * s->C;
	for (int b = 0; b < n; b++)
		for (int oy = 0; oy < s->OH; oy++)
			for (int ox = 0; ox < s->OW; ox++, dcol += run * s->k) {
				int ix0 = ox * s->S - s->pl;
				int kx_lo = ix0 < 0 ? -ix0 : 0, kx_hi = s->W - ix0 < s->k ? s->W - ix0 : s->k;
				if (kx_hi <= kx_lo)
					continue;
				size_t len = (size_t)(kx_hi - kx_lo) * s->C;
				for (int ky = 0; ky < s->k; ky++) {
					int iy = oy * s->S - s->pt + ky;
					if (iy < 0 || iy >= s->H)
						continue;
					float *dst =
					    dx + (((size_t)b * s->H + iy) * s->W + ix0 + kx_lo) * s->C;
					const float *src = dcol + ky * run + (size_t)kx_lo * s->C;
					for (size_t e = 0; e < len; e++)
						dst[e] += src[e];
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

static void ref_matmul_acc(size_t rows, size_t k, size_t n, const float *a, const float *m, float *y,
                           size_t ldy)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < n; j++) {
			float acc = y[r * ldy + j];
			for (size_t s = 0; s < k; s++)
				acc += a[r * k + s] * m[s * n + j];
			y[r * ldy + j] = acc;
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
    .matmul_acc = ref_matmul_acc,
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
