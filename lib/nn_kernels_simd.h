/* nn_kernels_simd.h: the SIMD element-wise kernels, written once.
 *
 * Included by nn_kernels.c once per instruction set with NNK_W (floats per
 * vector), NNK_SUFFIX (name suffix), NNK_TARGET (a function attribute, or
 * nothing) and NNK_MADD(a, b, c) (a * b + c, fused where the instruction
 * set has FMA) defined; defines the nnk_ops table nnk_ops_NNK_SUFFIX.
 * Only tanh uses NNK_MADD: the other kernels must stay bit-identical to the
 * reference, which -ffp-contract=off compiles without fused operations.  GCC's
 * vector extensions turn each operation on a vector type into the
 * instruction set's own instructions, so the same text becomes AVX-512,
 * AVX2 or SSE2 code.  Tails shorter than a vector go through a zero-padded
 * copy, so every element follows the same arithmetic.
 */
#define NNK_CAT_(a, b) a##b
#define NNK_CAT(a, b) NNK_CAT_(a, b)
#define NNK_FN(name) NNK_CAT(name##_, NNK_SUFFIX)

#define VF NNK_FN(vf)
#define VI NNK_FN(vi)
#define VB NNK_FN(vb)
#define NNK_INLINE static inline __attribute__((always_inline)) NNK_TARGET
#define NNK_STATIC static NNK_TARGET

typedef float VF __attribute__((vector_size(NNK_W * 4)));
typedef int32_t VI __attribute__((vector_size(NNK_W * 4)));
typedef uint8_t VB __attribute__((vector_size(NNK_W)));

NNK_INLINE VF NNK_FN(splat)(float x)
{
	return (VF){0} + x;
}

NNK_INLINE VF NNK_FN(load)(const float *p)
{
	VF v;
	__builtin_memcpy(&v, p, sizeof v);
	return v;
}

NNK_INLINE void NNK_FN(store)(float *p, VF v)
{
	__builtin_memcpy(p, &v, sizeof v);
}

/* m ? a : b lane by lane, m from a comparison (all ones or all zeros). */
NNK_INLINE VF NNK_FN(select)(VI m, VF a, VF b)
{
	return (VF)(((VI)a & m) | ((VI)b & ~m));
}

/* tanh through expm1: for a = 2|x|, tanh|x| = expm1(a) / (expm1(a) + 2),
 * which has no cancellation near 0 (unlike (1 - e^-a) / (1 + e^-a)).
 * expm1(a) = 2^n * expm1(r) + (2^n - 1) with a = n ln2 + r, |r| <= ln2/2,
 * expm1(r) by its Taylor series to r^7 (truncation below 2e-8 relative,
 * a sixth of a float ulp).
 * ln2 is split (Cody and Waite) so that n * C1 is exact.  a is capped at 20,
 * where tanh is 1 in float. */
NNK_INLINE VF NNK_FN(tanh_v)(VF x)
{
	const VI abs_mask = (VI){0} + 0x7fffffff;
	VI sign = (VI)x & ~abs_mask;
	VF ax = (VF)((VI)x & abs_mask);
	VF a = ax + ax;
	a = NNK_FN(select)(a > 20.0f, (VF){0} + 20.0f, a);
	VI n = __builtin_convertvector(a * 1.44269504088896341f + 0.5f, VI); /* a >= 0: rounds */
	VF nf = __builtin_convertvector(n, VF);
	VF r = a - nf * 0.693359375f;
	r = r - nf * -2.12194440e-4f;
	VF p = NNK_MADD(r, NNK_FN(splat)(1.0f / 5040.0f), NNK_FN(splat)(1.0f / 720.0f));
	p = NNK_MADD(p, r, NNK_FN(splat)(1.0f / 120.0f));
	p = NNK_MADD(p, r, NNK_FN(splat)(1.0f / 24.0f));
	p = NNK_MADD(p, r, NNK_FN(splat)(1.0f / 6.0f));
	p = NNK_MADD(p, r, NNK_FN(splat)(0.5f));
	p = NNK_MADD(p, r, NNK_FN(splat)(1.0f));
	p = p * r;
	VF s = (VF)((n + 127) << 23); /* 2^n, 0 <= n <= 29 */
	VF em = NNK_MADD(s, p, s - 1.0f);
	VF t = (VF)((VI)(em / (em + 2.0f)) | sign);
	return NNK_FN(select)(x != x, x, t);
}

NNK_STATIC void NNK_FN(tanh_fwd)(size_t n, const float *x, float *y)
{
	size_t i = 0;
	for (; i + NNK_W <= n; i += NNK_W)
		NNK_FN(store)(y + i, NNK_FN(tanh_v)(NNK_FN(load)(x + i)));
	if (i < n) {
		float buf[NNK_W] = {0};
		__builtin_memcpy(buf, x + i, (n - i) * sizeof *x);
		NNK_FN(store)(buf, NNK_FN(tanh_v)(NNK_FN(load)(buf)));
		__builtin_memcpy(y + i, buf, (n - i) * sizeof *y);
	}
}

NNK_STATIC void NNK_FN(tanh_bwd)(size_t n, const float *y, const float *dy, float *dx)
{
	size_t i = 0;
	for (; i + NNK_W <= n; i += NNK_W) {
		VF v = NNK_FN(load)(y + i);
		NNK_FN(store)(dx + i, NNK_FN(load)(dy + i) * (1.0f - v * v));
	}
	for (; i < n; i++)
		dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

NNK_STATIC void NNK_FN(relu_fwd)(size_t n, const float *x, float *y)
{
	size_t i = 0;
	for (; i + NNK_W <= n; i += NNK_W) {
		VF v = NNK_FN(load)(x + i);
		NNK_FN(store)(y + i, NNK_FN(select)(v < 0.0f, (VF){0}, v));
	}
	for (; i < n; i++)
		y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

NNK_STATIC void NNK_FN(relu_bwd)(size_t n, const float *y, const float *dy, float *dx)
{
	size_t i = 0;
	for (; i + NNK_W <= n; i += NNK_W) {
		VF v = NNK_FN(load)(y + i);
		NNK_FN(store)(dx + i, NNK_FN(select)(v > 0.0f, NNK_FN(load)(dy + i), (VF){0}));
	}
	for (; i < n; i++)
		dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

NNK_STATIC void NNK_FN(bias_add)(size_t rows, size_t cols, const float *b, float *y)
{
	for (size_t r = 0; r < rows; r++, y += cols) {
		size_t c = 0;
		for (; c + NNK_W <= cols; c += NNK_W)
			NNK_FN(store)(y + c, NNK_FN(load)(y + c) + NNK_FN(load)(b + c));
		for (; c < cols; c++)
			y[c] += b[c];
	}
}

NNK_STATIC void NNK_FN(col_sum)(size_t rows, size_t cols, const float *dy, float *db)
{
	for (size_t r = 0; r < rows; r++, dy += cols) {
		size_t c = 0;
		for (; c + NNK_W <= cols; c += NNK_W)
			NNK_FN(store)(db + c, NNK_FN(load)(db + c) + NNK_FN(load)(dy + c));
		for (; c < cols; c++)
			db[c] += dy[c];
	}
}

NNK_STATIC void NNK_FN(u8_to_f32)(size_t n, const uint8_t *x, float *y)
{
	size_t i = 0;
	for (; i + NNK_W <= n; i += NNK_W) {
		VB v;
		__builtin_memcpy(&v, x + i, sizeof v);
		NNK_FN(store)(y + i, __builtin_convertvector(v, VF));
	}
	for (; i < n; i++)
		y[i] = (float)x[i];
}

static const nnk_ops NNK_FN(nnk_ops) = {
	.name = NNK_NAME,
	.tanh_fwd = NNK_FN(tanh_fwd),
	.tanh_bwd = NNK_FN(tanh_bwd),
	.relu_fwd = NNK_FN(relu_fwd),
	.relu_bwd = NNK_FN(relu_bwd),
	.bias_add = NNK_FN(bias_add),
	.col_sum = NNK_FN(col_sum),
	.u8_to_f32 = NNK_FN(u8_to_f32),
};

#undef VF
#undef VI
#undef VB
#undef NNK_INLINE
#undef NNK_STATIC
#undef NNK_W
#undef NNK_SUFFIX
#undef NNK_TARGET
#undef NNK_NAME
#undef NNK_MADD
