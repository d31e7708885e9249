/* ONNX NonZero (docs/onnx.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "graph/ops/index/index_util.h"

static int nonzero_flag(const sb_tval *x, int64_t i)
{
    if (x->info.dtype == SB_DT_FLOAT) return (((const uint32_t *)x->data)[i] & 0x7FFFFFFFu) != 0;
    switch (sb_dtype_size(x->info.dtype)) {
    case 1: return ((const uint8_t *)x->data)[i] != 0;
    case 2: return ((const uint16_t *)x->data)[i] != 0;
    case 4: return ((const uint32_t *)x->data)[i] != 0;
    default: return ((const uint64_t *)x->data)[i] != 0;
    }
}

static int nonzero_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "X");
    if (!x) return SB_ERR_VALUE;
    int64_t n = sb_vinfo_numel(&x->info), count = 0;
    if (n > 0 && !x->data) return SB_NEEDS_VALUES;
    for (int64_t i = 0; i < n; ++i) count += nonzero_flag(x, i);
    I->out[0].dtype = SB_DT_INT64;
    I->out[0].rank = 2;
    I->out[0].dims[0] = x->info.rank ? x->info.rank : 1;
    I->out[0].dims[1] = count;
    return SB_OK;
}

static int nonzero_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    int64_t *y = R->out[0]->data;
    int64_t n = sb_vinfo_numel(&x->info), count = R->out[0]->info.dims[1], hit = 0;
    int rank = x->info.rank;
    int64_t coord[SB_MAX_RANK] = {0}, unused = 0, zero[SB_MAX_RANK] = {0};
    for (int64_t i = 0; i < n && hit < count; ++i) {
        if (nonzero_flag(x, i)) {
            for (int d = 0; d < rank; ++d) y[d * count + hit] = coord[d];
            if (rank == 0) y[hit] = 0;
            ++hit;
        }
        odometer(rank, x->info.dims, coord, zero, &unused);
    }
    return SB_OK;
}

const sb_op_def sb_op_NonZero = {.name = "NonZero", .infer = nonzero_infer, .run = nonzero_run};
