/* neon path's elementwise kernels (unary_template.h): 2 binary64 lanes. */
#include "isa/unary_template.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
UNARY_DEFINE(neon)
#endif
