/* The views (docs/onnx.md): Identity, Reshape, Flatten, Squeeze, Unsqueeze and
 * inference-mode Dropout give their input's bytes under a new shape, with no run. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

/* ---- Identity ----------------------------------------------------------------- */

static int identity_infer(sb_infer_ctx *I)
{
    const sb_tval *x = sb_infer_input(I, 0, "input");
    if (!x) return SB_ERR_VALUE;
    I->out[0] = x->info;
    return SB_OK;
}

/* ---- Reshape ------------------------------------------------------------------ */

typedef struct { int64_t allowzero; } reshape_state;   /* .int_attrs, in order */

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

/* ---- Flatten --------------------------------------------------------------------- */


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

/* The data and the axes (attribute before opset 13, input 1 after): 1 in
 * *have when the axes are given. */
static int squeeze_inputs(sb_infer_ctx *I, const sb_tval **x, int64_t *axes, size_t *n, int *have)
{
    const axes_state *s = I->state;
    *have = 0, *n = 0;
    if (!(*x = sb_infer_input(I, 0, "data"))) return SB_ERR_VALUE;
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
    const sb_tval *x;
    int64_t axes[LIST_CAP];
    size_t n;
    int have;
    int status = squeeze_inputs(I, &x, axes, &n, &have);
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
    const sb_tval *x;
    int64_t axes[LIST_CAP];
    size_t n;
    int have;
    int status = squeeze_inputs(I, &x, axes, &n, &have);
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

extern const sb_op_def sb_op_DropoutMask;

static int dropout_load(sb_load_ctx *L)
{
    /* inference: the input passes through; `seed` draws nothing without training */
    sb_attr_ignore(L, "seed");
    sb_attr_ignore(L, "is_test");
    if (L->opset < 12 && sb_has_attr(L, "ratio")) (void)sb_attr_float(L, "ratio", 0.0f);
    if (L->status) return L->status;
    /* the mask, when asked for: every element kept */
    if (L->node->n_out > 1 && L->node->out[1] >= 0) {
        int *opset = sb_load_state(L, sizeof *opset);
        if (!opset) return L->status;
        *opset = L->opset;
        L->variant = &sb_op_DropoutMask;
    }
    return L->status;
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

/* Dropout with its mask output: output 0 a copy of the input (or the input
 * itself when the planner lets it share), the mask all true. */
static int dropout_mask_infer(sb_infer_ctx *I)
{
    const int *opset = I->state;
    int status = dropout_infer(I);
    if (status) return status;
    I->inplace = 0;
    /* bool from opset 10; before, the input's type (ONNX's T), 1 kept */
    I->out[1] = I->out[0];
    if (*opset >= 10) I->out[1].dtype = SB_DT_BOOL;
    return SB_OK;
}

static int dropout_mask_run(sb_run_ctx *R)
{
    const sb_tval *x = R->in[0];
    sb_tval *mask = R->out[1];
    int64_t bytes = sb_vinfo_bytes(&x->info), n = sb_vinfo_numel(&x->info);
    if (R->out[0] && R->out[0]->data != x->data && bytes > 0) memcpy(R->out[0]->data, x->data, (size_t)bytes);
    if (mask->info.dtype == SB_DT_FLOAT) {
        float *m = mask->data;
        for (int64_t i = 0; i < n; ++i) m[i] = 1.0f;
    } else {
        for (int64_t i = 0; i < n; ++i) sb_int_store(mask->data, mask->info.dtype, i, 1);
    }
    return SB_OK;
}

const sb_op_def sb_op_Identity = {.name = "Identity", .infer = identity_infer, .flags = SB_OP_VIEW};
const sb_op_def sb_op_Reshape = {
    .name = "Reshape", .int_attrs = {{"allowzero", 0}}, .infer = reshape_infer, .flags = SB_OP_VIEW};
const sb_op_def sb_op_Flatten = {
    .name = "Flatten", .int_attrs = {{"axis", 1}}, .infer = flatten_infer, .flags = SB_OP_VIEW};
const sb_op_def sb_op_Squeeze = {
    .name = "Squeeze", .load = squeeze_load, .infer = squeeze_infer, .flags = SB_OP_VIEW};
const sb_op_def sb_op_Unsqueeze = {
    .name = "Unsqueeze", .load = squeeze_load, .infer = unsqueeze_infer, .flags = SB_OP_VIEW};
/* (never folded at load, as Python's runner: its refusals come at run) */
const sb_op_def sb_op_Dropout = {
    .name = "Dropout", .load = dropout_load, .infer = dropout_infer, .flags = SB_OP_VIEW | SB_OP_NO_FOLD};
/* (not in the registry: Dropout's load picks it when the mask is used) */
const sb_op_def sb_op_DropoutMask = {
    .name = "Dropout", .infer = dropout_mask_infer, .run = dropout_mask_run, .flags = SB_OP_NO_FOLD};
