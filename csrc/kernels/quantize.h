/* Linear quantization and dequantization (ONNX QuantizeLinear and
 * DequantizeLinear; docs/onnx.md), callable without a graph. x is viewed as
 * (outer, axis, inner); element (o, a, i) uses scale and zero point number
 * (o % so) * sa * si + (a / block) * si + (i % si): per tensor so = sa = si = 1
 * and block = axis; per axis sa = axis, block = 1; blocked so = outer,
 * sa = ceil(axis / block), si = inner. */
#ifndef SB_KERNELS_QUANTIZE_H
#define SB_KERNELS_QUANTIZE_H

#include <stdint.h>

enum { SB_Q_INT8, SB_Q_UINT8, SB_Q_INT16, SB_Q_UINT16, SB_Q_INT32 };

typedef struct {
    int64_t outer, axis, inner, block;
    int64_t so, sa, si;
    const float *scale;
    const void *zero_point;        /* of the integer type, or null (0) */
    int kind;                      /* SB_Q_*: the integer type */
} sb_quant_view;

/* y = float32(float32(x) - float32(zero_point)) * scale, each step rounded
 * once (exact for 8- and 16-bit types but for the product). */
void sb_dequantize(const sb_quant_view *v, const void *x, float *y);

/* y = saturate(round_half_even(x / scale) + zero_point) to the type's range;
 * NaN gives the zero point. */
void sb_quantize(const sb_quant_view *v, const float *x, void *y);

#endif
