/* avx512 path: the serial row sums (kernels/reduce.c, kernels/norm.c;
 * docs/exact-ops.md, "Reductions"), up to 16 contiguous rows at once, one row
 * a lane.
 *
 * Each row's sum runs over j = 0, 1, ..., n-1 from +0, one float32 add per
 * term; with `mean`, the terms are d * d, d = x_j - mean[r] (one rounded
 * subtract, multiply and add each, never fused). The generic loop
 * (unary_template.h's sb_row_sums_serial) gathers element j of each row into
 * vectors one float at a time
 * (GlobalAveragePool over MobileNetV3's 672 x 14 x 14 map: 38 us, against
 * 9 us for ONNX Runtime's blocked layout). Here 16 rows x 16 columns are
 * loaded as 16 vectors and transposed in registers, so that vector t holds
 * column j + t of every row; the adds then take t = 0, 1, ..., 15 in order:
 * the same operations on the same values in the same order per row, so the
 * same bits. Rows past `rows` and columns past n are loaded as +0 and never
 * added to a stored sum. */
#ifndef SB_ISA_AVX512_ROW_SUMS_H
#define SB_ISA_AVX512_ROW_SUMS_H
#include <immintrin.h>
#include <stddef.h>

/* v[r] lane c <- v[c] lane r: 16 x 16 floats, four rounds of shuffles. */
static inline __attribute__((always_inline)) void sbx_transpose16(__m512 v[16])
{
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {   /* per 128-bit lane: pairs of rows interleaved */
        t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {   /* v[i + c] lane k: column 4k + c of rows i .. i+3 */
        v[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
        v[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
        v[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
        v[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    }
    for (int i = 0; i < 4; ++i) {   /* 128-bit lanes regrouped: rows 0-7, then 8-15 */
        t[i] = _mm512_shuffle_f32x4(v[i], v[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(v[i], v[i + 4], 0xdd);
        t[i + 8] = _mm512_shuffle_f32x4(v[i + 8], v[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(v[i + 8], v[i + 12], 0xdd);
    }
    for (int i = 0; i < 4; ++i) {   /* v[c]: column c of the 16 rows */
        v[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        v[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
        v[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
        v[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xdd);
    }
}

static inline __attribute__((always_inline)) __m512 sbx_row_sum_term(__m512 x, __m512 mean,
                                                                      const int squares)
{
    if (!squares) return x;
    const __m512 d = _mm512_sub_ps(x, mean);
    return _mm512_mul_ps(d, d);
}

/* Columns [j, j + 16) of the rows into v (column t of row r: v[t] lane r),
 * the first `cols` of them, rows past `rows` +0. */
static inline __attribute__((always_inline)) void
sbx_row_block(const float *x, size_t rows, size_t n, size_t j, __mmask16 cols, __m512 v[16])
{
    for (size_t r = 0; r < 16; ++r)
        v[r] = r < rows ? _mm512_maskz_loadu_ps(cols, x + r * n + j) : _mm512_setzero_ps();
    sbx_transpose16(v);
}

static inline __attribute__((always_inline)) void
sbx_row_sums_of(const float *x, size_t rows, size_t n, const float *mean, float *acc,
                const int squares)
{
    const __mmask16 live = (__mmask16)((1u << rows) - 1u);
    const __m512 m = squares ? _mm512_maskz_loadu_ps(live, mean) : _mm512_setzero_ps();
    __m512 sum = _mm512_setzero_ps();
    __m512 v[16];
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        sbx_row_block(x, rows, n, j, (__mmask16)0xffff, v);
        for (int t = 0; t < 16; ++t) sum = _mm512_add_ps(sum, sbx_row_sum_term(v[t], m, squares));
    }
    if (j < n) {   /* the last n - j < 16 columns */
        sbx_row_block(x, rows, n, j, (__mmask16)((1u << (n - j)) - 1u), v);
        for (size_t t = 0; t < n - j; ++t)
            sum = _mm512_add_ps(sum, sbx_row_sum_term(v[t], m, squares));
    }
    _mm512_mask_storeu_ps(acc, live, sum);
}

/* acc[r] for r < rows (1 to 16) of rows n floats apart: the sum of x over
 * the row, or with mean, of (x - mean[r])^2. */
static inline void sbx_row_sums(const float *x, size_t rows, size_t n, const float *mean,
                                float *acc)
{
    if (mean)
        sbx_row_sums_of(x, rows, n, mean, acc, 1);
    else
        sbx_row_sums_of(x, rows, n, NULL, acc, 0);
}
#endif
