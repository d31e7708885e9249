/* Rotary position embedding (ONNX RotaryEmbedding, docs/onnx.md), callable
 * without a graph. For each row of head_size values the first rotary_dim
 * are rotated in pairs (x1, x2): the two halves, or with `interleaved` the
 * even and odd elements, against that row's cos and sin (rotary_dim / 2
 * values each):
 *   real = cos * x1 - sin * x2,  imag = sin * x1 + cos * x2
 * each product and the difference or sum rounded to float32 (no fused
 * multiply-add), written where x1 and x2 were; the other values are copied. */
#ifndef SB_KERNELS_ROTARY_H
#define SB_KERNELS_ROTARY_H

#include <stdint.h>

/* One row: x and y head_size values (y may be x). */
void sb_rotary_row(const float *x, float *y, int64_t head_size, int64_t rotary_dim, int interleaved,
                   const float *cos_row, const float *sin_row);

#endif
