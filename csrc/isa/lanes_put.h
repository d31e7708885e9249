/* The channels-in-lanes kernels' last stores (kernels.h,
 * sb_lanes_kernel_fn): blocks of 8 output positions x 8 channels turned
 * over in registers and stored to the NCHW planes. Shared by the 256-bit
 * kernels (lanes_template.h) and avx512's 512-bit ones, which store each
 * half of a vector so. */
#ifndef SB_ISA_LANES_PUT_H
#define SB_ISA_LANES_PUT_H
#if !defined(__AVX__)
#error "the transposed store is written for 256-bit AVX vectors"
#endif
#include <immintrin.h>
#include <stddef.h>

/* rows[i] becomes column i of the 8 x 8 block (the usual unpack, shuffle and
 * lane-swap transpose): moves, no arithmetic. */
static inline __attribute__((always_inline)) void ukr_transpose8(__m256 r[8])
{
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* block[r] (r < rows, one output position each, 8 channels in the lanes)
 * turned over in registers and stored: channel first + i's positions as one
 * masked run of its output row y + (first + i) * y_row, for first + i <
 * channels. The kernel's last k-block and sb_lanes_store_fn both store so. */
static inline __attribute__((always_inline)) void
ukr_lanes_put(__m256 block[8], size_t rows, float *restrict y, ptrdiff_t y_row, size_t first,
              size_t channels)
{
#if defined(__AVX512VL__)   /* AMD runs AVX's vmaskmovps store as microcode */
    const __mmask8 live = (__mmask8)((1u << rows) - 1u);
#define UKR_LANES_STORE(p, v) _mm256_mask_storeu_ps((p), live, (v))
#else
    const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)rows),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
#define UKR_LANES_STORE(p, v) _mm256_maskstore_ps((p), live, (v))
#endif
    ukr_transpose8(block);
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i)
        if (first + (size_t)i < channels)
            UKR_LANES_STORE(y + (ptrdiff_t)(first + (size_t)i) * y_row, block[i]);
#undef UKR_LANES_STORE
}

/* One strip's last sums (sums[r] for positions r < rows; the rest +0) put as
 * the kernels' last k-block does, after the epilogue's first steps lane by
 * lane, without branches: + the channel's bias (bias8, -0 for none: v + -0
 * is v), then 0 where v <= floor (relu: floor 0; none: floor NaN, which no v
 * is <=), NaN canonical. Both kernels (256- and 512-bit) finish so, so their
 * bits are one. */
static inline __attribute__((always_inline)) void
ukr_lanes_finish(__m256 sums[8], size_t rows, const float *bias8, float floor, float *restrict y,
                 ptrdiff_t y_row, size_t first, size_t channels)
{
    const __m256 b = _mm256_loadu_ps(bias8), lo = _mm256_set1_ps(floor);
    const __m256 zero = _mm256_setzero_ps();
    const __m256 qnan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) {
        __m256 v = _mm256_add_ps(sums[r], b);
        v = _mm256_blendv_ps(v, zero, _mm256_cmp_ps(v, lo, _CMP_LE_OQ));
        sums[r] = _mm256_blendv_ps(v, qnan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    ukr_lanes_put(sums, rows, y, y_row, first, channels);
}

#endif
