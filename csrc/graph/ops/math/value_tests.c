/* ONNX Sign, IsNaN and IsInf (docs/onnx.md): tests of each element's value,
 * exact. */
#include <string.h>
#include "math/transcendental.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/math/math_util.h"

enum { VT_SIGN, VT_ISNAN, VT_ISINF };

typedef struct { int kind, positive, negative; } vt_state;

static int vt_load(sb_load_ctx *L)
{
    vt_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    const char *op = L->node->op_type;
    s->kind = !strcmp(op, "Sign") ? VT_SIGN : !strcmp(op, "IsNaN") ? VT_ISNAN : VT_ISINF;
    if (s->kind == VT_ISINF) {
        s->positive = sb_attr_int(L, "detect_positive", 1) != 0;
        s->negative = sb_attr_int(L, "detect_negative", 1) != 0;
    }
    return L->status;
}

static int vt_infer(sb_infer_ctx *I)
{
    const vt_state *s = I->state;
    const sb_tval *x = s->kind == VT_SIGN ? sb_infer_input(I, 0, "input") : sb_infer_float(I, 0, "X");
    if (!x) return s->kind == VT_SIGN ? SB_ERR_VALUE : SB_ERR_TYPE;
    if (s->kind == VT_SIGN && x->info.dtype == SB_DT_BOOL)
        return sb_infer_fail(I, SB_ERR_TYPE, "input must be a number tensor, got bool");
    I->out[0] = x->info;
    if (s->kind != VT_SIGN) I->out[0].dtype = SB_DT_BOOL;
    else I->inplace = 0;
    return SB_OK;
}

static int vt_run(sb_run_ctx *R)
{
    const vt_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int64_t n = sb_vinfo_numel(&x->info);
    if (s->kind == VT_SIGN && x->info.dtype != SB_DT_FLOAT) {
        int is_signed = sb_dtype_is_signed(x->info.dtype);
        for (int64_t i = 0; i < n; ++i) {
            int64_t v = sb_int_at(x, i);
            int64_t r = is_signed ? (v > 0) - (v < 0) : sb_int_at_u(x, i) != 0;
            sb_int_store(y->data, y->info.dtype, i, r);
        }
        return SB_OK;
    }
    const uint32_t *xb = x->data;
    for (int64_t i = 0; i < n; ++i) {
        uint32_t u = xb[i], mag = u & 0x7fffffffu;
        int nan = mag > 0x7f800000u;
        if (s->kind == VT_SIGN) {   /* -1, +1, +0 for either zero, NaN canonical */
            uint32_t r = nan ? SB_CANONICAL_NAN_BITS : mag == 0 ? 0u
                       : (u >> 31) ? 0xbf800000u : 0x3f800000u;
            memcpy((uint8_t *)y->data + 4 * i, &r, 4);
        } else {
            int hit = s->kind == VT_ISNAN ? nan
                    : mag == 0x7f800000u && ((u >> 31) ? s->negative : s->positive);
            ((uint8_t *)y->data)[i] = (uint8_t)hit;
        }
    }
    return SB_OK;
}

const sb_op_def sb_op_Sign = {.name = "Sign", .load = vt_load, .infer = vt_infer, .run = vt_run};
const sb_op_def sb_op_IsNaN = {.name = "IsNaN", .load = vt_load, .infer = vt_infer, .run = vt_run};
const sb_op_def sb_op_IsInf = {.name = "IsInf", .load = vt_load, .infer = vt_infer, .run = vt_run};
