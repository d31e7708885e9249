/* ONNX operators: shapes, constants and views (Shape, Size, Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity, Dropout, Constant, ...). Views
 * are SB_OP_VIEW: their output is their input's bytes under a new shape. */
#include <string.h>
#include "kcall.h"
#include "op.h"

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

const sb_op_def sb_ops_shape[] = {
    {"Shape", shape_load, shape_infer, shape_run, SB_OP_SHAPE_ONLY},
    {"Identity", NULL, identity_infer, NULL, SB_OP_VIEW},
    {"Reshape", reshape_load, reshape_infer, NULL, SB_OP_VIEW},
    {"Constant", constant_load, constant_infer, constant_run, 0},
    {0},
};
