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
 * are the recipe's (bench/exhaustive_identical.py checks all 2^32 inputs).
 *
 * Sixteen elements a step: one float32 load, the range tests on those 16
 * lanes (float32 compares: the bounds are float32 values, so they decide as
 * the binary64 ones did), two chains of eight binary64 lanes, one store.
 * 2^(k div 16) goes into the entry's exponent field by an integer add, not a
 * multiply: the same value, exactly (the product never leaves binary64's
 * normal range), and a multiply fewer for the two pipes that do them on AMD
 * Zen 4. With exp or sigmoid fixed at compile time and the unsure lanes
 * kept in mask registers, exp takes 0.83 ns an element and sigmoid 0.99
 * there, against 1.27 and 1.50 for eight lanes a step with both in one loop
 * (the binary64 values v are the same, bit for bit, so the same lanes are
 * sure; a harness compared both versions' outputs for all 2^32 inputs). */
#ifndef SB_EXP_ROUTE_AVX512_H
#define SB_EXP_ROUTE_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include "math/exp_route.h"
#include "isa/avx512/route_loop_avx512.h"

typedef struct { __m512d lo, hi; } sbx_exp_table;

/* sbt_exp_route_double of eight lanes (|t| <= 120 where it matters; other
 * lanes get garbage, never a fault). shifted = 1.5 * 2^52 + k, so its bits
 * are 0x4338000000000000 + k: their low 4 bits are k mod 16 (the entry), and
 * less that constant they are k as a 64-bit integer, whose arithmetic shift
 * by 4 is k div 16 (rounded down), the power of two the entry is scaled by. */
static inline __attribute__((always_inline)) __m512d sbx_exp_route_pd(__m512d t,
                                                                      sbx_exp_table table)
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
    const __m512i bits = _mm512_castpd_si512(shifted);
    const __m512d entry = _mm512_permutex2var_pd(table.lo, bits, table.hi);   /* low 4 bits */
    const __m512i k64 = _mm512_sub_epi64(bits, _mm512_set1_epi64(0x4338000000000000LL));
    const __m512i power = _mm512_slli_epi64(_mm512_srai_epi64(k64, 4), 52);
    const __m512d scaled = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(entry), power));
    return _mm512_mul_pd(scaled, _mm512_add_pd(_mm512_set1_pd(1.0), e));
}

/* The route's range in x, where its results are normal float32 (e^-87 >
 * 2^-126; sigmoid's t = -x), and where the recipe's are +0, +inf or 1
 * whatever the route says (e^-104 is below half of 2^-149; e^89 is above
 * FLT_MAX; 1 + e^-100 is 1 in binary64). Outside [lo, hi] and the
 * saturated ranges (NaN included) the recipe settles the lane: there the
 * result may be subnormal, whose rounding drops more bits. */
#define SBX_ROUTE_LO (-87.0f)
#define SBX_EXP_HI 89.0f
#define SBX_SIGMOID_HI 100.0f
#define SBX_ROUTE_ZERO_BELOW (-104.0f)

/* Sixteen results of x[0, 16) (lanes outside `live` read as 0), and in
 * *unsure the live lanes the recipe must settle, marked SBT_ROUTE_UNSURE in
 * the result. sigmoid: a constant, 0 (exp) or 1. */
static inline __attribute__((always_inline)) __m512 sbx_exp_route16(const float *x, __mmask16 live,
                                                                    const int sigmoid,
                                                                    sbx_exp_table table,
                                                                    __mmask16 *unsure)
{
    const __m512 xf = _mm512_maskz_loadu_ps(live, x);
    const float hi = sigmoid ? SBX_SIGMOID_HI : SBX_EXP_HI;
    const __mmask16 routed = _mm512_cmp_ps_mask(xf, _mm512_set1_ps(SBX_ROUTE_LO), _CMP_GE_OQ) &
                             _mm512_cmp_ps_mask(xf, _mm512_set1_ps(hi), _CMP_LE_OQ);
    const __mmask16 above = _mm512_cmp_ps_mask(xf, _mm512_set1_ps(hi), _CMP_GT_OQ);
    const __mmask16 zero = _mm512_cmp_ps_mask(xf, _mm512_set1_ps(SBX_ROUTE_ZERO_BELOW), _CMP_LT_OQ);
    __m512d x0, x1;
    sbx_widen16(xf, &x0, &x1);
    __m512d v0, v1;
    if (sigmoid) {   /* 1 / (1 + e^t), t = -x */
        const __m512d one = _mm512_set1_pd(1.0);
        v0 = _mm512_div_pd(one, _mm512_add_pd(one, sbx_exp_route_pd(_mm512_sub_pd(_mm512_setzero_pd(), x0), table)));
        v1 = _mm512_div_pd(one, _mm512_add_pd(one, sbx_exp_route_pd(_mm512_sub_pd(_mm512_setzero_pd(), x1), table)));
    } else {
        v0 = sbx_exp_route_pd(x0, table);
        v1 = sbx_exp_route_pd(x1, table);
    }
    const __mmask16 near = (__mmask16)(sbx_route_near(v0) | ((unsigned)sbx_route_near(v1) << 8));
    __m512 r = sbx_round16(v0, v1);
    r = _mm512_mask_blend_ps(above, r, _mm512_set1_ps(sigmoid ? 1.0f : __builtin_inff()));
    r = _mm512_mask_blend_ps(zero, r, _mm512_setzero_ps());
    *unsure = (__mmask16)(live & ~(above | zero) & (near | (__mmask16)~routed));
    return _mm512_mask_blend_ps(*unsure, r, _mm512_castsi512_ps(_mm512_set1_epi32((int)SBT_ROUTE_UNSURE)));
}

/* y[i] = exp (sigmoid 0) or sigmoid (1) of x[i], i < n; y may be x. Each
 * caller passes a constant, so each gets its own loop. */
static inline __attribute__((always_inline)) void sbx_exp_route_n(const float *x, float *y, size_t n,
                                                                  const int sigmoid)
{
    const sbx_exp_table table = {_mm512_loadu_pd(sb_exp_route_table), _mm512_loadu_pd(sb_exp_route_table + 8)};
#define SBX_EXP16(p, live, u) sbx_exp_route16(p, live, 0, table, u)
#define SBX_SIGMOID16(p, live, u) sbx_exp_route16(p, live, 1, table, u)
    if (sigmoid)
        SBX_ROUTE_LOOP(x, y, n, SBX_SIGMOID16, sb_exact_sigmoid);
    else
        SBX_ROUTE_LOOP(x, y, n, SBX_EXP16, sb_exact_exp);
#undef SBX_EXP16
#undef SBX_SIGMOID16
}

#endif
