/* float32 to an integer type the way Cast defines it (docs/onnx.md): used
 * by Cast and by Pow of an integer base with a float exponent. */
#ifndef SB_GRAPH_FLOAT_TO_INT_H
#define SB_GRAPH_FLOAT_TO_INT_H

#include <math.h>
#include <stdint.h>
#include "graph/tensor.h"

/* A C-style conversion of a float32 value to an integer type (Python's
 * int_of_float): truncation toward zero; NaN, infinities and values beyond
 * the type give its minimum (signed) or 0 (unsigned), except for the 8- and
 * 16-bit types, which wrap a truncated value (one beyond int64 is a
 * multiple of 2^40: 0). bool: x != 0, NaN true. */
static inline void sb_store_float_as_int(void *data, int to, int64_t i, float x)
{
    if (to == SB_DT_BOOL) {
        ((uint8_t *)data)[i] = x != 0.0f;
        return;
    }
    int is_signed = sb_dtype_is_signed(to);
    if (isnan(x) || isinf(x)) {
        int64_t lo = to == SB_DT_INT64 ? INT64_MIN : to == SB_DT_INT32 ? INT32_MIN
                     : to == SB_DT_INT16 ? INT16_MIN : to == SB_DT_INT8 ? INT8_MIN : 0;
        sb_int_store(data, to, i, is_signed ? lo : 0);
        return;
    }
    double t = trunc((double)x);
    switch (to) {
    case SB_DT_INT64:
        ((int64_t *)data)[i] = t >= -9223372036854775808.0 && t < 9223372036854775808.0
                               ? (int64_t)t : INT64_MIN;
        return;
    case SB_DT_UINT64:
        ((uint64_t *)data)[i] = t >= 0.0 && t < 18446744073709551616.0 ? (uint64_t)t : 0;
        return;
    case SB_DT_INT32:
        ((int32_t *)data)[i] = t >= -2147483648.0 && t < 2147483648.0 ? (int32_t)t : INT32_MIN;
        return;
    case SB_DT_UINT32:
        ((uint32_t *)data)[i] = t >= 0.0 && t < 4294967296.0 ? (uint32_t)t : 0;
        return;
    default:   /* int8, uint8, int16, uint16: wrapped */
        sb_int_store(data, to, i, fabs(t) < 9223372036854775808.0 ? (int64_t)t : 0);
        return;
    }
}

#endif
