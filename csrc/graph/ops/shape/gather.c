/* ONNX Gather (docs/onnx.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

static int gather_infer(sb_infer_ctx *I)
{
    const axis_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    const sb_tval *idx = sb_infer_int(I, 1, "indices");
    if (!idx) return SB_ERR_TYPE;
    int r = x->info.rank, a;
    int status = sb_infer_axis(I, s->axis, r, "axis", &a);
    if (status) return status;
    if (r == 0) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
    int rank = r - 1 + idx->info.rank;
    if (rank > SB_MAX_RANK)
        return sb_infer_fail(I, SB_ERR_VALUE, "the output's rank %d is above %d", rank, SB_MAX_RANK);
    sb_vinfo *y = &I->out[0];
    y->dtype = x->info.dtype;
    y->rank = rank;
    int at = 0;
    for (int d = 0; d < a; ++d) y->dims[at++] = x->info.dims[d];
    for (int d = 0; d < idx->info.rank; ++d) y->dims[at++] = idx->info.dims[d];
    for (int d = a + 1; d < r; ++d) y->dims[at++] = x->info.dims[d];
    return SB_OK;
}

static int gather_run(sb_run_ctx *R)
{
    const axis_state *s = R->state;
    const sb_tval *x = R->in[0], *idx = R->in[1];
    sb_tval *y = R->out[0];
    int r = x->info.rank;
    int a = (int)(s->axis < 0 ? s->axis + r : s->axis);
    int64_t size = x->info.dims[a], count = sb_vinfo_numel(&idx->info);
    int is_u64 = idx->info.dtype == SB_DT_UINT64;
    for (int64_t k = 0; k < count; ++k) {
        int64_t i = sb_int_at(idx, k);
        int bad = is_u64 ? sb_int_at_u(idx, k) >= (uint64_t)size : (i < -size || i >= size);
        if (bad) {
            if (is_u64)
                return sb_run_fail(R, SB_ERR_INDEX, "index %llu is out of range for axis %d of size "
                                   "%lld", (unsigned long long)sb_int_at_u(idx, k), a, (long long)size);
            return sb_run_fail(R, SB_ERR_INDEX, "index %lld is out of range for axis %d of size %lld",
                               (long long)i, a, (long long)size);
        }
    }
    if (sb_vinfo_numel(&y->info) == 0) return SB_OK;
    int esize = sb_dtype_size(x->info.dtype);
    int64_t outer = prod_dims(x->info.dims, 0, a), inner = prod_dims(x->info.dims, a + 1, r);
    size_t block = (size_t)(inner * esize);
    const uint8_t *src = x->data;
    uint8_t *dst = y->data;
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < count; ++k) {
            int64_t i = sb_int_at(idx, k);
            if (i < 0) i += size;
            memcpy(dst, src + (o * size + i) * (int64_t)block, block);
            dst += block;
        }
    return SB_OK;
}

const sb_op_def sb_op_Gather = {
    .name = "Gather", .int_attrs = {{"axis", 0}}, .infer = gather_infer, .run = gather_run};
