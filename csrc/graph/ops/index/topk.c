/* ONNX TopK (docs/onnx.md): K from the attribute (before opset 10) or the
 * input, the axis, the errors; the sort is the kernel's (kernels/topk.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/topk.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "graph/ops/index/index_util.h"

typedef struct { int64_t axis, largest, k; int has_k; } topk_state;

static int topk_load(sb_load_ctx *L)
{
    topk_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", -1);
    s->largest = sb_attr_int(L, "largest", 1);
    sb_attr_int(L, "sorted", 1);   /* the outputs are always sorted, which sorted=0 permits */
    if (L->opset < 10) {
        s->k = sb_attr_int_req(L, "k");
        s->has_k = 1;
    }
    return L->status;
}

/* K, from the attribute or the input; SB_NEEDS_VALUES while unknown. */
static int topk_k(sb_infer_ctx *I, const topk_state *s, int64_t *k, int *huge)
{
    *huge = 0;
    if (s->has_k) { *k = s->k; return SB_OK; }
    if (I->n_in < 2 || !I->in[1]) return sb_infer_fail(I, SB_ERR_VALUE, "input K is missing");
    const sb_tval *ks = sb_infer_int(I, 1, "K");
    if (!ks) return SB_ERR_TYPE;
    int status = one_value_shape(I, ks, "K");
    if (status) return status;
    if (!ks->data) return SB_NEEDS_VALUES;
    if (!int_value(ks, 0, k)) *huge = 1;
    return SB_OK;
}

static int topk_infer(sb_infer_ctx *I)
{
    const topk_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "X");
    if (!x) return SB_ERR_VALUE;
    int64_t k = 0;
    int huge, status = topk_k(I, s, &k, &huge);
    if (status) return status;
    if (x->info.rank == 0) return sb_infer_fail(I, SB_ERR_VALUE, "X must have at least one dimension");
    int a;
    if ((status = sb_infer_axis(I, s->axis, x->info.rank, "axis", &a))) return status;
    int64_t size = x->info.dims[a];
    if (huge || k < 0 || k > size) {
        char kt[32], xs[256];
        if (huge) int_text(I->in[1], 0, kt, sizeof kt);
        else snprintf(kt, sizeof kt, "%lld", (long long)k);
        sb_shape_text(&x->info, xs, sizeof xs);
        return sb_infer_fail(I, SB_ERR_VALUE, "K=%s is outside 0..%lld (axis %d of %s)", kt,
                             (long long)size, a, xs);
    }
    I->out[0] = x->info;
    I->out[0].dims[a] = k;
    if (I->n_out > 1) {
        I->out[1] = I->out[0];
        I->out[1].dtype = SB_DT_INT64;
    }
    I->workspace = (size ? size : 1) * (int64_t)sizeof(sb_topk_entry) + 64;
    return SB_OK;
}


static int topk_run(sb_run_ctx *R)
{
    const topk_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *vals = R->out[0], *inds = R->n_out > 1 ? R->out[1] : NULL;
    if (!vals && !inds) return SB_OK;
    int rank = x->info.rank;
    int a = (int)((s->axis + rank) % rank);
    int64_t size = x->info.dims[a];
    int64_t k = vals ? vals->info.dims[a] : inds->info.dims[a];
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < a; ++d) outer *= x->info.dims[d];
    for (int d = a + 1; d < rank; ++d) inner *= x->info.dims[d];
    int kind = x->info.dtype == SB_DT_FLOAT ? SB_TOPK_FLOAT32
               : sb_dtype_is_signed(x->info.dtype) ? SB_TOPK_SIGNED : SB_TOPK_UNSIGNED;
    sb_topk(x->data, kind, sb_dtype_size(x->info.dtype), outer, size, inner, k, s->largest != 0,
            vals ? vals->data : NULL, inds ? inds->data : NULL, R->workspace);
    return SB_OK;
}

const sb_op_def sb_op_TopK = {
    .name = "TopK", .load = topk_load, .infer = topk_infer, .run = topk_run};
