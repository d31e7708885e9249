/* The fast route of exact log (math/log_route.h) on the avx512 path, eight
 * binary64 lanes at a time: the scalar text's operations, none fused, with
 * its two 16-entry tables in two registers each (one two-register permute
 * per lookup, where the compiler builds each lane's entry from a scalar load
 * and an insert), the rounding test on v's bits (route_loop_avx512.h), and
 * the recipe's special results given directly: log(+-0) = -inf, log(+inf) =
 * +inf, and the canonical NaN for x < 0 and NaN. Only the lanes the test
 * cannot settle take the recipe, so the bits are the recipe's
 * (bench/exhaustive_identical.py checks all 2^32 inputs). */
#ifndef SB_LOG_ROUTE_AVX512_H
#define SB_LOG_ROUTE_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include "math/log_route.h"
#include "isa/avx512/route_loop_avx512.h"

typedef struct { __m512d c_lo, c_hi, l_lo, l_hi; } sbx_log_table;

/* sbt_log_route_double of eight lanes (positive finite; other lanes get
 * garbage, never a fault). */
static inline __attribute__((always_inline)) __m512d sbx_log_route_pd(__m512d v, sbx_log_table tb)
{
    const __m512i bits = _mm512_castpd_si512(v);
    const __m512i tmp = _mm512_sub_epi64(bits, _mm512_set1_epi64((long long)SB_LOG_ROUTE_OFF));
    const __m512i index = _mm512_srli_epi64(tmp, 48);             /* the low 4 bits: j */
    const __m512i e_biased = _mm512_add_epi64(_mm512_srai_epi64(tmp, 52), _mm512_set1_epi64(0x4338000000000000LL));
    const __m512d e = _mm512_sub_pd(_mm512_castsi512_pd(e_biased), _mm512_set1_pd(0x1.8p52));
    const __m512d z = _mm512_castsi512_pd(
        _mm512_sub_epi64(bits, _mm512_and_si512(tmp, _mm512_set1_epi64((long long)0xfff0000000000000u))));
    const __m512d c = _mm512_permutex2var_pd(tb.c_lo, index, tb.c_hi);
    const __m512d l = _mm512_permutex2var_pd(tb.l_lo, index, tb.l_hi);
    const __m512d r = _mm512_sub_pd(_mm512_mul_pd(z, c), _mm512_set1_pd(1.0));
    const double *p = sb_log_route_p;
    __m512d q = _mm512_set1_pd(p[6]);
    for (int i = 5; i >= 0; --i) q = _mm512_add_pd(_mm512_mul_pd(q, r), _mm512_set1_pd(p[i]));
    const __m512d log1p_r = _mm512_add_pd(r, _mm512_mul_pd(_mm512_mul_pd(r, r), q));
    return _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(e, _mm512_set1_pd(SB_LN2_HI)), l),
                         _mm512_add_pd(_mm512_mul_pd(e, _mm512_set1_pd(SB_LN2_LO)), log1p_r));
}

/* Sixteen results of x[0, 16) and, in *unsure, the live lanes the recipe
 * must settle (marked SBT_ROUTE_UNSURE). */
static inline __attribute__((always_inline)) __m512 sbx_log_route16(const float *x, __mmask16 live,
                                                                    sbx_log_table tb, __mmask16 *unsure)
{
    const __m512 xf = _mm512_maskz_loadu_ps(live, x);
    const __m512 inf = _mm512_castsi512_ps(_mm512_set1_epi32(0x7f800000));
    const __mmask16 routed = _mm512_cmp_ps_mask(xf, _mm512_setzero_ps(), _CMP_GT_OQ) &
                             _mm512_cmp_ps_mask(xf, inf, _CMP_LT_OQ);
    const __mmask16 zero = _mm512_cmp_ps_mask(xf, _mm512_setzero_ps(), _CMP_EQ_OQ);
    const __mmask16 plus_inf = _mm512_cmp_ps_mask(xf, inf, _CMP_EQ_OQ);
    __m512d x0, x1;
    sbx_widen16(xf, &x0, &x1);
    const __m512d v0 = sbx_log_route_pd(x0, tb), v1 = sbx_log_route_pd(x1, tb);
    const __mmask16 near = (__mmask16)(sbx_route_near(v0) | ((unsigned)sbx_route_near(v1) << 8));
    __m512 r = sbx_round16(v0, v1);
    /* x < 0, -inf and NaN: the canonical NaN */
    r = _mm512_mask_blend_ps((__mmask16)~(routed | zero | plus_inf), r,
                             _mm512_castsi512_ps(_mm512_set1_epi32((int)SB_CANONICAL_NAN_BITS)));
    r = _mm512_mask_blend_ps(zero, r, _mm512_castsi512_ps(_mm512_set1_epi32((int)0xff800000u)));
    r = _mm512_mask_blend_ps(plus_inf, r, inf);
    *unsure = (__mmask16)(live & routed & near);
    return _mm512_mask_blend_ps(*unsure, r, _mm512_castsi512_ps(_mm512_set1_epi32((int)SBT_ROUTE_UNSURE)));
}

/* y[i] = log x[i], i < n; y may be x. */
static inline void sbx_log_route_n(const float *x, float *y, size_t n)
{
    const sbx_log_table tb = {_mm512_loadu_pd(sb_log_route_c), _mm512_loadu_pd(sb_log_route_c + 8),
                              _mm512_loadu_pd(sb_log_route_l), _mm512_loadu_pd(sb_log_route_l + 8)};
#define SBX_LOG16(p, live, u) sbx_log_route16(p, live, tb, u)
    SBX_ROUTE_LOOP(x, y, n, SBX_LOG16, sb_exact_log);
#undef SBX_LOG16
}

#endif
