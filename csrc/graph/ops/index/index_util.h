/* ONNX operators: index-driven data movement and selection (GatherElements,
 * GatherND, ScatterElements and opset 9's Scatter, ScatterND, TopK,
 * NonMaxSuppression, OneHot, NonZero, Trilu) and Einsum, as docs/onnx.md
 * defines them.
 *
 * Every output element of the movers is a copy of one input element (its
 * bits: NaN payloads and -0 kept), whatever the element type. TopK and
 * NonMaxSuppression compare values; NonMaxSuppression's overlap is float32
 * arithmetic in the documented order. Einsum permutes its operands
 * (copies) and multiplies them with sb_matmul, as samebits.matmul does.
 *
 * This header: the helpers the family's files (graph/ops/index/) share,
 * static inline. */
#ifndef SB_GRAPH_OPS_INDEX_INDEX_UTIL_H
#define SB_GRAPH_OPS_INDEX_INDEX_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "graph/py_text.h"

/* ---- helpers ------------------------------------------------------------------ */

static inline void copy_elem(void *dst, int64_t di, const void *src, int64_t si, int size)
{
    switch (size) {
    case 1: ((uint8_t *)dst)[di] = ((const uint8_t *)src)[si]; break;
    case 2: ((uint16_t *)dst)[di] = ((const uint16_t *)src)[si]; break;
    case 4: ((uint32_t *)dst)[di] = ((const uint32_t *)src)[si]; break;
    default: ((uint64_t *)dst)[di] = ((const uint64_t *)src)[si]; break;
    }
}

/* Element i of an integer tensor as Python reads it, into text. */
static inline void int_text(const sb_tval *t, int64_t i, char *buf, size_t size)
{
    if (t->info.dtype == SB_DT_UINT64) snprintf(buf, size, "%llu", (unsigned long long)sb_int_at_u(t, i));
    else snprintf(buf, size, "%lld", (long long)sb_int_at(t, i));
}

/* Element i of an integer tensor as an int64: 0 when it is a uint64 beyond
 * int64's range (*v is then INT64_MAX, beyond every dimension). */
static inline int int_value(const sb_tval *t, int64_t i, int64_t *v)
{
    if (t->info.dtype == SB_DT_UINT64) {
        uint64_t u = sb_int_at_u(t, i);
        if (u > (uint64_t)INT64_MAX) { *v = INT64_MAX; return 0; }
        *v = (int64_t)u;
        return 1;
    }
    *v = sb_int_at(t, i);
    return 1;
}

/* An index checked against its dimension, negative ones counted from the
 * end; an SB_ERR_INDEX naming it otherwise. */
static inline int read_index(sb_run_ctx *R, const sb_tval *t, int64_t i, int64_t size, int64_t *out)
{
    int64_t v = 0;
    if (int_value(t, i, &v) && v >= -size && v < size) {
        *out = v < 0 ? v + size : v;
        return SB_OK;
    }
    char text[32];
    int_text(t, i, text, sizeof text);
    return sb_run_fail(R, SB_ERR_INDEX, "index %s is out of range for a dimension of size %lld",
                       text, (long long)size);
}

/* Advances a C-order coordinate over dims, keeping `offset` (sum of
 * coord[d] * strides[d]) in step. */
static inline void odometer(int rank, const int64_t *dims, int64_t *coord, const int64_t *strides,
                     int64_t *offset)
{
    for (int d = rank - 1; d >= 0; --d) {
        *offset += strides[d];
        if (++coord[d] < dims[d]) return;
        *offset -= strides[d] * dims[d];
        coord[d] = 0;
    }
}

/* The value of a one-element integer input (K, k, depth); its size checked. */
static inline int one_value_shape(sb_infer_ctx *I, const sb_tval *t, const char *what)
{
    if (sb_vinfo_numel(&t->info) != 1) {
        char s[256];
        sb_shape_text(&t->info, s, sizeof s);
        return sb_infer_fail(I, SB_ERR_VALUE, "%s must hold one value, got shape %s", what, s);
    }
    return SB_OK;
}

static inline int no_reduction(sb_load_ctx *L)
{
    const char *reduction = sb_attr_str(L, "reduction", "none");
    if (L->status) return L->status;
    if (strcmp(reduction, "none") != 0) {
        char r[256];
        sb_py_cstr_repr(reduction, r, sizeof r);
        return sb_load_fail(L, SB_ERR_UNSUPPORTED, "reduction %s is not supported ('none' is)", r);
    }
    return SB_OK;
}

/* The scatters' `reduction` (opset 16: add, mul; opset 18: max, min). */
enum scatter_reduction { SCATTER_NONE = 0, SCATTER_ADD, SCATTER_MUL, SCATTER_MAX, SCATTER_MIN };

static inline int scatter_reduction_load(sb_load_ctx *L, int *out)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *reduction = sb_attr_str(L, "reduction", "none");
    if (L->status) return L->status;
    for (int k = 0; k < 5; ++k)
        if (strcmp(reduction, names[k]) == 0) {
            *out = k;
            return SB_OK;
        }
    char r[256];
    sb_py_cstr_repr(reduction, r, sizeof r);
    return sb_load_fail(L, SB_ERR_UNSUPPORTED, "reduction %s is not none, add, mul, max or min", r);
}

/* max or min of two float32 values: NaN if either is (the first NaN's
 * bits), +0 above -0 (numpy's maximum and minimum). */
static inline float scatter_extreme(float a, float b, int max)
{
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return (signbit(a) != 0) == (max != 0) ? b : a;
    return (a > b) == (max != 0) ? a : b;
}

/* y[at] = y[at] (reduction) u[i], once, in the order the updates come:
 * float32 rounded once per update; integers wrap (add, mul) or compare
 * with their type's sign (max, min). */
static inline void scatter_combine(void *y, int dtype, int64_t at, const sb_tval *u, int64_t i,
                                   int reduction)
{
    if (dtype == SB_DT_FLOAT) {
        float *d = (float *)y + at, b = ((const float *)u->data)[i];
        switch (reduction) {
        case SCATTER_ADD: *d = *d + b; break;
        case SCATTER_MUL: *d = *d * b; break;
        case SCATTER_MAX: *d = scatter_extreme(*d, b, 1); break;
        default: *d = scatter_extreme(*d, b, 0); break;
        }
        return;
    }
    sb_tval yt = {{0}, y};
    yt.info.dtype = dtype;
    if (reduction == SCATTER_ADD || reduction == SCATTER_MUL) {
        uint64_t a = sb_int_at_u(&yt, at), b = sb_int_at_u(u, i);
        sb_int_store(y, dtype, at, (int64_t)(reduction == SCATTER_ADD ? a + b : a * b));
    } else if (dtype == SB_DT_UINT64) {
        uint64_t a = sb_int_at_u(&yt, at), b = sb_int_at_u(u, i);
        sb_int_store(y, dtype, at, (int64_t)((a > b) == (reduction == SCATTER_MAX) ? a : b));
    } else {
        int64_t a = sb_int_at(&yt, at), b = sb_int_at(u, i);
        sb_int_store(y, dtype, at, (a > b) == (reduction == SCATTER_MAX) ? a : b);
    }
}

typedef struct { int64_t axis; int reduction; } axis_state;

/* Input 0 "data" (any type) and input 1 "indices" (an integer tensor), as
 * the gathers and scatters read them: SB_OK, or the failure infer gives. */
static inline int data_and_indices(sb_infer_ctx *I, const sb_tval **data, const sb_tval **idx)
{
    if (!(*data = sb_infer_input(I, 0, "data"))) return SB_ERR_VALUE;
    if (!(*idx = sb_infer_int(I, 1, "indices"))) return I->n_in > 1 && I->in[1] ? SB_ERR_TYPE : SB_ERR_VALUE;
    return SB_OK;
}

static inline int axis_load(sb_load_ctx *L, int64_t dflt)
{
    axis_state *s = sb_load_state(L, sizeof *s);
    if (!s) return L->status;
    s->axis = sb_attr_int(L, "axis", dflt);
    return L->status;
}

/* data and updates: both float32 or both integer tensors. */
static inline int scatter_types(sb_infer_ctx *I, const sb_tval *data, const sb_tval *upd)
{
    if ((data->info.dtype == SB_DT_FLOAT) != (upd->info.dtype == SB_DT_FLOAT))
        return sb_infer_fail(I, SB_ERR_TYPE, "data and updates must both be float32 or both integers");
    return SB_OK;
}

static inline void copy_data(const sb_tval *x, sb_tval *y)
{
    int64_t bytes = sb_vinfo_bytes(&x->info);
    if (bytes > 0 && x->data != y->data) memcpy(y->data, x->data, (size_t)bytes);
}

#endif
