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

/* Direct convolution.  One vector holds NNK_W filters of one output pixel;
 * eight pixels along a row are computed together, so each weight vector
 * loaded feeds eight fused multiply-adds with broadcast inputs.  In HWC the
 * patch row ky of pixel ox is the k*C contiguous inputs at (oy*S-pt+ky,
 * ox*S-pl), and pixel ox+p's is S*C further on (then blocks of four).  Patch rows in the padding
 * (above or below the image) are skipped for the whole row of pixels; the
 * blocks of eight run on the columns whose patches are inside the image's
 * width (nnk_conv_inner_cols), and the columns at the edges one pixel at a
 * time, their patch rows clipped to the image. */
#define NNK_REP8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define NNK_REP4(X) X(0) X(1) X(2) X(3)

/* max(v, 0) lane by lane as relu_fwd computes it (NaN and -0 stay). */
NNK_INLINE VF NNK_FN(relu_v)(VF v)
{
	return NNK_FN(select)(v < 0.0f, (VF){0}, v);
}

/* One output pixel's nf filters from fb: the patch at image row iy0 (< 0
 * above the image), clipped to the image's rows and columns. */
NNK_INLINE void NNK_FN(conv_pixel)(const nnk_conv *s, const float *xb, const float *wt, int iy0, int ox,
                                   int fb, int nf, VF bv, float *o, const bool relu)
{
	const int k = s->k, C = s->C, Fp = (s->F + NNK_W - 1) / NNK_W * NNK_W, run = k * C;
	const int ky_lo = iy0 < 0 ? -iy0 : 0, ky_hi = s->H - iy0 < k ? s->H - iy0 : k;
	const int ix0 = ox * s->S - s->pl;
	const int kx_lo = ix0 < 0 ? -ix0 : 0, kx_hi = s->W - ix0 < k ? s->W - ix0 : k;
	const int len = (kx_hi - kx_lo) * C;
	VF acc = bv;
	for (int ky = ky_lo; ky < ky_hi; ky++) {
		const float *xr = xb + ((size_t)(iy0 + ky) * s->W + (ix0 + kx_lo)) * C;
		const float *wr = wt + ((size_t)ky * run + (size_t)kx_lo * C) * Fp + fb;
		for (int j = 0; j < len; j++)
			acc = NNK_MADD(NNK_FN(splat)(xr[j]), NNK_FN(load)(wr + (size_t)j * Fp), acc);
	}
	if (relu)
		acc = NNK_FN(relu_v)(acc);
	if (nf == NNK_W)
		NNK_FN(store)(o + (size_t)ox * s->F, acc);
	else
		NNK_FN(store_part)(o + (size_t)ox * s->F, acc, nf);
}

/* The body of conv_fwd and conv_fwd_relu (relu: max(0, .) before the
 * store, a constant once inlined). */
NNK_INLINE void NNK_FN(conv_fwd_body)(const nnk_conv *s, int B, const float *x, const float *wt,
                                      const float *bias, float *out, const bool relu)
{
	const int k = s->k, C = s->C, F = s->F, Fp = (F + NNK_W - 1) / NNK_W * NNK_W, run = k * C;
	const size_t SC = (size_t)s->S * C;
	int in_lo, in_hi;
	nnk_conv_inner_cols(s, &in_lo, &in_hi);
	for (int b = 0; b < B; b++) {
		const float *xb = x + (size_t)b * s->H * s->W * C;
		for (int oy = 0; oy < s->OH; oy++) {
			const int iy0 = oy * s->S - s->pt;
			const int ky_lo = iy0 < 0 ? -iy0 : 0, ky_hi = s->H - iy0 < k ? s->H - iy0 : k;
#if NNK_W == 16
			/* With 32 vector registers, the blocks of eight pixels
			 * take two filter vectors at once where there are 32
			 * filters or more: each input broadcast feeds two
			 * multiply-adds (the loads, not the multiply-adds, bound
			 * the one-vector blocks).  The same sums in the same
			 * order as the one-vector blocks. */
			for (int fb = 0; fb + 2 * NNK_W <= F; fb += 2 * NNK_W) {
				const VF bv = NNK_FN(load)(bias + fb), bw = NNK_FN(load)(bias + fb + NNK_W);
				float *o = out + (((size_t)b * s->OH + oy) * s->OW) * F + fb;
				for (int ox = in_lo; ox + 8 <= in_hi; ox += 8) {
#define ACC2_INIT(p) VF acc##p = bv, bcc##p = bw;
					NNK_REP8(ACC2_INIT)
					for (int ky = ky_lo; ky < ky_hi; ky++) {
						const float *xr =
						    xb +
						    ((size_t)(iy0 + ky) * s->W + (ox * s->S - s->pl)) * C;
						const float *wr = wt + (size_t)ky * run * Fp + fb;
						for (int j = 0; j < run; j++) {
							const VF w = NNK_FN(load)(wr + (size_t)j * Fp);
							const VF w2 =
							    NNK_FN(load)(wr + (size_t)j * Fp + NNK_W);
#define ACC2_FMA(p)                                                                                          \
	{                                                                                                    \
		const VF xv_ = NNK_FN(splat)(xr[(p)*SC + j]);                                                \
		acc##p = NNK_MADD(xv_, w, acc##p);                                                           \
		bcc##p = NNK_MADD(xv_, w2, bcc##p);                                                          \
	}
							NNK_REP8(ACC2_FMA)
						}
					}
#define ACC2_STORE(p)                                                                                        \
	if (relu) {                                                                                          \
		acc##p = NNK_FN(relu_v)(acc##p);                                                             \
		bcc##p = NNK_FN(relu_v)(bcc##p);                                                             \
	}                                                                                                    \
	NNK_FN(store)(o + (size_t)(ox + (p)) * F, acc##p);                                                   \
	NNK_FN(store)(o + (size_t)(ox + (p)) * F + NNK_W, bcc##p);
					NNK_REP8(ACC2_STORE)
				}
			}
			const int paired = F / (2 * NNK_W) * (2 * NNK_W); /* filters done so */
#else
			const int paired = 0;
#endif
			for (int fb = 0; fb < F; fb += NNK_W) {
				const int nf = F - fb < NNK_W ? F - fb : NNK_W;
				const VF bv =
				    nf == NNK_W ? NNK_FN(load)(bias + fb) : NNK_FN(load_part)(bias + fb, nf);
				float *o = out + (((size_t)b * s->OH + oy) * s->OW) * F + fb;
				int ox = 0;
				for (; ox < in_lo; ox++) {
					NNK_FN(conv_pixel)(s, xb, wt, iy0, ox, fb, nf, bv, o, relu);
				}
				if (fb < paired) /* its blocks of eight are done */
					ox = in_lo + (in_hi - in_lo) / 8 * 8;
				for (; ox + 8 <= in_hi; ox += 8) {
#define ACC_INIT(p) VF acc##p = bv;
					NNK_REP8(ACC_INIT)
					for (int ky = ky_lo; ky < ky_hi; ky++) {
						const float *xr =
						    xb +
						    ((size_t)(iy0 + ky) * s->W + (ox * s->S - s->pl)) * C;
						const float *wr = wt + (size_t)ky * run * Fp + fb;
						for (int j = 0; j < run; j++) {
							const VF w = NNK_FN(load)(wr + (size_t)j * Fp);
#define ACC_FMA(p) acc##p = NNK_MADD(NNK_FN(splat)(xr[(p)*SC + j]), w, acc##p);
							NNK_REP8(ACC_FMA)
						}
					}
#define ACC_STORE(p)                                                                                         \
	if (relu)                                                                                            \
		acc##p = NNK_FN(relu_v)(acc##p);                                                             \
	if (nf == NNK_W)                                                                                     \
		NNK_FN(store)(o + (size_t)(ox + (p)) * F, acc##p);                                           \
	else                                                                                                 \
		NNK_FN(store_part)(o + (size_t)(ox + (p)) * F, acc##p, nf);
					NNK_REP8(ACC_STORE)
				}
				/* Then four at a time (the Nature DQN network's
				 * third layer is 7 wide, its first 20). */
				for (; ox + 4 <= in_hi; ox += 4) {
					NNK_REP4(ACC_INIT)
					for (int ky = ky_lo; ky < ky_hi; ky++) {
						const float *xr =
						    xb +
						    ((size_t)(iy0 + ky) * s->W + (ox * s->S - s->pl)) * C;
						const float *wr = wt + (size_t)ky * run * Fp + fb;
						for (int j = 0; j < run; j++) {
							const VF w = NNK_FN(load)(wr + (size_t)j * Fp);
							NNK_REP4(ACC_FMA)
						}
					}
					NNK_REP4(ACC_STORE)
				}
				for (; ox < s->OW; ox++) {
					NNK_FN(conv_pixel)(s, xb, wt, iy0, ox, fb, nf, bv, o, relu);
				}
			}
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
 * row ky) stay in registers while the output pixels of one image go by,
 * each adding its input at j times its dy vector; one image's x and dy
 * stay in the L1 cache across the passes.  The last block of a patch row
 * may have fewer than eight positions (rem): the others are skipped.
 * Output rows whose patch row ky is in the padding add nothing and are
 * skipped; so are, one position at a time, the padding inputs of the
 * columns at the edges (those outside [ox_lo, ox_hi), where all eight
 * positions are inside the image). */
NNK_STATIC void NNK_FN(conv_dw)(const nnk_conv *s, int B, const float *x, const float *dy, float *dwt)
{
	const int k = s->k, C = s->C, F = s->F, Fp = (F + NNK_W - 1) / NNK_W * NNK_W, run = k * C;
	const int S = s->S, W = s->W;
	for (int b = 0; b < B; b++) {
		const float *xb = x + (size_t)b * s->H * W * C;
		for (int fb = 0; fb < F; fb += NNK_W) {
			const int nf = F - fb < NNK_W ? F - fb : NNK_W;
			for (int ky = 0; ky < k; ky++) {
				float *dr = dwt + (size_t)ky * run * Fp + fb;
				for (int j0 = 0; j0 < run; j0 += 8) {
					const int rem = run - j0 < 8 ? run - j0 : 8;
					/* The block's patch columns kx_min..kx_max: the
					 * output columns that read no padding. */
					const int kx_min = j0 / C, kx_max = (j0 + rem - 1) / C;
					const int need_lo = s->pl - kx_min, last = W - 1 + s->pl - kx_max;
					int ox_lo = need_lo > 0 ? (need_lo + S - 1) / S : 0;
					int ox_hi = last < 0 ? 0 : last / S + 1;
					if (ox_hi > s->OW)
						ox_hi = s->OW;
					if (ox_lo > ox_hi)
						ox_lo = ox_hi;
#define DW_INIT(p) VF acc##p = (p) < rem ? NNK_FN(load)(dr + (size_t)(j0 + (p)) * Fp) : (VF){0};
					NNK_REP8(DW_INIT)
					for (int oy = 0; oy < s->OH; oy++) {
						const int iy = oy * S - s->pt + ky;
						if (iy < 0 || iy >= s->H)
							continue;
						const float *grow =
						    dy + (((size_t)b * s->OH + oy) * s->OW) * F + fb;
						const float *xrow = xb + (size_t)iy * W * C;
						/* The edges, each input checked. */
#define DW_FMA_EDGE(p)                                                                                       \
	if ((p) < rem) {                                                                                     \
		const int col_ = ox * S - s->pl + (j0 + (p)) / C;                                            \
		if (col_ >= 0 && col_ < W)                                                                   \
			acc##p =                                                                             \
			    NNK_MADD(NNK_FN(splat)(xrow[(size_t)col_ * C + (j0 + (p)) % C]), gv, acc##p);    \
	}
						for (int side = 0; side < 2; side++)
							for (int ox = side ? ox_hi : 0;
							     ox < (side ? s->OW : ox_lo); ox++) {
								const float *g = grow + (size_t)ox * F;
								const VF gv = nf == NNK_W
								                  ? NNK_FN(load)(g)
								                  : NNK_FN(load_part)(g, nf);
								NNK_REP8(DW_FMA_EDGE)
							}
						/* The inside: all eight inputs in the image
						 * (the patch may start in the padding, left of
						 * the block's first column). */
						if (ox_lo == ox_hi)
							continue;
						const float *g = grow + (size_t)ox_lo * F;
						const float *xr =
						    xrow + ((ptrdiff_t)(ox_lo * S - s->pl) * C + j0);
						const size_t SC = (size_t)S * C;
						if (rem == 8) {
							for (int ox = ox_lo; ox < ox_hi;
							     ox++, g += F, xr += SC) {
								const VF gv = nf == NNK_W
								                  ? NNK_FN(load)(g)
								                  : NNK_FN(load_part)(g, nf);
#define DW_FMA(p) acc##p = NNK_MADD(NNK_FN(splat)(xr[p]), gv, acc##p);
								NNK_REP8(DW_FMA)
							}
						} else {
							for (int ox = ox_lo; ox < ox_hi;
							     ox++, g += F, xr += SC) {
								const VF gv = nf == NNK_W
								                  ? NNK_FN(load)(g)
								                  : NNK_FN(load_part)(g, nf);
#define DW_FMA_PART(p)                                                                                       \
	if ((p) < rem)                                                                                       \
		acc##p = NNK_MADD(NNK_FN(splat)(xr[p]), gv, acc##p);
								NNK_REP8(DW_FMA_PART)
							}
						}
					}
#define DW_STORE(p)                                                                                          \
	if ((p) < rem)                                                                                       \
		NNK_FN(store)(dr + (size_t)(j0 + (p)) * Fp, acc##p);
					NNK_REP8(DW_STORE)
				}
			}
		}
	}
}
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

#undef NNK_REP8
#undef NNK_REP4
#undef ACC_INIT
#undef ACC_FMA
#undef ACC_STORE
#undef ACC2_INIT
#undef ACC2_FMA
#undef ACC2_STORE
#undef DW_INIT
#undef DW_FMA
#undef DW_STORE
#undef DW_FMA_PART
#undef DW_FMA_EDGE

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
