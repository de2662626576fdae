/* cmd/render.c: pictures of env 0 in the terminal and as a GIF (render.h).
 *
 * Terminal pictures are drawn by the source straight at the size of the
 * text grid (a class of Seed's draws any size; seed-eval scales a
 * Gymnasium env's one picture with seed_env_rgb_scale), not shrunk from
 * the natural picture, so thin lines stay sharp.  The size: --render-width
 * columns and the natural aspect ratio (a text row is two pixels high and
 * about as wide as one, so pixels come out roughly square); by default the
 * largest picture that fits the terminal, less two rows for the status
 * line and the line after it, or 80 x 22 text cells when the output is not
 * a terminal, and never larger than the natural size.
 *
 * Each picture is built in a buffer and written with one fwrite, so a
 * terminal never shows half of one.
 *
 * The first picture of an episode after the first is drawn in the step
 * that ended the one before, into buffers of its own (gstart, tstart), and
 * shown at the episode's first step: drawing it then would show the state
 * after that step, since the vector resets an env in the step that ends
 * its episode.
 */
#include "render.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "seed/buf.h"
#include "seed/gif.h"

struct render_view {
	render_options o;
	render_source src;
	/* Terminal */
	bool tty;        /* term_out is a terminal: redraw in place */
	int tw, th;      /* picture size in pixels (th / 2 rounded up text rows) */
	uint8_t *trgb;   /* [th][tw][3] */
	uint8_t *tstart; /* [th][tw][3]: the next episode's first picture */
	seed_buf text;   /* one picture as text */
	bool drawn;      /* a picture is on the screen (to draw over) */
	/* GIF */
	seed_gif *gif;
	int gw, gh;
	uint8_t *grgb;      /* [gh][gw][3] */
	uint8_t *gstart;    /* [gh][gw][3]: the next episode's first picture */
	long long gif_left; /* episodes still to record */
	/* Env 0's episode */
	long long episode; /* 1, 2, ... */
	int step;
	double ret;
	bool pending_start; /* the episode's first picture is still to draw */
};

static void appendf(seed_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void appendf(seed_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	seed_buf_reserve(b, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Picture size for the terminal: see the top of this file. */
static void term_size(const render_view *v, int nw, int nh, int *w, int *h)
{
	if (v->o.term_cols > 0) {
		*w = v->o.term_cols;
		*h = (int)lround((double)*w * nh / nw);
	} else {
		int cols = 80, rows = 22;
		struct winsize ws;
		if (v->tty && ioctl(fileno(v->o.term_out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 &&
		    ws.ws_row > 2) {
			cols = ws.ws_col;
			rows = ws.ws_row - 2;
		}
		*w = cols < nw ? cols : nw;
		*h = (int)lround((double)*w * nh / nw);
		if (*h > 2 * rows) {
			*h = 2 * rows;
			*w = (int)lround((double)*h * nw / nh);
		}
	}
	if (*w < 1)
		*w = 1;
	if (*w > SEED_ENV_MAX_RGB)
		*w = SEED_ENV_MAX_RGB;
	if (*h < 1)
		*h = 1;
	if (*h > SEED_ENV_MAX_RGB)
		*h = SEED_ENV_MAX_RGB;
}

static int envs_draw(void *ctx, bool final, uint8_t *rgb, int width, int height)
{
	const seed_envs *envs = ctx;
	return final ? seed_envs_render_rgb_final(envs, 0, rgb, width, height)
	             : seed_envs_render_rgb(envs, 0, rgb, width, height);
}

render_source render_source_envs(const seed_envs *envs)
{
	const seed_env_spec *spec = seed_envs_spec(envs);
	return (render_source){.name = seed_envs_class(envs)->name,
	                       .width = spec->rgb_width,
	                       .height = spec->rgb_height,
	                       .draw = envs_draw,
	                       .ctx = (void *)envs};
}

int render_view_new(render_view **out, const render_source *src, const render_options *o, seed_err *err)
{
	*out = NULL;
	if (!o->term && !o->gif_path)
		return 0;
	if (src->width < 1 || src->height < 1)
		return seed_err_set(err, -ENOTSUP, "environment %s draws no pictures", src->name);
	render_view *v = seed_xcalloc(1, sizeof *v);
	v->o = *o;
	v->src = *src;
	v->episode = 1;
	if (o->gif_path) {
		v->gw = src->width;
		v->gh = src->height;
		int rc = seed_gif_open(&v->gif, o->gif_path, v->gw, v->gh, o->gif_fps, err);
		if (rc < 0) {
			free(v);
			return rc;
		}
		v->grgb = seed_xmalloc((size_t)v->gw * (size_t)v->gh * 3);
		v->gstart = seed_xmalloc((size_t)v->gw * (size_t)v->gh * 3);
		v->gif_left = o->gif_episodes;
	}
	if (o->term) {
		v->tty = isatty(fileno(o->term_out));
		term_size(v, src->width, src->height, &v->tw, &v->th);
		v->trgb = seed_xmalloc((size_t)v->tw * (size_t)v->th * 3);
		v->tstart = seed_xmalloc((size_t)v->tw * (size_t)v->th * 3);
	}
	*out = v;
	return 0;
}

bool render_view_wants_more(const render_view *v)
{
	return v && v->gif && v->gif_left > 0;
}

void render_view_free(render_view **vp)
{
	if (!vp || !*vp)
		return;
	render_view *v = *vp;
	seed_gif_free(&v->gif);
	free(v->grgb);
	free(v->gstart);
	free(v->trgb);
	free(v->tstart);
	seed_buf_free(&v->text);
	free(v);
	*vp = NULL;
}

/* One picture, rgb [th][tw][3], as half blocks, then the status line. */
static int draw_term(render_view *v, const uint8_t *rgb, const char *status, seed_err *err)
{
	seed_buf *b = &v->text;
	seed_buf_reset(b);
	const int rows = (v->th + 1) / 2;
	if (v->tty && v->drawn)
		appendf(b, "\r\033[%dA", rows + 1); /* back to the top of the last picture */
	for (int r = 0; r < rows; r++) {
		const uint8_t *top = rgb + (size_t)(2 * r) * (size_t)v->tw * 3;
		const uint8_t *bottom = 2 * r + 1 < v->th ? top + (size_t)v->tw * 3 : NULL;
		uint32_t fg = UINT32_MAX, bg = UINT32_MAX; /* colours in force; none yet */
		for (int x = 0; x < v->tw; x++) {
			const uint8_t *t = top + 3 * x;
			uint32_t c = (uint32_t)t[0] << 16 | (uint32_t)t[1] << 8 | t[2];
			if (c != fg) {
				appendf(b, "\033[38;2;%d;%d;%dm", t[0], t[1], t[2]);
				fg = c;
			}
			if (bottom) {
				const uint8_t *u = bottom + 3 * x;
				c = (uint32_t)u[0] << 16 | (uint32_t)u[1] << 8 | u[2];
				if (c != bg) {
					appendf(b, "\033[48;2;%d;%d;%dm", u[0], u[1], u[2]);
					bg = c;
				}
			}
			seed_buf_append(b, "\xe2\x96\x80", 3); /* U+2580 upper half block */
		}
		appendf(b, "\033[0m%s\n", v->tty ? "\033[K" : "");
	}
	appendf(b, "%s%s\n", status, v->tty ? "\033[K" : "");
	FILE *f = v->o.term_out;
	if (fwrite(b->data, 1, b->len, f) != b->len || fflush(f) != 0)
		return seed_err_set(err, -errno, "writing a picture: %s", strerror(errno));
	v->drawn = true;
	if (v->o.delay_ms > 0) {
		struct timespec ts = {v->o.delay_ms / 1000, (long)(v->o.delay_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL); /* a signal cuts it short: fine */
	}
	return 0;
}

/* Draw env 0's current state (final: the state its last episode ended
 * in) into g (the GIF's size) and t (the terminal's), each where not NULL. */
static int paint(render_view *v, bool final, uint8_t *g, uint8_t *t, seed_err *err)
{
	uint8_t *into[2] = {g, t};
	const int w[2] = {v->gw, v->tw}, h[2] = {v->gh, v->th};
	for (int i = 0; i < 2; i++) {
		if (!into[i])
			continue;
		int rc = v->src.draw(v->src.ctx, final, into[i], w[i], h[i]);
		if (rc < 0) {
			const char *why = seed_env_rgb_why();
			if (why)
				return seed_err_set(err, rc, "%s", why);
			return seed_err_set(err, rc, "drawing %s: %s", v->src.name, seed_strerror(rc));
		}
	}
	return 0;
}

/* Show pictures painted by paint: g as the GIF's next frame, t in the
 * terminal with the status line. */
static int show(render_view *v, const uint8_t *g, const uint8_t *t, float reward, bool terminated,
                bool truncated, seed_err *err)
{
	if (g) {
		int rc = seed_gif_add_frame(v->gif, g, err);
		if (rc < 0)
			return rc;
	}
	if (t) {
		char status[160];
		snprintf(status, sizeof status, "env 0  episode %lld  step %d  reward %g  return %g%s%s",
		         v->episode, v->step, (double)reward, v->ret, terminated ? "  terminated" : "",
		         truncated ? "  truncated" : "");
		return draw_term(v, t, status, err);
	}
	return 0;
}

/* Paint and show env 0 where the options ask (the GIF while it wants
 * episodes). */
static int draw(render_view *v, bool final, float reward, bool terminated, bool truncated, seed_err *err)
{
	uint8_t *g = v->gif && v->gif_left > 0 ? v->grgb : NULL;
	uint8_t *t = v->o.term ? v->trgb : NULL;
	int rc = paint(v, final, g, t, err);
	return rc < 0 ? rc : show(v, g, t, reward, terminated, truncated, err);
}

int render_view_reset(render_view *v, seed_err *err)
{
	v->episode = 1;
	v->step = 0;
	v->ret = 0;
	v->pending_start = false;
	return draw(v, false, 0, false, false, err);
}

int render_view_step(render_view *v, float reward, bool terminated, bool truncated, seed_err *err)
{
	int rc;
	if (v->pending_start) {
		v->pending_start = false;
		rc = show(v, v->gif && v->gif_left > 0 ? v->gstart : NULL, v->o.term ? v->tstart : NULL, 0,
		          false, false, err);
		if (rc < 0)
			return rc;
	}
	v->step++;
	v->ret += reward;
	const bool ended = terminated || truncated;
	rc = draw(v, ended, reward, terminated, truncated, err);
	if (rc < 0 || !ended)
		return rc;
	if (v->gif && v->gif_left > 0 && --v->gif_left == 0) {
		rc = seed_gif_close(&v->gif, err);
		if (rc < 0)
			return rc;
	}
	v->episode++;
	v->step = 0;
	v->ret = 0;
	/* The next episode's first picture, now, while env 0 is in that state. */
	rc = paint(v, false, v->gif && v->gif_left > 0 ? v->gstart : NULL, v->o.term ? v->tstart : NULL, err);
	v->pending_start = rc == 0;
	return rc;
}
