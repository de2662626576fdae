/* metrics.c: JSON-lines metrics (see seed/metrics.h).
 *
 * A line is formatted completely in memory and handed to the kernel in a
 * single write on an O_APPEND descriptor: that is what keeps concurrent
 * writers' lines whole.  No stdio buffering, so nothing waits for a flush.
 */
#include "seed/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seed/buf.h"

struct seed_metrics {
	int fd;
	int owned; /* close fd at the end */
	char *path;
};

int seed_metrics_open(const char *path, seed_metrics **out, seed_err *err)
{
	if (strcmp(path, "-") == 0) {
		*out = seed_metrics_from_fd(1);
		return 0;
	}
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return seed_err_set(err, -errno, "%s: cannot open for appending metrics: %s", path,
		                    strerror(errno));
	seed_metrics *m = seed_xcalloc(1, sizeof *m);
	m->fd = fd;
	m->owned = 1;
	m->path = strcpy(seed_xmalloc(strlen(path) + 1), path);
	*out = m;
	return 0;
}

seed_metrics *seed_metrics_from_fd(int fd)
{
	seed_metrics *m = seed_xcalloc(1, sizeof *m);
	m->fd = fd;
	m->path = seed_xmalloc(32);
	snprintf(m->path, 32, "file descriptor %d", fd);
	return m;
}

void seed_metrics_close(seed_metrics **mp)
{
	if (!mp || !*mp)
		return;
	seed_metrics *m = *mp;
	if (m->owned)
		close(m->fd);
	free(m->path);
	free(m);
	*mp = NULL;
}

int seed_metrics_write(seed_metrics *m, const json_t *obj, seed_err *err)
{
	if (!json_is_object(obj))
		return seed_err_set(err, -EINVAL, "%s: a metrics line must be a JSON object", m->path);
	/* Compact output escapes control characters inside strings, so the
	 * text holds no newline of its own. */
	char *text = json_dumps(obj, JSON_COMPACT);
	if (!text)
		seed_oom(0); /* only allocation can fail for an object */
	size_t len = strlen(text);
	text = seed_xrealloc(text, len + 1);
	text[len++] = '\n';
	const char *p = text;
	int rc = 0;
	while (len > 0) {
		ssize_t w = write(m->fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = seed_err_set(err, -errno, "%s: cannot write metrics: %s", m->path,
			                  strerror(errno));
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	free(text);
	return rc;
}

json_t *seed_metrics_obj(const seed_metric *kv, size_t n)
{
	json_t *o = json_object();
	if (!o)
		seed_oom(0);
	for (size_t i = 0; i < n; i++) {
		double v = kv[i].value;
		json_t *j;
		if (!isfinite(v))
			j = json_null();
		else if (v == trunc(v) && fabs(v) <= 9007199254740992.0)
			j = json_integer((json_int_t)v);
		else
			j = json_real(v);
		if (!j || json_object_set_new(o, kv[i].key, j) != 0)
			seed_oom(0);
	}
	return o;
}
