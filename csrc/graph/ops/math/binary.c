/* ONNX Add, Sub, Mul, Div, Pow, Max, Min, Sum and Mean (docs/onnx.md): float32
 * through sb_binary, integers exactly here, with numpy's broadcasting. */
#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"
#include "graph/ops/math/math_util.h"
#include "graph/float_to_int.h"

typedef struct { int bin, iop, is_mean; } binary_state;

static const struct { const char *name; int bin, iop; } BINARY[] = {
    {"Add", SB_BIN_ADD, IOP_ADD}, {"Sub", SB_BIN_SUB, IOP_SUB}, {"Mul", SB_BIN_MUL, IOP_MUL},
    {"Div", SB_BIN_DIV, IOP_DIV}, {"Pow", SB_BIN_POW, IOP_POW}, {"Max", SB_BIN_MAXIMUM, IOP_MAX},
    {"Min", SB_BIN_MINIMUM, IOP_MIN}, {"Sum", SB_BIN_ADD, IOP_ADD}, {"Mean", SB_BIN_ADD, IOP_ADD},
};

static int binary_load(sb_load_ctx *L)
{
    binary_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    for (size_t k = 0; k < sizeof BINARY / sizeof BINARY[0]; ++k)
        if (!strcmp(BINARY[k].name, L->node->op_type)) s->bin = BINARY[k].bin, s->iop = BINARY[k].iop;
    s->is_mean = !strcmp(L->node->op_type, "Mean");
    if (L->opset < 7) {
        sb_attr_ignore(L, "broadcast");
        sb_attr_ignore(L, "axis");
    }
    return L->status;
}

/* The pair's result type: float32 with float32 (Pow: any exponent), or two
 * integer tensors (not bool, but for Pow), or Pow of an int32 or int64 base
 * (ONNX's types for it) with a float32 exponent (the base's type). */
static int binary_types(sb_infer_ctx *I, int bin, const sb_tval *a, const sb_tval *b, int *out)
{
    int fa = a->info.dtype == SB_DT_FLOAT, fb = b->info.dtype == SB_DT_FLOAT;
    if (fa && (fb || bin == SB_BIN_POW)) { *out = SB_DT_FLOAT; return SB_OK; }
    if (bin == SB_BIN_POW && fb && (a->info.dtype == SB_DT_INT32 || a->info.dtype == SB_DT_INT64)) {
        *out = a->info.dtype;
        return SB_OK;
    }
    if (!fa && !fb && (bin == SB_BIN_POW || a->info.dtype != SB_DT_BOOL)) {
        *out = a->info.dtype;
        return SB_OK;
    }
    return sb_infer_fail(I, SB_ERR_TYPE, "inputs of types %s and %s cannot be combined",
                         sb_dtype_name(a->info.dtype), sb_dtype_name(b->info.dtype));
}

static int binary_infer(sb_infer_ctx *I)
{
    const binary_state *s = I->state;
    if (I->n_in < 1) return sb_infer_fail(I, SB_ERR_VALUE, "needs at least one input");
    const sb_vinfo *shapes[64];
    if (I->n_in > 64) return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "more than 64 inputs");
    int dtype = 0;
    for (int i = 0; i < I->n_in; ++i) {
        const sb_tval *t = sb_infer_input(I, i, "operand");
        if (!t) return SB_ERR_VALUE;
        shapes[i] = &t->info;
        if (i == 0) dtype = t->info.dtype;
        else {
            sb_tval acc = {.info = {.dtype = dtype}};
            int status = binary_types(I, s->bin, &acc, t, &dtype);
            if (status) return status;
        }
    }
    if (I->n_in == 1 && !strcmp(I->node->op_type, "Mean") && dtype != SB_DT_FLOAT)
        return sb_infer_fail(I, SB_ERR_TYPE, "input data_0 must be float32");
    int status = sb_infer_broadcast(I, shapes, I->n_in, &I->out[0]);
    if (status) return status;
    I->out[0].dtype = dtype;
    if (!strcmp(I->node->op_type, "Mean") && dtype != SB_DT_FLOAT)
        return sb_infer_fail(I, SB_ERR_TYPE, "input data_0 must be float32");
    /* a left fold over several inputs keeps its partial results apart */
    if (I->n_in > 2) I->workspace = 2 * sb_vinfo_bytes(&I->out[0]);
    /* Pow's integer exponent converted to float32 */
    if (I->n_in == 2 && dtype == SB_DT_FLOAT && I->in[1]->info.dtype != SB_DT_FLOAT)
        I->workspace = 4 * sb_vinfo_numel(&I->in[1]->info);
    /* Pow's integer base converted to float32, then the float32 result */
    if (I->n_in == 2 && dtype != SB_DT_FLOAT && I->in[1]->info.dtype == SB_DT_FLOAT)
        I->workspace = 4 * (sb_vinfo_numel(&I->in[0]->info) + sb_vinfo_numel(&I->out[0]));
    for (int i = 0; i < I->n_in && I->n_in <= 2; ++i)
        if (sb_vinfo_same_shape(shapes[i], &I->out[0]) && shapes[i]->dtype == dtype) I->inplace = i;
    return SB_OK;
}

/* Pow of an integer base with a float32 exponent: the base rounded to
 * float32, the float32 pow (samebits.pow), then Cast's conversion to the
 * base's type (truncation toward zero). */
static int int_base_pow(sb_run_ctx *R, const sb_tval *a, const sb_tval *b, sb_tval *y)
{
    float *base = R->workspace;
    int64_t na = sb_vinfo_numel(&a->info), ny = sb_vinfo_numel(&y->info);
    int is_signed = sb_dtype_is_signed(a->info.dtype);
    for (int64_t i = 0; i < na; ++i)
        base[i] = is_signed ? (float)sb_int_at(a, i) : (float)sb_int_at_u(a, i);
    sb_tval af = *a, r = *y;
    af.info.dtype = SB_DT_FLOAT, af.data = base;
    r.info.dtype = SB_DT_FLOAT, r.data = base + na;
    int status = sb_k_binary(R, SB_BIN_POW, &af, b, &r);
    if (status) return status;
    for (int64_t i = 0; i < ny; ++i) sb_store_float_as_int(y->data, y->info.dtype, i, base[na + i]);
    return SB_OK;
}

static int binary_pair(sb_run_ctx *R, int bin, int iop, const sb_tval *a, const sb_tval *b, sb_tval *y)
{
    if (y->info.dtype != SB_DT_FLOAT && b->info.dtype == SB_DT_FLOAT)
        return int_base_pow(R, a, b, y);
    if (y->info.dtype == SB_DT_FLOAT) {
        sb_tval bf = *b;
        if (b->info.dtype != SB_DT_FLOAT) {
            /* Pow's integer exponent, as float32: the nearest float32 of each
             * value (ties to even), one rounding, as Python's cast does */
            float *converted = R->workspace;
            int64_t n = sb_vinfo_numel(&b->info);
            int is_signed = sb_dtype_is_signed(b->info.dtype);
            for (int64_t i = 0; i < n; ++i)
                converted[i] = is_signed ? (float)sb_int_at(b, i) : (float)sb_int_at_u(b, i);
            bf.info.dtype = SB_DT_FLOAT;
            bf.data = converted;
        }
        return sb_k_binary(R, bin, a, &bf, y);
    }
    return int_binary(R, iop, a, b, y);
}

/* Two float32 operands (not Mean, which divides after): the sb_binary call
 * for their infos, ready for every run. */
static int binary_prepare(sb_prepare_ctx *P)
{
    const binary_state *s = P->state;
    if (P->n_in != 2 || s->is_mean || P->in[0]->info.dtype != SB_DT_FLOAT ||
        P->in[1]->info.dtype != SB_DT_FLOAT)
        return SB_OK;
    int status = sb_k_binary_prepare(P->mode, P->path, s->bin, &P->in[0]->info, &P->in[1]->info,
                                     &P->out[0], P->prepared);
    if (!status) P->bytes = sizeof(sb_binary_call);
    return status;
}

static int binary_run(sb_run_ctx *R)
{
    const binary_state *s = R->state;
    sb_tval *y = R->out[0];
    if (R->prepared) {
        sb_binary_run_prepared(R->prepared, R->in[0]->data, R->in[1]->data, y->data, R->threads);
        return SB_OK;
    }
    if (R->n_in == 1) {
        int64_t bytes = sb_vinfo_bytes(&y->info);
        if (bytes > 0 && y->data != R->in[0]->data) memcpy(y->data, R->in[0]->data, (size_t)bytes);
    } else if (R->n_in == 2) {
        int status = binary_pair(R, s->bin, s->iop, R->in[0], R->in[1], y);
        if (status) return status;
    } else {
        /* left to right: acc = in0; acc = op(acc, in_k), partial results in
         * the workspace's two halves, the last one into y */
        int64_t half = sb_vinfo_bytes(&y->info);
        uint8_t *ws = R->workspace;
        sb_tval acc = *R->in[0];
        for (int k = 1; k < R->n_in; ++k) {
            sb_tval next;
            next.info.dtype = y->info.dtype;
            const sb_vinfo *pair[2] = {&acc.info, &R->in[k]->info};
            sb_broadcast(pair, 2, &next.info);
            next.info.dtype = y->info.dtype;
            next.data = k == R->n_in - 1 ? y->data : ws + (k % 2) * half;
            int status = binary_pair(R, s->bin, s->iop, &acc, R->in[k], &next);
            if (status) return status;
            acc = next;
        }
    }
    if (s->is_mean)
        return sb_k_binary_scalar(R, SB_BIN_DIV, y, (float)R->n_in, y);
    return SB_OK;
}

const sb_op_def sb_op_Add = {
    .name = "Add", .load = binary_load, .infer = binary_infer, .run = binary_run, .prepare = binary_prepare};
const sb_op_def sb_op_Sub = {
    .name = "Sub", .load = binary_load, .infer = binary_infer, .run = binary_run, .prepare = binary_prepare};
const sb_op_def sb_op_Mul = {
    .name = "Mul", .load = binary_load, .infer = binary_infer, .run = binary_run, .prepare = binary_prepare};
const sb_op_def sb_op_Div = {
    .name = "Div", .load = binary_load, .infer = binary_infer, .run = binary_run, .prepare = binary_prepare};
const sb_op_def sb_op_Pow = {
    .name = "Pow", .load = binary_load, .infer = binary_infer, .run = binary_run, .prepare = binary_prepare};
const sb_op_def sb_op_Max = {
    .name = "Max", .load = binary_load, .infer = binary_infer, .run = binary_run, .prepare = binary_prepare};
const sb_op_def sb_op_Min = {
    .name = "Min", .load = binary_load, .infer = binary_infer, .run = binary_run, .prepare = binary_prepare};
const sb_op_def sb_op_Sum = {
    .name = "Sum", .load = binary_load, .infer = binary_infer, .run = binary_run, .prepare = binary_prepare};
const sb_op_def sb_op_Mean = {
    .name = "Mean", .load = binary_load, .infer = binary_infer, .run = binary_run, .prepare = binary_prepare};
