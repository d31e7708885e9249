/* ONNX Det (docs/onnx.md): the determinants of the last two axes' square
 * matrices, kernels/det.c (binary64 elimination, rounded once). */
#include "graph/op.h"
#include "kernels/det.h"

static int det_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_float(I, 0, "X");
    if (!x) return SB_ERR_TYPE;
    int r = x->info.rank;
    if (r < 2 || x->info.dims[r - 1] != x->info.dims[r - 2])
        return sb_infer_fail(I, SB_ERR_VALUE, "X must be (..., M, M)");
    if (x->info.dims[r - 1] > 4096)
        return sb_infer_fail(I, SB_ERR_VALUE, "matrices above 4096 x 4096 are not supported");
    I->out[0] = x->info;
    I->out[0].rank = r - 2;
    int64_t n = x->info.dims[r - 1];
    I->workspace = 8 * (n * n + 1);
    I->inplace = -1;
    return SB_OK;
}

static int det_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    int r = x->info.rank;
    int64_t n = x->info.dims[r - 1], count = sb_vinfo_numel(&R->out[0]->info);
    sb_det(x->data, count, n, R->workspace, R->out[0]->data);
    return SB_OK;
}

const sb_op_def sb_op_Det = {.name = "Det", .infer = det_infer, .run = det_run};
