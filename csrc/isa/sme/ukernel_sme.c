/* sme ISA (arm64 with FEAT_SME, Linux): the matrix products on a 2VL x 2VL
 * tile of the ZA array (tile_sme.c), VL the streaming vector length in
 * floats, read when the path is detected (8 x 8 at 128 bits to 128 x 128 at
 * 2048). Fast mode: FMOPA outer products, fused like the neon path's FMLA.
 * Exact mode: streaming-SVE FMUL then FADD, the order and bits of every
 * path (docs/design.md, "The sme path").
 *
 * Everything else (the row and few-column kernels, the epilogue, depthwise,
 * elementwise and pooling kernels) is the neon path's code: the same
 * template over NEON, outside streaming mode, with the same bits. */
#include "isa/isa.h"

#if defined(__aarch64__) && defined(__ARM_NEON) && defined(__linux__) && defined(__ELF__)
#include <arm_neon.h>
#include <string.h>
#include <sys/auxv.h>

typedef float32x4_t vec_t;
#define UKR_LANES 4
#define UKR_TILE_MAX_MR 16           /* the template's few-column kernel's largest MR */
#define UKR_TILE_MAX_NV 32           /* the sme tile's largest NR / 4 (2048-bit SVL) */
#define SME_MAX_MR 128
#define UKR_ROW_STRIPS 2
#define UKR_ROW_NVS(X) X(2) X(4) X(8)
#define UKR_COLUMN_MRS(X) X(8) X(16)   /* (unused: the few-column kernel is columns() below) */
#define UKR_DW_NV 24
#define vec_load(p) vld1q_f32(p)
#define vec_store(p, v) vst1q_f32((p), (v))
#define vec_splat(x) vdupq_n_f32(x)
#define vec_zero() vdupq_n_f32(0.0f)
#define vec_add(a, b) vaddq_f32((a), (b))
#define vec_mul(a, b) vmulq_f32((a), (b))
#define vec_fma(acc, a, b) vfmaq_f32((acc), (a), (b))
#define vec_canon(v) vec4_canon(v)
#include "isa/sliver_vec4.h"
#include "isa/ukernel_template.h"

UKR_DEFINE_ISA(sme, 1)

#ifndef HWCAP2_SME
#define HWCAP2_SME (1UL << 23)       /* Linux's bit, for C libraries whose headers lack it */
#endif

/* tile_sme.c */
long sb_sme_vector_bytes(void);
void sb_sme_strips_fast(size_t rows, size_t cols, size_t kc, const float *ap, const float *bp,
                        ptrdiff_t b_step, float *c, ptrdiff_t ldc, int accumulate);
void sb_sme_strips_exact(size_t rows, size_t cols, size_t kc, const float *ap, const float *bp,
                         ptrdiff_t b_step, float *c, ptrdiff_t ldc, int accumulate);

static sb_tile tile_2vl;

/* One whole tile: one strip's rows and columns. */
static void tile_fast(size_t kc, const float *ap, const float *bp, ptrdiff_t b_step, float *c, ptrdiff_t ldc,
                      int accumulate)
{
    sb_sme_strips_fast((size_t)tile_2vl.mr, (size_t)tile_2vl.nr, kc, ap, bp, b_step, c, ldc, accumulate);
}

static void tile_exact(size_t kc, const float *ap, const float *bp, ptrdiff_t b_step, float *c, ptrdiff_t ldc,
                       int accumulate)
{
    sb_sme_strips_exact((size_t)tile_2vl.mr, (size_t)tile_2vl.nr, kc, ap, bp, b_step, c, ldc,
                        accumulate);
}


/* A read in place (sb_tile_direct_fn): the strip packed a piece of k at a
 * time into 32 KB of stack (all of a k-block up to 512-bit vectors, 64
 * steps at 2048), then the packed kernel, continuing from C after the
 * first piece. The accumulators are float32 in both kernels, so stopping
 * and going on from C changes no bit. */
#define DIRECT_FLOATS 8192
static inline void direct(sb_tile_kernel_fn kernel, size_t kc, const float *a, ptrdiff_t a_row,
                          ptrdiff_t a_col, const float *bp, ptrdiff_t b_step, float *c,
                          ptrdiff_t ldc, int accumulate)
{
    float strip[DIRECT_FLOATS];
    const size_t mr = (size_t)tile_2vl.mr, most = DIRECT_FLOATS / mr;
    size_t p = 0;
    do {
        size_t piece = kc - p < most ? kc - p : most;
        for (size_t q = 0; q < piece; ++q)
            for (size_t r = 0; r < mr; ++r)
                strip[q * mr + r] = a[(ptrdiff_t)r * a_row + (ptrdiff_t)(p + q) * a_col];
        kernel(piece, strip, bp + (ptrdiff_t)p * b_step, b_step, c, ldc, accumulate || p > 0);
        p += piece;
    } while (p < kc);
}

static void direct_fast(size_t kc, const float *a, ptrdiff_t a_row, ptrdiff_t a_col, const float *bp,
                        ptrdiff_t b_step, float *c, ptrdiff_t ldc, int accumulate)
{
    direct(tile_fast, kc, a, a_row, a_col, bp, b_step, c, ldc, accumulate);
}

static void direct_exact(size_t kc, const float *a, ptrdiff_t a_row, ptrdiff_t a_col, const float *bp,
                         ptrdiff_t b_step, float *c, ptrdiff_t ldc, int accumulate)
{
    direct(tile_exact, kc, a, a_row, a_col, bp, b_step, c, ldc, accumulate);
}

/* The few-column kernel (sb_column_kernel_fn) for any MR: the template's
 * takes MR up to 16, the sme tile's is 8 to 128. Plain C outside streaming
 * mode, one output at a time, the same operations as the tile kernels:
 * fmaf (one rounding) in fast mode, a rounded product then a rounded add
 * in exact mode. */
static inline __attribute__((always_inline)) void columns(size_t mr, size_t kc, size_t rows, size_t cols, const float *ap,
                           const float *x, ptrdiff_t x_step, float *y, ptrdiff_t y_col, int accumulate,
                           const int fused)
{
    for (size_t r = 0; r < rows; ++r) {
        const float *a = ap + (r / mr) * kc * mr + r % mr;
        for (size_t j = 0; j < cols; ++j) {
            float *out = y + (ptrdiff_t)j * y_col + (ptrdiff_t)r;
            float acc = accumulate ? *out : 0.0f;
            for (size_t p = 0; p < kc; ++p) {
                float b = x[(ptrdiff_t)p * x_step + (ptrdiff_t)j];
                acc = fused ? __builtin_fmaf(a[p * mr], b, acc) : acc + a[p * mr] * b;
            }
            if (acc != acc) {
                const uint32_t canonical = 0x7FC00000u;
                memcpy(&acc, &canonical, sizeof acc);
            }
            *out = acc;
        }
    }
}

static void columns_fast(size_t mr, size_t kc, size_t rows, size_t cols, const float *ap, const float *x,
                         ptrdiff_t x_step, float *y, ptrdiff_t y_col, int accumulate)
{
    columns(mr, kc, rows, cols, ap, x, x_step, y, y_col, accumulate, 1);
}

static void columns_exact(size_t mr, size_t kc, size_t rows, size_t cols, const float *ap, const float *x,
                          ptrdiff_t x_step, float *y, ptrdiff_t y_col, int accumulate)
{
    columns(mr, kc, rows, cols, ap, x, x_step, y, y_col, accumulate, 0);
}

/* One tile for both modes (convolution weights are packed before the mode
 * is known); no narrow tile; the strips kernels run whole tiles down a B
 * strip in one call. Its sizes are set at detection. */
static sb_tile tile_2vl = {
    .name = "sme 2VLx2VL", .mr = 8, .nr = 8, .mc = 96, .nc = 256, .muladds_per_ns = 16,
    .exact = tile_exact, .fast = tile_fast,
    .narrow_nr = 8, .narrow_exact = tile_exact, .narrow_fast = tile_fast,
    .direct_exact = direct_exact, .direct_fast = direct_fast,
    .narrow_direct_exact = direct_exact, .narrow_direct_fast = direct_fast,
    .strips_exact = sb_sme_strips_exact, .strips_fast = sb_sme_strips_fast,
    UKR_GENERIC_PACKERS,
};

/* FEAT_SME from the kernel's HWCAP2, then the tile from the streaming
 * vector length (SVL): MR = NR = 2 * SVL / 32 bits. The same values each
 * time, so a second detection racing the first writes what it reads. */
static int sme_supported(void)
{
    if (!(getauxval(AT_HWCAP2) & HWCAP2_SME)) return 0;
    long bytes = sb_sme_vector_bytes();
    if (bytes < 16 || bytes > 256 || bytes % 16) return 0;
    int mr = (int)(bytes / 4) * 2;
    tile_2vl.mr = tile_2vl.nr = tile_2vl.narrow_nr = mr;
    /* at least four strips per cache tile: one entry to streaming mode
     * serves a run of them */
    tile_2vl.mc = mr >= 24 ? 4 * mr : (96 + mr - 1) / mr * mr;
    tile_2vl.nc = mr >= 256 ? mr : 256 / mr * mr;
    /* about one FMOPA of VL x VL per cycle at 3 GHz, for the thread count only */
    tile_2vl.muladds_per_ns = (int)(bytes / 4) * (int)(bytes / 4) * 3;
    return 1;
}

/* The neon path's few-column kernel over A read in place (ukernel_neon.c,
 * outside streaming mode): the few-column kernel's operations and order, so
 * this path's bits; with it, a few rows times a B whose columns are
 * contiguous run transposed (framework/tiling.c) instead of packing B. */
void sb_column_direct_neon_exact(size_t rows, size_t kc, size_t cols, const float *a,
                                 ptrdiff_t a_row, const float *x, ptrdiff_t x_step,
                                 ptrdiff_t x_col, float *y, ptrdiff_t y_col, int accumulate);
void sb_column_direct_neon_fast(size_t rows, size_t kc, size_t cols, const float *a,
                                ptrdiff_t a_row, const float *x, ptrdiff_t x_step,
                                ptrdiff_t x_col, float *y, ptrdiff_t y_col, int accumulate);

static const sb_gemm_config gemm = {
    .product_tile = {&tile_2vl, &tile_2vl},
    .lanes = UKR_LANES, .max_mr = SME_MAX_MR, .max_nr = UKR_TILE_MAX_NV * UKR_LANES,
    .row_strips = UKR_ROW_STRIPS, .row_exact = sb_row_sme_exact, .row_fast = sb_row_sme_fast,
    .column_exact = columns_exact, .column_fast = columns_fast, .epilogue = sb_epilogue_sme,
    .column_direct_exact = sb_column_direct_neon_exact,
    .column_direct_fast = sb_column_direct_neon_fast,
};
static const sb_dwconv_config dwconv = {UKR_DWCONV_KERNELS(sme)};

const sb_isa sb_isa_sme = {
    .name = "sme", .supported = sme_supported, .fused = 1,
    .gemm = &gemm, .dwconv = &dwconv, .unary = &sb_unary_config_neon,
    .pool = &sb_pool_config_neon,
};
#else
const sb_isa sb_isa_sme = {.name = "sme"};  /* not built: no kernels */
#endif
