/* ONNX Shrink, ThresholdedRelu, Celu and Swish (docs/onnx.md): float32
 * functions of one input with attributes; the selects are exact, Celu and
 * Swish are sequences of the exact elementwise kernels in the documented
 * order. */
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/math/math_util.h"

enum { TH_SHRINK, TH_THRESHOLDED_RELU, TH_CELU, TH_SWISH };

typedef struct { int kind; float a, b; } th_state;

static int th_load(sb_load_ctx *L)
{
    th_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    const char *op = L->node->op_type;
    if (!strcmp(op, "Shrink")) {
        s->kind = TH_SHRINK;
        s->a = sb_attr_float(L, "lambd", 0.5f);
        s->b = sb_attr_float(L, "bias", 0.0f);
    } else {
        s->kind = !strcmp(op, "ThresholdedRelu") ? TH_THRESHOLDED_RELU
                : !strcmp(op, "Celu") ? TH_CELU : TH_SWISH;
        s->a = sb_attr_float(L, "alpha", 1.0f);
    }
    if (L->status) return L->status;
    if (s->kind == TH_CELU && !(s->a != 0.0f))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "alpha must be nonzero");
    return L->status;
}

static int th_infer(sb_infer_ctx *I)
{
    const th_state *s = I->state;
    const sb_tval *x = sb_infer_float(I, 0, s->kind == TH_SHRINK ? "input" : "X");
    if (!x) return SB_ERR_TYPE;
    I->out[0] = x->info;
    I->inplace = 0;
    return SB_OK;
}

static int th_run(sb_run_ctx *R)
{
    const th_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int64_t n = sb_vinfo_numel(&x->info);
    if (n == 0) return SB_OK;
    const float *xv = x->data;
    float *yv = y->data;
    int status;
    switch (s->kind) {
    case TH_SHRINK:   /* x + bias below -lambd, x - bias above lambd, else +0 (NaN: +0) */
        for (int64_t i = 0; i < n; ++i) {
            float v = xv[i];
            yv[i] = v < -s->a ? sb_bin_add(v, s->b) : v > s->a ? sb_bin_sub(v, s->b) : 0.0f;
        }
        return SB_OK;
    case TH_THRESHOLDED_RELU:   /* x above alpha, else +0 (NaN: +0) */
        for (int64_t i = 0; i < n; ++i) yv[i] = xv[i] > s->a ? xv[i] : 0.0f;
        return SB_OK;
    case TH_CELU:   /* x where x > 0, else alpha * elu(x / alpha, 1) */
        if ((status = sb_k_binary_scalar(R, SB_BIN_DIV, x, s->a, y))) return status;
        if ((status = sb_k_unary(R, SB_OP_ELU, 1.0f, y, y))) return status;
        if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, y, s->a, y))) return status;
        for (int64_t i = 0; i < n; ++i)
            if (xv[i] > 0.0f) yv[i] = xv[i];
        return SB_OK;
    default:   /* Swish: x * sigmoid(alpha * x) */
        if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, x, s->a, y))) return status;
        if ((status = sb_k_unary(R, SB_OP_SIGMOID, 0.0f, y, y))) return status;
        return sb_k_binary(R, SB_BIN_MUL, x, y, y);
    }
}

const sb_op_def sb_op_Shrink = {.name = "Shrink", .load = th_load, .infer = th_infer, .run = th_run};
const sb_op_def sb_op_ThresholdedRelu = {
    .name = "ThresholdedRelu", .load = th_load, .infer = th_infer, .run = th_run};
const sb_op_def sb_op_Celu = {.name = "Celu", .load = th_load, .infer = th_infer, .run = th_run};
const sb_op_def sb_op_Swish = {.name = "Swish", .load = th_load, .infer = th_infer, .run = th_run};
