/* ONNX MaxPool and AveragePool (docs/onnx.md). */
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
#include "kernels/lp_pool.h"
#include "kernels/pool_nd.h"
#include "graph/ops/nn/nn_util.h"

typedef struct {
    spatial sp;
    int dims;
    int64_t kernel[3];
    int64_t ceil_mode, count_include_pad, p;
    int64_t storage_order;       /* MaxPool's Indices: 1 column-major */
} pool_state;

static int pool_load_common(sb_load_ctx *L, pool_state *s)
{
    const int64_t *kernel = NULL;
    size_t nk = 0;
    if (!sb_has_attr(L, "kernel_shape"))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute 'kernel_shape' is required");
    sb_attr_ints(L, "kernel_shape", &kernel, &nk);
    if (L->status) return L->status;
    if (nk < 1 || nk > 3)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%zu-D pooling is not supported (1-D to 3-D are)",
                            nk);
    s->dims = (int)nk;
    if (read_spatial(L, s->dims, kernel, nk, &s->sp)) return L->status;
    memcpy(s->kernel, kernel, nk * sizeof *kernel);
    s->ceil_mode = sb_attr_int(L, "ceil_mode", 0);
    return L->status;
}

static int max_pool_load(sb_load_ctx *L)
{
    pool_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    if (pool_load_common(L, s)) return L->status;
    s->storage_order = sb_attr_int(L, "storage_order", 0);
    if (L->status) return L->status;
    if (s->storage_order != 0 && s->storage_order != 1)
        return sb_load_fail(L, SB_ERR_VALUE, "storage_order=%lld must be 0 or 1", (long long)s->storage_order);
    if (L->node->n_out > 2)
        return sb_load_fail(L, SB_ERR_VALUE, "MaxPool has two outputs, Y and Indices");
    return L->status;
}

static int avg_pool_load(sb_load_ctx *L)
{
    pool_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    if (pool_load_common(L, s)) return L->status;
    s->count_include_pad = sb_attr_int(L, "count_include_pad", 0);
    return L->status;
}

/* torch's pooling output size along one axis (_args.pooled_size). */
static int64_t pooled_size(int64_t size, int64_t k, int64_t s, int64_t before, int64_t after, int ceil)
{
    int64_t span = size + before + after - k;
    int64_t out = (ceil ? -floordiv(-span, s) : floordiv(span, s)) + 1;
    if (ceil && (out - 1) * s >= size + before) out -= 1;
    return out;
}

/* The N-D kernel's arguments (kernels/pool_nd.c) and the output info: every
 * 3-D pooling, and an AveragePool the 2-D kernel's limits do not fit. */
static int pool_nd_geometry(const sb_node *node, const pool_state *s, int kind, const sb_vinfo *x,
                            sb_pool_nd_args *a, sb_vinfo *out)
{
    int dims = s->dims;
    char t[256];
    if (x->rank != dims + 2)
        return nfail(node, SB_ERR_VALUE, "X must be %d-D (N, C, ...) for a %d-D kernel, got %s",
                     dims + 2, dims, shape_text(x, t, sizeof t));
    int64_t p[6];
    resolve_pads(&s->sp, x->dims + 2, s->kernel, p);
    memset(a, 0, sizeof *a);
    a->kind = kind, a->dims = dims, a->count_include_pad = s->count_include_pad != 0;
    a->column_major = s->storage_order == 1;
    a->p = s->p;
    *out = *x;
    for (int d = 0; d < dims; ++d) {
        int64_t k = s->kernel[d], st = s->sp.strides[d], dl = s->sp.dilations[d];
        if (k > LIMIT || st > LIMIT || dl > LIMIT || p[d] > LIMIT || p[dims + d] > LIMIT ||
            x->dims[2 + d] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "pooling sizes above 2**40 are not supported");
        int64_t extent = extent_of(k, dl);
        int64_t o = pooled_size(x->dims[2 + d], extent, st, p[d], p[dims + d], s->ceil_mode != 0);
        if (o < 1)
            return nfail(node, SB_ERR_VALUE, "the output size along spatial axis %d is below 1 (input "
                         "%lld, window extent %lld, padding %lld + %lld)", d, (long long)x->dims[2 + d],
                         (long long)extent, (long long)p[d], (long long)p[dims + d]);
        a->in[d] = x->dims[2 + d], a->out[d] = o, a->kernel[d] = k, a->stride[d] = st;
        a->dilation[d] = dl, a->pad_begin[d] = p[d], a->pad_end[d] = p[dims + d];
        out->dims[2 + d] = o;
    }
    return check_elements(node, kind == SB_POOL_ND_MAX ? "MaxPool" : kind == SB_POOL_ND_LP ? "LpPool"
                          : "AveragePool", out->dims, out->rank);
}

/* AveragePool's form the 2-D kernel (torch's avg_pool2d) does not take:
 * 3-D, dilated, or a padding above half the kernel. */
static int avg_needs_nd(const pool_state *s, const sb_vinfo *x)
{
    if (s->dims == 3) return 1;
    int64_t p[6];
    if (x->rank != s->dims + 2) return 0;   /* (avg_pool_geometry says why) */
    resolve_pads(&s->sp, x->dims + 2, s->kernel, p);
    for (int d = 0; d < s->dims; ++d)
        if (s->sp.dilations[d] != 1 || p[d] > s->kernel[d] / 2 || p[s->dims + d] > s->kernel[d] / 2)
            return 1;
    return 0;
}

static int pool_nd_run(sb_run_ctx *R, int kind)
{
    sb_pool_nd_args a;
    sb_vinfo out;
    int status = pool_nd_geometry(R->node, R->state, kind, &R->in[0]->info, &a, &out);
    if (status) return status;
    int64_t *indices = R->n_out > 1 && R->out[1] ? R->out[1]->data : NULL;
    sb_pool_nd(&a, R->in[0]->data, R->out[0]->data, indices, 0, out.dims[0] * out.dims[1]);
    return SB_OK;
}

static int max_pool_geometry(const sb_node *node, const pool_state *s, const sb_vinfo *x,
                             sb_max_pool2d_args *a, sb_vinfo *out)
{
    int64_t x4[4] = {0, 0, 0, 0}, sizes[2], p[4], pad4[4], k2[2], st2[2], dl2[2], o[2];
    int status = as_2d(node, x, x4);
    if (status) return status;
    int dims = s->dims;
    spatial_sizes(x4, dims, sizes);
    resolve_pads(&s->sp, sizes, s->kernel, p);
    if (s->ceil_mode)
        for (int i = 0; i < dims; ++i) {
            /* the partial last window's taps past the input are end padding,
             * which is never a value: ceil mode's windows in floor mode */
            int64_t extent = extent_of(s->kernel[i], s->sp.dilations[i]);
            if (extent >= DERIVED_LIMIT) break;   /* output_hw says so */
            int64_t count = pooled_size(sizes[i], extent, s->sp.strides[i], p[i], p[dims + i], 1);
            int64_t extra = (count - 1) * s->sp.strides[i] + extent - (sizes[i] + p[i] + p[dims + i]);
            if (extra > 0) p[dims + i] += extra;
        }
    torch_padding(dims, p, pad4);
    pairs(dims, s->kernel, 1, k2);
    pairs(dims, s->sp.strides, 1, st2);
    pairs(dims, s->sp.dilations, 1, dl2);
    if ((status = kernel_limits(node, "max_pool2d", k2, st2, dl2, pad4))) return status;
    if ((status = output_hw(node, "max_pool2d", x4 + 2, pad4, k2, dl2, st2, o))) return status;
    int64_t y4[4] = {x4[0], x4[1], o[0], o[1]};
    if ((status = check_elements(node, "max_pool2d", y4, 4))) return status;
    if ((status = from_2d(node, dims, y4, out))) return status;
    if (a) {
        memset(a, 0, sizeof *a);
        a->n = x4[0], a->c = x4[1], a->h = x4[2], a->w = x4[3];
        a->kh = k2[0], a->kw = k2[1], a->stride_h = st2[0], a->stride_w = st2[1];
        a->dil_h = dl2[0], a->dil_w = dl2[1];
        a->pad_top = pad4[0], a->pad_bottom = pad4[1], a->pad_left = pad4[2], a->pad_right = pad4[3];
    }
    return SB_OK;
}

/* MaxPool through kernels/pool_nd.c: 3-D, or with its Indices output (the
 * values are the same rule's as max_pool2d's, docs/maxpool.md). */
static int max_needs_nd(const pool_state *s, const sb_node *node)
{
    return s->dims == 3 || (node->n_out > 1 && node->out[1] >= 0);
}

static int max_pool_infer(sb_infer_ctx *I)
{
    const pool_state *s = I->state;
    int status = need_floats(I, 0, "X");
    if (status) return status;
    if (max_needs_nd(s, I->node)) {
        sb_pool_nd_args a;
        status = pool_nd_geometry(I->node, s, SB_POOL_ND_MAX, &I->in[0]->info, &a, &I->out[0]);
        if (!status && I->n_out > 1) {
            I->out[1] = I->out[0];
            I->out[1].dtype = SB_DT_INT64;
        }
        return status;
    }
    return max_pool_geometry(I->node, s, &I->in[0]->info, NULL, &I->out[0]);
}

/* The geometry once per step: the kernel's arguments without the pointers. */
static int max_pool_prepare(sb_prepare_ctx *P)
{
    if (max_needs_nd(P->state, P->node)) return SB_OK;
    sb_vinfo out;
    int status = max_pool_geometry(P->node, P->state, &P->in[0]->info, P->prepared, &out);
    if (!status) P->bytes = sizeof(sb_max_pool2d_args);
    return status;
}

static int max_pool_run(sb_run_ctx *R)
{
    if (max_needs_nd(R->state, R->node)) return pool_nd_run(R, SB_POOL_ND_MAX);
    sb_max_pool2d_args a;
    if (R->prepared) {
        memcpy(&a, R->prepared, sizeof a);
    } else {
        sb_vinfo out;
        int status = max_pool_geometry(R->node, R->state, &R->in[0]->info, &a, &out);
        if (status) return status;
    }
    a.x = (int64_t)(intptr_t)R->in[0]->data, a.y = (int64_t)(intptr_t)R->out[0]->data;
    a.max_threads = R->threads;
    int status = sb_max_pool2d(&a);
    return status ? sb_run_fail(R, status, "max_pool2d failed (status %d)", status) : SB_OK;
}

static int avg_pool_geometry(const sb_node *node, const pool_state *s, const sb_vinfo *x,
                             sb_avg_pool2d_args *a, sb_vinfo *out)
{
    int64_t x4[4] = {0, 0, 0, 0}, sizes[2], p[4], pad4[4], k2[2], st2[2];
    char t[128];
    int status = as_2d(node, x, x4);
    if (status) return status;
    int dims = s->dims;
    spatial_sizes(x4, dims, sizes);
    resolve_pads(&s->sp, sizes, s->kernel, p);
    torch_padding(dims, p, pad4);
    pairs(dims, s->kernel, 1, k2);
    pairs(dims, s->sp.strides, 1, st2);
    if ((status = kernel_limits(node, "avg_pool2d", k2, st2, NULL, pad4))) return status;
    int64_t pt = pad4[0], pb = pad4[1], pl = pad4[2], pr = pad4[3];
    if ((pt > pb ? pt : pb) > k2[0] / 2 || (pl > pr ? pl : pr) > k2[1] / 2)
        return nfail(node, SB_ERR_VALUE, "avg_pool2d: padding %s must be at most half the kernel %lld "
                     "x %lld", sb_py_tuple_text(pad4, 4, t, sizeof t), (long long)k2[0], (long long)k2[1]);
    if (x4[2] < 1 || x4[3] < 1)
        return nfail(node, SB_ERR_VALUE, "avg_pool2d: the input height and width must be at least 1, "
                     "got %lld x %lld", (long long)x4[2], (long long)x4[3]);
    int ceil = s->ceil_mode != 0;
    int64_t oh = pooled_size(x4[2], k2[0], st2[0], pt, pb, ceil);
    int64_t ow = pooled_size(x4[3], k2[1], st2[1], pl, pr, ceil);
    if (oh < 1 || ow < 1)
        return nfail(node, SB_ERR_VALUE, "avg_pool2d: the output size %lld x %lld is below 1 (input "
                     "%lld x %lld, kernel %lld x %lld, padding %s)", (long long)oh, (long long)ow,
                     (long long)x4[2], (long long)x4[3], (long long)k2[0], (long long)k2[1],
                     sb_py_tuple_text(pad4, 4, t, sizeof t));
    int64_t y4[4] = {x4[0], x4[1], oh, ow};
    if ((status = check_elements(node, "avg_pool2d", y4, 4))) return status;
    if ((status = from_2d(node, dims, y4, out))) return status;
    if (a) {
        memset(a, 0, sizeof *a);
        a->n = x4[0], a->c = x4[1], a->h = x4[2], a->w = x4[3], a->oh = oh, a->ow = ow;
        a->kh = k2[0], a->kw = k2[1], a->stride_h = st2[0], a->stride_w = st2[1];
        a->pad_top = pt, a->pad_bottom = pb, a->pad_left = pl, a->pad_right = pr;
        a->count_include_pad = s->count_include_pad != 0;
    }
    return SB_OK;
}

static int avg_pool_infer(sb_infer_ctx *I)
{
    const pool_state *s = I->state;
    int status = need_floats(I, 0, "X");
    if (status) return status;
    if (avg_needs_nd(s, &I->in[0]->info)) {
        sb_pool_nd_args a;
        return pool_nd_geometry(I->node, s, SB_POOL_ND_AVG, &I->in[0]->info, &a, &I->out[0]);
    }
    return avg_pool_geometry(I->node, s, &I->in[0]->info, NULL, &I->out[0]);
}

static int avg_pool_prepare(sb_prepare_ctx *P)
{
    if (avg_needs_nd(P->state, &P->in[0]->info)) return SB_OK;
    sb_vinfo out;
    int status = avg_pool_geometry(P->node, P->state, &P->in[0]->info, P->prepared, &out);
    if (!status) P->bytes = sizeof(sb_avg_pool2d_args);
    return status;
}

static int avg_pool_run(sb_run_ctx *R)
{
    if (avg_needs_nd(R->state, &R->in[0]->info)) return pool_nd_run(R, SB_POOL_ND_AVG);
    sb_avg_pool2d_args a;
    if (R->prepared) {
        memcpy(&a, R->prepared, sizeof a);
    } else {
        sb_vinfo out;
        int status = avg_pool_geometry(R->node, R->state, &R->in[0]->info, &a, &out);
        if (status) return status;
    }
    a.x = (int64_t)(intptr_t)R->in[0]->data, a.y = (int64_t)(intptr_t)R->out[0]->data;
    a.max_threads = R->threads;
    int status = sb_avg_pool2d(&a);
    return status ? sb_run_fail(R, status, "avg_pool2d failed (status %d)", status) : SB_OK;
}

/* ---- LpPool, GlobalLpPool ---------------------------------------------------------- */

static int lp_pool_load(sb_load_ctx *L)
{
    pool_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->p = sb_attr_int(L, "p", 2);
    if (L->status) return L->status;
    if (s->p < 1 || s->p > 64)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "p=%lld is not supported (1 to 64 are)",
                            (long long)s->p);
    if (!strcmp(L->node->op_type, "GlobalLpPool")) return L->status;
    pool_load_common(L, s);
    return L->status;
}

/* The kernel's arguments and the output info: MaxPool's geometry (padding
 * is never a value there, as it adds nothing here), or the whole plane. */
static int lp_pool_geometry(const sb_node *node, const pool_state *s, const sb_vinfo *x,
                            sb_lp_pool_args *a, sb_vinfo *out)
{
    memset(a, 0, sizeof *a);
    a->p = s->p;
    if (!strcmp(node->op_type, "GlobalLpPool")) {
        if (x->rank < 3) {
            char t[256];
            sb_shape_text(x, t, sizeof t);
            return nfail(node, SB_ERR_VALUE, "X must be (N, C, ...), got %s", t);
        }
        *out = *x;
        a->n = x->dims[0], a->c = x->dims[1], a->h = 1, a->w = 1;
        for (int d = 2; d < x->rank; ++d) a->w *= x->dims[d], out->dims[d] = 1;
        a->oh = a->ow = 1, a->kh = 1, a->kw = a->w, a->stride_h = a->stride_w = 1;
        a->dil_h = a->dil_w = 1;
        return SB_OK;
    }
    sb_max_pool2d_args m;
    int status = max_pool_geometry(node, s, x, &m, out);
    if (status) return status;
    a->n = m.n, a->c = m.c, a->h = m.h, a->w = m.w;
    a->oh = s->dims == 2 ? out->dims[2] : 1, a->ow = out->dims[out->rank - 1];
    a->kh = m.kh, a->kw = m.kw, a->stride_h = m.stride_h, a->stride_w = m.stride_w;
    a->dil_h = m.dil_h, a->dil_w = m.dil_w, a->pad_top = m.pad_top, a->pad_left = m.pad_left;
    return SB_OK;
}

static int lp_pool_infer(sb_infer_ctx *I)
{
    int status = need_floats(I, 0, "X");
    if (status) return status;
    const pool_state *s = I->state;
    if (s->dims == 3 && strcmp(I->node->op_type, "GlobalLpPool")) {
        sb_pool_nd_args nd;
        return pool_nd_geometry(I->node, s, SB_POOL_ND_LP, &I->in[0]->info, &nd, &I->out[0]);
    }
    sb_lp_pool_args a;
    return lp_pool_geometry(I->node, I->state, &I->in[0]->info, &a, &I->out[0]);
}

static int lp_pool_run(sb_run_ctx *R)
{
    const pool_state *s = R->state;
    if (s->dims == 3 && strcmp(R->node->op_type, "GlobalLpPool")) return pool_nd_run(R, SB_POOL_ND_LP);
    sb_lp_pool_args a;
    sb_vinfo out;
    int status = lp_pool_geometry(R->node, R->state, &R->in[0]->info, &a, &out);
    if (status) return status;
    if (sb_vinfo_numel(&out) > 0) sb_lp_pool2d(&a, R->in[0]->data, R->out[0]->data);
    return SB_OK;
}

const sb_op_def sb_op_MaxPool = {
    .name = "MaxPool", .load = max_pool_load, .infer = max_pool_infer, .run = max_pool_run,
    .prepare = max_pool_prepare};
const sb_op_def sb_op_AveragePool = {
    .name = "AveragePool", .load = avg_pool_load, .infer = avg_pool_infer, .run = avg_pool_run,
    .prepare = avg_pool_prepare};
const sb_op_def sb_op_LpPool = {.name = "LpPool", .load = lp_pool_load, .infer = lp_pool_infer,
                                .run = lp_pool_run};
const sb_op_def sb_op_GlobalLpPool = {.name = "GlobalLpPool", .load = lp_pool_load,
                                      .infer = lp_pool_infer, .run = lp_pool_run};
