/* bench/sink.c: a PULL sink that counts frames and bytes and, on SIGTERM or
 * SIGINT, prints "frames BYTES seconds" where seconds runs from the first
 * frame to the last.  Used by the benchmarks to measure the unroll stream
 * without the cost of printing it.  Usage: sink ENDPOINT (connects) */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <zmq.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
	stop = sig;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: sink ENDPOINT\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	void *ctx = zmq_ctx_new();
	void *s = zmq_socket(ctx, ZMQ_PULL);
	int timeout = 100;
	zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
	if (zmq_connect(s, argv[1]) != 0) {
		fprintf(stderr, "sink: %s: %s\n", argv[1], zmq_strerror(zmq_errno()));
		return 1;
	}
	long long frames = 0, bytes = 0;
	double first = 0, last = 0;
	zmq_msg_t m;
	zmq_msg_init(&m);
	while (!stop) {
		int n = zmq_msg_recv(&m, s, 0);
		if (n < 0)
			continue;
		last = now();
		if (frames++ == 0)
			first = last;
		bytes += n;
	}
	printf("%lld %lld %.6f\n", frames, bytes, last - first);
	zmq_msg_close(&m);
	zmq_close(s);
	zmq_ctx_term(ctx);
	return 0;
}
