/* avx2 path's elementwise kernels (unary_template.h), built with the avx2
 * file's flags: 4 binary64 lanes, gathers for erf's coefficient tables. */
#if defined(__AVX2__) && defined(__FMA__)
#include "isa/avx2/row_sums_avx2.h"
#define SB_PATH_ROW_SUMS sbx2_row_sums
#endif
#include "isa/unary_template.h"

#if defined(__AVX2__) && defined(__FMA__)
UNARY_DEFINE(avx2)
#endif
