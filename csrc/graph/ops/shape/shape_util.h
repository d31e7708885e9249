/* ONNX operators: shapes, constants, casts and data movement (Shape, Size,
 * Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout, Constant,
 * ConstantOfShape, Cast, CastLike, Range, Concat, Split, Slice, Transpose,
 * DepthToSpace, SpaceToDepth, Gather, Expand, Tile, Pad), as docs/onnx.md
 * defines them. Views are
 * SB_OP_VIEW: their output is their input's bytes under a new shape. Data
 * movement copies elements of every size as bits (NaN payloads kept).
 *
 * This header: the helpers the family's files (graph/ops/shape/) share,
 * static inline. */
#ifndef SB_GRAPH_OPS_SHAPE_SHAPE_UTIL_H
#define SB_GRAPH_OPS_SHAPE_SHAPE_UTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"

/* ---- helpers of the ops below ------------------------------------------------------ */

#define LIST_CAP 64              /* values of an int-list input read at plan time */
#define WALK_RANK (2 * SB_MAX_RANK + 1)

static inline const char *shape_str(const sb_vinfo *v, char *buf, size_t size)
{
    sb_shape_text(v, buf, size);
    return buf;
}

/* An element type's name as Python's runner writes it (the number for an unknown one). */
static inline const char *dtype_text(int dtype, char *buf, size_t size)
{
    const char *name = sb_dtype_name(dtype);
    if (strcmp(name, "unknown") == 0 || dtype == 0) {
        snprintf(buf, size, "%d", dtype);
        return buf;
    }
    return name;
}

/* a * b for non-negative sizes; 0 on overflow (beyond SB_MAX_ELEMENTS * 2^20). */
static inline int mul_size(int64_t a, int64_t b, int64_t *out)
{
    const int64_t limit = (int64_t)1 << 62;
    if (a < 0 || b < 0) return 0;
    if (a != 0 && b > limit / a) return 0;
    *out = a * b;
    return 1;
}

static inline int64_t prod_dims(const int64_t *dims, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; ++d) n *= dims[d];
    return n;
}

/* An input that has elements but no data yet (not known while planning). */
static inline int lacks_data(const sb_tval *t) { return t && !t->data && sb_vinfo_numel(&t->info) != 0; }

/* sb_infer_int_list, with uint64 values above INT64_MAX kept large (saturated):
 * Python's runner reads them as the unsigned numbers they are. */
static inline int int_list(sb_infer_ctx *I, int i, const char *what, int64_t *v, size_t cap, size_t *n)
{
    int status = sb_infer_int_list(I, i, what, v, cap, n);
    if (status || I->in[i]->info.dtype != SB_DT_UINT64) return status;
    for (size_t k = 0; k < *n; ++k) {
        uint64_t u = sb_int_at_u(I->in[i], (int64_t)k);
        v[k] = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    return SB_OK;
}

/* ONNX axes as Python's normalize_axes: each in [-rank, rank), none twice. */
static inline int norm_axes(sb_infer_ctx *I, const int64_t *axes, size_t n, int rank, const char *what,
                     int *out)
{
    for (size_t k = 0; k < n; ++k) {
        int status = sb_infer_axis(I, axes[k], rank, what, &out[k]);
        if (status) return status;
    }
    for (size_t k = 0; k < n; ++k)
        for (size_t j = 0; j < k; ++j)
            if (out[j] == out[k]) {
                char b[600];
                return sb_infer_fail(I, SB_ERR_VALUE, "%s %s repeats an axis", what,
                                     sb_py_list_text(axes, n, b, sizeof b));
            }
    return SB_OK;
}

/* A strided copy of any rank up to WALK_RANK - 1 (sb_k_copy's walk holds 15
 * merged dimensions for 8-byte elements): neighbours merged, the leading
 * dimensions beyond that looped over here. */
static inline int copy_any(int threads, int rank, const int64_t *shape_in, int size, const void *x,
                    const int64_t *xs_in, void *y, const int64_t *ys_in)
{
    int64_t shape[WALK_RANK], xs[WALK_RANK], ys[WALK_RANK];
    for (int d = 0; d < rank; ++d) {
        if (shape_in[d] == 0) return SB_OK;
        shape[d] = shape_in[d], xs[d] = xs_in[d], ys[d] = ys_in[d];
    }
    int64_t *strides[2] = {xs, ys};
    rank = sb_merge_walk(rank, shape, 2, strides);
    const int inner = SB_MAX_BATCH_DIMS - 1;
    if (rank <= inner) return sb_k_copy(threads, rank, shape, size, x, xs, y, ys);
    int lead = rank - inner;
    int64_t idx[WALK_RANK] = {0};
    int64_t count = prod_dims(shape, 0, lead);
    for (int64_t i = 0; i < count; ++i) {
        int64_t ox = 0, oy = 0;
        for (int d = 0; d < lead; ++d) ox += idx[d] * xs[d], oy += idx[d] * ys[d];
        int status = sb_k_copy(threads, inner, shape + lead, size, (const uint8_t *)x + ox * size,
                               xs + lead, (uint8_t *)y + oy * size, ys + lead);
        if (status) return status;
        for (int d = lead - 1; d >= 0; --d) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    return SB_OK;
}

/* y (dense, C order) = x seen as `dims` (rank dims, C order) with its axes
 * permuted: y's dim d is that view's dim perm[d]. */
static inline int permute_view(int threads, int size, int rank, const int64_t *dims, const int *perm,
                        const void *x, void *y)
{
    int64_t own[WALK_RANK], xs[WALK_RANK], ys[WALK_RANK], shape[WALK_RANK];
    int64_t step = 1;
    for (int d = rank - 1; d >= 0; --d) own[d] = step, step *= dims[d] > 0 ? dims[d] : 1;
    for (int d = 0; d < rank; ++d) shape[d] = dims[perm[d]], xs[d] = own[perm[d]];
    step = 1;
    for (int d = rank - 1; d >= 0; --d) ys[d] = step, step *= shape[d] > 0 ? shape[d] : 1;
    return copy_any(threads, rank, shape, size, x, xs, y, ys);
}

/* Fills the infos of outputs a node leaves out (the planner sizes every one). */
static inline void fill_unused_outputs(sb_infer_ctx *I, int from)
{
    for (int j = from; j < I->n_out; ++j) {
        if (I->out[j].dtype) continue;
        memset(&I->out[j], 0, sizeof I->out[j]);
        I->out[j].dtype = SB_DT_BOOL;
        I->out[j].rank = 1;
        I->out[j].dims[0] = 0;
    }
}

/* An int-list attribute kept in the state (at most LIST_CAP values). */
typedef struct { int has; size_t n; int64_t v[LIST_CAP]; } ints_attr;

static inline int read_ints_attr(sb_load_ctx *L, const char *name, int required, ints_attr *out)
{
    const int64_t *v = NULL;
    size_t n = 0;
    out->has = sb_attr_ints(L, name, &v, &n);
    if (L->status) return L->status;
    if (!out->has) {
        if (required) return sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute '%s' is required", name);
        return SB_OK;
    }
    if (n > LIST_CAP)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute '%s' has %zu values, at most %d are "
                            "supported", name, n, LIST_CAP);
    out->n = n;
    if (n) memcpy(out->v, v, n * sizeof *v);
    return SB_OK;
}

typedef struct { int64_t axis; } axis_state;   /* one axis attribute (Gather and Flatten read it through .int_attrs) */

#endif
