/* Few columns over A read in place (sb_column_direct_fn in kernels.h), for
 * x86 paths with AVX2 and FMA: 8 rows of A per 256-bit vector, transposed
 * in registers 8 columns of A at a time.
 *
 * Why: a matrix times one vector (n = 1) through the tile kernels computed
 * NR columns to keep one, and through the few-column kernel over packed A
 * it spent two thirds of its time packing A (a transpose through memory).
 * Here each 8 x 8 block of A is loaded as eight 128-bit halves, two rows to
 * a vector (row i and row i + 4), and four in-lane 4 x 4 transposes (16
 * shuffles) turn it into eight vectors, one per column p, lane r holding
 * A(r, p); then every output takes its products in increasing p, one
 * multiply and one add (fused in fast mode), as the tile kernel does. A
 * last block of fewer than 8 rows reads its last row again in the other
 * lanes and stores only its own; columns past the last whole 8 are read
 * one at a time. NaN is stored canonical.
 *
 * The including file defines nothing; it instantiates the kernels with
 * SB_COLUMN_DIRECT_YMM(name) after including <immintrin.h> (-mavx2 -mfma). */
#ifndef SB_COLUMN_DIRECT_YMM_H
#define SB_COLUMN_DIRECT_YMM_H

#include <immintrin.h>
#include <stddef.h>
#include "isa/kernels.h"

/* 8-row blocks at once: independent chains. 4 ran no faster in cache and
 * 1.4x slower from memory (4096 x 4096: 32 rows streamed at once). */
#define CD_MAX_BLOCKS 2

static inline __attribute__((always_inline)) __m256
cd_step(__m256 acc, __m256 a, __m256 x, const int fused)
{
    return fused ? _mm256_fmadd_ps(a, x, acc) : _mm256_add_ps(acc, _mm256_mul_ps(a, x));
}

/* NaN as 0x7FC00000, as every kernel stores it */
static inline __attribute__((always_inline)) __m256 cd_canon(__m256 v)
{
    const __m256 nan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
    return _mm256_blendv_ps(v, nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

/* Columns p .. p + 7 of 8 rows of A, the rows at row[0..7] + p: col[q]
 * lane i = row i's column p + q. t[i] holds rows i and i + 4 of columns
 * p .. p + 3, u[i] of p + 4 .. p + 7. */
static inline __attribute__((always_inline)) void
cd_transpose8(const float *const row[8], size_t p, __m256 col[8])
{
    __m256 t[4], u[4];
    _Pragma("GCC unroll 8")
    for (int i = 0; i < 4; ++i) {
        const float *lo = row[i] + p, *hi = row[i + 4] + p;
        t[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi), 1);
        u[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo + 4)),
                                    _mm_loadu_ps(hi + 4), 1);
    }
    __m256 a = _mm256_unpacklo_ps(t[0], t[1]), b = _mm256_unpackhi_ps(t[0], t[1]);
    __m256 c = _mm256_unpacklo_ps(t[2], t[3]), d = _mm256_unpackhi_ps(t[2], t[3]);
    col[0] = _mm256_shuffle_ps(a, c, 0x44), col[1] = _mm256_shuffle_ps(a, c, 0xEE);
    col[2] = _mm256_shuffle_ps(b, d, 0x44), col[3] = _mm256_shuffle_ps(b, d, 0xEE);
    a = _mm256_unpacklo_ps(u[0], u[1]), b = _mm256_unpackhi_ps(u[0], u[1]);
    c = _mm256_unpacklo_ps(u[2], u[3]), d = _mm256_unpackhi_ps(u[2], u[3]);
    col[4] = _mm256_shuffle_ps(a, c, 0x44), col[5] = _mm256_shuffle_ps(a, c, 0xEE);
    col[6] = _mm256_shuffle_ps(b, d, 0x44), col[7] = _mm256_shuffle_ps(b, d, 0xEE);
}

/* B blocks of 8 rows from row a, the last with `live` (1 to 8) rows: the
 * rest of its lanes read its last row again and are never stored. (B, C and
 * fused are constants of an instance.) */
static inline __attribute__((always_inline)) void
cd_blocks(const int B, const int C, const int fused, size_t live, size_t kc, const float *a,
          ptrdiff_t a_row, const float *x, ptrdiff_t x_step, ptrdiff_t x_col, float *y,
          ptrdiff_t y_col, int accumulate)
{
    const float *row[CD_MAX_BLOCKS][8];
    _Pragma("GCC unroll 8")
    for (int b = 0; b < B; ++b)
        _Pragma("GCC unroll 8")
        for (int i = 0; i < 8; ++i) {
            size_t r = b < B - 1 || (size_t)i < live ? (size_t)i : live - 1;
            row[b][i] = a + (ptrdiff_t)(8 * (size_t)b + r) * a_row;
        }
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i last_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)live), lanes);
    __m256 acc[CD_MAX_BLOCKS][SB_COLUMNS_MAX];
    _Pragma("GCC unroll 8")
    for (int b = 0; b < B; ++b)
        _Pragma("GCC unroll 8")
        for (int j = 0; j < C; ++j) {
            const float *src = y + j * y_col + 8 * b;
            acc[b][j] = !accumulate      ? _mm256_setzero_ps()
                        : b < B - 1 || live == 8 ? _mm256_loadu_ps(src)
                                                 : _mm256_maskload_ps(src, last_mask);
        }
    size_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        _Pragma("GCC unroll 8")
        for (int b = 0; b < B; ++b) {
            __m256 col[8];
            cd_transpose8(row[b], p, col);
            _Pragma("GCC unroll 8")
            for (int q = 0; q < 8; ++q)
                _Pragma("GCC unroll 8")
                for (int j = 0; j < C; ++j)
                    acc[b][j] = cd_step(
                        acc[b][j], col[q],
                        _mm256_broadcast_ss(x + (ptrdiff_t)(p + q) * x_step + j * x_col), fused);
        }
    }
    for (; p < kc; ++p) {   /* the last columns, one at a time */
        _Pragma("GCC unroll 8")
        for (int b = 0; b < B; ++b) {
            const float *const *r = row[b];
            __m256 col = _mm256_setr_ps(r[0][p], r[1][p], r[2][p], r[3][p], r[4][p], r[5][p],
                                        r[6][p], r[7][p]);
            _Pragma("GCC unroll 8")
            for (int j = 0; j < C; ++j)
                acc[b][j] = cd_step(
                    acc[b][j], col, _mm256_broadcast_ss(x + (ptrdiff_t)p * x_step + j * x_col),
                    fused);
        }
    }
    _Pragma("GCC unroll 8")
    for (int b = 0; b < B; ++b)
        _Pragma("GCC unroll 8")
        for (int j = 0; j < C; ++j) {
            float *dst = y + j * y_col + 8 * b;
            const __m256 v = cd_canon(acc[b][j]);
            if (b < B - 1 || live == 8) _mm256_storeu_ps(dst, v);
            else _mm256_maskstore_ps(dst, last_mask, v);
        }
}

/* Every row, C columns: CD_MAX_BLOCKS blocks at a time while they last
 * (CD_MAX_BLOCKS x 4 accumulators and 8 columns: AVX2's 16 registers),
 * then single blocks, the last of them possibly short. */
static inline __attribute__((always_inline)) void
cd_rows(const int C, const int fused, size_t rows, size_t kc, const float *a, ptrdiff_t a_row,
        const float *x, ptrdiff_t x_step, ptrdiff_t x_col, float *y, ptrdiff_t y_col,
        int accumulate)
{
    const int wide = CD_MAX_BLOCKS;
    size_t r = 0;
    for (; r + 8 * (size_t)wide <= rows; r += 8 * (size_t)wide)
        cd_blocks(wide, C, fused, 8, kc, a + (ptrdiff_t)r * a_row, a_row, x, x_step, x_col,
                  y + r, y_col, accumulate);
    for (; r + 8 <= rows; r += 8)
        cd_blocks(1, C, fused, 8, kc, a + (ptrdiff_t)r * a_row, a_row, x, x_step, x_col,
                  y + r, y_col, accumulate);
    if (r < rows)
        cd_blocks(1, C, fused, rows - r, kc, a + (ptrdiff_t)r * a_row, a_row, x, x_step,
                  x_col, y + r, y_col, accumulate);
}

static inline __attribute__((always_inline)) void
cd_any(const int fused, size_t rows, size_t kc, size_t cols, const float *a, ptrdiff_t a_row,
       const float *x, ptrdiff_t x_step, ptrdiff_t x_col, float *y, ptrdiff_t y_col,
       int accumulate)
{
    switch (cols) {
    case 1: cd_rows(1, fused, rows, kc, a, a_row, x, x_step, x_col, y, y_col, accumulate); break;
    case 2: cd_rows(2, fused, rows, kc, a, a_row, x, x_step, x_col, y, y_col, accumulate); break;
    case 3: cd_rows(3, fused, rows, kc, a, a_row, x, x_step, x_col, y, y_col, accumulate); break;
    default: cd_rows(4, fused, rows, kc, a, a_row, x, x_step, x_col, y, y_col, accumulate); break;
    }
}

#if SB_COLUMNS_MAX != 4
#error "cd_any dispatches SB_COLUMNS_MAX = 4 column counts"
#endif

#define SB_COLUMN_DIRECT_YMM(name)                                                    \
    void sb_column_direct_##name##_exact(size_t rows, size_t kc, size_t cols,         \
                                         const float *a, ptrdiff_t a_row,             \
                                         const float *x, ptrdiff_t x_step,            \
                                         ptrdiff_t x_col, float *y, ptrdiff_t y_col,  \
                                         int accumulate)                              \
    {                                                                                 \
        cd_any(0, rows, kc, cols, a, a_row, x, x_step, x_col, y, y_col, accumulate);  \
    }                                                                                 \
    void sb_column_direct_##name##_fast(size_t rows, size_t kc, size_t cols,          \
                                        const float *a, ptrdiff_t a_row,              \
                                        const float *x, ptrdiff_t x_step,             \
                                        ptrdiff_t x_col, float *y, ptrdiff_t y_col,   \
                                        int accumulate)                               \
    {                                                                                 \
        cd_any(1, rows, kc, cols, a, a_row, x, x_step, x_col, y, y_col, accumulate);  \
    }

#endif
