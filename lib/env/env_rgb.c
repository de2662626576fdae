/* env_rgb.c: drawing helpers for environment classes (seed/env.h).
 *
 * seed_env_grid_rgb draws an observation made of boolean planes, the shape
 * of MinAtar's, as coloured cells, and seed_env_grid_palette gives the
 * colours MinAtar's own display uses, so that a game looks the same here as
 * in the Python package.  Neither allocates; both may be called from any
 * thread.
 */
#include <math.h>
#include <stdint.h>

#include "seed/env.h"

/* matplotlib's cubehelix colour map (D. A. Green's scheme with gamma 1,
 * start s = 0.5, rotations r = -1.5, hue h = 1), channel by channel:
 * x + a (p0 cos phi + p1 sin phi), a = h x (1 - x) / 2,
 * phi = 2 pi (s / 3 + r x); clipped to [0, 1] like its lookup table. */
static double cubehelix(double x, double p0, double p1)
{
	double a = 1.0 * x * (1 - x) / 2;
	double phi = 2 * M_PI * (0.5 / 3 + -1.5 * x);
	double v = x + a * (p0 * cos(phi) + p1 * sin(phi));
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

int seed_env_grid_palette(int n, uint8_t (*colors)[3])
{
	static const double p[3][2] = {
	    {-0.14861, 1.78277},  /* red */
	    {-0.29227, -0.90649}, /* green */
	    {1.97294, 0.0},       /* blue */
	};
	if (n < 1 || n > 256)
		return -EINVAL;
	for (int c = 0; c < n; c++) {
		/* seaborn samples the map at linspace(0, 1, n + 2)[1:-1],
		 * leaving out both ends; matplotlib looks a float x up in its
		 * 256-entry table at int(x * 256), entry i being the map at
		 * i / 255; colours become bytes as int(v * 255). */
		double x = (double)(c + 1) / (n + 1);
		int at = (int)(x * 256);
		if (at > 255)
			at = 255;
		for (int k = 0; k < 3; k++)
			colors[c][k] = (uint8_t)(cubehelix(at / 255.0, p[k][0], p[k][1]) * 255);
	}
	return 0;
}

int seed_env_grid_rgb(const uint8_t *obs, int rows, int cols, int channels, const uint8_t (*colors)[3],
                      uint8_t *rgb, int width, int height)
{
	if (rows < 1 || cols < 1 || channels < 1 || channels > 256 || width < 1 || height < 1 ||
	    width > SEED_ENV_MAX_RGB || height > SEED_ENV_MAX_RGB)
		return -EINVAL;
	uint8_t own[256][3];
	if (!colors) {
		seed_env_grid_palette(channels, own);
		colors = (const uint8_t(*)[3])own;
	}
	for (int y = 0; y < height; y++) {
		int r = (int)((int64_t)y * rows / height);
		uint8_t *out = rgb + (size_t)y * (size_t)width * 3;
		for (int x = 0; x < width; x++, out += 3) {
			int c = (int)((int64_t)x * cols / width);
			const uint8_t *cell = obs + ((size_t)r * (size_t)cols + (size_t)c) * (size_t)channels;
			int top = channels - 1;
			while (top >= 0 && !cell[top])
				top--;
			if (top < 0) {
				out[0] = out[1] = out[2] = 0;
			} else {
				out[0] = colors[top][0];
				out[1] = colors[top][1];
				out[2] = colors[top][2];
			}
		}
	}
	return 0;
}

/* The source pixels [*lo, *hi) under pixel i of n along an axis of m
 * (seed_env_rgb_scale's rule). */
static void span(int i, int n, int m, int *lo, int *hi)
{
	*lo = (int)((int64_t)i * m / n);
	*hi = n >= m ? *lo + 1 : (int)(((int64_t)(i + 1) * m + n - 1) / n);
}

int seed_env_rgb_scale(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
	if (sw < 1 || sh < 1 || dw < 1 || dh < 1 || sw > SEED_ENV_MAX_RGB || sh > SEED_ENV_MAX_RGB ||
	    dw > SEED_ENV_MAX_RGB || dh > SEED_ENV_MAX_RGB)
		return -EINVAL;
	for (int y = 0; y < dh; y++) {
		int y0, y1;
		span(y, dh, sh, &y0, &y1);
		uint8_t *out = dst + (size_t)y * (size_t)dw * 3;
		for (int x = 0; x < dw; x++, out += 3) {
			int x0, x1;
			span(x, dw, sw, &x0, &x1);
			uint64_t sum[3] = {0, 0, 0};
			for (int r = y0; r < y1; r++) {
				const uint8_t *p = src + ((size_t)r * (size_t)sw + (size_t)x0) * 3;
				for (int c = x0; c < x1; c++, p += 3) {
					sum[0] += p[0];
					sum[1] += p[1];
					sum[2] += p[2];
				}
			}
			uint64_t n = (uint64_t)(y1 - y0) * (uint64_t)(x1 - x0);
			for (int k = 0; k < 3; k++)
				out[k] = (uint8_t)((sum[k] + n / 2) / n);
		}
	}
	return 0;
}
