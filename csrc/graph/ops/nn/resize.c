/* ONNX Resize and Upsample (docs/onnx.md). */
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
#include "kernels/resize_general.h"

#define MAX_SCALES 64

typedef struct {
    int upsample;
    int nearest, align;          /* samebits' mode (nearest or bilinear) and align_corners */
    int pytorch_half_pixel;
    /* the forms torch has no rule for: kernels/resize_general.c */
    int general, kind, coord, nearest_mode, exclude_outside, antialias;
    double cubic_a;
    float extrapolation;         /* tf_crop_and_resize */
    int policy;                  /* keep_aspect_ratio_policy: 0 stretch, 1 not_larger, 2 not_smaller */
    int n_axes, axis_of[4];      /* the `axes` attribute: the axis of each scale or size given */
    int opset;
    int has_attr_scales;         /* Upsample before opset 9 */
    size_t n_attr_scales;
    double attr_scales[MAX_SCALES];
} resize_state;

static int find_name(const char *name, const char *const *names, int count)
{
    for (int i = 0; i < count; ++i)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

/* The general kernel's form of mode, coord and nearest_mode (resize_general.h). */
static int general_plan(sb_load_ctx *L, resize_state *s, const char *mode, const char *coord,
                        const char *nearest_mode)
{
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const coords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                         "align_corners", "asymmetric", "tf_crop_and_resize"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    s->general = 1;
    s->kind = find_name(mode, modes, 3);
    s->coord = find_name(coord, coords, 6);
    s->nearest_mode = find_name(nearest_mode, nearests, 4);
    if (s->kind < 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "mode '%s' is not supported (nearest, linear and "
                            "cubic are)", mode);
    if (s->coord < 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "coordinate_transformation_mode='%s' is not "
                            "supported", coord);
    if (s->kind == 0 && s->nearest_mode < 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "nearest_mode='%s' is not supported", nearest_mode);
    return SB_OK;
}

static int resize_plan(sb_load_ctx *L, resize_state *s, const char *mode, const char *coord,
                       const char *nearest_mode)
{
    if (!strcmp(mode, "linear") && !strcmp(coord, "pytorch_half_pixel")) {
        /* torch's rule, but for an output of length 1 (torch has none): general */
        int status = general_plan(L, s, mode, coord, nearest_mode);
        s->general = 0;
        if (status) return status;
    }
    /* torch's forms keep torch's float32 rules (docs/exact-ops.md); every
     * other form is ONNX's, in float64 (kernels/resize_general.h) */
    if (s->exclude_outside || s->policy || s->antialias) return general_plan(L, s, mode, coord, nearest_mode);
    if (!strcmp(mode, "nearest")) {
        if (!strcmp(coord, "asymmetric") && !strcmp(nearest_mode, "floor")) {
            s->nearest = 1;
            return SB_OK;
        }
        return general_plan(L, s, mode, coord, nearest_mode);
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
        return general_plan(L, s, mode, coord, nearest_mode);
    }
    return general_plan(L, s, mode, coord, nearest_mode);
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
    s->cubic_a = (double)sb_attr_float(L, "cubic_coeff_a", -0.75f);
    s->extrapolation = sb_attr_float(L, "extrapolation_value", 0.0f);   /* tf_crop_and_resize only */
    if (L->status) return L->status;
    s->exclude_outside = sb_attr_int(L, "exclude_outside", 0) != 0;
    if (L->status) return L->status;
    s->antialias = sb_attr_int(L, "antialias", 0) != 0;
    if (L->status) return L->status;
    if (s->antialias && strcmp(mode, "linear") && strcmp(mode, "cubic"))
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "antialias=1 with mode '%s': ONNX defines antialiasing for "
                            "the linear and cubic modes only", mode);
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
        s->n_axes = (int)n;
        for (size_t i = 0; i < n; ++i) s->axis_of[i] = (int)(((axes[i] % 4) + 4) % 4);
    }
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
    const char *policy = sb_attr_str(L, "keep_aspect_ratio_policy", "stretch");
    if (L->status) return L->status;
    s->policy = find_name(policy, policies, 3);
    if (s->policy < 0)
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

/* The output and the general kernel's arguments (kernels/resize_general.h):
 * sizes give s = O / L (one s for both axes under a keep_aspect_ratio_policy,
 * O = floor(s * L + 0.5)), scales give s and O = floor(s * L). */
static int general_geometry(const sb_node *node, const resize_state *s, const sb_tval *x, int has_sizes,
                            const int64_t *sizes, size_t nz, const double *scales, size_t ns,
                            sb_resize_general_args *g, sb_vinfo *out)
{
    const int64_t *xd = x->info.dims;
    char t1[512], t2[256];
    if (xd[2] < 1 || xd[3] < 1)
        return nfail(node, SB_ERR_VALUE, "the input height and width must be at least 1, got %lld x "
                     "%lld", (long long)xd[2], (long long)xd[3]);
    double sh, sw;
    int64_t oh, ow;
    if (has_sizes) {
        if (nz != 4 || sizes[0] != xd[0] || sizes[1] != xd[1])
            return nfail(node, SB_ERR_VALUE, "sizes %s must keep N and C of %s",
                         sb_py_list_text(sizes, nz, t1, sizeof t1), shape_text(&x->info, t2, sizeof t2));
        if (sizes[2] < 1 || sizes[3] < 1 || sizes[2] > LIMIT || sizes[3] > LIMIT)
            return nfail(node, SB_ERR_VALUE, "sizes %s must be between 1 and 2**40",
                         sb_py_list_text(sizes, nz, t1, sizeof t1));
        sh = (double)sizes[2] / (double)xd[2], sw = (double)sizes[3] / (double)xd[3];
        oh = sizes[2], ow = sizes[3];
        if (s->policy) {
            /* one scale over the policy's axes (`axes`, else all four): their
             * smallest (not_larger) or largest (not_smaller) size ratio */
            int on[4] = {s->n_axes == 0, s->n_axes == 0, s->n_axes == 0, s->n_axes == 0};
            for (int i = 0; i < s->n_axes; ++i) on[s->axis_of[i]] = 1;
            double one = 0;
            int first = 1;
            for (int d = 0; d < 4; ++d) {
                if (!on[d]) continue;
                double r = (double)sizes[d] / (double)xd[d];
                if (first || (s->policy == 1 ? r < one : r > one)) one = r;
                first = 0;
            }
            int64_t z[4];
            for (int d = 0; d < 4; ++d) z[d] = on[d] ? (int64_t)(one * (double)xd[d] + 0.5) : xd[d];
            if (z[0] != xd[0] || z[1] != xd[1])
                return nfail(node, SB_ERR_UNSUPPORTED, "keep_aspect_ratio_policy would resize N or C "
                             "(to %lld x %lld); only H and W are resized (give axes [2, 3])",
                             (long long)z[0], (long long)z[1]);
            sh = sw = one;
            oh = z[2], ow = z[3];
            if (oh < 1 || ow < 1)
                return nfail(node, SB_ERR_VALUE, "keep_aspect_ratio_policy gives an empty output");
        }
    } else {
        if (ns != 4 || scales[0] != 1.0 || scales[1] != 1.0)
            return nfail(node, SB_ERR_VALUE, "scales %s must be 4 values starting 1, 1",
                         floats_text(scales, ns, t1, sizeof t1));
        sh = scales[2], sw = scales[3];
        if (!(sh > 0 && sw > 0 && isfinite(sh) && isfinite(sw)))
            return nfail(node, SB_ERR_VALUE, "scales %s must be positive and finite",
                         floats_text(scales, ns, t1, sizeof t1));
        double fh = floor((double)xd[2] * sh), fw = floor((double)xd[3] * sw);
        if (fh < 1 || fw < 1 || fh > (double)LIMIT || fw > (double)LIMIT)
            return nfail(node, SB_ERR_VALUE, "scales %s give an output of %.0f x %.0f (1 to 2**40 "
                         "are supported)", floats_text(scales, ns, t1, sizeof t1), fh, fw);
        oh = (int64_t)fh, ow = (int64_t)fw;
    }
    int64_t y4[4] = {xd[0], xd[1], oh, ow};
    int status = check_elements(node, "Resize", y4, 4);
    if (status) return status;
    out->dtype = SB_DT_FLOAT;
    out->rank = 4;
    memcpy(out->dims, y4, sizeof y4);
    if (g) {
        memset(g, 0, sizeof *g);
        g->planes = xd[0] * xd[1], g->h = xd[2], g->w = xd[3], g->oh = oh, g->ow = ow;
        g->scale_h = sh, g->scale_w = sw;
        g->kind = s->kind, g->coord = s->coord, g->nearest = s->nearest_mode < 0 ? 0 : s->nearest_mode;
        g->exclude_outside = s->exclude_outside, g->cubic_a = s->cubic_a, g->antialias = s->antialias;
        g->roi_h[0] = g->roi_w[0] = 0.0, g->roi_h[1] = g->roi_w[1] = 1.0;
        g->extrapolation = s->extrapolation;
    }
    return SB_OK;
}

/* tf_crop_and_resize's roi (input 1): [starts..., ends...] over the four
 * axes, or over `axes`; N and C must be [0, 1] (they are not resized). */
static int read_roi(sb_infer_ctx *I, const sb_node *node, const resize_state *s, const sb_tval *const *in,
                    int n_in, double *roi_h, double *roi_w)
{
    const sb_tval *r = n_in > 1 ? in[1] : NULL;
    roi_h[0] = roi_w[0] = 0.0, roi_h[1] = roi_w[1] = 1.0;
    if (!r || !sb_vinfo_numel(&r->info)) return SB_OK;
    double v[MAX_SCALES + 2];
    size_t n;
    int status = read_scales(I, r, v, &n);   /* (float32 values, like scales) */
    if (status) return status;
    double start[4] = {0, 0, 0, 0}, end[4] = {1, 1, 1, 1};
    if (s->n_axes && n == 2 * (size_t)s->n_axes) {
        for (int i = 0; i < s->n_axes; ++i) start[s->axis_of[i]] = v[i], end[s->axis_of[i]] = v[s->n_axes + i];
    } else if (n == 8) {
        for (int d = 0; d < 4; ++d) start[d] = v[d], end[d] = v[4 + d];
    } else {
        return nfail(node, SB_ERR_VALUE, "roi has %zu values; tf_crop_and_resize needs 2 per axis", n);
    }
    if (start[0] != 0 || start[1] != 0 || end[0] != 1 || end[1] != 1)
        return nfail(node, SB_ERR_UNSUPPORTED, "a roi that crops N or C is not supported");
    roi_h[0] = start[2], roi_h[1] = end[2], roi_w[0] = start[3], roi_w[1] = end[3];
    return SB_OK;
}

static int resize_geometry(sb_infer_ctx *I, const sb_node *node, const resize_state *s,
                           const sb_tval *const *in, int n_in, sb_resize2d_args *a,
                           sb_resize_general_args *g, sb_vinfo *out)
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
        if (s->n_axes && ((has_sizes && (int)nz == s->n_axes) || (has_scales && (int)ns == s->n_axes)) &&
            x->info.rank == 4) {
            /* given per `axes` entry (axes [3, 2] give W first): to N, C, H, W */
            int64_t fz[4];
            double fs[4];
            for (int d = 0; d < 4; ++d) fz[d] = x->info.dims[d], fs[d] = 1.0;
            for (int i = 0; i < s->n_axes; ++i) {
                if (has_sizes) fz[s->axis_of[i]] = sizes[i];
                else fs[s->axis_of[i]] = scales[i];
            }
            if (has_sizes) memcpy(sizes, fz, sizeof fz), nz = 4;
            else memcpy(scales, fs, sizeof fs), ns = 4;
        }
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
    int to_one = 0;   /* pytorch_half_pixel to an output of length 1: ONNX's -0.5 rule */
    if (s->pytorch_half_pixel && has_sizes && nz == 4) to_one = sizes[2] == 1 || sizes[3] == 1;
    if (s->pytorch_half_pixel && !has_sizes && ns == 4)
        to_one = floor((double)xd[2] * scales[2]) == 1.0 || floor((double)xd[3] * scales[3]) == 1.0;
    if (g) g->planes = -1;   /* the torch kernel, unless set below */
    if (s->general || to_one) {
        status = general_geometry(node, s, x, has_sizes, sizes, nz, scales, ns, g, out);
        if (status || s->coord != SB_RC_TF_CROP_AND_RESIZE) return status;
        double rh[2], rw[2];
        if ((status = read_roi(I, node, s, in, n_in, rh, rw))) return status;
        if (g) memcpy(g->roi_h, rh, sizeof rh), memcpy(g->roi_w, rw, sizeof rw);
        return SB_OK;
    }
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
    sb_resize_general_args g;
    status = resize_geometry(I, I->node, I->state, I->in, I->n_in, NULL, &g, &I->out[0]);
    if (!status && g.planes >= 0) I->workspace = (int64_t)sb_resize_general_scratch(&g);
    return status;
}

static int resize_run(sb_run_ctx *R)
{
    sb_infer_ctx I;
    sb_vinfo outs[1];
    sb_infer_from_run(R, &I, outs);
    sb_resize2d_args a;
    sb_resize_general_args g;
    sb_vinfo out;
    int status = resize_geometry(&I, R->node, R->state, R->in, R->n_in, &a, &g, &out);
    if (status == SB_NEEDS_VALUES)
        return sb_run_fail(R, SB_ERR_VALUE, "the output shapes cannot be inferred");
    if (status) return status;
    if (g.planes >= 0) {
        g.x = R->in[0]->data, g.y = R->out[0]->data, g.max_threads = R->threads;
        status = sb_resize_general(&g, R->workspace);
        return status ? sb_run_fail(R, status, "resize failed (status %d)", status) : SB_OK;
    }
    a.x = (int64_t)(intptr_t)R->in[0]->data, a.y = (int64_t)(intptr_t)R->out[0]->data;
    a.max_threads = R->threads;
    status = sb_resize2d(&a);
    return status ? sb_run_fail(R, status, "interpolate failed (status %d)", status) : SB_OK;
}

const sb_op_def sb_op_Resize = {
    .name = "Resize", .load = resize_load, .infer = resize_infer, .run = resize_run};
const sb_op_def sb_op_Upsample = {
    .name = "Upsample", .load = upsample_load, .infer = resize_infer, .run = resize_run};
