/* ONNX operators: the nn family (see op.h for how an operator is written):
 * Conv, ConvTranspose, Gemm, MatMul, MaxPool, AveragePool, Resize, Upsample.
 *
 * Each calls the samebits kernel docs/onnx.md names for it, with the
 * arguments it gives (shapes, strides, batch layout, padding, scale bits):
 * the bits are those of that public function (samebits.conv2d, matmul, ...)
 * on the same operands. Constant weights are
 * packed once at load for the session's path (sb_conv2d_pack, sb_pack_b;
 * the same bits as unpacked). One-dimensional convolutions and pools run
 * as two-dimensional ones of height 1. */
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
static int nfail(const sb_node *node, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int nfail(const sb_node *node, int status, const char *fmt, ...)
{
    char where[512], text[1536];
    sb_node_where(node, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return sb_fail(status, "%s: %s", where, text);
}

static const char *shape_text(const sb_vinfo *v, char *buf, size_t size)
{
    return sb_py_tuple_text(v->dims, v->rank, buf, size);
}

/* "[1.0, 1.0, 2.0, 2.0]" */
static const char *floats_text(const double *v, size_t n, char *buf, size_t size)
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
static int need_floats(sb_infer_ctx *I, int i, const char *what)
{
    const sb_tval *t = i < I->n_in ? I->in[i] : NULL;
    if (!t) return nfail(I->node, SB_ERR_VALUE, "input %s is missing", what);
    if (t->info.dtype != SB_DT_FLOAT)
        return nfail(I->node, SB_ERR_TYPE, "input %s must be float32, got %s", what,
                     sb_dtype_name(t->info.dtype));
    return SB_OK;
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* a * b + c for non-negative operands, saturated at DERIVED_LIMIT. */
static int64_t sat_mul_add(int64_t a, int64_t b, int64_t c)
{
    if (a && b > (DERIVED_LIMIT - c) / a) return DERIVED_LIMIT;
    int64_t r = a * b + c;
    return r > DERIVED_LIMIT ? DERIVED_LIMIT : r;
}

/* dilation * (kernel - 1) + 1, saturated. */
static int64_t extent_of(int64_t k, int64_t d) { return sat_mul_add(d, k - 1, 1); }

/* ---- geometry: the attributes of convolutions and pools ----------------------------- */

enum { PAD_NOTSET, PAD_VALID, PAD_SAME_UPPER, PAD_SAME_LOWER };

typedef struct {
    int dims;                    /* spatial dimensions, 1 or 2 */
    int auto_pad;
    int64_t strides[2], dilations[2], pads[4];   /* pads: begins, then ends */
} spatial;

static int too_large(sb_load_ctx *L, const char *name, const int64_t *v, size_t n)
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
static int read_spatial(sb_load_ctx *L, int dims, const int64_t *kernel, size_t nk, spatial *sp)
{
    static const int64_t ones[4] = {1, 1, 1, 1}, zeros[4] = {0, 0, 0, 0};
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
static void resolve_pads(const spatial *sp, const int64_t *sizes, const int64_t *kernel, int64_t *p)
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
static int as_2d(const sb_node *node, const sb_vinfo *x, int64_t *x4)
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
static void spatial_sizes(const int64_t *x4, int dims, int64_t *sizes)
{
    if (dims == 2) sizes[0] = x4[2], sizes[1] = x4[3];
    else sizes[0] = x4[3];
}

/* Per-dimension values for 2-D from 1-D or 2-D ones (height first). */
static void pairs(int dims, const int64_t *v, int64_t fill, int64_t *out)
{
    if (dims == 1) out[0] = fill, out[1] = v[0];
    else out[0] = v[0], out[1] = v[1];
}

/* (top, bottom, left, right) from ONNX's [begins..., ends...]. */
static void torch_padding(int dims, const int64_t *p, int64_t *out)
{
    if (dims == 1) out[0] = out[1] = 0, out[2] = p[0], out[3] = p[1];
    else out[0] = p[0], out[1] = p[2], out[2] = p[1], out[3] = p[3];
}

/* The (N, C, OH, OW) result as the node gives it: (N, C, OW) for 1-D. */
static int from_2d(const sb_node *node, int dims, const int64_t *y4, sb_vinfo *out)
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
static int kernel_limits(const sb_node *node, const char *what, const int64_t *kernel,
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
static int output_hw(const sb_node *node, const char *what, const int64_t *hw, const int64_t *pads,
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

static int64_t numel4(const int64_t *d) { return d[0] * d[1] * d[2] * d[3]; }

/* A float32 tensor of these dims must stay within SB_MAX_ELEMENTS. */
static int check_elements(const sb_node *node, const char *what, const int64_t *dims, int rank)
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

/* ---- Conv ------------------------------------------------------------------------ */

typedef struct {
    spatial sp;
    int dims;
    int64_t group, activation;
    int packed;                  /* constant weights, packed at load */
    const void *weights;         /* sb_conv2d_pack's layout */
    int64_t w4[4];               /* their (Cout, C/G, KH, KW) shape */
} conv_state;

/* Packs (Cout, C/G, KH, KW) weights for the session's path into a load buffer. */
static int pack_conv(sb_load_ctx *L, const float *w, const int64_t *w4, int64_t groups,
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

static int conv_load(sb_load_ctx *L)
{
    conv_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    const sb_tval *w = sb_load_const(L, 1);
    const int64_t *kernel = NULL;
    size_t nk = 0;
    int has_kernel = sb_attr_ints(L, "kernel_shape", &kernel, &nk);
    if (L->status) return L->status;
    s->group = sb_attr_int(L, "group", 1);
    if (L->status) return L->status;
    int dims;
    if (has_kernel) dims = (int)(nk < 100 ? nk : 100);
    else if (w) dims = w->info.rank - 2;
    else return sb_load_fail(L, SB_ERR_UNSUPPORTED, "the weights must be a constant or kernel_shape "
                             "given");
    if (dims != 1 && dims != 2)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%d-D convolution is not supported (1-D and 2-D "
                            "are)", dims);
    s->dims = dims;
    if (read_spatial(L, dims, has_kernel ? kernel : NULL, nk, &s->sp)) return L->status;
    if (s->group < 1)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "group=%lld must be positive", (long long)s->group);
    s->activation = L->node->activation;
    if (!w) return SB_OK;
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
    int status = as_2d(node, &x->info, x4);
    if (status) return status;
    int dims = s->dims;
    if (s->packed) {
        memcpy(w4, s->w4, sizeof w4);
    } else {
        const sb_tval *w = in[1];
        if (w->info.rank != dims + 2)
            return nfail(node, SB_ERR_VALUE, "W %s is not %d-D weights",
                         shape_text(&w->info, t1, sizeof t1), dims);
        if (dims == 1) w4[0] = w->info.dims[0], w4[1] = w->info.dims[1], w4[2] = 1, w4[3] = w->info.dims[2];
        else memcpy(w4, w->info.dims, sizeof w4);
    }
    const sb_tval *b = n_in > 2 ? in[2] : NULL;
    int64_t sizes[2], kdims[2], p[4], pad4[4], st2[2], dl2[2], k2[2] = {w4[2], w4[3]}, o[2];
    spatial_sizes(x4, dims, sizes);
    if (dims == 2) kdims[0] = w4[2], kdims[1] = w4[3];
    else kdims[0] = w4[3];
    resolve_pads(&s->sp, sizes, kdims, p);
    if (x4[1] != w4[1] * s->group)
        return nfail(node, SB_ERR_VALUE, "X has %lld channels, W %s with group=%lld expects %lld",
                     (long long)x4[1], sb_py_tuple_text(w4, 4, t1, sizeof t1), (long long)s->group,
                     (long long)(w4[1] * s->group));
    if (numel4(x4) == 0)
        return nfail(node, SB_ERR_VALUE, "empty input %s", sb_py_tuple_text(x4, 4, t1, sizeof t1));
    pairs(dims, s->sp.strides, 1, st2);
    pairs(dims, s->sp.dilations, 1, dl2);
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

static int conv_infer(sb_infer_ctx *I)
{
    const conv_state *s = I->state;
    int status = need_floats(I, 0, "X");
    if (!status && !s->packed) status = need_floats(I, 1, "W");
    if (status) return status;
    return conv_geometry(I->node, s, I->in, I->n_in, NULL, &I->out[0]);
}

static int conv_run(sb_run_ctx *R)
{
    const conv_state *s = R->state;
    sb_conv2d_args a;
    sb_vinfo out;
    int status = conv_geometry(R->node, s, R->in, R->n_in, &a, &out);
    if (status) return status;
    a.path = R->path, a.mode = R->mode, a.max_threads = R->threads;
    a.y = (int64_t)(intptr_t)R->out[0]->data;
    status = sb_conv2d(&a);
    return status ? sb_run_fail(R, status, "conv2d failed (status %d)", status) : SB_OK;
}

/* ---- ConvTranspose ------------------------------------------------------------------ */

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

/* ---- matrix products ------------------------------------------------------------------- */

static const char SIGNATURE[] = "(n?,k),(k,m?)->(n?,m?)";

/* Packs B (k x n, element (p, j) at b[p * b_row + j * b_col]) for the path. */
static int pack_b(sb_load_ctx *L, const char *what, const char *name, const sb_tval *b, int64_t k,
                  int64_t n, int64_t b_row, int64_t b_col, const void **out)
{
    char t[128];
    if (k > LIMIT || n > LIMIT)
        return sb_load_fail(L, SB_ERR_VALUE, "%s: %s has shape %s; dimensions above 2**40 = %lld are "
                            "not supported", what, name, shape_text(&b->info, t, sizeof t),
                            (long long)LIMIT);
    size_t bytes = sb_packed_b_bytes(L->path, (size_t)k, (size_t)n);
    if (bytes == 0 && k && n)
        return sb_load_fail(L, SB_ERR_VALUE, "pack: b of shape %s is too large to pack (more than "
                            "2**62 bytes)", shape_text(&b->info, t, sizeof t));
    void *buf = sb_load_buffer(L, bytes > 64 ? bytes : 64);
    if (!buf) return L->status;
    if (k && n) {
        int status = sb_pack_b(L->path, L->threads > 0 ? L->threads : 1, (size_t)k, (size_t)n, b->data, (ptrdiff_t)b_row,
                               (ptrdiff_t)b_col, buf, bytes);
        if (status) return sb_load_fail(L, status, "%s failed (status %d)", what, status);
    }
    *out = buf;
    return SB_OK;
}

/* One sb_matmul call as _products._prepare makes it. */
typedef struct {
    sb_matmul_args args;
    sb_batch batch;
    int has_batch;
    sb_vinfo out;
} product_call;

/* Batch dimensions with extent-1 ones dropped and neighbours merged where
 * every operand steps through them as through one (_merge_batch). */
static int merge_batch(int rank, const int64_t *shape, const int64_t *sa, const int64_t *sb,
                       const int64_t *sc, sb_batch *out)
{
    int nd = 0;
    memset(out, 0, sizeof *out);
    for (int d = 0; d < rank; ++d) {
        int64_t extent = shape[d];
        if (extent == 1) continue;
        if (nd && out->a_stride[nd - 1] == sa[d] * extent && out->b_stride[nd - 1] == sb[d] * extent &&
            out->c_stride[nd - 1] == sc[d] * extent) {
            out->shape[nd - 1] *= extent;
            out->a_stride[nd - 1] = sa[d], out->b_stride[nd - 1] = sb[d], out->c_stride[nd - 1] = sc[d];
            continue;
        }
        out->shape[nd] = extent;
        out->a_stride[nd] = sa[d], out->b_stride[nd] = sb[d], out->c_stride[nd] = sc[d];
        ++nd;
    }
    out->ndim = nd;
    return nd;
}

/* Element strides of an operand's batch dimensions aligned to the batch
 * shape (0 where it broadcasts): _batch_strides. */
static void batch_strides(int nb, const int64_t *own_batch, int n_own, const int64_t *own_strides,
                          int64_t *out)
{
    int pad = nb - n_own;
    for (int d = 0; d < nb; ++d)
        out[d] = d < pad || own_batch[d - pad] == 1 ? 0 : own_strides[d - pad];
}

/* matmul(a, b) (b an (k, n) packed matrix when b_packed: b_info null) or
 * linear(a, packed, bias, activation) shaped as numpy's matmul: the call
 * and the output info, or the Python error. */
static int product_prepare(const sb_node *node, const char *what, const sb_vinfo *a,
                           const sb_vinfo *b, int64_t packed_k, int64_t packed_n, product_call *call)
{
    char t1[256], t2[256], t3[256];
    memset(call, 0, sizeof *call);
    if (a->rank == 0 || (b && b->rank == 0))
        return nfail(node, SB_ERR_VALUE, "%s: Input operand %d does not have enough dimensions (has "
                     "0, gufunc core with signature %s requires 1)", what, a->rank == 0 ? 0 : 1,
                     SIGNATURE);
    for (int d = 0; d < a->rank; ++d)
        if (a->dims[d] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "%s: %s has shape %s; dimensions above 2**40 = %lld are "
                         "not supported", what, strcmp(what, "linear") ? "a" : "x",
                         shape_text(a, t1, sizeof t1), (long long)LIMIT);
    for (int d = 0; b && d < b->rank; ++d)
        if (b->dims[d] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "%s: b has shape %s; dimensions above 2**40 = %lld are "
                         "not supported", what, shape_text(b, t1, sizeof t1), (long long)LIMIT);
    int64_t as[SB_MAX_RANK], bs[SB_MAX_RANK];
    sb_c_strides(a, as);
    /* the cores: (rows, cols, row stride, col stride); a 1-D a is a row, a 1-D b a column */
    int64_t m, k, a_row, a_col, kb, n, b_row = 0, b_col = 0;
    if (a->rank == 1) m = 1, k = a->dims[0], a_row = 0, a_col = as[0];
    else m = a->dims[a->rank - 2], k = a->dims[a->rank - 1], a_row = as[a->rank - 2], a_col = as[a->rank - 1];
    int b_vector = 0, nb_own = 0;
    const int64_t *b_batch = NULL;
    if (b) {
        sb_c_strides(b, bs);
        if (b->rank == 1) kb = b->dims[0], n = 1, b_row = bs[0], b_col = 0, b_vector = 1;
        else kb = b->dims[b->rank - 2], n = b->dims[b->rank - 1], b_row = bs[b->rank - 2],
             b_col = bs[b->rank - 1];
        nb_own = b->rank > 2 ? b->rank - 2 : 0;
        b_batch = b->dims;
    } else {
        kb = packed_k, n = packed_n;
    }
    int na = a->rank > 2 ? a->rank - 2 : 0;
    int nb = na > nb_own ? na : nb_own;
    int64_t batch[SB_MAX_RANK];
    for (int d = 0; d < nb; ++d) {
        int ia = d - (nb - na), ib = d - (nb - nb_own);
        int64_t x = ia >= 0 ? a->dims[ia] : 1, y = ib >= 0 ? b_batch[ib] : 1;
        if (x != y && x != 1 && y != 1) {
            char t4[256];   /* (b is there: a packed b has no batch dimensions) */
            return nfail(node, SB_ERR_VALUE, "%s: operands could not be broadcast together: batch "
                         "dimensions %s and %s of shapes %s and %s", what,
                         sb_py_tuple_text(a->dims, na, t1, sizeof t1),
                         sb_py_tuple_text(b->dims, nb_own, t2, sizeof t2),
                         shape_text(a, t3, sizeof t3), shape_text(b, t4, sizeof t4));
        }
        batch[d] = x == 1 ? y : x;
    }
    if (k != kb) {
        char ta[256], tb[256];
        if (!b) {
            int64_t wshape[2] = {n, kb};
            return nfail(node, SB_ERR_VALUE, "linear: x has %lld features (shape %s) but weight "
                         "(shape %s) takes %lld", (long long)k, shape_text(a, ta, sizeof ta),
                         sb_py_tuple_text(wshape, 2, tb, sizeof tb), (long long)kb);
        }
        return nfail(node, SB_ERR_VALUE, "%s: Input operand 1 has a mismatch in its core dimension 0, "
                     "with gufunc signature %s (size %lld is different from %lld): shapes %s and %s",
                     what, SIGNATURE, (long long)kb, (long long)k, shape_text(a, ta, sizeof ta),
                     shape_text(b, tb, sizeof tb));
    }
    sb_vinfo *out = &call->out;
    out->dtype = SB_DT_FLOAT;
    out->rank = 0;
    for (int d = 0; d < nb; ++d) out->dims[out->rank++] = batch[d];
    if (a->rank > 1) out->dims[out->rank++] = m;
    if (!b_vector) out->dims[out->rank++] = n;
    if (sb_vinfo_numel(out) < 0) {
        return nfail(node, SB_ERR_VALUE, "%s: the output would have shape %s; more than 2**40 "
                     "elements are not supported", what, shape_text(out, t1, sizeof t1));
    }
    int64_t cs[SB_MAX_RANK];
    sb_c_strides(out, cs);
    int64_t c_row = a->rank > 1 ? cs[nb] : 0;
    int64_t sa[SB_MAX_RANK], sbt[SB_MAX_RANK];
    batch_strides(nb, a->dims, na, as, sa);
    if (b) batch_strides(nb, b->dims, nb_own, bs, sbt);
    else for (int d = 0; d < nb; ++d) sbt[d] = 0;
    call->has_batch = nb ? merge_batch(nb, batch, sa, sbt, cs, &call->batch) > 0 : 0;
    sb_matmul_args *g = &call->args;
    g->m = m, g->n = n, g->k = k;
    g->a_row = a_row, g->a_col = a_col, g->b_row = b ? b_row : 0, g->b_col = b ? b_col : 0;
    g->b_packed = !b;
    g->c_row = c_row;
    return SB_OK;
}

/* Runs a prepared call: +0 everywhere for k = 0 without an epilogue; nothing
 * for an empty output. */
static int product_run(sb_run_ctx *R, product_call *call, const void *a, const void *b, float *c,
                       const float *bias, int64_t activation)
{
    if (sb_vinfo_numel(&call->out) == 0) return SB_OK;
    sb_matmul_args *g = &call->args;
    g->path = R->path, g->mode = R->mode, g->max_threads = R->threads;
    g->a = (int64_t)(intptr_t)a, g->b = (int64_t)(intptr_t)b, g->c = (int64_t)(intptr_t)c;
    g->bias = (int64_t)(intptr_t)bias, g->activation = activation;
    g->batch = call->has_batch ? (int64_t)(intptr_t)&call->batch : 0;
    int status = sb_matmul(g);
    return status ? sb_run_fail(R, status, "matmul failed (status %d)", status) : SB_OK;
}

/* ---- MatMul ------------------------------------------------------------------------------ */

typedef struct {
    int packed;
    const void *b;               /* B (k x n) packed */
    int64_t k, n;
    const float *bias;           /* an absorbed Add's (n values), or null */
    int64_t activation;
} matmul_state;

static int matmul_load(sb_load_ctx *L)
{
    matmul_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    const sb_tval *b = sb_load_const(L, 1);
    if (b && b->info.rank == 2 && b->info.dtype == SB_DT_FLOAT && sb_vinfo_numel(&b->info) > 0) {
        s->k = b->info.dims[0], s->n = b->info.dims[1];
        if (pack_b(L, "pack", "b", b, s->k, s->n, s->n, 1, &s->b)) return L->status;
        s->packed = 1;
        sb_load_consume(L, 1);
    }
    if (L->node->fused_bias >= 0) {
        const sb_tval *bias = sb_load_const_value(L, L->node->fused_bias);
        if (!bias || bias->info.dtype != SB_DT_FLOAT || !s->packed)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "the absorbed bias is not a float32 constant");
        s->bias = bias->data;
    }
    s->activation = L->node->activation;
    if (s->activation && !s->packed)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "a fused activation needs constant 2-D weights");
    return SB_OK;
}

static int matmul_geometry(const sb_node *node, const matmul_state *s, const sb_tval *const *in,
                           int n_in, product_call *call)
{
    const sb_tval *a = in[0];
    if (s->packed && a->info.rank >= 1) {
        if (a->info.dims[a->info.rank - 1] != s->k) {
            char ta[256], tb[64];
            int64_t bshape[2] = {s->k, s->n};
            return nfail(node, SB_ERR_VALUE, "A %s and B %s do not multiply",
                         shape_text(&a->info, ta, sizeof ta), sb_py_tuple_text(bshape, 2, tb, sizeof tb));
        }
        return product_prepare(node, "linear", &a->info, NULL, s->k, s->n, call);
    }
    const sb_tval *b = n_in > 1 ? in[1] : NULL;
    if (!b) return nfail(node, SB_ERR_VALUE, "input B is missing");
    if (b->info.dtype != SB_DT_FLOAT)
        return nfail(node, SB_ERR_TYPE, "input B must be float32, got %s", sb_dtype_name(b->info.dtype));
    return product_prepare(node, "matmul", &a->info, &b->info, 0, 0, call);
}

static int matmul_infer(sb_infer_ctx *I)
{
    int status = need_floats(I, 0, "A");
    if (status) return status;
    product_call call;
    status = matmul_geometry(I->node, I->state, I->in, I->n_in, &call);
    if (status) return status;
    I->out[0] = call.out;
    return SB_OK;
}

static int matmul_run(sb_run_ctx *R)
{
    const matmul_state *s = R->state;
    product_call call;
    int status = matmul_geometry(R->node, s, R->in, R->n_in, &call);
    if (status) return status;
    sb_tval *y = R->out[0];
    int64_t count = sb_vinfo_numel(&y->info);
    if (count == 0) return SB_OK;
    if (s->packed && R->in[0]->info.rank >= 1) {
        if (sb_vinfo_numel(&R->in[0]->info) == 0) return SB_OK;
        return product_run(R, &call, R->in[0]->data, s->b, y->data, s->bias, s->activation);
    }
    if (call.args.k == 0) {   /* no terms: +0 */
        memset(y->data, 0, (size_t)count * 4);
        return SB_OK;
    }
    return product_run(R, &call, R->in[0]->data, R->in[1]->data, y->data, NULL, 0);
}

/* ---- Gemm --------------------------------------------------------------------------------- */

typedef struct {
    float alpha, beta;
    int64_t trans_a, trans_b;
    int packed;
    const void *b;               /* B as (k x n), packed */
    int64_t k, n;
    int64_t activation;
} gemm_state;

static int gemm_load(sb_load_ctx *L)
{
    gemm_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->alpha = sb_attr_float(L, "alpha", 1.0f);
    s->beta = sb_attr_float(L, "beta", 1.0f);
    s->trans_a = sb_attr_int(L, "transA", 0);
    s->trans_b = sb_attr_int(L, "transB", 0);
    if (L->opset < 7) sb_attr_ignore(L, "broadcast");
    if (L->status) return L->status;
    const sb_tval *b = sb_load_const(L, 1);
    if (b) {
        char t[256];
        if (b->info.dtype != SB_DT_FLOAT)
            return sb_load_fail(L, SB_ERR_TYPE, "input B must be float32, got %s",
                                sb_dtype_name(b->info.dtype));
        if (b->info.rank != 2)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "B must be 2-D, got %s",
                                shape_text(&b->info, t, sizeof t));
        int64_t r = b->info.dims[0], c = b->info.dims[1];
        int status = s->trans_b ? pack_b(L, "pack_linear", "weight", b, c, r, 1, c, &s->b)
                                : pack_b(L, "pack", "b", b, r, c, c, 1, &s->b);
        if (status) return L->status;
        s->k = s->trans_b ? c : r, s->n = s->trans_b ? r : c;
        s->packed = 1;
        sb_load_consume(L, 1);
    }
    s->activation = L->node->activation;
    if (s->activation && !s->packed)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "a fused activation needs constant weights");
    return SB_OK;
}

typedef struct {
    product_call call;
    sb_vinfo a;                  /* A as multiplied ((m, k): transposed for transA) */
    int fuse;                    /* C is linear's bias */
    int add;                     /* C (times beta) added after */
    sb_vinfo c, y;               /* C's info; the result's */
    int64_t at_bytes, cc_bytes, p_bytes;   /* workspace: A transposed, beta * C, the product */
} gemm_plan;

static int gemm_geometry(const sb_node *node, const gemm_state *s, const sb_tval *const *in, int n_in,
                         gemm_plan *p)
{
    char t1[256];
    memset(p, 0, sizeof *p);
    const sb_tval *a = in[0];
    if (a->info.rank != 2)
        return nfail(node, SB_ERR_VALUE, "A must be 2-D, got %s", shape_text(&a->info, t1, sizeof t1));
    p->a = a->info;
    if (s->trans_a) p->a.dims[0] = a->info.dims[1], p->a.dims[1] = a->info.dims[0];
    const sb_tval *c = n_in > 2 ? in[2] : NULL;
    p->fuse = s->packed && c && s->alpha == 1.0f && s->beta == 1.0f && c->info.rank == 1;
    int status;
    if (p->fuse) {
        if (c->info.dtype != SB_DT_FLOAT)
            return nfail(node, SB_ERR_TYPE, "input C must be float32, got %s",
                         sb_dtype_name(c->info.dtype));
    }
    if (s->packed) {
        if ((status = product_prepare(node, "linear", &p->a, NULL, s->k, s->n, &p->call))) return status;
        if (p->fuse && c->info.dims[0] != s->n) {
            char t2[64];
            int64_t w[2] = {s->n, s->k};
            return nfail(node, SB_ERR_VALUE, "linear: bias has shape %s, expected (%lld,) for weight "
                         "of shape %s", shape_text(&c->info, t1, sizeof t1), (long long)s->n,
                         sb_py_tuple_text(w, 2, t2, sizeof t2));
        }
    } else {
        const sb_tval *b = n_in > 1 ? in[1] : NULL;
        if (!b) return nfail(node, SB_ERR_VALUE, "input B is missing");
        if (b->info.dtype != SB_DT_FLOAT)
            return nfail(node, SB_ERR_TYPE, "input B must be float32, got %s",
                         sb_dtype_name(b->info.dtype));
        if (b->info.rank != 2)
            return nfail(node, SB_ERR_VALUE, "B must be 2-D, got %s", shape_text(&b->info, t1, sizeof t1));
        sb_vinfo bt = b->info;
        if (s->trans_b) bt.dims[0] = b->info.dims[1], bt.dims[1] = b->info.dims[0];
        if ((status = product_prepare(node, "matmul", &p->a, &bt, 0, 0, &p->call))) return status;
        if (s->trans_b) p->call.args.b_row = 1, p->call.args.b_col = b->info.dims[1];   /* b.T in place */
    }
    p->y = p->call.out;
    p->add = c && !p->fuse && s->beta != 0.0f;
    if (p->add) {
        if (c->info.dtype != SB_DT_FLOAT)
            return nfail(node, SB_ERR_TYPE, "input C must be float32, got %s",
                         sb_dtype_name(c->info.dtype));
        p->c = c->info;
        const sb_vinfo *both[2] = {&p->call.out, &c->info};
        if (sb_broadcast(both, 2, &p->y)) {
            char text[600];
            sb_broadcast_error_text(both, 2, text, sizeof text);
            return nfail(node, SB_ERR_VALUE, "%s", text);
        }
        p->y.dtype = SB_DT_FLOAT;
        if (s->beta != 1.0f) p->cc_bytes = (sb_vinfo_numel(&c->info) * 4 + 63) / 64 * 64;
        if (!sb_vinfo_same_shape(&p->y, &p->call.out))
            p->p_bytes = (sb_vinfo_numel(&p->call.out) * 4 + 63) / 64 * 64;
    }
    if (s->trans_a) p->at_bytes = (sb_vinfo_numel(&a->info) * 4 + 63) / 64 * 64;
    return SB_OK;
}

static int gemm_infer(sb_infer_ctx *I)
{
    int status = need_floats(I, 0, "A");
    if (status) return status;
    gemm_plan p;
    status = gemm_geometry(I->node, I->state, I->in, I->n_in, &p);
    if (status) return status;
    I->out[0] = p.y;
    I->workspace = p.at_bytes + p.cc_bytes + p.p_bytes;
    return SB_OK;
}

static int gemm_run(sb_run_ctx *R)
{
    const gemm_state *s = R->state;
    gemm_plan p;
    int status = gemm_geometry(R->node, s, R->in, R->n_in, &p);
    if (status) return status;
    uint8_t *ws = R->workspace;
    const sb_tval *c = R->n_in > 2 ? R->in[2] : NULL;
    const void *a = R->in[0]->data;
    if (s->trans_a && sb_vinfo_numel(&R->in[0]->info)) {   /* A.T as a new C-ordered matrix */
        sb_tval at = {.info = p.a, .data = ws};
        static const int perm[2] = {1, 0};
        if ((status = sb_k_permute(R->threads, R->in[0], perm, &at)))
            return sb_run_fail(R, status, "permute failed (status %d)", status);
        a = ws;
    }
    sb_tval prod = {.info = p.call.out, .data = p.p_bytes ? ws + p.at_bytes + p.cc_bytes
                                                          : R->out[0]->data};
    int64_t count = sb_vinfo_numel(&prod.info);
    if (count) {
        if (s->packed)
            status = product_run(R, &p.call, a, s->b, prod.data, p.fuse ? c->data : NULL, s->activation);
        else if (p.call.args.k == 0)
            memset(prod.data, 0, (size_t)count * 4), status = SB_OK;
        else
            status = product_run(R, &p.call, a, R->in[1]->data, prod.data, NULL, 0);
        if (status) return status;
    }
    if (s->alpha != 1.0f && (status = sb_k_binary_scalar(R, SB_BIN_MUL, &prod, s->alpha, &prod)))
        return sb_run_fail(R, status, "mul failed (status %d)", status);
    if (p.add) {
        sb_tval cc = *c;
        if (s->beta != 1.0f) {
            cc.data = ws + p.at_bytes;
            if ((status = sb_k_binary_scalar(R, SB_BIN_MUL, c, s->beta, &cc)))
                return sb_run_fail(R, status, "mul failed (status %d)", status);
        }
        sb_tval y = {.info = p.y, .data = R->out[0]->data};
        if ((status = sb_k_binary(R, SB_BIN_ADD, &prod, &cc, &y)))
            return sb_run_fail(R, status, "add failed (status %d)", status);
    }
    return SB_OK;
}

/* ---- pooling ---------------------------------------------------------------------------------- */

typedef struct {
    spatial sp;
    int dims;
    int64_t kernel[2];
    int64_t ceil_mode, count_include_pad;
} pool_state;

static int pool_load_common(sb_load_ctx *L, pool_state *s)
{
    const int64_t *kernel = NULL;
    size_t nk = 0;
    if (!sb_has_attr(L, "kernel_shape"))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "attribute 'kernel_shape' is required");
    sb_attr_ints(L, "kernel_shape", &kernel, &nk);
    if (L->status) return L->status;
    if (nk != 1 && nk != 2)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%zu-D pooling is not supported (1-D and 2-D are)",
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
    if (sb_attr_int(L, "storage_order", 0) != 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "storage_order=1 is not supported");
    if (L->status) return L->status;
    return sb_load_only_first_output(L, "Indices");
}

static int avg_pool_load(sb_load_ctx *L)
{
    pool_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    if (pool_load_common(L, s)) return L->status;
    if (s->sp.dilations[0] != 1 || (s->dims == 2 && s->sp.dilations[1] != 1)) {
        char t[128];
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "dilations %s are not supported for AveragePool",
                            sb_py_list_text(s->sp.dilations, (size_t)s->dims, t, sizeof t));
    }
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

static int max_pool_infer(sb_infer_ctx *I)
{
    int status = need_floats(I, 0, "X");
    return status ? status : max_pool_geometry(I->node, I->state, &I->in[0]->info, NULL, &I->out[0]);
}

static int max_pool_run(sb_run_ctx *R)
{
    sb_max_pool2d_args a;
    sb_vinfo out;
    int status = max_pool_geometry(R->node, R->state, &R->in[0]->info, &a, &out);
    if (status) return status;
    a.x = (int64_t)(intptr_t)R->in[0]->data, a.y = (int64_t)(intptr_t)R->out[0]->data;
    a.max_threads = R->threads;
    status = sb_max_pool2d(&a);
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
    int status = need_floats(I, 0, "X");
    return status ? status : avg_pool_geometry(I->node, I->state, &I->in[0]->info, NULL, &I->out[0]);
}

static int avg_pool_run(sb_run_ctx *R)
{
    sb_avg_pool2d_args a;
    sb_vinfo out;
    int status = avg_pool_geometry(R->node, R->state, &R->in[0]->info, &a, &out);
    if (status) return status;
    a.x = (int64_t)(intptr_t)R->in[0]->data, a.y = (int64_t)(intptr_t)R->out[0]->data;
    a.max_threads = R->threads;
    status = sb_avg_pool2d(&a);
    return status ? sb_run_fail(R, status, "avg_pool2d failed (status %d)", status) : SB_OK;
}

/* ---- Resize, Upsample ---------------------------------------------------------------------- */

#define MAX_SCALES 64

typedef struct {
    int upsample;
    int nearest, align;          /* samebits' mode (nearest or bilinear) and align_corners */
    int pytorch_half_pixel;
    int opset;
    int has_attr_scales;         /* Upsample before opset 9 */
    size_t n_attr_scales;
    double attr_scales[MAX_SCALES];
} resize_state;

static int resize_plan(sb_load_ctx *L, resize_state *s, const char *mode, const char *coord,
                       const char *nearest_mode)
{
    if (!strcmp(mode, "nearest")) {
        if (!strcmp(coord, "asymmetric") && !strcmp(nearest_mode, "floor")) {
            s->nearest = 1;
            return SB_OK;
        }
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "mode 'nearest' with coordinate_transformation_mode="
                            "'%s' and nearest_mode='%s' is not supported (asymmetric with floor, as "
                            "torch exports, is)", coord, nearest_mode);
    }
    if (!strcmp(mode, "linear")) {
        if (!strcmp(coord, "half_pixel") || !strcmp(coord, "pytorch_half_pixel")) {
            s->pytorch_half_pixel = !strcmp(coord, "pytorch_half_pixel");
            return SB_OK;
        }
        if (!strcmp(coord, "align_corners")) {
            s->align = 1;
            return SB_OK;
        }
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "mode 'linear' with coordinate_transformation_mode="
                            "'%s' is not supported (half_pixel, pytorch_half_pixel and align_corners "
                            "are)", coord);
    }
    return sb_load_fail(L, SB_ERR_UNSUPPORTED, "mode '%s' is not supported (nearest and linear are)",
                        mode);
}

static int resize_load(sb_load_ctx *L)
{
    resize_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->opset = L->opset;
    const char *mode = sb_attr_str(L, "mode", "nearest");
    const char *coord = sb_attr_str(L, "coordinate_transformation_mode",
                                    L->opset < 11 ? "asymmetric" : "half_pixel");
    /* Resize-10 has no nearest_mode: it picks floor(x / scale) when
     * upsampling (as Upsample does); downsampling with it is refused at run */
    const char *nearest_mode = sb_attr_str(L, "nearest_mode",
                                           L->opset < 11 ? "floor" : "round_prefer_floor");
    sb_attr_ignore(L, "cubic_coeff_a");           /* cubic and crop-and-resize only */
    sb_attr_ignore(L, "extrapolation_value");
    if (L->status) return L->status;
    if (sb_attr_int(L, "exclude_outside", 0))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "exclude_outside=1 is not supported");
    if (L->status) return L->status;
    if (sb_attr_int(L, "antialias", 0))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "antialias=1 is not supported");
    if (L->status) return L->status;
    if (sb_has_attr(L, "axes")) {
        const int64_t *axes = NULL;
        size_t n = 0;
        sb_attr_ints(L, "axes", &axes, &n);
        if (L->status) return L->status;
        int seen[4] = {0, 0, 0, 0}, ok = n == 4 || n == 2;
        for (size_t i = 0; ok && i < n; ++i) seen[((axes[i] % 4) + 4) % 4]++;
        if (ok && n == 4) ok = seen[0] == 1 && seen[1] == 1 && seen[2] == 1 && seen[3] == 1;
        if (ok && n == 2) ok = seen[2] == 1 && seen[3] == 1;
        if (!ok) {
            char t[256];
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "axes %s are not supported",
                                sb_py_list_text(axes, n, t, sizeof t));
        }
    }
    const char *policy = sb_attr_str(L, "keep_aspect_ratio_policy", "stretch");
    if (L->status) return L->status;
    if (strcmp(policy, "stretch"))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "keep_aspect_ratio_policy='%s' is not supported",
                            policy);
    return resize_plan(L, s, mode, coord, nearest_mode);
}

static int upsample_load(sb_load_ctx *L)
{
    resize_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->opset = L->opset;
    s->upsample = 1;
    const char *mode = sb_attr_str(L, "mode", "nearest");
    if (L->status) return L->status;
    if (strcmp(mode, "nearest"))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "Upsample mode '%s' is not supported (nearest is)",
                            mode);
    s->nearest = 1;
    if (L->opset < 9) {
        const float *v = NULL;
        size_t n = 0;
        s->has_attr_scales = sb_attr_floats(L, "scales", &v, &n);
        if (L->status) return L->status;
        if (n > MAX_SCALES)
            return sb_load_fail(L, SB_ERR_UNSUPPORTED, "%zu scales are too many", n);
        s->n_attr_scales = n;
        for (size_t i = 0; i < n; ++i) s->attr_scales[i] = v[i];
    }
    return SB_OK;
}

/* The scales (float32 values as doubles) of a known input. */
static int read_scales(sb_infer_ctx *I, const sb_tval *t, double *v, size_t *n)
{
    if (t->info.dtype != SB_DT_FLOAT)
        return nfail(I->node, SB_ERR_TYPE, "input scales must be float32, got %s",
                     sb_dtype_name(t->info.dtype));
    int64_t count = sb_vinfo_numel(&t->info);
    if (count > MAX_SCALES)
        return nfail(I->node, SB_ERR_VALUE, "scales has %lld values, at most %d are supported",
                     (long long)count, MAX_SCALES);
    if (!t->data) return SB_NEEDS_VALUES;
    for (int64_t i = 0; i < count; ++i) v[i] = ((const float *)t->data)[i];
    *n = (size_t)count;
    return SB_OK;
}

/* The binary32 bits of one axis's source-per-output scale (torch's rule). */
static int64_t scale_bits(int64_t in, int64_t out, const double *factor, int align)
{
    double scale;
    /* align_corners divides by length_resized - 1, where ONNX's
     * length_resized is in * factor when scales are given (a fractional
     * length: 0.6 of 4 columns is 2.4, not the 2 of the output), as
     * onnx.reference and ONNX's conformance suite do; torch (and ONNX
     * Runtime) divide by out - 1 instead */
    if (align && factor) {
        double resized = (double)in * *factor;
        scale = out > 1 && resized > 1.0 ? (double)(in - 1) / (resized - 1.0) : 0.0;
    } else if (align) scale = out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
    else if (factor) scale = 1.0 / *factor;
    else scale = (double)in / (double)out;
    float f = (float)scale;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return (int64_t)bits;
}

static int resize_geometry(sb_infer_ctx *I, const sb_node *node, const resize_state *s,
                           const sb_tval *const *in, int n_in, sb_resize2d_args *a, sb_vinfo *out)
{
    const sb_tval *x = in[0];
    double scales[MAX_SCALES + 2];
    int64_t sizes[MAX_SCALES + 2];
    size_t ns = 0, nz = 0;
    int has_scales = 0, has_sizes = 0, status;
    char t1[512], t2[256];
    if (s->upsample) {
        if (s->has_attr_scales) {
            memcpy(scales, s->attr_scales, s->n_attr_scales * sizeof *scales);
            ns = s->n_attr_scales;
        } else {
            const sb_tval *sc = n_in > 1 ? in[1] : NULL;
            if (!sc) return nfail(node, SB_ERR_VALUE, "input scales is missing");
            if ((status = read_scales(I, sc, scales, &ns))) return status;
        }
        has_scales = 1;
        for (size_t i = 0; i < ns; ++i)
            if (scales[i] < 1.0)
                return nfail(node, SB_ERR_VALUE, "Upsample scales %s below 1",
                             floats_text(scales, ns, t1, sizeof t1));
    } else {
        int at = s->opset < 11 ? 1 : 2;
        const sb_tval *sc = n_in > at ? in[at] : NULL;
        if (sc && sb_vinfo_numel(&sc->info)) {
            if ((status = read_scales(I, sc, scales, &ns))) return status;
            has_scales = 1;
        }
        const sb_tval *sz = s->opset >= 11 && n_in > 3 ? in[3] : NULL;
        if (sz && sb_vinfo_numel(&sz->info)) {
            if (!sb_dtype_is_int(sz->info.dtype))
                return nfail(node, SB_ERR_TYPE, "input sizes must be an integer tensor, got float32");
            int64_t count = sb_vinfo_numel(&sz->info);
            if (count > MAX_SCALES)
                return nfail(node, SB_ERR_VALUE, "sizes has %lld values, at most %d are supported",
                             (long long)count, MAX_SCALES);
            if (!sz->data) return SB_NEEDS_VALUES;
            for (int64_t i = 0; i < count; ++i) sizes[i] = sb_int_at(sz, i);
            nz = (size_t)count;
            has_sizes = 1;
        }
        if (has_scales == has_sizes)
            return nfail(node, SB_ERR_VALUE, "give exactly one of scales and sizes");
        if (has_sizes && nz == 2) {
            int keep = x->info.rank < 2 ? x->info.rank : 2;
            memmove(sizes + keep, sizes, 2 * sizeof *sizes);
            for (int i = 0; i < keep; ++i) sizes[i] = x->info.dims[i];
            nz = 2 + (size_t)keep;
        }
        if (has_scales && ns == 2) {
            memmove(scales + 2, scales, 2 * sizeof *scales);
            scales[0] = scales[1] = 1.0;
            ns = 4;
        }
        if (s->opset < 11 && s->nearest && has_scales)
            for (size_t i = 0; i < ns; ++i)
                if (scales[i] < 1.0)
                    return nfail(node, SB_ERR_VALUE, "opset-10 nearest Resize with scales %s below 1 "
                                 "(downsampling) is not supported", floats_text(scales, ns, t1, sizeof t1));
    }
    /* _resize_run */
    if (x->info.rank != 4)
        return nfail(node, SB_ERR_VALUE, "only 4-D (N, C, H, W) inputs are supported, got %s",
                     shape_text(&x->info, t1, sizeof t1));
    const int64_t *xd = x->info.dims;
    int64_t oh, ow;
    int64_t bh, bw;
    if (has_sizes) {
        if (nz != 4 || sizes[0] != xd[0] || sizes[1] != xd[1])
            return nfail(node, SB_ERR_VALUE, "sizes %s must keep N and C of %s",
                         sb_py_list_text(sizes, nz, t1, sizeof t1), shape_text(&x->info, t2, sizeof t2));
        if (s->pytorch_half_pixel && (sizes[2] < sizes[3] ? sizes[2] : sizes[3]) == 1)
            return nfail(node, SB_ERR_VALUE, "pytorch_half_pixel to an output of size 1 is not "
                         "supported");
        if (xd[2] < 1 || xd[3] < 1)
            return nfail(node, SB_ERR_VALUE, "interpolate: the input height and width must be at "
                         "least 1, got %lld x %lld", (long long)xd[2], (long long)xd[3]);
        for (int i = 2; i < 4; ++i) {
            if (sizes[i] < 1)
                return nfail(node, SB_ERR_VALUE, "interpolate: size must be at least 1, got %lld",
                             (long long)sizes[i]);
            if (sizes[i] > LIMIT)
                return nfail(node, SB_ERR_VALUE, "interpolate: size is too large: %lld (at most 2**40 "
                             "= %lld)", (long long)sizes[i], (long long)LIMIT);
        }
        oh = sizes[2], ow = sizes[3];
        bh = scale_bits(xd[2], oh, NULL, s->align);
        bw = scale_bits(xd[3], ow, NULL, s->align);
    } else {
        if (ns != 4 || scales[0] != 1.0 || scales[1] != 1.0)
            return nfail(node, SB_ERR_VALUE, "scales %s must be 4 values starting 1, 1",
                         floats_text(scales, ns, t1, sizeof t1));
        double sh = scales[2], sw = scales[3];
        if (!(sh > 0 && sw > 0 && isfinite(sh) && isfinite(sw))) {
            char a1[64], a2[64];
            sb_py_float_repr(sh, a1, sizeof a1);
            sb_py_float_repr(sw, a2, sizeof a2);
            return nfail(node, SB_ERR_VALUE, "interpolate: scale_factor must be positive and finite, "
                         "got (%s, %s)", a1, a2);
        }
        double fh = floor((double)xd[2] * sh), fw = floor((double)xd[3] * sw);
        if (s->pytorch_half_pixel && (fh < fw ? fh : fw) == 1.0)
            return nfail(node, SB_ERR_VALUE, "pytorch_half_pixel to an output of size 1 is not "
                         "supported");
        if (xd[2] < 1 || xd[3] < 1)
            return nfail(node, SB_ERR_VALUE, "interpolate: the input height and width must be at "
                         "least 1, got %lld x %lld", (long long)xd[2], (long long)xd[3]);
        if (fh < 1 || fw < 1) {
            char a1[64], a2[64];
            sb_py_float_repr(sh, a1, sizeof a1);
            sb_py_float_repr(sw, a2, sizeof a2);
            return nfail(node, SB_ERR_VALUE, "interpolate: scale_factor (%s, %s) gives an empty "
                         "output (%.0f x %.0f)", a1, a2, fh, fw);
        }
        if (fh > (double)LIMIT || fw > (double)LIMIT)
            return nfail(node, SB_ERR_VALUE, "interpolate: the output has shape (%.0f, %.0f); "
                         "dimensions above 2**40 = %lld are not supported", fh, fw, (long long)LIMIT);
        oh = (int64_t)fh, ow = (int64_t)fw;
        bh = scale_bits(xd[2], oh, &sh, s->align);
        bw = scale_bits(xd[3], ow, &sw, s->align);
    }
    int64_t y4[4] = {xd[0], xd[1], oh, ow};
    if ((status = check_elements(node, "interpolate", y4, 4))) return status;
    out->dtype = SB_DT_FLOAT;
    out->rank = 4;
    memcpy(out->dims, y4, sizeof y4);
    if (a) {
        memset(a, 0, sizeof *a);
        a->n = xd[0], a->c = xd[1], a->h = xd[2], a->w = xd[3], a->oh = oh, a->ow = ow;
        a->mode = s->nearest ? 0 : 1, a->align_corners = s->align;
        a->scale_h = bh, a->scale_w = bw;
    }
    return SB_OK;
}

static int resize_infer(sb_infer_ctx *I)
{
    int status = need_floats(I, 0, "X");
    if (status) return status;
    return resize_geometry(I, I->node, I->state, I->in, I->n_in, NULL, &I->out[0]);
}

static int resize_run(sb_run_ctx *R)
{
    sb_infer_ctx I = {0};
    I.node = R->node, I.state = R->state, I.n_in = R->n_in, I.in = R->in;
    sb_resize2d_args a;
    sb_vinfo out;
    int status = resize_geometry(&I, R->node, R->state, R->in, R->n_in, &a, &out);
    if (status == SB_NEEDS_VALUES)
        return sb_run_fail(R, SB_ERR_VALUE, "the output shapes cannot be inferred");
    if (status) return status;
    a.x = (int64_t)(intptr_t)R->in[0]->data, a.y = (int64_t)(intptr_t)R->out[0]->data;
    a.max_threads = R->threads;
    status = sb_resize2d(&a);
    return status ? sb_run_fail(R, status, "interpolate failed (status %d)", status) : SB_OK;
}

const sb_op_def sb_ops_nn[] = {
    {"Conv", conv_load, conv_infer, conv_run, 0},
    {"ConvTranspose", convt_load, convt_infer, convt_run, 0},
    {"Gemm", gemm_load, gemm_infer, gemm_run, 0},
    {"MatMul", matmul_load, matmul_infer, matmul_run, 0},
    {"MaxPool", max_pool_load, max_pool_infer, max_pool_run, 0},
    {"AveragePool", avg_pool_load, avg_pool_infer, avg_pool_run, 0},
    {"Resize", resize_load, resize_infer, resize_run, 0},
    {"Upsample", upsample_load, resize_infer, resize_run, 0},
    {0},
};
