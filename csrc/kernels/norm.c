/* sb_norm: batch normalization (inference form) and group normalization of
 * float32 (N, C, spatial...) tensors (docs/exact-ops.md, "Normalization").
 * Every step is a float32 operation in a stated order; group statistics are
 * sums in increasing index from +0 over the group's values in C order.
 * Threads take whole (n, c) planes (batch) or whole (n, group) slices. */
#include <stdint.h>
#include <string.h>
#include "samebits.h"
#include "math/activation.h"
#include "framework/checked.h"
#include "framework/step.h"

enum { NORM_BATCH = 0, NORM_GROUP = 1, NORM_COUNT };

typedef struct {
    const sb_norm_args *a;
    size_t c, spatial, groups, per_group;
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

static void group_slice(void *ctx, size_t slice, int thread_index)
{
    (void)thread_index;
    const norm_job *job = (const norm_job *)ctx;
    size_t count = job->per_group * job->spatial;
    const float *x = job->x + slice * count;
    float *y = job->y + slice * count;
    float n = (float)count;
    float sum = 0.0f;
    for (size_t j = 0; j < count; ++j) sum = sum + x[j];
    float mean = sum / n;
    float sq = 0.0f;
    for (size_t j = 0; j < count; ++j) {
        float d = x[j] - mean;
        sq = sq + d * d;
    }
    float r = 1.0f / __builtin_sqrtf(sq / n + job->eps);
    size_t first = (slice % job->groups) * job->per_group;
    for (size_t k = 0; k < job->per_group; ++k) {
        size_t ch = first + k;
        normalize(x + k * job->spatial, y + k * job->spatial, job->spatial, mean, r,
                  job->weight ? job->weight + ch : NULL, job->bias ? job->bias + ch : NULL);
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
        size_t slices = (size_t)a->n * job.groups;
        sb_step_plan plan = sb_plan_step(slices, 1, (double)total * SB_COST_GROUP_NORM);
        sb_run_step(&plan, a->max_threads, group_slice, &job);
    }
    return SB_OK;
}
