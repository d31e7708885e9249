/* Max and average pooling over 1 to 3 spatial axes with any padding and
 * dilation (ONNX MaxPool and AveragePool where the 2-D kernels' limits do
 * not fit: 3-D inputs, an AveragePool padding above half its kernel or a
 * dilated AveragePool; docs/onnx.md), callable without a graph. For each
 * output position the taps are the input positions o*stride - pad_begin +
 * j*dilation, j = 0 .. kernel-1 per axis, visited in row-major order; only
 * those inside the input are values.
 *   max: docs/maxpool.md's rule (NaN taps ignored, the first of equal taps
 *        kept, all NaN: the canonical NaN, no tap inside: -FLT_MAX);
 *   avg: s = +0, then s = s + tap for each tap inside, rounded each time,
 *        then one division by the count: with count_include_pad the taps
 *        before input + pad_end, else those inside (0 taps: NaN);
 *   lp:  s = +0, then s = s + term(tap) for each tap inside, then the
 *        result of kernels/lp_pool.h (LpPool's definition over 3 axes).
 * Each plane (batch row and channel) independently: planes [first, last).
 * With `indices` (max only), each output's index: that of the tap kept (the
 * first tap inside when none is kept, -1 with no tap inside), as the flat
 * position in the whole input, row-major (`column_major`: the spatial axes
 * the other way round, the first fastest), padding not counted. */
#ifndef SB_KERNELS_POOL_ND_H
#define SB_KERNELS_POOL_ND_H

#include <stdint.h>

enum { SB_POOL_ND_MAX = 0, SB_POOL_ND_AVG = 1, SB_POOL_ND_LP = 2 };

typedef struct {
    int kind, dims;              /* SB_POOL_ND_*; 1 to 3 spatial axes */
    int64_t p;                   /* lp: the norm's order */
    int count_include_pad;
    int column_major;            /* indices: ONNX MaxPool's storage_order 1 */
    int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad_begin[3], pad_end[3];
} sb_pool_nd_args;

void sb_pool_nd(const sb_pool_nd_args *a, const float *x, float *y, int64_t *indices, int64_t first,
                int64_t last);

#endif
