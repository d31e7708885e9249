/* sb_resize2d: nearest and bilinear resizing of NCHW float32 with torch's
 * interpolate rules (docs/exact-ops.md, "Resize"). Every coordinate and
 * weight is a float32 operation in a stated order, so the bits are the same
 * everywhere; threads take whole output rows (nearest: runs of them). */
#include <stdint.h>
#include <string.h>
#include "samebits.h"
#include "math/activation.h"
#include "framework/geometry.h"
#include "framework/memory.h"
#include "framework/step.h"
#include "kernels/nearest_rows.h"

typedef struct {
    const sb_resize2d_args *a;
    float scale_h, scale_w;
    sb_nearest_map map;          /* nearest: the source of each output row and column */
    sb_step_plan plan;           /* nearest: units are output rows */
} resize_job;

/* nearest: min(floor(o * scale), size - 1) */
static int64_t nearest(int64_t o, float scale, int64_t size)
{
    float s = (float)o * scale;
    s = s < 0x1p40f ? s : 0x1p40f;          /* keeps the conversion in range */
    int64_t i = (int64_t)s;                 /* s >= 0: truncation is floor */
    return i < size - 1 ? i : size - 1;
}

/* bilinear: the source position, its lower index, the index after it and
 * the upper weight. */
static void linear_source(int64_t o, float scale, int64_t size, int align, int64_t *i0,
                          int64_t *i1, float *l1)
{
    float src = align ? scale * (float)o : scale * ((float)o + 0.5f) - 0.5f;
    src = src < 0.0f ? 0.0f : src;
    src = src < 0x1p40f ? src : 0x1p40f;    /* keeps the conversion in range */
    int64_t i = (int64_t)src;
    i = i < size - 1 ? i : size - 1;
    *i0 = i;
    *i1 = i + (i < size - 1 ? 1 : 0);
    *l1 = src - (float)i;
}

/* Nearest over a chunk's run of output rows (nearest_rows.h). */
static void nearest_chunk(void *ctx, size_t chunk, int thread_index)
{
    (void)thread_index;
    const resize_job *job = (const resize_job *)ctx;
    size_t first, end;
    sb_step_units(&job->plan, chunk, &first, &end);
    sb_nearest_rows(&job->map, first, end);
}

static void resize_row(void *ctx, size_t row, int thread_index)
{
    (void)thread_index;
    const resize_job *job = (const resize_job *)ctx;
    const sb_resize2d_args *a = job->a;
    const float *x = (const float *)(intptr_t)a->x;
    float *y = (float *)(intptr_t)a->y;
    int64_t oy = (int64_t)(row % (size_t)a->oh);
    size_t plane = row / (size_t)a->oh;
    const float *in = x + plane * (size_t)a->h * (size_t)a->w;
    float *out = y + row * (size_t)a->ow;
    int64_t y0, y1;
    float ly1;
    linear_source(oy, job->scale_h, a->h, (int)a->align_corners, &y0, &y1, &ly1);
    float ly0 = 1.0f - ly1;
    const float *r0 = in + y0 * a->w, *r1 = in + y1 * a->w;
    for (int64_t ox = 0; ox < a->ow; ++ox) {
        int64_t x0, x1;
        float lx1;
        linear_source(ox, job->scale_w, a->w, (int)a->align_corners, &x0, &x1, &lx1);
        float lx0 = 1.0f - lx1;
        float top = lx0 * r0[x0] + lx1 * r0[x1];
        float bottom = lx0 * r1[x0] + lx1 * r1[x1];
        out[ox] = sbt_canonical(ly0 * top + ly1 * bottom);
    }
}

int sb_resize2d(const sb_resize2d_args *a)
{
    if (!a || a->max_threads < 1 || (a->mode != 0 && a->mode != 1) ||
        (a->align_corners != 0 && a->align_corners != 1) || (a->mode == 0 && a->align_corners))
        return SB_ERR_ARGUMENT;
    int64_t vals[] = {a->n, a->c, a->h, a->w, a->oh, a->ow};
    for (size_t i = 0; i < 6; ++i)
        if (vals[i] < 0 || vals[i] > SB_MAX_SIZE) return SB_ERR_ARGUMENT;
    if (a->h < 1 || a->w < 1 || a->oh < 1 || a->ow < 1) return SB_ERR_ARGUMENT;
    if (a->scale_h < 0 || a->scale_h > (int64_t)UINT32_MAX || a->scale_w < 0 ||
        a->scale_w > (int64_t)UINT32_MAX)
        return SB_ERR_ARGUMENT;
    resize_job job = {.a = a};
    uint32_t bh = (uint32_t)a->scale_h, bw = (uint32_t)a->scale_w;
    memcpy(&job.scale_h, &bh, 4);
    memcpy(&job.scale_w, &bw, 4);
    if (!(job.scale_h >= 0.0f && job.scale_w >= 0.0f) || job.scale_h > 0x1p40f ||
        job.scale_w > 0x1p40f)
        return SB_ERR_ARGUMENT;              /* NaN, negative or absurd scales */
    size_t plane_in, rows;
    if (!sb_nchw_counts(a->n, a->c, a->h, a->w, a->oh, a->ow, &plane_in, &rows))
        return SB_ERR_ARGUMENT;
    if (rows == 0) return SB_OK;
    if (!a->x || !a->y) return SB_ERR_ARGUMENT;
    if (a->mode == 0) {   /* runs of output rows, each a gather or a copy */
        int64_t *idx = sb_alloc_aligned((size_t)(a->oh + a->ow) * sizeof *idx);
        if (!idx) return SB_ERR_NO_MEMORY;
        for (int64_t oy = 0; oy < a->oh; ++oy) idx[oy] = nearest(oy, job.scale_h, a->h);
        for (int64_t ox = 0; ox < a->ow; ++ox) idx[a->oh + ox] = nearest(ox, job.scale_w, a->w);
        job.map = (sb_nearest_map){(const float *)(intptr_t)a->x, (float *)(intptr_t)a->y, a->h,
                                   a->w, a->oh, a->ow, idx, idx + a->oh,
                                   sb_whole_factor(idx + a->oh, a->w, a->ow)};
        job.plan = sb_plan_step(rows, sb_units_per_chunk((size_t)a->ow, SB_STEP_CHUNK_ITEMS),
                                (double)rows * (double)a->ow * SB_COST_MOVE);
        sb_run_step(&job.plan, a->max_threads, nearest_chunk, &job);
        sb_free_aligned(idx);
        return SB_OK;
    }
    /* one unit: an output row */
    sb_step_plan plan = sb_plan_step(rows, 1, (double)rows * (double)a->ow * SB_COST_RESIZE);
    sb_run_step(&plan, a->max_threads, resize_row, &job);
    return SB_OK;
}
