/* tests/cli/push_parts.c: a PUSH peer that sends one multi-part message.
 *
 *   push_parts ENDPOINT FILE
 *
 * Binds a PUSH socket at ENDPOINT, waits for a peer, and sends the first
 * two msgpack objects of FILE as the two parts of one message, then the
 * third as a message of its own.  A frame is one part (seed-frames(7)):
 * seed-cat must report the first message as one bad frame and print the
 * second (tests/cli/seed-cat.bats).  Gives up after 10 s without a peer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <zmq.h>

#include "seed/frame.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: push_parts ENDPOINT FILE\n");
		return 2;
	}
	int fd = open(argv[2], O_RDONLY);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	void *ctx = zmq_ctx_new();
	void *sock = zmq_socket(ctx, ZMQ_PUSH);
	int timeout = 10000;
	zmq_setsockopt(sock, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
	zmq_setsockopt(sock, ZMQ_LINGER, &timeout, sizeof timeout);
	if (zmq_bind(sock, argv[1]) != 0) {
		fprintf(stderr, "push_parts: %s: %s\n", argv[1], zmq_strerror(zmq_errno()));
		return 1;
	}
	seed_frame_reader *r;
	seed_frame_reader_new(&r, fd);
	static const int flags[3] = {ZMQ_SNDMORE, 0, 0};
	for (int i = 0; i < 3; i++) {
		const void *data;
		size_t len;
		seed_err err;
		if (seed_frame_reader_next(r, &data, &len, &err) != 0) {
			fprintf(stderr, "push_parts: %s: %s\n", argv[2], err.msg);
			return 1;
		}
		if (zmq_send(sock, data, len, flags[i]) != (int)len) {
			fprintf(stderr, "push_parts: send: %s\n", zmq_strerror(zmq_errno()));
			return 1;
		}
	}
	seed_frame_reader_free(&r);
	close(fd);
	zmq_close(sock);
	zmq_ctx_term(ctx);
	return 0;
}
