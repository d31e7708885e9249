/* avx2 path's elementwise kernels (unary_template.h), built with the avx2
 * file's flags: 4 binary64 lanes, gathers for erf's coefficient tables. */
#include "isa/unary_template.h"

#if defined(__AVX2__) && defined(__FMA__)
UNARY_DEFINE(avx2)
#endif
