/* ONNX Concat (docs/onnx.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

static int concat_load(sb_load_ctx *L)
{
    axis_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int_req(L, "axis");
    return L->status;
}

static int concat_infer(sb_infer_ctx *I)
{
    const axis_state *s = I->state;
    const sb_tval *first = NULL;
    for (int i = 0; i < I->n_in && !first; ++i) first = I->in[i];
    if (!first) return sb_infer_fail(I, SB_ERR_INDEX, "list index out of range");
    int r = first->info.rank, a;
    int status = sb_infer_axis(I, s->axis, r, "axis", &a);
    if (status) return status;
    int all_float = 1, any_float = 0;
    for (int i = 0; i < I->n_in; ++i) {
        const sb_tval *t = I->in[i];
        if (!t) continue;
        int fits = t->info.rank == r;
        for (int d = 0; d < r && fits; ++d) fits = d == a || t->info.dims[d] == first->info.dims[d];
        if (!fits) {
            char text[1024], one[256];
            size_t at = (size_t)snprintf(text, sizeof text, "[");
            for (int k = 0, m = 0; k < I->n_in && at < sizeof text; ++k) {
                if (!I->in[k]) continue;
                at += (size_t)snprintf(text + at, sizeof text - at, "%s%s", m++ ? ", " : "",
                                       shape_str(&I->in[k]->info, one, sizeof one));
            }
            if (at < sizeof text) snprintf(text + at, sizeof text - at, "]");
            return sb_infer_fail(I, SB_ERR_VALUE, "shapes %s do not concatenate along axis %d",
                                 text, a);
        }
        int f = t->info.dtype == SB_DT_FLOAT;
        all_float &= f, any_float |= f;
    }
    if (r == 0) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
    if (!all_float && any_float)
        return sb_infer_fail(I, SB_ERR_TYPE, "cannot concatenate float32 with integer tensors");
    sb_vinfo *y = &I->out[0];
    *y = first->info;
    y->dims[a] = 0;
    for (int i = 0; i < I->n_in; ++i) {
        if (!I->in[i]) continue;
        y->dims[a] += I->in[i]->info.dims[a];
        if (y->dims[a] > SB_MAX_ELEMENTS)
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
    }
    /* only 1s before the axis: each input is one run of the output, which
     * its producer may write in place (planner.c) */
    I->inputs_in_output = prod_dims(y->dims, 0, a) == 1;
    return SB_OK;
}

static int concat_run(sb_run_ctx *R)
{
    const axis_state *s = R->state;
    sb_tval *y = R->out[0];
    int r = y->info.rank;
    int a = (int)(s->axis < 0 ? s->axis + r : s->axis);
    int size = sb_dtype_size(y->info.dtype);
    int64_t ys[SB_MAX_RANK], xs[SB_MAX_RANK];
    sb_c_strides(&y->info, ys);
    int64_t at = 0;
    int64_t inner_after = prod_dims(y->info.dims, a + 1, r), inner_out = inner_after * y->info.dims[a];
    for (int i = 0; i < R->n_in; ++i) {
        const sb_tval *x = R->in[i];
        if (!x) continue;
        int64_t n = sb_vinfo_numel(&x->info);
        uint8_t *to = (uint8_t *)y->data + at * ys[a] * size;
        if (n > 0 && x->info.dtype == y->info.dtype && (const uint8_t *)x->data == to &&
            prod_dims(y->info.dims, 0, a) == 1) {
            /* written there by its producer (planner.c): nothing to copy */
        } else if (n > 0 && x->info.dtype == y->info.dtype) {
            sb_c_strides(&x->info, xs);
            int status = copy_any(R->threads, r, x->info.dims, size, x->data, xs, to, ys);
            if (status) return sb_run_fail(R, status, "the copy failed");
        } else if (n > 0) {   /* integers of another type: their values, wrapped */
            int64_t inner = inner_after * x->info.dims[a];
            for (int64_t k = 0; k < n; ++k) {
                int64_t o = k / inner, w = k % inner;
                sb_int_store(y->data, y->info.dtype, o * inner_out + at * inner_after + w,
                             sb_int_at(x, k));
            }
        }
        at += x->info.dims[a];
    }
    return SB_OK;
}

const sb_op_def sb_op_Concat = {
    .name = "Concat", .load = concat_load, .infer = concat_infer, .run = concat_run};
