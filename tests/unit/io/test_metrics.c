/* tests/unit/io/test_metrics.c: JSON-lines metrics.
 *
 * Expected lines are written out by hand; the concurrency case has several
 * processes append to one file at once and checks that every line comes
 * out whole.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seed/metrics.h"
#include "tap.h"
#include "tmpdir.h"

static const char *dir;

static void t_lines_exact(void)
{
	const char *path = pathf(dir, "exact.jsonl");
	seed_metrics *m = NULL;
	seed_err err;
	CHECK(seed_metrics_open(path, &m, &err) == 0);
	json_t *a = json_pack("{s:i, s:f, s:s}", "step", 1, "loss", 0.5, "tag", "a\nb\"c");
	json_t *b = SEED_METRICS_OBJ({"step", 2}, {"frames", 1280}, {"loss", 0.25}, {"neg", -3});
	CHECK(seed_metrics_write(m, a, &err) == 0);
	CHECK(seed_metrics_write(m, b, &err) == 0);
	/* Written through at once, before close. */
	size_t len;
	char *text = read_bytes(path, &len);
	const char *want = "{\"step\":1,\"loss\":0.5,\"tag\":\"a\\nb\\\"c\"}\n"
	                   "{\"step\":2,\"frames\":1280,\"loss\":0.25,\"neg\":-3}\n";
	CHECK_MSG(text && strcmp(text, want) == 0, "got: %s", text ? text : "(null)");
	free(text);
	json_decref(a);
	json_decref(b);
	seed_metrics_close(&m);
	CHECK(m == NULL);
	seed_metrics_close(&m);
}

static void t_appends_to_existing(void)
{
	const char *path = pathf(dir, "append.jsonl");
	CHECK(write_bytes(path, "{\"old\":1}\n", 10) == 0);
	seed_metrics *m = NULL;
	seed_err err;
	CHECK(seed_metrics_open(path, &m, &err) == 0);
	json_t *o = SEED_METRICS_OBJ({"new", 2});
	CHECK(seed_metrics_write(m, o, &err) == 0);
	json_decref(o);
	seed_metrics_close(&m);
	size_t len;
	char *text = read_bytes(path, &len);
	CHECK(text && strcmp(text, "{\"old\":1}\n{\"new\":2}\n") == 0);
	free(text);
}

/* Integers stay integers, fractions keep every bit, NaN and infinity
 * become null. */
static void t_obj_values(void)
{
	double third = 1.0 / 3.0;
	json_t *o = SEED_METRICS_OBJ({"int", 100}, {"third", third}, {"nan", NAN}, {"inf", -INFINITY},
	                             {"big", 9007199254740992.0}, {"bigger", 18014398509481984.0},
	                             {"zero", -0.0}, {"tiny", 5e-324}, {"int", 7});
	CHECK(json_object_size(o) == 8);
	CHECK(json_is_integer(json_object_get(o, "int")) &&
	      json_integer_value(json_object_get(o, "int")) == 7);
	CHECK(json_is_real(json_object_get(o, "third")));
	CHECK(json_is_null(json_object_get(o, "nan")) && json_is_null(json_object_get(o, "inf")));
	CHECK(json_is_integer(json_object_get(o, "big")));
	CHECK(json_is_real(json_object_get(o, "bigger")));
	CHECK(json_is_integer(json_object_get(o, "zero")));
	/* Through a file and back: bit-exact. */
	const char *path = pathf(dir, "values.jsonl");
	seed_metrics *m = NULL;
	seed_err err;
	CHECK(seed_metrics_open(path, &m, &err) == 0);
	CHECK(seed_metrics_write(m, o, &err) == 0);
	seed_metrics_close(&m);
	json_t *back = json_load_file(path, 0, NULL);
	CHECK(back && json_real_value(json_object_get(back, "third")) == third);
	CHECK(back && json_real_value(json_object_get(back, "tiny")) == 5e-324);
	CHECK(back && json_real_value(json_object_get(back, "bigger")) == 18014398509481984.0);
	json_decref(back);
	json_decref(o);
}

static void t_rejects_non_object(void)
{
	seed_metrics *m = NULL;
	seed_err err;
	CHECK(seed_metrics_open(pathf(dir, "reject.jsonl"), &m, &err) == 0);
	json_t *a = json_pack("[i]", 1);
	CHECK(seed_metrics_write(m, a, &err) == -EINVAL && strstr(err.msg, "reject.jsonl"));
	CHECK(seed_metrics_write(m, NULL, &err) == -EINVAL);
	json_decref(a);
	seed_metrics_close(&m);
	size_t len;
	char *text = read_bytes(pathf(dir, "reject.jsonl"), &len);
	CHECK(text && len == 0);
	free(text);
}

static void t_open_errors_name_path(void)
{
	seed_metrics *m = (seed_metrics *)&m;
	seed_err err;
	const char *path = pathf(dir, "no/such/dir/m.jsonl");
	CHECK(seed_metrics_open(path, &m, &err) == -ENOENT && strstr(err.msg, path));
	CHECK(seed_metrics_open(dir, &m, &err) == -EISDIR && strstr(err.msg, dir));
	CHECK(m == (seed_metrics *)&m);
}

/* Writing to a descriptor the caller owns (a pipe here); a write error
 * (the reading end gone) is reported, not fatal. */
static void t_from_fd(void)
{
	int fds[2];
	CHECK(pipe(fds) == 0);
	seed_metrics *m = seed_metrics_from_fd(fds[1]);
	seed_err err;
	json_t *o = SEED_METRICS_OBJ({"x", 1.5});
	CHECK(seed_metrics_write(m, o, &err) == 0);
	char buf[64] = {0};
	CHECK(read(fds[0], buf, sizeof buf - 1) == 10 && strcmp(buf, "{\"x\":1.5}\n") == 0);
	close(fds[0]);
	void (*prev)(int) = signal(SIGPIPE, SIG_IGN);
	CHECK(seed_metrics_write(m, o, &err) == -EPIPE && strstr(err.msg, "file descriptor"));
	signal(SIGPIPE, prev);
	seed_metrics_close(&m);
	CHECK(write(fds[1], "", 0) == 0 || errno == EPIPE); /* still open: not ours to close */
	close(fds[1]);
	json_decref(o);
}

/* "-" is standard output, which seed_metrics_close leaves open: stdout is
 * pointed at a pipe for the test and put back after. */
static void t_dash_is_stdout(void)
{
	int fds[2], saved = dup(1);
	CHECK(saved >= 0 && pipe(fds) == 0 && dup2(fds[1], 1) == 1);
	seed_metrics *m = NULL;
	seed_err err;
	json_t *o = SEED_METRICS_OBJ({"y", 2});
	CHECK(seed_metrics_open("-", &m, &err) == 0 && m);
	CHECK(seed_metrics_write(m, o, &err) == 0);
	seed_metrics_close(&m);
	CHECK(write(1, "", 0) == 0); /* not closed */
	dup2(saved, 1);
	close(saved);
	close(fds[1]);
	char buf[64] = {0};
	CHECK(read(fds[0], buf, sizeof buf - 1) == 8 && strcmp(buf, "{\"y\":2}\n") == 0);
	close(fds[0]);
	json_decref(o);
}

/* Several processes append long lines to one file at once: every line
 * arrives whole, none is lost. */
static void t_concurrent_lines_whole(void)
{
	enum { WRITERS = 4, LINES = 300 };
	const char *path = pathf(dir, "concurrent.jsonl");
	pid_t pids[WRITERS];
	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			seed_metrics *m = NULL;
			seed_err err;
			if (seed_metrics_open(path, &m, &err) != 0)
				_exit(1);
			char pad[600];
			memset(pad, 'a' + w, sizeof pad - 1);
			pad[sizeof pad - 1] = '\0';
			for (int i = 0; i < LINES; i++) {
				json_t *o = json_pack("{s:i, s:i, s:s}", "writer", w, "i", i, "pad", pad);
				if (seed_metrics_write(m, o, &err) != 0)
					_exit(1);
				json_decref(o);
			}
			seed_metrics_close(&m);
			_exit(0);
		}
	}
	for (int w = 0; w < WRITERS; w++) {
		int status;
		CHECK(waitpid(pids[w], &status, 0) == pids[w] && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0);
	}
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	int next[WRITERS] = {0}, lines = 0, bad = 0;
	char line[2048];
	while (fgets(line, sizeof line, f)) {
		lines++;
		json_t *o = json_loads(line, 0, NULL);
		int w = o ? (int)json_integer_value(json_object_get(o, "writer")) : -1;
		const char *pad = o ? json_string_value(json_object_get(o, "pad")) : NULL;
		if (w < 0 || w >= WRITERS || !pad || strlen(pad) != 599 || pad[0] != 'a' + w ||
		    json_integer_value(json_object_get(o, "i")) != next[w])
			bad++;
		else
			next[w]++;
		json_decref(o);
	}
	fclose(f);
	CHECK_MSG(lines == WRITERS * LINES && bad == 0, "%d lines, %d bad", lines, bad);
	for (int w = 0; w < WRITERS; w++)
		CHECK(next[w] == LINES);
}

int main(void)
{
	dir = tmpdir_new();
	TAP_RUN(t_lines_exact);
	TAP_RUN(t_appends_to_existing);
	TAP_RUN(t_obj_values);
	TAP_RUN(t_rejects_non_object);
	TAP_RUN(t_open_errors_name_path);
	TAP_RUN(t_from_fd);
	TAP_RUN(t_dash_is_stdout);
	TAP_RUN(t_concurrent_lines_whole);
	tmpdir_remove(dir);
	return tap_done();
}
