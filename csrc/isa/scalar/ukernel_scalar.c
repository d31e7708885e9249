/* scalar ISA: plain C, 4 x 4 tile, runs everywhere. No fused multiply-add
 * (fast mode is acc + a*b, the same bits as exact mode). Built with
 * -fno-tree-vectorize so that it stays the honest scalar baseline.
 * Register budget: 16 accumulators + 4 B + 1 A = 21 values; x86-64 has 16
 * xmm registers, so a few accumulators live in L1 - acceptable for a
 * fallback path. */
#include <stdint.h>
#include "isa/isa.h"

typedef float vec_t;
#define UKR_LANES 1
#define UKR_TILE_MAX_MR 4
#define UKR_TILE_MAX_NV 4
#define UKR_ROW_STRIPS 2
#define UKR_ROW_NVS(X) X(4)
#define UKR_COLUMN_MRS(X) X(4)
#define vec_load(p) (*(p))
#define vec_store(p, v) (*(p) = (v))
#define vec_splat(x) (x)
#define vec_zero() 0.0f
#define vec_add(a, b) ((a) + (b))
#define vec_mul(a, b) ((a) * (b))
#define vec_fma(acc, a, b) ((acc) + (a) * (b))
typedef union { uint32_t u; float f; } scalar_bits;
static inline float canon1(float v) { return v != v ? (scalar_bits){0x7fc00000u}.f : v; }
#define vec_canon(v) canon1(v)
/* Four plain floats for the few-column kernel's slivers. */
typedef struct { float v[4]; } sliver_vec;
static inline sliver_vec sliver_load(const float *p) { return (sliver_vec){{p[0], p[1], p[2], p[3]}}; }
static inline sliver_vec sliver_load2(const float *p) { return (sliver_vec){{p[0], p[1], 0.0f, 0.0f}}; }
static inline void sliver_store(float *p, sliver_vec q)
{
    p[0] = q.v[0], p[1] = q.v[1], p[2] = q.v[2], p[3] = q.v[3];
}
static inline void sliver_store2(float *p, sliver_vec q) { p[0] = q.v[0], p[1] = q.v[1]; }
static inline sliver_vec sliver_splat(float x) { return (sliver_vec){{x, x, x, x}}; }
static inline sliver_vec sliver_zero(void) { return sliver_splat(0.0f); }
static inline sliver_vec sliver_add(sliver_vec a, sliver_vec b)
{
    return (sliver_vec){{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3]}};
}
static inline sliver_vec sliver_mul(sliver_vec a, sliver_vec b)
{
    return (sliver_vec){{a.v[0] * b.v[0], a.v[1] * b.v[1], a.v[2] * b.v[2], a.v[3] * b.v[3]}};
}
#define sliver_fma(acc, a, b) sliver_add((acc), sliver_mul((a), (b)))
/* (a part sliver of 4-lane slivers is always 2 rows: MR is 4q or 4q + 2) */
#define sliver_load_part(p, n) sliver_load2(p)
#define sliver_store_part(p, v, n) sliver_store2((p), (v))
static inline sliver_vec sliver_canon(sliver_vec q)
{
    return (sliver_vec){{canon1(q.v[0]), canon1(q.v[1]), canon1(q.v[2]), canon1(q.v[3])}};
}
#include "isa/ukernel_template.h"

UKR_DEFINE_TILE(scalar, 4, 4, 0)
UKR_DEFINE_ISA(scalar, 0)

static int scalar_supported(void) { return 1; }

static const sb_tile tile_4x4 = {
    .name = "scalar 4x4", .mr = 4, .nr = 4, .mc = 64, .nc = 256, .muladds_per_ns = 2,
    UKR_TILE_KERNELS(scalar, 4), UKR_GENERIC_PACKERS,
};

static const sb_gemm_config gemm = {
    .product_tile = {&tile_4x4, &tile_4x4},
    UKR_GEMM_KERNELS(scalar),
};
static const sb_dwconv_config dwconv = {UKR_DWCONV_KERNELS(scalar)};

const sb_isa sb_isa_scalar = {
    .name = "scalar", .supported = scalar_supported, .fused = 0,
    .gemm = &gemm, .dwconv = &dwconv, .unary = &sb_unary_config_scalar,
    .pool = &sb_pool_config_scalar,
};
