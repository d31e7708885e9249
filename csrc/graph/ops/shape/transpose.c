/* ONNX Transpose (docs/onnx.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

typedef struct { ints_attr perm; } transpose_state;

static int transpose_load(sb_load_ctx *L)
{
    transpose_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    read_ints_attr(L, "perm", 0, &s->perm);
    return L->status;
}

static int transpose_perm(sb_infer_ctx *I, int rank, int *perm)
{
    const transpose_state *s = I->state;
    if (!s->perm.has) {
        for (int d = 0; d < rank; ++d) perm[d] = rank - 1 - d;
        return SB_OK;
    }
    int ok = s->perm.n == (size_t)rank;
    unsigned char seen[SB_MAX_RANK] = {0};
    for (int d = 0; d < rank && ok; ++d) {
        int64_t p = s->perm.v[d];
        ok = p >= 0 && p < rank && !seen[p];
        if (ok) seen[p] = 1, perm[d] = (int)p;
    }
    if (!ok) {
        char b[600];
        return sb_infer_fail(I, SB_ERR_VALUE, "perm %s is not a permutation of %d axes",
                             sb_py_list_text(s->perm.v, s->perm.n, b, sizeof b), rank);
    }
    return SB_OK;
}

static int transpose_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    int perm[SB_MAX_RANK];
    int status = transpose_perm(I, x->info.rank, perm);
    if (status) return status;
    I->out[0] = x->info;
    for (int d = 0; d < x->info.rank; ++d) I->out[0].dims[d] = x->info.dims[perm[d]];
    return SB_OK;
}

static int transpose_run(sb_run_ctx *R)
{
    sb_infer_ctx I;
    sb_vinfo outs[16];
    sb_infer_from_run(R, &I, outs);
    const sb_tval *x = R->in[0];
    int perm[SB_MAX_RANK];
    int status = transpose_perm(&I, x->info.rank, perm);
    if (status) return status;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    status = permute_view(R->threads, sb_dtype_size(x->info.dtype), x->info.rank, x->info.dims, perm,
                          x->data, R->out[0]->data);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

const sb_op_def sb_op_Transpose = {
    .name = "Transpose", .load = transpose_load, .infer = transpose_infer, .run = transpose_run};
