/* The recurrent layers' compute, one direction at a time (rnn.h). */
#include <string.h>
#include "samebits.h"
#include "kernels/rnn.h"

/* A (rows, cols) float32 view: element (i, j) at p[i * row + j] (row 0 and
 * col 0: one value). */
typedef struct { const float *p; int64_t row, col; } view;

static view dense(const float *p, int64_t cols) { return (view){p, cols, 1}; }
static view cols_of(const float *p, int64_t row, int64_t first) { return (view){p + first, row, 1}; }

typedef struct {
    const sb_rnn_direction *d;
    int64_t B, H;
    float *L, *P, *T, *T2;         /* the step's scratch */
} step_ctx;

/* y = op(a, b) elementwise over (rows, cols), y dense (samebits' add, sub, mul). */
static int binary2(const sb_rnn_direction *d, int op, view a, view b, float *y, int64_t rows, int64_t cols)
{
    sb_binary_args args;
    memset(&args, 0, sizeof args);
    args.path = d->path, args.mode = d->mode, args.op = op, args.max_threads = d->threads;
    args.ndim = 2;
    args.shape[0] = rows, args.shape[1] = cols;
    args.a = (int64_t)(intptr_t)a.p, args.a_stride[0] = a.row, args.a_stride[1] = a.col;
    args.b = (int64_t)(intptr_t)b.p, args.b_stride[0] = b.row, args.b_stride[1] = b.col;
    args.y = (int64_t)(intptr_t)y;
    return sb_binary(&args);
}

/* y = op(x) over count elements (samebits' sigmoid, tanh), in the direction's mode. */
static int unary(const sb_rnn_direction *d, int op, const float *x, float *y, int64_t count)
{
    sb_unary_args args;
    memset(&args, 0, sizeof args);
    args.path = d->path, args.mode = d->mode, args.op = op, args.max_threads = d->threads;
    args.count = count, args.x = (int64_t)(intptr_t)x, args.y = (int64_t)(intptr_t)y;
    return sb_unary(&args);
}

/* y (m x n) = x (m x k, dense) W^T + bias, as samebits.linear with a packed weight. */
static int linear(const sb_rnn_direction *d, const float *x, int64_t m, int64_t k, const void *packed,
                  int64_t n, const float *bias, float *y)
{
    sb_matmul_args args;
    memset(&args, 0, sizeof args);
    args.path = d->path, args.mode = d->mode, args.max_threads = d->threads;
    args.m = m, args.n = n, args.k = k;
    args.a = (int64_t)(intptr_t)x, args.a_row = k, args.a_col = 1;
    args.b = (int64_t)(intptr_t)packed, args.b_row = 0, args.b_col = 0, args.b_packed = 1;
    args.c = (int64_t)(intptr_t)y, args.c_row = n;
    args.bias = (int64_t)(intptr_t)bias;
    return sb_matmul(&args);
}

/* The gate pieces of L (B x 4H) as four dense (B, H) blocks in P: a copy. */
static int split_gates(const sb_rnn_direction *d, const float *L, float *P, int64_t B, int64_t H)
{
    sb_copy_args a;
    memset(&a, 0, sizeof a);
    a.ndim = 3, a.max_threads = d->threads;
    a.shape[0] = 4, a.shape[1] = B, a.shape[2] = H;
    a.x = (int64_t)(intptr_t)L, a.x_stride[0] = H, a.x_stride[1] = 4 * H, a.x_stride[2] = 1;
    a.y = (int64_t)(intptr_t)P, a.y_stride[0] = B * H, a.y_stride[1] = H, a.y_stride[2] = 1;
    return B * H == 0 ? SB_OK : sb_copy(&a);
}

#define CHECK(call) do { int status_ = (call); if (status_) return status_; } while (0)

/* One LSTM step: h_out and c from gx_t, hp and cp. */
static int step_lstm(const step_ctx *c, const sb_rnn_weights *w, const float *gx, const float *hp,
                     const float *cp, float *c_out, float *h_out)
{
    const sb_rnn_direction *d = c->d;
    int64_t B = c->B, H = c->H, bh = B * H;
    float *L = c->L, *P = c->P;
    /* g = gx_t + linear(hp, R, Rb) */
    CHECK(linear(d, hp, B, H, w->r, 4 * H, w->rb, L));
    CHECK(binary2(d, SB_BIN_ADD, dense(gx, 4 * H), dense(L, 4 * H), L, B, 4 * H));
    /* the pieces i, o, f, c, each (B, H) dense */
    CHECK(split_gates(d, L, P, B, H));
    float *pi = P, *po = P + bh, *pf = P + 2 * bh, *pc = P + 3 * bh;
    if (w->peep) {
        /* peepholes: i and f see cp, o sees the new c: g + p * c, each rounded */
        const view p_i = {w->peep, 0, 1}, p_f = {w->peep + 2 * H, 0, 1};
        CHECK(binary2(d, SB_BIN_MUL, p_i, dense(cp, H), c->T, B, H));
        CHECK(binary2(d, SB_BIN_ADD, dense(pi, H), dense(c->T, H), pi, B, H));
        CHECK(binary2(d, SB_BIN_MUL, p_f, dense(cp, H), c->T, B, H));
        CHECK(binary2(d, SB_BIN_ADD, dense(pf, H), dense(c->T, H), pf, B, H));
        CHECK(unary(d, SB_OP_SIGMOID, pi, pi, bh));
        CHECK(unary(d, SB_OP_SIGMOID, pf, pf, bh));
    } else {
        CHECK(unary(d, SB_OP_SIGMOID, pi, pi, 3 * bh));   /* i, o, f: one call, the same bits */
    }
    CHECK(unary(d, SB_OP_TANH, pc, pc, bh));
    /* c = sigmoid(f) * cp + sigmoid(i) * tanh(c) */
    CHECK(binary2(d, SB_BIN_MUL, dense(pf, H), dense(cp, H), pf, B, H));
    CHECK(binary2(d, SB_BIN_MUL, dense(pi, H), dense(pc, H), pi, B, H));
    CHECK(binary2(d, SB_BIN_ADD, dense(pf, H), dense(pi, H), c_out, B, H));
    if (w->peep) {
        const view p_o = {w->peep + H, 0, 1};
        CHECK(binary2(d, SB_BIN_MUL, p_o, dense(c_out, H), c->T, B, H));
        CHECK(binary2(d, SB_BIN_ADD, dense(po, H), dense(c->T, H), po, B, H));
        CHECK(unary(d, SB_OP_SIGMOID, po, po, bh));
    }
    /* h = sigmoid(o) * tanh(c) */
    CHECK(unary(d, SB_OP_TANH, c_out, c->T, bh));
    CHECK(binary2(d, SB_BIN_MUL, dense(po, H), dense(c->T, H), h_out, B, H));
    return SB_OK;
}

/* GRU's h = (1 - z) * n + z * hp (subtract, multiply, multiply, add), with n
 * in n_buf and t as scratch (both overwritten). */
static int blend(const sb_rnn_direction *d, view z, float *n_buf, float *t, const float *hp, float *h_out,
                 int64_t B, int64_t H)
{
    static const float one = 1.0f;
    const view ones = {&one, 0, 0};
    CHECK(binary2(d, SB_BIN_SUB, ones, z, t, B, H));
    CHECK(binary2(d, SB_BIN_MUL, dense(t, H), dense(n_buf, H), t, B, H));
    CHECK(binary2(d, SB_BIN_MUL, z, dense(hp, H), n_buf, B, H));
    CHECK(binary2(d, SB_BIN_ADD, dense(t, H), dense(n_buf, H), h_out, B, H));
    return SB_OK;
}

/* One GRU step: h_out from gx_t and hp. */
static int step_gru(const step_ctx *c, const sb_rnn_weights *w, const float *gx, const float *hp,
                    float *h_out)
{
    const sb_rnn_direction *d = c->d;
    int64_t B = c->B, H = c->H, bh = B * H;
    float *L = c->L, *ZR = c->P, *T = c->T, *T2 = c->T2;
    view z, rg;
    if (d->linear_before_reset) {
        /* zh, rh, nh = pieces(linear(hp, R, Rb)); z, r = sigmoid(x + h); n = tanh(nx + r * nh) */
        CHECK(linear(d, hp, B, H, w->r, 3 * H, w->rb, L));
        CHECK(binary2(d, SB_BIN_ADD, cols_of(gx, 3 * H, 0), cols_of(L, 3 * H, 0), ZR, B, 2 * H));
        CHECK(unary(d, SB_OP_SIGMOID, ZR, ZR, 2 * bh));
        z = cols_of(ZR, 2 * H, 0), rg = cols_of(ZR, 2 * H, H);
        CHECK(binary2(d, SB_BIN_MUL, rg, cols_of(L, 3 * H, 2 * H), T, B, H));
        CHECK(binary2(d, SB_BIN_ADD, cols_of(gx, 3 * H, 2 * H), dense(T, H), T, B, H));
        CHECK(unary(d, SB_OP_TANH, T, T, bh));
        return blend(d, z, T, T2, hp, h_out, B, H);
    }
    /* zh, rh = pieces(linear(hp, Rzr, Rzr_b)); z, r = sigmoid(x + h);
     * n = tanh(nx + linear(r * hp, Rh, Rh_b)) */
    CHECK(linear(d, hp, B, H, w->rzr, 2 * H, w->rzr_b, L));
    CHECK(binary2(d, SB_BIN_ADD, cols_of(gx, 3 * H, 0), dense(L, 2 * H), ZR, B, 2 * H));
    CHECK(unary(d, SB_OP_SIGMOID, ZR, ZR, 2 * bh));
    z = cols_of(ZR, 2 * H, 0), rg = cols_of(ZR, 2 * H, H);
    CHECK(binary2(d, SB_BIN_MUL, rg, dense(hp, H), T, B, H));
    CHECK(linear(d, T, B, H, w->rh, H, w->rh_b, T2));
    CHECK(binary2(d, SB_BIN_ADD, cols_of(gx, 3 * H, 2 * H), dense(T2, H), T2, B, H));
    CHECK(unary(d, SB_OP_TANH, T2, T2, bh));
    return blend(d, z, T2, T, hp, h_out, B, H);
}

/* One RNN step: h_out = tanh(gx_t + linear(hp, R, Rb)). */
static int step_rnn(const step_ctx *c, const sb_rnn_weights *w, const float *gx, const float *hp,
                    float *h_out)
{
    const sb_rnn_direction *d = c->d;
    int64_t B = c->B, H = c->H;
    CHECK(linear(d, hp, B, H, w->r, H, w->rb, c->L));
    CHECK(binary2(d, SB_BIN_ADD, dense(gx, H), dense(c->L, H), c->L, B, H));
    return unary(d, SB_OP_TANH, c->L, h_out, B * H);
}

static int64_t gates_of(int kind) { return kind == SB_RNN_LSTM ? 4 : kind == SB_RNN_GRU ? 3 : 1; }

/* The scratch's regions, in floats, each rounded to 64 bytes. */
enum { S_GX, S_L, S_P, S_T, S_T2, S_C, S_COUNT };

static int64_t round16(int64_t floats) { return (floats + 15) / 16 * 16; }

static int64_t scratch_layout(int kind, int64_t seq, int64_t batch, int64_t hidden, int64_t *at)
{
    int64_t gates = gates_of(kind), bh = batch * hidden;
    int64_t size[S_COUNT] = {seq * batch * gates * hidden, batch * gates * hidden, gates * bh, bh, bh,
                             kind == SB_RNN_LSTM ? bh : 0};
    int64_t off = 0;
    for (int i = 0; i < S_COUNT; ++i) {
        at[i] = off;
        off += round16(size[i]);
    }
    return off;
}

int64_t sb_rnn_scratch_floats(int kind, int64_t seq, int64_t batch, int64_t hidden)
{
    int64_t at[S_COUNT];
    return scratch_layout(kind, seq, batch, hidden, at);
}

int sb_rnn_run_direction(const sb_rnn_direction *d, const sb_rnn_weights *w)
{
    int64_t at[S_COUNT];
    scratch_layout(d->kind, d->seq, d->batch, d->hidden, at);
    int64_t B = d->batch, H = d->hidden, bh = B * H, gh = gates_of(d->kind) * H;
    float *s = d->scratch, *gx = s + at[S_GX], *cbuf = s + at[S_C];
    step_ctx c = {d, B, H, s + at[S_L], s + at[S_P], s + at[S_T], s + at[S_T2]};
    /* the input projection of every step at once */
    CHECK(linear(d, d->x, d->seq * B, d->input_size, w->w, gh, w->wb, gx));
    const float *hp = d->h0, *cp = d->c0;
    for (int64_t k = 0; k < d->seq; ++k) {
        int64_t t = d->backwards ? d->seq - 1 - k : k;
        float *h_out = d->y + t * d->y_step;
        const float *gx_t = gx + t * B * gh;
        if (d->kind == SB_RNN_LSTM) {
            CHECK(step_lstm(&c, w, gx_t, hp, cp, cbuf, h_out));
            cp = cbuf;
        } else if (d->kind == SB_RNN_GRU) {
            CHECK(step_gru(&c, w, gx_t, hp, h_out));
        } else {
            CHECK(step_rnn(&c, w, gx_t, hp, h_out));
        }
        hp = h_out;
    }
    memmove(d->h_last, hp, (size_t)bh * sizeof(float));
    if (d->kind == SB_RNN_LSTM) memmove(d->c_last, cp, (size_t)bh * sizeof(float));
    return SB_OK;
}
