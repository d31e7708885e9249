/* avx512 path: 12 x 32 tile of 16-lane vectors, FMA in fast mode.
 * Register budget: 24 accumulators + 2 B + 1 A broadcast = 27 of 32 zmm.
 * Compiled with -mavx512f -mfma; selected only when CPUID and XCR0 allow it.
 *
 * A convolution uses 16 x 16 instead (16 + 1 + 1 zmm), or 8 x 32 (16 + 2 + 1)
 * when its output channels per group leave 1 to 8 over a multiple of 16:
 * 12-row strips pad a 64-channel layer to 72 rows, and 16-column strips pad a
 * small output map less than 32-column ones (196 columns: 12.25 strips of
 * 16, 6.1 of 32). Each output is still its taps in order, one multiply-add
 * each, so the tile cannot change a bit.
 *
 * SB_EMULATE_AVX512 (the `make avx512-emulated` test build only) compiles the
 * same kernels over a pair of AVX2 vectors on an AVX2 + FMA3 machine: each
 * 16-lane operation is two 8-lane ones, fused where the real one fuses, so the
 * path's tiles, edges and framework can be tested bit for bit on CPUs without
 * AVX-512 (the instructions themselves are IEEE operations either way). */
#include "isa/isa.h"

#if defined(SB_EMULATE_AVX512)
#if !defined(__AVX2__) || !defined(__FMA__)
#error "the emulated avx512 path needs AVX2 and FMA3 (-mavx2 -mfma)"
#endif
#include <immintrin.h>
#include "isa/cpu_x86.h"
#define SB_AVX512_BUILT 1
typedef struct { __m256 lo, hi; } vec_t;
static inline vec_t vec_load(const float *p)
{
    return (vec_t){_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
}
static inline void vec_store(float *p, vec_t v)
{
    _mm256_storeu_ps(p, v.lo), _mm256_storeu_ps(p + 8, v.hi);
}
static inline vec_t vec_splat(float x) { return (vec_t){_mm256_set1_ps(x), _mm256_set1_ps(x)}; }
static inline vec_t vec_zero(void) { return (vec_t){_mm256_setzero_ps(), _mm256_setzero_ps()}; }
static inline vec_t vec_add(vec_t a, vec_t b)
{
    return (vec_t){_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)};
}
static inline vec_t vec_mul(vec_t a, vec_t b)
{
    return (vec_t){_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)};
}
static inline vec_t vec_fma(vec_t acc, vec_t a, vec_t b)
{
    return (vec_t){_mm256_fmadd_ps(a.lo, b.lo, acc.lo), _mm256_fmadd_ps(a.hi, b.hi, acc.hi)};
}
static inline __m256 half_canon(__m256 v)
{
    return _mm256_blendv_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)),
                            _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}
static inline vec_t vec_canon(vec_t v) { return (vec_t){half_canon(v.lo), half_canon(v.hi)}; }
#define avx512_supported sb_cpu_has_avx2_fma

#elif defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>
#include "isa/cpu_x86.h"
#define SB_AVX512_BUILT 1
typedef __m512 vec_t;
#define vec_load(p) _mm512_loadu_ps(p)
#define vec_store(p, v) _mm512_storeu_ps((p), (v))
#define vec_splat(x) _mm512_set1_ps(x)
#define vec_zero() _mm512_setzero_ps()
#define vec_add(a, b) _mm512_add_ps((a), (b))
#define vec_mul(a, b) _mm512_mul_ps((a), (b))
#define vec_fma(acc, a, b) _mm512_fmadd_ps((a), (b), (acc))
#define vec_canon(v)                                                                        \
    _mm512_mask_mov_ps((v), _mm512_cmp_ps_mask((v), (v), _CMP_UNORD_Q),                     \
                       _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000)))
#define avx512_supported sb_cpu_has_avx512f
#endif

#if defined(SB_AVX512_BUILT)
#define UKR_LANES 16
#define UKR_TILE_MAX_MR 16
#define UKR_TILE_MAX_NV 2
#define UKR_ROW_STRIPS 4
#define UKR_ROW_NVS(X) X(1) X(2)
#define UKR_COLUMN_MRS(X) X(8) X(12) X(16)
#define UKR_DW_NV 24
#if !defined(SB_EMULATE_AVX512)
/* The first n (1 to 15) lanes of v stored, the rest of memory untouched. */
#define vec_store_part(p, v, n) _mm512_mask_storeu_ps((p), (__mmask16)((1u << (n)) - 1u), (v))
#endif
#if defined(SB_EMULATE_AVX512)
#include "isa/sliver_fma3.h"
#else
/* The few-column kernel's slivers are whole 16-lane vectors here (a 16-row
 * strip is one; an 8- or 12-row one a masked part), 4x the work per
 * instruction of the 4-lane slivers other x86 paths use. */
#define SLIVER_LANES 16
typedef __m512 sliver_vec;
#define sliver_load(p) _mm512_loadu_ps(p)
#define sliver_store(p, v) _mm512_storeu_ps((p), (v))
#define sliver_part_mask(n) ((__mmask16)((1u << (n)) - 1u))
#define sliver_load_part(p, n) _mm512_maskz_loadu_ps(sliver_part_mask(n), (p))
#define sliver_store_part(p, v, n) _mm512_mask_storeu_ps((p), sliver_part_mask(n), (v))
#define sliver_splat vec_splat
#define sliver_zero vec_zero
#define sliver_add vec_add
#define sliver_mul vec_mul
#define sliver_fma vec_fma
#define sliver_canon vec_canon
#endif
#if !defined(SB_EMULATE_AVX512) && defined(__AVX512F__)
#include "isa/avx512/exp_route_avx512.h"
#define SB_EPI_SIGMOID_N(x, y, n) sbx_exp_route_n(x, y, n, 1)
#endif
#include "isa/ukernel_template.h"
/* 256-bit vectors, as the split CPU's exact tiles: transposes in registers */
#include "isa/column_direct_ymm.h"

UKR_DEFINE_TILE(avx512, 12, 32, 1)
UKR_DEFINE_TILE(avx512_8x32, 8, 32, 1)
UKR_DEFINE_TILE(avx512_4x32, 4, 32, 1)
UKR_DEFINE_ISA(avx512, 1)
SB_COLUMN_DIRECT(avx512, 1)

static const sb_tile tile_12x32 = {
    .name = "avx512 12x32", .mr = 12, .nr = 32, .mc = 96, .nc = 1024, .muladds_per_ns = 64,
    UKR_TILE_KERNELS(avx512, 32), UKR_GENERIC_PACKERS,
};
static const sb_tile tile_8x32 = {
    .name = "avx512 8x32", .mr = 8, .nr = 32, .mc = 96, .nc = 1024, .muladds_per_ns = 64,
    UKR_TILE_KERNELS(avx512_8x32, 32), UKR_GENERIC_PACKERS,
};
/* A product or convolution with at most 4 rows of output (a layer of 1 to 4
 * output channels: an image, mask or depth head; a batch of 2 to 4 rows):
 * 8 accumulators, enough independent chains for the FMA pipes, and half or
 * a third of the rows the 8- and 12-row tiles would compute to keep them. */
static const sb_tile tile_4x32 = {
    .name = "avx512 4x32", .mr = 4, .nr = 32, .mc = 96, .nc = 1024, .muladds_per_ns = 64,
    UKR_TILE_KERNELS(avx512_4x32, 32), UKR_GENERIC_PACKERS,
};

/* Convolutions take 8x32 (4x32 for at most 4 output channels per group,
 * below): per k step it
 * loads 2 vectors of patches and broadcasts 8 weights for 16 multiply-adds
 * (16x16 took 17 loads for 16), and its rows come in eights, so that 64 or
 * 24 channels fill every tile (12x32 pads 64 to 72). Side by side on an
 * Intel Xeon (1 thread, fast mode) it ran ResNet-50's 3x3 layers 10-20%
 * faster than 16x16 and the 1x1 ones 5-25% faster, and never slower than
 * 12x32 (bench/results/conv-2026-12-05-tiles.md). */
static const sb_tile *avx512_conv_tile(size_t cout_g)
{
    return cout_g <= 4 ? &tile_4x32 : &tile_8x32;
}

/* ukernel_avx512_ymm.c */
extern const sb_tile sb_tile_avx512_6x32_ymm, sb_tile_avx512_8x24_ymm;
void sb_lanes_avx512_ymm_exact(size_t rows, size_t strips, size_t kc, const float *ap,
                               ptrdiff_t strip_step, const float *x, const ptrdiff_t *off,
                               float *out, int accumulate, float *y, ptrdiff_t y_row,
                               size_t channels, const float *bias, float floor);
void sb_lanes_avx512_ymm_fast(size_t rows, size_t strips, size_t kc, const float *ap,
                              ptrdiff_t strip_step, const float *x, const ptrdiff_t *off,
                              float *out, int accumulate, float *y, ptrdiff_t y_row,
                              size_t channels, const float *bias, float floor);

void sb_lanes_store_avx512_ymm(size_t rows, size_t strips, const float *out, float *y,
                               ptrdiff_t y_row, size_t channels);
#if !defined(SB_EMULATE_AVX512)
/* lanes_wide_avx512.c: the same over 512-bit vectors of two strips */
void sb_lanes_wide_avx512_exact(size_t rows, size_t strips, size_t kc, const float *ap,
                                ptrdiff_t strip_step, const float *x, const ptrdiff_t *off,
                                float *out, int accumulate, float *y, ptrdiff_t y_row,
                                size_t channels, const float *bias, float floor);
void sb_lanes_wide_avx512_fast(size_t rows, size_t strips, size_t kc, const float *ap,
                               ptrdiff_t strip_step, const float *x, const ptrdiff_t *off,
                               float *out, int accumulate, float *y, ptrdiff_t y_row,
                               size_t channels, const float *bias, float floor);
#define LANES_WIDE .lanes_wide_exact = sb_lanes_wide_avx512_exact, \
                   .lanes_wide_fast = sb_lanes_wide_avx512_fast,
#else
#define LANES_WIDE
#endif

static const sb_gemm_config gemm = {
    .product_tile = {&tile_12x32, &tile_12x32},
    .split_exact_tile = &sb_tile_avx512_6x32_ymm,
    .split_exact_conv_tile = &sb_tile_avx512_8x24_ymm, .split_lanes = 8,
    .lanes_exact = sb_lanes_avx512_ymm_exact, .lanes_fast = sb_lanes_avx512_ymm_fast,
    .lanes_store = sb_lanes_store_avx512_ymm,
    .lanes_need_split = 1,
    LANES_WIDE
    .other_tiles = {&tile_8x32, NULL},
    .few_rows_tile = &tile_4x32,
    .conv_tile = avx512_conv_tile,
    UKR_GEMM_KERNELS(avx512),
    .column_direct_exact = sb_column_direct_avx512_exact,
    .column_direct_fast = sb_column_direct_avx512_fast,
};
#if defined(SB_EMULATE_AVX512)
static const sb_dwconv_config dwconv = {UKR_DWCONV_KERNELS(avx512)};
#else
/* dw_flat_avx512.c: planes read in place with masked loads */
void sb_dw_flat_avx512_exact(size_t plane, size_t taps, const float *w, const ptrdiff_t *off,
                             const uint16_t *masks, const float *in, float *out);
void sb_dw_flat_avx512_fast(size_t plane, size_t taps, const float *w, const ptrdiff_t *off,
                            const uint16_t *masks, const float *in, float *out);
void sb_dw_flat_pair_avx512_exact(size_t plane, size_t taps, const float *w_a, const float *w_b,
                                  const ptrdiff_t *off, const uint16_t *masks, const float *in_a,
                                  const float *in_b, float *out_a, float *out_b);
void sb_dw_flat_pair_avx512_fast(size_t plane, size_t taps, const float *w_a, const float *w_b,
                                 const ptrdiff_t *off, const uint16_t *masks, const float *in_a,
                                 const float *in_b, float *out_a, float *out_b);
void sb_dw_flat_masks_avx512(size_t h, size_t w, size_t kh, size_t kw, size_t dh, size_t dw,
                             size_t pad_top, size_t pad_left, uint16_t *masks);
void sb_split_stride2_avx512(float *even, float *odd, const float *in, size_t len, size_t rows,
                             ptrdiff_t in_step, ptrdiff_t out_step);
void sb_dw_pitched_avx512_exact(size_t vecs, size_t limit, size_t taps, const float *w,
                                const ptrdiff_t *off, const float *in, const sb_dw_lane_map *map,
                                float *out);
void sb_dw_pitched_avx512_fast(size_t vecs, size_t limit, size_t taps, const float *w,
                               const ptrdiff_t *off, const float *in, const sb_dw_lane_map *map,
                               float *out);
/* dw_lanes_avx512.c: 16 channels in the lanes */
void sb_dw_lanes_avx512_exact(size_t rows, size_t ow, size_t taps, const float *w,
                              const ptrdiff_t *off, const float *in, size_t in_row,
                              size_t in_col, float *out);
void sb_dw_lanes_avx512_fast(size_t rows, size_t ow, size_t taps, const float *w,
                             const ptrdiff_t *off, const float *in, size_t in_row,
                             size_t in_col, float *out);
void sb_dw_lanes_gather_avx512(const float *in, size_t channels, size_t plane_step, size_t rows,
                               size_t row_step, size_t cols, float *dst, size_t dst_row);
void sb_dw_lanes_scatter_avx512(const float *src, size_t pixels, size_t channels, float *out,
                                size_t plane_step);
/* dw_stride2_avx512.c: stride-2 planes read in place */
void sb_dw_stride2_avx512_exact(const float *in, size_t h, size_t w, size_t kh, size_t kw,
                                size_t pad_top, size_t pad_left, const float *wts, size_t oy0,
                                size_t rows, size_t ow, float *out, float *scratch);
void sb_dw_stride2_avx512_fast(const float *in, size_t h, size_t w, size_t kh, size_t kw,
                               size_t pad_top, size_t pad_left, const float *wts, size_t oy0,
                               size_t rows, size_t ow, float *out, float *scratch);
static const sb_dwconv_config dwconv = {UKR_DWCONV_KERNELS(avx512),
                                        .flat_exact = sb_dw_flat_avx512_exact,
                                        .flat_fast = sb_dw_flat_avx512_fast,
                                        .flat_pair_exact = sb_dw_flat_pair_avx512_exact,
                                        .flat_pair_fast = sb_dw_flat_pair_avx512_fast,
                                        .flat_masks = sb_dw_flat_masks_avx512,
                                        .split_stride2 = sb_split_stride2_avx512,
                                        .pitched_exact = sb_dw_pitched_avx512_exact,
                                        .pitched_fast = sb_dw_pitched_avx512_fast,
                                        .lanes_exact = sb_dw_lanes_avx512_exact,
                                        .lanes_fast = sb_dw_lanes_avx512_fast,
                                        .lanes_gather = sb_dw_lanes_gather_avx512,
                                        .lanes_scatter = sb_dw_lanes_scatter_avx512,
                                        .stride2_exact = sb_dw_stride2_avx512_exact,
                                        .stride2_fast = sb_dw_stride2_avx512_fast};
#endif

const sb_isa sb_isa_avx512 = {
    .name = "avx512", .supported = avx512_supported, .fused = 1,
    .gemm = &gemm, .dwconv = &dwconv, .unary = &sb_unary_config_avx512,
    .pool = &sb_pool_config_avx512,
};
#else
const sb_isa sb_isa_avx512 = {.name = "avx512"};  /* not built: no kernels */
#endif
