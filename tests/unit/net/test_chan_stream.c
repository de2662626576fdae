/* tests/unit/net/test_chan_stream.c: file channels as seed-cat reads them.
 *
 * What seed-cat needs of a receiving file channel (seed_chan(3)): the byte
 * offset of every frame, to name a bad one, and a non-blocking input with
 * nothing yet waited for within the timeout (not an -EAGAIN at once, which
 * made a reader spin) and given up when the stop flag is set.  The byte
 * offsets are worked by hand from msgpack's encoding of the objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seed/chan.h"
#include "seed/clock.h"
#include "tap.h"

/* Three msgpack objects: {} (0x80, 1 byte), "abc" (0xa3 'a' 'b' 'c', 4
 * bytes), [1, 2] (0x92 0x01 0x02, 3 bytes): they begin at bytes 0, 1, 5. */
static const unsigned char stream[] = {0x80, 0xa3, 'a', 'b', 'c', 0x92, 0x01, 0x02};

typedef struct offset_case {
	uint64_t offset;
	size_t len;
} offset_case;

static const offset_case offsets[] = {{0, 1}, {1, 4}, {5, 3}};

static void t_offsets_of_a_recorded_file(void)
{
	char path[] = "/tmp/test_chan_stream.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, stream, sizeof stream) == (ssize_t)sizeof stream);
	close(fd);
	seed_chan *c;
	seed_err err;
	CHECK(seed_chan_open(&c, NULL, SEED_CHAN_PULL, path, NULL, &err) == 0);
	for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
		seed_chan_msg m;
		CHECK(seed_chan_recv(c, &m, 100, &err) == 0);
		CHECK_MSG(m.offset == offsets[i].offset && m.len == offsets[i].len,
		          "object %zu: at %llu, %zu bytes", i, (unsigned long long)m.offset, m.len);
	}
	seed_chan_msg m;
	CHECK(seed_chan_recv(c, &m, 100, &err) == -SEED_EEOF);
	seed_chan_close(&c);
	unlink(path);
}

/* A non-blocking pipe on standard input, as a shell may hand one over. */
static int nonblocking_stdin(int *writer)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	dup2(p[0], STDIN_FILENO);
	close(p[0]);
	*writer = p[1];
	return 0;
}

static void t_nonblocking_input_waits_for_the_timeout(void)
{
	int w = -1;
	CHECK(nonblocking_stdin(&w) == 0);
	volatile sig_atomic_t stop = 0;
	seed_chan_opts o = {.stop = &stop};
	seed_chan *c;
	seed_err err;
	CHECK(seed_chan_open(&c, NULL, SEED_CHAN_PULL, "-", &o, &err) == 0);
	seed_chan_msg m;
	double t0 = seed_now_s();
	int rc = seed_chan_recv(c, &m, 150, &err);
	double dt = seed_now_s() - t0;
	CHECK_MSG(rc == -EAGAIN, "rc %d", rc);
	CHECK_MSG(dt >= 0.14 && dt < 2.0, "waited %.3f s for a timeout of 0.15 s", dt);
	/* What comes later is read, with its offset. */
	CHECK(write(w, stream, 5) == 5);
	CHECK(seed_chan_recv(c, &m, 150, &err) == 0 && m.offset == 0 && m.len == 1);
	CHECK(seed_chan_recv(c, &m, 150, &err) == 0 && m.offset == 1 && m.len == 4);
	/* The stop flag ends a wait at once, timeout or not. */
	stop = 1;
	t0 = seed_now_s();
	CHECK(seed_chan_recv(c, &m, -1, &err) == -EINTR);
	CHECK(seed_now_s() - t0 < 1.0);
	stop = 0;
	/* The writer's end is the end of the stream. */
	CHECK(write(w, stream + 5, 3) == 3);
	close(w);
	CHECK(seed_chan_recv(c, &m, 150, &err) == 0 && m.offset == 5 && m.len == 3);
	CHECK(seed_chan_recv(c, &m, 150, &err) == -SEED_EEOF);
	seed_chan_close(&c);
}

int main(void)
{
	TAP_RUN(t_offsets_of_a_recorded_file);
	TAP_RUN(t_nonblocking_input_waits_for_the_timeout);
	return tap_done();
}
