/* ONNX Cast and CastLike (docs/onnx.md): element type conversions. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "math/narrow_float.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"
#include "graph/float_to_int.h"

typedef struct { int to, narrow; } cast_state;   /* narrow: float16 or bfloat16 (as float32) */

static int castable(int64_t to)
{
    return to == SB_DT_FLOAT || to == SB_DT_FLOAT16 || to == SB_DT_BFLOAT16 ||
           (to >= 0 && to < 64 && sb_dtype_is_int((int)to));
}

static int cast_load(sb_load_ctx *L)
{
    cast_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    int64_t to = sb_attr_int_req(L, "to");
    sb_attr_ignore(L, "saturate");   /* only for float8 targets, which are refused */
    sb_attr_ignore(L, "round_mode"); /* only for float8e8m0 targets (opset 24), refused too */
    if (L->status) return L->status;
    if (!castable(to)) {
        char b[32];
        const char *name = to >= 0 && to < 64 ? dtype_text((int)to, b, sizeof b) : NULL;
        if (!name) snprintf(b, sizeof b, "%lld", (long long)to), name = b;
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "Cast to %s is not supported (float32, float16, "
                            "bfloat16, integer and bool tensors are)", name);
    }
    s->to = (int)to;
    if (to == SB_DT_FLOAT16 || to == SB_DT_BFLOAT16) s->to = SB_DT_FLOAT, s->narrow = (int)to;
    return L->status;
}

static int cast_like_load(sb_load_ctx *L)
{
    sb_attr_ignore(L, "saturate");
    sb_attr_ignore(L, "round_mode");
    return L->status;
}

static int cast_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    I->out[0] = x->info;
    I->out[0].dtype = ((const cast_state *)I->state)->to;
    return SB_OK;
}

static int cast_like_infer(sb_infer_ctx *I)
{
    const sb_tval *like = sb_infer_input(I, 1, "target_type");
    if (!like) return SB_ERR_VALUE;
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    I->out[0] = x->info;
    I->out[0].dtype = like->info.dtype;
    return SB_OK;
}

static void cast_values(const sb_tval *x, sb_tval *y)
{
    int64_t n = sb_vinfo_numel(&x->info);
    int from = x->info.dtype, to = y->info.dtype;
    if (n <= 0) return;
    if (from == to) {
        if (y->data != x->data) memcpy(y->data, x->data, (size_t)(n * sb_dtype_size(to)));
        return;
    }
    /* the common conversions as typed loops (the same values as below) */
#define CAST_LOOP(TI, TO, EXPR)                                                   \
    do {                                                                          \
        const TI *in = x->data;                                                   \
        TO *out = y->data;                                                        \
        for (int64_t i = 0; i < n; ++i) out[i] = EXPR;                            \
        return;                                                                   \
    } while (0)
    if (to == SB_DT_INT64 && from == SB_DT_INT32) CAST_LOOP(int32_t, int64_t, (int64_t)in[i]);
    if (to == SB_DT_INT64 && (from == SB_DT_UINT8 || from == SB_DT_BOOL))
        CAST_LOOP(uint8_t, int64_t, (int64_t)in[i]);
    if (to == SB_DT_INT32 && from == SB_DT_INT64)
        CAST_LOOP(int64_t, int32_t, (int32_t)(uint32_t)(uint64_t)in[i]);   /* wraps */
    if (to == SB_DT_FLOAT && (from == SB_DT_UINT8 || from == SB_DT_BOOL))
        CAST_LOOP(uint8_t, float, (float)in[i]);   /* exact */
#undef CAST_LOOP
    if (to == SB_DT_FLOAT) {   /* one correct rounding of the integer */
        float *out = y->data;
        if (from == SB_DT_UINT64)
            for (int64_t i = 0; i < n; ++i) out[i] = (float)((const uint64_t *)x->data)[i];
        else
            for (int64_t i = 0; i < n; ++i) out[i] = (float)sb_int_at(x, i);
        return;
    }
    if (from == SB_DT_FLOAT) {
        const float *in = x->data;
        for (int64_t i = 0; i < n; ++i) sb_store_float_as_int(y->data, to, i, in[i]);
        return;
    }
    for (int64_t i = 0; i < n; ++i) sb_int_store(y->data, to, i, sb_int_at(x, i));   /* wraps */
}

static int cast_run(sb_run_ctx *R)
{
    cast_values(R->in[0], R->out[0]);
    const cast_state *s = R->state;
    if (s && s->narrow) {   /* float32 (an integer rounded to it first), then the narrow type */
        float *y = R->out[0]->data;
        int64_t n = sb_vinfo_numel(&R->out[0]->info);
        for (int64_t i = 0; i < n; ++i)
            y[i] = s->narrow == SB_DT_FLOAT16 ? sb_round_to_float16(y[i]) : sb_round_to_bfloat16(y[i]);
    }
    return SB_OK;
}

static int cast_like_run(sb_run_ctx *R)
{
    cast_values(R->in[0], R->out[0]);
    return SB_OK;
}

const sb_op_def sb_op_Cast = {
    .name = "Cast", .load = cast_load, .infer = cast_infer, .run = cast_run};
const sb_op_def sb_op_CastLike = {
    .name = "CastLike", .load = cast_like_load, .infer = cast_like_infer, .run = cast_like_run};
