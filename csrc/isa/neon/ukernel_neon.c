/* neon ISA (arm64): 8 x 12 tile of 4-lane vectors, FMLA in fast mode.
 * Register budget: 24 accumulators + 3 B + 1 A broadcast = 28 of 32 v-regs. */
#include "isa/isa.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>

typedef float32x4_t vec_t;
#define UKR_LANES 4
#define UKR_TILE_MAX_MR 8
#define UKR_TILE_MAX_NV 3
#define UKR_ROW_STRIPS 2
#define UKR_ROW_NVS(X) X(3)
#define UKR_COLUMN_MRS(X) X(8)
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
#include "isa/column_direct_vec4.h"

UKR_DEFINE_TILE(neon, 8, 12, 1)
UKR_DEFINE_ISA(neon, 1)
SB_COLUMN_DIRECT(neon, 1)

static int neon_supported(void) { return 1; } /* NEON is baseline on arm64 */

static const sb_tile tile_8x12 = {
    .name = "neon 8x12", .mr = 8, .nr = 12, .mc = 96, .nc = 252, .muladds_per_ns = 16,
    UKR_TILE_KERNELS(neon, 12), UKR_GENERIC_PACKERS,
};

static const sb_gemm_config gemm = {
    .product_tile = {&tile_8x12, &tile_8x12},
    UKR_GEMM_KERNELS(neon),
    .column_direct_exact = sb_column_direct_neon_exact,
    .column_direct_fast = sb_column_direct_neon_fast,
};
static const sb_dwconv_config dwconv = {UKR_DWCONV_KERNELS(neon)};

const sb_isa sb_isa_neon = {
    .name = "neon", .supported = neon_supported, .fused = 1,
    .gemm = &gemm, .dwconv = &dwconv, .unary = &sb_unary_config_neon,
    .pool = &sb_pool_config_neon,
};
#else
const sb_isa sb_isa_neon = {.name = "neon"};  /* not built: no kernels */
#endif
