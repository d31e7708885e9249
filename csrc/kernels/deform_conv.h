/* Deformable convolution over two spatial axes (ONNX DeformConv, torchvision's
 * deform_conv2d; docs/onnx.md), callable without a graph. Float32, every
 * step rounded, no fused multiply-add:
 *
 *   X (N, C, H, W), weight (M, C / group, kh, kw), offset
 *   (N, offset_group * kh * kw * 2, OH, OW), mask (N, offset_group * kh * kw,
 *   OH, OW) or none, bias (M) or none; Y (N, M, OH, OW).
 *
 *   For input channel c (offset group g = c / (C / offset_group)), tap (i, j)
 *   and output (oy, ox): t = g * kh * kw + i * kw + j, the sampling point
 *     p = float(oy * stride_h - pad_h + i * dilation_h) + offset[n, 2t, oy, ox]
 *     q = float(ox * stride_w - pad_w + j * dilation_w) + offset[n, 2t + 1, oy, ox]
 *   and its value v: 0 when p <= -1, p >= H, q <= -1 or q >= W; NaN when p
 *   or q is NaN; else, with h0 = floor(p), w0 = floor(q), lh = p - h0,
 *   lw = q - w0, hh = 1 - lh, hw = 1 - lw, and the four pixels v1 = X[h0, w0],
 *   v2 = X[h0, w0 + 1], v3 = X[h0 + 1, w0], v4 = X[h0 + 1, w0 + 1] (0 where
 *   outside the image),
 *     v = hh*hw * v1 + hh*lw * v2 + lh*hw * v3 + lh*lw * v4   (left to right),
 *   then v * mask[n, t, oy, ox] when there is a mask.
 *   Y[n, m, oy, ox]: from +0, for each input channel c of m's group, each i,
 *   each j in increasing order, + weight[m, c - first, i, j] * v (two
 *   roundings); then + bias[m].
 *
 * The samples of one image (C * kh * kw * OH * OW floats) are computed into
 * scratch first, then the sums: each output is computed the same way
 * whichever thread runs it. */
#ifndef SB_KERNELS_DEFORM_CONV_H
#define SB_KERNELS_DEFORM_CONV_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t n, c, h, w;                 /* X */
    int64_t m, group, offset_group;
    int64_t kh, kw, oh, ow;
    int64_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
    const float *x, *weight, *offset;
    const float *mask, *bias;           /* null when absent */
    float *y;
    float *scratch;                     /* sb_deform_conv_scratch_floats(a) */
    int64_t max_threads;
} sb_deform_conv_args;

/* The scratch the call needs, in floats: one image's samples. */
uint64_t sb_deform_conv_scratch_floats(const sb_deform_conv_args *a);

/* SB_OK, or SB_ERR_ARGUMENT for arguments that do not fit together. */
int sb_deform_conv(const sb_deform_conv_args *a);

#endif
