/* The recurrent layers' compute (LSTM, GRU and RNN with ONNX's default
 * activations), one direction over a whole sequence, in the order
 * docs/onnx.md writes down: each step is one sb_matmul of the previous
 * hidden state with the packed recurrent weight, then float32 elementwise
 * kernels (sb_binary, sb_unary) in the caller's mode. Callable without a
 * graph: graph/ops/rnn/rnn.c parses the node, checks shapes and lays out the
 * scratch. */
#ifndef SB_KERNELS_RNN_H
#define SB_KERNELS_RNN_H

#include <stdint.h>

enum { SB_RNN_LSTM = 0, SB_RNN_GRU = 1, SB_RNN_RNN = 2 };

/* One direction's weights, packed for the path (sb_matmul's b_packed), and
 * their biases or null. LSTM, RNN and GRU with linear_before_reset use r
 * (R^T, gates * hidden columns); GRU without it uses rzr (R's z and r rows) and rh
 * (its h rows). w is W^T for the input projection. */
typedef struct {
    const void *w, *r, *rzr, *rh;
    const float *wb, *rb, *rzr_b, *rh_b;
    const float *peep;             /* LSTM's peepholes p_i, p_o, p_f (3 * hidden), or null */
} sb_rnn_weights;

/* One direction of one layer over seq steps, batch rows, hidden units. */
typedef struct {
    int kind;                      /* SB_RNN_LSTM, SB_RNN_GRU or SB_RNN_RNN */
    int linear_before_reset;       /* GRU: ONNX's attribute */
    int backwards;                 /* steps from seq - 1 down to 0 */
    int path, mode, threads;
    int64_t seq, batch, hidden, input_size;
    const float *x;                /* (seq, batch, input_size), dense */
    const float *h0, *c0;          /* (batch, hidden): the initial states (c0: LSTM) */
    float *y;                      /* step t's h at y + t * y_step, (batch, hidden) dense */
    int64_t y_step;                /* floats */
    float *h_last, *c_last;        /* (batch, hidden): the final states (c_last: LSTM) */
    float *scratch;                /* sb_rnn_scratch_floats(...) floats, 64-byte aligned */
} sb_rnn_direction;

/* The floats of scratch one direction needs. */
int64_t sb_rnn_scratch_floats(int kind, int64_t seq, int64_t batch, int64_t hidden);

/* Runs the direction; SB_OK or the failing kernel's status. */
int sb_rnn_run_direction(const sb_rnn_direction *d, const sb_rnn_weights *w);

#endif
