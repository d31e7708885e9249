/* avx2 path: 6 x 16 tile of 8-lane vectors, FMA3 in fast mode.
 * Register budget: 12 accumulators + 2 B + 1 A broadcast = 15 of 16 ymm.
 * Compiled with -mavx2 -mfma; selected only when CPUID and XCR0 allow it. */
#include "sb_internal.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#include "cpu_x86.h"

typedef __m256 vec_t;
#define UKR_MR 6
#define UKR_NR 16
#define UKR_ROW_STRIPS 4
#define UKR_LANES 8
#define UKR_DW_NV 14
#define vec_load(p) _mm256_loadu_ps(p)
#define vec_store(p, v) _mm256_storeu_ps((p), (v))
#define vec_splat(x) _mm256_set1_ps(x)
#define vec_zero() _mm256_setzero_ps()
#define vec_add(a, b) _mm256_add_ps((a), (b))
#define vec_mul(a, b) _mm256_mul_ps((a), (b))
#define vec_fma(acc, a, b) _mm256_fmadd_ps((a), (b), (acc))
#include "sliver_fma3.h"
#include "ukernel_template.h"

UKR_DEFINE(avx2, 1)

const sb_path_desc sb_path_avx2 = UKR_PATH_ENTRY(avx2, 48, 1024, 40, 1, sb_cpu_has_avx2_fma);
#else
const sb_path_desc sb_path_avx2 = {.name = "avx2"};  /* not built: no kernels */
#endif
