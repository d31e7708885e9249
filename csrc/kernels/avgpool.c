/* sb_avg_pool2d: average pooling over NCHW float32 (docs/exact-ops.md,
 * "Pooling"), torch's avg_pool2d and adaptive_avg_pool2d. Each output sums
 * the window's taps inside the input in row-major (ky, kx) order from +0
 * (padding taps would add +0, which changes no sum that starts at +0), then
 * divides once by its count. Threads take whole output rows. */
#include <stdint.h>
#include "samebits.h"
#include "math/activation.h"
#include "framework/geometry.h"
#include "framework/step.h"

typedef struct {
    const sb_avg_pool2d_args *a;
    size_t rows;                  /* n * c * oh */
} pool_job;

/* [start, end) of output index o along one axis, and its divisor extent:
 * the window before clipping to the input (fixed windows), clipped to the
 * padded input (count_include_pad), or clipped to the input. */
static void window(const sb_avg_pool2d_args *a, int64_t o, int64_t size, int64_t out,
                   int64_t kernel, int64_t stride, int64_t pad_before, int64_t pad_after,
                   int64_t *start, int64_t *end, int64_t *extent)
{
    if (a->adaptive) {
        /* floor(o * size / out) to ceil((o + 1) * size / out) */
        *start = (int64_t)(((uint64_t)o * (uint64_t)size) / (uint64_t)out);
        *end = (int64_t)(((uint64_t)(o + 1) * (uint64_t)size + (uint64_t)out - 1) / (uint64_t)out);
        *extent = *end - *start;
        return;
    }
    int64_t s = o * stride - pad_before;
    int64_t e = s + kernel;
    int64_t padded_end = size + pad_after;
    int64_t e_pad = e < padded_end ? e : padded_end;
    *start = s < 0 ? 0 : s;
    *end = e < size ? e : size;
    *extent = a->count_include_pad ? e_pad - s : *end - *start;
}

static void pool_rows(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const pool_job *job = (const pool_job *)ctx;
    const sb_avg_pool2d_args *a = job->a;
    const float *x = (const float *)(intptr_t)a->x;
    float *y = (float *)(intptr_t)a->y;
    size_t row = chunk;                      /* one output row (n, c, oy) */
    int64_t oy = (int64_t)(row % (size_t)a->oh);
    size_t plane = row / (size_t)a->oh;
    const float *in = x + plane * (size_t)a->h * (size_t)a->w;
    float *out = y + row * (size_t)a->ow;
    int64_t y0, y1, ey;
    window(a, oy, a->h, a->oh, a->kh, a->stride_h, a->pad_top, a->pad_bottom, &y0, &y1, &ey);
    for (int64_t ox = 0; ox < a->ow; ++ox) {
        int64_t x0, x1, ex;
        window(a, ox, a->w, a->ow, a->kw, a->stride_w, a->pad_left, a->pad_right, &x0, &x1, &ex);
        float sum = 0.0f;
        for (int64_t iy = y0; iy < y1; ++iy)
            for (int64_t ix = x0; ix < x1; ++ix) sum = sum + in[iy * a->w + ix];
        int64_t count = a->divisor_override ? a->divisor_override : ey * ex;
        out[ox] = sbt_canonical(sum / (float)count);
    }
}

int sb_avg_pool2d(const sb_avg_pool2d_args *a)
{
    if (!a || a->max_threads < 1) return SB_ERR_ARGUMENT;
    const int64_t L = SB_MAX_SIZE;
    int64_t vals[] = {a->n, a->c, a->h, a->w, a->oh, a->ow, a->kh, a->kw, a->stride_h,
                      a->stride_w, a->pad_top, a->pad_bottom, a->pad_left, a->pad_right,
                      a->divisor_override};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; ++i)
        if (vals[i] < 0 || vals[i] > L) return SB_ERR_ARGUMENT;
    if ((a->count_include_pad != 0 && a->count_include_pad != 1) ||
        (a->adaptive != 0 && a->adaptive != 1))
        return SB_ERR_ARGUMENT;
    if (a->oh < 1 || a->ow < 1 || a->h < 1 || a->w < 1) return SB_ERR_ARGUMENT;
    if (a->adaptive) {
        /* (o + 1) * size + out - 1 within 64 bits */
        if ((uint64_t)a->oh > (UINT64_MAX / 2) / (uint64_t)a->h ||
            (uint64_t)a->ow > (UINT64_MAX / 2) / (uint64_t)a->w)
            return SB_ERR_ARGUMENT;
    } else {
        if (a->kh < 1 || a->kw < 1 || a->stride_h < 1 || a->stride_w < 1) return SB_ERR_ARGUMENT;
        /* every window starts inside the input or its leading padding,
         * (o - 1) * stride <= size + pad_before - 1, compared by division:
         * then no position below can overflow */
        if ((a->oh - 1) > (a->h + a->pad_top - 1) / a->stride_h ||
            (a->ow - 1) > (a->w + a->pad_left - 1) / a->stride_w)
            return SB_ERR_ARGUMENT;
    }
    size_t plane_in, rows;
    if (!sb_nchw_counts(a->n, a->c, a->h, a->w, a->oh, a->ow, &plane_in, &rows))
        return SB_ERR_ARGUMENT;
    if (rows == 0) return SB_OK;
    if (!a->x || !a->y) return SB_ERR_ARGUMENT;      /* H, W >= 1: there is input */
    pool_job job = {.a = a, .rows = rows};
    double taps = a->adaptive ? (double)plane_in / (double)(a->oh * a->ow) + 1.0
                              : (double)(a->kh * a->kw);
    /* one unit: an output row */
    double est_ns = (double)rows * (double)a->ow * taps * SB_COST_POOL_TAP;
    sb_step_plan plan = sb_plan_step(rows, 1, est_ns);
    sb_run_step(&plan, a->max_threads, pool_rows, &job);
    return SB_OK;
}
