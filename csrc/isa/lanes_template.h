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

static inline __attribute__((always_inline)) void
ukr_lanes(const int R, const int S, size_t kc, const float *restrict ap, ptrdiff_t strip_step,
          const float *restrict x, const ptrdiff_t *restrict off, float *restrict out,
          int accumulate, const int fused)
{
    enum { LD = SB_LANES_OUT_LD };
    vec_t acc[SB_LANES_MAX_ROWS][SB_LANES_MAX_STRIPS];
#pragma GCC unroll 8
    UKR_FOR(r, R, SB_LANES_MAX_ROWS)
#pragma GCC unroll 4
        UKR_FOR(s, S, SB_LANES_MAX_STRIPS)
            acc[r][s] = accumulate ? vec_load(out + r * LD + s * UKR_LANES) : vec_zero();

    for (size_t p = 0; p < kc; ++p) {
        const float *restrict xp = x + off[p];
        vec_t w[SB_LANES_MAX_STRIPS];
#pragma GCC unroll 4
        UKR_FOR(s, S, SB_LANES_MAX_STRIPS)
            w[s] = vec_load(ap + s * strip_step + (ptrdiff_t)p * UKR_LANES);
#pragma GCC unroll 8
        UKR_FOR(r, R, SB_LANES_MAX_ROWS) {
            vec_t b = vec_splat(xp[r]);
#pragma GCC unroll 4
            UKR_FOR(s, S, SB_LANES_MAX_STRIPS)
                acc[r][s] = ukr_step(acc[r][s], w[s], b, fused);   /* weight * input */
        }
    }

#pragma GCC unroll 8
    UKR_FOR(r, R, SB_LANES_MAX_ROWS)
#pragma GCC unroll 4
        UKR_FOR(s, S, SB_LANES_MAX_STRIPS)
            vec_store(out + r * LD + s * UKR_LANES, vec_canon(acc[r][s]));
}

#if SB_LANES_MAX_ROWS != 7 || SB_LANES_MAX_STRIPS != 3
#error "UKR_LANES_CASES lists rows 1..7 and strips 1..3"
#endif
#define UKR_LANES_CASE(R, S, fused)                                                          \
    case (R) * 4 + (S):                                                                      \
        ukr_lanes(R, S, kc, ap, strip_step, x, off, out, accumulate, fused);                 \
        return;
#define UKR_LANES_ROW(R, fused)                                                              \
    UKR_LANES_CASE(R, 1, fused) UKR_LANES_CASE(R, 2, fused) UKR_LANES_CASE(R, 3, fused)
/* Every (rows, strips) an instance of its own: loops of constant bounds,
 * accumulators in registers. */
#define UKR_DEFINE_LANES(name, fused)                                                        \
    void sb_lanes_##name(size_t rows, size_t strips, size_t kc, const float *ap,              \
                         ptrdiff_t strip_step, const float *x, const ptrdiff_t *off,         \
                         float *out, int accumulate)                                         \
    {                                                                                        \
        switch (rows * 4 + strips) {                                                         \
            UKR_LANES_ROW(1, fused) UKR_LANES_ROW(2, fused) UKR_LANES_ROW(3, fused)          \
            UKR_LANES_ROW(4, fused) UKR_LANES_ROW(5, fused) UKR_LANES_ROW(6, fused)          \
            UKR_LANES_ROW(7, fused)                                                          \
        default: return;   /* the caller checks rows and strips */                           \
        }                                                                                    \
    }
