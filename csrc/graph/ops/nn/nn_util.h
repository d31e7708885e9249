/* ONNX operators: the nn family (see op.h for how an operator is written):
 * Conv, ConvTranspose, Gemm, MatMul, MaxPool, AveragePool, Resize, Upsample.
 *
 * Each calls the samebits kernel docs/onnx.md names for it, with the
 * arguments it gives (shapes, strides, batch layout, padding, scale bits):
 * the bits are those of that public function (samebits.conv2d, matmul, ...)
 * on the same operands. Constant weights are
 * packed once at load for the session's path (sb_conv2d_pack, sb_pack_b;
 * the same bits as unpacked). One-dimensional convolutions and pools run
 * as two-dimensional ones of height 1.
 *
 * This header: the helpers the family's files (graph/ops/nn/) share,
 * static inline. */
#ifndef SB_GRAPH_OPS_NN_NN_UTIL_H
#define SB_GRAPH_OPS_NN_NN_UTIL_H

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

#define LIMIT ((int64_t)1 << 40)            /* the kernels' bound on every size argument */
#define DERIVED_LIMIT ((int64_t)1 << 62)    /* a window's extent, a padded size */

/* ---- messages ----------------------------------------------------------------- */

/* An error naming the node, from infer or run (op.h's helpers need their context). */
static inline int nfail(const sb_node *node, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static inline int nfail(const sb_node *node, int status, const char *fmt, ...)
{
    char where[512], text[1536];
    sb_node_where(node, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return sb_fail(status, "%s: %s", where, text);
}

static inline const char *shape_text(const sb_vinfo *v, char *buf, size_t size)
{
    return sb_py_tuple_text(v->dims, v->rank, buf, size);
}

/* "[1.0, 1.0, 2.0, 2.0]" */
static inline const char *floats_text(const double *v, size_t n, char *buf, size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "[");
    for (size_t i = 0; i < n && at < size; ++i) {
        char f[64];
        sb_py_float_repr(v[i], f, sizeof f);
        at += (size_t)snprintf(buf + at, size - at, i ? ", %s" : "%s", f);
    }
    if (at < size) snprintf(buf + at, size - at, "]");
    return buf;
}

/* A float32 input that must be there (need_floats' messages): 0, or the
 * error's status. */
static inline int need_floats(sb_infer_ctx *I, int i, const char *what)
{
    const sb_tval *t = i < I->n_in ? I->in[i] : NULL;
    if (!t) return nfail(I->node, SB_ERR_VALUE, "input %s is missing", what);
    if (t->info.dtype != SB_DT_FLOAT)
        return nfail(I->node, SB_ERR_TYPE, "input %s must be float32, got %s", what,
                     sb_dtype_name(t->info.dtype));
    return SB_OK;
}

static inline int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* a * b + c for non-negative operands, saturated at DERIVED_LIMIT. */
static inline int64_t sat_mul_add(int64_t a, int64_t b, int64_t c)
{
    if (a && b > (DERIVED_LIMIT - c) / a) return DERIVED_LIMIT;
    int64_t r = a * b + c;
    return r > DERIVED_LIMIT ? DERIVED_LIMIT : r;
}

/* dilation * (kernel - 1) + 1, saturated. */
static inline int64_t extent_of(int64_t k, int64_t d) { return sat_mul_add(d, k - 1, 1); }

/* ---- geometry: the attributes of convolutions and pools ----------------------------- */

enum { PAD_NOTSET, PAD_VALID, PAD_SAME_UPPER, PAD_SAME_LOWER };

typedef struct {
    int dims;                    /* spatial dimensions, 1 to 3 (3: pooling only) */
    int auto_pad;
    int64_t strides[3], dilations[3], pads[6];   /* pads: begins, then ends */
} spatial;

static inline int too_large(sb_load_ctx *L, const char *name, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (v[i] > LIMIT) {
            char t[512];
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%s %s: values above 2**40 = %lld are not "
                                "supported", name, sb_py_list_text(v, n, t, sizeof t), (long long)LIMIT);
        }
    return SB_OK;
}

/* _spatial_attrs: strides, dilations, pads and auto_pad, checked. kernel
 * (nk values) is checked too when given. */
/* The spatial rank the strides, dilations or pads given imply (the first
 * of them given), or 0 when none is: a convolution whose weights are not a
 * constant and that has no kernel_shape. */
static inline int spatial_rank_of_attrs(sb_load_ctx *L)
{
    static const char *const per_axis[] = {"strides", "dilations", "pads"};
    for (int i = 0; i < 3; ++i) {
        const int64_t *v;
        size_t n;
        if (!sb_attr_ints(L, per_axis[i], &v, &n)) continue;
        size_t axes = i == 2 ? n / 2 : n;     /* pads: begins and ends */
        return (int)(axes < 100 ? axes : 100);
    }
    return 0;
}

static inline int read_spatial(sb_load_ctx *L, int dims, const int64_t *kernel, size_t nk, spatial *sp)
{
    static const int64_t ones[3] = {1, 1, 1}, zeros[6] = {0, 0, 0, 0, 0, 0};
    const int64_t *st = ones, *dl = ones, *pd = zeros;
    size_t nst = (size_t)dims, ndl = (size_t)dims, npd = 2 * (size_t)dims;
    if (!sb_attr_ints(L, "strides", &st, &nst)) st = ones, nst = (size_t)dims;
    if (L->status) return L->status;
    if (!sb_attr_ints(L, "dilations", &dl, &ndl)) dl = ones, ndl = (size_t)dims;
    if (L->status) return L->status;
    if (!sb_attr_ints(L, "pads", &pd, &npd)) pd = zeros, npd = 2 * (size_t)dims;
    if (L->status) return L->status;
    const char *ap = sb_attr_str(L, "auto_pad", "NOTSET");
    if (L->status) return L->status;
    memset(sp, 0, sizeof *sp);
    sp->dims = dims;
    if (!strcmp(ap, "NOTSET")) sp->auto_pad = PAD_NOTSET;
    else if (!strcmp(ap, "VALID")) sp->auto_pad = PAD_VALID;
    else if (!strcmp(ap, "SAME_UPPER")) sp->auto_pad = PAD_SAME_UPPER;
    else if (!strcmp(ap, "SAME_LOWER")) sp->auto_pad = PAD_SAME_LOWER;
    else return sb_load_fail(L, SB_ERR_UNSUPPORTED, "auto_pad='%s' is not supported", ap);
    char a[256], b[256], c[256];
    if (nst != (size_t)dims || ndl != (size_t)dims || npd != 2 * (size_t)dims)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "strides %s, dilations %s and pads %s do not fit "
                            "%d spatial dimensions", sb_py_list_text(st, nst, a, sizeof a),
                            sb_py_list_text(dl, ndl, b, sizeof b), sb_py_list_text(pd, npd, c, sizeof c), dims);
    int bad = 0;
    for (int i = 0; i < dims; ++i) bad |= st[i] < 1 || dl[i] < 1;
    for (int i = 0; i < 2 * dims; ++i) bad |= pd[i] < 0;
    if (bad)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "strides %s and dilations %s must be positive, "
                            "pads %s non-negative", sb_py_list_text(st, nst, a, sizeof a),
                            sb_py_list_text(dl, ndl, b, sizeof b), sb_py_list_text(pd, npd, c, sizeof c));
    if (kernel) {
        int kbad = nk != (size_t)dims;
        for (size_t i = 0; i < nk; ++i) kbad |= kernel[i] < 1;
        if (kbad)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "kernel_shape %s does not fit %d spatial "
                                "dimensions", sb_py_list_text(kernel, nk, a, sizeof a), dims);
        if (too_large(L, "kernel_shape", kernel, nk)) return L->status;
    }
    if (too_large(L, "strides", st, nst) || too_large(L, "dilations", dl, ndl) ||
        too_large(L, "pads", pd, npd))
        return L->status;
    memcpy(sp->strides, st, (size_t)dims * sizeof *st);
    memcpy(sp->dilations, dl, (size_t)dims * sizeof *dl);
    memcpy(sp->pads, pd, 2 * (size_t)dims * sizeof *pd);
    return SB_OK;
}

/* resolve_pads: [begin..., end...] for these input sizes. */
static inline void resolve_pads(const spatial *sp, const int64_t *sizes, const int64_t *kernel, int64_t *p)
{
    int dims = sp->dims;
    for (int i = 0; i < dims; ++i) {
        if (sp->auto_pad == PAD_NOTSET) {
            p[i] = sp->pads[i], p[dims + i] = sp->pads[dims + i];
        } else if (sp->auto_pad == PAD_VALID) {
            p[i] = p[dims + i] = 0;
        } else {
            int64_t s = sp->strides[i], size = sizes[i];
            int64_t out = (size + s - 1) / s;
            int64_t span = sat_mul_add(out > 0 ? out - 1 : 0, s, 0);
            int64_t total = span + extent_of(kernel[i], sp->dilations[i]) - size;
            if (out == 0) total = extent_of(kernel[i], sp->dilations[i]) - s - size;
            if (total < 0) total = 0;
            int64_t small = total / 2, large = total - total / 2;
            p[i] = sp->auto_pad == PAD_SAME_UPPER ? small : large;
            p[dims + i] = sp->auto_pad == PAD_SAME_UPPER ? large : small;
        }
    }
}

/* x as (N, C, H, W): a 3-D x as height 1 (_as_2d). */
static inline int as_2d(const sb_node *node, const sb_vinfo *x, int64_t *x4)
{
    if (x->rank == 3) {
        x4[0] = x->dims[0], x4[1] = x->dims[1], x4[2] = 1, x4[3] = x->dims[2];
        return SB_OK;
    }
    if (x->rank == 4) {
        memcpy(x4, x->dims, 4 * sizeof *x4);
        return SB_OK;
    }
    char s[256];
    return nfail(node, SB_ERR_VALUE, "X must be 3-D or 4-D (N, C, ...), got %s",
                 shape_text(x, s, sizeof s));
}

/* The spatial sizes of an as_2d view, as the node sees them. */
static inline void spatial_sizes(const int64_t *x4, int dims, int64_t *sizes)
{
    if (dims == 2) sizes[0] = x4[2], sizes[1] = x4[3];
    else sizes[0] = x4[3];
}

/* Per-dimension values for 2-D from 1-D or 2-D ones (height first). */
static inline void pairs(int dims, const int64_t *v, int64_t fill, int64_t *out)
{
    if (dims == 1) out[0] = fill, out[1] = v[0];
    else out[0] = v[0], out[1] = v[1];
}

/* (top, bottom, left, right) from ONNX's [begins..., ends...]. */
static inline void torch_padding(int dims, const int64_t *p, int64_t *out)
{
    if (dims == 1) out[0] = out[1] = 0, out[2] = p[0], out[3] = p[1];
    else out[0] = p[0], out[1] = p[2], out[2] = p[1], out[3] = p[3];
}

/* The (N, C, OH, OW) result as the node gives it: (N, C, OW) for 1-D. */
static inline int from_2d(const sb_node *node, int dims, const int64_t *y4, sb_vinfo *out)
{
    out->dtype = SB_DT_FLOAT;
    if (dims == 2) {
        out->rank = 4;
        memcpy(out->dims, y4, 4 * sizeof *y4);
        return SB_OK;
    }
    if (y4[2] != 1) {
        char a[128], b[128];
        int64_t y3[3] = {y4[0], y4[1], y4[3]};
        return nfail(node, SB_ERR_VALUE, "cannot reshape %s to %s", sb_py_tuple_text(y4, 4, a, sizeof a),
                     sb_py_tuple_text(y3, 3, b, sizeof b));
    }
    out->rank = 3;
    out->dims[0] = y4[0], out->dims[1] = y4[1], out->dims[2] = y4[3];
    return SB_OK;
}

/* _args' range checks of what reaches a kernel: sizes at most 2**40. */
static inline int kernel_limits(const sb_node *node, const char *what, const int64_t *kernel,
                         const int64_t *stride, const int64_t *dilation, const int64_t *pads)
{
    const char *names[3] = {"kernel_size", "stride", "dilation"};
    const int64_t *v[3] = {kernel, stride, dilation};
    char t[128];
    for (int k = 0; k < 3; ++k)
        if (v[k] && (v[k][0] > LIMIT || v[k][1] > LIMIT))
            return nfail(node, SB_ERR_VALUE, "%s: %s is too large: %s (at most 2**40 = %lld)", what,
                         names[k], sb_py_tuple_text(v[k], 2, t, sizeof t), (long long)LIMIT);
    for (int i = 0; i < 4; ++i)
        if (pads[i] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "%s: padding is too large: %s (at most 2**40 = %lld)",
                         what, sb_py_tuple_text(pads, 4, t, sizeof t), (long long)LIMIT);
    return SB_OK;
}

/* _args.output_hw: (OH, OW), each at least 1, else the error with the numbers. */
static inline int output_hw(const sb_node *node, const char *what, const int64_t *hw, const int64_t *pads,
                     const int64_t *kernel, const int64_t *dil, const int64_t *stride, int64_t *o)
{
    static const char *const axis[2] = {"height", "width"};
    for (int i = 0; i < 2; ++i) {
        int64_t before = pads[2 * i], after = pads[2 * i + 1];
        int64_t extent = extent_of(kernel[i], dil[i]);
        if (extent >= DERIVED_LIMIT)
            return nfail(node, SB_ERR_VALUE, "%s: the window's %s extent dilation*(kernel-1)+1 = "
                         "%lld*(%lld-1)+1 is too large (2**62 or more)", what, axis[i],
                         (long long)dil[i], (long long)kernel[i]);
        if (hw[i] + before + after >= DERIVED_LIMIT)
            return nfail(node, SB_ERR_VALUE, "%s: the padded %s %lld + %lld + %lld is too large "
                         "(2**62 or more)", what, axis[i], (long long)hw[i], (long long)before,
                         (long long)after);
    }
    for (int i = 0; i < 2; ++i)
        o[i] = floordiv(hw[i] + pads[2 * i] + pads[2 * i + 1] - extent_of(kernel[i], dil[i]),
                        stride[i]) + 1;
    for (int i = 0; i < 2; ++i) {
        if (o[i] >= 1) continue;
        char p[128], d[64], s[64];
        return nfail(node, SB_ERR_VALUE,
                     "%s: the output size %lld x %lld is below 1: output %s would be %lld (input %s "
                     "%lld + padding %lld + %lld is less than the window's extent "
                     "dilation*(kernel-1)+1 = %lld; input %lld x %lld, padding %s (top, bottom, left, "
                     "right), kernel %lld x %lld, dilation %s, stride %s)",
                     what, (long long)o[0], (long long)o[1], axis[i], (long long)o[i], axis[i],
                     (long long)hw[i], (long long)pads[2 * i], (long long)pads[2 * i + 1],
                     (long long)extent_of(kernel[i], dil[i]), (long long)hw[0], (long long)hw[1],
                     sb_py_tuple_text(pads, 4, p, sizeof p), (long long)kernel[0], (long long)kernel[1],
                     sb_py_tuple_text(dil, 2, d, sizeof d), sb_py_tuple_text(stride, 2, s, sizeof s));
    }
    return SB_OK;
}

static inline int64_t numel4(const int64_t *d) { return d[0] * d[1] * d[2] * d[3]; }

/* A float32 tensor of these dims must stay within SB_MAX_ELEMENTS. */
static inline int check_elements(const sb_node *node, const char *what, const int64_t *dims, int rank)
{
    double total = 1;
    for (int i = 0; i < rank; ++i) total *= (double)dims[i];
    if (total > (double)SB_MAX_ELEMENTS) {
        char t[256];
        return nfail(node, SB_ERR_VALUE, "%s: the output would have shape %s; more than 2**40 "
                     "elements are not supported", what, sb_py_tuple_text(dims, rank, t, sizeof t));
    }
    return SB_OK;
}

/* Packs (Cout, C/G, KH, KW) weights for the session's path into a load buffer. */
static inline int pack_conv(sb_load_ctx *L, const float *w, const int64_t *w4, int64_t groups,
                     const void **out)
{
    char t[128];
    if (w4[0] % groups)
        return sb_load_fail(L, SB_ERR_VALUE, "pack_conv2d: groups=%lld does not divide the %lld "
                            "output channels of w (shape %s)", (long long)groups, (long long)w4[0],
                            sb_py_tuple_text(w4, 4, t, sizeof t));
    if (w4[2] < 1 || w4[3] < 1)
        return sb_load_fail(L, SB_ERR_VALUE, "pack_conv2d: w has an empty kernel (shape %s)",
                            sb_py_tuple_text(w4, 4, t, sizeof t));
    for (int i = 0; i < 4; ++i)
        if (w4[i] > LIMIT)
            return sb_load_fail(L, SB_ERR_VALUE, "pack_conv2d: w has shape %s; dimensions above "
                                "2**40 = %lld are not supported", sb_py_tuple_text(w4, 4, t, sizeof t),
                                (long long)LIMIT);
    size_t bytes = sb_conv2d_packed_bytes(L->path, (size_t)w4[0], (size_t)w4[1], (size_t)w4[2],
                                          (size_t)w4[3], (size_t)groups);
    int64_t count = numel4(w4);
    if (bytes == 0 && count)
        return sb_load_fail(L, SB_ERR_VALUE, "pack_conv2d: w of shape %s is too large to pack "
                            "(more than 2**62 bytes)", sb_py_tuple_text(w4, 4, t, sizeof t));
    void *buf = sb_load_buffer(L, bytes > 64 ? bytes : 64);
    if (!buf) return L->status;
    if (count) {
        int status = sb_conv2d_pack(L->path, (size_t)w4[0], (size_t)w4[1], (size_t)w4[2],
                                    (size_t)w4[3], (size_t)groups, w, buf, bytes);
        if (status) return sb_load_fail(L, status, "pack_conv2d failed (status %d)", status);
    }
    *out = buf;
    return SB_OK;
}

#endif
