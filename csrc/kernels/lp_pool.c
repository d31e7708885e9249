/* Lp pooling (lp_pool.h). */
#include "kernels/lp_pool.h"
#include "math/arith.h"

void sb_lp_pool2d(const sb_lp_pool_args *a, const float *x, float *y)
{
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
                        s = s + sb_lp_term(xp[r * a->w + col], a->p);
                    }
                }
                yp[i * a->ow + j] = sb_lp_finish(s, a->p);
            }
    }
}
