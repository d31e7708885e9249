/* avx512 path: fast mode's softmax of one contiguous row
 * (docs/exact-ops.md, "Fast mode"), one zmm holding the sum's 16 lanes.
 * kernels/reduce.c runs the same steps as separate passes at its generic
 * 4-lane width, calling the path's exp once per row (a (12, 128, 128)
 * attention softmax: 137 us, of which the exp 56). The same operations on
 * the same values in the same order, so the same bits:
 *
 *   m = the largest x_j, NaN if any is NaN, then m + 0 (a zero maximum is
 *       +0, whichever zero came first; the maximum itself is order-free;
 *       with a NaN x_j every output is NaN whatever m is);
 *   e_j = fast_exp(x_j - m), stored in y;
 *   s = the 16-lane sum of the e_j: lane l adds j = l, l + 16, ... from +0;
 *       q_l = (p_l + p_{l+4}) + (p_{l+8} + p_{l+12}) for l < 4;
 *       s = (q_0 + q_1) + (q_2 + q_3), then the last n mod 16 terms in
 *       increasing j;
 *   y_j = e_j * (1 / s), NaN canonical.
 *
 * The exp is math/fast_math.h's text in a loop the compiler vectorizes, as
 * the path's exp loop; the maximum and the sum are intrinsics (GCC
 * vectorized neither the lanes' maximum nor their combination well). y may
 * be x (in place): each element is read before it is written there, and the
 * exp loop then names y alone (clang runs a loop over two equal pointers
 * scalar). Fast exp, sum and reciprocal as separate passes over the row (in
 * the first level) measured as fast as the exp and sum fused (90-97 us
 * against 98-106 on the shape above). */
#ifndef SB_ISA_AVX512_SOFTMAX_ROW_H
#define SB_ISA_AVX512_SOFTMAX_ROW_H
#include <immintrin.h>
#include <stddef.h>
#include "math/activation.h"
#include "math/fast_math.h"

static inline __mmask16 sbx_first_lanes(size_t count)
{
    return (__mmask16)((1u << count) - 1u);
}

/* The largest of x[0 .. n), n >= 1, two running maxima so that the
 * compares do not wait on one another. NaN is not tracked: vmaxps returns
 * its second operand when either is NaN, so m may or may not come out NaN,
 * but a NaN x_j makes e_j, the sum and so every output NaN whatever m is.
 * Nor is the sign of a zero maximum (vmaxps returns the second of two equal
 * values): the caller adds +0. */
static inline float sbx_row_max(const float *x, size_t n)
{
    const __m512 low = _mm512_set1_ps(sbt_float(0xff800000u));   /* -inf */
    __m512 m0 = low, m1 = low;
    size_t j = 0;
    for (; j + 32 <= n; j += 32) {
        m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + j));
        m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + j + 16));
    }
    for (; j < n; j += 16) {
        const __mmask16 live = n - j >= 16 ? (__mmask16)0xffff : sbx_first_lanes(n - j);
        m0 = _mm512_mask_max_ps(m0, live, m0, _mm512_maskz_loadu_ps(live, x + j));
    }
    __m512 m = _mm512_max_ps(m0, m1);   /* then across the lanes, by halves */
    m = _mm512_max_ps(m, _mm512_shuffle_f32x4(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm512_max_ps(m, _mm512_shuffle_f32x4(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
    m = _mm512_max_ps(m, _mm512_permute_ps(m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm512_max_ps(m, _mm512_permute_ps(m, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm512_cvtss_f32(m);
}

static inline void sbx_softmax_row_fast(const float *x, float *y, size_t n)
{
    const float m = sbx_row_max(x, n) + 0.0f;
    if ((const float *)y == x)
        for (size_t t = 0; t < n; ++t) y[t] = sb_fast_exp(y[t] - m);
    else
        for (size_t t = 0; t < n; ++t) y[t] = sb_fast_exp(x[t] - m);
    __m512 p = _mm512_setzero_ps();
    size_t j = 0;
    for (; j + 16 <= n; j += 16) p = _mm512_add_ps(p, _mm512_loadu_ps(y + j));
    const __m128 q = _mm_add_ps(_mm_add_ps(_mm512_extractf32x4_ps(p, 0), _mm512_extractf32x4_ps(p, 1)),
                                _mm_add_ps(_mm512_extractf32x4_ps(p, 2), _mm512_extractf32x4_ps(p, 3)));
    float lanes[4];
    _mm_storeu_ps(lanes, q);
    float s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (; j < n; ++j) s = s + y[j];
    const float inv = 1.0f / s;
    for (size_t t = 0; t < n; ++t) y[t] = sbt_canonical(y[t] * inv);
}
#endif
