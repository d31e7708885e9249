/* ONNX Attention (opset 23 on; docs/onnx.md), float32, as onnx.reference
 * defines it, on samebits' kernels:
 *
 *   Q, K, V as (batch, heads, sequence, head size) (3-D inputs split into
 *   q_num_heads / kv_num_heads heads); K and V after past_key / past_value
 *   along the sequence (present_key, present_value); s = sqrt(scale, or
 *   1 / sqrt(head size), in float64) rounded to float32; scores = (Q * s) @
 *   (K * s)^T (sb_matmul, query head h reading key head h / (Hq / Hkv));
 *   softcap c > 0: scores = tanh(scores / c) * c; + the bias; softmax over
 *   the keys (sb_reduce), rows whose bias or scores are all -inf set to 0;
 *   Y = P @ V.
 *
 * The bias of (b, h, i, j), each step a float32 add: the mask value (bool:
 * 0 where true, -inf where false; a mask shorter than the keys is padded with
 * -inf / false; broadcast right-aligned to (batch, heads, q, keys)) or 0;
 * with is_causal, + (0 where j <= i + offset, else -inf), offset = the past
 * length, or nonpad_kv_seqlen[b] - q (no past); without, 0 + the mask; with a
 * window, 0 + bias + (0 where i + offset - left <= j <= i + offset + right,
 * -1 meaning unbounded, else -inf); with nonpad_kv_seqlen, + (0 where j <
 * nonpad_kv_seqlen[b], else -inf). qk_matmul_output: modes 0 and 1 the
 * (softcapped) scores, 2 with the bias, 3 the probabilities. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/tensor.h"
#include "math/transcendental.h"

typedef struct {
    int64_t q_heads, kv_heads, causal, mode, left, right;
    float scale, softcap;
    int has_scale;
    int64_t precision;           /* softmax_precision: 1 float32, 11 float64 */
} attention_state;

/* softmax_precision 11: the row's softmax in binary64 (ONNX's body casts
 * the scores to double): m the largest; e = exp_double(x - m) (0 below
 * -700); s = +0 + e0 + e1 + ... in order; each x rounded from e / s once to
 * float32; a NaN anywhere makes the row NaN. */
static void softmax_double_row(float *x, int64_t n)
{
    double m = -INFINITY;
    int nan = 0;
    for (int64_t j = 0; j < n; ++j) {
        nan |= x[j] != x[j];
        if ((double)x[j] > m) m = (double)x[j];
    }
    if (nan || !(m > -INFINITY)) {   /* (a row masked entirely is zeroed by the caller) */
        for (int64_t j = 0; j < n; ++j) x[j] = sbt_float(SB_CANONICAL_NAN_BITS);
        return;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) {
        double t = (double)x[j] - m;
        sum = sum + (t < -700.0 ? 0.0 : sbt_exp_double(t));
    }
    for (int64_t j = 0; j < n; ++j) {
        double t = (double)x[j] - m;
        x[j] = (float)((t < -700.0 ? 0.0 : sbt_exp_double(t)) / sum);
    }
}

static int attention_load(sb_load_ctx *L)
{
    attention_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->q_heads = sb_attr_int(L, "q_num_heads", 0);
    s->kv_heads = sb_attr_int(L, "kv_num_heads", 0);
    s->causal = sb_attr_int(L, "is_causal", 0);
    s->mode = sb_attr_int(L, "qk_matmul_output_mode", 0);
    s->left = sb_attr_int(L, "left_window_size", -1);
    s->right = sb_attr_int(L, "right_window_size", -1);
    s->has_scale = sb_has_attr(L, "scale");
    s->scale = sb_attr_float(L, "scale", 0.0f);
    s->softcap = sb_attr_float(L, "softcap", 0.0f);
    s->precision = sb_attr_int(L, "softmax_precision", 1);
    if (L->status) return L->status;
    if (s->precision != 1 && s->precision != 11)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "softmax_precision=%lld is not supported (1: "
                            "float32, 11: float64)", (long long)s->precision);
    if (s->mode < 0 || s->mode > 3)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "qk_matmul_output_mode=%lld is not 0 to 3",
                            (long long)s->mode);
    if (s->left < -1 || s->right < -1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "window sizes must be -1 or at least 0");
    if (s->q_heads < 0 || s->kv_heads < 0 || s->q_heads > (1 << 20) || s->kv_heads > (1 << 20))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "q_num_heads and kv_num_heads must be in [1, 2^20]");
    return SB_OK;
}

/* The problem's sizes, from the inputs' infos. */
typedef struct {
    int64_t B, Hq, Hkv, S, Sk, P, T, D, Dv;
    int three_d;
} att_dims;

static int attention_dims(sb_infer_ctx *I, att_dims *d)
{
    const attention_state *s = I->state;
    const sb_tval *q = sb_infer_float(I, 0, "Q"), *k = sb_infer_float(I, 1, "K"),
                  *v = sb_infer_float(I, 2, "V");
    if (!q || !k || !v) return SB_ERR_TYPE;
    int r = q->info.rank;
    if ((r != 3 && r != 4) || k->info.rank != r || v->info.rank != r)
        return sb_infer_fail(I, SB_ERR_VALUE, "Q, K and V must all be 3-D or all 4-D");
    memset(d, 0, sizeof *d);
    d->three_d = r == 3;
    d->B = q->info.dims[0];
    if (k->info.dims[0] != d->B || v->info.dims[0] != d->B)
        return sb_infer_fail(I, SB_ERR_VALUE, "Q, K and V must have one batch size");
    if (r == 3) {
        if (!s->q_heads || !s->kv_heads)
            return sb_infer_fail(I, SB_ERR_VALUE, "3-D inputs need q_num_heads and kv_num_heads");
        d->Hq = s->q_heads, d->Hkv = s->kv_heads;
        d->S = q->info.dims[1], d->Sk = k->info.dims[1];
        if (q->info.dims[2] % d->Hq || k->info.dims[2] % d->Hkv || v->info.dims[2] % d->Hkv)
            return sb_infer_fail(I, SB_ERR_VALUE, "hidden sizes must divide by the head counts");
        d->D = q->info.dims[2] / d->Hq, d->Dv = v->info.dims[2] / d->Hkv;
        if (k->info.dims[2] / d->Hkv != d->D || v->info.dims[1] != d->Sk)
            return sb_infer_fail(I, SB_ERR_VALUE, "K's head size must be Q's, V's length K's");
    } else {
        d->Hq = q->info.dims[1], d->Hkv = k->info.dims[1];
        d->S = q->info.dims[2], d->Sk = k->info.dims[2], d->D = q->info.dims[3];
        d->Dv = v->info.dims[3];
        if (k->info.dims[3] != d->D || v->info.dims[1] != d->Hkv || v->info.dims[2] != d->Sk)
            return sb_infer_fail(I, SB_ERR_VALUE, "K must be (batch, kv heads, length, Q's head size) "
                                 "and V (batch, kv heads, that length, head size)");
    }
    if (d->Hkv < 1 || d->Hq < 1 || d->Hq % d->Hkv)
        return sb_infer_fail(I, SB_ERR_VALUE, "q heads (%lld) must be a multiple of kv heads (%lld)",
                             (long long)d->Hq, (long long)d->Hkv);
    const sb_tval *pk = I->n_in > 4 ? I->in[4] : NULL, *pv = I->n_in > 5 ? I->in[5] : NULL;
    if (!pk != !pv) return sb_infer_fail(I, SB_ERR_VALUE, "past_key and past_value go together");
    if (pk) {
        if (pk->info.dtype != SB_DT_FLOAT || pv->info.dtype != SB_DT_FLOAT || pk->info.rank != 4 ||
            pv->info.rank != 4 || pk->info.dims[0] != d->B || pk->info.dims[1] != d->Hkv ||
            pk->info.dims[3] != d->D || pv->info.dims[0] != d->B || pv->info.dims[1] != d->Hkv ||
            pv->info.dims[2] != pk->info.dims[2] || pv->info.dims[3] != d->Dv)
            return sb_infer_fail(I, SB_ERR_VALUE, "past_key / past_value must be float32 (batch, kv "
                                 "heads, past length, head size)");
        d->P = pk->info.dims[2];
    }
    d->T = d->P + d->Sk;
    const sb_tval *lens = I->n_in > 6 ? I->in[6] : NULL;
    if (lens && pk) return sb_infer_fail(I, SB_ERR_VALUE, "nonpad_kv_seqlen cannot come with past_key");
    if (lens && (!sb_dtype_is_int(lens->info.dtype) || sb_vinfo_numel(&lens->info) != d->B))
        return sb_infer_fail(I, SB_ERR_VALUE, "nonpad_kv_seqlen must hold one integer per batch entry");
    const sb_tval *mask = I->n_in > 3 ? I->in[3] : NULL;
    if (mask) {
        if (mask->info.dtype != SB_DT_FLOAT && mask->info.dtype != SB_DT_BOOL)
            return sb_infer_fail(I, SB_ERR_TYPE, "attn_mask must be float32 or bool");
        int mr = mask->info.rank;
        int64_t want[4] = {d->B, d->Hq, d->S, d->T};
        if (mr < 1 || mr > 4 || mask->info.dims[mr - 1] > d->T)
            return sb_infer_fail(I, SB_ERR_VALUE, "attn_mask must have 1 to 4 dimensions, at most "
                                 "%lld keys", (long long)d->T);
        for (int a = 0; a < mr - 1; ++a) {
            int64_t m = mask->info.dims[a], w = want[4 - mr + a];
            if (m != 1 && m != w)
                return sb_infer_fail(I, SB_ERR_VALUE, "attn_mask does not broadcast to (batch, heads, "
                                     "q, keys)");
        }
    }
    return SB_OK;
}

/* The workspace's parts (floats, each 64-byte aligned). */
typedef struct { int64_t qs, kp, ks, vp, sc, dead, total; } att_parts;

static int64_t up16(int64_t n) { return (n + 15) / 16 * 16; }

static void parts_of(const att_dims *d, att_parts *p)
{
    int64_t at = 0;
    p->qs = at, at += up16(d->B * d->Hq * d->S * d->D);
    p->kp = at, at += up16(d->B * d->Hkv * d->T * d->D);
    p->ks = at, at += up16(d->B * d->Hkv * d->T * d->D);
    p->vp = at, at += up16(d->B * d->Hkv * d->T * d->Dv);
    p->sc = at, at += up16(d->B * d->Hq * d->S * d->T);
    p->dead = at, at += up16((d->B * d->Hq * d->S + 3) / 4);   /* a byte per row */
    p->total = at;
}

static int attention_infer(sb_infer_ctx *I)
{
    att_dims d;
    int status = attention_dims(I, &d);
    if (status) return status;
    sb_vinfo *y = &I->out[0];
    y->dtype = SB_DT_FLOAT;
    if (d.three_d) y->rank = 3, y->dims[0] = d.B, y->dims[1] = d.S, y->dims[2] = d.Hq * d.Dv;
    else y->rank = 4, y->dims[0] = d.B, y->dims[1] = d.Hq, y->dims[2] = d.S, y->dims[3] = d.Dv;
    for (int j = 1; j < I->n_out && j < 4; ++j) {
        sb_vinfo *o = &I->out[j];
        o->dtype = SB_DT_FLOAT, o->rank = 4, o->dims[0] = d.B;
        o->dims[1] = j == 3 ? d.Hq : d.Hkv;
        o->dims[2] = j == 3 ? d.S : d.T;
        o->dims[3] = j == 1 ? d.D : j == 2 ? d.Dv : d.T;
    }
    att_parts p;
    parts_of(&d, &p);
    I->workspace = p.total * 4;
    return SB_OK;
}

/* Copies x (3-D (B, L, H*E) or 4-D (B, H, L, E)) into rows (b, h, at + l) of
 * a (B, H, rows, E) buffer. */
static void heads_into(const sb_tval *x, int three_d, int64_t H, int64_t E, float *dst, int64_t rows,
                       int64_t at)
{
    const float *src = x->data;
    int64_t B = x->info.dims[0], Lx = three_d ? x->info.dims[1] : x->info.dims[2];
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t l = 0; l < Lx; ++l) {
                const float *row = three_d ? src + ((b * Lx + l) * H + h) * E : src + ((b * H + h) * Lx + l) * E;
                memcpy(dst + ((b * H + h) * rows + at + l) * E, row, (size_t)E * 4);
            }
}

/* C (per query head) = A (per query head) @ B (per key head)^T or @ B. */
static int grouped_matmul(const sb_run_ctx *R, const att_dims *d, const float *a, int64_t m, int64_t k,
                          const float *b, int64_t n, int b_transposed, float *c, int64_t c_row,
                          const int64_t c_batch[3])
{
    int64_t g = d->Hq / d->Hkv;
    sb_batch batch = {0};
    batch.ndim = 3;
    batch.shape[0] = d->B, batch.shape[1] = d->Hkv, batch.shape[2] = g;
    batch.a_stride[0] = d->Hq * m * k, batch.a_stride[1] = g * m * k, batch.a_stride[2] = m * k;
    int64_t per_head = b_transposed ? n * k : k * n;
    batch.b_stride[0] = d->Hkv * per_head, batch.b_stride[1] = per_head, batch.b_stride[2] = 0;
    for (int i = 0; i < 3; ++i) batch.c_stride[i] = c_batch[i];
    sb_matmul_args args = {0};
    args.path = R->path, args.mode = R->mode, args.max_threads = R->threads;
    args.m = m, args.n = n, args.k = k;
    args.a = (int64_t)(intptr_t)a, args.a_row = k, args.a_col = 1;
    args.b = (int64_t)(intptr_t)b;
    if (b_transposed) args.b_row = 1, args.b_col = k;   /* B[kk][j] = b[j * k + kk] */
    else args.b_row = n, args.b_col = 1;
    args.c = (int64_t)(intptr_t)c, args.c_row = c_row;
    args.batch = (int64_t)(intptr_t)&batch;
    if (m == 0 || n == 0) return SB_OK;
    return sb_matmul(&args);
}

static float mask_at(const sb_tval *mask, int64_t b, int64_t h, int64_t i, int64_t j)
{
    int r = mask->info.rank;
    int64_t last = mask->info.dims[r - 1];
    int is_bool = mask->info.dtype == SB_DT_BOOL;
    if (j >= last) return -INFINITY;   /* padded: -inf, or false */
    int64_t coord[4] = {b, h, i, j}, at = 0, stride = 1;
    for (int a = r - 1; a >= 0; --a) {
        int64_t n = mask->info.dims[a], c = coord[4 - r + a];
        at += (n == 1 ? 0 : c) * stride;
        stride *= n;
    }
    if (is_bool) return ((const uint8_t *)mask->data)[at] ? 0.0f : -INFINITY;
    return ((const float *)mask->data)[at];
}

static int attention_run(sb_run_ctx *R)
{
    const attention_state *s = R->state;
    sb_infer_ctx I;
    sb_vinfo outs[4];
    sb_infer_from_run(R, &I, outs);
    att_dims d;
    int status = attention_dims(&I, &d);
    if (status) return status;
    att_parts p;
    parts_of(&d, &p);
    float *w = R->workspace;
    float *qs = w + p.qs, *kp = w + p.kp, *ks = w + p.ks, *vp = w + p.vp, *sc = w + p.sc;
    const sb_tval *q = R->in[0], *k = R->in[1], *v = R->in[2];
    const sb_tval *mask = R->n_in > 3 ? R->in[3] : NULL, *pk = R->n_in > 4 ? R->in[4] : NULL,
                  *pv = R->n_in > 5 ? R->in[5] : NULL, *lens = R->n_in > 6 ? R->in[6] : NULL;
    /* Q, present K and V as (batch, heads, rows, head size) */
    heads_into(q, d.three_d, d.Hq, d.D, qs, d.S, 0);
    if (pk) heads_into(pk, 0, d.Hkv, d.D, kp, d.T, 0), heads_into(pv, 0, d.Hkv, d.Dv, vp, d.T, 0);
    heads_into(k, d.three_d, d.Hkv, d.D, kp, d.T, d.P);
    heads_into(v, d.three_d, d.Hkv, d.Dv, vp, d.T, d.P);
    if (R->n_out > 1 && R->out[1]) memcpy(R->out[1]->data, kp, (size_t)(d.B * d.Hkv * d.T * d.D) * 4);
    if (R->n_out > 2 && R->out[2]) memcpy(R->out[2]->data, vp, (size_t)(d.B * d.Hkv * d.T * d.Dv) * 4);
    /* the scale, split over Q and K as the reference does */
    double scale = s->has_scale ? (double)s->scale : 1.0 / sqrt((double)d.D);
    float half = (float)sqrt(scale);
    sb_tval tq = {{0}, qs}, tk = {{0}, kp}, tks = {{0}, ks}, tsc = {{0}, sc};
    tq.info.dtype = tk.info.dtype = tks.info.dtype = tsc.info.dtype = SB_DT_FLOAT;
    tq.info.rank = tk.info.rank = tks.info.rank = tsc.info.rank = 1;
    tq.info.dims[0] = d.B * d.Hq * d.S * d.D;
    tk.info.dims[0] = tks.info.dims[0] = d.B * d.Hkv * d.T * d.D;
    tsc.info.dims[0] = d.B * d.Hq * d.S * d.T;
    if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, &tq, half, &tq))) return status;
    if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, &tk, half, &tks))) return status;
    int64_t g = d.Hq / d.Hkv;
    int64_t sc_batch[3] = {d.Hq * d.S * d.T, g * d.S * d.T, d.S * d.T};
    if ((status = grouped_matmul(R, &d, qs, d.S, d.D, ks, d.T, 1, sc, d.T, sc_batch))) return status;
    if (s->softcap > 0.0f) {
        if ((status = sb_k_binary_scalar(R, SB_BIN_DIV, &tsc, s->softcap, &tsc))) return status;
        if ((status = sb_k_unary(R, SB_OP_TANH, 0.0f, &tsc, &tsc))) return status;
        if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, &tsc, s->softcap, &tsc))) return status;
    }
    sb_tval *qk = R->n_out > 3 ? R->out[3] : NULL;
    size_t sc_bytes = (size_t)(d.B * d.Hq * d.S * d.T) * 4;
    if (qk && s->mode <= 1) memcpy(qk->data, sc, sc_bytes);
    /* the bias, added row by row; rows it masks entirely are zeroed after the softmax */
    int window = s->left >= 0 || s->right >= 0;
    int64_t rows = d.B * d.Hq * d.S;
    unsigned char *dead = (unsigned char *)(w + p.dead);
    for (int64_t b = 0; b < d.B; ++b) {
        int64_t nonpad = lens ? sb_int_at(lens, b) : 0;
        int64_t offset = pk ? d.P : lens ? nonpad - d.S : 0;
        for (int64_t h = 0; h < d.Hq; ++h)
            for (int64_t i = 0; i < d.S; ++i) {
                float *row = sc + ((b * d.Hq + h) * d.S + i) * d.T;
                int all_masked = 1, all_inf = 1;
                for (int64_t j = 0; j < d.T; ++j) {
                    float bias = mask ? mask_at(mask, b, h, i, j) : 0.0f;
                    if (s->causal) bias = bias + (j <= i + offset ? 0.0f : -INFINITY);
                    else if (mask) bias = 0.0f + bias;
                    if (window) {
                        int64_t diff = i + offset - j;
                        int ok = (s->left < 0 || diff <= s->left) && (s->right < 0 || -diff <= s->right);
                        bias = (0.0f + bias) + (ok ? 0.0f : -INFINITY);
                    }
                    if (lens) bias = bias + (j < nonpad ? 0.0f : -INFINITY);
                    if (!(isinf(bias) && bias < 0)) all_masked = 0;
                    row[j] = row[j] + bias;
                    if (!(isinf(row[j]) && row[j] < 0)) all_inf = 0;
                }
                dead[(b * d.Hq + h) * d.S + i] = (unsigned char)(all_masked || all_inf);
            }
    }
    if (qk && s->mode == 2) memcpy(qk->data, sc, sc_bytes);
    if (d.T > 0 && rows > 0 && s->precision == 11) {
        for (int64_t r = 0; r < rows; ++r) softmax_double_row(sc + r * d.T, d.T);
    } else if (d.T > 0 && rows > 0) {
        sb_reduce_args ra = {0};
        ra.path = R->path, ra.mode = R->mode, ra.op = SB_RED_SOFTMAX, ra.max_threads = R->threads;
        ra.outer = rows, ra.n = d.T, ra.inner = 1;
        ra.x = ra.y = (int64_t)(intptr_t)sc;
        if ((status = sb_reduce(&ra))) return status;
    }
    for (int64_t r = 0; r < rows; ++r)
        if (dead[r]) memset(sc + r * d.T, 0, (size_t)d.T * 4);
    if (qk && s->mode == 3) memcpy(qk->data, sc, sc_bytes);
    /* Y = P @ V, written as (B, S, Hq * Dv) for 3-D inputs */
    float *y = R->out[0]->data;
    if (d.T == 0) {   /* no keys: every row masked, Y = 0 */
        memset(y, 0, (size_t)(d.B * d.Hq * d.S * d.Dv) * 4);
        return SB_OK;
    }
    if (d.three_d) {
        int64_t y_batch[3] = {d.S * d.Hq * d.Dv, g * d.Dv, d.Dv};
        return grouped_matmul(R, &d, sc, d.S, d.T, vp, d.Dv, 0, y, d.Hq * d.Dv, y_batch);
    }
    int64_t y_batch[3] = {d.Hq * d.S * d.Dv, g * d.S * d.Dv, d.S * d.Dv};
    return grouped_matmul(R, &d, sc, d.S, d.T, vp, d.Dv, 0, y, d.Dv, y_batch);
}

const sb_op_def sb_op_Attention = {
    .name = "Attention", .load = attention_load, .infer = attention_infer, .run = attention_run};
