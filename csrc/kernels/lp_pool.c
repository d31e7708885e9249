/* Lp pooling (lp_pool.h). */
#include "kernels/lp_pool.h"
#include "math/arith.h"

static float lp_term(float v, int64_t p)
{
    float a = __builtin_fabsf(v);
    return p == 1 ? a : p == 2 ? v * v : sb_bin_pow(a, (float)p);
}

void sb_lp_pool2d(const sb_lp_pool_args *a, const float *x, float *y)
{
    float inv_p = 1.0f / (float)a->p;
    for (int64_t plane = 0; plane < a->n * a->c; ++plane) {
        const float *xp = x + plane * a->h * a->w;
        float *yp = y + plane * a->oh * a->ow;
        for (int64_t i = 0; i < a->oh; ++i)
            for (int64_t j = 0; j < a->ow; ++j) {
                volatile float s = 0.0f;
                for (int64_t ky = 0; ky < a->kh; ++ky) {
                    int64_t r = i * a->stride_h - a->pad_top + ky * a->dil_h;
                    if (r < 0 || r >= a->h) continue;
                    for (int64_t kx = 0; kx < a->kw; ++kx) {
                        int64_t col = j * a->stride_w - a->pad_left + kx * a->dil_w;
                        if (col < 0 || col >= a->w) continue;
                        s = s + lp_term(xp[r * a->w + col], a->p);
                    }
                }
                float out = a->p == 1 ? s : a->p == 2 ? __builtin_sqrtf(s) : sb_bin_pow(s, inv_p);
                yp[i * a->ow + j] = sbt_canonical(out);
            }
    }
}
