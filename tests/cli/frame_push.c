/* tests/cli/frame_push.c: a test peer that sends a recorded stream over ZeroMQ.
 *
 *   frame_push [--pub] ENDPOINT FILE
 *
 * Binds a PUSH socket at ENDPOINT (with --pub an XPUB socket, which first
 * waits for a subscriber so that nothing is lost to a late joiner), sends
 * every msgpack object of FILE as one message, bad frames included, and
 * waits for them to leave.  Gives up after 10 s without a peer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <zmq.h>

#include "seed/frame.h"

int main(int argc, char **argv)
{
	int pub = argc > 1 && strcmp(argv[1], "--pub") == 0;
	if (argc != 3 + pub) {
		fprintf(stderr, "usage: frame_push [--pub] ENDPOINT FILE\n");
		return 2;
	}
	const char *endpoint = argv[1 + pub], *file = argv[2 + pub];
	int fd = open(file, O_RDONLY);
	if (fd < 0) {
		perror(file);
		return 1;
	}
	void *ctx = zmq_ctx_new();
	void *sock = zmq_socket(ctx, pub ? ZMQ_XPUB : ZMQ_PUSH);
	int timeout = 10000;
	zmq_setsockopt(sock, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
	zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
	zmq_setsockopt(sock, ZMQ_LINGER, &timeout, sizeof timeout);
	if (zmq_bind(sock, endpoint) != 0) {
		fprintf(stderr, "frame_push: %s: %s\n", endpoint, zmq_strerror(errno));
		return 1;
	}
	if (pub) {
		char sub[256];
		if (zmq_recv(sock, sub, sizeof sub, 0) < 0) {
			fprintf(stderr, "frame_push: no subscriber: %s\n", zmq_strerror(errno));
			return 1;
		}
	}
	seed_frame_reader *r;
	seed_frame_reader_new(&r, fd);
	const void *data;
	size_t len;
	seed_err err;
	int rc, sent = 0;
	while ((rc = seed_frame_reader_next(r, &data, &len, &err)) == 0) {
		if (zmq_send(sock, data, len, 0) != (int)len) {
			fprintf(stderr, "frame_push: send: %s\n", zmq_strerror(errno));
			return 1;
		}
		sent++;
	}
	if (rc != -SEED_EEOF) {
		fprintf(stderr, "frame_push: %s: %s\n", file, err.msg);
		return 1;
	}
	seed_frame_reader_free(&r);
	zmq_close(sock);
	zmq_ctx_term(ctx); /* waits (up to the linger) for the messages to go */
	fprintf(stderr, "frame_push: sent %d frames\n", sent);
	return 0;
}
