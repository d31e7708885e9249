/* ONNX Compress (docs/onnx.md): numpy.compress. The slices along `axis` (of
 * the flattened input without one) whose condition is true, in order; a
 * condition shorter than the axis leaves the rest out. The output's length
 * depends on the condition's values: known at plan time when it is a
 * constant, else at run. Bits move untouched. */
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/index/index_util.h"

typedef struct { int has_axis; int64_t axis; } compress_state;

static int compress_load(sb_load_ctx *L)
{
    compress_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->has_axis = sb_has_attr(L, "axis");
    s->axis = sb_attr_int(L, "axis", 0);
    return L->status;
}

/* x as (outer, n, inner) around the axis (n: every element without one). */
static int compress_dims(sb_infer_ctx *I, const sb_vinfo *x, int *a, int64_t d[3])
{
    const compress_state *s = I->state;
    d[0] = 1, d[1] = sb_vinfo_numel(x), d[2] = 1, *a = -1;
    if (!s->has_axis) return SB_OK;
    int status = sb_infer_axis(I, s->axis, x->rank, "axis", a);
    if (status) return status;
    d[1] = x->dims[*a];
    for (int k = 0; k < *a; ++k) d[0] *= x->dims[k];
    for (int k = *a + 1; k < x->rank; ++k) d[2] *= x->dims[k];
    return SB_OK;
}

static int compress_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    const sb_tval *c = sb_infer_int(I, 1, "condition");
    if (!c) return SB_ERR_TYPE;
    char cs[256];
    sb_shape_text(&c->info, cs, sizeof cs);
    if (c->info.rank != 1) return sb_infer_fail(I, SB_ERR_VALUE, "condition %s is not 1-D", cs);
    int a;
    int64_t d[3];
    int status = compress_dims(I, &x->info, &a, d);
    if (status) return status;
    if (c->info.dims[0] > d[1])
        return sb_infer_fail(I, SB_ERR_VALUE, "condition %s is longer than the %lld elements it "
                             "selects from", cs, (long long)d[1]);
    if (c->info.dims[0] > 0 && !c->data) return SB_NEEDS_VALUES;
    int64_t kept = 0;
    for (int64_t i = 0; i < c->info.dims[0]; ++i) kept += sb_int_at(c, i) != 0;
    I->out[0] = x->info;
    if (a < 0) I->out[0].rank = 1, I->out[0].dims[0] = kept;
    else I->out[0].dims[a] = kept;
    return SB_OK;
}

static int compress_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0], *c = R->in[1];
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    int a;
    int64_t d[3];
    int status = compress_dims(&I, &x->info, &a, d);
    if (status) return status;
    int64_t size = sb_dtype_size(x->info.dtype), row = d[2] * size, kept = 0;
    for (int64_t i = 0; i < c->info.dims[0]; ++i) kept += sb_int_at(c, i) != 0;
    const uint8_t *src = x->data;
    uint8_t *dst = R->out[0]->data;
    for (int64_t o = 0; o < d[0]; ++o)
        for (int64_t i = 0, k = 0; i < c->info.dims[0]; ++i) {
            if (!sb_int_at(c, i)) continue;
            memcpy(dst + (o * kept + k) * row, src + (o * d[1] + i) * row, (size_t)row);
            ++k;
        }
    return SB_OK;
}

const sb_op_def sb_op_Compress = {
    .name = "Compress", .load = compress_load, .infer = compress_infer, .run = compress_run};
