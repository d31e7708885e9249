/* The fast route of exact exp and sigmoid (math/exp_route.h) on the avx512
 * path, eight binary64 lanes at a time, with its 16-entry table in two
 * registers: one two-register permute (vpermt2pd) per lookup, where the
 * compiler builds each lane's entry from a scalar load and an insert (GCC's
 * generic tuning emits no gathers). The scalar text's operations, none
 * fused, with a rounding test on v's bits in place of its two roundings, and
 * the recipe's saturated results (+0, +inf, 1) given directly rather than
 * settled by the recipe one element at a time (a Softmax under an attention
 * mask has many). Whatever the route computes, an element keeps it only when
 * the test proves it correctly rounded, else it takes the recipe, so the bits
 * are the recipe's (bench/exhaustive_identical.py checks all 2^32 inputs). */
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

/* The route's float32 results of eight lanes, and in *unsure the lanes it
 * cannot settle. The rounding test reads v's bits: a binary64 v that rounds
 * to a normal float32 drops its 29 low significand bits, and the route's v
 * lies within |v| 2^-42 of the true value, under 2^11 of v's units in the
 * last place; unless those 29 bits lie within 2^13 units of the midpoint
 * pattern 2^28, v and the true value round alike (the scalar text's two
 * roundings test the same, in more operations). Lanes whose t lies outside
 * [lo, hi] (NaN included) are unsure too: there the result may be subnormal,
 * whose rounding drops more bits, or saturated (the caller's). */
#define SBX_ROUTE_NEAR 0x2000
static inline __m256 sbx_exp_route_round(__m512d v, __m512d t, double lo, double hi,
                                         __mmask8 *unsure)
{
    const __m512i low = _mm512_and_si512(_mm512_castpd_si512(v), _mm512_set1_epi64(0x1fffffff));
    const __m512i dist = _mm512_add_epi64(low, _mm512_set1_epi64(SBX_ROUTE_NEAR - 0x10000000));
    const __mmask8 near = _mm512_cmplt_epu64_mask(dist, _mm512_set1_epi64(2 * SBX_ROUTE_NEAR));
    const __mmask8 in = _mm512_cmp_pd_mask(t, _mm512_set1_pd(lo), _CMP_GE_OQ) &
                        _mm512_cmp_pd_mask(t, _mm512_set1_pd(hi), _CMP_LE_OQ);
    *unsure = (__mmask8)(near | (__mmask8)~in);
    return _mm512_cvtpd_ps(v);
}

/* Where the route's results are normal float32 (e^-87 > 2^-126), and where
 * the recipe's are +0, +inf or 1 whatever the route says (e^-104 is below
 * half of 2^-149; e^89 is above FLT_MAX; 1 + e^-100 is 1 in binary64). */
#define SBX_EXP_NORMAL (-87.0)
#define SBX_EXP_ZERO (-104.0)
#define SBX_EXP_MAX 89.0
#define SBX_SIGMOID_T_ONE (-100.0)
#define SBX_SIGMOID_T_NORMAL 87.0
#define SBX_SIGMOID_T_ZERO 104.0

/* Eight results of x[0, 8) (lanes outside `live` read as 0; NaN there or
 * anywhere is unsure), and in *unsure the live lanes the recipe must settle,
 * marked SBT_ROUTE_UNSURE in the result. */
static inline __m256 sbx_exp_route8(const float *x, __mmask8 live, int sigmoid,
                                    sbx_exp_table table, __mmask8 *unsure)
{
    const __m512d x64 = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(live, x));
    __m256 r;
    __mmask8 u;
    if (sigmoid) {
        const __m512d t = _mm512_sub_pd(_mm512_setzero_pd(), x64);   /* sigmoid = 1/(1 + e^t) */
        const __m512d em = sbx_exp_route_pd(t, table);
        const __m512d v = _mm512_div_pd(_mm512_set1_pd(1.0), _mm512_add_pd(_mm512_set1_pd(1.0), em));
        r = sbx_exp_route_round(v, t, SBX_SIGMOID_T_ONE, SBX_SIGMOID_T_NORMAL, &u);
        const __mmask8 one = _mm512_cmp_pd_mask(t, _mm512_set1_pd(SBX_SIGMOID_T_ONE), _CMP_LT_OQ);
        const __mmask8 zero = _mm512_cmp_pd_mask(t, _mm512_set1_pd(SBX_SIGMOID_T_ZERO), _CMP_GT_OQ);
        r = _mm256_mask_blend_ps(one, r, _mm256_set1_ps(1.0f));
        r = _mm256_mask_blend_ps(zero, r, _mm256_setzero_ps());
        u &= (__mmask8)~(one | zero);
    } else {
        const __m512d v = sbx_exp_route_pd(x64, table);
        r = sbx_exp_route_round(v, x64, SBX_EXP_NORMAL, SBX_EXP_MAX, &u);
        const __mmask8 zero = _mm512_cmp_pd_mask(x64, _mm512_set1_pd(SBX_EXP_ZERO), _CMP_LT_OQ);
        const __mmask8 inf = _mm512_cmp_pd_mask(x64, _mm512_set1_pd(SBX_EXP_MAX), _CMP_GT_OQ);
        r = _mm256_mask_blend_ps(zero, r, _mm256_setzero_ps());
        r = _mm256_mask_blend_ps(inf, r, _mm256_set1_ps(__builtin_inff()));
        u &= (__mmask8)~(zero | inf);
    }
    *unsure = (__mmask8)(u & live);
    return _mm256_mask_blend_ps(*unsure, r, _mm256_castsi256_ps(_mm256_set1_epi32((int)SBT_ROUTE_UNSURE)));
}

/* y[i] = exp (sigmoid 0) or sigmoid (1) of x[i], i < n; y may be x. Two
 * vectors per step (their chains are long and independent), results stored
 * straight to y unless y is x: then a block at a time, so that the recipe
 * still reads x for the lanes it settles. */
static inline void sbx_exp_route_n(const float *x, float *y, size_t n, int sigmoid)
{
    const sbx_exp_table table = {_mm512_loadu_pd(sb_exp_route_table), _mm512_loadu_pd(sb_exp_route_table + 8)};
    float buffer[SBT_ROUTE_BLOCK];
    for (size_t i0 = 0; i0 < n; i0 += SBT_ROUTE_BLOCK) {
        const size_t m = n - i0 < SBT_ROUTE_BLOCK ? n - i0 : SBT_ROUTE_BLOCK;
        float *block = x == y ? buffer : y + i0;
        const float *xb = x + i0;
        unsigned unsure_any = 0;
        size_t i = 0;
        for (; i + 16 <= m; i += 16) {
            __mmask8 u0, u1;
            const __m256 r0 = sbx_exp_route8(xb + i, 0xff, sigmoid, table, &u0);
            const __m256 r1 = sbx_exp_route8(xb + i + 8, 0xff, sigmoid, table, &u1);
            _mm256_storeu_ps(block + i, r0);
            _mm256_storeu_ps(block + i + 8, r1);
            unsure_any |= (unsigned)(u0 | u1);
        }
        for (; i < m; i += 8) {
            const __mmask8 live = m - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (m - i)) - 1u);
            __mmask8 u;
            const __m256 r = sbx_exp_route8(xb + i, live, sigmoid, table, &u);
            _mm256_mask_storeu_ps(block + i, live, r);
            unsure_any |= (unsigned)u;
        }
        if (unsure_any && sigmoid)
            SBT_ROUTE_SETTLE(xb, block, m, sb_exact_sigmoid);
        else if (unsure_any)
            SBT_ROUTE_SETTLE(xb, block, m, sb_exact_exp);
        if (block == buffer)
            for (size_t j = 0; j < m; ++j) y[i0 + j] = block[j];
    }
}

#endif
