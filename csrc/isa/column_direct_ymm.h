/* column_direct_template.h over 256-bit AVX vectors, for the x86 paths
 * with AVX2 and FMA (avx2, avx512): 8 rows of A per vector. An 8 x 8 block
 * of A is loaded as eight 128-bit halves, rows i and i + 4 in one vector,
 * and four in-lane 4 x 4 transposes (16 shuffles) make its 8 columns.
 * The including file has -mavx2 -mfma and instantiates the kernels with
 * SB_COLUMN_DIRECT(name, 1). */
#ifndef SB_COLUMN_DIRECT_YMM_H
#define SB_COLUMN_DIRECT_YMM_H

#include <immintrin.h>
#include <stddef.h>

#define CD_W 8
/* blocks at once: 4 ran no faster in cache and 1.4x slower from memory
 * (4096 x 4096: 32 rows streamed at once); 2 x 4 accumulators and 8
 * columns fit AVX2's 16 registers */
#define CD_MAX_BLOCKS 2
typedef __m256 cd_vec;
#define cd_zero() _mm256_setzero_ps()
#define cd_load(p) _mm256_loadu_ps(p)
#define cd_store(p, v) _mm256_storeu_ps((p), (v))
#define cd_splat(x) _mm256_set1_ps(x)
#define cd_add(a, b) _mm256_add_ps((a), (b))
#define cd_mul(a, b) _mm256_mul_ps((a), (b))
#define cd_fma(acc, a, b) _mm256_fmadd_ps((a), (b), (acc))

/* lanes below n (1 to 7) */
static inline __attribute__((always_inline)) __m256i cd_part_mask(size_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#define cd_load_part(p, n) _mm256_maskload_ps((p), cd_part_mask(n))
#define cd_store_part(p, v, n) _mm256_maskstore_ps((p), cd_part_mask(n), (v))

/* NaN as 0x7FC00000, as every kernel stores it */
static inline __attribute__((always_inline)) __m256 cd_canon(__m256 v)
{
    const __m256 nan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
    return _mm256_blendv_ps(v, nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

/* col[q] lane i = row[i][p + q], q < 8. t[i] holds rows i and i + 4 of
 * columns p .. p + 3, u[i] of p + 4 .. p + 7. */
static inline __attribute__((always_inline)) void
cd_transpose(const float *const row[8], size_t p, __m256 col[8])
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

#include "isa/column_direct_template.h"

#endif
