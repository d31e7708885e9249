/* N-D max and average pooling (pool_nd.h): plain loops over the taps. */
#include <float.h>
#include "kernels/pool_nd.h"
#include "math/arith.h"

static float pool_one(const sb_pool_nd_args *a, const float *x, const int64_t *o)
{
    int64_t start[3] = {0, 0, 0}, j[3] = {0, 0, 0}, count = 0;
    for (int d = 0; d < a->dims; ++d) start[d] = o[d] * a->stride[d] - a->pad_begin[d];
    int64_t taps = 1;
    for (int d = 0; d < a->dims; ++d) taps *= a->kernel[d];
    float best = -FLT_MAX, sum = 0.0f;
    int seen = 0, all_nan = 1;
    for (int64_t t = 0; t < taps; ++t) {
        int inside = 1, padded = 1;
        int64_t at = 0;
        for (int d = 0; d < a->dims; ++d) {
            int64_t p = start[d] + j[d] * a->dilation[d];
            inside &= p >= 0 && p < a->in[d];
            padded &= p < a->in[d] + a->pad_end[d];
            at = at * a->in[d] + p;
        }
        if (inside) {
            float v = x[at];
            if (a->kind == SB_POOL_ND_MAX) {
                seen = 1;
                if (v == v) {
                    if (all_nan || v > best) best = v;
                    all_nan = 0;
                }
            } else {
                sum = sb_bin_add(sum, v);
            }
        }
        count += a->count_include_pad ? padded : inside;
        for (int d = a->dims - 1; d >= 0; --d) {   /* row-major: the last axis fastest */
            if (++j[d] < a->kernel[d]) break;
            j[d] = 0;
        }
    }
    if (a->kind == SB_POOL_ND_MAX) return seen && all_nan ? sbt_float(SB_CANONICAL_NAN_BITS) : best;
    return sb_bin_div(sum, (float)count);
}

void sb_pool_nd(const sb_pool_nd_args *a, const float *x, float *y, int64_t first, int64_t last)
{
    int64_t in_plane = 1, out_plane = 1;
    for (int d = 0; d < a->dims; ++d) in_plane *= a->in[d], out_plane *= a->out[d];
    for (int64_t p = first; p < last; ++p) {
        int64_t o[3] = {0, 0, 0};
        for (int64_t i = 0; i < out_plane; ++i) {
            y[p * out_plane + i] = pool_one(a, x + p * in_plane, o);
            for (int d = a->dims - 1; d >= 0; --d) {
                if (++o[d] < a->out[d]) break;
                o[d] = 0;
            }
        }
    }
}
