/* gif.c: animated GIF files from RGB frames, with giflib's encoder.
 *
 * giflib encodes into a seed_buf through its output callback (EGifOpen), so
 * nothing touches the file system until seed_gif_close hands the whole file
 * to seed_fs_write_atomic.  The screen descriptor, with the global colour
 * table, waits for the first frame, whose colours that table is; every
 * frame is then a graphics control extension (its delay) and an image.
 *
 * Colours are looked up in small open-addressing tables keyed by the 24-bit
 * colour (key + 1, so that 0 marks an empty slot), sized to stay at most a
 * quarter full with 256 colours.  Runs of one colour, the usual case in
 * pictures of environments, skip the lookup.
 */
#include "seed/gif.h"

#include <gif_lib.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seed/buf.h"
#include "seed/fsutil.h"

#define TABLE_SIZE 1024 /* power of two, >= 4 x 256 */

typedef struct colour_table {
	uint32_t key[TABLE_SIZE]; /* colour + 1; 0: empty */
	uint8_t index[TABLE_SIZE];
	int count;
	uint32_t colour[256]; /* the colours, by index */
} colour_table;

struct seed_gif {
	char *path;
	int width, height;
	double fps;
	long frames;
	bool failed;
	GifFileType *gif; /* NULL until the first frame */
	seed_buf out;     /* the encoded file so far */
	uint8_t *pixels;  /* [height * width] colour indices of one frame */
	bool global_cube; /* the global table is the 6 x 7 x 6 cube */
	colour_table global;
	colour_table local; /* scratch for one frame */
};

static inline uint32_t rgb_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline unsigned slot_of(uint32_t colour)
{
	return (unsigned)((colour * 2654435761u) >> 22) & (TABLE_SIZE - 1);
}

/* Index of colour in t, or -1. */
static int table_find(const colour_table *t, uint32_t colour)
{
	for (unsigned s = slot_of(colour);; s = (s + 1) & (TABLE_SIZE - 1)) {
		if (t->key[s] == colour + 1)
			return t->index[s];
		if (t->key[s] == 0)
			return -1;
	}
}

/* Index of colour in t, added if new; -1 when t already holds 256. */
static int table_add(colour_table *t, uint32_t colour)
{
	unsigned s = slot_of(colour);
	for (; t->key[s]; s = (s + 1) & (TABLE_SIZE - 1))
		if (t->key[s] == colour + 1)
			return t->index[s];
	if (t->count == 256)
		return -1;
	t->key[s] = colour + 1;
	t->index[s] = (uint8_t)t->count;
	t->colour[t->count] = colour;
	return t->count++;
}

static void table_clear(colour_table *t)
{
	memset(t->key, 0, sizeof t->key);
	t->count = 0;
}

/* The cube: 6 levels of red and blue, 7 of green (252 colours). */
static inline int cube_index(const uint8_t *p)
{
	int r = (p[0] * 5 + 127) / 255, g = (p[1] * 6 + 127) / 255, b = (p[2] * 5 + 127) / 255;
	return (r * 7 + g) * 6 + b;
}

static inline int cube_level(int k, int levels)
{
	return (k * 255 + (levels - 1) / 2) / (levels - 1);
}

/* Is p exactly the colour of cube entry k? */
static inline bool is_cube_colour(int k, const uint8_t *p)
{
	return p[0] == cube_level(k / 42, 6) && p[1] == cube_level(k / 6 % 7, 7) &&
	       p[2] == cube_level(k % 6, 6);
}

/* A giflib colour map of the colours of t, or of the cube; NULL only if
 * giflib cannot allocate. */
static ColorMapObject *make_map(const colour_table *t, bool cube)
{
	GifColorType colours[256];
	memset(colours, 0, sizeof colours);
	int n;
	if (cube) {
		for (int r = 0; r < 6; r++)
			for (int g = 0; g < 7; g++)
				for (int b = 0; b < 6; b++) {
					GifColorType *c = &colours[(r * 7 + g) * 6 + b];
					c->Red = (GifByteType)cube_level(r, 6);
					c->Green = (GifByteType)cube_level(g, 7);
					c->Blue = (GifByteType)cube_level(b, 6);
				}
		n = 252;
	} else {
		for (int i = 0; i < t->count; i++) {
			colours[i].Red = (GifByteType)(t->colour[i] >> 16);
			colours[i].Green = (GifByteType)(t->colour[i] >> 8);
			colours[i].Blue = (GifByteType)t->colour[i];
		}
		n = t->count;
	}
	/* giflib wants a power of two, at least 2 entries; the rest is black. */
	int size = 2;
	while (size < n)
		size *= 2;
	return GifMakeMapObject(size, colours);
}

static int write_to_buf(GifFileType *gif, const GifByteType *data, int len)
{
	seed_buf_append(gif->UserData, data, (size_t)len);
	return len;
}

static int gif_error(seed_gif *g, int code, const char *what, seed_err *err)
{
	g->failed = true;
	return seed_err_set(err, -EIO, "%s: %s: %s", g->path, what, GifErrorString(code));
}

/* The directory part of path ("." when there is none), in a new string. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
	char *d = seed_xmalloc(n + 2);
	if (n == 0)
		strcpy(d, ".");
	else {
		memcpy(d, path, n);
		d[n] = '\0';
	}
	return d;
}

int seed_gif_open(seed_gif **out, const char *path, int width, int height, double fps, seed_err *err)
{
	if (!path || !path[0])
		return seed_err_set(err, -EINVAL, "GIF: empty file name");
	if (width < 1 || width > SEED_GIF_MAX_SIDE || height < 1 || height > SEED_GIF_MAX_SIDE)
		return seed_err_set(err, -EINVAL, "%s: frame size %d x %d not in [1, %d]", path, width,
		                    height, SEED_GIF_MAX_SIDE);
	if (!(fps >= SEED_GIF_MIN_FPS && fps <= SEED_GIF_MAX_FPS))
		return seed_err_set(err, -EINVAL, "%s: %g frames a second not in [%g, %g]", path, fps,
		                    SEED_GIF_MIN_FPS, SEED_GIF_MAX_FPS);
	struct stat st;
	size_t n = strlen(path);
	if (path[n - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
		return seed_err_set(err, -EISDIR, "%s: is a directory", path);
	char *dir = dir_of(path);
	int rc = 0;
	if (stat(dir, &st) != 0)
		rc = seed_err_set(err, -errno, "%s: directory %s: %s", path, dir, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rc = seed_err_set(err, -ENOTDIR, "%s: %s is not a directory", path, dir);
	else if (access(dir, W_OK | X_OK) != 0)
		rc = seed_err_set(err, -errno, "%s: cannot create files in %s: %s", path, dir,
		                  strerror(errno));
	free(dir);
	if (rc < 0)
		return rc;

	seed_gif *g = seed_xcalloc(1, sizeof *g);
	g->path = strcpy(seed_xmalloc(n + 1), path);
	g->width = width;
	g->height = height;
	g->fps = fps;
	g->pixels = seed_xmalloc((size_t)width * (size_t)height);
	*out = g;
	return 0;
}

long seed_gif_frames(const seed_gif *g)
{
	return g->frames;
}

/* Map the frame to indices of the global table, if every colour is there
 * exactly. */
static bool map_global(seed_gif *g, const uint8_t *rgb, size_t npix)
{
	uint32_t last = 0;
	int last_index = -1;
	for (size_t i = 0; i < npix; i++) {
		const uint8_t *p = rgb + 3 * i;
		if (g->global_cube) {
			int k = cube_index(p);
			if (!is_cube_colour(k, p))
				return false;
			g->pixels[i] = (uint8_t)k;
			continue;
		}
		uint32_t c = rgb_at(p);
		if (c != last || last_index < 0) {
			last = c;
			last_index = table_find(&g->global, c);
			if (last_index < 0)
				return false;
		}
		g->pixels[i] = (uint8_t)last_index;
	}
	return true;
}

/* Map the frame to a table t of its own colours; false (and the cube's
 * indices in pixels) when it has more than 256. */
static bool map_own(seed_gif *g, colour_table *t, const uint8_t *rgb, size_t npix)
{
	table_clear(t);
	uint32_t last = 0;
	int last_index = -1;
	for (size_t i = 0; i < npix; i++) {
		uint32_t c = rgb_at(rgb + 3 * i);
		if (c != last || last_index < 0) {
			last = c;
			last_index = table_add(t, c);
			if (last_index < 0) {
				for (size_t j = 0; j < npix; j++)
					g->pixels[j] = (uint8_t)cube_index(rgb + 3 * j);
				return false;
			}
		}
		g->pixels[i] = (uint8_t)last_index;
	}
	return true;
}

/* The screen descriptor with the global table, and the loop extension. */
static int start_file(seed_gif *g, seed_err *err)
{
	int code = 0;
	g->gif = EGifOpen(&g->out, write_to_buf, &code);
	if (!g->gif)
		return gif_error(g, code, "cannot start the GIF encoder", err);
	EGifSetGifVersion(g->gif, true);
	ColorMapObject *map = make_map(&g->global, g->global_cube);
	if (!map) {
		g->failed = true;
		return seed_err_set(err, -ENOMEM, "%s: no memory for a colour table", g->path);
	}
	int rc = EGifPutScreenDesc(g->gif, g->width, g->height, 8, 0, map);
	GifFreeMapObject(map);
	if (rc != GIF_OK)
		return gif_error(g, g->gif->Error, "writing the screen descriptor", err);
	/* NETSCAPE2.0 application extension: loop forever (count 0). */
	static const GifByteType loop[3] = {1, 0, 0};
	if (EGifPutExtensionLeader(g->gif, APPLICATION_EXT_FUNC_CODE) != GIF_OK ||
	    EGifPutExtensionBlock(g->gif, 11, "NETSCAPE2.0") != GIF_OK ||
	    EGifPutExtensionBlock(g->gif, 3, loop) != GIF_OK || EGifPutExtensionTrailer(g->gif) != GIF_OK)
		return gif_error(g, g->gif->Error, "writing the loop extension", err);
	return 0;
}

int seed_gif_add_frame(seed_gif *g, const uint8_t *rgb, seed_err *err)
{
	if (g->failed)
		return seed_err_set(err, -EIO, "%s: the recording failed earlier", g->path);
	const size_t npix = (size_t)g->width * (size_t)g->height;
	ColorMapObject *local = NULL;
	if (g->frames == 0) {
		g->global_cube = !map_own(g, &g->global, rgb, npix);
		int rc = start_file(g, err);
		if (rc < 0)
			return rc;
	} else if (!map_global(g, rgb, npix)) {
		bool own = map_own(g, &g->local, rgb, npix);
		if (own || !g->global_cube) {
			local = make_map(&g->local, !own);
			if (!local) {
				g->failed = true;
				return seed_err_set(err, -ENOMEM, "%s: no memory for a colour table",
				                    g->path);
			}
		}
	}

	/* Frame i lasts round(100 (i + 1) / fps) - round(100 i / fps)
	 * hundredths of a second. */
	long delay =
	    lround(100.0 * (double)(g->frames + 1) / g->fps) - lround(100.0 * (double)g->frames / g->fps);
	GraphicsControlBlock gcb = {
	    .DisposalMode = DISPOSE_DO_NOT,
	    .UserInputFlag = false,
	    .DelayTime = (int)delay,
	    .TransparentColor = NO_TRANSPARENT_COLOR,
	};
	GifByteType ext[4];
	size_t len = EGifGCBToExtension(&gcb, ext);
	int rc = EGifPutExtension(g->gif, GRAPHICS_EXT_FUNC_CODE, (int)len, ext);
	/* giflib 5 keeps a copy of the last local table and, given none,
	 * forgets that copy without freeing it: free it first. */
	if (!local && g->gif->Image.ColorMap) {
		GifFreeMapObject(g->gif->Image.ColorMap);
		g->gif->Image.ColorMap = NULL;
	}
	if (rc == GIF_OK)
		rc = EGifPutImageDesc(g->gif, 0, 0, g->width, g->height, false, local);
	GifFreeMapObject(local);
	if (rc != GIF_OK)
		return gif_error(g, g->gif->Error, "writing a frame header", err);
	/* giflib masks the indices in place: they are ours to change. */
	for (int y = 0; y < g->height; y++)
		if (EGifPutLine(g->gif, g->pixels + (size_t)y * (size_t)g->width, g->width) != GIF_OK)
			return gif_error(g, g->gif->Error, "encoding a frame", err);
	g->frames++;
	return 0;
}

void seed_gif_free(seed_gif **gp)
{
	if (!gp || !*gp)
		return;
	seed_gif *g = *gp;
	if (g->gif) {
		int code;
		EGifCloseFile(g->gif, &code);
	}
	seed_buf_free(&g->out);
	free(g->pixels);
	free(g->path);
	free(g);
	*gp = NULL;
}

int seed_gif_close(seed_gif **gp, seed_err *err)
{
	seed_gif *g = *gp;
	int rc = 0;
	if (g->failed) {
		rc = seed_err_set(err, -EIO, "%s: the recording failed earlier", g->path);
	} else if (g->frames == 0) {
		rc = seed_err_set(err, -EINVAL, "%s: no frames to write", g->path);
	} else {
		/* EGifCloseFile writes the trailer and frees the encoder. */
		int code = 0;
		GifFileType *gif = g->gif;
		g->gif = NULL;
		if (EGifCloseFile(gif, &code) != GIF_OK)
			rc = seed_err_set(err, -EIO, "%s: finishing the GIF: %s", g->path,
			                  GifErrorString(code));
		else {
			seed_fs_part part = {g->out.data, g->out.len};
			rc = seed_fs_write_atomic(g->path, &part, 1, err);
		}
	}
	seed_gif_free(gp);
	return rc;
}
