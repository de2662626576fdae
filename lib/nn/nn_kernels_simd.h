/* nn_kernels_simd.h: the SIMD kernels, written once.
 *
 * Included by nn_kernels.c once per instruction set with NNK_W (floats per
 * vector), NNK_SUFFIX (name suffix), NNK_TARGET (a function attribute, or
 * nothing) and NNK_MADD(a, b, c) (a * b + c, fused where the instruction
 * set has FMA), NNK_HSUM(v) (the sum of v's lanes) and NNK_SPLAT(x) (x in
 * every lane) defined; defines the
 * nnk_ops table nnk_ops_NNK_SUFFIX.
 * Only tanh and the convolutions use NNK_MADD: the element-wise kernels must
 * stay bit-identical to the reference, which -ffp-contract=off compiles
 * without fused operations.  GCC's
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

/* x in every lane: NNK_SPLAT, one broadcast.  (Not (VF){0} + x, which
 * must stay an add, since 0 + -0 is +0: an extra floating-point operation,
 * on the pipes the multiply-adds need, for every input the convolutions
 * and the linear layers broadcast.) */
NNK_INLINE VF NNK_FN(splat)(float x)
{
	return (VF)NNK_SPLAT(x);
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

/* Column sums with the sums in registers, four vectors of columns at a
 * time, the rows going by: the additions are the reference's, in its
 * order (db[c] + dy[0][c] + dy[1][c] + ...), without a store and a reload
 * of db per row (whose store-to-load latency bounded the old row-by-row
 * loop: the conv2d's bias gradient sums B * OH * OW rows of 16). */
NNK_STATIC void NNK_FN(col_sum)(size_t rows, size_t cols, const float *dy, float *db)
{
	size_t c = 0;
	for (; c + 4 * NNK_W <= cols; c += 4 * NNK_W) {
		VF a0 = NNK_FN(load)(db + c), a1 = NNK_FN(load)(db + c + NNK_W),
		   a2 = NNK_FN(load)(db + c + 2 * NNK_W), a3 = NNK_FN(load)(db + c + 3 * NNK_W);
		const float *p = dy + c;
		for (size_t r = 0; r < rows; r++, p += cols) {
			a0 = a0 + NNK_FN(load)(p);
			a1 = a1 + NNK_FN(load)(p + NNK_W);
			a2 = a2 + NNK_FN(load)(p + 2 * NNK_W);
			a3 = a3 + NNK_FN(load)(p + 3 * NNK_W);
		}
		NNK_FN(store)(db + c, a0);
		NNK_FN(store)(db + c + NNK_W, a1);
		NNK_FN(store)(db + c + 2 * NNK_W, a2);
		NNK_FN(store)(db + c + 3 * NNK_W, a3);
	}
	for (; c + NNK_W <= cols; c += NNK_W) {
		VF a = NNK_FN(load)(db + c);
		const float *p = dy + c;
		for (size_t r = 0; r < rows; r++, p += cols)
			a = a + NNK_FN(load)(p);
		NNK_FN(store)(db + c, a);
	}
	for (; c < cols; c++) {
		float a = db[c];
		for (size_t r = 0; r < rows; r++)
			a += dy[r * cols + c];
		db[c] = a;
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

/* A partial vector: n < NNK_W floats, zeros after. */
NNK_INLINE VF NNK_FN(load_part)(const float *p, int n)
{
	float buf[NNK_W] = {0};
	__builtin_memcpy(buf, p, (size_t)n * sizeof *p);
	return NNK_FN(load)(buf);
}

NNK_INLINE void NNK_FN(store_part)(float *p, VF v, int n)
{
	float buf[NNK_W];
	NNK_FN(store)(buf, v);
	__builtin_memcpy(p, buf, (size_t)n * sizeof *p);
}

/* Direct convolution.  A vector holds NNK_W filters of one output pixel,
 * and a block computes P output pixels by V filter vectors at once: each
 * weight vector loaded feeds P fused multiply-adds and each broadcast input
 * V, with the P x V sums in registers while the patch goes by.  In HWC the
 * patch row ky of pixel (oy, ox) is the k*C contiguous inputs at
 * (oy*S-pt+ky, ox*S-pl).
 *
 * The output is cut into regions whose patches are clipped alike by the
 * padding: the columns whose patches lie inside the image's width and
 * each edge column, by the rows inside its height and each edge row.  A
 * region's pixels go by in blocks taken in order across rows (and, for the
 * inner rows, across images), so a 7 or 9 pixel wide output (the Nature
 * network's third and second layers) is computed in full blocks, not in
 * rows of 4 + 3 or 8 + 1 pixels whose tails run one pixel at a time (twice
 * the time for the three layers before).  Every output is the bias plus
 * the patch's products inside the image in the same order (rows ky, then
 * along a row), so any block size, region and conv_fwd_relu agree bit for
 * bit. */
/* The most filter vectors a block holds, and the pixels a block of V
 * vectors takes: 24 sums of 32 registers with AVX-512, 12 of 16 else
 * (with the V weight vectors and a broadcast beside them). */
#define NNK_VMAX 4
#if NNK_W == 16
#define NNK_PMAX 8
#define NNK_CONV_P(V) ((V) == 4 ? 6 : 8)
#else
#define NNK_PMAX 8
#define NNK_CONV_P(V) ((V) == 1 ? 8 : (V) == 2 ? 5 : (V) == 3 ? 4 : 3)
#endif

/* max(v, 0) lane by lane as relu_fwd computes it (NaN and -0 stay). */
NNK_INLINE VF NNK_FN(relu_v)(VF v)
{
	return NNK_FN(select)(v < 0.0f, (VF){0}, v);
}

/* P pixels (xp[p] their patches' first inputs read, at patch row ky_lo and
 * column kx_lo, op[p] their outputs at filter 0) by the V filter vectors
 * from fb, the last of them nf_last filters wide, over the patch rows
 * [ky_lo, ky_hi) and columns [kx_lo, kx_hi) (clip, in that order: the
 * part of the patches inside the image).  P and V are constants once
 * inlined: the loops unroll and the sums become registers. */
NNK_INLINE void NNK_FN(conv_block)(const nnk_conv *s, const int *clip, const float *const *xp,
                                   float *const *op, const float *wt, const float *bias, int fb, int nf_last,
                                   const int P, const int V, const bool relu)
{
	const int Fp = (s->F + NNK_W - 1) / NNK_W * NNK_W, run = s->k * s->C;
	const int ky_lo = clip[0], ky_hi = clip[1], kx_lo = clip[2], len = (clip[3] - kx_lo) * s->C;
	const size_t row = (size_t)s->W * s->C;
	VF acc[NNK_PMAX][NNK_VMAX];
#pragma GCC unroll 4
	for (int v = 0; v < V; v++) {
		const VF bv = v < V - 1 || nf_last == NNK_W
		                  ? NNK_FN(load)(bias + fb + v * NNK_W)
		                  : NNK_FN(load_part)(bias + fb + v * NNK_W, nf_last);
#pragma GCC unroll 8
		for (int p = 0; p < P; p++)
			acc[p][v] = bv;
	}
	/* The pixels' inputs as offsets from the first's: one pointer moves
	 * along the patch row, not P of them (which would take P additions an
	 * input and, with AVX-512's 16 general registers, spills). */
	ptrdiff_t d[NNK_PMAX];
#pragma GCC unroll 8
	for (int p = 0; p < P; p++)
		d[p] = xp[p] - xp[0];
	for (int ky = ky_lo; ky < ky_hi; ky++) {
		const float *xr = xp[0] + (size_t)(ky - ky_lo) * row;
		const float *wr = wt + ((size_t)ky * run + (size_t)kx_lo * s->C) * Fp + fb;
		for (int j = 0; j < len; j++, wr += Fp, xr++) {
			VF w[NNK_VMAX];
#pragma GCC unroll 4
			for (int v = 0; v < V; v++)
				w[v] = NNK_FN(load)(wr + v * NNK_W);
#pragma GCC unroll 8
			for (int p = 0; p < P; p++) {
				const VF xv = NNK_FN(splat)(xr[d[p]]);
#pragma GCC unroll 4
				for (int v = 0; v < V; v++)
					acc[p][v] = NNK_MADD(xv, w[v], acc[p][v]);
			}
		}
	}
#pragma GCC unroll 8
	for (int p = 0; p < P; p++)
#pragma GCC unroll 4
		for (int v = 0; v < V; v++) {
			VF a = relu ? NNK_FN(relu_v)(acc[p][v]) : acc[p][v];
			if (v < V - 1 || nf_last == NNK_W)
				NNK_FN(store)(op[p] + fb + v * NNK_W, a);
			else
				NNK_FN(store_part)(op[p] + fb + v * NNK_W, a, nf_last);
		}
}

/* conv_block for V vectors and P pixels, P one of NNK_CONV_P(V), 4 or 1
 * (a block, then the tails).  Not inlined: compiled apart from the walk
 * over the pixels, the sums and the offsets of a block have the registers
 * to themselves (inlined, GCC kept the offsets on the stack, a load beside
 * every broadcast). */
/* conv_block for P one of those three, V a constant once inlined. */
NNK_INLINE void NNK_FN(conv_block_p)(const nnk_conv *s, const int *clip, const float *const *xp,
                                     float *const *op, const float *wt, const float *bias, int fb,
                                     int nf_last, int P, const int V, bool relu)
{
	const int PV = NNK_CONV_P(V);
	if (P == PV && relu)
		NNK_FN(conv_block)(s, clip, xp, op, wt, bias, fb, nf_last, PV, V, true);
	else if (P == PV)
		NNK_FN(conv_block)(s, clip, xp, op, wt, bias, fb, nf_last, PV, V, false);
	else if (P == 4 && relu)
		NNK_FN(conv_block)(s, clip, xp, op, wt, bias, fb, nf_last, 4, V, true);
	else if (P == 4)
		NNK_FN(conv_block)(s, clip, xp, op, wt, bias, fb, nf_last, 4, V, false);
	else if (relu)
		NNK_FN(conv_block)(s, clip, xp, op, wt, bias, fb, nf_last, 1, V, true);
	else
		NNK_FN(conv_block)(s, clip, xp, op, wt, bias, fb, nf_last, 1, V, false);
}
#define NNK_CONV_BLOCK_V(V_)                                                                                 \
	NNK_STATIC __attribute__((noinline)) void NNK_FN(conv_block_v##V_)(                                  \
	    const nnk_conv *s, const int *clip, const float *const *xp, float *const *op, const float *wt,   \
	    const float *bias, int fb, int nf_last, int P, bool relu)                                        \
	{                                                                                                    \
		NNK_FN(conv_block_p)(s, clip, xp, op, wt, bias, fb, nf_last, P, V_, relu);                   \
	}
NNK_CONV_BLOCK_V(1)
NNK_CONV_BLOCK_V(2)
NNK_CONV_BLOCK_V(3)
NNK_CONV_BLOCK_V(4)
#undef NNK_CONV_BLOCK_V

typedef void (*NNK_FN(conv_block_fn))(const nnk_conv *s, const int *clip, const float *const *xp,
                                      float *const *op, const float *wt, const float *bias, int fb,
                                      int nf_last, int P, bool relu);

/* A walk over output pixels: the columns [ox_lo, ox_hi) of the rows
 * [oy_lo, oy_hi) of images [b, nb), in order, whose patches are clipped
 * alike (clip: rows [ky_lo, ky_hi), columns [kx_lo, kx_hi) of the patch).
 * xc and oc are the current pixel's first input read and its output,
 * moved along a row by additions. */
typedef struct NNK_FN(conv_walk) {
	const nnk_conv *s;
	const float *x, *xc;
	float *out, *oc;
	int b, oy, ox, oy_lo, oy_hi, ox_lo, ox_hi, nb;
	int clip[4];
} NNK_FN(conv_walk);

/* Point xc and oc at the pixel (b, oy, ox). */
NNK_INLINE void NNK_FN(conv_walk_seek)(NNK_FN(conv_walk) * w)
{
	const nnk_conv *s = w->s;
	w->xc = w->x + (size_t)w->b * s->H * s->W * s->C +
	        ((size_t)(w->oy * s->S - s->pt + w->clip[0]) * s->W +
	         (size_t)(w->ox * s->S - s->pl + w->clip[2])) *
	            s->C;
	w->oc = w->out + (((size_t)w->b * s->OH + (size_t)w->oy) * s->OW + (size_t)w->ox) * s->F;
}

/* The walk's next pixel into slot p of xp and op. */
NNK_INLINE void NNK_FN(conv_walk_next)(NNK_FN(conv_walk) * w, const float **xp, float **op, int p)
{
	xp[p] = w->xc;
	op[p] = w->oc;
	if (++w->ox < w->ox_hi) {
		w->xc += (size_t)w->s->S * w->s->C;
		w->oc += w->s->F;
		return;
	}
	w->ox = w->ox_lo;
	if (++w->oy == w->oy_hi) {
		w->oy = w->oy_lo;
		if (++w->b == w->nb)
			return; /* the walk's end: no pixel to point at */
	}
	NNK_FN(conv_walk_seek)(w);
}

/* Every pixel of the columns [ox_lo, ox_hi) and rows [oy_lo, oy_hi) of
 * images [b0, nb), whose patches are clipped alike, by one filter group:
 * in blocks of P, then of 4, then one at a time. */
NNK_INLINE void NNK_FN(conv_run)(const nnk_conv *s, const float *x, float *out, int b0, int nb, int oy_lo,
                                 int oy_hi, int ox_lo, int ox_hi, const int *clip, const float *wt,
                                 const float *bias, int fb, int nf_last, NNK_FN(conv_block_fn) block, int P,
                                 bool relu)
{
	if (oy_lo >= oy_hi || ox_lo >= ox_hi || b0 >= nb)
		return;
	NNK_FN(conv_walk)
	w = {s,     x,     NULL,  out,   NULL,  b0, oy_lo,
	     ox_lo, oy_lo, oy_hi, ox_lo, ox_hi, nb, {clip[0], clip[1], clip[2], clip[3]}};
	NNK_FN(conv_walk_seek)(&w);
	size_t n = (size_t)(nb - b0) * (size_t)(oy_hi - oy_lo) * (size_t)(ox_hi - ox_lo);
	const float *xp[NNK_PMAX];
	float *op[NNK_PMAX];
	for (; n >= (size_t)P; n -= (size_t)P) {
		for (int p = 0; p < P; p++)
			NNK_FN(conv_walk_next)(&w, xp, op, p);
		block(s, clip, xp, op, wt, bias, fb, nf_last, P, relu);
	}
	if (P > 4 && n >= 4) {
		for (int p = 0; p < 4; p++)
			NNK_FN(conv_walk_next)(&w, xp, op, p);
		block(s, clip, xp, op, wt, bias, fb, nf_last, 4, relu);
		n -= 4;
	}
	for (; n > 0; n--) {
		NNK_FN(conv_walk_next)(&w, xp, op, 0);
		block(s, clip, xp, op, wt, bias, fb, nf_last, 1, relu);
	}
}

/* The part [*lo, *hi) of a patch that starts at image row or column i0
 * (negative in the padding) inside the image's extent n. */
static inline void NNK_FN(conv_clip)(int i0, int k, int n, int *lo, int *hi)
{
	*lo = i0 < 0 ? -i0 : 0;
	*hi = n - i0 < k ? n - i0 : k;
}

/* The body of conv_fwd and conv_fwd_relu.  The output is cut into regions
 * whose patches are clipped alike: the inner columns [ox_lo, ox_hi)
 * (patches inside the image's width) and each column at the left or
 * right edge, by the inner rows [oy_lo, oy_hi) (walked across images) and
 * each row at the top or bottom edge (image by image).  Each region goes
 * by in blocks, for each group of up to NNK_VMAX filter vectors. */
NNK_STATIC void NNK_FN(conv_fwd_body)(const nnk_conv *s, int B, const float *x, const float *wt,
                                      const float *bias, float *out, const bool relu)
{
	const int k = s->k, F = s->F;
	int ox_lo, ox_hi;
	nnk_conv_inner_cols(s, &ox_lo, &ox_hi);
	/* The rows whose patches lie inside the image's height, as
	 * nnk_conv_inner_cols finds the columns. */
	int oy_lo = (s->pt + s->S - 1) / s->S, last = s->H - k + s->pt;
	int oy_hi = last < 0 ? 0 : last / s->S + 1;
	if (oy_hi > s->OH)
		oy_hi = s->OH;
	if (oy_lo > oy_hi)
		oy_lo = oy_hi;
	const int nvec = (F + NNK_W - 1) / NNK_W;
	for (int fb = 0; fb < F; fb += NNK_VMAX * NNK_W) {
		const int V = nvec - fb / NNK_W < NNK_VMAX ? nvec - fb / NNK_W : NNK_VMAX;
		const int nf_last = fb / NNK_W + V == nvec ? F - (nvec - 1) * NNK_W : NNK_W;
		const NNK_FN(conv_block_fn) block = V == 1   ? NNK_FN(conv_block_v1)
		                                    : V == 2 ? NNK_FN(conv_block_v2)
		                                    : V == 3 ? NNK_FN(conv_block_v3)
		                                             : NNK_FN(conv_block_v4);
		const int P = NNK_CONV_P(V);
		/* Column regions: the inner columns at once, the edges one by one. */
		for (int c0 = 0; c0 < s->OW;) {
			const int c1 = c0 == ox_lo && ox_lo < ox_hi ? ox_hi : c0 + 1;
			int clip[4];
			NNK_FN(conv_clip)(c0 * s->S - s->pl, k, s->W, &clip[2], &clip[3]);
			clip[0] = 0;
			clip[1] = k;
			NNK_FN(conv_run)
			(s, x, out, 0, B, oy_lo, oy_hi, c0, c1, clip, wt, bias, fb, nf_last, block, P, relu);
			for (int b = 0; b < B; b++)
				for (int oy = 0; oy < s->OH; oy++) {
					if (oy == oy_lo && oy_lo < oy_hi)
						oy = oy_hi;
					if (oy >= s->OH)
						break;
					NNK_FN(conv_clip)(oy * s->S - s->pt, k, s->H, &clip[0], &clip[1]);
					NNK_FN(conv_run)
					(s, x, out, b, b + 1, oy, oy + 1, c0, c1, clip, wt, bias, fb, nf_last,
					 block, P, relu);
				}
			c0 = c1;
		}
	}
}

NNK_STATIC void NNK_FN(conv_fwd)(const nnk_conv *s, int B, const float *x, const float *wt, const float *bias,
                                 float *out)
{
	NNK_FN(conv_fwd_body)(s, B, x, wt, bias, out, false);
}

NNK_STATIC void NNK_FN(conv_fwd_relu)(const nnk_conv *s, int B, const float *x, const float *wt,
                                      const float *bias, float *out)
{
	NNK_FN(conv_fwd_body)(s, B, x, wt, bias, out, true);
}

/* Weight gradient: eight rows of dwt (patch positions j0..j0+7 of patch
 * row ky) by V filter vectors stay in registers while the output pixels of
 * one image go by, each adding its input at j times its dy vectors; one
 * image's x and dy stay in the L1 cache across the passes.  V is up to 3
 * with AVX-512's 32 registers (24 sums: each broadcast input feeds V
 * multiply-adds, where one vector left the loads, 9 for 8 multiply-adds,
 * the bound), 1 with 16.  The last block of a patch row may have fewer
 * than eight positions (rem): the others are skipped.  Output rows whose
 * patch row ky is in the padding add nothing and are skipped; so are, one
 * position at a time, the padding inputs of the columns at the edges
 * (those outside [ox_lo, ox_hi), where all eight positions are inside the
 * image), which go first.  Each weight sums in the same order whatever V
 * is: images, rows, then the edge columns and the inside. */
#if NNK_W == 16
#define NNK_DW_VMAX 3
#else
#define NNK_DW_VMAX 1
#endif

/* One block: image xb, its dy at the group's first filter (dyb), dwt's
 * rows at patch row ky and the same filter (dr).  remc: rem as a constant
 * (8, or 4: MinAtar's 3x3x4 patch rows are 8 + 4), so the position loops
 * unroll without tests and the sums stay in registers; 0 where rem is
 * only known at run time. */
NNK_INLINE void NNK_FN(dw_block)(const nnk_conv *s, const float *xb, const float *dyb, float *dr, int ky,
                                 int j0, int rem_, int nf_last, const int V, const int remc)
{
	const int rem = remc ? remc : rem_;
	const int C = s->C, F = s->F, Fp = (F + NNK_W - 1) / NNK_W * NNK_W, S = s->S, W = s->W;
	/* The block's patch columns kx_min..kx_max: the output columns that
	 * read no padding. */
	const int kx_min = j0 / C, kx_max = (j0 + rem - 1) / C;
	const int need_lo = s->pl - kx_min, last = W - 1 + s->pl - kx_max;
	int ox_lo = need_lo > 0 ? (need_lo + S - 1) / S : 0;
	int ox_hi = last < 0 ? 0 : last / S + 1;
	if (ox_hi > s->OW)
		ox_hi = s->OW;
	if (ox_lo > ox_hi)
		ox_lo = ox_hi;
	VF acc[8][NNK_DW_VMAX];
#pragma GCC unroll 8
	for (int p = 0; p < 8; p++)
#pragma GCC unroll 4
		for (int v = 0; v < V; v++)
			acc[p][v] = p < rem ? NNK_FN(load)(dr + (size_t)(j0 + p) * Fp + v * NNK_W) : (VF){0};
	const size_t SC = (size_t)S * C;
	for (int oy = 0; oy < s->OH; oy++) {
		const int iy = oy * S - s->pt + ky;
		if (iy < 0 || iy >= s->H)
			continue;
		const float *grow = dyb + (size_t)oy * s->OW * F;
		const float *xrow = xb + (size_t)iy * W * C;
		/* The edges, each input checked. */
		for (int side = 0; side < 2; side++)
			for (int ox = side ? ox_hi : 0; ox < (side ? s->OW : ox_lo); ox++) {
				const float *g = grow + (size_t)ox * F;
				VF gv[NNK_DW_VMAX];
#pragma GCC unroll 4
				for (int v = 0; v < V; v++)
					gv[v] = v < V - 1 || nf_last == NNK_W
					            ? NNK_FN(load)(g + v * NNK_W)
					            : NNK_FN(load_part)(g + v * NNK_W, nf_last);
#pragma GCC unroll 8
				for (int p = 0; p < 8; p++) {
					if (p >= rem)
						continue;
					const int col = ox * S - s->pl + (j0 + p) / C;
					if (col < 0 || col >= W)
						continue;
					const VF xv = NNK_FN(splat)(xrow[(size_t)col * C + (j0 + p) % C]);
#pragma GCC unroll 4
					for (int v = 0; v < V; v++)
						acc[p][v] = NNK_MADD(xv, gv[v], acc[p][v]);
				}
			}
		/* The inside: all eight inputs in the image (the patch may start
		 * in the padding, left of the block's first column). */
		if (ox_lo == ox_hi)
			continue;
		const float *g = grow + (size_t)ox_lo * F;
		const float *xr = xrow + ((ptrdiff_t)(ox_lo * S - s->pl) * C + j0);
		for (int ox = ox_lo; ox < ox_hi; ox++, g += F, xr += SC) {
			VF gv[NNK_DW_VMAX];
#pragma GCC unroll 4
			for (int v = 0; v < V; v++)
				gv[v] = v < V - 1 || nf_last == NNK_W
				            ? NNK_FN(load)(g + v * NNK_W)
				            : NNK_FN(load_part)(g + v * NNK_W, nf_last);
#pragma GCC unroll 8
			for (int p = 0; p < 8; p++) {
				if (p >= rem)
					continue;
				const VF xv = NNK_FN(splat)(xr[p]);
#pragma GCC unroll 4
				for (int v = 0; v < V; v++)
					acc[p][v] = NNK_MADD(xv, gv[v], acc[p][v]);
			}
		}
	}
#pragma GCC unroll 8
	for (int p = 0; p < 8; p++)
#pragma GCC unroll 4
		for (int v = 0; v < V; v++)
			if (p < rem)
				NNK_FN(store)(dr + (size_t)(j0 + p) * Fp + v * NNK_W, acc[p][v]);
}

/* dw_block for V vectors, compiled apart (the sums have the registers to
 * themselves). */
#define NNK_DW_BLOCK_V(V_)                                                                                   \
	NNK_STATIC __attribute__((noinline)) void NNK_FN(dw_block_v##V_)(                                    \
	    const nnk_conv *s, const float *xb, const float *dyb, float *dr, int ky, int j0, int rem,        \
	    int nf_last)                                                                                     \
	{                                                                                                    \
		if (rem == 8)                                                                                \
			NNK_FN(dw_block)(s, xb, dyb, dr, ky, j0, rem, nf_last, V_, 8);                       \
		else if (rem == 4)                                                                           \
			NNK_FN(dw_block)(s, xb, dyb, dr, ky, j0, rem, nf_last, V_, 4);                       \
		else                                                                                         \
			NNK_FN(dw_block)(s, xb, dyb, dr, ky, j0, rem, nf_last, V_, 0);                       \
	}
NNK_DW_BLOCK_V(1)
#if NNK_DW_VMAX >= 3
NNK_DW_BLOCK_V(2)
NNK_DW_BLOCK_V(3)
#endif
#undef NNK_DW_BLOCK_V

NNK_STATIC void NNK_FN(conv_dw)(const nnk_conv *s, int B, const float *x, const float *dy, float *dwt)
{
	const int k = s->k, C = s->C, F = s->F, Fp = (F + NNK_W - 1) / NNK_W * NNK_W, run = k * C;
	const int nvec = (F + NNK_W - 1) / NNK_W;
	for (int b = 0; b < B; b++) {
		const float *xb = x + (size_t)b * s->H * s->W * C;
		const float *dyi = dy + (size_t)b * s->OH * s->OW * F;
		for (int fb = 0; fb < F; fb += NNK_DW_VMAX * NNK_W) {
			const int V = nvec - fb / NNK_W < NNK_DW_VMAX ? nvec - fb / NNK_W : NNK_DW_VMAX;
			const int nf_last = fb / NNK_W + V == nvec ? F - (nvec - 1) * NNK_W : NNK_W;
			for (int ky = 0; ky < k; ky++) {
				float *dr = dwt + (size_t)ky * run * Fp + fb;
				for (int j0 = 0; j0 < run; j0 += 8) {
					const int rem = run - j0 < 8 ? run - j0 : 8;
#if NNK_DW_VMAX >= 3
					if (V == 3)
						NNK_FN(dw_block_v3)
					(s, xb, dyi + fb, dr, ky, j0, rem, nf_last);
					else if (V == 2)
					    NNK_FN(dw_block_v2)(s, xb, dyi + fb, dr, ky, j0, rem, nf_last);
					else
#endif
					    NNK_FN(dw_block_v1)(s, xb, dyi + fb, dr, ky, j0, rem, nf_last);
				}
			}
		}
	}
}
#undef NNK_DW_VMAX
/* ---- linear layers ------------------------------------------------------
 *
 * The three matrix products of a linear layer, for the narrow shapes of RL
 * models (n_out of 128 or less, batches of tens to hundreds of rows), where
 * BLAS spends as long packing the weight matrix into its panel layout on
 * every call as it does multiplying (bench/nn_bench has the figures).
 * These read the matrices where they lie.  Each is a block of LR rows (or
 * weight rows) by four: the block's accumulators stay in registers while
 * the shared dimension goes by, each vector loaded feeding LR or four
 * fused multiply-adds.  LR is 4 where there are 32 vector registers
 * (AVX-512), 2 where there are 16.  The blocks are always-inline functions
 * of constant sizes, so their loops unroll and their arrays become
 * registers; the tails use the same functions with smaller sizes. */
#if NNK_W == 16
#define NNK_LR 4
#else
#define NNK_LR 2
#endif

/* The sum of v's lanes: NNK_HSUM, the instruction set's shuffles where it
 * has them (a few instructions where lane by lane costs NNK_W). */
NNK_INLINE float NNK_FN(hsum)(VF v)
{
	return NNK_HSUM(v);
}

/* y[r][o] = b[o] + x[r] . w[o] for R rows from r and NO outputs from o:
 * dot products along n_in, a vector at a time, then the tail. */
NNK_INLINE void NNK_FN(lin_fwd_block)(int R, int NO, size_t n_in, size_t n_out, const float *x,
                                      const float *w, const float *b, float *y, const bool relu)
{
	VF acc[NNK_LR][4];
#pragma GCC unroll 4
	for (int i = 0; i < R; i++)
#pragma GCC unroll 4
		for (int o = 0; o < NO; o++)
			acc[i][o] = (VF){0};
	size_t k = 0;
	for (; k + NNK_W <= n_in; k += NNK_W) {
		VF wv[4];
#pragma GCC unroll 4
		for (int o = 0; o < NO; o++)
			wv[o] = NNK_FN(load)(w + (size_t)o * n_in + k);
#pragma GCC unroll 4
		for (int i = 0; i < R; i++) {
			const VF xv = NNK_FN(load)(x + (size_t)i * n_in + k);
#pragma GCC unroll 4
			for (int o = 0; o < NO; o++)
				acc[i][o] = NNK_MADD(xv, wv[o], acc[i][o]);
		}
	}
#pragma GCC unroll 4
	for (int i = 0; i < R; i++)
#pragma GCC unroll 4
		for (int o = 0; o < NO; o++) {
			float s = NNK_FN(hsum)(acc[i][o]);
			for (size_t t = k; t < n_in; t++)
				s += x[(size_t)i * n_in + t] * w[(size_t)o * n_in + t];
			s = b[o] + s;
			y[(size_t)i * n_out + o] = relu && s < 0.0f ? 0.0f : s;
		}
}

/* The body of linear_fwd and linear_fwd_relu. */
#define LIN_FWD_BLOCK NNK_FN(lin_fwd_block)
NNK_INLINE void NNK_FN(linear_fwd_body)(size_t rows, size_t n_in, size_t n_out, const float *x,
                                        const float *w, const float *b, float *y, const bool relu)
{
	size_t r = 0;
	for (; r + NNK_LR <= rows; r += NNK_LR) {
		size_t o = 0;
		for (; o + 4 <= n_out; o += 4)
			LIN_FWD_BLOCK(NNK_LR, 4, n_in, n_out, x + r * n_in, w + o * n_in, b + o,
			              y + r * n_out + o, relu);
		for (; o < n_out; o++)
			LIN_FWD_BLOCK(NNK_LR, 1, n_in, n_out, x + r * n_in, w + o * n_in, b + o,
			              y + r * n_out + o, relu);
	}
	for (; r < rows; r++) {
		size_t o = 0;
		for (; o + 4 <= n_out; o += 4)
			LIN_FWD_BLOCK(1, 4, n_in, n_out, x + r * n_in, w + o * n_in, b + o, y + r * n_out + o,
			              relu);
		for (; o < n_out; o++)
			LIN_FWD_BLOCK(1, 1, n_in, n_out, x + r * n_in, w + o * n_in, b + o, y + r * n_out + o,
			              relu);
	}
}
#undef LIN_FWD_BLOCK

NNK_STATIC void NNK_FN(linear_fwd)(size_t rows, size_t n_in, size_t n_out, const float *x, const float *w,
                                   const float *b, float *y)
{
	NNK_FN(linear_fwd_body)(rows, n_in, n_out, x, w, b, y, false);
}

NNK_STATIC void NNK_FN(linear_fwd_relu)(size_t rows, size_t n_in, size_t n_out, const float *x,
                                        const float *w, const float *b, float *y)
{
	NNK_FN(linear_fwd_body)(rows, n_in, n_out, x, w, b, y, true);
}

/* out[i][k..] (+)= sum over s < ns of a[i][s] * m[s][k..] for R rows i and
 * NV vectors of columns from k: the shape of both dx = dy w (a = dy,
 * m = w, s over outputs) and dw += dy^T x (a = dy^T, read with strides,
 * m = x, s over rows).  a[i][s] is at a + i * ai + s * as; m's rows are
 * ldm apart, out's ldo.  acc_out says whether out is added to (dw) or
 * overwritten (dx). */
NNK_INLINE void NNK_FN(lin_axpy_block)(int R, int NV, bool acc_out, size_t ns, const float *a, size_t ai,
                                       size_t as, const float *m, size_t ldm, float *out, size_t ldo,
                                       const float *mask)
{
	VF acc[NNK_LR][4];
#pragma GCC unroll 4
	for (int i = 0; i < R; i++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			acc[i][v] =
			    acc_out ? NNK_FN(load)(out + (size_t)i * ldo + (size_t)v * NNK_W) : (VF){0};
	for (size_t s = 0; s < ns; s++) {
		VF mv[4];
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			mv[v] = NNK_FN(load)(m + s * ldm + (size_t)v * NNK_W);
#pragma GCC unroll 4
		for (int i = 0; i < R; i++) {
			const VF av = NNK_FN(splat)(a[(size_t)i * ai + s * as]);
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++)
				acc[i][v] = NNK_MADD(av, mv[v], acc[i][v]);
		}
	}
#pragma GCC unroll 4
	for (int i = 0; i < R; i++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++) {
			const size_t at = (size_t)i * ldo + (size_t)v * NNK_W;
			if (mask) /* relu_bwd's rule: kept where the relu's output > 0 */
				acc[i][v] =
				    NNK_FN(select)(NNK_FN(load)(mask + at) > 0.0f, acc[i][v], (VF){0});
			NNK_FN(store)(out + at, acc[i][v]);
		}
}

/* The columns of the row block: four vectors at a time, then one, then the
 * scalar tail.  mask (NULL, or laid out as out) zeroes the results where
 * it is not > 0. */
#define LIN_AXPY_BLOCK NNK_FN(lin_axpy_block)
NNK_INLINE void NNK_FN(lin_axpy_rows)(int R, bool acc_out, size_t ncols, size_t ns, const float *a, size_t ai,
                                      size_t as, const float *m, size_t ldm, float *out, size_t ldo,
                                      const float *mask)
{
	size_t k = 0;
	for (; k + 4 * NNK_W <= ncols; k += 4 * NNK_W)
		LIN_AXPY_BLOCK(R, 4, acc_out, ns, a, ai, as, m + k, ldm, out + k, ldo,
		               mask ? mask + k : NULL);
	for (; k + NNK_W <= ncols; k += NNK_W)
		LIN_AXPY_BLOCK(R, 1, acc_out, ns, a, ai, as, m + k, ldm, out + k, ldo,
		               mask ? mask + k : NULL);
	for (; k < ncols; k++)
		for (int i = 0; i < R; i++) {
			float sum = acc_out ? out[(size_t)i * ldo + k] : 0.0f;
			for (size_t s = 0; s < ns; s++)
				sum += a[(size_t)i * ai + s * as] * m[s * ldm + k];
			out[(size_t)i * ldo + k] = mask && !(mask[(size_t)i * ldo + k] > 0.0f) ? 0.0f : sum;
		}
}
#undef LIN_AXPY_BLOCK

/* out (rows, n; rows ldo floats apart) = a (rows, k) m (k, n), or += with
 * acc_out, zeroed where mask (NULL, or laid out as out) is not > 0: the
 * body of linear_dx and linear_dx_relu (a = dy, m = w, the mask the relu's
 * output) and of matmul_acc. */
#define LIN_AXPY_ROWS NNK_FN(lin_axpy_rows)
NNK_INLINE void NNK_FN(matmul_rows)(size_t rows, const bool acc_out, size_t k, size_t n, const float *a,
                                    const float *m, float *out, size_t ldo, const float *mask)
{
	size_t r = 0;
	for (; r + NNK_LR <= rows; r += NNK_LR)
		LIN_AXPY_ROWS(NNK_LR, acc_out, n, k, a + r * k, k, 1, m, n, out + r * ldo, ldo,
		              mask ? mask + r * ldo : NULL);
	for (; r < rows; r++)
		LIN_AXPY_ROWS(1, acc_out, n, k, a + r * k, k, 1, m, n, out + r * ldo, ldo,
		              mask ? mask + r * ldo : NULL);
}

NNK_STATIC void NNK_FN(linear_dx)(size_t rows, size_t n_in, size_t n_out, const float *dy, const float *w,
                                  float *dx)
{
	NNK_FN(matmul_rows)(rows, false, n_out, n_in, dy, w, dx, n_in, NULL);
}

NNK_STATIC void NNK_FN(linear_dx_relu)(size_t rows, size_t n_in, size_t n_out, const float *dy,
                                       const float *w, const float *y, float *dx)
{
	NNK_FN(matmul_rows)(rows, false, n_out, n_in, dy, w, dx, n_in, y);
}

NNK_STATIC void NNK_FN(linear_dw)(size_t rows, size_t n_in, size_t n_out, const float *dy, const float *x,
                                  float *dw)
{
	size_t o = 0;
	for (; o + NNK_LR <= n_out; o += NNK_LR)
		LIN_AXPY_ROWS(NNK_LR, true, n_in, rows, dy + o, 1, n_out, x, n_in, dw + o * n_in, n_in, NULL);
	for (; o < n_out; o++)
		LIN_AXPY_ROWS(1, true, n_in, rows, dy + o, 1, n_out, x, n_in, dw + o * n_in, n_in, NULL);
}

NNK_STATIC void NNK_FN(matmul_acc)(size_t rows, size_t k, size_t n, const float *a, const float *m, float *y,
                                   size_t ldy)
{
	NNK_FN(matmul_rows)(rows, true, k, n, a, m, y, ldy, NULL);
}
#undef LIN_AXPY_ROWS
#undef NNK_LR

#undef NNK_VMAX
#undef NNK_PMAX
#undef NNK_CONV_P

static const nnk_ops NNK_FN(nnk_ops) = {
    .name = NNK_NAME,
    .fpad = NNK_W,
    .tanh_fwd = NNK_FN(tanh_fwd),
    .tanh_bwd = NNK_FN(tanh_bwd),
    .relu_fwd = NNK_FN(relu_fwd),
    .relu_bwd = NNK_FN(relu_bwd),
    .bias_add = NNK_FN(bias_add),
    .col_sum = NNK_FN(col_sum),
    .u8_to_f32 = NNK_FN(u8_to_f32),
    .conv_fwd = NNK_FN(conv_fwd),
    .conv_dw = NNK_FN(conv_dw),
    .conv_fwd_relu = NNK_FN(conv_fwd_relu),
    .linear_fast = NNK_W == 16,
    .linear_fwd = NNK_FN(linear_fwd),
    .linear_fwd_relu = NNK_FN(linear_fwd_relu),
    .linear_dx = NNK_FN(linear_dx),
    .linear_dx_relu = NNK_FN(linear_dx_relu),
    .linear_dw = NNK_FN(linear_dw),
    .matmul_acc = NNK_FN(matmul_acc),
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
#undef NNK_HSUM
#undef NNK_SPLAT
