/* replay_client.c: a learner's side of seed-replay (seed/replay_client.h).
 *
 * Invariant: inflight counts requests sent and not yet answered; it may go
 * below zero after requests were taken for lost and their answers came
 * after all (they count against the new ones).
 */
#include "seed/replay_client.h"

#include <errno.h>
#include <stdlib.h>

#include "seed/buf.h"

struct seed_replay_client {
	seed_chan *replay;
	seed_buf req; /* the sample request, encoded once */
	int prefetch, inflight;
	double lost_s, heard; /* heard: when seed-replay last sent anything */
	int64_t drops;
};

int seed_replay_client_new(seed_replay_client **out, seed_chan *replay, int batch, int prefetch,
                           double lost_s, seed_err *err)
{
	if (batch < 1 || prefetch < 1)
		return seed_err_set(err, -EINVAL,
		                    "replay client: batch %d and prefetch %d must be at least 1", batch,
		                    prefetch);
	seed_replay_client *c = seed_xcalloc(1, sizeof *c);
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_SAMPLE);
	seed_frame_set_int(&f, "batch", batch);
	int rc = seed_frame_encode(&f, &c->req, err);
	if (rc) {
		seed_replay_client_free(&c);
		return rc;
	}
	c->replay = replay;
	c->prefetch = prefetch;
	c->lost_s = lost_s;
	c->heard = -1;
	*out = c;
	return 0;
}

void seed_replay_client_free(seed_replay_client **pc)
{
	if (!pc || !*pc)
		return;
	seed_buf_free(&(*pc)->req);
	free(*pc);
	*pc = NULL;
}

void seed_replay_client_heard(seed_replay_client *c, double now)
{
	c->heard = now;
}

int seed_replay_client_request(seed_replay_client *c, double now)
{
	if (c->heard < 0)
		c->heard = now; /* the silence is counted from the first request */
	if (c->inflight > 0 && now - c->heard > c->lost_s) {
		c->inflight = 0;
		c->heard = now;
	}
	while (c->inflight < c->prefetch &&
	       seed_chan_send(c->replay, NULL, 0, c->req.data, c->req.len, true) == 0)
		c->inflight++;
	return c->inflight;
}

int seed_replay_client_answer(seed_replay_client *c, const seed_frame *f, double now, seed_err *err)
{
	c->heard = now;
	if (f->type == SEED_FRAME_SEQUENCES) {
		c->inflight--; /* answered: the next request goes out with the next call */
		return SEED_REPLAY_TAKE;
	}
	if (f->type != SEED_FRAME_ERROR)
		return SEED_REPLAY_TAKE;
	const char *msg = "(no message)";
	size_t len = 12;
	seed_frame_str(f, "message", &msg, &len);
	int64_t code = seed_frame_int(f, "code", 0);
	if (code != -EBUSY)
		return seed_err_set(err, -SEED_EFRAME, "seed-replay refused a request: %.*s", (int)len, msg);
	c->inflight--;
	seed_err_set(err, -EBUSY, "seed-replay is busy: %.*s", (int)len, msg);
	return SEED_REPLAY_BUSY;
}

int seed_replay_client_send(seed_replay_client *c, const void *frame, size_t len)
{
	if (seed_chan_send(c->replay, NULL, 0, frame, len, true) == 0)
		return 0;
	c->drops++;
	return -EAGAIN;
}

int seed_replay_client_inflight(const seed_replay_client *c)
{
	return c->inflight;
}

int64_t seed_replay_client_drops(const seed_replay_client *c)
{
	return c->drops;
}
