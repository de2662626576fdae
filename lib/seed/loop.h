/* seed/loop.h: a poll loop over channels, with timers (after czmq's zloop).
 *
 * A program registers readers (a function called when a channel has a frame
 * to receive) and timers (a function called at a deadline, once, N times or
 * for ever), then runs the loop, or runs single turns of it from a loop of
 * its own.  One turn: wait until a reader's channel is ready, the earliest
 * timer is due, the turn's timeout passes or *stop is set; call every ready
 * reader once, in the order they were registered; then call every due
 * timer, earliest deadline first (equal deadlines: the earlier registered
 * first).  A reader's handler receives one frame (seed_chan_recv with
 * timeout 0) or more; one that leaves its channel ready is called again
 * the next turn without waiting, so a busy channel cannot starve the
 * others or the timers.
 *
 * Waiting less than a millisecond.  zmq_poll counts its timeout in
 * milliseconds, too coarse for a batching deadline of a few hundred
 * microseconds.  The loop waits instead as zmq_poll does inside, but with
 * ppoll(2), whose timeout is a timespec: it asks each socket for
 * ZMQ_EVENTS (which says whether a message is ready, and re-arms the
 * socket's notification descriptor ZMQ_FD), and when none is ready sleeps
 * in ppoll on the sockets' ZMQ_FDs until one is signalled or the deadline.
 * The thread sleeps in the kernel, so an idle loop burns no CPU, and it
 * wakes as soon as a frame comes.  A deadline is met late by at most the
 * kernel's timer slack (50 us by default on Linux; prctl(PR_SET_TIMERSLACK)
 * lowers it for the calling thread) plus scheduling delay, never early.
 *
 * Files.  A file channel (a recorded stream, or - for stdin) has no
 * socket.  Its reader is always ready, until its handler returns
 * -SEED_EEOF (what seed_chan_recv returns at the end of the file): that
 * ends the reader, not the loop.  While a file reader is registered the
 * loop does not sleep (a file is read as fast as its handler takes it),
 * and a read of a pipe whose writer is slow blocks inside the handler.
 *
 * Ending.  seed_loop_run returns when a handler calls seed_loop_stop (0),
 * when *stop becomes non-zero (-EINTR; *stop is looked at every turn and at
 * least every 100 ms while waiting, and a signal's arrival wakes the wait),
 * when a handler returns a negative code (that code), or when no reader
 * and no timer is left (0).
 *
 * Memory: registering may grow the loop's tables; a turn allocates nothing.
 * Threads: a loop, like its channels, belongs to one thread.
 */
#ifndef SEED_LOOP_H
#define SEED_LOOP_H

#include <signal.h>
#include <stdint.h>

#include "seed/chan.h"
#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_loop seed_loop;

/* A reader: called when c is ready.  Returns 0 to go on, or a negative code
 * (with err filled, ideally) to end the loop with that code; -SEED_EEOF
 * instead ends only this reader. */
typedef int (*seed_loop_reader_fn)(seed_loop *loop, seed_chan *c, void *arg, seed_err *err);
/* A timer: called at its deadline with the id seed_loop_timer returned.
 * Returns 0 or a negative code, as a reader. */
typedef int (*seed_loop_timer_fn)(seed_loop *loop, int id, void *arg, seed_err *err);

/* A new loop with no readers and no timers; stop (may be NULL) is the flag
 * a signal handler sets to end it.  Returns 0; allocation failure aborts. */
int seed_loop_new(seed_loop **out, volatile sig_atomic_t *stop);
/* Free the loop (NULL is fine), not its channels. */
void seed_loop_free(seed_loop **loop);

/* Call fn(loop, c, arg, err) whenever c has a frame to receive.  c stays
 * the caller's and must outlive the registration.  Errors: -EINVAL for a
 * send-only socket (PUSH, PUB) or a channel already registered; -errno
 * from ZeroMQ; err says which endpoint.  May be called from a handler: the
 * new reader takes part from the next turn. */
int seed_loop_reader(seed_loop *loop, seed_chan *c, seed_loop_reader_fn fn, void *arg, seed_err *err);
/* Stop calling c's reader (from the next call on, even within this turn).
 * -ENOENT when c has none.  May be called from any handler, its own too. */
int seed_loop_reader_end(seed_loop *loop, seed_chan *c);

/* Call fn(loop, id, arg, err) delay_us microseconds from now, then every
 * delay_us after that, times times in all (0: for ever).  A repeating timer
 * keeps its period (the next deadline is one period after the last, not
 * after the call), unless it has fallen a whole period behind: then it
 * skips ahead, so a slow handler does not cause a burst.  Returns the
 * timer's id (> 0, unique for the life of the loop), or -EINVAL for a
 * negative delay or a repeating timer (times != 1) with delay 0.  May be
 * called from a handler: a timer added in a turn fires in a later turn. */
int seed_loop_timer(seed_loop *loop, int64_t delay_us, unsigned times, seed_loop_timer_fn fn, void *arg);
/* Cancel timer id (it will not fire again, even if due in this turn).
 * -ENOENT for an id that is not pending (fired its last time, cancelled, or
 * never was). */
int seed_loop_timer_end(seed_loop *loop, int id);

/* From a handler: end seed_loop_run (0) or seed_loop_run_once (1) when
 * this handler returns; readers and timers not yet called in this turn are
 * not called. */
void seed_loop_stop(seed_loop *loop);

/* Run turns until the loop ends (see the top of this file).  Returns 0,
 * -EINTR (*stop), a handler's negative code with err as the handler
 * filled it (or naming the endpoint or timer and the code, if it did not),
 * or -errno from ppoll(2)/ZeroMQ. */
int seed_loop_run(seed_loop *loop, seed_err *err);
/* One turn, waiting at most timeout_us microseconds (0: do not wait; -1:
 * until a reader is ready or a timer is due, or for ever if there are
 * neither) for something to be ready.  For programs that keep a loop of
 * their own.  Returns 0 after the turn, 1 if a handler called
 * seed_loop_stop, or a negative code as seed_loop_run. */
int seed_loop_run_once(seed_loop *loop, int64_t timeout_us, seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
