/* ONNX MaxUnpool (opset 9 on; docs/onnx.md), as onnx.reference computes it:
 * a zero tensor of the unpooled shape (per spatial axis (in - 1) * stride +
 * kernel - pads) with each X value written at its flat index from I, in X's
 * order (a later write to one index wins); with `output_shape` (at least
 * that shape on every axis) that tensor sits at the output's origin, zeros
 * around it. An index outside the unpooled tensor is an IndexError. */
#include <string.h>
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

typedef struct { ints_attr kernel, strides, pads; } max_unpool_state;

static int max_unpool_load(sb_load_ctx *L)
{
    max_unpool_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    if (read_ints_attr(L, "kernel_shape", 1, &s->kernel) || read_ints_attr(L, "strides", 0, &s->strides) ||
        read_ints_attr(L, "pads", 0, &s->pads))
        return L->status;
    for (size_t i = 0; i < s->kernel.n; ++i)
        if (s->kernel.v[i] < 1 || (s->strides.has && (i >= s->strides.n || s->strides.v[i] < 1)))
            return sb_load_fail(L, SB_ERR_VALUE, "kernel_shape and strides must be positive, one per axis");
    if (s->pads.has && s->pads.n != 2 * s->kernel.n)
        return sb_load_fail(L, SB_ERR_VALUE, "pads must have two values per axis");
    return SB_OK;
}

static int max_unpool_infer(sb_infer_ctx *I)
{
    const max_unpool_state *s = I->state;
    const sb_tval *x = sb_infer_float(I, 0, "X"), *idx = sb_infer_int(I, 1, "I");
    if (!x || !idx) return SB_ERR_TYPE;
    int dims = (int)s->kernel.n;
    if (x->info.rank != dims + 2 || !sb_vinfo_same_shape(&x->info, &idx->info))
        return sb_infer_fail(I, SB_ERR_VALUE, "X and I must be (N, C, ...) of one shape with %d spatial "
                             "axes", dims);
    sb_vinfo *y = &I->out[0], unpooled = x->info;
    for (int d = 0; d < dims; ++d) {
        int64_t st = s->strides.has ? s->strides.v[d] : 1;
        int64_t pads = s->pads.has ? s->pads.v[d] + s->pads.v[dims + d] : 0;
        int64_t o = (x->info.dims[2 + d] - 1) * st + s->kernel.v[d] - pads;
        if (o < 0 || o > ((int64_t)1 << 40))
            return sb_infer_fail(I, SB_ERR_VALUE, "the unpooled size along axis %d is out of range", d);
        unpooled.dims[2 + d] = o;
    }
    *y = unpooled;
    I->workspace = 4 * sb_vinfo_numel(&unpooled);
    if (I->n_in > 2 && I->in[2]) {
        int64_t shape[SB_MAX_RANK];
        size_t n;
        int status = int_list(I, 2, "output_shape", shape, SB_MAX_RANK, &n);
        if (status) return status;
        if (n != (size_t)x->info.rank || shape[0] != x->info.dims[0] || shape[1] != x->info.dims[1])
            return sb_infer_fail(I, SB_ERR_VALUE, "output_shape must be X's rank with its N and C");
        for (size_t d = 2; d < n; ++d) {
            if (shape[d] < unpooled.dims[d] || shape[d] > ((int64_t)1 << 40))
                return sb_infer_fail(I, SB_ERR_VALUE, "output_shape must be at least the unpooled shape "
                                     "on every axis (and at most 2**40)");
            y->dims[d] = shape[d];
        }
    }
    return SB_OK;
}

static int max_unpool_run(sb_run_ctx *R)
{
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    int status = max_unpool_infer(&I);   /* (the unpooled shape: the workspace's) */
    if (status) return status;
    const sb_tval *x = R->in[0], *idx = R->in[1];
    sb_tval *y = R->out[0];
    const max_unpool_state *s = R->state;
    int dims = (int)s->kernel.n;
    sb_vinfo unpooled = x->info;
    for (int d = 0; d < dims; ++d)
        unpooled.dims[2 + d] = (x->info.dims[2 + d] - 1) * (s->strides.has ? s->strides.v[d] : 1) +
                               s->kernel.v[d] - (s->pads.has ? s->pads.v[d] + s->pads.v[dims + d] : 0);
    int64_t n = sb_vinfo_numel(&x->info), total = sb_vinfo_numel(&unpooled);
    float *u = R->workspace;
    if (total > 0) memset(u, 0, (size_t)total * sizeof *u);
    const float *in = x->data;
    for (int64_t i = 0; i < n; ++i) {
        int64_t at = sb_int_at(idx, i);
        if (at < 0 || at >= total)
            return sb_run_fail(R, SB_ERR_INDEX, "index %lld is out of range for an unpooled tensor of %lld "
                               "elements", (long long)at, (long long)total);
        u[at] = in[i];
    }
    int64_t out_total = sb_vinfo_numel(&y->info);
    if (out_total > 0) memset(y->data, 0, (size_t)out_total * sizeof(float));
    int64_t xs[SB_MAX_RANK], ys[SB_MAX_RANK], a = 1, b = 1;
    for (int d = unpooled.rank - 1; d >= 0; --d) xs[d] = a, ys[d] = b, a *= unpooled.dims[d], b *= y->info.dims[d];
    return copy_any(R->threads, unpooled.rank, unpooled.dims, 4, u, xs, y->data, ys);
}

const sb_op_def sb_op_MaxUnpool = {
    .name = "MaxUnpool", .load = max_unpool_load, .infer = max_unpool_infer, .run = max_unpool_run};
