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
#if VEC4_AVAILABLE
/* pairs t .. t + 3 */
static inline void split_stride2_step(float *even, float *odd, const float *in, size_t t)
{
    vec4 a = vec4_load(in + 2 * t), b = vec4_load(in + 2 * t + 4);
    vec4_store(even + t, vec4_even(a, b));
    vec4_store(odd + t, vec4_odd(a, b));
}
#endif

static inline void split_stride2(float *even, float *odd, const float *in, size_t len)
{
    size_t t = 0;
#if VEC4_AVAILABLE
    for (; 2 * t + 8 <= len; t += 4) split_stride2_step(even, odd, in, t);
    /* the last pairs: one step ending at the last pair, overlapping the one
     * before (it writes the same values again), rather than a pair at a
     * time (a 14-float row was 3 of its 7) */
    if (len >= 8 && t < len / 2) {
        split_stride2_step(even, odd, in, len / 2 - 4);
        t = len / 2;
    }
#endif
    for (; 2 * t + 1 < len; ++t) even[t] = in[2 * t], odd[t] = in[2 * t + 1];
    if (len % 2) even[len / 2] = in[len - 1];
}

/* dst[t] = src[t] for t < count, count small (a row of a small plane):
 * fixed-size moves, the last one overlapping the one before, instead of a
 * library memcpy call per row of a few floats. (The call per row that cost
 * a 14 x 14 depthwise layer 23% of its time was the kernel's partial store,
 * ukr_store_part in isa/ukernel_template.h, this helper's twin for a
 * vector's lanes; this one's share was not measured apart.) Reads and
 * writes only [0, count). */
static inline void copy_short(float *dst, const float *src, size_t count)
{
    if (count >= 8) {
        size_t t = 0;
        for (; t + 8 <= count; t += 8) __builtin_memcpy(dst + t, src + t, 8 * sizeof(float));
        if (t < count) __builtin_memcpy(dst + count - 8, src + count - 8, 8 * sizeof(float));
    } else if (count >= 4) {
        __builtin_memcpy(dst, src, 4 * sizeof(float));
        __builtin_memcpy(dst + count - 4, src + count - 4, 4 * sizeof(float));
    } else {
        if (count > 0) dst[0] = src[0];
        if (count > 1) dst[1] = src[1];
        if (count > 2) dst[2] = src[2];
    }
}

#endif
