/* vec4 path's elementwise kernels (unary_template.h): the compiler's 2 x
 * binary64 lanes of SSE2, NEON or wasm SIMD128. */
#include "isa/vec4_row_sums.h"
#if VEC4_AVAILABLE
#define SB_PATH_ROW_SUMS sb_vec4_row_sums
#endif
#include "isa/unary_template.h"
#include "isa/vec4.h"

#if VEC4_AVAILABLE
UNARY_DEFINE(vec4)
#endif
