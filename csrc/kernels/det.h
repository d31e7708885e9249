/* The determinant of square float32 matrices (ONNX Det, docs/onnx.md),
 * callable without a graph: Gaussian elimination with partial pivoting in
 * binary64. For column k = 0 .. n-1: the pivot row is the first row i >= k
 * of largest |a[i][k]|; swapping it up flips the sign; a zero pivot makes
 * the determinant 0 (+0, the sign's); each row below gets
 * a[i][j] = a[i][j] - (a[i][k] / a[k][k]) * a[k][j] for j > k (the factor
 * rounded, then the product, then the difference). The determinant is
 * sign * a[0][0] * a[1][1] * ... (multiplied in order), rounded once to
 * float32; any NaN in the matrix gives the canonical NaN. */
#ifndef SB_KERNELS_DET_H
#define SB_KERNELS_DET_H

#include <stdint.h>

/* count matrices of n x n at x (dense); scratch n * n doubles. */
void sb_det(const float *x, int64_t count, int64_t n, double *scratch, float *y);

#endif
