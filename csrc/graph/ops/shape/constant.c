/* ONNX Constant and ConstantOfShape (docs/onnx.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

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
                                 sb_py_tuple_text(dims, (int)(n), b, sizeof b));
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

const sb_op_def sb_op_Constant = {
    .name = "Constant", .load = constant_load, .infer = constant_infer, .run = constant_run};
const sb_op_def sb_op_ConstantOfShape = {
    .name = "ConstantOfShape", .load = constant_of_shape_load, .infer = constant_of_shape_infer, .run = constant_of_shape_run};
