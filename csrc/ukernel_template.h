/* The MR x NR register microkernel, written once and instantiated per path.
 *
 * The including file defines: UKR_MR, UKR_NR, UKR_LANES, vec_t and the
 * operations vec_load, vec_store, vec_splat, vec_zero, vec_add, vec_mul and,
 * for a fused path, vec_fma(acc, a, b) = acc + a*b with one rounding.
 * It then defines sb_ukr_<path>_exact and sb_ukr_<path>_fast with
 * UKR_DEFINE(path, fused).
 *
 * Lanes hold different outputs (columns j), never different terms of one
 * output, so the vector width cannot change a result. Exact mode multiplies
 * and adds as two rounded operations; files are compiled with
 * -ffp-contract=off so the compiler cannot fuse them. */

#define UKR_NV (UKR_NR / UKR_LANES)

static inline __attribute__((always_inline)) void
ukr_body(size_t kc, const float *restrict ap, const float *restrict bp,
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
                acc[r][v] = fused ? vec_fma(acc[r][v], a, b[v])
                                  : vec_add(acc[r][v], vec_mul(a, b[v]));
        }
        ap += UKR_MR;
        bp += UKR_NR;
    }

#pragma GCC unroll 32
    for (int r = 0; r < UKR_MR; ++r)
#pragma GCC unroll 8
        for (int v = 0; v < UKR_NV; ++v)
            vec_store(c + r * ldc + v * UKR_LANES, acc[r][v]);
}

#define UKR_DEFINE(path, fused_flag)                                               \
    void sb_ukr_##path##_exact(size_t kc, const float *ap, const float *bp,       \
                               float *c, ptrdiff_t ldc, int accumulate)            \
    {                                                                              \
        ukr_body(kc, ap, bp, c, ldc, accumulate, 0);                               \
    }                                                                              \
    void sb_ukr_##path##_fast(size_t kc, const float *ap, const float *bp,        \
                              float *c, ptrdiff_t ldc, int accumulate)             \
    {                                                                              \
        ukr_body(kc, ap, bp, c, ldc, accumulate, fused_flag);                      \
    }
