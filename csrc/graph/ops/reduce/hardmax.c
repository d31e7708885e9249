/* ONNX Hardmax (docs/onnx.md): 1 where an input element is the largest of
 * its slice, 0 elsewhere. The slice is the axis (opset 13 on; default -1),
 * or before opset 13 everything from the axis on (the input seen as 2-D,
 * [prod(dims[:axis]), prod(dims[axis:])]; default axis 1). The largest is
 * ArgMax's (float_arg_extreme): NaN above every number, the first of equal
 * values. float32 only. */
#include <string.h>
#include "graph/op.h"
#include "graph/ops/reduce/reduce_util.h"

typedef struct { int64_t axis; int whole_tail; } hardmax_state;

static int hardmax_load(sb_load_ctx *L)
{
    hardmax_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->whole_tail = L->opset < 13;
    s->axis = sb_attr_int(L, "axis", s->whole_tail ? 1 : -1);
    return L->status;
}

static int hardmax_infer(sb_infer_ctx *I)
{
    const hardmax_state *s = I->state;
    const sb_tval *x = need_input(I, 0);
    if (!x) return SB_ERR_VALUE;
    if (x->info.dtype != SB_DT_FLOAT)
        return sb_infer_fail(I, SB_ERR_TYPE, "input must be float32, got %s", sb_dtype_name(x->info.dtype));
    int a;
    int status = sb_infer_axis(I, s->axis, x->info.rank, "axis", &a);
    if (status) return status;
    I->out[0] = x->info;
    return SB_OK;
}

static int hardmax_run(sb_run_ctx *R)
{
    const hardmax_state *s = R->state;
    const sb_tval *x = R->in[0];
    const int64_t *dims = x->info.dims;
    int r = x->info.rank;
    int a = (int)(s->axis < 0 ? s->axis + r : s->axis);
    int64_t outer = prod_dims(dims, 0, a), n, inner;
    if (s->whole_tail) n = prod_dims(dims, a, r), inner = 1;
    else n = dims[a], inner = prod_dims(dims, a + 1, r);
    int64_t total = sb_vinfo_numel(&x->info);
    float *y = R->out[0]->data;
    if (total == 0) return SB_OK;
    memset(y, 0, (size_t)total * sizeof *y);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            int64_t base = o * n * inner + i;
            int64_t best = float_arg_extreme((const uint32_t *)x->data + base, n, inner, 1, 0);
            y[base + best * inner] = 1.0f;
        }
    return SB_OK;
}

const sb_op_def sb_op_Hardmax = {
    .name = "Hardmax", .load = hardmax_load, .infer = hardmax_infer, .run = hardmax_run};
