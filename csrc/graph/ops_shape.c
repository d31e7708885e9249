/* ONNX operators: shapes, constants, casts and data movement (Shape, Size,
 * Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout, Constant,
 * ConstantOfShape, Cast, CastLike, Range, Concat, Split, Slice, Transpose,
 * DepthToSpace, SpaceToDepth, Gather, Expand, Tile, Pad), as docs/onnx.md
 * defines them. Views are
 * SB_OP_VIEW: their output is their input's bytes under a new shape. Data
 * movement copies elements of every size as bits (NaN payloads kept). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"

/* ---- Shape ------------------------------------------------------------------ */

typedef struct { int64_t start, end; int has_end; } shape_state;

static int shape_load(sb_load_ctx *L)
{
    shape_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->start = sb_attr_int(L, "start", 0);
    s->has_end = sb_has_attr(L, "end");
    s->end = sb_attr_int(L, "end", 0);
    return L->status;
}

static void shape_range(const shape_state *s, int r, int *first, int *last)
{
    int64_t a = s->start < 0 ? s->start + r : s->start;
    int64_t e = !s->has_end ? r : s->end < 0 ? s->end + r : s->end;
    a = a < 0 ? 0 : a > r ? r : a;
    e = e < 0 ? 0 : e > r ? r : e;
    *first = (int)a, *last = (int)(e > a ? e : a);
}

static int shape_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    int a, e;
    shape_range(I->state, x->info.rank, &a, &e);
    I->out[0].dtype = SB_DT_INT64;
    I->out[0].rank = 1;
    I->out[0].dims[0] = e - a;
    return SB_OK;
}

static int shape_run(sb_run_ctx *R)
{
    int a, e;
    shape_range(R->state, R->in[0]->info.rank, &a, &e);
    for (int d = a; d < e; ++d) ((int64_t *)R->out[0]->data)[d - a] = R->in[0]->info.dims[d];
    return SB_OK;
}

/* ---- Identity ----------------------------------------------------------------- */

static int identity_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    I->out[0] = x->info;
    return SB_OK;
}

/* ---- Reshape ------------------------------------------------------------------ */

typedef struct { int64_t allowzero; } reshape_state;

static int reshape_load(sb_load_ctx *L)
{
    reshape_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->allowzero = sb_attr_int(L, "allowzero", 0);
    return L->status;
}

static int reshape_infer(sb_infer_ctx *I)
{
    const reshape_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    int64_t target[SB_MAX_RANK];
    size_t n;
    int status = sb_infer_int_list(I, 1, "shape", target, SB_MAX_RANK, &n);
    if (status) return status;
    sb_vinfo *y = &I->out[0];
    y->dtype = x->info.dtype;
    y->rank = (int)n;
    int unknown = -1;
    for (size_t i = 0; i < n; ++i) {
        int64_t d = target[i];
        if (d == 0 && !s->allowzero) {
            if ((int)i >= x->info.rank)
                return sb_infer_fail(I, SB_ERR_VALUE, "shape copies dimension %zu of a rank-%d input",
                                     i, x->info.rank);
            d = x->info.dims[i];
        } else if (d == -1) {
            if (unknown >= 0) return sb_infer_fail(I, SB_ERR_VALUE, "shape has two -1 entries");
            unknown = (int)i;
            d = 1;
        } else if (d < 0) {
            return sb_infer_fail(I, SB_ERR_VALUE, "shape has a negative entry %lld", (long long)d);
        }
        y->dims[i] = d;
    }
    int64_t total = sb_vinfo_numel(&x->info), known = sb_vinfo_numel(y);
    char xs[256];
    sb_shape_text(&x->info, xs, sizeof xs);
    if (known < 0) return sb_infer_fail(I, SB_ERR_VALUE, "cannot reshape %s: too many elements", xs);
    if (unknown >= 0) {
        if (known == 0 || total % known)
            return sb_infer_fail(I, SB_ERR_VALUE, "cannot reshape %s to the requested shape", xs);
        y->dims[unknown] = total / known;
    }
    if (sb_vinfo_numel(y) != total) {
        char ys[256];
        sb_shape_text(y, ys, sizeof ys);
        return sb_infer_fail(I, SB_ERR_VALUE, "cannot reshape %s (%lld elements) to %s", xs,
                             (long long)total, ys);
    }
    return SB_OK;
}

/* ---- Constant ------------------------------------------------------------------- */

typedef struct { sb_tval value; } constant_state;

static int constant_load(sb_load_ctx *L)
{
    static const char *const kinds[] = {"value", "value_float", "value_floats", "value_int",
                                        "value_ints", "sparse_value", "value_string", "value_strings"};
    int present = 0;
    const char *which = NULL;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
        if (sb_has_attr(L, kinds[k])) ++present, which = kinds[k];
    if (present != 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "needs exactly one value attribute, has %d", present);
    constant_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    sb_tval *t = &s->value;
    if (!strcmp(which, "value")) {
        sb_attr_tensor(L, "value", t);
        return L->status;
    }
    if (!strcmp(which, "value_float") || !strcmp(which, "value_int")) {
        int is_float = which[6] == 'f';
        t->info.dtype = is_float ? SB_DT_FLOAT : SB_DT_INT64;
        t->info.rank = 0;
        t->data = sb_load_buffer(L, 8);
        if (!t->data) return L->status;
        if (is_float) *(float *)t->data = sb_attr_float(L, which, 0.0f);
        else *(int64_t *)t->data = sb_attr_int(L, which, 0);
        return L->status;
    }
    if (!strcmp(which, "value_floats") || !strcmp(which, "value_ints")) {
        int is_float = which[6] == 'f';
        const float *fv = NULL;
        const int64_t *iv = NULL;
        size_t n = 0;
        if (is_float) sb_attr_floats(L, which, &fv, &n);
        else sb_attr_ints(L, which, &iv, &n);
        if (L->status) return L->status;
        t->info.dtype = is_float ? SB_DT_FLOAT : SB_DT_INT64;
        t->info.rank = 1;
        t->info.dims[0] = (int64_t)n;
        t->data = sb_load_buffer(L, n * 8 + 8);
        if (!t->data) return L->status;
        if (n) memcpy(t->data, is_float ? (const void *)fv : (const void *)iv, n * (is_float ? 4 : 8));
        return L->status;
    }
    return sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute '%s' is not supported (no sparse or string "
                        "tensors)", which);
}

static int constant_infer(sb_infer_ctx *I)
{
    I->out[0] = ((const constant_state *)I->state)->value.info;
    return SB_OK;
}

static int constant_run(sb_run_ctx *R)
{
    const sb_tval *v = &((const constant_state *)R->state)->value;
    int64_t bytes = sb_vinfo_bytes(&v->info);
    if (bytes > 0) memcpy(R->out[0]->data, v->data, (size_t)bytes);
    return SB_OK;
}

/* ---- helpers of the ops below ------------------------------------------------------ */

#define LIST_CAP 64              /* values of an int-list input read at plan time */
#define WALK_RANK (2 * SB_MAX_RANK + 1)

/* Python's text of a list of ints: "[1, -2]". */
static const char *py_list(char *buf, size_t size, const int64_t *v, size_t n)
{
    size_t at = (size_t)snprintf(buf, size, "[");
    for (size_t k = 0; k < n && at < size; ++k)
        at += (size_t)snprintf(buf + at, size - at, k ? ", %lld" : "%lld", (long long)v[k]);
    if (at < size) snprintf(buf + at, size - at, "]");
    return buf;
}

/* Python's text of a tuple of ints: "(2, 3)", "(2,)", "()". */
static const char *py_tuple(char *buf, size_t size, const int64_t *v, size_t n)
{
    size_t at = (size_t)snprintf(buf, size, "(");
    for (size_t k = 0; k < n && at < size; ++k)
        at += (size_t)snprintf(buf + at, size - at, k ? ", %lld" : "%lld", (long long)v[k]);
    if (at < size) snprintf(buf + at, size - at, n == 1 ? ",)" : ")");
    return buf;
}

static const char *shape_str(const sb_vinfo *v, char *buf, size_t size)
{
    sb_shape_text(v, buf, size);
    return buf;
}

/* An element type's name as Python's runner writes it (the number for an unknown one). */
static const char *dtype_text(int dtype, char *buf, size_t size)
{
    const char *name = sb_dtype_name(dtype);
    if (strcmp(name, "unknown") == 0 || dtype == 0) {
        snprintf(buf, size, "%d", dtype);
        return buf;
    }
    return name;
}

/* a * b for non-negative sizes; 0 on overflow (beyond SB_MAX_ELEMENTS * 2^20). */
static int mul_size(int64_t a, int64_t b, int64_t *out)
{
    const int64_t limit = (int64_t)1 << 62;
    if (a < 0 || b < 0) return 0;
    if (a != 0 && b > limit / a) return 0;
    *out = a * b;
    return 1;
}

static int64_t prod_dims(const int64_t *dims, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; ++d) n *= dims[d];
    return n;
}

/* An input that has elements but no data yet (not known while planning). */
static int lacks_data(const sb_tval *t) { return t && !t->data && sb_vinfo_numel(&t->info) != 0; }

/* sb_infer_int_list, with uint64 values above INT64_MAX kept large (saturated):
 * Python's runner reads them as the unsigned numbers they are. */
static int int_list(sb_infer_ctx *I, int i, const char *what, int64_t *v, size_t cap, size_t *n)
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
static int norm_axes(sb_infer_ctx *I, const int64_t *axes, size_t n, int rank, const char *what,
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
                                     py_list(b, sizeof b, axes, n));
            }
    return SB_OK;
}

/* A strided copy of any rank up to WALK_RANK - 1 (sb_k_copy's walk holds 15
 * merged dimensions for 8-byte elements): neighbours merged, the leading
 * dimensions beyond that looped over here. */
static int copy_any(int threads, int rank, const int64_t *shape_in, int size, const void *x,
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
static int permute_view(int threads, int size, int rank, const int64_t *dims, const int *perm,
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

/* An infer context over a run's inputs (the run recomputes what infer derived). */
static void infer_from_run(const sb_run_ctx *R, sb_infer_ctx *I, sb_vinfo *outs)
{
    memset(I, 0, sizeof *I);
    I->node = R->node, I->state = R->state, I->mode = R->mode, I->path = R->path;
    I->n_in = R->n_in, I->n_out = R->n_out, I->in = R->in, I->out = outs, I->inplace = -1;
}

/* Fills the infos of outputs a node leaves out (the planner sizes every one). */
static void fill_unused_outputs(sb_infer_ctx *I, int from)
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

static int read_ints_attr(sb_load_ctx *L, const char *name, int required, ints_attr *out)
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

/* ---- Size ------------------------------------------------------------------------ */

static int size_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    I->out[0].dtype = SB_DT_INT64;
    I->out[0].rank = 0;
    return SB_OK;
}

static int size_run(sb_run_ctx *R)
{
    *(int64_t *)R->out[0]->data = sb_vinfo_numel(&R->in[0]->info);
    return SB_OK;
}

/* ---- Flatten --------------------------------------------------------------------- */

typedef struct { int64_t axis; } axis_state;

static int flatten_load(sb_load_ctx *L)
{
    axis_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", 1);
    return L->status;
}

static int flatten_infer(sb_infer_ctx *I)
{
    const axis_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    int r = x->info.rank;
    if (s->axis < -r || s->axis > r)
        return sb_infer_fail(I, SB_ERR_VALUE, "axis %lld is out of range for rank %d",
                             (long long)s->axis, r);
    int a = (int)(s->axis < 0 ? s->axis + r : s->axis);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < r; ++d)
        if (!mul_size(d < a ? outer : inner, x->info.dims[d], d < a ? &outer : &inner))
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
    I->out[0].dtype = x->info.dtype;
    I->out[0].rank = 2;
    I->out[0].dims[0] = outer, I->out[0].dims[1] = inner;
    return SB_OK;
}

/* ---- Squeeze, Unsqueeze ---------------------------------------------------------- */

typedef struct { int opset; ints_attr axes; } axes_state;

static int squeeze_load(sb_load_ctx *L)
{
    axes_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->opset = L->opset;
    int unsqueeze = strcmp(L->node->op_type, "Unsqueeze") == 0;
    if (L->opset < 13) return read_ints_attr(L, "axes", unsqueeze, &s->axes);
    return L->status;
}

/* The axes (attribute before opset 13, input 1 after): 1 in *have when given. */
static int squeeze_axes(sb_infer_ctx *I, int64_t *axes, size_t *n, int *have)
{
    const axes_state *s = I->state;
    *have = 0, *n = 0;
    if (s->opset < 13) {
        if (s->axes.has) {
            *have = 1, *n = s->axes.n;
            memcpy(axes, s->axes.v, s->axes.n * sizeof *axes);
        }
        return SB_OK;
    }
    if (I->n_in > 1 && I->in[1]) {
        *have = 1;
        return int_list(I, 1, "axes", axes, LIST_CAP, n);
    }
    return SB_OK;
}

static int squeeze_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    int64_t axes[LIST_CAP];
    size_t n;
    int have;
    int status = squeeze_axes(I, axes, &n, &have);
    if (status) return status;
    int r = x->info.rank;
    unsigned char drop[SB_MAX_RANK] = {0};
    if (!have) {
        for (int d = 0; d < r; ++d) drop[d] = x->info.dims[d] == 1;
    } else {
        int idx[LIST_CAP];
        if ((status = norm_axes(I, axes, n, r, "axes", idx))) return status;
        for (size_t k = 0; k < n; ++k) {
            if (idx[k] >= r) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
            if (x->info.dims[idx[k]] != 1) {
                char b[256];
                return sb_infer_fail(I, SB_ERR_VALUE, "cannot squeeze axis %d of shape %s", idx[k],
                                     shape_str(&x->info, b, sizeof b));
            }
            drop[idx[k]] = 1;
        }
    }
    sb_vinfo *y = &I->out[0];
    y->dtype = x->info.dtype;
    y->rank = 0;
    for (int d = 0; d < r; ++d)
        if (!drop[d]) y->dims[y->rank++] = x->info.dims[d];
    return SB_OK;
}

static int unsqueeze_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    int64_t axes[LIST_CAP];
    size_t n;
    int have;
    int status = squeeze_axes(I, axes, &n, &have);
    if (status) return status;
    if (!have) return sb_infer_fail(I, SB_ERR_VALUE, "axes are required");
    int r = x->info.rank + (int)n;
    int idx[LIST_CAP];
    if ((status = norm_axes(I, axes, n, r, "axes", idx))) return status;
    if (r > SB_MAX_RANK)
        return sb_infer_fail(I, SB_ERR_VALUE, "the output's rank %d is above %d", r, SB_MAX_RANK);
    unsigned char fresh[SB_MAX_RANK] = {0};
    for (size_t k = 0; k < n; ++k) fresh[idx[k]] = 1;
    sb_vinfo *y = &I->out[0];
    y->dtype = x->info.dtype;
    y->rank = r;
    for (int d = 0, from = 0; d < r; ++d) y->dims[d] = fresh[d] ? 1 : x->info.dims[from++];
    return SB_OK;
}

/* ---- Dropout --------------------------------------------------------------------- */

static int dropout_load(sb_load_ctx *L)
{
    /* inference: the input passes through; `seed` draws nothing without training */
    sb_attr_ignore(L, "seed");
    sb_attr_ignore(L, "is_test");
    if (L->opset < 12 && sb_has_attr(L, "ratio")) (void)sb_attr_float(L, "ratio", 0.0f);
    if (L->status) return L->status;
    return sb_load_only_first_output(L, "mask");
}

static int dropout_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    if (I->n_in > 2 && I->in[2]) {
        const sb_tval *t = sb_infer_int(I, 2, "training_mode");
        if (!t) return SB_ERR_TYPE;
        if (lacks_data(t)) return SB_NEEDS_VALUES;
        int64_t n = sb_vinfo_numel(&t->info);
        for (int64_t i = 0; i < n; ++i)
            if (sb_int_at(t, i))
                return sb_infer_fail(I, SB_ERR_VALUE, "training_mode=True is not supported "
                                     "(inference only)");
    }
    I->out[0] = x->info;
    fill_unused_outputs(I, 1);
    return SB_OK;
}

/* ---- ConstantOfShape ------------------------------------------------------------- */

typedef struct { int dtype; uint8_t value[8]; } fill_state;

static int constant_of_shape_load(sb_load_ctx *L)
{
    fill_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    sb_tval t;
    memset(&t, 0, sizeof t);
    if (sb_attr_tensor(L, "value", &t)) {
        if (sb_vinfo_numel(&t.info) != 1)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute 'value' must hold one element");
        s->dtype = t.info.dtype;
        memcpy(s->value, t.data, (size_t)sb_dtype_size(t.info.dtype));
    } else {
        s->dtype = SB_DT_FLOAT;   /* float32 0.0 */
    }
    return L->status;
}

static int constant_of_shape_infer(sb_infer_ctx *I)
{
    const fill_state *s = I->state;
    int64_t dims[LIST_CAP];
    size_t n;
    int status = int_list(I, 0, "input", dims, LIST_CAP, &n);
    if (status) return status;
    for (size_t k = 0; k < n; ++k)
        if (dims[k] < 0) {
            char b[600];
            return sb_infer_fail(I, SB_ERR_VALUE, "negative dimension in %s",
                                 py_tuple(b, sizeof b, dims, n));
        }
    if (n > SB_MAX_RANK)
        return sb_infer_fail(I, SB_ERR_VALUE, "the output's rank %zu is above %d", n, SB_MAX_RANK);
    I->out[0].dtype = s->dtype;
    I->out[0].rank = (int)n;
    for (size_t k = 0; k < n; ++k) I->out[0].dims[k] = dims[k];
    return SB_OK;
}

static int constant_of_shape_run(sb_run_ctx *R)
{
    const fill_state *s = R->state;
    sb_tval *y = R->out[0];
    sb_k_fill(y->data, sb_vinfo_numel(&y->info), sb_dtype_size(s->dtype), s->value);
    return SB_OK;
}

/* ---- Cast, CastLike -------------------------------------------------------------- */

typedef struct { int to; } cast_state;

static int castable(int64_t to)
{
    return to == SB_DT_FLOAT || (to >= 0 && to < 64 && sb_dtype_is_int((int)to));
}

static int cast_load(sb_load_ctx *L)
{
    cast_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    int64_t to = sb_attr_int_req(L, "to");
    sb_attr_ignore(L, "saturate");   /* only for float8 targets, which are refused */
    if (L->status) return L->status;
    if (!castable(to)) {
        char b[32];
        const char *name = to >= 0 && to < 64 ? dtype_text((int)to, b, sizeof b) : NULL;
        if (!name) snprintf(b, sizeof b, "%lld", (long long)to), name = b;
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "Cast to %s is not supported (float32, integer "
                            "and bool tensors are)", name);
    }
    s->to = (int)to;
    return L->status;
}

static int cast_like_load(sb_load_ctx *L)
{
    sb_attr_ignore(L, "saturate");
    return L->status;
}

static int cast_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    I->out[0] = x->info;
    I->out[0].dtype = ((const cast_state *)I->state)->to;
    return SB_OK;
}

static int cast_like_infer(sb_infer_ctx *I)
{
    const sb_tval *like = sb_infer_input(I, 1, "target_type");
    if (!like) return SB_ERR_VALUE;
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    I->out[0] = x->info;
    I->out[0].dtype = like->info.dtype;
    return SB_OK;
}

/* A C-style conversion of a float32 value to an integer type (Python's
 * int_of_float): truncation toward zero; NaN, infinities and values beyond
 * the type give its minimum (signed) or 0 (unsigned), except for the 8- and
 * 16-bit types, which wrap a truncated value (one beyond int64 is a
 * multiple of 2^40: 0). bool: x != 0, NaN true. */
static void store_float_as_int(void *data, int to, int64_t i, float x)
{
    if (to == SB_DT_BOOL) {
        ((uint8_t *)data)[i] = x != 0.0f;
        return;
    }
    int is_signed = sb_dtype_is_signed(to);
    if (isnan(x) || isinf(x)) {
        int64_t lo = to == SB_DT_INT64 ? INT64_MIN : to == SB_DT_INT32 ? INT32_MIN
                     : to == SB_DT_INT16 ? INT16_MIN : to == SB_DT_INT8 ? INT8_MIN : 0;
        sb_int_store(data, to, i, is_signed ? lo : 0);
        return;
    }
    double t = trunc((double)x);
    switch (to) {
    case SB_DT_INT64:
        ((int64_t *)data)[i] = t >= -9223372036854775808.0 && t < 9223372036854775808.0
                               ? (int64_t)t : INT64_MIN;
        return;
    case SB_DT_UINT64:
        ((uint64_t *)data)[i] = t >= 0.0 && t < 18446744073709551616.0 ? (uint64_t)t : 0;
        return;
    case SB_DT_INT32:
        ((int32_t *)data)[i] = t >= -2147483648.0 && t < 2147483648.0 ? (int32_t)t : INT32_MIN;
        return;
    case SB_DT_UINT32:
        ((uint32_t *)data)[i] = t >= 0.0 && t < 4294967296.0 ? (uint32_t)t : 0;
        return;
    default:   /* int8, uint8, int16, uint16: wrapped */
        sb_int_store(data, to, i, fabs(t) < 9223372036854775808.0 ? (int64_t)t : 0);
        return;
    }
}

static void cast_values(const sb_tval *x, sb_tval *y)
{
    int64_t n = sb_vinfo_numel(&x->info);
    int from = x->info.dtype, to = y->info.dtype;
    if (n <= 0) return;
    if (from == to) {
        if (y->data != x->data) memcpy(y->data, x->data, (size_t)(n * sb_dtype_size(to)));
        return;
    }
    /* the common conversions as typed loops (the same values as below) */
#define CAST_LOOP(TI, TO, EXPR)                                                   \
    do {                                                                          \
        const TI *in = x->data;                                                   \
        TO *out = y->data;                                                        \
        for (int64_t i = 0; i < n; ++i) out[i] = EXPR;                            \
        return;                                                                   \
    } while (0)
    if (to == SB_DT_INT64 && from == SB_DT_INT32) CAST_LOOP(int32_t, int64_t, (int64_t)in[i]);
    if (to == SB_DT_INT64 && (from == SB_DT_UINT8 || from == SB_DT_BOOL))
        CAST_LOOP(uint8_t, int64_t, (int64_t)in[i]);
    if (to == SB_DT_INT32 && from == SB_DT_INT64)
        CAST_LOOP(int64_t, int32_t, (int32_t)(uint32_t)(uint64_t)in[i]);   /* wraps */
    if (to == SB_DT_FLOAT && (from == SB_DT_UINT8 || from == SB_DT_BOOL))
        CAST_LOOP(uint8_t, float, (float)in[i]);   /* exact */
#undef CAST_LOOP
    if (to == SB_DT_FLOAT) {   /* one correct rounding of the integer */
        float *out = y->data;
        if (from == SB_DT_UINT64)
            for (int64_t i = 0; i < n; ++i) out[i] = (float)((const uint64_t *)x->data)[i];
        else
            for (int64_t i = 0; i < n; ++i) out[i] = (float)sb_int_at(x, i);
        return;
    }
    if (from == SB_DT_FLOAT) {
        const float *in = x->data;
        for (int64_t i = 0; i < n; ++i) store_float_as_int(y->data, to, i, in[i]);
        return;
    }
    for (int64_t i = 0; i < n; ++i) sb_int_store(y->data, to, i, sb_int_at(x, i));   /* wraps */
}

static int cast_run(sb_run_ctx *R)
{
    cast_values(R->in[0], R->out[0]);
    return SB_OK;
}

/* ---- Range ----------------------------------------------------------------------- */

/* An integer element's exact value: sign and magnitude. */
static void int_value(const sb_tval *t, int64_t i, int *neg, uint64_t *mag)
{
    if (t->info.dtype == SB_DT_UINT64) {
        *neg = 0, *mag = sb_int_at_u(t, i);
        return;
    }
    int64_t v = sb_int_at(t, i);
    *neg = v < 0;
    *mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* ceil((hi * 2^64 + lo) / d) for d > 0; 0 when it is above 2^63 - 1. */
static int ceil_div_128(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *out)
{
    uint64_t qhi = 0, qlo = 0, r = 0;
    for (int bit = 127; bit >= 0; --bit) {
        uint64_t top = r >> 63;
        uint64_t next = bit >= 64 ? (hi >> (bit - 64)) & 1 : (lo >> bit) & 1;
        r = (r << 1) | next;
        if (top || r >= d) {
            r -= d;
            if (bit >= 64) qhi |= (uint64_t)1 << (bit - 64);
            else qlo |= (uint64_t)1 << bit;
        }
    }
    if (r && ++qlo == 0) ++qhi;
    if (qhi || qlo > (uint64_t)INT64_MAX) return 0;
    *out = qlo;
    return 1;
}

/* Range's element count over integers: max(0, ceil((limit - start) / delta)),
 * exactly; -1 when it is too large. */
static int64_t int_range_count(const sb_tval *a, const sb_tval *b, const sb_tval *d)
{
    int fn, sn, dn;
    uint64_t fm, sm, dm;
    int_value(a, 0, &fn, &fm);
    int_value(b, 0, &sn, &sm);
    int_value(d, 0, &dn, &dm);
    int neg;
    uint64_t mag, carry = 0;
    if (sn == fn) {   /* limit - start, both of one sign */
        if (sm >= fm) mag = sm - fm, neg = sn;
        else mag = fm - sm, neg = !sn;
    } else {
        mag = sm + fm;
        carry = mag < sm;
        neg = sn;
    }
    if ((mag == 0 && !carry) || neg != dn) return 0;
    uint64_t count;
    if (!ceil_div_128(carry, mag, dm, &count)) return -1;
    return (int64_t)count;
}

static int range_infer(sb_infer_ctx *I)
{
    static const char *const what[3] = {"start", "limit", "delta"};
    const sb_tval *t[3];
    int all_int = 1;
    for (int k = 0; k < 3; ++k) {
        if (!(t[k] = sb_infer_input(I, k, what[k]))) return SB_ERR_VALUE;
        all_int &= sb_dtype_is_int(t[k]->info.dtype);
    }
    if (!all_int)
        for (int k = 0; k < 3; ++k)
            if (!sb_infer_float(I, k, what[k])) return SB_ERR_TYPE;
    for (int k = 0; k < 3; ++k)
        if (lacks_data(t[k])) return SB_NEEDS_VALUES;
    for (int k = 0; k < 3; ++k)
        if (sb_vinfo_numel(&t[k]->info) == 0)
            return sb_infer_fail(I, SB_ERR_INDEX, "list index out of range");
    int64_t count;
    if (all_int) {
        int neg;
        uint64_t mag;
        int_value(t[2], 0, &neg, &mag);
        if (mag == 0) return sb_infer_fail(I, SB_ERR_VALUE, "delta is 0");
        count = int_range_count(t[0], t[1], t[2]);
        I->out[0].dtype = t[0]->info.dtype;
    } else {
        float start = *(const float *)t[0]->data, limit = *(const float *)t[1]->data;
        float delta = *(const float *)t[2]->data;
        if (delta == 0.0f || !isfinite(start) || !isfinite(limit) || !isfinite(delta))
            return sb_infer_fail(I, SB_ERR_VALUE, "start, limit and delta must be finite, delta "
                                 "nonzero");
        double n = ceil(((double)limit - (double)start) / (double)delta);
        count = n <= 0.0 ? 0 : n > (double)SB_MAX_ELEMENTS ? -1 : (int64_t)n;
        I->out[0].dtype = SB_DT_FLOAT;
    }
    if (count < 0 || count > SB_MAX_ELEMENTS)
        return sb_infer_fail(I, SB_ERR_VALUE, "the output would have more than 2^40 elements");
    I->out[0].rank = 1;
    I->out[0].dims[0] = count;
    return SB_OK;
}

static int range_run(sb_run_ctx *R)
{
    sb_tval *y = R->out[0];
    int64_t n = y->info.dims[0];
    if (n == 0) return SB_OK;
    if (y->info.dtype != SB_DT_FLOAT) {
        uint64_t first = (uint64_t)sb_int_at(R->in[0], 0), step = (uint64_t)sb_int_at(R->in[2], 0);
        for (int64_t i = 0; i < n; ++i)
            sb_int_store(y->data, y->info.dtype, i, (int64_t)(first + (uint64_t)i * step));
        return SB_OK;
    }
    /* output[i] = start + i * delta: one float32 multiply and one add, in
     * exact mode whatever the session's (as Python's runner computes it) */
    float start = *(const float *)R->in[0]->data, delta = *(const float *)R->in[2]->data;
    float *out = y->data;
    for (int64_t i = 0; i < n; ++i) out[i] = (float)i;
    sb_run_ctx E = *R;
    E.mode = SB_MODE_EXACT;
    int status = sb_k_binary_scalar(&E, SB_BIN_MUL, y, delta, y);
    if (!status) status = sb_k_binary_scalar(&E, SB_BIN_ADD, y, start, y);
    return status ? sb_run_fail(R, status, "the float32 kernels failed") : SB_OK;
}

/* ---- Concat ---------------------------------------------------------------------- */

static int concat_load(sb_load_ctx *L)
{
    axis_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int_req(L, "axis");
    return L->status;
}

static int concat_infer(sb_infer_ctx *I)
{
    const axis_state *s = I->state;
    const sb_tval *first = NULL;
    for (int i = 0; i < I->n_in && !first; ++i) first = I->in[i];
    if (!first) return sb_infer_fail(I, SB_ERR_INDEX, "list index out of range");
    int r = first->info.rank, a;
    int status = sb_infer_axis(I, s->axis, r, "axis", &a);
    if (status) return status;
    int all_float = 1, any_float = 0;
    for (int i = 0; i < I->n_in; ++i) {
        const sb_tval *t = I->in[i];
        if (!t) continue;
        int fits = t->info.rank == r;
        for (int d = 0; d < r && fits; ++d) fits = d == a || t->info.dims[d] == first->info.dims[d];
        if (!fits) {
            char text[1024], one[256];
            size_t at = (size_t)snprintf(text, sizeof text, "[");
            for (int k = 0, m = 0; k < I->n_in && at < sizeof text; ++k) {
                if (!I->in[k]) continue;
                at += (size_t)snprintf(text + at, sizeof text - at, "%s%s", m++ ? ", " : "",
                                       shape_str(&I->in[k]->info, one, sizeof one));
            }
            if (at < sizeof text) snprintf(text + at, sizeof text - at, "]");
            return sb_infer_fail(I, SB_ERR_VALUE, "shapes %s do not concatenate along axis %d",
                                 text, a);
        }
        int f = t->info.dtype == SB_DT_FLOAT;
        all_float &= f, any_float |= f;
    }
    if (r == 0) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
    if (!all_float && any_float)
        return sb_infer_fail(I, SB_ERR_TYPE, "cannot concatenate float32 with integer tensors");
    sb_vinfo *y = &I->out[0];
    *y = first->info;
    y->dims[a] = 0;
    for (int i = 0; i < I->n_in; ++i) {
        if (!I->in[i]) continue;
        y->dims[a] += I->in[i]->info.dims[a];
        if (y->dims[a] > SB_MAX_ELEMENTS)
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
    }
    return SB_OK;
}

static int concat_run(sb_run_ctx *R)
{
    const axis_state *s = R->state;
    sb_tval *y = R->out[0];
    int r = y->info.rank;
    int a = (int)(s->axis < 0 ? s->axis + r : s->axis);
    int size = sb_dtype_size(y->info.dtype);
    int64_t ys[SB_MAX_RANK], xs[SB_MAX_RANK];
    sb_c_strides(&y->info, ys);
    int64_t at = 0;
    int64_t inner_after = prod_dims(y->info.dims, a + 1, r), inner_out = inner_after * y->info.dims[a];
    for (int i = 0; i < R->n_in; ++i) {
        const sb_tval *x = R->in[i];
        if (!x) continue;
        int64_t n = sb_vinfo_numel(&x->info);
        if (n > 0 && x->info.dtype == y->info.dtype) {
            sb_c_strides(&x->info, xs);
            int status = copy_any(R->threads, r, x->info.dims, size, x->data, xs,
                                  (uint8_t *)y->data + at * ys[a] * size, ys);
            if (status) return sb_run_fail(R, status, "the copy failed");
        } else if (n > 0) {   /* integers of another type: their values, wrapped */
            int64_t inner = inner_after * x->info.dims[a];
            for (int64_t k = 0; k < n; ++k) {
                int64_t o = k / inner, w = k % inner;
                sb_int_store(y->data, y->info.dtype, o * inner_out + at * inner_after + w,
                             sb_int_at(x, k));
            }
        }
        at += x->info.dims[a];
    }
    return SB_OK;
}

/* ---- Split ----------------------------------------------------------------------- */

typedef struct {
    int opset;
    int64_t axis;
    int has_num;
    int64_t num_outputs;
    ints_attr split;
} split_state;

static int split_load(sb_load_ctx *L)
{
    split_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->opset = L->opset;
    s->axis = sb_attr_int(L, "axis", 0);
    if (L->opset < 13 && read_ints_attr(L, "split", 0, &s->split)) return L->status;
    if (L->opset >= 18) {
        s->has_num = sb_has_attr(L, "num_outputs");
        s->num_outputs = sb_attr_int(L, "num_outputs", 0);
    }
    return L->status;
}

/* The axis and the outputs' lengths along it (at most LIST_CAP of them). */
static int split_sizes(sb_infer_ctx *I, const sb_tval *x, int *axis, int64_t *split, size_t *n)
{
    const split_state *s = I->state;
    int r = x->info.rank, a;
    int status = sb_infer_axis(I, s->axis, r, "axis", &a);
    if (status) return status;
    if (r == 0) return sb_infer_fail(I, SB_ERR_INDEX, "tuple index out of range");
    int64_t size = x->info.dims[a];
    int given = 0;
    if (s->opset < 13 && s->split.has) {
        given = 1, *n = s->split.n;
        memcpy(split, s->split.v, s->split.n * sizeof *split);
    } else if (s->opset >= 13 && I->n_in > 1 && I->in[1]) {
        given = 1;
        if ((status = int_list(I, 1, "split", split, LIST_CAP, n))) return status;
    }
    size_t listed;
    if (!given) {
        int64_t parts = s->has_num && s->num_outputs ? s->num_outputs : I->n_out;
        if (parts == 0) return sb_infer_fail(I, SB_ERR_VALUE, "integer division or modulo by zero");
        /* -(-size // parts): a ceiling (no part at all for a negative count) */
        int64_t chunk = parts > 0 ? (size + parts - 1) / parts : 0;
        *n = parts > 0 ? (size_t)parts : 0;
        listed = *n < LIST_CAP ? *n : LIST_CAP;
        for (size_t k = 0; k < listed; ++k) {
            int64_t left = size - (int64_t)k * chunk;
            split[k] = chunk < (left > 0 ? left : 0) ? chunk : (left > 0 ? left : 0);
        }
    } else {
        listed = *n;
    }
    uint64_t sum = 0;
    int bad = *n != (size_t)I->n_out;
    for (size_t k = 0; k < listed && !bad; ++k) {
        bad = split[k] < 0;
        sum += (uint64_t)split[k];
        if (sum > (uint64_t)INT64_MAX) bad = 1;
    }
    if (bad || (int64_t)sum != size) {
        char b[600], sh[256];
        return sb_infer_fail(I, SB_ERR_VALUE, "split %s does not cut dimension %d of %s into %d "
                             "outputs", py_list(b, sizeof b, split, listed), a,
                             shape_str(&x->info, sh, sizeof sh), I->n_out);
    }
    *axis = a;
    return SB_OK;
}

static int split_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    int64_t split[LIST_CAP];
    size_t n;
    int a;
    int status = split_sizes(I, x, &a, split, &n);
    if (status) return status;
    for (int j = 0; j < I->n_out; ++j) {
        I->out[j] = x->info;
        I->out[j].dims[a] = split[j];
    }
    return SB_OK;
}

static int split_run(sb_run_ctx *R)
{
    sb_infer_ctx I;
    sb_vinfo outs[16];
    infer_from_run(R, &I, outs);
    const sb_tval *x = R->in[0];
    int64_t split[LIST_CAP];
    size_t n;
    int a;
    int status = split_sizes(&I, x, &a, split, &n);
    if (status) return status;
    int size = sb_dtype_size(x->info.dtype);
    int64_t xs[SB_MAX_RANK], ys[SB_MAX_RANK];
    sb_c_strides(&x->info, xs);
    int64_t at = 0;
    for (int j = 0; j < R->n_out; ++j) {
        sb_tval *y = R->out[j];
        if (y && sb_vinfo_numel(&y->info) > 0) {
            sb_c_strides(&y->info, ys);
            status = copy_any(R->threads, x->info.rank, y->info.dims, size,
                              (const uint8_t *)x->data + at * xs[a] * size, xs, y->data, ys);
            if (status) return sb_run_fail(R, status, "the copy failed");
        }
        at += split[j];
    }
    return SB_OK;
}

/* ---- Slice ----------------------------------------------------------------------- */

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
    infer_from_run(R, &I, outs);
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

/* ---- Transpose ------------------------------------------------------------------- */

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
                             py_list(b, sizeof b, s->perm.v, s->perm.n), rank);
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
    infer_from_run(R, &I, outs);
    const sb_tval *x = R->in[0];
    int perm[SB_MAX_RANK];
    int status = transpose_perm(&I, x->info.rank, perm);
    if (status) return status;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    status = permute_view(R->threads, sb_dtype_size(x->info.dtype), x->info.rank, x->info.dims, perm,
                          x->data, R->out[0]->data);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

/* ---- DepthToSpace, SpaceToDepth -------------------------------------------------- */

typedef struct { int64_t b; int crd; } block_state;

static int depth_to_space_load(sb_load_ctx *L)
{
    block_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->b = sb_attr_int_req(L, "blocksize");
    const char *mode = sb_attr_str(L, "mode", "DCR");
    if (L->status) return L->status;
    if (s->b < 1 || (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "blocksize %lld and mode '%s' are not supported",
                            (long long)s->b, mode);
    s->crd = strcmp(mode, "CRD") == 0;
    return L->status;
}

static int space_to_depth_load(sb_load_ctx *L)
{
    block_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->b = sb_attr_int_req(L, "blocksize");
    if (L->status) return L->status;
    if (s->b < 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "blocksize %lld is not supported", (long long)s->b);
    return L->status;
}

/* The 6-D view of x, the permutation and the output's shape. */
static int block_plan(sb_infer_ctx *I, const sb_tval *x, int to_space, int64_t *view, int *perm,
                      sb_vinfo *y)
{
    const block_state *s = I->state;
    int64_t b = s->b, bb = 0;
    char sh[256];
    if (to_space) {
        int fits = mul_size(b, b, &bb) && x->info.rank == 4 && x->info.dims[1] % bb == 0;
        if (!fits) {
            if (!mul_size(b, b, &bb))
                return sb_infer_fail(I, SB_ERR_VALUE, "input %s is not (N, C, H, W) with C a "
                                     "multiple of the blocksize squared",
                                     shape_str(&x->info, sh, sizeof sh));
            return sb_infer_fail(I, SB_ERR_VALUE, "input %s is not (N, C, H, W) with C a multiple "
                                 "of %lld", shape_str(&x->info, sh, sizeof sh), (long long)bb);
        }
    } else if (x->info.rank != 4 || x->info.dims[2] % b || x->info.dims[3] % b) {
        return sb_infer_fail(I, SB_ERR_VALUE, "input %s is not (N, C, H, W) with H and W multiples "
                             "of %lld", shape_str(&x->info, sh, sizeof sh), (long long)b);
    }
    int64_t n = x->info.dims[0], c = x->info.dims[1], h = x->info.dims[2], w = x->info.dims[3];
    y->dtype = x->info.dtype;
    y->rank = 4;
    y->dims[0] = n;
    if (to_space) {
        int64_t cb = c / bb;
        if (!mul_size(h, b, &y->dims[2]) || !mul_size(w, b, &y->dims[3]))
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
        y->dims[1] = cb;
        if (!s->crd) {   /* (n, b, b, c', h, w) -> (n, c', h, b, w, b) */
            int64_t v[6] = {n, b, b, cb, h, w};
            int p[6] = {0, 3, 4, 1, 5, 2};
            memcpy(view, v, sizeof v), memcpy(perm, p, sizeof p);
        } else {         /* (n, c', b, b, h, w) -> (n, c', h, b, w, b) */
            int64_t v[6] = {n, cb, b, b, h, w};
            int p[6] = {0, 1, 4, 2, 5, 3};
            memcpy(view, v, sizeof v), memcpy(perm, p, sizeof p);
        }
    } else {             /* (n, c, h', b, w', b) -> (n, b, b, c, h', w') */
        int64_t v[6] = {n, c, h / b, b, w / b, b};
        int p[6] = {0, 3, 5, 1, 2, 4};
        memcpy(view, v, sizeof v), memcpy(perm, p, sizeof p);
        if (!mul_size(b, b, &bb) || !mul_size(c, bb, &y->dims[1]))
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
        y->dims[2] = h / b, y->dims[3] = w / b;
    }
    return SB_OK;
}

static int block_infer(sb_infer_ctx *I, int to_space)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    int64_t view[6];
    int perm[6];
    return block_plan(I, x, to_space, view, perm, &I->out[0]);
}

static int block_run(sb_run_ctx *R, int to_space)
{
    sb_infer_ctx I;
    sb_vinfo outs[16];
    infer_from_run(R, &I, outs);
    const sb_tval *x = R->in[0];
    int64_t view[6];
    int perm[6];
    int status = block_plan(&I, x, to_space, view, perm, &outs[0]);
    if (status) return status;
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    status = permute_view(R->threads, sb_dtype_size(x->info.dtype), 6, view, perm, x->data,
                          R->out[0]->data);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

static int depth_to_space_infer(sb_infer_ctx *I) { return block_infer(I, 1); }
static int depth_to_space_run(sb_run_ctx *R) { return block_run(R, 1); }
static int space_to_depth_infer(sb_infer_ctx *I) { return block_infer(I, 0); }
static int space_to_depth_run(sb_run_ctx *R) { return block_run(R, 0); }

/* ---- Gather ---------------------------------------------------------------------- */

static int gather_load(sb_load_ctx *L)
{
    axis_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", 0);
    return L->status;
}

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

/* ---- Expand, Tile ---------------------------------------------------------------- */

static int expand_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    int64_t target[LIST_CAP];
    size_t n;
    int status = int_list(I, 1, "shape", target, LIST_CAP, &n);
    if (status) return status;
    if (n > SB_MAX_RANK)
        return sb_infer_fail(I, SB_ERR_VALUE, "shape has %zu dimensions, at most %d are supported", n,
                             SB_MAX_RANK);
    sb_vinfo t;
    memset(&t, 0, sizeof t);
    t.rank = (int)n;
    for (size_t k = 0; k < n; ++k) t.dims[k] = target[k];
    const sb_vinfo *shapes[2] = {&x->info, &t};
    sb_vinfo *y = &I->out[0];
    if (sb_broadcast(shapes, 2, y)) {
        char text[600];
        sb_broadcast_error_text(shapes, 2, text, sizeof text);
        return sb_infer_fail(I, SB_ERR_VALUE, "%s", text);
    }
    for (int d = 0; d < y->rank; ++d)
        if (y->dims[d] < 0)
            return sb_infer_fail(I, SB_ERR_VALUE, "negative dimensions are not allowed");
    y->dtype = x->info.dtype;
    return SB_OK;
}

static int expand_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    if (sb_vinfo_numel(&y->info) == 0) return SB_OK;
    int64_t xs[SB_MAX_RANK], ys[SB_MAX_RANK];
    sb_broadcast_strides(&x->info, &y->info, xs);
    sb_c_strides(&y->info, ys);
    int status = copy_any(R->threads, y->info.rank, y->info.dims, sb_dtype_size(y->info.dtype), x->data,
                          xs, y->data, ys);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

static int tile_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    int64_t reps[LIST_CAP];
    size_t n;
    int status = int_list(I, 1, "repeats", reps, LIST_CAP, &n);
    if (status) return status;
    int r = x->info.rank, bad = n != (size_t)r;
    for (size_t k = 0; k < n && !bad; ++k) bad = reps[k] < 0;
    if (bad) {
        char b[600];
        return sb_infer_fail(I, SB_ERR_VALUE, "repeats %s do not match rank %d",
                             py_list(b, sizeof b, reps, n), r);
    }
    I->out[0] = x->info;
    for (int d = 0; d < r; ++d)
        if (!mul_size(reps[d], x->info.dims[d], &I->out[0].dims[d]))
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
    return SB_OK;
}

static int tile_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    if (sb_vinfo_numel(&y->info) == 0) return SB_OK;
    /* an expand over interleaved (repeat, dim) axes */
    int r = x->info.rank;
    int64_t own[SB_MAX_RANK], shape[WALK_RANK], xs[WALK_RANK], ys[WALK_RANK];
    sb_c_strides(&x->info, own);
    for (int d = 0; d < r; ++d) {
        shape[2 * d] = x->info.dims[d] ? y->info.dims[d] / x->info.dims[d] : 0;
        shape[2 * d + 1] = x->info.dims[d];
        xs[2 * d] = 0, xs[2 * d + 1] = own[d];
    }
    int64_t step = 1;
    for (int d = 2 * r - 1; d >= 0; --d) ys[d] = step, step *= shape[d];
    int status = copy_any(R->threads, 2 * r, shape, sb_dtype_size(x->info.dtype), x->data, xs,
                          y->data, ys);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

/* ---- Pad ------------------------------------------------------------------------- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct {
    int opset, mode;
    const char *mode_name;
    ints_attr pads;              /* before opset 11 */
    float value;                 /* before opset 11 */
} pad_state;

static int pad_load(sb_load_ctx *L)
{
    pad_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->opset = L->opset;
    const char *mode = sb_attr_str(L, "mode", "constant");
    if (L->status) return L->status;
    static const char *const names[] = {"constant", "reflect", "edge", "wrap"};
    int count = L->opset >= 19 ? 4 : 3;
    s->mode = -1;
    for (int k = 0; k < count; ++k)
        if (strcmp(mode, names[k]) == 0) s->mode = k;
    if (s->mode < 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "mode '%s' is not supported (%s are)", mode,
                            count == 4 ? "constant, reflect, edge, wrap" : "constant, reflect, edge");
    s->mode_name = names[s->mode];
    if (L->opset < 11) {
        if (read_ints_attr(L, "pads", 1, &s->pads)) return L->status;
        s->value = sb_attr_float(L, "value", 0.0f);
    }
    return L->status;
}

/* Pads before and after every dimension of x. */
static int pad_amounts(sb_infer_ctx *I, const sb_tval *x, int64_t *before, int64_t *after)
{
    const pad_state *s = I->state;
    int r = x->info.rank, status;
    int64_t pads[LIST_CAP];
    size_t np = 0, na = (size_t)r;
    int axes[LIST_CAP];
    for (int d = 0; d < r; ++d) axes[d] = d;
    if (s->opset < 11) {
        np = s->pads.n;
        memcpy(pads, s->pads.v, np * sizeof *pads);
    } else {
        if ((status = int_list(I, 1, "pads", pads, LIST_CAP, &np))) return status;
        if (I->n_in > 2 && I->in[2] && sb_vinfo_numel(&I->in[2]->info) == 0)
            return sb_infer_fail(I, SB_ERR_INDEX, "list index out of range");
        if (I->n_in > 3 && I->in[3]) {
            int64_t ax[LIST_CAP];
            if ((status = int_list(I, 3, "axes", ax, LIST_CAP, &na))) return status;
            if ((status = norm_axes(I, ax, na, r, "axes", axes))) return status;
        }
    }
    if (np != 2 * na) {
        char b[600];
        return sb_infer_fail(I, SB_ERR_VALUE, "pads %s do not match %zu axes",
                             py_list(b, sizeof b, pads, np), na);
    }
    for (int d = 0; d < r; ++d) before[d] = after[d] = 0;
    for (size_t k = 0; k < na; ++k) {
        if (axes[k] >= r) return sb_infer_fail(I, SB_ERR_INDEX, "list assignment index out of range");
        before[axes[k]] = pads[k], after[axes[k]] = pads[k + na];
    }
    const int64_t limit = (int64_t)1 << 61;
    for (int d = 0; d < r; ++d)
        if (before[d] < -limit || before[d] > limit || after[d] < -limit || after[d] > limit) {
            char b[600];
            return sb_infer_fail(I, SB_ERR_VALUE, "pads %s are too large",
                                 py_list(b, sizeof b, pads, np));
        }
    /* the messages Python's runner gives, in its order */
    char sh[256], b[600];
    int crop = 0;
    for (int d = 0; d < r; ++d) crop |= x->info.dims[d] + before[d] + after[d] < 0;
    if (s->mode != PAD_CONSTANT) {
        if (crop)
            return sb_infer_fail(I, SB_ERR_VALUE, "pads crop %s below zero",
                                 shape_str(&x->info, sh, sizeof sh));
        for (int d = 0; d < r; ++d)
            if (x->info.dims[d] == 0 && (before[d] > 0 || after[d] > 0))
                return sb_infer_fail(I, SB_ERR_VALUE, "mode '%s' cannot pad an empty axis of %s",
                                     s->mode_name, shape_str(&x->info, sh, sizeof sh));
    } else if (x->info.dtype != SB_DT_FLOAT) {
        for (int d = 0; d < r; ++d)
            if (before[d] < 0 || after[d] < 0)
                return sb_infer_fail(I, SB_ERR_VALUE, "negative pads on integer tensors are not "
                                     "supported");
    } else if (crop) {
        return sb_infer_fail(I, SB_ERR_VALUE, "pads %s crop %s below zero",
                             py_list(b, sizeof b, pads, np), shape_str(&x->info, sh, sizeof sh));
    }
    return SB_OK;
}

static int pad_infer(sb_infer_ctx *I)
{
    const pad_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    int64_t before[SB_MAX_RANK], after[SB_MAX_RANK];
    int status = pad_amounts(I, x, before, after);
    if (status) return status;
    sb_vinfo *y = &I->out[0];
    *y = x->info;
    int64_t columns = 0;
    for (int d = 0; d < x->info.rank; ++d) {
        y->dims[d] = x->info.dims[d] + before[d] + after[d];
        if (y->dims[d] > SB_MAX_ELEMENTS)
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
        columns += y->dims[d];
    }
    if (s->mode != PAD_CONSTANT && sb_vinfo_numel(y) > 0) I->workspace = columns * 8;
    return SB_OK;
}

/* The input index that output index o copies along one axis (reflect, edge, wrap). */
static int64_t pad_source(int64_t o, int64_t before, int64_t size, int mode)
{
    int64_t s = o - before;
    if (s >= 0 && s < size) return s;
    if (mode == PAD_EDGE) return s < 0 ? 0 : size - 1;
    if (mode == PAD_WRAP) {
        int64_t m = s % size;
        return m < 0 ? m + size : m;
    }
    if (size == 1) return 0;   /* reflect: a single element mirrors onto itself */
    int64_t period = 2 * (size - 1);
    s %= period;
    if (s < 0) s += period;
    return s < size ? s : period - s;
}

static int pad_by_index(sb_run_ctx *R, const sb_tval *x, const int64_t *before, sb_tval *y)
{
    const pad_state *s = R->state;
    int r = y->info.rank, esize = sb_dtype_size(y->info.dtype);
    int64_t total = sb_vinfo_numel(&y->info);
    if (total == 0) return SB_OK;
    if (r == 0) {
        memcpy(y->data, x->data, (size_t)esize);
        return SB_OK;
    }
    int64_t own[SB_MAX_RANK], *cols[SB_MAX_RANK];
    sb_c_strides(&x->info, own);
    int64_t *at = R->workspace;
    for (int d = 0; d < r; ++d) {
        cols[d] = at;
        for (int64_t o = 0; o < y->info.dims[d]; ++o)
            cols[d][o] = pad_source(o, before[d], x->info.dims[d], s->mode) * own[d];
        at += y->info.dims[d];
    }
    int64_t idx[SB_MAX_RANK] = {0}, width = y->info.dims[r - 1], rows = total / width;
    const int64_t *last = cols[r - 1];
    const uint8_t *src = x->data;
    uint8_t *dst = y->data;
    for (int64_t row = 0; row < rows; ++row) {
        int64_t base = 0;
        for (int d = 0; d < r - 1; ++d) base += cols[d][idx[d]];
        switch (esize) {
        case 1:
            for (int64_t k = 0; k < width; ++k) dst[k] = src[base + last[k]];
            break;
        case 2:
            for (int64_t k = 0; k < width; ++k)
                ((uint16_t *)dst)[k] = ((const uint16_t *)src)[base + last[k]];
            break;
        case 4:
            for (int64_t k = 0; k < width; ++k)
                ((uint32_t *)dst)[k] = ((const uint32_t *)src)[base + last[k]];
            break;
        default:
            for (int64_t k = 0; k < width; ++k)
                ((uint64_t *)dst)[k] = ((const uint64_t *)src)[base + last[k]];
            break;
        }
        dst += width * esize;
        for (int d = r - 2; d >= 0; --d) {
            if (++idx[d] < y->info.dims[d]) break;
            idx[d] = 0;
        }
    }
    return SB_OK;
}

/* A float32 pad value as Python's runner passes it on (through a binary64:
 * a signaling NaN comes out quiet). */
static uint32_t pad_float_bits(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu)) bits |= 0x00400000u;
    return bits;
}

static int pad_run(sb_run_ctx *R)
{
    const pad_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    sb_infer_ctx I;
    sb_vinfo outs[16];
    infer_from_run(R, &I, outs);
    int64_t before[SB_MAX_RANK], after[SB_MAX_RANK];
    int status = pad_amounts(&I, x, before, after);
    if (status) return status;
    if (s->mode != PAD_CONSTANT) return pad_by_index(R, x, before, y);
    /* the value: a float (the attribute, a float32 input) or an integer input's */
    int is_int = 0;
    float fv = s->opset < 11 ? s->value : 0.0f;
    int64_t iv = 0;
    uint64_t uv = 0;
    int is_u64 = 0;
    const sb_tval *c = s->opset >= 11 && R->n_in > 2 ? R->in[2] : NULL;
    if (c) {
        if (c->info.dtype == SB_DT_FLOAT) fv = *(const float *)c->data;
        else is_int = 1, iv = sb_int_at(c, 0), uv = sb_int_at_u(c, 0),
             is_u64 = c->info.dtype == SB_DT_UINT64;
    }
    int esize = sb_dtype_size(y->info.dtype);
    uint8_t fill[8];
    if (y->info.dtype == SB_DT_FLOAT) {
        uint32_t bits;
        if (is_int) {
            volatile double wide = is_u64 ? (double)uv : (double)iv;
            float f = (float)wide;
            memcpy(&bits, &f, 4);
        } else {
            bits = pad_float_bits(fv);
        }
        memcpy(fill, &bits, 4);
    } else {
        int64_t v = iv;
        if (!is_int) {   /* Python's int() of the float */
            if (isnan(fv)) return sb_run_fail(R, SB_ERR_VALUE, "cannot convert float NaN to integer");
            if (isinf(fv))
                return sb_run_fail(R, SB_ERR_VALUE, "cannot convert float infinity to integer");
            double t = trunc((double)fv);
            if (fabs(t) < 9223372036854775808.0) v = (int64_t)t;
            else {   /* its low 64 bits */
                double m = fmod(t, 18446744073709551616.0);
                if (m < 0) m += 18446744073709551616.0;
                v = (int64_t)(uint64_t)m;
            }
        }
        sb_int_store(fill, y->info.dtype, 0, v);
    }
    int64_t total = sb_vinfo_numel(&y->info);
    if (total == 0) return SB_OK;
    sb_k_fill(y->data, total, esize, fill);
    /* the kept part of x: where it lands and which of its elements */
    int r = x->info.rank;
    int64_t own[SB_MAX_RANK], ys[SB_MAX_RANK], inner[SB_MAX_RANK], src = 0, dst = 0;
    sb_c_strides(&x->info, own);
    sb_c_strides(&y->info, ys);
    for (int d = 0; d < r; ++d) {
        int64_t lo = before[d] < 0 ? -before[d] : 0;
        int64_t hi = x->info.dims[d] - (after[d] < 0 ? -after[d] : 0);
        inner[d] = hi > lo ? hi - lo : 0;
        src += lo * own[d];
        dst += (before[d] > 0 ? before[d] : 0) * ys[d];
    }
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    status = copy_any(R->threads, r, inner, esize, (const uint8_t *)x->data + src * esize, own,
                      (uint8_t *)y->data + dst * esize, ys);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

const sb_op_def sb_ops_shape[] = {
    {"Shape", shape_load, shape_infer, shape_run, SB_OP_SHAPE_ONLY},
    {"Size", NULL, size_infer, size_run, SB_OP_SHAPE_ONLY},
    {"Identity", NULL, identity_infer, NULL, SB_OP_VIEW},
    {"Reshape", reshape_load, reshape_infer, NULL, SB_OP_VIEW},
    {"Flatten", flatten_load, flatten_infer, NULL, SB_OP_VIEW},
    {"Squeeze", squeeze_load, squeeze_infer, NULL, SB_OP_VIEW},
    {"Unsqueeze", squeeze_load, unsqueeze_infer, NULL, SB_OP_VIEW},
    /* (never folded at load, as Python's runner: its refusals come at run) */
    {"Dropout", dropout_load, dropout_infer, NULL, SB_OP_VIEW | SB_OP_NO_FOLD},
    {"Constant", constant_load, constant_infer, constant_run, 0},
    {"ConstantOfShape", constant_of_shape_load, constant_of_shape_infer, constant_of_shape_run, 0},
    {"Cast", cast_load, cast_infer, cast_run, 0},
    {"CastLike", cast_like_load, cast_like_infer, cast_run, 0},
    {"Range", NULL, range_infer, range_run, 0},
    {"Concat", concat_load, concat_infer, concat_run, 0},
    {"Split", split_load, split_infer, split_run, 0},
    {"Slice", slice_load, slice_infer, slice_run, 0},
    {"Transpose", transpose_load, transpose_infer, transpose_run, 0},
    {"DepthToSpace", depth_to_space_load, depth_to_space_infer, depth_to_space_run, 0},
    {"SpaceToDepth", space_to_depth_load, space_to_depth_infer, space_to_depth_run, 0},
    {"Gather", gather_load, gather_infer, gather_run, 0},
    {"Expand", NULL, expand_infer, expand_run, 0},
    {"Tile", NULL, tile_infer, tile_run, 0},
    {"Pad", pad_load, pad_infer, pad_run, 0},
    {0},
};
