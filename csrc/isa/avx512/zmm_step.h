/* The two operations every avx512 kernel outside the tile template repeats
 * (dw_flat_avx512.c, dw_lanes_avx512.c, lanes_wide_avx512.c): one product
 * added to a sum, separately rounded (exact mode) or fused (fast mode), and
 * NaN made canonical (0x7FC00000) before a store. */
#ifndef SB_ISA_AVX512_ZMM_STEP_H
#define SB_ISA_AVX512_ZMM_STEP_H
#include <immintrin.h>

static inline __attribute__((always_inline)) __m512 zmm_step(__m512 acc, __m512 w, __m512 x,
                                                             const int fused)
{
    return fused ? _mm512_fmadd_ps(w, x, acc) : _mm512_add_ps(acc, _mm512_mul_ps(w, x));
}

static inline __attribute__((always_inline)) __m512 zmm_canon(__m512 v)
{
    return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                              _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000)));
}
#endif
