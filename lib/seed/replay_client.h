/* seed/replay_client.h: a learner's side of seed-replay: sample requests
 * kept in flight, their answers, and priorities sent back.
 *
 * A learner on sampled sequences (R2D2) asks seed-replay for batches over
 * a DEALER socket.  The client keeps `prefetch` sample requests of `batch`
 * sequences in flight: one goes out for each answer that comes back, so
 * that the next batch is on its way while the learner trains on this one.
 * A request the socket cannot take now (no seed-replay yet, a full queue)
 * is tried again at the next call.  When nothing at all has come from
 * seed-replay for `lost_s` seconds while requests were in flight, a
 * seed-replay that restarted has lost them: they are forgotten and asked
 * again (answers to the old ones, should they still come, count against
 * the new, so the requests in flight come back to prefetch).
 *
 * Answers: a sequences frame is the learner's (one request fewer in
 * flight); an episode frame (seed-replay relays seed-infer's) is the
 * learner's too; an error frame answers a request: -EBUSY (seed-replay's
 * queue of waiting requests is full) is a request lost, said and asked
 * again; any other code is a request that can never be answered (a batch
 * bigger than the replay, another layout): training cannot go on.
 *
 * Priority frames never block: one the socket cannot take now is dropped
 * and counted (the items keep their old priorities).
 *
 * Memory: the request is encoded once; nothing is allocated per call.
 * Threads: a client, like its channel, belongs to one thread.
 */
#ifndef SEED_REPLAY_CLIENT_H
#define SEED_REPLAY_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "seed/chan.h"
#include "seed/error.h"
#include "seed/frame.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_replay_client seed_replay_client;

/* Seconds without a frame from seed-replay after which requests in flight
 * are taken for lost. */
#define SEED_REPLAY_CLIENT_LOST_S 30.0

/* What seed_replay_client_answer makes of a frame from seed-replay. */
typedef enum seed_replay_answer {
	SEED_REPLAY_TAKE = 1, /* sequences or episodes: the learner's to feed */
	SEED_REPLAY_BUSY = 2, /* seed-replay was busy: err says so, for a warning */
} seed_replay_answer;

/* A client asking over replay (a DEALER channel, borrowed) for batches of
 * `batch` sequences, prefetch (>= 1) in flight, taking requests for lost
 * after lost_s seconds of silence.  Errors: -EINVAL for batch or
 * prefetch < 1; the encoder's. */
int seed_replay_client_new(seed_replay_client **out, seed_chan *replay, int batch, int prefetch,
                           double lost_s, seed_err *err);
/* Free *c (NULL is fine) and set *c to NULL; the channel stays open. */
void seed_replay_client_free(seed_replay_client **c);
/* Send requests until prefetch are in flight, at time now (seconds on
 * seed_now_s's clock), forgetting those lost first.  Returns the requests
 * in flight. */
int seed_replay_client_request(seed_replay_client *c, double now);
/* A frame f came from seed-replay at time now: SEED_REPLAY_TAKE (feed it
 * to the learner), SEED_REPLAY_BUSY (err: the warning), or -SEED_EFRAME
 * with err for a refusal that can never be answered. */
int seed_replay_client_answer(seed_replay_client *c, const seed_frame *f, double now, seed_err *err);
/* Something came from seed-replay at time now (a frame that did not
 * decode too): it is alive. */
void seed_replay_client_heard(seed_replay_client *c, double now);
/* Send an encoded priority frame without blocking: 0 sent, -EAGAIN
 * dropped (counted). */
int seed_replay_client_send(seed_replay_client *c, const void *frame, size_t len);
/* Requests in flight, and priority frames dropped so far. */
int seed_replay_client_inflight(const seed_replay_client *c);
int64_t seed_replay_client_drops(const seed_replay_client *c);

#ifdef __cplusplus
}
#endif
#endif
