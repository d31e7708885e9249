/* The epilogue of finished outputs (sb_epilogue_fn, kernels.h), written once
 * in plain C and instantiated per ISA, compiled with that path's flags, so
 * that it runs at the path's vector width while the tile it finishes is still
 * in the first-level cache. framework/epilogue.c instantiates it once more,
 * for the callers that hold no ISA.
 *
 * Per output, in this order: + the row's or the column's bias (one rounded
 * add; none when both are null), a convolution's fused BatchNormalization
 * (((v - mean) * r) * weight + bias, four rounded operations) and residual
 * (one rounded add), the activation (math/activation.h: the element
 * functions the standalone operations use, so a fused activation has their
 * bits), then a NaN made canonical (0x7FC00000). One loop per row does all
 * of them for each element: the same operations on the same values as one
 * pass each, so the fusion and the vector width cannot change a bit; the
 * switch over the activation stays outside the loop, so each loop is a
 * straight sequence the compiler vectorises. */
#ifndef SB_EPILOGUE_TEMPLATE_H
#define SB_EPILOGUE_TEMPLATE_H

#include <stdint.h>
#include <string.h>
#include "samebits.h"
#include "math/activation.h"
#include "math/fast_math.h"
#include "math/exp_route.h"
#include "isa/kernels.h"

/* Exact sigmoid of n floats (y may be x): the kernels' fast route with the
 * recipe's bits (math/exp_route.h); a path may give its own. */
#ifndef SB_EPI_SIGMOID_N
#define SB_EPI_SIGMOID_N(x, y, n) sb_exact_sigmoid_n(x, y, n)
#endif

static inline float epi_canonical(float v)
{
    return v != v ? sbt_float(SB_CANONICAL_NAN_BITS) : v;
}

/* One row's loop over j in [0, cols) of BODY(X) (statements of j, X the
 * element's input, row[j] as it is before the pass), for the cheap
 * activations, where the compiler's own tail (scalar, a branch per NaN
 * test) cost as much as the vector body on rows of 169 (a 13 x 13 map) and
 * about a third of the epilogue's time in SqueezeNet. A row of 16 or more
 * runs in whole blocks of 16, then its last 16 once more from a copy of
 * their inputs taken before the pass: the compiler makes whole vectors of
 * each constant-length loop, and an element done twice gets the same value
 * from the same input both times, so the same bits. Shorter rows, and rows
 * of whole blocks, keep the plain loop (under a test that bounds cols below
 * 16, the compiler unrolled it into scalar code: slower than its own loop
 * with vector tails, in MobileNetV3's channel-lanes convolutions). */
#define EPI_BLOCK_ROW(BODY, ACT)                                                             \
    if (cols < 16 || cols % 16 == 0) {                                                       \
        EPI_PLAIN_ROW(BODY, ACT)                                                             \
    } else {                                                                                 \
        const size_t t0 = cols - 16;                                                         \
        float last[16];                                                                      \
        for (size_t k = 0; k < 16; ++k) last[k] = row[t0 + k];                               \
        for (size_t j0 = 0; j0 + 16 <= cols; j0 += 16)                                       \
            for (size_t j = j0; j < j0 + 16; ++j) { BODY(row[j], ACT) }                      \
        for (size_t j = t0; j < cols; ++j) { BODY(last[j - t0], ACT) }                       \
    }
#define EPI_PLAIN_ROW(BODY, ACT) for (size_t j = 0; j < cols; ++j) { BODY(row[j], ACT) }

/* The rows of one activation, ACT(v) being its element function of v; LOOP
 * is EPI_BLOCK_ROW or EPI_PLAIN_ROW. */
#define EPI_ROWS(ACT) EPI_ROWS_WITH(ACT, EPI_PLAIN_ROW)
#define EPI_ROWS_CHEAP(ACT) EPI_ROWS_WITH(ACT, EPI_BLOCK_ROW)
#define EPI_COL_BIAS(X, ACT) float v = (X) + col_bias[j]; row[j] = epi_canonical(ACT(v));
#define EPI_ROW_BIAS(X, ACT) float v = (X) + bias; row[j] = epi_canonical(ACT(v));
#define EPI_NO_BIAS(X, ACT) float v = (X); row[j] = epi_canonical(ACT(v));
#define EPI_ROWS_WITH(ACT, LOOP)                                                             \
    if (row_affine || residual) EPI_ROWS_FUSED(ACT, LOOP)                                    \
    for (size_t i = 0; i < rows; ++i) {                                                      \
        float *restrict row = c + (ptrdiff_t)i * ldc;                                        \
        if (col_bias) {                                                                      \
            LOOP(EPI_COL_BIAS, ACT)                                                          \
        } else if (row_bias) {                                                               \
            const float bias = row_bias[i];                                                  \
            LOOP(EPI_ROW_BIAS, ACT)                                                          \
        } else {                                                                             \
            LOOP(EPI_NO_BIAS, ACT)                                                           \
        }                                                                                    \
    }                                                                                        \
    return;

/* A convolution's rows with a fused BatchNormalization and/or residual. With
 * no bias the add is of -0, which gives every v back unchanged (-0 + -0 is
 * -0, +0 + -0 is +0, NaN stays NaN), so one loop serves both. */
#define EPI_AFFINE(v, a) ((((v) - (a)[0]) * (a)[1]) * (a)[2] + (a)[3])
#define EPI_AFFINE_RESIDUAL(X, ACT) float v = EPI_AFFINE((X) + bias, aff) + res[j]; row[j] = epi_canonical(ACT(v));
#define EPI_AFFINE_ONLY(X, ACT) float v = EPI_AFFINE((X) + bias, aff); row[j] = epi_canonical(ACT(v));
#define EPI_RESIDUAL(X, ACT) float v = ((X) + bias) + res[j]; row[j] = epi_canonical(ACT(v));
#define EPI_ROWS_FUSED(ACT, LOOP)                                                            \
    {                                                                                        \
        for (size_t i = 0; i < rows; ++i) {                                                  \
            float *restrict row = c + (ptrdiff_t)i * ldc;                                    \
            const float bias = row_bias ? row_bias[i] : -0.0f;                               \
            if (row_affine && residual) {                                                    \
                const float aff[4] = {row_affine[4 * i], row_affine[4 * i + 1],              \
                                      row_affine[4 * i + 2], row_affine[4 * i + 3]};         \
                const float *restrict res = residual + (ptrdiff_t)i * ldc;                   \
                LOOP(EPI_AFFINE_RESIDUAL, ACT)                                               \
            } else if (row_affine) {                                                         \
                const float aff[4] = {row_affine[4 * i], row_affine[4 * i + 1],              \
                                      row_affine[4 * i + 2], row_affine[4 * i + 3]};         \
                LOOP(EPI_AFFINE_ONLY, ACT)                                                   \
            } else {                                                                         \
                const float *restrict res = residual + (ptrdiff_t)i * ldc;                   \
                LOOP(EPI_RESIDUAL, ACT)                                                      \
            }                                                                                \
        }                                                                                    \
        return;                                                                              \
    }

/* Exact sigmoid (swish 0) or ONNX's x * sigmoid(x) (1) of rows whose only
 * step before the activation is a bias (row_bias[i] or col_bias[j]; none:
 * null), a block at a time, so that the route's vector kernel serves the
 * epilogue too. v = canonical(row + bias) as the bias step stores it, then
 * the activation of v: the same bits as the two passes and as the element
 * function (canonical NaN included), in one pass over the row. */
static inline void epi_sigmoid_rows(float *c, ptrdiff_t ldc, size_t rows, size_t cols,
                                    const float *row_bias, const float *col_bias, int swish)
{
    float v[SBT_ROUTE_BLOCK], s[SBT_ROUTE_BLOCK];
    for (size_t i = 0; i < rows; ++i) {
        float *row = c + (ptrdiff_t)i * ldc;
        for (size_t j0 = 0; j0 < cols; j0 += SBT_ROUTE_BLOCK) {
            const size_t m = cols - j0 < SBT_ROUTE_BLOCK ? cols - j0 : SBT_ROUTE_BLOCK;
            const float *x = v;   /* the activation's input: v, or the row as it is */
            if (col_bias)
                for (size_t j = 0; j < m; ++j) v[j] = epi_canonical(row[j0 + j] + col_bias[j0 + j]);
            else if (row_bias)
                for (size_t j = 0; j < m; ++j) v[j] = epi_canonical(row[j0 + j] + row_bias[i]);
            else
                x = row + j0;
            SB_EPI_SIGMOID_N(x, s, m);
            if (swish)
                for (size_t j = 0; j < m; ++j) row[j0 + j] = epi_canonical(x[j] * s[j]);
            else
                for (size_t j = 0; j < m; ++j) row[j0 + j] = s[j];
        }
    }
}

#define EPI_NONE(v) (v)
#define EPI_SWISH_FAST(v) ((v) * sb_fast_sigmoid(v))
#define EPI_LEAKY_RELU(v) sb_act_leaky_relu((v), param)
#define EPI_HARDSIGMOID_ONNX(v) sb_act_hardsigmoid_onnx((v), param, 0.5f)

/* Fast swish over row[j0, j0 + B) with its bias (BIAS: the column's, or the
 * row's, -0 when none: v + -0 is v): a loop of constant length B, which the
 * compiler turns into whole vectors of the path's width or less; rows go
 * 16, then 8, 4 and one at a time, so that a short row's tail (the
 * channel-lanes convolution hands over rows of 7 to 56) is vectors too,
 * where a compiler's scalar tail with its division per element cost as much
 * as the rest of the row. */
#define EPI_SWISH_BLOCK(B, BIAS)                                                             \
    for (size_t j = j0; j < j0 + (B); ++j) {                                                 \
        float v = row[j] + BIAS;                                                             \
        row[j] = epi_canonical(EPI_SWISH_FAST(v));                                           \
    }
#define EPI_SWISH_ROW(BIAS)                                                                  \
    {                                                                                        \
        size_t j0 = 0;                                                                       \
        for (; j0 + 16 <= cols; j0 += 16) EPI_SWISH_BLOCK(16, BIAS)                          \
        if (cols - j0 >= 8) { EPI_SWISH_BLOCK(8, BIAS) j0 += 8; }                            \
        if (cols - j0 >= 4) { EPI_SWISH_BLOCK(4, BIAS) j0 += 4; }                            \
        for (; j0 < cols; ++j0) EPI_SWISH_BLOCK(1, BIAS)                                     \
    }

/* Defines void NAME(c, ldc, rows, cols, e) (sb_epilogue_fn), and
 * NAME_swish_fast, fast mode's x * sigmoid(x) over a row in place: a function
 * of its own, not inlined, since with the path's flags it fuses
 * multiply-adds, which only functions named *_fast may (tests/builds/
 * test_codegen.py). Fast mode's swish runs the steps before the activation
 * first, then this over each row while it is in cache. */
#define EPILOGUE_DEFINE(NAME)                                                                \
    static __attribute__((noinline)) void NAME##_swish_fast(float *row, size_t cols,         \
                                                            const float *row_bias,           \
                                                            const float *col_bias)           \
    {                                                                                        \
        const float bias = row_bias ? *row_bias : -0.0f;                                     \
        if (col_bias)                                                                        \
            EPI_SWISH_ROW(col_bias[j])                                                       \
        else                                                                                 \
            EPI_SWISH_ROW(bias)                                                              \
    }                                                                                        \
    void NAME(float *c, ptrdiff_t ldc, size_t rows, size_t cols, const sb_epilogue_ops *e)  \
    {                                                                                        \
        const float *row_bias = e->row_bias, *col_bias = e->col_bias;                        \
        const float *row_affine = e->row_affine, *residual = e->residual;                    \
        const int code = (int)((uint64_t)e->activation & 0xffu);                             \
        const uint32_t param_bits = (uint32_t)((uint64_t)e->activation >> 32);               \
        float param;                                                                         \
        memcpy(&param, &param_bits, sizeof param);                                           \
        (void)param;                                                                         \
        /* Nothing to do: the kernels store NaN canonical themselves. */                     \
        if (!row_bias && !col_bias && !row_affine && !residual && code == SB_ACT_NONE)       \
            return;                                                                          \
        switch (code) {                                                                      \
        case SB_ACT_NONE: EPI_ROWS_CHEAP(EPI_NONE)                                           \
        case SB_ACT_RELU: EPI_ROWS_CHEAP(sb_act_relu)                                        \
        case SB_ACT_RELU6: EPI_ROWS_CHEAP(sb_act_relu6)                                      \
        case SB_ACT_LEAKY_RELU: EPI_ROWS_CHEAP(EPI_LEAKY_RELU)                               \
        case SB_ACT_GELU: EPI_ROWS(sb_act_gelu)                                              \
        case SB_ACT_GELU_TANH: EPI_ROWS(sb_act_gelu_tanh)                                    \
        case SB_ACT_SILU: EPI_ROWS(sb_act_silu)                                              \
        case SB_ACT_HARDSWISH: EPI_ROWS(sb_act_hardswish)                                    \
        case SB_ACT_HARDSIGMOID: EPI_ROWS(sb_act_hardsigmoid)                                \
        case SB_ACT_SIGMOID:                                                                 \
        case SB_ACT_SWISH_ONNX: {                                                            \
            /* A bias goes in the activation's pass; the fused steps run first */            \
            if (row_affine || residual) {                                                    \
                sb_epilogue_ops before = *e;                                                 \
                before.activation = SB_ACT_NONE;                                             \
                NAME(c, ldc, rows, cols, &before);                                           \
                row_bias = col_bias = NULL;                                                  \
            }                                                                                \
            if (code == SB_ACT_SWISH_ONNX && e->fast)                                        \
                for (size_t i = 0; i < rows; ++i)                                            \
                    NAME##_swish_fast(c + (ptrdiff_t)i * ldc, cols,                          \
                                      row_bias ? row_bias + i : NULL, col_bias);             \
            else                                                                             \
                epi_sigmoid_rows(c, ldc, rows, cols, row_bias, col_bias,                     \
                                 code == SB_ACT_SWISH_ONNX);                                 \
            return;                                                                          \
        }                                                                                    \
        case SB_ACT_TANH: EPI_ROWS(sb_exact_tanh)                                            \
        case SB_ACT_HARDSWISH_ONNX: EPI_ROWS(sb_act_hardswish_onnx)                          \
        case SB_ACT_HARDSIGMOID_ONNX: EPI_ROWS(EPI_HARDSIGMOID_ONNX)                         \
        default: EPI_ROWS(EPI_NONE) /* unreachable: the callers check the code */            \
        }                                                                                    \
    }

#endif
