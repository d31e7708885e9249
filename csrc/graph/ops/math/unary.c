/* ONNX Relu, Sigmoid, Tanh, Erf, Exp, Log, Sqrt, Sin, Cos, Softplus and Mish
 * (docs/onnx.md): one sb_unary call each (Relu on integers here). */
#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"
#include "graph/ops/math/math_util.h"

static const struct { const char *name; int op; } UNARY[] = {
    {"Relu", SB_OP_RELU}, {"Sigmoid", SB_OP_SIGMOID}, {"Tanh", SB_OP_TANH}, {"Erf", SB_OP_ERF},
    {"Exp", SB_OP_EXP}, {"Log", SB_OP_LOG}, {"Sqrt", SB_OP_SQRT}, {"Sin", SB_OP_SIN},
    {"Cos", SB_OP_COS}, {"Softplus", SB_OP_SOFTPLUS}, {"Mish", SB_OP_MISH},
};

typedef struct { int op; } unary_state;

static int unary_load(sb_load_ctx *L)
{
    unary_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    for (size_t k = 0; k < sizeof UNARY / sizeof UNARY[0]; ++k)
        if (!strcmp(UNARY[k].name, L->node->op_type)) s->op = UNARY[k].op;
    return L->status;
}

static int unary_infer(sb_infer_ctx *I)
{
    const unary_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "X");
    if (!x) return SB_ERR_VALUE;
    if (x->info.dtype != SB_DT_FLOAT && !(s->op == SB_OP_RELU && sb_dtype_is_int(x->info.dtype)))
        return sb_infer_fail(I, SB_ERR_TYPE, "input must be float32");
    I->out[0] = x->info;
    I->inplace = 0;
    return SB_OK;
}

/* float32: the sb_unary call over the input's elements, ready for every run. */
static int unary_prepare(sb_prepare_ctx *P)
{
    const unary_state *s = P->state;
    if (P->in[0]->info.dtype != SB_DT_FLOAT) return SB_OK;
    int status = sb_k_unary_prepare(P->mode, P->path, s->op, 0.0f, sb_vinfo_numel(&P->in[0]->info),
                                    P->prepared);
    if (!status) P->bytes = sizeof(sb_unary_call);
    return status;
}

static int unary_run(sb_run_ctx *R)
{
    const unary_state *s = R->state;
    const sb_tval *x = R->in[0];
    if (R->prepared) {
        sb_unary_run_prepared(R->prepared, x->data, R->out[0]->data, R->threads);
        return SB_OK;
    }
    if (x->info.dtype != SB_DT_FLOAT) {   /* Relu on integers */
        int64_t n = sb_vinfo_numel(&x->info);
        for (int64_t i = 0; i < n; ++i) {
            int64_t v = sb_int_at(x, i);
            sb_int_store(R->out[0]->data, x->info.dtype, i,
                         sb_dtype_is_signed(x->info.dtype) && v < 0 ? 0 : v);
        }
        return SB_OK;
    }
    return sb_k_unary(R, s->op, 0.0f, x, R->out[0]);
}

const sb_op_def sb_op_Relu = {
    .name = "Relu", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
const sb_op_def sb_op_Sigmoid = {
    .name = "Sigmoid", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
const sb_op_def sb_op_Tanh = {
    .name = "Tanh", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
const sb_op_def sb_op_Erf = {
    .name = "Erf", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
const sb_op_def sb_op_Exp = {
    .name = "Exp", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
const sb_op_def sb_op_Log = {
    .name = "Log", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
const sb_op_def sb_op_Sqrt = {
    .name = "Sqrt", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
const sb_op_def sb_op_Sin = {
    .name = "Sin", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
const sb_op_def sb_op_Cos = {
    .name = "Cos", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
const sb_op_def sb_op_Softplus = {
    .name = "Softplus", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
const sb_op_def sb_op_Mish = {
    .name = "Mish", .load = unary_load, .infer = unary_infer, .run = unary_run, .prepare = unary_prepare};
