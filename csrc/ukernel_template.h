/* The register microkernels, written once and instantiated per path.
 *
 * The including file defines: UKR_MR, UKR_NR, UKR_LANES, UKR_ROW_STRIPS,
 * vec_t and the operations vec_load, vec_store, vec_splat, vec_zero,
 * vec_add, vec_mul and vec_fma(acc, a, b) (acc + a*b; one rounding on a
 * fused path). UKR_DEFINE(path, fused) then defines the four kernels
 * sb_ukr_<path>_{exact,fast} and sb_row_<path>_{exact,fast}.
 *
 * Lanes hold different outputs (columns j), never different terms of one
 * output, so the vector width cannot change a result. Exact mode multiplies
 * and adds as two rounded operations; every file is compiled with
 * -ffp-contract=off so that the compiler cannot fuse them. */

#define UKR_NV (UKR_NR / UKR_LANES)
#define UKR_ROW_NV (UKR_ROW_STRIPS * UKR_NV)

static inline __attribute__((always_inline)) vec_t
ukr_step(vec_t acc, vec_t a, vec_t b, const int fused)
{
    return fused ? vec_fma(acc, a, b) : vec_add(acc, vec_mul(a, b));
}

/* The MR x NR tile: see sb_ukernel_fn in sb_internal.h. */
static inline __attribute__((always_inline)) void
ukr_tile(size_t kc, const float *restrict ap, const float *restrict bp, ptrdiff_t b_step,
         float *restrict c, ptrdiff_t ldc, int accumulate, const int fused)
{
    vec_t acc[UKR_MR][UKR_NV];
#pragma GCC unroll 32
    for (int r = 0; r < UKR_MR; ++r)
#pragma GCC unroll 8
        for (int v = 0; v < UKR_NV; ++v)
            acc[r][v] = accumulate ? vec_load(c + r * ldc + v * UKR_LANES) : vec_zero();

    for (size_t p = 0; p < kc; ++p) {
        vec_t b[UKR_NV];
#pragma GCC unroll 8
        for (int v = 0; v < UKR_NV; ++v)
            b[v] = vec_load(bp + v * UKR_LANES);
#pragma GCC unroll 32
        for (int r = 0; r < UKR_MR; ++r) {
            vec_t a = vec_splat(ap[r]);
#pragma GCC unroll 8
            for (int v = 0; v < UKR_NV; ++v)
                acc[r][v] = ukr_step(acc[r][v], a, b[v], fused);
        }
        ap += UKR_MR;
        bp += b_step;
    }

#pragma GCC unroll 32
    for (int r = 0; r < UKR_MR; ++r)
#pragma GCC unroll 8
        for (int v = 0; v < UKR_NV; ++v)
            vec_store(c + r * ldc + v * UKR_LANES, acc[r][v]);
}

/* One row of A times ROW_STRIPS strips of B: see sb_row_kernel_fn. */
static inline __attribute__((always_inline)) void
ukr_row(size_t kc, const float *restrict a, ptrdiff_t a_step, const float *restrict bp,
        ptrdiff_t b_step, ptrdiff_t strip_step, float *restrict c, int accumulate,
        const int fused)
{
    vec_t acc[UKR_ROW_NV];
#pragma GCC unroll 32
    for (int v = 0; v < UKR_ROW_NV; ++v)
        acc[v] = accumulate ? vec_load(c + v * UKR_LANES) : vec_zero();

    for (size_t p = 0; p < kc; ++p) {
        vec_t av = vec_splat(a[(ptrdiff_t)p * a_step]);
#pragma GCC unroll 8
        for (int s = 0; s < UKR_ROW_STRIPS; ++s)
#pragma GCC unroll 8
            for (int v = 0; v < UKR_NV; ++v)
                acc[s * UKR_NV + v] = ukr_step(acc[s * UKR_NV + v], av,
                                               vec_load(bp + s * strip_step + v * UKR_LANES), fused);
        bp += b_step;
    }

#pragma GCC unroll 32
    for (int v = 0; v < UKR_ROW_NV; ++v)
        vec_store(c + v * UKR_LANES, acc[v]);
}

#define UKR_DEFINE(path, fused_flag)                                                         \
    void sb_ukr_##path##_exact(size_t kc, const float *ap, const float *bp, ptrdiff_t b_step, \
                               float *c, ptrdiff_t ldc, int accumulate)                      \
    {                                                                                        \
        ukr_tile(kc, ap, bp, b_step, c, ldc, accumulate, 0);                                 \
    }                                                                                        \
    void sb_ukr_##path##_fast(size_t kc, const float *ap, const float *bp, ptrdiff_t b_step,  \
                              float *c, ptrdiff_t ldc, int accumulate)                       \
    {                                                                                        \
        ukr_tile(kc, ap, bp, b_step, c, ldc, accumulate, fused_flag);                        \
    }                                                                                        \
    void sb_row_##path##_exact(size_t kc, const float *a, ptrdiff_t a_step, const float *bp, \
                               ptrdiff_t b_step, ptrdiff_t strip_step, float *c,             \
                               int accumulate)                                               \
    {                                                                                        \
        ukr_row(kc, a, a_step, bp, b_step, strip_step, c, accumulate, 0);                    \
    }                                                                                        \
    void sb_row_##path##_fast(size_t kc, const float *a, ptrdiff_t a_step, const float *bp,  \
                              ptrdiff_t b_step, ptrdiff_t strip_step, float *c,              \
                              int accumulate)                                                \
    {                                                                                        \
        ukr_row(kc, a, a_step, bp, b_step, strip_step, c, accumulate, fused_flag);           \
    }

/* The table entry every path file ends with. */
#define UKR_PATH_ENTRY(path, mc, nc, muladds_per_ns, fused_flag, supported_fn)               \
    {#path, UKR_MR, UKR_NR, mc, nc, UKR_ROW_STRIPS, muladds_per_ns, fused_flag,              \
     sb_ukr_##path##_exact, sb_ukr_##path##_fast,                                            \
     sb_row_##path##_exact, sb_row_##path##_fast, supported_fn}
