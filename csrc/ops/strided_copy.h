/* Copies with a column step of two, shared by the convolution's patch
 * gathering (conv.c) and the depthwise kernel's row building (depthwise.c):
 * one shuffle per four outputs where vec4.h has vectors. */
#ifndef SB_STRIDED_COPY_H
#define SB_STRIDED_COPY_H

#include <stddef.h>
#include "isa/vec4.h"

/* out[t] = in[2t] for t < len; in[2*len - 1] must be readable too when
 * spare_column (the vector loop loads whole pairs). */
static inline void copy_stride2(float *out, const float *in, size_t len, int spare_column)
{
    size_t t = 0;
#if VEC4_AVAILABLE
    size_t vector_end = spare_column ? len / 4 * 4 : (len > 0 ? (len - 1) / 4 * 4 : 0);
    for (; t < vector_end; t += 4)
        vec4_store(out + t, vec4_even(vec4_load(in + 2 * t), vec4_load(in + 2 * t + 4)));
#else
    (void)spare_column;
#endif
    for (; t < len; ++t) out[t] = in[2 * t];
}

/* even[t] = in[2t] and odd[t] = in[2t + 1] for 2t + 1 < len, and
 * even[len / 2] = in[len - 1] when len is odd: a row split by column parity
 * in one pass. */
static inline void split_stride2(float *even, float *odd, const float *in, size_t len)
{
    size_t t = 0;
#if VEC4_AVAILABLE
    for (; 2 * t + 8 <= len; t += 4) {
        vec4 a = vec4_load(in + 2 * t), b = vec4_load(in + 2 * t + 4);
        vec4_store(even + t, vec4_even(a, b));
        vec4_store(odd + t, vec4_odd(a, b));
    }
#endif
    for (; 2 * t + 1 < len; ++t) even[t] = in[2 * t], odd[t] = in[2 * t + 1];
    if (len % 2) even[len / 2] = in[len - 1];
}

#endif
