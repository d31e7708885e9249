/* Exact Erf and Gelu on the avx2 path, four binary64 lanes at a time: the
 * operations of sbt_erf_abs_double, sb_exact_erf and sb_act_gelu
 * (math/transcendental.h, math/activation.h), in the same order, on the same
 * constants, so the same bits (bench/exhaustive_identical.py checks all 2^32
 * inputs). Why it exists: the compiler gathers each lane's 12 coefficients
 * with vgatherqpd, one gather per coefficient, and on AMD Zen 3 that made
 * exact Erf cost 12-14 ns an element. Here each lane's column of the table
 * (its 12 coefficients, contiguous in a column-major copy made per call) is
 * three vector loads, and four lanes' columns are transposed in registers:
 * 12 loads and 24 shuffles instead of 12 gathers. No fused multiply-add:
 * each step is the scalar text's multiply, then its add. */
#ifndef SB_ERF_AVX2_H
#define SB_ERF_AVX2_H

#include <immintrin.h>
#include <stddef.h>
#include <string.h>
#include "math/activation.h"
#include "math/transcendental.h"

/* sb_erf_table column-major: column j's coefficient i at [j][i]. */
typedef struct { double c[SB_ERF_COLUMNS][SB_ERF_TERMS]; } sbx2_erf_columns;

static inline void sbx2_erf_columns_fill(sbx2_erf_columns *t)
{
    for (int j = 0; j < SB_ERF_COLUMNS; ++j)
        for (int i = 0; i < SB_ERF_TERMS; ++i) t->c[j][i] = sb_erf_table[i * SB_ERF_COLUMNS + j];
}

/* Four rows r0..r3 (one lane's four coefficients each) to four vectors,
 * vector i holding coefficient i of every lane. */
static inline void sbx2_transpose4(__m256d r0, __m256d r1, __m256d r2, __m256d r3, __m256d out[4])
{
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    out[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    out[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    out[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    out[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/* Vectors of four lanes each kernel step takes together: the Horner loop
 * is a chain of 24 dependent operations, so SBX2_ERF_CHAINS independent
 * chains are interleaved to fill the pipes. */
#define SBX2_ERF_CHAINS 4

/* sbt_erf_abs_double of SBX2_ERF_CHAINS vectors of four lanes a >= 0 (NaN:
 * garbage the caller selects away): one Horner loop over column j,
 * SB_ERF_SMALL_COLUMN where a < 1/2. */
static inline void sbx2_erf_abs(const __m256d a[SBX2_ERF_CHAINS], __m256d r[SBX2_ERF_CHAINS],
                                const sbx2_erf_columns *table)
{
    const __m256d half = _mm256_set1_pd(0.5), shifter = _mm256_set1_pd(0x1.8p52);
    const __m256d top = _mm256_set1_pd(3.9375);
    __m256d small[SBX2_ERF_CHAINS], t[SBX2_ERF_CHAINS], w[SBX2_ERF_CHAINS] = {0};   /* w: set at c11 */
    const double *p[SBX2_ERF_CHAINS][4];
    for (int h = 0; h < SBX2_ERF_CHAINS; ++h) {
        small[h] = _mm256_cmp_pd(a[h], half, _CMP_LT_OQ);
        /* ac = a >= 0.5 ? a : 0.5 (NaN: 0.5); then ac <= 3.9375 ? ac : 3.9375 */
        __m256d ac = _mm256_blendv_pd(half, a[h], _mm256_cmp_pd(a[h], half, _CMP_GE_OQ));
        ac = _mm256_blendv_pd(top, ac, _mm256_cmp_pd(ac, top, _CMP_LE_OQ));
        __m256d v = _mm256_mul_pd(ac, _mm256_set1_pd(4.0));
        __m256d k = _mm256_sub_pd(_mm256_add_pd(v, shifter), shifter);
        k = _mm256_blendv_pd(k, _mm256_sub_pd(k, _mm256_set1_pd(1.0)), _mm256_cmp_pd(k, v, _CMP_GT_OQ));
        /* j = low byte of (k + shifter)'s bits, less 2: 0..13; SB_ERF_SMALL_COLUMN where a < 1/2 */
        __m256i j = _mm256_sub_epi64(
            _mm256_and_si256(_mm256_castpd_si256(_mm256_add_pd(k, shifter)), _mm256_set1_epi64x(0xff)),
            _mm256_set1_epi64x(2));
        j = _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(j),
            _mm256_castsi256_pd(_mm256_set1_epi64x(SB_ERF_SMALL_COLUMN)), small[h]));
        __m256d u = _mm256_sub_pd(a[h], _mm256_add_pd(_mm256_set1_pd(0.625),
            _mm256_mul_pd(_mm256_set1_pd(0.25), _mm256_sub_pd(k, _mm256_set1_pd(2.0)))));
        t[h] = _mm256_blendv_pd(u, _mm256_mul_pd(a[h], a[h]), small[h]);
        __m128i j01 = _mm256_castsi256_si128(j), j23 = _mm256_extracti128_si256(j, 1);
        p[h][0] = table->c[_mm_cvtsi128_si64(j01)];
        p[h][1] = table->c[_mm_extract_epi64(j01, 1)];
        p[h][2] = table->c[_mm_cvtsi128_si64(j23)];
        p[h][3] = table->c[_mm_extract_epi64(j23, 1)];
    }
    /* Horner from coefficient 11 down, four coefficients (one transpose) at a time */
    for (int g = SB_ERF_TERMS - 4; g >= 0; g -= 4) {
        __m256d c[SBX2_ERF_CHAINS][4];
        for (int h = 0; h < SBX2_ERF_CHAINS; ++h)
            sbx2_transpose4(_mm256_loadu_pd(p[h][0] + g), _mm256_loadu_pd(p[h][1] + g),
                            _mm256_loadu_pd(p[h][2] + g), _mm256_loadu_pd(p[h][3] + g), c[h]);
        for (int i = 3; i >= 0; --i)
            for (int h = 0; h < SBX2_ERF_CHAINS; ++h)
                w[h] = g + i == SB_ERF_TERMS - 1 ? c[h][i]
                                                 : _mm256_add_pd(_mm256_mul_pd(w[h], t[h]), c[h][i]);
    }
    for (int h = 0; h < SBX2_ERF_CHAINS; ++h) {
        __m256d rh = _mm256_mul_pd(w[h], _mm256_blendv_pd(_mm256_set1_pd(1.0), a[h], small[h]));
        r[h] = _mm256_blendv_pd(rh, _mm256_set1_pd(1.0), _mm256_cmp_pd(a[h], _mm256_set1_pd(4.0), _CMP_GE_OQ));
    }
}

/* The 8 floats of x as two halves of four lanes in binary64. */
static inline __m256d sbx2_low_pd(__m256 x) { return _mm256_cvtps_pd(_mm256_castps256_ps128(x)); }
static inline __m256d sbx2_high_pd(__m256 x) { return _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)); }

/* Two halves of four binary64 lanes rounded to float32 (the C cast), as 8 floats. */
static inline __m256 sbx2_to_float(__m256d low, __m256d high)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(low)), _mm256_cvtpd_ps(high), 1);
}

/* NaN lanes of x to the canonical NaN (sbt_nan_in_nan_out). */
static inline __m256 sbx2_nan_in_nan_out(__m256 x, __m256 y)
{
    return _mm256_blendv_ps(y, _mm256_castsi256_ps(_mm256_set1_epi32((int)SB_CANONICAL_NAN_BITS)),
                            _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* Floats a kernel step takes: two float vectors per pair of chains */
#define SBX2_ERF_STEP (4 * SBX2_ERF_CHAINS)

/* sb_exact_erf of SBX2_ERF_STEP floats at x, to y */
static inline void sbx2_exact_erf_step(const float *x, float *y, const sbx2_erf_columns *table)
{
    const __m256 sign_bit = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
    __m256 xv[SBX2_ERF_CHAINS / 2];
    __m256d a[SBX2_ERF_CHAINS], r[SBX2_ERF_CHAINS];
    for (int h = 0; h < SBX2_ERF_CHAINS / 2; ++h) {
        xv[h] = _mm256_loadu_ps(x + 8 * h);
        __m256 ax = _mm256_andnot_ps(sign_bit, xv[h]);
        a[2 * h] = sbx2_low_pd(ax), a[2 * h + 1] = sbx2_high_pd(ax);
    }
    sbx2_erf_abs(a, r, table);
    for (int h = 0; h < SBX2_ERF_CHAINS / 2; ++h) {
        __m256 yv = sbx2_to_float(r[2 * h], r[2 * h + 1]);
        yv = _mm256_or_ps(yv, _mm256_and_ps(xv[h], sign_bit));
        _mm256_storeu_ps(y + 8 * h, sbx2_nan_in_nan_out(xv[h], yv));
    }
}

/* sb_act_gelu of SBX2_ERF_STEP floats at x, to y */
static inline void sbx2_gelu_step(const float *x, float *y, const sbx2_erf_columns *table)
{
    const __m256d sign_bit = _mm256_castsi256_pd(_mm256_set1_epi64x((long long)0x8000000000000000u));
    __m256 xv[SBX2_ERF_CHAINS / 2];
    __m256d v[SBX2_ERF_CHAINS], a[SBX2_ERF_CHAINS], ab[SBX2_ERF_CHAINS], e[SBX2_ERF_CHAINS];
    for (int h = 0; h < SBX2_ERF_CHAINS / 2; ++h) {
        xv[h] = _mm256_loadu_ps(x + 8 * h);
        v[2 * h] = sbx2_low_pd(xv[h]), v[2 * h + 1] = sbx2_high_pd(xv[h]);
    }
    for (int h = 0; h < SBX2_ERF_CHAINS; ++h) {
        a[h] = _mm256_mul_pd(v[h], _mm256_set1_pd(SB_INV_SQRT2));
        ab[h] = _mm256_andnot_pd(sign_bit, a[h]);
    }
    sbx2_erf_abs(ab, e, table);
    __m256d g[SBX2_ERF_CHAINS];
    for (int h = 0; h < SBX2_ERF_CHAINS; ++h) {
        /* e = a < 0 ? -e : e, the negation a sign flip */
        __m256d eh = _mm256_xor_pd(e[h], _mm256_and_pd(sign_bit, _mm256_cmp_pd(a[h], _mm256_setzero_pd(), _CMP_LT_OQ)));
        g[h] = _mm256_mul_pd(_mm256_mul_pd(v[h], _mm256_set1_pd(0.5)), _mm256_add_pd(_mm256_set1_pd(1.0), eh));
    }
    const __m256 minus_inf = _mm256_castsi256_ps(_mm256_set1_epi32((int)0xff800000u));
    for (int h = 0; h < SBX2_ERF_CHAINS / 2; ++h) {
        __m256 yv = sbx2_to_float(g[2 * h], g[2 * h + 1]);
        yv = _mm256_blendv_ps(yv, _mm256_set1_ps(-0.0f), _mm256_cmp_ps(xv[h], minus_inf, _CMP_EQ_OQ));
        _mm256_storeu_ps(y + 8 * h, sbx2_nan_in_nan_out(xv[h], yv));
    }
}

/* y[i] = erf (want_gelu 0) or gelu (1) of x[i], i < n; y may be x. */
static inline void sbx2_erf_gelu_n(const float *x, float *y, size_t n, int want_gelu)
{
    sbx2_erf_columns table;
    sbx2_erf_columns_fill(&table);
    size_t i = 0;
    for (; i + SBX2_ERF_STEP <= n; i += SBX2_ERF_STEP) {
        if (want_gelu) sbx2_gelu_step(x + i, y + i, &table);
        else sbx2_exact_erf_step(x + i, y + i, &table);
    }
    if (i < n) {                       /* the last elements, through a zeroed block */
        float part[SBX2_ERF_STEP] = {0};
        memcpy(part, x + i, (n - i) * sizeof(float));
        if (want_gelu) sbx2_gelu_step(part, part, &table);
        else sbx2_exact_erf_step(part, part, &table);
        memcpy(y + i, part, (n - i) * sizeof(float));
    }
}

#endif
