/* column_direct_template.h over the 4-lane vectors of vec4.h (SSE2, NEON,
 * WebAssembly SIMD128), for the vec4 and neon paths: 4 rows of A per
 * vector, each 4 x 4 block of A loaded as four rows and turned into four
 * columns by eight shuffles. The including file has included vec4.h
 * (VEC4_AVAILABLE) and instantiates the kernels with
 * SB_COLUMN_DIRECT(name, fused_flag): vec4_fma fuses exactly where the
 * path's tiles do. */
#ifndef SB_COLUMN_DIRECT_VEC4_H
#define SB_COLUMN_DIRECT_VEC4_H

#include <stddef.h>
#include "isa/vec4.h"

#define CD_W 4
/* blocks at once: 2 x 4 accumulators and 4 columns fit 16 registers */
#define CD_MAX_BLOCKS 2
typedef vec4 cd_vec;
#define cd_zero() vec4_zero()
#define cd_load(p) vec4_load(p)
#define cd_store(p, v) vec4_store((p), (v))
#define cd_splat(x) vec4_splat(x)
#define cd_add(a, b) vec4_add((a), (b))
#define cd_mul(a, b) vec4_mul((a), (b))
#define cd_fma(acc, a, b) vec4_fma((acc), (a), (b))
#define cd_canon(v) vec4_canon(v)

/* the first n (1 to 3) lanes from p, the others +0; and back */
static inline __attribute__((always_inline)) vec4 cd_load_part(const float *p, size_t n)
{
    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t i = 0; i < n; ++i) part[i] = p[i];
    return vec4_load(part);
}
static inline __attribute__((always_inline)) void cd_store_part(float *p, vec4 v, size_t n)
{
    float part[4];
    vec4_store(part, v);
    for (size_t i = 0; i < n; ++i) p[i] = part[i];
}

/* col[q] lane i = row[i][p + q], q < 4 */
static inline __attribute__((always_inline)) void
cd_transpose(const float *const row[4], size_t p, vec4 col[4])
{
    vec4 r0 = vec4_load(row[0] + p), r1 = vec4_load(row[1] + p);
    vec4 r2 = vec4_load(row[2] + p), r3 = vec4_load(row[3] + p);
    vec4 lo01 = vec4_zip_lo(r0, r1), lo23 = vec4_zip_lo(r2, r3);
    vec4 hi01 = vec4_zip_hi(r0, r1), hi23 = vec4_zip_hi(r2, r3);
    col[0] = vec4_lo64(lo01, lo23), col[1] = vec4_hi64(lo01, lo23);
    col[2] = vec4_lo64(hi01, hi23), col[3] = vec4_hi64(hi01, hi23);
}

#include "isa/column_direct_template.h"

#endif
