/* sb_norm: batch normalization (inference form) and group normalization of
 * float32 (N, C, spatial...) tensors (docs/exact-ops.md, "Normalization").
 * Every step is a float32 operation in a stated order; group statistics are
 * sums in increasing index from +0 over the group's values in C order.
 * Threads take whole (n, c) planes (batch) or blocks of whole (n, group)
 * slices, whose statistics run side by side (group_block). */
#include <stdint.h>
#include <string.h>
#include "samebits.h"
#include "math/activation.h"
#include "framework/checked.h"
#include "framework/step.h"
#include "isa/isa.h"

enum { NORM_BATCH = 0, NORM_GROUP = 1, NORM_COUNT };

/* Group slices whose statistics run together: the path's row sums take up
 * to 16 rows (isa.h), one a lane, where a slice alone is one serial chain
 * of adds (InstanceNormalization over 64 x 112 x 112: 1.1 ms). */
#define SLICE_BLOCK 16

typedef struct {
    const sb_norm_args *a;
    /* the path's serial row sums (isa/unary_template.h) */
    void (*row_sums)(const float *x, size_t rows, size_t n, const float *mean, float *acc);
    size_t c, spatial, groups, per_group, slices, per_block;
    const float *x, *mean, *var, *weight, *bias;
    float *y;
    float eps;
} norm_job;

/* y = ((x - mean) * r), then * weight, then + bias, over n values of one channel. */
static void normalize(const float *x, float *y, size_t n, float mean, float r, const float *w,
                      const float *b)
{
    if (w && b) {
        float wv = *w, bv = *b;
        for (size_t j = 0; j < n; ++j) y[j] = sbt_canonical(((x[j] - mean) * r) * wv + bv);
    } else if (w) {
        float wv = *w;
        for (size_t j = 0; j < n; ++j) y[j] = sbt_canonical(((x[j] - mean) * r) * wv);
    } else if (b) {
        float bv = *b;
        for (size_t j = 0; j < n; ++j) y[j] = sbt_canonical(((x[j] - mean) * r) + bv);
    } else {
        for (size_t j = 0; j < n; ++j) y[j] = sbt_canonical((x[j] - mean) * r);
    }
}

static void batch_plane(void *ctx, size_t plane, int thread_index)
{
    (void)thread_index;
    const norm_job *job = (const norm_job *)ctx;
    size_t ch = plane % job->c;
    float r = 1.0f / __builtin_sqrtf(job->var[ch] + job->eps);
    size_t off = plane * job->spatial;
    normalize(job->x + off, job->y + off, job->spatial, job->mean[ch], r,
              job->weight ? job->weight + ch : NULL, job->bias ? job->bias + ch : NULL);
}

/* Slices [s0, s0 + rows) of a block: each slice's sum over its values in
 * C order from +0, mean = sum / count, the sum of (x - mean)^2 likewise,
 * r = 1 / sqrt(that / count + eps); then its channels normalized. */
static void group_block(void *ctx, size_t block, int thread_index)
{
    (void)thread_index;
    const norm_job *job = (const norm_job *)ctx;
    const size_t count = job->per_group * job->spatial, s0 = block * job->per_block;
    const size_t rows = job->slices - s0 < job->per_block ? job->slices - s0 : job->per_block;
    const float *x = job->x + s0 * count;
    const float n = (float)count;
    float mean[SLICE_BLOCK], sq[SLICE_BLOCK];
    job->row_sums(x, rows, count, NULL, mean);
    for (size_t r = 0; r < rows; ++r) mean[r] = mean[r] / n;
    job->row_sums(x, rows, count, mean, sq);
    for (size_t r = 0; r < rows; ++r) {
        const size_t slice = s0 + r;
        const float rr = 1.0f / __builtin_sqrtf(sq[r] / n + job->eps);
        const size_t first = (slice % job->groups) * job->per_group;
        const float *xs = x + r * count;
        float *ys = job->y + slice * count;
        for (size_t k = 0; k < job->per_group; ++k) {
            size_t ch = first + k;
            normalize(xs + k * job->spatial, ys + k * job->spatial, job->spatial, mean[r], rr,
                      job->weight ? job->weight + ch : NULL, job->bias ? job->bias + ch : NULL);
        }
    }
}

int sb_norm(const sb_norm_args *a)
{
    if (!a || a->max_threads < 1) return SB_ERR_ARGUMENT;
    if (a->mode != SB_MODE_FAST && a->mode != SB_MODE_EXACT) return SB_ERR_ARGUMENT;
    if (a->op < 0 || a->op >= NORM_COUNT) return SB_ERR_ARGUMENT;
    if (a->path < 0 || a->path > INT32_MAX || !sb_path_supported((int)a->path)) return SB_ERR_PATH;
    if (a->n < 0 || a->c < 0 || a->spatial < 0 || a->n > SB_MAX_SIZE || a->c > SB_MAX_SIZE ||
        a->spatial > SB_MAX_SIZE || a->eps < 0 || a->eps > (int64_t)UINT32_MAX)
        return SB_ERR_ARGUMENT;
    if (a->op == NORM_GROUP && (a->groups < 1 || a->groups > SB_MAX_SIZE ||
                                (a->c && a->c % a->groups != 0)))
        return SB_ERR_ARGUMENT;
    if (a->op == NORM_BATCH && (a->groups != 0 || (a->c && (!a->mean || !a->var))))
        return SB_ERR_ARGUMENT;
    size_t planes, total;
    if (!sb_mul_ok((size_t)a->n, (size_t)a->c, &planes) ||
        !sb_mul_ok(planes, (size_t)a->spatial, &total) || total > SIZE_MAX / sizeof(float))
        return SB_ERR_ARGUMENT;
    if (total == 0) return SB_OK;
    if (!a->x || !a->y) return SB_ERR_ARGUMENT;
    norm_job job = {.a = a, .c = (size_t)a->c, .spatial = (size_t)a->spatial,
                    .x = (const float *)(intptr_t)a->x, .y = (float *)(intptr_t)a->y,
                    .mean = (const float *)(intptr_t)a->mean, .var = (const float *)(intptr_t)a->var,
                    .weight = (const float *)(intptr_t)a->weight,
                    .bias = (const float *)(intptr_t)a->bias};
    uint32_t eps_bits = (uint32_t)a->eps;
    memcpy(&job.eps, &eps_bits, sizeof job.eps);
    if (a->op == NORM_BATCH) {   /* one unit: a plane */
        sb_step_plan plan = sb_plan_step(planes, 1, (double)total * SB_COST_REDUCE);
        sb_run_step(&plan, a->max_threads, batch_plane, &job);
    } else {                     /* one unit: the channels of one group of one image */
        job.groups = (size_t)a->groups;
        job.per_group = job.c / job.groups;
        job.slices = (size_t)a->n * job.groups;
        job.row_sums = sb_isa_supported((int)a->path)->unary->row_sums;
        /* blocks of up to SLICE_BLOCK slices, at least four blocks where
         * there are four slices (a function of the shape only) */
        job.per_block = sb_ceil_div(job.slices, 4);
        job.per_block = job.per_block < 1 ? 1 : job.per_block > SLICE_BLOCK ? SLICE_BLOCK
                                                                             : job.per_block;
        sb_step_plan plan = sb_plan_step(sb_ceil_div(job.slices, job.per_block), 1,
                                         (double)total * SB_COST_GROUP_NORM);
        sb_run_step(&plan, a->max_threads, group_block, &job);
    }
    return SB_OK;
}
