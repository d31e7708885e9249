/* avx2 path's elementwise kernels (unary_template.h), built with the avx2
 * file's flags: 4 binary64 lanes; erf and gelu's coefficients by transposes
 * (erf_avx2.h), the others' tables by gathers. */
#if defined(__AVX2__) && defined(__FMA__)
#include "isa/avx2/erf_avx2.h"
#define SB_PATH_ERF_N(x, y, n) sbx2_erf_gelu_n(x, y, n, 0)
#define SB_PATH_GELU_N(x, y, n) sbx2_erf_gelu_n(x, y, n, 1)
#include "isa/avx2/row_sums_avx2.h"
#define SB_PATH_ROW_SUMS sbx2_row_sums
#endif
#include "isa/unary_template.h"

#if defined(__AVX2__) && defined(__FMA__)
UNARY_DEFINE(avx2)
#endif
