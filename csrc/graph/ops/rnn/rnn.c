/* ONNX operators: the recurrent layers LSTM, GRU and RNN with ONNX's default
 * activations, as docs/onnx.md defines them (it writes the order down).
 *
 * This file is the ONNX definition: attributes, shape checks, weights
 * packed at load (W and R per direction; for GRU without
 * linear_before_reset R's z and r rows apart from its h rows, the constants
 * consumed), layout 1's transposes and the outputs. The recurrence itself,
 * one direction at a time, is kernels/rnn.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "kernels/rnn.h"

/* the kernel's codes (kernels/rnn.h) */
enum { RNN_LSTM = SB_RNN_LSTM, RNN_GRU = SB_RNN_GRU, RNN_RNN = SB_RNN_RNN };
enum { DIR_FORWARD = 0, DIR_REVERSE = 1, DIR_BIDIRECTIONAL = 2 };

typedef struct {
    void *w, *r, *rzr, *rh;              /* packed: W^T, R^T (or its z, r rows and its h rows) */
    const float *wb, *rb, *rzr_b, *rh_b; /* biases, or null */
} rnn_dir;

typedef struct {
    int kind, gates, dirs, direction, layout, reset_first;
    int has_hidden;
    int64_t hidden_attr;
    int packed;                          /* W, R and B constants: packed at load, in d */
    int64_t hidden, input_size;          /* (packed) */
    sb_vinfo w_info;                     /* (packed) W's shape, for messages */
    rnn_dir d[2];
} rnn_state;

/* ---- load ---------------------------------------------------------------------- */

/* The bytes of W^T (k x n) packed for the path, with 64 of slack; 0 when too large. */
static size_t packed_bytes(int path, int64_t n, int64_t k)
{
    size_t bytes = sb_packed_b_bytes(path, (size_t)k, (size_t)n);
    return bytes == 0 && k && n ? 0 : bytes + 64;
}

/* The packed matrices of one direction, in this order: W^T, then R^T (or
 * its z, r rows and its h rows); their byte counts (each a multiple of 64). */
static int dir_pieces(const rnn_state *s, int path, int64_t h, int64_t input_size, size_t *bytes)
{
    int64_t gh = s->gates * h;
    int split = s->kind == RNN_GRU && !s->reset_first;
    int64_t rows[3] = {gh, split ? 2 * h : gh, h}, cols[3] = {input_size, h, h};
    int count = split ? 3 : 2;
    for (int i = 0; i < count; ++i) bytes[i] = (packed_bytes(path, rows[i], cols[i]) + 63) / 64 * 64;
    return count;
}

/* W^T (k x n, from the rows of a row-major (n, k) weight) packed into dst. */
static int pack_into(int path, int threads, const float *weight, int64_t n, int64_t k, void *dst,
                     size_t bytes)
{
    memset(dst, 0, bytes);
    return sb_pack_b(path, threads, (size_t)k, (size_t)n, weight, 1, (ptrdiff_t)k, dst, bytes - 64);
}

/* One direction's weights packed into the buffers at[] (dir_pieces' sizes). */
static int pack_dir(const rnn_state *s, int path, int threads, int64_t h, int64_t input_size,
                    const float *wd, const float *rd, const float *bias, void *const *at,
                    const size_t *bytes, rnn_dir *p)
{
    int64_t gh = s->gates * h;
    memset(p, 0, sizeof *p);
    int status = pack_into(path, threads, wd, gh, input_size, at[0], bytes[0]);
    p->w = at[0];
    if (bias) p->wb = bias, p->rb = bias + gh;
    if (!status && s->kind == RNN_GRU && !s->reset_first) {
        status = pack_into(path, threads, rd, 2 * h, h, at[1], bytes[1]);
        if (!status) status = pack_into(path, threads, rd + 2 * h * h, h, h, at[2], bytes[2]);
        p->rzr = at[1], p->rh = at[2];
        if (bias) p->rzr_b = p->rb, p->rh_b = p->rb + 2 * h;
    } else if (!status) {
        status = pack_into(path, threads, rd, gh, h, at[1], bytes[1]);
        p->r = at[1];
    }
    return status;
}

/* W, R and B's shapes against the node's attributes: the hidden size, or an
 * error's text. */
static int weights_fit(const rnn_state *s, const sb_vinfo *w, const sb_vinfo *r, const sb_vinfo *b,
                       int64_t *hidden, char *msg, size_t size)
{
    int64_t h = s->has_hidden ? s->hidden_attr : r->rank ? r->dims[r->rank - 1] : 0;
    int64_t gh = s->gates * h;
    if (w->rank != 3 || w->dims[0] != s->dirs || w->dims[1] != gh || r->rank != 3 ||
        r->dims[0] != s->dirs || r->dims[1] != gh || r->dims[2] != h) {
        char ws[256], rs[256];
        sb_shape_text(w, ws, sizeof ws);
        sb_shape_text(r, rs, sizeof rs);
        snprintf(msg, size, "W %s and R %s do not fit %d direction(s) of %d gates with hidden_size %lld",
                 ws, rs, s->dirs, s->gates, (long long)h);
        return SB_ERR_UNSUPPORTED;
    }
    if (b && (b->rank != 2 || b->dims[0] != s->dirs || b->dims[1] != 2 * gh)) {
        char bs[256];
        sb_shape_text(b, bs, sizeof bs);
        snprintf(msg, size, "B %s does not fit %d direction(s) of %d gates", bs, s->dirs, s->gates);
        return SB_ERR_UNSUPPORTED;
    }
    for (int i = 0; i < 3; ++i)
        if (w->dims[i] > ((int64_t)1 << 40) || r->dims[i] > ((int64_t)1 << 40)) {
            snprintf(msg, size, "W or R has a dimension above 2**40");
            return SB_ERR_VALUE;
        }
    *hidden = h;
    return SB_OK;
}

static int lower_equal(const sb_bytes *a, const char *b)
{
    size_t n = strlen(b);
    if (a->size != n) return 0;
    for (size_t i = 0; i < n; ++i) {
        int c = a->data[i];
        if (c >= 'A' && c <= 'Z') c += 'a' - 'A';
        if (c != b[i]) return 0;
    }
    return 1;
}

static int rnn_load(sb_load_ctx *L)
{
    rnn_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->kind = !strcmp(L->node->op_type, "LSTM") ? RNN_LSTM : !strcmp(L->node->op_type, "GRU") ? RNN_GRU
              : RNN_RNN;
    s->gates = s->kind == RNN_LSTM ? 4 : s->kind == RNN_GRU ? 3 : 1;
    int has_hidden = sb_has_attr(L, "hidden_size");
    int64_t hidden = sb_attr_int(L, "hidden_size", 0);
    const char *direction = sb_attr_str(L, "direction", "forward");
    if (L->status) return L->status;
    if (!strcmp(direction, "forward")) s->direction = DIR_FORWARD;
    else if (!strcmp(direction, "reverse")) s->direction = DIR_REVERSE;
    else if (!strcmp(direction, "bidirectional")) s->direction = DIR_BIDIRECTIONAL;
    else {
        char dr[512];
        sb_py_str_repr((const uint8_t *)direction, strlen(direction), dr, sizeof dr);
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "direction %s is not forward, reverse or bidirectional", dr);
    }
    s->dirs = s->direction == DIR_BIDIRECTIONAL ? 2 : 1;
    int64_t layout = L->opset >= 14 ? sb_attr_int(L, "layout", 0) : 0;
    if (L->status) return L->status;
    if (layout != 0 && layout != 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "layout=%lld must be 0 or 1", (long long)layout);
    s->layout = (int)layout;
    const sb_bytes *acts;
    size_t n_acts;
    if (sb_attr_strings(L, "activations", &acts, &n_acts)) {
        static const char *const lstm[] = {"sigmoid", "tanh", "tanh"}, *const gru[] = {"sigmoid", "tanh"},
                                 *const rnn[] = {"tanh"};
        const char *const *want = s->kind == RNN_LSTM ? lstm : s->kind == RNN_GRU ? gru : rnn;
        size_t per = s->kind == RNN_LSTM ? 3 : s->kind == RNN_GRU ? 2 : 1;
        int ok = n_acts == per * (size_t)s->dirs;
        for (size_t i = 0; ok && i < n_acts; ++i) ok = lower_equal(&acts[i], want[i % per]);
        if (!ok) {
            char text[1024];
            size_t at = 0;
            text[at++] = '[';
            for (size_t i = 0; i < n_acts && at + 80 < sizeof text; ++i) {
                if (i) text[at++] = ',', text[at++] = ' ';
                at += sb_py_str_repr(acts[i].data, acts[i].size, text + at, sizeof text - at - 2);
            }
            text[at++] = ']';
            text[at] = 0;
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "activations %s are not supported (only the defaults)",
                                text);
        }
    }
    if (L->status) return L->status;
    static const char *const refused[] = {"clip", "activation_alpha", "activation_beta"};
    for (size_t i = 0; i < 3; ++i)
        if (sb_has_attr(L, refused[i]))
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute '%s' is not supported", refused[i]);
    if (s->kind == RNN_LSTM) {
        int64_t input_forget = sb_attr_int(L, "input_forget", 0);
        if (L->status) return L->status;
        if (input_forget != 0) return sb_load_fail(L, SB_ERR_UNSUPPORTED, "input_forget=1 is not supported");

    }
    int64_t reset_first = s->kind == RNN_GRU ? sb_attr_int(L, "linear_before_reset", 0) : 0;
    if (L->status) return L->status;
    s->reset_first = reset_first != 0;
    if (s->kind != RNN_LSTM)
        for (int j = 2; j < L->node->n_out; ++j)
            if (L->node->out[j] >= 0)
                return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%s has two outputs, output %d is not one",
                                    L->node->op_type, j);
    s->has_hidden = has_hidden, s->hidden_attr = hidden;
    if (has_hidden && hidden < 0)
        return sb_load_fail(L, SB_ERR_VALUE, "hidden_size=%lld must not be negative", (long long)hidden);
    const sb_tval *w = sb_load_const(L, 1), *r = sb_load_const(L, 2);
    int has_b = sb_load_has_input(L, 3);
    const sb_tval *b = has_b ? sb_load_const(L, 3) : NULL;
    if (!w || !r || (has_b && !b))
        return L->status;   /* computed weights: checked and packed at each run */
    static const char *const names[3] = {"W", "R", "B"};
    const sb_tval *given[3] = {w, r, b};
    for (int i = 0; i < 3; ++i)
        if (given[i] && given[i]->info.dtype != SB_DT_FLOAT)
            return sb_load_fail(L, SB_ERR_TYPE, "input %s must be float32, got %s", names[i],
                                sb_dtype_name(given[i]->info.dtype));
    char msg[768];
    int64_t h;
    int status = weights_fit(s, &w->info, &r->info, b ? &b->info : NULL, &h, msg, sizeof msg);
    if (status) return sb_load_fail(L, status, "%s", msg);
    for (int i = 1; i <= 3; ++i) sb_load_consume(L, i);
    s->hidden = h;
    s->input_size = w->info.dims[2];
    s->w_info = w->info;
    int64_t gh = s->gates * h;
    float *bias = NULL;
    if (b) {
        size_t bytes = (size_t)(s->dirs * 2 * gh) * sizeof(float);
        if (!(bias = sb_load_buffer(L, bytes + 64))) return L->status;
        if (bytes) memcpy(bias, b->data, bytes);
    }
    size_t bytes[3];
    int count = dir_pieces(s, L->path, h, s->input_size, bytes);
    for (int d = 0; d < s->dirs; ++d) {
        void *at[3];
        for (int i = 0; i < count; ++i) {
            if (bytes[i] == 0)
                return sb_load_fail(L, SB_ERR_UNSUPPORTED, "the weights are too large to pack");
            if (!(at[i] = sb_load_buffer(L, bytes[i]))) return L->status;
        }
        status = pack_dir(s, L->path, L->threads, h, s->input_size,
                          (const float *)w->data + d * gh * s->input_size,
                          (const float *)r->data + d * gh * h, bias ? bias + d * 2 * gh : NULL, at,
                          bytes, &s->d[d]);
        if (status) return sb_load_fail(L, status, "packing the weights failed (status %d)", status);
    }
    s->packed = 1;
    return L->status;
}

/* ---- infer ---------------------------------------------------------------------- */

typedef struct { int64_t seq, batch, size, hidden; } rnn_dims;

/* The scratch of a run, in floats per region (each rounded to 64 bytes):
 * the layout-1 copies, the outputs' staging and the kernel's scratch. */
enum { WS_X, WS_Y, WS_H0, WS_C0, WS_YH, WS_YC, WS_KERNEL, WS_PACK, WS_COUNT };

static int64_t round16(int64_t floats) { return (floats + 15) / 16 * 16; }

static void rnn_layout(const rnn_state *s, int path, const rnn_dims *g, int have_y, int64_t *at,
                       int64_t *total)
{
    int64_t H = g->hidden, B = g->batch, dirs = s->dirs;
    int64_t size[WS_COUNT] = {0};
    size[WS_X] = s->layout ? g->seq * B * g->size : 0;
    size[WS_Y] = s->layout || !have_y ? g->seq * dirs * B * H : 0;
    size[WS_H0] = dirs * B * H;
    size[WS_C0] = s->kind == RNN_LSTM ? dirs * B * H : 0;
    size[WS_YH] = dirs * B * H;
    size[WS_YC] = dirs * B * H;
    size[WS_KERNEL] = sb_rnn_scratch_floats(s->kind, g->seq, B, H);
    if (!s->packed) {   /* computed weights, packed per run: each direction's pieces */
        size_t bytes[3];
        int count = dir_pieces(s, path, H, g->size, bytes);
        for (int i = 0; i < count; ++i) size[WS_PACK] += dirs * (int64_t)(bytes[i] / 4);
    }
    int64_t off = 0;
    for (int i = 0; i < WS_COUNT; ++i) {
        at[i] = off;
        off += round16(size[i]);
    }
    *total = off;
}

/* An initial state's shape as the run reads it ((dirs, batch, H) after layout 1's swap). */
static int check_initial(sb_infer_ctx *I, const rnn_state *s, int i, const char *what, int64_t batch,
                         int64_t hidden)
{
    if (I->n_in <= i || !I->in[i]) return SB_OK;
    const sb_tval *t = sb_infer_float(I, i, what);
    if (!t) return SB_ERR_TYPE;
    sb_vinfo v = t->info;
    if (s->layout == 1 && v.rank == 3) {
        int64_t tmp = v.dims[0];
        v.dims[0] = v.dims[1], v.dims[1] = tmp;
    }
    if (v.rank != 3 || v.dims[0] != s->dirs || v.dims[1] != batch || v.dims[2] != hidden) {
        char vs[256];
        sb_shape_text(&v, vs, sizeof vs);
        return sb_infer_fail(I, SB_ERR_VALUE, "%s %s is not (%d, %lld, %lld)", what, vs, s->dirs,
                             (long long)batch, (long long)hidden);
    }
    return SB_OK;
}

/* sequence_lens: every value the full length (checked when the values are known). */
static int check_lens(sb_infer_ctx *I, const sb_tval *lens, int64_t seq)
{
    if (!lens->data) return SB_OK;
    int64_t n = sb_vinfo_numel(&lens->info);
    int short_one = 0;
    for (int64_t i = 0; i < n && !short_one; ++i)
        short_one = lens->info.dtype == SB_DT_UINT64 ? sb_int_at_u(lens, i) != (uint64_t)seq
                                                      : sb_int_at(lens, i) != seq;
    if (!short_one) return SB_OK;
    char text[1024];
    size_t at = 0;
    text[at++] = '[';
    for (int64_t i = 0; i < n && at + 48 < sizeof text; ++i) {
        if (i) text[at++] = ',', text[at++] = ' ';
        if (lens->info.dtype == SB_DT_UINT64)
            at += (size_t)snprintf(text + at, sizeof text - at, "%llu", (unsigned long long)sb_int_at_u(lens, i));
        else
            at += (size_t)snprintf(text + at, sizeof text - at, "%lld", (long long)sb_int_at(lens, i));
    }
    if (at + 48 >= sizeof text) at += (size_t)snprintf(text + at, sizeof text - at, ", ...");
    text[at++] = ']';
    text[at] = 0;
    return sb_infer_fail(I, SB_ERR_VALUE, "sequence_lens %s shorter than the %lld steps are not supported", text,
                         (long long)seq);
}

static int rnn_check(sb_infer_ctx *I, const rnn_state *s, rnn_dims *g)
{
    const sb_tval *x = sb_infer_float(I, 0, "X");
    if (!x) return I->n_in > 0 && I->in[0] ? SB_ERR_TYPE : SB_ERR_VALUE;
    if (x->info.rank != 3) {
        char xs[256];
        sb_shape_text(&x->info, xs, sizeof xs);
        return sb_infer_fail(I, SB_ERR_VALUE, "X must be 3-D, got %s", xs);
    }
    sb_vinfo v = x->info;
    if (s->layout == 1) v.dims[0] = x->info.dims[1], v.dims[1] = x->info.dims[0];
    g->seq = v.dims[0], g->batch = v.dims[1], g->size = v.dims[2];
    int64_t input_size = s->input_size;
    sb_vinfo w_info = s->w_info;
    g->hidden = s->hidden;
    if (!s->packed) {   /* computed weights: their shapes now */
        const sb_tval *w = sb_infer_float(I, 1, "W"), *r = sb_infer_float(I, 2, "R");
        if (!w || !r) return SB_ERR_TYPE;
        const sb_tval *b = I->n_in > 3 && I->in[3] ? sb_infer_float(I, 3, "B") : NULL;
        if (I->n_in > 3 && I->in[3] && !b) return SB_ERR_TYPE;
        char msg[768];
        int status = weights_fit(s, &w->info, &r->info, b ? &b->info : NULL, &g->hidden, msg, sizeof msg);
        if (status) return sb_infer_fail(I, status, "%s", msg);
        input_size = w->info.dims[2], w_info = w->info;
    }
    if (g->seq == 0 || g->batch == 0) {
        char xs[256];
        sb_shape_text(&v, xs, sizeof xs);
        return sb_infer_fail(I, SB_ERR_VALUE, "empty input %s", xs);
    }
    if (g->size != input_size) {
        char ws[256];
        sb_shape_text(&w_info, ws, sizeof ws);
        return sb_infer_fail(I, SB_ERR_VALUE, "X has %lld features, W %s expects %lld", (long long)g->size, ws,
                             (long long)input_size);
    }
    int status;
    if (I->n_in > 4 && I->in[4]) {
        const sb_tval *lens = sb_infer_int(I, 4, "sequence_lens");
        if (!lens) return SB_ERR_TYPE;
        if ((status = check_lens(I, lens, g->seq))) return status;
    }
    if (s->kind == RNN_LSTM && I->n_in > 7 && I->in[7]) {   /* the peepholes (dirs, 3 * H) */
        const sb_tval *pp = sb_infer_float(I, 7, "P");
        if (!pp) return SB_ERR_TYPE;
        if (pp->info.rank != 2 || pp->info.dims[0] != s->dirs || pp->info.dims[1] != 3 * g->hidden)
            return sb_infer_fail(I, SB_ERR_VALUE, "P must be (%d, %lld)", s->dirs,
                                 (long long)(3 * g->hidden));
    }
    if ((status = check_initial(I, s, 5, "initial_h", g->batch, g->hidden))) return status;
    if (s->kind == RNN_LSTM && (status = check_initial(I, s, 6, "initial_c", g->batch, g->hidden)))
        return status;
    return SB_OK;
}

static int rnn_infer(sb_infer_ctx *I)
{
    const rnn_state *s = I->state;
    rnn_dims g;
    int status = rnn_check(I, s, &g);
    if (status) return status;
    int64_t H = g.hidden, B = g.batch, dirs = s->dirs;
    for (int j = 0; j < I->n_out; ++j) {
        sb_vinfo *y = &I->out[j];
        y->dtype = SB_DT_FLOAT;
        if (j == 0) {
            y->rank = 4;
            int64_t d0[4] = {g.seq, dirs, B, H}, d1[4] = {B, g.seq, dirs, H};
            memcpy(y->dims, s->layout ? d1 : d0, sizeof d0);
        } else {
            y->rank = 3;
            int64_t d0[3] = {dirs, B, H}, d1[3] = {B, dirs, H};
            memcpy(y->dims, s->layout ? d1 : d0, sizeof d0);
        }
    }
    int64_t at[WS_COUNT], total;
    rnn_layout(s, I->path, &g, I->n_out > 0 && I->node->out[0] >= 0, at, &total);
    I->workspace = total * (int64_t)sizeof(float) + 64;
    return SB_OK;
}

/* (a x b x c) -> (b x a x c), dense: a copy. */
static int swap01(const sb_run_ctx *R, const float *x, float *y, int64_t a, int64_t b, int64_t c)
{
    int64_t shape[3] = {b, a, c}, xs[3] = {c, b * c, 1}, ys[3] = {a * c, c, 1};
    return sb_k_copy(R->threads, 3, shape, 4, x, xs, y, ys);
}

#define CHECK(call) do { int status_ = (call); if (status_) return status_; } while (0)

/* ---- run -------------------------------------------------------------------------- */

static int rnn_run(sb_run_ctx *R)
{
    const rnn_state *s = R->state;
    /* the checks infer made (sequence_lens's values are known now) */
    sb_infer_ctx I;
    sb_vinfo unused[3];
    sb_infer_from_run(R, &I, unused);
    rnn_dims g;
    int status = rnn_check(&I, s, &g);
    if (status) return status;
    int64_t H = g.hidden, B = g.batch, seq = g.seq, dirs = s->dirs, bh = B * H;
    sb_tval *y = R->n_out > 0 ? R->out[0] : NULL, *yh = R->n_out > 1 ? R->out[1] : NULL;
    sb_tval *yc = s->kind == RNN_LSTM && R->n_out > 2 ? R->out[2] : NULL;
    int64_t at[WS_COUNT], total;
    rnn_layout(s, R->path, &g, y != NULL, at, &total);
    float *ws = R->workspace;
    rnn_dir computed[2];
    if (!s->packed) {   /* the weights of this run, packed into the workspace */
        size_t bytes[3];
        int count = dir_pieces(s, R->path, H, g.size, bytes);
        uint8_t *next = (uint8_t *)(ws + at[WS_PACK]);
        int64_t gh = s->gates * H;
        const float *bias = R->n_in > 3 && R->in[3] ? R->in[3]->data : NULL;
        for (int d = 0; d < dirs; ++d) {
            void *to[3];
            for (int i = 0; i < count; ++i) {
                if (bytes[i] == 0)
                    return sb_run_fail(R, SB_ERR_UNSUPPORTED, "the weights are too large to pack");
                to[i] = next, next += bytes[i];
            }
            status = pack_dir(s, R->path, R->threads, H, g.size,
                              (const float *)R->in[1]->data + d * gh * g.size,
                              (const float *)R->in[2]->data + d * gh * H, bias ? bias + d * 2 * gh : NULL,
                              to, bytes, &computed[d]);
            if (status) return sb_run_fail(R, status, "packing the weights failed (status %d)", status);
        }
    }
    const float *x = R->in[0]->data;
    if (s->layout) {   /* (batch, seq, size) -> (seq, batch, size) */
        CHECK(swap01(R, x, ws + at[WS_X], B, seq, g.size));
        x = ws + at[WS_X];
    }
    float *y0 = s->layout || !y ? ws + at[WS_Y] : y->data;
    /* the initial states, (dirs, batch, H) */
    const float *h0 = ws + at[WS_H0], *c0 = ws + at[WS_C0];
    const sb_tval *ih = R->n_in > 5 ? R->in[5] : NULL, *ic = R->n_in > 6 ? R->in[6] : NULL;
    if (ih && s->layout) CHECK(swap01(R, ih->data, ws + at[WS_H0], B, dirs, H));
    else if (ih) h0 = ih->data;
    else memset(ws + at[WS_H0], 0, (size_t)(dirs * bh) * sizeof(float));
    if (s->kind == RNN_LSTM) {
        if (ic && s->layout) CHECK(swap01(R, ic->data, ws + at[WS_C0], B, dirs, H));
        else if (ic) c0 = ic->data;
        else memset(ws + at[WS_C0], 0, (size_t)(dirs * bh) * sizeof(float));
    }
    float *yh0 = ws + at[WS_YH], *yc0 = ws + at[WS_YC];
    for (int d = 0; d < dirs; ++d) {
        const rnn_dir *p = s->packed ? &s->d[d] : &computed[d];
        const float *peep = s->kind == RNN_LSTM && R->n_in > 7 && R->in[7]
                            ? (const float *)R->in[7]->data + d * 3 * H : NULL;
        sb_rnn_weights w = {p->w, p->r, p->rzr, p->rh, p->wb, p->rb, p->rzr_b, p->rh_b, peep};
        sb_rnn_direction run = {
            .kind = s->kind, .linear_before_reset = s->reset_first,
            .backwards = s->direction == DIR_REVERSE || d == 1,
            .path = R->path, .mode = R->mode, .threads = R->threads,
            .seq = seq, .batch = B, .hidden = H, .input_size = g.size,
            .x = x, .h0 = h0 + d * bh, .c0 = c0 + d * bh, .y = y0 + d * bh, .y_step = dirs * bh,
            .h_last = yh0 + d * bh, .c_last = yc0 + d * bh, .scratch = ws + at[WS_KERNEL]};
        CHECK(sb_rnn_run_direction(&run, &w));
    }
    if (y && s->layout) {   /* (seq, dirs, batch, H) -> (batch, seq, dirs, H) */
        int64_t shape[4] = {B, seq, dirs, H}, xs[4] = {H, dirs * bh, bh, 1};
        int64_t ys[4] = {seq * dirs * H, dirs * H, H, 1};
        CHECK(sb_k_copy(R->threads, 4, shape, 4, y0, xs, y->data, ys));
    }
    sb_tval *finals[2] = {yh, yc};
    const float *from[2] = {yh0, yc0};
    for (int k = 0; k < 2; ++k) {
        if (!finals[k]) continue;
        if (s->layout) CHECK(swap01(R, from[k], finals[k]->data, dirs, B, H));
        else memcpy(finals[k]->data, from[k], (size_t)(dirs * bh) * sizeof(float));
    }
    return SB_OK;
}

const sb_op_def sb_op_LSTM = {
    .name = "LSTM", .load = rnn_load, .infer = rnn_infer, .run = rnn_run, .flags = SB_OP_OPTIONAL_FIRST};
const sb_op_def sb_op_GRU = {
    .name = "GRU", .load = rnn_load, .infer = rnn_infer, .run = rnn_run, .flags = SB_OP_OPTIONAL_FIRST};
const sb_op_def sb_op_RNN = {
    .name = "RNN", .load = rnn_load, .infer = rnn_infer, .run = rnn_run, .flags = SB_OP_OPTIONAL_FIRST};
