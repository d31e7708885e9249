/* ONNX Pad (docs/onnx.md): constant, reflect, edge and wrap modes. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "math/arith.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/ops/shape/shape_util.h"

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct {
    int opset, mode;
    const char *mode_name;
    ints_attr pads;              /* before opset 11 */
    float value;                 /* before opset 11 */
} pad_state;

static int pad_load(sb_load_ctx *L)
{
    pad_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->opset = L->opset;
    const char *mode = sb_attr_str(L, "mode", "constant");
    if (L->status) return L->status;
    static const char *const names[] = {"constant", "reflect", "edge", "wrap"};
    int count = L->opset >= 19 ? 4 : 3;
    s->mode = -1;
    for (int k = 0; k < count; ++k)
        if (strcmp(mode, names[k]) == 0) s->mode = k;
    if (s->mode < 0)
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "mode '%s' is not supported (%s are)", mode,
                            count == 4 ? "constant, reflect, edge, wrap" : "constant, reflect, edge");
    s->mode_name = names[s->mode];
    if (L->opset < 11) {
        if (read_ints_attr(L, "pads", 1, &s->pads)) return L->status;
        s->value = sb_attr_float(L, "value", 0.0f);
    }
    return L->status;
}

/* Pads before and after every dimension of x. */
static int pad_amounts(sb_infer_ctx *I, const sb_tval *x, int64_t *before, int64_t *after)
{
    const pad_state *s = I->state;
    int r = x->info.rank, status;
    int64_t pads[LIST_CAP];
    size_t np = 0, na = (size_t)r;
    int axes[LIST_CAP];
    for (int d = 0; d < r; ++d) axes[d] = d;
    if (s->opset < 11) {
        np = s->pads.n;
        memcpy(pads, s->pads.v, np * sizeof *pads);
    } else {
        if ((status = int_list(I, 1, "pads", pads, LIST_CAP, &np))) return status;
        if (I->n_in > 2 && I->in[2] && sb_vinfo_numel(&I->in[2]->info) == 0)
            return sb_infer_fail(I, SB_ERR_INDEX, "list index out of range");
        if (I->n_in > 3 && I->in[3]) {
            int64_t ax[LIST_CAP];
            if ((status = int_list(I, 3, "axes", ax, LIST_CAP, &na))) return status;
            if ((status = norm_axes(I, ax, na, r, "axes", axes))) return status;
        }
    }
    if (np != 2 * na) {
        char b[600];
        return sb_infer_fail(I, SB_ERR_VALUE, "pads %s do not match %zu axes",
                             sb_py_list_text(pads, np, b, sizeof b), na);
    }
    for (int d = 0; d < r; ++d) before[d] = after[d] = 0;
    for (size_t k = 0; k < na; ++k) {
        if (axes[k] >= r) return sb_infer_fail(I, SB_ERR_INDEX, "list assignment index out of range");
        before[axes[k]] = pads[k], after[axes[k]] = pads[k + na];
    }
    const int64_t limit = (int64_t)1 << 61;
    for (int d = 0; d < r; ++d)
        if (before[d] < -limit || before[d] > limit || after[d] < -limit || after[d] > limit) {
            char b[600];
            return sb_infer_fail(I, SB_ERR_VALUE, "pads %s are too large",
                                 sb_py_list_text(pads, np, b, sizeof b));
        }
    /* the messages Python's runner gives, in its order */
    char sh[256], b[600];
    int crop = 0;
    for (int d = 0; d < r; ++d) crop |= x->info.dims[d] + before[d] + after[d] < 0;
    if (s->mode != PAD_CONSTANT) {
        if (crop)
            return sb_infer_fail(I, SB_ERR_VALUE, "pads crop %s below zero",
                                 shape_str(&x->info, sh, sizeof sh));
        for (int d = 0; d < r; ++d)
            if (x->info.dims[d] == 0 && (before[d] > 0 || after[d] > 0))
                return sb_infer_fail(I, SB_ERR_VALUE, "mode '%s' cannot pad an empty axis of %s",
                                     s->mode_name, shape_str(&x->info, sh, sizeof sh));
    } else if (x->info.dtype != SB_DT_FLOAT) {
        for (int d = 0; d < r; ++d)
            if (before[d] < 0 || after[d] < 0)
                return sb_infer_fail(I, SB_ERR_VALUE, "negative pads on integer tensors are not "
                                     "supported");
    } else if (crop) {
        return sb_infer_fail(I, SB_ERR_VALUE, "pads %s crop %s below zero",
                             sb_py_list_text(pads, np, b, sizeof b), shape_str(&x->info, sh, sizeof sh));
    }
    return SB_OK;
}

static int pad_infer(sb_infer_ctx *I)
{
    const pad_state *s = I->state;
    const sb_tval *x = sb_infer_input(I, 0, "data");
    if (!x) return SB_ERR_VALUE;
    int64_t before[SB_MAX_RANK], after[SB_MAX_RANK];
    int status = pad_amounts(I, x, before, after);
    if (status) return status;
    sb_vinfo *y = &I->out[0];
    *y = x->info;
    int64_t columns = 0;
    for (int d = 0; d < x->info.rank; ++d) {
        y->dims[d] = x->info.dims[d] + before[d] + after[d];
        if (y->dims[d] > SB_MAX_ELEMENTS)
            return sb_infer_fail(I, SB_ERR_VALUE, "the output is too large");
        columns += y->dims[d];
    }
    if (s->mode != PAD_CONSTANT && sb_vinfo_numel(y) > 0) I->workspace = columns * 8;
    return SB_OK;
}

/* The input index that output index o copies along one axis (reflect, edge, wrap). */
static int64_t pad_source(int64_t o, int64_t before, int64_t size, int mode)
{
    int64_t s = o - before;
    if (s >= 0 && s < size) return s;
    if (mode == PAD_EDGE) return s < 0 ? 0 : size - 1;
    if (mode == PAD_WRAP) {
        int64_t m = s % size;
        return m < 0 ? m + size : m;
    }
    if (size == 1) return 0;   /* reflect: a single element mirrors onto itself */
    int64_t period = 2 * (size - 1);
    s %= period;
    if (s < 0) s += period;
    return s < size ? s : period - s;
}

static int pad_by_index(sb_run_ctx *R, const sb_tval *x, const int64_t *before, sb_tval *y)
{
    const pad_state *s = R->state;
    int r = y->info.rank, esize = sb_dtype_size(y->info.dtype);
    int64_t total = sb_vinfo_numel(&y->info);
    if (total == 0) return SB_OK;
    if (r == 0) {
        memcpy(y->data, x->data, (size_t)esize);
        return SB_OK;
    }
    int64_t own[SB_MAX_RANK], *cols[SB_MAX_RANK];
    sb_c_strides(&x->info, own);
    int64_t *at = R->workspace;
    for (int d = 0; d < r; ++d) {
        cols[d] = at;
        for (int64_t o = 0; o < y->info.dims[d]; ++o)
            cols[d][o] = pad_source(o, before[d], x->info.dims[d], s->mode) * own[d];
        at += y->info.dims[d];
    }
    int64_t idx[SB_MAX_RANK] = {0}, width = y->info.dims[r - 1], rows = total / width;
    const int64_t *last = cols[r - 1];
    const uint8_t *src = x->data;
    uint8_t *dst = y->data;
    for (int64_t row = 0; row < rows; ++row) {
        int64_t base = 0;
        for (int d = 0; d < r - 1; ++d) base += cols[d][idx[d]];
        switch (esize) {
        case 1:
            for (int64_t k = 0; k < width; ++k) dst[k] = src[base + last[k]];
            break;
        case 2:
            for (int64_t k = 0; k < width; ++k)
                ((uint16_t *)dst)[k] = ((const uint16_t *)src)[base + last[k]];
            break;
        case 4:
            for (int64_t k = 0; k < width; ++k)
                ((uint32_t *)dst)[k] = ((const uint32_t *)src)[base + last[k]];
            break;
        default:
            for (int64_t k = 0; k < width; ++k)
                ((uint64_t *)dst)[k] = ((const uint64_t *)src)[base + last[k]];
            break;
        }
        dst += width * esize;
        for (int d = r - 2; d >= 0; --d) {
            if (++idx[d] < y->info.dims[d]) break;
            idx[d] = 0;
        }
    }
    return SB_OK;
}

/* A float32 pad value as Python's runner passes it on (through a binary64:
 * a signaling NaN comes out quiet). */
static uint32_t pad_float_bits(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu)) bits |= 0x00400000u;
    return bits;
}

static int pad_run(sb_run_ctx *R)
{
    const pad_state *s = R->state;
    const sb_tval *x = R->in[0];
    sb_tval *y = R->out[0];
    sb_infer_ctx I;
    sb_vinfo outs[16];
    sb_infer_from_run(R, &I, outs);
    int64_t before[SB_MAX_RANK], after[SB_MAX_RANK];
    int status = pad_amounts(&I, x, before, after);
    if (status) return status;
    if (s->mode != PAD_CONSTANT) return pad_by_index(R, x, before, y);
    /* the value: a float (the attribute, a float32 input) or an integer input's */
    int is_int = 0;
    float fv = s->opset < 11 ? s->value : 0.0f;
    int64_t iv = 0;
    uint64_t uv = 0;
    int is_u64 = 0;
    const sb_tval *c = s->opset >= 11 && R->n_in > 2 ? R->in[2] : NULL;
    if (c) {
        if (c->info.dtype == SB_DT_FLOAT) fv = *(const float *)c->data;
        else is_int = 1, iv = sb_int_at(c, 0), uv = sb_int_at_u(c, 0),
             is_u64 = c->info.dtype == SB_DT_UINT64;
    }
    int esize = sb_dtype_size(y->info.dtype);
    uint8_t fill[8];
    if (y->info.dtype == SB_DT_FLOAT) {
        uint32_t bits;
        if (is_int) {
            volatile double wide = is_u64 ? (double)uv : (double)iv;
            float f = (float)wide;
            memcpy(&bits, &f, 4);
        } else {
            bits = pad_float_bits(fv);
        }
        memcpy(fill, &bits, 4);
    } else {
        int64_t v = iv;
        if (!is_int) {   /* Python's int() of the float */
            if (isnan(fv)) return sb_run_fail(R, SB_ERR_VALUE, "cannot convert float NaN to integer");
            if (isinf(fv))
                return sb_run_fail(R, SB_ERR_VALUE, "cannot convert float infinity to integer");
            double t = trunc((double)fv);
            if (fabs(t) < 9223372036854775808.0) v = (int64_t)t;
            else {   /* its low 64 bits */
                double m = fmod(t, 18446744073709551616.0);
                if (m < 0) m += 18446744073709551616.0;
                v = (int64_t)(uint64_t)m;
            }
        }
        sb_int_store(fill, y->info.dtype, 0, v);
    }
    int64_t total = sb_vinfo_numel(&y->info);
    if (total == 0) return SB_OK;
    sb_k_fill(y->data, total, esize, fill);
    /* the kept part of x: where it lands and which of its elements */
    int r = x->info.rank;
    int64_t own[SB_MAX_RANK], ys[SB_MAX_RANK], inner[SB_MAX_RANK], src = 0, dst = 0;
    sb_c_strides(&x->info, own);
    sb_c_strides(&y->info, ys);
    for (int d = 0; d < r; ++d) {
        int64_t lo = before[d] < 0 ? -before[d] : 0;
        int64_t hi = x->info.dims[d] - (after[d] < 0 ? -after[d] : 0);
        inner[d] = hi > lo ? hi - lo : 0;
        src += lo * own[d];
        dst += (before[d] > 0 ? before[d] : 0) * ys[d];
    }
    if (sb_vinfo_numel(&x->info) == 0) return SB_OK;
    status = copy_any(R->threads, r, inner, esize, (const uint8_t *)x->data + src * esize, own,
                      (uint8_t *)y->data + dst * esize, ys);
    return status ? sb_run_fail(R, status, "the copy failed") : SB_OK;
}

const sb_op_def sb_op_Pad = {.name = "Pad", .load = pad_load, .infer = pad_infer, .run = pad_run};
