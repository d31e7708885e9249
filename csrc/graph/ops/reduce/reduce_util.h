/* ONNX operators: reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin,
 * ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, GlobalAveragePool,
 * GlobalMaxPool), CumSum, ArgMax / ArgMin and the normalizations
 * (LayerNormalization, RMSNormalization, BatchNormalization,
 * GroupNormalization, InstanceNormalization, LRN).
 *
 * float32 tensors go through samebits' kernels in the sequence docs/onnx.md
 * writes down (the sequence of the Python runner this core replaced, so the
 * bits are the ones it gave in both modes): a reduction over several axes moves
 * them last (a copy), then one sb_reduce over the merged axis; ReduceMax and
 * ReduceMin fold maximum / minimum (order-free bit for bit: NaN canonical,
 * max(-0, +0) = +0, min = -0), computed here on the bits. Integer tensors
 * are computed here exactly, wrapping like their type.
 *
 * This header: the helpers the family's files (graph/ops/reduce/) share,
 * static inline. */
#ifndef SB_GRAPH_OPS_REDUCE_REDUCE_UTIL_H
#define SB_GRAPH_OPS_REDUCE_REDUCE_UTIL_H

#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "framework/step.h"
#include "isa/unary.h"
#include "kernels/row_extreme.h"

#define CANONICAL_NAN 0x7FC00000u
#define MAX_AXES 64              /* axes given as an input: at most this many values */

/* ---- small helpers ------------------------------------------------------------ */

static inline size_t align64(int64_t bytes) { return bytes <= 0 ? 0 : ((size_t)bytes + 63) & ~(size_t)63; }

/* The normalizations' state (batch_norm.c, and batch_norm_training.c for
 * BatchNormalization in training mode). */
typedef struct { float eps; int64_t groups; int opset; float momentum; } norm_state;

static inline uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* A required input (Python's `required`). */
static inline const sb_tval *need_input(sb_infer_ctx *I, int i)
{
    if (i >= I->n_in || !I->in[i]) {
        sb_infer_fail(I, SB_ERR_VALUE, "a required input is missing (its name in the node's "
                      "inputs is empty)");
        return NULL;
    }
    return I->in[i];
}

/* A float32 input (Python's `need_floats`). */
static inline const sb_tval *need_float(sb_infer_ctx *I, int i, const char *what)
{
    const sb_tval *t = i < I->n_in ? I->in[i] : NULL;
    if (!t) {
        sb_infer_fail(I, SB_ERR_VALUE, "input %s is missing", what);
        return NULL;
    }
    if (t->info.dtype != SB_DT_FLOAT) {
        sb_infer_fail(I, SB_ERR_TYPE, "input %s must be float32, got %s", what,
                      sb_dtype_name(t->info.dtype));
        return NULL;
    }
    return t;
}

/* An integer input (Python's `need_ints`). */
static inline const sb_tval *need_int(sb_infer_ctx *I, int i, const char *what)
{
    const sb_tval *t = i < I->n_in ? I->in[i] : NULL;
    if (!t) {
        sb_infer_fail(I, SB_ERR_VALUE, "input %s is missing", what);
        return NULL;
    }
    if (!sb_dtype_is_int(t->info.dtype)) {
        sb_infer_fail(I, SB_ERR_TYPE, "input %s must be an integer tensor, got %s", what,
                      sb_dtype_name(t->info.dtype));
        return NULL;
    }
    return t;
}

static inline int64_t prod_dims(const int64_t *dims, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; ++d) n *= dims[d];
    return n;
}

/* A float32 tensor over data with info's shape. */
static inline sb_tval ftensor(const sb_vinfo *shape, void *data)
{
    sb_tval t;
    t.info = *shape;
    t.info.dtype = SB_DT_FLOAT;
    t.data = data;
    return t;
}

static inline sb_tval ftensor1(int64_t n, void *data)
{
    sb_tval t;
    memset(&t.info, 0, sizeof t.info);
    t.info.dtype = SB_DT_FLOAT;
    t.info.rank = 1;
    t.info.dims[0] = n;
    t.data = data;
    return t;
}

/* y = op(a, b) over `shape` with a and b at element strides (y dense). */
static inline int bin_strided(const sb_run_ctx *R, int op, int rank, const int64_t *shape_in,
                       const float *a, const int64_t *as_in, const float *b,
                       const int64_t *bs_in, float *y)
{
    int64_t shape[SB_MAX_RANK], as[SB_MAX_RANK], bs[SB_MAX_RANK], ys[SB_MAX_RANK];
    int64_t step = 1;
    for (int d = rank - 1; d >= 0; --d) {
        shape[d] = shape_in[d], as[d] = as_in[d], bs[d] = bs_in[d], ys[d] = step;
        if (shape[d] == 0) return SB_OK;
        step *= shape[d];
    }
    int64_t *strides[3] = {as, bs, ys};
    rank = sb_merge_walk(rank, shape, 3, strides);
    sb_binary_args args;
    memset(&args, 0, sizeof args);
    args.path = R->path, args.mode = R->mode, args.op = op, args.max_threads = R->threads;
    args.ndim = rank;
    for (int d = 0; d < rank; ++d)
        args.shape[d] = shape[d], args.a_stride[d] = as[d], args.b_stride[d] = bs[d];
    args.a = (int64_t)(intptr_t)a, args.b = (int64_t)(intptr_t)b, args.y = (int64_t)(intptr_t)y;
    return sb_binary(&args);
}

static inline int kfail(sb_run_ctx *R, int status, const char *what)
{
    return status ? sb_run_fail(R, status, "%s failed (status %d)", what, status) : SB_OK;
}

/* One sb_reduce (sum, mean or layer_norm) of x as (outer, n, inner). */
static inline int k_reduce(sb_run_ctx *R, int op, int64_t outer, int64_t n, int64_t inner, const void *x,
                    void *y, const void *weight, const void *bias, float eps)
{
    sb_reduce_args a;
    memset(&a, 0, sizeof a);
    a.path = R->path, a.mode = R->mode, a.op = op, a.max_threads = R->threads;
    a.outer = outer, a.n = n, a.inner = inner;
    a.x = (int64_t)(intptr_t)x, a.y = (int64_t)(intptr_t)y;
    a.weight = (int64_t)(intptr_t)weight, a.bias = (int64_t)(intptr_t)bias;
    a.eps = op == 4 ? (int64_t)f2u(eps) : 0;
    return kfail(R, sb_reduce(&a), "sb_reduce");
}

/* Whether bits are a NaN's (any payload): on the bits, so that the
 * caller's floating-point environment plays no part. */
static inline int is_nan_bits(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }

/* The arg functions' order: -0 and +0 equal. */
static inline int64_t order_key(uint32_t b)
{
    int64_t m = (int64_t)(b & 0x7FFFFFFFu);
    return (b & 0x80000000u) ? -m : m;
}

/* Rows of n values folded with maximum or minimum into one value each
 * (kernels/row_extreme.h). */
typedef struct {
    const uint32_t *x;
    uint32_t *y;
    int64_t rows, n;
    int is_max;
    sb_step_plan plan;            /* units: rows */
} fold_job;

static inline void fold_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const fold_job *job = ctx;
    size_t first, end;
    sb_step_units(&job->plan, chunk, &first, &end);
    int64_t r0 = (int64_t)first, r1 = (int64_t)end;
    int64_t n = job->n;
    for (int64_t r = r0; r < r1; ++r) {
        const uint32_t *row = job->x + r * n;
        if (n == 1) {   /* a copy: the bits as they are */
            job->y[r] = row[0];
            continue;
        }
        job->y[r] = sb_row_extreme((const float *)(const void *)row, (size_t)n, job->is_max);
    }
}

typedef struct { int64_t axis; float eps; } axis_eps_state;
static inline void trailing_shape(const sb_vinfo *x, int a, sb_vinfo *norm)
{
    memset(norm, 0, sizeof *norm);
    norm->dtype = SB_DT_FLOAT;
    for (int d = a; d < x->rank; ++d) norm->dims[norm->rank++] = x->dims[d];
}

/* The index of the largest (is_max) or smallest of n float32 values (their
 * bits) at stride `stride`: NaN above every number, the first such (the
 * last with `last`); among equal values the first (the last with `last`);
 * -0 and +0 equal. ArgMax, ArgMin and Hardmax. */
static inline int64_t float_arg_extreme(const uint32_t *v, int64_t n, int64_t stride, int is_max, int last)
{
    int64_t best = 0;
    uint32_t b = v[0];
    for (int64_t j = 0; j < n; ++j) {
        uint32_t c = v[j * stride];
        if (is_nan_bits(c)) {   /* NaN wins: the first, or the last with select_last_index */
            if (!is_nan_bits(b) || last) best = j, b = c;
            continue;
        }
        if (is_nan_bits(b)) continue;
        int64_t kc = order_key(c), kb = order_key(b);
        int better = is_max ? kc > kb : kc < kb;
        if (better || (last && kc == kb)) best = j, b = c;
    }
    return best;
}

#endif
