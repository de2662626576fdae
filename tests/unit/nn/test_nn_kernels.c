/* test_nn_kernels.c: every SIMD variant of the kernels that this CPU can
 * run, against the scalar reference and against libm in double.
 *
 * Lengths 0..67 and a long one cover every tail length of every vector
 * width; in-place calls (y == x) are checked too.  Everything but tanh must
 * be bit-exact (same operations, no contraction); tanh is an approximation,
 * checked against double-precision tanh over [-12, 12] and special values.
 * The convolutions sum in another order (and fused) than the reference, so
 * they are compared within a tolerance scaled by the sum of |terms|, which
 * the reference itself computes when given |x| and |w|; so are the linear
 * layers' products.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_kernels.h"
#include "seed/blas.h"
#include "seed/rng.h"
#include "tap.h"

#define NMAX 4099

static float xs[NMAX], ys[NMAX], ds[NMAX], r1[NMAX], r2[NMAX];
static uint8_t us[NMAX];

static void fill(seed_rng *rng, size_t n, double scale)
{
	for (size_t i = 0; i < n; i++) {
		xs[i] = (float)(scale * seed_rng_normal(rng));
		ys[i] = (float)tanh(seed_rng_normal(rng));
		ds[i] = (float)seed_rng_normal(rng);
		us[i] = (uint8_t)seed_rng_below(rng, 256);
	}
	xs[0] = 0.0f; /* exact zeros matter for relu */
	if (n > 3)
		ys[3] = 0.0f;
}

static int same(const float *a, const float *b, size_t n)
{
	return memcmp(a, b, n * sizeof *a) == 0;
}

static size_t lengths[70];
static int nlengths;

static void t_variants_exact(void)
{
	seed_rng rng;
	seed_rng_init(&rng, 1, 0);
	int tested = 0;
	for (int v = 0; nnk_variants[v]; v++) {
		const nnk_ops *k = nnk_variants[v];
		if (!nnk_usable(k)) {
			printf("# %s: not supported by this CPU, skipped\n", k->name);
			continue;
		}
		tested++;
		for (int li = 0; li < nlengths; li++) {
			size_t n = lengths[li];
			fill(&rng, n, 2.0);
			nnk_ref.relu_fwd(n, xs, r1);
			k->relu_fwd(n, xs, r2);
			CHECK_MSG(same(r1, r2, n), "%s relu_fwd n=%zu", k->name, n);
			memcpy(r2, xs, n * sizeof *r2);
			k->relu_fwd(n, r2, r2);
			CHECK_MSG(same(r1, r2, n), "%s relu_fwd in place n=%zu", k->name, n);

			nnk_ref.relu_bwd(n, ys, ds, r1);
			k->relu_bwd(n, ys, ds, r2);
			CHECK_MSG(same(r1, r2, n), "%s relu_bwd n=%zu", k->name, n);

			nnk_ref.tanh_bwd(n, ys, ds, r1);
			memcpy(r2, ds, n * sizeof *r2);
			k->tanh_bwd(n, ys, r2, r2);
			CHECK_MSG(same(r1, r2, n), "%s tanh_bwd in place n=%zu", k->name, n);

			nnk_ref.u8_to_f32(n, us, r1);
			k->u8_to_f32(n, us, r2);
			CHECK_MSG(same(r1, r2, n), "%s u8_to_f32 n=%zu", k->name, n);

			/* Matrices: rows x cols with n = rows * cols. */
			size_t cols = n % 37 + 1, rows = n / cols;
			memcpy(r1, xs, n * sizeof *r1);
			memcpy(r2, xs, n * sizeof *r2);
			nnk_ref.bias_add(rows, cols, ds, r1);
			k->bias_add(rows, cols, ds, r2);
			CHECK_MSG(same(r1, r2, n), "%s bias_add %zux%zu", k->name, rows, cols);
			memcpy(r1, ds, cols * sizeof *r1);
			memcpy(r2, ds, cols * sizeof *r2);
			nnk_ref.col_sum(rows, cols, xs, r1);
			k->col_sum(rows, cols, xs, r2);
			CHECK_MSG(same(r1, r2, cols), "%s col_sum %zux%zu", k->name, rows, cols);
		}
	}
	/* Wider matrices for col_sum's blocks of four vectors (64 columns
	 * with AVX-512), with column tails; still bit-exact. */
	static const size_t wide[][2] = {{7, 64}, {3, 130}, {5, 200}, {11, 16}, {2, 257}};
	for (size_t wi = 0; wi < sizeof wide / sizeof wide[0]; wi++) {
		size_t rows = wide[wi][0], cols = wide[wi][1];
		fill(&rng, rows * cols, 2.0);
		for (int v = 0; nnk_variants[v]; v++) {
			const nnk_ops *k = nnk_variants[v];
			if (!nnk_usable(k))
				continue;
			memcpy(r1, ds, cols * sizeof *r1);
			memcpy(r2, ds, cols * sizeof *r2);
			nnk_ref.col_sum(rows, cols, xs, r1);
			k->col_sum(rows, cols, xs, r2);
			CHECK_MSG(same(r1, r2, cols), "%s col_sum %zux%zu", k->name, rows, cols);
		}
	}
	CHECK(tested >= 2); /* the reference and at least one SIMD variant */
}

/* Hand-worked values: relu keeps NaN, gradients at exactly 0 are 0. */
static void t_relu_values(void)
{
	const nnk_ops *k = nnk_best();
	float x[5] = {-1.5f, -0.0f, 0.0f, 2.25f, NAN}, y[5];
	float dy[5] = {1, 2, 3, 4, 5}, dx[5];
	k->relu_fwd(5, x, y);
	CHECK(y[0] == 0.0f && y[1] == 0.0f && y[2] == 0.0f && y[3] == 2.25f && isnan(y[4]));
	k->relu_bwd(5, y, dy, dx);
	CHECK(dx[0] == 0.0f && dx[1] == 0.0f && dx[2] == 0.0f && dx[3] == 4.0f && dx[4] == 0.0f);
}

static void t_tanh_accuracy(void)
{
	enum { N = 200003 };
	float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
	for (int i = 0; i < N; i++)
		x[i] = (float)(-12.0 + 24.0 * i / (N - 1));
	/* Small magnitudes, where a naive formula loses its digits. */
	for (int i = 0; i < 2000; i++)
		x[i] = (float)((i % 2 ? 1 : -1) * pow(10.0, -12.0 + 11.0 * i / 2000));
	for (int v = 0; nnk_variants[v]; v++) {
		const nnk_ops *k = nnk_variants[v];
		if (!nnk_usable(k))
			continue;
		k->tanh_fwd(N, x, y);
		double worst = 0;
		int at = 0;
		for (int i = 0; i < N; i++) {
			double t = tanh((double)x[i]);
			double rel = fabs(y[i] - t) / fabs(t);
			if (rel > worst) {
				worst = rel;
				at = i;
			}
		}
		printf("# %s: worst relative error %.3g at x = %.9g\n", k->name, worst, (double)x[at]);
		/* A few float ulps (2^-23 = 1.2e-7). */
		CHECK_MSG(worst < 4e-7, "%s: relative error %g at %g", k->name, worst, (double)x[at]);
		float sp[7] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 30.0f, -30.0f}, o[7];
		k->tanh_fwd(7, sp, o);
		CHECK(o[0] == 0.0f && !signbit(o[0]));
		CHECK(o[1] == 0.0f && signbit(o[1]));
		CHECK(o[2] == 1.0f && o[3] == -1.0f);
		CHECK(isnan(o[4]));
		CHECK(o[5] == 1.0f && o[6] == -1.0f);
		/* Odd symmetry, exactly. */
		for (int i = 0; i < 1000; i++) {
			float a = x[i * 37 % N], ya, yb, na = -a;
			k->tanh_fwd(1, &a, &ya);
			k->tanh_fwd(1, &na, &yb);
			CHECK(ya == -yb);
		}
	}
	free(x);
	free(y);
}

static float *rnd(seed_rng *rng, size_t n, double scale)
{
	float *p = malloc((n ? n : 1) * sizeof *p);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(scale * seed_rng_normal(rng));
	return p;
}

/* wt (kk, Fp) from w (kk, F): padded with pad. */
static float *pad_cols(const float *w, int kk, int F, int Fp, float pad)
{
	float *wt = malloc((size_t)kk * Fp * sizeof *wt);
	for (int j = 0; j < kk; j++)
		for (int f = 0; f < Fp; f++)
			wt[(size_t)j * Fp + f] = f < F ? w[(size_t)j * F + f] : pad;
	return wt;
}

static void absf(float *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = fabsf(p[i]);
}

/* A convolution's shape from its input, kernel, stride and padding: pad
 * rows and columns of zeros on every side, or with pad < 0 TensorFlow's
 * "same" (ceil(H / S) outputs, the odd row or column of padding at the
 * bottom or right).  Worked here from the definitions, not taken from
 * model_parse.c. */
static nnk_conv conv_shape(int H, int W, int C, int k, int F, int S, int pad)
{
	nnk_conv s = {.H = H, .W = W, .C = C, .k = k, .F = F, .S = S};
	if (pad < 0) {
		s.OH = (H + S - 1) / S;
		s.OW = (W + S - 1) / S;
		int ph = (s.OH - 1) * S + k - H, pw = (s.OW - 1) * S + k - W;
		s.pt = ph > 0 ? ph / 2 : 0;
		s.pl = pw > 0 ? pw / 2 : 0;
	} else {
		s.OH = (H + 2 * pad - k) / S + 1;
		s.OW = (W + 2 * pad - k) / S + 1;
		s.pt = s.pl = pad;
	}
	return s;
}

static int nconv_checked;

/* One shape: the forward, fused relu and weight gradient of every variant
 * against the reference, and the model's input gradient (sgemm + col2im)
 * against the reference's definition, within 1e-5 of the sum of |terms|. */
static void conv_case(const nnk_conv *sp, int B, seed_rng *rng)
{
	nnk_conv s = *sp;
	char what[96];
	snprintf(what, sizeof what, "%dx%dx%d k%d F%d S%d pad %d,%d -> %dx%d", s.H, s.W, s.C, s.k, s.F, s.S,
	         s.pt, s.pl, s.OH, s.OW);
	int kk = s.k * s.k * s.C;
	size_t nx = (size_t)B * s.H * s.W * s.C, ny = (size_t)B * s.OH * s.OW * s.F;
	size_t nw = (size_t)kk * s.F;
	float *x = rnd(rng, nx, 1.0), *w = rnd(rng, nw, 1.0 / sqrt(kk));
	float *bias = rnd(rng, (size_t)s.F, 0.5), *dy = rnd(rng, ny, 1.0);
	float *dw0 = rnd(rng, nw, 1.0);
	/* wt (kk, F) is w (F, kk) transposed: the kernels' layout. */
	float *wtr = malloc(nw * sizeof *wtr), *awtr = malloc(nw * sizeof *awtr);
	for (int f = 0; f < s.F; f++)
		for (int j = 0; j < kk; j++)
			wtr[(size_t)j * s.F + f] = w[(size_t)f * kk + j];
	/* The reference, and |terms| for the tolerances. */
	float *ref = malloc(ny * sizeof *ref), *mag = malloc(ny * sizeof *mag);
	float *rdw = malloc(nw * sizeof *rdw), *mdw = calloc(nw, sizeof *mdw);
	float *rdx = malloc(nx * sizeof *rdx), *mdx = malloc(nx * sizeof *mdx);
	nnk_ref.conv_fwd(&s, B, x, wtr, bias, ref);
	memcpy(rdw, dw0, nw * sizeof *rdw);
	nnk_ref.conv_dw(&s, B, x, dy, rdw);
	nnk_conv_dx_ref(&s, B, dy, w, rdx);
	{
		float *ax = malloc(nx * sizeof *ax), *aw = malloc(nw * sizeof *aw);
		float *ab = malloc((size_t)s.F * sizeof *ab), *ady = malloc(ny * sizeof *ady);
		memcpy(ax, x, nx * sizeof *ax);
		memcpy(aw, w, nw * sizeof *aw);
		memcpy(awtr, wtr, nw * sizeof *awtr);
		memcpy(ab, bias, (size_t)s.F * sizeof *ab);
		memcpy(ady, dy, ny * sizeof *ady);
		absf(ax, nx);
		absf(aw, nw);
		absf(awtr, nw);
		absf(ab, (size_t)s.F);
		absf(ady, ny);
		nnk_ref.conv_fwd(&s, B, ax, awtr, ab, mag);
		nnk_ref.conv_dw(&s, B, ax, ady, mdw);
		nnk_conv_dx_ref(&s, B, ady, aw, mdx);
		free(ax);
		free(aw);
		free(ab);
		free(ady);
	}
	for (int v = 0; nnk_variants[v]; v++) {
		const nnk_ops *k = nnk_variants[v];
		if (!nnk_usable(k) || k == &nnk_ref)
			continue;
		int Fp = nnk_fpad(k, s.F);
		float *wt = pad_cols(wtr, kk, s.F, Fp, 0.0f), *out = malloc(ny * sizeof *out);
		k->conv_fwd(&s, B, x, wt, bias, out);
		int bad = 0;
		for (size_t i = 0; i < ny; i++)
			bad += !(fabsf(out[i] - ref[i]) <= 1e-5f * (mag[i] + 1e-30f));
		CHECK_MSG(bad == 0, "%s conv_fwd %s: %d outputs off", k->name, what, bad);
		/* Fused with the relu: exactly the two in turn. */
		float *fused = malloc(ny * sizeof *fused);
		k->conv_fwd_relu(&s, B, x, wt, bias, fused);
		k->relu_fwd(ny, out, out);
		CHECK_MSG(memcmp(fused, out, ny * sizeof *out) == 0, "%s conv_fwd_relu %s", k->name, what);
		free(fused);
		/* dwt accumulates onto what is there; padding untouched. */
		float *dwt = pad_cols(dw0, kk, s.F, Fp, 7.0f); /* dw0 is (kk, F) */
		k->conv_dw(&s, B, x, dy, dwt);
		bad = 0;
		for (int j = 0; j < kk; j++)
			for (int f = 0; f < Fp; f++) {
				float got = dwt[(size_t)j * Fp + f];
				if (f >= s.F)
					bad += got != 7.0f;
				else
					bad += !(fabsf(got - rdw[(size_t)j * s.F + f]) <=
					         1e-5f * (mdw[(size_t)j * s.F + f] +
					                  fabsf(dw0[(size_t)j * s.F + f])));
			}
		CHECK_MSG(bad == 0, "%s conv_dw %s: %d weights off", k->name, what, bad);
		free(wt);
		free(out);
		free(dwt);
	}
	/* The input gradient as the model computes it (cpu.c): dcol = dy w by
	 * BLAS, then col2im onto a cleared dx, in two calls of one and B - 1
	 * images, as the model steps through a batch. */
	float *dcol = malloc((size_t)B * s.OH * s.OW * kk * sizeof *dcol), *dx = malloc(nx * sizeof *dx);
	int per = s.OH * s.OW;
	seed_blas_sgemm(false, false, B * per, kk, s.F, 1.0f, dy, s.F, w, kk, 0.0f, dcol, kk);
	for (size_t i = 0; i < nx; i++)
		dx[i] = 0.0f;
	nnk_col2im(&s, 1, dcol, dx);
	nnk_col2im(&s, B - 1, dcol + (size_t)per * kk, dx + nx / B);
	int bad = 0;
	for (size_t i = 0; i < nx; i++)
		bad += !(fabsf(dx[i] - rdx[i]) <= 1e-5f * (mdx[i] + 1e-30f));
	CHECK_MSG(bad == 0, "col2im %s: %d input gradients off", what, bad);
	nconv_checked++;
	free(dcol);
	free(dx);
	free(x);
	free(w);
	free(wtr);
	free(awtr);
	free(bias);
	free(dy);
	free(dw0);
	free(ref);
	free(mag);
	free(rdw);
	free(mdw);
	free(rdx);
	free(mdx);
}

static void t_conv_variants(void)
{
	/* H, W, C, k, F (stride 1, no padding, as before the keys): MinAtar's,
	 * filter tails (F = 5, 20, 33), rows of fewer than 8 pixels and rows
	 * with 8-pixel blocks plus leftovers, C = 1, k = 1, and more filters
	 * than a block's four vectors holds with AVX-512 (65: four and a
	 * one-filter vector; 80: four and one). */
	static const int shapes[][5] = {
	    {10, 10, 4, 3, 16}, {10, 10, 10, 3, 16}, {7, 13, 3, 2, 5}, {6, 20, 1, 3, 20}, {4, 4, 2, 1, 33},
	    {3, 9, 7, 3, 8},    {5, 5, 3, 5, 2},     {5, 9, 3, 2, 65}, {6, 6, 2, 3, 80},
	};
	const int B = 2;
	seed_rng rng;
	seed_rng_init(&rng, 7, 0);
	for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
		nnk_conv s = conv_shape(shapes[si][0], shapes[si][1], shapes[si][2], shapes[si][3],
		                        shapes[si][4], 1, 0);
		conv_case(&s, B, &rng);
	}
	/* Every kernel 1..8 with every stride 1..4 and paddings none, k/2,
	 * k-1 and "same": inputs from k - 2 * pad (the smallest that fits)
	 * up, wide enough for blocks of eight pixels and edges on both sides
	 * in some, channels 1..9, filters 1..40 (vector tails). */
	static const int Cs[] = {1, 2, 3, 4, 5, 8, 9}, Fs[] = {1, 3, 8, 16, 17, 32, 33, 40};
	int n = 0;
	for (int k = 1; k <= 8; k++)
		for (int S = 1; S <= 4; S++)
			for (int pm = 0; pm < 4; pm++, n++) {
				int pad = pm == 0 ? 0 : pm == 1 ? k / 2 : pm == 2 ? k - 1 : -1;
				if (pm > 0 && pm < 3 && pad == 0)
					continue;
				int lo = pad < 0 ? 1 : k - 2 * pad > 1 ? k - 2 * pad : 1;
				int H = lo + (int)seed_rng_below(&rng, 8);
				int W = lo + (int)seed_rng_below(&rng, n % 3 == 0 ? 40 : 10);
				int C = Cs[n % 7], F = Fs[(n / 2) % 8];
				nnk_conv s = conv_shape(H, W, C, k, F, S, pad);
				conv_case(&s, 1 + n % 3, &rng);
			}
	/* The Nature DQN network's three layers. */
	nnk_conv nature[3] = {conv_shape(84, 84, 4, 8, 32, 4, 0), conv_shape(20, 20, 32, 4, 64, 2, 0),
	                      conv_shape(9, 9, 64, 3, 64, 1, 0)};
	CHECK(nature[0].OH == 20 && nature[1].OH == 9 && nature[2].OH == 7);
	for (int i = 0; i < 3; i++)
		conv_case(&nature[i], 2, &rng);
	printf("# %d convolution shapes checked\n", nconv_checked);
	CHECK(nconv_checked > 100);
}

/* The linear layers' products, every variant against the reference, over
 * shapes with every tail: rows not a multiple of the row blocks (1..9),
 * outputs not a multiple of four, inputs shorter than a vector, between
 * vectors, and MinAtar's 1024 -> 128.  They sum in another order (and
 * fused), so the tolerance is scaled by the sum of |terms|, which the
 * reference computes from |x|, |w|, |dy|.  dw accumulates onto what is
 * there; dx is overwritten (it starts as NaN here to show it). */
static void t_linear_variants(void)
{
	static const int shapes[][3] = {
	    /* rows, n_in, n_out */
	    {1, 1, 1},    {9, 3, 5},   {7, 16, 4},  {5, 17, 7},    {8, 64, 9},      {3, 100, 3},
	    {6, 257, 13}, {2, 500, 1}, {4, 129, 8}, {13, 40, 130}, {32, 1024, 128}, {11, 1024, 7},
	};
	seed_rng rng;
	seed_rng_init(&rng, 11, 0);
	for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
		size_t R = (size_t)shapes[si][0], I = (size_t)shapes[si][1], O = (size_t)shapes[si][2];
		float *x = rnd(&rng, R * I, 1.0), *w = rnd(&rng, O * I, 1.0 / sqrt((double)I));
		float *b = rnd(&rng, O, 0.5), *dy = rnd(&rng, R * O, 1.0), *dw0 = rnd(&rng, O * I, 1.0);
		float *ax = malloc(R * I * sizeof *ax), *aw = malloc(O * I * sizeof *aw);
		float *ab = malloc(O * sizeof *ab), *ady = malloc(R * O * sizeof *ady);
		memcpy(ax, x, R * I * sizeof *ax);
		memcpy(aw, w, O * I * sizeof *aw);
		memcpy(ab, b, O * sizeof *ab);
		memcpy(ady, dy, R * O * sizeof *ady);
		absf(ax, R * I);
		absf(aw, O * I);
		absf(ab, O);
		absf(ady, R * O);
		float *ry = malloc(R * O * sizeof *ry), *my = malloc(R * O * sizeof *my);
		float *rdx = malloc(R * I * sizeof *rdx), *mdx = malloc(R * I * sizeof *mdx);
		float *rdw = malloc(O * I * sizeof *rdw), *mdw = calloc(O * I, sizeof *mdw);
		nnk_ref.linear_fwd(R, I, O, x, w, b, ry);
		nnk_ref.linear_fwd(R, I, O, ax, aw, ab, my);
		nnk_ref.linear_dx(R, I, O, dy, w, rdx);
		nnk_ref.linear_dx(R, I, O, ady, aw, mdx);
		memcpy(rdw, dw0, O * I * sizeof *rdw);
		nnk_ref.linear_dw(R, I, O, dy, x, rdw);
		nnk_ref.linear_dw(R, I, O, ady, ax, mdw);
		float *y = malloc(R * O * sizeof *y), *dx = malloc(R * I * sizeof *dx);
		float *dw = malloc(O * I * sizeof *dw);
		for (int v = 0; nnk_variants[v]; v++) {
			const nnk_ops *k = nnk_variants[v];
			if (!nnk_usable(k) || k == &nnk_ref)
				continue;
			k->linear_fwd(R, I, O, x, w, b, y);
			int bad = 0;
			for (size_t i = 0; i < R * O; i++)
				bad += !(fabsf(y[i] - ry[i]) <= 1e-5f * (my[i] + 1e-30f));
			CHECK_MSG(bad == 0, "%s linear_fwd %zux%zu->%zu: %d outputs off", k->name, R, I, O,
			          bad);
			/* Fused with the relu: exactly the two in turn. */
			float *fused = malloc(R * O * sizeof *fused);
			k->linear_fwd_relu(R, I, O, x, w, b, fused);
			k->relu_fwd(R * O, y, y);
			CHECK_MSG(memcmp(fused, y, R * O * sizeof *y) == 0, "%s linear_fwd_relu %zux%zu->%zu",
			          k->name, R, I, O);
			free(fused);
			for (size_t i = 0; i < R * I; i++)
				dx[i] = NAN;
			k->linear_dx(R, I, O, dy, w, dx);
			bad = 0;
			for (size_t i = 0; i < R * I; i++)
				bad += !(fabsf(dx[i] - rdx[i]) <= 1e-5f * (mdx[i] + 1e-30f));
			CHECK_MSG(bad == 0, "%s linear_dx %zux%zu->%zu: %d inputs off", k->name, R, I, O,
			          bad);
			/* With the relu below: exactly linear_dx then relu_bwd, the
			 * relu's output x (zeros and negatives among it) as y. */
			float *mx = malloc(R * I * sizeof *mx), *fdx = malloc(R * I * sizeof *fdx);
			memcpy(mx, x, R * I * sizeof *mx);
			for (size_t i = 0; i < R * I; i += 3)
				mx[i] = 0.0f;
			k->linear_dx_relu(R, I, O, dy, w, mx, fdx);
			k->relu_bwd(R * I, mx, dx, dx);
			CHECK_MSG(memcmp(fdx, dx, R * I * sizeof *dx) == 0, "%s linear_dx_relu %zux%zu->%zu",
			          k->name, R, I, O);
			free(mx);
			free(fdx);
			memcpy(dw, dw0, O * I * sizeof *dw);
			k->linear_dw(R, I, O, dy, x, dw);
			bad = 0;
			for (size_t i = 0; i < O * I; i++)
				bad += !(fabsf(dw[i] - rdw[i]) <= 1e-5f * (mdw[i] + fabsf(dw0[i])));
			CHECK_MSG(bad == 0, "%s linear_dw %zux%zu->%zu: %d weights off", k->name, R, I, O,
			          bad);
		}
		free(x), free(w), free(b), free(dy), free(dw0);
		free(ax), free(aw), free(ab), free(ady);
		free(ry), free(my), free(rdx), free(mdx), free(rdw), free(mdw);
		free(y), free(dx), free(dw);
	}
}

/* matmul_acc, every variant against the reference: y's columns [c0, c0 +
 * n) of a wider output (ld floats a row) get a (rows, k) m (k, n) added;
 * the columns outside stay exactly as they were.  Shapes with every tail:
 * rows past the row blocks, n short of a vector, between vectors and past
 * four, k from 1 (rank 1) to 9. */
static void t_matmul_acc_variants(void)
{
	static const int shapes[][5] = {
	    /* rows, k, n, ld, c0 */
	    {1, 1, 1, 1, 0},      {9, 1, 64, 64, 0}, {7, 4, 64, 67, 3}, {5, 2, 17, 20, 2},
	    {13, 9, 130, 130, 0}, {3, 4, 3, 5, 1},   {64, 1, 2, 3, 0},  {6, 3, 80, 90, 10},
	};
	seed_rng rng;
	seed_rng_init(&rng, 12, 0);
	for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
		size_t R = (size_t)shapes[si][0], K = (size_t)shapes[si][1], N = (size_t)shapes[si][2];
		size_t ld = (size_t)shapes[si][3], c0 = (size_t)shapes[si][4];
		float *a = rnd(&rng, R * K, 1.0), *m = rnd(&rng, K * N, 1.0), *y0 = rnd(&rng, R * ld, 1.0);
		float *ry = malloc(R * ld * sizeof *ry), *my = malloc(R * ld * sizeof *my);
		float *aa = malloc(R * K * sizeof *aa), *am = malloc(K * N * sizeof *am);
		float *y = malloc(R * ld * sizeof *y);
		memcpy(aa, a, R * K * sizeof *aa);
		memcpy(am, m, K * N * sizeof *am);
		memcpy(ry, y0, R * ld * sizeof *ry);
		memcpy(my, y0, R * ld * sizeof *my);
		absf(aa, R * K);
		absf(am, K * N);
		absf(my, R * ld);
		nnk_ref.matmul_acc(R, K, N, a, m, ry + c0, ld);
		nnk_ref.matmul_acc(R, K, N, aa, am, my + c0, ld);
		for (int v = 0; nnk_variants[v]; v++) {
			const nnk_ops *k = nnk_variants[v];
			if (!nnk_usable(k) || k == &nnk_ref)
				continue;
			memcpy(y, y0, R * ld * sizeof *y);
			k->matmul_acc(R, K, N, a, m, y + c0, ld);
			int bad = 0, touched = 0;
			for (size_t r = 0; r < R; r++)
				for (size_t j = 0; j < ld; j++) {
					size_t i = r * ld + j;
					if (j < c0 || j >= c0 + N)
						touched += y[i] != y0[i];
					else
						bad += !(fabsf(y[i] - ry[i]) <= 1e-5f * (my[i] + 1e-30f));
				}
			CHECK_MSG(bad == 0 && touched == 0,
			          "%s matmul_acc %zux%zu x %zu (ld %zu from %zu): %d off, %d outside changed",
			          k->name, R, K, N, ld, c0, bad, touched);
		}
		free(a), free(m), free(y0), free(ry), free(my), free(aa), free(am), free(y);
	}
}

/* A hand-worked linear layer for the reference itself: two rows, three
 * inputs, two outputs. */
static void t_linear_reference_by_hand(void)
{
	float x[6] = {1, 2, 3, -1, 0, 2}, w[6] = {1, 0, -1, 2, 1, 0}, b[2] = {0.5f, -1}, y[4];
	nnk_ref.linear_fwd(2, 3, 2, x, w, b, y);
	/* y[r][o] = b[o] + sum_k x[r][k] w[o][k] */
	CHECK(y[0] == 0.5f + (1 - 3));
	CHECK(y[1] == -1 + (2 + 2));
	CHECK(y[2] == 0.5f + (-1 - 2));
	CHECK(y[3] == -1 + (-2 + 0));
	float dy[4] = {1, 2, -1, 3}, dx[6], dw[6] = {1, 1, 1, 1, 1, 1};
	nnk_ref.linear_dx(2, 3, 2, dy, w, dx);
	/* dx[r][k] = sum_o dy[r][o] w[o][k] */
	static const float want_dx[6] = {1 + 4, 0 + 2, -1 + 0, -1 + 6, 0 + 3, 1 + 0};
	for (int i = 0; i < 6; i++)
		CHECK(dx[i] == want_dx[i]);
	nnk_ref.linear_dw(2, 3, 2, dy, x, dw);
	/* dw[o][k] = 1 + sum_r dy[r][o] x[r][k] */
	static const float want_dw[6] = {1 + 1 + 1, 1 + 2 + 0, 1 + 3 - 2, 1 + 2 - 3, 1 + 4 + 0, 1 + 6 + 6};
	for (int i = 0; i < 6; i++)
		CHECK(dw[i] == want_dw[i]);
	/* matmul_acc onto columns 1..2 of a 2 x 4 output: y[r][1 + j] +=
	 * sum_s x[r][s] m[s][j], x (2, 3) as above and m (3, 2) = w's six
	 * values read as rows [1 0], [-1 2], [1 0]:
	 * row 0: 1 - 2 + 3 = 2 and 0 + 4 + 0 = 4; row 1: -1 + 0 + 2 = 1 and 0. */
	float acc[8] = {9, 1, 1, 9, 9, -1, 0, 9};
	nnk_ref.matmul_acc(2, 3, 2, x, w, acc + 1, 4);
	static const float want_acc[8] = {9, 1 + 2, 1 + 4, 9, 9, -1 + 1, 0 + 0, 9};
	for (int i = 0; i < 8; i++)
		CHECK(acc[i] == want_acc[i]);
}

/* A hand-worked convolution for the reference itself: 3x3 input, one
 * channel, 2x2 kernel, one filter. */
static void t_conv_reference_by_hand(void)
{
	nnk_conv s = conv_shape(3, 3, 1, 2, 1, 1, 0);
	float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 0, 0, -1}, b = 0.5f, out[4];
	nnk_ref.conv_fwd(&s, 1, x, w, &b, out);
	/* out[y][x] = x[y][x] - x[y+1][x+1] + 0.5 = -4 + 0.5 everywhere */
	for (int i = 0; i < 4; i++)
		CHECK(out[i] == -3.5f);
	float dy[4] = {1, 2, 3, 4}, dw[4] = {0};
	nnk_ref.conv_dw(&s, 1, x, dy, dw);
	/* dw[ky][kx] = sum_{y,x} x[y+ky][x+kx] dy[y][x] */
	CHECK(dw[0] == 1 * 1 + 2 * 2 + 4 * 3 + 5 * 4);
	CHECK(dw[1] == 2 * 1 + 3 * 2 + 5 * 3 + 6 * 4);
	CHECK(dw[2] == 4 * 1 + 5 * 2 + 7 * 3 + 8 * 4);
	CHECK(dw[3] == 5 * 1 + 6 * 2 + 8 * 3 + 9 * 4);
	/* Its input gradient: dx[y][x] = the dy of the outputs whose patch
	 * holds it times the weight there, w[0][0] = 1 and w[1][1] = -1:
	 * dy[y][x] - dy[y-1][x-1] where those exist. */
	float dx[9];
	static const float want_dx[9] = {1, 2, 0, 3, 4 - 1, -2, 0, -3, -4};
	nnk_conv_dx_ref(&s, 1, dy, w, dx);
	for (int i = 0; i < 9; i++)
		CHECK_MSG(dx[i] == want_dx[i], "dx[%d] = %g, not %g", i, (double)dx[i], (double)want_dx[i]);

	/* Stride 2, one row and column of zeros around: output (oy, ox)
	 * reads the patch at (2 oy - 1, 2 ox - 1). */
	nnk_conv sp = conv_shape(3, 3, 1, 2, 1, 2, 1);
	CHECK(sp.OH == 2 && sp.OW == 2 && sp.pt == 1 && sp.pl == 1);
	nnk_ref.conv_fwd(&sp, 1, x, w, &b, out);
	/* (0,0): -x[0][0]; (0,1): -x[0][2]; (1,0): -x[2][0];
	 * (1,1): x[1][1] - x[2][2]; each + 0.5 */
	CHECK(out[0] == -0.5f && out[1] == -2.5f && out[2] == -6.5f && out[3] == -3.5f);
	float dwp[4] = {0};
	nnk_ref.conv_dw(&sp, 1, x, dy, dwp);
	/* dw[ky][kx] = sum x[2 oy - 1 + ky][2 ox - 1 + kx] dy[oy][ox] */
	CHECK(dwp[0] == 5 * 4);
	CHECK(dwp[1] == 4 * 3 + 6 * 4);
	CHECK(dwp[2] == 2 * 2 + 8 * 4);
	CHECK(dwp[3] == 1 * 1 + 3 * 2 + 7 * 3 + 9 * 4);
	static const float want_dxp[9] = {-1, 0, -2, 0, 4, 0, -3, 0, -4};
	nnk_conv_dx_ref(&sp, 1, dy, w, dx);
	for (int i = 0; i < 9; i++)
		CHECK_MSG(dx[i] == want_dxp[i], "padded dx[%d] = %g, not %g", i, (double)dx[i],
		          (double)want_dxp[i]);
}

int main(void)
{
	for (size_t n = 0; n < 68; n++)
		lengths[nlengths++] = n;
	lengths[nlengths++] = NMAX;
	printf("# best variant on this CPU: %s\n", nnk_best()->name);
	seed_err err;
	if (seed_blas_init(&err) < 0) { /* the convolutions' input gradient */
		printf("Bail out! %s\n", err.msg);
		return 1;
	}
	TAP_RUN(t_variants_exact);
	TAP_RUN(t_relu_values);
	TAP_RUN(t_tanh_accuracy);
	TAP_RUN(t_conv_reference_by_hand);
	TAP_RUN(t_conv_variants);
	TAP_RUN(t_linear_reference_by_hand);
	TAP_RUN(t_linear_variants);
	TAP_RUN(t_matmul_acc_variants);
	return tap_done();
}
