/* 3-D convolution (ONNX Conv over three spatial axes; docs/convolution.md),
 * callable without a graph: docs/convolution.md's definition with a depth
 * axis before the height, in both modes. For output (n, oc, oz, oy, ox):
 *   acc = +0; for c in the group's channels, then kz, ky, kx in order:
 *     v = x[n, g*C/groups + c, iz, iy, ix] inside the input, else +0
 *     acc = acc + w[oc, c, kz, ky, kx] * v     (product and sum each rounded)
 * with i = o*stride + k*dilation - pad_begin per axis; a NaN sum stored as
 * 0x7FC00000. The sums only: the bias and activation are sb_epilogue's
 * (framework/epilogue.h). */
#ifndef SB_KERNELS_CONV3D_H
#define SB_KERNELS_CONV3D_H

#include <stdint.h>

typedef struct {
    int64_t n, c, cout, groups;
    int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad_begin[3];
} sb_conv3d_args;

/* y (n, cout, out...) = the sums; w (cout, c / groups, kernel...). */
void sb_conv3d_sums(const sb_conv3d_args *a, const float *x, const float *w, float *y);

#endif
