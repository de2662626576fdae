/* test_nn_kernels.c: every SIMD variant of the element-wise kernels that this
 * CPU can run, against the scalar reference and against libm in double.
 *
 * Lengths 0..67 and a long one cover every tail length of every vector
 * width; in-place calls (y == x) are checked too.  Everything but tanh must
 * be bit-exact (same operations, no contraction); tanh is an approximation,
 * checked against double-precision tanh over [-12, 12] and special values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_kernels.h"
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

int main(void)
{
	for (size_t n = 0; n < 68; n++)
		lengths[nlengths++] = n;
	lengths[nlengths++] = NMAX;
	printf("# best variant on this CPU: %s\n", nnk_best()->name);
	TAP_RUN(t_variants_exact);
	TAP_RUN(t_relu_values);
	TAP_RUN(t_tanh_accuracy);
	return tap_done();
}
