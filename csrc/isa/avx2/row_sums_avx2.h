/* avx2 path: the serial row sums (kernels/reduce.c, kernels/norm.c), as the avx512 path's
 * (isa/avx512/row_sums_avx512.h) at 8 lanes: 8 rows x 8 columns loaded as 8
 * vectors and transposed in registers, so that vector t holds column j + t
 * of every row, and the adds take t = 0, 1, ..., 7 in order. Each row's sum
 * is its terms in increasing j from +0, one float32 add each (with `mean`,
 * d * d, d = x_j - mean[r], unfused): the same bits as the generic loop
 * (unary_template.h's sb_row_sums_serial), which gathers element j of each
 * row a float at a time. Rows past
 * `rows` and columns past n are loaded as +0 and never added to a stored
 * sum. */
#ifndef SB_ISA_AVX2_ROW_SUMS_H
#define SB_ISA_AVX2_ROW_SUMS_H
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

/* v[r] lane c <- v[c] lane r: 8 x 8 floats. */
static inline __attribute__((always_inline)) void sbx2_transpose8(__m256 v[8])
{
    __m256 t[8];
    for (int i = 0; i < 8; i += 2) {   /* per 128-bit lane: pairs of rows interleaved */
        t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {   /* v[i + c] lane k: column 4k + c of rows i .. i+3 */
        v[i] = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t[i]), _mm256_castps_pd(t[i + 2])));
        v[i + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t[i]), _mm256_castps_pd(t[i + 2])));
        v[i + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t[i + 1]), _mm256_castps_pd(t[i + 3])));
        v[i + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t[i + 1]), _mm256_castps_pd(t[i + 3])));
    }
    for (int i = 0; i < 4; ++i) {   /* v[c]: column c of the 8 rows */
        t[i] = _mm256_permute2f128_ps(v[i], v[i + 4], 0x20);
        t[i + 4] = _mm256_permute2f128_ps(v[i], v[i + 4], 0x31);
    }
    for (int i = 0; i < 8; ++i) v[i] = t[i];
}

/* Lanes [0, count) set: a mask for maskload (the sign bit of each lane). */
static inline __m256i sbx2_first_lanes(size_t count)
{
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)count), index);
}

static inline __attribute__((always_inline)) __m256 sbx2_row_sum_term(__m256 x, __m256 mean,
                                                                       const int squares)
{
    if (!squares) return x;
    const __m256 d = _mm256_sub_ps(x, mean);
    return _mm256_mul_ps(d, d);
}

/* Rows [0, rows), rows <= 8: acc[r] for each. */
static inline __attribute__((always_inline)) void
sbx2_row_sums8(const float *x, size_t rows, size_t n, const float *mean, float *acc,
               const int squares)
{
    const __m256i live = sbx2_first_lanes(rows);
    const __m256 m = squares ? _mm256_maskload_ps(mean, live) : _mm256_setzero_ps();
    __m256 sum = _mm256_setzero_ps();
    __m256 v[8];
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        for (size_t r = 0; r < 8; ++r)
            v[r] = r < rows ? _mm256_loadu_ps(x + r * n + j) : _mm256_setzero_ps();
        sbx2_transpose8(v);
        for (int t = 0; t < 8; ++t) sum = _mm256_add_ps(sum, sbx2_row_sum_term(v[t], m, squares));
    }
    if (j < n) {   /* the last n - j < 8 columns */
        const __m256i cols = sbx2_first_lanes(n - j);
        for (size_t r = 0; r < 8; ++r)
            v[r] = r < rows ? _mm256_maskload_ps(x + r * n + j, cols) : _mm256_setzero_ps();
        sbx2_transpose8(v);
        for (size_t t = 0; t < n - j; ++t)
            sum = _mm256_add_ps(sum, sbx2_row_sum_term(v[t], m, squares));
    }
    _mm256_maskstore_ps(acc, live, sum);
}

/* acc[r] for r < rows (1 to 16) of rows n floats apart: the sum of x over
 * the row, or with mean, of (x - mean[r])^2; eight rows at a time. */
static inline void sbx2_row_sums(const float *x, size_t rows, size_t n, const float *mean,
                                 float *acc)
{
    for (size_t r = 0; r < rows; r += 8) {
        const size_t count = rows - r < 8 ? rows - r : 8;
        if (mean)
            sbx2_row_sums8(x + r * n, count, n, mean + r, acc + r, 1);
        else
            sbx2_row_sums8(x + r * n, count, n, NULL, acc + r, 0);
    }
}
#endif
