/* ONNX DeformConv (opsets 19 and 22; docs/onnx.md): two spatial axes, on
 * kernels/deform_conv.c. Weights, offsets, mask and bias are read at run,
 * constant or computed; the workspace holds one image's samples. */
#include <string.h>
#include "graph/op.h"
#include "graph/py_text.h"
#include "graph/ops/shape/shape_util.h"
#include "kernels/deform_conv.h"

typedef struct {
    ints_attr kernel_shape, strides, dilations, pads;
    int64_t group, offset_group;
} deform_state;

static int deform_load(sb_load_ctx *L)
{
    deform_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    if (read_ints_attr(L, "kernel_shape", 0, &s->kernel_shape) || read_ints_attr(L, "strides", 0, &s->strides) ||
        read_ints_attr(L, "dilations", 0, &s->dilations) || read_ints_attr(L, "pads", 0, &s->pads))
        return L->status;
    s->group = sb_attr_int(L, "group", 1);
    s->offset_group = sb_attr_int(L, "offset_group", 1);
    if (L->status) return L->status;
    if (s->group < 1 || s->offset_group < 1 || s->group > ((int64_t)1 << 40) ||
        s->offset_group > ((int64_t)1 << 40))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "group and offset_group must be positive");
    const ints_attr *two[3] = {&s->strides, &s->dilations, &s->kernel_shape};
    const char *names[3] = {"strides", "dilations", "kernel_shape"};
    for (int i = 0; i < 3; ++i)
        if (two[i]->has) {
            if (two[i]->n != 2)
                return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%s must have 2 values: DeformConv is supported "
                                    "over two spatial axes", names[i]);
            for (int k = 0; k < 2; ++k)
                if (two[i]->v[k] < 1 || two[i]->v[k] > ((int64_t)1 << 30))
                    return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%s must be positive (at most 2**30)", names[i]);
        }
    if (s->pads.has) {
        if (s->pads.n != 4)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "pads must have 4 values: DeformConv is supported over "
                                "two spatial axes");
        for (int k = 0; k < 4; ++k)
            if (s->pads.v[k] < 0 || s->pads.v[k] > ((int64_t)1 << 30))
                return sb_load_fail(L, SB_ERR_UNSUPPORTED, "pads must be non-negative (at most 2**30)");
    }
    return SB_OK;
}

/* The kernel's arguments from the inputs' infos (data pointers left null). */
static int deform_args(sb_infer_ctx *I, sb_deform_conv_args *a)
{
    const deform_state *s = I->state;
    const sb_tval *x = sb_infer_float(I, 0, "X"), *w = sb_infer_float(I, 1, "W");
    const sb_tval *off = sb_infer_float(I, 2, "offset");
    if (!x || !w || !off) return SB_ERR_TYPE;
    const sb_tval *b = I->n_in > 3 && I->in[3] ? sb_infer_float(I, 3, "B") : NULL;
    const sb_tval *mask = I->n_in > 4 && I->in[4] ? sb_infer_float(I, 4, "mask") : NULL;
    if ((I->n_in > 3 && I->in[3] && !b) || (I->n_in > 4 && I->in[4] && !mask)) return SB_ERR_TYPE;
    if (x->info.rank != 4)
        return sb_infer_fail(I, SB_ERR_UNSUPPORTED, "X must be 4-D (N, C, H, W): DeformConv is supported over "
                             "two spatial axes");
    char ws[256], os[256];
    sb_shape_text(&w->info, ws, sizeof ws);
    sb_shape_text(&off->info, os, sizeof os);
    const int64_t *xd = x->info.dims, *wd = w->info.dims;
    memset(a, 0, sizeof *a);
    a->n = xd[0], a->c = xd[1], a->h = xd[2], a->w = xd[3];
    a->group = s->group, a->offset_group = s->offset_group;
    if (w->info.rank != 4 || wd[0] < 1 || wd[0] % s->group || wd[1] * s->group != a->c)
        return sb_infer_fail(I, SB_ERR_VALUE, "W %s must be (M, C / group, kH, kW) with M a multiple of group "
                             "%lld and C = %lld", ws, (long long)s->group, (long long)a->c);
    a->m = wd[0], a->kh = wd[2], a->kw = wd[3];
    if (s->kernel_shape.has && (s->kernel_shape.v[0] != a->kh || s->kernel_shape.v[1] != a->kw))
        return sb_infer_fail(I, SB_ERR_VALUE, "kernel_shape does not match W %s", ws);
    if (a->kh < 1 || a->kw < 1 || a->h < 1 || a->w < 1)
        return sb_infer_fail(I, SB_ERR_VALUE, "X's spatial axes and the kernel must be at least 1 long");
    if (a->c % s->offset_group)
        return sb_infer_fail(I, SB_ERR_VALUE, "X's %lld channels must be a multiple of offset_group %lld",
                             (long long)a->c, (long long)s->offset_group);
    a->stride_h = s->strides.has ? s->strides.v[0] : 1, a->stride_w = s->strides.has ? s->strides.v[1] : 1;
    a->dilation_h = s->dilations.has ? s->dilations.v[0] : 1;
    a->dilation_w = s->dilations.has ? s->dilations.v[1] : 1;
    a->pad_h = s->pads.has ? s->pads.v[0] : 0, a->pad_w = s->pads.has ? s->pads.v[1] : 0;
    int64_t span_h = a->h + a->pad_h + (s->pads.has ? s->pads.v[2] : 0) - ((a->kh - 1) * a->dilation_h + 1);
    int64_t span_w = a->w + a->pad_w + (s->pads.has ? s->pads.v[3] : 0) - ((a->kw - 1) * a->dilation_w + 1);
    if (span_h < 0 || span_w < 0)
        return sb_infer_fail(I, SB_ERR_VALUE, "the dilated kernel is larger than the padded input");
    a->oh = span_h / a->stride_h + 1, a->ow = span_w / a->stride_w + 1;
    int64_t taps = a->kh * a->kw;
    const int64_t *od = off->info.dims;
    if (off->info.rank != 4 || od[0] != a->n || od[1] != s->offset_group * taps * 2 || od[2] != a->oh ||
        od[3] != a->ow)
        return sb_infer_fail(I, SB_ERR_VALUE, "offset %s must be (N, offset_group * kH * kW * 2, OH, OW) = "
                             "(%lld, %lld, %lld, %lld)", os, (long long)a->n,
                             (long long)(s->offset_group * taps * 2), (long long)a->oh, (long long)a->ow);
    if (b && (b->info.rank != 1 || b->info.dims[0] != a->m))
        return sb_infer_fail(I, SB_ERR_VALUE, "B must be 1-D with W's %lld output channels", (long long)a->m);
    if (mask) {
        const int64_t *md = mask->info.dims;
        if (mask->info.rank != 4 || md[0] != a->n || md[1] != s->offset_group * taps || md[2] != a->oh ||
            md[3] != a->ow)
            return sb_infer_fail(I, SB_ERR_VALUE, "mask must be (N, offset_group * kH * kW, OH, OW) = "
                                 "(%lld, %lld, %lld, %lld)", (long long)a->n, (long long)(s->offset_group * taps),
                                 (long long)a->oh, (long long)a->ow);
    }
    return SB_OK;
}

static int deform_infer(sb_infer_ctx *I)
{
    sb_deform_conv_args a;
    int status = deform_args(I, &a);
    if (status) return status;
    sb_vinfo *y = &I->out[0];
    memset(y, 0, sizeof *y);
    y->dtype = SB_DT_FLOAT, y->rank = 4;
    y->dims[0] = a.n, y->dims[1] = a.m, y->dims[2] = a.oh, y->dims[3] = a.ow;
    /* 64-bit arithmetic: on wasm32 (size_t of 32 bits) the bound 2^40 was a
     * shift past the type's width */
    uint64_t floats = sb_deform_conv_scratch_floats(&a);
    if (floats > ((uint64_t)1 << 40) || floats > SIZE_MAX / sizeof(float))
        return sb_infer_fail(I, SB_ERR_VALUE, "the samples of one image are too many");
    I->workspace = (int64_t)(floats * sizeof(float));
    return SB_OK;
}

static int deform_run(sb_run_ctx *R)
{
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    sb_deform_conv_args a;
    int status = deform_args(&I, &a);
    if (status) return status;
    a.x = R->in[0]->data, a.weight = R->in[1]->data, a.offset = R->in[2]->data;
    a.bias = R->n_in > 3 && R->in[3] ? R->in[3]->data : NULL;
    a.mask = R->n_in > 4 && R->in[4] ? R->in[4]->data : NULL;
    a.y = R->out[0]->data, a.scratch = R->workspace, a.max_threads = R->threads;
    status = sb_deform_conv(&a);
    return status ? sb_run_fail(R, status, "deformable convolution failed (status %d)", status) : SB_OK;
}

const sb_op_def sb_op_DeformConv = {
    .name = "DeformConv", .load = deform_load, .infer = deform_infer, .run = deform_run};
