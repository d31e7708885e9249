/* ONNX LinearAttention (opset 27; docs/onnx.md): query, key and value as
 * (batch, length, heads * head size); each key/value head's recurrence by
 * kernels/linear_attention.c, in ONNX's function body's order, the query
 * heads of a group reading their key/value head's state (GQA). The scale
 * is `scale`, or 1 / sqrt(d_k) rounded as the body's Sqrt and Reciprocal
 * are; exp(decay) is the mode's Exp. chunk_size changes nothing. */
#include <math.h>
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"
#include "kernels/linear_attention.h"

typedef struct {
    int64_t q_heads, kv_heads;
    float scale;
    int rule;
} linear_attention_state;

static int linear_attention_load(sb_load_ctx *L)
{
    linear_attention_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->q_heads = sb_attr_int_req(L, "q_num_heads");
    s->kv_heads = sb_attr_int_req(L, "kv_num_heads");
    s->scale = sb_attr_float(L, "scale", 0.0f);
    const char *rule = sb_attr_str(L, "update_rule", "gated_delta");
    int64_t chunk = sb_attr_int(L, "chunk_size", 64);   /* a tuning hint: no effect on results */
    (void)chunk;
    if (L->status) return L->status;
    static const char *const rules[] = {"linear", "gated", "delta", "gated_delta"};
    s->rule = -1;
    for (int i = 0; i < 4; ++i)
        if (!strcmp(rule, rules[i])) s->rule = i;
    if (s->rule < 0)
        return sb_load_fail(L, SB_ERR_VALUE, "update_rule='%s' is not one of 'linear', 'gated', "
                            "'delta' and 'gated_delta'", rule);
    if (s->q_heads < 1 || s->kv_heads < 1 || s->q_heads % s->kv_heads)
        return sb_load_fail(L, SB_ERR_VALUE, "q_num_heads=%lld must be a positive multiple of "
                            "kv_num_heads=%lld", (long long)s->q_heads, (long long)s->kv_heads);
    if (!isfinite(s->scale))
        return sb_load_fail(L, SB_ERR_VALUE, "scale must be finite");
    return SB_OK;
}

typedef struct { int64_t B, T, Hq, Hkv, dk, dv, gate_last, beta_last; } la_dims;

static int la_dims_of(sb_infer_ctx *I, la_dims *d)
{
    const linear_attention_state *s = I->state;
    const sb_tval *q = sb_infer_float(I, 0, "query"), *k = sb_infer_float(I, 1, "key"),
                  *v = sb_infer_float(I, 2, "value");
    if (!q || !k || !v) return SB_ERR_TYPE;
    const sb_tval *past = I->n_in > 3 ? I->in[3] : NULL, *decay = I->n_in > 4 ? I->in[4] : NULL,
                  *beta = I->n_in > 5 ? I->in[5] : NULL;
    if (q->info.rank != 3 || k->info.rank != 3 || v->info.rank != 3)
        return sb_infer_fail(I, SB_ERR_VALUE, "query, key and value must be 3-D (batch, length, "
                             "heads * head size)");
    memset(d, 0, sizeof *d);
    d->B = q->info.dims[0], d->T = q->info.dims[1], d->Hq = s->q_heads, d->Hkv = s->kv_heads;
    for (int i = 0; i < 2; ++i)
        if (k->info.dims[i] != q->info.dims[i] || v->info.dims[i] != q->info.dims[i])
            return sb_infer_fail(I, SB_ERR_VALUE, "query, key and value must agree in batch and "
                                 "length");
    if (q->info.dims[2] % d->Hq || v->info.dims[2] % d->Hkv)
        return sb_infer_fail(I, SB_ERR_VALUE, "query's last dimension must be q_num_heads * d_k and "
                             "value's kv_num_heads * d_v");
    d->dk = q->info.dims[2] / d->Hq, d->dv = v->info.dims[2] / d->Hkv;
    if (k->info.dims[2] != d->Hkv * d->dk)
        return sb_infer_fail(I, SB_ERR_VALUE, "key's last dimension must be kv_num_heads * d_k = %lld",
                             (long long)(d->Hkv * d->dk));
    if (d->dk == 0 || d->dv == 0)
        return sb_infer_fail(I, SB_ERR_VALUE, "empty heads are not supported");
    if (past && (!sb_infer_float(I, 3, "past_state") || past->info.rank != 4 ||
                 past->info.dims[0] != d->B || past->info.dims[1] != d->Hkv ||
                 past->info.dims[2] != d->dk || past->info.dims[3] != d->dv))
        return sb_infer_fail(I, SB_ERR_VALUE, "past_state must be (batch, kv_num_heads, d_k, d_v) = "
                             "(%lld, %lld, %lld, %lld)", (long long)d->B, (long long)d->Hkv,
                             (long long)d->dk, (long long)d->dv);
    int gated = s->rule == SB_LA_GATED || s->rule == SB_LA_GATED_DELTA;
    int delta = s->rule == SB_LA_DELTA || s->rule == SB_LA_GATED_DELTA;
    if (gated) {
        if (!decay || !sb_infer_float(I, 4, "decay") || decay->info.rank != 3 ||
            decay->info.dims[0] != d->B || decay->info.dims[1] != d->T ||
            (decay->info.dims[2] != d->Hkv * d->dk && decay->info.dims[2] != d->Hkv))
            return sb_infer_fail(I, SB_ERR_VALUE, "update_rule %s needs decay of shape (batch, "
                                 "length, kv_num_heads * d_k) or (batch, length, kv_num_heads)",
                                 s->rule == SB_LA_GATED ? "'gated'" : "'gated_delta'");
        d->gate_last = decay->info.dims[2];
    }
    if (delta) {
        if (!beta || !sb_infer_float(I, 5, "beta") || beta->info.rank != 3 ||
            beta->info.dims[0] != d->B || beta->info.dims[1] != d->T ||
            (beta->info.dims[2] != d->Hkv && beta->info.dims[2] != 1))
            return sb_infer_fail(I, SB_ERR_VALUE, "update_rule %s needs beta of shape (batch, length, "
                                 "kv_num_heads) or (batch, length, 1)",
                                 s->rule == SB_LA_DELTA ? "'delta'" : "'gated_delta'");
        d->beta_last = beta->info.dims[2];
    }
    return SB_OK;
}

static int linear_attention_infer(sb_infer_ctx *I)
{
    la_dims d;
    int status = la_dims_of(I, &d);
    if (status) return status;
    I->out[0] = I->in[0]->info;
    I->out[0].dims[2] = d.Hq * d.dv;
    if (I->n_out > 1) {
        I->out[1] = (sb_vinfo){.dtype = SB_DT_FLOAT, .rank = 4, .dims = {d.B, d.Hkv, d.dk, d.dv}};
    }
    /* exp(decay), the state when present_state is left out, one row */
    I->workspace = 4 * (d.B * d.T * d.gate_last + d.B * d.Hkv * d.dk * d.dv + d.dv);
    return SB_OK;
}

static int linear_attention_run(sb_run_ctx *R)
{
    const linear_attention_state *s = R->state;
    sb_infer_ctx I;
    sb_vinfo outs[2];
    sb_infer_from_run(R, &I, outs);
    la_dims d;
    int status = la_dims_of(&I, &d);
    if (status) return status;
    float *ws = R->workspace, *gates = ws, *own_state = ws + d.B * d.T * d.gate_last;
    float *scratch = own_state + d.B * d.Hkv * d.dk * d.dv;
    if (d.gate_last) {
        sb_tval g = *R->in[4];
        g.data = gates;
        if ((status = sb_k_unary(R, SB_OP_EXP, 0.0f, R->in[4], &g))) return status;
    }
    float *state = R->n_out > 1 && R->out[1] ? R->out[1]->data : own_state;
    int64_t state_count = d.B * d.Hkv * d.dk * d.dv;
    if (R->n_in > 3 && R->in[3]) memcpy(state, R->in[3]->data, (size_t)state_count * sizeof *state);
    else memset(state, 0, (size_t)state_count * sizeof *state);
    float scale = s->scale;
    if (scale == 0.0f) {
        float root = sqrtf((float)d.dk);   /* the body's Sqrt, then Reciprocal */
        scale = 1.0f / root;
    }
    const float *q = R->in[0]->data, *k = R->in[1]->data, *v = R->in[2]->data;
    const float *beta = d.beta_last ? R->in[5]->data : NULL;
    float *out = R->out[0]->data;
    int64_t G = d.Hq / d.Hkv;
    for (int64_t b = 0; b < d.B; ++b)
        for (int64_t h = 0; h < d.Hkv; ++h) {
            sb_linear_attention_args a = {
                .rule = s->rule, .steps = d.T, .dk = d.dk, .dv = d.dv, .groups = G, .scale = scale,
                .q = q + b * d.T * d.Hq * d.dk + h * G * d.dk, .q_step = d.Hq * d.dk,
                .k = k + b * d.T * d.Hkv * d.dk + h * d.dk, .k_step = d.Hkv * d.dk,
                .v = v + b * d.T * d.Hkv * d.dv + h * d.dv, .v_step = d.Hkv * d.dv,
                .out = out + b * d.T * d.Hq * d.dv + h * G * d.dv, .out_step = d.Hq * d.dv,
                .state = state + (b * d.Hkv + h) * d.dk * d.dv, .scratch = scratch};
            if (d.gate_last) {
                a.gate_each = d.gate_last == d.Hkv * d.dk ? d.dk : 1;
                a.gate = gates + b * d.T * d.gate_last + h * a.gate_each;
                a.gate_step = d.gate_last;
            }
            if (beta) {
                a.beta = beta + b * d.T * d.beta_last + (d.beta_last == 1 ? 0 : h);
                a.beta_step = d.beta_last;
            }
            sb_linear_attention_head(&a);
        }
    return SB_OK;
}

const sb_op_def sb_op_LinearAttention = {
    .name = "LinearAttention", .load = linear_attention_load, .infer = linear_attention_infer,
    .run = linear_attention_run};
