/* ONNX CausalConvWithState (opset 27; docs/onnx.md): a causal depthwise 1-D
 * convolution with a carried state, as ONNX's function body computes it:
 * P = Concat(past_state or zeros, input) along the length; output =
 * Conv(P, weight, bias, group = channels) with no padding, then, with
 * activation 'silu' or 'swish', output * Sigmoid(output) (each rounded
 * once); present_state = the last k - 1 positions of P. The convolution is
 * sb_conv2d's (kernels/conv.c), the activation sb_unary's and sb_binary's,
 * so the bits are those of the body's nodes. */
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"

typedef struct { int silu; } causal_conv_state;

static int causal_conv_load(sb_load_ctx *L)
{
    causal_conv_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    const char *act = sb_attr_str(L, "activation", "none");
    if (L->status) return L->status;
    if (!strcmp(act, "silu") || !strcmp(act, "swish")) s->silu = 1;
    else if (strcmp(act, "none"))
        return sb_load_fail(L, SB_ERR_VALUE, "activation='%s' is not one of 'silu', 'swish' and "
                            "'none'", act);
    return SB_OK;
}

typedef struct { int64_t B, C, T, K; } causal_dims;

static int causal_conv_dims(sb_infer_ctx *I, causal_dims *d)
{
    const sb_tval *x = sb_infer_float(I, 0, "input"), *w = sb_infer_float(I, 1, "weight");
    if (!x || !w) return SB_ERR_TYPE;
    const sb_tval *bias = I->n_in > 2 ? I->in[2] : NULL, *past = I->n_in > 3 ? I->in[3] : NULL;
    if (x->info.rank != 3)
        return sb_infer_fail(I, SB_ERR_VALUE, "input must be 3-D (batch, channels, length)");
    d->B = x->info.dims[0], d->C = x->info.dims[1], d->T = x->info.dims[2];
    if (w->info.rank != 3 || w->info.dims[0] != d->C || w->info.dims[1] != 1 || w->info.dims[2] < 1)
        return sb_infer_fail(I, SB_ERR_VALUE, "weight must be (channels, 1, k) with k >= 1 and %lld "
                             "channels", (long long)d->C);
    d->K = w->info.dims[2];
    if (bias && (!sb_infer_float(I, 2, "bias") || bias->info.rank != 1 || bias->info.dims[0] != d->C))
        return sb_infer_fail(I, SB_ERR_VALUE, "bias must be (channels,) = (%lld,)", (long long)d->C);
    if (past && (!sb_infer_float(I, 3, "past_state") || past->info.rank != 3 ||
                 past->info.dims[0] != d->B || past->info.dims[1] != d->C ||
                 past->info.dims[2] != d->K - 1))
        return sb_infer_fail(I, SB_ERR_VALUE, "past_state must be (batch, channels, k - 1) = (%lld, "
                             "%lld, %lld)", (long long)d->B, (long long)d->C, (long long)(d->K - 1));
    if (d->B == 0 || d->C == 0)
        return sb_infer_fail(I, SB_ERR_VALUE, "an empty batch or channel axis is not supported");
    return SB_OK;
}

static int causal_conv_infer(sb_infer_ctx *I)
{
    const causal_conv_state *s = I->state;
    causal_dims d;
    int status = causal_conv_dims(I, &d);
    if (status) return status;
    I->out[0] = I->in[0]->info;
    if (I->n_out > 1) {
        I->out[1] = I->in[0]->info;
        I->out[1].dims[2] = d.K - 1;
    }
    /* the padded input, then (silu) the output's sigmoid */
    int64_t padded = d.B * d.C * (d.K - 1 + d.T), out = d.B * d.C * d.T;
    I->workspace = 4 * (padded + (s->silu ? out : 0));
    return SB_OK;
}

static int causal_conv_run(sb_run_ctx *R)
{
    const causal_conv_state *s = R->state;
    sb_infer_ctx I;
    sb_vinfo outs[2];
    sb_infer_from_run(R, &I, outs);
    causal_dims d;
    int status = causal_conv_dims(&I, &d);
    if (status) return status;
    const sb_tval *bias = R->n_in > 2 ? R->in[2] : NULL, *past = R->n_in > 3 ? R->in[3] : NULL;
    int64_t P = d.K - 1, L = P + d.T, rows = d.B * d.C;
    float *padded = R->workspace;
    const float *x = R->in[0]->data, *ps = past ? past->data : NULL;
    for (int64_t r = 0; r < rows; ++r) {
        if (ps) memcpy(padded + r * L, ps + r * P, (size_t)P * sizeof *padded);
        else memset(padded + r * L, 0, (size_t)P * sizeof *padded);
        memcpy(padded + r * L + P, x + r * d.T, (size_t)d.T * sizeof *padded);
    }
    if (R->n_out > 1 && R->out[1])
        for (int64_t r = 0; r < rows; ++r)
            memcpy((float *)R->out[1]->data + r * P, padded + r * L + d.T, (size_t)P * sizeof(float));
    if (d.T > 0) {
        sb_conv2d_args a;
        memset(&a, 0, sizeof a);
        a.path = R->path, a.mode = R->mode, a.max_threads = R->threads;
        a.n = d.B, a.c = d.C, a.h = 1, a.w = L, a.cout = d.C, a.kh = 1, a.kw = d.K, a.groups = d.C;
        a.stride_h = a.stride_w = a.dil_h = a.dil_w = 1;
        a.x = (int64_t)(intptr_t)padded;
        a.weights = (int64_t)(intptr_t)R->in[1]->data;
        a.bias = bias ? (int64_t)(intptr_t)bias->data : 0;
        a.y = (int64_t)(intptr_t)R->out[0]->data;
        status = sb_conv2d(&a);
        if (status) return sb_run_fail(R, status, "conv2d failed (status %d)", status);
    }
    if (s->silu) {
        sb_tval sig = *R->out[0];
        sig.data = padded + rows * L;
        if ((status = sb_k_unary(R, SB_OP_SIGMOID, 0.0f, R->out[0], &sig))) return status;
        if ((status = sb_k_binary(R, SB_BIN_MUL, R->out[0], &sig, R->out[0]))) return status;
    }
    return SB_OK;
}

const sb_op_def sb_op_CausalConvWithState = {
    .name = "CausalConvWithState", .load = causal_conv_load, .infer = causal_conv_infer,
    .run = causal_conv_run};
