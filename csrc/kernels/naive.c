/* The exact-mode definition, literally: one accumulator per output, from +0,
 * increasing p, each product and each sum rounded on its own (this file is
 * compiled with -ffp-contract=off), every NaN stored as 0x7FC00000. */
#include <string.h>
#include "samebits.h"
#include "kernels/conv_internal.h"
#include "framework/epilogue.h"
#include "framework/fpenv.h"

/* NaN stored as 0x7FC00000, as the definition says. */
static float canonical(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u) bits = 0x7fc00000u;
    memcpy(&v, &bits, sizeof bits);
    return v;
}

int sb_sgemm_naive(size_t m, size_t n, size_t k,
                   const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                   const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
                   float *c, ptrdiff_t ldc)
{
    if ((m && n && !c) || (m && n && k && (!a || !b))) return SB_ERR_ARGUMENT;
    sb_fpenv env;
    sb_fpenv_enter(&env);
    for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
            volatile float acc = 0.0f;  /* volatile: no reassociation, no contraction */
            for (size_t p = 0; p < k; ++p) {
                float prod = a[(ptrdiff_t)i * a_row + (ptrdiff_t)p * a_col] *
                             b[(ptrdiff_t)p * b_row + (ptrdiff_t)j * b_col];
                acc = acc + prod;
            }
            c[(ptrdiff_t)i * ldc + (ptrdiff_t)j] = canonical(acc);
        }
    }
    sb_fpenv_leave(&env);
    return SB_OK;
}

/* The convolution definition of docs/convolution.md as loops: taps in the
 * order (c, ky, kx), padding taps multiplied by +0, then bias, activation and
 * canonical NaN through the shared epilogue. */
int sb_conv2d_naive(const sb_conv2d_args *args)
{
    sb_conv_desc d;
    int status = sb_conv_parse(args, &d);
    if (status != SB_OK) return status;
    if (d.packed) return SB_ERR_ARGUMENT;
    const size_t cin_g = d.c / d.groups, cout_g = d.cout / d.groups;
    const size_t plane = d.out_h * d.out_w;
    sb_fpenv env;
    sb_fpenv_enter(&env);
    for (size_t n = 0; n < d.n; ++n) {
        for (size_t oc = 0; oc < d.cout; ++oc) {
            size_t g = oc / cout_g;
            float *out = d.y + (n * d.cout + oc) * plane;
            for (size_t oy = 0; oy < d.out_h; ++oy) {
                for (size_t ox = 0; ox < d.out_w; ++ox) {
                    volatile float acc = 0.0f;
                    for (size_t c = 0; c < cin_g; ++c) {
                        const float *in = d.x + (n * d.c + g * cin_g + c) * d.h * d.w;
                        const float *wt = d.weights + ((oc * cin_g + c) * d.kh) * d.kw;
                        for (size_t ky = 0; ky < d.kh; ++ky) {
                            for (size_t kx = 0; kx < d.kw; ++kx) {
                                ptrdiff_t iy = (ptrdiff_t)(oy * d.stride_h + ky * d.dil_h) -
                                               (ptrdiff_t)d.pad_top;
                                ptrdiff_t ix = (ptrdiff_t)(ox * d.stride_w + kx * d.dil_w) -
                                               (ptrdiff_t)d.pad_left;
                                int inside = iy >= 0 && iy < (ptrdiff_t)d.h && ix >= 0 &&
                                             ix < (ptrdiff_t)d.w;
                                float v = inside ? in[(size_t)iy * d.w + (size_t)ix] : 0.0f;
                                float prod = wt[ky * d.kw + kx] * v;
                                acc = acc + prod;
                            }
                        }
                    }
                    out[oy * d.out_w + ox] = canonical(acc);
                }
            }
            sb_epilogue(out, 0, 1, plane, d.bias ? d.bias + oc : NULL, NULL, d.activation);
        }
    }
    sb_fpenv_leave(&env);
    return SB_OK;
}
