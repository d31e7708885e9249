/* neon path's max pooling row kernels (pool_template.h). */
#include "isa/pool_template.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
POOL_DEFINE(neon)
#endif
