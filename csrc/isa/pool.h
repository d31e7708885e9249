/* Max pooling's row kernels (kernels/maxpool.c), one set per path, compiled with
 * that path's flags (pool_template.h; each path's pool_<path>.c).
 *
 * take(b, v) is v when v is greater than b or when b is NaN (no tap yet),
 * and b otherwise; a NaN v changes nothing. Folding taps with take from the
 * first gives the first of the largest non-NaN taps (NaN when all are NaN),
 * and that is associative: folding each window row, then the rows' results
 * in order, gives the fold of all the taps in (ky, kx) order. */
#ifndef SB_ISA_POOL_H
#define SB_ISA_POOL_H

#include <stddef.h>

/* For i < n: best[i] = take(best[i], src[i]). */
typedef void (*sb_max_pass_fn)(float *best, const float *src, size_t n);

/* A row fold, KW taps (2 or 3) at column stride SW (1 or 2): for j < n,
 * h[j] = row[SW*j], row[SW*j + 1], ... folded with take (NaN kept). */
typedef void (*sb_max_hfold_fn)(const float *row, float *h, size_t n);

/* A column fold of K rows (1 to 3): for j < n, best[j] = rows[0][j],
 * rows[1][j], ... folded with take, a NaN result stored as 0x7FC00000. */
typedef void (*sb_max_vfold_fn)(const float *const *rows, float *best, size_t n);

/* The same three with first(b, v) = (v > b ? v : b) for take, each row
 * fold starting from -inf (pool_template.h's pool_first): one max where
 * take is two compares and two selects. Equal to take's fold wherever the
 * result is above -inf; the column folds store no canonical NaN (there is
 * none) and say whether any output is -inf, which the caller folds again
 * with take. */
typedef int (*sb_max_first_pass_fn)(float *best, const float *src, size_t n);
typedef int (*sb_max_first_vfold_fn)(const float *const *rows, float *best, size_t n);

typedef struct sb_pool_config {
    sb_max_pass_fn pass;
    sb_max_hfold_fn hfold[2][2];   /* [KW - 2][SW - 1] */
    sb_max_vfold_fn vfold[3];      /* [K - 1] */
    sb_max_first_pass_fn first_pass;   /* returns: any best[i] is -inf */
    sb_max_hfold_fn first_hfold[2][2];
    sb_max_first_vfold_fn first_vfold[3];   /* returns: any best[j] is -inf */
} sb_pool_config;

#endif
