/* The maximum or minimum of a row in IEEE's total order (arith.h's maximum
 * and minimum folded over it; they are order-free), NaN canonical if any
 * element is NaN: by value in vector lanes (vec4.h), which may mix -0 and +0
 * however the ISA's max or min does; a zero result is then settled from
 * the row itself: the maximum is +0 when any element is +0, the minimum -0
 * when any is -0, and the other zero otherwise (every zero in the row is
 * then of that sign). On the bits of each value, so exact anywhere. */
#ifndef SB_ROW_EXTREME_H
#define SB_ROW_EXTREME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "isa/vec4.h"

/* Whether the row holds the zero whose bits are `zero`. */
static inline int sb_row_has_bits(const float *x, size_t n, uint32_t zero)
{
    for (size_t j = 0; j < n; ++j) {
        uint32_t b;
        memcpy(&b, x + j, sizeof b);
        if (b == zero) return 1;
    }
    return 0;
}

/* The bits of the row's maximum (is_max) or minimum, n >= 1. */
static inline uint32_t sb_row_extreme(const float *x, size_t n, int is_max)
{
    float m = x[0];
    int nan = 0;
    size_t j = 0;
#if VEC4_AVAILABLE
    if (n >= 16) {
        vec4 m0 = vec4_splat(m), m1 = m0, m2 = m0, m3 = m0, flags = vec4_zero();
        for (; j + 16 <= n; j += 16) {
            vec4 v0 = vec4_load(x + j), v1 = vec4_load(x + j + 4);
            vec4 v2 = vec4_load(x + j + 8), v3 = vec4_load(x + j + 12);
            if (is_max) {
                m0 = vec4_max(m0, v0); m1 = vec4_max(m1, v1);
                m2 = vec4_max(m2, v2); m3 = vec4_max(m3, v3);
            } else {
                m0 = vec4_min(m0, v0); m1 = vec4_min(m1, v1);
                m2 = vec4_min(m2, v2); m3 = vec4_min(m3, v3);
            }
            flags = vec4_nan_or(vec4_nan_or(flags, v0), v1);
            flags = vec4_nan_or(vec4_nan_or(flags, v2), v3);
        }
        float lanes[16];
        vec4_store(lanes, m0); vec4_store(lanes + 4, m1);
        vec4_store(lanes + 8, m2); vec4_store(lanes + 12, m3);
        for (size_t l = 0; l < 16; ++l) m = is_max ? (lanes[l] > m ? lanes[l] : m)
                                                   : (lanes[l] < m ? lanes[l] : m);
        nan = vec4_any(flags);
    }
#endif
    for (; j < n; ++j) {
        float v = x[j];
        m = is_max ? (v > m ? v : m) : (v < m ? v : m);
        nan |= v != v;
    }
    if (!nan) nan = m != m;   /* (x[0] NaN and nothing replaced it) */
    if (nan) return 0x7FC00000u;
    if (m == 0.0f) {
        const uint32_t other = is_max ? 0x00000000u : 0x80000000u;
        return sb_row_has_bits(x, n, other) ? other : other ^ 0x80000000u;
    }
    uint32_t b;
    memcpy(&b, &m, sizeof b);
    return b;
}

#endif
