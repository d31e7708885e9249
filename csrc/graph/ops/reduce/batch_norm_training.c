/* ONNX BatchNormalization with training_mode=1 (docs/onnx.md): the batch's
 * statistics per channel c over N and the spatial axes, in float32:
 *   mean = (+0 + x0 + x1 + ...) / count, in (n, spatial) order;
 *   var  = (+0 + (x0 - mean)^2 + ...) / count (the population variance,
 *          each difference, square and sum rounded);
 * Y is the inference formula (sb_norm) with mean and var; running_mean =
 * input_mean * momentum + mean * (1 - momentum), running_var likewise
 * (each product and the sum rounded; 1 - momentum rounded first). */
#include <string.h>
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/reduce/reduce_util.h"
#include "math/arith.h"


static int bn_training_infer(sb_infer_ctx *I)
{
    static const char *const names[5] = {"X", "scale", "B", "input_mean", "input_var"};
    const sb_tval *t[5];
    for (int i = 0; i < 5; ++i)
        if (!(t[i] = need_float(I, i, names[i]))) return SB_ERR_TYPE;
    const sb_vinfo *x = &t[0]->info;
    if (x->rank < 2) return sb_infer_fail(I, SB_ERR_VALUE, "X must be at least 2-D");
    int64_t c = x->dims[1];
    for (int i = 1; i < 5; ++i)
        if (t[i]->info.rank != 1 || t[i]->info.dims[0] != c)
            return sb_infer_fail(I, SB_ERR_VALUE, "%s must have shape (%lld,)", names[i], (long long)c);
    if (sb_vinfo_numel(x) / (c ? c : 1) == 0 && c)
        return sb_infer_fail(I, SB_ERR_VALUE, "an empty batch has no statistics");
    I->out[0] = *x;
    for (int j = 1; j < I->n_out; ++j) I->out[j] = t[3]->info;
    I->workspace = 8 * (c + 1);
    return SB_OK;
}

static int bn_training_run(sb_run_ctx *R)
{
    const norm_state *s = R->state;
    const sb_tval *x = R->in[0];
    int64_t n = x->info.dims[0], c = x->info.dims[1], sp = prod_dims(x->info.dims, 2, x->info.rank);
    float *mean = R->workspace, *var = mean + c;
    float count = (float)(n * sp);
    const float *xd = x->data;
    for (int64_t ch = 0; ch < c; ++ch) {
        float sum = 0.0f;
        for (int64_t b = 0; b < n; ++b)
            for (int64_t i = 0; i < sp; ++i) sum = sum + xd[(b * c + ch) * sp + i];
        float m = sum / count, sq = 0.0f;
        for (int64_t b = 0; b < n; ++b)
            for (int64_t i = 0; i < sp; ++i) {
                float d = xd[(b * c + ch) * sp + i] - m;
                sq = sq + d * d;
            }
        mean[ch] = sbt_canonical(m), var[ch] = sbt_canonical(sq / count);
    }
    sb_norm_args a;
    memset(&a, 0, sizeof a);
    a.path = R->path, a.mode = R->mode, a.op = 0, a.max_threads = R->threads;
    a.n = n, a.c = c, a.spatial = sp;
    a.x = (int64_t)(intptr_t)x->data, a.y = (int64_t)(intptr_t)R->out[0]->data;
    a.mean = (int64_t)(intptr_t)mean, a.var = (int64_t)(intptr_t)var;
    a.weight = (int64_t)(intptr_t)R->in[1]->data, a.bias = (int64_t)(intptr_t)R->in[2]->data;
    a.eps = (int64_t)f2u(s->eps);
    int status = kfail(R, sb_norm(&a), "sb_norm");
    if (status) return status;
    float keep = s->momentum, take = 1.0f - s->momentum;
    const float *old[2] = {R->in[3]->data, R->in[4]->data}, *now[2] = {mean, var};
    for (int j = 0; j < 2; ++j) {
        if (R->n_out <= j + 1 || !R->out[j + 1]) continue;
        float *y = R->out[j + 1]->data;
        for (int64_t ch = 0; ch < c; ++ch) y[ch] = sbt_canonical(old[j][ch] * keep + now[j][ch] * take);
    }
    return SB_OK;
}

const sb_op_def sb_op_BatchNormTraining = {
    .name = "BatchNormalization", .infer = bn_training_infer, .run = bn_training_run};
