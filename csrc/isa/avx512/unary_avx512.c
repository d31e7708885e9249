/* avx512 path's elementwise kernels (unary_template.h): 8 binary64 lanes, or
 * pairs of AVX2 vectors in the SB_EMULATE_AVX512 test build (see
 * ukernel_avx512.c). */
#if !defined(SB_EMULATE_AVX512) && defined(__AVX512F__)
#include "isa/avx512/erf_avx512.h"
#define SB_PATH_ERF_N(x, y, n) sbx_erf_gelu_n(x, y, n, 0)
#define SB_PATH_GELU_N(x, y, n) sbx_erf_gelu_n(x, y, n, 1)
#include "isa/avx512/exp_route_avx512.h"
#define SB_PATH_EXP_N(x, y, n) sbx_exp_route_n(x, y, n, 0)
#define SB_PATH_SIGMOID_N(x, y, n) sbx_exp_route_n(x, y, n, 1)
#include "isa/avx512/log_route_avx512.h"
#define SB_PATH_LOG_N(x, y, n) sbx_log_route_n(x, y, n)
#include "isa/avx512/softmax_row_avx512.h"
#define SB_PATH_SOFTMAX_ROW_FAST sbx_softmax_row_fast
#include "isa/avx512/row_sums_avx512.h"
#define SB_PATH_ROW_SUMS sbx_row_sums
#endif
#include "isa/unary_template.h"

#if defined(SB_EMULATE_AVX512) || (defined(__AVX512F__) && defined(__FMA__))
UNARY_DEFINE(avx512)
#endif
