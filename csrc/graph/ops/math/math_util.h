/* ONNX operators: elementwise arithmetic and functions. float32 tensors go
 * through samebits' kernels (docs/exact-ops.md); integer tensors are
 * computed here exactly, wrapping like their type, as C computes them.
 *
 * This header: the helpers the family's files (graph/ops/math/) share,
 * static inline. */
#ifndef SB_GRAPH_OPS_MATH_MATH_UTIL_H
#define SB_GRAPH_OPS_MATH_MATH_UTIL_H

#include <string.h>
#include "math/arith.h"
#include "framework/fpenv.h"
#include "graph/kcall.h"
#include "graph/op.h"
#include "isa/unary.h"

/* ---- integer arithmetic ------------------------------------------------------- */

enum { IOP_ADD, IOP_SUB, IOP_MUL, IOP_DIV, IOP_POW, IOP_MAX, IOP_MIN };

/* One integer operation in 64-bit two's complement (the caller wraps to the
 * type); signedness decides division, comparisons and powers. 0 on a
 * division by zero. */
static inline int int_op(int op, int is_signed, int64_t a, int64_t b, int64_t *out)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case IOP_ADD: *out = (int64_t)(ua + ub); return 1;
    case IOP_SUB: *out = (int64_t)(ua - ub); return 1;
    case IOP_MUL: *out = (int64_t)(ua * ub); return 1;
    case IOP_DIV:
        if (b == 0) return 0;
        if (!is_signed) { *out = (int64_t)(ua / ub); return 1; }
        if (a == INT64_MIN && b == -1) { *out = INT64_MIN; return 1; }   /* wraps */
        *out = a / b;   /* C truncates toward zero, as ONNX's integer Div */
        return 1;
    case IOP_POW: {
        if (is_signed && b < 0) {
            *out = a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
            return 1;
        }
        uint64_t r = 1, p = ua, e = ub;
        while (e) {
            if (e & 1) r *= p;
            p *= p;
            e >>= 1;
        }
        *out = (int64_t)r;
        return 1;
    }
    case IOP_MAX: *out = is_signed ? (a > b ? a : b) : (ua > ub ? a : b); return 1;
    case IOP_MIN: *out = is_signed ? (a < b ? a : b) : (ua < ub ? a : b); return 1;
    }
    return 0;
}

/* y = op(a, b) over integer tensors with broadcasting; y has a's type. */
static inline int int_binary(sb_run_ctx *R, int op, const sb_tval *a, const sb_tval *b, sb_tval *y)
{
    int64_t n = sb_vinfo_numel(&y->info);
    int64_t sa[SB_MAX_RANK], sbs[SB_MAX_RANK], idx[SB_MAX_RANK] = {0};
    sb_broadcast_strides(&a->info, &y->info, sa);
    sb_broadcast_strides(&b->info, &y->info, sbs);
    int rank = y->info.rank, is_signed = sb_dtype_is_signed(a->info.dtype);
    int64_t oa = 0, ob = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t r;
        if (!int_op(op, is_signed, sb_int_at(a, oa), sb_int_at(b, ob), &r))
            return sb_run_fail(R, SB_ERR_VALUE, "integer division by zero");
        sb_int_store(y->data, y->info.dtype, i, r);
        for (int d = rank - 1; d >= 0; --d) {
            oa += sa[d], ob += sbs[d];
            if (++idx[d] < y->info.dims[d]) break;
            oa -= sa[d] * y->info.dims[d], ob -= sbs[d] * y->info.dims[d];
            idx[d] = 0;
        }
    }
    return SB_OK;
}

/* ---- helpers ------------------------------------------------------------------- */

#define CANONICAL_NAN 0x7FC00000u
#define FLT_MAX_F 3.40282346638528859811704183484516925e+38f

/* A 0-d float32 tensor over one value (a kernel's scalar operand). */
static inline sb_tval scalar_tval(float *v)
{
    sb_tval t;
    memset(&t, 0, sizeof t);
    t.info.dtype = SB_DT_FLOAT;
    t.data = v;
    return t;
}

/* A walk over a broadcast output in C order with the element offsets of up
 * to three operands (0 strides where they repeat). */
typedef struct {
    int rank, count;
    int64_t dims[SB_MAX_RANK], st[3][SB_MAX_RANK], idx[SB_MAX_RANK], off[3];
} bwalk;

static inline void bwalk_init(bwalk *w, const sb_vinfo *out, const sb_tval *const *ops, int count)
{
    memset(w, 0, sizeof *w);
    w->rank = out->rank, w->count = count;
    memcpy(w->dims, out->dims, sizeof w->dims);
    for (int o = 0; o < count; ++o) sb_broadcast_strides(&ops[o]->info, out, w->st[o]);
}

static inline void bwalk_next(bwalk *w)
{
    for (int d = w->rank - 1; d >= 0; --d) {
        for (int o = 0; o < w->count; ++o) w->off[o] += w->st[o][d];
        if (++w->idx[d] < w->dims[d]) return;
        for (int o = 0; o < w->count; ++o) w->off[o] -= w->st[o][d] * w->dims[d];
        w->idx[d] = 0;
    }
}

/* The broadcast of a and b as output 0, of a's type, written over a when a
 * has the output's shape (elementwise runs read each element first). */
static inline int broadcast_as_first(sb_infer_ctx *I, const sb_tval *a, const sb_tval *b)
{
    const sb_vinfo *shapes[2] = {&a->info, &b->info};
    int status = sb_infer_broadcast(I, shapes, 2, &I->out[0]);
    if (status) return status;
    I->out[0].dtype = a->info.dtype;
    if (sb_vinfo_same_shape(&a->info, &I->out[0])) I->inplace = 0;
    return SB_OK;
}

static inline float float_at(const sb_tval *t, int64_t i)
{
    float f;
    memcpy(&f, (const uint8_t *)t->data + 4 * i, 4);
    return f;
}

/* Two integer values (64-bit patterns of their types; `sa`/`sb`: the type is
 * signed) compared as the mathematical integers they are: -1, 0 or 1. */
static inline int int_cmp(int64_t a, int sa, int64_t b, int sb)
{
    int na = sa && a < 0, nb = sb && b < 0;
    if (na != nb) return na ? -1 : 1;
    if (na) return a < b ? -1 : a > b;
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    return ua < ub ? -1 : ua > ub;
}

/* float32 y = op(a, b) on a 0-d scalar a (b a tensor). */
static inline int k_scalar_binary(const sb_run_ctx *R, int op, float a, const sb_tval *b, sb_tval *y)
{
    sb_tval t = scalar_tval(&a);
    return sb_k_binary(R, op, &t, b, y);
}

/* |x| as maximum(x, x * -1): the sign bit cleared, NaN canonical. y must not be x. */
static inline int k_float_abs(const sb_run_ctx *R, const sb_tval *x, sb_tval *y)
{
    int status = sb_k_binary_scalar(R, SB_BIN_MUL, x, -1.0f, y);
    if (status) return status;
    return sb_k_binary(R, SB_BIN_MAXIMUM, x, y, y);
}

/* floor / ceil / round-half-even of a float32 by its bits (exact, free of the
 * floating-point environment): integers, infinities and zeros unchanged, a
 * zero result keeping the input's sign, NaN canonical. */
enum { RND_FLOOR, RND_CEIL, RND_ROUND };

static inline uint32_t round_bits(int kind, uint32_t u)
{
    uint32_t sign = u & 0x80000000u, mag = u & 0x7FFFFFFFu;
    if (mag > 0x7F800000u) return CANONICAL_NAN;
    if (mag == 0) return u;
    int e = (int)(mag >> 23);
    if (e >= 150) return u;                 /* |x| >= 2^23 (or inf): already an integer */
    if (e < 127) {                          /* 0 < |x| < 1 */
        int up;
        if (kind == RND_FLOOR) up = sign != 0;
        else if (kind == RND_CEIL) up = sign == 0;
        else up = e == 126 && (mag & 0x7FFFFFu);   /* above one half */
        return sign | (up ? 0x3F800000u : 0u);
    }
    int f = 150 - e;                        /* fractional bits: 1 to 23 */
    uint32_t unit = 1u << f, mask = unit - 1, frac = mag & mask, trunc = mag & ~mask;
    if (!frac) return u;
    int up;
    if (kind == RND_FLOOR) up = sign != 0;
    else if (kind == RND_CEIL) up = sign == 0;
    else {
        uint32_t half = unit >> 1;
        up = frac > half || (frac == half && ((mag >> f) & 1u));
    }
    return sign | (up ? trunc + unit : trunc);   /* a carry moves into the exponent */
}

#endif
