/* The few-column kernel's 4-lane slivers on x86-64 paths with FMA3
 * (avx2, avx512): SSE vectors, fused in fast mode like their tile kernels. */
#ifndef SB_SLIVER_FMA3_H
#define SB_SLIVER_FMA3_H

#include <immintrin.h>

typedef __m128 sliver_vec;
#define sliver_load(p) _mm_loadu_ps(p)
#define sliver_load2(p) _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(const void *)(p))
#define sliver_store(p, v) _mm_storeu_ps((p), (v))
#define sliver_store2(p, v) _mm_storel_pi((__m64 *)(void *)(p), (v))
#define sliver_splat(x) _mm_set1_ps(x)
#define sliver_zero() _mm_setzero_ps()
#define sliver_add(a, b) _mm_add_ps((a), (b))
#define sliver_mul(a, b) _mm_mul_ps((a), (b))
#define sliver_fma(acc, a, b) _mm_fmadd_ps((a), (b), (acc))
/* (a part sliver of 4-lane slivers is always 2 rows: MR is 4q or 4q + 2) */
#define sliver_load_part(p, n) sliver_load2(p)
#define sliver_store_part(p, v, n) sliver_store2((p), (v))
#define sliver_canon(v)                                                                     \
    _mm_blendv_ps((v), _mm_castsi128_ps(_mm_set1_epi32(0x7fc00000)), _mm_cmpunord_ps((v), (v)))

#endif
