/* ONNX AffineGrid (opset 20; docs/onnx.md): theta (N, 2, 3) or (N, 3, 4)
 * and size (N, C, H, W) or (N, C, D, H, W), whose values the plan needs;
 * the grid (N, [D,] H, W, 2 or 3) by kernels/affine_grid.c. */
#include <string.h>
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"
#include "kernels/affine_grid.h"

typedef struct { int64_t align_corners; } affine_grid_state;   /* .int_attrs */

static int affine_grid_dims(sb_infer_ctx *I, int *dims, int64_t *size)
{
    const sb_tval *theta = sb_infer_float(I, 0, "theta");
    if (!theta) return SB_ERR_TYPE;
    size_t n;
    int status = int_list(I, 1, "size", size, 5, &n);
    if (status) return status;
    if (n != 4 && n != 5) return sb_infer_fail(I, SB_ERR_VALUE, "size must have 4 or 5 values");
    *dims = (int)n - 2;
    int64_t rows = *dims, cols = *dims + 1;
    if (theta->info.rank != 3 || theta->info.dims[0] != size[0] || theta->info.dims[1] != rows ||
        theta->info.dims[2] != cols)
        return sb_infer_fail(I, SB_ERR_VALUE, "theta must be (N, %lld, %lld) with N = size[0] = %lld",
                             (long long)rows, (long long)cols, (long long)size[0]);
    for (size_t i = 0; i < n; ++i)
        if (size[i] < 0 || size[i] > ((int64_t)1 << 40))
            return sb_infer_fail(I, SB_ERR_VALUE, "size must be in [0, 2**40]");
    return SB_OK;
}

static int affine_grid_infer(sb_infer_ctx *I)
{
    int dims;
    int64_t size[5];
    int status = affine_grid_dims(I, &dims, size);
    if (status) return status;
    sb_vinfo *y = &I->out[0];
    memset(y, 0, sizeof *y);
    y->dtype = SB_DT_FLOAT, y->rank = dims + 2;
    y->dims[0] = size[0];
    for (int i = 0; i < dims; ++i) y->dims[1 + i] = size[2 + i];
    y->dims[dims + 1] = dims;
    int64_t total;
    if (sb_vinfo_numel(y) < 0 || !mul_size(sb_vinfo_numel(y), 4, &total))
        return sb_infer_fail(I, SB_ERR_VALUE, "the grid is too large");
    return SB_OK;
}

static int affine_grid_run(sb_run_ctx *R)
{
    const affine_grid_state *s = R->state;
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    int dims;
    int64_t size[5];
    int status = affine_grid_dims(&I, &dims, size);
    if (status) return status;
    int64_t d = dims == 3 ? size[2] : 1, h = size[dims == 3 ? 3 : 2], w = size[dims == 3 ? 4 : 3];
    sb_affine_grid(dims, s->align_corners != 0, size[0], d, h, w, R->in[0]->data, R->out[0]->data);
    return SB_OK;
}

const sb_op_def sb_op_AffineGrid = {
    .name = "AffineGrid", .int_attrs = {{"align_corners", 0}}, .infer = affine_grid_infer,
    .run = affine_grid_run};
