/* ONNX Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh and Atanh
 * (docs/onnx.md): float32 elementwise by math/inverse_trig.h's functions, the
 * same bits in both modes and on every path (one scalar loop). */
#include <string.h>
#include "graph/op.h"
#include "math/inverse_trig.h"

typedef float (*scalar_fn)(float);

static const struct { const char *name; scalar_fn fn; } FUNCTIONS[] = {
    {"Tan", sb_fn_tan}, {"Asin", sb_fn_asin}, {"Acos", sb_fn_acos}, {"Atan", sb_fn_atan},
    {"Sinh", sb_fn_sinh}, {"Cosh", sb_fn_cosh}, {"Asinh", sb_fn_asinh}, {"Acosh", sb_fn_acosh},
    {"Atanh", sb_fn_atanh},
};

static scalar_fn function_of(const char *op)
{
    for (size_t i = 0; i < sizeof FUNCTIONS / sizeof *FUNCTIONS; ++i)
        if (!strcmp(FUNCTIONS[i].name, op)) return FUNCTIONS[i].fn;
    return NULL;
}

static int inverse_trig_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_float(I, 0, "input");
    if (!x) return SB_ERR_TYPE;
    I->out[0] = x->info;
    I->inplace = 0;
    return SB_OK;
}

static int inverse_trig_run(sb_run_ctx *R)
{
    scalar_fn fn = function_of(R->node->op_type);
    const float *x = R->in[0]->data;
    float *y = R->out[0]->data;
    int64_t n = sb_vinfo_numel(&R->in[0]->info);
    for (int64_t i = 0; i < n; ++i) y[i] = fn(x[i]);
    return SB_OK;
}

#define INVERSE_TRIG_OP(NAME)                                                                 \
    const sb_op_def sb_op_##NAME = {.name = #NAME, .infer = inverse_trig_infer, .run = inverse_trig_run};
INVERSE_TRIG_OP(Tan)
INVERSE_TRIG_OP(Asin)
INVERSE_TRIG_OP(Acos)
INVERSE_TRIG_OP(Atan)
INVERSE_TRIG_OP(Sinh)
INVERSE_TRIG_OP(Cosh)
INVERSE_TRIG_OP(Asinh)
INVERSE_TRIG_OP(Acosh)
INVERSE_TRIG_OP(Atanh)
