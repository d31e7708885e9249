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

typedef struct {
    spatial sp;
    int dims;
    int64_t group;
    int64_t w_shape[4];          /* the weights as given, (C, M/g, k...) */
    int w_rank;
    int64_t w4[4];               /* as 2-D: (C, M/g, KH, KW) */
    int64_t k2[2], s2[2], d2[2], op2[2];
    int has_output_shape;
    int64_t os2[2];              /* output_shape per 2-D axis */
    const void *weights;         /* the equivalent convolution's, packed */
} convt_state;

static int convt_load(sb_load_ctx *L)
{
    convt_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    const sb_tval *w = sb_load_const(L, 1);
    if (!w) return sb_load_fail(L, SB_ERR_UNSUPPORTED, "the weights must be a constant");
    if (w->info.dtype != SB_DT_FLOAT)
        return sb_load_fail(L, SB_ERR_TYPE, "input W must be float32, got %s",
                            sb_dtype_name(w->info.dtype));
    int dims = w->info.rank - 2;
    if (dims != 1 && dims != 2)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%d-D transposed convolution is not supported "
                            "(1-D and 2-D are)", dims);
    s->dims = dims;
    s->w_rank = w->info.rank;
    memcpy(s->w_shape, w->info.dims, (size_t)w->info.rank * sizeof *s->w_shape);
    const int64_t *kernel = NULL;
    size_t nk = 0;
    int has_kernel = sb_attr_ints(L, "kernel_shape", &kernel, &nk);
    if (L->status) return L->status;
    char a[256], b[256];
    if (has_kernel) {
        int match = nk == (size_t)dims;
        for (int i = 0; match && i < dims; ++i) match = w->info.dims[2 + i] == kernel[i];
        if (!match)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "weights of shape %s do not match "
                                "kernel_shape %s", shape_text(&w->info, a, sizeof a),
                                sb_py_list_text(kernel, nk, b, sizeof b));
    }
    s->group = sb_attr_int(L, "group", 1);
    if (L->status) return L->status;
    if (read_spatial(L, dims, w->info.dims + 2, (size_t)dims, &s->sp)) return L->status;
    static const int64_t zeros[2] = {0, 0};
    const int64_t *opad = zeros, *oshape = NULL;
    size_t nop = (size_t)dims, nos = 0;
    if (!sb_attr_ints(L, "output_padding", &opad, &nop)) opad = zeros, nop = (size_t)dims;
    if (L->status) return L->status;
    s->has_output_shape = sb_attr_ints(L, "output_shape", &oshape, &nos);
    if (L->status) return L->status;
    if (nop != (size_t)dims)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "output_padding %s does not fit %d dimensions",
                            sb_py_list_text(opad, nop, a, sizeof a), dims);
    if (too_large(L, "output_padding", opad, nop)) return L->status;
    if (s->has_output_shape) {
        if (nos < (size_t)dims)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "output_shape %s does not fit %d dimensions",
                                sb_py_list_text(oshape, nos, a, sizeof a), dims);
        if (too_large(L, "output_shape", oshape, nos)) return L->status;
        pairs(dims, oshape, 1, s->os2);
    }
    if (s->group < 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "group=%lld must be positive", (long long)s->group);
    if (dims == 1)
        s->w4[0] = w->info.dims[0], s->w4[1] = w->info.dims[1], s->w4[2] = 1,
        s->w4[3] = w->info.dims[2];
    else
        memcpy(s->w4, w->info.dims, sizeof s->w4);
    int64_t c = s->w4[0], mg = s->w4[1], kh = s->w4[2], kw = s->w4[3], g = s->group;
    if (c % g)
        return sb_load_fail(L, SB_ERR_VALUE, "group=%lld does not divide the %lld input channels",
                            (long long)g, (long long)c);
    for (int i = 0; i < 4; ++i)
        if (s->w4[i] > LIMIT)
            return sb_load_fail(L, SB_ERR_VALUE, "W has shape %s; dimensions above 2**40 are not "
                                "supported", shape_text(&w->info, a, sizeof a));
    /* (C, M/g, kH, kW) as the equivalent convolution's (M, C/g, kH, kW),
     * flipped in both spatial dimensions: a permutation of the values */
    int64_t cg = c / g, count = numel4(s->w4);
    float *wt = count ? malloc((size_t)count * sizeof *wt) : NULL;
    if (count && !wt) return sb_load_fail(L, SB_ERR_NO_MEMORY, "out of memory");
    const float *src = w->data;
    for (int64_t gi = 0; gi < g; ++gi)
        for (int64_t m = 0; m < mg; ++m)
            for (int64_t cc = 0; cc < cg; ++cc)
                for (int64_t y = 0; y < kh; ++y)
                    for (int64_t x = 0; x < kw; ++x)
                        wt[(((gi * mg + m) * cg + cc) * kh + y) * kw + x] =
                            src[(((gi * cg + cc) * mg + m) * kh + (kh - 1 - y)) * kw + (kw - 1 - x)];
    int64_t wt4[4] = {mg * g, cg, kh, kw};
    int status = pack_conv(L, wt, wt4, g, &s->weights);
    free(wt);
    if (status) return L->status;
    s->k2[0] = kh, s->k2[1] = kw;
    pairs(dims, s->sp.strides, 1, s->s2);
    pairs(dims, s->sp.dilations, 1, s->d2);
    pairs(dims, opad, 0, s->op2);
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
    int status = as_2d(node, &x->info, p->x4);
    if (status) return status;
    int64_t *x4 = p->x4;
    if (x4[1] != s->w4[0])
        return nfail(node, SB_ERR_VALUE, "X has %lld channels, W %s expects %lld", (long long)x4[1],
                     sb_py_tuple_text(s->w_shape, s->w_rank, t1, sizeof t1), (long long)s->w4[0]);
    if (numel4(x4) == 0)
        return nfail(node, SB_ERR_VALUE, "empty input %s", sb_py_tuple_text(x4, 4, t1, sizeof t1));
    int dims = s->dims;
    int64_t raw_b[2], raw_e[2], begin[2] = {0, 0}, end[2] = {0, 0};
    pairs(dims, s->sp.pads, 0, raw_b);
    pairs(dims, s->sp.pads + dims, 0, raw_e);
    int same = s->sp.auto_pad == PAD_SAME_UPPER || s->sp.auto_pad == PAD_SAME_LOWER;
    for (int i = 0; i < 2; ++i) {
        int64_t size = x4[2 + i];
        int64_t span = sat_mul_add(s->s2[i], size - 1, s->op2[i]);
        int64_t full = span + extent_of(s->k2[i], s->d2[i]);
        if (s->has_output_shape || same) {
            int64_t target = s->has_output_shape ? s->os2[i] : sat_mul_add(size, s->s2[i], 0);
            int64_t total = full - target;
            if (s->sp.auto_pad == PAD_SAME_UPPER)
                begin[i] = floordiv(total, 2), end[i] = total - floordiv(total, 2);
            else
                begin[i] = total - floordiv(total, 2), end[i] = floordiv(total, 2);
        } else if (s->sp.auto_pad != PAD_VALID) {
            begin[i] = raw_b[i], end[i] = raw_e[i];
        }
    }
    int64_t z4[4] = {x4[0], x4[1], sat_mul_add(x4[2] - 1, s->s2[0], 1),
                     sat_mul_add(x4[3] - 1, s->s2[1], 1)};
    memcpy(p->z4, z4, sizeof z4);
    if ((status = check_elements(node, "ConvTranspose", z4, 4))) return status;
    int64_t pad4[4];
    for (int i = 0; i < 2; ++i) {
        int64_t ext = extent_of(s->k2[i], s->d2[i]) - 1;
        p->lo[i] = ext - begin[i];
        p->hi[i] = ext - end[i] + s->op2[i];
        pad4[2 * i] = p->lo[i] > 0 ? p->lo[i] : 0;
        pad4[2 * i + 1] = p->hi[i] > 0 ? p->hi[i] : 0;
    }
    int64_t one[2] = {1, 1}, o[2];
    if ((status = kernel_limits(node, "conv2d", NULL, one, s->d2, pad4))) return status;
    if ((status = output_hw(node, "conv2d", z4 + 2, pad4, s->k2, s->d2, one, o))) return status;
    int64_t c4[4] = {x4[0], s->w4[1] * s->group, o[0], o[1]};
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
    a->cout = c4[1], a->kh = s->k2[0], a->kw = s->k2[1], a->groups = s->group;
    a->stride_h = a->stride_w = 1, a->dil_h = s->d2[0], a->dil_w = s->d2[1];
    a->pad_top = pad4[0], a->pad_bottom = pad4[1], a->pad_left = pad4[2], a->pad_right = pad4[3];
    a->weights = (int64_t)(intptr_t)s->weights;
    a->packed = 1;
    return SB_OK;
}

/* Workspace: the zero-stuffed input, then the convolution's output (when
 * it is not the node's), then the cropped one (when a bias broadcast
 * follows). */
static void convt_layout(const convt_plan *p, const sb_vinfo *out, int64_t *z_bytes,
                         int64_t *conv_bytes, int64_t *crop_bytes)
{
    int64_t final = sb_vinfo_numel(out), crop = numel4(p->crop4);
    *z_bytes = (numel4(p->z4) * 4 + 63) / 64 * 64;
    *conv_bytes = p->crop || crop != final ? (numel4(p->conv4) * 4 + 63) / 64 * 64 : 0;
    *crop_bytes = p->crop && crop != final ? (crop * 4 + 63) / 64 * 64 : 0;
}

static int convt_infer(sb_infer_ctx *I)
{
    int status = need_floats(I, 0, "X");
    if (status) return status;
    convt_plan p;
    status = convt_geometry(I->node, I->state, I->in, I->n_in, &p, &I->out[0]);
    if (status) return status;
    int64_t z, c, k;
    convt_layout(&p, &I->out[0], &z, &c, &k);
    I->workspace = z + c + k;
    return SB_OK;
}

static int convt_run(sb_run_ctx *R)
{
    const convt_state *s = R->state;
    convt_plan p;
    sb_vinfo out;
    int status = convt_geometry(R->node, s, R->in, R->n_in, &p, &out);
    if (status) return status;
    int64_t zb, cb, kb;
    convt_layout(&p, &out, &zb, &cb, &kb);
    uint8_t *ws = R->workspace;
    float *z = (float *)ws, *y = R->out[0]->data;
    int64_t final = sb_vinfo_numel(&out);
    float *conv = cb ? (float *)(ws + zb) : y;
    float *crop = kb ? (float *)(ws + zb + cb) : (numel4(p.crop4) == final ? y : conv);
    /* x's values at multiples of the stride, +0 between */
    memset(z, 0, (size_t)(numel4(p.z4) * 4));
    int64_t xs[4] = {p.x4[1] * p.x4[2] * p.x4[3], p.x4[2] * p.x4[3], p.x4[3], 1};
    int64_t zs[4] = {p.z4[1] * p.z4[2] * p.z4[3], p.z4[2] * p.z4[3], p.z4[3] * s->s2[0], s->s2[1]};
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
