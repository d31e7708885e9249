/* vec4 path over the 4-lane vectors of vec4.h (SSE2, NEON, wasm SIMD128).
 *
 * Natively the tile is 6 x 8: 12 accumulators + 2 B + 1 A = 15 of the 16 xmm
 * registers of x86-64. In WebAssembly it is 4 x 8: V8 keeps xmm15 as its
 * scratch register, so only 15 are allocatable, and it loads every broadcast
 * A value of a step before the step's multiply-adds; at 6 x 8 it spills about
 * five accumulators to the stack on every step (seen in V8's code for the
 * kernel) and runs at about 20 GFLOP/s in Chromium; at 4 x 8 (8 + 2 + 4 = 14)
 * the loop is spill-free and whole products run about 1.3-1.8x faster in
 * both modes (bench/results/browser-*.md). The tile cannot change a result.
 * Fast mode fuses on NEON and, in the relaxed-SIMD wasm module, through
 * f32x4.relaxed_madd (vec4.h). */
#include "isa/isa.h"
#include "isa/vec4.h"

#if VEC4_AVAILABLE
typedef vec4 vec_t;
#if defined(__wasm_simd128__)
#define VEC4_MR 4
#else
#define VEC4_MR 6
#endif
#define UKR_LANES 4
#define UKR_TILE_MAX_MR VEC4_MR
#define UKR_TILE_MAX_NV 2
#define UKR_ROW_NVS(X) X(2)
#define UKR_COLUMN_MRS(X) X(VEC4_MR)
#if defined(__wasm_simd128__)
#define UKR_DW_NV 8
#elif defined(__aarch64__)
#define UKR_DW_NV 24
#else
#define UKR_DW_NV 14
#endif
#define UKR_ROW_STRIPS 4
#define vec_load vec4_load
#define vec_store vec4_store
#define vec_splat vec4_splat
#define vec_zero vec4_zero
#define vec_add vec4_add
#define vec_mul vec4_mul
#define vec_fma vec4_fma
#define vec_canon vec4_canon
#include "isa/sliver_vec4.h"
#include "isa/ukernel_template.h"
#include "isa/column_direct_vec4.h"

UKR_DEFINE_TILE(vec4, VEC4_MR, 8, VEC4_FUSED)
UKR_DEFINE_ISA(vec4, VEC4_FUSED)
SB_COLUMN_DIRECT(vec4, VEC4_FUSED)

static int vec4_supported(void) { return 1; }

static const sb_tile tile_vec4 = {
#if defined(__wasm_simd128__)
    .name = "vec4 4x8",
#else
    .name = "vec4 6x8",
#endif
    .mr = VEC4_MR, .nr = 8, .mc = 96, .nc = 256, .muladds_per_ns = 8,
    UKR_TILE_KERNELS(vec4, 8), UKR_GENERIC_PACKERS,
};

static const sb_gemm_config gemm = {
    .product_tile = {&tile_vec4, &tile_vec4},
    UKR_GEMM_KERNELS(vec4),
    .column_direct_exact = sb_column_direct_vec4_exact,
    .column_direct_fast = sb_column_direct_vec4_fast,
};
static const sb_dwconv_config dwconv = {UKR_DWCONV_KERNELS(vec4)};

const sb_isa sb_isa_vec4 = {
    .name = "vec4", .supported = vec4_supported, .fused = VEC4_FUSED,
    .gemm = &gemm, .dwconv = &dwconv, .unary = &sb_unary_config_vec4,
    .pool = &sb_pool_config_vec4,
};
#else
const sb_isa sb_isa_vec4 = {.name = "vec4"};  /* not built: no kernels */
#endif
