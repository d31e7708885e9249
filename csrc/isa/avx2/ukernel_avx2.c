/* avx2 ISA: a 6 x 16 tile of 8-lane vectors (4 x 16 for at most 4 rows of
 * output), FMA3 in fast mode.
 * Register budget: 12 accumulators + 2 B + 1 A broadcast = 15 of 16 ymm.
 * Compiled with -mavx2 -mfma; selected only when CPUID and XCR0 allow it. */
#include "isa/isa.h"

#if defined(__AVX2__) && defined(__FMA__)
#include "isa/cpu_x86.h"
#include "isa/vec_ymm.h"

#define UKR_LANES 8
#define UKR_TILE_MAX_MR 6
#define UKR_TILE_MAX_NV 2
#define UKR_ROW_STRIPS 4
#define UKR_ROW_NVS(X) X(2)
#define UKR_COLUMN_MRS(X) X(6)
#define UKR_DW_NV 14
#include "isa/sliver_fma3.h"
#include "isa/ukernel_template.h"
#include "isa/column_direct_ymm.h"

UKR_DEFINE_TILE(avx2, 6, 16, 1)
UKR_DEFINE_TILE(avx2_4x16, 4, 16, 1)
UKR_DEFINE_ISA(avx2, 1)
SB_COLUMN_DIRECT(avx2, 1)

static const sb_tile tile_6x16 = {
    .name = "avx2 6x16", .mr = 6, .nr = 16, .mc = 48, .nc = 1024, .muladds_per_ns = 40,
    UKR_TILE_KERNELS(avx2, 16), UKR_GENERIC_PACKERS,
};

/* A product or convolution with at most 4 rows of output (1 to 4 output
 * channels: an image, mask or depth head; a batch of 2 to 4 rows): 8
 * accumulators, and 4 rows computed rather than 6. */
static const sb_tile tile_4x16 = {
    .name = "avx2 4x16", .mr = 4, .nr = 16, .mc = 48, .nc = 1024, .muladds_per_ns = 40,
    UKR_TILE_KERNELS(avx2_4x16, 16), UKR_GENERIC_PACKERS,
};

/* Weights are packed before any input is seen: the tile is chosen by the
 * output channels per group alone. */
static const sb_tile *avx2_conv_tile(size_t cout_g)
{
    return cout_g <= 4 ? &tile_4x16 : &tile_6x16;
}

static const sb_gemm_config gemm = {
    .product_tile = {&tile_6x16, &tile_6x16},
    .few_rows_tile = &tile_4x16,
    .conv_tile = avx2_conv_tile,
    UKR_GEMM_KERNELS(avx2),
    .column_direct_exact = sb_column_direct_avx2_exact,
    .column_direct_fast = sb_column_direct_avx2_fast,
};
static const sb_dwconv_config dwconv = {UKR_DWCONV_KERNELS(avx2)};

const sb_isa sb_isa_avx2 = {
    .name = "avx2", .supported = sb_cpu_has_avx2_fma, .fused = 1,
    .gemm = &gemm, .dwconv = &dwconv, .unary = &sb_unary_config_avx2,
    .pool = &sb_pool_config_avx2,
};
#else
const sb_isa sb_isa_avx2 = {.name = "avx2"};  /* not built: no kernels */
#endif
