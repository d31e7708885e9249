/* Linear quantization and dequantization (quantize.h). */
#include <string.h>
#include "kernels/quantize.h"
#include "math/activation.h"

static int64_t read_int(const void *p, int kind, int64_t i)
{
    switch (kind) {
    case SB_Q_INT8: return ((const int8_t *)p)[i];
    case SB_Q_UINT8: return ((const uint8_t *)p)[i];
    case SB_Q_INT16: return ((const int16_t *)p)[i];
    case SB_Q_UINT16: return ((const uint16_t *)p)[i];
    default: return ((const int32_t *)p)[i];
    }
}

static void write_int(void *p, int kind, int64_t i, int64_t v)
{
    switch (kind) {
    case SB_Q_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case SB_Q_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case SB_Q_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case SB_Q_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    default: ((int32_t *)p)[i] = (int32_t)v; break;
    }
}

static void type_range(int kind, double *lo, double *hi)
{
    static const double los[] = {-128, 0, -32768, 0, -2147483648.0};
    static const double his[] = {127, 255, 32767, 65535, 2147483647.0};
    *lo = los[kind], *hi = his[kind];
}

/* Round half to even of a float32 value, whatever its size: adding and
 * subtracting 2^23 leaves the nearest integer (ties to even) in binary32. */
static float round_half_even(float v)
{
    float a = __builtin_fabsf(v);
    if (!(a < 8388608.0f)) return v;   /* already an integer, or inf or NaN */
    volatile float t = a + 8388608.0f;
    float r = t - 8388608.0f;
    return __builtin_copysignf(r, v);
}

static int64_t param_index(const sb_quant_view *v, int64_t o, int64_t a, int64_t i)
{
    return (o % v->so) * v->sa * v->si + (a / v->block) * v->si + (i % v->si);
}

void sb_dequantize(const sb_quant_view *v, const void *x, float *y)
{
    int64_t at = 0;
    for (int64_t o = 0; o < v->outer; ++o)
        for (int64_t a = 0; a < v->axis; ++a)
            for (int64_t i = 0; i < v->inner; ++i, ++at) {
                int64_t k = param_index(v, o, a, i);
                float zp = v->zero_point ? (float)read_int(v->zero_point, v->kind, k) : 0.0f;
                volatile float d = (float)read_int(x, v->kind, at) - zp;
                y[at] = sbt_canonical(d * v->scale[k]);
            }
}

void sb_quantize(const sb_quant_view *v, const float *x, void *y)
{
    double lo, hi;
    type_range(v->kind, &lo, &hi);
    int64_t at = 0;
    for (int64_t o = 0; o < v->outer; ++o)
        for (int64_t a = 0; a < v->axis; ++a)
            for (int64_t i = 0; i < v->inner; ++i, ++at) {
                int64_t k = param_index(v, o, a, i);
                int64_t zp = v->zero_point ? read_int(v->zero_point, v->kind, k) : 0;
                volatile float q = x[at] / v->scale[k];
                float r = round_half_even(q);
                double t = r != r ? (double)zp : (double)r + (double)zp;
                t = t < lo ? lo : t > hi ? hi : t;
                write_int(y, v->kind, at, (int64_t)t);
            }
}
