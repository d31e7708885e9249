/* avx2 path's max pooling row kernels (pool_template.h). */
#include "isa/pool_template.h"

#if defined(__AVX2__) && defined(__FMA__)
POOL_DEFINE(avx2)
#endif
