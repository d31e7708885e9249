/* ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (docs/onnx.md):
 * the loss of kernels/nll.c over x (N, C, d1, ...) and a target (N, d1, ...);
 * SoftmaxCrossEntropyLoss first takes log_softmax over C (sb_reduce), which
 * is also its optional second output. */
#include <stdlib.h>
#include <string.h>
#include "kernels/nll.h"
#include "graph/ops/reduce/reduce_util.h"

typedef struct { int softmax, reduction, has_ignore; int64_t ignore_index; } loss_state;

static int loss_load(sb_load_ctx *L)
{
    loss_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->softmax = !strcmp(L->node->op_type, "SoftmaxCrossEntropyLoss");
    const char *r = sb_attr_str(L, "reduction", "mean");
    s->has_ignore = sb_has_attr(L, "ignore_index");
    s->ignore_index = sb_attr_int(L, "ignore_index", 0);
    if (L->status) return L->status;
    if (!strcmp(r, "none")) s->reduction = SB_NLL_NONE;
    else if (!strcmp(r, "sum")) s->reduction = SB_NLL_SUM;
    else if (!strcmp(r, "mean")) s->reduction = SB_NLL_MEAN;
    else return sb_load_fail(L, SB_ERR_UNSUPPORTED, "reduction '%s' is not none, sum or mean", r);
    return L->status;
}

/* x (N, C, d...) as (n, c, d), the target's shape (N, d...) checked. */
static int loss_dims(sb_infer_ctx *I, const sb_vinfo *x, const sb_vinfo *t, int64_t dims[3])
{
    char xs[256], ts[256];
    sb_shape_text(x, xs, sizeof xs);
    sb_shape_text(t, ts, sizeof ts);
    int fits = x->rank >= 2 && t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
    for (int k = 2; fits && k < x->rank; ++k) fits = t->dims[k - 1] == x->dims[k];
    if (!fits)
        return sb_infer_fail(I, SB_ERR_VALUE, "input %s and target %s are not (N, C, d1, ...) and (N, "
                             "d1, ...)", xs, ts);
    dims[0] = x->dims[0], dims[1] = x->dims[1], dims[2] = 1;
    for (int k = 2; k < x->rank; ++k) dims[2] *= x->dims[k];
    return SB_OK;
}

static int loss_infer(sb_infer_ctx *I)
{
    const loss_state *s = I->state;
    const sb_tval *x = need_float(I, 0, s->softmax ? "scores" : "input");
    if (!x) return SB_ERR_TYPE;
    const sb_tval *t = sb_infer_int(I, 1, s->softmax ? "labels" : "target");
    if (!t) return SB_ERR_TYPE;
    if (t->info.dtype != SB_DT_INT32 && t->info.dtype != SB_DT_INT64)
        return sb_infer_fail(I, SB_ERR_TYPE, "the target must be int32 or int64, got %s",
                             sb_dtype_name(t->info.dtype));
    int64_t dims[3] = {0, 0, 0};
    int status = loss_dims(I, &x->info, &t->info, dims);
    if (status) return status;
    if (I->n_in > 2 && I->in[2]) {
        const sb_tval *w = need_float(I, 2, "weight");
        if (!w) return SB_ERR_TYPE;
        if (w->info.rank != 1 || w->info.dims[0] != dims[1]) {
            char ws[256];
            sb_shape_text(&w->info, ws, sizeof ws);
            return sb_infer_fail(I, SB_ERR_VALUE, "weight %s is not (C,) with C = %lld", ws,
                                 (long long)dims[1]);
        }
    }
    I->out[0] = t->info;
    I->out[0].dtype = SB_DT_FLOAT;
    if (s->reduction != SB_NLL_NONE) I->out[0].rank = 0;
    if (I->n_out > 1) I->out[1] = x->info;
    /* the targets as int64, then (softmax without a log_prob output) log_softmax */
    int64_t count = dims[0] * dims[2];
    I->workspace = (int64_t)align64(count * 8) +
                   (s->softmax ? (int64_t)align64(sb_vinfo_numel(&x->info) * 4) : 0);
    return SB_OK;
}

static int loss_run(sb_run_ctx *R)
{
    const loss_state *s = R->state;
    const sb_tval *x = R->in[0], *t = R->in[1], *w = R->n_in > 2 ? R->in[2] : NULL;
    int64_t dims[3] = {x->info.dims[0], x->info.dims[1], 1};
    for (int k = 2; k < x->info.rank; ++k) dims[2] *= x->info.dims[k];
    int64_t count = dims[0] * dims[2];
    int64_t *target = R->workspace;
    for (int64_t i = 0; i < count; ++i) target[i] = sb_int_at(t, i);
    const float *logp = x->data;
    if (s->softmax) {   /* log_softmax over C: into output 1 when asked for, else scratch */
        float *lp = R->n_out > 1 && R->out[1] ? R->out[1]->data
                                              : (float *)((uint8_t *)R->workspace + align64(count * 8));
        if (sb_vinfo_numel(&x->info) > 0) {
            int status = k_reduce(R, 3, dims[0], dims[1], dims[2], x->data, lp, NULL, NULL, 0.0f);
            if (status) return status;
        }
        logp = lp;
    }
    sb_nll_args a = {.n = dims[0], .c = dims[1], .d = dims[2], .x = logp, .target = target,
                     .weight = w ? w->data : NULL, .has_ignore = s->has_ignore,
                     .ignore_index = s->ignore_index, .reduction = s->reduction};
    int64_t bad = 0;
    if (sb_nll_loss(&a, R->out[0]->data, &bad))
        return sb_run_fail(R, SB_ERR_INDEX, "target %lld is out of range for %lld classes", (long long)bad,
                           (long long)dims[1]);
    return SB_OK;
}

const sb_op_def sb_op_NegativeLogLikelihoodLoss = {
    .name = "NegativeLogLikelihoodLoss", .load = loss_load, .infer = loss_infer, .run = loss_run};
const sb_op_def sb_op_SoftmaxCrossEntropyLoss = {
    .name = "SoftmaxCrossEntropyLoss", .load = loss_load, .infer = loss_infer, .run = loss_run};
