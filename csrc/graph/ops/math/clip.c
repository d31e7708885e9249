/* ONNX Clip (docs/onnx.md). */
#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"
#include "graph/ops/math/math_util.h"

typedef struct { int attrs, has_lo, has_hi; float lo, hi; } clip_state;

static int clip_load(sb_load_ctx *L)
{
    clip_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    if (L->opset < 11) {   /* bounds as attributes */
        s->attrs = 1;
        s->has_lo = sb_has_attr(L, "min");
        s->has_hi = sb_has_attr(L, "max");
        s->lo = sb_attr_float(L, "min", 0.0f);
        s->hi = sb_attr_float(L, "max", 0.0f);
    }
    return L->status;
}

static const sb_tval *clip_bound(const sb_infer_ctx *I, int i)
{
    const clip_state *s = I->state;
    return s->attrs || i >= I->n_in ? NULL : I->in[i];
}

static int clip_infer(sb_infer_ctx *I)
{
    const clip_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    const sb_tval *lo = clip_bound(I, 1), *hi = clip_bound(I, 2);
    I->out[0] = x->info;
    if (x->info.dtype != SB_DT_FLOAT) {
        static const char *const names[2] = {"min", "max"};
        for (int k = 0; k < 2; ++k) {
            if (s->attrs && (k ? s->has_hi : s->has_lo))
                return sb_infer_fail(I, SB_ERR_TYPE, "input %s must be an integer tensor, got "
                                     "float32", names[k]);
            if ((k ? hi : lo) && !sb_infer_int(I, k + 1, names[k])) return SB_ERR_TYPE;
        }
        I->inplace = 0;
        return SB_OK;
    }
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    if (lo && !sb_infer_float(I, 1, "min")) return SB_ERR_TYPE;
    if (hi && !sb_infer_float(I, 2, "max")) return SB_ERR_TYPE;
    /* maximum(x, min), then minimum(that, max), each broadcasting */
    for (int k = 0; k < 2; ++k) {
        const sb_tval *bound = k ? hi : lo;
        if (!bound) continue;
        sb_vinfo acc = I->out[0];
        const sb_vinfo *pair[2] = {&acc, &bound->info};
        if (sb_broadcast(pair, 2, &I->out[0])) {
            char sa[256], sbt[256];
            sb_shape_text(&acc, sa, sizeof sa);
            sb_shape_text(&bound->info, sbt, sizeof sbt);
            return sb_infer_fail(I, SB_ERR_VALUE, "%s: operands could not be broadcast together "
                                 "with shapes %s and %s", k ? "minimum" : "maximum", sa, sbt);
        }
        I->out[0].dtype = SB_DT_FLOAT;
    }
    if (sb_vinfo_same_shape(&x->info, &I->out[0])) I->inplace = 0;
    return SB_OK;
}

static int clip_run(sb_run_ctx *R)
{
    const clip_state *s = R->state;
    const sb_tval *x = R->in[0];
    const sb_tval *lo = s->attrs || R->n_in < 2 ? NULL : R->in[1];
    const sb_tval *hi = s->attrs || R->n_in < 3 ? NULL : R->in[2];
    sb_tval *y = R->out[0];
    int64_t n = sb_vinfo_numel(&x->info);
    if (x->info.dtype != SB_DT_FLOAT) {
        int64_t lo_v = 0, hi_v = 0;
        int sx = sb_dtype_is_signed(x->info.dtype), sl = 0, sh = 0;
        if (lo) {
            if (!sb_vinfo_numel(&lo->info)) return sb_run_fail(R, SB_ERR_INDEX, "input min is empty");
            lo_v = sb_int_at(lo, 0), sl = sb_dtype_is_signed(lo->info.dtype);
        }
        if (hi) {
            if (!sb_vinfo_numel(&hi->info)) return sb_run_fail(R, SB_ERR_INDEX, "input max is empty");
            hi_v = sb_int_at(hi, 0), sh = sb_dtype_is_signed(hi->info.dtype);
        }
        for (int64_t i = 0; i < n; ++i) {
            int64_t v = sb_int_at(x, i);
            int sv = sx;
            if (lo && int_cmp(v, sv, lo_v, sl) < 0) v = lo_v, sv = sl;
            if (hi && int_cmp(v, sv, hi_v, sh) > 0) v = hi_v;
            sb_int_store(y->data, y->info.dtype, i, v);
        }
        return SB_OK;
    }
    if (n == 0) return SB_OK;
    /* minimum(maximum(x, min), max); an absent bound is float32's lowest or
     * largest finite value (ONNX's default) */
    float lo_f = s->attrs && s->has_lo ? s->lo : -FLT_MAX_F;
    float hi_f = s->attrs && s->has_hi ? s->hi : FLT_MAX_F;
    sb_tval lo_t = lo ? *lo : scalar_tval(&lo_f), hi_t = hi ? *hi : scalar_tval(&hi_f);
    /* the maximum straight over the output's shape (where max broadcasts it
     * further, the same values repeated), then the minimum in place */
    int status = sb_k_binary(R, SB_BIN_MAXIMUM, x, &lo_t, y);
    if (status) return status;
    return sb_k_binary(R, SB_BIN_MINIMUM, y, &hi_t, y);
}

const sb_op_def sb_op_Clip = {
    .name = "Clip", .load = clip_load, .infer = clip_infer, .run = clip_run};
