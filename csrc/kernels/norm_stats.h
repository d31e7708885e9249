/* The statistics of layer normalization as exact mode's layer_norm defines
 * them (docs/exact-ops.md, "Reductions"), for the ONNX outputs Mean and
 * InvStdDev: per row of n values, mean = serial sum / float32(n), var =
 * serial sum of (x - mean)^2 / float32(n), rstd = 1 / sqrt(var + eps). */
#ifndef SB_KERNELS_NORM_STATS_H
#define SB_KERNELS_NORM_STATS_H

#include <stdint.h>

/* mean and rstd (either may be null): rows values each. */
void sb_layer_norm_stats(const float *x, int64_t rows, int64_t n, float eps, float *mean, float *rstd);

#endif
