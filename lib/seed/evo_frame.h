/* seed/evo_frame.h: a generation (seed/evo.h) as a generation frame and
 * back (seed-frames(7)).
 *
 * The learner publishes each round of neuroevolution as a generation frame
 * on its parameter channel; the population server (seed_serve(3)) plays it.
 * The frame's schema (seed_frame_validate) checks the structure: kinds,
 * ranges, dtypes, the genome's M rows against episodes (and sign) and the
 * algorithm's name.  These functions check the rest, the same way in both
 * directions, so that a learner cannot publish what a server refuses:
 *   - every genome row starts with a key >= 0 and holds keys >= 0, then
 *     only -1 (padding); no key below -1;
 *   - es, snes and ars (the centred algorithms): one column (the member's
 *     noise key), sign present with every element +1 or -1, centre
 *     present;
 *   - snes: sigmas present (f32[P], the schema gives it the centre's P),
 *     every element finite and >= 0, and rank 0; no other algorithm has
 *     sigmas;
 *   - ga and rs: no sign, no centre;
 *   - episodes >= 1 for every member;
 *   - noise_seed below 2^63 (frame ints are signed 64-bit);
 *   - action_noise finite and >= 0;
 *   - obs_mean and obs_var ([obs_dim] each) present exactly when
 *     obs_dim > 0, every mean finite, every var finite and >= 0 (messages
 *     name the element).
 * The schema has obs_mean and obs_var come together, with the same D.
 * Messages name the frame, the field and the member, e.g.
 *   "generation frame: field 'genome': member 3: key -2 at column 1 (keys
 *    are >= 0, -1 pads a shorter genome)".
 *
 * Threads: no state; the functions are reentrant.
 */
#ifndef SEED_EVO_FRAME_H
#define SEED_EVO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/evo.h"
#include "seed/frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Make f a generation frame of g with the learner's run: run, generation,
 * phase, algorithm, noise_seed, noise_size, sigma, rank, genome i64[M, L],
 * episodes i32[M], for es, snes and ars sign f32[M] and centre
 * f32[num_params], for snes sigmas f32[num_params], when
 * action_noise > 0 action_noise, and when obs_dim > 0 obs_mean f32[obs_dim]
 * and obs_var f32[obs_dim].  The
 * tensors point into g's arrays (keep them alive while f is used); f need
 * not be initialised and owns nothing.  The caller may add the optional
 * fields afterwards (model, episode_cap, greedy).  Errors (-EINVAL, err
 * naming the field and member): g breaks a rule above, run outside
 * [0, 2^32), M or L < 1, num_params < 1 for es, snes or ars. */
int seed_evo_gen_to_frame(const seed_evo_gen *g, int64_t run, seed_frame *f, seed_err *err);

/* Read a generation frame into g: g's arrays point into f's tensors (keep f
 * and what it was decoded from alive while g is used).  num_params is the
 * centre's length for es, snes and ars, 0 for ga and rs (the server knows it from its
 * model); action_noise 0 and obs_dim 0 (obs_mean, obs_var NULL) for a frame
 * without them.  A decoded frame's tensor data may sit at any address; this
 * function refuses one that is not aligned for its dtype (use
 * seed_evo_gen_from_frame_copy).  Errors: -SEED_ETYPE (not a generation
 * frame), -SEED_EFRAME (what seed_frame_validate refuses, with its
 * message), -EINVAL (a rule above broken, or data not aligned); g is
 * untouched on error. */
int seed_evo_gen_from_frame(const seed_frame *f, seed_evo_gen *g, seed_err *err);

/* A generation that owns its arrays: for a receiver that keeps a generation
 * beyond its frame, whatever the frame's alignment.  Zero it before first
 * use. */
typedef struct seed_evo_gen_copy {
	seed_evo_gen gen; /* its arrays point into mem */
	void *mem;
	size_t cap;
} seed_evo_gen_copy;

/* seed_evo_gen_from_frame into c->gen, the arrays copied into c's memory
 * (aligned).  Errors as seed_evo_gen_from_frame (never for alignment); c's
 * previous generation is kept on error.  Allocation failure aborts. */
int seed_evo_gen_from_frame_copy(const seed_frame *f, seed_evo_gen_copy *c, seed_err *err);
/* Release c's memory (c zeroed after; NULL is fine). */
void seed_evo_gen_copy_free(seed_evo_gen_copy *c);

#ifdef __cplusplus
}
#endif
#endif
