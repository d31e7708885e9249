/* N-D max and average pooling (pool_nd.h): plain loops over the taps. */
#include <float.h>
#include "kernels/pool_nd.h"
#include "kernels/lp_pool.h"
#include "math/arith.h"

/* A position's index within its plane: row-major, or column-major. */
static int64_t plane_index(const sb_pool_nd_args *a, const int64_t *pos)
{
    int64_t at = 0;
    if (a->column_major)
        for (int d = a->dims - 1; d >= 0; --d) at = at * a->in[d] + pos[d];
    else
        for (int d = 0; d < a->dims; ++d) at = at * a->in[d] + pos[d];
    return at;
}

static float pool_one(const sb_pool_nd_args *a, const float *x, const int64_t *o, int64_t *index)
{
    int64_t start[3] = {0, 0, 0}, j[3] = {0, 0, 0}, count = 0;
    for (int d = 0; d < a->dims; ++d) start[d] = o[d] * a->stride[d] - a->pad_begin[d];
    int64_t taps = 1;
    for (int d = 0; d < a->dims; ++d) taps *= a->kernel[d];
    float best = -FLT_MAX, sum = 0.0f;
    int seen = 0, all_nan = 1;
    *index = -1;
    for (int64_t t = 0; t < taps; ++t) {
        int inside = 1, padded = 1;
        int64_t at = 0, pos[3] = {0, 0, 0};
        for (int d = 0; d < a->dims; ++d) {
            int64_t p = start[d] + j[d] * a->dilation[d];
            inside &= p >= 0 && p < a->in[d];
            padded &= p < a->in[d] + a->pad_end[d];
            at = at * a->in[d] + p;
            pos[d] = p;
        }
        if (inside) {
            float v = x[at];
            if (a->kind == SB_POOL_ND_MAX) {
                if (!seen) *index = plane_index(a, pos);
                seen = 1;
                if (v == v) {
                    if (all_nan || v > best) best = v, *index = plane_index(a, pos);
                    all_nan = 0;
                }
            } else if (a->kind == SB_POOL_ND_LP) {
                sum = sum + sb_lp_term(v, a->p);
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
    if (a->kind == SB_POOL_ND_LP) return sb_lp_finish(sum, a->p);
    return sb_bin_div(sum, (float)count);
}

void sb_pool_nd(const sb_pool_nd_args *a, const float *x, float *y, int64_t *indices, int64_t first,
                int64_t last)
{
    int64_t in_plane = 1, out_plane = 1;
    for (int d = 0; d < a->dims; ++d) in_plane *= a->in[d], out_plane *= a->out[d];
    for (int64_t p = first; p < last; ++p) {
        int64_t o[3] = {0, 0, 0};
        for (int64_t i = 0; i < out_plane; ++i) {
            int64_t index;
            y[p * out_plane + i] = pool_one(a, x + p * in_plane, o, &index);
            if (indices) indices[p * out_plane + i] = index < 0 ? -1 : p * in_plane + index;
            for (int d = a->dims - 1; d >= 0; --d) {
                if (++o[d] < a->out[d]) break;
                o[d] = 0;
            }
        }
    }
}
