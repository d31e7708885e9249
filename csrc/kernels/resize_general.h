/* ONNX Resize in the forms torch's interpolate has no rule for (docs/onnx.md,
 * "Resize"), callable without a graph: nearest with every
 * coordinate_transformation_mode and nearest_mode, linear and cubic with
 * every coordinate mode, exclude_outside, over the last two axes of
 * (planes, h, w) float32.
 *
 * Per axis (input length L, output length O, scale s, all float64): the
 * source coordinate x of output o (half_pixel (o + 0.5) / s - 0.5;
 * half_pixel_symmetric that plus (L / 2) * (1 - O / (s * L)) first;
 * pytorch_half_pixel -0.5 when s * L == 1; align_corners o * (L - 1) /
 * (s * L - 1), 0 when s * L == 1; asymmetric o / s; tf_crop_and_resize
 * start * (L - 1) + o * (end - start) * (L - 1) / (O - 1), for O = 1
 * 0.5 * (start + end) * (L - 1), with the axis's roi start and end, and an
 * output whose x lies outside [0, L - 1] on either axis is
 * extrapolation_value); k = floor(x) and
 * r = x - k, except k = x - 1 and r = 1 where x is an integer; taps k, k+1
 * (nearest, linear) or k-1 .. k+2 (cubic), each clamped into [0, L).
 * Nearest picks tap k+1 where r > 0.5 (round_prefer_floor), r >= 0.5
 * (round_prefer_ceil), always (ceil), r == 1 (floor), else tap k. Linear
 * weighs the taps 1 - r and r; cubic with ONNX's polynomials of A. With
 * exclude_outside, taps outside [0, L) weigh 0 and the rest are divided by
 * their sum. With antialias (linear and cubic), the filter is stretched by
 * 1 / min(s, 1) (onnx.reference's): taps k + f .. k - f + 1 with
 * f = floor(-support / min(s, 1)) + 1 (support 1 linear, 2 cubic), tap
 * k + f + i weighing clip(1 - |(f + i - r) * min(s, 1)|, 0, 1) (linear) or
 * the cubic kernel of A at min(s, 1) * (f + i - r) (|t| <= 1:
 * (A + 2)|t|^3 - (A + 3)|t|^2 + 1; |t| < 2: A|t|^3 - 5A|t|^2 + 8A|t| - 4A;
 * else 0), each divided by their sum from the first (exclude_outside then
 * as above). An axis whose O is L and s is 1 (within 1e-9) is left as it is
 * (with tf_crop_and_resize, when its roi is also [0, 1]).
 * The value: the H pass, then the W pass, each the taps' weighted sum from
 * the first tap on in float64 (no fused multiply-add); rounded to float32
 * once; NaN as 0x7FC00000. */
#ifndef SB_KERNELS_RESIZE_GENERAL_H
#define SB_KERNELS_RESIZE_GENERAL_H

#include <stddef.h>
#include <stdint.h>

enum sb_resize_coord {
    SB_RC_HALF_PIXEL = 0, SB_RC_HALF_PIXEL_SYMMETRIC, SB_RC_PYTORCH_HALF_PIXEL, SB_RC_ALIGN_CORNERS,
    SB_RC_ASYMMETRIC, SB_RC_TF_CROP_AND_RESIZE,
};
enum sb_resize_nearest { SB_RN_ROUND_PREFER_FLOOR = 0, SB_RN_ROUND_PREFER_CEIL, SB_RN_FLOOR, SB_RN_CEIL };
enum sb_resize_kind { SB_RK_NEAREST = 0, SB_RK_LINEAR, SB_RK_CUBIC };

typedef struct {
    int64_t planes, h, w, oh, ow;
    double scale_h, scale_w;     /* output per input length */
    int kind, coord, nearest, exclude_outside;
    int antialias;               /* linear and cubic only */
    double cubic_a;
    double roi_h[2], roi_w[2];   /* tf_crop_and_resize: each axis's start and end */
    float extrapolation;         /* tf_crop_and_resize: outside the input */
    const float *x;
    float *y;
    int64_t max_threads;
} sb_resize_general_args;

/* Taps per output along an axis of scale s; -1 for a scale too small. */
int64_t sb_resize_general_taps(const sb_resize_general_args *a, double s);
/* Bytes of scratch sb_resize_general needs (0: the arguments do not fit). */
size_t sb_resize_general_scratch(const sb_resize_general_args *a);
/* SB_OK or SB_ERR_ARGUMENT. */
int sb_resize_general(const sb_resize_general_args *a, void *scratch);

#endif
