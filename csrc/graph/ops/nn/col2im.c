/* ONNX Col2Im (opset 18; docs/onnx.md): column blocks summed back into an
 * image (kernels/col2im.c). image_shape and block_shape are inputs whose
 * values the plan needs; strides, dilations and pads are attributes. */
#include <string.h>
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"
#include "kernels/col2im.h"

typedef struct { ints_attr strides, dilations, pads; } col2im_state;

static int col2im_load(sb_load_ctx *L)
{
    col2im_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    if (read_ints_attr(L, "strides", 0, &s->strides) || read_ints_attr(L, "dilations", 0, &s->dilations) ||
        read_ints_attr(L, "pads", 0, &s->pads))
        return L->status;
    return SB_OK;
}

static int col2im_args(sb_infer_ctx *I, sb_col2im_args *a)
{
    const col2im_state *s = I->state;
    const sb_tval *x = sb_infer_float(I, 0, "input");
    if (!x) return SB_ERR_TYPE;
    int64_t image[SB_COL2IM_MAX_DIMS + 1], block[SB_COL2IM_MAX_DIMS + 1];
    size_t ni, nb;
    int status = int_list(I, 1, "image_shape", image, SB_COL2IM_MAX_DIMS + 1, &ni);
    if (!status) status = int_list(I, 2, "block_shape", block, SB_COL2IM_MAX_DIMS + 1, &nb);
    if (status) return status;
    if (ni != nb || ni < 1 || ni > SB_COL2IM_MAX_DIMS)
        return sb_infer_fail(I, SB_ERR_VALUE, "image_shape and block_shape must have the same length, "
                             "1 to %d", SB_COL2IM_MAX_DIMS);
    int d = (int)ni;
    const ints_attr *per[3] = {&s->strides, &s->dilations, &s->pads};
    for (int i = 0; i < 3; ++i)
        if (per[i]->has && per[i]->n != (size_t)(i == 2 ? 2 * d : d))
            return sb_infer_fail(I, SB_ERR_VALUE, "%s must have %d values", i == 0 ? "strides"
                                 : i == 1 ? "dilations" : "pads", i == 2 ? 2 * d : d);
    if (x->info.rank != 3)
        return sb_infer_fail(I, SB_ERR_VALUE, "input must be 3-D (N, C * prod(block_shape), L)");
    memset(a, 0, sizeof *a);
    a->dims = d, a->n = x->info.dims[0];
    int64_t K = 1, L = 1;
    for (int i = 0; i < d; ++i) {
        int64_t st = s->strides.has ? s->strides.v[i] : 1, dl = s->dilations.has ? s->dilations.v[i] : 1;
        int64_t pb = s->pads.has ? s->pads.v[i] : 0, pe = s->pads.has ? s->pads.v[d + i] : 0;
        int64_t lim = (int64_t)1 << 40;
        if (image[i] < 1 || block[i] < 1 || st < 1 || dl < 1 || pb < 0 || pe < 0 || image[i] > lim ||
            block[i] > lim || st > lim || dl > lim || pb > lim || pe > lim)
            return sb_infer_fail(I, SB_ERR_VALUE, "image_shape, block_shape, strides and dilations must "
                                 "be positive and pads non-negative (at most 2**40)");
        int64_t span = image[i] + pb + pe - ((block[i] - 1) * dl + 1);
        if (span < 0) return sb_infer_fail(I, SB_ERR_VALUE, "the block is larger than the padded image");
        a->image[i] = image[i], a->block[i] = block[i], a->grid[i] = span / st + 1;
        a->stride[i] = st, a->dilation[i] = dl, a->pad_begin[i] = pb;
        K *= block[i], L *= a->grid[i];
        if (K > lim || L > lim) return sb_infer_fail(I, SB_ERR_VALUE, "too many blocks");
    }
    if (x->info.dims[1] % K || x->info.dims[2] != L)
        return sb_infer_fail(I, SB_ERR_VALUE, "input's dimension 1 must be a multiple of prod(block_shape) "
                             "= %lld and dimension 2 the number of blocks, %lld", (long long)K, (long long)L);
    a->c = x->info.dims[1] / K;
    return SB_OK;
}

static int col2im_infer(sb_infer_ctx *I)
{
    sb_col2im_args a;
    int status = col2im_args(I, &a);
    if (status) return status;
    sb_vinfo *y = &I->out[0];
    memset(y, 0, sizeof *y);
    y->dtype = SB_DT_FLOAT, y->rank = 2 + a.dims;
    y->dims[0] = a.n, y->dims[1] = a.c;
    for (int i = 0; i < a.dims; ++i) y->dims[2 + i] = a.image[i];
    if (y->rank > SB_MAX_RANK) return sb_infer_fail(I, SB_ERR_VALUE, "too many axes");
    return SB_OK;
}

static int col2im_run(sb_run_ctx *R)
{
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    sb_col2im_args a;
    int status = col2im_args(&I, &a);
    if (status) return status;
    sb_col2im(&a, R->in[0]->data, R->out[0]->data);
    return SB_OK;
}

const sb_op_def sb_op_Col2Im = {
    .name = "Col2Im", .load = col2im_load, .infer = col2im_infer, .run = col2im_run};
