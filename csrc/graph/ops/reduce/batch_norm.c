/* ONNX BatchNormalization, GroupNormalization and InstanceNormalization
 * (docs/onnx.md): one sb_norm call each. */
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"
#include "framework/step.h"
#include "isa/unary.h"
#include "graph/ops/reduce/reduce_util.h"

extern const sb_op_def sb_op_BatchNormTraining;

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
    s->momentum = sb_attr_float(L, "momentum", 0.9f);   /* running statistics: training only */
    if (sb_has_attr(L, "spatial") && sb_attr_int(L, "spatial", 1) != 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "spatial=0 is not supported");
    if (sb_attr_int(L, "training_mode", 0)) {
        /* the batch's own statistics, and the running ones updated (batch_norm_training.c) */
        if (L->node->n_out > 3)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "BatchNormalization has three outputs in "
                                "training mode (Y, running_mean, running_var)");
        L->variant = &sb_op_BatchNormTraining;
        return L->status;
    }
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

const sb_op_def sb_op_BatchNormalization = {
    .name = "BatchNormalization", .load = batch_norm_load, .infer = batch_norm_infer, .run = batch_norm_run};
const sb_op_def sb_op_GroupNormalization = {
    .name = "GroupNormalization", .load = group_norm_load, .infer = group_norm_infer, .run = group_norm_run};
const sb_op_def sb_op_InstanceNormalization = {
    .name = "InstanceNormalization", .load = instance_norm_load, .infer = instance_norm_infer, .run = instance_norm_run};
