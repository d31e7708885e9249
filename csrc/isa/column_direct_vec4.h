/* Few columns over A read in place (sb_column_direct_fn in kernels.h) over
 * the 4-lane vectors of vec4.h (SSE2, NEON, WebAssembly SIMD128): 4 rows of
 * A per vector, each 4 x 4 block of A transposed in registers (four loads,
 * eight shuffles), then every output takes its products in increasing p,
 * one multiply and one add (vec4_fma in fast mode: fused exactly where the
 * path's tiles fuse), as the tile kernel does. The 8-lane x86 version,
 * column_direct_ymm.h, says why. A last block of fewer than 4 rows reads its
 * last row again in the spare lanes and stores only its own; columns past
 * the last whole 4 are read one at a time. NaN is stored canonical.
 *
 * The including file has included vec4.h (VEC4_AVAILABLE) and instantiates
 * the kernels with SB_COLUMN_DIRECT_VEC4(name, fused_flag). */
#ifndef SB_COLUMN_DIRECT_VEC4_H
#define SB_COLUMN_DIRECT_VEC4_H

#include <stddef.h>
#include "isa/kernels.h"
#include "isa/vec4.h"

/* 4-row blocks at once: independent chains (2 x 4 accumulators and 4
 * columns: 16 registers hold them) */
#define CD4_MAX_BLOCKS 2

static inline __attribute__((always_inline)) vec4 cd4_step(vec4 acc, vec4 a, vec4 x,
                                                             const int fused)
{
    return fused ? vec4_fma(acc, a, x) : vec4_add(acc, vec4_mul(a, x));
}

/* B blocks of 4 rows from row a, the last with `live` (1 to 4) rows. */
static inline __attribute__((always_inline)) void
cd4_blocks(const int B, const int C, const int fused, size_t live, size_t kc, const float *a,
           ptrdiff_t a_row, const float *x, ptrdiff_t x_step, ptrdiff_t x_col, float *y,
           ptrdiff_t y_col, int accumulate)
{
    const float *row[CD4_MAX_BLOCKS][4];
    _Pragma("GCC unroll 8")
    for (int b = 0; b < B; ++b)
        _Pragma("GCC unroll 8")
        for (int i = 0; i < 4; ++i) {
            size_t r = b < B - 1 || (size_t)i < live ? (size_t)i : live - 1;
            row[b][i] = a + (ptrdiff_t)(4 * (size_t)b + r) * a_row;
        }
    vec4 acc[CD4_MAX_BLOCKS][SB_COLUMNS_MAX];
    _Pragma("GCC unroll 8")
    for (int b = 0; b < B; ++b)
        _Pragma("GCC unroll 8")
        for (int j = 0; j < C; ++j) {
            const float *src = y + j * y_col + 4 * b;
            if (!accumulate) {
                acc[b][j] = vec4_zero();
            } else if (b < B - 1 || live == 4) {
                acc[b][j] = vec4_load(src);
            } else {
                float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                for (size_t i = 0; i < live; ++i) part[i] = src[i];
                acc[b][j] = vec4_load(part);
            }
        }
    size_t p = 0;
    for (; p + 4 <= kc; p += 4) {
        _Pragma("GCC unroll 8")
        for (int b = 0; b < B; ++b) {
            const float *const *r = row[b];
            vec4 r0 = vec4_load(r[0] + p), r1 = vec4_load(r[1] + p);
            vec4 r2 = vec4_load(r[2] + p), r3 = vec4_load(r[3] + p);
            vec4 lo01 = vec4_zip_lo(r0, r1), lo23 = vec4_zip_lo(r2, r3);
            vec4 hi01 = vec4_zip_hi(r0, r1), hi23 = vec4_zip_hi(r2, r3);
            vec4 col[4] = {vec4_lo64(lo01, lo23), vec4_hi64(lo01, lo23),
                           vec4_lo64(hi01, hi23), vec4_hi64(hi01, hi23)};
            _Pragma("GCC unroll 8")
            for (int q = 0; q < 4; ++q)
                _Pragma("GCC unroll 8")
                for (int j = 0; j < C; ++j)
                    acc[b][j] = cd4_step(acc[b][j], col[q],
                                         vec4_splat(x[(ptrdiff_t)(p + q) * x_step + j * x_col]),
                                         fused);
        }
    }
    for (; p < kc; ++p) {   /* the last columns, one at a time */
        _Pragma("GCC unroll 8")
        for (int b = 0; b < B; ++b) {
            const float *const *r = row[b];
            const float v[4] = {r[0][p], r[1][p], r[2][p], r[3][p]};
            const vec4 col = vec4_load(v);
            _Pragma("GCC unroll 8")
            for (int j = 0; j < C; ++j)
                acc[b][j] = cd4_step(acc[b][j], col,
                                     vec4_splat(x[(ptrdiff_t)p * x_step + j * x_col]), fused);
        }
    }
    _Pragma("GCC unroll 8")
    for (int b = 0; b < B; ++b)
        _Pragma("GCC unroll 8")
        for (int j = 0; j < C; ++j) {
            float *dst = y + j * y_col + 4 * b;
            const vec4 v = vec4_canon(acc[b][j]);
            if (b < B - 1 || live == 4) {
                vec4_store(dst, v);
            } else {
                float part[4];
                vec4_store(part, v);
                for (size_t i = 0; i < live; ++i) dst[i] = part[i];
            }
        }
}

/* Every row, C columns: CD4_MAX_BLOCKS blocks at a time while they last,
 * then single blocks, the last of them possibly short. */
static inline __attribute__((always_inline)) void
cd4_rows(const int C, const int fused, size_t rows, size_t kc, const float *a, ptrdiff_t a_row,
         const float *x, ptrdiff_t x_step, ptrdiff_t x_col, float *y, ptrdiff_t y_col,
         int accumulate)
{
    size_t r = 0;
    for (; r + 4 * CD4_MAX_BLOCKS <= rows; r += 4 * CD4_MAX_BLOCKS)
        cd4_blocks(CD4_MAX_BLOCKS, C, fused, 4, kc, a + (ptrdiff_t)r * a_row, a_row, x, x_step,
                   x_col, y + r, y_col, accumulate);
    for (; r + 4 <= rows; r += 4)
        cd4_blocks(1, C, fused, 4, kc, a + (ptrdiff_t)r * a_row, a_row, x, x_step, x_col, y + r,
                   y_col, accumulate);
    if (r < rows)
        cd4_blocks(1, C, fused, rows - r, kc, a + (ptrdiff_t)r * a_row, a_row, x, x_step, x_col,
                   y + r, y_col, accumulate);
}

static inline __attribute__((always_inline)) void
cd4_any(const int fused, size_t rows, size_t kc, size_t cols, const float *a, ptrdiff_t a_row,
        const float *x, ptrdiff_t x_step, ptrdiff_t x_col, float *y, ptrdiff_t y_col,
        int accumulate)
{
    switch (cols) {
    case 1: cd4_rows(1, fused, rows, kc, a, a_row, x, x_step, x_col, y, y_col, accumulate); break;
    case 2: cd4_rows(2, fused, rows, kc, a, a_row, x, x_step, x_col, y, y_col, accumulate); break;
    case 3: cd4_rows(3, fused, rows, kc, a, a_row, x, x_step, x_col, y, y_col, accumulate); break;
    default: cd4_rows(4, fused, rows, kc, a, a_row, x, x_step, x_col, y, y_col, accumulate); break;
    }
}

#if SB_COLUMNS_MAX != 4
#error "cd4_any dispatches SB_COLUMNS_MAX = 4 column counts"
#endif

#define SB_COLUMN_DIRECT_VEC4(name, fused_flag)                                       \
    void sb_column_direct_##name##_exact(size_t rows, size_t kc, size_t cols,         \
                                         const float *a, ptrdiff_t a_row,             \
                                         const float *x, ptrdiff_t x_step,            \
                                         ptrdiff_t x_col, float *y, ptrdiff_t y_col,  \
                                         int accumulate)                              \
    {                                                                                 \
        cd4_any(0, rows, kc, cols, a, a_row, x, x_step, x_col, y, y_col, accumulate); \
    }                                                                                 \
    void sb_column_direct_##name##_fast(size_t rows, size_t kc, size_t cols,          \
                                        const float *a, ptrdiff_t a_row,              \
                                        const float *x, ptrdiff_t x_step,             \
                                        ptrdiff_t x_col, float *y, ptrdiff_t y_col,   \
                                        int accumulate)                               \
    {                                                                                 \
        cd4_any(fused_flag, rows, kc, cols, a, a_row, x, x_step, x_col, y, y_col,     \
                accumulate);                                                          \
    }

#endif
