/* tests/zreq.c: send a file's bytes as one message to a ROUTER endpoint
 * through a DEALER socket, wait for one reply (5 s at most) and write it to
 * stdout.  The tests use it to hand seed-infer frames no actor would send.
 * Usage: zreq ENDPOINT FILE */
#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: zreq ENDPOINT FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[2], "rb");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	void *ctx = zmq_ctx_new();
	void *s = zmq_socket(ctx, ZMQ_DEALER);
	int timeout = 5000, linger = 0;
	zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
	zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
	if (zmq_connect(s, argv[1]) != 0 || zmq_send(s, buf, n, 0) < 0) {
		fprintf(stderr, "zreq: %s: %s\n", argv[1], zmq_strerror(zmq_errno()));
		return 1;
	}
	zmq_msg_t m;
	zmq_msg_init(&m);
	if (zmq_msg_recv(&m, s, 0) < 0) {
		fprintf(stderr, "zreq: no reply from %s: %s\n", argv[1], zmq_strerror(zmq_errno()));
		return 1;
	}
	fwrite(zmq_msg_data(&m), 1, zmq_msg_size(&m), stdout);
	zmq_msg_close(&m);
	zmq_close(s);
	zmq_ctx_term(ctx);
	return 0;
}
