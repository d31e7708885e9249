/* A 4-lane float vector over SSE2 (x86-64), NEON (arm64) or SIMD128 (wasm).
 * VEC4_AVAILABLE is 0 on targets with none of them. VEC4_FUSED says whether
 * vec4_fma is a fused multiply-add: on NEON, and in WebAssembly when the
 * module is built with relaxed SIMD (-mrelaxed-simd: f32x4.relaxed_madd,
 * which the engine runs as one fused instruction where the CPU has FMA).
 * SSE2 and plain SIMD128 have none. vec4_fma is used by fast mode only.
 * vec4_even(a, b) is {a0, a2, b0, b2} and vec4_odd(a, b) {a1, a3, b1, b3}: the
 * two halves of a stride-2 gather of eight floats.
 * vec4_load2(p) is {p[0], p[1], +0, +0}; vec4_store2 stores lanes 0 and 1.
 * For transposes (data movement only): vec4_zip_lo(a, b) = {a0, b0, a1, b1},
 * vec4_zip_hi(a, b) = {a2, b2, a3, b3}, vec4_lo64(a, b) = {a0, a1, b0, b1},
 * vec4_hi64(a, b) = {a2, a3, b2, b3}. vec4_canon(v) is v with every NaN lane
 * replaced by the canonical NaN 0x7FC00000 (a compare and a select).
 * vec4_max(a, b) is the larger lane by lane where neither is NaN (vec4_min
 * the smaller); what they give for NaN and for -0 against +0 differs
 * between ISAs, so callers
 * track NaN themselves: vec4_nan_or(flags, v) sets a lane of flags nonzero
 * where v is NaN (and keeps it set), vec4_any(flags) says if any lane is. */
#ifndef SB_VEC4_H
#define SB_VEC4_H

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define VEC4_AVAILABLE 1
typedef v128_t vec4;
#define vec4_load(p) wasm_v128_load(p)
#define vec4_store(p, v) wasm_v128_store((p), (v))
#define vec4_splat(x) wasm_f32x4_splat(x)
#define vec4_zero() wasm_f32x4_splat(0.0f)
#define vec4_add(a, b) wasm_f32x4_add((a), (b))
#define vec4_sub(a, b) wasm_f32x4_sub((a), (b))
#define vec4_mul(a, b) wasm_f32x4_mul((a), (b))
#define vec4_even(a, b) wasm_i32x4_shuffle((a), (b), 0, 2, 4, 6)
#define vec4_odd(a, b) wasm_i32x4_shuffle((a), (b), 1, 3, 5, 7)
#define vec4_load2(p) wasm_v128_load64_zero(p)
#define vec4_store2(p, v) wasm_v128_store64_lane((p), (v), 0)
#define vec4_zip_lo(a, b) wasm_i32x4_shuffle((a), (b), 0, 4, 1, 5)
#define vec4_zip_hi(a, b) wasm_i32x4_shuffle((a), (b), 2, 6, 3, 7)
#define vec4_lo64(a, b) wasm_i32x4_shuffle((a), (b), 0, 1, 4, 5)
#define vec4_hi64(a, b) wasm_i32x4_shuffle((a), (b), 2, 3, 6, 7)
#define vec4_canon(v) \
    wasm_v128_bitselect((v), wasm_i32x4_splat(0x7fc00000), wasm_f32x4_eq((v), (v)))
#define vec4_max(a, b) wasm_f32x4_pmax((a), (b))
#define vec4_min(a, b) wasm_f32x4_pmin((a), (b))
#define vec4_nan_or(flags, v) wasm_v128_or((flags), wasm_f32x4_ne((v), (v)))
#define vec4_any(flags) wasm_v128_any_true(flags)
#if defined(__wasm_relaxed_simd__)
/* relaxed_madd(x, y, z) = x * y + z, fused or not at the engine's choice
 * (fused on x86 with FMA3 and on arm64). */
#define VEC4_FUSED 1
#define VEC4_TARGET "wasm-simd128-relaxed"
#define vec4_fma(acc, a, b) wasm_f32x4_relaxed_madd((a), (b), (acc))
#else
#define VEC4_FUSED 0
#define VEC4_TARGET "wasm-simd128"
#define vec4_fma(acc, a, b) wasm_f32x4_add((acc), wasm_f32x4_mul((a), (b)))
#endif

#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define VEC4_AVAILABLE 1
#define VEC4_FUSED 1
#define VEC4_TARGET "neon"
typedef float32x4_t vec4;
#define vec4_load(p) vld1q_f32(p)
#define vec4_store(p, v) vst1q_f32((p), (v))
#define vec4_splat(x) vdupq_n_f32(x)
#define vec4_zero() vdupq_n_f32(0.0f)
#define vec4_add(a, b) vaddq_f32((a), (b))
#define vec4_sub(a, b) vsubq_f32((a), (b))
#define vec4_mul(a, b) vmulq_f32((a), (b))
#define vec4_even(a, b) vuzp1q_f32((a), (b))
#define vec4_odd(a, b) vuzp2q_f32((a), (b))
#define vec4_load2(p) vcombine_f32(vld1_f32(p), vdup_n_f32(0.0f))
#define vec4_store2(p, v) vst1_f32((p), vget_low_f32(v))
#define vec4_zip_lo(a, b) vzip1q_f32((a), (b))
#define vec4_zip_hi(a, b) vzip2q_f32((a), (b))
#define vec4_lo64(a, b) \
    vreinterpretq_f32_f64(vzip1q_f64(vreinterpretq_f64_f32(a), vreinterpretq_f64_f32(b)))
#define vec4_hi64(a, b) \
    vreinterpretq_f32_f64(vzip2q_f64(vreinterpretq_f64_f32(a), vreinterpretq_f64_f32(b)))
#define vec4_canon(v) \
    vbslq_f32(vceqq_f32((v), (v)), (v), vreinterpretq_f32_u32(vdupq_n_u32(0x7fc00000u)))
#define vec4_max(a, b) vmaxq_f32((a), (b))
#define vec4_min(a, b) vminq_f32((a), (b))
#define vec4_nan_or(flags, v) \
    vreinterpretq_f32_u32(vornq_u32(vreinterpretq_u32_f32(flags), vceqq_f32((v), (v))))
#define vec4_any(flags) (vmaxvq_u32(vreinterpretq_u32_f32(flags)) != 0)
#define vec4_fma(acc, a, b) vfmaq_f32((acc), (a), (b))

#elif defined(__SSE2__)
#include <emmintrin.h>
#define VEC4_AVAILABLE 1
#define VEC4_FUSED 0
#define VEC4_TARGET "sse2"
typedef __m128 vec4;
#define vec4_load(p) _mm_loadu_ps(p)
#define vec4_store(p, v) _mm_storeu_ps((p), (v))
#define vec4_splat(x) _mm_set1_ps(x)
#define vec4_zero() _mm_setzero_ps()
#define vec4_add(a, b) _mm_add_ps((a), (b))
#define vec4_sub(a, b) _mm_sub_ps((a), (b))
#define vec4_mul(a, b) _mm_mul_ps((a), (b))
#define vec4_even(a, b) _mm_shuffle_ps((a), (b), _MM_SHUFFLE(2, 0, 2, 0))
#define vec4_odd(a, b) _mm_shuffle_ps((a), (b), _MM_SHUFFLE(3, 1, 3, 1))
#define vec4_load2(p) _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(const void *)(p))
#define vec4_store2(p, v) _mm_storel_pi((__m64 *)(void *)(p), (v))
#define vec4_zip_lo(a, b) _mm_unpacklo_ps((a), (b))
#define vec4_zip_hi(a, b) _mm_unpackhi_ps((a), (b))
#define vec4_lo64(a, b) _mm_movelh_ps((a), (b))
#define vec4_hi64(a, b) _mm_movehl_ps((b), (a))
static inline __m128 vec4_canon(__m128 v)
{
    __m128 nan = _mm_cmpunord_ps(v, v);
    return _mm_or_ps(_mm_and_ps(nan, _mm_castsi128_ps(_mm_set1_epi32(0x7fc00000))),
                     _mm_andnot_ps(nan, v));
}
#define vec4_max(a, b) _mm_max_ps((a), (b))
#define vec4_min(a, b) _mm_min_ps((a), (b))
#define vec4_nan_or(flags, v) _mm_or_ps((flags), _mm_cmpunord_ps((v), (v)))
#define vec4_any(flags) (_mm_movemask_ps(flags) != 0)
#define vec4_fma(acc, a, b) _mm_add_ps((acc), _mm_mul_ps((a), (b)))

#else
#define VEC4_AVAILABLE 0
#define VEC4_FUSED 0
#endif

#endif
