/* seed/lstm.h: an LSTM layer, forward and backward through time, on the CPU.
 *
 * The cell is Keras's LSTMCell (what SEED RL's agents use), with its weight
 * layout, so a Keras checkpoint's arrays copy in unchanged:
 *
 *   z_t = x_t W + h_{t-1} U + b                   W [I][4H], U [H][4H], b [4H]
 *   i = sigmoid(z[0:H])   f = sigmoid(z[H:2H])
 *   g = tanh(z[2H:3H])    o = sigmoid(z[3H:4H])   (gate order i, f, c, o)
 *   c_t = f * c_{t-1} + i * g,   h_t = o * tanh(c_t)
 *
 * Shapes are time-major: x [T][B][I], outputs h [T][B][H], state h, c
 * [B][H].  A reset mask done [T][B] (optional) zeroes row b's state before
 * step t when done[t][b] != 0, as SEED resets the core state at an episode's
 * first step; no gradient flows back across a reset.
 *
 * Memory: the caller owns every buffer.  Forward keeps what backward needs in
 * a workspace of seed_lstm_workspace_floats() floats, which must be left
 * untouched between a forward and the backward of the same call; neither
 * function allocates.  The parameters are plain arrays so a model can point
 * them into its parameter blob.
 *
 * Threads: the functions keep no state; calls on distinct workspaces and
 * outputs may run at once.  Matrix products go through seed_blas_sgemm.
 */
#ifndef SEED_LSTM_H
#define SEED_LSTM_H

#include <stddef.h>
#include <stdint.h>

#include "seed/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layer's parameters, Keras layout, row-major, not owned. */
typedef struct seed_lstm_params {
	const float *w; /* kernel (I, 4H) */
	const float *u; /* recurrent kernel (H, 4H) */
	const float *b; /* bias (4H) */
} seed_lstm_params;

/* Parameter gradients, same shapes; backward ADDS into them. */
typedef struct seed_lstm_grads {
	float *dw; /* (I, 4H) */
	float *du; /* (H, 4H) */
	float *db; /* (4H) */
} seed_lstm_grads;

/* Floats of workspace forward and backward need for these sizes:
 * T*B*11*H + 2*B*H (gates, h_{t-1}, c_{t-1}, c_t, gate gradients, and the
 * carried dh, dc); 0 when a size is < 1 or the count overflows. */
size_t seed_lstm_workspace_floats(int T, int B, int I, int H);

/* Keras's initialisation into caller arrays: w Glorot-uniform (limit
 * sqrt(6 / (I + 4H))), u orthogonal (rows orthonormal: u u^T = I_H, from a
 * Gaussian matrix by Gram-Schmidt), b zero but the forget gate's [H, 2H)
 * set to 1 (unit_forget_bias).  Draws from rng.  Errors: -EINVAL (I or
 * H < 1, a NULL pointer). */
int seed_lstm_init(int I, int H, float *w, float *u, float *b, seed_rng *rng);

/* Run T steps from (h0, c0) (NULL: zeros).  x (T, B, I); done (T, B) or
 * NULL; writes h (T, B, H), and hT, cT (B, H) when not NULL; fills ws
 * (ws_floats >= seed_lstm_workspace_floats).  Errors: -EINVAL (a size < 1,
 * a NULL parameter, x or h, a workspace too small); nothing is written
 * then. */
int seed_lstm_forward(int T, int B, int I, int H, const seed_lstm_params *p, const float *x,
                      const uint8_t *done, const float *h0, const float *c0, float *h, float *hT, float *cT,
                      float *ws, size_t ws_floats);

/* Backward through the forward call that filled ws (same T, B, I, H, p, x,
 * done).  dh (T, B, H) is dL/dh_t for every step (NULL: zeros); dhT, dcT
 * (B, H) the gradient of the final state (NULL: zeros).  ADDS dL/dW, dL/dU,
 * dL/db into g; OVERWRITES dx (T, B, I), dh0, dc0 (B, H) when not NULL.
 * Errors: -EINVAL as forward (and a NULL g or member); nothing is written
 * then. */
int seed_lstm_backward(int T, int B, int I, int H, const seed_lstm_params *p, const float *x,
                       const uint8_t *done, const float *dh, const float *dhT, const float *dcT,
                       const seed_lstm_grads *g, float *dx, float *dh0, float *dc0, float *ws,
                       size_t ws_floats);

#ifdef __cplusplus
}
#endif
#endif
