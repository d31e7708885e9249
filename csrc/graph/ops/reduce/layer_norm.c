/* ONNX LayerNormalization (docs/onnx.md). */
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "framework/step.h"
#include "isa/unary.h"
#include "graph/ops/reduce/reduce_util.h"
#include "kernels/norm_stats.h"

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
        int status = sb_infer_broadcast(I, pair, 2, &b);
        if (status) return status;
        if (sb_vinfo_same_shape(&b, norm)) return SB_OK;
    }
    char ts[256], ns[256];
    sb_shape_text(&t->info, ts, sizeof ts);
    sb_shape_text(norm, ns, sizeof ns);
    return sb_infer_fail(I, SB_ERR_VALUE, "%s %s does not match the normalized shape %s", what, ts, ns);
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
    /* Mean and InvStdDev: x's shape with the normalized axes 1, float32 */
    for (int j = 1; j < I->n_out && j < 3; ++j) {
        I->out[j] = x->info;
        for (int d = a; d < x->info.rank; ++d) I->out[j].dims[d] = 1;
    }
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
    sb_tval *mean = R->n_out > 1 ? R->out[1] : NULL, *rstd = R->n_out > 2 ? R->out[2] : NULL;
    if (mean || rstd)   /* exact mode's statistics, in both modes (docs/onnx.md) */
        sb_layer_norm_stats(x->data, total / n, n, s->eps, mean ? mean->data : NULL,
                            rstd ? rstd->data : NULL);
    return k_reduce(R, 4, total / n, n, 1, x->data, R->out[0]->data, R->in[1]->data,
                    bias ? bias->data : NULL, s->eps);
}

const sb_op_def sb_op_LayerNormalization = {
    .name = "LayerNormalization", .load = layer_norm_load, .infer = layer_norm_infer, .run = layer_norm_run};
