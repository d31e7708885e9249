/* ONNX CumSum and CumProd (docs/onnx.md): running sums or products. */
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "framework/step.h"
#include "isa/unary.h"
#include "graph/ops/reduce/reduce_util.h"

typedef struct { int64_t exclusive, reverse; int prod; } cumsum_state;

static int cumsum_load(sb_load_ctx *L)
{
    cumsum_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->exclusive = sb_attr_int(L, "exclusive", 0);
    s->reverse = sb_attr_int(L, "reverse", 0);
    s->prod = !strcmp(L->node->op_type, "CumProd");
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
    if (x->info.dtype != SB_DT_FLOAT) {   /* exact, wrapping like the type */
        int dt = x->info.dtype;
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                uint64_t acc = s->prod ? 1 : 0;
                for (int64_t step = 0; step < n; ++step) {
                    int64_t j = s->reverse ? n - 1 - step : step;
                    int64_t p = (o * n + j) * inner + i;
                    uint64_t v = (uint64_t)sb_int_at(x, p);
                    uint64_t next = s->prod ? acc * v : acc + v;
                    if (dt == SB_DT_BOOL) next = next != 0;
                    sb_int_store(y->data, dt, p, (int64_t)(s->exclusive ? acc : next));
                    acc = next;
                }
            }
        return SB_OK;
    }
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    /* step j's sums (products): (outer, inner) slabs of T, T = y itself when outer is 1 */
    int op = s->prod ? SB_BIN_MUL : SB_BIN_ADD;
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
                uint32_t first = s->prod ? 0x3F800000u : 0;   /* the empty sum 0, product 1 */
                sb_k_fill(Tj, slab, 4, &first);
            } else {
                status = bin_strided(R, op, 2, shape, T + prev * slab, dense,
                                     xv + prev * inner, col, Tj);
            }
        } else if (step == 0) {   /* the first: x (NaN canonical, as every sum) */
            status = bin_strided(R, SB_BIN_MAXIMUM, 2, shape, xv + j * inner, col, xv + j * inner,
                                 col, Tj);
        } else {
            status = bin_strided(R, op, 2, shape, T + prev * slab, dense, xv + j * inner,
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

const sb_op_def sb_op_CumSum = {
    .name = "CumSum", .load = cumsum_load, .infer = cumsum_infer, .run = cumsum_run};
const sb_op_def sb_op_CumProd = {
    .name = "CumProd", .load = cumsum_load, .infer = cumsum_infer, .run = cumsum_run};
