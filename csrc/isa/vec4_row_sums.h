/* The serial row sums (kernels/reduce.c, kernels/norm.c) at 4 lanes (vec4.h: SSE2, NEON,
 * wasm SIMD128), as the avx512 and avx2 paths' (isa/avx512/row_sums_avx512.h):
 * 4 rows x 4 columns loaded as 4 vectors and transposed in registers, so that
 * vector t holds column j + t of 4 rows, and the adds take t = 0, 1, 2, 3 in
 * order; the last n mod 4 columns one row at a time, in order, after them.
 * Each row's sum is its terms in increasing j from +0, one float32 add each
 * (with `mean`, d * d, d = x_j - mean[r], unfused): the same bits as the
 * generic loop (unary_template.h's sb_row_sums_serial), which gathers element
 * j of each row a float at a time. Rows past `rows` read row 0 again and are never stored. */
#ifndef SB_VEC4_ROW_SUMS_H
#define SB_VEC4_ROW_SUMS_H
#include <stddef.h>
#include "isa/vec4.h"

#if VEC4_AVAILABLE
static inline __attribute__((always_inline)) vec4 sb_vec4_row_term(vec4 x, vec4 mean,
                                                                     const int squares)
{
    if (!squares) return x;
    const vec4 d = vec4_sub(x, mean);
    return vec4_mul(d, d);
}

/* Rows [0, rows), rows <= 4. */
static inline __attribute__((always_inline)) void
sb_vec4_row_sums4(const float *x, size_t rows, size_t n, const float *mean, float *acc,
                  const int squares)
{
    const float *r0 = x, *r1 = rows > 1 ? x + n : x, *r2 = rows > 2 ? x + 2 * n : x;
    const float *r3 = rows > 3 ? x + 3 * n : x;
    float m[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (squares)
        for (size_t r = 0; r < rows; ++r) m[r] = mean[r];
    const vec4 mv = vec4_load(m);
    vec4 sum = vec4_zero();
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        const vec4 t0 = vec4_zip_lo(vec4_load(r0 + j), vec4_load(r1 + j));
        const vec4 t1 = vec4_zip_hi(vec4_load(r0 + j), vec4_load(r1 + j));
        const vec4 t2 = vec4_zip_lo(vec4_load(r2 + j), vec4_load(r3 + j));
        const vec4 t3 = vec4_zip_hi(vec4_load(r2 + j), vec4_load(r3 + j));
        sum = vec4_add(sum, sb_vec4_row_term(vec4_lo64(t0, t2), mv, squares));   /* column j */
        sum = vec4_add(sum, sb_vec4_row_term(vec4_hi64(t0, t2), mv, squares));
        sum = vec4_add(sum, sb_vec4_row_term(vec4_lo64(t1, t3), mv, squares));
        sum = vec4_add(sum, sb_vec4_row_term(vec4_hi64(t1, t3), mv, squares));
    }
    float lanes[4];
    vec4_store(lanes, sum);
    for (size_t r = 0; r < rows; ++r) {   /* the last n mod 4 terms of each row */
        float s = lanes[r];
        for (size_t k = j; k < n; ++k) {
            float t = x[r * n + k];
            if (squares) {
                const float d = t - m[r];
                t = d * d;
            }
            s = s + t;
        }
        acc[r] = s;
    }
}

/* acc[r] for r < rows (1 to 16) of rows n floats apart: the sum of x over
 * the row, or with mean, of (x - mean[r])^2; four rows at a time. */
static inline void sb_vec4_row_sums(const float *x, size_t rows, size_t n, const float *mean,
                                    float *acc)
{
    for (size_t r = 0; r < rows; r += 4) {
        const size_t count = rows - r < 4 ? rows - r : 4;
        if (mean)
            sb_vec4_row_sums4(x + r * n, count, n, mean + r, acc + r, 1);
        else
            sb_vec4_row_sums4(x + r * n, count, n, NULL, acc + r, 0);
    }
}
#endif
#endif
