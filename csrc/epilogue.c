/* The epilogue of a finished output tile: bias, activation, canonical NaN.
 *
 * Each step is its own rounded operation after the sum, so exact mode stays a
 * function of the inputs alone; every NaN is then stored as 0x7FC00000, in
 * fast mode too (see epilogue.h). The activations pass NaN through
 * (a comparison with NaN is false), so a NaN sum is never hidden as 0 or 6. */
#include "samebits.h"
#include "epilogue.h"

static int is_nan_bits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

static void add_bias(float *row, size_t cols, float bias)
{
    for (size_t j = 0; j < cols; ++j) row[j] = row[j] + bias;
}

static void add_column_bias(float *row, size_t cols, const float *bias)
{
    for (size_t j = 0; j < cols; ++j) row[j] = row[j] + bias[j];
}

static void relu(float *row, size_t cols)
{
    for (size_t j = 0; j < cols; ++j) row[j] = row[j] < 0.0f ? 0.0f : row[j];
}

static void relu6(float *row, size_t cols)
{
    for (size_t j = 0; j < cols; ++j) {
        float v = row[j] < 0.0f ? 0.0f : row[j];
        row[j] = v > 6.0f ? 6.0f : v;
    }
}

static void canonicalize_nans(float *row, size_t cols)
{
    uint32_t *bits = (uint32_t *)(void *)row;
    /* A select, not a conditional store, so that the loop vectorises. */
    for (size_t j = 0; j < cols; ++j)
        bits[j] = is_nan_bits(bits[j]) ? 0x7fc00000u : bits[j];
}

void sb_epilogue(float *c, ptrdiff_t ldc, size_t rows, size_t cols, const float *row_bias,
                 const float *col_bias, int activation)
{
    if (!row_bias && !col_bias && activation == SB_ACT_NONE) return;
    for (size_t i = 0; i < rows; ++i) {
        float *row = c + (ptrdiff_t)i * ldc;
        if (row_bias) add_bias(row, cols, row_bias[i]);
        else if (col_bias) add_column_bias(row, cols, col_bias);
        if (activation == SB_ACT_RELU) relu(row, cols);
        else if (activation == SB_ACT_RELU6) relu6(row, cols);
        canonicalize_nans(row, cols);
    }
}
