/* avx512 path's max pooling row kernels (pool_template.h). */
#include "isa/pool_template.h"

#if defined(SB_EMULATE_AVX512) || (defined(__AVX512F__) && defined(__FMA__))
POOL_DEFINE(avx512)
#endif
