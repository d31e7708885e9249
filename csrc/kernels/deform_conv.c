/* DeformConv (deform_conv.h): one image at a time, its samples into
 * scratch (one unit per input channel and output row), then the sums (one
 * unit per output channel and output row). */
#include <math.h>
#include <string.h>
#include "samebits.h"
#include "framework/step.h"
#include "math/activation.h"
#include "kernels/deform_conv.h"

typedef struct {
    const sb_deform_conv_args *a;
    int64_t image;                      /* the batch entry */
} job;

uint64_t sb_deform_conv_scratch_floats(const sb_deform_conv_args *a)
{
    /* In 64 bits whatever size_t is, at most 2^62; taps x OH x OW is the
     * offset tensor's size / 2 (a tensor's size fits). The bound is tested
     * in binary64, not as a division: clang turns that overflow test into a
     * 128-bit multiply, a call to __multi3 on wasm32 that the relaxed-SIMD
     * module may not import. */
    uint64_t per_channel = (uint64_t)(a->kh * a->kw) * (uint64_t)(a->oh * a->ow);
    if ((double)a->c * (double)per_channel >= 0x1p62) return (uint64_t)1 << 62;
    return (uint64_t)a->c * per_channel;
}

/* The bilinear sample of one channel's plane at (p, q) (deform_conv.h). */
static float sample(const float *plane, int64_t h, int64_t w, float p, float q)
{
    if (p != p || q != q) return sbt_canonical(p + q);
    if (p <= -1.0f || p >= (float)h || q <= -1.0f || q >= (float)w) return 0.0f;
    float hf = floorf(p), wf = floorf(q);
    int64_t h0 = (int64_t)hf, w0 = (int64_t)wf;
    float lh = p - hf, lw = q - wf, hh = 1.0f - lh, hw = 1.0f - lw;
    int top = h0 >= 0, bottom = h0 + 1 < h, left = w0 >= 0, right = w0 + 1 < w;
    float v1 = top && left ? plane[h0 * w + w0] : 0.0f;
    float v2 = top && right ? plane[h0 * w + w0 + 1] : 0.0f;
    float v3 = bottom && left ? plane[(h0 + 1) * w + w0] : 0.0f;
    float v4 = bottom && right ? plane[(h0 + 1) * w + w0 + 1] : 0.0f;
    float w1 = hh * hw, w2 = hh * lw, w3 = lh * hw, w4 = lh * lw;
    float v = w1 * v1;
    v = v + w2 * v2;
    v = v + w3 * v3;
    v = v + w4 * v4;
    return v;
}

/* Unit (c, oy): the samples of channel c for output row oy, every tap. */
static void sample_fn(void *ctx, size_t unit, int thread_index)
{
    (void)thread_index;
    const job *j = ctx;
    const sb_deform_conv_args *a = j->a;
    int64_t c = (int64_t)unit / a->oh, oy = (int64_t)unit % a->oh;
    int64_t taps = a->kh * a->kw, plane_out = a->oh * a->ow;
    int64_t g = c / (a->c / a->offset_group);
    const float *plane = a->x + (j->image * a->c + c) * a->h * a->w;
    const float *off = a->offset + (j->image * a->offset_group + g) * taps * 2 * plane_out;
    const float *mask = a->mask ? a->mask + (j->image * a->offset_group + g) * taps * plane_out : NULL;
    for (int64_t i = 0; i < a->kh; ++i)
        for (int64_t k = 0; k < a->kw; ++k) {
            int64_t t = i * a->kw + k;
            float *col = a->scratch + (c * taps + t) * plane_out + oy * a->ow;
            const float *dy = off + (2 * t) * plane_out + oy * a->ow, *dx = dy + plane_out;
            const float *mk = mask ? mask + t * plane_out + oy * a->ow : NULL;
            float base_h = (float)(oy * a->stride_h - a->pad_h + i * a->dilation_h);
            for (int64_t ox = 0; ox < a->ow; ++ox) {
                float base_w = (float)(ox * a->stride_w - a->pad_w + k * a->dilation_w);
                float v = sample(plane, a->h, a->w, base_h + dy[ox], base_w + dx[ox]);
                col[ox] = mk ? v * mk[ox] : v;
            }
        }
}

/* Unit (m, oy): output row oy of channel m. */
static void sum_fn(void *ctx, size_t unit, int thread_index)
{
    (void)thread_index;
    const job *j = ctx;
    const sb_deform_conv_args *a = j->a;
    int64_t m = (int64_t)unit / a->oh, oy = (int64_t)unit % a->oh;
    int64_t cg = a->c / a->group, first = m / (a->m / a->group) * cg;
    int64_t taps = a->kh * a->kw, plane_out = a->oh * a->ow, depth = cg * taps;
    float *y = a->y + ((j->image * a->m + m) * a->oh + oy) * a->ow;
    const float *wrow = a->weight + m * depth;
    const float *col = a->scratch + first * taps * plane_out + oy * a->ow;
    for (int64_t ox = 0; ox < a->ow; ++ox) y[ox] = 0.0f;
    for (int64_t k = 0; k < depth; ++k) {
        float wk = wrow[k];
        const float *src = col + k * plane_out;
        for (int64_t ox = 0; ox < a->ow; ++ox) y[ox] = y[ox] + wk * src[ox];
    }
    if (a->bias)
        for (int64_t ox = 0; ox < a->ow; ++ox) y[ox] = y[ox] + a->bias[m];
    for (int64_t ox = 0; ox < a->ow; ++ox) y[ox] = sbt_canonical(y[ox]);
}

int sb_deform_conv(const sb_deform_conv_args *a)
{
    if (!a || a->max_threads < 1 || a->n < 0 || a->c < 1 || a->h < 1 || a->w < 1 || a->m < 1 ||
        a->group < 1 || a->offset_group < 1 || a->c % a->group || a->m % a->group ||
        a->c % a->offset_group || a->kh < 1 || a->kw < 1 || a->oh < 0 || a->ow < 0 ||
        a->stride_h < 1 || a->stride_w < 1 || a->dilation_h < 1 || a->dilation_w < 1 ||
        a->pad_h < 0 || a->pad_w < 0)
        return SB_ERR_ARGUMENT;
    if (a->n == 0 || a->oh == 0 || a->ow == 0) return SB_OK;
    if (!a->x || !a->weight || !a->offset || !a->y || !a->scratch) return SB_ERR_ARGUMENT;
    int64_t taps = a->kh * a->kw;
    double samples = (double)a->c * (double)taps * (double)(a->oh * a->ow);
    double products = samples / (double)a->group * (double)a->m;
    sb_step_plan sample_plan = sb_plan_step((size_t)(a->c * a->oh), 1, samples * SB_COST_RESIZE);
    sb_step_plan sum_plan = sb_plan_step((size_t)(a->m * a->oh), 1, products * SB_COST_REDUCE);
    for (int64_t n = 0; n < a->n; ++n) {
        job j = {a, n};
        sb_run_step(&sample_plan, a->max_threads, sample_fn, &j);
        sb_run_step(&sum_plan, a->max_threads, sum_fn, &j);
    }
    return SB_OK;
}
