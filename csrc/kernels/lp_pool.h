/* Lp pooling (ONNX LpPool and GlobalLpPool; docs/onnx.md), callable without
 * a graph: over each window's taps inside the input, in row-major order,
 * s = +0 then s = s + t with t = |x| (p = 1), x * x (p = 2) or pow(|x|, p);
 * then y = s (p = 1), sqrt(s) (p = 2) or pow(s, float32(1 / p)), with the
 * exact pow of math/arith.h. Padding taps add nothing. */
#ifndef SB_KERNELS_LP_POOL_H
#define SB_KERNELS_LP_POOL_H

#include <stdint.h>
#include "math/arith.h"

typedef struct {
    int64_t n, c, h, w, oh, ow;
    int64_t kh, kw, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int64_t p;
} sb_lp_pool_args;

void sb_lp_pool2d(const sb_lp_pool_args *a, const float *x, float *y);

/* One tap's term and a window's result (shared with kernels/pool_nd.c). */
static inline float sb_lp_term(float v, int64_t p)
{
    float a = __builtin_fabsf(v);
    return p == 1 ? a : p == 2 ? v * v : sb_bin_pow(a, (float)p);
}

static inline float sb_lp_finish(float s, int64_t p)
{
    float out = p == 1 ? s : p == 2 ? __builtin_sqrtf(s) : sb_bin_pow(s, 1.0f / (float)p);
    return sbt_canonical(out);
}

#endif
