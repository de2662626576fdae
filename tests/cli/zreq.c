/* tests/cli/zreq.c: a test client of a ROUTER endpoint, for handing seed-infer
 * frames no actor would send.  Replies go to stdout, one after the other
 * (a recorded stream: pipe it to seed-cat).
 *
 *   zreq ENDPOINT FILE          FILE's bytes as one message through a
 *                               DEALER; wait for one reply (5 s at most)
 *   zreq --req ENDPOINT FILE    the same through a REQ socket (which adds
 *                               its empty delimiter part)
 *   zreq --each ENDPOINT FILE   every msgpack object of FILE as its own
 *                               message, waiting for a reply after each
 *   zreq --burst ENDPOINT FILE  every object at once, then every reply
 *                               until none came for three seconds
 *
 * Exit status 1 when an awaited reply does not come. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "seed/frame.h"

static int reply(void *s)
{
	zmq_msg_t m;
	zmq_msg_init(&m);
	if (zmq_msg_recv(&m, s, 0) < 0)
		return -1;
	fwrite(zmq_msg_data(&m), 1, zmq_msg_size(&m), stdout);
	fflush(stdout);
	zmq_msg_close(&m);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc == 4 ? argv[1] : "";
	if (argc != 3 &&
	    !(argc == 4 && (!strcmp(mode, "--req") || !strcmp(mode, "--each") || !strcmp(mode, "--burst")))) {
		fprintf(stderr, "usage: zreq [--req | --each | --burst] ENDPOINT FILE\n");
		return 2;
	}
	const char *endpoint = argv[argc - 2], *file = argv[argc - 1];
	int fd = open(file, O_RDONLY);
	if (fd < 0) {
		perror(file);
		return 1;
	}
	void *ctx = zmq_ctx_new();
	void *s = zmq_socket(ctx, strcmp(mode, "--req") ? ZMQ_DEALER : ZMQ_REQ);
	int timeout = strcmp(mode, "--burst") ? 5000 : 3000, linger = 0;
	/* Servers under valgrind (tests/cli/helpers.bash) answer many times slower. */
	const char *vg = getenv("SEED_VALGRIND");
	if (vg && strcmp(vg, "1") == 0)
		timeout *= 6;
	zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
	zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
	if (zmq_connect(s, endpoint) != 0) {
		fprintf(stderr, "zreq: %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
		return 1;
	}
	int rc = 0;
	if (argc == 3 || !strcmp(mode, "--req")) {
		static char buf[1 << 24];
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 || zmq_send(s, buf, (size_t)n, 0) < 0 || reply(s) < 0)
			rc = 1;
	} else {
		seed_frame_reader *r;
		seed_frame_reader_new(&r, fd);
		const void *data;
		size_t len;
		seed_err err;
		while (rc == 0 && seed_frame_reader_next(r, &data, &len, &err) == 0) {
			if (zmq_send(s, data, len, 0) < 0 || (!strcmp(mode, "--each") && reply(s) < 0))
				rc = 1;
		}
		if (!strcmp(mode, "--burst"))
			while (reply(s) == 0)
				;
		seed_frame_reader_free(&r);
	}
	if (rc)
		fprintf(stderr, "zreq: no reply from %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
	close(fd);
	zmq_close(s);
	zmq_ctx_term(ctx);
	return rc;
}
