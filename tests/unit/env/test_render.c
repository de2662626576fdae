/* tests/unit/env/test_render.c: pictures of environments and the GIF writer.
 *
 * CartPole's picture is checked at pixels worked out by hand from
 * Gymnasium's drawing code (CartPoleEnv.render: a 600 x 400 screen, 125
 * pixels per metre, the cart 50 x 30 centred at (300 + 125 x, 100), the
 * pole 10 wide reaching from 5 below to 120 above its hinge 7.5 above the
 * cart's centre, turned clockwise by theta, the hinge a disc of radius 5,
 * the track the row at height 100; y up, so screen height g is image row
 * 400 - g); each pixel shows what is under its centre.  Catch's picture at
 * the cells bsuite's rules put the ball and paddle in.  The grid helper's
 * colours against MinAtar's own (tests/golden/grid_palette_ref.h, from matplotlib
 * and seaborn by tests/golden/grid_palette_ref.py).  GIF files are read back
 * with giflib's decoder (DGifSlurp), not with our code.
 */
#include <gif_lib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/env.h"
#include "seed/gif.h"
#include "tap.h"
#include "tmpdir.h"

#include "grid_palette_ref.h"

static const uint8_t WHITE[3] = {255, 255, 255}, BLACK[3] = {0, 0, 0};
static const uint8_t POLE[3] = {202, 152, 101}, AXLE[3] = {129, 132, 203};
/* Catch's colours (envs/catch.c). */
static const uint8_t EMPTY[3] = {32, 32, 32}, BALL[3] = {255, 255, 255}, PADDLE[3] = {66, 135, 245};
static const uint8_t CAUGHT[3] = {0, 200, 0}, MISSED[3] = {220, 40, 40};

static bool pixel_is(const uint8_t *rgb, int width, int x, int y, const uint8_t *want)
{
	const uint8_t *p = rgb + ((size_t)y * (size_t)width + (size_t)x) * 3;
	if (memcmp(p, want, 3) == 0)
		return true;
	printf("# pixel (%d, %d) is (%d, %d, %d), not (%d, %d, %d)\n", x, y, p[0], p[1], p[2], want[0],
	       want[1], want[2]);
	return false;
}

static seed_envs *make(const char *name, const char *options, int num)
{
	seed_envs *e = NULL;
	seed_err err = {""};
	if (seed_envs_new(&e, name, options, num, 1, &err) < 0) {
		printf("# %s\n", err.msg);
		exit(99);
	}
	return e;
}

/* ---- CartPole ------------------------------------------------------------- */

static void t_cartpole_upright(void)
{
	seed_envs *e = make("cartpole", "{\"init_state\": [0, 0, 0, 0]}", 1);
	const seed_env_spec *s = seed_envs_spec(e);
	CHECK(s->rgb_width == 600 && s->rgb_height == 400);
	float obs[4];
	seed_envs_reset(e, obs);
	uint8_t *rgb = malloc(600 * 400 * 3);
	CHECK(seed_envs_render_rgb(e, 0, rgb, 600, 400) == 0);
	CHECK(pixel_is(rgb, 600, 10, 10, WHITE));
	/* Cart: x in [275, 325], height [85, 115] = rows 285 .. 314. */
	CHECK(pixel_is(rgb, 600, 300, 310, BLACK));
	CHECK(pixel_is(rgb, 600, 275, 310, BLACK));
	CHECK(pixel_is(rgb, 600, 324, 310, BLACK));
	CHECK(pixel_is(rgb, 600, 274, 310, WHITE));
	CHECK(pixel_is(rgb, 600, 325, 310, WHITE));
	CHECK(pixel_is(rgb, 600, 280, 285, BLACK));
	CHECK(pixel_is(rgb, 600, 280, 284, WHITE));
	CHECK(pixel_is(rgb, 600, 280, 314, BLACK));
	CHECK(pixel_is(rgb, 600, 280, 315, WHITE));
	/* Hinge at height 107.5 (row 292), radius 5. */
	CHECK(pixel_is(rgb, 600, 300, 292, AXLE));
	CHECK(pixel_is(rgb, 600, 303, 294, AXLE));
	/* Pole: x in [295, 305], up to height 227.5 (row 172). */
	CHECK(pixel_is(rgb, 600, 300, 250, POLE));
	CHECK(pixel_is(rgb, 600, 296, 250, POLE));
	CHECK(pixel_is(rgb, 600, 303, 250, POLE));
	CHECK(pixel_is(rgb, 600, 293, 250, WHITE));
	CHECK(pixel_is(rgb, 600, 306, 250, WHITE));
	CHECK(pixel_is(rgb, 600, 300, 174, POLE));
	CHECK(pixel_is(rgb, 600, 300, 170, WHITE));
	/* Track: height 100 = row 299, across the screen. */
	CHECK(pixel_is(rgb, 600, 0, 299, BLACK));
	CHECK(pixel_is(rgb, 600, 100, 299, BLACK));
	CHECK(pixel_is(rgb, 600, 599, 299, BLACK));
	CHECK(pixel_is(rgb, 600, 100, 298, WHITE));
	CHECK(pixel_is(rgb, 600, 100, 300, WHITE));
	free(rgb);
	seed_envs_free(&e);
}

static void t_cartpole_moved_and_tilted(void)
{
	/* x = 1 m: the cart's centre is column 300 + 125 = 425, its body
	 * columns 400 .. 449.  theta = 0.2 rad leans the pole right: its axis
	 * at 80 px from the hinge is at (425 + 80 sin 0.2, 107.5 + 80 cos 0.2)
	 * = (440.89, 185.91), in pixel (440, 214); the upright pole's place
	 * (425, 214) and its mirror image (409, 214) are background. */
	seed_envs *e = make("cartpole", "{\"init_state\": [1.0, 0, 0.2, 0]}", 1);
	float obs[4];
	seed_envs_reset(e, obs);
	uint8_t *rgb = malloc(600 * 400 * 3);
	CHECK(seed_envs_render_rgb(e, 0, rgb, 600, 400) == 0);
	CHECK(pixel_is(rgb, 600, 425, 310, BLACK));
	CHECK(pixel_is(rgb, 600, 400, 310, BLACK));
	CHECK(pixel_is(rgb, 600, 449, 310, BLACK));
	CHECK(pixel_is(rgb, 600, 399, 310, WHITE));
	CHECK(pixel_is(rgb, 600, 450, 310, WHITE));
	CHECK(pixel_is(rgb, 600, 300, 310, WHITE)); /* where the cart was at x = 0 */
	CHECK(pixel_is(rgb, 600, 425, 292, AXLE));
	CHECK(pixel_is(rgb, 600, 440, 214, POLE));
	CHECK(pixel_is(rgb, 600, 425, 214, WHITE));
	CHECK(pixel_is(rgb, 600, 409, 214, WHITE));
	CHECK(pixel_is(rgb, 600, 100, 299, BLACK));
	free(rgb);
	seed_envs_free(&e);
}

static void t_cartpole_small(void)
{
	/* 66 x 44 (scale 0.11): the track's height 100 falls between pixel
	 * centres, so it is the row holding height 100.5: 299.5 x 0.11 =
	 * 32.9, row 32; the cart's centre (300, 100) is pixel (33, 33) and
	 * the pole, though about one pixel wide, has a pixel in every row
	 * from its top (row 19) down to the hinge (row 31). */
	seed_envs *e = make("cartpole", "{\"init_state\": [0, 0, 0.1, 0]}", 1);
	float obs[4];
	seed_envs_reset(e, obs);
	enum { W = 66, H = 44 };
	uint8_t rgb[W * H * 3];
	CHECK(seed_envs_render_rgb(e, 0, rgb, W, H) == 0);
	for (int x = 0; x < W; x++)
		CHECK(pixel_is(rgb, W, x, 32, BLACK));
	CHECK(pixel_is(rgb, W, 0, 31, WHITE));
	CHECK(pixel_is(rgb, W, 0, 33, WHITE));
	CHECK(pixel_is(rgb, W, 33, 33, BLACK));
	for (int y = 20; y <= 30; y++) {
		int n = 0;
		for (int x = 0; x < W; x++) {
			const uint8_t *p = rgb + ((size_t)y * W + (size_t)x) * 3;
			n += memcmp(p, POLE, 3) == 0 || memcmp(p, AXLE, 3) == 0;
		}
		CHECK_MSG(n >= 1, "row %d has no pole", y);
	}
	/* Only the four colours of the picture. */
	for (int i = 0; i < W * H; i++) {
		const uint8_t *p = rgb + 3 * i;
		CHECK(!memcmp(p, WHITE, 3) || !memcmp(p, BLACK, 3) || !memcmp(p, POLE, 3) ||
		      !memcmp(p, AXLE, 3));
	}
	seed_envs_free(&e);
}

/* ---- Catch ---------------------------------------------------------------- */

/* The ball's column in a Catch observation of `columns` columns. */
static int ball_column(const float *obs, int columns)
{
	for (int x = 0; x < columns; x++)
		if (obs[x] == 1.0f)
			return x;
	return -1;
}

/* The colour of cell (row, col) of a 16-pixel-cell picture, checked at
 * the cell's four corners and centre. */
static bool cell_is(const uint8_t *rgb, int width, int row, int col, const uint8_t *want)
{
	bool ok = true;
	const int xs[] = {0, 15, 8, 0, 15}, ys[] = {0, 0, 8, 15, 15};
	for (int i = 0; i < 5; i++)
		ok = pixel_is(rgb, width, col * 16 + xs[i], row * 16 + ys[i], want) && ok;
	return ok;
}

/* Play one episode of Catch with the paddle chasing the ball (catch) or
 * running away from it; check the pictures on the way and at the end. */
static void catch_episode(bool chase)
{
	seed_envs *e = make("catch", NULL, 1);
	const seed_env_spec *s = seed_envs_spec(e);
	CHECK(s->rgb_width == 80 && s->rgb_height == 160);
	float obs[50];
	uint8_t rgb[80 * 160 * 3];
	seed_envs_reset(e, obs);
	int b = ball_column(obs, 5);
	CHECK(b >= 0);
	CHECK(seed_envs_render_rgb(e, 0, rgb, 80, 160) == 0);
	CHECK(cell_is(rgb, 80, 0, b, BALL));
	CHECK(cell_is(rgb, 80, 9, 2, PADDLE));
	CHECK(cell_is(rgb, 80, 5, 0, EMPTY));
	CHECK(cell_is(rgb, 80, 9, 0, EMPTY));
	CHECK(seed_envs_render_rgb_final(e, 0, rgb, 80, 160) == -ENOENT);

	int paddle = 2;
	float reward = 0;
	uint8_t term = 0, trunc = 0;
	for (int t = 1; t <= 9; t++) {
		int target = chase ? b : b < 2 ? 4 : 0;
		int32_t a = 1 + (target > paddle) - (target < paddle);
		paddle += a - 1;
		CHECK(seed_envs_step(e, 0, 1, &a, obs, &reward, &term, &trunc, NULL, NULL, NULL) == 0);
		CHECK(term == (t == 9));
		if (t == 4) {
			/* Mid-episode: the ball in row 4, the paddle where we
			 * moved it. */
			CHECK(seed_envs_render_rgb(e, 0, rgb, 80, 160) == 0);
			CHECK(cell_is(rgb, 80, 4, b, BALL));
			CHECK(cell_is(rgb, 80, 0, b, EMPTY));
			CHECK(cell_is(rgb, 80, 9, paddle, PADDLE));
		}
	}
	CHECK(reward == (chase ? 1.0f : -1.0f));
	/* The vector has reset: the picture is the next episode's start, and
	 * the final picture the end of this one. */
	CHECK(seed_envs_render_rgb(e, 0, rgb, 80, 160) == 0);
	CHECK(cell_is(rgb, 80, 9, 2, PADDLE));
	CHECK(cell_is(rgb, 80, 0, ball_column(obs, 5), BALL));
	CHECK(seed_envs_render_rgb_final(e, 0, rgb, 80, 160) == 0);
	if (chase) {
		CHECK(cell_is(rgb, 80, 9, b, CAUGHT));
	} else {
		CHECK(cell_is(rgb, 80, 9, b, MISSED));
		CHECK(cell_is(rgb, 80, 9, paddle, PADDLE));
	}
	CHECK(cell_is(rgb, 80, 0, b, EMPTY));
	/* A new reset forgets the final state. */
	seed_envs_reset(e, obs);
	CHECK(seed_envs_render_rgb_final(e, 0, rgb, 80, 160) == -ENOENT);
	seed_envs_free(&e);
}

static void t_catch_caught(void)
{
	catch_episode(true);
}

static void t_catch_missed(void)
{
	catch_episode(false);
}

static void t_catch_sizes(void)
{
	/* A 4 x 3 board drawn at 6 x 8: cells of 2 x 2 pixels; at 5 x 5,
	 * pixel (x, y) shows cell (y * 4 / 5, x * 3 / 5). */
	seed_envs *e = make("catch", "{\"rows\": 4, \"columns\": 3}", 1);
	const seed_env_spec *s = seed_envs_spec(e);
	CHECK(s->rgb_width == 48 && s->rgb_height == 64);
	float obs[12];
	seed_envs_reset(e, obs);
	int b = ball_column(obs, 3);
	uint8_t rgb[8 * 6 * 3];
	CHECK(seed_envs_render_rgb(e, 0, rgb, 6, 8) == 0);
	for (int y = 0; y < 8; y++)
		for (int x = 0; x < 6; x++) {
			int r = y / 2, c = x / 2;
			const uint8_t *want = r == 0 && c == b ? BALL : r == 3 && c == 1 ? PADDLE : EMPTY;
			CHECK(pixel_is(rgb, 6, x, y, want));
		}
	uint8_t small[5 * 5 * 3];
	CHECK(seed_envs_render_rgb(e, 0, small, 5, 5) == 0);
	for (int y = 0; y < 5; y++)
		for (int x = 0; x < 5; x++) {
			int r = y * 4 / 5, c = x * 3 / 5;
			const uint8_t *want = r == 0 && c == b ? BALL : r == 3 && c == 1 ? PADDLE : EMPTY;
			CHECK(pixel_is(small, 5, x, y, want));
		}
	/* Big boards get smaller cells: 100 x 40 at 5 pixels. */
	seed_envs_free(&e);
	e = make("catch", "{\"rows\": 100, \"columns\": 40}", 1);
	CHECK(seed_envs_spec(e)->rgb_width == 200 && seed_envs_spec(e)->rgb_height == 500);
	seed_envs_free(&e);
}

/* ---- the vector's checks -------------------------------------------------- */

static int plain_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	*spec = (seed_env_spec){.obs_dtype = SEED_DTYPE_U8,
	                        .obs_rank = 1,
	                        .obs_shape = {1},
	                        .num_actions = 1,
	                        .rgb_width = 7,
	                        .rgb_height = 9};
	return 0;
}

static void plain_reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	*(uint8_t *)obs = 0;
}

static void plain_step(const void *config, void *state, seed_rng *rng, int action, void *obs, float *reward,
                       bool *terminated)
{
	*(uint8_t *)obs = 0;
	*reward = 0;
	*terminated = true;
}

static int unsized_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	*spec =
	    (seed_env_spec){.obs_dtype = SEED_DTYPE_U8, .obs_rank = 1, .obs_shape = {1}, .num_actions = 1};
	return 0;
}

static int paint(const void *config, const void *state, uint8_t *rgb, int width, int height)
{
	memset(rgb, 7, (size_t)width * (size_t)height * 3);
	return 0;
}

/* A class without pictures (whatever size its spec claims), one with, and
 * one that draws but gives no natural size. */
static const seed_env_class blind = {
    .name = "test-blind", .configure = plain_configure, .reset = plain_reset, .step = plain_step};
static const seed_env_class painter = {.name = "test-painter",
                                       .configure = plain_configure,
                                       .reset = plain_reset,
                                       .step = plain_step,
                                       .render_rgb = paint};
static const seed_env_class unsized = {.name = "test-unsized",
                                       .configure = unsized_configure,
                                       .reset = plain_reset,
                                       .step = plain_step,
                                       .render_rgb = paint};

static void t_vector_checks(void)
{
	CHECK(seed_env_register(&blind) == 0);
	CHECK(seed_env_register(&painter) == 0);
	CHECK(seed_env_register(&unsized) == 0);
	uint8_t rgb[9 * 7 * 3], obs[2];
	seed_envs *e = make("test-blind", NULL, 1);
	CHECK(seed_envs_spec(e)->rgb_width == 0 && seed_envs_spec(e)->rgb_height == 0);
	seed_envs_reset(e, obs);
	CHECK(seed_envs_render_rgb(e, 0, rgb, 7, 9) == -ENOTSUP);
	CHECK(seed_envs_render_rgb_final(e, 0, rgb, 7, 9) == -ENOTSUP);
	seed_envs_free(&e);

	e = make("test-painter", NULL, 2);
	CHECK(seed_envs_spec(e)->rgb_width == 7 && seed_envs_spec(e)->rgb_height == 9);
	seed_envs_reset(e, obs);
	CHECK(seed_envs_render_rgb(e, 2, rgb, 7, 9) == -EINVAL);
	CHECK(seed_envs_render_rgb(e, -1, rgb, 7, 9) == -EINVAL);
	CHECK(seed_envs_render_rgb(e, 0, rgb, 0, 9) == -EINVAL);
	CHECK(seed_envs_render_rgb(e, 0, rgb, 7, SEED_ENV_MAX_RGB + 1) == -EINVAL);
	memset(rgb, 0, sizeof rgb);
	CHECK(seed_envs_render_rgb(e, 1, rgb, 7, 9) == 0);
	CHECK(rgb[0] == 7 && rgb[sizeof rgb - 1] == 7);
	CHECK(seed_envs_render_rgb_final(e, 1, rgb, 7, 9) == -ENOENT);
	/* Step only env 1: it ends, env 0 has no final state yet. */
	int32_t a = 0;
	float r;
	uint8_t term, trunc;
	CHECK(seed_envs_step(e, 1, 1, &a, obs, &r, &term, &trunc, NULL, NULL, NULL) == 0 && term);
	CHECK(seed_envs_render_rgb_final(e, 1, rgb, 7, 9) == 0);
	CHECK(seed_envs_render_rgb_final(e, 0, rgb, 7, 9) == -ENOENT);
	CHECK(seed_envs_render_rgb_final(e, 2, rgb, 7, 9) == -EINVAL);
	seed_envs_free(&e);

	seed_err err = {""};
	CHECK(seed_envs_new(&e, "test-unsized", NULL, 1, 0, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "test-unsized") && strstr(err.msg, "natural size"), "%s", err.msg);
}

/* ---- the grid helper ------------------------------------------------------ */

static void t_grid_palette(void)
{
	int at = 0;
	for (size_t k = 0; k < sizeof grid_palette_sizes / sizeof grid_palette_sizes[0]; k++) {
		int n = grid_palette_sizes[k];
		uint8_t c[16][3];
		CHECK(seed_env_grid_palette(n, c) == 0);
		for (int i = 0; i < n; i++, at++)
			for (int j = 0; j < 3; j++)
				CHECK_MSG(c[i][j] == grid_palette_ref[at][j],
				          "%d channels, channel %d: %d %d %d", n, i, c[i][0], c[i][1],
				          c[i][2]);
	}
	uint8_t c[1][3];
	CHECK(seed_env_grid_palette(0, c) == -EINVAL);
	CHECK(seed_env_grid_palette(257, c) == -EINVAL);
}

static void t_grid_rgb(void)
{
	/* 3 rows x 4 columns x 3 channels:
	 *   (0, 1): channel 0; (1, 2): channels 0 and 2 (2 is on top);
	 *   (2, 3): channel 1; (2, 0): channels 1 and 2 (value 5 counts as set);
	 *   the rest empty (black). */
	enum { R = 3, C = 4, N = 3 };
	uint8_t obs[R][C][N];
	memset(obs, 0, sizeof obs);
	obs[0][1][0] = 1;
	obs[1][2][0] = 1;
	obs[1][2][2] = 1;
	obs[2][3][1] = 1;
	obs[2][0][1] = 1;
	obs[2][0][2] = 5;
	int want[R][C] = {{-1, 0, -1, -1}, {-1, -1, 2, -1}, {2, -1, -1, 1}}; /* channel shown */
	const uint8_t(*pal)[3] = (const uint8_t(*)[3])grid_palette_ref + 3;  /* the 3-channel row */
	uint8_t rgb[6 * 8 * 3];
	CHECK(seed_env_grid_rgb(&obs[0][0][0], R, C, N, NULL, rgb, 8, 6) == 0);
	for (int y = 0; y < 6; y++)
		for (int x = 0; x < 8; x++) {
			int ch = want[y / 2][x / 2];
			CHECK(pixel_is(rgb, 8, x, y, ch < 0 ? BLACK : pal[ch]));
		}
	/* Own colours, and a size that is no multiple: pixel (x, y) shows
	 * cell (y * 3 / 5, x * 4 / 7). */
	static const uint8_t mine[N][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
	uint8_t odd[5 * 7 * 3];
	CHECK(seed_env_grid_rgb(&obs[0][0][0], R, C, N, mine, odd, 7, 5) == 0);
	for (int y = 0; y < 5; y++)
		for (int x = 0; x < 7; x++) {
			int ch = want[y * 3 / 5][x * 4 / 7];
			CHECK(pixel_is(odd, 7, x, y, ch < 0 ? BLACK : mine[ch]));
		}
	CHECK(seed_env_grid_rgb(&obs[0][0][0], 0, C, N, NULL, rgb, 8, 6) == -EINVAL);
	CHECK(seed_env_grid_rgb(&obs[0][0][0], R, C, 0, NULL, rgb, 8, 6) == -EINVAL);
	CHECK(seed_env_grid_rgb(&obs[0][0][0], R, C, N, NULL, rgb, 0, 6) == -EINVAL);
	CHECK(seed_env_grid_rgb(&obs[0][0][0], R, C, 257, NULL, rgb, 8, 6) == -EINVAL);
}

/* ---- GIF ------------------------------------------------------------------ */

/* Colour of pixel (x, y) of frame f as giflib decodes it. */
static void gif_pixel(const GifFileType *gif, int f, int x, int y, uint8_t out[3])
{
	const SavedImage *im = &gif->SavedImages[f];
	const ColorMapObject *map = im->ImageDesc.ColorMap ? im->ImageDesc.ColorMap : gif->SColorMap;
	int k = im->RasterBits[(y - im->ImageDesc.Top) * im->ImageDesc.Width + (x - im->ImageDesc.Left)];
	out[0] = map->Colors[k].Red;
	out[1] = map->Colors[k].Green;
	out[2] = map->Colors[k].Blue;
}

static GifFileType *slurp(const char *path)
{
	int error = 0;
	GifFileType *gif = DGifOpenFileName(path, &error);
	if (!gif) {
		printf("# %s: %s\n", path, GifErrorString(error));
		return NULL;
	}
	if (DGifSlurp(gif) != GIF_OK) {
		printf("# %s: %s\n", path, GifErrorString(gif->Error));
		DGifCloseFile(gif, &error);
		return NULL;
	}
	return gif;
}

/* Three 8 x 6 frames: two colours in stripes, the stripes moved, and a third
 * colour (so a table of its own). */
static void stripes(uint8_t *rgb, int frame)
{
	static const uint8_t a[3] = {10, 20, 30}, b[3] = {200, 100, 0}, c[3] = {0, 255, 0};
	for (int y = 0; y < 6; y++)
		for (int x = 0; x < 8; x++) {
			const uint8_t *col = (x + frame) % 2 ? a : b;
			if (frame == 2 && y == 5)
				col = c;
			memcpy(rgb + (y * 8 + x) * 3, col, 3);
		}
}

static void t_gif_roundtrip(void)
{
	const char *dir = tmpdir_new();
	const char *path = pathf(dir, "three.gif");
	seed_err err = {""};
	seed_gif *g = NULL;
	CHECK(seed_gif_open(&g, path, 8, 6, 15, &err) == 0);
	CHECK(count_entries(dir, "") == 0); /* nothing written yet */
	uint8_t rgb[3][8 * 6 * 3];
	for (int f = 0; f < 3; f++) {
		stripes(rgb[f], f);
		CHECK(seed_gif_add_frame(g, rgb[f], &err) == 0);
	}
	CHECK(seed_gif_frames(g) == 3);
	CHECK(count_entries(dir, "") == 0);
	CHECK(seed_gif_close(&g, &err) == 0);
	CHECK(g == NULL);
	CHECK(count_entries(dir, "") == 1); /* the file, no temporary left */
	size_t len = 0;
	char *bytes = read_bytes(path, &len);
	CHECK(bytes && len > 13 && memcmp(bytes, "GIF89a", 6) == 0);
	free(bytes);

	GifFileType *gif = slurp(path);
	CHECK(gif != NULL);
	if (gif) {
		CHECK(gif->SWidth == 8 && gif->SHeight == 6);
		CHECK(gif->ImageCount == 3);
		/* 15 fps: 100/15 = 6.67 hundredths; delays 7, 13 - 7, 20 - 13. */
		const int delays[3] = {7, 6, 7};
		for (int f = 0; f < gif->ImageCount && f < 3; f++) {
			GraphicsControlBlock gcb;
			CHECK(DGifSavedExtensionToGCB(gif, f, &gcb) == GIF_OK);
			CHECK_MSG(gcb.DelayTime == delays[f], "frame %d delay %d", f, gcb.DelayTime);
			CHECK(gcb.TransparentColor == NO_TRANSPARENT_COLOR);
			const GifImageDesc *d = &gif->SavedImages[f].ImageDesc;
			CHECK(d->Left == 0 && d->Top == 0 && d->Width == 8 && d->Height == 6);
			for (int y = 0; y < 6; y++)
				for (int x = 0; x < 8; x++) {
					uint8_t got[3];
					gif_pixel(gif, f, x, y, got);
					CHECK_MSG(memcmp(got, rgb[f] + (y * 8 + x) * 3, 3) == 0,
					          "frame %d pixel (%d, %d)", f, x, y);
				}
		}
		/* Frames 0 and 1 use the global table, frame 2 its own. */
		CHECK(gif->SColorMap != NULL);
		CHECK(gif->SavedImages[0].ImageDesc.ColorMap == NULL);
		CHECK(gif->SavedImages[1].ImageDesc.ColorMap == NULL);
		CHECK(gif->SavedImages[2].ImageDesc.ColorMap != NULL);
		/* The loop extension: NETSCAPE2.0, sub-block {1, 0, 0}. */
		const SavedImage *im = &gif->SavedImages[0];
		bool loop = false;
		for (int i = 0; i + 1 < im->ExtensionBlockCount; i++)
			if (im->ExtensionBlocks[i].Function == APPLICATION_EXT_FUNC_CODE &&
			    im->ExtensionBlocks[i].ByteCount == 11 &&
			    memcmp(im->ExtensionBlocks[i].Bytes, "NETSCAPE2.0", 11) == 0 &&
			    im->ExtensionBlocks[i + 1].ByteCount == 3 &&
			    memcmp(im->ExtensionBlocks[i + 1].Bytes, "\1\0\0", 3) == 0)
				loop = true;
		CHECK(loop);
		int error;
		DGifCloseFile(gif, &error);
	}

	/* A second recording replaces the file. */
	CHECK(seed_gif_open(&g, path, 2, 1, 50, &err) == 0);
	CHECK(seed_gif_add_frame(g, rgb[0], &err) == 0);
	CHECK(seed_gif_close(&g, &err) == 0);
	gif = slurp(path);
	CHECK(gif && gif->SWidth == 2 && gif->SHeight == 1 && gif->ImageCount == 1);
	if (gif) {
		GraphicsControlBlock gcb;
		CHECK(DGifSavedExtensionToGCB(gif, 0, &gcb) == GIF_OK && gcb.DelayTime == 2);
		int error;
		DGifCloseFile(gif, &error);
	}
	CHECK(count_entries(dir, "") == 1);
	tmpdir_remove(dir);
}

/* The level k * 255 / (n - 1) nearest to v, rounded to a byte. */
static int nearest_level(int v, int n)
{
	int best = 0;
	for (int k = 1; k < n; k++)
		if (fabs(v - k * 255.0 / (n - 1)) < fabs(v - best * 255.0 / (n - 1)))
			best = k;
	return (int)lround(best * 255.0 / (n - 1));
}

static void t_gif_many_colours(void)
{
	/* 300 distinct colours in a 20 x 15 frame: quantised to the cube,
	 * each channel to its nearest level (6 for red and blue, 7 for
	 * green); then a frame of two colours is exact again. */
	const char *dir = tmpdir_new();
	const char *path = pathf(dir, "many.gif");
	enum { W = 20, H = 15 };
	uint8_t rgb[W * H * 3], two[W * H * 3];
	for (int i = 0; i < W * H; i++) {
		rgb[3 * i] = (uint8_t)(i * 7);
		rgb[3 * i + 1] = (uint8_t)(i * 13 / 3);
		rgb[3 * i + 2] = (uint8_t)(255 - i % 256);
		const uint8_t *c = (i % 3) ? (const uint8_t[]){1, 2, 3} : (const uint8_t[]){250, 251, 252};
		memcpy(two + 3 * i, c, 3);
	}
	seed_err err = {""};
	seed_gif *g = NULL;
	CHECK(seed_gif_open(&g, path, W, H, 10, &err) == 0);
	CHECK(seed_gif_add_frame(g, rgb, &err) == 0);
	CHECK(seed_gif_add_frame(g, two, &err) == 0);
	CHECK(seed_gif_add_frame(g, rgb, &err) == 0);
	CHECK(seed_gif_close(&g, &err) == 0);
	GifFileType *gif = slurp(path);
	CHECK(gif && gif->ImageCount == 3);
	if (gif) {
		for (int f = 0; f < 3; f++)
			for (int i = 0; i < W * H; i++) {
				uint8_t got[3];
				gif_pixel(gif, f, i % W, i / W, got);
				const uint8_t *p = (f == 1 ? two : rgb) + 3 * i;
				if (f == 1) {
					CHECK(memcmp(got, p, 3) == 0);
				} else {
					CHECK_MSG(got[0] == nearest_level(p[0], 6) &&
					              got[1] == nearest_level(p[1], 7) &&
					              got[2] == nearest_level(p[2], 6),
					          "frame %d pixel %d: (%d, %d, %d) from (%d, %d, %d)", f, i,
					          got[0], got[1], got[2], p[0], p[1], p[2]);
				}
			}
		int error;
		DGifCloseFile(gif, &error);
	}
	tmpdir_remove(dir);
}

static void t_gif_delays(void)
{
	/* 40 fps: 2.5 hundredths a frame; frame k ends at round(2.5 (k + 1)),
	 * so the delays alternate 3, 2 and add up exactly. */
	const char *dir = tmpdir_new();
	const char *path = pathf(dir, "fast.gif");
	uint8_t px[3] = {1, 2, 3};
	seed_err err = {""};
	seed_gif *g = NULL;
	CHECK(seed_gif_open(&g, path, 1, 1, 40, &err) == 0);
	for (int f = 0; f < 8; f++)
		CHECK(seed_gif_add_frame(g, px, &err) == 0);
	CHECK(seed_gif_close(&g, &err) == 0);
	GifFileType *gif = slurp(path);
	CHECK(gif && gif->ImageCount == 8);
	if (gif) {
		int total = 0;
		for (int f = 0; f < 8; f++) {
			GraphicsControlBlock gcb;
			CHECK(DGifSavedExtensionToGCB(gif, f, &gcb) == GIF_OK);
			CHECK_MSG(gcb.DelayTime == (f % 2 ? 2 : 3), "frame %d: %d", f, gcb.DelayTime);
			total += gcb.DelayTime;
		}
		CHECK(total == 20);
		int error;
		DGifCloseFile(gif, &error);
	}
	tmpdir_remove(dir);
}

static void t_gif_errors(void)
{
	const char *dir = tmpdir_new();
	seed_err err = {""};
	seed_gif *g = NULL;
	const char *missing = pathf(dir, "no/such/dir/x.gif");
	CHECK(seed_gif_open(&g, missing, 4, 4, 15, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, missing) != NULL, "%s", err.msg);
	CHECK(seed_gif_open(&g, dir, 4, 4, 15, &err) == -EISDIR);
	CHECK(seed_gif_open(&g, "", 4, 4, 15, &err) == -EINVAL);
	const char *file = pathf(dir, "plain");
	CHECK(write_bytes(file, "x", 1) == 0);
	CHECK(seed_gif_open(&g, pathf(dir, "plain/x.gif"), 4, 4, 15, &err) == -ENOTDIR);
	const char *ok = pathf(dir, "ok.gif");
	CHECK(seed_gif_open(&g, ok, 0, 4, 15, &err) == -EINVAL);
	CHECK(seed_gif_open(&g, ok, 4, SEED_GIF_MAX_SIDE + 1, 15, &err) == -EINVAL);
	CHECK(seed_gif_open(&g, ok, 4, 4, 0, &err) == -EINVAL);
	CHECK(seed_gif_open(&g, ok, 4, 4, 51, &err) == -EINVAL);
	CHECK(seed_gif_open(&g, ok, 4, 4, NAN, &err) == -EINVAL);
	CHECK(g == NULL);
	/* No frames: nothing written. */
	CHECK(seed_gif_open(&g, ok, 4, 4, 15, &err) == 0);
	CHECK(seed_gif_close(&g, &err) == -EINVAL);
	CHECK(g == NULL);
	CHECK(count_entries(dir, "ok.gif") == 0);
	/* Dropped after frames: nothing written either. */
	uint8_t rgb[4 * 4 * 3] = {0};
	CHECK(seed_gif_open(&g, ok, 4, 4, 15, &err) == 0);
	CHECK(seed_gif_add_frame(g, rgb, &err) == 0);
	seed_gif_free(&g);
	CHECK(g == NULL);
	seed_gif_free(&g);
	CHECK(count_entries(dir, "ok.gif") == 0);
	CHECK(count_entries(dir, "") == 1); /* just "plain" */
	tmpdir_remove(dir);
}

/* seed_env_rgb_scale on pictures small enough to work by hand (one
 * channel shown; the other two are the same plus 1 and plus 2). */
static void fill3(uint8_t *rgb, const int *v, int n)
{
	for (int i = 0; i < n; i++) {
		rgb[3 * i] = (uint8_t)v[i];
		rgb[3 * i + 1] = (uint8_t)(v[i] + 1);
		rgb[3 * i + 2] = (uint8_t)(v[i] + 2);
	}
}

static bool red_is(const uint8_t *rgb, const int *want, int n)
{
	for (int i = 0; i < n; i++)
		if (rgb[3 * i] != want[i] || rgb[3 * i + 1] != want[i] + 1 || rgb[3 * i + 2] != want[i] + 2)
			return false;
	return true;
}

static void t_rgb_scale(void)
{
	uint8_t src[3 * 12], dst[3 * 16];
	/* Equal sizes copy. */
	const int a[6] = {1, 2, 3, 4, 5, 6};
	fill3(src, a, 6);
	CHECK(seed_env_rgb_scale(src, 3, 2, dst, 3, 2) == 0);
	CHECK(red_is(dst, a, 6));
	/* 4 x 2 to 2 x 1: the mean of each 2 x 2 block, half up: (0 + 10 +
	 * 1 + 1) / 4 = 3, (20 + 21 + 20 + 20) / 4 = 20.25 -> 20; then 2 x 2 to
	 * 1 x 1: (100 + 101 + 101 + 100) / 4 = 100.5 -> 101. */
	const int b[8] = {0, 10, 20, 21, 1, 1, 20, 20};
	fill3(src, b, 8);
	CHECK(seed_env_rgb_scale(src, 4, 2, dst, 2, 1) == 0);
	CHECK(red_is(dst, (const int[]){3, 20}, 2));
	const int b2[4] = {100, 101, 101, 100};
	fill3(src, b2, 4);
	CHECK(seed_env_rgb_scale(src, 2, 2, dst, 1, 1) == 0);
	CHECK(red_is(dst, (const int[]){101}, 1));
	/* 3 to 2 across: pixel 0 covers source 0 .. ceil(1.5) - 1 = 1, pixel
	 * 1 covers floor(1.5) = 1 .. 2: (10 + 20) / 2 = 15, (20 + 41) / 2 =
	 * 30.5 -> 31. */
	fill3(src, (const int[]){10, 20, 41}, 3);
	CHECK(seed_env_rgb_scale(src, 3, 1, dst, 2, 1) == 0);
	CHECK(red_is(dst, (const int[]){15, 31}, 2));
	/* Larger: nearest, x * sw / dw: 2 to 4 repeats (0 0 1 1), 2 to 3
	 * gives 0 0 1; down one axis and up the other at once. */
	fill3(src, (const int[]){7, 9}, 2);
	CHECK(seed_env_rgb_scale(src, 2, 1, dst, 4, 1) == 0);
	CHECK(red_is(dst, (const int[]){7, 7, 9, 9}, 4));
	CHECK(seed_env_rgb_scale(src, 2, 1, dst, 3, 1) == 0);
	CHECK(red_is(dst, (const int[]){7, 7, 9}, 3));
	/* 1 x 2 (a column of 4 and 8) to 2 x 1: each pixel the mean 6. */
	fill3(src, (const int[]){4, 8}, 2);
	CHECK(seed_env_rgb_scale(src, 1, 2, dst, 2, 1) == 0);
	CHECK(red_is(dst, (const int[]){6, 6}, 2));
	/* Bad sides. */
	CHECK(seed_env_rgb_scale(src, 0, 1, dst, 1, 1) == -EINVAL);
	CHECK(seed_env_rgb_scale(src, 1, 1, dst, 1, 0) == -EINVAL);
	CHECK(seed_env_rgb_scale(src, SEED_ENV_MAX_RGB + 1, 1, dst, 1, 1) == -EINVAL);
	CHECK(seed_env_rgb_scale(src, 1, 1, dst, 1, SEED_ENV_MAX_RGB + 1) == -EINVAL);
}

int main(void)
{
	TAP_RUN(t_cartpole_upright);
	TAP_RUN(t_cartpole_moved_and_tilted);
	TAP_RUN(t_cartpole_small);
	TAP_RUN(t_catch_caught);
	TAP_RUN(t_catch_missed);
	TAP_RUN(t_catch_sizes);
	TAP_RUN(t_vector_checks);
	TAP_RUN(t_grid_palette);
	TAP_RUN(t_grid_rgb);
	TAP_RUN(t_rgb_scale);
	TAP_RUN(t_gif_roundtrip);
	TAP_RUN(t_gif_many_colours);
	TAP_RUN(t_gif_delays);
	TAP_RUN(t_gif_errors);
	return tap_done();
}
