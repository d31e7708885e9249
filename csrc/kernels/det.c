/* The determinant (det.h): Gaussian elimination in binary64. */
#include <math.h>
#include "kernels/det.h"
#include "math/arith.h"

static float det_one(const float *x, int64_t n, double *a)
{
    int nan = 0;
    for (int64_t i = 0; i < n * n; ++i) a[i] = (double)x[i], nan |= x[i] != x[i];
    if (nan) return sbt_float(SB_CANONICAL_NAN_BITS);
    double sign = 1.0;
    for (int64_t k = 0; k < n; ++k) {
        int64_t p = k;
        for (int64_t i = k + 1; i < n; ++i)
            if (fabs(a[i * n + k]) > fabs(a[p * n + k])) p = i;
        if (a[p * n + k] == 0.0) return (float)(sign * 0.0);
        if (p != k) {
            for (int64_t j = 0; j < n; ++j) {
                double t = a[k * n + j];
                a[k * n + j] = a[p * n + j], a[p * n + j] = t;
            }
            sign = -sign;
        }
        for (int64_t i = k + 1; i < n; ++i) {
            double f = a[i * n + k] / a[k * n + k];
            for (int64_t j = k + 1; j < n; ++j) a[i * n + j] = a[i * n + j] - f * a[k * n + j];
        }
    }
    double d = sign;
    for (int64_t k = 0; k < n; ++k) d = d * a[k * n + k];
    return sbt_canonical((float)d);
}

void sb_det(const float *x, int64_t count, int64_t n, double *scratch, float *y)
{
    for (int64_t m = 0; m < count; ++m) y[m] = n == 0 ? 1.0f : det_one(x + m * n * n, n, scratch);
}
