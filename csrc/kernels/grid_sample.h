/* GridSample of (N, C, H, W) float32 at a grid of (N, Ho, Wo, 2) points, or
 * of (N, C, D, H, W) at (N, Do, Ho, Wo, 3) points (linear and nearest;
 * ONNX GridSample, docs/onnx.md), callable without a graph. Everything is
 * float32, in onnx.reference's order of operations, each step rounded (no
 * fused multiply-add):
 *
 *   a point (gx, gy) to pixel coordinates, per axis of length L:
 *     align_corners: ((g + 1) / 2) * (L - 1), else ((g + 1) * L - 1) / 2;
 *   nearest: each coordinate rounded to nearest, ties to even;
 *   a coordinate outside [-0.5, L - 0.5] ([0, L - 1] with align_corners):
 *     border: clamped to [0, L - 1]; reflection: reflected at those bounds
 *     (d the distance past a bound, k = (int)(d / span), r = d - k * span;
 *     r from that bound when k is even, else from the other);
 *   taps at floor(x) - 1 .. floor(x) + 2 (cubic), floor(x), floor(x) + 1
 *     (linear), or the rounded coordinate (nearest); a tap outside the image
 *     reads 0 (zeros), the nearest pixel (border) or its reflection;
 *   weights of t = x - floor(x): linear 1 - t, t; cubic Keys' with -0.75;
 *   the value: along W for each needed row, then along H (then along D for
 *     a volume, over the H results of each needed depth), each the taps'
 *     weighted sum from the first tap.
 * NaN coordinates read 0 (zeros) or pixel 0. */
#ifndef SB_KERNELS_GRID_SAMPLE_H
#define SB_KERNELS_GRID_SAMPLE_H

#include <stdint.h>

enum { SB_GS_LINEAR = 0, SB_GS_NEAREST = 1, SB_GS_CUBIC = 2 };
enum { SB_GS_ZEROS = 0, SB_GS_BORDER = 1, SB_GS_REFLECTION = 2 };

typedef struct {
    int64_t n, c, h, w, ho, wo;
    int64_t d, dout;             /* a volume's depths (0: a 2-D sample) */
    int mode, padding, align_corners;
    const float *x, *grid;
    float *y;
    int64_t max_threads;
} sb_grid_sample_args;

int sb_grid_sample(const sb_grid_sample_args *a);

#endif
