/* avx512 path: 12 x 32 tile of 16-lane vectors, FMA in fast mode.
 * Register budget: 24 accumulators + 2 B + 1 A broadcast = 27 of 32 zmm.
 * Compiled with -mavx512f -mfma; selected only when CPUID and XCR0 allow it. */
#include "sb_internal.h"

#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>
#include "cpu_x86.h"

typedef __m512 vec_t;
#define UKR_MR 12
#define UKR_NR 32
#define UKR_ROW_STRIPS 4
#define UKR_LANES 16
#define UKR_DW_NV 24
#define vec_load(p) _mm512_loadu_ps(p)
#define vec_store(p, v) _mm512_storeu_ps((p), (v))
#define vec_splat(x) _mm512_set1_ps(x)
#define vec_zero() _mm512_setzero_ps()
#define vec_add(a, b) _mm512_add_ps((a), (b))
#define vec_mul(a, b) _mm512_mul_ps((a), (b))
#define vec_fma(acc, a, b) _mm512_fmadd_ps((a), (b), (acc))
#include "ukernel_template.h"

UKR_DEFINE(avx512, 1)

const sb_path_desc sb_path_avx512 = UKR_PATH_ENTRY(avx512, 96, 1024, 64, 1, sb_cpu_has_avx512f);
#else
const sb_path_desc sb_path_avx512 = {"avx512", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
#endif
