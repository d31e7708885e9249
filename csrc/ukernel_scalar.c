/* scalar path: plain C, 4 x 4 tile, runs everywhere. No fused multiply-add
 * (fast mode is acc + a*b, the same bits as exact mode). Built with
 * -fno-tree-vectorize so that it stays the honest scalar baseline.
 * Register budget: 16 accumulators + 4 B + 1 A = 21 values; x86-64 has 16
 * xmm registers, so a few accumulators live in L1 - acceptable for a
 * fallback path. */
#include "sb_internal.h"

typedef float vec_t;
#define UKR_MR 4
#define UKR_NR 4
#define UKR_ROW_STRIPS 2
#define UKR_LANES 1
#define vec_load(p) (*(p))
#define vec_store(p, v) (*(p) = (v))
#define vec_splat(x) (x)
#define vec_zero() 0.0f
#define vec_add(a, b) ((a) + (b))
#define vec_mul(a, b) ((a) * (b))
#define vec_fma(acc, a, b) ((acc) + (a) * (b))
#include "ukernel_template.h"

UKR_DEFINE(scalar, 0)

static int scalar_supported(void) { return 1; }

const sb_path_desc sb_path_scalar = UKR_PATH_ENTRY(scalar, 64, 256, 2, 0, scalar_supported);
