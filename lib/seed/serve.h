/* seed/serve.h: the inference service: step frames in, action frames out,
 * unroll and episode frames pushed on; what seed-infer(1) runs.
 *
 * It wires the parts of the inference side together: seed_sessions(3) (the
 * state of every actor half), seed_batcher(3) (the batching window),
 * seed_agent(3) (the model that acts on a batch) or uniform random play,
 * and seed_unroll(3) (unroll assembly).  A caller receives messages on a
 * ROUTER channel and hands each to seed_serve_take; runs the batch when
 * seed_serve_ready says so; and feeds parameters to seed_serve_policy.
 *
 * Episodes: the episodes a half ends are gathered and pushed in one
 * episode frame just before that half's next unroll frame (seed_serve_flush
 * pushes what is left); a half forgotten before its next unroll (expired,
 * evicted, remade for another layout) loses them with its unroll.
 *
 * Pushes: a frame that could not be pushed on the unrolls channel is
 * counted (push_failed) and warned about, at once the first time, then at
 * most once every push_warn_interval seconds with the count since the last
 * warning; its unrolls and episodes are not counted as pushed.
 *
 * Every request gets an answer: an action frame, the kept answer again for
 * a resent request, or an error frame saying what was wrong (with the
 * frame's type when it is known).  Bad frames are counted and reported
 * through the warn callback (the first ten, then every thousandth); the
 * service never stops for one.  Numbers a peer sends that size memory are
 * bounded (opts: K, actions, bytes per row, halves and their bytes).
 *
 * Q models: a model with a dueling head (seed_agent(3)) acts
 * epsilon-greedily, each environment with the epsilon of opts (one for all,
 * or Ape-X's schedule over environments); its Q values travel in the
 * unroll frames' logits field, and each unroll frame carries each row's
 * first replay priority (seed_r2d2_loss of the recorded Q values, actions,
 * rewards and ends), as SEED RL computes them at inference time.
 *
 * Acting: with a model, the batch goes through one forward pass (the agent
 * converts observations of another dtype when every value converts
 * exactly); a request whose observations do not fit the model (shape,
 * actions, a value that does not convert) is answered with an error frame,
 * never with random actions.  Until a model description and parameters
 * arrive, play is uniform random with policy version 0.
 *
 * Population mode (neuroevolution, seed_evo_assign(3)): a generation frame
 * on the params channel (seed-frames(7)) makes the service play that
 * generation: each environment's episode is played by one member, assigned
 * at the episode's start, the rows of a batch go through seed_population(3)
 * (observations converted to the model's dtype as with one model; greedy
 * unless the frame says "greedy": false), the answers carry the generation
 * as their policy version, and no unrolls are assembled: each half's ended
 * episodes go out after every batch in an episode frame with their
 * generation and member.  A Gaussian model's members play Box halves: each
 * row's mean plus the generation's action_noise times a standard normal
 * draw per element, mapped into the half's bounds by the model's squash.
 * While a generation gives observation statistics, the moments of the rows
 * acted on by it (count, per-feature sums and sums of squares) go with the
 * next episode frame pushed (obs_count, obs_sum, obs_sumsq).  The frame's model (or the one a params frame
 * gave) is built for the first request's observations, as the agent is.
 * A newer generation takes over at each environment's next episode start;
 * episodes under way finish with the older one's members and report under
 * its number.  A frame repeating the current (run, generation, phase) is
 * ignored (a learner publishes its round again for servers that join
 * late).  A generation that cannot be played (the frame's values, a model
 * or parameter count that does not fit) is warned about and counted; the
 * service plays on as before.  A params frame ends population mode.
 *
 * Allocation: buffers are kept per half (seed_sessions) and per batch and
 * grow only when a batch or a half is larger than any before; a step
 * request allocates nothing once they have grown.
 *
 * Times: the now arguments are seconds of seed_now_s (seed/clock.h).
 *
 * Threads: a seed_serve and its channels belong to one thread.
 */
#ifndef SEED_SERVE_H
#define SEED_SERVE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/chan.h"
#include "seed/checkpoint.h"
#include "seed/error.h"
#include "seed/metrics.h"
#include "seed/nn.h"
#include "seed/timing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_serve_opts {
	int max_batch;        /* rows: run the batch when this many wait */
	double timeout;       /* seconds after the batch's first request */
	int T;                /* transitions per unroll (each frame holds T + overlap steps) */
	int overlap;          /* steps shared by consecutive unrolls, in [1, T]; 0 means 1 */
	double idle_expiry;   /* seconds before a silent half is forgotten */
	size_t max_halves;    /* actor halves kept at most */
	size_t max_bytes;     /* memory of all halves at most */
	int max_envs;         /* K of a step frame at most */
	int max_actions;      /* num_actions at most */
	size_t max_row_bytes; /* bytes of one observation at most */
	bool model;           /* act with a model (else uniform random play) */
	bool greedy;          /* take the most likely action */
	const char *device;   /* the model's device (seed_model_set_device); NULL: the CPU */
	uint64_t seed;        /* of the sampling */
	/* A Q model's exploration (a dueling head; see "Q models" above):
	 * with epsilon_envs = N > 0, environment i of N explores with
	 * seed_policy_apex_epsilon(i, N, epsilon_base, epsilon_alpha), where
	 * i = (actor * E + env0 + row) mod N and E = actor_envs, or when that
	 * is 0 the actor's environments guessed from its half (env0 + rows when
	 * env0 > 0, else 2 * rows: seed-actor's two halves); with N = 0 every
	 * environment explores with epsilon.  In [0, 1]; greedy does not
	 * change them (the caller sets epsilon 0). */
	double epsilon;
	int epsilon_envs;
	double epsilon_base, epsilon_alpha;
	int actor_envs;
	/* A Q model's first priorities, sent with each unroll frame (field
	 * "priority"): seed_r2d2_loss over steps burn_in .. T + overlap - 1
	 * (at least 2 of them) with the recorded Q values as both online and
	 * target, n_step (0: 5), discount, rescale_eps and eta. */
	int burn_in, n_step;
	double discount, rescale_eps, eta;
	/* The caller gave Q-model settings: warn if the model turns out to be
	 * an actor-critic one, which ignores them. */
	bool q_settings;
	/* Seconds between two warnings of frames that could not be pushed
	 * (the first is said at once); 0: 5. */
	double push_warn_interval;
	/* Called with a warning for a person (a bad frame, a gap in seq, a
	 * model that cannot be built, a push that failed); NULL: none. */
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
} seed_serve_opts;

typedef struct seed_serve_stats {
	int64_t steps, requests, batches, rows, bad, resends, gaps, refused;
	int64_t unroll_frames, unrolls, unroll_bytes, episodes; /* pushed */
	/* Unroll and episode frames whose push failed (-EINTR: stopped while
	 * waiting for room; a file's write error): their unrolls and
	 * episodes are lost and not counted above. */
	int64_t push_failed;
	int64_t halves, evicted, expired; /* halves: known now */
	/* Unrolls (rows) not pushed: played at random before the model that
	 * opts.model names was built. */
	int64_t unrolls_unmodeled;
	/* Population mode: the generation being played (-1: none, the
	 * service acts with one model) and its members; generation frames
	 * taken from the params channel, those played, repeats of the
	 * current one ignored, and bad ones (dropped with a warning);
	 * restarts: episodes no generation wants that actors were asked to
	 * restart (answers asking it, counted once per row and episode);
	 * held: row-steps an actor was asked to hold, with no member wanting
	 * an episode (every answer counts each such row). */
	int64_t generation;
	int members;
	int64_t generations_taken, generations, generation_repeats, bad_generations, restarts, held;
	/* Seconds spent in each phase so far (seed_timing(3)): wait
	 * (receiving, and waiting for requests while a batch fills), take
	 * (decoding requests into the batch, taking parameters), forward
	 * (building the agent, the forward pass and the action choice),
	 * encode (answers, unroll and episode frames, first priorities), send
	 * (sending them) and blocked (an unroll or episode push that waited
	 * for room: backpressure).  SEED_SERVE_PHASES names them. */
	double time[SEED_PHASE_N];
} seed_serve_stats;

/* The phases seed_serve_stats.time fills (a seed_timing(3) mask). */
#define SEED_SERVE_PHASES                                                                                    \
	(SEED_PHASE_BIT(SEED_PHASE_WAIT) | SEED_PHASE_BIT(SEED_PHASE_TAKE) |                                 \
	 SEED_PHASE_BIT(SEED_PHASE_FORWARD) | SEED_PHASE_BIT(SEED_PHASE_ENCODE) |                            \
	 SEED_PHASE_BIT(SEED_PHASE_SEND) | SEED_PHASE_BIT(SEED_PHASE_BLOCKED))

typedef struct seed_serve seed_serve;

/* A service answering on actors (a ROUTER channel), pushing unrolls and
 * episodes on unrolls (NULL: none are assembled) and taking parameters
 * from params (a SUB channel of params frames; NULL: none); the channels
 * stay the caller's.  Errors: -EINVAL for options out of range (err says
 * which: bounds, epsilons, burn_in leaving fewer than 2 steps of an
 * unroll, discount or eta outside [0, 1]).  Allocation failure aborts. */
int seed_serve_new(seed_serve **out, const seed_serve_opts *o, seed_chan *actors, seed_chan *unrolls,
                   seed_chan *params, seed_err *err);
/* Free s (NULL is fine); *s becomes NULL.  The channels are not closed. */
void seed_serve_free(seed_serve **s);

/* The model to act with: its JSON description (len bytes; NULL: keep the
 * current one) and its parameters (NULL: none yet; raw f32, any alignment)
 * with their version.  A new description rebuilds the agent at the next
 * request, from that request's observations; parameters that do not fit
 * the agent in use are kept and loaded into the next one built.  Returns 0;
 * errors come through warn when a model is built. */
int seed_serve_policy(seed_serve *s, const char *json, size_t len, const void *params, size_t nbytes,
                      int64_t version);

/* Act with the model of checkpoint *ck (seed_checkpoint(3)), which s
 * takes (*ck becomes NULL): its description now, as seed_serve_policy
 * takes one, and its parameters and policy version loaded into the agent
 * built at the next request, for its observations; parameters given later
 * through seed_serve_policy replace them.  Errors: -EINVAL when the
 * checkpoint describes no model (*ck stays the caller's). */
int seed_serve_checkpoint(seed_serve *s, seed_checkpoint **ck, seed_err *err);

/* Take one message from an actor: answer it at once (an error frame, a
 * resent answer) or add it to the batch.  Never fails: every problem is
 * answered to the peer and counted. */
void seed_serve_take(seed_serve *s, const seed_chan_msg *m, double now);

/* Answer a message the channel refused (seed_chan_recv's -SEED_EFRAME with
 * m's id set) with an error frame of code and msg, and count it. */
void seed_serve_refuse(seed_serve *s, const seed_chan_msg *m, int code, const char *msg);

/* Whether a batch is open. */
bool seed_serve_pending(const seed_serve *s);
/* Whether the open batch holds max_batch rows. */
bool seed_serve_full(const seed_serve *s);
/* Whether the open batch should run at now: full, past its deadline, or
 * no live half that is not in it (seed_sessions_expected). */
bool seed_serve_ready(const seed_serve *s, double now);

/* Act on the open batch, answer every request in it and push the unrolls
 * it completed.  Errors: those of pushing on the unrolls channel (-EINTR
 * when its stop flag was raised while blocked there). */
int seed_serve_run(seed_serve *s);

/* Push the episodes every half has gathered since its last unroll frame
 * (they go out just before a half's next unroll frame): call it before
 * freeing a service whose actors are done.  Errors: those of pushing, the
 * first one (the other halves are still flushed). */
int seed_serve_flush(seed_serve *s);

/* One turn of the service's loop: receive one message (waiting at most
 * wait_ms while no batch is open, not at all while one is) and take it;
 * once nothing more is waiting (or the batch is full or past its
 * deadline), take the newest parameters from params and run the batch if
 * it is ready, else wait 1 ms at most for the next request (so that a half
 * gone silent stops holding the batch without waiting out the timeout).
 * Returns 0, or an error of pushing unrolls (-EINTR when stopped), which is
 * also counted in push_failed and warned about (see "Pushes" above). */
int seed_serve_turn(seed_serve *s, int wait_ms);

const seed_serve_stats *seed_serve_get_stats(const seed_serve *s);

/* The statistics lines for a person (what seed-infer(1) prints) between two
 * readings of the statistics, last and st, dt seconds apart, into buf (n
 * bytes, always terminated; NULL when n is 0): where the time went, a
 * population's generation and episodes/s (once generation frames came),
 * the rates and the counts; final: each begins "done: ", and a last line
 * says how many unrolls were played before the model (unrolls_unmodeled,
 * when any).  Every line ends in a newline.  Returns the length of all, as
 * snprintf does, whatever fitted; 0 (and buf "") when dt <= 0. */
int seed_serve_report(const seed_serve_stats *st, const seed_serve_stats *last, double dt, bool final,
                      char *buf, size_t n);

/* A metrics line (seed_metrics(3)) between two readings, last and st, dt
 * seconds apart, elapsed seconds since the start: "time", the counts
 * since the start, "steps_per_s" and "rows_per_batch" over the interval,
 * a population's fields once generation frames came, and where the time
 * went (seed_timing_json).  A new object the caller frees (json_decref);
 * NULL when dt <= 0.  Allocation failure aborts. */
json_t *seed_serve_metrics(const seed_serve_stats *st, const seed_serve_stats *last, double dt,
                           double elapsed);

typedef struct seed_serve_loop_opts {
	volatile sig_atomic_t *stop; /* the loop runs until *stop is set (NULL: never) */
	int wait_ms;                 /* seed_serve_turn's wait while idle; 0: 100 */
	/* Called with each statistics line (seed_serve_report's, without its
	 * newline) every stats_interval seconds (0: never), and at the end
	 * with the whole run's; NULL: none. */
	void (*say)(void *ctx, const char *line);
	void *ctx;
	double stats_interval;
	/* Where metrics lines go (NULL: none; it stays the caller's): one
	 * every metrics_interval seconds (0: only the last) and one at the
	 * end; a write that fails is warned about (through the service's
	 * warn, naming the file metrics_name; NULL: "metrics"). */
	seed_metrics *metrics;
	double metrics_interval;
	const char *metrics_name;
} seed_serve_loop_opts;

/* Serve until *o->stop is set: turns of seed_serve_turn, with statistics
 * and metrics lines on their intervals (the intervals are looked at after
 * every turn).  Then push the episodes still gathered (seed_serve_flush; a
 * failure is warned about), write the last metrics line and say the whole
 * run's statistics, in that order.  Returns 0, or the flush's error. */
int seed_serve_loop(seed_serve *s, const seed_serve_loop_opts *o);

#ifdef __cplusplus
}
#endif
#endif
