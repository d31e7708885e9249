/* The epilogue of a finished output tile: bias, activation, canonical NaN,
 * for the callers that hold no ISA (isa/epilogue_template.h; the products run
 * their path's instantiation, sb_gemm_config.epilogue).
 *
 * Each step is its own rounded operation after the sum, so exact mode stays a
 * function of the inputs alone; every NaN is then stored as 0x7FC00000, in
 * fast mode too (see epilogue.h). The activations pass NaN through
 * (a comparison with NaN is false), so a NaN sum is never hidden as 0 or 6. */
#include "samebits.h"
#include "framework/epilogue.h"
#include "isa/epilogue_template.h"

EPILOGUE_DEFINE(sb_epilogue_ops_run)

void sb_epilogue(float *c, ptrdiff_t ldc, size_t rows, size_t cols, const float *row_bias,
                 const float *col_bias, int64_t activation)
{
    const sb_epilogue_ops e = {.row_bias = row_bias, .col_bias = col_bias,
                               .activation = activation};
    sb_epilogue_ops_run(c, ldc, rows, cols, &e);
}

int sb_activation_valid(int64_t activation)
{
    uint64_t a = (uint64_t)activation;
    uint64_t code = a & 0xffu;
    if (code >= SB_ACT_COUNT || (a & 0xffffff00u) != 0) return 0;
    return code == SB_ACT_LEAKY_RELU || code == SB_ACT_HARDSIGMOID_ONNX || (a >> 32) == 0;
}
