/* ONNX Slice (docs/onnx.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

typedef struct { int opset; ints_attr starts, ends, axes; } slice_state;

static int slice_load(sb_load_ctx *L)
{
    slice_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->opset = L->opset;
    if (L->opset < 10) {
        if (read_ints_attr(L, "starts", 1, &s->starts)) return L->status;
        if (read_ints_attr(L, "ends", 1, &s->ends)) return L->status;
        if (read_ints_attr(L, "axes", 0, &s->axes)) return L->status;
    }
    return L->status;
}

/* ONNX Slice's clamping on a dimension of `size` (Python's slice_bounds). */
static void slice_bounds(int64_t size, int64_t start, int64_t end, int64_t step, int64_t *first,
                         int64_t *count)
{
    if (start < 0) start += size;
    if (end < 0) end += size;
    if (step > 0) {
        start = start < 0 ? 0 : start > size ? size : start;
        end = end < 0 ? 0 : end > size ? size : end;
        *count = end > start ? (int64_t)((uint64_t)(end - start - 1) / (uint64_t)step) + 1 : 0;
    } else {
        start = start < -1 ? -1 : start > size - 1 ? size - 1 : start;
        end = end < -1 ? -1 : end > size - 1 ? size - 1 : end;
        uint64_t back = (uint64_t)0 - (uint64_t)step;
        *count = start > end ? (int64_t)((uint64_t)(start - end - 1) / back) + 1 : 0;
    }
    *first = start;
}

/* Per dimension of x: the first index, the count and the step. */
static int slice_params(sb_infer_ctx *I, const sb_tval *x, int64_t *first, int64_t *counts,
                        int64_t *steps)
{
    const slice_state *s = I->state;
    int64_t st[LIST_CAP], en[LIST_CAP], ax[LIST_CAP], sp[LIST_CAP];
    size_t ns = 0, ne = 0, na = 0, nk = 0;
    int has_axes = 0, has_steps = 0, status;
    if (s->opset < 10) {
        ns = s->starts.n, ne = s->ends.n;
        memcpy(st, s->starts.v, ns * sizeof *st);
        memcpy(en, s->ends.v, ne * sizeof *en);
        if ((has_axes = s->axes.has)) na = s->axes.n, memcpy(ax, s->axes.v, na * sizeof *ax);
    } else {
        if ((status = int_list(I, 1, "starts", st, LIST_CAP, &ns))) return status;
        if ((status = int_list(I, 2, "ends", en, LIST_CAP, &ne))) return status;
        if (I->n_in > 3 && I->in[3]) {
            has_axes = 1;
            if ((status = int_list(I, 3, "axes", ax, LIST_CAP, &na))) return status;
        }
        if (I->n_in > 4 && I->in[4]) {
            has_steps = 1;
            if ((status = int_list(I, 4, "steps", sp, LIST_CAP, &nk))) return status;
        }
    }
    if (!has_axes) {
        na = ns;
        for (size_t k = 0; k < ns; ++k) ax[k] = (int64_t)k;
    }
    if (!has_steps) {
        nk = ns;
        for (size_t k = 0; k < ns; ++k) sp[k] = 1;
    }
    if (ns != ne || ns != na || ns != nk)
        return sb_infer_fail(I, SB_ERR_VALUE, "starts, ends, axes and steps differ in length");
    int r = x->info.rank, idx[LIST_CAP];
    if ((status = norm_axes(I, ax, na, r, "axes", idx))) return status;
    for (int d = 0; d < r; ++d) first[d] = 0, counts[d] = x->info.dims[d], steps[d] = 1;
    for (size_t k = 0; k < ns; ++k) {
        if (sp[k] == 0) return sb_infer_fail(I, SB_ERR_VALUE, "a step is 0");
        if (idx[k] >= r) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
        slice_bounds(x->info.dims[idx[k]], st[k], en[k], sp[k], &first[idx[k]], &counts[idx[k]]);
        steps[idx[k]] = sp[k];
    }
    return SB_OK;
}

static int slice_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    int64_t first[SB_MAX_RANK], counts[SB_MAX_RANK], steps[SB_MAX_RANK];
    int status = slice_params(I, x, first, counts, steps);
    if (status) return status;
    I->out[0] = x->info;
    for (int d = 0; d < x->info.rank; ++d) I->out[0].dims[d] = counts[d];
    return SB_OK;
}

static int slice_run(sb_run_ctx *R)
{
    sb_infer_ctx I;
    sb_vinfo outs[16];
    sb_infer_from_run(R, &I, outs);
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    if (sb_vinfo_numel(&y->info) == 0) return SB_OK;
    int64_t first[SB_MAX_RANK], counts[SB_MAX_RANK], steps[SB_MAX_RANK];
    int status = slice_params(&I, x, first, counts, steps);
    if (status) return status;
    int r = x->info.rank, size = sb_dtype_size(x->info.dtype);
    int64_t own[SB_MAX_RANK], xs[SB_MAX_RANK], ys[SB_MAX_RANK], offset = 0;
    sb_c_strides(&x->info, own);
    sb_c_strides(&y->info, ys);
    for (int d = 0; d < r; ++d) {
        offset += first[d] * own[d];
        xs[d] = counts[d] > 1 ? own[d] * steps[d] : 0;
    }
    status = copy_any(R->threads, r, y->info.dims, size, (const uint8_t *)x->data + offset * size,
                      xs, y->data, ys);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

const sb_op_def sb_op_Slice = {
    .name = "Slice", .load = slice_load, .infer = slice_infer, .run = slice_run};
