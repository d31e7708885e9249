/* neon path's elementwise kernels (unary_template.h): 2 binary64 lanes. */
#if defined(__aarch64__) && defined(__ARM_NEON)
#include "isa/vec4_row_sums.h"
#define SB_PATH_ROW_SUMS sb_vec4_row_sums
#endif
#include "isa/unary_template.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
UNARY_DEFINE(neon)
#endif
