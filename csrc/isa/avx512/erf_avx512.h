/* Exact Erf and Gelu on the avx512 path, eight binary64 lanes at a time:
 * the same operations as sbt_erf_abs_double, sb_exact_erf and sb_act_gelu
 * (math/transcendental.h, math/activation.h), in the same order, on the same
 * constants, so the same bits (bench/exhaustive_identical.py checks all
 * 2^32 inputs). Why it exists: the compiler vectorizes the scalar text's
 * table lookup (one of 14 pieces' coefficients per lane) as eight scalar
 * loads and inserts per coefficient, since GCC's generic tuning emits no
 * gathers; that made Erf cost 7 ns an element. Fourteen pieces fit in two
 * registers, so here each coefficient is one two-register permute
 * (vpermt2pd). No fused multiply-add: each step is the scalar text's
 * multiply, then its add. */
#ifndef SB_ERF_AVX512_H
#define SB_ERF_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include "math/activation.h"
#include "math/transcendental.h"

/* Row i of sb_erf_table's 14 pieces as two registers: pieces 0-7 and 8-13
 * (the last two lanes 0, never selected). This kernel evaluates A (column
 * SB_ERF_SMALL_COLUMN) apart, as the recipe reads. */
typedef struct { __m512d lo, hi; } sbx_erf_row;

static inline sbx_erf_row sbx_erf_row_load(int i)
{
    const double *row = sb_erf_table + i * SB_ERF_COLUMNS;
    sbx_erf_row r = { _mm512_loadu_pd(row), _mm512_maskz_loadu_pd(0x3f, row + 8) };
    return r;
}

/* sbt_erf_abs_double of eight lanes a >= 0 (NaN: garbage the caller selects away). */
static inline __m512d sbx_erf_abs(__m512d a, const sbx_erf_row rows[SB_ERF_TERMS])
{
    __m512d z = _mm512_mul_pd(a, a);
    const double *c = sb_erf_table + SB_ERF_SMALL_COLUMN;     /* A's c_i at c[i * SB_ERF_COLUMNS] */
    __m512d q = _mm512_set1_pd(c[8 * SB_ERF_COLUMNS]);
    for (int i = 7; i >= 0; --i)
        q = _mm512_add_pd(_mm512_mul_pd(q, z), _mm512_set1_pd(c[i * SB_ERF_COLUMNS]));
    __m512d small = _mm512_mul_pd(a, q);

    const __m512d half = _mm512_set1_pd(0.5), shifter = _mm512_set1_pd(0x1.8p52);
    /* ac = a >= 0.5 ? a : 0.5 (NaN: 0.5); then ac <= 3.9375 ? ac : 3.9375 */
    __m512d ac = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, half, _CMP_GE_OQ), half, a);
    const __m512d top = _mm512_set1_pd(3.9375);
    ac = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(ac, top, _CMP_LE_OQ), top, ac);
    __m512d v = _mm512_mul_pd(ac, _mm512_set1_pd(4.0));
    __m512d k = _mm512_sub_pd(_mm512_add_pd(v, shifter), shifter);
    k = _mm512_mask_sub_pd(k, _mm512_cmp_pd_mask(k, v, _CMP_GT_OQ), k, _mm512_set1_pd(1.0));
    /* j = low byte of (k + shifter)'s bits, less 2: 0..13; vpermt2pd reads its low 4 bits */
    __m512i j = _mm512_sub_epi64(
        _mm512_and_si512(_mm512_castpd_si512(_mm512_add_pd(k, shifter)), _mm512_set1_epi64(0xff)),
        _mm512_set1_epi64(2));
    __m512d u = _mm512_sub_pd(a, _mm512_add_pd(_mm512_set1_pd(0.625),
        _mm512_mul_pd(_mm512_set1_pd(0.25), _mm512_sub_pd(k, _mm512_set1_pd(2.0)))));
#define SBX_PIECE(i) _mm512_permutex2var_pd(rows[i].lo, j, rows[i].hi)
    __m512d w = SBX_PIECE(11);
    for (int i = 10; i >= 0; --i) w = _mm512_add_pd(_mm512_mul_pd(w, u), SBX_PIECE(i));
#undef SBX_PIECE
    __m512d r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, half, _CMP_LT_OQ), w, small);
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, _mm512_set1_pd(4.0), _CMP_GE_OQ), r,
                                _mm512_set1_pd(1.0));
}

/* The 16 floats of x as two halves of eight lanes in binary64. */
static inline __m512d sbx_low_pd(__m512 x) { return _mm512_cvtps_pd(_mm512_castps512_ps256(x)); }
static inline __m512d sbx_high_pd(__m512 x)
{
    return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm512_extracti64x4_epi64(_mm512_castps_si512(x), 1)));
}

/* Two halves of eight binary64 lanes rounded to float32 (the C cast), as 16 floats. */
static inline __m512 sbx_to_float(__m512d low, __m512d high)
{
    __m512i out = _mm512_castsi256_si512(_mm256_castps_si256(_mm512_cvtpd_ps(low)));
    out = _mm512_inserti64x4(out, _mm256_castps_si256(_mm512_cvtpd_ps(high)), 1);
    return _mm512_castsi512_ps(out);
}

/* NaN lanes of x to the canonical NaN (sbt_nan_in_nan_out). */
static inline __m512 sbx_nan_in_nan_out(__m512 x, __m512 y)
{
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(nan, y, _mm512_castsi512_ps(_mm512_set1_epi32((int)SB_CANONICAL_NAN_BITS)));
}

/* sb_exact_erf of 16 floats */
static inline __m512 sbx_exact_erf16(__m512 x, const sbx_erf_row rows[SB_ERF_TERMS])
{
    const __m512i sign_bit = _mm512_set1_epi32((int)0x80000000u);
    __m512i bits = _mm512_castps_si512(x);
    __m512 ax = _mm512_castsi512_ps(_mm512_andnot_si512(sign_bit, bits));
    __m512 y = sbx_to_float(sbx_erf_abs(sbx_low_pd(ax), rows), sbx_erf_abs(sbx_high_pd(ax), rows));
    y = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(y), _mm512_and_si512(bits, sign_bit)));
    return sbx_nan_in_nan_out(x, y);
}

/* sb_act_gelu's binary64 part of eight lanes: (v/2 ... ) before the rounding */
static inline __m512d sbx_gelu_pd(__m512d v, const sbx_erf_row rows[SB_ERF_TERMS])
{
    const __m512i sign_bit = _mm512_set1_epi64((long long)0x8000000000000000u);
    __m512d a = _mm512_mul_pd(v, _mm512_set1_pd(SB_INV_SQRT2));
    __m512d ab = _mm512_castsi512_pd(_mm512_andnot_si512(sign_bit, _mm512_castpd_si512(a)));
    __m512d e = sbx_erf_abs(ab, rows);
    /* e = a < 0 ? -e : e, the negation a sign flip */
    __m512i eb = _mm512_castpd_si512(e);
    eb = _mm512_mask_xor_epi64(eb, _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_LT_OQ), eb, sign_bit);
    e = _mm512_castsi512_pd(eb);
    return _mm512_mul_pd(_mm512_mul_pd(v, _mm512_set1_pd(0.5)), _mm512_add_pd(_mm512_set1_pd(1.0), e));
}

/* sb_act_gelu of 16 floats */
static inline __m512 sbx_gelu16(__m512 x, const sbx_erf_row rows[SB_ERF_TERMS])
{
    __m512 y = sbx_to_float(sbx_gelu_pd(sbx_low_pd(x), rows), sbx_gelu_pd(sbx_high_pd(x), rows));
    __mmask16 minus_inf = _mm512_cmp_ps_mask(x, _mm512_castsi512_ps(_mm512_set1_epi32((int)0xff800000u)), _CMP_EQ_OQ);
    y = _mm512_mask_blend_ps(minus_inf, y, _mm512_set1_ps(-0.0f));
    return sbx_nan_in_nan_out(x, y);
}

/* y[i] = erf (want_gelu 0) or gelu (1) of x[i], i < n; y may be x. */
static inline void sbx_erf_gelu_n(const float *x, float *y, size_t n, int want_gelu)
{
    sbx_erf_row rows[SB_ERF_TERMS];
    for (int i = 0; i < SB_ERF_TERMS; ++i) rows[i] = sbx_erf_row_load(i);
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        v = want_gelu ? sbx_gelu16(v, rows) : sbx_exact_erf16(v, rows);
        _mm512_mask_storeu_ps(y + i, m, v);
    }
}

#endif
