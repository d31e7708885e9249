/* ONNX OneHot (docs/onnx.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "graph/ops/index/index_util.h"

static int one_hot_load(sb_load_ctx *L) { return axis_load(L, -1); }

static int one_hot_indices_finite(sb_infer_ctx *I, const sb_tval *idx)
{
    if (idx->info.dtype != SB_DT_FLOAT || !idx->data) return SB_OK;
    int64_t n = sb_vinfo_numel(&idx->info);
    for (int64_t i = 0; i < n; ++i)
        if (!isfinite(((const float *)idx->data)[i]))
            return sb_infer_fail(I, SB_ERR_VALUE, "indices must be finite");
    return SB_OK;
}

static int one_hot_infer(sb_infer_ctx *I)
{
    const axis_state *s = I->state;
    const sb_tval *idx = sb_infer_input(I, 0, "indices");
    if (!idx) return SB_ERR_VALUE;
    int status = one_hot_indices_finite(I, idx);
    if (status) return status;
    const sb_tval *depth_t = sb_infer_input(I, 1, "depth");
    if (!depth_t) return SB_ERR_VALUE;
    if (sb_vinfo_numel(&depth_t->info) != 1) {
        char ds[256];
        sb_shape_text(&depth_t->info, ds, sizeof ds);
        return sb_infer_fail(I, SB_ERR_VALUE, "depth must hold one value, got shape %s", ds);
    }
    if (!depth_t->data) return SB_NEEDS_VALUES;
    int64_t depth;
    char dtext[64];
    if (depth_t->info.dtype == SB_DT_FLOAT) {
        float f = *(const float *)depth_t->data;
        if (f != f) return sb_infer_fail(I, SB_ERR_VALUE, "cannot convert float NaN to integer");
        if (isinf(f)) return sb_infer_fail(I, SB_ERR_VALUE, "cannot convert float infinity to integer");
        double t = trunc((double)f);
        depth = t >= 9.2e18 ? INT64_MAX : t <= -9.2e18 ? INT64_MIN : (int64_t)t;
        if (t > -9.2e18 && t < 9.2e18) snprintf(dtext, sizeof dtext, "%lld", (long long)depth);
        else snprintf(dtext, sizeof dtext, "%.0f", t);
    } else {
        if (!int_value(depth_t, 0, &depth)) depth = INT64_MAX;
        int_text(depth_t, 0, dtext, sizeof dtext);
    }
    if (depth < 1) return sb_infer_fail(I, SB_ERR_VALUE, "depth=%s must be positive", dtext);
    const sb_tval *pair = sb_infer_input(I, 2, "values");
    if (!pair) return SB_ERR_VALUE;
    if (sb_vinfo_numel(&pair->info) != 2) {
        char ps[256];
        sb_shape_text(&pair->info, ps, sizeof ps);
        return sb_infer_fail(I, SB_ERR_VALUE, "values must hold [off, on], got shape %s", ps);
    }
    int r = idx->info.rank + 1, a;
    if ((status = sb_infer_axis(I, s->axis, r, "axis", &a))) return status;
    if (r > SB_MAX_RANK) return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "the output's rank %d is above %d",
                                              r, SB_MAX_RANK);
    sb_vinfo *y = &I->out[0];
    y->dtype = pair->info.dtype;
    y->rank = r;
    for (int d = 0, k = 0; d < r; ++d) y->dims[d] = d == a ? depth : idx->info.dims[k++];
    if (sb_vinfo_numel(y) < 0) {
        char ys[256];
        sb_shape_text(y, ys, sizeof ys);
        return sb_infer_fail(I, SB_ERR_VALUE, "the output %s is too large", ys);
    }
    return SB_OK;
}

static int one_hot_run(sb_run_ctx *R)
{
    const axis_state *st = R->state;
    const sb_tval *idx = R->in[0], *pair = R->in[2];
    sb_tval *y = R->out[0];
    sb_infer_ctx I = {0};
    I.node = R->node;
    int status = one_hot_indices_finite(&I, idx);
    if (status) return status;
    int r = y->info.rank, a = (int)((st->axis + r) % r);
    int64_t depth = y->info.dims[a], outer = 1, inner = 1;
    for (int d = 0; d < a; ++d) outer *= idx->info.dims[d];
    for (int d = a; d < idx->info.rank; ++d) inner *= idx->info.dims[d];
    int esz = sb_dtype_size(pair->info.dtype);
    int64_t total = sb_vinfo_numel(&y->info);
    for (int64_t i = 0; i < total; ++i) copy_elem(y->data, i, pair->data, 0, esz);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            int64_t at = o * inner + i, v;
            if (idx->info.dtype == SB_DT_FLOAT) {
                float f = ((const float *)idx->data)[at];
                if (!(f > -4.0e18f && f < 4.0e18f)) continue;   /* beyond every depth */
                v = (int64_t)f;   /* toward zero, as int() */
            } else if (!int_value(idx, at, &v)) {
                continue;
            }
            if (v < 0) v += depth;
            if (v >= 0 && v < depth) copy_elem(y->data, (o * depth + v) * inner + i, pair->data, 1, esz);
        }
    return SB_OK;
}

const sb_op_def sb_op_OneHot = {
    .name = "OneHot", .load = one_hot_load, .infer = one_hot_infer, .run = one_hot_run};
