/* The epilogue of a finished output tile: bias, activation, canonical NaN.
 *
 * Each step is its own rounded operation after the sum, so exact mode stays a
 * function of the inputs alone; every NaN is then stored as 0x7FC00000, in
 * fast mode too (see epilogue.h). The activations pass NaN through
 * (a comparison with NaN is false), so a NaN sum is never hidden as 0 or 6. */
#include <string.h>
#include "samebits.h"
#include "framework/epilogue.h"
#include "math/activation.h"

static int is_nan_bits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

static void add_bias(float *row, size_t cols, float bias)
{
    for (size_t j = 0; j < cols; ++j) row[j] = row[j] + bias;
}

static void add_column_bias(float *row, size_t cols, const float *bias)
{
    for (size_t j = 0; j < cols; ++j) row[j] = row[j] + bias[j];
}

/* The activation of a row: the element functions of activation.h, the
 * ones the standalone operations use. */
#define ACTIVATE(fn) for (size_t j = 0; j < cols; ++j) row[j] = fn(row[j]); break;

static void activate(float *row, size_t cols, int code, float param)
{
    switch (code) {
    case SB_ACT_RELU: ACTIVATE(sb_act_relu)
    case SB_ACT_RELU6: ACTIVATE(sb_act_relu6)
    case SB_ACT_LEAKY_RELU:
        for (size_t j = 0; j < cols; ++j) row[j] = sb_act_leaky_relu(row[j], param);
        break;
    case SB_ACT_GELU: ACTIVATE(sb_act_gelu)
    case SB_ACT_GELU_TANH: ACTIVATE(sb_act_gelu_tanh)
    case SB_ACT_SILU: ACTIVATE(sb_act_silu)
    case SB_ACT_HARDSWISH: ACTIVATE(sb_act_hardswish)
    case SB_ACT_HARDSIGMOID: ACTIVATE(sb_act_hardsigmoid)
    case SB_ACT_SIGMOID: ACTIVATE(sb_exact_sigmoid)
    case SB_ACT_TANH: ACTIVATE(sb_exact_tanh)
    case SB_ACT_HARDSWISH_ONNX: ACTIVATE(sb_act_hardswish_onnx)
    case SB_ACT_HARDSIGMOID_ONNX:
        for (size_t j = 0; j < cols; ++j) row[j] = sb_act_hardsigmoid_onnx(row[j], param, 0.5f);
        break;
    default: break;
    }
}

int sb_activation_valid(int64_t activation)
{
    uint64_t a = (uint64_t)activation;
    uint64_t code = a & 0xffu;
    if (code >= SB_ACT_COUNT || (a & 0xffffff00u) != 0) return 0;
    return code == SB_ACT_LEAKY_RELU || code == SB_ACT_HARDSIGMOID_ONNX || (a >> 32) == 0;
}

static void canonicalize_nans(float *row, size_t cols)
{
    uint32_t *bits = (uint32_t *)(void *)row;
    /* A select, not a conditional store, so that the loop vectorises. */
    for (size_t j = 0; j < cols; ++j)
        bits[j] = is_nan_bits(bits[j]) ? 0x7fc00000u : bits[j];
}

void sb_epilogue(float *c, ptrdiff_t ldc, size_t rows, size_t cols, const float *row_bias,
                 const float *col_bias, int64_t activation)
{
    int code = (int)((uint64_t)activation & 0xffu);
    uint32_t param_bits = (uint32_t)((uint64_t)activation >> 32);
    float param;
    memcpy(&param, &param_bits, sizeof param);
    if (!row_bias && !col_bias && code == SB_ACT_NONE) return;
    for (size_t i = 0; i < rows; ++i) {
        float *row = c + (ptrdiff_t)i * ldc;
        if (row_bias) add_bias(row, cols, row_bias[i]);
        else if (col_bias) add_column_bias(row, cols, col_bias);
        activate(row, cols, code, param);
        canonicalize_nans(row, cols);
    }
}
