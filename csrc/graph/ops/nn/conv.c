/* ONNX Conv (docs/onnx.md): sb_conv2d's arguments, the weights packed at load. */
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

typedef struct {
    spatial sp;
    int dims;
    int64_t group, activation;
    int packed;                  /* constant weights, packed at load */
    const void *weights;         /* sb_conv2d_pack's layout */
    int64_t w4[4];               /* their (Cout, C/G, KH, KW) shape */
    /* an absorbed BatchNormalization's (Cout, 4) steps, and the input index
     * of an absorbed Add's residual (graph_fuse.c); null and -1 for none */
    const float *affine;
    int residual;
} conv_state;

/* The fused steps a load recorded (before any early return). */
static int load_fused(sb_load_ctx *L, conv_state *s)
{
    s->residual = L->node->fused_residual;
    if (L->node->fused_affine >= 0) {
        const sb_tval *t = sb_load_const_value(L, L->node->fused_affine);
        if (!t || !t->data)
            return sb_load_fail(L, SB_ERR_ARGUMENT, "the absorbed BatchNormalization's steps are "
                                "missing");
        s->affine = t->data;
    }
    return SB_OK;
}

static int conv_load(sb_load_ctx *L)
{
    conv_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    if (load_fused(L, s)) return L->status;
    const sb_tval *w = sb_load_const(L, 1);
    const int64_t *kernel = NULL;
    size_t nk = 0;
    int has_kernel = sb_attr_ints(L, "kernel_shape", &kernel, &nk);
    if (L->status) return L->status;
    s->group = sb_attr_int(L, "group", 1);
    if (L->status) return L->status;
    /* The spatial rank: kernel_shape's length, the constant weights', or
     * that of the strides, dilations or pads given. With none of them every
     * spatial attribute is its default (ones, zeros or auto_pad's), whatever
     * the rank: then infer takes it from W (dims 0 here). */
    int dims = 0;
    if (has_kernel) dims = (int)(nk < 100 ? nk : 100);
    else if (w) dims = w->info.rank - 2;
    else {
        dims = spatial_rank_of_attrs(L);
        if (!dims) {
            if (read_spatial(L, 2, NULL, 0, &s->sp)) return L->status;
            if (s->group < 1)
                return sb_load_fail(L, SB_ERR_UNSUPPORTED, "group=%lld must be positive",
                                    (long long)s->group);
            s->activation = L->node->activation;
            return SB_OK;
        }
    }
    if (dims < 1 || dims > 3)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%d-D convolution is not supported (1-D to 3-D "
                            "are)", dims);
    s->dims = dims;
    if (read_spatial(L, dims, has_kernel ? kernel : NULL, nk, &s->sp)) return L->status;
    if (s->group < 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "group=%lld must be positive", (long long)s->group);
    s->activation = L->node->activation;
    if (!w || dims == 3) return SB_OK;   /* 3-D: kernels/conv3d.c reads the weights as they are */
    if (w->info.dtype != SB_DT_FLOAT)
        return sb_load_fail(L, SB_ERR_TYPE, "input W must be float32, got %s",
                            sb_dtype_name(w->info.dtype));
    int match = w->info.rank == dims + 2;
    for (int i = 0; match && has_kernel && i < dims; ++i) match = w->info.dims[2 + i] == kernel[i];
    if (!match) {
        char a[256], b[256];
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "weights of shape %s do not match kernel_shape %s",
                            shape_text(&w->info, a, sizeof a),
                            has_kernel ? sb_py_list_text(kernel, nk, b, sizeof b) : "None");
    }
    if (dims == 1)
        s->w4[0] = w->info.dims[0], s->w4[1] = w->info.dims[1], s->w4[2] = 1,
        s->w4[3] = w->info.dims[2];
    else
        memcpy(s->w4, w->info.dims, sizeof s->w4);
    if (pack_conv(L, w->data, s->w4, s->group, &s->weights)) return L->status;
    s->packed = 1;
    sb_load_consume(L, 1);
    return SB_OK;
}

/* The sb_conv2d call for these inputs (checked as conv2d checks them) and
 * the output info. */
static int conv_geometry(const sb_node *node, const conv_state *s, const sb_tval *const *in, int n_in,
                         sb_conv2d_args *a, sb_vinfo *out)
{
    const sb_tval *x = in[0];
    int64_t x4[4] = {0, 0, 0, 0}, w4[4];
    char t1[256], t2[256];
    int status;
    int dims = s->dims;
    spatial sp = s->sp;
    if (s->packed) {
        memcpy(w4, s->w4, sizeof w4);
    } else {
        const sb_tval *w = in[1];
        if (!dims) {
            /* every spatial attribute at its default (conv_load) */
            dims = w->info.rank - 2;
            if (dims != 1 && dims != 2)   /* (3-D: conv3d_geometry) */
                return nfail(node, SB_ERR_UNSUPPORTED, "W %s: %d-D convolution is not supported "
                             "(1-D to 3-D are)", shape_text(&w->info, t1, sizeof t1), dims);
            sp.dims = dims;
        }
        if (w->info.rank != dims + 2)
            return nfail(node, SB_ERR_VALUE, "W %s is not %d-D weights",
                         shape_text(&w->info, t1, sizeof t1), dims);
        if (dims == 1) w4[0] = w->info.dims[0], w4[1] = w->info.dims[1], w4[2] = 1, w4[3] = w->info.dims[2];
        else memcpy(w4, w->info.dims, sizeof w4);
    }
    /* (X 3-D with 2-D weights, or 4-D with 1-D ones: torch's forms, as height 1) */
    if ((status = as_2d(node, &x->info, x4))) return status;
    const sb_tval *b = n_in > 2 ? in[2] : NULL;
    int64_t sizes[2], kdims[2], p[4], pad4[4], st2[2], dl2[2], k2[2] = {w4[2], w4[3]}, o[2];
    spatial_sizes(x4, dims, sizes);
    if (dims == 2) kdims[0] = w4[2], kdims[1] = w4[3];
    else kdims[0] = w4[3];
    resolve_pads(&sp, sizes, kdims, p);
    if (x4[1] != w4[1] * s->group)
        return nfail(node, SB_ERR_VALUE, "X has %lld channels, W %s with group=%lld expects %lld",
                     (long long)x4[1], sb_py_tuple_text(w4, 4, t1, sizeof t1), (long long)s->group,
                     (long long)(w4[1] * s->group));
    if (numel4(x4) == 0)
        return nfail(node, SB_ERR_VALUE, "empty input %s", sb_py_tuple_text(x4, 4, t1, sizeof t1));
    pairs(dims, sp.strides, 1, st2);
    pairs(dims, sp.dilations, 1, dl2);
    torch_padding(dims, p, pad4);
    if ((status = kernel_limits(node, "conv2d", NULL, st2, dl2, pad4))) return status;
    for (int i = 0; i < 4; ++i)
        if (w4[i] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "conv2d: w has shape %s; dimensions above 2**40 = %lld "
                         "are not supported", sb_py_tuple_text(w4, 4, t1, sizeof t1), (long long)LIMIT);
    if (w4[0] % s->group)
        return nfail(node, SB_ERR_VALUE, "conv2d: groups=%lld does not divide the %lld output "
                     "channels of w (shape %s)", (long long)s->group, (long long)w4[0],
                     sb_py_tuple_text(w4, 4, t1, sizeof t1));
    if (w4[2] < 1 || w4[3] < 1)
        return nfail(node, SB_ERR_VALUE, "conv2d: w has an empty kernel (shape %s)",
                     sb_py_tuple_text(w4, 4, t1, sizeof t1));
    if ((status = output_hw(node, "conv2d", x4 + 2, pad4, k2, dl2, st2, o))) return status;
    int64_t y4[4] = {x4[0], w4[0], o[0], o[1]};
    if ((status = check_elements(node, "conv2d", y4, 4))) return status;
    if (b) {
        if (b->info.dtype != SB_DT_FLOAT)
            return nfail(node, SB_ERR_TYPE, "input B must be float32, got %s",
                         sb_dtype_name(b->info.dtype));
        if (b->info.rank != 1)
            return nfail(node, SB_ERR_VALUE, "bias must be 1-D, got shape %s",
                         shape_text(&b->info, t1, sizeof t1));
        if (b->info.dims[0] != w4[0])
            return nfail(node, SB_ERR_VALUE, "conv2d: bias has shape %s, expected (%lld,) for w of "
                         "shape %s", shape_text(&b->info, t1, sizeof t1), (long long)w4[0],
                         sb_py_tuple_text(w4, 4, t2, sizeof t2));
    }
    if ((status = from_2d(node, dims, y4, out))) return status;
    if (a) {
        memset(a, 0, sizeof *a);
        a->n = x4[0], a->c = x4[1], a->h = x4[2], a->w = x4[3];
        a->cout = w4[0], a->kh = w4[2], a->kw = w4[3], a->groups = s->group;
        a->stride_h = st2[0], a->stride_w = st2[1], a->dil_h = dl2[0], a->dil_w = dl2[1];
        a->pad_top = pad4[0], a->pad_bottom = pad4[1], a->pad_left = pad4[2], a->pad_right = pad4[3];
        a->x = (int64_t)(intptr_t)x->data;
        a->weights = (int64_t)(intptr_t)(s->packed ? s->weights : in[1]->data);
        a->packed = s->packed;
        a->bias = b ? (int64_t)(intptr_t)b->data : 0;
        a->activation = s->activation;
    }
    return SB_OK;
}

/* A 3-D convolution: s->dims 3, or no spatial attribute and 5-D weights. */
static int is_3d(const conv_state *s, const sb_tval *const *in)
{
    return s->dims == 3 || (!s->dims && in[1] && in[1]->info.rank == 5);
}

/* kernels/conv3d.c's arguments and the output info. */
static int conv3d_geometry(const sb_node *node, const conv_state *s, const sb_tval *const *in, int n_in,
                           sb_conv3d_args *a, sb_vinfo *out)
{
    const sb_tval *x = in[0], *w = in[1], *b = n_in > 2 ? in[2] : NULL;
    char t1[256], t2[256];
    if (x->info.rank != 5 || w->info.rank != 5)
        return nfail(node, SB_ERR_VALUE, "a 3-D convolution needs 5-D X and W, got %s and %s",
                     shape_text(&x->info, t1, sizeof t1), shape_text(&w->info, t2, sizeof t2));
    spatial sp = s->sp;
    sp.dims = 3;
    int64_t p[6];
    resolve_pads(&sp, x->info.dims + 2, w->info.dims + 2, p);
    memset(a, 0, sizeof *a);
    a->n = x->info.dims[0], a->c = x->info.dims[1], a->cout = w->info.dims[0], a->groups = s->group;
    for (int i = 0; i < 5; ++i)
        if (x->info.dims[i] > LIMIT || w->info.dims[i] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "dimensions above 2**40 are not supported");
    if (a->c != w->info.dims[1] * s->group || a->cout % s->group)
        return nfail(node, SB_ERR_VALUE, "X %s and W %s do not fit group=%lld",
                     shape_text(&x->info, t1, sizeof t1), shape_text(&w->info, t2, sizeof t2),
                     (long long)s->group);
    *out = x->info;
    out->dims[1] = a->cout;
    for (int d = 0; d < 3; ++d) {
        int64_t k = w->info.dims[2 + d], st = sp.strides[d], dl = sp.dilations[d];
        if (k < 1) return nfail(node, SB_ERR_VALUE, "W %s has an empty kernel", shape_text(&w->info, t1, sizeof t1));
        int64_t span = x->info.dims[2 + d] + p[d] + p[3 + d] - extent_of(k, dl);
        int64_t o = span < 0 ? 0 : span / st + 1;
        if (o < 1 || p[d] > LIMIT || p[3 + d] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "the output size along spatial axis %d is below 1", d);
        a->in[d] = x->info.dims[2 + d], a->out[d] = o, a->kernel[d] = k;
        a->stride[d] = st, a->dilation[d] = dl, a->pad_begin[d] = p[d];
        out->dims[2 + d] = o;
    }
    if (b && (b->info.dtype != SB_DT_FLOAT || b->info.rank != 1 || b->info.dims[0] != a->cout))
        return nfail(node, SB_ERR_VALUE, "B must be float32 of shape (%lld,)", (long long)a->cout);
    return check_elements(node, "Conv", out->dims, out->rank);
}

/* The 3-D convolution into y (its own output shape): bias, the absorbed
 * BatchNormalization, residual (null, or y's layout) and, when
 * with_activation, the activation. */
static int conv3d_run(sb_run_ctx *R, const float *residual, float *y, int with_activation)
{
    const conv_state *s = R->state;
    sb_conv3d_args a;
    sb_vinfo out;
    int status = conv3d_geometry(R->node, s, R->in, R->n_in, &a, &out);
    if (status) return status;
    sb_conv3d_sums(&a, R->in[0]->data, R->in[1]->data, y);
    const float *bias = R->n_in > 2 && R->in[2] ? R->in[2]->data : NULL;
    int64_t plane = a.out[0] * a.out[1] * a.out[2];
    for (int64_t n = 0; n < a.n; ++n) {
        const sb_epilogue_ops e = {.row_bias = bias, .row_affine = s->affine,
                                   .residual = residual ? residual + n * a.cout * plane : NULL,
                                   .activation = with_activation ? s->activation : 0,
                                   .fast = R->mode == SB_MODE_FAST};
        sb_epilogue_ops_run(y + n * a.cout * plane, (ptrdiff_t)plane, (size_t)a.cout, (size_t)plane,
                            &e);
    }
    return SB_OK;
}

/* The output of a Conv that absorbed an Add: the convolution's output
 * broadcast with the residual, as the Add gave it. */
static int residual_info(sb_infer_ctx *I, const conv_state *s)
{
    const sb_tval *r = s->residual < I->n_in ? I->in[s->residual] : NULL;
    if (!r) return nfail(I->node, SB_ERR_VALUE, "the absorbed Add's other input is missing");
    if (r->info.dtype != SB_DT_FLOAT)
        return nfail(I->node, SB_ERR_TYPE, "the absorbed Add's other input must be float32, got %s",
                     sb_dtype_name(r->info.dtype));
    const sb_vinfo conv_out = I->out[0];
    const sb_vinfo *shapes[2] = {&conv_out, &r->info};
    return sb_infer_broadcast(I, shapes, 2, &I->out[0]);
}

static int conv_infer(sb_infer_ctx *I)
{
    const conv_state *s = I->state;
    int status = need_floats(I, 0, "X");
    if (!status && !s->packed) status = need_floats(I, 1, "W");
    if (status) return status;
    if (is_3d(s, I->in)) {
        sb_conv3d_args a;
        status = conv3d_geometry(I->node, s, I->in, I->n_in, &a, &I->out[0]);
    } else {
        status = conv_geometry(I->node, s, I->in, I->n_in, NULL, &I->out[0]);
    }
    return status || s->residual < 0 ? status : residual_info(I, s);
}

/* The sb_conv2d call for these infos, parsed and planned once: a run only
 * gives it its operands. */
static int conv_prepare(sb_prepare_ctx *P)
{
    const conv_state *s = P->state;
    if (is_3d(s, P->in)) return SB_OK;
    sb_conv2d_args a;
    sb_vinfo out;
    int status = conv_geometry(P->node, s, P->in, P->n_in, &a, &out);
    if (status) return status;
    if (sb_conv2d_call_bytes() > SB_PREPARED_BYTES) return SB_OK;   /* (then each run prepares) */
    a.path = P->path, a.mode = P->mode, a.max_threads = 1;
    status = sb_conv2d_prepare(&a, P->prepared);
    if (status) return sb_fail(status, "node %d (%s): conv2d failed (status %d)", P->node->index,
                               P->node->op_type, status);
    P->bytes = sb_conv2d_call_bytes();
    return SB_OK;
}

/* The 2-D (or 1-D) convolution into y (its own output shape): bias, the
 * absorbed BatchNormalization, residual (null, or y's layout) and, when
 * with_activation, the activation. */
static int conv2d_run(sb_run_ctx *R, const float *residual, float *y, int with_activation)
{
    const conv_state *s = R->state;
    const sb_conv_fused fused = {.affine = s->affine, .residual = residual};
    int status;
    if (R->prepared && (with_activation || !s->activation)) {
        const sb_tval *b = R->n_in > 2 ? R->in[2] : NULL;
        status = sb_conv2d_run_prepared(R->prepared, R->in[0]->data,
                                        s->packed ? s->weights : R->in[1]->data,
                                        b ? b->data : NULL, &fused, y, R->threads);
    } else {
        sb_conv2d_args a;
        sb_vinfo out;
        if ((status = conv_geometry(R->node, s, R->in, R->n_in, &a, &out))) return status;
        a.path = R->path, a.mode = R->mode, a.max_threads = R->threads;
        a.y = (int64_t)(intptr_t)y;
        if (!with_activation) a.activation = 0;
        status = sb_conv2d_fused(&a, &fused);
    }
    return status ? sb_run_fail(R, status, "conv2d failed (status %d)", status) : SB_OK;
}

/* A residual of another shape than the convolution's output (conv_info;
 * the Add broadcast it): the convolution into scratch, the Add as the Add
 * node runs it, then the activation with the standalone operator's bits. */
static int run_broadcast_residual(sb_run_ctx *R, const sb_tval *residual, int three_d,
                                  const sb_vinfo *conv_info)
{
    const conv_state *s = R->state;
    sb_tval conv_out = {.info = *conv_info};
    int status;
    const int64_t count = sb_vinfo_numel(&conv_out.info);
    conv_out.data = malloc(count > 0 ? (size_t)count * sizeof(float) : 1);
    if (!conv_out.data) return sb_run_fail(R, SB_ERR_NO_MEMORY, "out of memory");
    status = three_d ? conv3d_run(R, NULL, conv_out.data, 0) : conv2d_run(R, NULL, conv_out.data, 0);
    if (!status) status = sb_k_binary(R, SB_BIN_ADD, &conv_out, residual, R->out[0]);
    free(conv_out.data);
    if (status) return status;
    if (s->activation) {
        const sb_epilogue_ops e = {.activation = s->activation, .fast = R->mode == SB_MODE_FAST};
        sb_epilogue_ops_run(R->out[0]->data, 0, 1, (size_t)sb_vinfo_numel(&R->out[0]->info), &e);
    }
    return SB_OK;
}

static int conv_run(sb_run_ctx *R)
{
    const conv_state *s = R->state;
    const int three_d = is_3d(s, R->in);
    float *y = R->out[0]->data;
    const sb_tval *res = s->residual >= 0 ? R->in[s->residual] : NULL;
    if (res) {
        /* in the epilogue when the residual and the convolution both have
         * the output's elements (equal shapes, up to leading ones) */
        sb_vinfo conv_out;
        int status = three_d ? conv3d_geometry(R->node, s, R->in, R->n_in, &(sb_conv3d_args){0},
                                               &conv_out)
                             : conv_geometry(R->node, s, R->in, R->n_in, NULL, &conv_out);
        if (status) return status;
        const int64_t count = sb_vinfo_numel(&R->out[0]->info);
        if (sb_vinfo_numel(&conv_out) != count || sb_vinfo_numel(&res->info) != count)
            return run_broadcast_residual(R, res, three_d, &conv_out);
    }
    const float *residual = res ? res->data : NULL;
    return three_d ? conv3d_run(R, residual, y, 1) : conv2d_run(R, residual, y, 1);
}

const sb_op_def sb_op_Conv = {
    .name = "Conv", .load = conv_load, .infer = conv_infer, .run = conv_run, .prepare = conv_prepare};
