/* ONNX Expand and Tile (docs/onnx.md): broadcast and repeated copies. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

static int expand_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    int64_t target[LIST_CAP];
    size_t n;
    int status = int_list(I, 1, "shape", target, LIST_CAP, &n);
    if (status) return status;
    if (n > SB_MAX_RANK)
        return sb_infer_fail(I, SB_ERR_VALUE, "shape has %zu dimensions, at most %d are supported", n,
                             SB_MAX_RANK);
    sb_vinfo t;
    memset(&t, 0, sizeof t);
    t.rank = (int)n;
    for (size_t k = 0; k < n; ++k) t.dims[k] = target[k];
    const sb_vinfo *shapes[2] = {&x->info, &t};
    sb_vinfo *y = &I->out[0];
    status = sb_infer_broadcast(I, shapes, 2, y);
    if (status) return status;
    for (int d = 0; d < y->rank; ++d)
        if (y->dims[d] < 0)
            return sb_infer_fail(I, SB_ERR_VALUE, "negative dimensions are not allowed");
    y->dtype = x->info.dtype;
    return SB_OK;
}

static int expand_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    if (sb_vinfo_numel(&y->info) == 0) return SB_OK;
    int64_t xs[SB_MAX_RANK], ys[SB_MAX_RANK];
    sb_broadcast_strides(&x->info, &y->info, xs);
    sb_c_strides(&y->info, ys);
    int status = copy_any(R->threads, y->info.rank, y->info.dims, sb_dtype_size(y->info.dtype), x->data,
                          xs, y->data, ys);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

static int tile_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    int64_t reps[LIST_CAP];
    size_t n;
    int status = int_list(I, 1, "repeats", reps, LIST_CAP, &n);
    if (status) return status;
    int r = x->info.rank, bad = n != (size_t)r;
    for (size_t k = 0; k < n && !bad; ++k) bad = reps[k] < 0;
    if (bad) {
        char b[600];
        return sb_infer_fail(I, SB_ERR_VALUE, "repeats %s do not match rank %d",
                             sb_py_list_text(reps, n, b, sizeof b), r);
    }
    I->out[0] = x->info;
    for (int d = 0; d < r; ++d)
        if (!mul_size(reps[d], x->info.dims[d], &I->out[0].dims[d]))
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
    return SB_OK;
}

static int tile_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    if (sb_vinfo_numel(&y->info) == 0) return SB_OK;
    /* an expand over interleaved (repeat, dim) axes */
    int r = x->info.rank;
    int64_t own[SB_MAX_RANK], shape[WALK_RANK], xs[WALK_RANK], ys[WALK_RANK];
    sb_c_strides(&x->info, own);
    for (int d = 0; d < r; ++d) {
        shape[2 * d] = x->info.dims[d] ? y->info.dims[d] / x->info.dims[d] : 0;
        shape[2 * d + 1] = x->info.dims[d];
        xs[2 * d] = 0, xs[2 * d + 1] = own[d];
    }
    int64_t step = 1;
    for (int d = 2 * r - 1; d >= 0; --d) ys[d] = step, step *= shape[d];
    int status = copy_any(R->threads, 2 * r, shape, sb_dtype_size(x->info.dtype), x->data, xs,
                          y->data, ys);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

const sb_op_def sb_op_Expand = {.name = "Expand", .infer = expand_infer, .run = expand_run};
const sb_op_def sb_op_Tile = {.name = "Tile", .infer = tile_infer, .run = tile_run};
