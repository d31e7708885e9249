/* ONNX ConvTranspose (docs/onnx.md): a product and col2im, as
 * samebits.conv_transpose2d. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "math/arith.h"
#include "graph/error.h"
#include "graph/py_text.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/nn/nn_util.h"
#include "framework/epilogue.h"
#include "kernels/conv3d.h"

/* What the weights' shape decides. */
typedef struct {
    int64_t w_shape[4];          /* the weights as given, (C, M/g, k...) */
    int w_rank;
    int64_t w4[4];               /* as 2-D: (C, M/g, KH, KW) */
    int64_t k2[2];
} convt_w;

typedef struct {
    spatial sp;
    int dims;                    /* 0: W's rank - 2 at run (every spatial attribute its default) */
    int64_t group;
    int has_kernel;
    int64_t kernel[2];
    int64_t op2[2];              /* output_padding per 2-D axis */
    int has_output_shape;
    int64_t os2[2];              /* output_shape per 2-D axis */
    int64_t op3[3];              /* a 3-D one's output_padding */
    int packed;                  /* constant weights: */
    convt_w w;                   /* their shape */
    const void *weights;         /* the equivalent convolution's, packed */
} convt_state;

/* The weights' shape checked against the node's attributes (load for
 * constant weights, run for computed ones). */
static int convt_weights(const sb_node *node, const convt_state *s, const sb_vinfo *w, convt_w *cw)
{
    char a[256], b[256];
    int dims = s->dims ? s->dims : w->rank - 2;
    if (dims != 1 && dims != 2)
        return nfail(node, SB_ERR_UNSUPPORTED, "W %s: %d-D transposed convolution is not supported "
                     "(1-D to 3-D are)", shape_text(w, a, sizeof a), dims);
    if (w->rank != dims + 2)
        return nfail(node, SB_ERR_VALUE, "W %s is not %d-D weights", shape_text(w, a, sizeof a), dims);
    if (s->has_kernel) {
        int match = 1;
        for (int i = 0; i < dims; ++i) match &= w->dims[2 + i] == s->kernel[i];
        if (!match)
            return nfail(node, SB_ERR_UNSUPPORTED, "weights of shape %s do not match kernel_shape %s",
                         shape_text(w, a, sizeof a), sb_py_list_text(s->kernel, (size_t)dims, b, sizeof b));
    }
    cw->w_rank = w->rank;
    memcpy(cw->w_shape, w->dims, (size_t)w->rank * sizeof *cw->w_shape);
    if (dims == 1)
        cw->w4[0] = w->dims[0], cw->w4[1] = w->dims[1], cw->w4[2] = 1, cw->w4[3] = w->dims[2];
    else
        memcpy(cw->w4, w->dims, sizeof cw->w4);
    if (cw->w4[0] % s->group)
        return nfail(node, SB_ERR_VALUE, "group=%lld does not divide the %lld input channels",
                     (long long)s->group, (long long)cw->w4[0]);
    for (int i = 0; i < 4; ++i)
        if (cw->w4[i] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "W has shape %s; dimensions above 2**40 are not "
                         "supported", shape_text(w, a, sizeof a));
    if (cw->w4[2] < 1 || cw->w4[3] < 1)
        return nfail(node, SB_ERR_VALUE, "W %s has an empty kernel", shape_text(w, a, sizeof a));
    cw->k2[0] = cw->w4[2], cw->k2[1] = cw->w4[3];
    return SB_OK;
}

/* (C, M/g, kH, kW) as the equivalent convolution's (M, C/g, kH, kW),
 * flipped in both spatial dimensions: a permutation of the values. */
static void convt_flip(const float *src, const int64_t *w4, int64_t g, float *wt)
{
    int64_t cg = w4[0] / g, mg = w4[1], kh = w4[2], kw = w4[3];
    for (int64_t gi = 0; gi < g; ++gi)
        for (int64_t m = 0; m < mg; ++m)
            for (int64_t cc = 0; cc < cg; ++cc)
                for (int64_t y = 0; y < kh; ++y)
                    for (int64_t x = 0; x < kw; ++x)
                        wt[(((gi * mg + m) * cg + cc) * kh + y) * kw + x] =
                            src[(((gi * cg + cc) * mg + m) * kh + (kh - 1 - y)) * kw + (kw - 1 - x)];
}

static int convt_load(sb_load_ctx *L)
{
    convt_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    const sb_tval *w = sb_load_const(L, 1);
    if (w && w->info.dtype != SB_DT_FLOAT)
        return sb_load_fail(L, SB_ERR_TYPE, "input W must be float32, got %s",
                            sb_dtype_name(w->info.dtype));
    const int64_t *kernel = NULL, *opad = NULL, *oshape = NULL;
    size_t nk = 0, nop = 0, nos = 0;
    s->has_kernel = sb_attr_ints(L, "kernel_shape", &kernel, &nk);
    if (L->status) return L->status;
    int has_opad = sb_attr_ints(L, "output_padding", &opad, &nop);
    if (L->status) return L->status;
    s->has_output_shape = sb_attr_ints(L, "output_shape", &oshape, &nos);
    if (L->status) return L->status;
    s->group = sb_attr_int(L, "group", 1);
    if (L->status) return L->status;
    if (s->group < 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "group=%lld must be positive", (long long)s->group);
    /* The spatial rank: the constant weights', kernel_shape's, or that of a
     * per-axis attribute given. With none of them every spatial attribute
     * is its default, whatever the rank: run takes it from W (dims 0). */
    int dims = 0;
    if (w) dims = w->info.rank - 2;
    else if (s->has_kernel) dims = (int)(nk < 100 ? nk : 100);
    else {
        dims = spatial_rank_of_attrs(L);
        if (!dims && has_opad) dims = (int)(nop < 100 ? nop : 100);
        if (!dims && s->has_output_shape) dims = (int)(nos < 100 ? nos : 100);
    }
    char a[256];
    if (dims == 3) {   /* kernels/conv3d.c on the zero-stuffed input (convt3d_run) */
        s->dims = 3;
        if (s->has_kernel && nk != 3)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "kernel_shape does not fit 3 dimensions");
        if (s->has_output_shape)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "output_shape is not supported for a 3-D "
                                "transposed convolution (pads and output_padding are)");
        if (read_spatial(L, 3, NULL, 0, &s->sp)) return L->status;
        if (s->sp.auto_pad == PAD_SAME_UPPER || s->sp.auto_pad == PAD_SAME_LOWER)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "auto_pad SAME is not supported for a 3-D "
                                "transposed convolution");
        if (has_opad && nop != 3)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "output_padding does not fit 3 dimensions");
        for (int i = 0; i < 3; ++i) s->op3[i] = has_opad ? opad[i] : 0;
        if (has_opad && too_large(L, "output_padding", opad, nop)) return L->status;
        return SB_OK;
    }
    if (dims && dims != 1 && dims != 2)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%d-D transposed convolution is not supported "
                            "(1-D to 3-D are)", dims);
    s->dims = dims;
    if (s->has_kernel) {
        if (dims && nk != (size_t)dims)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "kernel_shape %s does not fit %d dimensions",
                                sb_py_list_text(kernel, nk, a, sizeof a), dims);
        memcpy(s->kernel, kernel, nk * sizeof *kernel);
    }
    if (read_spatial(L, dims ? dims : 2, NULL, 0, &s->sp)) return L->status;
    static const int64_t zeros[2] = {0, 0};
    if (!has_opad) opad = zeros, nop = (size_t)(dims ? dims : 2);
    if (nop != (size_t)(dims ? dims : 2))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "output_padding %s does not fit %d dimensions",
                            sb_py_list_text(opad, nop, a, sizeof a), dims);
    if (too_large(L, "output_padding", opad, nop)) return L->status;
    pairs(dims ? dims : 2, opad, 0, s->op2);
    if (s->has_output_shape) {
        if (nos < (size_t)dims)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "output_shape %s does not fit %d dimensions",
                                sb_py_list_text(oshape, nos, a, sizeof a), dims);
        if (too_large(L, "output_shape", oshape, nos)) return L->status;
        pairs(dims, oshape, 1, s->os2);
    }
    if (!w) return SB_OK;
    int status = convt_weights(L->node, s, &w->info, &s->w);   /* (its message names the node) */
    if (status) return L->status = status;
    int64_t count = numel4(s->w.w4), g = s->group;
    float *wt = count ? malloc((size_t)count * sizeof *wt) : NULL;
    if (count && !wt) return sb_load_fail(L, SB_ERR_NO_MEMORY, "out of memory");
    convt_flip(w->data, s->w.w4, g, wt);
    int64_t wt4[4] = {s->w.w4[1] * g, s->w.w4[0] / g, s->w.w4[2], s->w.w4[3]};
    status = pack_conv(L, wt, wt4, g, &s->weights);
    free(wt);
    if (status) return L->status;
    s->packed = 1;
    sb_load_consume(L, 1);
    return SB_OK;
}

typedef struct {
    int64_t x4[4];
    int64_t z4[4];               /* the zero-stuffed input */
    int64_t conv4[4];            /* the convolution's output */
    int64_t lo[2], hi[2];
    int crop;
    int64_t start[2], crop4[4];  /* the cropped window */
    sb_conv2d_args args;
    convt_w w;
    int64_t s2[2], d2[2];
} convt_plan;

/* Python's slice(start, stop).indices(size) for step 1: (start, length). */
static void py_slice(int64_t size, int64_t start, int64_t stop, int64_t *first, int64_t *len)
{
    if (start < 0) start += size;
    if (start < 0) start = 0;
    if (start > size) start = size;
    if (stop < 0) stop += size;
    if (stop < 0) stop = 0;
    if (stop > size) stop = size;
    *first = start;
    *len = stop > start ? stop - start : 0;
}

static int convt_geometry(const sb_node *node, const convt_state *s, const sb_tval *const *in,
                          int n_in, convt_plan *p, sb_vinfo *out)
{
    const sb_tval *x = in[0];
    char t1[256], t2[256];
    int status;
    if (s->packed) p->w = s->w;
    else if ((status = convt_weights(node, s, &in[1]->info, &p->w))) return status;
    const convt_w *w = &p->w;
    int dims = w->w_rank - 2;
    if ((status = as_2d(node, &x->info, p->x4))) return status;
    int64_t *x4 = p->x4;
    if (x4[1] != w->w4[0])
        return nfail(node, SB_ERR_VALUE, "X has %lld channels, W %s expects %lld", (long long)x4[1],
                     sb_py_tuple_text(w->w_shape, w->w_rank, t1, sizeof t1), (long long)w->w4[0]);
    if (numel4(x4) == 0)
        return nfail(node, SB_ERR_VALUE, "empty input %s", sb_py_tuple_text(x4, 4, t1, sizeof t1));
    pairs(dims, s->sp.strides, 1, p->s2);
    pairs(dims, s->sp.dilations, 1, p->d2);
    const int64_t *s2 = p->s2, *d2 = p->d2, *k2 = w->k2;
    int64_t raw_b[2], raw_e[2], begin[2] = {0, 0}, end[2] = {0, 0};
    pairs(dims, s->sp.pads, 0, raw_b);
    pairs(dims, s->sp.pads + dims, 0, raw_e);
    int same = s->sp.auto_pad == PAD_SAME_UPPER || s->sp.auto_pad == PAD_SAME_LOWER;
    for (int i = 0; i < 2; ++i) {
        int64_t size = x4[2 + i];
        int64_t span = sat_mul_add(s2[i], size - 1, s->op2[i]);
        int64_t full = span + extent_of(k2[i], d2[i]);
        if (s->has_output_shape || same) {
            int64_t target = s->has_output_shape ? s->os2[i] : sat_mul_add(size, s2[i], 0);
            int64_t total = full - target;
            if (s->sp.auto_pad == PAD_SAME_UPPER)
                begin[i] = floordiv(total, 2), end[i] = total - floordiv(total, 2);
            else
                begin[i] = total - floordiv(total, 2), end[i] = floordiv(total, 2);
        } else if (s->sp.auto_pad != PAD_VALID) {
            begin[i] = raw_b[i], end[i] = raw_e[i];
        }
    }
    int64_t z4[4] = {x4[0], x4[1], sat_mul_add(x4[2] - 1, s2[0], 1),
                     sat_mul_add(x4[3] - 1, s2[1], 1)};
    memcpy(p->z4, z4, sizeof z4);
    if ((status = check_elements(node, "ConvTranspose", z4, 4))) return status;
    int64_t pad4[4];
    for (int i = 0; i < 2; ++i) {
        int64_t ext = extent_of(k2[i], d2[i]) - 1;
        p->lo[i] = ext - begin[i];
        p->hi[i] = ext - end[i] + s->op2[i];
        pad4[2 * i] = p->lo[i] > 0 ? p->lo[i] : 0;
        pad4[2 * i + 1] = p->hi[i] > 0 ? p->hi[i] : 0;
    }
    int64_t one[2] = {1, 1}, o[2];
    if ((status = kernel_limits(node, "conv2d", NULL, one, d2, pad4))) return status;
    if ((status = output_hw(node, "conv2d", z4 + 2, pad4, k2, d2, one, o))) return status;
    int64_t c4[4] = {x4[0], w->w4[1] * s->group, o[0], o[1]};
    if ((status = check_elements(node, "conv2d", c4, 4))) return status;
    memcpy(p->conv4, c4, sizeof c4);
    memcpy(p->crop4, c4, sizeof c4);
    p->start[0] = p->start[1] = 0;
    p->crop = p->lo[0] < 0 || p->lo[1] < 0 || p->hi[0] < 0 || p->hi[1] < 0;
    if (p->crop)
        for (int i = 0; i < 2; ++i) {
            int64_t size = c4[2 + i];
            int64_t a = -p->lo[i] > 0 ? -p->lo[i] : 0, b = -p->hi[i] > 0 ? -p->hi[i] : 0;
            py_slice(size, a, size - b, &p->start[i], &p->crop4[2 + i]);
        }
    sb_vinfo y = {.dtype = SB_DT_FLOAT, .rank = 4};
    memcpy(y.dims, p->crop4, sizeof p->crop4);
    const sb_tval *bias = n_in > 2 ? in[2] : NULL;
    if (bias) {
        if (bias->info.dtype != SB_DT_FLOAT)
            return nfail(node, SB_ERR_TYPE, "input B must be float32, got %s",
                         sb_dtype_name(bias->info.dtype));
        int64_t c = bias->info.rank ? bias->info.dims[0] : 0;
        sb_vinfo b3 = {.dtype = SB_DT_FLOAT, .rank = 3, .dims = {c, 1, 1}};
        if (!bias->info.rank || sb_vinfo_numel(&bias->info) != c)
            return nfail(node, SB_ERR_VALUE, "cannot reshape %s to %s",
                         shape_text(&bias->info, t1, sizeof t1), shape_text(&b3, t2, sizeof t2));
        const sb_vinfo *both[2] = {&y, &b3};
        sb_vinfo sum;
        if (sb_broadcast(both, 2, &sum)) {
            char text[600];
            sb_broadcast_error_text(both, 2, text, sizeof text);
            return nfail(node, SB_ERR_VALUE, "%s", text);
        }
        sum.dtype = SB_DT_FLOAT;
        y = sum;
    }
    if ((status = from_2d(node, dims, y.dims, out))) return status;
    sb_conv2d_args *a = &p->args;
    memset(a, 0, sizeof *a);
    a->n = z4[0], a->c = z4[1], a->h = z4[2], a->w = z4[3];
    a->cout = c4[1], a->kh = k2[0], a->kw = k2[1], a->groups = s->group;
    a->stride_h = a->stride_w = 1, a->dil_h = d2[0], a->dil_w = d2[1];
    a->pad_top = pad4[0], a->pad_bottom = pad4[1], a->pad_left = pad4[2], a->pad_right = pad4[3];
    a->weights = (int64_t)(intptr_t)s->weights;   /* (computed weights: run sets them) */
    a->packed = s->packed;
    return SB_OK;
}

/* Workspace: the zero-stuffed input, then the convolution's output (when
 * it is not the node's), then the cropped one (when a bias broadcast
 * follows), then (computed weights) the convolution's weights. */
static void convt_layout(const convt_state *s, const convt_plan *p, const sb_vinfo *out,
                         int64_t *z_bytes, int64_t *conv_bytes, int64_t *crop_bytes,
                         int64_t *w_bytes)
{
    int64_t final = sb_vinfo_numel(out), crop = numel4(p->crop4);
    *z_bytes = (numel4(p->z4) * 4 + 63) / 64 * 64;
    *conv_bytes = p->crop || crop != final ? (numel4(p->conv4) * 4 + 63) / 64 * 64 : 0;
    *crop_bytes = p->crop && crop != final ? (crop * 4 + 63) / 64 * 64 : 0;
    *w_bytes = s->packed ? 0 : (numel4(p->w.w4) * 4 + 63) / 64 * 64;
}

/* A 3-D transposed convolution: the convolution (kernels/conv3d.c, stride
 * 1) of the input with stride - 1 zeros between elements and
 * dilation * (k - 1) - pad_begin zeros before, dilation * (k - 1) -
 * pad_end + output_padding after, with the weights' channels swapped per
 * group and the kernel flipped on every axis, then + B: the 2-D definition
 * over three axes. Pads above dilation * (k - 1) are refused. */
typedef struct {
    sb_conv3d_args conv;         /* over the stuffed input z */
    int64_t z[3], lo[3], stride[3];
    int64_t n, c, mg;            /* batch, input channels, output channels per group */
} convt3d_plan;

static int is_3d(const convt_state *s, const sb_tval *const *in)
{
    return s->dims == 3 || (!s->dims && in[1] && in[1]->info.rank == 5);
}

static int convt3d_geometry(const sb_node *node, const convt_state *s, const sb_tval *const *in,
                            int n_in, convt3d_plan *p, sb_vinfo *out)
{
    const sb_tval *x = in[0], *w = in[1], *b = n_in > 2 ? in[2] : NULL;
    char t1[256], t2[256];
    if (x->info.rank != 5 || w->info.rank != 5)
        return nfail(node, SB_ERR_VALUE, "a 3-D transposed convolution needs 5-D X and W, got %s and %s",
                     shape_text(&x->info, t1, sizeof t1), shape_text(&w->info, t2, sizeof t2));
    int64_t g = s->group, c = x->info.dims[1];
    if (w->info.dims[0] != c || c % g)
        return nfail(node, SB_ERR_VALUE, "X %s and W %s do not fit group=%lld",
                     shape_text(&x->info, t1, sizeof t1), shape_text(&w->info, t2, sizeof t2), (long long)g);
    memset(p, 0, sizeof *p);
    p->n = x->info.dims[0], p->c = c, p->mg = w->info.dims[1];
    *out = x->info;
    out->dims[1] = p->mg * g;
    for (int d = 0; d < 3; ++d) {
        /* (rank found from W at run: every spatial attribute at its default) */
        int given = s->dims == 3;
        int64_t k = w->info.dims[2 + d], st = given ? s->sp.strides[d] : 1;
        int64_t dl = given ? s->sp.dilations[d] : 1;
        int64_t pb = !given || s->sp.auto_pad == PAD_VALID ? 0 : s->sp.pads[d];
        int64_t pe = !given || s->sp.auto_pad == PAD_VALID ? 0 : s->sp.pads[3 + d];
        p->stride[d] = st;
        int64_t in_len = x->info.dims[2 + d], ext = (k - 1) * dl;
        if (k < 1 || in_len < 1 || k > LIMIT || in_len > LIMIT || ext > LIMIT)
            return nfail(node, SB_ERR_VALUE, "empty or too large axes are not supported");
        if (pb > ext || pe > ext + s->op3[d])
            return nfail(node, SB_ERR_UNSUPPORTED, "pads above dilation * (kernel - 1) are not supported "
                         "for a 3-D transposed convolution");
        p->lo[d] = ext - pb;
        p->z[d] = (in_len - 1) * st + 1 + p->lo[d] + (ext - pe + s->op3[d]);
        int64_t o = p->z[d] - ext;
        if (o < 1) return nfail(node, SB_ERR_VALUE, "the output size along axis %d is below 1", d);
        out->dims[2 + d] = o;
        sb_conv3d_args *a = &p->conv;
        a->in[d] = p->z[d], a->out[d] = o, a->kernel[d] = k, a->stride[d] = 1, a->dilation[d] = dl;
    }
    p->conv.n = p->n, p->conv.c = c, p->conv.cout = p->mg * g, p->conv.groups = g;
    if (b && (b->info.dtype != SB_DT_FLOAT || b->info.rank != 1 || b->info.dims[0] != p->mg * g))
        return nfail(node, SB_ERR_VALUE, "B must be float32 of shape (%lld,)", (long long)(p->mg * g));
    return check_elements(node, "ConvTranspose", out->dims, 5);
}

static int convt3d_run(sb_run_ctx *R)
{
    const convt_state *s = R->state;
    convt3d_plan p;
    sb_vinfo out;
    int status = convt3d_geometry(R->node, s, R->in, R->n_in, &p, &out);
    if (status) return status;
    const sb_tval *x = R->in[0], *w = R->in[1];
    int64_t zs = p.z[0] * p.z[1] * p.z[2], k3 = p.conv.kernel[0] * p.conv.kernel[1] * p.conv.kernel[2];
    float *z = R->workspace, *wt = z + p.n * p.c * zs;
    memset(z, 0, (size_t)(p.n * p.c * zs) * sizeof *z);
    const int64_t *xd = x->info.dims;
    const float *xv = x->data;
    for (int64_t nc = 0; nc < p.n * p.c; ++nc)
        for (int64_t i = 0; i < xd[2]; ++i)
            for (int64_t j = 0; j < xd[3]; ++j)
                for (int64_t k = 0; k < xd[4]; ++k) {
                    int64_t zi = p.lo[0] + i * p.stride[0], zj = p.lo[1] + j * p.stride[1];
                    int64_t zk = p.lo[2] + k * p.stride[2];
                    z[nc * zs + (zi * p.z[1] + zj) * p.z[2] + zk] = xv[((nc * xd[2] + i) * xd[3] + j) * xd[4] + k];
                }
    /* the 2-D permutation: flipping every spatial axis reverses the
     * kernel's flat index, so the kernel is one row of k3 taps here */
    int64_t w4[4] = {p.c, p.mg, 1, k3};
    convt_flip(w->data, w4, s->group, wt);
    float *y = R->out[0]->data;
    sb_conv3d_sums(&p.conv, z, wt, y);
    const float *bias = R->n_in > 2 && R->in[2] ? R->in[2]->data : NULL;
    int64_t plane = out.dims[2] * out.dims[3] * out.dims[4];
    if (bias)
        for (int64_t b = 0; b < p.n; ++b)
            sb_epilogue(y + b * p.conv.cout * plane, (ptrdiff_t)plane, (size_t)p.conv.cout, (size_t)plane,
                        bias, NULL, 0);
    return SB_OK;
}

static int convt_infer(sb_infer_ctx *I)
{
    if (is_3d(I->state, I->in)) {
        int status = need_floats(I, 0, "X");
        if (!status) status = need_floats(I, 1, "W");
        if (status) return status;
        convt3d_plan p;
        status = convt3d_geometry(I->node, I->state, I->in, I->n_in, &p, &I->out[0]);
        if (status) return status;
        int64_t zs = p.z[0] * p.z[1] * p.z[2];
        I->workspace = 4 * (p.n * p.c * zs + sb_vinfo_numel(&I->in[1]->info)) + 64;
        return SB_OK;
    }
    const convt_state *s = I->state;
    int status = need_floats(I, 0, "X");
    if (!status && !s->packed) status = need_floats(I, 1, "W");
    if (status) return status;
    convt_plan p;
    status = convt_geometry(I->node, s, I->in, I->n_in, &p, &I->out[0]);
    if (status) return status;
    int64_t z, c, k, wb;
    convt_layout(s, &p, &I->out[0], &z, &c, &k, &wb);
    I->workspace = z + c + k + wb;
    return SB_OK;
}

static int convt_run(sb_run_ctx *R)
{
    if (is_3d(R->state, R->in)) return convt3d_run(R);
    const convt_state *s = R->state;
    convt_plan p;
    sb_vinfo out;
    int status = convt_geometry(R->node, s, R->in, R->n_in, &p, &out);
    if (status) return status;
    int64_t zb, cb, kb, wb;
    convt_layout(s, &p, &out, &zb, &cb, &kb, &wb);
    uint8_t *ws = R->workspace;
    if (!s->packed) {
        float *wt = (float *)(ws + zb + cb + kb);
        convt_flip(R->in[1]->data, p.w.w4, s->group, wt);
        p.args.weights = (int64_t)(intptr_t)wt;
    }
    float *z = (float *)ws, *y = R->out[0]->data;
    int64_t final = sb_vinfo_numel(&out);
    float *conv = cb ? (float *)(ws + zb) : y;
    float *crop = kb ? (float *)(ws + zb + cb) : (numel4(p.crop4) == final ? y : conv);
    /* x's values at multiples of the stride, +0 between */
    memset(z, 0, (size_t)(numel4(p.z4) * 4));
    int64_t xs[4] = {p.x4[1] * p.x4[2] * p.x4[3], p.x4[2] * p.x4[3], p.x4[3], 1};
    int64_t zs[4] = {p.z4[1] * p.z4[2] * p.z4[3], p.z4[2] * p.z4[3], p.z4[3] * p.s2[0], p.s2[1]};
    if ((status = sb_k_copy(R->threads, 4, p.x4, 4, R->in[0]->data, xs, z, zs)))
        return sb_run_fail(R, status, "copy failed (status %d)", status);
    p.args.path = R->path, p.args.mode = R->mode, p.args.max_threads = R->threads;
    p.args.x = (int64_t)(intptr_t)z, p.args.y = (int64_t)(intptr_t)conv;
    if ((status = sb_conv2d(&p.args))) return sb_run_fail(R, status, "conv2d failed (status %d)", status);
    if (p.crop) {   /* negative padding: crop the result */
        int64_t cs[4] = {p.conv4[1] * p.conv4[2] * p.conv4[3], p.conv4[2] * p.conv4[3], p.conv4[3], 1};
        int64_t ks[4] = {p.crop4[1] * p.crop4[2] * p.crop4[3], p.crop4[2] * p.crop4[3], p.crop4[3], 1};
        const float *from = conv + p.start[0] * cs[2] + p.start[1];
        if ((status = sb_k_copy(R->threads, 4, p.crop4, 4, from, cs, crop, ks)))
            return sb_run_fail(R, status, "copy failed (status %d)", status);
    }
    const sb_tval *b = R->n_in > 2 ? R->in[2] : NULL;
    if (b) {
        sb_tval cropped = {.info = {.dtype = SB_DT_FLOAT, .rank = 4}, .data = crop};
        memcpy(cropped.info.dims, p.crop4, sizeof p.crop4);
        sb_tval b3 = {.info = {.dtype = SB_DT_FLOAT, .rank = 3, .dims = {b->info.dims[0], 1, 1}},
                      .data = b->data};
        sb_tval full = {.info = {.dtype = SB_DT_FLOAT, .rank = 4}, .data = y};
        const sb_vinfo *both[2] = {&cropped.info, &b3.info};
        sb_broadcast(both, 2, &full.info);
        full.info.dtype = SB_DT_FLOAT;
        if ((status = sb_k_binary(R, SB_BIN_ADD, &cropped, &b3, &full)))
            return sb_run_fail(R, status, "add failed (status %d)", status);
    }
    return SB_OK;
}

const sb_op_def sb_op_ConvTranspose = {
    .name = "ConvTranspose", .load = convt_load, .infer = convt_infer, .run = convt_run};
