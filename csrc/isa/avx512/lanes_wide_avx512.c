/* avx512 path: the convolution's channels-in-lanes kernel (sb_lanes_kernel_fn,
 * kernels.h) over 512-bit vectors, for CPUs that run them whole (Intel, AMD
 * Zen 5), where the 256-bit one (lanes_template.h) would use half of each
 * multiply-add.
 *
 * The weights stay packed for the convolution tile (strips of 8 output
 * channels): a vector is two strips' k-rows side by side (two 256-bit loads
 * and one insert), so 4 strips are two vectors and 7 positions x 4 strips are
 * 14 accumulators; per k, 7 broadcasts of the input and 14 multiply-adds.
 * The last k-block finishes and turns each half of a vector over as the
 * 256-bit kernel does (lanes_put.h's ukr_lanes_finish). Each output is
 * still its products in increasing k, weight times input, one multiply then
 * one add each (one fused multiply-add in fast mode), from +0: the tile's
 * operations in the tile's order, so the tile's bits. */
#include "isa/isa.h"

#if defined(__AVX512F__) && defined(__FMA__) && !defined(SB_EMULATE_AVX512)
#include <immintrin.h>
#include "isa/avx512/zmm_step.h"
#include "isa/lanes_put.h"

#if SB_LANES_MAX_ROWS != 7 || SB_LANES_WIDE_STRIPS != 4 || SB_LANES_WIDTH != 8
#error "the cases below list rows 1..7 and strips 1..4 of 8 channels"
#endif

/* Half h of v (the immediates literal: an unoptimized build does not fold
 * h into one). */
static inline __attribute__((always_inline)) __m256 half_of(__m512 v, const int h)
{
    return h ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))
             : _mm512_castps512_ps256(v);
}

/* R positions x S strips; V = ceil(S / 2) vectors a position, the last one
 * half used when S is odd (its upper half multiplies +0 weights and is never
 * stored). */
static inline __attribute__((always_inline)) void
lanes_wide(const int R, const int S, size_t kc, const float *restrict ap, ptrdiff_t strip_step,
           const float *restrict x, const ptrdiff_t *restrict off, float *restrict out,
           int accumulate, float *restrict y, ptrdiff_t y_row, size_t channels,
           const float *restrict bias, float floor, const int fused)
{
    enum { LD = SB_LANES_OUT_LD };
    const int V = (S + 1) / 2;
    __m512 acc[SB_LANES_MAX_ROWS][2];
#pragma GCC unroll 7
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v)
            acc[r][v] = accumulate ? _mm512_loadu_ps(out + r * LD + v * 16) : _mm512_setzero_ps();

    for (size_t p = 0; p < kc; ++p) {
        const float *restrict xp = x + off[p];
        __m512 w[2];
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) {
            const __m256 lo = _mm256_loadu_ps(ap + 2 * v * strip_step + (ptrdiff_t)p * 8);
            const __m256 hi = 2 * v + 1 < S
                ? _mm256_loadu_ps(ap + (2 * v + 1) * strip_step + (ptrdiff_t)p * 8)
                : _mm256_setzero_ps();
            w[v] = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)),
                                                       _mm256_castps_pd(hi), 1));
        }
#pragma GCC unroll 7
        for (int r = 0; r < R; ++r) {
            const __m512 b = _mm512_set1_ps(xp[r]);
#pragma GCC unroll 2
            for (int v = 0; v < V; ++v) acc[r][v] = zmm_step(acc[r][v], w[v], b, fused);
        }
    }

    if (!y) {
#pragma GCC unroll 7
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
            for (int v = 0; v < V; ++v)
                _mm512_storeu_ps(out + r * LD + v * 16, zmm_canon(acc[r][v]));
        return;
    }
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) {   /* each strip finished as the 256-bit kernel does */
        __m256 block[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r)
            block[r] = r < R ? half_of(acc[r][s / 2], s % 2) : _mm256_setzero_ps();
        ukr_lanes_finish(block, (size_t)R, bias + s * 8, floor, y, y_row, (size_t)(s * 8),
                         channels);
    }
}

#define WIDE_CASE(R, S, fused)                                                               \
    case (R) * 5 + (S):                                                                      \
        lanes_wide(R, S, kc, ap, strip_step, x, off, out, accumulate, y, y_row, channels,    \
                   bias, floor, fused);                                                      \
        return;
#define WIDE_ROW(R, fused)                                                                   \
    WIDE_CASE(R, 1, fused) WIDE_CASE(R, 2, fused) WIDE_CASE(R, 3, fused) WIDE_CASE(R, 4, fused)
/* Every (rows, strips) an instance of its own: loops of constant bounds,
 * accumulators in registers. */
#define DEFINE_WIDE(name, fused)                                                             \
    void name(size_t rows, size_t strips, size_t kc, const float *ap, ptrdiff_t strip_step,  \
              const float *x, const ptrdiff_t *off, float *out, int accumulate, float *y,    \
              ptrdiff_t y_row, size_t channels, const float *bias, float floor)              \
    {                                                                                        \
        switch (rows * 5 + strips) {                                                         \
            WIDE_ROW(1, fused) WIDE_ROW(2, fused) WIDE_ROW(3, fused) WIDE_ROW(4, fused)      \
            WIDE_ROW(5, fused) WIDE_ROW(6, fused) WIDE_ROW(7, fused)                         \
        default: return;   /* the caller checks rows and strips */                           \
        }                                                                                    \
    }

DEFINE_WIDE(sb_lanes_wide_avx512_exact, 0)
DEFINE_WIDE(sb_lanes_wide_avx512_fast, 1)
#endif
