/* tests/cli/gifinfo.c: what giflib's decoder finds in a GIF file, for the .bats
 * tests (which must not trust our own writer to read its files back).
 *
 *   gifinfo FILE             "size W H", "frames N", "loop COUNT" (or
 *                            "loop none"), then "delay D" per frame
 *                            (hundredths of a second)
 *   gifinfo FILE I X Y       "R G B": pixel (X, Y) of frame I
 *   gifinfo FILE I           frame I as a binary PPM (P6), when it covers
 *                            the whole screen (Seed's frames all do)
 *
 * Exit 0, or 1 with a message on stderr if giflib cannot read the file.
 */
#include <gif_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The loop count of a NETSCAPE2.0 extension among blocks, or -1. */
static int loop_count(const ExtensionBlock *b, int n)
{
	for (int i = 0; i + 1 < n; i++)
		if (b[i].Function == APPLICATION_EXT_FUNC_CODE && b[i].ByteCount == 11 &&
		    memcmp(b[i].Bytes, "NETSCAPE2.0", 11) == 0 && b[i + 1].ByteCount == 3 &&
		    b[i + 1].Bytes[0] == 1)
			return b[i + 1].Bytes[1] | b[i + 1].Bytes[2] << 8;
	return -1;
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3 && argc != 5) {
		fprintf(stderr, "usage: gifinfo FILE [FRAME [X Y]]\n");
		return 2;
	}
	int error = 0;
	GifFileType *gif = DGifOpenFileName(argv[1], &error);
	if (!gif) {
		fprintf(stderr, "gifinfo: %s: %s\n", argv[1], GifErrorString(error));
		return 1;
	}
	if (DGifSlurp(gif) != GIF_OK) {
		fprintf(stderr, "gifinfo: %s: %s\n", argv[1], GifErrorString(gif->Error));
		DGifCloseFile(gif, &error);
		return 1;
	}
	int rc = 0;
	if (argc == 2) {
		printf("size %d %d\n", gif->SWidth, gif->SHeight);
		printf("frames %d\n", gif->ImageCount);
		int loop = gif->ImageCount > 0 ? loop_count(gif->SavedImages[0].ExtensionBlocks,
		                                            gif->SavedImages[0].ExtensionBlockCount)
		                               : -1;
		if (loop < 0)
			printf("loop none\n");
		else
			printf("loop %d\n", loop);
		for (int i = 0; i < gif->ImageCount; i++) {
			GraphicsControlBlock gcb;
			if (DGifSavedExtensionToGCB(gif, i, &gcb) == GIF_OK)
				printf("delay %d\n", gcb.DelayTime);
			else
				printf("delay none\n");
		}
	} else if (argc == 3) {
		int f = atoi(argv[2]);
		const SavedImage *im = f >= 0 && f < gif->ImageCount ? &gif->SavedImages[f] : NULL;
		const GifImageDesc *d = im ? &im->ImageDesc : NULL;
		const ColorMapObject *map = !d ? NULL : d->ColorMap ? d->ColorMap : gif->SColorMap;
		if (!map || d->Left != 0 || d->Top != 0 || d->Width != gif->SWidth ||
		    d->Height != gif->SHeight) {
			fprintf(stderr, "gifinfo: no frame %d covering the screen\n", f);
			rc = 1;
		} else {
			printf("P6\n%d %d\n255\n", d->Width, d->Height);
			for (long i = 0; i < (long)d->Width * d->Height; i++) {
				const GifColorType *c = &map->Colors[im->RasterBits[i]];
				putchar(c->Red);
				putchar(c->Green);
				putchar(c->Blue);
			}
		}
	} else {
		int f = atoi(argv[2]), x = atoi(argv[3]), y = atoi(argv[4]);
		if (f < 0 || f >= gif->ImageCount) {
			fprintf(stderr, "gifinfo: no frame %d\n", f);
			rc = 1;
		} else {
			const SavedImage *im = &gif->SavedImages[f];
			const GifImageDesc *d = &im->ImageDesc;
			const ColorMapObject *map = d->ColorMap ? d->ColorMap : gif->SColorMap;
			if (x < d->Left || y < d->Top || x >= d->Left + d->Width || y >= d->Top + d->Height ||
			    !map) {
				fprintf(stderr, "gifinfo: no pixel (%d, %d) in frame %d\n", x, y, f);
				rc = 1;
			} else {
				int k = im->RasterBits[(y - d->Top) * d->Width + (x - d->Left)];
				const GifColorType *c = &map->Colors[k];
				printf("%d %d %d\n", c->Red, c->Green, c->Blue);
			}
		}
	}
	DGifCloseFile(gif, &error);
	return rc;
}
