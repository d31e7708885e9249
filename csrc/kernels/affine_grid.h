/* AffineGrid (ONNX AffineGrid, torch's affine_grid; docs/onnx.md), callable
 * without a graph, in ONNX's function body's order. Per axis of size S the
 * base coordinates are, with align_corners, start = -1 and step = 2 / (S - 1)
 * (S = 1: the one coordinate -1), else step = 2 / S and start = -1 + step / 2;
 * coordinate j = start + j * step (each operation rounded to float32). A grid
 * point (x, y[, z]) maps, row by row of theta, to
 *   ((((+0 + r0 * x) + r1 * y) + r2 * z) + t * 1)
 * a serial sum from +0 of float32 products: the body's MatMul with the 2-D
 * matrix extended by a zero column (z the depth coordinate of a depth of 1). */
#ifndef SB_KERNELS_AFFINE_GRID_H
#define SB_KERNELS_AFFINE_GRID_H

#include <stdint.h>

/* theta (n, dims, dims + 1); grid (n, [d,] h, w, dims); dims 2 or 3. */
void sb_affine_grid(int dims, int align_corners, int64_t n, int64_t d, int64_t h, int64_t w,
                    const float *theta, float *grid);

#endif
