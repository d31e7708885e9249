/* 8-lane float vectors over 256-bit AVX registers, FMA3 in fast mode: the
 * vector type of the avx2 path's kernels and of the avx512 path's 256-bit
 * exact tiles (avx512/ukernel_avx512_ymm.c), for ukernel_template.h. */
#ifndef SB_VEC_YMM_H
#define SB_VEC_YMM_H

#include <immintrin.h>

typedef __m256 vec_t;
#define vec_load(p) _mm256_loadu_ps(p)
#define vec_store(p, v) _mm256_storeu_ps((p), (v))
#define vec_splat(x) _mm256_set1_ps(x)
#define vec_zero() _mm256_setzero_ps()
#define vec_add(a, b) _mm256_add_ps((a), (b))
#define vec_mul(a, b) _mm256_mul_ps((a), (b))
#define vec_fma(acc, a, b) _mm256_fmadd_ps((a), (b), (acc))
#define vec_canon(v)                                                                        \
    _mm256_blendv_ps((v), _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)),               \
                     _mm256_cmp_ps((v), (v), _CMP_UNORD_Q))

#endif
