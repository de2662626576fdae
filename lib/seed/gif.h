/* seed/gif.h: animated GIF files from RGB frames.
 *
 * A recording of an episode is a sequence of pictures of one size; this
 * writes them as one animated GIF (GIF89a, looping forever) that any
 * browser or image viewer plays.
 *
 *   seed_gif *g;
 *   seed_gif_open(&g, "play.gif", 600, 400, 15, &err);
 *   for each frame: seed_gif_add_frame(g, rgb, &err);
 *   seed_gif_close(&g, &err);   (the file appears now, whole)
 *
 * Colours: GIF frames hold at most 256 colours each.  Pictures of
 * environments use few, so they are kept exactly: the file's global colour
 * table is the first frame's colours, a later frame with a colour outside it
 * gets a table of its own colours, and only a frame with more than 256
 * colours is quantised, to the 6 x 7 x 6 cube of levels (nearest level per
 * channel: red and blue 0, 51, .. 255; green 0, 42.5, .. 255 rounded).
 *
 * Timing: GIF delays are whole hundredths of a second, so at fps frames a
 * second frame i shows for round(100 (i + 1) / fps) - round(100 i / fps)
 * hundredths: the delays add up to the right total (15 fps alternates 7, 7
 * and 6).  fps is at most 50, since viewers slow frames shorter than two
 * hundredths down to a tenth.
 *
 * The frames are encoded as they come, into memory; seed_gif_close writes
 * the file atomically (seed_fs_write_atomic: a temporary file beside it,
 * renamed over it), so a reader never sees half a GIF and an interrupted
 * recording leaves no file.  Errors name the path and what failed; nothing
 * is printed.  A seed_gif belongs to one thread at a time.
 */
#ifndef SEED_GIF_H
#define SEED_GIF_H

#include <stdint.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SEED_GIF_MAX_SIDE 65535 /* GIF's limit on width and height */
#define SEED_GIF_MAX_FPS 50.0
#define SEED_GIF_MIN_FPS 0.01

typedef struct seed_gif seed_gif;

/* Start a recording of width x height pixel frames (1 .. SEED_GIF_MAX_SIDE)
 * at fps frames a second (SEED_GIF_MIN_FPS .. SEED_GIF_MAX_FPS), to be
 * written to path by seed_gif_close.  Checks now that path could be written
 * (its directory exists and is writable, path is not a directory), so that
 * a bad path fails before the frames are made; creates nothing.  Errors:
 * -EINVAL (bad size or fps), the errno of the failed check (-ENOENT,
 * -EACCES, -EISDIR, -ENOTDIR...). */
int seed_gif_open(seed_gif **out, const char *path, int width, int height, double fps, seed_err *err);

/* Append a frame: rgb is [height][width][3] bytes (red, green, blue; row 0
 * at the top), copied.  0, or -EIO/-ENOMEM from the encoder; after a
 * failure the recording can only be freed. */
int seed_gif_add_frame(seed_gif *g, const uint8_t *rgb, seed_err *err);

/* Frames added so far. */
long seed_gif_frames(const seed_gif *g);

/* Finish the file and write it to the path given to seed_gif_open,
 * atomically (see above); then free *g and set it to NULL, whatever
 * happened.  -EINVAL if no frame was added (nothing is written), else the
 * error of the write (the old file, if any, is then left as it was). */
int seed_gif_close(seed_gif **g, seed_err *err);

/* Drop a recording without writing anything; NULL is fine; sets *g to
 * NULL. */
void seed_gif_free(seed_gif **g);

#ifdef __cplusplus
}
#endif
#endif
