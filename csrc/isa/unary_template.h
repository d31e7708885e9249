/* The elementwise kernels of one path, written once: each csrc/unary_<isa>.c
 * includes this under its path's compiler flags. Every element is computed by
 * the scalar text of transcendental.h; a vector path's compiler runs several
 * elements side by side, one per lane, with the same operations, so every
 * path gives the same bits. The scalar path is built with vectorization off.
 * The exceptions, avx512's and avx2's Erf and Gelu (SB_PATH_ERF_N below),
 * write the same operations with intrinsics, checked against the scalar text
 * for all 2^32 inputs (bench/exhaustive_identical.py).
 *
 * Fast mode has its own exp, sigmoid, tanh, log and erf (fast_math.h:
 * float32, fused where the path fuses); its activations are the exact ones. */
#ifndef SB_UNARY_TEMPLATE_H
#define SB_UNARY_TEMPLATE_H

#include <stddef.h>
#include "math/activation.h"
#include "math/arith.h"
#include "math/fast_math.h"
#include "math/trig.h"
#include "math/exp_route.h"
#include "math/log_route.h"
#include "isa/isa.h"

/* y[i] = F(x[i]) for i < n, where y may be x. In place, a loop over y
 * alone: clang's vectorizer guards a loop over two pointers with a run-time
 * test that their ranges do not overlap, and y == x fails it, so in place
 * such a loop ran scalar (in the WebAssembly modules, every in-place
 * elementwise node of the graph runtime and softmax's exp: 2^20 fast exps
 * under V8 1.9 ms out of place, 4.3 ms in place). GCC's test lets equal
 * pointers through. */
#define UNARY_EACH(F, x, y, n)                                                            \
    do {                                                                                  \
        if ((const float *)(y) == (x))                                                    \
            for (size_t i_ = 0; i_ < (n); ++i_) (y)[i_] = F((y)[i_]);                     \
        else                                                                              \
            for (size_t i_ = 0; i_ < (n); ++i_) (y)[i_] = F((x)[i_]);                     \
    } while (0)

/* A path may give Erf and Gelu its own code of the same operations
 * (isa/avx512/erf_avx512.h, isa/avx2/erf_avx2.h: the scalar text's table
 * lookup vectorizes badly);
 * by default they run the scalar text a lane per element. Likewise exp's and
 * sigmoid's fast route (math/exp_route.h; isa/avx512/exp_route_avx512.h),
 * and log's (math/log_route.h), which the avx512 and scalar paths take: on
 * vec4 and avx2 its table lookups, lane by lane, made it slower than the
 * recipe (10^6 values, 1 thread: vec4 4.5 -> 5.6-5.9 ms, avx2 2.0 -> 2.1). */
#ifndef SB_PATH_ERF_N
#define SB_PATH_ERF_N(x, y, n) UNARY_EACH(sb_exact_erf, x, y, n)
#endif
#ifndef SB_PATH_EXP_N
#define SB_PATH_EXP_N(x, y, n) sb_exact_exp_n(x, y, n)
#endif
#ifndef SB_PATH_SIGMOID_N
#define SB_PATH_SIGMOID_N(x, y, n) sb_exact_sigmoid_n(x, y, n)
#endif
#ifndef SB_PATH_LOG_N
#define SB_PATH_LOG_N(x, y, n) UNARY_EACH(sb_exact_log, x, y, n)
#endif
#ifndef SB_PATH_GELU_N
#define SB_PATH_GELU_N(x, y, n) UNARY_EACH(sb_act_gelu, x, y, n)
#endif

/* y may be x itself (in place); it never partly overlaps x. */
#define UNARY_LOOP(fn)                                                                    \
    UNARY_EACH(fn, x, y, n);                                                              \
    break;
#define UNARY_LEAKY_RELU(v) sb_act_leaky_relu((v), param)
#define UNARY_HARDSIGMOID_ONNX(v) sb_act_hardsigmoid_onnx((v), param, 0.5f)
#define UNARY_ELU(v) sb_act_elu((v), param)

/* One row of a binary operation (sb_binary_row_fn), the common stride
 * pairs written out so that the compiler vectorizes them; y may be a or b
 * (in place), and then the loop names y alone, as UNARY_EACH does. */
#define BINARY_ROW_LOOP(fn)                                                                  \
    if (sa == 1 && sb == 1) {                                                                \
        if (y == a && y == b) for (size_t j = 0; j < n; ++j) y[j] = fn(y[j], y[j]);          \
        else if (y == a) for (size_t j = 0; j < n; ++j) y[j] = fn(y[j], b[j]);               \
        else if (y == b) for (size_t j = 0; j < n; ++j) y[j] = fn(a[j], y[j]);               \
        else for (size_t j = 0; j < n; ++j) y[j] = fn(a[j], b[j]);                           \
    } else if (sa == 1 && sb == 0) { float bv = b[0];                                        \
        if (y == a) for (size_t j = 0; j < n; ++j) y[j] = fn(y[j], bv);                      \
        else for (size_t j = 0; j < n; ++j) y[j] = fn(a[j], bv); }                           \
    else if (sa == 0 && sb == 1) { float av = a[0];                                          \
        if (y == b) for (size_t j = 0; j < n; ++j) y[j] = fn(av, y[j]);                      \
        else for (size_t j = 0; j < n; ++j) y[j] = fn(av, b[j]); }                           \
    else for (size_t j = 0; j < n; ++j) y[j] = fn(a[(ptrdiff_t)j * sa], b[(ptrdiff_t)j * sb]); \
    break;

/* Pow's row: an exponent shared by the row (sb == 0, a[] contiguous) takes
 * only the step of pow it needs (arith.h: the same bits as sb_bin_pow): an
 * integer of magnitude below 2^24 sb_bin_pow_integer, whose rounds are a
 * compile-time count for the common small exponents so that the loop
 * vectorizes, any other sb_bin_pow_noninteger. */
#define POW_INTEGER_ROW(BITS)                                                                \
    if (y == a) for (size_t j = 0; j < n; ++j) y[j] = sb_bin_pow_integer(y[j], bv, nv, BITS); \
    else for (size_t j = 0; j < n; ++j) y[j] = sb_bin_pow_integer(a[j], bv, nv, BITS);       \
    break;
#define POW_ROW_LOOP                                                                         \
    if (sa == 1 && sb == 0) {                                                                \
        const float bv = b[0];                                                               \
        const int bits = sb_pow_integer_bits(bv);                                            \
        const uint32_t nv =                                                                  \
            bits > 0 ? (uint32_t)(int32_t)sbt_float(sbt_bits32(bv) & 0x7fffffffu) : 0u;     \
        switch (bits) {                                                                      \
        case -1:                                                                             \
            if (y == a) for (size_t j = 0; j < n; ++j) y[j] = sb_bin_pow_noninteger(y[j], bv); \
            else for (size_t j = 0; j < n; ++j) y[j] = sb_bin_pow_noninteger(a[j], bv);      \
            break;                                                                           \
        case 0: POW_INTEGER_ROW(0)                                                           \
        case 1: POW_INTEGER_ROW(1)                                                           \
        case 2: POW_INTEGER_ROW(2)                                                           \
        case 3: POW_INTEGER_ROW(3)                                                           \
        case 4: POW_INTEGER_ROW(4)                                                           \
        default: POW_INTEGER_ROW(bits)                                                       \
        }                                                                                    \
        break;                                                                               \
    }                                                                                        \
    BINARY_ROW_LOOP(sb_bin_pow)

/* Fast softmax's rows, where the path has its own (SB_PATH_SOFTMAX_ROW_FAST:
 * isa/avx512/softmax_row_avx512.h); null otherwise, and kernels/reduce.c
 * runs its generic passes. */
#if defined(SB_PATH_SOFTMAX_ROW_FAST)
#define UNARY_SOFTMAX_ROW(isa)                                                             \
    static void sb_softmax_row_##isa##_fast(const float *x, float *y, size_t n)            \
    {                                                                                      \
        SB_PATH_SOFTMAX_ROW_FAST(x, y, n);                                                 \
    }
#define UNARY_SOFTMAX_ROW_ENTRY(isa) .softmax_row_fast = sb_softmax_row_##isa##_fast,
#else
#define UNARY_SOFTMAX_ROW(isa)
#define UNARY_SOFTMAX_ROW_ENTRY(isa)
#endif

/* Serial row sums (sb_unary_config.row_sums): the path's own
 * (SB_PATH_ROW_SUMS: register transposes, isa/avx512/row_sums_avx512.h and
 * its twins), else this loop, where the rows advance together and each
 * row's adds keep their order. */
#if !defined(SB_PATH_ROW_SUMS)
static inline void sb_row_sums_serial(const float *x, size_t rows, size_t n, const float *mean,
                                      float *acc)
{
    for (size_t r = 0; r < rows; ++r) acc[r] = 0.0f;
    if (mean) {
        for (size_t j = 0; j < n; ++j)
            for (size_t r = 0; r < rows; ++r) {
                const float d = x[r * n + j] - mean[r];
                acc[r] = acc[r] + d * d;
            }
    } else {
        for (size_t j = 0; j < n; ++j)
            for (size_t r = 0; r < rows; ++r) acc[r] = acc[r] + x[r * n + j];
    }
}
#define SB_PATH_ROW_SUMS sb_row_sums_serial
#endif
#define UNARY_ROW_SUMS(isa)                                                                \
    static void sb_row_sums_##isa(const float *x, size_t rows, size_t n, const float *mean, \
                                  float *acc)                                              \
    {                                                                                      \
        SB_PATH_ROW_SUMS(x, rows, n, mean, acc);                                           \
    }
#define UNARY_ROW_SUMS_ENTRY(isa) .row_sums = sb_row_sums_##isa,

#define UNARY_DEFINE(isa)                                                                  \
    void sb_unary_##isa##_exact(int op, float param, const float *x, float *y, size_t n)   \
    {                                                                                      \
        switch (op) {                                                                      \
        case SB_OP_EXP: SB_PATH_EXP_N(x, y, n); break;                                     \
        case SB_OP_LOG: SB_PATH_LOG_N(x, y, n); break;                                     \
        case SB_OP_TANH: UNARY_LOOP(sb_exact_tanh)                                         \
        case SB_OP_ERF: SB_PATH_ERF_N(x, y, n); break;                                     \
        case SB_OP_SIGMOID: SB_PATH_SIGMOID_N(x, y, n); break;                             \
        case SB_OP_RELU: UNARY_LOOP(sb_act_relu)                                           \
        case SB_OP_RELU6: UNARY_LOOP(sb_act_relu6)                                         \
        case SB_OP_LEAKY_RELU: UNARY_LOOP(UNARY_LEAKY_RELU)                                \
        case SB_OP_GELU: SB_PATH_GELU_N(x, y, n); break;                                   \
        case SB_OP_GELU_TANH: UNARY_LOOP(sb_act_gelu_tanh)                                 \
        case SB_OP_SILU: UNARY_LOOP(sb_act_silu)                                           \
        case SB_OP_HARDSWISH: UNARY_LOOP(sb_act_hardswish)                                 \
        case SB_OP_HARDSIGMOID: UNARY_LOOP(sb_act_hardsigmoid)                             \
        case SB_OP_SQRT: UNARY_LOOP(sb_exact_sqrt)                                         \
        case SB_OP_HARDSWISH_ONNX: UNARY_LOOP(sb_act_hardswish_onnx)                       \
        case SB_OP_HARDSIGMOID_ONNX: UNARY_LOOP(UNARY_HARDSIGMOID_ONNX)                    \
        case SB_OP_ELU: UNARY_LOOP(UNARY_ELU)                                              \
        case SB_OP_SOFTPLUS: UNARY_LOOP(sb_act_softplus)                                   \
        case SB_OP_MISH: UNARY_LOOP(sb_act_mish)                                           \
        case SB_OP_SIN: sb_exact_sin_n(x, y, n); break;                                    \
        case SB_OP_COS: sb_exact_cos_n(x, y, n); break;                                    \
        default: break;                                                                    \
        }                                                                                  \
    }                                                                                      \
    void sb_unary_##isa##_fast(int op, float param, const float *x, float *y, size_t n)    \
    {                                                                                      \
        switch (op) {                                                                      \
        case SB_OP_EXP: UNARY_LOOP(sb_fast_exp)                                            \
        case SB_OP_SIGMOID: UNARY_LOOP(sb_fast_sigmoid)                                    \
        case SB_OP_TANH: UNARY_LOOP(sb_fast_tanh)                                          \
        case SB_OP_LOG: UNARY_LOOP(sb_fast_log)                                            \
        case SB_OP_ERF: UNARY_LOOP(sb_fast_erf)                                            \
        default: sb_unary_##isa##_exact(op, param, x, y, n); break;                        \
        }                                                                                  \
    }                                                                                      \
    void sb_binary_row_##isa(int op, const float *a, ptrdiff_t sa, const float *b,          \
                             ptrdiff_t sb, float *y, size_t n)                             \
    {                                                                                      \
        switch (op) {                                                                      \
        case SB_BIN_ADD: BINARY_ROW_LOOP(sb_bin_add)                                       \
        case SB_BIN_SUB: BINARY_ROW_LOOP(sb_bin_sub)                                       \
        case SB_BIN_MUL: BINARY_ROW_LOOP(sb_bin_mul)                                       \
        case SB_BIN_DIV: BINARY_ROW_LOOP(sb_bin_div)                                       \
        case SB_BIN_MAXIMUM: BINARY_ROW_LOOP(sb_bin_maximum)                               \
        case SB_BIN_MINIMUM: BINARY_ROW_LOOP(sb_bin_minimum)                               \
        case SB_BIN_POW: POW_ROW_LOOP                                                      \
        default: break;                                                                    \
        }                                                                                  \
    }                                                                                      \
    UNARY_SOFTMAX_ROW(isa)                                                                 \
    UNARY_ROW_SUMS(isa)                                                                    \
    const sb_unary_config sb_unary_config_##isa = {                                        \
        .exact = sb_unary_##isa##_exact, .fast = sb_unary_##isa##_fast,                    \
        .binary_row = sb_binary_row_##isa, UNARY_SOFTMAX_ROW_ENTRY(isa)                    \
        UNARY_ROW_SUMS_ENTRY(isa)                                                          \
    };

#endif
