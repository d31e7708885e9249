/* The avx512 fast routes' loop (exp, sigmoid, log): sixteen elements a
 * call of ROUTE16(const float *x, __mmask16 live, __mmask16 *unsure), which
 * returns the results of x[0, 16) (lanes outside `live` read as 0) and the
 * live lanes the recipe must settle, marked SBT_ROUTE_UNSURE; those then take
 * RECIPE(x[i]) (math/transcendental.h's SBT_ROUTE_SETTLE). Results go
 * straight to y unless y is x: then a block at a time through a buffer, so
 * that the recipe still reads x for the lanes it settles. */
#ifndef SB_ROUTE_LOOP_AVX512_H
#define SB_ROUTE_LOOP_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include "math/transcendental.h"

#define SBX_ROUTE_LOOP(x, y, n, ROUTE16, RECIPE)                                             \
    do {                                                                                     \
        float buffer_[SBT_ROUTE_BLOCK];                                                      \
        for (size_t i0_ = 0; i0_ < (n); i0_ += SBT_ROUTE_BLOCK) {                            \
            const size_t m_ = (n) - i0_ < SBT_ROUTE_BLOCK ? (n) - i0_ : SBT_ROUTE_BLOCK;     \
            float *block_ = (x) == (y) ? buffer_ : (y) + i0_;                                \
            const float *xb_ = (x) + i0_;                                                    \
            __mmask16 any_ = 0, u_;                                                          \
            size_t i_ = 0;                                                                   \
            for (; i_ + 16 <= m_; i_ += 16) {                                                \
                _mm512_storeu_ps(block_ + i_, ROUTE16(xb_ + i_, (__mmask16)0xffff, &u_));    \
                any_ |= u_;                                                                  \
            }                                                                                \
            if (i_ < m_) {                                                                   \
                const __mmask16 live_ = (__mmask16)((1u << (m_ - i_)) - 1u);                 \
                _mm512_mask_storeu_ps(block_ + i_, live_, ROUTE16(xb_ + i_, live_, &u_));    \
                any_ |= u_;                                                                  \
            }                                                                                \
            if (any_) SBT_ROUTE_SETTLE(xb_, block_, m_, RECIPE);                              \
            if (block_ == buffer_)                                                           \
                for (size_t j_ = 0; j_ < m_; ++j_) (y)[i0_ + j_] = block_[j_];               \
        }                                                                                    \
    } while (0)

/* Two vectors of eight binary64 results rounded to sixteen float32 lanes. */
static inline __attribute__((always_inline)) __m512 sbx_round16(__m512d v0, __m512d v1)
{
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(v0))),
                                               _mm256_castps_pd(_mm512_cvtpd_ps(v1)), 1));
}

/* Sixteen float32 lanes widened to two vectors of eight binary64. */
static inline __attribute__((always_inline)) void sbx_widen16(__m512 xf, __m512d *x0, __m512d *x1)
{
    *x0 = _mm512_cvtps_pd(_mm512_castps512_ps256(xf));
    *x1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xf), 1)));
}

/* The lanes whose v the rounding test cannot settle, for a route whose v
 * rounds to a normal float32 and lies within |v| 2^-42 of the true value,
 * under 2^11 of v's units in the last place. It reads v's bits: such a v
 * drops its 29 low significand bits, and unless those lie within 2^13 units
 * of the midpoint pattern 2^28, v and the true value round alike (the scalar
 * text's two roundings test the same, in more operations). */
#define SBX_ROUTE_NEAR 0x2000
static inline __attribute__((always_inline)) __mmask8 sbx_route_near(__m512d v)
{
    const __m512i low = _mm512_and_si512(_mm512_castpd_si512(v), _mm512_set1_epi64(0x1fffffff));
    const __m512i dist = _mm512_add_epi64(low, _mm512_set1_epi64(SBX_ROUTE_NEAR - 0x10000000));
    return _mm512_cmplt_epu64_mask(dist, _mm512_set1_epi64(2 * SBX_ROUTE_NEAR));
}

#endif
