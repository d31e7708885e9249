/* Few columns over A read in place (sb_column_direct_fn in kernels.h),
 * written once for a vector of CD_W lanes: CD_W rows of A per vector, each
 * CD_W x CD_W block of A (CD_W columns of CD_W rows) turned into CD_W
 * column vectors in registers by the including file's cd_transpose, lane i
 * of column vector q holding A(r + i, p + q); then every output takes its
 * products in increasing p from +0 (or from y when accumulating), one
 * multiply and one add (cd_fma in fast mode: fused exactly where the path's
 * tiles fuse), as the tile kernel does, so the bits are the tile's.
 *
 * Why: a matrix times one vector (n = 1) through the tile kernels computed
 * NR columns to keep one, and through the few-column kernel over packed A
 * it spent two thirds of its time packing A (a transpose through memory).
 *
 * CD_MAX_BLOCKS blocks of rows run at once (independent chains); a last
 * block of fewer than CD_W rows reads its last row again in the spare lanes
 * and loads and stores only its own (cd_load_part, cd_store_part); columns
 * past the last whole CD_W are gathered one at a time. NaN is stored
 * canonical.
 *
 * The including file defines CD_W, CD_MAX_BLOCKS, the vector type cd_vec
 * and cd_zero(), cd_load(p), cd_store(p, v), cd_load_part(p, n),
 * cd_store_part(p, v, n), cd_splat(x), cd_add, cd_mul, cd_fma(acc, a, b)
 * (a * b + acc), cd_canon(v), cd_transpose(row, p, col); then instantiates
 * the kernels with SB_COLUMN_DIRECT(name, fused_flag). */
#ifndef SB_COLUMN_DIRECT_TEMPLATE_H
#define SB_COLUMN_DIRECT_TEMPLATE_H

#include <stddef.h>
#include "isa/kernels.h"

static inline __attribute__((always_inline)) cd_vec cd_step(cd_vec acc, cd_vec a, cd_vec x,
                                                           const int fused)
{
    return fused ? cd_fma(acc, a, x) : cd_add(acc, cd_mul(a, x));
}

/* B blocks of CD_W rows from row a, the last with `live` (1 to CD_W) rows.
 * (B, C and fused are constants of an instance.) */
static inline __attribute__((always_inline)) void
cd_blocks(const int B, const int C, const int fused, size_t live, size_t kc, const float *a,
          ptrdiff_t a_row, const float *x, ptrdiff_t x_step, ptrdiff_t x_col, float *y,
          ptrdiff_t y_col, int accumulate)
{
    const float *row[CD_MAX_BLOCKS][CD_W];
    _Pragma("GCC unroll 8")
    for (int b = 0; b < B; ++b)
        _Pragma("GCC unroll 8")
        for (int i = 0; i < CD_W; ++i) {
            size_t r = b < B - 1 || (size_t)i < live ? (size_t)i : live - 1;
            row[b][i] = a + (ptrdiff_t)(CD_W * (size_t)b + r) * a_row;
        }
    cd_vec acc[CD_MAX_BLOCKS][SB_COLUMNS_MAX];
    _Pragma("GCC unroll 8")
    for (int b = 0; b < B; ++b)
        _Pragma("GCC unroll 8")
        for (int j = 0; j < C; ++j) {
            const float *src = y + j * y_col + CD_W * b;
            acc[b][j] = !accumulate                 ? cd_zero()
                        : b < B - 1 || live == CD_W ? cd_load(src)
                                                    : cd_load_part(src, live);
        }
    size_t p = 0;
    for (; p + CD_W <= kc; p += CD_W) {
        _Pragma("GCC unroll 8")
        for (int b = 0; b < B; ++b) {
            cd_vec col[CD_W];
            cd_transpose(row[b], p, col);
            _Pragma("GCC unroll 8")
            for (int q = 0; q < CD_W; ++q)
                _Pragma("GCC unroll 8")
                for (int j = 0; j < C; ++j)
                    acc[b][j] = cd_step(acc[b][j], col[q],
                                        cd_splat(x[(ptrdiff_t)(p + q) * x_step + j * x_col]),
                                        fused);
        }
    }
    for (; p < kc; ++p) {   /* the last columns, one at a time */
        _Pragma("GCC unroll 8")
        for (int b = 0; b < B; ++b) {
            float v[CD_W];
            _Pragma("GCC unroll 8")
            for (int i = 0; i < CD_W; ++i) v[i] = row[b][i][p];
            const cd_vec col = cd_load(v);
            _Pragma("GCC unroll 8")
            for (int j = 0; j < C; ++j)
                acc[b][j] = cd_step(acc[b][j], col,
                                    cd_splat(x[(ptrdiff_t)p * x_step + j * x_col]), fused);
        }
    }
    _Pragma("GCC unroll 8")
    for (int b = 0; b < B; ++b)
        _Pragma("GCC unroll 8")
        for (int j = 0; j < C; ++j) {
            float *dst = y + j * y_col + CD_W * b;
            const cd_vec v = cd_canon(acc[b][j]);
            if (b < B - 1 || live == CD_W) cd_store(dst, v);
            else cd_store_part(dst, v, live);
        }
}

/* Every row, C columns: CD_MAX_BLOCKS blocks at a time while they last,
 * then single blocks, the last of them possibly short. */
static inline __attribute__((always_inline)) void
cd_rows(const int C, const int fused, size_t rows, size_t kc, const float *a, ptrdiff_t a_row,
        const float *x, ptrdiff_t x_step, ptrdiff_t x_col, float *y, ptrdiff_t y_col,
        int accumulate)
{
    size_t r = 0;
    for (; r + CD_W * CD_MAX_BLOCKS <= rows; r += CD_W * CD_MAX_BLOCKS)
        cd_blocks(CD_MAX_BLOCKS, C, fused, CD_W, kc, a + (ptrdiff_t)r * a_row, a_row, x, x_step,
                  x_col, y + r, y_col, accumulate);
    for (; r + CD_W <= rows; r += CD_W)
        cd_blocks(1, C, fused, CD_W, kc, a + (ptrdiff_t)r * a_row, a_row, x, x_step, x_col,
                  y + r, y_col, accumulate);
    if (r < rows)
        cd_blocks(1, C, fused, rows - r, kc, a + (ptrdiff_t)r * a_row, a_row, x, x_step, x_col,
                  y + r, y_col, accumulate);
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

#define SB_COLUMN_DIRECT(name, fused_flag)                                            \
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
        cd_any(fused_flag, rows, kc, cols, a, a_row, x, x_step, x_col, y, y_col,      \
               accumulate);                                                           \
    }

#endif
