/* The ONNX reductions (docs/onnx.md): ReduceSum, ReduceMean, ReduceMax,
 * ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum,
 * ReduceLogSumExp, GlobalAveragePool and GlobalMaxPool. */
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "framework/step.h"
#include "isa/unary.h"
#include "graph/ops/reduce/reduce_util.h"
#include "kernels/int_reduce.h"

enum { RK_SUM, RK_MEAN, RK_MAX, RK_MIN, RK_PROD, RK_SUMSQ, RK_L1, RK_L2, RK_GAP, RK_GMP, RK_LOGSUM,
       RK_LOGSUMEXP };

static const char *const REDUCE_NAMES[] = {
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
    "ReduceL1", "ReduceL2", "GlobalAveragePool", "GlobalMaxPool", "ReduceLogSum", "ReduceLogSumExp",
};

typedef struct {
    int kind;                 /* RK_* */
    int64_t keepdims, noop;
    int from_input;           /* axes as input 1 (opset 13 for ReduceSum, 18 for the others) */
    int has_attr;             /* axes as an attribute (before that) */
    size_t n_attr;
    int64_t attr[];           /* the attribute's axes */
} reduce_state;

/* What a node reduces for an input's shape. */
typedef struct {
    int identity;             /* noop_with_empty_axes with no axes: the input unchanged */
    int rank;
    unsigned char red[SB_MAX_RANK];
    sb_vinfo out;             /* the output's shape (and dtype) */
    int64_t outer, n;         /* kept and reduced element counts */
    int permute;              /* the reduced axes are not the trailing ones */
} reduce_geom;

static int reduce_base(int kind) { return kind == RK_GAP ? RK_MEAN : kind == RK_GMP ? RK_MAX : kind; }

static int reduce_load(sb_load_ctx *L)
{
    int kind = -1;
    for (int k = 0; k < (int)(sizeof REDUCE_NAMES / sizeof REDUCE_NAMES[0]); ++k)
        if (!strcmp(REDUCE_NAMES[k], L->node->op_type)) kind = k;
    if (kind < 0) return sb_load_fail(L, SB_ERR_UNSUPPORTED, "not a reduction");
    if (kind == RK_GAP || kind == RK_GMP) {
        reduce_state *s = sb_load_state(L, sizeof *s);
        if (!s) return L->status;
        s->kind = kind;
        return L->status;
    }
    int64_t keepdims = sb_attr_int(L, "keepdims", 1);
    int64_t noop = L->opset >= 13 ? sb_attr_int(L, "noop_with_empty_axes", 0) : 0;
    int from = kind == RK_SUM ? 13 : 18;
    const int64_t *axes = NULL;
    size_t n = 0;
    int has = L->opset < from ? sb_attr_ints(L, "axes", &axes, &n) : 0;
    if (L->status) return L->status;
    reduce_state *s = sb_load_state(L, sizeof *s + n * sizeof(int64_t));
    if (!s) return L->status;
    s->kind = kind, s->keepdims = keepdims, s->noop = noop;
    s->from_input = L->opset >= from;
    s->has_attr = has, s->n_attr = n;
    if (n) memcpy(s->attr, axes, n * sizeof(int64_t));
    return L->status;
}

/* The geometry for x's shape and the axes (null: none given). An error
 * status with its text in msg otherwise. */
static int reduce_geometry(const reduce_state *s, const sb_vinfo *x, const int64_t *axes,
                           size_t count, reduce_geom *g, char *msg, size_t msize)
{
    memset(g, 0, sizeof *g);
    int r = x->rank;
    g->rank = r;
    if (s->kind == RK_GAP || s->kind == RK_GMP) {
        for (int d = 2; d < r; ++d) g->red[d] = 1;
    } else if (!axes || count == 0) {
        if (s->noop) {
            g->identity = 1;
            g->out = *x;
            return SB_OK;
        }
        for (int d = 0; d < r; ++d) g->red[d] = 1;
    } else {
        int norm[MAX_AXES];
        for (size_t i = 0; i < count; ++i) {
            int64_t a = axes[i];
            if (a < -r || a >= (r > 1 ? r : 1)) {
                snprintf(msg, msize, "axes %lld is out of range for rank %d", (long long)a, r);
                return SB_ERR_VALUE;
            }
            norm[i] = r ? (int)((a + r) % r) : 0;
        }
        for (size_t i = 0; i < count; ++i)
            for (size_t j = 0; j < i; ++j)
                if (norm[i] == norm[j]) {
                    char list[512];
                    sb_py_list_text(axes, count, list, sizeof list);
                    snprintf(msg, msize, "axes %s repeats an axis", list);
                    return SB_ERR_VALUE;
                }
        for (size_t i = 0; i < count; ++i)
            if (norm[i] < r) g->red[norm[i]] = 1;
    }
    g->out.dtype = x->dtype;
    g->outer = 1, g->n = 1;
    int seen_red = 0;
    for (int d = 0; d < r; ++d) {
        if (g->red[d]) {
            g->n *= x->dims[d];
            seen_red = 1;
            if (s->kind == RK_GAP || s->kind == RK_GMP || s->keepdims) g->out.dims[g->out.rank++] = 1;
        } else {
            g->outer *= x->dims[d];
            if (seen_red) g->permute = 1;   /* a kept axis after a reduced one */
            g->out.dims[g->out.rank++] = x->dims[d];
        }
    }
    return SB_OK;
}

/* The float32 workspace: the moved copy, the transformed values, L1's negation. */
static int64_t reduce_workspace(int base, const reduce_geom *g, const sb_vinfo *x)
{
    size_t xb = align64(sb_vinfo_bytes(x));
    size_t ws = g->permute ? xb : 0;
    if (base == RK_SUMSQ || base == RK_L2 || base == RK_L1) ws += xb;
    if (base == RK_L1) ws += xb;
    if (base == RK_LOGSUMEXP) ws += xb + align64(g->outer * (int64_t)sizeof(float));
    return (int64_t)ws;
}

static int reduce_infer(sb_infer_ctx *I)
{
    const reduce_state *s = I->state;
    int kind = s->kind, base = reduce_base(kind);
    const char *name = REDUCE_NAMES[base];
    const sb_tval *x;
    if (kind == RK_GAP || kind == RK_GMP) {
        if (!(x = need_float(I, 0, "X"))) return SB_ERR_TYPE;
        if (x->info.rank < 3) {
            char shape[256];
            sb_shape_text(&x->info, shape, sizeof shape);
            return sb_infer_fail(I, SB_ERR_VALUE, "X must be (N, C, ...), got %s", shape);
        }
    } else if (!(x = need_input(I, 0))) {
        return SB_ERR_VALUE;
    }
    int64_t list[MAX_AXES];
    const int64_t *axes = NULL;
    size_t count = 0;
    if (kind != RK_GAP && kind != RK_GMP) {
        if (s->from_input) {
            if (I->n_in > 1 && I->in[1]) {
                int status = sb_infer_int_list(I, 1, "axes", list, MAX_AXES, &count);
                if (status) return status;
                axes = list;
            }
        } else if (s->has_attr) {
            if (s->n_attr > MAX_AXES)
                return sb_infer_fail(I, SB_ERR_VALUE, "axes has %zu values, at most %d are "
                                     "supported", s->n_attr, MAX_AXES);
            axes = s->attr, count = s->n_attr;
        }
    }
    reduce_geom g;
    char msg[640];
    int status = reduce_geometry(s, &x->info, axes, count, &g, msg, sizeof msg);
    if (status) return sb_infer_fail(I, status, "%s", msg);
    I->out[0] = g.out;
    if (g.identity) {
        I->inplace = 0;
        return SB_OK;
    }
    int64_t out_n = sb_vinfo_numel(&g.out), x_n = sb_vinfo_numel(&x->info);
    if (x->info.dtype != SB_DT_FLOAT) {
        if (g.outer > 0 && (base == RK_L2 || base == RK_LOGSUM || base == RK_LOGSUMEXP))
            return sb_infer_fail(I, SB_ERR_TYPE, "%s on integers is not supported", name);
        return SB_OK;
    }
    if (out_n == 0) return SB_OK;
    if (x_n == 0 && kind == RK_GMP)   /* a pool over no position: no value to give */
        return sb_infer_fail(I, SB_ERR_VALUE, "ReduceMax over an empty axis");
    if (x_n == 0) return SB_OK;
    I->workspace = reduce_workspace(base, &g, &x->info);
    return SB_OK;
}

/* Integer reductions: the kernel's (kernels/int_reduce.c), exact, wrapping
 * like the type (the mean: Python's exact sum, then its truncating division). */
static void int_reduce(int base, const sb_tval *x, const reduce_geom *g, sb_tval *y)
{
    static const int ops[] = {
        [RK_SUM] = SB_IRED_SUM, [RK_MEAN] = SB_IRED_MEAN, [RK_MAX] = SB_IRED_MAX,
        [RK_MIN] = SB_IRED_MIN, [RK_PROD] = SB_IRED_PROD, [RK_SUMSQ] = SB_IRED_SUMSQ,
        [RK_L1] = SB_IRED_L1,
    };
    if (g->outer == 0) return;   /* (infer refuses the others on integers when there is an output) */
    int dtype = x->info.dtype;
    sb_int_type type = {sb_dtype_size(dtype), sb_dtype_is_signed(dtype), dtype == SB_DT_BOOL};
    sb_int_reduce(ops[base], type, g->rank, x->info.dims, g->red, x->data, y->data);
}

/* ReduceLogSumExp over rows of n (docs/onnx.md), in float32: m = the
 * largest finite element of the row (0 when it has none; NaN when it holds
 * one), t = exp(x - m), y = log(sum t) + m, each step the kernel of that
 * name (the sum in sb_reduce's order). Subtracting m keeps exp from
 * overflowing; a row of -inf gives -inf and one with +inf gives +inf, as
 * log(sum(exp(x))) does in exact arithmetic. */
static int log_sum_exp(sb_run_ctx *R, const reduce_geom *g, const float *src, uint8_t *ws, sb_tval *y)
{
    int64_t total = g->outer * g->n;
    uint32_t *t = (uint32_t *)ws;
    float *sum = (float *)(ws + align64(total * (int64_t)sizeof(float)));
    const uint32_t *xb = (const uint32_t *)src;
    for (int64_t i = 0; i < total; ++i)   /* infinities out of the max: -inf */
        t[i] = (xb[i] & 0x7FFFFFFFu) == 0x7F800000u ? 0xFF800000u : xb[i];
    fold_job job = {.x = t, .y = y->data, .rows = g->outer, .n = g->n, .is_max = 1};
    size_t per_chunk = sb_units_per_chunk((size_t)g->n, 4 * SB_STEP_CHUNK_ITEMS);
    job.plan = sb_plan_step((size_t)g->outer, per_chunk, (double)total * SB_COST_MOVE);
    sb_run_step(&job.plan, R->threads, fold_chunk, &job);
    uint32_t *m = y->data;
    for (int64_t o = 0; o < g->outer; ++o)
        if (m[o] == 0xFF800000u) m[o] = 0;   /* no finite element */
    sb_tval x2 = ftensor(&(sb_vinfo){SB_DT_FLOAT, 2, {g->outer, g->n}}, (void *)src);
    sb_tval m2 = ftensor(&(sb_vinfo){SB_DT_FLOAT, 2, {g->outer, 1}}, m);
    sb_tval t2 = ftensor(&x2.info, t);
    sb_tval s1 = ftensor1(g->outer, sum), m1 = ftensor1(g->outer, m);
    int status;
    if ((status = sb_k_binary(R, SB_BIN_SUB, &x2, &m2, &t2)) ||
        (status = sb_k_unary(R, SB_OP_EXP, 0.0f, &t2, &t2)))
        return kfail(R, status, "elementwise kernel");
    if ((status = k_reduce(R, 0, g->outer, g->n, 1, t, sum, NULL, NULL, 0.0f))) return status;
    if ((status = sb_k_unary(R, SB_OP_LOG, 0.0f, &s1, &s1))) return kfail(R, status, "sb_unary");
    sb_tval y1 = ftensor1(g->outer, y->data);
    return kfail(R, sb_k_binary(R, SB_BIN_ADD, &s1, &m1, &y1), "sb_binary");
}

/* ReduceMax / ReduceMin of integers over an empty axis: the type's minimum
 * / maximum (bool: false / true, as false < true), ONNX's opset 18 text. */
static int empty_int_extreme(int base, sb_tval *y)
{
    int dt = y->info.dtype, size = sb_dtype_size(dt);
    int64_t n = sb_vinfo_numel(&y->info);
    uint64_t top = size == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * size)) - 1;   /* all ones */
    uint64_t v;
    if (dt == SB_DT_BOOL) v = base == RK_MAX ? 0 : 1;
    else if (sb_dtype_is_signed(dt)) v = base == RK_MAX ? (top >> 1) + 1 : top >> 1;  /* min / max */
    else v = base == RK_MAX ? 0 : top;
    sb_k_fill(y->data, n, size, &v);    /* little-endian: the value's low bytes */
    return SB_OK;
}

static int reduce_run(sb_run_ctx *R)
{
    const reduce_state *s = R->state;
    int kind = s->kind, base = reduce_base(kind);
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int64_t list[MAX_AXES];
    const int64_t *axes = NULL;
    size_t count = 0;
    if (kind != RK_GAP && kind != RK_GMP) {
        if (s->from_input) {
            const sb_tval *a = R->n_in > 1 ? R->in[1] : NULL;
            if (a) {
                int64_t c = sb_vinfo_numel(&a->info);
                if (c < 0 || c > MAX_AXES)
                    return sb_run_fail(R, SB_ERR_VALUE, "too many axes");
                for (int64_t k = 0; k < c; ++k) list[k] = sb_int_at(a, k);
                axes = list, count = (size_t)c;
            }
        } else if (s->has_attr) {
            axes = s->attr, count = s->n_attr;
        }
    }
    reduce_geom g;
    char msg[640];
    int status = reduce_geometry(s, &x->info, axes, count, &g, msg, sizeof msg);
    if (status) return sb_run_fail(R, status, "%s", msg);
    if (g.identity) {
        int64_t bytes = sb_vinfo_bytes(&x->info);
        if (bytes > 0 && y->data != x->data) memcpy(y->data, x->data, (size_t)bytes);
        return SB_OK;
    }
    if (x->info.dtype != SB_DT_FLOAT) {
        if (g.n == 0 && (base == RK_MAX || base == RK_MIN))
            return empty_int_extreme(base, y);
        int_reduce(base, x, &g, y);
        return SB_OK;
    }
    int64_t out_n = sb_vinfo_numel(&y->info), x_n = sb_vinfo_numel(&x->info);
    if (out_n == 0) return SB_OK;
    if (x_n == 0) {   /* an empty axis: sums are +0, products 1, the mean NaN (0 / 0), log(+0) -inf,
                       * the max -inf and the min +inf (ONNX's opset 18 text) */
        uint32_t fill = base == RK_MEAN ? CANONICAL_NAN : base == RK_PROD ? 0x3F800000u
                        : base == RK_LOGSUM || base == RK_LOGSUMEXP || base == RK_MAX ? 0xFF800000u
                        : base == RK_MIN ? 0x7F800000u : 0;
        sb_k_fill(y->data, out_n, 4, &fill);
        return SB_OK;
    }
    uint8_t *ws = R->workspace;
    size_t xb = align64(sb_vinfo_bytes(&x->info));
    const float *src = x->data;
    if (g.permute) {   /* the reduced axes moved last, in order: keep + axes */
        int perm[SB_MAX_RANK], k = 0;
        for (int d = 0; d < g.rank; ++d) if (!g.red[d]) perm[k++] = d;
        for (int d = 0; d < g.rank; ++d) if (g.red[d]) perm[k++] = d;
        sb_tval moved = ftensor(&x->info, ws);
        for (int d = 0; d < g.rank; ++d) moved.info.dims[d] = x->info.dims[perm[d]];
        if ((status = sb_k_permute(R->threads, x, perm, &moved))) return kfail(R, status, "copy");
        src = (const float *)ws;
        ws += xb;
    }
    int64_t total = g.outer * g.n;
    if (base == RK_SUMSQ || base == RK_L2) {
        sb_tval a = ftensor1(total, (void *)src), t = ftensor1(total, ws);
        if ((status = sb_k_binary(R, SB_BIN_MUL, &a, &a, &t))) return kfail(R, status, "sb_binary");
        src = (const float *)ws;
    } else if (base == RK_L1) {   /* |x| = maximum(x, x * -1) */
        sb_tval a = ftensor1(total, (void *)src), t = ftensor1(total, ws + xb);
        sb_tval out = ftensor1(total, ws);
        if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, &a, -1.0f, &t)) ||
            (status = sb_k_binary(R, SB_BIN_MAXIMUM, &a, &t, &out)))
            return kfail(R, status, "sb_binary");
        src = (const float *)ws;
    }
    switch (base) {
    case RK_SUM: case RK_SUMSQ: case RK_L1:
        return k_reduce(R, 0, g.outer, g.n, 1, src, y->data, NULL, NULL, 0.0f);
    case RK_MEAN:
        return k_reduce(R, 1, g.outer, g.n, 1, src, y->data, NULL, NULL, 0.0f);
    case RK_L2: {
        if ((status = k_reduce(R, 0, g.outer, g.n, 1, src, y->data, NULL, NULL, 0.0f))) return status;
        return kfail(R, sb_k_unary(R, SB_OP_SQRT, 0.0f, y, y), "sb_unary");
    }
    case RK_LOGSUM:   /* log(sum x) */
        if ((status = k_reduce(R, 0, g.outer, g.n, 1, src, y->data, NULL, NULL, 0.0f))) return status;
        return kfail(R, sb_k_unary(R, SB_OP_LOG, 0.0f, y, y), "sb_unary");
    case RK_LOGSUMEXP:
        return log_sum_exp(R, &g, src, ws, y);
    case RK_PROD: {   /* per row: p = 1, then p = p * x_j in order, each product rounded */
        float *out = y->data;
        for (int64_t o = 0; o < g.outer; ++o) {
            volatile float p = 1.0f;
            for (int64_t j = 0; j < g.n; ++j) p = p * src[o * g.n + j];
            out[o] = sbt_canonical(p);
        }
        return SB_OK;
    }
    case RK_MAX: case RK_MIN: {
        /* acc = the first element (a copy), then acc = maximum(acc, x_j) for
         * each next j: maximum and minimum are order-free bit for bit, so
         * each row's fold is its total-order extreme (NaN canonical) */
        fold_job job = {.x = (const uint32_t *)src, .y = y->data, .rows = g.outer, .n = g.n,
                        .is_max = base == RK_MAX};
        size_t per_chunk = sb_units_per_chunk((size_t)g.n, 4 * SB_STEP_CHUNK_ITEMS);
        job.plan = sb_plan_step((size_t)g.outer, per_chunk, (double)total * SB_COST_MOVE);
        sb_run_step(&job.plan, R->threads, fold_chunk, &job);
        return SB_OK;
    }
    default:   /* (every kind is handled above) */
        return sb_run_fail(R, SB_ERR_UNSUPPORTED, "the reduction is not supported on float32");
    }
}

const sb_op_def sb_op_ReduceSum = {
    .name = "ReduceSum", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_ReduceMean = {
    .name = "ReduceMean", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_ReduceMax = {
    .name = "ReduceMax", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_ReduceMin = {
    .name = "ReduceMin", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_ReduceProd = {
    .name = "ReduceProd", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_ReduceSumSquare = {
    .name = "ReduceSumSquare", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_ReduceL1 = {
    .name = "ReduceL1", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_ReduceL2 = {
    .name = "ReduceL2", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_ReduceLogSum = {
    .name = "ReduceLogSum", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_ReduceLogSumExp = {
    .name = "ReduceLogSumExp", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_GlobalAveragePool = {
    .name = "GlobalAveragePool", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
const sb_op_def sb_op_GlobalMaxPool = {
    .name = "GlobalMaxPool", .load = reduce_load, .infer = reduce_infer, .run = reduce_run};
