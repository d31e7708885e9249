/* Max pooling's row kernels (ops/maxpool.c), one set per path, compiled with
 * that path's flags (pool_template.h; each path's pool_<path>.c). */
#ifndef SB_ISA_POOL_H
#define SB_ISA_POOL_H

#include <stddef.h>

/* For i < n: best[i] = take(best[i], src[i]), where take(b, v) is v when v
 * is greater than b or when b is NaN (no tap yet), and b otherwise; a NaN v
 * changes nothing. */
typedef void (*sb_max_pass_fn)(float *best, const float *src, size_t n);

/* For a <= ox < b: best[ox] = the taps taps[0][ox], taps[1][ox], ... (9 or
 * 4 of them) folded with take in that order from the first, a NaN result
 * stored as 0x7FC00000. */
typedef void (*sb_max_taps_fn)(const float *const *taps, float *best, size_t a, size_t b);

typedef struct sb_pool_config {
    sb_max_pass_fn pass;
    sb_max_taps_fn taps9, taps4;   /* 3x3 and 2x2 windows */
} sb_pool_config;

#endif
