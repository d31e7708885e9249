/* A transposing copy for the packers (pack.c): data movement only, so it
 * cannot change a bit. 4 x 4 blocks go through vec4.h's shuffles where there
 * are vectors (SSE2, NEON, SIMD128); the rest, and other targets, element by
 * element. */
#ifndef SB_TRANSPOSE_H
#define SB_TRANSPOSE_H

#include <stddef.h>
#include "isa/vec4.h"

/* dst[c*dst_step + r] = src[r*src_step + c] for r < rows, c < cols. */
static inline void sb_transpose_copy(float *dst, size_t dst_step, const float *src,
                                     ptrdiff_t src_step, size_t rows, size_t cols)
{
    size_t r = 0;
#if VEC4_AVAILABLE
    for (; r + 4 <= rows; r += 4) {
        const float *s0 = src + (ptrdiff_t)r * src_step, *s1 = s0 + src_step;
        const float *s2 = s1 + src_step, *s3 = s2 + src_step;
        size_t c = 0;
        for (; c + 4 <= cols; c += 4) {
            vec4 a = vec4_load(s0 + c), b = vec4_load(s1 + c);
            vec4 e = vec4_load(s2 + c), f = vec4_load(s3 + c);
            vec4 ab_lo = vec4_zip_lo(a, b), ef_lo = vec4_zip_lo(e, f);
            vec4 ab_hi = vec4_zip_hi(a, b), ef_hi = vec4_zip_hi(e, f);
            float *d = dst + c * dst_step + r;
            vec4_store(d, vec4_lo64(ab_lo, ef_lo));
            vec4_store(d + dst_step, vec4_hi64(ab_lo, ef_lo));
            vec4_store(d + 2 * dst_step, vec4_lo64(ab_hi, ef_hi));
            vec4_store(d + 3 * dst_step, vec4_hi64(ab_hi, ef_hi));
        }
        for (; c < cols; ++c) {
            float *d = dst + c * dst_step + r;
            d[0] = s0[c], d[1] = s1[c], d[2] = s2[c], d[3] = s3[c];
        }
    }
#endif
    for (; r < rows; ++r) {
        const float *s = src + (ptrdiff_t)r * src_step;
        for (size_t c = 0; c < cols; ++c) dst[c * dst_step + r] = s[c];
    }
}

#endif
