/* ONNX Neg, Reciprocal, Abs, Floor, Ceil, Round, LeakyRelu, HardSigmoid, Elu,
 * Selu, Softsign, HardSwish and Gelu (docs/onnx.md): functions of one input
 * written as sequences of elementwise kernels, in the documented order. */
#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"
#include "graph/ops/math/math_util.h"

enum {
    FN_NEG, FN_RECIPROCAL, FN_ABS, FN_FLOOR, FN_CEIL, FN_ROUND, FN_LEAKY_RELU, FN_HARD_SIGMOID,
    FN_ELU, FN_SELU, FN_SOFTSIGN, FN_HARD_SWISH, FN_GELU,
};

static const struct { const char *name; int kind; } FNS[] = {
    {"Neg", FN_NEG}, {"Reciprocal", FN_RECIPROCAL}, {"Abs", FN_ABS}, {"Floor", FN_FLOOR},
    {"Ceil", FN_CEIL}, {"Round", FN_ROUND}, {"LeakyRelu", FN_LEAKY_RELU},
    {"HardSigmoid", FN_HARD_SIGMOID}, {"Elu", FN_ELU}, {"Selu", FN_SELU},
    {"Softsign", FN_SOFTSIGN}, {"HardSwish", FN_HARD_SWISH}, {"Gelu", FN_GELU},
};

typedef struct { int kind, gelu_op; float alpha, beta, gamma; } fn_state;

static int fn_load(sb_load_ctx *L)
{
    fn_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    for (size_t k = 0; k < sizeof FNS / sizeof FNS[0]; ++k)
        if (!strcmp(FNS[k].name, L->node->op_type)) s->kind = FNS[k].kind;
    switch (s->kind) {
    case FN_LEAKY_RELU: s->alpha = sb_attr_float(L, "alpha", 0.01f); break;
    case FN_ELU: s->alpha = sb_attr_float(L, "alpha", 1.0f); break;
    case FN_SELU:
        s->alpha = sb_attr_float(L, "alpha", 1.67326319217681884765625f);
        s->gamma = sb_attr_float(L, "gamma", 1.05070102214813232421875f);
        break;
    case FN_HARD_SIGMOID:
        s->alpha = sb_attr_float(L, "alpha", 0.2f);
        s->beta = sb_attr_float(L, "beta", 0.5f);
        break;
    case FN_GELU: {
        const char *a = sb_attr_str(L, "approximate", "none");
        if (L->status) return L->status;
        if (!strcmp(a, "none")) s->gelu_op = SB_OP_GELU;
        else if (!strcmp(a, "tanh")) s->gelu_op = SB_OP_GELU_TANH;
        else return sb_load_fail(L, SB_ERR_UNSUPPORTED, "approximate='%s' is not supported", a);
        break;
    }
    default: break;
    }
    return L->status;
}

static int fn_infer(sb_infer_ctx *I)
{
    const fn_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "X");
    if (!x) return SB_ERR_VALUE;
    int64_t n = sb_vinfo_numel(&x->info);
    int is_float = x->info.dtype == SB_DT_FLOAT;
    I->out[0] = x->info;
    switch (s->kind) {
    case FN_NEG: case FN_ABS:   /* integers too */
        I->inplace = s->kind == FN_ABS && is_float ? -1 : 0;
        return SB_OK;
    case FN_RECIPROCAL:
        if (!is_float) return sb_infer_fail(I, SB_ERR_TYPE, "input must be float32");
        I->inplace = 0;
        return SB_OK;
    case FN_LEAKY_RELU: case FN_ELU:
        /* (an empty tensor of any type is passed through) */
        if (n == 0) return SB_OK;
        if (!sb_infer_float(I, 0, "X")) return SB_ERR_TYPE;
        if (s->alpha != s->alpha)
            return sb_infer_fail(I, SB_ERR_VALUE, s->kind == FN_ELU ? "elu: alpha must not be NaN"
                                 : "leaky_relu: negative_slope must not be NaN");
        I->inplace = 0;
        return SB_OK;
    case FN_SELU:
        if (!sb_infer_float(I, 0, "X")) return SB_ERR_TYPE;
        if (n && s->alpha != s->alpha)
            return sb_infer_fail(I, SB_ERR_VALUE, "elu: alpha must not be NaN");
        I->inplace = 0;
        return SB_OK;
    case FN_SOFTSIGN:
        if (!sb_infer_float(I, 0, "X")) return SB_ERR_TYPE;
        return SB_OK;   /* y holds partial results while x is still read */
    default:
        if (!sb_infer_float(I, 0, "X")) return SB_ERR_TYPE;
        I->inplace = 0;
        return SB_OK;
    }
}

static int fn_run(sb_run_ctx *R)
{
    const fn_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int64_t n = sb_vinfo_numel(&x->info);
    if (n == 0) return SB_OK;
    if (x->info.dtype != SB_DT_FLOAT) {   /* Neg and Abs on integers, wrapping like the type */
        int is_signed = sb_dtype_is_signed(x->info.dtype);
        for (int64_t i = 0; i < n; ++i) {
            uint64_t v = (uint64_t)sb_int_at(x, i);
            if (s->kind == FN_NEG || (is_signed && (int64_t)v < 0)) v = (uint64_t)0 - v;
            sb_int_store(y->data, y->info.dtype, i, (int64_t)v);
        }
        return SB_OK;
    }
    int status;
    switch (s->kind) {
    case FN_NEG: return sb_k_binary_scalar(R, SB_BIN_MUL, x, -1.0f, y);
    case FN_RECIPROCAL: return k_scalar_binary(R, SB_BIN_DIV, 1.0f, x, y);
    case FN_ABS: return k_float_abs(R, x, y);
    case FN_FLOOR: case FN_CEIL: case FN_ROUND: {
        int kind = s->kind == FN_FLOOR ? RND_FLOOR : s->kind == FN_CEIL ? RND_CEIL : RND_ROUND;
        const uint32_t *xb = x->data;
        uint32_t *yb = y->data;
        for (int64_t i = 0; i < n; ++i) yb[i] = round_bits(kind, xb[i]);
        return SB_OK;
    }
    case FN_LEAKY_RELU: return sb_k_unary(R, SB_OP_LEAKY_RELU, s->alpha, x, y);
    case FN_ELU: return sb_k_unary(R, SB_OP_ELU, s->alpha, x, y);
    case FN_SELU:
        if ((status = sb_k_unary(R, SB_OP_ELU, s->alpha, x, y))) return status;
        return sb_k_binary_scalar(R, SB_BIN_MUL, y, s->gamma, y);
    case FN_SOFTSIGN:   /* x / (1 + |x|) */
        if ((status = k_float_abs(R, x, y))) return status;
        if ((status = sb_k_binary_scalar(R, SB_BIN_ADD, y, 1.0f, y))) return status;
        return sb_k_binary(R, SB_BIN_DIV, x, y, y);
    case FN_HARD_SIGMOID:
        if (s->beta == 0.5f) return sb_k_unary(R, SB_OP_HARDSIGMOID_ONNX, s->alpha, x, y);
        if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, x, s->alpha, y))) return status;
        if ((status = sb_k_binary_scalar(R, SB_BIN_ADD, y, s->beta, y))) return status;
        if ((status = sb_k_binary_scalar(R, SB_BIN_MAXIMUM, y, 0.0f, y))) return status;
        return sb_k_binary_scalar(R, SB_BIN_MINIMUM, y, 1.0f, y);
    case FN_HARD_SWISH: return sb_k_unary(R, SB_OP_HARDSWISH_ONNX, 0.0f, x, y);
    case FN_GELU: return sb_k_unary(R, s->gelu_op, 0.0f, x, y);
    }
    return SB_OK;
}

const sb_op_def sb_op_Neg = {.name = "Neg", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_Reciprocal = {
    .name = "Reciprocal", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_Abs = {.name = "Abs", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_Floor = {.name = "Floor", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_Ceil = {.name = "Ceil", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_Round = {.name = "Round", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_LeakyRelu = {
    .name = "LeakyRelu", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_HardSigmoid = {
    .name = "HardSigmoid", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_Elu = {.name = "Elu", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_Selu = {.name = "Selu", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_Softsign = {
    .name = "Softsign", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_HardSwish = {
    .name = "HardSwish", .load = fn_load, .infer = fn_infer, .run = fn_run};
const sb_op_def sb_op_Gelu = {.name = "Gelu", .load = fn_load, .infer = fn_infer, .run = fn_run};
