/* The channels-in-lanes kernel of kernels.h (sb_lanes_kernel_fn), written
 * once for a path whose vectors hold exactly one packed strip of weights
 * (UKR_LANES == the convolution tile's MR): included after
 * ukernel_template.h, whose vec_t, ukr_step and UKR_FOR it uses.
 *
 * It is the tile kernel turned over. The tile puts output positions in the
 * lanes and broadcasts a weight; this kernel loads a weight vector (one
 * strip's k-row, UKR_LANES output channels) and broadcasts an input value,
 * for up to SB_LANES_MAX_ROWS output positions and SB_LANES_MAX_STRIPS
 * strips at once. Each output is still its products in increasing k, one
 * multiply then one add each (one fused multiply-add in fast mode), from +0:
 * the tile's operations in the tile's order, so the tile's bits. */
#if !defined(UKR_LANES) || UKR_LANES != SB_LANES_WIDTH
#error "include ukernel_template.h first, over vectors of SB_LANES_WIDTH floats"
#endif
#if !defined(__AVX__)
#error "the transposed store is written for 256-bit AVX vectors"
#endif

#include "isa/lanes_put.h"

static inline __attribute__((always_inline)) void
ukr_lanes(const int R, const int S, size_t kc, const float *restrict ap, ptrdiff_t strip_step,
          const float *restrict x, const ptrdiff_t *restrict off, float *restrict out,
          int accumulate, float *restrict y, ptrdiff_t y_row, size_t channels,
          const float *restrict bias, float floor, const int fused)
{
    enum { LD = SB_LANES_OUT_LD };
    vec_t acc[SB_LANES_MAX_ROWS][SB_LANES_NARROW_STRIPS];
#pragma GCC unroll 8
    UKR_FOR(r, R, SB_LANES_MAX_ROWS)
#pragma GCC unroll 4
        UKR_FOR(s, S, SB_LANES_NARROW_STRIPS)
            acc[r][s] = accumulate ? vec_load(out + r * LD + s * UKR_LANES) : vec_zero();

    for (size_t p = 0; p < kc; ++p) {
        const float *restrict xp = x + off[p];
        vec_t w[SB_LANES_NARROW_STRIPS];
#pragma GCC unroll 4
        UKR_FOR(s, S, SB_LANES_NARROW_STRIPS)
            w[s] = vec_load(ap + s * strip_step + (ptrdiff_t)p * UKR_LANES);
#pragma GCC unroll 8
        UKR_FOR(r, R, SB_LANES_MAX_ROWS) {
            vec_t b = vec_splat(xp[r]);
#pragma GCC unroll 4
            UKR_FOR(s, S, SB_LANES_NARROW_STRIPS)
                acc[r][s] = ukr_step(acc[r][s], w[s], b, fused);   /* weight * input */
        }
    }

    if (!y) {
#pragma GCC unroll 8
        UKR_FOR(r, R, SB_LANES_MAX_ROWS)
#pragma GCC unroll 4
            UKR_FOR(s, S, SB_LANES_NARROW_STRIPS)
                vec_store(out + r * LD + s * UKR_LANES, vec_canon(acc[r][s]));
        return;
    }
#pragma GCC unroll 4
    UKR_FOR(s, S, SB_LANES_NARROW_STRIPS) {
        __m256 block[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) block[r] = r < R ? acc[r][s] : vec_zero();
        ukr_lanes_finish(block, (size_t)R, bias + s * UKR_LANES, floor, y, y_row,
                         (size_t)(s * UKR_LANES), channels);
    }
}

/* sb_lanes_store_fn: finished sums in the kernel's layout (out, rows of
 * SB_LANES_OUT_LD) turned over as the kernel's last k-block does, with no
 * arithmetic: the channel-lanes convolution's stores after an epilogue run
 * on the sums themselves. */
static inline void ukr_lanes_store(size_t rows, size_t strips, const float *out, float *y,
                                   ptrdiff_t y_row, size_t channels)
{
    for (size_t s = 0; s < strips; ++s) {
        __m256 block[8];
        for (size_t r = 0; r < 8; ++r)
            block[r] = r < rows ? _mm256_loadu_ps(out + r * SB_LANES_OUT_LD + s * UKR_LANES)
                                : vec_zero();
        ukr_lanes_put(block, rows, y, y_row, s * UKR_LANES, channels);
    }
}
#define UKR_DEFINE_LANES_STORE(name)                                                         \
    void sb_lanes_store_##name(size_t rows, size_t strips, const float *out, float *y,       \
                               ptrdiff_t y_row, size_t channels)                             \
    {                                                                                        \
        ukr_lanes_store(rows, strips, out, y, y_row, channels);                              \
    }

#if SB_LANES_MAX_ROWS != 7 || SB_LANES_NARROW_STRIPS != 3
#error "UKR_LANES_CASES lists rows 1..7 and strips 1..3"
#endif
#define UKR_LANES_CASE(R, S, fused)                                                          \
    case (R) * 4 + (S):                                                                      \
        ukr_lanes(R, S, kc, ap, strip_step, x, off, out, accumulate, y, y_row, channels,     \
                  bias, floor, fused);                                                       \
        return;
#define UKR_LANES_ROW(R, fused)                                                              \
    UKR_LANES_CASE(R, 1, fused) UKR_LANES_CASE(R, 2, fused) UKR_LANES_CASE(R, 3, fused)
/* Every (rows, strips) an instance of its own: loops of constant bounds,
 * accumulators in registers. */
#define UKR_DEFINE_LANES(name, fused)                                                        \
    void sb_lanes_##name(size_t rows, size_t strips, size_t kc, const float *ap,              \
                         ptrdiff_t strip_step, const float *x, const ptrdiff_t *off,         \
                         float *out, int accumulate, float *y, ptrdiff_t y_row,              \
                         size_t channels, const float *bias, float floor)                    \
    {                                                                                        \
        switch (rows * 4 + strips) {                                                         \
            UKR_LANES_ROW(1, fused) UKR_LANES_ROW(2, fused) UKR_LANES_ROW(3, fused)          \
            UKR_LANES_ROW(4, fused) UKR_LANES_ROW(5, fused) UKR_LANES_ROW(6, fused)          \
            UKR_LANES_ROW(7, fused)                                                          \
        default: return;   /* the caller checks rows and strips */                           \
        }                                                                                    \
    }
