/* ONNX Split (docs/onnx.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

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
                             "outputs", sb_py_list_text(split, listed, b, sizeof b), a,
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
    /* only 1s before the axis: output j is the run of x's bytes after
     * outputs 0 .. j - 1, a view (YOLOv8's C2f blocks split each Conv's
     * channels in two, a copy of 3% of the run) */
    I->outputs_view_input = prod_dims(x->info.dims, 0, a) == 1;
    return SB_OK;
}

static int split_run(sb_run_ctx *R)
{
    sb_infer_ctx I;
    sb_vinfo outs[16];
    sb_infer_from_run(R, &I, outs);
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

const sb_op_def sb_op_Split = {
    .name = "Split", .load = split_load, .infer = split_infer, .run = split_run};
