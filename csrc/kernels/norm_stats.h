/* Normalization statistics. The statistics of layer normalization as exact mode's layer_norm defines
 * them (docs/exact-ops.md, "Reductions"), for the ONNX outputs Mean and
 * InvStdDev: per row of n values, mean = serial sum / float32(n), var =
 * serial sum of (x - mean)^2 / float32(n), rstd = 1 / sqrt(var + eps). */
#ifndef SB_KERNELS_NORM_STATS_H
#define SB_KERNELS_NORM_STATS_H

#include <stdint.h>

/* mean and rstd (either may be null): rows values each. */
void sb_layer_norm_stats(const float *x, int64_t rows, int64_t n, float eps, float *mean, float *rstd);

/* LpNormalization over the middle axis of x viewed as (outer, n, inner):
 * per line, s = the serial float32 sum of |x_j| (p = 1) or of x_j * x_j
 * (p = 2, then s = sqrt(s)); y_j = x_j / s, or +0 where s is 0. */
void sb_lp_normalize(const float *x, int64_t outer, int64_t n, int64_t inner, int p, float *y);

#endif
