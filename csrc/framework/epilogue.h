/* The epilogue of finished outputs (epilogue.c): bias, activation, canonical
 * NaN, each its own rounded operation after the sum. */
#ifndef SB_EPILOGUE_H
#define SB_EPILOGUE_H

#include <stddef.h>
#include <stdint.h>
#include "isa/kernels.h"

/* To rows x cols outputs at c (row stride ldc), in this order:
 * + row_bias[i] on row i, or + col_bias[j] on column j (one rounded add;
 * skipped when null; at most one of them is given), the activation
 * (enum sb_activation), then every NaN made canonical (0x7FC00000), in both
 * modes (a NaN bias brings its own payload). Without bias and activation
 * there is nothing to do: the kernels store NaN canonical themselves
 * (ukernel_template.h). */
void sb_epilogue(float *c, ptrdiff_t ldc, size_t rows, size_t cols, const float *row_bias,
                 const float *col_bias, int64_t activation);

/* The whole epilogue (sb_epilogue_ops, isa/kernels.h: a convolution's fused
 * BatchNormalization and residual too), e's pointers at c's first row and
 * column. */
void sb_epilogue_ops_run(float *c, ptrdiff_t ldc, size_t rows, size_t cols,
                         const sb_epilogue_ops *e);

/* Whether an sb_matmul / sb_conv2d `activation` argument is valid (see
 * enum sb_activation in samebits.h). */
int sb_activation_valid(int64_t activation);

#endif
