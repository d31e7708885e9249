/* A row split by column parity for the padded rows of a column step of two
 * (padded_rows.c: the convolution's gatherer and the depthwise kernel): one
 * shuffle per four outputs where vec4.h has vectors. */
#ifndef SB_STRIDED_COPY_H
#define SB_STRIDED_COPY_H

#include <stddef.h>
#include "isa/vec4.h"

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
