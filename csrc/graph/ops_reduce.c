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
 * are computed here exactly, wrapping like their type. */
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "framework/step.h"
#include "isa/unary.h"

#define CANONICAL_NAN 0x7FC00000u
#define MAX_AXES 64              /* axes given as an input: at most this many values */

/* ---- small helpers ------------------------------------------------------------ */

static size_t align64(int64_t bytes) { return bytes <= 0 ? 0 : ((size_t)bytes + 63) & ~(size_t)63; }

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* A required input (Python's `required`). */
static const sb_tval *need_input(sb_infer_ctx *I, int i)
{
    if (i >= I->n_in || !I->in[i]) {
        sb_infer_fail(I, SB_ERR_VALUE, "a required input is missing (its name in the node's "
                      "inputs is empty)");
        return NULL;
    }
    return I->in[i];
}

/* A float32 input (Python's `need_floats`). */
static const sb_tval *need_float(sb_infer_ctx *I, int i, const char *what)
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
static const sb_tval *need_int(sb_infer_ctx *I, int i, const char *what)
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

static int64_t prod_dims(const int64_t *dims, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; ++d) n *= dims[d];
    return n;
}

/* A float32 tensor over data with info's shape. */
static sb_tval ftensor(const sb_vinfo *shape, void *data)
{
    sb_tval t;
    t.info = *shape;
    t.info.dtype = SB_DT_FLOAT;
    t.data = data;
    return t;
}

static sb_tval ftensor1(int64_t n, void *data)
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
static int bin_strided(const sb_run_ctx *R, int op, int rank, const int64_t *shape_in,
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

static int kfail(sb_run_ctx *R, int status, const char *what)
{
    return status ? sb_run_fail(R, status, "%s failed (status %d)", what, status) : SB_OK;
}

/* One sb_reduce (sum, mean or layer_norm) of x as (outer, n, inner). */
static int k_reduce(sb_run_ctx *R, int op, int64_t outer, int64_t n, int64_t inner, const void *x,
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

/* The bits of maximum / minimum (arith.h's sb_bin_maximum / minimum): NaN
 * if either is NaN (canonical); otherwise the larger (smaller) in IEEE's
 * total order, which puts -0 below +0 as they do. Computed on the bits, so
 * that the caller's floating-point environment plays no part. */
static int is_nan_bits(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }

/* The total-order key of a non-NaN value (its own inverse): negative values'
 * magnitude bits flipped, so that signed integer order is float order with
 * -0 < +0. */
static inline uint32_t total_key(uint32_t b) { return b ^ ((uint32_t)((int32_t)b >> 31) >> 1); }

/* The arg functions' order: -0 and +0 equal. */
static int64_t order_key(uint32_t b)
{
    int64_t m = (int64_t)(b & 0x7FFFFFFFu);
    return (b & 0x80000000u) ? -m : m;
}

/* Rows of n values folded with maximum or minimum into one value each. */
typedef struct {
    const uint32_t *x;
    uint32_t *y;
    int64_t rows, n;
    int is_max;
    sb_step_plan plan;            /* units: rows */
} fold_job;

static void fold_chunk(void *ctx, size_t chunk, int thread_index)
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
        int32_t m = (int32_t)total_key(row[0]);
        uint32_t nan = 0;
        if (job->is_max) {
            for (int64_t j = 0; j < n; ++j) {
                int32_t k = (int32_t)total_key(row[j]);
                m = k > m ? k : m;
                nan |= (row[j] & 0x7FFFFFFFu) > 0x7F800000u;
            }
        } else {
            for (int64_t j = 0; j < n; ++j) {
                int32_t k = (int32_t)total_key(row[j]);
                m = k < m ? k : m;
                nan |= (row[j] & 0x7FFFFFFFu) > 0x7F800000u;
            }
        }
        job->y[r] = nan ? CANONICAL_NAN : total_key((uint32_t)m);
    }
}

/* ---- 128-bit sums for the integer ReduceMean (Python's exact sum) ----------------- */

typedef struct { uint64_t lo, hi; } u128;   /* two's complement */

static void add128(u128 *s, int64_t v, int is_unsigned)
{
    uint64_t u = (uint64_t)v;
    uint64_t lo = s->lo + u;
    s->hi += (lo < s->lo) + (!is_unsigned && v < 0 ? UINT64_MAX : 0);
    s->lo = lo;
}

/* Python's truncating s / n (n > 0), the quotient's low 64 bits. */
static int64_t div128(u128 s, uint64_t n)
{
    int neg = (int64_t)s.hi < 0;
    if (neg) {   /* magnitude */
        s.lo = ~s.lo + 1;
        s.hi = ~s.hi + (s.lo == 0);
    }
    uint64_t r = s.hi % n, q = 0;
    for (int i = 63; i >= 0; --i) {
        int top = (int)(r >> 63);
        r = (r << 1) | ((s.lo >> i) & 1);
        if (top || r >= n) {
            r -= n;
            q |= (uint64_t)1 << i;
        }
    }
    return (int64_t)(neg ? ~q + 1 : q);
}

/* ---- the Reduce family and the global pools ---------------------------------------- */

enum { RK_SUM, RK_MEAN, RK_MAX, RK_MIN, RK_PROD, RK_SUMSQ, RK_L1, RK_L2, RK_GAP, RK_GMP };

static const char *const REDUCE_NAMES[] = {
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
    "ReduceL1", "ReduceL2", "GlobalAveragePool", "GlobalMaxPool",
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
        if (g.outer > 0 && base == RK_L2)
            return sb_infer_fail(I, SB_ERR_TYPE, "%s on integers is not supported", name);
        if (g.outer > 0 && g.n == 0 && (base == RK_MAX || base == RK_MIN))
            return sb_infer_fail(I, SB_ERR_VALUE, "%s over an empty axis", name);
        return SB_OK;
    }
    if (out_n == 0) return SB_OK;
    if (x_n == 0) {
        if (base == RK_MAX || base == RK_MIN || base == RK_PROD)
            return sb_infer_fail(I, SB_ERR_VALUE, "%s over an empty axis", name);
        return SB_OK;
    }
    if (base == RK_PROD)
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "%s is not supported on float32", name);
    I->workspace = reduce_workspace(base, &g, &x->info);
    return SB_OK;
}

/* Integer reductions: exact, wrapping like the type (the mean: Python's
 * exact sum, then its truncating division). */
static void int_reduce(int base, const sb_tval *x, const reduce_geom *g, sb_tval *y)
{
    int r = g->rank;
    int64_t xs[SB_MAX_RANK];
    sb_c_strides(&x->info, xs);
    int kd[SB_MAX_RANK], rd[SB_MAX_RANK], nk = 0, nr = 0;
    for (int d = 0; d < r; ++d) {
        if (g->red[d]) rd[nr++] = d;
        else kd[nk++] = d;
    }
    int is_signed = sb_dtype_is_signed(x->info.dtype);
    int64_t kidx[SB_MAX_RANK] = {0}, base_off = 0;
    for (int64_t o = 0; o < g->outer; ++o) {
        uint64_t acc = base == RK_PROD ? 1 : 0;
        u128 wide = {0, 0};
        int64_t best = 0;
        int64_t ridx[SB_MAX_RANK] = {0}, off = base_off;
        for (int64_t j = 0; j < g->n; ++j) {
            int64_t v = sb_int_at(x, off);
            uint64_t u = (uint64_t)v;
            switch (base) {
            case RK_SUM: acc += u; break;
            case RK_SUMSQ: acc += u * u; break;
            case RK_L1: acc += is_signed && v < 0 ? (uint64_t)0 - u : u; break;
            case RK_PROD: acc *= u; break;
            case RK_MEAN: add128(&wide, v, !is_signed); break;
            case RK_MAX:
                if (j == 0 || (is_signed ? v > best : u > (uint64_t)best)) best = v;
                break;
            case RK_MIN:
                if (j == 0 || (is_signed ? v < best : u < (uint64_t)best)) best = v;
                break;
            default: break;
            }
            for (int k = nr - 1; k >= 0; --k) {
                int d = rd[k];
                off += xs[d];
                if (++ridx[k] < x->info.dims[d]) break;
                off -= xs[d] * x->info.dims[d];
                ridx[k] = 0;
            }
        }
        int64_t result;
        if (base == RK_MAX || base == RK_MIN) result = best;
        else if (base == RK_MEAN) result = g->n ? div128(wide, (uint64_t)g->n) : 0;
        else result = (int64_t)acc;
        sb_int_store(y->data, y->info.dtype, o, result);
        for (int k = nk - 1; k >= 0; --k) {
            int d = kd[k];
            base_off += xs[d];
            if (++kidx[k] < x->info.dims[d]) break;
            base_off -= xs[d] * x->info.dims[d];
            kidx[k] = 0;
        }
    }
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
        int_reduce(base, x, &g, y);
        return SB_OK;
    }
    int64_t out_n = sb_vinfo_numel(&y->info), x_n = sb_vinfo_numel(&x->info);
    if (out_n == 0) return SB_OK;
    if (x_n == 0) {   /* an empty axis: sums are +0, the mean NaN (0 / 0) */
        uint32_t fill = base == RK_MEAN ? CANONICAL_NAN : 0;
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
    default:
        return sb_run_fail(R, SB_ERR_UNSUPPORTED, "%s is not supported on float32",
                           REDUCE_NAMES[base]);
    }
}

/* ---- CumSum --------------------------------------------------------------------- */

typedef struct { int64_t exclusive, reverse; } cumsum_state;

static int cumsum_load(sb_load_ctx *L)
{
    cumsum_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->exclusive = sb_attr_int(L, "exclusive", 0);
    s->reverse = sb_attr_int(L, "reverse", 0);
    return L->status;
}

/* The axis from input 1's value; an error status with its text otherwise. */
static int cumsum_axis(const sb_tval *x, const sb_tval *axis, int *out, char *msg, size_t msize)
{
    int64_t count = sb_vinfo_numel(&axis->info);
    if (count != 1) {
        char shape[256];
        sb_shape_text(&axis->info, shape, sizeof shape);
        snprintf(msg, msize, "axis must hold one value, got shape %s", shape);
        return SB_ERR_VALUE;
    }
    int64_t a = sb_int_at(axis, 0);
    int r = x->info.rank;
    if (a < -r || a >= (r > 1 ? r : 1)) {
        snprintf(msg, msize, "axis %lld is out of range for rank %d", (long long)a, r);
        return SB_ERR_VALUE;
    }
    if (r == 0) {
        snprintf(msg, msize, "tuple index out of range");
        return SB_ERR_INDEX;
    }
    *out = (int)((a + r) % r);
    return SB_OK;
}

static int cumsum_infer(sb_infer_ctx *I)
{
    const sb_tval *x = need_input(I, 0);
    if (!x) return SB_ERR_VALUE;
    const sb_tval *axis = need_int(I, 1, "axis");
    if (!axis) return SB_ERR_TYPE;
    int64_t count = sb_vinfo_numel(&axis->info);
    int a = -1;
    if (count != 1 || axis->data) {
        char msg[512];
        int status = cumsum_axis(x, axis, &a, msg, sizeof msg);
        if (status) return sb_infer_fail(I, status, "%s", msg);
    } else if (x->info.rank == 0) {
        return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
    }
    I->out[0] = x->info;
    /* the running sums of each step, (n, outer, inner), when outer > 1 (or
     * the axis is not known yet) */
    if (x->info.dtype == SB_DT_FLOAT && (a < 0 || prod_dims(x->info.dims, 0, a) > 1))
        I->workspace = (int64_t)align64(sb_vinfo_bytes(&x->info));
    return SB_OK;
}

static int cumsum_run(sb_run_ctx *R)
{
    const cumsum_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    int a;
    char msg[512];
    int status = cumsum_axis(x, R->in[1], &a, msg, sizeof msg);
    if (status) return sb_run_fail(R, status, "%s", msg);
    int64_t n = x->info.dims[a];
    int64_t outer = prod_dims(x->info.dims, 0, a), inner = prod_dims(x->info.dims, a + 1, x->info.rank);
    if (x->info.dtype != SB_DT_FLOAT) {
        int dt = x->info.dtype;
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                uint64_t acc = 0;
                for (int64_t step = 0; step < n; ++step) {
                    int64_t j = s->reverse ? n - 1 - step : step;
                    int64_t p = (o * n + j) * inner + i;
                    uint64_t v = (uint64_t)sb_int_at(x, p);
                    uint64_t next = acc + v;
                    if (dt == SB_DT_BOOL) next = next != 0;
                    sb_int_store(y->data, dt, p, (int64_t)(s->exclusive ? acc : next));
                    acc = next;
                }
            }
        return SB_OK;
    }
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    /* step j's sums: (outer, inner) slabs of T, T = y itself when outer is 1 */
    float *T = outer == 1 ? (float *)y->data : (float *)R->workspace;
    const float *xv = x->data;
    int64_t slab = outer * inner;
    int64_t shape[2] = {outer, inner}, dense[2] = {inner, 1}, col[2] = {n * inner, 1};
    int64_t prev = -1;
    for (int64_t step = 0; step < n; ++step) {
        int64_t j = s->reverse ? n - 1 - step : step;
        float *Tj = T + j * slab;
        if (s->exclusive) {
            if (step == 0) {
                uint32_t zero = 0;
                sb_k_fill(Tj, slab, 4, &zero);
            } else {
                status = bin_strided(R, SB_BIN_ADD, 2, shape, T + prev * slab, dense,
                                     xv + prev * inner, col, Tj);
            }
        } else if (step == 0) {   /* the first: x (NaN canonical, as every sum) */
            status = bin_strided(R, SB_BIN_MAXIMUM, 2, shape, xv + j * inner, col, xv + j * inner,
                                 col, Tj);
        } else {
            status = bin_strided(R, SB_BIN_ADD, 2, shape, T + prev * slab, dense, xv + j * inner,
                                 col, Tj);
        }
        if (status) return kfail(R, status, "sb_binary");
        prev = j;
    }
    if (outer == 1) return SB_OK;
    /* (n, outer, inner) -> (outer, n, inner) */
    int64_t cshape[3] = {outer, n, inner}, xs[3] = {inner, slab, 1}, ys[3] = {n * inner, inner, 1};
    return kfail(R, sb_k_copy(R->threads, 3, cshape, 4, T, xs, y->data, ys), "copy");
}

/* ---- ArgMax, ArgMin ---------------------------------------------------------------- */

typedef struct { int64_t axis, keepdims, last; int is_max; } arg_state;

static int arg_load(sb_load_ctx *L)
{
    arg_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", 0);
    s->keepdims = sb_attr_int(L, "keepdims", 1);
    s->last = sb_attr_int(L, "select_last_index", 0);
    s->is_max = !strcmp(L->node->op_type, "ArgMax");
    return L->status;
}

static int arg_infer(sb_infer_ctx *I)
{
    const arg_state *s = I->state;
    const sb_tval *x = need_input(I, 0);
    if (!x) return SB_ERR_VALUE;
    int r = x->info.rank, a;
    int status = sb_infer_axis(I, s->axis, r, "axis", &a);
    if (status) return status;
    if (r == 0) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
    sb_vinfo *y = &I->out[0];
    y->dtype = SB_DT_INT64;
    y->rank = 0;
    for (int d = 0; d < r; ++d) {
        if (d == a) {
            if (s->keepdims) y->dims[y->rank++] = 1;
        } else {
            y->dims[y->rank++] = x->info.dims[d];
        }
    }
    if (x->info.dims[a] == 0 && sb_vinfo_numel(y) > 0)
        return sb_infer_fail(I, SB_ERR_VALUE, "%s over an empty axis", I->node->op_type);
    return SB_OK;
}

static int arg_run(sb_run_ctx *R)
{
    const arg_state *s = R->state;
    const sb_tval *x = R->in[0];
    int r = x->info.rank;
    int a = (int)((s->axis + r) % r);
    int64_t n = x->info.dims[a];
    int64_t outer = prod_dims(x->info.dims, 0, a), inner = prod_dims(x->info.dims, a + 1, r);
    int64_t *out = R->out[0]->data;
    int is_float = x->info.dtype == SB_DT_FLOAT;
    int is_signed = sb_dtype_is_signed(x->info.dtype);
    int last = s->last != 0, is_max = s->is_max;
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            int64_t base = o * n * inner + i, best = 0;
            if (is_float) {
                const uint32_t *v = (const uint32_t *)x->data + base;
                uint32_t b = v[0];
                for (int64_t j = 0; j < n; ++j) {
                    uint32_t c = v[j * inner];
                    if (is_nan_bits(c)) {   /* NaN wins: the first, or the last with select_last_index */
                        if (!is_nan_bits(b) || last) best = j, b = c;
                        continue;
                    }
                    if (is_nan_bits(b)) continue;
                    int64_t kc = order_key(c), kb = order_key(b);
                    int better = is_max ? kc > kb : kc < kb;
                    if (better || (last && kc == kb)) best = j, b = c;
                }
            } else {
                int64_t b = sb_int_at(x, base);
                for (int64_t j = 0; j < n; ++j) {
                    int64_t c = sb_int_at(x, base + j * inner);
                    int better = is_signed ? (is_max ? c > b : c < b)
                                           : (is_max ? (uint64_t)c > (uint64_t)b
                                                     : (uint64_t)c < (uint64_t)b);
                    if (better || (last && c == b)) best = j, b = c;
                }
            }
            out[o * inner + i] = best;
        }
    return SB_OK;
}

/* ---- LayerNormalization --------------------------------------------------------------- */

typedef struct { int64_t axis; float eps; } axis_eps_state;

static int layer_norm_load(sb_load_ctx *L)
{
    axis_eps_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", -1);
    s->eps = sb_attr_float(L, "epsilon", 1e-5f);
    int64_t stash = sb_attr_int(L, "stash_type", 1);
    if (L->status) return L->status;
    if (stash != 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "stash_type=%lld is not supported (1: float32)",
                            (long long)stash);
    sb_load_only_first_output(L, "Mean/InvStdDev");
    return L->status;
}

/* Scale or B against the normalized shape: the same, or the same elements
 * under a shape that broadcasts to it. */
static int fit_norm(sb_infer_ctx *I, const sb_tval *t, const sb_vinfo *norm, const char *what)
{
    if (sb_vinfo_same_shape(&t->info, norm)) return SB_OK;
    if (sb_vinfo_numel(&t->info) == sb_vinfo_numel(norm)) {
        const sb_vinfo *pair[2] = {&t->info, norm};
        sb_vinfo b;
        if (sb_broadcast(pair, 2, &b)) {
            char text[512];
            sb_broadcast_error_text(pair, 2, text, sizeof text);
            return sb_infer_fail(I, SB_ERR_VALUE, "%s", text);
        }
        if (sb_vinfo_same_shape(&b, norm)) return SB_OK;
    }
    char ts[256], ns[256];
    sb_shape_text(&t->info, ts, sizeof ts);
    sb_shape_text(norm, ns, sizeof ns);
    return sb_infer_fail(I, SB_ERR_VALUE, "%s %s does not match the normalized shape %s", what, ts, ns);
}

static void trailing_shape(const sb_vinfo *x, int a, sb_vinfo *norm)
{
    memset(norm, 0, sizeof *norm);
    norm->dtype = SB_DT_FLOAT;
    for (int d = a; d < x->rank; ++d) norm->dims[norm->rank++] = x->dims[d];
}

static int layer_norm_infer(sb_infer_ctx *I)
{
    const axis_eps_state *s = I->state;
    const sb_tval *x = need_float(I, 0, "X");
    if (!x) return SB_ERR_TYPE;
    int a, status = sb_infer_axis(I, s->axis, x->info.rank, "axis", &a);
    if (status) return status;
    const sb_tval *scale = need_float(I, 1, "Scale");
    if (!scale) return SB_ERR_TYPE;
    I->out[0] = x->info;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    sb_vinfo norm;
    trailing_shape(&x->info, a, &norm);
    if (I->n_in > 2 && I->in[2]) {
        const sb_tval *bias = need_float(I, 2, "B");
        if (!bias) return SB_ERR_TYPE;
        if ((status = fit_norm(I, bias, &norm, "B"))) return status;
    }
    if ((status = fit_norm(I, scale, &norm, "Scale"))) return status;
    if (norm.rank == 0) {   /* samebits.layer_norm's check */
        char xs[256];
        sb_shape_text(&x->info, xs, sizeof xs);
        return sb_infer_fail(I, SB_ERR_VALUE, "layer_norm: normalized_shape () must be the "
                             "trailing dimensions of x, whose shape is %s", xs);
    }
    return SB_OK;
}

static int layer_norm_run(sb_run_ctx *R)
{
    const axis_eps_state *s = R->state;
    const sb_tval *x = R->in[0];
    int r = x->info.rank;
    int a = r ? (int)((s->axis + r) % r) : 0;
    int64_t total = sb_vinfo_numel(&x->info);
    if (total == 0) return SB_OK;
    int64_t n = prod_dims(x->info.dims, a, r);
    const sb_tval *bias = R->n_in > 2 ? R->in[2] : NULL;
    return k_reduce(R, 4, total / n, n, 1, x->data, R->out[0]->data, R->in[1]->data,
                    bias ? bias->data : NULL, s->eps);
}

/* ---- RMSNormalization --------------------------------------------------------------- */

static int rms_norm_load(sb_load_ctx *L)
{
    axis_eps_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", -1);
    s->eps = sb_attr_float(L, "epsilon", 1e-5f);
    int64_t stash = sb_attr_int(L, "stash_type", 1);
    if (L->status) return L->status;
    if (stash != 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "stash_type other than 1 (float32) is not "
                            "supported");
    return L->status;
}

static int rms_norm_infer(sb_infer_ctx *I)
{
    const axis_eps_state *s = I->state;
    const sb_tval *x = need_float(I, 0, "X");
    if (!x) return SB_ERR_TYPE;
    int a, status = sb_infer_axis(I, s->axis, x->info.rank, "axis", &a);
    if (status) return status;
    sb_vinfo norm;
    trailing_shape(&x->info, a, &norm);
    const sb_tval *scale = need_float(I, 1, "scale");
    if (!scale) return SB_ERR_TYPE;
    const sb_vinfo *pair[2] = {&scale->info, &norm};
    sb_vinfo b;
    if (sb_broadcast(pair, 2, &b)) {
        char text[512];
        sb_broadcast_error_text(pair, 2, text, sizeof text);
        return sb_infer_fail(I, SB_ERR_VALUE, "%s", text);
    }
    if (!sb_vinfo_same_shape(&b, &norm)) {
        char ts[256], ns[256];
        sb_shape_text(&scale->info, ts, sizeof ts);
        sb_shape_text(&norm, ns, sizeof ns);
        return sb_infer_fail(I, SB_ERR_VALUE, "scale %s does not broadcast to the normalized "
                             "shape %s", ts, ns);
    }
    I->out[0] = x->info;
    int64_t total = sb_vinfo_numel(&x->info);
    if (total == 0) return SB_OK;
    int64_t rows = total / sb_vinfo_numel(&norm);
    I->workspace = (int64_t)(align64(total * 4) + align64(rows * 4));
    return SB_OK;
}

static int rms_norm_run(sb_run_ctx *R)
{
    const axis_eps_state *s = R->state;
    const sb_tval *x = R->in[0];
    int r = x->info.rank;
    int a = r ? (int)((s->axis + r) % r) : 0;
    int64_t total = sb_vinfo_numel(&x->info);
    if (total == 0) return SB_OK;
    int64_t n = prod_dims(x->info.dims, a, r), rows = total / n;
    uint8_t *ws = R->workspace;
    float *P = (float *)ws, *M = (float *)(ws + align64(total * 4));
    sb_tval xr = ftensor(&x->info, x->data);
    xr.info.rank = 2, xr.info.dims[0] = rows, xr.info.dims[1] = n;
    sb_tval p = xr;
    p.data = P;
    sb_tval m = xr;
    m.info.dims[1] = 1;
    m.data = M;
    int status;
    /* ms = mean(x * x) per row; d = sqrt(ms + eps); y = (x / d) * scale */
    if ((status = sb_k_binary(R, SB_BIN_MUL, &xr, &xr, &p))) return kfail(R, status, "sb_binary");
    if ((status = k_reduce(R, 1, rows, n, 1, P, M, NULL, NULL, 0.0f))) return status;
    if ((status = sb_k_binary_scalar(R, SB_BIN_ADD, &m, s->eps, &m))) return kfail(R, status, "sb_binary");
    if ((status = sb_k_unary(R, SB_OP_SQRT, 0.0f, &m, &m))) return kfail(R, status, "sb_unary");
    if ((status = sb_k_binary(R, SB_BIN_DIV, &xr, &m, &p))) return kfail(R, status, "sb_binary");
    sb_tval q = ftensor(&x->info, P);
    return kfail(R, sb_k_binary(R, SB_BIN_MUL, &q, R->in[1], R->out[0]), "sb_binary");
}

/* ---- BatchNormalization, GroupNormalization, InstanceNormalization -------------------- */

typedef struct { float eps; int64_t groups; int opset; } norm_state;

static int k_norm(sb_run_ctx *R, int op, const sb_tval *x, int64_t groups, const void *mean,
                  const void *var, const void *weight, const void *bias, float eps)
{
    sb_norm_args a;
    memset(&a, 0, sizeof a);
    a.path = R->path, a.mode = R->mode, a.op = op, a.max_threads = R->threads;
    a.n = x->info.dims[0], a.c = x->info.dims[1];
    a.spatial = prod_dims(x->info.dims, 2, x->info.rank);
    a.groups = groups;
    a.x = (int64_t)(intptr_t)x->data, a.y = (int64_t)(intptr_t)R->out[0]->data;
    a.mean = (int64_t)(intptr_t)mean, a.var = (int64_t)(intptr_t)var;
    a.weight = (int64_t)(intptr_t)weight, a.bias = (int64_t)(intptr_t)bias;
    a.eps = (int64_t)f2u(eps);
    return kfail(R, sb_norm(&a), "sb_norm");
}

/* samebits' wrappers' checks (_norm.py): x at least 2-D, each vector (C,). */
static int norm_vectors(sb_infer_ctx *I, const char *what, const sb_tval *x,
                        const sb_tval *const *v, const char *const *names, int count)
{
    char shape[256];
    if (x->info.rank < 2) {
        sb_shape_text(&x->info, shape, sizeof shape);
        return sb_infer_fail(I, SB_ERR_VALUE, "x must be at least 2-D, got shape %s", shape);
    }
    int64_t c = x->info.dims[1];
    for (int k = 0; k < count; ++k) {
        if (v[k]->info.rank == 1 && v[k]->info.dims[0] == c) continue;
        sb_shape_text(&v[k]->info, shape, sizeof shape);
        return sb_infer_fail(I, SB_ERR_VALUE, "%s: %s must have shape (%lld,) (one value per "
                             "channel), got %s", what, names[k], (long long)c, shape);
    }
    return SB_OK;
}

static int batch_norm_load(sb_load_ctx *L)
{
    norm_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->eps = sb_attr_float(L, "epsilon", 1e-5f);
    sb_attr_ignore(L, "momentum");   /* updates running statistics in training only */
    if (sb_has_attr(L, "spatial") && sb_attr_int(L, "spatial", 1) != 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "spatial=0 is not supported");
    if (sb_attr_int(L, "training_mode", 0))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "training_mode=1 is not supported (inference "
                            "only)");
    if (L->opset < 7) {
        sb_attr_ignore(L, "is_test");
        sb_attr_ignore(L, "consumed_inputs");
    }
    sb_load_only_first_output(L, "running mean/var");
    return L->status;
}

static int batch_norm_infer(sb_infer_ctx *I)
{
    static const char *const names[5] = {"X", "scale", "B", "input_mean", "input_var"};
    const sb_tval *t[5];
    for (int i = 0; i < 5; ++i)
        if (!(t[i] = need_float(I, i, names[i]))) return SB_ERR_TYPE;
    I->out[0] = t[0]->info;
    if (sb_vinfo_numel(&t[0]->info) == 0) return SB_OK;
    const sb_tval *v[4] = {t[3], t[4], t[1], t[2]};
    static const char *const vnames[4] = {"running_mean", "running_var", "weight", "bias"};
    return norm_vectors(I, "batch_norm", t[0], v, vnames, 4);
}

static int batch_norm_run(sb_run_ctx *R)
{
    const norm_state *s = R->state;
    const sb_tval *x = R->in[0];
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    return k_norm(R, 0, x, 0, R->in[3]->data, R->in[4]->data, R->in[1]->data, R->in[2]->data,
                  s->eps);
}

static int group_norm_load(sb_load_ctx *L)
{
    norm_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->eps = sb_attr_float(L, "epsilon", 1e-5f);
    s->groups = sb_attr_int_req(L, "num_groups");
    s->opset = L->opset;
    if (L->status) return L->status;
    if (L->opset >= 21 && sb_attr_int(L, "stash_type", 1) != 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "stash_type other than 1 (float32 statistics) "
                            "is not supported");
    return L->status;
}

/* Opset 18's scale and bias per group: repeated over each group's channels. */
static int group_norm_per_group(const norm_state *s, const sb_tval *x, const sb_tval *scale)
{
    int64_t c = x->info.dims[1];
    return s->opset < 21 && scale->info.rank == 1 && scale->info.dims[0] == s->groups &&
           c != s->groups;
}

static int group_norm_infer(sb_infer_ctx *I)
{
    const norm_state *s = I->state;
    const sb_tval *x = need_float(I, 0, "X"), *scale, *bias;
    if (!x || !(scale = need_float(I, 1, "scale")) || !(bias = need_float(I, 2, "bias")))
        return SB_ERR_TYPE;
    char xs[256], ss[256], bs[256];
    sb_shape_text(&x->info, xs, sizeof xs);
    if (x->info.rank < 2 || s->groups < 1 || x->info.dims[1] % s->groups)
        return sb_infer_fail(I, SB_ERR_VALUE, "num_groups=%lld does not divide the channels of %s",
                             (long long)s->groups, xs);
    int64_t c = x->info.dims[1];
    sb_vinfo sv = scale->info, bv = bias->info;
    if (group_norm_per_group(s, x, scale)) {
        if (sb_vinfo_numel(&bias->info) != s->groups) {
            sb_shape_text(&bias->info, bs, sizeof bs);
            return sb_infer_fail(I, SB_ERR_VALUE, "cannot reshape %s to (%lld, 1)", bs,
                                 (long long)s->groups);
        }
        sv.rank = bv.rank = 1;
        sv.dims[0] = bv.dims[0] = c;
    }
    if (!(sv.rank == 1 && sv.dims[0] == c) || !(bv.rank == 1 && bv.dims[0] == c)) {
        sb_shape_text(&sv, ss, sizeof ss);
        sb_shape_text(&bv, bs, sizeof bs);
        return sb_infer_fail(I, SB_ERR_VALUE, "scale %s and bias %s do not fit %lld channels", ss,
                             bs, (long long)c);
    }
    I->out[0] = x->info;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    if (group_norm_per_group(s, x, scale)) I->workspace = (int64_t)(2 * align64(c * 4));
    return SB_OK;
}

static int group_norm_run(sb_run_ctx *R)
{
    const norm_state *s = R->state;
    const sb_tval *x = R->in[0];
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    const float *scale = R->in[1]->data, *bias = R->in[2]->data;
    if (group_norm_per_group(s, x, R->in[1])) {
        int64_t c = x->info.dims[1], per = c / s->groups;
        float *ws = R->workspace, *sc = ws, *bi = (float *)((uint8_t *)ws + align64(c * 4));
        for (int64_t k = 0; k < c; ++k) {   /* copies: the bits as they are */
            memcpy(sc + k, scale + k / per, 4);
            memcpy(bi + k, bias + k / per, 4);
        }
        scale = sc, bias = bi;
    }
    return k_norm(R, 1, x, s->groups, NULL, NULL, scale, bias, s->eps);
}

static int instance_norm_load(sb_load_ctx *L)
{
    norm_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->eps = sb_attr_float(L, "epsilon", 1e-5f);
    return L->status;
}

static int instance_norm_infer(sb_infer_ctx *I)
{
    const sb_tval *x = need_float(I, 0, "input"), *scale, *bias;
    if (!x || !(scale = need_float(I, 1, "scale")) || !(bias = need_float(I, 2, "B")))
        return SB_ERR_TYPE;
    I->out[0] = x->info;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    if (x->info.rank < 2) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
    const sb_tval *v[2] = {scale, bias};
    static const char *const vnames[2] = {"weight", "bias"};
    return norm_vectors(I, "group_norm", x, v, vnames, 2);
}

static int instance_norm_run(sb_run_ctx *R)
{
    const norm_state *s = R->state;
    const sb_tval *x = R->in[0];
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    /* one group per channel: group_norm's statistics are instance norm's */
    return k_norm(R, 1, x, x->info.dims[1], NULL, NULL, R->in[1]->data, R->in[2]->data, s->eps);
}

/* ---- LRN ---------------------------------------------------------------------------- */

typedef struct { int64_t size; float alpha, beta, bias; } lrn_state;

static int lrn_load(sb_load_ctx *L)
{
    lrn_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->size = sb_attr_int_req(L, "size");
    s->alpha = sb_attr_float(L, "alpha", 1e-4f);
    s->beta = sb_attr_float(L, "beta", 0.75f);
    s->bias = sb_attr_float(L, "bias", 1.0f);
    if (L->status) return L->status;
    if (s->size < 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "size=%lld must be positive", (long long)s->size);
    return L->status;
}

static int lrn_infer(sb_infer_ctx *I)
{
    const lrn_state *s = I->state;
    const sb_tval *x = need_float(I, 0, "X");
    if (!x) return SB_ERR_TYPE;
    if (x->info.rank < 3) {
        char shape[256];
        sb_shape_text(&x->info, shape, sizeof shape);
        return sb_infer_fail(I, SB_ERR_VALUE, "X must be (N, C, ...), got %s", shape);
    }
    I->out[0] = x->info;
    int64_t total = sb_vinfo_numel(&x->info);
    if (total == 0) return SB_OK;
    /* the padded squares (N, C + size - 1, inner) and the sums (N, C, inner) */
    int64_t n = x->info.dims[0], c = x->info.dims[1], inner = total / (n * c);
    if (s->size > SB_MAX_ELEMENTS || c + s->size - 1 > SB_MAX_ELEMENTS / (n * inner))
        return sb_infer_fail(I, SB_ERR_VALUE, "size=%lld is too large", (long long)s->size);
    int64_t padded = n * (c + s->size - 1) * inner;
    I->workspace = (int64_t)(align64(padded * 4) + align64(total * 4));
    return SB_OK;
}

static int lrn_run(sb_run_ctx *R)
{
    const lrn_state *s = R->state;
    const sb_tval *x = R->in[0];
    int64_t total = sb_vinfo_numel(&x->info);
    if (total == 0) return SB_OK;
    int64_t n = x->info.dims[0], c = x->info.dims[1], inner = total / (n * c);
    int64_t size = s->size, before = (size - 1) / 2, cp = c + size - 1;
    uint8_t *ws = R->workspace;
    float *P = (float *)ws, *A = (float *)(ws + align64(n * cp * inner * 4));
    sb_tval xt = ftensor(&x->info, x->data), at = ftensor(&x->info, A);
    int status;
    uint32_t zero = 0;
    /* the squares, into the middle of zero channels (their +0 terms leave
     * each serial sum unchanged) */
    if ((status = sb_k_binary(R, SB_BIN_MUL, &xt, &xt, &at))) return kfail(R, status, "sb_binary");
    sb_k_fill(P, n * cp * inner, 4, &zero);
    int64_t shape[3] = {n, c, inner}, dense[3] = {c * inner, inner, 1}, pad[3] = {cp * inner, inner, 1};
    if ((status = sb_k_copy(R->threads, 3, shape, 4, A, dense, P + before * inner, pad)))
        return kfail(R, status, "copy");
    /* acc = +0, then + each window of `size` channels in turn */
    sb_k_fill(A, total, 4, &zero);
    for (int64_t k = 0; k < size; ++k)
        if ((status = bin_strided(R, SB_BIN_ADD, 3, shape, A, dense, P + k * inner, pad, A)))
            return kfail(R, status, "sb_binary");
    /* scale = float32(alpha) / size in binary64, rounded to float32 */
    float scale = (float)((double)s->alpha / (double)size);
    if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, &at, scale, &at)) ||
        (status = sb_k_binary_scalar(R, SB_BIN_ADD, &at, s->bias, &at)) ||
        (status = sb_k_binary_scalar(R, SB_BIN_POW, &at, -s->beta, &at)) ||
        (status = sb_k_binary(R, SB_BIN_MUL, &xt, &at, R->out[0])))
        return kfail(R, status, "sb_binary");
    return SB_OK;
}

const sb_op_def sb_ops_reduce[] = {
    {"ReduceSum", reduce_load, reduce_infer, reduce_run, 0},
    {"ReduceMean", reduce_load, reduce_infer, reduce_run, 0},
    {"ReduceMax", reduce_load, reduce_infer, reduce_run, 0},
    {"ReduceMin", reduce_load, reduce_infer, reduce_run, 0},
    {"ReduceProd", reduce_load, reduce_infer, reduce_run, 0},
    {"ReduceSumSquare", reduce_load, reduce_infer, reduce_run, 0},
    {"ReduceL1", reduce_load, reduce_infer, reduce_run, 0},
    {"ReduceL2", reduce_load, reduce_infer, reduce_run, 0},
    {"GlobalAveragePool", reduce_load, reduce_infer, reduce_run, 0},
    {"GlobalMaxPool", reduce_load, reduce_infer, reduce_run, 0},
    {"CumSum", cumsum_load, cumsum_infer, cumsum_run, 0},
    {"ArgMax", arg_load, arg_infer, arg_run, 0},
    {"ArgMin", arg_load, arg_infer, arg_run, 0},
    {"LayerNormalization", layer_norm_load, layer_norm_infer, layer_norm_run, 0},
    {"RMSNormalization", rms_norm_load, rms_norm_infer, rms_norm_run, 0},
    {"BatchNormalization", batch_norm_load, batch_norm_infer, batch_norm_run, 0},
    {"GroupNormalization", group_norm_load, group_norm_infer, group_norm_run, 0},
    {"InstanceNormalization", instance_norm_load, instance_norm_infer, instance_norm_run, 0},
    {"LRN", lrn_load, lrn_infer, lrn_run, 0},
    {0},
};
