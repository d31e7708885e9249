/* vec4 path: 6 x 8 tile over the 4-lane vectors of vec4.h (SSE2, NEON,
 * wasm SIMD128). Register budget: 12 accumulators + 2 B + 1 A = 15 of the
 * 16 xmm registers of x86-64 (V8 maps wasm SIMD128 onto the same file).
 * Fast mode is fused only on NEON. */
#include "sb_internal.h"
#include "vec4.h"

#if VEC4_AVAILABLE
typedef vec4 vec_t;
#define UKR_MR 6
#define UKR_NR 8
#define UKR_ROW_STRIPS 4
#define UKR_LANES 4
#define vec_load vec4_load
#define vec_store vec4_store
#define vec_splat vec4_splat
#define vec_zero vec4_zero
#define vec_add vec4_add
#define vec_mul vec4_mul
#define vec_fma vec4_fma
#include "ukernel_template.h"

UKR_DEFINE(vec4, VEC4_FUSED)

static int vec4_supported(void) { return 1; }

const sb_path_desc sb_path_vec4 = UKR_PATH_ENTRY(vec4, 96, 256, 8, VEC4_FUSED, vec4_supported);
#else
const sb_path_desc sb_path_vec4 = {"vec4", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
#endif
