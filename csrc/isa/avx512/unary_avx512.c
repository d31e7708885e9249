/* avx512 path's elementwise kernels (unary_template.h): 8 binary64 lanes, or
 * pairs of AVX2 vectors in the SB_EMULATE_AVX512 test build (see
 * ukernel_avx512.c). */
#include "isa/unary_template.h"

#if defined(SB_EMULATE_AVX512) || (defined(__AVX512F__) && defined(__FMA__))
UNARY_DEFINE(avx512)
#endif
