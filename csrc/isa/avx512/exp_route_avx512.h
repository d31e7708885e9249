/* The fast route of exact exp and sigmoid (math/exp_route.h) on the avx512
 * path, eight binary64 lanes at a time, with its 16-entry table in two
 * registers: one two-register permute (vpermt2pd) per lookup, where the
 * compiler builds each lane's entry from a scalar load and an insert (GCC's
 * generic tuning emits no gathers). The same operations as the scalar text,
 * none fused; and whatever the route computes, an element keeps it only when
 * the rounding test proves it correctly rounded, else it takes the recipe, so
 * the bits are the recipe's (bench/exhaustive_identical.py checks all 2^32
 * inputs). */
#ifndef SB_EXP_ROUTE_AVX512_H
#define SB_EXP_ROUTE_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include "math/exp_route.h"

typedef struct { __m512d lo, hi; } sbx_exp_table;

/* sbt_exp_route_double of eight lanes (|t| <= 120 where it matters; other
 * lanes get garbage, never a fault). */
static inline __m512d sbx_exp_route_pd(__m512d t, sbx_exp_table table)
{
    const __m512d shifter = _mm512_set1_pd(0x1.8p52);
    __m512d shifted = _mm512_add_pd(_mm512_mul_pd(t, _mm512_set1_pd(SB_EXP_ROUTE_16_OVER_LN2)), shifter);
    __m512d k = _mm512_sub_pd(shifted, shifter);
    __m512d r = _mm512_sub_pd(_mm512_sub_pd(t, _mm512_mul_pd(k, _mm512_set1_pd(SB_EXP_ROUTE_LN2_16_HI))),
                              _mm512_mul_pd(k, _mm512_set1_pd(SB_EXP_ROUTE_LN2_16_LO)));
    const double *c = sb_exp_route_q;
    __m512d q = _mm512_set1_pd(c[3]);
    q = _mm512_add_pd(_mm512_mul_pd(q, r), _mm512_set1_pd(c[2]));
    q = _mm512_add_pd(_mm512_mul_pd(q, r), _mm512_set1_pd(c[1]));
    q = _mm512_add_pd(_mm512_mul_pd(q, r), _mm512_set1_pd(c[0]));
    __m512d e = _mm512_add_pd(r, _mm512_mul_pd(_mm512_mul_pd(r, r), q));
    __m512i kb = _mm512_and_si512(_mm512_castpd_si512(shifted), _mm512_set1_epi64(0xfffffffffffffLL));
    kb = _mm512_add_epi64(kb, _mm512_set1_epi64(16368 - 0x8000000000000LL));
    __m512d scale = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_srli_epi64(kb, 4), 52));
    __m512d entry = _mm512_permutex2var_pd(table.lo, kb, table.hi);   /* reads kb's low 4 bits */
    return _mm512_mul_pd(_mm512_mul_pd(entry, scale), _mm512_add_pd(_mm512_set1_pd(1.0), e));
}

/* The route's float32 results of eight lanes, and in *unsure the lanes whose
 * rounding test fails or that lie outside [lo, hi] (NaN included). */
static inline __m256 sbx_exp_route_round(__m512d v, __m512d t, double lo, double hi, __mmask8 *unsure)
{
    __m512d d = _mm512_mul_pd(v, _mm512_set1_pd(0x1p-41));
    __m256 below = _mm512_cvtpd_ps(_mm512_sub_pd(v, d)), above = _mm512_cvtpd_ps(_mm512_add_pd(v, d));
    __mmask8 same = _mm256_cmp_ps_mask(below, above, _CMP_EQ_OQ);
    __mmask8 in = _mm512_cmp_pd_mask(t, _mm512_set1_pd(lo), _CMP_GE_OQ) &
                  _mm512_cmp_pd_mask(t, _mm512_set1_pd(hi), _CMP_LE_OQ);
    *unsure = (__mmask8)~(same & in);
    return below;
}

/* y[i] = exp (sigmoid 0) or sigmoid (1) of x[i], i < n; y may be x. */
static inline void sbx_exp_route_n(const float *x, float *y, size_t n, int sigmoid)
{
    const sbx_exp_table table = {_mm512_loadu_pd(sb_exp_route_table), _mm512_loadu_pd(sb_exp_route_table + 8)};
    const double lo = sigmoid ? -100.0 : -104.0, hi = sigmoid ? 100.0 : 89.0;
    float block[SBT_ROUTE_BLOCK];
    for (size_t i0 = 0; i0 < n; i0 += SBT_ROUTE_BLOCK) {
        const size_t m = n - i0 < SBT_ROUTE_BLOCK ? n - i0 : SBT_ROUTE_BLOCK;
        uint32_t unsure_any = 0;
        for (size_t i = 0; i < m; i += 8) {
            __mmask8 live = m - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (m - i)) - 1u);
            __m512d t = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(live, x + i0 + i));
            __m512d v;
            if (sigmoid) {
                __m512d em = sbx_exp_route_pd(_mm512_sub_pd(_mm512_setzero_pd(), t), table);
                v = _mm512_div_pd(_mm512_set1_pd(1.0), _mm512_add_pd(_mm512_set1_pd(1.0), em));
            } else {
                v = sbx_exp_route_pd(t, table);
            }
            __mmask8 unsure;
            __m256 r = sbx_exp_route_round(v, t, lo, hi, &unsure);
            r = _mm256_mask_blend_ps(unsure, r, _mm256_castsi256_ps(_mm256_set1_epi32((int)SBT_ROUTE_UNSURE)));
            _mm256_mask_storeu_ps(block + i, live, r);
            unsure_any |= (uint32_t)(unsure & live);
        }
        if (unsure_any && sigmoid)
            SBT_ROUTE_SETTLE(x + i0, block, m, sb_exact_sigmoid);
        else if (unsure_any)
            SBT_ROUTE_SETTLE(x + i0, block, m, sb_exact_exp);
        for (size_t i = 0; i < m; ++i) y[i0 + i] = block[i];
    }
}

#endif
