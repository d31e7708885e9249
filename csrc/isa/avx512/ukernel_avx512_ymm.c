/* avx512 path: the exact tiles on CPUs that run each 512-bit operation as
 * two 256-bit halves (AMD Zen 4; sb_cpu_splits_512), over vectors of 8 lanes:
 * the product's 6 rows x 32 columns (24 accumulators + 4 B + 1 broadcast of
 * the 32 registers AVX-512VL gives 256-bit code), and the convolution's 8 x
 * 24 (24 + 3 + 1), whose 8 rows read the weights packed for the 8x32 tile.
 *
 * Why: exact mode multiplies, then adds (two roundings). Zen 4 issues
 * multiplies to two pipes and adds to two others, each 256 bits wide. Over
 * 256-bit vectors the four pipes all work: measured on an EPYC (Zen 4, one
 * thread, registers only) 115 GFLOP/s, the fused fast tile's speed, where the
 * 512-bit 12x32 tile reached 79 (a 512-bit multiply or add holds its pipe
 * pair for two cycles, and the adds queue behind the multiplies). An Intel
 * core fuses its 512-bit ports instead, so there the 12x32 tile stays.
 *
 * Each output is still its products in increasing k, one multiply then one
 * add each, from the same packed A and B (NR 32, as the 12x32 tile): the
 * tile cannot change a bit.
 *
 * Here too the channels-in-lanes kernels (lanes_template.h) of convolutions
 * over small maps, in both modes: 8 output channels (one packed strip) per
 * vector, 7 output positions x 3 strips (21 accumulators + 3 weights + 1
 * broadcast). Fast mode never takes this tile (its fused
 * kernels are defined, as every tile's are, and tested with the others). */
#include "isa/isa.h"

#if defined(SB_EMULATE_AVX512) || (defined(__AVX512F__) && defined(__FMA__))
#include "isa/vec_ymm.h"
#define UKR_LANES 8
#define UKR_TILE_MAX_MR 8
#define UKR_TILE_MAX_NV 4
#define UKR_ROW_STRIPS 4
#define UKR_ROW_NVS(X) X(3) X(4)
#define UKR_COLUMN_MRS(X) X(8)
#include "isa/sliver_fma3.h"
#include "isa/ukernel_template.h"
#include "isa/lanes_template.h"

UKR_DEFINE_TILE(avx512_6x32_ymm, 6, 32, 1)
UKR_DEFINE_LANES(avx512_ymm_exact, 0)
UKR_DEFINE_LANES(avx512_ymm_fast, 1)
UKR_DEFINE_LANES_STORE(avx512_ymm)
UKR_DEFINE_TILE(avx512_8x24_ymm, 8, 24, 1)

const sb_tile sb_tile_avx512_6x32_ymm = {
    .name = "avx512 6x32 ymm", .mr = 6, .nr = 32, .mc = 96, .nc = 1024, .muladds_per_ns = 64,
    UKR_TILE_KERNELS(avx512_6x32_ymm, 32), UKR_GENERIC_PACKERS,
};
const sb_tile sb_tile_avx512_8x24_ymm = {
    .name = "avx512 8x24 ymm", .mr = 8, .nr = 24, .mc = 96, .nc = 960, .muladds_per_ns = 64,
    UKR_TILE_KERNELS(avx512_8x24_ymm, 24), UKR_GENERIC_PACKERS,
};
#endif
