/* 3-D convolution's sums (conv3d.h): plain loops in the defined order. */
#include "kernels/conv3d.h"
#include "math/arith.h"

void sb_conv3d_sums(const sb_conv3d_args *a, const float *x, const float *w, float *y)
{
    int64_t cg = a->c / a->groups, og = a->cout / a->groups;
    int64_t D = a->in[0], H = a->in[1], W = a->in[2];
    int64_t KD = a->kernel[0], KH = a->kernel[1], KW = a->kernel[2];
    int64_t OD = a->out[0], OH = a->out[1], OW = a->out[2];
    for (int64_t n = 0; n < a->n; ++n)
        for (int64_t oc = 0; oc < a->cout; ++oc) {
            int64_t g = oc / og;
            const float *wo = w + oc * cg * KD * KH * KW;
            float *yo = y + (n * a->cout + oc) * OD * OH * OW;
            for (int64_t oz = 0; oz < OD; ++oz)
                for (int64_t oy = 0; oy < OH; ++oy)
                    for (int64_t ox = 0; ox < OW; ++ox) {
                        float acc = 0.0f;
                        for (int64_t c = 0; c < cg; ++c) {
                            const float *xc = x + ((n * a->c) + g * cg + c) * D * H * W;
                            const float *wc = wo + c * KD * KH * KW;
                            for (int64_t kz = 0; kz < KD; ++kz) {
                                int64_t iz = oz * a->stride[0] + kz * a->dilation[0] - a->pad_begin[0];
                                for (int64_t ky = 0; ky < KH; ++ky) {
                                    int64_t iy = oy * a->stride[1] + ky * a->dilation[1] - a->pad_begin[1];
                                    for (int64_t kx = 0; kx < KW; ++kx) {
                                        int64_t ix = ox * a->stride[2] + kx * a->dilation[2] - a->pad_begin[2];
                                        int inside = iz >= 0 && iz < D && iy >= 0 && iy < H && ix >= 0 && ix < W;
                                        float v = inside ? xc[(iz * H + iy) * W + ix] : 0.0f;
                                        float product = wc[(kz * KH + ky) * KW + kx] * v;
                                        acc = acc + product;
                                    }
                                }
                            }
                        }
                        yo[(oz * OH + oy) * OW + ox] = sbt_canonical(acc);
                    }
        }
}
