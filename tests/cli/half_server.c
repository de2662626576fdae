/* tests/cli/half_server.c: a fake inference server that answers one half only.
 *
 *   half_server ENDPOINT SECONDS
 *
 * Binds a ROUTER at ENDPOINT and, for SECONDS seconds from the first request
 * it receives, answers every step frame whose env0 is 0 at once with an
 * action frame of zeros, and never answers the others.  Then it prints
 * "answered A ignored I" (the number of step frames of each kind it
 * received) and exits.  seed-actor must go on resending the ignored half's
 * request every --retry-ms although the other half keeps it busy
 * (tests/cli/seed-actor.bats, tests/cli/gym.bats).
 *
 * Started before the actor, it is bound when the first requests come, so
 * half 0 is never left waiting for the server to start however slowly the
 * actor starts (a Python actor under a sanitizer takes seconds).  With no
 * request within 60 s it gives up with status 1.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/chan.h"
#include "seed/clock.h"
#include "seed/frame.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: half_server ENDPOINT SECONDS\n");
		return 2;
	}
	double seconds = atof(argv[2]);
	void *ctx = seed_chan_context();
	seed_chan_opts o = {.bind = true};
	seed_chan *c;
	seed_err err;
	if (!ctx || seed_chan_open(&c, ctx, SEED_CHAN_ROUTER, argv[1], &o, &err)) {
		fprintf(stderr, "half_server: %s\n", ctx ? err.msg : "no ZeroMQ context");
		return 1;
	}
	long answered = 0, ignored = 0;
	int32_t zeros[4096] = {0};
	seed_buf reply = {0};
	double end = seed_now_s() + 60; /* until the first request */
	bool started = false;
	while (seed_now_s() < end) {
		seed_chan_msg m;
		int rc = seed_chan_recv(c, &m, 20, &err);
		if (rc == -EAGAIN)
			continue;
		if (!started) {
			started = true;
			end = seed_now_s() + seconds;
		}
		seed_frame f;
		if (rc || seed_frame_decode(&f, m.data, m.len, &err) || f.type != SEED_FRAME_STEP) {
			fprintf(stderr, "half_server: a bad request: %s\n",
			        rc ? err.msg : "not a step frame");
			return 1;
		}
		if (seed_frame_int(&f, "env0", -1) != 0) {
			ignored++;
			continue;
		}
		answered++;
		int64_t k = seed_frame_tensor(&f, "reward")->shape[0];
		if (k > 4096) {
			fprintf(stderr, "half_server: %lld envs in a half is more than it can answer\n",
			        (long long)k);
			return 1;
		}
		seed_frame a;
		seed_frame_init(&a, SEED_FRAME_ACTION);
		static const char *const copied[] = {"run", "actor", "seq", "env0"};
		for (int i = 0; i < 4; i++)
			seed_frame_set_int(&a, copied[i], seed_frame_int(&f, copied[i], 0));
		seed_frame_set_int(&a, "policy_version", 0);
		seed_frame_set_tensor(&a, "action", seed_tensor_view(zeros, SEED_DTYPE_I32, 1, &k));
		seed_buf_reset(&reply);
		if (seed_frame_encode(&a, &reply, &err)) {
			fprintf(stderr, "half_server: %s\n", err.msg);
			return 1;
		}
		rc = seed_chan_send(c, m.id, m.idlen, reply.data, reply.len, false);
		if (rc && rc != -EHOSTUNREACH) {
			fprintf(stderr, "half_server: cannot answer: %s\n", seed_strerror(rc));
			return 1;
		}
	}
	if (!started) {
		fprintf(stderr, "half_server: no request within 60 s\n");
		return 1;
	}
	printf("answered %ld ignored %ld\n", answered, ignored);
	seed_buf_free(&reply);
	seed_chan_close(&c);
	seed_chan_context_free(&ctx);
	return 0;
}
